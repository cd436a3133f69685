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
Managed nodes (``managed:=true``) over DDS: every transition, as ``ros2 lifecycle`` makes it.

A stand-in controller (``effort_controller`` with its ``joints``) records each command with the
time its publisher wrote it; a transition's answer comes after the node made it, so a command
written after the answer to ``deactivate`` (or while unconfigured) is one too many.
"""

import manipulator_dynamics as md
from manipulator_dynamics import robots
import pytest

pytest.importorskip('rclpy', reason='the node tests need rclpy (pip install rclpy)')

from rcl_interfaces.msg import Log  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import String  # noqa: E402, I100
from trajectory_msgs.msg import JointTrajectory  # noqa: E402, I100

from test_nodes_dynamics import LATCHED  # noqa: E402, I100
from test_nodes_trajectory import trajectory  # noqa: E402, I100

ARM = robots.path('demo_arm')
MODEL_JOINTS = [f'joint{i}' for i in range(1, 8)]


def feed_states(client, period=0.005):
    """Publish the demo arm's joint states every ``period`` s (a driver) while the client spins."""
    pub = client.publisher(JointState, '/joint_states', 10)

    def send():
        msg = JointState(name=MODEL_JOINTS, position=[0.1] * 7, velocity=[0.0] * 7)
        msg.header.stamp = client.node.get_clock().now().to_msg()
        pub.publish(msg)
    return client.node.create_timer(period, send)


def after(controller, ns):
    """Return the commands the controller got that were written after ``ns`` (system time)."""
    return [m for m, t in zip(controller.received, controller.sent_at) if t > ns]


def commanding(client, controller, what, since=0):
    client.wait(lambda: after(controller, since), 60.0, f'commands {what}')


def quiet(client, controller, since, seconds=0.5):
    """Spin ``seconds`` with states flowing; assert no command was written after ``since``."""
    client.spin(seconds)
    late = after(controller, since)
    assert not late, f'{len(late)} commands after the transition'


NODES = {
    'dynamics_node': ('mode:=gravity_compensation',),
    'trajectory_node': (),
}


def start_commands(client, name, pub):
    """Make ``name`` command once active: states do for both, trajectory_node needs a plan."""
    if name == 'trajectory_node':
        msg, *_ = trajectory(md.load_model(ARM), seconds=30.0, points=11)
        client.wait_for_subscriber(pub)
        pub.publish(msg)


@pytest.mark.parametrize('name', sorted(NODES))
def test_every_transition_over_dds_and_no_command_unless_active(client, nodes, name):
    """
    configure, activate, deactivate, activate, deactivate, cleanup, configure, shutdown.

    Commands only while active, behind the controller check; the state each time as get_state
    says it; shutdown ends the process with exit code 0.
    """
    controller = client.controller(MODEL_JOINTS)
    feed_states(client)
    trajectories = client.publisher(JointTrajectory, '/joint_trajectory')
    logs = client.listen_log()
    node = nodes(name, 'managed:=true', f'urdf_path:={ARM}', *NODES[name])
    life = client.lifecycle(f'/{name}')
    assert life.state() == 'unconfigured'
    quiet(client, controller, 0)
    for step, goal in (('configure', 'inactive'), ('activate', 'active')):
        success, at = life.change(step)
        assert success and life.state() == goal, (step, life.state())
        if goal == 'inactive':
            quiet(client, controller, 0)
    start_commands(client, name, trajectories)
    commanding(client, controller, 'once active')
    success, at = life.change('deactivate')
    assert success and life.state() == 'inactive'
    quiet(client, controller, at)
    success, at = life.change('activate')
    assert success and life.state() == 'active'
    start_commands(client, name, trajectories)
    commanding(client, controller, 'once active again', at)
    for step, goal in (('deactivate', 'inactive'), ('cleanup', 'unconfigured')):
        success, at = life.change(step)
        assert success and life.state() == goal, (step, life.state())
        quiet(client, controller, at)
    success, at = life.change('configure')
    assert success and life.state() == 'inactive'
    quiet(client, controller, at)
    success, at = life.change('shutdown')
    assert success
    code, output = node.wait(30.0)
    assert code == 0, output
    said = [m.msg for m in logs if m.name == name]
    for step in ('configure: inactive', 'activate: active', 'deactivate: inactive',
                 'cleanup: unconfigured'):
        assert step in said, (step, said)
    assert 'shutdown: finalized' in output        # its last words: /rosout may not get them out


def test_a_failed_configure_says_why_and_leaves_the_node_unconfigured(client, nodes):
    """
    A bad URDF at configure: FAILURE, the reason logged, the node unconfigured; then fixed.

    The model from the robot_description topic: nothing yet, then a URDF that does not parse,
    then the demo arm's.
    """
    logs = client.listen_log()
    nodes('dynamics_node', 'managed:=true')
    life = client.lifecycle('/dynamics_node')
    success, _ = life.change('configure')
    assert not success and life.state() == 'unconfigured'
    client.wait(lambda: any('configure failed: no robot model' in m.msg for m in logs),
                what='the reason of the failure')
    description = client.publisher(String, '/robot_description', LATCHED)
    description.publish(String(data='<robot name="broken"><link name="a"></robot>'))
    client.spin(1.0)
    success, _ = life.change('configure')
    assert not success and life.state() == 'unconfigured'
    client.wait(lambda: any(m.level == Log.ERROR and 'configure failed: topic '
                            'robot_description rejected' in m.msg for m in logs),
                what='the reason of the failure')
    with open(ARM, encoding='utf-8') as f:
        description.publish(String(data=f.read()))
    names = client.listen(String, '/dynamics_node/joint_names', LATCHED)
    client.spin(1.0)
    success, _ = life.change('configure')
    assert success and life.state() == 'inactive'
    client.wait(lambda: names, what='the model on ~/joint_names')
    assert all(j in names[-1].data for j in MODEL_JOINTS), names[-1].data


