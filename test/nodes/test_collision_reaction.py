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
A collision stops the push: each reaction of both commanding nodes, into a box on MuJoCo.

The bundled arm sweeps its wrist sideways (joint 1, rest to rest) into a fixed box that
MuJoCo's plant holds (:class:`~manipulator_dynamics.plant.Cell`: the links as capsules), under
trajectory_node's computed torque, or dynamics_node's inverse dynamics of the desired
accelerations an outer loop sends it along the same path.  Each node runs in this process, in
lockstep with the plant: the plant's step, then the state's bytes through the node's own state
callback, then the command it sent (no executor, no DDS: the machine's load changes no number
of it).  MuJoCo's contact force is the truth.  The contact levels are learnt by the node itself
(``auto``) on free motion of another sweep, never on the runs they judge.  The last test walks
sim_node's box over DDS, as a user's tool would hear its ``~/contact_force``.
"""

import math
import re

import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.contact.calibration import GROWTH
from manipulator_dynamics.contact.detection import COLLISION
from manipulator_dynamics.contact.reaction import Reaction
from manipulator_dynamics.demo import collision as collision_demo
from manipulator_dynamics.rigid.jacobian import world_poses
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
pytest.importorskip('mujoco', reason="the box is MuJoCo's: pip install .[sim]")
from builtin_interfaces.msg import Duration  # noqa: E402, I100
from manipulator_dynamics.nodes.diagnostics import ERROR, Report  # noqa: E402
from manipulator_dynamics.nodes.dynamics_node import DynamicsNode  # noqa: E402
from manipulator_dynamics.nodes.trajectory_node import TrajectoryNode  # noqa: E402
from manipulator_dynamics.plant import Cell, MujocoPlant  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from rosutil import in_process  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from test_compiled_step import Tap  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

DEMO = robots.path('demo_arm')
DT = 1e-3                                   # s: the plant's step and the state period
#: The sweep and the box of the collision demo (``dev.py demo --contact``), one definition:
#: joint 1 through SWEEP (rad) rest to rest in DURATION s, the box upright BOX_AT of the way,
#: where the wrist runs at 0.5 m/s; the links as capsules of RADIUS m.
Q0 = np.array(collision_demo.Q0)
SWEEP, DURATION = collision_demo.SWEEP, collision_demo.SWEEP_FOR
BOX_AT, BOX, RADIUS = collision_demo.BOX_AT, collision_demo.BOX, collision_demo.RADIUS
SECONDS = 4.0                               # physics s of a run: the sweep, then 1.5 s at rest
KP, KD = 400.0, 40.0                        # trajectory_node's defaults, and the outer loop's
START = 10 ** 9                             # ns: the plan's start on the states' clock
#: The issue's bounds: detected within 60 ms of the first contact; the force 300 ms after it
#: at most a fifth of the unguarded run's; at rest (every joint under 0.02 rad/s) within 0.5 s.
DETECTED, LATER, SHARE, REST, STILL = 0.060, 0.300, 0.2, 0.5, 0.02


def path(t, speed=1.0):
    """``(q, qd, qdd)`` of the sweep at ``t`` (s): a quintic rest to rest of joint 1."""
    T = DURATION / speed
    s = min(max(t / T, 0.0), 1.0)
    a, b = SWEEP
    q, qd, qdd = Q0.copy(), np.zeros(7), np.zeros(7)
    q[0] = a + (b - a) * (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5)
    qd[0] = (b - a) * (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / T
    qdd[0] = (b - a) * (60 * s - 180 * s ** 2 + 120 * s ** 3) / T ** 2
    return q, qd, qdd


def trajectory(speed=1.0, points=51, back=False, along=None, duration=DURATION):
    """
    Return the sweep as a JointTrajectory (positions, velocities) starting at :data:`START`.

    ``along``: another path ``(t, speed) -> (q, qd, qdd)`` of ``duration`` s at speed 1.
    """
    along = path if along is None else along
    msg = JointTrajectory(joint_names=list(md.load_model(DEMO).joint_names))
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(START, 10 ** 9)
    T = duration / speed
    for t in np.linspace(0.0, T, points):
        q, qd, _ = along(T - t if back else t, speed)
        msg.points.append(JointTrajectoryPoint(
            positions=q.tolist(), velocities=(-qd if back else qd).tolist(),
            time_from_start=Duration(sec=int(t), nanosec=round((t % 1) * 1e9))))
    return msg


def homing(q, stamp, seconds=DURATION, points=26):
    """Return a JointTrajectory from ``q`` to the sweep's start, rest to rest, from ``stamp``."""
    msg = JointTrajectory(joint_names=list(md.load_model(DEMO).joint_names))
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10 ** 9)
    home = path(0.0)[0]
    for t in np.linspace(0.0, seconds, points):
        s = t / seconds
        msg.points.append(JointTrajectoryPoint(
            positions=(q + (home - q) * (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5)).tolist(),
            time_from_start=Duration(sec=int(t), nanosec=round((t % 1) * 1e9))))
    return msg


