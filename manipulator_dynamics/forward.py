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

"""Forward dynamics: joint accelerations from efforts, ``qdd = M(q)^-1 (tau - h(q, qd))``.

Two methods, same result:

* ``"udut"``: Saha's O(n) algorithm (seed 000, section 5): ``h`` by Newton-Euler, then three sweeps
  over the UDU^T factors without forming them -- ``tau^ = U^-1 (tau - h)`` backward (eq. 36, fused
  with the articulated-inertia recursion), ``tau~ = D^-1 tau^`` (eq. 37), ``qdd = U^-T tau~``
  forward (eq. 38): ``qdd_k = tau~_k - psi_k . mu_k / D_k`` with ``mu_k`` the acceleration that the
  ancestors'
  ``qdd`` give body k.  Works for trees.
* ``"cholesky"``: ``M`` by Khalil's composite links, factorised as ``M = L^T L`` along the parent
  array (Featherstone's LTL: no fill-in outside the root paths, so trees stay cheap), two
  triangular solves.  O(n d^2) for depth d.
* ``"auto"``: whichever :func:`choose_method` predicts is cheaper for the model's size and shape.
"""

import weakref

import numpy as np
from numba import njit

from ._inputs import external_wrenches, raise_nonfinite, states
from ._kinematics import _row, all_finite, JIT, joint_poses
from .crba import composite_inertia, inertia_columns
from .model import PRISMATIC
from .rnea import FRICTION, rnea_kernel
from .udut import articulated, raise_singular


@njit(**JIT)
def udut_solve_kernel(parent, jtype, geometry, inertial, joint_params, q, rhs, out):
    """``out = M^-1 rhs`` by Saha's three sweeps; -2 non-finite, k >= 0 zero pivot, -1 ok."""
    if not (all_finite(q) and all_finite(rhs)):
        return -2
    N, n = out.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    IA = np.empty((n, 6, 6))
    psi = np.empty((n, 6))
    D = np.empty(n)
    eta = np.empty((n, 6))
    mu = np.empty((n, 6))
    t = np.empty(n)
    for s in range(N):
        joint_poses(jtype, geometry, _row(s, q), R, p)
        t[:] = _row(s, rhs)
        # sweep 1: t <- U^-1 t, backward, with the articulated inertias
        k = articulated(parent, jtype, geometry, inertial, joint_params, R, p, IA, psi, D, t, eta)
        if k >= 0:
            return k
        qdd = out[s]
        for k in range(n):
            a = parent[k]
            # mu_k: acceleration of body k from the ancestors' accelerations, mu_k = X_k (mu_a +
            # S_a qdd_a)
            if a < 0:
                mu[k, :] = 0.0
            else:
                ga = geometry[a]
                oa = 3 if jtype[a] == PRISMATIC else 0
                m = mu[a].copy()
                m[oa] += ga[12] * qdd[a]
                m[oa + 1] += ga[13] * qdd[a]
                m[oa + 2] += ga[14] * qdd[a]
                Rk, pk = R[k], p[k]
                # w_k = R^T w_a ; v_k = R^T (v_a + w_a x p)
                v0 = m[3] + m[1] * pk[2] - m[2] * pk[1]
                v1 = m[4] + m[2] * pk[0] - m[0] * pk[2]
                v2 = m[5] + m[0] * pk[1] - m[1] * pk[0]
                for r in range(3):
                    mu[k, r] = Rk[0, r] * m[0] + Rk[1, r] * m[1] + Rk[2, r] * m[2]
                    mu[k, 3 + r] = Rk[0, r] * v0 + Rk[1, r] * v1 + Rk[2, r] * v2
            # sweeps 2 and 3: qdd_k = t_k / D_k - psi_k . mu_k / D_k
            acc = t[k]
            for r in range(6):
                acc -= psi[k, r] * mu[k, r]
            qdd[k] = acc / D[k]
    return -1


#: A Cholesky pivot at or below this fraction of its original diagonal entry counts as zero.
SINGULAR_PIVOT = 1e-12


@njit(**JIT)
def ltl_factor(parent, H, diag):
    """Factorise in place, ``H = L^T L`` along the parent array (Featherstone's LTL).

    Returns -1, or the index of the first zero pivot.  ``diag`` is scratch for the original
    diagonal, against which pivots are judged.
    """
    n = H.shape[0]
    for k in range(n):
        diag[k] = H[k, k]
    for k in range(n - 1, -1, -1):
        if not H[k, k] > SINGULAR_PIVOT * diag[k]:
            return k
        H[k, k] = np.sqrt(H[k, k])
        i = parent[k]
        while i >= 0:
            H[k, i] /= H[k, k]
            i = parent[i]
        i = parent[k]
        while i >= 0:
            j = i
            while j >= 0:
                H[i, j] -= H[k, i] * H[k, j]
                j = parent[j]
            i = parent[i]
    return -1


