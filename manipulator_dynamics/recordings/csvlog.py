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
The one CSV convention of every time series the package reads or writes.

A header row, then one row per sample: ``time`` in seconds (``t`` is read too), then a column
per joint and quantity, ``<joint>.<field>``: ``position``, ``velocity``, ``acceleration``,
``effort`` (writers add their own: ``target``, ``reached``, ``<link>.tip_deflection``).  A
column named after a joint alone is its position (hand-written trajectories).  Columns may come
in any order; columns no reader asks for are ignored; lines starting with ``#`` are comments.
Read as spreadsheets and loggers write it too: a UTF-8 byte-order mark is skipped and the
separator is the header's (``,``, ``;`` or a tab); with ``;``, a decimal comma is read as a
decimal point.
So the CSV that ``excitation --output`` writes feeds ``identify`` (with efforts added),
``flexible`` and the demo node alike.
"""

import csv

import numpy as np

from .. import _parallel
from ..errors import RecordingError

#: The quantities of a joint, as its columns' suffixes.
FIELDS = ('position', 'velocity', 'acceleration', 'effort')
#: Separators read, the header's most frequent one taken: the first where none appears (a
#: single column).  A spreadsheet in a locale with decimal commas writes ``;``.
SEPARATORS = (',', ';', '\t')


class Table:
    """
    A CSV file read: its ``path``, ``header`` and ``values (rows, columns)``.

    By pandas' C reader (a million rows of fifteen columns in about a second); a file it
    cannot read as numbers, or that leaves a value out, is read again line by line, so that
    the error names the row and the column.
    """

    def __init__(self, path, header=None, values=None):
        self.path = str(path)
        if header is not None:                  # a chunk of a file read by chunks()
            self.header, self.values = header, values
            return
        self.header, separator = _header(self.path)
        self.values = _fast(self.path, separator, len(self.header))
        if self.values is None:
            self.values = _careful(self.path, separator, self.header)
        if not len(self.values):
            raise RecordingError(f'{self.path} has a header but no data rows')

    def time(self):
        """Return the ``time`` (or ``t``) column; RecordingError if there is none."""
        for name in ('time', 't'):
            if name in self.header:
                return self.values[:, self.header.index(name)]
        raise RecordingError(f"{self.path}: no 'time' column (header: {', '.join(self.header)})")

    def joints(self, field='position'):
        """Return the joints that have a ``<joint>.<field>`` column, in the header's order."""
        tail = '.' + field
        return [h[:-len(tail)] for h in self.header if h.endswith(tail)]

    def missing(self, joints, field):
        """Return the joints of ``joints`` without a ``field`` column."""
        return [j for j in joints if self._column(j, field) is None]

    def field(self, joints, field, required=True):
        """
        Return the ``(rows, len(joints))`` columns of ``field``, in ``joints`` order.

        None where a joint lacks it and ``required`` is false; else RecordingError naming each.
        """
        index = [self._column(j, field) for j in joints]
        if any(i is None for i in index):
            if not required:
                return None
            missing = [j for j, i in zip(joints, index) if i is None]
            raise RecordingError(f'{self.path}: no {field} column for joint(s) '
                                 f'{", ".join(missing)} (expected <joint>.{field}; header: '
                                 f'{", ".join(self.header)})')
        return self.values[:, index]

    def _column(self, joint, field):
        for name in (f'{joint}.{field}',) + ((joint,) if field == 'position' else ()):
            if name in self.header:
                return self.header.index(name)
        return None


def read(path):
    """Read a CSV time series: a :class:`Table`.  Errors name the file, row and column."""
    return Table(path)


#: Bytes of the file a chunk of :func:`chunks` parses (a 15-column log's: about 90,000 rows).
CHUNK_BYTES = 1 << 24

#: The byte-order mark a spreadsheet may begin a UTF-8 file with.
_BOM = b'\xef\xbb\xbf'


