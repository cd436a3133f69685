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
Effort commands in the controller's joint order, sent once the controller agrees.

What the command is (the law, the order, the limits) is :mod:`..runtime.commands`'; this is
its publisher, its parameters and the question to the controller.
"""

import time

import numpy as np
from std_msgs.msg import Float64MultiArray, String

from ._parameters import Param
from .logs import QuickLogger, Throttled
from .messages import names_message
from .model_source import NO_MODEL
from .qos import LATCHED
from ..names import JointNamesError
from ..runtime.commands import check_command_joints, clamp_efforts, command_order
from ..wire import float64_array, float64_serialiser


def command_joints_check(node):
    """Check ``command_joints`` values for ``node``: against its model once it has one."""
    def check(names):
        source = getattr(node, 'source', None)          # none yet while parameters declare
        return check_command_joints(source and source.model, names)
    return check


COMMAND_PARAMS = (
    Param('command_topic', 'effort_controller/commands', 'effort command topic of the '
          'controller (std_msgs/Float64MultiArray), relative to the namespace', read_only=True),
    Param('command_joints', [''], "joint order of the commands: the controller's 'joints' "
          "(empty: the model's joints)"),
    Param('controller_name', '', "controller node whose 'joints' parameter the command order "
          "must match, checked while it answers (empty: the command topic's namespace, e.g. "
          "effort_controller; '-': do not check)", read_only=True),
    Param('clamp_efforts', True, 'clamp the commands to the URDF effort limits (a throttled '
          'warning names the joints)'),
)


def controller_of(topic, namespace, controller_name=''):
    """
    Return the node name of the controller that takes the command ``topic``, or None (no check).

    A ros2_control controller is a node named after it, and subscribes ``<name>/commands``:
    ``controller_name`` if given (``'-'``: none; relative to the node's namespace), else the
    namespace of ``topic`` (resolved, remaps applied: ``/robot1/effort_controller/commands`` ->
    ``/robot1/effort_controller``), unless that is the node's own ``namespace``.
    """
    if controller_name:
        return None if controller_name == '-' else controller_name
    parent = topic.rsplit('/', 1)[0]
    return None if parent in ('', namespace.rstrip('/')) else parent


class CommandOutput:
    """
    Effort commands in the controller's joint order, sent only once the controller agrees.

    ``params`` holds :data:`COMMAND_PARAMS`.  The order of the commands is published on
    ``~/command_joints`` (std_msgs/String, transient local) and logged.  Where a controller is
    named (by default: a ros2_control controller is a node named after the command topic's
    namespace, e.g. ``effort_controller``), not one command leaves before that controller's
    ``joints`` parameter has answered and equals the command order, element for element (so its
    size too): until then :meth:`publish` sends nothing and a throttled warning says what it waits
    for; on a mismatch an error names both orders.  The controller is asked again every
    ``ASK_PERIOD`` seconds while the node runs (a controller gone, or answering otherwise, stops
    the commands), on every new model or ``command_joints``, and whenever a subscription joins or
    joins the command topic (a controller restarting: DDS's count of the subscriptions ever
    matched is read before every command, so none reaches a subscriber that came after the
    question): commands stop from that moment until the answer matches again.
    ``controller_name: '-'`` is the explicit opt-out: commands go out unchecked.

    :meth:`enable` (a managed node's activation) and :meth:`disable` (its deactivation) gate it
    all: disabled, not one command leaves; enabled again, the controller is asked afresh first.
    ``sent`` counts the commands sent (for /diagnostics).
    """

    ASK_PERIOD = 0.5          # s between questions to the controller (a lost answer: asked again)

    def __init__(self, node, params):
        from rcl_interfaces.srv import GetParameters

        self.node, self.params = node, params
        self.log = QuickLogger(node)
        self.throttle = Throttled(node, period=2.0)
        self.pub = node.create_publisher(Float64MultiArray, params.command_topic, 10)
        self.controller = controller_of(self.pub.topic_name, node.get_namespace(),
                                        params.controller_name)
        self._matched = matched_subscriptions(self.pub)
        self._asked_matched = 0               # subscriptions ever matched when last asked
        self.order_pub = node.create_publisher(String, '~/command_joints', LATCHED)
        self.index = self.names = None        # index: int64, as command_vector takes it
        self._unlimited = None                # limits() without clamp_efforts: none
        self._serialise = None                # command values -> what is published
        self.buffer = None                    # where a compiled call writes a command (float64,
        #                                       the command order; None: not published as bytes)
        self._in_order = False                # the command order is the model's
        self.mismatch = None                  # why commands are refused (error), or None
        self.ready = False                    # commands may leave
        self.enabled = False                  # until enable(): a node's activation
        self.sent = 0                         # commands sent, ever
        self.clamped = 0                      # of them, clamped to the effort limits
        self.model = None
        self.controller_joints = None         # the controller's latest answer (None: unknown)
        self._pending = self._asked_at = None
        self._joints_fault = None             # why command_joints do not fit the model
        self._waiting_since = time.monotonic()
        self._client = None
        if self.controller is not None:
            self._client = node.create_client(GetParameters, f'{self.controller}/get_parameters')
            # on the steady clock: under use_sim_time a paused or held simulation stops the
            # node's clock, and the question must still be asked
            from rclpy.clock import Clock, ClockType
            node.create_timer(self.ASK_PERIOD, self._ask,
                              clock=Clock(clock_type=ClockType.STEADY_TIME))

    def enable(self):
        """Let commands leave again, once the controller has answered afresh."""
        self.enabled = True
        self._forget('activated')

    def disable(self):
        """Not one more command leaves, from now on."""
        self.enabled = self.ready = False
        if self.controller is not None:
            self.controller_joints = None
            self._drop_pending()

    def state(self):
        """
        Return ``(level, text)``: whether commands leave, and if not what they wait for.

        ``level`` is 0 (commanding, or off by design), 1 (waiting) or 2 (refused: a fault),
        as diagnostic_msgs/DiagnosticStatus has them.
        """
        if not self.enabled:
            return 0, 'inactive: no commands'
        if self._joints_fault:
            return 2, f'no commands: command_joints: {self._joints_fault}'
        if self.index is None:
            return 1, f'no commands: {NO_MODEL}'
        if self.controller is None:
            return 0, 'commanding (controller unchecked)'
        if self.mismatch is not None:
            return 2, f'order mismatch: {self.mismatch}'
        if self.controller_joints is None:
            return 1, f'waiting for {self.controller.lstrip("/")}'
        return 0, 'commanding'

    def set_model(self, model):
        """Map the commands onto ``model`` (a new model, or new ``command_joints``; None: none)."""
        self._joints_fault = None
        self.model = model
        if model is None:
            self.index = None
        else:
            # unknown names: no commands until they are fixed (a new URDF without a configured
            # joint must not stop the node)
            try:
                self.index = command_order(model, self.params.command_joints)
            except JointNamesError as e:
                self.index, self._joints_fault = None, str(e)
                self.log.error(f'command_joints: {e}; no commands until they are fixed')
        self.names = None if self.index is None else [model.joint_names[i] for i in self.index]
        self._unlimited = None if model is None else np.full(model.n, np.inf)
        self._serialise = self.buffer = None
        if self.names is not None:
            # Data only, as forward_command_controller reads it (an empty layout is a flat array
            # by ROS's rules): a labelled dimension cost 8 us more per command to convert and
            # serialise at 1 kHz (bench_latency).  Published as its serialised bytes where the
            # middleware's serialisation allows it, else as a message.
            self._serialise = float64_serialiser(len(self.index)) or _as_message
            if self._serialise is not _as_message:
                self.buffer = self._serialise.values
            self._in_order = np.array_equal(self.index, np.arange(model.n))
            self.order_pub.publish(names_message(self.names))
            topic = self.pub.topic_name
            self.log.info(f'commands on {topic} in joint order [{", ".join(self.names)}]')
        self._forget('the command order changed')

    def _forget(self, why):
        """Stop commanding until the controller answers again (``why`` it must be asked)."""
        if self.controller is not None:
            if self.ready:
                self.log.info(f'{why}: commands stop until controller {self.controller} '
                              "confirms its 'joints'")
            self.controller_joints = None
            self._drop_pending()
            self._waiting_since = time.monotonic()
        self._compare()
        if self.controller is not None:
            self._ask()

    def _drop_pending(self):
        if self._pending is not None:
            self._client.remove_pending_request(self._pending)
            self._pending = None

    def _stop_for_a_new_subscriber(self):
        """
        Stop the commands where a subscriber matched since the last question; True if so.

        Before every command, and before the periodic question: that question counts the
        subscribers as asked, and a controller restarted just before it would otherwise get
        commands until its answer came.
        """
        if self.ready and self.controller is not None and \
                self._matched() > self._asked_matched:
            self._forget(f'a new subscriber on {self.pub.topic_name}')
            return True
        return False

    def _ask(self):
        if self._stop_for_a_new_subscriber():
            return                            # asked by the stop itself
        if self._pending is not None:
            if time.monotonic() - self._asked_at < 2 * self.ASK_PERIOD:
                return
            self._drop_pending()          # a response DDS dropped (sent before it matched)
        if not self._client.service_is_ready():
            if self.controller_joints is not None:
                self.log.warning(f'controller {self.controller} is gone: no commands until it '
                                 "answers for its 'joints' again")
                self.controller_joints = None
                self._compare()
            return
        from rcl_interfaces.srv import GetParameters
        self._asked_at = time.monotonic()
        self._asked_matched = self._matched()
        self._pending = self._client.call_async(GetParameters.Request(names=['joints']))
        self._pending.add_done_callback(self._answer)

    def _answer(self, future):
        if future is not self._pending:
            return                            # an answer to a question withdrawn since
        self._pending = None
        result = future.result()
        values = result.values if result is not None else []
        joints = list(values[0].string_array_value) if values else []
        if not joints:
            self.throttle.warn('no joints', f"controller {self.controller} has no 'joints' "
                               'parameter: no commands (controller_name: '
                               "'-' sends them unchecked)")
        if joints != self.controller_joints:
            self.controller_joints = joints or None
            self._compare()

    def _compare(self):
        if self.controller is None:
            self.mismatch, self.ready = None, self.enabled and self.index is not None
            return
        joints, was = self.controller_joints, self.mismatch
        self.mismatch = None
        if joints is not None and self.names is not None and joints != self.names:
            self.mismatch = (f"controller {self.controller}'s joints are [{', '.join(joints)}] "
                             f"but the commands' order is [{', '.join(self.names)}]: no commands "
                             "until command_joints is set to the controller's order")
            if self.mismatch != was:
                self.log.error(self.mismatch)
        ready = self.enabled and joints is not None and self.names is not None and \
            self.mismatch is None
        if ready and not self.ready:
            self.log.info(f'command order matches controller {self.controller}: commanding')
        self.ready = ready

    def publish(self, tau):
        """
        Send ``tau`` (model order) in the command order; False when nothing may be sent.

        With ``clamp_efforts`` what is sent is clamped to the URDF effort limits (counted in
        ``clamped``, the joints named in a throttled warning).
        """
        if not self.may_send():
            return False
        if self.params.clamp_efforts:
            wanted, tau = tau, clamp_efforts(self.model, tau, self.throttle)
            self.clamped += tau is not wanted
        self.send(tau if self._in_order else tau[self.index])
        return True

    def may_send(self):
        """
        Tell whether a command may leave now (the check before every one; :meth:`publish`).

        Not while the controller has not confirmed the order, nor once a subscriber matched
        since it last did (asked again); a throttled warning says what it waits for.
        """
        self._stop_for_a_new_subscriber()
        if not self.ready:
            if self.enabled and self.controller is not None and self.mismatch is None and \
                    self.index is not None:
                waited = time.monotonic() - self._waiting_since
                self.throttle.warn('waiting', 'no commands yet: waiting for controller '
                                   f"{self.controller} to answer for its 'joints' "
                                   f"({waited:.1f} s; controller_name: '-' sends them unchecked)")
            return False
        return True

    def send(self, values):
        """Publish ``values``, already in the command order (:attr:`index`) and limited."""
        self.pub.publish(self._serialise(values))
        self.sent += 1

    def send_buffer(self):
        """:meth:`send` of the values a compiled call wrote into :attr:`buffer`."""
        self.pub.publish(self._serialise.written())
        self.sent += 1

    def limits(self):
        """Return the efforts a command may have, in the model's order: the URDF's, or none."""
        return self.model.effort_limit if self.params.clamp_efforts else self._unlimited


def _as_message(values):
    return Float64MultiArray(data=float64_array(values))


def matched_subscriptions(publisher):
    """
    Return a function: how many subscriptions ``publisher`` has matched so far, ever.

    DDS counts every match (a subscriber that left and one that came in its place are two),
    read synchronously from the publisher's matched status before every command.  Where this
    rclpy lacks that entry point, the current count stands in (a swap between two reads goes
    unseen).

    The event's handle is this function's alone: nothing else holds it, so nothing can destroy
    it while it is read, and it keeps the publisher it watches alive (rclpy's handle holds its
    parent).  The read therefore skips rclpy's use count (``with handle:``), a third of its
    cost (0.28 of 0.79 us, warm).
    """
    try:
        from rclpy.event_handler import QoSPublisherEventType
        from rclpy.impl.implementation_singleton import rclpy_implementation
        with publisher.handle:
            event = rclpy_implementation.EventHandle(
                publisher.handle, QoSPublisherEventType.RCL_PUBLISHER_MATCHED)
    except (ImportError, AttributeError, RuntimeError):
        return publisher.get_subscription_count

    take = event.take_event

    def total():
        return take().total_count
    total.event = event                  # kept alive with the function, and only by it
    return total
