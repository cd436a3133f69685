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
A commanding node's contact output: the momentum observer on the joint states it reads.

With ``external_torques: true``, every accepted joint state (positions, velocities and the
efforts the joints apply) goes through :class:`~manipulator_dynamics.contact.observer.
MomentumObserver`.  Published, each message stamped with the joint state's own stamp:

* ``~/external_torques`` (sensor_msgs/JointState): the estimate in ``effort``, model order;
* ``~/contact_wrench`` (geometry_msgs/WrenchStamped): the wrench at ``contact_link`` in its
  frame, NaN in the components its joints cannot observe;
* ``~/contact`` (std_msgs/UInt8): 0 free, 1 contact, 2 collision (latched until ``~/rearm``,
  std_srvs/Trigger, releases it and the node's reaction to it: :mod:`..contact.reaction`,
  ``collision_reaction``), 3 not watching (:data:`~..contact.detection.NOT_WATCHING`:
  it cannot tell, so it does not say free).  A level, not a stream: written when it changes
  (nothing before the first thresholds are known, 0 then), transient local, so that a listener
  joining late hears the present level at once (the last of the :data:`LEVELS_KEPT` it is
  given).  It says 3 from a restart of the observer (below) until the observer has settled
  again (5 time constants), unless the levels it still watches with see a contact; /diagnostics
  says WARN, with the reason and for how long, whenever contact detection is not available.

The first two are written only while someone subscribes (asked every :data:`LISTENERS_EVERY`
states).

Thresholds given in N m, or ``auto``: from the identified parameters' ``contact_spread`` (the
identified model's residual over its validation logs, at the same gain), or else learnt over
``contact_calibration`` seconds of free motion once the observer has settled, and said in the
log: the policy of :mod:`~..contact.calibration`, which ``manipulator-dynamics contact`` runs
over a log too (:mod:`~..contact.replay`).  What is done with each state is the runtime's
:class:`~..runtime.contact_monitor.ContactMonitor`; this module is its node: the parameters,
the topics and the services.  Learnt thresholds belong to the model: a restart
of the observer keeps them (a calibration under way starts again: a stall cut it); they are
learnt again for a new model, or on request (``~/relearn_thresholds``, std_srvs/Trigger, the
old levels watching until the new ones are learnt).

