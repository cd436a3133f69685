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

"""Identified parameters back into the URDF: round trips, untouched elements, merged links."""

import dataclasses
import json

from helpers import body, erd, needs_erd, rod, write_log_csv
from lxml import etree
import manipulator_dynamics as md
from manipulator_dynamics import cli, robots
import numpy as np
import pytest

GRIPPER = robots.path('demo_arm_gripper')


def changed(model, seed=0):
    """Return the model with every body's parameters changed realisably (a payload on each)."""
    rng = np.random.default_rng(seed)
    inertial = model.inertial.copy()
    for i in range(model.n):            # a solid box of random sides and place
        mass, (a, b, c) = rng.uniform(0.1, 0.5), rng.uniform(0.02, 0.1, 3)
        moments = mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
        inertial[i] += body(mass, moments, rng.uniform(-0.05, 0.05, 3))
    return dataclasses.replace(model, inertial=inertial, viscous=rng.uniform(0.1, 1, model.n),
                               coulomb=rng.uniform(0.1, 1, model.n))


def torques_agree(a, b, seed=1):
    rng = np.random.default_rng(seed)
    q, qd, qdd = (rng.uniform(-1, 1, (20, a.n)) for _ in range(3))
    ta = md.inverse_dynamics(a, q, qd, qdd, friction=True)
    tb = md.inverse_dynamics(b, q, qd, qdd, friction=True)
    return np.allclose(ta, tb, rtol=1e-10, atol=1e-10 * np.abs(ta).max())


def stripped(xml):
    """Return the canonical XML without any <inertial> or <dynamics>: what must not change."""
    root = etree.fromstring(xml.encode() if isinstance(xml, str) else xml)
    for element in root.xpath('//inertial | //dynamics'):
        element.getparent().remove(element)
    for element in root.iter():
        element.tail = None if element.tail is None else element.tail.strip() or None
        element.text = None if element.text is None else element.text.strip() or None
    return etree.tostring(root, method='c14n')


@pytest.mark.parametrize('kw', [{}, {'tip_links': ['tool0']}])
def test_parameters_written_load_back_exactly(tmp_path, kw):
    """Fixed children (flange, hand) and locked fingers keep theirs; the own link the rest."""
    model = md.load_model(GRIPPER, **kw)
    new = changed(model)
    md.write_urdf(new, tmp_path / 'robot.urdf')
    loaded = md.load_model(tmp_path / 'robot.urdf', **kw)
    assert np.allclose(loaded.inertial, new.inertial, rtol=1e-12, atol=1e-14)
    assert np.allclose(loaded.viscous, new.viscous) and np.allclose(loaded.coulomb, new.coulomb)
    assert torques_agree(loaded, new)
    with open(GRIPPER, 'rb') as f:
        assert stripped(f.read()) == stripped((tmp_path / 'robot.urdf').read_bytes())
    # the fixed children's inertials are the URDF's still
    hand = etree.parse(str(tmp_path / 'robot.urdf')).find("link[@name='hand']/inertial/mass")
    assert float(hand.get('value')) == 0.65


def test_a_body_lighter_than_its_fixed_children_is_written_whole_on_its_link(tmp_path):
    model = md.load_model(GRIPPER)
    last = model.link_names.index('link7')
    inertial = model.inertial.copy()
    inertial[last] = rod(0.7, 0.1, 0.03, [0.0, 0.0, 0.05])     # flange + hand alone are 0.85 kg
    new = dataclasses.replace(model, inertial=inertial)
    md.write_urdf(new, tmp_path / 'robot.urdf')
    loaded = md.load_model(tmp_path / 'robot.urdf')
    assert np.allclose(loaded.inertial, new.inertial, rtol=1e-12, atol=1e-14)
    tree = etree.parse(str(tmp_path / 'robot.urdf'))
    assert tree.find("link[@name='hand']/inertial") is None
    assert tree.find("link[@name='flange']/inertial") is None
    assert float(tree.find("link[@name='link7']/inertial/mass").get('value')) == pytest.approx(0.7)


