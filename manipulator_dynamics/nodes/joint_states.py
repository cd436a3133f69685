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

"""The joint_states subscription (its parameters, QoS, the queue) and the clock's jumps."""

from rclpy.qos import HistoryPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy

from ._parameters import one_of, Param
from .logs import QuickLogger
from ..runtime.follower import Plan  # noqa: F401 (its home: the runtime)
from ..runtime.joint_states import JointStates  # noqa: F401 (its home: the runtime)


def joint_state_params(state_queue=1, queue_about='1: always the newest (commands from old '
                       'states would act late)'):
    """Make a node's joint_states parameters (:class:`JointStates`, :func:`joint_states_qos`)."""
    return (
        Param('stale_after', 0.5, 'a joint whose latest state is older than this (s) stops the '
              'commands; 0: never', low=0.0, high=3600.0),
        Param('state_queue', state_queue, f'joint_states kept while busy; {queue_about}',
              read_only=True, low=1, high=1000),
        Param('joint_states_qos', 'sensor_data', 'QoS of the joint_states subscription: '
              'sensor_data (best effort: hears reliable and best-effort publishers) | reliable',
              one_of('sensor_data', 'reliable'), read_only=True),
    )


#: A node that acts on the newest state only, its subscription one deep (trajectory_node).
JOINT_STATE_PARAMS = joint_state_params()


def queued(subscription, limit):
    """
    Take the messages waiting on ``subscription`` now, oldest first, at most ``limit``.

    Called from the subscription's own callback: what queued behind the message being handled
    (a node that fell behind).  Each is ``(message, info)`` as the executors take them (the
    bytes of a raw subscription).  Both of rclpy's executors then find nothing for the messages
    taken here, and skip them.  A take that finds nothing costs about 0.6 us.
    """
    handle, kind, raw = subscription.handle, subscription.msg_type, subscription.raw
    taken = []
    with handle:
        while len(taken) < limit:
            message = handle.take_message(kind, raw)
            if message is None:
                break
            taken.append(message)
    return taken


def joint_states_qos(params):
    """Make the QoS of the joint_states subscription: sensor data (best effort) or reliable."""
    if params.joint_states_qos == 'reliable':
        return QoSProfile(depth=params.state_queue, reliability=ReliabilityPolicy.RELIABLE,
                          history=HistoryPolicy.KEEP_LAST)
    return QoSProfile(depth=params.state_queue, reliability=qos_profile_sensor_data.reliability,
                      durability=qos_profile_sensor_data.durability,
                      history=HistoryPolicy.KEEP_LAST)


def on_time_jump_back(node, callback):
    """
    Call ``callback(delta_ns)`` (negative) when the node's clock jumps back; one log line says so.

    Under ``use_sim_time`` a simulation reset (Gazebo's, MuJoCo's, a restarted sim_node) sends
    ``/clock`` back: every stamp the node kept is then in the future of the new clock, and
    joint states, trajectories in progress and rate timers must follow the new clock (rcl's
    timers do so themselves).  Returns the handler, which must be kept.
    """
    from rclpy.clock import JumpThreshold
    from rclpy.duration import Duration

    log = QuickLogger(node)

    def jumped(jump):
        delta = jump.delta.nanoseconds
        if delta < 0:
            log.warning(f'the clock jumped back by {-delta * 1e-9:.3f} s (a simulation reset): '
                        'joint states and any trajectory in progress follow the new clock')
            callback(delta)

    threshold = JumpThreshold(min_forward=None, min_backward=Duration(nanoseconds=-1),
                              on_clock_change=False)
    return node.get_clock().create_jump_callback(threshold, post_callback=jumped)
