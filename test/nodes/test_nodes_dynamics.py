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

"""dynamics_node and sim_node as real processes, talked to over DDS."""

import os
import re
import signal
import time

from helpers import demo_arm_without_inertial, ERD, erd, PinRobot
import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from rclpy.clock import Clock  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

from rosutil import from_a_new_publisher, last_from_a_new_publisher, stamp  # noqa: E402, I100

COMMANDS = '/effort_controller/commands'
#: the client's plain command topic has no controller to confirm the order: opt out
UNCHECKED = "controller_name:='-'"
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


def state(names, q, qd=None, effort=None, stamp=None):
    msg = JointState()
    msg.name = list(names)
    msg.position = [float(v) for v in q]
    msg.velocity = [] if qd is None else [float(v) for v in qd]
    msg.effort = [] if effort is None else [float(v) for v in effort]
    if stamp is not None:
        msg.header.stamp = stamp.to_msg()
    return msg


@pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed')
def commands_for(client, model, q):
    """
    Listen to the commands and publish joint states at ``q``: ``(command_now, commands, pub)``.

    ``command_now()`` publishes the state (stamped now, at rest) until a command answers it, and
    returns that command.
    """
    commands = client.listen(Float64MultiArray, COMMANDS)
    pub = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher(COMMANDS)
    clock = client.node.get_clock()

    def command_now():
        before = len(commands)
        for _ in range(100):          # best effort: again until one is answered
            pub.publish(state(model.joint_names, q, qd=np.zeros(model.n), stamp=clock.now()))
            client.spin(0.05)
            if len(commands) > before:
                return np.array(commands[-1].data)
        raise AssertionError('no command for the joint state')
    return command_now, commands, pub


def test_gravity_compensation_equals_pinocchio(client, processes):
    """
    Gravity compensation of a real robot equals Pinocchio's gravity torques.

    A real robot (panda), commands for its 7 arm joints in reverse order, another robot's
    joint in the message.
    """
    pin = pytest.importorskip('pinocchio')
    path = erd('panda_description/urdf/panda.urdf')
    model = md.load_model(path)
    order = list(model.joint_names[:7])[::-1]
    # reliable joint_states (the node's option): each state sent once must be answered once
    node = processes('dynamics_node', UNCHECKED, f'urdf_path:={path}',
                     f'command_joints:=[{", ".join(order)}]', 'joint_states_qos:=reliable')
    commands = client.listen(Float64MultiArray, COMMANDS)
    pub = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher(COMMANDS)
    ref = PinRobot(pin, path, model)
    rng = np.random.default_rng(0)
    sent = []
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, model.n)
        q[7:] = rng.uniform(0, 0.04, 2)
        names = list(model.joint_names) + ['other_robot_joint']
        pub.publish(state(names[::-1], np.r_[q, 0.7][::-1], np.zeros(model.n + 1)))
        sent.append(q)
        client.wait(lambda: len(commands) == len(sent), what='an effort command')
    for q, msg in zip(sent, commands):
        expected = ref.gravity(q)[[model.joint_index(j) for j in order]]
        np.testing.assert_allclose(msg.data, expected, rtol=1e-9,
                                   atol=1e-9 * np.abs(expected).max())
        assert len(msg.layout.dim) == 0, 'data only, as forward_command_controller reads it'
    code, output = node.stop()
    assert code == 0 and 'Traceback' not in output


def test_bad_joint_states_are_dropped_and_the_node_keeps_serving(client, processes):
    """
    Each bad state is dropped, and the good one behind it answered: one command each, no other.

    The states are reliable (the node's option), so the node answers every good one.  The
    test's subscription seeing the node's publisher does not prove the node's publisher sees
    the subscription: a command it sends before that is lost (DDS matches each side on its own;
    seen once on a loaded machine, the first good state's command).  An unanswered good state
    is therefore sent again, stamped anew, and the commands of one state sent twice count once.
    """
    model = md.load_model(robots.path('demo_arm'))
    processes('dynamics_node', UNCHECKED, f'urdf_path:={robots.path("demo_arm")}',
              'joint_states_qos:=reliable')        # one command per good state, counted
    commands = client.listen(Float64MultiArray, COMMANDS)
    pub = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher(COMMANDS)
    names = list(model.joint_names)
    clock = client.node.get_clock()

    def answered(q, what):
        """Send the good state ``q`` until a command comes (6 tries, 5 s each)."""
        before = len(commands)
        for _ in range(6):
            pub.publish(state(names, q, stamp=clock.now()))
            try:
                return client.wait(lambda: len(commands) > before, timeout=5.0, what=what)
            except AssertionError:
                continue
        raise AssertionError(f'no command in 30 s for the good state after {what}')
    now = clock.now()
    good = np.full(model.n, 0.2)
    nan = good.copy()
    nan[3] = np.nan
    inf = good.copy()
    inf[1] = np.inf
    from rclpy.duration import Duration
    bad = [
        # a joint missing: stamped, as a driver's are (its joints are merged; unstamped, its
        # receipt time could come after the stamp of the good state sent right behind it)
        state(names[:-1], good[:-1], stamp=now),
        state(names + ['joint1'], np.r_[good, 0.0]),                   # a duplicated name
        state(names, good[:-1]),                                       # 7 names, 6 positions
        state(names, good, qd=np.zeros(3)),                            # 3 velocities
        state(names, nan),                                             # NaN
        state(names, inf),                                             # inf
        state(names, good, stamp=now - Duration(seconds=5.0)),         # stale
        state(['a', 'b'], [0.0, 0.0]),                                 # another robot only
        b'\x00\x01\x00\x00' + bytes(6),                                 # bytes: not a state
    ]
    expected = []
    for k, msg in enumerate(bad):
        pub.publish(msg)
        q = good + 0.01 * k                                            # then a good one
        answered(q, f'bad input {k}')
        expected.append(q)
    # out of order: an older stamp than the last good one
    pub.publish(state(names, good, stamp=now))
    q = good - 0.3
    answered(q, 'out-of-order')
    expected.append(q)
    client.spin(0.3)
    once = [c.data for k, c in enumerate(commands)      # a state sent again: its command once
            if k == 0 or not np.array_equal(c.data, commands[k - 1].data)]
    assert len(once) == len(expected)                      # nothing came from the bad ones
    for q, data in zip(expected, once):
        np.testing.assert_allclose(data, md.gravity_torques(model, q), rtol=1e-12)


