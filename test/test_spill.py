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
    from manipulator_dynamics import csvlog, robots
    from manipulator_dynamics.recordings.log import read_states
    arm = md.load_model(robots.path('demo_arm'))
    rng = np.random.default_rng(1)
    t = np.arange(3000) * 1e-3
    q, qd, tau = (rng.normal(size=(len(t), arm.n)) for _ in range(3))
    path = tmp_path / 'run.csv'
    csvlog.write(path, t, csvlog.joint_columns(arm.joint_names, position=q, velocity=qd,
                                               effort=tau))
    (t0, q0, qd0, tau0), = read_states(arm, str(path), retime=False)
    monkeypatch.setattr(spill, 'SPILL_ROWS', 100)
    (t1, q1, qd1, tau1), = read_states(arm, str(path), retime=False)
    for got, want in ((q1, q0), (qd1, qd0), (tau1, tau0)):
        assert not spill.is_spilled(got) and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(t1, t0)


@pytest.fixture(scope='module')
def arm_log():
    """Return the demo arm and 4 s of its noisy states at 1 kHz: ``(arm, t, q, qd, tau)``."""
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    from conftest import measured
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
    from conftest import write_bag
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
    write_bag(tmp_path / 'still', arm, t, q, tau)                # no velocities: none given
    assert read_rosbag(arm, tmp_path / 'still', velocity=True)['qd'] is None
