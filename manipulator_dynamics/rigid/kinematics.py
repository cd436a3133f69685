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
The model as one compiled value, and the kinematics every kernel shares.

Conventions (used by every kernel): body ``i``'s pose in its parent frame is ``R[i], p[i]``
(rotation from body to parent frame, position of the body origin in the parent frame).  Spatial
vectors are written out as pairs of 3-vectors, angular first: motion ``(w, v)`` with ``v`` the
velocity of the frame origin, force ``(n, f)`` with ``n`` the moment about the frame origin.  A 6x6
spatial inertia about a frame origin is ``[[J, skew(MS)], [skew(MS).T, M*1]]``.

Every kernel takes the robot as one :class:`KernelModel` (``kernel_model(model)``, built once per
:class:`~manipulator_dynamics.Model`): a numba structure whose fields are the model's arrays under
the model's names (``m.parent``, ``m.axis[i]``, ``m.inertial[i]``, ...), read-only.  Kernels take
batches ``(N, n)``; an input with one row is broadcast over the batch (``batch_row``).
"""

from numba import njit, types
from numba.core import cgutils
from numba.experimental import structref
from numba.extending import intrinsic
from numba.np.numpy_support import carray
import numpy as np

from .._jit import INLINE
from ..model import PRISMATIC

#: The fields of a kernel model: the Model's arrays the kernels read, with their numba types.
FIELDS = (
    ('parent', types.Array(types.int64, 1, 'C', readonly=True)),
    ('joint_type', types.Array(types.int64, 1, 'C', readonly=True)),
    ('R_parent_joint', types.Array(types.float64, 3, 'C', readonly=True)),
    ('p_parent_joint', types.Array(types.float64, 2, 'C', readonly=True)),
    ('axis', types.Array(types.float64, 2, 'C', readonly=True)),
    ('inertial', types.Array(types.float64, 2, 'C', readonly=True)),
    ('armature', types.Array(types.float64, 1, 'C', readonly=True)),
    ('viscous', types.Array(types.float64, 1, 'C', readonly=True)),
    ('coulomb', types.Array(types.float64, 1, 'C', readonly=True)),
    ('friction_offset', types.Array(types.float64, 1, 'C', readonly=True)),
    ('coulomb_velocity', types.Array(types.float64, 1, 'C', readonly=True)),
    ('gravity', types.Array(types.float64, 1, 'C', readonly=True)),
    ('coupling', types.Array(types.float64, 2, 'C', readonly=True)),
    ('coupled_armature', types.Array(types.float64, 1, 'C', readonly=True)),
    ('coupled_viscous', types.Array(types.float64, 1, 'C', readonly=True)),
    ('coupled_coulomb', types.Array(types.float64, 1, 'C', readonly=True)),
    ('coupled_velocity', types.Array(types.float64, 1, 'C', readonly=True)),
)

#: Kernel flags: which joint-level terms to add (OFFSET: the regressor's column of ``Fo``).
ARMATURE = 1
FRICTION = 2
OFFSET = 4


@njit(**INLINE)
def coulomb_law(rate, vs):
    """Return the Coulomb law's shape ``s(qd)``: ``sign(qd)``, or ``tanh(qd / vs)`` if vs > 0."""
    return np.tanh(rate / vs) if vs > 0.0 else np.sign(rate)


def coulomb_shape_of(rate, vs):
    """Return :func:`coulomb_law` of an array of rates, in numpy (outside the kernels)."""
    return np.tanh(rate / vs) if vs > 0 else np.sign(rate)


