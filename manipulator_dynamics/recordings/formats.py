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
The file formats of a log: CSV (:mod:`.csvlog`'s convention), numpy archives and rosbag2.

Each reader matches the file's joints to the model's by name and reads the motor side through
the model's transmissions where the joint side is not logged (:func:`joint_field`).  A file
that lacks what is needed is refused naming the columns, arrays or topic, and where the joints
it has are the root's side of the robot, how to load the robot as recorded
(:func:`suggest_tip_links`).
"""

import importlib
import zipfile

import numpy as np

from . import csvlog, spill
from ..errors import RecordingError
from ..names import joint_map, JointNamesError


def read_csv(model, path, *, velocity=False):
    """
    Read ``(t, q, tau)`` from a CSV file (:mod:`.csvlog`'s convention).

    Columns: ``time`` (seconds), and for every joint of the model ``<joint>.position`` and
    ``<joint>.effort``, or, for the joints the model's transmissions drive, their motors'
    ``<joint>.motor_position`` and ``<joint>.motor_effort`` (:func:`joint_field`); other columns
    are ignored.  With ``velocity``: a mapping with keys ``t, q, tau`` and ``qd``, the
    ``<joint>.velocity`` (or ``motor_velocity``) columns, None unless every joint has one.
    """
    # by chunks into arrays made once: the file's values are never held whole beside the
    # columns taken from them, nor the columns twice (a list of chunks, then joined); the
    # arrays are made for more rows than the file can have, and what is never written costs
    # no memory (the pages are never touched); a long log's (N, n) columns are written to a
    # file (:mod:`.spill`), each chunk's memory let go of once written
    columns, filled = None, 0
    try:
        for table in csvlog.chunks(path):
            try:
                chunk = {'t': table.time(), 'q': joint_field(model, table, 'position'),
                         'tau': joint_field(model, table, 'effort')}
            except RecordingError as e:
                present = [j for j in model.joint_names if not table.missing([j], 'position')
                           and not table.missing([j], 'effort')]
                raise RecordingError(str(e) + suggest_tip_links(model, present)) from None
            chunk['qd'] = joint_field(model, table, 'velocity', required=False) \
                if velocity else None
            rows = len(chunk['t'])
            if columns is None:
                room = max(csvlog.rows_at_most(path), rows)
                columns = {k: None if v is None else spill.stamps(room) if v.ndim == 1
                           else spill.columns(room, v.shape[1]) for k, v in chunk.items()}
            elif filled + rows > len(columns['t']):   # more rows than the file's size said
                columns = {k: None if v is None else np.resize(v, (2 * (filled + rows),)
                                                               + v.shape[1:])
                           for k, v in columns.items()}
            for k, v in chunk.items():
                if columns[k] is not None:
                    spill.write(columns[k], filled, v)     # a long log's: by its file
            spill.release(*columns.values())
            filled += rows
    except ValueError as e:
        raise RecordingError(str(e)) from None
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
    when a joint has neither and ``required`` is false; else :class:`RecordingError`
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
            raise RecordingError(f'{table.path}: {j}.{motor} cannot be read: '
                                 f'{drives.unusable[j]}')
        block = next((b for b in blocks if j in b), None)
        wanted.append(f'{j}.{field}' if block is None else f'{j}.{field} (or ' + ', '.join(
            f'{b}.{motor}' for b in block) + ' through its transmission)')
    hint = ''
    if field == 'effort' and len(table.missing(model.joint_names, 'current')) < n:
        hint = ('; <joint>.current columns are read through the transmissions of the joints '
                'they name (a reduction and a torque_constant)')
    raise RecordingError(f'{table.path} lacks the columns {", ".join(wanted)} (expected a '
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
        raise RecordingError(
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
        raise RecordingError(str(e)) from None
    missing = table.missing(model.joint_names, 'current')
    if missing:
        raise RecordingError(f'{path} lacks the columns '
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
    keys ``t, q, tau`` and ``qd`` (None where the archive has none).  A long log's ``(N,
    columns)`` arrays are read from the archive a chunk at a time into a file
    (:mod:`.spill`), the columns of the model's joints alone.
    """
    try:
        with np.load(path, allow_pickle=False) as archive:
            headers = {key: _npy_header(archive, key) for key in archive.files}
            missing = [key for key in ('t', 'q', 'tau') if key not in headers]
            if missing:
                raise RecordingError(
                    f'{path} has no array {", ".join(missing)} (arrays: '
                    f'{", ".join(sorted(headers)) or "none"}; expected t, q, tau, optionally qd '
                    'and joints)')
            fields = [key for key in ('q', 'tau', 'qd') if key in headers]
            for key in fields:
                if len(headers[key][0]) != 2:
                    raise RecordingError(f'{path}: {key} must be (samples, joints), got '
                                         f'shape {headers[key][0]}')
            rows = None
            if 'joints' in headers:
                names = [str(j) for j in archive['joints'].reshape(-1)]
                try:
                    rows = joint_map(model.joint_names, names, what=f'{path} (its joints)',
                                     every=True).rows
                except JointNamesError as e:
                    raise RecordingError(str(e) + suggest_tip_links(
                        model, [j for j in model.joint_names if j in names])) from None
                for key in fields:
                    if headers[key][0][1] != len(names):
                        raise RecordingError(f'{path}: {key} has {headers[key][0][1]} '
                                             f'columns for {len(names)} joints')
            t = archive['t'].reshape(-1) if len(headers['t'][0]) != 1 else _npz_columns(
                archive, 't', ((headers['t'][0][0], 1),) + headers['t'][1:], None)[:, 0]
            columns = {key: _npz_columns(archive, key, headers[key], rows) for key in fields}
    except RecordingError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise RecordingError(f'{path} is not a readable numpy archive: {e}') from None
    q, tau = columns['q'], columns['tau']
    if not velocity:
        return t, q, tau
    return {'t': t, 'q': q, 'tau': tau, 'qd': columns.get('qd')}


#: The ``.npy`` formats whose header numpy reads publicly, by version.
_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0}


def _npy_header(archive, key):
    """Return ``(shape, fortran order, dtype)`` of the archive's array ``key``, not reading it."""
    with archive.zip.open(key + '.npy') as f:
        version = np.lib.format.read_magic(f)
        if version in _HEADERS:
            return _HEADERS[version](f)
    a = archive[key]                                # a newer format: read whole
    return a.shape, False, a.dtype


def _read(f, size):
    """Return ``size`` bytes of ``f``; ValueError where the array ends before them."""
    data = f.read(size)
    if len(data) != size:
        raise ValueError(f'an array ends {size - len(data)} bytes early')
    return data


def _npz_columns(archive, key, header, rows):
    """
    Return the archive's ``(N, m)`` array ``key``, its columns ``rows`` (every one if None).

    A long one (:data:`.spill.SPILL_ROWS`) is read a chunk at a time into a file
    (:func:`.spill.columns`), never whole in memory; a short one as numpy reads it.
    """
    (N, m), fortran, dtype = header
    take = list(range(m)) if rows is None else list(rows)
    if N < spill.SPILL_ROWS or dtype.hasobject:
        a = archive[key].reshape(N, m)
        return a if rows is None else a[:, take]
    out = spill.columns(N, len(take))
    chunk, size = spill.CHUNK, dtype.itemsize
    with archive.zip.open(key + '.npy') as f:
        version = np.lib.format.read_magic(f)
        if version not in _HEADERS:                 # a newer format: as numpy reads it
            return archive[key].reshape(N, m)[:, take]
        _HEADERS[version](f)
        if fortran:                             # column after column, each a chunk at a time
            for c in range(m):
                for start in range(0, N, chunk):
                    k = min(chunk, N - start)
                    block = np.frombuffer(_read(f, k * size), dtype)
                    if c in take:
                        spill.write(out[:, take.index(c)], start, block)
                    spill.release(out)
        else:
            for start in range(0, N, chunk):
                k = min(chunk, N - start)
                block = np.frombuffer(_read(f, k * m * size), dtype).reshape(k, m)
                spill.write(out, start, block[:, take])
                spill.release(out)
    return out


def read_rosbag(model, path, topic='/joint_states', *, velocity=False, reader='auto'):
    """
    Read ``(t, q, tau)`` from the sensor_msgs/JointState messages of a rosbag2 recording.

    Joints are matched by name (other robots' joints are ignored); time is the header stamp, or
    the recording time when the stamp is zero.  Messages without every joint of the model, or
    without efforts, are skipped.  With ``velocity``: a mapping with keys ``t, q, tau`` and
    ``qd``, the messages' velocities, None unless every message kept has them.  ``reader``:
    ``'rosbag2_py'`` (ROS 2's own, ``ros-<distro>-rosbag2-py``), ``'rosbags'`` (the pure
    Python reader, ``pip install rosbags``), or ``'auto'``: ROS 2's where it is installed,
    else rosbags.  Both give the same arrays.
    """
    count, messages, close = _joint_states(path, topic, reader)
    try:
        # by chunks into arrays made once, a long recording's in a file (:mod:`.spill`): a
        # message's values as Python lists cost 40 times their size
        log = _Rows(model.n, count)
        seen, maps = set(), {}
        for stamp, msg in messages:
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
            log.add(header if header > 0 else stamp * 1e-9, [msg.position[i] for i in idx],
                    [msg.effort[i] for i in idx],
                    [msg.velocity[i] for i in idx] if len(msg.velocity) == len(names)
                    else None)
    finally:
        close()
    if not len(log):
        missing = [j for j in model.joint_names if j not in seen]
        raise RecordingError(
            f'no message on {topic} has positions and efforts of every joint of the model'
            + (f' (never seen: {", ".join(missing)})' if missing else ' (efforts missing)')
            + suggest_tip_links(model, [j for j in model.joint_names if j in seen]))
    t, q, tau, qd = log.in_time()
    if not velocity:
        return t, q, tau
    return {'t': t, 'q': q, 'tau': tau, 'qd': qd}


#: The rosbag2 readers :func:`read_rosbag` can use, in the order ``'auto'`` tries them.
ROSBAG_READERS = ('rosbag2_py', 'rosbags')


def _joint_states(path, topic, reader):
    """
    Open ``path``: return ``(count, messages, close)``, the JointStates on ``topic``.

    ``messages`` yields ``(recording time ns, message)``; ``count`` is how many the recording
    says it holds (the arrays' size to start with).
    """
    if reader not in ('auto',) + ROSBAG_READERS:
        raise ValueError(f"reader must be 'auto' or one of {', '.join(ROSBAG_READERS)}, "
                         f'got {reader!r}')
    tried = ROSBAG_READERS if reader == 'auto' else (reader,)
    for name in tried:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        return {'rosbag2_py': _by_rosbag2_py, 'rosbags': _by_rosbags}[name](path, topic)
    raise RecordingError(
        f'{path}: reading a rosbag2 recording needs '
        + ' or '.join(_READER_FROM[name] for name in tried) + ', and '
        + ('neither is' if len(tried) > 1 else 'it is not') + ' importable here')


#: Where each rosbag2 reader comes from, as a missing one's error says it.
_READER_FROM = {'rosbag2_py': 'rosbag2_py (a sourced ROS 2 installation: ros-<distro>-rosbag2-py)',
                'rosbags': 'rosbags (pip install rosbags, or pip install .[rosbag])'}


def _no_topic(path, topic, topics):
    listed = ', '.join(sorted(topics)) or 'none'
    return RecordingError(f'{path} has no topic {topic} (topics: {listed})')


def _by_rosbags(path, topic):
    from pathlib import Path

    from rosbags.highlevel import AnyReader
    from rosbags.typesys import get_typestore, Stores

    try:
        reader = AnyReader([Path(path)], default_typestore=get_typestore(Stores.ROS2_HUMBLE))
        reader.open()
    except Exception as e:  # noqa: B902 - rosbags raises its own error types
        raise RecordingError(f'{path} is not a readable rosbag2 recording: {e}') from None
    connections = [c for c in reader.connections if c.topic == topic]
    if not connections:
        reader.close()
        raise _no_topic(path, topic, {c.topic for c in reader.connections})

    def messages():
        for connection, stamp, raw in reader.messages(connections=connections):
            yield stamp, reader.deserialize(raw, connection.msgtype)
    return sum(max(c.msgcount, 0) for c in connections), messages(), reader.close


def _by_rosbag2_py(path, topic):
    from rclpy.serialization import deserialize_message
    import rosbag2_py
    from sensor_msgs.msg import JointState

    reader = rosbag2_py.SequentialReader()
    try:
        reader.open(rosbag2_py.StorageOptions(uri=str(path), storage_id=''),
                    rosbag2_py.ConverterOptions('', ''))
    except Exception as e:  # noqa: B902 - rosbag2_py raises RuntimeError and its own
        raise RecordingError(f'{path} is not a readable rosbag2 recording: {e}') from None
    topics = {t.name: t.type for t in reader.get_all_topics_and_types()}
    if topic not in topics:
        raise _no_topic(path, topic, topics)
    count = sum(max(t.message_count, 0) for t in reader.get_metadata().topics_with_message_count
                if t.topic_metadata.name == topic)
    reader.set_filter(rosbag2_py.StorageFilter(topics=[topic]))

    def messages():
        while reader.has_next():
            _, raw, stamp = reader.read_next()
            yield stamp, deserialize_message(raw, JointState)
    return count, messages(), lambda: None


class _Rows:
    """
    A recording's samples as they come: stamps, positions, efforts and velocities, ``n`` each.

    Gathered :data:`.spill.CHUNK` at a time and written into arrays made once for ``rows``
    samples (a long recording's in a file, :func:`.spill.columns`); more than that grows them.
    """

    def __init__(self, n, rows):
        rows = max(rows, 1)
        self.t = spill.stamps(rows)
        self.columns = [spill.columns(rows, n) for _ in range(3)]     # q, tau, qd
        self.pending, self.filled, self.velocities = [], 0, True

    def __len__(self):
        """Return the samples added."""
        return self.filled + len(self.pending)

    def add(self, t, q, tau, qd):
        """Add one sample; ``qd`` None where it has no velocities (then none are given)."""
        self.velocities = self.velocities and qd is not None
        # once a sample has none, the velocities are not given: q holds their place
        self.pending.append((t, q, tau, qd if self.velocities else q))
        if len(self.pending) == spill.CHUNK:
            self._write()

    def _write(self):
        a, b = self.filled, self.filled + len(self.pending)
        if b > len(self.t):                                 # more than the recording said
            self.t = np.resize(self.t, 2 * b)
            self.columns = [np.resize(x, (2 * b, x.shape[1])) for x in self.columns]
        self.t[a:b] = [p[0] for p in self.pending]
        for k, x in enumerate(self.columns):
            x[a:b] = [p[k + 1] for p in self.pending]
            spill.release(x, self.t)
        self.pending, self.filled = [], b

    def in_time(self):
        """Return ``(t, q, tau, qd)`` in the order of their stamps; ``qd`` None if missing."""
        self._write()
        n, t = self.filled, self.t[:self.filled]
        q, tau, qd = (x[:n] for x in self.columns)
        if len(spill.intervals(t, lambda dt: np.flatnonzero(dt < 0)[:1])):   # sorted
            order = np.argsort(t, kind='stable')
            t, q, tau, qd = (_gathered(x, order) for x in (t, q, tau, qd))
        return t, q, tau, (qd if self.velocities else None)


def _gathered(x, order):
    """Return ``x[order]``: for a spilled ``x``, into another file, a chunk at a time."""
    if not spill.is_spilled(x):
        return x[order]
    out = spill.stamps(len(order)) if x.ndim == 1 else spill.columns(len(order), x.shape[1])
    for start in range(0, len(order), spill.CHUNK):
        out[start:start + spill.CHUNK] = x[order[start:start + spill.CHUNK]]
        spill.release(x, out)
    return out


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
