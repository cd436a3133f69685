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
Flexible trajectories and joint torques of flexible-link arms (Isobe & Imaizumi).

Two schemes on one finite-element model (:class:`~manipulator_dynamics.FlexibleArm`):

* the kinematics solution scheme (Isobe & Imaizumi, section 3): the rigid target motion gives the
  operation displacements ``u_m`` of every node; the incremental equation of motion (eq. 15)
  ``[M]{u''} + [C]{u_d'} + [K]{du_d} = {F} - {R}`` is integrated by a Newmark-family method
  (the paper's delta = 1/2, beta = 1/4 at ``spectral_radius=1``; generalized-alpha by default,
  :mod:`~manipulator_dynamics.flexible.newmark`) for the deformations ``u_d``; the flexible
  trajectory is
  ``u = u_m + u_d`` (eq. 16);
* the parallel solution scheme of inverse dynamics (Isobe & Imaizumi, section 2): the nodal forces
  ``{P}`` (updated incrementally, eqs. 13-14) become joint torques through
  ``{tau} = [L][T]{P}`` (eqs. 2-11).

The target's velocities and accelerations come from a cubic spline through its samples, and the
nodal forces are accumulated from increments, as in the seed: the torques of a rigid arm approach
the exact Newton-Euler torques as the steps get finer (Isobe & Imaizumi's Fig. 3).

Modelling choices (documented, not hidden):

* The operating motion holds the joints at their target angles: the motors are stiff, so for the
  deformation every joint is locked and the first joint clamped (a one-link arm vibrates as a
  clamped-free beam).
* Deformations are small relative to the rigid motion: element stiffness follows the link's frame
  (co-rotational); the new step's internal force is evaluated in the frame at ``t + dt``, the
  old step's kept as it was (:mod:`~manipulator_dynamics.flexible.newmark`).
  The rigid motion's axial forces stiffen the elements (geometric stiffness: centrifugal
  stiffening), unless ``geometric_stiffening=False``.
* Lumped masses carry no rotary inertia, so nodal moments ``F_phi`` are zero.
* The arm starts in static equilibrium under gravity and the target's initial acceleration.
"""

from dataclasses import dataclass

import numpy as np

from .arm import FlexibleArm
from .beam import natural_frequencies
from .motion import rigid_motion
from .newmark import (accelerations_at_steps, chain_dofs, fem_arrays, generalized_alpha, newmark,
                      SPECTRAL_RADIUS, work_arrays)
from .parallel_scheme import deformed_axes, joint_torques, reached_angles, section_forces
from ..model import PRISMATIC

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


def flexible_trajectory(arm, t, q, *, dt=None, spectral_radius=SPECTRAL_RADIUS,
                        geometric_stiffening=True) -> FlexibleTrajectory:
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
        scheme works on increments, as Isobe & Imaizumi do.
    dt : float, optional
        Resample the target on a uniform grid of this step (the spline above) before integrating;
        default: integrate on the samples ``t`` themselves.
    spectral_radius : float
        Generalized-alpha's ``rho_inf`` in [0, 1]: how much of a mode far above the step's
        resolution (axial, shear) survives a step.  1 is Isobe & Imaizumi's trapezoidal rule,
        which conserves energy exactly and lets those modes ring, aliased, for ever; the default
        0.8 damps them within tens of steps and the bending modes hardly at all
        (:mod:`~manipulator_dynamics.flexible.newmark`).
    geometric_stiffening : bool
        Add each element's geometric stiffness from its axial force (centrifugal stiffening of
        a spinning link; softening under compression).  False: the linear co-rotational model.

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
    check_step(arm, float(np.max(np.diff(t))), q[0])
    model = arm.model
    xm, vm, am, Q, axes = rigid_motion(arm, q, qd, qdd)
    fem = fem_arrays(arm, geometric_stiffening)
    dof = chain_dofs(len(arm.node_mass))
    coef = generalized_alpha(spectral_radius)
    ud, vd, ad, strain = newmark(fem, work_arrays(fem, 6 * (len(arm.node_mass) - 1)), dof, t,
                                 coef, am, Q, arm.rigid)
    v = vm + vd[:, :, :3]
    acc = am + accelerations_at_steps(ad, coef)[:, :, :3]
    nodes = xm + ud[:, :, :3]
    forces = arm.node_mass[None, :, None] * (acc - model.gravity)
    axial, shear = section_forces(nodes, forces, Q, arm.element_nodes)
    kinetic = 0.5 * np.einsum('k,tkj,tkj->t', arm.node_mass, v, v)
    potential = -np.einsum('k,tkj,j->t', arm.node_mass, nodes, model.gravity)
    return FlexibleTrajectory(
        arm=arm, t=t, q_target=q, q=reached_angles(arm, q, xm, nodes, axes), nodes_target=xm,
        nodes=nodes, deformation=ud, velocity=v, acceleration=acc,
        tip_deflection=ud[:, arm.tip_node, :3], axial_force=axial, shear_force=shear,
        energy=np.stack([kinetic, potential, strain], axis=1), element_axes=Q, joint_axes=axes)


def flexible_inverse_dynamics(arm, t, q, *, dt=None, spectral_radius=SPECTRAL_RADIUS,
                              geometric_stiffening=True) -> FlexibleDynamics:
    """
    Joint torques that move a flexible arm along a target: Isobe & Imaizumi's two schemes in one.

    The kinematics scheme (:func:`flexible_trajectory`) gives the flexible trajectory; the
    parallel scheme turns its nodal forces into joint torques, ``{tau} = [L][T]{P}``, with ``{P}``
    updated by increments (eqs. 13-14).  For an arm with every link rigid this is Isobe &
    Imaizumi's rigid-body inverse dynamics.  Parameters and errors as :func:`flexible_trajectory`.
    """
    traj = flexible_trajectory(arm, t, q, dt=dt, spectral_radius=spectral_radius,
                               geometric_stiffening=geometric_stiffening)
    return parallel_inverse_dynamics(traj)


def parallel_inverse_dynamics(traj: FlexibleTrajectory) -> FlexibleDynamics:
    """Joint torques of a flexible trajectory by the parallel solution scheme (eqs. 2-14)."""
    arm = traj.arm
    model = arm.model
    tau, forces = joint_torques(traj.nodes, traj.acceleration, traj.deformation,
                                traj.joint_axes, arm.node_mass, model.gravity,
                                arm.joint_node, model.joint_type)
    return FlexibleDynamics(t=traj.t, tau=tau, tip_deflection=traj.tip_deflection,
                            axial_force=traj.axial_force, nodes=traj.nodes, nodal_forces=forces,
                            trajectory=traj)


def parallel_matrices(traj: FlexibleTrajectory, step: int):
    """
    ``[L], [T], {P}`` of Isobe & Imaizumi's eq. (2) at one step, so that ``tau = L @ T @ P``.

    Isobe & Imaizumi write one centre-of-gravity node per link; with several nodes per link every
    node ``k`` plays that role, with ``{P_k} = (F_k, sum_{h>k} F_h, F_phi_k)`` (eq. 13, base
    frame), ``[T]`` the direction cosines of element ``k`` (ending at node ``k``, eq. 6), and
    ``[L] = [T_Lambda][Lambda]`` (eqs. 7-11): ``[Lambda_k]`` holds the element's vector in its own
    axes (Isobe & Imaizumi's ``l_iC`` and ``l_i``; the deformed one for a flexible link), and
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
    axes = deformed_axes(traj.joint_axes[step], traj.deformation[step], arm.joint_node)
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


def check_step(arm, step, q0):
    """Refuse a ``step`` (s) under :data:`MIN_STEPS_PER_PERIOD` per first-mode period at ``q0``."""
    if arm.rigid:
        return
    f1 = natural_frequencies(arm, q0, 1)[0]
    if step * f1 * MIN_STEPS_PER_PERIOD > 1.0 + 1e-9:
        raise ValueError(
            f'time step {step:g} s is too coarse for the first bending mode of the arm '
            f'({f1:.4g} Hz at the start): Newmark needs at least {MIN_STEPS_PER_PERIOD} steps '
            f'per period for a period error under 3 %; use steps of at most '
            f'{1.0 / (f1 * MIN_STEPS_PER_PERIOD):.3g} s (argument dt)')


def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
