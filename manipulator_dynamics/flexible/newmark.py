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
def static_start(am, Q, mass, nodes, kloc, beta, gravity, B, rhs, kg, ud):
    """
    Deformations ``ud (N, 6)`` in static equilibrium, ``K ud = m (g - u_m'')``; the strain energy.

    The arm starts so: at rest in its deformed shape under gravity and the target's first
    acceleration ``am (N, 3)``, element axes ``Q (E, 3, 3)``.  ``B``, ``rhs``, ``kg`` are work
    arrays (band, right-hand side, element stiffnesses).
    """
    nn = am.shape[0]
    B[:] = 0.0
    rhs[:] = 0.0
    ud[:] = 0.0
    for k in range(1, nn):
        for j in range(3):
            rhs[6 * (k - 1) + j] = mass[k] * (gravity[j] - am[k, j])
    assemble(Q, nodes, kloc, beta, 0.0, B, ud, ud, rhs, kg)
    if not band_solve(B, rhs):
        raise ValueError('the stiffness matrix is not positive definite')
    for k in range(1, nn):
        for j in range(6):
            ud[k, j] = rhs[6 * (k - 1) + j]
    return strain_energy(kg, nodes, ud)


@njit(**JIT)
def newmark_step(h, am, Q, mass, alpha_mass, nodes, kloc, beta, gravity, ud, vd, ad, B, rhs, kg,
                 ud1, vd1, ad1):
    """
    One step of ``h`` s: from ``ud, vd, ad`` to ``ud1, vd1, ad1``; the new strain energy.

    Newmark (delta = 1/2, beta = 1/4) on ``M (u_m'' + u_d'') + C u_d' + K u_d = F`` in increments
    (eq. 15), with the rigid accelerations ``am (N, 3)`` and element axes ``Q`` of the new step.
    The effective stiffness ``K + 2/h C + 4/h^2 M`` is a band matrix (nodes numbered along the
    chain): Cholesky in O(N).
    """
    nn = am.shape[0]
    c0 = 4.0 / (h * h)
    c1 = 2.0 / h
    B[:] = 0.0
    for k in range(1, nn):
        base = 6 * (k - 1)
        for j in range(3):
            # F - M u_m'' + M (4/h vd + ad) + alpha M vd
            rhs[base + j] = mass[k] * (gravity[j] - am[k, j] + 4.0 / h * vd[k, j]
                                       + ad[k, j]) + alpha_mass[k] * vd[k, j]
            B[0, base + j] += c0 * mass[k] + c1 * alpha_mass[k]
        for j in range(3, 6):
            rhs[base + j] = 0.0
    # - K ud + beta K vd, and K (1 + 2/h beta) into the band (eq. 15, R_t in the new frame)
    assemble(Q, nodes, kloc, beta, c1, B, ud, vd, rhs, kg)
    if not band_solve(B, rhs):
        raise ValueError('the effective stiffness matrix is not positive definite')
    for j in range(6):
        ud1[0, j] = 0.0
        vd1[0, j] = 0.0
    for j in range(3):
        ad1[0, j] = 0.0
    for k in range(1, nn):
        for j in range(6):
            du = rhs[6 * (k - 1) + j]
            ud1[k, j] = ud[k, j] + du
            vd1[k, j] = c1 * du - vd[k, j]
            if j < 3:
                ad1[k, j] = c0 * (du - h * vd[k, j]) - ad[k, j]
    return strain_energy(kg, nodes, ud1)


def work_arrays(arm):
    """Make the band, right-hand side and element stiffnesses :func:`newmark_step` works in."""
    ndof = 6 * (len(arm.node_mass) - 1)
    return (np.zeros((BAND + 1, ndof)), np.zeros(ndof),
            np.empty((len(arm.element_nodes), 12, 12)))


@njit(**JIT)
def newmark(t, am, Q, mass, alpha_mass, nodes, kloc, beta, gravity, rigid, B, rhs, kg):
    """
    Deformations ``u_d (T, N, 6)``, their rates and translational accelerations, strain energy.

    The arm starts in static equilibrium (:func:`static_start`), then takes
    :func:`newmark_step` along the samples ``t`` with the rigid accelerations ``am (T, N, 3)``.
    """
    T, nn = am.shape[0], am.shape[1]
    ud = np.zeros((T, nn, 6))
    vd = np.zeros((T, nn, 6))
    ad = np.zeros((T, nn, 3))
    strain = np.zeros(T)
    if rigid:
        return ud, vd, ad, strain
    strain[0] = static_start(am[0], Q[0], mass, nodes, kloc, beta, gravity, B, rhs, kg, ud[0])
    for s in range(T - 1):
        strain[s + 1] = newmark_step(t[s + 1] - t[s], am[s + 1], Q[s + 1], mass, alpha_mass,
                                     nodes, kloc, beta, gravity, ud[s], vd[s], ad[s], B, rhs,
                                     kg, ud[s + 1], vd[s + 1], ad[s + 1])
    return ud, vd, ad, strain
