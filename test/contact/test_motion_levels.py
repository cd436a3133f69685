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
Levels that follow the motion: learnt on a slow motion, they hold on one twice as fast.

The plant is MuJoCo's bundled arm with its inertia 15 % and its friction 20 % above the
model's (the realistic error of a robot's model); the model's computed torque drives every
joint along a sum of sines, once at a speed and once at twice it (the same path, each joint's
velocity doubled and its acceleration four times).  The levels are learnt on the slow run
alone, by the identification's path (:func:`.detection.residual_spread`, written into the
parameters and read back) and by the node's own calibration (:func:`.replay.replay`, auto),
and judged on the fast one: the spread that grows with each joint's speed and the model's
torque raises no level there, where one number per joint (today's rule) does.
"""

import dataclasses

import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.contact import detection
from manipulator_dynamics.contact.detection import motion_spread, residual_spread, Spread, \
    spread_of_parameters, spread_yaml
from manipulator_dynamics.contact.observer import beyond, observe, SETTLING
from manipulator_dynamics.contact.replay import replay
from manipulator_dynamics.plant import MujocoPlant
from manipulator_dynamics.recordings.log import States
import numpy as np
import pytest

pytest.importorskip('mujoco', reason="the plant is MuJoCo's: pip install .[sim]")

DEMO = robots.path('demo_arm')
DT = 1e-3
GAIN = 50.0
Q0 = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.9, 0.0])
AMPLITUDE = np.array([0.6, 0.3, 0.5, 0.4, 0.6, 0.5, 0.8])
#: rad/s at speed 1: incommensurate, so that the run visits many combinations of the joints
FREQUENCY = 2 * np.pi * np.array([0.11, 0.13, 0.17, 0.19, 0.23, 0.29, 0.31])
SECONDS = 8.0
#: The plant's error against the model: inertia 15 % heavier, friction 20 % stronger.
INERTIA, FRICTION = 1.15, 1.2


def motion(t, speed):
    """``(q, qd, qdd)`` of the sines at ``t`` (s), every frequency times ``speed``."""
    w = FREQUENCY * speed
    return (Q0 + AMPLITUDE * np.sin(w * t), AMPLITUDE * w * np.cos(w * t),
            -AMPLITUDE * w ** 2 * np.sin(w * t))


def run(model, truth, speed):
    """Drive ``truth`` by ``model``'s computed torque along the sines; return the log."""
    plant = MujocoPlant(truth, motion(0.0, speed)[0], DT)
    steps = round(SECONDS / DT)
    t = np.arange(steps) * DT
    q, qd, tau = (np.zeros((steps, model.n)) for _ in range(3))
    command = md.gravity_torques(model, plant.q)
    for k in range(steps):
        q[k], qd[k], tau[k] = plant.q, plant.qd, command
        q_d, qd_d, qdd_d = motion(t[k], speed)
        command = np.clip(md.inverse_dynamics(model, q[k], qd[k], qdd_d + 400.0 * (q_d - q[k])
                                              + 40.0 * (qd_d - qd[k])),
                          -model.effort_limit, model.effort_limit)
        plant.step(command)
    return {'t': t, 'q': q, 'qd': qd, 'tau': tau}


@pytest.fixture(scope='module')
def logs():
    """Give the model, and the slow and the fast runs of the plant that is off from it."""
    model = md.load_model(DEMO)
    truth = dataclasses.replace(model, inertial=model.inertial * INERTIA,
                                viscous=model.viscous * FRICTION,
                                coulomb=model.coulomb * FRICTION)
    return model, run(model, truth, 1.0), run(model, truth, 2.0)


def states(model, log):
    """Hold a run's log as the replay watches it: its states, stamps as they are."""
    return States.of(model, log['t'], log['q'], log['qd'], log['tau'])


def judged(model, spread, log):
    """Replay ``log`` with the levels ``spread`` sets, as an identification would give them."""
    return replay(model, states(model, log), gain=GAIN,
                  identified={'contact_spread': spread_yaml(model, spread, GAIN, 'slow')})


def test_the_fast_run_is_the_slow_one_at_twice_the_speed(logs):
    """The scenario: the same path, the joints twice as fast, the model's torque larger."""
    model, slow, fast = logs
    k = np.arange(1000, 4000)                   # fast at t is slow at 2 t, the start aside
    # the arm's four joints (the wrist's, of little inertia, lag their path under this gain)
    np.testing.assert_allclose(np.abs(fast['qd'][k, :4]).max(axis=0),
                               2 * np.abs(slow['qd'][2 * k, :4]).max(axis=0), rtol=0.15)
    assert np.abs(fast['tau'][k, 0]).max() > 2.0 * np.abs(slow['tau'][2 * k, 0]).max()


def test_levels_learnt_on_the_slow_run_raise_none_on_the_fast_one(logs):
    """Growing with speed and torque: every fast state within its levels, with a margin."""
    model, slow, fast = logs
    spread = residual_spread(model, slow, GAIN)
    assert spread.growing() and np.any(spread.torque[:6] > 0.0), spread   # the inertia's
    found = judged(model, spread, fast)
    assert found.levels.growing()
    assert found.episodes == [], [e.describe() for e in found.episodes]
    for joint, within in found.within.items():
        assert within['contact'] == 1.0 and within['margin'] < 0.95, (joint, within)
    assert 'margin' in found.table(model)


def test_one_number_per_joint_learnt_on_the_slow_run_is_crossed_on_the_fast_one(logs):
    """Today's rule, one spread per joint: the fast run crosses a contact level."""
    model, slow, fast = logs
    r, band = observe(model, slow['t'], slow['q'], slow['qd'], slow['tau'], GAIN)
    settled = slow['t'] >= SETTLING / GAIN
    constant, _ = detection.free_motion_spread(model, beyond(r, band)[settled])
    constant = np.maximum(constant, detection.FLOOR * np.abs(slow['tau']).max())
    found = judged(model, constant, fast)
    assert not found.levels.growing()
    assert found.episodes, 'one number per joint, learnt slow, holds at twice the speed'
    assert max(w['margin'] for w in found.within.values()) > 1.0


def test_the_node_s_own_calibration_on_the_slow_run_holds_on_the_fast_one(logs):
    """Auto levels, learnt by the node's policy over the slow run's first seconds, hold fast."""
    model, slow, fast = logs
    learnt = replay(model, states(model, slow), gain=GAIN,
                    calibration=6.0)
    assert learnt.levels is not None and learnt.levels.growing(), learnt.how
    assert 'per rad/s' in learnt.how
    contact, collision, *growth = learnt.levels
    found = replay(model, states(model, fast), gain=GAIN,
                   contact=contact, collision=collision, growth=growth)
    assert found.episodes == [], [e.describe() for e in found.episodes]


def test_a_spread_is_found_as_it_grows():
    """
    A residual whose envelope is known: one number within the motion seen, its slopes beyond.

    ``rest`` is the quantile of the whole run (today's rule: :func:`free_motion_spread`), the
    growth starts at the fastest and largest states seen, at the envelope's own slopes.
    """
    arm = md.load_model(DEMO)
    rng = np.random.default_rng(0)
    N = 20000
    qd = rng.uniform(-2.0, 2.0, (N, arm.n))
    tau = rng.uniform(-30.0, 30.0, (N, arm.n))
    zero = np.zeros(arm.n)
    truth = Spread(np.full(arm.n, 0.2), np.full(arm.n, 0.3), np.full(arm.n, 0.05), zero, zero)
    r = truth.at(qd, tau) * rng.uniform(-1.0, 1.0, (N, arm.n))   # up to the envelope, evenly
    spread, moments = motion_spread(arm, r, qd=qd, tau=tau)
    assert moments == []
    plain, _ = detection.free_motion_spread(arm, r)
    np.testing.assert_array_equal(spread.rest, plain)
    np.testing.assert_array_equal(plain, np.quantile(np.abs(r), 0.999, axis=0))
    np.testing.assert_allclose(spread.speed, truth.speed, rtol=0.15)
    np.testing.assert_allclose(spread.torque, truth.torque, rtol=0.15)
    np.testing.assert_array_equal(spread.speed_from, np.abs(qd).max(axis=0))
    np.testing.assert_array_equal(spread.torque_from, np.abs(tau).max(axis=0))
    assert np.mean(np.abs(r) <= spread.at(qd, tau)) >= 0.999
    faster = spread.at(2 * qd, 2 * tau)          # beyond the run: along the envelope's slopes
    np.testing.assert_allclose(faster.max(axis=0), truth.at(4.0, 60.0), rtol=0.1)


def test_levels_of_a_spread_grow_in_the_detector_and_the_parameters():
    """The detector judges each state at its own levels; the YAML carries the growth."""
    arm = md.load_model(DEMO)
    spread = Spread(np.full(arm.n, 0.5), np.full(arm.n, 1.0), np.full(arm.n, 0.1),
                    np.full(arm.n, 0.5), np.full(arm.n, 20.0))
    levels = md.thresholds_from_spread(arm, spread)
    np.testing.assert_allclose(levels.contact, 1.0)
    np.testing.assert_allclose(levels.speed, 2.0)          # 1 N m per rad/s on 0.5
    detector = md.ContactDetector(arm, levels)
    r = np.zeros(arm.n)
    r[0] = 2.5                                  # above 2 x 1.0 within the motion seen
    qd = np.zeros(arm.n)
    qd[0] = 0.5
    assert detector.update(r, 0.0, None, qd, r) == detection.COLLISION
    detector.rearm()
    qd[0] = 1.5                                 # 1 rad/s beyond: 1 + 2 x 1, 2.5 under 3
    assert detector.update(r, 0.1, None, qd, r) == detection.FREE
    qd[0] = 0.7                                 # contact 1.4, collision 2.8: 2.5 between
    assert detector.update(r, 0.2, None, qd, r) == detection.CONTACT
    effort = r.copy()
    effort[0] += 30.0                           # the model's torque 10 N m beyond its 20
    assert detector.update(r, 0.3, None, qd, effort) == detection.FREE  # x 3.4: 3.4, 6.8
    document = {'contact_spread': spread_yaml(arm, spread, GAIN, 'test')}
    read = spread_of_parameters(arm, document, GAIN)
    for a, b in zip(read, spread):
        np.testing.assert_array_equal(a, b)
    old = {'contact_spread': {'observer_gain': GAIN, 'source': 'before',
                              'peak': dict.fromkeys(arm.joint_names, 0.5)}}
    assert not np.any(spread_of_parameters(arm, old, GAIN).speed), 'a spread written before'