def test_joints_merged_across_publishers_each_with_its_own_freshness(client, processes):
    """
    No command until every joint is heard, nor once one goes stale; warnings name the joints.

    An arm driver publishes joints 1-4, a gripper-like driver 5-7.  While only the arm speaks,
    nothing is commanded and the warning names joint5..7; with both, commands follow the merged
    state; when the second one stops, its joints go stale (stale_after 0.3 s) and the commands
    stop again, the warning naming them.
    """
    model = md.load_model(robots.path('demo_arm'))
    processes('dynamics_node', UNCHECKED, f'urdf_path:={robots.path("demo_arm")}',
              'stale_after:=0.3')
    log = client.listen_log()
    commands = client.listen(Float64MultiArray, COMMANDS)
    arm = client.publisher(JointState, '/joint_states')
    gripper = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(arm)
    client.wait_for_subscriber(gripper)
    client.wait_for_publisher(COMMANDS)
    names, q = list(model.joint_names), np.linspace(-0.4, 0.4, model.n)
    clock = client.node.get_clock()

    def send(pub, joints, seconds):
        end = clock.now().nanoseconds + seconds * 1e9
        while clock.now().nanoseconds < end:
            for p, k in zip(pub, joints):
                p.publish(state([names[j] for j in k], q[k], stamp=clock.now()))
            client.spin(0.02)

    first, second = [0, 1, 2, 3], [4, 5, 6]
    send([arm], [first], 1.0)
    assert not commands
    assert any('no joint_states yet for joints joint5, joint6, joint7' in m.msg for m in log)
    send([arm, gripper], [first, second], 1.0)
    assert commands
    np.testing.assert_allclose(commands[-1].data, md.gravity_torques(model, q), rtol=1e-12)
    send([arm], [first], 0.5)                  # the second driver stops: its joints go stale
    count = len(commands)
    send([arm], [first], 0.5)
    assert len(commands) == count
    # the gripper's joints named (a loaded machine may leave the arm's late too, and stale)
    assert any(re.search(r'joint_states of (joint\d, )*joint5, joint6, joint7 is', m.msg)
               and 'stale_after' in m.msg for m in log), [m.msg for m in log]


def test_model_from_robot_description_and_reload(client, processes):
    arm = md.load_model(robots.path('demo_arm'))
    tree = md.load_model(robots.path('demo_arm_gripper'))
    # no URDF: waits for the topic
    processes('dynamics_node', UNCHECKED, 'joint_states_qos:=reliable')
    commands = client.listen(Float64MultiArray, COMMANDS)
    description = client.publisher(String, '/robot_description', LATCHED)
    states = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(states)
    client.wait_for_publisher(COMMANDS)
    names = client.listen(String, '/dynamics_node/joint_names', LATCHED)
    with open(robots.path('demo_arm')) as f:
        description.publish(String(data=f.read()))
    client.wait(lambda: names, what='the model from /robot_description')
    q = np.linspace(0.1, 0.7, arm.n)
    states.publish(state(arm.joint_names, q))
    client.wait(lambda: len(commands) == 1, what='a command')
    np.testing.assert_allclose(commands[-1].data, md.gravity_torques(arm, q), rtol=1e-12)
    description.publish(String(data='<robot name="broken"><link'))   # malformed: kept the arm
    client.spin(0.5)
    states.publish(state(arm.joint_names, q))
    client.wait(lambda: len(commands) == 2, what='a command after a malformed description')
    with open(robots.path('demo_arm_gripper')) as f:
        description.publish(String(data=f.read()))
    client.wait(lambda: len(names) == 2, what='the reloaded model')
    qt = np.r_[q, 0.01, 0.02]
    states.publish(state(tree.joint_names, qt))
    client.wait(lambda: len(commands) == 3, what='a command for the new model')
    assert len(commands[-1].data) == 9
    np.testing.assert_allclose(commands[-1].data, md.gravity_torques(tree, qt), rtol=1e-12)


def test_dynamics_topics(client, processes):
    arm = md.load_model(robots.path('demo_arm'))
    processes('dynamics_node', UNCHECKED, f'urdf_path:={robots.path("demo_arm")}', 'mode:=none',
              'joint_states_qos:=reliable')
    got = {name: client.listen(Float64MultiArray, f'/dynamics_node/{name}')
           for name in ('inertia_matrix', 'bias_forces', 'gravity_torques')}
    fd = client.listen(JointTrajectory, '/dynamics_node/forward_dynamics')
    commands = client.listen(Float64MultiArray, COMMANDS)
    pub = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(pub)
    for name in got:
        client.wait_for_publisher(f'/dynamics_node/{name}')
    client.wait_for_publisher('/dynamics_node/forward_dynamics')
    q, qd, tau = np.linspace(-0.5, 0.5, 7), np.linspace(1, -1, 7), np.linspace(-3, 3, 7)
    sent = []                               # the states' stamps: forward_dynamics' own

    def answered():
        """Send the state again, stamped anew, until every output came: DDS matches late."""
        if all(got.values()) and fd:
            return True
        sent.append(Clock().now())          # an output published before it matched us is lost
        pub.publish(state(arm.joint_names, q, qd, tau, stamp=sent[-1]))
        client.spin(0.2)
        return False
    client.wait(answered, what='the dynamics topics')
    assert (fd[0].header.stamp.sec, fd[0].header.stamp.nanosec) in {
        divmod(t.nanoseconds, 10**9) for t in sent}
    M = got['inertia_matrix'][0]
    assert [d.label for d in M.layout.dim] == ['rows', 'cols']
    np.testing.assert_allclose(np.reshape(M.data, (7, 7)), md.inertia_matrix(arm, q), rtol=1e-12)
    np.testing.assert_allclose(got['bias_forces'][0].data, md.bias_forces(arm, q, qd),
                               rtol=1e-12)
    np.testing.assert_allclose(got['gravity_torques'][0].data, md.gravity_torques(arm, q),
                               rtol=1e-12)
    point = fd[0].points[0]
    assert list(fd[0].joint_names) == list(arm.joint_names)
    np.testing.assert_allclose(point.accelerations, md.forward_dynamics(arm, q, qd, tau),
                               rtol=1e-10)
    assert not commands                                          # mode none: no commands


