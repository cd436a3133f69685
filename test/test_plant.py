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

"""The plants of sim_node: MuJoCo, an independent implementation, against the package."""

import dataclasses
import os
import warnings
import xml.etree.ElementTree as ET

from helpers import demo_arm_without_inertial, ERD, erd, erd_urdfs, needs_erd, ROOT
import manipulator_dynamics as md
from manipulator_dynamics import plant as plants, robots
import numpy as np
import pytest

mujoco = pytest.importorskip('mujoco', reason='MuJoCo is the independent plant: pip install '
                             'mujoco (the test extra installs it)')

CONFIG = os.path.join(ROOT, 'config')
DEMO_DYNAMICS = os.path.join(CONFIG, 'demo_arm_dynamics.yaml')
ARMS = ['panda_description/urdf/panda.urdf', 'ur_description/urdf/ur5_robot.urdf',
        'kinova_description/robots/kinova.urdf', 'z1_description/urdf/z1.urdf',
        'xarm_description/urdf/xarm7.urdf', 'so_arm_description/urdf/so101.urdf',
        'talos_data/robots/talos_left_arm.urdf']


def load(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', md.InertiaWarning)
        return md.load_model(path, check_inertia='warn', **kwargs)


def mujoco_dynamics(model, q, qd, friction=False):
    """Return MuJoCo's M(q) and bias forces C(q, qd) qd + g(q), in the model's joint order."""
    mj, qpos, dof = plants.mujoco_model(model, friction=friction)
    data = mujoco.MjData(mj)
    data.qpos[qpos], data.qvel[dof] = q, qd
    mujoco.mj_forward(mj, data)
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, data, M)
    return M[np.ix_(dof, dof)], data.qfrc_bias[dof].copy()


def moments_refused_by_mujoco(path, link):
    """
    Check independently (ElementTree, numpy) that MuJoCo has reason to refuse ``link``.

    A missing mass or a zero moment is not one: the plant gives those MuJoCo's least.  A
    negative moment, or moments that break the triangle inequality, are.
    """
    for element in ET.parse(path).getroot().iter('link'):
        if element.get('name') != link:
            continue
        inertia = element.find('inertial/inertia')
        assert inertia is not None, f'{link} has no inertia for MuJoCo to refuse'
        v = {k: float(inertia.get(k, 0)) for k in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')}
        ev = np.linalg.eigvalsh([[v['ixx'], v['ixy'], v['ixz']], [v['ixy'], v['iyy'], v['iyz']],
                                 [v['ixz'], v['iyz'], v['izz']]])
        return ev[0] < 0 or ev[0] + ev[1] < ev[2] * (1 - 1e-12)
    raise AssertionError(f'no link {link} in {path}')


@needs_erd
@pytest.mark.parametrize('path', erd_urdfs(), ids=lambda p: os.path.relpath(p, ERD or ''))
def test_mujoco_equals_the_package_on_every_robot_it_takes(path):
    """M and bias forces of MuJoCo's own URDF import equal the package's to 1e-12, by name."""
    try:
        model = load(path)
    except md.URDFError:
        pytest.skip('the package does not load this file (test_example_robot_data says why)')
    if model.n == 0:                          # nothing moves: nor does MuJoCo's model
        assert len(plants.mujoco_model(model)[2]) == 0
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', UserWarning)      # links given MuJoCo's floor
            plants.mujoco_model(model)
    except plants.PlantError as e:
        if 'neither engine' in str(e):                # M singular: the package refuses it too
            with pytest.raises(md.SingularInertiaError):
                md.forward_dynamics(model, np.zeros(model.n), np.zeros(model.n),
                                    np.zeros(model.n))
            return
        link = str(e).split("link '")[1].split("'")[0]
        assert moments_refused_by_mujoco(path, link), e
        assert model.frames[link].body >= 0, f'{link} never moves: its inertia is no matter'
        assert 'engine:=internal' in str(e)
        return
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)
        assert_mujoco_is_the_package(model)


