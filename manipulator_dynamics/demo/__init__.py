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
Demos: programs that start the package's nodes as processes and drive them over DDS.

Not nodes themselves (those are :mod:`manipulator_dynamics.nodes`): each starts sim_node and the
nodes it shows on a DDS domain of its own, localhost only, sends them a motion, listens and
reports.  ``python3 -m manipulator_dynamics.demo`` runs the tracking demo (:mod:`.tracking`),
``--identify`` the identification demo (:mod:`.demo.identification`); :mod:`.loop` is their loop.
"""
