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
A calibration refuses the levels of a stretch the states hid, or that no model explains.

And the policy the node and the replay both run over it (:class:`Learning`): refused levels
learnt again, levels given kept, joints that never moved said.
"""

import manipulator_dynamics as md
from manipulator_dynamics.contact.calibration import Calibration, GAP_SHARE, Learning, Learnt
from manipulator_dynamics.contact.calibration import levels_from_spread, Refused, SPREAD_SHARE
from manipulator_dynamics.contact.observer import STILL
import numpy as np

DT = 1e-3


def calibrate(arm, seconds=2.0, hidden=(), pushed=None, seed=0):
    """
    Learn over ``seconds`` of a swinging arm at 1 kHz; return the calibration and its spread.

    ``hidden``: ``[(start, end), ...]`` (s) whose states never come; ``pushed``: ``(joint,
    N m)``, an external torque on that joint throughout, the effort countering it.
    """
    rng = np.random.default_rng(seed)
    learner = Calibration(arm, seconds)
    q0 = np.linspace(-0.5, 0.5, arm.n)
    for k in range(round(3 * seconds / DT)):
        t = k * DT
        if any(a <= t < b for a, b in hidden):
            continue
        q, qd = q0 + 0.3 * np.sin(t), np.full(arm.n, 0.3 * np.cos(t))
        model = md.gravity_torques(arm, q)
        r = 0.02 * model * rng.standard_normal(arm.n)       # a model's error: 2 % of it
        effort = model + r
        if pushed is not None:
            r[pushed[0]] += pushed[1]
            effort[pushed[0]] += pushed[1]                  # the controller holds against it
        if learner.add(t, t, r, qd, effort):
            break
    assert learner.done
    return learner, learner.result()[0]


def test_a_clean_stretch_has_no_flaw(arm):
    learner, spread = calibrate(arm)
    assert learner.flaws(spread) == []


def test_a_starved_publishers_gaps_are_no_flaw(arm):
    """10-100 ms every 0.2-1 s hide about a tenth: ridden through, the levels are good."""
    rng = np.random.default_rng(3)
    hidden, t = [], 0.1
    while t < 6.0:
        length = rng.uniform(0.010, 0.100)
        hidden.append((t, t + length))
        t += length + rng.uniform(0.2, 1.0)
    learner, spread = calibrate(arm, hidden=hidden)
    assert learner.flaws(spread) == []


def test_gaps_that_hide_more_than_a_quarter_are_a_flaw(arm):
    hidden = [(0.1 + 0.2 * k, 0.2 + 0.2 * k) for k in range(30)]     # half of every 0.2 s
    learner, spread = calibrate(arm, hidden=hidden)
    flaws = learner.flaws(spread)
    assert len(flaws) == 1 and flaws[0].startswith('gaps in the joint states hid') and \
        f'(more than {GAP_SHARE:.0%})' in flaws[0], flaws


def test_a_push_larger_than_all_the_model_needs_is_a_flaw_naming_the_joint(arm):
    """The arm held against a push on joint 6 (a wrist: little torque of its own)."""
    needed = np.abs(md.gravity_torques(arm, np.linspace(-0.5, 0.5, arm.n))).max()
    learner, spread = calibrate(arm, pushed=(5, 0.5 * needed))
    flaws = learner.flaws(spread)
    assert len(flaws) == 1 and 'joint6' in flaws[0] and 'joint1' not in flaws[0], flaws
    assert spread.rest[5] + spread.speed[5] * learner.motion[5] > SPREAD_SHARE * learner.needed[5]


def swing(arm, seconds, hidden=(), still=(), seed=0):
    """Yield ``(t, r, qd, effort)`` of the swinging arm of :func:`calibrate`, 1 kHz."""
    rng = np.random.default_rng(seed)
    q0 = np.linspace(-0.5, 0.5, arm.n)
    for k in range(round(seconds / DT)):
        t = k * DT
        if any(a <= t < b for a, b in hidden):
            continue
        q, qd = q0 + 0.3 * np.sin(t), np.full(arm.n, 0.3 * np.cos(t))
        qd[list(still)] = 0.0
        model = md.gravity_torques(arm, q)
        r = 0.02 * model * rng.standard_normal(arm.n)
        yield t, r, qd, model + r


def learn(learning, states):
    """Run ``states`` through ``learning``; return the refusals and what it learnt (or None)."""
    refused = []
    for t, r, qd, effort in states:
        out = learning.add(t, t, r, qd, effort)
        if isinstance(out, Refused):
            refused.append(out)
        elif out is not None:
            return refused, out
    return refused, None


def test_learning_gives_the_calibrations_levels_said_as_learnt(arm):
    refused, learnt = learn(Learning(arm, 1.0), swing(arm, 3.0))
    learner = Calibration(arm, 1.0)
    for t, r, qd, effort in swing(arm, 3.0):
        if learner.add(t, t, r, qd, effort):
            break
    spread = learner.result()[0]
    assert refused == [] and isinstance(learnt, Learnt)
    np.testing.assert_array_equal(learnt.levels.contact, levels_from_spread(arm, spread).contact)
    assert learnt.how.startswith(f'learnt from {learner.moved:.3g} s of free motion')
    assert learnt.span == (0.0, t) and learnt.still == [] and learnt.warnings() == []


def test_learning_refuses_a_flawed_calibration_and_learns_again_from_the_next_state(arm):
    hidden = [(0.1 + 0.2 * k, 0.2 + 0.2 * k) for k in range(5)]      # half of the first 1 s
    refused, learnt = learn(Learning(arm, 0.8), swing(arm, 6.0, hidden=hidden))
    assert len(refused) == 1, refused
    assert refused[0].text.startswith('contact thresholds not used, learnt from') and \
        'gaps in the joint states hid' in refused[0].text and \
        refused[0].text.endswith('learning them again')
    assert isinstance(learnt, Learnt) and learnt.span[0] > 0.8, learnt.span   # from there


def test_learning_keeps_the_levels_given_and_says_the_joints_that_never_moved(arm):
    learnt = learn(Learning(arm, 1.0, given=(None, 50.0)), swing(arm, 3.0, still=(2,)))[1]
    assert np.all(learnt.levels.collision == 50.0)
    assert learnt.still == ['joint3']
    assert learnt.warnings() == ['joints joint3 did not move during the calibration (under '
                                 f'{STILL:g} rad/s): their levels hold at rest, and motion may '
                                 'cross them']


def test_a_restart_starts_learning_again(arm):
    learning = Learning(arm, 1.0)
    assert not learning.started
    learn(learning, swing(arm, 0.6))
    assert learning.started and learning.moved > 0.5
    learning.restart()
    assert not learning.started and learning.moved == 0.0
