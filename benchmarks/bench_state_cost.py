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
One joint state through dynamics_node and through the raw echo, counted rather than timed.

bench_latency's ratios move with the machine (its ``--control`` shows by how much), and at 1 kHz
each state finds the node's code and data gone from the caches, so that what a callback costs
is mostly what it touches.  This counts it under valgrind's callgrind, whose simulated caches
make the counts independent of the machine's load: the state callback of dynamics_node
(gravity compensation of the demo arm, the controller's check on, ``report_latency`` on, as
bench_latency runs it) and of ``echo_node.py``'s raw echo, in one process, each on its own
states, as a raw subscription hands them; a subscriber hears each topic, as in the bench.
Before each state, 4 MB of other data is written (not counted), so each callback starts with
cold first-level caches, as at 1 kHz.  Printed per state: instructions and first-level cache
misses (instructions, data), and ours over the echo; then ours again without the controller's
check before each command (its read of the command topic's matched subscriptions, an
experiment only: the node never runs so), to show what that check costs.  Each is counted
twice: the whole callback, and up to the command's send, which is what bench_latency's figure
"in node" times (the latency is taken just after the send; what follows it, the merge, the
observer, the latency report, delays the next state only)::

    python3 benchmarks/bench_state_cost.py [--states 100]

Needs valgrind and a C compiler (a shim of five lines tells callgrind when to count).  The first
run compiles the package's kernels for the CPU valgrind simulates (numba keys its machine code on
the CPU), several minutes once; later runs take about a minute.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

SHIM = r"""
#include <valgrind/callgrind.h>
void counting(void) { CALLGRIND_START_INSTRUMENTATION; }
void toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
void zero(void) { CALLGRIND_ZERO_STATS; }
void dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
"""

