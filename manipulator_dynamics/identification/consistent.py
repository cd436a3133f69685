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

The fit here keeps ``J`` positive definite by construction with the **log-Cholesky**
parametrisation of Rucker & Wensing (2022): ``J = U U^T`` with

    U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]],

ten unconstrained numbers per link (``e^(2 alpha)`` is the mass, ``t`` the centre of mass, ``d``
and ``s`` the shape of the mass distribution, in metres); rotor inertias and friction are kept
non-negative by bounds.  ``scipy.optimize.least_squares`` (trust-region reflective) minimises

    || R (T phi(theta)) - Q^T g ||^2  +  w^2 || theta - theta_0 ||_scaled^2

where ``G = Q R`` is the identification's weighted base regressor (rows of unit noise),
``K_B = T phi`` maps standard to base parameters, and the prior ``theta_0`` comes from the URDF:
it decides only what the data do not (the standard directions that no torque sees, which an
unconstrained fit leaves arbitrary), since one unit of prior weighs as one sample of noise while
the data weigh as thousands.  The prior's metric coordinates (``s``, ``t``) are scaled by the
link's radius of gyration, so every term is dimensionless.

Why not an SDP (Wensing et al. solve one with a conic solver): it would add a solver dependency
(cvxpy and its back ends) for a problem this small; the log-Cholesky form turns it into an
unconstrained smooth least squares that scipy already solves in well under a second for a
7-joint arm (measured in the README).
"""

import math
import time
import warnings

import numpy as np

from ..model import body_fault, pseudo_inertia, standard_from_pseudo_inertia

#: Smallest length scale of a link's mass distribution for the prior, metres.
MIN_LENGTH = 0.01

#: How far the fit may take a link's log coordinates (alpha, d) from the prior's.
LOG_RANGE = 12.0

#: Residual evaluations the fit may spend before it stops, unconverged (and says so).
MAX_EVALUATIONS = 2000


class ConvergenceWarning(UserWarning):
    """An iterative fit stopped before it converged: its result is its last iterate."""


def from_log_cholesky(theta):
    """Return the pseudo-inertia ``U U^T`` of the log-Cholesky coordinates ``theta`` (10,)."""
    alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = theta
    U = math.exp(alpha) * np.array([[math.exp(d1), s12, s13, t1],
                                    [0.0, math.exp(d2), s23, t2],
                                    [0.0, 0.0, math.exp(d3), t3],
                                    [0.0, 0.0, 0.0, 1.0]])
    return U @ U.T


def log_cholesky_jacobian(theta):
    """Return ``d phi / d theta`` (10, 10): the standard parameters' derivatives, exactly."""
    alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = theta
    e = math.exp(alpha)
    U = e * np.array([[math.exp(d1), s12, s13, t1], [0.0, math.exp(d2), s23, t2],
                      [0.0, 0.0, math.exp(d3), t3], [0.0, 0.0, 0.0, 1.0]])
    out = np.empty((10, 10))
    out[:, 0] = standard_from_pseudo_inertia(2.0 * U @ U.T)       # d/d alpha: dU = U
    for k, (i, j) in enumerate(_ENTRIES, start=1):
        dU = np.zeros((4, 4))
        dU[i, j] = U[i, j] if i == j else e                         # d: e^alpha e^d; s, t: e^alpha
        dJ = dU @ U.T
        out[:, k] = standard_from_pseudo_inertia(dJ + dJ.T)
    return out


#: Entries of U of the coordinates after alpha: d1 d2 d3 s12 s23 s13 t1 t2 t3.
_ENTRIES = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))


def log_cholesky(J):
    """Return the log-Cholesky coordinates of a positive definite pseudo-inertia ``J``."""
    flip = J[::-1, ::-1]                       # J = U U^T, U upper <=> flip = L L^T, L lower
    U = np.linalg.cholesky(flip)[::-1, ::-1]
    e = U[3, 3]
    return np.array([math.log(e), math.log(U[0, 0] / e), math.log(U[1, 1] / e),
                     math.log(U[2, 2] / e), U[0, 1] / e, U[1, 2] / e, U[0, 2] / e,
                     U[0, 3] / e, U[1, 3] / e, U[2, 3] / e])


def physical_problems(standard, names):
    """
    List what makes a standard parameter vector physically impossible, link by link.

    ``standard`` in ``names`` order (:func:`parameter_names`).  Per link: mass not positive,
    inertia about the centre of mass not positive definite or breaking a triangle inequality
    (the pseudo-inertia not positive definite); rotor inertias and friction negative.  Empty
    when the set is realisable.
    """
    standard = np.asarray(standard, dtype=float)
    problems = []
    for link, idx in _links(names):
        fault = body_fault(standard[idx])
        if fault:
            problems.append(f'link {link}: {fault}')
    for i, name in enumerate(names):
        if name.split('_', 1)[0] in ('Ia', 'Fv', 'Fc') and standard[i] < 0:
            problems.append(f'{name} = {standard[i]:.6g} is negative')
    return problems


