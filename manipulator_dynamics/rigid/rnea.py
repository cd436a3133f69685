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
Inverse dynamics by the recursive Newton-Euler algorithm (Luh, Walker & Paul; Khalil ch. 9).

Velocities and accelerations go out from the base, body wrenches come back; each body's wrench is
written with Khalil's standard parameters about its frame origin::

    F = M dv + dw x MS + w x (w x MS)          (force)
    N = J dw + w x (J w) + MS x dv             (moment about the frame origin)

Gravity enters as a base acceleration ``-g``.  Rotor inertia and joint friction are joint-level
terms ``Ia qdd + Fv qd + Fc s(qd) + Fo``.
"""

from numba import njit
import numpy as np

from .kinematics import (all_finite, ARMATURE, batch_row, coulomb_law, coupled_friction,
                         coupled_product, force_to_parent, FRICTION, joint_poses, kernel_model,
                         model_at, motion_pass, scratch, vectors_ok)
from .status import BAD_VECTOR, check, NON_FINITE, OK
from .. import _parallel as parallel
from .._inputs import _F64, external_wrenches, states, zeros
from .._jit import INLINE, INT, JIT, ONE_STATE, OUT_VECTOR, Signature, VECTOR
from ..model import PRISMATIC


@njit(**INLINE)
def rnea_workspace(n, stack=False):
    """
    Scratch of :func:`rnea_sample`: poses ``R, p``, then planes ``w, dw, dv, f, mom`` (n, 3).

    A sixth plane is left to the caller (forward dynamics keeps its zero accelerations there).
    ``stack``: on the stack of a single-state entry point (:func:`.kinematics.scratch`).
    """
    return scratch((n, 3, 3), stack), scratch((n, 3), stack), scratch((6, n, 3), stack)


@njit(**INLINE)
def joint_friction(m, i, rate):
    """Friction effort of joint ``i`` at velocity ``rate``: ``Fv qd + Fc s(qd) + Fo``."""
    return (m.viscous[i] * rate + m.coulomb[i] * coulomb_law(rate, m.coulomb_velocity[i])
            + m.friction_offset[i])


@njit(**INLINE)
def body_wrenches(m, qs, qds, qdds, fext, s, work):
    """
    Newton-Euler's outward pass for one state: the wrench each body needs for its own motion.

    Fills the planes ``f, mom`` of ``work`` (body frames, less the external wrench); poses
    ``R, p`` of ``work`` must be filled.  ``fext (Nf, n, 6)`` holds body-frame wrenches, row ``s``
    (or the only row) is used when Nf > 0.
    """
    R, p, vectors = work
    w, dw, dv, f, mom = vectors[0], vectors[1], vectors[2], vectors[3], vectors[4]
    n = m.parent.shape[0]
    motion_pass(m, m.gravity, qds, qdds, R, p, w, dw, dv, vectors[0, :0])
    for i in range(n):
        W0, W1, W2 = w[i, 0], w[i, 1], w[i, 2]
        E0, E1, E2 = dw[i, 0], dw[i, 1], dw[i, 2]
        V0, V1, V2 = dv[i, 0], dv[i, 1], dv[i, 2]
        k = m.inertial[i]
        XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = (k[0], k[1], k[2], k[3], k[4], k[5], k[6],
                                                 k[7], k[8], k[9])
        # F = M dv + dw x MS + w x (w x MS)
        c0, c1, c2 = W1 * MZ - W2 * MY, W2 * MX - W0 * MZ, W0 * MY - W1 * MX
        f[i, 0] = M * V0 + E1 * MZ - E2 * MY + W1 * c2 - W2 * c1
        f[i, 1] = M * V1 + E2 * MX - E0 * MZ + W2 * c0 - W0 * c2
        f[i, 2] = M * V2 + E0 * MY - E1 * MX + W0 * c1 - W1 * c0
        # N = J dw + w x (J w) + MS x dv
        h0 = XX * W0 + XY * W1 + XZ * W2
        h1 = XY * W0 + YY * W1 + YZ * W2
        h2 = XZ * W0 + YZ * W1 + ZZ * W2
        mom[i, 0] = (XX * E0 + XY * E1 + XZ * E2 + W1 * h2 - W2 * h1 + MY * V2 - MZ * V1)
        mom[i, 1] = (XY * E0 + YY * E1 + YZ * E2 + W2 * h0 - W0 * h2 + MZ * V0 - MX * V2)
        mom[i, 2] = (XZ * E0 + YZ * E1 + ZZ * E2 + W0 * h1 - W1 * h0 + MX * V1 - MY * V0)
        if fext.shape[0] > 0:
            x = fext[s, i] if fext.shape[0] > 1 else fext[0, i]
            f[i, 0] -= x[0]
            f[i, 1] -= x[1]
            f[i, 2] -= x[2]
            mom[i, 0] -= x[3]
            mom[i, 1] -= x[4]
            mom[i, 2] -= x[5]


@njit(**INLINE)
def rnea_sample(m, qs, qds, qdds, fext, s, flags, work, tau):
    """
    Newton-Euler for one state: fill ``tau (n,)``; poses ``R, p`` of ``work`` must be filled.

    ``fext`` as :func:`body_wrenches`.  ``flags``: :data:`ARMATURE` adds ``Ia qdd``,
    :data:`FRICTION` ``Fv qd + Fc s(qd) + Fo`` (:func:`.coulomb_law`); the coupled motors'
    terms come with each (:func:`add_coupled`).
    """
    body_wrenches(m, qs, qds, qdds, fext, s, work)
    R, p, vectors = work
    f, mom = vectors[3], vectors[4]
    for i in range(m.parent.shape[0] - 1, -1, -1):
        src = f[i] if m.joint_type[i] == PRISMATIC else mom[i]
        t = m.axis[i, 0] * src[0] + m.axis[i, 1] * src[1] + m.axis[i, 2] * src[2]
        if flags & ARMATURE:
            t += m.armature[i] * qdds[i]
        if flags & FRICTION:
            t += joint_friction(m, i, qds[i])
        tau[i] = t
        a = m.parent[i]
        if a >= 0:
            force_to_parent(R[i], p[i], mom[i], f[i], mom[a], f[a])
    if flags & (ARMATURE | FRICTION):
        add_coupled(m, qds, qdds, flags, tau)


@njit(**INLINE)
def add_coupled(m, qds, qdds, flags, tau):
    """Add the coupled motors' ``c (Ia c . qdd + friction(c . qd))`` to ``tau`` (per flags)."""
    for k in range(m.coupling.shape[0]):
        f = 0.0
        if flags & ARMATURE:
            f += m.coupled_armature[k] * coupled_product(m, qdds, k)
        if flags & FRICTION:
            f += coupled_friction(m, k, coupled_product(m, qds, k))
        row = m.coupling[k]
        for j in range(row.shape[0]):
            tau[j] += row[j] * f


