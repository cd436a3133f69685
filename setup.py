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

"""ament_python package; also installs with pip (``pip install .``)."""

from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'manipulator_dynamics'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*']),
    package_data={package_name: ['robots/*.urdf']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        (os.path.join('share', package_name, 'launch'), glob('launch/*.launch.py')),
        (os.path.join('share', package_name, 'config'), glob('config/*.yaml')),
        (os.path.join('share', package_name, 'urdf'), glob('manipulator_dynamics/robots/*.urdf')),
    ],
    python_requires='>=3.10',
    # The ROS client libraries (rclpy, message packages) are deliberately absent: where ROS 2 is
    # installed they come from the distribution; without ROS, `pip install .[ros]` brings wheels.
    install_requires=['setuptools', 'numpy>=1.24', 'numba>=0.58', 'scipy>=1.10', 'PyYAML>=5.4',
                      'lxml>=4.9', 'yourdfpy>=0.0.56', 'rosbags>=0.9.11',
                      'matplotlib>=3.5'],
    extras_require={
        'test': ['pytest>=7', 'pin>=3.4', 'example-robot-data>=4.1', 'flake8>=6',
                 'flake8-quotes>=3.3', 'pydocstyle>=6.3', 'colcon-common-extensions>=0.3'],
        'ros': ['ros-rclpy', 'ros-rmw-fastrtps-cpp', 'ros-sensor-msgs', 'ros-trajectory-msgs',
                'ros-std-msgs', 'ros-std-srvs'],
    },
    zip_safe=True,
    maintainer='The manipulator_dynamics Authors',
    maintainer_email='manipulator-dynamics@users.noreply.github.com',
    description='Live rigid-body and flexible-link dynamics of manipulators from URDF, for ROS 2',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'manipulator-dynamics = manipulator_dynamics.cli:main',
            'dynamics_node = manipulator_dynamics.nodes.dynamics_node:main',
            'sim_node = manipulator_dynamics.nodes.sim_node:main',
            'trajectory_node = manipulator_dynamics.nodes.trajectory_node:main',
            'base_params_node = manipulator_dynamics.nodes.base_params_node:main',
            'flexible_trajectory_node = '
            'manipulator_dynamics.nodes.flexible_trajectory_node:main',
            'demo_trajectory = manipulator_dynamics.nodes.demo:demo_trajectory',
        ],
    },
)
