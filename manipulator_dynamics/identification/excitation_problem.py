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
An excitation design's problem on one period: the Fourier series, the limits, the criteria.

:func:`series` is the motion of the coefficients (:mod:`.excitation`'s docstring has the
series), :func:`fundamental` its frequency from the duration; :class:`Limits` the URDF's limits
less the margin, :func:`fit_inside` the oscillation scaled into them; :class:`Problem` the
optimisation's variables, cost (``log cond`` of the base regressor with unit columns,
:func:`log_condition`; then the smoothed count of base parameters above ``WELL_IDENTIFIED``,
:func:`smoothed_count`) and constraints, for SLSQP.
"""

import math

import numpy as np

from . import friction
from ..rigid.rnea import inverse_dynamics


#: Default lowest fundamental frequency in Hz (Swevers et al. use 0.1 Hz with 5 harmonics:
#: motions up to 0.5 Hz, slow enough for any arm, fast enough to excite inertia and friction).
FUNDAMENTAL_HZ = 0.1


#: The cost of a motion that leaves a base parameter unexcited (log cond is finite otherwise).
UNEXCITED = 1e3


#: Relative standard deviation, percent, below which a base parameter counts as well identified.
WELL_IDENTIFIED = 10.0


#: Base parameters whose URDF value is below this fraction of the largest one count as zero.
ZERO = 1e-6


def fundamental(duration, frequency):
    if not (isinstance(duration, (int, float)) and math.isfinite(duration) and duration > 0):
        raise ValueError(f'duration must be a positive number of seconds, got {duration!r}')
    if frequency is None:
        periods = max(1, math.ceil(duration * FUNDAMENTAL_HZ - 1e-9))
        return periods / duration, periods
    if not (math.isfinite(frequency) and frequency > 0):
        raise ValueError(f'frequency must be positive, got {frequency!r}')
    periods = round(duration * frequency)
    if periods < 1 or abs(duration * frequency - periods) > 1e-6 * max(periods, 1):
        raise ValueError(
            f'duration {duration:g} s is not a whole number of periods of {frequency:g} Hz, so '
            f'the motion would not end at rest: use a duration of k / {frequency:g} s, or leave '
            'frequency out')
    return frequency, periods


class Limits:
    """The URDF's limits less the margin, with which joints have which."""

    def __init__(self, model, margin):
        names = model.joint_names
        bad = [names[j] for j in range(model.n)
               if not (math.isfinite(model.velocity_limit[j]) and model.velocity_limit[j] > 0)]
        if bad:
            raise ValueError(
                f'joints {", ".join(bad)} have no velocity limit in the URDF '
                '(<limit velocity=.../>): an excitation motion needs one to know how fast it '
                'may go')
        span = model.upper - model.lower
        self.bounded = np.isfinite(span)
        narrow = [names[j] for j in np.flatnonzero(self.bounded & ~(span > 0))]
        if narrow:
            raise ValueError(f'joints {", ".join(narrow)} have lower >= upper: they cannot '
                             'move')
        lower = np.where(self.bounded, model.lower, 0.0)         # continuous joints: no
        upper = np.where(self.bounded, model.upper, 0.0)         # inf - inf on the way
        width = upper - lower
        self.lower = np.where(self.bounded, lower + margin * width, -np.inf)
        self.upper = np.where(self.bounded, upper - margin * width, np.inf)
        self.middle = 0.5 * (lower + upper)
        self.velocity = (1 - margin) * model.velocity_limit
        effort = np.asarray(model.effort_limit, dtype=float)
        self.effort_given = np.isfinite(effort) & (effort > 0)
        self.effort = np.where(self.effort_given, (1 - margin) * effort, np.inf)

    def violation(self, q, qd, tau):
        """Largest excess over the limits, relative to each limit (<= 0 when inside)."""
        worst = [np.max((np.abs(qd) - self.velocity) / self.velocity)]
        if self.bounded.any():
            half = 0.5 * (self.upper - self.lower)[self.bounded]
            worst.append(np.max((np.abs(q[:, self.bounded] - self.middle[self.bounded])
                                 - half) / half))
        if self.effort_given.any():
            e = self.effort[self.effort_given]
            worst.append(np.max((np.abs(tau[:, self.effort_given]) - e) / e))
        return max(worst)


