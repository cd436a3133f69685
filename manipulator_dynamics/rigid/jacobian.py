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
Where links are and how they move with the joints: poses in the base frame and Jacobians.

The loop closures' constraints (one state at a time, numpy over the compiled poses of
:mod:`.kinematics`) and the contact wrench's least squares (:func:`frame_jacobian`, compiled,
one state or a batch) are built from these.
"""

from numba import njit
import numpy as np

from . import kinematics
from .kinematics import all_finite, batch_row, joint_poses, kernel_model
from .status import check, NON_FINITE, OK
from .._inputs import states
from .._jit import INLINE, JIT
from ..model import PRISMATIC


def world_poses(model, q):
    """Pose ``R0 (n, 3, 3), p0 (n, 3)`` of every body in the base frame at ``q (n,)``."""
    m = kernel_model(model)
    R, R0 = np.empty((2, model.n, 3, 3))
    p, p0 = np.empty((2, model.n, 3))
    joint_poses(m, np.ascontiguousarray(q, dtype=float), R, p)
    kinematics.world_poses(m, R, p, R0, p0)
    return R0, p0


def frame_pose(model, link, R0, p0):
    """Return ``(R, p, body)``: link ``link``'s pose in the base frame and the body carrying it."""
    frame = model.frames[link]
    if frame.body < 0:
        return frame.R, frame.p, -1
    return R0[frame.body] @ frame.R, p0[frame.body] + R0[frame.body] @ frame.p, frame.body


def ancestors(model, body):
    """Return ``[body, parent[body], ..., root]`` (empty for the base, -1)."""
    chain = []
    while body >= 0:
        chain.append(body)
        body = model.parent[body]
    return chain


def point_jacobian(model, R0, p0, body, point):
    """Jacobian (3, n) of a base-frame point fixed to ``body`` (none for the base)."""
    J = np.zeros((3, model.n))
    for i in ancestors(model, body):
        axis = R0[i] @ model.axis[i]
        J[:, i] = axis if model.joint_type[i] == PRISMATIC else np.cross(axis, point - p0[i])
    return J


def direction_jacobian(model, R0, body, direction):
    """Jacobian (3, n) of a base-frame direction fixed to ``body``: d/dq_i = w_i x direction."""
    J = np.zeros((3, model.n))
    for i in ancestors(model, body):
        if model.joint_type[i] != PRISMATIC:
            J[:, i] = np.cross(R0[i] @ model.axis[i], direction)
    return J


@njit(**INLINE)
def frame_jacobian_sample(m, q, body, Rf, pf, work, J):
    """Fill ``J (6, n)`` with the Jacobian at ``q`` of the frame at ``Rf, pf`` on ``body``."""
    R, p, R0, p0 = work
    joint_poses(m, q, R, p)
    kinematics.world_poses(m, R, p, R0, p0)
    RL = R0[body] @ Rf                                  # the link in the base frame
    x = p0[body] + R0[body] @ pf
    J[:, :] = 0.0
    i = body
    while i >= 0:
        a = R0[i] @ m.axis[i]
        if m.joint_type[i] == PRISMATIC:
            v, w = a, np.zeros(3)
        else:
            d = x - p0[i]
            v = np.array([a[1] * d[2] - a[2] * d[1], a[2] * d[0] - a[0] * d[2],
                          a[0] * d[1] - a[1] * d[0]])
            w = a
        J[:3, i] = RL.T @ v                             # in the link's own axes
        J[3:, i] = RL.T @ w
        i = m.parent[i]


@njit(**INLINE)
def jacobian_workspace(n):
    """Scratch of :func:`frame_jacobian_sample`: ``R, p, R0, p0``."""
    return np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3))


@njit(**JIT)
def frame_jacobian_kernel(m, q, body, Rf, pf, out):
    """Fill ``out (N, 6, n)`` with the Jacobian of the frame at ``Rf, pf`` on ``body``."""
    if not all_finite(q):
        return NON_FINITE
    work = jacobian_workspace(m.parent.shape[0])
    for s in range(out.shape[0]):
        frame_jacobian_sample(m, batch_row(s, q), body, Rf, pf, work, out[s])
    return OK


def frame_jacobian(model, link, q):
    """
    Jacobian ``J (6, n)`` of link ``link``'s frame, in that frame: ``(v, w) = J qd``.

    ``v`` is the velocity of the link's origin and ``w`` its angular velocity, both in the link's
    own axes, so that a wrench ``(f, m)`` on the link (its frame, moment about its origin: the
    order of geometry_msgs/Wrench) loads the joints with ``J^T (f, m)``.  Any link, merged ones
    included; a link fixed to the base has ``J = 0``.

    Parameters
    ----------
    model : Model
        The robot.
    link : str
        A link of the URDF.
    q : array-like, shape (n,) or (N, n)
        Joint positions, one state or a batch.

    Returns
    -------
    J : ndarray, shape (6, n) or (N, 6, n)

    """
    if link not in model.frames:
        raise ValueError(f"'{link}' is not a link of model '{model.name}' (links: "
                         f'{", ".join(model.frames)})')
    frame = model.frames[link]
    (q,), N, single = states(model, ('q',), q)
    out = np.zeros((N, 6, model.n))
    if frame.body >= 0:
        check(model, frame_jacobian_kernel(kernel_model(model), q, frame.body,
                                           np.ascontiguousarray(frame.R, dtype=float),
                                           np.ascontiguousarray(frame.p, dtype=float), out),
              ('q',), q)
    return out[0] if single else out
