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
Coupled motors (a motor that turns several joints) in every dynamics function.

The oracle: Pinocchio's rigid-body terms plus the motors written out by hand, ``A = sum Ia c
c^T`` and ``c (Fvm c.qd + Fcm sign(c.qd))``; and MuJoCo, whose fixed tendons turn the same
motors in the plant.
"""

import dataclasses

from helpers import coupled, pin_robot, random_state
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.contact.observer import momentum_terms
from manipulator_dynamics.control import friction_torque
from manipulator_dynamics.transmissions import load, TransmissionError, Transmissions
import numpy as np
import pytest


def by_hand(model):
    """Return ``(A, friction(qd))``: the rotor inertias and all friction, written out."""
    motors = model.coupled_motors()
    A = np.diag(model.armature)
    for j, row, ia in zip(motors.joints, motors.rows, motors.armature):
        A[j, j] -= ia
        A += ia * np.outer(row, row)

    def friction(qd):
        tau = model.viscous * qd + model.coulomb * np.sign(qd)
        for row, fv, fc in zip(motors.rows, motors.viscous, motors.coulomb):
            tau = tau + row * (fv * (row @ qd) + fc * np.sign(row @ qd))
        return tau
    return A, friction


def test_the_coupled_motors_are_the_rows_scaled_to_their_joint():
    model = coupled(md.load_model(robots.path('demo_arm')))
    motors = model.coupled_motors()
    R = model.transmissions.reduction
    assert list(motors.joints) == [model.n - 2, model.n - 1]
    assert np.allclose(motors.rows, R[-2:] / np.diag(R)[-2:, None], rtol=0, atol=1e-15)
    assert np.all(motors.armature == model.armature[-2:])
    assert model.transmissions.coupled_joints == model.joint_names[-2:]


def test_every_dynamics_function_against_pinocchio_and_the_motors_by_hand():
    model, P = pin_robot('ur5')
    model = coupled(model)
    A, friction = by_hand(model)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, qd, qdd = random_state(model, rng)
        M = P.crba(q) + A
        tau = P.rnea(q, qd, qdd) + A @ qdd + friction(qd)
        assert np.allclose(md.inertia_matrix(model, q), M, rtol=0, atol=1e-12)
        assert np.allclose(md.inverse_dynamics(model, q, qd, qdd, friction=True), tau, rtol=0,
                           atol=1e-11)
        assert np.allclose(friction_torque(model, qd), friction(qd), rtol=0, atol=1e-13)
        for method in ('auto', 'cholesky'):
            assert np.allclose(md.forward_dynamics(model, q, qd, tau, friction=True,
                                                   method=method), qdd, rtol=0, atol=1e-9)
        Y = md.regressor(model, q, qd, qdd, friction=True)
        assert np.allclose(Y @ md.standard_parameters(model, friction=True), tau, rtol=0,
                           atol=1e-11)
        kinetic = md.energy(model, q, qd) - md.energy(model, q, 0 * qd)
        assert kinetic == pytest.approx(0.5 * qd @ M @ qd, rel=1e-12)
        p, _ = momentum_terms(model, q, qd, friction=True, still=0.0)
        assert np.allclose(p, M @ qd, rtol=0, atol=1e-12)
    # a batch goes the compiled loops' way
    q, qd, qdd = random_state(model, rng, 4)
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
    assert np.allclose(np.einsum('snp,p->sn', md.regressor(model, q, qd, qdd, friction=True),
                                 md.standard_parameters(model, friction=True)), tau, atol=1e-11)
    assert np.allclose(md.forward_dynamics(model, q, qd, tau, friction=True), qdd, atol=1e-9)
    names = md.parameter_names(model, friction=True)
    assert names[-4:] == tuple(f'{kind}_{j}' for j in model.joint_names[-2:]
                               for kind in ('Fvm', 'Fcm'))


def test_saha_refuses_a_coupled_rotor_inertia_and_takes_the_rest():
    model, P = pin_robot('ur5')
    model = coupled(model)
    q, qd, qdd = random_state(model, np.random.default_rng(2))
    assert md.choose_method(model) == 'cholesky'
    with pytest.raises(ValueError, match=r'\'udut\' cannot hold the rotor inertia of a coupled'):
        md.forward_dynamics(model, q, qd, qd, method='udut')
    with pytest.raises(ValueError, match='udut: .* coupled motor'):
        md.udut(model, q)
    # without rotor inertia the motors' friction is all there is of them: Saha's sweeps take it
    _, friction = by_hand(model)
    tau = P.rnea(q, qd, qdd) + friction(qd)
    assert np.allclose(md.forward_dynamics(model, q, qd, tau, method='udut', armature=False,
                                           friction=True), qdd, atol=1e-9)


def test_a_motor_turning_two_branches_is_refused_by_forward_dynamics_naming_it():
    model, _ = pin_robot('panda')
    fingers = [j for j in model.joint_names if 'finger' in j]
    R = np.array([[10.0, 10.0], [0.0, 10.0]])
    model = dataclasses.replace(model, transmissions=Transmissions(fingers, R),
                                armature=np.full(model.n, 0.1))
    q, qd, _ = random_state(model, np.random.default_rng(3))
    with pytest.raises(ValueError, match=f'{fingers[0]}.*{fingers[1]}.*two branches'):
        md.forward_dynamics(model, q, qd, qd)
    # what does not factorise the tree still holds it: motor 1 turns both, motor 2 its own
    at = np.ix_(*[[model.joint_index(f) for f in fingers]] * 2)
    bare = dataclasses.replace(model, transmissions=None, armature=np.zeros(model.n))
    added = md.inertia_matrix(model, q)[at] - md.inertia_matrix(bare, q)[at]
    assert np.allclose(added, [[0.1, 0.1], [0.1, 0.2]], rtol=0, atol=1e-14)


def test_mujoco_turns_the_same_motors_through_tendons():
    mujoco = pytest.importorskip('mujoco', reason='MuJoCo is the independent plant')
    from manipulator_dynamics.plant import mujoco_model

    model = coupled(md.load_model(robots.path('demo_arm')))
    # MuJoCo's dry friction is a constraint, not a law: compare without it
    motors = model.transmissions
    model = dataclasses.replace(model, coulomb=np.zeros(model.n), transmissions=Transmissions(
        motors.joints, motors.reduction, motor_viscous=motors.motor_viscous))
    mj, qpos, dof = mujoco_model(model, friction=True)
    assert mj.ntendon == 2
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd, tau = random_state(model, rng)
        d.qpos[qpos], d.qvel[dof], d.qfrc_applied[dof] = q, qd, 10 * tau
        mujoco.mj_forward(mj, d)
        M = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, d, M)
        assert np.allclose(M[np.ix_(dof, dof)], md.inertia_matrix(model, q), rtol=0, atol=1e-10)
        ours = md.forward_dynamics(model, q, qd, 10 * tau, friction=True)
        assert np.allclose(d.qacc[dof], ours, rtol=1e-8, atol=1e-8)


def test_motor_friction_in_the_yaml_round_trip_and_refusals():
    text = """
