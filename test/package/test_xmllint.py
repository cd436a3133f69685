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

"""ament's template test: package.xml (and every XML file) valid against its schema."""

import os
import shutil
import subprocess

from helpers import ROOT
import pytest

main = pytest.importorskip(
    'ament_xmllint.main', reason='ament_xmllint comes with ROS 2, or from PyPI with the test '
    'extra (pip install .[test]; python3 dev.py test installs it)').main

SCHEMA = 'http://download.ros.org/schema/package_format3.xsd'


def missing():
    """Why ament_xmllint cannot check package.xml here, or None (asks no network)."""
    xmllint = shutil.which('xmllint')
    if xmllint is None:
        return ('ament_xmllint runs the xmllint program (Debian: libxml2-utils), which is not '
                'installed here')
    local = subprocess.run([xmllint, '--nonet', '--noout', '--schema', SCHEMA,
                            os.path.join(ROOT, 'package.xml')], capture_output=True, text=True)
    if 'failed to compile' in local.stderr or 'Failed to locate' in local.stderr:
        return (f"package.xml's schema ({SCHEMA}) is not available without the network (no "
                'XML catalog holds it), and this machine reaches no host but package registries')
    return None


@pytest.mark.linter
@pytest.mark.xmllint
def test_xmllint():
    reason = missing()
    if reason:
        pytest.skip(reason)
    rc = main(argv=[ROOT, '--exclude', os.path.join(ROOT, '.venv')])
    assert rc == 0, 'Found errors'
