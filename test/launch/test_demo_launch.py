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
import sys
import unittest

import pytest

launch_testing = pytest.importorskip('launch_testing', reason='launch_testing comes with a ROS 2 '
                                     'installation, not from PyPI')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_checks import heard, launched, TestCleanShutdown  # noqa: E402, F401, I100
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64MultiArray  # noqa: E402, I100


@pytest.mark.launch_test
def generate_test_description():
    return launched('demo.launch.py')


class TestDemoRuns(unittest.TestCase):

    def test_joint_states_and_commands_flow(self):
        states, commands = heard(
            'demo_launch_test', [(JointState, '/joint_states', 10),
                                 (Float64MultiArray, '/effort_controller/commands', 10)],
            lambda states, commands: len(states) >= 100 and len(commands) >= 100, 30)
        self.assertGreaterEqual(len(states), 100)
        self.assertGreaterEqual(len(commands), 100)
