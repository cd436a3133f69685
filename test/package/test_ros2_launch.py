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
The package as a ROS 2 user runs it: ``colcon build``, ``ros2 launch``, the ``ros2`` CLI, Ctrl-C.

Every command here is one the README documents, typed as it is there, against a colcon install
of this checkout (sourced ``install/setup.bash``).  ROS 2's own tools (launch, launch_testing,
the ``ros2`` command) come only from a ROS 2 installation, sourced before ``python3 dev.py
test``; without one these tests skip, saying so.
"""

import importlib.util
import os
import subprocess
import time

from helpers import ROOT
import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

LAUNCH_TESTS = sorted(os.path.join(ROOT, 'test', 'launch', f)
                      for f in os.listdir(os.path.join(ROOT, 'test', 'launch'))
                      if f.startswith('test_') and f.endswith('.py'))
DEMO_URDF = robots.path('demo_arm')


def state(names, q):
    msg = JointState(name=list(names), position=[float(v) for v in q])
    msg.velocity = [0.0] * len(names)
    return msg


def next_command(client, commands, publish, ros2, process):
    """
    Call ``publish()`` until a new message is in ``commands``; return it as an array.

    Joint states go best effort: one may be lost, so they are sent again until answered.  On
    failure the process is stopped and its output shown.
    """
    before = len(commands)
    for _ in range(200):
        publish()
        client.spin(0.05)
        if len(commands) > before:
            return np.array(commands[-1].data)
    raise AssertionError('no command: ' + ros2.ctrl_c(process)[1][-3000:])


def command_at(ros2, client, process, names, q, joint_states='/joint_states',
               commands='/effort_controller/commands'):
    """Publish joint states at ``q`` until ``process`` sends a command; return that command."""
    heard = client.listen(Float64MultiArray, commands)
    pub = client.publisher(JointState, joint_states)
    client.wait_for_subscriber(pub, timeout=60)
    client.wait_for_publisher(commands, timeout=60)
    return next_command(client, heard, lambda: pub.publish(state(names, q)), ros2, process)


def assert_clean_exit(code, output):
    """Exit code 0 from launch, and from every process it started; no traceback anywhere."""
    assert code == 0, output[-4000:]
    assert 'Traceback' not in output, output[-4000:]
    assert 'process has died' not in output, output[-4000:]
    assert 'KeyboardInterrupt' not in output, output[-4000:]


def test_an_empty_folder_named_like_a_tool_is_not_the_tool(tmp_path, monkeypatch):
    """A folder such as the checkout's ``launch/`` never passes for ROS 2's package of its name."""
    from rosutil import installed

    (tmp_path / 'launch_lookalike').mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    assert importlib.util.find_spec('launch_lookalike') is not None    # it does import...
    assert not installed('launch_lookalike')                          # ...as nothing
    assert installed('yaml') and not installed('no_such_module_here')


@pytest.mark.parametrize('launch_file, expected', [
    ('dynamics.launch.py', ['urdf', 'params_file', 'mode', 'command_topic', 'command_joints',
                            'identified_parameters', 'transmissions', 'use_sim_time',
                            'namespace']),
    ('demo.launch.py', ['namespace', 'params_file']),
    ('flexible.launch.py', ['arm_config', 'mode', 'trajectory_topic', 'target_topic', 'dt',
                            'settle', 'output_rate', 'use_sim_time', 'namespace',
                            'params_file']),
    # Gazebo cannot run here: that the bringup parses and lists its arguments is what is checked
    ('gazebo.launch.py', ['world', 'mode', 'namespace']),
])
def test_show_args(ros2, launch_file, expected):
    """``ros2 launch manipulator_dynamics FILE --show-args`` parses the file and lists them."""
    result = ros2.run('launch', 'manipulator_dynamics', launch_file, '--show-args')
    assert result.returncode == 0, result.stdout + result.stderr
    for name in expected:
        assert f"'{name}':" in result.stdout, (name, result.stdout)


def test_dynamics_launch_in_a_namespace(ros2, client):
    """
    The README's integration command under ``namespace:=robot1``, then the ``ros2`` CLI.

    Joint states come from two best-effort publishers (an arm driver and a gripper driver each
    with their own joints); the commands come in the controller's order; ``ros2 service call``,
    ``ros2 param set`` (a rejected change changes nothing) and ``ros2 topic echo`` work on the
    namespaced names; nothing is heard on the un-namespaced ones; Ctrl-C ends every process
    with exit code 0.
    """
    model = md.load_model(DEMO_URDF)
    order = list(model.joint_names)[::-1]
    client.controller(order, namespace='robot1')     # the robot's controller, in its namespace
    launch = ros2.start('launch', 'manipulator_dynamics', 'dynamics.launch.py',
                        f'urdf:={DEMO_URDF}', 'mode:=gravity_compensation',
                        'command_topic:=effort_controller/commands',
                        f'command_joints:=[{", ".join(order)}]', 'namespace:=robot1')
    commands = client.listen(Float64MultiArray, '/robot1/effort_controller/commands')
    elsewhere = client.listen(Float64MultiArray, '/effort_controller/commands')
    arm = client.publisher(JointState, '/robot1/joint_states', qos_profile_sensor_data)
    gripper = client.publisher(JointState, '/robot1/joint_states', qos_profile_sensor_data)
    client.wait_for_subscriber(arm, timeout=60)
    client.wait_for_publisher('/robot1/effort_controller/commands', timeout=60)
    q = np.linspace(-0.6, 0.6, model.n)
    names = model.joint_names

    def drivers():
        arm.publish(state(names[:4], q[:4]))
        client.spin(0.02)                     # two drivers, each at its own time
        gripper.publish(state(names[4:], q[4:]))

    def command():
        return next_command(client, commands, drivers, ros2, launch)

    expected = md.gravity_torques(model, q)[[model.joint_index(j) for j in order]]
    np.testing.assert_allclose(command(), expected, rtol=1e-12)

    answer = ros2.run('service', 'call', '/robot1/compute_base_params', 'std_srvs/srv/Trigger')
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert 'success=True' in answer.stdout and 'count:' in answer.stdout, answer.stdout

    rejected = ros2.run('param', 'set', '/robot1/dynamics_node', 'rate', '-5.0')
    assert 'Setting parameter failed' in rejected.stdout + rejected.stderr, rejected.stdout
    np.testing.assert_allclose(command(), expected, rtol=1e-12)    # still commanding

    # the latched QoS said outright: echo adapts its QoS only to publishers it has already
    # discovered, and a volatile (or best-effort) subscription never gets the latched message
    echoed = ros2.run('topic', 'echo', '--once', '--qos-durability', 'transient_local',
                      '--qos-reliability', 'reliable', '/robot1/dynamics_node/command_joints',
                      'std_msgs/msg/String')
    assert echoed.returncode == 0, echoed.stdout + echoed.stderr
    assert ', '.join(order) in echoed.stdout, echoed.stdout
    assert not elsewhere                                     # only the namespaced names

    assert_clean_exit(*ros2.ctrl_c(launch))


def test_managed_launch_configures_and_activates_and_ros2_lifecycle_drives_it(ros2, client):
    """
    ``dynamics.launch.py managed:=true``: the launch configures, then activates dynamics_node.

    ``ros2 lifecycle get`` says active and commands flow; ``ros2 lifecycle set ... deactivate``
    stops them and the launch does not activate it again; Ctrl-C ends every process cleanly.
    """
    model = md.load_model(DEMO_URDF)
    controller = client.controller(list(model.joint_names))
    launch = ros2.start('launch', 'manipulator_dynamics', 'dynamics.launch.py',
                        f'urdf:={DEMO_URDF}', 'mode:=gravity_compensation', 'managed:=true')
    commands = client.listen(Float64MultiArray, '/effort_controller/commands')
    arm = client.publisher(JointState, '/joint_states', qos_profile_sensor_data)
    client.wait_for_subscriber(arm, timeout=60)
    q = np.linspace(-0.6, 0.6, model.n)

    def driver():
        arm.publish(state(model.joint_names, q))
    np.testing.assert_allclose(next_command(client, commands, driver, ros2, launch),
                               md.gravity_torques(model, q), rtol=1e-12)
    got = ros2.run('lifecycle', 'get', '/dynamics_node')
    assert got.stdout.startswith('active'), got.stdout + got.stderr
    done = ros2.run('lifecycle', 'set', '/dynamics_node', 'deactivate')
    assert 'Transitioning successful' in done.stdout, done.stdout + done.stderr
    at = time.time_ns()                               # the CLI returned: the node had stopped
    for _ in range(100):
        driver()
        client.spin(0.01)
    assert not [t for t in controller.sent_at if t > at]
    assert ros2.run('lifecycle', 'get', '/dynamics_node').stdout.startswith('inactive')
    assert_clean_exit(*ros2.ctrl_c(launch))


def test_ros2_run_with_remapped_names(ros2, client):
    """``ros2 run ... --ros-args -r``: remapped joint states and commands are the ones used."""
    model = md.load_model(DEMO_URDF)
    client.controller(model.joint_names, name='arm_controller')     # the remapped topic's
    node = ros2.start('run', 'manipulator_dynamics', 'dynamics_node', '--ros-args',
                      '-p', f'urdf_path:={DEMO_URDF}',
                      '-r', 'joint_states:=/arm/joint_states',
                      '-r', 'effort_controller/commands:=/arm_controller/commands')
    default = client.listen(Float64MultiArray, '/effort_controller/commands')
    q = np.full(model.n, -0.2)
    command = command_at(ros2, client, node, model.joint_names, q, '/arm/joint_states',
                         '/arm_controller/commands')
    np.testing.assert_allclose(command, md.gravity_torques(model, q), rtol=1e-12)
    assert not default
    assert_clean_exit(*ros2.ctrl_c(node))


def test_empty_command_joints_from_the_command_line(ros2, client):
    """``command_joints:=[]`` (a list ROS cannot type) means the model's order, not a crash."""
    model = md.load_model(DEMO_URDF)
    client.controller(model.joint_names)
    launch = ros2.start('launch', 'manipulator_dynamics', 'dynamics.launch.py',
                        f'urdf:={DEMO_URDF}', 'mode:=gravity_compensation',
                        'command_joints:=[]')
    q = np.full(model.n, 0.3)
    command = command_at(ros2, client, launch, model.joint_names, q)
    np.testing.assert_allclose(command, md.gravity_torques(model, q), rtol=1e-12)
    assert_clean_exit(*ros2.ctrl_c(launch))


