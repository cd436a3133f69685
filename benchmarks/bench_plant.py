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
sim_node as a plant: its pace in real time, its speed in lockstep, the loop's tracking error.

    python3 benchmarks/bench_plant.py [--seconds 10] [--engine mujoco|internal]

Runs, each on the demo arm with its joint dynamics, over DDS on this machine:

1. real time, the plant alone, holding: states per wall second (1000 at 1 kHz) and how late
   each state is received (by DDS, here) after its physics time (p50 / p99 / max): the plant's
   wake-up lateness plus one DDS hop;
2. the same beside the demo's nodes (dynamics_node, trajectory_node holding the arm, and
   base_params_node idle): a loop of the plant and a controller at 1 kHz;
3. lockstep, gravity compensation by dynamics_node on sim time: physics steps per wall second;
4. the demo's 5 s trajectory under trajectory_node, real time and lockstep at real-time pace
   (as the demo runs it): max and RMS tracking error.

Absolute times move from machine to machine: compare runs of one machine.
"""

import argparse
import os
import sys
import time

import numpy as np

os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

from manipulator_dynamics.demo.loop import demo_model, Loop  # noqa: E402, I100
from manipulator_dynamics.nodes.process import with_receipt_time  # noqa: E402, I100
from manipulator_dynamics.nodes.send_trajectory import (  # noqa: E402
    demo_message, demo_points, SECONDS)


def stamp(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def pace(loop, seconds):
    """States per wall second and the lateness of each (ms) over ``seconds``, heard here."""
    from sensor_msgs.msg import JointState
    heard = []
    # the DDS receipt time (system clock, as the stamps), not when this Python loop got to it
    loop.node.create_subscription(JointState, '/joint_states', with_receipt_time(
        lambda m, info: heard.append((info['received_timestamp'] * 1e-9, stamp(m)))), 1000)
    loop.spin(seconds)
    wall, physics = np.array(heard).T
    late = (wall - physics) * 1e3
    return len(heard) / seconds, np.percentile(late, [50, 99]), late.max()


def demo_sim(engine, **params):
    """Return the demo arm, its parameters, the demo motion, and sim_node's, starting on it."""
    model, common = demo_model()
    t, q, qd, _ = demo_points(model)
    sim = dict(common, engine=engine, initial_positions='[' + ', '.join(map(str, q[0])) + ']',
               **params)
    return model, common, (t, q, qd), sim


def real_time(engine, seconds, with_nodes):
    model, common, (_, q, _), sim = demo_sim(engine, wait_for_command='false',
                                             command_timeout='1.0')
    nodes = [('sim_node', sim)]
    if with_nodes:
        nodes += [('dynamics_node', dict(common, mode='none')), ('trajectory_node', common),
                  ('base_params_node', common)]
    loop = Loop(nodes, lockstep=False)
    try:
        if with_nodes:
            loop.close(model.joint_names, q[0])
        else:
            loop.wait(lambda: len(loop.states) > 10, 120, 'sim_node')
        return pace(loop, seconds)
    finally:
        loop.stop()


def lockstep_rate(engine, seconds):
    _, common, _, sim = demo_sim(engine, lockstep='true')
    loop = Loop([('sim_node', sim), ('dynamics_node', dict(common, use_sim_time='true'))],
                lockstep=False)
    try:
        loop.wait(lambda: loop.states and stamp(loop.states[-1]) > 0.1, 120, 'the loop')
        begin, at = time.monotonic(), stamp(loop.states[-1])
        loop.spin(seconds)
        return (stamp(loop.states[-1]) - at) * 1000 / (time.monotonic() - begin)
    finally:
        loop.stop()


def tracking(engine, lockstep):
    """Return the demo trajectory's max and RMS tracking error (mrad)."""
    import scipy.interpolate
    model, common, (t, q, qd), sim = demo_sim(engine, wait_for_command='true')
    loop = Loop([('sim_node', sim), ('trajectory_node', common)], lockstep)
    try:
        loop.close(model.joint_names, q[0])
        start = loop.send(lambda when: demo_message(model, when))
        loop.until(start, SECONDS + 0.1)
        stamps, measured, _ = loop.recorded(start, SECONDS)
    finally:
        loop.stop()
    error = np.abs(measured - scipy.interpolate.CubicHermiteSpline(t, q, qd)(stamps))
    return error.max() * 1e3, np.sqrt((error ** 2).mean()) * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--engine', default='mujoco', choices=['mujoco', 'internal'])
    args = parser.parse_args(argv)
    print(f'sim_node, engine {args.engine}, the demo arm, {args.seconds:g} s per stage',
          flush=True)
    for with_nodes in (False, True):
        rate, (p50, p99), worst = real_time(args.engine, args.seconds, with_nodes)
        print(f'real time, {"with the demo nodes" if with_nodes else "alone":20s}: '
              f'{rate:6.0f} states/s; heard late by p50 {p50:.2f} ms, p99 {p99:.2f} ms, '
              f'max {worst:.1f} ms', flush=True)
    print(f'lockstep with dynamics_node: {lockstep_rate(args.engine, args.seconds):.0f} '
          'physics steps per wall second', flush=True)
    for lockstep in (False, True):
        worst, rms = tracking(args.engine, lockstep)
        print(f'demo trajectory, {"lockstep" if lockstep else "real time"}: tracking error max '
              f'{worst:.2f} mrad, RMS {rms:.2f} mrad', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
