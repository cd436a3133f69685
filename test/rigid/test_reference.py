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
The numpy reference (rigid/reference.py) against the compiled kernels and against Pinocchio.

The reference needs nothing but numpy: where Pinocchio cannot be installed it is still an
oracle, and a reader checks the compiled kernels' equations against it.
"""

import inspect

from helpers import assert_rel, pin_robot, random_state
import manipulator_dynamics as md
from manipulator_dynamics.rigid import reference
import numpy as np
import pytest

TOL = 1e-9          # relative to the size of the result, as against Pinocchio


def assert_kernels_are_the_reference(model, rng, states=3):
    """Inverse dynamics, inertia matrix and forward dynamics (both methods) at random states."""
    for _ in range(states):
        q, qd, qdd = random_state(model, rng)
        assert_rel(reference.inverse_dynamics(model, q, qd, qdd),
                   md.inverse_dynamics(model, q, qd, qdd), TOL, 'tau')
        assert_rel(reference.inertia_matrix(model, q), md.inertia_matrix(model, q), TOL, 'M')
        tau = rng.uniform(-10, 10, model.n)
        for method in ('udut', 'cholesky'):
            assert_rel(reference.forward_dynamics(model, q, qd, tau),
                       md.forward_dynamics(model, q, qd, tau, method=method), 1e-8, method)


def test_the_reference_is_the_compiled_kernels(rigid):
    """Inverse dynamics, inertia matrix and forward dynamics: the same numbers, every robot."""
    assert_kernels_are_the_reference(rigid, np.random.default_rng(5))


def test_joints_about_each_coordinate_axis_and_any_other(tmp_path):
    """
    Joints about every kind of axis give the reference's numbers.

    Revolute joints about +x, +y and +z (the kernels' short path) and about -z, -y and a skew
    axis (Rodrigues'), prismatic ones too, each frame turned by its own rpy.
    """
    rng = np.random.default_rng(8)
    joints = [('revolute', '1 0 0'), ('revolute', '0 1 0'), ('revolute', '0 0 1'),
              ('revolute', '0 0 -1'), ('prismatic', '0 1 0'), ('revolute', '0.6 0 0.8'),
              ('revolute', '0 -1 0'), ('prismatic', '0.48 0.6 0.64'), ('continuous', '1 0 0')]
    text = '<robot name="axes"><link name="base"/>'
    for i, (kind, axis) in enumerate(joints, start=1):
        parent = 'base' if i == 1 else f'l{i - 1}'
        x, y, z = rng.uniform(-0.3, 0.3, 3)
        r, p, w = rng.uniform(-3, 3, 3)
        c = rng.uniform(-0.1, 0.1, 3)
        text += (f'<link name="l{i}"><inertial><origin xyz="{c[0]} {c[1]} {c[2]}"/>'
                 f'<mass value="{rng.uniform(0.5, 2)}"/><inertia ixx="0.02" ixy="0.001" '
                 'ixz="0" iyy="0.03" iyz="0.002" izz="0.025"/></inertial></link>'
                 f'<joint name="j{i}" type="{kind}"><parent link="{parent}"/>'
                 f'<child link="l{i}"/><origin xyz="{x} {y} {z}" rpy="{r} {p} {w}"/>'
                 f'<axis xyz="{axis}"/><limit lower="-3" upper="3" effort="50" velocity="2"/>'
                 '</joint>')
    path = tmp_path / 'axes.urdf'
    path.write_text(text + '</robot>')
    assert_kernels_are_the_reference(md.load_model(str(path)), rng)


@pytest.mark.parametrize('name', ['panda', 'ur5', 'baxter', 'pr2'])
def test_the_reference_is_pinocchio(name):
    """The reference alone against Pinocchio: what it says does not rest on the kernels."""
    model, ref = pin_robot(name)
    q, qd, qdd = random_state(model, np.random.default_rng(6))
    assert_rel(reference.inverse_dynamics(model, q, qd, qdd), ref.rnea(q, qd, qdd), TOL, 'tau')
    assert_rel(reference.inertia_matrix(model, q), ref.crba(q), TOL, 'M')
    tau = ref.rnea(q, qd, qdd)
    assert_rel(reference.forward_dynamics(model, q, qd, tau), ref.aba(q, qd, tau), 1e-8, 'qdd')


def test_each_algorithm_fits_on_a_screen():
    """The reference is read, not run: each algorithm is a loop out and a loop back, short."""
    for f, longest in ((reference.inverse_dynamics, 25), (reference.inertia_matrix, 25),
                       (reference.forward_dynamics, 40)):
        code = [line for line in inspect.getsource(f).split('\n')[2:] if line.strip()]
        assert len(code) <= longest, (f.__name__, len(code))


@pytest.mark.parametrize('n', [7, 40, 250])
def test_one_state_on_the_stack_or_too_long_for_it_is_the_batchs(n):
    """
    One state's scratch lives on the stack up to kinematics.STACK_DOUBLES per array.

    7 joints: all of it; 40: all but the n x n matrix of the Cholesky route; 250: Newton-Euler's
    planes and the articulated inertias on the heap too.  Each gives the batch path's numbers
    (heap scratch) and the reference's.
    """
    from manipulator_dynamics.robots import random_urdf
    model = md.load_model(random_urdf(3000 + n, n=n, branching=0.2, prismatic=0.2))
    rng = np.random.default_rng(n)
    q, qd, qdd = random_state(model, rng)
    tau = md.inverse_dynamics(model, q, qd, qdd)
    np.testing.assert_allclose(tau, md.inverse_dynamics(model, q[None], qd, qdd)[0], rtol=1e-12,
                               atol=1e-12 * np.abs(tau).max())
    assert_rel(reference.inverse_dynamics(model, q, qd, qdd), tau, TOL, 'tau')
    M = md.inertia_matrix(model, q)
    np.testing.assert_allclose(M, md.inertia_matrix(model, q[None])[0], rtol=1e-12,
                               atol=1e-12 * np.abs(M).max())
    for method in ('udut', 'cholesky'):
        qdd_one = md.forward_dynamics(model, q, qd, tau, method=method)
        np.testing.assert_allclose(qdd_one, md.forward_dynamics(model, q[None], qd, tau,
                                                                method=method)[0],
                                   rtol=1e-9, atol=1e-9 * np.abs(qdd).max())
        assert_rel(qdd, qdd_one, 1e-6, method)
