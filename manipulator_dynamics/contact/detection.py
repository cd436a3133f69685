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

The thresholds are the robot's own: an observer's residual in free motion is the model's error
(friction not captured, inertial parameters a little off, sensor offsets), and a contact is what
stands out of it.  :func:`learn_thresholds` takes each joint's *spread* over a stretch of free
motion, the :data:`SPREAD_QUANTILE` quantile of its ``|r|`` (a robust statistic, not the
maximum), and puts the contact level at :data:`CONTACT_MULTIPLE` times it and the collision
level at :data:`COLLISION_MULTIPLE` times it.  No single moment can set it
(:func:`free_motion_spread`): a stop at the end of a run, a current spike, a reversal's
excursion move a quantile by what they weigh in the run, not by their height; those that stand
above the contact level (a stop, a spike) are left out and reported with their times, and a
user may leave out stretches of a log.  The spread may also come from an identification: the
identified model's residual over its validation logs, written beside the parameters
(:func:`spread_of_parameters`).  It is the observer's residual that is measured, not the
model's torque error: on a real Panda the residual's spread was twice its model's largest
torque error on the same data, the robot's velocity signal differentiated into the momentum (a
torque error is computed from filtered positions; a live observer reads the velocities as they
come).
"""

from dataclasses import dataclass
import math
from typing import NamedTuple

from numba import njit
import numpy as np

from .observer import beyond, DEFAULT_GAIN, momentum_residual, observer_gains, SETTLING, \
    STILL
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

FREE, CONTACT, COLLISION = 0, 1, 2
#: What dynamics_node's ``~/contact`` says while it cannot tell (no thresholds yet, the observer
#: settling after a restart): never "free" then.  Not a level of :class:`ContactDetector`.
NOT_WATCHING = 3
LEVEL_NAMES = ('free', 'contact', 'collision', 'not watching')


class Thresholds(NamedTuple):
    """Per-joint levels, N m (or N): ``contact (n,)`` below ``collision (n,)``."""

    contact: np.ndarray
    collision: np.ndarray


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
    """:class:`Thresholds` at :data:`CONTACT_MULTIPLE` and :data:`COLLISION_MULTIPLE` x spread."""
    spread = np.asarray(spread, dtype=float)
    for i in np.flatnonzero(~(np.isfinite(spread) & (spread > 0))):
        raise ValueError(f"joint '{model.joint_names[i]}': its free-motion spread is "
                         f'{spread[i]:g}; thresholds need a positive one (a calibration in '
                         'which the joint moved, with efforts measured)')
    return thresholds(model, CONTACT_MULTIPLE * spread, COLLISION_MULTIPLE * spread)


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

    The spread is the :data:`SPREAD_QUANTILE` quantile of the joint's ``|r|`` (a thousandth of
    the run above it), not its maximum: a short excursion (a reversal, a spike) moves it by
    what it weighs in the run, not by its height.  A moment is a run of samples whose ``|r|``
    stands above :data:`MOMENT_MULTIPLE` times that quantile, the contact level it sets (a
    controller stopping the arm within a sample, a current spike: on a real arm one such stop
    reached 88 N m, where the run's 99.9th percentile was 17): the level would have called it a
    contact, so it is left out and reported.  A moment longer than a thousandth of the run
    lifts the quantile itself, so the rest is judged again, until nothing stands out (at most
    :data:`CLIPPING_PASSES` times: a stop decaying through the observer's lag shrinks by a
    quarter a pass).  A run whose residual is as even as a simulation's has no moment: every
    sample of it stays under the contact level.  ``t (N,)``: the samples' times (default: their
    index), for the moments' times and ``exclude``, stretches ``[(start, end), ...]`` (s) to
    leave out (a handling of the arm, a known bump).  ``moments``: a :class:`Moment` per run
    left out.
    """
    r = np.abs(np.asarray(residual, dtype=float))
    if r.ndim != 2 or r.shape[1] != model.n or r.shape[0] < 2:
        raise ValueError(f'residual must have shape (N, {model.n}) with N >= 2, got {r.shape}')
    if not np.all(np.isfinite(r)):
        raise ValueError('residual has non-finite values')
    t = np.arange(len(r), dtype=float) if t is None else np.asarray(t, dtype=float)
    keep = np.ones(len(r), dtype=bool)
    for start, end in exclude:
        keep &= ~((t >= start) & (t <= end))
    if keep.sum() < 2:
        raise ValueError(f'the stretches left out ({list(exclude)}) leave fewer than two samples')
    spread, moments = np.zeros(model.n), []
    for j, name in enumerate(model.joint_names):
        rest = keep.copy()
        for _ in range(CLIPPING_PASSES):        # a long moment lifts the quantile: clip again
            over = rest & (r[:, j] > MOMENT_MULTIPLE * np.quantile(r[rest, j], SPREAD_QUANTILE))
            if not over.any():
                break
            rest &= ~over
        spread[j] = np.quantile(r[rest, j], SPREAD_QUANTILE)
        edges = np.flatnonzero(np.diff(np.r_[0, (keep & ~rest).astype(np.int8), 0]))
        for a, b in zip(edges[::2], edges[1::2]):
            moments.append(Moment(name, float(t[a]), float(t[b - 1]), float(r[a:b, j].max())))
    moments.sort(key=lambda m: (m.start, m.joint))
    return spread, moments


