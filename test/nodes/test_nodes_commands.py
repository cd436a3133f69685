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

"""The effort commands' bytes on the wire, without a node (their clamp: test/runtime)."""

import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')
from manipulator_dynamics.wire import float64_serialiser  # noqa: E402, I100
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402, I100
from std_msgs.msg import Float64MultiArray  # noqa: E402, I100


@pytest.mark.parametrize('n', [0, 1, 6, 7, 12])
def test_a_command_published_as_bytes_is_rclpys_serialisation_of_the_message(n):
    serialise = float64_serialiser(n)
    assert serialise is not None                # rclpy's middleware here serialises plain CDR
    rng = np.random.default_rng(n)
    for values in (rng.normal(size=n) * 1e3, np.array([np.inf, -0.0, 1e-310, np.nan,
                                                       -1e308, 5.0, 0.5] * 2)[:n]):
        wire = serialise(values)
        assert same_but_padding(wire, serialize_message(Float64MultiArray(data=values.tolist())))
        back = np.array(deserialize_message(wire, Float64MultiArray).data)
        np.testing.assert_array_equal(back, values)
    # what a caller may hand it: a strided view, another float type, integers
    base = rng.normal(size=2 * n)
    for values in (base[::2], base[:n].astype(np.float32), np.arange(n)):
        expected = np.asarray(values, dtype=float)
        assert same_but_padding(serialise(values),
                                serialize_message(Float64MultiArray(data=expected.tolist())))
    # one value too few or too many is refused, never spread over the command
    for wrong in (np.ones(n + 1), np.ones(max(n - 1, 1)) if n != 1 else np.ones(2)):
        with pytest.raises(ValueError):
            serialise(wrong)


def same_but_padding(ours, rclpys):
    """Equal bytes but the 4 of padding before the first value (rclpy leaves them unset)."""
    if len(ours) == 16:                             # no values: rclpy pads the end
        return rclpys[:16] == ours and len(rclpys) == 20
    return len(ours) == len(rclpys) and ours[:16] == rclpys[:16] and ours[20:] == rclpys[20:] \
        and ours[16:20] == bytes(4)


def test_where_the_bytes_would_differ_the_command_is_published_as_a_message(monkeypatch):
    """A big-endian machine (or a middleware serialising otherwise): no bytes, the message."""
    from manipulator_dynamics import wire
    from manipulator_dynamics.nodes import commands

    monkeypatch.setattr(wire.sys, 'byteorder', 'big')
    assert float64_serialiser(7) is None
    msg = commands._as_message(np.linspace(-1, 1, 7))
    assert isinstance(msg, Float64MultiArray) and not msg.layout.dim
    np.testing.assert_array_equal(msg.data, np.linspace(-1, 1, 7))


def test_a_subscriber_matched_before_the_periodic_question_stops_the_commands():
    """
    A subscriber matched since the last question stops the commands at the next one too.

    The controller is asked again every ``ASK_PERIOD``; that question had taken the count of
    subscriptions ever matched as asked, so a controller restarted just before it received
    commands until its answer came (a reversed one, under load, in CI).  Now the question
    stops them first, as a command would.
    """
    import types

    import rclpy
    from manipulator_dynamics.nodes.commands import CommandOutput
    model = md.load_model(robots.path('demo_arm'))
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=97)
    try:
        controller = rclpy.create_node('effort_controller', context=context)
        controller.declare_parameter('joints', list(model.joint_names))
        node = rclpy.create_node('commanding', context=context)
        params = types.SimpleNamespace(command_topic='effort_controller/commands',
                                       command_joints=[''], controller_name='',
                                       clamp_efforts=True)
        out = CommandOutput(node, params)
        out.set_model(model)
        out.enabled = True
        out.controller_joints = list(model.joint_names)    # the controller has answered
        out._compare()
        assert out.ready and out._client.wait_for_service(timeout_sec=10.0)
        count = [out._matched()]
        out._matched = lambda: count[0]
        out._asked_matched = count[0]
        count[0] += 1                                   # a subscriber came since
        out._ask()                                      # the periodic question
        assert not out.ready and not out.publish(np.zeros(model.n))
        assert out._asked_matched == count[0]           # asked, with it counted
    finally:
        rclpy.shutdown(context=context)
