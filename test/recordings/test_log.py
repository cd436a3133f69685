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

"""A log read whatever it is given as, and put on the robot's clock in one place."""

from manipulator_dynamics.errors import RecordingError
from manipulator_dynamics.recordings import timing
from manipulator_dynamics.recordings.log import on_robot_clock, read_data, read_recording, \
    read_series, read_series_list, read_states, read_time_series
import numpy as np
import pytest


def jittered(arm, samples=400, period=0.002, seed=0):
    """Make a mapping of a smooth motion, its stamps the logger's (late by up to a period)."""
    rng = np.random.default_rng(seed)
    true = np.arange(samples) * period
    w = 2 * np.pi * 0.5 * np.linspace(0.5, 1.5, arm.n)
    q, qd = np.sin(np.outer(true, w)), np.cos(np.outer(true, w)) * w
    t = true + rng.uniform(0.0, 0.6 * period, samples)
    return {'t': t, 'q': q, 'qd': qd, 'tau': np.cos(np.outer(true, w))}


def test_the_re_timing_is_decided_once_for_identification_and_the_observer_alike(arm):
    log = jittered(arm)
    robot, report = timing.retime(log['t'], log['q'], log['qd'])
    assert report['retimed']
    t, said = on_robot_clock(log['t'], log['q'], log['qd'])
    np.testing.assert_array_equal(t, robot)
    assert said == report
    (t, q, tau), processing = read_series(arm, log)
    np.testing.assert_array_equal(t, robot)
    assert processing['timing'] == report
    states, = read_states(arm, log)
    t, qd = states.t, states.qd
    np.testing.assert_array_equal(t, robot)
    assert states.timing == report and states.source is None
    np.testing.assert_array_equal(qd, log['qd'])
    # as logged, where asked: the stamps kept, and said so
    t, said = on_robot_clock(log['t'], log['q'], log['qd'], retime=False)
    assert t is log['t'] and not said['retimed'] and 'as logged' in said['reason']
    (t, _, _), processing = read_series(arm, log, retime=False)
    assert t is log['t'] and processing['timing'] == said
    states, = read_states(arm, log, retime=False)
    np.testing.assert_array_equal(states.t, log['t'])
    assert states.timing == said


def test_what_identification_is_given_is_read_as_one_log_several_or_arrays(arm):
    log = jittered(arm)
    plain = {k: log[k] for k in ('t', 'q', 'tau')}           # no velocities: as logged
    (t, q, tau), processing = read_data(arm, plain)
    np.testing.assert_array_equal(t, log['t'])
    assert 'timing' not in processing
    several, processing = read_data(arm, [log, plain])
    assert len(several) == 2 and all(len(one) == 3 for one in several)
    assert processing['source'] == ['arrays', 'arrays']
    assert processing['timing'][0]['retimed'] and processing['timing'][1] is None
    arrays = (log['q'], log['qd'], log['qd'], log['tau'])
    assert read_data(arm, arrays)[0] == arrays
    given = {'q': log['q'], 'qd': log['qd'], 'qdd': log['qd'], 'tau': log['tau']}
    assert all(a is b for a, b in zip(read_data(arm, given)[0], arrays))
    assert read_time_series(arm, [log, plain], None, 'this')[1][0] is log['t']


@pytest.mark.parametrize('data, words', [
    (lambda log: {'t': log['t'], 'q': log['q']}, "needs the keys t, q, tau .*: no 'tau'"),
    (lambda log: [log, (log['q'], log['qd'], log['qd'], log['tau'])],
     'several logs must each be a time series'),
])
def test_what_cannot_be_read_is_a_recording_error_that_says_why(arm, data, words):
    with pytest.raises(RecordingError, match=words):
        read_data(arm, data(jittered(arm)))


def test_arrays_are_refused_where_a_time_series_is_needed(arm):
    log = jittered(arm)
    with pytest.raises(RecordingError, match="cutoff='auto' needs time series"):
        read_time_series(arm, (log['q'], log['qd'], log['qd'], log['tau']), None,
                         "cutoff='auto'")


def test_a_recording_is_read_and_re_timed_once_and_given_back_as_it_was(arm, monkeypatch):
    """``read_recording``: every reader after gives the arrays read, not a new re-timing."""
    log = jittered(arm)
    retimed = []
    real = timing.retime
    monkeypatch.setattr(timing, 'retime', lambda *a: retimed.append(a) or real(*a))
    read = read_recording(arm, log)
    assert read_recording(arm, read) is read and len(retimed) == 1
    (t, q, tau), processing = read_data(arm, read)
    assert processing['timing']['retimed'] and q is log['q'] and tau is log['tau']
    again = read_series(arm, read)[0]
    assert all(x is y for x, y in zip(again, (t, q, tau)))
    assert all(x is y for x, y in zip(read_time_series(arm, read, '/joint_states', 'x')[0],
                                      (t, q, tau)))
    assert len(retimed) == 1
    processing['source'] = 'changed'                # each reader's own report
    assert 'source' not in read_data(arm, read)[1]
    several = read_recording(arm, [log, jittered(arm, seed=1)])
    assert len(read_series_list(arm, several)) == 2 and len(retimed) == 3
    with pytest.raises(RecordingError, match='one log asked for, a recording of 2 given'):
        read_series(arm, several)


def test_a_recording_read_otherwise_is_refused_by_what_differs(arm):
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    read = read_recording(arm, jittered(arm))
    with pytest.raises(RecordingError, match="retime=True from '/joint_states', asked for "
                                             "retime=False from '/joint_states'"):
        read_data(arm, read, retime=False)
    with pytest.raises(RecordingError, match="asked for retime=True from '/other'"):
        read_data(arm, read, topic='/other')
    shorter = md.load_model(robots.path('demo_arm'), tip_links=['link4'])
    with pytest.raises(RecordingError, match='joint1, joint2, joint3, joint4, joint5, joint6, '
                                             'joint7, not this model.s joint1, joint2, joint3, '
                                             'joint4: read it again for this model'):
        read_data(shorter, read)
