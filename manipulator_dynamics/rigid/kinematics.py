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
Compiled building blocks shared by the algorithms: joint poses and input checks.

Conventions (used by every kernel): body ``i``'s pose in its parent frame is ``R[i], p[i]``
(rotation from body to parent frame, position of the body origin in the parent frame).  Spatial
vectors are written out as pairs of 3-vectors, angular first: motion ``(w, v)`` with ``v`` the
velocity of the frame origin, force ``(n, f)`` with ``n`` the moment about the frame origin.  A 6x6
spatial inertia about a frame origin is ``[[J, skew(MS)], [skew(MS).T, M*1]]``.

Kernels take batches ``(N, n)``; an input with one row is broadcast over the batch (``_row``).
"""

from numba import njit
import numpy as np

from .._jit import JIT
from ..model import PRISMATIC


@njit(**JIT)
def _row(s, a):
    """Row ``s`` of a batch, or its only row when it has one (broadcast)."""
    return a[s] if a.shape[0] > 1 else a[0]


@njit(**JIT)
def vectors_ok(n, a, b, c):
    """Tell whether the 1-D ``a, b, c`` all have length ``n`` and finite elements."""
    if a.shape[0] != n or b.shape[0] != n or c.shape[0] != n:
        return False
    for i in range(n):
        if not (np.isfinite(a[i]) and np.isfinite(b[i]) and np.isfinite(c[i])):
            return False
    return True


@njit(**JIT)
def all_finite(a):
    """Tell whether every element of the 2-D array ``a`` is finite."""
    for s in range(a.shape[0]):
        for i in range(a.shape[1]):
            if not np.isfinite(a[s, i]):
                return False
    return True


@njit(**JIT)
def joint_poses(jtype, geometry, q, R, p):
    """Fill ``R (n,3,3)`` and ``p (n,3)``: every body's pose in its parent frame at ``q``."""
    for i in range(q.shape[0]):
        g = geometry[i]
        ax, ay, az = g[12], g[13], g[14]
        if jtype[i] == PRISMATIC:
            for r in range(3):
                R[i, r, 0] = g[3 * r]
                R[i, r, 1] = g[3 * r + 1]
                R[i, r, 2] = g[3 * r + 2]
                p[i, r] = g[9 + r] + q[i] * (g[3 * r] * ax + g[3 * r + 1] * ay + g[3 * r + 2] * az)
        else:
            c = np.cos(q[i])
            s = np.sin(q[i])
            t = 1.0 - c
            # Rodrigues: rotation about the unit axis by q, then R = R_tree @ Rj
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
                a0, a1, a2 = g[3 * r], g[3 * r + 1], g[3 * r + 2]
                R[i, r, 0] = a0 * j00 + a1 * j10 + a2 * j20
                R[i, r, 1] = a0 * j01 + a1 * j11 + a2 * j21
                R[i, r, 2] = a0 * j02 + a1 * j12 + a2 * j22
                p[i, r] = g[9 + r]


@njit(**JIT)
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


@njit(**JIT)
def motion_pass(parent, jtype, geometry, gravity, qd, qdd, R, p, w, dw, dv):
    """
    Outward Newton-Euler pass: fill ``w, dw, dv (n, 3)`` in body frames.

    ``w`` angular velocity, ``dw`` angular acceleration, ``dv`` linear acceleration of the frame
    origin with gravity folded in as a base acceleration ``-gravity`` (so ``dv`` is what a
    body-fixed accelerometer at the origin would read, sign reversed).  Poses ``R, p`` from
    :func:`joint_poses`.
    """
    for i in range(parent.shape[0]):
        a = parent[i]
        if a < 0:
            w0, w1, w2 = 0.0, 0.0, 0.0
            e0, e1, e2 = 0.0, 0.0, 0.0
            t0, t1, t2 = -gravity[0], -gravity[1], -gravity[2]
        else:
            w0, w1, w2 = w[a, 0], w[a, 1], w[a, 2]
            e0, e1, e2 = dw[a, 0], dw[a, 1], dw[a, 2]
            p0, p1, p2 = p[i, 0], p[i, 1], p[i, 2]
            # acceleration of body i's origin, parent frame: dv + dw x p + w x (w x p)
            c0, c1, c2 = w1 * p2 - w2 * p1, w2 * p0 - w0 * p2, w0 * p1 - w1 * p0
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
        g = geometry[i]
        ax, ay, az = g[12], g[13], g[14]
        rate, acc = qd[i], qdd[i]
        if jtype[i] == PRISMATIC:
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


@njit(**JIT)
def rotate_symmetric(R, xx, xy, xz, yy, yz, zz, out):
    """``out = R S R^T`` for the symmetric ``S = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]``."""
    for r in range(3):
        a0 = R[r, 0] * xx + R[r, 1] * xy + R[r, 2] * xz     # row r of R S
        a1 = R[r, 0] * xy + R[r, 1] * yy + R[r, 2] * yz
        a2 = R[r, 0] * xz + R[r, 1] * yz + R[r, 2] * zz
        for c in range(r, 3):
            v = a0 * R[c, 0] + a1 * R[c, 1] + a2 * R[c, 2]
            out[r, c] = v
            out[c, r] = v