def test_links_of_a_locked_joint_are_never_stripped():
    model = md.load_model(GRIPPER, tip_links=['tool0'])
    inertial = model.inertial.copy()
    inertial[-1] = rod(0.7, 0.1, 0.03, [0.0, 0.0, 0.05])   # < flange + hand + fingers
    with pytest.raises(md.URDFError, match='left_finger, right_finger.*locked'):
        md.write_urdf(dataclasses.replace(model, inertial=inertial))


def test_an_impossible_body_is_refused():
    model = md.load_model(robots.path('demo_arm'))
    inertial = model.inertial.copy()
    inertial[2, 9] = -1.0
    with pytest.raises(md.URDFError, match='link3.*not physically realisable'):
        md.write_urdf(dataclasses.replace(model, inertial=inertial))


def test_a_model_without_urdf_has_nothing_to_write_into():
    model = dataclasses.replace(md.load_model(robots.path('demo_arm')), urdf=None)
    with pytest.raises(md.URDFError, match='not loaded from a URDF'):
        md.write_urdf(model)


def test_with_parameters_names_what_it_does_not_know():
    model = md.load_model(robots.path('demo_arm'))
    with pytest.raises(ValueError, match="'ZZ_nolink' names no link"):
        model.with_parameters([1.0], ['ZZ_nolink'])
    names = md.parameter_names(model, friction=True, armature=True)
    values = np.arange(len(names), dtype=float)
    again = model.with_parameters(values, names)
    assert np.array_equal(md.standard_parameters(again, friction=True, armature=True), values)


@pytest.fixture(scope='module')
def identified():
    """Noise-free data of a changed demo arm with rotor inertias, identified consistently."""
    model = md.load_model(robots.path('demo_arm'),
                          joint_dynamics={j: {'armature': 0.1} for j in ('joint1', 'joint2')})
    true = changed(model)
    motion = md.excitation_trajectory(model, duration=10.0, maxiter=15)
    tau = md.inverse_dynamics(true, motion.q, motion.qd, motion.qdd, friction=True)
    estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, tau),
                           physically_consistent=True)
    return model, true, motion, tau, estimate


def test_estimate_to_urdf_reproduces_the_identified_torques(tmp_path, identified):
    model, true, motion, tau, estimate = identified
    written = estimate.to_urdf(tmp_path / 'identified.urdf')
    assert written == [str(tmp_path / 'identified.urdf'),
                       str(tmp_path / 'identified.joint_dynamics.yaml')]
    loaded = md.load_model(written[0], joint_dynamics=written[1])
    assert torques_agree(loaded, estimate.identified_model())
    predicted = md.inverse_dynamics(loaded, motion.q, motion.qd, motion.qdd, friction=True)
    assert np.abs(predicted - tau).max() < 1e-4 * np.abs(tau).max()
    assert loaded.armature[0] > 0 and np.allclose(loaded.armature[2:], 0)


def test_without_a_consistent_set_there_is_nothing_to_write(tmp_path, identified):
    model, _, motion, tau, _ = identified
    estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, tau))
    with pytest.raises(md.IdentificationError, match='physically_consistent=True'):
        estimate.to_urdf(tmp_path / 'x.urdf')


def test_cli_urdf_out(tmp_path, capsys):
    """``identify --urdf-out``: the URDF a user gets loads and predicts the logged torques."""
    model = md.load_model(robots.path('demo_arm'))
    true = changed(model, seed=3)
    motion = md.excitation_trajectory(model, duration=10.0, maxiter=10, rate=200.0)
    tau = md.inverse_dynamics(true, motion.q, motion.qd, motion.qdd, friction=True)
    write_log_csv(tmp_path / 'log.csv', model.joint_names, motion.t, motion.q, tau)
    out = tmp_path / 'identified.urdf'
    assert cli.main(['identify', robots.path('demo_arm'), str(tmp_path / 'log.csv'),
                     '--cutoff', '4', '--urdf-out', str(out)]) == 0
    assert f'written: {out}' in capsys.readouterr().out
    loaded = md.load_model(out)
    keep = slice(200, -200)                    # away from the filter's ends
    predicted = md.inverse_dynamics(loaded, motion.q, motion.qd, motion.qdd, friction=True)
    error = np.sqrt(((predicted - tau)[keep] ** 2).mean()) / np.sqrt((tau ** 2).mean())
    assert error < 0.01, error


