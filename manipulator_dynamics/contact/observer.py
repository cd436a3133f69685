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
estimate: 0.14 N m on a pushed panda under stiff computed torque, against 0.006 N m so.  Where
states were missed (a busy reader keeps only the newest, a logger skips samples), the interval
spans several periods ``T`` of the stream, and only the last one is known to have had
``tau_m,k``: the rest takes the mean of the efforts at its ends,
``(T tau_m,k + (dt - T) (tau_m,k + tau_m,k-1) / 2) / dt`` (on a simulated arm with 5 % of its
states dropped, the largest residual of free motion fell from 0.15 to 0.086 N m on a wrist joint,
its value with none dropped).  The lag is then advanced exactly for an input held over the
interval (zero-order hold):

    r_k = a r_{k-1} + (1 - a) u,   a = exp(-K dt).

Dry friction at rest.  A joint that does not move (slower than :data:`STILL`, the velocity
signal's noise) is held by its dry friction anywhere within ``+-Fc``: no law says where, and
``Fc sign(qd)`` on a velocity that is noise says ``+-Fc`` at random (a simulated arm brought to
rest by computed torque left a residual of 0.8 N m, its joint's full Fc).  So there the
observer counts the Coulomb part of the law as zero, and carries a *band*: ``Fc`` through the
same lag, ``b_k = a b_{k-1} + (1 - a) Fc [joint still or reversing]``, the part of ``|r|``
that dry friction may explain.  A joint whose velocity changed sign since the last state went
through rest between them, seen or not (a reversal is where a joint sticks; a busy reader may
miss the state where it was still).  Nor does friction switch at once when the joint moves
again (pre-sliding, a simulator's soft constraint): the band takes ``Fc`` for one time
constant ``1 / K`` after the joint was last still.  Missed states add to it what is not known
of the efforts over them: their mean lies between the efforts at the ends for a command that
moved one way, so the estimate ``(tau_m,k + tau_m,k-1) / 2`` is off by at most
``|tau_m,k - tau_m,k-1| / 2`` over the ``dt - T`` missed (beside a busy loop on the other
core, dynamics_node missed states at joint reversals, where friction compensation switches,
and called them contacts).  The contact levels apply to ``|r| - b``
(:class:`~manipulator_dynamics.contact.detection.ContactDetector`): at rest a push is seen once
it exceeds the friction that could hold it, as a person pushing a braked joint would find.

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
from ..rigid.kinematics import (all_finite, ARMATURE, batch_row, coulomb_law, coupled_product,
                                FRICTION, kernel_model, model_at, scratch)
from ..rigid.rnea import joint_friction
from ..rigid.status import BAD_VECTOR, check, NON_FINITE, OK

#: 1/s: the default gain of every joint (a time constant of 20 ms).
DEFAULT_GAIN = 50.0
#: rad/s (m/s): a joint slower than this may be held by its dry friction (see the module).
STILL = 0.01


def observer_gains(model, gain):
    """
    Return the gains ``K (n,)`` in 1/s: one value for every joint, or one per joint.

    Raises ``ValueError`` naming the joint whose gain is not a finite positive number.
    """
    return per_joint(model, gain, 'observer gain', '1/s')


@njit(**INLINE)
def dry_friction(m, k, rate, still):
    """Return joint ``k``'s friction, its Coulomb part zero below ``still`` (the docstring)."""
    if abs(rate) < still:
        return m.viscous[k] * rate + m.friction_offset[k]
    return joint_friction(m, k, rate)


@njit(**INLINE)
def momentum_sample(m, q, qd, flags, still, work, C, p, s):
    """
    Fill ``p = M(q) qd`` and ``s = C^T qd - g(q) [- tau_f]`` for one state (``C (n, n)``).

    From one Coriolis pass (:func:`.coriolis_sample`): its base-frame composites also give
    ``M[j, k] = S_j . Ic_k S_k`` (``j`` on k's root path) and ``g_j = S_j . Ic_j a0`` with
    ``a0 = (0, -gravity)`` the base's acceleration, so M and g cost a dot product an entry.
    ``flags``: :data:`ARMATURE` adds ``Ia qd`` to ``p``, :data:`FRICTION` subtracts the
    model's friction law at ``qd`` (its Coulomb part zero for a joint slower than ``still``);
    each coupled motor adds its own, on its velocity ``c . qd`` (``Model.coupled_motors``).
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
            s[k] -= dry_friction(m, k, qd[k], still)
    for c in range(m.coupling.shape[0]):            # coupled motors: Ia c (c . qd), friction
        w = coupled_product(m, qd, c)
        f = m.coupled_armature[c] * w if flags & ARMATURE else 0.0
        g = 0.0
        if flags & FRICTION:
            g = m.coupled_viscous[c] * w
            if abs(w) >= still:
                g += m.coupled_coulomb[c] * coulomb_law(w, m.coupled_velocity[c])
        for k in range(n):
            p[k] += m.coupling[c, k] * f
            s[k] -= m.coupling[c, k] * g


@njit(**JIT)
def momentum_kernel(m, q, qd, flags, still, p, s):
    """Fill ``p, s (N, n)`` for each sample (:func:`momentum_sample`); return a status."""
    if not (all_finite(q) and all_finite(qd)):
        return NON_FINITE
    n = m.parent.shape[0]
    work, C = coriolis_workspace(n), np.empty((n, n))
    for k in range(p.shape[0]):
        momentum_sample(m, batch_row(k, q), batch_row(k, qd), flags, still, work, C, p[k], s[k])
    return OK


@njit(**INLINE)
def applied(tau, last, dt, period):
    """Return the mean effort over ``dt``: ``tau`` over its last ``period`` (the docstring)."""
    held = min(period, dt)
    return (held * tau + (dt - held) * 0.5 * (tau + last)) / dt


@njit(**INLINE)
def unknown(m, flags, i, sticking, tau, last, dt, period):
    """Return what joint ``i``'s band takes from one interval: dry friction, missed efforts."""
    held = 0.0
    if flags & FRICTION and sticking:
        held = m.coulomb[i]
        for c in range(m.coupling.shape[0]):       # a coupled motor's, where it turns joint i
            held += abs(m.coupling[c, i]) * m.coupled_coulomb[c]
    missed = dt - min(period, dt)
    return held + 0.5 * abs(tau - last) * missed / dt


@njit(**INLINE)
def moving_for(rate, previous, still, dt, before):
    """Return how long a joint has moved since it was last still (0: still or reversing now)."""
    return 0.0 if stuck(rate, previous, still) else before + dt


@njit(**INLINE)
def advance(m, flags, i, gain, dt, period, still, dp, s_mean, tau, last, rate, previous, r, band,
            moving):
    """
    Advance joint ``i`` over one interval: return its ``(r, band, moving)`` (the docstring).

    ``dp`` is the momentum's change, ``s_mean`` the state terms' mean over the interval,
    ``tau, last`` and ``rate, previous`` the efforts and velocities at its ends.  The one step
    of the streaming observer and of a whole log.
    """
    a = np.exp(-gain * dt)
    u = dp / dt - applied(tau, last, dt, period) - s_mean
    moving = moving_for(rate, previous, still, dt, moving)
    band = a * band + (1.0 - a) * unknown(m, flags, i, moving * gain <= 1.0, tau, last, dt,
                                          period)
    return a * r + (1.0 - a) * u, band, moving


@njit(**INLINE)
def stuck(rate, previous, still):
    """Tell whether a joint was still or reversing: slower than ``still``, or a sign change."""
    return abs(rate) < still or rate * previous < 0.0


@njit(**ONE_STATE)
def observer_vector(address, q, qd, tau, dt, period, gain, flags, still, r, band, p, s, last,
                    last_qd, moving):
    """
    One state of the observer (the control-loop path): the terms, then the lag's step.

    ``p, s, last, last_qd, moving`` hold the last state's terms, effort, velocities and time
    each joint has moved, and take this one's; with ``dt > 0``
    the residual ``r`` and the dry-friction band advance (module docstring).  BAD_VECTOR for a
    vector of the wrong length or a non-finite value.
    """
    m = model_at(address)
    n = m.parent.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n:
        return BAD_VECTOR
    for i in range(n):
        if not (np.isfinite(q[i]) and np.isfinite(qd[i]) and np.isfinite(tau[i])):
            return BAD_VECTOR
    p_new, s_new = scratch((n,), True), scratch((n,), True)
    momentum_sample(m, q, qd, flags, still, coriolis_workspace(n, True), scratch((n, n), True),
                    p_new, s_new)
    if dt > 0.0:
        for i in range(n):
            r[i], band[i], moving[i] = advance(
                m, flags, i, gain[i], dt, period, still, p_new[i] - p[i], 0.5 * (s_new[i] + s[i]),
                tau[i], last[i], qd[i], last_qd[i], r[i], band[i], moving[i])
    for i in range(n):
        p[i], s[i], last[i], last_qd[i] = p_new[i], s_new[i], tau[i], qd[i]
    return OK


_observer_vector = Signature(observer_vector, INT, VECTOR, VECTOR, VECTOR, FLOAT, FLOAT,
                             OUT_VECTOR, INT, FLOAT, OUT_VECTOR, OUT_VECTOR, OUT_VECTOR,
                             OUT_VECTOR, OUT_VECTOR, OUT_VECTOR, OUT_VECTOR)
_NAMES = ('q', 'qd')


#: Time constants after a (re)start before the residual counts: by then what the observer
#: started from weighs exp(-5), under 1 % (:meth:`MomentumObserver.settled`).
SETTLING = 5.0


def beyond(residual, band):
    """Return ``max(|r| - band, 0)``: the residual dry friction at rest cannot explain."""
    return np.maximum(np.abs(residual) - band, 0.0)


def momentum_terms(model, q, qd, friction=True, still=STILL):
    """
    Return ``p = M(q) qd`` and ``s = C^T qd - g - tau_f``, each (n,) or (N, n).

    ``friction``: take ``tau_f`` from the model's friction law (the URDF's, or identified), its
    Coulomb part zero where a joint is slower than ``still`` (0: never).  Rotor inertia is in
    ``M``.
    """
    m = kernel_model(model)
    (q, qd), N, single = states(model, _NAMES, q, qd)
    p, s = np.empty((N, model.n)), np.empty((N, model.n))
    flags = ARMATURE | (FRICTION if friction else 0)
    check(model, momentum_kernel(m, q, qd, flags, float(still), p, s), _NAMES, q, qd)
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
    still : float
        rad/s (m/s): below this a joint's dry friction is left to the band (the module); 0:
        never.

    Attributes
    ----------
    residual : ndarray, shape (n,)
        The estimated external joint torques after the last :meth:`update`, N m (zero until
        two states have been seen).
    band : ndarray, shape (n,)
        The part of ``|residual|`` dry friction at rest may explain, N m (the module).
    since : float or None
        The time of the first state since the last :meth:`reset`.

    """

    def __init__(self, model, gain=DEFAULT_GAIN, *, friction=True, still=STILL):
        self.model = model
        self.gain = observer_gains(model, gain)
        self.friction = bool(friction)
        self.still = float(still)
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
        self.band = np.zeros(self.model.n)
        self.since = None
        self._t = None
        n = self.model.n
        self._p, self._s, self._tau, self._qd, self._moving = (np.zeros(n) for _ in range(5))

    def settled(self, t):
        """Tell whether 5 time constants have passed since the first state after the reset."""
        return self.since is not None and t - self.since >= SETTLING * self.time_constant

    def update(self, t, q, qd, tau, period=None):
        """
        Take the state at time ``t`` (s): positions, velocities and the efforts the joints apply.

        Returns the residual ``(n,)``, the external joint torques estimated (the observer's own
        array, updated in place by the next call: copy it to keep it).  ``t`` must not go back
        (``ValueError``: call :meth:`reset` after a jump); a state at the same time as the last
        is a repeat and changes nothing.  ``period``: the stream's period, s, where states may
        be missed (an interval longer than it then took the efforts' mean over its start); None:
        every interval is one period.  ``ValueError`` names a joint whose value is not finite.
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
                    self._address, q, qd, tau, dt, dt if period is None else period, self.gain,
                    self._flags, self.still, self.residual, self.band, self._p, self._s,
                    self._tau, self._qd, self._moving) == OK:
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
        return self.update(t, q[0], qd[0], tau[0], period)


def observe(model, t, q, qd, tau, gain=DEFAULT_GAIN, *, friction=True, still=STILL):
    """
    Run the observer over a whole log: the external joint torques and the band at every sample.

    Parameters
    ----------
    model : Model
        The robot, with its friction law.
    t : array-like, shape (N,)
        Sample times, s, never decreasing (a repeated time is a repeated sample: skipped).  For a
        logger's stamps, put them on the robot's clock first
        (:func:`~manipulator_dynamics.recordings.timing.retime`).
    q, qd, tau : array-like, shape (N, n)
        Positions, velocities, and the efforts the joints apply, in ``model.joint_names`` order.
    gain, friction, still
        As :class:`MomentumObserver`.

    Returns
    -------
    r, band : ndarray, shape (N, n)
        The same numbers as :meth:`MomentumObserver.update` called on each sample in turn with
        the log's median interval as its period (skipped samples are handled as missed states):
        its ``residual`` and ``band``.

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
    p, s = momentum_terms(model, q, qd, friction, still)
    out, band = np.empty_like(p), np.empty_like(p)
    steps = np.diff(t)
    steps = steps[steps > 0]
    period = float(np.median(steps)) if len(steps) else 0.0
    _filter(kernel_model(model), t, p, tau, s, qd, ARMATURE | (FRICTION if friction else 0),
            float(still), observer_gains(model, gain), period, out, band)
    return out, band


def momentum_residual(model, t, q, qd, tau, gain=DEFAULT_GAIN, *, friction=True, still=STILL):
    """Return :func:`observe`'s residual alone: the external joint torques, ``(N, n)``."""
    return observe(model, t, q, qd, tau, gain, friction=friction, still=still)[0]


@njit(**JIT)
def _filter(m, t, p, tau, s, qd, flags, still, gain, period, out, band):
    """Run the discretised lag of the module docstring over every sample, into ``out, band``."""
    n = p.shape[1]
    out[0, :] = 0.0
    band[0, :] = 0.0
    moving = np.zeros(n)
    last = 0
    for k in range(1, t.shape[0]):
        dt = t[k] - t[last]
        if dt <= 0.0:                           # a repeated sample
            out[k, :] = out[k - 1, :]
            band[k, :] = band[k - 1, :]
            continue
        for i in range(n):
            out[k, i], band[k, i], moving[i] = advance(
                m, flags, i, gain[i], dt, period, still, p[k, i] - p[last, i],
                0.5 * (s[k, i] + s[last, i]), tau[k, i], tau[last, i], qd[k, i], qd[last, i],
                out[k - 1, i], band[k - 1, i], moving[i])
        last = k
