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
Closed loops of flexible chains (Isobe & Imaizumi, eq. 12), and loops that close and open.

Oracles: the loop closure itself (the tips stay joined), the passive joints' zero torque,
virtual power and the work-energy balance of the whole loop, the rigid loop as the stiff limit,
and each open chain alone while the loop is open.
"""

import math

from manipulator_dynamics import (closed_loop_inverse_dynamics, flexible_inverse_dynamics,
                                  FlexibleArm, load_model)
from manipulator_dynamics.flexible.motion import rigid_motion
import numpy as np
import pytest
from scipy.interpolate import CubicSpline
from scipy.optimize import fsolve
from test_flexible import quintic, rms_error


def four_bar(t, coupler_ei=math.inf, gravity=(0.0, -9.81, 0.0), ground=0.4, crank=0.1,
             coupler=0.35, rocker=0.3):
    """Make a crank-rocker driven through 2 rad: chain a (crank, coupler), chain b (rocker)."""
    theta, theta_dot, _ = quintic(t, 1.0, [0.3], [2.3])
    theta = theta[:, 0]
    B = crank * np.column_stack([np.cos(theta), np.sin(theta)])
    d = np.array([ground, 0.0]) - B
    r = np.linalg.norm(d, axis=1)
    # C: the intersection of the circles about B (coupler) and D (rocker), upper branch
    along = (coupler**2 - rocker**2 + r**2) / (2 * r)
    across = np.sqrt(coupler**2 - along**2)
    u = d / r[:, None]
    C = B + along[:, None] * u + across[:, None] * np.column_stack([-u[:, 1], u[:, 0]])
    phi = np.arctan2(C[:, 1] - B[:, 1], C[:, 0] - B[:, 0])
    psi = np.arctan2(C[:, 1], C[:, 0] - ground)
    a = FlexibleArm.planar([crank, coupler], [0.3, 0.6], [math.inf, coupler_ei],
                           name='crank_coupler', gravity=gravity)
    b = FlexibleArm.planar([rocker], [0.5], math.inf, base=(ground, 0.0, 0.0),
                           joint_names=['rocker_joint'], gravity=gravity)
    return a, b, np.column_stack([theta, phi - theta]), psi[:, None], theta_dot[:, 0]


def work_and_energy(result, rates):
    """Cumulative work of the joint torques at ``rates`` and the loop's energy change, J."""
    power = np.einsum('ti,ti->t', result.tau, rates)
    work = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(result.t))])
    energy = result.energy.sum(axis=1)
    return work, energy - energy[0]


# ---------------------------------------------------------------------------------------------
# The rigid four-bar: [L] split in blocks, the cut force by the passive joints
# ---------------------------------------------------------------------------------------------

def test_rigid_four_bar_torque_does_the_work_of_the_whole_loop():
    """Virtual power: the crank's torque times its speed is the rate of the loop's energy."""
    t = np.arange(0.0, 1.0, 1e-3)
    a, b, q_a, q_b, crank_speed = four_bar(t)
    result = closed_loop_inverse_dynamics(a, b, t, q_a, q_b, active=['joint1'])
    assert result.joint_names == ('joint1', 'joint2', 'rocker_joint')
    assert result.residual < 1e-12 and result.gap < 1e-9
    power = 0.0
    for chain in (result.chain_a, result.chain_b):
        traj = chain.trajectory
        g = traj.arm.model.gravity
        power = power + np.einsum('k,tkj,tkj->t', traj.arm.node_mass, traj.velocity,
                                  traj.acceleration - g)
    err = np.abs(result.tau[:, 0] * crank_speed - power).max() / np.abs(power).max()
    # the node velocities come from a spline through 1 ms samples (error ~1e-8 here)
    assert err < 1e-6
    # the loop carries load: the cut force is not zero, and stays in the plane
    assert np.abs(result.cut_force[:, :2]).max() > 1.0
    assert np.abs(result.cut_force[:, 2]).max() < 1e-9


