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
Isobe & Imaizumi's incremental scheme as a controller runs it: one target sample per step.

Their section 3 and Fig. 4: at every control sample the scheme takes the next target, advances
the deformation by one step of the Newmark-family method (eq. 15), adds the increments of the nodal
forces (eqs. 13-14) to the previous step's, and returns the joint torques (eqs. 1-11) of that
step.  Nothing looks ahead.  A sample may carry the target's velocities and accelerations (a
trajectory generator has them); then the rigid part is exact, and a rigid arm's torques are
Newton-Euler's.  A sample of positions only gets them from the samples so far, by second-order
backward differences: the torques then lag by an error that shrinks as the square of the step
(Isobe & Imaizumi's Fig. 3c, whose torques agree well from 50 to 100 steps per second of motion).

Why not Newmark's own recurrence on the node displacements, ``a_{k+1} = 4/h^2 (x_{k+1} - x_k -
h v_k) - a_k``: driven by prescribed displacements, its velocity error alternates in sign each
step and feeds the acceleration, whose error then grows in proportion to time at any step (on
the 3-link arm of Fig. 3 the torques were off by 160 % whatever the step).
"""

from dataclasses import dataclass

import numpy as np

from .arm import FlexibleArm
from .dynamics import check_step
from .motion import node_motion
from .newmark import (acceleration_at_step, chain_dofs, Deformation, fem_arrays,
                      generalized_alpha, newmark_step, SPECTRAL_RADIUS, static_start,
                      work_arrays)
from .parallel_scheme import add_force_increments, reached_angles, section_forces, torques_at
from ..rigid.kinematics import kernel_model


@dataclass(frozen=True, eq=False)
class FlexibleSample:
    """
    One step of :class:`FlexibleStream`.

    Attributes
    ----------
    t : float
        Time since the stream started, s.
    tau : ndarray, shape (n,)
        Joint torques of the step (N m; N for prismatic joints), model joint order.
    q : ndarray, shape (n,)
        The joint angles the flexible arm reaches (target plus the chord rotation across joints).
    tip_deflection : ndarray, shape (n, 3)
        Each link tip's displacement from its rigid target, base frame, m.
    axial_force : ndarray, shape (E,)
        Axial force in each element, tension positive, N.
    nodes : ndarray, shape (N, 3)
        Node positions of the flexible arm, base frame, m.

    """

    t: float
    tau: np.ndarray
    q: np.ndarray
    tip_deflection: np.ndarray
    axial_force: np.ndarray
    nodes: np.ndarray


class FlexibleStream:
    """
    The flexible arm's torques one target sample at a time (causal; state kept between calls).

    ``stream = FlexibleStream(arm, q0, dt)`` starts at rest (or at ``qd0``, ``qdd0``) in static
    equilibrium at ``q0``; then ``stream.step(q)`` (or ``stream.step(q, qd, qdd)``) once per
    control period takes the next target and returns that step's :class:`FlexibleSample`.
    ``stream.sample`` is the latest one (the start, before any step).  A target that is rejected
    (wrong length, not finite) raises ``ValueError`` naming the joint and leaves the state as it
    was.  A step costs about 40 us for Isobe & Imaizumi's 2-link arm (bench_flexible).

    Parameters
    ----------
    arm : FlexibleArm
    q0 : array-like, shape (n,)
        Joint positions at the start, ``arm.joint_names`` order.
    dt : float
        The step, s: the controller's period.  At least 10 steps per period of the arm's first
        bending mode (as :func:`~manipulator_dynamics.flexible_trajectory`).
    qd0, qdd0 : array-like, shape (n,), optional
        Joint velocities and accelerations at the start (default zero).
    spectral_radius, geometric_stiffening
        Generalized-alpha's damping of the unresolved modes and the axial forces' geometric
        stiffness, as in :func:`~manipulator_dynamics.flexible_trajectory`.

    """

    def __init__(self, arm, q0, dt, *, qd0=None, qdd0=None, spectral_radius=SPECTRAL_RADIUS,
                 geometric_stiffening=True):
        if not isinstance(arm, FlexibleArm):
            raise TypeError(f'arm must be a FlexibleArm, got {type(arm).__name__}')
        self.arm = arm
        q0 = self._target(q0, 'q0')
        qd0 = np.zeros(arm.n) if qd0 is None else self._target(qd0, 'qd0')
        qdd0 = np.zeros(arm.n) if qdd0 is None else self._target(qdd0, 'qdd0')
        dt = float(dt)
        if not (dt > 0 and np.isfinite(dt)):
            raise ValueError(f'dt must be positive and finite, got {dt:g}')
        check_step(arm, dt, q0)
        self.dt = dt
        nn, ne = len(arm.node_mass), len(arm.element_nodes)
        self._m = kernel_model(arm.model)
        self._coef = generalized_alpha(spectral_radius)
        self._fem = fem_arrays(arm, geometric_stiffening)
        self._dof = chain_dofs(nn)
        self._work = work_arrays(self._fem, 6 * (nn - 1))
        # the rigid target at one step: node positions, velocities, accelerations, frames
        self._xm, self._vm, self._am = (np.empty((1, nn, 3)) for _ in range(3))
        self._Q = np.empty((1, ne, 3, 3))
        self._axes = np.empty((1, arm.n, 3))
        self._kinematics(q0, qd0, qdd0)
        # the state: the last target samples, rigid node accelerations, deformation, nodal forces
        # (the samples before the start continue its state backwards: at rest, they are q0)
        self._history = [q0 - j * dt * qd0 + 0.5 * (j * dt) ** 2 * qdd0 for j in (2, 1, 0)]
        self._a = self._am[0].copy()
        self._ud, self._vd, self._ad = np.zeros((nn, 6)), np.zeros((nn, 6)), np.zeros((nn, 6))
        self._at = self._a.copy()          # the nodes' accelerations at the last step's time
        if not arm.rigid:
            static_start(self._fem, self._work, self._dof, self._a, self._Q[0], self._ud)
        self._F = arm.node_mass[:, None] * (self._a - arm.model.gravity)
        self.steps = 0
        self.sample = self._sample(q0, self._xm[0] + self._ud[:, :3])

    def step(self, q, qd=None, qdd=None) -> FlexibleSample:
        """
        Advance one step ``dt`` to the target ``q (n,)``; return the step's torques and shape.

        ``qd``, ``qdd`` are the target's velocities and accelerations at ``q`` if known; without
        them they come from the last samples (second-order backward differences).
        """
        q = self._target(q, 'q')
        arm, h = self.arm, self.dt
        q3, q2, q1 = self._history
        if qd is None:
            qd = (3.0 * q - 4.0 * q1 + q2) / (2.0 * h)
        else:
            qd = self._target(qd, 'qd')
        if qdd is None:
            qdd = (2.0 * q - 5.0 * q1 + 4.0 * q2 - q3) / (h * h)
        else:
            qdd = self._target(qdd, 'qdd')
        self._kinematics(q, qd, qdd)
        a1 = self._am[0].copy()
        ud1, vd1, ad1 = np.zeros_like(self._ud), np.zeros_like(self._vd), np.zeros_like(self._ad)
        if not arm.rigid:
            newmark_step(self._fem, self._work, self._dof, h, self._coef, self._a, a1, self._Q[0],
                         Deformation(self._ud, self._vd, self._ad), Deformation(ud1, vd1, ad1))
        at = a1 + acceleration_at_step(ad1[:, :3], self._ad[:, :3], self._coef)
        add_force_increments(arm.node_mass, at, self._at, self._F)                # eq. 14
        self._history = [q2, q1, q]
        self._a, self._at = a1, at
        self._ud, self._vd, self._ad = ud1, vd1, ad1
        self.steps += 1
        self.sample = self._sample(q, self._xm[0] + ud1[:, :3])
        return self.sample

    def _kinematics(self, q, qd, qdd):
        arm = self.arm
        node_motion(self._m, q[None], qd[None], qdd[None], arm.node_body, arm.node_r,
                    arm.element_link, arm.element_axes, self._xm, self._vm, self._am, self._Q,
                    self._axes)

    def _sample(self, q, nodes):
        arm = self.arm
        tau = np.empty(arm.n)
        torques_at(nodes, self._F, self._ud, self._axes[0], arm.joint_node,
                   arm.model.joint_type, tau)
        axial, _ = section_forces(nodes[None], self._F[None], self._Q, arm.element_nodes)
        reached = reached_angles(arm, q[None], self._xm, nodes[None], self._axes)[0]
        return FlexibleSample(t=self.steps * self.dt, tau=tau, q=reached,
                              tip_deflection=self._ud[arm.tip_node, :3].copy(),
                              axial_force=axial[0], nodes=nodes)

    def _target(self, q, what):
        arm = self.arm
        try:
            q = np.array(q, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f'{what} must be {arm.n} numbers (joints '
                             f'{", ".join(arm.joint_names)}), got {q!r}') from None
        if q.shape != (arm.n,):
            raise ValueError(f'{what} must have {arm.n} values (joints '
                             f'{", ".join(arm.joint_names)}), got {q.size}')
        bad = np.flatnonzero(~np.isfinite(q))
        if bad.size:
            raise ValueError(f"{what} of joint '{arm.joint_names[bad[0]]}' is not finite")
        return q
