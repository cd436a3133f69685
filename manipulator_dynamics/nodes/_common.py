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

"""Plumbing shared by the nodes: where the model comes from, joint states by name, messages."""

import functools
import gc
import os
import signal
import sys
import time

import numpy as np
import rclpy
import rclpy.logging
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, qos_profile_sensor_data, QoSProfile,
                       ReliabilityPolicy)
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String

from ._parameters import ConfigurationError, one_of, Param
from ..control import SplineTrajectory
from ..names import joint_map, JointNamesError
from ..urdf import load_model

#: QoS of /robot_description as robot_state_publisher and ros2_control publish it.
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
#: What a listener to /rosout needs to get the records a node logged before they discovered each
#: other too: nodes publish it transient local, 1000 deep.
ROSOUT = QoSProfile(depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                    reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)


def existing_file(value):
    """Reason why ``value`` is not empty or an existing file, or None."""
    return None if not value or os.path.isfile(value) else f'no such file: {value}'


#: Where a node's robot model comes from (see :class:`ModelSource`).
MODEL_PARAMS = (
    Param('robot_description', '', 'URDF text (overrides urdf_path and the topic)',
          read_only=True),
    Param('urdf_path', '', 'URDF file, used when robot_description is empty',
          existing_file, read_only=True),
    Param('robot_description_topic', 'robot_description',
          'topic of the URDF (transient local), relative to the namespace; empty: do not listen',
          read_only=True),
    Param('root_link', '', 'link to use as the fixed base (empty: the URDF root)',
          read_only=True),
    Param('tip_links', [''], 'keep only joints leading to these links (empty: all)',
          read_only=True),
    Param('without_links', [''], 'links not mounted (a hand, a tool): left out with everything '
          'below them (empty: none)', read_only=True),
    Param('joint_dynamics', '', 'YAML file of armature and friction per joint', existing_file,
          read_only=True),
    Param('identified_parameters', '', 'YAML file of standard parameters to use instead of the '
          "URDF's (manipulator-dynamics identify --parameters-out)", existing_file,
          read_only=True),
    Param('check_inertia', 'warn', "physically impossible inertias: 'raise' rejects the URDF, "
          "'warn' loads it and logs (default), 'ignore'", one_of('raise', 'warn', 'ignore'),
          read_only=True),
)

#: A payload held by the robot, changeable while the node runs (``ros2 param set``).
PAYLOAD_PARAMS = (
    Param('payload_link', '', 'link that holds a payload (a gripper or tool frame too); '
          'empty: none'),
    Param('payload', [0.0], "the payload: mass (kg)[, centre of mass x y z (m) in payload_link's "
          'frame[, inertia about it ixx ixy ixz iyy iyz izz (kg m^2)]]'),
)


def with_payload(model, link, values):
    """Return ``model`` carrying the payload of the parameters; ValueError naming the fault."""
    values = [float(v) for v in values]
    if len(values) not in (1, 4, 10):
        raise ValueError(f'payload needs 1, 4 or 10 numbers (mass[, x y z[, ixx ixy ixz iyy '
                         f'iyz izz]]), got {len(values)}')
    if not link:
        if values[0] != 0:
            raise ValueError('payload has a mass but payload_link is empty')
        return model
    return model.with_payload(link, values[0], values[1:4] or (0.0, 0.0, 0.0),
                              values[4:] or None)


def payload_check(node, name):
    """Check ``payload`` or ``payload_link`` against the other one and the node's model."""
    def check(value):
        params, source = getattr(node, 'params', None), getattr(node, 'source', None)
        if params is None or source is None or source.loaded is None:
            # declaring (the other one is not known yet) or no model: the shape only
            if name == 'payload' and len(value) not in (1, 4, 10):
                return f'needs 1, 4 or 10 numbers, got {len(value)}'
            return None
        link = value if name == 'payload_link' else params.payload_link
        values = value if name == 'payload' else params.payload
        try:
            with_payload(source.loaded, link, values)
        except ValueError as e:
            return str(e)
        return None
    return check


