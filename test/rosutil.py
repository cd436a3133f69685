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
Pytest plugin for node tests: real processes, an rclpy client, a DDS domain of their own.

Every test session gets its own ``ROS_DOMAIN_ID`` and localhost-only discovery, set before
rclpy starts, so that parallel runs never hear each other: ``dev.py test`` gives each of its
pytest processes one (``$MANIPULATOR_DYNAMICS_TEST_DOMAIN``), any other run takes one from its
process id.  A shell's own ``ROS_DOMAIN_ID`` (a robot's) is never the tests'.
"""

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time

from helpers import ROOT
import pytest

os.environ['ROS_DOMAIN_ID'] = os.environ.get('MANIPULATOR_DYNAMICS_TEST_DOMAIN') or str(
    1 + os.getpid() % 100)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('RCUTILS_COLORIZED_OUTPUT', '0')

import rclpy  # noqa: E402 - after the environment above
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402

# a listener of a transient-local topic (~/contact, ~/payload): it hears what the node said
# before the two were matched too, so a node that publishes at once, before discovery has
# finished (later on a loaded machine), loses nothing to the listener
KEPT = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                  reliability=ReliabilityPolicy.RELIABLE)


def executable(name):
    """Path of a console script of the package (next to this interpreter, or on PATH)."""
    path = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if path is None:
        pytest.fail(f'console script {name} is not installed: pip install -e .')
    return path


class Process:
    """A node running as its console script; stopped with SIGINT (or ``signal``) at the end."""

    def __init__(self, name, *params, args=(), env=None):
        command = [executable(name), *args, '--ros-args']
        for p in params:
            command += ['-p', p]
        self.name = name
        self.popen = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=dict(os.environ, **(env or {})))
        self.output = None

    def wait(self, timeout=60.0):
        """Wait for the node to end by itself; return ``(exit code, stdout + stderr)``."""
        if self.output is None:
            out, err = self.popen.communicate(timeout=timeout)
            self.output = (self.popen.returncode, out + err)
        return self.output

    def stop(self, sig=signal.SIGINT, timeout=20.0):
        """Stop the node; return ``(exit code, stdout + stderr)``."""
        if self.output is None:
            if self.popen.poll() is None:
                self.popen.send_signal(sig)
            try:
                out, err = self.popen.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                out, err = self.popen.communicate()
            self.output = (self.popen.returncode, out + err)
        return self.output


@pytest.fixture
def processes():
    """Give a function that starts a node with its parameters; all are stopped afterwards."""
    started = []

    def start(name, *params, args=(), env=None):
        process = Process(name, *params, args=args, env=env)
        started.append(process)
        return process
    yield start
    for process in started:          # shown by pytest when the test failed
        code, output = process.stop()
        print(f'--- {process.name}: exit code {code}\n{output}')


#: How a test module's nodes run: each in its own process (its console script), or hosted by
#: node_container; a module runs its DDS tests both ways through the fixture ``nodes``.
HOSTING = ('apart', 'node_container')


@pytest.fixture(params=HOSTING)
def nodes(request, processes):
    """
    Give ``processes``, or one that starts each node in a node_container of its own.

    The same DDS tests then prove that a node hosted by the container behaves as it does apart:
    its name, parameters, services, lifecycle and exit.
    """
    if request.param == 'apart':
        return processes

    def start(name, *params, args=(), env=None):
        return processes('node_container', *params, args=(name, *args), env=env)
    return start


@pytest.fixture(scope='module')
def ros():
    """Give the test process an rclpy context, shut down after the module."""
    context = rclpy.context.Context()
    rclpy.init(context=context)
    yield context
    rclpy.shutdown(context=context)


class Client:
    """A test node: publish, collect messages per topic, wait for conditions."""

    def __init__(self, context, name='test_client'):
        from rclpy.executors import SingleThreadedExecutor
        self.node = rclpy.create_node(name, context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.received = {}
        self.sources = {}
        self.subscriptions = {}
        self.others = []

    def listen(self, msg_type, topic, qos=10, sources=False):
        """
        Collect the messages of ``topic`` in the returned list.

        ``sources``: keep each message's publisher (its GID) too, in ``self.sources[topic]``,
        for :func:`from_a_new_publisher`.
        """
        received = self.received[topic] = []
        if sources:
            publishers = self.sources[topic] = []

            def on_message(msg, info):
                publishers.append(bytes(info['publisher_gid']['data']))
                received.append(msg)
        self.subscriptions[topic] = self.node.create_subscription(
            msg_type, topic, on_message if sources else received.append, qos)
        return received

    def listen_log(self):
        """
        Collect the /rosout records (rcl_interfaces/Log), those sent before matching too.

        Nodes publish /rosout transient local (depth 1000): a record a node logs before this
        client has discovered it still arrives.
        """
        from rcl_interfaces.msg import Log
        from manipulator_dynamics.nodes.qos import ROSOUT
        return self.listen(Log, '/rosout', ROSOUT)

    def wait_for_publisher(self, topic, timeout=30.0):
        """Wait until the subscription made by ``listen(topic)`` is matched by a publisher."""
        sub = self.subscriptions[topic]
        self.wait(lambda: sub.get_publisher_count() > 0, timeout, f'a publisher on {topic}')

    def publisher(self, msg_type, topic, qos=10):
        return self.node.create_publisher(msg_type, topic, qos)

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def wait(self, condition, timeout=30.0, what='condition'):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if condition():
                return
            self.executor.spin_once(timeout_sec=0.02)
        raise AssertionError(f'timed out after {timeout} s waiting for {what}')

    def call(self, service, request, timeout=60.0, attempt=10.0):
        """
        Call ``service`` (a client made with ``node.create_client``); return the response.

        ``service_is_ready`` proves the request path matched, not yet the response path: DDS
        drops a response sent before that ("failed to send response"), so a call unanswered
        after ``attempt`` seconds is made again.  For idempotent services only (Trigger of
        compute_base_params, set_parameters).
        """
        name = service.srv_name
        self.wait(service.service_is_ready, timeout, what=name)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            future = service.call_async(request)
            try:
                self.wait(future.done, min(attempt, end - time.monotonic()),
                          what=f'the answer of {name}')
                return future.result()
            except AssertionError:
                service.remove_pending_request(future)
        raise AssertionError(f'no answer of {name} in {timeout} s')

    def lifecycle(self, node):
        """Give the lifecycle services of ``node`` (its full name), as ``ros2 lifecycle`` uses."""
        return Lifecycle(self, node)

    def wait_for_subscriber(self, publisher, timeout=30.0):
        self.wait(lambda: publisher.get_subscription_count() > 0, timeout,
                  f'a subscriber on {publisher.topic_name}')

    def controller(self, joints, name='effort_controller', namespace='/'):
        """
        Start a stand-in for a ros2_control controller: node ``name``, ``joints`` parameter.

        Like forward_command_controller it subscribes ``<name>/commands``; what it receives is
        in the node's ``received`` list.  :meth:`remove` stops it (a controller going away).
        """
        from std_msgs.msg import Float64MultiArray
        node = rclpy.create_node(name, namespace=namespace, context=self.node.context)
        node.declare_parameter('joints', list(joints))
        node.received, node.sent_at = [], []       # the commands and when each was sent (ns)

        def on_command(msg, info):
            node.sent_at.append(info['source_timestamp'])
            node.received.append(msg)
        node.create_subscription(Float64MultiArray, f'{name}/commands', on_command, 1000)
        self.executor.add_node(node)
        self.others.append(node)
        return node

    def remove(self, node):
        """Stop a node made by :meth:`controller`."""
        self.others.remove(node)
        self.executor.remove_node(node)
        node.destroy_node()

    def close(self):
        for node in list(self.others):
            self.remove(node)
        self.executor.remove_node(self.node)
        self.node.destroy_node()


class Lifecycle:
    """A managed node's ``~/get_state`` and ``~/change_state``, called as ``ros2 lifecycle``."""

    def __init__(self, client, node):
        from lifecycle_msgs.srv import ChangeState, GetState
        self.client, self.node = client, node
        self.get = client.node.create_client(GetState, f'{node}/get_state')
        self.change_state = client.node.create_client(ChangeState, f'{node}/change_state')

    def state(self):
        """Return the node's state label (get_state, idempotent: asked again if unanswered)."""
        from lifecycle_msgs.srv import GetState
        # asked again after 2 s, not 10: an answer DDS drops (sent before its path matched) is
        # common at a node's start, and a get_state costs the node nothing
        return self.client.call(self.get, GetState.Request(), attempt=2.0).current_state.label

    def change(self, transition):
        """
        Make ``transition`` (configure, activate, deactivate, cleanup, shutdown); its success.

        Asked once: a transition is no idempotent call.  get_state answered first proves that
        the answers' path is matched (DDS drops an answer sent before it is).  Returns the
        system time (ns) at the answer too: the node had made the transition before it.
        """
        from lifecycle_msgs.msg import Transition
        from lifecycle_msgs.srv import ChangeState
        state = self.state()
        ids = {'configure': Transition.TRANSITION_CONFIGURE,
               'cleanup': Transition.TRANSITION_CLEANUP,
               'activate': Transition.TRANSITION_ACTIVATE,
               'deactivate': Transition.TRANSITION_DEACTIVATE,
               'shutdown': {'unconfigured': Transition.TRANSITION_UNCONFIGURED_SHUTDOWN,
                            'inactive': Transition.TRANSITION_INACTIVE_SHUTDOWN,
                            'active': Transition.TRANSITION_ACTIVE_SHUTDOWN}.get(state, 0)}
        future = self.change_state.call_async(
            ChangeState.Request(transition=Transition(id=ids[transition])))
        self.client.wait(future.done, 120.0, f'the answer of {self.node} to {transition}')
        return future.result().success, time.time_ns()


