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
dynamics_node's contact output on a starved stream: gaps ridden through, the guard kept.

A MuJoCo Panda under computed torque at 1 kHz, pushed at two links, and the joint states that
reach dynamics_node's observer thinned as a driver's realtime publisher thins them when its
thread is late: a gap of 10-100 ms every 0.2-1 s.  In lockstep, in this process: the plant's
step, then the state (if it is not dropped) through the node's own
:class:`~manipulator_dynamics.nodes.contact.ContactOutput`, so the machine's load changes no
number of it.
"""

from helpers import ERD, erd
import manipulator_dynamics as md
from manipulator_dynamics.contact.detection import COLLISION, CONTACT, FREE, NOT_WATCHING
from manipulator_dynamics.contact.detection import ride_bound
from manipulator_dynamics.control import computed_torque
import numpy as np
import pytest
pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs it)')
pytest.importorskip('mujoco', reason='the MuJoCo plant: pip install .[sim]')
from rosutil import in_process  # noqa: E402, I100
from std_srvs.srv import Trigger  # noqa: E402, I100

DT = 1e-3                       # s: the plant's step and the state period
GAIN = 50.0                     # 1/s: the node's default gain
TAU = 1.0 / GAIN
SECONDS = 60.0
KP, KD = 2500.0, 100.0          # computed torque, as the ground-truth test of the observer
#: (link, kind, wrench in the base's axes) of the pushes, in turn: the observer's ground truth.
PUSHES = [('panda_link7', 'step', [12.0, -8.0, 15.0, 1.5, -1.0, 2.0]),
          ('panda_link4', 'ramp', [-10.0, 14.0, 6.0, 2.0, 1.0, -1.5])]
FIRST_PUSH, PUSH_EVERY, PUSH_FOR, RAMP = 6.0, 4.5, 1.5, 0.5     # s
#: The bounds of the issue: detection within 60 ms plus the gap over the push's crossing, the
#: estimate within 2 % of the push's peak over its settled part.
DELAY, ESTIMATE_TOL = 0.060, 0.02
#: The pushes that end within the run.
PUSH_COUNT = int((SECONDS - FIRST_PUSH - PUSH_FOR) // PUSH_EVERY) + 1
#: A gap past what the observer rides through (at 50/s: 138 ms), in free motion: it restarts.
LONG_GAP_AT, LONG_GAP = 32.6, 0.3


def motion(model, t):
    """Sample a slow ``1 - cos`` motion about a well-conditioned Panda posture, fingers held."""
    q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8, 0.02, 0.02])
    amp = np.r_[np.full(7, 0.2), 0.0, 0.0]
    w = 2 * np.pi * np.r_[np.linspace(0.2, 0.4, 7), 1.0, 1.0]
    c, s = np.cos(w * t), np.sin(w * t)
    return q0 + amp * (1 - c), amp * w * s, amp * w * w * c


def push_at(t):
    """Return ``(index, link, wrench)`` of the push at ``t``, or None."""
    k = int((t - FIRST_PUSH) // PUSH_EVERY)
    start = FIRST_PUSH + k * PUSH_EVERY
    if t < FIRST_PUSH or t >= start + PUSH_FOR:
        return None
    link, kind, wrench = PUSHES[k % len(PUSHES)]
    scale = 1.0 if kind == 'step' else min(1.0, (t - start) / RAMP)
    return k, link, scale * np.asarray(wrench)


def starved(rng, seconds):
    """Return the gaps ``[(start, end), ...]``: 10-100 ms every 0.2-1 s, and one long one."""
    gaps, t = [], 0.5
    while t < seconds:
        length = rng.uniform(0.010, 0.100)
        gaps.append((t, t + length))
        t += length + rng.uniform(0.2, 1.0)
    gaps = [g for g in gaps if not (g[0] < LONG_GAP_AT + LONG_GAP + 0.2 and
                                    g[1] > LONG_GAP_AT - 0.2)]
    return sorted(gaps + [(LONG_GAP_AT, LONG_GAP_AT + LONG_GAP)])


def dropped(gaps, t):
    return any(a < t < b for a, b in gaps)


@pytest.fixture(scope='module')
def run():
    """Run the plant and the node's observer in lockstep; record what the node said each state."""
    from manipulator_dynamics.nodes.dynamics_node import DynamicsNode
    from manipulator_dynamics.plant import make_plant
    if ERD is None:
        pytest.skip('example-robot-data is not installed (pip install example-robot-data)')
    urdf = erd('panda_description/urdf/panda.urdf')
    model = md.load_model(urdf)
    gaps = starved(np.random.default_rng(4), SECONDS)
    q0, _, _ = motion(model, 0.0)
    plant = make_plant('mujoco', model, q0, DT, friction=False)
    with in_process(DynamicsNode, urdf_path=urdf, mode='none', outputs=['gravity_torques'],
                    external_torques=True,
                    observer_friction=False) as node:       # the plant has none
        contact = node.contact
        steps = round(SECONDS / DT)
        truth = np.zeros((steps + 1, model.n))
        seen = []                   # (t, said, residual, diagnostics level, text, detector)
        tau = computed_torque(model, plant.q, plant.qd, *motion(model, 0.0), KP, KD)
        origin = 10 ** 9            # ns: the stamps, on some clock
        rearm_at = None
        for k in range(steps + 1):
            t = k * DT
            if not dropped(gaps, t):
                contact.on_state(plant.q, plant.qd, tau, origin + round(t * 1e9))
                level, text = contact.summary()
                seen.append((t, contact.said, contact.observer.residual.copy(), level, text,
                             contact.detector))
            pushing = push_at(t)
            if pushing is None and rearm_at is not None and t >= rearm_at:
                contact._rearm(Trigger.Request(), Trigger.Response())  # as ~/rearm would
                rearm_at = None
            if pushing is not None:
                rearm_at = FIRST_PUSH + pushing[0] * PUSH_EVERY + PUSH_FOR + 10 * TAU
            plant.push(pushing[1] if pushing else None, pushing[2] if pushing else None,
                       world=True)
            tau = computed_torque(model, plant.q, plant.qd, *motion(model, t), KP, KD)
            plant.step(tau)          # held over the step: the effort the next state reports
            now = plant.pushed()
            if k < steps and now is not None:
                truth[k + 1] = now[2]
        levels = contact.detector.levels
    return model, gaps, truth, seen, levels


