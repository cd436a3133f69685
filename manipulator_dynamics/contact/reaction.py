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
What a commanding robot does once it has found a collision: the reaction, latched.

The strategies of the collaborative-robot literature (Haddadin, Albu-Schaeffer, De Luca and
Hirzinger, "Collision detection and reaction", IROS 2008; Haddadin, De Luca and Albu-Schaeffer,
"Robot collisions: a survey on detection, isolation, and identification", T-RO 2017), as
efforts from the model (``ID`` the inverse dynamics, rotor inertia included, friction not
compensated: it only helps to stop):

* :data:`STOP`: a damped stop around gravity compensation,
  ``tau = ID(q, qd, -qd / stop_time)``: every joint's speed falls by e each ``stop_time``,
  without a position to return to, so nothing drives the arm on into what it hit; at rest it
  is ``g(q)``, and a person can push the arm away (against the damping only);
* :data:`FLOAT`: gravity compensation alone, ``tau = g(q)``: the arm yields to whoever pushes
  it, with no command resisting beyond its own weight;
* :data:`REFLEX`: for :data:`REFLEX_TIME`, the joints driven at :data:`REFLEX_SPEED` (the
  fastest) along the external torque that raised the collision (the way the obstacle pushes the
  arm: away from it), ``tau = ID(q, qd, (v_r - qd) / stop_time)``; then the stop;
* :data:`NONE`: no reaction (the node goes on commanding as before).

Each command is clamped to the joints' effort limits.  :class:`Reaction` latches on the state
that raised the collision level and holds until :meth:`Reaction.rearm`, whatever the
residual does after it.  This module knows no ROS: the nodes call it (:mod:`..nodes.commanding`),
and the tests close loops on it in lockstep.
"""

import numpy as np

from ..rigid.rnea import gravity_torques, inverse_dynamics

STOP, FLOAT, REFLEX, NONE = 'stop', 'float', 'reflex', 'none'
#: The reactions, the default first: a damped stop.  A safety engineer's choice beside people:
#: it takes the energy out of the motion at once (``float`` leaves the arm coasting into what
#: it hit at its speed, slowed only by friction) and then yields as ``float`` does (``reflex``
#: moves the arm, in a cell whose surroundings it does not know).
REACTIONS = (STOP, FLOAT, REFLEX, NONE)
#: s: the stop's time constant by default.  0.5 s (a robot at rest, as the proof asks) is ten
#: of them: a joint at 1.7 rad/s (a fast arm's velocity limit) is then under 0.0001 rad/s.  The
#: deceleration it asks, ``qd / stop_time`` (34 rad/s^2 at that speed), is what a drive gives
#: within its effort limit on a 7-joint arm's shoulder (about 1.5 kg m^2: 51 N m); a heavier
#: arm is clamped at its limits and stops more slowly.
STOP_TIME = 0.05
#: s: how long the reflex retracts before it stops.
REFLEX_TIME = 0.1
#: rad/s (m/s for a prismatic joint): the speed of the fastest joint in the reflex: 3 cm in
#: 0.1 s at half a metre from the joint.
REFLEX_SPEED = 0.3


class Dynamics:
    """The model's dynamics a reaction calls: the compiled kernels (a node passes its own)."""

    inverse_dynamics = staticmethod(inverse_dynamics)
    gravity_torques = staticmethod(gravity_torques)


class Reaction:
    """
    A reaction to a collision, latched from :meth:`trigger` until :meth:`rearm`.

    Parameters
    ----------
    model : Model
        The robot.
    kind : str
        One of :data:`REACTIONS`.
    stop_time : float, optional
        s, the stop's time constant (> 0).
    dynamics : object, optional
        With ``inverse_dynamics(model, q, qd, qdd)`` and ``gravity_torques(model, q)``: the
        compiled kernels by default (a node passes the interpreted ones while they compile).

    """

    def __init__(self, model, kind, stop_time=STOP_TIME, dynamics=Dynamics):
        if kind not in REACTIONS:
            raise ValueError(f'collision reaction must be one of {", ".join(REACTIONS)}, '
                             f'got {kind!r}')
        if not (np.isfinite(stop_time) and stop_time > 0):
            raise ValueError(f'stop_time must be a finite number of seconds > 0, got '
                             f'{stop_time!r}')
        self.model, self.kind, self.stop_time = model, kind, float(stop_time)
        self.dynamics = dynamics
        self.limit = np.asarray(model.effort_limit, dtype=float)
        self.since = self.why = self.direction = None

    @property
    def latched(self):
        """Whether the reaction is in force (from :meth:`trigger` to :meth:`rearm`)."""
        return self.since is not None

    def trigger(self, t, residual, why):
        """
        Latch the reaction at time ``t`` (s) on ``residual`` (the external torques, (n,)).

        ``why``: what raised it (the collision, said).  Returns whether it latched now (False
        for :data:`NONE`, or one latched already: the first collision's reaction goes on).
        """
        if self.kind == NONE or self.latched:
            return False
        r = np.asarray(residual, dtype=float)
        largest = np.abs(r).max() if r.size else 0.0
        self.direction = r / largest if largest > 0 else np.zeros_like(r)
        self.since, self.why = float(t), why
        return True

    def torques(self, q, qd, t):
        """
        Return the reaction's efforts ``(n,)`` at state ``(q, qd)`` and time ``t`` (s).

        Clamped to the effort limits.  ``qd`` None (a driver without velocities) counts as at
        rest.  Only while :attr:`latched`.
        """
        model, dynamics = self.model, self.dynamics
        q = np.asarray(q, dtype=float)
        qd = np.zeros(model.n) if qd is None else np.asarray(qd, dtype=float)
        if self.kind == FLOAT:
            tau = dynamics.gravity_torques(model, q)
        else:
            target = -qd
            if self.kind == REFLEX and t - self.since < REFLEX_TIME:
                target = REFLEX_SPEED * self.direction - qd
            tau = dynamics.inverse_dynamics(model, q, qd, target / self.stop_time)
        return np.clip(tau, -self.limit, self.limit)

    def rearm(self):
        """End the reaction; return ``(since, why)`` of the one that was latched, or None."""
        if not self.latched:
            return None
        was = (self.since, self.why)
        self.since = self.why = self.direction = None
        return was

    def describe(self):
        """One line: the reaction in force and what raised it, or that it is armed."""
        if self.kind == NONE:
            return 'none: a collision is reported, the commands go on'
        if not self.latched:
            return f'armed: {self.kind} on a collision'
        return f'{self.kind} since {self.since:.3f} s ({self.why}): latched until ~/rearm'
