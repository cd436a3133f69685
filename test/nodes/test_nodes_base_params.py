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

"""/compute_base_params from base_params_node, as a real process over DDS."""

from helpers import ROOT
import manipulator_dynamics as md
from manipulator_dynamics import robots
import pytest
import yaml

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from manipulator_dynamics.nodes.model_source import NO_MODEL  # noqa: E402, I100
from std_srvs.srv import Trigger  # noqa: E402, I100


def call(client):
    service = client.node.create_client(Trigger, '/compute_base_params')
    return client.call(service, Trigger.Request())


def test_yaml_answer_matches_the_library(client, processes):
    path = robots.path('demo_arm_gripper')
    processes('base_params_node', f'urdf_path:={path}', 'friction:=true', 'seed:=3')
    answer = call(client)
    assert answer.success, answer.message
    data = yaml.safe_load(answer.message)
    base = md.base_parameters(md.load_model(path), friction=True, seed=3)
    assert data['count'] == base.count and data['seed'] == 3 and data['method'] == 'energy'
    assert data['samples'] == base.samples
    assert [p['name'] for p in data['parameters']] == list(base.names)
    assert [p['equation'] for p in data['parameters']] == list(base.equations)


def test_closed_loop_robot_through_the_service(client, processes):
    import os
    loops = os.path.join(ROOT, 'config', 'parallelogram_loops.yaml')
    processes('base_params_node', f'urdf_path:={robots.path("parallelogram")}',
              f'loops:={loops}')
    data = yaml.safe_load(call(client).message)
    assert data['count'] == 3


def test_fails_cleanly_without_a_model(client, processes):
    processes('base_params_node')
    answer = call(client)
    assert not answer.success
    assert NO_MODEL in answer.message      # what /diagnostics says of it, word for word


def test_the_transmissions_parameter_loads_the_coupled_motors(client, processes, tmp_path):
    """``transmissions:=YAML``: the service's base parameters are the library's of that model."""
    path = tmp_path / 'transmissions.yaml'
    path.write_text(yaml.safe_dump({
        'joints': ['joint6', 'joint7'], 'reduction': [[40.0, 0.0], [30.0, 30.0]],
        'motor_friction': {'joint7': {'viscous': 0.25, 'coulomb': 0.75}}}))
    dynamics = tmp_path / 'dynamics.yaml'
    dynamics.write_text(yaml.safe_dump({'joint7': {'armature': 0.03}}))
    processes('base_params_node', f'urdf_path:={robots.path("demo_arm")}', 'friction:=true',
              'armature:=true', f'transmissions:={path}', f'joint_dynamics:={dynamics}')
    answer = call(client)
    assert answer.success, answer.message
    data = yaml.safe_load(answer.message)
    model = md.load_model(robots.path('demo_arm'), joint_dynamics=str(dynamics),
                          transmissions=str(path))
    base = md.base_parameters(model, friction=True, armature=True)
    assert [p['name'] for p in data['parameters']] == list(base.names)
    assert 'Fvm_joint7' in base.names and 'Fcm_joint7' in base.names
    values = [p['value'] for p in data['parameters']]
    assert values == pytest.approx(list(base.values), rel=0, abs=1e-12)
