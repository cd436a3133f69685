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
            raise ValueError(f'{self.path} has a header but no data rows')

    def time(self):
        """Return the ``time`` (or ``t``) column; ValueError if there is none."""
        for name in ('time', 't'):
            if name in self.header:
                return self.values[:, self.header.index(name)]
        raise ValueError(f"{self.path}: no 'time' column (header: {', '.join(self.header)})")

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

        None if a joint lacks the column and ``required`` is false; else ValueError naming them.
        """
        index = [self._column(j, field) for j in joints]
        if any(i is None for i in index):
            if not required:
                return None
            missing = [j for j, i in zip(joints, index) if i is None]
            raise ValueError(f'{self.path}: no {field} column for joint(s) {", ".join(missing)} '
                             f'(expected <joint>.{field}; header: {", ".join(self.header)})')
        return self.values[:, index]

    def _column(self, joint, field):
        for name in (f'{joint}.{field}',) + ((joint,) if field == 'position' else ()):
            if name in self.header:
                return self.header.index(name)
        return None


def read(path):
    """Read a CSV time series: a :class:`Table`.  Errors name the file, row and column."""
    return Table(path)


#: Rows of a chunk of :func:`chunks` (a 15-column log's: 30 MB).
CHUNK_ROWS = 1 << 18


def chunks(path, rows=None):
    """
    Read a CSV time series by chunks of ``rows`` rows (:data:`CHUNK_ROWS`): a Table each.

    What a long log's reader takes its columns from, chunk by chunk, so that the file's values
    are never held whole beside them (an hour at 1 kHz, 15 columns: 430 MB).  A file pandas
    cannot read as numbers is read whole, carefully, so that the error names the row and the
    column, as :func:`read` does.
    """
    import pandas

    path = str(path)
    header, separator = _header(path)
    given = 0
    try:
        # closed however the reading ends: a reader that stops at the first chunk (a column
        # missing) leaves this generator, and pandas' file, to the collector otherwise
        with _frames(path, separator, rows or CHUNK_ROWS) as frames:
            for frame in frames:
                values = frame.to_numpy(dtype=float)
                if values.shape[1] != len(header) or np.isnan(values).any():
                    raise ValueError('a row too short, or a value missing')
                given += len(values)
                yield Table(path, header, values)
    except (ValueError, pandas.errors.ParserError):
        # read carefully: what is wrong is said with its row and column, or (a NaN written)
        # the rows not given yet are, as read() gives them
        values = _careful(path, separator, header)
        if not len(values):
            raise ValueError(f'{path} has a header but no data rows') from None
        yield Table(path, header, values[given:])
        return
    if not given:
        raise ValueError(f'{path} has a header but no data rows')


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
    """Return the header's names and the separator of a CSV file; ValueError if it is empty."""
    with open(path, newline='', encoding='utf-8-sig') as f:
        first = next((line for line in f if line.strip() and not line.startswith('#')), None)
    if first is None:
        raise ValueError(f'{path} is empty')
    separator = max(SEPARATORS, key=first.count)
    return [h.strip() for h in next(csv.reader([first], delimiter=separator))], separator


def _frames(path, separator, rows=None):
    """Return pandas' C reader of the file: a frame, or an iterator of frames of ``rows``."""
    import pandas

    return pandas.read_csv(path, sep=separator, decimal=',' if separator == ';' else '.',
                           comment='#', header=0, dtype=np.float64, engine='c',
                           encoding='utf-8-sig', skip_blank_lines=True, chunksize=rows)


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
    """Read the values line by line; ValueError naming the row and column of what is wrong."""
    with open(path, newline='', encoding='utf-8-sig') as f:
        lines = [line for line in f if line.strip() and not line.startswith('#')]
    rows = list(csv.reader(lines[1:], delimiter=separator))
    decimal_comma = separator == ';'
    values = np.empty((len(rows), len(header)))
    for r, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f'{path}, row {r + 2}: {len(row)} values for {len(header)} '
                             'columns')
        for c, text in enumerate(row):
            try:
                values[r, c] = float(text.replace(',', '.') if decimal_comma else text)
            except ValueError:
                raise ValueError(f'{path}, row {r + 2}, column {header[c]}: not a number: '
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
