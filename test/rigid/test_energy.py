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
Total energy and its regressor, checked by the power balance: no oracle needed.

Along any motion of the robot, ``dE/dt = qd . (tau - friction)``: the efforts' power less what
friction dissipates, gravity's work being in E.  And ``E = h(q, qd) K``, linear in the standard
parameters.
"""

from helpers import assert_rel, random_state
import manipulator_dynamics as md
from manipulator_dynamics.control import friction_torque, rk4_step
import numpy as np


def test_energy_is_the_regressor_times_parameters(rigid):
    rng = np.random.default_rng(1)
    q, qd, _ = random_state(rigid, rng, N=3)
    assert_rel(md.energy(rigid, q, qd),
               md.energy_regressor(rigid, q, qd) @ md.standard_parameters(rigid), 1e-12, 'E')


def test_power_balance_at_any_state(rigid):
    """``dE/dt`` by central differences along ``(q + t qd, qd + t qdd)``, qdd from FD."""
    rng = np.random.default_rng(2)
    q, qd, _ = random_state(rigid, rng)
    tau = rng.uniform(-5, 5, rigid.n)
    qdd = md.forward_dynamics(rigid, q, qd, tau, friction=True)
    h = 1e-6
    rate = (md.energy(rigid, q + h * qd, qd + h * qdd)
            - md.energy(rigid, q - h * qd, qd - h * qdd)) / (2 * h)
    power = qd @ (tau - friction_torque(rigid, qd))
    scale = max(1.0, abs(qd @ tau), abs(qd @ friction_torque(rigid, qd)))
    assert abs(rate - power) <= 1e-6 * scale


def test_power_balance_along_a_simulated_motion(rigid):
    """
    Integrated over 20 ms of an RK4 simulation, the energy gained is the work done on it.

    The efforts hold gravity and the friction of the starting velocities, plus a random part, so
    that the motion is gentle and no joint's friction changes sign (the test asserts it).
    """
    rng = np.random.default_rng(3)
    q, _, _ = random_state(rigid, rng)
    qd = rng.choice([-1.0, 1.0], rigid.n) * rng.uniform(1.0, 2.0, rigid.n)
    extra = friction_torque(rigid, qd) + rng.uniform(-0.2, 0.2, rigid.n)
    step, steps = 1e-4, 200
    start = md.energy(rigid, q, qd)
    work = 0.0
    for _ in range(steps):
        tau = md.gravity_torques(rigid, q) + extra
        before = qd @ (tau - friction_torque(rigid, qd))
        sign = np.sign(qd)
        q, qd = rk4_step(rigid, q, qd, tau, step, friction=True)
        assert np.all(np.sign(qd) == sign), 'a joint reversed: the balance would not hold'
        # the efforts are held over a step (as a drive's zero-order hold): trapezoid on the power
        work += 0.5 * step * (before + qd @ (tau - friction_torque(rigid, qd)))
    gained = md.energy(rigid, q, qd) - start
    assert abs(gained - work) <= 1e-6 * max(1.0, abs(work))


def test_batch_equals_single(rigid):
    rng = np.random.default_rng(4)
    q, qd, _ = random_state(rigid, rng, N=4)
    h = md.energy_regressor(rigid, q, qd)
    for s in range(len(q)):
        np.testing.assert_array_equal(h[s], md.energy_regressor(rigid, q[s], qd[s]))
