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

"""Isobe & Imaizumi's figures for any flexible arm: trajectories, torques, deflections, forces."""

import numpy as np

from ..recordings import csvlog


def read_trajectory(path, joint_names):
    """
    Read a target trajectory, a CSV (:mod:`..recordings.csvlog`): ``time``, each joint's position.

    A joint's position is its ``<joint>.position`` column, or a column named after the joint;
    other columns are ignored (an ``excitation --output`` file's velocities, say).  Returns
    ``t (T,)`` and ``q (T, n)`` in ``joint_names`` order.  Errors name the file, the row and the
    column.
    """
    table = csvlog.read(path)
    return table.time(), table.field(joint_names, 'position')


def plot_flexible(flexible, rigid, path):
    """
    Write Isobe & Imaizumi's figures (Figs. 5-10) for one run as a PNG.

    ``flexible`` and ``rigid`` are :class:`~manipulator_dynamics.FlexibleDynamics` of the same
    target for the flexible arm and for the same arm with rigid links.  Panels: the arm at a few
    instants (target and flexible, in the plane of the first joint), joint angles target vs
    reached, joint torques rigid vs flexible, link-tip deflection, axial force at each link root.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    traj = flexible.trajectory
    arm = traj.arm
    names = arm.joint_names
    t = flexible.t
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    # (a) the arm at a few instants, projected on the plane normal to the first joint axis
    ax = axes[0, 0]
    normal = traj.joint_axes[0, 0]
    e1 = np.cross(normal, [0.0, 0.0, 1.0] if abs(normal[2]) < 0.9 else [1.0, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(normal, e1)
    if abs(normal[2]) > 0.9:          # a vertical first axis: look from above, x right, y up
        e1, e2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    moving = np.flatnonzero(np.any(np.diff(traj.q_target, axis=0) != 0, axis=1))
    last = min(len(t) - 1, moving[-1] + 1 + (moving[-1] - moving[0]) // 2) if moving.size \
        else len(t) - 1
    for k, s in enumerate(np.linspace(0, last, 7).astype(int)):
        for nodes, style in ((traj.nodes_target[s], ':'), (traj.nodes[s], '-')):
            ax.plot(nodes @ e1, nodes @ e2, style, color=plt.cm.viridis(k / 6), lw=1.2)
    ax.set_title('arm: target (dotted) and flexible (solid)')
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_xlabel('m')
    # (b) joint angles
    ax = axes[0, 1]
    for i, name in enumerate(names):
        line, = ax.plot(t, traj.q_target[:, i], ':', label=f'{name} target')
        ax.plot(t, traj.q[:, i], '-', color=line.get_color(), label=f'{name} reached')
    ax.set_title('joint angles: target vs reached by the flexible arm')
    ax.set_ylabel('rad')
    ax.legend(fontsize=7)
    # (c) torques
    ax = axes[0, 2]
    for i, name in enumerate(names):
        line, = ax.plot(rigid.t, rigid.tau[:, i], ':', label=f'{name} rigid')
        ax.plot(t, flexible.tau[:, i], '-', color=line.get_color(), label=f'{name} flexible')
    ax.set_title('joint torques (parallel scheme): rigid vs flexible')
    ax.set_ylabel('N m')
    ax.legend(fontsize=7)
    # (d) tip deflection
    ax = axes[1, 0]
    for i, link in enumerate(arm.links):
        ax.plot(t, 1e3 * np.linalg.norm(flexible.tip_deflection[:, i], axis=1), label=link.name)
    ax.set_title('link-tip deflection from the target')
    ax.set_ylabel('mm')
    ax.set_xlabel('time [s]')
    ax.legend(fontsize=7)
    # (e) axial force at the root element of each link
    ax = axes[1, 1]
    for i, link in enumerate(arm.links):
        elements = np.flatnonzero(arm.element_link == i)
        if elements.size == 0:
            continue
        line, = ax.plot(rigid.t, rigid.axial_force[:, elements[0]], ':')
        ax.plot(t, flexible.axial_force[:, elements[0]], '-', color=line.get_color(),
                label=f'{link.name} root')
    ax.set_title('axial force (tension +): rigid dotted, flexible solid')
    ax.set_ylabel('N')
    ax.set_xlabel('time [s]')
    ax.legend(fontsize=7)
    # (f) energy
    ax = axes[1, 2]
    energy = traj.energy
    for k, label in enumerate(('kinetic', 'potential (gravity)', 'strain')):
        ax.plot(t, energy[:, k] - energy[0, k], label=label)
    ax.set_title('energy change of the flexible arm')
    ax.set_ylabel('J')
    ax.set_xlabel('time [s]')
    ax.legend(fontsize=7)
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    fig.suptitle(f'{arm.model.name}: {arm!r}', fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_step_accuracy(t, tau, runs, path, joint_names=None):
    """
    Write Isobe & Imaizumi's Fig. 3(c) as a PNG: torque curves against the number of steps.

    ``t (T,)``, ``tau (T, n)`` are the exact torques (Newton-Euler on a fine grid); ``runs``
    maps a number of steps per second to ``(t_k, tau_k)``, the streamed scheme's torques at
    those steps.  One panel per joint, the exact curve solid, each run dotted with markers.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    n = tau.shape[1]
    names = joint_names or [f'joint {i + 1}' for i in range(n)]
    fig, axes = plt.subplots(1, n, figsize=(4.5 * n, 3.8), squeeze=False)
    for i, ax in enumerate(axes[0]):
        ax.plot(t, tau[:, i], '-', color='k', lw=1.5, label='Newton-Euler (exact)')
        for k, (steps, (tk, tauk)) in enumerate(sorted(runs.items())):
            ax.plot(tk, tauk[:, i], ':', marker='o', ms=2.5, lw=1.0,
                    color=plt.cm.plasma(k / max(1, len(runs))), label=f'{steps} steps / s')
        ax.set_title(names[i])
        ax.set_xlabel('time [s]')
        ax.set_ylabel('N m')
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle('joint torques of the incremental scheme, one step per control sample, '
                 'against the number of steps (Isobe & Imaizumi, Fig. 3c)', fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
