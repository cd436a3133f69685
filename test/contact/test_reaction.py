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

"""The reactions to a collision as laws of the model, latched, and closed on a plant."""

import manipulator_dynamics as md
from manipulator_dynamics.contact.reaction import FLOAT, NONE, Reaction, REACTIONS, REFLEX, \
    REFLEX_SPEED, REFLEX_TIME, STOP, STOP_TIME
from manipulator_dynamics.plant import InternalPlant
import numpy as np
import pytest


def state(arm, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, arm.n), rng.uniform(-1, 1, arm.n)


def test_the_default_is_the_stop():
    assert REACTIONS[0] == STOP and set(REACTIONS) == {STOP, FLOAT, REFLEX, NONE}


@pytest.mark.parametrize('kind, stop_time, said', [
    ('halt', STOP_TIME, "must be one of stop, float, reflex, none, got 'halt'"),
    (STOP, 0.0, 'stop_time must be a finite number of seconds > 0, got 0.0'),
    (STOP, np.nan, 'stop_time must be a finite number of seconds > 0')])
def test_a_reaction_it_cannot_be_is_refused_by_name(arm, kind, stop_time, said):
    with pytest.raises(ValueError, match=said.replace('(', r'\(').replace(')', r'\)')):
        Reaction(arm, kind, stop_time)


def test_the_stop_decelerates_every_joint_by_the_model_and_is_gravity_at_rest(arm):
    q, qd = state(arm)
    law = Reaction(arm, STOP, stop_time=0.1)
    law.trigger(1.0, np.ones(arm.n), 'a test')
    expected = md.inverse_dynamics(arm, q, qd, -qd / 0.1)
    np.testing.assert_allclose(law.torques(q, qd, 1.0),
                               np.clip(expected, -arm.effort_limit, arm.effort_limit))
    np.testing.assert_allclose(law.torques(q, np.zeros(arm.n), 1.0),
                               md.gravity_torques(arm, q), atol=1e-12)
    np.testing.assert_allclose(law.torques(q, None, 1.0), md.gravity_torques(arm, q),
                               atol=1e-12)


def test_float_is_gravity_compensation_whatever_the_motion(arm):
    q, qd = state(arm, 1)
    law = Reaction(arm, FLOAT)
    law.trigger(0.0, np.ones(arm.n), 'a test')
    np.testing.assert_allclose(law.torques(q, qd, 5.0), md.gravity_torques(arm, q))


def test_the_reflex_drives_along_the_external_torque_then_stops(arm):
    q, qd = state(arm, 2)
    law = Reaction(arm, REFLEX)
    r = np.zeros(arm.n)
    r[1], r[3] = 4.0, -2.0                           # the obstacle pushes joints 2 and 4
    law.trigger(3.0, r, 'a test')
    v = REFLEX_SPEED * r / 4.0
    np.testing.assert_allclose(
        law.torques(q, qd, 3.0 + REFLEX_TIME / 2),
        np.clip(md.inverse_dynamics(arm, q, qd, (v - qd) / STOP_TIME), -arm.effort_limit,
                arm.effort_limit))
    np.testing.assert_allclose(law.torques(q, qd, 3.0 + REFLEX_TIME),
                               Reaction(arm, STOP).torques(q, qd, 0.0))


def test_the_commands_stay_within_the_effort_limits(arm):
    q = np.zeros(arm.n)
    qd = np.full(arm.n, 50.0)                         # far beyond what a drive stops at once
    for kind in (STOP, REFLEX):
        law = Reaction(arm, kind)
        law.trigger(0.0, np.ones(arm.n), 'a test')
        tau = law.torques(q, qd, 0.0)
        assert np.all(np.abs(tau) <= arm.effort_limit) and np.any(
            np.abs(tau) == arm.effort_limit)


def test_it_latches_once_until_rearmed_and_none_never_does(arm):
    law = Reaction(arm, STOP)
    assert not law.latched and law.describe() == 'armed: stop on a collision'
    assert law.trigger(2.0, np.ones(arm.n), 'collision at 2.000 s: joint2 9 N m')
    assert not law.trigger(2.5, np.ones(arm.n), 'a second one'), 'the first one goes on'
    assert law.latched and law.describe() == ('stop since 2.000 s (collision at 2.000 s: '
                                              'joint2 9 N m): latched until ~/rearm')
    assert law.rearm() == (2.0, 'collision at 2.000 s: joint2 9 N m')
    assert not law.latched and law.rearm() is None
    none = Reaction(arm, NONE)
    assert not none.trigger(1.0, np.ones(arm.n), 'a collision') and not none.latched


def test_the_stop_brings_a_fast_arm_to_rest_on_the_model(arm):
    """Closed on the package's own plant (the model exactly): at rest well within 0.5 s."""
    q0 = np.array([0.0, 0.6, 0.3, -0.9, 0.2, 0.7, 0.1])
    plant = InternalPlant(arm, q0, 1e-3, friction=False)
    plant.qd = np.full(arm.n, 1.0)                  # every joint at 1 rad/s
    law = Reaction(arm, STOP)
    law.trigger(0.0, np.ones(arm.n), 'a test')
    for k in range(500):
        plant.step(law.torques(plant.q, plant.qd, k * 1e-3))
    assert np.abs(plant.qd).max() < 1e-3, plant.qd
