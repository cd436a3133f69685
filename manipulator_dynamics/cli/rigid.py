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

"""The rigid-body commands: a robot's joints and parameters, its dynamics at one state."""

import time

import numpy as np

from .options import add_command, add_states, FORMAT, joint_vector, load, MODEL, \
    MODEL_FRICTION_OUT
from .output import emit, fmt, joint_table, matrix, tabulate
from ..identification.base_parameters import base_parameters
from ..model import PARAMETER_NAMES
from ..rigid.crba import inertia_matrix
from ..rigid.forward import choose_method, forward_dynamics
from ..rigid.regressor import standard_parameters
from ..rigid.rnea import gravity_torques, inverse_dynamics
from ..rigid.udut import udut
from ..trajectories import joint_span, out_and_back


def cmd_info(args):
    model = load(args)
    kinds = ['prismatic' if t else ('continuous' if c else 'revolute')
             for t, c in zip(model.joint_type, model.continuous)]
    parents = ['(base)' if a < 0 else model.joint_names[a] for a in model.parent]
    data = {'name': model.name, 'base_link': model.base_link, 'n': model.n,
            'joints': [{'name': j, 'type': k, 'parent': p, 'link': lk,
                        'axis': model.axis[i].tolist(),
                        'mass': float(model.inertial[i, 9]), 'lower': float(model.lower[i]),
                        'upper': float(model.upper[i]), 'effort': float(model.effort_limit[i]),
                        'viscous': float(model.viscous[i]), 'coulomb': float(model.coulomb[i]),
                        'armature': float(model.armature[i])}
                       for i, (j, k, p, lk) in enumerate(zip(model.joint_names, kinds, parents,
                                                             model.link_names))],
            'forward_dynamics_method': choose_method(model)}
    table = joint_table(model, {'type': kinds, 'parent': parents, 'link': model.link_names,
                                'mass [kg]': model.inertial[:, 9], 'effort': model.effort_limit,
                                'Fv': model.viscous, 'Fc': model.coulomb, 'Ia': model.armature})
    emit(args, f"{model!r}\nmass carried by each joint's body (fixed children merged):", data,
         table)


def cmd_gravity(args):
    model = load(args)
    q = joint_vector(args.q, model, 'q')
    g = gravity_torques(model, q)
    emit(args, f'gravity torques g(q) of {model.name} [N m or N]:',
         {'joints': list(model.joint_names), 'q': q.tolist(), 'gravity': g.tolist()},
         joint_table(model, {'q': q, 'g(q)': g, 'effort limit': model.effort_limit}))


def cmd_inverse(args):
    model = load(args)
    q, qd, qdd = (joint_vector(getattr(args, k), model, k) for k in ('q', 'qd', 'qdd'))
    tau = inverse_dynamics(model, q, qd, qdd, friction=args.friction)
    extra = ', with friction' if args.friction else ''
    emit(args, f'inverse dynamics of {model.name} (Newton-Euler{extra}):',
         {'joints': list(model.joint_names), 'q': q.tolist(), 'qd': qd.tolist(),
          'qdd': qdd.tolist(), 'tau': tau.tolist()},
         joint_table(model, {'q': q, 'qd': qd, 'qdd': qdd, 'tau': tau}))


def cmd_inertia(args):
    model = load(args)
    q = joint_vector(args.q, model, 'q')
    M = inertia_matrix(model, q)
    U, D = udut(model, q)
    emit(args, f'inertia matrix M(q) of {model.name} (Khalil composite links), joints '
         f'{", ".join(model.joint_names)}:',
         {'joints': list(model.joint_names), 'q': q.tolist(), 'M': M.tolist(), 'U': U.tolist(),
          'D': D.tolist()},
         matrix(M) + '\n\nSaha UDU^T: D (articulated inertia about each axis) = '
         + ' '.join(f'{d:.5g}' for d in D))


def cmd_forward(args):
    model = load(args)
    q, qd, tau = (joint_vector(getattr(args, k), model, k) for k in ('q', 'qd', 'tau'))
    qdd = forward_dynamics(model, q, qd, tau, method=args.method, friction=args.friction)
    method = choose_method(model) if args.method == 'auto' else args.method
    emit(args, f'forward dynamics of {model.name} ({method}):',
         {'joints': list(model.joint_names), 'method': method, 'q': q.tolist(), 'qd': qd.tolist(),
          'tau': tau.tolist(), 'qdd': qdd.tolist()},
         joint_table(model, {'q': q, 'qd': qd, 'tau': tau, 'qdd': qdd}))


def cmd_parameters(args):
    model = load(args)
    K = standard_parameters(model).reshape(model.n, 10)
    data = {link: dict(zip(PARAMETER_NAMES, map(float, row)))
            for link, row in zip(model.link_names, K)}
    headers = ['link'] + list(PARAMETER_NAMES)
    rows = [[link] + [fmt(v) for v in row] for link, row in zip(model.link_names, K)]
    emit(args, f'standard inertial parameters of {model.name} (about each link frame origin):',
         data, tabulate(headers, rows))


