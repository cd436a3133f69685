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

"""A long log's columns in a file (:mod:`manipulator_dynamics.recordings.spill`)."""

import errno
import os

from manipulator_dynamics.errors import IdentificationError
from manipulator_dynamics.recordings import spill
import numpy as np
import pytest


def resident_file_mb():
    """
    Return the process's resident pages of mapped files, MB (Linux's ``RssFile``).

    With ``RssShmem``: a temporary folder in memory (tmpfs) maps its files as shared memory.
    """
    with open('/proc/self/status') as f:
        found = {k: int(v.split()[0]) for k, v in (line.split(':', 1) for line in f)
                 if k in ('RssFile', 'RssShmem')}
    if 'RssFile' not in found:
        pytest.skip('this system does not report RssFile in /proc/self/status (Linux does)')
    return sum(found.values()) / 1024.0


def test_long_columns_go_to_a_file_short_ones_stay_in_memory():
    short = spill.columns(spill.SPILL_ROWS - 1, 3)
    assert not spill.is_spilled(short) and isinstance(short, np.ndarray)
    long = spill.columns(spill.SPILL_ROWS, 3)
    assert spill.is_spilled(long) and long.shape == (spill.SPILL_ROWS, 3)
    assert long[:, 1].flags.c_contiguous                 # a column is read alone
    assert spill.is_spilled(long[10:20]) and spill.is_spilled(np.asarray(long)[:, 2])
    assert spill.is_spilled(spill.columns(10, 2, spill=True))
    assert not spill.is_spilled(spill.columns(spill.SPILL_ROWS, 2, spill=False))
    assert not spill.is_spilled(np.zeros(3)) and not spill.is_spilled(None)


