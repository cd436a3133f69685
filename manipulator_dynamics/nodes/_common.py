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

import gc
import math
import os
import sys

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
import rclpy
import rclpy.logging
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String

from ..model import load_model

#: QoS of /robot_description as robot_state_publisher and ros2_control publish it.
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
#: What a listener to /rosout needs to get the records a node logged before they discovered each
#: other too: nodes publish it transient local, 1000 deep.
ROSOUT = QoSProfile(depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                    reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)


def describe(text, **kw):
    """Make a ParameterDescriptor with a description (ranges, read-only... as keywords)."""
    return ParameterDescriptor(description=text, **kw)


class BadMessage(ValueError):
    """A message a node drops: ``kind`` of problem (for throttling) and the reason it logs."""

    def __init__(self, kind, reason):
        super().__init__(reason)
        self.kind = kind


class QuickLogger:
    """A node's logger for the serving path: rclpy's output (console, ``/rosout``) in microseconds.

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
    """Warnings at most once per ``period`` seconds for each kind of problem.

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
    """The robot model of a node: from parameters, or else from the ``/robot_description`` topic.

    Parameters (declared on ``node``): ``robot_description`` (URDF text), ``urdf_path``,
    ``robot_description_topic`` (default ``/robot_description``; empty: do not listen),
    ``root_link``, ``tip_links``, ``joint_dynamics`` (YAML path), ``check_inertia``.  A model given
    by parameter is authoritative: the topic is not used (a simulator's description arriving late
    must not replace it).  Otherwise a URDF on the topic replaces the model whenever its text
    changes; a bad one is logged and the previous model kept.  ``on_model(model)`` is called with
    each new model.
    """

    def __init__(self, node, on_model):
        self.node = node
        self.on_model = on_model
        self.model = None
        self.log = QuickLogger(node)
        self._urdf = None
        p = node.declare_parameter
        p('robot_description', '', describe('URDF text (overrides urdf_path and the topic)'))
        p('urdf_path', '', describe('URDF file, used when robot_description is empty'))
        p('robot_description_topic', '/robot_description',
          describe('topic of the URDF (transient local), empty to not listen'))
        p('root_link', '', describe('link to use as the fixed base (empty: the URDF root)'))
        p('tip_links', [''], describe('keep only joints leading to these links (empty: all)'))
        p('joint_dynamics', '', describe('YAML file of armature and friction per joint'))
        p('check_inertia', 'warn', describe("physically impossible inertias: 'raise' rejects "
                                            "the URDF, 'warn' loads it and logs (default), "
                                            "'ignore'"))
        text = node.get_parameter('robot_description').value
        path = node.get_parameter('urdf_path').value
        if text:
            self.load(text, 'parameter robot_description')
        elif path:
            self.load(path, f'urdf_path {path}')
        topic = node.get_parameter('robot_description_topic').value
        if topic and not (text or path):
            node.create_subscription(String, topic, self._on_description, LATCHED)

    def _on_description(self, msg):
        if msg.data != self._urdf:
            self.load(msg.data, 'topic robot_description')

    def load(self, urdf, source):
        """Load ``urdf`` (text or path); on failure log why and keep the previous model."""
        node = self.node
        tips = [t for t in node.get_parameter('tip_links').value if t]
        dynamics = node.get_parameter('joint_dynamics').value or None
        try:
            import warnings
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                model = load_model(urdf, root_link=node.get_parameter('root_link').value or None,
                                   tip_links=tips or None, joint_dynamics=dynamics,
                                   check_inertia=node.get_parameter('check_inertia').value)
            for w in caught:
                self.log.warning(f'{source}: {w.message}')
        except (ValueError, OSError, KeyError) as e:
            self.log.error(f'{source} rejected, keeping the previous model: {e}')
            return False
        self._urdf = urdf if isinstance(urdf, str) and urdf.lstrip().startswith('<') else None
        if self._urdf is None:
            with open(urdf, encoding='utf-8') as f:        # loaded: the file exists
                self._urdf = f.read()
        self.model = model
        self.log.info(f'model from {source}: {model!r}')
        self.on_model(model)
        return True


class JointStates:
    """Map sensor_msgs/JointState onto a model's joints by name, rejecting what cannot be used."""

    def __init__(self, model, stale_after=0.0):
        self.model = model
        self.stale_after = stale_after
        self.last_stamp = None
        self._names = None          # the last message's names and their mapping, reused while
        self._k = None              # a driver sends the same names (the usual case)

    def read(self, msg, now_ns):
        """Return ``(q, qd or None, effort or None, stamp_ns)``; raise BadMessage with a reason.

        Names of other robots' joints are ignored; missing or duplicated names, arrays of the
        wrong length, non-finite values and out-of-order or stale stamps are reasons to drop.
        """
        names = msg.name
        if names != self._names:
            names = list(names)
            if len(set(names)) != len(names):
                dup = sorted({n for n in names if names.count(n) > 1})
                raise BadMessage(
                    'duplicated', f'joint_states names {", ".join(dup)} more than once')
            index = {n: i for i, n in enumerate(names)}
            missing = [j for j in self.model.joint_names if j not in index]
            if missing:
                raise BadMessage(
                    'missing', f'joint_states lacks joints {", ".join(missing)}')
            self._names, self._k = names, [index[j] for j in self.model.joint_names]
        k = self._k
        q = self._field(msg.position, 'position', names, k, required=True)
        qd = self._field(msg.velocity, 'velocity', names, k)
        effort = self._field(msg.effort, 'effort', names, k)
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        if stamp:
            if self.last_stamp is not None and stamp < self.last_stamp:
                raise BadMessage('out of order',
                                 f'joint_states stamp {stamp * 1e-9:.6f} s is older than the '
                                 f'last one ({self.last_stamp * 1e-9:.6f} s): out of order')
            if self.stale_after > 0 and now_ns - stamp > self.stale_after * 1e9:
                raise BadMessage('stale', f'joint_states is {(now_ns - stamp) * 1e-9:.3f} s old, '
                                 f'more than stale_after ({self.stale_after} s)')
            self.last_stamp = stamp
        return q, qd, effort, stamp

    def _field(self, values, what, names, k, required=False):
        if len(values) == 0 and not required:
            return None
        if len(values) != len(names):
            raise BadMessage('lengths', f'joint_states has {len(names)} names but '
                             f'{len(values)} {what} values')
        a = np.asarray(values, dtype=float)[k]
        bad = np.flatnonzero(~np.isfinite(a))
        if len(bad):
            joint = self.model.joint_names[bad[0]]
            raise BadMessage('non-finite', f"joint_states {what} of '{joint}' is {a[bad[0]]}")
        return a


