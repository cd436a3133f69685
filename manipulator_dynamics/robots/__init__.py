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

"""Bundled robots: ``demo_arm`` (7 joints) and ``demo_arm_gripper`` (9 joints, a tree)."""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ('demo_arm', 'demo_arm_gripper')


def path(name='demo_arm'):
    """Path of a bundled URDF."""
    if name not in NAMES:
        raise ValueError(f"no bundled robot '{name}' (bundled: {', '.join(NAMES)})")
    return os.path.join(_HERE, name + '.urdf')
