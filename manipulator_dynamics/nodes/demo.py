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
The demo: the whole loop on the bundled robot, as separate processes over DDS.

``python3 -m manipulator_dynamics.nodes.demo`` (what ``python3 dev.py demo`` runs) starts sim_node,
dynamics_node, trajectory_node and base_params_node on the demo arm, sends a 5 s trajectory,
calls ``/compute_base_params``, prints the tracking error, the range of the efforts and the base
parameters, and writes a plot.  It runs on a DDS domain of its own with localhost-only discovery,
so that it never talks to a real robot.  ``demo_trajectory`` is the node demo.launch.py uses to
send the same trajectory (and ``send_trajectory``, the same script, sends a CSV's).  ``--identify``
runs the identification demo instead (:mod:`.identification_demo`).
"""

import argparse
import os
import sys
import time

import numpy as np

from ._loop import demo_model, LEAD, Loop, trajectory_message
from .. import robots
from ..urdf import load_model

SECONDS = 5.0


def demo_points(model, seconds=SECONDS, points=51):
    """Make a smooth out-and-back motion of every joint: ``t, q, qd, qdd`` (model order)."""
    t = np.linspace(0.0, seconds, points)
    span = np.minimum(np.where(np.isfinite(model.upper), model.upper, np.pi),
                      -np.where(np.isfinite(model.lower), model.lower, -np.pi))
    amp = 0.4 * span * np.cos(np.arange(model.n))        # alternate directions and sizes
    w = np.pi / seconds
    q = amp * np.sin(w * t)[:, None] ** 2
    qd = amp * w * np.sin(2 * w * t)[:, None]
    qdd = amp * 2 * w * w * np.cos(2 * w * t)[:, None]
    return t, q, qd, qdd


def demo_message(model, start):
    """Make the demo trajectory a JointTrajectory starting at ``start`` (rclpy Time)."""
    return trajectory_message(model.joint_names, *demo_points(model), start)


def demo_trajectory(args=None):
    """
    Console scripts ``demo_trajectory``, ``send_trajectory``: send a trajectory once listened to.

    The demo trajectory, or the CSV file of parameter ``csv`` (``manipulator-dynamics excitation
    --output`` writes one: the excitation motion for identification), starting ``lead`` seconds
    after it is taken.  Sent again (a few times at most) until trajectory_node echoes it on its
    ``~/trajectory_with_efforts``: the subscriber may be seen here before it has seen this
    publisher, and a trajectory sent in between is lost.
    """
    import rclpy
    from rclpy.duration import Duration
    from rclpy.executors import ExternalShutdownException
    from trajectory_msgs.msg import JointTrajectory

    from .process import ros_init, shut_down
    ros_init(args)
    node = rclpy.create_node('demo_trajectory')
    path = node.declare_parameter('urdf_path', robots.path('demo_arm')).value
    topic = node.declare_parameter('trajectory_topic', 'joint_trajectory').value
    csv_path = node.declare_parameter('csv', '').value
    lead = node.declare_parameter('lead', LEAD).value
    pub = node.create_publisher(JointTrajectory, topic, 10)
    echoes = []
    node.create_subscription(JointTrajectory, 'trajectory_node/trajectory_with_efforts',
                             echoes.append, 10)
    if csv_path:
        from ..identification.excitation import read_trajectory_csv
        try:
            samples = read_trajectory_csv(csv_path)
        except (OSError, ValueError) as e:
            node.get_logger().fatal(f'not sent: {e}')
            shut_down(node)
            raise SystemExit(2)
        what = f'{csv_path}: {samples[1][-1] - samples[1][0]:g} s'

        def message(start):
            return trajectory_message(*samples, start)
    else:
        model = load_model(path, check_inertia='warn')
        what = f'demo trajectory: {SECONDS:g} s'

        def message(start):
            return demo_message(model, start)
    try:
        while rclpy.ok() and pub.get_subscription_count() == 0:
            rclpy.spin_once(node, timeout_sec=0.1)
        for _ in range(20):
            if not rclpy.ok() or echoes:
                break
            pub.publish(message(node.get_clock().now() + Duration(seconds=lead)))
            end = time.monotonic() + 0.5
            while rclpy.ok() and not echoes and time.monotonic() < end:
                rclpy.spin_once(node, timeout_sec=0.05)
        if echoes:
            node.get_logger().info(f'sent the {what}')
        elif rclpy.ok():
            node.get_logger().warning(f'trajectory_node did not take the {what}')
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        shut_down(node)


def run(plot='demo.png', lockstep=True, engine='auto'):
    """Run the demo (sim_node in lockstep at real-time pace, or free in real time)."""
    from std_srvs.srv import Trigger
    import yaml

    model, common = demo_model()
    t, q, qd, _ = demo_points(model)
    loop = Loop([
        ('sim_node', dict(common, wait_for_command='true', engine=engine,
                          initial_positions='[' + ', '.join(map(str, q[0])) + ']')),
        ('dynamics_node', dict(common, mode='none')),
        ('trajectory_node', common),
        ('base_params_node', dict(common, friction='true', armature='true'))], lockstep)
    print(f'manipulator_dynamics demo: {model!r}\nstarting sim_node, dynamics_node, '
          f'trajectory_node, base_params_node (DDS domain {os.environ["ROS_DOMAIN_ID"]}, '
          'localhost only) ...', flush=True)
    service = loop.node.create_client(Trigger, '/compute_base_params')
    try:
        loop.close(model.joint_names, q[0], service.service_is_ready)
        print(loop.plant(), flush=True)
        start = loop.send(lambda when: demo_message(model, when))
        print(f'trajectory sent: every joint out and back over {SECONDS:g} s, computed '
              'torque on the simulated arm', flush=True)
        loop.until(start, SECONDS + 0.1)
        # after the motion: the computation takes a core for a few seconds, which a 2-core
        # machine running the loop in Python does not have to spare
        future = service.call_async(Trigger.Request())
        loop.wait(future.done, 60, '/compute_base_params')
        answer = future.result()
    finally:
        loop.stop()

    import scipy.interpolate
    hermite = scipy.interpolate.CubicHermiteSpline(t, q, qd)
    stamp, measured, applied = loop.recorded(start, SECONDS)
    error = np.abs(measured - hermite(stamp))
    print(f'\ntracking over {len(stamp)} joint states: max error {error.max() * 1e3:.3f} '
          f'mrad, RMS {np.sqrt((error ** 2).mean()) * 1e3:.3f} mrad')
    for j, name in enumerate(model.joint_names):
        print(f'  {name:8s} error max {error[:, j].max() * 1e3:7.3f} mrad   effort '
              f'{applied[:, j].min():8.2f} .. {applied[:, j].max():8.2f} N m '
              f'(limit {model.effort_limit[j]:g})')
    if answer.success:
        base = yaml.safe_load(answer.message)
        print(f'\n/compute_base_params: {base["count"]} base parameters (with friction and '
              f'rotor inertia; method {base["method"]}, {base["samples"]} samples, seed '
              f'{base["seed"]}); the first ones:')
        for p in base['parameters'][:6]:
            print(f'  {p["name"]:18s} {p["value"]: .6g}   {p["equation"]}')
    else:
        print(f'\n/compute_base_params failed: {answer.message}')
    if plot:
        _plot(plot, model, stamp, measured, hermite(stamp), applied)
        print(f'\nplot: {os.path.abspath(plot)}')
    return 0 if answer.success and error.max() < 1e-2 else 1


def _plot(path, model, t, measured, desired, effort):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, (a, b, c) = plt.subplots(3, 1, figsize=(9, 10), sharex=True)
    for j, name in enumerate(model.joint_names):
        line, = a.plot(t, desired[:, j], '--', lw=1)
        a.plot(t, measured[:, j], color=line.get_color(), lw=1.5, label=name)
        b.plot(t, (measured[:, j] - desired[:, j]) * 1e3, lw=1, label=name)
        c.plot(t, effort[:, j], lw=1, label=name)
    a.set_ylabel('joint position [rad]\n(dashed: desired)')
    b.set_ylabel('tracking error [mrad]')
    c.set_ylabel('effort [N m]')
    c.set_xlabel('time [s]')
    a.legend(ncol=4, fontsize=8)
    a.set_title(f'{model.name}: computed torque over DDS (sim_node + trajectory_node)')
    for ax in (a, b, c):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    """``python3 -m manipulator_dynamics.nodes.demo [--plot FILE] [--identify [--duration S]]``."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--plot', help='PNG to write ("" for none; default demo.png, or '
                        'identification.png with --identify)')
    parser.add_argument('--identify', action='store_true', help='the identification demo: the '
                        'simulated arm identified from an excitation motion it runs')
    parser.add_argument('--duration', type=float, default=20.0, help='seconds of excitation '
                        '(--identify; default 20)')
    parser.add_argument('--engine', default='auto', choices=['auto', 'mujoco', 'internal'],
                        help="sim_node's engine (default auto: MuJoCo where installed)")
    parser.add_argument('--real-time', action='store_true', help='sim_node free in real time '
                        '(default: lockstep at real-time pace, the same motion however busy '
                        'the machine is)')
    args = parser.parse_args(argv)
    try:
        if args.identify:
            from .identification_demo import run as identification
            plot = 'identification.png' if args.plot is None else args.plot
            return identification(plot, args.duration, not args.real_time, args.engine)
        return run('demo.png' if args.plot is None else args.plot, not args.real_time,
                   args.engine)
    except RuntimeError as e:
        print(f'demo failed: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
