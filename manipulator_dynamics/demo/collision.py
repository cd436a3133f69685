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
The collision demo: the simulated arm runs into a box, and stops.

``python3 -m manipulator_dynamics.demo --contact`` (``python3 dev.py demo --contact``) runs
sim_node's MuJoCo cell with a fixed box on the wrist's arc (``obstacle_*``, the links as
capsules) and trajectory_node with its momentum observer on (``external_torques``) and
``collision_reaction`` at its default, ``stop``.  trajectory_node learns its contact levels
(``auto``) on a free stretch of the sweep, short of the box and back; then the sweep of the
base joint runs the wrist into the box at about 0.5 m/s.  The demo prints when the wrist first
touched the box (sim_node's true ``~/contact_force``), when trajectory_node raised the
collision level and started the stop, the contact force at its peak and 300 ms after the first
touch, and the arm's speed 0.5 s after the detection; it plots the force and the base joint.
MuJoCo is needed (the internal engine has no contact).
"""

import os
import re

import numpy as np

from .loop import demo_model, Loop
from ..rigid.jacobian import world_poses

#: The arm's pose, joint 1 apart: the wrist out over the table.
Q0 = (0.0, 0.6, 0.0, -1.2, 0.0, 0.9, 0.0)
#: Joint 1's sweep (rad), rest to rest in SWEEP_FOR s; the box stands BOX_AT of the way along
#: it, where the wrist runs at about 0.5 m/s.
SWEEP, SWEEP_FOR, BOX_AT = (-0.6, 0.6), 2.5, 0.45
#: The box (m, a post upright) and the links' capsules' radius (m).
BOX, RADIUS = (0.08, 0.08, 0.4), 0.04
#: The free stretch the levels are learnt on: out to this share of the sweep and back, each
#: way in that share of the sweep's time (its speeds are the sweep's), ROUNDS times; the
#: seconds of its motion the calibration takes.
FREE_TO, ROUNDS, CALIBRATION = 0.2, 5, 3.0
#: What the demo holds to (the issue's bounds): the collision level within DETECTED s of the
#: first touch; the force LATER s after it at most SHARE of the peak; every joint under STILL
#: rad/s within REST s of the detection.
DETECTED, LATER, SHARE, REST, STILL = 0.060, 0.300, 0.2, 0.5, 0.02


def quintic(a, b, seconds, t):
    """Joint 1's position and velocity from ``a`` to ``b`` (rad), rest to rest, at ``t`` s."""
    s = min(max(t / seconds, 0.0), 1.0)
    return (a + (b - a) * (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5),
            (b - a) * (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / seconds)


def along(names, start, legs, points_per_leg=26):
    """
    Return a JointTrajectory from ``start`` (rclpy Time): joint 1 through ``legs``.

    ``legs``: ``[(from, to, seconds)]`` rad, rest to rest each; the other joints hold
    :data:`Q0`.
    """
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp = start.to_msg()
    offset = 0.0
    for k, (a, b, seconds) in enumerate(legs):
        for t in np.linspace(0.0, seconds, points_per_leg)[1 if k else 0:]:
            q, qd = quintic(a, b, seconds, t)
            at = offset + t
            msg.points.append(JointTrajectoryPoint(
                positions=[q, *Q0[1:]], velocities=[qd] + [0.0] * (len(Q0) - 1),
                time_from_start=Duration(sec=int(at), nanosec=round((at % 1) * 1e9))))
        offset += seconds
    return msg


def box_on_the_sweep(model):
    """Return sim_node's ``obstacle_*`` parameters: the box upright where the wrist passes."""
    a, b = SWEEP
    q = np.array(Q0)
    q[0] = a + BOX_AT * (b - a)
    wrist = world_poses(model, q)[1][-1]
    return {'obstacle_size': list(BOX), 'obstacle_position': [float(x) for x in wrist],
            'obstacle_rpy': [0.0, 0.0, float(q[0])], 'link_radius': RADIUS}


def run(plot='collision.png', lockstep=True, engine='auto', pace=1.0):
    """Run the collision demo; return 0 when the arm stopped on the box as it should."""
    from geometry_msgs.msg import WrenchStamped
    from std_msgs.msg import String

    from ..nodes.qos import LATCHED
    if engine == 'internal':
        raise RuntimeError("the collision demo needs MuJoCo's contact: the internal engine "
                           'has none (--engine mujoco or auto)')
    try:
        import mujoco  # noqa: F401
    except ImportError:
        raise RuntimeError('the collision demo needs MuJoCo (pip install mujoco, or '
                           'pip install .[sim])') from None
    model, common = demo_model()
    start_q = [SWEEP[0], *Q0[1:]]
    cell = {k: str(v) for k, v in box_on_the_sweep(model).items()}
    loop = Loop([
        ('sim_node', dict(common, wait_for_command='true', engine='mujoco',
                          initial_positions=str(start_q), **cell)),
        ('trajectory_node', dict(common, external_torques='true',
                                 contact_calibration=str(CALIBRATION)))], lockstep,
        kernels=('rigid', 'forward', 'contact'), pace=pace)
    forces, reactions = [], []
    loop.node.create_subscription(WrenchStamped, '/sim_node/contact_force', forces.append,
                                  100000)
    loop.node.create_subscription(String, '/trajectory_node/reaction', reactions.append,
                                  LATCHED)
    print(f'manipulator_dynamics collision demo: {model!r}\nstarting sim_node (MuJoCo, a box '
          f"of {list(BOX)} m on the wrist's arc) and trajectory_node (observing, "
          f'collision_reaction stop; DDS domain {os.environ["ROS_DOMAIN_ID"]}, localhost only) '
          '...', flush=True)
    a, b = SWEEP
    try:
        loop.close(model.joint_names, start_q)
        print(loop.plant(), flush=True)
        free, leg = a + FREE_TO * (b - a), SWEEP_FOR * FREE_TO
        legs = [(a, free, leg), (free, a, leg)] * ROUNDS
        begun = loop.send(lambda when: along(model.joint_names, when, legs))
        print(f'free motion, short of the box: joint1 {a:g} -> {free:.2f} -> {a:g} rad, '
              f'{ROUNDS} times, while trajectory_node learns its contact levels', flush=True)
        loop.until(begun, 2 * ROUNDS * leg + 0.2)
        loop.wait(lambda: learnt(loop), 60, "trajectory_node's contact levels")
        start = loop.send(lambda when: along(model.joint_names, when, [(a, b, SWEEP_FOR)]))
        print(f'sweep sent: joint1 {a:g} -> {b:g} rad in {SWEEP_FOR:g} s, through the box',
              flush=True)
        loop.until(start, SWEEP_FOR + 1.0)
    finally:
        loop.stop()
    said = [m.msg for m in loop.logs if m.name == 'trajectory_node']
    return report(model, loop, forces, reactions, start.nanoseconds * 1e-9, said, plot)


def learnt(loop):
    """Whether trajectory_node has said its levels learnt."""
    return any(m.name == 'trajectory_node' and 'contact thresholds learnt from' in m.msg
               for m in loop.logs)


def stamps(messages):
    return np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in messages])


