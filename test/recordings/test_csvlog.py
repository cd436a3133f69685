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

"""The one CSV convention (csvlog.py): what one command writes, every other reads."""

import os
import re

from helpers import ROOT
import manipulator_dynamics as md
from manipulator_dynamics import cli
from manipulator_dynamics.identification.excitation import read_trajectory_csv
from manipulator_dynamics.recordings import csvlog
from manipulator_dynamics.recordings.log import read_states
import numpy as np
import pytest

TWO_LINK = os.path.join(ROOT, 'config', 'flexible_two_link.yaml')


def two_link_motion(path):
    """Write a 2-link move as ``excitation --output`` writes motions: positions, velocities..."""
    t = np.arange(0.0, 0.6, 1e-3)
    s = np.clip(t / 0.2, 0, 1)
    q = np.column_stack([0.5, 1.0]) * (10 * s**3 - 15 * s**4 + 6 * s**5)[:, None]
    qd = np.gradient(q, t, axis=0)
    csvlog.write(path, t, csvlog.joint_columns(('joint2', 'joint1'), position=q[:, ::-1],
                                               velocity=qd[:, ::-1], acceleration=0 * q))
    return t, q


def test_a_motion_written_for_identification_feeds_the_flexible_command(tmp_path, capsys):
    """
    The ``excitation --output`` layout is what ``flexible`` reads.

    ``<joint>.position/.velocity/.acceleration``, any joint order: ``flexible`` used to refuse
    every column but time and bare joint names.
    """
    t, q = two_link_motion(tmp_path / 'motion.csv')
    assert cli.main(['flexible', TWO_LINK, str(tmp_path / 'motion.csv')]) == 0
    assert 'peak |tau| flexible' in capsys.readouterr().out
    names, t2, q2, qd2, qdd2 = read_trajectory_csv(tmp_path / 'motion.csv')
    assert names == ['joint2', 'joint1'] and qdd2 is not None
    np.testing.assert_allclose(q2[:, ::-1], q, rtol=1e-9, atol=1e-12)


def test_columns_by_name_in_any_order_bare_names_as_positions(tmp_path):
    path = tmp_path / 'log.csv'
    path.write_text('# a comment\njoint2,extra,time,joint1.position,joint1.effort\n'
                    '2,9,0.0,1,5\n4,9,0.1,3,6\n')
    table = csvlog.read(path)
    np.testing.assert_array_equal(table.time(), [0.0, 0.1])
    np.testing.assert_array_equal(table.field(['joint1', 'joint2'], 'position'),
                                  [[1, 2], [3, 4]])
    assert table.field(['joint1', 'joint2'], 'effort', required=False) is None
    assert table.missing(['joint1', 'joint2'], 'effort') == ['joint2']


@pytest.mark.parametrize('text, message', [
    ('', 'is empty'),
    ('time,joint1\n', 'has a header but no data rows'),
    ('time,joint1\n0,1\n0.1\n', 'row 3: 1 values for 2 columns'),
    ('time,joint1\n0,one\n', "row 2, column joint1: not a number: 'one'"),
    ('clock,joint1\n0,1\n', "no 'time' column (header: clock, joint1)"),
])
def test_what_is_wrong_is_named(tmp_path, text, message):
    path = tmp_path / 'bad.csv'
    path.write_text(text)
    with pytest.raises(md.RecordingError) as raised:
        csvlog.read(path).time()
    assert message in str(raised.value)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize('text', [
    '\ufefftime,joint1.position,joint1.effort\n0.0,1.5,5\n0.1,3,-6\n',
    'time;joint1.position;joint1.effort\r\n0,0;1,5;5\r\n0,1;3;-6\r\n',
    'time\tjoint1.position\tjoint1.effort\n0.0\t1.5\t5\n0.1\t3\t-6\n',
], ids=['byte-order mark', 'semicolons and decimal commas', 'tabs'])
def test_what_spreadsheets_and_loggers_write_is_read(tmp_path, text):
    """A UTF-8 byte-order mark, a ``;`` or tab separator: the same table as the plain CSV."""
    path = tmp_path / 'log.csv'
    path.write_bytes(text.encode('utf-8'))
    table = csvlog.read(path)
    np.testing.assert_array_equal(table.time(), [0.0, 0.1])
    np.testing.assert_array_equal(table.field(['joint1'], 'position')[:, 0], [1.5, 3.0])
    np.testing.assert_array_equal(table.field(['joint1'], 'effort')[:, 0], [5.0, -6.0])


