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
A joint trajectory followed on a node's clock: checked, started, commanded, held, abandoned.

:class:`Plan` is a trajectory_msgs/JointTrajectory (its fields: any object that has them)
checked against the model, as the spline :class:`..control.SplineTrajectory` through its
points.  :class:`Follower` follows one on a clock in ns: it starts at its stamp (now, if zero
or already past: a late one starts from its first point), gives the desired state at a time
and the efforts there (computed torque on the measured state, or the inverse dynamics of the
plan alone), follows the clock when it jumps back, is abandoned where a collision's reaction
starts and, once re-armed, holds the arm where the reaction left it.  trajectory_node is its
shell (the messages, the timer, the publishers); flexible_trajectory_node takes its Plan.
"""

import numpy as np

from .refused import BadMessage, by_name
from ..control import SplineTrajectory


class Plan:
    """
    A JointTrajectory message checked against the model, as a :class:`SplineTrajectory`.

    Every joint of the model by name (others are refused), positions within the URDF limits,
    finite values; ``t, q, qd, qdd`` in model joint order, ``names`` and ``order`` map back to the
    message's.  Raises :class:`BadMessage`.
    """

    def __init__(self, model, msg):
        names = list(msg.joint_names)
        k = list(by_name(model, names, what='trajectory', every=True,
                         hint=' (every joint of the model; restrict the model with '
                         'tip_links)').rows)
        self.names, self.order = names, k
        points = msg.points
        t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points])
        q = self._field(points, 'positions', len(names), k, required=True)
        lo, hi = model.lower - 1e-9, model.upper + 1e-9
        beyond = np.argwhere((q < lo) | (q > hi))
        if len(beyond):
            i, j = beyond[0]
            raise BadMessage('limits', f"trajectory point {i}: joint '{model.joint_names[j]}' "
                             f'at {q[i, j]:.4g} is beyond its limits [{model.lower[j]:.4g}, '
                             f'{model.upper[j]:.4g}]')
        qd = self._field(points, 'velocities', len(names), k)
        qdd = self._field(points, 'accelerations', len(names), k)
        try:
            spline = SplineTrajectory(t, q, qd, qdd)
        except ValueError as e:
            raise BadMessage('times', f'{e}: time_from_start') from None
        self.t, self.q, self.qd, self.qdd = spline.t, spline.q, spline.qd, spline.qdd
        self.hermite, self.at = spline.hermite, spline.at

    @staticmethod
    def _field(points, what, n, k, required=False):
        sizes = {len(getattr(p, what)) for p in points}
        if sizes == {0} and not required:
            return None
        if sizes != {n}:
            raise BadMessage('lengths', f'trajectory {what}: every point needs {n} values, got '
                             f'{sorted(sizes)}')
        a = np.array([getattr(p, what) for p in points], dtype=float)[:, k]
        if not np.all(np.isfinite(a)):
            i, j = np.argwhere(~np.isfinite(a))[0]
            raise BadMessage('non-finite', f'trajectory {what} of point {i} is {a[i, j]}')
        return a


class Follower:
    """
    A trajectory (:class:`Plan`, or any :class:`SplineTrajectory`) followed on a clock (ns).

    ``feedback``: computed torque ``M(q) (qdd_d + kp e + kd e') + h(q, qd)`` on the measured
    state (:meth:`measure`); else, or before a state is measured, the inverse dynamics of the
    desired state.  ``friction``: the joints' friction added, Coulomb's on the desired
    velocity.  ``kp``, ``kd``: one gain, or one per joint.  The plan's time is the clock's
    less :attr:`start_ns`; past its end the last point is held.
    """

    def __init__(self, feedback=True, kp=(400.0,), kd=(40.0,), friction=True):
        self.feedback, self.friction = feedback, friction
        self.kp, self.kd = np.asarray(kp, dtype=float), np.asarray(kd, dtype=float)
        self.plan = None
        self.start_ns = None                # the clock's time of the plan's t = 0 (ns)
        self.measured = None                # (q, qd) of the latest state, qd 0 where not given
        self.measured_at = 0                # its stamp (ns; 0: none)
        self.abandoned = ''                 # where the plan was left for a reaction, said

    def follow(self, plan, stamp_ns, now_ns):
        """
        Follow ``plan`` from its ``stamp_ns`` (0: now), instead of any before.

        Returns how late it came (s): one whose stamp has passed starts now, from its first
        point (the points already due would jump the robot), and 0 for one in time.
        """
        self.plan = plan
        self.start_ns = max(stamp_ns, now_ns)
        return (now_ns - stamp_ns) * 1e-9 if stamp_ns and stamp_ns < now_ns else 0.0

    def stop(self):
        """Follow no trajectory: no commands, until the next."""
        self.plan = None

    def forget(self):
        """Forget the trajectory and the measured state (a new model, a deactivation)."""
        self.plan = self.measured = None

    def clock_jumped(self, delta_ns):
        """Follow the clock jumping by ``delta_ns``: the plan keeps its place, the state goes."""
        self.measured = None
        if self.start_ns is not None:
            self.start_ns += delta_ns

    def measure(self, q, qd, stamp_ns):
        """Take the measured state (``qd`` None: not given, taken as 0); its stamp (ns, or 0)."""
        self.measured = (q, qd if qd is not None else np.zeros_like(q))
        self.measured_at = stamp_ns

    def on_plan(self, at_ns):
        """Return where on the plan the clock's ``at_ns`` is: its ``t`` (s)."""
        return (at_ns - self.start_ns) * 1e-9

    def desired(self, at_ns):
        """Return the desired ``(q, qd, qdd)`` (model order) at ``at_ns``, or None: no plan."""
        if self.plan is None:
            return None
        return self.plan.at(self.on_plan(at_ns))

    def efforts(self, dynamics, model, at_ns):
        """
        Return the efforts at the clock's ``at_ns`` (model order), or None: no plan.

        ``dynamics``: :mod:`~manipulator_dynamics.runtime.dynamics`' compiled or interpreted
        functions.
        """
        desired = self.desired(at_ns)
        if desired is None:
            return None
        q_d, qd_d, qdd_d = desired
        if self.feedback and self.measured is not None:
            q, qd = self.measured
            return dynamics.computed_torque(model, q, qd, q_d, qd_d, qdd_d, self.kp, self.kd,
                                            friction=self.friction)
        return dynamics.inverse_dynamics(model, q_d, qd_d, qdd_d, friction=self.friction)

    def abandon(self, since_s):
        """
        Leave the plan for a reaction that started at ``since_s`` (the clock's, s).

        Returns what is said of it (where the plan was), or None where there was none.
        """
        plan, self.plan = self.plan, None
        if plan is None:
            return None
        self.abandoned = (f'trajectory abandoned at {since_s - self.start_ns * 1e-9:.3f} s of '
                          f'{plan.t[-1]:.3f} s')
        return self.abandoned

    def hold(self, now_ns):
        """Hold the arm where it was last measured, from ``now_ns``; False: none measured."""
        self.abandoned = ''
        if self.measured is None:
            return False
        q = self.measured[0].copy()
        self.plan, self.start_ns = SplineTrajectory([0.0], q[None]), now_ns
        return True

    def describe(self, now_ns):
        """Say the plan followed: its points and length, and where on it ``now_ns`` is."""
        plan = self.plan
        if plan is None:
            return 'none'
        return f'{len(plan.t)} points over {plan.t[-1]:.3g} s, at {self.on_plan(now_ns):.3g} s'
