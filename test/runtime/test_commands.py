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

"""The state-to-command path without a node: the laws, the order, the limits, the compiled step."""

from types import SimpleNamespace

from helpers import Said
import manipulator_dynamics as md
from manipulator_dynamics import control
from manipulator_dynamics.names import JointNamesError
from manipulator_dynamics.runtime.commands import (clamp_efforts, command_order, CompiledStep,
                                                   Desired, Law)
from manipulator_dynamics.runtime.dynamics import Compiled, Interpreted
from manipulator_dynamics.runtime.refused import BadMessage
import numpy as np
import pytest

SECOND = 1_000_000_000


def test_efforts_within_or_at_their_limits_pass_and_others_are_clamped_by_name(model):
    limit = model.effort_limit
    warnings = Said()
    at = np.where(np.arange(model.n) % 2, limit, -limit)
    assert clamp_efforts(model, at, warnings) is at and not warnings.lines
    over = at.copy()
    over[[1, 4]] *= 1.5
    clamped = clamp_efforts(model, over, warnings)
    np.testing.assert_array_equal(clamped, at)
    assert warnings.lines == [('clamped', 'efforts clamped to the URDF limits: '
                              f'{model.joint_names[1]}, {model.joint_names[4]}')]
    assert over[1] == 1.5 * at[1]             # the caller's array is left as it was


def test_the_command_order_is_the_controller_s_and_a_joint_not_the_model_s_is_named(model):
    names = model.joint_names
    np.testing.assert_array_equal(command_order(model, ['']), np.arange(model.n))
    np.testing.assert_array_equal(command_order(model, []), np.arange(model.n))
    some = [names[3], '', names[0], names[5]]
    order = command_order(model, some)
    assert order.dtype == np.int64
    assert [names[i] for i in order] == [names[3], names[0], names[5]]
    with pytest.raises(JointNamesError, match='gripper_finger'):
        command_order(model, [names[0], 'gripper_finger'])
    with pytest.raises(JointNamesError, match=names[2]):
        command_order(model, [names[2], names[1], names[2]])