@structref.register
class KernelModelType(types.StructRef):
    """
    The numba type of :class:`KernelModel`: numba's, not a user's.

    :meta private:
    """

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class KernelModel(structref.StructRefProxy):
    """
    A Model's arrays as one compiled value: what every kernel takes first.

    On the Python side it also keeps the output shapes of a single state, ``vector_shape``
    ``(n,)`` and ``matrix_shape`` ``(n, n)``, so that a control-loop call builds no tuple, and its
    ``address`` for the single-state entry points (:func:`model_at`).
    """

    def private(self, index):
        """
        Return the ``index``-th thread's own copy of this model (0: this one), made once.

        The compiled loops count references to the model and its arrays as they go, atomically;
        two threads counting on the same counters pass their cache line back and forth, and a
        batch of forward dynamics on two threads took as long as on one.  A copy per thread (its
        own arrays) has counters of its own.
        """
        if index == 0:
            return self
        copies = self.__dict__.setdefault('_copies', {})
        found = copies.get(index)
        if found is None:
            arrays = [a.copy() for a in self.arrays]
            for a in arrays:
                a.flags.writeable = False
            found = copies[index] = _new_kernel_model(*arrays)
        return found


structref.define_boxing(KernelModelType, KernelModel)

#: The one type of every kernel model (the fields' types are fixed, so compiled code is shared).
KERNEL_MODEL = KernelModelType(FIELDS)


@njit(cache=True)
def _new_kernel_model(parent, joint_type, R_parent_joint, p_parent_joint, axis, inertial,
                      armature, viscous, coulomb, friction_offset, coulomb_velocity, gravity,
                      coupling, coupled_armature, coupled_viscous, coupled_coulomb,
                      coupled_velocity):
    m = structref.new(KERNEL_MODEL)
    m.parent = parent
    m.joint_type = joint_type
    m.R_parent_joint = R_parent_joint
    m.p_parent_joint = p_parent_joint
    m.axis = axis
    m.inertial = inertial
    m.armature = armature
    m.viscous = viscous
    m.coulomb = coulomb
    m.friction_offset = friction_offset
    m.coulomb_velocity = coulomb_velocity
    m.gravity = gravity
    m.coupling = coupling
    m.coupled_armature = coupled_armature
    m.coupled_viscous = coupled_viscous
    m.coupled_coulomb = coupled_coulomb
    m.coupled_velocity = coupled_velocity
    return m


@intrinsic
def _address_of(typingctx, m):
    """Return the address of ``m``'s payload (its meminfo), as an integer."""
    def codegen(context, builder, signature, args):
        ref = cgutils.create_struct_proxy(KERNEL_MODEL)(context, builder, value=args[0])
        return builder.ptrtoint(ref.meminfo, cgutils.intp_t)
    return types.int64(KERNEL_MODEL), codegen


@njit(cache=True)
def _address(m):
    return _address_of(m)


@intrinsic
def model_at(typingctx, address):
    """
    Return the kernel model whose ``address`` :func:`kernel_model` recorded.

    Numba's entry point unboxes a structure argument by looking its meminfo up by name, a
    Python attribute lookup that costs 0.07 us more than an integer's conversion: a quarter of
    the overhead by which one call of M(q) lost to Pinocchio's.  So the single-state entry points
    take the address instead.  It is valid while the :class:`KernelModel` lives, and the Model,
    which the caller holds for the call, keeps it; the reference returned here is counted like
    any other.
    """
    def codegen(context, builder, signature, args):
        ref = cgutils.create_struct_proxy(KERNEL_MODEL)(context, builder)
        ref.meminfo = builder.inttoptr(args[0], cgutils.voidptr_t)
        value = ref._getvalue()
        context.nrt.incref(builder, KERNEL_MODEL, value)
        return value
    return KERNEL_MODEL(types.int64), codegen


def kernel_model(model):
    """Return the :class:`KernelModel` of ``model``, built on first use and kept with it."""
    try:
        return model._kernel_model
    except AttributeError:
        pass
    arrays = []
    values = _coupled_fields(model)
    for name, typ in FIELDS:
        a = np.array(values[name] if name in values else getattr(model, name),
                     dtype=np.int64 if typ.dtype == types.int64 else np.float64, order='C')
        a.flags.writeable = False
        arrays.append(a)
    m = _new_kernel_model(*arrays)
    m.arrays = arrays                                   # for private()
    m.vector_shape = (model.n,)
    m.matrix_shape = (model.n, model.n)
    m.address = _address(m)
    object.__setattr__(model, '_kernel_model', m)      # Model is frozen; this is a cache
    return m