def learn_thresholds(model, residual, efforts=None, t=None, exclude=()):
    """
    Learn the thresholds from the observer's residual over free motion, ``(N, n)``.

    Each joint's spread is the :data:`SPREAD_QUANTILE` quantile of its ``|r|``, the moments
    left out (:func:`free_motion_spread`, with ``t`` and ``exclude``; sensor offsets and the
    residual's excursions at reversals included: the contact level then stands above all free
    motion showed but its moments, and the observer's band adds what dry friction may hold at
    rest, which a stretch of motion does not show), and at least :data:`FLOOR` times the
    largest of the ``efforts`` ``(N, n)`` the joints applied over the same stretch, where
    given.  The stretch should move every joint as the task will, and start once the observer
    has settled (5 time constants after its first state).
    """
    spread, _ = free_motion_spread(model, residual, t, exclude)
    if efforts is not None:
        spread = np.maximum(spread, FLOOR * np.abs(efforts).max())
    return thresholds_from_spread(model, spread)


def residual_spread(model, data, gain=DEFAULT_GAIN, *, friction=True, still=STILL,
                    topic='/joint_states', exclude=(), report=False):
    """
    Return each joint's spread over logs of free motion: what thresholds stand above.

    ``data``: logs with the robot's measured velocities (CSV files, numpy archives, rosbag2
    recordings, mappings ``t, q, qd, tau``; see
    :func:`~manipulator_dynamics.recordings.log.read_states`), on the robot's clock where
    their velocities allow it.  Each log is observed as the node observes it, across gaps up
    to :func:`ride_bound` and from rest again past one (:func:`observed_stretches`), the first
    :data:`.observer.SETTLING` time constants of each stretch left out; the
    moments of each log (a stop, a spike) are left out of it, and the stretches ``exclude``
    (``[(start, end), ...]`` in the log's seconds, for every log), as
    :func:`free_motion_spread` says.  Returns ``(n,)``, N m, the largest of the logs' spreads
    (of ``|r|``, as :func:`learn_thresholds` takes it); with ``report``, ``(spread,
    moments)``, the :class:`Moment` s left out.  ``IdentificationError`` where a log lacks the
    velocities.
    """
    from ..recordings.log import read_states

    gains = observer_gains(model, gain)
    spread, moments = np.zeros(model.n), []
    for t, q, qd, tau in read_states(model, data, topic):
        seen, at = [], []
        for rows in observed_stretches(t, gains)[0]:
            settled = t[rows] - t[rows][0] >= SETTLING / gains.min()
            if settled.any():
                r = momentum_residual(model, t[rows], q[rows], qd[rows], tau[rows], gains,
                                      friction=friction, still=still)
                seen.append(r[settled])
                at.append(t[rows][settled])
        if sum(len(x) for x in seen) >= 2:
            found, left_out = free_motion_spread(model, np.concatenate(seen),
                                                 np.concatenate(at), exclude)
            spread = np.maximum(spread, found)
            moments += left_out
    return (spread, moments) if report else spread


