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
The demo trajectory and the node that sends a trajectory once trajectory_node listens.

``demo_trajectory`` (console scripts ``demo_trajectory`` and ``send_trajectory``) is the node
demo.launch.py uses to send the demo arm's out-and-back motion, or a CSV's; the demos
(:mod:`manipulator_dynamics.demo`) send the same motion with :func:`demo_message`.
"""

import time

import numpy as np

from .. import robots
from ..trajectories import joint_span, out_and_back
from ..urdf import load_model

#: A trajectory starts this long after it is sent, s.
LEAD = 1.0
#: Seconds of the demo trajectory.
SECONDS = 5.0


def demo_points(model, seconds=SECONDS, points=51):
    """Make a smooth out-and-back motion of every joint: ``t, q, qd, qdd`` (model order)."""
    t = np.linspace(0.0, seconds, points)
    amplitude = 0.4 * joint_span(model) * np.cos(np.arange(model.n))   # alternate sizes, signs
    return (t,) + out_and_back(amplitude, t, seconds)


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
    from rclpy.executors import ExternalShutdownException

    from .process import cut_by_stop, ros_init, shut_down
    handler = ros_init(args)
    node = None
    try:
        node = rclpy.create_node('demo_trajectory')
        _send(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception as e:
        if not cut_by_stop(handler, e):
            raise
    finally:
        handler.interruptible = False
        shut_down(node)


def _send(node):
    """Read ``node``'s parameters, then send its trajectory until trajectory_node echoes it."""
    import rclpy
    from rclpy.duration import Duration
    from trajectory_msgs.msg import JointTrajectory
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
            raise SystemExit(2)
        what = f'{csv_path}: {samples[1][-1] - samples[1][0]:g} s'

        def message(start):
            return trajectory_message(*samples, start)
    else:
        model = load_model(path, check_inertia='warn')
        what = f'demo trajectory: {SECONDS:g} s'

        def message(start):
            return demo_message(model, start)
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


def trajectory_message(names, t, q, qd, qdd, start):
    """Make a JointTrajectory of samples (``qd``, ``qdd`` may be None) starting at ``start``."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp = start.to_msg()
    for i, ti in enumerate(t):
        sec = int(ti)
        point = JointTrajectoryPoint(positions=q[i].tolist(), time_from_start=Duration(
            sec=sec, nanosec=int(round((ti - sec) * 1e9))))
        if qd is not None:
            point.velocities = qd[i].tolist()
        if qdd is not None:
            point.accelerations = qdd[i].tolist()
        msg.points.append(point)
    return msg
