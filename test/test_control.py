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

"""The control laws and the integrator the nodes run, checked without any node."""

import struct

import manipulator_dynamics as md
from manipulator_dynamics import control, robots, wire
import numpy as np
import pytest


@pytest.fixture(scope='module')
def arm():
    model = md.load_model(robots.path('demo_arm'))
    rng = np.random.default_rng(3)
    return model.with_joint_dynamics({name: {'viscous': v, 'coulomb': c, 'armature': a}
                                      for name, v, c, a in zip(model.joint_names,
                                                               rng.uniform(0.1, 1, model.n),
                                                               rng.uniform(0.1, 1, model.n),
                                                               rng.uniform(0.0, 0.1, model.n))})


def test_friction_torque_is_the_law_of_inverse_dynamics(arm):
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, arm.n))
    with_friction = md.inverse_dynamics(arm, q, qd, qdd, friction=True)
    without = md.inverse_dynamics(arm, q, qd, qdd)
    np.testing.assert_allclose(with_friction - without, control.friction_torque(arm, qd),
                               rtol=0, atol=1e-12)
    sign_from = -qd
    np.testing.assert_allclose(control.friction_torque(arm, qd, sign_from),
                               arm.viscous * qd - arm.coulomb * np.sign(qd), rtol=0, atol=0)


def test_computed_torque_on_the_plan_is_inverse_dynamics(arm):
    """With no error the feedback vanishes: the command is ID of the desired state."""
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-1, 1, (3, arm.n))
    tau = control.computed_torque(arm, q, qd, q, qd, qdd, 100.0, 20.0, friction=True)
    np.testing.assert_allclose(tau, md.inverse_dynamics(arm, q, qd, qdd, friction=True),
                               rtol=1e-12, atol=1e-12)


def test_computed_torque_gives_the_error_dynamics(arm):
    """Applied to the model, the law makes every joint's error obey e'' + kd e' + kp e = 0."""
    rng = np.random.default_rng(2)
    q, qd, q_d, qd_d, qdd_d = rng.uniform(-1, 1, (5, arm.n))
    kp, kd = rng.uniform(10, 100, arm.n), rng.uniform(1, 20, arm.n)
    tau = control.computed_torque(arm, q, qd, q_d, qd_d, qdd_d, kp, kd)
    qdd = md.forward_dynamics(arm, q, qd, tau)
    e, ed, edd = q_d - q, qd_d - qd, qdd_d - qdd
    np.testing.assert_allclose(edd + kd * ed + kp * e, 0.0, atol=1e-9)


def test_rk4_conserves_energy_without_friction(arm):
    """No effort, no friction: a free swing keeps its total energy, to the order of the scheme."""
    frictionless = arm.with_joint_dynamics({j: {'viscous': 0.0, 'coulomb': 0.0}
                                            for j in arm.joint_names})
    q, qd = np.full(arm.n, 0.3), np.zeros(arm.n)
    start = md.energy(frictionless, q, qd)
    drift = {}
    for h in (4e-3, 2e-3):
        qs, qds = q, qd
        for _ in range(int(round(0.4 / h))):
            qs, qds = control.rk4_step(frictionless, qs, qds, np.zeros(arm.n), h)
        drift[h] = abs(md.energy(frictionless, qs, qds) - start)
    assert drift[2e-3] < 1e-6 * max(1.0, abs(start))
    assert drift[2e-3] < drift[4e-3] / 8      # 4th order: halving the step divides by 16


def test_rk4_friction_dissipates_and_sticks(arm):
    """With friction (gravity held), energy only falls; a joint that would reverse stops."""
    q, qd = np.zeros(arm.n), np.full(arm.n, 0.5)
    energy = md.energy(arm, q, qd)
    for _ in range(400):
        q, qd = control.rk4_step(arm, q, qd, md.gravity_torques(arm, q), 1e-3, friction=True)
        now = md.energy(arm, q, qd)
        assert now <= energy + 1e-9
        energy = now
    assert np.all(qd >= 0.0)            # slowed to rest, never driven backwards by friction


def test_spline_trajectory():
    t = np.array([0.0, 0.5, 1.5, 2.0])
    q = np.array([[0.0, 1.0], [0.5, 0.0], [1.0, -1.0], [0.2, 0.3]])
    spline = control.SplineTrajectory(t, q)
    for i, ti in enumerate(t[:-1]):
        np.testing.assert_allclose(spline.at(ti)[0], q[i], atol=1e-12)
    np.testing.assert_allclose(spline.qd[[0, -1]], 0.0, atol=1e-12)     # clamped: at rest
    hold = control.SplineTrajectory([1.0], [[0.1, 0.2]])
    np.testing.assert_array_equal(hold.at(5.0)[0], [0.1, 0.2])
    with pytest.raises(ValueError, match='point 2 does not come after point 1'):
        control.SplineTrajectory([0.0, 1.0, 1.0], np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r'times \(T,\) and positions \(T, n\)'):
        control.SplineTrajectory([0.0, 1.0], np.zeros(2))


