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

"""The suite's hooks and shared fixtures; the helpers the tests import are in helpers.py."""

import os

from helpers import ERD, erd, PIN_ROBOTS, ROOT, with_random_joint_dynamics
import pytest

#: The folder of launch_testing files.
LAUNCH_TESTS = os.path.join(ROOT, 'test', 'launch')
#: The name launch_testing registers its pytest plugin under (its setup.py's pytest11 entry).
LAUNCH_TESTING_PLUGIN = 'launch_testing'


def pytest_ignore_collect(collection_path, config):
    """
    Collect test/launch only where launch_testing's pytest plugin is loaded (ROS 2 installed).

    The plugin (its entry point is named ``launch_testing``) starts each file's launch
    description before its tests, as ``launch_test`` does (test_ros2_launch.py runs them so on
    the installed package); collected as plain modules they would run without it.  The plugin
    loads on pytest 7 and 8 (the test extra's pin), not on 9.
    """
    if str(collection_path) == LAUNCH_TESTS and not config.pluginmanager.hasplugin(
            LAUNCH_TESTING_PLUGIN):
        return True
    return None


try:                                   # the ROS fixtures (processes, client), where rclpy is
    import rclpy  # noqa: F401
    pytest_plugins = ['rosutil']
except ImportError:
    pass


@pytest.fixture(scope='module')
def arm():
    """Load the demo arm as its URDF has it: no rotor inertia, no friction."""
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    return md.load_model(robots.path('demo_arm'))


def _rigid_robot(name):
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    if name == 'demo arm':
        return md.load_model(robots.path('demo_arm'))
    if name == 'demo arm + gripper (tree, prismatic)':
        return md.load_model(robots.path('demo_arm_gripper'))
    if name == 'random tree':
        return md.load_model(robots.random_urdf(11, n=10, branching=0.5, prismatic=0.3))
    if name == 'random chain':
        return md.load_model(robots.random_urdf(12, n=7, branching=0.0, prismatic=0.3))
    if name == 'armature and friction':
        return with_random_joint_dynamics(md.load_model(robots.random_urdf(13, n=6)), 13)
    if name == 'friction offsets and smooth laws':
        return with_random_joint_dynamics(
            md.load_model(robots.random_urdf(14, n=6, branching=0.3, prismatic=0.3)), 14, True)
    if ERD is None:
        pytest.skip('example-robot-data is not installed (dev.py test installs it); the other '
                    'robots of this test run here')
    return md.load_model(erd(PIN_ROBOTS['panda']))


#: Robots of the algorithm tests, which need no oracle: chains and trees, revolute, prismatic and
#: continuous joints, rotor inertia and friction, and a real arm.
RIGID_ROBOTS = ('demo arm', 'demo arm + gripper (tree, prismatic)', 'random tree',
                'random chain', 'armature and friction', 'friction offsets and smooth laws',
                'panda (example-robot-data)')


@pytest.fixture(scope='module', params=RIGID_ROBOTS)
def rigid(request):
    """Load each robot of the oracle-free checks of the algorithms."""
    return _rigid_robot(request.param)
