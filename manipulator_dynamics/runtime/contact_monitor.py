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
The contact monitor: the momentum observer on a stream of joint states, and its levels.

What a commanding node's contact output (:mod:`..nodes.contact`) does with each accepted joint
state, without ROS: the observer rides through gaps in the stamps up to
:func:`~..contact.detection.ride_bound` and restarts past it (a new model, a clock that jumps
back, a changed gain: :meth:`ContactMonitor.reset`), saying why; it measures the stream's
period, against which the gain is checked; the levels are set by the one policy of
:mod:`~..contact.calibration` (as given, identified, or learnt over free motion by
:class:`~..contact.calibration.Learning`, which ``manipulator-dynamics contact`` runs over a log
too); and the :class:`~..contact.detection.ContactDetector` says free, contact, collision
(latched until :meth:`ContactMonitor.rearm`) or, while the observer settles, not watching.

The settings are read where they are used, into the one
:class:`~..contact.settings.ContactSettings` the replay of a log takes too
(:meth:`~..contact.settings.ContactSettings.of_parameters`: any object with a commanding node's
contact parameters as attributes, :data:`..nodes.contact.CONTACT_PARAMS`).  The monitor says
what it does through ``log`` (``info``, ``warning``, ``error``) and ``throttle`` (``warn(kind,
text)``), each level change through ``say(level)``, and a collision through ``on_collision(t s,
residual, what)``.
"""

import numpy as np

from ..contact.calibration import numbers, Refused, thresholds_yaml
from ..contact.detection import CONTACT, ContactDetector, FREE, MOMENT_MULTIPLE, \
    NOT_WATCHING, ride_bound
from ..contact.observer import beyond, observer_gains, SETTLING
from ..contact.settings import ContactSettings
from ..rigid.jacobian import ancestors

#: The observer's time constant must span at least this many state periods (K <= rate / 2):
#: shorter, the residual is each interval's raw momentum balance, noise and all.
PERIODS_PER_TIME_CONSTANT = 2.0
#: Intervals whose median is the stream's period, measured anew each window (the first
#: estimate after 5).
RATE_WINDOW = 50
#: A period that moved by more than this share since the gain was last checked against it is
#: checked again.
RATE_MOVED = 0.1


def gain_check(value):
    """Reason why ``value`` is not one or more finite gains > 0, or None."""
    if not value or not all(np.isfinite(v) and v > 0 for v in value):
        return f'must be finite numbers > 0 (1/s), one or one per joint, got {list(value)}'
    return None


def deepest_link(model):
    """Return the child link of the body with the most joints above it (the chain's last)."""
    depth = [len(ancestors(model, i)) for i in range(model.n)]
    return model.link_names[int(np.argmax(depth))] if model.n else model.base_link


class ContactMonitor:
    """The observer and the levels over one node's joint states (see the module)."""

    def __init__(self, settings, now_ns, log, throttle, say, on_collision=None):
        self.params, self.now_ns, self.log, self.throttle = settings, now_ns, log, throttle
        self.publish_level, self.on_collision = say, on_collision
        self.said = None                        # the level said last
        # since when (node clock, ns) and why contact detection has not been available
        self.blind_since, self.blind_why = None, ''
        self.model = self.observer = self.detector = self.calibration = None
        self.how = None                         # how the levels in use were set
        # the states' intervals (for their period), the last one's time since the origin (s),
        # the origin (the stamp the observer started at, ns) and the period (s)
        self.intervals, self.last, self.origin, self.period = [], None, None, None
        self.warned = set()                     # what a state lacked, said once

    # --- model and settings ---------------------------------------------------------------------
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
        """
        Start afresh on ``model`` (None: off); say why the observer restarts.

        Returns whether the observer runs: a gain or a ``contact_link`` that cannot work for
        the model turns it off, said.
        """
        self.model = model if self.params.external_torques else None
        self.observer = self.detector = self.calibration = None
        self.intervals, self.last, self.origin, self.period = [], None, None, None
        self.blind_since = None
        if self.model is None:
            return False
        self._blind(f'the observer started: {why}')
        try:
            self.observer = ContactSettings.of_parameters(self.params).observer(model)
            self.link = self.params.contact_link or deepest_link(model)
            if self.link not in model.frames:
                raise ValueError(f"contact_link '{self.link}' is not a link of model "
                                 f"'{model.name}'")
        except ValueError as e:
            self.log.error(f'external torques off: {e}')
            self.model = self.observer = None
            return False
        self.levels()
        self.log.info(f'external torques: momentum observer on {model.n} joints, gain '
                      f'{numbers(self.observer.gain)} 1/s, contact wrench at {self.link}; '
                      f'observer started ({why})')
        return True

    def levels(self):
        """Set the detector from the settings, or leave it to calibration (``auto``)."""
        self.detector, self.calibration = None, None
        try:
            levels, how, warning = ContactSettings.of_parameters(self.params).levels(
                self.model, self.observer.gain)
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
        it.  The payload estimate counts it in the load's deviations (:mod:`..nodes.payload`).
        """
        if self.detector is None or any(x is not None for x in self._given()):
            return None
        return self.detector.levels.spread()

    def _given(self):
        """Return the contact and collision levels given in N m, each None for ``auto``."""
        return ContactSettings.of_parameters(self.params).given_levels

    def _calibrate_anew(self):
        """Start learning the thresholds from free motion (any levels in use keep watching)."""
        settings = ContactSettings.of_parameters(self.params)
        self.calibration = settings.learning(self.model)
        self.log.info(f'contact thresholds: auto, learnt over {settings.calibration:g} s of '
                      'free motion once the observer has settled: keep the robot free of '
                      'contact until they are said')

    def _detect(self, levels, how):
        self.detector, self.how = ContactDetector(self.model, levels), how
        grows = (f', each times 1 + {numbers(levels.speed)} (|qd| - '
                 f'{numbers(levels.speed_from)})+ + {numbers(levels.torque)} (|tau| - '
                 f'{numbers(levels.torque_from)})+, tau the '
                 "model's torque (growing beyond the motion seen)" if levels.growing() else '')
        self.log.info(f'contact thresholds {how}: contact {numbers(levels.contact)} N m, '
                      f'collision {numbers(levels.collision)} N m{grows}')

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

    def observe(self, q, qd, effort, stamp_ns, keep=False):
        """
        Take one accepted joint state (model order) into the observer and the levels.

        What a collision's reaction needs, and nothing more: a commanding node calls it before
        the state's command, and publishes what it returns after the send.  Returns
        ``(stamp_ns, q, r)``, or None where there is nothing to publish.
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

    def _say(self, level):
        self.publish_level(level)
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

    # --- what a node's services ask -------------------------------------------------------------
    def relearn(self):
        """Learn the ``auto`` thresholds again from free motion: ``(done, what is said)``."""
        if self.observer is None:
            return False, 'external torques are off'
        if None not in self._given():
            return False, ('both thresholds are given in N m (contact_thresholds, '
                           'collision_thresholds): set them to auto to learn them')
        self._calibrate_anew()
        message = (f'learning the thresholds over {self.params.contact_calibration:g} s of free '
                   'motion; ' + ('the present levels watch until then'
                                 if self.detector is not None else 'no levels until then'))
        self.log.info(f'contact thresholds: {message} (~/relearn_thresholds)')
        return True, message

    def save(self, path):
        """Write the levels in use to ``path``: ``(done, what is said)``."""
        if self.detector is None:
            return False, 'no contact levels to save yet'
        if not path:
            return False, ('contact_thresholds_out is empty: set the file to write (ros2 param '
                           'set)')
        try:
            thresholds_yaml(self.model, self.detector.levels, self.observer.gain, self.how,
                            path)
        except OSError as e:
            return False, f'cannot write {path}: {e}'
        message = (f'saved to {path}: --ros-args --params-file {path} starts the node with '
                   'these levels as given')
        self.log.info(f'contact thresholds {message}')
        return True, message

    def rearm(self, ended=None):
        """
        Release a latched collision: return what is said (``ended``: what the reaction ended).

        ~/contact says free until the next state says otherwise.
        """
        released = self.detector.rearm() if self.detector is not None else None
        if released is not None:
            self._say(FREE)
            message = f're-armed after the {released.describe(self.model)} (peak)'
        elif self.detector is None:
            message = 'nothing to re-arm: no contact levels yet'
        else:
            message = 'nothing latched'
        if ended:
            message += f'; {ended}'
        if released is not None or ended:
            self.log.info(f'external torques: {message}')
        return message