def test_identified_parameters_from_the_launch_command(ros2, client, tmp_path):
    """
    ``dynamics.launch.py identified_parameters:=FILE``: gravity compensation of the file's robot.

    The YAML is the documented format of ``identify --parameters-out`` (a heavier last link:
    the robot with a payload); the commands are that robot's gravity torques, not the URDF's.
    """
    model = md.load_model(DEMO_URDF)
    names = md.parameter_names(model)[-10:]                 # the last link's ten parameters
    values = md.standard_parameters(model)[-10:] * 1.5
    (tmp_path / 'identified.yaml').write_text(
        'robot: demo_arm\nstandard_parameters:\n'
        + ''.join(f'  {n}: {float(v)!r}\n' for n, v in zip(names, values)))
    heavier = model.with_parameters(values, names)
    client.controller(model.joint_names)
    launch = ros2.start('launch', 'manipulator_dynamics', 'dynamics.launch.py',
                        f'urdf:={DEMO_URDF}', 'mode:=gravity_compensation',
                        f'identified_parameters:={tmp_path / "identified.yaml"}')
    q = np.full(model.n, 0.4)
    command = command_at(ros2, client, launch, model.joint_names, q)
    np.testing.assert_allclose(command, md.gravity_torques(heavier, q), rtol=1e-12)
    assert not np.allclose(command, md.gravity_torques(model, q), rtol=1e-3)
    assert_clean_exit(*ros2.ctrl_c(launch))