joints: [a, b, c]
reduction: [[50, 0, 0], [0, 40, 0], [0, 40, 40]]
offset: {b: 0.5}
motor_friction: {c: {viscous: 0.25, coulomb: 1.5}}
"""
    tr = load(text)
    assert tr.coupled_joints == ('c',)
    assert list(tr.motor_viscous) == [0, 0, 0.25] and list(tr.motor_coulomb) == [0, 0, 1.5]
    assert load(tr.to_dict()) == tr
    with pytest.raises(TransmissionError, match=r'motor friction of joint \'a\', whose motor '
                       'turns it alone'):
        load(text.replace('{c: {viscous', '{a: {viscous'))
    with pytest.raises(TransmissionError, match="motor_friction of 'c' must be"):
        load(text.replace('coulomb: 1.5', 'dry: 1.5'))
    with pytest.raises(TransmissionError, match="motor_friction of 'z', a joint no reduction"):
        load(text.replace('{c: {viscous', '{z: {viscous'))
    with pytest.raises(TransmissionError, match="the motor of joint 'c' does not turn it"):
        Transmissions(['b', 'c'], [[40, 10], [40, 0.0]])


def test_identified_motor_friction_goes_back_into_the_model():
    model = coupled(md.load_model(robots.path('demo_arm')))
    last = model.joint_names[-1]
    other = model.with_parameters([0.75, 2.5], [f'Fvm_{last}', f'Fcm_{last}'])
    assert other.coupled_motors().viscous[-1] == 0.75
    assert other.coupled_motors().coulomb[-1] == 2.5
    assert other.transmissions.reduction is not None
    with pytest.raises(ValueError, match=f"'Fvm_{model.joint_names[0]}' names no link"):
        model.with_parameters([1.0], [f'Fvm_{model.joint_names[0]}'])
