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
What flexible_trajectory_node answers to a target, without ROS.

The grid, the held last point, the steps kept, the rates, and the refusals.

The node over DDS (the message's joint order, the published points) is tested in
test/nodes/test_nodes_flexible.py.
"""

import math

from manipulator_dynamics.control import SplineTrajectory
from manipulator_dynamics.flexible.arm import FlexibleArm
from manipulator_dynamics.flexible.dynamics import flexible_inverse_dynamics
from manipulator_dynamics.runtime.flexible_targets import flexible_target
import numpy as np
import pytest


def rest_to_rest(times, goal):
    """Make a quintic rest-to-rest move to ``goal`` over ``times[-1]`` s, sampled at ``times``."""
    s = np.clip(np.asarray(times) / times[-1], 0.0, 1.0)
    b = 10 * s**3 - 15 * s**4 + 6 * s**5
    return SplineTrajectory(times, np.outer(b, goal))


@pytest.fixture(scope='module')
def rigid_arm():
    return FlexibleArm.planar([0.3, 0.25], [0.4, 0.3], math.inf)


@pytest.fixture(scope='module')
def flexible_arm():
    return FlexibleArm.planar([0.2, 0.2], [0.0112, 0.0112], [0.46, 0.046])


def test_the_target_is_sampled_every_dt_and_its_last_point_held_to_settle(rigid_arm):
    target = rest_to_rest([0.0, 0.05, 0.1, 0.15, 0.2], [0.5, 1.0])
    answer = flexible_target(rigid_arm, target, 0.002, 0.1, 100.0)
    assert answer.t[0] == 0.0 and np.allclose(np.diff(answer.t), 0.002, rtol=0, atol=1e-15)
    assert answer.t[-1] == pytest.approx(0.3, abs=1e-12)
    moving = answer.t <= 0.2
    q_target = answer.result.trajectory.q_target
    np.testing.assert_allclose(q_target[moving], target.hermite(answer.t[moving]), atol=1e-12)
    np.testing.assert_allclose(q_target[~moving], np.tile(target.q[-1], (np.sum(~moving), 1)),
                               atol=1e-12)
    # a rigid arm reaches its target: its rates are the target's, held still once it is there
    np.testing.assert_allclose(answer.result.trajectory.q, q_target, atol=1e-9)
    inside = moving & (answer.t > 0.002) & (answer.t < 0.198)
    np.testing.assert_allclose(answer.rates[inside], target.hermite(answer.t[inside], 1),
                               atol=1e-3 * np.abs(target.qd).max())
    assert np.abs(answer.rates[answer.t > 0.202]).max() < 1e-9


def test_the_torques_are_the_schemes_on_those_samples(rigid_arm):
    target = rest_to_rest([0.1, 0.2, 0.3], [-0.4, 0.7])        # a target need not start at 0
    answer = flexible_target(rigid_arm, target, 0.001, 0.05, 250.0)
    assert answer.t[0] == pytest.approx(0.1) and answer.t[-1] == pytest.approx(0.35)
    direct = flexible_inverse_dynamics(rigid_arm, answer.t,
                                       target.hermite(np.minimum(answer.t, 0.3)))
    np.testing.assert_array_equal(answer.result.tau, direct.tau)
    np.testing.assert_array_equal(answer.result.tip_deflection, direct.tip_deflection)


@pytest.mark.parametrize('dt, rate, every', [(0.001, 100.0, 10), (0.002, 100.0, 5),
                                             (0.001, 300.0, 3), (0.001, 5000.0, 1)])
def test_the_steps_kept_are_output_rate_a_second_from_the_first(rigid_arm, dt, rate, every):
    target = rest_to_rest([0.0, 0.1], [0.2, -0.2])
    answer = flexible_target(rigid_arm, target, dt, 0.0, rate)
    np.testing.assert_array_equal(answer.keep, np.arange(0, answer.t.size, every))
    assert answer.t[-1] == pytest.approx(0.1)       # settle 0: the target's own end


def test_a_flexible_arm_deflects_and_the_summary_says_by_how_much(flexible_arm):
    target = rest_to_rest([0.0, 0.1, 0.2], [0.5, 1.0])
    answer = flexible_target(flexible_arm, target, 0.0005, 0.2, 100.0)
    worst = np.linalg.norm(answer.result.tip_deflection, axis=2).max()
    assert worst > 1e-4                                 # it bends: not the rigid target
    assert np.abs(answer.result.trajectory.q - answer.result.trajectory.q_target).max() > 1e-5
    assert f'{worst * 1e3:.3g} mm' in answer.summary()
    assert f'{answer.t.size} steps' in answer.summary()


def test_a_step_too_coarse_for_the_first_bending_mode_is_refused_saying_so(flexible_arm):
    target = rest_to_rest([0.0, 0.1, 0.2], [0.5, 1.0])
    with pytest.raises(ValueError, match='too coarse for the first bending mode'):
        flexible_target(flexible_arm, target, 0.05, 0.0, 10.0)


@pytest.mark.parametrize('dt, settle, rate, what', [
    (0.0, 0.1, 100.0, 'dt'), (float('nan'), 0.1, 100.0, 'dt'), (0.001, -0.1, 100.0, 'settle'),
    (0.001, float('inf'), 100.0, 'settle'), (0.001, 0.1, 0.0, 'output_rate')])
def test_bad_settings_are_refused_by_name(rigid_arm, dt, settle, rate, what):
    with pytest.raises(ValueError, match=f'^{what} must be'):
        flexible_target(rigid_arm, rest_to_rest([0.0, 0.1], [0.1, 0.1]), dt, settle, rate)


def test_a_target_of_one_time_is_refused(rigid_arm):
    class OnePoint:
        t = np.array([0.0])

        @staticmethod
        def hermite(t):
            return np.zeros((np.size(t), 2))

    with pytest.raises(ValueError, match='at least 2 points, got 1'):
        flexible_target(rigid_arm, OnePoint, 0.001, 0.1, 100.0)
