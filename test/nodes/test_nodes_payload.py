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
A load picked up while the nodes run: dynamics_node estimates and applies it; no contact after.

sim_node (MuJoCo, lockstep at most twice real time) picks a 2.5 kg load up on the flange,
unknown to the other nodes; trajectory_node holds the arm, then moves it.  dynamics_node
watches with the momentum observer and, asked, estimates the load from its window of states.
Lockstep: the motion is the same on a busy machine; the test only waits longer for it, and
dynamics_node hears every state (reliable, a queue of a second: a node starved of CPU reads
them late rather than drop them).
"""

import os
import re

import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest
import yaml

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
pytest.importorskip('mujoco', reason='MuJoCo is the plant (pip install mujoco)')
from builtin_interfaces.msg import Duration  # noqa: E402, I100
from geometry_msgs.msg import InertiaStamped  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import UInt8  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from rosutil import in_process, KEPT, stamp  # noqa: E402, I100

ARM = robots.path('demo_arm')
Q0 = np.array([0.0, 0.6, 0.3, -0.9, 0.2, 0.7, 0.1])
#: The load: mass, centre of mass in link7's frame, inertia about it.
LOAD = (2.5, (0.06, -0.05, 0.08), (6e-3, 4e-4, -3e-4, 5e-3, 2e-4, 4e-3))
PICKED_AT, MOTION = 0.5, 12.0
#: The observer's levels (N m): the load's pull on the shoulder is about 12 N m.
CONTACT, COLLISION = 1.5, 5.0


def frictionless(folder):
    """Write the demo arm's rotor inertias without friction (both the plant and the nodes)."""
    path = os.path.join(folder, 'frictionless.yaml')
    armature = [0.35, 0.35, 0.2, 0.2, 0.08, 0.04, 0.04]
    with open(path, 'w') as f:
        yaml.safe_dump({'joint_dynamics': {f'joint{i + 1}': {
            'armature': a, 'viscous': 0.0, 'coulomb': 0.0} for i, a in enumerate(armature)}}, f)
    return path


def message(model, t, q, qd, qdd):
    """Return the JointTrajectory of samples ``t`` (from its receipt on)."""
    msg = JointTrajectory(joint_names=list(model.joint_names))
    for k, ti in enumerate(t):
        msg.points.append(JointTrajectoryPoint(
            positions=q[k].tolist(), velocities=qd[k].tolist(), accelerations=qdd[k].tolist(),
            time_from_start=Duration(sec=int(ti), nanosec=int(round((ti % 1) * 1e9)))))
    return msg


def held(model):
    """Hold Q0 for as long as the test needs (it is replaced by the motion)."""
    t, zero = np.array([0.0, 1000.0]), np.zeros((2, model.n))
    return message(model, t, np.tile(Q0, (2, 1)), zero, zero)


def moving(model):
    """Return the motion from Q0 (every joint, two speeds, MOTION s, ending at rest) and its q."""
    rng = np.random.default_rng(4)
    t = np.linspace(0.0, MOTION, 641)
    slow = rng.uniform(0.3, 0.6, model.n) * rng.choice([-1, 1], model.n)
    fast = rng.uniform(0.15, 0.3, model.n) * rng.choice([-1, 1], model.n)
    envelope = np.sin(np.pi * t / MOTION)[:, None] ** 2
    q = Q0 + envelope * (slow + fast * np.sin(2 * np.pi * t / 2.5)[:, None])
    assert np.all(q > model.lower + 0.1) and np.all(q < model.upper - 0.1)
    qd = np.gradient(q, t, axis=0)
    return message(model, t, q, qd, np.gradient(qd, t, axis=0)), q


