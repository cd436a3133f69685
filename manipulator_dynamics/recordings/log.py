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
A log read once, whatever it is given as, and put on the robot's clock once.

:func:`read_file` reads a CSV file, a numpy archive or a rosbag2 recording
(:mod:`.formats`) into a :class:`Log`, which every entry point takes where it takes a path;
:func:`read_once` reads every path of what it is given.  Then each log is given as the use
needs it, re-timed on the robot's clock by its measured velocities where they allow it
(:func:`on_robot_clock`, :mod:`.timing`):

* :func:`read_data`: what identification fits, ``(t, q, tau)`` (or the ``(q, qd, qdd, tau)``
  arrays given as they are), one log or several, with what was done to each;
  :func:`read_recording` holds it as one :class:`Recording`, which every reader below gives
  back as it was read: an entry point reads and re-times its data once, however many choices
  and fits read it after;
* :func:`read_states`: :class:`States`, ``t, q, qd, tau`` with the measured velocities
  kept, as a momentum observer reads them.
"""

from dataclasses import dataclass
import os

import numpy as np

from . import spill, timing
from .formats import read_csv, read_npz, read_rosbag
from .samples import sample_matrix, time_series
from ..errors import RecordingError


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
            raise RecordingError(
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
        raise RecordingError(f'no such data file or recording: {path}')
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


def on_robot_clock(t, q, qd, retime=True):
    """
    Return ``(t, timing)``: the stamps on the robot's clock by its velocities, or as logged.

    :func:`.timing.retime` where ``retime`` is true (``timing`` its report: what was done, or
    why not); else the stamps as logged, ``timing`` saying so.  The one place a log's re-timing
    is decided, for every reader below.
    """
    if not retime:
        return t, {'retimed': False, 'reason': 'retime=False: the stamps as logged, the '
                   'measured velocities unused'}
    return timing.retime(t, q, qd)


@dataclass(frozen=True, eq=False)
class Recording:
    """
    What identification fits, read and put on the robot's clock once (:func:`read_recording`).

    ``data`` and ``processing`` as :func:`read_data` gave them: ``(t, q, tau)``, or
    ``(q, qd, qdd, tau)`` arrays as given, or a list of ``(t, q, tau)``; the source and the
    re-timing of each.  ``joint_names``, ``topic`` and ``retime``: how it was read.  Every
    reader gives it back as it is, not read or re-timed again; a read with another ``retime``
    or for another joint set is refused (read the data again).
    """

    data: object
    processing: dict
    joint_names: tuple
    topic: str
    retime: bool

    def read(self, model, topic, retime):
        """Return ``(data, processing)`` as read, or refuse a read it does not answer."""
        if tuple(model.joint_names) != self.joint_names:
            raise RecordingError(
                f'a recording read for the joints {", ".join(self.joint_names)}, not this '
                f'model\'s {", ".join(model.joint_names)}: read it again for this model')
        if bool(retime) != self.retime or topic != self.topic:
            raise RecordingError(f'a recording read with retime={self.retime} from '
                                 f'{self.topic!r}, asked for retime={bool(retime)} from '
                                 f'{topic!r}: read it again')
        data = list(self.data) if isinstance(self.data, list) else self.data
        return data, dict(self.processing)


def read_recording(model, data, topic='/joint_states', retime=True):
    """
    Read what identification is given once (:func:`read_data`): a :class:`Recording`.

    A Recording is returned as it is (refused where read otherwise: :meth:`Recording.read`).
    """
    if isinstance(data, Recording):
        data.read(model, topic, retime)
        return data
    read, processing = read_data(model, data, topic, retime)
    return Recording(data=read, processing=processing, joint_names=tuple(model.joint_names),
                     topic=topic, retime=bool(retime))


def read_series(model, data, topic='/joint_states', retime=True):
    """
    One log: ``(data as a tuple, processing)``, read from its file where it is one.

    ``(t, q, tau)`` of a time series (a path, a :class:`Log`, a mapping with ``t, q, tau``),
    ``(q, qd, qdd, tau)`` of a mapping or tuple of those arrays, any other tuple as given.  A
    time series with the robot's measured velocities (a mapping's ``qd``, a CSV's
    ``<joint>.velocity`` columns, a JointState's ``velocity``) is put on the robot's clock
    (:func:`on_robot_clock`); ``processing['timing']`` says what was done, or why not, and
    ``processing['source']`` the file (or recording and topic) where there is one.
    """
    processing = {}
    if isinstance(data, Recording):
        data, processing = data.read(model, topic, retime)
        if isinstance(data, list):
            raise RecordingError(f'one log asked for, a recording of {len(data)} given')
        return _series(data), processing
    data = read_once(model, data, topic)
    if isinstance(data, Log):
        data, processing = data.for_model(model), data.processing()
    if not isinstance(data, dict):
        return _series(data), processing
    if 'qdd' in data:
        return tuple(data[k] for k in ('q', 'qd', 'qdd', 'tau')), processing
    try:
        t, q, tau = (data[k] for k in ('t', 'q', 'tau'))
    except KeyError as e:
        raise RecordingError(f'a log as a mapping needs the keys t, q, tau (and qd, the '
                             f'measured velocities, if there are any): no {e}') from None
    if data.get('qd') is not None:        # checked where the re-timing reads them
        t, q, qd, tau = measured_series(model, data) if retime else (t, q, None, tau)
        t, processing['timing'] = on_robot_clock(t, q, qd, retime)
    return (t, q, tau), processing


def _series(data):
    """Return ``data`` as a tuple: one given as it is (a piece keeps what is made of it)."""
    return data if isinstance(data, tuple) else tuple(data)


def read_series_list(model, data, topic='/joint_states', retime=True):
    """Read every log of ``data`` (one, or a list) once: a list of :func:`read_series` tuples."""
    if isinstance(data, Recording):
        data = data.read(model, topic, retime)[0]
        return [_series(d) for d in (data if isinstance(data, list) else [data])]
    return [read_series(model, d, topic, retime)[0]
            for d in (data if isinstance(data, list) else [data])]


def read_time_series(model, data, topic, what, retime=True):
    """
    Read every log of ``data`` once: a list of ``(t, q, tau)`` (:func:`read_series_list`).

    Refused, saying ``what`` needs them, where one is ``(q, qd, qdd, tau)`` arrays.
    """
    logs = read_series_list(model, data, topic, retime)
    if any(len(log) != 3 for log in logs):
        raise RecordingError(f'{what} needs time series (t, q, tau), CSV files or rosbag2 '
                             'recordings, not (q, qd, qdd, tau) arrays, which are not filtered')
    return logs


#: What a list of logs may hold (:func:`read_data`): each one log, not arrays of a log.
LOG_KINDS = (str, os.PathLike, dict, tuple, Log)


def read_data(model, data, topic='/joint_states', retime=True):
    """
    Read what identification is given, once: ``(data, processing)``.

    ``data``: one log (:func:`read_series`: ``(t, q, tau)``, or ``(q, qd, qdd, tau)``
    arrays as given), or a list of logs, each a time series: a list of ``(t, q, tau)``, and
    ``processing`` with a list of each one's ``source`` and ``timing``.  A :class:`Recording`:
    what it holds.
    """
    if isinstance(data, Recording):
        return data.read(model, topic, retime)
    if isinstance(data, list) and data and all(isinstance(d, LOG_KINDS) for d in data):
        logs = [read_series(model, d, topic, retime) for d in data]
        if any(len(log) != 3 for log, _ in logs):
            raise RecordingError('several logs must each be a time series (t, q, tau), a CSV '
                                 'file, a numpy archive or a rosbag2 recording')
        return [log for log, _ in logs], {
            'source': [p.get('source', 'arrays') for _, p in logs],
            'timing': [p.get('timing') for _, p in logs]}
    return read_series(model, data, topic, retime)


@dataclass(frozen=True, eq=False)
class States:
    """
    A log as a momentum observer reads it (:func:`read_states`): the measured velocities kept.

    ``t (N,)`` in seconds, on the robot's clock where the log allowed it; ``q``, ``qd``,
    ``tau (N, n)`` in the model's joint order, checked and C-contiguous in memory (an observer
    runs over them row by row).  ``timing``: what was done to the stamps, or why not
    (:func:`on_robot_clock`); ``source``: the file, or None.  :meth:`of` holds arrays given as
    they are.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    timing: dict
    source: object = None

    @classmethod
    def of(cls, model, t, q, qd, tau):
        """Hold states given as arrays, checked (:func:`measured_series`), stamps as they are."""
        t, q, qd, tau = (np.ascontiguousarray(x) for x in measured_series(
            model, {'t': t, 'q': q, 'qd': qd, 'tau': tau}))
        return cls(t, q, qd, tau, {'retimed': False, 'reason': 'states given as arrays: '
                                   'their stamps as they are'})

    def __len__(self):
        """Return the number of states."""
        return len(self.t)


