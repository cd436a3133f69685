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
Base inertial parameters by QR decomposition (Khalil & Dombre, Appendix 5).

``W`` stacks, for ``r`` random states, the energy rows ``h(q, qd)`` (A5.1-A5.2, method "energy") or
the torque regressor ``Y(q, qd, qdd)`` (method "dynamic").  Then:

1. Parameters with no effect are removed: their column of ``W`` is zero (dynamic) or constant
   (energy; ``W`` is centred column by column, since energy is defined up to a constant).
2. The rank ``b`` comes from a QR decomposition with column pivoting of ``W`` with unit columns
   (so that units and the robot's size do not matter: a parameter whose column is 1e-8 of the
   others is as visible as any), by :func:`numerical_rank`: the diagonal ``|R_ii|`` is zero below
   Khalil & Dombre's numerical zero ``tau = max(r, c) eps max|R_ii|`` (A5.4, with the factor
   ``max(r, c)`` for the rounding accumulated over ``r`` rows and ``c`` columns), certainly not
   zero above ``1e-4 max|R_ii|``; between the two, the rank is cut where they drop most.
   The band matters: sampled rows carry rounding (1e-15 of the largest for the torque regressor,
   up to 1e-13 for energy rows), and real URDFs that print angles as ``3.14159`` make columns
   dependent only to 1e-9, which no experiment can identify; a real weak direction (1e-6 of the
   largest, nearly parallel axes) stands far from both.  The ratio at the cut is ``rank_gap``; a
   warning says when it is below 1e3.
3. Which ``b`` parameters stand for the others follows Khalil's convention: columns in his order
   (links from the base to the tips, ``XX XY XZ YY YZ ZZ MX MY MZ M Ia`` within a link), a
   parameter is independent when its column is not in the span of the columns before it (a QR
   decomposition without pivoting).  So ``YY_j`` groups into ``XX_j`` and a link's mass into its
   antecedent's parameters, as the textbook rules say.
4. ``beta = R1^-1 R2`` from the QR decomposition of ``[W1 W2]`` (A5.9-A5.12) and
   ``K_B = K1 + beta K2`` (A5.8).

