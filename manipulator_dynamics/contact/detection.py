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
Contact and collision: two levels per joint, and a collision latched until it is re-armed.

As Franka's interface has them: contact above the lower level, collision above the upper.

The levels are the robot's own: an observer's residual in free motion is the model's error
(friction not captured, inertial parameters a little off, sensor offsets), and a contact is what
stands out of it.  That error is not one number: friction errors grow with the joint's speed,
inertial ones with the torque the model says the motion needs (its accelerations, its speeds'
Coriolis terms, its gravity), so a level learnt as one number on one stretch of motion is
crossed by a faster one.  Each joint's *spread* is therefore a function of its state
(:class:`Spread`)::

    spread(qd, tau) = rest + speed (|qd| - fastest)+ + torque (|tau| - largest)+,

``tau`` the model's torque for the motion (``effort - r``: what the joint applied less what the
observer calls external), ``(x)+`` its positive part.  :func:`motion_spread` learns it from free
motion of ``|r| - band`` (the quantity the levels judge: what dry friction may hold at rest is
the band's, :mod:`.observer`): ``rest`` is the :data:`SPREAD_QUANTILE` quantile over the whole
calibration (a robust statistic, not the maximum), so that within the speeds and torques the
calibration saw (``fastest``, ``largest``: its largest ``|qd|`` and ``|tau|``) the levels are
one number, as tight as the calibration allows; beyond them, they grow at the rate the error
grew with speed and torque across the calibration, the slopes of its upper envelope (the
:data:`ENVELOPE_EXPECTILE` expectile by asymmetric least squares over ``(1, |qd|, |tau|)``,
coefficients >= 0, scaled to the same quantile).  A fitted envelope used throughout would be
tighter at rest, and on a real Panda it was crossed by held-out free motion (1.4 times the
contact level) where the one number was not (0.92): the shape of the error is measured well
enough to extrapolate its growth, not to lower a level below what free motion reached.  The
contact level is :data:`CONTACT_MULTIPLE` times the spread and the collision level
:data:`COLLISION_MULTIPLE` times it, at every state.
No single moment can set it: a stop at the end of a run, a current spike, a reversal's
excursion move a quantile by what they weigh in the run, not by their height; those that stand
above the contact level (a stop, a spike) are left out and reported with their times, and a
user may leave out stretches of a log.  The spread may also come from an identification: the
identified model's residual over its validation logs, written beside the parameters
(:func:`spread_of_parameters`).  It is the observer's residual that is measured, not the
model's torque error: on a real Panda the residual's spread was twice its model's largest
torque error on the same data, the robot's velocity signal differentiated into the momentum (a
torque error is computed from filtered positions; a live observer reads the velocities as they
come).  :func:`free_motion_spread` is the rule without the state, one number per joint.
"""

from dataclasses import dataclass
import math
from typing import NamedTuple

from numba import njit
import numpy as np

from .observer import beyond, DEFAULT_GAIN, observe, observer_gains, SETTLING, STILL
from .._inputs import per_joint
from .._jit import BOOL, ONE_STATE, OUT_VECTOR, Signature, VECTOR

#: Contact above this many times the spread of free motion (its :data:`SPREAD_QUANTILE`
#: quantile): free motion stays under it but for its moments, which are left out and said.
CONTACT_MULTIPLE = 2.0
#: Collision above this many times the spread: twice the contact level.
COLLISION_MULTIPLE = 4.0
#: The least spread, as a share of the largest effort any joint applied over the stretch: no
#: model of a real robot is better than 0.1 % of its load, and a simulated robot held by its own
#: exact model has a residual of 1e-14 N m, whose thresholds any rounding would cross.
FLOOR = 1e-3

#: A joint's spread: this quantile of its ``|r|`` over free motion, a thousandth of the run
#: above it (a robust statistic: on a real arm the maximum of a run was set by the one stop at
#: its end, 88 N m, where the 99.9th percentile was 17)...
SPREAD_QUANTILE = 0.999
#: ... and how many times above it a moment stands: what the contact level calls a contact.
MOMENT_MULTIPLE = CONTACT_MULTIPLE
#: Passes of :func:`free_motion_spread`'s clipping at most.
CLIPPING_PASSES = 100
#: The envelope whose slopes say how the spread grows beyond the calibration: this expectile of
#: ``|r| - band`` (asymmetric least squares, each sample above it weighing 99 times one below).
#: It passes through the top of the residual, where a level must stand, yet rests on every
#: sample (a quantile regression rests on the few it passes through); scaled to the quantile's
#: height (:data:`SPREAD_QUANTILE`).  On a simulated arm with its inertia 15 % and its friction
#: 20 % off, its torque share came out at 0.115 and 0.21 (the errors' 13 % and 18 %).
ENVELOPE_EXPECTILE = 0.99
#: Passes of the envelope's reweighting at most: it stops when no sample changes side (8-20
#: passes on the arms tried); past this many, it did not converge, and says so.
ENVELOPE_PASSES = 200
#: A slope is measured only across a span of its term: a joint that turned slower than this
#: (rad/s, ten times :data:`.observer.STILL`, the velocity's noise) in the calibration has no
#: speed slope (a wrist carried along at 0.03 rad/s set one of 130 N m per rad/s on noise)...
SPEED_SPAN = 0.1
#: ... nor a torque slope one whose model's torque varied by less than this share of its
#: largest (a joint held against gravity alone: its error is the rest's).
TORQUE_SPAN = 0.1
#: Samples the envelope is fitted on at most (every k-th beyond): its three coefficients need
#: far fewer, and the height is taken over every sample.
ENVELOPE_ROWS = 20_000

FREE, CONTACT, COLLISION = 0, 1, 2
#: What dynamics_node's ``~/contact`` says while it cannot tell (no thresholds yet, the observer
#: settling after a restart): never "free" then.  Not a level of :class:`ContactDetector`.
NOT_WATCHING = 3
LEVEL_NAMES = ('free', 'contact', 'collision', 'not watching')


class Thresholds(NamedTuple):
    """
    Per-joint levels, N m (or N): ``contact (n,)`` below ``collision (n,)``, in the motion seen.

    Both grow with the joint's state by the same factor, ``1 + speed (|qd| - speed_from)+ +
    torque (|tau| - torque_from)+`` (``speed (n,)`` s/rad, ``torque (n,)`` 1/(N m), from
    ``speed_from (n,)`` rad/s and ``torque_from (n,)`` N m; ``tau`` the model's torque
    ``effort - r``): a :class:`Spread`'s growth.  None: constant levels (growth), from 0 (from).
    """

    contact: np.ndarray
    collision: np.ndarray
    speed: np.ndarray = None
    torque: np.ndarray = None
    speed_from: np.ndarray = None
    torque_from: np.ndarray = None

    def growing(self):
        """Tell whether the levels follow the motion (some growth not zero)."""
        return any(x is not None and np.any(x) for x in (self.speed, self.torque))

    def at(self, qd, tau):
        """Return the ``(contact, collision)`` levels at ``qd, tau`` (``(n,)`` or ``(N, n)``)."""
        factor = np.ones(np.shape(qd))
        for growth, x, start in ((self.speed, qd, self.speed_from),
                                 (self.torque, tau, self.torque_from)):
            if growth is not None:
                factor = factor + growth * _beyond(x, start)
        return self.contact * factor, self.collision * factor

    def spread(self):
        """Return the :class:`Spread` these levels stand at :data:`CONTACT_MULTIPLE` times."""
        rest = np.asarray(self.contact, dtype=float) / CONTACT_MULTIPLE
        zero = np.zeros_like(rest)
        return Spread(rest, *(rest * x if x is not None else zero
                              for x in (self.speed, self.torque)),
                      *(np.asarray(x, dtype=float) if x is not None else zero
                        for x in (self.speed_from, self.torque_from)))


def _beyond(x, start):
    """``(|x| - start)+``, ``start`` None: ``|x|``."""
    x = np.abs(x)
    return x if start is None else np.maximum(x - start, 0.0)


class Spread(NamedTuple):
    """
    Each joint's spread of free motion as a function of its state, N m (or N).

    ``rest + speed (|qd| - speed_from)+ + torque (|tau| - torque_from)+``: ``rest (n,)`` N m
    within the motion seen, ``speed (n,)`` N m per rad/s beyond ``speed_from (n,)`` rad/s,
    ``torque (n,)`` the share of the model's torque ``tau`` (``effort - r``) beyond
    ``torque_from (n,)`` N m.
    """

    rest: np.ndarray
    speed: np.ndarray
    torque: np.ndarray
    speed_from: np.ndarray
    torque_from: np.ndarray

    @classmethod
    def constant(cls, values):
        """Return a spread that does not follow the motion: ``values (n,)`` at every state."""
        values = np.asarray(values, dtype=float)
        return cls(values, *(np.zeros_like(values) for _ in range(4)))

    def at(self, qd, tau):
        """Return the spread at the states ``qd, tau`` (``(n,)`` or ``(N, n)``)."""
        return (self.rest + self.speed * _beyond(qd, self.speed_from)
                + self.torque * _beyond(tau, self.torque_from))

    def at_least(self, floor):
        """Return this spread with its rest at least ``floor`` (N m), the growth in N m kept."""
        return self._replace(rest=np.maximum(self.rest, floor))

    def growing(self):
        """Tell whether the spread follows the motion (some growth not zero)."""
        return bool(np.any(self.speed) or np.any(self.torque))


#: A spread's terms in an identified parameters YAML (``contact_spread``), :class:`Spread`'s
#: order: ``peak`` is its rest.
SPREAD_KEYS = ('peak', 'speed', 'torque', 'speed_from', 'torque_from')


def as_spread(spread):
    """Return ``spread`` as a :class:`Spread`: one already, or one number per joint."""
    return spread if isinstance(spread, Spread) else Spread.constant(spread)


#: The observer rides through a gap of this many state periods at least...
GAP = 10
#: ... and of this many of its slowest time constants, ln(1 / FLOOR) (138 ms at 50/s): see
#: :func:`ride_bound`.
RIDE_TIME_CONSTANTS = math.log(1.0 / FLOOR)


def ride_bound(time_constant, period):
    """
    Return the longest gap in the states (s) the observer integrates across, not restarting.

    Across a gap of ``dt`` the momentum's change is exact (``p`` is a state), the state terms
    go by the trapezoid rule and the efforts by their ends' mean, what is not known of them in
    the dry-friction band; the residual keeps ``exp(-K dt)`` of what it held and takes the rest
    from the gap's mean.  Past ``ln(1 / FLOOR) / K`` (:data:`RIDE_TIME_CONSTANTS` time
    constants: 138 ms at 50/s), what it held weighs less than :data:`.detection.FLOOR`, the
    least error of a robot's torque model against its load: nothing of the observer's state
    survives, and its estimate would be an average over motion it never saw.  It restarts there
    instead (its levels kept).  Never below :data:`GAP` periods of the stream.
    """
    return max(RIDE_TIME_CONSTANTS * time_constant, GAP * period if period else 0.0)


def observed_stretches(t, gains):
    """
    Cut a log's rows where the observer starts again: at gaps past :func:`ride_bound`.

    ``t`` the stamps, ``gains`` the observer's (:func:`.observer.observer_gains`).  Returns the
    stretches' row indices, as dynamics_node observes them (it integrates across shorter gaps
    with the states' own stamps), and the bound (s).
    """
    t = np.asarray(t, dtype=float)
    steps = np.diff(t)
    period = float(np.median(steps[steps > 0])) if (steps > 0).any() else 0.0
    bound = ride_bound(1.0 / np.min(gains), period)
    return np.split(np.arange(len(t)), np.flatnonzero(steps > bound) + 1), bound


def thresholds(model, contact, collision):
    """
    Return checked :class:`Thresholds`: one value for every joint, or one per joint.

    Raises ``ValueError`` naming the joint whose threshold is not finite and > 0, or whose
    collision level is not above its contact level.
    """
    levels = [per_joint(model, value, f'{what} threshold', 'N m')
              for what, value in (('contact', contact), ('collision', collision))]
    for i in np.flatnonzero(levels[1] <= levels[0]):
        raise ValueError(f"collision threshold of joint '{model.joint_names[i]}' "
                         f'({levels[1][i]:g}) must be above its contact threshold '
                         f'({levels[0][i]:g})')
    return Thresholds(*levels)


def thresholds_from_spread(model, spread):
    """
    :class:`Thresholds` at :data:`CONTACT_MULTIPLE` and :data:`COLLISION_MULTIPLE` x spread.

    ``spread``: a :class:`Spread` (the levels follow the motion as it does) or ``(n,)`` N m
    (constant levels).
    """
    spread = as_spread(spread)
    rest = np.asarray(spread.rest, dtype=float)
    for i in np.flatnonzero(~(np.isfinite(rest) & (rest > 0))):
        raise ValueError(f"joint '{model.joint_names[i]}': its free-motion spread is "
                         f'{rest[i]:g}; thresholds need a positive one (a calibration in '
                         'which the joint moved, with efforts measured)')
    for name, term in zip(Spread._fields[1:], spread[1:]):
        for i in np.flatnonzero(~(np.isfinite(term) & (np.asarray(term) >= 0))):
            raise ValueError(f"joint '{model.joint_names[i]}': its spread's {name} is "
                             f'{term[i]:g}; it must be finite and >= 0')
    levels = thresholds(model, CONTACT_MULTIPLE * rest, COLLISION_MULTIPLE * rest)
    if not spread.growing():
        return levels
    return levels._replace(speed=np.asarray(spread.speed, dtype=float) / rest,
                           torque=np.asarray(spread.torque, dtype=float) / rest,
                           speed_from=np.asarray(spread.speed_from, dtype=float),
                           torque_from=np.asarray(spread.torque_from, dtype=float))


@dataclass(frozen=True)
class Moment:
    """A stretch of free motion left out of a joint's spread: when, and its peak ``|r|``."""

    joint: str
    start: float
    end: float
    peak: float

    def describe(self):
        """One phrase: the joint, the times and the peak."""
        when = f'{self.start:.3f} s' if self.end == self.start else \
            f'{self.start:.3f}-{self.end:.3f} s'
        return f'{self.joint} at {when} ({self.peak:.3g} N m)'


