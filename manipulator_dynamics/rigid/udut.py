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
Saha's UDU^T decomposition of the joint-space inertia matrix (seed 000), for chains and trees.

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

The same quantities drive the O(n) forward dynamics in :mod:`manipulator_dynamics.forward`.
Spatial vectors here are 6-arrays, angular first (see :mod:`._kinematics`).
"""

from numba import njit
import numpy as np

from .kinematics import (_row, all_finite, ARMATURE, axis_dot, force_to_parent, joint_poses,
                         kernel_model)
from .. import _parallel as parallel
from .._inputs import raise_nonfinite, states
from .._jit import JIT
from ..model import PRISMATIC

#: A pivot ``D_k`` at or below this fraction of the articulated inertia's size counts as zero.
SINGULAR_PIVOT = 1e-12


class SingularInertiaError(ValueError):
    """M(q) is singular: a joint moves no inertia (a massless tip, or mass only on its axis)."""


@njit(**JIT)
def spatial_inertia(k, out):
    """Fill ``out (6, 6)``: spatial inertia ``[[J, skew(MS)], [skew(MS)^T, M 1]]``."""
    out[:, :] = 0.0
    out[0, 0], out[0, 1], out[0, 2] = k[0], k[1], k[2]
    out[1, 0], out[1, 1], out[1, 2] = k[1], k[3], k[4]
    out[2, 0], out[2, 1], out[2, 2] = k[2], k[4], k[5]
    MX, MY, MZ = k[6], k[7], k[8]
    out[0, 4], out[0, 5] = -MZ, MY
    out[1, 3], out[1, 5] = MZ, -MX
    out[2, 3], out[2, 4] = -MY, MX
    for r in range(3):
        for c in range(3):
            out[3 + c, r] = out[r, 3 + c]
        out[3 + r, 3 + r] = k[9]


@njit(**JIT)
def _rotate_block(R, Z, r0, c0, out):
    """``out = R Z[r0:r0+3, c0:c0+3] R^T``."""
    for r in range(3):
        a0 = R[r, 0] * Z[r0, c0] + R[r, 1] * Z[r0 + 1, c0] + R[r, 2] * Z[r0 + 2, c0]
        a1 = R[r, 0] * Z[r0, c0 + 1] + R[r, 1] * Z[r0 + 1, c0 + 1] + R[r, 2] * Z[r0 + 2, c0 + 1]
        a2 = R[r, 0] * Z[r0, c0 + 2] + R[r, 1] * Z[r0 + 1, c0 + 2] + R[r, 2] * Z[r0 + 2, c0 + 2]
        for c in range(3):
            out[r, c] = a0 * R[c, 0] + a1 * R[c, 1] + a2 * R[c, 2]


@njit(**JIT)
def add_transformed_inertia(R, p, Z, B, out):
    """
    ``out += X^T Z X``: a symmetric 6x6 inertia ``Z`` of a child frame, moved to its parent.

    ``X`` is the parent-to-child motion transform at pose ``R, p``; ``X^T = T diag(R, R)`` with
    ``T = [[1, skew(p)], [0, 1]]``.  With the rotated blocks ``A, B, C`` of ``Z``:
    ``out += [[A + P B^T - TR P, TR], [TR^T, C]]``, ``TR = B + P C``, ``P = skew(p)``.
    ``B (4, 3, 3)`` is scratch.
    """
    A, Bl, C, TR = B[0], B[1], B[2], B[3]
    _rotate_block(R, Z, 0, 0, A)
    _rotate_block(R, Z, 0, 3, Bl)
    _rotate_block(R, Z, 3, 3, C)
    p0, p1, p2 = p[0], p[1], p[2]
    for c in range(3):          # TR[:, c] = B[:, c] + p x C[:, c]
        TR[0, c] = Bl[0, c] + p1 * C[2, c] - p2 * C[1, c]
        TR[1, c] = Bl[1, c] + p2 * C[0, c] - p0 * C[2, c]
        TR[2, c] = Bl[2, c] + p0 * C[1, c] - p1 * C[0, c]
    for c in range(3):
        # column c of P B^T is p x B[c, :]; row r of TR P is -(p x TR[r, :])
        u0 = p1 * Bl[c, 2] - p2 * Bl[c, 1]
        u1 = p2 * Bl[c, 0] - p0 * Bl[c, 2]
        u2 = p0 * Bl[c, 1] - p1 * Bl[c, 0]
        out[0, c] += A[0, c] + u0
        out[1, c] += A[1, c] + u1
        out[2, c] += A[2, c] + u2
    for r in range(3):
        out[r, 0] += p1 * TR[r, 2] - p2 * TR[r, 1]
        out[r, 1] += p2 * TR[r, 0] - p0 * TR[r, 2]
        out[r, 2] += p0 * TR[r, 1] - p1 * TR[r, 0]
        for c in range(3):
            out[r, 3 + c] += TR[r, c]
            out[3 + c, r] += TR[r, c]
            out[3 + r, 3 + c] += C[r, c]


@njit(**JIT)
def articulated(m, flags, R, p, IA, psi, D, tau, eta, Z, B):
    """
    Backward sweep: articulated inertias ``IA``, ``psi_k = IA_k S_k``, pivots ``D``.

    When ``tau (n,)`` is given (non-empty), also Saha's first solution sweep ``tau <- U^-1 tau``
    (eq. 36), with ``eta`` the force each body's descendants pass up.  ``Z (6, 6)`` and
    ``B (4, 3, 3)`` are scratch.  ``flags`` with :data:`ARMATURE` adds the rotor inertias to ``D``.
    Returns the index of the first joint with a zero pivot, or -1.
    """
    n = m.parent.shape[0]
    solve = tau.shape[0] > 0
    for k in range(n):
        spatial_inertia(m.inertial[k], IA[k])
        if solve:
            eta[k, :] = 0.0
    for k in range(n - 1, -1, -1):
        ax, ay, az = m.axis[k, 0], m.axis[k, 1], m.axis[k, 2]
        o = 3 if m.joint_type[k] == PRISMATIC else 0
        A = IA[k]
        for r in range(6):
            psi[k, r] = A[r, o] * ax + A[r, o + 1] * ay + A[r, o + 2] * az
        armature = m.armature[k] if flags & ARMATURE else 0.0
        d = psi[k, o] * ax + psi[k, o + 1] * ay + psi[k, o + 2] * az + armature
        size = armature
        for r in range(6):
            size = max(size, abs(A[r, r]))
        if not d > SINGULAR_PIVOT * size:
            return k
        D[k] = d
        if solve:  # tau_k <- tau_k - S_k . eta_k  (eq. 36)
            tau[k] -= eta[k, o] * ax + eta[k, o + 1] * ay + eta[k, o + 2] * az
        a = m.parent[k]
        if a < 0:
            continue
        for r in range(6):      # what joint k cannot resist: IA_k - psi_k psi_k^T / D_k  (eq. 35)
            for c in range(6):
                Z[r, c] = A[r, c] - psi[k, r] * psi[k, c] / d
        add_transformed_inertia(R[k], p[k], Z, B, IA[a])
        if solve:  # the parent receives eta_k + psi_k tau_k / D_k
            t = tau[k] / d
            for r in range(6):
                Z[0, r] = eta[k, r] + psi[k, r] * t
            force_to_parent(R[k], p[k], Z[0, :3], Z[0, 3:], eta[a, :3], eta[a, 3:])
    return -1


@njit(**JIT)
def udut_kernel(m, q, flags, U, D):
    """Fill ``U (N, n, n)``, ``D (N, n)``; return -2 for non-finite q, k >= 0 for a zero pivot."""
    if not all_finite(q):
        return -2
    N, n = D.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    IA = np.empty((n, 6, 6))
    psi = np.empty((n, 6))
    none = np.empty(0)
    eta = np.empty((0, 6))
    Z = np.empty((6, 6))
    B = np.empty((4, 3, 3))
    w = np.empty(6)
    carried = np.empty(6)
    for s in range(N):
        joint_poses(m, _row(s, q), R, p)
        k = articulated(m, flags, R, p, IA, psi, D[s], none, eta, Z, B)
        if k >= 0:
            return k
        Us = U[s]
        Us[:, :] = 0.0
        for k in range(n):
            Us[k, k] = 1.0
            w[:] = psi[k] / D[s, k]
            j = k
            while m.parent[j] >= 0:        # carry psi_k / D_k to each ancestor i, project on S_i
                carried[:] = 0.0
                force_to_parent(R[j], p[j], w[:3], w[3:], carried[:3], carried[3:])
                w[:] = carried
                j = m.parent[j]
                Us[j, k] = axis_dot(m, j, w)
    return -1


def raise_singular(model, k, q):
    """Raise :class:`SingularInertiaError` naming joint ``k``."""
    name = model.joint_names[k]
    raise SingularInertiaError(
        f"M(q) is singular: joint '{name}' moves no inertia about its axis (the links it "
        'carries have zero mass and inertia, or all their mass lies on the axis) and has no '
        f"armature; give those links mass, set an armature for '{name}', or leave it out with "
        'tip_links')


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
    (q,), N, single = states(model, ('q',), q)
    U = np.empty((N, model.n, model.n))
    D = np.empty((N, model.n))
    statuses = parallel.run(udut_kernel, N, {'q': q, 'U': U, 'D': D}, m=kernel_model(model),
                            flags=ARMATURE if armature else 0)
    status = -2 if -2 in statuses else max(statuses)
    if status == -2:
        raise_nonfinite(model, ('q',), q)
    if status >= 0:
        raise_singular(model, status, q)
    return (U[0], D[0]) if single else (U, D)
