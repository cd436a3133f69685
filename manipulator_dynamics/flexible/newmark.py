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

Their eq. (15), ``[M]{u''} + [C]{u_d'} + [K]{du_d} = {F} - {R}``, integrated for the deformations
``u_d`` of the nodes.  The paper uses Newmark's trapezoidal rule (delta = 1/2, beta = 1/4).
Here it is the generalized-alpha method of Chung & Hulbert (1993, J. Appl. Mech. 60: 371-375),
which is that rule at ``spectral_radius = 1`` and, below 1, damps the modes far above the step's
Nyquist frequency (the axial and shear modes of a beam element, kHz for a slender link) while
keeping second-order accuracy and almost no damping of the bending modes the step resolves.

Why: at a 1 ms step the trapezoidal rule keeps whatever the stiff modes were given, undamped and
aliased near the Nyquist frequency, and that noise dominated the axial force of Isobe &
Imaizumi's 1-link arm (Fig. 7: a ~480 Hz ringing of 8.8e-3 N peak to peak over the real 20 Hz
one).  With ``spectral_radius = 0.8`` a mode of 3 kHz loses 10 % of its amplitude per 1 ms step
and the 10 Hz bending mode 2e-5 of its energy per second.
"""

from numba import njit
import numpy as np

from .beam import BAND, band_solve, element_global
from .._jit import JIT


#: Default amplification of the modes far above the step's resolution (see the module text).
SPECTRAL_RADIUS = 0.8


def generalized_alpha(spectral_radius):
    """
    ``(alpha_m, alpha_f, gamma, beta)`` of Chung & Hulbert's method for ``spectral_radius``.

    ``rho_inf`` in [0, 1] is the amplification of the modes far above the step's resolution:
    1 keeps them (the trapezoidal rule, energy-conserving), 0 removes them in one step.
    """
    rho = float(spectral_radius)
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f'spectral_radius must be in [0, 1] (1: the trapezoidal rule, no '
                         f'numerical damping), got {rho:g}')
    alpha_m = (2.0 * rho - 1.0) / (rho + 1.0)
    alpha_f = rho / (rho + 1.0)
    gamma = 0.5 - alpha_m + alpha_f
    return np.array([alpha_m, alpha_f, gamma, 0.25 * (1.0 - alpha_m + alpha_f) ** 2])


@njit(**JIT)
def assemble(Qs, nodes, kloc, beta, k_coef, c_coef, c_v, c_a, B, ud, vd, ad, force, kg):
    """
    Add ``(k_coef + c_coef beta_e) K_e`` into band ``B``; take the old state's from ``force``.

    The old state's forces are ``K_e (ud - beta_e (c_v vd + c_a ad))``: the element's stiffness
    and its Rayleigh damping ``beta_e K_e``.

    Node ``k >= 1`` owns degrees of freedom ``6 (k - 1) .. 6 k - 1``; node 0 is clamped.  Each
    element's stiffness in the base frame is left in ``kg (E, 12, 12)`` for :func:`strain_energy`.
    """
    for e in range(nodes.shape[0]):
        element_global(Qs[e], kloc[e], kg[e])
        a = nodes[e, 0]
        scale = k_coef + c_coef * beta[e]
        for r in range(12):
            nr = a + r // 6
            dr = 6 * (nr - 1) + r % 6
            kr = 0.0
            for c in range(12):
                nc = a + c // 6
                j = c % 6
                kr += kg[e, r, c] * (ud[nc, j] - beta[e] * (c_v * vd[nc, j] + c_a * ad[nc, j]))
                if nr >= 1 and nc >= 1:
                    dc = 6 * (nc - 1) + j
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
    assemble(Q, nodes, kloc, beta, 1.0, 0.0, 0.0, 0.0, B, ud, ud, ud, rhs, kg)
    if not band_solve(B, rhs):
        raise ValueError('the stiffness matrix is not positive definite')
    for k in range(1, nn):
        for j in range(6):
            ud[k, j] = rhs[6 * (k - 1) + j]
    return strain_energy(kg, nodes, ud)


@njit(**JIT)
def newmark_step(h, coef, am0, am1, Q, mass, alpha_mass, nodes, kloc, beta, gravity, ud, vd, ad,
                 B, rhs, kg, ud1, vd1, ad1):
    """
    One step of ``h`` s: from ``ud, vd, ad`` to ``ud1, vd1, ad1`` (all ``(N, 6)``); new strain.

    Generalized-alpha (``coef`` from :func:`generalized_alpha`) on eq. 15,
    ``M (u_m'' + u_d'')_(n+1-alpha_m) + C u_d'_(n+1-alpha_f) + K u_d_(n+1-alpha_f) = F``, the
    rigid accelerations ``am0`` (old step) and ``am1`` (new) given, the element axes ``Q`` of the
    new step (``R_t`` in the new frame).  The effective stiffness of the increment,
    ``(1 - alpha_f) K + (1 - alpha_f) gamma / (beta h) C + (1 - alpha_m) / (beta h^2) M``, is a
    band matrix (nodes numbered along the chain): Cholesky in O(N).
    """
    alpha_m, alpha_f, gamma, nb = coef[0], coef[1], coef[2], coef[3]
    nn = am1.shape[0]
    # the increment's coefficients, and the old state's in the right-hand side
    on_m = (1.0 - alpha_m) / (nb * h * h)
    on_c = (1.0 - alpha_f) * gamma / (nb * h)
    on_k = 1.0 - alpha_f
    m_v = (1.0 - alpha_m) / (nb * h)
    m_a = (1.0 - alpha_m) * (0.5 - nb) / nb - alpha_m
    c_v = -((1.0 - alpha_f) * (1.0 - gamma / nb) + alpha_f)
    c_a = -(1.0 - alpha_f) * h * (1.0 - 0.5 * gamma / nb)
    B[:] = 0.0
    for k in range(1, nn):
        base = 6 * (k - 1)
        for j in range(3):
            rigid = (1.0 - alpha_m) * am1[k, j] + alpha_m * am0[k, j]
            rhs[base + j] = mass[k] * (gravity[j] - rigid + m_v * vd[k, j] + m_a * ad[k, j]) \
                + alpha_mass[k] * (c_v * vd[k, j] + c_a * ad[k, j])
            B[0, base + j] += on_m * mass[k] + on_c * alpha_mass[k]
        for j in range(3, 6):
            rhs[base + j] = 0.0
    assemble(Q, nodes, kloc, beta, on_k, on_c, c_v, c_a, B, ud, vd, ad, rhs, kg)
    if not band_solve(B, rhs):
        raise ValueError('the effective stiffness matrix is not positive definite')
    for j in range(6):
        ud1[0, j] = 0.0
        vd1[0, j] = 0.0
        ad1[0, j] = 0.0
    for k in range(1, nn):
        for j in range(6):
            du = rhs[6 * (k - 1) + j]
            ud1[k, j] = ud[k, j] + du
            ad1[k, j] = du / (nb * h * h) - vd[k, j] / (nb * h) - (0.5 - nb) / nb * ad[k, j]
            vd1[k, j] = vd[k, j] + h * ((1.0 - gamma) * ad[k, j] + gamma * ad1[k, j])
    return strain_energy(kg, nodes, ud1)


def work_arrays(arm):
    """Make the band, right-hand side and element stiffnesses :func:`newmark_step` works in."""
    ndof = 6 * (len(arm.node_mass) - 1)
    return (np.zeros((BAND + 1, ndof)), np.zeros(ndof),
            np.empty((len(arm.element_nodes), 12, 12)))


@njit(**JIT)
def newmark(t, coef, am, Q, mass, alpha_mass, nodes, kloc, beta, gravity, rigid, B, rhs, kg):
    """
    Deformations ``u_d (T, N, 6)``, their rates and accelerations, and the strain energy.

    The arm starts in static equilibrium (:func:`static_start`), then takes
    :func:`newmark_step` along the samples ``t`` with the rigid accelerations ``am (T, N, 3)``.
    """
    T, nn = am.shape[0], am.shape[1]
    ud = np.zeros((T, nn, 6))
    vd = np.zeros((T, nn, 6))
    ad = np.zeros((T, nn, 6))
    strain = np.zeros(T)
    if rigid:
        return ud, vd, ad, strain
    strain[0] = static_start(am[0], Q[0], mass, nodes, kloc, beta, gravity, B, rhs, kg, ud[0])
    for s in range(T - 1):
        strain[s + 1] = newmark_step(t[s + 1] - t[s], coef, am[s], am[s + 1], Q[s + 1], mass,
                                     alpha_mass, nodes, kloc, beta, gravity, ud[s], vd[s], ad[s],
                                     B, rhs, kg, ud[s + 1], vd[s + 1], ad[s + 1])
    return ud, vd, ad, strain