def test_joint_dynamics_become_mujocos():
    """Armature, viscous and Coulomb friction of the URDF and the YAML, joint by joint."""
    model = load(robots.path('demo_arm'), joint_dynamics=DEMO_DYNAMICS)
    mj, _, dof = plants.mujoco_model(model)
    np.testing.assert_array_equal(mj.dof_armature[dof], model.armature)
    np.testing.assert_array_equal(mj.dof_damping[dof], model.viscous)
    np.testing.assert_array_equal(mj.dof_frictionloss[dof], model.coulomb)
    assert model.armature.any() and model.viscous.any() and model.coulomb.any()
    q = np.linspace(-0.5, 0.5, model.n)
    M, _ = mujoco_dynamics(model, q, np.zeros(model.n))
    np.testing.assert_allclose(M, md.inertia_matrix(model, q), atol=1e-12)   # armature too
    frictionless, _, _ = plants.mujoco_model(model, friction=False)
    assert not frictionless.dof_damping.any() and not frictionless.dof_frictionloss.any()
    plant = plants.MujocoPlant(model, 0.0, 1e-3)
    plant.set_friction(False)
    assert not plant.mj.dof_damping.any()
    plant.set_friction(True)
    np.testing.assert_array_equal(plant.mj.dof_frictionloss[plant._dof], model.coulomb)


def test_mujoco_simulates_the_models_inertials_not_only_its_urdfs():
    """A payload carried, identified parameters put in: MuJoCo's M and bias are the model's."""
    model = load(robots.path('demo_arm'))
    carrying = model.with_payload(model.link_names[-1], 1.5, (0.02, 0.0, 0.05),
                                  [2e-3, 0.0, 0.0, 3e-3, 0.0, 1e-3])
    q, qd = np.linspace(-0.5, 0.5, model.n), np.linspace(0.3, -0.2, model.n)
    for m in (model, carrying, model.with_parameters(
            md.standard_parameters(carrying), md.parameter_names(carrying))):
        M, bias = mujoco_dynamics(m, q, qd)
        np.testing.assert_allclose(M, md.inertia_matrix(m, q), atol=1e-12)
        np.testing.assert_allclose(bias, md.inverse_dynamics(m, q, qd, 0 * qd), atol=1e-10)
    heavier = md.inertia_matrix(carrying, q) - md.inertia_matrix(model, q)
    assert np.abs(heavier).max() > 1e-2                # the payload is felt
    broken = model.inertial.copy()
    broken[-1, :6] = -1.0                              # no body's: refused, naming it
    with pytest.raises(plants.PlantError, match='not physically realisable'):
        plants.mujoco_model(dataclasses.replace(model, inertial=broken))


@pytest.mark.parametrize('link', ['link7', 'link4'])
def test_a_load_picked_up_while_mujoco_runs_is_the_models_payload(link):
    """carry: MuJoCo's M and bias after the pick-up are the model's with_payload, to 1e-12."""
    model = load(robots.path('demo_arm'))
    q, qd = np.linspace(-0.5, 0.5, model.n), np.linspace(0.3, -0.2, model.n)
    load_ = (2.5, (0.06, -0.08, 0.05), [4e-3, 1e-4, -2e-4, 5e-3, 3e-4, 3e-3])
    carrying = model.with_payload(link, *load_)
    plant = plants.MujocoPlant(model, q, 1e-3, friction=False)
    plant.data.qvel[plant._dof] = qd
    plant.carry(link, *load_)
    mujoco.mj_forward(plant.mj, plant.data)
    M = np.zeros((plant.mj.nv, plant.mj.nv))
    mujoco.mj_fullM(plant.mj, plant.data, M)
    dof = plant._dof
    np.testing.assert_allclose(M[np.ix_(dof, dof)], md.inertia_matrix(carrying, q), atol=1e-12)
    np.testing.assert_allclose(plant.data.qfrc_bias[dof],
                               md.inverse_dynamics(carrying, q, qd, 0 * qd), atol=1e-10)
    internal = plants.InternalPlant(model, q, 1e-3, friction=False)
    internal.carry(link, *load_)
    assert np.array_equal(internal.model.inertial, carrying.inertial)
    for bad, complaint in ((('nolink', 1.0), "'nolink' is not a link"),
                           ((link, -1.0), 'mass must be finite and >= 0')):
        with pytest.raises(ValueError, match=complaint):
            plant.carry(*bad)


