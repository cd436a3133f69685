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

"""JointStates, the one reader of joint_states (merged by name), against a per-joint reference."""

import math

import manipulator_dynamics as md
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels): the messages are made and serialised by it')
from manipulator_dynamics.nodes import messages  # noqa: E402, I100
from manipulator_dynamics.runtime.joint_states import JointStates  # noqa: E402
from manipulator_dynamics.runtime.refused import BadMessage  # noqa: E402
from manipulator_dynamics.wire import JointStateLayout  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

SECOND = 1_000_000_000


def message(names, position, velocity=(), effort=(), stamp=0):
    msg = JointState(name=list(names), position=[float(x) for x in position],
                     velocity=[float(x) for x in velocity], effort=[float(x) for x in effort])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, SECOND)
    return msg


class Reference:
    """The merge as the docstring states it, one joint at a time (the oracle)."""

    def __init__(self, model, stale_after):
        self.names, self.stale_after, self.joints = model.joint_names, stale_after, {}

    def read(self, msg, now):
        ours = [(i, n) for i, n in enumerate(msg.name) if n in self.names]
        if len(set(msg.name)) != len(msg.name):
            return 'duplicated'
        fields = {}
        for field in ('position', 'velocity', 'effort'):
            values = list(getattr(msg, field))
            if not values and field != 'position':
                continue
            if len(values) != len(msg.name):
                return 'lengths'
            if not all(math.isfinite(values[i]) for i, _ in ours):
                return 'non-finite'
            fields[field] = values
        if not ours:
            return None
        stamp = msg.header.stamp.sec * SECOND + msg.header.stamp.nanosec
        if stamp and any(self.joints.get(n, {}).get('stamp', 0) > stamp for _, n in ours):
            return 'out of order'
        for i, n in ours:
            self.joints[n] = {f: v[i] for f, v in fields.items()}
            self.joints[n]['stamp'] = stamp or now
        if len(self.joints) < len(self.names):
            return 'missing'
        if self.stale_after > 0 and any(now - j['stamp'] > self.stale_after * SECOND
                                        for j in self.joints.values()):
            return 'stale'
        state = [[self.joints[n].get(f) for n in self.names]
                 for f in ('position', 'velocity', 'effort')]
        return tuple(None if None in s else np.array(s) for s in state) + (stamp,)


def read(states, msg, now):
    try:
        return states.read(msg, now)
    except BadMessage as e:
        return e.kind


def read_bytes(states, msg, now):
    """:func:`read` of the message as a raw subscription hands it over: its serialised bytes."""
    try:
        return states.read_serialized(serialize_message(msg), now)
    except BadMessage as e:
        return e.kind


def read_compiled(states, msg, now):
    """
    :func:`read_bytes` as dynamics_node reads a driver's state: first by one compiled call.

    The layout last read (:meth:`JointStates.front`) checked and read by the compiled step
    (``runtime.commands.CompiledStep``, with ``g(q)`` as its law), and what it accepts merged by
    :meth:`JointStates.take`; whatever it declines read by ``read_serialized``.
    """
    from manipulator_dynamics.rigid.status import OK
    from manipulator_dynamics.runtime.commands import CompiledStep, Law
    model = states.model
    n = model.n
    step = CompiledStep.plan(model, states.front(), Law('gravity_compensation'), np.arange(n),
                             np.full(n, np.inf), np.empty(n), states.stale_after)
    if step is not None:
        status, stamp, state = step.take(serialize_message(msg), None, states.newest, now)
        if status == OK:
            read_compiled.taken += 1
            np.testing.assert_array_equal(step.tau, md.gravity_torques(model, state[0]))
            filled = step.shape[0]
            return states.take(*(state[k] if k < filled else None for k in range(3)), stamp)
    return read_bytes(states, msg, now)


read_compiled.taken = 0


def reader(model, stale_after=0.0, **options):
    """Make a JointStates as a node does: a layout's first message deserialised by rclpy."""
    return JointStates(model, stale_after,
                       deserialize=lambda data: messages.deserialize_joint_state(data),
                       **options)


