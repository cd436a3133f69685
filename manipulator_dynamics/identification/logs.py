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
Identification data as loggers write it: read, checked, re-timed, filtered and differentiated.

What :func:`.estimate.identify` fits comes from here: a CSV file (:mod:`..csvlog`'s convention),
a numpy archive or a rosbag2 recording of ``/joint_states`` (:func:`read_csv`, :func:`read_npz`,
:func:`read_rosbag`), a mapping or arrays (:func:`read_log`); the stamps checked, repeats
dropped and gaps found (:func:`check_stamps`), the log re-timed on the robot's clock by its
velocities (:mod:`.timing`); each stretch between gaps filtered and differentiated on its own,
with the parallel filter for both sides of ``tau = W K`` (:func:`differentiate_logs`, the estimate
module's docstring).  Every refusal is an :class:`IdentificationError` naming what is wrong.
"""

from dataclasses import dataclass
import math
import os

import numpy as np

from . import timing
from .errors import IdentificationError
from .filtering import ALIAS_SHARE, CUTOFF_HZ, derivative, FILTER_ORDER, lowpass, reduced, \
    reduction, settling
from .. import csvlog
from .._parallel import over_columns
from ..names import joint_map, JointNamesError


#: An interval between samples longer than this many sample periods, and than this fraction of
#: the cutoff's period, is a gap: the stretches on either side are filtered and differentiated
#: apart (a dropped recording, several runs).  Shorter ones are interpolated over: a real
#: Panda's logger skipped up to 8 samples of 1 ms, a tenth of a 2.5 Hz cutoff's period is 40.
GAP_STEPS, GAP_CUTOFF_PERIODS = 5, 0.1

#: Rows per chunk of the parallel filter's :func:`apply` (a 7-joint arm's regressor: 40 MB,
#: and the filter's copies of its base columns; the padding, 240 rows at 20 per cutoff
#: period, adds 6 %).
PARALLEL_CHUNK = 1 << 13

#: A filtered speed below this (rad/s or m/s) is zero: a joint held still, whose filtered
#: position varies by the filter's rounding alone (1e-12 rad at 5 kHz is 5e-9 rad/s once
#: differentiated), and whose Coulomb term ``Fc sign(qd)`` would flip with it.  A micro-radian
#: per second is below what any encoder resolves over a filter's window.
AT_REST = 1e-6


@dataclass(frozen=True, eq=False)
class Log:
    """
    A log file read once (:func:`read_once`): give it wherever its path goes.

    Choosing the cutoff, cross-validation and the final fit each read their data; a path is read
    by each of them (an hour at 1 kHz: 4 s a time), a Log by none.  ``columns``: what the file
    holds, ``t, q, tau`` and ``qd`` (the measured velocities, None unless every joint has them),
    for the joints ``joint_names``; ``source``: its path; ``topic``: a recording's topic, or
    None.  Stamps are checked and re-timed where it is used, as for a path.
    """

    source: str
    joint_names: tuple
    columns: dict
    topic: object = None

    def processing(self):
        """Return what a fit reports of its source: the path, and a recording's topic."""
        return {'source': self.source, **({} if self.topic is None else {'topic': self.topic})}

    def for_model(self, model):
        """Return the columns for ``model``, or refuse a log read for another joint set."""
        if tuple(model.joint_names) != self.joint_names:
            raise IdentificationError(
                f'{self.source} was read for the joints {", ".join(self.joint_names)}, not '
                f'this model\'s {", ".join(model.joint_names)}: read it again for this model')
        return self.columns


def read_file(model, path, topic='/joint_states'):
    """
    Read one log file: a :class:`Log` of a CSV file, a numpy archive or a rosbag2 recording.

    Refused, naming the path, where there is no such file or recording.
    """
    path = os.fspath(path)
    if os.path.isfile(path) and path.lower().endswith('.csv'):
        columns, topic = read_csv(model, path, velocity=True), None
    elif os.path.isfile(path) and path.lower().endswith('.npz'):
        columns, topic = read_npz(model, path, velocity=True), None
    elif os.path.exists(path):
        columns = read_rosbag(model, path, topic, velocity=True)
    else:
        raise IdentificationError(f'no such data file or recording: {path}')
    return Log(source=path, joint_names=tuple(model.joint_names), columns=columns, topic=topic)


def read_once(model, data, topic='/joint_states'):
    """
    Return ``data`` with every path in it read (:func:`read_file`): a :class:`Log` each.

    A list stays a list; mappings, arrays and Logs are returned as they are.  What the entry
    points (``identify``, ``cross_validate``, ``select_friction``) should be given where they
    are called on the same files more than once.
    """
    if isinstance(data, list):
        return [read_once(model, d, topic) for d in data]
    if isinstance(data, (str, os.PathLike)):
        return read_file(model, data, topic)
    return data


def read_logs(model, data, topic, retime=True):
    """Read every log of ``data`` once: a list of tuples, ``(t, q, tau)`` or arrays."""
    return [read_log(model, d, topic, retime)[0]
            for d in (data if isinstance(data, list) else [data])]


def read_states(model, data, topic='/joint_states', retime=True):
    """
    Every log of ``data`` as ``(t, q, qd, tau)``, with the robot's measured velocities.

    ``data``: a CSV file, a numpy archive or a rosbag2 recording, or a mapping with keys
    ``t, q, qd, tau``, or a list of them.  Put on the robot's clock where its velocities allow
    it and ``retime`` is true (:func:`.timing.retime`), as :func:`read_log` does.  What a
    momentum observer reads, which needs the velocities as measured.
    """
    out = []
    for i, d in enumerate(data if isinstance(data, list) else [data]):
        d = read_once(model, d, topic)
        if isinstance(d, Log):
            d = d.for_model(model)
        if not isinstance(d, dict) or d.get('qd') is None:
            raise IdentificationError(f"log {i + 1} has no measured velocities (every joint's "
                                      '<joint>.velocity, a JointState velocity, a qd array): '
                                      'a momentum observer reads them')
        t, q, tau = time_series(model, d['t'], d['q'], d['tau'])
        qd = sample_matrix(model, 'qd', d['qd'])
        if len(qd) != len(t):
            raise IdentificationError(f'log {i + 1}: qd has {len(qd)} samples, t {len(t)}')
        if retime:
            t, _ = timing.retime(t, q, qd)
        out.append((t, q, qd, tau))
    return out


def read_time_series(model, data, topic, what, retime=True):
    """Read every log of ``data`` once: a list of ``(t, q, tau)``; error if some are arrays."""
    logs = read_logs(model, data, topic, retime)
    if any(len(log) != 3 for log in logs):
        raise IdentificationError(f'{what} needs time series (t, q, tau), CSV files or rosbag2 '
                                  'recordings, not (q, qd, qdd, tau) arrays, which are not '
                                  'filtered')
    return logs


def prepare(model, data, *, cutoff=CUTOFF_HZ, topic='/joint_states', retime=True):
    """
    Read and condition identification data: ``(q, qd, qdd, tau, parallel, processing)``.

    ``data`` as :func:`identify` takes it.  ``parallel`` is None for ``(q, qd, qdd, tau)``
    arrays (used as they are), else the parallel filter to apply to both sides of a linear
    model of ``tau`` (see :func:`differentiate`).  ``retime``: see :func:`identify`.
    """
    if isinstance(data, list) and data and all(
            isinstance(d, (str, os.PathLike, dict, tuple, Log)) for d in data):
        logs = [read_log(model, d, topic, retime) for d in data]
        if any(len(log) != 3 for log, _ in logs):
            raise IdentificationError('several logs must each be a time series (t, q, tau), a '
                                      'CSV file, a numpy archive or a rosbag2 recording')
        processing = {'source': [p.get('source', 'arrays') for _, p in logs],
                      'timing': [p.get('timing') for _, p in logs]}
        data = [log for log, _ in logs]
    else:
        data, processing = read_log(model, data, topic, retime)
    parallel = None
    if isinstance(data, list) or len(data) == 3:
        logs = data if isinstance(data, list) else [data]
        q, qd, qdd, tau, parallel, more = differentiate_logs(model, logs, cutoff=cutoff)
        processing.update(more, retime=retime)
    elif len(data) == 4:
        names = ('q', 'qd', 'qdd', 'tau')
        q, qd, qdd, tau = (sample_matrix(model, name, x) for name, x in zip(names, data))
        processing.setdefault('source', 'arrays')
        if not q.shape == qd.shape == qdd.shape == tau.shape:
            raise IdentificationError(f'q, qd, qdd and tau must have the same shape, got '
                                      f'{q.shape}, {qd.shape}, {qdd.shape}, {tau.shape}')
    else:
        raise IdentificationError('data must be (q, qd, qdd, tau), (t, q, tau), a CSV file, a '
                                  'numpy archive or a rosbag2 recording')
    return q, qd, qdd, tau, parallel, processing


def read_log(model, data, topic, retime=True):
    """
    One log: ``(data as a tuple, processing)``, read from its file where it is one.

    A time series with the robot's measured velocities (a mapping's ``qd``, a CSV's
    ``<joint>.velocity`` columns, a JointState's ``velocity``) is re-timed on the robot's clock
    where they allow it and ``retime`` is true (:func:`.timing.retime`); ``processing['timing']``
    says what was done, or why not.
    """
    processing = {}
    data = read_once(model, data, topic)
    if isinstance(data, Log):
        data, processing = data.for_model(model), data.processing()
    if not isinstance(data, dict):
        return tuple(data), processing
    if 'qdd' in data:
        return tuple(data[k] for k in ('q', 'qd', 'qdd', 'tau')), processing
    try:
        t, q, tau = (data[k] for k in ('t', 'q', 'tau'))
    except KeyError as e:
        raise IdentificationError(f'a log as a mapping needs the keys t, q, tau (and qd, the '
                                  f'measured velocities, if there are any): no {e}') from None
    if data.get('qd') is not None:
        if not retime:
            processing['timing'] = {'retimed': False, 'reason': 'retime=False: the stamps as '
                                    'logged, the measured velocities unused'}
        else:
            t, q, tau = time_series(model, t, q, tau)
            qd = sample_matrix(model, 'qd', data['qd'])
            if len(qd) != len(t):
                raise IdentificationError(f'qd has {len(qd)} samples, t {len(t)}')
            t, processing['timing'] = timing.retime(t, q, qd)
    return (t, q, tau), processing


def sample_matrix(model, name, x):
    """Return ``x`` as an ``(N, n)`` array of finite numbers, or refuse it naming the sample."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise IdentificationError(f'{name} must be an array of numbers') from None
    if a.ndim != 2 or a.shape[1] != model.n:
        raise IdentificationError(f'{name} must have shape (N, {model.n}) for the joints '
                                  f'{", ".join(model.joint_names)}, got {a.shape}')
    bad = np.argwhere(~np.isfinite(a))
    if len(bad):
        s, j = bad[0]
        raise IdentificationError(f"{name}[{s}, {j}] (joint '{model.joint_names[j]}') is "
                                  f'{a[s, j]}: {len(bad)} non-finite values in {name}; remove '
                                  'those samples or fill the gaps before identifying')
    return a


def differentiate(model, t, q, tau, *, cutoff=CUTOFF_HZ, order=FILTER_ORDER):
    """Filter and differentiate one time series: :func:`differentiate_logs` of one log."""
    return differentiate_logs(model, [(t, q, tau)], cutoff=cutoff, order=order)


def differentiate_logs(model, logs, *, cutoff=CUTOFF_HZ, order=FILTER_ORDER):
    """
    Filter and differentiate time series, each stretch between gaps on its own grid.

    Returns ``(q, qd, qdd, tau, parallel, processing)``: filtered positions and their derivatives,
    the efforts as measured, and ``parallel(x)``, the parallel filter (the same low-pass filter
    along the first axis, then the ends trimmed) to apply to both sides of ``tau = W K``.  See the
    module docstring.  ``logs``: ``(t, q, tau)`` per log, ``t (N,)`` in seconds, non-decreasing;
    a log never runs into the next.

    The stretches are :func:`stretches`'s: nothing is drawn across a gap, and ``parallel``
    filters each alone.  Stretches too short to filter are left out and reported.  A log
    sampled faster than :data:`.filtering.RATE_PER_CUTOFF` times the cutoff is first cut down
    to that rate (:func:`.filtering.reduced`: anti-aliased, zero phase, by chunks): every row
    after it is the fit's cost, and the motion below the cutoff needs no more.  Then the
    efforts are the anti-aliased ones, ``parallel.raw`` holds each stretch at its full rate
    (``(t, tau)``), which :meth:`.fit.Estimate.validate` scores, and ``parallel.wiggle_moment``
    what the anti-alias filter took off the positions (its mean ``r r^T`` per sample).
    ``processing`` says what was found and done.
    """
    import scipy.signal

    pieces, stamps, step, resampled = stretches(model, logs, cutoff)
    fs = 1.0 / step
    if not 0 < cutoff < 0.5 * fs:
        raise IdentificationError(f'cutoff {cutoff:g} Hz must be between 0 and half the sample '
                                  f'rate ({0.5 * fs:g} Hz)')
    factor = reduction(fs, cutoff)
    fs, step = fs / factor, step * factor
    sos = lowpass(cutoff, fs, order)
    trim = int(math.ceil(round(3 * fs / cutoff, 6)))      # 239.99999 and 240.00001: 240
    shortest = 2 * trim + 3 * (2 * len(sos) + 1) + 1      # sosfiltfilt's padding, and one more
    decimate = max(1, int(fs / (2.5 * cutoff) + 1e-6))   # 19.99999: 20
    used, short, spans, raw = [], [], [], []
    moment, samples = np.zeros((model.n, model.n)), 0
    for ts, qs, taus in pieces:
        if len(ts) < shortest * factor:
            short.append([float(ts[0]), float(ts[-1])])
            continue
        spans.append([float(ts[0]), float(ts[-1])])
        if factor > 1:                  # cut down to what the cutoff needs, full rate kept
            raw.append((ts, taus))
            inner = (trim * factor, len(ts) - trim * factor)     # the rows ``rows`` keeps
            qs, taken = reduced(qs, 1.0 / (step / factor), factor, moment=inner)
            ts, taus = ts[::factor], reduced(taus, 1.0 / (step / factor), factor)
            moment, samples = moment + taken, samples + inner[1] - inner[0]
        qf = scipy.signal.sosfiltfilt(sos, qs, axis=0)
        qd = derivative(qf, step)
        qd[np.abs(qd) < AT_REST] = 0.0      # a joint held still: its sign(qd) is rounding
        used.append((qf, qd, derivative(qd, step), taus, ts, qs - qf))
    if not used:
        raise IdentificationError(f'{sum(len(p[0]) for p in pieces)} samples in {len(pieces)} '
                                  f'stretch(es), none long enough to filter at {cutoff:g} Hz and '
                                  f'{fs * factor:g} Hz: record more than {shortest * factor} '
                                  'samples without a gap')
    bounds = np.cumsum([0] + [len(u[0]) for u in used])

    def parallel(x):
        return np.concatenate([over_columns(lambda block: scipy.signal.sosfiltfilt(
            sos, block, axis=0)[trim:j - i - trim:decimate], x[i:j])
            for i, j in zip(bounds[:-1], bounds[1:])])

    pad = settling(sos)

    def apply(function, *arrays, chunk=PARALLEL_CHUNK):
        """
        Return ``parallel(function(*arrays))``, ``function`` called on chunks of rows.

        Each chunk of a stretch padded by the filter's :func:`.filtering.settling` rows on both
        sides, filtered, and only the rows ``parallel`` keeps stored: equal to filtering the
        whole (to 1e-12), without ever holding ``function``'s result for every row (a
        regressor of a long log).
        """
        out = []
        for i, j in zip(bounds[:-1], bounds[1:]):
            keep = np.arange(i + trim, j - trim, decimate)
            for a in range(i, j, chunk):
                b = min(j, a + chunk)
                here = keep[(keep >= a) & (keep < b)]
                if not len(here):
                    continue
                lo, hi = max(i, a - pad), min(j, b + pad)
                # the columns on threads: scipy's filter lets go of the GIL
                out.append(over_columns(lambda block: scipy.signal.sosfiltfilt(
                    sos, block, axis=0)[here - lo], function(*(x[lo:hi] for x in arrays))))
        return np.concatenate(out)

    def rows(x):
        """Return the rows ``parallel`` keeps, every one and unfiltered (for validation)."""
        return np.concatenate([x[i + trim:j - trim] for i, j in zip(bounds[:-1], bounds[1:])])

    def kept(x):
        """Return the rows ``parallel`` keeps, decimated as it does, unfiltered."""
        return np.concatenate([x[i:j][trim:j - i - trim:decimate]
                               for i, j in zip(bounds[:-1], bounds[1:])])
    parallel.rows, parallel.kept, parallel.rate_hz, parallel.apply = rows, kept, fs, apply
    parallel.t = np.concatenate([u[4] for u in used])          # the stamps of every row
    # what the filter took off the positions: noise, quantisation, motion above the cutoff;
    # where the log was cut down, the anti-alias filter's share as its mean r r^T per sample
    parallel.wiggle = rows(np.concatenate([u[5] for u in used]))
    parallel.wiggle_moment = moment / max(samples, 1)
    # the stretches at their full rate, where the log was cut down: what validation scores,
    # and the rows ``rows`` gives of each (logs may overlap in time: by index, not by stamp)
    parallel.raw = raw or None
    counts = np.maximum(np.diff(bounds) - 2 * trim, 0)
    parallel.row_ranges = list(zip(np.cumsum(counts) - counts, np.cumsum(counts)))

    processing = {
        'rate_hz': fs * factor, 'cutoff_hz': float(cutoff),
        'filter': f'Butterworth order {order}, zero phase (forward and backward), cutoff '
        f'{cutoff:g} Hz, on positions; the same in parallel on efforts and regressor, each '
        'stretch alone', 'resampled': resampled, 'stamps': stamps, 'stretches': spans,
        'too_short': short, 'trimmed_samples': 2 * trim * factor * len(used),
        'decimation': decimate * factor}
    if factor > 1:
        processing['reduced'] = {'factor': factor, 'rate_hz': fs, 'anti_alias_hz':
                                 ALIAS_SHARE * fs, 'how': 'anti-aliased, zero phase, by chunks; '
                                 'validation scored at the full rate'}
    joined = tuple(np.concatenate([u[k] for u in used]) for k in range(4))
    return joined + (parallel, processing)


def stretches(model, logs, cutoff=CUTOFF_HZ):
    """
    Cut time series at their gaps and put each stretch on a uniform grid.

    Returns ``(pieces, stamps, step, resampled)``: ``(t, q, tau)`` of every stretch, the
    stamps' report of every log (:func:`check_stamps`: samples that repeat the one before are
    dropped, an interval longer than ``gap_s`` ends a stretch), the sample period (the median
    of the logs'), and whether a stretch was interpolated (linearly, onto the period's grid,
    where its stamps jitter by more than 1 %).
    """
    cut, stamps = [], []
    for i, (ti, qi, taui) in enumerate(logs):
        ti, qi, taui = time_series(model, ti, qi, taui, f'log {i + 1}: ' if len(logs) > 1 else '')
        keep, report = check_stamps(ti, qi, taui, cutoff)
        stamps.append(report)
        if not keep.all():
            ti, qi, taui = ti[keep], qi[keep], taui[keep]
        cuts = np.flatnonzero(np.diff(ti) > report['gap_s']) + 1
        cut += list(zip(np.split(ti, cuts), np.split(qi, cuts), np.split(taui, cuts)))
    step = float(np.median([r['step_s'] for r in stamps]))
    pieces, resampled = [], False
    for ts, qs, taus in cut:
        if np.abs(np.diff(ts) - step).max(initial=0.0) > 0.01 * step:
            grid = np.arange(ts[0], ts[-1] + 0.5 * step, step)
            qs = np.column_stack([np.interp(grid, ts, qs[:, j]) for j in range(model.n)])
            taus = np.column_stack([np.interp(grid, ts, taus[:, j]) for j in range(model.n)])
            ts, resampled = grid, True
        pieces.append((ts, qs, taus))
    return pieces, stamps, step, resampled


def stamps_summary(processing):
    """Say in a line per log what :func:`check_stamps` found, and which stretches were used."""
    lines = []
    sources = processing.get('source')
    sources = sources if isinstance(sources, list) else [sources]
    timings = processing.get('timing')
    timings = timings if isinstance(timings, list) else [timings]
    for i, r in enumerate(processing.get('stamps', ())):
        name = sources[i] if i < len(sources) and sources[i] else f'log {i + 1}'
        gaps = ', '.join(f'{a:.3f}-{b:.3f} s' for a, b in r['gaps']) or 'none'
        lines.append(f"{name}: {r['samples']} samples at {1 / r['step_s']:.4g} Hz, jitter "
                     f"{r['jitter_ms']:.3g} ms RMS; {r['repeated']} repeats dropped, "
                     f"{r['skipped']} intervals with missed samples (interpolated), gaps: {gaps}")
        told = timings[i] if i < len(timings) else None
        if told and told['retimed']:
            lines.append(f"  re-timed on the robot's clock: {told['reason']}; the logger's "
                         f"stamps lagged it by {told['offset_ms'][0]:.3g} to "
                         f"{told['offset_ms'][1]:.3g} ms (from the first sample's)")
        elif told:
            lines.append(f"  stamps as logged: {told['reason']}")
    if 'stretches' in processing:
        lines.append(f"filtered in {len(processing['stretches'])} stretch(es): " + ', '.join(
            f'{a:.3f}-{b:.3f} s' for a, b in processing['stretches'])
            + ''.join(f'; {a:.3f}-{b:.3f} s too short, left out'
                      for a, b in processing['too_short']))
    return '\n'.join(lines)


def time_series(model, t, q, tau, where=''):
    """Check one log's ``t (N,)``, ``q``, ``tau (N, n)``; return them as arrays."""
    t = np.asarray(t, dtype=float).reshape(-1)
    try:
        q, tau = sample_matrix(model, 'q', q), sample_matrix(model, 'tau', tau)
    except IdentificationError as e:
        raise IdentificationError(where + str(e)) from None
    if not (len(t) == len(q) == len(tau)):
        raise IdentificationError(f'{where}t, q and tau must have the same number of samples, '
                                  f'got {len(t)}, {len(q)}, {len(tau)}')
    if not np.all(np.isfinite(t)):
        raise IdentificationError(f'{where}time stamps must be finite')
    dt = np.diff(t)
    if len(t) < 2 or np.any(dt < 0):
        at = int(np.argmax(dt < 0)) + 1 if len(t) >= 2 else 0
        raise IdentificationError(f'{where}time stamps must not decrease (sample {at}, '
                                  f'{t[at]:.6g} s, is before the one before it): sort the data, '
                                  'or pass each recording as its own log')
    return t, q, tau