@njit(**JIT)
def ltl_solve(parent, L, x):
    """Solve in place: ``x <- (L^T L)^-1 x`` with L from :func:`ltl_factor`."""
    n = x.shape[0]
    for k in range(n - 1, -1, -1):      # L^T z = x
        x[k] /= L[k, k]
        i = parent[k]
        while i >= 0:
            x[i] -= L[k, i] * x[k]
            i = parent[i]
    for k in range(n):                  # L y = z
        i = parent[k]
        while i >= 0:
            x[k] -= L[k, i] * x[i]
            i = parent[i]
        x[k] /= L[k, k]


@njit(**JIT)
def cholesky_solve_kernel(parent, jtype, geometry, inertial, joint_params, q, rhs, out):
    """``out = M^-1 rhs`` by composite-link M and LTL; return codes as udut_solve_kernel."""
    if not (all_finite(q) and all_finite(rhs)):
        return -2
    N, n = out.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    C = np.empty((n, 10))
    H = np.empty((n, n))
    diag = np.empty(n)
    for s in range(N):
        joint_poses(jtype, geometry, _row(s, q), R, p)
        composite_inertia(parent, inertial, R, p, C)
        inertia_columns(parent, jtype, geometry, joint_params, R, p, C, H)
        k = ltl_factor(parent, H, diag)
        if k >= 0:
            return k
        out[s, :] = _row(s, rhs)
        ltl_solve(parent, H, out[s])
    return -1


_KERNELS = {'udut': udut_solve_kernel, 'cholesky': cholesky_solve_kernel}
_CHOICE = weakref.WeakKeyDictionary()

# Cost model for "auto": batched microseconds per sample, least-squares fits to measurements of
# both kernels on chains of 6-96 joints and random trees of 24-48 joints (2 cores, x86-64; see the
# README's benchmark section).  Only the ratio matters, so the machine's speed cancels out.
_UDUT_PER_BODY = 0.41
_CHOLESKY_PER_BODY = 0.318
_CHOLESKY_PER_PATH_ELEMENT = 0.00836
_CHOLESKY_PER_FACTOR_OP = 0.00147


def choose_method(model):
    """``"udut"`` or ``"cholesky"``: the one the cost model predicts is faster for this model.

    Saha's sweeps cost a fixed amount per body (6x6 articulated inertias); the composite-link M
    costs
    one step per (body, ancestor) pair and its LTL factorisation one per (body, ancestor, ancestor)
    triple, so deep chains favour UDU^T and short or bushy trees favour Cholesky.
    """
    method = _CHOICE.get(model)
    if method is None:
        depth = np.zeros(model.n, dtype=np.int64)
        for i, a in enumerate(model.parent):
            depth[i] = 1 if a < 0 else depth[a] + 1
        udut_cost = _UDUT_PER_BODY * model.n
        cholesky_cost = (_CHOLESKY_PER_BODY * model.n + _CHOLESKY_PER_PATH_ELEMENT * depth.sum()
                         + _CHOLESKY_PER_FACTOR_OP * (depth * (depth + 1) // 2).sum())
        method = _CHOICE[model] = 'udut' if udut_cost < cholesky_cost else 'cholesky'
    return method


def forward_dynamics(model, q, qd, tau, f_ext=None, *, method='auto', armature=True,
                     friction=False):
    """Joint accelerations ``qdd = M(q)^-1 (tau - h(q, qd))`` [with friction, external wrenches].

    Parameters
    ----------
    q, qd, tau : array-like, shape (n,) or (N, n)
        Positions, velocities, applied joint efforts; 1-D ones are broadcast over the batch.
    f_ext : mapping of str to array-like, optional
        External wrenches on links, as in :func:`inverse_dynamics`.
    method : {"auto", "udut", "cholesky"}
        See the module docstring; all give the same accelerations to rounding.
    armature : bool
        Include rotor inertias in M.
    friction : bool
        Subtract ``Fv qd + Fc sign(qd)`` from the applied efforts.

    Returns
    -------
    qdd : ndarray, shape (n,) or (N, n)

    Raises
    ------
    SingularInertiaError
        M(q) is singular; the message names the joint.
    """
    if method == 'auto':
        method = choose_method(model)
    kernel = _KERNELS.get(method)
    if kernel is None:
        raise ValueError(f"method must be 'auto', 'udut' or 'cholesky', got {method!r}")
    (q, qd, tau), N, single = states(model, q=q, qd=qd, tau=tau)
    n = model.n
    fext = external_wrenches(model, f_ext, N)
    rhs = np.empty((N, n))
    if not rnea_kernel(model.parent, model.joint_type, model.geometry, model.inertial,
                       model.joint_params, model.gravity, q, qd, np.zeros((1, n)), fext,
                       FRICTION if friction else 0, rhs):
        raise_nonfinite(model, q=q, qd=qd, tau=tau)
    np.subtract(tau, rhs, out=rhs)
    params = model.joint_params if armature else _no_armature(model)
    out = np.empty((N, n))
    status = kernel(model.parent, model.joint_type, model.geometry, model.inertial, params, q, rhs,
                    out)
    if status == -2:
        raise_nonfinite(model, q=q, qd=qd, tau=tau)
    if status >= 0:
        raise_singular(model, status, q)
    return out[0] if single else out


def _no_armature(model):
    params = model.joint_params.copy()
    params[:, 0] = 0.0
    return params
