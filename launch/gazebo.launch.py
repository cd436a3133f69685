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
The demo arm in Gazebo with ros2_control, and the dynamics beside it: a complete bringup.

    ros2 launch manipulator_dynamics gazebo.launch.py mode:=gravity_compensation

robot_state_publisher (the demo arm's URDF with its ``<ros2_control>`` system, gz_ros2_control),
Gazebo (ros_gz_sim, world ``world``), the arm spawned from ``robot_description``, the /clock
bridge, the spawners of ``joint_state_broadcaster`` and ``effort_controller``
(config/ros2_controllers.yaml: forward_command_controller, ``interface_name: effort``), then
dynamics.launch.py on simulated time, commanding ``effort_controller/commands`` in the
controller's joint order.  Needs ros_gz_sim, ros_gz_bridge, gz_ros2_control and the two
controllers, which package.xml declares (the nodes need none of them).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare
from manipulator_dynamics import load_model, robots
from manipulator_dynamics.nodes.launch_support import cell_namespace_refusal, declared

ARGUMENTS = (
    ('world', 'empty.sdf', 'Gazebo world'),
    ('mode', 'none', 'dynamics_node mode: gravity_compensation | inverse_dynamics | none'),
    ('namespace', '', 'refused: the cell cannot be namespaced by this file (see below)'),
)
#: included launch file -> {its argument: the argument of this file that sets it}
FORWARDED = {'dynamics.launch.py': {'mode': 'mode'}}


def _robot(context):
    why = cell_namespace_refusal(LaunchConfiguration('namespace').perform(context))
    if why:
        raise RuntimeError(why)
    share = get_package_share_directory('manipulator_dynamics')
    urdf = os.path.join(share, 'urdf', 'demo_arm.urdf')
    controllers = os.path.join(share, 'config', 'ros2_controllers.yaml')
    joints = list(load_model(urdf).joint_names)
    description = robots.with_ros2_control(urdf, controllers)
    return [
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             output='screen', parameters=[{'robot_description': description,
                                           'use_sim_time': True}]),
        Node(package='ros_gz_sim', executable='create', output='screen',
             arguments=['-topic', 'robot_description', '-name', 'demo_arm']),
        Node(package='ros_gz_bridge', executable='parameter_bridge', output='screen',
             arguments=['/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock']),
        Node(package='controller_manager', executable='spawner', output='screen',
             arguments=['joint_state_broadcaster']),
        Node(package='controller_manager', executable='spawner', output='screen',
             arguments=['effort_controller']),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(share, 'launch', 'dynamics.launch.py')),
            launch_arguments=dict(
                {name: LaunchConfiguration(ours)
                 for name, ours in FORWARDED['dynamics.launch.py'].items()},
                use_sim_time='true', command_topic='effort_controller/commands',
                command_joints='[' + ', '.join(joints) + ']').items()),
    ]


def generate_launch_description():
    gazebo = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution(
            [FindPackageShare('ros_gz_sim'), 'launch', 'gz_sim.launch.py'])),
        launch_arguments={'gz_args': ['-r ', LaunchConfiguration('world')]}.items())
    return LaunchDescription(declared(ARGUMENTS) + [gazebo, OpaqueFunction(function=_robot)])