def test_released_pages_leave_memory_and_keep_their_values():
    """Written and read, 64 MB of a spilled array are resident; released, they are not."""
    if not hasattr(os, 'posix_fallocate') or spill._DONTNEED is None:
        pytest.skip('madvise(MADV_DONTNEED) is a Linux call: elsewhere release does nothing')
    rows = (64 << 20) // 8 // 4
    x = spill.columns(rows, 4, spill=True)
    values = np.arange(rows * 4, dtype=float).reshape(4, rows).T
    before = resident_file_mb()
    x[:] = values
    touched = resident_file_mb()
    assert touched - before > 48
    spill.release(x[5:7])                                # any view lets go of the whole map
    assert resident_file_mb() - before < 8
    for start, block in spill.by_chunks(x, rows=rows // 16):
        np.testing.assert_array_equal(block, values[start:start + rows // 16])
    assert resident_file_mb() - before < 8               # each chunk let go of after use


def test_no_room_on_the_disk_keeps_the_log_in_memory(monkeypatch):
    """
    A temporary folder too full to reserve the file: the columns stay in memory.

    One whose file system cannot reserve (no ``fallocate`` there) is used unreserved.
    """
    if not hasattr(os, 'posix_fallocate'):
        pytest.skip('posix_fallocate is a POSIX call this system lacks')

    def full(fd, offset, size):
        raise OSError(errno.ENOSPC, 'No space left on device')
    monkeypatch.setattr(os, 'posix_fallocate', full)
    assert spill.spilled(100, 3) is None
    x = spill.columns(spill.SPILL_ROWS, 2)
    assert not spill.is_spilled(x) and x.shape == (spill.SPILL_ROWS, 2)

    def unsupported(fd, offset, size):
        raise OSError(errno.EOPNOTSUPP, 'Operation not supported')
    monkeypatch.setattr(os, 'posix_fallocate', unsupported)      # a file system that cannot
    x = spill.spilled(100, 3)                                     # reserve: spilled unreserved
    assert spill.is_spilled(x)
    x[:] = 1.0
    assert x.sum() == 300.0


def test_states_for_an_observer_come_in_memory_row_by_row(tmp_path, monkeypatch):
    """
    ``read_states`` of a spilled CSV: the values as read in memory, C-contiguous.

    A momentum observer's compiled loops take rows; the identification reads the spilled
    columns by chunks, the observer does not.
    """
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    from manipulator_dynamics.recordings import csvlog
    from manipulator_dynamics.recordings.log import read_states
    arm = md.load_model(robots.path('demo_arm'))
    rng = np.random.default_rng(1)
    t = np.arange(3000) * 1e-3
    q, qd, tau = (rng.normal(size=(len(t), arm.n)) for _ in range(3))
    path = tmp_path / 'run.csv'
    csvlog.write(path, t, csvlog.joint_columns(arm.joint_names, position=q, velocity=qd,
                                               effort=tau))
    first, = read_states(arm, str(path), retime=False)
    t0, q0, qd0, tau0 = first.t, first.q, first.qd, first.tau
    assert first.source == str(path) and not first.timing['retimed']
    monkeypatch.setattr(spill, 'SPILL_ROWS', 100)
    second, = read_states(arm, str(path), retime=False)
    t1, q1, qd1, tau1 = second.t, second.q, second.qd, second.tau
    for got, want in ((t1, t0), (q1, q0), (qd1, qd0), (tau1, tau0)):
        assert not spill.is_spilled(got) and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(t1, t0)


@pytest.fixture(scope='module')
def arm_log():
    """Return the demo arm and 4 s of its noisy states at 1 kHz: ``(arm, t, q, qd, tau)``."""
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    from helpers import measured
    arm = md.load_model(robots.path('demo_arm'))
    t, _, qd, _, tau, q = measured(arm, seed=3, seconds=4.0, rate=1000.0)
    return arm, t, q, qd, tau


@pytest.mark.parametrize('save, fortran', [(np.savez, False), (np.savez_compressed, False),
                                           (np.savez, True)],
                         ids=['savez', 'compressed', 'column-major arrays'])
def test_a_long_numpy_archive_is_read_a_chunk_at_a_time(arm_log, tmp_path, monkeypatch, save,
                                                        fortran):
    """
    A numpy archive's long arrays are read from the zip by chunks into a file: as numpy reads.

    The columns by name (shuffled, another robot's joint among them), the archive written as
    ``np.savez`` and ``np.savez_compressed`` write it, row- or column-major.
    """
    from manipulator_dynamics.recordings.formats import read_npz
    arm, t, q, qd, tau = arm_log
    order = np.random.default_rng(0).permutation(arm.n)
    names = [arm.joint_names[j] for j in order] + ['gripper_joint']

    def columns(a):
        out = np.column_stack([a[:, order], np.ones(len(a))])
        return np.asfortranarray(out) if fortran else out
    path = tmp_path / 'log.npz'
    save(path, t=t, q=columns(q), tau=columns(tau), qd=columns(qd), joints=np.array(names))
    in_memory = read_npz(arm, str(path), velocity=True)
    monkeypatch.setattr(spill, 'SPILL_ROWS', 1000)
    monkeypatch.setattr(spill, 'CHUNK', 700)                    # chunks end inside rows
    streamed = read_npz(arm, str(path), velocity=True)
    for key, want in (('q', q), ('tau', tau), ('qd', qd)):
        assert spill.is_spilled(streamed[key]) and not spill.is_spilled(in_memory[key])
        np.testing.assert_array_equal(streamed[key], want)
        np.testing.assert_array_equal(in_memory[key], want)
    np.testing.assert_array_equal(streamed['t'], t)
    assert spill.is_spilled(streamed['t']) and not spill.is_spilled(in_memory['t'])
    cut = tmp_path / 'cut.npz'                                   # an archive cut short
    cut.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2])
    with pytest.raises(IdentificationError, match='is not a readable numpy archive'):
        read_npz(arm, str(cut))


def test_a_long_rosbag_is_read_a_chunk_at_a_time_and_put_in_time(arm_log, tmp_path,
                                                                 monkeypatch):
    """
    A rosbag2 recording's messages are gathered by chunks into a file: as read in memory.

    Two messages written out of their stamps' order are put back in it, through the file too.
    """
    pytest.importorskip('rosbags', reason='rosbags reads rosbag2 without ROS: pip install rosbags')
    from helpers import write_bag
    from manipulator_dynamics.recordings.formats import read_rosbag
    arm, t, q, qd, tau = arm_log
    swapped = np.arange(len(t))
    swapped[[1500, 1501]] = swapped[[1501, 1500]]
    write_bag(tmp_path / 'bag', arm, t[swapped], q[swapped], tau[swapped], qd=qd[swapped])
    in_memory = read_rosbag(arm, tmp_path / 'bag', velocity=True)
    monkeypatch.setattr(spill, 'SPILL_ROWS', 1000)
    monkeypatch.setattr(spill, 'CHUNK', 700)
    streamed = read_rosbag(arm, tmp_path / 'bag', velocity=True)
    for key, want in (('q', q), ('tau', tau), ('qd', qd)):
        assert spill.is_spilled(streamed[key]) and not spill.is_spilled(in_memory[key])
        np.testing.assert_array_equal(streamed[key], want)
        np.testing.assert_array_equal(in_memory[key], want)
    np.testing.assert_allclose(streamed['t'], t + 100, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(streamed['t'], in_memory['t'])
    assert spill.is_spilled(streamed['t']) and not spill.is_spilled(in_memory['t'])
    write_bag(tmp_path / 'still', arm, t, q, tau)                # no velocities: none given
    assert read_rosbag(arm, tmp_path / 'still', velocity=True)['qd'] is None


@pytest.mark.parametrize('spilled', [False, True], ids=['in memory', 'spilled'])
def test_rows_are_taken_a_chunk_at_a_time_by_index_or_by_mask(monkeypatch, spilled):
    """``take``: ``x[rows]`` for ascending indices or a mask, across chunk seams, in order."""
    monkeypatch.setattr(spill, 'CHUNK', 64)
    rng = np.random.default_rng(4)
    values = rng.normal(size=(1000, 3))
    x = spill.columns(len(values), 3, spill=spilled)
    x[:] = values
    rows = np.sort(rng.choice(len(x), 300, replace=False))
    mask = rng.random(len(x)) < 0.7
    for taken in (rows, mask, rows[:0], np.array([0, 63, 64, 999])):
        np.testing.assert_array_equal(spill.take(x, taken), values[taken])
    monkeypatch.setattr(spill, 'SPILL_ROWS', 500)             # as many rows as a long log's
    assert spill.is_spilled(spill.take(x, mask)) == spilled
    assert not spill.is_spilled(spill.take(x, rows))


def test_rows_taken_far_apart_leave_no_pages_behind():
    """
    Rows far apart, taken from a spilled array, leave under 8 MB of it resident.

    A row in every 500 of 64 MB: without ``take``, the system's read-around leaves most of the
    file resident (more than 16 MB of it).
    """
    if not hasattr(os, 'posix_fallocate') or spill._DONTNEED is None:
        pytest.skip('madvise(MADV_DONTNEED) is a Linux call: elsewhere release does nothing')
    rows = (64 << 20) // 8 // 4
    x = spill.columns(rows, 4, spill=True)
    x[:] = 1.0
    spill.release(x)
    every = np.arange(0, rows, 500)
    before = resident_file_mb()
    np.testing.assert_array_equal(spill.take(x, every), np.ones((len(every), 4)))
    assert resident_file_mb() - before < 8
    assert x[every].sum() == 4 * len(every)
    assert resident_file_mb() - before > 16                  # what take avoids
    spill.release(x)


def test_the_stamps_are_checked_alike_in_one_chunk_or_many(monkeypatch):
    """
    ``check_stamps`` by chunks keeps the samples one chunk keeps, and reports the same.

    Repeats, missed samples and gaps fall across the seams; the jitter is equal to rounding.
    """
    from manipulator_dynamics.identification.logs import check_stamps
    rng = np.random.default_rng(7)
    t = np.cumsum(rng.normal(1e-3, 1e-5, 5000))
    q, tau = rng.normal(size=(5000, 2)), rng.normal(size=(5000, 2))
    for k in (99, 100, 101, 1999, 3000):                  # seams at every 100th sample
        q[k], tau[k] = q[k - 1], tau[k - 1]                  # a logger's repeat
    t[[400, 401, 2500]] = t[[399, 400, 2499]]               # stamps repeated
    t = np.maximum.accumulate(t)
    t[1200:] += 0.5                                          # a gap at a seam
    t[3350:] += 0.002                                        # missed samples
    whole = check_stamps(t, q, tau, cutoff=2.0)
    monkeypatch.setattr(spill, 'CHUNK', 100)
    keep, report = check_stamps(t, q, tau, cutoff=2.0)
    np.testing.assert_array_equal(keep, whole[0])
    assert report['repeated'] == whole[1]['repeated'] == 7         # 5 samples, 2 stamps
    assert report['gaps'] == whole[1]['gaps'] and len(report['gaps']) == 1
    assert report['skipped'] == whole[1]['skipped'] >= 1
    assert report['step_s'] == whole[1]['step_s']
    assert report['jitter_ms'] == pytest.approx(whole[1]['jitter_ms'], rel=1e-12)
    with pytest.raises(IdentificationError, match='1 of them not repeats'):
        check_stamps(t[:3] * 0, q[:3] * 0, tau[:3] * 0)


def test_a_spilled_logs_stretches_stay_in_the_file(monkeypatch):
    """
    A long log's stretches are held in files, as the log is, and those of a piece of it too.

    Its repeats dropped and its jittering stamps put on a grid, never whole in memory; the
    values as the log's in memory give them.  A piece shorter than what spills alone (a
    cross-validation's third, a ninth of its choice of cutoff) is a long log's all the same:
    an hour's fold held its two thirds on their grids in memory, 270 MB.
    """
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    from manipulator_dynamics.identification.logs import stretches
    arm = md.load_model(robots.path('demo_arm'))
    rng = np.random.default_rng(8)
    N = 3000
    t = np.arange(N) * 1e-3 + rng.normal(0, 3e-5, N)         # jitter: put on a grid
    q, tau = rng.normal(size=(N, arm.n)), rng.normal(size=(N, arm.n))
    q[700], tau[700] = q[699], tau[699]
    want, _, _, resampled, _ = stretches(arm, [(t, q, tau)])
    assert resampled
    monkeypatch.setattr(spill, 'SPILL_ROWS', 1000)
    monkeypatch.setattr(spill, 'CHUNK', 256)
    st, sq, stau = spill.stamps(N), spill.columns(N, arm.n), spill.columns(N, arm.n)
    st[:], sq[:], stau[:] = t, q, tau
    got = stretches(arm, [(st, sq, stau)])[0]
    assert len(got) == len(want)
    for (t0, q0, tau0), (t1, q1, tau1) in zip(want, got):
        assert spill.is_spilled(t1) and spill.is_spilled(q1) and spill.is_spilled(tau1)
        np.testing.assert_array_equal(t1, t0)
        np.testing.assert_array_equal(q1, q0)
        np.testing.assert_array_equal(tau1, tau0)
    piece = slice(1000, 1900)                           # fewer rows than SPILL_ROWS
    want = stretches(arm, [(t[piece], q[piece], tau[piece])])[0]
    got = stretches(arm, [(st[piece], sq[piece], stau[piece])])[0]
    assert len(got) == len(want) == 1
    (t0, q0, tau0), (t1, q1, tau1) = want[0], got[0]
    assert len(t1) < spill.SPILL_ROWS
    assert spill.is_spilled(t1) and spill.is_spilled(q1) and spill.is_spilled(tau1)
    np.testing.assert_array_equal(t1, t0)
    np.testing.assert_array_equal(q1, q0)
    np.testing.assert_array_equal(tau1, tau0)


def test_stamps_going_back_are_named_across_chunk_seams(monkeypatch):
    """A log's stamps checked a chunk at a time: the first stamp that goes back, by its index."""
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    from manipulator_dynamics.recordings.samples import time_series
    arm = md.load_model(robots.path('demo_arm'))
    monkeypatch.setattr(spill, 'CHUNK', 100)
    q = np.zeros((1000, arm.n))
    for back in (100, 101, 555, 999):
        t = np.arange(1000) * 1e-3
        t[back] = t[back - 1] - 1e-4
        with pytest.raises(IdentificationError, match=fr'must not decrease \(sample {back},'):
            time_series(arm, t, q, q)
    t = np.arange(1000) * 1e-3
    t[[300, 700]] = [t[299] - 1.0, np.nan]                 # not finite: said first
    with pytest.raises(IdentificationError, match='must be finite'):
        time_series(arm, t, q, q)
    assert time_series(arm, np.arange(1000) * 1e-3, q, q)[0][-1] == 0.999


def test_rows_written_to_a_spilled_array_go_by_its_file_and_its_descriptor_with_it():
    """
    :func:`.spill.write` puts rows in a spilled array's file, not through the process's pages.

    64 MB of columns, written a chunk at a time: every value as numpy's assignment gives, and
    under 8 MB of the file resident (through the map: all 64 MB, until released).  Stamps (a
    column of one), one column of several (a numpy archive's column after column) and an
    array in memory are set alike.  The file's descriptor is closed with the array.
    """
    if not hasattr(os, 'pwrite') or spill._DONTNEED is None:
        pytest.skip('pwrite and madvise are POSIX and Linux calls: elsewhere write assigns')
    rows = (64 << 20) // 8 // 4
    values = np.random.default_rng(1).normal(size=(rows, 4))
    opened = len(os.listdir('/proc/self/fd'))
    x, one = spill.columns(rows, 4, True), spill.columns(rows, 4, True)
    t = spill.stamps(rows, True)
    spill.release(x, t, one)
    before = resident_file_mb()
    for start in range(0, rows, 100_000):
        spill.write(x, start, values[start:start + 100_000])
        spill.write(t, start, values[start:start + 100_000, 2])
        spill.write(one[:, 1], start, values[start:start + 100_000, 1])
    assert resident_file_mb() - before < 8
    np.testing.assert_array_equal(x, values)
    np.testing.assert_array_equal(t, values[:, 2])
    np.testing.assert_array_equal(one[:, 1], values[:, 1])
    for wrong, at in ((values[:10, :3], 0), (values[:10], rows - 5)):    # not the rows' shape
        with pytest.raises(ValueError, match='could not write'):
            spill.write(x, at, wrong)
    np.testing.assert_array_equal(x, values)
    memory = np.zeros((10, 4))
    spill.write(memory, 3, values[:2])
    np.testing.assert_array_equal(memory[3:5], values[:2])
    assert not memory[:3].any() and not memory[5:].any()
    del x, t, one
    import gc
    gc.collect()
    assert len(os.listdir('/proc/self/fd')) == opened
