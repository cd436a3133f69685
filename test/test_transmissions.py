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
Transmissions: ros2_control's from a URDF, any linear one from a YAML, and logs read through them.

Proven against ros2_control's formulas, written out, and a real Staubli TX40's hand conversion.
"""

import math
import os
import subprocess
import sys

from helpers import consistent_at_every_weight, exciting, ROOT
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.errors import IdentificationError
from manipulator_dynamics.recordings import csvlog
from manipulator_dynamics.recordings.formats import read_csv
from manipulator_dynamics.transmissions import TransmissionError, Transmissions
import numpy as np
import pytest

TX40 = os.path.join(ROOT, '..', 'shared', 'data', 'staubli_tx40')
needs_tx40 = pytest.mark.skipif(
    not os.path.isfile(os.path.join(TX40, 'pos_read_data.csv')),
    reason=f'the Staubli TX40 log is not at {os.path.normpath(TX40)} (../shared/data beside '
    'the clone)')
#: The TX40's transmissions as its README gives them: gear ratios, motor 6 turning with joints
#: 5 and 6, and the URDF's zero two joints away from the robot's.
TX40_YAML = """
joints: [joint_1, joint_2, joint_3, joint_4, joint_5, joint_6]
reduction:
  - [32, 0, 0, 0, 0, 0]
  - [0, 32, 0, 0, 0, 0]
  - [0, 0, 45, 0, 0, 0]
  - [0, 0, 0, -48, 0, 0]
  - [0, 0, 0, 0, 45, 0]
  - [0, 0, 0, 0, 32, 32]
offset: {joint_2: -1.5707963267948966, joint_3: 1.5707963267948966}
"""


def with_transmissions(xml, inside_ros2_control=True):
    """Return the demo arm's URDF with ``xml`` (transmission elements) added."""
    with open(robots.path('demo_arm')) as f:
        urdf = f.read()
    block = f'<ros2_control name="arm" type="system">{xml}</ros2_control>' \
        if inside_ros2_control else xml
    return urdf.replace('</robot>', block + '</robot>')


SIMPLE = """
<transmission name="t3">
  <plugin>transmission_interface/SimpleTransmission</plugin>
  <actuator name="motor3" role="actuator1"/>
  <joint name="joint3" role="joint1">
    <mechanical_reduction>-50.0</mechanical_reduction>
    <offset>0.25</offset>
  </joint>
</transmission>"""

DIFFERENTIAL = """
<transmission name="wrist">
  <plugin>transmission_interface/DifferentialTransmission</plugin>
  <actuator name="m6" role="actuator1"><mechanical_reduction>20.0</mechanical_reduction></actuator>
  <actuator name="m7" role="actuator2">
    <mechanical_reduction>-15.0</mechanical_reduction>
  </actuator>
  <joint name="joint6" role="joint1">
    <mechanical_reduction>2.0</mechanical_reduction><offset>0.1</offset>
  </joint>
  <joint name="joint7" role="joint2">
    <mechanical_reduction>-1.5</mechanical_reduction><offset>-0.3</offset>
  </joint>
</transmission>"""


def test_a_simple_transmission_is_ros2_controls():
    """act_pos = n (jnt_pos - offset), jnt_eff = n act_eff: SimpleTransmission's."""
    model = md.load_model(with_transmissions(SIMPLE))
    t = model.transmissions
    assert t.joints == ('joint3',) and t.blocks == (('joint3',),)
    rng = np.random.default_rng(0)
    q, qd, tau_m = rng.normal(size=(3, 5, 1))
    np.testing.assert_allclose(t.motor_positions(q), -50.0 * (q - 0.25), rtol=1e-15)
    np.testing.assert_allclose(t.joint_positions(-50.0 * (q - 0.25)), q, rtol=1e-13)
    np.testing.assert_allclose(t.motor_velocities(qd), -50.0 * qd, rtol=1e-15)
    np.testing.assert_allclose(t.joint_efforts(tau_m), -50.0 * tau_m, rtol=1e-15)
    np.testing.assert_allclose(t.motor_efforts(-50.0 * tau_m), tau_m, rtol=1e-13)


