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

"""Base parameters: counts against Pinocchio's regressor rank, textbook groupings, scaling."""

import math
import xml.etree.ElementTree as ET

from helpers import ERD, erd, PinRobot, random_state, TWO_LINK as P, two_link_urdf
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.identification.base_parameters import random_states
import numpy as np
import pytest

PIN_RANK_ROBOTS = {
    'panda': 'panda_description/urdf/panda.urdf',
    'ur5': 'ur_description/urdf/ur5_robot.urdf',
    'baxter': 'baxter_description/urdf/baxter.urdf',          # a 19-joint tree
    'kinova': 'kinova_description/robots/kinova.urdf',        # continuous joints
    'xarm7': 'xarm_description/urdf/xarm7.urdf',
    'solo12': 'solo_description/robots/solo12.urdf',           # four legs on one base
}


def pinocchio_rank(pin, path, model, rows_per_column=4, seed=11):
    """Rank of Pinocchio's stacked joint-torque regressor at random states (SVD, unit columns)."""
    ref = PinRobot(pin, path, model)
    rng = np.random.default_rng(seed)
    blocks = []
    for _ in range(math.ceil(rows_per_column * 10 * model.n / model.n)):
        q, qd, qdd = random_state(model, rng)
        blocks.append(pin.computeJointTorqueRegressor(ref.pm, ref.pd, ref.q(q), ref.v(qd),
                                                      ref.v(qdd)))
    W = np.vstack(blocks)
    norms = np.linalg.norm(W, axis=0)
    W = W[:, norms > 1e-10 * norms.max()]
    s = np.linalg.svd(W / np.linalg.norm(W, axis=0), compute_uv=False)
    # Numerical rank needs a rule: singular values below max(shape) eps s0 are zero, above
    # 1e-4 s0 not; in between, cut at the largest drop (URDF angles printed as 3.14159 leave
    # directions near 1e-9 that a fixed eps-tolerance would count and no experiment could see).
    floor = max(W.shape) * np.finfo(float).eps * s[0]
    sure = int(np.count_nonzero(s > 1e-4 * s[0]))
    candidates = list(range(sure, int(np.count_nonzero(s > floor)) + 1))
    return max(candidates, key=lambda k: s[k - 1] / max(s[k] if k < len(s) else 0.0,
                                                        floor * 1e-3))


@pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed')
@pytest.mark.parametrize('name', list(PIN_RANK_ROBOTS))
def test_count_equals_pinocchio_regressor_rank(name):
    pin = pytest.importorskip('pinocchio')
    path = erd(PIN_RANK_ROBOTS[name])
    model = md.load_model(path, check_inertia='ignore')
    rank = pinocchio_rank(pin, path, model)
    for method in ('energy', 'dynamic'):
        base = md.base_parameters(model, method=method)
        assert base.count == rank, (method, base.count, rank)
        assert base.check_error < 1e-9


def test_base_regressor_reproduces_torques_on_fresh_states():
    model = md.load_model(robots.path('demo_arm_gripper'))
    base = md.base_parameters(model, friction=True, armature=True)
    rng = np.random.default_rng(123)
    q, qd, qdd = random_state(model, rng, N=50)
    model = model.with_joint_dynamics({'joint1': {'armature': 0.3}})
    base = md.base_parameters(model, friction=True, armature=True)
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
    Y = md.regressor(model, q, qd, qdd, armature=True, friction=True)
    np.testing.assert_allclose(base.base_regressor(Y) @ base.values, tau, rtol=0,
                               atol=1e-9 * np.abs(tau).max())
    assert base.check_error < 1e-12


def test_energy_and_dynamic_methods_agree():
    model = md.load_model(robots.path('demo_arm_gripper'))
    a = md.base_parameters(model, method='energy', friction=True, armature=True)
    b = md.base_parameters(model, method='dynamic', friction=True, armature=True)
    assert a.names == b.names and a.independent == b.independent
    np.testing.assert_allclose(a.values, b.values, rtol=1e-9, atol=1e-12)
    assert a.no_effect == b.no_effect


def test_two_link_planar_arm_textbook():
    """Planar 2R arm with gravity in the plane: 6 base parameters, l1 and l1^2 groupings."""
    model = md.load_model(two_link_urdf(**P), gravity=(0, -9.81, 0))
    base = md.base_parameters(model)
    l1 = P['l1']
    assert base.names == ('ZZ_link1_R', 'MX_link1_R', 'MY_link1', 'ZZ_link2', 'MX_link2',
                          'MY_link2')
    assert base.equations[0] == f'ZZ_link1_R = ZZ_link1 + {l1 * l1:g} * M_link2'
    assert base.equations[1] == f'MX_link1_R = MX_link1 + {l1:g} * M_link2'
    K = md.standard_parameters(model).reshape(2, 10)
    m2 = P['m2']
    np.testing.assert_allclose(base.values, [K[0, 5] + l1 ** 2 * m2, K[0, 6] + l1 * m2, K[0, 7],
                                             K[1, 5], K[1, 6], K[1, 7]], rtol=1e-12, atol=1e-15)
    # the rest: XX, XY, XZ, YY, YZ (planar motion), MZ, and M_link1, M_link2 have no effect or
    # are grouped
    assert set(base.no_effect) | set(base.grouped) == set(base.standard_names) - set(
        base.independent)
    assert set(base.eliminated) == set(base.no_effect) | set(base.grouped)
    assert len(base.eliminated) + base.count == len(base.standard_names)
    assert 'M_link2' in base.grouped