def _links(names):
    """Yield ``(link, indices of its 10 parameters)`` from standard parameter names."""
    for i, name in enumerate(names):
        if name.startswith('XX_'):
            yield name[3:], np.arange(i, i + 10)


class ConsistentFit:
    """The least squares of the module docstring, for one BaseParameters and a prior."""

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
        self.others = np.array([i for i, n in enumerate(names)
                                if n.split('_', 1)[0] in ('Ia', 'Fv', 'Fc')], dtype=int)
        prior = np.asarray(prior, dtype=float)
        self.theta0, self.length = [], []
        for idx in self.links:
            J0, length = _realisable(prior[idx])
            self.theta0.append(log_cholesky(J0))
            self.length.append(length)
        # friction and rotor inertia: their prior scaled by the larger of the prior and the
        # estimate (a base parameter of their own when not regrouped)
        base_value = dict(zip(base.independent, estimate_values))
        self.x0 = prior[self.others]
        self.scale = np.array([max(abs(prior[i]), abs(base_value.get(names[i], 0.0)), 1e-9)
                               for i in self.others])

    def standard(self, x):
        """Return the standard parameters of the variables ``x`` (links' theta, then others)."""
        phi = np.zeros(self.p)
        for k, idx in enumerate(self.links):
            phi[idx] = standard_from_pseudo_inertia(from_log_cholesky(x[10 * k:10 * k + 10]))
        phi[self.others] = x[10 * len(self.links):]
        return phi

    def jacobian(self, x):
        """Return ``d phi / d x`` (p, len(x)): block diagonal, one 10x10 block per link."""
        D = np.zeros((self.p, len(x)))
        for k, idx in enumerate(self.links):
            D[idx, 10 * k:10 * k + 10] = log_cholesky_jacobian(x[10 * k:10 * k + 10])
        D[self.others, 10 * len(self.links) + np.arange(len(self.others))] = 1.0
        return D

    def prior_jacobian(self, x):
        scale = np.ones(len(x))
        for k, length in enumerate(self.length):
            scale[10 * k + 4:10 * k + 10] = 1.0 / length
        scale[10 * len(self.links):] = 1.0 / self.scale
        return np.diag(scale)

    def start(self):
        return np.concatenate(self.theta0 + [np.maximum(self.x0, 0.0)])

    def prior_residual(self, x):
        out = []
        for k, (theta0, length) in enumerate(zip(self.theta0, self.length)):
            d = x[10 * k:10 * k + 10] - theta0
            d[4:] /= length
            out.append(d)
        out.append((x[10 * len(self.links):] - self.x0) / self.scale)
        return np.concatenate(out)

    def solve(self, R, rhs, weight):
        """Minimise ``|R T phi(x) - rhs|^2 + weight^2 |prior residual|^2``; return phi, info."""
        import scipy.optimize
        RT = R @ self.T
        nl = 10 * len(self.links)
        # the log coordinates (alpha, d) within LOG_RANGE of the prior's: a factor e^24 on a
        # mass is no constraint, but keeps exp() finite on the way (noise-free data weigh
        # 1e12 times the prior, and the first steps can be long)
        x0 = self.start()
        lower = np.concatenate([np.full(nl, -np.inf), np.zeros(len(self.others))])
        upper = np.full(len(x0), np.inf)
        logs = (np.arange(nl) % 10) < 4
        lower[:nl][logs] = x0[:nl][logs] - LOG_RANGE
        upper[:nl][logs] = x0[:nl][logs] + LOG_RANGE
        x0[nl:] = np.maximum(x0[nl:], 1e-12)           # strictly inside the bounds

        def residual(x):
            return np.concatenate([RT @ self.standard(x) - rhs,
                                   weight * self.prior_residual(x)])

        def jacobian(x):
            return np.vstack([RT @ self.jacobian(x), weight * self.prior_jacobian(x)])
        started = time.perf_counter()
        result = scipy.optimize.least_squares(residual, x0, jac=jacobian, bounds=(lower, upper),
                                              method='trf', x_scale='jac',
                                              max_nfev=MAX_EVALUATIONS)
        seconds = time.perf_counter() - started
        converged = result.status > 0            # 0: evaluation limit, -1: improper input
        if not converged:
            warnings.warn(ConvergenceWarning(
                f'the physically consistent fit did not converge: {result.message} '
                f'({result.nfev} evaluations, {seconds:.1f} s); its standard parameters are '
                'the last iterate, realisable but not the best fit'), stacklevel=4)
        return self.standard(result.x), {
            'method': 'log-Cholesky least squares (Rucker & Wensing 2022), scipy trf',
            'seconds': seconds, 'evaluations': int(result.nfev), 'converged': bool(converged),
            'status': str(result.message), 'prior_weight': float(weight)}


def _realisable(phi):
    """Return a positive definite pseudo-inertia near ``phi``'s and the link's length scale."""
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
    return mass * Sinv @ (V * w) @ V.T @ Sinv, length
