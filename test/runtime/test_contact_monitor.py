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
The contact monitor over a stream of joint states, without ROS: the replay's policy, per state.

The log of test/contact/test_replay.py (a moving arm pushed three times) streamed through
:class:`ContactMonitor` as a node streams its joint states: the levels it learns are the
replay's, it rises to contact where the replay's episodes start, latches a collision until
re-armed, rides through a gap and restarts past one, and refuses a gain the stream's rate
cannot carry.  The node over DDS is tested in test/nodes (test_nodes_contact, test_contact_gaps,
test_contact_refusals).
"""

from types import SimpleNamespace

from helpers import LOG_PUSHES, pushed_log, Said
from manipulator_dynamics.contact.detection import COLLISION, CONTACT, FREE, NOT_WATCHING
from manipulator_dynamics.contact.replay import replay
from manipulator_dynamics.recordings.log import States
from manipulator_dynamics.runtime.contact_monitor import ContactMonitor, deepest_link
import numpy as np
import pytest


class Levels(Said):
    """The monitor's log, and each level it says with the stamp of the state then."""

    def __init__(self):
        super().__init__()
        self.levels, self.stamp = [], None

    def say(self, level):
        self.levels.append((self.stamp, level))


def settings(**changes):
    """Return a commanding node's contact parameters at their defaults, but ``changes``."""
    values = {'external_torques': True, 'observer_gain': [50.0], 'observer_friction': True,
              'contact_link': '', 'contact_thresholds': 'auto', 'collision_thresholds': 'auto',
              'thresholds_speed_growth': [0.0], 'thresholds_torque_growth': [0.0],
              'thresholds_speed_from': [0.0], 'thresholds_torque_from': [0.0],
              'contact_calibration': 3.0, 'identified_parameters': ''}
    values.update(changes)
    return SimpleNamespace(**values)


def monitor_on(model, **changes):
    said, clock = Levels(), [0]
    monitor = ContactMonitor(settings(**changes), lambda: clock[0], said, said, said.say)
    assert monitor.set_model(model, 'the test')
    return monitor, said


def stream(monitor, said, t, q, qd, tau, rearm_at=()):
    """Observe the states one by one (stamps from 1000 s), re-arming after ``rearm_at`` (s)."""
    rearm = sorted(rearm_at)
    for k in range(len(t)):
        stamp = round((1000.0 + t[k]) * 1e9)
        said.stamp = t[k]
        monitor.observe(q[k], qd[k], tau[k], stamp)
        while rearm and t[k] >= rearm[0]:
            rearm.pop(0)
            monitor.rearm()


@pytest.fixture(scope='module')
def pushed(arm):
    """Stream the pushed log through a monitor, re-armed after each push; replay it too."""
    log = pushed_log(arm)
    monitor, said = monitor_on(arm)
    ends = [start + length for start, length, *_ in LOG_PUSHES]
    stream(monitor, said, *log, rearm_at=[end + 0.3 for end in ends])
    return monitor, said, replay(arm, States.of(arm, *log))


def test_the_monitor_learns_the_replays_levels(arm, pushed):
    monitor, said, found = pushed
    assert monitor.calibration is None and monitor.how == found.how
    np.testing.assert_allclose(monitor.detector.levels.contact, found.levels.contact, rtol=1e-9)
    np.testing.assert_allclose(monitor.detector.levels.collision, found.levels.collision,
                               rtol=1e-9)
    assert any(text.startswith('contact thresholds learnt from 3 s of free motion')
               for text in said.text('info')), said.lines


def test_it_rises_where_the_replays_episodes_start_and_latches_a_collision(arm, pushed):
    monitor, said, found = pushed
    rises = [t for (t, level), (_, before) in zip(said.levels[1:], said.levels)
             if level in (CONTACT, COLLISION) and before in (FREE, NOT_WATCHING)]
    assert len(rises) == len(found.episodes) == len(LOG_PUSHES), (said.levels, found.table(arm))
    for rise, episode in zip(rises, found.episodes):
        assert rise == pytest.approx(episode.start, abs=2e-3)
    collisions = [t for t, level in said.levels if level == COLLISION]
    assert collisions and len(said.text('contact')) >= 1
    assert any('latched until ~/rearm' in text for text in said.text('error'))
    assert said.levels[-1][1] == FREE and monitor.detector.level == FREE


def test_a_gap_past_what_it_rides_restarts_the_observer_and_keeps_the_levels(arm):
    t, q, qd, tau = pushed_log(arm, seconds=6.0, pushes=(), gap=(4.0, 4.5))
    monitor, said = monitor_on(arm)
    stream(monitor, said, t, q, qd, tau)
    restarts = said.text('warning')
    assert any('observer reset (a gap of 0.5' in text and 'its contact levels kept' in text
               for text in restarts), said.lines
    after = [level for stamp, level in said.levels if stamp > 4.0]
    assert after[:2] == [NOT_WATCHING, FREE]        # not watching until settled, then free
    assert monitor.detector is not None and monitor.calibration is None


def test_a_gain_the_state_rate_cannot_carry_turns_the_observer_off_saying_why(arm):
    t, q, qd, tau = pushed_log(arm, seconds=0.1, pushes=())
    monitor, said = monitor_on(arm, observer_gain=[800.0])
    stream(monitor, said, t, q, qd, tau)
    assert monitor.observer is None and monitor.model is None
    assert any('observer_gain 800/s is too high for joint states at 1000 Hz' in text
               for text in said.text('error')), said.lines


def test_levels_given_are_used_as_given_and_saved_and_relearning_them_is_refused(arm, tmp_path):
    monitor, said = monitor_on(arm, contact_thresholds='2.0', collision_thresholds='5.0')
    assert monitor.how.startswith('as given') and np.all(monitor.detector.levels.contact == 2.0)
    done, message = monitor.relearn()
    assert not done and 'both thresholds are given in N m' in message
    path = tmp_path / 'levels.yaml'
    assert monitor.save(str(path))[0] and path.exists()
    assert monitor.save('') == (False, 'contact_thresholds_out is empty: set the file to write '
                                       '(ros2 param set)')
    assert monitor.rearm() == 'nothing latched'
    assert monitor.link == deepest_link(arm)


def test_the_monitor_is_off_without_external_torques(arm):
    monitor = ContactMonitor(settings(external_torques=False), lambda: 0, Said(), Said(),
                             lambda level: None)
    assert not monitor.set_model(arm)
    assert monitor.observe(np.zeros(arm.n), np.zeros(arm.n), np.zeros(arm.n), 1) is None
    assert monitor.summary() == (0, 'off')
