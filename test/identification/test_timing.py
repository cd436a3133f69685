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
Re-timing a log on the robot's clock from its measured velocities (identification/timing.py).

A simulated logger, as the real Panda's: the robot samples on a 500 Hz clock; the logger stamps
each sample when it receives it, up to 3 periods late, misses 3 % of them and writes 3 % twice.
"""

import re

from helpers import DEMO_ARM_DYNAMICS, write_bag, write_log_csv
import manipulator_dynamics as md
from manipulator_dynamics import cli, robots
from manipulator_dynamics.identification.logs import stamps_summary
from manipulator_dynamics.recordings.timing import retime
import numpy as np
import pytest

PERIOD = 1 / 500.0


def motion(n, seconds=20.0, seed=0, harmonics=5, fundamental=0.1):
    """Sample a finite Fourier series per joint on the robot's clock: t, q, qd, qdd."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, PERIOD)
    w = 2 * np.pi * fundamental * np.arange(1, harmonics + 1)[:, None]
    a, b = rng.uniform(-1, 1, (2, harmonics, n)) * 0.25
    s, c = np.sin(w * t[:, None, None]), np.cos(w * t[:, None, None])
    return (t, (a / w * s - b / w * c).sum(axis=1), (a * c + b * s).sum(axis=1),
            (w * (b * c - a * s)).sum(axis=1))


def logger(model, seed, latency=3.0):
    """
    Return ``(robot_t, log)``: what the robot sampled when, and what a logger wrote.

    Efforts from the model with 1 % + 0.02 N m noise; positions with 1e-5 rad of noise written
    to 6 decimals, velocities with 1e-3 rad/s of noise; stamps up to ``latency`` periods late,
    never decreasing; 3 % of the samples missed, 3 % written twice.
    """
    t, q, qd, qdd = motion(model.n, seed=seed)
    rng = np.random.default_rng(seed + 100)
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
    tau = tau + rng.normal(size=tau.shape) * (0.01 * np.abs(tau).max(axis=0) + 0.02)
    q = np.round(q + rng.normal(size=q.shape) * 1e-5, 6)
    qd = qd + rng.normal(size=qd.shape) * 1e-3
    written = np.flatnonzero(rng.uniform(size=len(t)) > 0.03)
    rows = np.sort(np.r_[written, written[rng.uniform(size=len(written)) < 0.03]],
                   kind='stable')
    stamps = np.maximum.accumulate(t[rows] + rng.uniform(0, latency, len(rows)) * PERIOD)
    return t[rows], {'t': stamps, 'q': q[rows], 'qd': qd[rows], 'tau': tau[rows]}


def test_a_loggers_stamps_are_put_back_on_the_robots_clock(configured_arm):
    """
    Every interval gets the robot's count of periods: 1, 0 for a repeat, 2 or more after a miss.

    The period is found to 1e-5 (the velocities' noise over 20 s), so every sample's time is
    the robot's to a tenth of a period; the logger's lag is reported (up to 3 periods, 6 ms);
    every interval is re-timed (the arm always moves).
    """
    robot_t, log = logger(configured_arm, 1)
    t, report = retime(log['t'], log['q'], log['qd'])
    assert report['retimed'] and report['retimed_intervals'] == len(t) - 1
    period = report['period_s']
    assert period == pytest.approx(PERIOD, rel=1e-5)
    np.testing.assert_array_equal(np.round(np.diff(t) / period), np.round(np.diff(robot_t)
                                                                          / PERIOD))
    np.testing.assert_allclose(t - t[0], robot_t - robot_t[0], rtol=0, atol=0.1 * PERIOD)
    assert np.all(np.diff(t)[np.diff(robot_t) == 0] == 0)            # a repeat: the same time
    lag = report['offset_ms']
    assert -6.0 <= lag[0] <= lag[1] <= 6.0 and lag[1] - lag[0] > 4.0


def test_one_joint_is_enough():
    """With one joint there is no scatter across joints: the measurements' resolution decides."""
    t, q, qd, _ = motion(1, seconds=5.0, seed=2)
    rng = np.random.default_rng(3)
    stamps = np.maximum.accumulate(t + rng.uniform(0, 2, len(t)) * PERIOD)
    retimed, report = retime(stamps, np.round(q, 6), qd + rng.normal(size=qd.shape) * 1e-4)
    assert report['retimed'] and report['confident'] > 0.9
    assert report['period_s'] == pytest.approx(PERIOD, rel=1e-3)
    moving = np.abs(qd[:-1, 0]) > 0.05
    assert np.all(np.round(np.diff(retimed)[moving] / report['period_s']) == 1)


