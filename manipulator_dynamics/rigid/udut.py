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
Saha's UDU^T decomposition of the joint-space inertia matrix (ICRA 1995), for chains and trees.

Saha's reverse Gaussian elimination of ``M`` eliminates columns n, n-1, ..., 1.  Its recursions
(eqs. 31-35) carry, for each body k, the 6x6 matrix ``M_k,k+1`` of the *articulated body* k (body k
and its descendants, joints below k free): the articulated-body inertia ``IA_k`` of Featherstone.
With ``S_k`` joint k's motion subspace in body frame k and ``psi_k = IA_k S_k`` (eq. 32):

* ``D_k = S_k . psi_k + Ia_k`` (``m-hat_k``, eq. 20: the inertia of articulated body k about
  axis k);
* ``U_ik = S_i . X*_{i<-k} psi_k / D_k`` for every ancestor i of k (eq. 31), 1 on the diagonal,
  0 elsewhere (a tree keeps M's sparsity: ``U_ik = 0`` when i is not on k's root path);
* the parent's articulated inertia grows by the part of k's that joint k cannot resist (eq. 35):
  ``IA_a(k) += X^T (IA_k - psi_k psi_k^T / D_k) X``, ``X`` the motion transform from a(k) to k.

The same quantities drive the O(n) forward dynamics in :mod:`.forward`.
Spatial vectors here are 6-arrays, angular first (see :mod:`.kinematics`).
"""

from numba import njit
import numpy as np

from .kinematics import (all_finite, ARMATURE, axis_dot, batch_row, force_to_parent, joint_poses,
                         kernel_model, rotate_symmetric, scratch)
from .status import check, NON_FINITE, OK
from .. import _parallel as parallel
from .._inputs import states
from .._jit import INLINE, JIT
from ..model import PRISMATIC

#: A pivot ``D_k`` at or below this fraction of its articulated inertia's largest diagonal entry
#: counts as zero.
ZERO_PIVOT = 1e-12


#: Layout of an articulated inertia, one row of 21 numbers per body: the symmetric angular block
#: ``J`` (6: xx xy xz yy yz zz), the coupling block ``H`` (9, row-major; the spatial inertia is
#: ``[[J, H], [H^T, K]]``), the symmetric linear block ``K`` (6).
INERTIA_SIZE = 21


@njit(**INLINE)
def _rotate(R, h, out):
    """Fill ``out (9,)`` with ``R H R^T``, ``H`` the row-major 3x3 ``h``."""
    for r in range(3):
        t0 = R[r, 0] * h[0] + R[r, 1] * h[3] + R[r, 2] * h[6]
        t1 = R[r, 0] * h[1] + R[r, 1] * h[4] + R[r, 2] * h[7]
        t2 = R[r, 0] * h[2] + R[r, 1] * h[5] + R[r, 2] * h[8]
        for c in range(3):
            out[3 * r + c] = t0 * R[c, 0] + t1 * R[c, 1] + t2 * R[c, 2]


@njit(**INLINE)
def add_transformed_inertia(R, p, Z, scratch, out):
    """
    ``out += X^T Z X``: a symmetric inertia ``Z`` of a child frame, moved to its parent.

    ``Z`` and ``out`` are (21,) in the :data:`INERTIA_SIZE` layout.  ``X`` is the parent-to-child
    motion transform at pose ``R, p``; ``X^T = T diag(R, R)`` with ``T = [[1, P], [0, 1]]``,
    ``P = skew(p)``.  With the rotated blocks ``J', H', K'``:
    ``out += [[J' + P H'^T - G P, G], [G^T, K']]``, ``G = H' + P K'``.  ``scratch (9,)``.
    """
    j00, j01, j02, j11, j12, j22 = rotate_symmetric(R, Z[0], Z[1], Z[2], Z[3], Z[4], Z[5])
    k00, k01, k02, k11, k12, k22 = rotate_symmetric(R, Z[15], Z[16], Z[17], Z[18], Z[19], Z[20])
    _rotate(R, Z[6:15], scratch)
    h00, h01, h02 = scratch[0], scratch[1], scratch[2]
    h10, h11, h12 = scratch[3], scratch[4], scratch[5]
    h20, h21, h22 = scratch[6], scratch[7], scratch[8]
    p0, p1, p2 = p[0], p[1], p[2]
    # G = H' + P K': column c is H'[:, c] + p x K'[:, c]
    g00 = h00 + p1 * k02 - p2 * k01
    g10 = h10 + p2 * k00 - p0 * k02
    g20 = h20 + p0 * k01 - p1 * k00
    g01 = h01 + p1 * k12 - p2 * k11
    g11 = h11 + p2 * k01 - p0 * k12
    g21 = h21 + p0 * k11 - p1 * k01
    g02 = h02 + p1 * k22 - p2 * k12
    g12 = h12 + p2 * k02 - p0 * k22
    g22 = h22 + p0 * k12 - p1 * k02
    # J' + P H'^T - G P, upper triangle: (P H'^T)[r, c] = (p x H'[c, :])[r],
    # (G P)[r, :] = -(p x G[r, :])
    out[0] += j00 + (p1 * h02 - p2 * h01) + (p1 * g02 - p2 * g01)
    out[1] += j01 + (p1 * h12 - p2 * h11) + (p2 * g00 - p0 * g02)
    out[2] += j02 + (p1 * h22 - p2 * h21) + (p0 * g01 - p1 * g00)
    out[3] += j11 + (p2 * h10 - p0 * h12) + (p2 * g10 - p0 * g12)
    out[4] += j12 + (p2 * h20 - p0 * h22) + (p0 * g11 - p1 * g10)
    out[5] += j22 + (p0 * h21 - p1 * h20) + (p0 * g21 - p1 * g20)
    out[6] += g00
    out[7] += g01
    out[8] += g02
    out[9] += g10
    out[10] += g11
    out[11] += g12
    out[12] += g20
    out[13] += g21
    out[14] += g22
    out[15] += k00
    out[16] += k01
    out[17] += k02
    out[18] += k11
    out[19] += k12
    out[20] += k22


@njit(**INLINE)
def _load_inertia(k, out):
    """Fill ``out (21,)`` with the spatial inertia ``[[J, skew(MS)], [skew(MS)^T, M 1]]``."""
    for i in range(6):
        out[i] = k[i]
    MX, MY, MZ, M = k[6], k[7], k[8], k[9]
    out[6], out[7], out[8] = 0.0, -MZ, MY
    out[9], out[10], out[11] = MZ, 0.0, -MX
    out[12], out[13], out[14] = -MY, MX, 0.0
    out[15], out[16], out[17], out[18], out[19], out[20] = M, 0.0, 0.0, M, 0.0, M


@njit(**INLINE)
def articulated_workspace(n, stack=False):
    """
    Scratch of :func:`articulated`: ``IA (n, 21)``, ``phi (n, 6)``, ``Z (21,)``, 9 more.

    ``stack``: on the stack of a single-state entry point (:func:`.kinematics.scratch`).
    """
    return (scratch((n, INERTIA_SIZE), stack), scratch((n, 6), stack),
            scratch((INERTIA_SIZE,), stack), scratch((9,), stack))


@njit(**INLINE)
def articulated(m, flags, R, p, work, D, tau, eta):
    """
    Backward sweep: articulated inertias ``IA``, pivots ``D`` and ``psi_k / D_k``.

    ``psi_k = IA_k S_k``; ``phi_k = psi_k / D_k`` is left in ``work[1]`` (both of its users want
    it so).  When ``tau (n,)`` is given (non-empty), also Saha's first two solution sweeps
    ``tau <- D^-1 U^-1 tau`` (eq. 36 and the diagonal), with ``eta (n, 6)`` the force each body's
    descendants pass up (moment first).  ``eta`` holds on entry a wrench of each body's own,
    carried up with the rest: zero for ``D^-1 U^-1 tau`` alone; Newton-Euler's body wrenches at
    ``qdd = 0`` make it ``D^-1 U^-1 (tau - h)`` with ``h`` in the same sweep, as the
    articulated-body method does.  ``work`` is :func:`articulated_workspace`'s.  ``flags`` with
    :data:`ARMATURE` adds the rotor inertias to ``D``.  Returns the index of the first joint
    with a zero pivot, or -1.
    """
    IA, phi, Z, scratch = work
    parent, axis = m.parent, m.axis
    n = parent.shape[0]
    solve = tau.shape[0] > 0
    for k in range(n):
        _load_inertia(m.inertial[k], IA[k])
    for k in range(n - 1, -1, -1):
        ax, ay, az = axis[k, 0], axis[k, 1], axis[k, 2]
        A = IA[k]
        J00, J01, J02, J11, J12, J22 = A[0], A[1], A[2], A[3], A[4], A[5]
        H00, H01, H02, H10, H11, H12, H20, H21, H22 = (A[6], A[7], A[8], A[9], A[10], A[11],
                                                       A[12], A[13], A[14])
        K00, K01, K02, K11, K12, K22 = A[15], A[16], A[17], A[18], A[19], A[20]
        if m.joint_type[k] == PRISMATIC:     # S = (0; a): psi = (H a; K a)
            s0 = H00 * ax + H01 * ay + H02 * az
            s1 = H10 * ax + H11 * ay + H12 * az
            s2 = H20 * ax + H21 * ay + H22 * az
            s3 = K00 * ax + K01 * ay + K02 * az
            s4 = K01 * ax + K11 * ay + K12 * az
            s5 = K02 * ax + K12 * ay + K22 * az
            d = s3 * ax + s4 * ay + s5 * az
            o = 3
        else:                                # S = (a; 0): psi = (J a; H^T a)
            s0 = J00 * ax + J01 * ay + J02 * az
            s1 = J01 * ax + J11 * ay + J12 * az
            s2 = J02 * ax + J12 * ay + J22 * az
            s3 = H00 * ax + H10 * ay + H20 * az
            s4 = H01 * ax + H11 * ay + H21 * az
            s5 = H02 * ax + H12 * ay + H22 * az
            d = s0 * ax + s1 * ay + s2 * az
            o = 0
        armature = m.armature[k] if flags & ARMATURE else 0.0
        d += armature
        size = max(armature, abs(J00), abs(J11), abs(J22), abs(K00), abs(K11), abs(K22))
        if not d > ZERO_PIVOT * size:
            return k
        D[k] = d
        inv = 1.0 / d
        t0, t1, t2, t3, t4, t5 = s0 * inv, s1 * inv, s2 * inv, s3 * inv, s4 * inv, s5 * inv
        phi[k, 0], phi[k, 1], phi[k, 2], phi[k, 3], phi[k, 4], phi[k, 5] = t0, t1, t2, t3, t4, t5
        if solve:  # tau_k <- (tau_k - S_k . eta_k) / D_k  (eq. 36, then the diagonal)
            tau[k] = (tau[k] - (eta[k, o] * ax + eta[k, o + 1] * ay + eta[k, o + 2] * az)) * inv
        a = parent[k]
        if a < 0:
            continue
        # what joint k cannot resist: IA_k - psi_k psi_k^T / D_k  (eq. 35)
        Z[0], Z[1], Z[2] = J00 - t0 * s0, J01 - t0 * s1, J02 - t0 * s2
        Z[3], Z[4], Z[5] = J11 - t1 * s1, J12 - t1 * s2, J22 - t2 * s2
        Z[6], Z[7], Z[8] = H00 - t0 * s3, H01 - t0 * s4, H02 - t0 * s5
        Z[9], Z[10], Z[11] = H10 - t1 * s3, H11 - t1 * s4, H12 - t1 * s5
        Z[12], Z[13], Z[14] = H20 - t2 * s3, H21 - t2 * s4, H22 - t2 * s5
        Z[15], Z[16], Z[17] = K00 - t3 * s3, K01 - t3 * s4, K02 - t3 * s5
        Z[18], Z[19], Z[20] = K11 - t4 * s4, K12 - t4 * s5, K22 - t5 * s5
        add_transformed_inertia(R[k], p[k], Z, scratch, IA[a])
        if solve:  # the parent receives eta_k + psi_k tau_k / D_k
            t = tau[k]
            e = eta[k]
            scratch[0], scratch[1], scratch[2] = e[0] + s0 * t, e[1] + s1 * t, e[2] + s2 * t
            scratch[3], scratch[4], scratch[5] = e[3] + s3 * t, e[4] + s4 * t, e[5] + s5 * t
            force_to_parent(R[k], p[k], scratch[:3], scratch[3:6], eta[a, :3], eta[a, 3:])
    return OK


@njit(**JIT)
def udut_kernel(m, q, flags, U, D):
    """Fill ``U (N, n, n)``, ``D (N, n)``; return a status (:mod:`.status`)."""
    if not all_finite(q):
        return NON_FINITE
    N, n = D.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    work = articulated_workspace(n)
    phi = work[1]                   # psi_k / D_k
    none = np.empty(0)
    eta = np.empty((0, 6))
    w = np.empty(6)
    carried = np.empty(6)
    for s in range(N):
        joint_poses(m, batch_row(s, q), R, p)
        k = articulated(m, flags, R, p, work, D[s], none, eta)
        if k >= 0:
            return k
        Us = U[s]
        Us[:, :] = 0.0
        for k in range(n):
            Us[k, k] = 1.0
            w[:] = phi[k]
            j = k
            while m.parent[j] >= 0:        # carry psi_k / D_k to each ancestor i, project on S_i
                carried[:] = 0.0
                force_to_parent(R[j], p[j], w[:3], w[3:], carried[:3], carried[3:])
                w[:] = carried
                j = m.parent[j]
                Us[j, k] = axis_dot(m, j, w)
    return OK


def udut(model, q, *, armature=True):
    """
    Saha's decomposition ``M(q) = U diag(D) U^T``, computed by recursion, not from a numeric M.

    Parameters
    ----------
    model : Model
        The robot (:func:`load_model`).
    q : array-like, shape (n,) or (N, n)
        Joint positions, one state or a batch.
    armature : bool
        Include the rotor inertias ``model.armature`` (they add to D).

    Returns
    -------
    U : ndarray, shape (n, n) or (N, n, n)
        Unit upper triangular; ``U[i, j]`` is zero unless joint i is on joint j's path to the root.
    D : ndarray, shape (n,) or (N, n)
        Positive: ``D[k]`` is the inertia of articulated body k about joint axis k.

    Raises
    ------
    SingularInertiaError
        A pivot is zero; the message names the joint.

    """
    if armature and model.coupled_motors().armature.any():
        raise ValueError(f"udut: model '{model.name}' has a coupled motor with rotor inertia "
                         "(Ia c c^T couples joints): Saha's recursion has no place for it; "
                         'inertia_matrix holds it')
    (q,), N, single = states(model, ('q',), q)
    U = np.empty((N, model.n, model.n))
    D = np.empty((N, model.n))
    check(model, parallel.run(udut_kernel, N, {'q': q, 'U': U, 'D': D}, m=kernel_model(model),
                              flags=ARMATURE if armature else 0), ('q',), q)
    return (U[0], D[0]) if single else (U, D)
