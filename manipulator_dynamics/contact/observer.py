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
The generalised momentum observer: the external joint torques, from joint states and the model.

De Luca & Mattone (ICRA 2003); Haddadin, De Luca & Albu-Schaeffer (IEEE T-RO 2017), section IV.
With ``p = M(q) qd`` the generalised momentum, the robot's dynamics
``M qdd + C qd + g + tau_f = tau_m + tau_ext`` and ``dM/dt = C + C^T`` give

    dp/dt = tau_m + C^T qd - g - tau_f + tau_ext,

so the residual ``r = K (p - p0 - integral of (tau_m + C^T qd - g - tau_f + r))`` obeys
``dr/dt = K (tau_ext - r)``: each joint's estimate is the external torque through a first-order
lag of time constant ``1 / K_i``.  It needs no acceleration and no inverse of M; ``C^T qd`` comes
from :func:`~manipulator_dynamics.coriolis_matrix` (exact, Christoffel-consistent), ``tau_f``
from the model's friction law (identified, or the URDF's), ``tau_m`` is what the joints apply:
a driver's ``effort``.

Discretisation.  Between two states ``k-1, k`` taken ``dt`` apart, the momentum balance gives
the mean external torque over the interval,

    u = (p_k - p_{k-1}) / dt - tau_m,k - (s_k + s_{k-1}) / 2,   s = C^T qd - g - tau_f,

the state's terms integrated by the trapezoid rule and the joints' effort as a driver reports
it: ``tau_m,k`` is what the joints applied since the last state (ros2_control reads back the
torque its last write commanded and held; sim_node publishes the command it held over the
step).  Averaging the efforts instead puts half of each step's change of command into the
estimate: 0.14 N m on a pushed panda under stiff computed torque, against 0.006 N m so.  The
lag is then advanced exactly for an input held over the interval (zero-order hold):

    r_k = a r_{k-1} + (1 - a) u,   a = exp(-K dt).

