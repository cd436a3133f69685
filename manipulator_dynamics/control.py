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
Control laws and integration on top of the rigid-body dynamics: what the nodes run each cycle.

* :func:`friction_torque`: the URDF joint friction ``Fv qd + Fc sign(.)``, the law of every
  function of the package that adds friction;
* :func:`computed_torque`: ``tau = M(q) (qdd_d + Kp e + Kd e') + h(q, qd)`` [+ friction];
* :class:`SplineTrajectory`: a joint trajectory through timed points, sampled in a control loop;
* :func:`rk4_step`: one step of the classic Runge-Kutta scheme on the forward dynamics, with
  Coulomb friction's sign held over the step.
"""

import bisect

import numpy as np

from .rigid.crba import inertia_matrix
from .rigid.forward import forward_dynamics
from .rigid.kinematics import coulomb_shape_of
from .rigid.rnea import bias_forces


def friction_torque(model, qd, direction=None):
    """
    Joint friction ``Fv qd + Fc s(direction) + Fo``, ``direction`` defaulting to ``qd``.

    ``s`` is the sign, or ``tanh(qd / vs)`` on joints with a Coulomb velocity ``vs > 0``
    (``model.coulomb_velocity``); ``Fo`` is ``model.friction_offset``.  The same law
    :func:`~manipulator_dynamics.inverse_dynamics` adds with ``friction=True``.  A compensating
    controller may take the Coulomb sign from the *desired* velocity, which switches only at
    turning points (on the measured one it switches with the loop's delay and chatters).
    A coupled motor adds its own on its velocity ``c . qd`` (:meth:`Model.coupled_motors`).
    """
    qd = np.asarray(qd, dtype=float)
    direction = qd if direction is None else np.asarray(direction, dtype=float)
    tau = model.viscous * qd + model.coulomb * coulomb_shape(model, direction) \
        + model.friction_offset
    motors = model.coupled_motors()
    if len(motors.joints):                  # a control loop's call: nothing more without them
        for row, fv, fc, vs in zip(motors.rows, motors.viscous, motors.coulomb, motors.velocity):
            law = coulomb_shape_of(direction @ row, vs)
            tau = tau + np.multiply.outer(fv * (qd @ row) + fc * law, row)
    return tau


def coulomb_shape(model, qd):
    """Return ``s(qd)`` of each joint: ``tanh(qd / vs)`` where ``vs > 0``, else ``sign(qd)``."""
    qd = np.asarray(qd, dtype=float)
    vs = model.coulomb_velocity
    if not vs.any():
        return np.sign(qd)
    smooth = vs > 0
    return np.where(smooth, np.tanh(qd / np.where(smooth, vs, 1.0)), np.sign(qd))


def computed_torque(model, q, qd, q_d, qd_d, qdd_d, kp, kd, *, friction=False):
    """
    Compute the torque ``tau = M(q) (qdd_d + kp (q_d - q) + kd (qd_d - qd)) + h(q, qd)``.

    Parameters
    ----------
    model : Model
        The robot.
    q, qd : array-like, shape (n,)
        The measured state.
    q_d, qd_d, qdd_d : array-like, shape (n,)
        The desired state.
    kp, kd : float or array-like, shape (n,)
        Position and velocity gains (1/s^2, 1/s): a joint's error then obeys
        ``e'' + kd e' + kp e = 0``.
    friction : bool
        Add :func:`friction_torque` of the measured velocity, its Coulomb sign from ``qd_d``.

    Returns
    -------
    tau : ndarray, shape (n,)

    """
    acc = qdd_d + kp * (q_d - q) + kd * (qd_d - qd)
    tau = inertia_matrix(model, q) @ acc + bias_forces(model, q, qd)
    if friction:
        tau += friction_torque(model, qd, qd_d)
    return tau


class SplineTrajectory:
    """
    A joint trajectory through timed points, with the velocities and accelerations it needs.

    Velocities and accelerations not given come from a cubic spline through the positions,
    clamped (at rest at both ends).  :meth:`at` samples positions and velocities on the cubic
    Hermite through the points and their velocities, accelerations linearly between the points.

    Parameters
    ----------
    t : array-like, shape (T,)
        Times of the points, s, strictly increasing.  One point is held.
    q : array-like, shape (T, n)
        Positions.
    qd, qdd : array-like, shape (T, n), optional
        Velocities and accelerations at the points.

    """

    def __init__(self, t, q, qd=None, qdd=None):
        import scipy.interpolate

        t = np.asarray(t, dtype=float)
        q = np.asarray(q, dtype=float)
        if t.ndim != 1 or q.ndim != 2 or q.shape[0] != t.shape[0] or len(t) == 0:
            raise ValueError(f'a trajectory needs times (T,) and positions (T, n), got '
                             f'{t.shape} and {q.shape}')
        step = np.diff(t) <= 0
        if np.any(step):
            bad = int(np.argmax(step)) + 1
            raise ValueError(f'trajectory point {bad} does not come after point {bad - 1} '
                             '(times must increase strictly)')
        if len(t) == 1:
            t = np.array([t[0], t[0] + 1e-3])
            q = np.vstack([q, q])
            qd = qdd = None
        spline = scipy.interpolate.CubicSpline(t, q, bc_type='clamped')
        qd = spline(t, 1) if qd is None else np.asarray(qd, dtype=float)
        qdd = spline(t, 2) if qdd is None else np.asarray(qdd, dtype=float)
        self.t, self.q, self.qd, self.qdd = t, q, qd, qdd
        self.hermite = scipy.interpolate.CubicHermiteSpline(t, q, qd)
        # at() runs on every joint state: per interval, the rows of the cubic (scipy's own
        # coefficients, highest power first) and of the linear accelerations (start, slope), so
        # that one small product replaces three scipy calls (~8 us instead of ~55)
        slope = np.diff(qdd, axis=0) / np.diff(t)[:, None]
        self._rows = np.concatenate([self.hermite.c, qdd[None, :-1], slope[None]]).swapaxes(0, 1)
        self._knots = t.tolist()

    def at(self, time):
        """Desired ``(q, qd, qdd)`` at ``time`` s from the start (the last point after the end)."""
        if time >= self.t[-1]:
            return self.q[-1], np.zeros_like(self.q[-1]), np.zeros_like(self.q[-1])
        i = max(bisect.bisect_right(self._knots, time) - 1, 0)
        s = max(time - self._knots[i], 0.0)               # before the start: the first point
        weights = np.array([[s ** 3, s * s, s, 1.0, 0.0, 0.0],
                            [3 * s * s, 2 * s, 1.0, 0.0, 0.0, 0.0],
                            [0.0, 0.0, 0.0, 0.0, 1.0, s]])
        q, qd, qdd = weights @ self._rows[i]
        return q, qd, qdd


def rk4_step(model, q, qd, tau, h, *, friction=False, method='udut', f_ext=None):
    """
    One step of the classic 4th-order Runge-Kutta scheme: ``(q, qd)`` after ``h`` seconds.

    The effort ``tau`` is held over the step, and so are the external wrenches ``f_ext`` (as
    :func:`~manipulator_dynamics.forward_dynamics` takes them: link frames, fixed to the links).
    With ``friction``, the joint friction is a torque ``Fv qd + Fc s`` in the dynamics, ``s``
    the sign of each joint's velocity at the start of the step, frozen over it: a sliding
    joint's Coulomb friction is then a constant torque, no stiffer than the rest.  A joint whose
    velocity would reverse within the step sticks (velocity 0) instead: the stiffness of
    friction comes only from the sign switching, which smoothing it (a tanh over 0.01 rad/s)
    makes far too stiff for a 1 ms step on a light joint.
    """
    sliding = np.sign(qd)
    smooth = model.coulomb_velocity > 0            # a smooth law needs no freezing

    def acc(q, qd):
        applied = tau - friction_torque(model, qd, np.where(smooth, qd, sliding)) \
            if friction else tau
        return forward_dynamics(model, q, qd, applied, f_ext, method=method)

    k1q, k1v = qd, acc(q, qd)
    k2q, k2v = qd + 0.5 * h * k1v, acc(q + 0.5 * h * k1q, qd + 0.5 * h * k1v)
    k3q, k3v = qd + 0.5 * h * k2v, acc(q + 0.5 * h * k2q, qd + 0.5 * h * k2v)
    k4q, k4v = qd + h * k3v, acc(q + h * k3q, qd + h * k3v)
    q = q + h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
    qd = qd + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    if friction:
        qd = np.where((sliding * qd < 0) & ~smooth, 0.0, qd)
    return q, qd
