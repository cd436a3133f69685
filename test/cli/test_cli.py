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

"""The ``manipulator-dynamics`` command line, run as a real process and in-process."""

import json
import os
import subprocess
import sys

from helpers import measured, ROOT, write_log_csv
import manipulator_dynamics as md
from manipulator_dynamics import cli, robots
import numpy as np
import pytest
import yaml


def run(*args):
    return subprocess.run([sys.executable, '-m', 'manipulator_dynamics.cli', *args],
                          capture_output=True, text=True, timeout=300)


def test_demo_runs_as_a_process():
    result = run('demo')
    assert result.returncode == 0, result.stderr
    assert "Model('demo_arm', n=7, chain" in result.stdout
    assert 'round trip forward(inverse(qdd))' in result.stdout
    error = float(result.stdout.split('max |error| = ')[1].split()[0])
    assert error < 1e-9


def test_the_console_script_is_main_in_a_process_of_its_own(capsys):
    """
    ``console()`` (what the installed script runs) says main's status and all its output.

    It freezes the collector's objects before it runs :func:`.cli.main` and before the process
    ends: what is printed still reaches the pipe whole, and an error is still status 2.
    """
    done = run('gravity', '--format', 'json')
    assert done.returncode == 0, done.stderr
    assert cli.main(['gravity', '--format', 'json']) == 0
    assert json.loads(done.stdout) == json.loads(capsys.readouterr().out)
    refused = run('info', 'no_such_robot.urdf')
    assert refused.returncode == 2
    assert refused.stderr.startswith('manipulator-dynamics: error:'), refused.stderr


def test_gravity_json_matches_the_library(capsys):
    q = [0.1, -0.4, 0.3, 1.2, -0.5, 0.8, 0.0]
    assert cli.main(['gravity', '--q', ','.join(map(str, q)), '--format', 'json']) == 0
    data = json.loads(capsys.readouterr().out)
    model = md.load_model(robots.path('demo_arm'))
    np.testing.assert_allclose(data['gravity'], md.gravity_torques(model, q), rtol=1e-15)
    assert data['joints'] == list(model.joint_names)


def test_inverse_forward_inertia_yaml(capsys, tmp_path):
    urdf = robots.path('demo_arm_gripper')
    q = '0.2,0.3,-0.1,0.5,0.4,-0.2,0.1,0.01,0.02'
    assert cli.main(['inverse', urdf, '--q', q, '--qdd', '1,1,1,1,1,1,1,0,0', '--format',
                     'yaml']) == 0
    tau = yaml.safe_load(capsys.readouterr().out)['tau']
    assert cli.main(['forward', urdf, '--q', q, '--tau', ','.join(map(str, tau)), '--method',
                     'udut', '--format', 'yaml']) == 0
    qdd = yaml.safe_load(capsys.readouterr().out)['qdd']
    np.testing.assert_allclose(qdd, [1] * 7 + [0, 0], atol=1e-9)
    assert cli.main(['inertia', urdf, '--q', q, '--format', 'json']) == 0
    data = json.loads(capsys.readouterr().out)
    M, U, D = (np.array(data[k]) for k in 'MUD')
    np.testing.assert_allclose(U @ np.diag(D) @ U.T, M, atol=1e-14)


def test_info_and_parameters_tables(capsys):
    assert cli.main(['info', '--tip-link', 'link4']) == 0
    out = capsys.readouterr().out
    assert 'joint4' in out and 'joint5' not in out
    assert cli.main(['parameters']) == 0
    out = capsys.readouterr().out
    assert out.count('link') >= 7 and 'XX' in out
    assert cli.main(['info', '--without-link', 'link5']) == 0      # a tool not mounted
    out = capsys.readouterr().out
    assert 'joint4' in out and 'joint5' not in out and 'link5' not in out