@njit(**JIT)
def rnea_kernel(m, q, qd, qdd, fext, flags, out):
    """Fill ``out (N, n)`` with joint efforts; return a status (:mod:`.status`)."""
    if not (all_finite(q) and all_finite(qd) and all_finite(qdd)):
        return NON_FINITE
    work = rnea_workspace(m.parent.shape[0])
    for s in range(out.shape[0]):
        joint_poses(m, batch_row(s, q), work[0], work[1])
        rnea_sample(m, batch_row(s, q), batch_row(s, qd), batch_row(s, qdd), fext, s, flags, work,
                    out[s])
    return OK


@njit(**ONE_STATE)
def rnea_vector(address, q, qd, qdd, flags, out):
    """One state given as vectors (the control-loop path); BAD_VECTOR for a bad length or value."""
    m = model_at(address)
    n = m.parent.shape[0]
    if not vectors_ok(n, q, qd, qdd):
        return BAD_VECTOR
    work = rnea_workspace(n, True)
    joint_poses(m, q, work[0], work[1])
    rnea_sample(m, q, qd, qdd, np.empty((0, n, 6)), 0, flags, work, out)
    return OK


_rnea_vector = Signature(rnea_vector, INT, VECTOR, VECTOR, VECTOR, INT, OUT_VECTOR)
_empty = np.empty           # one lookup less per call
_NAMES = ('q', 'qd', 'qdd')


def inverse_dynamics(model, q, qd, qdd, f_ext=None, *, armature=True, friction=False):
    """
    Joint efforts ``tau = M(q) qdd + C(q, qd) qd + g(q) [+ Fv qd + Fc s(qd) + Fo] - J^T f_ext``.

    Parameters
    ----------
    model : Model
        The robot.
    q, qd, qdd : array-like, shape (n,) or (N, n)
        Joint positions, velocities, accelerations in ``model.joint_names`` order.  A 1-D argument
        is broadcast over the batch of the 2-D ones.
    f_ext : mapping of str to array-like, optional
        External wrenches ``{link_name: [fx, fy, fz, mx, my, mz]}`` exerted on links, in the link
        frame, moment about the link origin; shape (6,) or (N, 6) each.
    armature : bool
        Include rotor inertia ``Ia qdd`` (``model.armature``, zero unless configured).
    friction : bool
        Include the joints' friction ``Fv qd + Fc s(qd) + Fo`` (:func:`.friction_torque`).

    Returns
    -------
    tau : ndarray, shape (n,) or (N, n)
        2-D exactly when some input is 2-D.

    """
    flags = (ARMATURE if armature else 0) | (FRICTION if friction else 0)
    # The control loop's path, written out as inertia_matrix's (no helper calls: they were a
    # third of one call's time): float64 vectors straight to the compiled entry point, which
    # checks their lengths and values; anything else, or a status not OK, takes the path below.
    try:
        m = model._kernel_model
        if (f_ext is None and q.dtype is _F64 and qd.dtype is _F64 and qdd.dtype is _F64
                and q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1):
            out = _empty(m.vector_shape)
            if _rnea_vector.call(m.address, q, qd, qdd, flags, out) == OK:
                return out
    except (AttributeError, TypeError):  # no kernel model yet, or not arrays: below
        pass
    m = kernel_model(model)
    (q, qd, qdd), N, single = states(model, _NAMES, q, qd, qdd)
    out = np.empty((N, model.n))
    batched = {'q': q, 'qd': qd, 'qdd': qdd,
               'fext': external_wrenches(model, f_ext, N), 'out': out}
    check(model, parallel.run(rnea_kernel, N, batched, m=m, flags=flags), _NAMES, q, qd, qdd)
    return out[0] if single else out


def bias_forces(model, q, qd, f_ext=None, *, friction=False):
    """
    Velocity and gravity terms ``h = C(q, qd) qd + g(q)`` (Pinocchio's ``nonLinearEffects``).

    Shapes as :func:`inverse_dynamics`; ``friction`` adds ``Fv qd + Fc s(qd) + Fo``.
    """
    return inverse_dynamics(model, q, qd, zeros(model.n), f_ext, friction=friction)


def gravity_torques(model, q):
    """Gravity efforts ``g(q)``: what holds the robot still.  ``q`` of shape (n,) or (N, n)."""
    z = zeros(model.n)
    return inverse_dynamics(model, q, z, z)
