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

"""flexible_trajectory_node as a real process over DDS: the library's schemes, bad input."""

import os

from helpers import ROOT
import manipulator_dynamics as md
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from builtin_interfaces.msg import Duration  # noqa: E402, I100
from manipulator_dynamics.runtime.follower import Plan  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64MultiArray, String  # noqa: E402, I100
from std_srvs.srv import Trigger  # noqa: E402, I100
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402, I100

CONFIG = os.path.join(ROOT, 'config', 'flexible_two_link.yaml')
OUT = '/flexible_trajectory_node/flexible_trajectory'
DEFLECTIONS = '/flexible_trajectory_node/tip_deflections'
LATCHED_NAMES = '/flexible_trajectory_node/link_names'


def target(order=('joint2', 'joint1'), times=(0.0, 0.05, 0.1, 0.15, 0.2), nan=False):
    """Make the paper's 2-link move (joint 1 by 0.5 rad, joint 2 by 1.0 rad in 0.2 s), by name."""
    msg = JointTrajectory(joint_names=list(order))
    goal = {'joint1': 0.5, 'joint2': 1.0}
    for i, ti in enumerate(times):
        s = min(max(ti / 0.2, 0.0), 1.0)
        b = 10 * s**3 - 15 * s**4 + 6 * s**5
        positions = [goal[j] * b for j in order]
        if nan and i == 2:
            positions[0] = float('nan')
        point = JointTrajectoryPoint(positions=positions)
        point.time_from_start = Duration(sec=int(ti), nanosec=int(round((ti % 1) * 1e9)))
        msg.points.append(point)
    return msg


def started(client, processes, *params):
    """Start the node on the 2-link config; return it and its link names once it has them."""
    node = processes('flexible_trajectory_node', f'arm_config:={CONFIG}', *params)
    names = client.listen(String, LATCHED_NAMES, _latched())
    client.wait(lambda: names, what='the node to start', timeout=60)
    return node, names


def start(client, processes, *params):
    node, names = started(client, processes, 'settle:=0.3', 'output_rate:=100.0', *params)
    out = client.listen(JointTrajectory, OUT)
    deflections = client.listen(Float64MultiArray, DEFLECTIONS)
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    return node, pub, out, deflections, names


def _latched():
    from rclpy.qos import DurabilityPolicy, QoSProfile
    return QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def test_flexible_trajectory_equals_the_library(client, processes):
    node, pub, out, deflections, names = start(client, processes)
    assert names[0].data == '[link1, link2]'
    msg = target()
    pub.publish(msg)
    client.wait(lambda: out and deflections, what='the flexible trajectory')
    arm = md.FlexibleArm.from_yaml(CONFIG)
    plan = Plan(arm.model, msg)
    grid = 0.001 * np.arange(501)                         # 0.2 s of motion + 0.3 s settling
    result = md.flexible_inverse_dynamics(arm, grid, plan.hermite(np.minimum(grid, 0.2)))
    keep = np.arange(0, 501, 10)                          # 100 points per second
    got = out[0]
    assert got.joint_names == ['joint2', 'joint1']
    assert len(got.points) == keep.size
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in got.points]
    np.testing.assert_allclose(times, grid[keep], atol=1e-9)
    effort = np.array([p.effort for p in got.points])[:, ::-1]        # back to joint1, joint2
    np.testing.assert_allclose(effort, result.tau[keep], rtol=1e-9, atol=1e-12)
    reached = np.array([p.positions for p in got.points])[:, ::-1]
    np.testing.assert_allclose(reached, result.trajectory.q[keep], rtol=1e-9, atol=1e-12)
    layout = [(d.label, d.size) for d in deflections[0].layout.dim]
    assert layout == [('point', keep.size), ('link', 2), ('xyz', 3)]
    np.testing.assert_allclose(np.reshape(deflections[0].data, (-1, 2, 3)),
                               result.tip_deflection[keep], rtol=1e-9, atol=1e-12)
    # the flexible arm lags and rings: the reached angles are not the target's
    assert np.abs(reached[-1] - [0.5, 1.0]).max() > 1e-3
    code, output = node.stop()
    assert code == 0 and 'Traceback' not in output, output


@pytest.mark.parametrize('bad, reason', [
    (target(order=('joint1',)), 'lacks joints joint2'),
    (target(times=(0.0, 0.1, 0.1, 0.2)), 'does not come after point'),
    (target(nan=True), 'positions of point 2 is nan'),
])
def test_bad_targets_are_rejected_and_the_node_serves_on(client, processes, bad, reason):
    node, pub, out, _, _ = start(client, processes)
    pub.publish(bad)
    client.spin(1.0)
    assert not out
    pub.publish(target())
    client.wait(lambda: out, what='the flexible trajectory after the bad one')
    code, output = node.stop()
    assert code == 0, output
    assert 'target rejected' in output and reason in output, output


