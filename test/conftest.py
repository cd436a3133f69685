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

"""Shared test helpers: example-robot-data, a Pinocchio adapter, random tree robots."""

import glob
import math
import os
import site
import sys

import numpy as np
import pytest


def erd_robots_dir():
    """Find the robots folder of the example-robot-data wheel (a cmeel prefix), or None."""
    roots = list(sys.path) + site.getsitepackages()
    for root in roots:
        d = os.path.join(root, 'cmeel.prefix', 'share', 'example-robot-data', 'robots')
        if os.path.isdir(d):
            return d
    return None


ERD = erd_robots_dir()
needs_erd = pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed '
                               '(pip install example-robot-data; dev.py test installs it)')


def erd(relpath):
    """Path of a URDF inside example-robot-data's robots folder."""
    return os.path.join(ERD, relpath)


def erd_urdfs():
    """Every URDF of example-robot-data."""
    return sorted(glob.glob(os.path.join(ERD, '**', '*.urdf'), recursive=True)) if ERD else []


# Robots compared with Pinocchio: chains and trees, prismatic, continuous and mimic joints.
PIN_ROBOTS = {
    'panda': 'panda_description/urdf/panda.urdf',                 # tree (two fingers), prismatic
    'ur5': 'ur_description/urdf/ur5_robot.urdf',                   # 6-joint chain
    'baxter': 'baxter_description/urdf/baxter.urdf',               # 19-joint tree, prismatic
    'pr2': 'pr2_description/urdf/pr2.urdf',                        # continuous, prismatic, mimic
    'kinova': 'kinova_description/robots/kinova.urdf',             # continuous joints
    'tiago': 'tiago_description/robots/tiago.urdf',                # 48 joints, wheels, torso
    'solo12': 'solo_description/robots/solo12.urdf',               # four legs from one base
    'xarm7': 'xarm_description/urdf/xarm7.urdf',                   # 7-joint chain
}


class PinRobot:
    """Pinocchio's model of a URDF, and maps between its coordinates and ours (by joint name)."""

    def __init__(self, pin, source, model, xml=False):
        self.pin = pin
        self.pm = pin.buildModelFromXML(source) if xml else pin.buildModelFromUrdf(source)
        self.pd = self.pm.createData()
        self.model = model
        self.idx_q, self.nq, self.idx_v = [], [], []
        for name in model.joint_names:
            joint = self.pm.joints[self.pm.getJointId(name)]
            self.idx_q.append(joint.idx_q)
            self.nq.append(joint.nq)
            self.idx_v.append(joint.idx_v)
        assert self.pm.nv == model.n

    def q(self, q):
        out = self.pin.neutral(self.pm)
        for i, (iq, nq) in enumerate(zip(self.idx_q, self.nq)):
            if nq == 2:                 # continuous joint: (cos, sin)
                out[iq], out[iq + 1] = math.cos(q[i]), math.sin(q[i])
            else:
                out[iq] = q[i]
        return out

    def v(self, x):
        out = np.zeros(self.pm.nv)
        out[self.idx_v] = x
        return out

    def ours(self, x):
        """Reorder a Pinocchio joint-space vector (or matrix) into our joint order."""
        x = np.asarray(x)
        return x[np.ix_(self.idx_v, self.idx_v)] if x.ndim == 2 else x[self.idx_v]

    def rnea(self, q, qd, qdd, fext=None):
        args = (self.pm, self.pd, self.q(q), self.v(qd), self.v(qdd))
        return self.ours(self.pin.rnea(*args, fext) if fext is not None else self.pin.rnea(*args))

    def crba(self, q):
        M = self.pin.crba(self.pm, self.pd, self.q(q))
        return self.ours(np.triu(M) + np.triu(M, 1).T)    # Pinocchio fills the upper triangle

    def aba(self, q, qd, tau):
        return self.ours(self.pin.aba(self.pm, self.pd, self.q(q), self.v(qd), self.v(tau)))

    def nle(self, q, qd):
        return self.ours(self.pin.nonLinearEffects(self.pm, self.pd, self.q(q), self.v(qd)))

    def gravity(self, q):
        return self.ours(self.pin.computeGeneralizedGravity(self.pm, self.pd, self.q(q)))


