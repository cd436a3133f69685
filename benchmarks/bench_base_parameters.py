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
Seconds to compute base parameters, ours against the route through Pinocchio's regressor.

    python3 benchmarks/bench_base_parameters.py [--repeat 7]

Pinocchio's route, timed in the same run: stack ``computeJointTorqueRegressor`` over as many random
states as our dynamic method uses (a Python loop), drop zero columns, QR with column pivoting for
the rank, ``beta`` by least squares.  Ours: :func:`manipulator_dynamics.base_parameters` with each
method, everything included (sampling, QR, groupings, the check on fresh states).
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
import scipy.linalg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_dynamics import chain_urdf, erd_path, machine, panda_arm  # noqa: E402, I100
import manipulator_dynamics as md  # noqa: E402, I100
from manipulator_dynamics.identification.base_parameters import (  # noqa: E402, I100
    default_samples, random_states)


def pinocchio_route(pin, pm, model, samples, seed=0):
    """Compute the count and beta from Pinocchio's stacked regressor; return the count."""
    pd = pm.createData()
    q, qd, qdd = random_states(model, np.random.default_rng(seed), samples)
    W = np.vstack([pin.computeJointTorqueRegressor(pm, pd, q[i], qd[i], qdd[i])
                   for i in range(samples)])
    norms = np.linalg.norm(W, axis=0)
    W = W[:, norms > 1e-10 * norms.max()]
    W = W / np.linalg.norm(W, axis=0)
    R, piv = scipy.linalg.qr(W, mode='r', pivoting=True)
    d = np.abs(np.diag(R))
    b = int(np.count_nonzero(d > max(W.shape) * np.finfo(float).eps * d[0]))
    W1, W2 = W[:, piv[:b]], W[:, piv[b:]]
    np.linalg.lstsq(W1, W2, rcond=None)
    return b


def robots(pin):
    yield panda_arm(pin)
    baxter = erd_path('baxter_description/urdf/baxter.urdf')
    yield 'baxter (tree)', md.load_model(baxter), pin.buildModelFromUrdf(baxter)
    for n in (12, 24, 48):
        xml = chain_urdf(n)
        yield f'chain {n}', md.load_model(xml), pin.buildModelFromXML(xml)


def timed(func, repeat):
    best = float('inf')
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--repeat', type=int, default=7, help='repeats, best kept (default 7)')
    args = parser.parse_args(argv)
    import pinocchio as pin
    warnings.simplefilter('ignore', UserWarning)    # random chains have massless links: fine here
    print(f'# Base parameters: ours vs the Pinocchio-regressor route\n\n{machine()}\n')
    print('| robot | n | standard | base | ours, energy [s] | ours, dynamic [s] | '
          'Pinocchio route [s] | ratio energy | ratio dynamic |')
    print('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for label, model, pm in robots(pin):
        md.energy_regressor(model, np.zeros(model.n), np.zeros(model.n))  # load the kernels
        md.regressor(model, np.zeros(model.n), np.zeros(model.n), np.zeros(model.n))
        t_energy, base = timed(lambda: md.base_parameters(model), args.repeat)
        t_dynamic, base_d = timed(lambda: md.base_parameters(model, method='dynamic'),
                                  args.repeat)
        samples = default_samples(model, 'dynamic', 10 * model.n)
        t_pin, count = timed(lambda: pinocchio_route(pin, pm, model, samples), args.repeat)
        assert base.count == base_d.count, (label, base.count, base_d.count)
        print(f'| {label} | {model.n} | {10 * model.n} | {base.count} | {t_energy:.3f} | '
              f'{t_dynamic:.3f} | {t_pin:.3f} | {t_energy / t_pin:.2f} | '
              f'{t_dynamic / t_pin:.2f} |', flush=True)


if __name__ == '__main__':
    main()
