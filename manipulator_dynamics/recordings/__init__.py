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
Logs of a robot as loggers write them, read once: files, their formats, their stamps.

Shared by identification (:mod:`..identification`) and contact detection (:mod:`..contact`):
:class:`.log.Log` and :func:`.log.read_once` read a file once for every use;
:func:`.log.read_data` gives what identification fits (:func:`.log.read_recording` holds it,
read and re-timed once, as one :class:`.log.Recording`) and :func:`.log.read_states` the
:class:`.log.States` a momentum observer reads, each on the robot's clock (:mod:`.timing`),
decided in one place (:func:`.log.on_robot_clock`).
"""
