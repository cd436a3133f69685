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

r"""
``node_container``: several of the package's nodes in one process, on one executor.

    node_container sim_node dynamics_node trajectory_node base_params_node \\
        --ros-args --params-file demo.yaml -r trajectory_node:joint_trajectory:=/plan

Like a component container (rclcpp_components hosts C++ nodes only), it saves a process per
node: the interpreter, numpy, scipy, rclpy and the compiled kernels are loaded once, not once
per node (docs/speed.md has the figures).  Each node keeps its own name, parameters and
remappings, as ROS 2 gives them per node: ``executable=name`` renames one; a parameter file's
``/**/<name>:`` section and a remap prefixed ``<name>:`` reach that node only, while ``-p`` and
un-prefixed remaps reach every node (a parameter that none of the nodes has stops the
container, naming it: :func:`._parameters.refuse_unknown`).  A node that
cannot start ends the process with exit code 2, saying which and why; a managed node that is
shut down leaves, and the process ends with its last node.
"""

import functools
import importlib
import sys

#: executable -> (module, class) of each node the container can host
NODES = {
    'dynamics_node': ('dynamics_node', 'DynamicsNode'),
    'trajectory_node': ('trajectory_node', 'TrajectoryNode'),
    'sim_node': ('sim_node', 'SimNode'),
    'base_params_node': ('base_params_node', 'BaseParamsNode'),
    'flexible_trajectory_node': ('flexible_trajectory_node', 'FlexibleTrajectoryNode'),
}

USAGE = ('usage: node_container EXECUTABLE[=NAME] [EXECUTABLE[=NAME] ...] [--ros-args ...]\n'
         f'EXECUTABLE: {", ".join(NODES)}')


def node_specs(words):
    """
    Return ``[(executable, name)]`` for ``words`` (``executable`` or ``executable=name``).

    ValueError names an unknown executable, an empty name, or a name given twice.
    """
    if not words:
        raise ValueError('no node given')
    specs = []
    for word in words:
        executable, _, name = word.partition('=')
        if executable not in NODES:
            raise ValueError(f'unknown node {executable!r} (known: {", ".join(NODES)})')
        if '=' in word and not name:
            raise ValueError(f'{word!r}: an empty node name')
        specs.append((executable, name or executable))
    names = [name for _, name in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f'node names given twice: {", ".join(twice)} (rename one: '
                         'EXECUTABLE=NAME)')
    return specs


def factories(specs):
    """Return the node classes of ``specs``, each bound to its name (imported when asked for)."""
    made = []
    for executable, name in specs:
        module, cls = NODES[executable]
        node_class = getattr(importlib.import_module(f'manipulator_dynamics.nodes.{module}'),
                             cls)
        made.append(functools.partial(node_class, node_name=name))
    return made


def main(argv=None):
    """Console script ``node_container``."""
    from .process import spin_nodes
    argv = list(sys.argv if argv is None else argv)
    program, rest = argv[0], argv[1:]
    cut = rest.index('--ros-args') if '--ros-args' in rest else len(rest)
    try:
        specs = node_specs(rest[:cut])
    except ValueError as e:
        print(f'node_container: {e}\n{USAGE}', file=sys.stderr)
        raise SystemExit(2)
    spin_nodes(factories(specs), [program] + rest[cut:])


if __name__ == '__main__':
    main()
