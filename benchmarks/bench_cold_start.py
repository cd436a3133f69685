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
Cold start: seconds from ``ros2 launch`` to the first effort command on a fresh machine.

What a user does: ``colcon build`` of this checkout into a new workspace, source it, launch.  A
fresh machine has no numba cache of its own (``XDG_CACHE_HOME`` points at an empty folder here),
so without the kernels compiled at install time a node compiles for about 20 s before its first
command.  Measured, for each build (with the install-time compilation, and with
``--without-precompile`` also without it):

* one node: ``dynamics.launch.py mode:=gravity_compensation`` on the demo arm, joint states
  published at 100 Hz from here: launch to the first command;
* five nodes at once: ``demo.launch.py``: launch to dynamics_node's first output (its gravity
  torques of sim_node's states) and to the first effort command (trajectory_node's, which waits
  for demo_trajectory: that node sends its trajectory 1 s after the loop is up, by design).

Needs ROS 2's tools (``ros2 launch``: a sourced ROS 2 installation) and colcon:
``.venv/bin/python benchmarks/bench_cold_start.py [--without-precompile]``.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

import rclpy  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402


def build(ws, precompile):
    """Build the package into ``ws`` with colcon; return (environment, seconds)."""
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ['PATH'],
               MANIPULATOR_DYNAMICS_PRECOMPILE='1' if precompile else '0')
    start = time.monotonic()
    subprocess.run([shutil.which('colcon', path=bindir) or 'colcon', 'build', '--base-paths',
                    ROOT, '--build-base', os.path.join(ws, 'build'), '--install-base',
                    os.path.join(ws, 'install')], cwd=ws, env=env, check=True,
                   capture_output=True)
    seconds = time.monotonic() - start
    out = subprocess.run(['bash', '-c', f'source {ws}/install/setup.bash && env -0'], env=env,
                         capture_output=True, text=True, check=True).stdout
    return dict(kv.split('=', 1) for kv in out.split('\0') if '=' in kv), seconds


def first_message(env, launch_args, topics, feed_states=False, timeout=180):
    """Launch; return {topic: seconds to its first message} (None: none within ``timeout``)."""
    env = dict(env, XDG_CACHE_HOME=tempfile.mkdtemp(prefix='fresh-cache-'))
    rclpy.init()
    # named as a ros2_control controller, with its 'joints': dynamics_node commands only once
    # the controller of its command topic has confirmed the order
    node = rclpy.create_node('effort_controller')
    node.declare_parameter('joints', [f'joint{i}' for i in range(1, 8)])
    first = {}
    for topic in topics:
        node.create_subscription(Float64MultiArray, topic,
                                 lambda _msg, t=topic: first.setdefault(t, time.monotonic()), 10)
    states = node.create_publisher(JointState, 'joint_states', 10)
    start = time.monotonic()
    launch = subprocess.Popen(['ros2', 'launch', 'manipulator_dynamics', *launch_args], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        names = [f'joint{i}' for i in range(1, 8)]
        while len(first) < len(topics) and time.monotonic() - start < timeout:
            if feed_states:
                states.publish(JointState(name=names, position=[0.1] * 7))
            rclpy.spin_once(node, timeout_sec=0.01)
    finally:
        os.killpg(launch.pid, signal.SIGINT)
        launch.wait(timeout=60)
        node.destroy_node()
        rclpy.shutdown()
        shutil.rmtree(env['XDG_CACHE_HOME'], ignore_errors=True)
    return {t: (first[t] - start if t in first else None) for t in topics}


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    parser.add_argument('--without-precompile', action='store_true',
                        help='also measure a build without the install-time compilation')
    args = parser.parse_args()
    urdf = os.path.join(ROOT, 'manipulator_dynamics', 'robots', 'demo_arm.urdf')
    for precompile in [True] + ([False] if args.without_precompile else []):
        ws = tempfile.mkdtemp(prefix='cold-start-ws-')
        env, seconds = build(ws, precompile)
        label = 'with' if precompile else 'without'
        print(f'colcon build ({label} install-time compilation): {seconds:.1f} s')
        one = first_message(env, ['dynamics.launch.py', f'urdf:={urdf}',
                                  'mode:=gravity_compensation'],
                            ['/effort_controller/commands'], feed_states=True)
        print(f'  one node, dynamics.launch.py: first command after '
              f'{one["/effort_controller/commands"]:.2f} s')
        five = first_message(env, ['demo.launch.py'], ['/dynamics_node/gravity_torques',
                                                       '/effort_controller/commands'])
        print(f'  five nodes, demo.launch.py: dynamics_node serving after '
              f'{five["/dynamics_node/gravity_torques"]:.2f} s, first effort command after '
              f'{five["/effort_controller/commands"]:.2f} s')
        shutil.rmtree(ws, ignore_errors=True)


if __name__ == '__main__':
    main()
