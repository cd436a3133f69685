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

from conftest import ROOT
import manipulator_dynamics as md
from manipulator_dynamics import csvlog, robots
from manipulator_dynamics.identification.logs import IdentificationError, read_csv
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
    """``identify --transmissions``: the motor-side log straight in, held-out error reported."""
    path, _, _ = tx40_log(tmp_path)
    yaml_path = tmp_path / 'tx40_transmissions.yaml'
    yaml_path.write_text(TX40_YAML)
    out = subprocess.run(
        [sys.executable, '-m', 'manipulator_dynamics.cli', 'identify',
         os.path.join(TX40, 'tx40_mdh_modified.urdf'), path, '--transmissions', str(yaml_path),
         '--armature', '--friction', 'offset', '--folds', '3', '--format', 'json'],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    import json
    report = json.loads(out.stdout)
    error = report['validation']['normalised_squared_error_percent']
    assert 0 < error['identified'] < 20 and error['identified'] < error['urdf'] / 4, error