@pytest.fixture
def client(ros):
    c = Client(ros)
    yield c
    c.close()


def stamp(msg):
    """Return a message's header stamp, in seconds."""
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def from_a_new_publisher(client, topic, old):
    """
    Return the messages of ``topic`` (listened with sources) from none of the publishers ``old``.

    ``old``: the set of publishers heard at a plant's stop (``set(client.sources[topic])``).  Its
    replacement is another publisher: its messages are told by their publisher, never by the
    count at the stop (messages of the old one may still be queued in the listener) nor by a
    jump back of their stamps (DDS may match the new publisher with this listener only after
    its clock has passed the old one's, on a busy machine).
    """
    return [m for m, s in zip(client.received[topic], client.sources[topic]) if s not in old]


def last_from_a_new_publisher(client, topic, old):
    """Return the last message of ``topic`` if none of the publishers ``old`` sent it, or None."""
    sources = client.sources[topic]
    return client.received[topic][-1] if sources and sources[-1] not in old else None


def run_demo(cwd, *args):
    """
    Run ``python3 -m manipulator_dynamics.demo *args`` in ``cwd`` as a user does (``dev.py demo``).

    Assert that it ended with exit code 0 (the demo's own verdict on what it printed); return
    what it printed.
    """
    result = subprocess.run([sys.executable, '-m', 'manipulator_dynamics.demo', *args],
                            capture_output=True, text=True, timeout=600, cwd=cwd)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def installed(module):
    """
    Whether ``module`` is an installed package, not this checkout's folder of the same name.

    With the checkout on ``sys.path`` (``python -m pytest`` from its root), its ``launch/``
    folder imports as an empty namespace package called ``launch`` where none is installed.
    """
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin not in (None, 'namespace')


