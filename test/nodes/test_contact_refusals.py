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
Levels a node cannot honour are not used: a stall while they are learnt starts them again.

The bundled arm under computed torque on MuJoCo, its states through dynamics_node's own
:class:`~manipulator_dynamics.nodes.contact.ContactOutput` in lockstep, in this process (the
machine's load changes no number of it).  A stall (the states stop past what the observer
rides through) while the levels are being learnt: the node says so at WARN, watches nothing,
and learns them again from the motion after it.  (The refusal of gaps and of spreads no model
explains is :class:`~manipulator_dynamics.contact.calibration.Calibration`'s, tested in
test/contact/test_calibration.py; the node applies it as it does the stall's.)
"""

import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.contact.detection import COLLISION, CONTACT, FREE
from manipulator_dynamics.control import computed_torque
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs it)')
pytest.importorskip('mujoco', reason='the MuJoCo plant: pip install .[sim]')
from rosutil import in_process  # noqa: E402, I100

DEMO = robots.path('demo_arm')
DT = 1e-3
KP, KD = 400.0, 40.0
CALIBRATION = 1.5                     # s of motion the levels are learnt from


def motion(model, t):
    """Sample a slow swing of every joint about a well-conditioned posture."""
    q0 = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.9, 0.0])
    w = 2 * np.pi * np.linspace(0.3, 0.5, model.n)
    return q0 + 0.2 * np.sin(w * t), 0.2 * w * np.cos(w * t), -0.2 * w * w * np.sin(w * t)


def run(seconds, dropped):
    """
    Run the loop; return ``(warnings, levels (t, said) per state, detector's first time)``.

    ``dropped(t)``: whether the state at ``t`` (s) never reaches the node.
    """
    from manipulator_dynamics.nodes.dynamics_node import DynamicsNode
    from manipulator_dynamics.plant import MujocoPlant
    model = md.load_model(DEMO)
    plant = MujocoPlant(model, motion(model, 0.0)[0], DT)
    warned, said, learnt = [], [], None
    with in_process(DynamicsNode, urdf_path=DEMO, mode='none', outputs=[''],
                    external_torques=True, contact_calibration=CALIBRATION) as node:
        contact = node.contact
        warning = contact.log.warning
        contact.log.warning = lambda text: (warned.append(text), warning(text))
        tau = md.gravity_torques(model, plant.q)
        for k in range(round(seconds / DT)):
            t = k * DT
            if not dropped(t):
                contact.on_state(plant.q, plant.qd, tau, 10 ** 9 + round(t * 1e9))
                said.append((t, contact.said))
                if learnt is None and contact.detector is not None:
                    learnt = t
            tau = computed_torque(model, plant.q, plant.qd, *motion(model, t), KP, KD,
                                  friction=True)
            plant.step(tau)
    return warned, said, learnt


def test_a_stall_while_the_levels_are_learnt_starts_the_learning_again():
    stall = (1.0, 1.3)                         # past the 138 ms the observer rides through
    warned, said, learnt = run(4.0, lambda t: stall[0] <= t < stall[1])
    assert any('the calibration starts again: the observer restarted (a gap of 0.3' in w
               for w in warned), warned
    # learnt from the motion after the stall only: its settling, then the whole calibration
    assert learnt is not None and learnt >= stall[1] + CALIBRATION, learnt
    assert not any(level in (FREE, CONTACT, COLLISION) for t, level in said if t < learnt)
    assert not any(level in (CONTACT, COLLISION) for _, level in said)


def test_levels_learnt_through_gaps_that_hid_half_the_motion_are_refused_and_learnt_again():
    """60 ms of every 120 ms lost (each ridden through) for 2 s: refused, then learnt."""
    gappy = 2.0
    warned, said, learnt = run(5.0, lambda t: t < gappy and t % 0.12 >= 0.06)
    refused = [w for w in warned if w.startswith('contact thresholds not used')]
    assert len(refused) == 1 and 'gaps in the joint states hid' in refused[0] and \
        'learning them again' in refused[0], warned
    assert not any('observer reset' in w for w in warned), 'each gap ridden through'
    assert learnt is not None and learnt >= gappy, learnt
    assert not any(level in (FREE, CONTACT, COLLISION) for t, level in said if t < learnt)
