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

"""ament's template test: ament_pep257 (ament's docstring convention) over the whole package."""

import os

from helpers import ROOT
import pytest

main = pytest.importorskip(
    'ament_pep257.main', reason='ament_pep257 comes with ROS 2, or from PyPI with the test extra '
    '(pip install .[test]; python3 dev.py test installs it)').main


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    rc = main(argv=[ROOT, '--exclude', os.path.join(ROOT, '.venv')])
    assert rc == 0, 'Found code style errors / warnings'
