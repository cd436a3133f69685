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
def torques_at(x, F, ud, axes, joint_node, jtype, tau):
    """
    Joint torques ``tau (n,)`` of one step from the nodal forces ``F (N, 3)`` (eq. 1).

    The torque of joint ``i`` is the moment of the forces of the nodes outboard of it about the
    (deformed) joint, ``sum (x_k - x_J) x F_k``, projected on the (deformed) joint axis; a
    prismatic joint's is their sum along its axis.  Summed from the tip inwards, that is
    ``[L][T]{P}`` without forming the matrices.  ``x (N, 3)`` node positions, ``ud (N, 6)``
    deformations, ``axes (n, 3)`` the rigid joint axes, all in the base frame.
    """
    nn = x.shape[0]
    f0 = f1 = f2 = 0.0                  # sum of the nodal forces outboard
    n0 = n1 = n2 = 0.0                  # sum of their moments about the base origin
    k = nn - 1
    for i in range(joint_node.shape[0] - 1, -1, -1):
        J = joint_node[i]
        while k > J:                    # add the nodes outboard of joint i not yet summed
            g0, g1, g2 = F[k, 0], F[k, 1], F[k, 2]
            f0 += g0
            f1 += g1
            f2 += g2
            n0 += x[k, 1] * g2 - x[k, 2] * g1
            n1 += x[k, 2] * g0 - x[k, 0] * g2
            n2 += x[k, 0] * g1 - x[k, 1] * g0
            k -= 1
        # joint axis turned by the small rotation of its node
        a0, a1, a2 = axes[i, 0], axes[i, 1], axes[i, 2]
        r0, r1, r2 = ud[J, 3], ud[J, 4], ud[J, 5]
        b0 = a0 + r1 * a2 - r2 * a1
        b1 = a1 + r2 * a0 - r0 * a2
        b2 = a2 + r0 * a1 - r1 * a0
        norm = np.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
        b0, b1, b2 = b0 / norm, b1 / norm, b2 / norm
        if jtype[i] == PRISMATIC:
            tau[i] = b0 * f0 + b1 * f1 + b2 * f2
        else:
            p0, p1, p2 = x[J, 0], x[J, 1], x[J, 2]
            m0 = n0 - (p1 * f2 - p2 * f1)
            m1 = n1 - (p2 * f0 - p0 * f2)
            m2 = n2 - (p0 * f1 - p1 * f0)
            tau[i] = b0 * m0 + b1 * m1 + b2 * m2


@njit(**JIT)
def add_force_increments(mass, acc, previous, F):
    """``{F_k} += m_k ({u''_k} - {u''_k}_previous)``: the nodal forces' increment (eqs. 13-14)."""
    for k in range(F.shape[0]):
        for j in range(3):
            F[k, j] += mass[k] * (acc[k, j] - previous[k, j])


@njit(**JIT)
def joint_torques(x, acc, ud, axes, mass, gravity, joint_node, jtype):
    """
    Joint torques ``(T, n)`` and nodal forces ``(T, N, 3)``, step by step.

    The nodal forces start as ``m_k (u''_k - g)`` and grow by increments (eqs. 13-14); each step's
    torques are :func:`torques_at` of them.
    """
    T, nn = x.shape[0], x.shape[1]
    tau = np.zeros((T, joint_node.shape[0]))
    forces = np.zeros((T, nn, 3))
    F = np.zeros((nn, 3))
    for k in range(nn):
        for j in range(3):
            F[k, j] = mass[k] * (acc[0, k, j] - gravity[j])
    for s in range(T):
        if s > 0:
            add_force_increments(mass, acc[s], acc[s - 1], F)
        forces[s] = F
        torques_at(x[s], F, ud[s], axes[s], joint_node, jtype, tau[s])
    return tau, forces


