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

"""A calibration refuses the levels of a stretch the states hid, or that no model explains."""

import manipulator_dynamics as md
from manipulator_dynamics.contact.calibration import Calibration, GAP_SHARE, SPREAD_SHARE
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
