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

"""Closed loops (Khalil & Dombre, A5.3): a parallelogram's base parameters by hand derivation."""

import math
import os

from helpers import ROOT
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.identification import closures
import numpy as np
import pytest

LOOPS = os.path.join(ROOT, 'config', 'parallelogram_loops.yaml')


@pytest.fixture(scope='module')
def parallelogram():
    return md.load_model(robots.path('parallelogram'))


@pytest.mark.parametrize('method', ['energy', 'dynamic'])
def test_parallelogram_hand_derivation(parallelogram, method):
    """
    Crank and rocker turn alike (q3 = q1) and the coupler only translates (q2 = -q1).

    So the coupler's ZZ and first moments do nothing, its mass acts as a point at the crank tip,
    and the total energy is 1/2 (ZZc + ZZr + a^2 Mk) th'^2 + g ((MXc + MXr + a Mk) sin th + (MYc
    + MYr) cos th) with a = 0.3: three base parameters (the open tree has 9), and with friction
    on all three joints, Fv and Fc each of the three grouped: five.
    """
    base = md.base_parameters(parallelogram, loops=LOOPS, method=method)
    assert base.names == ('ZZ_crank_R', 'MX_crank_R', 'MY_crank_R')
    assert base.equations == ('ZZ_crank_R = ZZ_crank + 0.09 * M_coupler + ZZ_rocker',
                              'MX_crank_R = MX_crank + 0.3 * M_coupler + MX_rocker',
                              'MY_crank_R = MY_crank + MY_rocker')
    K = dict(zip(base.standard_names, md.standard_parameters(parallelogram)))
    np.testing.assert_allclose(base.values, [
        K['ZZ_crank'] + 0.09 * K['M_coupler'] + K['ZZ_rocker'],
        K['MX_crank'] + 0.3 * K['M_coupler'] + K['MX_rocker'],
        K['MY_crank'] + K['MY_rocker']], rtol=1e-9)
    assert base.check_error < 1e-9
    assert md.base_parameters(parallelogram, method=method).count == 9     # the open tree
    with_friction = md.base_parameters(parallelogram, loops=LOOPS, method=method, friction=True)
    assert with_friction.count == 5
    assert 'Fv_crank_joint_R = Fv_crank_joint + Fv_coupler_joint + Fv_rocker_joint' in \
        with_friction.equations


def test_closed_loop_torque_from_base_parameters(parallelogram):
    """The motor torque of the closed loop, G^T ID(q, qd, qdd), equals W_B K_B."""
    loops = closures.load_closures(parallelogram, LOOPS)
    base = md.base_parameters(parallelogram, loops=loops, friction=True)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, qdd, G = closures.complete(parallelogram, loops, rng.uniform(-0.8, 0.8, 1),
                                          rng.uniform(-2, 2, 1), rng.uniform(-3, 3, 1))
        np.testing.assert_allclose(q[1:], [-q[0], q[0]], atol=1e-12)     # the parallelogram
        tau = G.T @ md.inverse_dynamics(parallelogram, q, qd, qdd, friction=True)
        Y = G.T @ md.regressor(parallelogram, q, qd, qdd, friction=True)
        np.testing.assert_allclose(base.base_regressor(Y) @ base.values, tau, rtol=1e-9)


def four_bar(crank=0.3, coupler=0.7, rocker=0.5, ground=0.6):
    """Make a general planar four-bar (not a parallelogram) as a tree, in the vertical plane."""
    def body(length):
        return (f'<inertial><origin xyz="{length / 2} 0.02 0"/><mass value="{4 * length}"/>'
                '<inertia ixx="0.001" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/>'
                '</inertial>')
    xml = f"""<robot name="fourbar"><link name="world"/><link name="ground"/>
      <joint name="stand" type="fixed"><parent link="world"/><child link="ground"/>
        <origin rpy="1.5707963267948966 0 0"/></joint>
      <link name="crank">{body(crank)}</link><link name="coupler">{body(coupler)}</link>
      <link name="rocker">{body(rocker)}</link>
      <joint name="j1" type="revolute"><parent link="ground"/><child link="crank"/>
        <origin rpy="0 0 1.2"/><axis xyz="0 0 1"/>
        <limit lower="-0.6" upper="0.6" effort="1" velocity="1"/></joint>
      <joint name="j2" type="continuous"><parent link="crank"/><child link="coupler"/>
        <origin xyz="{crank} 0 0"/><axis xyz="0 0 1"/></joint>
      <joint name="j3" type="continuous"><parent link="ground"/><child link="rocker"/>
        <origin xyz="{ground} 0 0" rpy="0 0 1.5"/><axis xyz="0 0 1"/></joint></robot>"""
    loops = {'active': ['j1'], 'reference': {'j2': -0.8, 'j3': 0.2},
             'closures': [{'link_a': 'coupler', 'point_a': [coupler, 0, 0],
                           'link_b': 'rocker', 'point_b': [rocker, 0, 0]}]}
    return md.load_model(xml), loops