# ---------------------------------------------------------------------------------------------
# A flexible coupler: the loop deforms as one structure
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize('gravity', [(0.0, -9.81, 0.0), (0.0, 0.0, -9.81)],
                         ids=['in the plane', 'across the plane'])
def test_flexible_four_bar_stays_joined_and_balances_its_energy(gravity):
    """
    Gap, passive torques, work and energy, with the coupler at EI 5 and 50 N m^2.

    Across the plane, gravity bends the loop out of it: a spatial deformation that the passive
    hinges (about z) do not free, carried by the pin's force along z.
    """
    t = np.arange(0.0, 1.3, 5e-4)
    for ei in (5.0, 50.0):
        a, b, q_a, q_b, crank_speed = four_bar(t, ei, gravity)
        result = closed_loop_inverse_dynamics(a, b, t, q_a, q_b, active=['joint1'],
                                              spectral_radius=1.0, geometric_stiffening=False)
        assert result.gap < 1e-12                               # the pin holds the tips
        assert result.residual < 1e-9 * np.abs(result.tau).max()
        # the passive joints turn with the deformation: the reached angles leave the targets
        passive = np.abs(result.q[:, 1:] - np.hstack([q_a, q_b])[:, 1:]).max()
        assert passive > 1e-7 * 50.0 / ei
        work, energy = work_and_energy(result, np.column_stack([crank_speed, 0 * q_a[:, 1:],
                                                                0 * q_b]))
        assert np.abs(work - energy).max() < 1e-5 * np.abs(energy).max()
        if gravity[2]:
            assert np.abs(result.tip_deflection[..., 2]).max() > 1e-6       # out of the plane
            assert np.abs(result.cut_force[:, 2]).max() > 1e-3


SPATIAL_A = """<robot name="a"><link name="base"/>
  <link name="a1"><inertial><origin xyz="0.05 0 0"/><mass value="0.3"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
  <link name="a2"><inertial><origin xyz="0.15 0 0"/><mass value="0.6"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
  <link name="a3"><inertial><origin xyz="0.04 0.03 0"/><mass value="0.2"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
  <joint name="a1_joint" type="continuous"><parent link="base"/><child link="a1"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="a2_joint" type="continuous"><parent link="a1"/><child link="a2"/>
    <origin xyz="0.1 0 0"/><axis xyz="0 1 0"/></joint>
  <joint name="a3_joint" type="continuous"><parent link="a2"/><child link="a3"/>
    <origin xyz="0.3 0 0"/><axis xyz="1 0 0"/></joint>
</robot>"""

SPATIAL_B = """<robot name="b"><link name="base"/>
  <link name="b1"><inertial><origin xyz="0.15 0 0"/><mass value="0.5"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
  <joint name="b1_joint" type="continuous"><parent link="base"/><child link="b1"/>
    <origin xyz="{x} {y} {z}" rpy="1.3874 0.12698 1.40365"/><axis xyz="0 0 1"/></joint>
</robot>"""


def spatial_loop(t, coupler_ei):
    """
    Build a spatial loop: axes z, y, x on chain a (crank, coupler, short link), a tilted rocker.

    The pin (a force, no moment: a spherical joint) joins the tips; the crank turns 0.2 rad and
    the three passive joints follow the closure (solved per sample).  Returns both chains,
    their targets and the crank's rate.
    """
    def tip(arm, q):
        q = np.atleast_2d(q)
        return rigid_motion(arm, q, 0 * q, 0 * q)[0][0, -1]

    gravity = (0.0, 0.0, -9.81)
    beams = {'a1': {'flexural_rigidity': math.inf}, 'a2': {'flexural_rigidity': coupler_ei},
             'a3': {'flexural_rigidity': math.inf}}
    a = FlexibleArm.from_model(load_model(SPATIAL_A, gravity=gravity), beams,
                               tip=[0.08, 0.06, 0.0])
    start = np.array([0.3, 1.04983, -1.15496, 1.09699])            # a well-conditioned pose
    rocker = {'b1': {'flexural_rigidity': math.inf}}
    probe = FlexibleArm.from_model(load_model(SPATIAL_B.format(x=0, y=0, z=0), gravity=gravity),
                                   rocker, tip=[0.3, 0.0, 0.0])
    base = tip(a, start[:3]) - tip(probe, start[3:])
    b = FlexibleArm.from_model(load_model(SPATIAL_B.format(x=base[0], y=base[1], z=base[2]),
                                          gravity=gravity), rocker, tip=[0.3, 0.0, 0.0])
    crank, rate, _ = quintic(t, 1.0, [0.3], [0.5])
    q = np.empty((t.size, 4))
    guess = start[1:]
    for k in range(t.size):
        guess = fsolve(lambda y: tip(a, [crank[k, 0], y[0], y[1]]) - tip(b, [y[2]]), guess,
                       xtol=1e-12)
        q[k] = crank[k, 0], *guess
    return a, b, q[:, :3], q[:, 3:], rate[:, 0]


