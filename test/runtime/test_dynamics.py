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
The interpreted dynamics a node commands from while its kernels compile equal the kernels.

Every robot of the algorithm tests (chains, trees, prismatic joints, rotor inertia, friction
laws and offsets), and a coupled wrist: one state and a batch, with and without friction, the
gravity torques and the computed torque, without ROS.  The nodes' switch between the two
(:mod:`.nodes.kernels`) is tested over DDS in test_cold_start.
"""

from helpers import assert_rel, coupled, random_state
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.runtime.dynamics import Compiled, Interpreted
import numpy as np


def robots_to_check(rigid):
    return (rigid, coupled(md.load_model(robots.path('demo_arm'))))


def test_the_interpreted_dynamics_equal_the_kernels(rigid):
    rng = np.random.default_rng(3)
    for model in robots_to_check(rigid):
        for batch in (None, 4):
            q, qd, qdd = random_state(model, rng, batch)
            for friction in (False, True):
                assert_rel(Interpreted.inverse_dynamics(model, q, qd, qdd, friction=friction),
                           Compiled.inverse_dynamics(model, q, qd, qdd, friction=friction),
                           1e-12, f'{model.name}: inverse dynamics (friction {friction})')
        q, qd, qdd = random_state(model, rng)
        assert_rel(Interpreted.gravity_torques(model, q), Compiled.gravity_torques(model, q),
                   1e-12, f'{model.name}: gravity')
        q_d, qd_d, _ = random_state(model, rng)
        gains = (rng.uniform(10, 100, model.n), rng.uniform(1, 20, model.n))
        for friction in (False, True):
            assert_rel(Interpreted.computed_torque(model, q, qd, q_d, qd_d, qdd, *gains,
                                                   friction=friction),
                       Compiled.computed_torque(model, q, qd, q_d, qd_d, qdd, *gains,
                                                friction=friction),
                       1e-12, f'{model.name}: computed torque (friction {friction})')


def test_only_the_compiled_dynamics_say_they_are_ready():
    """A node serves what only the kernels give (its other outputs) on ``ready`` alone."""
    assert Compiled.ready and not Interpreted.ready
