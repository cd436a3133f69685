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
Closed loops of flexible chains, integrated as one structure (Isobe & Imaizumi, eq. 12).

The loop is two open chains from the base whose tips a pin joins (the cut joint: it passes a
force, no moment).  Both chains are one finite-element system: the tips share their translations
(their rotations stay apart), and the passive joints are hinges, each the first element of its
link released of the moment about the joint axis (static condensation of that end's rotation).
The active joints follow their targets, as in the open chains.  So the loop deforms as a whole,
the passive joints turn with the deformation, and the pin force comes out of the integration.

The pin may engage and release during the motion (``closed``, per sample): two arms that grasp
one another, then let go.  Engaging joins the two tips where they are (their deformations may
differ; the difference is kept) and gives them one velocity, the momentum-weighted mean of
theirs: an inelastic grasp, whose energy loss is reported.  Releasing separates them, at no
cost.  While open, each chain is on its own; a passive joint then has nothing to hold it and is
refused.

The joint torques are the parallel scheme's, ``[L] = diag([L^a], [L^b])``, with the pin force
``lambda`` in ``{P}`` of both chains with opposite signs (eq. 12).  ``lambda`` is the
integration's own where the passive joints leave it free, and otherwise the one that makes every
passive joint's torque zero (least squares, nearest the integration's): the two differ by the
time-discretisation error.
"""

from dataclasses import dataclass

from numba import njit
import numpy as np

from .arm import _RIGID_FACTOR, FlexibleArm
from .dynamics import (_target, check_step, FlexibleDynamics, FlexibleTrajectory)
from .motion import rigid_motion
from .newmark import (acceleration_at_step, accelerations_at_steps, Deformation, Fem,
                      generalized_alpha, newmark_step, SPECTRAL_RADIUS, static_start,
                      work_arrays)
from .parallel_scheme import reached_angles, section_forces, torques_at
from .._jit import JIT
from ..model import PRISMATIC


@dataclass(frozen=True, eq=False)
class ClosedLoopDynamics:
    """
    A closed loop of (flexible) chains and its joint torques (Isobe & Imaizumi, eq. 12).

    Attributes
    ----------
    t : ndarray, shape (T,)
    joint_names : tuple of str
        Chain a's joints, then chain b's.
    tau : ndarray, shape (T, n_a + n_b)
        Joint torques; the passive joints' are zero up to :attr:`residual`.
    cut_force : ndarray, shape (T, 3)
        The force the pin applies to chain a's tip (base frame); chain b's gets its opposite.
        Zero while the loop is open.
    residual : float
        Largest passive-joint torque left (0 where the passive joints determine the cut force).
    gap : float
        Largest distance between the two chains' tips while the loop is closed, m.
    q : ndarray, shape (T, n_a + n_b)
        The joint angles the loop reaches: the active joints' targets; the passive joints turn
        with the deformation (each joint: target plus the change of chord rotation across it).
    tip_deflection : ndarray, shape (T, n_a + n_b, 3)
        Each link tip's displacement from its rigid target, base frame, m.
    nodes : ndarray, shape (T, N_a + N_b, 3)
        Node positions of both chains, base frame, m.
    energy : ndarray, shape (T, 3)
        Kinetic, gravitational potential and strain energy of the whole loop, J.
    closed : ndarray of bool, shape (T,)
        Where the pin joins the tips.
    grasp_loss : ndarray, shape (T,)
        Kinetic energy taken at each engagement of the pin (inelastic), J; zero elsewhere.

    """

    t: np.ndarray
    joint_names: tuple
    tau: np.ndarray
    cut_force: np.ndarray
    residual: float
    gap: float
    q: np.ndarray
    tip_deflection: np.ndarray
    nodes: np.ndarray
    energy: np.ndarray
    closed: np.ndarray
    grasp_loss: np.ndarray
    chain_a: FlexibleDynamics
    chain_b: FlexibleDynamics


def released_stiffness(arm, passive):
    """
    Element stiffness of ``arm`` with a hinge at each passive joint (indices into its joints).

    The link's first element gets its end at the joint released of the generalised force along
    the joint axis (the moment about a revolute axis, the force along a prismatic one):
    ``k - (k r)(k r)^T / (r^T k r)``, ``r`` that direction at the element's first node.
    """
    k = np.array(arm.element_stiffness)
    model = arm.model
    for i in passive:
        first = np.flatnonzero((arm.element_link == i)
                               & (arm.element_nodes[:, 0] == arm.joint_node[i]))
        if first.size == 0:
            raise ValueError(f"passive joint '{model.joint_names[i]}' moves a link of zero "
                             'length: a hinge needs an element to release')
        e = first[0]
        r = np.zeros(12)
        direction = arm.element_axes[e].T @ np.asarray(model.axis[i], float)
        r[0:3 if model.joint_type[i] == PRISMATIC else 6][-3:] = direction
        kr = k[e] @ r
        k[e] -= np.outer(kr, kr) / (r @ kr)
    return k


def loop_dofs(nodes_a, nodes_b, closed):
    """
    Map the two chains' degrees of freedom ``(N_a + N_b, 6)``; closed, b's tip takes a's.

    Each chain is clamped at its node 0 (the base); the unknowns are numbered chain a, then b.
    """
    dof = np.full((nodes_a + nodes_b, 6), -1, dtype=np.int64)
    count = 0
    for k in range(nodes_a + nodes_b):
        if k in (0, nodes_a):
            continue                                            # a base node: clamped
        for j in range(6):
            if closed and k == nodes_a + nodes_b - 1 and j < 3:
                dof[k, j] = dof[nodes_a - 1, j]                 # the pin: a's tip translation
            else:
                dof[k, j] = count
                count += 1
    return dof


def loop_fem(chain_a, chain_b, stiffness_a, stiffness_b, geometric_stiffening):
    """Make the :class:`Fem` of both chains, b's nodes numbered after a's, solved dense."""
    na = len(chain_a.node_mass)
    nodes = np.vstack([chain_a.element_nodes, chain_b.element_nodes + na])
    last = np.concatenate([np.full(len(chain_a.element_nodes), na - 1),
                           np.full(len(chain_b.element_nodes), na + len(chain_b.node_mass) - 1)])
    return Fem(np.concatenate([chain_a.node_mass, chain_b.node_mass]),
               np.concatenate([chain_a.damping_mass, chain_b.damping_mass]), nodes,
               np.concatenate([stiffness_a, stiffness_b]),
               np.concatenate([chain_a.element_damping[:, 1], chain_b.element_damping[:, 1]]),
               np.concatenate([chain_a.element_length, chain_b.element_length]),
               np.ascontiguousarray(chain_a.model.gravity, dtype=float),
               last.astype(np.int64), bool(geometric_stiffening), True)


@njit(**JIT)
def integrate_loop(fem, work, open_dof, closed_dof, closed, t, coef, am, Q, tip_a, tip_b):
    """
    Deformations ``(T, N, 6)``, their rates and accelerations, the pin force, grasp losses.

    The steps of :func:`~manipulator_dynamics.flexible.newmark.newmark_step` with the map of
    each step (``closed[s]``); on engaging, the two tips get their momentum-weighted velocity
    and acceleration (``loss[s]``: the kinetic energy that takes, J).  ``pin[s]`` is the force
    the pin applies to chain b's tip (a's gets its opposite): Newton's law of that node with
    chain b's own elastic and damping forces on it.
    """
    T, nn = am.shape[0], am.shape[1]
    ud = np.zeros((T, nn, 6))
    vd = np.zeros((T, nn, 6))
    ad = np.zeros((T, nn, 6))
    pin = np.zeros((T, 3))
    loss = np.zeros(T)
    ma, mb = fem.mass[tip_a], fem.mass[tip_b]
    static_start(fem, work, closed_dof if closed[0] else open_dof, am[0], Q[0], ud[0])
    for s in range(T):
        a_tip = ad[s, tip_b]
        if s > 0:
            old = s - 1
            v0, a0 = vd[old], ad[old]
            if closed[s] and not closed[old]:
                # engage: one velocity and acceleration for both tips (an inelastic grasp);
                # the step starts from that, the record of the step before stays as it was
                v0, a0 = v0.copy(), a0.copy()
                wa, wb = ma / (ma + mb), mb / (ma + mb)
                for j in range(3):
                    dv = v0[tip_a, j] - v0[tip_b, j]
                    loss[s] += 0.5 * ma * wb * dv * dv
                    v0[tip_a, j] = v0[tip_b, j] = wa * v0[tip_a, j] + wb * v0[tip_b, j]
                    a0[tip_a, j] = a0[tip_b, j] = wa * a0[tip_a, j] + wb * a0[tip_b, j]
            newmark_step(fem, work, closed_dof if closed[s] else open_dof, t[s] - t[old], coef,
                         am[old], am[s], Q[s], Deformation(ud[old], v0, a0),
                         Deformation(ud[s], vd[s], ad[s]))
            a_tip = acceleration_at_step(ad[s, tip_b], a0[tip_b], coef)
        if closed[s]:
            # m (a - g) = -(K u + C v) + pin  on b's tip; work.internal holds K u + C v
            for j in range(3):
                pin[s, j] = mb * (am[s, tip_b, j] + a_tip[j] - fem.gravity[j]) \
                    + work.internal[tip_b, j]
    return ud, vd, ad, pin, loss


def closed_loop_inverse_dynamics(chain_a, chain_b, t, q_a, q_b, active, *, closed=None,
                                 dt=None, tolerance=1e-6, spectral_radius=SPECTRAL_RADIUS,
                                 geometric_stiffening=True) -> ClosedLoopDynamics:
    """
    Joint torques of a loop of two (flexible) chains joined at their tips by a pin (eq. 12).

    Both chains start at the base; a pin (a force, no moment) joins their tips.  The loop is
    integrated as one structure (module text): the active joints follow their targets, the
    passive ones turn with the deformation, the tips stay joined.  The torques are the parallel
    scheme of both chains with the pin force in ``{P}``, ``[L] = diag([L^a], [L^b])``.

    Parameters
    ----------
    chain_a, chain_b : FlexibleArm
        The two open chains of the cut loop, same gravity; rigid or flexible links.
    t : array-like, shape (T,)
        Strictly increasing times, s.
    q_a, q_b : array-like, shape (T, n_a) and (T, n_b)
        The rigid targets of each chain; where the loop is closed their tips must meet (the
        loop closure), within ``tolerance``.
    active : sequence of str
        The driven joints (names of either chain); all others are passive hinges.  With every
        joint active the pin force is what the loop's compliance makes it (for rigid chains it
        is then undetermined, and refused).
    closed : array-like of bool, shape (T,), optional
        Where the pin joins the tips (default: everywhere): it engages where this turns true
        (an inelastic grasp: see :attr:`ClosedLoopDynamics.grasp_loss`) and releases where it
        turns false.  Passive joints need the loop closed throughout.
    dt : float, optional
        Resample the targets on a uniform grid of this step first (as in
        :func:`~manipulator_dynamics.flexible_trajectory`; ``closed`` holds its last sample).
    tolerance : float
        Largest tip-to-tip distance (m) of the targets accepted as closed.
    spectral_radius, geometric_stiffening
        As in :func:`~manipulator_dynamics.flexible_trajectory` (the stiffening of each chain
        from its own nodes' loads: the cut force's share is left out).

    Raises
    ------
    ValueError
        An unknown active joint, chains with joints of the same name or different gravity,
        targets whose tips do not meet while closed (naming the step and the gap), a passive
        joint while open, or anything :func:`~manipulator_dynamics.flexible_trajectory` refuses.

    """
    names, passive, rigid = _check_chains(chain_a, chain_b, active)
    ta, (qa, qb), (motion_a, motion_b), closed = _closed_targets(
        chain_a, chain_b, t, q_a, q_b, dt, closed, [names[i] for i in passive], tolerance)
    na = chain_a.n
    stiffness = _stand_ins(chain_a, chain_b,
                           released_stiffness(chain_a, [i for i in passive if i < na]),
                           released_stiffness(chain_b, [i - na for i in passive if i >= na]))
    fem = loop_fem(chain_a, chain_b, *stiffness, geometric_stiffening)
    coef = generalized_alpha(spectral_radius)
    xm, vm, am, Q = (np.concatenate([x, y], axis=1) for x, y in zip(motion_a[:4], motion_b[:4]))
    split, nn = len(chain_a.node_mass), len(fem.mass)
    tip_a, tip_b = split - 1, nn - 1
    if rigid:
        ud = vd = ad = np.zeros((len(ta), nn, 6))
        pin, loss = np.zeros((len(ta), 3)), np.zeros(len(ta))
    else:
        open_dof = loop_dofs(split, nn - split, False)
        closed_dof = loop_dofs(split, nn - split, True)
        ud, vd, ad, pin, loss = integrate_loop(
            fem, work_arrays(fem, int(open_dof.max()) + 1), open_dof, closed_dof, closed, ta,
            coef, am, Q, tip_a, tip_b)
    nodes = xm + ud[:, :, :3]
    acc = am + accelerations_at_steps(ad, coef)[:, :, :3]
    velocity = vm + vd[:, :, :3]
    forces = fem.mass[None, :, None] * (acc - fem.gravity)
    parts = ((chain_a, qa, motion_a, slice(0, split)), (chain_b, qb, motion_b, slice(split, nn)))
    tau, cut, residual = _torques(parts, nodes, ud, forces, pin, closed, passive, tip_a, tip_b)
    results = []
    for (chain, q, motion, part), sign, k in zip(parts, (1.0, -1.0), stiffness):
        chain_forces = forces[:, part].copy()
        chain_forces[:, -1] -= sign * cut            # the pin's force on this chain's tip
        results.append(_chain_result(chain, k, ta, q, motion, nodes[:, part], ud[:, part],
                                     velocity[:, part], acc[:, part], chain_forces,
                                     tau[:, :na] if sign > 0 else tau[:, na:]))
    joined = np.where(closed, np.linalg.norm(nodes[:, tip_a] - nodes[:, tip_b], axis=1), 0.0)
    return ClosedLoopDynamics(
        t=ta, joint_names=names, tau=tau, cut_force=cut, residual=residual,
        gap=float(joined.max()), q=np.hstack([r.trajectory.q for r in results]),
        tip_deflection=np.concatenate([r.tip_deflection for r in results], axis=1),
        nodes=nodes, energy=sum(r.trajectory.energy for r in results), closed=closed,
        grasp_loss=loss, chain_a=results[0], chain_b=results[1])


def _check_chains(chain_a, chain_b, active):
    """Check the two chains and the active joints; return ``(names, passive, rigid)``."""
    for chain in (chain_a, chain_b):
        if not isinstance(chain, FlexibleArm):
            raise TypeError(f'chains must be FlexibleArm, got {type(chain).__name__}')
    names = tuple(chain_a.joint_names) + tuple(chain_b.joint_names)
    if len(set(names)) != len(names):
        raise ValueError(f'the chains share joint names: {", ".join(names)}; name them apart')
    unknown = [j for j in active if j not in names]
    if unknown:
        raise ValueError(f'active joint(s) {", ".join(unknown)} are in neither chain (joints: '
                         f'{", ".join(names)})')
    if not np.allclose(chain_a.model.gravity, chain_b.model.gravity):
        raise ValueError(f'the chains have different gravity: {chain_a.model.gravity} and '
                         f'{chain_b.model.gravity}')
    passive = [i for i, j in enumerate(names) if j not in active]
    rigid = chain_a.rigid and chain_b.rigid
    if rigid and not passive:
        raise ValueError('every joint is active and both chains are rigid: nothing decides the '
                         'cut force (make a joint passive, or a link flexible)')
    return names, passive, rigid


def _closed_targets(chain_a, chain_b, t, q_a, q_b, dt, closed, passive, tolerance):
    """
    Both chains' targets on one grid, their rigid motion, and where the loop is closed.

    Returns ``(t, (q_a, q_b), (motion_a, motion_b), closed)``; refuses ``passive`` joints (by
    name) while open, and targets whose tips do not meet while closed, naming the step.
    """
    t0 = np.asarray(t, dtype=float)
    ta, qa, qda, qdda = _target(chain_a, t0, q_a, dt)
    tb, qb, qdb, qddb = _target(chain_b, t0, q_b, dt)
    closed = _schedule(closed, t0, ta)
    if passive and not closed.all():
        s = int(np.argmin(closed))
        raise ValueError(f'passive joint(s) {", ".join(passive)} with the loop open at step {s} '
                         f'(t = {ta[s]:g} s): nothing would hold them')
    for chain, q in ((chain_a, qa), (chain_b, qb)):
        check_step(chain, float(np.max(np.diff(ta))), q[0])
    motion_a, motion_b = rigid_motion(chain_a, qa, qda, qdda), rigid_motion(chain_b, qb, qdb, qddb)
    tip_a = len(chain_a.node_mass) - 1
    tips = motion_a[0][:, tip_a] - motion_b[0][:, -1]
    gaps = np.where(closed, np.linalg.norm(tips, axis=1), 0.0)
    if gaps.max() > tolerance:
        s = int(np.argmax(gaps))
        raise ValueError(f'the chains do not close: their tips are {gaps[s]:.3g} m apart at step '
                         f'{s} (t = {ta[s]:g} s); q_a and q_b must satisfy the loop closure')
    return ta, (qa, qb), (motion_a, motion_b), closed


def _stand_ins(chain_a, chain_b, k_a, k_b):
    """
    Element stiffness of both chains, an all-rigid chain's stand-in on the other's scale.

    A rigid link's stiffness is a multiple of the stiffest flexible element of its arm (the
    limit of infinite stiffness kept finite, ``FlexibleArm``); an arm with no flexible link has
    no scale of its own, and in a loop takes the other chain's.
    """
    scales = []
    for chain, k in ((chain_a, k_a), (chain_b, k_b)):
        flexible = [not chain.links[link].rigid for link in chain.element_link]
        scales.append(np.abs(k[flexible]).max() if any(flexible) else None)
    out = []
    for chain, k, other in ((chain_a, k_a, scales[1]), (chain_b, k_b, scales[0])):
        if chain.rigid and other is not None:
            k = k * (_RIGID_FACTOR * other / np.abs(k).max())
        out.append(k)
    return out


def _schedule(closed, t, grid):
    """Put ``closed`` on the integration grid: every sample by default, else its last one."""
    if closed is None:
        return np.ones(grid.size, dtype=bool)
    closed = np.asarray(closed, dtype=bool).reshape(-1)
    if closed.size != t.size:
        raise ValueError(f'closed has {closed.size} samples but t has {t.size}')
    return closed[np.clip(np.searchsorted(t, grid + 1e-12, side='right') - 1, 0, t.size - 1)]


def _torques(parts, nodes, ud, forces, pin, closed, passive, tip_a, tip_b):
    """
    Joint torques ``(T, n)``, the pin force on chain a's tip ``(T, 3)``, the passive residual.

    ``tau = tau_0 + G lambda`` is linear in the force ``lambda`` on a's tip (``-lambda`` on
    b's).  ``lambda`` is the integration's (``-pin``), moved by the least change that makes the
    passive joints' torques zero (eq. 12).
    """
    T = nodes.shape[0]
    n = sum(chain.n for chain, *_ in parts)
    tau = np.zeros((T, n))
    cut = np.zeros((T, 3))
    residual = 0.0
    for s in range(T):
        base = np.zeros(n)
        G = np.zeros((n, 3))
        column = 0
        for (chain, _, motion, part), sign, tip in zip(parts, (1.0, -1.0), (tip_a, tip_b)):
            x, u, F = nodes[s, part], ud[s, part], forces[s, part]
            axes = motion[4][s]
            out = np.zeros(chain.n)
            torques_at(x, F, u, axes, chain.joint_node, chain.model.joint_type, out)
            base[column:column + chain.n] = out
            for j in range(3):
                unit = np.zeros_like(F)
                unit[-1, j] = -sign          # the joints hold the pin's pull: F - lambda
                torques_at(x, unit, u, axes, chain.joint_node, chain.model.joint_type, out)
                G[column:column + chain.n, j] = out
            column += chain.n
        if not closed[s]:
            tau[s] = base
            continue
        lam = -pin[s]
        if passive:
            Gp = G[passive]
            lam = lam + np.linalg.lstsq(Gp, -base[passive] - Gp @ lam, rcond=None)[0]
        tau[s] = base + G @ lam
        cut[s] = lam
        if passive:
            residual = max(residual, float(np.abs(tau[s, passive]).max()))
    return tau, cut, residual


def _chain_result(chain, stiffness, t, q, motion, nodes, ud, velocity, acc, forces, tau):
    """Make one chain's :class:`FlexibleDynamics` inside the loop, with its energy."""
    xm, _, _, Q, axes = motion
    axial, shear = section_forces(nodes, forces, Q, chain.element_nodes)
    kinetic = 0.5 * np.einsum('k,tkj,tkj->t', chain.node_mass, velocity, velocity)
    potential = -np.einsum('k,tkj,j->t', chain.node_mass, nodes, chain.model.gravity)
    # each element's deformation in its own axes, ``G^T u``, and its strain energy
    a, b = chain.element_nodes[:, 0], chain.element_nodes[:, 1]
    u = np.concatenate([ud[:, a], ud[:, b]], axis=2).reshape(t.size, -1, 4, 3)
    local = np.einsum('tecd,tebc->tebd', Q, u).reshape(t.size, -1, 12)
    strain = 0.5 * np.einsum('tei,eij,tej->t', local, stiffness, local)
    traj = FlexibleTrajectory(
        arm=chain, t=t, q_target=q, q=reached_angles(chain, q, xm, nodes, axes),
        nodes_target=xm, nodes=nodes, deformation=ud, velocity=velocity, acceleration=acc,
        tip_deflection=ud[:, chain.tip_node, :3], axial_force=axial, shear_force=shear,
        energy=np.stack([kinetic, potential, strain], axis=1), element_axes=Q, joint_axes=axes)
    return FlexibleDynamics(t=t, tau=tau, tip_deflection=traj.tip_deflection, axial_force=axial,
                            nodes=nodes, nodal_forces=forces, trajectory=traj)