def ros2_tools_missing():
    """Why ROS 2's own tools cannot run here, or None (launch, launch_testing, ros2, colcon)."""
    bindir = os.path.dirname(sys.executable)
    for module in ('launch', 'launch_ros', 'launch_testing', 'ros2cli'):
        if not installed(module):
            return (f'{module} is not installed: it comes only with a ROS 2 installation (source '
                    'its setup.bash before python3 dev.py test); no registry these machines '
                    'reach serves it')
    for tool in ('ros2', 'launch_test', 'colcon'):
        if not (shutil.which(tool, path=bindir) or shutil.which(tool)):
            return f'the {tool} command is not installed (it comes with a ROS 2 installation)'
    return None


@pytest.fixture(scope='session')
def ros2_workspace(tmp_path_factory):
    """
    ``colcon build`` of this package, then the environment ``source install/setup.bash`` gives.

    What a ROS 2 user does before ``ros2 launch``; every test that uses it runs the installed
    package, its launch files and executables from ``lib/manipulator_dynamics``, not the checkout.
    """
    reason = ros2_tools_missing()
    if reason:
        pytest.skip(reason)
    ws = tmp_path_factory.mktemp('ros2_ws')
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get('PATH', ''))
    colcon = shutil.which('colcon', path=bindir) or shutil.which('colcon')
    result = subprocess.run(
        [colcon, 'build', '--base-paths', ROOT, '--build-base', str(ws / 'build'),
         '--install-base', str(ws / 'install'), '--event-handlers', 'console_direct-'],
        cwd=ws, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    sourced = subprocess.run(
        ['bash', '-c', f'source {ws / "install" / "setup.bash"} && env -0'],
        capture_output=True, text=True, env=env, check=True).stdout
    env = dict(item.split('=', 1) for item in sourced.split('\0') if '=' in item)
    return ws, env


class Ros2:
    """Run ``ros2`` commands in the sourced workspace; background ones in their own group."""

    def __init__(self, ws, env):
        self.ws, self.env = ws, env
        self.background = []

    def run(self, *args, timeout=60):
        """
        Run ``ros2 ARGS`` to its end; return the CompletedProcess (text).

        A verb that asks the ``ros2`` daemon answers "Node not found" while a daemon it has just
        spawned is still discovering the graph (a second or two): such a call is repeated, as a
        person would, for up to 20 s.
        """
        end = time.monotonic() + 20
        while True:
            result = subprocess.run(['ros2', *args], capture_output=True, text=True,
                                    env=self.env, timeout=timeout, cwd=self.ws)
            if 'Node not found' not in result.stderr or time.monotonic() > end:
                return result
            time.sleep(1.0)

    def start(self, *args):
        """Start ``ros2 ARGS`` in a process group of its own, as a terminal would."""
        process = subprocess.Popen(['ros2', *args], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, env=self.env,
                                   cwd=self.ws, start_new_session=True)
        self.background.append(process)
        return process

    @staticmethod
    def ctrl_c(process, timeout=30):
        """Send SIGINT to the whole group (a terminal's Ctrl-C); return (exit code, output)."""
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
        try:
            out, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
            out += '\n(killed: did not end within the timeout after Ctrl-C)'
        return process.returncode, out

    def close(self):
        for process in self.background:
            if process.poll() is None:
                self.ctrl_c(process, timeout=10)
        subprocess.run(['ros2', 'daemon', 'stop'], capture_output=True, env=self.env,
                       timeout=30)


@pytest.fixture
def ros2(ros2_workspace):
    """Give a :class:`Ros2` in the colcon workspace; background commands stopped afterwards."""
    tool = Ros2(*ros2_workspace)
    yield tool
    tool.close()


@contextlib.contextmanager
def in_process(node_class, **parameters):
    """
    Yield a node of ``node_class`` made in this process, on a context of its own.

    ``parameters``: its parameter overrides by name.  Its methods are called as its callbacks
    would be (a state at a time, in lockstep with a simulation): nothing waits on DDS.  The
    node is destroyed and its context shut down after, whatever happens.  It lives in the
    namespace ``/in_process``: destroyed, our nodes stay in this process's graph (rclpy keeps
    their handle; a plain Node leaves), and a later test that asks the graph for ``/<node>``'s
    services must find the node it started, not this one.
    """
    from rclpy.parameter import Parameter
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = node_class(context=context, namespace='in_process', parameter_overrides=[
            Parameter(name, value=value) for name, value in parameters.items()])
        try:
            yield node
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
