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

"""trajectory_node as a real process: efforts of every point, streaming, closed-loop tracking."""

import os

from helpers import erd, needs_erd, ROOT
import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest
import scipy.interpolate

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from builtin_interfaces.msg import Duration  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64MultiArray  # noqa: E402, I100
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402, I100

from rosutil import from_a_new_publisher, last_from_a_new_publisher, stamp  # noqa: E402, I100

ARM = robots.path('demo_arm')
DYNAMICS = os.path.join(ROOT, 'config', 'demo_arm_dynamics.yaml')
COMMANDS = '/effort_controller/commands'
#: the client's plain command topic has no controller to confirm the order: opt out
UNCHECKED = "controller_name:='-'"


def trajectory(model, seconds=5.0, points=11, order=None, full=True, seed=0):
    """
    Make a smooth out-and-back motion of every joint, a JointTrajectory (``order``).

    From 0.1 rad out by 0.2-0.5 rad and back, both ends kept a tenth of the range inside the
    URDF's limits where they are finite.
    """
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, seconds, points)
    amp = rng.uniform(0.2, 0.5, model.n) * rng.choice([-1, 1], model.n)
    span = np.where(np.isfinite(model.upper - model.lower), model.upper - model.lower, np.inf)
    low, high = model.lower + span / 10, model.upper - span / 10
    start = np.clip(0.1, low, high)
    amp = np.clip(amp, low - start, high - start)
    w = np.pi / seconds
    q = start + amp * np.sin(w * t)[:, None] ** 2
    qd = amp * w * np.sin(2 * w * t)[:, None]
    qdd = amp * 2 * w * w * np.cos(2 * w * t)[:, None]
    order = list(model.joint_names) if order is None else order
    k = [model.joint_index(j) for j in order]
    msg = JointTrajectory(joint_names=order)
    for i, ti in enumerate(t):
        point = JointTrajectoryPoint(positions=q[i, k].tolist())
        if full:
            point.velocities, point.accelerations = qd[i, k].tolist(), qdd[i, k].tolist()
        point.time_from_start = Duration(sec=int(ti), nanosec=int(round((ti % 1) * 1e9)))
        msg.points.append(point)
    return msg, t, q, qd, qdd


def start_feed_forward(client, processes):
    """Start trajectory_node without feedback; return its efforts and a trajectory publisher."""
    processes('trajectory_node', UNCHECKED, f'urdf_path:={ARM}', 'feedback:=false')
    efforts = client.listen(JointTrajectory, '/trajectory_node/trajectory_with_efforts')
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher('/trajectory_node/trajectory_with_efforts')
    return efforts, pub


@pytest.mark.parametrize('full', [True, False], ids=['given', 'splined'])
def test_plan_samples_the_hermite_spline_and_linear_accelerations(full):
    """
    Plan.at, evaluated per state from its own coefficient rows, against scipy at any time.

    Positions and velocities: the cubic Hermite through the points; accelerations: linear between
    the points; the first point before the start, the last point (at rest) after the end.
    """
    from manipulator_dynamics.runtime.follower import Plan
    model = md.load_model(ARM)
    msg, t, _, _, _ = trajectory(model, seconds=3.0, points=7, full=full, seed=4)
    # uneven times: the intervals must not be assumed equal
    times = t + np.r_[0.0, np.random.default_rng(1).uniform(-0.1, 0.1, len(t) - 2), 0.0]
    for point, ti in zip(msg.points, times):
        point.time_from_start = Duration(sec=int(ti), nanosec=int(round((ti % 1) * 1e9)))
    plan = Plan(model, msg)
    hermite = scipy.interpolate.CubicHermiteSpline(plan.t, plan.q, plan.qd)
    accel = scipy.interpolate.interp1d(plan.t, plan.qdd, axis=0)
    probe = np.concatenate([plan.t[:-1], np.random.default_rng(2).uniform(0, plan.t[-1], 50)])
    for time in probe:
        q, qd, qdd = plan.at(time)
        np.testing.assert_allclose(q, hermite(time), rtol=0, atol=1e-12)
        np.testing.assert_allclose(qd, hermite(time, 1), rtol=0, atol=1e-11)
        np.testing.assert_allclose(qdd, accel(time), rtol=0, atol=1e-11)
    before = plan.at(-0.5)
    np.testing.assert_allclose(before[0], plan.q[0], atol=1e-15)
    np.testing.assert_allclose(before[1], plan.qd[0], atol=1e-15)
    after = plan.at(plan.t[-1] + 0.5)
    np.testing.assert_array_equal(after[0], plan.q[-1])
    assert not after[1].any() and not after[2].any()


