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

"""Saha's UDU^T decomposition of the joint-space inertia matrix (seed 000), for chains and trees.

Saha's reverse Gaussian elimination of ``M`` eliminates columns n, n-1, ..., 1.  Its recursions
(eqs. 31-35) carry, for each body k, the 6x6 matrix ``M_k,k+1`` of the *articulated body* k (body k
and its descendants, joints below k free): the articulated-body inertia ``IA_k`` of Featherstone.
With ``S_k`` joint k's motion subspace in body frame k and ``psi_k = IA_k S_k`` (eq. 32):

* ``D_k = S_k . psi_k + Ia_k`` (``m-hat_k``, eq. 20: the inertia of articulated body k about
  axis k);
* ``U_ik = S_i . X*_{i<-k} psi_k / D_k`` for every ancestor i of k (eq. 31), 1 on the diagonal,
  0 elsewhere (a tree keeps M's sparsity: ``U_ik = 0`` when i is not on k's root path);
* the parent's articulated inertia grows by the part of k's that joint k cannot resist (eq. 35):
  ``IA_a(k) += X^T (IA_k - psi_k psi_k^T / D_k) X``.

The same quantities drive the O(n) forward dynamics in :mod:`manipulator_dynamics.forward`.
Spatial vectors here are 6-arrays, angular first (see :mod:`._kinematics`).
"""

import numpy as np
from numba import njit

from ._inputs import raise_nonfinite, states
from ._kinematics import _row, all_finite, force_to_parent, JIT, joint_poses
from .model import PRISMATIC

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
def motion_transform(R, p, X):
    """``X (6, 6)``: motion transform from the parent frame to the child frame at pose ``R, p``."""
    X[:, :] = 0.0
    for r in range(3):
        for c in range(3):
            X[r, c] = R[c, r]
            X[3 + r, 3 + c] = R[c, r]
    # lower-left block: -R^T skew(p)
    for r in range(3):
        e0, e1, e2 = R[0, r], R[1, r], R[2, r]
        X[3 + r, 0] = -(e1 * p[2] - e2 * p[1])
        X[3 + r, 1] = -(e2 * p[0] - e0 * p[2])
        X[3 + r, 2] = -(e0 * p[1] - e1 * p[0])


@njit(**JIT)
def add_congruence(X, A, Y, out):
    """``out += X^T A X`` for 6x6 matrices (``Y`` is scratch)."""
    for r in range(6):
        for c in range(6):
            acc = 0.0
            for k in range(6):
                acc += A[r, k] * X[k, c]
            Y[r, c] = acc
    for r in range(6):
        for c in range(6):
            acc = 0.0
            for k in range(6):
                acc += X[k, r] * Y[k, c]
            out[r, c] += acc


@njit(**JIT)
def articulated(parent, jtype, geometry, inertial, joint_params, R, p, IA, psi, D, tau, eta):
    """Backward sweep: articulated inertias ``IA``, ``psi_k = IA_k S_k``, pivots ``D``.

    When ``tau (n,)`` is given (non-empty), also Saha's first solution sweep ``tau <- U^-1 tau``
    (eq. 36), with ``eta`` the force each body's descendants pass up.  Returns the index of the
    first joint with a zero pivot, or -1.
    """
    n = parent.shape[0]
    X = np.empty((6, 6))
    Y = np.empty((6, 6))
    solve = tau.shape[0] > 0
    for k in range(n):
        spatial_inertia(inertial[k], IA[k])
        if solve:
            eta[k, :] = 0.0
    for k in range(n - 1, -1, -1):
        g = geometry[k]
        o = 3 if jtype[k] == PRISMATIC else 0
        A = IA[k]
        for r in range(6):
            psi[k, r] = A[r, o] * g[12] + A[r, o + 1] * g[13] + A[r, o + 2] * g[14]
        d = psi[k, o] * g[12] + psi[k, o + 1] * g[13] + psi[k, o + 2] * g[14] + joint_params[k, 0]
        size = joint_params[k, 0]
        for r in range(6):
            size = max(size, abs(A[r, r]))
        if not d > SINGULAR_PIVOT * size:
            return k
        D[k] = d
        if solve:  # tau_k <- tau_k - S_k . eta_k  (eq. 36)
            tau[k] -= eta[k, o] * g[12] + eta[k, o + 1] * g[13] + eta[k, o + 2] * g[14]
        a = parent[k]
        if a < 0:
            continue
        for r in range(6):
            for c in range(6):
                Y[r, c] = A[r, c] - psi[k, r] * psi[k, c] / d
        motion_transform(R[k], p[k], X)
        A2 = Y.copy()
        add_congruence(X, A2, Y, IA[a])
        if solve:  # the parent receives eta_k + psi_k tau_k / D_k
            t = tau[k] / d
            force_to_parent(R[k], p[k], eta[k, :3] + psi[k, :3] * t, eta[k, 3:] + psi[k, 3:] * t,
                            eta[a, :3], eta[a, 3:])
    return -1


@njit(**JIT)
def udut_kernel(parent, jtype, geometry, inertial, joint_params, q, U, D):
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
    w = np.empty(6)
    n2 = np.empty(3)
    f2 = np.empty(3)
    for s in range(N):
        joint_poses(jtype, geometry, _row(s, q), R, p)
        k = articulated(parent, jtype, geometry, inertial, joint_params, R, p, IA, psi, D[s], none,
                        eta)
        if k >= 0:
            return k
        Us = U[s]
        Us[:, :] = 0.0
        for k in range(n):
            Us[k, k] = 1.0
            w[:] = psi[k] / D[s, k]
            j = k
            while parent[j] >= 0:        # carry psi_k / D_k to each ancestor i, project on S_i
                n2[:] = 0.0
                f2[:] = 0.0
                force_to_parent(R[j], p[j], w[:3], w[3:], n2, f2)
                w[:3] = n2
                w[3:] = f2
                j = parent[j]
                o = 3 if jtype[j] == PRISMATIC else 0
                Us[j, k] = (w[o] * geometry[j, 12] + w[o + 1] * geometry[j, 13]
                            + w[o + 2] * geometry[j, 14])
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
    """Saha's decomposition ``M(q) = U diag(D) U^T``, computed by recursion, not from a numeric M.

    Parameters
    ----------
    q : array-like, shape (n,) or (N, n)
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
    (q,), N, single = states(model, q=q)
    U = np.empty((N, model.n, model.n))
    D = np.empty((N, model.n))
    params = model.joint_params if armature else np.zeros_like(model.joint_params)
    status = udut_kernel(model.parent, model.joint_type, model.geometry, model.inertial, params, q,
                         U, D)
    if status == -2:
        raise_nonfinite(model, q=q)
    if status >= 0:
        raise_singular(model, status, q)
    return (U[0], D[0]) if single else (U, D)