#: How a node listens to joint_states (see :class:`JointStates` and :func:`joint_states_qos`).
JOINT_STATE_PARAMS = (
    Param('stale_after', 0.5, 'a joint whose latest state is older than this (s) stops the '
          'commands; 0: never', low=0.0, high=3600.0),
    Param('state_queue', 1, 'joint_states kept while busy; 1: always the newest (commands from '
          'old states would act late)', read_only=True, low=1, high=1000),
    Param('joint_states_qos', 'sensor_data', 'QoS of the joint_states subscription: '
          'sensor_data (best effort: hears reliable and best-effort publishers) | reliable',
          one_of('sensor_data', 'reliable'), read_only=True),
)


def joint_states_qos(params):
    """Make the QoS of the joint_states subscription: sensor data (best effort) or reliable."""
    if params.joint_states_qos == 'reliable':
        return QoSProfile(depth=params.state_queue, reliability=ReliabilityPolicy.RELIABLE,
                          history=HistoryPolicy.KEEP_LAST)
    return QoSProfile(depth=params.state_queue, reliability=qos_profile_sensor_data.reliability,
                      durability=qos_profile_sensor_data.durability,
                      history=HistoryPolicy.KEEP_LAST)


class BadMessage(ValueError):
    """A message a node drops: ``kind`` of problem (for throttling) and the reason it logs."""

    def __init__(self, kind, reason):
        super().__init__(reason)
        self.kind = kind


class Plan:
    """
    A JointTrajectory message checked against the model, as a :class:`SplineTrajectory`.

    Every joint of the model by name (others are refused), positions within the URDF limits,
    finite values; ``t, q, qd, qdd`` in model joint order, ``names`` and ``order`` map back to the
    message's.  Raises :class:`BadMessage`.
    """

    def __init__(self, model, msg):
        names = list(msg.joint_names)
        k = list(by_name(model, names, what='trajectory', every=True,
                         hint=' (every joint of the model; restrict the model with '
                         'tip_links)').rows)
        self.names, self.order = names, k
        points = msg.points
        t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points])
        q = self._field(points, 'positions', len(names), k, required=True)
        lo, hi = model.lower - 1e-9, model.upper + 1e-9
        beyond = np.argwhere((q < lo) | (q > hi))
        if len(beyond):
            i, j = beyond[0]
            raise BadMessage('limits', f"trajectory point {i}: joint '{model.joint_names[j]}' "
                             f'at {q[i, j]:.4g} is beyond its limits [{model.lower[j]:.4g}, '
                             f'{model.upper[j]:.4g}]')
        qd = self._field(points, 'velocities', len(names), k)
        qdd = self._field(points, 'accelerations', len(names), k)
        try:
            spline = SplineTrajectory(t, q, qd, qdd)
        except ValueError as e:
            raise BadMessage('times', f'{e}: time_from_start') from None
        self.t, self.q, self.qd, self.qdd = spline.t, spline.q, spline.qd, spline.qdd
        self.hermite, self.at = spline.hermite, spline.at

    @staticmethod
    def _field(points, what, n, k, required=False):
        sizes = {len(getattr(p, what)) for p in points}
        if sizes == {0} and not required:
            return None
        if sizes != {n}:
            raise BadMessage('lengths', f'trajectory {what}: every point needs {n} values, got '
                             f'{sorted(sizes)}')
        a = np.array([getattr(p, what) for p in points], dtype=float)[:, k]
        if not np.all(np.isfinite(a)):
            i, j = np.argwhere(~np.isfinite(a))[0]
            raise BadMessage('non-finite', f'trajectory {what} of point {i} is {a[i, j]}')
        return a