def test_rejected_parameters_change_nothing(client, processes):
    """
    Each invalid change is rejected with a reason naming it, and the commands go on as before.

    rclpy calls on-set callbacks newest first: a node that applied changes in one of them applied
    ``rate := -5`` (and stopped commanding: the arm would drop) before its validator said no.
    """
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter
    model = md.load_model(robots.path('demo_arm'))
    processes('dynamics_node', UNCHECKED, f'urdf_path:={robots.path("demo_arm")}')
    q = np.linspace(-0.5, 0.5, model.n)
    command_now, commands, pub = commands_for(client, model, q)
    service = client.node.create_client(SetParameters, '/dynamics_node/set_parameters')
    clock = client.node.get_clock()

    first = command_now()
    np.testing.assert_allclose(first, md.gravity_torques(model, q), rtol=1e-12)
    for name, value, reason in [('mode', 'fast', 'must be one of'),
                                ('rate', -5.0, 'out of range'),
                                ('rate', float('nan'), 'rate'),
                                ('outputs', ['inertia_matrix', 'jacobian'], 'unknown: jacobian'),
                                ('command_joints', ['joint1', 'elbow'], 'names elbow: not '
                                 'joints of the model'),
                                ('command_joints', ['joint1', 'joint1'], 'names joint1 more '
                                 'than once'),
                                ('command_topic', 'elsewhere', 'read-only'),
                                ('mode', 3, 'type')]:
        param = Parameter(name, value=value).to_parameter_msg()
        result = client.call(service, SetParameters.Request(parameters=[param])).results[0]
        assert not result.successful and reason in result.reason, (name, value, result.reason)
        np.testing.assert_array_equal(command_now(), first)       # unchanged, still flowing
    # an accepted change does apply (the post-set step): commands stop in mode none
    param = Parameter('mode', value='none').to_parameter_msg()
    assert client.call(service, SetParameters.Request(parameters=[param])).results[0].successful
    count = len(commands)
    pub.publish(state(model.joint_names, q, qd=np.zeros(model.n), stamp=clock.now()))
    client.spin(0.5)
    assert len(commands) == count


