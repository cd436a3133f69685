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

Two engines (``engine``, see :mod:`manipulator_dynamics.plant`): ``mujoco`` (the default where the
``mujoco`` package is installed: ``auto``) builds MuJoCo's own model of the URDF, an independent
plant for the package's controllers; ``internal`` integrates the package's forward dynamics
(Saha's UDU^T method) with the classic 4th-order Runge-Kutta scheme.  Each step of ``1 / rate``
seconds holds the latest command (``timestep`` splits it into substeps); the command comes on
``command_topic`` (default ``effort_controller/commands``: std_msgs/Float64MultiArray in the order
of ``command_joints``), clamped to the URDF effort limits (a throttled warning names the
joints), and zero effort when commands stop for longer than ``command_timeout``.  With
``friction`` on, the URDF's joint friction (and the joint-dynamics YAML's) acts: in MuJoCo as
``damping`` and ``frictionloss`` (dry friction through a constraint: a joint at rest sticks); in
the internal engine as a torque ``Fv qd + Fc s``, ``s`` the sign of a joint's velocity at the
start of the step, frozen over it (a joint whose velocity would reverse within a step sticks).
MuJoCo enforces position limits as a soft constraint; the internal engine does not.

Two ways to run:

* real time (default): each timer tick integrates the steps that are due since the start (at
  most ``max_catch_up``, beyond which the physics time slips, with a throttled warning giving
  the real-time factor), so that a late tick does not slow the physics down, and stamps the
  states with the physics time.  It wakes once per published state: the steps between are
  integrated then, with the latest command (for a controller at the state rate, what a
  drive's zero-order hold does).  On a busy machine the plant or the controller is starved,
  and steps run on a command computed from a state tens of milliseconds old: an open loop
  (23-33 ms measured beside four busy processes, 8 ms idle), which computed torque at
  trajectory_node's gains does not survive (their phase margin is gone near 33 ms); a
  throttled warning says so beyond 20 ms;
* ``lockstep``: the physics time is ``/clock`` (run the other nodes with ``use_sim_time``), and
  each step waits for the command computed from the state before it (up to
  ``lockstep_timeout``, then steps with the last command, loudly), so the loop runs as fast as
  the machine allows and gives the same trajectory on an idle and on a loaded machine
  (``pace: 1.0`` holds it to real time at most, for people watching: on a busy machine it
  slows down rather than run a step on a stale command).  Until
  the first command the robot is held at its initial state (time stands still, the state is
  repeated every second for subscribers that come late); once commands flow, the state is sent
  one last time after they fell quiet for a second, so that exactly one command answers each
  state from then on.

A push (``push_link``, ``push_wrench``, ``push_frame``, ``push_start``, ``push_duration``; set
them together with ``ros2 param set`` or at start) applies a wrench to a link over a window of
physics time: a real external force, which the efforts on the command topic know nothing of
(MuJoCo's applied body forces, or the internal engine's external wrenches).  While ``push_link``
is set, ``~/true_wrench`` (geometry_msgs/WrenchStamped, in the link's frame, moment about its
origin) and ``~/true_external_torques`` (sensor_msgs/JointState, ``J^T F`` in ``effort``, each
engine's own Jacobian) give the truth at every published state: the ground truth of a contact
estimate, which no node reads but a test or a demo.

An obstacle (``obstacle_size``, ``obstacle_position``, ``obstacle_rpy``: a fixed box in the base
frame; MuJoCo only) makes the cell physical: the links become capsules of ``link_radius``
(from the URDF's joint origins: :class:`~manipulator_dynamics.plant.Cell`) that collide with
the box, and ``~/contact_force`` (geometry_msgs/WrenchStamped in the base frame's axes, the
force only) gives, at every published state, the force the box exerts on the robot (MuJoCo's
contact forces, summed): the ground truth of a collision's detection and of the reaction.

A load (``load_link``, ``load``: mass[, centre of mass[, inertia]], ``load_at``) is picked up at
a physics time: from then on the simulated robot carries it, unknown to the other nodes (a
gripper closing on an object).  ``position_noise`` and ``effort_noise`` add an encoder's and a
torque reading's white noise to what is published (seeded: lockstep stays repeatable).

Publishes ``joint_states`` (reliable, as joint_state_broadcaster) every ``publish_every`` steps,
its ``effort`` the command held over the step that ended there (what the joints applied, as a
driver's), and ``robot_description`` (transient local) once; both names are relative, so a
namespace moves the simulated robot.  Beside its command topic it shows what ros2_control
shows: a controller node named after the topic's namespace (``effort_controller``) whose
read-only ``joints`` parameter is the command order, which dynamics_node and trajectory_node
confirm before commanding.
"""

import array
import time

from geometry_msgs.msg import Vector3, WrenchStamped
import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMessage
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from ._parameters import ConfigurationError, finite_positive, one_of, Param, Parameters
from .commands import controller_of
from .diagnostics import Diagnostics, ERROR, OK, Said
from .logs import Throttled, warnings_logged
from .model_source import existing_file, payload_check
from .process import clock_ns, spin
from .qos import LATCHED
from .. import robots
from ..plant import Cell, default_engine, ENGINES, INTEGRATORS, make_plant, PlantError
from ..precompile import warm_up
from ..runtime.commands import check_command_joints, clamp_efforts
from ..runtime.simulator import Simulator
from ..urdf import load_model

#: /joint_states history (messages).  Lockstep keeps 10 s of 1 kHz states: there the loop runs
#: as fast as the machine allows, and a recorder starved of CPU for more than a real-time
#: history's 0.1 s (a rosbag, the identification demo, a test on a busy machine) lost states
#: the reliable writer had already overwritten.
STATE_HISTORY, LOCKSTEP_STATE_HISTORY = 100, 10000

PARAMS = (
    Param('urdf_path', '', 'URDF of the simulated robot (default: the bundled demo arm)',
          existing_file, read_only=True),
    Param('joint_dynamics', '', 'YAML of armature and friction', existing_file, read_only=True),
    Param('engine', 'auto', "physics: mujoco (MuJoCo's own model of the URDF), internal (this "
          "package's RK4), auto (mujoco where the mujoco package is installed)",
          one_of('auto', *ENGINES), read_only=True),
    Param('integrator', 'auto', "MuJoCo's integrator: auto (rk4 unless the URDF damping is too "
          'stiff for it at the step, then implicitfast), rk4, implicitfast, implicit, euler',
          one_of(*INTEGRATORS), read_only=True),
    Param('rate', 1000.0, 'steps per second: each step holds one command', finite_positive,
          read_only=True, low=1.0, high=100000.0),
    Param('timestep', 0.0, 'integration substep (s), dividing 1 / rate; 0: 1 / rate',
          read_only=True, low=0.0, high=1.0),
    Param('publish_every', 1, 'publish joint_states every this many steps', read_only=True,
          low=1, high=1000),
    Param('max_catch_up', 20, 'most steps one late tick may integrate to catch up with real '
          'time (at least publish_every)', read_only=True, low=1, high=100000),
    Param('lockstep', False, 'each step waits for the command computed from the state before '
          'it; publishes /clock (run the other nodes with use_sim_time)', read_only=True),
    Param('lockstep_timeout', 5.0, 'lockstep: longest wait for a command (wall s), then a step '
          'with the last one and a warning', finite_positive, read_only=True, low=0.001,
          high=3600.0),
    Param('pace', 0.0, 'lockstep: most physics seconds per wall second (1: real time, for '
          'people watching; 0: as fast as the machine allows)', read_only=True, low=0.0,
          high=1000.0),
    Param('publish_clock', False, 'publish /clock (the physics time) in real time too (always '
          'in lockstep)', read_only=True),
    Param('command_topic', 'effort_controller/commands', 'effort commands (Float64MultiArray)',
          read_only=True),
    Param('command_joints', [''], "joint order of the commands (empty: the model's)",
          read_only=True),
    Param('command_timeout', 0.1, 'zero effort when no command came for this long (s of '
          'physics time)', finite_positive, low=0.0, high=3600.0),
    Param('friction', True, 'simulate joint friction'),
    Param('wait_for_command', False, 'hold the robot still (brakes on) until the first command '
          'arrives', read_only=True),
    Param('initial_positions', [0.0], 'initial joint positions, in the order of the model joints '
          '(one value: all)', read_only=True),
    Param('push_link', '', 'link a wrench pushes over a window of physics time (empty: none)'),
    Param('push_wrench', [0.0] * 6, 'the push: fx fy fz (N) mx my mz (N m), the moment about '
          "push_link's origin", lambda v: None if len(v) == 6 and all(np.isfinite(v)) else
          f'needs 6 finite numbers fx fy fz mx my mz, got {list(v)}'),
    Param('push_frame', 'world', "axes of push_wrench: world (the base's: a push from outside, "
          'keeping its direction) | link (turning with the link)', one_of('world', 'link')),
    Param('push_start', 0.0, 'physics time at which the push begins (s since the simulation '
          'started: /clock in lockstep)', low=0.0, high=1e9),
    Param('push_duration', 0.0, 'how long the push lasts (s of physics time); 0: no push',
          low=0.0, high=1e9),
    Param('position_noise', 0.0, 'white noise on the published positions (rad or m, one '
          "standard deviation): an encoder's; the plant itself is not disturbed", low=0.0,
          high=1.0, read_only=True),
    Param('effort_noise', 0.0, 'white noise on the published efforts (N m or N, one standard '
          "deviation): a drive's torque or current reading", low=0.0, high=1e6,
          read_only=True),
    Param('obstacle_size', [0.0], 'a fixed box the robot can run into (MuJoCo): its edges x y z '
          '(m; [0.0]: no obstacle); the links collide with it as capsules of link_radius',
          read_only=True),
    Param('obstacle_position', [0.0, 0.0, 0.0], "the box's centre x y z (m) in the base frame",
          read_only=True),
    Param('obstacle_rpy', [0.0, 0.0, 0.0], "the box's roll, pitch, yaw (rad) in the base frame",
          read_only=True),
    Param('link_radius', 0.04, "with an obstacle: the links' capsules' radius (m)",
          finite_positive, read_only=True, low=0.001, high=10.0),
    Param('load_link', '', 'link that picks up a load at load_at (empty: none): the simulated '
          'robot carries it from then on, unknown to the other nodes'),
    Param('load', [0.0], 'the load picked up: mass (kg)[, centre of mass x y z (m) in '
          "load_link's frame[, inertia about it ixx ixy ixz iyy iyz izz (kg m^2)]]"),
    Param('load_at', 0.0, 'physics time at which load_link picks the load up (s since the '
          'simulation started); each new setting picks one more up', low=0.0, high=1e9),
)


def _listed(values):
    """Return numbers as a log line says them: ``[0.08, 0.08, 0.4]``."""
    return '[' + ', '.join(f'{float(v):.4g}' for v in values) + ']'


class SimNode(Node):
    """A simulated robot: efforts in, joint states out (see module)."""

    def __init__(self, node_name='sim_node', **kwargs):
        self.said = Said()                      # what it logs, for /diagnostics
        super().__init__(node_name, **kwargs)
        self.now_ns = clock_ns(self)
        self.model = None
        self.params = params = Parameters(self, PARAMS, self._on_parameters,
                                          checks={'push_link': self._push_link_check,
                                                  'load': self._load_check('load'),
                                                  'load_link': self._load_check('load_link')})
        path = params.urdf_path or robots.path('demo_arm')
        with warnings_logged(self.get_logger()):
            self.model = load_model(path, joint_dynamics=params.joint_dynamics or None,
                                    check_inertia='warn')
        for name, check in (('push_link', self._push_link_check),
                            ('load_link', self._load_check('load_link'))):
            reason = check(getattr(params, name))
            if reason:
                raise ConfigurationError(f'parameter {name}: {reason}')
        self.noise = np.random.default_rng(0) \
            if params.position_noise > 0 or params.effort_noise > 0 else None
        if params.max_catch_up < params.publish_every:
            raise ConfigurationError(f'parameter max_catch_up: must be at least publish_every '
                                     f'({params.publish_every}), got {params.max_catch_up}')
        n = self.model.n
        initial = params.initial_positions
        if len(initial) not in (1, n):
            raise ConfigurationError(f'parameter initial_positions: needs 1 or {n} values, got '
                                     f'{len(initial)}')
        self.dt = 1.0 / params.rate
        substeps = 1
        if params.timestep > 0:
            substeps = max(1, round(self.dt / params.timestep))
            if abs(substeps * params.timestep - self.dt) > 1e-9 * self.dt:
                raise ConfigurationError(f'parameter timestep: must divide the step 1 / rate = '
                                         f'{self.dt:g} s, got {params.timestep:g} s')
        engine = default_engine() if params.engine == 'auto' else params.engine
        if engine == 'internal':
            warm_up(self.model, pushes=True)          # push_link may be set at any time
        cell = self._cell()
        try:
            with warnings_logged(self.get_logger()):
                self.plant = make_plant(engine, self.model, np.asarray(initial, dtype=float),
                                        self.dt, substeps=substeps, friction=params.friction,
                                        integrator=params.integrator, cell=cell)
        except PlantError as e:
            raise ConfigurationError(f'parameter engine: {e}') from None
        self.get_logger().info(f'simulating {self.model.name} ({n} joints) with '
                               f'{self.plant.description}, '
                               f'{"lockstep" if params.lockstep else "real time"}' + (
                                   f', a box of {_listed(cell.box_size)} m at '
                                   f'{_listed(cell.box_position)} m, links as capsules of '
                                   f'{cell.link_radius:g} m' if cell else ''))
        self.throttle = Throttled(self)
        joints = [j for j in params.command_joints if j]
        wrong = check_command_joints(self.model, joints)
        if wrong:
            raise ConfigurationError(f'parameter command_joints: {wrong}')
        self.command_index = np.array([self.model.joint_index(j) for j in joints or
                                       self.model.joint_names], dtype=np.int64)
        with open(path) as f:
            self.create_publisher(String, 'robot_description', LATCHED).publish(
                String(data=f.read()))
        self.state_pub = self.create_publisher(
            JointState, 'joint_states',
            LOCKSTEP_STATE_HISTORY if params.lockstep else STATE_HISTORY)
        self.state_msg = JointState(name=list(self.model.joint_names))
        self.true_wrench_pub = self.create_publisher(WrenchStamped, '~/true_wrench', 100)
        self.true_torques_pub = self.create_publisher(JointState, '~/true_external_torques', 100)
        self.contact_force_pub = self.create_publisher(WrenchStamped, '~/contact_force', 100) \
            if cell else None
        self.clock_pub = self.create_publisher(ClockMessage, '/clock', 10) \
            if params.lockstep or params.publish_clock else None
        commands = self.create_subscription(Float64MultiArray, params.command_topic,
                                            self._on_command, 10)
        self.companions = self._controller(commands.topic_name, self.command_index)
        self.sim = sim = Simulator(self.model, self.plant, self.dt, params, self._publish,
                                   self.throttle)
        self.seen = (0, 0, time.monotonic())   # steps, commands and when, at the last report
        self.diagnostics = Diagnostics(self, 'simulated robot', self._diagnose)
        if params.lockstep:
            steady = Clock(clock_type=ClockType.STEADY_TIME)
            self.create_timer(0.05, sim.watch, clock=steady)
            if params.pace > 0:
                self.create_timer(self.dt * params.publish_every / params.pace, sim.paced,
                                  clock=steady)
            self._publish()
        else:
            # wake once per published state: the steps in between are integrated on the tick,
            # and a controller only sees the states anyway (rclpy costs ~0.3 ms a wake-up)
            self.create_timer(self.dt * params.publish_every, lambda: sim.tick(self.now_ns()))

    def _cell(self):
        """Return the :class:`Cell` of the obstacle's parameters, or None (no obstacle)."""
        p = self.params
        if list(p.obstacle_size) == [0.0]:
            return None
        try:
            return Cell(p.link_radius, tuple(p.obstacle_size), tuple(p.obstacle_position),
                        tuple(p.obstacle_rpy)).checked()
        except ValueError as e:              # 'box_size needs ...': the parameter's name
            name, reason = str(e).replace('box_', 'obstacle_').split(' ', 1)
            raise ConfigurationError(f'parameter {name}: {reason}') from None

    def _diagnose(self, report):
        sim = self.sim
        steps, commands, since = self.seen
        now = time.monotonic()
        self.seen = (sim.steps, sim.commands_in, now)
        seconds = now - since
        report.add('model', f'{self.model.name} ({self.model.n} joints)')
        report.add('engine', self.plant.description)
        report.add('physics steps (Hz)', (sim.steps - steps) / seconds)
        report.add('real-time factor', (sim.steps - steps) * self.dt / seconds)
        report.add('commands in (Hz)', (sim.commands_in - commands) / seconds)
        report.add('physics time (s)', sim.seconds)
        if sim.diverged:
            report.say(ERROR, 'the simulation diverged and stopped: restart sim_node')
        elif self.params.lockstep and sim.held:
            report.say(OK, 'lockstep: holding the arm until commands flow')
        else:
            report.say(OK, 'lockstep' if self.params.lockstep else 'real time')

    def _on_parameters(self, changed):
        if 'friction' in changed:
            self.plant.set_friction(self.params.friction)
        if changed & {'load_link', 'load', 'load_at'}:
            self.sim.loaded()

    def _load_check(self, name):
        """Check ``load_link`` or ``load`` as the nodes check their payload."""
        return payload_check(self, name, ('load_link', 'load'), lambda: self.model)

    def _push_link_check(self, value):
        if not value or self.model is None:       # at start: checked once the model is loaded
            return None
        if value not in self.model.frames:
            return f"'{value}' is not a link of '{self.model.name}'"
        if self.model.frames[value].body < 0:
            return f"'{value}' is fixed to the base: a push there moves nothing"
        return None

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
        tau = np.zeros(self.model.n)
        tau[self.command_index] = data
        self.sim.command(clamp_efforts(self.model, tau, self.throttle), self.now_ns())

    def _publish(self):
        # one message, refilled (publish copies it out), its fields given as array.array, which
        # the message keeps as they are: a list would be converted element by element, at 1 kHz
        msg = self.state_msg
        sec, nanosec = divmod(self.sim.stamp, 1_000_000_000)
        if self.clock_pub is not None:
            clock = ClockMessage()
            clock.clock.sec, clock.clock.nanosec = sec, nanosec
            self.clock_pub.publish(clock)
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        q, effort = self.plant.q, self.sim.tau
        if self.noise is not None:                  # seeded: lockstep stays repeatable
            q = q + self.params.position_noise * self.noise.standard_normal(len(q))
            effort = effort + self.params.effort_noise * self.noise.standard_normal(len(q))
        msg.position = array.array('d', q.tobytes())
        msg.velocity = array.array('d', self.plant.qd.tobytes())
        msg.effort = array.array('d', effort.tobytes())
        self.state_pub.publish(msg)
        if self.params.push_link:
            self._publish_truth(msg.header.stamp)
        if self.contact_force_pub is not None:
            force, _ = self.plant.contact()
            w = WrenchStamped()
            w.header.stamp, w.header.frame_id = msg.header.stamp, self.model.base_link
            w.wrench.force = Vector3(x=float(force[0]), y=float(force[1]), z=float(force[2]))
            self.contact_force_pub.publish(w)

    def _publish_truth(self, stamp):
        pushed = self.plant.pushed()
        wrench, torques = (np.zeros(6), np.zeros(self.model.n)) if pushed is None else pushed[1:]
        w = WrenchStamped()
        w.header.stamp, w.header.frame_id = stamp, self.params.push_link
        w.wrench.force = Vector3(x=float(wrench[0]), y=float(wrench[1]), z=float(wrench[2]))
        w.wrench.torque = Vector3(x=float(wrench[3]), y=float(wrench[4]), z=float(wrench[5]))
        self.true_wrench_pub.publish(w)
        truth = JointState(name=list(self.model.joint_names))
        truth.header.stamp = stamp
        truth.effort = array.array('d', np.asarray(torques, dtype=float).tobytes())
        self.true_torques_pub.publish(truth)


def main(args=None):
    """Console script ``sim_node``."""
    spin(SimNode, args)


if __name__ == '__main__':
    main()