def test_no_clock_no_retiming(configured_arm):
    """
    Where the velocities cannot time the log, its stamps stay as logged and the report says why.

    Velocities in degrees per second against positions in radians; a robot at rest (its
    velocities only noise); a robot that samples when it likes (no clock to round to).
    """
    _, log = logger(configured_arm, 4)
    t, q, qd = log['t'], log['q'], log['qd']
    cases = {'other units': (t, q, np.degrees(qd)),
             'at rest': (t, np.full_like(q, 0.3), np.random.default_rng(5).normal(
                 size=qd.shape) * 1e-3)}
    t0, q0, qd0, _ = motion(configured_arm.n, seed=7)
    free = np.cumsum(np.random.default_rng(6).uniform(0.3, 1.7, len(t0) // 2)) * PERIOD
    cases['no clock'] = (free, *(np.column_stack([np.interp(free, t0, x) for x in y.T])
                                 for y in (q0, qd0)))
    reasons = {'other units': 'velocities in other units', 'at rest': 'mostly at rest',
               'no clock': 'no robot clock'}
    for case, (ti, qi, qdi) in cases.items():
        out, report = retime(ti, qi, qdi)
        assert not report['retimed'] and reasons[case] in report['reason'], (case, report)
        assert out is ti or np.array_equal(out, ti)


def test_a_retimed_log_identifies_where_the_stamps_as_logged_do_not(configured_arm, base):
    """
    At a 20 Hz cutoff the logger's 6 ms of jitter, differentiated twice, is the largest error.

    On the stamps as logged the estimate is biased (measured: the worst base parameter 51 of
    its standard deviations off, residuals 4-13 times larger); re-timed, every base parameter
    lands within 4.5 of its standard deviations and their RMS is about one (measured 0.97):
    the reported deviations are honest.
    """
    _, log = logger(configured_arm, 8)
    retimed = md.identify(configured_arm, log, base=base, cutoff=20.0)
    logged = md.identify(configured_arm, log, base=base, cutoff=20.0, retime=False)
    assert retimed.processing['timing']['retimed']
    assert not logged.processing['timing']['retimed']
    assert 'retime=False' in logged.processing['timing']['reason']
    z = (retimed.values - base.values) / retimed.std
    assert np.abs(z).max() < 4.5 and np.sqrt((z ** 2).mean()) < 1.5
    assert np.abs((logged.values - base.values) / logged.std).max() > 10
    np.testing.assert_array_less(2 * retimed.residual_rms, logged.residual_rms)


def test_velocity_columns_and_the_command_line(configured_arm, tmp_path, capsys):
    """
    A CSV with ``<joint>.velocity`` columns is re-timed; the report says so, and by how much.

    ``--stamps-as-logged`` keeps the logger's stamps, and says that too; a CSV without the
    columns is read as before.
    """
    _, log = logger(configured_arm, 9)
    path = tmp_path / 'log.csv'
    write_log_csv(path, configured_arm.joint_names, log['t'], log['q'], log['tau'], qd=log['qd'])
    command = ['identify', robots.path('demo_arm'), str(path),
               '--joint-dynamics', DEMO_ARM_DYNAMICS, '--armature', '--cutoff', '5']
    assert cli.main(command) == 0
    out = capsys.readouterr().out
    said = re.search(r"re-timed on the robot's clock: 9970 of 9970 intervals re-timed to whole "
                     r'periods of ([0-9.]+) ms', out)
    assert said and float(said.group(1)) == pytest.approx(1e3 * PERIOD, rel=1e-5), out
    assert "the logger's stamps lagged it by" in out
    assert 'standard deviations as fitted: a jackknife in 10 blocks of time spreads' in out
    assert cli.main(command + ['--stamps-as-logged']) == 0
    assert 'stamps as logged: retime=False' in capsys.readouterr().out
    write_log_csv(path, configured_arm.joint_names, log['t'], log['q'], log['tau'])
    assert 'timing' not in md.identify(configured_arm, path, cutoff=5.0).processing


def test_a_rosbags_velocities_retime_it(configured_arm, tmp_path):
    """A recording's JointState velocities, matched by name like the positions, re-time it."""
    _, log = logger(configured_arm, 10)
    keep = slice(0, 4000)
    write_bag(tmp_path / 'bag', configured_arm, log['t'][keep], log['q'][keep], log['tau'][keep],
              qd=log['qd'][keep])
    estimate = md.identify(configured_arm, tmp_path / 'bag', cutoff=5.0)
    assert estimate.processing['timing']['retimed']
    assert 're-timed on the robot' in stamps_summary(estimate.processing)


def test_several_logs_each_report_their_timing(configured_arm):
    """Each log of several is re-timed on its own, or not, and the report says which."""
    _, log = logger(configured_arm, 11)
    plain = {k: log[k] for k in ('t', 'q', 'tau')}
    estimate = md.identify(configured_arm, [log, plain], cutoff=5.0)
    first, second = estimate.processing['timing']
    assert first['retimed'] and second is None
    assert stamps_summary(estimate.processing).count('re-timed on the robot') == 1


@pytest.mark.parametrize('mutate, pattern', [
    (lambda d: d.pop('tau'), "needs the keys t, q, tau .*: no 'tau'"),
    (lambda d: d.update(qd=d['qd'][:-1]), 'qd has 9999 samples, t 10000'),
    (lambda d: d.update(qd=d['qd'][:, :2]), r'qd must have shape \(N, 7\)'),
])
def test_bad_velocities_are_named(configured_arm, mutate, pattern):
    t, q, qd, qdd = motion(configured_arm.n, seed=12)
    log = {'t': t, 'q': q, 'qd': qd, 'tau': md.inverse_dynamics(configured_arm, q, qd, qdd)}
    mutate(log)
    with pytest.raises(md.IdentificationError, match=pattern):
        md.identify(configured_arm, log)
