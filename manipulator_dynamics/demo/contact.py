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
The contact demo: the simulated arm pushed in the middle of its trajectory, and found out.

``python3 -m manipulator_dynamics.demo --push`` (``python3 dev.py demo --push``) runs the
tracking demo's loop (sim_node, trajectory_node) with dynamics_node observing: its momentum
observer reads the joint states as a driver gives them, learns its thresholds over the first
seconds of the motion, and publishes the external torques, the wrench at the arm's last link
and the contact level.  Half way through, sim_node pushes that link from outside for a while,
a force dynamics_node never sees, then publishes the truth beside it.  The demo prints how
long detection took and how far the estimate was from the truth, and plots both.
"""

import os
import re

import numpy as np

from .loop import demo_model, Loop
from ..contact.detection import LEVEL_NAMES
from ..nodes.send_trajectory import demo_message, demo_points, SECONDS
from ..runtime.contact_monitor import deepest_link

#: s into the trajectory when the push starts, and how long it lasts.
PUSH_AT, PUSH_FOR = 3.5, 0.6
#: The push, N and N m in the base's axes: a hand pressing the arm's last link.
PUSH = (0.0, 12.0, -15.0, 0.0, 0.0, 0.0)
#: The observer's gain (the node's default), and the seconds of motion its thresholds learn on:
#: the motion out and its turn back (at 2.5 s), where the joints' dry friction sticks for a
#: moment and the residual is at its largest.
GAIN, CALIBRATION = 50.0, 3.0


def run(plot='contact.png', lockstep=True, engine='auto', pace=1.0):
    """Run the contact demo; return 0 when the push was detected in time and nothing else was."""
    from geometry_msgs.msg import WrenchStamped
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    from sensor_msgs.msg import JointState
    from std_msgs.msg import UInt8
    from std_srvs.srv import Trigger

    model, common = demo_model()
    link = deepest_link(model)
    t, q, _, _ = demo_points(model)
    loop = Loop([
        ('sim_node', dict(common, wait_for_command='true', engine=engine,
                          initial_positions='[' + ', '.join(map(str, q[0])) + ']',
                          push_link=link)),
        ('dynamics_node', dict(common, mode='none', external_torques='true',
                               contact_calibration=str(CALIBRATION))),
        ('trajectory_node', common)], lockstep,
        kernels=('rigid', 'forward', 'base-parameters', 'contact'),
        pace=pace)
    heard = {name: [] for name in ('estimate', 'truth', 'level', 'wrench', 'true_wrench')}
    for name, kind, topic in (('estimate', JointState, '/dynamics_node/external_torques'),
                              ('truth', JointState, '/sim_node/true_external_torques'),
                              ('level', UInt8, '/dynamics_node/contact'),
                              ('wrench', WrenchStamped, '/dynamics_node/contact_wrench'),
                              ('true_wrench', WrenchStamped, '/sim_node/true_wrench')):
        loop.node.create_subscription(kind, topic, heard[name].append, 10000)
    print(f'manipulator_dynamics contact demo: {model!r}\nstarting sim_node, dynamics_node '
          f'(observing), trajectory_node (DDS domain {os.environ["ROS_DOMAIN_ID"]}, localhost '
          'only) ...', flush=True)
    setter = loop.node.create_client(SetParameters, '/sim_node/set_parameters')
    rearm = loop.node.create_client(Trigger, '/dynamics_node/rearm')
    try:
        loop.close(model.joint_names, q[0], setter.service_is_ready)
        print(loop.plant(), flush=True)
        start = loop.send(lambda when: demo_message(model, when))
        at = start.nanoseconds * 1e-9 + PUSH_AT
        push = [Parameter(name=name, value=value) for name, value in (
            ('push_wrench', ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                                           double_array_value=list(PUSH))),
            ('push_start', ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=at)),
            ('push_duration', ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                             double_value=PUSH_FOR)))]
        future = setter.call_async(SetParameters.Request(parameters=push))
        loop.wait(future.done, 60, "sim_node's push parameters")
        if not all(r.successful for r in future.result().results):
            raise RuntimeError(f'sim_node refused the push: {future.result().results}')
        print(f'trajectory sent ({SECONDS:g} s, computed torque); at {PUSH_AT:g} s sim_node '
              f'pushes {link} with {list(PUSH)} N (base axes) for {PUSH_FOR:g} s, unseen by '
              'dynamics_node', flush=True)
        loop.until(start, SECONDS + 0.1)
        future = rearm.call_async(Trigger.Request())
        loop.wait(future.done, 60, '/dynamics_node/rearm')
        print(f'/dynamics_node/rearm: {future.result().message}', flush=True)
    finally:
        loop.stop()
    said = [m.msg for m in loop.logs if m.name == 'dynamics_node']
    return report(model, link, heard, start.nanoseconds * 1e-9, said, plot)


def stamps(messages):
    return np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in messages])


def alarms(said, start):
    """
    ``[(t, level)]``: each contact and collision dynamics_node logged, at its state's time.

    ~/contact says each change of level but, a bare UInt8, not when: the node's log lines do,
    with the stamp of the state that raised it (a contact's start at most once a second).
    """
    found = [(float(m.group(2)) - start, 2 if m.group(1) == 'collision' else 1)
             for m in (re.search(r'(contact|collision) at ([0-9.]+) s', line) for line in said)
             if m]
    return sorted(found)


def report(model, link, heard, start, said, plot):
    """Print detection delay and estimation error; plot; return the demo's verdict."""
    tau = 1.0 / GAIN
    te = stamps(heard['estimate']) - start
    estimate = np.array([m.effort for m in heard['estimate']])
    tt, truth = stamps(heard['truth']) - start, np.array([m.effort for m in heard['truth']])
    common = np.intersect1d(np.round(te, 6), np.round(tt, 6))
    e = {round(x, 6): v for x, v in zip(te, estimate)}
    r = {round(x, 6): v for x, v in zip(tt, truth)}
    t = common[(common >= 0) & (common <= SECONDS)]
    estimate, truth = np.array([e[x] for x in t]), np.array([r[x] for x in t])
    events = alarms(said, start)
    for line in said:
        if 'thresholds' in line:
            print(f'dynamics_node: {line}')
    pushing = (t >= PUSH_AT + 5 * tau) & (t < PUSH_AT + PUSH_FOR)
    peak = np.abs(truth[pushing]).max() if pushing.any() else 0.0
    error = np.abs(estimate[pushing] - truth[pushing]).max() if pushing.any() else np.inf
    raised = [at for at, _ in events if at >= PUSH_AT]
    false = [at for at, _ in events if at < PUSH_AT]
    delay = raised[0] - PUSH_AT if raised else np.inf
    print(f'\npush on {link}: J^T F up to {peak:.3g} N m on a joint; detected after '
          f"{delay * 1e3:.1f} ms (the observer's time constant is {tau * 1e3:g} ms)")
    print(f'estimated external torques, {5 * tau * 1e3:g} ms after the push began to its end: '
          f'largest error {error:.3g} N m ({100 * error / max(peak, 1e-300):.2g} % of the peak)')
    for j, name in enumerate(model.joint_names):
        if pushing.any():
            k = np.flatnonzero(pushing)[-1]
            print(f'  {name:8s} estimate {estimate[k, j]:8.3f}   truth {truth[k, j]:8.3f} N m')
    wrench = [m for m in heard['wrench'] if PUSH_AT + 5 * tau <= stamps([m])[0] - start
              < PUSH_AT + PUSH_FOR]
    if wrench:
        w = wrench[-1].wrench
        truth_w = [m.wrench for m in heard['true_wrench']
                   if stamps([m])[0] == stamps(wrench[-1:])[0]]
        print(f'contact wrench at {link} ({link} axes): force '
              f'({w.force.x:.2f}, {w.force.y:.2f}, {w.force.z:.2f}) N' + (
                  f', truth ({truth_w[0].force.x:.2f}, {truth_w[0].force.y:.2f}, '
                  f'{truth_w[0].force.z:.2f}) N' if truth_w else ''))
    print('~/contact said: ' + ', '.join(LEVEL_NAMES[m.data] for m in heard['level']))
    print(f'false alarms before the push: {len(false)}')
    if plot:
        _plot(plot, model, t, estimate, truth, events)
        print(f'\nplot: {os.path.abspath(plot)}')
    return 0 if delay <= 3 * tau + 0.002 and not len(false) else 1


def _plot(path, model, t, estimate, truth, events):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 8), sharex=True,
                               gridspec_kw={'height_ratios': [3, 1]})
    for j, name in enumerate(model.joint_names):
        line, = a.plot(t, truth[:, j], '--', lw=1)
        a.plot(t, estimate[:, j], color=line.get_color(), lw=1.5, label=name)
    a.axvspan(PUSH_AT, PUSH_AT + PUSH_FOR, color='0.9')
    a.set_ylabel('external joint torque [N m]\n(dashed: the truth, J^T F)')
    a.legend(ncol=4, fontsize=8)
    a.set_title(f'{model.name}: the momentum observer in dynamics_node against the true push')
    for at, level in events:
        b.plot([at, at], [0, level], color='C3' if level == 2 else 'C1', lw=2)
    b.set_ylim(-0.1, 2.2)
    b.set_yticks([0, 1, 2], ['free', 'contact', 'collision'])
    b.set_xlabel('time [s]')
    for ax in (a, b):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