def free_motion_spread(model, residual, t=None, exclude=()):
    """
    Return ``(spread (n,), moments)``: each joint's spread over free motion, moments left out.

    The rule without the state (:func:`motion_spread` with no speeds or torques): the
    :data:`SPREAD_QUANTILE` quantile of each joint's ``|r|`` (a thousandth of the run above
    it), not its maximum: a short excursion (a reversal, a spike) moves it by what it weighs in
    the run, not by its height.  A moment is a run of samples whose ``|r|`` stands above
    :data:`MOMENT_MULTIPLE` times that quantile, the contact level it sets (a controller
    stopping the arm within a sample, a current spike: on a real arm one such stop reached 88
    N m, where the run's 99.9th percentile was 17): the level would have called it a contact,
    so it is left out and reported.  A moment longer than a thousandth of the run lifts the
    quantile itself, so the rest is judged again, until nothing stands out (at most
    :data:`CLIPPING_PASSES` times: a stop decaying through the observer's lag shrinks by a
    quarter a pass).  A run whose residual is as even as a simulation's has no moment: every
    sample of it stays under the contact level.  ``t (N,)``: the samples' times (default: their
    index), for the moments' times and ``exclude``, stretches ``[(start, end), ...]`` (s) to
    leave out (a handling of the arm, a known bump).  ``moments``: a :class:`Moment` per run
    left out.
    """
    spread, moments = motion_spread(model, residual, t, exclude)
    return spread.rest, moments


