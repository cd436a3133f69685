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
Flexible trajectories and joint torques of flexible-link arms (Isobe & Imaizumi, seed 002).

Two schemes on one finite-element model (:class:`~manipulator_dynamics.FlexibleArm`):

* the kinematics solution scheme (seed section 3): the rigid target motion gives the operation
  displacements ``u_m`` of every node; the incremental equation of motion (eq. 15)
  ``[M]{u''} + [C]{u_d'} + [K]{du_d} = {F} - {R}`` is integrated by Newmark's beta method
  (delta = 1/2, beta = 1/4) for the deformations ``u_d``; the flexible trajectory is
  ``u = u_m + u_d`` (eq. 16);
* the parallel solution scheme of inverse dynamics (seed section 2): the nodal forces ``{P}``
  (updated incrementally, eqs. 13-14) become joint torques through ``{tau} = [L][T]{P}``
  (eqs. 2-11).

The target's velocities and accelerations come from a cubic spline through its samples, and the
nodal forces are accumulated from increments, as in the seed: the torques of a rigid arm approach
the exact Newton-Euler torques as the steps get finer (the seed's Fig. 3).

Modelling choices (documented, not hidden):

* The operating motion holds the joints at their target angles: the motors are stiff, so for the
  deformation every joint is locked and the first joint clamped (a one-link arm vibrates as a
  clamped-free beam).
* Deformations are small relative to the rigid motion: element stiffness follows the link's frame
  (co-rotational), and the internal force ``{R}_t`` is evaluated in the frame at ``t + dt``.
  Geometric (centrifugal) stiffening is not modelled.
* Lumped masses carry no rotary inertia, so nodal moments ``F_phi`` are zero.
* The arm starts in static equilibrium under gravity and the target's initial acceleration.
"""

from dataclasses import dataclass

from numba import njit
import numpy as np

from ._kinematics import JIT, joint_poses
from .flexible_arm import FlexibleArm
from .model import PRISMATIC

#: Steps per period of the first bending mode below which the time step is refused: Newmark's
#: trapezoidal rule lengthens a period by about (w dt)^2 / 12, 3 % at 10 steps per period.
MIN_STEPS_PER_PERIOD = 10


@dataclass(frozen=True, eq=False)
class FlexibleTrajectory:
    """
    The flexible trajectory of an arm following a rigid target (the kinematics scheme).

    Attributes
    ----------
    arm : FlexibleArm
    t : ndarray, shape (T,)
        Times of the steps, s.
    q_target : ndarray, shape (T, n)
        The rigid target joint positions.
    q : ndarray, shape (T, n)
        The joint angles the flexible arm actually reaches: the target plus the change, about each
        joint axis, of the chord rotation (joint node to link tip) across the joint.
    nodes_target, nodes : ndarray, shape (T, N, 3)
        Node positions of the rigid target (``u_m``) and of the flexible arm (``u_m + u_d``), in
        the base frame, m.
    deformation : ndarray, shape (T, N, 6)
        ``u_d``: node deformation, translation (m) then small rotation (rad), base frame.
    velocity, acceleration : ndarray, shape (T, N, 3)
        Total node velocity and acceleration (rigid motion plus deformation), base frame.
    tip_deflection : ndarray, shape (T, n, 3)
        Displacement of each link's tip from its rigid target, base frame, m.
    axial_force : ndarray, shape (T, E)
        Axial force in each element, tension positive, N.
    shear_force : ndarray, shape (T, E, 2)
        Shear force in each element along its ``y`` and ``z`` axes, N.
    energy : ndarray, shape (T, 3)
        Kinetic, gravitational potential and strain energy, J.

    """

    arm: FlexibleArm
    t: np.ndarray
    q_target: np.ndarray
    q: np.ndarray
    nodes_target: np.ndarray
    nodes: np.ndarray
    deformation: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    tip_deflection: np.ndarray
    axial_force: np.ndarray
    shear_force: np.ndarray
    energy: np.ndarray
    # per step, for the parallel scheme: element axes and joint axes in the base frame
    element_axes: np.ndarray
    joint_axes: np.ndarray


@dataclass(frozen=True, eq=False)
class FlexibleDynamics:
    """
    Joint torques of a flexible arm by the parallel solution scheme.

    Attributes
    ----------
    t : ndarray, shape (T,)
    tau : ndarray, shape (T, n)
        Joint torques (N m; N for prismatic joints), in the model's joint order.
    tip_deflection : ndarray, shape (T, n, 3)
    axial_force : ndarray, shape (T, E)
    nodes : ndarray, shape (T, N, 3)
    nodal_forces : ndarray, shape (T, N, 3)
        ``F_k``: the force each node needs, ``m_k (u''_k - g)`` (the nodal part of ``{P}``).
    trajectory : FlexibleTrajectory
        Everything the kinematics scheme computed.

    """

    t: np.ndarray
    tau: np.ndarray
    tip_deflection: np.ndarray
    axial_force: np.ndarray
    nodes: np.ndarray
    nodal_forces: np.ndarray
    trajectory: FlexibleTrajectory


# -------------------------------------------------------------------------------------------------
# Public functions
# -------------------------------------------------------------------------------------------------

def flexible_trajectory(arm, t, q, *, dt=None) -> FlexibleTrajectory:
    """
    Integrate the flexible arm along a rigid target trajectory (the kinematics scheme).

    Parameters
    ----------
    arm : FlexibleArm
        The flexible arm (:meth:`FlexibleArm.planar`, :meth:`FlexibleArm.from_yaml`, ...).
    t : array-like, shape (T,)
        Strictly increasing times, s.
    q : array-like, shape (T, n)
        Target joint positions at ``t``, in ``arm.joint_names`` order.  Velocities and
        accelerations at the start come from a cubic spline through the samples; from there the
        scheme works on increments, as the seed does.
    dt : float, optional
        Resample the target on a uniform grid of this step (the spline above) before integrating;
        default: integrate on the samples ``t`` themselves.

    Raises
    ------
    ValueError
        Shapes that do not match the arm, non-finite values, times that are not strictly
        increasing, fewer than 3 samples, or a step too coarse for the arm's first bending mode
        (fewer than :data:`MIN_STEPS_PER_PERIOD` steps per period).

    """
    if not isinstance(arm, FlexibleArm):
        raise TypeError(f'arm must be a FlexibleArm, got {type(arm).__name__}')
    t, q, qd, qdd = _target(arm, t, q, dt)
    _check_step(arm, t, q)
    model = arm.model
    xm, vm, am, Q, axes = _rigid_motion(arm, q, qd, qdd)
    nn = len(arm.node_mass)
    alpha_mass = np.zeros(nn)
    for (a, b), link, (alpha, _) in zip(arm.element_nodes, arm.element_link, arm.element_damping):
        m = arm.links[link].mass / arm.links[link].elements / 2
        alpha_mass[a] += alpha * m
        alpha_mass[b] += alpha * m
    ud, vd, ad, strain = _newmark(t, am, Q, arm.node_mass, alpha_mass, arm.element_nodes,
                                  arm.element_stiffness,
                                  np.ascontiguousarray(arm.element_damping[:, 1]),
                                  model.gravity, arm.rigid)
    v = vm + vd[:, :, :3]
    acc = am + ad
    nodes = xm + ud[:, :, :3]
    forces = arm.node_mass[None, :, None] * (acc - model.gravity)
    axial, shear = _section_forces(nodes, forces, Q, arm.element_nodes)
    kinetic = 0.5 * np.einsum('k,tkj,tkj->t', arm.node_mass, v, v)
    potential = -np.einsum('k,tkj,j->t', arm.node_mass, nodes, model.gravity)
    return FlexibleTrajectory(
        arm=arm, t=t, q_target=q, q=_reached(arm, q, xm, nodes, axes), nodes_target=xm,
        nodes=nodes, deformation=ud, velocity=v, acceleration=acc,
        tip_deflection=ud[:, arm.tip_node, :3], axial_force=axial, shear_force=shear,
        energy=np.stack([kinetic, potential, strain], axis=1), element_axes=Q, joint_axes=axes)


def flexible_inverse_dynamics(arm, t, q, *, dt=None) -> FlexibleDynamics:
    """
    Joint torques that move a flexible arm along a target: both schemes of the seed in one.

    The kinematics scheme (:func:`flexible_trajectory`) gives the flexible trajectory; the
    parallel scheme turns its nodal forces into joint torques, ``{tau} = [L][T]{P}``, with ``{P}``
    updated by increments (eqs. 13-14).  For an arm with every link rigid this is the seed's
    rigid-body inverse dynamics.  Parameters and errors as :func:`flexible_trajectory`.
    """
    traj = flexible_trajectory(arm, t, q, dt=dt)
    return parallel_inverse_dynamics(traj)


def parallel_inverse_dynamics(traj: FlexibleTrajectory) -> FlexibleDynamics:
    """Joint torques of a flexible trajectory by the parallel solution scheme (eqs. 2-14)."""
    arm = traj.arm
    model = arm.model
    tau, forces = _parallel_scheme(traj.nodes, traj.acceleration, traj.deformation,
                                   traj.joint_axes, arm.node_mass, model.gravity,
                                   arm.joint_node, model.joint_type)
    return FlexibleDynamics(t=traj.t, tau=tau, tip_deflection=traj.tip_deflection,
                            axial_force=traj.axial_force, nodes=traj.nodes, nodal_forces=forces,
                            trajectory=traj)


def parallel_matrices(traj: FlexibleTrajectory, step: int):
    """
    ``[L], [T], {P}`` of the seed's eq. (2) at one step, so that ``tau = L @ T @ P``.

    The seed writes one centre-of-gravity node per link; with several nodes per link every node
    ``k`` plays that role, with ``{P_k} = (F_k, sum_{h>k} F_h, F_phi_k)`` (eq. 13, base frame),
    ``[T]`` the direction cosines of element ``k`` (the element ending at node ``k``, eq. 6), and
    ``[L] = [T_Lambda][Lambda]`` (eqs. 7-11): ``[Lambda_k]`` holds the element's vector in its own
    axes (the seed's ``l_iC`` and ``l_i``; the deformed one for a flexible link), and
    ``[T_Lambda]`` takes element axes back to the axis of each joint inboard of the node.

    Returns
    -------
    L : ndarray, shape (n, 9 N)
    T : ndarray, shape (9 N, 9 N)
    P : ndarray, shape (9 N,)

    """
    arm = traj.arm
    model = arm.model
    nn = len(arm.node_mass)
    x = traj.nodes[step]
    f = arm.node_mass[:, None] * (traj.acceleration[step] - model.gravity)
    outboard = np.cumsum(f[::-1], axis=0)[::-1]         # sum over h >= k
    P = np.zeros((nn, 9))
    P[:, 0:3] = f
    P[:-1, 3:6] = outboard[1:]
    # element ending at node k (k >= 1), and its axes in the base frame
    A = np.tile(np.eye(3), (nn, 1, 1))
    lam = np.zeros((nn, 3, 9))
    for e, (a, b) in enumerate(arm.element_nodes):
        A[b] = traj.element_axes[step, e].T                 # base -> element axes (eq. 6b)
        ell = A[b] @ (x[b] - x[a])                          # element vector in element axes
        sk = _skew(ell)
        lam[b] = np.hstack([sk, sk, np.eye(3)])             # eq. 11, generalised
    T = np.zeros((9 * nn, 9 * nn))
    for k in range(nn):
        for j in range(3):
            T[9 * k + 3 * j:9 * k + 3 * j + 3, 9 * k + 3 * j:9 * k + 3 * j + 3] = A[k]
    L = np.zeros((arm.n, 9 * nn))
    axes = _deformed_axes(traj.joint_axes[step], traj.deformation[step], arm.joint_node)
    for i in range(arm.n):
        first = arm.joint_node[i] + 1
        if model.joint_type[i] == PRISMATIC:
            # the force along the axis: F and sum F of the first node beyond the joint
            if first < nn:
                L[i, 9 * first:9 * first + 3] = axes[i] @ A[first].T
                L[i, 9 * first + 3:9 * first + 6] = axes[i] @ A[first].T
            continue
        for k in range(first, nn):
            L[i, 9 * k:9 * k + 9] = axes[i] @ A[k].T @ lam[k]      # [T_ik] = A_i A_k^T
    return L, T, P.reshape(-1)


@dataclass(frozen=True, eq=False)
class ClosedLoopDynamics:
    """
    Joint torques of a closed loop by the parallel scheme with ``[L]`` split in blocks.

    Attributes
    ----------
    t : ndarray, shape (T,)
    joint_names : tuple of str
        Chain a's joints, then chain b's.
    tau : ndarray, shape (T, n_a + n_b)
        Joint torques; the passive joints' are zero up to :attr:`residual`.
    cut_force : ndarray, shape (T, 3)
        The force the cut joint applies to chain a's tip (base frame); chain b gets its opposite.
    residual : float
        Largest passive-joint torque left by the least-squares allocation (0 for a mechanism whose
        passive joints determine the cut force).
    gap : float
        Largest distance between the two chains' tips along the trajectory, m.

    """

    t: np.ndarray
    joint_names: tuple
    tau: np.ndarray
    cut_force: np.ndarray
    residual: float
    gap: float
    chain_a: FlexibleDynamics
    chain_b: FlexibleDynamics


def closed_loop_inverse_dynamics(chain_a, chain_b, t, q_a, q_b, active, *, dt=None,
                                 tolerance=1e-6) -> ClosedLoopDynamics:
    """
    Joint torques of a closed loop cut at a pin into two open chains (seed eq. 12).

    The loop is the two chains, both from the base, with their tips joined by a pin (the cut
    joint, which passes a force and no moment).  Each chain gets the parallel scheme of its own
    nodal forces, ``[L] = diag([L^a], [L^b])``, and the cut force ``lambda`` enters ``{P}`` of
    both with opposite signs; ``lambda`` is what makes every passive joint's torque zero (least
    squares, minimum norm where the passive joints leave a component free, e.g. out of the plane
    of a planar loop).  That fixes the torque allocation of the active joints.

    The chains follow the target motion as given: the loop's own deformation is not integrated
    (the kinematics scheme runs on open chains), so give rigid chains for a rigid loop.

    Parameters
    ----------
    chain_a, chain_b : FlexibleArm
        The two open chains of the cut loop; their tips must meet along the trajectory.
    t : array-like, shape (T,)
        Strictly increasing times, s.
    q_a, q_b : array-like, shape (T, n_a) and (T, n_b)
        Joint positions of each chain, consistent with the closure.
    active : sequence of str
        The driven joints (names of either chain); all others are passive.
    dt : float, optional
        Resample the target on a uniform grid of this step first (as in
        :func:`flexible_trajectory`).
    tolerance : float
        Largest tip-to-tip distance (m) accepted as closed.

    Raises
    ------
    ValueError
        An unknown active joint, no passive joint, chains with joints of the same name, or tips
        that do not meet (naming the step and the gap).

    """
    names = tuple(chain_a.joint_names) + tuple(chain_b.joint_names)
    if len(set(names)) != len(names):
        raise ValueError(f'the chains share joint names: {", ".join(names)}; name them apart')
    unknown = [j for j in active if j not in names]
    if unknown:
        raise ValueError(f'active joint(s) {", ".join(unknown)} are in neither chain (joints: '
                         f'{", ".join(names)})')
    passive = [i for i, j in enumerate(names) if j not in active]
    if not passive:
        raise ValueError('every joint is active: nothing decides the cut force')
    a = parallel_inverse_dynamics(flexible_trajectory(chain_a, t, q_a, dt=dt))
    b = parallel_inverse_dynamics(flexible_trajectory(chain_b, t, q_b, dt=dt))
    tips = a.nodes[:, -1] - b.nodes[:, -1]
    gaps = np.linalg.norm(tips, axis=1)
    if gaps.max() > tolerance:
        s = int(np.argmax(gaps))
        raise ValueError(f'the chains do not close: their tips are {gaps[s]:.3g} m apart at step '
                         f'{s} (t = {a.t[s]:g} s); q_a and q_b must satisfy the loop closure')
    tau = np.zeros((a.t.size, len(names)))
    cut = np.zeros((a.t.size, 3))
    residual = 0.0
    for s in range(a.t.size):
        blocks = []
        for result, sign in ((a, -1.0), (b, 1.0)):
            L, T, P = parallel_matrices(result.trajectory, s)
            nn = P.size // 9
            Pi = np.zeros((9 * nn, 3))
            Pi[9 * (nn - 1):9 * (nn - 1) + 3] = sign * np.eye(3)        # F of the tip node
            for k in range(nn - 1):
                Pi[9 * k + 3:9 * k + 6] = sign * np.eye(3)              # sum F beyond node k
            LT = L @ T
            blocks.append((LT @ P, LT @ Pi))
        tau0 = np.concatenate([blocks[0][0], blocks[1][0]])           # eq. 12: diag(L^a, L^b)
        G = np.vstack([blocks[0][1], blocks[1][1]])
        lam = np.linalg.lstsq(G[passive], -tau0[passive], rcond=None)[0]
        tau[s] = tau0 + G @ lam
        cut[s] = lam
        residual = max(residual, float(np.abs(tau[s, passive]).max()))
    return ClosedLoopDynamics(t=a.t, joint_names=names, tau=tau, cut_force=cut,
                              residual=residual, gap=float(gaps.max()), chain_a=a, chain_b=b)


# -------------------------------------------------------------------------------------------------
# Input checks
# -------------------------------------------------------------------------------------------------

def _target(arm, t, q, dt):
    from scipy.interpolate import CubicSpline

    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    if t.ndim != 1:
        raise ValueError(f't must be 1-D (one time per sample), got shape {t.shape}')
    if q.ndim == 1 and arm.n == 1:
        q = q[:, None]
    if q.ndim != 2 or q.shape[1] != arm.n:
        raise ValueError(f'q must have shape (T, {arm.n}): one column per joint '
                         f'({", ".join(arm.joint_names)}); got {q.shape}')
    if q.shape[0] != t.shape[0]:
        raise ValueError(f't has {t.shape[0]} samples but q has {q.shape[0]}')
    if t.shape[0] < 3:
        raise ValueError(f'a trajectory needs at least 3 samples, got {t.shape[0]}')
    if not np.all(np.isfinite(t)):
        raise ValueError(f't has a non-finite value at sample {int(np.argmin(np.isfinite(t)))}')
    bad = ~np.isfinite(q)
    if bad.any():
        s, j = np.argwhere(bad)[0]
        raise ValueError(f"q of joint '{arm.joint_names[j]}' is not finite at sample {s}")
    steps = np.diff(t)
    if np.any(steps <= 0):
        s = int(np.argmax(steps <= 0))
        raise ValueError(f'times must increase strictly: t[{s + 1}] = {t[s + 1]:g} s follows '
                         f't[{s}] = {t[s]:g} s')
    spline = CubicSpline(t, q, axis=0)
    if dt is not None:
        dt = float(dt)
        if not (dt > 0 and np.isfinite(dt)):
            raise ValueError(f'dt must be positive, got {dt:g}')
        count = int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1
        if count < 3:
            raise ValueError(f'dt = {dt:g} s leaves fewer than 3 steps in {t[-1] - t[0]:g} s')
        t = t[0] + dt * np.arange(count)
        q = spline(t)
    return t, q, spline(t, 1), spline(t, 2)


def _check_step(arm, t, q):
    if arm.rigid:
        return
    f1 = _frequencies(arm, q[0], 1)[0]
    worst = float(np.max(np.diff(t)))
    if worst * f1 * MIN_STEPS_PER_PERIOD > 1.0 + 1e-9:
        raise ValueError(
            f'time step {worst:g} s is too coarse for the first bending mode of the arm '
            f'({f1:.4g} Hz at the start): Newmark needs at least {MIN_STEPS_PER_PERIOD} steps '
            f'per period for a period error under 3 %; use steps of at most '
            f'{1.0 / (f1 * MIN_STEPS_PER_PERIOD):.3g} s (argument dt)')


# -------------------------------------------------------------------------------------------------
# Rigid motion of the nodes (the operation displacements u_m)
# -------------------------------------------------------------------------------------------------

def _rigid_motion(arm, q, qd, qdd):
    """Node positions, velocities and accelerations of the rigid target at every step."""
    model = arm.model
    T = q.shape[0]
    nn = len(arm.node_mass)
    xm = np.empty((T, nn, 3))
    vm = np.empty((T, nn, 3))
    am = np.empty((T, nn, 3))
    Q = np.empty((T, len(arm.element_link), 3, 3))
    axes = np.empty((T, model.n, 3))
    _node_motion(model.joint_type, model.geometry, q, qd, qdd, arm.node_body, arm.node_r,
                 arm.element_link, arm.element_axes, xm, vm, am, Q, axes)
    return xm, vm, am, Q, axes


@njit(**JIT)
def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit(**JIT)
def _node_motion(jtype, geometry, q, qd, qdd, node_body, node_r, element_link, element_axes,
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


# -------------------------------------------------------------------------------------------------
# The kinematics scheme: Newmark's beta method on the incremental equation of motion (eq. 15)
# -------------------------------------------------------------------------------------------------

BAND = 11       # half-bandwidth: an element couples 12 consecutive degrees of freedom


@njit(**JIT)
def _element_global(Qe, k, out):
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
def _band_solve(B, rhs):
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


@njit(**JIT)
def _assemble(Qs, nodes, kloc, beta, c_k, B, ud, vd, force, kg):
    """
    Add ``(1 + c_k beta) K`` into band ``B``; subtract ``K ud - beta K vd`` from ``force``.

    Node ``k >= 1`` owns degrees of freedom ``6 (k - 1) .. 6 k - 1``; node 0 is clamped.  Each
    element's stiffness in the base frame is left in ``kg (E, 12, 12)`` for :func:`_strain`.
    """
    for e in range(nodes.shape[0]):
        _element_global(Qs[e], kloc[e], kg[e])
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
def _strain(kg, nodes, ud):
    """Strain energy ``ud^T K ud / 2`` from the element stiffnesses :func:`_assemble` left."""
    strain = 0.0
    for e in range(nodes.shape[0]):
        a = nodes[e, 0]
        for r in range(12):
            ur = ud[a + r // 6, r % 6]
            for c in range(12):
                strain += 0.5 * ur * kg[e, r, c] * ud[a + c // 6, c % 6]
    return strain


@njit(**JIT)
def _newmark(t, am, Q, mass, alpha_mass, nodes, kloc, beta, gravity, rigid):
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
    _assemble(Q[0], nodes, kloc, beta, 0.0, B, zero, zero, rhs, kg)
    if not _band_solve(B, rhs):
        raise ValueError('the stiffness matrix is not positive definite')
    for k in range(1, nn):
        for j in range(6):
            ud[0, k, j] = rhs[6 * (k - 1) + j]
    strain[0] = _strain(kg, nodes, ud[0])
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
        _assemble(Q[s + 1], nodes, kloc, beta, c1, B, ud[s], vd[s], rhs, kg)
        if not _band_solve(B, rhs):
            raise ValueError('the effective stiffness matrix is not positive definite')
        for k in range(1, nn):
            for j in range(6):
                du = rhs[6 * (k - 1) + j]
                ud[s + 1, k, j] = ud[s, k, j] + du
                vd[s + 1, k, j] = c1 * du - vd[s, k, j]
                if j < 3:
                    ad[s + 1, k, j] = c0 * (du - h * vd[s, k, j]) - ad[s, k, j]
        strain[s + 1] = _strain(kg, nodes, ud[s + 1])
    return ud, vd, ad, strain


def _frequencies(arm, q, count):
    """Return natural frequencies (Hz), joints locked at ``q``, rigid links' stand-ins excluded."""
    from scipy.linalg import eigh

    nn = len(arm.node_mass)
    xm = np.empty((1, nn, 3))
    Q = np.empty((1, len(arm.element_link), 3, 3))
    axes = np.empty((1, arm.n, 3))
    model = arm.model
    zero = np.zeros((1, arm.n))
    _node_motion(model.joint_type, model.geometry, q[None, :], zero, zero, arm.node_body,
                 arm.node_r, arm.element_link, arm.element_axes, xm, np.empty_like(xm),
                 np.empty_like(xm), Q, axes)
    ndof = 6 * (nn - 1)
    K = np.zeros((ndof + 6, ndof + 6))
    kg = np.empty((12, 12))
    for e, (a, b) in enumerate(arm.element_nodes):
        _element_global(Q[0, e], arm.element_stiffness[e], kg)
        K[6 * a:6 * a + 12, 6 * a:6 * a + 12] += kg
    K = K[6:, 6:]
    t = np.array([6 * k + j for k in range(nn - 1) for j in range(3)])
    r = np.array([6 * k + j for k in range(nn - 1) for j in range(3, 6)])
    condensed = K[np.ix_(t, t)] - K[np.ix_(t, r)] @ np.linalg.solve(K[np.ix_(r, r)],
                                                                    K[np.ix_(r, t)])
    m = np.repeat(arm.node_mass[1:], 3)
    w2 = eigh(condensed, np.diag(m), eigvals_only=True)
    f = np.sqrt(np.clip(w2, 0.0, None)) / (2 * np.pi)
    rigid = [link for link in arm.links if link.rigid]
    if rigid and not arm.rigid:
        # modes of the rigid stand-ins are orders of magnitude above the flexible ones
        f = f[f < 1e3 * f[0]]
    return f if count is None else f[:count]


# -------------------------------------------------------------------------------------------------
# The parallel solution scheme (eqs. 1-14)
# -------------------------------------------------------------------------------------------------

@njit(**JIT)
def _parallel_scheme(x, acc, ud, axes, mass, gravity, joint_node, jtype):
    """
    Joint torques from nodal forces, step by step, with {P} updated by increments.

    At each step the nodal forces grow by ``{dp_k} = m_k {du''_k}`` (eqs. 13-14); the torque of
    joint ``i`` is then eq. (1) summed over the nodes outboard of it: the moments of their forces
    about the (deformed) joint, ``sum (x_k - x_J) x F_k``, projected on the (deformed) joint axis.
    Summed from the tip inwards, that is ``[L][T]{P}`` without forming the matrices.
    """
    T, nn = x.shape[0], x.shape[1]
    n = joint_node.shape[0]
    tau = np.zeros((T, n))
    forces = np.zeros((T, nn, 3))
    F = np.zeros((nn, 3))
    for k in range(nn):
        for j in range(3):
            F[k, j] = mass[k] * (acc[0, k, j] - gravity[j])
    Fsum = np.zeros(3)
    Msum = np.zeros(3)
    for s in range(T):
        if s > 0:
            for k in range(nn):
                for j in range(3):
                    F[k, j] += mass[k] * (acc[s, k, j] - acc[s - 1, k, j])     # eq. 14
        forces[s] = F
        Fsum[:] = 0.0
        Msum[:] = 0.0
        k = nn - 1
        for i in range(n - 1, -1, -1):
            J = joint_node[i]
            while k > J:                 # add the nodes outboard of joint i not yet summed
                f0, f1, f2 = F[k, 0], F[k, 1], F[k, 2]
                Fsum[0] += f0
                Fsum[1] += f1
                Fsum[2] += f2
                Msum[0] += x[s, k, 1] * f2 - x[s, k, 2] * f1
                Msum[1] += x[s, k, 2] * f0 - x[s, k, 0] * f2
                Msum[2] += x[s, k, 0] * f1 - x[s, k, 1] * f0
                k -= 1
            # joint axis turned by the small rotation of its node
            a0, a1, a2 = axes[s, i, 0], axes[s, i, 1], axes[s, i, 2]
            r0, r1, r2 = ud[s, J, 3], ud[s, J, 4], ud[s, J, 5]
            b0 = a0 + r1 * a2 - r2 * a1
            b1 = a1 + r2 * a0 - r0 * a2
            b2 = a2 + r0 * a1 - r1 * a0
            norm = np.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
            b0, b1, b2 = b0 / norm, b1 / norm, b2 / norm
            if jtype[i] == PRISMATIC:
                tau[s, i] = b0 * Fsum[0] + b1 * Fsum[1] + b2 * Fsum[2]
            else:
                p0, p1, p2 = x[s, J, 0], x[s, J, 1], x[s, J, 2]
                m0 = Msum[0] - (p1 * Fsum[2] - p2 * Fsum[1])
                m1 = Msum[1] - (p2 * Fsum[0] - p0 * Fsum[2])
                m2 = Msum[2] - (p0 * Fsum[1] - p1 * Fsum[0])
                tau[s, i] = b0 * m0 + b1 * m1 + b2 * m2
    return tau, forces


def _section_forces(nodes, forces, Q, element_nodes):
    """
    Axial (tension positive) and shear forces of each element, from the outboard nodal forces.

    The force the inboard part passes to the outboard part through an element is the sum of the
    nodal forces beyond it; this holds for rigid and flexible links alike.
    """
    outboard = np.cumsum(forces[:, ::-1], axis=1)[:, ::-1]     # sum over nodes h >= k
    a, b = element_nodes[:, 0], element_nodes[:, 1]
    S = outboard[:, b]                                          # (T, E, 3)
    chord = nodes[:, b] - nodes[:, a]
    chord /= np.linalg.norm(chord, axis=2, keepdims=True)
    axial = -np.einsum('tej,tej->te', chord, S)
    shear = np.einsum('tejc,tej->tec', Q[:, :, :, 1:3], S)
    return axial, shear


def _reached(arm, q, xm, nodes, axes):
    """Target joint positions plus the change of chord rotation across each revolute joint."""
    reached = q.copy()
    prev = np.zeros((q.shape[0], 3))
    for i in range(arm.n):
        a, b = arm.joint_node[i], arm.tip_node[i]
        if a == b:
            theta = prev
        else:
            c0 = xm[:, b] - xm[:, a]
            c1 = nodes[:, b] - nodes[:, a]
            cross = np.cross(c0, c1)
            sin = np.linalg.norm(cross, axis=1)
            angle = np.arctan2(sin, np.einsum('tj,tj->t', c0, c1))
            with np.errstate(invalid='ignore', divide='ignore'):
                theta = np.where(sin[:, None] > 0, cross * (angle / sin)[:, None], 0.0)
        if arm.model.joint_type[i] != PRISMATIC:
            reached[:, i] += np.einsum('tj,tj->t', axes[:, i], theta - prev)
        prev = theta
    return reached


def _deformed_axes(axes, ud, joint_node):
    """Joint axes (n, 3) turned by the small rotation of their nodes, unit length."""
    turned = axes + np.cross(ud[joint_node, 3:6], axes)
    return turned / np.linalg.norm(turned, axis=1, keepdims=True)


def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
