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
``colcon build`` of the package, as a ROS 2 workspace would do it (colcon comes from PyPI).

No ROS installation is needed to build an ament_python package: colcon runs setup.py with the
ament layout of setup.cfg.  The test checks the installed layout and runs the installed executable.
"""

import os
import shutil
import subprocess
import sys

from helpers import ROOT
import pytest

COLCON = shutil.which('colcon', path=os.path.dirname(sys.executable)) or shutil.which('colcon')
pytestmark = pytest.mark.skipif(COLCON is None, reason='colcon is not installed '
                                '(pip install colcon-common-extensions; dev.py test installs it)')


@pytest.fixture(scope='module')
def install(request, tmp_path_factory):
    """
    Give the installed package of a ``colcon build`` (the ROS 2 workspace's, where it is).

    That build (``rosutil.ros2_workspace``, session-wide) is the one ``ros2 launch`` runs; a
    second build of the same sources here would double the minute a build takes.  Without
    ROS 2's tools, a workspace with the package in ``src/`` is built here, without the
    install-time compilation (``MANIPULATOR_DYNAMICS_PRECOMPILE=0``): that is the minute, and
    what it runs, ``python -m manipulator_dynamics.precompile``, is what ``dev.py`` runs before
    every suite (the ROS 2 workspace's build keeps it, and the launch tests start from it).
    """
    try:
        from rosutil import ros2_tools_missing
    except ImportError:                 # no rclpy: no ROS 2 fixtures either
        ros2_tools_missing = None
    if ros2_tools_missing is not None and ros2_tools_missing() is None:
        ws, _ = request.getfixturevalue('ros2_workspace')
        return ws / 'install' / 'manipulator_dynamics'
    ws = tmp_path_factory.mktemp('ws')
    shutil.copytree(ROOT, ws / 'src' / 'manipulator_dynamics',
                    ignore=shutil.ignore_patterns('.venv', '.git', 'build', 'install', 'log',
                                                  '__pycache__', '*.egg-info'))
    result = subprocess.run([COLCON, 'build', '--event-handlers', 'console_direct-'], cwd=ws,
                            capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, MANIPULATOR_DYNAMICS_PRECOMPILE='0'))
    assert result.returncode == 0, result.stdout + result.stderr
    installed = ws / 'install' / 'manipulator_dynamics'
    assert not list(installed.glob('lib/python3*/site-packages/manipulator_dynamics/_prebuilt'))
    return installed


def test_ament_layout_is_installed(install):
    share = install / 'share'
    index = share / 'ament_index' / 'resource_index' / 'packages'
    assert (index / 'manipulator_dynamics').is_file()
    assert (share / 'manipulator_dynamics' / 'package.xml').is_file()
    assert (share / 'manipulator_dynamics' / 'config' / 'demo_arm_dynamics.yaml').is_file()
    assert (share / 'manipulator_dynamics' / 'urdf' / 'demo_arm.urdf').is_file()
    assert (install / 'lib' / 'manipulator_dynamics' / 'manipulator-dynamics').is_file()


def test_installed_executable_runs(install):
    """What ``ros2 run manipulator_dynamics manipulator-dynamics info`` would run."""
    site = next((install / 'lib').glob('python3*/site-packages'))
    env = dict(os.environ, PYTHONPATH=str(site))
    script = install / 'lib' / 'manipulator_dynamics' / 'manipulator-dynamics'
    result = subprocess.run([sys.executable, str(script), 'info'], capture_output=True, text=True,
                            env=env, timeout=300, cwd=install)
    assert result.returncode == 0, result.stderr
    assert "Model('demo_arm', n=7" in result.stdout
    where = subprocess.run([sys.executable, '-c', 'import manipulator_dynamics as m; '
                            'print(m.__file__)'], capture_output=True, text=True, env=env,
                           cwd=install)
    assert where.stdout.startswith(str(site)), where.stdout    # the installed copy, not ours
