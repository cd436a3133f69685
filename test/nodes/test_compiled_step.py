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
dynamics_node's state path in one compiled call, against its general path, state by state.

Two nodes in this process, one as it is and one whose compiled step always declines, are handed
the same driver's states as a raw subscription hands them (serialised bytes), through the
node's own state callback: a walk of the arm, a value that is not finite, a state out of order,
one too old, efforts beyond their limits (clamped), a driver naming the joints in its own order
beside another robot's.  Each mode and law (gravity, with friction, the inverse dynamics of a
desired_state), a controller that takes some joints in its own order, and drivers that fill
positions only or all three fields.  What each node sends, counts and keeps must be the same,
and the compiled step must have taken every state it may take.  No executor and no DDS: the
machine's load changes nothing here.
"""

import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from manipulator_dynamics.nodes.dynamics_node import DynamicsNode  # noqa: E402, I100
import rclpy  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

URDF = robots.path('demo_arm')
MS = 1_000_000


@pytest.fixture(scope='module')
def context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.shutdown(context=context)


class Tap:
    """The command publisher, keeping what it is given to publish."""

    def __init__(self, publisher):
        self.publisher, self.sent = publisher, []

    def publish(self, data):
        self.sent.append(np.array(deserialize_message(data, Float64MultiArray).data))

    def __getattr__(self, name):
        return getattr(self.publisher, name)


def make_node(context, name, compiled, params):
    node = DynamicsNode(node_name=name, context=context, parameter_overrides=[
        Parameter('urdf_path', value=URDF), Parameter('controller_name', value='-'),
        Parameter('outputs', value=['']), Parameter('stale_after', value=0.5)] + [
        Parameter(key, value=value) for key, value in params.items()])
    assert node.kernels.dynamics.ready, 'the kernels are compiled before the suite (dev.py)'
    node.command.pub = Tap(node.command.pub)
    step, node.taken = node._compiled_step, []

    def counted(*args):
        node.taken.append(step(*args) if compiled else False)
        return node.taken[-1]
    node._compiled_step = counted
    return node


def states(model, now, fields, rng):
    """``[(bytes, kind)]``: a driver's states, and the ones the node must refuse or clamp."""
    names = list(reversed(model.joint_names)) + ['gripper_finger']    # its own order
    q = np.full(model.n, 0.2)

    def state(stamp, q, qd, bad=None):
        values = [np.r_[q[::-1], 0.01], np.r_[qd[::-1], 0.0],
                  np.r_[md.gravity_torques(model, q)[::-1], 0.0]][:fields]
        if bad is not None:
            values[bad[0]][bad[1]] = np.nan
        msg = JointState(name=names, position=values[0].tolist(),
                         velocity=values[1].tolist() if fields > 1 else [],
                         effort=values[2].tolist() if fields > 2 else [])
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        return serialize_message(msg)

    out = [(state(now - 2000 * MS, q, np.zeros(model.n)), 'stale')]
    for k in range(60):
        qd = rng.uniform(-1, 1, model.n)
        q = np.clip(q + 0.05 * qd, model.lower, model.upper)
        stamp = now + (k - 60) * MS
        if k == 20:
            out.append((state(stamp, q, qd, bad=(fields - 1, 3)), 'not finite'))
        elif k == 30:
            out.append((state(stamp - 40 * MS, q, qd), 'out of order'))
        else:
            out.append((state(stamp, q, qd), 'driver'))
    return out


@pytest.mark.parametrize('mode, friction, joints, fields', [
    ('gravity_compensation', False, [], 1),
    ('gravity_compensation', True, [], 3),
    ('inverse_dynamics', True, ['joint6', 'joint2', 'joint4', 'joint1'], 2)])
