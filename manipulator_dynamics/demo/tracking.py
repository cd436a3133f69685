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
The tracking demo: the whole loop on the bundled robot, as separate processes over DDS.

``python3 -m manipulator_dynamics.demo`` (what ``python3 dev.py demo`` runs) starts sim_node,
dynamics_node, trajectory_node and base_params_node on the demo arm, sends a 5 s trajectory
(:func:`..nodes.send_trajectory.demo_message`), calls ``/compute_base_params``, prints the
tracking error, the range of the efforts and the base parameters, and writes a plot.  It runs on
a DDS domain of its own with localhost-only discovery, so that it never talks to a real robot.
"""

import os

import numpy as np

from .loop import demo_model, Loop
from ..nodes.send_trajectory import demo_message, demo_points, SECONDS


def run(plot='demo.png', lockstep=True, engine='auto', pace=1.0):
    """Run the demo (sim_node in lockstep at real-time pace, or free in real time)."""
    from std_srvs.srv import Trigger
    import yaml

    model, common = demo_model()
    t, q, qd, _ = demo_points(model)
    loop = Loop([
        ('sim_node', dict(common, wait_for_command='true', engine=engine,
                          initial_positions='[' + ', '.join(map(str, q[0])) + ']')),
        ('dynamics_node', dict(common, mode='none')),
        ('trajectory_node', common),
        ('base_params_node', dict(common, friction='true', armature='true'))], lockstep,
        kernels=('rigid', 'forward', 'base-parameters'), pace=pace)
    print(f'manipulator_dynamics demo: {model!r}\nstarting sim_node, dynamics_node, '
          f'trajectory_node, base_params_node (DDS domain {os.environ["ROS_DOMAIN_ID"]}, '
          'localhost only) ...', flush=True)
    service = loop.node.create_client(Trigger, '/compute_base_params')
    try:
        loop.close(model.joint_names, q[0], service.service_is_ready)
        print(loop.plant(), flush=True)
        start = loop.send(lambda when: demo_message(model, when))
        print(f'trajectory sent: every joint out and back over {SECONDS:g} s, computed '
              'torque on the simulated arm', flush=True)
        loop.until(start, SECONDS + 0.1)
        # after the motion: the computation takes a core for a few seconds, which a 2-core
        # machine running the loop in Python does not have to spare
        future = service.call_async(Trigger.Request())
        loop.wait(future.done, 60, '/compute_base_params')
        answer = future.result()
    finally:
        loop.stop()

    import scipy.interpolate
    hermite = scipy.interpolate.CubicHermiteSpline(t, q, qd)
    stamp, measured, applied = loop.recorded(start, SECONDS)
    error = np.abs(measured - hermite(stamp))
    print(f'\ntracking over {len(stamp)} joint states: max error {error.max() * 1e3:.3f} '
          f'mrad, RMS {np.sqrt((error ** 2).mean()) * 1e3:.3f} mrad')
    for j, name in enumerate(model.joint_names):
        print(f'  {name:8s} error max {error[:, j].max() * 1e3:7.3f} mrad   effort '
              f'{applied[:, j].min():8.2f} .. {applied[:, j].max():8.2f} N m '
              f'(limit {model.effort_limit[j]:g})')
    if answer.success:
        base = yaml.safe_load(answer.message)
        print(f'\n/compute_base_params: {base["count"]} base parameters (with friction and '
              f'rotor inertia; method {base["method"]}, {base["samples"]} samples, seed '
              f'{base["seed"]}); the first ones:')
        for p in base['parameters'][:6]:
            print(f'  {p["name"]:18s} {p["value"]: .6g}   {p["equation"]}')
    else:
        print(f'\n/compute_base_params failed: {answer.message}')
    if plot:
        _plot(plot, model, stamp, measured, hermite(stamp), applied)
        print(f'\nplot: {os.path.abspath(plot)}')
    return 0 if answer.success and error.max() < 1e-2 else 1


def _plot(path, model, t, measured, desired, effort):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, (a, b, c) = plt.subplots(3, 1, figsize=(9, 10), sharex=True)
    for j, name in enumerate(model.joint_names):
        line, = a.plot(t, desired[:, j], '--', lw=1)
        a.plot(t, measured[:, j], color=line.get_color(), lw=1.5, label=name)
        b.plot(t, (measured[:, j] - desired[:, j]) * 1e3, lw=1, label=name)
        c.plot(t, effort[:, j], lw=1, label=name)
    a.set_ylabel('joint position [rad]\n(dashed: desired)')
    b.set_ylabel('tracking error [mrad]')
    c.set_ylabel('effort [N m]')
    c.set_xlabel('time [s]')
    a.legend(ncol=4, fontsize=8)
    a.set_title(f'{model.name}: computed torque over DDS (sim_node + trajectory_node)')
    for ax in (a, b, c):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