@njit(**JIT)
def section_forces(nodes, forces, Q, element_nodes):
    """
    Axial (tension positive) and shear forces ``(T, E)``, ``(T, E, 2)`` of each element.

    The force the inboard part passes to the outboard part through an element is the sum of the
    nodal forces beyond it; this holds for rigid and flexible links alike.  Axial is along the
    element's deformed chord, shear along its ``y`` and ``z`` axes.
    """
    T, nn, E = nodes.shape[0], nodes.shape[1], element_nodes.shape[0]
    axial = np.empty((T, E))
    shear = np.empty((T, E, 2))
    outboard = np.empty((nn, 3))
    for s in range(T):
        outboard[nn - 1] = forces[s, nn - 1]
        for k in range(nn - 2, -1, -1):
            for j in range(3):
                outboard[k, j] = outboard[k + 1, j] + forces[s, k, j]
        for e in range(E):
            a, b = element_nodes[e, 0], element_nodes[e, 1]
            c0 = nodes[s, b, 0] - nodes[s, a, 0]
            c1 = nodes[s, b, 1] - nodes[s, a, 1]
            c2 = nodes[s, b, 2] - nodes[s, a, 2]
            length = np.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
            S = outboard[b]
            axial[s, e] = -(c0 * S[0] + c1 * S[1] + c2 * S[2]) / length
            for c in range(2):
                shear[s, e, c] = Q[s, e, 0, c + 1] * S[0] + Q[s, e, 1, c + 1] * S[1] \
                    + Q[s, e, 2, c + 1] * S[2]
    return axial, shear


def reached_angles(arm, q, xm, nodes, axes):
    """Target joint positions plus the change of chord rotation across each revolute joint."""
    reached = np.array(q, dtype=float)
    _add_chord_rotations(xm, nodes, axes, arm.joint_node, arm.tip_node, arm.model.joint_type,
                         reached)
    return reached


@njit(**JIT)
def _add_chord_rotations(xm, nodes, axes, joint_node, tip_node, jtype, reached):
    """
    Add to ``reached (T, n)`` the rotation of each link's chord relative to the one before it.

    A link's chord runs from its joint node to its tip node; its rotation from the rigid target
    (``xm``) to the flexible arm (``nodes``) is the rotation vector between the two chords.  The
    difference of that across a revolute joint, along its axis, is what the joint appears turned
    by.  A link of zero length has the chord rotation of the link before it.
    """
    T, n = reached.shape[0], reached.shape[1]
    for s in range(T):
        p0 = p1 = p2 = 0.0                          # the previous link's chord rotation
        for i in range(n):
            a, b = joint_node[i], tip_node[i]
            t0, t1, t2 = p0, p1, p2
            if a != b:
                u0 = xm[s, b, 0] - xm[s, a, 0]
                u1 = xm[s, b, 1] - xm[s, a, 1]
                u2 = xm[s, b, 2] - xm[s, a, 2]
                w0 = nodes[s, b, 0] - nodes[s, a, 0]
                w1 = nodes[s, b, 1] - nodes[s, a, 1]
                w2 = nodes[s, b, 2] - nodes[s, a, 2]
                x0 = u1 * w2 - u2 * w1
                x1 = u2 * w0 - u0 * w2
                x2 = u0 * w1 - u1 * w0
                sin = np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
                if sin > 0:
                    angle = np.arctan2(sin, u0 * w0 + u1 * w1 + u2 * w2) / sin
                    t0, t1, t2 = x0 * angle, x1 * angle, x2 * angle
                else:
                    t0 = t1 = t2 = 0.0
            if jtype[i] != PRISMATIC:
                reached[s, i] += axes[s, i, 0] * (t0 - p0) + axes[s, i, 1] * (t1 - p1) \
                    + axes[s, i, 2] * (t2 - p2)
            p0, p1, p2 = t0, t1, t2


def deformed_axes(axes, ud, joint_node):
    """Joint axes (n, 3) turned by the small rotation of their nodes, unit length."""
    turned = axes + np.cross(ud[joint_node, 3:6], axes)
    return turned / np.linalg.norm(turned, axis=1, keepdims=True)