@pytest.mark.parametrize('dynamics', [Compiled, Interpreted], ids=['compiled', 'interpreted'])
def test_each_mode_s_law_is_the_library_s_dynamics(model, dynamics):
    rng = np.random.default_rng(3)
    n = model.n
    q, qd, qdd = rng.uniform(-1, 1, size=(3, n))
    g = md.gravity_torques(model, q)
    friction = control.friction_torque(model, qd)
    expected = {
        ('gravity_compensation', False): g,
        ('gravity_compensation', True): g + friction,
        ('inverse_dynamics', False): md.inverse_dynamics(model, q, qd, qdd),
        ('inverse_dynamics', True): md.inverse_dynamics(model, q, qd, qdd, friction=True),
    }
    for (mode, with_friction), tau in expected.items():
        law = Law(mode, with_friction)
        assert law.commands and law.desired == (mode == 'inverse_dynamics')
        np.testing.assert_allclose(law.efforts(dynamics, model, q, qd, qdd), tau,
                                   rtol=1e-10, atol=1e-10)
    # a state without velocities: gravity alone (no friction without a rate), or at rest
    np.testing.assert_allclose(Law('gravity_compensation', True).efforts(
        dynamics, model, q, None), g, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(Law('inverse_dynamics', True).efforts(
        dynamics, model, q, None, qdd), md.inverse_dynamics(model, q, np.zeros(n), qdd,
                                                            friction=True),
        rtol=1e-10, atol=1e-10)
    # g(q) computed already is used as it is, not again
    given = np.arange(n, dtype=float)
    assert Law('gravity_compensation').efforts(dynamics, model, q, qd, g=given) is given
    none = Law('none', True)
    assert not none.commands and none.efforts(dynamics, model, q, qd, qdd) is None


def test_an_unknown_mode_is_refused_by_name():
    with pytest.raises(ValueError, match="'gravity'.*gravity_compensation, inverse_dynamics"):
        Law('gravity')


def desired_msg(names, accelerations, points=1):
    point = SimpleNamespace(accelerations=list(accelerations))
    return SimpleNamespace(joint_names=list(names), points=[point] * points)


def test_desired_accelerations_are_taken_by_name_and_zero_once_stale(model):
    said = []
    desired = Desired(0.2, said.append)
    n, names = model.n, model.joint_names
    np.testing.assert_array_equal(desired.at(0, n), np.zeros(n))
    assert not said                           # none given yet: zero, nothing to say
    qdd = np.arange(1.0, n + 1)
    shuffled = np.random.default_rng(0).permutation(n)
    desired.take(model, desired_msg([names[i] for i in shuffled], qdd[shuffled]), 5 * SECOND)
    np.testing.assert_array_equal(desired.at(5 * SECOND + SECOND // 5, n), qdd)
    np.testing.assert_array_equal(desired.at(5 * SECOND + SECOND // 5 + 1, n), np.zeros(n))
    assert said == ['inverse_dynamics: no fresh desired_state, using zero accelerations']
    desired.timeout = 1.0
    np.testing.assert_array_equal(desired.at(5 * SECOND + SECOND // 2, n), qdd)
    desired.clear()
    np.testing.assert_array_equal(desired.at(5 * SECOND, n), np.zeros(n))


@pytest.mark.parametrize('msg, kind, text', [
    (lambda names: desired_msg(names, np.zeros(len(names)), points=2), 'points', 'exactly one'),
    (lambda names: desired_msg(names, np.zeros(len(names) - 1)), 'lengths', 'one acceleration'),
    (lambda names: desired_msg(names[:-1], np.zeros(len(names) - 1)), 'missing', None),
    (lambda names: desired_msg(names, [np.nan] + [0.0] * (len(names) - 1)), 'non-finite',
     'non-finite'),
])
def test_a_desired_state_refused_says_why_and_keeps_the_last_one(model, msg, kind, text):
    desired = Desired(1.0, lambda text: None)
    names, n = model.joint_names, model.n
    desired.take(model, desired_msg(names, np.ones(n)), 0)
    with pytest.raises(BadMessage) as refused:
        desired.take(model, msg(names), 1)
    assert refused.value.kind == kind
    assert (text or names[-1]) in str(refused.value)
    np.testing.assert_array_equal(desired.at(1, n), np.ones(n))


def test_the_compiled_step_commands_what_the_general_path_commands(model):
    """Each law, one state's bytes to the command's: the reader, the law, the order, the clamp."""
    pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]): '
                        "the states are rclpy's serialised messages")
    from manipulator_dynamics.nodes.messages import deserialize_joint_state
    from manipulator_dynamics.rigid.status import OK
    from manipulator_dynamics.runtime.joint_states import JointStates
    from manipulator_dynamics.control import BEYOND_LIMIT
    from manipulator_dynamics.wire import float64_serialiser, NOT_FRESH, NOT_THIS_LAYOUT
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    names, n = list(model.joint_names), model.n
    rng = np.random.default_rng(7)
    given = names[::-1] + ['other_robot_joint']          # another order, and a joint not ours
    rows = [given.index(name) for name in names]

    def state_bytes(q, qd, effort, stamp):
        values = [np.append(a, 0.5)[np.argsort(rows + [n])] for a in (q, qd, effort)]
        msg = JointState(name=given, position=values[0].tolist(), velocity=values[1].tolist(),
                         effort=values[2].tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, SECOND)
        return serialize_message(msg)

    order = command_order(model, [names[2], names[0], names[4]])
    limits = model.effort_limit
    dynamics = Compiled()
    qdd_d = rng.uniform(-1, 1, n)
    for mode, with_friction in (('gravity_compensation', False), ('gravity_compensation', True),
                                ('inverse_dynamics', False), ('inverse_dynamics', True)):
        law = Law(mode, with_friction)
        states = JointStates(model, 0.5, deserialize=deserialize_joint_state)
        stamp = 10 * SECOND
        states.read_serialized(state_bytes(*rng.uniform(-0.5, 0.5, (3, n)), stamp), stamp)
        serialise = float64_serialiser(len(order))
        step = CompiledStep.plan(model, states.front(), law, order, limits, serialise.values, 0.5)
        assert step.takes_desired == law.desired
        kept = []
        for _ in range(3):
            stamp += SECOND // 1000
            q, qd, effort = rng.uniform(-0.5, 0.5, (3, n))
            desired = qdd_d if step.takes_desired else None
            status, at, state = step.take(state_bytes(q, qd, effort, stamp), desired,
                                          states.newest, stamp)
            assert status == OK and at == stamp
            np.testing.assert_array_equal(state, [q, qd, effort])
            expected = law.efforts(dynamics, model, q, qd, qdd_d)
            np.testing.assert_allclose(step.tau, expected, rtol=1e-12, atol=1e-12)
            sent = deserialize_message(serialise.written(), Float64MultiArray).data
            np.testing.assert_array_equal(sent, step.tau[order])
            states.take(*state, at)
            kept.append(state)
            step.renew()
        assert len({id(s) for s in kept}) == len(kept)   # each state read into its own arrays
        # an effort beyond its limit, a stale or an old stamp, another layout: not taken
        tight = CompiledStep.plan(model, states.front(), law, order, limits * 1e-6,
                                  serialise.values, 0.5)
        desired = qdd_d if law.desired else None
        assert tight.take(state_bytes(q, qd, effort, stamp + 1), desired, states.newest,
                          stamp + 1)[0] == BEYOND_LIMIT
        old = state_bytes(q, qd, effort, stamp - 1)
        assert step.take(old, desired, states.newest, stamp)[0] == NOT_FRESH
        stale = state_bytes(q, qd, effort, stamp + 1)
        assert step.take(stale, desired, states.newest, stamp + SECOND)[0] == NOT_FRESH
        fewer = JointState(name=given, position=np.zeros(n + 1).tolist())
        fewer.header.stamp.sec = 20
        assert step.take(serialize_message(fewer), qdd_d, states.newest, 20 * SECOND)[0] == \
            NOT_THIS_LAYOUT
    # nothing to plan: no layout, no law, no buffer, no order
    front = states.front()
    assert CompiledStep.plan(model, None, law, order, limits, serialise.values, 0) is None
    assert CompiledStep.plan(model, front, Law('none'), order, limits, serialise.values, 0) \
        is None
    assert CompiledStep.plan(model, front, law, order, limits, None, 0) is None
    assert CompiledStep.plan(model, front, law, None, limits, serialise.values, 0) is None
