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
The tests' shared helpers: example-robot-data, a Pinocchio adapter, logs, motions, robots.

Test files import them (``from helpers import ROOT, erd``); conftest.py files hold only pytest's
hooks and fixtures.  A module of its own, because pytest imports every folder's conftest.py
under the one name ``conftest``: a folder's conftest would hide this one's names from the
tests below it.
"""

import dataclasses
import glob
import math
import os
import site
import sys

import numpy as np
import pytest

#: The repository's root: config/, launch/, docs/ and the package are below it, shared/ beside it.
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))

#: The demo arm's rotor inertias and friction as the package ships them.
DEMO_ARM_DYNAMICS = os.path.join(ROOT, 'config', 'demo_arm_dynamics.yaml')


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


def demo_arm_without_inertial(*links):
    """Return the demo arm's URDF text with the <inertial> of ``links`` removed."""
    import xml.etree.ElementTree as ET
    from manipulator_dynamics import robots
    root = ET.parse(robots.path('demo_arm')).getroot()
    for element in root.iter('link'):
        if element.get('name') in links:
            element.remove(element.find('inertial'))
    return ET.tostring(root, encoding='unicode')


def write_log_csv(path, joint_names, t, q, tau, qd=None):
    """
    Write a log as ``identify`` reads it: ``time``, ``<joint>.position``, ``<joint>.effort``.

    With ``qd``, the measured velocities too, as ``<joint>.velocity`` columns.
    """
    header = ['time'] + [f'{j}.position' for j in joint_names] + \
        [f'{j}.effort' for j in joint_names]
    columns = [t, q, tau]
    if qd is not None:
        header += [f'{j}.velocity' for j in joint_names]
        columns.append(qd)
    np.savetxt(path, np.column_stack(columns), delimiter=',', header=','.join(header),
               comments='')


def write_bag(path, model, t, q, tau, other_robot=True, qd=None):
    """Write a rosbag2 of JointStates (the model's joints reversed, and another robot's)."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import get_typestore, Stores
    store = get_typestore(Stores.ROS2_HUMBLE)
    JointState = store.types['sensor_msgs/msg/JointState']
    Header = store.types['std_msgs/msg/Header']
    Time = store.types['builtin_interfaces/msg/Time']
    with Writer(path, version=9) as writer:
        conn = writer.add_connection('/joint_states', JointState.__msgtype__, typestore=store)
        names = list(model.joint_names)[::-1] + (['other_robot_wheel'] if other_robot else [])
        for k in range(len(t)):
            sec = int(t[k])
            stamp = Time(sec=sec + 100, nanosec=int(round((t[k] - sec) * 1e9)))
            pos = list(q[k][::-1]) + ([0.0] if other_robot else [])
            eff = list(tau[k][::-1]) + ([1.0] if other_robot else [])
            vel = np.zeros(0) if qd is None else np.array(
                list(qd[k][::-1]) + ([0.0] if other_robot else []))
            msg = JointState(header=Header(stamp=stamp, frame_id=''), name=names,
                             position=np.array(pos), velocity=vel, effort=np.array(eff))
            writer.write(conn, int((t[k] + 100) * 1e9),
                         store.serialize_cdr(msg, JointState.__msgtype__))


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


def pin_robot(name):
    """
    Return ``(model, PinRobot)`` of ``PIN_ROBOTS[name]``, or skip where an oracle is missing.

    Pinocchio loads non-physical inertias as they are: ours compares on exactly the same
    numbers (``check_inertia='ignore'``).
    """
    pin = pytest.importorskip('pinocchio', reason='Pinocchio is the test oracle: pip install pin')
    if ERD is None:
        pytest.skip('example-robot-data is not installed (pip install example-robot-data)')
    import manipulator_dynamics as md
    path = erd(PIN_ROBOTS[name])
    model = md.load_model(path, check_inertia='ignore')
    return model, PinRobot(pin, path, model)


def random_state(model, rng, N=None):
    """Random q within limits (|q| <= 2 where unlimited or empty), qd, qdd; (n,) or (N, n)."""
    shape = (model.n,) if N is None else (N, model.n)
    free = ~(model.upper > model.lower)           # lower == upper: an exporter's unset limits
    lo = np.where(np.isfinite(model.lower) & ~free, model.lower, -2.0)
    hi = np.where(np.isfinite(model.upper) & ~free, model.upper, 2.0)
    q = lo + (hi - lo) * rng.uniform(size=shape)
    return q, rng.uniform(-2, 2, shape), rng.uniform(-5, 5, shape)


def assert_rel(actual, expected, tol=1e-9, what=''):
    """Assert ``max|actual - expected| <= tol * max|expected|``: relative to the result's size."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    scale = max(np.abs(expected).max(initial=0.0), 1e-300)
    err = np.abs(actual - expected).max(initial=0.0)
    assert err <= tol * scale, f'{what}: max error {err:.3e} > {tol:g} x {scale:.3e}'


