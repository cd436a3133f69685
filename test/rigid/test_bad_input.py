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

"""Bad input: every error names what is wrong (which joint, link, argument or element)."""

import manipulator_dynamics as md
import numpy as np
import pytest

INERTIA = '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'


def robot(links, joints):
    return f'<robot name="bad">{links}{joints}</robot>'


def link(name, mass=1.0, inertia=INERTIA):
    return f'<link name="{name}"><inertial><mass value="{mass}"/>{inertia}</inertial></link>'


def joint(name, parent, child, kind='revolute'):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')


CHAIN = robot('<link name="base"/>' + link('a') + link('b'),
              joint('j1', 'base', 'a') + joint('j2', 'a', 'b'))


@pytest.mark.parametrize('xml, error, pattern', [
    ('<robot name="x"><link name="a"></robot>', md.URDFError, 'not well-formed XML.*line 1'),
    ('<model/>', md.URDFError, 'root element must be <robot>'),
    (robot('<link name="base"/>' + link('a'), joint('j1', 'base', 'ghost')), md.URDFError,
     "joint 'j1' names child link 'ghost'"),
    (robot(link('a') + link('b') + link('c'),
           joint('j1', 'a', 'b') + joint('j2', 'b', 'c') + joint('j3', 'c', 'a')),
     md.URDFError, 'cycle through links'),
    (robot(link('a') + link('b') + link('c'), joint('j1', 'a', 'c') + joint('j2', 'b', 'c')),
     md.URDFError, "link 'c' is the child of two joints, 'j1' and 'j2'"),
    (robot(link('a') + link('b') + link('c'), joint('j1', 'a', 'b')), md.URDFError,
     r'2 root links \(a, c\)'),
    (robot(link('a') + link('a'), ''), md.URDFError, "link 'a' is defined twice"),
    (robot('<link name="base"/>' + link('a', mass=-2.0), joint('j1', 'base', 'a')),
     md.InertiaError, "link 'a': mass must be finite and >= 0, got -2"),
    (robot('<link name="base"/>' + link('a', inertia=INERTIA.replace('ixy="0"', 'ixy="2"')),
           joint('j1', 'base', 'a')),
     md.InertiaError, "link 'a': inertia tensor is not positive semi-definite"),
    (robot('<link name="base"/>' + link('a', inertia=INERTIA.replace('izz="1"', 'izz="3"')),
           joint('j1', 'base', 'a')),
     md.InertiaError, "link 'a': inertia tensor violates the triangle inequality"),
    (robot('<link name="base"/>' + link('a'), joint('j1', 'base', 'a', 'floating')),
     md.URDFError, "joint 'j1' is floating.*root_link='a'"),
    (robot('<link name="base"/>' + link('a'), joint('j1', 'base', 'a', 'planar')),
     md.URDFError, "joint 'j1' is planar"),
    (robot('<link name="base"/>' + link('a'),
           '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>'
           '<axis xyz="0 0 0"/></joint>'), md.URDFError, "joint 'j1' has a zero"),
    (robot('<link name="base"/><link name="a"><inertial><mass value="heavy"/></inertial></link>',
           joint('j1', 'base', 'a')), md.URDFError, 'heavy'),
])
def test_bad_urdf(xml, error, pattern):
    with pytest.raises(error, match=pattern):
        md.load_model(xml)


def test_inertia_check_can_be_relaxed():
    bad = INERTIA.replace('izz="1"', 'izz="3"')
    xml = robot('<link name="base"/>' + link('a', inertia=bad), joint('j1', 'base', 'a'))
    with pytest.warns(md.InertiaWarning, match="link 'a'") as warned:
        assert md.load_model(xml, check_inertia='warn').n == 1
    assert warned[0].filename == __file__         # points at the caller's line, not inside
    assert md.load_model(xml, check_inertia='ignore').n == 1
    with pytest.raises(ValueError, match='check_inertia'):
        md.load_model(xml, check_inertia='maybe')


def test_missing_file():
    with pytest.raises(FileNotFoundError, match='no_such.urdf'):
        md.load_model('/tmp/no_such.urdf')


def test_zero_mass_tip_makes_M_singular():
    xml = robot('<link name="base"/>' + link('a') + '<link name="tip"/>',
                joint('j1', 'base', 'a') + joint('j2', 'a', 'tip'))
    model = md.load_model(xml)          # loads: inverse dynamics and gravity are still defined
    assert md.gravity_torques(model, np.zeros(2)).shape == (2,)
    for method in ('udut', 'cholesky', 'auto'):
        with pytest.raises(md.SingularInertiaError, match="joint 'j2' moves no inertia"):
            md.forward_dynamics(model, np.zeros(2), np.zeros(2), np.zeros(2), method=method)
    with pytest.raises(md.SingularInertiaError, match="joint 'j2'"):
        md.udut(model, np.zeros(2))
    # an armature makes it regular again
    fixed = model.with_joint_dynamics({'j2': {'armature': 0.01}})
    assert np.all(np.isfinite(md.forward_dynamics(fixed, np.zeros(2), np.zeros(2), np.ones(2))))