#: The counted runs: the raw echo's callback, dynamics_node's, dynamics_node's without the
#: controller's check (``CommandOutput._matched`` answering as when last asked).
PHASES = ('echo', 'ours', 'unchecked')
#: Each counted whole, and up to its command's send (``_sent``): callgrind's dumps, by name.
DUMPS = PHASES + tuple(name + '_sent' for name in PHASES)
LABELS = {'echo': 'raw echo', 'ours': 'dynamics_node',
          'unchecked': "dynamics_node, no controller's check"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--states', type=int, default=100)
    parser.add_argument('--child', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return count(args.child, args.states)
    for tool in ('valgrind', 'callgrind_annotate', 'cc'):
        if shutil.which(tool) is None:
            sys.exit(f'bench_state_cost needs {tool}, which this machine lacks')
    with tempfile.TemporaryDirectory() as folder:
        build_shim(folder)
        run = subprocess.run(
            ['valgrind', '--tool=callgrind', '--trace-children=yes', '--instr-atstart=no',
             '--collect-atstart=no', '--cache-sim=yes',
             f'--callgrind-out-file={folder}/callgrind.%p', sys.executable,
             os.path.abspath(__file__), '--child', folder, '--states', str(args.states)],
            capture_output=True, text=True)
        dumps = {}
        for name in os.listdir(folder):
            if name.startswith('callgrind.'):
                with open(os.path.join(folder, name)) as f:
                    head = f.read(4000)
                found = re.search(r'^desc: Trigger: Client Request: (\w+)$', head, re.M)
                if found:
                    dumps[found.group(1)] = os.path.join(folder, name)
        if set(dumps) != set(DUMPS):
            sys.exit(f'callgrind wrote no counts (exit status {run.returncode}):\n'
                     f'{run.stderr[-3000:]}')
        report({name: annotate(path) for name, path in dumps.items()}, args.states)


def build_shim(folder):
    """Build the shim that starts, stops and dumps callgrind's counts, as ``folder/shim.so``."""
    source = os.path.join(folder, 'shim.c')
    with open(source, 'w') as f:
        f.write(SHIM)
    built = subprocess.run(['cc', '-O1', '-shared', '-fPIC', '-o',
                            os.path.join(folder, 'shim.so'), source],
                           capture_output=True, text=True)
    if built.returncode:
        sys.exit(f'could not build the callgrind shim (valgrind/callgrind.h?):\n{built.stderr}')


def annotate(path):
    """Return the totals of a callgrind dump: ``(instructions, I1 misses, D1 misses)``."""
    return totals(subprocess.run(['callgrind_annotate', '--show=Ir,I1mr,D1mr,D1mw', path],
                                 capture_output=True, text=True, check=True).stdout)


def totals(annotation):
    """Read ``(Ir, I1mr, D1mr + D1mw)`` from callgrind_annotate's PROGRAM TOTALS line."""
    number = r'([\d,]+|\.)(?: \([^)]*\))?\s+'
    found = re.search(r'^\s*' + number * 4 + r'PROGRAM TOTALS', annotation, re.M)
    if found is None:
        raise ValueError('callgrind_annotate printed no PROGRAM TOTALS')
    ir, i1, d1r, d1w = (0 if x == '.' else int(x.replace(',', '')) for x in found.groups())
    return ir, i1, d1r + d1w


def report(costs, states):
    """Print each run's counts per state, and over the raw echo's: whole, then to the send."""
    print(f'one state through each callback, cold first-level caches (callgrind), the mean of '
          f'{states} states')
    for suffix, title in (('', 'the whole callback'),
                          ('_sent', "up to the command's send (bench_latency's in node)")):
        echo = costs['echo' + suffix]
        print(f'{title}:')
        print(f'  {"":38s} {"instructions":>12s} {"I1 misses":>10s} {"D1 misses":>10s} '
              f'{"misses":>8s}   over the raw echo: instructions, misses')
        for name in PHASES:
            cost = costs[name + suffix]
            ir, i1, d1 = (x / states for x in cost)
            ratios = '' if name == 'echo' else \
                f'   {cost[0] / echo[0]:.2f}, {sum(cost[1:]) / sum(echo[1:]):.2f}'
            print(f'  {LABELS[name]:38s} {ir:12.0f} {i1:10.0f} {d1:10.0f} {i1 + d1:8.0f}{ratios}')


def count(folder, states):
    """Run both callbacks under callgrind, each on its own states (the counted run)."""
    import ctypes
    import time

    import numpy as np
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from std_msgs.msg import Float64, Float64MultiArray

    from manipulator_dynamics import load_model, robots
    from manipulator_dynamics.nodes import dynamics_node
    from manipulator_dynamics.rigid.rnea import gravity_torques
    sys.path.insert(0, HERE)
    from bench_state_path import state_bytes
    from echo_node import EchoNode

    shim = ctypes.CDLL(os.path.join(folder, 'shim.so'))
    # under valgrind every state takes far longer than dynamics_node.WAITED_NS: it would look
    # for a queue behind each one, which at 1 kHz it does not
    dynamics_node.WAITED_NS = 10 ** 15
    urdf = robots.path('demo_arm')
    model = load_model(urdf)
    rclpy.init()
    listener = rclpy.create_node('effort_controller')      # the controller, and the bench
    listener.declare_parameter('joints', list(model.joint_names))
    for kind, topic in ((Float64MultiArray, '/effort_controller/commands'),
                        (Float64, '/dynamics_node/command_latency'),
                        (Float64, '/echo_node/command_latency')):
        listener.create_subscription(kind, topic, lambda msg: None, 10)
    echo = EchoNode(parameter_overrides=[Parameter('raw', value=True),
                                         Parameter('report_latency', value=True)])
    node = dynamics_node.DynamicsNode(parameter_overrides=[
        Parameter('urdf_path', value=urdf), Parameter('outputs', value=['']),
        Parameter('report_latency', value=True), Parameter('stale_after', value=0.0)])
    executor = SingleThreadedExecutor()
    for each in (listener, node, echo):
        executor.add_node(each)
    rng = np.random.default_rng(1)
    q, qd = rng.uniform(-1, 1, model.n), rng.uniform(-1, 1, model.n)
    effort = gravity_torques(model, q)
    clock = [node.now_ns()]

    def fresh(count):
        made = [state_bytes(model, q, qd, effort, clock[0] + (k + 1) * 1_000_000)
                for k in range(count)]
        clock[0] += count * 1_000_000
        return made
    deadline = time.monotonic() + 3600                        # the kernels compile first
    while not (node.kernels.dynamics.ready and node.command.sent):
        if time.monotonic() > deadline:
            sys.exit('dynamics_node never commanded')
        node._on_state(fresh(1)[0], {'received_timestamp': time.time_ns()})
        executor.spin_once(timeout_sec=0.1)
    other = np.zeros(500_000)                                  # 4 MB
    counting = {'on': False, 'to_the_send': False}

    def stopping_at_the_send(publisher):
        """Stop counting right after ``publisher`` sends, in a run counted to the send."""
        publish = publisher.publish

        def published(message):
            publish(message)
            if counting['on'] and counting['to_the_send']:
                shim.toggle()
                counting['on'] = False
        publisher.publish = published       # both callbacks' publishers, in every run
    stopping_at_the_send(echo.pub)
    stopping_at_the_send(node.command.pub)
    shim.counting()
    checked = node.command._matched
    for name in PHASES:
        callback = echo.on_bytes if name == 'echo' else node._on_state
        if name == 'unchecked':
            asked = node.command._asked_matched
            node.command._matched = lambda: asked
        for data in fresh(20):                                 # warm, not counted
            callback(data, {'received_timestamp': time.time_ns()})
        executor.spin_once(timeout_sec=0)
        for suffix in ('', '_sent'):
            counting['to_the_send'] = bool(suffix)
            shim.zero()
            for data in fresh(states):
                np.add(other, 1.0, out=other)
                info = {'received_timestamp': time.time_ns()}
                shim.toggle()
                counting['on'] = True
                callback(data, info)
                if counting['on']:
                    shim.toggle()
                    counting['on'] = False
            shim.dump((name + suffix).encode())
            executor.spin_once(timeout_sec=0)
    node.command._matched = checked
    taken = node.command.sent
    for each in (node, echo, listener):
        each.destroy_node()
    rclpy.try_shutdown()
    if taken < 4 * states:
        sys.exit(f'dynamics_node sent {taken} commands for {4 * states} states')


if __name__ == '__main__':
    main()
