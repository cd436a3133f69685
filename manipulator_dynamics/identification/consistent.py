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
Physically consistent standard parameters from identified base parameters.

A link's 10 standard parameters are physically realisable (some mass distribution of positive
density has them) exactly when its **pseudo-inertia** (Wensing, Kim & Slotine 2017, eq. 8)

    J = [[Sigma, h], [h^T, m]],   Sigma = 1/2 tr(I) 1 - I = integral of r r^T dm,   h = m c

is positive definite; that is ``m > 0`` and the rotational inertia about the centre of mass
positive definite with the triangle inequalities, which least squares knows nothing of.
``J`` is linear in the standard parameters, so the realisable sets form a convex cone.

The fit here (Lee, Wensing & Park 2020, "Geometric robot dynamic identification: a convex
programming approach") minimises, over the standard parameters ``phi``,

    || R T phi - Q^T g ||^2  +  2 w^2 sum_links D(J(phi) | J_0)  +  2 w^2 sum_scalars d(x | x_0)

where ``G = Q R`` is the identification's weighted base regressor (rows of unit noise), ``T``
maps standard to base parameters, and the prior is the **log-det divergence** to the URDF's
pseudo-inertia ``J_0``:

    D(J | J_0) = tr(J_0^-1 J) - log det(J_0^-1 J) - 4  ~  1/2 || J_0^-1/2 (J - J_0) J_0^-1/2 ||^2,

zero at the URDF, growing as the relative change of the mass distribution squared, and infinite
at the boundary of the realisable cone: a barrier that keeps every iterate realisable.  Rotor
inertias and friction, which must not be negative, get the scalar form ``d(x | x_0) = x/x_0 -
log(x/x_0) - 1``; friction offsets, of either sign, a Gaussian ``((x - x_0) / s)^2 / 2``.
One unit of prior weighs as one sample of noise while the data weigh as
thousands: the prior decides only what the data do not (the standard directions no torque sees,
which an unconstrained fit leaves arbitrary, such as the mass of a link turning about a vertical
axis), and it keeps them at the URDF's values, not merely realisable.

Both terms are convex in ``phi``, so the problem is convex and smooth inside the cone: damped
Newton steps with a backtracking line search that stays inside it converge in tens of steps,
each a dense solve of the size of ``phi`` (well under a second for a 7-joint arm; measured in
the README), and the Newton decrement says when it is done.  No SDP solver is needed (an SDP
would add cvxpy and a conic solver as dependencies for a problem this small).
"""

import math
import time
import warnings

import numpy as np
import scipy.linalg

from ..inertia import body_fault
from ..model import pseudo_inertia, standard_from_pseudo_inertia

#: Smallest length scale of a link's mass distribution for the prior, metres.
MIN_LENGTH = 0.01

#: Newton steps the fit may take before it stops, unconverged (and says so).
MAX_ITERATIONS = 200

#: The largest factor by which :meth:`ConsistentFit.path` lowers the weight between solves.
PATH_STEP = 10 ** 0.25

#: A weight below this is reached by continuation from it (:meth:`ConsistentFit.path`): the
#: strongest prior ``prior_weight='auto'`` tries, whose optimum is a few steps from the prior.
CONTINUED_FROM = 1000.0

#: The fit has converged when half the Newton decrement (the predicted decrease of the
#: objective, in units of one squared noise sample) is below this, relative to the objective
#: plus one; or below ROUND_OFF when no step decreases the objective as computed (noise-free
#: data weigh 1e8 times the prior, and the objective's round-off shows).
TOLERANCE, ROUND_OFF = 1e-9, 1e-6


class ConvergenceWarning(UserWarning):
    """An iterative fit stopped before it converged: its result is its last iterate."""


#: A pseudo-inertia this close to singular, relative to its size, is on the cone's boundary:
#: its inverse keeps about one digit.  (1e-12 stopped weak priors short of optima that lie
#: closer than that to the boundary: a link the data push towards a degenerate body.)
ON_THE_BOUNDARY = 1e-15


def log_det_divergence(J, J0):
    """
    Return ``D(J | J0) = tr(J0^-1 J) - log det(J0^-1 J) - 4``; inf outside the cone.

    A ``J`` within round-off of its boundary (its smallest eigenvalue under
    :data:`ON_THE_BOUNDARY` of its largest diagonal entry) counts as outside: a weak prior lets
    the fit press against the cone, and a step that lands there leaves ``J`` numerically
    singular, its inverse (the gradient) undefined.
    """
    try:
        L = np.linalg.cholesky(J)
    except np.linalg.LinAlgError:
        return math.inf
    if np.linalg.eigvalsh(J)[0] <= ON_THE_BOUNDARY * np.max(np.diag(J)):
        return math.inf
    L0 = np.linalg.cholesky(J0)
    return (np.trace(np.linalg.solve(J0, J)) - 2 * np.log(np.diag(L)).sum()
            + 2 * np.log(np.diag(L0)).sum() - len(J))


def physical_problems(standard, names):
    """
    List what makes a standard parameter vector physically impossible, link by link.

    ``standard`` in ``names`` order (:func:`parameter_names`).  Per link: mass not positive,
    inertia about the centre of mass not positive definite or breaking a triangle inequality
    (:func:`..inertia.body_fault`); rotor inertias and friction negative.  Empty
    when the set is realisable.
    """
    standard = np.asarray(standard, dtype=float)
    problems = []
    for link, idx in _links(names):
        fault = body_fault(standard[idx])
        if fault:
            problems.append(f'link {link}: {fault}')
    for i, name in enumerate(names):
        if name.split('_', 1)[0] in NON_NEGATIVE and standard[i] < 0:
            problems.append(f'{name} = {standard[i]:.6g} is negative')
    return problems


#: Kinds of scalar standard parameters (the name's prefix) that physics keeps non-negative.
NON_NEGATIVE = ('Ia', 'Fv', 'Fc', 'Fvm', 'Fcm')


def _links(names):
    """Yield ``(link, indices of its 10 parameters)`` from standard parameter names."""
    for i, name in enumerate(names):
        if name.startswith('XX_'):
            yield name[3:], np.arange(i, i + 10)


#: ``vec(J) = _PSEUDO @ phi`` for one link (16, 10): the pseudo-inertia is linear in phi.
_PSEUDO = np.column_stack([pseudo_inertia(e).reshape(-1) for e in np.eye(10)])


class ConsistentFit:
    """The convex fit of the module docstring, for one BaseParameters and a prior."""

    def __init__(self, base, prior, estimate_values):
        names = base.standard_names
        self.p = len(names)
        position = {name: i for i, name in enumerate(names)}
        T = np.zeros((base.count, self.p))
        T[np.arange(base.count), base.index] = 1.0
        for k, name in enumerate(base.grouped):
            T[:, position[name]] += base.beta[:, k]
        self.T = T
        self.links = [idx for _, idx in _links(names)]
        self.scalars = np.array([i for i, n in enumerate(names)
                                 if n.split('_', 1)[0] in NON_NEGATIVE], dtype=int)
        taken = set(np.concatenate(self.links + [self.scalars]).tolist())
        self.free = np.array([i for i in range(self.p) if i not in taken], dtype=int)
        prior = np.asarray(prior, dtype=float)
        self.J0 = [_positive_definite_near(prior[idx]) for idx in self.links]
        self.J0inv = [np.linalg.inv(J0) for J0 in self.J0]
        # the same, stacked, as prior() takes every link at once: (links, 10), (links, 4, 4)
        self._index = np.array(self.links, dtype=int).reshape(-1, 10)
        self._J0 = np.array(self.J0).reshape(-1, 4, 4)
        self._J0inv = np.array(self.J0inv).reshape(-1, 4, 4)
        self._logdet0 = np.array([2 * np.log(np.diag(np.linalg.cholesky(J0))).sum()
                                  for J0 in self.J0])
        # rotor inertias and friction: the URDF's value where it has one, else (a URDF without
        # friction) the size the data give them, so that the prior stays one sample of noise
        base_value = dict(zip(base.independent, estimate_values))
        self.x0 = np.array([prior[i] if prior[i] > 0 else
                            max(abs(base_value.get(names[i], 0.0)), 1e-9)
                            for i in self.scalars])
        # the rest (friction offsets, of either sign): a Gaussian prior at the URDF's value, on
        # the scale of the larger of it and the estimate
        self.free0 = prior[self.free]
        self.free_scale = np.array([max(abs(prior[i]), abs(base_value.get(names[i], 0.0)),
                                        1e-9) for i in self.free])

    def start(self):
        """Return the prior as standard parameters: realisable, the Newton steps' start."""
        phi = np.zeros(self.p)
        for idx, J0 in zip(self.links, self.J0):
            phi[idx] = standard_from_pseudo_inertia(J0)
        phi[self.scalars] = self.x0
        phi[self.free] = self.free0
        return phi

    def prior(self, phi, derivatives=True):
        """
        Return ``sum D + sum d`` at ``phi`` (inf outside), and its gradient and Hessian.

        Every link's :func:`log_det_divergence` at once, on the stacked pseudo-inertias (one
        call of each linear-algebra routine, not one per link: the consistent fit evaluates
        this at every Newton step and line-search trial).
        """
        value = 0.0
        gradient, hessian = np.zeros(self.p), np.zeros((self.p, self.p))
        if len(self._index):
            J = (phi[self._index] @ _PSEUDO.T).reshape(-1, 4, 4)
            try:
                L = np.linalg.cholesky(J)
            except np.linalg.LinAlgError:
                return math.inf, None, None
            largest = np.max(np.diagonal(J, axis1=1, axis2=2), axis=1)
            if np.any(np.linalg.eigvalsh(J)[:, 0] <= ON_THE_BOUNDARY * largest):
                return math.inf, None, None
            divergence = (np.trace(np.linalg.solve(self._J0, J), axis1=1, axis2=2)
                          - 2 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
                          + self._logdet0 - 4)
            value = float(divergence.sum())
            if derivatives:
                Jinv = np.linalg.inv(J)
                gradient[self._index] = (self._J0inv - Jinv).reshape(-1, 16) @ _PSEUDO
                kron = np.einsum('aij,akl->aikjl', Jinv, Jinv).reshape(-1, 16, 16)
                hessian[self._index[:, :, None], self._index[:, None, :]] = \
                    _PSEUDO.T @ kron @ _PSEUDO
        x = phi[self.scalars]
        if np.any(x <= 0):
            return math.inf, None, None
        r = x / self.x0
        value += (r - np.log(r) - 1.0).sum()
        gradient[self.scalars] = (1.0 - 1.0 / r) / self.x0
        hessian[self.scalars, self.scalars] = 1.0 / x ** 2
        z = (phi[self.free] - self.free0) / self.free_scale
        value += 0.5 * (z @ z)
        gradient[self.free] = z / self.free_scale
        hessian[self.free, self.free] = 1.0 / self.free_scale ** 2
        return value, gradient, hessian

    def path(self, R, rhs, weights):
        """
        Solve at each of ``weights``, from the largest down, each from the last solution.

        Returns ``{weight: (phi, info)}``.  A weak prior's optimum lies far from the prior and
        near the cone's boundary, where Newton steps from the prior crawl (a weak barrier is
        far from self-concordant in the data's units): on a real Panda, 200 steps at 0.1 did
        not get there.  Along the path (continuation in the weight, as an interior-point
        method follows its central path) the weight falls by at most :data:`PATH_STEP` per
        solve, each starting near its optimum: 2-20 steps each.
        """
        wanted = sorted({float(w) for w in weights}, reverse=True)
        schedule = []
        for high, low in zip(wanted, wanted[1:] + [None]):
            schedule.append(high)
            while low is not None and schedule[-1] / PATH_STEP > low * (1 + 1e-9):
                schedule.append(schedule[-1] / PATH_STEP)
        out, start, steps = {}, None, 0
        for weight in schedule:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore', ConvergenceWarning)
                phi, info = self.solve(R, rhs, weight, start)
            steps += info['iterations']
            if weight in wanted:
                # the Newton steps of every solve down to this one: what the weight cost
                out[weight] = (phi, dict(info, path_iterations=steps, path_from=wanted[0]))
            if info['converged']:
                start = phi
        return out

    def solve(self, R, rhs, weight, start=None):
        """
        Minimise ``|R T phi - rhs|^2 + 2 weight^2 prior(phi)``; return phi, info.

        ``start``: a realisable ``phi`` to start from (default the prior, :meth:`start`).
        """
        started = time.perf_counter()
        A = R @ self.T
        AtA, Atb = A.T @ A, A.T @ rhs
        w2 = weight ** 2

        def objective(phi, derivatives=True):
            value, gradient, hessian = self.prior(phi, derivatives)
            if not math.isfinite(value):
                return math.inf, None, None
            r = A @ phi - rhs
            if not derivatives:
                return r @ r + 2 * w2 * value, None, None
            return (r @ r + 2 * w2 * value, 2 * (AtA @ phi - Atb) + 2 * w2 * gradient,
                    2 * AtA + 2 * w2 * hessian)

        phi = self.start() if start is None else np.array(start, dtype=float)
        value, gradient, hessian = objective(phi)
        if not math.isfinite(value):
            raise ValueError('the consistent fit must start from a realisable phi')
        converged, iterations, status = False, 0, ''
        while iterations < MAX_ITERATIONS:
            step = _newton_step(hessian, gradient)
            decrement = -gradient @ step                    # twice the predicted decrease
            if decrement / 2 <= TOLERANCE * (1.0 + value):
                converged, status = True, 'Newton decrement below tolerance'
                break
            iterations += 1
            t = 1.0
            while t > 1e-12:
                trial = objective(phi + t * step, derivatives=False)[0]
                if trial < value and trial <= value - 0.25 * t * decrement:
                    break
                t *= 0.5
            else:
                # no decrease the objective's round-off can show: at the optimum if the step
                # had little left to gain, else stuck
                converged = decrement / 2 <= ROUND_OFF * (1.0 + value)
                status = ('at the optimum to round-off' if converged else
                          'the line search found no decrease')
                break
            phi = phi + t * step
            value, gradient, hessian = objective(phi)
        else:
            status = f'{MAX_ITERATIONS} Newton steps taken'
        seconds = time.perf_counter() - started
        if not converged:
            warnings.warn(ConvergenceWarning(
                f'the physically consistent fit did not converge: {status} ({iterations} '
                f'iterations, {seconds:.1f} s); its standard parameters are the last iterate, '
                'realisable but not the best fit'), stacklevel=4)
        return phi, {
            'method': 'log-det divergence prior, damped Newton (Lee, Wensing & Park 2020)',
            'seconds': seconds, 'iterations': iterations, 'converged': converged,
            'status': status, 'prior_weight': float(weight)}


def _newton_step(hessian, gradient):
    """Solve ``hessian step = -gradient``, scaled by the diagonal (it spans 1e12 and more)."""
    s = 1.0 / np.sqrt(np.maximum(np.diag(hessian), 1e-300))
    H = hessian * s[:, None] * s[None, :]
    try:
        y = scipy.linalg.cho_solve(scipy.linalg.cho_factor(H), -s * gradient)
    except np.linalg.LinAlgError:
        y = np.linalg.lstsq(H, -s * gradient, rcond=None)[0]
    return s * y


def _positive_definite_near(phi):
    """Return a positive definite pseudo-inertia near ``phi``'s."""
    J = pseudo_inertia(phi)
    m = J[3, 3]
    length = math.sqrt(max(np.trace(J[:3, :3]), 0.0) / m) if m > 0 else 0.0
    length = max(length, MIN_LENGTH)
    # in units of the link's size, clip eigenvalues from below: URDFs of massless frames and
    # of point masses are not strictly positive definite
    S = np.diag([1 / length, 1 / length, 1 / length, 1.0])
    mass = m if m > 0 else 1e-3
    w, V = np.linalg.eigh(S @ J @ S / mass)
    w = np.maximum(w, 1e-4)
    Sinv = np.diag([length, length, length, 1.0])
    return mass * Sinv @ (V * w) @ V.T @ Sinv