def feed(client, pub, names, q, seconds):
    """Publish joint states at ``q`` at about 100 Hz for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pub.publish(state(names, q))
        client.spin(0.01)


def logged(log, text):
    """Return the /rosout records of ``log`` that contain ``text``."""
    return [m for m in log if text in m.msg]


def wait_logged(client, log, text, timeout=30.0):
    """Wait for a /rosout record containing ``text``: /rosout may come after the fact it says."""
    client.wait(lambda: logged(log, text), timeout, f'the log line {text!r}')


def test_no_command_before_the_controller_answers(client, processes):
    """
    The safe start: a controller that has not answered (yet) for its ``joints`` gets nothing.

    For 3 s after the model is ready no controller exists (one that never answers): not one
    command on the topic, counted by a plain listener, and a warning says what the node waits
    for.  Then the controller starts, late, with the right order: the commands flow.
    """
    model = md.load_model(robots.path('demo_arm'))
    processes('dynamics_node', f'urdf_path:={robots.path("demo_arm")}')
    log = client.listen_log()
    heard = client.listen(Float64MultiArray, COMMANDS, 1000)
    names = client.listen(String, '/dynamics_node/joint_names', LATCHED)
    pub = client.publisher(JointState, '/joint_states')
    client.wait(lambda: names, timeout=60, what='the model to be ready')
    client.wait_for_subscriber(pub)
    q = np.full(model.n, 0.3)
    feed(client, pub, model.joint_names, q, 3.0)
    assert len(heard) == 0
    wait_logged(client, log,
                "waiting for controller /effort_controller to answer for its 'joints'")
    controller = client.controller(model.joint_names)
    client.wait(lambda: controller.received or pub.publish(state(model.joint_names, q)),
                timeout=30, what='commands once the controller answered')
    np.testing.assert_allclose(controller.received[-1].data, md.gravity_torques(model, q),
                               rtol=1e-12)
    wait_logged(client, log, 'command order matches controller /effort_controller')


@pytest.mark.parametrize('case', ['reversed', 'one joint short'])
def test_a_controller_of_another_order_or_size_gets_nothing_until_fixed(
        client, processes, case):
    """
    A controller whose ``joints`` differ (order or size) gets no command until they are fixed.

    The error names both orders; ``command_joints`` set to the controller's order (for the
    reversed one) then lets the commands go, in that order.
    """
    from rcl_interfaces.msg import Log
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter
    model = md.load_model(robots.path('demo_arm'))
    joints = list(model.joint_names)[::-1] if case == 'reversed' else \
        list(model.joint_names)[:-1]
    controller = client.controller(joints)
    node = processes('dynamics_node', f'urdf_path:={robots.path("demo_arm")}')
    log = client.listen_log()
    heard = client.listen(Float64MultiArray, COMMANDS, 1000)
    pub = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(pub)
    client.wait(lambda: logged(log, 'no commands until'), timeout=60,
                what='the order mismatch to be reported')
    q = np.full(model.n, 0.2)
    feed(client, pub, model.joint_names, q, 1.5)
    assert not heard and not controller.received                # nothing while they differ
    error = logged(log, 'no commands until')[0]
    assert error.level == Log.ERROR[0] if isinstance(Log.ERROR, bytes) else Log.ERROR
    assert f"[{', '.join(joints)}]" in error.msg
    assert f"[{', '.join(model.joint_names)}]" in error.msg
    if case == 'reversed':
        service = client.node.create_client(SetParameters, '/dynamics_node/set_parameters')
        fix = Parameter('command_joints', value=joints)
        request = SetParameters.Request(parameters=[fix.to_parameter_msg()])
        assert client.call(service, request).results[0].successful
        client.wait(lambda: controller.received or pub.publish(state(model.joint_names, q)),
                    timeout=30, what='commands once command_joints is fixed')
        np.testing.assert_allclose(controller.received[-1].data,
                                   md.gravity_torques(model, q)[::-1], rtol=1e-12)
    code, output = node.stop()
    assert code == 0, output


def test_a_restarted_controller_is_asked_again(client, processes):
    """
    A controller that restarts with another order gets nothing; restarted right, it does.

    The new controller's subscription is counted before every command, so not one command
    reaches it before its answer: a controller restarted with its joints reversed (a changed
    configuration) receives nothing, and commands stop everywhere within one question.
    """
    model = md.load_model(robots.path('demo_arm'))
    first = client.controller(model.joint_names)
    processes('dynamics_node', f'urdf_path:={robots.path("demo_arm")}')
    log = client.listen_log()
    heard = client.listen(Float64MultiArray, COMMANDS, 1000)
    pub = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(pub)
    q = np.full(model.n, -0.2)
    client.wait(lambda: first.received or pub.publish(state(model.joint_names, q)),
                timeout=60, what='commands to the first controller')
    client.remove(first)
    wrong = client.controller(list(model.joint_names)[::-1])
    feed(client, pub, model.joint_names, q, 2.0)
    assert not wrong.received
    wait_logged(client, log, 'no commands until')
    count = len(heard)
    feed(client, pub, model.joint_names, q, 1.0)
    assert len(heard) == count                                   # stopped, not only for it
    client.remove(wrong)
    right = client.controller(model.joint_names)
    client.wait(lambda: right.received or pub.publish(state(model.joint_names, q)),
                timeout=30, what='commands to the controller restarted right')
    np.testing.assert_allclose(right.received[-1].data, md.gravity_torques(model, q),
                               rtol=1e-12)


def test_a_new_robot_description_is_checked_against_the_controller_again(client, processes):
    """
    A new model on ``robot_description`` is a new command order, confirmed before any command.

    The controller keeps the old robot's joints: not one command for the new robot.
    """
    arm, gripper = (md.load_model(robots.path(n)) for n in ('demo_arm', 'demo_arm_gripper'))
    assert list(gripper.joint_names) != list(arm.joint_names)
    controller = client.controller(arm.joint_names)
    processes('dynamics_node')                    # the model from the robot_description topic
    log = client.listen_log()
    description = client.publisher(String, '/robot_description', LATCHED)
    names = client.listen(String, '/dynamics_node/joint_names', LATCHED)
    description.publish(String(data=open(robots.path('demo_arm')).read()))
    pub = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(pub)
    q = np.full(gripper.n, 0.1)
    client.wait(lambda: controller.received or pub.publish(state(gripper.joint_names, q)),
                timeout=60, what='commands for the first robot')
    description.publish(String(data=open(robots.path('demo_arm_gripper')).read()))
    client.wait(lambda: names and names[-1].data.count(',') + 1 == gripper.n, timeout=30,
                what='the new model')
    client.spin(0.2)                              # what was under way before the new model
    count = len(controller.received)
    feed(client, pub, gripper.joint_names, q, 2.0)
    assert len(controller.received) == count
    wait_logged(client, log, 'no commands until')


def _has_events_executor():
    try:
        from rclpy.experimental import EventsExecutor  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize('executor', [
    pytest.param('events', marks=pytest.mark.skipif(
        not _has_events_executor(), reason='this rclpy has no rclpy.experimental.EventsExecutor '
        '(Kilted on); the nodes run on the SingleThreadedExecutor')),
    'single'])
def test_each_executor_serves_reports_its_latency_and_stops_cleanly(client, processes, executor):
    """
    Under either executor (MANIPULATOR_DYNAMICS_EXECUTOR): gravity torques answered, latency.

    The DDS receipt time reaches the callback, however the executor calls it, parameters are
    served, and Ctrl-C ends it with exit code 0.
    """
    from rcl_interfaces.srv import GetParameters
    from std_msgs.msg import Float64
    from manipulator_dynamics.nodes.process import EXECUTOR_VARIABLE
    model = md.load_model(robots.path('demo_arm'))
    node = processes('dynamics_node', UNCHECKED, f'urdf_path:={robots.path("demo_arm")}',
                     'report_latency:=true', env={EXECUTOR_VARIABLE: executor})
    latency = client.listen(Float64, '/dynamics_node/command_latency')
    q = np.linspace(-0.4, 0.6, model.n)
    command_now = commands_for(client, model, q)[0]
    np.testing.assert_allclose(command_now(), md.gravity_torques(model, q), atol=1e-9)
    client.wait(lambda: latency, what='a latency report')
    assert 0 < latency[-1].data < 1000, latency[-1].data          # ms
    service = client.node.create_client(GetParameters, '/dynamics_node/get_parameters')
    reply = client.call(service, GetParameters.Request(names=['mode']))
    assert reply.values[0].string_value == 'gravity_compensation'
    code, output = node.stop(signal.SIGINT)
    assert code == 0 and 'Traceback' not in output, output


@pytest.mark.parametrize('executor', [
    pytest.param('events', marks=pytest.mark.skipif(
        not _has_events_executor(), reason='this rclpy has no rclpy.experimental.EventsExecutor '
        '(Kilted on): nothing to run on it')),
    'single'])
@pytest.mark.parametrize('raw', [False, True])
def test_the_message_info_reaches_the_callback_under_each_executor(executor, raw):
    """
    ``with_receipt_time``: the message and its DDS info, each executor calling in its own way.

    rclpy 9's EventsExecutor calls a callback that takes the info with one tuple; the time the
    callback started stood in there before, and put rclpy's take and conversion of the message
    outside the latency a node reports.  The info is the middleware's: the publication's
    sequence number and a receipt no earlier than the publication.
    """
    from manipulator_dynamics.nodes.process import make_executor, with_receipt_time
    import rclpy
    from rclpy.serialization import deserialize_message
    context = rclpy.Context()
    rclpy.init(context=context)
    heard = []
    try:
        node = rclpy.create_node('receipt', context=context)
        node.create_subscription(JointState, 'receipt_states',
                                 with_receipt_time(lambda m, info: heard.append((m, info))), 10,
                                 raw=raw)
        pub = node.create_publisher(JointState, 'receipt_states', 10)
        executor = make_executor(executor, context=context)
        executor.add_node(node)
        published = []
        deadline = time.monotonic() + 30
        while len(heard) < 3 and time.monotonic() < deadline:
            published.append(time.time_ns())
            pub.publish(JointState(name=['a'], position=[float(len(published))]))
            executor.spin_once(timeout_sec=0.05)
        executor.shutdown()
    finally:
        rclpy.try_shutdown(context=context)
    assert len(heard) >= 3, f'{len(heard)} of {len(published)} states heard'
    for msg, info in heard:
        state = deserialize_message(msg, JointState) if raw else msg
        k = int(state.position[0])
        assert info['publication_sequence_number'] == k, (k, info)
        assert published[k - 1] <= info['received_timestamp'] <= time.time_ns(), (k, info)


@pytest.mark.skipif(not _has_events_executor(), reason='this rclpy has no '
                    'rclpy.experimental.EventsExecutor (Kilted on): nothing to make')
def test_the_events_executor_is_made_where_stderr_is_no_file(monkeypatch):
    """
    A notebook, an IDE or pytest's capsys holds stderr in memory: the executor is made anyway.

    rclpy's EventsExecutor enables faulthandler on sys.stderr as it is made and failed there
    (io.UnsupportedOperation: fileno); the demos' loop, run in such a process, stopped at start
    and left its node processes running.  The stderr in memory is given back afterwards.
    """
    import io
    import sys
    from manipulator_dynamics.nodes.process import make_executor
    import rclpy
    from rclpy.impl.implementation_singleton import rclpy_implementation
    in_memory = io.StringIO()
    monkeypatch.setattr(sys, 'stderr', in_memory)
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        executor = make_executor('events', context=context)
        assert isinstance(executor, rclpy_implementation.EventsExecutor)
        executor.shutdown()
    finally:
        rclpy.try_shutdown(context=context)
    assert sys.stderr is in_memory


def test_an_unknown_executor_is_refused_by_name(processes):
    from manipulator_dynamics.nodes.process import EXECUTOR_VARIABLE
    node = processes('dynamics_node', f'urdf_path:={robots.path("demo_arm")}',
                     env={EXECUTOR_VARIABLE: 'multi'})
    code, output = node.wait(timeout=60)
    assert code == 2, output
    assert f"{EXECUTOR_VARIABLE}='multi': the executor is one of events, single" in output, output
    assert 'Traceback' not in output, output


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_clean_shutdown(client, processes, sig):
    node = processes('dynamics_node', UNCHECKED, f'urdf_path:={robots.path("demo_arm")}')
    names = client.listen(String, '/dynamics_node/joint_names', LATCHED)
    client.wait(lambda: names, what='the node to start')
    code, output = node.stop(sig)
    assert code == 0, output
    assert 'Traceback' not in output


def test_a_stop_in_the_middle_of_the_loop_says_nothing_of_a_failed_callback(client, processes):
    """
    SIGINT while the lockstep loop turns as fast as it can: both nodes end quietly, exit code 0.

    Every callback is then in flight when the signal lands.  rclpy's own signal handler shut the
    context down at once, under the callback: its publish failed, and the executor logged a
    FATAL "Exception in 'subscriptions' callback ... context is invalid" on a plain stop.
    """
    states = client.listen(JointState, '/joint_states', 10)
    sim = processes('sim_node', 'lockstep:=true', 'friction:=false')
    client.wait(lambda: states, 60.0, 'the held state on /joint_states')
    node = processes('dynamics_node', f'urdf_path:={robots.path("demo_arm")}',
                     'use_sim_time:=true')
    client.wait(lambda: states and stamp(states[-1]) >= 0.5, 60.0, 'the loop to turn')
    for stopped in (sim, node):
        code, output = stopped.stop(signal.SIGINT)
        assert code == 0, output
        for said in ('FATAL', 'Exception in', 'context is invalid', 'Traceback'):
            assert said not in output, output


@pytest.mark.parametrize('executable', ['dynamics_node', 'sim_node', 'base_params_node'])
def test_two_interrupts_end_a_node_cleanly(client, processes, executable):
    """
    A terminal's Ctrl-C and launch's own SIGINT, 20 ms apart: exit code 0, no traceback.

    The second one used to land in ``destroy_node`` (KeyboardInterrupt) or in Python's exit,
    after it had put the default handler back (killed, exit code -2).
    """
    import time
    node = processes(executable, f'urdf_path:={robots.path("demo_arm")}')
    # serving: sim_node publishes states, the others log their model
    heard = client.listen(JointState, '/joint_states', 10) if executable == 'sim_node' else \
        client.listen_log()

    def ready():
        return any(isinstance(m, JointState) or m.name == executable for m in heard)
    client.wait(ready, timeout=60, what=f'{executable} to serve')
    client.spin(0.5)
    node.popen.send_signal(signal.SIGINT)
    time.sleep(0.02)
    code, output = node.stop(signal.SIGINT)
    assert code == 0, output
    assert 'Traceback' not in output and 'KeyboardInterrupt' not in output, output


def loading(pid, timeout=120.0):
    """
    Wait until process ``pid`` has mapped numpy's extension: its own code runs, it is loading.

    The console script imports numpy only after it has installed its quiet handling
    (nodes/entry.py).  Before that the interpreter itself is starting: a SIGINT there, while
    ``site`` still reads the venv's .pth files, is Python's "Fatal Python error:
    init_import_site" in any program (CI's busy machine was still there 0.1 s in).
    """
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(f'/proc/{pid}/maps') as maps:
                if '_multiarray_umath' in maps.read():
                    return
        except FileNotFoundError:
            return                                         # it has ended: stop() tells how
        time.sleep(0.005)
    raise AssertionError(f'process {pid} did not start loading in {timeout:g} s')


@pytest.mark.skipif(not os.path.isdir('/proc/self'), reason='needs /proc to see a process load')
@pytest.mark.parametrize('after', [0.0, 0.3, 0.7])
@pytest.mark.parametrize('program', ['dynamics_node', 'send_trajectory'])
def test_interrupts_while_a_node_starts_end_it_cleanly(processes, program, after):
    """
    Ctrl-C (twice) while a node still imports or loads its model: exit 0, no traceback.

    Before its own handling is installed, a console script makes SIGINT leave quietly
    (nodes/entry.py); the second signal must not find Python's default handler back either.
    The first signal comes ``after`` seconds into the node's loading (numpy, numba, rclpy, the
    model), not into the interpreter's own start, which no program's code can guard.  The
    one-shot sender of trajectories starts the same way as the nodes.
    """
    import time
    params = [UNCHECKED] if program == 'dynamics_node' else []
    node = processes(program, *params, f'urdf_path:={robots.path("demo_arm")}')
    loading(node.popen.pid)
    time.sleep(after)
    node.popen.send_signal(signal.SIGINT)
    time.sleep(0.02)
    code, output = node.stop(signal.SIGINT)
    assert code == 0, output
    assert 'Traceback' not in output and 'KeyboardInterrupt' not in output, output


def test_a_half_built_objects_finaliser_is_quiet_only_once_a_stop_was_asked():
    """
    An interrupted constructor's ``__del__`` fails on a missing attribute: quiet while stopping.

    Found at 0.8 s into a start-up on a busy machine: the signal cut llvmlite's ``ObjectRef``
    (numba loading) half-built, and its finaliser printed a traceback.  Any class, not only the
    ones seen so far; the same complaint while the node serves, and any other, is passed on.
    """
    import types
    from manipulator_dynamics.nodes.process import quiet_unraisable

    class HalfBuilt:

        def __del__(self):
            pass

    def complaint(exc):
        return types.SimpleNamespace(exc_value=exc, object=HalfBuilt.__del__)
    heard = []
    for stopping, exc, kept in [(True, AttributeError('_as_parameter_'), False),
                                (False, AttributeError('_as_parameter_'), True),
                                (True, KeyboardInterrupt(), False),
                                (False, KeyboardInterrupt(), False),
                                (True, ValueError('a real fault'), True)]:
        heard.clear()
        quiet_unraisable(complaint(exc), default=heard.append, stopping=lambda: stopping)
        assert bool(heard) == kept, (stopping, exc)


#: The start of a program for :func:`run_python` whose ``interrupt_me()`` sends its own process a
#: SIGINT and waits for the handler, in Python (short sleeps, not one long call): the signal may
#: reach the process on a DDS thread, and Python runs its handler only between bytecodes of the
#: main thread, so on a loaded machine it could otherwise come after the code under test.
INTERRUPT_ME = (
    'import os, signal, time\n'
    'from manipulator_dynamics.nodes import process\n'
    'def interrupt_me():\n'
    '    os.kill(os.getpid(), signal.SIGINT)\n'
    '    deadline = time.monotonic() + 30\n'
    '    while time.monotonic() < deadline:\n'
    '        time.sleep(0.001)\n')


def run_python(script):
    """Run ``script`` in a new interpreter; return its ``subprocess.CompletedProcess``."""
    import subprocess
    import sys
    return subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize('catcher', ['BaseException', 'SystemExit'])
def test_an_early_interrupt_cannot_be_caught_or_converted(catcher):
    """
    A signal before the node's own handling ends the process even inside code that catches it.

    CI once sent the Ctrl-C while rclpy's C extension was being imported: the SystemExit the
    handler raised came out as "ImportError: initialization failed" with a traceback and exit 1.
    Code that catches the exception stands in here for the C import (which cannot be timed):
    the process must end there, with code 0 and nothing printed.
    """
    run = run_python(
        'import os, signal, time\n'
        'from manipulator_dynamics.nodes import entry\n'
        'entry.quiet_until_ready()\n'
        'try:\n'
        '    os.kill(os.getpid(), signal.SIGINT)\n'
        '    time.sleep(2)\n'
        f'except {catcher} as e:\n'
        '    raise ImportError("initialization failed") from e\n'
        'print("the node went on")\n')
    assert (run.returncode, run.stdout, run.stderr) == (0, '', '')


@pytest.mark.parametrize('signalled', [True, False])
def test_a_start_up_cut_by_a_signal_ends_quietly_whatever_error_it_ends_with(signalled):
    """
    SIGINT while a node is built, inside code that turns the interrupt into its own error: exit 0.

    CI sent it while dynamics_node imported trimesh (through yourdfpy), which catches
    BaseException around an import and then fails with a TypeError on what it kept.  A node whose
    constructor does the same stands in for it (the import cannot be timed).  Without the signal,
    the same error is the node's own fault: it must still come out, with its traceback.
    """
    run = run_python(INTERRUPT_ME + (
        'class Node:\n'
        '    def __init__(self):\n'
        '        try:\n'
        f'            if {signalled}:\n'
        '                interrupt_me()\n'
        '        except BaseException as e:\n'
        '            kept = e\n'
        '        raise TypeError("unsupported operand type(s) for |")\n'
        'process.spin(Node)\n'
        'print("ended")\n'))
    if signalled:
        assert (run.returncode, run.stdout, run.stderr) == (0, 'ended\n', '')
    else:
        assert run.returncode == 1 and 'TypeError: unsupported operand' in run.stderr, run.stderr


def test_a_stop_signal_inside_a_finaliser_is_honoured_quietly():
    """
    SIGINT while the garbage collector runs a ``__del__`` during start-up: no complaint, no loss.

    CI once sent it while a ZipFile was being finalised: Python swallowed the handler's
    KeyboardInterrupt there and printed "Exception ignored in ... Traceback"; the node must
    still know it was asked to stop (``requested``) and stop when it would start serving.
    """
    run = run_python(INTERRUPT_ME + (
        'stop = process.ros_init()\n'
        'class Finaliser:\n'
        '    def __del__(self):\n'
        '        interrupt_me()\n'
        'Finaliser()\n'
        'print("requested" if stop.requested else "lost")\n'
        'process.shut_down(None)\n'))
    assert (run.returncode, run.stdout, run.stderr) == (0, 'requested\n', '')


def test_a_stop_signal_inside_rclpy_init_ends_the_process_quietly():
    """
    SIGINT while ``rclpy.init`` runs: exit code 0, no traceback, rclpy shut down.

    The suite once sent it while rclpy configured its logging: the handler's KeyboardInterrupt
    came out of ``ros_init``, before the node's ``try``, as a traceback and exit code -2.
    """
    run = run_python(INTERRUPT_ME + (
        'import rclpy\n'
        'initialise = rclpy.init\n'
        'def init(*args, **kw):\n'
        '    initialise(*args, **kw)\n'
        '    interrupt_me()\n'
        'rclpy.init = init\n'
        'try:\n'
        '    process.ros_init()\n'
        'finally:\n'
        '    print("initialised" if rclpy.ok() else "shut down")\n'
        'print("not reached")\n'))
    assert (run.returncode, run.stdout, run.stderr) == (0, 'shut down\n', '')


@pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed')
def test_a_hand_not_mounted_is_left_out_of_the_commands(client, processes):
    """``without_links:=[panda_hand]``: the panda's gravity torques without its hand's 0.73 kg."""
    path = erd('panda_description/urdf/panda.urdf')
    model = md.load_model(path, without_links=['panda_hand'])
    processes('dynamics_node', UNCHECKED, f'urdf_path:={path}', 'without_links:=[panda_hand]')
    q = np.array([0.1, -0.4, 0.2, -2.0, 0.3, 1.6, 0.5])
    command_now = commands_for(client, model, q)[0]
    np.testing.assert_allclose(command_now(), md.gravity_torques(model, q), rtol=1e-12)
    with_hand = md.gravity_torques(md.load_model(path), np.r_[q, 0.0, 0.0])[:7]
    assert np.abs(with_hand - md.gravity_torques(model, q)).max() > 0.5       # N m


def test_gravity_compensation_follows_the_payload_set_while_it_runs(client, processes):
    """
    ``payload_link`` / ``payload`` set at run time (``ros2 param set``): the commands follow.

    The object the gripper picks up (on the gripper's tool frame: a fixed link), then a bad
    payload of each kind rejected with its reason and the commands unchanged, then the object
    put down (mass 0).
    """
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter
    path = robots.path('demo_arm_gripper')
    model = md.load_model(path)
    processes('dynamics_node', UNCHECKED, f'urdf_path:={path}')
    q = np.r_[np.linspace(-0.5, 0.5, 7), 0.01, 0.01]
    command_now = commands_for(client, model, q)[0]
    service = client.node.create_client(SetParameters, '/dynamics_node/set_parameters')

    def set_param(name, value):
        param = Parameter(name, value=value).to_parameter_msg()
        return client.call(service, SetParameters.Request(parameters=[param])).results[0]

    np.testing.assert_allclose(command_now(), md.gravity_torques(model, q), rtol=1e-12)
    assert set_param('payload_link', 'tool0').successful
    assert set_param('payload', [1.5, 0.0, 0.02, 0.05]).successful
    held = model.with_payload('tool0', 1.5, [0.0, 0.02, 0.05])
    client.spin(0.2)
    np.testing.assert_allclose(command_now(), md.gravity_torques(held, q), rtol=1e-12)
    for name, value, reason in [('payload_link', 'nolink', "'nolink' is not a link"),
                                ('payload', [-1.0, 0.0, 0.0, 0.0], 'mass must be'),
                                ('payload', [1.0, 0.0], 'needs 1, 4 or 10 numbers'),
                                ('payload', [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 3.0],
                                 'principal moments')]:
        result = set_param(name, value)
        assert not result.successful and reason in result.reason, (name, value, result.reason)
        np.testing.assert_allclose(command_now(), md.gravity_torques(held, q), rtol=1e-12)
    assert set_param('payload', [0.0]).successful
    client.spin(0.2)
    np.testing.assert_allclose(command_now(), md.gravity_torques(model, q), rtol=1e-12)


@pytest.mark.parametrize('engine, seconds', [('mujoco', 10), ('internal', 3)])
def test_simulated_arm_held_by_gravity_compensation(client, processes, engine, seconds):
    """
    sim_node (lockstep) + dynamics_node over DDS: gravity compensation holds a frictionless arm.

    Without friction nothing else holds it: a 0.1 % error in g(q) would drift by centiradians
    in 10 s (3 on the package's own plant, which is its own model), and so would a single step
    with a wrong effort.  In lockstep every step
    waits for the command of the state before it, so the result does not depend on the load
    of the machine.  With MuJoCo the plant is not the package's model: this is MuJoCo's g(q)
    met by the package's.
    """
    q0 = [0.0, 0.6, 0.3, -0.9, 0.2, 0.7, 0.1]
    states = client.listen(JointState, '/joint_states', 100000)
    processes('sim_node', f'initial_positions:=[{", ".join(map(str, q0))}]', 'lockstep:=true',
              'friction:=false', f'engine:={engine}')
    # the held state heard before the loop can start: no step is lost to discovery
    client.wait(lambda: states, 60.0, 'the held state on /joint_states')
    processes('dynamics_node', f'urdf_path:={robots.path("demo_arm")}', 'use_sim_time:=true')
    client.wait(lambda: states and states[-1].header.stamp.sec >= seconds, 120.0,
                f'{seconds} s of the lockstep loop')
    stepped = [m for m in states if m.header.stamp.sec or m.header.stamp.nanosec]
    assert len(stepped) >= 1000 * seconds                          # every step
    drift = np.abs(np.array([m.position for m in stepped]) - q0).max()
    assert drift < 1e-6, drift                                     # rad


def test_a_simulation_reset_needs_no_node_restart(client, processes):
    """
    A plant restart (its /clock jumps back, as a Gazebo or MuJoCo reset does): no node restart.

    dynamics_node says so once, forgets the joint states of the old clock and holds the new arm
    at once.
    """
    q0 = [0.0, 0.6, 0.3, -0.9, 0.2, 0.7, 0.1]
    logs = client.listen_log()
    sim = ('sim_node', f'initial_positions:=[{", ".join(map(str, q0))}]', 'lockstep:=true',
           'friction:=false')
    states = client.listen(JointState, '/joint_states', 100000, sources=True)
    first = processes(*sim)
    client.wait(lambda: states, 60.0, 'the held state on /joint_states')
    processes('dynamics_node', f'urdf_path:={robots.path("demo_arm")}', 'use_sim_time:=true')
    client.wait(lambda: states and states[-1].header.stamp.sec >= 2, 60.0, '2 s of the loop')
    first.stop()
    old = set(client.sources['/joint_states'])
    processes(*sim)
    last = lambda: last_from_a_new_publisher(client, '/joint_states', old)  # noqa: E731
    client.wait(lambda: last() is not None and stamp(last()) >= 1.0, 60.0,
                '1 s of the loop after the reset')
    client.wait(lambda: any(m.name == 'dynamics_node' and 'jumped back' in m.msg
                            for m in logs), what="dynamics_node's word of the jump")
    client.spin(0.5)
    after = [m for m in from_a_new_publisher(client, '/joint_states', old)
             if m.header.stamp.sec or m.header.stamp.nanosec]
    # the loop closed again at once: a lockstep plant left without commands steps on after
    # lockstep_timeout with zero effort, and the arm falls (the new plant's first steps may go
    # by before DDS matches it with this listener: they are not counted)
    assert stamp(after[-1]) >= 1.0 and np.all(np.diff([stamp(m) for m in after]) > 0)
    assert np.abs(np.array([m.position for m in after]) - q0).max() < 1e-6
    jumped = [m.msg for m in logs if m.name == 'dynamics_node' and 'jumped back' in m.msg]
    assert len(jumped) == 1 and 'a simulation reset' in jumped[0], jumped


def test_bad_commands_are_dropped_by_the_sim_with_a_reason(client, processes):
    """
    Bad commands are dropped by sim_node, with the reason, and good ones applied after.

    A command of the wrong length or with a NaN is logged (to /rosout too) and dropped, the arm
    keeps its last good effort, and a good command afterwards is applied.
    """
    from rcl_interfaces.msg import Log
    model = md.load_model(robots.path('demo_arm'))
    sim = processes('sim_node', 'wait_for_command:=true', 'command_timeout:=30.0')
    states = client.listen(JointState, '/joint_states', 100)
    logs = client.listen_log()
    pub = client.publisher(Float64MultiArray, COMMANDS)
    client.wait_for_subscriber(pub)
    client.wait_for_publisher('/joint_states')
    first = np.linspace(0.1, 0.7, model.n)
    pub.publish(Float64MultiArray(data=first.tolist()))
    client.wait(lambda: states and np.allclose(states[-1].effort, first), what='the first effort')
    nan = first.copy()
    nan[3] = np.nan
    for bad in (first[:3], nan):
        pub.publish(Float64MultiArray(data=bad.tolist()))
    client.wait(lambda: sum("effort of 'joint4' is nan" in m.msg for m in logs) == 1,
                what='the warning on /rosout')
    client.spin(0.2)
    np.testing.assert_array_equal(states[-1].effort, first)      # both dropped
    second = -first
    pub.publish(Float64MultiArray(data=second.tolist()))
    client.wait(lambda: np.allclose(states[-1].effort, second), what='the good effort')
    record = next(m for m in logs if "effort of 'joint4'" in m.msg)
    assert (record.name, record.level, record.function) == ('sim_node', Log.WARN, '_on_command')
    assert record.file.endswith('sim_node.py') and record.line > 0
    code, output = sim.stop()
    assert code == 0 and 'Traceback' not in output, output
    assert 'command dropped: needs 7 efforts, got 3' in output
    assert "command dropped: effort of 'joint4' is nan" in output


def test_invalid_start_parameter_stops_the_node_with_a_reason(processes):
    node = processes('dynamics_node', UNCHECKED, f'urdf_path:={robots.path("demo_arm")}',
                     'mode:=fast')
    code, output = node.wait()
    assert code == 2, output
    assert 'not started: parameter mode: must be one of' in output
    assert 'Traceback' not in output


@pytest.mark.parametrize('params, reason', [
    (['rate:=0.0'], 'parameter rate: must be within [1, 100000], got 0.0'),
    (['publish_every:=0'], 'parameter publish_every: must be within [1, 1000], got 0'),
    (['command_timeout:=nan'], 'parameter command_timeout: must be within [0, 3600], got nan'),
    (['publish_every:=4', 'max_catch_up:=3'],
     'parameter max_catch_up: must be at least publish_every (4), got 3'),
    (['timestep:=0.0003'], 'parameter timestep: must divide the step 1 / rate = 0.001 s, '
     'got 0.0003 s'),
    (['engine:=bullet'], 'parameter engine: must be one of auto, mujoco, internal'),
    (['integrator:=rk45'], 'parameter integrator: must be one of auto, rk4, implicitfast'),
    (['engine:=internal', 'integrator:=euler'],
     "parameter engine: engine 'internal' integrates with rk4 only, not euler"),
    # the obstacle: a box of three edges, and only where there are contacts
    (['obstacle_size:=[0.1, 0.1]'], 'parameter obstacle_size: needs 3 finite numbers, got '
     '[0.1, 0.1]'),
    (['engine:=internal', 'obstacle_size:=[0.1, 0.1, 0.1]'],
     "parameter engine: engine 'internal' has no contacts: a cell (an obstacle) needs engine "
     'mujoco'),
    # the nodes' one check of a command order: unknown joints, and a joint named twice
    (['command_joints:=[joint1, elbow]'], 'parameter command_joints: the command order names '
     'elbow: not joints of the model'),
    (['command_joints:=[joint1, joint1]'], 'parameter command_joints: the command order names '
     'joint1 more than once'),
])
def test_invalid_sim_parameters_stop_the_sim_with_a_reason(processes, params, reason):
    code, output = processes('sim_node', *params).wait()
    assert code == 2, output
    assert f'not started: {reason}' in output
    assert 'Traceback' not in output


def write_without_inertial(tmp_path, *links):
    """Write the demo arm with the <inertial> of ``links`` removed; return the file's path."""
    path = tmp_path / 'arm.urdf'
    path.write_text(demo_arm_without_inertial(*links))
    return str(path)


def test_sim_node_simulates_a_massless_link_between_joints_and_logs_it(client, processes,
                                                                       tmp_path):
    """The least mass given a link MuJoCo refuses is said in the node's log (/rosout)."""
    pytest.importorskip('mujoco', reason="the floor is the MuJoCo engine's: pip install mujoco")
    from rcl_interfaces.msg import Log
    log = client.listen_log()
    states = client.listen(JointState, '/joint_states', 10)
    processes('sim_node', f'urdf_path:={write_without_inertial(tmp_path, "link3")}',
              'engine:=mujoco')
    client.wait(lambda: len(states) > 5, timeout=60, what='sim_node to publish states')

    def said():
        return [m for m in log if m.name == 'sim_node' and m.level == Log.WARN and
                'links link3 move but lack a mass' in m.msg]
    # /rosout is another writer than /joint_states: DDS may match it later (the record is
    # kept for this listener, transient local), so the record is waited for, not expected first
    client.wait(lambda: said() or any(m.name == 'sim_node' and 'simulating' in m.msg
                                      for m in log), 30.0, "sim_node's start on /rosout")
    assert said(), [m.msg for m in log if m.name == 'sim_node']


@pytest.mark.parametrize('engine', ['internal', 'mujoco'])
def test_sim_node_refuses_a_joint_that_moves_no_inertia(processes, tmp_path, engine):
    """A massless hand: M is singular, and sim_node says which joint before it steps."""
    if engine == 'mujoco':
        pytest.importorskip('mujoco', reason='the MuJoCo engine: pip install mujoco')
    code, output = processes('sim_node', f'engine:={engine}', 'urdf_path:=' +
                             write_without_inertial(tmp_path, 'link7', 'flange')).wait()
    assert code == 2, output
    assert ('not started: parameter engine: neither engine can simulate this robot: M(q) is '
            "singular: joint 'joint7' moves no inertia") in output
    assert 'Traceback' not in output


def test_latency_report(client, processes):
    """report_latency: the ms from the DDS receipt of each state to its command's publication."""
    from std_msgs.msg import Float64
    arm = md.load_model(robots.path('demo_arm'))
    processes('dynamics_node', UNCHECKED, f'urdf_path:={robots.path("demo_arm")}',
              'report_latency:=true')
    latency = client.listen(Float64, '/dynamics_node/command_latency')
    pub = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(pub)
    client.wait_for_publisher('/dynamics_node/command_latency')
    for k in range(5):
        # again until answered: discovery may match our listener a little after the state
        # subscription, and a report sent before that is not delivered to us
        for _ in range(100):
            pub.publish(state(arm.joint_names, np.full(7, 0.1 * k)))
            client.spin(0.05)
            if len(latency) > k:
                break
        assert len(latency) > k, 'no latency report'
    assert all(0.0 < m.data < 1000.0 for m in latency)


def test_the_controller_is_the_one_of_the_resolved_command_topic():
    """Namespaces and remaps apply: the controller is found where the commands really go."""
    from manipulator_dynamics.nodes.commands import controller_of
    assert controller_of('/effort_controller/commands', '/') == '/effort_controller'
    assert controller_of('/robot1/effort_controller/commands', '/robot1') == \
        '/robot1/effort_controller'
    assert controller_of('/robot1/commands', '/robot1') is None        # no controller's name
    assert controller_of('/commands', '/') is None
    assert controller_of('/effort_controller/commands', '/', 'arm') == 'arm'
    assert controller_of('/effort_controller/commands', '/', '-') is None


def test_a_remapped_command_topic_waits_for_its_own_controller(client, processes):
    """``-r effort_controller/commands:=/arm_controller/commands``: arm_controller is asked."""
    model = md.load_model(robots.path('demo_arm'))
    decoy = client.controller(list(model.joint_names)[::-1])     # /effort_controller: not it
    arm = client.controller(model.joint_names, name='arm_controller')
    processes('dynamics_node', f'urdf_path:={robots.path("demo_arm")}',
              args=['--ros-args', '-r', 'effort_controller/commands:=/arm_controller/commands'])
    pub = client.publisher(JointState, '/joint_states')
    client.wait_for_subscriber(pub)
    q = np.full(model.n, 0.25)
    client.wait(lambda: arm.received or pub.publish(state(model.joint_names, q)),
                timeout=60, what='commands on the remapped topic')
    np.testing.assert_allclose(arm.received[-1].data, md.gravity_torques(model, q), rtol=1e-12)
    assert not decoy.received
