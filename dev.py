#!/usr/bin/env python3
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
Quick start: ``python3 dev.py demo`` and ``python3 dev.py test``, with nothing but Python.

Creates ``.venv`` beside this file on first use, installs the package (editable) with what the
command needs, and runs the command inside it.  Later runs reinstall only when setup.py changed.
For ``test``, ROS 2's own tools (launch, launch_testing, the ``ros2`` command, the ament linters)
come from ``../shared/ros2`` when it is there (no registry here serves them; on a ROS 2 machine
they come with ROS): the launch tests then run, and skip, saying why, without them.
Extra arguments go to the command (``python3 dev.py test -k pinocchio``).
"""

import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, '.venv')
PYTHON = os.path.join(VENV, 'bin', 'python')
EXTRAS = {'demo': '[ros]', 'test': '[test,ros]'}
ROS2_TOOLS = os.path.join(HERE, '..', 'shared', 'ros2', 'install.sh')


def ensure_environment(extras):
    """Create the virtual environment and install the package with ``extras`` unless up to date."""
    if not os.path.exists(PYTHON):
        subprocess.check_call([sys.executable, '-m', 'venv', VENV])
    with open(os.path.join(HERE, 'setup.py'), 'rb') as f:
        stamp = hashlib.sha256(f.read() + extras.encode()).hexdigest()
    stamp_file = os.path.join(VENV, '.installed-' + (extras.strip('[]') or 'base'))
    if os.path.exists(stamp_file) and open(stamp_file).read() == stamp:
        return
    pip = [PYTHON, '-m', 'pip', 'install', '--disable-pip-version-check', '-q']
    subprocess.check_call(pip + ['--upgrade', 'pip'])
    subprocess.check_call(pip + ['-e', HERE + extras])
    with open(stamp_file, 'w') as f:
        f.write(stamp)


def ensure_ros2_tools():
    """Install ../shared/ros2's wheels into the environment unless already done for this copy."""
    if not os.path.isfile(ROS2_TOOLS):
        print('dev.py: ../shared/ros2 is not there: the launch tests will skip', file=sys.stderr)
        return
    wheels = os.path.join(os.path.dirname(ROS2_TOOLS), 'wheels')
    digest = hashlib.sha256(open(ROS2_TOOLS, 'rb').read())
    for name in sorted(os.listdir(wheels)):
        digest.update(name.encode())
    stamp_file = os.path.join(VENV, '.installed-ros2-tools')
    if os.path.exists(stamp_file) and open(stamp_file).read() == digest.hexdigest():
        return
    subprocess.check_call(['bash', ROS2_TOOLS, PYTHON])
    with open(stamp_file, 'w') as f:
        f.write(digest.hexdigest())


def main(argv):
    if not argv or argv[0] not in EXTRAS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    ensure_environment(EXTRAS[command])
    if command == 'test':
        ensure_ros2_tools()
    env = dict(os.environ)
    # the venv's commands (ros2, launch_test, colcon) first, as an activated venv would have it
    env['PATH'] = os.path.dirname(PYTHON) + os.pathsep + env.get('PATH', '')
    if command == 'demo':
        args = [PYTHON, '-m', 'manipulator_dynamics.nodes.demo'] + rest
    else:
        args = [PYTHON, '-m', 'pytest', '-q', os.path.join(HERE, 'test')] + rest
    return subprocess.call(args, cwd=HERE, env=env)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
