#!/usr/bin/env python3
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
The floor any rclpy node pays: ``joint_states`` in, a Float64MultiArray of the positions out.

    python3 benchmarks/echo_node.py [--ros-args -p report_latency:=true -p raw:=true
                                     -p depth:=100 -p entities:=20]

bench_latency.py runs it beside dynamics_node, in the same process shape (the package's
``spin``, its signal handling and executor, chosen by ``MANIPULATOR_DYNAMICS_EXECUTOR``), so
that the difference between the two is the dynamics node's own work.  It publishes on
``effort_controller/commands`` and, with ``report_latency``, ``~/command_latency`` (ms from the
receipt of each state to the return of the publication), measured as dynamics_node measures it
(:func:`manipulator_dynamics.nodes.process.with_receipt_time`).

Two floors: by default rclpy builds a JointState of each state and the echo builds its
message (what a plain rclpy node pays); with ``raw``, the state's bytes come in untouched, the
positions are read from them and their bytes go out as a serialised Float64MultiArray (what
dynamics_node itself does: no message built either way), so dynamics_node against it is its
own work alone.  ``depth``: its subscription's queue (1, the newest state; dynamics_node's is
100, its ``state_queue``), to tell what a deeper queue costs a node.  ``entities``: that many
more publishers and services (half each, never used), as a node of many topics has them
(dynamics_node makes about 22), to tell what they cost the executor per state.
"""

import struct
import time

from manipulator_dynamics.nodes.process import spin, with_receipt_time
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray


class EchoNode(Node):
    """Publish the positions of every joint state: no model, no names, no checks."""

    def __init__(self, **options):
        super().__init__('echo_node', **options)
        self.report = self.declare_parameter('report_latency', False).value
        raw = self.declare_parameter('raw', False).value
        depth = self.declare_parameter('depth', 1).value
        entities = self.declare_parameter('entities', 0).value
        from std_srvs.srv import Trigger
        self.extra = [self.create_publisher(Float64, f'~/extra_{k}', 10) if k % 2 else
                      self.create_service(Trigger, f'~/extra_{k}', lambda request, response:
                                          response) for k in range(entities)]
        self.pub = self.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
        self.latency_pub = self.create_publisher(Float64, '~/command_latency', 100)
        # sensor data, one deep by default: it answers the newest state, as dynamics_node's
        # commands do
        qos = QoSProfile(depth=depth, reliability=qos_profile_sensor_data.reliability,
                         durability=qos_profile_sensor_data.durability)
        self.create_subscription(JointState, 'joint_states', with_receipt_time(
            self.on_bytes if raw else self.on_state), qos, raw=raw)

    def on_state(self, msg, info):
        self.pub.publish(Float64MultiArray(data=msg.position))
        self.said(info)

    def on_bytes(self, data, info):
        self.pub.publish(positions_as_array(data))
        self.said(info)

    def said(self, info):
        if self.report:
            self.latency_pub.publish(Float64(data=(time.time_ns()
                                                   - info['received_timestamp']) * 1e-6))


def positions_as_array(data):
    """
    Return a serialised Float64MultiArray of the positions in a JointState's CDR ``data``.

    Little-endian CDR: the stamp, the frame's string, the names' strings (each a length, its
    bytes, padded to 4), then the positions: a count, padding to 8, the doubles.  The output:
    no dimensions, offset 0, the doubles, under the same encapsulation header.
    """
    at = 4 + 8                                        # the header, the stamp
    (length,) = struct.unpack_from('<I', data, at)
    at = _align(at + 4 + length, 4)
    (count,) = struct.unpack_from('<I', data, at)
    at += 4
    for _ in range(count):
        (length,) = struct.unpack_from('<I', data, at)
        at = _align(at + 4 + length, 4)
    (count,) = struct.unpack_from('<I', data, at)
    at = _align(at + 4, 8)
    return data[:4] + struct.pack('<III4x', 0, 0, count) + data[at:at + 8 * count]


def _align(at, size):
    """Align ``at`` (counted from the encapsulation header's end, 4 bytes in) to ``size``."""
    return 4 + (at - 4 + size - 1) // size * size


if __name__ == '__main__':
    spin(EchoNode)