def test_base_params_yaml_matches_the_library(capsys):
    assert cli.main(['base-params', '--friction', '--samples', '400', '--format', 'yaml']) == 0
    data = yaml.safe_load(capsys.readouterr().out)
    base = md.base_parameters(md.load_model(robots.path('demo_arm')), friction=True, samples=400)
    assert data['count'] == base.count and data['samples'] == 400 and data['seed'] == 0
    assert [p['name'] for p in data['parameters']] == list(base.names)
    assert [p['equation'] for p in data['parameters']] == list(base.equations)


def test_base_params_table(capsys):
    assert cli.main(['base-params', '--method', 'dynamic']) == 0
    out = capsys.readouterr().out
    assert 'base parameters of demo_arm' in out and 'ZZ_link1_R' in out
    assert 'no effect on the dynamics:' in out


def test_warnings_are_one_line_each():
    bare = ('<robot name="r"><link name="b"/><link name="a"/><joint name="j" '
            'type="continuous"><parent link="b"/><child link="a"/></joint></robot>')
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.urdf') as f:
        f.write(bare)
        f.flush()
        result = run('base-params', f.name)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith('manipulator-dynamics: warning: links a have no mass')
    assert 'Traceback' not in result.stderr and 'warnings.warn' not in result.stderr


def test_identify_names_the_columns_a_log_lacks_and_leaves_no_file_open(tmp_path):
    """
    A log without a joint's columns: the command names them and leaves nothing open.

    Found on the command line: the CSV reader, stopped at its first chunk by the missing
    columns, left pandas' file to the collector, and the user saw ``warning: unclosed file``
    after the error.
    """
    model = md.load_model(robots.path('demo_arm'))
    t, _, _, _, tau, q = measured(model, seconds=2.0)
    write_log_csv(tmp_path / 'log.csv', model.joint_names[:-1], t, q[:, :-1], tau[:, :-1])
    result = run('identify', robots.path('demo_arm'), str(tmp_path / 'log.csv'))
    assert result.returncode != 0
    assert f'lacks the columns {model.joint_names[-1]}.position' in result.stderr, result.stderr
    assert 'unclosed' not in result.stderr and 'Traceback' not in result.stderr, result.stderr


def test_identify_from_csv(capsys, tmp_path):
    model = md.load_model(robots.path('demo_arm'))
    t, _, _, _, tau, q = measured(model, seconds=12.0)
    write_log_csv(tmp_path / 'log.csv', model.joint_names, t, q, tau)
    urdf = robots.path('demo_arm')
    assert cli.main(['identify', urdf, str(tmp_path / 'log.csv'), '--cutoff', '2.5',
                     '--format', 'json']) == 0
    data = json.loads(capsys.readouterr().out)
    estimate = md.identify(model, tmp_path / 'log.csv', cutoff=2.5)
    assert [p['name'] for p in data['parameters']] == list(estimate.names)
    np.testing.assert_allclose([p['value'] for p in data['parameters']], estimate.values)
    assert cli.main(['identify', urdf, str(tmp_path / 'log.csv'), '--cutoff', '2.5']) == 0
    assert (f'identified {estimate.base.count} base parameters of {model.name} from {len(t)} '
            f'logged states, filtered to {estimate.samples} rows; condition number of W_B'
            ) in capsys.readouterr().out


def test_identify_from_a_numpy_archive(capsys, tmp_path):
    """``identify URDF log.npz``: the archive a MATLAB or numpy logger leaves, read by name."""
    model = md.load_model(robots.path('demo_arm'))
    t, _, _, _, tau, q = measured(model, seconds=12.0)
    np.savez(tmp_path / 'log.npz', t=t, q=q[:, ::-1], tau=tau[:, ::-1],
             joints=list(model.joint_names)[::-1])
    assert cli.main(['identify', robots.path('demo_arm'), str(tmp_path / 'log.npz'),
                     '--cutoff', '2.5', '--format', 'json']) == 0
    data = json.loads(capsys.readouterr().out)
    estimate = md.identify(model, (t, q, tau), cutoff=2.5)
    np.testing.assert_allclose([p['value'] for p in data['parameters']], estimate.values)