def random_state(model, rng, N=None):
    """Random q within limits (|q| <= 2 where unlimited), qd, qdd; shape (n,) or (N, n)."""
    shape = (model.n,) if N is None else (N, model.n)
    lo = np.where(np.isfinite(model.lower), model.lower, -2.0)
    hi = np.where(np.isfinite(model.upper), model.upper, 2.0)
    q = lo + (hi - lo) * rng.uniform(size=shape)
    return q, rng.uniform(-2, 2, shape), rng.uniform(-5, 5, shape)


def assert_rel(actual, expected, tol=1e-9, what=''):
    """Assert ``max|actual - expected| <= tol * max|expected|``: relative to the result's size."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    scale = max(np.abs(expected).max(initial=0.0), 1e-300)
    err = np.abs(actual - expected).max(initial=0.0)
    assert err <= tol * scale, f'{what}: max error {err:.3e} > {tol:g} x {scale:.3e}'


def _rpy(rng):
    return ' '.join(f'{v:.6f}' for v in rng.uniform(-math.pi, math.pi, 3))


def _xyz(rng, scale=0.3):
    return ' '.join(f'{v:.6f}' for v in rng.uniform(-scale, scale, 3))


def _inertial(rng):
    """Make a physically valid random inertial: principal moments obey the triangle inequality."""
    mass = rng.uniform(0.2, 5.0)
    a, b = rng.uniform(0.005, 0.05, 2)
    c = rng.uniform(abs(a - b) + 1e-4, a + b)         # triangle inequality, strictly
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = rng.uniform(0, math.pi)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    R = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K
    inertia = R @ np.diag([a, b, c]) @ R.T
    i = inertia
    return (f'<inertial><origin xyz="{_xyz(rng, 0.2)}" rpy="{_rpy(rng)}"/>'
            f'<mass value="{mass:.6f}"/>'
            f'<inertia ixx="{i[0, 0]:.9f}" ixy="{i[0, 1]:.9f}" ixz="{i[0, 2]:.9f}" '
            f'iyy="{i[1, 1]:.9f}" iyz="{i[1, 2]:.9f}" izz="{i[2, 2]:.9f}"/></inertial>')


def random_tree_urdf(seed, n=8, branching=0.4, fixed_links=3, prismatic=0.25, continuous=0.15):
    """Make a random fixed-base tree robot as URDF text: any axes, rpy origins, fixed links.

    ``branching`` is the chance that a joint hangs from a random earlier link instead of the last
    one (0 gives a chain).
    """
    rng = np.random.default_rng(seed)
    links = ['base']
    bodies = {'base': ''}
    has_child = set()
    movable = 0
    joints = []
    while movable < n:
        parent = links[-1] if rng.uniform() > branching else links[rng.integers(len(links))]
        name = f'l{len(links)}'
        fixed = fixed_links > 0 and rng.uniform() < 0.2
        if fixed:
            fixed_links -= 1
            kind = 'fixed'
        else:
            u = rng.uniform()
            kind = 'prismatic' if u < prismatic else ('continuous' if u < prismatic + continuous
                                                      else 'revolute')
            movable += 1
        bodies[name] = _inertial(rng) if rng.uniform() > 0.1 or kind == 'fixed' else ''
        has_child.add(parent)
        axis = rng.normal(size=3)
        axis_text = ' '.join(f'{v:.6f}' for v in axis / np.linalg.norm(axis))
        bound = {'revolute': 2.5, 'prismatic': 0.5}.get(kind)
        limit = (f'<limit lower="{-bound}" upper="{bound}" effort="100" velocity="3"/>'
                 if bound else '')
        joints.append(f'<joint name="j{len(links)}" type="{kind}"><parent link="{parent}"/>'
                      f'<child link="{name}"/><origin xyz="{_xyz(rng)}" rpy="{_rpy(rng)}"/>'
                      f'<axis xyz="{axis_text}"/>{limit}</joint>')
        links.append(name)
    for name in links[1:]:              # every tip gets mass, so that M is positive definite
        if name not in has_child and not bodies[name]:
            bodies[name] = _inertial(rng)
    parts = [f'<link name="{name}">{body}</link>' for name, body in bodies.items()]
    return f'<robot name="random{seed}">' + ''.join(parts) + ''.join(joints) + '</robot>'