def cell(model):
    """Return the box, upright on the wrist's arc where joint 1 is :data:`BOX_AT` of the way."""
    box = collision_demo.box_on_the_sweep(model)
    return Cell(box['link_radius'], tuple(box['obstacle_size']),
                tuple(box['obstacle_position']), tuple(box['obstacle_rpy']))


class Kept:
    """A publisher of messages, keeping what it is given (``sent``)."""

    def __init__(self, publisher):
        self.publisher, self.sent = publisher, []

    def publish(self, msg):
        self.sent.append(msg)


class Run:
    """One lockstep run's record, state by state: the plant's truth and what the node said."""

    def __init__(self, node, plant, steps):
        n = plant.model.n
        self.t = np.arange(steps) * DT
        self.q, self.qd, self.tau = (np.zeros((steps, n)) for _ in range(3))
        self.force, self.depth = np.zeros((steps, 3)), np.zeros(steps)
        self.level = np.full(steps, -1)
        self.reacting = np.zeros(steps, dtype=bool)
        self.node, self.plant = node, plant

    def first(self, where):
        """Return the time of the first state where ``where`` holds, or None."""
        k = np.flatnonzero(where)
        return self.t[k[0]] if len(k) else None

    @property
    def touched(self):
        return self.first(np.linalg.norm(self.force, axis=1) > 0)

    @property
    def detected(self):
        return self.first(self.level == COLLISION)

    def at(self, t):
        return int(round(t / DT))