def check_stamps(t, q, tau, cutoff=CUTOFF_HZ):
    """
    Check a log's stamps: return ``(keep, report)``, the samples to use and what was found.

    * A sample with the stamp of the one before, or with every position and effort equal to
      it (a logger that wrote the last message again), is a repeat: dropped.
    * ``step_s``: the median interval of what is kept, the sample period; ``jitter_ms``: the
      RMS of the intervals' deviation from it (missed samples and gaps left out).
    * ``gap_s``: the longest interval interpolated over, the larger of ``GAP_STEPS`` periods
      and ``GAP_CUTOFF_PERIODS`` of the cutoff's period (motion kept below the cutoff barely
      bends within it: a straight line across it is the motion).
    * ``skipped``: intervals of 1.5 periods to ``gap_s`` (samples the logger missed;
      interpolated over); ``gaps``: longer intervals ``(from, to)`` in seconds, where a stretch
      ends.
    """
    unchanged = np.all(q[1:] == q[:-1], axis=1) & np.all(tau[1:] == tau[:-1], axis=1)
    same = np.r_[False, (np.diff(t) == 0) | unchanged]
    keep = ~same
    tk = t[keep]
    dt = np.diff(tk)
    if len(tk) < 2:
        raise IdentificationError(f'{len(t)} samples, {len(tk)} of them not repeats: too few')
    step = float(np.median(dt))
    gap = max(GAP_STEPS * step, GAP_CUTOFF_PERIODS / cutoff)
    steady = dt <= gap
    gaps = np.flatnonzero(~steady)
    report = {'samples': len(t), 'repeated': int(same.sum()), 'step_s': step, 'gap_s': gap,
              'jitter_ms': float(np.sqrt(np.mean((dt[dt <= 1.5 * step] - step) ** 2)) * 1e3),
              'skipped': int(np.sum(steady & (dt > 1.5 * step))),
              'gaps': [[float(tk[i]), float(tk[i + 1])] for i in gaps]}
    return keep, report


