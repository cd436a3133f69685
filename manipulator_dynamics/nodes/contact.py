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
over a log too (:mod:`~..contact.replay`).  Learnt thresholds belong to the model: a restart
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
from ..contact.calibration import GROWTH, Learning, numbers, parse_thresholds, Refused, \
    resolve_thresholds, thresholds_yaml
from ..contact.detection import CONTACT, ContactDetector, FREE, MOMENT_MULTIPLE, \
    NOT_WATCHING, ride_bound
from ..contact.observer import beyond, MomentumObserver, observer_gains, SETTLING
from ..contact.reaction import REACTIONS, STOP_TIME
from ..contact.wrench import contact_wrench
from ..rigid.jacobian import ancestors
from ..wire import stamped_serialiser

#: The observer's time constant must span at least this many state periods (K <= rate / 2):
#: shorter, the residual is each interval's raw momentum balance, noise and all.
PERIODS_PER_TIME_CONSTANT = 2.0
#: Intervals whose median is the stream's period, measured anew each window (the first
#: estimate after 5).
RATE_WINDOW = 50
#: A period that moved by more than this share since the gain was last checked against it is
#: checked again.
RATE_MOVED = 0.1

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


def gain_check(value):
    """Reason why ``value`` is not one or more finite gains > 0, or None."""
    if not value or not all(np.isfinite(v) and v > 0 for v in value):
        return f'must be finite numbers > 0 (1/s), one or one per joint, got {list(value)}'
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
    Param('contact_calibration', 3.0, 'auto thresholds: seconds of free motion (some joint '
          'moving), after the observer has settled, whose residual sets them, a stop or '
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
    """The observer, the levels and their topics for one node (see the module)."""

    def __init__(self, node, params, now_ns, on_collision=None, on_rearm=None):
        self.node, self.params, self.now_ns = node, params, now_ns
        # the node's reaction: on_collision(t s, residual, what) on the state that latched a
        # collision; on_rearm() at ~/rearm (what it ended, said, or None)
        self.on_collision, self.on_rearm = on_collision, on_rearm
        self.log = QuickLogger(node)
        self.throttle = Throttled(node)       # a contact's start: at most one line a second
        # a state's worth each at 1 kHz: a recorder a tenth of a second late loses none
        self.torques_pub = node.create_publisher(JointState, '~/external_torques', 100)
        self.wrench_pub = node.create_publisher(WrenchStamped, '~/contact_wrench', 100)
        self.level_pub = node.create_publisher(UInt8, '~/contact', QoSProfile(
            depth=LEVELS_KEPT, durability=DurabilityPolicy.TRANSIENT_LOCAL,
            reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST))
        self.said = None                        # the level ~/contact said last
        # since when (node clock, ns) and why contact detection has not been available
        self.blind_since, self.blind_why = None, ''
        node.create_service(Trigger, '~/rearm', self._rearm)
        node.create_service(Trigger, '~/relearn_thresholds', self._relearn)
        node.create_service(Trigger, '~/save_thresholds', self._save)
        from rclpy.serialization import serialize_message
        self._level = [serialize_message(UInt8(data=k))      # published as is
                       for k in range(NOT_WATCHING + 1)]
        self.model = self.observer = self.detector = None
        self.warned = set()
        self._every = self._next = 0                # ns: external_torques_rate's period, next

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

    def check_gain(self, value):
        """Reason why the gains cannot work for the model and the state rate now, or None."""
        reason = gain_check(value)
        if reason or self.model is None:
            return reason
        try:
            gains = observer_gains(self.model, value)
        except ValueError as e:
            return str(e)
        rate = self._rate()
        if rate and gains.max() > rate / PERIODS_PER_TIME_CONSTANT:
            return (f'{gains.max():g}/s is too high for joint states at {rate:.4g} Hz: the time '
                    f'constant 1/K must span {PERIODS_PER_TIME_CONSTANT:g} state periods '
                    f'(K <= {rate / PERIODS_PER_TIME_CONSTANT:.4g}/s)')
        return None

    def set_model(self, model, why='a new model'):
        """Start afresh on ``model`` (None: the output off); say why the observer restarts."""
        self.model = model if self.params.external_torques else None
        self.observer = self.detector = self.calibration = None
        self.intervals, self.last, self.origin, self.period = [], None, None, None
        self.blind_since = None
        if self.model is None:
            return
        self._blind(f'the observer started: {why}')
        try:
            self.observer = MomentumObserver(model, self.params.observer_gain,
                                             friction=self.params.observer_friction)
            self.link = self.params.contact_link or deepest_link(model)
            if self.link not in model.frames:
                raise ValueError(f"contact_link '{self.link}' is not a link of model "
                                 f"'{model.name}'")
        except ValueError as e:
            self.log.error(f'external torques off: {e}')
            self.model = self.observer = None
            return
        torques = JointState(name=list(model.joint_names))
        self._torques = stamped_serialiser(torques, model.n, _set_effort)
        wrench = WrenchStamped()
        wrench.header.frame_id = self.link
        self._wrench = stamped_serialiser(wrench, 6, _set_wrench)
        self._countdown, self._listening = 0, (False, False)
        self._set_rate()
        self._levels()
        self.log.info(f'external torques: momentum observer on {model.n} joints, gain '
                      f'{numbers(self.observer.gain)} 1/s, contact wrench at {self.link}; '
                      f'observer started ({why})')

    def _set_rate(self):
        rate = self.params.external_torques_rate
        self._every, self._next = (round(1e9 / rate) if rate > 0 else 0), 0

    def _levels(self):
        """Set the detector from the parameters, or leave it to calibration (``auto``)."""
        self.detector, self.calibration = None, None
        source = getattr(self.params, 'identified_parameters', '')
        try:
            levels, how, warning = resolve_thresholds(
                self.model, *self._given(), self.observer.gain, source or None,
                [getattr(self.params, f'thresholds_{name}') for name in GROWTH])
        except ValueError as e:
            self.log.error(f'no contact levels: {e}')
            self._blind(f'no contact levels: {e}')
            return
        if warning:
            self.log.warning(f'contact thresholds: {warning}')
        if levels is not None:
            self._detect(levels, how)
            return
        self._calibrate_anew()
        self._blind('its thresholds are being learnt')

    def spread(self):
        """
        Return the free-motion spread the levels in use stand for, or None.

        Only levels learnt (``auto``: from a calibration or the identification's
        ``contact_spread``) measured what the model errs by; levels given in N m say nothing of
        it.  The payload estimate counts it in the load's deviations (:mod:`.nodes.payload`).
        """
        if self.detector is None or any(x is not None for x in self._given()):
            return None
        return self.detector.levels.spread()

    def _given(self):
        """Return the contact and collision levels given in N m, each None for ``auto``."""
        return (parse_thresholds(self.params.contact_thresholds),
                parse_thresholds(self.params.collision_thresholds))

    def _calibrate_anew(self):
        """Start learning the thresholds from free motion (any levels in use keep watching)."""
        self.calibration = Learning(self.model, self.params.contact_calibration,
                                    self._given())
        self.log.info(f'contact thresholds: auto, learnt over '
                      f'{self.params.contact_calibration:g} s of free motion once the observer '
                      'has settled: keep the robot free of contact until they are said')

    def _detect(self, levels, how):
        self.detector, self.how = ContactDetector(self.model, levels), how
        grows = (f', each times 1 + {numbers(levels.speed)} (|qd| - '
                 f'{numbers(levels.speed_from)})+ + {numbers(levels.torque)} (|tau| - '
                 f'{numbers(levels.torque_from)})+, tau the '
                 "model's torque (growing beyond the motion seen)" if levels.growing() else '')
        self.log.info(f'contact thresholds {how}: contact {numbers(levels.contact)} N m, '
                      f'collision {numbers(levels.collision)} N m{grows}')

    def on_parameters(self, changed):
        """Apply accepted changes of :data:`CONTACT_PARAMS`."""
        if 'external_torques_rate' in changed:
            self._set_rate()
        if compiling(self.node):
            return                  # the observer starts once they are (kernels_loaded)
        if changed & {'external_torques', 'observer_gain', 'observer_friction'}:
            self.set_model(self._node_model(), 'its parameters changed')
        elif self.model is not None and changed & {'contact_thresholds', 'collision_thresholds',
                                                   *(f'thresholds_{g}' for g in GROWTH)}:
            self._levels()
        elif self.model is not None and 'contact_link' in changed:
            self.set_model(self._node_model(), 'contact_link changed')

    # --- states -----------------------------------------------------------------------------
    def reset(self, why):
        """
        Start the observer again (a clock jump, a gap past :func:`ride_bound`), saying why.

        The levels are kept (they belong to the model); a calibration under way starts again
        (:meth:`_calibrate` refuses levels a stall or gaps made); until the observer has
        settled, ~/contact says :data:`NOT_WATCHING` where it would say free.
        """
        if self.observer is None or self.observer.since is None:
            return
        self.observer.reset()
        self.intervals, self.last, self.origin = [], None, None
        if self.calibration is not None:        # a stall: what it saw is cut in two, and the
            self.log.warning('contact thresholds: the calibration starts again: the observer '
                             f'restarted ({why}) while they were being learnt')
            self._calibrate_anew()              # motion across it unseen
        self._blind(f'the observer restarted: {why}')
        self.log.warning(f'external torques: observer reset ({why}); it settles again in '
                         f'{SETTLING * self.observer.time_constant:.3g} s, its contact levels '
                         'kept')

    def _blind(self, why):
        """Contact detection stops (``why``): ~/contact stops saying free, the time is kept."""
        if self.blind_since is None:
            self.blind_since, self.blind_why = self.now_ns(), why
        if self.said == FREE:
            self._say(NOT_WATCHING)

    def _rate(self):
        return 1.0 / self.period if self.period else None

    def summary(self):
        """
        Return ``(level, text)``: the observer's state for /diagnostics.

        0 (OK) while off or free; 1 (WARN) while contact detection is not available (before the
        first thresholds, or the observer settling after a restart: the reason, and for how
        long) and in contact; 2 (ERROR) on a collision latched until ``~/rearm`` (the levels of
        the log lines that said each).
        """
        if self.model is None or self.observer is None:
            return 0, 'off'
        if self.blind_since is not None:
            lasted = (self.now_ns() - self.blind_since) * 1e-9
            if self.observer.since is None:
                now = f'waiting for joint states (link {self.link})'
            elif self.detector is None and self.calibration is not None:
                now = (f'learning the contact thresholds: {self.calibration.moved:.3g} of '
                       f'{self.params.contact_calibration:g} s of free motion seen (keep the '
                       'robot free)')
            elif self.detector is None:
                now = 'no contact levels'
            else:
                now = 'the observer settling'
            return 1, (f'contact detection not available for {lasted:.3g} s '
                       f'({self.blind_why}): {now}')
        level = self.said if self.said is not None else FREE
        names = {FREE: 'free', CONTACT: 'contact'}
        relearning = '; relearning the thresholds' if self.calibration is not None else ''
        return (0 if level == FREE else 1 if level == CONTACT else 2,
                f'observing: {names.get(level, "collision (latched until ~/rearm)")}'
                + relearning)

    def on_state(self, q, qd, effort, stamp_ns):
        """Take one accepted joint state (model order); publish what it gives."""
        self.publish(self.observe(q, qd, effort, stamp_ns))

    def observe(self, q, qd, effort, stamp_ns, keep=False):
        """
        Take one accepted joint state (model order) into the observer and the levels.

        What a collision's reaction needs, and nothing more: a commanding node calls it before
        the state's command, and :meth:`publish` with what it returns after the send.  Returns
        ``(stamp_ns, q, r)`` for :meth:`publish`, or None where there is nothing to publish.
        ``r`` is the observer's own array, which the next state overwrites: ``keep`` returns a
        copy, for states observed one after another before any is published.
        """
        if self.observer is None:
            return None
        if qd is None or effort is None:
            missing = 'velocities' if qd is None else 'efforts'
            if missing not in self.warned:
                self.warned.add(missing)
                self.log.warning(f'external torques: joint_states carry no {missing}: no '
                                 'contact output (the momentum observer needs the measured '
                                 'velocities and the efforts the joints apply)')
            return None
        stamp_ns = stamp_ns or self.now_ns()           # unstamped states: their receipt
        if self.origin is None:
            self.origin = stamp_ns
        t = (stamp_ns - self.origin) * 1e-9              # seconds since the observer started
        if self.last is not None:
            dt = t - self.last
            if dt < 0:      # older than the last state taken (out of order after a reset):
                return None  # dropped; the observer never integrates back, nor stops the node
            if dt > 0:
                bound = ride_bound(self.observer.time_constant, self.period)
                if dt > bound:
                    self.reset(f'a gap of {dt:.3g} s in the joint states, past the '
                               f'{bound:.3g} s it rides through')
                    return self.observe(q, qd, effort, stamp_ns, keep)
                self.intervals.append(dt)
                count = len(self.intervals)
                if count == RATE_WINDOW or (count == 5 and self.period is None):
                    # the stream's period: their median (sorted: numpy's costs 0.1 ms there)
                    period = sorted(self.intervals)[count // 2]
                    if count == RATE_WINDOW:
                        self.intervals = []
                    # the gain checked again only when the rate moved (a check costs 0.1 ms)
                    moved = self.period is None or abs(period - self.period) > \
                        RATE_MOVED * self.period
                    self.period = period
                    if moved:
                        self._check_rate()
                        if self.observer is None:
                            return None
        self.last = t
        r = self.observer.update(t, q, qd, effort, self.period)
        if self.observer.since == t:                # the first state: nothing to say yet
            return None
        if self.calibration is not None:
            self._calibrate(t, r, qd, effort)
        if self.detector is not None:
            was = self.detector.level
            level = self.detector.step(r, stamp_ns * 1e-9, self.observer.band, qd, effort)
            if self.blind_since is not None:
                if self.observer.settled(t):
                    self.blind_since = None         # watching again
                elif level == FREE:                 # it cannot tell yet: not "free" (and no
                    level = NOT_WATCHING if self.said is not None else None    # first word)
            if level is not None and level != self.said:
                self._say(level)
            if level == CONTACT and was == FREE:
                self.throttle.warn('contact', f'external torques: contact at '
                                   f'{stamp_ns * 1e-9:.3f} s: {self._over(r, qd, effort)}')
            if self.detector.new:
                said = self.detector.collision.describe(self.model)
                self.log.error(f'external torques: {said} (above the collision thresholds: '
                               'latched until ~/rearm)')
                if self.on_collision is not None:
                    self.on_collision(stamp_ns * 1e-9, r.copy(), said)
        return stamp_ns, q, r.copy() if keep else r

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

    def _say(self, level):
        self.level_pub.publish(self._level[level])
        self.said = level

    def _over(self, r, qd, effort):
        """Name the joints above their contact level, with the residual of each."""
        contact = self.detector.levels.at(qd, np.subtract(effort, r))[0]
        over = np.flatnonzero(beyond(r, self.observer.band) > contact)
        return ', '.join(f'{self.model.joint_names[i]} {r[i]:.3g} N m' for i in over)

    def _check_rate(self):
        reason = self.check_gain(self.params.observer_gain)
        if reason:
            self.log.error(f'external torques off: observer_gain {reason}; set a lower one '
                           '(ros2 param set)')
            self.model = self.observer = self.detector = None

    def _calibrate(self, t, r, qd, effort):
        """Learn from the settled residual until ``contact_calibration`` s of it had motion."""
        if not self.observer.settled(t):
            return
        learning = self.calibration               # the states' own stamps tell the moments
        try:
            learnt = learning.add(t, self.origin * 1e-9 + t, r, qd, effort, self.observer.band)
        except ValueError as e:
            self.calibration = None
            self.log.error(f'contact thresholds not learnt from {learning.moved:.3g} s of free '
                           f'motion: {e}')
            self._blind(f'no contact levels: {e}')
            return
        if learnt is None:
            return
        if isinstance(learnt, Refused):         # not used: learnt again, nothing watching
            self.log.warning(learnt.text)
            self._calibrate_anew()
            if self.detector is None:           # (relearning: the present levels watch)
                self._blind('its thresholds are being learnt again')
            return
        for warning in learnt.warnings():
            self.log.warning(f'contact thresholds: {warning}')
        moments = learnt.moments
        if moments:
            self.log.warning('contact thresholds: moments left out of the spread (a stop, a '
                             'spike: above ' f'{MOMENT_MULTIPLE:g} x the 99.9th percentile): '
                             + ', '.join(m.describe() for m in moments[:10])
                             + (f' and {len(moments) - 10} more' if len(moments) > 10
                                else ''))
        self.calibration = None
        self._detect(learnt.levels, learnt.how)

    def _publishable_torques(self, stamp_ns, r):
        if self._torques is not None:
            return self._torques(stamp_ns, r)
        msg = JointState(name=list(self.model.joint_names))
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
        _set_effort(msg, r)
        return msg

    def _publish_wrench(self, stamp_ns, q, r):
        estimate = contact_wrench(self.model, self.link, q, r)
        if self._wrench is not None:
            self.wrench_pub.publish(self._wrench(stamp_ns, estimate.wrench))
        else:
            msg = WrenchStamped()
            msg.header.frame_id = self.link
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
            _set_wrench(msg, estimate.wrench)
            self.wrench_pub.publish(msg)
        missing = estimate.unobservable()
        if missing and 'unobservable' not in self.warned:
            self.warned.add('unobservable')
            self.log.warning(f'contact wrench at {self.link}: {", ".join(missing)} not '
                             'observable from its joints (published as NaN)')

    def _relearn(self, request, response):
        """~/relearn_thresholds: learn the auto thresholds again from free motion."""
        if self.observer is None:
            response.success, response.message = False, 'external torques are off'
            return response
        if None not in self._given():
            response.success = False
            response.message = ('both thresholds are given in N m (contact_thresholds, '
                                'collision_thresholds): set them to auto to learn them')
            return response
        self._calibrate_anew()
        response.success = True
        response.message = (f'learning the thresholds over {self.params.contact_calibration:g} s '
                            'of free motion; ' + ('the present levels watch until then'
                                                  if self.detector is not None else
                                                  'no levels until then'))
        self.log.info(f'contact thresholds: {response.message} (~/relearn_thresholds)')
        return response

    def _save(self, request, response):
        """~/save_thresholds: write the levels in use to ``contact_thresholds_out``."""
        path = self.params.contact_thresholds_out
        response.success = False
        if self.detector is None:
            response.message = 'no contact levels to save yet'
        elif not path:
            response.message = ('contact_thresholds_out is empty: set the file to write '
                                '(ros2 param set)')
        else:
            try:
                thresholds_yaml(self.model, self.detector.levels, self.observer.gain,
                                self.how, path)
            except OSError as e:
                response.message = f'cannot write {path}: {e}'
            else:
                response.success = True
                response.message = (f'saved to {path}: --ros-args --params-file {path} starts '
                                    'the node with these levels as given')
                self.log.info(f'contact thresholds {response.message}')
        return response

    def _rearm(self, request, response):
        response.success = True
        ended = self.on_rearm() if self.on_rearm is not None else None
        released = self.detector.rearm() if self.detector is not None else None
        if released is not None:
            self._say(FREE)                     # until the next state says otherwise
            response.message = f're-armed after the {released.describe(self.model)} (peak)'
        elif self.detector is None:
            response.message = 'nothing to re-arm: no contact levels yet'
        else:
            response.message = 'nothing latched'
        if ended:
            response.message += f'; {ended}'
        if released is not None or ended:
            self.log.info(f'external torques: {response.message}')
        return response


def deepest_link(model):
    """Return the child link of the body with the most joints above it (the chain's last)."""
    depth = [len(ancestors(model, i)) for i in range(model.n)]
    return model.link_names[int(np.argmax(depth))] if model.n else model.base_link


def _set_effort(msg, values):
    msg.effort = array.array('d', np.ascontiguousarray(values, dtype=float).tobytes())


def _set_wrench(msg, v):
    msg.wrench.force = Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))
    msg.wrench.torque = Vector3(x=float(v[3]), y=float(v[4]), z=float(v[5]))