@pytest.mark.parametrize('engine', ['internal', 'mujoco'])
def test_friction_offsets_and_smooth_laws_act_in_the_plant(engine):
    """
    What a MuJoCo joint has no element for acts too: held still by ``g(q) + Fo``, it holds.

    The demo arm with an offset and a smooth Coulomb law on every joint: commanded ``g(q)``
    plus the offsets, it stays put for 1 s (every joint at rest: the smooth law gives no
    friction); commanded ``g(q)`` alone, the offsets drive it.  Then a motion under constant
    efforts, with the smooth law sliding: both engines land within 1e-4 rad of each other.
    """
    if engine == 'mujoco' and not plants.mujoco_available():
        pytest.skip('mujoco is not installed (dev.py test installs it)')
    arm = load(robots.path('demo_arm'), joint_dynamics=DEMO_DYNAMICS)
    model = arm.with_joint_dynamics({j: {'offset': 0.3 * (-1) ** i, 'coulomb_velocity': 0.05}
                                     for i, j in enumerate(arm.joint_names)})
    q0 = np.linspace(-0.4, 0.4, model.n)
    hold = md.gravity_torques(model, q0) + model.friction_offset
    plant = plants.make_plant(engine, model, q0, 1e-3)
    for _ in range(1000):
        plant.step(hold)
    assert np.abs(plant.q - q0).max() < 1e-6, np.abs(plant.q - q0).max()
    plant = plants.make_plant(engine, model, q0, 1e-3)
    for _ in range(200):
        plant.step(hold - model.friction_offset)
    assert np.abs(plant.q - q0).max() > 1e-3


def test_the_engines_agree_under_smooth_friction():
    """
    Constant efforts, offsets and smooth Coulomb laws sliding: MuJoCo as the package.

    MuJoCo takes the smooth law's part beyond its slope at rest as a force held over each
    substep: first order in the substep (0.25 ms, the auto substeps of this law: 4.7 mrad
    after 0.3 s; 0.1 ms: 1.9 mrad), where the package's RK4 evaluates the law in every stage.
    """
    if not plants.mujoco_available():
        pytest.skip('mujoco is not installed (dev.py test installs it)')
    base = load(robots.path('demo_arm'))
    model = base.with_joint_dynamics({j: {'offset': 0.2, 'coulomb_velocity': 0.1}
                                      for j in base.joint_names})
    q0 = np.linspace(-0.4, 0.4, model.n)
    tau = md.gravity_torques(model, q0) + 0.5
    ours = plants.make_plant('internal', model, q0, 1e-3)
    theirs = plants.make_plant('mujoco', model, q0, 1e-3)
    finer = plants.make_plant('mujoco', model, q0, 1e-3, substeps=10)
    assert ours.substeps == theirs.substeps == 4           # 5180/s damping at rest: 0.25 ms
    for _ in range(300):
        for plant in (ours, theirs, finer):
            plant.step(tau)
    assert np.abs(ours.q - q0).max() > 0.1
    np.testing.assert_allclose(theirs.q, ours.q, rtol=0, atol=1e-2)
    np.testing.assert_allclose(finer.q, ours.q, rtol=0, atol=4e-3)


def assert_mujoco_is_the_package(model, rtol=1e-12):
    """M and the bias forces of MuJoCo's model equal the package's, at three random states."""
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, qd = rng.uniform(-1, 1, model.n), rng.uniform(-2, 2, model.n)
        M, bias = mujoco_dynamics(model, q, qd)
        scale_m = max(1.0, np.abs(M).max())
        np.testing.assert_allclose(M, md.inertia_matrix(model, q), rtol=0, atol=rtol * scale_m)
        expected = md.bias_forces(model, q, qd)
        np.testing.assert_allclose(bias, expected, rtol=0,
                                   atol=rtol * max(1.0, np.abs(expected).max()))