def suggest_tip_links(model, present):
    """
    Say how to load only the joints a log has, where ``tip_links`` can: else an empty string.

    The joints ``present`` must be the root's side of the tree (every ancestor of one present
    too): the robot as recorded is then the URDF cut at the links where they end (a gripper's
    fingers that were not logged, a hand that was not mounted).
    """
    kept = np.array([j in present for j in model.joint_names])
    if not kept.any() or kept.all() or any(
            kept[i] and model.parent[i] >= 0 and not kept[model.parent[i]]
            for i in range(model.n)):
        return ''
    ends = [model.link_names[i] for i in range(model.n) if kept[i] and not any(
        kept[j] and model.parent[j] == i for j in range(model.n))]
    return (f'; the joints it has end at {", ".join(ends)}: load the robot as recorded with '
            f'load_model(..., tip_links={ends!r}) (command line: '
            + ' '.join(f'--tip-link {e}' for e in ends) + ')')


def read_csv(model, path, *, velocity=False):
    """
    Read ``(t, q, tau)`` from a CSV file (:mod:`..csvlog`'s convention).

    Columns: ``time`` (seconds), and for every joint of the model ``<joint>.position`` and
    ``<joint>.effort``, or, for the joints the model's transmissions drive, their motors'
    ``<joint>.motor_position`` and ``<joint>.motor_effort`` (:func:`joint_field`); other columns
    are ignored.  With ``velocity``: a mapping with keys ``t, q, tau`` and ``qd``, the
    ``<joint>.velocity`` (or ``motor_velocity``) columns, None unless every joint has one.
    """
    # by chunks into arrays made once: the file's values are never held whole beside the
    # columns taken from them, nor the columns twice (a list of chunks, then joined); the
    # arrays are made for more rows than the file can have, and what is never written costs
    # no memory (the pages are never touched)
    columns, filled = None, 0
    try:
        for table in csvlog.chunks(path):
            try:
                chunk = {'t': table.time(), 'q': joint_field(model, table, 'position'),
                         'tau': joint_field(model, table, 'effort')}
            except IdentificationError as e:
                present = [j for j in model.joint_names if not table.missing([j], 'position')
                           and not table.missing([j], 'effort')]
                raise IdentificationError(str(e) + suggest_tip_links(model, present)) from None
            chunk['qd'] = joint_field(model, table, 'velocity', required=False) \
                if velocity else None
            rows = len(chunk['t'])
            if columns is None:
                room = max(csvlog.rows_at_most(path), rows)
                columns = {k: None if v is None else np.empty((room,) + v.shape[1:])
                           for k, v in chunk.items()}
            elif filled + rows > len(columns['t']):   # more rows than the file's size said
                columns = {k: None if v is None else np.resize(v, (2 * (filled + rows),)
                                                               + v.shape[1:])
                           for k, v in columns.items()}
            for k, v in chunk.items():
                if columns[k] is not None:
                    columns[k][filled:filled + rows] = v
            filled += rows
    except ValueError as e:
        raise IdentificationError(str(e)) from None
    log = {k: None if v is None else v[:filled] for k, v in columns.items()}
    if not velocity:
        return log['t'], log['q'], log['tau']
    return log