def test_a_step_too_coarse_for_the_arm_is_rejected_with_the_step_to_use(client, processes):
    node, pub, out, _, _ = start(client, processes, 'dt:=0.02')
    pub.publish(target())
    client.spin(1.0)
    assert not out
    code, output = node.stop()
    assert code == 0, output
    assert 'too coarse for the first bending mode' in output and 'use steps of at most' in output


def test_a_missing_arm_config_stops_the_node_with_a_reason(processes):
    node = processes('flexible_trajectory_node', 'arm_config:=/nonexistent/arm.yaml')
    code, output = node.wait()
    assert code == 2, output
    assert 'not started: parameter arm_config: no such file' in output
    assert 'Traceback' not in output


# ---------------------------------------------------------------------------------------------
# mode stream: one JointState target per step
# ---------------------------------------------------------------------------------------------

STATE = '/flexible_trajectory_node/flexible_state'


def stream_targets(steps=120):
    """Sample the paper's 2-link move (0.1 s) every 1 ms: ``q (steps, 2)`` and stamps (ns)."""
    t = 1e-3 * np.arange(steps)
    s = np.clip(t / 0.1, 0.0, 1.0)[:, None]
    return np.array([0.5, 1.0]) * (10 * s**3 - 15 * s**4 + 6 * s**5), (1e9 * t).astype(int) + 7


def send_target(client, pub, replies, q, stamp, order=('joint2', 'joint1')):
    """Publish one target (joints in ``order``) and wait for the node's answer to it."""
    msg = JointState(name=list(order), position=[float(q[int(j[-1]) - 1]) for j in order])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp), 10**9)
    before = len(replies)
    pub.publish(msg)
    client.wait(lambda: len(replies) > before, timeout=10, what=f'the answer to stamp {stamp}')
    return replies[-1]


def test_stream_mode_steps_once_per_target_as_the_library(client, processes):
    node, _ = started(client, processes, 'mode:=stream', 'target_topic:=/reference')
    replies = client.listen(JointState, STATE)
    deflections = client.listen(Float64MultiArray, DEFLECTIONS)
    pub = client.publisher(JointState, '/reference')
    client.wait_for_subscriber(pub)
    q, stamps = stream_targets()
    arm = md.FlexibleArm.from_yaml(CONFIG)
    library = md.FlexibleStream(arm, q[0], 1e-3)
    expected = [library.sample] + [library.step(x) for x in q[1:]]
    got = [send_target(client, pub, replies, q[k], stamps[k]) for k in range(60)]
    # a target the stream cannot take is rejected; the stream goes on as if it never came
    bad = JointState(name=['joint1', 'joint2'], position=[0.1, float('nan')])
    pub.publish(bad)
    client.spin(0.3)
    assert len(replies) == 60
    got += [send_target(client, pub, replies, q[k], stamps[k]) for k in range(60, len(q))]
    for reply, sample, stamp in zip(got, expected, stamps):
        assert reply.name == ['joint1', 'joint2']
        assert reply.header.stamp.sec * 10**9 + reply.header.stamp.nanosec == stamp
        np.testing.assert_allclose(reply.effort, sample.tau, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(reply.position, sample.q, rtol=1e-12, atol=1e-15)
    client.wait(lambda: len(deflections) == len(q), what='every tip deflection')
    np.testing.assert_allclose(np.reshape(deflections[-1].data, (2, 3)),
                               expected[-1].tip_deflection, rtol=1e-12, atol=1e-15)
    assert np.abs(expected[-1].tip_deflection).max() > 1e-4                 # it bends
    # ~/reset: the next target starts a new stream, at rest where it is
    answer = client.call(client.node.create_client(Trigger, '/flexible_trajectory_node/reset'),
                         Trigger.Request())
    assert answer.success and 'after 119 steps' in answer.message
    fresh = send_target(client, pub, replies, q[-1], stamps[-1] + 10**6)
    np.testing.assert_allclose(fresh.effort, md.FlexibleStream(arm, q[-1], 1e-3).sample.tau,
                               rtol=1e-12, atol=1e-15)
    code, output = node.stop()
    assert code == 0 and 'Traceback' not in output, output
    assert "target rejected: target position of 'joint2' is nan" in output, output


def test_stream_mode_refuses_a_step_too_coarse_for_the_arm(processes):
    node = processes('flexible_trajectory_node', f'arm_config:={CONFIG}', 'mode:=stream',
                     'dt:=0.02')
    code, output = node.wait()
    assert code == 2, output
    assert 'not started: dt:' in output and 'use steps of at most' in output, output
    assert 'Traceback' not in output
