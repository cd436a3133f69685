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
Re-timing a log on the robot's clock from its measured velocities.

A logger stamps each sample when it receives it, not when the robot sampled it: a real Panda's
logger stamped samples of a 1 kHz controller 0.7-8.8 ms apart, wrote some twice and missed
others.  Filtering and differentiating against those stamps turns the jitter into noise on the
velocities and accelerations (``v * dt``: 1.5 mrad at 0.5 rad/s and 3 ms), which a low cutoff
hides and a higher one does not.

The robot's own velocity signal says how long each interval really was: between samples ``i``
and ``i + 1`` the positions moved ``dq = q[i+1] - q[i]`` at about ``v = (qd[i] + qd[i+1]) / 2``,
so ``dt = v . dq / v . v`` (least squares over the joints).  Where the robot samples on a
clock, these intervals are whole numbers of its period ``T``: ``dt / T`` rounded is the number of
robot ticks, 0 for a sample the logger wrote twice, 2 or more where it missed some.

An interval is re-timed only where that count is unambiguous: the uncertainty of ``dt``, from the
positions' resolution, the velocity signal's noise and the joints' disagreement, is under
``T / 8`` and ``dt / T`` is within a quarter of a whole number.  Elsewhere (a robot at rest,
where the velocities are noise; a gap) the logged interval is kept.  The log is re-timed only if
the data show a clock: at least :data:`ON_CLOCK` of the confident intervals whole numbers of
``T``; otherwise its stamps stay as logged and the report says why.  The period used is the
slope of the logged stamps against the robot's tick counts: the logger's latencies scatter it
but do not bias it, as a velocity signal that lags the positions biases the intervals.
"""

import numpy as np

#: Share of the confident intervals that must be whole numbers of the robot's period for the
#: log to be re-timed (a velocity signal in other units, or a robot without a fixed-rate clock,
#: leaves most of them anywhere between).
ON_CLOCK = 0.9
#: Share of the intervals that must be confident at all (a log mostly at rest says nothing).
CONFIDENT = 0.5
#: Largest relative difference between the robot's clock and the logger's over the re-timed
#: intervals (clocks differ by parts per million; a velocity in degrees against radians is 57x).
RATE = 0.05
#: Longest logged interval, in median logged intervals, that is re-timed (a Panda's logger missed
#: up to 8 samples of 1 ms; longer is a gap, left as logged).
LONGEST = 20


def retime(t, q, qd):
    """
    Put a log's samples on the robot's clock, using its measured velocities.

    Parameters
    ----------
    t : array-like, shape (N,)
        The logged stamps in seconds, non-decreasing.
    q, qd : array-like, shape (N, n)
        Positions and the robot's measured velocities.

    Returns
    -------
    (t_robot, report)
        ``t_robot (N,)``: the stamps on the robot's clock, starting at ``t[0]`` (the logged
        ``t`` itself when the data do not allow re-timing); ``report``: ``retimed`` (bool),
        ``reason``, ``period_s`` (the robot's period), ``confident`` and ``on_clock`` (the
        shares above), ``retimed_intervals``, and ``offset_ms``, the range of
        ``t - t_robot`` (the logger's latency and jitter, made visible).

    """
    t = np.asarray(t, dtype=float)
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    logged = np.diff(t)
    positive = logged[logged > 0]
    report = {'retimed': False, 'period_s': float(np.median(positive)) if len(positive) else 0.0,
              'confident': 0.0, 'on_clock': 0.0, 'retimed_intervals': 0, 'offset_ms': [0.0, 0.0]}
    if len(positive) < 2:
        return t, dict(report, reason='fewer than 3 samples at different times')
    dq = np.diff(q, axis=0)
    v = 0.5 * (qd[1:] + qd[:-1])
    vv = (v * v).sum(axis=1)
    moving = vv > 0
    with np.errstate(divide='ignore', invalid='ignore'):
        dt = np.where(moving, (v * dq).sum(axis=1) / vv, 0.0)
        spread = np.where(moving, _uncertainty(qd, dq, v, vv, dt, logged), np.inf)
    period = report['period_s']
    near = logged <= LONGEST * period
    for _ in range(3):          # the period from the intervals it makes whole: settles at once
        ticks = np.round(dt / period)
        confident = moving & near & (spread < period / 8)
        on = confident & (np.abs(dt / period - ticks) < 0.25)
        counted = on & (ticks > 0)
        if not counted.any():
            break
        period = float(dt[counted].sum() / ticks[counted].sum())
    report.update(period_s=period, confident=float(confident.mean()),
                  on_clock=float(on.sum() / max(confident.sum(), 1)))
    if report['confident'] < CONFIDENT:
        return t, dict(report, reason=f"only {100 * report['confident']:.0f} % of the intervals "
                       'have a velocity that times them (the robot mostly at rest, or velocities '
                       'that disagree with the positions)')
    if report['on_clock'] < ON_CLOCK:
        return t, dict(report, reason=f"only {100 * report['on_clock']:.0f} % of the intervals "
                       'the velocities time are whole numbers of one period: no robot clock '
                       'to put the samples on')
    rate = (ticks[on] * period).sum() / logged[on].sum()
    if abs(rate - 1) > RATE:
        return t, dict(report, reason=f'the velocities time the intervals {rate:.3g} times as '
                       'long as the logger did: velocities in other units than the positions?')
    # the period on the logger's clock: the stamps against the robot's tick counts, a straight
    # line whose slope the latencies only scatter, where the velocities' own small bias (a
    # velocity signal that lags the positions times an accelerating stretch long) would not:
    # 0.24 % on a third of a real log, 16 ms over its 7 s
    count = np.concatenate([[0.0], np.cumsum(np.where(on, ticks, logged / period))])
    period = float(np.polyfit(count, t, 1)[0])
    report['period_s'] = period
    robot = t[0] + np.concatenate([[0.0], np.cumsum(np.where(on, ticks * period, logged))])
    offset = 1e3 * (t - robot)
    return robot, dict(report, retimed=True, retimed_intervals=int(on.sum()),
                       offset_ms=[float(offset.min() - offset[0]),
                                  float(offset.max() - offset[0])],
                       reason=f'{int(on.sum())} of {len(logged)} intervals re-timed to whole '
                       f'periods of {1e3 * period:.6g} ms by the measured velocities')


def _uncertainty(qd, dq, v, vv, dt, logged):
    """
    Return the standard uncertainty of every interval ``dt = v . dq / v . v`` in seconds.

    The larger of what the measurements allow and what the joints' disagreement shows:
    each ``dq`` carries its joint's position resolution (the smallest step it ever makes;
    rounding at both ends, variance ``res^2 / 6``), each ``v`` its velocity signal's noise
    (from second differences of ``qd``) over the logged interval, propagated through the least
    squares; and the scatter of ``dq - v dt`` across the joints (none with one joint).  A robot
    at rest, its velocities only noise, gets an uncertainty of about the interval itself.
    """
    steps = np.abs(dq)
    res = np.array([s[s > 0].min() if (s > 0).any() else 0.0 for s in steps.T])
    noise = np.median(np.abs(np.diff(qd, 2, axis=0)), axis=0) / (0.6745 * np.sqrt(6))
    measured = (v * v * (res ** 2 / 6 + (logged[:, None] * noise) ** 2)).sum(axis=1) / vv ** 2
    n = dq.shape[1]
    scatter = (((dq - v * dt[:, None]) ** 2).sum(axis=1) / vv / (n - 1)) if n > 1 else 0.0
    return np.sqrt(np.maximum(measured, scatter))
