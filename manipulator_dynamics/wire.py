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
The wire format of the messages the nodes read and write: CDR bytes, without rclpy in the way.

ROS 2's middlewares send CDR, little-endian: a 4-byte encapsulation, then each field aligned to
its size from the end of it.  Every place the package reads or writes those bytes is here:

* :class:`JointStateLayout`: where a sensor_msgs/JointState's stamp and arrays lie in its bytes,
  for one driver's names, frame and lengths, learnt from a message rclpy deserialised
  (:class:`.runtime.joint_states.JointStates` reads a driver's next messages by it);
* :func:`command_from_bytes`: a JointState's bytes of a learnt layout to the effort command
  (:func:`.control.command_vector`) in one compiled call, with the layout's, the stamp's and
  the freshness' checks (dynamics_node's 1 kHz step);
* :class:`Float64Bytes`, :func:`float64_serialiser`, :func:`stamped_serialiser`: the bytes of
  the messages the nodes publish (a command, a stamped vector), checked against rclpy's own
  serialisation before they are used.

Importing it needs no ROS 2: rclpy is imported by the functions that check against it.
"""

import array
import re
import struct
import sys

import numba
from numba import njit
import numpy as np

from ._inputs import _F64
from ._jit import FLOAT, INT, ONE_STATE, OUT_VECTOR, Signature, VECTOR
from .control import command_vector

#: The encapsulation of CDR, little-endian: the first 4 bytes of every message read or written.
ENCAPSULATION = b'\x00\x01\x00\x00'
#: header.stamp (sec, nanosec), 4 bytes in: every stamped message's first field.
STAMP = struct.Struct('<iI')
#: A sequence's or a string's length.
LENGTH = struct.Struct('<I')


#: :func:`command_from_bytes`'s statuses, beside :func:`.control.command_vector`'s: the bytes
#: are not of the layout given; the state is unstamped, older than the newest one taken, or
#: stale.
NOT_THIS_LAYOUT, NOT_FRESH = -5, -6


@njit(**ONE_STATE)
def command_from_bytes(address, data, layout, block, rows, law, flags, qdd, limit, order, newest,
                       now, stale, state, tau, command):
    """
    :func:`.control.command_vector` from a joint state's CDR bytes, with the reader's checks.

    ``data``: a sensor_msgs/JointState as CDR bytes (little-endian, as ROS 2's middlewares send
    it).  ``layout (L,)``: what its first ``L`` bytes must be, each byte's value or -1 for any
    (the stamp, the frame's text, padding, the values): one driver's names and lengths, as a
    joint-state reader learnt them.  ``block = (offset, stride, filled, given)``: its first
    ``filled`` float64 arrays (position; velocity; effort) of ``given`` values each start at
    ``offset`` in ``data``, ``stride`` bytes apart, within the bytes ``layout`` covers; ``rows``
    must name one of them for each model joint.  The rest is :func:`.control.command_vector`'s.

    The state is taken only where ``data`` is of that layout (else :data:`NOT_THIS_LAYOUT`) and
    its stamp (ns) is not 0, not older than ``newest`` and not older than ``stale`` ns before
    ``now`` (``stale`` 0: never; else :data:`NOT_FRESH`): what a reader's merge checks of a
    state naming every joint.  Returns ``(status, stamp)``, the status
    :func:`.control.command_vector`'s once those hold.  Anything but OK: the caller reads the
    bytes on its general path, which says what is wrong.
    """
    offset, stride, filled, given = block[0], block[1], block[2], block[3]
    n = state.shape[1]
    # the arguments agree (no read or write beyond an array, nor beyond the bytes checked)
    if rows.shape[0] != n or not 1 <= filled <= state.shape[0] or layout.shape[0] < 12 or \
            offset + (filled - 1) * stride + 8 * given > layout.shape[0] or \
            order.shape[0] > command.shape[0]:
        return NOT_THIS_LAYOUT, 0
    for j in range(n):
        if not 0 <= rows[j] < given:
            return NOT_THIS_LAYOUT, 0
    for k in range(order.shape[0]):
        if not 0 <= order[k] < n:
            return NOT_THIS_LAYOUT, 0
    raw = np.frombuffer(data, np.uint8)
    if raw.shape[0] < layout.shape[0]:
        return NOT_THIS_LAYOUT, 0
    for i in range(layout.shape[0]):
        if layout[i] >= 0 and raw[i] != layout[i]:
            return NOT_THIS_LAYOUT, 0
    stamp = np.int64(raw[4:8].view(np.int32)[0]) * 1_000_000_000 + \
        np.int64(raw[8:12].view(np.uint32)[0])
    if stamp <= 0 or stamp < newest or (stale > 0 and now - stamp > stale):
        return NOT_FRESH, stamp
    values = np.empty((filled, given))
    for r in range(filled):
        at = offset + r * stride
        values[r] = raw[at:at + 8 * given].view(np.float64)
    return command_vector(address, values, rows, law, flags, qdd, limit, order, state, tau,
                          command), stamp


_INDEX = numba.types.Array(numba.types.int64, 1, 'C')
#: :func:`command_from_bytes` called without numba's dispatch (:class:`._jit.Signature`), on the
#: bytes rclpy hands a raw subscription.
bytes_call = Signature(
    command_from_bytes, INT, numba.types.Bytes(numba.types.uint8, 1, 'C', readonly=True),
    numba.types.Array(numba.types.int16, 1, 'C'), _INDEX, _INDEX, INT, INT, VECTOR, VECTOR,
    _INDEX, INT, INT, FLOAT, numba.types.Array(numba.types.float64, 2, 'C'), OUT_VECTOR,
    OUT_VECTOR)


class JointStateLayout:
    """
    Where a JointState's fields lie in its serialised bytes, for one names/frame/lengths layout.

    CDR, little-endian (what ROS 2's middlewares send): the encapsulation, the stamp, the frame
    and the names as length-prefixed strings, then each float64[] as its length and its values.
    Items are aligned to their size from the end of the encapsulation, and the padding bytes are
    left unset by the serialiser (any value).  ``pattern`` matches a message of this layout: its
    names exactly, its frame's and arrays' lengths, any stamp, frame text and values.  A layout
    is learnt from a message rclpy deserialised, and only when it finds that message's stamp,
    names and values where the message has them.  Where its filled arrays are one ``block``,
    ``compiled`` is the same layout as :func:`command_from_bytes`
    takes it: each byte the pattern fixes (-1 for any), and ``(offset, stride, filled, given)``.
    """

    __slots__ = ('pattern', 'names', 'map', 'slices', 'block', 'compiled')

    def values(self, data):
        """Return the filled arrays of ``data`` (of this layout, a block) as rows of one view."""
        shape, offset, strides = self.block
        return np.ndarray(shape, _F64, data, offset, strides)

    @staticmethod
    def _block(slices, given):
        """
        ``(shape, offset, strides)`` of the filled arrays as the rows of one view, or None.

        A driver fills position, position and velocity, or all three, each with one value per
        name (``given`` names): they then lie one after another at one distance (the next one's
        length and padding between them), and one view reads them all, one numpy call (a copy,
        or a ``take`` of the model's joints) where a message's arrays take one each.  Any other
        layout (velocity left empty but not effort, a field of another length) is read field by
        field.
        """
        rows = sum(1 for s in slices if s.stop > s.start)
        filled = slices[:rows]
        if rows == 0 or any(s.stop - s.start != 8 * given for s in filled) or \
                any(s.stop > s.start for s in slices[rows:]):
            return None
        stride = filled[1].start - filled[0].start if rows > 1 else 8 * given
        if any(b.start - a.start != stride for a, b in zip(filled, filled[1:])):
            return None
        return (rows, given), filled[0].start, (stride, 8)

    @classmethod
    def learn(cls, data, msg, m):
        """Learn the layout of ``data`` (deserialised as ``msg``, mapped by ``m``), or None."""
        if sys.byteorder != 'little' or data[:4] != ENCAPSULATION:
            return None
        wire = cls()
        wire.names, wire.map = tuple(msg.name), m
        parts, at = [re.escape(data[:4]), b'.{8}'], 12
        template = list(data[:4]) + [-1] * 8        # the same, byte by byte (-1: any)

        def literal(raw):
            nonlocal at
            parts.append(re.escape(raw))
            template.extend(raw)
            at += len(raw)

        def skip(count):
            nonlocal at
            if count:
                parts.append(b'.{%d}' % count)
                template.extend([-1] * count)
                at += count

        def align(size):
            skip(-(at - 4) % size)

        def string(text, wildcard=False):
            raw = text.encode() + b'\x00'
            align(4)
            literal(LENGTH.pack(len(raw)))
            if wildcard:
                skip(len(raw))
            else:
                literal(raw)

        def doubles(values):
            align(4)
            literal(LENGTH.pack(len(values)))
            if not len(values):
                return slice(0, 0)
            align(8)
            start = at
            skip(8 * len(values))
            return slice(start, at)

        string(msg.header.frame_id, wildcard=True)
        align(4)
        literal(LENGTH.pack(len(msg.name)))
        for name in msg.name:
            string(name)
        wire.slices = tuple(doubles(values) for values in (msg.position, msg.velocity,
                                                           msg.effort))
        wire.block = cls._block(wire.slices, len(msg.name))
        wire.pattern = re.compile(b''.join(parts), re.DOTALL)
        wire.compiled = None
        if wire.block is not None:
            (rows, given), offset, (stride, _) = wire.block
            wire.compiled = (np.array(template, dtype=np.int16),
                             np.array([offset, stride, rows, given], dtype=np.int64))
        # the bytes found where this layout puts them against the message's (bytes: NaN too)
        view = memoryview(data)
        found = [STAMP.unpack_from(data, 4)] + [bytes(view[at]) for at in wire.slices]
        stamp = msg.header.stamp
        given = [(stamp.sec, stamp.nanosec)] + [
            np.asarray(values, dtype=np.float64).tobytes()
            for values in (msg.position, msg.velocity, msg.effort)]
        if wire.block is not None:          # and the block: the filled arrays, in their order
            found.append(np.ndarray(wire.block[0], _F64, data, *wire.block[1:]).tobytes())
            given.append(b''.join(given[1:1 + wire.block[0][0]]))
        if wire.pattern.match(data) is None or found != given:
            return None
        return wire


def float64_array(values):
    """
    Return ``values`` as the ``array.array('d')`` a float64[] message field holds.

    A message's setter takes one as it is; a list it checks element by element (type and range:
    about 2 us for 7 numbers, a third of what a 1 kHz node's callback spends on its command).
    """
    return array.array('d', np.ascontiguousarray(values, dtype=float).tobytes())


def float64_serialiser(n):
    """
    Return a :class:`Float64Bytes` for ``n`` values (a data-only Float64MultiArray), or None.

    rclpy publishes bytes as they are (``publish_raw``): no conversion of a Python message to C
    and no serialisation by the middleware, about half of what the publication of a 7-joint
    command costs (2.6 against 4.9 us in a warm loop).  The bytes are CDR, little-endian (what
    ROS 2's middlewares send): the encapsulation, an empty layout, the data's length, padding
    (zeros) to the first value's 8-byte alignment, and the values as they lie in memory.  That
    is checked here against rclpy's own serialisation; a middleware or a machine where it
    differs gets None (publish the message).
    """
    from rclpy.serialization import deserialize_message, serialize_message
    from std_msgs.msg import Float64MultiArray

    if sys.byteorder != 'little':
        return None
    serialiser = Float64Bytes(n)
    probe = np.pi * np.arange(1, n + 1, dtype=np.float64)
    wire = serialiser(probe)
    reference = serialize_message(Float64MultiArray(data=float64_array(probe)))
    if n and (len(reference) != len(wire) or reference[:16] != wire[:16]
              or reference[20:] != wire[20:]):
        return None
    if list(deserialize_message(wire, Float64MultiArray).data) != probe.tolist():
        return None
    return serialiser


class Float64Bytes:
    """
    ``n`` float64 values -> a data-only Float64MultiArray's bytes (:func:`float64_serialiser`).

    Called with the values, it returns their message's bytes.  ``values`` is where they lie in
    those bytes, an aligned float64 array: a compiled call writes a command there and
    :meth:`written` is then its message, with no copy of the values in Python.
    """

    __slots__ = ('values', '_wire')
    _PREFIX = 20        # the encapsulation, the layout (no dimensions, offset 0), the length, 0s

    def __init__(self, n):
        # the message starts 4 bytes into an array of float64, so that its values (20 bytes
        # in) are aligned where numpy and numba read them
        memory = np.zeros(n + 3)
        self._wire = memory.view(np.uint8)[4:]
        self._wire[:self._PREFIX] = np.frombuffer(
            ENCAPSULATION + struct.pack('<III', 0, 0, n) + bytes(4), np.uint8)
        self.values = memory[3:]

    def __call__(self, values):
        """Return the bytes of the message of ``values`` (``n`` numbers; else ValueError)."""
        if values.dtype != _F64 or values.shape != self.values.shape:
            values = np.asarray(values, dtype=_F64).reshape(self.values.shape)   # no broadcast
        self.values[:] = values
        return self._wire.tobytes()

    def written(self):
        """Return the bytes of the message of the values written into :attr:`values`."""
        return self._wire.tobytes()


def stamped_serialiser(prototype, values, set_values):
    """
    Return ``(stamp_ns, values) -> bytes`` for messages like ``prototype``, or None.

    ``prototype``: a message whose header comes first, with ``values`` float64 numbers that
    ``set_values(msg, values)`` puts in it (a JointState's efforts, a WrenchStamped's force and
    torque) and everything else fixed (names, frame).  Its bytes are rclpy's own, taken once
    with a probe for the values, which finds where they lie: each message is then those bytes
    with the stamp and the values written in (rclpy publishes bytes as they are: no conversion
    of a Python message, no serialisation).  Checked here by a round trip through rclpy; a
    middleware or machine where it fails gets None (publish the message).
    """
    import copy

    from rclpy.serialization import deserialize_message, serialize_message

    if sys.byteorder != 'little':
        return None
    probe = np.pi * np.arange(1, values + 1) + 1e3
    msg = copy.deepcopy(prototype)
    set_values(msg, probe)
    wire = serialize_message(msg)
    at = wire.find(probe.tobytes())
    if wire[:4] != ENCAPSULATION or at < 12 or values == 0:
        return None
    head, tail = wire[:4], wire[12:at]
    padding = bytes(len(wire) - at - 8 * values)          # unset by the serialiser: zeros here
    stamp = STAMP

    def serialise(stamp_ns, x):
        sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
        return head + stamp.pack(sec, nanosec) + tail + \
            np.ascontiguousarray(x, dtype=_F64).tobytes() + padding

    check = np.e * np.arange(1, values + 1)
    set_values(msg, check)
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1234, 567_890_123
    if deserialize_message(serialise(1_234_567_890_123, check), type(prototype)) != msg:
        return None
    return serialise