class QuickLogger:
    """
    A node's logger for the serving path: rclpy's output (console, ``/rosout``) in microseconds.

    rclpy's logger finds its caller with ``inspect.getframeinfo``, which reads the caller's source
    file: ~3 ms a call on this machine, ~50 ms the first time, and as much again for a call its
    ``throttle_duration_sec`` suppresses.  A 1 kHz loop loses cycles to every line it logs.  This
    one names the caller from the frame alone and hands the record to rcutils as rclpy's logger
    does in the end; where that entry point is missing (another rclpy), it falls back to rclpy's
    logger.
    """

    def __init__(self, node):
        self.logger = node.get_logger()
        try:
            from rclpy.impl.implementation_singleton import rclpy_implementation
            self._emit = rclpy_implementation.rclpy_logging_rcutils_log
        except (ImportError, AttributeError):
            self._emit = None

    def _log(self, severity, text):
        if not self.logger.is_enabled_for(severity):
            return
        if self._emit is None:
            self.logger.log(text, severity)
            return
        frame = sys._getframe(2)                      # whoever called info(), warning(), ...
        self._emit(severity, self.logger.name, text, frame.f_code.co_name,
                   frame.f_code.co_filename, frame.f_lineno)

    def info(self, text):
        self._log(rclpy.logging.LoggingSeverity.INFO, text)

    def warning(self, text):
        self._log(rclpy.logging.LoggingSeverity.WARN, text)

    def error(self, text):
        self._log(rclpy.logging.LoggingSeverity.ERROR, text)


class Throttled:
    """
    Warnings at most once per ``period`` seconds for each kind of problem.

    rclpy's own throttle is per call site: one kind of bad input would hide all the others (and
    it costs a full rclpy log call even when it suppresses one).
    """

    def __init__(self, node, period=1.0):
        import time
        self.log, self.period, self.last = QuickLogger(node), period, {}
        self.clock = time.monotonic

    def warn(self, kind, text):
        now = self.clock()
        if now - self.last.get(kind, -1e9) >= self.period:
            self.last[kind] = now
            self.log._log(rclpy.logging.LoggingSeverity.WARN, text)


class ModelSource:
    """
    The robot model of a node: from parameters, or else from the ``robot_description`` topic.

    ``params`` holds :data:`MODEL_PARAMS`.  A model given by parameter (``robot_description``
    text, else ``urdf_path``) is authoritative: the topic is not used (a simulator's description
    arriving late must not replace it).  Otherwise a URDF on the topic (relative name: a
    namespace moves it) replaces the model whenever its text changes; a bad one is logged and
    the previous model kept.  ``on_model(model)`` is called with each new model.
    """

    def __init__(self, node, params, on_model):
        self.node = node
        self.params = params
        self.on_model = on_model
        self.model = None
        self.loaded = None                    # the model as loaded, without a payload
        self.log = QuickLogger(node)
        self._urdf = None
        if params.robot_description:
            self.load(params.robot_description, 'parameter robot_description')
        elif params.urdf_path:
            self.load(params.urdf_path, f'urdf_path {params.urdf_path}')
        elif params.robot_description_topic:
            node.create_subscription(String, params.robot_description_topic,
                                     self._on_description, LATCHED)

    def _on_description(self, msg):
        if msg.data != self._urdf:
            self.load(msg.data, 'topic robot_description')

    def load(self, urdf, source):
        """Load ``urdf`` (text or path); on failure log why and keep the previous model."""
        p = self.params
        tips = [t for t in p.tip_links if t]
        unmounted = [link for link in p.without_links if link]
        try:
            import warnings
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                model = load_model(urdf, root_link=p.root_link or None, tip_links=tips or None,
                                   joint_dynamics=p.joint_dynamics or None,
                                   parameters=p.identified_parameters or None,
                                   check_inertia=p.check_inertia,
                                   without_links=unmounted or None)
            for w in caught:
                self.log.warning(f'{source}: {w.message}')
        except (ValueError, OSError, KeyError) as e:
            self.log.error(f'{source} rejected, keeping the previous model: {e}')
            return False
        self._urdf = urdf if isinstance(urdf, str) and urdf.lstrip().startswith('<') else None
        if self._urdf is None:
            with open(urdf, encoding='utf-8') as f:        # loaded: the file exists
                self._urdf = f.read()
        self.loaded = model
        self.log.info(f'model from {source}: {model!r}')
        self.apply_payload()
        return True

    def apply_payload(self):
        """Put the payload of the parameters (if the node has them) on the loaded model."""
        p, model = self.params, self.loaded
        link, values = getattr(p, 'payload_link', ''), getattr(p, 'payload', [0.0])
        try:
            model = with_payload(self.loaded, link, values)
        except ValueError as e:
            self.log.error(f'payload ignored, the model carries none: {e}')
        if model is not self.loaded:
            self.log.info(f'payload on {link}: {values[0]:g} kg')
        self.model = model
        self.on_model(model)


