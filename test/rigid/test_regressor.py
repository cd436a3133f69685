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
The regressor of the standard parameters, checked against inverse dynamics: no oracle needed.

``ID(q, qd, qdd) = Y(q, qd, qdd) K`` with every default (rotor inertias count where the model has
them), with friction, and for any K: the regressor depends on the kinematics only.
"""

from helpers import assert_rel, random_state
import manipulator_dynamics as md
import numpy as np
import pytest


def test_regressor_times_parameters_is_inverse_dynamics(rigid):
    rng = np.random.default_rng(1)
    q, qd, qdd = random_state(rigid, rng)
    assert_rel(md.regressor(rigid, q, qd, qdd) @ md.standard_parameters(rigid),
               md.inverse_dynamics(rigid, q, qd, qdd), 1e-11, 'defaults')
    Y = md.regressor(rigid, q, qd, qdd, armature=True, friction=True)
    K = md.standard_parameters(rigid, armature=True, friction=True)
    assert_rel(Y @ K, md.inverse_dynamics(rigid, q, qd, qdd, friction=True), 1e-11, 'friction')
    assert Y.shape == (rigid.n, len(md.parameter_names(rigid, armature=True, friction=True)))


def test_armature_default_follows_the_model(rigid):
    names = md.parameter_names(rigid)
    assert any(n.startswith('Ia_') for n in names) == bool(rigid.armature.any())


def test_any_parameters(rigid):
    """Y does not depend on the inertial parameters: other masses, same Y, ID = Y K' again."""
    rng = np.random.default_rng(2)
    q, qd, qdd = random_state(rigid, rng)
    heavier = md.Model(**{**{k: getattr(rigid, k) for k in rigid.__dataclass_fields__
                             if rigid.__dataclass_fields__[k].init},
                          'inertial': rigid.inertial * 2.5})
    Y = md.regressor(rigid, q, qd, qdd, armature=False)
    np.testing.assert_array_equal(Y, md.regressor(heavier, q, qd, qdd, armature=False))
    assert_rel(Y @ md.standard_parameters(heavier, armature=False),
               md.inverse_dynamics(heavier, q, qd, qdd, armature=False), 1e-11, 'K x 2.5')


def test_batch_equals_single(rigid):
    rng = np.random.default_rng(3)
    q, qd, qdd = random_state(rigid, rng, N=4)
    Y = md.regressor(rigid, q, qd, qdd, friction=True)
    for s in range(len(q)):
        np.testing.assert_array_equal(Y[s], md.regressor(rigid, q[s], qd[s], qdd[s],
                                                         friction=True))


@pytest.mark.parametrize('friction', [True, 'offset'])
def test_some_columns_alone_are_those_of_the_whole_regressor(friction):
    """
    ``columns``: ``Y[..., columns]`` to the bit, in any order, with coupled motors and rotors.

    A column the motors write (``Ia`` of a motor's joint, ``Fvm``, ``Fcm``) left out or kept;
    a repeated or out-of-range column refused.
    """
    from helpers import coupled
    from manipulator_dynamics import robots
    model = coupled(md.load_model(robots.path('demo_arm')))
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.normal(size=(3, 300, model.n))
    Y = md.regressor(model, q, qd, qdd, armature=True, friction=friction)
    p = Y.shape[-1]
    for columns in (rng.permutation(p)[:p // 2], np.arange(p)[::-1], np.array([p - 1, 3])):
        np.testing.assert_array_equal(
            md.regressor(model, q, qd, qdd, armature=True, friction=friction,
                         columns=columns), Y[..., columns])
    np.testing.assert_array_equal(md.regressor(model, q[0], qd[0], qdd[0], armature=True,
                                               friction=friction, columns=[p - 2, 0]),
                                  Y[0][:, [p - 2, 0]])
    for wrong in ([0, 0], [p], [-1], [0.5]):
        with pytest.raises(ValueError, match='columns must be distinct integers'):
            md.regressor(model, q, qd, qdd, armature=True, friction=friction, columns=wrong)