def _command(model, values, rows, law, qdd, limit, order, flags=0):
    """
    Call command_vector through a message's bytes: ``(status, state, tau, command)``.

    ``values (k, given)`` as the ``k`` arrays of a JointState's bytes, behind a header of 16
    bytes of any value with a stamp of 1 s: the node's compiled call (``wire.bytes_call``,
    which the install compiles), not command_vector's own entry, which the suite would compile
    for itself (47 s of a CI run).
    """
    from manipulator_dynamics.rigid.kinematics import kernel_model
    filled, given = values.shape
    data = bytes(4) + struct.pack('<iI', 1, 0) + bytes(4) + b''.join(
        np.ascontiguousarray(values[r]).tobytes() for r in range(filled))
    layout = np.full(len(data), -1, dtype=np.int16)
    state, tau = np.empty((filled, model.n)), np.empty(model.n)
    command = np.empty(len(order))
    status, _ = wire.bytes_call.call(
        kernel_model(model).address, data, layout, np.array([16, 8 * given, filled, given]),
        rows, law, flags, qdd, limit, order, 0, 0, 0.0, state, tau, command)
    return status, state, tau, command


@pytest.mark.parametrize('make', ['plain', 'coupled'])
def test_command_vector_is_the_general_path_s_law(rigid, make):
    """Each law of the compiled state-to-command call against the library's own functions."""
    from helpers import coupled, random_state
    from manipulator_dynamics.rigid.kinematics import ARMATURE, FRICTION
    from manipulator_dynamics.rigid.status import OK
    model = coupled(rigid) if make == 'coupled' else rigid
    rng = np.random.default_rng(model.n)
    n, given = model.n, model.n + 2
    rows = rng.permutation(given)[:n]                # the message names others too, in any order
    order = rng.permutation(n)[:max(1, n - 1)]       # the controller's joints, not all
    unlimited = np.full(n, np.inf)
    for _ in range(5):
        q, qd, qdd = random_state(model, rng)
        values = rng.normal(size=(3, given))
        values[0, rows], values[1, rows] = q, qd
        g = md.gravity_torques(model, q)
        laws = {control.GRAVITY: (0, g),
                control.GRAVITY_FRICTION: (0, g + control.friction_torque(model, qd)),
                control.INVERSE: (ARMATURE, md.inverse_dynamics(model, q, qd, qdd)),
                -control.INVERSE: (ARMATURE | FRICTION,
                                   md.inverse_dynamics(model, q, qd, qdd, friction=True))}
        for law, (flags, expected) in laws.items():
            status, state, tau, command = _command(model, values, rows, abs(law), qdd,
                                                   unlimited, order, flags)
            assert status == OK
            np.testing.assert_array_equal(state, values[:, rows])
            np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(command, tau[order])
        # a state of positions only: the inverse dynamics at zero velocity
        status, _, tau, _ = _command(model, values[:1], rows, control.INVERSE, qdd, unlimited,
                                     order, ARMATURE)
        assert status == OK
        np.testing.assert_allclose(tau, md.inverse_dynamics(model, q, np.zeros(n), qdd),
                                   rtol=1e-12, atol=1e-12)


def test_command_vector_accepts_only_what_the_general_path_would_send_as_it_is():
    """A value not finite, or an effort beyond its limit: not OK, so the general path runs."""
    from manipulator_dynamics.rigid.status import NON_FINITE, OK
    model = md.load_model(robots.path('demo_arm'))
    n = model.n
    rows, order = np.arange(n), np.arange(n)
    q = np.full(n, 0.3)
    g = md.gravity_torques(model, q)
    values = np.stack([q, np.zeros(n), g])
    zero = np.zeros(n)
    assert _command(model, values, rows, control.GRAVITY, zero, np.abs(g), order)[0] == OK
    for row, joint in ((0, 2), (1, 5), (2, 0)):      # any field, any joint read
        bad = values.copy()
        bad[row, joint] = np.nan
        assert _command(model, bad, rows, control.GRAVITY, zero, np.abs(g), order)[0] \
            == NON_FINITE
    # another robot's joint: not read
    unread = np.hstack([values, np.full((3, 1), np.inf)])
    assert _command(model, unread, rows, control.GRAVITY, zero, np.abs(g), order)[0] == OK
    tight = np.abs(g).copy()
    tight[np.argmax(np.abs(g))] *= 0.99
    status, _, tau, command = _command(model, values, rows, control.GRAVITY, zero, tight, order)
    assert status == control.BEYOND_LIMIT
    np.testing.assert_array_equal(command, g)        # written, not clamped: the caller clamps
