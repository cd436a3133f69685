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
send the same trajectory.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

import numpy as np

from .. import robots
from ..urdf import load_model

SECONDS = 5.0
LEAD = 1.0        # the trajectory starts this long after it is sent


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
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    t, q, qd, qdd = demo_points(model)
    msg = JointTrajectory(joint_names=list(model.joint_names))
    msg.header.stamp = start.to_msg()
    for i, ti in enumerate(t):
        sec = int(ti)
        msg.points.append(JointTrajectoryPoint(
            positions=q[i].tolist(), velocities=qd[i].tolist(), accelerations=qdd[i].tolist(),
            time_from_start=Duration(sec=sec, nanosec=int(round((ti - sec) * 1e9)))))
    return msg


def demo_trajectory(args=None):
    """
    Console script ``demo_trajectory``: send the demo trajectory once trajectory_node listens.

    Sent again (a few times at most) until trajectory_node echoes it on its
    ``~/trajectory_with_efforts``: the subscriber may be seen here before it has seen this
    publisher, and a trajectory sent in between is lost.
    """
    import rclpy
    from rclpy.duration import Duration
    from rclpy.executors import ExternalShutdownException
    from trajectory_msgs.msg import JointTrajectory

    from ._common import ros_init, shut_down
    ros_init(args)
    node = rclpy.create_node('demo_trajectory')
    path = node.declare_parameter('urdf_path', robots.path('demo_arm')).value
    topic = node.declare_parameter('trajectory_topic', 'joint_trajectory').value
    pub = node.create_publisher(JointTrajectory, topic, 10)
    echoes = []
    node.create_subscription(JointTrajectory, 'trajectory_node/trajectory_with_efforts',
                             echoes.append, 10)
    model = load_model(path, check_inertia='warn')
    try:
        while rclpy.ok() and pub.get_subscription_count() == 0:
            rclpy.spin_once(node, timeout_sec=0.1)
        for _ in range(20):
            if not rclpy.ok() or echoes:
                break
            pub.publish(demo_message(model, node.get_clock().now() + Duration(seconds=LEAD)))
            end = time.monotonic() + 0.5
            while rclpy.ok() and not echoes and time.monotonic() < end:
                rclpy.spin_once(node, timeout_sec=0.05)
        if echoes:
            node.get_logger().info(f'demo trajectory sent: {SECONDS:g} s')
        elif rclpy.ok():
            node.get_logger().warning('trajectory_node did not take the demo trajectory')
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        shut_down(node)


def _start(name, params):
    command = [os.path.join(os.path.dirname(sys.executable), name), '--ros-args']
    for key, value in params.items():
        command += ['-p', f'{key}:={value}']
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def run(plot='demo.png'):
    """Run the demo; return 0 on success."""
    os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    from rcl_interfaces.msg import Log
    import rclpy
    from rclpy.duration import Duration
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from std_srvs.srv import Trigger
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    import yaml

    from ._common import ROSOUT

    urdf = robots.path('demo_arm')
    share = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), '..',
                         'config', 'demo_arm_dynamics.yaml')
    dynamics = share if os.path.exists(share) else ''
    model = load_model(urdf, joint_dynamics=dynamics or None)
    t, q, qd, _ = demo_points(model)
    common = {'urdf_path': urdf, 'joint_dynamics': dynamics}
    print(f'manipulator_dynamics demo: {model!r}\nstarting sim_node, dynamics_node, '
          f'trajectory_node, base_params_node (DDS domain {os.environ["ROS_DOMAIN_ID"]}, '
          'localhost only) ...', flush=True)
    procs = [
        _start('sim_node', dict(common, wait_for_command='true',
                                initial_positions='[' + ', '.join(map(str, q[0])) + ']')),
        _start('dynamics_node', dict(common, mode='none')),
        _start('trajectory_node', common),
        _start('base_params_node', dict(common, friction='true', armature='true')),
    ]
    rclpy.init()
    node = rclpy.create_node('demo')
    states, commands, echoed = [], [], []
    node.create_subscription(JointState, '/joint_states', states.append, 100)
    node.create_subscription(JointTrajectory, '/trajectory_node/trajectory_with_efforts',
                             echoed.append, 10)
    node.create_subscription(Float64MultiArray, '/effort_controller/commands', commands.append,
                             100)
    logs = []
    node.create_subscription(Log, '/rosout', logs.append, ROSOUT)
    pub = node.create_publisher(JointTrajectory, '/joint_trajectory', 10)
    service = node.create_client(Trigger, '/compute_base_params')

    def spin_until(condition, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end and not condition():
            rclpy.spin_once(node, timeout_sec=0.02)
        if not condition():
            raise RuntimeError(f'timed out waiting for {what}')

    try:
        spin_until(lambda: pub.get_subscription_count() > 0 and len(states) > 10
                   and service.service_is_ready(), 60, 'the nodes to start')
        # close the loop before moving: hold the first point until sim_node applies efforts and
        # trajectory_node says it computes them from sim_node's states (DDS discovery between
        # them may come later than ours; before it, the controller could only feed forward)
        hold = JointTrajectory(joint_names=list(model.joint_names))
        hold.points = [JointTrajectoryPoint(positions=q[0].tolist())]
        pub.publish(hold)
        spin_until(lambda: any(states[-1].effort) and any(
            'the loop is closed' in m.msg for m in logs), 60, 'the loop to close')
        start = node.get_clock().now() + Duration(seconds=LEAD)
        pub.publish(demo_message(model, start))
        spin_until(lambda: echoed, LEAD, 'trajectory_node to accept the trajectory')
        print(f'trajectory sent: every joint out and back over {SECONDS:g} s, computed '
              'torque on the simulated arm', flush=True)
        end = time.monotonic() + LEAD + SECONDS + 0.5
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.01)
        # after the motion: the computation takes a core for a few seconds, which a 2-core
        # machine running the loop in Python does not have to spare
        future = service.call_async(Trigger.Request())
        spin_until(future.done, 60, '/compute_base_params')
        answer = future.result()
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()

    import scipy.interpolate
    hermite = scipy.interpolate.CubicHermiteSpline(t, q, qd)
    stamp = np.array([(m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec
                       - start.nanoseconds) * 1e-9 for m in states])
    during = (stamp >= 0) & (stamp <= SECONDS)
    measured = np.array([m.position for m in states])
    applied = np.array([m.effort for m in states])
    error = np.abs(measured[during] - hermite(stamp[during]))
    print(f'\ntracking over {during.sum()} joint states: max error {error.max() * 1e3:.3f} '
          f'mrad, RMS {np.sqrt((error ** 2).mean()) * 1e3:.3f} mrad')
    for j, name in enumerate(model.joint_names):
        print(f'  {name:8s} error max {error[:, j].max() * 1e3:7.3f} mrad   effort '
              f'{applied[during, j].min():8.2f} .. {applied[during, j].max():8.2f} N m '
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
        _plot(plot, model, stamp[during], measured[during], hermite(stamp[during]),
              applied[during])
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
    """``python3 -m manipulator_dynamics.nodes.demo [--plot FILE]``."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--plot', default='demo.png', help='PNG to write ("" for none)')
    try:
        return run(parser.parse_args(argv).plot)
    except RuntimeError as e:
        print(f'demo failed: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
