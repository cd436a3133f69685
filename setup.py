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
import subprocess
import sys

from setuptools import find_packages, setup
from setuptools.command.install import install

package_name = 'manipulator_dynamics'


class InstallAndPrecompile(install):
    """
    ``install``, then compile the numba kernels from the installed files (colcon build).

    A node's first command otherwise waits ~20 s for numba (over a minute for demo.launch.py's
    five nodes on two cores).  Skipped, and said, for a staged install (``--root``: a wheel or
    a package being built for elsewhere, where the files will not run from this path) and with
    ``MANIPULATOR_DYNAMICS_PRECOMPILE=0``: the nodes then compile them in the background as
    they start (``nodes/kernels.py``).
    """

    def run(self):
        super().run()
        if self.root or os.environ.get('MANIPULATOR_DYNAMICS_PRECOMPILE', '1') == '0':
            print('manipulator_dynamics: the kernels are not compiled at install ('
                  + ('a staged install: --root' if self.root else
                     'MANIPULATOR_DYNAMICS_PRECOMPILE=0')
                  + '); a node compiles them in the background at its first start, commanding '
                  'from the interpreted dynamics meanwhile (python -m '
                  'manipulator_dynamics.precompile compiles them now)', file=sys.stderr)
            return
        lib = os.path.abspath(self.install_lib)
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(lib, package_name, '_prebuilt'),
                   PYTHONPATH=lib + os.pathsep + os.environ.get('PYTHONPATH', ''))
        result = subprocess.run([sys.executable, '-m', package_name + '.precompile'], env=env,
                                cwd=lib)
        if result.returncode:       # the package still works: it compiles on first use
            print('manipulator_dynamics: precompiling the kernels failed; they compile on '
                  'first use', file=sys.stderr)


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
    # What package.xml's exec_depends bring from apt, and nothing more: the rest is an extra
    # (test/package/test_optional.py holds the two to each other).
    # numba's floor is the first release that compiles the kernels in seconds: the inliner of
    # 0.58 and older (Debian 12's is 0.56.4) copies the inlined helpers (inline='always') over
    # and over, for more than ten minutes and 9 GB (package.xml states the same floor).
    # The other floors are the oldest releases the supported platforms ship (Debian 12's numpy
    # 1.24, scipy 1.10, pandas 1.5, lxml 4.9, PyYAML 6.0; Ubuntu 24.04's and Debian 12's
    # matplotlib 3.6), on which .ci/debian runs the library tests.
    install_requires=['setuptools', 'numpy>=1.24', 'numba>=0.59', 'scipy>=1.10', 'PyYAML>=6.0',
                      'lxml>=4.9', 'pandas>=1.5', 'matplotlib>=3.6'],
    extras_require={
        # ament's linters as ROS 2 runs them: ament_flake8 with the flake8 plugins a ROS 2
        # install gives it (ament_flake8's package.xml), ament_pep257, ament_xmllint (which
        # needs the xmllint program); ament_copyright is on no registry: test_package.py checks
        # the headers itself
        # yourdfpy: the URDF reader the package had, the oracle of test_urdf_reader.py
        # pytest below 9: launch_testing's pytest plugin, as released before ros2/launch#979
        # was fixed, declares a hook argument (``path``) that pytest 9 removed, and fails to load
        # sphinx, myst-parser: test_rosdoc.py builds the docs as rosdoc2 does
        # pin from 2.6: the last wheels before Pinocchio 3 (which needs numpy 2) are the oracle
        # on Debian 12's numpy 1.24
        'test': ['pytest>=7,<9', 'sphinx>=5.3', 'myst-parser>=0.18', 'pin>=2.6',
                 'example-robot-data>=4.1', 'pydocstyle>=6.3',
                 'yourdfpy>=0.0.56', 'rosbags>=0.9.11', 'threadpoolctl>=3.1',
                 'colcon-common-extensions>=0.3', 'ros-ament-lint', 'ros-ament-flake8',
                 'ros-ament-pep257', 'ament-xmllint', 'flake8>=6', 'flake8-blind-except',
                 'flake8-builtins', 'flake8-class-newline', 'flake8-comprehensions',
                 'flake8-deprecated', 'flake8-docstrings', 'flake8-import-order',
                 'flake8-quotes>=3.3'],
        # sim_node's MuJoCo engine (engine:=mujoco); the library never imports it
        'sim': ['mujoco>=3.3'],
        # manipulator-dynamics fleet on a Dask cluster (without it, serially)
        'fleet': ['dask[distributed]>=2024.1'],
        # BLAS on one thread inside the identification (without it, the same figures, more CPU)
        'threads': ['threadpoolctl>=3.1'],
        # rosbag2 recordings read without ROS 2 (with it, rosbag2_py reads them)
        'rosbag': ['rosbags>=0.9.11'],
        'ros': ['ros-rclpy', 'ros-rmw-fastrtps-cpp', 'ros-sensor-msgs', 'ros-trajectory-msgs',
                'ros-std-msgs', 'ros-std-srvs', 'ros-geometry-msgs', 'ros-lifecycle-msgs',
                'ros-diagnostic-msgs'],
    },
    cmdclass={'install': InstallAndPrecompile},
    # the package reads its URDFs and compiled kernels by path
    zip_safe=False,
    maintainer='The manipulator_dynamics Authors',
    maintainer_email='manipulator-dynamics@users.noreply.github.com',
    description='Live rigid-body and flexible-link dynamics of manipulators from URDF, for ROS 2',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'manipulator-dynamics = manipulator_dynamics.cli:console',
            # through nodes.entry: quiet about a Ctrl-C while the node still imports
            'dynamics_node = manipulator_dynamics.nodes.entry:dynamics_node',
            'sim_node = manipulator_dynamics.nodes.entry:sim_node',
            'trajectory_node = manipulator_dynamics.nodes.entry:trajectory_node',
            'base_params_node = manipulator_dynamics.nodes.entry:base_params_node',
            'flexible_trajectory_node = manipulator_dynamics.nodes.entry:flexible_trajectory_node',
            'node_container = manipulator_dynamics.nodes.entry:node_container',
            'demo_trajectory = manipulator_dynamics.nodes.entry:demo_trajectory',
            'send_trajectory = manipulator_dynamics.nodes.entry:demo_trajectory',
        ],
    },
)
