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
Load: joint_states at 1 kHz into dynamics_node, against the floor any rclpy node pays.

    python3 benchmarks/bench_latency.py [--seconds 30] [--rounds 3] [--rate 1000]
                                        [--executor single,events] [--observer [--unheard]]
                                        [--control]

For each executor (``MANIPULATOR_DYNAMICS_EXECUTOR``: rclpy's SingleThreadedExecutor polled by
``spin_once``, or rclpy.experimental.EventsExecutor) it runs two nodes in turn as processes, in
the same process shape (the package's ``spin``): dynamics_node (gravity compensation of the
bundled 7-joint arm) and ``echo_node.py`` (positions in, positions out: no model, no work),
twice: as a plain rclpy node (a JointState built of each state, a message built to send) and
raw (``-p raw:=true``: the bytes in, the positions' bytes out, as dynamics_node reads and
writes), so that ours is reported against both floors.
``/joint_states`` go out at ``--rate`` Hz from this process.  Per node:

* latency in the node: from the DDS receipt of a state to the return of its command's
  publication, as the node reports it (``report_latency``): the executor's dispatch, its take
  of the message (and, for the echo, rclpy's conversion of it to a JointState) and the
  callback;
* latency end to end: from the publication of a state here to the reception of its command
  here (two DDS hops and the node's work).  Every state is unique (joint 2 sweeps
  monotonically), so a command says which state it answers: g_2 for dynamics_node, the
  position for the echo;
* superseded: the states never answered with a command (a busy node answers the newest
  state, never a stale one; dynamics_node's observer still reads each);
* CPU: the node process's user + system time over the run, per state sent and as cores.

With ``--observer``, dynamics_node runs a second time in each round with ``external_torques``
(the momentum observer on every state, its levels given so that detection runs too), heard on
``~/external_torques`` with sensor-data QoS (best effort, as REP 2003 asks of a sensor stream's
listeners) and on ``~/contact`` (written when the level changes); ``--wrench``: on
``~/contact_wrench`` too; ``--unheard``: on none (the node then writes neither stream);
``--stream-rate HZ``: the streams capped (``external_torques_rate``).  What the observer adds
to its CPU per state is reported (the issue's budget: 15 %) twice: node against node, and
switched on and off in one node (:class:`Toggle`, the steadier).  The
states carry velocities and efforts in every run, so that all nodes read the same bytes.

The nodes alternate (``--rounds``: echo, ours, echo, ours, ...), so that a change in the
machine's load falls on both; the table pools each node's rounds.  Then ours / echo for p50 and
p99 (in the node, end to end) and CPU per state, per round: their median and range.  Absolute
times move from machine to machine and with the load; the ratios, measured side by side, less
so (end to end, one 10 s round to the next moved the p50 ratio by 0.2 on this machine).
dynamics_node's kernels are compiled first where this install has not marked them: a node
without them commands from the interpreted dynamics (:mod:`.runtime.dynamics`) while they
compile, and its figures would be those (7-10x the echo's, not the compiled node's).
``--control`` says how much: the raw echo runs a second time in each round, after ours, and
its ratios against its first run are printed beside ours (a ratio ours may be told from only
where it stands outside that one).
"""

import argparse
import os
import signal
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

import manipulator_dynamics as md  # noqa: E402, I100
from manipulator_dynamics import precompile, robots  # noqa: E402, I100
from manipulator_dynamics.nodes.dynamics_node import DynamicsNode  # noqa: E402, I100
from manipulator_dynamics.nodes.process import EXECUTOR_VARIABLE, EXECUTORS  # noqa: E402, I100
import rclpy  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64, Float64MultiArray  # noqa: E402, I100

HERE = os.path.dirname(os.path.abspath(__file__))
#: --control: the raw echo run again after ours in each round, and set against its first run.
CONTROL = 'echo_raw again'


def cpu_seconds(pid):
    """
    CPU time of process ``pid`` so far, s: the sum of its threads' run time (schedstat, ns).

    /proc/<pid>/stat counts in clock ticks (10 ms): a second of a node at 1 kHz is about 0.1 s
    of CPU, which that would know to 10 %.  Where schedstat is missing, the ticks.
    """
    total, found = 0, False
    try:
        threads = os.listdir(f'/proc/{pid}/task')
    except OSError:
        threads = []
    for tid in threads:
        try:
            with open(f'/proc/{pid}/task/{tid}/schedstat') as f:
                total += int(f.read().split()[0])
                found = True
        except (OSError, ValueError, IndexError):
            pass                                # a thread that ended meanwhile
    if found:
        return total * 1e-9
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


#: dynamics_node's parameters when it runs the observer (--observer): levels given, so that
#: detection runs from the first state (no calibration).
OBSERVER = ['-p', 'external_torques:=true', '-p', "contact_thresholds:='5.0'", '-p',
            "collision_thresholds:='10.0'"]
#: --pin: (this process's cores, the node's): the node and its DDS threads on a core of their
#: own, so that its CPU per state does not move with where the scheduler puts it
PIN = None
#: The echoes' subscription queue (``--echo-depth``).
ECHO_DEPTH = 1
#: Publishers and services the echoes make beside their own (``--echo-entities``).
ECHO_ENTITIES = 0
#: --observer: the topics listened to (--unheard: none; the node then writes neither stream)
LISTEN = ('external_torques', 'contact')


def measure(node, executor, q, rate, qd, effort):
    """Run one node under one executor; return its numbers (see the module docstring)."""
    model = md.load_model(robots.path('demo_arm'))
    if node.startswith('dynamics_node'):
        command = [os.path.join(os.path.dirname(sys.executable), 'dynamics_node'), '--ros-args',
                   '-p', f'urdf_path:={robots.path("demo_arm")}', '-p', 'outputs:=[""]',
                   '-p', 'report_latency:=true'] + (OBSERVER if node.endswith('observer') else [])
        table = md.gravity_torques(model, q)[:, 1]          # what a command's data[1] says
        latency_topic = '/dynamics_node/command_latency'
    else:
        command = [sys.executable, os.path.join(HERE, 'echo_node.py'), '--ros-args',
                   '-p', 'report_latency:=true', '-p', f'raw:={node == "echo_raw"}',
                   '-p', f'depth:={ECHO_DEPTH}', '-p', f'entities:={ECHO_ENTITIES}']
        table = q[:, 1]
        latency_topic = '/echo_node/command_latency'
    assert np.all(np.diff(np.sort(table)) != 0), 'states must be told apart'
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, **{EXECUTOR_VARIABLE: executor}),
                            preexec_fn=PIN and (lambda: os.sched_setaffinity(0, PIN[1])))
    rclpy.init()
    # the commands' receiver stands for forward_command_controller: a node named after the
    # command topic's namespace with a 'joints' parameter, which dynamics_node checks first
    listener = rclpy.create_node('effort_controller')
    listener.declare_parameter('joints', list(model.joint_names))
    received = []                                   # (receipt ns, data[1])

    def on_command(msg):
        received.append((time.monotonic_ns(), msg.data[1]))
    listener.create_subscription(Float64MultiArray, '/effort_controller/commands', on_command,
                                 1000)
    internal = []                                   # the node's own receipt-to-publication ms
    listener.create_subscription(Float64, latency_topic, lambda m: internal.append(m.data), 1000)
    if node.endswith('observer'):
        from geometry_msgs.msg import WrenchStamped
        from rclpy.qos import qos_profile_sensor_data
        from std_msgs.msg import UInt8
        for kind, topic, qos in ((WrenchStamped, 'contact_wrench', qos_profile_sensor_data),
                                 (UInt8, 'contact', 10),
                                 (JointState, 'external_torques', qos_profile_sensor_data)):
            if topic in LISTEN:
                listener.create_subscription(kind, f'/dynamics_node/{topic}', lambda m: None,
                                             qos)
    pub = listener.create_publisher(JointState, '/joint_states', 1000)
    count = len(q)
    try:
        while pub.get_subscription_count() == 0 or not received:
            if proc.poll() is not None:
                raise RuntimeError(f'{node} exited: {proc.stderr.read()}')
            pub.publish(JointState(name=list(model.joint_names), position=q[0].tolist()))
            rclpy.spin_once(listener, timeout_sec=0.05)      # until the order is confirmed
        time.sleep(1.0)
        rclpy.spin_once(listener, timeout_sec=0)
        received.clear()
        internal.clear()
        sent = np.zeros(count, dtype=np.int64)
        msg = JointState(name=list(model.joint_names))
        period = int(1e9 / rate)
        cpu = cpu_seconds(proc.pid)
        toggle = Toggle(listener, proc.pid, count) if node.endswith('observer') else None
        start = time.monotonic_ns()
        for k in range(count):
            if toggle:
                toggle.at(k)
            due = start + k * period
            while time.monotonic_ns() < due:
                rclpy.spin_once(listener, timeout_sec=0)
            msg.position, msg.velocity, msg.effort = q[k].tolist(), qd.tolist(), effort[k].tolist()
            msg.header.stamp = listener.get_clock().now().to_msg()
            sent[k] = time.monotonic_ns()
            pub.publish(msg)
            rclpy.spin_once(listener, timeout_sec=0)
        cpu = cpu_seconds(proc.pid) - cpu
        wall = (time.monotonic_ns() - start) * 1e-9
        end = time.monotonic_ns() + 1_000_000_000
        while time.monotonic_ns() < end:
            rclpy.spin_once(listener, timeout_sec=0.01)
    finally:
        listener.destroy_node()
        rclpy.try_shutdown()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
    if not received or not internal:
        raise RuntimeError(f'{node} answered none of the {count} states sent in the run '
                           f'({len(received)} commands, {len(internal)} latency reports)')
    got = np.array(received)
    index = answered(table, got[:, 1])
    latency = (got[:, 0] - sent[index]) * 1e-6
    return {'inner': np.array(internal), 'end': latency, 'states': count,
            'answered': len(np.unique(index)), 'cpu': cpu, 'wall': wall,
            'windows': toggle.windows if toggle else []}


def answered(table, values):
    """Return the index of the state each command answers: ``values`` looked up in ``table``."""
    order = np.argsort(table)
    count = len(table)
    position = np.searchsorted(table[order], values)
    upper = order[np.clip(position, 0, count - 1)]
    lower = order[np.clip(position - 1, 0, count - 1)]   # the nearer of the two neighbours
    return np.where(np.abs(table[lower] - values) < np.abs(table[upper] - values), lower, upper)


class Toggle:
    """
    The observer switched off and on in one dynamics_node, in windows of :data:`WINDOW` states.

    The same process, the same DDS threads, the same core: what one process's CPU per state
    moves by from one start to the next (15-75 % between rounds here) falls out.  Each window's
    first fifth (the parameter's way there, the observer's restart) is not counted.
    ``windows``: ``(observer on, CPU s, states)`` of each.
    """

    def __init__(self, node, pid, count):
        from rcl_interfaces.srv import SetParameters
        self.node, self.pid, self.windows = node, pid, []
        self.client = node.create_client(SetParameters, '/dynamics_node/set_parameters')
        self.count, self.on, self.mark = count, True, None

    def at(self, k):
        """Mark the windows: call before state ``k`` is sent."""
        if k % WINDOW == 0 and k + WINDOW <= self.count:
            if self.mark is not None:
                self.windows.append((self.on, cpu_seconds(self.pid) - self.mark[0],
                                     k - self.mark[1]))
            self.on = not self.on if k else True
            self._set(self.on)
            self.mark = None
        elif k % WINDOW == WINDOW // 5 and k + WINDOW - WINDOW // 5 <= self.count:
            self.mark = (cpu_seconds(self.pid), k)

    def _set(self, on):
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParameters
        value = ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=on)
        self.client.call_async(SetParameters.Request(
            parameters=[Parameter(name='external_torques', value=value)]))


def added_in_windows(w):
    """Return what the observer adds, %: each window on against the mean of its neighbours off."""
    out = []
    for i, (on, cpu, states) in enumerate(w):
        off = [c / s for o, c, s in w[max(i - 1, 0):i + 2] if not o]
        if on and off:
            out.append(100 * (cpu / states / np.mean(off) - 1))
    return out


#: States per window of the observer on, then off (--observer): a second at 1 kHz.
WINDOW = 1000


def pooled(runs):
    """One node's rounds together: percentiles of all their samples, totals of the rest."""
    inner = np.concatenate([r['inner'] for r in runs])
    end = np.concatenate([r['end'] for r in runs])
    states = sum(r['states'] for r in runs)
    cpu = sum(r['cpu'] for r in runs)
    return {'inner': np.percentile(inner, [50, 99]), 'end': np.percentile(end, [50, 99]),
            'superseded': 100 * (states - sum(r['answered'] for r in runs)) / states,
            'cpu_us': 1e6 * cpu / states, 'cores': cpu / sum(r['wall'] for r in runs)}


def ratios(ours, echo):
    """Ours / echo of p50 and p99 in the node and end to end, and of CPU per state."""
    return np.r_[ours['inner'] / echo['inner'], ours['end'] / echo['end'],
                 ours['cpu_us'] / echo['cpu_us']]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=30.0, help='per node and executor')
    parser.add_argument('--rounds', type=int, default=3,
                        help='the echo and ours alternate this many times, --seconds in all')
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--executor', default=','.join(EXECUTORS),
                        help=f'comma-separated, of {", ".join(EXECUTORS)}')
    parser.add_argument('--observer', action='store_true',
                        help='also dynamics_node with external_torques: what the observer adds')
    parser.add_argument('--wrench', action='store_true',
                        help='--observer with a listener on ~/contact_wrench too')
    parser.add_argument('--unheard', action='store_true',
                        help="--observer with no listener on the observer's topics")
    parser.add_argument('--stream-rate', type=float, default=0.0, metavar='HZ',
                        help="--observer: the node's external_torques_rate (0: every state)")
    parser.add_argument('--echo-depth', type=int, default=1, metavar='N',
                        help="the echoes' joint_states queue (dynamics_node's is 100): what a "
                        'deeper queue costs')
    parser.add_argument('--echo-entities', type=int, default=0, metavar='N',
                        help='the echoes with N more publishers and services (dynamics_node '
                        'makes about 22): what they cost the executor')
    parser.add_argument('--control', action='store_true',
                        help='the raw echo a second time in each round, after ours, against '
                        'the first: what the machine alone makes of a ratio')
    parser.add_argument('--pin', action='store_true',
                        help='the node on the last core, this process on the others')
    args = parser.parse_args(argv)
    global LISTEN, PIN, OBSERVER, ECHO_DEPTH, ECHO_ENTITIES
    ECHO_DEPTH, ECHO_ENTITIES = args.echo_depth, args.echo_entities
    OBSERVER = OBSERVER + ['-p', f'external_torques_rate:={args.stream_rate}']
    if args.pin:
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) < 2:
            parser.error('--pin needs two cores at least')
        PIN = (set(cores[:-1]), {cores[-1]})
        os.sched_setaffinity(0, PIN[0])
    LISTEN = () if args.unheard else LISTEN + (('contact_wrench',) if args.wrench else ())
    groups = DynamicsNode.GROUPS + (('contact',) if args.observer else ())
    if not precompile.compiled(groups):
        print(f"compiling dynamics_node's kernels ({', '.join(groups)}) first: without them it "
              'would be measured on its interpreted dynamics', flush=True)
        precompile.precompile(groups=groups)
    count = int(args.seconds * args.rate / args.rounds)
    q = np.tile([0.1, 0.0, 0.2, -0.8, 0.1, 0.5, 0.0], (count, 1))
    q[:, 1] = np.linspace(0.2, 1.2, count)             # g of joint 2 is monotonic here
    qd = np.zeros(7)
    qd[1] = 1.0 / (count / args.rate)                  # that sweep's speed, rad/s
    effort = md.gravity_torques(md.load_model(robots.path('demo_arm')), q)
    print(f'{count * args.rounds} joint states at {args.rate:g} Hz into each node (the bundled '
          f'7-joint arm, gravity compensation), in {args.rounds} rounds of echo then ours\n')
    print(f'{"executor":9s} {"node":14s} {"in node p50/p99 [ms]":>21s} '
          f'{"end to end p50/p99 [ms]":>24s} {"superseded":>10s} {"CPU/state":>10s} '
          f'{"cores":>6s}')
    executors = args.executor.split(',')
    per_round = {}
    for executor in executors:
        runs = {'echo_node': [], 'echo_raw': [], 'dynamics_node': []}
        if args.observer:
            runs['dynamics_node+observer'] = []
        if args.control:
            runs[CONTROL] = []
        for _ in range(args.rounds):
            for node in runs:
                runs[node].append(measure('echo_raw' if node == CONTROL else node, executor, q,
                                          args.rate, qd, effort))
        for node, node_runs in runs.items():
            r = pooled(node_runs)
            # ' / ' whatever the figures: a p99 of 100 ms and more still reads as two columns
            print(f'{executor:9s} {node[:14]:14s} {r["inner"][0]:9.3f} / {r["inner"][1]:7.3f} '
                  f'{r["end"][0]:12.3f} / {r["end"][1]:7.3f} {r["superseded"]:9.2f}% '
                  f'{r["cpu_us"]:8.0f}us {r["cores"]:6.2f}', flush=True)
        per_round[executor] = {echo: [ratios(pooled([ours]), pooled([theirs])) for ours, theirs
                                      in zip(runs['dynamics_node'], runs[echo])]
                               for echo in ('echo_node', 'echo_raw')}
        if args.control:
            per_round[executor][CONTROL] = [ratios(pooled([again]), pooled([first])) for
                                            again, first in zip(runs[CONTROL], runs['echo_raw'])]
        if args.observer:
            added = [100 * (pooled([o])['cpu_us'] / pooled([d])['cpu_us'] - 1) for o, d
                     in zip(runs['dynamics_node+observer'], runs['dynamics_node'])]
            print(f"{executor:9s} the observer adds {np.median(added):.1f} % to dynamics_node's "
                  f'CPU per state, node against node (rounds: '
                  f'{", ".join(f"{a:.1f}" for a in added)} %)', flush=True)
            windows = [a for r in runs['dynamics_node+observer']
                       for a in added_in_windows(r['windows'])]
            if windows:
                q1, q2, q3 = np.percentile(windows, [25, 50, 75])
                print(f'{executor:9s} the observer adds {q2:.1f} % [quartiles {q1:.1f}, '
                      f"{q3:.1f}] to dynamics_node's CPU per state, switched on and off in one "
                      f'process ({len(windows)} windows of {WINDOW} states)', flush=True)
    names = ('in node p50', 'p99', 'end to end p50', 'p99', 'CPU per state')
    floors = (('echo_node', 'ours / echo'), ('echo_raw', 'ours / raw echo'))
    if args.control:
        floors += ((CONTROL, 'the raw echo again / the raw echo: the machine alone'),)
    for echo, title in floors:
        print(f'\n{title} (same executor, same run): the median of the rounds [their range]')
        for executor in executors:
            r = np.array(per_round[executor][echo])
            print(f'  {executor:9s} ' + '; '.join(
                f'{name} {np.median(column):.2f} [{column.min():.2f}-{column.max():.2f}]'
                for name, column in zip(names, r.T)))


if __name__ == '__main__':
    main()
