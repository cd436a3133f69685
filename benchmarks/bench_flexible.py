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

    python3 benchmarks/bench_flexible.py [--seconds 2.0] [--dt 0.001] [--fig3c doc/fig3c.png]

For each arm, the steps per second of the kinematics scheme (Newmark on the FEM) plus the
parallel inverse-dynamics scheme, run together by ``flexible_inverse_dynamics``, and the ratio
to real time at a 1 kHz step (above 1: faster than real time); and the cost of one step of the
streamed scheme (``FlexibleStream.step``: what a controller pays per sample).  For scale, the
cost of one step is also given in Pinocchio RNEA calls of the same arm made rigid
(``arm.rigid_model()``), measured in the same run when ``pin`` is installed.  Best of several
repeats.

Then Isobe & Imaizumi's Fig. 4 and Fig. 3(c) on their rigid 3-link arm (rigid-bar links): the
cost of one streamed step against one call of Newton-Euler (theirs: about 3 times), and the RMS
torque error of the streamed scheme against Newton-Euler for 10 to 400 steps per second of
motion (``--fig3c PATH`` also draws the torque curves).
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


def quintic(t, duration, q0, q1):
    """Rest-to-rest quintic from ``q0`` to ``q1`` in ``duration`` s: ``q, qd, qdd`` (T, n)."""
    s = np.clip(t / duration, 0.0, 1.0)[:, None]
    d = np.asarray(q1, float) - np.asarray(q0, float)
    return (q0 + d * (10 * s**3 - 15 * s**4 + 6 * s**5),
            d * (30 * s**2 - 60 * s**3 + 30 * s**4) / duration,
            d * (60 * s - 180 * s**2 + 120 * s**3) / duration**2)


def stream_us(arm, q, dt):
    """Microseconds per ``FlexibleStream.step`` along ``q`` (positions only), best of 3."""
    def run():
        stream = md.FlexibleStream(arm, q[0], dt)
        for k in range(1, len(q)):
            stream.step(q[k])
    run()
    return best_of(run, 3) / (len(q) - 1) * 1e6


def three_link_figures(fig3c):
    """Print Fig. 4's and Fig. 3(c)'s numbers for the paper's rigid 3-link arm; draw Fig. 3(c)."""
    arm = FlexibleArm.planar([0.4] * 3, [0.215] * 3, math.inf, mass_at='cog')
    reference = arm.rigid_model()
    move = (1.0, [-math.pi / 2, 0.0, 0.0], [0.3, math.pi / 2, -math.pi / 2])
    t = np.linspace(0.0, 1.0, 101)
    q, qd, qdd = quintic(t, *move)
    step = stream_us(arm, q, 0.01)
    calls = 20000
    newton_euler = best_of(lambda: [md.inverse_dynamics(reference, q[50], qd[50], qdd[50])
                                    for _ in range(calls)], 3) / calls * 1e6
    # the parallel scheme proper: {tau} = [L][T]{P} from the nodal forces of one step
    from manipulator_dynamics.flexible.parallel_scheme import torques_at
    traj = md.flexible_trajectory(arm, t, q)
    nodes = traj.nodes[50]
    forces = arm.node_mass[:, None] * (traj.acceleration[50] - arm.model.gravity)
    deformation, axes, out = traj.deformation[50], traj.joint_axes[50], np.empty(arm.n)
    joint_node, joint_type = arm.joint_node, arm.model.joint_type
    parallel = best_of(lambda: [torques_at(nodes, forces, deformation, axes, joint_node,
                                           joint_type, out) for _ in range(calls)], 3) \
        / calls * 1e6
    print(f"\nIsobe & Imaizumi's Fig. 4, their rigid 3-link arm: one streamed step "
          f'{step:.1f} us; of it, the parallel scheme ([L][T]{{P}} of one step) '
          f'{parallel:.2f} us; one call of Newton-Euler (inverse_dynamics) {newton_euler:.2f} '
          f'us. Parallel scheme / Newton-Euler: {parallel / newton_euler:.1f}; whole step / '
          f'Newton-Euler: {step / newton_euler:.0f} (theirs: about 3)')
    print('\nFig. 3(c): RMS torque error of the streamed scheme (positions only) vs Newton-Euler')
    print(f'{"steps per 1.0 s":>16s} {"RMS error":>10s} {"largest error":>14s}')
    fine = np.linspace(0.0, 1.0, 1001)
    exact = md.inverse_dynamics(reference, *quintic(fine, *move))
    runs = {}
    for steps in (10, 25, 50, 100, 200, 400):
        tk = np.linspace(0.0, 1.0, steps + 1)
        qk, qdk, qddk = quintic(tk, *move)
        stream = md.FlexibleStream(arm, qk[0], 1.0 / steps)
        tau = np.array([stream.sample.tau] + [stream.step(x).tau for x in qk[1:]])
        ref = md.inverse_dynamics(reference, qk, qdk, qddk)
        rms = np.sqrt(np.mean((tau - ref) ** 2) / np.mean(ref ** 2))
        worst = np.abs(tau - ref).max() / np.abs(ref).max()
        print(f'{steps:16d} {rms:10.2%} {worst:14.2%}')
        if steps <= 100:
            runs[steps] = (tk, tau)
    if fig3c:
        from manipulator_dynamics.flexible.plot import plot_step_accuracy
        plot_step_accuracy(fine, exact, runs, fig3c, arm.joint_names)
        print(f'wrote {fig3c}')


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
    parser.add_argument('--fig3c', metavar='PNG', help="draw Isobe & Imaizumi's Fig. 3(c) here")
    args = parser.parse_args()
    t = np.arange(0.0, args.seconds, args.dt)
    print(f'{len(t)} steps of {args.dt * 1e3:g} ms; a rest-to-rest move in the first quarter, '
          'then free vibration\n')
    header = (f'{"arm":28s} {"nodes":>5s} {"dof":>5s} {"steps/s":>10s} {"x real time":>11s} '
              f'{"us/step":>8s} {"= Pinocchio RNEA calls":>23s} {"stream us/step":>15s}')
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
        streamed = stream_us(arm, q[:500], args.dt)
        print(f'{label:28s} {len(arm.node_mass):5d} {6 * (len(arm.node_mass) - 1):5d} '
              f'{1 / per_step:10.0f} {args.dt / per_step:11.1f} {per_step * 1e6:8.1f} {calls} '
              f'{streamed:15.1f}')
    three_link_figures(args.fig3c)


if __name__ == '__main__':
    main()