#: A joint's quantity, and the column of its motor's side that gives it through a transmission.
MOTOR_FIELDS = {'position': 'motor_position', 'velocity': 'motor_velocity',
                'effort': 'motor_effort'}


def joint_field(model, table, field, required=True):
    """
    Return the joints' ``field`` (position, velocity, effort) of a CSV table, ``(rows, n)``.

    Each joint's own ``<joint>.<field>`` column, or, for the joints that the model's
    transmissions drive (:attr:`Model.transmissions`), their motors' ``<joint>.motor_<field>``
    mapped through them: positions through ``R^-1`` and the offsets, velocities through
    ``R^-1``, efforts through ``R^T`` (a coupled block needs every one of its motors).  None
    when a joint has neither and ``required`` is false; else :class:`IdentificationError`
    naming the columns looked for.
    """
    n, rows = model.n, len(table.values)
    out = np.empty((rows, n))
    have = np.zeros(n, dtype=bool)
    for k, j in enumerate(model.joint_names):
        if not table.missing([j], field):
            out[:, k] = table.field([j], field)[:, 0]
            have[k] = True
    motor = MOTOR_FIELDS[field]
    drives = model.transmissions
    blocks = drives.blocks if drives is not None else ()
    for block in blocks:
        index = [model.joint_index(j) for j in block]
        if have[index].all():
            continue
        through = drives.restricted(block)
        if not table.missing(block, motor):
            given = table.field(block, motor)
        elif field == 'effort' and not table.missing(block, 'current'):
            given = motor_efforts_from_currents(through, table.field(block, 'current'), table.path)
        else:
            continue
        mapped = {'position': through.joint_positions, 'velocity': through.joint_velocities,
                  'effort': through.joint_efforts}[field](given)
        out[:, index] = mapped
        have[index] = True
    if have.all():
        return out
    if not required:
        return None
    wanted = []
    for k in np.flatnonzero(~have):
        j = model.joint_names[k]
        if drives is not None and j in drives.unusable and not table.missing([j], motor):
            raise IdentificationError(f'{table.path}: {j}.{motor} cannot be read: '
                                      f'{drives.unusable[j]}')
        block = next((b for b in blocks if j in b), None)
        wanted.append(f'{j}.{field}' if block is None else f'{j}.{field} (or ' + ', '.join(
            f'{b}.{motor}' for b in block) + ' through its transmission)')
    hint = ''
    if field == 'effort' and len(table.missing(model.joint_names, 'current')) < n:
        hint = ('; <joint>.current columns are read through the transmissions of the joints '
                'they name (a reduction and a torque_constant)')
    raise IdentificationError(f'{table.path} lacks the columns {", ".join(wanted)} (expected a '
                              'header with time, <joint>.position and <joint>.effort, or the '
                              f'motor side through the transmissions){hint}')