def run(node_class, reaction, *, box=True, speed=1.0, back=False, levels=None, rearm_at=None,
        push=None, carry=None, then=None, seconds=SECONDS, truth=None, along=None, **params):
    """
    Run ``node_class`` on the sweep in lockstep with MuJoCo; return its :class:`Run`.

    ``levels``: the contact and collision thresholds (N m lists), then, where given, their
    growth (lists in :data:`.calibration.GROWTH` order; none: constant); None: learnt by the
    node, on this run.  ``truth``: the model the plant simulates (default: the node's, exact).
    ``back``: the sweep the other way.  ``rearm_at``: physics s at which ``~/rearm`` is
    called.  ``push``: ``(from s, link, wrench)`` pushing the plant from then on; ``carry``:
    ``(at s, link, (mass, com, inertia))``, a load the plant picks up then.  ``then``: a
    function of ``(node, k)`` called after each state (a new trajectory, a desired state).
    The node's clock is simulated time that never starts (``use_sim_time``, no /clock): every
    time it acts on is its states' stamps.
    """
    model = md.load_model(DEMO)

    motion, duration = (path, DURATION) if along is None else (along, SINES)

    def desired(t):
        q, qd, qdd = motion(duration / speed - t if back else t, speed)
        return q, -qd if back else qd, qdd

    q0 = desired(0.0)[0]
    plant = MujocoPlant(model if truth is None else truth, q0, DT,
                        cell=cell(model) if box else None)
    given = {} if levels is None else {'contact_thresholds': str(list(levels[0])),
                                       'collision_thresholds': str(list(levels[1]))}
    if levels is not None and len(levels) > 2:     # the growth, as ~/save_thresholds writes it
        given.update({f'thresholds_{name}': list(values)
                      for name, values in zip(GROWTH, levels[2:])})
    trajectories = node_class is TrajectoryNode
    more = {} if trajectories else {'mode': 'inverse_dynamics', 'outputs': ['']}
    with in_process(node_class, urdf_path=DEMO, controller_name='-', stale_after=0.0,
                    use_sim_time=True, external_torques=True, collision_reaction=reaction,
                    **given, **more, **params) as node:
        assert node.kernels.dynamics.ready, 'the kernels are compiled before the suite (dev.py)'
        node.command.pub = Tap(node.command.pub)
        node.reaction_pub = Kept(node.reaction_pub)
        if trajectories:
            node._on_trajectory(trajectory(speed, back=back) if along is None else
                                trajectory(speed, 401, back, along, SINES))
            assert node.start_ns == START, "the plan starts on the states' clock"
        steps = round(seconds / DT)
        record = Run(node, plant, steps)
        tau = md.gravity_torques(model, q0)
        msg = JointState(name=list(model.joint_names))
        for k in range(steps):
            t = k * DT
            if push is not None and t >= push[0] and plant.wrench is None:
                plant.push(push[1], push[2], world=True)
            if carry is not None and abs(t - carry[0]) < DT / 2:
                plant.carry(carry[1], *carry[2])
            if rearm_at is not None and abs(t - rearm_at) < DT / 2:
                node.contact._rearm(Trigger.Request(), Trigger.Response())   # as ~/rearm
            q, qd = plant.q, plant.qd
            if not trajectories:                # the outer loop: desired accelerations
                q_d, qd_d, qdd_d = desired(t)
                node._on_desired(JointTrajectory(joint_names=list(model.joint_names), points=[
                    JointTrajectoryPoint(accelerations=(
                        qdd_d + KP * (q_d - q) + KD * (qd_d - qd)).tolist())]))
            msg.position, msg.velocity, msg.effort = q.tolist(), qd.tolist(), tau.tolist()
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(START + k * 10 ** 6,
                                                                    10 ** 9)
            data = serialize_message(msg)
            if trajectories:
                node._on_state(data)
            else:
                node._on_state(data, {'received_timestamp': 0})
            if node.command.pub.sent:
                tau = node.command.pub.sent[-1]
            plant.step(tau)
            record.q[k], record.qd[k], record.tau[k] = plant.q, plant.qd, tau
            record.force[k], record.depth[k] = plant.contact()
            record.level[k] = -1 if node.contact.said is None else node.contact.said
            record.reacting[k] = node.reacting()
            if then is not None:
                then(node, k)
        record.levels = node.contact.detector.levels if node.contact.detector else None
        record.said = [m.data for m in node.reaction_pub.sent]
        report = Report()
        node._diagnose(report)
        record.report = report
    return record


@pytest.fixture(scope='module')
def levels():
    """Give the levels each node learns (auto) on the free sweep back: not a run they judge."""
    learnt = {}
    for node_class in (TrajectoryNode, DynamicsNode):
        record = run(node_class, 'stop', box=False, back=True, seconds=DURATION + 0.5,
                     contact_calibration=1.5)
        assert record.levels is not None, 'levels learnt from the free sweep'
        learnt[node_class] = tuple(x.tolist() for x in record.levels)
    return learnt


@pytest.fixture(scope='module')
def unguarded(levels):
    """Each node's run into the box with no reaction (``none``): the force to compare with."""
    return {c: run(c, 'none', levels=levels[c]) for c in (TrajectoryNode, DynamicsNode)}


NODES = pytest.mark.parametrize('node_class', [TrajectoryNode, DynamicsNode],
                                ids=['trajectory_node', 'dynamics_node'])