def test_a_load_picked_up_is_estimated_applied_and_no_longer_a_contact(client, processes,
                                                                       tmp_path):
    dynamics = frictionless(tmp_path)
    model = md.load_model(ARM, joint_dynamics=dynamics)
    truth = model.with_payload('link7', *LOAD)
    robot = [f'urdf_path:={ARM}', f'joint_dynamics:={dynamics}']
    # the physics time, newest only: what the test waits on (a listener of every state would
    # fall behind the lockstep loop and wait on the past)
    clock = client.listen(Clock, '/clock', 1)
    estimate = client.listen(JointState, '/dynamics_node/external_torques', 100000)
    levels = client.listen(UInt8, '/dynamics_node/contact', KEPT)
    payloads = client.listen(InertiaStamped, '/dynamics_node/payload', KEPT)
    logs = client.listen_log()
    processes('sim_node', *robot, f'initial_positions:=[{", ".join(map(str, Q0))}]',
              'lockstep:=true', 'pace:=2.0', 'load_link:=link7', 'position_noise:=2e-5',
              'effort_noise:=0.05',
              f'load:=[{", ".join(map(str, [LOAD[0], *LOAD[1], *LOAD[2]]))}]',
              f'load_at:={PICKED_AT}')
    processes('trajectory_node', *robot, 'use_sim_time:=true')
    processes('dynamics_node', *robot, 'use_sim_time:=true', 'mode:=none', 'outputs:=[""]',
              'external_torques:=true', f"contact_thresholds:='{CONTACT}'",
              f"collision_thresholds:='{COLLISION}'", 'payload_link:=link7',
              'payload_window:=1.5', 'joint_states_qos:=reliable', 'state_queue:=1000')
    client.wait(lambda: payloads, 60.0, 'the payload in use on ~/payload')
    assert payloads[-1].inertia.m == 0.0 and payloads[-1].header.frame_id == 'link7'
    # the observer running: only then does the loop start, so that dynamics_node sees the
    # load come (lockstep: nothing moves before the first command)
    client.wait(lambda: any(r.name == 'dynamics_node' and 'observer started' in r.msg
                            for r in logs), 180.0, "dynamics_node's observer")
    # and both nodes matched with the plant's states (a state sent before is lost to them)
    client.wait(lambda: client.node.count_subscribers('/joint_states') >= 2, 120.0,
                "the nodes' joint_states subscriptions")
    client.spin(1.0)
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    pub.publish(held(model))
    estimate_payload = client.node.create_client(Trigger, '/dynamics_node/estimate_payload')
    parameters = client.node.create_client(SetParameters, '/dynamics_node/set_parameters')

    def now():
        return clock[-1].clock.sec + 1e-9 * clock[-1].clock.nanosec if clock else 0.0

    # held still since the load came (and still held when asked, however late): the pose
    # shows the mass, not all of the centre of mass
    client.wait(lambda: now() >= PICKED_AT + 2.0, 120.0, 'the arm held with its load')
    answer = client.call(estimate_payload, Trigger.Request())
    assert not answer.success and 'not applied' in answer.message, answer.message
    mass = float(re.search(r'mass ([0-9.]+) \+-', answer.message).group(1))
    assert abs(mass / LOAD[0] - 1.0) < 0.02, answer.message
    assert 'centre of mass' in answer.message, answer.message
    assert re.search(r'Move (joint\d, )*joint\d', answer.message), answer.message
    assert len(payloads) == 1                               # nothing applied
    # the held load reads as an external torque: a collision, latched
    client.wait(lambda: 2 in [m.data for m in levels], 30.0, 'the load read as a collision')

    # in motion: the window shows the load, which is applied to commands and observer at once
    result = client.call(parameters, SetParameters.Request(parameters=[
        Parameter('payload_window', value=5.0).to_parameter_msg()])).results[0]
    assert result.successful
    motion, planned = moving(model)
    started = now()
    pub.publish(motion)
    client.wait(lambda: now() >= started + 6.0, 120.0, 'six seconds of motion')
    answer = client.call(estimate_payload, Trigger.Request())
    assert answer.success and answer.message.startswith('applied'), answer.message
    client.wait(lambda: len(payloads) == 2, 30.0, 'the estimated load on ~/payload')
    applied = payloads[-1].inertia
    com = np.array([applied.com.x, applied.com.y, applied.com.z])
    assert abs(applied.m / LOAD[0] - 1.0) < 0.02, applied.m
    assert np.linalg.norm(com - LOAD[1]) < 0.01, com
    applied_at = stamp(payloads[-1])
    assert applied_at < started + MOTION - 5.0, 'applied too late to judge the rest'
    rearm = client.call(client.node.create_client(Trigger, '/dynamics_node/rearm'),
                        Trigger.Request())
    assert rearm.success, rearm.message
    end = started + MOTION + 0.3
    client.wait(lambda: now() >= end, 120.0, 'the end of the motion')
    client.wait(lambda: estimate and stamp(estimate[-1]) >= end - 0.1, 120.0,
                'the external torques to the end of the motion')
    client.spin(0.5)

    # gravity compensation with the applied load: its error a few % of the load's pull
    q = planned
    values = [applied.m, *com, applied.ixx, applied.ixy, applied.ixz, applied.iyy, applied.iyz,
              applied.izz]
    carried = model.with_payload('link7', values[0], values[1:4], values[4:])
    true_g = md.gravity_torques(truth, q)
    without = np.sqrt(((md.gravity_torques(model, q) - true_g) ** 2).mean())
    with_it = np.sqrt(((md.gravity_torques(carried, q) - true_g) ** 2).mean())
    assert with_it < 0.05 * without, (with_it, without)
    # after the rearm: free, and the external torques under the contact levels to the end
    said = [m.data for m in levels]
    last_collision = max(k for k, level in enumerate(said) if level == 2)
    # the load applied restarts the observer on the new model: not watching (3) while it
    # settles, then free, and nothing since
    assert said[last_collision + 1:] == [3, 0], said
    late = np.array([m.effort for m in estimate if stamp(m) > applied_at + 0.2])
    assert len(late) > 1000 and np.abs(late).max() < CONTACT, np.abs(late).max(axis=0)
    cleared = client.call(client.node.create_client(Trigger, '/dynamics_node/clear_payload'),
                          Trigger.Request())
    assert cleared.success
    client.wait(lambda: len(payloads) == 3 and payloads[-1].inertia.m == 0.0, 30.0,
                'the load put down on ~/payload')