def test_trajectory_with_efforts(client, processes):
    model = md.load_model(ARM)
    efforts, pub = start_feed_forward(client, processes)
    order = list(model.joint_names)[::-1]
    msg, t, q, qd, qdd = trajectory(model, order=order)
    pub.publish(msg)
    client.wait(lambda: efforts, what='trajectory_with_efforts')
    got = efforts[0]
    assert list(got.joint_names) == order
    k = [model.joint_index(j) for j in order]
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)[:, k]
    np.testing.assert_allclose([p.effort for p in got.points], tau, rtol=1e-9, atol=1e-9)
    pub.publish(JointTrajectory())                               # empty: stop


def test_trajectory_efforts_carry_the_payload_given_at_start(client, processes):
    """
    ``payload_link:=link7 payload:=[...]`` at start: the plan's efforts are the held object's.

    The start path of the payload (applied when the model loads); the run-time path is tested
    on dynamics_node, which shares it.
    """
    model = md.load_model(ARM)
    processes('trajectory_node', UNCHECKED, f'urdf_path:={ARM}', 'feedback:=false',
              'payload_link:=link7',
              'payload:=[2.0, 0.0, 0.0, 0.1]')
    efforts = client.listen(JointTrajectory, '/trajectory_node/trajectory_with_efforts')
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher('/trajectory_node/trajectory_with_efforts')
    msg, t, q, qd, qdd = trajectory(model)
    pub.publish(msg)
    client.wait(lambda: efforts, what='trajectory_with_efforts')
    held = model.with_payload('link7', 2.0, [0.0, 0.0, 0.1])
    tau = md.inverse_dynamics(held, q, qd, qdd, friction=True)
    np.testing.assert_allclose([p.effort for p in efforts[0].points], tau, rtol=1e-9, atol=1e-9)
    pub.publish(JointTrajectory())


def test_send_trajectory_runs_an_excitation_csv(client, processes, tmp_path):
    """
    ``manipulator-dynamics excitation --output`` then ``send_trajectory csv:=``: the user's path.

    trajectory_node takes the CSV's points (positions, velocities, accelerations as written)
    and echoes them with the inverse dynamics of each.
    """
    from manipulator_dynamics import cli
    csv_path = tmp_path / 'excitation.csv'
    assert cli.main(['excitation', ARM, '--duration', '5', '--harmonics', '3', '--maxiter', '3',
                     '--rate', '20', '--output', str(csv_path)]) == 0
    from manipulator_dynamics.identification.excitation import read_trajectory_csv
    names, t, q, qd, qdd = read_trajectory_csv(csv_path)
    model = md.load_model(ARM)
    processes('trajectory_node', UNCHECKED, f'urdf_path:={ARM}', 'feedback:=false')
    efforts = client.listen(JointTrajectory, '/trajectory_node/trajectory_with_efforts')
    client.wait_for_publisher('/trajectory_node/trajectory_with_efforts')
    sender = processes('send_trajectory', f'csv:={csv_path}')
    client.wait(lambda: efforts, what='trajectory_with_efforts')
    got = efforts[0]
    assert list(got.joint_names) == list(model.joint_names) == names
    assert len(got.points) == len(t) == 101
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
    np.testing.assert_allclose([p.effort for p in got.points], tau, rtol=1e-9, atol=1e-9)
    code, output = sender.wait()
    assert code == 0 and 'sent the' in output, output


def test_send_trajectory_names_a_bad_csv(processes, tmp_path):
    bad = tmp_path / 'bad.csv'
    bad.write_text('clock,joint1.position\n0,0\n1,0.1\n')
    code, output = processes('send_trajectory', f'csv:={bad}').wait()
    assert code == 2 and "no 'time' column" in output, output


