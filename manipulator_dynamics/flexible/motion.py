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
The rigid target's motion at the nodes of a flexible arm: the operation displacements ``u_m``.

Isobe & Imaizumi's kinematics scheme drives the finite-element model with the motion the nodes
would have if the links were rigid; here that is the rigid chain's outward pass
(:mod:`manipulator_dynamics.rigid.kinematics`) carried to each node, in the base frame.
"""

from numba import njit
import numpy as np

from .._jit import JIT
from ..rigid.kinematics import body_motion, kernel_model, motion_workspace


def rigid_motion(arm, q, qd, qdd):
    """Node positions, velocities and accelerations of the rigid target at every step."""
    model = arm.model
    T = q.shape[0]
    nn = len(arm.node_mass)
    xm = np.empty((T, nn, 3))
    vm = np.empty((T, nn, 3))
    am = np.empty((T, nn, 3))
    Q = np.empty((T, len(arm.element_link), 3, 3))
    axes = np.empty((T, model.n, 3))
    node_motion(kernel_model(model), q, qd, qdd, arm.node_body, arm.node_r, arm.element_link,
                arm.element_axes, xm, vm, am, Q, axes)
    return xm, vm, am, Q, axes


@njit(**JIT)
def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit(**JIT)
def node_motion(m, q, qd, qdd, node_body, node_r, element_link, element_axes, xm, vm, am, Q,
                axes):
    """
    Rigid motion of the nodes in the base frame, step by step.

    The rigid chain's outward pass (body frames, no gravity) and its poses in the base give each
    node's position, velocity and acceleration as a point of its body; ``Q`` the element axes and
    ``axes`` the joint axes in the base frame.
    """
    n = q.shape[1]
    work = motion_workspace(n)
    Rw, pw = work[2], work[3]
    w, dw, dv, v = work[4][0], work[4][1], work[4][2], work[4][3]
    no_gravity = np.zeros(3)
    for s in range(q.shape[0]):
        body_motion(m, no_gravity, q[s], qd[s], qdd[s], work)
        for i in range(n):
            axes[s, i] = Rw[i] @ m.axis[i]
        for k in range(node_body.shape[0]):
            b = node_body[k]
            if b < 0:
                xm[s, k] = node_r[k]
                vm[s, k] = 0.0
                am[s, k] = 0.0
                continue
            r = node_r[k]                       # body frame, as the outward pass
            wr = _cross(w[b], r)
            xm[s, k] = pw[b] + Rw[b] @ r
            vm[s, k] = Rw[b] @ (v[b] + wr)
            am[s, k] = Rw[b] @ (dv[b] + _cross(dw[b], r) + _cross(w[b], wr))
        for e in range(element_link.shape[0]):
            Q[s, e] = Rw[element_link[e]] @ element_axes[e]
