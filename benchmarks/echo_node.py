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

    python3 benchmarks/echo_node.py [--ros-args -p report_latency:=true]

bench_latency.py runs it beside dynamics_node, in the same process shape (the package's
``spin``, its signal handling and executor, chosen by ``MANIPULATOR_DYNAMICS_EXECUTOR``), so
that the difference between the two is the dynamics node's own work.  It publishes on
``effort_controller/commands`` and, with ``report_latency``, ``~/command_latency`` (ms from the
receipt of each state to the return of the publication), measured as dynamics_node measures it
(:func:`manipulator_dynamics.nodes.process.with_receipt_time`).
"""

import time

from manipulator_dynamics.nodes.process import spin, with_receipt_time
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray


class EchoNode(Node):
    """Publish the positions of every joint state: no model, no names, no checks."""

    def __init__(self):
        super().__init__('echo_node')
        self.report = self.declare_parameter('report_latency', False).value
        self.pub = self.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
        self.latency_pub = self.create_publisher(Float64, '~/command_latency', 100)
        # sensor data, one deep: it answers the newest state, as dynamics_node's commands do
        qos = QoSProfile(depth=1, reliability=qos_profile_sensor_data.reliability,
                         durability=qos_profile_sensor_data.durability)
        self.create_subscription(JointState, 'joint_states', with_receipt_time(self.on_state), qos)

    def on_state(self, msg, info):
        self.pub.publish(Float64MultiArray(data=msg.position))
        if self.report:
            self.latency_pub.publish(Float64(data=(time.time_ns()
                                                   - info['received_timestamp']) * 1e-6))


if __name__ == '__main__':
    spin(EchoNode)
