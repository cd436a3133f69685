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
Speed of the flexible-arm schemes (Isobe & Imaizumi): steps per second, against real time.

    python3 benchmarks/bench_flexible.py [--seconds 2.0] [--dt 0.001]

For each arm, the steps per second of the kinematics scheme (Newmark on the FEM) plus the
parallel inverse-dynamics scheme, run together by ``flexible_inverse_dynamics``, and the ratio
to real time at a 1 kHz step (above 1: faster than real time).  For scale, the cost of one step
is also given in Pinocchio RNEA calls of the same arm made rigid (``arm.rigid_model()``),
measured in the same run when ``pin`` is installed.  Best of several repeats.
"""

import argparse
import math
import time

import manipulator_dynamics as md
from manipulator_dynamics import FlexibleArm, robots
import numpy as np


def arms():
    """``(label, arm)``: the paper's 1-, 2-, 3-link arms, a 7-link arm at 4 and 16 elements."""
    yield '1-link (paper, 4 el.)', FlexibleArm.planar([0.4], [0.0224], 0.46)
    yield '2-link (paper, 4 el.)', FlexibleArm.planar([0.2, 0.2], [0.0112] * 2, [0.46, 0.046])
    yield '3-link (4 el.)', FlexibleArm.planar([0.4] * 3, [0.215] * 3, [5.0, 2.0, 1.0])
    model = md.load_model(robots.path('demo_arm'))
    for elements in (4, 16):
        beams = {name: {'flexural_rigidity': 1.0e4, 'elements': elements}
                 for name in model.link_names}
        yield f'7-link demo arm ({elements} el.)', FlexibleArm.from_model(model, beams)


def best_of(fn, repeats):
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def pinocchio_rnea_us(arm, q, qd, qdd):
    try:
        import pinocchio as pin
    except ImportError:
        return None
    pm = pin.Model()
    model = arm.rigid_model()
    parent = 0
    for i in range(model.n):
        placement = pin.SE3(np.asarray(model.R_parent_joint[i]),
                            np.asarray(model.p_parent_joint[i]))
        axis = np.asarray(model.axis[i])
        joint = pin.JointModelRevoluteUnaligned(axis) if model.joint_type[i] == 0 \
            else pin.JointModelPrismaticUnaligned(axis)
        parent = pm.addJoint(parent, joint, placement, model.joint_names[i])
        p = model.inertial[i]
        mass = p[9]
        com = p[6:9] / mass if mass > 0 else np.zeros(3)
        J = np.array([[p[0], p[1], p[2]], [p[1], p[3], p[4]], [p[2], p[4], p[5]]])
        Jc = J - mass * (np.dot(com, com) * np.eye(3) - np.outer(com, com))
        pm.appendBodyToJoint(parent, pin.Inertia(mass, com, Jc), pin.SE3.Identity())
    pm.gravity.linear = np.asarray(model.gravity)
    pd = pm.createData()
    ours = md.inverse_dynamics(model, q, qd, qdd)
    assert np.allclose(pin.rnea(pm, pd, q, qd, qdd), ours, rtol=1e-9, atol=1e-12)
    reps = 2000
    t = best_of(lambda: [pin.rnea(pm, pd, q, qd, qdd) for _ in range(reps)], 3)
    return t / reps * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seconds', type=float, default=2.0, help='simulated time per run')
    parser.add_argument('--dt', type=float, default=1e-3, help='time step (s)')
    args = parser.parse_args()
    t = np.arange(0.0, args.seconds, args.dt)
    print(f'{len(t)} steps of {args.dt * 1e3:g} ms; a rest-to-rest move in the first quarter, '
          'then free vibration\n')
    header = (f'{"arm":28s} {"nodes":>5s} {"dof":>5s} {"steps/s":>10s} {"x real time":>11s} '
              f'{"us/step":>8s} {"= Pinocchio RNEA calls":>23s}')
    print(header)
    print('-' * len(header))
    for label, arm in arms():
        s = np.clip(t / (args.seconds / 4), 0, 1)[:, None]
        q = np.linspace(0.3, 0.8, arm.n) * (10 * s**3 - 15 * s**4 + 6 * s**5)
        md.flexible_inverse_dynamics(arm, t[:10], q[:10])            # compile / load kernels
        elapsed = best_of(lambda: md.flexible_inverse_dynamics(arm, t, q), 3)
        per_step = elapsed / len(t)
        rnea = pinocchio_rnea_us(arm, q[len(t) // 8], np.full(arm.n, 0.5), np.full(arm.n, 1.0))
        calls = f'{per_step * 1e6 / rnea:23.0f}' if rnea else f'{"(pin not installed)":>23s}'
        print(f'{label:28s} {len(arm.node_mass):5d} {6 * (len(arm.node_mass) - 1):5d} '
              f'{1 / per_step:10.0f} {args.dt / per_step:11.1f} {per_step * 1e6:8.1f} {calls}')


if __name__ == '__main__':
    main()
