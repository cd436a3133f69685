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
A long log's columns kept in a file, not in memory, and read by chunks.

An hour at 1 kHz of a 7-joint arm is 200 MB a quantity (positions, efforts, velocities):
held in memory, the log is most of what an identification's memory grows with.  Every pass
over a log at its full rate goes chunk by chunk (the anti-alias filter,
:func:`..identification.filtering.decimated`; the full-rate scoring,
:func:`..identification.validation.at_full_rate`; the checks of its samples and stamps; the
motion's bandwidth, a column at a time), so the columns can live in a file:

* :func:`spilled` makes a column-major ``(rows, n)`` array whose values are those of an
  unlinked temporary file (``numpy.memmap``; each column contiguous, so that a column is read
  without the others): what the CSV, numpy archive and rosbag2 readers of :mod:`.formats`
  write a long log's positions, efforts and velocities into, a chunk at a time.  The file is
  reserved in full when made: a disk too full says so then (the log stays in memory), never
  as a fault while it is written (on a file system that cannot reserve, it is written
  unreserved, as any map is).
* The pages a pass touches are memory of the process until :func:`release` lets go of them
  (``madvise(MADV_DONTNEED)``: the values stay in the file, and in the system's page cache
  while there is room), which each chunk loop calls after each chunk.

Logs of fewer than :data:`SPILL_ROWS` samples stay in memory (a map's page faults cost more
than their memory).  The file is made in the temporary folder (``TMPDIR``); where that folder
is itself in memory (tmpfs), so is the log, though not counted as the process's.
"""

import errno
import math
import mmap
import os
import tempfile
import weakref

import numpy as np

#: Samples from which a log's ``(N, n)`` columns are spilled to a file: 20 minutes at 1 kHz.
SPILL_ROWS = 1_200_000

_DONTNEED = getattr(mmap, 'MADV_DONTNEED', None)


def columns(rows, n, spill=None):
    """
    Return an uninitialised ``(rows, n)`` float array: :func:`spilled` where ``rows`` is long.

    ``spill``: force it (True) or keep it in memory (False); None: from :data:`SPILL_ROWS`.
    """
    if spill or (spill is None and rows >= SPILL_ROWS):
        out = spilled(rows, n)
        if out is not None:
            return out
    return np.empty((rows, n))


def stamps(rows, spill=None):
    """Return an uninitialised ``(rows,)`` float array, a log's stamps: as :func:`columns`."""
    return columns(rows, 1, spill)[:, 0]


def spilled(rows, n):
    """
    Return a ``(rows, n)`` float array held in an unlinked temporary file, column-major.

    None where the file cannot be made or reserved (no room on the temporary folder's disk):
    the caller keeps the values in memory.
    """
    size = 8 * max(rows, 1) * n
    try:
        f = tempfile.TemporaryFile(prefix='manipulator_dynamics-log-')
        try:
            _reserve(f.fileno(), size)
            held = np.memmap(f, dtype=np.float64, mode='w+', shape=(n, rows))
            if hasattr(os, 'pwrite'):       # what write() writes through, closed with the map
                held.file = os.dup(f.fileno())
                weakref.finalize(held, os.close, held.file)
            return held.T
        finally:
            f.close()                       # the map keeps the file; unlinked, it goes with it
    except (OSError, ValueError):
        return None


def write(out, start, values):
    """
    Set rows ``start, start + 1, ...`` of ``out`` to ``values``: a spilled array's by its file.

    Written through the map, every page of a log's file was a fault of the process's (an
    hour's read: 0.8 s of its main thread, against 0.1 s written with ``pwrite``, each column's
    rows at once); the map sees what is written, as every map of the file does.  An array in
    memory (or not a float one, or a view whose columns are not each contiguous) is set as
    numpy sets it.  ValueError where ``values`` do not fit the rows from ``start`` on.
    """
    held = _made(out)
    values = np.asarray(values)
    if held is None or out.dtype != np.float64 or len(values) == 0:
        out[start:start + len(values)] = values
        return
    rows = out[start:start + len(values)]
    rows, values = (rows[:, None], values.reshape(len(values), -1)) if rows.ndim == 1 \
        else (rows, values.reshape(len(values), -1))
    if values.shape != rows.shape:          # what numpy's assignment would refuse
        raise ValueError(f'could not write {values.shape} values into rows {start}: of an '
                         f'array of {out.shape}')
    for j in range(rows.shape[1]):
        column = rows[:, j]
        if column.strides[0] != 8:
            column[...] = values[:, j]
            continue
        data = memoryview(np.ascontiguousarray(values[:, j], dtype=np.float64)).cast('B')
        at = column.ctypes.data - held.ctypes.data
        while len(data):
            done = os.pwrite(held.file, data, held.offset + at)
            data, at = data[done:], at + done


def _reserve(fd, size):
    """
    Reserve ``size`` bytes of the file ``fd`` on its disk; OSError where there is no room.

    A file system that cannot reserve (``posix_fallocate`` not supported there) is written
    unreserved, as numpy's maps always are.
    """
    if not hasattr(os, 'posix_fallocate'):
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            raise


def is_spilled(x):
    """Return whether ``x`` (or what it is a view of) is held in a file by :func:`spilled`."""
    return _map(x) is not None


def release(*arrays):
    """
    Let go of the memory pages that reading or writing the spilled ``arrays`` has touched.

    Their values stay in the file; reading them again brings them back.  Arrays not spilled
    (or views of none) are left as they are.
    """
    for x in arrays:
        held = _map(x)
        if held is not None and _DONTNEED is not None:
            held.madvise(_DONTNEED)


def _made(x):
    """Return the array :func:`spilled` made under ``x`` (a view of it), or None."""
    while x is not None and getattr(x, 'file', None) is None:
        x = getattr(x, 'base', None)
    return x if isinstance(x, np.memmap) else None


def _map(x):
    """Return the ``mmap`` under ``x``, following its views, or None."""
    while x is not None:
        if isinstance(x, np.memmap) and getattr(x, '_mmap', None) is not None:
            return x._mmap
        x = getattr(x, 'base', None)
        if isinstance(x, mmap.mmap):
            return x
    return None


#: Rows a pass over a log reads at a time (7 joints: 3.7 MB a quantity).
CHUNK = 1 << 16


def by_chunks(x, rows=CHUNK):
    """Yield ``(start, x[start:start + rows])`` over ``x``'s rows, releasing each after use."""
    for start in range(0, len(x), rows):
        yield start, x[start:start + rows]
        release(x)


def take(x, rows):
    """
    Return ``x[rows]``: ``rows`` ascending indices of ``x``'s rows, or a mask of them.

    Of a spilled ``x``, a :data:`CHUNK` of its rows at a time, each released after use: rows
    taken far apart still bring every page between them into memory (the system reads around
    each page it faults).  A spilled ``(N, n)`` ``x``'s rows taken as many as a long log's
    (:data:`SPILL_ROWS`) go to a file too (:func:`columns`).
    """
    if not is_spilled(x):
        return x[rows]
    rows = np.asarray(rows)
    mask = rows.dtype == bool
    count = int(rows.sum()) if mask else len(rows)
    out = np.empty((count,) + x.shape[1:], dtype=x.dtype) if x.dtype != np.float64 \
        or x.ndim > 2 else stamps(count) if x.ndim == 1 else columns(count, x.shape[1])
    edges = None if mask else np.searchsorted(rows, np.arange(0, len(x) + CHUNK, CHUNK))
    filled = 0
    for k, start in enumerate(range(0, len(x), CHUNK)):
        part = x[start:start + CHUNK][rows[start:start + CHUNK]] if mask \
            else x[rows[edges[k]:edges[k + 1]]]
        out[filled:filled + len(part)] = part
        filled += len(part)
        release(x, out)
    return out


def intervals(t, found):
    """
    Return the samples ending the intervals of ``t`` that ``found`` picks, a chunk at a time.

    ``found(dt)`` gives positions in a chunk's intervals ``dt``: an hour's intervals are 29 MB,
    never held whole.
    """
    hits = []
    for a in range(0, len(t) - 1, CHUNK):
        hits.append(a + 1 + found(np.diff(t[a:a + CHUNK + 1])))
        release(t)
    return np.concatenate(hits) if hits else np.zeros(0, dtype=np.intp)


class Range:
    """
    ``np.arange(start, stop, step)`` a chunk at a time: ``for a, values in Range(...)``.

    Bit for bit: numpy fills a range as ``start + i * (next - start)`` past ``next = start +
    step``, and so does this, :data:`CHUNK` values at a time.  :meth:`hanning`:
    ``np.hanning(len(range))``'s values ``a`` to ``a + count``, as numpy computes them.
    """

    def __init__(self, start, stop, step):
        self.length = max(0, math.ceil((stop - start) / step))
        self.start, self.next = start, start + step
        self.delta = self.next - start

    def __len__(self):
        """Return the number of values."""
        return self.length

    def __iter__(self):
        """Yield ``(a, values)``: the values from the ``a``-th on, a chunk of them."""
        for a in range(0, self.length, CHUNK):
            values = self.start + np.arange(a, min(self.length, a + CHUNK),
                                            dtype=float) * self.delta
            if a == 0 and self.length > 1:
                values[1] = self.next
            yield a, values

    def hanning(self, a, count):
        """Return the Hann window's values ``a`` to ``a + count``, as numpy's ``hanning``."""
        M = self.length
        if M == 1:
            return np.ones(count)
        n = np.arange(1 - M + 2 * a, 1 - M + 2 * (a + count), 2)
        return 0.5 + 0.5 * np.cos(np.pi * n / (M - 1))


def arange(start, stop, step, spill=None):
    """
    Return numpy's range from ``start`` to ``stop`` by ``step``, bit for bit: as stamps.

    ``spill``: as :func:`columns`'s.
    """
    values = Range(start, stop, step)
    out = stamps(len(values), spill)
    for a, chunk in values:
        out[a:a + len(chunk)] = chunk
        release(out)
    return out