def test_identify_several_logs(capsys, tmp_path):
    """``identify URDF run1.csv run2.csv``: one estimate, and what each log's stamps showed."""
    model = md.load_model(robots.path('demo_arm'))
    t, _, _, _, tau, q = measured(model, seconds=16.0)
    half = len(t) // 2
    paths = [str(tmp_path / 'run1.csv'), str(tmp_path / 'run2.csv')]
    write_log_csv(paths[0], model.joint_names, t[:half], q[:half], tau[:half])
    write_log_csv(paths[1], model.joint_names, t[half:], q[half:], tau[half:])
    assert cli.main(['identify', robots.path('demo_arm'), *paths, '--cutoff', '2.5']) == 0
    out = capsys.readouterr().out
    for path in paths:
        assert f'{path}: {half} samples at 200 Hz' in out and 'gaps: none' in out
    assert 'filtered in 2 stretch(es): 0.000-7.995 s, 8.000-15.995 s' in out
    estimate = md.identify(model, paths, cutoff=2.5)
    assert f'from {len(t)} logged states, filtered to {estimate.samples} rows' in out  # both logs


def test_identify_physically_consistent_from_csv(capsys, tmp_path):
    """``--physically-consistent``: a realisable standard set, in the table and the YAML."""
    import yaml
    model = md.load_model(robots.path('demo_arm'))
    t, _, _, _, tau, q = measured(model, seconds=12.0)
    write_log_csv(tmp_path / 'log.csv', model.joint_names, t, q, tau)
    args = ['identify', robots.path('demo_arm'), str(tmp_path / 'log.csv'), '--cutoff', '2.5',
            '--physically-consistent']
    assert cli.main(args + ['--format', 'yaml']) == 0
    data = yaml.safe_load(capsys.readouterr().out)
    names = [p['name'] for p in data['standard']]
    assert names == list(md.parameter_names(model, friction=True))
    assert md.physical_problems([p['value'] for p in data['standard']], names) == []
    assert len(data['consistency']['residual_rms']) == model.n
    assert cli.main(args) == 0
    assert 'physically consistent standard parameters' in capsys.readouterr().out


