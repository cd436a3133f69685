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
A rigid target trajectory as the flexible arm takes it: sampled, integrated and thinned out.

What ``flexible_trajectory_node`` answers to a JointTrajectory, without the message: the target
(a :class:`~manipulator_dynamics.control.SplineTrajectory`, model joint order) is sampled every
``dt`` s by cubic Hermite interpolation through its points, its last point held for ``settle``
s more so that the vibration after the motion shows, Isobe & Imaizumi's two schemes run on the
samples (:func:`~manipulator_dynamics.flexible.dynamics.flexible_inverse_dynamics`), and the
steps to publish are chosen ``output_rate`` a second.
"""

from typing import NamedTuple

import numpy as np

from ..flexible.dynamics import flexible_inverse_dynamics, FlexibleDynamics


class FlexibleTarget(NamedTuple):
    """The flexible arm's answer to one target; ``keep`` and ``rates`` index into ``t``."""

    t: np.ndarray               # the integration grid, s (from the target's first time)
    result: FlexibleDynamics    # the schemes' trajectory, torques and tip deflections
    keep: np.ndarray            # the steps to publish, output_rate a second from the first
    rates: np.ndarray           # (steps, n) the flexible joint angles' rates, rad/s or m/s

    def summary(self):
        """Say the run in one line: its steps, largest tip deflection and peak torque."""
        worst = np.linalg.norm(self.result.tip_deflection, axis=2).max()
        return (f'flexible trajectory of {self.t.size} steps: largest tip deflection '
                f'{worst * 1e3:.3g} mm, peak torque {np.abs(self.result.tau).max():.4g}')


def flexible_target(arm, target, dt, settle, output_rate) -> FlexibleTarget:
    """
    Run the flexible arm along ``target`` every ``dt`` s, ``settle`` s past its last point.

    ``target`` needs ``t`` (strictly increasing, s) and ``hermite(t)`` (positions, model order),
    as :class:`~manipulator_dynamics.control.SplineTrajectory` has.  Raises ValueError for a
    target the arm cannot take (a step too coarse for its first bending mode, NaN), naming it.
    """
    t = np.asarray(target.t, dtype=float)
    if t.size < 2:
        raise ValueError(f'a target needs at least 2 points, got {t.size}')
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f'dt must be a positive number of seconds, got {dt}')
    if not (np.isfinite(settle) and settle >= 0):
        raise ValueError(f'settle must be zero or a positive number of seconds, got {settle}')
    if not (np.isfinite(output_rate) and output_rate > 0):
        raise ValueError(f'output_rate must be a positive number of points a second, got '
                         f'{output_rate}')
    steps = int(np.floor((t[-1] + settle - t[0]) / dt + 1e-9))
    grid = t[0] + dt * np.arange(steps + 1)
    result = flexible_inverse_dynamics(arm, grid, target.hermite(np.minimum(grid, t[-1])))
    every = max(1, int(round(1.0 / (output_rate * dt))))
    rates = np.gradient(result.trajectory.q, grid, axis=0)
    return FlexibleTarget(grid, result, np.arange(0, grid.size, every), rates)
