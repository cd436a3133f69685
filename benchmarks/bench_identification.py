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

For robots of example-robot-data: the optimised motion (``excitation_trajectory``) and random
5-harmonic Fourier motions of the same duration inside the same limits (the optimiser's seeded
starts, seeds 1..R); torques simulated with 2 % Gaussian noise (of each joint's RMS torque) and
identified; printed: condition number of W_B, base parameters below 10 % relative standard
deviation (of those whose URDF value is not zero: a zero has no relative deviation), the
optimisation's wall time.

2. Physically consistent estimates (``identify(..., physically_consistent=True)``) from the
optimised motion's noisy data: the fit's wall time, whether the least-squares set completed by
the URDF (minimum-norm) is realisable, and RMS torque errors on a validation motion (another
random motion, its own noise) of the unconstrained and the consistent estimates.

    python3 benchmarks/bench_identification.py [--duration 30] [--rate 100] [--random 3]
"""

import argparse
import os
import site
import sys
import time

import manipulator_dynamics as md
from manipulator_dynamics.identification import consistent
import numpy as np

ROBOTS = {
    'panda arm': ('panda_description/urdf/panda.urdf', {'tip_links': ['panda_link8']}),
    'ur5': ('ur_description/urdf/ur5_robot.urdf', {}),
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
            f'{ours:.4g} | {ours / free:.3f} | {estimate.consistency["seconds"]:.2f} |')


def identified(model, motion, friction, seed):
    """Return (well identified, of how many, condition) for torques with 2 % noise."""
    rng = np.random.default_rng(seed)
    tau = md.inverse_dynamics(model, motion.q, motion.qd, motion.qdd, friction=True)
    noisy = tau + 0.02 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
    estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, noisy), friction=friction)
    values = np.abs(estimate.base.values)
    nonzero = values > 1e-6 * values.max()
    return int((estimate.relative_std[nonzero] < 10).sum()), int(nonzero.sum()), \
        estimate.condition


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--duration', type=float, default=30.0)
    parser.add_argument('--rate', type=float, default=100.0)
    parser.add_argument('--random', type=int, default=3, help='random motions per robot')
    args = parser.parse_args()
    print('| robot | friction | base | motion | cond W_B | rel. std < 10 % | optimisation [s] |')
    print('| --- | --- | ---: | --- | ---: | ---: | ---: |')
    rows = []
    for name, (path, kw) in ROBOTS.items():
        model = md.load_model(erd(path), **kw)
        for friction in (False, True):
            if friction:        # a realistic friction, so that Fv and Fc are not zero
                joints = {j: {'viscous': 0.5, 'coulomb': 1.0} for j in model.joint_names}
                model = md.load_model(erd(path), joint_dynamics=joints, **kw)
            started = time.perf_counter()
            motion = md.excitation_trajectory(model, duration=args.duration, rate=args.rate,
                                              friction=friction)
            wall = time.perf_counter() - started
            rows.append(consistent_row(name, model, motion, friction, args.duration, args.rate))
            good, of, cond = identified(model, motion, friction, 0)
            print(f'| {name} | {friction} | {motion.base.count} | optimised | {cond:.3g} | '
                  f'{good}/{of} | {motion.elapsed:.1f} ({motion.iterations} it., '
                  f'{wall:.1f} with set-up) |')
            for seed in range(1, args.random + 1):
                start = md.excitation_trajectory(model, duration=args.duration, rate=args.rate,
                                                 friction=friction, seed=seed, maxiter=0)
                good, of, cond = identified(model, start, friction, seed)
                print(f'| {name} | {friction} | {motion.base.count} | random {seed} | '
                      f'{cond:.3g} | {good}/{of} | |')
    print('\n| robot | friction | problems, least squares | problems, consistent | validation '
          'RMS, least squares | validation RMS, consistent | ratio | fit [s] |')
    print('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |')
    print('\n'.join(rows))


if __name__ == '__main__':
    main()
