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

"""The one by-name mapping (names.py): any order, another robot's joints, and what it refuses."""

from manipulator_dynamics.names import joint_map, JointNamesError
import numpy as np
import pytest

MODEL = ('shoulder', 'elbow', 'wrist')


def test_a_shuffled_message_with_another_robots_joint_maps_to_the_model():
    names = ['wheel', 'wrist', 'shoulder', 'elbow']
    x = np.array([9.0, 3.0, 1.0, 2.0])
    rows, joints = joint_map(MODEL, names, every=True)
    ours = np.full(3, np.nan)
    ours[joints] = x[rows]
    np.testing.assert_array_equal(ours, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(joints, [0, 1, 2])          # in the model's order


def test_a_partial_message_maps_what_it_has():
    rows, joints = joint_map(MODEL, ['wrist', '', 'elbow'])
    np.testing.assert_array_equal(rows, [2, 0])
    np.testing.assert_array_equal(joints, [1, 2])


@pytest.mark.parametrize('names, options, kind, message', [
    (['elbow', 'wrist', 'elbow'], {}, 'duplicated', '/joint_states names elbow more than once'),
    (['elbow', 'wrist'], {'every': True, 'hint': ' (try tip_links)'}, 'missing',
     '/joint_states lacks joints shoulder (try tip_links)'),
    (['elbow', 'knee'], {'unknown': True}, 'unknown',
     '/joint_states names knee: not joints of the model'),
])
def test_what_cannot_be_matched_is_named(names, options, kind, message):
    with pytest.raises(JointNamesError) as raised:
        joint_map(MODEL, names, what='/joint_states', **options)
    assert raised.value.kind == kind and str(raised.value) == message
