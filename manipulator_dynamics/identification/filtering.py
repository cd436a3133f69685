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
The low-pass filter of identification: designed, applied to a whole log or chunk by chunk.

One zero-phase Butterworth filter (:func:`lowpass`, applied forward and backward) conditions
every time series the package identifies from.  A long log need not be filtered whole:
:func:`zero_phase` runs it by chunks, each padded on both sides by :func:`settling` samples,
enough for the filter's impulse response to decay below a relative ``1e-12`` (a pole of radius
``rho`` decays by ``rho^k`` in ``k`` samples), then trimmed, so that the seams agree with the
whole-log filter to better than ``1e-9`` of the signal.  :func:`decimated` keeps every
``step``-th row of the result without ever holding the filtered log at its full rate: what a
log of hours needs, and what the cutoff's choice (:mod:`.selection`) does once before judging
every candidate on the fewer rows (:class:`.decimation.Decimated`).  The columns are
filtered on the machine's cores (:func:`filtered`).
"""

import functools
import math

import numba
import numpy as np

from .._jit import JIT
from .._parallel import get_threads, in_order, MIN_VALUES_PER_THREAD
from ..recordings import spill

#: Default low-pass cutoff in Hz: robot trajectories live below a few Hz; joint torque noise and
#: structural resonances above.
CUTOFF_HZ = 10.0

#: The Butterworth filter's order (applied twice: forward and backward).
FILTER_ORDER = 4

#: Relative size below which the impulse response of a chunk's padding is taken as gone.
SETTLED = 1e-12

#: Rows per chunk of :func:`zero_phase` (65 536 states of a 7-joint arm: 3.7 MB, the filter's
#: four copies of it, and of a long log's file as much in memory at a time; the padding, 600
#: rows for a 5 Hz candidate's anti-alias filter at 1 kHz, adds 2 %).
CHUNK_ROWS = 1 << 16

#: Samples per second per Hz of cutoff that a fit at that cutoff needs: the motion lies below
#: the cutoff, and fourth-order central differences (:func:`derivative`) at this rate err by
#: ``(2 pi / 50)^4 / 30``, ``8e-6``, on a velocity at ``cutoff / 2.5``.  A faster log is cut down
#: to it first (:func:`reduced`); each row after it is the fit's cost (the regressor's width).
RATE_PER_CUTOFF = 20.0

#: The anti-alias cutoff of a log cut down, as a share of the rate it is cut down to: four
#: times the fit's cutoff, where the filter's effect on a motion at a fifth of the cutoff is
#: below ``(1/10)^8``, and at the cutoff itself ``(1/4)^8``.
ALIAS_SHARE = 0.2


def lowpass(cutoff, rate, order=FILTER_ORDER):
    """Return the Butterworth low-pass at ``cutoff`` Hz, ``rate`` Hz, as second-order sections."""
    import scipy.signal

    return scipy.signal.butter(order, cutoff / (0.5 * rate), output='sos')


def filtfilt(sos, x):
    """
    Return ``x`` filtered forward and backward along its first axis, as scipy's sosfiltfilt.

    The same to the last bit, sooner.  scipy solves for the filter's initial state
    (``sosfilt_zi``) on every call, half the time of filtering one column of a 20 s log, which
    the smooth friction law's fit filters thousands of times
    (:func:`.friction.fit_coulomb_velocity`); here it is solved once per filter
    (:func:`_initial_state`).  And scipy filters a column at a time, each copied out of the
    rows and back: :func:`_zero_phase` takes a row at a time, every column at once, in scipy's
    own operations and order (odd extension by ``3 (2 sections + 1)`` samples, fewer taps where
    every section has a zero coefficient; direct form II transposed forward, then backward,
    from the initial state times each end), compiled without fused multiply-adds: 5 times
    faster on the 200 columns of a regressor.  :func:`filtered` keeps some rows and columns.
    """
    x = np.asarray(x, dtype=float)
    flat = x.reshape(len(x), -1)
    return _filtered(sos, flat, np.arange(flat.shape[1]), np.arange(len(x))).reshape(x.shape)


def filtered(sos, x, rows, columns=None):
    """
    Return rows ``rows`` of :func:`filtfilt` of ``x (N, ...)``'s columns ``columns``.

    ``(len(rows), len(columns))``, the columns those of ``x`` as ``(N, -1)`` (default: every
    one), ``rows`` ascending: the others are neither copied out of ``x``, filtered nor stored
    (the parallel filter keeps a row in ten of half a regressor's columns).  The columns are
    split over the machine's cores (:func:`.._parallel.in_order`; the kernel lets go of the
    GIL); each is :func:`filtfilt`'s to the last bit.
    """
    x = np.asarray(x, dtype=float)
    flat = x.reshape(len(x), -1)
    columns = np.arange(flat.shape[1]) if columns is None else np.asarray(columns, np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) and (rows[0] < 0 or rows[-1] >= len(x) or np.any(np.diff(rows) <= 0)):
        raise ValueError(f'rows must ascend within 0..{len(x) - 1}')
    parts = max(1, min(get_threads(), len(columns), len(x) * len(columns)
                       // MIN_VALUES_PER_THREAD))
    if parts == 1:
        return _filtered(sos, flat, columns, rows)
    return np.hstack(in_order(lambda block: _filtered(sos, flat, block, rows),
                              np.array_split(columns, parts)))


def _filtered(sos, flat, columns, rows):
    """Return ``filtfilt(sos, flat)[rows][:, columns]`` by :func:`_zero_phase`."""
    taps = 2 * len(sos) + 1 - min(int((sos[:, 2] == 0).sum()), int((sos[:, 5] == 0).sum()))
    edge = 3 * taps
    if flat.shape[0] <= edge:
        raise ValueError(f'The length of the input vector x must be greater than padlen, which '
                         f'is {edge}.')
    if sos.ndim != 2 or sos.shape[1] != 6 or np.any(sos[:, 3] != 1.0):
        raise ValueError(f'sos must be (sections, 6) with a0 = 1, got {sos!r}')
    out = np.empty((len(rows), len(columns)))
    _zero_phase(np.ascontiguousarray(sos, dtype=float), flat, columns,
                _initial_state(sos.tobytes(), sos.shape), edge, rows, out)
    return out


#: Compiled as scipy's loops are: no fused multiply-add (``JIT`` allows them), so that
#: :func:`filtfilt` is ``sosfiltfilt`` to the last bit.
EXACT = dict(JIT, fastmath=False)


@numba.njit(**EXACT)
def _sections(sos, z0, z1, v):
    """Run the row ``v (C,)`` through every section, in place, their states ``z0, z1 (S, C)``."""
    for s in range(sos.shape[0]):
        b0, b1, b2, a1, a2 = sos[s, 0], sos[s, 1], sos[s, 2], sos[s, 4], sos[s, 5]
        for c in range(v.shape[0]):
            w = v[c]
            y = b0 * w + z0[s, c]
            z0[s, c] = b1 * w - a1 * y + z1[s, c]
            z1[s, c] = b2 * w - a2 * y
            v[c] = y


@numba.njit(**EXACT)
def _zero_phase(sos, x, columns, zi, edge, rows, out):
    """
    Filter the ``columns`` of ``x (N, C)`` forward and backward; their ``rows`` into ``out``.

    The odd extension is read in place: ``2 x[0] - x[edge - i]`` before the rows, ``2 x[N-1]
    - x[N-2-j]`` after them; each pass starts from ``zi (S, 2)`` times its first row.  The
    backward pass stops at the first row kept.
    """
    N, C, S = x.shape[0], len(columns), sos.shape[0]
    M = N + 2 * edge
    y = np.empty((M, C))
    z0, z1, v = np.empty((S, C)), np.empty((S, C)), np.empty(C)
    for i in range(M):
        for c in range(C):
            k = columns[c]
            if i < edge:
                v[c] = 2 * x[0, k] - x[edge - i, k]
            elif i < edge + N:
                v[c] = x[i - edge, k]
            else:
                v[c] = 2 * x[N - 1, k] - x[N - 2 - (i - edge - N), k]
        if i == 0:
            for s in range(S):
                for c in range(C):
                    z0[s, c] = zi[s, 0] * v[c]
                    z1[s, c] = zi[s, 1] * v[c]
        _sections(sos, z0, z1, v)
        y[i] = v
    for s in range(S):
        for c in range(C):
            z0[s, c] = zi[s, 0] * y[M - 1, c]
            z1[s, c] = zi[s, 1] * y[M - 1, c]
    r = len(rows) - 1
    for i in range(M - 1, edge - 1, -1):
        if r < 0:
            break
        v[:] = y[i]
        _sections(sos, z0, z1, v)
        if i - edge == rows[r]:
            out[r] = v
            r -= 1


@functools.lru_cache(maxsize=64)
def _initial_state(sos, shape):
    """Return ``scipy.signal.sosfilt_zi`` of the sections ``sos`` (their bytes and shape)."""
    import scipy.signal

    return scipy.signal.sosfilt_zi(np.frombuffer(sos).reshape(shape))


def settling(sos, tolerance=SETTLED):
    """
    Return the samples after which the impulse response of ``sos`` stays below ``tolerance``.

    Relative to its peak: the slowest pole's radius ``rho`` gives ``log(tolerance) / log(rho)``
    samples; the response itself is then checked over twice that and the last sample above
    ``tolerance`` taken (a filter's residues can exceed one).
    """
    import scipy.signal

    poles = np.concatenate([np.roots(section[3:]) for section in sos])
    rho = float(np.max(np.abs(poles)))
    if rho <= 0.0:
        return len(sos) * 2
    guess = int(math.ceil(math.log(tolerance) / math.log(rho)))
    impulse = np.zeros(2 * guess + 8 * len(sos))
    impulse[0] = 1.0
    h = np.abs(scipy.signal.sosfilt(sos, impulse))
    above = np.flatnonzero(h > tolerance * h.max())
    return int(above[-1]) + 1


def zero_phase(x, sos, chunk=CHUNK_ROWS):
    """
    Filter ``x (N, ...)`` along its first axis forward and backward (``sosfiltfilt``).

    By chunks of ``chunk`` rows, each padded by :func:`settling` samples of the log on both
    sides (the log's own ends are padded as ``sosfiltfilt`` pads them): equal to filtering
    ``x`` whole within ``1e-9`` of its largest value.
    """
    return decimated(x, sos, 1, chunk)


def decimated(x, sos, step, chunk=CHUNK_ROWS, moment=None):
    """
    Return rows ``0, step, 2 step, ...`` of :func:`zero_phase` of ``x (N, k)``, chunk by chunk.

    Only a chunk and its padding are filtered at a time; the rows kept are the only ones
    stored.  ``chunk`` is rounded up to a multiple of ``step``.  With ``moment``, a range of
    rows ``(a, b)``: also what the filter took off those rows, ``r = x - filtered``, as the sum
    of ``r r^T`` ``(k, k)`` over them: ``(kept, moment)`` (the ends of a log, where the
    filter has transients, left out by the range).

    ``x`` may be a tuple of ``(N, k_i)`` arrays (a log's positions and efforts): their columns
    are filtered side by side, in one pass, and a tuple of their rows is returned, the moment
    (if asked) of the first one's.  Each column is what it would be alone, to the bit: the
    recursions of many columns run together in the kernel, where one array's few would leave
    it waiting on each (14 columns a pass: 1.5-1.7 times faster than 7 and 7).
    """
    together = isinstance(x, tuple)
    parts = [np.asarray(a, dtype=float) for a in (x if together else (x,))]
    widths = [int(np.prod(a.shape[1:], dtype=np.int64)) for a in parts]
    if together and (any(a.ndim != 2 for a in parts) or len({len(a) for a in parts}) != 1):
        raise ValueError('decimated: arrays side by side must be (N, k) with the same N, got '
                         + ', '.join(str(a.shape) for a in parts))
    N = len(parts[0])
    chunk = max(step, int(math.ceil(chunk / step)) * step)
    pad = settling(sos)
    rows = len(range(0, N, step))
    # a long log's rows, however few a piece of it gives, spilled as it is: pieces add up
    outs = [spill.columns(rows, a.shape[1], spill=True) if a.ndim == 2 and spill.is_spilled(a)
            else np.empty((rows,) + a.shape[1:]) for a in parts]
    first = widths[0]
    taken = np.zeros((first, first)) if moment is not None else None
    edges = np.cumsum([0] + widths)
    for start in range(0, N, chunk):
        stop = min(N, start + chunk)
        lo, hi = max(0, start - pad), min(N, stop + pad)
        if together:                    # the arrays' columns side by side, each contiguous
            block = np.empty((hi - lo, edges[-1]), order='F')
            for a, b, part in zip(edges[:-1], edges[1:], parts):
                block[:, a:b] = part[lo:hi]
        else:
            block = parts[0][lo:hi]
        if moment is None:              # the rows kept, alone
            kept = filtered(sos, block, np.arange(start - lo, stop - lo, step))
        else:                           # every row: what the filter took off them
            every = filtered(sos, block, np.arange(start - lo, stop - lo))
            kept = every[::step]
            a, b = max(start, moment[0]), min(stop, moment[1])
            if a < b:
                r = parts[0][a:b].reshape(b - a, -1) - every[a - start:b - start, :first]
                taken += r.T @ r
        for a, b, part, out in zip(edges[:-1], edges[1:], parts, outs):
            out[start // step:(stop + step - 1) // step] = kept[:, a:b].reshape(
                (-1,) + part.shape[1:])
        spill.release(*parts, *outs)    # a long log's: a chunk at a time in memory
    result = tuple(outs) if together else outs[0]
    return (result, taken) if moment is not None else result


def reduction(rate, cutoff):
    """Return the factor a log at ``rate`` Hz is cut down by for a fit at ``cutoff`` Hz."""
    return max(1, int(rate / (RATE_PER_CUTOFF * cutoff) + 1e-6))    # 9.9999999: 10


def reduced(x, rate, factor, moment=None):
    """
    Return ``x (N, ...)`` at ``rate`` Hz cut down ``factor`` times: anti-aliased, then decimated.

    The anti-alias filter: :func:`lowpass` at :data:`ALIAS_SHARE` of the new rate, zero phase,
    by chunks (:func:`decimated`, which ``moment`` goes to; a tuple of arrays side by side).
    """
    return decimated(x, lowpass(ALIAS_SHARE * rate / factor, rate), factor, moment=moment)


def derivative(x, step):
    """
    Return ``dx/dt`` of ``x (N, ...)`` sampled every ``step`` seconds, by central differences.

    Fourth order, ``(x[i-2] - 8 x[i-1] + 8 x[i+1] - x[i+2]) / (12 step)``, inside; second order
    at the two rows of each end (which the fit's trim leaves out).  On a sine of period ``T``
    it errs by ``(2 pi step / T)^4 / 30``: at 20 rows per cutoff period (a log cut down,
    :data:`RATE_PER_CUTOFF`) and a motion at a fifth of the cutoff, ``1e-5``, where the
    second-order ``(2 pi step / T)^2 / 6`` is ``2.6e-3``: a bias that noiseless data (a
    simulation) resolve.
    """
    x = np.asarray(x, dtype=float)
    out = np.gradient(x, step, axis=0)
    if len(x) >= 5:
        out[2:-2] = (x[:-4] - 8.0 * x[1:-3] + 8.0 * x[3:-1] - x[4:]) / (12.0 * step)
    return out
