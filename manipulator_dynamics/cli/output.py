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

"""What a command prints: a fixed-width table for a person, JSON or YAML for a program."""

import json

import numpy as np


def emit(args, title, data, table):
    """Print ``data`` as ``--format`` asks, or ``title`` and ``table`` for ``--format table``."""
    if args.format == 'json':
        print(json.dumps(data, indent=2))
    elif args.format == 'yaml':
        import yaml
        print(yaml.safe_dump(data, sort_keys=False), end='')
    else:
        print(title)
        print(table)


def joint_table(model, columns):
    """Format a fixed-width table: one row per joint, ``columns`` is ``{header: values}``."""
    headers = ['joint'] + list(columns)
    rows = [[name] + [fmt(col[i]) for col in columns.values()]
            for i, name in enumerate(model.joint_names)]
    return tabulate(headers, rows)


def fmt(x):
    """Format a number in six significant digits, anything else as it prints."""
    if isinstance(x, (float, np.floating)):
        return f'{x: .6g}'
    return str(x)


def tabulate(headers, rows):
    """Format ``rows`` under ``headers`` in columns as wide as their widest entry."""
    widths = [max(len(str(r[c])) for r in [headers] + rows) for c in range(len(headers))]
    lines = ['  '.join(str(h).ljust(w) for h, w in zip(headers, widths))]
    lines.append('  '.join('-' * w for w in widths))
    lines += ['  '.join(str(v).ljust(w) for v, w in zip(r, widths)) for r in rows]
    return '\n'.join(lines)


def matrix(M):
    """Format a matrix, a row per line."""
    return '\n'.join(' '.join(f'{v: 10.5f}' for v in row) for row in M)
