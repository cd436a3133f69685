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

"""ament's template test: every source file carries the Apache-2.0 copyright header."""

from helpers import ROOT
import pytest

main = pytest.importorskip(
    'ament_copyright.main', reason='ament_copyright comes only with a ROS 2 installation (no '
    'registry these machines reach serves it); test_package.py::test_licence_header checks the '
    'same headers on every machine').main


@pytest.mark.copyright
@pytest.mark.linter
def test_copyright():
    rc = main(argv=[ROOT])
    assert rc == 0, 'Found errors'