def test_the_estimate_service_on_windows_good_static_and_empty():
    """
    The service's own logic in this process: the node's window filled directly, no DDS.

    An empty window and no payload_link say so; a static one is not applied and names the
    joints to move; one broken by gaps into stretches too short to filter says so; a moving
    one, a gap in it or not, is applied to the model the commands use; a bad payload keeps
    the one in use; ~/clear_payload puts it down.
    """
    from manipulator_dynamics.nodes.dynamics_node import DynamicsNode
    model = md.load_model(ARM)
    held = model.with_payload('link7', *LOAD)
    with in_process(DynamicsNode, urdf_path=ARM, mode='none', payload_link='link7') as node:

        def ask(window):
            node.payload.window.clear()
            for stamp_ns, q, qd, tau in window:
                node.payload.on_state(q, qd, tau, stamp_ns)
            return node.payload._estimate(Trigger.Request(), Trigger.Response())

        answer = ask([])
        assert not answer.success and 'not estimated: 0 joint states' in answer.message
        rng = np.random.default_rng(5)
        t = np.arange(0.0, 4.0, 1e-3)
        w = np.linspace(0.6, 1.3, model.n)
        q = Q0 + 0.4 * np.sin(w * t[:, None]) * np.sin(np.pi * t / 4.0)[:, None]
        qd = np.gradient(q, t, axis=0)
        tau = md.inverse_dynamics(held, q, qd, np.gradient(qd, t, axis=0), friction=True)
        tau += 0.05 * rng.normal(size=tau.shape)
        stamps = (1e9 * (10.0 + t)).round().astype(np.int64)
        static = [(s, Q0 + 2e-5 * rng.normal(size=model.n), np.zeros(model.n),
                   md.gravity_torques(held, Q0) + 0.05 * rng.normal(size=model.n))
                  for s in stamps]
        answer = ask(static)
        assert not answer.success and 'not applied' in answer.message, answer.message
        assert re.search(r'Move (joint\d, )*joint\d', answer.message), answer.message
        assert node.params.payload == [0.0]
        # a starved publisher's window, a gap every 0.3 s: no stretch long enough to filter,
        # said, and nothing changes
        kept = (t % 0.3) < 0.25
        answer = ask(list(zip(stamps[kept], q[kept], qd[kept], tau[kept])))
        assert not answer.success and 'none long enough to filter' in answer.message
        assert 'the payload in use is unchanged' in answer.message and \
            node.params.payload == [0.0]
        # one gap of 50 ms: the stretches either side are used
        kept = np.abs(t - 2.0) > 0.025
        answer = ask(list(zip(stamps[kept], q[kept], qd[kept], tau[kept])))
        assert answer.success, answer.message
        mass, com = node.params.payload[0], np.array(node.params.payload[1:4])
        assert abs(mass / LOAD[0] - 1) < 0.02 and np.linalg.norm(com - LOAD[1]) < 0.01
        carried = node.source.model                       # what the commands compute with
        values = node.params.payload
        expected = model.with_payload('link7', values[0], values[1:4], values[4:] or None)
        assert np.allclose(md.gravity_torques(carried, Q0), md.gravity_torques(expected, Q0),
                           rtol=1e-12)
        # a payload the node refuses leaves the one in use
        result = node.set_parameters([Parameter('payload', value=[-1.0, 0.0, 0.0, 0.0])])[0]
        assert not result.successful and 'mass must be' in result.reason
        assert node.params.payload[0] == mass and node.source.model is carried
        answer = node.payload._clear(Trigger.Request(), Trigger.Response())
        assert answer.success and node.params.payload == [0.0]
        node.set_parameters([Parameter('payload_link', value='')])
        answer = ask(list(zip(stamps, q, qd, tau)))
        assert not answer.success and 'payload_link is empty' in answer.message


@pytest.mark.parametrize('load, complaint', [
    (('nolink', [1.0]), "load_link: .*'nolink' is not a link"),
    (('link7', [-1.0]), 'load_link: .*mass must be finite and >= 0'),
    (('link7', [1.0, 0.0]), 'load: needs 1, 4 or 10 numbers')])
def test_sim_node_refuses_a_bad_load_by_name(load, complaint):
    import rclpy
    from manipulator_dynamics.nodes._parameters import ConfigurationError
    from manipulator_dynamics.nodes.sim_node import SimNode
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(ConfigurationError, match=complaint):
            SimNode(context=context, parameter_overrides=[
                Parameter('load_link', value=load[0]), Parameter('load', value=load[1])])
    finally:
        rclpy.try_shutdown(context=context)
