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
The one JointState reader: the model's state, merged by joint name from every message.

A message in as rclpy gives it, or as a raw subscription's bytes (a driver's layout learnt once,
:class:`..wire.JointStateLayout`, and its next messages read with no message built); out, the
model's ``(q, qd, effort, stamp)``, or the reason a command may not be computed from it
(:class:`.refused.BadMessage`).  No ROS here: a message is read by its fields, and the first
message of a layout not yet learnt is deserialised by the function the node gives.
"""

from math import isfinite

import numpy as np

from .refused import BadMessage, by_name
from ..wire import JointStateLayout, STAMP


class JointStates:
    """
    The model's joint state, merged by joint name from every message on joint_states.

    An arm driver and a gripper driver may each publish their own joints (robot_state_publisher
    merges them too): each message updates the joints it names, other robots' joints are
    ignored, and every joint keeps its own stamp.  A state is served only when every joint of
    the model has been heard and none is older than ``stale_after`` (s, 0: never stale).
    """

    LAYOUTS = 4         # serialised layouts kept (read_serialized): a driver each, at most

    def __init__(self, model, stale_after=0.0, topic='joint_states', deserialize=None):
        n = model.n
        self.model = model
        self.topic = topic                  # what the messages are called in the errors
        self.deserialize = deserialize      # bytes -> JointState (read_serialized's first read)
        self.stale_after = stale_after
        self.q, self.qd, self.effort = np.zeros(n), np.zeros(n), np.zeros(n)
        self.stamp = np.zeros(n, dtype=np.int64)          # ns: header stamp, else receipt
        self.heard = np.zeros(n, dtype=bool)
        self.has_qd = np.zeros(n, dtype=bool)
        self.has_effort = np.zeros(n, dtype=bool)
        self._maps = {}             # names of a message -> _Map, cached: a driver sends the
        #                             same names every time
        self._wires = []            # the JointStateLayouts of the messages last read
        self._no_wire = set()       # names whose serialised layout this reader cannot follow
        self.forget()

    def forget(self):
        """Forget every joint's state: the next ones start afresh (a new clock)."""
        self.heard[:] = False
        self.stamp[:] = 0
        # A message naming every joint (a driver's, at 1 kHz) leaves its stamp and its having
        # velocities and efforts here, for every joint, and the arrays as they were: _settle()
        # writes them before any other reads or writes them.
        self._uniform = None
        # What the arrays above say, kept as numbers: a driver's message names every joint, and
        # then these answer without a pass over the arrays (the 1 kHz path).
        self._complete = False              # every joint heard since the last forget()
        self.newest = 0                     # stamp.max(): the newest stamp merged (ns)
        self._oldest = 0                    # stamp.min()
        self._all_qd = self._all_effort = False   # has_qd.all(), has_effort.all()

    def _settle(self):
        """Write the stamps and flags a message naming every joint left as one value."""
        if self._uniform is not None:
            self.stamp[:], self.has_qd[:], self.has_effort[:] = self._uniform
            self._uniform = None

    def _map(self, names):
        key = tuple(names)
        found = self._maps.get(key)
        if found is None:
            found = _Map(*by_name(self.model, key, what=self.topic), self.model.n, len(key))
            if len(self._maps) > 64:                       # names that keep changing
                self._maps.clear()
            self._maps[key] = found
        return found

    def read(self, msg, now_ns):
        """
        Merge ``msg``; return ``(q, qd or None, effort or None, stamp_ns)`` of the model.

        None for a message that names none of the model's joints (another robot's): it changes
        nothing, so it calls for no new command.

        Raise :class:`BadMessage` with the reason when the message is unusable (duplicated
        names, wrong lengths, non-finite values, older than the joints' last state) or when the
        merged state is not complete or fresh (a joint never heard of, or stale): no command may
        be computed without every joint.  ``qd`` (``effort``) is None unless every joint has one.
        """
        names = msg.name
        stamp = msg.header.stamp
        return self._read(self._map(names), names, msg.position, msg.velocity, msg.effort,
                          stamp.sec * 1_000_000_000 + stamp.nanosec, now_ns)

    def read_serialized(self, data, now_ns):
        """
        :meth:`read` of a JointState as its serialised bytes (a raw subscription's message).

        A driver sends the same names, frame and lengths in every message: once one such
        message has been read here, through rclpy's deserialisation, its layout is learnt
        (:class:`.wire.JointStateLayout`; the last :attr:`LAYOUTS` are kept, an arm's and a
        gripper's driver each their own), and the next ones of that layout are read from their
        bytes, with no message built: their stamp and values go through the same checks and
        merge as :meth:`read`'s.  Any other message is deserialised and read as a message;
        bytes that are not a JointState raise :class:`BadMessage` (``'malformed'``).  The
        deserialisation is the ``deserialize`` given (``bytes -> JointState``, raising
        RuntimeError, as rclpy's RMWError is, for bytes that are not one): the node's, rclpy's.
        """
        wire, stamp = self._layout(data)
        if wire is not None:
            if wire.block is not None:          # its filled arrays as the rows of one view
                values = wire.values(data)
                order = wire.map.rows           # a fresh array, in the model's order
                values = values.copy() if order is None else values.take(order, axis=1)
                # finite (see _field); else the fields' checks say which value is not
                if isfinite(sum(values.ravel().tolist())):
                    filled = len(values)
                    return self.merge(wire.map, values[0], values[1] if filled > 1 else None,
                                      values[2] if filled > 2 else None, stamp, now_ns)
            view = memoryview(data)
            position, velocity, effort = wire.slices
            return self._read(wire.map, wire.names, view[position].cast('d'),
                              view[velocity].cast('d'), view[effort].cast('d'), stamp, now_ns)
        if self.deserialize is None:
            raise TypeError('JointStates.read_serialized needs the deserialize it was not given '
                            '(bytes -> JointState: nodes.messages.deserialize_joint_state)')
        try:
            msg = self.deserialize(data)
        except RuntimeError as e:           # rclpy's RMWError: not a JointState's bytes
            raise BadMessage('malformed', f'{self.topic} message of {len(data)} bytes is not a '
                             f'JointState: {e}') from None
        self._learn(data, msg)
        return self.read(msg, now_ns)

    def _layout(self, data):
        """Return the learnt layout of ``data`` and its stamp (ns), or ``(None, 0)``."""
        for k, wire in enumerate(self._wires):
            if wire.pattern.match(data) is not None:
                if k:                       # the last read first: it comes again (front())
                    self._wires.insert(0, self._wires.pop(k))
                sec, nanosec = STAMP.unpack_from(data, 4)
                return wire, sec * 1_000_000_000 + nanosec
        return None, 0

    def front(self):
        """
        Return the layout last read, where a compiled call may read the next message, or None.

        That of a message naming every joint of the model, its filled arrays one block
        (:attr:`.wire.JointStateLayout.compiled`): the driver at 1 kHz.  A message the call
        finds of another layout, or refuses, is read by :meth:`read_serialized`, which then
        puts its layout first.  What the call accepts (in order, fresh) goes to :meth:`take`.
        """
        if self._wires:
            wire = self._wires[0]
            if wire.compiled is not None and wire.map.every:
                return wire
        return None

    def _learn(self, data, msg):
        names = tuple(msg.name)
        if names in self._no_wire:
            return
        try:
            m = self._map(names)
        except BadMessage:
            return                          # read() says why
        wire = JointStateLayout.learn(data, msg, m)
        if wire is not None:                # the newest first: an arm's and a gripper's driver
            self._wires = [wire] + self._wires[:self.LAYOUTS - 1]
            return
        if len(self._no_wire) > 64:
            self._no_wire.clear()
        self._no_wire.add(names)

    def _read(self, m, names, position, velocity, effort, stamp, now_ns):
        q = self._field(position, 'position', names, m, required=True)
        qd = self._field(velocity, 'velocity', names, m)
        effort = self._field(effort, 'effort', names, m)
        return self.merge(m, q, qd, effort, stamp, now_ns)

    def merge(self, m, q, qd, effort, stamp, now_ns):
        """
        Merge one message's values, mapped by ``m``: return what :meth:`read` returns.

        ``q, qd, effort`` (``qd, effort`` may be None): checked finite, in the model's order,
        fresh arrays that nothing writes afterwards (they are the state's, returned as they
        are).  Raises :class:`BadMessage` as :meth:`read` does.
        """
        if m.count == 0:
            return None
        joints = m.joints
        # a joint never heard of has stamp 0, so the newest stamp of the joints is their check
        if stamp and stamp < self.newest:
            self._settle()
            last = int(self.stamp[joints].max())
            if last > stamp:
                raise BadMessage('out of order',
                                 f'{self.topic} stamp {stamp * 1e-9:.6f} s is older than the '
                                 f'last one ({last * 1e-9:.6f} s): out of order')
        at = stamp or now_ns
        # The state's arrays are never written once made (they are returned, not copies of
        # them): a message naming every joint replaces them by its own, fresh from _field;
        # any other writes into copies.
        if m.every:
            self.take(q, qd, effort, at)
        else:
            self._settle()
            self.q = self.q.copy()
            self.q[joints] = q
            if qd is not None:
                self.qd = self.qd.copy()
                self.qd[joints] = qd
            if effort is not None:
                self.effort = self.effort.copy()
                self.effort[joints] = effort
            self.has_qd[joints] = qd is not None
            self.has_effort[joints] = effort is not None
            self.stamp[joints] = at
            self.newest = max(self.newest, at)
            self._oldest = int(self.stamp.min())
            self._all_qd, self._all_effort = bool(self.has_qd.all()), bool(self.has_effort.all())
            if not self._complete:
                self.heard[joints] = True
                self._complete = bool(self.heard.all())
        if not self._complete:
            missing = [self.model.joint_names[j] for j in np.flatnonzero(~self.heard)]
            raise BadMessage('missing', f'no {self.topic} yet for joints '
                             f'{", ".join(missing)}: no command until every joint is heard')
        if self.stale_after > 0 and now_ns - self._oldest > self.stale_after * 1e9:
            self._settle()
            age = now_ns - self.stamp
            old = np.flatnonzero(age > self.stale_after * 1e9)
            names = ', '.join(self.model.joint_names[j] for j in old)
            raise BadMessage('stale', f'{self.topic} of {names} is '
                             f'{age[old].max() * 1e-9:.3f} s old, more than stale_after '
                             f'({self.stale_after} s)')
        return (self.q, self.qd if self._all_qd else None,
                self.effort if self._all_effort else None, stamp)

    def take(self, q, qd, effort, stamp):
        """
        Merge a message naming every joint, checked in order and fresh: what :meth:`read` returns.

        :meth:`merge`'s own step for such a message, and what a compiled call that made its
        checks (:func:`~manipulator_dynamics.wire.command_from_bytes`) hands on: ``q, qd,
        effort`` as :meth:`merge` takes them, ``stamp`` (ns) its time.  No pass over the
        arrays: the joints' stamps and flags are left as one value (:meth:`_settle`).
        """
        self.q = q
        if qd is not None:
            self.qd = qd
        if effort is not None:
            self.effort = effort
        self._uniform = (stamp, qd is not None, effort is not None)
        self.newest = max(self.newest, stamp)
        self._oldest = stamp
        self._all_qd, self._all_effort = qd is not None, effort is not None
        if not self._complete:
            self.heard[:] = True
            self._complete = True
        return q, self.qd if self._all_qd else None, \
            self.effort if self._all_effort else None, stamp

    def _field(self, values, what, names, m, required=False):
        if len(values) == 0 and not required:
            return None
        if len(values) != len(names):
            raise BadMessage('lengths', f'{self.topic} has {len(names)} names but '
                             f'{len(values)} {what} values')
        # a fresh array (the state's, see _read), in the model's order
        a = np.array(values, dtype=float) if m.rows is None else \
            np.asarray(values, dtype=float)[m.rows]
        # a finite sum has no inf or nan in it (the cheap test); one that is not may still be
        # an overflow of finite values, or a non-finite value of a joint not ours
        if not isfinite(sum(values)) and not np.isfinite(a).all():
            bad = np.flatnonzero(~np.isfinite(a))
            joint = self.model.joint_names[m.joint_index[bad[0]]]
            raise BadMessage('non-finite', f"{self.topic} {what} of '{joint}' is {a[bad[0]]}")
        return a


class _Map:
    """A message's names against the model's joints, with what the 1 kHz path skips."""

    __slots__ = ('rows', 'joints', 'joint_index', 'count', 'every', 'gather')

    def __init__(self, rows, joints, n, given):
        self.count = len(joints)
        self.joint_index = joints           # model index of each value read
        self.every = self.count == n        # joints is then 0..n-1: whole arrays
        self.joints = slice(None) if self.every else joints
        # the message's values in the model's order; None: they already are (no copy to make)
        self.rows = None if given == n and np.array_equal(rows, np.arange(n)) else rows
        self.gather = np.ascontiguousarray(rows, dtype=np.int64)   # the same, for a kernel
