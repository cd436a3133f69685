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
The Coriolis matrix ``C(q, qd)`` of Christoffel symbols: ``dM/dt = C + C^T``, ``C qd = h - g``.

Echeandia & Wensing, "Numerical methods to compute the Coriolis matrix and Christoffel symbols
for rigid-body systems" (J. Comput. Nonlinear Dyn. 2021), the algorithm Pinocchio's
``computeCoriolisMatrix`` runs.  Everything is in the base frame (spatial vectors angular part
first, moments about the base origin), where composite quantities are plain sums:

    C = sum_i J_i^T (I_i dJ_i + B_i J_i),   B_i = 1/2 (v_i x* I_i - I_i v_i x + (I_i v_i) xbar)

with ``J_i`` body i's Jacobian (its columns ``S_j``, ``j`` on i's root path), ``dJ_i`` its
columns ``dS_j = v_j x S_j`` and ``(f xbar) u = u x* f`` (skew).  Column ``k`` gathers over the
bodies that both joints ``j`` and ``k`` move, the subtree of the deeper one; with the composite
inertia ``Ic_k``, momentum ``hc_k`` and ``Pc_k = sum v_i x* I_i`` of subtree k, for j on k's
root path (``Q = (Pc_k + Pc_k^T) / 2``):

    C[j, k] = S_j . (Ic_k dS_k + Q S_k + 1/2 S_k x* hc_k)
    C[k, j] = (Ic_k S_k) . dS_j + (Q S_k - 1/2 S_k x* hc_k) . S_j

and zero where neither joint carries the other.  Rotor inertia is constant in ``q``: it adds
nothing.  Cost: O(n) composites, O(sum of depths) entries.
"""

from numba import njit
import numpy as np

from .kinematics import (add_placed, all_finite, batch_row, joint_poses, kernel_model, model_at,
                         scratch, world_poses)
from .status import BAD_VECTOR, check, NON_FINITE, OK
from .. import _parallel as parallel
from .._inputs import states, vectors
from .._jit import INLINE, INT, JIT, ONE_STATE, OUT_MATRIX, Signature, VECTOR
from ..model import PRISMATIC


@njit(**INLINE)
def inertia_times(k, u, out):
    """``out = I u``: the 6x6 inertia of ten parameters ``k`` about the origin, motion ``u``."""
    w0, w1, w2, v0, v1, v2 = u[0], u[1], u[2], u[3], u[4], u[5]
    X, Y, Z = k[6], k[7], k[8]
    out[0] = k[0] * w0 + k[1] * w1 + k[2] * w2 + Y * v2 - Z * v1      # J w + MS x v
    out[1] = k[1] * w0 + k[3] * w1 + k[4] * w2 + Z * v0 - X * v2
    out[2] = k[2] * w0 + k[4] * w1 + k[5] * w2 + X * v1 - Y * v0
    out[3] = k[9] * v0 + w1 * Z - w2 * Y                              # M v + w x MS
    out[4] = k[9] * v1 + w2 * X - w0 * Z
    out[5] = k[9] * v2 + w0 * Y - w1 * X


@njit(**INLINE)
def cross_force(v, f, out):
    """``out = v x* f``: ``(w x n + v x f, w x f)``."""
    w0, w1, w2, v0, v1, v2 = v[0], v[1], v[2], v[3], v[4], v[5]
    n0, n1, n2, f0, f1, f2 = f[0], f[1], f[2], f[3], f[4], f[5]
    out[0] = w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1
    out[1] = w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2
    out[2] = w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0
    out[3] = w1 * f2 - w2 * f1
    out[4] = w2 * f0 - w0 * f2
    out[5] = w0 * f1 - w1 * f0


@njit(**INLINE)
def dot6(a, b):
    """Return ``a . b`` of two 6-vectors (a motion and a force)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(**INLINE)
def coriolis_workspace(n, stack=False):
    """Scratch of :func:`coriolis_sample` (``stack``: see ``kinematics.scratch``)."""
    return (scratch((n, 3, 3), stack), scratch((n, 3), stack), scratch((n, 3, 3), stack),
            scratch((n, 3), stack), scratch((5, n, 6), stack), scratch((n, 10), stack),
            scratch((n, 6, 6), stack), scratch((4, 6), stack))