def spread_yaml(model, spread, gain, source):
    """
    Make the ``contact_spread`` entry of an identified parameters YAML, as a mapping.

    ``identify --validate LOG --parameters-out`` writes the identified model's
    :func:`residual_spread` on the validation logs, with the gain it was measured at,
    so that a node's ``contact_thresholds: auto`` can stand on data the fit did not see.
    """
    return {'observer_gain': float(gain), 'source': str(source),
            'peak': {j: float(v) for j, v in zip(model.joint_names, spread)}}


def spread_of_parameters(model, source, gain):
    """
    Read ``contact_spread`` from an identified parameters YAML (path, text or mapping).

    Returns the spread ``(n,)`` in the model's joint order, or None where the document has
    none.  ``ValueError`` where it was measured at another observer gain (the residual's noise
    grows with the gain: calibrate at this one instead) or lacks a joint.
    """
    from ..model import read_yaml, URDFError

    data = read_yaml(source, 'parameters', URDFError)
    entry = data.get('contact_spread') if isinstance(data, dict) else None
    if not entry:
        return None
    try:
        measured_at = np.asarray(entry['observer_gain'], dtype=float)
        peak = {str(j): float(v) for j, v in entry['peak'].items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        raise URDFError('contact_spread must hold observer_gain and a peak per joint') from None
    if not np.allclose(measured_at, gain, rtol=1e-9):
        raise ValueError(f'the contact spread in the parameters was measured at observer gain '
                         f'{entry["observer_gain"]} 1/s, not this observer\'s '
                         f'{np.unique(gain).tolist()}: calibrate on free motion instead')
    missing = [j for j in model.joint_names if j not in peak]
    if missing:
        raise ValueError(f'the contact spread in the parameters has no value for joints '
                         f'{", ".join(missing)}')
    return np.array([peak[j] for j in model.joint_names])


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

    ``update(r, t, band)`` returns the level; a new collision is :attr:`collision`, and
    :attr:`new` is True on the state that latched it (log it once).  The levels apply to
    ``|r| - band`` (the observer's dry-friction band; none: ``|r|``).
    """

    def __init__(self, model, levels):
        self.model = model
        self.levels = Thresholds(*(np.ascontiguousarray(x, dtype=float) for x in levels))
        self._contact, self._collision = self.levels
        self._no_band = np.zeros(model.n)
        self.level = FREE
        self.collision = None
        self.new = False

    def update(self, residual, t, band=None):
        """Take one residual ``(n,)`` (and its band) at time ``t``; return the level."""
        residual = np.ascontiguousarray(residual, dtype=float)
        band = self._no_band if band is None else np.ascontiguousarray(band, dtype=float)
        if residual.shape != band.shape or residual.shape != self.levels.contact.shape:
            raise ValueError(f'ContactDetector.update: residual and band must have shape '
                             f'({self.model.n},), got {residual.shape} and {band.shape}')
        return self.step(residual, t, band)

    def step(self, residual, t, band):
        """:meth:`update` of float64 ``(n,)`` arrays, unchecked: the control loop's path."""
        self.new = False
        collision = self.collision
        latched = collision is not None
        level = _level.call(residual, band, self._contact, self._collision,
                            collision.peak if latched else self._no_band, latched)
        if level == COLLISION and not latched:
            a = beyond(residual, band)
            names = tuple(self.model.joint_names[i]
                          for i in np.flatnonzero(a > self.levels.collision))
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
def level_of(residual, band, contact, collision, peak, latched):
    """
    Return the level of one residual: the compiled step of :meth:`ContactDetector.update`.

    Each joint's ``max(|r| - band, 0)`` against its levels; ``latched`` (a collision held):
    COLLISION, and ``peak`` takes the larger of itself and this state's.
    """
    level = FREE
    for i in range(residual.shape[0]):
        a = max(abs(residual[i]) - band[i], 0.0)
        if latched:
            peak[i] = max(peak[i], a)
        elif a > collision[i]:
            level = COLLISION
        elif a > contact[i] and level == FREE:
            level = CONTACT
    return COLLISION if latched else level


_level = Signature(level_of, VECTOR, VECTOR, VECTOR, VECTOR, OUT_VECTOR, BOOL)
