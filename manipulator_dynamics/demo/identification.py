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
The identification demo: the simulated arm identified from its own motion, over DDS.

``python3 -m manipulator_dynamics.demo --identify`` designs an excitation trajectory for
the demo arm (:func:`excitation_trajectory`), has trajectory_node run it on sim_node (computed
torque; the arm simulated by MuJoCo, where installed, with its rotor inertias and friction:
its dry friction is a constraint, stiff enough that a sliding joint feels ``Fc``, the law that
is identified), then, in the same trajectory, a
rest-to-rest transfer and a random motion of the same kind for validation.  From the recorded
``/joint_states`` (positions and applied efforts, as a real driver reports them) it identifies
the base parameters and a physically consistent set (:func:`identify`), compares them with the
simulated arm's own, predicts the validation motion's torques with the identified model, and
plots measured against predicted torques.
"""

import os

import numpy as np

from .loop import demo_model, Loop
from ..identification.base_parameters import base_parameters
from ..identification.estimate import identify
from ..identification.excitation import excitation_trajectory
from ..identification.logs import condition, stamps_summary
from ..identification.settings import Settings
from ..identification.validation import at_full_rate
from ..model import parameter_problems
from ..nodes.send_trajectory import trajectory_message
from ..rigid.rnea import inverse_dynamics
from ..trajectories import rest_to_rest

#: Seconds of the rest-to-rest transfer between the excitation and the validation motion.
TRANSFER = 2.0
#: Low-pass cutoff of the identification, Hz: five times the motion's highest harmonic.
CUTOFF = 2.5
#: Speed (rad/s) below which a joint is near a reversal, where Coulomb friction switches.
REVERSAL = 0.05
#: Still speed of the fit (rad/s, :mod:`..identification.stiction`): MuJoCo's dry friction is
#: a soft constraint, neither stuck nor sliding below a few mrad/s (``Fc`` over the step's
#: constraint stiffness times the joint's inertia); a noiseless simulation gives ``'auto'``
#: nothing to go by.
STILL = 0.01


def plan(model, duration):
    """Return the excitation, the whole motion ``t, q, qd, qdd``, and when validation starts."""
    excitation = excitation_trajectory(model, duration=duration, maxiter=40)
    check = excitation_trajectory(model, duration=duration, seed=1, maxiter=0)
    rate = 1.0 / (excitation.t[1] - excitation.t[0])
    t_move = np.arange(1, int(round(TRANSFER * rate)) + 1) / rate
    move = (t_move,) + rest_to_rest(excitation.q[-1], check.q[0], t_move, TRANSFER)
    parts = [(excitation.t, excitation.q, excitation.qd, excitation.qdd), move,
             (check.t[1:], check.q[1:], check.qd[1:], check.qdd[1:])]
    offsets = [0.0, excitation.duration, excitation.duration + TRANSFER]
    t = np.concatenate([part[0] + offset for part, offset in zip(parts, offsets)])
    motion = tuple(np.concatenate([part[k] for part in parts]) for k in (1, 2, 3))
    return excitation, (t,) + motion, offsets[2]


def run(plot='identification.png', duration=20.0, lockstep=True, engine='auto', pace=1.0):
    """Run the identification demo; return 0 when the identified model predicts the torques."""
    model, common = demo_model()
    print(f'manipulator_dynamics identification demo: {model!r}', flush=True)
    excitation, (t, q, qd, qdd), validation = plan(model, duration)
    print(f'excitation: {excitation.summary()}', flush=True)
    loop = Loop([
        ('sim_node', dict(common, wait_for_command='true', engine=engine,
                          initial_positions='[' + ', '.join(map(str, q[0])) + ']')),
        ('trajectory_node', common)], lockstep, kernels=('rigid', 'base-parameters'),
        pace=pace)
    try:
        loop.close(model.joint_names, q[0])
        print(loop.plant(), flush=True)
        start = loop.send(lambda when: trajectory_message(model.joint_names, t, q, qd, qdd,
                                                          when))
        print(f'running it on sim_node: {t[-1]:g} s (excitation {excitation.duration:g} s, '
              f'transfer {TRANSFER:g} s, validation {t[-1] - validation:g} s)', flush=True)
        loop.until(start, t[-1] + 0.1)
    finally:
        loop.stop()
    stamp, measured, applied = loop.recorded(start, t[-1])
    first = stamp < excitation.duration
    estimate = identify(model, (stamp[first], measured[first], at_the_states(applied[first])),
                        cutoff=CUTOFF, physically_consistent=True, still=STILL)
    truth = base_parameters(model, friction=True).values
    good = estimate.relative_std < 10
    error = np.abs(estimate.values - truth) / np.maximum(np.abs(truth), 1e-12)
    worst = np.flatnonzero(good)[np.argmax(error[good])]
    print(f'\nidentified {estimate.base.count} base parameters from {estimate.data_summary()} '
          f'(condition number {estimate.condition:.3g}); {good.sum()} with relative std '
          f'< 10 %, their largest error against the simulated arm: {error[worst]:.2%} '
          f'({estimate.names[worst]}: {truth[worst]:.4g} simulated, identified '
          f'{estimate.values[worst]:.4g} +- {estimate.std[worst]:.2g})')
    off = np.abs(estimate.values - truth) / estimate.std
    far = int(np.argmax(off))
    print(f'  the farthest from the simulated arm in its own deviations: {estimate.names[far]} '
          f'{off[far]:.2g} std ({truth[far]:.4g} simulated, identified '
          f'{estimate.values[far]:.4g} +- {estimate.std[far]:.2g})')
    order = np.argsort(-np.abs(truth))[:8]
    for i in order:
        print(f'  {estimate.names[i]:22s} simulated {truth[i]: .5g}   identified '
              f'{estimate.values[i]: .5g} (std {estimate.relative_std[i]:.2g} %)')
    identified = estimate.identified_model()
    problems = parameter_problems(identified)
    print(f'physically consistent set: {"every check passed" if not problems else problems}; '
          f"fitted in {estimate.consistency['seconds']:.2f} s "
          f"({'converged' if estimate.consistency['converged'] else 'DID NOT CONVERGE'})")
    later = stamp >= validation
    t_check, tau, predicted, relative, processing = held_out_errors(
        identified, stamp[later], measured[later], applied[later])
    for part, report in (('excitation', estimate.processing), ('validation', processing)):
        print(stamps_summary(dict(report, source=f'recorded {part}')))
    print(f'validation motion: RMS torque error of the identified model (|qd| > {REVERSAL:g} '
          'rad/s), per joint: '
          + ', '.join(f'{j} {r:.2%}' for j, r in zip(model.joint_names, relative)))
    if plot:
        _plot(plot, model, t_check - validation, tau, predicted)
        print(f'\nplot: {os.path.abspath(plot)}')
    converged = estimate.consistency['converged']
    return 0 if relative.max() < 0.05 and not problems and converged else 1


def at_the_states(efforts):
    """
    Return the efforts at the published states: the mean of the steps either side of each.

    sim_node publishes with each state the effort held over the step that ended there (a
    driver's applied effort); the state's acceleration, by central differences, spans that step
    and the next, so the effort that goes with it is the mean of both.  Read as it comes, the
    effort lags the motion by half a step, which a fit takes for viscous friction (on the demo
    arm, 5.6 deviations off on a rotor inertia; 3.6 with the mean).
    """
    efforts = np.asarray(efforts, dtype=float)
    return np.vstack([0.5 * (efforts[:-1] + efforts[1:]), efforts[-1:]])


def held_out_errors(model, t, q, tau):
    """
    ``model``'s torques on a recording it was not fitted to, against the efforts applied.

    The recording (stamps ``t``, positions ``q``, applied efforts ``tau``) is conditioned as the
    fit's own is (:func:`~manipulator_dynamics.identification.logs.condition`, the same cutoff):
    each stretch between missed states is filtered and differentiated alone and its filter
    transients are left out (``parallel.rows``), so that states a busy recorder missed end a
    stretch instead of bending the accelerations across them.  Coulomb friction switches with the
    sign of the velocity: the filtered velocity crosses zero a few ms from the simulated one, a
    spike of 2 Fc at each reversal that says nothing of the parameters, so the error is measured
    away from reversals.  A recording cut down to the cutoff's rate (the demo's 1 kHz, at 2.5 Hz)
    is scored at its every sample, against the efforts as recorded
    (:func:`.validation.at_full_rate`).

    Returns ``(t, tau, predicted, relative, processing)``: the stamps, applied and predicted
    efforts of the rows compared, per joint the RMS error over the RMS effort, and what
    :func:`stamps_summary` says of the recording.
    """
    found = condition(model, (t, q, tau), Settings(cutoff=CUTOFF))
    q, qd, qdd, tau, parallel = found.q, found.qd, found.qdd, found.tau, found.parallel
    processing = found.processing
    predicted = parallel.rows(inverse_dynamics(model, q, qd, qdd, friction=True))
    moving = np.abs(parallel.rows(qd)) > REVERSAL
    if parallel.raw is not None:        # cut down to the cutoff's rate: scored at every sample
        scored = at_full_rate(model.joint_names, parallel.raw, parallel.rows(parallel.t),
                              parallel.rows(qd), {'model': predicted}, {'model': model},
                              left_out=~moving)
        relative = scored.rms['model'] / scored.torque_rms
        return scored.t, scored.measured, predicted, relative, processing
    tau = parallel.rows(tau)
    relative = np.array([np.sqrt(((predicted - tau)[moving[:, j], j] ** 2).mean()
                                 / (tau[moving[:, j], j] ** 2).mean())
                         for j in range(model.n)])
    return parallel.rows(parallel.t), tau, predicted, relative, processing


def _plot(path, model, t, measured, predicted):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(model.n, 1, figsize=(9, 1.6 * model.n + 1), sharex=True)
    for j, (ax, name) in enumerate(zip(axes, model.joint_names)):
        ax.plot(t, measured[:, j], lw=1.5, label='measured (sim_node)')
        ax.plot(t, predicted[:, j], '--', lw=1, label='predicted (identified model)')
        ax.set_ylabel(f'{name}\n[N m]')
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, ncol=2)
    axes[0].set_title(f'{model.name}: torques of a validation motion, measured and predicted')
    axes[-1].set_xlabel('time [s]')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
