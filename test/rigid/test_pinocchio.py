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

"""Every rigid-body algorithm against Pinocchio (test-only oracle) on real and random robots."""

from helpers import assert_rel, pin_robot, PIN_ROBOTS, PinRobot, random_state
import manipulator_dynamics as md
from manipulator_dynamics.robots import random_urdf
import numpy as np
import pytest

pin = pytest.importorskip('pinocchio', reason='Pinocchio is the test oracle: pip install pin')

TOL = 1e-9          # the agreement bound, relative to the size of the result
SAMPLES = 5         # random states per robot


@pytest.fixture(scope='module', params=list(PIN_ROBOTS))
def robot(request):
    return pin_robot(request.param)


def test_inverse_dynamics(robot):
    model, ref = robot
    rng = np.random.default_rng(1)
    for _ in range(SAMPLES):
        q, qd, qdd = random_state(model, rng)
        assert_rel(md.inverse_dynamics(model, q, qd, qdd), ref.rnea(q, qd, qdd), TOL, 'tau')


def test_inertia_matrix(robot):
    model, ref = robot
    rng = np.random.default_rng(2)
    for _ in range(SAMPLES):
        q, _, _ = random_state(model, rng)
        M = md.inertia_matrix(model, q)
        assert_rel(M, ref.crba(q), TOL, 'M')
        np.testing.assert_array_equal(M, M.T)


def test_bias_and_gravity(robot):
    model, ref = robot
    rng = np.random.default_rng(3)
    for _ in range(SAMPLES):
        q, qd, _ = random_state(model, rng)
        assert_rel(md.bias_forces(model, q, qd), ref.nle(q, qd), TOL, 'bias')
        assert_rel(md.gravity_torques(model, q), ref.gravity(q), TOL, 'gravity')


@pytest.mark.parametrize('method', ['udut', 'cholesky', 'auto'])
def test_forward_dynamics(robot, method):
    model, ref = robot
    rng = np.random.default_rng(4)
    for _ in range(SAMPLES):
        q, qd, _ = random_state(model, rng)
        tau = rng.uniform(-10, 10, model.n)
        assert_rel(md.forward_dynamics(model, q, qd, tau, method=method), ref.aba(q, qd, tau), TOL,
                   f'qdd ({method})')


def test_udut_reconstructs_M(robot):
    model, _ = robot
    rng = np.random.default_rng(5)
    q, _, _ = random_state(model, rng)
    U, D = md.udut(model, q)
    M = md.inertia_matrix(model, q)
    assert_rel(U @ np.diag(D) @ U.T, M, 1e-12, 'U D U^T')
    np.testing.assert_array_equal(np.diag(U), 1.0)
    np.testing.assert_array_equal(np.tril(U, -1), 0.0)
    assert np.all(D > 0)


def test_regressor_times_parameters(robot):
    model, ref = robot
    rng = np.random.default_rng(6)
    for _ in range(SAMPLES):
        q, qd, qdd = random_state(model, rng)
        Y = md.regressor(model, q, qd, qdd)
        assert_rel(Y @ md.standard_parameters(model), ref.rnea(q, qd, qdd), TOL, 'Y K')


def test_external_wrench_on_a_merged_link(robot):
    """A wrench on a link merged through fixed joints equals Pinocchio's force on its joint."""
    model, ref = robot
    rng = np.random.default_rng(7)
    q, qd, qdd = random_state(model, rng)
    # the deepest link of the URDF (merged ones included) and a random wrench on it
    link = max(model.frames, key=lambda name: (model.frames[name].body, name))
    wrench = rng.uniform(-5, 5, 6)
    ours = md.inverse_dynamics(model, q, qd, qdd, f_ext={link: wrench})
    frame = ref.pm.frames[ref.pm.getFrameId(link)]
    joint = frame.parentJoint if hasattr(frame, 'parentJoint') else frame.parent  # pin 2
    fext = pin.StdVec_Force()         # appended: pin 2's has no constructor from a list
    for j in range(ref.pm.njoints):
        fext.append(frame.placement.act(pin.Force(wrench[:3], wrench[3:])) if j == joint
                    else pin.Force.Zero())
    assert_rel(ours, ref.rnea(q, qd, qdd, fext), TOL, 'tau with f_ext')


@pytest.mark.parametrize('seed', range(6))
def test_random_trees(seed):
    """Random trees (any axes, rpy origins, merged fixed links, all joint types) vs Pinocchio."""
    xml = random_urdf(seed, n=4 + 3 * seed, branching=0.15 * seed)
    model = md.load_model(xml)
    ref = PinRobot(pin, xml, model, xml=True)
    rng = np.random.default_rng(seed)
    q, qd, qdd = random_state(model, rng)
    tau = md.inverse_dynamics(model, q, qd, qdd)
    assert_rel(tau, ref.rnea(q, qd, qdd), TOL, 'tau')
    assert_rel(md.inertia_matrix(model, q), ref.crba(q), TOL, 'M')
    for method in ('udut', 'cholesky'):
        assert_rel(md.forward_dynamics(model, q, qd, tau, method=method), qdd, 1e-8, method)
    assert_rel(md.regressor(model, q, qd, qdd) @ md.standard_parameters(model), tau, TOL, 'Y K')
