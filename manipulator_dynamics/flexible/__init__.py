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
Flexible-link manipulators: Isobe & Imaizumi's finite-element schemes.

``arm`` (the finite-element model), ``beam`` (elements, band solve, natural frequencies),
``motion`` (the rigid target at the nodes), ``newmark`` (the kinematics scheme), ``stream``
(the scheme one control sample at a time),
``parallel_scheme`` (joint torques from nodal forces), ``dynamics`` (the public functions),
``plot``.
"""
