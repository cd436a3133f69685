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
Forward dynamics, both methods, checked as the inverse of inverse dynamics: no oracle needed.

``FD(q, qd, ID(q, qd, qdd)) = qdd`` with friction, rotor inertia and external wrenches, and
Saha's recursion (udut) agrees with the composite-link M and its Cholesky factors.
"""

from helpers import assert_rel, random_state
import manipulator_dynamics as md
import numpy as np
import pytest

METHODS = ('udut', 'cholesky', 'auto')


@pytest.mark.parametrize('method', METHODS)
def test_inverts_inverse_dynamics(rigid, method):
    rng = np.random.default_rng(1)
    q, qd, qdd = random_state(rigid, rng)
    for friction in (False, True):
        tau = md.inverse_dynamics(rigid, q, qd, qdd, friction=friction)
        assert_rel(md.forward_dynamics(rigid, q, qd, tau, method=method, friction=friction), qdd,
                   1e-9, f'friction={friction}')
    tau = md.inverse_dynamics(rigid, q, qd, qdd, armature=False)
    assert_rel(md.forward_dynamics(rigid, q, qd, tau, method=method, armature=False), qdd, 1e-9,
               'armature=False')


@pytest.mark.parametrize('method', METHODS)
def test_external_wrench(rigid, method):
    rng = np.random.default_rng(2)
    q, qd, qdd = random_state(rigid, rng)
    link = max(rigid.frames, key=lambda name: (rigid.frames[name].body, name))
    f_ext = {link: rng.uniform(-5, 5, 6)}
    tau = md.inverse_dynamics(rigid, q, qd, qdd, f_ext)
    assert_rel(md.forward_dynamics(rigid, q, qd, tau, f_ext, method=method), qdd, 1e-9, 'f_ext')


def test_methods_agree_with_M(rigid):
    """``qdd = M^-1 (tau - h)`` solved densely, against both recursions."""
    rng = np.random.default_rng(3)
    q, qd, _ = random_state(rigid, rng)
    tau = rng.uniform(-10, 10, rigid.n)
    dense = np.linalg.solve(md.inertia_matrix(rigid, q), tau - md.bias_forces(rigid, q, qd))
    for method in METHODS:
        assert_rel(md.forward_dynamics(rigid, q, qd, tau, method=method), dense, 1e-9, method)


@pytest.mark.parametrize('method', METHODS)
def test_batch_equals_single(rigid, method):
    rng = np.random.default_rng(4)
    q, qd, _ = random_state(rigid, rng, N=5)
    tau = rng.uniform(-10, 10, (5, rigid.n))
    qdd = md.forward_dynamics(rigid, q, qd, tau, method=method, friction=True)
    for s in range(len(q)):
        np.testing.assert_array_equal(
            qdd[s], md.forward_dynamics(rigid, q[s], qd[s], tau[s], method=method, friction=True))


def test_auto_picks_by_shape():
    """Long chains go to Saha's O(n) sweeps, short chains and bushy trees to Cholesky."""
    from manipulator_dynamics.robots import random_urdf
    from manipulator_dynamics.rigid.forward import choose_method

    def chain(n):
        return md.load_model(random_urdf(1000 + n, n=n, branching=0.0, fixed_links=0))

    assert choose_method(chain(6)) == 'cholesky'
    assert choose_method(chain(24)) == 'udut'
    assert choose_method(chain(48)) == 'udut'
    bushy = md.load_model(random_urdf(2048, n=48, branching=0.9, fixed_links=0))
    assert choose_method(bushy) == 'cholesky'
