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

"""A parameter a node does not have stops it at start, by name, with the nearest it has."""

import contextlib

from manipulator_dynamics import robots
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from manipulator_dynamics.nodes._parameters import ConfigurationError  # noqa: E402, I100
from manipulator_dynamics.nodes._parameters import refuse_unknown  # noqa: E402
from manipulator_dynamics.nodes.base_params_node import BaseParamsNode  # noqa: E402
from manipulator_dynamics.nodes.dynamics_node import DynamicsNode  # noqa: E402
from rosutil import in_process  # noqa: E402, I100

DEMO = robots.path('demo_arm')


def test_a_misspelt_parameter_is_named_with_the_nearest_one():
    with in_process(DynamicsNode, urdf_path=DEMO, external_torque=True) as node:
        with pytest.raises(ConfigurationError) as e:
            refuse_unknown([node])
    assert str(e.value).startswith("dynamics_node has no parameter 'external_torque' (did you "
                                   "mean 'external_torques'?)"), e.value


def test_a_parameter_far_from_every_name_is_named_alone():
    with in_process(BaseParamsNode, urdf_path=DEMO, zzz_unrelated=1) as node:
        with pytest.raises(ConfigurationError, match=r"has no parameter 'zzz_unrelated': it is "
                           'not started') as e:
            refuse_unknown([node])
    assert 'did you mean' not in str(e.value)


def test_nodes_in_one_process_take_what_one_of_them_has():
    """``-p`` reaches every node a container hosts: refused only where none has the name."""
    with contextlib.ExitStack() as stack:
        dynamics = stack.enter_context(in_process(DynamicsNode, urdf_path=DEMO,
                                                  external_torques=True))
        base = stack.enter_context(in_process(BaseParamsNode, urdf_path=DEMO,
                                              external_torques=True))
        refuse_unknown([dynamics, base])                # base_params_node has none: dynamics has
        with pytest.raises(ConfigurationError, match='base_params_node has no parameter '):
            refuse_unknown([base])


@pytest.mark.parametrize('how', ['-p', 'params file', 'container'])
def test_a_node_started_with_a_parameter_it_lacks_stops_saying_which(processes, tmp_path, how):
    """As a user starts it: ``ros2 run`` with ``-p`` or a parameters file, or in a container."""
    said = "dynamics_node has no parameter 'external_torque' (did you mean 'external_torques'?)"
    if how == '-p':
        node = processes('dynamics_node', f'urdf_path:={DEMO}', 'external_torque:=true')
    elif how == 'params file':
        path = tmp_path / 'params.yaml'
        path.write_text('/**/dynamics_node:\n  ros__parameters:\n    external_torque: true\n')
        node = processes('dynamics_node', f'urdf_path:={DEMO}',
                         args=('--ros-args', '--params-file', str(path)))
    else:                                   # -p reaches both: neither has it
        node = processes('node_container', 'lock_step:=true',
                         args=('sim_node', 'base_params_node'))
        said = "sim_node has no parameter 'lock_step' (did you mean 'lockstep'?)"
    code, output = node.wait(timeout=120.0)
    assert code == 2, output
    assert f'not started: {said}' in output, output
    assert 'Traceback' not in output