def check_command_joints(model, names):
    """Reason why ``names`` (empty entries ignored) are not all joints of ``model``, or None."""
    unknown = [n for n in names if n and model is not None and n not in model.joint_names]
    return f'not joints of the model: {", ".join(unknown)}' if unknown else None


def command_index(node, model, names):
    """Model indices of the command joints ``names`` (empty: the model's joints), or None.

    Unknown names are logged, and None means no commands until they are fixed: a new URDF
    without a configured joint must not stop the node.
    """
    names = [n for n in names if n] or list(model.joint_names)
    reason = check_command_joints(model, names)
    if reason:
        QuickLogger(node).error(f'command_joints: {reason}; no commands until they are fixed')
        return None
    return np.array([model.joint_index(n) for n in names], dtype=np.int64)


def warm_up(model):
    """Run every kernel a node uses once, before the node serves.

    Loading them from numba's cache takes a few hundred milliseconds: paid on the first message,
    a control loop would see a stall.
    """
    from ..crba import inertia_matrix
    from ..forward import forward_dynamics
    from ..rnea import bias_forces, gravity_torques, inverse_dynamics
    z = np.zeros(model.n)
    if model.n:
        gravity_torques(model, z)
        bias_forces(model, z, z)
        inverse_dynamics(model, z, z, z, friction=True)
        # the batched kernel: trajectory_node's efforts of every point (1.3 s to compile, 6 ms
        # to load, either of which would delay the first trajectory)
        inverse_dynamics(model, z[None], z[None], z[None], friction=True)
        inertia_matrix(model, z)
        for method in ('udut', 'cholesky'):
            try:
                forward_dynamics(model, z, z, z, method=method)
            except ValueError:        # a singular M: the node reports it when it happens
                pass


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


class ConfigurationError(ValueError):
    """A node was started with an invalid parameter value: it does not start."""


def parameter_check(node, checks):
    """Validate parameters: now (their start values) and whenever they are set.

    ``checks`` maps a name to ``value -> reason or None``.  An invalid start value raises
    :class:`ConfigurationError` naming the parameter; an invalid set is rejected with the reason.
    """
    for name, check in checks.items():
        reason = check(node.get_parameter(name).value)
        if reason:
            raise ConfigurationError(f'parameter {name}: {reason}')

    def callback(params):
        for param in params:
            check = checks.get(param.name)
            reason = check(param.value) if check else None
            if reason:
                return SetParametersResult(successful=False, reason=f'{param.name}: {reason}')
        return SetParametersResult(successful=True)
    node.add_on_set_parameters_callback(callback)


def _quiet_half_built_tasks(unraisable, default=sys.unraisablehook):
    """Drop rclpy's complaint about a Task a signal interrupted while it was being built.

    A SIGINT that lands inside ``rclpy.task.Task.__init__`` leaves an object without
    ``_exception``; its ``Future.__del__`` then prints "Exception ignored ... AttributeError" at
    exit.  Harmless (the node has stopped), but it reads as a crash: every other unraisable
    exception still goes to the default hook.
    """
    obj = getattr(unraisable.object, '__qualname__', '')
    if isinstance(unraisable.exc_value, AttributeError) and obj == 'Future.__del__':
        return
    default(unraisable)


def settle_garbage():
    """Keep Python's full garbage collections out of the control loop: call once, after start-up.

    The imports (numba, llvmlite, scipy) and the warmed kernels leave ~170,000 objects that the
    cyclic collector walks on every full collection: ~80 ms, with the GIL held, whenever one comes
    due, and a 1 kHz loop has stalled that long at random.  Collect once and freeze what is left
    (``gc.freeze``): later collections see only objects made while serving.
    """
    gc.collect()
    gc.freeze()


def spin(node_class, args=None):
    """Run a node until SIGINT or SIGTERM, then shut down without a traceback: its ``main()``."""
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    sys.unraisablehook = _quiet_half_built_tasks
    rclpy.init(args=args)
    # the executor first: a signal during the node's start-up then finds it whole
    executor = SingleThreadedExecutor()
    node = None
    try:
        node = node_class()
        executor.add_node(node)
        settle_garbage()
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ConfigurationError as e:
        rclpy.logging.get_logger(node_class.__name__).fatal(f'not started: {e}')
        raise SystemExit(2)
    except RuntimeError:            # rclpy's RCLError: also what a signal during start-up gives
        if rclpy.ok():
            raise
    finally:
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.try_shutdown()


def finite_positive(value):
    """Reason why ``value`` is not a finite number > 0, or None."""
    return None if isinstance(value, (int, float)) and math.isfinite(value) and value > 0 else \
        f'must be a finite number > 0, got {value!r}'


def existing_file(value):
    """Reason why ``value`` is not empty or an existing file, or None."""
    return None if not value or os.path.isfile(value) else f'no such file: {value}'
