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
#: Graph tests that keep no time (their nodes answer services and transitions, refuse, or are
#: built): they run after the library tests, beside the other graph tests, on a domain of their
#: own.  The rest, whose nodes keep time (loops, pushes, latencies), run from the start.
AFTER_LIBRARY = ('test/nodes/test_lifecycle.py', 'test/nodes/test_nodes_flexible.py',
                 'test/nodes/test_nodes_base_params.py', 'test/nodes/test_container.py',
                 'test/nodes/test_parameters.py', 'test/nodes/test_process.py',
                 'test/package/test_colcon.py')
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
    Run the whole suite as two lanes of pytest side by side; return the first failure's code.

    The graph tests (:data:`GRAPH_TESTS`) but :data:`AFTER_LIBRARY` print as they run.  Beside
    them, the library tests run at :data:`NICENESS`, then the tests of :data:`AFTER_LIBRARY`
    at the usual priority; that lane prints when both lanes are done.  Each lane has a DDS
    domain of its own (``test/rosutil.py``).

    The library tests keep BLAS on one thread (``OPENBLAS_NUM_THREADS=1``): they share the
    cores with the graph tests, and OpenBLAS's threads wait for each other by spinning, so one
    held off its core by a graph test kept the other spinning on the second (an excitation
    design took 322 s beside a busy core, 19 s on one BLAS thread).  Run on their own, as
    ``.ci/debian`` runs them, the library tests keep the threads BLAS chooses.
    """
    import tempfile
    import threading
    import time

    def paths(names):
        return [os.path.join(HERE, name) for name in names]

    graph, after = paths(GRAPH_TESTS), paths(AFTER_LIBRARY)
    first_lane = pytest + [path for path in graph if path not in after] + [
        f'--ignore={path}' for path in after]
    library = pytest + [os.path.join(HERE, 'test')] + [f'--ignore={path}' for path in graph]
    domain = 1 + os.getpid() % 25              # 1-50 for the lanes, 51-100 for the benchmarks
    first_env = dict(env, MANIPULATOR_DYNAMICS_TEST_DOMAIN=str(domain))
    second_env = dict(env, MANIPULATOR_DYNAMICS_TEST_DOMAIN=str(domain + 25))
    second_lane = ((library, dict(second_env, OPENBLAS_NUM_THREADS='1'), NICENESS),
                   (pytest + after, second_env, 0))
    start = time.monotonic()
    codes, times, running, stopping = [], [], [], threading.Event()

    def run_second_lane(printed):
        for command, lane_env, niceness in second_lane:
            if stopping.is_set():
                return
            running.append(subprocess.Popen(
                command, cwd=HERE, env=lane_env, stdout=printed, stderr=subprocess.STDOUT,
                preexec_fn=(lambda: os.nice(niceness)) if niceness else None))
            codes.append(running[-1].wait())
            times.append(time.monotonic() - start)

    with tempfile.TemporaryFile('w+') as printed:
        beside = threading.Thread(target=run_second_lane, args=(printed,))
        beside.start()
        try:
            print('dev.py: the graph tests here; beside them the library tests, then the graph '
                  'tests that keep no time, their report at the end', flush=True)
            first = subprocess.call(first_lane, cwd=HERE, env=first_env)
            graph_time = time.monotonic() - start
            beside.join()
        finally:
            stopping.set()                      # interrupted: leave nothing running
            for process in running:
                if process.poll() is None:
                    process.terminate()
                    process.wait()
            beside.join()
        printed.seek(0)
        print('\n' + '=' * 16 + ' the library tests, then the graph tests that keep no time '
              + '=' * 16, flush=True)
        sys.stdout.write(printed.read())
    (library_code, after_code), library_time = (codes + [1, 1])[:2], (times + [0.0])[0]
    print(f'dev.py: the graph tests took {graph_time:.0f} s (exit {first}); beside them the '
          f'library tests {library_time:.0f} s (exit {library_code}), then the graph tests '
          f'that keep no time (exit {after_code}); the whole suite '
          f'{time.monotonic() - start:.0f} s', flush=True)
    return first or library_code or after_code


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