Why this one and not forward Euler (``r_k = r_{k-1} + K dt (u - r_{k-1})``, the usual one):
it is stable and exact in steady state for any ``K dt`` (Euler's is unstable past
``K dt = 2`` and off by ``K dt / 2`` before that), and it takes each interval as it comes, so a
log whose samples are 0.7-8.8 ms apart, or a driver that drops a state, is handled without a
fixed period.  A state with the same stamp as the last (a logger's repeat) carries nothing new
and is skipped.
"""

from numba import njit
import numpy as np

from .._inputs import per_joint, states, vectors
from .._jit import FLOAT, INLINE, INT, JIT, ONE_STATE, OUT_VECTOR, Signature, VECTOR
from ..rigid.coriolis import coriolis_sample, coriolis_workspace, dot6, inertia_times
from ..rigid.kinematics import (_row, all_finite, ARMATURE, FRICTION, kernel_model, model_at,
                                scratch)
from ..rigid.rnea import joint_friction
from ..rigid.status import BAD_VECTOR, check, NON_FINITE, OK

#: 1/s: the default gain of every joint (a time constant of 20 ms).
DEFAULT_GAIN = 50.0


def observer_gains(model, gain):
    """
    Return the gains ``K (n,)`` in 1/s: one value for every joint, or one per joint.

    Raises ``ValueError`` naming the joint whose gain is not a finite positive number.
    """
    return per_joint(model, gain, 'observer gain', '1/s')


@njit(**INLINE)
def momentum_sample(m, q, qd, flags, work, C, p, s):
    """
    Fill ``p = M(q) qd`` and ``s = C^T qd - g(q) [- tau_f]`` for one state (``C (n, n)``).

    From one Coriolis pass (:func:`.coriolis_sample`): its base-frame composites also give
    ``M[j, k] = S_j . Ic_k S_k`` (``j`` on k's root path) and ``g_j = S_j . Ic_j a0`` with
    ``a0 = (0, -gravity)`` the base's acceleration, so M and g cost a dot product an entry.
    ``flags``: :data:`ARMATURE` adds ``Ia qd`` to ``p``, :data:`FRICTION` subtracts the
    model's friction law at ``qd``.
    """
    coriolis_sample(m, q, qd, work, C)
    S, Ic, tmp = work[4][0], work[5], work[7]
    y, a0 = tmp[0], tmp[1]
    parent = m.parent
    n = parent.shape[0]
    a0[0], a0[1], a0[2] = 0.0, 0.0, 0.0
    a0[3], a0[4], a0[5] = -m.gravity[0], -m.gravity[1], -m.gravity[2]
    for k in range(n):
        p[k] = m.armature[k] * qd[k] if flags & ARMATURE else 0.0
        acc = 0.0
        for j in range(n):                          # (C^T qd)_k
            acc += C[j, k] * qd[j]
        s[k] = acc
    for k in range(n):
        inertia_times(Ic[k], S[k], y)               # y = Ic_k S_k: column k of M, spatially
        p[k] += dot6(S[k], y) * qd[k]
        j = parent[k]
        while j >= 0:
            v = dot6(S[j], y)                       # M[j, k] = M[k, j]
            p[j] += v * qd[k]
            p[k] += v * qd[j]
            j = parent[j]
        inertia_times(Ic[k], a0, y)
        s[k] -= dot6(S[k], y)                       # g_k
        if flags & FRICTION:
            s[k] -= joint_friction(m, k, qd[k])


@njit(**JIT)
def momentum_kernel(m, q, qd, flags, p, s):
    """Fill ``p, s (N, n)`` for each sample (:func:`momentum_sample`); return a status."""
    if not (all_finite(q) and all_finite(qd)):
        return NON_FINITE
    n = m.parent.shape[0]
    work, C = coriolis_workspace(n), np.empty((n, n))
    for k in range(p.shape[0]):
        momentum_sample(m, _row(k, q), _row(k, qd), flags, work, C, p[k], s[k])
    return OK


@njit(**ONE_STATE)
def observer_vector(address, q, qd, tau, dt, gain, flags, r, p, s):
    """
    One state of the observer (the control-loop path): the terms, then the lag's step.

    ``p, s`` hold the last state's terms and take this one's; with ``dt > 0`` the residual ``r``
    advances (module docstring).  BAD_VECTOR for a vector of the wrong length or a non-finite
    value.
    """
    m = model_at(address)
    n = m.parent.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n:
        return BAD_VECTOR
    for i in range(n):
        if not (np.isfinite(q[i]) and np.isfinite(qd[i]) and np.isfinite(tau[i])):
            return BAD_VECTOR
    p_new, s_new = scratch((n,), True), scratch((n,), True)
    momentum_sample(m, q, qd, flags, coriolis_workspace(n, True), scratch((n, n), True), p_new,
                    s_new)
    if dt > 0.0:
        for i in range(n):
            a = np.exp(-gain[i] * dt)
            u = (p_new[i] - p[i]) / dt - tau[i] - 0.5 * (s_new[i] + s[i])
            r[i] = a * r[i] + (1.0 - a) * u
    for i in range(n):
        p[i], s[i] = p_new[i], s_new[i]
    return OK


_observer_vector = Signature(observer_vector, INT, VECTOR, VECTOR, VECTOR, FLOAT, OUT_VECTOR,
                             INT, OUT_VECTOR, OUT_VECTOR, OUT_VECTOR)
_NAMES = ('q', 'qd')


def momentum_terms(model, q, qd, friction=True):
    """
    Return ``p = M(q) qd`` and ``s = C^T qd - g - tau_f``, each (n,) or (N, n).

    ``friction``: take ``tau_f`` from the model's friction law (the URDF's, or identified).
    Rotor inertia is in ``M``.
    """
    m = kernel_model(model)
    (q, qd), N, single = states(model, _NAMES, q, qd)
    p, s = np.empty((N, model.n)), np.empty((N, model.n))
    flags = ARMATURE | (FRICTION if friction else 0)
    check(model, momentum_kernel(m, q, qd, flags, p, s), _NAMES, q, qd)
    return (p[0], s[0]) if single else (p, s)


class MomentumObserver:
    """
    The momentum observer of one robot, one state at a time (module docstring).

    Parameters
    ----------
    model : Model
        The robot, with the friction law the residual should not count as external.
    gain : float or array-like, shape (n,)
        ``K`` in 1/s, per joint or one for all: the estimate follows a step of external torque
        with the time constant ``1 / K``.
    friction : bool
        Subtract the model's friction ``Fv qd + Fc s(qd) + Fo``.

    Attributes
    ----------
    residual : ndarray, shape (n,)
        The estimated external joint torques after the last :meth:`update`, N m (zero until
        two states have been seen).
    since : float or None
        The time of the first state since the last :meth:`reset`.

    """

    def __init__(self, model, gain=DEFAULT_GAIN, *, friction=True):
        self.model = model
        self.gain = observer_gains(model, gain)
        self.friction = bool(friction)
        self._flags = ARMATURE | (FRICTION if friction else 0)
        self._address = kernel_model(model).address
        self.reset()

    @property
    def time_constant(self):
        """Give the slowest joint's time constant ``1 / min(K)``, s."""
        return 1.0 / float(self.gain.min())

    def reset(self):
        """Forget every state: the next one starts the integral afresh, the residual at zero."""
        self.residual = np.zeros(self.model.n)
        self.since = None
        self._t = None
        self._p, self._s = np.zeros(self.model.n), np.zeros(self.model.n)

    def settled(self, t):
        """Tell whether 5 time constants have passed since the first state after the reset."""
        return self.since is not None and t - self.since >= 5.0 * self.time_constant

    def update(self, t, q, qd, tau):
        """
        Take the state at time ``t`` (s): positions, velocities and the efforts the joints apply.

        Returns the residual ``(n,)``, the external joint torques estimated (the observer's own
        array, updated in place by the next call: copy it to keep it).  ``t`` must not go back
        (``ValueError``: call :meth:`reset` after a jump); a state at the same time as the last
        is a repeat and changes nothing.  ``ValueError`` names a joint whose value is not finite.
        """
        last = self._t
        if last is None:
            dt = 0.0
            self.since = t
        else:
            dt = t - last
            if dt <= 0.0:
                if dt == 0.0:
                    return self.residual
                raise ValueError(f'momentum observer: the state at {t:.6f} s is older than the '
                                 f'last one ({last:.6f} s); reset() after a jump back')
        try:
            if vectors(q, qd, tau) and _observer_vector.call(
                    self._address, q, qd, tau, dt, self.gain, self._flags, self.residual,
                    self._p, self._s) == OK:
                self._t = t
                return self.residual
        except TypeError:                       # not float64 arrays: checked below
            pass
        (q, qd, tau), _, _ = states(self.model, ('q', 'qd', 'tau'), q, qd, tau)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd)) and np.all(np.isfinite(tau))):
            from .._inputs import raise_nonfinite
            raise_nonfinite(self.model, ('q', 'qd', 'tau'), q, qd, tau)
        if q.shape[0] != 1:
            raise ValueError('MomentumObserver.update takes one state (n,); for a log, '
                             'momentum_residual')
        return self.update(t, q[0], qd[0], tau[0])