def _coupled_fields(model):
    """
    Give the kernel fields of the coupled motors (:meth:`Model.coupled_motors`).

    Their armature moves from the diagonal (``armature``, zeroed at their joints) to the
    coupling: the kernels add ``rows^T diag(Ia) rows``.
    """
    motors = model.coupled_motors()
    return {'armature': model.diagonal_armature(), 'coupling': motors.rows,
            'coupled_armature': motors.armature, 'coupled_viscous': motors.viscous,
            'coupled_coulomb': motors.coulomb, 'coupled_velocity': motors.velocity}


@njit(**INLINE)
def coupled_product(m, x, k):
    """``rows[k] . x``: coupled motor k's velocity (or acceleration) at its joint's scale."""
    row = m.coupling[k]
    total = 0.0
    for j in range(row.shape[0]):
        total += row[j] * x[j]
    return total


@njit(**INLINE)
def coupled_friction(m, k, rate):
    """Coupled motor k's friction ``Fvm w + Fcm s(w)`` at its joint's scale."""
    return (m.coupled_viscous[k] * rate
            + m.coupled_coulomb[k] * coulomb_law(rate, m.coupled_velocity[k]))


@intrinsic
def _stack_doubles(typingctx, count):
    """Return a pointer to ``count`` float64 in the stack frame of the function compiled."""
    def codegen(context, builder, signature, args):
        return builder.alloca(context.get_value_type(types.float64), size=args[0])
    return types.CPointer(types.float64)(types.int64), codegen


#: The largest scratch array (in float64) :func:`scratch` puts on the stack: 8 KB, every array
#: of a 30-joint robot; a call's ten arrays at most stay far below the smallest thread stacks
#: (musl's 128 KB).
STACK_DOUBLES = 1024


@njit(**INLINE)
def scratch(shape, stack):
    """
    Return an uninitialised float64 array of ``shape``: ``np.empty``, or on the stack.

    With ``stack`` (the single-state entry points) an array of at most :data:`STACK_DOUBLES`
    lives in the stack frame of the compiled function this is inlined into, until it returns.
    A heap array's views count references to it atomically, one count per ``R[i]`` taken in
    the passes; a stack array has no counter.  One call of ID on the panda arm: 0.70 -> 0.47
    us in the entry point.  Only for scratch made once per call, outside any loop (each call
    of this grows the frame), and never returned.
    """
    size = 1
    for d in shape:
        size *= d
    if stack and size <= STACK_DOUBLES:
        return carray(_stack_doubles(size), shape)
    return np.empty(shape)


@njit(**INLINE)
def batch_row(s, a):
    """Row ``s`` of a batch, or its only row when it has one (broadcast)."""
    return a[s] if a.shape[0] > 1 else a[0]


@njit(**INLINE)
def vector_ok(n, a):
    """Tell whether the 1-D ``a`` has length ``n`` and finite elements."""
    if a.shape[0] != n:
        return False
    for i in range(n):
        if not np.isfinite(a[i]):
            return False
    return True


@njit(**INLINE)
def vectors_ok(n, a, b, c):
    """
    Tell whether the 1-D ``a, b, c`` all have length ``n`` and finite elements.

    One pass over the three, not :func:`vector_ok` three times: with three loops one call of ID
    on the panda arm measured 0.94-0.95x Pinocchio against 0.85-0.87x (two paired runs).
    """
    if a.shape[0] != n or b.shape[0] != n or c.shape[0] != n:
        return False
    for i in range(n):
        if not (np.isfinite(a[i]) and np.isfinite(b[i]) and np.isfinite(c[i])):
            return False
    return True