def test_a_massless_link_between_two_joints_is_simulated_with_a_warning():
    """A moving link without mass, refused by MuJoCo, is the package's to take (a hip's)."""
    model = load(demo_arm_without_inertial('link3'))
    with pytest.warns(UserWarning, match=r'links link3 move but lack a mass.*given at least '
                      r'[0-9.e-]+ more \(kg, kg m\^2\)'):
        plant = plants.make_plant('mujoco', model, 0.0, 1e-3)
    assert_mujoco_is_the_package(model)
    for _ in range(100):
        plant.step(md.gravity_torques(model, plant.q))
    assert np.abs(plant.q).max() < 1e-3                  # held: the plant is the model


@pytest.mark.parametrize('shape', ['point', 'rod'])
def test_a_zero_principal_moment_is_simulated(shape):
    """A point mass, or a thin rod askew: zero moments MuJoCo refuses, and the package takes."""
    root = ET.parse(robots.path('demo_arm')).getroot()
    inertia = next(e for e in root.iter('link') if e.get('name') == 'link4').find(
        'inertial/inertia')
    u = np.array([1.0, 2.0, 2.0]) / 3                 # the rod's axis, in no principal direction
    tensor = np.zeros((3, 3)) if shape == 'point' else 0.01 * (np.eye(3) - np.outer(u, u))
    for (i, j), key in zip([(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)],
                           ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')):
        inertia.set(key, repr(float(tensor[i, j])))
    model = md.load_model(ET.tostring(root, encoding='unicode'))     # physical: no warning
    with pytest.warns(UserWarning, match='links link4 move but lack a mass or a principal '
                      'moment'):
        plants.mujoco_model(model)
    assert_mujoco_is_the_package(model)


def test_a_joint_that_moves_no_inertia_is_refused_by_name():
    """A massless hand: M is singular, and no floor may stand in for what the URDF lacks."""
    model = load(demo_arm_without_inertial('link7', 'flange'))
    with pytest.raises(plants.PlantError, match='neither engine can simulate this robot: M.q. '
                       "is singular: joint 'joint7' moves no inertia"):
        plants.make_plant('mujoco', model, 0.0, 1e-3)


def test_an_impossible_inertia_is_refused_by_name():
    root = ET.parse(robots.path('demo_arm')).getroot()
    link = next(e for e in root.iter('link') if e.get('name') == 'link4')
    link.find('inertial/inertia').set('ixx', '50')
    model = load(ET.tostring(root, encoding='unicode'))
    with pytest.raises(plants.PlantError, match="link 'link4':.*triangle inequality"):
        plants.mujoco_model(model)


NO_PRODUCTS = {'ixy': '0', 'ixz': '0', 'iyz': '0'}


def test_links_that_never_move_keep_no_inertia_mujoco_could_refuse():
    """A base (a legged robot's, a mobile base's) and a sensor fixed to it act on no joint."""
    root = ET.parse(robots.path('demo_arm')).getroot()
    base = next(e for e in root.iter('link') if e.get('name') == 'base_link')
    ET.SubElement(base.find('inertial'), 'inertia', ixx='1', iyy='0', izz='0', **NO_PRODUCTS)
    base.find('inertial').remove(base.find('inertial/inertia'))
    sensor = ET.SubElement(root, 'link', name='camera')
    inertial = ET.SubElement(sensor, 'inertial')
    ET.SubElement(inertial, 'mass', value='0.2')
    ET.SubElement(inertial, 'inertia', ixx='5', iyy='1', izz='1', **NO_PRODUCTS)  # 1 + 1 < 5
    joint = ET.SubElement(root, 'joint', name='camera_mount', type='fixed')
    ET.SubElement(joint, 'parent', link='base_link')
    ET.SubElement(joint, 'child', link='camera')
    text = ET.tostring(root, encoding='unicode')
    model = md.load_model(text)                    # the package never reads them either
    q, qd = np.full(model.n, 0.3), np.full(model.n, -0.5)
    M, bias = mujoco_dynamics(model, q, qd)
    np.testing.assert_allclose(M, md.inertia_matrix(model, q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(bias, md.bias_forces(model, q, qd), rtol=0, atol=1e-11)
    # the same sensor on a link that moves acts on the joints: refused by name
    joint.find('parent').set('link', 'link2')
    with pytest.raises(plants.PlantError, match="link 'camera':.*triangle inequality"):
        plants.mujoco_model(load(ET.tostring(root, encoding='unicode')))


def test_the_plant_simulates_the_whole_urdf():
    model = load(robots.path('demo_arm'), tip_links=['link4'])
    with pytest.raises(plants.PlantError, match='joints the model lacks: joint5, joint6, '
                       'joint7.*root_link or tip_links'):
        plants.mujoco_model(model)


def test_engine_choices_are_checked(monkeypatch):
    model = load(robots.path('demo_arm'))
    with pytest.raises(plants.PlantError, match='engine must be one of mujoco, internal, got '
                       "'ode'"):
        plants.make_plant('ode', model, 0.0, 1e-3)
    with pytest.raises(plants.PlantError, match='rk4 only, not euler'):
        plants.make_plant('internal', model, 0.0, 1e-3, integrator='euler')
    assert plants.default_engine() == 'mujoco'
    monkeypatch.setattr(plants, 'mujoco_available', lambda: False)
    assert plants.default_engine() == 'internal'
    with pytest.raises(plants.PlantError, match='needs the mujoco package'):
        plants.make_plant('mujoco', model, 0.0, 1e-3)


@needs_erd
def test_mimic_joints_are_free_coordinates_as_in_the_model():
    """Panda's finger 2 mimics finger 1 in the URDF: no equality in MuJoCo, as in the model."""
    model = load(erd('panda_description/urdf/panda.urdf'))
    assert 'panda_finger_joint2' in model.mimic
    q0 = np.where(np.isfinite(model.lower + model.upper), (model.lower + model.upper) / 2, 0)
    q0[model.joint_index('panda_finger_joint2')] = 0.02
    tau = md.gravity_torques(model, q0)
    j1, j2 = model.joint_index('panda_finger_joint1'), model.joint_index('panda_finger_joint2')
    tau[j1] += 0.1                                               # push finger 1 only
    theirs = plants.MujocoPlant(model, q0, 1e-3, friction=False)
    ours = plants.InternalPlant(model, q0, 1e-3, friction=False)
    for _ in range(20):
        theirs.step(tau)
        ours.step(tau)
    assert theirs.q[j1] - q0[j1] > 0.001                         # it moved, within its limits
    assert abs(theirs.q[j2] - q0[j2]) < 0.1 * (theirs.q[j1] - q0[j1])    # 2 did not follow
    np.testing.assert_allclose(theirs.q, ours.q, atol=1e-5)      # as in the package's model


@pytest.mark.parametrize('path', [None] + ARMS[:2], ids=['demo_arm', 'panda', 'ur5'])
def test_gravity_compensation_holds_a_mujoco_arm(path):
    """The package's g(q), held on MuJoCo's arm for 10 s: it does not move (friction off)."""
    if path is not None and ERD is None:
        pytest.skip('example-robot-data is not installed')
    model = load(robots.path('demo_arm') if path is None else erd(path))
    q0 = np.clip(np.linspace(-0.6, 0.8, model.n), model.lower, model.upper)
    plant = plants.MujocoPlant(model, q0, 1e-3, friction=False)
    for _ in range(10000):
        plant.step(md.gravity_torques(model, plant.q))
    assert np.abs(plant.q - q0).max() < 1e-6                   # rad, after 10 s


def swing(plant, seconds):
    for _ in range(round(seconds / plant.dt)):
        plant.step(np.zeros(plant.model.n))
    return plant.q


@pytest.mark.parametrize('path', [None] + ARMS[:3], ids=['demo_arm', 'panda', 'ur5', 'kinova'])
def test_the_engines_agree_on_a_driven_motion(path):
    """
    No friction, 0.2 s under the efforts of a fast motion: MuJoCo against the package.

    Open loop, an arm is unstable (it falls away from the motion and rounding
    differences grow): over 0.2 s two dynamics implementations and two RK4s at 1 ms land within
    1e-6 rad of each other, and
    MuJoCo's ``auto`` chooses RK4 here (Euler at 1 ms gains energy: 78-18,000 mrad).
    """
    if path is not None and ERD is None:
        pytest.skip('example-robot-data is not installed')
    model = load(robots.path('demo_arm') if path is None else erd(path))
    middle = np.where(np.isfinite(model.lower + model.upper), (model.lower + model.upper) / 2, 0)
    amplitude = np.minimum(0.3, np.where(np.isfinite(model.upper - model.lower),
                                         (model.upper - model.lower) / 4, 0.3))
    q0 = middle
    ours = plants.make_plant('internal', model, q0, 1e-3, friction=False)
    theirs = plants.make_plant('mujoco', model, q0, 1e-3, friction=False)
    assert theirs.integrator == 'rk4'
    w = 4 * np.pi
    for k in range(200):
        t = k * 1e-3
        q_d = q0 + amplitude * (1 - np.cos(w * t)) / 2
        qd_d = amplitude * w * np.sin(w * t) / 2
        qdd_d = amplitude * w * w * np.cos(w * t) / 2
        tau = md.inverse_dynamics(model, q_d, qd_d, qdd_d)
        ours.step(tau)
        theirs.step(tau)
    assert np.abs(ours.q - q0).max() > 0.1                       # it moved
    np.testing.assert_allclose(theirs.q, ours.q, rtol=0, atol=1e-6)
    np.testing.assert_allclose(theirs.qd, ours.qd, rtol=0, atol=1e-5)


@needs_erd
@pytest.mark.parametrize('path', ['xarm_description/urdf/xarm7.urdf',
                                  'z1_description/urdf/z1.urdf'])
def test_stiff_urdf_damping_is_integrated_implicitly(path):
    """
    RK4 at 1 ms is outside its stability region on these joints' damping: auto says so.

    Their dry friction is left out: its constraint is as stiff as each step allows, so two
    steps would be two frictions.
    """
    names = load(erd(path)).joint_names
    model = load(erd(path), joint_dynamics={'joint_dynamics': {j: {'coulomb': 0.0}
                                                               for j in names}})
    integrator, reason = plants.choose_integrator(model, np.zeros(model.n), 1e-3)
    assert integrator == 'implicitfast' and 'too stiff for RK4' in reason
    plant = plants.MujocoPlant(model, 0.2, 1e-3)
    assert plant.integrator == 'implicitfast'
    assert np.all(np.isfinite(swing(plant, 1.0)))
    fine = plants.MujocoPlant(model, 0.2, 1e-3, substeps=20)     # RK4 stable at 0.05 ms
    assert fine.integrator == 'rk4'
    assert np.abs(swing(fine, 1.0) - plant.q).max() < 5e-3       # damped: both agree


def test_mujoco_xml_keeps_no_meshes_and_one_compiler():
    text = open(robots.path('demo_arm')).read().replace(
        '</robot>', '<mujoco><compiler balanceinertia="true"/></mujoco></robot>')
    root = ET.fromstring(plants.mujoco_xml(text))
    assert not list(root.iter('visual')) and not list(root.iter('collision'))
    compilers = list(root.iter('compiler'))
    assert len(compilers) == 1 and compilers[0].get('balanceinertia') == 'false'
    panda = open(erd('panda_description/urdf/panda.urdf')).read() if ERD else ''
    assert '<mimic' not in plants.mujoco_xml(panda or text)


@pytest.mark.parametrize('engine', plants.ENGINES)
def test_a_diverged_plant_says_so(engine):
    """An effort no arm survives: the plant raises, never returns a reset or NaN state."""
    model = load(robots.path('demo_arm'))
    plant = plants.make_plant(engine, model, 0.0, 1e-3, friction=False)
    with pytest.raises(FloatingPointError, match='diverged'):
        for _ in range(1000):
            plant.step(np.full(model.n, 1e300))


def test_mujocos_dry_friction_is_coulombs():
    """
    A joint pushed past its Coulomb friction slides against exactly ``Fc``; below it, it sticks.

    The demo arm's wrist (0.04 kg m^2 with its rotor): gravity compensated, then 1.5 ``Fc`` on
    joint 7 (it slides: friction ``-Fc``) or 0.5 ``Fc`` (it stays: friction ``-0.5 Fc``).
    """
    model = load(robots.path('demo_arm'), joint_dynamics=DEMO_DYNAMICS)
    j, fc = 6, model.coulomb[6]
    q0 = np.linspace(-0.5, 0.5, model.n)
    for push, moves in ((1.5, True), (0.5, False)):
        plant = plants.MujocoPlant(model, q0, 1e-3)
        friction = []
        for _ in range(300):
            tau = md.gravity_torques(model, plant.q) + model.viscous * plant.qd
            tau[j] += push * fc
            plant.step(tau)
            friction.append(plant.data.qfrc_constraint[plant._dof[j]])
        if moves:
            assert plant.qd[j] > 0.5
            np.testing.assert_allclose(friction[-100:], -fc, rtol=1e-6)
        else:
            assert abs(plant.q[j] - q0[j]) < 1e-3
            np.testing.assert_allclose(friction[-100:], -push * fc, rtol=0.02)


def tracked(engine, model, motion, seed):
    """Drive ``engine``'s arm along ``motion`` by computed torque (the package's model, 1 kHz)."""
    from manipulator_dynamics.control import computed_torque
    plant = plants.make_plant(engine, model, motion.q[0], 1e-3)
    q, tau = np.empty_like(motion.q), np.empty_like(motion.q)
    for k in range(len(motion.t)):
        q[k] = plant.q
        tau[k] = computed_torque(model, q[k], plant.qd, motion.q[k], motion.qd[k],
                                 motion.qdd[k], 400.0, 40.0, friction=True)
        plant.step(tau[k])
    assert np.abs(q - motion.q).max() < 5e-3                   # it followed the motion
    # each effort is held over the step from its state: at a state, the mean of the steps
    # either side (its acceleration, by central differences, spans both)
    tau = np.vstack([tau[:1], 0.5 * (tau[1:] + tau[:-1])])
    # what a driver reports: efforts to 1 % of their range + 0.02 N m, encoders to 1e-5 rad
    rng = np.random.default_rng(seed)
    return (motion.t, q + rng.normal(size=q.shape) * 1e-5,
            tau + rng.normal(size=tau.shape) * (0.01 * np.abs(tau).max(axis=0) + 0.02))


def test_identification_recovers_a_mujoco_arm():
    """
    Identification from MuJoCo's motion: the URDF's base parameters within the reported std.

    The demo arm with its rotor inertias and friction runs a 20 s random excitation under
    computed torque, on MuJoCo and on the package's own plant, with the same sensor noise.
    MuJoCo's dry friction is a constraint, not ``Fc sign(qd)``: the joint sticks a few ms at
    each reversal, and below a few mrad/s it is neither stuck nor sliding; still speeds of
    10 mrad/s leave those equations out, with the rows the filter spreads them over.  The
    package's plant, whose friction is that law exactly, bounds what remains: the two
    estimates differ by at most 1 std (measured 0.23; 3.07 with every equation), and both lie
    within 3.5 std of the URDF's values for all 62 base parameters (measured 2.43 and 2.55).
    Before the efforts were put at the states (:func:`tracked`), ``Fv_joint2`` came out 5 %
    low on noise-free data: half a step of lag, read as viscous friction.
    """
    from manipulator_dynamics.identification.excitation import excitation_trajectory
    model = load(robots.path('demo_arm'), joint_dynamics=DEMO_DYNAMICS)
    truth = md.base_parameters(model, friction=True).values
    motion = excitation_trajectory(model, duration=20.0, rate=1000.0, maxiter=0)
    estimates = [md.identify(model, tracked(engine, model, motion, seed=10), cutoff=2.5,
                             still=0.01) for engine in ('mujoco', 'internal')]
    for estimate in estimates:
        z = (estimate.values - truth) / estimate.std
        assert np.abs(z).max() < 3.5, (estimate.names[np.argmax(np.abs(z))], np.abs(z).max())
    mujoco_, internal = estimates
    d = (mujoco_.values - internal.values) / mujoco_.std
    assert np.abs(d).max() < 1, (mujoco_.names[np.argmax(np.abs(d))], np.abs(d).max())


def test_a_cell_adds_the_links_as_capsules_and_a_box_they_alone_touch():
    """Solid links change no dynamics; they collide with the box only, never with each other."""
    model = md.load_model(robots.path('demo_arm'))
    box = plants.Cell(0.04, (0.1, 0.2, 0.3), (0.6, -0.1, 0.4), (0.0, 0.0, 0.3))
    mj, qpos, dof = plants.mujoco_model(model, cell=box)
    bare, _, _ = plants.mujoco_model(model)
    assert bare.ngeom == 0
    moving = [b for b in range(1, mj.nbody) if mj.body_weldid[b] != 0]
    links = [g for g in range(mj.ngeom) if mj.geom_bodyid[g] in moving]
    assert len(links) >= len(moving) and len(links) == mj.ngeom - 1
    assert all(mj.geom_size[g][0] == 0.04 for g in links)
    b = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, plants.BOX)
    np.testing.assert_allclose(mj.geom_size[b], (0.05, 0.1, 0.15))
    np.testing.assert_allclose(mj.geom_pos[b], (0.6, -0.1, 0.4))
    for g in links:                             # a link and the box: yes; two links: never
        assert mj.geom_contype[g] & mj.geom_conaffinity[b]
        assert not any(mj.geom_contype[g] & mj.geom_conaffinity[h] for h in links)
    d, d0 = mujoco.MjData(mj), mujoco.MjData(bare)
    q = np.linspace(-0.5, 0.5, model.n)
    for data, m in ((d, mj), (d0, bare)):
        data.qpos[qpos] = q
        mujoco.mj_forward(m, data)
    np.testing.assert_allclose(d.qfrc_bias, d0.qfrc_bias, atol=1e-12)


def test_the_contact_force_is_the_box_pushing_the_arm_away():
    """An arm pushed down onto a box under it: the box holds it up, with a force pointing up."""
    model = md.load_model(robots.path('demo_arm'))
    q0 = np.array([0.0, 0.9, 0.0, -0.8, 0.0, 0.9, 0.0])
    free = plants.MujocoPlant(model, q0, 1e-3)
    tip = free.data.xpos[-1]                    # the chain's last body: tool0, facing down
    # the box's top face 3 cm under the sphere there
    box = plants.Cell(0.04, (0.4, 0.4, 0.2), (tip[0], tip[1], tip[2] - 0.04 - 0.03 - 0.1))
    plant = plants.MujocoPlant(model, q0, 1e-3, cell=box)
    assert plant.contact() == (pytest.approx(np.zeros(3)), 0.0)
    plant.push('link7', [0.0, 0.0, -40.0, 0.0, 0.0, 0.0], world=True)
    for _ in range(1500):                       # held up by gravity compensation, pushed down
        plant.step(md.gravity_torques(model, plant.q))
    plant.push(None, None)
    force, depth = plant.contact()
    assert force[2] > 5.0 and abs(force[2]) > 3 * np.hypot(force[0], force[1]), force
    assert 0.0 < depth < 0.01, depth
    assert free.contact()[0].tolist() == [0.0, 0.0, 0.0]


def test_the_internal_engine_refuses_a_cell():
    model = md.load_model(robots.path('demo_arm'))
    with pytest.raises(plants.PlantError, match="engine 'internal' has no contacts"):
        plants.make_plant('internal', model, np.zeros(model.n), 1e-3,
                          cell=plants.Cell(0.04, (0.1, 0.1, 0.1), (0.5, 0.0, 0.5)))