def series(t, w, offset, a, b):
    """``q, qd, qdd`` of the Fourier series at times ``t``: a, b (n, L), offset (n,)."""
    lw = w * np.arange(1, a.shape[1] + 1)                         # (L,)
    s, c = np.sin(np.outer(t, lw)), np.cos(np.outer(t, lw))       # (N, L)
    q = offset + s @ (a / lw).T - c @ (b / lw).T
    qd = c @ a.T + s @ b.T
    qdd = -s @ (a * lw).T + c @ (b * lw).T
    return q, qd, qdd


class Problem:
    """
    The optimisation on one period: free variables, cost and constraints.

    Per joint the variables are ``q0, a_2..a_L, b_2..b_L`` (``p = 2 L - 1``); ``a_1`` and
    ``b_1`` follow from resting at ``t = 0``.  ``P_q, P_v, P_a`` (samples, p) map one joint's
    variables to its positions, velocities and accelerations on the samples.
    """

    def __init__(self, model, base, limits, w, L, t):
        self.model, self.base, self.limits, self.w, self.L = model, base, limits, w, L
        n, p = model.n, 2 * L - 1
        self.n, self.p = n, p
        # the URDF's base parameters, the magnitudes relative deviations are taken of (0: none)
        K = np.abs(base.values)
        self.prior = np.where(K > ZERO * K.max(), K, 0.0)
        # the basis: the series of each free variable alone (a_1, b_1 following), (N, p) each
        self.Pq, self.Pv, self.Pa = series(t, w, *self._split(np.eye(p)))

    def _split(self, X):
        """Rows of X (k, p) as ``offset (k,), a (k, L), b (k, L)`` with a_1, b_1 filled in."""
        L = self.L
        offset = X[:, 0]
        a_rest, b_rest = X[:, 1:L], X[:, L:]
        a1 = -a_rest.sum(axis=1, keepdims=True)
        b1 = -(b_rest * np.arange(2, L + 1)).sum(axis=1, keepdims=True)
        return offset, np.hstack([a1, a_rest]), np.hstack([b1, b_rest])

    def coefficients(self, x):
        return self._split(x.reshape(self.n, self.p))

    def variables(self, offset, a, b):
        """Return the free variables of ``offset (n,), a, b (n, L)`` (inverse of the above)."""
        return np.hstack([offset[:, None], a[:, 1:], b[:, 1:]]).ravel()

    def motion(self, x):
        X = x.reshape(self.n, self.p).T                          # (p, n)
        return self.Pq @ X, self.Pv @ X, self.Pa @ X

    def cost(self, x):
        c = log_condition(base_rows(self.model, self.base, *self.motion(x)))
        return UNEXCITED if c is None else c

    def torques(self, x):
        return inverse_dynamics(self.model, *self.motion(x), friction=True)

    def aim(self, noise, floor, samples, cap):
        """Set the second stage: noise, its floor (n,), returned samples per one here, cap."""
        self.noise, self.floor, self.samples, self.cap = noise, floor, samples, cap

    def count(self, x):
        """Return the second stage's cost: the smoothed count, a penalty over the cap on cond."""
        q, qd, qdd = self.motion(x)
        W = base_rows(self.model, self.base, q, qd, qdd)
        c = log_condition(W)
        if c is None:
            return UNEXCITED
        over = max(0.0, c - math.log(self.cap))
        relative = self.deviations(q, qd, qdd, self.noise, self.floor, self.samples, W)
        return min(smoothed_count(relative) + 100.0 * over ** 2, UNEXCITED)

    def deviations(self, q, qd, qdd, noise, floor, samples, W=None):
        """
        Relative standard deviations, percent, weighted least squares would give on the samples.

        Torque noise ``max(noise * RMS(tau_j), floor_j)`` on joint j, information multiplied
        by ``samples``; inf for base parameters the URDF puts at zero, and for all of them when
        the motion leaves one unexcited.  The covariance comes from the Cholesky factor of the
        information matrix with unit columns, not from a QR of the tall matrix (as in
        :func:`log_condition`).
        """
        if W is None:
            W = base_rows(self.model, self.base, q, qd, qdd)
        n, b = self.n, self.base.count
        tau = inverse_dynamics(self.model, q, qd, qdd, friction=True)
        sigma = np.maximum(noise * rms(tau), floor)
        sigma = np.where(sigma > 0, sigma, max(sigma.max(), 1e-300))
        G = (W.reshape(-1, n, b) / sigma[None, :, None]).reshape(-1, b)
        scale = np.linalg.norm(G, axis=0)
        if not np.all(scale > 0):
            return np.full(b, math.inf)
        G = G / scale
        try:
            Linv = np.linalg.inv(np.linalg.cholesky(G.T @ G))
        except np.linalg.LinAlgError:
            return np.full(b, math.inf)
        std = np.sqrt((Linv ** 2).sum(axis=0) / samples) / scale
        with np.errstate(divide='ignore'):
            return np.where(self.prior > 0, 100.0 * std / np.maximum(self.prior, 1e-300), np.inf)

    def constraints(self):
        """Build the limits as SLSQP inequalities, each >= 0: linear ones, then efforts."""
        lim, n, p = self.limits, self.n, self.p
        blocks, bounds = [], []
        for j in range(n):
            rows = [(self.Pv, lim.velocity[j], -1.0), (self.Pv, lim.velocity[j], 1.0)]
            if lim.bounded[j]:
                rows += [(self.Pq, lim.upper[j], -1.0), (self.Pq, -lim.lower[j], 1.0)]
            for P, bound, sign in rows:
                A = np.zeros((len(P), n * p))
                A[:, j * p:(j + 1) * p] = sign * P
                blocks.append(A)
                bounds.append(np.full(len(P), bound))
        A, c = np.vstack(blocks), np.concatenate(bounds)
        constraints = [{'type': 'ineq', 'fun': lambda x: c + A @ x, 'jac': lambda x: A}]
        if lim.effort_given.any():
            given, e = lim.effort_given, lim.effort[lim.effort_given]

            def effort(x):
                tau = inverse_dynamics(self.model, *self.motion(x), friction=True)[:, given]
                return np.concatenate([(e - tau).ravel(), (e + tau).ravel()])
            constraints.append({'type': 'ineq', 'fun': effort})
        return constraints

    def start(self, rng, search):
        """
        Seeded random coefficients about a posture the robot can hold, shrunk into the limits.

        The posture is the middle of the ranges where holding it there takes at most half of
        every effort limit; else, of the middle and of random postures (``search``, in the
        ranges less the margin), the one that takes the least (a Baxter's shoulder needs 95 %
        of its limit at mid-range: its real one has a spring).  The oscillation shrinks until a
        tenth of the room is free, or at least until the motion is inside.
        """
        lim, L = self.limits, self.L
        posture, use = self._posture(search)
        X = np.zeros((self.n, self.p))
        X[:, 0] = posture
        X[:, 1:] = rng.normal(size=(self.n, 2 * L - 2)) / np.tile(np.arange(2, L + 1), 2)
        x, inside = X.ravel(), None
        for _ in range(80):
            q, qd, qdd = self.motion(x)
            excess = lim.violation(q, qd, inverse_dynamics(self.model, q, qd, qdd,
                                                           friction=True))
            if excess <= -0.1:
                return x
            if excess <= 0 and inside is None:
                inside = x
            X = x.reshape(self.n, self.p).copy()
            X[:, 1:] *= 0.9
            x = X.ravel()
        if inside is not None:
            return inside
        names = self.model.joint_names
        over = [f'{names[j]} ({u:.0%})' for j, u in enumerate(use) if u > 1]
        if over:
            raise ValueError(
                'no posture found where the robot holds itself within its effort limits less '
                f'the margin: at the best one, {", ".join(over)} of the limit (check <limit '
                'effort=.../>, or lower margin)')
        stuck = [names[j] for j in np.flatnonzero(self.model.coulomb >= lim.effort)]
        raise ValueError(
            'the robot holds itself but cannot move inside its limits less the margin'
            + (f': the Coulomb friction of {", ".join(stuck)} takes more than the effort limit '
               '(check <dynamics friction=.../> and <limit effort=.../>)' if stuck else ''))

    def _posture(self, rng, tries=256):
        """Return the posture (and its effort use per joint) that holds with the least effort."""
        lim = self.limits
        lo = np.where(lim.bounded, lim.lower, -math.pi)
        hi = np.where(lim.bounded, lim.upper, math.pi)
        candidates = np.vstack([lim.middle, lo + (hi - lo) * rng.uniform(size=(tries, self.n))])
        if not lim.effort_given.any():
            return candidates[0], np.zeros(self.n)
        zero = np.zeros_like(candidates)
        tau = inverse_dynamics(self.model, candidates, zero, zero)
        use = np.where(lim.effort_given, np.abs(tau) / lim.effort, 0.0)
        best = 0 if use[0].max() <= 0.5 else int(np.argmin(use.max(axis=1)))
        return candidates[best], use[best]


