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
``trajectory_node``: feed-forward efforts of a trajectory, streamed with computed torque.

Subscribes ``trajectory_topic`` (default ``joint_trajectory``, relative like every name here:
trajectory_msgs/JointTrajectory; every joint of the model, by
name; ``time_from_start`` strictly increasing; positions within the URDF limits).  Velocities and
accelerations the message leaves out come from a cubic spline through the positions (clamped: at
rest at both ends).  Then:

* ``~/trajectory_with_efforts``: the trajectory back, ``effort`` of every point filled with the
  inverse dynamics of that point (one batched call, in the message's joint order), stamped with
  when it starts (the stamp given, or the time it arrived if that was zero or already past);
* ``command_topic`` (Float64MultiArray, ``command_joints`` order, given on ``~/command_joints``
  and checked against the controller's ``joints`` as dynamics_node does) while it runs, and
  holding the last point after: the desired state interpolated (cubic Hermite on positions and
  velocities) and, with ``feedback``, computed torque on each measured ``joint_states`` as it
  arrives (no
  timer between the state and the command; joint states merged by name across publishers, as
  dynamics_node) ``tau = M(q) (qdd_d + kp e + kd e') + h(q, qd)``;
  without feedback, ``tau = ID(q_d, qd_d, qdd_d)`` at ``rate`` Hz.  Joint states queue at most
  ``state_queue`` deep (default 1: a controller that falls behind acts on the newest state).  With
  ``friction_compensation``, ``Fv qd + Fc s(qd_d) + Fo`` (the model's law): Coulomb friction on the
  *desired* velocity, which switches only at turning points (on the measured one, switching with
  the loop's delay, it shook a 0.0004 kg m^2 wrist joint loose).  With ``clamp_efforts``
  (default), commands are clamped to the URDF effort limits, with a throttled warning naming the
  joints: a controller starved of CPU must not ask for torques no drive gives (the efforts of
  ``~/trajectory_with_efforts`` are not clamped: they are the dynamics of the plan);
* ``desired_state`` at ``rate`` Hz: the desired point (JointTrajectory, one point with positions,
  velocities, accelerations), which dynamics_node uses in its ``inverse_dynamics`` mode.

A trajectory starts at its header stamp (now if zero); one that arrives after its stamp starts
now, from its first point, with a warning (the points already due would jump the robot).  A new
trajectory replaces the running one; an empty one (no points) stops the commands.

With ``external_torques``, the momentum observer reads every joint state before the command is
computed from it (``~/external_torques``, ``~/contact_wrench``, ``~/contact``, as dynamics_node:
:mod:`.nodes.contact`).  On a collision, from the state that raised its level, the running
trajectory is abandoned (said in the log, on ``~/reaction`` and at ERROR in ``/diagnostics``) and
the commands are ``collision_reaction``'s (:mod:`..contact.reaction`: a damped stop by default) on
every state; a trajectory that arrives meanwhile is refused, saying why.  ``~/rearm`` ends the
reaction: the node then holds the arm where it is (computed torque on that one point) until a new
trajectory.
"""

import time

import numpy as np
from rclpy.time import Time
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ._parameters import finite_positive, Param
from .commanding import CommandingNode
from .commands import COMMAND_PARAMS
from .contact import CONTACT_PARAMS
from .diagnostics import stream_values, stream_warnings, WARN
from .joint_states import JOINT_STATE_PARAMS, joint_states_qos
from .lifecycle import MANAGED_PARAM
from .model_source import MODEL_PARAMS, NO_MODEL, PAYLOAD_PARAMS
from .process import spin
from ..runtime.follower import Follower, Plan
from ..runtime.refused import BadMessage


PARAMS = (MANAGED_PARAM,) + MODEL_PARAMS + PAYLOAD_PARAMS + JOINT_STATE_PARAMS + \
    COMMAND_PARAMS + CONTACT_PARAMS + (
    Param('trajectory_topic', 'joint_trajectory', 'trajectory_msgs/JointTrajectory to follow',
          read_only=True),
    Param('rate', 500.0, 'command rate in Hz (feed-forward) and of desired_state',
          finite_positive, read_only=True, low=1.0, high=10000.0),
    Param('feedback', True, 'computed torque on the measured joint_states (else feed-forward '
          'only)'),
    Param('kp', [400.0], 'position gains (1/s^2): one, or one per joint'),
    Param('kd', [40.0], 'velocity gains (1/s): one, or one per joint'),
    Param('friction_compensation', True, 'add the URDF joint friction to the commands'),
)


class TrajectoryNode(CommandingNode):
    """
    Feed-forward and computed-torque streaming of joint trajectories (see module).

    Managed (``managed:=true``, :mod:`.lifecycle`): configure loads the model, activate takes
    trajectories and joint states and starts commanding (behind the controller check),
    deactivate stops at once and drops the trajectory in progress.  What it shares with
    dynamics_node is :mod:`.commanding`'s.
    """

    def __init__(self, node_name='trajectory_node', **kwargs):
        super().__init__(node_name, PARAMS, {'kp': self._check_gains, 'kd': self._check_gains},
                         **kwargs)
        self.follower = Follower()
        self.parameters_changed(set())
        self.efforts_pub = self.create_publisher(JointTrajectory, '~/trajectory_with_efforts', 10)
        self.desired_pub = self.create_publisher(JointTrajectory, 'desired_state', 10)
        self.serve('trajectory streaming')

    @property
    def plan(self):
        """Return the trajectory followed (:class:`..runtime.follower.Plan`), or None."""
        return self.follower.plan

    @property
    def start_ns(self):
        """Return the node's clock time (ns) of the trajectory's start, or None: none yet."""
        return self.follower.start_ns

    @property
    def measured(self):
        """Return the latest measured ``(q, qd)`` (model order), or None."""
        return self.follower.measured

    # --- lifecycle (see .lifecycle and .commanding) -------------------------------------------
    def activate(self):
        params = self.params
        self.inputs = [
            self.create_subscription(JointTrajectory, params.trajectory_topic,
                                     self._on_trajectory, 10),
            # raw: the states' bytes, read by JointStates.read_serialized (no message built)
            self.create_subscription(JointState, 'joint_states', self._on_state,
                                     joint_states_qos(params), raw=True)]
        self.set_timer(params.rate, self._on_timer)
        self.command.enable()

    def stopped(self):
        if self.plan is not None:
            self.log.info('deactivated: the trajectory in progress is dropped')
        self.follower.forget()

    def dropped(self):
        self.follower.forget()

    def clock_jumped(self, delta_ns):
        self.follower.clock_jumped(delta_ns)    # the plan keeps its place on the new clock

    # --- parameters (applied once accepted; the shared ones by .commanding) -------------------
    def _check_gains(self, value):
        model = getattr(self, 'source', None) and self.source.model
        gains = np.asarray(value, dtype=float)
        if gains.ndim != 1 or len(gains) == 0 or not np.all(np.isfinite(gains)) or \
                np.any(gains < 0):
            return 'must be finite numbers >= 0'
        if model is not None and len(gains) not in (1, model.n):
            return f'needs 1 or {model.n} values'
        return None

    def parameters_changed(self, changed):
        follower, params = self.follower, self.params
        follower.kp = np.asarray(params.kp, dtype=float)
        follower.kd = np.asarray(params.kd, dtype=float)
        follower.feedback, follower.friction = params.feedback, params.friction_compensation

    # --- model and inputs ---------------------------------------------------------------------
    def model_changed(self, model, previous):
        if previous is None or previous.joint_names != model.joint_names:
            self.follower.forget()
        else:                                   # a running trajectory survives a same-joint
            self.follower.measured = None       # reload

    def _on_state(self, data):
        if self.states is None or not self.inputs:   # no model, or deactivated (taken before)
            return
        began = time.perf_counter_ns()
        self.read += 1
        state = self.read_state(data, self.now_ns())
        if state is None:                       # another robot's joints, or refused (said)
            return
        q, qd, effort, stamp = state
        # observed before its command: a collision's reaction starts on the state that raised it
        observed = self.contact.observe(q, qd, effort, stamp)
        feedback = self.params.feedback
        if self.measured is None and feedback:
            self.log.info('joint_states received: the loop is closed (computed torque on the '
                          'measured state)')
        self.follower.measure(q, qd, stamp)
        if feedback or self.reacting():
            # the desired state at the time of the measurement, not of the computation
            if self._command(stamp or None):
                self.window.record(time.perf_counter_ns() - began)
        self.contact.publish(observed)

    def _on_trajectory(self, msg):
        if not self.inputs:                 # deactivated: a message taken before it
            return
        model = self.source.model
        if model is None:
            self.throttle.warn('no model', f'trajectory dropped: {NO_MODEL}')
            return
        if self.reacting():
            self.throttle.warn('trajectory reacting', 'trajectory refused: a collision reaction '
                               f'is in force ({self.reaction.describe()}); call ~/rearm first')
            return
        if not msg.points:
            self.follower.stop()
            self.log.info('empty trajectory: stopped')
            return
        try:
            plan = Plan(model, msg)
        except BadMessage as e:
            self.throttle.warn('trajectory ' + e.kind, f'trajectory rejected: {e}')
            return
        tau = self.kernels.dynamics.inverse_dynamics(
            model, plan.q, plan.qd, plan.qdd, friction=self.params.friction_compensation)
        out = JointTrajectory(header=msg.header, joint_names=plan.names)
        inverse = np.argsort(plan.order)
        for i, point in enumerate(msg.points):
            filled = JointTrajectoryPoint(
                positions=list(point.positions), velocities=plan.qd[i][inverse].tolist(),
                accelerations=plan.qdd[i][inverse].tolist(), effort=tau[i][inverse].tolist(),
                time_from_start=point.time_from_start)
            out.points.append(filled)
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        late = self.follower.follow(plan, stamp, self.now_ns())
        if late:            # starting from where the plan already is would jump the robot to it
            self.throttle.warn('late', f'trajectory arrived {late:.3f} s after its start stamp: '
                               'starting it now, from its first point')
        out.header.stamp = Time(nanoseconds=self.start_ns).to_msg()
        self.efforts_pub.publish(out)
        self.log.info(f'following a trajectory of {len(msg.points)} points over '
                      f'{plan.t[-1]:.3g} s')

    # --- output -------------------------------------------------------------------------------
    def _on_timer(self):
        feedback = self.params.feedback
        if self.reacting():                 # the reaction's commands come with each state
            return
        if not feedback or self.measured is None:
            if feedback and self.plan is not None:
                self.throttle.warn('no state', 'feedback on but no joint_states yet: '
                                   'feed-forward only')
            self._command()
        self._publish_desired()

    def collided(self, why):
        # where the plan was at the state that raised it
        abandoned = self.follower.abandon(self.reaction.since)
        if abandoned:
            self.log.error(f'{abandoned}: {why}')

    def rearmed(self):
        if self.follower.hold(self.now_ns()):     # where the reaction left the arm
            self.log.info('re-armed: holding the arm where it is until a new trajectory')

    def reaction_note(self):
        return self.follower.abandoned and f'; {self.follower.abandoned}'

    def _command(self, at_ns=None):
        """Command the plan at ``at_ns`` (now); return whether a command left."""
        model, follower = self.source.model, self.follower
        if model is None or self.command.index is None:
            return False
        if self.reacting():                 # from the measured state; none yet: nothing
            return follower.measured is not None and self.command.publish(
                self.reaction_torques(*follower.measured, follower.measured_at))
        tau = follower.efforts(self.kernels.dynamics, model, at_ns or self.now_ns())
        return tau is not None and self.command.publish(tau)

    def _diagnose(self, report):
        seconds, latencies, new = self.counts()
        plan = self.plan
        report.add('trajectory', self.follower.describe(self.now_ns()))
        report.add('feedback', self.params.feedback)
        self.kernels.say(report)
        stream_values(report, seconds, new, latencies, 'state callback to command')
        level, text = self.command.state()
        report.add('controller', text)
        contact = self.contact_values(report)
        if not self.say_state(report):
            return
        self.say_contact(report, contact)
        if self.source.model is None:
            report.say(WARN, NO_MODEL)
            return
        report.say(level, text if level or plan is not None else 'no trajectory: no commands')
        if plan is not None and self.params.feedback and new['read'] == 0:
            report.say(WARN, 'feedback on but no joint_states: feed-forward only')
        stream_warnings(report, new)

    def _publish_desired(self):
        model = self.source.model
        if self.plan is None or model is None:
            return
        now = self.get_clock().now()
        q_d, qd_d, qdd_d = self.follower.desired(now.nanoseconds)
        desired = JointTrajectory(joint_names=list(model.joint_names))
        desired.header.stamp = now.to_msg()
        desired.points = [JointTrajectoryPoint(positions=q_d.tolist(), velocities=qd_d.tolist(),
                                               accelerations=qdd_d.tolist())]
        self.desired_pub.publish(desired)


def main(args=None):
    """Console script ``trajectory_node``."""
    spin(TrajectoryNode, args)


if __name__ == '__main__':
    main()