def test_streamed_commands_follow_time_from_start(client, processes):
    """
    Streamed commands follow time_from_start from the header stamp, then hold.

    Positions only: the node fills velocities and accelerations by a clamped cubic spline,
    streams the desired state along time_from_start from the header stamp, then holds.

    At 100 Hz, so that this test's own client keeps up with everything it receives.
    """
    model = md.load_model(ARM)
    processes('trajectory_node', UNCHECKED, f'urdf_path:={ARM}', 'feedback:=false', 'rate:=100.0')
    desired = client.listen(JointTrajectory, '/desired_state', 100)
    commands = client.listen(Float64MultiArray, COMMANDS, 100)
    efforts = client.listen(JointTrajectory, '/trajectory_node/trajectory_with_efforts')
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher('/desired_state')
    client.wait_for_publisher('/trajectory_node/trajectory_with_efforts')
    msg, t, q, _, _ = trajectory(model, seconds=1.0, points=6, full=False)
    from rclpy.duration import Duration as Delay
    given = client.node.get_clock().now() + Delay(seconds=0.3)   # stamped ahead
    msg.header.stamp = given.to_msg()
    pub.publish(msg)
    client.wait(lambda: efforts, what='trajectory_with_efforts')

    def nanoseconds(m):
        return m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec
    # the stamp given, or, where a busy machine delivered the trajectory after it, the time it
    # arrived (a late trajectory starts from its first point): the node says which
    start = nanoseconds(efforts[0])
    assert start >= given.nanoseconds

    def since_start(m):
        return (nanoseconds(m) - start) * 1e-9
    client.wait(lambda: desired and since_start(desired[-1]) > 1.3, what='the hold after the end')
    client.spin(0.5)     # the hold goes on: let the commands' queue catch up with desired_state's
    spline = scipy.interpolate.CubicSpline(t, q, bc_type='clamped')
    hermite = scipy.interpolate.CubicHermiteSpline(t, q, spline(t, 1))
    stamps = np.array([since_start(m) for m in desired])
    during = (stamps > 0.05) & (stamps < 0.95)
    assert during.sum() > 60                                      # about 100 Hz
    # the node samples its clock twice per step (for the state, then for the stamp): allow
    # the motion of 2 ms, about 1e-3 rad here
    for m, s in zip(np.array(desired)[during], stamps[during]):
        np.testing.assert_allclose(m.points[0].positions, hermite(s), atol=2e-3)
    after = [m for m, s in zip(desired, stamps) if s > 1.1]
    np.testing.assert_allclose(after[-1].points[0].positions, q[-1], atol=1e-12)
    assert np.allclose(after[-1].points[0].velocities, 0.0)
    np.testing.assert_allclose(commands[-1].data, md.inverse_dynamics(
        model, q[-1], np.zeros(7), np.zeros(7), friction=True), rtol=1e-9)


def test_bad_trajectories_are_rejected(client, processes):
    model = md.load_model(ARM)
    efforts, pub = start_feed_forward(client, processes)
    good = trajectory(model)[0]
    bad = []
    m = trajectory(model)[0]
    m.joint_names = m.joint_names[:-1] + ['elbow']              # a joint the model lacks
    bad.append(m)
    m = trajectory(model)[0]
    m.points[3].time_from_start = m.points[2].time_from_start   # times not increasing
    bad.append(m)
    m = trajectory(model)[0]
    m.points[4].positions[1] = 3.5                              # beyond joint2's 2.09 limit
    bad.append(m)
    m = trajectory(model)[0]
    m.points[2].velocities = m.points[2].velocities[:3]         # mismatched lengths
    bad.append(m)
    m = trajectory(model)[0]
    m.points[5].accelerations[0] = float('nan')
    bad.append(m)
    for k, m in enumerate(bad):
        pub.publish(m)
        pub.publish(good)
        client.wait(lambda: len(efforts) == k + 1, what=f'efforts after bad trajectory {k}')
    client.spin(0.3)
    assert len(efforts) == len(bad)


