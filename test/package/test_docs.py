# Copyright 2026 The manipulator_dynamics Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
The documentation's examples run: every Python block and every ``manipulator-dynamics`` command.

Each page's Python blocks run in order in one namespace, as a reader pastes them, and its
``bash`` blocks' ``manipulator-dynamics`` commands run through the command line's ``main``, in
a folder holding the files the pages name: ``robot.urdf`` (the bundled demo arm), ``run1`` and
``run2`` (logs of it, simulated with sensor noise, as CSV files and rosbag2 recordings),
``payload.csv`` (the arm holding a payload), ``pushed.csv`` (with velocities, pushed at
12 s), ``logs/`` (a fleet's, and its manifest),
``currents.csv`` and ``carrying.csv`` (its motor
currents, bare and carrying a load of 2 kg), ``config/``.  Blocks that read the real Panda log
(``panda_exciting_traj_1.npz``, and example-robot-data's ``panda.urdf``) run in a test of their
own, which skips, saying why, where the log is not beside the repository.  ``ros2`` and
``python3 dev.py`` lines need a ROS 2 graph or start the whole suite: test_ros2_launch runs the
former where ROS 2 is installed.
"""

import glob
import os
import re
import shlex
import shutil

from helpers import ERD, ROOT, write_bag, write_log_csv
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.recordings import csvlog
import numpy as np
import pytest

PAGES = ['README.md'] + sorted(os.path.relpath(p, ROOT)
                               for p in glob.glob(os.path.join(ROOT, 'docs', '*.md')))
LOG = os.path.join(ROOT, '..', 'shared', 'data', 'panda_gaz2019', 'panda_exciting_traj_1.npz')
#: What marks an example that reads the real log.
REAL_LOG = ('panda_exciting_traj_1.npz', 'third1.csv')
#: Payload of ``payload.csv``: 1.5 kg held 5 cm along link7's z.
PAYLOAD = 1.5
#: Commands that ran, with success, in this session's workspace: one run each.
RAN = set()


def blocks(page, language):
    """Return ``(line, text)`` of each ``language`` block of ``page``, its indent removed."""
    found, current, start, indent = [], None, 0, ''
    for number, line in enumerate(open(os.path.join(ROOT, page)), start=1):
        fence = re.match(r'^(\s*)```(\w*)\s*$', line)
        if fence and current is None:
            if fence.group(2) == language:
                current, start, indent = [], number + 1, fence.group(1)
        elif fence and current is not None:
            found.append((start, ''.join(current)))
            current = None
        elif current is not None:
            current.append(line[len(indent):] if line.startswith(indent) else line)
    return found


def commands(text):
    """Return the ``manipulator-dynamics`` commands of a bash block, continuations joined."""
    joined = re.sub(r'\\\n\s*', ' ', text)
    return [shlex.split(line.split('  #')[0])[1:] for line in joined.splitlines()
            if line.startswith('manipulator-dynamics ')]


def reads_real_log(text):
    return any(marker in text for marker in REAL_LOG)


def simulated_log(model, seconds, seed, velocities=False):
    """Return ``t, q, tau`` of a 5-harmonic motion at 200 Hz with sensor noise (and ``qd``)."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 1 / 200)
    w = 2 * np.pi * 0.1 * np.arange(1, 6)[:, None]
    a, b = rng.uniform(-1, 1, (2, 5, model.n)) * 0.25
    s, c = np.sin(w * t[:, None, None]), np.cos(w * t[:, None, None])
    q = (a / w * s - b / w * c).sum(axis=1)
    qd = (a * c + b * s).sum(axis=1)
    qdd = (w * (b * c - a * s)).sum(axis=1)
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
    tau += rng.normal(size=tau.shape) * (0.01 * np.abs(tau).max(axis=0) + 0.02)
    q = q + rng.normal(size=q.shape) * 1e-5
    return (t, q, tau, qd) if velocities else (t, q, tau)


@pytest.fixture(scope='module')
def workspace(tmp_path_factory):
    """Make a folder with the files the pages name."""
    folder = tmp_path_factory.mktemp('docs')
    shutil.copy(robots.path('demo_arm'), folder / 'robot.urdf')
    os.symlink(os.path.join(ROOT, 'config'), folder / 'config')
    model = md.load_model(robots.path('demo_arm'),
                          joint_dynamics=os.path.join(ROOT, 'config', 'demo_arm_dynamics.yaml'))
    for name, seed in (('run1', 1), ('run2', 2)):       # a CSV and a rosbag2 recording each
        log = simulated_log(model, 20.0, seed)
        write_log_csv(folder / f'{name}.csv', model.joint_names, *log)
        write_bag(folder / name, model, *log)
    # a fleet's logs: two robots, by name and in a manifest
    (folder / 'logs').mkdir()
    for name, run in (('arm-a_day1', 'run1'), ('arm-a_day2', 'run2'), ('arm-b_day1', 'run2')):
        shutil.copy(folder / f'{run}.csv', folder / 'logs' / f'{name}.csv')
    (folder / 'logs' / 'fleet.csv').write_text('robot,period,log\narm-a,day1,arm-a_day1.csv\n'
                                               'arm-a,day2,arm-a_day2.csv\n')
    # a log with velocities, pushed on joint 2 at 12 s (what `contact` replays)
    t, q, tau, qd = simulated_log(model, 20.0, 6, velocities=True)
    tau[(t >= 12.0) & (t < 12.5), 1] -= 15.0
    write_log_csv(folder / 'pushed.csv', model.joint_names, t, q, tau, qd)
    held = model.with_payload('link7', PAYLOAD, com=[0, 0, 0.05])
    write_log_csv(folder / 'payload.csv', model.joint_names, *simulated_log(held, 10.0, 3))
    # motor currents of the arm bare and carrying a load weighed at 2 kg (its centre of mass
    # well off the flange), through torque constants 0.6-1.2 N m/A
    constants = np.linspace(0.6, 1.2, model.n)
    carrying = model.with_payload('link7', 2.0, com=[0.08, -0.06, 0.1],
                                  inertia=[4e-3, 0, 0, 5e-3, 0, 3e-3])
    for name, arm, seed in (('currents.csv', model, 4), ('carrying.csv', carrying, 5)):
        t, q, tau = simulated_log(arm, 20.0, seed)
        csvlog.write(folder / name, t, csvlog.joint_columns(model.joint_names, position=q,
                                                            current=tau / constants))
    if os.path.isfile(LOG):
        os.symlink(LOG, folder / 'panda_exciting_traj_1.npz')
    if ERD is not None:
        os.symlink(os.path.join(ERD, 'panda_description', 'urdf', 'panda.urdf'),
                   folder / 'panda.urdf')
    return folder


def run_page(page, folder, monkeypatch, real_log):
    """Run the page's Python blocks, then its commands; those that read the real log or not."""
    from manipulator_dynamics import cli
    monkeypatch.chdir(folder)
    namespace, ran = {'__name__': '__docs__'}, 0
    for line, code in blocks(page, 'python'):
        if reads_real_log(code) == real_log:
            exec(compile(code, f'{page}:{line}', 'exec'), namespace)       # noqa: S102
            ran += 1
    for line, text in blocks(page, 'bash'):
        if reads_real_log(text) == real_log:
            for command in commands(text):
                if tuple(command) not in RAN:      # the README's, typed again in docs/
                    assert cli.main(command) == 0, f'{page}:{line}: manipulator-dynamics ' \
                        + ' '.join(command)
                    RAN.add(tuple(command))
                ran += 1
    return ran


@pytest.mark.parametrize('page', PAGES)
def test_the_examples_of_the_page_run(page, workspace, monkeypatch):
    ran = run_page(page, workspace, monkeypatch, real_log=False)
    if page in ('README.md', 'docs/library.md', 'docs/identification.md', 'docs/flexible.md'):
        assert ran, f'{page} has no example that runs: the extraction is broken'


@pytest.mark.skipif(not os.path.isfile(LOG), reason=f'the real Panda log is not at '
                    f'{os.path.normpath(LOG)} (../shared/data beside the clone)')
@pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed (its panda.urdf)')
def test_the_worked_example_on_the_real_log_runs(workspace, monkeypatch, capsys):
    """The worked example's commands, as typed: the law chosen, the held-out error printed."""
    assert run_page('docs/identification.md', workspace, monkeypatch, real_log=True) == 2
    out = capsys.readouterr().out
    assert 'chosen on held-out data' in out and 'validation on ' in out
    assert (workspace / 'v.png').stat().st_size > 10000


def test_the_examples_are_found():
    """The extraction itself: fences, indented fences, continuations, comments."""
    assert len(blocks('docs/identification.md', 'python')) >= 5
    assert commands('manipulator-dynamics identify a.csv \\\n    --cutoff 2.5  # fit\n'
                    'ros2 bag record /joint_states\n') == [['identify', 'a.csv', '--cutoff',
                                                            '2.5']]


@pytest.mark.parametrize('page', PAGES)
def test_every_relative_link_leads_to_a_file(page):
    """A page or a file moved (doc/ became docs/, sections became pages) breaks no link."""
    text = open(os.path.join(ROOT, page)).read()
    links = [target for target in re.findall(r'\]\(([^)#\s]+)\)', text)
             if not re.match(r'\w+://', target)]
    missing = [target for target in links
               if not os.path.exists(os.path.join(ROOT, os.path.dirname(page), target))]
    assert not missing, f'{page} links to what is not there: {missing}'


def test_the_design_pages_layout_names_every_module():
    """docs/design.md's layout of the package names each of its modules: none added unsaid."""
    layout = open(os.path.join(ROOT, 'docs', 'design.md')).read().split('```')[1]
    unsaid = []
    for folder, subfolders, files in os.walk(os.path.join(ROOT, 'manipulator_dynamics')):
        subfolders[:] = [d for d in subfolders if d not in ('__pycache__', '_prebuilt')]
        unsaid += [os.path.relpath(os.path.join(folder, name), ROOT) for name in files
                   if name.endswith('.py') and name != '__init__.py' and name not in layout]
    assert not unsaid, f'docs/design.md does not name {", ".join(sorted(unsaid))}'
