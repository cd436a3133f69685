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

"""The node's clock as the stamps are read against: simulated under use_sim_time, or not."""

import time

import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from manipulator_dynamics.nodes.process import clock_ns  # noqa: E402, I100
import rclpy  # noqa: E402

SECOND = 1_000_000_000


def test_the_stamps_clock_is_the_nodes_simulated_or_not(ros):
    """clock_ns reads the node's clock as its now() does: /clock under use_sim_time."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rosgraph_msgs.msg import Clock

    wall = rclpy.create_node('wall_clock_test', context=ros)
    wall_now = clock_ns(wall)
    assert abs(wall_now() - time.time_ns()) < SECOND
    # use_sim_time set while the node runs, and unset: followed both ways (no /clock heard: 0)
    wall.set_parameters([Parameter('use_sim_time', value=True)])
    assert wall_now() == wall.get_clock().now().nanoseconds == 0
    wall.set_parameters([Parameter('use_sim_time', value=False)])
    assert abs(wall_now() - time.time_ns()) < SECOND
    node = rclpy.create_node('sim_clock_test', context=ros,
                             parameter_overrides=[Parameter('use_sim_time', value=True)])
    executor = SingleThreadedExecutor(context=ros)
    executor.add_node(node)
    pub = node.create_publisher(Clock, '/clock', 10)
    now = clock_ns(node)
    try:
        deadline = time.monotonic() + 30
        while node.get_clock().now().nanoseconds != 42 * SECOND + 5:
            assert time.monotonic() < deadline, 'the node never heard /clock'
            msg = Clock()
            msg.clock.sec, msg.clock.nanosec = 42, 5
            pub.publish(msg)
            executor.spin_once(timeout_sec=0.05)
        assert now() == 42 * SECOND + 5
    finally:
        executor.shutdown()
        node.destroy_node()
        wall.destroy_node()