def test_ros1_transmissions_read_the_actuators_reduction():
    """ROS 1's form: <type>, the actuator's <mechanicalReduction>, at the URDF's top level."""
    xml = """
    <transmission name="t1">
      <type>transmission_interface/SimpleTransmission</type>
      <joint name="joint1"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
      <actuator name="motor1"><mechanicalReduction>100</mechanicalReduction></actuator>
    </transmission>"""
    model = md.load_model(with_transmissions(xml, inside_ros2_control=False))
    assert model.transmissions == Transmissions(['joint1'], [[100.0]])


def test_a_differential_transmission_is_ros2_controls():
    """Each of DifferentialTransmission's formulas, written out, both ways."""
    model = md.load_model(with_transmissions(SIMPLE + DIFFERENTIAL))
    t = model.transmissions
    assert t.blocks == (('joint3',), ('joint6', 'joint7'))
    wrist = t.restricted(['joint6', 'joint7'])
    ar, jr, off = (20.0, -15.0), (2.0, -1.5), np.array([0.1, -0.3])
    rng = np.random.default_rng(1)
    a, ad, ae = rng.normal(size=(3, 2))            # actuator position, velocity, effort
    joint_position = [(a[0] / ar[0] + a[1] / ar[1]) / (2 * jr[0]) + off[0],
                      (a[0] / ar[0] - a[1] / ar[1]) / (2 * jr[1]) + off[1]]
    joint_velocity = [(ad[0] / ar[0] + ad[1] / ar[1]) / (2 * jr[0]),
                      (ad[0] / ar[0] - ad[1] / ar[1]) / (2 * jr[1])]
    joint_effort = [jr[0] * (ae[0] * ar[0] + ae[1] * ar[1]),
                    jr[1] * (ae[0] * ar[0] - ae[1] * ar[1])]
    np.testing.assert_allclose(wrist.joint_positions(a), joint_position, rtol=1e-13)
    np.testing.assert_allclose(wrist.joint_velocities(ad), joint_velocity, rtol=1e-13)
    np.testing.assert_allclose(wrist.joint_efforts(ae), joint_effort, rtol=1e-13)
    x = np.array(joint_position) - off               # and back: joint_to_actuator
    np.testing.assert_allclose(wrist.motor_positions(joint_position),
                               [(x[0] * jr[0] + x[1] * jr[1]) * ar[0],
                                (x[0] * jr[0] - x[1] * jr[1]) * ar[1]], rtol=1e-12)
    e = np.array(joint_effort)
    np.testing.assert_allclose(wrist.motor_efforts(e),
                               [(e[0] / jr[0] + e[1] / jr[1]) / (2 * ar[0]),
                                (e[0] / jr[0] - e[1] / jr[1]) / (2 * ar[1])], rtol=1e-12)


def test_any_linear_transmission_keeps_the_power():
    """The power kept, tau . qd = tau_motor . qd_motor, and each map inverted, for any R."""
    rng = np.random.default_rng(2)
    R = rng.normal(size=(4, 4)) * 30
    t = Transmissions(['a', 'b', 'c', 'd'], R, rng.normal(size=4))
    q, qd, tau_m = rng.normal(size=(3, 10, 4))
    assert np.allclose(np.sum(t.joint_efforts(tau_m) * qd, axis=1),
                       np.sum(tau_m * t.motor_velocities(qd), axis=1), rtol=1e-12)
    np.testing.assert_allclose(t.joint_positions(t.motor_positions(q)), q, atol=1e-12)
    np.testing.assert_allclose(t.joint_velocities(t.motor_velocities(qd)), qd, atol=1e-12)
    np.testing.assert_allclose(t.motor_efforts(t.joint_efforts(tau_m)), tau_m, atol=1e-10)


