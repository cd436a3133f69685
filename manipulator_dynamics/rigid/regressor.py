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
The joint-torque regressor: ``tau = Y(q, qd, qdd) K``, linear in the standard parameters.

``K`` holds, joint by joint (Khalil's ordering), the 10 standard inertial parameters of the link
the joint moves, ``XX XY XZ YY YZ ZZ MX MY MZ M`` (inertia about the link frame origin, first
moments, mass, in the link frame), followed where asked by the joint's rotor inertia ``Ia``,
viscous ``Fv`` and Coulomb ``Fc`` friction.  A link's wrench about its origin is linear in its
parameters::

    F = M dv + (skew(dw) + skew(w)^2) MS
    N = (L(dw) + skew(w) L(w)) J - skew(dv) MS          L(x) J = J x for J = (XX XY XZ YY YZ ZZ)

and each column is carried to every joint on the link's root path like an RNEA wrench.
"""

from numba import njit
import numpy as np

from .kinematics import (all_finite, ARMATURE, batch_row, coulomb_law, coulomb_shape_of,
                         FRICTION, joint_poses, kernel_model, motion_pass, OFFSET)
from .status import check, NON_FINITE, OK
from .. import _parallel as parallel
from .._inputs import states
from .._jit import INLINE, JIT
from ..model import PARAMETER_NAMES, PRISMATIC

_NAMES = ('q', 'qd', 'qdd')


@njit(**INLINE)
def _L(x0, x1, x2, c):
    """Column ``c`` of ``L(x)``, the matrix with ``J x = L(x) (XX, XY, XZ, YY, YZ, ZZ)``."""
    if c == 0:
        return x0, 0.0, 0.0
    if c == 1:
        return x1, x0, 0.0
    if c == 2:
        return x2, 0.0, x0
    if c == 3:
        return 0.0, x1, 0.0
    if c == 4:
        return 0.0, x2, x1
    return 0.0, 0.0, x2


@njit(**INLINE)
def link_wrench_matrix(W, E, V, A):
    """Fill ``A (6, 10)``: a link's wrench ``(N; F)`` per unit of each standard parameter."""
    A[:, :] = 0.0
    w0, w1, w2 = W[0], W[1], W[2]
    e0, e1, e2 = E[0], E[1], E[2]
    # N rows: J dw + w x (J w), one column per entry of J = (XX XY XZ YY YZ ZZ); for that column
    # J x is L(x)[:, c] with L(x) = [[x0, x1, x2, 0, 0, 0], [0, x0, 0, x1, x2, 0], [0, 0, x0, 0,
    # x1, x2]]
    for c in range(6):
        le0, le1, le2 = _L(e0, e1, e2, c)
        lw0, lw1, lw2 = _L(w0, w1, w2, c)
        A[0, c] = le0 + w1 * lw2 - w2 * lw1
        A[1, c] = le1 + w2 * lw0 - w0 * lw2
        A[2, c] = le2 + w0 * lw1 - w1 * lw0
    # MS columns: N += MS x dv = -skew(dv) MS ; F += dw x MS + w x (w x MS)
    V0, V1, V2 = V[0], V[1], V[2]
    A[0, 7], A[0, 8] = V2, -V1
    A[1, 6], A[1, 8] = -V2, V0
    A[2, 6], A[2, 7] = V1, -V0
    # skew(dw) + skew(w)^2, with skew(w)^2 = w w^T - |w|^2 1
    ww = w0 * w0 + w1 * w1 + w2 * w2
    A[3, 6], A[3, 7], A[3, 8] = w0 * w0 - ww, -e2 + w0 * w1, e1 + w0 * w2
    A[4, 6], A[4, 7], A[4, 8] = e2 + w1 * w0, w1 * w1 - ww, -e0 + w1 * w2
    A[5, 6], A[5, 7], A[5, 8] = -e1 + w2 * w0, e0 + w2 * w1, w2 * w2 - ww
    A[3, 9], A[4, 9], A[5, 9] = V0, V1, V2


@njit(**INLINE)
def carry_to_parent(R, p, A):
    """
    Move the wrenches ``A (6, 10)`` of a link's parameters from a frame to its parent's origin.

    In place, as :func:`.kinematics.force_to_parent` moves each column.  The six columns of the
    inertia ``J`` are moments alone (their force rows are zero, and stay so): they are only
    rotated.
    """
    for c in range(6):
        n0, n1, n2 = A[0, c], A[1, c], A[2, c]
        A[0, c] = R[0, 0] * n0 + R[0, 1] * n1 + R[0, 2] * n2
        A[1, c] = R[1, 0] * n0 + R[1, 1] * n1 + R[1, 2] * n2
        A[2, c] = R[2, 0] * n0 + R[2, 1] * n1 + R[2, 2] * n2
    for c in range(6, 10):
        n0, n1, n2, g0, g1, g2 = A[0, c], A[1, c], A[2, c], A[3, c], A[4, c], A[5, c]
        f0 = R[0, 0] * g0 + R[0, 1] * g1 + R[0, 2] * g2
        f1 = R[1, 0] * g0 + R[1, 1] * g1 + R[1, 2] * g2
        f2 = R[2, 0] * g0 + R[2, 1] * g1 + R[2, 2] * g2
        A[3, c], A[4, c], A[5, c] = f0, f1, f2
        A[0, c] = R[0, 0] * n0 + R[0, 1] * n1 + R[0, 2] * n2 + p[1] * f2 - p[2] * f1
        A[1, c] = R[1, 0] * n0 + R[1, 1] * n1 + R[1, 2] * n2 + p[2] * f0 - p[0] * f2
        A[2, c] = R[2, 0] * n0 + R[2, 1] * n1 + R[2, 2] * n2 + p[0] * f1 - p[1] * f0


@njit(**JIT)
def regressor_kernel(m, q, qd, qdd, stride, flags, to, out):
    """
    Fill ``out (N, n, columns)``; ``flags``: the Ia column, the Fv and Fc, the Fo column.

    ``to (n*stride,)``: the column of ``out`` each standard column goes to, -1 for none.
    """
    if not (all_finite(q) and all_finite(qd) and all_finite(qdd)):
        return NON_FINITE
    N, n = out.shape[0], out.shape[1]
    parent = m.parent
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    w = np.empty((n, 3))
    dw = np.empty((n, 3))
    dv = np.empty((n, 3))
    A = np.empty((6, 10))
    for s in range(N):
        qs, qds, qdds = batch_row(s, q), batch_row(s, qd), batch_row(s, qdd)
        joint_poses(m, qs, R, p)
        motion_pass(m, m.gravity, qds, qdds, R, p, w, dw, dv, w[:0])
        Y = out[s]
        Y[:, :] = 0.0
        for j in range(n):
            link_wrench_matrix(w[j], dw[j], dv[j], A)
            col = j * stride
            k = j
            while True:
                o = 3 if m.joint_type[k] == PRISMATIC else 0
                ax, ay, az = m.axis[k, 0], m.axis[k, 1], m.axis[k, 2]
                for c in range(10):
                    t = to[col + c]
                    if t >= 0:
                        Y[k, t] = ax * A[o, c] + ay * A[o + 1, c] + az * A[o + 2, c]
                if parent[k] < 0:
                    break
                carry_to_parent(R[k], p[k], A)
                k = parent[k]
            c = col + 10
            if flags & ARMATURE:
                if to[c] >= 0:
                    Y[j, to[c]] = qdds[j]
                c += 1
            if flags & FRICTION:
                if to[c] >= 0:
                    Y[j, to[c]] = qds[j]
                if to[c + 1] >= 0:
                    Y[j, to[c + 1]] = coulomb_law(qds[j], m.coulomb_velocity[j])
            if flags & OFFSET and to[c + 2] >= 0:
                Y[j, to[c + 2]] = 1.0
    return OK


def has_armature(model, armature):
    """
    Resolve an ``armature`` argument: None (the default) follows the model.

    Rotor inertias count where the model has any (a nonzero ``model.armature``), so that with
    every default ``inverse_dynamics(m, q, qd, qdd) == regressor(m, q, qd, qdd) @
    standard_parameters(m)`` holds, and ``energy`` is ``energy_regressor @ standard_parameters``.
    """
    return bool(model.armature.any()) if armature is None else bool(armature)


def has_offset(model, friction):
    """
    Resolve a ``friction`` argument: whether the friction terms include the offsets ``Fo``.

    ``False``: no friction terms; ``True``: ``Fv, Fc``, and ``Fo`` where the model has friction
    offsets (so that ``inverse_dynamics(..., friction=True) == regressor(..., friction=True) @
    standard_parameters(..., friction=True)`` holds); ``'offset'``: ``Fv, Fc, Fo``.
    """
    if friction not in FRICTION_TERMS:
        raise ValueError(f'friction must be one of {", ".join(map(repr, FRICTION_TERMS))}, got '
                         f'{friction!r}')
    if friction == 'offset':
        return True
    return bool(friction) and bool(model.friction_offset.any())


#: What ``friction`` may be in the parameter layouts (:func:`has_offset`).
FRICTION_TERMS = (False, True, 'offset')


def _layout(model, armature, friction):
    offset = has_offset(model, friction)
    flags = (ARMATURE if armature else 0) | (FRICTION if friction else 0) | (
        OFFSET if offset else 0)
    return 10 + (1 if armature else 0) + (2 if friction else 0) + (1 if offset else 0), flags


def parameter_names(model, *, armature=None, friction=False):
    """Name the entries of :func:`standard_parameters`, e.g. ``'ZZ_link2'``, ``'Ia_joint2'``."""
    armature = has_armature(model, armature)
    offset = has_offset(model, friction)
    names = []
    for joint, link in zip(model.joint_names, model.link_names):
        names += [f'{name}_{link}' for name in PARAMETER_NAMES]
        if armature:
            names.append(f'Ia_{joint}')
        if friction:
            names += [f'Fv_{joint}', f'Fc_{joint}']
        if offset:
            names.append(f'Fo_{joint}')
    if friction:
        for j in model.coupled_motors().joints:
            names += [f'Fvm_{model.joint_names[j]}', f'Fcm_{model.joint_names[j]}']
    return tuple(names)


def standard_parameters(model, *, armature=None, friction=False):
    """
    Return the model's standard parameter vector ``K``, shape ``(n * (10 [+1] [+2 [+1]]),)``.

    Per joint j: the 10 parameters of its link in :data:`PARAMETER_NAMES` order (about the link
    frame origin, fixed children merged), then ``Ia_j`` if ``armature`` (default: if the model has
    rotor inertias, see :func:`has_armature`), then ``Fv_j, Fc_j`` if ``friction``, then ``Fo_j``
    with offsets (:func:`has_offset`).  With ``friction``, each coupled motor's ``Fvm_j, Fcm_j``
    follow, in the order of :meth:`~manipulator_dynamics.Model.coupled_motors`.
    """
    armature = has_armature(model, armature)
    stride, _ = _layout(model, armature, friction)
    K = np.zeros((model.n, stride))
    K[:, :10] = model.inertial
    c = 10
    if armature:
        K[:, c] = model.armature
        c += 1
    if friction:
        K[:, c] = model.viscous
        K[:, c + 1] = model.coulomb
    if has_offset(model, friction):
        K[:, c + 2] = model.friction_offset
    K = K.reshape(-1)
    if friction:
        motors = model.coupled_motors()
        K = np.concatenate([K, np.column_stack([motors.viscous, motors.coulomb]).reshape(-1)])
    return K


def regressor(model, q, qd, qdd, *, armature=None, friction=False, columns=None):
    """
    Joint-torque regressor ``Y`` with ``inverse_dynamics(...) == Y @ standard_parameters(...)``.

    Parameters
    ----------
    model : Model
        The robot (:func:`load_model`).
    q, qd, qdd : array-like, shape (n,) or (N, n)
        Joint positions, velocities, accelerations; 1-D ones are broadcast over the batch.
    armature : bool or None
        Add the columns of ``Ia`` (``qdd_j``); None (default): if the model has rotor inertias.
    friction : bool or 'offset'
        Add the columns of ``Fv, Fc`` (``qd_j`` and ``s(qd_j)``, the sign or the joint's smooth
        law: :func:`~manipulator_dynamics.control.friction_torque`), and of ``Fo`` (ones) with
        offsets (:func:`has_offset`).
    columns : array of int, optional
        Only these columns of ``Y``, in this order (``Y[..., columns]``, never the others
        made): a base regressor's (:meth:`.BaseParameters.base_regressor`) of many rows
        without the standard one beside it.

    Returns
    -------
    Y : ndarray, shape (n, p) or (N, n, p), ``p = n * (10 [+1] [+2 [+1]])``
        Columns in the order of :func:`parameter_names`; with friction, 2 more per coupled motor
        (``Fvm, Fcm``: ``c w`` and ``c s(w)``, ``w = c . qd``), and a coupled motor's ``Ia``
        column is ``c (c . qdd)`` (:meth:`~manipulator_dynamics.Model.coupled_motors`).  Gravity
        comes from the model.

    """
    (q, qd, qdd), N, single = states(model, _NAMES, q, qd, qdd)
    armature = has_armature(model, armature)
    stride, flags = _layout(model, armature, friction)
    motors = model.coupled_motors()
    extra = 2 * len(motors.joints) if friction else 0
    width = model.n * stride + extra
    to = _destinations(width, columns)
    out = np.empty((N, model.n, width if columns is None else len(columns)))
    check(model, parallel.run(regressor_kernel, N, {'q': q, 'qd': qd, 'qdd': qdd, 'out': out},
                              m=kernel_model(model), stride=stride, flags=flags,
                              to=to[:model.n * stride]),
          _NAMES, q, qd, qdd)
    for k, (j, row) in enumerate(zip(motors.joints, motors.rows)):
        if armature and to[j * stride + 10] >= 0:      # Ia_j turns with the motor: c (c . qdd)
            out[:, :, to[j * stride + 10]] = (qdd @ row)[:, None] * row
        if friction:
            rate = qd @ row
            law = coulomb_shape_of(rate, motors.velocity[k])
            at = model.n * stride + 2 * k
            if to[at] >= 0:
                out[:, :, to[at]] = rate[:, None] * row
            if to[at + 1] >= 0:
                out[:, :, to[at + 1]] = law[:, None] * row
    return out[0] if single else out


def _destinations(width, columns):
    """Return where each of ``width`` standard columns goes in ``Y[..., columns]`` (-1: none)."""
    if columns is None:
        return np.arange(width)
    columns = np.asarray(columns)
    if columns.ndim != 1 or columns.dtype.kind not in 'iu' or len(columns) and (
            columns.min() < 0 or columns.max() >= width) or len(set(columns.tolist())) < len(
            columns):
        raise ValueError(f'columns must be distinct integers in [0, {width}), got {columns!r}')
    to = np.full(width, -1)
    to[columns] = np.arange(len(columns))
    return to