def test_a_spatial_loop_with_a_flexible_coupler():
    t = np.arange(0.0, 1.2, 1e-3)
    for ei in (200.0, 20.0):
        a, b, q_a, q_b, crank_speed = spatial_loop(t, ei)
        result = closed_loop_inverse_dynamics(a, b, t, q_a, q_b, active=['a1_joint'],
                                              spectral_radius=1.0, geometric_stiffening=False)
        assert result.gap < 1e-12
        assert result.residual < 1e-9 * np.abs(result.tau).max()
        assert np.abs(result.tip_deflection).max() > 1e-5 * 200 / ei
        rates = np.zeros_like(result.tau)
        rates[:, 0] = crank_speed
        work, energy = work_and_energy(result, rates)
        # the linearised model's error grows with the deformation (0.6 mm at EI 20)
        assert np.abs(work - energy).max() < 1e-4 * np.abs(energy).max()


def test_a_stiffening_coupler_converges_to_the_rigid_loop():
    t = np.arange(0.0, 1.0, 5e-4)
    a, b, q_a, q_b, _ = four_bar(t)
    rigid = closed_loop_inverse_dynamics(a, b, t, q_a, q_b, active=['joint1']).tau[:, 0]
    errors = []
    for ei in (5.0, 50.0, 500.0):
        a, b, q_a, q_b, _ = four_bar(t, ei)
        tau = closed_loop_inverse_dynamics(a, b, t, q_a, q_b, active=['joint1']).tau[:, 0]
        errors.append(rms_error(tau, rigid))
    print('\ncrank torque vs the rigid loop, coupler EI 5, 50, 500:', errors)
    assert all(b < a / 2 for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 1e-3


# ---------------------------------------------------------------------------------------------
# Open, closed, open: two arms that grasp one another, then let go
# ---------------------------------------------------------------------------------------------

def two_link_ik(p, base, elbow, length=0.25):
    """Joint angles of a planar 2-link arm (links ``length``) with its tip at ``p (T, 2)``."""
    d = p - base
    c2 = ((d**2).sum(axis=1) - 2 * length**2) / (2 * length**2)
    q2 = elbow * np.arccos(np.clip(c2, -1.0, 1.0))
    q1 = np.arctan2(d[:, 1], d[:, 0]) - np.arctan2(length * np.sin(q2),
                                                   length * (1 + np.cos(q2)))
    return np.column_stack([q1, q2])


def tip_path(t, points, times):
    """Rest-to-rest quintics through ``points`` at ``times``; held after the last."""
    p = np.repeat(np.asarray(points[0], float)[None], t.size, axis=0)
    for start, end, a, b in zip(times[:-1], times[1:], points[:-1], points[1:]):
        q, _, _ = quintic(t - start, end - start, a, b)
        p[t >= start] = q[t >= start]
    return p


def grasp(dt=1e-3):
    """
    Two flexible 2-link arms in a horizontal plane: they meet at 0.5 s, move together, part at 1 s.

    Returns the arms, ``t``, their targets, ``closed`` and every joint's target rate.
    """
    t = np.arange(0.0, 1.6, dt)
    times = [0.0, 0.5, 1.0, 1.5]
    meet, lift = [0.3, 0.3], [0.3, 0.36]
    left = tip_path(t, [[0.15, 0.25], meet, lift, [0.1, 0.3]], times)
    right = tip_path(t, [[0.45, 0.25], meet, lift, [0.5, 0.3]], times)
    horizontal = (0.0, 0.0, -9.81)
    a = FlexibleArm.planar([0.25, 0.25], [0.2, 0.1], 2.0, gravity=horizontal, name='left')
    b = FlexibleArm.planar([0.25, 0.25], [0.2, 0.1], 2.0, gravity=horizontal, name='right',
                           base=(0.6, 0.0, 0.0), joint_names=['right1', 'right2'])
    q_a = two_link_ik(left, np.zeros(2), 1)
    q_b = two_link_ik(right, np.array([0.6, 0.0]), -1)
    rates = CubicSpline(t, np.hstack([q_a, q_b]), axis=0)(t, 1)
    return a, b, t, q_a, q_b, (t >= 0.5) & (t < 1.0), rates


def test_two_arms_grasp_and_release_with_the_energy_accounted():
    a, b, t, q_a, q_b, closed, rates = grasp()
    result = closed_loop_inverse_dynamics(a, b, t, q_a, q_b, closed=closed,
                                          active=['joint1', 'joint2', 'right1', 'right2'],
                                          spectral_radius=1.0, geometric_stiffening=False)
    np.testing.assert_array_equal(result.closed, closed)
    # open, each arm is on its own: its torques are the open chain's
    before = t < 0.5
    for chain, q, columns in ((a, q_a, slice(0, 2)), (b, q_b, slice(2, 4))):
        alone = flexible_inverse_dynamics(chain, t, q, spectral_radius=1.0,
                                          geometric_stiffening=False).tau
        np.testing.assert_allclose(result.tau[before, columns], alone[before],
                                   atol=1e-8 * np.abs(alone).max())
    # closed, the tips move as one (where the grasp found them) and the pin carries load
    tips = result.nodes[:, len(a.node_mass) - 1] - result.nodes[:, -1]
    assert np.abs(tips[closed] - tips[closed][0]).max() < 1e-12
    assert np.abs(result.cut_force[closed]).max() > 0.1
    assert not result.cut_force[~closed].any()
    # the energy: the grasp takes exactly the kinetic energy it reports, the release none
    work, energy = work_and_energy(result, rates)
    balance = work - energy - np.cumsum(result.grasp_loss)
    engage, release = np.flatnonzero(np.diff(closed.astype(int)))
    assert result.grasp_loss[engage + 1] > 0 and result.grasp_loss.sum() == \
        result.grasp_loss[engage + 1]
    scale = result.grasp_loss[engage + 1]
    for s in (engage, release):
        assert abs(balance[s + 1] - balance[s]) < 0.02 * scale, (s, balance[s - 2:s + 3])


def test_bad_loops_are_named():
    t = np.arange(0.0, 1.0, 1e-2)
    a, b, q_a, q_b, _ = four_bar(t)
    with pytest.raises(ValueError, match='do not close: their tips are .* apart at step'):
        closed_loop_inverse_dynamics(a, b, t, q_a, q_b + 0.01, active=['joint1'])
    with pytest.raises(ValueError, match='active joint.*crank'):
        closed_loop_inverse_dynamics(a, b, t, q_a, q_b, active=['crank'])
    with pytest.raises(ValueError, match='every joint is active and both chains are rigid'):
        closed_loop_inverse_dynamics(a, b, t, q_a, q_b,
                                     active=['joint1', 'joint2', 'rocker_joint'])
    with pytest.raises(ValueError, match=r'passive joint\(s\) joint2, rocker_joint with the loop '
                                         r'open at step 50'):
        closed_loop_inverse_dynamics(a, b, t, q_a, q_b, active=['joint1'], closed=t < 0.5)
    with pytest.raises(ValueError, match='closed has 3 samples but t has 100'):
        closed_loop_inverse_dynamics(a, b, t, q_a, q_b, active=['joint1'], closed=[1, 0, 1])
