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
Closed-form oracles: a pendulum and the textbook 2-link planar arm.

The arm's equations are those of Spong, Hutchinson & Vidyasagar, "Robot Modeling and Control",
section 7.4.
"""

import math

from helpers import TWO_LINK as P, two_link_urdf
import manipulator_dynamics as md
import numpy as np
import pytest

G = 9.81


def pendulum_urdf(m, length, inertia):
    """Make one revolute joint about y; a body of mass m whose CoM hangs ``length`` below."""
    return f"""<robot name="pendulum"><link name="base"/>
      <link name="bob"><inertial><origin xyz="0 0 {-length}"/><mass value="{m}"/>
        <inertia ixx="{inertia}" ixy="0" ixz="0" iyy="{inertia}" iyz="0"
                 izz="{inertia / 2}"/></inertial></link>
      <joint name="swing" type="continuous"><parent link="base"/><child link="bob"/>
        <axis xyz="0 1 0"/></joint></robot>"""


def test_pendulum():
    m, length, inertia = 1.3, 0.7, 0.02
    model = md.load_model(pendulum_urdf(m, length, inertia))
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-3, 3, (3, 50))
    # tau = (I + m l^2) qdd + m g l sin q : the CoM is at (-l sin q, 0, -l cos q)
    expected = (inertia + m * length ** 2) * qdd + m * G * length * np.sin(q)
    tau = md.inverse_dynamics(model, q[:, None], qd[:, None], qdd[:, None])[:, 0]
    np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(md.inertia_matrix(model, q[:, None])[:, 0, 0],
                               inertia + m * length ** 2,
                               rtol=1e-14)
    qdd_fd = md.forward_dynamics(model, q[:, None], qd[:, None], tau[:, None], method='udut')
    np.testing.assert_allclose(qdd_fd[:, 0], qdd, rtol=1e-10, atol=1e-10)


def textbook(q, qd, qdd):
    """M, C qd, g and tau of the 2-link planar arm in closed form."""
    m1, m2, l1, lc1, lc2, I1, I2 = (P[k] for k in ('m1', 'm2', 'l1', 'lc1', 'lc2', 'I1', 'I2'))
    c2, s2 = math.cos(q[1]), math.sin(q[1])
    M = np.array([[m1 * lc1 ** 2 + m2 * (l1 ** 2 + lc2 ** 2 + 2 * l1 * lc2 * c2) + I1 + I2,
                   m2 * (lc2 ** 2 + l1 * lc2 * c2) + I2],
                  [m2 * (lc2 ** 2 + l1 * lc2 * c2) + I2, m2 * lc2 ** 2 + I2]])
    h = -m2 * l1 * lc2 * s2
    Cqd = np.array([h * (2 * qd[0] * qd[1] + qd[1] ** 2), -h * qd[0] ** 2])
    g = np.array([(m1 * lc1 + m2 * l1) * G * math.cos(q[0]) + m2 * lc2 * G * math.cos(q[0] + q[1]),
                  m2 * lc2 * G * math.cos(q[0] + q[1])])
    return M, Cqd, g, M @ qdd + Cqd + g


@pytest.fixture(scope='module')
def planar():
    return md.load_model(two_link_urdf(**P), gravity=(0, -G, 0))


def test_two_link_equations_of_motion(planar):
    rng = np.random.default_rng(1)
    for _ in range(20):
        q, qd, qdd = rng.uniform(-3, 3, (3, 2))
        M, Cqd, g, tau = textbook(q, qd, qdd)
        np.testing.assert_allclose(md.inertia_matrix(planar, q), M, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(md.gravity_torques(planar, q), g, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(md.bias_forces(planar, q, qd), Cqd + g, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(md.inverse_dynamics(planar, q, qd, qdd), tau, rtol=1e-12,
                                   atol=1e-12)
        for method in ('udut', 'cholesky'):
            np.testing.assert_allclose(md.forward_dynamics(planar, q, qd, tau, method=method), qdd,
                                       rtol=1e-10, atol=1e-10)


def test_two_link_udut_closed_form(planar):
    """For 2x2 M, Saha's elimination gives D2 = M22, U12 = M12/M22, D1 = M11 - M12^2/M22."""
    rng = np.random.default_rng(2)
    for q in rng.uniform(-3, 3, (10, 2)):
        M = textbook(q, np.zeros(2), np.zeros(2))[0]
        U, D = md.udut(planar, q)
        np.testing.assert_allclose(D, [M[0, 0] - M[0, 1] ** 2 / M[1, 1], M[1, 1]], rtol=1e-12)
        np.testing.assert_allclose(U, [[1, M[0, 1] / M[1, 1]], [0, 1]], rtol=1e-12, atol=1e-15)


def test_two_link_friction_and_armature(planar):
    model = planar.with_joint_dynamics({'q1': {'armature': 0.2, 'viscous': 0.3, 'coulomb': 0.4},
                                        'q2': {'armature': 0.1, 'viscous': 0.5, 'coulomb': 0.6}})
    q, qd, qdd = np.array([0.3, -0.7]), np.array([1.2, -0.4]), np.array([-0.5, 2.0])
    _, _, _, tau = textbook(q, qd, qdd)
    extra = ([0.2, 0.1] * qdd + np.array([0.3, 0.5]) * qd
             + np.array([0.4, 0.6]) * np.sign(qd))
    np.testing.assert_allclose(md.inverse_dynamics(model, q, qd, qdd, friction=True), tau + extra,
                               rtol=1e-12)
    np.testing.assert_allclose(md.inverse_dynamics(model, q, qd, qdd, armature=False), tau,
                               rtol=1e-12)
    M = md.inertia_matrix(model, q)
    np.testing.assert_allclose(M - md.inertia_matrix(model, q, armature=False),
                               np.diag([0.2, 0.1]), atol=1e-15)
    for method in ('udut', 'cholesky'):
        qdd_back = md.forward_dynamics(model, q, qd, tau + extra, method=method, friction=True)
        np.testing.assert_allclose(qdd_back, qdd, rtol=1e-10)
    Y = md.regressor(model, q, qd, qdd, armature=True, friction=True)
    K = md.standard_parameters(model, armature=True, friction=True)
    np.testing.assert_allclose(Y @ K, tau + extra, rtol=1e-12)
