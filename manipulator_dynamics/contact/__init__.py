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
Contact from the measured efforts: external joint torques, the wrench at a link, two levels.

``observer`` (the generalised momentum observer: the external torques a robot feels, from its
joint states and its model), ``detection`` (contact and collision thresholds, learnt from free
motion, and the latched collision), ``wrench`` (the external torques as a wrench at a link, with
what the joints can observe of it), ``replay`` (a log's states watched as the node watches
them, by one ``settings.ContactSettings``).
"""
