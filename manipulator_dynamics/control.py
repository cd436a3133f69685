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
  Coulomb friction's sign held over the step;
* :func:`command_vector`: a node's 1 kHz step in one compiled call, from a joint state's values
  as its message lays them out to the effort command in the controller's order
  (:func:`.wire.command_from_bytes` takes it from the state's CDR bytes).
"""

import bisect

from numba import njit
import numpy as np

from ._jit import ONE_STATE
from .rigid.crba import inertia_matrix
from .rigid.forward import forward_dynamics
from .rigid.kinematics import coulomb_shape_of, FRICTION, joint_poses, model_at, scratch
from .rigid.rnea import add_coupled, bias_forces, joint_friction, rnea_sample, rnea_workspace
from .rigid.status import NON_FINITE, OK

#: :func:`command_vector`'s laws: ``g(q)``; ``g(q)`` and the joints' friction at ``qd``
#: (:func:`friction_torque`); the inverse dynamics at ``(q, qd, qdd)`` (``qd`` zero where the
#: state has none).
GRAVITY, GRAVITY_FRICTION, INVERSE = 0, 1, 2
#: :func:`command_vector`'s status where some effort is beyond its limit (nothing is clamped).
BEYOND_LIMIT = -4


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


@njit(**ONE_STATE)
def command_vector(address, values, rows, law, flags, qdd, limit, order, state, tau, command):
    """
    One joint state to its effort command, in one compiled call (a node's 1 kHz step).

    ``values (k, given)``: the state's position, velocity and effort arrays (the first ``k``) as
    its message lays them out, ``rows (n,)`` which of them is each model joint's; they are
    copied into ``state (k, n)`` in the model's order.  ``tau (n,)`` is then the law ``law``
    (:data:`GRAVITY`, :data:`GRAVITY_FRICTION`, :data:`INVERSE` with ``qdd`` and rnea's
    ``flags``) at that state, and ``command`` its joints ``order`` (the controller's).

    Returns OK; NON_FINITE where a value read is not finite (nothing computed); BEYOND_LIMIT
    where some ``|tau|`` exceeds its ``limit`` (``command`` written, not clamped).  A caller
    that gets anything but OK takes its general path, which says what is wrong: this call only
    accepts.
    """
    m = model_at(address)
    n = m.parent.shape[0]
    filled = values.shape[0]
    for r in range(filled):
        for j in range(n):
            x = values[r, rows[j]]
            if not np.isfinite(x):
                return NON_FINITE
            state[r, j] = x
    zero = scratch((n,), True)
    zero[:] = 0.0
    q = state[0]
    work = rnea_workspace(n, True)
    joint_poses(m, q, work[0], work[1])
    if law == INVERSE:
        rnea_sample(m, q, state[1] if filled > 1 else zero, qdd, np.empty((0, n, 6)), 0, flags,
                    work, tau)
    else:
        rnea_sample(m, q, zero, zero, np.empty((0, n, 6)), 0, 0, work, tau)
        if law == GRAVITY_FRICTION:
            for i in range(n):
                tau[i] += joint_friction(m, i, state[1, i])
            add_coupled(m, state[1], zero, FRICTION, tau)
    beyond = False
    for i in range(n):
        beyond |= abs(tau[i]) > limit[i]
    for k in range(order.shape[0]):
        command[k] = tau[order[k]]
    return BEYOND_LIMIT if beyond else OK