def chunks(path, size=None):
    """
    Read a CSV time series by chunks of about ``size`` bytes: a Table each, in order.

    ``size``: :data:`CHUNK_BYTES` unless given.  What a long log's reader takes its columns
    from, chunk by chunk, so that the file's values are never held whole beside them (an hour
    at 1 kHz, 15 columns: 430 MB).  Each chunk is whole lines of the file, parsed by pandas'
    C reader on the shared threads (:func:`._parallel.ahead`: the reader lets go of the GIL),
    the next ones while the caller takes its columns from one: an hour's 685 MB, 7 joints, in
    0.9-1.1 s on two cores, against 1.5 s on one (and pandas reading it whole, all of it in
    memory at once: 1.1 s).  A file pandas cannot read as numbers is read whole, carefully, so
    that the error names the row and the column, as :func:`read` does.
    """
    import pandas

    path = str(path)
    header, separator = _header(path)
    given = 0
    try:
        for values in _parallel.ahead(lambda part: _parsed(path, separator, len(header), *part),
                                      _parts(path, size or CHUNK_BYTES)):
            given += len(values)
            yield Table(path, header, values)
    except (ValueError, pandas.errors.ParserError):
        # read carefully: what is wrong is said with its row and column, or (a NaN written)
        # the rows not given yet are, as read() gives them
        values = _careful(path, separator, header)
        if not len(values):
            raise RecordingError(f'{path} has a header but no data rows') from None
        yield Table(path, header, values[given:])
        return
    if not given:
        raise RecordingError(f'{path} has a header but no data rows')
    _give_back()


def _parts(path, size):
    """
    Yield ``(first, start, end)``: byte ranges of whole lines of the file, from its start.

    The first range holds what comes before the data (a byte-order mark, comments, the
    header) and about ``size`` bytes of data; each range ends where a line does, so that no
    line is cut.  A file whose lines do not end in a line feed (the old Mac's carriage return)
    is one range: pandas reads it as it reads it whole.
    """
    import os

    total = os.path.getsize(path)
    with open(path, 'rb') as f:
        for line in f:          # to the header: the first line neither blank nor a comment
            line = line.removeprefix(_BOM)
            if line.strip() and not line.startswith(b'#'):
                break
        start, first = min(f.tell(), total), True
        while start < total or first:
            end = min(start + size, total)
            if end < total:
                f.seek(end - 1)
                f.readline()            # to the end of the line the range's last byte is in
                end = min(f.tell(), total)
            yield first, (0 if first else start), end
            start, first = end, False


def _give_back():
    """
    Let the C library return to the system what pandas freed on the shared threads.

    glibc keeps the memory a thread frees in the thread's own arena, for that thread's next
    allocations: after an hour's parts were parsed, about 100 MB that later work did not reuse
    (the hour's identification peaked at 576 MB, against 466 MB read on one thread).
    ``malloc_trim`` returns it.  A C library without it (not glibc) is left as it is.
    """
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError, TypeError):
        pass


def _parsed(path, separator, columns, first, start, end):
    """
    Return the values ``(rows, columns)`` of the file's bytes ``[start, end)``: whole lines.

    The first range is read with its header (pandas skips a byte-order mark and comments
    before it); the others are data alone.  ValueError where a row is short of values or one
    is missing, for the careful read to name it.
    """
    import pandas

    with open(path, 'rb') as f:
        f.seek(start)
        try:
            values = _frames(_Range(f, end), separator, header=0 if first else None,
                             names=None if first else range(columns)).to_numpy(dtype=float)
        except pandas.errors.EmptyDataError:
            if first:
                raise
            return np.empty((0, columns))       # comments or blank lines alone
    if values.shape[1] != columns or np.isnan(values).any():
        raise ValueError('a row too short, or a value missing')
    return values