def test_general_four_bar_accelerations_are_consistent():
    """Accelerations from J qdd + Jdot qd = 0 keep the loop closed to third order in time."""
    model, spec = four_bar()
    loops = closures.load_closures(model, spec)
    q, qd, qdd, G = closures.complete(model, loops, np.array([0.3]), np.array([1.5]),
                                      np.array([-2.0]))
    assert np.abs(closures.constraints(model, loops, q)).max() < 1e-12
    assert np.abs(closures.constraint_jacobian(model, loops, q) @ qd).max() < 1e-12

    def residual(h):
        return np.abs(closures.constraints(model, loops, q + h * qd + 0.5 * h * h * qdd)).max()
    # a wrong Jdot qd leaves an h^2 error (ratio 4 when h halves); the right one h^3 (ratio 8)
    assert residual(1e-2) / residual(5e-3) > 7.0


@pytest.mark.parametrize('method', ['energy', 'dynamic'])
def test_general_four_bar_methods_agree(method):
    model, spec = four_bar()
    energy = md.base_parameters(model, loops=spec)
    base = md.base_parameters(model, loops=spec, method=method)
    assert base.independent == energy.independent
    assert 3 < base.count < md.base_parameters(model).count
    assert base.check_error < 1e-8


def test_branch_is_kept_near_singular_configurations(parallelogram):
    """
    Near the flat configuration, continuation keeps the parallelogram's branch.

    There a parallelogram meets its crossed branch; continuation from the reference keeps the
    parallelogram.
    """
    loops = closures.load_closures(parallelogram, LOOPS)
    q = closures.complete(parallelogram, loops, np.array([-1.0]), np.zeros(1), np.zeros(1))[0]
    np.testing.assert_allclose(q, [-1.0, 1.0, -1.0], atol=1e-9)


@pytest.mark.parametrize('spec, pattern', [
    ({'active': ['nope'], 'closures': []}, "active joint 'nope' is not a joint"),
    ({'active': ['crank_joint']}, 'closures need "closures"'),
    ({'closures': []}, 'closures need "active"'),
    ({'active': ['crank_joint'], 'closures': [{'link_a': 'coupler', 'point_a': [0, 0, 0],
                                               'link_b': 'moon', 'point_b': [0, 0, 0]}]},
     "link_b 'moon' is not a link"),
    ({'active': ['crank_joint'], 'closures': [{'link_a': 'coupler', 'point_a': [0, 0],
                                               'link_b': 'rocker', 'point_b': [0, 0, 0]}]},
     'point_a must be 3 finite numbers'),
    ({'active': ['crank_joint'], 'closures': [{'link_a': 'coupler', 'point_a': [0.6, 0, 0],
                                               'link_b': 'rocker', 'point_b': [0.3, 0, 0],
                                               'axis_a': [0, 0, 1]}]},
     'give both axis_a and axis_b'),
    ({'active': ['crank_joint'], 'bogus': 1, 'closures': []}, 'unknown closure keys: bogus'),
    ('active: [crank_joint\n', 'does not parse'),
])
def test_bad_closures(parallelogram, spec, pattern):
    with pytest.raises(closures.ClosureError, match=pattern):
        md.base_parameters(parallelogram, loops=spec)


def test_undetermined_passive_joints():
    arm = md.load_model(robots.path('demo_arm'))
    tip = closures.world_poses(arm, np.zeros(arm.n))[1][-1]
    spec = {'active': ['joint1'], 'closures': [{'link_a': 'link7', 'point_a': [0, 0, 0],
                                                'link_b': 'world', 'point_b': tip.tolist()}]}
    with pytest.raises(closures.ClosureError,
                       match=r'determine \d of the 6 passive joints \(joint2, joint3'):
        closures.load_closures(arm, spec)


def test_unreachable_active_position():
    """A crank that cannot turn through this angle: the loop cannot close, said clearly."""
    model, spec = four_bar(crank=0.5, coupler=0.25, rocker=0.3, ground=0.6)
    spec['reference'] = {}
    with pytest.raises(closures.ClosureError, match='cannot be closed at j1='):
        closures.load_closures(model, dict(spec, reference={'j1': math.pi}))


def test_too_few_samples_suggests_enough_for_the_loop(parallelogram):
    """The suggestion counts one torque row per active joint, not per joint of the tree."""
    import re
    with pytest.raises(ValueError, match='use at least') as caught:
        md.base_parameters(parallelogram, loops=LOOPS, method='dynamic', samples=2)
    least = int(re.search(r'use at least (\d+) samples', str(caught.value)).group(1))
    assert md.base_parameters(parallelogram, loops=LOOPS, method='dynamic',
                              samples=least).count == 3
