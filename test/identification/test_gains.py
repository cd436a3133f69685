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
Drive gains from motor currents, with known truth: a UR5 in MuJoCo, motors logged.

The arm (example-robot-data's UR5) gets gear ratios, rotor inertias, friction and a coupled
wrist (:func:`helpers.coupled`: its last motor turns the last two joints, as a TX40's); MuJoCo
turns the coupled motors through tendons.  It tracks an excitation, once bare and once with a
known payload; its log holds what a drive logs: motor positions (encoder noise) and currents
(the torques through the true torque constants, 0.5 % noise).  The model it is identified with
holds nominal constants 20 % off.
"""

import dataclasses
import json
import re

from helpers import coupled, ERD, erd, exciting
import manipulator_dynamics as md
from manipulator_dynamics.identification.gains import identify_gains
from manipulator_dynamics.identification.known import KnownLink, KnownParameter, KnownPayload
from manipulator_dynamics.recordings import csvlog
from manipulator_dynamics.recordings.formats import read_csv
from manipulator_dynamics.transmissions import load, TransmissionError
import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed (pip '
                                'install example-robot-data): the arm is its UR5')

#: The log's rate and its noise: currents' relative to each motor's RMS current, encoders' in
#: rad at the motor.
RATE, CURRENT_NOISE, ENCODER_NOISE = 1000.0, 0.005, 2e-4
LINK = 'wrist_3_link'
PAYLOAD = KnownPayload(LINK, 2.0, (0.01, 0.02, 0.06), np.diag([4e-3, 5e-3, 3e-3]))


def tracked(model, seconds, seed):
    """
    Track an excitation in MuJoCo at 1 kHz: ``(t, q, tau)``, the torques as a drive reports them.

    Computed torque with the true model plus a PD; the first second (the plant catching up with
    the excitation) is left out, as a log starts once the robot moves.  A drive's current is
    its mean over the sample period, and MuJoCo holds each torque over a step: the torque at a
    sample is the mean of the steps either side of it.
    """
    pytest.importorskip('mujoco', reason='MuJoCo is the plant (pip install mujoco)')
    from manipulator_dynamics.plant import MujocoPlant
    dt = 1.0 / RATE
    t, qd_, qdd_, qddd_ = exciting(model, seconds=seconds + 1.0, seed=seed, rate=RATE)
    feedforward = md.inverse_dynamics(model, qd_, qdd_, qddd_, friction=True)
    plant = MujocoPlant(model, qd_[0], dt)
    scale = np.diag(md.inertia_matrix(model, qd_[0]))
    q, tau = np.empty_like(qd_), np.empty_like(qd_)
    for s in range(len(t)):
        q[s], qd = plant.q, plant.qd
        tau[s] = feedforward[s] + scale * (400.0 * (qd_[s] - q[s]) + 40.0 * (qdd_[s] - qd))
        plant.step(tau[s])
    reported = np.vstack([tau[:1], 0.5 * (tau[1:] + tau[:-1])])
    start = int(RATE)
    return t[start:], q[start:], reported[start:]


def write_motor_log(path, model, kt, t, q, tau, seed):
    """Write what the drives log: motor positions and currents, with noise."""
    rng = np.random.default_rng(seed)
    drives = model.transmissions
    current = drives.motor_efforts(tau) / kt
    current += rng.normal(size=current.shape) * CURRENT_NOISE * np.sqrt(
        (current ** 2).mean(axis=0))
    motor = drives.motor_positions(q) + rng.normal(size=q.shape) * ENCODER_NOISE
    csvlog.write(path, t, csvlog.joint_columns(model.joint_names, motor_position=motor,
                                               current=current))


@pytest.fixture(scope='module')
def logged(tmp_path_factory):
    """Simulate and log: the true arm, its torque constants, the nominal model, the two logs."""
    folder = tmp_path_factory.mktemp('gains')
    truth = coupled(md.load_model(erd('ur_description/urdf/ur5_robot.urdf')))
    rng = np.random.default_rng(5)
    kt = rng.uniform(0.1, 0.6, truth.n)
    off = 1.0 + 0.2 * rng.choice([-1.0, 1.0], truth.n)
    nominal = dataclasses.replace(truth, transmissions=truth.transmissions.with_torque_constants(
        dict(zip(truth.joint_names, kt * off))))
    bare, loaded = folder / 'bare.csv', folder / 'loaded.csv'
    write_motor_log(bare, truth, kt, *tracked(truth, 20.0, 0), seed=100)
    carrying = truth.with_payload(LINK, PAYLOAD.mass, PAYLOAD.com, PAYLOAD.inertia)
    write_motor_log(loaded, truth, kt, *tracked(carrying, 10.0, 1), seed=101)
    return truth, kt, nominal, str(bare), str(loaded)


@pytest.fixture(scope='module')
def identified(logged):
    truth, kt, nominal, bare, loaded = logged
    # MuJoCo's dry friction is a soft constraint: it slides (holds Fc) above about
    # Fc / (m_eff 2 / (0.99 x 2 ms)), up to 5e-3 rad/s on the light coupled wrist motor; below
    # it is neither stuck nor sliding.  10 mrad/s is above that on every joint and motor.
    return identify_gains(nominal, bare, loaded, PAYLOAD, armature=True, still=0.01)


def test_gains_base_parameters_and_coupled_motors_come_back_within_3_std(logged, identified):
    truth, kt, nominal, _, _ = logged
    R = truth.transmissions.reduction
    true_gains = np.diag(R) * kt
    deviation = (identified.gains - true_gains) / identified.std
    assert np.all(np.abs(deviation) < 3.0), deviation
    assert np.all(identified.relative_std < 1.0)           # determined, not merely covered
    assert np.allclose(identified.torque_constants, identified.gains / np.diag(R))
    # the nominal constants were 20 % off, and the estimate says so
    assert np.allclose(np.abs(identified.nominal / identified.gains - 1.0), 0.2, atol=0.01)
    estimate = identified.estimate
    # the model identified with holds the true inertials, friction and motors: its base values
    # are the truth's
    deviation = (estimate.values - estimate.base.values) / estimate.std
    assert np.all(np.abs(deviation) < 3.0), dict(zip(estimate.names, deviation.round(2)))
    motors = [i for i, name in enumerate(estimate.names)
              if name.startswith(('Fvm_', 'Fcm_')) or name in ('Ia_wrist_2_joint',
                                                               'Ia_wrist_3_joint')]
    assert len(motors) == 6                    # the coupled motors' inertia and friction
    assert np.all(estimate.relative_std[motors] < 5.0)
    still = estimate.processing['still']
    assert still['how'] == 'given' and all(0 < p < 50 for p in
                                           still['left_out_percent'].values())


def test_the_identified_constants_read_the_currents_as_torques(logged, identified, tmp_path):
    truth, kt, nominal, bare, loaded = logged
    path = tmp_path / 'drives.yaml'
    identified.transmissions_yaml(path)
    read = load(str(path), truth.joint_names)
    assert np.allclose(read.torque_constant, identified.torque_constants, rtol=1e-12)
    assert np.array_equal(read.reduction, truth.transmissions.reduction)
    model = md.load_model(erd('ur_description/urdf/ur5_robot.urdf'), transmissions=str(path))
    model = dataclasses.replace(model, armature=truth.armature, viscous=truth.viscous,
                                coulomb=truth.coulomb)
    # the torques read through them are the true torques to the constants' few 1e-4
    t, q, tau = read_csv(model, bare)
    table = csvlog.read(bare)
    hand = truth.transmissions.joint_efforts(
        table.field(truth.joint_names, 'current') * identified.torque_constants)
    assert np.allclose(tau, hand, rtol=1e-12, atol=1e-12)
    true_tau = truth.transmissions.joint_efforts(table.field(truth.joint_names, 'current') * kt)
    assert np.abs(tau - true_tau).max() < 1e-2 * np.abs(true_tau).max()
    as_nominal = read_csv(nominal, bare)[2]                 # 20 % off, through the coupling
    assert np.all(np.abs(np.sqrt((as_nominal ** 2).mean(axis=0) / (true_tau ** 2).mean(axis=0))
                         - 1.0) > 0.05)
    # and identify, with every option it has, takes the currents from there: held out in time
    folds = md.cross_validate(model, bare, folds=3, armature=True, friction='coulomb',
                              cutoff=10.0, still=0.01)
    pooled = folds.pooled                     # 'urdf' here is the true arm: the floor
    assert pooled.error['identified'] < min(0.01, 1.05 * pooled.error['urdf'])


def test_without_a_payload_run_the_error_says_what_to_add(logged):
    _, _, nominal, bare, _ = logged
    for loaded, payload in ((None, PAYLOAD), ([], PAYLOAD)):
        with pytest.raises(md.IdentificationError, match=r'known mass to fix their scale.*'
                           r'--payload-log LOG --payload LINK:MASS.*--known-link LINK:MASS'):
            identify_gains(nominal, bare, loaded, payload)
    with pytest.raises(md.IdentificationError, match='runs with a payload need the payload'):
        identify_gains(nominal, bare, bare, None)


def test_a_revolute_arms_link_mass_alone_says_where_it_is_regrouped(logged):
    truth, _, nominal, bare, loaded = logged
    # a UR5's last link mass moves no base parameter alone: the error names its equations
    with pytest.raises(md.IdentificationError, match=r'known M_wrist_3_link cannot fix the '
                       r"gains' scale: it is regrouped with parameters nobody gave: .*"
                       r'M_wrist_3_link.*a run with a known payload'):
        identify_gains(nominal, bare, known=[KnownLink(LINK, 0.19)])
    for bad, complaint in ((KnownLink('tool0', 0.1), "'tool0' is fixed to 'wrist_3_link'"),
                           (KnownLink('no_link', 1.0), "'no_link' is not a link"),
                           (KnownLink('base_link', 1.0), 'fixed to the base'),
                           (KnownLink(LINK, -1.0), 'mass must be finite and > 0'),
                           (KnownLink(LINK, 1.0, inertia=np.eye(3)), 'needs the centre of mass'),
                           (KnownLink(LINK, 1.0, (0, 0, 0), np.diag([1.0, 1.0, 3.0])),
                            'inertia .*triangle'),
                           ('wrist_3_link', 'known must hold KnownLink')):
        with pytest.raises(md.IdentificationError, match=complaint):
            identify_gains(nominal, bare, loaded, PAYLOAD, known=[bad])
    with pytest.raises(md.IdentificationError, match='wrist_3_link is given twice'):
        identify_gains(nominal, bare, known=[KnownLink(LINK, 1.0), KnownLink(LINK, 1.0)])


def test_bad_gain_inputs_are_refused_by_name(logged, tmp_path):
    truth, _, nominal, bare, loaded = logged
    with pytest.raises(md.IdentificationError, match="friction 'none', 'coulomb' or 'offset'"):
        identify_gains(nominal, bare, loaded, PAYLOAD, friction='smooth')
    with pytest.raises(md.IdentificationError, match='the known payload: .*no_such_link'):
        identify_gains(nominal, bare, loaded, KnownPayload('no_such_link', 1.0))
    for mass in (-1.0, 0.0, float('nan')):
        with pytest.raises(md.IdentificationError, match="payload on 'wrist_3_link': its mass "
                           'must be finite and > 0'):
            identify_gains(nominal, bare, loaded, KnownPayload(LINK, mass))
    with pytest.raises(md.IdentificationError, match='needs the centre of mass'):
        identify_gains(nominal, bare, loaded, KnownPayload(LINK, 2.0, inertia=np.eye(3)))
    with pytest.raises(md.IdentificationError, match='2 payloads for 1 groups of loaded runs'):
        identify_gains(nominal, bare, [loaded], [PAYLOAD, PAYLOAD])
    without = tmp_path / 'no_current.csv'
    table = csvlog.read(bare)
    columns = {f'{j}.motor_position': table.field([j], 'motor_position')[:, 0]
               for j in truth.joint_names}
    columns.update({f'{j}.current': table.field([j], 'current')[:, 0]
                    for j in truth.joint_names[:-1]})
    csvlog.write(without, table.time(), columns)
    with pytest.raises(md.IdentificationError, match='lacks the columns wrist_3_joint.current'):
        identify_gains(nominal, str(without), loaded, PAYLOAD)


def test_currents_need_a_torque_constant_and_the_yaml_round_trip(logged, tmp_path):
    truth, kt, nominal, bare, _ = logged
    document = nominal.transmissions.to_dict()
    assert set(document['torque_constant']) == set(truth.joint_names)
    assert load(yaml.safe_dump(document)) == nominal.transmissions
    # a motor without a constant: its currents are refused naming it and what to give
    del document['torque_constant']['elbow_joint']
    partial = dataclasses.replace(truth, transmissions=load(yaml.safe_dump(document)))
    with pytest.raises(md.IdentificationError, match=r'elbow_joint.current cannot be read as '
                       r'torque: no torque constant for elbow_joint \(give torque_constant'):
        read_csv(partial, bare)
    for bad, complaint in (({'elbow_joint': -0.2}, 'must be a finite number|> 0'),
                           ({'no_joint': 0.2}, "torque_constant of 'no_joint'"),
                           ('0.2', r'torque_constant must be \{joint: N m/A\}')):
        document['torque_constant'] = bad
        with pytest.raises(TransmissionError, match=complaint):
            load(yaml.safe_dump(document))


def test_the_command_line_walks_the_same_path(logged, identified, tmp_path, capsys):
    truth, kt, nominal, bare, loaded = logged
    from manipulator_dynamics.cli import main
    drives, out = tmp_path / 'nominal.yaml', tmp_path / 'identified.yaml'
    drives.write_text(yaml.safe_dump(nominal.transmissions.to_dict()))
    urdf = erd('ur_description/urdf/ur5_robot.urdf')
    payload = 'wrist_3_link:2:0.01,0.02,0.06:4e-3,0,0,5e-3,0,3e-3'
    common = [urdf, bare, '--transmissions', str(drives), '--armature', '--still', '0.01']
    assert main(['identify-gains', *common]) == 2
    assert '--payload-log LOG --payload LINK:MASS' in capsys.readouterr().err
    assert main(['identify-gains', *common, '--payload-log', loaded]) == 2
    assert '--payload-log needs --payload' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(['identify-gains', *common, '--payload-log', loaded, '--payload', 'x:1:2'])
    assert 'is not LINK:MASS' in capsys.readouterr().err
    assert main(['identify-gains', *common, '--payload-log', loaded, '--payload', payload,
                 '--transmissions-out', str(out), '--format', 'yaml']) == 0
    document = yaml.safe_load(capsys.readouterr().out)
    gains = np.array([document['gains'][j]['gain'] for j in truth.joint_names])
    assert np.allclose(gains, identified.gains, rtol=1e-9)
    assert load(str(out), truth.joint_names) == identified.model.transmissions
    # the written constants read the currents for identify, as any torque log
    assert main(['identify', urdf, bare, '--transmissions', str(out), '--armature',
                 '--cutoff', '10', '--still', '0.01', '--format', 'json']) == 0
    assert capsys.readouterr().out.lstrip().startswith('{')


# ---------------------------------------------------------------------------------------------------
# A load known only by its weight: its centre of mass and inertia identified with the gains, each
# mounting its own
# ---------------------------------------------------------------------------------------------------

#: A 2.6 kg load on the flange, its centre of mass well off the flange's axis, mounted twice:
#: taken off and put back elsewhere.  Inertias about the centre of mass, not diagonal in the
#: link frame (a box turned on its mount).
FAR_MASS = 2.6
MOUNTINGS = ((0.10, 0.10, 0.06), (-0.12, 0.04, 0.11))


def turned_box(moments, angles):
    from scipy.spatial.transform import Rotation
    R = Rotation.from_euler('xyz', angles).as_matrix()
    return R @ np.diag(moments) @ R.T


FAR_INERTIAS = (turned_box([0.012, 0.009, 0.006], [0.3, -0.2, 0.5]),
                turned_box([0.010, 0.011, 0.005], [-0.4, 0.1, 0.2]))


@pytest.fixture(scope='module')
def far_loaded(logged, tmp_path_factory):
    """Simulate the same arm carrying the far load, once for each mounting: the two logs."""
    truth, kt, _, _, _ = logged
    folder = tmp_path_factory.mktemp('far')
    logs = []
    for i, (com, inertia) in enumerate(zip(MOUNTINGS, FAR_INERTIAS)):
        path = folder / f'loaded_{i + 1}.csv'
        carrying = truth.with_payload(LINK, FAR_MASS, com, inertia)
        write_motor_log(path, truth, kt, *tracked(carrying, 8.0, 10 + i), seed=110 + i)
        logs.append(str(path))
    return logs


def true_gains_of(logged):
    truth, kt = logged[:2]
    return np.diag(truth.transmissions.reduction) * kt


def assert_gains_recovered(found, logged):
    """Every gain within 2 % and 3 of its deviations."""
    error = found.gains / true_gains_of(logged) - 1.0
    deviation = (found.gains - true_gains_of(logged)) / found.std
    assert np.all(np.abs(error) < 0.02), error
    assert np.all(np.abs(deviation) < 3.0), deviation


def test_a_load_known_by_its_mass_alone_fixes_the_gains_and_is_found(logged, far_loaded):
    _, _, nominal, bare, _ = logged
    found = identify_gains(nominal, bare, far_loaded[0], KnownPayload(LINK, FAR_MASS),
                           armature=True, still=0.01)
    assert_gains_recovered(found, logged)
    (load,) = found.loads
    assert load.mass == FAR_MASS and load.mass_std == 0.0           # known, not identified
    assert np.linalg.norm(load.com - MOUNTINGS[0]) < 0.01, load.com
    assert np.all(np.abs(load.com - MOUNTINGS[0]) < 3 * load.com_std + 1e-4), load.com_std
    assert np.all(load.determined) and np.all(np.isfinite(load.inertia_std))
    assert 'load on wrist_3_link: mass 2.6 +- 0 kg' in found.summary()
    assert found.to_dict()['loads'][0]['com'] == pytest.approx(load.com.tolist())


def test_a_point_mass_assumed_for_that_load_gives_wrong_gains(logged, far_loaded):
    """The regression: the load taken as a point mass at the flange, as the CLI once did."""
    _, _, nominal, bare, _ = logged
    point = KnownPayload(LINK, FAR_MASS, (0.0, 0.0, 0.0), np.zeros((3, 3)))
    try:
        found = identify_gains(nominal, bare, far_loaded[0], point, armature=True, still=0.01)
    except md.IdentificationError as e:      # so wrong that a constant turns negative, or
        # that the fit with the currents' noise in the model finds no minimum: refused aloud
        assert re.search(r'torque constant of .* is not positive: .*or the centre of mass of '
                         r'the 2.6 kg load on wrist_3_link is not what was given', str(e)) \
            or str(e).startswith('the gains did not converge'), e
        return
    error = found.gains / true_gains_of(logged) - 1.0
    assert np.max(np.abs(error)) > 0.05, error
    assert np.max(np.abs(found.gains - true_gains_of(logged)) / found.std) > 10.0


@pytest.fixture(scope='module')
def two_mounted(logged, far_loaded):
    """Identify the gains from the bare run and both loaded runs, each its own mounting."""
    _, _, nominal, bare, _ = logged
    return identify_gains(nominal, bare, far_loaded, [KnownPayload(LINK, FAR_MASS)] * 2,
                          armature=True, still=0.01)


def test_two_mountings_of_the_load_are_each_recovered(logged, far_loaded, two_mounted):
    _, _, nominal, bare, _ = logged
    found = two_mounted
    assert_gains_recovered(found, logged)
    for mounted, com in zip(found.loads, MOUNTINGS):
        assert np.linalg.norm(mounted.com - com) < 0.01, (mounted.com, com)
    # one mounting assumed for both runs: the gains go wrong, and the error says why it may be
    with pytest.raises(md.IdentificationError, match=r'not positive: .*or the 2 runs with the '
                       r'load on wrist_3_link do not share one mounting'):
        identify_gains(nominal, bare, far_loaded, KnownPayload(LINK, FAR_MASS), armature=True,
                       still=0.01)


def test_the_command_line_takes_mass_only_loads_per_mounting(logged, far_loaded, two_mounted,
                                                             tmp_path, capsys):
    truth, _, nominal, bare, _ = logged
    from manipulator_dynamics.cli import main
    drives = tmp_path / 'nominal.yaml'
    drives.write_text(yaml.safe_dump(nominal.transmissions.to_dict()))
    urdf = erd('ur_description/urdf/ur5_robot.urdf')
    common = [urdf, bare, '--transmissions', str(drives), '--armature', '--still', '0.01']
    mounted = ['--payload-log', far_loaded[0], '--payload-log', far_loaded[1]]
    assert main(['identify-gains', *common, *mounted, '--payload', f'{LINK}:{FAR_MASS}',
                 '--format', 'yaml']) == 0
    document = yaml.safe_load(capsys.readouterr().out)
    api = two_mounted
    gains = np.array([document['gains'][j]['gain'] for j in truth.joint_names])
    assert np.allclose(gains, api.gains, rtol=1e-9)
    assert np.allclose([found['com'] for found in document['loads']],
                       [found.com for found in api.loads], rtol=1e-9)
    assert all(p['com'] is None for p in document['payloads'])      # nothing assumed
    assert main(['identify-gains', *common, *mounted, '--payload', f'{LINK}:{FAR_MASS}',
                 '--payload', f'{LINK}:1', '--payload', f'{LINK}:1']) == 2
    assert '3 --payload for 2 --payload-log' in capsys.readouterr().err
    assert main(['identify-gains', *common, *mounted, '--payload', f'{LINK}:{FAR_MASS}']) == 0
    table = capsys.readouterr().out
    assert '--payload-log 2: load on wrist_3_link: mass 2.6 +- 0 kg' in table
    assert 'centre of mass (m, in wrist_3_link): x ' in table


# ---------------------------------------------------------------------------------------------------
# The scale fixed by known link masses: a column lift carrying an arm (a mobile manipulator's),
# and a SCARA, whose quill's mass fixes its lift alone
# ---------------------------------------------------------------------------------------------------

def _inertial(mass, com, moments):
    x, y, z = com
    return (f'<inertial><origin xyz="{x} {y} {z}"/><mass value="{mass}"/><inertia '
            f'ixx="{moments[0]}" ixy="0" ixz="0" iyy="{moments[1]}" iyz="0" izz="{moments[2]}"/>'
            '</inertial>')


def _joint(name, kind, parent, child, xyz, axis, bound):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/><limit lower="{-bound}" upper="{bound}" '
            'effort="200" velocity="3"/></joint>')


def robot_urdf(name, links, joints):
    """Return a URDF of ``links`` ``{name: (mass, com, principal moments)}`` and ``joints``."""
    body = ''.join(f'<link name="{k}">{_inertial(*v)}</link>' for k, v in links.items())
    return (f'<robot name="{name}"><link name="base_link"/>{body}'
            + ''.join(_joint(*j) for j in joints) + '</robot>')


#: A vertical lift under a yaw-pitch-pitch arm.
LIFT_LINKS = {'carriage': (5.0, (0.02, 0.0, 0.05), (0.03, 0.03, 0.02)),
              'turret': (3.0, (0.0, 0.01, 0.06), (0.01, 0.012, 0.008)),
              'upper_arm': (2.5, (0.18, 0.0, 0.01), (0.004, 0.03, 0.03)),
              'forearm': (1.2, (0.15, 0.01, 0.0), (0.002, 0.012, 0.012))}
LIFT_JOINTS = (('lift', 'prismatic', 'base_link', 'carriage', '0 0 0.3', '0 0 1', 1.5),
               ('yaw', 'revolute', 'carriage', 'turret', '0.1 0 0.1', '0 0 1', 3),
               ('shoulder', 'revolute', 'turret', 'upper_arm', '0 0 0.12', '0 1 0', 3),
               ('elbow', 'revolute', 'upper_arm', 'forearm', '0.35 0 0', '0 1 0', 3))
#: A SCARA: two arms about vertical axes, a quill lifting and turning the tool.
SCARA_LINKS = {'arm1': (6.0, (0.17, 0.01, 0.02), (0.01, 0.07, 0.07)),
               'arm2': (4.0, (0.14, -0.01, 0.0), (0.008, 0.04, 0.04)),
               'quill': (1.5, (0.0, 0.0, -0.1), (0.006, 0.006, 0.0005)),
               'tool': (0.8, (0.02, 0.01, -0.05), (0.002, 0.0025, 0.0015))}
SCARA_JOINTS = (('j1', 'revolute', 'base_link', 'arm1', '0 0 0.4', '0 0 1', 3),
                ('j2', 'revolute', 'arm1', 'arm2', '0.35 0 0', '0 0 1', 3),
                ('j3', 'prismatic', 'arm2', 'quill', '0.3 0 0', '0 0 1', 1.5),
                ('j4', 'revolute', 'quill', 'tool', '0 0 -0.2', '0 0 1', 3))


def geared(path, reduction, seed):
    """Load ``path`` with a motor per joint (gear ratios), rotor inertias and friction."""
    from manipulator_dynamics.transmissions import Transmissions
    model = md.load_model(str(path))
    rng = np.random.default_rng(seed)
    n = model.n
    return dataclasses.replace(model, transmissions=Transmissions(model.joint_names,
                                                                  np.diag(reduction)),
                               armature=rng.uniform(0.02, 0.5, n),
                               viscous=rng.uniform(0.1, 0.5, n), coulomb=rng.uniform(0.1, 0.5, n))


def nominal_of(truth, kt, seed):
    """Return the model with torque constants 20 % off the true ``kt``."""
    off = 1.0 + 0.2 * np.random.default_rng(seed).choice([-1.0, 1.0], truth.n)
    return dataclasses.replace(truth, transmissions=truth.transmissions.with_torque_constants(
        dict(zip(truth.joint_names, kt * off))))


@pytest.fixture(scope='module')
def lift_logged(tmp_path_factory):
    """Track the lift arm in MuJoCo, logged as motor positions and currents."""
    folder = tmp_path_factory.mktemp('lift')
    (folder / 'lift.urdf').write_text(robot_urdf('lift_arm', LIFT_LINKS, LIFT_JOINTS))
    # a ball screw of 10 mm lead on the lift (rad/m), gears on the arm
    truth = geared(folder / 'lift.urdf', [2 * np.pi / 0.01, 80.0, -100.0, 60.0], 3)
    kt = np.random.default_rng(4).uniform(0.1, 0.6, truth.n)
    bare = folder / 'lift.csv'
    write_motor_log(bare, truth, kt, *tracked(truth, 20.0, 2), seed=102)
    return truth, kt, nominal_of(truth, kt, 5), str(folder / 'lift.urdf'), str(bare)


def test_the_known_masses_a_lift_carries_fix_every_gain(lift_logged):
    truth, kt, nominal, _, bare = lift_logged
    known = [KnownLink(link, mass) for link, (mass, _, _) in LIFT_LINKS.items()]
    found = identify_gains(nominal, bare, known=known, armature=True, still=0.01)
    assert found.payloads == () and found.loads == () and found.known == tuple(known)
    true_gains = np.diag(truth.transmissions.reduction) * kt
    deviation = (found.gains - true_gains) / found.std
    assert np.all(np.abs(deviation) < 3.0), deviation
    assert np.all(found.relative_std < 5.0), found.relative_std
    assert np.allclose(np.abs(found.nominal / true_gains - 1.0), 0.2)    # what it was told
    estimate = found.estimate
    # the lift's mass (the sum of the four) is what was known: exact, no deviation
    fixed = estimate.names.index('M_carriage_R')
    assert estimate.std[fixed] == 0.0
    assert estimate.values[fixed] == pytest.approx(sum(v[0] for v in LIFT_LINKS.values()),
                                                   rel=1e-12)
    rest = np.arange(len(estimate.names)) != fixed
    deviation = (estimate.values - estimate.base.values)[rest] / estimate.std[rest]
    assert np.all(np.abs(deviation) < 3.0), dict(zip(np.array(estimate.names)[rest],
                                                     deviation.round(2)))
    assert 'the known mass of carriage (5 kg)' in found.summary()
    assert found.to_dict()['known'][3] == {'link': 'forearm', 'mass': 1.2, 'com': None,
                                           'inertia': None}


def test_least_squares_alone_shrinks_what_a_weak_equation_ties(lift_logged, monkeypatch):
    """Fit without the current noise in the model: the arm's gains come out far short."""
    truth, kt, nominal, _, bare = lift_logged
    from manipulator_dynamics.identification import gains as module

    def least_squares_only(A, rhs, kept, C, b, Z, x_p, z, sigma):
        from manipulator_dynamics.identification.least_squares import weighted_least_squares
        return weighted_least_squares(A @ Z, rhs - A @ x_p, kept=kept)[:5]
    monkeypatch.setattr(module, 'noise_in_currents', least_squares_only)
    known = [KnownLink(link, mass) for link, (mass, _, _) in LIFT_LINKS.items()]
    found = identify_gains(nominal, bare, known=known, armature=True, still=0.01)
    true_gains = np.diag(truth.transmissions.reduction) * kt
    assert np.max(np.abs(found.gains - true_gains) / found.std) > 5.0


def test_on_a_horizontal_rail_the_masses_need_the_rotor_inertia(tmp_path):
    """
    Tell a horizontal axis' carried masses from its rotor inertia: no gravity does.

    Both move with its acceleration alone (``M_carriage_R = M_carriage + Ia_rail + ...``).  The
    masses alone are refused naming ``Ia_rail``; with it known (a datasheet's), every gain
    comes back.
    """
    joints = (('rail', 'prismatic', 'base_link', 'carriage', '0 0 0.3', '1 0 0', 1.5),
              *LIFT_JOINTS[1:])
    (tmp_path / 'rail.urdf').write_text(robot_urdf('rail_arm', LIFT_LINKS, joints))
    truth = geared(tmp_path / 'rail.urdf', [2 * np.pi / 0.01, 80.0, -100.0, 60.0], 7)
    kt = np.random.default_rng(8).uniform(0.1, 0.6, truth.n)
    nominal = nominal_of(truth, kt, 9)
    log = tmp_path / 'rail.csv'
    write_motor_log(log, truth, kt, *tracked(truth, 20.0, 3), seed=103)
    masses = [KnownLink(link, mass) for link, (mass, _, _) in LIFT_LINKS.items()]
    with pytest.raises(md.IdentificationError, match=r'M_carriage_R = M_carriage \+ Ia_rail .*'
                       r'--known-parameter Ia_<joint>=VALUE'):
        identify_gains(nominal, str(log), known=masses, armature=True, still=0.01)
    rotor = KnownParameter('Ia_rail', truth.armature[0])
    found = identify_gains(nominal, str(log), known=masses + [rotor], armature=True,
                           still=0.01)
    true_gains = np.diag(truth.transmissions.reduction) * kt
    deviation = (found.gains - true_gains) / found.std
    assert np.all(np.abs(deviation) < 3.0) and np.all(found.relative_std < 5.0), deviation
    assert f'Ia_rail = {truth.armature[0]:g}' in found.fixed_by
    for bad, complaint in ((KnownParameter('Ia_nowhere', 1.0), 'Ia_nowhere: not a standard '
                            "parameter of model 'rail_arm'"),
                           (KnownParameter('Ia_rail', float('nan')), 'must be a finite number'),
                           (KnownParameter('M_forearm', 1.2), 'M_forearm is given twice')):
        with pytest.raises(md.IdentificationError, match=complaint):
            identify_gains(nominal, str(log), known=masses + [bad], armature=True)


def test_a_lone_link_mass_or_a_scaras_quill_say_what_is_missing(lift_logged, tmp_path):
    truth, kt, nominal, _, bare = lift_logged
    with pytest.raises(md.IdentificationError, match=r"known M_forearm cannot fix the gains' "
                       r'scale: it is regrouped .*M_carriage_R = M_carriage \+ M_turret'):
        identify_gains(nominal, bare, known=[KnownLink('forearm', 1.2)])
    # a SCARA's quill and tool masses fix its lift; what they add to the arms is regrouped into
    # the arms' own parameters, so j1, j2 and j4 keep a scale of their own
    (tmp_path / 'scara.urdf').write_text(robot_urdf('scara', SCARA_LINKS, SCARA_JOINTS))
    scara = geared(tmp_path / 'scara.urdf', [80.0, -60.0, 2 * np.pi / 0.02, 40.0], 6)
    t, q, qd, qdd = exciting(scara, seconds=4.0, rate=200.0)
    tau = md.inverse_dynamics(scara, q, qd, qdd, friction=True)
    log = tmp_path / 'scara.csv'
    csvlog.write(log, t, csvlog.joint_columns(scara.joint_names, position=q,
                                              current=scara.transmissions.motor_efforts(tau)))
    with pytest.raises(md.IdentificationError, match=r'the gains of j1, j2, j4 keep a scale of '
                       r'their own: .*the known mass of quill .*--payload-log.*--known-link'):
        identify_gains(scara, str(log), known=[KnownLink('quill', 1.5), KnownLink('tool', 0.8)])
    with pytest.raises(md.IdentificationError, match=r'known M_arm1 .* no effect'):
        identify_gains(scara, str(log), known=[KnownLink('arm1', 6.0)])
    # a load on the first arm, turned about a vertical axis alone: its mass moves nothing its
    # unknown centre of mass and inertia do not; said before any log is read
    with pytest.raises(md.IdentificationError, match=r"load's mass \(2 kg on arm1 in a run\) "
                       r"cannot fix the gains' scale: .*--payload LINK:MASS:X,Y,Z"):
        identify_gains(scara, str(log), 'no_such_log.csv', KnownPayload('arm1', 2.0))


def test_the_command_line_takes_known_links(lift_logged, tmp_path, capsys):
    truth, kt, nominal, urdf, bare = lift_logged
    from manipulator_dynamics.cli import main
    drives = tmp_path / 'nominal.yaml'
    drives.write_text(yaml.safe_dump(nominal.transmissions.to_dict()))
    known = [f'--known-link={link}:{mass}' for link, (mass, _, _) in LIFT_LINKS.items()]
    common = [urdf, bare, '--transmissions', str(drives), '--armature', '--still', '0.01']
    assert main(['identify-gains', *common, known[-1]]) == 2
    assert 'known M_forearm cannot fix' in capsys.readouterr().err
    assert main(['identify-gains', *common, *known, '--format', 'yaml']) == 0
    document = yaml.safe_load(capsys.readouterr().out)
    assert document['payloads'] == [] and document['loads'] == []
    assert [k['link'] for k in document['known']] == list(LIFT_LINKS)
    api = identify_gains(nominal, bare, armature=True, still=0.01,
                         known=[KnownLink(link, m) for link, (m, _, _) in LIFT_LINKS.items()])
    gains = np.array([document['gains'][j]['gain'] for j in truth.joint_names])
    assert np.allclose(gains, api.gains, rtol=1e-9)
    assert main(['identify-gains', *common, *known]) == 0
    assert 'scale fixed by the known mass of carriage (5 kg)' in capsys.readouterr().out
    # a parameter by name: the lift's rotor inertia, known beside the masses
    ia = f'--known-parameter=Ia_lift={truth.armature[0]}'
    assert main(['identify-gains', *common, *known, ia, '--format', 'json']) == 0
    assert json.loads(capsys.readouterr().out)['known'][-1] == {
        'parameter': 'Ia_lift', 'value': truth.armature[0]}
    with pytest.raises(SystemExit):
        main(['identify-gains', *common, '--known-parameter', 'Ia_lift'])
    assert 'is not NAME=VALUE' in capsys.readouterr().err
