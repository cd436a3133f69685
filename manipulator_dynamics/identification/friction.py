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
The friction laws identification takes, and the smooth law's Coulomb velocities.

``'none'``, ``'coulomb'`` (``Fv qd + Fc sign(qd)``), ``'offset'`` (``+ Fo``) and ``'smooth'``
(``Fv qd + Fc tanh(qd / vs) + Fo``, each joint's ``vs`` fitted first by separable least squares:
:func:`fit_coulomb_velocity`, its uncertainty carried into the deviations).
"""

import dataclasses
import math

import numpy as np

from .base_parameters import base_parameters
from .least_squares import weighted_least_squares
from ..errors import IdentificationError
from ..rigid.kinematics import coulomb_shape_of
from ..rigid.regressor import regressor


#: The friction laws :func:`identify` takes (its ``friction``), and their parameter layouts.
FRICTION_LAWS = ('none', 'coulomb', 'offset', 'smooth')
LAYOUTS = {'none': False, 'coulomb': True, 'offset': 'offset', 'smooth': 'offset'}

#: Coulomb velocities (rad/s, m/s) :func:`fit_coulomb_velocity` tries before refining; 0 is
#: the sign law.
COULOMB_VELOCITIES = (0.0, *np.logspace(-3, 0, 13))


def friction_law(friction):
    """Name the friction law of an ``identify(friction=...)`` argument; error if unknown."""
    if friction is False or friction is None:
        return 'none'
    if friction is True:
        return 'coulomb'
    if friction in FRICTION_LAWS:
        return friction
    raise IdentificationError(f'friction must be True, False or one of '
                              f'{", ".join(FRICTION_LAWS)}, got {friction!r}')


def with_law(model, law):
    """
    Return ``model`` with only the friction terms of ``law`` (not ``'smooth'``) in its shape.

    The law asked for, not the model's: no Coulomb velocity (the sign law), and the offsets
    ``Fo`` kept only with ``'offset'``.
    """
    if model.coulomb_velocity.any() or (law != 'offset' and model.friction_offset.any()):
        return dataclasses.replace(
            model, coulomb_velocity=np.zeros(model.n),
            friction_offset=model.friction_offset if law == 'offset' else np.zeros(model.n))
    return model


def friction_of(model, names, values):
    """
    Return ``model`` with the friction of base parameters ``names`` and ``values``, none other.

    The friction parameters are always base parameters of their own (:mod:`.base_parameters`):
    ``Fv_j``, ``Fc_j``, ``Fo_j``, a coupled motor's ``Fvm_j`` and ``Fcm_j``; every friction term
    not named is zero.  :func:`..control.friction_torque` of it is the friction part of what
    those base parameters predict.
    """
    kinds = ('Fv', 'Fc', 'Fo', 'Fvm', 'Fcm')
    named = [(n, v) for n, v in zip(names, values) if n.partition('_')[0] in kinds]
    bare = dataclasses.replace(model, viscous=np.zeros(model.n), coulomb=np.zeros(model.n),
                               friction_offset=np.zeros(model.n))
    drives = model.transmissions
    if drives is not None and drives.coupled_joints:
        zero = dict.fromkeys(drives.coupled_joints, 0.0)
        bare = dataclasses.replace(bare, transmissions=drives.with_motor_friction(zero, zero))
    if not named:
        return bare
    return bare.with_parameters([v for _, v in named], [n for n, _ in named])


#: Points of a row's interval over which :func:`averaged_coulomb` averages a Coulomb term.
AVERAGED_POINTS = 16


def averaged_coulomb(model, Y, names, qd, qdd, period):
    """
    Put in the Coulomb columns of ``Y (N, n, p)`` their mean over each row's interval.

    ``names``: the names of ``Y``'s columns (:func:`parameter_names`, or the base parameters',
    whose friction parameters are the standard ones); ``Fc_j`` (``s(qd_j)`` in joint ``j``'s
    equation) and a coupled motor's ``Fcm_j`` (``s(c . qd) c``) are replaced.  ``period``: the
    seconds between rows.  At a log's full rate a row's sign is its instant's; rows of a log cut
    down (:func:`.logs.differentiate_logs`) are ten to a hundred times further apart, and a
    reversal between two of them would be put wholly on one, by up to half the interval: once
    filtered (the parallel filter), an error of ten percent of ``Fc`` around every reversal.
    The velocity across a row's interval is ``qd + s qdd`` (``|s| <= period / 2``, the motion
    smooth at that scale); ``s(.)`` (the sign, or the joint's smooth law) is averaged over
    :data:`AVERAGED_POINTS` points of it.
    """
    def mean_shape(rate, acceleration, vs):
        return averaged_shape(rate, acceleration, vs, period)
    index = {name: k for k, name in enumerate(names)}
    for j, joint in enumerate(model.joint_names):
        k = index.get(f'Fc_{joint}')
        if k is not None:
            Y[:, j, k] = mean_shape(qd[:, j], qdd[:, j], model.coulomb_velocity[j])
    motors = model.coupled_motors()
    for m, (j, row) in enumerate(zip(motors.joints, motors.rows)):
        k = index.get(f'Fcm_{model.joint_names[j]}')
        if k is not None:
            Y[:, :, k] = mean_shape(qd @ row, qdd @ row, motors.velocity[m])[:, None] * row
    return Y


def averaged_shape(rate, acceleration, vs, period):
    """
    Return ``s(rate)`` averaged over each row's ``period`` (:func:`averaged_coulomb`).

    ``rate`` and ``acceleration (N,)``; ``vs``: the Coulomb velocity (0: the sign); ``period``
    0: at the rows' instants.
    """
    if not period:
        return coulomb_shape_of(rate, vs)
    offsets = ((np.arange(AVERAGED_POINTS) + 0.5) / AVERAGED_POINTS - 0.5) * period
    return coulomb_shape_of(rate[:, None] + offsets * acceleration[:, None], vs).mean(axis=1)


def row_period(parallel):
    """Seconds between the rows of a log cut down (``parallel``, the fit's filter), else 0."""
    return 1.0 / parallel.rate_hz if parallel is not None and parallel.raw is not None else 0.0


def base_rows(model, base, q, qd, qdd, period=0.0, Y=None):
    """
    Return ``W_B (N, n, b)``: the base regressor of the states, as every fit builds it.

    The regressor's base columns (:meth:`.BaseParameters.base_regressor`), each Coulomb term
    averaged over its row's ``period`` where a log is cut down (:func:`averaged_coulomb`;
    :func:`row_period`; 0: at the rows' instants).  ``Y``: the states' regressor where the
    caller has it already (else it is computed).
    """
    if Y is None:                       # the base columns alone (the others never made)
        W = regressor(model, q, qd, qdd, armature=base.armature, friction=base.friction,
                      columns=base.index)
    else:
        W = base.base_regressor(Y)
    if period:
        W = averaged_coulomb(model, W, base.names, qd, qdd, period)
    return W


def coulomb_torque(model, qd, qdd, period):
    """
    Return the model's Coulomb torques ``(N, n)``, each averaged over its row's interval.

    ``Fc_j s(qd_j)`` and each coupled motor's ``Fcm s(c . qd) c``, as
    :func:`averaged_coulomb` averages them (``period`` 0: at the rows' instants).
    """
    motors = model.coupled_motors()
    names = [f'Fc_{j}' for j in model.joint_names] + [
        f'Fcm_{model.joint_names[j]}' for j in motors.joints]
    columns = averaged_coulomb(model, np.zeros((len(qd), model.n, len(names))), names, qd, qdd,
                               period)
    return columns @ np.concatenate([model.coulomb, motors.coulomb])


def fit_coulomb_velocity(model, q, qd, qdd, tau, parallel=None, *, armature=None, sweeps=2):
    """
    Fit each joint's Coulomb velocity ``vs`` of ``Fv qd + Fc tanh(qd / vs) + Fo``.

    Separable least squares: for given ``vs`` the law is linear in the parameters, so the
    weighted residual of the linear fit (every base parameter, the joints weighted by their
    noise) is a function of the ``vs`` alone.  Each joint's ``vs`` in turn is chosen among
    :data:`COULOMB_VELOCITIES` (0: the sign law) and refined by a golden-section search in
    ``log vs`` between the neighbours of the best, the others held; ``sweeps`` rounds.  Only the
    joint's own Coulomb column changes, so a trial costs one column filtered, the QR of that
    joint's equations, and that of the others' R (made once per joint's search) stacked on
    it: ``2 (b + 1)`` rows, where a solve of every joint's took ``n (b + 1)``.
    Returns the model with ``coulomb_velocity`` set.
    """
    model = dataclasses.replace(model, coulomb_velocity=np.zeros(model.n))
    base = base_parameters(model, friction='offset', armature=armature)
    period = row_period(parallel)       # a log cut down: each row's interval averaged
    W = base_rows(model, base, q, qd, qdd, period)
    filtered = (lambda x: x) if parallel is None else parallel
    Wf, tf = filtered(W), filtered(tau)
    sigma = weighted_least_squares(Wf, tf)[2]
    column = {j: base.names.index(f'Fc_{name}') for j, name in enumerate(model.joint_names)
              if f'Fc_{name}' in base.names}
    # each joint's weighted equations as R of [W_j tau_j] / sigma_j (a trial changes only its
    # own joint's block): the residual is what R leaves plus each block's part beyond its span
    b = W.shape[2]
    blocks = np.zeros((model.n, b + 1, b + 1))

    def block(j):
        R = np.linalg.qr(np.column_stack([Wf[:, j, :], tf[:, j]]) / sigma[j], mode='r')
        blocks[j] = 0.0
        blocks[j, :len(R)] = R

    for j in range(model.n):
        block(j)

    others = None                   # R of the other joints' blocks, stacked: fixed in a search

    def cost(j, vs):
        """Return the weighted residual of every joint's equations with ``vs`` for joint j."""
        Wf[:, j, column[j]] = filtered(averaged_shape(qd[:, j], qdd[:, j], vs, period))
        block(j)
        # R of every block, stacked: its last diagonal entry is what no K explains (the whole
        # W_B has full rank: its base parameters)
        return float(np.linalg.qr(np.vstack([others, blocks[j]]), mode='r')[b, b] ** 2)

    vs = np.zeros(model.n)
    grid = np.array(COULOMB_VELOCITIES)
    for _ in range(sweeps):
        for j in column:
            others = np.linalg.qr(np.delete(blocks, j, axis=0).reshape(-1, b + 1), mode='r')
            costs = [cost(j, v) for v in grid]
            k = int(np.argmin(costs))
            best, best_cost = grid[k], costs[k]
            if k > 0:                 # refine between the neighbours (log scale; 0 stays 0)
                lower = grid[k - 1] if k > 1 else grid[1] / 10
                upper = grid[k + 1] if k + 1 < len(grid) else grid[-1] * 10
                x, c = _golden(lambda x: cost(j, math.exp(x)), math.log(lower), math.log(upper))
                if c < best_cost:
                    best, best_cost = math.exp(x), c
            vs[j] = best
            cost(j, best)                         # leave the chosen column in place
    return dataclasses.replace(model, coulomb_velocity=vs)


def with_velocity_uncertainty(model, base, qd, parallel, K, sigma, G, g):
    """
    Return the covariance of ``K`` widened by the fitted Coulomb velocities', and their std.

    Linearised about the fit, each ``vs_j`` is one more unknown with the column ``Fc_j d/dvs
    tanh(qd / vs)`` (filtered and weighted as the rest): the covariance of the augmented
    problem, marginalised over the ``vs``, is what the base parameters are known to, where
    the covariance given the ``vs`` would claim ``Fc`` and ``Fv`` better known than they are.
    """
    joints = [j for j, name in enumerate(model.joint_names)
              if model.coulomb_velocity[j] > 0 and f'Fc_{name}' in base.names]
    r = g - G @ K
    s2 = float(r @ r) / max(len(g) - G.shape[1] - len(joints), 1)
    if not joints:
        return s2 * np.linalg.inv(G.T @ G), {}
    N, n = qd.shape
    D = np.zeros((N, n, len(joints)))
    for k, j in enumerate(joints):
        vs = model.coulomb_velocity[j]
        fc = K[base.names.index(f'Fc_{model.joint_names[j]}')]
        D[:, j, k] = -fc * qd[:, j] / vs ** 2 * (1.0 - np.tanh(qd[:, j] / vs) ** 2)
    if parallel is not None:
        D = parallel(D)
    A = np.hstack([G, (D / sigma[None, :, None]).reshape(G.shape[0], len(joints))])
    full = s2 * np.linalg.pinv(A.T @ A)
    b = G.shape[1]
    std = np.sqrt(np.maximum(np.diag(full)[b:], 0.0))
    return full[:b, :b], {model.joint_names[j]: float(s) for j, s in zip(joints, std)}


def _golden(f, lo, hi, iterations=20):
    """Return ``(x, f(x))`` at the minimum of a unimodal ``f`` on ``[lo, hi]``."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return (c, fc) if fc < fd else (d, fd)


def friction_summary(processing):
    """Say which friction law was identified, its Coulomb velocities, and how it was chosen."""
    law = processing.get('friction', 'coulomb')
    text = f'friction law: {law} ({_LAW_TEXT[law]})'
    velocities = processing.get('coulomb_velocity')
    if velocities:
        text += '; Coulomb velocities vs: ' + ', '.join(
            f'{j} {v:.3g}' if v > 0 else f'{j} 0 (sign)' for j, v in velocities.items())
    chosen = processing.get('friction_selection')
    if chosen:
        by = processing.get('friction_selection_by', 'the validation data')
        text += (f'\nchosen on held-out data ({by}), normalised squared error of each law: '
                 + ', '.join(f'{law} {e:.4g} %' for law, e in chosen.items()))
    return text


_LAW_TEXT = {'none': 'no friction terms', 'coulomb': 'Fv qd + Fc sign(qd)',
             'offset': 'Fv qd + Fc sign(qd) + Fo', 'smooth': 'Fv qd + Fc tanh(qd / vs) + Fo'}