def test_a_yaml_says_what_the_urdf_says_and_replaces_it(tmp_path):
    """The same transmissions from a YAML matrix load the same model; the YAML wins."""
    urdf = with_transmissions(SIMPLE + DIFFERENTIAL)
    from_urdf = md.load_model(urdf).transmissions
    path = tmp_path / 'transmissions.yaml'
    R = from_urdf.reduction
    path.write_text('joints: [joint3, joint6, joint7]\nreduction:\n'
                    + ''.join(f'  - [{", ".join(repr(float(x)) for x in row)}]\n' for row in R)
                    + 'offset: {joint3: 0.25, joint6: 0.1, joint7: -0.3}\n')
    assert md.load_model(robots.path('demo_arm'), transmissions=str(path)).transmissions \
        == from_urdf
    simple = md.load_model(urdf, transmissions={'reduction': {'joint1': 100}})
    assert simple.transmissions == Transmissions(['joint1'], [[100.0]])


@pytest.mark.parametrize('source, complaint', [
    ({'reduction': {'joint1': 0}}, "no motor turns joint 'joint1'"),
    ({'reduction': {'joint9': 10}}, "'joint9' is not a joint of the robot"),
    ({'joints': ['joint1', 'joint2'], 'reduction': [[1, 2], [2, 4]]}, 'singular'),
    ({'joints': ['joint1', 'joint2'], 'reduction': [[1, 2], [2]]},
     'reduction row 2 (motor of joint2) has 1 values for 2 joints'),
    ({'joints': ['joint1'], 'reduction': [[1]], 'offset': {'joint2': 1}},
     "offset of 'joint2', a joint no reduction names"),
    ({'reduction': {'joint1': 'ten'}}, "reduction of 'joint1' must be a finite number"),
    ({'reduction': {'joint1': 10}, 'gears': 1}, "unknown field 'gears'"),
    ({'joints': ['joint1']}, 'has no reduction'),
])
def test_bad_transmissions_are_refused_by_name(source, complaint):
    with pytest.raises(TransmissionError, match=complaint.replace('(', r'\(').replace(')', r'\)')):
        md.load_model(robots.path('demo_arm'), transmissions=source)


@pytest.mark.parametrize('xml, complaint', [
    (SIMPLE.replace('SimpleTransmission', 'FourBarLinkageTransmission'),
     "transmission 't3': type 'FourBarLinkageTransmission' is not understood"),
    (SIMPLE.replace('-50.0', '0'), "transmission 't3': the mechanical reduction of joint "
     "'joint3' must be a finite number other than 0"),
    (SIMPLE + SIMPLE.replace('name="t3"', 'name="t3b"'),
     "joint 'joint3' is in two transmissions, 't3' and 't3b'"),
])
def test_a_urdf_transmission_that_cannot_be_read_refuses_its_motor_columns(tmp_path, xml,
                                                                           complaint):
    """
    The model loads (a vendor's URDF may hold a type of its own); its motors' columns do not.

    A log that gives joint3's motor side is refused with the reason, naming the column.
    """
    model = md.load_model(with_transmissions(xml))
    assert complaint in model.transmissions.unusable['joint3']
    n = model.n
    columns = csvlog.joint_columns(model.joint_names, position=np.zeros((3, n)),
                                   effort=np.zeros((3, n)))
    columns['joint3.motor_position'] = columns.pop('joint3.position')
    path = tmp_path / 'log.csv'
    csvlog.write(path, np.arange(3) * 0.01, columns)
    with pytest.raises(IdentificationError, match=r'joint3.motor_position cannot be read: '
                       + complaint.replace('(', r'\(')):
        read_csv(model, str(path))


def test_a_differential_needs_its_roles():
    xml = DIFFERENTIAL.replace('role="joint2"', 'role="joint1"')
    model = md.load_model(with_transmissions(xml))
    assert "the joints' roles must be joint1 and joint2" in model.transmissions.unusable['joint6']


def test_a_coupling_cut_by_the_model_is_refused_and_one_outside_it_dropped():
    urdf = with_transmissions(SIMPLE + DIFFERENTIAL)
    with pytest.raises(TransmissionError, match='couples joint6 .* with joint7 .*not in it'):
        md.load_model(urdf, without_links=['link7'])
    model = md.load_model(urdf, without_links=['link6'])
    assert model.transmissions.joints == ('joint3',)


