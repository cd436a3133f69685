#!/usr/bin/env python3
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
Quick start: ``python3 dev.py demo`` and ``python3 dev.py test``, with nothing but Python.

Creates ``.venv`` beside this file on first use, installs the package (editable) with what the
command needs, and runs the command inside it.  Later runs reinstall only when setup.py changed.
rclpy and the message packages come from a sourced ROS 2 installation when there is one
(``ROS_DISTRO`` set), else as PyPI wheels.  ROS 2's own tools (launch, launch_ros,
launch_testing, the ``ros2`` command) come only from a ROS 2 installation: source its
``setup.bash`` first and the launch tests run; without one they skip, each saying why.
Extra arguments go to the command (``python3 dev.py test -k pinocchio``).
"""

import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, '.venv')
PYTHON = os.path.join(VENV, 'bin', 'python')
EXTRAS = {'demo': ['ros', 'sim'], 'test': ['test', 'ros', 'sim', 'fleet']}
#: The tests that start nodes or a ROS 2 graph (rosutil's fixtures).  ``dev.py test`` runs them
#: in one pytest process and the rest in a second one beside it, at a lower priority: the two
#: cores both work (the suite took 13 minutes in one process), and the nodes under test keep a
#: core of their own.  test_tools checks that no other test file uses rosutil.
GRAPH_TESTS = ('test/nodes', 'test/demo', 'test/test_benchmarks.py',
               'test/package/test_ros2_launch.py', 'test/package/test_colcon.py')
#: The library tests' niceness beside the graph tests.
NICENESS = 10


def ensure_environment(extras):
    """Create the virtual environment and install the package with ``extras`` unless up to date."""
    if not os.path.exists(PYTHON):
        subprocess.check_call([sys.executable, '-m', 'venv', VENV])
    with open(os.path.join(HERE, 'setup.py'), 'rb') as f:
        stamp = hashlib.sha256(f.read() + extras.encode()).hexdigest()
    stamp_file = os.path.join(VENV, '.installed-' + (extras.strip('[]') or 'base'))
    if os.path.exists(stamp_file) and open(stamp_file).read() == stamp:
        return
    pip = [PYTHON, '-m', 'pip', 'install', '--disable-pip-version-check', '-q']
    subprocess.check_call(pip + ['--upgrade', 'pip'])
    subprocess.check_call(pip + ['-e', HERE + extras])
    # an editable install runs no install step.  For the tests, compile every kernel now, once,
    # with progress: the nodes' groups and the library's offline kernels, side by side (the
    # suite would compile them one by one, on one core).  The demo compiles only the groups
    # its nodes run, before it starts them (demo.loop.Loop): no group it does not run is on
    # the way of a first demo.
    if 'test' in extras:
        subprocess.check_call([PYTHON, '-m', 'manipulator_dynamics.precompile', '--only',
                               'forward,rigid,library,base-parameters,contact,flexible'])
    with open(stamp_file, 'w') as f:
        f.write(stamp)


def ros2_installation(command):
    """Say where ROS 2 comes from; return the extras to leave out (a ROS 2 install brings them)."""
    distro = os.environ.get('ROS_DISTRO')
    if distro:
        print(f'dev.py: ROS 2 {distro} from this shell: its rclpy, and for the tests its launch, '
              'launch_testing and ros2 command', file=sys.stderr)
        return {'ros'}
    if command == 'test':
        print('dev.py: no ROS 2 installation in this shell: rclpy comes from PyPI and the launch '
              'tests skip (source /opt/ros/<distro>/setup.bash first to run them)',
              file=sys.stderr)
    return set()


def main(argv):
    if not argv or argv[0] not in EXTRAS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    extras = [e for e in EXTRAS[command] if e not in ros2_installation(command)]
    ensure_environment('[' + ','.join(extras) + ']' if extras else '')
    env = dict(os.environ)
    # the venv's commands (colcon, the linters) first, as an activated venv would have it
    env['PATH'] = os.path.dirname(PYTHON) + os.pathsep + env.get('PATH', '')
    if command == 'demo':
        return subprocess.call([PYTHON, '-m', 'manipulator_dynamics.demo'] + rest, cwd=HERE,
                               env=env)
    # the slowest tests named at the end (the suite keeps within 12 minutes on 2 cores), and
    # every skipped test with its reason (-rs): a run without ../shared says loudly that the
    # real-log proofs did not run
    pytest = [PYTHON, '-m', 'pytest', '-q', '-rs', '--durations=15']
    if rest:                                    # a selection of the user's: as given
        return subprocess.call(pytest + [os.path.join(HERE, 'test')] + rest, cwd=HERE, env=env)
    return run_suite(pytest, env)


def run_suite(pytest, env):
    """
    Run the whole suite as two pytest processes side by side; return the first failure's code.

    The graph tests (:data:`GRAPH_TESTS`) print as they run; the library tests, at
    :data:`NICENESS`, print when both are done.
    """
    import tempfile
    import time

    graph = [os.path.join(HERE, path) for path in GRAPH_TESTS]
    library = pytest + [os.path.join(HERE, 'test')] + [f'--ignore={path}' for path in graph]
    start = time.monotonic()
    with tempfile.TemporaryFile('w+') as printed:
        beside = subprocess.Popen(library, cwd=HERE, env=env, stdout=printed,
                                  stderr=subprocess.STDOUT,
                                  preexec_fn=lambda: os.nice(NICENESS))
        try:
            print(f'dev.py: the graph tests here; the library tests beside them (pid '
                  f'{beside.pid}), their report at the end', flush=True)
            first = subprocess.call(pytest + graph, cwd=HERE, env=env)
            graph_time = time.monotonic() - start
            second = beside.wait()
        finally:
            if beside.poll() is None:           # interrupted: leave nothing running
                beside.terminate()
                beside.wait()
        printed.seek(0)
        print('\n' + '=' * 30 + ' the library tests ' + '=' * 30, flush=True)
        sys.stdout.write(printed.read())
    print(f'dev.py: the graph tests took {graph_time:.0f} s (exit {first}), the whole suite '
          f'{time.monotonic() - start:.0f} s (library tests exit {second})', flush=True)
    return first or second


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
