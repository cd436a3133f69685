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
A held arm pushed by hand, its levels from the identification, as a user takes them.

The demo arm on MuJoCo, its joints' dry friction a constraint (it sticks), its efforts measured
with noise.  Free motion under computed torque is logged three times: ``identify run.csv
--validate check.csv --parameters-out p.yaml`` identifies the arm and writes its
``contact_spread``; ``contact URDF LOG --parameters p.yaml`` replays a log through the node's
observer with the levels that spread sets.  A third run of free motion is held out.  Then the
arm is held at a pose by a PD about gravity compensation, once compliant and once so stiff that
its joints never move faster than the observer's ``still``, and pushed by hand at link5 ten
times (a raised cosine up and down, held between), each push scaled to 0.8-3 times the contact
level plus ``2 Fc`` of the joint it loads most.

What friction at rest can hide is ``2 Fc`` (it holds anywhere within ``+-Fc``, and the
observer's band is that interval: docs/contact.md): a push is owed detection once its torque on
some joint exceeds that joint's contact level (at the state: the levels grow beyond the motion
the calibration saw, with the model's torque here the efforts less the push) plus ``2 Fc``,
within three time constants of the observer (60 ms).  No level may be raised in the held-out
free motion, nor outside a push.  In this process, step by step: the machine's load changes no
number of it.
"""

import contextlib
import io
import json

from helpers import write_log_csv
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.cli import main
from manipulator_dynamics.control import computed_torque
import numpy as np
import pytest
pytest.importorskip('mujoco', reason='the MuJoCo plant: pip install .[sim]')
from manipulator_dynamics.plant import make_plant  # noqa: E402, I100

DT = 1e-3
GAIN = 50.0                     # 1/s: the node's default observer gain
LATE = 3.0 / GAIN               # s: detection owed within three time constants
HOLD = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0])
NOISE = 0.03                    # the efforts' noise, a share of the largest gravity torque
FREE_SECONDS = 20.0
PUSHES = 10


def free_motion(arm, seed, rng, sigma):
    """Log the arm tracking an excitation (computed torque), its efforts noisy."""
    motion = md.excitation_trajectory(arm, duration=FREE_SECONDS, seed=seed, maxiter=0)
    t = np.arange(int(round(FREE_SECONDS / DT))) * DT
    desired = [np.stack([np.interp(t, motion.t, x[:, j]) for j in range(arm.n)], axis=1)
               for x in (motion.q, motion.qd, motion.qdd)]
    plant = make_plant('mujoco', arm, desired[0][0], DT, friction=True)
    q, qd, tau = (np.empty((len(t), arm.n)) for _ in range(3))
    for k in range(len(t)):
        q[k], qd[k] = plant.q, plant.qd
        tau[k] = computed_torque(arm, q[k], qd[k], desired[0][k], desired[1][k], desired[2][k],
                                 400.0, 40.0, friction=True)
        plant.step(tau[k])
    return t, q, qd, tau + sigma * rng.normal(size=tau.shape)


def pushes(rng):
    """``[(start, rise, hold, direction)]``: hand pushes 1.5-2.5 s apart."""
    out, start = [], 1.5
    for _ in range(PUSHES):
        direction = rng.normal(size=3)
        rise, hold = rng.uniform(0.15, 0.4), rng.uniform(0.3, 0.8)
        out.append((start, rise, hold, direction / np.linalg.norm(direction)))
        start += 2 * rise + hold + rng.uniform(1.5, 2.5)
    return out, start


def hand(t, start, rise, hold):
    """Return the push's share of its peak at ``t``: a raised cosine up, held, then down."""
    s = t - start
    if 0 <= s < rise:
        return 0.5 * (1 - np.cos(np.pi * s / rise))
    if rise <= s < rise + hold:
        return 1.0
    if rise + hold <= s < 2 * rise + hold:
        return 0.5 * (1 + np.cos(np.pi * (s - rise - hold) / rise))
    return 0.0


def held_and_pushed(arm, bandwidth, planned, seconds, rng, sigma):
    """Hold the arm at HOLD by a PD of ``bandwidth`` rad/s about gravity; push as planned."""
    stiffness = np.diag(md.inertia_matrix(arm, HOLD))
    plant = make_plant('mujoco', arm, HOLD, DT, friction=True)
    t = np.arange(int(round(seconds / DT))) * DT
    q, qd, tau, truth = (np.zeros((len(t), arm.n)) for _ in range(4))
    for k, now in enumerate(t):
        force = sum(hand(now, start, rise, hold) * push for start, rise, hold, push in planned)
        plant.push('link5', np.r_[force, 0.0, 0.0, 0.0] if np.any(force) else None, world=True)
        pushed = plant.pushed()
        if pushed is not None:
            truth[k] = pushed[2]
        q[k], qd[k] = plant.q, plant.qd
        tau[k] = md.gravity_torques(arm, q[k]) + stiffness * (
            bandwidth ** 2 * (HOLD - q[k]) - 2 * bandwidth * qd[k])
        plant.step(tau[k])
    return t, q, qd, tau + sigma * rng.normal(size=tau.shape), truth


def load_of(arm, direction):
    """Return a unit force at link5 along ``direction`` (base axes) on the joints at HOLD."""
    plant = make_plant('mujoco', arm, HOLD, DT, friction=False)
    plant.push('link5', np.r_[direction, 0.0, 0.0, 0.0], world=True)
    return plant.pushed()[2]


def replayed(arm, path, parameters):
    """Run ``manipulator-dynamics contact`` on a log, the levels from the identification."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(['contact', robots.path('demo_arm'), str(path), '--parameters',
                     str(parameters), '--format', 'json']) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope='module')
def identified(arm, tmp_path_factory):
    """Identify the arm: its parameters file (contact_spread in it) and the runs' folder."""
    folder = tmp_path_factory.mktemp('held_arm')
    rng = np.random.default_rng(7)
    sigma = NOISE * np.abs(md.gravity_torques(arm, HOLD)).max()
    for seed, name in enumerate(('run', 'check', 'held_out')):
        t, q, qd, tau = free_motion(arm, seed, rng, sigma)
        write_log_csv(folder / f'{name}.csv', arm.joint_names, t, q, tau, qd=qd)
    parameters = folder / 'p.yaml'
    assert main(['identify', robots.path('demo_arm'), str(folder / 'run.csv'), '--validate',
                 str(folder / 'check.csv'), '--parameters-out', str(parameters),
                 '--format', 'json']) == 0
    return folder, parameters, rng, sigma


def test_the_levels_from_the_identification_raise_none_in_free_motion_held_out(arm,
                                                                               identified):
    folder, parameters, _, _ = identified
    report = replayed(arm, folder / 'held_out.csv', parameters)
    assert report['how'].startswith('learnt from the identification'), report['how']
    assert report['episodes'] == [], report['episodes']


@pytest.mark.parametrize('bandwidth', [30.0, 150.0])
def test_a_hand_push_on_a_held_arm_is_seen_once_friction_at_rest_cannot_hide_it(
        arm, identified, bandwidth):
    """
    Every push, once its torque exceeds a joint's contact level plus ``2 Fc``, within 60 ms.

    The stiff hold (150 rad/s) keeps every joint slower than ``still`` through the pushes, so
    the band stands throughout; under the compliant one (30 rad/s) the larger pushes move their
    joints and are seen sooner.  No level is raised outside a push.
    """
    folder, parameters, rng, sigma = identified
    spread = md.spread_of_parameters(arm, str(parameters), GAIN)
    levels = md.thresholds_from_spread(arm, spread).contact + 2.0 * arm.coulomb
    planned, seconds = pushes(np.random.default_rng(11))
    multiples = np.random.default_rng(12).permutation(np.linspace(0.8, 3.0, PUSHES))
    scaled = []
    for (start, rise, hold, direction), multiple in zip(planned, multiples):
        load = np.abs(load_of(arm, direction))
        j = np.argmax(load / levels)            # of the level and what friction may hide
        scaled.append((start, rise, hold, direction * multiple * levels[j] / load[j]))
    t, q, qd, tau, truth = held_and_pushed(arm, bandwidth, scaled, seconds, rng, sigma)
    path = folder / f'held_{bandwidth:g}.csv'
    write_log_csv(path, arm.joint_names, t, q, tau, qd=qd)
    episodes = replayed(arm, path, parameters)['episodes']
    # what friction at rest cannot hide, above each state's own level: the levels grow with
    # the joint's speed and the model's torque, here the torque the motion needed (the
    # efforts less the push), as a state free of the push would have it
    owed = md.thresholds_from_spread(arm, spread).at(qd, tau - truth)[0] + 2.0 * arm.coulomb
    found, hidden = [], 0
    for start, rise, hold, _ in scaled:
        end = start + 2 * rise + hold
        mine = [e for e in episodes if start <= e['start'] <= end + LATE]
        rows = np.flatnonzero((t >= start) & (t < end))
        over = (np.abs(truth[rows]) > owed[rows]).any(axis=1)
        if over.any():
            crossed = t[rows[np.argmax(over)]]
            assert mine and mine[0]['start'] <= crossed + LATE, (start, crossed, mine)
            found.append(mine[0]['start'] - crossed)
        else:
            hidden += 1
    outside = [e for e in episodes
               if not any(s <= e['start'] <= s + 2 * r + h + LATE for s, r, h, _ in scaled)]
    assert outside == [], outside
    assert len(found) >= PUSHES // 2, (found, hidden)  # the test judges pushes, not none
    if bandwidth == 150.0:
        assert np.abs(qd).max() < 0.01, 'the stiff hold keeps every joint under still'