@pytest.fixture
def deserialised(monkeypatch):
    """Record the messages read_serialized has rclpy deserialise (the rest it reads as bytes)."""
    done = []
    real = messages.deserialize_joint_state

    def spy(data):
        done.append(data)
        return real(data)
    monkeypatch.setattr(messages, 'deserialize_joint_state', spy)
    return done


def test_one_driver_in_the_model_order_then_another_order_and_another_robot(model):
    states = reader(model, stale_after=0.5)
    names = list(model.joint_names)
    n = len(names)
    q, qd, effort, stamp = states.read(message(names, range(n), range(n, 2 * n), [], SECOND),
                                       SECOND)
    assert q.tolist() == list(range(n)) and qd.tolist() == list(range(n, 2 * n))
    assert effort is None and stamp == SECOND
    q2, qd2, *_ = states.read(message(['gripper'] + names[::-1], [9] + list(range(n))[::-1]),
                              2 * SECOND)
    assert q2.tolist() == list(range(n)) and qd2 is None
    assert states.read(message(['gripper'], [7]), 2 * SECOND) is None     # not ours
    q[:] = -1                                 # a state read is the caller's own copy
    assert states.read(message(names, range(n), stamp=3 * SECOND), 3 * SECOND)[0][1] == 1


def test_each_refusal_names_its_reason(model):
    names = list(model.joint_names)
    states = reader(model, stale_after=0.5)
    n = len(names)
    zeros = [0.0] * n
    with pytest.raises(BadMessage, match=f"position of '{names[1]}' is nan"):
        states.read(message(names, [0, math.nan] + zeros[2:]), 1)
    # another robot's non-finite value is not ours to refuse, nor is an overflowing sum
    assert states.read(message(names + ['other'], zeros + [math.inf]), 1)[0].tolist() == zeros
    assert states.read(message(names, [1e308, 1e308] + zeros[2:]), 1)[0][0] == 1e308
    with pytest.raises(BadMessage, match=f'{n} names but 2 velocity values'):
        states.read(message(names, zeros, [0, 0]), 1)
    states = reader(model, stale_after=0.5)
    with pytest.raises(BadMessage, match=f'no joint_states yet for joints {names[-1]}:'):
        states.read(message(names[:-1], zeros[1:], stamp=SECOND), SECOND)
    assert states.read(message(names[-1:], [0], stamp=SECOND), SECOND) is not None
    with pytest.raises(BadMessage, match='older than the last one'):
        states.read(message(names[1:2], [0], stamp=SECOND - 1), SECOND)
    later = SECOND + 600_000_000
    old = ', '.join(names[:1] + names[2:])
    with pytest.raises(BadMessage, match=f'joint_states of {old} is 0.600 s old'):
        states.read(message(names[1:2], [0], stamp=later), later)
    states.forget()                           # a clock gone back: everything starts afresh
    with pytest.raises(BadMessage, match='no joint_states yet'):
        states.read(message(names[:1], [0], stamp=1), 1)


