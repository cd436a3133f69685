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
``sim_node``: the embedded robot, so that the whole loop runs with no robot and no Gazebo.

Integrates the model's forward dynamics (Saha's UDU^T method) with the classic 4th-order
Runge-Kutta scheme at ``rate`` Hz (:func:`manipulator_dynamics.control.rk4_step`), the effort held
over a step; applies the latest command from
``command_topic`` (default ``effort_controller/commands``: std_msgs/Float64MultiArray in the order
of ``command_joints``), and zero effort
when commands stop for longer than ``command_timeout``.  With ``friction`` on, the URDF's joint
friction is a torque ``Fv qd + Fc s`` in the dynamics, ``s`` the sign of a joint's velocity at the
start of the step, frozen over it: a sliding joint's Coulomb friction is then a constant torque,
no stiffer than the rest.  A joint whose velocity would reverse within a step sticks (velocity 0)
instead: stiffness comes only from the sign switching, which smoothing it (a tanh over 0.01 rad/s)
had made far too stiff for a 1 ms step on a 0.0004 kg m^2 wrist joint.
Runs in real time: each timer tick integrates the steps that are due since the start (at most
``max_catch_up``), so that a late tick does not slow the physics down, and stamps the states with
the physics time.  Publishes ``joint_states`` every ``publish_every`` steps, waking once per
state (the steps between are integrated then, with the latest command: for a controller at the
state rate, what a drive's zero-order hold does), and ``robot_description`` (transient local)
once; both names are relative, so a namespace moves the simulated robot.  Beside its command
topic it shows what ros2_control shows: a controller node named after the topic's namespace
(``effort_controller``) whose read-only ``joints`` parameter is the command order, which
dynamics_node and trajectory_node confirm before commanding.  Joint limits are not enforced:
the simulated robot is a free multibody.
"""

import array

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from ._common import controller_of, existing_file, LATCHED, spin, Throttled
from ._parameters import ConfigurationError, finite_positive, Param, Parameters
from .. import robots
from ..control import rk4_step
from ..precompile import warm_up
from ..urdf import load_model

PARAMS = (
    Param('urdf_path', '', 'URDF of the simulated robot (default: the bundled demo arm)',
          existing_file, read_only=True),
    Param('joint_dynamics', '', 'YAML of armature and friction', existing_file, read_only=True),
    Param('rate', 1000.0, 'integration rate in Hz', finite_positive, read_only=True,
          low=1.0, high=100000.0),
    Param('publish_every', 1, 'publish joint_states every this many steps', read_only=True,
          low=1, high=1000),
    Param('max_catch_up', 20, 'most steps one late tick may integrate to catch up with real '
          'time (at least publish_every)', read_only=True, low=1, high=100000),
    Param('command_topic', 'effort_controller/commands', 'effort commands (Float64MultiArray)',
          read_only=True),
    Param('command_joints', [''], "joint order of the commands (empty: the model's)",
          read_only=True),
    Param('command_timeout', 0.1, 'zero effort when no command came for this long (s)',
          finite_positive, low=0.0, high=3600.0),
    Param('friction', True, 'simulate joint friction'),
    Param('wait_for_command', False, 'hold the robot still (brakes on) until the first command '
          'arrives', read_only=True),
    Param('initial_positions', [0.0], 'initial joint positions, in the order of the model joints '
          '(one value: all)', read_only=True),
)


class SimNode(Node):
    """A simulated robot: efforts in, joint states out (see module)."""

    def __init__(self, node_name='sim_node', **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = params = Parameters(self, PARAMS)
        if params.max_catch_up < params.publish_every:
            raise ConfigurationError(f'parameter max_catch_up: must be at least publish_every '
                                     f'({params.publish_every}), got {params.max_catch_up}')
        path = params.urdf_path or robots.path('demo_arm')
        self.model = load_model(path, joint_dynamics=params.joint_dynamics or None,
                                check_inertia='warn')
        n = self.model.n
        initial = params.initial_positions
        if len(initial) not in (1, n):
            raise ConfigurationError(f'parameter initial_positions: needs 1 or {n} values, got '
                                     f'{len(initial)}')
        self.q = np.zeros(n) + np.asarray(initial, dtype=float)
        self.qd = np.zeros(n)
        self.tau = np.zeros(n)
        warm_up(self.model)
        self.command_at = None
        self.throttle = Throttled(self)
        joints = [j for j in params.command_joints if j]
        unknown = [j for j in joints if j not in self.model.joint_names]
        if unknown:
            raise ConfigurationError(f'parameter command_joints: {", ".join(unknown)} are not '
                                     'joints of the model')
        self.command_index = np.array([self.model.joint_index(j) for j in joints or
                                       self.model.joint_names], dtype=np.int64)
        with open(path) as f:
            self.create_publisher(String, 'robot_description', LATCHED).publish(
                String(data=f.read()))
        self.state_pub = self.create_publisher(JointState, 'joint_states', 100)
        self.state_msg = JointState(name=list(self.model.joint_names))
        commands = self.create_subscription(Float64MultiArray, params.command_topic,
                                            self._on_command, 10)
        self.companions = self._controller(commands.topic_name, self.command_index)
        self.dt = 1.0 / params.rate
        self.steps = 0
        self.t0 = None                 # clock time of step 0, ns
        # wake once per published state: the steps in between are integrated on the tick, and
        # a controller only sees the states anyway (rclpy costs ~0.3 ms a wake-up)
        self.create_timer(self.dt * self.params.publish_every, self._tick)

    def _controller(self, command_topic, index):
        """
        Make the controller node a ros2_control robot shows beside its command topic (a list).

        ros2_control's forward_command_controller is a node named after it (``effort_controller``
        for ``effort_controller/commands``) whose read-only ``joints`` parameter is the order of
        the commands it takes; dynamics_node and trajectory_node ask it before commanding.  It
        is named from the resolved command topic (namespace and remaps applied), deaf to the
        process's global arguments (a ``__node`` remap or a parameter file meant for sim_node).
        """
        from rcl_interfaces.msg import ParameterDescriptor

        name = controller_of(command_topic, self.get_namespace())
        if name is None:
            return []
        namespace, name = name.rsplit('/', 1)
        node = Node(name, namespace=namespace or '/', context=self.context,
                    use_global_arguments=False, start_parameter_services=True)
        about = 'the order of the efforts on the command topic (as forward_command_controller)'
        node.declare_parameter('joints', [self.model.joint_names[i] for i in index],
                               ParameterDescriptor(read_only=True, description=about))
        return [node]

    def _on_command(self, msg):
        data = np.asarray(msg.data, dtype=float)
        if data.shape != self.command_index.shape:
            self.throttle.warn('command length', f'command dropped: needs '
                               f'{len(self.command_index)} efforts, got {len(data)}')
            return
        bad = np.flatnonzero(~np.isfinite(data))
        if len(bad):
            joint = self.model.joint_names[self.command_index[bad[0]]]
            self.throttle.warn('command non-finite', f"command dropped: effort of '{joint}' is "
                               f'{data[bad[0]]}')
            return
        self.tau = np.zeros(self.model.n)
        self.tau[self.command_index] = data
        self.command_at = self.get_clock().now().nanoseconds

    def _tick(self):
        now = self.get_clock().now().nanoseconds
        timeout = self.params.command_timeout
        if self.command_at is None or now - self.command_at > timeout * 1e9:
            if self.command_at is not None and self.tau.any():
                self.throttle.warn('timeout', f'no effort command for '
                                   f'{(now - self.command_at) * 1e-9:.3f} s (command_timeout '
                                   f'{timeout:g} s): efforts set to zero')
            self.tau = np.zeros(self.model.n)
        if self.t0 is None or (self.params.wait_for_command and self.command_at is None):
            self.t0 = now - self.steps * int(self.dt * 1e9)     # physics starts (again) now
            self._publish()
            return
        due = int((now - self.t0) / (self.dt * 1e9)) - self.steps
        most = self.params.max_catch_up
        if due > most:                                # too far behind: let physics time slip
            self.t0 += (due - most) * int(self.dt * 1e9)
            due = most
        for _ in range(due):
            self._step()
            if self.steps % self.params.publish_every == 0:
                self._publish()

    def _step(self):
        self.q, self.qd = rk4_step(self.model, self.q, self.qd, self.tau, self.dt,
                                   friction=self.params.friction)
        self.steps += 1

    def _publish(self):
        # one message, refilled (publish copies it out), its fields given as array.array, which
        # the message keeps as they are: a list would be converted element by element, at 1 kHz
        msg = self.state_msg
        stamp = self.t0 + self.steps * int(self.dt * 1e9)          # the physics time
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        msg.position = array.array('d', self.q.tobytes())
        msg.velocity = array.array('d', self.qd.tobytes())
        msg.effort = array.array('d', self.tau.tobytes())
        self.state_pub.publish(msg)


def main(args=None):
    """Console script ``sim_node``."""
    spin(SimNode, args)
