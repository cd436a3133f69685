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
Where a flexible arm's masses sit: rigid-bar links, motors, payloads (Isobe & Imaizumi, sec. 2).

Oracles: Newton-Euler on point-mass URDFs written here (not built from the arm), and beam theory:
a point mass on a massless cantilever, and the clamped-free beam with a tip mass.
"""

import math

from manipulator_dynamics import (flexible_inverse_dynamics, flexible_trajectory, FlexibleArm,
                                  FlexibleArmError, inverse_dynamics, load_model)
import numpy as np
import pytest
from scipy.optimize import brentq
from test_flexible import (paper_two_link, paper_two_link_move, quintic, rms_error,
                           THREE_LINK_MOVE)


def point_mass_chain(masses, centres, lengths, motors=()):
    """
    URDF of a planar chain about z whose links are point masses at ``centres`` (m from the joint).

    ``motors[i]`` is a point mass at joint ``i + 1``, carried by link ``i`` (at its far end).
    """
    links, joints = [], []
    for i, (m, c) in enumerate(zip(masses, centres)):
        motor = motors[i] if i < len(motors) else 0.0
        total = m + motor
        com = (m * c + motor * lengths[i]) / total
        spread = m * (c - com) ** 2 + motor * (lengths[i] - com) ** 2    # about the CoM, y and z
        links.append(f'<link name="l{i}"><inertial><origin xyz="{com} 0 0"/>'
                     f'<mass value="{total}"/><inertia ixx="0" ixy="0" ixz="0" '
                     f'iyy="{spread}" iyz="0" izz="{spread}"/></inertial></link>')
        origin = 0.0 if i == 0 else lengths[i - 1]
        parent = 'base' if i == 0 else f'l{i - 1}'
        joints.append(f'<joint name="j{i}" type="continuous"><parent link="{parent}"/>'
                      f'<child link="l{i}"/><origin xyz="{origin} 0 0"/><axis xyz="0 0 1"/>'
                      '</joint>')
    return ('<robot name="point_masses"><link name="base"/>' + ''.join(links) + ''.join(joints)
            + '</robot>')


# ---------------------------------------------------------------------------------------------
# The pin-joint rigid-bar link: a link's whole mass at its centre-of-gravity node
# ---------------------------------------------------------------------------------------------

def test_rigid_bar_three_link_arm_is_newton_euler_with_point_masses():
    """Isobe & Imaizumi's Fig. 3 arm as they model it: 0.4 m, 0.215 kg at mid-link, rigid."""
    arm = FlexibleArm.planar([0.4] * 3, [0.215] * 3, math.inf, mass_at='cog',
                             gravity=(0.0, -9.81, 0.0))
    assert arm.node_mass.tolist() == [0, 0, 0.215, 0, 0, 0, 0.215, 0, 0, 0, 0.215, 0, 0]
    reference = load_model(point_mass_chain([0.215] * 3, [0.2] * 3, [0.4] * 3),
                           gravity=(0.0, -9.81, 0.0))
    errors = {}
    for steps_per_second in (25, 50, 100, 200):
        t = np.linspace(0.0, 1.0, steps_per_second + 1)
        q, qd, qdd = quintic(t, *THREE_LINK_MOVE)
        tau = flexible_inverse_dynamics(arm, t, q).tau
        errors[steps_per_second] = rms_error(tau, inverse_dynamics(reference, q, qd, qdd))
    print('\nsteps/s  RMS error, rigid-bar arm vs Newton-Euler with point masses', errors)
    assert errors[100] < 2e-3
    values = list(errors.values())
    assert all(b < a / 3 for a, b in zip(values, values[1:])), errors
    # and it is not the spread-mass arm: that one differs by its links' own inertia
    spread = flexible_inverse_dynamics(FlexibleArm.planar([0.4] * 3, [0.215] * 3, math.inf),
                                       t, q).tau
    assert rms_error(spread, inverse_dynamics(reference, q, qd, qdd)) > 10 * errors[200]


def test_mass_at_given_nodes_and_on_a_flexible_link():
    """All the mass at the tip node of a flexible link: a point mass on a massless cantilever."""
    length, mass, ei = 0.4, 0.0224, 0.46
    for elements in (2, 4, 8):
        arm = FlexibleArm.planar([length], [mass], ei, elements_per_link=elements,
                                 mass_at=[elements])
        # the one-point-integrated element is stiffer by 1 / (4 n^2) of the bending deflection;
        # the default shear rigidity (stiff, not infinite) leaves ~1e-5 of it
        k = 3 * ei / length**3 / (1 - 1 / (4 * elements**2))
        expected = math.sqrt(k / mass) / (2 * math.pi)
        assert arm.natural_frequencies(count=1)[0] == pytest.approx(expected, rel=2e-5)
    halves = FlexibleArm.planar([length], [mass], ei, mass_at=[2, 4])
    assert halves.node_mass[[2, 4]].tolist() == [mass / 2, mass / 2]


def test_rigid_bar_option_from_yaml_and_at_the_urdf_centre_of_gravity():
    model = load_model(point_mass_chain([1.0, 0.5], [0.15, 0.1], [0.3, 0.2]))
    beams = {'l0': {'flexural_rigidity': math.inf, 'mass_at': 'cog', 'elements': 2},
             'l1': {'flexural_rigidity': 5.0, 'mass_at': 'cog', 'elements': 2}}
    arm = FlexibleArm.from_model(model, beams, tip=[0.2, 0.0, 0.0])
    assert arm.node_mass.tolist() == [0.0, 1.0, 0.0, 0.5, 0.0]
    arm = FlexibleArm.from_yaml({'planar': {'lengths': [0.4, 0.4], 'masses': [0.2, 0.1],
                                            'flexural_rigidity': [math.inf, 1.0],
                                            'mass_at': ['cog', [4]]}})
    assert arm.node_mass.tolist() == [0, 0, 0.2, 0, 0, 0, 0, 0, 0.1]
    assert [link.mass_at for link in arm.with_rigid_links().links] == ['cog', (4,)]