def lockstep_run(client, processes, seconds, *sim, load=0, urdf=ARM, dynamics=DYNAMICS):
    """
    sim_node in lockstep + trajectory_node on sim time: the robot follows ``trajectory``.

    The demo arm with its joint dynamics unless ``urdf`` (and ``dynamics``, None for the
    URDF's own) say otherwise.  Returns the trajectory's samples and the states heard, stamped
    in physics time, until ``seconds`` of it.  ``load`` busy processes run beside it while it
    does.
    """
    import subprocess
    import sys
    model = md.load_model(urdf, joint_dynamics=dynamics, check_inertia='warn')
    msg, t, q, qd, qdd = trajectory(model, seconds=seconds, points=26)
    robot = [f'urdf_path:={urdf}'] + ([f'joint_dynamics:={dynamics}'] if dynamics else [])
    nodes = [processes('trajectory_node', *robot, 'use_sim_time:=true'),
             processes('sim_node', f'initial_positions:=[{", ".join(map(str, q[0]))}]',
                       *robot, 'lockstep:=true', *sim)]
    states = client.listen(JointState, '/joint_states', 100000)
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    # the held state heard: this listener is matched before the trajectory starts the loop
    client.wait(lambda: states, 60.0, 'the held state on /joint_states')
    hogs = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(load)]
    try:
        pub.publish(msg)                # stamp 0: it starts at once, at the held state's time
        client.wait(lambda: states and stamp(states[-1]) >= seconds + 0.2,
                    timeout=60.0 + 40.0 * seconds, what='the lockstep loop to run the trajectory')
    finally:
        for hog in hogs:
            hog.kill()
    for node in nodes:
        node.stop()
    return t, q, qd, np.array([stamp(s) for s in states]), np.array([s.position for s in states])


def test_computed_torque_tracks_a_mujoco_arm_in_lockstep(client, processes):
    """
    sim_node (MuJoCo, lockstep) + trajectory_node over DDS: a 3 s trajectory within milliradians.

    The bundled robot with its joint dynamics (rotor inertias, friction), default gains, 1 kHz.
    The plant is MuJoCo's model of the URDF, not the package's: its dry friction is a
    constraint where trajectory_node compensates ``Fc sign(qd_d)``, the error left is at the
    turning points (measured: max 0.84 mrad, RMS 0.05 mrad; 7.2 and 1.0 mrad with MuJoCo's
    default friction softness).
    """
    t, q, qd, stamps, measured = lockstep_run(client, processes, 3.0, 'engine:=mujoco')
    held = stamps == 0.0                        # the initial state, repeated until the start
    assert held[0] and np.all(np.diff(stamps[~held]) > 0)        # then every step, in order
    during = stamps <= 3.0
    assert during.sum() - held.sum() == 3000
    error = np.abs(measured[during] - scipy.interpolate.CubicHermiteSpline(t, q, qd)(
        stamps[during]))
    rms = np.sqrt((error ** 2).mean())
    assert error.max() < 2e-3 and rms < 2e-4, (error.max(), rms)


@needs_erd
@pytest.mark.parametrize('path', ['panda_description/urdf/panda.urdf',
                                  'ur_description/urdf/ur5_robot.urdf'],
                         ids=['panda', 'ur5'])
def test_computed_torque_tracks_example_robot_data_arms_on_mujoco(client, processes, path):
    """
    The same loop on real robots' URDFs, as they are (the panda's fingers and damping too).

    2 s, lockstep, default gains: MuJoCo's model of each URDF against the package's controller
    (measured: panda max 0.071 mrad, RMS 0.023; ur5 max 0.033, RMS 0.016).
    """
    t, q, qd, stamps, measured = lockstep_run(client, processes, 2.0, 'engine:=mujoco',
                                              urdf=erd(path), dynamics=None)
    held = stamps == 0.0
    during = stamps <= 2.0
    assert during.sum() - held.sum() == 2000
    error = np.abs(measured[during] - scipy.interpolate.CubicHermiteSpline(t, q, qd)(
        stamps[during]))
    assert np.abs(np.diff(q, axis=0)).max() > 0.01                  # it had to move
    assert error.max() < 2e-3 and np.sqrt((error ** 2).mean()) < 2e-4, error.max(axis=0)


def test_lockstep_gives_the_same_motion_on_a_loaded_machine(client, processes):
    """Lockstep: the same trajectory, idle and beside three busy processes, bit for bit."""
    runs = []
    for load in (0, 3):
        runs.append(lockstep_run(client, processes, 1.0, load=load))
    (_, _, _, idle_t, idle_q), (_, _, _, busy_t, busy_q) = runs
    idle, busy = idle_t > 0, busy_t > 0          # the held initial state repeats as time allows
    k = min(idle.sum(), busy.sum())
    assert k > 1000
    np.testing.assert_array_equal(busy_t[busy][:k], idle_t[idle][:k])
    np.testing.assert_array_equal(busy_q[busy][:k], idle_q[idle][:k])
    assert np.abs(np.diff(idle_q[idle][:k], axis=0)).max() > 1e-4    # and it moved


