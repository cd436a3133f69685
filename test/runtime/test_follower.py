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
The trajectory follower without a node: a plan checked, started, commanded, held, abandoned.

trajectory_node over DDS is tested in test/nodes (test_nodes_trajectory, test_collision_reaction).
"""

from types import SimpleNamespace

import manipulator_dynamics as md
from manipulator_dynamics import control
from manipulator_dynamics.runtime.dynamics import Compiled
from manipulator_dynamics.runtime.follower import Follower, Plan
from manipulator_dynamics.runtime.refused import BadMessage
import numpy as np
import pytest

SECOND = 1_000_000_000


def message(names, times, positions, velocities=None):
    """Make a JointTrajectory of its fields alone: any object that has them is one."""
    points = []
    for k, t in enumerate(times):
        sec, nanosec = divmod(int(round(t * SECOND)), SECOND)
        points.append(SimpleNamespace(
            positions=list(positions[k]), accelerations=[],
            velocities=[] if velocities is None else list(velocities[k]),
            time_from_start=SimpleNamespace(sec=sec, nanosec=nanosec)))
    return SimpleNamespace(joint_names=list(names), points=points)


def motion(model, seconds=2.0, points=5):
    t = np.linspace(0.0, seconds, points)
    q = 0.1 + 0.2 * np.sin(np.pi * t / seconds)[:, None] * np.linspace(0.5, 1.0, model.n)
    return t, q


def test_a_plan_is_its_message_in_the_model_s_order_through_the_spline(model):
    t, q = motion(model)
    order = np.random.default_rng(0).permutation(model.n)
    names = [model.joint_names[i] for i in order]
    plan = Plan(model, message(names, t, q[:, order]))
    assert plan.names == names and [names[k] for k in plan.order] == list(model.joint_names)
    np.testing.assert_allclose(plan.t, t)
    np.testing.assert_array_equal(plan.q, q)
    spline = control.SplineTrajectory(t, q)
    for at in (0.0, 0.3, 1.0, 1.7, 2.5):
        for ours, theirs in zip(plan.at(at), spline.at(at)):
            np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize('spoil, kind, said', [
    (lambda m, t, q: message(m.joint_names[:-1], t, q[:, :-1]), 'missing', 'joint7'),
    (lambda m, t, q: message(m.joint_names, t, q + np.r_[0, 0, 10, 0, 0, 0, 0]), 'limits',
     "point 0: joint 'joint3'"),
    (lambda m, t, q: message(m.joint_names, t, q[:, :-1]), 'lengths', 'positions'),
    (lambda m, t, q: message(m.joint_names, t, q, np.full_like(q, np.nan)), 'non-finite',
     'velocities of point 0'),
    (lambda m, t, q: message(m.joint_names, t[::-1], q), 'times', 'time_from_start'),
])
def test_a_plan_refused_says_which_joint_field_or_point(model, spoil, kind, said):
    t, q = motion(model)
    with pytest.raises(BadMessage) as refused:
        Plan(model, spoil(model, t, q))
    assert refused.value.kind == kind and said in str(refused.value)


def test_the_follower_starts_on_time_or_late_from_the_first_point_and_follows_the_clock(model):
    t, q = motion(model)
    plan = Plan(model, message(model.joint_names, t, q))
    follower = Follower()
    assert follower.desired(0) is None and follower.describe(0) == 'none'
    assert follower.follow(plan, 12 * SECOND, 10 * SECOND) == 0.0     # in time: at its stamp
    assert follower.start_ns == 12 * SECOND
    np.testing.assert_array_equal(follower.desired(13 * SECOND)[0], plan.at(1.0)[0])
    assert follower.describe(13 * SECOND) == '5 points over 2 s, at 1 s'
    assert follower.follow(plan, 0, 10 * SECOND) == 0.0              # unstamped: now
    assert follower.start_ns == 10 * SECOND
    late = follower.follow(plan, 9 * SECOND, 10 * SECOND + SECOND // 2)
    assert late == pytest.approx(1.5) and follower.start_ns == 10 * SECOND + SECOND // 2
    np.testing.assert_array_equal(follower.desired(follower.start_ns)[0], q[0])
    follower.measure(q[0], None, 5)
    follower.clock_jumped(-4 * SECOND)          # a simulation reset: the plan keeps its place
    assert follower.start_ns == 6 * SECOND + SECOND // 2 and follower.measured is None
    follower.stop()
    assert follower.desired(7 * SECOND) is None and follower.start_ns is not None


@pytest.mark.parametrize('feedback', [True, False])
@pytest.mark.parametrize('friction', [True, False])
def test_the_efforts_are_computed_torque_on_the_state_or_the_plan_s_inverse_dynamics(
        model, feedback, friction):
    t, q = motion(model)
    plan = Plan(model, message(model.joint_names, t, q))
    kp, kd = np.linspace(100, 400, model.n), [30.0]
    follower = Follower(feedback=feedback, kp=kp, kd=kd, friction=friction)
    assert follower.efforts(Compiled, model, 0) is None          # no plan: no command
    follower.follow(plan, SECOND, SECOND)
    at = SECOND + 7 * SECOND // 10
    q_d, qd_d, qdd_d = plan.at(0.7)
    feed_forward = md.inverse_dynamics(model, q_d, qd_d, qdd_d, friction=friction)
    np.testing.assert_allclose(follower.efforts(Compiled, model, at), feed_forward, rtol=1e-12)
    measured, rates = q_d + 0.01, np.full(model.n, 0.05)
    follower.measure(measured, rates, at)
    expected = control.computed_torque(model, measured, rates, q_d, qd_d, qdd_d, kp,
                                       np.asarray(kd), friction=friction) \
        if feedback else feed_forward
    np.testing.assert_allclose(follower.efforts(Compiled, model, at), expected, rtol=1e-12)
    assert not np.allclose(expected, feed_forward) or not feedback


def test_abandoned_for_a_reaction_then_held_where_the_arm_was_measured(model):
    t, q = motion(model)
    plan = Plan(model, message(model.joint_names, t, q))
    follower = Follower()
    assert follower.abandon(3.0) is None and follower.abandoned == ''
    follower.follow(plan, 2 * SECOND, 2 * SECOND)
    said = follower.abandon(2.75)
    assert said == 'trajectory abandoned at 0.750 s of 2.000 s' == follower.abandoned
    assert follower.plan is None
    assert not follower.hold(5 * SECOND) and follower.plan is None    # nothing measured
    assert follower.abandoned == ''
    here = q[2] + 0.05
    follower.measure(here, None, 0)
    np.testing.assert_array_equal(follower.measured[1], np.zeros(model.n))
    assert follower.hold(5 * SECOND)
    here[:] = 0                                  # the hold is its own copy
    for at in (5 * SECOND, 9 * SECOND):
        held, rate, acceleration = follower.desired(at)
        np.testing.assert_array_equal(held, q[2] + 0.05)
        assert not rate.any() and not acceleration.any()
