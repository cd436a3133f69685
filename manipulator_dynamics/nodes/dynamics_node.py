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

"""``dynamics_node``: effort commands for ros2_control and the robot's dynamics, live.

Subscribes ``/joint_states`` (joints matched by name; other robots' joints ignored) and, in mode
``inverse_dynamics``, ``desired_state`` (trajectory_msgs/JointTrajectory, one point with the
desired accelerations, as trajectory_node publishes it).  Publishes, at each joint state (or at
``rate`` Hz, from the latest one):

* ``command_topic`` (std_msgs/Float64MultiArray), in the order of ``command_joints``: the efforts
  for an ``effort_controllers/JointGroupEffortController`` (or forward_command_controller with
  ``interface_name: effort``): ``g(q)`` in mode ``gravity_compensation``, ``M(q) qdd_d + h(q, qd)``
  in mode ``inverse_dynamics``, nothing in mode ``none``; plus ``Fv qd + Fc sign(qd)`` with
  ``friction_compensation``; clamped to the URDF effort limits (a throttled warning says so);
* ``~/inertia_matrix`` (Float64MultiArray, 2-D layout), ``~/bias_forces`` and
  ``~/gravity_torques`` (Float64MultiArray) in the model's joint order, which ``~/joint_names``
  (std_msgs/String, transient local) gives;
* ``~/forward_dynamics`` (trajectory_msgs/JointTrajectory, one point): the joint accelerations that
  the measured efforts produce, in ``accelerations``, with the state they were computed at
  (``positions``, ``velocities``, ``effort``) and the joint names.
"""

import time

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ._common import (BadMessage, check_command_joints, clamp_efforts, command_index, describe,
                      finite_positive, JointStates, LATCHED, matrix_message, ModelSource,
                      names_message, parameter_check, spin, Throttled, vector_message, warm_up)
from ..crba import inertia_matrix
from ..forward import forward_dynamics
from ..rnea import bias_forces, gravity_torques, inverse_dynamics
from ..udut import SingularInertiaError

MODES = ('gravity_compensation', 'inverse_dynamics', 'none')
OUTPUTS = ('inertia_matrix', 'bias_forces', 'gravity_torques', 'forward_dynamics')


