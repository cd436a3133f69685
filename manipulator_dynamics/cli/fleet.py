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

"""``fleet``: a fleet's logs identified per robot and period, on Dask, and their drifts."""

import os
import sys

from .options import add_command, ARMATURE, CUTOFF, FORMAT, FRICTION_LAW, friction_laws, \
    load, load_options, LOG, MODEL, STILL
from .output import emit, tabulate
from ..identification.fleet import (CONFIRM, DRIFT_SIGMAS, identify_fleet, logs_by_name,
                                    logs_of_manifest, NAME_PATTERN)

#: Extensions of the logs ``fleet`` takes: a first argument with one is not the URDF.
_LOG_EXTENSIONS = ('.csv', '.npz', '.db3', '.mcap')


def cmd_fleet(args):
    """Identify every robot's logs per period, on Dask where it is installed; the drifts."""
    if not args.urdf or args.urdf.lower().endswith(_LOG_EXTENSIONS) or os.path.isdir(args.urdf):
        raise ValueError("fleet needs the robots' URDF first (every log is identified with "
                         f'it), then the logs; got {args.urdf or "no argument"!r} first')
    if bool(args.logs) == bool(args.manifest):
        raise ValueError('fleet takes the logs (grouped by robot and period from their names) '
                         'or --manifest CSV, one of the two')
    law, = friction_laws(args, one='a fleet is compared under one law')
    model = load(args)                         # its errors here, before any worker starts
    logs = (logs_of_manifest(args.manifest) if args.manifest
            else logs_by_name(args.logs, args.pattern or NAME_PATTERN))

    def progress(result):
        said = 'FAILED' if result.error else f'{result.seconds:.1f} s'
        print(f'fleet: {result.robot} {result.period}: {said}', file=sys.stderr, flush=True)

    report = identify_fleet(args.urdf, logs,
                            load_options=dict(load_options(args), parameters=args.parameters),
                            scheduler=args.scheduler, workers=args.workers, serial=args.serial,
                            sigmas=args.sigmas, confirm=args.confirm,
                            progress=None if args.quiet else progress,
                            friction=law, armature=args.armature, cutoff=args.cutoff,
                            still=args.still, retime=not args.stamps_as_logged,
                            topic=args.topic)
    table = '\n\n'.join(f'{title}\n{tabulate(headers, rows)}'
                        for title, headers, rows in report.joint_tables())
    table += '\n\n' + report.drift_summary()
    if args.output:
        table += '\n\nwritten: ' + ', '.join(report.write(args.output))
    emit(args, f'{model.name}: {report.title()}', report.to_dict(), table)


def add_commands(sub):
    """Add ``fleet`` to the subparsers ``sub``."""
    p = add_command(sub, 'fleet', cmd_fleet, "identify a fleet's logs, one identification per "
                    'robot and period (a day, a week), on Dask where it is installed: each '
                    "joint's friction coefficients over time, and the drifts from the first "
                    'period', (MODEL, FORMAT, LOG, CUTOFF, STILL, FRICTION_LAW, ARMATURE))
    p.add_argument('logs', nargs='*', help='CSV, .npz or rosbag2 logs named <robot>_<period> '
                   '(see --pattern); several of one robot and period are identified together')
    p.add_argument('--manifest', metavar='CSV', help='the logs as a CSV with the columns '
                   "robot, period, log (paths relative to the manifest's folder), instead")
    p.add_argument('--pattern', metavar='REGEX', help='regular expression with the groups '
                   'robot and period, matched against each log name without its extension '
                   f'(default {NAME_PATTERN.replace("%", "%%")})')
    p.add_argument('--scheduler', metavar='ADDRESS', help='a running Dask scheduler '
                   '(tcp://host:8786); default: a local cluster, a worker per core')
    p.add_argument('--workers', type=int, help="the local cluster's worker processes "
                   '(default: one per core)')
    p.add_argument('--serial', action='store_true', help='identify in this process, one '
                   'after another (what happens, with a warning, without Dask)')
    p.add_argument('--sigmas', type=float, default=DRIFT_SIGMAS, help='a drift: this many '
                   'deviations of the difference from the first period (default '
                   f'{DRIFT_SIGMAS:g}) ...')
    p.add_argument('--confirm', type=int, default=CONFIRM, help='... in this many identified '
                   f'periods in a row (default {CONFIRM}; 1: every excursion)')
    p.add_argument('--output', metavar='DIR', help='write friction.csv (every coefficient), '
                   'drift.csv and, with drifts, drift.png')
    p.add_argument('--quiet', action='store_true', help='no progress line per identification')
