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
Isobe & Imaizumi's parallel solution scheme of inverse dynamics (their eqs. 1-14).

The nodal forces ``{P}``, updated by increments (eqs. 13-14), become joint torques through
``{tau} = [L][T]{P}`` (eqs. 2-11), summed from the tip inwards without forming the matrices.
"""

from numba import njit
import numpy as np

from .._jit import JIT
from ..model import PRISMATIC


@njit(**JIT)
def joint_torques(x, acc, ud, axes, mass, gravity, joint_node, jtype):
    """
    Joint torques from nodal forces, step by step, with {P} updated by increments.

    At each step the nodal forces grow by ``{dp_k} = m_k {du''_k}`` (eqs. 13-14); the torque of
    joint ``i`` is then eq. (1) summed over the nodes outboard of it: the moments of their forces
    about the (deformed) joint, ``sum (x_k - x_J) x F_k``, projected on the (deformed) joint axis.
    Summed from the tip inwards, that is ``[L][T]{P}`` without forming the matrices.
    """
    T, nn = x.shape[0], x.shape[1]
    n = joint_node.shape[0]
    tau = np.zeros((T, n))
    forces = np.zeros((T, nn, 3))
    F = np.zeros((nn, 3))
    for k in range(nn):
        for j in range(3):
            F[k, j] = mass[k] * (acc[0, k, j] - gravity[j])
    Fsum = np.zeros(3)
    Msum = np.zeros(3)
    for s in range(T):
        if s > 0:
            for k in range(nn):
                for j in range(3):
                    F[k, j] += mass[k] * (acc[s, k, j] - acc[s - 1, k, j])     # eq. 14
        forces[s] = F
        Fsum[:] = 0.0
        Msum[:] = 0.0
        k = nn - 1
        for i in range(n - 1, -1, -1):
            J = joint_node[i]
            while k > J:                 # add the nodes outboard of joint i not yet summed
                f0, f1, f2 = F[k, 0], F[k, 1], F[k, 2]
                Fsum[0] += f0
                Fsum[1] += f1
                Fsum[2] += f2
                Msum[0] += x[s, k, 1] * f2 - x[s, k, 2] * f1
                Msum[1] += x[s, k, 2] * f0 - x[s, k, 0] * f2
                Msum[2] += x[s, k, 0] * f1 - x[s, k, 1] * f0
                k -= 1
            # joint axis turned by the small rotation of its node
            a0, a1, a2 = axes[s, i, 0], axes[s, i, 1], axes[s, i, 2]
            r0, r1, r2 = ud[s, J, 3], ud[s, J, 4], ud[s, J, 5]
            b0 = a0 + r1 * a2 - r2 * a1
            b1 = a1 + r2 * a0 - r0 * a2
            b2 = a2 + r0 * a1 - r1 * a0
            norm = np.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
            b0, b1, b2 = b0 / norm, b1 / norm, b2 / norm
            if jtype[i] == PRISMATIC:
                tau[s, i] = b0 * Fsum[0] + b1 * Fsum[1] + b2 * Fsum[2]
            else:
                p0, p1, p2 = x[s, J, 0], x[s, J, 1], x[s, J, 2]
                m0 = Msum[0] - (p1 * Fsum[2] - p2 * Fsum[1])
                m1 = Msum[1] - (p2 * Fsum[0] - p0 * Fsum[2])
                m2 = Msum[2] - (p0 * Fsum[1] - p1 * Fsum[0])
                tau[s, i] = b0 * m0 + b1 * m1 + b2 * m2
    return tau, forces


def section_forces(nodes, forces, Q, element_nodes):
    """
    Axial (tension positive) and shear forces of each element, from the outboard nodal forces.

    The force the inboard part passes to the outboard part through an element is the sum of the
    nodal forces beyond it; this holds for rigid and flexible links alike.
    """
    outboard = np.cumsum(forces[:, ::-1], axis=1)[:, ::-1]     # sum over nodes h >= k
    a, b = element_nodes[:, 0], element_nodes[:, 1]
    S = outboard[:, b]                                          # (T, E, 3)
    chord = nodes[:, b] - nodes[:, a]
    chord /= np.linalg.norm(chord, axis=2, keepdims=True)
    axial = -np.einsum('tej,tej->te', chord, S)
    shear = np.einsum('tejc,tej->tec', Q[:, :, :, 1:3], S)
    return axial, shear


def reached_angles(arm, q, xm, nodes, axes):
    """Target joint positions plus the change of chord rotation across each revolute joint."""
    reached = q.copy()
    prev = np.zeros((q.shape[0], 3))
    for i in range(arm.n):
        a, b = arm.joint_node[i], arm.tip_node[i]
        if a == b:
            theta = prev
        else:
            c0 = xm[:, b] - xm[:, a]
            c1 = nodes[:, b] - nodes[:, a]
            cross = np.cross(c0, c1)
            sin = np.linalg.norm(cross, axis=1)
            angle = np.arctan2(sin, np.einsum('tj,tj->t', c0, c1))
            with np.errstate(invalid='ignore', divide='ignore'):
                theta = np.where(sin[:, None] > 0, cross * (angle / sin)[:, None], 0.0)
        if arm.model.joint_type[i] != PRISMATIC:
            reached[:, i] += np.einsum('tj,tj->t', axes[:, i], theta - prev)
        prev = theta
    return reached


def deformed_axes(axes, ud, joint_node):
    """Joint axes (n, 3) turned by the small rotation of their nodes, unit length."""
    turned = axes + np.cross(ud[joint_node, 3:6], axes)
    return turned / np.linalg.norm(turned, axis=1, keepdims=True)