def test_an_active_node_commands_nothing_while_the_controller_joints_differ(client, nodes):
    """Active is not enough: the controller's joints in another order stop every command."""
    controller = client.controller(list(reversed(MODEL_JOINTS)))
    feed_states(client)
    logs = client.listen_log()
    nodes('dynamics_node', 'managed:=true', f'urdf_path:={ARM}', 'mode:=gravity_compensation')
    life = client.lifecycle('/dynamics_node')
    for step in ('configure', 'activate'):
        assert life.change(step)[0]
    client.wait(lambda: any(m.level == Log.ERROR and "effort_controller's joints are" in m.msg
                            for m in logs), what='the mismatch said')
    quiet(client, controller, 0)


def test_the_flexible_node_answers_targets_only_while_active(client, nodes):
    """flexible_trajectory_node managed: configure loads the arm, only an active node answers."""
    import manipulator_dynamics as md
    from manipulator_dynamics.nodes.flexible_trajectory_node import default_arm_config
    arm = md.FlexibleArm.from_yaml(default_arm_config())
    nodes('flexible_trajectory_node', 'managed:=true', 'settle:=0.0')
    out = client.listen(JointTrajectory, '/flexible_trajectory_node/flexible_trajectory')
    links = client.listen(String, '/flexible_trajectory_node/link_names', LATCHED)
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    msg, *_ = trajectory(arm.model, seconds=0.2, points=3)
    life = client.lifecycle('/flexible_trajectory_node')
    assert life.change('configure')[0] and life.state() == 'inactive'
    client.wait(lambda: links, what='the link names once configured')
    pub.publish(msg)
    client.spin(1.0)
    assert not out
    assert life.change('activate')[0]
    client.wait_for_subscriber(pub)
    pub.publish(msg)
    client.wait(lambda: out, 60.0, 'the flexible trajectory once active')
    assert life.change('deactivate')[0]
    count = len(out)
    pub.publish(msg)
    client.spin(1.0)
    assert len(out) == count


def test_unmanaged_nodes_have_no_lifecycle_services(client, nodes):
    """managed:=false (the default): no ~/change_state, the node serves as it always did."""
    names = sorted(NODES) + ['flexible_trajectory_node']
    for name in names:                                  # started together: one wait for all
        nodes(name, f'urdf_path:={ARM}' if name != 'flexible_trajectory_node' else 'settle:=0.0')
    client.wait(lambda: set(names) <= set(client.node.get_node_names()), 60.0,
                'the nodes to start')

    def services(name):
        from rclpy._rclpy_pybind11 import NodeNameNonExistentError
        try:
            return [s for s, _ in client.node.get_service_names_and_types_by_node(name, '/')]
        except NodeNameNonExistentError:        # named in the graph, its entities not yet
            return []
    for name in names:      # each service is discovered on its own, late on a busy machine
        client.wait(lambda: f'/{name}/get_parameters' in services(name), 60.0,
                    f"{name}'s parameter services")
    client.spin(1.0)
    for name in names:
        assert not any('change_state' in s for s in services(name)), (name, services(name))


@pytest.mark.parametrize('name', sorted(NODES))
def test_a_message_taken_before_a_deactivation_is_dropped_after_it(ros, name):
    """
    The executor may hand over a state it took before ``deactivate`` destroyed its subscription.

    Under load (three busy processes beside the test) that state reached dynamics_node's
    callback after the deactivation and its dead subscription ended the process.  Here the
    callbacks are called straight after ``deactivate`` (and after ``cleanup``): nothing raises,
    nothing is commanded.
    """
    import importlib

    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    module = importlib.import_module(f'manipulator_dynamics.nodes.{name}')
    node_class = {'dynamics_node': 'DynamicsNode', 'trajectory_node': 'TrajectoryNode'}[name]
    # in a namespace of its own: destroyed, it stays in this process's graph (rosutil.in_process)
    node = getattr(module, node_class)(context=ros, namespace='in_process', parameter_overrides=[
        Parameter('managed', value=True), Parameter('urdf_path', value=ARM),
        Parameter('controller_name', value='-')])
    state = serialize_message(JointState(name=MODEL_JOINTS, position=[0.1] * 7))
    plan, *_ = trajectory(md.load_model(ARM))
    try:
        for transition in ('configure', 'activate', 'deactivate', 'cleanup'):
            getattr(node, f'trigger_{transition}')()
            if transition in ('deactivate', 'cleanup'):
                if name == 'dynamics_node':
                    node._on_state(state, {'received_timestamp': 0})
                    node._on_desired(plan)
                else:
                    node._on_state(state)
                    node._on_trajectory(plan)
                    node._on_timer()
        assert node.command.sent == 0
    finally:
        node.destroy_node()