class JointStates:
    """
    The model's joint state, merged by joint name from every message on joint_states.

    An arm driver and a gripper driver may each publish their own joints (robot_state_publisher
    merges them too): each message updates the joints it names, other robots' joints are
    ignored, and every joint keeps its own stamp.  A state is served only when every joint of
    the model has been heard and none is older than ``stale_after`` (s, 0: never stale).
    """

    def __init__(self, model, stale_after=0.0, topic='joint_states'):
        n = model.n
        self.model = model
        self.topic = topic                  # what the messages are called in the errors
        self.stale_after = stale_after
        self.q, self.qd, self.effort = np.zeros(n), np.zeros(n), np.zeros(n)
        self.stamp = np.zeros(n, dtype=np.int64)          # ns: header stamp, else receipt
        self.heard = np.zeros(n, dtype=bool)
        self.has_qd = np.zeros(n, dtype=bool)
        self.has_effort = np.zeros(n, dtype=bool)
        self._maps = {}             # names of a message -> (its indices, the model's), cached:
        #                             a driver sends the same names every time

    def forget(self):
        """Forget every joint's state: the next ones start afresh (a new clock)."""
        self.heard[:] = False
        self.stamp[:] = 0

    def _map(self, names):
        key = tuple(names)
        found = self._maps.get(key)
        if found is None:
            found = by_name(self.model, key, what=self.topic)
            if len(self._maps) > 64:                       # names that keep changing
                self._maps.clear()
            self._maps[key] = found
        return found

    def read(self, msg, now_ns):
        """
        Merge ``msg``; return ``(q, qd or None, effort or None, stamp_ns)`` of the model.

        None for a message that names none of the model's joints (another robot's): it changes
        nothing, so it calls for no new command.

        Raise :class:`BadMessage` with the reason when the message is unusable (duplicated
        names, wrong lengths, non-finite values, older than the joints' last state) or when the
        merged state is not complete or fresh (a joint never heard of, or stale): no command may
        be computed without every joint.  ``qd`` (``effort``) is None unless every joint has one.
        """
        names = msg.name
        rows, joints = self._map(names)
        q = self._field(msg.position, 'position', names, rows, joints, required=True)
        qd = self._field(msg.velocity, 'velocity', names, rows, joints)
        effort = self._field(msg.effort, 'effort', names, rows, joints)
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        if len(joints) == 0:
            return None
        if stamp and np.any(self.heard[joints] & (self.stamp[joints] > stamp)):
            last = int(self.stamp[joints].max())
            raise BadMessage('out of order',
                             f'{self.topic} stamp {stamp * 1e-9:.6f} s is older than the '
                             f'last one ({last * 1e-9:.6f} s): out of order')
        self.q[joints] = q
        if qd is not None:
            self.qd[joints] = qd
        if effort is not None:
            self.effort[joints] = effort
        self.has_qd[joints] = qd is not None
        self.has_effort[joints] = effort is not None
        self.stamp[joints] = stamp or now_ns
        self.heard[joints] = True
        if not self.heard.all():
            missing = [self.model.joint_names[j] for j in np.flatnonzero(~self.heard)]
            raise BadMessage('missing', f'no {self.topic} yet for joints {", ".join(missing)}: '
                             'no command until every joint is heard')
        if self.stale_after > 0:
            age = now_ns - self.stamp
            old = np.flatnonzero(age > self.stale_after * 1e9)
            if len(old):
                names = ', '.join(self.model.joint_names[j] for j in old)
                raise BadMessage('stale', f'{self.topic} of {names} is '
                                 f'{age[old].max() * 1e-9:.3f} s old, more than stale_after '
                                 f'({self.stale_after} s)')
        return (self.q.copy(), self.qd.copy() if self.has_qd.all() else None,
                self.effort.copy() if self.has_effort.all() else None, stamp)

    def _field(self, values, what, names, rows, joints, required=False):
        if len(values) == 0 and not required:
            return None
        if len(values) != len(names):
            raise BadMessage('lengths', f'{self.topic} has {len(names)} names but '
                             f'{len(values)} {what} values')
        a = np.asarray(values, dtype=float)[rows]
        bad = np.flatnonzero(~np.isfinite(a))
        if len(bad):
            joint = self.model.joint_names[joints[bad[0]]]
            raise BadMessage('non-finite', f"{self.topic} {what} of '{joint}' is {a[bad[0]]}")
        return a


