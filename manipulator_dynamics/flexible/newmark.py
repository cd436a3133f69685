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

The method's acceleration variable ``a_(n+1)`` lags the acceleration at ``t_(n+1)`` by
``(alpha_f - alpha_m) h`` (Arnold & Bruls 2007; the displacements and velocities are second-order
accurate at the step itself).  Forces built on it, the nodal forces ``m (u'' - g)`` behind the
torques and the axial forces, would then lag too: first order in time, 0.17 % of the energy in
the work balance of a flexible arm's move at a 1 ms step.  :func:`acceleration_at_step` moves
it to the step's own time; the integration keeps its own variable.

The elastic and damping forces of the old step are kept as it ended them, in its own frame.
Evaluated with the new frame's stiffness, an element stretched along its old axis would read as
sheared by the frame's rotation: a spurious force ``EA * stretch * rotation`` every step, which
made a spinning beam lag by an amount proportional to the step.

Geometric stiffening: each element's axial force ``N`` in the rigid target motion (tension
positive: centrifugal, gravity and inertial loads of the nodes beyond it) adds the geometric
stiffness ``N / l (1 - x x^T)`` on the transverse motion of its two nodes (``x`` its axis): the
string stiffness of a tensioned element, consistent with its linear interpolation.  A beam spun
about its root is stiffened by its centrifugal tension; the co-rotational linear model without
it softens without bound (Kane, Ryan & Banerjee 1987).

The kernels take the finite-element arrays as one :class:`Fem` and their scratch arrays as one
:class:`Work` (:func:`fem_arrays`, :func:`work_arrays`), and a map ``dof (N, 6)`` from each
node's six degrees of freedom to the equations (-1: held; :func:`chain_dofs`).  One chain's map
numbers the nodes along it, so its effective stiffness is a band matrix (Cholesky in O(N)); the
chains of a closed loop share their cut node's translations, and their system is solved dense.
"""

from typing import NamedTuple

from numba import njit
import numpy as np

from .beam import BAND, band_solve, element_global
from .._jit import INLINE, JIT

#: Default amplification of the modes far above the step's resolution (see the module text).
SPECTRAL_RADIUS = 0.8


class Fem(NamedTuple):
    """The finite-element arrays of an arm (or of the chains of a loop), as one kernel argument."""

    mass: np.ndarray            # (N,) lumped node masses, kg
    damping_mass: np.ndarray    # (N,) Rayleigh alpha times the node masses, kg/s
    nodes: np.ndarray           # (E, 2) the two nodes of each element
    stiffness: np.ndarray       # (E, 12, 12) element stiffness in element axes
    beta: np.ndarray            # (E,) Rayleigh beta of each element, s
    length: np.ndarray          # (E,) element lengths, m
    gravity: np.ndarray         # (3,) base frame, m/s^2
    chain_last: np.ndarray      # (E,) the last node of the element's chain
    stiffening: bool            # add the geometric stiffness of the axial forces
    dense: bool                 # solve dense (a loop), not as one chain's band


class Deformation(NamedTuple):
    """The elastic state of every node at one step: deformations and their rates, (N, 6) each."""

    u: np.ndarray               # (N, 6) u_d: displacements, m, and small rotations, rad
    v: np.ndarray               # (N, 6) u_d'
    a: np.ndarray               # (N, 6) u_d''


class Work(NamedTuple):
    """Scratch arrays of one integration (matrix, right-hand side, element matrices, axial)."""

    matrix: np.ndarray          # (12, D) lower band, or (D, D) dense: the effective stiffness
    rhs: np.ndarray             # (D,)
    kg: np.ndarray              # (E, 12, 12) element stiffness in the base frame
    axial: np.ndarray           # (E,) axial force of each element, tension positive, N
    internal: np.ndarray        # (N, 6) the last step's elastic and damping forces, per node
    nodal: np.ndarray           # (N, 6) scratch forces per node


def fem_arrays(arm, geometric_stiffening=True, stiffness=None):
    """Make the :class:`Fem` of ``arm`` (``stiffness``: its element stiffness, if not its own)."""
    E = len(arm.element_nodes)
    return Fem(arm.node_mass, arm.damping_mass, arm.element_nodes,
               arm.element_stiffness if stiffness is None else stiffness,
               np.ascontiguousarray(arm.element_damping[:, 1]), arm.element_length,
               np.ascontiguousarray(arm.model.gravity, dtype=float),
               np.full(E, len(arm.node_mass) - 1, dtype=np.int64), bool(geometric_stiffening),
               False)


def chain_dofs(nodes):
    """Map one chain's degrees of freedom, clamped at node 0: node ``k`` owns ``6 (k - 1) ..``."""
    dof = np.arange(-6, 6 * (nodes - 1), dtype=np.int64).reshape(nodes, 6)
    dof[0] = -1
    return dof