def test_a_trajectory_in_progress_survives_a_simulation_reset(client, processes):
    """
    The plant restarts mid-trajectory (/clock jumps back): the trajectory keeps its place.

    trajectory_node says so once and keeps commanding on the new clock.
    """
    model = md.load_model(ARM, joint_dynamics=DYNAMICS)
    # out over the first 4 s, back over the next: where it had got to differs from a restart
    msg, t, q, qd, qdd = trajectory(model, seconds=8.0, points=41)
    logs = client.listen_log()
    processes('trajectory_node', f'urdf_path:={ARM}', f'joint_dynamics:={DYNAMICS}',
              'use_sim_time:=true')
    sim = ('sim_node', f'initial_positions:=[{", ".join(map(str, q[0]))}]',
           f'joint_dynamics:={DYNAMICS}', 'lockstep:=true')
    first = processes(*sim)
    states = client.listen(JointState, '/joint_states', 100000, sources=True)
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    # the held state heard: this listener is matched before the trajectory starts the loop
    client.wait(lambda: states, 60.0, 'the held state on /joint_states')
    pub.publish(msg)
    client.wait(lambda: states and stamp(states[-1]) >= 1.0, 60.0, '1 s of the trajectory')
    first.stop()
    old = set(client.sources['/joint_states'])
    # the new plant at half real time: DDS may match it with this listener a few seconds late
    # on a busy machine, and its state 1 s in must still be heard
    processes(*sim, 'pace:=0.5')
    last = lambda: last_from_a_new_publisher(client, '/joint_states', old)  # noqa: E731
    client.wait(lambda: last() is not None and stamp(last()) >= 1.0, 60.0,
                '1 s of the loop after the reset')
    client.wait(lambda: any(m.name == 'trajectory_node' and 'jumped back' in m.msg
                            for m in logs), what="trajectory_node's word of the jump")
    client.spin(0.5)
    jumped = [m.msg for m in logs if m.name == 'trajectory_node' and 'jumped back' in m.msg]
    assert len(jumped) == 1, jumped
    new = from_a_new_publisher(client, '/joint_states', old)
    # where the old clock had got to; the state 1 s into the new clock, not the last heard: how
    # long the waits above took (a busy machine) must not move it towards the plan's turning
    # point, where it barely moves
    reset_at = max(stamp(m) for m, s in zip(states, client.sources['/joint_states']) if s in old)
    at = next(m for m in new if stamp(m) >= 1.0)
    hermite = scipy.interpolate.CubicHermiteSpline(t, q, qd)
    # the new arm starts at the old start, and 1 s on it follows the plan where it had got to
    kept, restarted = hermite(reset_at + stamp(at)), hermite(stamp(at))
    assert np.abs(np.array(at.position) - kept).max() < 0.01
    assert np.abs(kept - restarted).max() > 0.05


def test_streamed_commands_are_clamped_to_the_urdf_effort_limits(client, processes, tmp_path):
    """
    Streamed commands are clamped to the URDF effort limits, and only they.

    A joint whose URDF limit is below its gravity torque: commands saturate at the limit, a
    warning names the joint; the other joints and ~/trajectory_with_efforts are not clamped.
    """
    import re
    model = md.load_model(ARM)
    limited = model.joint_names[1]
    with open(ARM) as f:
        urdf = f.read()
    joint = re.search(rf'<joint name="{limited}".*?</joint>', urdf, re.S).group(0)
    path = tmp_path / 'limited.urdf'
    path.write_text(urdf.replace(joint, re.sub(r'effort="[^"]*"', 'effort="5"', joint)))
    node = processes('trajectory_node', UNCHECKED, f'urdf_path:={path}', 'feedback:=false',
                     'rate:=100.0')
    efforts = client.listen(JointTrajectory, '/trajectory_node/trajectory_with_efforts')
    commands = client.listen(Float64MultiArray, COMMANDS, 100)
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher(COMMANDS)
    msg, t, q, qd, qdd = trajectory(model, seconds=1.0, points=6)
    pub.publish(msg)
    client.wait(lambda: efforts and len(commands) > 50, what='efforts and commands')
    tau = np.array([m.data for m in commands])
    j = model.joint_index(limited)
    assert np.abs(tau[:, j]).max() == 5.0                   # saturated, not beyond
    assert np.abs(np.delete(tau, j, axis=1)).max() > 5.0    # the others are not
    planned = np.array([p.effort for p in efforts[0].points])
    np.testing.assert_allclose(planned, md.inverse_dynamics(model, q, qd, qdd, friction=True),
                               rtol=1e-12)                  # the plan's dynamics, unclamped
    code, output = node.stop()
    assert code == 0, output
    assert f'efforts clamped to the URDF limits: {limited}' in output