def on_time_jump_back(node, callback):
    """
    Call ``callback(delta_ns)`` (negative) when the node's clock jumps back; one log line says so.

    Under ``use_sim_time`` a simulation reset (Gazebo's, MuJoCo's, a restarted sim_node) sends
    ``/clock`` back: every stamp the node kept is then in the future of the new clock, and
    joint states, trajectories in progress and rate timers must follow the new clock (rcl's
    timers do so themselves).  Returns the handler, which must be kept.
    """
    from rclpy.clock import JumpThreshold
    from rclpy.duration import Duration

    log = QuickLogger(node)

    def jumped(jump):
        delta = jump.delta.nanoseconds
        if delta < 0:
            log.warning(f'the clock jumped back by {-delta * 1e-9:.3f} s (a simulation reset): '
                        'joint states and any trajectory in progress follow the new clock')
            callback(delta)

    threshold = JumpThreshold(min_forward=None, min_backward=Duration(nanoseconds=-1),
                              on_clock_change=False)
    return node.get_clock().create_jump_callback(threshold, post_callback=jumped)


def check_command_joints(model, names):
    """Reason why ``names`` (empty entries ignored) are not all joints of ``model``, or None."""
    try:
        joint_map(model.joint_names if model is not None else (), names,
                  what='the command order', unknown=model is not None)
    except JointNamesError as e:
        return str(e)
    return None


def by_name(model, names, **options):
    """:func:`..names.joint_map` of ``model``'s joints; a :class:`BadMessage` if it refuses."""
    try:
        return joint_map(model.joint_names, names, **options)
    except JointNamesError as e:
        raise BadMessage(e.kind, str(e)) from None


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
        self.index = self.names = None
        self.mismatch = None                  # why commands are refused (error), or None
        self.ready = False                    # commands may leave
        self.controller_joints = None         # the controller's latest answer (None: unknown)
        self._pending = self._asked_at = None
        self._waiting_since = time.monotonic()
        self._client = None
        if self.controller is not None:
            self._client = node.create_client(GetParameters, f'{self.controller}/get_parameters')
            # on the steady clock: under use_sim_time a paused or held simulation stops the
            # node's clock, and the question must still be asked
            from rclpy.clock import Clock, ClockType
            node.create_timer(self.ASK_PERIOD, self._ask,
                              clock=Clock(clock_type=ClockType.STEADY_TIME))

    def set_model(self, model):
        """Map the commands onto ``model`` (a new model, or new ``command_joints``)."""
        self.index = command_index(self.node, model, self.params.command_joints)
        self.names = None if self.index is None else [model.joint_names[i] for i in self.index]
        if self.names is not None:
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

    def _ask(self):
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
            self.mismatch, self.ready = None, self.index is not None
            return
        joints, was = self.controller_joints, self.mismatch
        self.mismatch = None
        if joints is not None and self.names is not None and joints != self.names:
            self.mismatch = (f"controller {self.controller}'s joints are [{', '.join(joints)}] "
                             f"but the commands' order is [{', '.join(self.names)}]: no commands "
                             "until command_joints is set to the controller's order")
            if self.mismatch != was:
                self.log.error(self.mismatch)
        ready = joints is not None and self.names is not None and self.mismatch is None
        if ready and not self.ready:
            self.log.info(f'command order matches controller {self.controller}: commanding')
        self.ready = ready

    def publish(self, tau):
        """Send ``tau`` (model order) in the command order; False when nothing may be sent."""
        if self.ready and self.controller is not None and \
                self._matched() > self._asked_matched:
            self._forget(f'a new subscriber on {self.pub.topic_name}')
        if not self.ready:
            if self.controller is not None and self.mismatch is None and self.index is not None:
                waited = time.monotonic() - self._waiting_since
                self.throttle.warn('waiting', 'no commands yet: waiting for controller '
                                   f"{self.controller} to answer for its 'joints' "
                                   f"({waited:.1f} s; controller_name: '-' sends them unchecked)")
            return False
        self.pub.publish(vector_message(tau[self.index]))
        return True