@needs_erd
def test_panda_round_trip_keeps_every_other_element(tmp_path):
    """A vendor URDF (meshes, limits, safety controllers, comments): only inertials change."""
    path = erd('panda_description/urdf/panda.urdf')
    model = md.load_model(path, tip_links=['panda_link8'])
    new = changed(model, seed=5)
    md.write_urdf(new, tmp_path / 'panda.urdf')
    loaded = md.load_model(tmp_path / 'panda.urdf', tip_links=['panda_link8'])
    assert torques_agree(loaded, new)
    with open(path, 'rb') as f:
        assert stripped(f.read()) == stripped((tmp_path / 'panda.urdf').read_bytes())


def test_identified_parameters_yaml_loads_over_the_urdf(tmp_path, identified):
    """``parameters_yaml`` -> ``load_model(parameters=)``: the identified model, friction too."""
    model, _, motion, tau, estimate = identified
    path = tmp_path / 'identified.yaml'
    estimate.parameters_yaml(path)
    assert f'from {estimate.data_summary()}, base parameters' in path.read_text()
    loaded = md.load_model(robots.path('demo_arm'), parameters=path)
    assert torques_agree(loaded, estimate.identified_model())
    assert np.allclose(loaded.armature, estimate.identified_model().armature)


@pytest.mark.parametrize('text, words', [
    ('standard_parameters: {ZZ_nolink: 1.0}', ["'ZZ_nolink' names no link"]),
    ('standard_parameters: {ZZ_link2: abc}', ["'ZZ_link2' must be a number"]),
    ('standard_parameters: {ZZ_link2: .nan}', ["'ZZ_link2' must be finite"]),
    ('[1, 2]', ["under 'standard_parameters'"]),
    ('standard_parameters: {M_link3: -2.0}', ["link 'link3'", 'mass -2 kg is not positive']),
])
def test_bad_parameter_files_say_what_is_wrong(text, words):
    with pytest.raises(md.URDFError) as e:
        md.load_model(robots.path('demo_arm'), parameters=text)
    for w in words:
        assert w in str(e.value)


def test_impossible_parameters_warn_when_asked_to():
    with pytest.warns(md.InertiaWarning, match="link 'link3'"):
        model = md.load_model(robots.path('demo_arm'), parameters='{M_link3: -2.0}',
                              check_inertia='warn')
    assert model.inertial[2, 9] == -2.0


def test_cli_parameters_out_then_parameters_in(tmp_path, capsys, identified):
    """The CLI writes the YAML; every command then takes it with ``--parameters``."""
    model, true, motion, tau, estimate = identified
    write_log_csv(tmp_path / 'log.csv', model.joint_names, motion.t, motion.q, tau)
    out = tmp_path / 'identified.yaml'
    joint_dynamics = tmp_path / 'rotors.yaml'
    md.write_joint_dynamics(model, joint_dynamics)
    assert cli.main(['identify', robots.path('demo_arm'), str(tmp_path / 'log.csv'),
                     '--joint-dynamics', str(joint_dynamics), '--cutoff', '4',
                     '--parameters-out', str(out)]) == 0
    assert f'written: {out}' in capsys.readouterr().out
    q = ','.join(['0.3'] * model.n)
    assert cli.main(['gravity', '--parameters', str(out), '--q', q, '--format', 'json']) == 0
    printed = json.loads(capsys.readouterr().out)['gravity']
    loaded = md.load_model(robots.path('demo_arm'), parameters=out)
    expected = md.gravity_torques(loaded, np.full(model.n, 0.3))
    assert np.allclose(printed, expected, rtol=1e-12)
    assert np.allclose(expected, md.gravity_torques(true, np.full(model.n, 0.3)), rtol=0.02)
