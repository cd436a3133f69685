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
One joint state through dynamics_node, step by step: where a state's microseconds go.

bench_latency measures the node against a raw echo over DDS; this takes the executor and DDS
away and calls the node's state callback directly, in this process, on one state's bytes (as a
raw subscription hands them), ``--states`` times, the command published on a topic nobody
hears.  It prints the callback's time per state (a state just received), then each step's
share, measured by timing the step alone on the same state: the state read from its bytes (by
name, checked), g(q), the command (clamped, put in the controller's order, serialised and
published), and with ``--observer`` the momentum observer's step and the payload window; and
what a state that waited adds, the queue looked at for states behind it.  A driver's state
takes the compiled step (``DynamicsNode._compiled_step``: the read, the law and the command in
one compiled call); the general path's time, that step declined, is printed beside it, and the
steps are the general path's.  Then, with
``--profile``, cProfile's top functions over the run.  What bench_latency's ratio to the raw
echo is made of, without DDS's noise::

    python3 benchmarks/bench_state_path.py [--states 20000] [--observer] [--profile]
"""

import argparse
import cProfile
import pstats
import time

import numpy as np


def state_bytes(model, q, qd, effort, stamp_ns):
    """Return one sensor_msgs/JointState, serialised as the middleware hands it to the node."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    msg = JointState(name=list(model.joint_names), position=q.tolist(), velocity=qd.tolist(),
                     effort=effort.tolist())
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    return serialize_message(msg)


def per_call(function, count):
    """Return the median of ``count`` calls' times of ``function()``, in microseconds."""
    times = np.empty(count)
    for k in range(count):
        began = time.perf_counter_ns()
        function()
        times[k] = time.perf_counter_ns() - began
    return float(np.median(times)) * 1e-3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--states', type=int, default=20000)
    parser.add_argument('--observer', action='store_true',
                        help='the momentum observer on (external_torques)')
    parser.add_argument('--profile', action='store_true', help="cProfile's top functions too")
    args = parser.parse_args(argv)

    import rclpy
    from rclpy.parameter import Parameter

    from manipulator_dynamics import load_model, robots
    from manipulator_dynamics.nodes.dynamics_node import DynamicsNode
    from manipulator_dynamics.rigid.rnea import gravity_torques

    urdf = robots.path('demo_arm')
    model = load_model(urdf)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = DynamicsNode(context=context, parameter_overrides=[
        Parameter('urdf_path', value=urdf), Parameter('controller_name', value='-'),
        Parameter('stale_after', value=0.0), Parameter('outputs', value=['']),
        Parameter('external_torques', value=args.observer)])
    try:
        rng = np.random.default_rng(1)
        q, qd = rng.uniform(-1, 1, model.n), rng.uniform(-1, 1, model.n)
        effort = gravity_torques(model, q)
        period = 1_000_000
        clock = [node.now_ns()]

        def fresh(count):
            """``count`` states' bytes, stamped a period apart after every one made before."""
            out = [state_bytes(model, q, qd, effort, clock[0] + (k + 1) * period)
                   for k in range(count)]
            clock[0] += count * period
            return out
        n = args.states
        node._on_state(fresh(1)[0], {'received_timestamp': 0})      # the node's start-up
        feed = iter(fresh(n))
        callback = per_call(lambda: node._on_state(
            next(feed), {'received_timestamp': time.time_ns()}), n)   # just received
        step, node._compiled_step = node._compiled_step, lambda *args: False
        feed = iter(fresh(n))
        general = per_call(lambda: node._on_state(
            next(feed), {'received_timestamp': time.time_ns()}), n)
        node._compiled_step = step
        feed = iter(fresh(n))
        read = per_call(lambda: node.states.read_serialized(next(feed), node.now_ns()), n)
        g = per_call(lambda: gravity_torques(model, q), n)
        tau = gravity_torques(model, q)
        command = per_call(lambda: node.command.publish(tau), n)
        from manipulator_dynamics.nodes.joint_states import queued
        waiting = per_call(lambda: queued(node.state_sub, node.params.state_queue), n)
        steps = {'the state read from its bytes': read, 'g(q)': g,
                 'the command published': command}
        if args.observer:
            stamps = iter(range(clock[0] + period, clock[0] + (n + 1) * period, period))
            clock[0] += (n + 1) * period
            steps['the observer step'] = per_call(
                lambda: node.contact.on_state(q, qd, effort, next(stamps)), n)
            stamps = iter(range(clock[0] + period, clock[0] + (n + 1) * period, period))
            clock[0] += (n + 1) * period
            steps['the payload window'] = per_call(
                lambda: node.payload.on_state(q, qd, effort, next(stamps)), n)
        print(f'dynamics_node, {model.name} ({model.n} joints), one state at a time, '
              f'{n} states: the median per state [us]')
        print(f'  {"the state callback, whole":40s} {callback:7.2f}')
        print(f'  {"the same on its general path":40s} {general:7.2f}   (the compiled step '
              'declined), whose steps:')
        for name, us in steps.items():
            print(f'    {name:38s} {us:7.2f}')
        print(f'    {"the rest (the callback less those)":38s} '
              f'{general - sum(steps.values()):7.2f}')
        print(f'and where a state waited (dynamics_node.WAITED_NS), the queue looked at: '
              f'{waiting:.2f} us more')
        if args.profile:
            feed = fresh(n)
            profile = cProfile.Profile()
            profile.enable()
            for data in feed:
                node._on_state(data, {'received_timestamp': 0})
            profile.disable()
            pstats.Stats(profile).sort_stats('tottime').print_stats(15)
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


if __name__ == '__main__':
    main()