def matched_subscriptions(publisher):
    """
    Return a function: how many subscriptions ``publisher`` has matched so far, ever.

    DDS counts every match (a subscriber that left and one that came in its place are two),
    read synchronously from the publisher's matched status in about 3 us.  Where this rclpy
    lacks that entry point, the current count stands in (a swap between two reads goes unseen).
    """
    try:
        from rclpy.event_handler import QoSPublisherEventType
        from rclpy.impl.implementation_singleton import rclpy_implementation
        with publisher.handle:
            event = rclpy_implementation.EventHandle(
                publisher.handle, QoSPublisherEventType.RCL_PUBLISHER_MATCHED)
    except (ImportError, AttributeError, RuntimeError):
        return publisher.get_subscription_count

    def total():
        with event:
            return event.take_event().total_count
    total.event = event                  # kept alive with the function
    return total


def command_index(node, model, names):
    """
    Model indices of the command joints ``names`` (empty: the model's joints), or None.

    Unknown names are logged, and None means no commands until they are fixed: a new URDF
    without a configured joint must not stop the node.
    """
    names = [n for n in names if n] or list(model.joint_names)
    reason = check_command_joints(model, names)
    if reason:
        QuickLogger(node).error(f'command_joints: {reason}; no commands until they are fixed')
        return None
    return np.array([model.joint_index(n) for n in names], dtype=np.int64)


def clamp_efforts(model, tau, throttle):
    """``tau`` within the URDF effort limits; a throttled warning names the joints clamped."""
    limit = model.effort_limit
    clamped = np.clip(tau, -limit, limit)
    if np.any(clamped != tau):
        over = [model.joint_names[i] for i in np.flatnonzero(clamped != tau)]
        throttle.warn('clamped', f'efforts clamped to the URDF limits: {", ".join(over)}')
    return clamped


def vector_message(values, label='joint'):
    """Make a 1-D Float64MultiArray."""
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label=label, size=len(values), stride=len(values))]
    msg.data = np.asarray(values, dtype=float).tolist()
    return msg


def array_message(a, labels):
    """Make a Float64MultiArray of ``a``, row-major, one dimension per label (ROS layout rules)."""
    msg = Float64MultiArray()
    strides = np.cumprod(a.shape[::-1])[::-1]
    msg.layout.dim = [MultiArrayDimension(label=label, size=size, stride=int(stride))
                      for label, size, stride in zip(labels, a.shape, strides)]
    msg.data = a.astype(float).reshape(-1).tolist()
    return msg


def matrix_message(M):
    """Make a 2-D Float64MultiArray, row-major: dim[0] rows, dim[1] columns (ROS layout rules)."""
    return array_message(M, ('rows', 'cols'))


def names_message(names):
    """Make the joint order of array topics a YAML flow list in a std_msgs/String."""
    return String(data='[' + ', '.join(names) + ']')


def quiet_unraisable(unraisable, default=sys.unraisablehook, stopping=lambda: True):
    """
    Drop the complaints a stop signal leaves in finalisers; pass every other one on.

    * The node's stop handler (:func:`_quiet_signals`) raises KeyboardInterrupt during start-up;
      when the signal lands while the garbage collector runs a ``__del__`` (a ``ZipFile``'s, in
      CI), Python swallows it there and prints "Exception ignored in ... KeyboardInterrupt".
      Nothing is lost: the handler has set ``requested``, and the node stops as soon as it
      would start serving.
    * A KeyboardInterrupt that lands inside a constructor leaves a half-built object, whose
      ``__del__`` then fails on the attribute it never got: "Exception ignored ...
      AttributeError" (``rclpy.task.Future`` without ``_exception``; llvmlite's ``ObjectRef``
      without ``_as_parameter_``, interrupted while numba loads).  Harmless (the node is
      stopping), but it reads as a crash: dropped once ``stopping()`` says a stop was asked for,
      whichever class it was.
    """
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        return
    where = getattr(unraisable.object, '__qualname__', '')
    if (isinstance(unraisable.exc_value, AttributeError) and where.endswith('__del__')
            and stopping()):
        return
    default(unraisable)