Friction parameters do no conservative work (no energy function); each acts on its own joint only,
so ``Fv_j`` and ``Fc_j`` are always base parameters (method "dynamic" confirms it).
"""

from dataclasses import dataclass, field
import functools
import math
import warnings

import numpy as np
import scipy.linalg

from . import closures
from ..model import PARAMETER_NAMES
from ..rigid.energy import energy_regressor
from ..rigid.regressor import has_armature, parameter_names, regressor, standard_parameters

#: Coefficients of grouping equations below this are rounding of zero: geometric coefficients of
#: robots are products of lengths, many orders of magnitude larger.
COEFFICIENT_ZERO = 1e-10

#: QR diagonal entries above this fraction of the largest are base directions for sure.
CERTAINLY_RANK = 1e-4

#: A rank decision whose kept and dropped QR diagonals are closer than this ratio gets a warning.
CLEAR_GAP = 1e3

#: Base parameters that reproduce the dynamics on fresh states only to worse than this
#: (``check_error``; 1e-16-4e-12 on example-robot-data's robots) are wrong: a warning says so.
CHECK_LIMIT = 1e-8

#: A column whose norm is below this fraction of the largest column norm has no effect: rounding
#: leaves about 1e-14 on structurally zero columns, while real effects 1e-6 of the largest stay.
NO_EFFECT = 1e-10


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """
    The base (identifiable) parameters of a robot and how the standard ones group into them.

    Attributes
    ----------
    count : int
        ``b``, the number of base parameters (the rank of ``W``).
    names : tuple of str
        Base parameter names: the standard parameter each stands for, suffixed ``_R`` when others
        are regrouped into it (``ZZ_link2_R``).
    values : ndarray, shape (b,)
        ``K_B`` for the model's own (URDF) parameters.
    beta : ndarray, shape (b, g)
        ``K_B = K1 + beta K2``, ``K1`` the ``independent`` and ``K2`` the ``grouped`` parameters.
    independent : tuple of str
        ``K1``: the standard parameters kept, one per base parameter.
    grouped : tuple of str
        ``K2``: parameters with an effect, regrouped into the independent ones.
    no_effect : tuple of str
        Parameters with no effect on the dynamics at all.
    equations : tuple of str
        One grouping equation per base parameter, ``ZZ_link2_R = ZZ_link2 + YY_link3 + ...``
        (formatted on first use).
    index : ndarray of int, shape (b,)
        Positions of ``independent`` in the standard parameter vector: the base regressor is
        ``Y[..., index]``.
    standard_names : tuple of str
        All standard parameters in their order (:func:`parameter_names`).
    samples, seed, method, friction, armature
        How ``W`` was built: ``samples`` random states.
    rows : int
        Rows of ``W``.
    rank_gap : float
        Smallest kept over largest dropped ``|R_ii|`` of the pivoted QR (inf when nothing dropped):
        how clear-cut the rank decision was.
    loops : ClosedLoops or None
        The loop closures of a closed-loop robot.
    check_error : float
        ``max |W_B K_B - W K| / max |W K|`` on fresh random states over a whole turn of every
        joint (dynamic regressor, and energy rows for the energy method): should be near 1e-15;
        above :data:`CHECK_LIMIT` a warning says the base parameters are wrong.

    """

    count: int
    names: tuple
    values: np.ndarray
    beta: np.ndarray
    independent: tuple
    grouped: tuple
    no_effect: tuple
    index: np.ndarray
    standard_names: tuple
    samples: int
    seed: int
    method: str
    friction: bool
    armature: bool
    rows: int
    rank_gap: float
    loops: object = None
    check_error: float = field(default=float('nan'))

    @functools.cached_property
    def equations(self):
        """One grouping equation per base parameter (see the class docstring)."""
        return tuple(_equation(bn, name, row, self.grouped)
                     for bn, name, row in zip(self.names, self.independent, self.beta))

    @functools.cached_property
    def identity(self):
        """
        Return what tells these base parameters from others: equal for the same columns.

        Their names, the standard ones, the columns kept, the grouping and the values, the
        friction and armature; a closed loop's closures by ``id``.  Two made apart for one
        robot (every fold of a cross-validation makes its own) are known as the same.
        """
        return (self.names, self.standard_names, self.index.tobytes(), self.beta.tobytes(),
                self.values.tobytes(), self.friction, self.armature,
                None if self.loops is None else ('id', id(self.loops)))

    @property
    def eliminated(self):
        """Give the standard parameters that are not base parameters: no effect, or regrouped."""
        return self.no_effect + self.grouped

    def base_regressor(self, Y):
        """Select the columns of a standard regressor ``Y (..., p)`` that multiply ``K_B``."""
        return np.take(np.asarray(Y), self.index, axis=-1)     # 3x faster than Y[..., index]

    def to_dict(self):
        """Return a plain mapping (for YAML or JSON): count, parameters, values, equations."""
        return {
            'count': self.count,
            'method': self.method,
            'samples': self.samples,
            'seed': self.seed,
            'friction': self.friction,
            'armature': self.armature,
            'parameters': [{'name': n, 'value': float(v), 'equation': e}
                           for n, v, e in zip(self.names, self.values, self.equations)],
            'no_effect': list(self.no_effect),
            'grouped': list(self.grouped),
            'rank_gap': float(self.rank_gap),
            'check_error': float(self.check_error),
        }

    def to_yaml(self):
        """Return the :meth:`to_dict` mapping as a YAML document."""
        import yaml
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    def __repr__(self):
        return (f'BaseParameters(count={self.count} of {len(self.standard_names)} standard, '
                f'method={self.method!r}, samples={self.samples})')


def default_samples(model, method, columns, loops=None):
    """
    Random states used by default: about 4 rows of ``W`` per column, at least 100 rows.

    An energy row is one state; a torque row one joint (one active joint for closed loops).
    """
    rows = max(4 * columns, 100)
    if method == 'energy':
        return rows
    per_state = model.n if loops is None else len(loops.active)
    return max(1, math.ceil(rows / max(per_state, 1)))


def random_states(model, rng, count, within_limits=True):
    """
    ``count`` random (q, qd, qdd): q uniform within the joint limits (``[-pi, pi]`` if none).

    A joint whose range is empty (``lower == upper``: exporters write ``0 0`` for limits left
    unset, example-robot-data's double_pendulum) is drawn over ``[-pi, pi]`` too, and every
    joint is without ``within_limits``: base parameters are the same at every configuration,
    and a joint held at one would hide those that only gravity's change with it shows.
    """
    empty = ~(model.upper > model.lower) | (not within_limits)
    lo = np.where(np.isfinite(model.lower) & ~empty, model.lower, -math.pi)
    hi = np.where(np.isfinite(model.upper) & ~empty, model.upper, math.pi)
    q = lo + (hi - lo) * rng.uniform(size=(count, model.n))
    return q, rng.uniform(-1.0, 1.0, (count, model.n)), rng.uniform(-1.0, 1.0, (count, model.n))


def _friction_columns(model, armature, friction):
    """Mask of the friction parameters among the standard ones (all False without friction)."""
    names = parameter_names(model, armature=armature, friction=friction)
    return np.array([name.split('_', 1)[0] in FRICTION_KINDS for name in names])


#: Kinds of friction parameter (the prefix of their standard names).
FRICTION_KINDS = ('Fv', 'Fc', 'Fo', 'Fvm', 'Fcm')


def _states(model, loops, rng, samples, within_limits=True):
    """Random states ``(q, qd, qdd, G)``; ``G`` maps active to all joint velocities (or None)."""
    if loops is None:
        return (*random_states(model, rng, samples, within_limits), None)
    return closures.sample(model, loops, rng, samples)


def _observations(model, method, states, armature, friction):
    """
    ``W`` with a column for every standard parameter.

    Dynamic: torque regressor rows, projected on the active joints (``G^T Y``) for closed loops.
    Energy: energy rows, with zero friction columns (friction has no energy function).
    """
    q, qd, qdd, G = states
    if method == 'dynamic':
        Y = regressor(model, q, qd, qdd, armature=armature, friction=friction)
        if G is not None:
            Y = np.einsum('sna,snp->sap', G, Y)
        return Y.reshape(-1, Y.shape[-1])
    h = energy_regressor(model, q, qd, armature=armature)
    if not friction:
        return h
    fcols = _friction_columns(model, armature, friction)
    W = np.zeros((h.shape[0], len(fcols)))
    W[:, ~fcols] = h
    return W


def _friction_observations(model, states, armature, friction):
    """Friction torque rows (on the active joints for closed loops), all standard columns."""
    q, qd, qdd, G = states
    Y = regressor(model, q, qd, np.zeros_like(qdd), armature=armature, friction=friction)
    Y[..., ~_friction_columns(model, armature, friction)] = 0.0
    if G is not None:
        Y = np.einsum('sna,snp->sap', G, Y)
    return Y.reshape(-1, Y.shape[-1])


def _reduce(model, W, cols, samples, method, loops):
    """Reduce the columns ``cols`` of ``W`` to base parameters: ``(k1, k2, beta, rank_gap)``."""
    norms = np.linalg.norm(W[:, cols], axis=0)
    Ws = W[:, cols] / norms
    r, c = Ws.shape
    if r < c:
        least = default_samples(model, method, c, loops)
        raise ValueError(f'{samples} samples give {r} rows of W for {c} parameters: W cannot '
                         f'reveal the rank; use at least {least} samples')
    # W = Q R0 with Q orthonormal: R0 (c x c) has every column relation of W, so the pivoted QR
    # and the QR of [W1 W2] below work on R0, not on the r x c W (one tall QR instead of three).
    # R0's diagonal is also the order-preserving QR of step 3.
    R0 = scipy.linalg.qr(Ws, mode='r')[0][:c]
    # 2. rank by QR with column pivoting
    diag = np.sort(np.abs(np.diag(scipy.linalg.qr(R0, mode='r', pivoting=True)[0])))[::-1]
    b, rank_gap = numerical_rank(diag, r, c)
    if rank_gap < CLEAR_GAP:
        warnings.warn(f"base parameters of '{model.name}': the rank decision is not clear-cut "
                      f'(|R_ii| {diag[b - 1]:.2e} kept, {diag[b]:.2e} dropped, of '
                      f'{diag[0]:.2e}); try more samples, or the other method', RuntimeWarning,
                      stacklevel=3)
    tau = math.sqrt(diag[b - 1] * (diag[b] if b < c else diag[b - 1] * 1e-6))
    # 3. Khalil's choice: a column is independent if not in the span of those before it
    independent = np.abs(np.diag(R0)) > tau
    if np.count_nonzero(independent) != b:
        # the order-preserving pass disagrees with the rank: keep the pivoted choice instead
        independent = np.zeros(c, dtype=bool)
        independent[scipy.linalg.qr(R0, mode='r', pivoting=True)[1][:b]] = True
    sel, dep = np.flatnonzero(independent), np.flatnonzero(~independent)
    # 4. beta = R1^-1 R2 from the QR of [W1 W2] (here of [R0_1 R0_2]), in unit-column scale,
    # then back to units
    R = scipy.linalg.qr(np.hstack([R0[:, sel], R0[:, dep]]), mode='r')[0]
    beta_s = scipy.linalg.solve_triangular(R[:b, :b], R[:b, b:])
    beta = beta_s / norms[sel][:, None] * norms[dep][None, :]
    return cols[sel], cols[dep], beta, rank_gap


def base_parameters(model, *, friction=False, armature=None, samples=None, seed=0,
                    method='energy', loops=None):
    """
    Compute the base parameters of ``model`` numerically (Khalil & Dombre, A5.1-A5.12).

    Parameters
    ----------
    model : Model
        The robot: a tree, or with ``loops`` the tree of a closed-loop robot.
    friction : bool or 'offset'
        Include ``Fv, Fc`` per joint among the standard parameters, and ``Fo`` (the friction
        offsets) with ``'offset'`` or where the model has them
        (:func:`~manipulator_dynamics.rigid.regressor.has_offset`).
    armature : bool or None
        Include ``Ia`` per joint; None (default): if the model has rotor inertias, as
        :func:`~manipulator_dynamics.standard_parameters`.
    samples : int, optional
        Random states drawn; default about 4 rows of ``W`` per standard parameter.
    seed : int
        Seed of the random states (the result is reproducible).
    method : {"energy", "dynamic"}
        Rows of ``W``: energy functions ``h(q, qd)``, or torque regressor ``Y(q, qd, qdd)``.
    loops : str, path, mapping or ClosedLoops, optional
        Loop closures (see :mod:`.closures`): the active joints are drawn at
        random and the passive ones solved from the closures (A5.3).

    Returns
    -------
    BaseParameters

    Raises
    ------
    ValueError
        Bad arguments, a model without joints, too few samples for the rank found, or loops
        that cannot be closed.

    """
    if method not in ('energy', 'dynamic'):
        raise ValueError(f"method must be 'energy' or 'dynamic', got {method!r}")
    if model.n == 0:
        raise ValueError(f"model '{model.name}' has no joints: nothing moves, nothing to identify")
    if loops is not None:
        loops = closures.load_closures(model, loops)
    massless = [link for link, k in zip(model.link_names, model.inertial) if not np.any(k)]
    if massless:
        warnings.warn(f'links {", ".join(massless)} have no mass or inertia in the URDF: their '
                      'standard parameters are 0, so the base parameter values computed from '
                      'them are too; the structure (names, equations) does not depend on them',
                      UserWarning, stacklevel=2)
    armature = has_armature(model, armature)
    names = parameter_names(model, armature=armature, friction=friction)
    K = standard_parameters(model, armature=armature, friction=friction)
    p = len(names)
    if samples is None:
        samples = default_samples(model, method, p, loops)
    samples = int(samples)
    if samples < 1:
        raise ValueError(f'samples must be a positive number of random states, got {samples}')
    rng = np.random.default_rng(seed)
    states = _states(model, loops, rng, samples)
    W = _observations(model, method, states, armature, friction)
    if method == 'energy':
        W = W - W.mean(axis=0)       # energy is defined up to a constant
    # energy rows cannot see friction: its parameters form a block of their own (torque rows);
    # they never group with inertial ones (different functions of the motion)
    fcols = _friction_columns(model, armature, friction)
    blocks = [(W, ~fcols if method == 'energy' else np.ones(p, dtype=bool))]
    if method == 'energy' and friction:
        blocks.append((_friction_observations(model, states, armature, friction), fcols))
    k1, k2, betas, gaps, effect = [], [], [], [], np.zeros(p, dtype=bool)
    for Wb, mask in blocks:
        # 1. parameters with no effect: zero (or, for energy, constant) columns
        norms = np.linalg.norm(Wb, axis=0)
        acting = mask & (norms > NO_EFFECT * norms[mask].max(initial=0.0))
        effect |= acting
        if acting.any():
            a, d, beta, gap = _reduce(model, Wb, np.flatnonzero(acting), samples, method,
                                      loops)
            k1.append(a)
            k2.append(d)
            betas.append(beta)
            gaps.append(gap)
    k1, k2 = np.concatenate(k1), np.concatenate(k2)
    beta = scipy.linalg.block_diag(*betas)
    order = np.argsort(k1, kind='stable')      # base parameters in the standard order
    k1, beta = k1[order], beta[order]
    beta[np.abs(beta) < COEFFICIENT_ZERO] = 0.0
    values = K[k1] + beta @ K[k2]
    regrouped = np.any(beta != 0.0, axis=1)
    base_names = tuple(names[i] + ('_R' if g else '') for i, g in zip(k1, regrouped))
    result = BaseParameters(
        count=len(k1), names=base_names, values=values, beta=beta,
        independent=tuple(names[i] for i in k1), grouped=tuple(names[j] for j in k2),
        no_effect=tuple(names[i] for i in np.flatnonzero(~effect)), index=k1,
        standard_names=names, samples=samples, seed=seed, method=method, friction=friction,
        armature=armature, rows=W.shape[0], rank_gap=min(gaps), loops=loops)
    object.__setattr__(result, 'check_error', check(model, result, seed + 1))
    if not result.check_error <= CHECK_LIMIT:
        warnings.warn(f'base parameters of {model.name} reproduce its dynamics on fresh random '
                      f'states only to {result.check_error:.1e} (relative; expected near 1e-15): '
                      'a parameter the random states did not show is missing (a joint range too '
                      f'narrow to move it?), or the rank decision (gap {result.rank_gap:.1e}) is '
                      'wrong; try more samples, another seed or the other method',
                      UserWarning, stacklevel=2)
    return result


def numerical_rank(values, rows, columns):
    """
    Numerical rank of a matrix from its decreasing ``|R_ii|`` (or singular values), and the gap.

    Zero below ``max(rows, columns) eps max``, surely non-zero above ``CERTAINLY_RANK max``; in
    between, cut where consecutive values drop the most.  Returns ``(rank, ratio at the cut)``.
    """
    values = np.asarray(values, dtype=float)
    top = values[0]
    floor = max(rows, columns) * np.finfo(float).eps * top
    lo = int(np.count_nonzero(values > CERTAINLY_RANK * top))
    hi = int(np.count_nonzero(values > floor))
    below = np.append(values, 0.0)
    best, gap = hi, math.inf
    if hi > lo or hi < len(values):
        best, gap = lo, -1.0
        for k in range(max(lo, 1), hi + 1):
            ratio = below[k - 1] / max(below[k], floor * 1e-3)
            if ratio > gap:
                best, gap = k, ratio
    return best, gap


def check(model, base, seed, samples=None):
    """
    ``max |W_B K_B - W K| / max |W K|`` on fresh random states (see BaseParameters).

    Drawn over a whole turn of every joint, limits or not (a tree's closures permitting): a
    parameter that states within a narrow range did not show is then missed, and seen.
    """
    rng = np.random.default_rng(seed)
    K = standard_parameters(model, armature=base.armature, friction=base.friction)
    count = samples or max(2, math.ceil(200 / max(model.n, 1)))
    states = _states(model, base.loops, rng, count, within_limits=False)
    errors = []
    for method in ('dynamic',) + (('energy',) if base.method == 'energy' else ()):
        W = _observations(model, method, states, base.armature, base.friction)
        full = W @ K
        reduced = W[:, base.index] @ base.values
        if method == 'energy':
            full, reduced = full - full.mean(), reduced - reduced.mean()
        errors.append(np.abs(reduced - full).max() / max(np.abs(full).max(), 1e-300))
    return float(max(errors))


def _equation(base_name, name, row, others):
    terms = [name]
    for j in np.flatnonzero(row):
        coef, other = float(row[j]), others[j]
        if abs(coef - 1.0) < 1e-9:
            terms.append(f'+ {other}')
        elif abs(coef + 1.0) < 1e-9:
            terms.append(f'- {other}')
        else:
            terms.append(f'{"+" if coef > 0 else "-"} {abs(coef):.8g} * {other}')
    return f'{base_name} = ' + ' '.join(terms)


#: Relative size below which a singular value of the grouping matrix, or a known combination's
#: value, counts as zero (the grouping coefficients are exact to about 1e-12).
ZERO = 1e-9


def grouping_matrix(base):
    """Return ``P (b, p)``: ``K_B = P K`` over ``base.standard_names``."""
    P = np.zeros((base.count, len(base.standard_names)))
    P[np.arange(base.count), base.index] = 1.0
    position = {name: i for i, name in enumerate(base.standard_names)}
    if base.grouped:
        P[:, [position[name] for name in base.grouped]] += base.beta
    return P


def link_columns(base, model, body):
    """Return the slice of a standard regressor's columns that multiply ``body``'s parameters."""
    start = base.standard_names.index(f'{PARAMETER_NAMES[0]}_{model.link_names[body]}')
    return slice(start, start + len(PARAMETER_NAMES))
