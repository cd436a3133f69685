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
Speed of the rigid-body algorithms against Pinocchio's Python API, measured in the same run.

    python3 benchmarks/bench_dynamics.py [--samples 10000] [--quick] [--fit] [--every-robot]

For each robot: microseconds of one call (what a control loop pays) and per sample of a batch
of ``--samples`` states (what a trajectory pays), ours and Pinocchio's (a Python loop of its
call), and the ratio ours / Pinocchio (below 1: we are faster).  Then the cost of both
forward-dynamics methods on chains and trees, which is what ``method='auto'`` chooses from;
``--fit`` prints the cost-model constants fitted to this machine; ``--every-robot`` instead
times one call of each algorithm on every robot of example-robot-data that both load with the
same joints (Pinocchio's order may differ: its states are ours, reordered).  Needs ``pin`` and
``example-robot-data`` (``pip install .[test]``).  Best of several repeats; the machine should
be otherwise idle.
"""

import argparse
import datetime
import os
import platform
import site
import sys
import time

import manipulator_dynamics as md
from manipulator_dynamics.rigid.forward import choose_method
from manipulator_dynamics.robots import random_urdf
import numpy as np


def erd_path(relpath):
    for root in list(sys.path) + site.getsitepackages():
        path = os.path.join(root, 'cmeel.prefix', 'share', 'example-robot-data', 'robots', relpath)
        if os.path.exists(path):
            return path
    raise SystemExit('example-robot-data is not installed: pip install example-robot-data')


def chain_urdf(n):
    """Make a serial chain of n revolute joints with random axes, origins and inertias."""
    return random_urdf(1000 + n, n=n, branching=0.0, fixed_links=0, prismatic=0.0, continuous=0.0)


def panda_arm(pin):
    """Load the panda's 7-joint arm, fingers locked: ``(label, our model, Pinocchio's)``."""
    panda = erd_path('panda_description/urdf/panda.urdf')
    full = pin.buildModelFromUrdf(panda)
    fingers = [full.getJointId(f'panda_finger_joint{i}') for i in (1, 2)]
    return ('panda arm', md.load_model(panda, tip_links=['panda_hand']),
            pin.buildReducedModel(full, fingers, pin.neutral(full)))


def robots(pin, quick):
    """Yield (label, our model, Pinocchio model) with the same joints in the same order."""
    yield panda_arm(pin)
    ur5 = erd_path('ur_description/urdf/ur5_robot.urdf')
    yield 'ur5', md.load_model(ur5), pin.buildModelFromUrdf(ur5)
    for n in (6, 12) if quick else (6, 12, 24, 48):
        xml = chain_urdf(n)
        yield f'chain {n}', md.load_model(xml), pin.buildModelFromXML(xml)


def every_robot(pin):
    """
    Yield ``(path, our model, Pinocchio model, order)`` for each robot of example-robot-data.

    Those both load, with one coordinate per joint (Pinocchio gives a continuous joint two) and
    the same joint names; ``order`` maps our joint order onto Pinocchio's.
    """
    import glob
    import warnings

    root = erd_path('')
    for path in sorted(glob.glob(os.path.join(root, '**', '*.urdf'), recursive=True)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                model = md.load_model(path)
            pm = pin.buildModelFromUrdf(path)
        except Exception:               # either refuses it: nothing to compare
            continue
        names = list(pm.names)[1:]
        if model.n == 0 or pm.nq != pm.nv or sorted(names) != sorted(model.joint_names):
            continue
        yield (os.path.relpath(path, root), model, pm,
               np.array([model.joint_index(name) for name in names]))


def one_call_ratios(pin, model, pm, order, repeat):
    """
    Ours / Pinocchio's time of one call of ID, M and FD (``auto``); theirs in us too.

    FD's is None where M(q) is singular (a joint that moves no inertia): ours refuses it.
    """
    pd = pm.createData()
    q, v, a = np.random.default_rng(0).uniform(-1, 1, (3, model.n))
    t = md.inverse_dynamics(model, q, v, a)
    pq, pv, pa, pt = q[order], v[order], a[order], t[order]
    calls = max(200, int(20000 / model.n))
    cases = ((lambda: md.inverse_dynamics(model, q, v, a), lambda: pin.rnea(pm, pd, pq, pv, pa)),
             (lambda: md.inertia_matrix(model, q), lambda: pin.crba(pm, pd, pq)),
             (lambda: md.forward_dynamics(model, q, v, t), lambda: pin.aba(pm, pd, pq, pv, pt)))
    out = []
    for ours, theirs in cases:
        try:
            ours(), ours(), theirs()                # compiled, bound, warm
        except md.SingularInertiaError:
            out += [None, None]
            continue
        mine, pins = best(ours, calls, repeat), best(theirs, calls, repeat)
        out += [mine / pins, pins]
    return out


def best(func, number, repeat):
    """Best time of ``repeat`` runs of ``number`` calls, in microseconds per call."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            func()
        times.append(time.perf_counter() - t0)
    return min(times) / number * 1e6