def cmd_base_params(args):
    model = load(args)
    base = base_parameters(model, friction=args.friction, armature=args.armature,
                           samples=args.samples, seed=args.seed, method=args.method,
                           loops=args.loops)
    rows = [[name, fmt(value), equation.split(' = ', 1)[1]]
            for name, value, equation in zip(base.names, base.values, base.equations)]
    title = (f'{base.count} base parameters of {model.name} ({len(base.standard_names)} standard; '
             f'method {base.method}, {base.samples} random states, seed {base.seed}); '
             f'check on fresh states: {base.check_error:.1e}; rank gap {base.rank_gap:.1e}')
    table = tabulate(['base parameter', 'value', '= grouping of standard parameters'], rows)
    if base.no_effect:
        table += '\n\nno effect on the dynamics: ' + ', '.join(base.no_effect)
    emit(args, title, base.to_dict(), table)


def cmd_demo(args):
    """Print the dynamics of the demo arm along a smooth trajectory, with checks and timings."""
    model = load(args)
    rng = np.random.default_rng(0)
    T, N = 4.0, 2001
    t = np.linspace(0.0, T, N)
    # a smooth out-and-back motion within the joint limits: q(t) = A sin^2(pi t / T)
    amp = 0.5 * joint_span(model) * rng.uniform(0.3, 0.6, model.n)
    q, qd, qdd = out_and_back(amp, t, T)
    # load (or compile, on a first run) the kernels before timing them
    forward_dynamics(model, q[:2], qd[:2], inverse_dynamics(model, q[:2], qd[:2], qdd[:2]))
    t0 = time.perf_counter()
    tau = inverse_dynamics(model, q, qd, qdd, friction=True)
    t_id = time.perf_counter() - t0
    t0 = time.perf_counter()
    qdd_back = forward_dynamics(model, q, qd, tau, friction=True)
    t_fd = time.perf_counter() - t0
    M = inertia_matrix(model, q[N // 2])
    U, D = udut(model, q[N // 2])
    peak = np.abs(tau).max(axis=0)
    print(f'{model!r}\n')
    print(f'trajectory: {N} samples over {T:g} s, each joint out and back by its amplitude\n')
    print(joint_table(model, {'amplitude [rad]': amp, 'peak |tau|': peak,
                              'effort limit': model.effort_limit,
                              'use of limit': [f'{p / e:.0%}' if np.isfinite(e) else '-'
                                               for p, e in zip(peak, model.effort_limit)],
                              'g(q) mid-way': gravity_torques(model, q[N // 2])}))
    print(f'\ninertia matrix M(q) mid-way (composite links):\n{matrix(M)}')
    print(f'Saha UDU^T pivots D: {" ".join(f"{d:.4g}" for d in D)};  '
          f'|U diag(D) U^T - M| = {np.abs(U * D @ U.T - M).max():.1e}')
    print(f'\nround trip forward(inverse(qdd)) over the trajectory: max |error| = '
          f'{np.abs(qdd_back - qdd).max():.1e} rad/s^2 (method {choose_method(model)})')
    print(f'batched inverse dynamics: {t_id / N * 1e6:.2f} us/sample; forward dynamics: '
          f'{t_fd / N * 1e6:.2f} us/sample')


def add_commands(sub):
    """Add the rigid-body commands to the subparsers ``sub``."""
    add_command(sub, 'demo', cmd_demo, 'dynamics of the demo arm along a trajectory, with checks')
    add_command(sub, 'info', cmd_info, 'joints, masses, limits and friction of a robot')
    add_states(add_command(sub, 'gravity', cmd_gravity, 'gravity torques g(q)'), ('q',))
    with_friction = (MODEL, FORMAT, MODEL_FRICTION_OUT)
    p = add_command(sub, 'inverse', cmd_inverse, 'inverse dynamics tau(q, qd, qdd)',
                    with_friction)
    add_states(p, ('q', 'qd', 'qdd'))
    add_states(add_command(sub, 'inertia', cmd_inertia, 'inertia matrix M(q) and its UDU^T '
                           'factors'), ('q',))
    p = add_command(sub, 'forward', cmd_forward, 'forward dynamics qdd(q, qd, tau)',
                    with_friction)
    add_states(p, ('q', 'qd', 'tau'))
    p.add_argument('--method', choices=['auto', 'udut', 'cholesky'], default='auto')
    add_command(sub, 'parameters', cmd_parameters, 'standard inertial parameters of every link')
    p = add_command(sub, 'base-params', cmd_base_params, 'base (identifiable) inertial '
                    'parameters and how the standard ones group into them; --friction: with Fv, '
                    'Fc of every joint', with_friction)
    p.add_argument('--armature', action='store_true', help='include the rotor inertia Ia')
    p.add_argument('--samples', type=int, help='random states (default: 4 rows of W per '
                   'parameter)')
    p.add_argument('--seed', type=int, default=0, help='seed of the random states (default 0)')
    p.add_argument('--method', choices=['energy', 'dynamic'], default='energy',
                   help='rows of W: energy functions (default) or torque regressor')
    p.add_argument('--loops', metavar='YAML', help='loop closures of a closed-loop robot '
                   '(active joints, closed points)')
