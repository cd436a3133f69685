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
launch_testing test of launch/flexible.launch.py: the node starts on a flexible arm config.

Runs where ROS 2 is installed (``launch_test``); skipped without launch_testing.
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
from std_msgs.msg import String  # noqa: E402, I100

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, '..', '..', 'config', 'flexible_two_link.yaml')


@pytest.mark.launch_test
def generate_test_description():
    flexible = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(HERE, '..', '..', 'launch',
                                                   'flexible.launch.py')),
        launch_arguments={'arm_config': CONFIG}.items())
    return launch.LaunchDescription([flexible, launch_testing.actions.ReadyToTest()])


class TestFlexibleNodeStarts(unittest.TestCase):

    def test_link_names_are_published(self):
        from rclpy.qos import DurabilityPolicy, QoSProfile
        rclpy.init()
        node = rclpy.create_node('flexible_launch_test')
        names = []
        node.create_subscription(String, '/flexible_trajectory_node/link_names', names.append,
                                 QoSProfile(depth=1,
                                            durability=DurabilityPolicy.TRANSIENT_LOCAL))
        try:
            end = node.get_clock().now().nanoseconds + 60 * 10 ** 9
            while not names and node.get_clock().now().nanoseconds < end:
                rclpy.spin_once(node, timeout_sec=0.1)
            self.assertTrue(names)
            self.assertEqual(names[0].data, '[link1, link2]')
        finally:
            node.destroy_node()
            rclpy.shutdown()


@launch_testing.post_shutdown_test()
class TestCleanShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
