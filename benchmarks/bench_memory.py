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
Memory: the resident size of each node alone, and of the demo's nodes in one process.

    python3 benchmarks/bench_memory.py

Every process here is measured once it serves (its first status on /diagnostics, which a node
publishes only once started; a second later, its RSS from /proc/<pid>/status):

* a bare rclpy node that imports numpy and scipy: the floor every Python node pays;
* sim_node, dynamics_node, trajectory_node and base_params_node, each alone, on the demo arm;
  their sum: the demo's nodes as separate processes;
* the same four hosted by one ``node_container``;
* the kernels: one process loads the demo arm and the rigid group's kernels (what dynamics_node
  and trajectory_node call), then every other group's (base parameters, contact, flexible):
  what loading only the kernels a node uses saves per process.

The kernels come from numba's cache: run ``python3 -m manipulator_dynamics.precompile`` once
first, or the first process measured compiles them (and its RSS says so).
"""

import os
import re
import signal
import subprocess
import sys
import time

os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

from manipulator_dynamics import robots  # noqa: E402, I100
import rclpy  # noqa: E402, I100

BIN = os.path.dirname(sys.executable)
DEMO = ('sim_node', 'dynamics_node', 'trajectory_node', 'base_params_node')
BARE = ('import numpy, scipy.linalg, rclpy, time\n'
        'rclpy.init()\n'
        "node = rclpy.create_node('bare_node')\n"
        'from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus\n'
        "pub = node.create_publisher(DiagnosticArray, '/diagnostics', 10)\n"
        'def tick():\n'
        "    pub.publish(DiagnosticArray(status=[DiagnosticStatus(name='bare_node: bare')]))\n"
        'node.create_timer(1.0, tick)\n'
        'rclpy.spin(node)\n')
KERNELS = ('import re, sys\n'
           'from manipulator_dynamics import load_model, robots\n'
           'from manipulator_dynamics.precompile import compile_group, GROUPS, warm_up\n'
           'def rss():\n'
           "    return int(re.search(r'VmRSS:\\s+(\\d+)', open('/proc/self/status').read())"
           '.group(1)) / 1024\n'
           "model = load_model(robots.path('demo_arm'))\n"
           'before = rss()\n'
           'warm_up(model)\n'
           'rigid = rss()\n'
           'for group in GROUPS:\n'
           '    compile_group(group)\n'
           'print(before, rigid, rss())\n')


def rss_mb(pid):
    """Resident set size of process ``pid``, MB (VmRSS)."""
    with open(f'/proc/{pid}/status') as f:
        return int(re.search(r'VmRSS:\s+(\d+) kB', f.read()).group(1)) / 1024


def serving(listener, heard, names, process, timeout=180.0):
    """Wait until each node of ``names`` has published a status; then a second more."""
    end = time.monotonic() + timeout
    while not names <= heard:
        if process.poll() is not None:
            raise RuntimeError(f'{names} exited: {process.stderr.read()}')
        if time.monotonic() > end:
            raise RuntimeError(f'no status from {sorted(names - heard)} in {timeout} s')
        rclpy.spin_once(listener, timeout_sec=0.1)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        rclpy.spin_once(listener, timeout_sec=0.1)


def measure(listener, heard, command, names):
    """Start ``command``, wait until ``names`` serve, return its RSS (MB); stop it."""
    heard.clear()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    try:
        serving(listener, heard, set(names), process)
        return rss_mb(process.pid)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


def main():
    from diagnostic_msgs.msg import DiagnosticArray
    arm = ['-p', f'urdf_path:={robots.path("demo_arm")}']
    rclpy.init()
    listener = rclpy.create_node('bench_memory')
    heard = set()
    listener.create_subscription(
        DiagnosticArray, '/diagnostics',
        lambda msg: heard.update(s.name.split(':')[0] for s in msg.status), 100)
    rows = [('a bare rclpy node (numpy, scipy)',
             measure(listener, heard, [sys.executable, '-c', BARE], ['bare_node']))]
    alone = {}
    for name in DEMO:
        alone[name] = measure(listener, heard, [os.path.join(BIN, name), '--ros-args'] + arm,
                              [name])
        rows.append((f'{name} alone', alone[name]))
    rows.append(('the four, each alone (sum)', sum(alone.values())))
    together = measure(listener, heard,
                       [os.path.join(BIN, 'node_container'), *DEMO, '--ros-args'] + arm, DEMO)
    rows.append(('the four in one node_container', together))
    listener.destroy_node()
    rclpy.try_shutdown()
    out = subprocess.run([sys.executable, '-c', KERNELS], capture_output=True, text=True,
                         check=True).stdout.split()
    before, rigid, every = (float(x) for x in out)
    for label, mb in rows:
        print(f'{label:<45} {mb:7.1f} MB')
    print(f'{"kernels: the rigid group (a node uses these)":<45} {rigid - before:7.1f} MB')
    print(f'{"kernels: every group":<45} {every - before:7.1f} MB')
    print(f'saved per process by loading only the rigid group: {every - rigid:.1f} MB')


if __name__ == '__main__':
    main()
