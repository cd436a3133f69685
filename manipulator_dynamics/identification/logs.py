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
Identification data from logs: checked, re-timed, cut at gaps, filtered and differentiated.

What :func:`.estimate.identify` fits comes from here: a log read once and re-timed on the
robot's clock by its velocities (:func:`..recordings.log.read_data`: a CSV file, a numpy
archive or a rosbag2 recording of ``/joint_states``, a mapping or arrays); the stamps checked,
repeats dropped and gaps found (:func:`check_stamps`); each
stretch between gaps filtered and differentiated on its own, with the parallel filter for both
sides of ``tau = W K`` (:func:`differentiate_logs`, the estimate module's docstring).  Every
refusal is an :class:`IdentificationError` naming what is wrong.
"""

from dataclasses import dataclass
import math

import numba
import numpy as np

from .filtering import ALIAS_SHARE, CUTOFF_HZ, derivative, EXACT, FILTER_ORDER, filtered, \
    filtfilt, lowpass, reduced, reduction, settling
from .pieces import made
from .._parallel import in_order
from ..errors import IdentificationError
from ..recordings import spill
from ..recordings.log import read_data
from ..recordings.samples import sample_matrix, time_series


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
class Conditioned:
    """
    A recording conditioned for identification, once, with what was found and done.

    Attributes
    ----------
    q, qd, qdd : ndarray, shape (N, n)
        The filtered positions and their derivatives (arrays given as ``(q, qd, qdd, tau)``:
        as given).
    tau : ndarray, shape (N, n)
        The efforts as measured (anti-aliased where a fast log was cut down), not yet through
        the parallel filter.
    parallel : callable or None
        The parallel filter to apply to both sides of ``tau = W K``
        (:func:`differentiate_logs`), with the rows it keeps; None for arrays used as given.
    processing : dict
        The choices made and what was found: the source and its re-timing, the stamps of every
        log, the stretches between gaps, the filter, the decimation (:func:`stamps_summary`).

    """

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    parallel: object
    processing: dict

    def scored(self):
        """
        Return ``(t, q, qd, qdd, tau)``: the rows a validation scores.

        A time series' rows, each stretch's filter transients left out (every row, not
        decimated), the efforts as measured; arrays as given (``t`` then counts them).
        """
        parallel = self.parallel
        if parallel is None:
            return (np.arange(len(self.tau), dtype=float), self.q, self.qd, self.qdd,
                    self.tau)
        return (parallel.rows(parallel.t), parallel.rows(self.q), parallel.rows(self.qd),
                parallel.rows(self.qdd), parallel.rows(self.tau))


def condition(model, data, settings):
    """
    Read and condition identification data once: its :class:`Conditioned` value.

    ``data`` as :func:`.estimate.identify` takes it; ``settings``
    (:class:`.settings.Settings`): its ``cutoff``, ``topic`` and ``retime`` say how.
    """
    retime = settings.retime
    data, processing = read_data(model, data, settings.topic, retime)
    parallel = None
    if isinstance(data, list) or len(data) == 3:
        logs = data if isinstance(data, list) else [data]
        q, qd, qdd, tau, parallel, more = differentiate_logs(model, logs,
                                                             cutoff=settings.cutoff)
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
    return Conditioned(q=q, qd=qd, qdd=qdd, tau=tau, parallel=parallel, processing=processing)


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
    pieces, stamps, step, resampled, origins = stretches(model, logs, cutoff)
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
    for (ts, qs, taus), origin in zip(pieces, origins):
        if len(ts) < shortest * factor:
            short.append([float(ts[0]), float(ts[-1])])
            continue
        spans.append([float(ts[0]), float(ts[-1])])
        if factor > 1:                  # cut down to what the cutoff needs, full rate kept
            raw.append((ts, taus))
            inner = (trim * factor, len(ts) - trim * factor)     # the rows ``rows`` keeps

            def cut(qs=qs, taus=taus, inner=inner):
                # side by side, one pass: the moment of the positions'
                (q, tau), taken = reduced((qs, taus), 1.0 / (step / factor), factor,
                                          moment=inner)
                return q, taken, tau
            # a third of a log is two folds' training log and the third's held-out piece: the
            # stretch kept on its log (a Piece) by its span in it, not by its own arrays
            # (made again at each call where the stamps jitter or repeat, and never held)
            span = (float(ts[0]), float(ts[-1]), len(ts))
            qs, taken, taus = made(logs[origin], ('reduced',) + span + (step, factor, inner),
                                   cut)
            ts = ts[::factor]
            moment, samples = moment + taken, samples + inner[1] - inner[0]
        qf = filtfilt(sos, qs)
        qd = derivative(qf, step)
        qd[np.abs(qd) < AT_REST] = 0.0      # a joint held still: its sign(qd) is rounding
        used.append((qf, qd, derivative(qd, step), taus, ts, qs - qf))
        spill.release(qs)               # read: a long log's pages (or its ladder's) let go of
    if not used:
        raise IdentificationError(f'{sum(len(p[0]) for p in pieces)} samples in {len(pieces)} '
                                  f'stretch(es), none long enough to filter at {cutoff:g} Hz and '
                                  f'{fs * factor:g} Hz: record more than {shortest * factor} '
                                  'samples without a gap')
    bounds = np.cumsum([0] + [len(u[0]) for u in used])

    def parallel(x):
        return np.concatenate([filtered(sos, x[i:j], np.arange(trim, j - i - trim, decimate))
                               .reshape((-1,) + x.shape[1:])
                               for i, j in zip(bounds[:-1], bounds[1:])])

    pad = settling(sos)

    def apply(function, *arrays, chunk=PARALLEL_CHUNK, reduce=None):
        """
        Return ``parallel(function(*arrays))``, ``function`` called on chunks of rows.

        Each chunk of a stretch padded by the filter's :func:`.filtering.settling` rows on both
        sides, filtered, and only the rows ``parallel`` keeps stored: equal to filtering the
        whole (to 1e-12), without ever holding ``function``'s result for every row (a
        regressor of a long log).  ``reduce``: where given, ``reduce(start, rows)`` takes each
        chunk's rows kept in their order (``start``: the first one's index among all the rows
        kept) and None is returned: the rows kept are never all held either.
        """
        kept = [np.arange(i + trim, j - trim, decimate) for i, j in zip(bounds[:-1], bounds[1:])]
        out, start = None, 0
        for i, j, keep in zip(bounds[:-1], bounds[1:], kept):
            for a in range(i, j, chunk):
                b = min(j, a + chunk)
                here = keep[(keep >= a) & (keep < b)]
                if not len(here):
                    continue
                lo, hi = max(i, a - pad), min(j, b + pad)
                rows = _filtered_columns(sos, function(*(x[lo:hi] for x in arrays)), here - lo)
                if reduce is not None:
                    reduce(start, rows)
                else:                   # filled in place: never the rows twice, as joined
                    if out is None:
                        out = np.empty((sum(map(len, kept)),) + rows.shape[1:])
                    out[start:start + len(rows)] = rows
                start += len(rows)
        return out

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
    parallel.wiggle = np.concatenate([u[5][trim:len(u[5]) - trim] for u in used])   # rows()'s
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
    # the positions and their derivatives were made here: one stretch's are not copied (an
    # hour's piece at the highest candidate, 20 MB each); the efforts may be the caller's
    joined = tuple(used[0][k] if len(used) == 1 and k < 3 else
                   np.concatenate([u[k] for u in used]) for k in range(4))
    spill.release(*(u[k] for u in used for k in (3, 4)))
    return joined + (parallel, processing)


def _filtered_columns(sos, x, rows):
    """
    Return rows ``rows`` of ``x (N, ...)`` filtered by ``sos`` (:func:`.filtering.filtered`).

    A column zero throughout is zero filtered, to the last bit, and is not filtered: most of
    a regressor's are, for most joints (a joint's torque holds its subtree's parameters and
    its own friction alone; on a 7-joint arm about half its columns).
    """
    flat = x.reshape(len(x), -1)
    live = np.flatnonzero(np.any(flat != 0, axis=0))
    if len(live) == flat.shape[1]:
        return filtered(sos, x, rows).reshape((len(rows),) + x.shape[1:])
    out = np.zeros((len(rows), flat.shape[1]))
    if len(live):
        out[:, live] = filtered(sos, flat, rows, live)
    return out.reshape((len(rows),) + x.shape[1:])


def stretches(model, logs, cutoff=CUTOFF_HZ):
    """
    Cut time series at their gaps and put each stretch on a uniform grid.

    Returns ``(pieces, stamps, step, resampled, origins)``: ``(t, q, tau)`` of every stretch,
    the stamps' report of every log (:func:`check_stamps`: samples that repeat the one before
    are dropped, an interval longer than ``gap_s`` ends a stretch), the sample period (the
    median of the logs', to nine significant digits), whether a stretch was interpolated
    (linearly, onto the period's grid, where its stamps jitter by more than 1 %), and per
    stretch the index of its log in ``logs``.  A stretch is a view of its log's arrays unless
    samples were dropped or it was interpolated: then new arrays, made again at every call.
    """
    cut, stamps, origins = [], [], []
    for i, log in enumerate(logs):
        where = f'log {i + 1}: ' if len(logs) > 1 else ''
        # a piece of a long log is checked once (a Piece keeps it): a third is two folds'
        # training log and the third fold's held-out piece, each a pass over its samples.
        # Only a spilled log's: what is kept holds its arrays, and arrays made for one call
        # (a stretch's rows at a candidate's rate) would then be held in memory to the end
        if all(spill.is_spilled(x) for x in log):
            ti, qi, taui, keep, report, cuts = made(
                log, ('stamps', id(model), cutoff),
                lambda log=log, where=where: _checked(model, *log, cutoff, where), (model,))
        else:
            ti, qi, taui, keep, report, cuts = _checked(model, *log, cutoff, where)
        if keep is not None:            # taken again: copies are not held beside the log
            ti, qi, taui = (spill.take(x, keep) for x in (ti, qi, taui))
        stamps.append({**report, 'gaps': [list(gap) for gap in report['gaps']]})
        cut += list(zip(np.split(ti, cuts), np.split(qi, cuts), np.split(taui, cuts)))
        origins += [i] * (len(cuts) + 1)
    # nine significant digits: the digits beyond are the stamps' rounding, and two thirds of
    # one log (cross-validation's training logs) then agree on it, and filter alike
    step = float(f"{np.median([r['step_s'] for r in stamps]):.9g}")
    pieces, resampled = [], False
    for ts, qs, taus in cut:
        jitter = spill.intervals(ts, lambda dt: np.flatnonzero(abs(dt - step) > 0.01 * step)[:1])
        if len(jitter):
            # a piece of a long log (a third, a ninth: each shorter than what spills alone)
            # is put on its grid in a file as the log is: a fold's two thirds at full rate
            # would be 270 MB an hour, and the choices' ninths are kept for their scoring
            grid = spill.arange(ts[0], ts[-1] + 0.5 * step, step, spill.is_spilled(qs) or None)
            qs, taus = _on_grid(grid, ts, qs), _on_grid(grid, ts, taus)
            ts, resampled = grid, True
        pieces.append((ts, qs, taus))
    return pieces, stamps, step, resampled, origins


def _checked(model, t, q, tau, cutoff, where):
    """
    Return one log's ``(t, q, tau, keep, report, cuts)`` for :func:`stretches`.

    Its arrays checked (:func:`.samples.time_series`); the samples kept (:func:`check_stamps`,
    whose report it is), None where every one is; and the kept samples that begin a stretch
    after a gap.
    """
    t, q, tau = time_series(model, t, q, tau, where)
    keep, report = check_stamps(t, q, tau, cutoff)
    kept = t if keep.all() else spill.take(t, keep)
    cuts = spill.intervals(kept, lambda dt: np.flatnonzero(dt > report['gap_s']))
    return t, q, tau, None if keep.all() else keep, report, cuts


def _on_grid(grid, t, x):
    """
    Return ``x (N, n)`` at the stamps ``t`` interpolated at ``grid``: ``np.interp``'s, exactly.

    Every column at once, a chunk of the grid at a time on the shared threads
    (:func:`_interpolated`, which lets go of the GIL): ``np.interp`` a column at a time
    searched the stamps once per column and held the GIL, 7 to 15 times slower.
    """
    # a long log's, or a piece of one however short: into a file as it is
    out = spill.columns(len(grid), x.shape[1], spill.is_spilled(x) or None)
    t = np.ascontiguousarray(t, dtype=float)

    def chunk(start):
        out[start:start + ON_GRID_CHUNK] = at_grid(grid[start:start + ON_GRID_CHUNK], t, x)
        spill.release(x, out, grid, t)          # a long log's pages: a chunk's at a time
    in_order(chunk, range(0, len(grid), ON_GRID_CHUNK))
    return out


def at_grid(grid, t, x):
    """
    Return ``x (N, n)``, sampled at ``t``, at the points ``grid`` (increasing): ``np.interp``'s.

    Interpolated between the stamps around ``grid`` alone (:func:`_interpolated`), so that a
    chunk of a long grid reads only its own part of a long log.
    """
    grid = np.ascontiguousarray(grid, dtype=float)
    out = np.empty((len(grid), x.shape[1]))
    if len(grid):
        lo = max(int(np.searchsorted(t, grid[0], 'right')) - 1, 0)
        hi = min(int(np.searchsorted(t, grid[-1], 'right')) + 1, len(t))
        _interpolated(grid, np.ascontiguousarray(t[lo:hi], dtype=float),
                      np.ascontiguousarray(x[lo:hi], dtype=float), out)
    return out


#: Grid points per chunk of :func:`_on_grid` (3.7 MB of a 7-joint arm's columns).
ON_GRID_CHUNK = 1 << 16


@numba.njit(**EXACT)
def _interpolated(grid, t, x, out):
    """
    Write ``x (N, n)``, sampled at ``t (N,)``, linearly at ``grid`` into ``out``; both increase.

    ``np.interp``'s arithmetic and cases, bit for bit (without fused multiply-adds): before the
    first stamp the first row, at or after the last the last row, on a stamp its row, else
    ``slope * (g - t[j]) + x[j]``, ``slope`` the difference of the rows over that of the stamps.
    """
    N, n = x.shape
    j = 0
    for k in range(grid.shape[0]):
        g = grid[k]
        while j < N - 1 and t[j + 1] <= g:
            j += 1
        if g < t[0]:
            for c in range(n):
                out[k, c] = x[0, c]
        elif j >= N - 1 or g > t[N - 1]:
            for c in range(n):
                out[k, c] = x[N - 1, c]
        elif t[j] == g:
            for c in range(n):
                out[k, c] = x[j, c]
        else:
            step = t[j + 1] - t[j]
            for c in range(n):
                slope = (x[j + 1, c] - x[j, c]) / step
                out[k, c] = slope * (g - t[j]) + x[j, c]


def _kept_stamps(t, keep):
    """Yield the stamps ``keep`` keeps, a chunk at a time, each after the last one kept before."""
    last = t[:0]
    for start in range(0, len(t), spill.CHUNK):
        here = slice(start, start + spill.CHUNK)
        tk = np.concatenate([last, t[here][keep[here]]])
        spill.release(t)
        if len(tk):
            last = tk[-1:]
            yield tk


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
    # a long log's stamps are 29 MB an hour a copy: every pass below goes a chunk at a time,
    # and the intervals are held once, for their median
    keep = np.ones(len(t), dtype=bool)
    for start in range(0, len(t) - 1, spill.CHUNK):
        stop = start + spill.CHUNK + 1
        a, b, s = q[start:stop], tau[start:stop], t[start:stop]
        keep[start + 1:start + len(s)] = ~((s[1:] == s[:-1]) | (
            np.all(a[1:] == a[:-1], axis=1) & np.all(b[1:] == b[:-1], axis=1)))
        spill.release(t, q, tau)
    kept = int(keep.sum())
    if kept < 2:
        raise IdentificationError(f'{len(t)} samples, {kept} of them not repeats: too few')
    dt, filled = np.empty(kept - 1), 0
    for tk in _kept_stamps(t, keep):
        dt[filled:filled + len(tk) - 1] = np.diff(tk)
        filled += len(tk) - 1
    step = float(np.median(dt, overwrite_input=True))
    del dt
    gap = max(GAP_STEPS * step, GAP_CUTOFF_PERIODS / cutoff)
    squares, near, skipped, gaps = 0.0, 0, 0, []
    for tk in _kept_stamps(t, keep):
        dt = np.diff(tk)
        close = dt[dt <= 1.5 * step] - step
        squares, near = squares + float(close @ close), near + len(close)
        steady = dt <= gap
        skipped += int(np.sum(steady & (dt > 1.5 * step)))
        gaps += [[float(tk[i]), float(tk[i + 1])] for i in np.flatnonzero(~steady)]
    report = {'samples': len(t), 'repeated': len(t) - kept, 'step_s': step, 'gap_s': gap,
              'jitter_ms': float(np.sqrt(squares / near)) * 1e3, 'skipped': skipped,
              'gaps': gaps}
    return keep, report
