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
Base inertial parameters and their identification from measured motion and efforts.

``base_parameters`` (Khalil's numerical base parameters by QR), ``closures`` (closed kinematic
loops: constraint solving and the completed motion), ``excitation`` (optimised excitation
trajectories), ``logs`` (a recording conditioned: checked, filtered, differentiated),
``settings`` (what makes a recording's equations, one object), ``fit`` (the weighted
least-squares fit, nothing chosen), ``least_squares``, ``friction`` (the laws), ``stiction``
(equations of joints at rest left out), ``validation`` (held-out torques), ``selection`` (the
cutoff from held-out folds), ``estimate`` (``identify``, ``select_friction``,
``cross_validate``: what the data choose, over ``selection`` and ``fit``), ``consistent``
(physically consistent standard parameters), ``payload`` (a load's parameters, the arm
known), ``gains`` (drive gains from motor currents) and ``known`` (what fixes their scale: loads
known by their mass, known links); ``errors`` holds ``IdentificationError``.
"""