def motor_efforts_from_currents(transmissions, currents, where):
    """
    Return ``kt * i``: motor torques from currents ``(N, m)`` through the torque constants.

    A motor without a torque constant is refused, naming its joint and what to give.
    """
    unknown = [j for j, k in zip(transmissions.joints, transmissions.torque_constant)
               if not k == k]
    if unknown:
        raise IdentificationError(
            f'{where}: {", ".join(f"{j}.current" for j in unknown)} cannot be read as torque: '
            'no torque constant for ' + ', '.join(unknown) + ' (give torque_constant: {joint: '
            'N m/A} in the transmissions YAML, or identify the drive gains with '
            'identify_gains, command line identify --gains)')
    return currents * transmissions.torque_constant


def read_currents(model, path):
    """
    Read a CSV log of motor currents: a mapping with ``t, q, current`` and ``qd`` (or None).

    ``current (N, n)``: each joint's ``<joint>.current``, the current of the motor named after
    it (through the model's transmissions; a joint without one is its own motor of ratio 1).
    Positions and velocities as :func:`read_csv` reads them.
    """
    try:
        table = csvlog.read(path)
        t = table.time()
    except ValueError as e:
        raise IdentificationError(str(e)) from None
    missing = table.missing(model.joint_names, 'current')
    if missing:
        raise IdentificationError(f'{path} lacks the columns '
                                  f'{", ".join(f"{j}.current" for j in missing)}: identifying '
                                  "drive gains needs every motor's current")
    return {'t': t, 'q': joint_field(model, table, 'position'),
            'current': table.field(model.joint_names, 'current'),
            'qd': joint_field(model, table, 'velocity', required=False)}


