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
Inverse dynamics (Newton-Euler), checked by its own structure: no oracle needed.

The equations of motion are ``tau = M(q) qdd + h(q, qd)`` [+ friction] ``- J^T f_ext``: linear in
qdd with M symmetric, h = ID(q, qd, 0), g = ID(q, 0, 0); a wrench does the virtual work of the
joint efforts it balances.  Pinocchio's numbers are compared in test_pinocchio.py.
"""

import math

from helpers import assert_rel, random_state
import manipulator_dynamics as md
import numpy as np
import pytest


def test_linear_in_accelerations(rigid):
    """``ID(q, qd, a + b) - ID(q, qd, a) = M(q) b``, any b."""
    rng = np.random.default_rng(1)
    q, qd, a = random_state(rigid, rng)
    b = rng.uniform(-3, 3, rigid.n)
    M = md.inertia_matrix(rigid, q)
    step = md.inverse_dynamics(rigid, q, qd, a + b) - md.inverse_dynamics(rigid, q, qd, a)
    assert_rel(step, M @ b, 1e-11, 'ID(a + b) - ID(a)')


def test_bias_and_gravity_are_inverse_dynamics(rigid):
    rng = np.random.default_rng(2)
    q, qd, _ = random_state(rigid, rng)
    zero = np.zeros(rigid.n)
    np.testing.assert_array_equal(md.bias_forces(rigid, q, qd),
                                  md.inverse_dynamics(rigid, q, qd, zero))
    np.testing.assert_array_equal(md.gravity_torques(rigid, q),
                                  md.inverse_dynamics(rigid, q, zero, zero))


def test_velocity_terms_are_quadratic(rigid):
    """With gravity off, ``h(q, s qd) = s^2 h(q, qd)``: Coriolis and centrifugal terms."""
    weightless = md.Model(**{**{k: getattr(rigid, k) for k in rigid.__dataclass_fields__
                                if rigid.__dataclass_fields__[k].init},
                             'gravity': np.zeros(3)})
    rng = np.random.default_rng(3)
    q, qd, _ = random_state(rigid, rng)
    h = md.bias_forces(weightless, q, qd)
    assert_rel(md.bias_forces(weightless, q, 3.0 * qd), 9.0 * h, 1e-11, 'h(3 qd)')


def test_friction_and_armature_are_joint_terms(rigid):
    rng = np.random.default_rng(4)
    q, qd, qdd = random_state(rigid, rng)
    base = md.inverse_dynamics(rigid, q, qd, qdd, armature=False)
    np.testing.assert_allclose(md.inverse_dynamics(rigid, q, qd, qdd) - base,
                               rigid.armature * qdd, rtol=0, atol=1e-12)
    vs = rigid.coulomb_velocity
    shape = [math.tanh(v / s) if s > 0 else np.sign(v) for v, s in zip(qd, vs)]
    np.testing.assert_allclose(
        md.inverse_dynamics(rigid, q, qd, qdd, armature=False, friction=True) - base,
        rigid.viscous * qd + rigid.coulomb * np.array(shape) + rigid.friction_offset, rtol=0,
        atol=1e-12)


def test_external_wrench_by_virtual_work(rigid):
    """
    A wrench on a link changes the efforts by ``-J^T w``: checked through the power it absorbs.

    For a velocity ``qd`` the link's spatial velocity is ``J qd``, so ``qd . (tau(0) - tau(w))``
    is the power of the wrench, ``w . J qd``; ``J qd`` comes from finite differences of the
    link's pose, independent of Newton-Euler.
    """
    from manipulator_dynamics.identification.closures import world_poses
    rng = np.random.default_rng(5)
    q, qd, qdd = random_state(rigid, rng)
    link = max(rigid.frames, key=lambda name: (rigid.frames[name].body, name))
    frame = rigid.frames[link]
    wrench = rng.uniform(-5, 5, 6)           # fx fy fz mx my mz, link frame, about its origin
    absorbed = qd @ (md.inverse_dynamics(rigid, q, qd, qdd)
                     - md.inverse_dynamics(rigid, q, qd, qdd, f_ext={link: wrench}))

    def link_pose(q):
        R0, p0 = world_poses(rigid, q)
        return R0[frame.body] @ frame.R, p0[frame.body] + R0[frame.body] @ frame.p

    h = 1e-6
    (Ra, pa), (Rb, pb) = link_pose(q - h * qd), link_pose(q + h * qd)
    R, _ = link_pose(q)
    v = R.T @ (pb - pa) / (2 * h)                                # origin velocity, link frame
    W = R.T @ (Rb - Ra) / (2 * h)                                # R^T dR/dt = skew(w)
    w = np.array([W[2, 1], W[0, 2], W[1, 0]])
    power = wrench[:3] @ v + wrench[3:] @ w
    assert abs(absorbed - power) <= 1e-6 * max(1.0, abs(power))


@pytest.mark.parametrize('shape', ['batch', 'broadcast'])
def test_batch_equals_single(rigid, shape):
    rng = np.random.default_rng(6)
    q, qd, qdd = random_state(rigid, rng, N=5)
    if shape == 'broadcast':
        qd = qd[0]
    tau = md.inverse_dynamics(rigid, q, qd, qdd, friction=True)
    for s in range(len(q)):
        single = md.inverse_dynamics(rigid, q[s], qd if qd.ndim == 1 else qd[s], qdd[s],
                                     friction=True)
        np.testing.assert_array_equal(tau[s], single)


def test_any_array_layout_or_array_like(rigid):
    """Strided views, read-only arrays, lists and objects with __array__ all give the same."""
    rng = np.random.default_rng(7)
    q, qd, qdd = random_state(rigid, rng)
    tau = md.inverse_dynamics(rigid, q, qd, qdd)
    strided = np.zeros((rigid.n, 2))
    strided[:, 1] = q
    frozen = qd.copy()
    frozen.flags.writeable = False

    class ArrayLike:
        """Has an array's dtype and ndim but is not one: the compiled entry point refuses it."""

        dtype, ndim = np.dtype(np.float64), 1

        def __array__(self, dtype=None, copy=None):
            return qdd

    for args in ((strided[:, 1], qd, qdd), (q, frozen, qdd), (list(q), qd, qdd),
                 (q, qd, ArrayLike())):
        np.testing.assert_array_equal(md.inverse_dynamics(rigid, *args), tau)