@njit(**INLINE)
def all_finite(a):
    """Tell whether every element of the 2-D array ``a`` is finite."""
    for s in range(a.shape[0]):
        for i in range(a.shape[1]):
            if not np.isfinite(a[s, i]):
                return False
    return True


@njit(**INLINE)
def joint_poses(m, q, R, p):
    """
    Fill ``R (n,3,3)`` and ``p (n,3)``: every body's pose in its parent frame at ``q``.

    ``R = R_parent_joint @ Rj(q)``.  A revolute joint about a coordinate axis (+x, +y or +z:
    most URDFs' joints) mixes two columns of ``R_parent_joint`` by ``cos q, sin q``, as
    Pinocchio's RevoluteX/Y/Z do; any other axis takes Rodrigues' formula and a 3x3 product.
    Both give the same numbers; the first is 12 products a joint instead of 39 (one call of M on
    the panda arm 0.57 -> 0.53 us).
    """
    T = m.R_parent_joint
    for i in range(q.shape[0]):
        ax, ay, az = m.axis[i, 0], m.axis[i, 1], m.axis[i, 2]
        for r in range(3):
            p[i, r] = m.p_parent_joint[i, r]
        if m.joint_type[i] == PRISMATIC:
            for r in range(3):
                R[i, r, 0] = T[i, r, 0]
                R[i, r, 1] = T[i, r, 1]
                R[i, r, 2] = T[i, r, 2]
                p[i, r] += q[i] * (T[i, r, 0] * ax + T[i, r, 1] * ay + T[i, r, 2] * az)
            continue
        c = np.cos(q[i])
        s = np.sin(q[i])
        if ax == 0.0 and ay == 0.0 and az == 1.0:
            for r in range(3):
                R[i, r, 0] = c * T[i, r, 0] + s * T[i, r, 1]
                R[i, r, 1] = c * T[i, r, 1] - s * T[i, r, 0]
                R[i, r, 2] = T[i, r, 2]
        elif ax == 0.0 and ay == 1.0 and az == 0.0:
            for r in range(3):
                R[i, r, 0] = c * T[i, r, 0] - s * T[i, r, 2]
                R[i, r, 1] = T[i, r, 1]
                R[i, r, 2] = c * T[i, r, 2] + s * T[i, r, 0]
        elif ax == 1.0 and ay == 0.0 and az == 0.0:
            for r in range(3):
                R[i, r, 0] = T[i, r, 0]
                R[i, r, 1] = c * T[i, r, 1] + s * T[i, r, 2]
                R[i, r, 2] = c * T[i, r, 2] - s * T[i, r, 1]
        else:
            t = 1.0 - c
            # Rodrigues: rotation about the unit axis by q, then R = R_parent_joint @ Rj
            j00 = c + t * ax * ax
            j01 = t * ax * ay - s * az
            j02 = t * ax * az + s * ay
            j10 = t * ax * ay + s * az
            j11 = c + t * ay * ay
            j12 = t * ay * az - s * ax
            j20 = t * ax * az - s * ay
            j21 = t * ay * az + s * ax
            j22 = c + t * az * az
            for r in range(3):
                a0, a1, a2 = T[i, r, 0], T[i, r, 1], T[i, r, 2]
                R[i, r, 0] = a0 * j00 + a1 * j10 + a2 * j20
                R[i, r, 1] = a0 * j01 + a1 * j11 + a2 * j21
                R[i, r, 2] = a0 * j02 + a1 * j12 + a2 * j22


