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

"""A message a node cannot use, refused with the reason (for its log) and its kind (throttling)."""

from ..names import joint_map, JointNamesError


class BadMessage(ValueError):
    """A message a node drops: ``kind`` of problem (for throttling) and the reason it logs."""

    def __init__(self, kind, reason):
        super().__init__(reason)
        self.kind = kind


def by_name(model, names, **options):
    """:func:`..names.joint_map` of ``model``'s joints; a :class:`BadMessage` if it refuses."""
    try:
        return joint_map(model.joint_names, names, **options)
    except JointNamesError as e:
        raise BadMessage(e.kind, str(e)) from None
