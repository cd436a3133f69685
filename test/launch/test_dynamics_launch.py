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
launch_testing test of launch/dynamics.launch.py with a URDF: the dynamics topics come.

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
URDF = os.path.join(HERE, '..', '..', 'manipulator_dynamics', 'robots', 'demo_arm.urdf')


@pytest.mark.launch_test
def generate_test_description():
    dynamics = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(HERE, '..', '..', 'launch',
                                                   'dynamics.launch.py')),
        launch_arguments={'urdf': URDF, 'mode': 'none'}.items())
    return launch.LaunchDescription([dynamics, launch_testing.actions.ReadyToTest()])


class TestDynamicsNodeStarts(unittest.TestCase):

    def test_joint_names_are_published(self):
        from rclpy.qos import DurabilityPolicy, QoSProfile
        rclpy.init()
        node = rclpy.create_node('dynamics_launch_test')
        names = []
        node.create_subscription(String, '/dynamics_node/joint_names', names.append,
                                 QoSProfile(depth=1,
                                            durability=DurabilityPolicy.TRANSIENT_LOCAL))
        try:
            end = node.get_clock().now().nanoseconds + 30 * 10 ** 9
            while not names and node.get_clock().now().nanoseconds < end:
                rclpy.spin_once(node, timeout_sec=0.1)
            self.assertTrue(names)
            self.assertIn('joint7', names[0].data)
        finally:
            node.destroy_node()
            rclpy.shutdown()


@launch_testing.post_shutdown_test()
class TestCleanShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