def spatial_rrr(a=0.4):
    """RRR arm with z joint axes, frames as DH (alpha1 = 90 deg, a2 = a): the textbook's case."""
    body = ('<inertial><origin xyz="0.1 0.02 0.03"/><mass value="2"/><inertia ixx="0.02" '
            'ixy="0.001" ixz="0.002" iyy="0.03" iyz="0.003" izz="0.04"/></inertial>')
    return f"""<robot name="rrr"><link name="base"/><link name="l1">{body}</link>
      <link name="l2">{body}</link><link name="l3">{body}</link>
      <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/>
        <axis xyz="0 0 1"/></joint>
      <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/>
        <origin rpy="1.5707963267948966 0 0"/><axis xyz="0 0 1"/></joint>
      <joint name="j3" type="continuous"><parent link="l2"/><child link="l3"/>
        <origin xyz="{a} 0 0"/><axis xyz="0 0 1"/></joint></robot>"""


def test_revolute_chain_regrouping_rules():
    """Khalil's rules: YY_j into XX_j (XXR = XX - YY), M_j into the antecedent (parallel axes)."""
    a = 0.4
    base = md.base_parameters(md.load_model(spatial_rrr(a)))
    eq = dict(zip(base.names, base.equations))
    for j in (2, 3):
        assert f'XX_l{j}_R' in eq and f'- YY_l{j}' in eq[f'XX_l{j}_R'], eq
        assert f'YY_l{j}' in base.grouped
    # axes 2 and 3 parallel, a2 = a: M_l3 enters ZZ_l2 with a^2 and MX_l2 with a
    assert f'+ {a * a:g} * M_l3' in eq['ZZ_l2_R']
    assert f'+ {a:g} * M_l3' in eq['MX_l2_R']
    # the first joint is vertical: only ZZ of link 1 (with what links 2, 3 add) acts
    assert [n for n in base.names if n.endswith(('_l1', '_l1_R'))] == ['ZZ_l1_R']
    assert {'XX_l1', 'XY_l1', 'XZ_l1', 'YY_l1', 'YZ_l1', 'MX_l1', 'MY_l1', 'MZ_l1',
            'M_l1'} <= set(base.no_effect)
    assert base.count == 15      # 3R spatial arm, DH-like frames: 15 base parameters


def scaled_urdf(path, s):
    """Scale the URDF at ``path``: every length multiplied by ``s`` (masses kept, inertias s^2)."""
    root = ET.parse(path).getroot()
    for origin in root.iter('origin'):
        if origin.get('xyz'):
            origin.set('xyz', ' '.join(str(float(v) * s) for v in origin.get('xyz').split()))
    for inertia in root.iter('inertia'):
        for key, value in inertia.attrib.items():
            inertia.set(key, str(float(value) * s * s))
    for limit in root.iter('limit'):
        parent = None
        for joint in root.iter('joint'):
            if limit in list(joint):
                parent = joint
        if parent is not None and parent.get('type') == 'prismatic':
            for key in ('lower', 'upper'):
                limit.set(key, str(float(limit.get(key)) * s))
    return ET.tostring(root, encoding='unicode')


@pytest.mark.parametrize('method', ['energy', 'dynamic'])
def test_rank_is_independent_of_units(method):
    """The demo arm at 1 mm scale has the base parameters of the full-size one."""
    normal = md.base_parameters(md.load_model(robots.path('demo_arm_gripper')), method=method)
    tiny = md.base_parameters(md.load_model(scaled_urdf(robots.path('demo_arm_gripper'), 1e-3)),
                              method=method)
    assert tiny.independent == normal.independent
    assert tiny.check_error < 1e-9


def tilted_planar_arm(tilt):
    """Make the 2-link planar arm with joint 2's axis tilted out of its plane by ``tilt`` rad."""
    xml = two_link_urdf(**P).replace(
        '<origin xyz="0.8 0 0"/><axis xyz="0 0 1"/>',
        f'<origin xyz="0.8 0 0"/><axis xyz="0 {math.sin(tilt):.17g} {math.cos(tilt):.17g}"/>')
    return md.load_model(xml, gravity=(0, -9.81, 0))


