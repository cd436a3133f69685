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

from .._inputs import per_joint
from .._jit import JIT
from ..control import friction_torque
from ..rigid.coriolis import coriolis_matrix
from ..rigid.crba import inertia_matrix
from ..rigid.rnea import gravity_torques

#: 1/s: the default gain of every joint (a time constant of 20 ms).
DEFAULT_GAIN = 50.0


def observer_gains(model, gain):
    """
    Return the gains ``K (n,)`` in 1/s: one value for every joint, or one per joint.

    Raises ``ValueError`` naming the joint whose gain is not a finite positive number.
    """
    return per_joint(model, gain, 'observer gain', '1/s')


def momentum_terms(model, q, qd, friction=True):
    """
    Return ``p = M(q) qd`` and ``s = C^T qd - g - tau_f``, each (n,) or (N, n).

    ``friction``: take ``tau_f`` from the model's friction law (the URDF's, or identified).
    """
    M = inertia_matrix(model, q)
    C = coriolis_matrix(model, q, qd)
    qd = np.asarray(qd, dtype=float)
    if M.ndim == 2:                         # one state: products, not einsum (a control loop)
        p, CTqd = M @ qd, qd @ C
    else:
        qd = np.broadcast_to(qd, M.shape[:2])
        p, CTqd = np.einsum('sij,sj->si', M, qd), np.einsum('sji,sj->si', C, qd)
    s = CTqd - gravity_torques(model, q)
    if friction:
        s = s - friction_torque(model, qd)
    return p, s


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
        self.reset()

    @property
    def time_constant(self):
        """Give the slowest joint's time constant ``1 / min(K)``, s."""
        return 1.0 / float(self.gain.min())

    def reset(self):
        """Forget every state: the next one starts the integral afresh, the residual at zero."""
        self.residual = np.zeros(self.model.n)
        self.since = None
        self._t = self._p = self._s = None

    def settled(self, t):
        """Tell whether 5 time constants have passed since the first state after the reset."""
        return self.since is not None and t - self.since >= 5.0 * self.time_constant

    def update(self, t, q, qd, tau):
        """
        Take the state at time ``t`` (s): positions, velocities and the efforts the joints apply.

        Returns the residual ``(n,)``, the external joint torques estimated.  ``t`` must not go
        back (``ValueError``: call :meth:`reset` after a jump); a state at the same time as the
        last is a repeat and changes nothing.
        """
        p, s = momentum_terms(self.model, q, qd, self.friction)
        last = self._t
        if last is None:
            self.since = t
        else:
            dt = t - last
            if dt <= 0.0:
                if dt == 0.0:
                    return self.residual
                raise ValueError(f'momentum observer: the state at {t:.6f} s is older than the '
                                 f'last one ({last:.6f} s); reset() after a jump back')
            a = np.exp(-self.gain * dt)
            u = (p - self._p) / dt - tau - 0.5 * (s + self._s)
            self.residual = a * self.residual + (1.0 - a) * u
        self._t, self._p, self._s = t, p, s
        return self.residual


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
