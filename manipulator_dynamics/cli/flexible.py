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

"""``flexible``: Isobe & Imaizumi's two schemes on a flexible arm and on its rigid twin."""

import numpy as np

from .options import FORMAT
from .output import emit, fmt, tabulate
from ..recordings import csvlog


def cmd_flexible(args):
    """Run both of Isobe & Imaizumi's schemes on a flexible arm and its rigid twin; print, plot."""
    from ..flexible.arm import FlexibleArm
    from ..flexible.dynamics import flexible_inverse_dynamics
    from ..flexible.plot import plot_flexible, read_trajectory

    arm = FlexibleArm.from_yaml(args.config)
    t, q = read_trajectory(args.trajectory, arm.joint_names)
    flexible = flexible_inverse_dynamics(arm, t, q, dt=args.dt)
    rigid = flexible_inverse_dynamics(arm.with_rigid_links(), t, q, dt=args.dt)
    freqs = arm.natural_frequencies(q[0], 3)
    deflection = np.linalg.norm(flexible.tip_deflection, axis=2).max(axis=0)
    angle_error = np.abs(flexible.trajectory.q - flexible.trajectory.q_target).max(axis=0)
    root = [np.flatnonzero(arm.element_link == i) for i in range(arm.n)]
    axial = [float(np.abs(flexible.axial_force[:, e[0]]).max()) if e.size else 0.0 for e in root]
    data = {'arm': repr(arm), 'steps': int(flexible.t.size),
            'dt': float(np.max(np.diff(flexible.t))),
            'natural_frequencies_hz': [float(f) for f in freqs],
            'joints': [{'name': name, 'peak_tau_rigid': float(np.abs(rigid.tau[:, i]).max()),
                        'peak_tau_flexible': float(np.abs(flexible.tau[:, i]).max()),
                        'max_angle_error': float(angle_error[i]),
                        'max_tip_deflection': float(deflection[i]),
                        'max_root_axial_force': axial[i]}
                       for i, name in enumerate(arm.joint_names)]}
    table = tabulate(['joint', 'peak |tau| rigid', 'peak |tau| flexible', 'max angle error',
                      'max tip deflection [m]', 'max |axial| [N]'],
                     [[j['name']] + [fmt(j[k]) for k in ('peak_tau_rigid', 'peak_tau_flexible',
                                                         'max_angle_error', 'max_tip_deflection',
                                                         'max_root_axial_force')]
                      for j in data['joints']])
    if args.plot:
        plot_flexible(flexible, rigid, args.plot)
        data['plot'] = args.plot
        table += f'\n\nfigures written to {args.plot}'
    if args.output:
        _write_flexible_csv(args.output, flexible)
        data['output'] = args.output
        table += f'\ntime series written to {args.output}'
    title = (f'{arm!r}\n{data["steps"]} steps of {data["dt"]:.3g} s; first modes (joints held at '
             f'the start): {", ".join(f"{f:.4g} Hz" for f in freqs)}')
    emit(args, title, data, table)


def _write_flexible_csv(path, result):
    traj = result.trajectory
    columns = csvlog.joint_columns(traj.arm.joint_names, target=traj.q_target, reached=traj.q,
                                   effort=result.tau)
    deflection = np.linalg.norm(result.tip_deflection, axis=2)
    columns.update({f'{link.name}.tip_deflection': deflection[:, k]
                    for k, link in enumerate(traj.arm.links)})
    csvlog.write(path, result.t, columns)


def add_commands(sub):
    """Add ``flexible`` to the subparsers ``sub``: a flexible arm's YAML, not a URDF."""
    p = sub.add_parser('flexible', help='flexible-link arm: flexible trajectory and joint torques '
                       '(Isobe & Imaizumi)', description='Run the kinematics scheme and the '
                       'parallel inverse-dynamics scheme on a flexible arm and on the same arm '
                       'with rigid links, along a target trajectory.', parents=[FORMAT],
                       allow_abbrev=False)
    p.add_argument('config', help='flexible arm YAML (see config/flexible_arm.yaml)')
    p.add_argument('trajectory', help='CSV with a time column and <joint>.position (or <joint>) '
                   'columns; others, as excitation --output writes, are ignored')
    p.add_argument('--dt', type=float, help='integrate on a uniform grid of this step (s); '
                   'default: the CSV samples')
    p.add_argument('--plot', metavar='PNG', help='write the figures to this PNG')
    p.add_argument('--output', metavar='CSV', help='write the time series (targets, reached '
                   'angles, efforts, tip deflections) to this CSV')
    p.set_defaults(func=cmd_flexible)
