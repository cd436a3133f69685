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

"""The effort commands' clamp to the URDF limits, without a node."""

import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from manipulator_dynamics.nodes.commands import clamp_efforts  # noqa: E402, I100


class Warnings:
    """A throttle that keeps what it is told."""

    def __init__(self):
        self.said = []

    def warn(self, kind, text):
        self.said.append((kind, text))


def test_efforts_within_or_at_their_limits_pass_and_others_are_clamped_by_name():
    model = md.load_model(robots.path('demo_arm'))
    limit = model.effort_limit
    warnings = Warnings()
    at = np.where(np.arange(model.n) % 2, limit, -limit)
    assert clamp_efforts(model, at, warnings) is at and not warnings.said
    over = at.copy()
    over[[1, 4]] *= 1.5
    clamped = clamp_efforts(model, over, warnings)
    np.testing.assert_array_equal(clamped, at)
    assert warnings.said == [('clamped', 'efforts clamped to the URDF limits: '
                              f'{model.joint_names[1]}, {model.joint_names[4]}')]
    assert over[1] == 1.5 * at[1]             # the caller's array is left as it was