def momentum_residual(model, t, q, qd, tau, gain=DEFAULT_GAIN, *, friction=True):
    """
    Run the observer over a whole log: the external joint torques at every sample.

    Parameters
    ----------
    model : Model
        The robot, with its friction law.
    t : array-like, shape (N,)
        Sample times, s, never decreasing (a repeated time is a repeated sample: skipped).  For a
        logger's stamps, put them on the robot's clock first
        (:func:`~manipulator_dynamics.identification.timing.retime`).
    q, qd, tau : array-like, shape (N, n)
        Positions, velocities, and the efforts the joints apply, in ``model.joint_names`` order.
    gain, friction
        As :class:`MomentumObserver`.

    Returns
    -------
    r : ndarray, shape (N, n)
        The same numbers as :meth:`MomentumObserver.update` called on each sample in turn.

    """
    t = np.asarray(t, dtype=float)
    q, qd, tau = (np.asarray(x, dtype=float) for x in (q, qd, tau))
    if t.ndim != 1 or len(t) < 1:
        raise ValueError(f't must have shape (N,), got {t.shape}')
    for name, x in (('q', q), ('qd', qd), ('tau', tau)):
        if x.shape != (len(t), model.n):
            raise ValueError(f'{name} must have shape ({len(t)}, {model.n}) for {len(t)} times '
                             f"and the {model.n} joints of '{model.name}', got {x.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError(f't[{int(np.flatnonzero(~np.isfinite(t))[0])}] is not finite')
    back = np.flatnonzero(np.diff(t) < 0)
    if len(back):
        k = int(back[0]) + 1
        raise ValueError(f't goes back at sample {k}: {t[k]:.6f} s after {t[k - 1]:.6f} s')
    p, s = momentum_terms(model, q, qd, friction)
    out = np.empty_like(p)
    _filter(t, p, tau, s, observer_gains(model, gain), out)
    return out


@njit(**JIT)
def _filter(t, p, tau, s, gain, out):
    """Run the discretised lag of the module docstring over every sample, into ``out``."""
    n = p.shape[1]
    out[0, :] = 0.0
    last = 0
    for k in range(1, t.shape[0]):
        dt = t[k] - t[last]
        if dt <= 0.0:                           # a repeated sample
            out[k, :] = out[k - 1, :]
            continue
        for i in range(n):
            a = np.exp(-gain[i] * dt)
            u = (p[k, i] - p[last, i]) / dt - tau[k, i] - 0.5 * (s[k, i] + s[last, i])
            out[k, i] = a * out[k - 1, i] + (1.0 - a) * u
        last = k


def residual_spread(model, data, gain=DEFAULT_GAIN, *, friction=True, topic='/joint_states'):
    """
    Return each joint's largest residual over logs of free motion: what thresholds stand above.

    ``data``: logs with the robot's measured velocities (CSV files, numpy archives, rosbag2
    recordings, mappings ``t, q, qd, tau``; see
    :func:`~manipulator_dynamics.identification.logs.read_states`), on the robot's clock where
    their velocities allow it.  Each log is split at its gaps (an interval over 10 times the
    median), each stretch observed from rest and its first 5 time constants left out.  Returns
    ``(n,)``, N m.  ``IdentificationError`` where a log lacks the velocities.
    """
    from ..identification.logs import read_states

    gains = observer_gains(model, gain)
    spread = np.zeros(model.n)
    for t, q, qd, tau in read_states(model, data, topic):
        step = np.median(np.diff(t)) if len(t) > 1 else 0.0
        cuts = np.flatnonzero(np.diff(t) > 10 * step) + 1
        for rows in np.split(np.arange(len(t)), cuts):
            settled = t[rows] - t[rows][0] >= 5.0 / gains.min()
            if settled.any():
                r = momentum_residual(model, t[rows], q[rows], qd[rows], tau[rows], gains,
                                      friction=friction)
                spread = np.maximum(spread, np.abs(r[settled]).max(axis=0))
    return spread
