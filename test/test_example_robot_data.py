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

"""Every URDF of example-robot-data Pinocchio loads, we load: ID, M and FD equal (no mesh read)."""

import os
import warnings
import xml.etree.ElementTree as ET

from helpers import assert_rel, ERD, erd_urdfs, PinRobot, random_state
import manipulator_dynamics as md
import numpy as np
import pytest

pin = pytest.importorskip('pinocchio', reason='Pinocchio is the test oracle: pip install pin')
pytestmark = pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed')


def non_physical(path, link):
    """Check independently (ElementTree, numpy) that ``link``'s inertia is impossible."""
    for element in ET.parse(path).getroot().iter('link'):
        if element.get('name') != link:
            continue
        inertia = element.find('inertial/inertia')
        mass = float(element.find('inertial/mass').get('value'))
        v = {k: float(inertia.get(k, 0)) for k in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')}
        ev = np.linalg.eigvalsh([[v['ixx'], v['ixy'], v['ixz']], [v['ixy'], v['iyy'], v['iyz']],
                                 [v['ixz'], v['iyz'], v['izz']]])
        return mass < 0 or ev[0] < 0 or ev[0] + ev[1] < ev[2] or (mass == 0 and ev[2] > 0)
    raise AssertionError(f'no link {link} in {path}')


@pytest.mark.parametrize('path', erd_urdfs(), ids=lambda p: os.path.relpath(p, ERD or ''))
def test_loads_every_robot_pinocchio_loads(path):
    try:
        ref_model = pin.buildModelFromUrdf(path)
    except Exception:   # noqa: B902 - Pinocchio rejects the file: not ours to load (ur3.urdf)
        pytest.skip('Pinocchio does not load this file (its robot has no name): nor need we')
    try:
        md.load_model(path)
    except md.InertiaError as e:
        link = str(e).split("'")[1]
        assert non_physical(path, link), f'rejected a physical inertia: {e}'
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', md.InertiaWarning)
        model = md.load_model(path, check_inertia='warn')
    assert model.n == ref_model.nv
    assert set(model.joint_names) == set(ref_model.names[1:])
    if model.n:
        ref = PinRobot(pin, path, model)
        q, qd, qdd = random_state(model, np.random.default_rng(0))
        assert_rel(md.gravity_torques(model, q), ref.gravity(q), 1e-9, 'gravity')
        assert_rel(md.inverse_dynamics(model, q, qd, qdd), ref.rnea(q, qd, qdd), 1e-9, 'ID')
        M = ref.crba(q)
        assert_rel(md.inertia_matrix(model, q), M, 1e-9, 'M')
        check_forward_dynamics(model, ref, M, q, qd)


def check_forward_dynamics(model, ref, M, q, qd):
    """FD equals Pinocchio's ABA to M's conditioning, or is refused only where M is singular."""
    tau = np.random.default_rng(1).uniform(-5, 5, model.n)
    pivots = np.abs(np.linalg.eigvalsh(M))
    for method in ('udut', 'cholesky'):
        if pivots.min() <= 1e-12 * pivots.max():      # a joint that moves no inertia (romeo)
            with pytest.raises(md.SingularInertiaError, match='joint'):
                md.forward_dynamics(model, q, qd, tau, method=method)
            continue
        # an error in M of eps relative grows by at most its condition number in M^-1 (tau - h)
        tol = max(1e-9, 1e-13 * pivots.max() / pivots.min())
        assert_rel(md.forward_dynamics(model, q, qd, tau, method=method), ref.aba(q, qd, tau),
                   tol, f'FD {method}')