@njit(**INLINE)
def world_poses(m, R, p, R0, p0):
    """Fill ``R0 (n,3,3)``, ``p0 (n,3)``: every body's pose in the base frame, from ``R, p``."""
    for i in range(m.parent.shape[0]):
        a = m.parent[i]
        for r in range(3):
            if a < 0:
                for c in range(3):
                    R0[i, r, c] = R[i, r, c]
                p0[i, r] = p[i, r]
            else:
                for c in range(3):
                    R0[i, r, c] = (R0[a, r, 0] * R[i, 0, c] + R0[a, r, 1] * R[i, 1, c]
                                   + R0[a, r, 2] * R[i, 2, c])
                p0[i, r] = (p0[a, r] + R0[a, r, 0] * p[i, 0] + R0[a, r, 1] * p[i, 1]
                            + R0[a, r, 2] * p[i, 2])


@njit(**INLINE)
def motion_pass(m, gravity, qd, qdd, R, p, w, dw, dv, v):
    """
    Run the outward pass: velocities and accelerations of every body, in its own frame.

    Fills ``w`` (angular velocity), ``dw`` (angular acceleration), ``dv`` (linear acceleration of
    the frame origin), all ``(n, 3)``, and, when ``v`` has n rows (pass ``(0, 3)`` to skip it),
    ``v`` the velocity of the frame origin.  ``gravity`` enters as a base acceleration
    ``-gravity`` (so ``dv`` is what a body-fixed accelerometer at the origin would read, sign
    reversed); pass zeros for the kinematic accelerations.  Poses ``R, p`` from
    :func:`joint_poses`.  Newton-Euler's forward recursion (Khalil & Dombre, section 9.5.2).
    """
    velocity = v.shape[0] > 0
    for i in range(m.parent.shape[0]):
        a = m.parent[i]
        u0, u1, u2 = 0.0, 0.0, 0.0
        if a < 0:
            w0, w1, w2 = 0.0, 0.0, 0.0
            e0, e1, e2 = 0.0, 0.0, 0.0
            t0, t1, t2 = -gravity[0], -gravity[1], -gravity[2]
        else:
            w0, w1, w2 = w[a, 0], w[a, 1], w[a, 2]
            e0, e1, e2 = dw[a, 0], dw[a, 1], dw[a, 2]
            p0, p1, p2 = p[i, 0], p[i, 1], p[i, 2]
            # velocity of body i's origin, parent frame: v + w x p
            c0, c1, c2 = w1 * p2 - w2 * p1, w2 * p0 - w0 * p2, w0 * p1 - w1 * p0
            if velocity:
                u0, u1, u2 = v[a, 0] + c0, v[a, 1] + c1, v[a, 2] + c2
            # acceleration of body i's origin, parent frame: dv + dw x p + w x (w x p)
            t0 = dv[a, 0] + e1 * p2 - e2 * p1 + w1 * c2 - w2 * c1
            t1 = dv[a, 1] + e2 * p0 - e0 * p2 + w2 * c0 - w0 * c2
            t2 = dv[a, 2] + e0 * p1 - e1 * p0 + w0 * c1 - w1 * c0
        Ri = R[i]
        # into body i's frame: x_i = R^T x_parent
        W0 = Ri[0, 0] * w0 + Ri[1, 0] * w1 + Ri[2, 0] * w2
        W1 = Ri[0, 1] * w0 + Ri[1, 1] * w1 + Ri[2, 1] * w2
        W2 = Ri[0, 2] * w0 + Ri[1, 2] * w1 + Ri[2, 2] * w2
        E0 = Ri[0, 0] * e0 + Ri[1, 0] * e1 + Ri[2, 0] * e2
        E1 = Ri[0, 1] * e0 + Ri[1, 1] * e1 + Ri[2, 1] * e2
        E2 = Ri[0, 2] * e0 + Ri[1, 2] * e1 + Ri[2, 2] * e2
        V0 = Ri[0, 0] * t0 + Ri[1, 0] * t1 + Ri[2, 0] * t2
        V1 = Ri[0, 1] * t0 + Ri[1, 1] * t1 + Ri[2, 1] * t2
        V2 = Ri[0, 2] * t0 + Ri[1, 2] * t1 + Ri[2, 2] * t2
        ax, ay, az = m.axis[i, 0], m.axis[i, 1], m.axis[i, 2]
        rate, acc = qd[i], qdd[i]
        if velocity:
            U0 = Ri[0, 0] * u0 + Ri[1, 0] * u1 + Ri[2, 0] * u2
            U1 = Ri[0, 1] * u0 + Ri[1, 1] * u1 + Ri[2, 1] * u2
            U2 = Ri[0, 2] * u0 + Ri[1, 2] * u1 + Ri[2, 2] * u2
            if m.joint_type[i] == PRISMATIC:
                U0, U1, U2 = U0 + ax * rate, U1 + ay * rate, U2 + az * rate
            v[i, 0], v[i, 1], v[i, 2] = U0, U1, U2
        if m.joint_type[i] == PRISMATIC:
            # dv += 2 w x (a qd) + a qdd
            V0 += 2.0 * rate * (W1 * az - W2 * ay) + ax * acc
            V1 += 2.0 * rate * (W2 * ax - W0 * az) + ay * acc
            V2 += 2.0 * rate * (W0 * ay - W1 * ax) + az * acc
        else:
            # dw += w x (a qd) + a qdd, then w += a qd
            E0 += rate * (W1 * az - W2 * ay) + ax * acc
            E1 += rate * (W2 * ax - W0 * az) + ay * acc
            E2 += rate * (W0 * ay - W1 * ax) + az * acc
            W0 += ax * rate
            W1 += ay * rate
            W2 += az * rate
        w[i, 0], w[i, 1], w[i, 2] = W0, W1, W2
        dw[i, 0], dw[i, 1], dw[i, 2] = E0, E1, E2
        dv[i, 0], dv[i, 1], dv[i, 2] = V0, V1, V2


