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
The rigid-body algorithms as a reader checks them: plain numpy, Featherstone's names.

The executable specification of :mod:`.rnea`, :mod:`.crba`, :mod:`.forward` and
:mod:`.coriolis`, in the shape of Featherstone's spatial_v2 (``ID.m``, ``HandC.m``, ``FDab.m``):
6-vectors angular part first, ``Xup[i]`` the Plücker transform from body ``parent[i]`` to body
``i``, ``S[i]`` the joint's motion subspace, one loop out over the parent array and one loop
back.  Each function is one
state ``(n,)``, slow (a Python loop per body, a 6x6 product per step) and obvious; the compiled
kernels are tested against it, and it against Pinocchio.  It is an oracle that needs nothing
but numpy.

Model data used: ``parent``, ``joint_type``, ``axis``, ``R_parent_joint``, ``p_parent_joint``,
``inertial`` (Khalil's ten parameters about the body frame's origin), ``armature`` and
``gravity``.  Friction is not part of the rigid body: these functions leave it out.
"""

import numpy as np

from ..model import inertia_tensor, PRISMATIC


def skew(v):
    """Return the 3x3 matrix of ``v x``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def plux(E, r):
    """Return the Plücker transform to a frame with rotation ``E`` and origin ``r``."""
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = E
    X[3:, :3] = -E @ skew(r)
    return X


def crm(v):
    """Return the spatial cross product for motion vectors, ``v x``."""
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = skew(v[:3])
    X[3:, :3] = skew(v[3:])
    return X


def crf(v):
    """Return the spatial cross product for force vectors, ``v x*``."""
    return -crm(v).T


def spatial_inertia(phi):
    """Return the 6x6 spatial inertia of Khalil's ten parameters about the frame's origin."""
    inertia = np.zeros((6, 6))
    inertia[:3, :3] = inertia_tensor(phi[:6])
    inertia[:3, 3:] = skew(phi[6:9])
    inertia[3:, :3] = skew(phi[6:9]).T
    inertia[3:, 3:] = phi[9] * np.eye(3)
    return inertia


def rotation(axis, angle):
    """Return the rotation matrix of ``angle`` about the unit ``axis`` (Rodrigues)."""
    K = skew(axis)
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def joint(model, i, q):
    """Return ``(Xup, S)`` of joint ``i`` at ``q``: parent-to-body transform, motion subspace."""
    a = model.axis[i]
    Xtree = plux(model.R_parent_joint[i].T, model.p_parent_joint[i])
    if model.joint_type[i] == PRISMATIC:
        XJ, S = plux(np.eye(3), a * q), np.r_[np.zeros(3), a]
    else:
        XJ, S = plux(rotation(a, q).T, np.zeros(3)), np.r_[a, np.zeros(3)]
    return XJ @ Xtree, S


def inverse_dynamics(model, q, qd, qdd):
    """Return ``tau (n,)``: recursive Newton-Euler (spatial_v2 ``ID.m``), rotor inertia added."""
    n, a0 = model.n, np.r_[np.zeros(3), -np.asarray(model.gravity)]
    Xup, S, v, a, f = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):
        Xup[i], S[i] = joint(model, i, q[i])
        vJ, p = S[i] * qd[i], model.parent[i]
        v[i] = vJ if p < 0 else Xup[i] @ v[p] + vJ
        a[i] = Xup[i] @ (a0 if p < 0 else a[p]) + S[i] * qdd[i] + crm(v[i]) @ vJ
        Ii = spatial_inertia(model.inertial[i])
        f[i] = Ii @ a[i] + crf(v[i]) @ Ii @ v[i]
    tau = np.zeros(n)
    for i in reversed(range(n)):
        tau[i] = S[i] @ f[i] + model.armature[i] * qdd[i]
        if model.parent[i] >= 0:
            f[model.parent[i]] = f[model.parent[i]] + Xup[i].T @ f[i]
    return tau


