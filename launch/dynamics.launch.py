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

"""Dynamics next to a robot driver or Gazebo: dynamics_node and base_params_node.

    ros2 launch manipulator_dynamics dynamics.launch.py command_joints:="[j1, j2]" mode:=none

The URDF comes from /robot_description (robot_state_publisher, ros2_control) unless ``urdf`` is
given.  Arguments: urdf, mode, command_topic, command_joints, use_sim_time, namespace.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue


def generate_launch_description():
    args = [
        DeclareLaunchArgument('urdf', default_value='',
                              description='URDF file; empty: listen to /robot_description'),
        DeclareLaunchArgument('mode', default_value='gravity_compensation',
                              description='gravity_compensation | inverse_dynamics | none'),
        DeclareLaunchArgument('command_topic', default_value='/effort_controller/commands'),
        DeclareLaunchArgument('command_joints', default_value='[""]',
                              description='joint order of the effort controller'),
        DeclareLaunchArgument('use_sim_time', default_value='false'),
        DeclareLaunchArgument('namespace', default_value=''),
    ]
    common = {'urdf_path': LaunchConfiguration('urdf'),
              'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)}
    return LaunchDescription(args + [
        Node(package='manipulator_dynamics', executable='dynamics_node', name='dynamics_node',
             namespace=LaunchConfiguration('namespace'), output='screen',
             parameters=[common, {
                 'mode': LaunchConfiguration('mode'),
                 'command_topic': LaunchConfiguration('command_topic'),
                 'command_joints': ParameterValue(LaunchConfiguration('command_joints'),
                                                  value_type=list),
             }]),
        Node(package='manipulator_dynamics', executable='base_params_node',
             name='base_params_node', namespace=LaunchConfiguration('namespace'),
             output='screen', parameters=[common]),
    ])
