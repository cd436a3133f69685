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

"""tools/: the scripts that write what the package ships, run as a maintainer runs them."""

import glob
import os
import re
import subprocess
import sys

from manipulator_dynamics import robots

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_make_demo_robot_writes_the_bundled_urdfs_as_committed(tmp_path):
    """The committed demo robots are what the tool makes (their header once said otherwise)."""
    subprocess.run([sys.executable, os.path.join(ROOT, 'tools', 'make_demo_robot.py'),
                    '--output', str(tmp_path)], check=True, timeout=120)
    for name in ('demo_arm', 'demo_arm_gripper'):
        written = (tmp_path / f'{name}.urdf').read_text(encoding='utf-8')
        with open(robots.path(name), encoding='utf-8') as f:
            assert written == f.read(), f'{name}.urdf differs from what make_demo_robot.py writes'


def test_make_demo_robot_help_writes_nothing(tmp_path):
    out = subprocess.run([sys.executable, os.path.join(ROOT, 'tools', 'make_demo_robot.py'),
                          '--help'], capture_output=True, text=True, check=True, timeout=60,
                         cwd=tmp_path)
    assert '--output' in out.stdout and not list(tmp_path.iterdir())


def test_make_config_writes_the_committed_parameter_files(tmp_path):
    """config/<node>.yaml are what the nodes' parameter tables say, written by the tool."""
    subprocess.run([sys.executable, os.path.join(ROOT, 'tools', 'make_config.py'),
                    '--output', str(tmp_path)], check=True, timeout=120)
    for written in sorted(tmp_path.iterdir()):
        with open(os.path.join(ROOT, 'config', written.name), encoding='utf-8') as f:
            assert written.read_text(encoding='utf-8') == f.read(), (
                f'config/{written.name} differs from what tools/make_config.py writes: run it')


def load_dev():
    """Import dev.py as a module."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('dev', os.path.join(ROOT, 'dev.py'))
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    return dev


def test_dev_test_runs_the_graph_tests_beside_the_library_tests(monkeypatch, capsys):
    """
    ``python3 dev.py test``: two lanes of pytest that share out every test file, once each.

    The graph tests (those that start nodes, rosutil's fixtures) but those that keep no time run
    in the foreground; beside them the rest, at a lower priority with BLAS on one thread, then
    the graph tests that keep no time, at the usual priority.  Each lane has its own DDS domain;
    a failure anywhere fails the run.
    """
    dev = load_dev()
    called, started = [], []

    class Beside:

        def __init__(self, args, **kw):
            started.append((args, kw))
            kw['stdout'].write(f'report {len(started)}\n')
            self.returncode = None

        def wait(self):
            self.returncode = len(started) - 1      # the library passes, the rest fails
            return self.returncode

        def poll(self):
            return self.returncode

    def tests(args):
        return [os.path.relpath(a, ROOT) for a in args if a.startswith(os.path.join(ROOT, 'test'))]

    def ignored(args):
        return [os.path.relpath(a.split('=', 1)[1], ROOT) for a in args
                if a.startswith('--ignore=')]

    monkeypatch.delenv('OPENBLAS_NUM_THREADS', raising=False)    # the suite's own lane sets it
    monkeypatch.setattr(dev, 'ensure_environment', lambda extras: None)
    monkeypatch.setattr(dev.subprocess, 'call', lambda args, **kw: called.append((args, kw)) or 0)
    monkeypatch.setattr(dev.subprocess, 'Popen', Beside)
    assert dev.main(['test']) == 1                   # the second lane's failure counts
    out = capsys.readouterr().out
    assert out.index('report 1') < out.index('report 2')
    ((graph, graph_kw),), ((library, library_kw), (after, after_kw)) = called, started
    assert all('-rs' in args for args in (graph, library, after))
    assert library_kw['preexec_fn'] is not None and after_kw['preexec_fn'] is None
    assert library_kw['env']['OPENBLAS_NUM_THREADS'] == '1'
    assert 'OPENBLAS_NUM_THREADS' not in graph_kw['env'] | after_kw['env']
    domains = {kw['env']['MANIPULATOR_DYNAMICS_TEST_DOMAIN'] for kw in (graph_kw, after_kw)}
    assert len(domains) == 2 and library_kw['env']['MANIPULATOR_DYNAMICS_TEST_DOMAIN'] in domains
    assert tests(after) == list(dev.AFTER_LIBRARY) and ignored(graph) == tests(after)
    assert tests(graph) == [g for g in dev.GRAPH_TESTS if g not in dev.AFTER_LIBRARY]
    assert all(os.path.exists(os.path.join(ROOT, p)) for p in dev.GRAPH_TESTS + dev.AFTER_LIBRARY)
    assert all(any(p == g or p.startswith(g + '/') for g in dev.GRAPH_TESTS)
               for p in dev.AFTER_LIBRARY)
    assert ignored(library) == list(dev.GRAPH_TESTS) and tests(library) == ['test']


def test_only_the_graph_tests_start_nodes():
    """A test file that uses rosutil (its fixtures or helpers) runs with the graph tests."""
    dev = load_dev()
    fixtures = re.findall(r'@pytest\.fixture[^\n]*\ndef (\w+)\(',
                          open(os.path.join(ROOT, 'test', 'rosutil.py')).read())
    assert {'client', 'nodes', 'processes', 'ros', 'ros2'} <= set(fixtures)
    uses = re.compile(r'(from rosutil import|import rosutil|def test_\w+\([^)]*\b(' +
                      '|'.join(fixtures) + r')\b)')
    outside = []
    for path in glob.glob(os.path.join(ROOT, 'test', '**', 'test_*.py'), recursive=True):
        relative = os.path.relpath(path, ROOT)
        if path != os.path.abspath(__file__) and not any(
                relative == g or relative.startswith(g + os.sep) for g in dev.GRAPH_TESTS):
            if uses.search(open(path).read()):
                outside.append(relative)
    assert not outside, f'{outside} use rosutil: add them to dev.GRAPH_TESTS'


def test_dev_test_names_every_skip_with_its_reason(monkeypatch):
    """
    ``python3 dev.py test`` runs pytest with ``-rs``: each skipped test and why, not a count.

    A run without ``../shared`` (the real logs) or without a ROS 2 installation (the launch
    tests) must say which proofs did not run.  The environment step is left out here (it is
    what made this venv).
    """
    dev = load_dev()
    called = []
    monkeypatch.setattr(dev, 'ensure_environment', lambda extras: None)
    monkeypatch.setattr(dev.subprocess, 'call', lambda args, **kw: called.append(args) or 0)
    assert dev.main(['test', '-k', 'real_log']) == 0
    args = called[0]
    assert args[1:3] == ['-m', 'pytest'] and '-rs' in args, args
    assert args[-2:] == ['-k', 'real_log'], args