def fit_inside(model, limits, t, w, offset, a, b, tol=1e-9):
    """Largest factor <= 1 on the oscillation that keeps every sample of ``t`` inside."""
    def excess(s):
        q, qd, qdd = series(t, w, offset, s * a, s * b)
        return limits.violation(q, qd, inverse_dynamics(model, q, qd, qdd, friction=True))
    if excess(1.0) <= tol:
        return 1.0
    lo, hi = 0.0, 1.0
    if excess(lo) > tol:
        raise ValueError('the effort limits do not let the robot hold itself at the mean '
                         'position of the motion')
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) <= tol else (lo, mid)
    return lo


def condition(model, base, q, qd, qdd):
    """Condition number of the base regressor of the states ``(q, qd, qdd)`` with unit columns."""
    W = base_rows(model, base, q, qd, qdd)
    norms = np.linalg.norm(W, axis=0)
    if not np.all(norms > 0):
        return math.inf
    return float(np.linalg.cond(W / norms))


def log_condition(W):
    """
    ``log cond`` of ``W`` with unit columns, None if a column is unexcited, for the optimiser.

    From the eigenvalues of the Gram matrix (accurate to cond ~1e7, far past any useful
    design): an SVD of the tall matrix, right after numba's kernels, ran ten times slower on a
    two-core machine with multithreaded BLAS.
    """
    norms = np.linalg.norm(W, axis=0)
    if not np.all(norms > 0):
        return None
    Wn = W / norms
    eig = np.linalg.eigvalsh(Wn.T @ Wn)
    return 0.5 * math.log(eig[-1] / eig[0]) if eig[0] > 0 else None


def base_rows(model, base, q, qd, qdd):
    """Return the states' base regressor as ``(N n, b)`` rows (:func:`.friction.base_rows`)."""
    return friction.base_rows(model, base, q, qd, qdd).reshape(-1, base.count)


def rms(tau):
    return np.sqrt((tau ** 2).mean(axis=0))


def smoothed_count(relative):
    """``sum z / (1 + z)``, ``z = (relative / WELL_IDENTIFIED)^2``, over the finite deviations."""
    z = (relative[np.isfinite(relative)] / WELL_IDENTIFIED) ** 2
    return float((z / (1 + z)).sum()) if np.all(np.isfinite(z)) else math.inf
