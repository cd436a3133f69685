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

"""Flexible-link arm: flexible_trajectory_node on a flexible arm config.

    ros2 launch manipulator_dynamics flexible.launch.py arm_config:=/path/to/arm.yaml

For each rigid target on ``trajectory_topic`` it publishes the flexible trajectory, the joint
torques of the parallel scheme and the link-tip deflections.  Arguments: arm_config (default:
the package's config/flexible_arm.yaml), trajectory_topic, dt, settle, output_rate,
use_sim_time, namespace.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare('manipulator_dynamics')
    args = [
        DeclareLaunchArgument('arm_config',
                              default_value=PathJoinSubstitution([share, 'config',
                                                                  'flexible_arm.yaml']),
                              description='flexible arm YAML: a URDF plus beam properties'),
        DeclareLaunchArgument('trajectory_topic', default_value='/joint_trajectory',
                              description='rigid target trajectory_msgs/JointTrajectory'),
        DeclareLaunchArgument('dt', default_value='0.001', description='integration step, s'),
        DeclareLaunchArgument('settle', default_value='0.5',
                              description='integration time after the last point, s'),
        DeclareLaunchArgument('output_rate', default_value='100.0',
                              description='points per second in the published results'),
        DeclareLaunchArgument('use_sim_time', default_value='false'),
        DeclareLaunchArgument('namespace', default_value=''),
    ]
    return LaunchDescription(args + [
        Node(package='manipulator_dynamics', executable='flexible_trajectory_node',
             name='flexible_trajectory_node', namespace=LaunchConfiguration('namespace'),
             output='screen',
             parameters=[{'arm_config': LaunchConfiguration('arm_config'),
                          'trajectory_topic': LaunchConfiguration('trajectory_topic'),
                          'dt': ParameterValue(LaunchConfiguration('dt'), value_type=float),
                          'settle': ParameterValue(LaunchConfiguration('settle'),
                                                   value_type=float),
                          'output_rate': ParameterValue(LaunchConfiguration('output_rate'),
                                                        value_type=float),
                          'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'),
                                                         value_type=bool)}]),
    ])