def read_states(model, data, topic='/joint_states', retime=True):
    """
    Every log of ``data`` as :class:`States`, with the robot's measured velocities.

    ``data``: a CSV file, a numpy archive or a rosbag2 recording, or a mapping with keys
    ``t, q, qd, tau``, or a list of them.  Put on the robot's clock where its velocities allow
    it and ``retime`` is true (:func:`on_robot_clock`), as :func:`read_series` does.  What a
    momentum observer reads, which needs the velocities as measured.
    """
    out = []
    for i, d in enumerate(data if isinstance(data, list) else [data]):
        d = read_once(model, d, topic)
        source = None
        if isinstance(d, Log):
            d, source = d.for_model(model), d.source
        if not isinstance(d, dict) or d.get('qd') is None:
            raise RecordingError(f"log {i + 1} has no measured velocities (every joint's "
                                 '<joint>.velocity, a JointState velocity, a qd array): '
                                 'a momentum observer reads them')
        t, q, qd, tau = measured_series(model, d, f'log {i + 1}: ')
        # in memory, row by row, whatever the reader spilled (:mod:`.spill`): an observer
        # runs over every sample in compiled loops that take rows
        held = (t, q, qd, tau)
        t, q, qd, tau = (np.array(x, order='C') if spill.is_spilled(x)
                         else np.ascontiguousarray(x) for x in held)
        spill.release(*held)
        t, timing = on_robot_clock(t, q, qd, retime)
        out.append(States(t, q, qd, tau, timing, source))
    return out


def measured_series(model, data, label=''):
    """
    Return ``(t, q, qd, tau)`` of a mapping with the measured velocities ``qd``, checked.

    The samples as :func:`.samples.time_series` checks them, ``qd`` one row per stamp (an error
    naming the log by ``label`` otherwise): what :func:`.timing.retime` takes.
    """
    t, q, tau = time_series(model, data['t'], data['q'], data['tau'])
    qd = sample_matrix(model, 'qd', data['qd'])
    if len(qd) != len(t):
        raise RecordingError(f'{label}qd has {len(qd)} samples, t {len(t)}')
    return t, q, qd, tau