@NODES
def test_the_unguarded_run_hits_the_box_at_speed_and_keeps_pushing(unguarded, node_class):
    """The scenario itself: the wrist meets the box at 0.3-0.6 m/s and, unguarded, pushes on."""
    record = unguarded[node_class]
    model = record.plant.model
    k = record.at(record.touched)
    J = md.frame_jacobian(model, 'flange', record.q[k - 1])[:3]
    speed = np.linalg.norm(J @ record.qd[k - 1])
    assert 0.3 <= speed <= 0.6, speed
    assert record.detected is not None and not record.reacting.any()
    later = record.at(record.touched + LATER)
    assert np.linalg.norm(record.force[later]) > 50.0, record.force[later]


@NODES
@pytest.mark.parametrize('reaction', ['stop', 'float', 'reflex'])
def test_a_reaction_takes_the_push_off_the_box(levels, unguarded, node_class, reaction):
    """
    Detected within 60 ms; 300 ms after the first contact, a fifth of the unguarded force.

    The reaction starts on the state that raised the collision level and latches; the arm is
    at rest within 0.5 s of the detection; every command within the effort limits; ~/reaction
    and /diagnostics (ERROR) say which reaction and why.
    """
    record = run(node_class, reaction, levels=levels[node_class])
    model = record.plant.model
    touched, detected = record.touched, record.detected
    assert touched is not None and detected is not None
    assert detected - touched <= DETECTED, detected - touched
    k = record.at(detected)
    assert record.reacting[k] and not record.reacting[k - 1], 'latched by the state that raised it'
    assert record.reacting[k:].all(), 'latched'
    if reaction != 'reflex':                    # its command the reaction's (the reflex: below)
        law = Reaction(model, reaction)
        law.trigger(detected, np.zeros(model.n), 'the test')
        # the state k is the plant's after step k - 1
        np.testing.assert_allclose(record.tau[k], law.torques(record.q[k - 1], record.qd[k - 1],
                                                              detected), rtol=1e-9, atol=1e-9)
    later = record.at(touched + LATER)
    none = np.linalg.norm(unguarded[node_class].force[later])
    assert np.linalg.norm(record.force[later]) <= SHARE * none, \
        (np.linalg.norm(record.force[later]), none)
    rest = record.at(detected + REST)
    assert np.abs(record.qd[rest:]).max() < STILL, np.abs(record.qd[rest:]).max()
    assert np.all(np.abs(record.tau) <= model.effort_limit + 1e-9)
    assert len(record.said) == 1, record.said       # said once, at the collision
    assert record.said[-1].startswith(f'{reaction} since {START * 1e-9 + detected:.3f} s '
                                      '(collision at'), record.said[-1]
    assert record.report.level == ERROR and f'collision reaction {reaction} since' in \
        record.report.message, record.report.message
    if node_class is TrajectoryNode:
        assert '; trajectory abandoned at' in record.said[-1], record.said[-1]


@NODES
def test_the_stop_goes_no_deeper_into_the_box(levels, node_class):
    """From the detection + 50 ms on, the deepest penetration never grows."""
    record = run(node_class, 'stop', levels=levels[node_class])
    k = record.at(record.detected + 0.05)
    deepest = record.depth[k:].max()
    assert deepest <= record.depth[k] + 1e-6, (deepest, record.depth[k])


@NODES
def test_float_yields_to_a_push_with_gravity_compensation_alone(levels, node_class):
    """At rest against the box, a push away from it moves the arm free: no command resists."""
    model = md.load_model(DEMO)
    box = np.array(cell(model).box_position)
    push_at = 2.5                               # s: the arm at rest after the reaction
    wrist = world_poses(model, path(0.0)[0])[1][-1]
    away = (wrist - box) / np.linalg.norm(wrist - box)      # back the way the wrist came
    record = run(node_class, 'float', levels=levels[node_class],
                 push=(push_at, 'link7', np.r_[15.0 * away, 0.0, 0.0, 0.0]))
    k = record.at(push_at)
    assert record.reacting[k:].all()
    gap = [np.linalg.norm(world_poses(model, q)[1][-1] - box)
           for q in (record.q[k], record.q[-1])]
    assert gap[1] - gap[0] > 0.02, gap
    assert np.linalg.norm(record.force[-500:], axis=1).max() == 0.0, 'pushed free of the box'
    for j in range(k, len(record.t), 100):      # each command gravity compensation, no more
        g = md.gravity_torques(model, record.q[j - 1])
        np.testing.assert_allclose(record.tau[j], np.clip(g, -model.effort_limit,
                                                          model.effort_limit), atol=1e-9)