@pytest.mark.parametrize('method', ['energy', 'dynamic'])
@pytest.mark.parametrize('tilt', [1e-2, 1e-3])
def test_weak_base_directions_are_counted(method, tilt):
    """
    A tilt makes link 2's out-of-plane inertias identifiable, weakly (effects ~ tilt^2).

    Coplanar axes give the textbook 6 base parameters, any tilt the generic 10; with tilt 1e-2 the
    smallest direction of W_B is about 3e-6 of the largest, with 1e-3 about 3e-8: still 10.
    """
    assert md.base_parameters(tilted_planar_arm(0.0), method=method).count == 6
    generic = md.base_parameters(tilted_planar_arm(0.3), method=method)
    base = md.base_parameters(tilted_planar_arm(tilt), method=method)
    assert base.count == generic.count == 10
    assert base.rank_gap > 1e6 and base.check_error < 1e-9
    # the test means something: W_B's smallest direction is below 1e-5 of its largest
    model = tilted_planar_arm(tilt)
    q, qd, qdd = random_states(model, np.random.default_rng(0), 400)
    WB = base.base_regressor(md.regressor(model, q, qd, qdd)).reshape(-1, base.count)
    s = np.linalg.svd(WB, compute_uv=False)
    assert s[-1] / s[0] < 1e-5


def test_to_dict_and_yaml():
    import yaml
    base = md.base_parameters(md.load_model(two_link_urdf(**P), gravity=(0, -9.81, 0)))
    data = yaml.safe_load(base.to_yaml())
    assert data['count'] == 6 and data['method'] == 'energy' and data['seed'] == 0
    assert data['parameters'][0] == {'name': 'ZZ_link1_R', 'value': pytest.approx(base.values[0]),
                                     'equation': base.equations[0]}


def test_reproducible_with_seed():
    model = md.load_model(robots.path('demo_arm'))
    a, b = md.base_parameters(model, seed=3), md.base_parameters(model, seed=3)
    np.testing.assert_array_equal(a.values, b.values)


def test_urdf_without_inertials():
    """The structure of the base parameters does not depend on the masses; the values are 0."""
    bare = ET.fromstring(spatial_rrr())
    for link in bare.iter('link'):
        for inertial in link.findall('inertial'):
            link.remove(inertial)
    model = md.load_model(ET.tostring(bare, encoding='unicode'))
    with pytest.warns(UserWarning, match='links l1, l2, l3 have no mass or inertia'):
        base = md.base_parameters(model)
    assert base.count == md.base_parameters(md.load_model(spatial_rrr())).count
    np.testing.assert_array_equal(base.values, 0.0)


def test_model_without_joints():
    with pytest.raises(ValueError, match="model 'r' has no joints"):
        md.base_parameters(md.load_model('<robot name="r"><link name="b"/></robot>'))


def test_bad_arguments():
    model = md.load_model(robots.path('demo_arm'))
    with pytest.raises(ValueError, match="method must be 'energy' or 'dynamic'"):
        md.base_parameters(model, method='svd')
    with pytest.raises(ValueError, match='samples must be a positive number'):
        md.base_parameters(model, samples=0)
    with pytest.raises(ValueError, match=r'10 samples give 10 rows of W for \d+ parameters'):
        md.base_parameters(model, samples=10)


def planar_arm_with_range(lower, upper):
    """Make the 2-link planar arm, gravity in its plane, joint 1 limited to ``[lower, upper]``."""
    xml = two_link_urdf(**P).replace('<limit lower="-3" upper="3"',
                                     f'<limit lower="{lower}" upper="{upper}"', 1)
    # link 1's centre of mass off its x axis: MY_link1, which only gravity shows, is not 0
    xml = xml.replace(f'<origin xyz="{P["lc1"]} 0 0"/>', f'<origin xyz="{P["lc1"]} 0.1 0"/>')
    return md.load_model(xml, gravity=(0, -9.81, 0))


@pytest.mark.parametrize('method', ['energy', 'dynamic'])
def test_a_joint_with_an_empty_range_is_drawn_over_a_turn(method):
    """``lower == upper`` (an exporter's unset limits): the base parameters of the free arm."""
    free = md.base_parameters(planar_arm_with_range(-3, 3), method=method)
    base = md.base_parameters(planar_arm_with_range(0, 0), method=method)
    assert base.names == free.names and 'MY_link1' in free.names and free.count == 6
    assert base.check_error < 1e-12


@pytest.mark.parametrize('method', ['energy', 'dynamic'])
def test_base_parameters_that_miss_the_dynamics_are_said_to(method):
    """A range too narrow to show what only gravity shows of joint 1: a warning, not quiet."""
    with pytest.warns(UserWarning, match=r'reproduce its dynamics on fresh random states only '
                      r'to [0-9.e-]+ .*a joint range too narrow'):
        base = md.base_parameters(planar_arm_with_range(0, 1e-12), method=method)
    assert base.check_error > 1e-8