def test_flexible_launch_streams_one_step_per_target(ros2, client):
    """
    ``flexible.launch.py mode:=stream target_topic:=/reference``: a controller's loop.

    Each JointState target is one step of ``dt``; the answers are the library's stream, step
    for step, and Ctrl-C ends the launch cleanly.
    """
    config = os.path.join(ROOT, 'config', 'flexible_two_link.yaml')
    launch = ros2.start('launch', 'manipulator_dynamics', 'flexible.launch.py',
                        f'arm_config:={config}', 'mode:=stream', 'target_topic:=/reference',
                        'dt:=0.002')
    replies = client.listen(JointState, '/flexible_trajectory_node/flexible_state')
    pub = client.publisher(JointState, '/reference')
    client.wait_for_subscriber(pub, timeout=60)
    arm = md.FlexibleArm.from_yaml(config)
    t = 0.002 * np.arange(40)
    q = np.column_stack([0.5 * t / t[-1], -t / t[-1]])
    stream = md.FlexibleStream(arm, q[0], 0.002)
    expected = [stream.sample.tau] + [stream.step(x).tau for x in q[1:]]
    for k, x in enumerate(q):
        before = len(replies)
        pub.publish(JointState(name=['joint1', 'joint2'], position=x.tolist()))
        client.wait(lambda: len(replies) > before, timeout=30, what=f'the answer to target {k}')
    np.testing.assert_allclose([r.effort for r in replies], expected, rtol=1e-12, atol=1e-15)
    assert_clean_exit(*ros2.ctrl_c(launch))