The observer rides through gaps in the stamps: a state dropped (a starved publisher, a stale
or out-of-order state refused) leaves an interval of several periods, which it integrates
with the states' own stamps, the momentum's change exact and what is not known of the efforts
over it in the dry-friction band (:mod:`~..contact.observer`).  It restarts, and says why, only
past :func:`~..contact.detection.ride_bound`, on a new model, a clock that jumps back, and a
change of its gain.
"""

import array

from geometry_msgs.msg import Vector3, WrenchStamped
import numpy as np
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import UInt8
from std_srvs.srv import Trigger

from ._parameters import finite_positive, one_of, Param
from .kernels import compiling
from .logs import QuickLogger, Throttled
from ..contact.calibration import GROWTH, parse_thresholds
from ..contact.detection import NOT_WATCHING
from ..contact.reaction import REACTIONS, STOP_TIME
from ..contact.settings import CALIBRATION
from ..contact.wrench import contact_wrench
from ..runtime.contact_monitor import ContactMonitor, gain_check
from ..wire import stamped_serialiser

#: How many states pass between checks of who listens to the two streams.  Each is written only
#: while someone listens: a write heard by another process costs the node about 10 us of CPU
#: (30 us to a reliable listener), the wrench's least squares 13 us more; the observer and the
#: levels (and their log lines) run whoever listens.
LISTENERS_EVERY = 200
#: ~/contact's changes kept for a listener that joins late (transient local): the last is the
#: present level; a contact and the collision after it, a state apart, both reach a listener.
LEVELS_KEPT = 10


def thresholds_check(value):
    """Reason why ``value`` is neither 'auto' nor one number or a list of numbers, or None."""
    try:
        parse_thresholds(value)
    except ValueError as e:
        return str(e)
    return None


def growth_check(value):
    """Reason why ``value`` is not one or more finite numbers >= 0 (a growth), or None."""
    if not value or not all(np.isfinite(v) and v >= 0 for v in value):
        return f'must be finite numbers >= 0, one or one per joint, got {list(value)}'
    return None


#: The commanding nodes' parameters of the contact output and the reaction to a collision.
CONTACT_PARAMS = (
    Param('external_torques', False, 'run the momentum observer on joint_states: '
          '~/external_torques, ~/contact_wrench, ~/contact, ~/rearm, and react to a collision '
          '(collision_reaction)'),
    Param('collision_reaction', REACTIONS[0], 'what the commands become on a collision, until '
          '~/rearm (external_torques): stop (a damped stop around gravity compensation), float '
          '(gravity compensation only), reflex (a brief retreat along the external torque, then '
          'the stop), none (the commands go on)', one_of(*REACTIONS)),
    Param('stop_time', STOP_TIME, "s: the stop's time constant (each joint's speed falls by e "
          'in it), of collision_reaction stop and reflex', finite_positive, low=0.001,
          high=10.0),
    Param('observer_friction', True, "count the model's friction law Fv qd + Fc s(qd) + Fo as the "
          "joints' own, not external (false: a robot whose joints have none)"),
    Param('observer_gain', [50.0], 'observer gain K (1/s), one value or one per joint: the '
          'estimate follows a push with the time constant 1/K; at most half the state rate',
          gain_check),
    Param('contact_thresholds', 'auto', "N m, one value or one per joint ('[a, b, ...]'), above "
          'which ~/contact says 1; auto: twice the spread of free motion, growing beyond the '
          "speeds and model's torques the calibration saw (docs/contact.md)",
          thresholds_check),
    Param('collision_thresholds', 'auto', 'N m, as contact_thresholds, above which '
          '~/contact says 2 (latched until ~/rearm); auto: four times the spread of free motion',
          thresholds_check),
    Param('thresholds_speed_growth', [0.0], 's/rad, one value or one per joint: thresholds given '
          'in N m grow by this share of themselves per rad/s of the joint beyond '
          'thresholds_speed_from (auto ones: as learnt; ~/save_thresholds writes them)',
          growth_check),
    Param('thresholds_torque_growth', [0.0], '1/(N m), one value or one per joint: thresholds '
          "given in N m grow by this share of themselves per N m of the model's torque beyond "
          'thresholds_torque_from', growth_check),
    Param('thresholds_speed_from', [0.0], 'rad/s, one value or one per joint: the speed beyond '
          'which thresholds given in N m grow (the fastest their calibration saw)',
          growth_check),
    Param('thresholds_torque_from', [0.0], "N m, one value or one per joint: the model's torque "
          'beyond which thresholds given in N m grow (the largest their calibration saw)',
          growth_check),
    Param('contact_calibration', CALIBRATION, 'auto thresholds: seconds of free motion (some '
          'joint moving), after the observer has settled, whose residual sets them, a stop or '
          'a spike left out and said (unless the identified parameters carry a '
          'contact_spread)', low=0.05, high=3600.0),
    Param('contact_thresholds_out', '', 'file ~/save_thresholds writes the levels in use to, a '
          'ROS 2 parameters file (--params-file at the next start: the levels as given)'),
    Param('contact_link', '', 'link whose wrench ~/contact_wrench estimates, in its frame '
          '(empty: the deepest link)'),
    Param('external_torques_rate', 0.0, 'Hz at most of ~/external_torques and ~/contact_wrench '
          '(0: every state); the observer and the levels run at every state whatever it is',
          low=0.0, high=100000.0),
)


class ContactOutput:
    """The contact monitor's node: its parameters, topics and services (see the module)."""

    def __init__(self, node, params, now_ns, on_collision=None, on_rearm=None):
        self.node, self.params, self.now_ns = node, params, now_ns
        # the node's reaction: on_collision(t s, residual, what) on the state that latched a
        # collision; on_rearm() at ~/rearm (what it ended, said, or None)
        self.on_rearm = on_rearm
        self.log = QuickLogger(node)
        # a state's worth each at 1 kHz: a recorder a tenth of a second late loses none
        self.torques_pub = node.create_publisher(JointState, '~/external_torques', 100)
        self.wrench_pub = node.create_publisher(WrenchStamped, '~/contact_wrench', 100)
        self.level_pub = node.create_publisher(UInt8, '~/contact', QoSProfile(
            depth=LEVELS_KEPT, durability=DurabilityPolicy.TRANSIENT_LOCAL,
            reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST))
        node.create_service(Trigger, '~/rearm', self._rearm)
        node.create_service(Trigger, '~/relearn_thresholds', self._relearn)
        node.create_service(Trigger, '~/save_thresholds', self._save)
        from rclpy.serialization import serialize_message
        self._level = [serialize_message(UInt8(data=k))      # published as is
                       for k in range(NOT_WATCHING + 1)]
        # a contact's start: at most one line a second
        self.monitor = ContactMonitor(params, now_ns, self.log, Throttled(node),
                                      lambda level: self.level_pub.publish(self._level[level]),
                                      on_collision)
        self.observe, self.check_gain = self.monitor.observe, self.monitor.check_gain
        self.reset, self.summary = self.monitor.reset, self.monitor.summary
        self.spread = self.monitor.spread
        self.warned = set()                         # what the wrench could not say, said once
        self._every = self._next = 0                # ns: external_torques_rate's period, next

    # what the node and its tests read of the monitor
    observer = property(lambda self: self.monitor.observer)
    detector = property(lambda self: self.monitor.detector)
    calibration = property(lambda self: self.monitor.calibration)
    how = property(lambda self: self.monitor.how)
    said = property(lambda self: self.monitor.said)
    last = property(lambda self: self.monitor.last)

    # --- model and parameters --------------------------------------------------------------
    def _node_model(self):
        source = getattr(self.node, 'source', None)
        return None if source is None else source.model

    def check_link(self, value):
        """Reason why ``value`` is not empty or a link of the model, or None (a check)."""
        model = self._node_model()
        if value and model is not None and value not in model.frames:
            return f"'{value}' is not a link of model '{model.name}'"
        return None

    def set_model(self, model, why='a new model'):
        """Start afresh on ``model`` (None: the output off); say why the observer restarts."""
        monitor = self.monitor
        if not monitor.set_model(model, why):
            return
        model = monitor.model
        torques = JointState(name=list(model.joint_names))
        self._torques = stamped_serialiser(torques, model.n, _set_effort)
        wrench = WrenchStamped()
        wrench.header.frame_id = monitor.link
        self._wrench = stamped_serialiser(wrench, 6, _set_wrench)
        self._countdown, self._listening = 0, (False, False)
        self._set_rate()

    def _set_rate(self):
        rate = self.params.external_torques_rate
        self._every, self._next = (round(1e9 / rate) if rate > 0 else 0), 0

    def on_parameters(self, changed):
        """Apply accepted changes of :data:`CONTACT_PARAMS`."""
        if 'external_torques_rate' in changed:
            self._set_rate()
        if compiling(self.node):
            return                  # the observer starts once they are (kernels_loaded)
        running = self.monitor.model is not None
        if changed & {'external_torques', 'observer_gain', 'observer_friction'}:
            self.set_model(self._node_model(), 'its parameters changed')
        elif running and changed & {'contact_thresholds', 'collision_thresholds',
                                    *(f'thresholds_{g}' for g in GROWTH)}:
            self.monitor.levels()
        elif running and 'contact_link' in changed:
            self.set_model(self._node_model(), 'contact_link changed')

    # --- states -----------------------------------------------------------------------------
    def on_state(self, q, qd, effort, stamp_ns):
        """Take one accepted joint state (model order); publish what it gives."""
        self.publish(self.observe(q, qd, effort, stamp_ns))

    def publish(self, observed):
        """Publish ``~/external_torques`` and ``~/contact_wrench`` of :meth:`observe`'s result."""
        if observed is None:
            return
        stamp_ns, q, r = observed
        self._countdown -= 1
        if self._countdown < 0:
            self._countdown = LISTENERS_EVERY
            self._listening = (self.torques_pub.get_subscription_count() > 0,
                               self.wrench_pub.get_subscription_count() > 0)
        torques, wrench = self._listening
        if (torques or wrench) and self._every:     # external_torques_rate: this state?
            if stamp_ns < self._next:
                torques = wrench = False
            else:                                   # on the rate's grid, unless far off it
                self._next = self._next + self._every if stamp_ns - self._next < self._every \
                    else stamp_ns + self._every
        if torques:
            self.torques_pub.publish(self._publishable_torques(stamp_ns, r))
        if wrench:
            self._publish_wrench(stamp_ns, q, r)

    def _publishable_torques(self, stamp_ns, r):
        if self._torques is not None:
            return self._torques(stamp_ns, r)
        msg = JointState(name=list(self.monitor.model.joint_names))
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
        _set_effort(msg, r)
        return msg

    def _publish_wrench(self, stamp_ns, q, r):
        link = self.monitor.link
        estimate = contact_wrench(self.monitor.model, link, q, r)
        if self._wrench is not None:
            self.wrench_pub.publish(self._wrench(stamp_ns, estimate.wrench))
        else:
            msg = WrenchStamped()
            msg.header.frame_id = link
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
            _set_wrench(msg, estimate.wrench)
            self.wrench_pub.publish(msg)
        missing = estimate.unobservable()
        if missing and 'unobservable' not in self.warned:
            self.warned.add('unobservable')
            self.log.warning(f'contact wrench at {link}: {", ".join(missing)} not '
                             'observable from its joints (published as NaN)')

    # --- services ---------------------------------------------------------------------------
    def _relearn(self, request, response):
        """~/relearn_thresholds: learn the auto thresholds again from free motion."""
        response.success, response.message = self.monitor.relearn()
        return response

    def _save(self, request, response):
        """~/save_thresholds: write the levels in use to ``contact_thresholds_out``."""
        response.success, response.message = self.monitor.save(
            self.params.contact_thresholds_out)
        return response

    def _rearm(self, request, response):
        ended = self.on_rearm() if self.on_rearm is not None else None
        response.success, response.message = True, self.monitor.rearm(ended)
        return response


def _set_effort(msg, values):
    msg.effort = array.array('d', np.ascontiguousarray(values, dtype=float).tobytes())


def _set_wrench(msg, v):
    msg.wrench.force = Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))
    msg.wrench.torque = Vector3(x=float(v[3]), y=float(v[4]), z=float(v[5]))
