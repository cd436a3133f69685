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
Optimised excitation trajectories for identification (Swevers et al. 1997; Gautier & Khalil 1992).

Each joint follows a finite Fourier series of fundamental ``w = 2 pi f`` (Swevers, eq. 8):

    q_j(t) = q0_j + sum_l [ a_jl / (w l) sin(w l t) - b_jl / (w l) cos(w l t) ],  l = 1..L

so the motion is periodic and the velocities ``qd_j = sum_l a_jl cos(w l t) + b_jl sin(w l t)``
are linear in the coefficients.  Periodicity lets the data be averaged over periods and keeps
the spectrum known (the identification's low-pass filter passes it whole).  It starts and ends
at rest: ``qd(0) = sum_l a_jl = 0`` and ``qdd(0) = w sum_l l b_jl = 0``, enforced by writing the
first harmonic's coefficients in terms of the others, and the duration is a whole number of
periods.

The coefficients minimise the condition number of the base regressor ``W_B`` with unit columns
(the criterion of Gautier & Khalil: it bounds how much relative noise in the torques can spoil
the estimate, whatever the parameters' units) on one period, sampled at ``OPTIMISATION_SAMPLES``
points, by sequential quadratic programming (``scipy.optimize.minimize``, SLSQP) on ``log cond``.

The condition number weighs every unit column alike, so it spends the motion on parameters that
a few per cent of torque noise hides anyway as much as on those it could make certain.  With
``criterion='relative_std'`` (the default) a second SQP starts from that optimum and minimises
what an identification engineer counts: the base parameters whose relative standard deviation
``100 sigma_K / |K|`` stays above ``WELL_IDENTIFIED`` per cent.  It predicts those deviations
from the covariance of weighted least squares, ``(sum_j W_j^T W_j / sigma_j^2)^-1`` scaled to
the returned samples, with the URDF's values as ``K`` (a prior the robot's CAD model gives; base
parameters it puts at zero have no relative deviation and are left out) and torque noise
``sigma_j = noise * RMS(tau_j)``, never below its value on the condition-number optimum: a
sensor's noise does not fall when a motion loads its joint less, so a design cannot win by
idling a joint.  The count is smoothed as ``sum z / (1 + z)``, ``z = (relative std / 10 %)^2``
(near 1 for a parameter far above the line, near 0 far below), and the condition number is kept
within ``CONDITION_SLACK`` times the first optimum's.  ``predicted_relative_std`` reports the
deviations the returned motion should give at that noise.

The constraints are the URDF's limits less a ``margin``: positions and velocities are linear in
the coefficients, so they are exact linear constraints at every optimisation sample; efforts
(``inverse_dynamics`` with friction) are nonlinear ones, where the URDF gives them.  The
returned samples are then checked one by one; should one overshoot between optimisation samples,
the oscillation is scaled down about ``q0`` until every sample is inside (reported in
``scaled``).
"""

from dataclasses import dataclass
import math
import time

import numpy as np

from .base_parameters import base_parameters, BaseParameters
from .excitation_problem import (condition, fit_inside, fundamental, Limits, Problem, rms,
                                 series, smoothed_count, WELL_IDENTIFIED)
from ..recordings import csvlog
from ..rigid.rnea import inverse_dynamics


#: Samples of one period the optimisation evaluates the condition number and the limits on.
OPTIMISATION_SAMPLES = 120

#: How far ``criterion='relative_std'`` may let the condition number rise over the first stage's
#: optimum (it keeps the base parameters the URDF puts at zero excited).
CONDITION_SLACK = 2.0

#: Design criteria: the condition number alone, or that first and then the relative deviations.
CRITERIA = ('relative_std', 'condition')


@dataclass(frozen=True, eq=False)
class Excitation:
    """
    A periodic excitation trajectory, sampled, with how well it excites the base parameters.

    Attributes
    ----------
    t : ndarray, shape (N,)
        Sample times from 0 to ``duration`` inclusive, at ``rate`` Hz.
    q, qd, qdd : ndarray, shape (N, n)
        Positions, velocities and accelerations in ``joint_names`` order.
    joint_names : tuple of str
        The model's joints.
    condition : float
        Condition number of ``W_B`` with unit columns over all the samples.
    initial_condition : float
        The same for the seeded starting motion: random coefficients, shrunk into the limits
        (what a random motion of the same kind gives).
    frequency : float
        Fundamental frequency in Hz; the motion repeats ``periods`` times.
    periods : int
        Whole periods in the duration.
    offset : ndarray, shape (n,)
        ``q0``: the mean position of every joint.
    a, b : ndarray, shape (n, L)
        Fourier coefficients (velocities in rad/s or m/s) of harmonics 1..L.
    base : BaseParameters
        The base parameters the motion was optimised for.
    criterion : str
        ``'relative_std'`` or ``'condition'``: what the coefficients minimise.
    noise : float
        Torque noise assumed by the prediction, a fraction of each joint's RMS torque.
    predicted_relative_std : ndarray, shape (b,)
        Relative standard deviation, percent, of each base parameter that weighted least
        squares should give on this motion's samples at that noise, about the URDF's values
        (inf where the URDF's value is zero).
    scaled : float
        Factor applied to the oscillation after the optimisation to keep every sample inside
        the limits (1 when none was needed).
    iterations : int
        SQP iterations (of both stages).
    elapsed : float
        Wall time of the optimisation, seconds.
    message : str
        The optimiser's final message.

    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    joint_names: tuple
    condition: float
    initial_condition: float
    frequency: float
    periods: int
    offset: np.ndarray
    a: np.ndarray
    b: np.ndarray
    base: BaseParameters
    criterion: str
    noise: float
    predicted_relative_std: np.ndarray
    scaled: float
    iterations: int
    elapsed: float
    message: str

    @property
    def duration(self):
        """Length of the motion in seconds."""
        return float(self.t[-1])

    def sample(self, t):
        """Return ``(q, qd, qdd)`` of the series at times ``t`` (any shape (N,) array)."""
        return series(np.asarray(t, dtype=float), 2 * math.pi * self.frequency, self.offset,
                      self.a, self.b)

    def to_csv(self, path):
        """Write ``time``, each ``<joint>.position/.velocity/.acceleration`` (:mod:`csvlog`)."""
        csvlog.write(path, self.t, csvlog.joint_columns(
            self.joint_names, position=self.q, velocity=self.qd, acceleration=self.qdd))

    @property
    def well_identified(self):
        """``(predicted below WELL_IDENTIFIED, of how many)`` of those the URDF makes nonzero."""
        known = np.isfinite(self.predicted_relative_std)
        return (int((self.predicted_relative_std[known] < WELL_IDENTIFIED).sum()),
                int(known.sum()))

    @property
    def poorly_identified(self):
        """``[(name, URDF value, predicted relative std %)]`` of those predicted at or above."""
        return [(name, float(value), float(r)) for name, value, r in
                zip(self.base.names, self.base.values, self.predicted_relative_std)
                if np.isfinite(r) and r >= WELL_IDENTIFIED]

    def summary(self):
        """Return a few lines saying what the optimisation did."""
        periods = f'{self.periods} period' + ('s' if self.periods > 1 else '')
        good, of = self.well_identified
        return (f'{len(self.t)} samples over {self.duration:g} s ({periods} of '
                f'{1 / self.frequency:g} s, {self.a.shape[1]} harmonics); condition number of '
                f'W_B {self.condition:.4g} (seeded start {self.initial_condition:.4g}) for '
                f'{self.base.count} base parameters; predicted: {good} of the {of} the URDF '
                f'makes nonzero below {WELL_IDENTIFIED:g} % relative std at {self.noise:.3g} of '
                f"each joint's RMS torque as noise; optimised ({self.criterion}) in "
                f'{self.elapsed:.1f} s, {self.iterations} iterations ({self.message})'
                + (f'; oscillation scaled by {self.scaled:.3f} to stay inside the limits'
                   if self.scaled < 1 else ''))


def excitation_trajectory(model, *, duration, harmonics=5, frequency=None, rate=100.0, seed=0,
                          friction=True, armature=None, margin=0.05, maxiter=200,
                          criterion='relative_std', noise=0.02):
    """
    Design a periodic motion that excites every base parameter of ``model`` as well as it can.

    Parameters
    ----------
    model : Model
        The robot; its URDF limits bound the motion (positions where finite, velocities, and
        efforts where given).
    duration : float
        Seconds; a whole number of periods of ``frequency``.
    harmonics : int
        ``L``, harmonics per joint (at least 2: resting at both ends takes two).
    frequency : float, optional
        Fundamental in Hz; default: the lowest whole number of periods per ``duration`` that is
        at least 0.1 Hz.
    rate : float
        Samples per second of the returned motion (the prediction counts them: record at it).
    seed : int
        Seeds the starting coefficients; the optimisation is deterministic from there.
    friction, armature
        Which base parameters to excite, as for :func:`identify` (armature None: if the model
        has rotor inertias).
    margin : float
        Fraction of each limit kept free: positions stay ``margin (upper - lower)`` inside their
        limits, speeds below ``(1 - margin)`` of the velocity limit, efforts below ``(1 - margin)``
        of the effort limit.
    maxiter : int
        SQP iterations at most, per stage (0: the seeded start, as a random motion).
    criterion : {'relative_std', 'condition'}
        Minimise the condition number, then the number of base parameters above
        ``WELL_IDENTIFIED`` per cent relative standard deviation (default); or the condition
        number alone.
    noise : float
        Torque noise the relative deviations are predicted for, a fraction of each joint's RMS
        torque.

    Returns
    -------
    Excitation

    Raises
    ------
    ValueError
        A joint without a velocity limit (the motion would be unbounded), limits that leave no
        room, or an impossible duration / frequency pair.

    """
    f, periods = fundamental(duration, frequency)
    _check_options(harmonics, rate, margin, criterion, noise)
    limits = Limits(model, margin)
    base = base_parameters(model, friction=friction, armature=armature)
    problem = Problem(model, base, limits, 2 * math.pi * f, int(harmonics),
                      np.arange(OPTIMISATION_SAMPLES) / (OPTIMISATION_SAMPLES * f))
    x0 = problem.start(np.random.default_rng(seed), np.random.default_rng([seed, 1]))
    t = np.linspace(0.0, periods / f, int(round(periods / f * rate)) + 1)
    started = time.perf_counter()
    chosen, designs, iterations, messages = _optimise(problem, limits, t, x0, criterion, noise,
                                                      int(maxiter))
    return Excitation(
        t=t, q=chosen.q, qd=chosen.qd, qdd=chosen.qdd, joint_names=tuple(model.joint_names),
        condition=chosen.condition, initial_condition=designs[-1].condition, frequency=f,
        periods=periods, offset=chosen.offset, a=chosen.a, b=chosen.b, base=base,
        criterion=criterion, noise=float(noise), predicted_relative_std=chosen.relative,
        scaled=chosen.scale, iterations=iterations, elapsed=time.perf_counter() - started,
        message='; '.join(messages))


def _check_options(harmonics, rate, margin, criterion, noise):
    """Refuse options :func:`excitation_trajectory` cannot work with, saying which and why."""
    if int(harmonics) < 2:
        raise ValueError('harmonics must be at least 2 (starting and ending at rest takes two), '
                         f'got {harmonics}')
    if not rate > 0 or not math.isfinite(rate):
        raise ValueError(f'rate must be positive, got {rate}')
    if not 0 <= margin < 0.5:
        raise ValueError(f'margin must be in [0, 0.5), got {margin}')
    if criterion not in CRITERIA:
        raise ValueError(f'criterion must be one of {", ".join(CRITERIA)}, got {criterion!r}')
    if not (isinstance(noise, (int, float)) and math.isfinite(noise) and noise > 0):
        raise ValueError(f'noise must be a positive fraction of the RMS torque, got {noise!r}')


def _optimise(problem, limits, t, x0, criterion, noise, maxiter):
    """
    Run the design's stages from ``x0``; return ``(chosen, designs, iterations, messages)``.

    The condition number first, then (``relative_std``) the count of base parameters above
    10 %.  Every candidate is fitted inside the limits at the returned samples ``t``: the
    optimum scaled down if it overshoots between the optimisation's samples (or if SLSQP
    stopped outside them); the seeded start is kept as a candidate, if it still excites better
    (an optimisation stopped early, far from the feasible set).
    """
    import scipy.optimize
    constraints = problem.constraints()
    options = {'maxiter': maxiter, 'ftol': 1e-6}
    result = scipy.optimize.minimize(problem.cost, x0, method='SLSQP', constraints=constraints,
                                     options=options)
    iterations, messages = int(result.nit), [str(result.message)]
    designs = _designs(problem, limits, t, (result.x, x0), x0)
    first = min(designs, key=lambda d: d.condition)
    floor = np.zeros(problem.model.n)
    if criterion == 'relative_std' and maxiter > 0:
        floor = noise * rms(problem.torques(first.x))
        problem.aim(noise, floor, len(t) / OPTIMISATION_SAMPLES, CONDITION_SLACK * first.condition)
        result = scipy.optimize.minimize(problem.count, first.x, method='SLSQP',
                                         constraints=constraints, options=options)
        iterations += int(result.nit)
        messages.append(str(result.message))
        designs = _designs(problem, limits, t, (result.x,), first.x, required=False) + designs
    for d in designs:
        d.predict(problem, noise, floor)
    chosen = min(designs, key=(lambda d: d.score) if criterion == 'relative_std' else (
        lambda d: d.condition))
    return chosen, designs, iterations, messages


def _designs(problem, limits, t, candidates, start, required=True):
    """
    Fit each candidate inside the limits (:class:`_Design`).

    SLSQP may stop outside the feasible set, at a mean posture the robot cannot hold within its
    effort limits (on one machine's floating point, and not another's, for the same seed: SLSQP
    ended its line search there), where no scaling of the oscillation brings the motion inside.
    Such a candidate is drawn back along the line to ``start`` (a candidate inside the limits)
    to the last point whose whole motion is inside, by bisection; one that still cannot be
    fitted is left out.  With ``required``, the
    last refusal is raised if none is left.
    """
    out, refusal = [], None
    for x in candidates:
        if not _inside(problem, limits, t, x, 0.0) and _inside(problem, limits, t, start):
            lo, hi = 0.0, 1.0
            for _ in range(30):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if _inside(problem, limits, t, start + mid * (x - start)) \
                    else (lo, mid)
            x = start + lo * (x - start)
        try:
            out.append(_Design(problem, limits, t, x))
        except ValueError as e:
            refusal = e
    if required and not out:
        raise refusal
    return out


def _inside(problem, limits, t, x, scale=1.0):
    """Tell whether the motion of ``x``, its oscillation scaled, stays inside the limits."""
    offset, a, b = problem.coefficients(x)
    q, qd, qdd = series(t if scale else t[:1], problem.w, offset, scale * a, scale * b)
    return limits.violation(q, qd, inverse_dynamics(problem.model, q, qd, qdd,
                                                    friction=True)) <= 1e-9


class _Design:
    """One candidate's coefficients fitted inside the limits, sampled at the returned times."""

    def __init__(self, problem, limits, t, x):
        offset, a, b = problem.coefficients(x)
        self.scale = fit_inside(problem.model, limits, t, problem.w, offset, a, b)
        self.offset, self.a, self.b = offset, self.scale * a, self.scale * b
        self.x = problem.variables(self.offset, self.a, self.b)
        self.q, self.qd, self.qdd = series(t, problem.w, self.offset, self.a, self.b)
        self.condition = condition(problem.model, problem.base, self.q, self.qd, self.qdd)

    def predict(self, problem, noise, floor):
        """Set ``relative`` (predicted deviations, percent), ``score`` (their smoothed count)."""
        self.relative = problem.deviations(self.q, self.qd, self.qdd, noise, floor, 1.0)
        self.score = smoothed_count(self.relative)


def read_trajectory_csv(path):
    """
    Read a trajectory CSV as :meth:`Excitation.to_csv` writes it (:mod:`..recordings.csvlog`).

    Columns ``time`` and ``<joint>.position`` for every joint, and ``<joint>.velocity`` and
    ``<joint>.acceleration`` where given for every joint.  Returns ``(names, t, q, qd, qdd)``,
    ``qd`` / ``qdd`` None when absent.  Raises ValueError naming what is wrong.
    """
    table = csvlog.read(path)
    t = table.time()
    names = table.joints('position')
    if not names:
        raise ValueError(f'{path} has no <joint>.position column')
    if len(t) < 2:
        raise ValueError(f'{path} needs at least two rows')
    if not np.all(np.diff(t) > 0):
        raise ValueError(f'{path}: time must increase from row to row')
    return (names, t, table.field(names, 'position'),
            table.field(names, 'velocity', required=False),
            table.field(names, 'acceleration', required=False))