def settle_garbage():
    """
    Keep Python's full garbage collections out of the control loop: call once, after start-up.

    The imports (numba, llvmlite, scipy) and the warmed kernels leave ~170,000 objects that the
    cyclic collector walks on every full collection: ~80 ms, with the GIL held, whenever one comes
    due, and a 1 kHz loop has stalled that long at random.  Collect once and freeze what is left
    (``gc.freeze``): later collections see only objects made while serving.
    """
    gc.collect()
    gc.freeze()


def _quiet_signals():
    """
    Make SIGINT and SIGTERM stop a node without a traceback, however many arrive.

    A person's Ctrl-C on ``ros2 launch`` reaches every process of the terminal's group, and launch
    then sends its own SIGINT: a node gets two.  rclpy's signal handler shuts the context down
    (which ends the executor's spin) and then calls the handler that was there before it:
    Python's, which raises KeyboardInterrupt wherever the node happens to be, the second time
    inside ``destroy_node`` (a traceback and exit code -2).  Installed before ``rclpy.init``, this
    handler is the one rclpy calls.  While the node starts (loading, warming kernels), the first
    signal interrupts the start-up at once (``interruptible``); once it serves, a signal only ends
    the spin (``requested``, and rclpy's shutdown of the context), and no later one raises
    anywhere.
    """
    def stop(signum, frame):
        stop.requested = True
        if stop.interruptible:
            stop.interruptible = False
            raise KeyboardInterrupt
    stop.interruptible, stop.requested = True, False
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    return stop


def ignore_signals():
    """
    Ignore SIGINT and SIGTERM from here on: the node is stopping anyway.

    Python resets the handlers it installed to the default at exit, while numba and the DDS
    threads are still being torn down (tens of ms): launch's SIGINT landing then killed a node
    with exit code -2.  Called once the node is done, and again after ``rclpy.try_shutdown``
    (which puts back the handler rclpy found at ``init``).
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)


def shut_down(node):
    """Destroy ``node`` (if any) and shut rclpy down, deaf to further SIGINT and SIGTERM."""
    ignore_signals()
    if node is not None:
        for companion in getattr(node, 'companions', ()):
            companion.destroy_node()
        node.destroy_node()
    rclpy.try_shutdown()
    ignore_signals()


def ros_init(args=None):
    """``rclpy.init`` for a node's process; return the signal handler (see _quiet_signals)."""
    handler = _quiet_signals()
    sys.unraisablehook = functools.partial(quiet_unraisable, stopping=lambda: handler.requested)
    rclpy.init(args=args)
    return handler


def spin(node_class, args=None):
    """
    Run a node until SIGINT or SIGTERM, then shut down with exit code 0: its ``main()``.

    A node that is done by itself (a one-shot sender) shuts its context down: spin then ends too.
    """
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    handler = ros_init(args)
    # the executor first: a signal during the node's start-up then finds it whole
    executor = SingleThreadedExecutor()
    node = None
    try:
        node = node_class()
        executor.add_node(node)
        for companion in getattr(node, 'companions', ()):     # nodes it shows beside it
            executor.add_node(companion)
        settle_garbage()
        handler.interruptible = False
        # executor.spin() ends only when rclpy's signal guard condition wakes it; a wake-up every
        # 0.1 s when idle (nothing on a busy 1 kHz loop) also ends it once the context is down or
        # a stop was asked for: a node stops within 0.1 s, whatever the wake-up did
        while rclpy.ok() and not handler.requested:
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ConfigurationError as e:
        rclpy.logging.get_logger(node_class.__name__).fatal(f'not started: {e}')
        raise SystemExit(2)
    except RuntimeError:            # rclpy's RCLError: also what a signal during start-up gives
        if rclpy.ok():
            raise
    finally:
        handler.interruptible = False
        shut_down(node)
