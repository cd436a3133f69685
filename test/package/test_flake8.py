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

"""ament's template test: ament_flake8 with its own configuration, over the whole package."""

import os

from helpers import ROOT
import pytest

main_with_errors = pytest.importorskip(
    'ament_flake8.main', reason='ament_flake8 comes with ROS 2, or from PyPI with the test extra '
    '(pip install .[test]; python3 dev.py test installs it)').main_with_errors


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    rc, errors = main_with_errors(argv=[ROOT, '--exclude', os.path.join(ROOT, '.venv')])
    assert rc == 0, f'Found {len(errors)} code style errors / warnings:\n' + '\n'.join(errors)
