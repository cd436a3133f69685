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

"""Is an inertia physical (inertia.py): one check, one tolerance, the same verdict everywhere."""

import warnings

import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.identification.consistent import physical_problems
from manipulator_dynamics.inertia import body_fault, is_mass_distribution, tensor_fault, TOLERANCE
from manipulator_dynamics.model import link_parameters, pseudo_inertia
import numpy as np
import pytest


def one_link_urdf(ixx, iyy, izz):
    return (f'<robot name="r"><link name="base"/><link name="a"><inertial><mass value="2"/>'
            f'<inertia ixx="{ixx!r}" ixy="0" ixz="0" iyy="{iyy!r}" iyz="0" izz="{izz!r}"/>'
            '</inertial></link><joint name="j" type="continuous"><parent link="base"/>'
            '<child link="a"/><axis xyz="0 0 1"/></joint></robot>')


@pytest.mark.parametrize('beyond, physical', [(0.1 * TOLERANCE, True), (10 * TOLERANCE, False)])
def test_every_user_of_an_inertia_gives_the_same_verdict(beyond, physical):
    """
    Past its triangle inequality by a tenth of the tolerance, taken; by ten times it, refused.

    A tenth is a URDF's rounding.  The URDF loader, a payload, a body's ten parameters and the
    consistent fit's report give the same verdict, each saying the same thing.
    """
    izz = 2.0 * (1 + beyond)                                     # ixx + iyy = 2
    tensor = np.diag([1.0, 1.0, izz])
    assert (tensor_fault(tensor) is None) == physical
    phi = link_parameters(2.0, [0.1, 0.0, 0.3], tensor)
    assert (body_fault(phi) is None) == physical == is_mass_distribution(phi)
    names = [f'{p}_a' for p in md.PARAMETER_NAMES]
    assert (physical_problems(phi, names) == []) == physical
    arm = md.load_model(robots.path('demo_arm'))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        if physical:
            md.load_model(one_link_urdf(1.0, 1.0, izz))
            arm.with_payload('link7', 1.0, inertia=tensor)
        else:
            with pytest.raises(md.InertiaError, match='violates the triangle inequality'):
                md.load_model(one_link_urdf(1.0, 1.0, izz))
            with pytest.raises(ValueError, match='payload: inertia violates the triangle'):
                arm.with_payload('link7', 1.0, inertia=tensor)
            assert 'violates the triangle inequality' in body_fault(phi)


def test_body_fault_is_the_pseudo_inertias_sign():
    """
    No fault exactly where the pseudo-inertia's smallest eigenvalue is positive.

    Random bodies, valid and not, away from the boundary (where the tolerance decides).
    """
    rng = np.random.default_rng(0)
    checked = {True: 0, False: 0}
    for _ in range(400):
        m = rng.uniform(0.1, 5.0)
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        moments = rng.uniform(0.01, 1.0, 3) * rng.choice([1.0, 1.0, 1.0, -0.2], 3)
        phi = link_parameters(m, rng.normal(size=3) * 0.2, R @ np.diag(moments) @ R.T)
        smallest = np.linalg.eigvalsh(pseudo_inertia(phi))[0]
        if abs(smallest) < 1e-3:                      # near the boundary: the tolerance decides
            continue
        assert (body_fault(phi) is None) == (smallest > 0), (moments, smallest)
        checked[smallest > 0] += 1
    assert min(checked.values()) > 50, checked


def test_a_body_without_mass_is_nothing_or_a_fault():
    assert is_mass_distribution(np.zeros(10)) and body_fault(np.zeros(10)) == \
        'mass 0 kg is not positive'
    assert tensor_fault(np.diag([0.0, 0.0, 0.0]), mass=0.0) is None
    assert 'not zero although the mass is zero' in tensor_fault(np.eye(3) * 1e-3, mass=0.0)


def test_a_point_mass_with_rounding_on_its_products_is_physical():
    """A CAD export's point mass: zero moments, products of 1e-20. Not a fault, in any user."""
    noise = np.array([[0.0, -1.4e-20, 0.0], [-1.4e-20, 0.0, 3e-21], [0.0, 3e-21, 0.0]])
    assert tensor_fault(noise) is None and tensor_fault(noise, mass=0.0) is None
    assert body_fault(link_parameters(2.7, [0.0, 0.06, 0.03], noise)) is None
    text = one_link_urdf(0.0, 0.0, 0.0).replace('ixy="0"', 'ixy="-1.4e-20"')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        md.load_model(text)
    # a millionth of a milligram-millimetre's tensor is the tolerance, never less
    assert tensor_fault(np.diag([1e-19, 1e-19, 5e-19])) is None
    assert 'triangle inequality' in tensor_fault(np.diag([1e-17, 1e-17, 4e-17]))