@njit(**INLINE)
def coriolis_sample(m, q, qd, work, C):
    """Fill ``C (n, n)`` with the Coriolis matrix at one state (module docstring)."""
    R, p, R0, p0, planes, Ic, Pc, tmp = work
    S, dS, V, hc, col = planes[0], planes[1], planes[2], planes[3], planes[4]
    e, x, y, z = tmp[0], tmp[1], tmp[2], tmp[3]
    parent = m.parent
    n = parent.shape[0]
    joint_poses(m, q, R, p)
    world_poses(m, R, p, R0, p0)
    chain = True
    for i in range(n):                              # out: S_i, v_i, dS_i, I_i, h_i, v_i x* I_i
        a = parent[i]
        if a != i - 1:
            chain = False
        Ri = R0[i]
        ax, ay, az = m.axis[i, 0], m.axis[i, 1], m.axis[i, 2]
        u0 = Ri[0, 0] * ax + Ri[0, 1] * ay + Ri[0, 2] * az
        u1 = Ri[1, 0] * ax + Ri[1, 1] * ay + Ri[1, 2] * az
        u2 = Ri[2, 0] * ax + Ri[2, 1] * ay + Ri[2, 2] * az
        s = S[i]
        if m.joint_type[i] == PRISMATIC:
            s[0], s[1], s[2], s[3], s[4], s[5] = 0.0, 0.0, 0.0, u0, u1, u2
        else:                                       # the base origin's velocity: p0 x axis
            P0, P1, P2 = p0[i, 0], p0[i, 1], p0[i, 2]
            s[0], s[1], s[2] = u0, u1, u2
            s[3], s[4], s[5] = P1 * u2 - P2 * u1, P2 * u0 - P0 * u2, P0 * u1 - P1 * u0
        v = V[i]
        for r in range(6):
            v[r] = s[r] * qd[i] + (V[a, r] if a >= 0 else 0.0)
        w0, w1, w2, l0, l1, l2 = v[0], v[1], v[2], v[3], v[4], v[5]
        d = dS[i]                                   # v x S: (w x s_w, w x s_v + v x s_w)
        d[0] = w1 * s[2] - w2 * s[1]
        d[1] = w2 * s[0] - w0 * s[2]
        d[2] = w0 * s[1] - w1 * s[0]
        d[3] = w1 * s[5] - w2 * s[4] + l1 * s[2] - l2 * s[1]
        d[4] = w2 * s[3] - w0 * s[5] + l2 * s[0] - l0 * s[2]
        d[5] = w0 * s[4] - w1 * s[3] + l0 * s[1] - l1 * s[0]
        Ic[i, :] = 0.0
        add_placed(Ri, p0[i, 0], p0[i, 1], p0[i, 2], m.inertial[i], Ic[i])
        inertia_times(Ic[i], v, hc[i])
        for c in range(6):                          # column c of v_i x* I_i
            e[:] = 0.0
            e[c] = 1.0
            inertia_times(Ic[i], e, x)
            cross_force(v, x, col[c])
            for r in range(6):
                Pc[i, r, c] = col[c, r]
    for i in range(n - 1, 0, -1):                   # back: the composites of each subtree
        a = parent[i]
        if a >= 0:
            for k in range(10):
                Ic[a, k] += Ic[i, k]
            for r in range(6):
                hc[a, r] += hc[i, r]
                for c in range(6):
                    Pc[a, r, c] += Pc[i, r, c]
    if not chain:                                   # entries off the root paths stay zero
        C[:, :] = 0.0
    for k in range(n):
        s = S[k]
        P = Pc[k]
        inertia_times(Ic[k], dS[k], x)              # x = Ic dS
        inertia_times(Ic[k], s, y)                  # y = Ic S
        cross_force(s, hc[k], z)                    # z = S x* hc
        for r in range(6):
            qs = 0.0
            for c in range(6):
                qs += 0.5 * (P[r, c] + P[c, r]) * s[c]
            e[r] = qs - 0.5 * z[r]                  # e: f3 = Q S - S x* hc / 2
            x[r] += qs + 0.5 * z[r]                 # x: f1 = Ic dS + Q S + S x* hc / 2
        C[k, k] = dot6(s, x)
        j = parent[k]
        while j >= 0:
            C[j, k] = dot6(S[j], x)
            C[k, j] = dot6(y, dS[j]) + dot6(e, S[j])
            j = parent[j]


@njit(**JIT)
def coriolis_kernel(m, q, qd, out):
    """Fill ``out (N, n, n)`` with C(q, qd) for each sample; return a status (:mod:`.status`)."""
    if not (all_finite(q) and all_finite(qd)):
        return NON_FINITE
    work = coriolis_workspace(m.parent.shape[0])
    for s in range(out.shape[0]):
        coriolis_sample(m, batch_row(s, q), batch_row(s, qd), work, out[s])
    return OK


@njit(**ONE_STATE)
def coriolis_vector(address, q, qd, out):
    """C(q, qd) for one state given as vectors (the control-loop path); BAD_VECTOR if bad."""
    m = model_at(address)
    n = m.parent.shape[0]
    if q.shape[0] != n or qd.shape[0] != n:
        return BAD_VECTOR
    for i in range(n):
        if not (np.isfinite(q[i]) and np.isfinite(qd[i])):
            return BAD_VECTOR
    coriolis_sample(m, q, qd, coriolis_workspace(n, True), out)
    return OK


_coriolis_vector = Signature(coriolis_vector, INT, VECTOR, VECTOR, OUT_MATRIX)
_empty = np.empty
_NAMES = ('q', 'qd')


def coriolis_matrix(model, q, qd):
    """
    Coriolis matrix ``C(q, qd)`` of Christoffel symbols (Pinocchio's ``computeCoriolisMatrix``).

    ``dM/dt = C + C^T`` (so ``dM/dt - 2 C`` is skew-symmetric), and ``C qd + g(q)`` is
    :func:`bias_forces`.  The momentum observer's ``C^T qd`` comes from it.

    Parameters
    ----------
    model : Model
        The robot.
    q, qd : array-like, shape (n,) or (N, n)
        Joint positions and velocities in ``model.joint_names`` order; a 1-D argument is
        broadcast over the batch of the other.

    Returns
    -------
    C : ndarray, shape (n, n) or (N, n, n)
        Both triangles filled; zero where neither joint carries the other.

    """
    try:                        # the control loop's path, as inertia_matrix's
        m = model._kernel_model
        if vectors(q, qd, qd):
            out = _empty(m.matrix_shape)
            if _coriolis_vector.call(m.address, q, qd, out) == OK:
                return out
    except (AttributeError, TypeError):
        pass
    m = kernel_model(model)
    (q, qd), N, single = states(model, _NAMES, q, qd)
    out = np.empty((N, model.n, model.n))
    check(model, parallel.run(coriolis_kernel, N, {'q': q, 'qd': qd, 'out': out}, m=m),
          _NAMES, q, qd)
    return out[0] if single else out
