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
The demo's loop over DDS: nodes started as processes, a trajectory sent, joint states recorded.

Shared by the tracking demo and the identification demo.  sim_node, which stands for the robot
and its driver, runs in a process of its own; the package's nodes share one ``node_container``
(one interpreter, one load of the kernels: a quarter of the memory, docs/speed.md).
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import yaml

from .. import robots
from ..nodes.send_trajectory import LEAD
from ..urdf import load_model

#: Longest wait for the nodes to start, s: each loads the compiled kernels, which took over
#: 120 s on two cores beside four busy processes; progress is said every PROGRESS s.
START, PROGRESS = 900.0, 30.0


#: The nodes the demo hosts in one node_container (sim_node, the robot, runs apart).
CONTAINED = ('dynamics_node', 'trajectory_node', 'base_params_node')


def start_node(name, params):
    command = [os.path.join(os.path.dirname(sys.executable), name), '--ros-args']
    for key, value in params.items():
        command += ['-p', f'{key}:={value}']
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def start_container(nodes, folder):
    """
    Start ``nodes`` (``[(executable, {parameter: text})]``) in one node_container.

    Their parameters go in a parameter file of one section per node (``-p`` would give every
    parameter to every node), each text read as ``-p`` reads it (YAML).
    """
    path = os.path.join(folder, 'nodes.yaml')
    with open(path, 'w') as f:
        yaml.safe_dump({f'/**/{name}': {'ros__parameters': {
            key: yaml.safe_load(str(value)) for key, value in params.items()}}
            for name, params in nodes}, f)
    command = [os.path.join(os.path.dirname(sys.executable), 'node_container'),
               *(name for name, _ in nodes), '--ros-args', '--params-file', path]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