@pytest.mark.parametrize('how', [read, read_bytes, read_compiled])
def test_any_sequence_of_messages_reads_as_the_reference_does(model, how, deserialised):
    rng = np.random.default_rng(5)
    names = list(model.joint_names) + ['gripper', 'other']
    sent = 0
    for trial in range(40):
        stale_after = rng.choice([0.0, 0.05])
        states, reference = reader(model, stale_after), Reference(model, stale_after)
        now = SECOND
        chosen, lengths, frame = names, (len(names),) * 3, ''
        for step in range(60):
            now += int(rng.integers(0, 30_000_000))
            if rng.random() < 0.5:          # a new layout; else the last one's, as a driver's
                chosen = list(rng.permutation(names)[:rng.integers(1, len(names) + 1)])
                if rng.random() < 0.3:                                # a driver's: the model's
                    chosen = list(model.joint_names)
                if rng.random() < 0.03:
                    chosen.append(chosen[0])                          # a name twice
                k = len(chosen) - (rng.random() < 0.03)               # a field too short
                lengths = [k] + [len(chosen) if rng.random() < 0.7 else 0 for _ in (1, 2)]
                frame = 'base_link'[:rng.integers(0, 10)]
            values = rng.normal(size=(3, len(chosen)))
            values[rng.random(values.shape) < 0.02] = rng.choice([math.nan, math.inf])
            fields = [v[:k] for v, k in zip(values, lengths)]
            stamp = 0 if rng.random() < 0.2 else now - int(rng.integers(0, 70_000_000))
            msg = message(chosen, *fields, stamp=stamp)
            msg.header.frame_id = frame
            sent += 1
            got, want = how(states, msg, now), reference.read(msg, now)
            if want == 'duplicated':
                assert got == 'duplicated'
                continue
            assert type(got) is type(want), (trial, step, got, want)
            if isinstance(want, tuple):
                for a, b in zip(got, want):
                    assert (a is None and b is None) or np.array_equal(a, b)
            else:
                assert got == want, (trial, step)
    if how is not read:                     # and most of them were read from their bytes
        assert len(deserialised) < 0.6 * sent, (len(deserialised), sent)
    if how is read_compiled:                # a driver's, many by the compiled call
        assert read_compiled.taken > 0.04 * sent, (read_compiled.taken, sent)


def test_a_drivers_arrays_are_read_at_once_and_checked_as_any(model, monkeypatch):
    """The filled arrays of one value per name are read as one block, in any order of names."""
    joints = list(model.joint_names)
    n = len(joints)
    # the model's order; joint_state_broadcaster's (another), with a joint the model has not
    for names in (joints, joints[::-1] + ['gripper']):
        order = [names.index(j) for j in joints]           # where each model joint is sent
        fields = np.arange(3 * len(names), dtype=float).reshape(3, -1) + 0.25
        for filled in (1, 2, 3):
            states = reader(model)
            with monkeypatch.context() as patch:
                read_bytes(states, message(names, *fields[:filled], stamp=SECOND), SECOND)
                patch.setattr(JointStates, '_field', None)      # not called: one block
                state = states.read_serialized(
                    serialize_message(message(names, *-fields[:filled], stamp=2 * SECOND)), 2)
            assert state[3] == 2 * SECOND
            for k in range(3):
                assert state[k] is None if k >= filled else \
                    state[k].tolist() == (-fields[k, order]).tolist()
                assert k >= filled or state[k].flags.c_contiguous
            # a value not finite: the fields' check names its joint; one not ours is no matter
            bad = -fields[:filled].copy()
            bad[:, names.index(joints[3])] = math.nan
            with pytest.raises(BadMessage, match=f"position of '{joints[3]}' is nan"):
                states.read_serialized(serialize_message(message(names, *bad, stamp=3 * SECOND)),
                                       3)
            if len(names) > n:
                bad = -fields[:filled].copy()
                bad[:, -1] = math.inf
                data = serialize_message(message(names, *bad, stamp=4 * SECOND))
                q = states.read_serialized(data, 4)[0]
                assert q.tolist() == (-fields[0, order]).tolist()
    # position and effort without velocity lie apart: read field by field, and right
    states = reader(model)
    fields = np.arange(3 * n, dtype=float).reshape(3, n)
    for k in (1, 2):
        got = read_bytes(states, message(joints, fields[0] * k, (), fields[2] * k, stamp=k), k)
    assert got[1] is None and got[2].tolist() == (2 * fields[2]).tolist()


def test_a_state_read_stays_as_it_was_while_later_messages_merge(model):
    """The state's arrays are returned, not copied: a later message must not write into them."""
    names = list(model.joint_names)
    n = len(names)
    for how in (read, read_bytes):
        states = reader(model)
        q, qd, effort, _ = how(states, message(names, range(n), range(n), range(n)), 1)
        kept = [a.copy() for a in (q, qd, effort)]
        later = how(states, message(names[:2], [-1, -2], [-3, -4], [-5, -6]), 2)
        for a, b in zip((q, qd, effort), kept):
            np.testing.assert_array_equal(a, b)
        assert later[0][:3].tolist() == [-1, -2, 2] and later[2][:2].tolist() == [-5, -6]


