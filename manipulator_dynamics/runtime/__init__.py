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
The runtime under the nodes: what a node computes between a message in and a message out.

No ROS here: a node is the shell (its parameters, subscriptions, publishers, lifecycle) and
calls these, which the tests call without DDS.

* :mod:`.joint_states`: the one JointState reader (a message refused: :mod:`.refused`);
* :mod:`.commands`: from a state to its command, the law of a mode in the controller's order
  within the effort limits, compiled from a driver's bytes;
* :mod:`.dynamics`: the dynamics a commanding node calls, compiled or, while its kernels
  compile, interpreted;
* :mod:`.follower`: trajectory_node's trajectory, checked and followed on the node's clock;
* :mod:`.simulator`: sim_node's plant on its clock (the command held, the events, real time
  and lockstep);
* :mod:`.flexible_targets`: flexible_trajectory_node's answer to a rigid target;
* :mod:`.contact_monitor`: the momentum observer and the contact levels over a stream of
  states.
"""
