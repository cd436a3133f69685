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

"""The whole loop on the bundled robot, no robot and no Gazebo needed.

    ros2 launch manipulator_dynamics demo.launch.py

sim_node (the demo arm with its joint dynamics) + dynamics_node (the dynamics topics; commands off,
the trajectory node drives) + trajectory_node (computed torque) + base_params_node, and
demo_trajectory, which sends the demo trajectory once the loop is up.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory('manipulator_dynamics')
    urdf = os.path.join(share, 'urdf', 'demo_arm.urdf')
    dynamics = os.path.join(share, 'config', 'demo_arm_dynamics.yaml')
    model = {'urdf_path': urdf, 'joint_dynamics': dynamics}
    return LaunchDescription([
        Node(package='manipulator_dynamics', executable='sim_node', name='sim_node',
             output='screen', parameters=[model, {'wait_for_command': True}]),
        Node(package='manipulator_dynamics', executable='dynamics_node', name='dynamics_node',
             output='screen', parameters=[model, {'mode': 'none'}]),
        Node(package='manipulator_dynamics', executable='trajectory_node',
             name='trajectory_node', output='screen', parameters=[model]),
        Node(package='manipulator_dynamics', executable='base_params_node',
             name='base_params_node', output='screen', parameters=[model]),
        Node(package='manipulator_dynamics', executable='demo_trajectory',
             name='demo_trajectory', output='screen', parameters=[model]),
    ])
