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
Dynamics next to a robot driver or Gazebo: dynamics_node and base_params_node.

    ros2 launch manipulator_dynamics dynamics.launch.py mode:=gravity_compensation \
        command_joints:="[joint1, joint2, joint3]"

The URDF comes from the ``robot_description`` topic (robot_state_publisher, ros2_control) unless
``urdf`` is given.  ``mode`` defaults to ``none``: the node publishes the dynamics topics but
commands nothing until told which mode, so that starting it can never push an arm with efforts
in an order nobody checked.  Every name is relative: ``namespace:=robot1`` moves the joint states,
the commands, the description and ``compute_base_params`` under ``/robot1``.  ``params_file`` (a
YAML with ``/**/dynamics_node:`` and ``/**/base_params_node:`` sections, as config/ has them) is
read first; the arguments given here win over it, those left empty do not apply.
``managed:=true`` starts dynamics_node as a managed (lifecycle) node, which this launch
configures and activates unless ``autostart:=false`` (then a lifecycle manager does).
"""

from launch import LaunchDescription
from launch.actions import OpaqueFunction
from launch.substitutions import LaunchConfiguration

from manipulator_dynamics.nodes import base_params_node, dynamics_node
from manipulator_dynamics.nodes.launch_support import (declared, given_parameters,
                                                       MANAGED_ARGUMENTS, node_actions,
                                                       parameter_files)

ARGUMENTS = (
    ('urdf', '', 'URDF file; empty: listen to the robot_description topic'),
    ('params_file', '', 'YAML of node parameters (/**/dynamics_node: ...), read first'),
    ('mode', 'none', 'gravity_compensation | inverse_dynamics | none (default: commands off)'),
    ('command_topic', '', 'effort command topic (default effort_controller/commands)'),
    ('command_joints', '', "the effort controller's joints, in its order, e.g. [j1, j2] "
                           "(default: the model's)"),
    ('controller_name', '', "the controller whose 'joints' the command order must match "
                            "before the first command (default: the command topic's "
                            "namespace; '-': no check, for a controller that has no such "
                            'parameter)'),
    ('joint_dynamics', '', 'YAML of armature and friction per joint'),
    ('identified_parameters', '', "YAML of standard parameters to use instead of the URDF's "
                                  '(manipulator-dynamics identify --parameters-out)'),
    ('transmissions', '', 'YAML of the motors (gear ratios, coupling, zero offsets) instead of '
                          "the URDF's <transmission>"),
    ('external_torques', '', 'true: the momentum observer, ~/external_torques, ~/contact_wrench, '
                             '~/contact (default false; thresholds etc. in params_file)'),
    ('collision_reaction', '', 'with external_torques, what the commands become on a collision '
                               'until ~/rearm: stop | float | reflex | none (default stop)'),
    ('contact_link', '', 'the link whose wrench ~/contact_wrench estimates (default: the '
                         'deepest)'),
    ('payload_link', '', 'the link that holds a load: ~/estimate_payload estimates what it '
                         'picked up (default: none; the payload itself in params_file)'),
    ('use_sim_time', 'false', 'use the /clock topic (Gazebo)'),
    ('namespace', '', 'namespace of the nodes and of every topic they use'),
) + MANAGED_ARGUMENTS


#: node -> {its parameter: the launch argument that sets it}
PARAMETERS = {
    'dynamics_node': {'urdf_path': 'urdf', 'joint_dynamics': 'joint_dynamics',
                      'identified_parameters': 'identified_parameters',
                      'transmissions': 'transmissions', 'use_sim_time': 'use_sim_time',
                      'mode': 'mode',
                      'command_topic': 'command_topic', 'command_joints': 'command_joints',
                      'controller_name': 'controller_name',
                      'external_torques': 'external_torques',
                      'collision_reaction': 'collision_reaction', 'contact_link': 'contact_link',
                      'payload_link': 'payload_link', 'managed': 'managed'},
    'base_params_node': {'urdf_path': 'urdf', 'joint_dynamics': 'joint_dynamics',
                         'identified_parameters': 'identified_parameters',
                         'transmissions': 'transmissions', 'use_sim_time': 'use_sim_time'},
}
TABLES = {'dynamics_node': dynamics_node.PARAMS, 'base_params_node': base_params_node.PARAMS}


def _nodes(context):
    files = parameter_files(context)
    return [action for name, names in PARAMETERS.items()
            for action in node_actions(context, name, LaunchConfiguration('namespace'),
                                       files + [given_parameters(context, names, TABLES[name])])]


def generate_launch_description():
    return LaunchDescription(declared(ARGUMENTS) + [OpaqueFunction(function=_nodes)])
