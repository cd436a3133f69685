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
Forward dynamics: joint accelerations from efforts, ``qdd = M(q)^-1 (tau - h(q, qd))``.

Two methods, same result:

* ``"udut"``: Saha's O(n) algorithm (Saha, ICRA 1995, section 5): three sweeps over the UDU^T
  factors without forming them -- ``tau^ = U^-1 (tau - h)`` backward (eq. 36, fused with the
  articulated-inertia recursion), ``tau~ = D^-1 tau^`` (eq. 37, in the same pass),
  ``qdd = U^-T tau~`` forward (eq. 38): ``qdd_k = tau~_k - psi_k . mu_k / D_k`` with ``mu_k`` the
  acceleration that the ancestors' ``qdd`` give body k.  ``h`` is Newton-Euler's: its outward
  pass first, its inward pass carried in the backward sweep's ``eta`` (by linearity), so one
  backward pass serves both, as in the articulated-body method.  Works for trees.
* ``"cholesky"``: ``M`` by Khalil's composite links, factorised as ``M = L^T L`` along the parent
  array (Featherstone's LTL: no fill-in outside the root paths, so trees stay cheap), two
  triangular solves.  O(n d^2) for depth d.
* ``"auto"``: whichever :func:`choose_method` predicts is cheaper for the model's size and shape.
"""

import weakref

from numba import njit
import numpy as np

from .crba import composite_inertia, inertia_columns
from .kinematics import (all_finite, ARMATURE, batch_row, coupled_friction, coupled_product,
                         FRICTION, joint_poses, kernel_model, model_at, scratch, vectors_ok)
from .rnea import body_wrenches, joint_friction, rnea_sample, rnea_workspace
from .status import BAD_VECTOR, check, NON_FINITE, OK, raise_singular
from .udut import articulated, articulated_workspace
from .. import _parallel as parallel
from .._inputs import external_wrenches, states, vectors
from .._jit import BOOL, INLINE, INT, JIT, ONE_STATE, OUT_VECTOR, Signature, VECTOR
from ..model import PRISMATIC


@njit(**INLINE)
def _at_rest(work, n):
    """Zero accelerations ``(n,)`` in the spare plane of :func:`rnea.rnea_workspace`'s ``work``."""
    zero = work[2][5].reshape(3 * n)[:n]
    zero[:] = 0.0
    return zero


@njit(**INLINE)
def _rhs(m, qs, qds, taus, fext, s, flags, work, t):
    """
    Poses of state ``qs`` (into ``work[0], work[1]``) and ``t = tau - h(q, qd)``.

    ``h`` is Newton-Euler's with ``qdd = 0``; ``work`` is :func:`rnea.rnea_workspace`'s, whose
    spare plane holds the zero accelerations (kept apart from ``t``: aliasing them costs the
    compiler a reload per use).
    """
    n = qs.shape[0]
    joint_poses(m, qs, work[0], work[1])
    rnea_sample(m, qs, qds, _at_rest(work, n), fext, s, flags & ~ARMATURE, work, t)
    for i in range(n):
        t[i] = taus[i] - t[i]


@njit(**INLINE)
def udut_workspace(n, stack=False):
    """Scratch arrays of :func:`udut_fd_sample` for n bodies (``stack``: see ``scratch``)."""
    return (rnea_workspace(n, stack), articulated_workspace(n, stack), scratch((n,), stack),
            scratch((n, 6), stack), scratch((n, 6), stack))


@njit(**INLINE)
def udut_fd_sample(m, qs, qds, taus, fext, s, flags, work, qdd):
    """Saha's three sweeps for one state into ``qdd (n,)``; OK, or the index of a zero pivot."""
    rnea_work, art_work, D, eta, mu = work
    R, p = rnea_work[0], rnea_work[1]
    phi = art_work[1]                                   # psi_k / D_k
    n = m.parent.shape[0]
    joint_poses(m, qs, R, p)
    body_wrenches(m, qs, qds, _at_rest(rnea_work, n), fext, s, rnea_work)
    f, mom = rnea_work[2][3], rnea_work[2][4]
    for k in range(n):
        for r in range(3):
            eta[k, r] = mom[k, r]
            eta[k, 3 + r] = f[k, r]
        qdd[k] = taus[k] - joint_friction(m, k, qds[k]) if flags & FRICTION else taus[k]
    if flags & FRICTION:                                # the coupled motors' friction
        for c in range(m.coupling.shape[0]):
            f = coupled_friction(m, c, coupled_product(m, qds, c))
            for j in range(n):
                qdd[j] -= m.coupling[c, j] * f
    # sweeps 1 and 2: qdd <- D^-1 U^-1 (tau - h), backward, with the articulated inertias; h,
    # Newton-Euler's inward pass at qdd = 0, rides along in eta (one backward pass, not two)
    k = articulated(m, flags, R, p, art_work, D, qdd, eta)
    if k >= 0:
        return k
    parent, axis = m.parent, m.axis
    for k in range(n):
        a = parent[k]
        acc = qdd[k]
        if a < 0:
            mu[k, :] = 0.0
        else:
            # mu_k, the acceleration of body k from its ancestors' qdd: X_k (mu_a + S_a qdd_a)
            u = mu[a]
            w0, w1, w2, v0, v1, v2 = u[0], u[1], u[2], u[3], u[4], u[5]
            qa = qdd[a]
            if m.joint_type[a] == PRISMATIC:
                v0 += axis[a, 0] * qa
                v1 += axis[a, 1] * qa
                v2 += axis[a, 2] * qa
            else:
                w0 += axis[a, 0] * qa
                w1 += axis[a, 1] * qa
                w2 += axis[a, 2] * qa
            Rk, pk = R[k], p[k]
            # w_k = R^T w_a ; v_k = R^T (v_a + w_a x p)
            c0 = v0 + w1 * pk[2] - w2 * pk[1]
            c1 = v1 + w2 * pk[0] - w0 * pk[2]
            c2 = v2 + w0 * pk[1] - w1 * pk[0]
            uk = mu[k]
            for r in range(3):
                uk[r] = Rk[0, r] * w0 + Rk[1, r] * w1 + Rk[2, r] * w2
                uk[3 + r] = Rk[0, r] * c0 + Rk[1, r] * c1 + Rk[2, r] * c2
            # sweep 3: qdd_k = t_k / D_k - (psi_k / D_k) . mu_k, summed in pairs (a shorter
            # chain of dependent additions: every body waits for its parent's qdd)
            g = phi[k]
            acc -= ((g[0] * uk[0] + g[1] * uk[1]) + (g[2] * uk[2] + g[3] * uk[3])
                    + (g[4] * uk[4] + g[5] * uk[5]))
        qdd[k] = acc
    return OK


#: A Cholesky pivot at or below this fraction of its diagonal entry in M counts as zero.
ZERO_CHOLESKY_PIVOT = 1e-12


@njit(**INLINE)
def ltl_factor(parent, H, diag):
    """
    Factorise in place, ``H = L^T L`` along the parent array (Featherstone's LTL).

    Reads only the diagonal and ``H[k, i]`` for i on k's root path.  Returns OK, or the index of
    the first zero pivot.  ``diag`` receives ``1 / L[k, k]`` (it first holds the original diagonal,
    against which pivots are judged).
    """
    n = H.shape[0]
    for k in range(n):
        diag[k] = H[k, k]
    for k in range(n - 1, -1, -1):
        if not H[k, k] > ZERO_CHOLESKY_PIVOT * diag[k]:
            return k
        H[k, k] = np.sqrt(H[k, k])
        inv = 1.0 / H[k, k]
        diag[k] = inv
        i = parent[k]
        while i >= 0:
            H[k, i] *= inv
            i = parent[i]
        i = parent[k]
        while i >= 0:
            j = i
            while j >= 0:
                H[i, j] -= H[k, i] * H[k, j]
                j = parent[j]
            i = parent[i]
    return OK


@njit(**INLINE)
def ltl_solve(parent, L, inv, x):
    """Solve in place: ``x <- (L^T L)^-1 x`` with L and ``inv = 1 / diag(L)`` from ltl_factor."""
    n = x.shape[0]
    for k in range(n - 1, -1, -1):      # L^T z = x
        x[k] *= inv[k]
        i = parent[k]
        while i >= 0:
            x[i] -= L[k, i] * x[k]
            i = parent[i]
    for k in range(n):                  # L y = z
        i = parent[k]
        while i >= 0:
            x[k] -= L[k, i] * x[i]
            i = parent[i]
        x[k] *= inv[k]


@njit(**INLINE)
def cholesky_workspace(n, stack=False):
    """Scratch arrays of :func:`cholesky_fd_sample` for n bodies (``stack``: see ``scratch``)."""
    return (rnea_workspace(n, stack), scratch((n, 10), stack), scratch((n, n), stack),
            scratch((n,), stack))


@njit(**INLINE)
def cholesky_fd_sample(m, qs, qds, taus, fext, s, flags, work, qdd):
    """Composite-link M, its LTL factors and two solves for one state; codes as udut_fd_sample."""
    rnea_work, C, H, diag = work
    R, p = rnea_work[0], rnea_work[1]
    _rhs(m, qs, qds, taus, fext, s, flags, rnea_work, qdd)
    composite_inertia(m, R, p, C)
    inertia_columns(m, flags, R, p, C, H, False)
    k = ltl_factor(m.parent, H, diag)
    if k >= 0:
        return k
    ltl_solve(m.parent, H, diag, qdd)
    return OK


@njit(**JIT)
def fd_kernel(m, cholesky, q, qd, tau, fext, flags, out):
    """Fill ``out (N, n)``; return a status (:mod:`.status`): k >= 0 a zero pivot at joint k."""
    if not (all_finite(q) and all_finite(qd) and all_finite(tau)):
        return NON_FINITE
    N, n = out.shape
    if cholesky:
        work_c = cholesky_workspace(n)
    else:
        work_u = udut_workspace(n)
    for s in range(N):
        if cholesky:
            k = cholesky_fd_sample(m, batch_row(s, q), batch_row(s, qd), batch_row(s, tau), fext,
                                   s, flags, work_c, out[s])
        else:
            k = udut_fd_sample(m, batch_row(s, q), batch_row(s, qd), batch_row(s, tau), fext, s,
                               flags, work_u, out[s])
        if k >= 0:
            return k
    return OK


@njit(**ONE_STATE)
def fd_vector(address, cholesky, q, qd, tau, flags, out):
    """One state given as vectors (the control-loop path); BAD_VECTOR for a bad length."""
    m = model_at(address)
    n = m.parent.shape[0]
    if not vectors_ok(n, q, qd, tau):
        return BAD_VECTOR
    fext = np.empty((0, n, 6))
    if cholesky:
        return cholesky_fd_sample(m, q, qd, tau, fext, 0, flags, cholesky_workspace(n, True),
                                  out)
    return udut_fd_sample(m, q, qd, tau, fext, 0, flags, udut_workspace(n, True), out)


_fd_vector = Signature(fd_vector, INT, BOOL, VECTOR, VECTOR, VECTOR, INT, OUT_VECTOR)
_NAMES = ('q', 'qd', 'tau')
_CHOICE = weakref.WeakKeyDictionary()

# Cost model for "auto": batched microseconds per sample on one thread, relative least-squares fits
# to measurements of both kernels on chains of 6-96 joints and random trees of 24-48 joints
# (`benchmarks/bench_dynamics.py --fit`, see the README).  Only the ratio matters, so the machine's
# speed cancels out.  Each has a fixed cost per sample (poses, Newton-Euler's outward pass, the
# loop), which the fit needs to place the crossover: on chains it lies between 6 and 9 joints,
# below Saha's own estimate of 12 against an O(n^3) method.
_UDUT_PER_SAMPLE = 0.400
_UDUT_PER_BODY = 0.0939
_CHOLESKY_PER_SAMPLE = 0.420
_CHOLESKY_PER_BODY = 0.0695
_CHOLESKY_PER_PATH_ELEMENT = 0.00173
_CHOLESKY_PER_FACTOR_OP = 0.00129


def choose_method(model):
    """
    ``"udut"`` or ``"cholesky"``: the one the cost model predicts is faster for this model.

    Saha's sweeps cost a fixed amount per body (6x6 articulated inertias); the composite-link M
    costs one step per (body, ancestor) pair and its LTL factorisation one per (body, ancestor,
    ancestor) triple, so deep chains favour UDU^T and short or bushy trees favour Cholesky.
    A model whose coupled motors have rotor inertia takes Cholesky: Saha's sweeps have no place
    for an inertia that couples joints (:func:`coupled_inertia`).
    """
    method = _CHOICE.get(model)
    if method is None and coupled_inertia(model):
        method = _CHOICE[model] = 'cholesky'
    if method is None:
        depth = np.zeros(model.n, dtype=np.int64)
        for i, a in enumerate(model.parent):
            depth[i] = 1 if a < 0 else depth[a] + 1
        udut_cost = _UDUT_PER_SAMPLE + _UDUT_PER_BODY * model.n
        cholesky_cost = (_CHOLESKY_PER_SAMPLE + _CHOLESKY_PER_BODY * model.n
                         + _CHOLESKY_PER_PATH_ELEMENT * depth.sum()
                         + _CHOLESKY_PER_FACTOR_OP * (depth * (depth + 1) // 2).sum())
        method = _CHOICE[model] = 'udut' if udut_cost < cholesky_cost else 'cholesky'
    return method


def coupled_inertia(model):
    """
    Whether M(q) holds a coupled motor's rotor inertia (:meth:`Model.coupled_motors`).

    Such an inertia adds ``Ia c c^T`` off the diagonal: Cholesky's factorisation holds it where
    the motor's joints lie on one path to the root (a wrist); joints on two branches (a
    differential between two fingers) are refused here, naming them.
    """
    found = _COUPLED.get(model)
    if found is None:
        found = _COUPLED[model] = _coupled_inertia(model)
    return found


_COUPLED = weakref.WeakKeyDictionary()


def _coupled_inertia(model):
    motors = model.coupled_motors()
    if not motors.armature.any():
        return False
    for row, own, ia in zip(motors.rows, motors.joints, motors.armature):
        turned = np.flatnonzero(row) if ia else ()
        for a, b in zip(turned[:-1], turned[1:]):
            k = b
            while k > a:
                k = model.parent[k]
            if k != a:
                raise ValueError(
                    f'forward dynamics: the motor of joint {model.joint_names[own]!r} turns '
                    f'joints {model.joint_names[a]!r} and {model.joint_names[b]!r}, which are '
                    'on two branches of the tree: its rotor inertia cannot be factorised with '
                    'the tree (give it zero armature, or model the transmission as two motors)')
    return True


def forward_dynamics(model, q, qd, tau, f_ext=None, *, method='auto', armature=True,
                     friction=False):
    """
    Joint accelerations ``qdd = M(q)^-1 (tau - h(q, qd))`` [with friction, external wrenches].

    Parameters
    ----------
    model : Model
        The robot (:func:`load_model`).
    q, qd, tau : array-like, shape (n,) or (N, n)
        Positions, velocities, applied joint efforts; 1-D ones are broadcast over the batch.
    f_ext : mapping of str to array-like, optional
        External wrenches on links, as in :func:`inverse_dynamics`.
    method : {"auto", "udut", "cholesky"}
        See the module docstring; all give the same accelerations to rounding.
    armature : bool
        Include rotor inertias in M.
    friction : bool
        Subtract the joints' friction ``Fv qd + Fc s(qd) + Fo`` from the applied efforts.

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
    elif method not in ('udut', 'cholesky'):
        raise ValueError(f"method must be 'auto', 'udut' or 'cholesky', got {method!r}")
    if method == 'udut' and armature and coupled_inertia(model):
        raise ValueError(f"forward dynamics: method 'udut' cannot hold the rotor inertia of a "
                         f"coupled motor (model '{model.name}'): use 'cholesky' or 'auto'")
    cholesky = method == 'cholesky'
    flags = (ARMATURE if armature else 0) | (FRICTION if friction else 0)
    m = kernel_model(model)
    if f_ext is None and vectors(q, qd, tau):
        out = np.empty(m.vector_shape)
        try:
            status = _fd_vector.call(m.address, cholesky, q, qd, tau, flags, out)
        except TypeError:               # array-like, not an array: converted below
            status = BAD_VECTOR
        if status == OK:
            return out
        if status >= 0:
            raise_singular(model, status)
        # BAD_VECTOR: a bad length or value; the general path says which
    (q, qd, tau), N, single = states(model, _NAMES, q, qd, tau)
    out = np.empty((N, model.n))
    batched = {'q': q, 'qd': qd, 'tau': tau,
               'fext': external_wrenches(model, f_ext, N), 'out': out}
    check(model, parallel.run(fd_kernel, N, batched, m=m, cholesky=cholesky, flags=flags),
          _NAMES, q, qd, tau)
    return out[0] if single else out