def report(model, loop, forces, reactions, start, said, plot):
    """Print when the box was touched, found and left; plot; return the demo's verdict."""
    t = stamps(forces) - start
    force = np.array([np.linalg.norm([m.wrench.force.x, m.wrench.force.y, m.wrench.force.z])
                      for m in forces])
    for line in said:
        if 'thresholds learnt' in line or 'collision' in line and 'reaction' in line:
            print(f'trajectory_node: {line}')
    touching = np.flatnonzero((force > 0) & (t >= 0))
    if not len(touching):
        print('the wrist never touched the box')
        return 1
    touched = t[touching[0]]
    found = [float(m.group(1)) - start for m in
             (re.search(r'collision at ([0-9.]+) s', line) for line in said) if m]
    detected = found[0] if found else np.inf
    later = force[(t >= touched + LATER) & (t < touched + LATER + 0.01)]
    peak = force[t >= touched].max()
    states_t = np.array([s.header.stamp.sec + s.header.stamp.nanosec * 1e-9
                         for s in loop.states]) - start
    qd = np.array([s.velocity for s in loop.states])
    after = qd[(states_t >= detected + REST) & (states_t < detected + REST + 0.5)] \
        if np.isfinite(detected) else np.empty((0, model.n))
    speed = np.abs(after).max() if len(after) else np.inf
    print(f'\nfirst touch of the box at {touched:.3f} s into the sweep')
    print(f'collision level at {detected:.3f} s: {(detected - touched) * 1e3:.0f} ms after '
          f'the first touch (bound {DETECTED * 1e3:g} ms)')
    print(f'contact force: peak {peak:.1f} N; {LATER * 1e3:g} ms after the first touch '
          f'{later.max() if len(later) else float("nan"):.1f} N (bound {SHARE:g} of the peak)')
    print(f'{REST:g} s after the detection, the fastest joint at {speed:.4f} rad/s '
          f'(bound {STILL:g})')
    print('~/reaction said: ' + ' | '.join(m.data for m in reactions))
    if plot:
        _plot(plot, model, t, force, states_t, loop, touched, detected)
        print(f'\nplot: {os.path.abspath(plot)}')
    ok = (detected - touched <= DETECTED and len(later) and later.max() <= SHARE * peak
          and speed <= STILL)
    return 0 if ok else 1


def _plot(path, model, t, force, states_t, loop, touched, detected):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    q1 = np.array([s.position[0] for s in loop.states])
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    a.plot(t, force, lw=1.5)
    a.set_ylabel('contact force on the box [N]\n(MuJoCo, the truth)')
    b.plot(states_t, q1, lw=1.5)
    b.set_ylabel(f'{model.joint_names[0]} [rad]')
    b.set_xlabel("time from the sweep's start [s]")
    for ax in (a, b):
        ax.axvline(touched, color='C1', lw=1, label='first touch')
        if np.isfinite(detected):
            ax.axvline(detected, color='C3', lw=1, label='collision level: stop')
        ax.grid(alpha=0.3)
        ax.set_xlim(-0.2, SWEEP_FOR + 1.0)
    a.legend(fontsize=8)
    a.set_title(f'{model.name}: trajectory_node runs into a box and stops')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
