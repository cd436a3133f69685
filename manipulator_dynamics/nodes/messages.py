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

"""Messages to and from arrays, and a message refused with the reason."""

import array
import struct
import sys

import numpy as np
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String

from .._inputs import _F64
from ..names import joint_map, JointNamesError


class BadMessage(ValueError):
    """A message a node drops: ``kind`` of problem (for throttling) and the reason it logs."""

    def __init__(self, kind, reason):
        super().__init__(reason)
        self.kind = kind


def by_name(model, names, **options):
    """:func:`..names.joint_map` of ``model``'s joints; a :class:`BadMessage` if it refuses."""
    try:
        return joint_map(model.joint_names, names, **options)
    except JointNamesError as e:
        raise BadMessage(e.kind, str(e)) from None


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
            b'\x00\x01\x00\x00' + struct.pack('<III', 0, 0, n) + bytes(4), np.uint8)
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
    if wire[:4] != b'\x00\x01\x00\x00' or at < 12 or values == 0:
        return None
    head, tail = wire[:4], wire[12:at]
    padding = bytes(len(wire) - at - 8 * values)          # unset by the serialiser: zeros here
    stamp = struct.Struct('<iI')

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


def time_message(ns):
    """Make the builtin_interfaces/Time of ``ns`` nanoseconds (a stamp as the nodes keep it)."""
    from builtin_interfaces.msg import Time
    sec, nanosec = divmod(ns, 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def vector_message(values, label='joint'):
    """Make a 1-D Float64MultiArray."""
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label=label, size=len(values), stride=len(values))]
    msg.data = float64_array(values)
    return msg


def array_message(a, labels):
    """Make a Float64MultiArray of ``a``, row-major, one dimension per label (ROS layout rules)."""
    msg = Float64MultiArray()
    strides = np.cumprod(a.shape[::-1])[::-1]
    msg.layout.dim = [MultiArrayDimension(label=label, size=size, stride=int(stride))
                      for label, size, stride in zip(labels, a.shape, strides)]
    msg.data = float64_array(a.reshape(-1))
    return msg


def matrix_message(M):
    """Make a 2-D Float64MultiArray, row-major: dim[0] rows, dim[1] columns (ROS layout rules)."""
    return array_message(M, ('rows', 'cols'))


def names_message(names):
    """Make the joint order of array topics a YAML flow list in a std_msgs/String."""
    return String(data='[' + ', '.join(names) + ']')