def test_the_reflex_backs_away_along_the_external_torque(levels):
    """The reflex moves the wrist away from the box, then stops it."""
    model = md.load_model(DEMO)
    box = np.array(cell(model).box_position)
    record = run(TrajectoryNode, 'reflex', levels=levels[TrajectoryNode])
    k = record.at(record.detected)
    gap = [np.linalg.norm(world_poses(model, record.q[j])[1][-1] - box)
           for j in (k, k + 150)]
    assert gap[1] > gap[0] + 0.01, gap


def test_refused_until_rearmed_then_held_and_a_new_trajectory_taken(levels):
    """
    While the stop holds, a new trajectory is refused, saying why; after ~/rearm, held, then run.

    The refusal is a throttled warning naming the reaction and ~/rearm; re-armed, the node holds
    the arm where the stop left it, and the next trajectory (back to the start) is followed.
    """
    said = []
    rearm_at, back_at = 2.5, 3.0

    def then(node, k):
        if k == 0:
            warn = node.throttle.warn
            node.throttle.warn = lambda kind, text: (said.append(text), warn(kind, text))
        t = k * DT
        if abs(t - 2.0) < DT / 2 or abs(t - back_at) < DT / 2:
            node._on_trajectory(homing(node.measured[0], START + (k + 1) * 10 ** 6))

    record = run(TrajectoryNode, 'stop', levels=levels[TrajectoryNode], rearm_at=rearm_at,
                 then=then, seconds=back_at + DURATION + 0.5)
    refused = [s for s in said if 'trajectory refused' in s]
    assert len(refused) == 1 and 'a collision reaction is in force (stop since' in refused[0] \
        and 'call ~/rearm first' in refused[0], said
    k = record.at(rearm_at)
    assert record.reacting[:k].any() and not record.reacting[k:].any()
    held = record.q[k:record.at(back_at)]
    assert np.abs(held - held[0]).max() < 1e-3, 'held where the stop left it'
    # home, to the dry friction's hold on the light wrist (computed torque at rest: 12 mrad)
    np.testing.assert_allclose(record.q[-1], path(0.0)[0], atol=0.02)
    assert record.said[-1].startswith('armed: stop'), record.said


def test_dynamics_node_refuses_desired_states_while_it_reacts(levels):
    """Each desired_state in the reaction is dropped with the reason; the stop's commands go on."""
    said = []

    def then(node, k):
        if k == 0:
            node._warn = lambda text, kind=None: said.append(text)

    record = run(DynamicsNode, 'stop', levels=levels[DynamicsNode], then=then)
    assert record.detected is not None
    refused = [s for s in said if 'dropped desired_state: a collision reaction is in force '
               '(stop since' in s and 'call ~/rearm first' in s]
    assert len(refused) == len(record.t) - record.at(record.detected) - 1, said[:3]


@NODES
def test_no_box_no_reaction_and_the_tracking_of_the_unguarded_run(levels, node_class):
    """Without the box, ``stop`` raises no level, completes the sweep and tracks as ``none``."""
    guarded = run(node_class, 'stop', box=False, levels=levels[node_class])
    free = run(node_class, 'none', box=False, levels=levels[node_class])
    assert not np.isin(guarded.level, [1, 2]).any(), set(guarded.level)
    assert not guarded.reacting.any()
    target = np.array([path(t)[0] for t in guarded.t])
    error = [np.abs(r.q - target).max() for r in (guarded, free)]
    assert error[0] <= 1.5 * error[1] + 1e-12, error
    np.testing.assert_allclose(guarded.q[-1], path(DURATION)[0], atol=5e-3)