def rows_at_most(path, sample=1 << 20):
    """
    Return more rows than the CSV file can hold: its size over its shortest line's length.

    The shortest of the first ``sample`` bytes' lines, so that a reader can make its arrays
    once (a numeric log's lines differ by a few characters; the header and comments, longer,
    only make the bound looser).
    """
    import os

    size = os.path.getsize(path)
    with open(path, 'rb') as f:
        lines = f.read(sample).split(b'\n')[1:-1]
    shortest = min((len(line) + 1 for line in lines if line.strip()), default=2)
    return size // max(shortest, 2) + 1


def _header(path):
    """Return the header's names and the separator of a CSV file; RecordingError if empty."""
    with open(path, newline='', encoding='utf-8-sig') as f:
        first = next((line for line in f if line.strip() and not line.startswith('#')), None)
    if first is None:
        raise RecordingError(f'{path} is empty')
    separator = max(SEPARATORS, key=first.count)
    return [h.strip() for h in next(csv.reader([first], delimiter=separator))], separator


class _Range:
    """
    The bytes of an open file from where it stands to ``end``, as a file pandas reads.

    pandas' C reader reads a file a buffer at a time: a part of a file is never held whole
    beside what is parsed of it (16 MB less a part than its bytes read at once).
    """

    def __init__(self, f, end):
        self._f, self._end = f, end

    def read(self, size=-1):
        """Return up to ``size`` bytes (all that are left: negative or None), short of ``end``."""
        left = max(0, self._end - self._f.tell())
        return self._f.read(left if size is None or size < 0 else min(size, left))


def _frames(path, separator, header=0, names=None):
    """Return the frame pandas' C reader reads from ``path`` (a file's name, or a file)."""
    import pandas

    return pandas.read_csv(path, sep=separator, decimal=',' if separator == ';' else '.',
                           comment='#', header=header, names=names, dtype=np.float64,
                           engine='c', encoding='utf-8-sig', skip_blank_lines=True)


def _fast(path, separator, columns):
    """Return the values by pandas' C reader, or None where a row needs reading carefully."""
    import pandas

    try:
        frame = _frames(path, separator)
    except (ValueError, pandas.errors.ParserError):
        return None                     # a value not a number, a row too long: said below
    values = frame.to_numpy(dtype=float)
    if values.shape[1] != columns or np.isnan(values).any():
        return None                     # a row too short (or a NaN written): said below
    return values


def _careful(path, separator, header):
    """Read the values line by line; RecordingError naming the row and column of what is wrong."""
    with open(path, newline='', encoding='utf-8-sig') as f:
        lines = [line for line in f if line.strip() and not line.startswith('#')]
    rows = list(csv.reader(lines[1:], delimiter=separator))
    decimal_comma = separator == ';'
    values = np.empty((len(rows), len(header)))
    for r, row in enumerate(rows):
        if len(row) != len(header):
            raise RecordingError(f'{path}, row {r + 2}: {len(row)} values for {len(header)} '
                                 'columns')
        for c, text in enumerate(row):
            try:
                values[r, c] = float(text.replace(',', '.') if decimal_comma else text)
            except ValueError:
                raise RecordingError(f'{path}, row {r + 2}, column {header[c]}: not a number: '
                                     f'{text!r}') from None
    return values


def write(path, t, columns, fmt='%.10g'):
    """Write ``time`` and ``columns`` (a mapping of header to ``(rows,)`` arrays) to ``path``."""
    names = list(columns)
    table = np.column_stack([np.asarray(t, dtype=float)]
                            + [np.asarray(columns[n], dtype=float) for n in names])
    np.savetxt(path, table, delimiter=',', header=','.join(['time'] + names), comments='',
               fmt=fmt)


def joint_columns(joints, **fields):
    """Return the columns of ``write`` for ``(rows, n)`` arrays by field: ``<joint>.<field>``."""
    return {f'{j}.{field}': np.asarray(values)[:, i]
            for field, values in fields.items() if values is not None
            for i, j in enumerate(joints)}