@pytest.mark.parametrize('call', [
    lambda m, x: md.inverse_dynamics(m, x, np.zeros(7), np.zeros(7)),
    lambda m, x: md.inertia_matrix(m, x),
    lambda m, x: md.gravity_torques(m, x),
    lambda m, x: md.udut(m, x),
    lambda m, x: md.regressor(m, x, np.zeros(7), np.zeros(7)),
    lambda m, x: md.forward_dynamics(m, x, np.zeros(7), np.zeros(7)),
])
@pytest.mark.parametrize('bad', [np.zeros(6), np.zeros((3, 6)), np.zeros((2, 3, 7)), np.zeros(0)])
def test_wrong_shapes_name_the_argument(arm, call, bad):
    with pytest.raises(ValueError, match=r'q must have shape \(7,\) or \(N, 7\) for the 7 joints '
                                         r"of 'demo_arm'.*got shape"):
        call(arm, bad)


def test_mismatched_batches(arm):
    with pytest.raises(ValueError, match='qd has 4 samples but an earlier argument has 3'):
        md.inverse_dynamics(arm, np.zeros((3, 7)), np.zeros((4, 7)), np.zeros(7))


@pytest.mark.parametrize('value', [np.nan, np.inf, -np.inf])
def test_non_finite_input_names_the_element(arm, value):
    q = np.zeros((5, 7))
    q[3, 2] = value
    with pytest.raises(ValueError, match=rf"q\[3, 2\] \(sample 3\) is {value} for joint 'joint3'"):
        md.inertia_matrix(arm, q)
    qd = np.zeros(7)
    qd[4] = value
    with pytest.raises(ValueError, match=rf"qd\[4\] is {value} for joint 'joint5'"):
        md.inverse_dynamics(arm, np.zeros(7), qd, np.zeros(7))
    with pytest.raises(ValueError, match=rf"tau\[4\] is {value} for joint 'joint5'"):
        md.forward_dynamics(arm, np.zeros(7), np.zeros(7), qd)
    with pytest.raises(ValueError, match=rf'qd\[4\] is {value}'):
        md.regressor(arm, np.zeros(7), qd, np.zeros(7))


def test_non_numeric_input(arm):
    with pytest.raises(TypeError, match='q must be an array of numbers'):
        md.gravity_torques(arm, ['a'] * 7)


def test_external_wrench_errors(arm):
    z = np.zeros(7)
    with pytest.raises(ValueError, match="f_ext names link 'nowhere'"):
        md.inverse_dynamics(arm, z, z, z, f_ext={'nowhere': np.zeros(6)})
    with pytest.raises(ValueError, match=r"f_ext\['tool0'\] must have shape \(6,\)"):
        md.inverse_dynamics(arm, z, z, z, f_ext={'tool0': np.zeros(3)})
    with pytest.raises(ValueError, match=r"f_ext\['tool0'\] has non-finite"):
        md.inverse_dynamics(arm, z, z, z, f_ext={'tool0': [np.nan] * 6})


def test_unknown_forward_method(arm):
    with pytest.raises(ValueError, match="method must be 'auto', 'udut' or 'cholesky'"):
        md.forward_dynamics(arm, np.zeros(7), np.zeros(7), np.zeros(7), method='lu')


@pytest.mark.parametrize('text, pattern', [
    ('joint9: {armature: 1}', "names joint 'joint9'"),
    ('joint1: {armature: -1}', "'joint1': armature must be finite and >= 0"),
    ('joint1: {inertia: 1}', "'joint1': unknown field 'inertia'"),
    ('joint1: {viscous: lots}', "'joint1': viscous must be a number"),
    ('joint2: {coulomb_velocity: -0.1}', "'joint2': coulomb_velocity must be finite and >= 0"),
    ('joint2: {offset: .nan}', "'joint2': offset must be finite, got nan"),
    ('joint1: [1, 2]', "joint dynamics of 'joint1' must be a mapping"),
    ('[1, 2]', 'must be a mapping of joint name'),
    ('joint1: {a: [}', 'does not parse'),
])
def test_bad_joint_dynamics(arm, text, pattern):
    with pytest.raises(md.URDFError, match=pattern):
        arm.with_joint_dynamics(text)
