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

"""Quick start: ``python3 dev.py demo`` and ``python3 dev.py test``, with nothing but Python.

Creates ``.venv`` beside this file on first use, installs the package (editable) with what the
command needs, and runs the command inside it.  Later runs reinstall only when setup.py changed.
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


def main(argv):
    if not argv or argv[0] not in EXTRAS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    ensure_environment(EXTRAS[command])
    env = dict(os.environ)
    if command == 'demo':
        args = [PYTHON, '-m', 'manipulator_dynamics.nodes.demo'] + rest
    else:
        args = [PYTHON, '-m', 'pytest', '-q', os.path.join(HERE, 'test')] + rest
    return subprocess.call(args, cwd=HERE, env=env)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
