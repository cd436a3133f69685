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
What the launch_testing tests of launch/ share: a file launched, topics heard, exit codes.

Each test_*_launch.py imports it (its folder is put on ``sys.path`` first: ``launch_test``
loads a test file by its path, with no folder of it on the path).
"""

import os
import time
import unittest

import launch
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
import launch_testing.actions
import launch_testing.asserts
import rclpy

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')


def launched(file, **arguments):
    """Return the test's description: ``launch/<file>`` with ``arguments``, then ReadyToTest."""
    included = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(ROOT, 'launch', file)),
        launch_arguments=arguments.items())
    return launch.LaunchDescription([included, launch_testing.actions.ReadyToTest()])


def heard(name, subscriptions, enough, seconds):
    """
    Return the messages a node ``name`` hears, one list per subscription, once ``enough``.

    ``subscriptions``: ``(message type, topic, QoS)`` each; ``enough(*lists)`` ends the wait
    early, else it ends after ``seconds``.  rclpy is started and shut down here.
    """
    rclpy.init()
    node = rclpy.create_node(name)
    lists = [[] for _ in subscriptions]
    for (msg_type, topic, qos), into in zip(subscriptions, lists):
        node.create_subscription(msg_type, topic, into.append, qos)
    try:
        end = time.monotonic() + seconds
        while not enough(*lists) and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        node.destroy_node()
        rclpy.shutdown()
    return lists


@launch_testing.post_shutdown_test()
class TestCleanShutdown(unittest.TestCase):
    """Every process the launch started exited with code 0 (a test file imports this class)."""

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