def test_motor_columns_of_a_log_are_read_through_the_transmissions(tmp_path):
    """A CSV with the motor side of some joints: equal to the joint side it came from."""
    model = md.load_model(with_transmissions(SIMPLE + DIFFERENTIAL))
    t = model.transmissions
    rng = np.random.default_rng(3)
    time = np.arange(50) * 0.01
    q, qd, tau = rng.normal(size=(3, 50, model.n))
    k = [model.joint_index(j) for j in t.joints]
    columns = csvlog.joint_columns(model.joint_names, position=q, velocity=qd, effort=tau)
    for field, through in (('position', t.motor_positions), ('velocity', t.motor_velocities),
                           ('effort', t.motor_efforts)):
        motor = through({'position': q, 'velocity': qd, 'effort': tau}[field][:, k])
        for i, j in enumerate(t.joints):
            del columns[f'{j}.{field}']
            columns[f'{j}.motor_{field}'] = motor[:, i]
    path = tmp_path / 'motor_side.csv'
    csvlog.write(path, time, columns, fmt='%.17g')
    read = read_csv(model, str(path), velocity=True)
    for key, expected in (('q', q), ('qd', qd), ('tau', tau)):
        np.testing.assert_allclose(read[key], expected, rtol=0, atol=1e-12)
    del columns['joint7.motor_effort']               # half of the wrist's motors
    csvlog.write(path, time, columns)
    with pytest.raises(IdentificationError, match=r'joint6.effort \(or joint6.motor_effort, '
                       r'joint7.motor_effort through its transmission\)'):
        read_csv(model, str(path))


def tx40_log(directory):
    """Write the TX40's two raw files as one CSV of the package's convention: columns renamed."""
    positions = csvlog.read(os.path.join(TX40, 'pos_read_data.csv'))
    torques = csvlog.read(os.path.join(TX40, 'curr_data.csv'))
    time = np.arange(len(positions.values)) / 5000.0     # 5 kHz, the README says
    columns = {}
    for k in range(6):
        columns[f'joint_{k + 1}.motor_position'] = positions.values[:, k]
        columns[f'joint_{k + 1}.motor_effort'] = torques.values[:, k]
    path = os.path.join(directory, 'tx40_motor_side.csv')
    csvlog.write(path, time, columns, fmt='%.17g')
    return path, positions.values, torques.values


@needs_tx40
def test_the_tx40_log_read_through_its_transmissions_is_the_hand_conversion(tmp_path):
    """The README's conversion by hand, joint by joint, equals the transmissions' to 1e-12."""
    model = md.load_model(os.path.join(TX40, 'tx40_mdh_modified.urdf'), transmissions=TX40_YAML)
    path, qm, tm = tx40_log(tmp_path)
    t, q, tau = read_csv(model, path)
    N = (32, 32, 45, -48, 45, 32)
    hand_q = qm / np.array(N)
    hand_q[:, 5] = qm[:, 5] / 32 - hand_q[:, 4]         # motor 6 = 32 q5 + 32 q6
    hand_q[:, 1] -= math.pi / 2
    hand_q[:, 2] += math.pi / 2
    hand_tau = tm * np.array(N)
    hand_tau[:, 4] = 45 * tm[:, 4] + 32 * tm[:, 5]      # joint 5 feels motor 6 too
    assert model.transmissions.blocks[-1] == ('joint_5', 'joint_6')
    np.testing.assert_allclose(q, hand_q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tau, hand_tau, rtol=0, atol=1e-12 * np.abs(hand_tau).max())
    assert len(t) == 45000 and t[-1] == pytest.approx(8.9998)