def test_late_trajectory_starts_from_its_first_point(client, processes):
    """A trajectory arriving after its start stamp starts now, from its first point: echoed."""
    from rclpy.duration import Duration as Delay
    model = md.load_model(ARM)
    processes('trajectory_node', UNCHECKED, f'urdf_path:={ARM}', 'feedback:=false', 'rate:=100.0')
    desired = client.listen(JointTrajectory, '/desired_state', 100)
    echoed = client.listen(JointTrajectory, '/trajectory_node/trajectory_with_efforts')
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher('/desired_state')
    msg, t, q, _, _ = trajectory(model, seconds=2.0, points=5)
    sent = client.node.get_clock().now()
    msg.header.stamp = (sent - Delay(seconds=1.0)).to_msg()
    pub.publish(msg)
    client.wait(lambda: desired and echoed, what='the first desired state and the echo')
    # one second late, it still begins at the first point, not at the point due at 1 s
    np.testing.assert_allclose(desired[0].points[0].positions, q[0], atol=5e-3)
    assert np.abs(np.array(desired[0].points[0].positions) - q[2]).max() > 0.05
    # and the echo says when it started: on arrival, not at the stamp it was sent with
    assert stamp(echoed[0]) >= sent.nanoseconds * 1e-9


def test_unknown_command_joint_from_a_new_model_does_not_stop_the_node(client, processes):
    """command_joints naming a joint the URDF lacks: logged, no commands, the node serves on."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    model = md.load_model(ARM)
    node = processes('trajectory_node', UNCHECKED, 'command_joints:=[joint1, elbow]',
                     'feedback:=false')
    description = client.publisher(String, '/robot_description', QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
        reliability=ReliabilityPolicy.RELIABLE))
    efforts = client.listen(JointTrajectory, '/trajectory_node/trajectory_with_efforts')
    commands = client.listen(Float64MultiArray, COMMANDS)
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    with open(ARM) as f:
        description.publish(String(data=f.read()))
    client.wait_for_subscriber(pub)
    client.wait_for_publisher('/trajectory_node/trajectory_with_efforts')
    client.spin(1.0)                                    # the model arrives from the topic
    pub.publish(trajectory(model, seconds=0.5, points=3)[0])
    client.wait(lambda: efforts, what='trajectory_with_efforts')
    client.spin(0.8)
    assert not commands
    code, output = node.stop()
    assert code == 0 and 'Traceback' not in output, output
    assert 'command_joints: the command order names elbow: not joints of the model' in output


def test_trajectory_node_commands_nothing_before_the_controller_answers(client, processes):
    """
    The safe start holds for trajectory_node too: a running trajectory, no controller, no command.

    For 2 s of a running feed-forward trajectory no controller exists: not one command on the
    topic.  Then the controller starts with the right order, and the commands flow.
    """
    model = md.load_model(ARM)
    processes('trajectory_node', f'urdf_path:={ARM}', 'feedback:=false', 'rate:=100.0')
    desired = client.listen(JointTrajectory, '/desired_state', 100)
    heard = client.listen(Float64MultiArray, COMMANDS, 1000)
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher('/desired_state')
    msg, _, _, _, _ = trajectory(model, seconds=10.0, points=11)
    pub.publish(msg)
    client.wait(lambda: len(desired) > 10, what='the trajectory to run')
    client.spin(2.0)
    assert len(desired) > 100 and not heard          # it runs, and commands nothing
    controller = client.controller(model.joint_names)
    client.wait(lambda: controller.received, what='commands once the controller answered')
