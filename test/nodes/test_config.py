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

"""config/<node>.yaml: exactly the parameters each node declares, with its defaults."""

import importlib
import os

from helpers import ROOT
import pytest
import yaml

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')

NODES = ['dynamics_node', 'trajectory_node', 'base_params_node', 'sim_node',
         'flexible_trajectory_node']


@pytest.mark.parametrize('node', NODES)
def test_config_lists_exactly_the_declared_parameters(node):
    table = importlib.import_module(f'manipulator_dynamics.nodes.{node}').PARAMS
    with open(os.path.join(ROOT, 'config', f'{node}.yaml')) as f:
        document = yaml.safe_load(f)
    assert list(document) == [f'/**/{node}'], 'a /**/<node> section: any namespace'
    listed = document[f'/**/{node}']['ros__parameters']
    assert list(listed) == [p.name for p in table]
    for p in table:
        assert listed[p.name] == p.default, p.name


@pytest.mark.parametrize('node', NODES)
def test_every_parameter_is_described(node):
    table = importlib.import_module(f'manipulator_dynamics.nodes.{node}').PARAMS
    names = [p.name for p in table]
    assert len(set(names)) == len(names)
    for p in table:
        assert len(p.description) > 10, p.name
        if isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
            assert p.low is not None and p.low <= p.default <= p.high, f'{p.name}: no range'
