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
The weighted least squares of identification and the check of its deviations against time.

:func:`weighted_least_squares` (each joint weighted by its noise, estimated again from the
weighted fit), :func:`correlation_inflation` (a jackknife in blocks of time widens the
deviations where the rows are correlated), :func:`check_excitation` (a rank-deficient regressor
is an error naming what the motion does not excite), :func:`at_the_prior` (the directions the
motion barely excites kept at the prior's values).
"""

from typing import NamedTuple

import numpy as np

from ..errors import IdentificationError


#: Blocks of the delete-a-block jackknife that checks the reported standard deviations
#: (:func:`block_jackknife`): 10 gives each deviation 9 degrees of freedom (about 24 % of
#: scatter) while each block stays long against the residuals' correlation in time.
JACKKNIFE_BLOCKS = 10
#: The jackknife's median ratio above which the rows are taken as correlated and the deviations
#: widened by it: for independent rows it scatters from about 0.8 to 1.15 (10th-90th percentile
#: over noise draws, for 20-62 parameters), a real Panda's log gives 1.8 (5 Hz) to 2.2 (10 Hz).
CORRELATED = 1.25
#: Singular values of the weighted regressor, each column scaled by its parameter's prior scale
#: (:func:`prior_scale`), at or below which a direction of the base parameters keeps the
#: prior's value: the data determine a direction to ``1 / s`` of that scale (the rows are
#: weighted to unit noise).  The candidates the training folds choose between
#: (:func:`.selection.choose_prior_threshold`): 0, least squares, every direction from the
#: data; 1, only what the data know better than the prior's own scale.  Higher ones (to a
#: tenth, to 1 %) predicted a run no better on the demo arm, and moved well-excited fits.
PRIOR_THRESHOLDS = (0.0, 1.0)


class WeightedFit(NamedTuple):
    """
    :func:`weighted_least_squares`' answer.

    ``K`` the estimate, ``cov`` its covariance, ``sigma (n,)`` each joint's noise, ``G K = g``
    the weighted system (a row per equation, in time order), ``R K = z`` the same in ``n b``
    rows (each joint's R, scaled): the same least squares, whatever the log's length.
    """

    K: np.ndarray
    cov: np.ndarray
    sigma: np.ndarray
    G: np.ndarray
    g: np.ndarray
    R: np.ndarray
    z: np.ndarray


class JointFactors(NamedTuple):
    """
    Each joint's equations ``tau_j = W_j K`` reduced (:func:`joint_factors`): any weighting after.

    ``R (n, b, b)``: R of each joint's QR; ``z (n, b)``: ``Q_j^T tau_j``; ``outside (n,)``: the
    squared norm of what ``Q_j`` leaves of ``tau_j``.
    """

    R: np.ndarray
    z: np.ndarray
    outside: np.ndarray

    @classmethod
    def stacked(cls, pieces):
        """
        Return the factors of several sets of equations stacked, from each set's (TSQR).

        ``R`` of a joint's ``[W_j tau_j]`` is ``[[R_j, z_j], [0, sqrt(outside_j)]]``; the
        stacked rows' R is that of those ``(b + 1, b + 1)`` blocks stacked: each set is
        decomposed once, however many folds it trains.
        """
        n, b, _ = pieces[0].R.shape
        R, z, outside = np.zeros((n, b, b)), np.zeros((n, b)), np.zeros(n)
        for j in range(n):
            blocks = np.vstack([np.vstack([np.column_stack([p.R[j], p.z[j]]),
                                           np.r_[np.zeros(b), np.sqrt(p.outside[j])]])
                                for p in pieces])
            Rj = np.linalg.qr(blocks, mode='r')
            R[j], z[j], outside[j] = Rj[:b, :b], Rj[:b, b], Rj[b, b] ** 2
        return cls(R, z, outside)

    def unweighted_r(self):
        """Return R of the whole ``W``'s QR ``(b, b)``: its singular values and column norms."""
        n, b, _ = self.R.shape
        return np.linalg.qr(self.R.reshape(n * b, b), mode='r')


def joint_factors(W, tau):
    """
    Return the :class:`JointFactors` of ``tau = W K`` (``W (N, n, b)``, ``tau (N, n)``).

    Each joint's equations once as ``R_j`` and ``Q_j^T tau_j``, and what ``Q_j`` leaves of
    ``tau_j``: every weighting after it is a ``(n b, b)`` problem, whatever N (the rows of the
    weighted system ``G K = g`` are the joints' rows scaled, ``R_j / sigma_j``), and so is the
    whole ``W``'s R (:meth:`JointFactors.unweighted_r`).
    """
    N, n, b = W.shape
    R, z, outside = np.zeros((n, b, b)), np.zeros((n, b)), np.zeros(n)
    for j in range(n):
        # R of [W_j tau_j] is [[R_j, Q_j^T tau_j], [0, +-|what Q_j leaves of tau_j|]]
        Rj = np.linalg.qr(np.column_stack([W[:, j, :], tau[:, j]]), mode='r')
        rows_j = min(len(Rj), b)
        R[j, :rows_j], z[j, :rows_j] = Rj[:rows_j, :b], Rj[:rows_j, b]
        if len(Rj) > b:
            outside[j] = Rj[b, b] ** 2
    return JointFactors(R, z, outside)


def weighted_least_squares(W, tau, passes=5, kept=None):
    """
    Solve ``tau = W K`` (``W (N, n, b)``, ``tau (N, n)``) weighting each joint by its noise.

    Ordinary least squares gives each joint's residuals and noise ``sigma_j`` (their RMS with
    ``b / n`` degrees of freedom spent per joint); rows of joint j are weighted by
    ``1 / sigma_j`` and solved again.  The first ``sigma`` over-rates the quiet joints' noise:
    ordinary least squares lets the loud joints' noise into the shared parameters, and so into
    every joint's residuals (a wrist's by up to 70 % on a 7-joint arm).  So ``sigma`` is estimated
    again from the weighted fit's residuals, up to ``passes`` times, until it settles to 0.1 %.
    Returns a :class:`WeightedFit`: the estimate ``K``, its covariance ``s^2 (G^T G)^-1`` (``s``
    the RMS of the weighted residuals), the weighted system ``G K = g`` and its compact form.
    ``kept (N, n)``: the equations that count (the others' rows of ``W`` and ``tau`` are zero),
    for the noise's degrees of freedom; default every one.
    """
    N, n, b = W.shape
    factors = joint_factors(W, tau)
    rows = np.full(n, N) if kept is None else kept.sum(axis=0)
    K, cov, sigma = noise_weighted(factors, rows, passes)
    G = (W / sigma[None, :, None]).reshape(N * n, b)
    g = (tau / sigma).reshape(-1)
    return WeightedFit(K, cov, sigma, G, g,
                       (factors.R / sigma[:, None, None]).reshape(n * b, b),
                       (factors.z / sigma[:, None]).reshape(-1))


def noise_weighted(factors, rows, passes=5):
    """
    Return ``(K, cov, sigma)`` of :func:`weighted_least_squares` from the joints' factors.

    ``factors``: :class:`JointFactors`; ``rows (n,)``: each joint's equations that count.  What
    the weighting needs of the equations, whatever their number: a fold's, from its pieces'
    factors stacked (:meth:`JointFactors.stacked`).
    """
    R, z, outside = factors
    n, b, _ = R.shape

    def solve(scale):
        return np.linalg.lstsq((R / scale[:, None, None]).reshape(n * b, b),
                               (z / scale[:, None]).reshape(-1), rcond=None)[0]

    def squared_residuals(K):
        return ((z - R @ K) ** 2).sum(axis=1) + outside

    K = solve(np.ones(n))
    dof = np.maximum(rows - b / n, 1.0)
    sigma = None
    for _ in range(passes):
        new = np.sqrt(squared_residuals(K) / dof)
        new = np.where(new > 0, new, max(new.max(), 1e-300))
        settled = sigma is not None and np.max(np.abs(new / sigma - 1)) < 1e-3
        sigma = new
        K = solve(sigma)
        if settled:
            break
    s2 = float((squared_residuals(K) / sigma ** 2).sum()) / max(int(rows.sum()) - b, 1)
    information = np.einsum('jab,jac->bc', R, R / sigma[:, None, None] ** 2)
    return K, s2 * np.linalg.inv(information), sigma


#: The units of friction parameters (:func:`prior_scale`).
_FRICTION = ('N m s', 'N m')
#: A parameter the data know to this share of its value, or better, shows the size of those of
#: its unit (:func:`prior_scale`): two deviations from zero.
SEEN = 0.5
#: A parameter whose unit the prior puts all at zero gets this many times the largest scale:
#: no prior to keep, the data decide.
NO_PRIOR = 1e6
#: The kinds of parameters (the letters before a name's first ``_``) that share a unit.
_UNITS = {**dict.fromkeys(('XX', 'XY', 'XZ', 'YY', 'YZ', 'ZZ', 'Ia'), 'kg m^2'),
          **dict.fromkeys(('MX', 'MY', 'MZ'), 'kg m'), 'M': 'kg',
          **dict.fromkeys(('Fv', 'Fvm'), 'N m s'), **dict.fromkeys(('Fc', 'Fo', 'Fcm'), 'N m')}


def prior_scale(names, prior, estimate=None, std=None):
    """
    Return each base parameter's scale ``(b,)``: how far from the prior it may plausibly be.

    Its prior value's magnitude, and at least a tenth of the largest of its unit (inertias,
    first moments, masses, viscous and dry friction: the letters before its first ``_`` say
    which), so that a parameter the prior puts at zero (a product of inertia, a centre of mass
    on an axis, a friction offset) still has room.  A friction parameter, with least squares'
    ``estimate`` and its ``std``, at least the largest of its unit that the data determine to
    :data:`SEEN` of its value: a URDF's friction is more often a simulator's placeholder than a
    measurement (the Panda's damping of 0.003 N m s/rad on every joint), where its inertials
    come from CAD.  A unit
    the prior puts all at zero (a URDF without friction) says nothing: :data:`NO_PRIOR` times
    the largest scale, which the data always outweigh.
    """
    prior = np.abs(np.asarray(prior, dtype=float))
    units = [_UNITS.get(name.split('_')[0], name.split('_')[0]) for name in names]
    largest, seen = {}, {}
    for value, unit in zip(prior, units):
        largest[unit] = max(largest.get(unit, 0.0), value)
    if estimate is not None:
        for value, s, unit in zip(np.abs(estimate), std, units):
            if unit in _FRICTION and s < SEEN * value:
                seen[unit] = max(seen.get(unit, 0.0), value)
    scale = np.array([max(value, 0.1 * largest[unit], seen.get(unit, 0.0) if largest[unit] > 0
                          else 0.0) for value, unit in zip(prior, units)])
    known = scale[scale > 0]
    return np.where(scale > 0, scale, NO_PRIOR * (known.max() if known.size else 1.0))


def at_the_prior(R, z, prior, thresholds, scale):
    """
    Solve ``R K = z`` about ``prior``, keeping it in the directions the data barely determine.

    With ``D = diag(scale)`` the parameters' scales (:func:`prior_scale`) and ``R D = U S V^T``
    (R's rows weighted to unit noise), a direction is known from the data to ``1 / S`` of the
    prior's scale; those whose singular value is at or below ``threshold`` take nothing from
    them::

        K = prior + D V_k S_k^-1 U_k^T (z - R prior)        (k: the directions kept)

    (truncated SVD about the prior: Hansen, *Rank-Deficient and Discrete Ill-Posed Problems*,
    1998, ch. 3).  ``threshold`` 0 is least squares.  Returns ``(estimates, report)``:
    ``{threshold: K}``, and ``report(threshold)`` that says of one of them the directions
    kept at the prior, each parameter's share in them (``share (b,)``: the part of its unit
    direction, 0 to 1, that the data do not determine) and ``projector``, the map ``P`` of least
    squares' estimate onto the directions kept (the estimate's covariance is
    ``P cov P^T``).
    """
    D = np.asarray(scale, dtype=float)
    U, S, Vt = np.linalg.svd(R * D, full_matrices=False)
    c = U.T @ (z - R @ prior)
    estimates = {}
    for threshold in thresholds:
        keep = S > threshold
        estimates[threshold] = prior + D * (Vt[keep].T @ (c[keep] / S[keep]))

    def report(threshold):
        held = S <= threshold
        kept = Vt[~held]
        return {'threshold': float(threshold), 'directions': int(held.sum()),
                'smallest': float(S[-1]), 'share': (Vt[held] ** 2).sum(axis=0),
                'projector': D[:, None] * (kept.T @ kept) / D[None, :]}
    return estimates, report


def correlation_inflation(G, g, states, blocks=None):
    """
    Return ``(factor, report)``: how much the rows' correlation in time widens the deviations.

    ``s^2 (G^T G)^-1`` holds if the rows of ``G K = g`` are independent.  They are not quite,
    even for white torque noise (the parallel filter leaves neighbouring kept rows correlated
    by about 0.3), and far from it where the model misses something that follows the motion
    (a real robot: its residuals are smooth in time).  The delete-a-block jackknife measures the
    spread without that assumption: the ``states`` (``G`` has ``len(g) / states`` rows each, in
    time order) are cut into ``blocks`` consecutive blocks (:data:`JACKKNIFE_BLOCKS`), each left
    out in turn, ``jack^2 = (B - 1) / B sum_k (K_k - mean K)^2``.  The jackknife over-states
    the variance where leaving a block out costs much excitation (by 30 % on a 10 s
    excitation of the demo arm), so it is compared with what it would give if the rows were
    independent, known in closed form from ``M_k = M - G_k^T G_k`` (``M = G^T G``)::

        E[jack^2] = s^2 (B - 1) / B diag(sum_k M_k^-1 - 1/B sum_jk M_j^-1 C_jk M_k^-1)

    (``C_jk = M - G_j^T G_j - G_k^T G_k``, ``C_kk = M_k``).  The median over the parameters of
    ``jack / sqrt(E[jack^2])`` is one number, stable where each parameter's ratio alone
    scatters by a quarter, that says by how much fewer independent rows there are than rows;
    ``factor`` is that median where it is above :data:`CORRELATED` (for independent rows it
    scatters between about 0.8 and 1.15), else 1.  ``report``: ``method``, ``jackknife_ratio``
    (the median), ``factor`` and the ratio's 10th and 90th percentiles; 1 with the reason where
    there are fewer states than blocks or leaving a block out loses a parameter.
    """
    B = JACKKNIFE_BLOCKS if blocks is None else blocks
    if states < 2 * B:
        return _independent(states, B)
    per = len(g) // states
    edges = block_edges(states, B) * per
    products = [(G[a:b].T @ G[a:b], G[a:b].T @ g[a:b]) for a, b in zip(edges[:-1], edges[1:])]
    return _jackknife(products, lambda full: float(((g - G @ full) ** 2).sum()), len(g))


def factored_inflation(blocks, sigma, states):
    """
    Return :func:`correlation_inflation` of equations held as each time block's factors.

    ``blocks``: the :class:`JointFactors` of the rows of each of :func:`block_edges`'s blocks
    of ``states`` states, in time order; ``sigma (n,)``: each joint's noise, the weighting.
    The same jackknife, from ``(n b, b)`` numbers a block whatever the rows' number.
    """
    if states < 2 * len(blocks):
        return _independent(states, len(blocks))
    weight = 1.0 / sigma ** 2
    products = [(np.einsum('jab,jac,j->bc', f.R, f.R, weight),
                 np.einsum('jab,ja,j->b', f.R, f.z, weight)) for f in blocks]

    def squared_residual(full):
        return float(sum((((f.z - f.R @ full) ** 2).sum(axis=1) + f.outside) @ weight
                         for f in blocks))
    return _jackknife(products, squared_residual, states * len(sigma))


def block_edges(states, blocks=JACKKNIFE_BLOCKS):
    """Return the first state of each of ``blocks`` consecutive blocks, and ``states``."""
    return np.linspace(0, states, blocks + 1).round().astype(int)


def _independent(states, B):
    """Return the jackknife's answer where there are too few states for its blocks."""
    return 1.0, {'method': 'independent rows', 'factor': 1.0,
                 'reason': f'{states} states: too few for a {B}-block jackknife'}


def _jackknife(products, squared_residual, count):
    """
    Return :func:`correlation_inflation` from each block's ``(G_k^T G_k, G_k^T g_k)``.

    ``squared_residual(K)``: ``|g - G K|^2``; ``count``: the rows of ``G``.
    """
    B = len(products)
    plain = {'method': 'independent rows', 'factor': 1.0}
    M, r = sum(P for P, _ in products), sum(q for _, q in products)
    norms = np.sqrt(np.diag(M))
    # unit columns: M well scaled (the products scaled, not a copy of G's rows)
    unit = 1.0 / np.where(norms > 0, norms, 1.0)
    square = unit[:, None] * unit[None, :]
    M, r = M * square, r * unit
    P = [Pk * square for Pk, _ in products]
    inverse = []
    for k, Pk in enumerate(P):
        if np.linalg.cond(M - Pk) > 1e12:
            return 1.0, dict(plain, reason=f'leaving block {k + 1} of {B} out loses a parameter')
        inverse.append(np.linalg.inv(M - Pk))
    K = np.array([Mk @ (r - q * unit) for Mk, (_, q) in zip(inverse, products)])
    jack = (B - 1) / B * ((K - K.mean(axis=0)) ** 2).sum(axis=0)
    full = np.linalg.solve(M, r) * unit
    s2 = squared_residual(full) / max(count - len(r), 1)
    cross = np.zeros(len(r))
    for j in range(B):
        for k in range(B):
            C = M - P[j] if j == k else M - P[j] - P[k]
            cross += ((inverse[j] @ C) * inverse[k]).sum(axis=1)
    expected = s2 * (B - 1) / B * (sum(np.diag(Mk) for Mk in inverse) - cross / B)
    seen = expected > 0
    ratio = np.sqrt(jack[seen] / expected[seen])
    median = float(np.median(ratio))
    factor = median if median > CORRELATED else 1.0
    return factor, {
        'method': f'jackknife in {B} blocks of time against its value for independent rows',
        'jackknife_ratio': median, 'factor': factor,
        'ratio_percentiles_10_90': [float(x) for x in np.percentile(ratio, [10, 90])]}


def check_excitation(names, W, norms):
    """Raise naming the parameters that the motion leaves out (``W`` rank-deficient)."""
    unit = W / np.where(norms > 0, norms, 1.0)
    s, vt = np.linalg.svd(unit, full_matrices=False)[1:]
    small = s < 1e-8 * s[0]
    dead = norms <= 1e-12 * norms.max()
    if not (small.any() or dead.any()):
        return
    involved = set(np.flatnonzero(dead))
    for v in vt[small]:
        involved.update(np.flatnonzero(np.abs(v) > 0.1))
    listed = ', '.join(names[i] for i in sorted(involved))
    raise IdentificationError(
        f'the motion does not excite every parameter: {listed} cannot be told apart '
        f'({int(small.sum())} directions unobserved); move every joint, with varied '
        'velocities and accelerations (e.g. a sum of sines per joint), over a wide range')


def std_summary(processing):
    """Say how the deviations were checked against time (:func:`correlation_inflation`)."""
    told = processing.get('std')
    if not told:
        return ''
    if 'jackknife_ratio' not in told:
        return f"standard deviations: {told['method']} ({told['reason']})"
    ratio = told['jackknife_ratio']
    if told['factor'] > 1:
        return (f'standard deviations widened {ratio:.3g}x: a jackknife in '
                f'{JACKKNIFE_BLOCKS} blocks of time spreads that much more than independent '
                'rows would (residuals correlated in time: the model misses something that '
                'follows the motion)')
    return (f'standard deviations as fitted: a jackknife in {JACKKNIFE_BLOCKS} blocks of time '
            f'spreads {ratio:.3g}x what independent rows would (at most {CORRELATED:g} is '
            'independent)')


def relative_std(values, std):
    """Return ``100 std / |values|`` (percent); inf where a value is zero."""
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.where(np.abs(values) > 0, 100.0 * std / np.abs(values), np.inf)


def residual_rms(residual, left_out):
    """Return each joint's RMS of ``residual (N, n)`` over its rows not ``left_out`` (zeros)."""
    counted = np.maximum((~left_out).sum(axis=0), 1)
    return np.sqrt((residual ** 2).sum(axis=0) / counted)


def factored_residual_rms(factors, K, rows):
    """Return :func:`residual_rms` of ``tau - W K`` from the joints' ``factors``; ``rows (n,)``."""
    R, z, outside = factors
    return np.sqrt((((z - R @ K) ** 2).sum(axis=1) + outside) / np.maximum(rows, 1))
