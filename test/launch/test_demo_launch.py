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
launch_testing test of launch/demo.launch.py: starts, the loop runs, shuts down cleanly.

Runs where ROS 2 is installed: ``launch_test test/launch/test_demo_launch.py`` (colcon test runs
it too).  Without launch_testing, pytest skips it (and test_nodes_*.py cover the same scenarios).
"""

import os
import unittest

import pytest

launch_testing = pytest.importorskip('launch_testing', reason='launch_testing comes with a ROS 2 '
                                     'installation, not from PyPI')
import launch  # noqa: E402, I100
from launch.actions import IncludeLaunchDescription  # noqa: E402, I100
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402, I100
import launch_testing.actions  # noqa: E402, I100
import launch_testing.asserts  # noqa: E402, I100
import rclpy  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64MultiArray  # noqa: E402, I100

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.launch_test
def generate_test_description():
    demo = IncludeLaunchDescription(PythonLaunchDescriptionSource(
        os.path.join(HERE, '..', '..', 'launch', 'demo.launch.py')))
    return launch.LaunchDescription([demo, launch_testing.actions.ReadyToTest()])


class TestDemoRuns(unittest.TestCase):

    def test_joint_states_and_commands_flow(self):
        rclpy.init()
        node = rclpy.create_node('demo_launch_test')
        states, commands = [], []
        node.create_subscription(JointState, '/joint_states', states.append, 10)
        node.create_subscription(Float64MultiArray, '/effort_controller/commands',
                                 commands.append, 10)
        try:
            end = node.get_clock().now().nanoseconds + 30 * 10 ** 9
            while (len(states) < 100 or len(commands) < 100) and \
                    node.get_clock().now().nanoseconds < end:
                rclpy.spin_once(node, timeout_sec=0.1)
            self.assertGreaterEqual(len(states), 100)
            self.assertGreaterEqual(len(commands), 100)
        finally:
            node.destroy_node()
            rclpy.shutdown()


@launch_testing.post_shutdown_test()
class TestCleanShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
