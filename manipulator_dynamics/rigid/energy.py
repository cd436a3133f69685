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
Total energy and its regressor: ``H(q, qd) = h(q, qd) K``, linear in the standard parameters.

Khalil & Dombre, Appendix 5 (A5.1): the energy functions ``h`` of each link, in body frame j with
the angular velocity ``w`` and the velocity ``v`` of the frame origin, and the pose ``R0, p0`` of
the frame in the base::

    kinetic    E_j = 1/2 w^T J w + MS . (v x w) + 1/2 M v^T v      (+ 1/2 Ia qd_j^2, the rotor)
    potential  U_j = -g^T (M p0 + R0 MS)

Friction does no conservative work and has no energy function.
"""

from numba import njit
import numpy as np

from .kinematics import all_finite, batch_row, body_motion, kernel_model, motion_workspace
from .regressor import has_armature, standard_parameters
from .status import check, NON_FINITE, OK
from .. import _parallel as parallel
from .._inputs import states
from .._jit import JIT

_NAMES = ('q', 'qd')


@njit(**JIT)
def energy_kernel(m, q, qd, stride, armature, out):
    """Fill ``out (N, n*stride)`` with energy rows; columns per joint: 10 inertial [, Ia]."""
    if not (all_finite(q) and all_finite(qd)):
        return NON_FINITE
    N = out.shape[0]
    n = m.parent.shape[0]
    gravity = m.gravity
    work = motion_workspace(n)
    R0, p0, w, v = work[2], work[3], work[4][0], work[4][3]
    zero = np.zeros(n)
    for s in range(N):
        qs, qds = batch_row(s, q), batch_row(s, qd)
        body_motion(m, gravity, qs, qds, zero, work)
        h = out[s]
        for i in range(n):
            rate = qds[i]
            w0, w1, w2 = w[i, 0], w[i, 1], w[i, 2]
            v0, v1, v2 = v[i, 0], v[i, 1], v[i, 2]
            c = i * stride
            h[c + 0] = 0.5 * w0 * w0                      # XX
            h[c + 1] = w0 * w1                            # XY
            h[c + 2] = w0 * w2                            # XZ
            h[c + 3] = 0.5 * w1 * w1                      # YY
            h[c + 4] = w1 * w2                            # YZ
            h[c + 5] = 0.5 * w2 * w2                      # ZZ
            # MS: kinetic MS . (v x w), potential -(R0^T g) . MS
            for r in range(3):
                g_body = (R0[i, 0, r] * gravity[0] + R0[i, 1, r] * gravity[1]
                          + R0[i, 2, r] * gravity[2])
                h[c + 6 + r] = -g_body
            h[c + 6] += v1 * w2 - v2 * w1
            h[c + 7] += v2 * w0 - v0 * w2
            h[c + 8] += v0 * w1 - v1 * w0
            h[c + 9] = 0.5 * (v0 * v0 + v1 * v1 + v2 * v2) - (
                gravity[0] * p0[i, 0] + gravity[1] * p0[i, 1] + gravity[2] * p0[i, 2])
            if armature:
                h[c + 10] = 0.5 * rate * rate
    return OK


def energy_regressor(model, q, qd, *, armature=None):
    """
    Energy functions ``h`` with total energy ``H = h @ K``, ``K`` the standard parameters.

    Parameters
    ----------
    model : Model
        The robot.
    q, qd : array-like, shape (n,) or (N, n)
        Joint positions and velocities.
    armature : bool or None
        Add the rotor columns ``1/2 qd_j^2`` (``K`` with ``Ia``, no friction); None (default): if
        the model has rotor inertias, as :func:`~manipulator_dynamics.standard_parameters`.

    Returns
    -------
    h : ndarray, shape (p,) or (N, p)
        ``p = n * (10 [+1])``, columns in the order of ``parameter_names(model, armature=...)``.
        Potential energy is zero with every body frame at the base origin.

    """
    (q, qd), N, single = states(model, _NAMES, q, qd)
    armature = has_armature(model, armature)
    stride = 11 if armature else 10
    out = np.empty((N, model.n * stride))
    batched = {'q': q, 'qd': qd, 'out': out}
    check(model, parallel.run(energy_kernel, N, batched, m=kernel_model(model), stride=stride,
                              armature=armature), _NAMES, q, qd)
    if armature:                                # a coupled motor's 1/2 Ia (c . qd)^2
        motors = model.coupled_motors()
        for j, row in zip(motors.joints, motors.rows):
            out[:, j * stride + 10] = 0.5 * (qd @ row) ** 2
    return out[0] if single else out


def energy(model, q, qd, *, armature=True):
    """Total energy ``H = kinetic + potential`` of the robot, shape () or (N,)."""
    return energy_regressor(model, q, qd, armature=armature) @ standard_parameters(
        model, armature=armature)
