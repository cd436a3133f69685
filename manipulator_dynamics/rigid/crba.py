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
Joint-space inertia matrix by composite links for tree robots (Khalil & Dombre, Appendix 8).

1. Composite parameters (A8.1): for j = n..1, the composite link j+ (link j and all it carries) is
   added into its antecedent a(j): ``J+_a += R J+_j R^T + shift``, ``MS+_a += R MS+_j + P M+_j``,
   ``M+_a += M+_j``, with ``R, P`` the pose of frame j in frame a(j).
2. Column j by a reduced Newton-Euler pass (A8.3-A8.21): with ``qdd = u_j``, ``qd = 0``, ``g = 0``
   only link j+ moves.  For a revolute joint ``dw = a_j``: ``F = a_j x MS+``, ``N = J+ a_j``
   (A8.11-12); for a prismatic one ``dv = a_j``: ``F = M+ a_j``, ``N = MS+ x a_j`` (A8.9-10).  The
   diagonal is
   ``A_jj = a_j . N`` (or ``a_j . F``) ``+ Ia_j`` (A8.15, A8.18); the wrench is carried to each
   antecedent k (A8.19-20) and projected on its axis for ``A_kj`` (A8.21).  Elements off the root
   paths are zero.

Khalil's axis is z; here it is any unit axis, which replaces "the third component" by a dot
product. Cost: composite parameters O(n); columns O(sum of depths).
"""

from numba import njit
import numpy as np

from .kinematics import (add_placed, all_finite, ARMATURE, batch_row, joint_poses, kernel_model,
                         model_at, scratch, vector_ok)
from .status import BAD_VECTOR, check, NON_FINITE, OK
from .. import _parallel as parallel
from .._inputs import _F64, states
from .._jit import INLINE, INT, JIT, ONE_STATE, OUT_MATRIX, Signature, VECTOR
from ..model import PRISMATIC


@njit(**INLINE)
def composite_inertia(m, R, p, C):
    """Fill ``C (n, 10)`` with the composite parameters J+, MS+, M+ of every link (A8.1)."""
    n = m.parent.shape[0]
    for j in range(n):
        for k in range(10):
            C[j, k] = m.inertial[j, k]
    for j in range(n - 1, -1, -1):
        a = m.parent[j]
        if a < 0:
            continue
        add_placed(R[j], p[j, 0], p[j, 1], p[j, 2], C[j], C[a])                  # (A8.1)


@njit(**INLINE)
def inertia_columns(m, flags, R, p, C, H, full=True):
    """
    Fill ``H (n, n)`` from composite parameters ``C`` (A8.3-A8.21).

    With ``full``, both triangles and the zeros off the root paths; without, only the diagonal and
    ``H[j, k]`` for k on j's root path (all that the LTL factorisation reads).  ``flags`` with
    :data:`ARMATURE` adds the rotor inertias on the diagonal, and the coupled motors'.
    """
    parent = m.parent
    n = parent.shape[0]
    if full:
        chain = True                    # a chain's root paths cover every entry: none to clear
        for j in range(n):
            if parent[j] != j - 1:
                chain = False
        if not chain:
            for i in range(n):
                for j in range(n):
                    H[i, j] = 0.0
    for j in range(n):
        c = C[j]
        ax, ay, az = m.axis[j, 0], m.axis[j, 1], m.axis[j, 2]
        armature = m.armature[j] if flags & ARMATURE else 0.0
        if m.joint_type[j] == PRISMATIC:                       # dv = a: F = M+ a, N = MS+ x a
            f0, f1, f2 = c[9] * ax, c[9] * ay, c[9] * az
            m0 = c[7] * az - c[8] * ay
            m1 = c[8] * ax - c[6] * az
            m2 = c[6] * ay - c[7] * ax
            H[j, j] = ax * f0 + ay * f1 + az * f2 + armature            # (A8.15)
        else:                                           # dw = a: F = a x MS+, N = J+ a
            f0 = ay * c[8] - az * c[7]
            f1 = az * c[6] - ax * c[8]
            f2 = ax * c[7] - ay * c[6]
            m0 = c[0] * ax + c[1] * ay + c[2] * az
            m1 = c[1] * ax + c[3] * ay + c[4] * az
            m2 = c[2] * ax + c[4] * ay + c[5] * az
            H[j, j] = ax * m0 + ay * m1 + az * m2 + armature            # (A8.18)
        k = j
        while parent[k] >= 0:                           # (A8.19-A8.21), k = j, a(j), ...
            Rk, pk = R[k], p[k]
            F0 = Rk[0, 0] * f0 + Rk[0, 1] * f1 + Rk[0, 2] * f2
            F1 = Rk[1, 0] * f0 + Rk[1, 1] * f1 + Rk[1, 2] * f2
            F2 = Rk[2, 0] * f0 + Rk[2, 1] * f1 + Rk[2, 2] * f2
            M0 = Rk[0, 0] * m0 + Rk[0, 1] * m1 + Rk[0, 2] * m2 + pk[1] * F2 - pk[2] * F1
            M1 = Rk[1, 0] * m0 + Rk[1, 1] * m1 + Rk[1, 2] * m2 + pk[2] * F0 - pk[0] * F2
            M2 = Rk[2, 0] * m0 + Rk[2, 1] * m1 + Rk[2, 2] * m2 + pk[0] * F1 - pk[1] * F0
            f0, f1, f2, m0, m1, m2 = F0, F1, F2, M0, M1, M2
            k = parent[k]
            if m.joint_type[k] == PRISMATIC:
                v = m.axis[k, 0] * f0 + m.axis[k, 1] * f1 + m.axis[k, 2] * f2
            else:
                v = m.axis[k, 0] * m0 + m.axis[k, 1] * m1 + m.axis[k, 2] * m2
            H[j, k] = v
            if full:
                H[k, j] = v
    if flags & ARMATURE:
        add_coupled_inertia(m, H, full)


@njit(**INLINE)
def add_coupled_inertia(m, H, full):
    """
    Add ``Ia c c^T`` of each coupled motor to ``H``: both triangles if ``full``, else the lower.

    Without ``full`` the LTL factorisation reads only root-path entries: the motor's joints must
    lie on one root path (:func:`~manipulator_dynamics.rigid.forward.forward_dynamics` checks).
    """
    for k in range(m.coupling.shape[0]):
        row, ia = m.coupling[k], m.coupled_armature[k]
        n = row.shape[0]
        for a in range(n):
            if row[a] != 0.0:
                for b in range(n if full else a + 1):
                    H[a, b] += ia * row[a] * row[b]


@njit(**JIT)
def crba_kernel(m, q, flags, out):
    """Fill ``out (N, n, n)`` with M(q) for each sample; return a status (:mod:`.status`)."""
    if not all_finite(q):
        return NON_FINITE
    n = m.parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    C = np.empty((n, 10))
    for s in range(out.shape[0]):
        joint_poses(m, batch_row(s, q), R, p)
        composite_inertia(m, R, p, C)
        inertia_columns(m, flags, R, p, C, out[s])
    return OK


@njit(**ONE_STATE)
def crba_vector(address, q, flags, out):
    """M(q) for one state given as a vector (the control-loop path); BAD_VECTOR if ``q`` is."""
    m = model_at(address)
    n = m.parent.shape[0]
    if not vector_ok(n, q):
        return BAD_VECTOR
    R, p, C = scratch((n, 3, 3), True), scratch((n, 3), True), scratch((n, 10), True)
    joint_poses(m, q, R, p)
    composite_inertia(m, R, p, C)
    inertia_columns(m, flags, R, p, C, out)
    return OK


_crba_vector = Signature(crba_vector, INT, VECTOR, INT, OUT_MATRIX)
_empty = np.empty           # one lookup less per call: 3 % of a 6-joint M


def inertia_matrix(model, q, *, armature=True):
    """
    Joint-space inertia matrix ``M(q)``, symmetric, both triangles filled.

    Parameters
    ----------
    model : Model
        The robot (:func:`load_model`).
    q : array-like, shape (n,) or (N, n)
        Joint positions, one state or a batch.
    armature : bool
        Add the rotor inertias ``model.armature`` on the diagonal.

    Returns
    -------
    M : ndarray, shape (n, n) or (N, n, n)

    """
    flags = ARMATURE if armature else 0
    # The control loop's path, written out (no helper calls): M's kernel is the cheapest of the
    # three, so the call's own overhead is most of its time (see bench_dynamics.py).
    try:
        m = model._kernel_model
        if q.dtype is _F64 and q.ndim == 1:
            out = _empty(m.matrix_shape)
            if _crba_vector.call(m.address, q, flags, out) == OK:
                return out
    except (AttributeError, TypeError):  # no kernel model yet, or q not an array: below
        pass
    m = kernel_model(model)
    (q,), N, single = states(model, ('q',), q)
    out = np.empty((N, model.n, model.n))
    check(model, parallel.run(crba_kernel, N, {'q': q, 'out': out}, m=m, flags=flags), ('q',), q)
    return out[0] if single else out
