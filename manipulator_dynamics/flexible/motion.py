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
from ..model import PRISMATIC
from ..rigid.kinematics import joint_poses


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
    node_motion(model.joint_type, model.geometry, q, qd, qdd, arm.node_body, arm.node_r,
                arm.element_link, arm.element_axes, xm, vm, am, Q, axes)
    return xm, vm, am, Q, axes


@njit(**JIT)
def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit(**JIT)
def node_motion(jtype, geometry, q, qd, qdd, node_body, node_r, element_link, element_axes,
                xm, vm, am, Q, axes):
    """Rigid motion of the nodes, base frame: a serial chain's forward kinematics per step."""
    n = q.shape[1]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    Rw = np.empty((n, 3, 3))
    pw = np.empty((n, 3))
    w = np.empty((n, 3))
    dw = np.empty((n, 3))
    v = np.empty((n, 3))
    dv = np.empty((n, 3))
    for s in range(q.shape[0]):
        joint_poses(jtype, geometry, q[s], R, p)
        for i in range(n):
            if i == 0:
                Rw[0] = R[0]
                pw[0] = p[0]
                w[0] = 0.0
                dw[0] = 0.0
                v[0] = 0.0
                dv[0] = 0.0
            else:
                d = Rw[i - 1] @ p[i]             # parent origin -> body origin, base frame
                Rw[i] = Rw[i - 1] @ R[i]
                pw[i] = pw[i - 1] + d
                wd = _cross(w[i - 1], d)
                w[i] = w[i - 1]
                dw[i] = dw[i - 1]
                v[i] = v[i - 1] + wd
                dv[i] = dv[i - 1] + _cross(dw[i - 1], d) + _cross(w[i - 1], wd)
            a = Rw[i] @ geometry[i, 12:15]
            axes[s, i] = a
            if jtype[i] == PRISMATIC:
                dv[i] += 2.0 * qd[s, i] * _cross(w[i], a) + qdd[s, i] * a
                v[i] += qd[s, i] * a
            else:
                dw[i] += qd[s, i] * _cross(w[i], a) + qdd[s, i] * a
                w[i] += qd[s, i] * a
        for k in range(node_body.shape[0]):
            b = node_body[k]
            if b < 0:
                xm[s, k] = node_r[k]
                vm[s, k] = 0.0
                am[s, k] = 0.0
                continue
            r = Rw[b] @ node_r[k]
            wr = _cross(w[b], r)
            xm[s, k] = pw[b] + r
            vm[s, k] = v[b] + wr
            am[s, k] = dv[b] + _cross(dw[b], r) + _cross(w[b], wr)
        for e in range(element_link.shape[0]):
            Q[s, e] = Rw[element_link[e]] @ element_axes[e]