def work_arrays(fem, ndof):
    """Make the :class:`Work` arrays for ``ndof`` equations of ``fem``."""
    E, nn = fem.nodes.shape[0], fem.mass.shape[0]
    matrix = np.zeros((ndof, ndof)) if fem.dense else np.zeros((BAND + 1, ndof))
    return Work(matrix, np.zeros(ndof), np.empty((E, 12, 12)), np.zeros(E), np.zeros((nn, 6)),
                np.zeros((nn, 6)))


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


@njit(**INLINE)
def acceleration_at_step(a1, a0, coef):
    """
    Acceleration at the new step's own time from generalized-alpha's ``a1`` (and ``a0`` before).

    ``a1`` stands for the acceleration at ``t_(n+1) - (alpha_f - alpha_m) h`` (module text): a
    linear extrapolation over that lag is second-order accurate.  The trapezoidal rule has no
    lag and gets ``a1`` back.
    """
    return a1 + (coef[1] - coef[0]) * (a1 - a0)


def accelerations_at_steps(ad, coef):
    """:func:`acceleration_at_step` at every step of ``ad (T, ...)``; the first is the start's."""
    out = ad.copy()
    out[1:] = acceleration_at_step(ad[1:], ad[:-1], coef)
    return out


@njit(**JIT)
def axial_forces(fem, am, Q, axial):
    """
    Fill ``axial (E,)``: each element's axial force in the rigid target motion, tension positive.

    The force an element passes outwards is the sum of ``m (u_m'' - g)`` over the nodes beyond
    it in its chain; its part along the element axis ``Q[e][:, 0]`` is the axial force.  These
    are the zeroth-order stresses of the linearisation about the rigid motion, the ones whose
    geometric stiffness is first order in the deformation (Padilla & von Flotow 1992); the
    deformation's own contribution would be second order.  They are known functions of the
    target, smooth, and do not feed back on the deformation.  (In a loop, each chain's own: the
    cut force's share is left out.)  Nodes are numbered outwards along each chain.
    """
    s0 = s1 = s2 = 0.0
    k = -1
    last = -1
    for e in range(fem.nodes.shape[0] - 1, -1, -1):
        b = fem.nodes[e, 1]
        if fem.chain_last[e] != last:           # the last element of a chain: start its sum
            last = fem.chain_last[e]
            k = last + 1
            s0 = s1 = s2 = 0.0
        while k > b:                    # add the nodes at and beyond b not yet summed
            k -= 1
            m = fem.mass[k]
            s0 += m * (am[k, 0] - fem.gravity[0])
            s1 += m * (am[k, 1] - fem.gravity[1])
            s2 += m * (am[k, 2] - fem.gravity[2])
        axial[e] = -(Q[e, 0, 0] * s0 + Q[e, 1, 0] * s1 + Q[e, 2, 0] * s2)


@njit(**INLINE)
def _geometric(Qs, e, r, c):
    """Entry ``(r, c)`` of ``1 - x x^T`` for element ``e``'s axis ``x``."""
    return (1.0 if r == c else 0.0) - Qs[e, r, 0] * Qs[e, c, 0]


@njit(**INLINE)
def _add(matrix, dense, dr, dc, value):
    """Add ``value`` at equation ``dr``, unknown ``dc`` (lower band, or both dense triangles)."""
    if dr < 0 or dc < 0:
        return
    if dense:
        matrix[dr, dc] += value
    elif dr >= dc:
        matrix[dr - dc, dc] += value


