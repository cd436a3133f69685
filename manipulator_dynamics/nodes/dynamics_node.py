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
``dynamics_node``: effort commands for ros2_control and the robot's dynamics, live.

Subscribes ``joint_states`` (merged by joint name across publishers; other robots' joints
ignored; sensor-data QoS, so reliable and best-effort publishers are both heard) and, in mode
``inverse_dynamics``, ``desired_state`` (trajectory_msgs/JointTrajectory, one point with the
desired accelerations, as trajectory_node publishes it).  Every name is relative: a namespace or
a remap moves them all.  Publishes, at each joint state (or at ``rate`` Hz, from the latest one):

* ``command_topic`` (std_msgs/Float64MultiArray, data only), in the order of ``command_joints``,
  which ``~/command_joints`` (transient local) gives: the efforts for ros2_control's
  ``forward_command_controller`` with ``interface_name: effort``: ``g(q)`` in mode
  ``gravity_compensation``, ``M(q) qdd_d + h(q, qd)`` in mode ``inverse_dynamics``, nothing in
  mode ``none``; plus ``Fv qd + Fc s(qd) + Fo`` with ``friction_compensation``; clamped to the URDF
  effort limits (a throttled warning says so).  Nothing is sent before the controller's own
  ``joints`` parameter has answered and equals the order (see :class:`CommandOutput`);
* ``~/inertia_matrix`` (Float64MultiArray, 2-D layout), ``~/bias_forces`` and
  ``~/gravity_torques`` (Float64MultiArray) in the model's joint order, which ``~/joint_names``
  (std_msgs/String, transient local) gives;
* ``~/forward_dynamics`` (trajectory_msgs/JointTrajectory, one point): the joint accelerations that
  the measured efforts produce, in ``accelerations``, with the state they were computed at
  (``positions``, ``velocities``, ``effort``) and the joint names;
* with ``external_torques``, the momentum observer's ``~/external_torques``, ``~/contact_wrench``
  and ``~/contact``, and the service ``~/rearm`` (:mod:`.nodes.contact`); on a collision the
  commands become ``collision_reaction``'s (:mod:`..contact.reaction`: a damped stop by
  default) from the state that raised it until ``~/rearm``, a desired_state refused meanwhile,
  and ``~/reaction`` (std_msgs/String, transient local) says which and why;
* ``~/payload`` (the load in use) and the services ``~/estimate_payload`` (a load picked up,
  estimated from the last ``payload_window`` seconds of states and applied) and
  ``~/clear_payload`` (:mod:`.nodes.payload`).