def best_once(func, repeat):
    return best(func, 1, repeat)


def compare(pin, model, pm, N, repeat):
    """Rows: algorithm, ours single, pin single, ours batch 1 thread, ours batch, pin batch."""
    assert list(pm.names)[1:] == list(model.joint_names), 'joint order differs'
    pd = pm.createData()
    rng = np.random.default_rng(0)
    Q, V, A = rng.uniform(-1, 1, (3, N, model.n))
    tau = md.inverse_dynamics(model, Q, V, A)
    q, v, a, t = Q[0], V[0], A[0], tau[0]
    calls = max(200, int(20000 / model.n))
    cases = [
        ('ID', lambda: md.inverse_dynamics(model, q, v, a), lambda: pin.rnea(pm, pd, q, v, a),
         lambda: md.inverse_dynamics(model, Q, V, A),
         lambda: [pin.rnea(pm, pd, Q[i], V[i], A[i]) for i in range(N)]),
        ('M', lambda: md.inertia_matrix(model, q), lambda: pin.crba(pm, pd, q),
         lambda: md.inertia_matrix(model, Q), lambda: [pin.crba(pm, pd, Q[i]) for i in range(N)]),
        ('C', lambda: md.coriolis_matrix(model, q, v),
         lambda: pin.computeCoriolisMatrix(pm, pd, q, v),
         lambda: md.coriolis_matrix(model, Q, V),
         lambda: [pin.computeCoriolisMatrix(pm, pd, Q[i], V[i]) for i in range(N)]),
        # the joint-torque regressor, the identification's: no rotor inertia, no friction, as
        # Pinocchio's (10 standard parameters per link, each in its own order)
        ('Y', lambda: md.regressor(model, q, v, a, armature=False),
         lambda: pin.computeJointTorqueRegressor(pm, pd, q, v, a),
         lambda: md.regressor(model, Q, V, A, armature=False),
         lambda: [pin.computeJointTorqueRegressor(pm, pd, Q[i], V[i], A[i]) for i in range(N)]),
    ]
    for method in ('udut', 'cholesky'):
        cases.append((f'FD {method}',
                      lambda m=method: md.forward_dynamics(model, q, v, t, method=m),
                      lambda: pin.aba(pm, pd, q, v, t),
                      lambda m=method: md.forward_dynamics(model, Q, V, tau, method=m),
                      lambda: [pin.aba(pm, pd, Q[i], V[i], tau[i]) for i in range(N)]))
    rows = []
    for name, ours1, pin1, oursN, pinN in cases:
        ours1(), oursN()      # load the compiled kernels first
        threads = md.set_threads(1)
        one_thread = best_once(oursN, repeat) / N
        md.set_threads(threads)
        rows.append((name, best(ours1, calls, repeat), best(pin1, calls, repeat), one_thread,
                     best_once(oursN, repeat) / N, best_once(pinN, max(2, repeat // 2)) / N))
    return rows


def crossover(N, repeat, quick):
    """Batched microseconds per sample of both forward-dynamics methods on chains and trees."""
    sizes = (6, 12, 24) if quick else (6, 9, 12, 16, 24, 48, 96)
    shapes = [(f'chain {n}', chain_urdf(n)) for n in sizes]
    shapes += [(f'tree {n} ({b:.0%} branching)', random_urdf(2000 + n, n=n, branching=b,
                                                             fixed_links=0))
               for n, b in ((24, 0.5),) + (() if quick else ((48, 0.5), (48, 0.9)))]
    rows = []
    rng = np.random.default_rng(1)
    threads = md.set_threads(1)         # the cost model is per thread
    for label, xml in shapes:
        model = md.load_model(xml)
        Q, V, T = rng.uniform(-1, 1, (3, N, model.n))
        cost = {}
        for method in ('udut', 'cholesky'):
            md.forward_dynamics(model, Q[:2], V[:2], T[:2], method=method)
            run = lambda m=method: md.forward_dynamics(model, Q, V, T, method=m)  # noqa: E731
            cost[method] = best_once(run, repeat) / N
        depth = np.zeros(model.n, dtype=np.int64)
        for i, a in enumerate(model.parent):
            depth[i] = 1 if a < 0 else depth[a] + 1
        rows.append((label, model.n, int(depth.sum()), int((depth * (depth + 1) // 2).sum()),
                     cost['udut'], cost['cholesky'], choose_method(model)))
    md.set_threads(threads)
    return rows


def machine():
    cpu = platform.processor() or 'unknown CPU'
    if os.path.exists('/proc/cpuinfo'):
        for line in open('/proc/cpuinfo'):
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    import numba
    import pinocchio
    return (f'{datetime.date.today()}, {cpu}, {os.cpu_count()} cores, Python '
            f'{platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, '
            f'Pinocchio {pinocchio.__version__}')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--samples', type=int, default=10000, help='batch size (default 10000)')
    parser.add_argument('--repeat', type=int, default=5, help='repeats, best kept (default 5)')
    parser.add_argument('--quick', action='store_true', help='fewer robots, smaller batches')
    parser.add_argument('--fit', action='store_true', help='print cost-model constants for auto')
    parser.add_argument('--every-robot', action='store_true',
                        help='one call on every robot of example-robot-data, and nothing else')
    args = parser.parse_args(argv)
    import pinocchio as pin
    if args.every_robot:
        print(f'# One call, ours / Pinocchio, every robot of example-robot-data\n\n{machine()}\n')
        print('| robot | n | ID | M | FD | Pinocchio ID, M, FD [us] |')
        print('| --- | ---: | ---: | ---: | ---: | --- |')
        for path, model, pm, order in every_robot(pin):
            cells = [f'{x:.2f}' if x is not None else 'singular M' for x in
                     one_call_ratios(pin, model, pm, order, args.repeat)]
            print(f'| {path} | {model.n} | {" | ".join(cells[::2])} | {", ".join(cells[1::2])} |',
                  flush=True)
        return
    N = 1000 if args.quick else args.samples
    T = md.get_threads()
    print(f'# manipulator_dynamics vs Pinocchio\n\n{machine()}; batch N = {N}\n')
    print(f'| robot | n | algorithm | ours, 1 call [us] | Pinocchio, 1 call [us] | ratio | '
          f'ours, batch, 1 thread [us/sample] | ours, batch, {T} threads [us/sample] | '
          f'Pinocchio loop [us/sample] | ratio 1 thread | ratio {T} threads |')
    print('| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for label, model, pm in robots(pin, args.quick):
        for name, o1, p1, oN1, oN, pN in compare(pin, model, pm, N, args.repeat):
            print(f'| {label} | {model.n} | {name} | {o1:.2f} | {p1:.2f} | {o1 / p1:.2f} | '
                  f'{oN1:.2f} | {oN:.2f} | {pN:.2f} | {oN1 / pN:.2f} | {oN / pN:.2f} |',
                  flush=True)
    print('\n## Forward dynamics: Saha UDU^T or composite-link M + Cholesky (batch, 1 thread, '
          'us/sample)\n')
    print('| robot | n | sum of depths | sum of depth(depth+1)/2 | udut | cholesky | auto picks |')
    print('| --- | ---: | ---: | ---: | ---: | ---: | --- |')
    rows = crossover(N, args.repeat, args.quick)
    for label, n, d1, d2, u, c, pick in rows:
        faster = 'udut' if u < c else 'cholesky'
        mark = '' if pick == faster or abs(u - c) < 0.05 * min(u, c) else ' (slower one)'
        print(f'| {label} | {n} | {d1} | {d2} | {u:.2f} | {c:.2f} | {pick}{mark} |', flush=True)
    if args.fit:
        n, d1, d2, udut, cholesky = np.array([r[1:6] for r in rows], dtype=float).T
        one = np.ones_like(n)
        # relative least squares: every row weighs the same, however large its cost
        u = np.linalg.lstsq(np.c_[one, n] / udut[:, None], one, rcond=None)[0]
        c = np.linalg.lstsq(np.c_[one, n, d1, d2] / cholesky[:, None], one, rcond=None)[0]
        print(f'\nfit: _UDUT_PER_SAMPLE = {u[0]:.3g}; _UDUT_PER_BODY = {u[1]:.3g}; '
              f'_CHOLESKY_PER_SAMPLE = {c[0]:.3g}; _CHOLESKY_PER_BODY = {c[1]:.3g}; '
              f'_CHOLESKY_PER_PATH_ELEMENT = {c[2]:.3g}; _CHOLESKY_PER_FACTOR_OP = {c[3]:.3g}')


if __name__ == '__main__':
    main()