@NODES
def test_at_twice_the_speed_the_levels_learnt_slow_raise_nothing(levels, node_class):
    """The sweep at twice the speed, ``stop`` on, levels from the slow sweep back: no level."""
    fast = run(node_class, 'stop', box=False, speed=2.0, levels=levels[node_class],
               seconds=DURATION / 2 + 1.0)
    assert not np.isin(fast.level, [1, 2]).any(), set(fast.level)
    assert not fast.reacting.any()
    np.testing.assert_allclose(fast.q[-1], path(DURATION)[0], atol=1e-2)    # completed


#: A load the arm picks up on its last link, unknown to its model: kg, m, kg m^2.
LOAD = (1.5, (0.03, -0.02, 0.05), (4e-3, 2e-4, -1e-4, 3e-3, 1e-4, 2e-3))


def test_at_twice_the_speed_with_a_load_estimated_and_applied_still_no_level(levels):
    """
    A load estimated and applied: the sweep at twice the speed raises no level.

    The arm carries a load its model lacks; dynamics_node estimates it (``~/estimate_payload``,
    every joint on its sines), and with the load it applied the sweep at twice the speed raises
    no level with the levels learnt slow without it; without it, the same run reacts.
    """
    model = md.load_model(DEMO)
    link = model.link_names[-1]
    truth = model.with_payload(link, LOAD[0], LOAD[1], LOAD[2])
    answers = []

    def estimate(node, k):
        if k == round(SINES / DT) - 1:          # the last state: the window is the sines'
            answers.append(node.payload._estimate(Trigger.Request(), Trigger.Response()))
            answers.append(list(node.params.payload))
    run(DynamicsNode, 'none', box=False, along=sines, seconds=SINES, truth=truth,
        levels=levels[DynamicsNode], payload_link=link, payload_window=SINES, then=estimate)
    answer, applied = answers
    assert answer.success, answer.message
    assert abs(applied[0] - LOAD[0]) < 0.02 * LOAD[0], (applied, answer.message)
    fast = {'box': False, 'speed': 2.0, 'levels': levels[DynamicsNode], 'truth': truth,
            'seconds': DURATION / 2 + 1.0}
    loaded = run(DynamicsNode, 'stop', payload_link=link, payload=applied, **fast)
    assert not np.isin(loaded.level, [1, 2]).any(), set(loaded.level)
    assert not loaded.reacting.any()
    np.testing.assert_allclose(loaded.q[-1], path(DURATION)[0], atol=1e-2)    # completed
    unknown = run(DynamicsNode, 'stop', **fast)
    assert unknown.reacting.any(), 'the load unknown to the model is a collision at speed'


def there_and_back(t, speed=1.0):
    """:func:`sines` for :data:`SINES` s, then the same way back (at ``speed``)."""
    turn = SINES / speed
    q, qd, qdd = sines(t if t < turn else 2 * turn - t, speed)
    return (q, qd, qdd) if t < turn else (q, -qd, qdd)