@njit(**JIT)
def assemble(fem, work, dof, Qs, scale_k, scale_c):
    """
    Add ``scale_k K + scale_c C_K`` of the new frame to the matrix, and leave ``K_e`` in ``kg``.

    ``C_K = beta_e K_e`` is the stiffness-proportional damping; ``K`` includes the geometric
    stiffness of ``work.axial`` when ``fem.stiffening``.
    """
    kg, matrix, dense = work.kg, work.matrix, fem.dense
    for e in range(fem.nodes.shape[0]):
        element_global(Qs[e], fem.stiffness[e], kg[e])
        a = fem.nodes[e, 0]
        scale = scale_k + scale_c * fem.beta[e]
        for r in range(12):
            dr = dof[a + r // 6, r % 6]
            for c in range(12):
                _add(matrix, dense, dr, dof[a + c // 6, c % 6], scale * kg[e, r, c])
        if fem.stiffening:
            # K_G = N / l [[P, -P], [-P, P]] on the translations, P = 1 - x x^T
            g = scale_k * work.axial[e] / fem.length[e]
            for p in range(2):
                for q in range(2):
                    sign = g if p == q else -g
                    for r in range(3):
                        for c in range(3):
                            _add(matrix, dense, dof[a + p, r], dof[a + q, c],
                                 sign * _geometric(Qs, e, r, c))


@njit(**JIT)
def element_forces(fem, work, Qs, u, v, out):
    """
    Fill ``out (N, 6)`` with ``K u + C_K v`` per node (``kg`` and ``work.axial`` of the frame).

    The elastic and stiffness-damping forces of the state ``u``, ``v`` ``(N, 6)``: each node
    feels their opposite.  Base frame.
    """
    kg = work.kg
    out[:] = 0.0
    for e in range(fem.nodes.shape[0]):
        a = fem.nodes[e, 0]
        beta = fem.beta[e]
        for r in range(12):
            f = 0.0
            for c in range(12):
                nc = a + c // 6
                f += kg[e, r, c] * (u[nc, c % 6] + beta * v[nc, c % 6])
            out[a + r // 6, r % 6] += f
        if fem.stiffening:
            g = work.axial[e] / fem.length[e]
            for p in range(2):
                for r in range(3):
                    f = 0.0
                    for q in range(2):
                        sign = g if p == q else -g
                        for c in range(3):
                            f += sign * _geometric(Qs, e, r, c) * u[a + q, c]
                    out[a + p, r] += f


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
def _solve(fem, work, ndof):
    """Solve the assembled system in place of ``work.rhs[:ndof]``; False if not definite."""
    if fem.dense:
        A = work.matrix[:ndof, :ndof]
        L = np.linalg.cholesky(A) if np.all(np.diag(A) > 0) else np.zeros((0, 0))
        if L.shape[0] == 0 or not np.all(np.isfinite(L)):
            return False
        work.rhs[:ndof] = np.linalg.solve(L.T, np.linalg.solve(L, work.rhs[:ndof]))
        return True
    return band_solve(work.matrix, work.rhs)


@njit(**INLINE)
def _unknowns(dof):
    n = -1
    for k in range(dof.shape[0]):
        for j in range(6):
            n = max(n, dof[k, j])
    return n + 1


@njit(**JIT)
def static_start(fem, work, dof, am, Q, ud):
    """
    Deformations ``ud (N, 6)`` in static equilibrium, ``K ud = m (g - u_m'')``; the strain energy.

    The arm starts so: at rest in its deformed shape under gravity and the target's first
    acceleration ``am (N, 3)``, element axes ``Q (E, 3, 3)``.  ``work.internal`` is left with
    its elastic forces, ``K ud``.
    """
    ndof = _unknowns(dof)
    work.matrix[:] = 0.0
    ud[:] = 0.0
    rhs = work.rhs
    rhs[:] = 0.0
    for k in range(am.shape[0]):
        for j in range(3):
            if dof[k, j] >= 0:
                rhs[dof[k, j]] += fem.mass[k] * (fem.gravity[j] - am[k, j])
    axial_forces(fem, am, Q, work.axial)
    assemble(fem, work, dof, Q, 1.0, 0.0)
    if not _solve(fem, work, ndof):
        raise ValueError('the stiffness matrix is not positive definite')
    for k in range(am.shape[0]):
        for j in range(6):
            if dof[k, j] >= 0:
                ud[k, j] = rhs[dof[k, j]]
    element_forces(fem, work, Q, ud, np.zeros_like(ud), work.internal)    # at rest: K ud
    return strain_energy(work.kg, fem.nodes, ud)


@njit(**JIT)
def newmark_step(fem, work, dof, h, coef, am0, am1, Q, old, new):
    """
    One step of ``h`` s from the :class:`Deformation` ``old`` into ``new``; return the new strain.

    Generalized-alpha (``coef`` from :func:`generalized_alpha`) on eq. 15,
    ``M u_d''_(n+1-alpha_m) + (1 - alpha_f) (C u_d' + K u_d)_(n+1) + alpha_f (C u_d' + K u_d)_n
    = F - M u_m''_(n+1-alpha_f)``, the rigid accelerations ``am0`` (old step) and ``am1`` (new)
    given, the element axes ``Q`` of the new step.  The old step's elastic and damping forces
    are those it ended with (``work.internal``, in its own frame): evaluating the old deformation
    with the new frame's stiffness would read the rotation of a stretched element as shear, a
    force of order ``EA * stretch * rotation`` per step (the paper's ``R_t`` in the new frame is
    the ``alpha_f = 0`` case, the trapezoidal rule's total form).  The unknowns are the
    increments of the degrees of freedom ``dof`` maps (nodes sharing an unknown move together
    from here on); the effective stiffness of the increment is
    ``(1 - alpha_f) K + (1 - alpha_f) gamma / (beta h) C + (1 - alpha_m) / (beta h^2) M``.
    ``K`` includes the geometric stiffness of the new step's rigid axial forces when
    ``fem.stiffening``.
    """
    alpha_m, alpha_f, gamma, nb = coef[0], coef[1], coef[2], coef[3]
    ud, vd, ad = old
    ud1, vd1, ad1 = new
    nn = am1.shape[0]
    ndof = _unknowns(dof)
    mass, damping_mass, rhs = fem.mass, fem.damping_mass, work.rhs
    on_m = (1.0 - alpha_m) / (nb * h * h)       # the increment's coefficients
    on_c = (1.0 - alpha_f) * gamma / (nb * h)
    on_k = 1.0 - alpha_f
    m_v = (1.0 - alpha_m) / (nb * h)            # the old state's, through a and v of the new
    m_a = (1.0 - alpha_m) * (0.5 - nb) / nb - alpha_m
    v_v = 1.0 - gamma / nb
    v_a = h * (1.0 - 0.5 * gamma / nb)
    work.matrix[:] = 0.0
    rhs[:ndof] = 0.0
    for k in range(nn):
        for j in range(6):
            if dof[k, j] >= 0:
                rhs[dof[k, j]] -= alpha_f * work.internal[k, j]
        for j in range(3):
            d = dof[k, j]
            if d < 0:
                continue
            # the rigid motion's inertial load is an applied force: at the alpha_f point, with
            # the elastic forces it balances (at the alpha_m point a spinning link's centrifugal
            # load and its stretch would point apart by (alpha_f - alpha_m) Omega h: a lag)
            rigid = (1.0 - alpha_f) * am1[k, j] + alpha_f * am0[k, j]
            vn = (1.0 - alpha_f) * (v_v * vd[k, j] + v_a * ad[k, j]) + alpha_f * vd[k, j]
            rhs[d] += mass[k] * (fem.gravity[j] - rigid + m_v * vd[k, j] + m_a * ad[k, j]) \
                - damping_mass[k] * vn
            _add(work.matrix, fem.dense, d, d, on_m * mass[k] + on_c * damping_mass[k])
    if fem.stiffening:
        axial_forces(fem, am1, Q, work.axial)
    assemble(fem, work, dof, Q, on_k, on_c)
    # - (1 - alpha_f) (K ud + C_K (v_v vd + v_a ad)): the new frame's forces of the old state
    # carried to the new step without increment (v_v vd + v_a ad is vd1 at zero increment)
    for k in range(nn):
        for j in range(6):
            vd1[k, j] = on_k * (v_v * vd[k, j] + v_a * ad[k, j])
            ud1[k, j] = on_k * ud[k, j]
    element_forces(fem, work, Q, ud1, vd1, work.nodal)
    for k in range(nn):
        for j in range(6):
            if dof[k, j] >= 0:
                rhs[dof[k, j]] -= work.nodal[k, j]
    if not _solve(fem, work, ndof):
        raise ValueError('the effective stiffness matrix is not positive definite')
    for k in range(nn):
        for j in range(6):
            d = dof[k, j]
            du = rhs[d] if d >= 0 else 0.0
            if d < 0:
                ud1[k, j] = ud[k, j]            # held where it is (zero at a clamped base)
                vd1[k, j] = 0.0
                ad1[k, j] = 0.0
                continue
            ud1[k, j] = ud[k, j] + du
            ad1[k, j] = du / (nb * h * h) - vd[k, j] / (nb * h) - (0.5 - nb) / nb * ad[k, j]
            vd1[k, j] = vd[k, j] + h * ((1.0 - gamma) * ad[k, j] + gamma * ad1[k, j])
    element_forces(fem, work, Q, ud1, vd1, work.internal)            # for the next step
    return strain_energy(work.kg, fem.nodes, ud1)


@njit(**JIT)
def newmark(fem, work, dof, t, coef, am, Q, rigid):
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
    strain[0] = static_start(fem, work, dof, am[0], Q[0], ud[0])
    for s in range(T - 1):
        strain[s + 1] = newmark_step(fem, work, dof, t[s + 1] - t[s], coef, am[s], am[s + 1],
                                     Q[s + 1], Deformation(ud[s], vd[s], ad[s]),
                                     Deformation(ud[s + 1], vd[s + 1], ad[s + 1]))
    return ud, vd, ad, strain
