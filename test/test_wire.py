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
The wire format's compiled reader: a JointState's bytes taken only of its layout, in order, fresh.

Without ROS 2: the bytes are made here as CDR lays them out (the node tests hold the layouts
learnt from rclpy's own messages, test/runtime/test_joint_states.py).
"""

import struct

import manipulator_dynamics as md
from manipulator_dynamics import control, robots, wire
import numpy as np


def test_command_from_bytes_takes_a_state_only_of_its_layout_in_order_and_fresh():
    """The bytes' checks of the compiled 1 kHz step: layout, stamp, freshness; then the law."""
    from manipulator_dynamics.rigid.kinematics import kernel_model
    from manipulator_dynamics.rigid.status import NON_FINITE, OK
    model = md.load_model(robots.path('demo_arm'))
    n, given = model.n, model.n + 1
    rows = np.arange(given)[::-1][:n].copy()         # the message's joints reversed, one more
    order = np.arange(n)
    q = np.linspace(-1, 1, n)
    qd = np.linspace(0.5, -0.5, n)
    # a message: 4 bytes of header, the stamp (sec, nanosec), 20 fixed bytes, 4 of padding,
    # then two arrays of `given` values with 8 bytes (a length and padding) between them
    fixed = bytes(range(100, 120))
    offset, stride = 4 + 8 + 20 + 4, 8 * given + 8
    layout = np.array([0, 1, 0, 0] + [-1] * 8 + list(fixed) + [-1] * (4 + stride + 8 * given),
                      dtype=np.int16)                 # any stamp, padding and values
    block = np.array([offset, stride, 2, given])

    def message(stamp, values, header=b'\x00\x01\x00\x00', middle=fixed):
        sec, nanosec = divmod(stamp, 1_000_000_000)
        return header + struct.pack('<iI', sec, nanosec) + middle + b'\xaa' * 4 + \
            values[0].tobytes() + b'\xbb' * 8 + values[1].tobytes()

    values = np.zeros((2, given))
    values[0, rows], values[1, rows] = q, qd
    values[:, 0] = np.nan                             # not a model joint's: never read
    now = 10_000_000_000

    def call(data, newest=0, stale=0.0, limit=np.inf):
        state, tau, command = np.empty((2, n)), np.empty(n), np.empty(n)
        status, stamp = wire.bytes_call.call(
            kernel_model(model).address, data, layout, block, rows, control.GRAVITY, 0,
            np.zeros(n), np.full(n, limit), order, newest, now, stale, state, tau, command)
        return status, stamp, state, command

    stamp = now - 3_000_000
    status, got, state, command = call(message(stamp, values))
    assert (status, got) == (OK, stamp)
    np.testing.assert_array_equal(state, [q, qd])
    np.testing.assert_allclose(command, md.gravity_torques(model, q), rtol=1e-12, atol=1e-12)
    # another layout: a fixed byte, the header, or too short; padding and the stamp are any
    other = bytearray(fixed)
    other[7] ^= 1
    for data in (message(stamp, values, middle=bytes(other)),
                 message(stamp, values, header=b'\x00\x00\x00\x00'),
                 message(stamp, values)[:len(layout) - 1]):
        assert call(data)[0] == wire.NOT_THIS_LAYOUT
    # arguments that disagree: declined before any byte is read
    data = message(stamp, values)
    state, tau, command = np.empty((2, n)), np.empty(n), np.empty(n)
    for changed in ({'rows': rows[:-1]}, {'rows': np.where(rows == 3, given, rows)},
                    {'block': np.array([offset, stride, 3, given])},
                    {'block': np.array([offset + 8, stride, 2, given])},
                    {'order': np.r_[order, 0]}, {'order': np.where(order == 2, n, order)}):
        arguments = {'rows': rows, 'block': block, 'order': order, **changed}
        status, _ = wire.bytes_call.call(
            kernel_model(model).address, data, layout, arguments['block'], arguments['rows'],
            control.GRAVITY, 0, np.zeros(n), np.full(n, np.inf), arguments['order'], 0, now,
            0.0, state, tau, command)
        assert status == wire.NOT_THIS_LAYOUT, changed
    # unstamped, older than the newest taken, older than stale before now: not fresh
    assert call(message(0, values))[0] == wire.NOT_FRESH
    assert call(message(stamp, values), newest=stamp + 1)[0] == wire.NOT_FRESH
    assert call(message(stamp, values), newest=stamp)[0] == OK
    assert call(message(stamp, values), stale=2.9e6)[0] == wire.NOT_FRESH
    assert call(message(stamp, values), stale=3.0e6)[0] == OK
    # then command_vector's own: a value not finite, an effort beyond its limit
    bad = values.copy()
    bad[1, rows[2]] = np.inf
    assert call(message(stamp, bad))[0] == NON_FINITE
    assert call(message(stamp, values), limit=1e-9)[0] == control.BEYOND_LIMIT
