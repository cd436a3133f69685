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
The exceptions of data: data that cannot give an estimate, and a log that cannot be read.

:class:`IdentificationError` is raised by :mod:`manipulator_dynamics.identification` (too short,
not exciting enough), :class:`RecordingError` by :mod:`.recordings` (a file, a column, a
sample), each with what is wrong and where.
"""


class IdentificationError(ValueError):
    """The data cannot give an estimate: wrong shapes, NaN, too short, or not exciting enough."""


class RecordingError(IdentificationError):
    """
    A log cannot be read: its file, a column, a stamp or a sample, named.

    An :class:`IdentificationError` too, since a log that cannot be read gives no estimate:
    ``except IdentificationError`` around an identification still catches both.
    """