"""

import time

from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ._parameters import finite_positive, one_of, Param, zero_or_positive
from .commanding import CommandingNode
from .commands import COMMAND_PARAMS
from .contact import CONTACT_PARAMS
from .diagnostics import stream_values, stream_warnings, WARN
from .joint_states import joint_state_params, joint_states_qos, queued
from .lifecycle import MANAGED_PARAM
from .messages import matrix_message, names_message, time_message, vector_message
from .model_source import MODEL_PARAMS, NO_MODEL, PAYLOAD_PARAMS
from .payload import PAYLOAD_ESTIMATE_PARAMS, PayloadOutput
from .process import spin, with_receipt_time
from .qos import LATCHED
from ..rigid.crba import inertia_matrix
from ..rigid.forward import forward_dynamics
from ..rigid.rnea import bias_forces
from ..rigid.status import OK, SingularInertiaError
from ..runtime.commands import CompiledStep, Desired, Law, MODES
from ..runtime.refused import BadMessage
from ..wire import NOT_THIS_LAYOUT

OUTPUTS = ('inertia_matrix', 'bias_forces', 'gravity_torques', 'forward_dynamics')


def _check_outputs(value):
    unknown = sorted(set(value) - set(OUTPUTS) - {''})
    return f'unknown: {", ".join(unknown)} (known: {", ".join(OUTPUTS)})' if unknown else None


#: joint_states kept while the node is busy: the commands act on the newest of them, the
#: momentum observer reads each in turn (it integrates the efforts over every interval).
STATE_QUEUE = 100
#: A state that waited longer than this since its DDS receipt (ns) may have others queued behind
#: it: only then is the queue looked at (1.2 us of an 11 us callback, benchmarks/
#: bench_state_path.py).  A node keeping up at 1 kHz takes its states 30-190 us after their
#: receipt; one that fell behind by a state period has waited 1000.  A state that came sooner is
#: taken by the executor next, and observed as every state is.
WAITED_NS = 250_000

PARAMS = (MANAGED_PARAM,) + MODEL_PARAMS + PAYLOAD_PARAMS + PAYLOAD_ESTIMATE_PARAMS + \
    joint_state_params(STATE_QUEUE, 'the commands act on the newest, the observer '
                       '(external_torques) reads each in turn') + COMMAND_PARAMS + \
    CONTACT_PARAMS + (
    Param('mode', 'gravity_compensation', 'gravity_compensation | inverse_dynamics | none',
          one_of(*MODES)),
    Param('friction_compensation', False, "add the joints' friction Fv qd + Fc s(qd) + Fo (the "
          "model's law) to the commands"),
    Param('rate', 0.0, 'publish rate in Hz; 0: at each joint state', zero_or_positive,
          low=0.0, high=10000.0),
    Param('desired_timeout', 0.2, 'in inverse_dynamics mode, desired accelerations older than '
          'this (s) count as 0', finite_positive, low=0.0, high=3600.0),
    Param('outputs', list(OUTPUTS), 'which ~/ topics to publish: ' + ', '.join(OUTPUTS)
          + ' ([""]: none)', _check_outputs),
    Param('forward_method', 'auto', 'forward dynamics method: auto | udut | cholesky',
          one_of('auto', 'udut', 'cholesky')),
    Param('report_latency', False, 'publish ~/command_latency: ms from the DDS receipt of each '
          'joint state to the publication of its command (for benchmarks)'),
)


class DynamicsNode(CommandingNode):
    """
    Gravity compensation / inverse dynamics efforts and the dynamics topics (see module).

    Managed (``managed:=true``, :mod:`.lifecycle`): configure loads the model, activate
    subscribes to the joint states and starts commanding (behind the controller check),
    deactivate stops at once.  What it shares with trajectory_node is :mod:`.commanding`'s.
    """

    def __init__(self, node_name='dynamics_node', **kwargs):
        super().__init__(node_name, PARAMS, **kwargs)
        self.outputs = set(self.params.outputs) - {''}
        self.pubs = {
            'inertia_matrix': self.create_publisher(Float64MultiArray, '~/inertia_matrix', 10),
            'bias_forces': self.create_publisher(Float64MultiArray, '~/bias_forces', 10),
            'gravity_torques': self.create_publisher(Float64MultiArray, '~/gravity_torques', 10),
            'forward_dynamics': self.create_publisher(JointTrajectory, '~/forward_dynamics', 10),
        }
        self.names_pub = self.create_publisher(String, '~/joint_names', LATCHED)
        self.latency_pub = self.create_publisher(Float64, '~/command_latency', 100)
        self.latest = None
        self.law = Law(self.params.mode, self.params.friction_compensation)
        self.desired = Desired(self.params.desired_timeout, self._warn)
        self._step = None              # the compiled step (_plan), made at the first state
        self.state_sub = self.desired_sub = None
        self.superseded = 0                     # states read but not commanded (a newer one was)
        self.payload = PayloadOutput(self, self.params, self.source)
        self.payload.publish()
        self.serve('dynamics and effort commands')

    # --- lifecycle (see .lifecycle and .commanding) -------------------------------------------
    def activate(self):
        # the model (loaded and its kernels warmed up) before the subscriptions: a node that
        # says it listens must be ready to serve, or the first states wait and go stale
        # raw: the states' bytes, read by JointStates.read_serialized (no message built)
        self.state_sub = self.create_subscription(
            JointState, 'joint_states', with_receipt_time(self._on_state),
            joint_states_qos(self.params), raw=True)
        self.desired_sub = self.create_subscription(JointTrajectory, 'desired_state',
                                                    self._on_desired, 10)
        self.inputs = [self.state_sub, self.desired_sub]
        self.set_timer(self.params.rate, self._on_timer)
        self.command.enable()

    def stopped(self):
        self.state_sub = self.desired_sub = None
        self.latest = None
        self.desired.clear()
        self.payload.reset()

    def dropped(self):
        self.latest = None
        self.desired.clear()

    def clock_jumped(self, delta_ns):
        self.latest = None
        self.desired.clear()
        self.payload.reset()

    # --- parameters (applied once accepted; the shared ones by .commanding) -------------------
    def parameters_changed(self, changed):
        self._step = None                       # made again from the parameters as they are
        self.law = Law(self.params.mode, self.params.friction_compensation)
        self.desired.timeout = self.params.desired_timeout
        if 'outputs' in changed:
            self.outputs = set(self.params.outputs) - {''}
        if 'rate' in changed and self.state_sub is not None:
            self.set_timer(self.params.rate, self._on_timer)
        if changed & {'payload', 'payload_link'} and self.source.loaded is None:
            self.payload.publish()

    # --- model --------------------------------------------------------------------------------
    #: ~/forward_dynamics runs the forward group's kernels, ~/estimate_payload the
    #: base-parameters group's (the regressor, the identification's filter).
    GROUPS = CommandingNode.GROUPS + ('forward', 'base-parameters')
    FORWARD = True

    def model_changed(self, model, previous):
        self.payload.set_model(model)
        self.latest = None
        self.desired.clear()
        self._step = None
        self.names_pub.publish(names_message(model.joint_names))

    # --- inputs -------------------------------------------------------------------------------
    def _warn(self, text, kind=None):
        self.throttle.warn(kind or text, text)

    def _on_state(self, data, info):
        """
        Take this state and every one queued behind it; command from the newest.

        A node that fell behind finds several states waiting (``state_queue`` deep): each is
        merged in turn, the command is computed once, from the newest, and then the observer
        reads each (it needs every interval's efforts).  The executor then finds none left.
        The queue is looked at where this state waited (:data:`WAITED_NS`), or where the
        middleware gives no receipt time.
        """
        subscription = self.state_sub
        if subscription is None:    # deactivated: a state the executor had taken before it
            return
        if self.states is None or self.source.model is None:
            self._warn(f'joint_states received but {NO_MODEL}')
            return
        received = info['received_timestamp']
        behind = queued(subscription, self.params.state_queue) \
            if not received or time.time_ns() - received > WAITED_NS else ()
        now = self.now_ns()
        if not behind:                          # the 1 kHz path: nobody waiting
            if self._compiled_step(data, received, now):
                return
            read = [(self.read_state(data, now), info)]
        else:
            # each read at the time it arrived (an unstamped state's time; the staleness
            # check): its age since the DDS receipt (system clock; none where the middleware
            # gives none); the newest, which the command comes from, now, as one taken alone
            wall = time.time_ns()
            waiting = [(data, info)] + behind
            read = [(self.read_state(d, now - max(0, wall - (i['received_timestamp'] or wall))
                                     if k < len(waiting) - 1 else now), i)
                    for k, (d, i) in enumerate(waiting)]
        self.read += len(read)
        read = [(state, i) for state, i in read if state is not None]
        if not read:                            # dropped (said), or another robot's joints
            return
        self.superseded += len(read) - 1
        self.latest, info = read[-1]            # q, qd, effort, stamp (ns)
        guarded = self.guarded()    # a collision's reaction starts on the state that raised
        observed = [self.contact.observe(*state, keep=True) for state, _ in read] \
            if guarded else ()
        if self.params.rate == 0:
            self._publish(*self.latest, received=info['received_timestamp'])
        for observation in observed:            # after the command: it never waits for these
            self.contact.publish(observation)
        for state, _ in read:
            if not guarded:
                self.contact.on_state(*state)
            self.payload.on_state(*state)

    def _compiled_step(self, data, received, now):
        """
        Take one state and command from it in one compiled call; False: the general path's.

        A driver's state at 1 kHz (of the layout last read, naming every joint, its arrays one
        block: :meth:`JointStates.front`), commanded at each state by
        :class:`..runtime.commands.CompiledStep`: its bytes checked, the law and the command in
        the controller's order, within the effort limits and in the bytes it is published as,
        in one call.  The merge (:meth:`JointStates.take`), the controller's check, the counts
        and the outputs are the general path's own; the merge comes after the command is sent
        (nothing before the send reads it).  Whatever the step does not accept (another
        layout, a value not finite, a stamp out of order or stale, an effort beyond its limit:
        the general path says which and clamps) takes the general path.
        """
        command, states = self.command, self.states
        step = self._step
        if step is None:
            step = self._step = self._plan(states.front())
            if step is None:
                return False
        if command.mismatch is not None or self.reacting():     # the reaction's: the general
            return False                                         # path's commands
        status, stamp, state = step.take(
            data, self.desired.at(now, step.shape[1]) if step.takes_desired else None,
            states.newest, now)
        if status != OK:
            if status == NOT_THIS_LAYOUT:       # the general path reads it, and puts it first
                self._step = None
            return False
        filled = step.shape[0]
        guarded = self.guarded()
        if guarded:         # observed before its command: a collision's reaction starts on it
            self.latest = latest = states.take(state[0], state[1] if filled > 1 else None,
                                               state[2] if filled > 2 else None, stamp)
            observed = self.contact.observe(*latest)
        if self.reacting():                     # it raised the collision level: the reaction
            if command.publish(self.reaction_torques(latest[0], latest[1], stamp)):
                self._record(received)
        elif command.may_send():                # the command first: the merge never delays it
            command.send_buffer()
            self._record(received)
        self.read += 1
        if not guarded:
            self.latest = latest = states.take(state[0], state[1] if filled > 1 else None,
                                               state[2] if filled > 2 else None, stamp)
        step.renew()                            # the next state's arrays
        if self.outputs:
            self._outputs(*latest, step.tau if self.law.gravity else None)
        if guarded:
            self.contact.publish(observed)
        else:
            self.contact.on_state(*latest)
        self.payload.on_state(*latest)
        return True

    def _plan(self, wire):
        """
        Return the compiled step for the layout ``wire``, or None: the general path commands.

        Made for the layout (:meth:`JointStates.front`), the model, the command's order, limits
        and buffer and the parameters as they are, and kept until one of them changes (a new
        model, any parameter: :meth:`model_changed`, :meth:`parameters_changed`; a state of
        another layout).  None where the step does not command (a timer's rate, ``mode: none``,
        a command not published as bytes, kernels not ready) or reads no layout yet.
        """
        if self.params.rate or not self.kernels.dynamics.ready:
            return None
        command = self.command
        return CompiledStep.plan(self.source.model, wire, self.law, command.index,
                                 command.limits(), command.buffer, self.states.stale_after)

    def _on_desired(self, msg):
        model = self.source.model
        if model is None or self.desired_sub is None:      # no model, or deactivated
            return
        try:
            if self.reacting():
                raise BadMessage('reacting', 'a collision reaction is in force '
                                 f'({self.reaction.describe()}); call ~/rearm first')
            self.desired.take(model, msg, self.now_ns())
        except BadMessage as e:
            self._warn(f'dropped desired_state: {e}', 'desired ' + e.kind)

    def _on_timer(self):
        if self.latest is not None:
            self._publish(*self.latest)

    # --- /diagnostics ----------------------------------------------------------------------------
    def _diagnose(self, report):
        seconds, latencies, new = self.counts(superseded=self.superseded)
        report.add('mode', self.params.mode)
        self.kernels.say(report)
        stream_values(report, seconds, new, latencies, 'DDS receipt to command')
        level, text = self.command.state()
        report.add('controller', text)
        contact = self.contact_values(report)
        if not self.say_state(report):
            return
        self.say_contact(report, contact)
        if self.source.model is None:
            report.say(WARN, NO_MODEL)
            return
        if self.params.mode == 'none':
            report.say(0, 'commands off (mode none)')
        else:
            report.say(level, text)
        if new['read'] == 0:
            report.say(WARN, 'waiting for joint_states')
        stream_warnings(report, new)

    # --- outputs ------------------------------------------------------------------------------
    def _publish(self, q, qd, effort, stamp, received=None):
        model, law, dynamics = self.source.model, self.law, self.kernels.dynamics
        g = None
        if law.gravity or 'gravity_torques' in self.outputs:
            g = dynamics.gravity_torques(model, q)     # once, for the command and the topic
        if law.commands and self.command.index is not None and self.command.mismatch is None:
            if self.reacting():
                tau = self.reaction_torques(q, qd, stamp)
            else:
                tau = law.efforts(dynamics, model, q, qd, self.desired.at(self.now_ns(), model.n)
                                  if law.desired else None, g)
            if self.command.publish(tau):
                self._record(received)
        self._outputs(q, qd, effort, stamp, g)

    def _record(self, received):
        """Count a command's latency from its state's DDS receipt (ns; 0: none given)."""
        if received:
            latency = time.time_ns() - received
            self.window.record(latency)
            if self.params.report_latency:
                self.latency_pub.publish(Float64(data=latency * 1e-6))

    def _outputs(self, q, qd, effort, stamp, g=None):
        """Publish the ``~/`` outputs of one state (``g``: its g(q), if computed already)."""
        model, params, dynamics = self.source.model, self.params, self.kernels.dynamics
        outputs = self.outputs
        if 'gravity_torques' in outputs:
            if g is None:
                g = dynamics.gravity_torques(model, q)
            self.pubs['gravity_torques'].publish(vector_message(g))
        if not dynamics.ready:          # the other outputs once the kernels are (.kernels)
            return
        if 'bias_forces' in outputs and qd is not None:
            self.pubs['bias_forces'].publish(vector_message(bias_forces(model, q, qd)))
        if 'inertia_matrix' in outputs:
            self.pubs['inertia_matrix'].publish(matrix_message(inertia_matrix(model, q)))
        if 'forward_dynamics' in outputs and qd is not None and effort is not None:
            try:
                qdd = forward_dynamics(model, q, qd, effort, method=params.forward_method)
            except SingularInertiaError as e:
                self._warn(f'forward_dynamics: {e}', 'singular')
                return
            msg = JointTrajectory()
            msg.header.stamp = time_message(stamp)
            msg.joint_names = list(model.joint_names)
            msg.points = [JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(),
                                               accelerations=qdd.tolist(),
                                               effort=effort.tolist())]
            self.pubs['forward_dynamics'].publish(msg)


def main(args=None):
    """Console script ``dynamics_node``."""
    spin(DynamicsNode, args)


if __name__ == '__main__':
    main()
