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
The first seconds: a node's command age just after it starts, against the rest of its run.

    python3 benchmarks/bench_start.py [--rounds 4] [--seconds 10] [--first 3] [--rate 1000]
                                      [--urdf PATH] [--observer]

Each round starts dynamics_node afresh (gravity compensation, its model from
``/robot_description`` as a simulator or robot_state_publisher gives it: the model arrives once
the node serves, the path on which a 10 s run once stalled for 99 ms) and sends it joint states
at ``--rate`` Hz from this process, for ``--seconds`` after its first command.  The command age
is what the controller holds at each instant: the time since the newest command arrived.  What
the node adds to it is its gap before each command: the time it took beyond what the states
allowed (:func:`one_round`; this process's own stalls in sending are not counted).  For the
first ``--first`` seconds and for the rest of the run it prints, per round: the node's longest
gap, their 99.9th percentile, the gaps over 10 ms, and the node's own longest
receipt-to-publication time (``report_latency``).  The first seconds hold the same command age
as the rest when their columns read alike.  ``--observer``: the momentum observer on, its
levels given (the kernels of the ``contact`` group called from the first state).  ``--urdf``:
another arm (the bundled 7-joint arm by default).

Absolute times move with the machine's load; a stall of tens of ms does not hide in that noise.
It runs processes over DDS in real time: a benchmark, not a test.
"""

import argparse
import gc
import os
import signal
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_latency import answered, OBSERVER  # noqa: E402, I100
from bench_soak import LATCHED  # noqa: E402, I100
import manipulator_dynamics as md  # noqa: E402, I100
from manipulator_dynamics import robots  # noqa: E402, I100
import rclpy  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64, Float64MultiArray, String  # noqa: E402, I100

#: A gap between two commands counted as long, s: ten periods of a 1 kHz loop.
LONG = 0.010
#: The joint whose position sweeps, so that each state's gravity torque on it is unique.
SWEPT = 1
#: The seconds a node may take to its first command (its start, the model's load).
START_BUDGET = 60.0


def one_round(urdf, args):
    """
    Start dynamics_node, feed it; return each command's arrival and gap, and its own reports.

    From its first command: the arrivals (s from the first), the node's gaps (s: what it
    waited beyond what the states allowed), and the node's own (time, ms) reports.

    Every state is unique (joint ``SWEPT`` sweeps monotonically), so a command's gravity torque
    says which state it answers (:func:`bench_latency.answered`).  The node's gap before a
    command is its arrival less the later of: the command before it, and the sending of the
    state after the one that command answered (the node could not answer what was not sent): a
    stall of this process's sending is not counted against the node.
    """
    model = md.load_model(urdf)
    count = int(args.rate * (args.seconds + START_BUDGET))
    q = np.tile(np.full(model.n, 0.1), (count, 1))
    q[:, SWEPT] = np.linspace(0.2, 0.6, count)
    table = md.gravity_torques(model, q)[:, SWEPT]
    assert np.all(np.diff(np.sort(table)) != 0), f'joint {SWEPT} must tell the states apart'
    command = [os.path.join(os.path.dirname(sys.executable), 'dynamics_node'), '--ros-args',
               '-p', 'mode:=gravity_compensation', '-p', 'report_latency:=true',
               '-p', 'outputs:=[""]'] + (OBSERVER if args.observer else [])
    node = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    rclpy.init()
    me = rclpy.create_node('effort_controller')        # forward_command_controller's stand-in
    me.declare_parameter('joints', list(model.joint_names))
    received, latencies = [], []
    me.create_subscription(Float64MultiArray, '/effort_controller/commands',
                           lambda m: received.append((time.monotonic(), m.data[SWEPT])), 1000)
    me.create_subscription(Float64, '/dynamics_node/command_latency',
                           lambda m: latencies.append((time.monotonic(), m.data)), 1000)
    states = me.create_publisher(JointState, '/joint_states', 1000)
    with open(urdf) as f:
        me.create_publisher(String, '/robot_description', LATCHED).publish(String(data=f.read()))
    msg = JointState(name=list(model.joint_names), velocity=[0.0] * model.n,
                     effort=[0.0] * model.n)
    sent = np.full(count, np.inf)
    period = 1.0 / args.rate
    gc.disable()                    # this process's own collections are not the node's stalls
    try:
        start = time.monotonic()
        for k in range(count):
            if received and time.monotonic() > received[0][0] + args.seconds:
                break
            if node.poll() is not None:
                raise RuntimeError(f'dynamics_node exited: {node.stderr.read()}')
            due = start + k * period
            while time.monotonic() < due:
                rclpy.spin_once(me, timeout_sec=0)
            msg.position = q[k].tolist()
            msg.header.stamp = me.get_clock().now().to_msg()
            sent[k] = time.monotonic()
            states.publish(msg)
            rclpy.spin_once(me, timeout_sec=0)
        else:
            raise RuntimeError(f'no first command within {START_BUDGET:g} s')
    finally:
        gc.enable()
        me.destroy_node()
        rclpy.try_shutdown()
        node.send_signal(signal.SIGINT)
        node.wait(timeout=20)
    got = np.array(received)
    index = answered(table, got[:, 1])
    arrival = got[:, 0]
    allowed = np.maximum(arrival[:-1], sent[np.minimum(index[:-1] + 1, count - 1)])
    gap = np.concatenate([[0.0], np.maximum(arrival[1:] - allowed, 0.0)])
    first = arrival[0]
    return arrival - first, gap, [(t - first, ms) for t, ms in latencies if t >= first]


def window(arrival, gap, latencies, lo, hi):
    """Return (longest gap, p99.9 gap, gaps over LONG, longest in-node ms) in [lo, hi), ms."""
    inside = (arrival > lo) & (arrival < hi)
    ms = gap[inside] * 1e3
    node = [m for t, m in latencies if lo <= t < hi]
    return (ms.max(), np.percentile(ms, 99.9), int(np.sum(ms > LONG * 1e3)),
            max(node) if node else np.nan)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rounds', type=int, default=4)
    parser.add_argument('--seconds', type=float, default=10.0,
                        help='how long each round runs after its first command')
    parser.add_argument('--first', type=float, default=3.0, help='the start window, s')
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--urdf', default=robots.path('demo_arm'))
    parser.add_argument('--observer', action='store_true')
    args = parser.parse_args(argv)
    print(f'dynamics_node (gravity compensation{", observer on" if args.observer else ""}) '
          f'on {os.path.basename(args.urdf)}, model from /robot_description, {args.rate:g} Hz, '
          f'{args.seconds:g} s from its first command; gaps between commands, ms')
    print(f'{"round":>5} {"window":>9} {"longest":>8} {"p99.9":>7} {">10 ms":>7} '
          f'{"in node":>8}')
    worst = {'first': [], 'rest': []}
    for r in range(args.rounds):
        arrival, gap, latencies = one_round(args.urdf, args)
        for name, lo, hi in (('first', 0.0, args.first), ('rest', args.first, np.inf)):
            longest, p999, long_gaps, in_node = window(arrival, gap, latencies, lo, hi)
            worst[name].append(longest)
            span = f'{lo:g}-{min(hi, args.seconds):g} s'
            print(f'{r + 1:>5} {span:>9} {longest:>8.2f} {p999:>7.2f} {long_gaps:>7} '
                  f'{in_node:>8.2f}')
    print(f'longest gap over the rounds: first {args.first:g} s {max(worst["first"]):.2f} ms, '
          f'the rest {max(worst["rest"]):.2f} ms')


if __name__ == '__main__':
    main()
