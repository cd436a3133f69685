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
import sys
import unittest

import pytest

launch_testing = pytest.importorskip('launch_testing', reason='launch_testing comes with a ROS 2 '
                                     'installation, not from PyPI')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_checks import heard, launched, ROOT, TestCleanShutdown  # noqa: E402, F401, I100
from manipulator_dynamics.nodes.qos import LATCHED  # noqa: E402, I100
from std_msgs.msg import String  # noqa: E402, I100

CONFIG = os.path.join(ROOT, 'config', 'flexible_two_link.yaml')


@pytest.mark.launch_test
def generate_test_description():
    return launched('flexible.launch.py', arm_config=CONFIG)


class TestFlexibleNodeStarts(unittest.TestCase):

    def test_link_names_are_published(self):
        names, = heard('flexible_launch_test',
                       [(String, '/flexible_trajectory_node/link_names', LATCHED)],
                       lambda names: names, 60)
        self.assertTrue(names)
        self.assertEqual(names[0].data, '[link1, link2]')
