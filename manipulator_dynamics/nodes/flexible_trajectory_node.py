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
``flexible_trajectory_node``: the flexible arm's trajectory and torques for a rigid target.

The arm comes from ``arm_config``, a flexible arm YAML (``config/flexible_arm.yaml``: a URDF plus
beam properties per link, or a planar arm).  Two modes:

``mode: trajectory`` (the default).  On every rigid target trajectory_msgs/JointTrajectory
on ``trajectory_topic`` (every joint of the arm, by name; ``time_from_start`` strictly
increasing), it samples the target every ``dt`` s (cubic Hermite through the points, holding the
last point for ``settle`` s more so the vibration after the motion shows), runs Isobe & Imaizumi's
kinematics scheme and parallel inverse-dynamics scheme (:mod:`..runtime.flexible_targets`), and
publishes, at ``output_rate`` points per second:

* ``~/flexible_trajectory`` (JointTrajectory, the target's joint order): ``positions`` the joint
  angles the flexible arm actually reaches, ``velocities`` their rates, ``effort`` the joint
  torques of the parallel scheme for the flexible arm;
* ``~/tip_deflections`` (Float64MultiArray, 3-D ``point x link x xyz``): each link tip's
  displacement from its rigid target, base frame, m; point ``k`` is point ``k`` of
  ``~/flexible_trajectory``;
* ``~/link_names`` (String, latched): the link order of ``~/tip_deflections``.

A trajectory the arm cannot take (missing joints, times not increasing, NaN, a step too coarse
for the arm's first bending mode) is rejected with a throttled warning naming what is wrong.

``mode: stream``.  Isobe & Imaizumi's scheme one control sample at a time
(:class:`~manipulator_dynamics.FlexibleStream`): every sensor_msgs/JointState on
``target_topic`` is the target of the next step of ``dt`` s (positions of every joint of the arm,
by name; velocities used where every joint has one, else taken from the samples so far).  The
publisher sends one target per ``dt``: the node steps once per message and never looks ahead.
Per target it publishes

* ``~/flexible_state`` (sensor_msgs/JointState, the target's stamp, the arm's joint order):
  ``position`` the angles the flexible arm reaches, ``effort`` the step's joint torques;
* ``~/tip_deflections`` (Float64MultiArray, 2-D ``link x xyz``), m.

The first target starts the stream at rest there; ``~/reset`` (std_srvs/Trigger) forgets it, so
that the next target starts a new one.  A target that cannot be used (a missing joint, NaN,
stamps out of order) is rejected with a throttled warning and the stream keeps its state;
targets whose stamps are not ``dt`` apart are used, with a throttled warning.

Kernels the install could not compile for this machine (``pip install -e``, a wheel, another
CPU) compile in a background process from the node's start (:mod:`.kernels`): ``configure``
answers at once, every target is refused with a throttled warning that says so until they are
ready, and ``/diagnostics`` says not ready (WARN, the seconds so far) meanwhile.
"""

import os

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ._parameters import finite_positive, one_of, Param, Parameters, zero_or_positive
from .diagnostics import Diagnostics
from .kernels import compiling, Kernels, WithKernels
from .lifecycle import MANAGED_PARAM, ManagedNode
from .logs import Throttled
from .messages import array_message, deserialize_joint_state, names_message, time_message
from .model_source import existing_file
from .process import clock_ns, spin
from .qos import LATCHED
from ..flexible.arm import FlexibleArm
from ..flexible.dynamics import check_step, flexible_inverse_dynamics
from ..flexible.stream import FlexibleStream
from ..precompile import one_at_a_time
from ..runtime.flexible_targets import flexible_target
from ..runtime.follower import Plan
from ..runtime.joint_states import JointStates
from ..runtime.refused import BadMessage

#: The kernel group (:data:`..precompile.GROUPS`) of the flexible arm's dynamics.
GROUPS = ('flexible',)


def default_arm_config():
    """Find ``config/flexible_arm.yaml``: the installed share folder, else the source tree."""
    try:
        from ament_index_python.packages import get_package_share_directory
        path = os.path.join(get_package_share_directory('manipulator_dynamics'), 'config',
                            'flexible_arm.yaml')
        if os.path.isfile(path):
            return path
    except Exception:           # not installed with ament (a pip install or a checkout)
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, '..', '..', 'config', 'flexible_arm.yaml'))


PARAMS = (
    MANAGED_PARAM,
    Param('arm_config', '', 'flexible arm YAML (empty: the bundled config/flexible_arm.yaml)',
          existing_file, read_only=True),
    Param('mode', 'trajectory', 'trajectory (whole targets) | stream (one JointState per step)',
          one_of('trajectory', 'stream'), read_only=True),
    Param('target_topic', 'target_joint_states', 'in mode stream: the target of each step '
          '(sensor_msgs/JointState, one per dt)', read_only=True),
    Param('trajectory_topic', 'joint_trajectory', 'rigid target trajectory_msgs/JointTrajectory',
          read_only=True),
    Param('dt', 0.001, 'integration step, s', finite_positive, low=0.0, high=1.0),
    Param('settle', 0.5, 'time to keep integrating after the last point, s (0: none)',
          zero_or_positive, low=0.0, high=3600.0),
    Param('output_rate', 100.0, 'points per second in the published results', finite_positive,
          low=0.0, high=100000.0),
)


class FlexibleTrajectoryNode(WithKernels, ManagedNode):
    """
    Flexible trajectory and parallel-scheme torques of each target trajectory (see module).

    Managed (``managed:=true``, :mod:`.lifecycle`): configure loads the arm and its kernels,
    activate takes targets, deactivate drops them (and the stream).  Unmanaged, an arm that
    does not load ends the node (exit code 2): it has no other source to wait for.  Kernels
    not compiled for this machine compile in the background from the node's start
    (:mod:`.kernels`): configure answers at once, and targets are refused, each said, until
    the kernels are ready; ``/diagnostics`` says not ready meanwhile.
    """

    NEEDS_CONFIGURE = True

    def __init__(self, node_name='flexible_trajectory_node', **kwargs):
        super().__init__(node_name, **kwargs)
        self.now_ns = clock_ns(self)
        self.params = params = Parameters(self, PARAMS)
        self.arm = self.stream = self.targets = None
        self.warmed = None                      # the arm whose kernels are loaded
        self.last_stamp = 0
        self.served = self.rejected = 0         # targets answered and rejected, ever
        self.seen = (0, 0)                      # those counts at the last report
        self.throttle = Throttled(self)
        self.deflection_pub = self.create_publisher(Float64MultiArray, '~/tip_deflections', 10)
        self.names_pub = self.create_publisher(String, '~/link_names', LATCHED)
        if params.mode == 'stream':
            self.state_pub = self.create_publisher(JointState, '~/flexible_state', 10)
            self.create_service(Trigger, '~/reset', self._on_reset)
        else:
            self.flexible_pub = self.create_publisher(JointTrajectory, '~/flexible_trajectory',
                                                      10)
        self.diagnostics = Diagnostics(self, f'flexible arm ({params.mode})', self._diagnose)
        # before anyone asks: compiling, where they are not, starts with the node
        self.kernels = Kernels(self, GROUPS, self._load_kernels, self._load_kernels,
                               meanwhile='targets are refused')
        self.start()

    def _diagnose(self, report):
        served, rejected = self.served - self.seen[0], self.rejected - self.seen[1]
        self.seen = (self.served, self.rejected)
        arm = self.arm
        report.add('model', 'none' if arm is None else f'{arm.model.name} ({arm.n} joints)')
        report.add('model source', self.params.arm_config or 'config/flexible_arm.yaml')
        report.add('targets answered (last window)', served)
        report.add('targets rejected (last window)', rejected)
        if self.params.mode == 'stream':
            report.add('stream steps', 0 if self.stream is None else self.stream.steps)
        self.kernels.say(report)
        if self.say_state(report) and not compiling(self):
            report.say(0, 'serving')

    # --- lifecycle (see .lifecycle) ----------------------------------------------------------
    def configure(self):
        params = self.params
        try:
            arm = FlexibleArm.from_yaml(params.arm_config or default_arm_config())
        except (ValueError, OSError) as e:
            return f'arm_config: {e}'
        if params.mode == 'stream':
            try:
                check_step(arm, params.dt, np.zeros(arm.n))
            except ValueError as e:
                return f'dt: {e}'
            self.targets = JointStates(arm.model, topic='target',
                                       deserialize=deserialize_joint_state)
            what = f'streaming one step of {params.dt:g} s per target on {params.target_topic}'
        else:
            what = f'targets on {params.trajectory_topic}'
        if self.kernels.dynamics.ready:         # else loaded once compiled (_load_kernels)
            self._warm(arm)
        self.arm = arm
        self.names_pub.publish(names_message([link.name for link in arm.links]))
        self.get_logger().info(f'ready: {arm!r}; {what}' + (
            '' if self.kernels.dynamics.ready else '; refused until the kernels are compiled'))
        return None

    def _warm(self, arm):
        """Compile (or load) the kernels before the first target needs them; say the modes."""
        if self.warmed is arm:
            return
        with one_at_a_time():
            if self.params.mode == 'stream':
                FlexibleStream(arm, np.zeros(arm.n), self.params.dt).step(np.zeros(arm.n))
            else:   # a step short enough for any arm: the parameter's is checked per target
                flexible_inverse_dynamics(arm, np.arange(3) * 1e-6, np.zeros((3, arm.n)))
            modes = arm.natural_frequencies(count=2)
        self.get_logger().info(f'{arm.model.name}: first modes '
                               + ', '.join(f'{f:.4g} Hz' for f in modes))
        self.warmed = arm

    def _load_kernels(self):
        """
        Load the compiled kernels for the arm there is, if one.

        In the kernels' thread, then on the executor, where they are loaded already (an arm
        configured in between).
        """
        arm = self.arm
        if arm is not None:
            self._warm(arm)

    def _not_ready(self, what):
        """Refuse a target while the kernels compile; return whether it was refused."""
        waiting = compiling(self)
        if waiting:
            self._reject(what, self.kernels.state()[1])
        return waiting

    def activate(self):
        params = self.params
        if params.mode == 'stream':
            # raw: the targets' bytes, read by JointStates.read_serialized (no message built)
            self.inputs = [self.create_subscription(JointState, params.target_topic,
                                                    self._on_target, 10, raw=True)]
        else:
            self.inputs = [self.create_subscription(JointTrajectory, params.trajectory_topic,
                                                    self._on_trajectory, 10)]

    def deactivate(self):
        self.drop_inputs()
        self.stream, self.last_stamp = None, 0

    def cleanup(self):
        self.arm = self.targets = None

    def _on_target(self, data):
        if not self.inputs or self._not_ready('target'):      # deactivated: taken before it
            return
        arm, dt = self.arm, self.params.dt
        try:
            state = self.targets.read_serialized(data, self.now_ns())
            if state is None:
                return
            q, qd, _, stamp = state
            if self.stream is None:
                self.stream = FlexibleStream(arm, q, dt, qd0=qd)
                sample = self.stream.sample
            else:
                sample = self.stream.step(q, qd)
        except ValueError as e:
            self._reject('target', e)
            return
        if stamp and self.last_stamp and abs((stamp - self.last_stamp) * 1e-9 - dt) > 0.5 * dt:
            self.throttle.warn('period', f'targets arrive {(stamp - self.last_stamp) * 1e-9:.4g}'
                               f' s apart but each is one step of dt = {dt:g} s')
        self.last_stamp = stamp
        out = JointState(name=list(arm.joint_names), position=sample.q.tolist(),
                         effort=sample.tau.tolist())
        out.header.stamp = time_message(stamp)
        self.state_pub.publish(out)
        self.deflection_pub.publish(array_message(sample.tip_deflection, ('link', 'xyz')))
        self.served += 1

    def _reject(self, what, error):
        """Log (throttled, per kind of fault) why a target was not used; nothing else changes."""
        kind = f'{what} {error.kind}' if isinstance(error, BadMessage) else what
        self.rejected += 1
        self.throttle.warn(kind, f'target rejected: {error}')

    def _on_reset(self, request, response):
        steps = 0 if self.stream is None else self.stream.steps
        self.stream = None
        self.last_stamp = 0
        response.success = True
        response.message = (f'stream reset after {steps} steps: the next target starts a new '
                            'one at rest')
        self.get_logger().info(response.message)
        return response

    def _on_trajectory(self, msg):
        if not msg.points or not self.inputs:         # empty, or deactivated (taken before)
            return
        if self._not_ready('trajectory'):
            return
        try:
            plan = Plan(self.arm.model, msg)
            if len(msg.points) < 2:
                raise BadMessage('points', 'a target needs at least 2 points')
            params = self.params
            answer = flexible_target(self.arm, plan, params.dt, params.settle,
                                     params.output_rate)
        except ValueError as e:
            self._reject('trajectory', e)
            return
        q, tau = answer.result.trajectory.q, answer.result.tau
        inverse = np.argsort(plan.order)          # model order -> the message's order
        out = JointTrajectory(header=msg.header, joint_names=plan.names)
        for s in answer.keep:
            seconds = float(answer.t[s])
            point = JointTrajectoryPoint(positions=q[s][inverse].tolist(),
                                         velocities=answer.rates[s][inverse].tolist(),
                                         effort=tau[s][inverse].tolist())
            point.time_from_start.sec = int(seconds)
            point.time_from_start.nanosec = int(round((seconds - int(seconds)) * 1e9))
            out.points.append(point)
        self.flexible_pub.publish(out)
        self.served += 1
        self.deflection_pub.publish(array_message(answer.result.tip_deflection[answer.keep],
                                                  ('point', 'link', 'xyz')))
        self.get_logger().info(answer.summary())


def main(args=None):
    """Console script ``flexible_trajectory_node``."""
    spin(FlexibleTrajectoryNode, args)


if __name__ == '__main__':
    main()