@pytest.mark.parametrize('args, message', [
    (['identify', 'nowhere.csv'], 'no such data file or recording: nowhere.csv'),
    (['base-params', '--samples', '5'], 'use at least'),
    (['gravity', '--q', '1,2'], '--q needs 7 values'),
    (['gravity', '--q', 'a,b'], '--q must be numbers'),
    (['info', '/nowhere/robot.urdf'], 'URDF file not found: /nowhere/robot.urdf'),
    (['forward', '--root-link', 'nolink'], "root_link 'nolink' is not a link"),
])
def test_errors_are_one_line_without_traceback(args, message):
    result = run(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert 'Traceback' not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


TWO_LINK = os.path.join(ROOT, 'config', 'flexible_two_link.yaml')


def _two_link_csv(path, columns=('time', 'joint2', 'joint1')):
    """Write Isobe & Imaizumi's 2-link move, columns in a shuffled order (mapped by name)."""
    t = np.arange(0.0, 0.6, 1e-3)
    s = np.clip(t / 0.2, 0, 1)
    b = 10 * s**3 - 15 * s**4 + 6 * s**5
    values = {'time': t, 'joint1': 0.5 * b, 'joint2': 1.0 * b}
    np.savetxt(path, np.column_stack([values[c] for c in columns]), delimiter=',',
               header=','.join(columns), comments='')
    return t, np.column_stack([values['joint1'], values['joint2']])


def test_flexible_writes_the_figures_and_matches_the_library(capsys, tmp_path):
    config = TWO_LINK
    t, q = _two_link_csv(tmp_path / 'traj.csv')
    png, out = tmp_path / 'out.png', tmp_path / 'series.csv'
    assert cli.main(['flexible', config, str(tmp_path / 'traj.csv'), '--plot', str(png),
                     '--output', str(out), '--format', 'json']) == 0
    data = json.loads(capsys.readouterr().out)
    assert png.stat().st_size > 50_000 and png.read_bytes()[:4] == b'\x89PNG'
    arm = md.FlexibleArm.from_yaml(config)
    result = md.flexible_inverse_dynamics(arm, t, q)
    rigid = md.flexible_inverse_dynamics(arm.with_rigid_links(), t, q)
    for i, joint in enumerate(data['joints']):
        assert joint['peak_tau_flexible'] == pytest.approx(np.abs(result.tau[:, i]).max())
        assert joint['peak_tau_rigid'] == pytest.approx(np.abs(rigid.tau[:, i]).max())
    # the flexible arm needs more torque than the rigid one to make the same fast move
    assert all(j['peak_tau_flexible'] > j['peak_tau_rigid'] for j in data['joints'])
    # the series as written (10 digits), and to 1e-9 of the peak where the torque crosses
    # zero, where no relative bound holds: on Debian 12's numpy and scipy the CLI's run and
    # this one differed at 2 of 600 steps by 8e-11 N m (1e-11 of the peak)
    series = np.genfromtxt(out, delimiter=',', names=True)
    peak = np.abs(result.tau[:, 1]).max()
    np.testing.assert_allclose(series['joint2effort'], result.tau[:, 1], rtol=1e-7,
                               atol=1e-9 * peak)


def test_flexible_names_a_missing_joint_column(tmp_path):
    config = TWO_LINK
    _two_link_csv(tmp_path / 'traj.csv', columns=('time', 'joint1'))
    result = run('flexible', config, str(tmp_path / 'traj.csv'))
    assert result.returncode == 2
    assert 'no position column for joint(s) joint2' in result.stderr


def test_identify_writes_the_contact_spread_of_its_validation_log(capsys, tmp_path):
    """
    ``--validate LOG --parameters-out``: the observer's residual over LOG, for dynamics_node.

    What ``contact_thresholds: auto`` reads back at the same gain; a LOG without velocities
    gets a sentence saying why there is none.
    """
    import yaml
    from manipulator_dynamics.contact.detection import spread_of_parameters
    model = md.load_model(robots.path('demo_arm'))
    t, _, qd, _, tau, q = measured(model, seconds=16.0)
    half = len(t) // 2
    write_log_csv(tmp_path / 'run1.csv', model.joint_names, t[:half], q[:half], tau[:half])
    write_log_csv(tmp_path / 'run2.csv', model.joint_names, t[half:], q[half:], tau[half:],
                  qd=qd[half:])
    base = ['identify', robots.path('demo_arm'), str(tmp_path / 'run1.csv'), '--cutoff', '2.5',
            '--parameters-out', str(tmp_path / 'p.yaml')]
    assert cli.main(base + ['--validate', str(tmp_path / 'run2.csv')]) == 0
    assert 'with contact_spread' in capsys.readouterr().out
    document = yaml.safe_load((tmp_path / 'p.yaml').read_text())
    spread = spread_of_parameters(model, document, 50.0)
    assert spread.rest.shape == (model.n,) and np.all(spread.rest > 0)
    assert all(key in document['contact_spread'] for key in ('speed', 'torque', 'speed_from',
                                                             'torque_from'))
    # the documented way to levels (docs/contact.md), from the file, by the top-level API
    np.testing.assert_array_equal(md.spread_of_parameters(model, str(tmp_path / 'p.yaml'),
                                                          50.0), spread)
    levels = md.thresholds_from_spread(model, spread)
    np.testing.assert_allclose(levels.contact, 2.0 * spread.rest)
    np.testing.assert_allclose(levels.collision, 4.0 * spread.rest)
    with pytest.raises(ValueError, match='measured at observer gain 50.0 1/s, not'):
        md.spread_of_parameters(model, str(tmp_path / 'p.yaml'), 80.0)
    assert document['contact_spread']['source'].endswith('run2.csv')
    assert cli.main(base + ['--validate', str(tmp_path / 'run1.csv')]) == 0
    assert 'no contact_spread: log 1 has no measured velocities' in capsys.readouterr().out