def test_two_drivers_and_another_robot_are_each_read_from_their_bytes(model, deserialised):
    names = list(model.joint_names)
    arm, hand, other = names[:-2], names[-2:], ['other_robot_joint']
    states = reader(model, stale_after=0.5)
    for k in range(1, 6):
        now = k * SECOND // 100
        for chosen, frame in ((arm, 'arm'), (hand, ''), (other, 'elsewhere')):
            msg = message(chosen, np.arange(len(chosen)) + k, range(len(chosen)), stamp=now)
            msg.header.frame_id = frame
            got = read_bytes(states, msg, now)
        assert got is None                                  # the other robot's: nothing new
    assert len(deserialised) == 3                           # the first of each layout only
    q = states.read_serialized(serialize_message(message(hand, [7, 8], [0, 0], stamp=now)),
                               now)[0]
    assert q.tolist() == list(np.arange(len(arm)) + 5) + [7, 8]


def test_a_layout_not_found_where_the_message_has_it_is_not_learnt(model, deserialised,
                                                                   monkeypatch):
    """Bytes read otherwise than rclpy reads them are never served from: rclpy reads them all."""
    names = list(model.joint_names)
    n = len(names)
    msg = message(names, np.arange(n) + 0.5, stamp=SECOND)
    data = serialize_message(msg)
    assert JointStateLayout.learn(data, msg, reader(model)._map(names)) is not None
    moved = data[:-8 * n] + bytes(8) + data[-8 * n:-8]      # values one place later
    assert JointStateLayout.learn(moved, msg, reader(model)._map(names)) is None
    big_endian = b'\x00\x00' + data[2:]
    assert JointStateLayout.learn(big_endian, msg, reader(model)._map(names)) is None
    # a layout this reader cannot follow: every message deserialised, and read as a message
    states = reader(model)
    monkeypatch.setattr(JointStateLayout, 'learn', classmethod(lambda cls, *args: None))
    for k in range(3):
        msg = message(names, np.arange(n) + k, stamp=SECOND + k)
        assert states.read_serialized(serialize_message(msg), SECOND + k)[0][0] == k
    assert len(deserialised) == 3


def test_bytes_that_are_not_a_joint_state_are_refused_and_change_nothing(model):
    names = list(model.joint_names)
    states = reader(model)
    good = serialize_message(message(names, range(len(names)), stamp=SECOND))
    q = states.read_serialized(good, SECOND)[0]
    for data in (b'', good[:4], good[:40], b'\xff' * len(good)):
        with pytest.raises(BadMessage, match=f'joint_states message of {len(data)} bytes is not '
                           'a JointState') as refused:
            states.read_serialized(data, SECOND)
        assert refused.value.kind == 'malformed'
    np.testing.assert_array_equal(states.read_serialized(good, SECOND)[0], q)


def test_the_reader_needs_no_ros_message_and_says_what_it_was_not_given(model):
    """
    Read by its fields, a state needs no ROS type: a recorded or simulated one reads the same.

    Only the first bytes of a layout need a JointState built, by the ``deserialize`` a node
    gives; a reader given none says so rather than reading the bytes some other way.
    """
    from types import SimpleNamespace
    names = list(model.joint_names)
    n = len(names)
    plain = SimpleNamespace(name=names[::-1], position=list(range(n)), velocity=[], effort=[],
                            header=SimpleNamespace(stamp=SimpleNamespace(sec=2, nanosec=5)))
    states = JointStates(model)
    q, qd, effort, stamp = states.read(plain, 3 * SECOND)
    assert q.tolist() == list(range(n))[::-1] and qd is None and effort is None
    assert stamp == 2 * SECOND + 5
    data = serialize_message(message(names, range(n)))
    with pytest.raises(TypeError, match='needs the deserialize it was not given'):
        states.read_serialized(data, 3 * SECOND)
