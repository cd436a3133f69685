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
The beam finite elements of a flexible arm, assembled.

Element stiffness in the base frame, the banded Cholesky solve of the assembled system, and the
natural frequencies with the joints locked.
"""

from numba import njit
import numpy as np

from .motion import node_motion
from .._jit import JIT
from ..rigid.kinematics import kernel_model

BAND = 11       # half-bandwidth: an element couples 12 consecutive degrees of freedom


@njit(**JIT)
def element_global(Qe, k, out):
    """``out = G k G^T`` with ``G = diag(Qe, Qe, Qe, Qe)``: element stiffness in the base frame."""
    tmp = np.empty((3, 3))
    for bi in range(4):
        for bj in range(4):
            for r in range(3):
                for c in range(3):
                    s = 0.0
                    for m in range(3):
                        s += k[3 * bi + r, 3 * bj + m] * Qe[c, m]
                    tmp[r, c] = s                               # k_IJ Q^T
            for r in range(3):
                for c in range(3):
                    out[3 * bi + r, 3 * bj + c] = Qe[r, 0] * tmp[0, c] + Qe[r, 1] * tmp[1, c] \
                        + Qe[r, 2] * tmp[2, c]


@njit(**JIT)
def band_solve(B, rhs):
    """Solve ``A x = rhs`` in place for the SPD band matrix ``A`` (lower band ``B[d, j]``)."""
    n = B.shape[1]
    w = B.shape[0] - 1
    for j in range(n):
        s = B[0, j]
        for k in range(max(0, j - w), j):
            s -= B[j - k, k] * B[j - k, k]
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        B[0, j] = d
        for i in range(j + 1, min(n, j + w + 1)):
            s = B[i - j, j]
            for k in range(max(0, i - w), j):
                s -= B[i - k, k] * B[j - k, k]
            B[i - j, j] = s / d
    for i in range(n):                      # L y = b
        s = rhs[i]
        for k in range(max(0, i - w), i):
            s -= B[i - k, k] * rhs[k]
        rhs[i] = s / B[0, i]
    for i in range(n - 1, -1, -1):          # L^T x = y
        s = rhs[i]
        for k in range(i + 1, min(n, i + w + 1)):
            s -= B[k - i, i] * rhs[k]
        rhs[i] = s / B[0, i]
    return True


def natural_frequencies(arm, q, count):
    """Return natural frequencies (Hz), joints locked at ``q``, rigid links' stand-ins excluded."""
    from scipy.linalg import eigh

    nn = len(arm.node_mass)
    xm = np.empty((1, nn, 3))
    Q = np.empty((1, len(arm.element_link), 3, 3))
    axes = np.empty((1, arm.n, 3))
    model = arm.model
    zero = np.zeros((1, arm.n))
    node_motion(kernel_model(model), q[None, :], zero, zero, arm.node_body, arm.node_r,
                arm.element_link, arm.element_axes, xm, np.empty_like(xm), np.empty_like(xm), Q,
                axes)
    ndof = 6 * (nn - 1)
    K = np.zeros((ndof + 6, ndof + 6))
    kg = np.empty((12, 12))
    for e, (a, b) in enumerate(arm.element_nodes):
        element_global(Q[0, e], arm.element_stiffness[e], kg)
        K[6 * a:6 * a + 12, 6 * a:6 * a + 12] += kg
    K = K[6:, 6:]
    # lumped masses carry no rotary inertia, and a node may carry no mass (a rigid-bar link):
    # the degrees of freedom without mass are condensed out statically
    mass = np.zeros((nn - 1, 6))
    mass[:, :3] = arm.node_mass[1:, None]
    mass = mass.reshape(-1)
    t = np.flatnonzero(mass > 0)
    r = np.flatnonzero(mass == 0)
    condensed = K[np.ix_(t, t)] - K[np.ix_(t, r)] @ np.linalg.solve(K[np.ix_(r, r)],
                                                                    K[np.ix_(r, t)])
    w2 = eigh(condensed, np.diag(mass[t]), eigvals_only=True)
    f = np.sqrt(np.clip(w2, 0.0, None)) / (2 * np.pi)
    rigid = [link for link in arm.links if link.rigid]
    if rigid and not arm.rigid:
        # modes of the rigid stand-ins are orders of magnitude above the flexible ones
        f = f[f < 1e3 * f[0]]
    return f if count is None else f[:count]
