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
The identification workflow measured: optimised excitation, and physically consistent estimates.

1. How much an optimised excitation trajectory buys over a random one of the same kind and length.

For robots of example-robot-data: the optimised motions (``excitation_trajectory``, its default
criterion and the condition number alone) and random 5-harmonic Fourier motions of the same
duration inside the same limits (the optimiser's seeded starts, seeds 1..R); torques simulated
with 2 % Gaussian noise (of each joint's RMS torque) and identified; printed: condition number of
W_B, base parameters below 10 % relative standard deviation (of those whose URDF value is not
zero: a zero has no relative deviation) as identified and as the design predicted, the
optimisation's wall time, and the parameters the default design leaves above 10 %.

2. Physically consistent estimates (``identify(..., physically_consistent=True)``) from the
optimised motion's noisy data: the fit's wall time, whether the least-squares set completed by
the URDF (minimum-norm) is realisable, and RMS torque errors on a validation motion (another
random motion, its own noise) of the unconstrained and the consistent estimates.

3. With ``--bound``: for each base parameter the default design leaves above 10 %, the best
relative standard deviation any motion of the same family could give it if every other
parameter were known exactly (``100 / (|K| sqrt(F_ii))``, F the information matrix): SLSQP
maximises ``F_ii`` alone under the same limits, from the design and from random starts, with
each joint's noise held at its level on the condition-number design.  Knowing the others can
only help, so a parameter whose bound stays above 10 % is above 10 % whatever the motion.

4. With ``--long``: identification at the scale of the logs robots write.  A synthetic 1 kHz log
of the Panda arm (example-robot-data, friction ``Fv 0.5, Fc 1``): a slow Fourier motion (five
harmonics of 0.05 Hz), torques with 1 % of their RMS and 0.05 N m of noise, positions with
1e-5 rad, written as CSV, ``--minutes`` long each.  ``manipulator-dynamics identify LOG
--folds 3 --format json`` (cutoff chosen from the data, 3-fold validation, standard deviations)
in a process of its own: its wall time and peak resident memory; and the floor, what any
identification must do once, measured in the same run: read the file (pandas' C reader) and
pass one zero-phase low-pass over every column (``scipy.signal.sosfiltfilt``).  With several
lengths, the longest log's peak memory over each other's (flat: within 1.10).  With
``--jitter J``, the stamps jitter as a real logger's do (normal, ``J`` times the period RMS):
every stretch is then put on a grid, by each fit, choice and validation of it.

    python3 benchmarks/bench_identification.py [--duration 30] [--rate 100] [--random 3]
        [--robots ...] [--bound]
    python3 benchmarks/bench_identification.py --long [--minutes 1 10 60] [--jitter 0.03]
        [--keep DIR]
"""

import argparse
import math
import os
import site
import sys
import time

import manipulator_dynamics as md
from manipulator_dynamics.identification import consistent, excitation
from manipulator_dynamics.identification.excitation_problem import WELL_IDENTIFIED, ZERO
import numpy as np

ROBOTS = {
    'panda arm': ('panda_description/urdf/panda.urdf', {'tip_links': ['panda_link8']}),
    'ur5': ('ur_description/urdf/ur5_robot.urdf', {}),
    'so100': ('so_arm_description/urdf/so100.urdf', {}),
}


def erd(relpath):
    for root in list(sys.path) + site.getsitepackages():
        d = os.path.join(root, 'cmeel.prefix', 'share', 'example-robot-data', 'robots')
        if os.path.isdir(d):
            return os.path.join(d, relpath)
    sys.exit('example-robot-data is not installed (pip install example-robot-data)')


def consistent_row(name, model, motion, friction, duration, rate):
    """Return one row of the table of part 2."""
    rng = np.random.default_rng(11)
    tau = md.inverse_dynamics(model, motion.q, motion.qd, motion.qdd, friction=True)
    noisy = tau + 0.02 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
    estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, noisy), friction=friction,
                           physically_consistent=True)
    names = estimate.standard_names
    prior = md.standard_parameters(model, friction=friction)
    T = consistent.ConsistentFit(estimate.base, prior, estimate.values).T
    completed = prior + np.linalg.pinv(T) @ (estimate.values - T @ prior)
    check = md.excitation_trajectory(model, duration=duration, rate=rate, friction=friction,
                                     seed=99, maxiter=0)
    measured = md.inverse_dynamics(model, check.q, check.qd, check.qdd, friction=True)
    measured = measured + 0.02 * np.sqrt((measured ** 2).mean(axis=0)) * rng.normal(
        size=measured.shape)
    Y = md.regressor(model, check.q, check.qd, check.qdd, friction=friction)
    free = np.sqrt(((estimate.base.base_regressor(Y) @ estimate.values - measured) ** 2).mean())
    ours = np.sqrt(((Y @ estimate.standard - measured) ** 2).mean())
    return (f'| {name} | {friction} | {len(consistent.physical_problems(completed, names))} | '
            f'{len(consistent.physical_problems(estimate.standard, names))} | {free:.4g} | '
            f'{ours:.4g} | {ours / free:.3f} | {1e3 * estimate.consistency["seconds"]:.1f} | '
            f'{estimate.consistency["iterations"]} |')


def identified(model, motion, friction, seed):
    """Return (well identified, of how many, condition) for torques with 2 % noise."""
    rng = np.random.default_rng(seed)
    tau = md.inverse_dynamics(model, motion.q, motion.qd, motion.qdd, friction=True)
    noisy = tau + 0.02 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
    estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, noisy), friction=friction)
    values = np.abs(estimate.base.values)
    nonzero = values > ZERO * values.max()
    return int((estimate.relative_std[nonzero] < WELL_IDENTIFIED).sum()), int(nonzero.sum()), \
        estimate.condition


def alone(model, motion, first, noise=0.02, starts=3):
    """
    Return ``{name: best relative std}`` for the parameters ``motion`` predicts above 10 %.

    ``first`` is the condition-number design, whose torques set each joint's noise.  Uses the
    optimiser's private problem class: this is a measurement, not an API.
    """
    import scipy.optimize

    base, L = motion.base, motion.a.shape[1]
    limits = excitation._Limits(model, 0.05)
    f = motion.frequency
    times = np.arange(excitation.OPTIMISATION_SAMPLES) / (excitation.OPTIMISATION_SAMPLES * f)
    problem = excitation._Problem(model, base, limits, 2 * np.pi * f, L, times)
    tau = md.inverse_dynamics(model, first.q, first.qd, first.qdd, friction=True)
    sigma = noise * np.sqrt((tau ** 2).mean(axis=0))
    samples = len(motion.t) / excitation.OPTIMISATION_SAMPLES
    constraints = problem.constraints()
    xs = [problem.variables(motion.offset, motion.a, motion.b)] + [
        problem.start(np.random.default_rng(seed), np.random.default_rng([seed, 1]))
        for seed in range(1, starts)]
    best = {}
    for name, value, _ in motion.poorly_identified:
        i = base.names.index(name)

        def information(x):
            W = excitation._base_rows(model, base, *problem.motion(x))
            W = W.reshape(-1, model.n, base.count)
            return samples * float(((W[:, :, i] / sigma) ** 2).sum())
        top = 0.0
        for x0 in xs:
            r = scipy.optimize.minimize(lambda x: -np.log(information(x)), x0, method='SLSQP',
                                        constraints=constraints, options={'maxiter': 80})
            inside = min(float(np.min(c['fun'](r.x))) for c in constraints) > -1e-6
            top = max(top, information(r.x) if inside else 0.0, information(x0))
        best[name] = 100 / (abs(value) * np.sqrt(top))
    return best


def long_log(path, model, minutes, rate=1000.0, seed=0, jitter=0.0):
    """
    Write ``minutes`` of the synthetic log of part 4 to ``path`` (CSV) in chunks.

    ``jitter``: the stamps' normal jitter, RMS, as a share of the period (the motion, torques
    and noise at the true times, the stamps off them).
    """
    rng = np.random.default_rng(seed)
    f0, harmonics = 0.05, 5
    limited = np.isfinite(model.lower) & np.isfinite(model.upper)
    lower, upper = np.where(limited, model.lower, -1.0), np.where(limited, model.upper, 1.0)
    centre, reach = 0.5 * (lower + upper), 0.25 * (upper - lower)
    amplitude = rng.uniform(0.3, 1.0, (harmonics, model.n)) / harmonics * np.minimum(reach, 1.0)
    phase = rng.uniform(0, 2 * np.pi, (harmonics, model.n))
    w = 2 * np.pi * f0 * np.arange(1, harmonics + 1)[:, None]
    names = model.joint_names
    header = ['time'] + [f'{j}.position' for j in names] + [f'{j}.effort' for j in names]
    total = int(round(minutes * 60 * rate))
    with open(path, 'w') as f:
        f.write(','.join(header) + '\n')
        for start in range(0, total, 200000):
            t = np.arange(start, min(total, start + 200000)) / rate
            arg = w[None] * t[:, None, None] + phase[None]
            stamps = t + jitter / rate * rng.normal(size=t.shape) if jitter else t
            q = centre + (amplitude * np.sin(arg)).sum(axis=1)
            qd = (amplitude * w * np.cos(arg)).sum(axis=1)
            qdd = -(amplitude * w ** 2 * np.sin(arg)).sum(axis=1)
            tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
            tau += (0.01 * np.sqrt((tau ** 2).mean(axis=0)) + 0.05) * rng.normal(size=tau.shape)
            q += 1e-5 * rng.normal(size=q.shape)
            np.savetxt(f, np.column_stack([stamps, q, tau]), delimiter=',', fmt='%.10g')
    return total


def floor(path, cutoff):
    """Return the seconds to read ``path`` and low-pass every column once, zero phase."""
    import pandas
    import scipy.signal

    started = time.perf_counter()
    values = pandas.read_csv(path, engine='c', dtype=np.float64).to_numpy()
    rate = 1.0 / float(np.median(np.diff(values[:1000, 0])))
    sos = scipy.signal.butter(4, cutoff / (0.5 * rate), output='sos')
    scipy.signal.sosfiltfilt(sos, values[:, 1:], axis=0)
    return time.perf_counter() - started


#: Runs the module named in ``argv[2]`` as ``python -m`` would, and at exit writes its own
#: peak resident memory (``VmHWM``, kB) to the file ``argv[1]``.
PEAK_LAUNCHER = (
    'import atexit, runpy, sys\n'
    'def peak(path=sys.argv[1]):\n'
    '    with open("/proc/self/status") as f:\n'
    '        kb = next(line.split()[1] for line in f if line.startswith("VmHWM"))\n'
    '    with open(path, "w") as f:\n'
    '        f.write(kb)\n'
    'atexit.register(peak)\n'
    'module = sys.argv[2]\n'
    'sys.argv = [module] + sys.argv[3:]\n'
    'runpy.run_module(module, run_name="__main__", alter_sys=True)\n')


def identify_in_process(command):
    """
    Run ``command`` (``python -m MODULE ARGS``); return (seconds, peak resident MB, its output).

    The peak is the child's own, read from ``/proc/self/status`` as it exits.  Not
    ``wait4``'s ``ru_maxrss``: Python starts a child by ``vfork`` and ``exec``, and Linux
    carries the parent's memory map's high-water mark across the ``exec`` into the child's
    ``ru_maxrss`` (a child that runs ``true`` reports the bench's own peak, 985 MB after it
    had held a gigabyte).  So the bench's figure had been this process's peak (the floor's
    pandas read of the previous log) wherever that was the larger.
    """
    import subprocess
    import tempfile

    python, module, args = command[0], command[2], command[3:]
    assert command[1] == '-m', command
    with tempfile.TemporaryFile('w+') as out, tempfile.NamedTemporaryFile('r') as peak:
        started = time.perf_counter()
        child = subprocess.run([python, '-c', PEAK_LAUNCHER, peak.name, module] + args,
                               stdout=out, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - started
        if child.returncode:
            sys.exit(f'{" ".join(command)} failed: {child.stderr}')
        out.seek(0)
        return wall, int(peak.read()) / 1024.0, out.read()


def long_logs(minutes, keep=None, jitter=0.0):
    """Part 4: print the table of identification at scale (``jitter``: see :func:`long_log`)."""
    import json
    import tempfile

    import yaml

    path, kw = ROBOTS['panda arm']
    urdf = erd(path)
    directory = keep or tempfile.mkdtemp(prefix='bench_identification_')
    os.makedirs(directory, exist_ok=True)
    joints = os.path.join(directory, 'friction.yaml')
    model = md.load_model(urdf, **kw)
    with open(joints, 'w') as f:
        yaml.safe_dump({'joint_dynamics': {j: {'viscous': 0.5, 'coulomb': 1.0}
                                           for j in model.joint_names}}, f)
    model = md.load_model(urdf, joint_dynamics=joints, **kw)
    if jitter:
        print(f'stamps jittering by {100 * jitter:g} % of the period, RMS\n')
    print('| log | states | identify [s] | peak memory [MB] | floor [s] | identify / floor | '
          'cutoff [Hz] | rows fitted | 3-fold error [%] |')
    print('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    peaks = {}
    for length in minutes:
        log = os.path.join(directory, f'panda_{length:g}min'
                           + (f'_jitter{jitter:g}' if jitter else '') + '.csv')
        if not os.path.isfile(log):
            states = long_log(log, model, length, jitter=jitter)
        else:
            states = sum(1 for _ in open(log)) - 1
        command = [sys.executable, '-m', 'manipulator_dynamics.cli', 'identify', urdf, log,
                   '--joint-dynamics', joints, '--folds', '3', '--format', 'json'] + [
                       f'--tip-link={t}' for t in kw.get('tip_links', ())]
        wall, memory, out = identify_in_process(command)
        report = json.loads(out)
        cutoff = report['processing']['cutoff_hz']
        least = floor(log, cutoff)
        error = report['validation']['normalised_squared_error_percent']['identified']
        print(f'| {length:g} min | {states} | {wall:.1f} | {memory:.0f} | {least:.2f} | '
              f'{wall / least:.1f} | {cutoff:.3g} | {report["samples"]} | {error:.4g} |',
              flush=True)
        peaks[length] = memory
    if len(peaks) > 1:                  # flat memory: the longest log's peak over each other's
        longest = max(peaks)
        print(f'\npeak memory of {longest:g} min over: ' + ', '.join(
            f'{length:g} min {peaks[longest] / peak:.2f}' for length, peak in peaks.items()
            if length != longest))
    if 10 in peaks and 60 in peaks:     # the bar of flat memory: the hour's over ten minutes'
        ratio = peaks[60] / peaks[10]
        where = 'within' if ratio <= 1.10 else 'ABOVE'
        print(f'60 min over 10 min: {ratio:.2f} ({where} the bar of flat memory, 1.10)')
    if keep is None:
        import shutil
        shutil.rmtree(directory)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--long', action='store_true', help='part 4 only: identification of '
                        'long logs, against the floor')
    parser.add_argument('--minutes', type=float, nargs='+', default=[1.0, 10.0, 60.0],
                        help="with --long: the logs' lengths")
    parser.add_argument('--keep', help='with --long: write (and reuse) the logs in this '
                        'directory')
    parser.add_argument('--jitter', type=float, default=0.0, help="with --long: the stamps' "
                        'jitter, RMS, as a share of the period (0.03: 3 %%)')
    parser.add_argument('--duration', type=float, default=30.0)
    parser.add_argument('--rate', type=float, default=100.0)
    parser.add_argument('--random', type=int, default=3, help='random motions per robot')
    parser.add_argument('--robots', nargs='+', default=list(ROBOTS), choices=list(ROBOTS))
    parser.add_argument('--bound', action='store_true', help='best relative std of each '
                        'parameter left above 10 %%, every other one known (slow)')
    args = parser.parse_args()
    if args.long:
        return long_logs(args.minutes, args.keep, args.jitter)
    print('| robot | friction | base | motion | cond W_B | rel. std < 10 % (predicted) | '
          'optimisation [s] |')
    print('| --- | --- | ---: | --- | ---: | ---: | ---: |')
    rows, above = [], []
    for name in args.robots:
        path, kw = ROBOTS[name]
        model = md.load_model(erd(path), **kw)
        for friction in (False, True):
            if friction:        # a realistic friction, so that Fv and Fc are not zero
                joints = {j: {'viscous': 0.5, 'coulomb': 1.0} for j in model.joint_names}
                model = md.load_model(erd(path), joint_dynamics=joints, **kw)
            motions, walls = {}, {}
            for criterion in ('relative_std', 'condition'):
                started = time.perf_counter()
                motions[criterion] = md.excitation_trajectory(
                    model, duration=args.duration, rate=args.rate, friction=friction,
                    criterion=criterion)
                walls[criterion] = time.perf_counter() - started
            motion = motions['relative_std']
            rows.append(consistent_row(name, model, motion, friction, args.duration, args.rate))
            bound = alone(model, motion, motions['condition']) if args.bound else {}
            above += [f'| {name} | {friction} | {p} | {v:.3g} | {r:.3g} | '
                      f'{bound.get(p, math.nan):.3g} |' for p, v, r in motion.poorly_identified]
            for criterion, design in motions.items():
                good, of, cond = identified(model, design, friction, 0)
                print(f'| {name} | {friction} | {design.base.count} | optimised ({criterion}) | '
                      f'{cond:.3g} | {good}/{of} ({design.well_identified[0]}) | '
                      f'{design.elapsed:.1f} ({design.iterations} it., '
                      f'{walls[criterion]:.1f} with set-up) |', flush=True)
            for seed in range(1, args.random + 1):
                start = md.excitation_trajectory(model, duration=args.duration, rate=args.rate,
                                                 friction=friction, seed=seed, maxiter=0)
                good, of, cond = identified(model, start, friction, seed)
                print(f'| {name} | {friction} | {motion.base.count} | random {seed} | '
                      f'{cond:.3g} | {good}/{of} ({start.well_identified[0]}) | |', flush=True)
    print('\n| robot | friction | base parameter predicted above 10 % | URDF value | '
          'predicted relative std [%] | best alone [%] |')
    print('| --- | --- | --- | ---: | ---: | ---: |')
    print('\n'.join(above))
    print('\n| robot | friction | problems, least squares | problems, consistent | validation '
          'RMS, least squares | validation RMS, consistent | ratio | fit [ms] | Newton steps |')
    print('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    print('\n'.join(rows))


if __name__ == '__main__':
    main()