def read_npz(model, path, *, velocity=False):
    """
    Read ``(t, q, tau)`` from a numpy archive (``np.savez``), as logs converted from MATLAB are.

    Arrays: ``t (N,)`` in seconds, ``q`` and ``tau`` ``(N, columns)``, optionally ``qd`` (the
    robot's velocities) and ``joints`` (the columns' joint names).  With ``joints``, columns are
    matched to the model's joints by name (others ignored; every joint of the model needed);
    without, they must be the model's joints in its order.  With ``velocity``: a mapping with
    keys ``t, q, tau`` and ``qd`` (None where the archive has none).
    """
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (OSError, ValueError) as e:
        raise IdentificationError(f'{path} is not a readable numpy archive: {e}') from None
    missing = [key for key in ('t', 'q', 'tau') if key not in arrays]
    if missing:
        raise IdentificationError(f'{path} has no array {", ".join(missing)} (arrays: '
                                  f'{", ".join(sorted(arrays)) or "none"}; expected t, q, tau, '
                                  'optionally qd and joints)')
    qd = arrays.get('qd')
    fields = {'q': arrays['q'], 'tau': arrays['tau'], **({} if qd is None else {'qd': qd})}
    for key, a in fields.items():
        if a.ndim != 2:
            raise IdentificationError(f'{path}: {key} must be (samples, joints), got shape '
                                      f'{a.shape}')
    if 'joints' in arrays:
        names = [str(j) for j in arrays['joints'].reshape(-1)]
        try:
            rows = joint_map(model.joint_names, names, what=f'{path} (its joints)',
                             every=True).rows
        except JointNamesError as e:
            raise IdentificationError(str(e) + suggest_tip_links(
                model, [j for j in model.joint_names if j in names])) from None
        for key, a in fields.items():
            if a.shape[1] != len(names):
                raise IdentificationError(f'{path}: {key} has {a.shape[1]} columns for '
                                          f'{len(names)} joints')
        fields = {key: a[:, rows] for key, a in fields.items()}
    t, q, tau = arrays['t'].reshape(-1), fields['q'], fields['tau']
    if not velocity:
        return t, q, tau
    return {'t': t, 'q': q, 'tau': tau, 'qd': fields.get('qd')}