def test_the_compiled_step_sends_what_the_general_path_sends(context, mode, friction, joints,
                                                             fields):
    params = {'mode': mode, 'friction_compensation': friction, 'command_joints': joints or ['']}
    nodes = [make_node(context, 'compiled_step', True, params),
             make_node(context, 'general_path', False, params)]
    try:
        model = nodes[0].source.model
        now = nodes[0].now_ns()
        run = states(model, now, fields, np.random.default_rng(fields))
        # in the last states, accelerations that take some efforts beyond their limits
        desired = JointTrajectory(joint_names=list(model.joint_names), points=[
            JointTrajectoryPoint(accelerations=np.linspace(-400, 400, model.n).tolist())])
        kept = {node: [] for node in nodes}     # each state's arrays, as a reader keeps them
        for k, (data, _) in enumerate(run):
            for node in nodes:
                if k == 45 and mode == 'inverse_dynamics':
                    node._on_desired(desired)
                node._on_state(data, {'received_timestamp': now})
                kept[node].append(node.latest)
        compiled, general = nodes
        for ours, theirs in zip(kept[compiled], kept[general]):    # none written over since
            for a, b in zip(ours or (), theirs or ()):
                np.testing.assert_array_equal(a, b)
        assert len(compiled.command.pub.sent) == len(general.command.pub.sent) > 50
        for ours, theirs in zip(compiled.command.pub.sent, general.command.pub.sent):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
        for count in ('read', 'stale'):
            assert getattr(compiled, count) == getattr(general, count), count
        assert compiled.stale == 1
        assert (compiled.command.sent, compiled.command.clamped) == \
            (general.command.sent, general.command.clamped)
        for ours, theirs in zip(compiled.latest, general.latest):
            np.testing.assert_array_equal(ours, theirs)
        # every driver's state the compiled step took, but those beyond the effort limits
        kinds = [kind for _, kind in run]
        took = dict(zip(range(len(kinds)), compiled.taken))
        drivers = [k for k, kind in enumerate(kinds) if kind == 'driver']
        clamped = general.command.clamped
        assert sum(took[k] for k in drivers) == len(drivers) - clamped
        assert took[kinds.index('not finite')] is False
        if mode == 'inverse_dynamics':
            assert 0 < clamped < len(drivers)
        else:
            assert clamped == 0
    finally:
        for node in nodes:
            node.destroy_node()


def heavier(urdf_path):
    """Return the URDF's text with its last link's mass doubled."""
    with open(urdf_path, encoding='utf-8') as f:
        text = f.read()
    at = text.rindex('<mass value="') + len('<mass value="')
    end = text.index('"', at)
    return text[:at] + repr(2 * float(text[at:end])) + text[end:]


def test_the_compiled_step_follows_what_changes_between_states(context):
    """
    What changes while states flow reaches the compiled step at the next state it may take.

    Its call's fixed arguments are made once and kept (``DynamicsNode._plan``): a parameter
    changed (friction, the mode, the clamp, the command joints, the staleness bound), a new
    model, a driver of another layout once and then for good must each be followed, as the
    general path follows them, and the compiled step must take the new layout's states.
    """
    params = {'mode': 'gravity_compensation', 'friction_compensation': False}
    nodes = [make_node(context, 'compiled_step', True, params),
             make_node(context, 'general_path', False, params)]
    try:
        model = nodes[0].source.model
        now = nodes[0].now_ns()
        run = states(model, now, 3, np.random.default_rng(7))
        positions_only = states(model, now, 1, np.random.default_rng(8))
        run[40] = positions_only[40]            # another driver's layout, once, in order
        run[46:] = positions_only[46:]          # and from here on, for good
        desired = JointTrajectory(joint_names=list(model.joint_names), points=[
            JointTrajectoryPoint(accelerations=np.linspace(-400, 400, model.n).tolist())])
        changes = {12: [Parameter('friction_compensation', value=True)],
                   24: [Parameter('mode', value='inverse_dynamics')],
                   36: [Parameter('clamp_efforts', value=False)],
                   44: [Parameter('command_joints', value=['joint3', 'joint1', 'joint7'])],
                   56: [Parameter('stale_after', value=0.003)]}
        for k, (data, _) in enumerate(run):
            for node in nodes:
                if k in changes:
                    assert all(r.successful for r in node.set_parameters(changes[k]))
                if k == 24:
                    node._on_desired(desired)
                if k == 50:
                    assert node.source.load(heavier(URDF), 'a heavier arm') is None
                node._on_state(data, {'received_timestamp': now})
        compiled, general = nodes
        assert len(compiled.command.pub.sent) == len(general.command.pub.sent) > 40
        for ours, theirs in zip(compiled.command.pub.sent, general.command.pub.sent):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
        assert {len(c) for c in compiled.command.pub.sent} == {model.n, 3}
        for count in ('read', 'stale'):
            assert getattr(compiled, count) == getattr(general, count), count
        assert compiled.stale > 1                   # the last states, past the new bound
        assert (compiled.command.sent, compiled.command.clamped) == \
            (general.command.sent, general.command.clamped)
        assert 0 < general.command.clamped          # clamped before clamp_efforts went off
        # the compiled step took the new layout after one refusal, and the new model's states
        # after the first (its layout learnt afresh), until they were stale
        taken = dict(enumerate(compiled.taken))
        assert [taken[k] for k in range(45, 56)] == \
            [True, False] + [True] * 3 + [False] + [True] * 5, taken
    finally:
        for node in nodes:
            node.destroy_node()
