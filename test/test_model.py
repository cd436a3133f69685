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

"""Loading a URDF: topology, merged fixed links, sub-tree selection, joint dynamics, limits."""

import os

from helpers import assert_rel, ERD, erd, PinRobot, random_state, ROOT
import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest

CONFIG = os.path.join(ROOT, 'config')


def test_demo_arm():
    model = md.load_model(robots.path('demo_arm'))
    assert model.n == 7 and model.is_chain()
    assert model.joint_names == tuple(f'joint{i}' for i in range(1, 8))
    assert model.base_link == 'world'
    # the flange (0.2 kg) is merged into link7 (0.3 kg); tool0 has no mass but keeps its frame
    assert model.inertial[6, 9] == pytest.approx(0.5)
    assert model.frames['tool0'].body == 6
    np.testing.assert_allclose(model.frames['tool0'].p, [0, 0, 0.065])
    np.testing.assert_allclose(model.viscous, [0.5, 0.5, 0.4, 0.4, 0.2, 0.1, 0.1])
    np.testing.assert_allclose(model.effort_limit[:2], [320, 320])
    assert model.frames['base_link'].body == -1


def test_gripper_variant_is_a_tree():
    model = md.load_model(robots.path('demo_arm_gripper'))
    assert model.n == 9 and not model.is_chain()
    fingers = [model.joint_index('left_finger_joint'), model.joint_index('right_finger_joint')]
    assert list(model.parent[fingers]) == [6, 6]
    assert list(model.joint_type[fingers]) == [md.model.PRISMATIC] * 2


def test_string_and_file_give_the_same_model():
    path = robots.path('demo_arm_gripper')
    a = md.load_model(path)
    with open(path) as f:
        b = md.load_model(f.read())
    for name in ('parent', 'joint_type', 'R_parent_joint', 'p_parent_joint', 'axis', 'inertial',
                 'viscous', 'coulomb'):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_model_is_frozen():
    model = md.load_model(robots.path('demo_arm'))
    with pytest.raises(ValueError):
        model.inertial[0, 0] = 1.0
    with pytest.raises(AttributeError):
        model.gravity = np.zeros(3)


def test_joint_dynamics_from_yaml_in_config():
    path = os.path.join(CONFIG, 'demo_arm_dynamics.yaml')
    model = md.load_model(robots.path('demo_arm'), joint_dynamics=path)
    assert np.all(model.armature > 0)
    base = md.load_model(robots.path('demo_arm'))
    M = md.inertia_matrix(model, np.zeros(7))
    np.testing.assert_allclose(M - md.inertia_matrix(base, np.zeros(7)), np.diag(model.armature),
                               atol=1e-15)


def test_joint_dynamics_override_keeps_other_fields():
    model = md.load_model(robots.path('demo_arm'),
                          joint_dynamics='joint_dynamics:\n  joint3: {coulomb: 1.5}\n')
    assert model.coulomb[2] == 1.5
    assert model.viscous[2] == 0.4 and model.coulomb[1] == 0.8 and model.armature[2] == 0


