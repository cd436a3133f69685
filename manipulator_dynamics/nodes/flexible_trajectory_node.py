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
``flexible_trajectory_node``: the flexible arm's trajectory and torques for a rigid target.

The arm comes from ``arm_config``, a flexible arm YAML (``config/flexible_arm.yaml``: a URDF plus
beam properties per link, or a planar arm).  On every rigid target trajectory_msgs/JointTrajectory
on ``trajectory_topic`` (every joint of the arm, by name; ``time_from_start`` strictly
increasing), it samples the target every ``dt`` s (cubic Hermite through the points, holding the
last point for ``settle`` s more so the vibration after the motion shows), runs Isobe & Imaizumi's
kinematics scheme and parallel inverse-dynamics scheme (one library call), and publishes, at
``output_rate`` points per second:

* ``~/flexible_trajectory`` (JointTrajectory, the target's joint order): ``positions`` the joint
  angles the flexible arm actually reaches, ``velocities`` their rates, ``effort`` the joint
  torques of the parallel scheme for the flexible arm;
* ``~/tip_deflections`` (Float64MultiArray, 3-D ``point x link x xyz``): each link tip's
  displacement from its rigid target, base frame, m; point ``k`` is point ``k`` of
  ``~/flexible_trajectory``;
* ``~/link_names`` (String, latched): the link order of ``~/tip_deflections``.

A trajectory the arm cannot take (missing joints, times not increasing, NaN, a step too coarse
for the arm's first bending mode) is rejected with a throttled warning naming what is wrong.
"""

import os

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ._common import (array_message, BadMessage, existing_file, names_message, Plan, spin,
                      Throttled)
from ._parameters import ConfigurationError, finite_positive, Param, Parameters, zero_or_positive
from ..flexible.arm import FlexibleArm
from ..flexible.dynamics import flexible_inverse_dynamics


def default_arm_config():
    """Find ``config/flexible_arm.yaml``: the installed share folder, else the source tree."""
    try:
        from ament_index_python.packages import get_package_share_directory
        path = os.path.join(get_package_share_directory('manipulator_dynamics'), 'config',
                            'flexible_arm.yaml')
        if os.path.isfile(path):
            return path
    except Exception:           # not installed with ament (a pip install or a checkout)
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, '..', '..', 'config', 'flexible_arm.yaml'))


PARAMS = (
    Param('arm_config', '', 'flexible arm YAML (empty: the bundled config/flexible_arm.yaml)',
          existing_file, read_only=True),
    Param('trajectory_topic', 'joint_trajectory', 'rigid target trajectory_msgs/JointTrajectory',
          read_only=True),
    Param('dt', 0.001, 'integration step, s', finite_positive, low=0.0, high=1.0),
    Param('settle', 0.5, 'time to keep integrating after the last point, s (0: none)',
          zero_or_positive, low=0.0, high=3600.0),
    Param('output_rate', 100.0, 'points per second in the published results', finite_positive,
          low=0.0, high=100000.0),
)


class FlexibleTrajectoryNode(Node):
    """Flexible trajectory and parallel-scheme torques of each target trajectory (see module)."""

    def __init__(self, node_name='flexible_trajectory_node', **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = params = Parameters(self, PARAMS)
        config = params.arm_config
        try:
            self.arm = FlexibleArm.from_yaml(config or default_arm_config())
        except (ValueError, OSError) as e:
            raise ConfigurationError(f'arm_config: {e}') from None
        self.throttle = Throttled(self)
        self.flexible_pub = self.create_publisher(JointTrajectory, '~/flexible_trajectory', 10)
        self.deflection_pub = self.create_publisher(Float64MultiArray, '~/tip_deflections', 10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        names = self.create_publisher(String, '~/link_names', latched)
        names.publish(names_message([link.name for link in self.arm.links]))
        # compile (or load) the kernels before the first trajectory needs them
        # (with a step short enough for any arm: the parameter's step is checked per target)
        flexible_inverse_dynamics(self.arm, np.arange(3) * 1e-6, np.zeros((3, self.arm.n)))
        self.create_subscription(JointTrajectory, params.trajectory_topic, self._on_trajectory,
                                 10)
        self.get_logger().info(f'ready: {self.arm!r}; first modes '
                               + ', '.join(f'{f:.4g} Hz'
                                           for f in self.arm.natural_frequencies(count=2)))

    def _on_trajectory(self, msg):
        if not msg.points:
            return
        try:
            plan = Plan(self.arm.model, msg)
            if len(msg.points) < 2:
                raise BadMessage('points', 'a target needs at least 2 points')
            dt, settle = self.params.dt, self.params.settle
            steps = int(np.floor((plan.t[-1] + settle - plan.t[0]) / dt + 1e-9))
            grid = plan.t[0] + dt * np.arange(steps + 1)
            q = plan.hermite(np.minimum(grid, plan.t[-1]))
            result = flexible_inverse_dynamics(self.arm, grid, q)
        except BadMessage as e:
            self.throttle.warn('trajectory ' + e.kind, f'target rejected: {e}')
            return
        except ValueError as e:
            self.throttle.warn('trajectory', f'target rejected: {e}')
            return
        traj = result.trajectory
        every = max(1, int(round(1.0 / (self.params.output_rate * dt))))
        keep = np.arange(0, grid.size, every)
        rates = np.gradient(traj.q, grid, axis=0)
        inverse = np.argsort(plan.order)          # model order -> the message's order
        out = JointTrajectory(header=msg.header, joint_names=plan.names)
        for s in keep:
            seconds = float(grid[s])
            point = JointTrajectoryPoint(positions=traj.q[s][inverse].tolist(),
                                         velocities=rates[s][inverse].tolist(),
                                         effort=result.tau[s][inverse].tolist())
            point.time_from_start.sec = int(seconds)
            point.time_from_start.nanosec = int(round((seconds - int(seconds)) * 1e9))
            out.points.append(point)
        self.flexible_pub.publish(out)
        self.deflection_pub.publish(array_message(result.tip_deflection[keep],
                                                  ('point', 'link', 'xyz')))
        worst = np.linalg.norm(result.tip_deflection, axis=2).max()
        self.get_logger().info(f'flexible trajectory of {grid.size} steps: largest tip '
                               f'deflection {worst * 1e3:.3g} mm, peak torque '
                               f'{np.abs(result.tau).max():.4g}')


def main(args=None):
    """Console script ``flexible_trajectory_node``."""
    spin(FlexibleTrajectoryNode, args)
