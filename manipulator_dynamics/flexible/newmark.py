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
Isobe & Imaizumi's kinematics scheme: Newmark's beta method on the incremental equation of motion.

Their eq. (15), ``[M]{u''} + [C]{u_d'} + [K]{du_d} = {F} - {R}``, integrated with delta = 1/2,
beta = 1/4 (the trapezoidal rule) for the deformations ``u_d`` of the nodes.
"""

from numba import njit
import numpy as np

from .beam import BAND, band_solve, element_global
from .._jit import JIT


@njit(**JIT)
def assemble(Qs, nodes, kloc, beta, c_k, B, ud, vd, force, kg):
    """
    Add ``(1 + c_k beta) K`` into band ``B``; subtract ``K ud - beta K vd`` from ``force``.

    Node ``k >= 1`` owns degrees of freedom ``6 (k - 1) .. 6 k - 1``; node 0 is clamped.  Each
    element's stiffness in the base frame is left in ``kg (E, 12, 12)`` for :func:`strain_energy`.
    """
    for e in range(nodes.shape[0]):
        element_global(Qs[e], kloc[e], kg[e])
        a = nodes[e, 0]
        scale = 1.0 + c_k * beta[e]
        for r in range(12):
            nr = a + r // 6
            dr = 6 * (nr - 1) + r % 6
            kr = 0.0
            for c in range(12):
                nc = a + c // 6
                kr += kg[e, r, c] * (ud[nc, c % 6] - beta[e] * vd[nc, c % 6])
                if nr >= 1 and nc >= 1:
                    dc = 6 * (nc - 1) + c % 6
                    if dr >= dc:
                        B[dr - dc, dc] += scale * kg[e, r, c]
            if nr >= 1:
                force[dr] -= kr


@njit(**JIT)
def strain_energy(kg, nodes, ud):
    """Strain energy ``ud^T K ud / 2`` from the element stiffnesses :func:`assemble` left."""
    strain = 0.0
    for e in range(nodes.shape[0]):
        a = nodes[e, 0]
        for r in range(12):
            ur = ud[a + r // 6, r % 6]
            for c in range(12):
                strain += 0.5 * ur * kg[e, r, c] * ud[a + c // 6, c % 6]
    return strain


@njit(**JIT)
def newmark(t, am, Q, mass, alpha_mass, nodes, kloc, beta, gravity, rigid):
    """
    Deformations ``u_d (T, N, 6)``, their rates and translational accelerations, strain energy.

    Newmark (delta = 1/2, beta = 1/4) on ``M (u_m'' + u_d'') + C u_d' + K u_d = F``, the rigid
    accelerations ``u_m''`` given.  The effective stiffness ``K + 2/h C + 4/h^2 M`` is a band
    matrix (nodes numbered along the chain): Cholesky in O(N) per step.
    """
    T, nn = am.shape[0], am.shape[1]
    ndof = 6 * (nn - 1)
    ud = np.zeros((T, nn, 6))
    vd = np.zeros((T, nn, 6))
    ad = np.zeros((T, nn, 3))
    strain = np.zeros(T)
    if rigid:
        return ud, vd, ad, strain
    B = np.zeros((BAND + 1, ndof))
    rhs = np.zeros(ndof)
    kg = np.empty((nodes.shape[0], 12, 12))
    zero = np.zeros((nn, 6))
    # start in static equilibrium: K ud0 = m (g - u_m''(0))
    for k in range(1, nn):
        for j in range(3):
            rhs[6 * (k - 1) + j] = mass[k] * (gravity[j] - am[0, k, j])
    assemble(Q[0], nodes, kloc, beta, 0.0, B, zero, zero, rhs, kg)
    if not band_solve(B, rhs):
        raise ValueError('the stiffness matrix is not positive definite')
    for k in range(1, nn):
        for j in range(6):
            ud[0, k, j] = rhs[6 * (k - 1) + j]
    strain[0] = strain_energy(kg, nodes, ud[0])
    for s in range(T - 1):
        h = t[s + 1] - t[s]
        c0 = 4.0 / (h * h)
        c1 = 2.0 / h
        B[:] = 0.0
        for k in range(1, nn):
            base = 6 * (k - 1)
            for j in range(3):
                # F - M u_m'' + M (4/h vd + ad) + alpha M vd
                rhs[base + j] = mass[k] * (gravity[j] - am[s + 1, k, j] + 4.0 / h * vd[s, k, j]
                                           + ad[s, k, j]) + alpha_mass[k] * vd[s, k, j]
                B[0, base + j] += c0 * mass[k] + c1 * alpha_mass[k]
            for j in range(3, 6):
                rhs[base + j] = 0.0
        # - K ud + beta K vd, and K (1 + 2/h beta) into the band (eq. 15, R_t in the new frame)
        assemble(Q[s + 1], nodes, kloc, beta, c1, B, ud[s], vd[s], rhs, kg)
        if not band_solve(B, rhs):
            raise ValueError('the effective stiffness matrix is not positive definite')
        for k in range(1, nn):
            for j in range(6):
                du = rhs[6 * (k - 1) + j]
                ud[s + 1, k, j] = ud[s, k, j] + du
                vd[s + 1, k, j] = c1 * du - vd[s, k, j]
                if j < 3:
                    ad[s + 1, k, j] = c0 * (du - h * vd[s, k, j]) - ad[s, k, j]
        strain[s + 1] = strain_energy(kg, nodes, ud[s + 1])
    return ud, vd, ad, strain