def read_rosbag(model, path, topic='/joint_states', *, velocity=False):
    """
    Read ``(t, q, tau)`` from the sensor_msgs/JointState messages of a rosbag2 recording.

    Joints are matched by name (other robots' joints are ignored); time is the header stamp, or
    the recording time when the stamp is zero.  Messages without every joint of the model, or
    without efforts, are skipped.  With ``velocity``: a mapping with keys ``t, q, tau`` and
    ``qd``, the messages' velocities, None unless every message kept has them.
    """
    from pathlib import Path

    from rosbags.highlevel import AnyReader
    from rosbags.typesys import get_typestore, Stores

    try:
        reader = AnyReader([Path(path)], default_typestore=get_typestore(Stores.ROS2_HUMBLE))
        reader.open()
    except Exception as e:  # noqa: B902 - rosbags raises its own error types
        raise IdentificationError(f'{path} is not a readable rosbag2 recording: {e}') from None
    try:
        connections = [c for c in reader.connections if c.topic == topic]
        if not connections:
            topics = ', '.join(sorted({c.topic for c in reader.connections})) or 'none'
            raise IdentificationError(f'{path} has no topic {topic} (topics: {topics})')
        times, positions, velocities, efforts, seen, maps = [], [], [], [], set(), {}
        for connection, stamp, raw in reader.messages(connections=connections):
            msg = reader.deserialize(raw, connection.msgtype)
            names = tuple(msg.name)
            seen.update(names)
            if names not in maps:
                try:
                    maps[names] = joint_map(model.joint_names, names, every=True).rows
                except JointNamesError:         # lacks a joint, or names one twice: skipped
                    maps[names] = None
            idx = maps[names]
            if idx is None or len(msg.effort) != len(names):
                continue
            header = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            times.append(header if header > 0 else stamp * 1e-9)
            positions.append([msg.position[i] for i in idx])
            efforts.append([msg.effort[i] for i in idx])
            velocities.append([msg.velocity[i] for i in idx]
                              if len(msg.velocity) == len(names) else None)
    finally:
        reader.close()
    if not times:
        missing = [j for j in model.joint_names if j not in seen]
        raise IdentificationError(
            f'no message on {topic} has positions and efforts of every joint of the model'
            + (f' (never seen: {", ".join(missing)})' if missing else ' (efforts missing)')
            + suggest_tip_links(model, [j for j in model.joint_names if j in seen]))
    order = np.argsort(times, kind='stable')
    t, q, tau = np.array(times)[order], np.array(positions)[order], np.array(efforts)[order]
    if not velocity:
        return t, q, tau
    qd = None if any(v is None for v in velocities) else np.array(velocities)[order]
    return {'t': t, 'q': q, 'tau': tau, 'qd': qd}
