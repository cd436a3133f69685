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
Flexible-link arm: flexible_trajectory_node on a flexible arm config.

    ros2 launch manipulator_dynamics flexible.launch.py arm_config:=/path/to/arm.yaml

    ros2 launch manipulator_dynamics flexible.launch.py mode:=stream target_topic:=/reference

For each rigid target on ``trajectory_topic`` it publishes the flexible trajectory, the joint
torques of the parallel scheme and the link-tip deflections; with ``mode:=stream`` it takes one
sensor_msgs/JointState target per step of ``dt`` on ``target_topic`` and publishes that step's
torques and reached angles on ``~/flexible_state``.  Arguments: arm_config (default: the
package's config/flexible_arm.yaml), mode, trajectory_topic, target_topic, dt, settle,
output_rate, use_sim_time, namespace, params_file (read first; the arguments given here win,
those left empty do not apply), managed and autostart (a managed node, configured and activated
by this launch unless ``autostart:=false``).
"""

from launch import LaunchDescription
from launch.actions import OpaqueFunction
from launch.substitutions import LaunchConfiguration

from manipulator_dynamics.nodes import flexible_trajectory_node
from manipulator_dynamics.nodes.launch_support import (declared, given_parameters,
                                                       MANAGED_ARGUMENTS, node_actions,
                                                       parameter_files)

ARGUMENTS = (
    ('arm_config', '', "flexible arm YAML: a URDF plus beam properties (default: the package's "
                       'config/flexible_arm.yaml)'),
    ('mode', '', 'trajectory (whole targets, the default) or stream (one target per step)'),
    ('trajectory_topic', '', 'rigid target trajectory_msgs/JointTrajectory (default '
                             'joint_trajectory)'),
    ('target_topic', '', 'in mode stream: the target of each step, sensor_msgs/JointState '
                         '(default target_joint_states)'),
    ('dt', '', 'integration step, s (default 0.001)'),
    ('settle', '', 'integration time after the last point, s (default 0.5)'),
    ('output_rate', '', 'points per second in the published results (default 100)'),
    ('use_sim_time', 'false', 'use the /clock topic (Gazebo)'),
    ('namespace', '', 'namespace of the node and of every topic it uses'),
    ('params_file', '', 'YAML of node parameters (/**/flexible_trajectory_node: ...)'),
) + MANAGED_ARGUMENTS


#: node -> {its parameter: the launch argument that sets it}
PARAMETERS = {
    'flexible_trajectory_node': {
        'arm_config': 'arm_config', 'mode': 'mode', 'trajectory_topic': 'trajectory_topic',
        'target_topic': 'target_topic', 'dt': 'dt', 'settle': 'settle',
        'output_rate': 'output_rate', 'use_sim_time': 'use_sim_time', 'managed': 'managed'},
}


def _nodes(context):
    params = given_parameters(context, PARAMETERS['flexible_trajectory_node'],
                              flexible_trajectory_node.PARAMS)
    return node_actions(context, 'flexible_trajectory_node', LaunchConfiguration('namespace'),
                        parameter_files(context) + [params])


def generate_launch_description():
    return LaunchDescription(declared(ARGUMENTS) + [OpaqueFunction(function=_nodes)])