class Loop:
    """
    sim_node and trajectory_node (and more) on the demo arm over DDS, and a node listening.

    On a DDS domain of its own, localhost only.  With ``lockstep`` (default) sim_node steps on
    each command, at most as fast as real time (``pace`` 1), and every node runs on its
    ``/clock``: a busy machine slows the motion down instead of changing it.  ``close(q0)``
    holds ``q0`` until the loop is closed (sim_node applies efforts, trajectory_node computes
    them from its states); ``send`` a trajectory; ``states`` are every JointState heard;
    ``stop()`` ends every process.  ``kernels``: the kernel groups the nodes (and the demo)
    run, compiled first (:func:`..precompile.precompile`), side by side.  ``pace``: physics
    seconds per wall second at most, lockstep (1 for people watching; 0 as fast as the loop
    turns: the same motion, as lockstep makes it, sooner).
    """

    def __init__(self, nodes, lockstep=True, kernels=('rigid',), pace=1.0):
        os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        import rclpy
        from rcl_interfaces.msg import Log
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory

        from ..nodes.process import make_executor
        from ..nodes.qos import ROSOUT
        from ..nodes.sim_node import LOCKSTEP_STATE_HISTORY
        from ..precompile import precompile
        # once, here, before the nodes: on a cold cache each node would compile the same
        # kernels at once, silently, for minutes on a busy 2-core machine
        precompile(lambda text: print(f'  {text}', flush=True), kernels)
        if lockstep:     # sim_node paced to real time at most; everyone on its /clock
            nodes = [(name, dict(params, lockstep='true', pace=f'{float(pace)!r}')
                      if name == 'sim_node'
                      else dict(params, use_sim_time='true')) for name, params in nodes]
        hosted = [(name, params) for name, params in nodes if name in CONTAINED]
        if len(hosted) < 2:
            hosted = []
        apart = [(name, params) for name, params in nodes if (name, params) not in hosted]
        self.names = [name for name, _ in apart] + (
            [f'node_container ({", ".join(name for name, _ in hosted)})'] if hosted else [])
        self.procs, self.rclpy, self.folder = [], rclpy, tempfile.mkdtemp(prefix='demo-')
        rclpy.init()
        try:            # the listener first: a failure here leaves no node process behind
            from rclpy.parameter import Parameter
            self.node = rclpy.create_node('demo', parameter_overrides=[
                Parameter('use_sim_time', value=lockstep)])
            self.states, self.echoed, self.logs = [], [], []
            # The recorder: 1 kHz of states and of /clock.  Taken by the package's executor
            # (the EventsExecutor where rclpy has it: 23,000 messages a second beside two busy
            # loops, 5,000 by rclpy.spin_once), so that a starved demo process keeps up, and as
            # deep as sim_node's lockstep history, so that a backlog is held, not dropped.
            self.node.create_subscription(JointState, '/joint_states', self.states.append,
                                          LOCKSTEP_STATE_HISTORY)
            self.node.create_subscription(JointTrajectory,
                                          '/trajectory_node/trajectory_with_efforts',
                                          self.echoed.append, 10)
            self.node.create_subscription(Log, '/rosout', self.logs.append, ROSOUT)
            self.pub = self.node.create_publisher(JointTrajectory, '/joint_trajectory', 10)
            self.executor = make_executor()
            self.executor.add_node(self.node)
            for name, params in apart:
                self.procs.append(start_node(name, params))
            if hosted:
                self.procs.append(start_container(hosted, self.folder))
        except BaseException:
            self.stop()
            raise

    def wait(self, condition, timeout, what, patient=False):
        """
        Spin until ``condition()``; raise after ``timeout`` s, naming ``what`` it waited for.

        ``patient``: node processes starting on a busy machine (each loads the compiled kernels:
        minutes with four busy processes beside them on two cores); say every PROGRESS s what
        is still awaited, and give up at once if one of them has exited.
        """
        started = time.monotonic()
        end, said = started + timeout, started
        while time.monotonic() < end and not condition():
            self.executor.spin_once(timeout_sec=0.02)
            if patient and any(p.poll() is not None for p in self.procs):
                break
            if patient and time.monotonic() - said >= PROGRESS:
                said = time.monotonic()
                print(f'  still waiting for {what() if callable(what) else what} '
                      f'({said - started:.0f} s so far)', flush=True)
        if not condition():
            raise RuntimeError(f'timed out waiting for {what() if callable(what) else what}')

    def exited(self):
        """Name the node processes that have ended, with their exit codes and last words."""
        return '; '.join(f'{name} (exit code {p.returncode}: '
                         f'{(p.stderr.read() or "").strip().splitlines()[-1:] or ""})'
                         for name, p in zip(self.names, self.procs) if p.poll() is not None)

    def until(self, start, seconds):
        """Wait until the states reach ``seconds`` after ``start`` (rclpy Time), physics time."""
        end = start.nanoseconds + round(seconds * 1e9)

        def reached():
            last = self.states[-1].header.stamp if self.states else None
            return last is not None and last.sec * 1_000_000_000 + last.nanosec >= end

        def where():
            last = self.states[-1].header.stamp if self.states else None
            at = (last.sec * 1_000_000_000 + last.nanosec - start.nanoseconds) * 1e-9 \
                if last is not None else float('nan')
            return (f'the motion to run ({seconds:g} s from its start, at {at:.2f} s; exited: '
                    f'{self.exited() or "none"})')
        self.wait(reached, 120 + 20 * seconds, where, patient=True)

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def close(self, names, q0, ready=lambda: True):
        """Hold ``q0`` until the loop is closed (DDS discovery between the nodes can be late)."""
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        def missing():      # one state is enough: held in lockstep, it repeats once a second
            return ', '.join(what for what, done in [
                ('joint_states from sim_node', len(self.states) > 0),
                ('trajectory_node on /joint_trajectory', self.pub.get_subscription_count() > 0),
                ('the other nodes', ready())] if not done)
        self.wait(lambda: not missing(), START, lambda: f'the nodes to start (no {missing()}; '
                  f'exited: {self.exited() or "none"})', patient=True)
        hold = JointTrajectory(joint_names=list(names))
        hold.points = [JointTrajectoryPoint(positions=list(map(float, q0)))]
        self.pub.publish(hold)
        self.wait(lambda: any(self.states[-1].effort) and any(
            'the loop is closed' in m.msg for m in self.logs), 60, 'the loop to close')

    def plant(self):
        """Say what sim_node simulates with (from its log line at start)."""
        said = [m.msg for m in self.logs if m.name == 'sim_node' and 'simulating' in m.msg]
        return f'sim_node: {said[0]}' if said else 'sim_node: (its plant not heard of)'

    def send(self, make):
        """
        Publish ``make(start)`` starting LEAD s from now; return when it starts (rclpy Time).

        trajectory_node's echo says when: on a busy machine it may take the trajectory after its
        stamp, and then starts it on arrival, from its first point.
        """
        from rclpy.duration import Duration
        from rclpy.time import Time
        start = self.node.get_clock().now() + Duration(seconds=LEAD)
        before = len(self.echoed)
        self.pub.publish(make(start))
        self.wait(lambda: len(self.echoed) > before, 120,
                  'trajectory_node to accept the trajectory')
        stamp = self.echoed[before].header.stamp
        return Time(seconds=stamp.sec, nanoseconds=stamp.nanosec,
                    clock_type=start.clock_type)

    def recorded(self, start, seconds):
        """Return ``t`` (from ``start``), positions, efforts of the states within ``seconds``."""
        stamp = np.array([(m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec
                           - start.nanoseconds) * 1e-9 for m in self.states])
        during = (stamp >= 0) & (stamp <= seconds)
        picked = [m for m, keep in zip(self.states, during) if keep]
        return (stamp[during], np.array([m.position for m in picked]),
                np.array([m.effort for m in picked]))

    def stop(self):
        """End the listener, then every node process (SIGINT; killed after 15 s)."""
        if getattr(self, 'executor', None) is not None:
            self.executor.shutdown()
        if getattr(self, 'node', None) is not None:
            self.node.destroy_node()
        self.rclpy.try_shutdown()
        for p in self.procs:
            p.send_signal(signal.SIGINT)
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        if getattr(self, 'folder', None):
            shutil.rmtree(self.folder, ignore_errors=True)


def demo_model():
    """Return the demo arm with its joint dynamics, and the parameters that load it."""
    urdf = robots.path('demo_arm')
    share = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), '..',
                         'config', 'demo_arm_dynamics.yaml')
    dynamics = share if os.path.exists(share) else ''
    params = {'urdf_path': urdf, 'joint_dynamics': dynamics}
    return load_model(urdf, joint_dynamics=dynamics or None), params