def with_random_joint_dynamics(model, seed, laws=False):
    """
    ``model`` with random rotor inertias and friction on every joint.

    With ``laws``, friction offsets of either sign on every joint too, and a smooth Coulomb law
    (``tanh(qd / vs)``) on every other joint, the sign on the rest.
    """
    rng = np.random.default_rng(seed)
    entries = {name: {'armature': a, 'viscous': v, 'coulomb': c}
               for name, a, v, c in zip(model.joint_names, rng.uniform(0.01, 0.2, model.n),
                                        rng.uniform(0.1, 1.0, model.n),
                                        rng.uniform(0.1, 1.0, model.n))}
    if laws:
        for i, name in enumerate(model.joint_names):
            entries[name]['offset'] = float(rng.uniform(-0.5, 0.5))
            entries[name]['coulomb_velocity'] = float(rng.uniform(0.01, 0.5)) if i % 2 else 0.0
    return model.with_joint_dynamics(entries)


def two_link_urdf(m1, m2, l1, lc1, lc2, I1, I2):
    """Two revolute joints about z, links along x, gravity set along -y by the caller."""
    def body(m, lc, izz):
        return (f'<inertial><origin xyz="{lc} 0 0"/><mass value="{m}"/><inertia ixx="{izz / 10}" '
                f'ixy="0" ixz="0" iyy="{izz}" iyz="0" izz="{izz}"/></inertial>')
    return f"""<robot name="planar2"><link name="base"/>
      <link name="link1">{body(m1, lc1, I1)}</link><link name="link2">{body(m2, lc2, I2)}</link>
      <joint name="q1" type="revolute"><parent link="base"/><child link="link1"/>
        <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
      <joint name="q2" type="revolute"><parent link="link1"/><child link="link2"/>
        <origin xyz="{l1} 0 0"/><axis xyz="0 0 1"/>
        <limit lower="-3" upper="3" effort="50" velocity="2"/></joint></robot>"""


#: The textbook 2-link planar arm of :func:`two_link_urdf` (test_closed_form's oracle).
TWO_LINK = {'m1': 2.0, 'm2': 1.5, 'l1': 0.8, 'lc1': 0.35, 'lc2': 0.3, 'I1': 0.12, 'I2': 0.05}


def body(mass, moments, com):
    """Return the 10 standard parameters, about the frame origin, of principal central moments."""
    c = np.asarray(com, dtype=float)
    inertia = np.diag(moments) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1], inertia[1, 2],
                     inertia[2, 2], *(mass * c), mass])


def rod(mass, length, radius, com):
    """Return the 10 standard parameters of a solid cylinder along x, about the frame origin."""
    side = mass * (3 * radius ** 2 + length ** 2) / 12
    return body(mass, [0.5 * mass * radius ** 2, side, side], com)


#: Hz: the rate of :func:`exciting`'s samples, a joint_states rate.
EXCITATION_RATE = 200.0