@njit(**INLINE)
def motion_workspace(n):
    """Scratch of :func:`body_motion`: ``R, p``, ``R0, p0``, then ``w, dw, dv, v`` in one array."""
    return (np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3)),
            np.empty((4, n, 3)))


@njit(**INLINE)
def body_motion(m, gravity, q, qd, qdd, work):
    """
    Fill ``work`` (:func:`motion_workspace`) with the whole motion of every body at one state.

    Poses in the parent (``R, p``) and in the base (``R0, p0``), then the outward pass in body
    frames: ``w, dw, dv`` and the origin velocity ``v`` (see :func:`motion_pass`).
    """
    R, p, R0, p0, motion = work
    joint_poses(m, q, R, p)
    world_poses(m, R, p, R0, p0)
    motion_pass(m, gravity, qd, qdd, R, p, motion[0], motion[1], motion[2], motion[3])


@njit(**INLINE)
def axis_dot(m, i, x):
    """
    Project a spatial force or motion ``x (6,)`` on joint i's axis: ``S_i . x``.

    The axis meets the angular part for a revolute joint, the linear part for a prismatic one.
    """
    o = 3 if m.joint_type[i] == PRISMATIC else 0
    return m.axis[i, 0] * x[o] + m.axis[i, 1] * x[o + 1] + m.axis[i, 2] * x[o + 2]


@njit(**INLINE)
def force_to_parent(R, p, n, f, n_out, f_out):
    """Add to ``(n_out, f_out)`` a child frame's force ``(n, f)``, moved to the parent origin."""
    f0 = R[0, 0] * f[0] + R[0, 1] * f[1] + R[0, 2] * f[2]
    f1 = R[1, 0] * f[0] + R[1, 1] * f[1] + R[1, 2] * f[2]
    f2 = R[2, 0] * f[0] + R[2, 1] * f[1] + R[2, 2] * f[2]
    f_out[0] += f0
    f_out[1] += f1
    f_out[2] += f2
    n_out[0] += R[0, 0] * n[0] + R[0, 1] * n[1] + R[0, 2] * n[2] + p[1] * f2 - p[2] * f1
    n_out[1] += R[1, 0] * n[0] + R[1, 1] * n[1] + R[1, 2] * n[2] + p[2] * f0 - p[0] * f2
    n_out[2] += R[2, 0] * n[0] + R[2, 1] * n[1] + R[2, 2] * n[2] + p[0] * f1 - p[1] * f0


