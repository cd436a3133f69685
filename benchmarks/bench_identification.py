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

    python3 benchmarks/bench_identification.py [--duration 30] [--rate 100] [--random 3]
        [--robots ...] [--bound]
"""

import argparse
import math
import os
import site
import sys
import time

import manipulator_dynamics as md
from manipulator_dynamics.identification import consistent, excitation
from manipulator_dynamics.identification.excitation import WELL_IDENTIFIED, ZERO
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--duration', type=float, default=30.0)
    parser.add_argument('--rate', type=float, default=100.0)
    parser.add_argument('--random', type=int, default=3, help='random motions per robot')
    parser.add_argument('--robots', nargs='+', default=list(ROBOTS), choices=list(ROBOTS))
    parser.add_argument('--bound', action='store_true', help='best relative std of each '
                        'parameter left above 10 %%, every other one known (slow)')
    args = parser.parse_args()
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