def test_friction_laws_round_trip_through_the_joint_dynamics_yaml():
    """Offsets (of either sign) and Coulomb velocities: read, written, read back the same."""
    model = md.load_model(robots.path('demo_arm'), joint_dynamics=(
        'joint_dynamics:\n  joint2: {offset: -0.25, coulomb_velocity: 0.05}\n'
        '  joint5: {offset: 0.1, armature: 0.02}\n'))
    assert model.friction_offset[1] == -0.25 and model.coulomb_velocity[1] == 0.05
    assert model.friction_offset[4] == 0.1 and model.coulomb_velocity[4] == 0.0
    assert model.coulomb[1] == 0.8                                     # the URDF's, kept
    text = md.write_joint_dynamics(model)
    again = md.load_model(robots.path('demo_arm'), joint_dynamics=text)
    for field in ('armature', 'friction_offset', 'coulomb_velocity', 'viscous', 'coulomb'):
        np.testing.assert_array_equal(getattr(again, field), getattr(model, field), field)
    names = md.parameter_names(model, friction=True, armature=False)  # offsets: Fo columns
    assert 'Fo_joint2' in names and len(names) == model.n * 13
    assert len(md.parameter_names(model.with_joint_dynamics(
        {j: {'offset': 0.0} for j in model.joint_names}), friction=True,
        armature=False)) == model.n * 12
    back = model.with_parameters([0.3, 0.01], ['Fo_joint3', 'Vs_joint3'])
    assert back.friction_offset[2] == 0.3 and back.coulomb_velocity[2] == 0.01
    with pytest.raises(ValueError, match="'Vs_joint3' = -1.0"):
        model.with_parameters([-1.0], ['Vs_joint3'])
    with pytest.raises(ValueError, match="friction must be one of False, True, 'offset'"):
        md.regressor(model, np.zeros(7), np.zeros(7), np.zeros(7), friction='smooth')


def test_continuous_joint_has_no_position_limits():
    xml = """<robot name="c"><link name="a"/><link name="b"><inertial><mass value="1"/>
      <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="wheel" type="continuous"><parent link="a"/><child link="b"/>
      <axis xyz="0 0 2"/><limit effort="5" velocity="3"/></joint></robot>"""
    model = md.load_model(xml)
    assert model.continuous[0] and np.isinf(model.lower[0]) and np.isinf(model.upper[0])
    np.testing.assert_allclose(model.axis[0], [0, 0, 1])      # normalised
    assert model.effort_limit[0] == 5


