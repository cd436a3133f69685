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
Write config/<node>.yaml: every parameter a node declares, its default and its description.

The nodes' parameter tables (``PARAMS`` of each node module) are the one description of their
parameters; the YAML files are written from them, each keeping the comment lines it starts
with.  Run ``python3 tools/make_config.py`` after changing a table (``--output DIR`` writes the
files elsewhere); the files are committed, and the suite checks that this writes them as they
are.
"""

import argparse
import importlib
import json
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, '..', 'config')
NODES = ('dynamics_node', 'trajectory_node', 'base_params_node', 'sim_node',
         'flexible_trajectory_node')
#: The comment column, and the longest line.
COLUMN, WIDTH = 40, 99


def value(v):
    """Write ``v`` as YAML flow, as a person would (``""`` for an empty string)."""
    import yaml
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return '[' + ', '.join(value(x) for x in v) + ']'
    if v and yaml.safe_load(v) == v and not any(c in v for c in ',[]{}#'):
        return v
    return json.dumps(v)


def entry(p):
    """Return the lines of one parameter: ``name: value`` and its description as a comment."""
    head = f'    {p.name}: {value(p.default)}'
    column = max(COLUMN, len(head) + 1)
    text = p.description + (' (read-only)' if p.read_only else '')
    lines = textwrap.wrap(text, WIDTH - column - 2, break_on_hyphens=False) or ['']
    return [f'{head:<{column}}# {lines[0]}'] + [f'{"":<{column}}# {line}' for line in lines[1:]]


def document(node, header):
    """Return the YAML of ``node``: ``header`` (its comment lines), then its section."""
    table = importlib.import_module(f'manipulator_dynamics.nodes.{node}').PARAMS
    lines = list(header) + [f'/**/{node}:', '  ros__parameters:']
    for p in table:
        lines += entry(p)
    return '\n'.join(lines) + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    parser.add_argument('--output', default=CONFIG, help='folder to write into (default: config/)')
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.join(HERE, '..'))
    for node in NODES:
        with open(os.path.join(CONFIG, f'{node}.yaml'), encoding='utf-8') as f:
            header = [line.rstrip('\n') for line in f if line.startswith('#')]
        os.makedirs(args.output, exist_ok=True)
        with open(os.path.join(args.output, f'{node}.yaml'), 'w', encoding='utf-8') as f:
            f.write(document(node, header))


if __name__ == '__main__':
    main()