def inertia_matrix(model, q):
    """Return ``M (n, n)``: composite rigid bodies (spatial_v2 ``HandC.m``), rotor inertia in."""
    n = model.n
    Xup, S = zip(*(joint(model, i, q[i]) for i in range(n)))
    IC = [spatial_inertia(model.inertial[i]) for i in range(n)]
    for i in reversed(range(n)):
        if model.parent[i] >= 0:
            IC[model.parent[i]] = IC[model.parent[i]] + Xup[i].T @ IC[i] @ Xup[i]
    M = np.diag(np.asarray(model.armature, dtype=float))
    for i in range(n):
        fh = IC[i] @ S[i]
        M[i, i] += S[i] @ fh
        j = i
        while model.parent[j] >= 0:
            fh = Xup[j].T @ fh
            j = model.parent[j]
            M[i, j] = M[j, i] = S[j] @ fh
    return M


def forward_dynamics(model, q, qd, tau):
    """Return ``qdd (n,)``: articulated bodies (spatial_v2 ``FDab.m``), rotor inertia added."""
    n, a0 = model.n, np.r_[np.zeros(3), -np.asarray(model.gravity)]
    Xup, S, v, c, IA, pA = ([None] * n for _ in range(6))
    for i in range(n):
        Xup[i], S[i] = joint(model, i, q[i])
        vJ, p = S[i] * qd[i], model.parent[i]
        v[i] = vJ if p < 0 else Xup[i] @ v[p] + vJ
        c[i] = crm(v[i]) @ vJ
        IA[i] = spatial_inertia(model.inertial[i])
        pA[i] = crf(v[i]) @ IA[i] @ v[i]
    U, d, u = [None] * n, np.zeros(n), np.zeros(n)
    for i in reversed(range(n)):
        U[i] = IA[i] @ S[i]
        d[i] = S[i] @ U[i] + model.armature[i]
        u[i] = tau[i] - S[i] @ pA[i]
        p = model.parent[i]
        if p >= 0:
            Ia = IA[i] - np.outer(U[i], U[i]) / d[i]
            pa = pA[i] + Ia @ c[i] + U[i] * u[i] / d[i]
            IA[p] = IA[p] + Xup[i].T @ Ia @ Xup[i]
            pA[p] = pA[p] + Xup[i].T @ pa
    a, qdd = [None] * n, np.zeros(n)
    for i in range(n):
        p = model.parent[i]
        a[i] = Xup[i] @ (a0 if p < 0 else a[p]) + c[i]
        qdd[i] = (u[i] - U[i] @ a[i]) / d[i]
        a[i] = a[i] + S[i] * qdd[i]
    return qdd


def coriolis_matrix(model, q, qd):
    """
    Return ``C (n, n)``: ``sum_i J_i^T (I_i dJ_i + B_i J_i)`` (Echeandia & Wensing 2021).

    In the base frame: ``J_i`` body i's Jacobian, ``dJ_i`` its time derivative (columns
    ``v_j x S_j``), ``B_i = (v_i x* I_i - I_i v_i x + (I_i v_i) xbar) / 2`` with
    ``(f xbar) u = u x* f``.  O(n^3): one n x n product per body.
    """
    n = model.n
    X0, S, v = [None] * n, np.zeros((n, 6)), [None] * n
    for i in range(n):
        Xup, Si = joint(model, i, q[i])
        p = model.parent[i]
        X0[i] = Xup if p < 0 else Xup @ X0[p]            # base to body i
        S[i] = np.linalg.solve(X0[i], Si)                 # the joint's axis in the base frame
        v[i] = S[i] * qd[i] + (0.0 if p < 0 else v[p])
    C = np.zeros((n, n))
    for i in range(n):
        J, dJ, j = np.zeros((6, n)), np.zeros((6, n)), i
        while j >= 0:
            J[:, j], dJ[:, j], j = S[j], crm(v[j]) @ S[j], model.parent[j]
        Ii = X0[i].T @ spatial_inertia(model.inertial[i]) @ X0[i]
        bar = np.column_stack([crf(e) @ (Ii @ v[i]) for e in np.eye(6)])
        B = 0.5 * (crf(v[i]) @ Ii - Ii @ crm(v[i]) + bar)
        C += J.T @ (Ii @ dJ + B @ J)
    return C