def test_gaps_are_ridden_through_and_a_long_one_restarts_the_observer_its_levels_kept(run):
    """
    The thresholds are learnt once, over free motion, and kept through a restart.

    Only the long gap, past :func:`ride_bound`, restarts the observer.
    """
    model, gaps, truth, seen, levels = run
    assert ride_bound(TAU, DT) == pytest.approx(np.log(1000) * TAU)
    assert max(b - a for a, b in gaps if a != LONG_GAP_AT) < ride_bound(TAU, DT)
    detectors = {id(d) for *_, d in seen if d is not None}
    assert len(detectors) == 1, 'the thresholds were learnt more than once'
    first = next(t for t, *_, d in seen if d is not None)
    assert first < FIRST_PUSH


def test_no_level_is_raised_outside_a_push(run):
    """No contact or collision starts outside a push (a collision stays latched until ~/rearm)."""
    model, gaps, truth, seen, levels = run
    before = None
    raised = 0
    for t, said, *_ in seen:
        if said in (CONTACT, COLLISION) and said != before:
            k = int((t - FIRST_PUSH) // PUSH_EVERY)
            start = FIRST_PUSH + k * PUSH_EVERY
            assert t >= FIRST_PUSH and t < start + PUSH_FOR, \
                f'{("contact", "collision")[said - 1]} at {t:.3f} s, outside every push'
            raised += 1
        before = said
    assert raised >= PUSH_COUNT


def test_each_push_is_detected_within_60_ms_and_the_gap_over_its_crossing(run):
    model, gaps, truth, seen, levels = run
    t_all = np.arange(len(truth)) * DT
    said = np.array([s if s is not None else -1 for _, s, *_ in seen])
    t_seen = np.array([t for t, *_ in seen])
    covered = 0
    for k in range(PUSH_COUNT):
        start = FIRST_PUSH + k * PUSH_EVERY
        during = (t_all >= start) & (t_all < start + PUSH_FOR)
        over = during & (np.abs(truth) > levels.contact).any(axis=1)
        assert over.any(), f'push {k} never crosses a contact level'
        crossed = t_all[over][0]
        gap = next((b - a for a, b in gaps if a < crossed < b), 0.0)
        covered += gap > 0
        found = t_seen[(t_seen >= start) & (said >= CONTACT) & (said != NOT_WATCHING)]
        assert found.size, f'push {k} at {start:g} s was never detected'
        assert found[0] - crossed <= DELAY + gap + 1e-9, \
            f'push {k}: detected {1e3 * (found[0] - crossed):.0f} ms after it crossed ' \
            f'(a gap of {1e3 * gap:.0f} ms over it)'
    assert covered >= 1, 'no push crossed its level inside a gap: the test shows nothing of that'


def test_the_estimate_is_within_2_percent_of_each_push_over_its_settled_part(run):
    model, gaps, truth, seen, levels = run
    t_seen = np.array([t for t, *_ in seen])
    r = np.array([x[2] for x in seen])
    at = np.round(t_seen / DT).astype(int)
    for k in range(PUSH_COUNT):
        start = FIRST_PUSH + k * PUSH_EVERY
        rise = RAMP if PUSHES[k % len(PUSHES)][1] == 'ramp' else 0.0
        settled = (t_seen >= start + rise + 5 * TAU) & (t_seen < start + PUSH_FOR)
        peak = np.abs(truth[at[settled]]).max()
        error = np.sqrt(np.mean((r[settled] - truth[at[settled]]) ** 2, axis=0)).max()
        assert error <= ESTIMATE_TOL * peak, \
            f'push {k}: RMS error {error:.3g} N m against a peak of {peak:.3g}'


def test_diagnostics_warn_exactly_while_detection_is_not_available(run):
    """
    WARN (not available) before the thresholds and for 5 time constants after the restart.

    And never otherwise; ~/contact never says free while it is not available.
    """
    model, gaps, truth, seen, levels = run
    restarted = LONG_GAP_AT + LONG_GAP
    for t, said, r, level, text, detector in seen:
        blind = detector is None or restarted <= t < restarted + 5 * TAU - 1e-9
        said_blind = level == 1 and text.startswith('contact detection not available')
        assert said_blind == blind, (t, level, text)
        if blind:
            assert said != FREE, f'~/contact said free at {t:.3f} s while not watching'
    restart = [x for x in seen if restarted <= x[0] < restarted + 5 * TAU]
    assert restart and all(x[1] == NOT_WATCHING for x in restart)
    assert 'the observer restarted: a gap of 0.3 s' in restart[-1][4]