@njit(**INLINE)
def rotate_symmetric(R, a00, a01, a02, a11, a12, a22):
    """Return the upper triangle of ``R S R^T`` for a symmetric S, as 6 numbers."""
    t00 = R[0, 0] * a00 + R[0, 1] * a01 + R[0, 2] * a02
    t01 = R[0, 0] * a01 + R[0, 1] * a11 + R[0, 2] * a12
    t02 = R[0, 0] * a02 + R[0, 1] * a12 + R[0, 2] * a22
    t10 = R[1, 0] * a00 + R[1, 1] * a01 + R[1, 2] * a02
    t11 = R[1, 0] * a01 + R[1, 1] * a11 + R[1, 2] * a12
    t12 = R[1, 0] * a02 + R[1, 1] * a12 + R[1, 2] * a22
    t20 = R[2, 0] * a00 + R[2, 1] * a01 + R[2, 2] * a02
    t21 = R[2, 0] * a01 + R[2, 1] * a11 + R[2, 2] * a12
    t22 = R[2, 0] * a02 + R[2, 1] * a12 + R[2, 2] * a22
    return (t00 * R[0, 0] + t01 * R[0, 1] + t02 * R[0, 2],
            t00 * R[1, 0] + t01 * R[1, 1] + t02 * R[1, 2],
            t00 * R[2, 0] + t01 * R[2, 1] + t02 * R[2, 2],
            t10 * R[1, 0] + t11 * R[1, 1] + t12 * R[1, 2],
            t10 * R[2, 0] + t11 * R[2, 1] + t12 * R[2, 2],
            t20 * R[2, 0] + t21 * R[2, 1] + t22 * R[2, 2])


@njit(**INLINE)
def add_placed(R, P0, P1, P2, c, d):
    """
    Add to ``d`` the ten parameters ``c`` of a body placed at ``R, P`` in ``d``'s frame.

    Khalil's (A8.1): ``J += R J R^T + 2 (P.S) 1 - P S^T - S P^T + M (P.P 1 - P P^T)``,
    ``MS += S + P M``, ``M += M`` with ``S = R MS``; written out (no BLAS call per body).
    """
    Mj = c[9]
    r00, r01, r02, r11, r12, r22 = rotate_symmetric(R, c[0], c[1], c[2], c[3], c[4], c[5])
    S0 = R[0, 0] * c[6] + R[0, 1] * c[7] + R[0, 2] * c[8]
    S1 = R[1, 0] * c[6] + R[1, 1] * c[7] + R[1, 2] * c[8]
    S2 = R[2, 0] * c[6] + R[2, 1] * c[7] + R[2, 2] * c[8]
    PS = P0 * S0 + P1 * S1 + P2 * S2
    PP = P0 * P0 + P1 * P1 + P2 * P2
    d[0] += r00 + 2.0 * PS - 2.0 * P0 * S0 + Mj * (PP - P0 * P0)
    d[1] += r01 - P0 * S1 - S0 * P1 - Mj * P0 * P1
    d[2] += r02 - P0 * S2 - S0 * P2 - Mj * P0 * P2
    d[3] += r11 + 2.0 * PS - 2.0 * P1 * S1 + Mj * (PP - P1 * P1)
    d[4] += r12 - P1 * S2 - S1 * P2 - Mj * P1 * P2
    d[5] += r22 + 2.0 * PS - 2.0 * P2 * S2 + Mj * (PP - P2 * P2)
    d[6] += S0 + P0 * Mj
    d[7] += S1 + P1 * Mj
    d[8] += S2 + P2 * Mj
    d[9] += Mj