@needs_tx40
def test_the_cli_identifies_the_tx40_from_its_motor_side(tmp_path):
    """
    ``identify --transmissions --still auto --folds 3``: the motor-side log straight in.

    Each third held out in turn, its cutoff and still speeds chosen on the other two: the
    coupled wrist's joint 5, which the joints alone left at 6.24 N m of 8.16 (a model with no
    term for motor 6 acting on it), is predicted within a quarter of its torque.
    """
    path, _, _ = tx40_log(tmp_path)
    yaml_path = tmp_path / 'tx40_transmissions.yaml'
    yaml_path.write_text(TX40_YAML)
    out = subprocess.run(
        [sys.executable, '-m', 'manipulator_dynamics.cli', 'identify',
         os.path.join(TX40, 'tx40_mdh_modified.urdf'), path, '--transmissions', str(yaml_path),
         '--armature', '--friction-law', 'offset', '--still', 'auto', '--folds', '3',
         '--format', 'json'],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    import json
    report = json.loads(out.stdout)
    pooled = report['validation']
    error = pooled['normalised_squared_error_percent']
    assert 0 < error['identified'] < 5 and error['identified'] < error['urdf'] / 10, error
    joint5 = pooled['rms']['identified'][4] / pooled['torque_rms'][4]
    assert joint5 < 0.25, pooled
    names = [p['name'] for p in report['parameters']]
    assert {'Fvm_joint_6', 'Fcm_joint_6', 'Ia_joint_6'} <= set(names)
    still = report['processing']['still']
    assert still['how'].startswith('auto') and 'motor of joint_6' in still['speeds']
    assert 0 < pooled['left_out_percent']['joint_5'] < 40      # the rest at the end, mostly


#: FIGAROH's names: link parameters, and per joint rotor inertia, friction, offset.
FIGAROH_LINK = {'Ixx': 'XX', 'Ixy': 'XY', 'Ixz': 'XZ', 'Iyy': 'YY', 'Iyz': 'YZ', 'Izz': 'ZZ',
                'mx': 'MX', 'my': 'MY', 'mz': 'MZ', 'm': 'M'}


def figaroh_in_ours(kind, i):
    """
    Give FIGAROH's standard parameter ``kind i`` in ours: ``{our name: coefficient}``.

    FIGAROH writes motor 6 by its cross terms only: ``Iam6 qdd6 + fvm6 qd6`` on joint 5,
    ``Iam6 qdd5 + fvm6 qd5`` on joint 6 (``fsm6 sign(qd5 + qd6)`` on both), and keeps ``Ia5
    qdd5``, ``fv5 qd5``, ``fv6 qd6`` apart.  Ours turns the whole motor with ``c = (.., 1, 1)``:
    ``Ia6 c (c . qdd) + Fvm6 c (c . qd)``, whose diagonal parts are FIGAROH's ``Ia5`` and
    ``fv5``, ``fv6`` too.  So the same torques have ``Ia5 = Ia5 + Ia6``, ``Iam6 = Ia6``,
    ``fv5 = Fv5 + Fvm6``, ``fv6 = Fv6 + Fvm6``, ``fvm6 = Fvm6``, ``fsm6 = Fcm6`` (theirs on
    the left).
    """
    if kind in FIGAROH_LINK:
        return {f'{FIGAROH_LINK[kind]}_link_{i}': 1.0}
    if kind == 'Ia':
        return {f'Ia_joint_{i}': 1.0, **({'Ia_joint_6': 1.0} if i == 5 else {})}
    if kind == 'fv':
        return {f'Fv_joint_{i}': 1.0, **({'Fvm_joint_6': 1.0} if i in (5, 6) else {})}
    return {{'Iam': 'Ia', 'fvm': 'Fvm', 'fsm': 'Fcm', 'fs': 'Fc', 'off': 'Fo'}[kind]
            + f'_joint_{i}': 1.0}


def figaroh_base_parameters():
    """Yield FIGAROH's WLS base parameters: ``(text, {our name: coefficient}, value, std)``."""
    import re
    with open(os.path.join(TX40, 'TX40_bp_5.csv')) as f:
        for line in f:
            if not line.strip():
                continue
            text, _, _, value, relative = line.rsplit(',', 4)
            combination = {}
            for sign, coefficient, kind, i in re.findall(
                    r'(^|[+-])\s*(?:([\d.]+)\*)?([A-Za-z]+?)(\d)(?=\s|$)', text.strip()):
                scale = (-1.0 if sign == '-' else 1.0) * float(coefficient or 1.0)
                for name, c in figaroh_in_ours(kind, int(i)).items():
                    combination[name] = combination.get(name, 0.0) + scale * c
            value = float(value)
            yield text, combination, value, abs(value) * float(relative) / 100.0


@needs_tx40
def test_the_tx40_base_parameters_agree_with_figaroh(tmp_path):
    """
    Compare FIGAROH's WLS base parameters of this log with ours, read from the raw files.

    Every one of theirs that is a combination of ours (FIGAROH's motor 6 mapped as
    :func:`figaroh_in_ours` says) with a relative deviation under 10 % in both lies within 3
    of FIGAROH's deviations of our value.  Nothing is converted by hand: the log is read
    through the transmissions YAML.  The same identification as FIGAROH's: its window of the
    log (0.1-7.5 s, the README says), every equation in it (FIGAROH leaves none out); the
    cutoff is the data's.  (Still speeds, which leave out the equations at and around rest and
    reversals, are another estimator: on this joint friction they raise the Coulomb terms and
    lower the viscous ones by 3-6 of FIGAROH's deviations, as a real joint's friction, higher
    near rest than Fc + Fv |qd|, makes them.)
    """
    model = md.load_model(os.path.join(TX40, 'tx40_mdh_modified.urdf'), transmissions=TX40_YAML)
    path, _, _ = tx40_log(tmp_path)
    t, q, tau = read_csv(model, path)
    window = (t >= 0.1) & (t <= 7.5)
    estimate = md.identify(model, (t[window], q[window], tau[window]), friction='offset',
                           armature=True)
    base = estimate.base
    position = {name: k for k, name in enumerate(base.standard_names)}
    T = np.zeros((base.count, len(base.standard_names)))
    T[np.arange(base.count), base.index] = 1.0
    for k, name in enumerate(base.grouped):
        T[:, position[name]] += base.beta[:, k]
    compared, far = [], []
    for text, combination, value, std in figaroh_base_parameters():
        v = np.zeros(len(base.standard_names))
        for name, c in combination.items():
            v[position[name]] = c
        x = np.linalg.lstsq(T.T, v, rcond=None)[0]
        if np.abs(T.T @ x - v).max() > 2e-3 * np.abs(v).max():
            continue                        # not a combination of ours (grouped otherwise)
        ours = float(x @ estimate.values)
        ours_std = float(np.sqrt(x @ estimate.covariance @ x))
        if std > 0.1 * abs(value) or ours_std > 0.1 * abs(ours):
            continue
        compared.append(text)
        if abs(ours - value) > 3 * std:
            far.append(f'{text}: ours {ours:.5g} +- {ours_std:.2g}, FIGAROH {value:.5g} +- '
                       f'{std:.2g}')
    assert len(compared) >= 15, compared
    assert not far, far


def test_the_urdf_the_yaml_the_cli_and_a_node_load_the_same_motors(tmp_path, capsys):
    """
    A differential in the URDF, the same written as YAML with its motors' friction: one model.

    The YAML written from the URDF's transmissions loads the same coupled motors (their rows to
    1e-12) and, with its friction, the dynamics the URDF's model has plus that friction; the
    CLI's ``base-params --transmissions`` gives the library's base parameters of that model,
    names and values.  (base_params_node's ``transmissions`` parameter: test_nodes_base_params.)
    """
    import json

    import yaml

    from manipulator_dynamics import cli
    urdf = tmp_path / 'arm.urdf'
    urdf.write_text(with_transmissions(DIFFERENTIAL))
    dynamics = tmp_path / 'dynamics.yaml'
    dynamics.write_text(yaml.safe_dump({'joint6': {'armature': 0.05},
                                        'joint7': {'armature': 0.02}}))
    from_urdf = md.load_model(str(urdf), joint_dynamics=str(dynamics))
    written = from_urdf.transmissions.with_motor_friction({'joint6': 0.3}, {'joint7': 0.8})
    path = tmp_path / 'transmissions.yaml'
    path.write_text(yaml.safe_dump(written.to_dict()))
    model = md.load_model(robots.path('demo_arm'), joint_dynamics=str(dynamics),
                          transmissions=str(path))
    assert model.transmissions == written
    a, b = model.coupled_motors(), from_urdf.coupled_motors()
    np.testing.assert_allclose(a.rows, b.rows, rtol=0, atol=1e-12)
    assert list(a.viscous) == [0.3, 0.0] and list(a.coulomb) == [0.0, 0.8]
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.normal(size=(3, 4, model.n))
    rate = qd @ a.rows.T                                    # each motor's, (4, 2)
    motor = (a.viscous * rate + a.coulomb * np.sign(rate)) @ a.rows
    np.testing.assert_allclose(md.inverse_dynamics(model, q, qd, qdd, friction=True),
                               md.inverse_dynamics(from_urdf, q, qd, qdd, friction=True) + motor,
                               rtol=0, atol=1e-12)
    assert cli.main(['base-params', robots.path('demo_arm'), '--joint-dynamics', str(dynamics),
                     '--transmissions', str(path), '--friction', '--armature', '--format',
                     'json']) == 0
    said = json.loads(capsys.readouterr().out)
    base = md.base_parameters(model, friction=True, armature=True)
    assert [p['name'] for p in said['parameters']] == list(base.names)
    # a differential's two motors and two joints give three viscous terms: one is grouped
    assert {'Fcm_joint6', 'Fcm_joint7', 'Ia_joint7'} <= set(base.names)
    assert 'Fvm_joint6' in base.standard_names
    np.testing.assert_allclose([p['value'] for p in said['parameters']], base.values, rtol=0,
                               atol=1e-12)


def test_a_coupled_motors_friction_is_identified_and_written_back(tmp_path):
    """
    Torques of a wrist whose last motor turns two joints: its inertia and friction come back.

    The demo arm's joint 7 motor turns joints 6 and 7 (``30 q6 + 30 q7``) with rotor inertia
    and viscous and dry friction of its own; identified from a filtered time series they are
    found within 3 reported deviations, and the URDF, joint-dynamics and transmissions files
    written load the identified model's torques.
    """
    import yaml
    path = tmp_path / 'transmissions.yaml'
    path.write_text(yaml.safe_dump({
        'joints': ['joint6', 'joint7'], 'reduction': [[40.0, 0.0], [30.0, 30.0]],
        'motor_friction': {'joint7': {'viscous': 0.25, 'coulomb': 0.75}}}))
    model = md.load_model(robots.path('demo_arm'), transmissions=str(path),
                          joint_dynamics={'joint6': {'armature': 0.02},
                                          'joint7': {'armature': 0.03}})
    t, q, qd, qdd = exciting(model, seconds=20.0, seed=3)
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
    tau += np.random.default_rng(4).normal(size=tau.shape) * 0.01
    estimate = md.identify(model, (t, q, tau), armature=True, cutoff=2.5,
                           physically_consistent=True)
    truth = dict(zip(estimate.base.standard_names,
                     md.standard_parameters(model, armature=True, friction=True)))
    for name in ('Fvm_joint7', 'Fcm_joint7'):
        k = estimate.names.index(name)          # not grouped: its own column
        assert abs(estimate.values[k] - truth[name]) < 3 * estimate.std[k], name
    written = estimate.to_urdf(tmp_path / 'identified.urdf')
    assert [os.path.basename(p) for p in written] == [
        'identified.urdf', 'identified.joint_dynamics.yaml', 'identified.transmissions.yaml']
    loaded = md.load_model(written[0], joint_dynamics=written[1], transmissions=written[2])
    identified = estimate.identified_model()
    assert loaded.coupled_motors().viscous == pytest.approx(identified.coupled_motors().viscous)
    np.testing.assert_allclose(md.inverse_dynamics(loaded, q[::50], qd[::50], qdd[::50],
                                                   friction=True),
                               md.inverse_dynamics(identified, q[::50], qd[::50], qdd[::50],
                                                   friction=True), rtol=1e-9, atol=1e-9)


@needs_tx40
def test_the_tx40s_consistent_fit_converges_at_every_prior_weight(tmp_path):
    """The TX40 from its motor side: every weight of ``prior_weight='auto'`` converges."""
    path, _, _ = tx40_log(tmp_path)
    drives = tmp_path / 'tx40.yaml'
    drives.write_text(TX40_YAML)
    model = md.load_model(os.path.join(TX40, 'tx40_mdh_modified.urdf'), transmissions=drives)
    found = consistent_at_every_weight(model, path, cutoff=53.3333, friction='offset',
                                       armature=True, still='auto')
    assert all(converged for converged, _ in found.values()), found