def test_a_missing_field_names_the_joints(tmp_path):
    path = tmp_path / 'log.csv'
    path.write_text('time,joint1.position\n0,1\n')
    with pytest.raises(md.RecordingError, match=r'no effort column for joint\(s\) joint1, joint2'):
        csvlog.read(path).field(['joint1', 'joint2'], 'effort')


def _layouts(rows=150, seed=3):
    """Return a log's lines as spreadsheets and loggers write them, and its values."""
    rng = np.random.default_rng(seed)
    drawn = np.column_stack([np.arange(rows) * 1e-3, rng.normal(size=(rows, 3)) * 10.0 ** rng.
                             integers(-3, 4, size=(rows, 3))])
    lines = [','.join(f'{v:.10g}' for v in row) for row in drawn]
    values = np.array([[float(v) for v in line.split(',')] for line in lines])
    header = 'time,joint1.position,joint1.effort,joint2.position'
    plain = [header] + lines
    commented = ['# logged by hand', '', header] + [
        line if r % 37 else line + '\n# a note\n' for r, line in enumerate(lines)]
    return values, {
        'plain': '\n'.join(plain) + '\n',
        'no newline at the end': '\n'.join(plain),
        'byte-order mark, comments and blank lines': '\ufeff' + '\n'.join(commented) + '\n\n',
        'semicolons, decimal commas, CRLF': '\r\n'.join(
            line.replace(',', ';') if r == 0 else line.replace(',', ';').replace('.', ',')
            for r, line in enumerate(plain)) + '\r\n',
        'tabs': '\n'.join(line.replace(',', '\t') for line in plain) + '\n',
        'old Mac line ends': '\r'.join(plain) + '\r',
    }


@pytest.mark.parametrize('layout', list(_layouts()[1]))
def test_a_file_read_by_parts_on_threads_is_the_file_read_whole(tmp_path, layout, monkeypatch):
    """
    :func:`.csvlog.chunks` parses byte ranges of the file on threads: the rows read whole.

    Parts of 1 byte (a line each), of 300 bytes and of 4 kB, on one and two threads: every row
    once, in order, as pandas reads the whole file, whatever the layout (comments between the
    rows, a byte-order mark, CRLF, the old Mac's carriage returns, no newline at the end).
    """
    from manipulator_dynamics import _parallel
    values, texts = _layouts()
    path = tmp_path / 'log.csv'
    path.write_bytes(texts[layout].encode('utf-8'))
    whole = csvlog.read(path).values
    np.testing.assert_array_equal(whole, values)
    for threads in (1, 2):
        monkeypatch.setattr(_parallel, '_threads', threads)
        for size in (1, 300, 4096):
            parts = [p.values for p in csvlog.chunks(path, size)]
            if size == 1 and layout != 'old Mac line ends':
                assert len(parts) >= len(values)       # a line a part
            np.testing.assert_array_equal(np.concatenate(parts), whole)


@pytest.mark.parametrize('text, words', [
    ('time,joint1.position\n0,one\n', "row 2, column joint1.position: not a number: 'one'"),
    ('time,joint1.position,joint1.effort\n0,1,2\n0.1,1,2\n', 'joint2'),
], ids=['a value', 'a joint'])
def test_every_refusal_of_a_log_is_a_recording_error(arm, tmp_path, text, words):
    """
    A log refused is a RecordingError, read for identification or for contact alike.

    It is an IdentificationError (and a ValueError) too: a caller of identify catches both.
    """
    path = tmp_path / 'log.csv'
    path.write_text(text)
    for read in (lambda: md.identify(arm, path), lambda: md.read_once(arm, path),
                 lambda: read_states(arm, path)):
        with pytest.raises(md.RecordingError, match=re.escape(words)):
            read()
    assert issubclass(md.RecordingError, md.IdentificationError)
    assert issubclass(md.RecordingError, ValueError)