def motion_spread(model, residual, t=None, exclude=(), *, band=None, qd=None, tau=None):
    """
    Return ``(spread, moments)``: each joint's :class:`Spread` over free motion, moments left out.

    ``residual (N, n)``: the observer's ``r``; ``band (N, n)``: its dry-friction band (the
    levels judge ``|r| - band``: :func:`.observer.beyond`); ``qd (N, n)``, ``tau (N, n)``: the
    velocities and the model's torque (``effort - r``) the spread grows with.  Without ``qd``
    and ``tau`` the spread is one number per joint (:func:`free_motion_spread`).  For each
    joint: ``rest``, the :data:`SPREAD_QUANTILE` quantile of ``|r| - band``, moments (above
    :data:`MOMENT_MULTIPLE` times it, where the contact level stands) left out until none
    stands out, as :func:`free_motion_spread` says (``t`` and ``exclude`` as there);
    ``speed_from``, ``torque_from``: the largest ``|qd|`` and ``|tau|`` of the samples kept;
    ``speed``, ``torque``: the slopes of the :data:`ENVELOPE_EXPECTILE` expectile of ``|r| -
    band`` over ``(1, |qd|, |tau|)`` (>= 0), scaled by the :data:`SPREAD_QUANTILE` quantile of
    ``(|r| - band)`` over it; none where the calibration did not span its term
    (:data:`SPEED_SPAN`, :data:`TORQUE_SPAN`).  ``ValueError`` for residuals that are not
    ``(N >= 2, n)`` and finite, and where the envelope did not converge (named with its joint).
    """
    r = np.abs(np.asarray(residual, dtype=float))
    if r.ndim != 2 or r.shape[1] != model.n or r.shape[0] < 2:
        raise ValueError(f'residual must have shape (N, {model.n}) with N >= 2, got {r.shape}')
    if not np.all(np.isfinite(r)):
        raise ValueError('residual has non-finite values')
    if band is not None:
        r = np.maximum(r - np.asarray(band, dtype=float), 0.0)
    grows = qd is not None and tau is not None
    if grows:
        qd, tau = (np.abs(np.asarray(x, dtype=float)) for x in (qd, tau))
        for name, x in (('qd', qd), ('tau', tau)):
            if x.shape != r.shape or not np.all(np.isfinite(x)):
                raise ValueError(f"{name} must be finite with the residual's shape {r.shape}, "
                                 f'got {x.shape}')
    t = np.arange(len(r), dtype=float) if t is None else np.asarray(t, dtype=float)
    keep = np.ones(len(r), dtype=bool)
    for start, end in exclude:
        keep &= ~((t >= start) & (t <= end))
    if keep.sum() < 2:
        raise ValueError(f'the stretches left out ({list(exclude)}) leave fewer than two samples')
    terms, moments = np.zeros((5, model.n)), []
    for j, name in enumerate(model.joint_names):
        rest = keep.copy()
        for _ in range(CLIPPING_PASSES):        # a long moment lifts the quantile: clip again
            over = rest & (r[:, j] > MOMENT_MULTIPLE * np.quantile(r[rest, j], SPREAD_QUANTILE))
            if not over.any():
                break
            rest &= ~over
        terms[0, j] = np.quantile(r[rest, j], SPREAD_QUANTILE)
        if grows:
            speed, torque = qd[rest, j], tau[rest, j]
            spans = (speed.max() >= SPEED_SPAN,
                     np.ptp(torque) >= TORQUE_SPAN * torque.max() and torque.max() > 0)
            X = np.c_[np.ones(rest.sum()), speed * spans[0], torque * spans[1]]
            shape = _envelope(r[rest, j], X, name)
            height = np.quantile(r[rest, j] / _positive(X @ shape), SPREAD_QUANTILE)
            terms[1:3, j] = height * shape[1:]
            terms[3:, j] = qd[rest, j].max(), tau[rest, j].max()
        edges = np.flatnonzero(np.diff(np.r_[0, (keep & ~rest).astype(np.int8), 0]))
        for a, b in zip(edges[::2], edges[1::2]):
            moments.append(Moment(name, float(t[a]), float(t[b - 1]), float(r[a:b, j].max())))
    moments.sort(key=lambda m: (m.start, m.joint))
    return Spread(*terms), moments