def test_meshes_are_never_touched():
    xml = """<robot name="m"><link name="a"/><link name="b">
      <visual><geometry><mesh filename="package://nowhere/missing.dae"/></geometry></visual>
      <collision><geometry><mesh filename="/does/not/exist.stl"/></geometry></collision>
      <inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>
      </inertial></link>
      <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""
    assert md.load_model(xml).n == 1


@pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed')
def test_mimic_joints_are_documented_not_enforced():
    model = md.load_model(erd('panda_description/urdf/panda.urdf'))
    assert model.mimic['panda_finger_joint2'] == md.model.Mimic('panda_finger_joint1', 1.0, 0.0)
    assert 'panda_finger_joint2' in model.joint_names      # still its own coordinate


@pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed')
def test_tip_links_lock_what_hangs_beyond():
    """Panda without finger joints: hand and locked fingers still load the arm, as in Pinocchio."""
    pin = pytest.importorskip('pinocchio')
    path = erd('panda_description/urdf/panda.urdf')
    full = md.load_model(path)
    arm = md.load_model(path, tip_links=['panda_link7'])
    assert arm.joint_names == full.joint_names[:7]
    assert arm.inertial[6, 9] == pytest.approx(full.inertial[6:, 9].sum())
    ref = PinRobot(pin, path, full)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, qd, qdd = random_state(arm, rng)
        q9, qd9, qdd9 = (np.r_[x, 0.0, 0.0] for x in (q, qd, qdd))
        assert_rel(md.inverse_dynamics(arm, q, qd, qdd), ref.rnea(q9, qd9, qdd9)[:7], 1e-9, 'tau')


def without_subtree(path, link):
    """Return the URDF text without ``link``, what is below it and their joints (ElementTree)."""
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    gone, grew = {link}, True
    while grew:
        below = {j.find('child').get('link') for j in root.iter('joint')
                 if j.find('parent').get('link') in gone}
        grew = not below <= gone
        gone |= below
    for element in list(root):
        if element.tag == 'link' and element.get('name') in gone or element.tag == 'joint' and \
                element.find('child').get('link') in gone:
            root.remove(element)
    return ET.tostring(root, encoding='unicode')


@pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed')
def test_a_link_not_mounted_is_left_out_with_everything_below():
    """
    Panda without its hand: as the URDF edited by hand, and as Pinocchio builds that URDF.

    The hand's 0.73 kg and its fingers leave link 7's body; the finger joints go.
    """
    pin = pytest.importorskip('pinocchio')
    path = erd('panda_description/urdf/panda.urdf')
    arm = md.load_model(path, without_links=['panda_hand'])
    edited = without_subtree(path, 'panda_hand')
    by_hand = md.load_model(edited)
    assert arm.joint_names == by_hand.joint_names == tuple(f'panda_joint{i}' for i in range(1, 8))
    np.testing.assert_array_equal(arm.inertial, by_hand.inertial)
    assert 'panda_hand' not in arm.frames and 'panda_leftfinger' not in arm.frames
    assert arm.inertial[6, 9] < md.load_model(path).inertial[6, 9] - 0.5         # kg
    ref = PinRobot(pin, edited, arm, xml=True)
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, qd, qdd = random_state(arm, rng)
        assert_rel(md.inverse_dynamics(arm, q, qd, qdd), ref.rnea(q, qd, qdd), 1e-9, 'tau')


@pytest.mark.parametrize('links, message', [
    (['gripper'], "without_links: 'gripper' is not a link of the URDF"),
    (['world'], "without_links: 'world' is not below root link 'world'"),
    (['link3', 'link5'], "without_links: 'link5' is not a link of the URDF \\(or is below"),
])
def test_links_left_out_are_checked(links, message):
    with pytest.raises(md.URDFError, match=message):
        md.load_model(robots.path('demo_arm'), without_links=links)


@pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed')
def test_root_link_selects_an_arm_on_a_mobile_base():
    path = erd('tiago_description/robots/tiago.urdf')
    arm = md.load_model(path, root_link='torso_lift_link', tip_links=['arm_7_link'],
                        check_inertia='warn')
    assert arm.joint_names == tuple(f'arm_{i}_joint' for i in range(1, 8))
    assert arm.base_link == 'torso_lift_link'


def test_tip_below_root_is_checked():
    with pytest.raises(md.URDFError, match="tip link 'link2' is not below root link 'link4'"):
        md.load_model(robots.path('demo_arm'), root_link='link4', tip_links=['link2'])


def test_model_with_no_joints():
    model = md.load_model('<robot name="r"><link name="only"/></robot>')
    assert model.n == 0
    assert md.inverse_dynamics(model, np.zeros(0), np.zeros(0), np.zeros(0)).shape == (0,)


def test_single_state_calls_follow_the_model_they_are_given():
    """
    One-state calls reach the compiled model by its address (``kernel_model``).

    The address must stay the model's own while any copy of it lives, and a new model must never
    read a freed one's.
    """
    import copy
    import gc

    def one_state_and_batch(model, seed):
        q, qd, qdd = random_state(model, np.random.default_rng(seed))
        tau = md.inverse_dynamics(model, q, qd, qdd)
        single = (tau, md.inertia_matrix(model, q), md.forward_dynamics(model, q, qd, tau))
        batch = (md.inverse_dynamics(model, q[None], qd[None], qdd[None])[0],
                 md.inertia_matrix(model, q[None])[0],
                 md.forward_dynamics(model, q[None], qd[None], tau[None])[0])
        return single, batch

    first = md.load_model(robots.random_urdf(21, n=5))
    md.inertia_matrix(first, np.zeros(first.n))          # builds its compiled model
    kept = copy.copy(first)
    del first
    for seed in range(20):                               # freed memory is reused by new models
        other = md.load_model(robots.random_urdf(100 + seed, n=3 + seed % 5))
        for single, batch in zip(*one_state_and_batch(other, seed)):
            np.testing.assert_array_equal(single, batch)
        del other
        gc.collect()
    for single, batch in zip(*one_state_and_batch(kept, 0)):
        np.testing.assert_array_equal(single, batch)