def test_a_load_on_an_arm_whose_model_is_off_is_not_applied_on_the_noise_s_deviations():
    """
    On an arm 15-20 % off its model, a load picked up is not applied off its deviations.

    dynamics_node learns its levels (auto), then the arm picks a load up: the estimate's
    deviations count the arm's error as the levels learnt it, and the load is not applied
    where its truth lies outside 3 of them.

    The same window fitted on the deviations of the noise and of the residual alone put the
    load far off them (checked here, from the node's own window): the service would have
    applied it.
    """
    from manipulator_dynamics.identification.payload import identify_payload
    model = md.load_model(DEMO)
    link = model.link_names[-1]
    answers = []

    def estimate(node, k):
        if k == round(2 * SINES / DT) - 1:      # the way back, loaded, is the window
            assert node.contact.spread() is not None, 'the levels were learnt'
            answers.append(node.payload._estimate(Trigger.Request(), Trigger.Response()))
            stamp, q, qd, effort = (np.array(x) for x in zip(*node.payload.window))
            answers.append(identify_payload(model, {'t': (stamp - stamp[0]) * 1e-9, 'q': q,
                                                    'qd': qd, 'tau': effort}, link))
    run(DynamicsNode, 'none', box=False, along=there_and_back, seconds=2 * SINES,
        truth=off(model), contact_calibration=4.0, carry=(SINES, link, LOAD),
        payload_link=link, payload_window=SINES - 0.5, then=estimate)
    answer, alone = answers
    assert "count the arm's own error" in answer.message, answer.message
    far = max(abs(alone.mass - LOAD[0]) / alone.mass_std,
              *np.abs((alone.com - LOAD[1]) / alone.com_std))
    assert far > 3.0, alone.summary()
    if answer.success:
        mass, std = (float(x) for x in re.search(r'mass ([\d.]+) \+- ([\d.]+) kg',
                                                 answer.message).groups())
        assert abs(mass - LOAD[0]) < 3 * std, answer.message
    else:
        assert answer.message.startswith('not applied'), answer.message


def off(model):
    """Return ``model`` as a real arm is against its model: inertia 15 %, friction 20 % more."""
    import dataclasses
    return dataclasses.replace(model, inertial=model.inertial * 1.15,
                               viscous=model.viscous * 1.2, coulomb=model.coulomb * 1.2)


#: Every joint along its own sine (rad, rad/s at speed 1), from rest: the motion a calibration
#: of every joint needs (the sweep turns joint 1 alone, and the node says the others did not
#: move, their levels holding only at rest).
AMPLITUDE = np.array([0.5, 0.3, 0.5, 0.4, 0.6, 0.5, 0.8])
FREQUENCY = 2 * np.pi * np.array([0.11, 0.13, 0.17, 0.19, 0.23, 0.29, 0.31])
SINES = 8.0                                 # s at speed 1
#: s of the sines at twice the speed a run takes: the plan ends moving, 50 ms after
FAST = SINES / 2 - 0.05


def sines(t, speed=1.0):
    """``(q, qd, qdd)`` of :data:`AMPLITUDE` ``(1 - cos(w t))`` at ``t`` (s), ``w`` x speed."""
    w = FREQUENCY * speed
    t = min(max(t, 0.0), SINES / speed)
    return (Q0 + AMPLITUDE * (1 - np.cos(w * t)), AMPLITUDE * w * np.sin(w * t),
            AMPLITUDE * w ** 2 * np.cos(w * t))


def test_on_an_arm_its_model_is_off_levels_learnt_slow_hold_twice_as_fast():
    """
    On an arm 15-20 % off its model, levels learnt slow hold at twice the speed; constant fail.

    trajectory_node learns its levels (auto) over the first 4 s of every joint's sines; the
    same sines at twice the speed then raise no level with them, where the same levels held
    constant (their growth dropped) do.
    """
    truth = off(md.load_model(DEMO))
    slow = run(TrajectoryNode, 'stop', box=False, along=sines, seconds=SINES,
               contact_calibration=4.0, truth=truth)
    learnt = slow.levels
    assert learnt is not None and learnt.growing(), learnt
    fast = run(TrajectoryNode, 'stop', box=False, along=sines, speed=2.0, seconds=FAST,
               truth=truth, levels=tuple(x.tolist() for x in learnt))
    assert not np.isin(fast.level, [1, 2]).any(), set(fast.level)
    assert not fast.reacting.any()
    constant = run(TrajectoryNode, 'stop', box=False, along=sines, speed=2.0,
                   seconds=FAST, truth=truth,
                   levels=(learnt.contact.tolist(), learnt.collision.tolist()))
    assert np.isin(constant.level, [1, 2]).any(), 'constant levels hold at twice the speed'