def _positive(shape):
    """Return the envelope's values, at least a thousandth of its largest (it may pass 0)."""
    top = shape.max() if len(shape) else 0.0
    return np.maximum(shape, 1e-3 * top) if top > 0 else np.ones_like(shape)


def _envelope(y, X, joint):
    """
    Return ``c (m,) >= 0``: the :data:`ENVELOPE_EXPECTILE` expectile of ``y`` over ``X (N, m)``.

    Asymmetric least squares, reweighted until no sample changes side (Newey & Powell 1987);
    each pass a least squares with ``c >= 0`` over the ``m`` terms (:func:`_nonnegative`).  On
    at most :data:`ENVELOPE_ROWS` rows, every k-th.  ``ValueError`` naming ``joint`` where it
    did not converge in :data:`ENVELOPE_PASSES`.
    """
    stride = -(-len(y) // ENVELOPE_ROWS)
    y, X = y[::stride], X[::stride]
    scale = X.max(axis=0)
    scale[~(scale > 0)] = 1.0
    Z = X / scale
    weight, above = np.full(len(y), 0.5), None
    for _ in range(ENVELOPE_PASSES):
        Zw = Z * weight[:, None]
        c = _nonnegative(Zw.T @ Z, Zw.T @ y)
        side = y > Z @ c
        if above is not None and np.array_equal(side, above):
            return c / scale
        above = side
        weight = np.where(side, ENVELOPE_EXPECTILE, 1.0 - ENVELOPE_EXPECTILE)
    raise ValueError(f"joint '{joint}': the envelope of its free-motion residual did not "
                     f'converge in {ENVELOPE_PASSES} passes (samples kept changing side)')


def _nonnegative(A, b):
    """Return ``c >= 0`` minimising ``c.A.c - 2 b.c`` (``A (m, m)`` s.p.s.d.): every face tried."""
    m = len(b)
    best, value = np.zeros(m), 0.0
    for mask in range(1, 2 ** m):
        free = [i for i in range(m) if mask >> i & 1]
        c = np.zeros(m)
        c[free] = np.linalg.lstsq(A[np.ix_(free, free)], b[free], rcond=None)[0]
        if np.all(c >= 0) and c @ A @ c - 2 * b @ c < value:
            best, value = c, c @ A @ c - 2 * b @ c
    return best


def learn_thresholds(model, residual, efforts=None, t=None, exclude=(), *, band=None, qd=None):
    """
    Learn the thresholds from the observer's residual over free motion, ``(N, n)``.

    Each joint's spread is the :data:`SPREAD_QUANTILE` quantile of its ``|r|``, the moments
    left out (:func:`free_motion_spread`, with ``t`` and ``exclude``; sensor offsets and the
    residual's excursions at reversals included: the contact level then stands above all free
    motion showed but its moments, and the observer's band adds what dry friction may hold at
    rest, which a stretch of motion does not show), and at least :data:`FLOOR` times the
    largest of the ``efforts`` ``(N, n)`` the joints applied over the same stretch, where
    given.  With the ``band``, the velocities ``qd`` and the ``efforts`` (all ``(N, n)``), the
    levels follow the motion: :func:`motion_spread`'s :class:`Spread`, of ``|r| - band``.  The
    stretch should move every joint as the task will, and start once the observer has settled
    (5 time constants after its first state).
    """
    if qd is not None and efforts is not None:
        efforts = np.asarray(efforts, dtype=float)
        spread, _ = motion_spread(model, residual, t, exclude, band=band, qd=qd,
                                  tau=efforts - np.asarray(residual, dtype=float))
    else:
        spread = Spread.constant(free_motion_spread(model, residual, t, exclude)[0])
    if efforts is not None:
        spread = spread.at_least(FLOOR * np.abs(efforts).max())
    return thresholds_from_spread(model, spread)


def residual_spread(model, data, gain=DEFAULT_GAIN, *, friction=True, still=STILL,
                    topic='/joint_states', exclude=(), report=False):
    """
    Return each joint's :class:`Spread` over logs of free motion: what thresholds stand above.

    ``data``: logs with the robot's measured velocities (CSV files, numpy archives, rosbag2
    recordings, mappings ``t, q, qd, tau``; see
    :func:`~manipulator_dynamics.recordings.log.read_states`), on the robot's clock where
    their velocities allow it.  Each log is observed as the node observes it, across gaps up
    to :func:`ride_bound` and from rest again past one (:func:`observed_stretches`), the first
    :data:`.observer.SETTLING` time constants of each stretch left out.  The spread is
    :func:`motion_spread`'s over every log's settled states together (one envelope: the
    slowest log and the fastest both shape it), at rest at least :data:`FLOOR` of the largest
    effort, moments (a stop, a spike) left out, and the stretches ``exclude``
    (``[(start, end), ...]`` in the log's seconds, for every log).
    With ``report``, ``(spread, moments)``, the :class:`Moment` s left out.
    ``IdentificationError`` where a log lacks the velocities; ``ValueError`` where no log has
    two settled states.
    """
    from ..recordings.log import read_states

    gains = observer_gains(model, gain)
    seen = {'r': [], 'band': [], 'qd': [], 'tau': [], 't': []}
    for states in read_states(model, data, topic):
        t, q, qd, tau = states.t, states.q, states.qd, states.tau
        for rows in observed_stretches(t, gains)[0]:
            settled = t[rows] - t[rows][0] >= SETTLING / gains.min()
            if settled.any():
                r, band = observe(model, t[rows], q[rows], qd[rows], tau[rows], gains,
                                  friction=friction, still=still)
                for key, x in (('r', r), ('band', band), ('qd', qd[rows]),
                               ('tau', tau[rows] - r), ('t', t[rows])):
                    seen[key].append(x[settled])
    seen = {key: np.concatenate(x) if x else np.zeros((0, model.n)) for key, x in seen.items()}
    if len(seen['t']) < 2:
        raise ValueError('no log has two states of free motion once the observer settled '
                         f'({SETTLING:g} time constants after each start)')
    spread, moments = motion_spread(model, seen['r'], seen['t'], exclude, band=seen['band'],
                                    qd=seen['qd'], tau=seen['tau'])
    spread = spread.at_least(FLOOR * np.abs(seen['tau'] + seen['r']).max())     # the efforts
    return (spread, moments) if report else spread


def spread_yaml(model, spread, gain, source):
    """
    Make the ``contact_spread`` entry of an identified parameters YAML, as a mapping.

    ``identify --validate LOG --parameters-out`` writes the identified model's
    :func:`residual_spread` on the validation logs, with the gain it was measured at,
    so that a node's ``contact_thresholds: auto`` can stand on data the fit did not see.
    ``peak``: each joint's spread within the motion seen, N m; ``speed``: what it grows by per
    rad/s beyond ``speed_from`` rad/s (N m s/rad); ``torque``: by each N m of the model's
    torque beyond ``torque_from`` N m (a share).
    """
    spread = as_spread(spread)
    return {'observer_gain': float(gain), 'source': str(source),
            **{key: {j: float(v) for j, v in zip(model.joint_names, values)}
               for key, values in zip(SPREAD_KEYS, spread)}}


def spread_of_parameters(model, source, gain):
    """
    Read ``contact_spread`` from an identified parameters YAML (path, text or mapping).

    Returns the :class:`Spread` in the model's joint order (constant where the document has
    no ``speed`` and ``torque``: one written before the levels followed the motion), or None
    where the document has none.  ``ValueError`` where it was measured at another observer
    gain (the residual's noise grows with the gain: calibrate at this one instead) or lacks a
    joint.
    """
    from ..model import read_yaml, URDFError

    data = read_yaml(source, 'parameters', URDFError)
    entry = data.get('contact_spread') if isinstance(data, dict) else None
    if not entry:
        return None
    try:
        measured_at = np.asarray(entry['observer_gain'], dtype=float)
        terms = [{str(j): float(v) for j, v in entry[key].items()}
                 for key in SPREAD_KEYS if key in entry]
        if len(terms) not in (1, len(SPREAD_KEYS)) or 'peak' not in entry:
            raise KeyError(', '.join(SPREAD_KEYS))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise URDFError('contact_spread must hold observer_gain and a peak per joint (and '
                        f'{", ".join(SPREAD_KEYS[1:])}, all or none)') from None
    if not np.allclose(measured_at, gain, rtol=1e-9):
        raise ValueError(f'the contact spread in the parameters was measured at observer gain '
                         f'{entry["observer_gain"]} 1/s, not this observer\'s '
                         f'{np.unique(gain).tolist()}: calibrate on free motion instead')
    missing = [j for j in model.joint_names if any(j not in term for term in terms)]
    if missing:
        raise ValueError(f'the contact spread in the parameters has no value for joints '
                         f'{", ".join(missing)}')
    values = [np.array([term[j] for j in model.joint_names]) for term in terms]
    return Spread(*values) if len(values) > 1 else Spread.constant(values[0])


@dataclass
class Collision:
    """A latched collision: when, which joints crossed their collision level, and the peak."""

    time: float
    joints: tuple
    peak: np.ndarray                    # largest |r| of each joint since it latched, N m

    def describe(self, model):
        """One line: the time and each joint over its level with its peak."""
        worst = ', '.join(f'{j} {self.peak[model.joint_index(j)]:.3g} N m' for j in self.joints)
        return f'collision at {self.time:.3f} s: {worst}'


class ContactDetector:
    """
    The contact level of each state: 0 free, 1 contact, 2 collision (latched until rearmed).

    ``update(r, t, band, qd, effort)`` returns the level; a new collision is :attr:`collision`,
    and :attr:`new` is True on the state that latched it (log it once).  The levels apply to
    ``|r| - band`` (the observer's dry-friction band; none: ``|r|``), at the state's own
    levels where they follow the motion (:class:`Thresholds`: the velocities ``qd`` and the
    model's torque ``effort - r``; none given: the levels within the motion seen, the
    lowest).
    """

    def __init__(self, model, levels):
        self.model = model
        zeros = np.zeros(model.n)
        levels = Thresholds(*levels)
        self.levels = Thresholds(*(np.ascontiguousarray(zeros if x is None else x, dtype=float)
                                   for x in levels))
        self._contact, self._collision, *self._growth = self.levels
        self._no_band = zeros
        self.level = FREE
        self.collision = None
        self.new = False

    def update(self, residual, t, band=None, qd=None, effort=None):
        """Take one residual ``(n,)`` (its band, the state's ``qd`` and ``effort``) at ``t``."""
        residual = np.ascontiguousarray(residual, dtype=float)
        band, qd = (self._no_band if x is None else np.ascontiguousarray(x, dtype=float)
                    for x in (band, qd))
        effort = residual if effort is None else np.ascontiguousarray(effort, dtype=float)
        if any(x.shape != self.levels.contact.shape for x in (residual, band, qd, effort)):
            raise ValueError(f'ContactDetector.update: residual, band, qd and effort must have '
                             f'shape ({self.model.n},), got {residual.shape}, {band.shape}, '
                             f'{qd.shape} and {effort.shape}')
        return self._judge(residual, t, band, qd, effort)

    def step(self, residual, t, band, qd, effort):
        """:meth:`update` of float64 ``(n,)`` arrays, unchecked: the control loop's path."""
        try:
            return self._judge(residual, t, band, qd, effort)
        except TypeError:                       # not float64 arrays (a list): checked
            return self.update(residual, t, band, qd, effort)

    def _judge(self, residual, t, band, qd, effort):
        self.new = False
        collision = self.collision
        latched = collision is not None
        level = _level.call(residual, band, qd, effort, self._contact, self._collision,
                            *self._growth, collision.peak if latched else self._no_band, latched)
        if level == COLLISION and not latched:
            a = beyond(residual, band)
            names = tuple(self.model.joint_names[i] for i in np.flatnonzero(
                a > self.levels.at(qd, effort - residual)[1]))
            self.collision = Collision(float(t), names, a)
            self.new = True
        self.level = level
        return level

    def rearm(self):
        """Release a latched collision; return it (None if there was none)."""
        collision, self.collision = self.collision, None
        self.level = FREE
        return collision


@njit(**ONE_STATE)
def level_of(residual, band, qd, effort, contact, collision, speed, torque, speed_from,
             torque_from, peak, latched):
    """
    Return the level of one residual: the compiled step of :meth:`ContactDetector.update`.

    Each joint's ``max(|r| - band, 0)`` against its levels, grown by ``1 + speed (|qd| -
    speed_from)+ + torque (|effort - r| - torque_from)+``; ``latched`` (a collision held):
    COLLISION, and ``peak`` takes the larger of itself and this state's.
    """
    level = FREE
    for i in range(residual.shape[0]):
        a = max(abs(residual[i]) - band[i], 0.0)
        if latched:
            peak[i] = max(peak[i], a)
            continue
        grown = (1.0 + speed[i] * max(abs(qd[i]) - speed_from[i], 0.0)
                 + torque[i] * max(abs(effort[i] - residual[i]) - torque_from[i], 0.0))
        if a > collision[i] * grown:
            level = COLLISION
        elif a > contact[i] * grown and level == FREE:
            level = CONTACT
    return COLLISION if latched else level


_level = Signature(level_of, *(VECTOR,) * 10, OUT_VECTOR, BOOL)
