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
Launch files, read as files: what they start is this package's, every argument is documented.

They run for real, under ``ros2 launch`` and ``launch_test`` against a colcon install, in
test_ros2_launch.py.
"""

import ast
import glob
import os

import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
LAUNCH_FILES = sorted(glob.glob(os.path.join(ROOT, 'launch', '*.launch.py')))


def console_scripts():
    tree = ast.parse(open(os.path.join(ROOT, 'setup.py')).read())
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call)
                and getattr(n.func, 'id', '') == 'setup')
    entry = next(kw.value for kw in call.keywords if kw.arg == 'entry_points')
    return {s.split('=')[0].strip() for s in ast.literal_eval(entry)['console_scripts']}


def keyword_strings(path, keyword):
    tree = ast.parse(open(path).read())
    return [kw.value.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            for kw in node.keywords if kw.arg == keyword and isinstance(kw.value, ast.Constant)]


def test_there_are_launch_files():
    names = {os.path.basename(p) for p in LAUNCH_FILES}
    assert {'dynamics.launch.py', 'demo.launch.py', 'flexible.launch.py',
            'gazebo.launch.py'} <= names


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=os.path.basename)
def test_launch_executables_exist(path):
    tree = ast.parse(open(path).read())
    strings = {n.value for n in ast.walk(tree)
               if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    ours = console_scripts() | {os.path.basename(p) for p in LAUNCH_FILES}   # or includes one
    assert strings & ours, f'{path} starts no node of this package'
    for call in ast.walk(tree):        # Node(package='manipulator_dynamics', executable=...)
        if not isinstance(call, ast.Call):
            continue
        kw = {k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)}
        if kw.get('package') == 'manipulator_dynamics' and 'executable' in kw:
            assert kw['executable'] in console_scripts(), kw['executable']


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=os.path.basename)
def test_launch_files_define_generate_launch_description(path):
    tree = ast.parse(open(path).read())
    assert any(isinstance(n, ast.FunctionDef) and n.name == 'generate_launch_description'
               for n in tree.body)


def test_ros2_controllers_yaml_drives_the_demo_arm_by_effort():
    """config/ros2_controllers.yaml: forward_command_controller on every demo-arm joint, effort."""
    model = md.load_model(robots.path('demo_arm'))
    with open(os.path.join(ROOT, 'config', 'ros2_controllers.yaml')) as f:
        doc = yaml.safe_load(f)
    manager = doc['controller_manager']['ros__parameters']
    assert manager['effort_controller']['type'] == \
        'forward_command_controller/ForwardCommandController'
    assert manager['joint_state_broadcaster']['type'] == \
        'joint_state_broadcaster/JointStateBroadcaster'
    controller = doc['effort_controller']['ros__parameters']
    assert controller['interface_name'] == 'effort'
    assert controller['joints'] == list(model.joint_names)


def test_ros2_control_description_loads_in_our_model():
    """The demo arm with its <ros2_control> system is the same robot to the library."""
    from lxml import etree
    plain = md.load_model(robots.path('demo_arm'))
    text = robots.with_ros2_control(robots.path('demo_arm'), '/share/ros2_controllers.yaml')
    model = md.load_model(text)
    assert model.joint_names == plain.joint_names
    q = np.linspace(-1, 1, model.n)
    np.testing.assert_array_equal(md.gravity_torques(model, q), md.gravity_torques(plain, q))
    root = etree.fromstring(text.encode())
    system = root.find('ros2_control')
    assert system.find('hardware/plugin').text == 'gz_ros2_control/GazeboSimSystem'
    assert [j.get('name') for j in system.findall('joint')] == list(model.joint_names)
    for joint in system.findall('joint'):
        assert [c.get('name') for c in joint.findall('command_interface')] == ['effort']
    assert root.find('gazebo/plugin/parameters').text == '/share/ros2_controllers.yaml'