def test_the_plant_cell_refuses_a_box_it_cannot_make():
    with pytest.raises(ValueError, match=r'box_size must be > 0 on each edge'):
        Cell(0.04, (0.1, 0.0, 0.1), (0.5, 0.0, 0.5)).checked()
    with pytest.raises(ValueError, match=r'link_radius must be a finite number'):
        Cell(math.nan, (0.1, 0.1, 0.1), (0.5, 0.0, 0.5)).checked()
    with pytest.raises(ValueError, match=r'box_position needs 3 finite numbers'):
        Cell(0.04, (0.1, 0.1, 0.1), (0.5, 0.0)).checked()


def test_over_dds_the_stop_takes_the_push_off_sim_nodes_box_until_rearmed(
        client, processes, levels):
    """
    The user's path: sim_node's box, trajectory_node stopping on it, ~/reaction and ~/rearm.

    sim_node in lockstep with its box (``obstacle_*``), trajectory_node on simulated time with
    the levels it learnt on the free sweep back given as parameters; the sweep sent on
    ``joint_trajectory``.  ``~/reaction`` says the stop and the trajectory abandoned,
    ``~/contact_force`` falls to nothing within 0.3 s and stays there, ``~/rearm`` answers
    what it ended and ``~/reaction`` says armed again.
    """
    from geometry_msgs.msg import WrenchStamped
    from manipulator_dynamics.nodes.qos import LATCHED
    from std_msgs.msg import String
    model = md.load_model(DEMO)
    box = cell(model)
    force = client.listen(WrenchStamped, '/sim_node/contact_force', 100000)
    said = client.listen(String, '/trajectory_node/reaction', LATCHED)
    contact, collision, *growth = levels[TrajectoryNode]
    processes('sim_node', 'lockstep:=true', f'initial_positions:={path(0.0)[0].tolist()}',
              *(f'obstacle_{name}:={[float(x) for x in value]}' for name, value in (
                  ('size', box.box_size), ('position', box.box_position), ('rpy', box.box_rpy))),
              f'link_radius:={RADIUS}')
    client.wait(lambda: force, 60.0, "the held state's contact force")
    assert force[-1].header.frame_id == model.base_link
    assert np.linalg.norm([force[-1].wrench.force.x, force[-1].wrench.force.y,
                           force[-1].wrench.force.z]) == 0.0, 'not touching yet'
    processes('trajectory_node', 'use_sim_time:=true', 'external_torques:=true',
              f"contact_thresholds:='{contact}'", f"collision_thresholds:='{collision}'",
              *(f'thresholds_{name}:={values}' for name, values in zip(GROWTH, growth)))
    client.wait(lambda: said and said[-1].data.startswith('armed: stop'), 60.0,
                "trajectory_node's reaction armed")
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    msg = trajectory()
    msg.header.stamp.sec = msg.header.stamp.nanosec = 0            # now
    pub.publish(msg)
    client.wait(lambda: said[-1].data.startswith('stop since'), 120.0, 'the stop on the box')
    assert '; trajectory abandoned at' in said[-1].data, said[-1].data

    def norms():
        return np.array([np.linalg.norm([m.wrench.force.x, m.wrench.force.y, m.wrench.force.z])
                         for m in force])

    def stamps():
        return np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in force])

    def touched():
        """Return the first touch heard's stamp (None before it: argmax of nothing is 0)."""
        hit = norms() > 0
        return stamps()[np.argmax(hit)] if hit.any() else None

    # a second after the touch, once heard: the states before it are no touch (under load the
    # touch's messages may come after a second of those, which would pass for the stop's)
    client.wait(lambda: touched() is not None and stamps()[-1] > touched() + 1.0, 120.0,
                'a second of the stop')
    touched = touched()
    later = norms()[stamps() >= touched + LATER]
    assert later.max() < 1.0, later.max()        # the push taken off the box, and kept off
    answer = client.call(client.node.create_client(Trigger, '/trajectory_node/rearm'),
                         Trigger.Request())
    assert answer.success and 'the stop reaction ended' in answer.message, answer.message
    client.wait(lambda: said[-1].data.startswith('armed: stop'), 30.0, 'armed again')
