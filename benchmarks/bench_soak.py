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
Soak: dynamics_node at 1 kHz for minutes, its memory and latency over the run.

    python3 benchmarks/bench_soak.py [--minutes 10] [--rate 1000] [--replace-every 120]

dynamics_node (gravity compensation of the bundled arm, its model from ``/robot_description``,
``report_latency``) takes joint states at ``--rate`` Hz from this process for ``--minutes``;
every ``--replace-every`` s a new ``robot_description`` is published while the states flow (the
arm's URDF with another mass of its last link each time: a real reload, a new model, its
kernels' dispatch again).  Every second the node's RSS (/proc/<pid>/status, VmRSS) is sampled;
the node reports each state's latency in the node (DDS receipt to command publication).  It
prints, per minute: RSS at its end, the states answered, latency p50 / p99 / max; then the RSS
growth after the first minute (the warm-up: DDS history, allocator pools) and the ratio of the
last minute's p99 to the first's.  A leak shows as growth that keeps going; a slowdown as a
ratio above 1.

The figures of docs/speed.md come from this script.  It runs as long as asked: not a test.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

import manipulator_dynamics as md  # noqa: E402, I100
from manipulator_dynamics import robots  # noqa: E402, I100
import rclpy  # noqa: E402, I100
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64, Float64MultiArray, String  # noqa: E402, I100

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


def rss_mb(pid):
    """Resident set size of process ``pid``, MB (VmRSS)."""
    with open(f'/proc/{pid}/status') as f:
        return int(re.search(r'VmRSS:\s+(\d+) kB', f.read()).group(1)) / 1024


def description(text, k):
    """Return the arm's URDF ``text``, its last link's mass scaled by ``1 + k / 100``."""
    masses = list(re.finditer(r'<mass value="([^"]+)"', text))
    last = masses[-1]
    mass = float(last.group(1)) * (1 + k / 100)
    return text[:last.start(1)] + f'{mass:.6g}' + text[last.end(1):]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--minutes', type=float, default=10.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--replace-every', type=float, default=120.0,
                        help='seconds between two new robot_description (0: never)')
    args = parser.parse_args(argv)
    path = robots.path('demo_arm')
    with open(path) as f:
        urdf = f.read()
    model = md.load_model(path)
    node = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), 'dynamics_node'), '--ros-args', '-p',
         'mode:=gravity_compensation', '-p', 'report_latency:=true', '-p', 'outputs:=[""]'],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rclpy.init()
    me = rclpy.create_node('effort_controller')        # forward_command_controller's stand-in
    me.declare_parameter('joints', list(model.joint_names))
    commands, latencies = [0], []                       # (second, ms) of each report
    me.create_subscription(Float64MultiArray, '/effort_controller/commands',
                           lambda m: commands.__setitem__(0, commands[0] + 1), 1000)
    start = time.monotonic()
    me.create_subscription(Float64, '/dynamics_node/command_latency',
                           lambda m: latencies.append((time.monotonic() - start, m.data)), 1000)
    states = me.create_publisher(JointState, '/joint_states', 1000)
    models = me.create_publisher(String, '/robot_description', LATCHED)
    models.publish(String(data=description(urdf, 0)))
    msg = JointState(name=list(model.joint_names), position=[0.1] * model.n,
                     velocity=[0.0] * model.n)
    try:
        while not commands[0]:                          # the model loaded, the order confirmed
            if node.poll() is not None:
                raise RuntimeError(f'dynamics_node exited: {node.stderr.read()}')
            msg.header.stamp = me.get_clock().now().to_msg()
            states.publish(msg)
            rclpy.spin_once(me, timeout_sec=0.05)
        latencies.clear()
        start = time.monotonic()
        period, count = 1.0 / args.rate, int(args.minutes * 60 * args.rate)
        rss, replaced, next_sample = [], 0, 0.0
        for k in range(count):
            due = start + k * period
            while time.monotonic() < due:
                rclpy.spin_once(me, timeout_sec=0)
            now = time.monotonic() - start
            msg.position[1] = 0.1 + 0.5 * np.sin(now)
            msg.header.stamp = me.get_clock().now().to_msg()
            states.publish(msg)
            rclpy.spin_once(me, timeout_sec=0)
            if now >= next_sample:
                rss.append((now, rss_mb(node.pid)))
                next_sample += 1.0
            if args.replace_every and now >= (replaced + 1) * args.replace_every:
                replaced += 1
                models.publish(String(data=description(urdf, replaced)))
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            rclpy.spin_once(me, timeout_sec=0.01)
    finally:
        me.destroy_node()
        rclpy.try_shutdown()
        node.send_signal(signal.SIGINT)
        node.wait(timeout=20)
    report(args, rss, latencies, replaced, count)


def report(args, rss, latencies, replaced, count):
    t_rss, mb = np.array(rss).T
    t_lat, ms = np.array(latencies).T
    minutes = int(np.ceil(args.minutes))
    print(f'dynamics_node, {args.rate:g} Hz for {args.minutes:g} min, {count} states, '
          f'robot_description replaced {replaced} times (every {args.replace_every:g} s)')
    print(f'{"minute":>6} {"RSS MB":>8} {"answered":>9} {"p50 ms":>7} {"p99 ms":>7} '
          f'{"max ms":>7}')
    p99 = []
    for m in range(minutes):
        inside = (t_lat >= 60 * m) & (t_lat < 60 * (m + 1))
        at = mb[t_rss < 60 * (m + 1)][-1]
        p50, high = np.percentile(ms[inside], [50, 99]) if inside.any() else (np.nan, np.nan)
        p99.append(high)
        print(f'{m + 1:>6} {at:>8.1f} {inside.sum():>9} {p50:>7.3f} {high:>7.3f} '
              f'{ms[inside].max() if inside.any() else np.nan:>7.3f}')
    warm = mb[t_rss >= 60][0] if (t_rss >= 60).any() else mb[0]
    print(f'RSS after the first minute {warm:.1f} MB, at the end {mb[-1]:.1f} MB: growth '
          f'{mb[-1] - warm:+.1f} MB (goal < 5 MB)')
    print(f'p99 last minute / first minute: {p99[-1] / p99[0]:.2f} (goal <= 1.5)')


if __name__ == '__main__':
    main()
