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
The whole loop on the bundled robot, no robot and no Gazebo needed.

    ros2 launch manipulator_dynamics demo.launch.py [namespace:=robot1] [params_file:=my.yaml]

sim_node (the demo arm with its joint dynamics) + dynamics_node (the dynamics topics; commands off,
the trajectory node drives) + trajectory_node (computed torque) + base_params_node, and
demo_trajectory, which sends the demo trajectory once the loop is up.  ``params_file`` (sections
``/**/<node>:``) is read before the demo's own settings, which win.  ``container:=true``
hosts dynamics_node, trajectory_node and base_params_node in one node_container process.
``managed:=true`` starts dynamics_node and trajectory_node as managed nodes, which the launch
configures and activates (``autostart:=false``: they wait for a lifecycle manager, and the demo
for them).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import OpaqueFunction
from launch.substitutions import LaunchConfiguration

from manipulator_dynamics.nodes import dynamics_node, trajectory_node
from manipulator_dynamics.nodes.launch_support import (container_actions, container_refusal,
                                                       declared, given_parameters,
                                                       MANAGED_ARGUMENTS, node_actions,
                                                       parameter_files, typed)

ARGUMENTS = (
    ('namespace', '', 'namespace of the nodes and every topic they use'),
    ('params_file', '', 'YAML of node parameters (/**/<node>: ...)'),
    ('container', 'false', 'true: dynamics_node, trajectory_node and base_params_node in one '
                           'node_container process (unmanaged only)'),
) + MANAGED_ARGUMENTS

#: node -> {its parameter: the launch argument that sets it}
PARAMETERS = {'dynamics_node': {'managed': 'managed'}, 'trajectory_node': {'managed': 'managed'}}
TABLES = {'dynamics_node': dynamics_node.PARAMS, 'trajectory_node': trajectory_node.PARAMS}


def _nodes(context):
    share = get_package_share_directory('manipulator_dynamics')
    model = {'urdf_path': os.path.join(share, 'urdf', 'demo_arm.urdf'),
             'joint_dynamics': os.path.join(share, 'config', 'demo_arm_dynamics.yaml')}
    files = parameter_files(context)
    namespace = LaunchConfiguration('namespace')

    def node(executable, **params):
        given = given_parameters(context, PARAMETERS[executable], TABLES[executable]) \
            if executable in PARAMETERS else {}
        return node_actions(context, executable, namespace,
                            files + [dict(model, **params, **given)])
    sim, send = node('sim_node', wait_for_command=True), node('demo_trajectory')
    hosted = {'dynamics_node': dict(model, mode='none'), 'trajectory_node': model,
              'base_params_node': model}
    managed = any(given_parameters(context, PARAMETERS[n], TABLES[n]).get('managed')
                  for n in PARAMETERS)
    container = typed(context.perform_substitution(LaunchConfiguration('container')), False,
                      'container')
    why = container_refusal(container, managed)
    if why:
        raise RuntimeError(why)
    if container:
        return sim + container_actions(namespace, files, hosted) + send
    return sim + node('dynamics_node', mode='none') + node('trajectory_node') + \
        node('base_params_node') + send


def generate_launch_description():
    return LaunchDescription(declared(ARGUMENTS) + [OpaqueFunction(function=_nodes)])