@pytest.mark.parametrize('arguments', [(), ('container:=true',), ('managed:=true',)],
                         ids=['apart', 'container', 'managed'])
def test_demo_launch_runs_and_ctrl_c_ends_it_cleanly(ros2, client, arguments):
    """
    ``ros2 launch manipulator_dynamics demo.launch.py``, then a terminal's Ctrl-C.

    The terminal's SIGINT reaches launch and all five nodes at once, then launch sends its own:
    every node gets two, and each must still end with exit code 0 and no traceback.  The same
    with the package's nodes in one node_container, and managed (the launch activates them).
    """
    import glob
    import tempfile
    left = os.path.join(tempfile.gettempdir(), 'node_container_*.yaml')
    before = set(glob.glob(left))
    launch = ros2.start('launch', 'manipulator_dynamics', 'demo.launch.py', *arguments)
    commands = client.listen(Float64MultiArray, '/effort_controller/commands', 100)
    client.wait(lambda: len(commands) > 200, timeout=90,
                what='the demo loop to command the simulated arm')
    assert_clean_exit(*ros2.ctrl_c(launch))
    assert set(glob.glob(left)) <= before, 'the container launch left its parameter file behind'


def test_demo_launch_refuses_a_container_of_managed_nodes_with_the_reason(ros2):
    """``container:=true managed:=true``: refused, saying why, where the container was dropped."""
    result = ros2.run('launch', 'manipulator_dynamics', 'demo.launch.py', 'container:=true',
                      'managed:=true', timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    assert 'container:=true hosts unmanaged nodes only' in output, output[-3000:]


@pytest.mark.parametrize('path', LAUNCH_TESTS, ids=os.path.basename)
def test_launch_testing(ros2, path):
    """Each launch_testing file of test/launch, run by ``launch_test`` on the installed package."""
    start = time.monotonic()
    result = subprocess.run(['launch_test', path], capture_output=True, text=True,
                            env=ros2.env, timeout=300, cwd=ros2.ws)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert 'FAILED' not in output and 'OK' in output, output[-6000:]
    print(f'{os.path.basename(path)}: {time.monotonic() - start:.1f} s')
