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
Load: joint_states at 1 kHz into dynamics_node; latency to the effort command, states lost.

    python3 benchmarks/bench_latency.py [--seconds 60] [--rate 1000]

Starts dynamics_node (gravity compensation, the bundled 7-joint arm, ``report_latency`` on) as a
process and publishes ``/joint_states`` at ``--rate`` Hz from this process.  The node reports, per
state, the time from the DDS receipt of the state to the return of the command's publication:
the latency of the node itself.  Every state is unique: joint 2 sweeps
monotonically, so the gravity torque of joint 2 in a command says which state it answers (a table
of g(q) for every state sent, searched by value).  Latency is from the publication of a state to
the reception of its command here: two DDS hops and the node's work, an upper bound of the node's
own receipt-to-publication time.  Prints p50 / p99 / max, states sent, answered, and lost (the
node keeps only the newest state while busy, ``state_queue`` 1: a state it never saw is lost by
design, never one it held).
"""

import argparse
import os
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
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64, Float64MultiArray  # noqa: E402, I100


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=60.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    args = parser.parse_args(argv)
    model = md.load_model(robots.path('demo_arm'))
    count = int(args.seconds * args.rate)
    q = np.tile([0.1, 0.0, 0.2, -0.8, 0.1, 0.5, 0.0], (count, 1))
    q[:, 1] = np.linspace(0.2, 1.2, count)             # g of joint 2 is monotonic here
    table = md.gravity_torques(model, q)[:, 1]
    order = np.argsort(table)
    assert np.all(np.diff(table[order]) != 0), 'states must be told apart by g_2'
    node_cmd = [os.path.join(os.path.dirname(sys.executable), 'dynamics_node'), '--ros-args',
                '-p', f'urdf_path:={robots.path("demo_arm")}', '-p', 'outputs:=[""]',
                '-p', 'report_latency:=true']
    proc = subprocess.Popen(node_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    rclpy.init()
    # the commands' receiver stands for forward_command_controller: a node named after the
    # command topic's namespace with a 'joints' parameter, which dynamics_node checks first
    node = rclpy.create_node('effort_controller')
    node.declare_parameter('joints', list(model.joint_names))
    received = []                                   # (receipt ns, g_2)

    def on_command(msg):
        received.append((time.monotonic_ns(), msg.data[1]))
    node.create_subscription(Float64MultiArray, '/effort_controller/commands', on_command, 1000)
    internal = []                                   # the node's own receipt-to-publication ms
    node.create_subscription(Float64, '/dynamics_node/command_latency',
                             lambda m: internal.append(m.data), 1000)
    pub = node.create_publisher(JointState, '/joint_states', 1000)
    try:
        while pub.get_subscription_count() == 0 or not received:
            pub.publish(JointState(name=list(model.joint_names), position=q[0].tolist()))
            rclpy.spin_once(node, timeout_sec=0.05)        # until the order is confirmed
        time.sleep(1.0)
        rclpy.spin_once(node, timeout_sec=0)
        received.clear()
        internal.clear()
        sent = np.zeros(count, dtype=np.int64)
        msg = JointState(name=list(model.joint_names))
        period = int(1e9 / args.rate)
        start = time.monotonic_ns()
        for k in range(count):
            due = start + k * period
            while time.monotonic_ns() < due:
                rclpy.spin_once(node, timeout_sec=0)
            msg.position = q[k].tolist()
            msg.header.stamp = node.get_clock().now().to_msg()
            sent[k] = time.monotonic_ns()
            pub.publish(msg)
            rclpy.spin_once(node, timeout_sec=0)
        end = time.monotonic_ns() + 1_000_000_000
        while time.monotonic_ns() < end:
            rclpy.spin_once(node, timeout_sec=0.01)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
    got = np.array(received)
    index = order[np.clip(np.searchsorted(table[order], got[:, 1]), 0, count - 1)]
    # nearest of the two neighbours in the sorted table
    lower = order[np.clip(np.searchsorted(table[order], got[:, 1]) - 1, 0, count - 1)]
    index = np.where(np.abs(table[lower] - got[:, 1]) < np.abs(table[index] - got[:, 1]),
                     lower, index)
    latency = (got[:, 0] - sent[index]) * 1e-6
    rate = count / ((sent[-1] - sent[0]) * 1e-9)
    answered = len(np.unique(index))
    print(f'dynamics_node, gravity compensation of the demo arm: {count} joint states at '
          f'{rate:.0f} Hz over {(sent[-1] - sent[0]) * 1e-9:.1f} s')
    inner = np.array(internal)
    print(f'latency in the node, DDS receipt -> command published: p50 '
          f'{np.percentile(inner, 50):.3f} ms, p99 {np.percentile(inner, 99):.3f} ms, max '
          f'{inner.max():.3f} ms ({len(inner)} states)')
    print(f'latency end to end, state published -> command received here: p50 '
          f'{np.percentile(latency, 50):.3f} ms, p99 {np.percentile(latency, 99):.3f} ms, max '
          f'{latency.max():.3f} ms')
    print(f'states answered {answered} of {count} ({count - answered} lost: '
          f'{100 * (count - answered) / count:.2f} %)')


if __name__ == '__main__':
    main()
