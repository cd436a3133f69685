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
Rest and velocity reversals: the equations whose dry friction no law of the velocity gives.

A joint that turns has dry friction ``Fc s(qd)``.  A joint at rest, or turning back, sticks: its
friction holds any value up to ``Fc`` (as MuJoCo's dry friction, a constraint, does), and the
sign of a velocity that is the encoder's noise says ``+Fc`` and ``-Fc`` by turns.  A robot that
rests for a second of a log gives a second of equations that are wrong by up to ``Fc``, on every
joint that motor turns (a coupled wrist's motor: on two).  ``identify(..., still=...)`` leaves
out the equation of joint j at a state where j, or a motor that turns it, is slower than its
*still speed*; validation scores the same way, with the fit's speeds, and says what it left out.
The parallel filter spreads a stuck state over the rows within its reach: those are left out
too (:func:`stuck_rows`).

The speeds are given (one for all, rad/s or m/s) or ``'auto'``: chosen from the data, per joint
and per coupled motor, as ``STILL_SIGMAS`` times the speed of what the low-pass filter took off
its position (noise, quantisation, vibration: their RMS ``e``) at the cutoff frequency,
``v = STILL_SIGMAS * 2 pi f_c e``.  Below it the filtered velocity cannot be told from that
wiggle; the speed moves with the cutoff and the encoder, nothing is fitted to a robot.
"""

import math

import numpy as np

from ..errors import IdentificationError

#: How many wiggle amplitudes (module docstring) above zero a velocity must be to count.
STILL_SIGMAS = 3.0
#: How far a stuck state spoils the parallel filter's rows, in periods of its cutoff, each way
#: (:func:`stuck_rows`): the zero-phase order-4 Butterworth filter's impulse response is below
#: 4 % of its peak beyond one period, with 5 % of its weight (half a period: 13 %, 18 %).
STILL_REACH = 1.0


def motor_rows(model):
    """
    ``(rows (m, n), names)``: the velocities whose dry friction the model holds.

    Each joint's own (its row of the identity), then each coupled motor's at its joint's scale
    (:meth:`~manipulator_dynamics.Model.coupled_motors`).
    """
    motors = model.coupled_motors()
    rows = np.vstack([np.eye(model.n), motors.rows])
    names = [*model.joint_names, *(f'motor of {model.joint_names[j]}' for j in motors.joints)]
    return rows, names


def still_speeds(model, still, parallel=None, cutoff=None):
    """
    Resolve ``still`` (0 or None: off; a speed; ``'auto'``) to ``(speeds (m,), report)``.

    ``parallel`` and ``cutoff``: the time series' filter (:func:`.logs.differentiate_logs`),
    which ``'auto'`` needs.  ``report`` (None when off) says the speeds and how they were found.
    """
    rows, names = motor_rows(model)
    if still is None or (not isinstance(still, str) and still == 0):
        return np.zeros(len(rows)), None
    if isinstance(still, str):
        if still != 'auto':
            raise IdentificationError(f"still must be a speed (rad/s or m/s), 'auto' or None, "
                                      f'got {still!r}')
        if parallel is None:
            raise IdentificationError("still='auto' reads the speeds from a time series' "
                                      'filter: give (t, q, tau) or a log, or a speed')
        wiggle = np.sqrt(((parallel.wiggle @ rows.T) ** 2).mean(axis=0) + np.einsum(
            'mi,ij,mj->m', rows, parallel.wiggle_moment, rows))
        speeds = STILL_SIGMAS * 2.0 * math.pi * cutoff * wiggle
        how = (f'auto: {STILL_SIGMAS:g} x 2 pi x cutoff {cutoff:g} Hz x the RMS of what the '
               'filter took off each position')
    else:
        if isinstance(still, bool) or not isinstance(still, (int, float)) or not (
                math.isfinite(still) and still > 0):
            raise IdentificationError(f'still must be a positive speed (rad/s or m/s), got '
                                      f'{still!r}')
        speeds = np.full(len(rows), float(still))
        how = 'given'
    return speeds, {'speeds': dict(zip(names, map(float, speeds))), 'how': how}


def stuck(model, qd, speeds, series=False):
    """
    ``(N, n)`` bool: True where a joint, or a motor turning it, is slower than its speed.

    ``qd (N, n)`` joint velocities; ``speeds`` as :func:`still_speeds` gives them (all zero:
    nothing stuck).  ``series``: the rows are consecutive states in time, and a reversal
    between two of them passes zero speed: both are stuck, however fast they are (the states
    of a log cut down are ten to a hundred times further apart than its samples).
    """
    qd = np.atleast_2d(np.asarray(qd, dtype=float))
    speeds = np.asarray(speeds, dtype=float)
    if not speeds.any():
        return np.zeros(qd.shape, dtype=bool)
    rows, _ = motor_rows(model)
    rate = qd @ rows.T
    slow = np.abs(rate) < speeds                            # (N, m)
    if series:
        turning = (np.sign(rate[1:]) * np.sign(rate[:-1]) < 0) & (speeds > 0)
        slow[1:] |= turning
        slow[:-1] |= turning
    return (slow.astype(np.int64) @ (rows != 0).astype(np.int64)) > 0


def stuck_rows(model, qd, speeds, parallel=None, cutoff=None):
    """
    ``stuck`` for the rows fitted: ``(rows, n)`` bool, from every state's velocities ``qd``.

    Without ``parallel`` (arrays, fitted as given) it is :func:`stuck` of ``qd``.  Through the
    parallel filter (:func:`.logs.differentiate_logs`) a row's equation is a weighted sum of the
    states around it: one stuck state spoils every row within the filter's reach, though those
    rows' own velocities are fast (a reversal lasts milliseconds, the rows are tens of
    milliseconds apart).  So the stuck states, from ``qd`` at every state, are widened by
    :data:`STILL_REACH` periods of the ``cutoff`` on each side, then the rows ``parallel``
    keeps taken.
    """
    out = stuck(model, qd, speeds, series=parallel is not None)
    if parallel is None or not out.any():
        return out if parallel is None else parallel.kept(out)
    reach = int(math.ceil(STILL_REACH * parallel.rate_hz / cutoff))
    counts = np.cumsum(np.vstack([np.zeros((1, out.shape[1]), dtype=np.int64),
                                  out.astype(np.int64)]), axis=0)
    index = np.arange(len(out))
    upper = np.minimum(index + reach + 1, len(out))
    lower = np.maximum(index - reach, 0)
    return parallel.kept((counts[upper] - counts[lower]) > 0)


def left_out_summary(report, joint_names, stuck_rows):
    """Add each joint's share of rows left out (percent) to ``report``; return it."""
    if report is None:
        return None
    share = 100.0 * stuck_rows.mean(axis=0)
    return dict(report, left_out_percent=dict(zip(joint_names, map(float, share))))


def still_summary(processing):
    """One line: the still speeds and the share of each joint's rows left out, or ''."""
    report = processing.get('still')
    if not report:
        return ''
    speeds = ', '.join(f'{name} {v:.3g}' for name, v in report['speeds'].items())
    out = ', '.join(f'{j} {p:.3g} %' for j, p in report.get('left_out_percent', {}).items())
    return (f'still speeds ({report["how"]}): {speeds}; equations left out (a joint or its motor '
            f'slower, its dry friction anything up to Fc): {out}')