class DynamicsNode(Node):
    """Gravity compensation / inverse dynamics efforts and the dynamics topics (see module)."""

    def __init__(self, node_name='dynamics_node', **kwargs):
        super().__init__(node_name, **kwargs)
        p = self.declare_parameter
        self.mode = p('mode', 'gravity_compensation', describe(
            'gravity_compensation | inverse_dynamics | none')).value
        self.command_topic = p('command_topic', '/effort_controller/commands', describe(
            'effort command topic of the controller (read at start)', read_only=True)).value
        p('command_joints', [''], describe("joint order of the commands, as in the controller's "
                                           "joints (empty: the model's joints)"))
        self.rate = p('rate', 0.0, describe('publish rate in Hz; 0: at each joint state')).value
        self.friction = p('friction_compensation', False, describe(
            'add viscous and Coulomb friction Fv qd + Fc sign(qd) to the commands')).value
        self.clamp = p('clamp_efforts', True, describe('clamp commands to the URDF effort '
                                                       'limits')).value
        self.stale_after = p('stale_after', 0.5, describe(
            'drop joint states older than this (s); 0: never')).value
        self.desired_timeout = p('desired_timeout', 0.2, describe(
            'in inverse_dynamics mode, desired accelerations older than this (s) count as 0'
        )).value
        self.outputs = set(p('outputs', list(OUTPUTS), describe(
            'which ~/ topics to publish: ' + ', '.join(OUTPUTS) + ' ([""]: none)')).value) - {''}
        self.forward_method = p('forward_method', 'auto', describe(
            'forward dynamics method: auto | udut | cholesky')).value
        self.report_latency = p('report_latency', False, describe(
            'publish ~/command_latency: ms from the DDS receipt of each joint state to the '
            'publication of its command (for benchmarks)')).value
        depth = p('state_queue', 1, describe(
            'joint_states kept while busy; 1: always the newest (commands from old states would '
            'act late)', read_only=True)).value
        parameter_check(self, {
            'mode': lambda v: None if v in MODES else f'must be one of {", ".join(MODES)}',
            'rate': lambda v: None if v == 0 else finite_positive(v),
            'stale_after': lambda v: None if v == 0 else finite_positive(v),
            'desired_timeout': finite_positive,
            'forward_method': lambda v: None if v in ('auto', 'udut', 'cholesky') else
            'must be auto, udut or cholesky',
            'outputs': lambda v: None if set(v) - {''} <= set(OUTPUTS) else
            f'unknown: {", ".join(sorted(set(v) - set(OUTPUTS) - {""}))}',
            'command_joints': self._check_command_joints,
        })
        self.add_on_set_parameters_callback(self._apply)
        self.command_pub = self.create_publisher(Float64MultiArray, self.command_topic, 10)
        self.pubs = {
            'inertia_matrix': self.create_publisher(Float64MultiArray, '~/inertia_matrix', 10),
            'bias_forces': self.create_publisher(Float64MultiArray, '~/bias_forces', 10),
            'gravity_torques': self.create_publisher(Float64MultiArray, '~/gravity_torques', 10),
            'forward_dynamics': self.create_publisher(JointTrajectory, '~/forward_dynamics', 10),
        }
        self.names_pub = self.create_publisher(String, '~/joint_names', LATCHED)
        self.latency_pub = self.create_publisher(Float64, '~/command_latency', 100)
        self.states = None
        self.command_index = None
        self.latest = None
        self.desired = None            # (qdd (n,), receipt time ns)
        self.timer = None
        self.throttle = Throttled(self)
        # the model (loaded and its kernels warmed up) before the subscriptions: a node that
        # says it listens must be ready to serve, or the first states wait and go stale
        self.source = ModelSource(self, self._on_model)
        self.create_subscription(JointState, '/joint_states', self._on_state, depth)
        self.create_subscription(JointTrajectory, 'desired_state', self._on_desired, 10)
        self._set_timer()

    # --- parameters ---------------------------------------------------------------------------
    def _check_command_joints(self, names):
        return check_command_joints(getattr(self, 'source', None) and self.source.model, names)

    def _apply(self, params):
        from rcl_interfaces.msg import SetParametersResult
        for param in params:
            if param.name in ('mode', 'rate', 'friction_compensation', 'clamp_efforts',
                              'stale_after', 'desired_timeout', 'forward_method',
                              'report_latency'):
                attr = {'friction_compensation': 'friction', 'clamp_efforts': 'clamp'}.get(
                    param.name, param.name)
                setattr(self, attr, param.value)
            elif param.name == 'outputs':
                self.outputs = set(param.value) - {''}
        if self.states is not None:
            self.states.stale_after = self.stale_after
        if any(p.name == 'rate' for p in params):
            self._set_timer()
        if any(p.name == 'command_joints' for p in params) and self.source.model is not None:
            self.command_index = command_index(self, self.source.model, [
                n for p in params if p.name == 'command_joints' for n in p.value])
        return SetParametersResult(successful=True)

    def _set_timer(self):
        if self.timer is not None:
            self.destroy_timer(self.timer)
            self.timer = None
        if self.rate > 0:
            self.timer = self.create_timer(1.0 / self.rate, self._on_timer)

    # --- model --------------------------------------------------------------------------------
    def _on_model(self, model):
        warm_up(model)
        self.states = JointStates(model, self.stale_after)
        self.command_index = command_index(self, model,
                                           self.get_parameter('command_joints').value)
        self.latest = None
        self.desired = None
        self.names_pub.publish(names_message(model.joint_names))

    # --- inputs -------------------------------------------------------------------------------
    def _warn(self, text, kind=None):
        self.throttle.warn(kind or text, text)

    def _on_state(self, msg, info):
        if self.states is None or self.source.model is None:
            self._warn('joint_states received but no robot model yet (robot_description, '
                       'urdf_path)')
            return
        try:
            q, qd, effort, _ = self.states.read(msg, self.get_clock().now().nanoseconds)
        except BadMessage as e:
            self._warn(f'dropped joint_states: {e}', 'states ' + e.kind)
            return
        self.latest = (q, qd, effort, msg.header.stamp)
        if self.rate == 0:
            self._publish(*self.latest, received=info['received_timestamp'])

    def _on_desired(self, msg):
        model = self.source.model
        if model is None:
            return
        try:
            if len(msg.points) != 1:
                raise BadMessage('points', 'desired_state needs exactly one point, got '
                                 f'{len(msg.points)}')
            point = msg.points[0]
            names = list(msg.joint_names)
            if len(point.accelerations) != len(names) or len(set(names)) != len(names):
                raise BadMessage('lengths', 'desired_state needs one acceleration per joint '
                                 'name, names unique')
            index = {n: i for i, n in enumerate(names)}
            missing = [j for j in model.joint_names if j not in index]
            if missing:
                raise BadMessage('missing', f'desired_state lacks joints {", ".join(missing)}')
            qdd = np.array([point.accelerations[index[j]] for j in model.joint_names])
            if not np.all(np.isfinite(qdd)):
                raise BadMessage('non-finite', 'desired_state has non-finite accelerations')
        except BadMessage as e:
            self._warn(f'dropped desired_state: {e}', 'desired ' + e.kind)
            return
        self.desired = (qdd, self.get_clock().now().nanoseconds)

    def _on_timer(self):
        if self.latest is not None:
            self._publish(*self.latest)

    # --- outputs ------------------------------------------------------------------------------
    def _publish(self, q, qd, effort, stamp, received=None):
        model = self.source.model
        rates = qd if qd is not None else np.zeros(model.n)
        g = None
        if self.mode == 'gravity_compensation' or 'gravity_torques' in self.outputs:
            g = gravity_torques(model, q)              # once, for the command and the topic
        if self.mode != 'none' and self.command_index is not None:
            if self.mode == 'gravity_compensation':
                tau = g
                if self.friction and qd is not None:
                    tau = tau + model.viscous * qd + model.coulomb * np.sign(qd)
            else:
                qdd = np.zeros(model.n)
                if self.desired is not None:
                    age = self.get_clock().now().nanoseconds - self.desired[1]
                    if age <= self.desired_timeout * 1e9:
                        qdd = self.desired[0]
                    else:
                        self._warn('inverse_dynamics: no fresh desired_state, using zero '
                                   'accelerations')
                tau = inverse_dynamics(model, q, rates, qdd, friction=self.friction)
            if self.clamp:
                tau = clamp_efforts(model, tau, self.throttle)
            self.command_pub.publish(vector_message(tau[self.command_index]))
            if self.report_latency and received:
                self.latency_pub.publish(Float64(data=(time.time_ns() - received) * 1e-6))
        outputs = self.outputs
        if 'gravity_torques' in outputs:
            self.pubs['gravity_torques'].publish(vector_message(g))
        if 'bias_forces' in outputs and qd is not None:
            self.pubs['bias_forces'].publish(vector_message(bias_forces(model, q, qd)))
        if 'inertia_matrix' in outputs:
            self.pubs['inertia_matrix'].publish(matrix_message(inertia_matrix(model, q)))
        if 'forward_dynamics' in outputs and qd is not None and effort is not None:
            try:
                qdd = forward_dynamics(model, q, qd, effort, method=self.forward_method)
            except SingularInertiaError as e:
                self._warn(f'forward_dynamics: {e}', 'singular')
                return
            msg = JointTrajectory()
            msg.header.stamp = stamp
            msg.joint_names = list(model.joint_names)
            msg.points = [JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(),
                                               accelerations=qdd.tolist(),
                                               effort=effort.tolist())]
            self.pubs['forward_dynamics'].publish(msg)


def main(args=None):
    """Console script ``dynamics_node``."""
    spin(DynamicsNode, args)