@pytest.mark.parametrize('beams, message', [
    ({'mass_at': 'cog', 'elements': 3}, r"link 'l0': mass_at cog needs a node at its centre of "
                                        r'gravity, 0\.5 of its length.*0, 0\.333, 0\.667, 1'),
    ({'mass_at': [5]}, r"link 'l0': mass_at names node 5, but its nodes are 0 \(its joint\) to 4"),
    ({'mass_at': 'middle'}, "link 'l0': mass_at must be 'distributed', 'cog' or a list"),
    ({'mass_at': []}, "link 'l0': mass_at must be"),
])
def test_bad_mass_placement_is_named(beams, message):
    model = load_model(point_mass_chain([1.0], [0.2], [0.4]))
    with pytest.raises(FlexibleArmError, match=message):
        FlexibleArm.from_model(model, {'l0': {'flexural_rigidity': 1.0, **beams}},
                               tip=[0.4, 0.0, 0.0])


# ---------------------------------------------------------------------------------------------
# Motor and payload masses
# ---------------------------------------------------------------------------------------------

def tip_mass_cantilever_hz(length, mass, ei, tip):
    """First mode of a clamped-free Euler-Bernoulli beam with a tip point mass (no rotary)."""
    ratio = tip / mass

    def equation(b):
        return (1 + math.cos(b) * math.cosh(b)
                + ratio * b * (math.cos(b) * math.sinh(b) - math.sin(b) * math.cosh(b)))
    beta = brentq(equation, 0.3, 1.9)
    return beta**2 * math.sqrt(ei / (mass * length**3)) / (2 * math.pi)


@pytest.mark.parametrize('payload', [0.0112, 0.0448])
def test_payload_lowers_the_first_mode_as_the_beam_with_a_tip_mass(payload):
    length, mass, ei = 0.4, 0.0224, 0.46
    # in a horizontal plane: gravity along the link would stiffen or soften it (tension or
    # compression), which the clamped-free beam does not have
    arm = FlexibleArm.planar([length], [mass], ei, elements_per_link=32, payload=payload,
                             gravity=(0.0, 0.0, -9.81))
    theory = tip_mass_cantilever_hz(length, mass, ei, payload)
    assert theory < 0.75 * tip_mass_cantilever_hz(length, mass, ei, 0.0)
    assert arm.natural_frequencies(count=1)[0] == pytest.approx(theory, rel=2e-3)
    # and the arm rings at it after a move
    t = np.arange(0.0, 1.5, 5e-4)
    q, _, _ = quintic(t, 0.2, [0.0], [1.0])
    tip = flexible_trajectory(arm, t, q).tip_deflection[t > 0.3, 0, 1]
    crossings = np.flatnonzero((tip[:-1] - tip.mean() < 0) & (tip[1:] - tip.mean() >= 0))
    measured = (len(crossings) - 1) / ((crossings[-1] - crossings[0]) * 5e-4)
    assert measured == pytest.approx(theory, rel=0.02)


def test_motor_masses_ride_on_the_links_as_point_masses():
    """A motor at joint 2 is a point mass at link 1's end: Newton-Euler on that URDF."""
    arm = FlexibleArm.planar([0.3, 0.25], [0.4, 0.3], math.inf, mass_at='cog',
                             motor_masses=[2.0, 0.7])
    reference = load_model(point_mass_chain([0.4, 0.3], [0.15, 0.125], [0.3, 0.25],
                                            motors=[0.7]), gravity=(0.0, -9.81, 0.0))
    t = np.linspace(0.0, 1.0, 401)
    q, qd, qdd = quintic(t, 1.0, [0.2, -0.4], [1.1, 0.9])
    tau = flexible_inverse_dynamics(arm, t, q).tau
    assert rms_error(tau, inverse_dynamics(reference, q, qd, qdd)) < 1e-4
    # the first motor sits on the base: no torque from it
    lighter = FlexibleArm.planar([0.3, 0.25], [0.4, 0.3], math.inf, mass_at='cog',
                                 motor_masses=[0.0, 0.7])
    np.testing.assert_allclose(flexible_inverse_dynamics(lighter, t, q).tau, tau, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Isobe & Imaizumi's Fig. 8: the 2-link arm with a ten times softer second link
# ---------------------------------------------------------------------------------------------

def test_fig8_link_two_deforms_much_more_than_link_one():
    """Joint 1 turns 0.5 rad, joint 2 1.0 rad in 0.2 s; EI 0.46 and 0.046 N m^2."""
    arm = paper_two_link()
    t = np.arange(0.0, 1.0, 1e-3)
    q = paper_two_link_move(t)
    result = flexible_trajectory(arm, t, q)
    # each link's bending: its chord's rotation from its rigid target, less the rotation of its
    # root (link 2's root turns with link 1's tip); in the plane, about z
    chord = np.cumsum(result.q - q, axis=1)
    root = result.deformation[:, arm.joint_node, 5]
    bending = np.abs(chord - root).max(axis=0)
    print('\nlargest bending of link 1, link 2 [rad]:', bending)
    assert bending[1] > 2 * bending[0] > 0
    # and the same links both rigid: no bending at all
    stiff = flexible_trajectory(arm.with_rigid_links(), t, q)
    assert np.abs(stiff.q - q).max() < 1e-12
