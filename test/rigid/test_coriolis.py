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
The Coriolis matrix: dM/dt = C + C^T, C qd = h - g, the numpy reference, and Pinocchio.

The identity is checked against a central difference of M along qd: its truncation error is
O(h^2) ~ 1e-12 of M's scale and its rounding error eps / h ~ 1e-10, so 1e-7 relative leaves
room for both and still fails on any wrong term (those are of order 1).
"""

from helpers import assert_rel, pin_robot, PIN_ROBOTS, PinRobot, random_state
import manipulator_dynamics as md
from manipulator_dynamics.rigid import reference
from manipulator_dynamics.robots import random_urdf
import numpy as np
import pytest

TOL = 1e-9          # relative to the size of the result, as every rigid-body comparison


def dM_dt(model, q, qd, h=1e-6):
    """dM/dt along qd by a central difference of M."""
    return (md.inertia_matrix(model, q + h * qd) - md.inertia_matrix(model, q - h * qd)) / (2 * h)


def test_dM_dt_is_C_plus_its_transpose_and_C_qd_the_velocity_terms(rigid):
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, qd, _ = random_state(rigid, rng)
        C = md.coriolis_matrix(rigid, q, qd)
        # so dM/dt - 2 C is skew: the passivity the momentum observer rests on
        assert_rel(C + C.T, dM_dt(rigid, q, qd), 1e-7, 'C + C^T')
        assert_rel(C @ qd, md.bias_forces(rigid, q, qd) - md.gravity_torques(rigid, q), TOL,
                   'C qd')


def test_the_kernel_is_the_reference(rigid):
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, qd, _ = random_state(rigid, rng)
        assert_rel(md.coriolis_matrix(rigid, q, qd), reference.coriolis_matrix(rigid, q, qd),
                   TOL, 'C')


def test_a_batch_is_its_single_states(rigid):
    rng = np.random.default_rng(3)
    q, qd, _ = random_state(rigid, rng, N=600)        # long enough to be split over threads
    C = md.coriolis_matrix(rigid, q, qd)
    assert C.shape == (600, rigid.n, rigid.n)
    for s in (0, 299, 599):
        np.testing.assert_allclose(C[s], md.coriolis_matrix(rigid, q[s], qd[s]), rtol=1e-12,
                                   atol=1e-12 * np.abs(C[s]).max())
    one = md.coriolis_matrix(rigid, q[0], qd)          # a 1-D q broadcast over the batch
    np.testing.assert_allclose(one[5], md.coriolis_matrix(rigid, q[0], qd[5]), rtol=1e-12,
                               atol=1e-12 * np.abs(one[5]).max())


def test_zero_velocity_gives_zero_and_C_is_linear_in_qd(rigid):
    rng = np.random.default_rng(4)
    q, qd, _ = random_state(rigid, rng)
    np.testing.assert_array_equal(md.coriolis_matrix(rigid, q, np.zeros(rigid.n)), 0.0)
    assert_rel(md.coriolis_matrix(rigid, q, 2.5 * qd), 2.5 * md.coriolis_matrix(rigid, q, qd),
               TOL, 'C(q, 2.5 qd)')


@pytest.mark.parametrize('name', list(PIN_ROBOTS))
def test_pinocchio_computeCoriolisMatrix(name):
    model, ref = pin_robot(name)
    pin = ref.pin
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, qd, _ = random_state(model, rng)
        expected = ref.ours(pin.computeCoriolisMatrix(ref.pm, ref.pd, ref.q(q), ref.v(qd)))
        assert_rel(md.coriolis_matrix(model, q, qd), expected, TOL, 'C')
        assert_rel(reference.coriolis_matrix(model, q, qd), expected, TOL, 'reference C')


@pytest.mark.parametrize('seed', range(4))
def test_random_trees_against_pinocchio(seed):
    pin = pytest.importorskip('pinocchio', reason='Pinocchio is the test oracle: pip install pin')
    xml = random_urdf(40 + seed, n=5 + 3 * seed, branching=0.2 * seed, prismatic=0.3)
    model = md.load_model(xml)
    ref = PinRobot(pin, xml, model, xml=True)
    q, qd, _ = random_state(model, np.random.default_rng(seed))
    expected = ref.ours(pin.computeCoriolisMatrix(ref.pm, ref.pd, ref.q(q), ref.v(qd)))
    assert_rel(md.coriolis_matrix(model, q, qd), expected, TOL, 'C')


def test_bad_input_names_the_argument_and_joint():
    from manipulator_dynamics import robots
    model = md.load_model(robots.path('demo_arm'))
    z = np.zeros(model.n)
    with pytest.raises(ValueError, match=r'qd must have shape \(7,\)'):
        md.coriolis_matrix(model, z, np.zeros(3))
    bad = z.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match=f"qd\\[2\\] is nan for joint '{model.joint_names[2]}'"):
        md.coriolis_matrix(model, z, bad)
    with pytest.raises(ValueError, match='q has 4 samples but an earlier|qd has 3 samples'):
        md.coriolis_matrix(model, np.zeros((4, 7)), np.zeros((3, 7)))