def exciting(model, seconds=20.0, seed=0, harmonics=5, fundamental=0.1, scale=0.25,
             rate=EXCITATION_RATE):
    """Sample a finite Fourier series per joint (Swevers' excitation): t, q, qd, qdd."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 1.0 / rate)
    w = 2 * np.pi * fundamental * np.arange(1, harmonics + 1)[:, None]
    a, b = rng.uniform(-1, 1, (2, harmonics, model.n)) * scale
    s, c = np.sin(w * t[:, None, None]), np.cos(w * t[:, None, None])
    q = (a / w * s - b / w * c).sum(axis=1)
    qd = (a * c + b * s).sum(axis=1)
    qdd = (w * (b * c - a * s)).sum(axis=1)
    return t, q, qd, qdd


def measured(model, seed=1, **kw):
    """Exciting motion, efforts from the model with 1 % + 0.02 N m noise, positions +- 1e-5 rad."""
    import manipulator_dynamics as md
    t, q, qd, qdd = exciting(model, **kw)
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
    rng = np.random.default_rng(seed)
    noisy = tau + rng.normal(size=tau.shape) * (0.01 * np.abs(tau).max(axis=0) + 0.02)
    return t, q, qd, qdd, noisy, q + rng.normal(size=q.shape) * 1e-5


def coupled(model, seed=0):
    """
    Give ``model`` gear ratios, rotor inertias and friction everywhere, and a coupled wrist.

    Its last motor turns the last two joints, and the one before turns the two before it
    (negatively).
    """
    from manipulator_dynamics.transmissions import Transmissions
    n = model.n
    rng = np.random.default_rng(seed)
    R = np.diag(rng.uniform(30.0, 120.0, n) * rng.choice([-1.0, 1.0], n))
    R[n - 1, n - 2] = R[n - 1, n - 1]                     # a TX40's motor 6: q5 + q6
    R[n - 2, n - 3] = -0.6 * R[n - 2, n - 2]
    viscous, coulomb = np.zeros(n), np.zeros(n)
    viscous[-2:], coulomb[-2:] = rng.uniform(0.2, 0.8, 2), rng.uniform(0.5, 1.5, 2)
    tr = Transmissions(model.joint_names, R, motor_viscous=viscous, motor_coulomb=coulomb)
    return dataclasses.replace(model, transmissions=tr, armature=rng.uniform(0.02, 0.5, n),
                               viscous=rng.uniform(0.1, 0.5, n), coulomb=rng.uniform(0.1, 0.5, n))


def consistent_at_every_weight(model, data, **options):
    """
    Return ``{weight: (converged, Newton steps along the continuation)}`` of one fit.

    Every weight ``prior_weight='auto'`` tries (:data:`.selection.PRIOR_WEIGHTS`), found as
    identify finds them; a ConvergenceWarning is an error.
    """
    import warnings

    import manipulator_dynamics as md
    from manipulator_dynamics.identification.fit import fit
    from manipulator_dynamics.identification.selection import PRIOR_WEIGHTS
    with warnings.catch_warnings():
        warnings.simplefilter('error', md.ConvergenceWarning)
        estimate = fit(model, data, physically_consistent=True, path_weights=PRIOR_WEIGHTS,
                       prior_weight=min(PRIOR_WEIGHTS), **options)
    return {w: (p['converged'], p['iterations']) for w, p in estimate.consistency['path'].items()}


#: The rate of :func:`pushed_log`, Hz.
LOG_RATE = 1000.0
#: (start s, seconds, joint, N m): pushes on the arm, each from outside.
LOG_PUSHES = ((9.0, 0.4, 1, 8.0), (13.0, 0.3, 3, -3.0), (17.5, 0.5, 0, 20.0))


def pushed_log(model, seconds=22.0, pushes=LOG_PUSHES, seed=3, gap=None):
    """
    Return a moving arm's log, torque noise 0.5 % of its largest effort, pushed at ``pushes``.

    The efforts logged are what the joints applied: the model's torques less each push.
    ``gap``: ``(from, to)`` s of states dropped.
    """
    import manipulator_dynamics as md

    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 1.0 / LOG_RATE)
    w = np.linspace(0.8, 1.9, model.n)
    q = 0.3 * np.sin(w * t[:, None])
    qd = 0.3 * w * np.cos(w * t[:, None])
    qdd = -0.3 * w * w * np.sin(w * t[:, None])
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
    tau += 0.005 * np.abs(tau).max() * rng.normal(size=tau.shape)
    for start, length, joint, push in pushes:
        on = (t >= start) & (t < start + length)
        tau[on, joint] -= push
    if gap is not None:
        keep = ~((t > gap[0]) & (t < gap[1]))
        t, q, qd, tau = t[keep], q[keep], qd[keep], tau[keep]
    return t, q, qd, tau


class Said:
    """
    A runtime object's log (:mod:`manipulator_dynamics.runtime`): what it says, kept in order.

    ``info``, ``warning``, ``error`` and a throttled ``warn(kind, text)``, as a node's
    QuickLogger and Throttled take them; each line kept as ``(kind, text)``, the kind of the
    first three their name.
    """

    def __init__(self):
        self.lines = []

    def info(self, text):
        self.lines.append(('info', text))

    def warning(self, text):
        self.lines.append(('warning', text))

    def error(self, text):
        self.lines.append(('error', text))

    def warn(self, kind, text):
        self.lines.append((kind, text))

    def kinds(self):
        """Return the kind of each line said."""
        return [kind for kind, _ in self.lines]

    def text(self, kind):
        """Return the lines said of ``kind``."""
        return [text for k, text in self.lines if k == kind]
