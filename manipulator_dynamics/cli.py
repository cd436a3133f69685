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
``manipulator-dynamics``: the library from the command line.

Every command takes an optional URDF (default: the bundled demo arm) and prints a table for a
person, or ``--format json|yaml`` for a program.  Errors are one line on stderr and exit status 2.
"""

import argparse
import dataclasses
import json
import os
import sys
import time
import warnings

import numpy as np

from . import robots
from .contact.observer import DEFAULT_GAIN
from .errors import IdentificationError
from .identification.base_parameters import base_parameters
from .identification.estimate import cross_validate, identify, select_friction
from .identification.excitation import CRITERIA, excitation_trajectory, WELL_IDENTIFIED
from .identification.filtering import CUTOFF_HZ
from .identification.fleet import (CONFIRM, DRIFT_SIGMAS, identify_fleet, logs_by_name,
                                   logs_of_manifest, NAME_PATTERN)
from .identification.friction import FRICTION_LAWS, friction_summary
from .identification.gains import identify_gains
from .identification.known import KnownLink, KnownParameter, KnownPayload
from .identification.least_squares import std_summary
from .identification.logs import stamps_summary
from .identification.payload import identify_payload
from .identification.selection import cutoff_summary, prior_threshold_summary, \
    prior_weight_summary
from .identification.stiction import still_summary
from .model import InertiaError, PARAMETER_NAMES
from .recordings import csvlog
from .recordings.log import read_once
from .rigid.crba import inertia_matrix
from .rigid.forward import choose_method, forward_dynamics
from .rigid.regressor import standard_parameters
from .rigid.rnea import gravity_torques, inverse_dynamics
from .rigid.udut import udut
from .trajectories import joint_span, out_and_back
from .urdf import load_model


def _vector(text, model, what):
    if text is None:
        return np.zeros(model.n)
    try:
        values = [float(v) for v in text.replace(',', ' ').split()]
    except ValueError:
        raise ValueError(f'--{what} must be numbers separated by commas, got {text!r}') from None
    if len(values) != model.n:
        raise ValueError(f'--{what} needs {model.n} values, one per joint in the order '
                         f'{", ".join(model.joint_names)}; got {len(values)}')
    return np.array(values)


def _load(args, parameters=None):
    """Load the robot the shared options describe; ``parameters`` in place of --parameters."""
    return load_model(args.urdf or robots.path('demo_arm'), root_link=args.root_link,
                      tip_links=args.tip_link, joint_dynamics=args.joint_dynamics,
                      parameters=parameters or args.parameters,
                      check_inertia=args.check_inertia, without_links=args.without_link,
                      transmissions=args.transmissions)


def _emit(args, title, data, table):
    if args.format == 'json':
        print(json.dumps(data, indent=2))
    elif args.format == 'yaml':
        import yaml
        print(yaml.safe_dump(data, sort_keys=False), end='')
    else:
        print(title)
        print(table)


def _joint_table(model, columns):
    """Format a fixed-width table: one row per joint, ``columns`` is ``{header: values}``."""
    headers = ['joint'] + list(columns)
    rows = [[name] + [_fmt(col[i]) for col in columns.values()]
            for i, name in enumerate(model.joint_names)]
    return _table(headers, rows)


def _fmt(x):
    if isinstance(x, (float, np.floating)):
        return f'{x: .6g}'
    return str(x)


def _table(headers, rows):
    widths = [max(len(str(r[c])) for r in [headers] + rows) for c in range(len(headers))]
    lines = ['  '.join(str(h).ljust(w) for h, w in zip(headers, widths))]
    lines.append('  '.join('-' * w for w in widths))
    lines += ['  '.join(str(v).ljust(w) for v, w in zip(r, widths)) for r in rows]
    return '\n'.join(lines)


def _matrix(M):
    return '\n'.join(' '.join(f'{v: 10.5f}' for v in row) for row in M)


def cmd_info(args):
    model = _load(args)
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
    table = _joint_table(model, {'type': kinds, 'parent': parents, 'link': model.link_names,
                                 'mass [kg]': model.inertial[:, 9], 'effort': model.effort_limit,
                                 'Fv': model.viscous, 'Fc': model.coulomb, 'Ia': model.armature})
    _emit(args, f"{model!r}\nmass carried by each joint's body (fixed children merged):", data,
          table)


def cmd_gravity(args):
    model = _load(args)
    q = _vector(args.q, model, 'q')
    g = gravity_torques(model, q)
    _emit(args, f'gravity torques g(q) of {model.name} [N m or N]:',
          {'joints': list(model.joint_names), 'q': q.tolist(), 'gravity': g.tolist()},
          _joint_table(model, {'q': q, 'g(q)': g, 'effort limit': model.effort_limit}))


def cmd_inverse(args):
    model = _load(args)
    q, qd, qdd = (_vector(getattr(args, k), model, k) for k in ('q', 'qd', 'qdd'))
    tau = inverse_dynamics(model, q, qd, qdd, friction=args.friction)
    extra = ', with friction' if args.friction else ''
    _emit(args, f'inverse dynamics of {model.name} (Newton-Euler{extra}):',
          {'joints': list(model.joint_names), 'q': q.tolist(), 'qd': qd.tolist(),
           'qdd': qdd.tolist(), 'tau': tau.tolist()},
          _joint_table(model, {'q': q, 'qd': qd, 'qdd': qdd, 'tau': tau}))


def cmd_inertia(args):
    model = _load(args)
    q = _vector(args.q, model, 'q')
    M = inertia_matrix(model, q)
    U, D = udut(model, q)
    _emit(args, f'inertia matrix M(q) of {model.name} (Khalil composite links), joints '
          f'{", ".join(model.joint_names)}:',
          {'joints': list(model.joint_names), 'q': q.tolist(), 'M': M.tolist(), 'U': U.tolist(),
           'D': D.tolist()},
          _matrix(M) + '\n\nSaha UDU^T: D (articulated inertia about each axis) = '
          + ' '.join(f'{d:.5g}' for d in D))


def cmd_forward(args):
    model = _load(args)
    q, qd, tau = (_vector(getattr(args, k), model, k) for k in ('q', 'qd', 'tau'))
    qdd = forward_dynamics(model, q, qd, tau, method=args.method, friction=args.friction)
    method = choose_method(model) if args.method == 'auto' else args.method
    _emit(args, f'forward dynamics of {model.name} ({method}):',
          {'joints': list(model.joint_names), 'method': method, 'q': q.tolist(), 'qd': qd.tolist(),
           'tau': tau.tolist(), 'qdd': qdd.tolist()},
          _joint_table(model, {'q': q, 'qd': qd, 'tau': tau, 'qdd': qdd}))


def cmd_parameters(args):
    model = _load(args)
    K = standard_parameters(model).reshape(model.n, 10)
    data = {link: dict(zip(PARAMETER_NAMES, map(float, row)))
            for link, row in zip(model.link_names, K)}
    headers = ['link'] + list(PARAMETER_NAMES)
    rows = [[link] + [_fmt(v) for v in row] for link, row in zip(model.link_names, K)]
    _emit(args, f'standard inertial parameters of {model.name} (about each link frame origin):',
          data, _table(headers, rows))


def cmd_base_params(args):
    model = _load(args)
    base = base_parameters(model, friction=args.friction, armature=args.armature,
                           samples=args.samples, seed=args.seed, method=args.method,
                           loops=args.loops)
    rows = [[name, _fmt(value), equation.split(' = ', 1)[1]]
            for name, value, equation in zip(base.names, base.values, base.equations)]
    title = (f'{base.count} base parameters of {model.name} ({len(base.standard_names)} standard; '
             f'method {base.method}, {base.samples} random states, seed {base.seed}); '
             f'check on fresh states: {base.check_error:.1e}; rank gap {base.rank_gap:.1e}')
    table = _table(['base parameter', 'value', '= grouping of standard parameters'], rows)
    if base.no_effect:
        table += '\n\nno effect on the dynamics: ' + ', '.join(base.no_effect)
    _emit(args, title, base.to_dict(), table)


def _number_or_auto(what):
    """Return an argparse type: ``auto``, or a number (``what`` names it in the error)."""
    def parse(text):
        if text == 'auto':
            return text
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'{text!r} is neither {what} nor auto') from None
    return parse


#: ``--cutoff``: a frequency in Hz, or ``auto``; ``--still``: a speed, or ``auto``.
_cutoff = _number_or_auto('a frequency in Hz')
_still = _number_or_auto('a speed (rad/s or m/s)')


def cmd_identify(args):
    if args.validate_plot and not (args.validate or args.folds):
        raise ValueError('--validate-plot needs --validate LOG or --folds K: the data to plot')
    if args.compare and not (args.validate or args.folds):
        raise ValueError('--compare needs --validate LOG or --folds K: the held-out data the '
                         'parameter sets are judged on')
    model = _load(args)
    compare = {}
    for path in args.compare or ():
        label = os.path.splitext(os.path.basename(path))[0]
        if label in compare:
            raise ValueError(f'--compare {path}: two files named {label!r}; rename one')
        compare[label] = _load(args, parameters=path)
    # read once: choosing the cutoff, the law, the folds and the final fit all use them
    data = read_once(model, args.data if len(args.data) > 1 else args.data[0], args.topic)
    check = None if not args.validate else read_once(
        model, args.validate if len(args.validate) > 1 else args.validate[0], args.topic)
    laws = ['none'] if args.no_friction else args.friction.split(',')
    unknown = [law for law in laws if law not in FRICTION_LAWS]
    if unknown:
        raise ValueError(f'--friction {args.friction}: unknown law {unknown[0]!r} (laws: '
                         f'{", ".join(FRICTION_LAWS)}; several, comma-separated, with --validate)')
    if args.validate and args.folds:
        raise ValueError('--validate and --folds: held-out data is one or the other')
    if len(laws) > 1 and not (args.validate or args.folds):
        raise ValueError(f'--friction {args.friction}: choosing among laws needs --validate LOG '
                         'or --folds K, data the fits do not see (the training fit always '
                         'prefers more terms)')
    options = {'armature': args.armature, 'cutoff': args.cutoff, 'topic': args.topic,
               'retime': not args.stamps_as_logged, 'still': args.still,
               'physically_consistent': (args.physically_consistent or bool(args.urdf_out)
                                         or bool(args.parameters_out)),
               'prior_weight': args.prior_weight, 'prior_threshold': args.prior_threshold,
               'compare': compare or None}
    folds = None
    if len(laws) > 1:
        estimate = select_friction(model, data, check, laws=laws,
                                   folds=None if check else args.folds, **options)
    else:
        estimate = identify(model, data, friction=laws[0], validation=check, **options)
    if args.folds:
        # held out in time: each fold chooses its cutoff (and law) on its own training pieces
        folds = cross_validate(model, data, folds=args.folds, friction=laws, **options)
        estimate = dataclasses.replace(estimate, validation=folds.pooled)
    title = (f'identified {estimate.base.count} base parameters of {model.name} from '
             f'{estimate.data_summary()}; condition number of W_B {estimate.condition:.3g} '
             '(excitation: below ~1e3 is good)')
    if estimate.validation is not None and estimate.validation.worse_than_prior():
        title += '; ' + estimate.validation.worse_summary()
    table = _estimate_table(model, estimate)
    if estimate.standard is not None:
        rows = [[name, _fmt(value)] for name, value in zip(estimate.standard_names,
                                                           estimate.standard)]
        info = estimate.consistency
        said = 'converged' if info['converged'] else 'DID NOT CONVERGE, the last iterate'
        along = '' if info['path_iterations'] == info['iterations'] else (
            f"; {info['path_iterations']} in all along the continuation from prior weight "
            f"{info['path_from']:g}")
        table += ('\n\nphysically consistent standard parameters '
                  f"({info['method']}, {info['seconds']:.2f} s, {info['iterations']} "
                  f"Newton steps: {said}: {info['status']}{along}):\n"
                  + _table(['standard parameter', 'value'], rows)
                  + '\n\nits residual RMS per joint: ' + ', '.join(
                      f'{j} {r:.3g}' for j, r in zip(model.joint_names, info['residual_rms'])))
        if prior_weight_summary(estimate.processing):
            table += '\n' + prior_weight_summary(estimate.processing)
    if folds is not None:
        table += '\n\n' + folds.table()
    elif estimate.validation is not None:
        table += '\n\n' + estimate.validation.table()
        if args.validate_plot:
            table += f'\n\nplot: {estimate.validation.plot(args.validate_plot)}'
    if args.urdf_out:
        table += '\n\nwritten: ' + ', '.join(estimate.to_urdf(args.urdf_out))
    if args.parameters_out:
        more, said = _contact_spread(estimate, check, args.topic)
        estimate.parameters_yaml(args.parameters_out, more)
        table += f'\n\nwritten: {args.parameters_out}{said}'
    _emit(args, title, estimate.to_dict(), table)


def _estimate_table(model, estimate):
    """Tabulate the base parameters, then what the fit says of its data, deviations, friction."""
    rows = [[name, _fmt(urdf), _fmt(value), _fmt(std), f'{rel:.3g}']
            for name, urdf, value, std, rel in zip(estimate.names, estimate.base.values,
                                                   estimate.values, estimate.std,
                                                   estimate.relative_std)]
    table = _table(['base parameter', 'URDF', 'identified', 'std', 'std %'], rows)
    stamps = stamps_summary(estimate.processing)
    if stamps:
        table += '\n\n' + stamps
    table += '\n\nresidual RMS per joint: ' + ', '.join(
        f'{j} {r:.3g}' for j, r in zip(model.joint_names, estimate.residual_rms))
    if std_summary(estimate.processing):
        table += '\n' + std_summary(estimate.processing)
    table += '\n\n' + friction_summary(estimate.processing)
    if cutoff_summary(estimate.processing):
        table += '\n' + cutoff_summary(estimate.processing)
    if prior_threshold_summary(estimate.processing):
        table += '\n' + prior_threshold_summary(estimate.processing)
    if still_summary(estimate.processing):
        table += '\n' + still_summary(estimate.processing)
    return table


def _inertials(text, make, no_com):
    """Read ``LINK:MASS[:X,Y,Z[:IXX,IXY,IXZ,IYY,IYZ,IZZ]]`` into ``make(link, mass, com, I)``."""
    parts = text.split(':')
    try:
        if not 2 <= len(parts) <= 4:
            raise ValueError
        com = tuple(float(x) for x in parts[2].split(',')) if len(parts) > 2 else no_com
        inertia = [float(x) for x in parts[3].split(',')] if len(parts) > 3 else None
        if (com is not None and len(com) != 3) or (inertia is not None and len(inertia) != 6):
            raise ValueError
        return make(parts[0], float(parts[1]), com, inertia)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'{text!r} is not LINK:MASS[:X,Y,Z[:IXX,IXY,IXZ,IYY,IYZ,IZZ]] (kg; centre of mass '
            'in m in the link frame; inertia about it, kg m^2)') from None


def _payload(text):
    """``--payload LINK:MASS[:X,Y,Z[:IXX,...]]``: a :class:`KnownPayload` (the rest identified)."""
    return _inertials(text, KnownPayload, None)


def _known_link(text):
    """``--known-link LINK:MASS[:X,Y,Z[:IXX,...]]``: a :class:`KnownLink` (the rest identified)."""
    return _inertials(text, KnownLink, None)


def _known_parameter(text):
    """``--known-parameter NAME=VALUE``: a :class:`KnownParameter`."""
    name, _, value = text.partition('=')
    try:
        return KnownParameter(name.strip(), float(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not NAME=VALUE (a standard parameter '
                                         'and a number: Ia_joint1=0.25)') from None


def cmd_identify_gains(args):
    model = _load(args)
    mountings, payloads = args.payload_log or [], args.payload or []
    if mountings and not payloads:
        raise ValueError('--payload-log needs --payload LINK:MASS[:X,Y,Z[:IXX,...]]: what the '
                         'run carried (its mass at least)')
    if payloads and len(payloads) not in (1, len(mountings)):
        raise ValueError(f'{len(payloads)} --payload for {len(mountings)} --payload-log: give one '
                         '--payload for them all, or one per --payload-log, in the same order')
    if mountings:
        payloads = payloads * len(mountings) if len(payloads) == 1 else payloads
    found = identify_gains(model, args.data, mountings, payloads,
                           known=(args.known_link or []) + (args.known_parameter or []),
                           friction=args.friction,
                           armature=args.armature, cutoff=args.cutoff, still=args.still,
                           retime=not args.stamps_as_logged)
    rows = [[j, _fmt(nominal), _fmt(g), _fmt(s), f'{100 * s / abs(g):.3g}', _fmt(kt)]
            for j, nominal, g, s, kt in zip(found.joints, found.nominal, found.gains, found.std,
                                            found.torque_constants)]
    estimate = found.estimate
    title = (f'identified the drive gains of {model.name} and {estimate.base.count} base '
             f'parameters from {estimate.data_summary()}, the scale fixed by '
             f'{found.fixed_by}; condition number '
             f'{estimate.condition:.3g}')
    table = _table(['motor', 'nominal N m/A', 'gain N m/A', 'std', 'std %',
                    'torque constant at motor'], rows)
    table += '\n(gain: torque per ampere at the joint the motor is named after, R[k,k] kt)'
    for i, load in enumerate(found.loads):
        table += '\n\n' + (f'--payload-log {i + 1}: ' if len(found.loads) > 1 else '') + \
            load.summary()
    table += '\n\n' + _estimate_table(model, estimate)
    if args.validate:
        check = args.validate if len(args.validate) > 1 else args.validate[0]
        table += '\n\n' + estimate.validate(check).table()
    if args.transmissions_out:
        found.transmissions_yaml(args.transmissions_out)
        table += (f'\n\nwritten: {args.transmissions_out} (--transmissions: reads '
                  '<joint>.current columns as torques through the identified constants)')
    _emit(args, title, found.to_dict(), table)


def cmd_identify_payload(args):
    model = _load(args)
    found = identify_payload(model, args.data if len(args.data) > 1 else args.data[0],
                             args.link, cutoff=args.cutoff, topic=args.topic)
    arm = f'--parameters {args.parameters}' if args.parameters else 'its URDF'
    if args.transmissions:
        arm += f', currents through --transmissions {args.transmissions}'
    title = (f'identified the load on {args.link} of {model.name} from {found.samples} states '
             f'(the arm as {arm})')
    table = found.summary() + '\n\nresidual RMS per joint: ' + ', '.join(
        f'{j} {r:.3g}' for j, r in zip(model.joint_names, found.residual_rms))
    if args.payload_out:
        found.parameters_yaml(args.payload_out)
        left_out = found.node_parameters()[1]
        table += (f'\n\nwritten: {args.payload_out} (payload_link and payload for the nodes: '
                  '--ros-args --params-file, or ros2 param load)'
                  + (f'; {left_out}' if left_out else ''))
    _emit(args, title, found.to_dict(), table)


def cmd_contact(args):
    from .contact.calibration import parse_thresholds, thresholds_yaml
    from .contact.replay import replay
    from .recordings.log import read_states

    model = _load(args)
    levels = {}
    for name in ('contact_thresholds', 'collision_thresholds'):
        try:
            levels[name] = parse_thresholds(getattr(args, name))
        except ValueError as e:
            raise ValueError(f'--{name.replace("_", "-")}: {e}') from None
    (t, q, qd, tau), = read_states(model, args.log, args.topic,
                                   retime=not args.stamps_as_logged)
    found = replay(model, t, q, qd, tau, gain=args.gain, friction=not args.no_friction,
                   contact=levels['contact_thresholds'],
                   collision=levels['collision_thresholds'], identified=args.parameters,
                   calibration=args.calibration)
    title = (f'{args.log} observed as dynamics_node would ({len(t)} states, observer gain '
             f'{args.gain:g}/s): the levels it would raise')
    table = found.table(model)
    if args.thresholds_out:
        if found.levels is None:
            raise ValueError(f'--thresholds-out {args.thresholds_out}: no levels to write '
                             f'({found.how})')
        thresholds_yaml(model, found.levels, args.gain, found.how, args.thresholds_out)
        table += (f'\n\nwritten: {args.thresholds_out} (contact_thresholds, '
                  'collision_thresholds and observer_gain for dynamics_node: --ros-args '
                  '--params-file, or ros2 param load)')
    _emit(args, title, found.to_dict(), table)


#: Extensions of the logs ``fleet`` takes: a first argument with one is not the URDF.
_LOG_EXTENSIONS = ('.csv', '.npz', '.db3', '.mcap')


def cmd_fleet(args):
    if not args.urdf or args.urdf.lower().endswith(_LOG_EXTENSIONS) or os.path.isdir(args.urdf):
        raise ValueError("fleet needs the robots' URDF first (every log is identified with "
                         f'it), then the logs; got {args.urdf or "no argument"!r} first')
    if bool(args.logs) == bool(args.manifest):
        raise ValueError('fleet takes the logs (grouped by robot and period from their names) '
                         'or --manifest CSV, one of the two')
    if args.friction not in FRICTION_LAWS:
        raise ValueError(f'--friction {args.friction}: unknown law (laws: '
                         f'{", ".join(FRICTION_LAWS)}; a fleet is compared under one law)')
    model = _load(args)                         # its errors here, before any worker starts
    logs = (logs_of_manifest(args.manifest) if args.manifest
            else logs_by_name(args.logs, args.pattern or NAME_PATTERN))
    load_options = {'root_link': args.root_link, 'tip_links': args.tip_link,
                    'joint_dynamics': args.joint_dynamics, 'parameters': args.parameters,
                    'check_inertia': args.check_inertia, 'without_links': args.without_link,
                    'transmissions': args.transmissions}

    def progress(result):
        said = 'FAILED' if result.error else f'{result.seconds:.1f} s'
        print(f'fleet: {result.robot} {result.period}: {said}', file=sys.stderr, flush=True)

    report = identify_fleet(args.urdf, logs, load_options=load_options,
                            scheduler=args.scheduler, workers=args.workers, serial=args.serial,
                            sigmas=args.sigmas, confirm=args.confirm,
                            progress=None if args.quiet else progress,
                            friction=args.friction, armature=args.armature, cutoff=args.cutoff,
                            still=args.still, retime=not args.stamps_as_logged,
                            topic=args.topic)
    table = '\n\n'.join(f'{title}\n{_table(headers, rows)}'
                        for title, headers, rows in report.joint_tables())
    table += '\n\n' + report.drift_summary()
    if args.output:
        table += '\n\nwritten: ' + ', '.join(report.write(args.output))
    _emit(args, f'{model.name}: {report.title()}', report.to_dict(), table)


def _contact_spread(estimate, check, topic):
    """
    Return the identified model's residual spread over the validation logs, and what to say.

    A YAML entry for the parameters file (None where it cannot be had): the momentum
    observer's residual spread (its 99.9th percentile, moments left out, growing with each
    joint's speed and the model's torque) on data the fit did not see, at the default gain,
    which dynamics_node's ``contact_thresholds: auto`` stands on (:mod:`.contact.detection`).
    """
    from .contact.calibration import said_spread
    from .contact.detection import residual_spread, spread_yaml
    if check is None:
        return None, ' (no contact_spread: it needs --validate LOG)'
    model = estimate.identified_model()
    try:
        spread, moments = residual_spread(model, check, DEFAULT_GAIN, topic=topic, report=True)
    except (IdentificationError, ValueError) as e:
        return None, f' (no contact_spread: {e})'
    source = ', '.join(getattr(log, 'source', str(log))       # a Log read once, or a path
                       for log in (check if isinstance(check, list) else [check]))
    left_out = ('; moments left out of it (a stop, a spike): '
                + ', '.join(m.describe() for m in moments)) if moments else ''
    return ({'contact_spread': spread_yaml(model, spread, DEFAULT_GAIN, source)},
            f" (with contact_spread: {said_spread(spread)}, the momentum observer's residual "
            f'spread (99.9th percentile) on {source}{left_out})')


def cmd_excitation(args):
    model = _load(args)
    motion = excitation_trajectory(
        model, duration=args.duration, harmonics=args.harmonics, frequency=args.frequency,
        rate=args.rate, seed=args.seed, friction=not args.no_friction, armature=args.armature,
        margin=args.margin, maxiter=args.maxiter, criterion=args.criterion, noise=args.noise)
    if args.output:
        motion.to_csv(args.output)
    rows = [[j, _fmt(q0), _fmt(lo), _fmt(hi), _fmt(v)]
            for j, q0, lo, hi, v in zip(model.joint_names, motion.offset, motion.q.min(axis=0),
                                        motion.q.max(axis=0), np.abs(motion.qd).max(axis=0))]
    table = _table(['joint', 'mean position', 'lowest', 'highest', 'fastest'], rows)
    above = [f'{name} {r:.3g} %' for name, _, r in motion.poorly_identified]
    if above:
        table += (f'\n\npredicted above {WELL_IDENTIFIED:g} % relative std: '
                  + ', '.join(above))
    if args.output:
        table += f'\n\nwritten to {args.output}'
    data = {'samples': len(motion.t), 'duration': motion.duration,
            'frequency': motion.frequency, 'harmonics': args.harmonics,
            'condition': motion.condition, 'initial_condition': motion.initial_condition,
            'base_parameters': motion.base.count, 'criterion': motion.criterion,
            'noise': motion.noise, 'predicted_well_identified': motion.well_identified[0],
            'nonzero_in_urdf': motion.well_identified[1],
            'predicted_relative_std_percent': {
                name: (float(r) if np.isfinite(r) else None)
                for name, r in zip(motion.base.names, motion.predicted_relative_std)},
            'scaled': motion.scaled,
            'iterations': motion.iterations, 'elapsed': motion.elapsed,
            'message': motion.message, 'output': args.output}
    _emit(args, f'excitation trajectory for {model.name}: {motion.summary()}', data, table)


def cmd_demo(args):
    """Print the dynamics of the demo arm along a smooth trajectory, with checks and timings."""
    model = _load(args)
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
    print(_joint_table(model, {'amplitude [rad]': amp, 'peak |tau|': peak,
                               'effort limit': model.effort_limit,
                               'use of limit': [f'{p / e:.0%}' if np.isfinite(e) else '-'
                                                for p, e in zip(peak, model.effort_limit)],
                               'g(q) mid-way': gravity_torques(model, q[N // 2])}))
    print(f'\ninertia matrix M(q) mid-way (composite links):\n{_matrix(M)}')
    print(f'Saha UDU^T pivots D: {" ".join(f"{d:.4g}" for d in D)};  '
          f'|U diag(D) U^T - M| = {np.abs(U * D @ U.T - M).max():.1e}')
    print(f'\nround trip forward(inverse(qdd)) over the trajectory: max |error| = '
          f'{np.abs(qdd_back - qdd).max():.1e} rad/s^2 (method {choose_method(model)})')
    print(f'batched inverse dynamics: {t_id / N * 1e6:.2f} us/sample; forward dynamics: '
          f'{t_fd / N * 1e6:.2f} us/sample')


def cmd_flexible(args):
    """Run both of Isobe & Imaizumi's schemes on a flexible arm and its rigid twin; print, plot."""
    from .flexible.arm import FlexibleArm
    from .flexible.dynamics import flexible_inverse_dynamics
    from .flexible.plot import plot_flexible, read_trajectory

    arm = FlexibleArm.from_yaml(args.config)
    t, q = read_trajectory(args.trajectory, arm.joint_names)
    flexible = flexible_inverse_dynamics(arm, t, q, dt=args.dt)
    rigid = flexible_inverse_dynamics(arm.with_rigid_links(), t, q, dt=args.dt)
    freqs = arm.natural_frequencies(q[0], 3)
    deflection = np.linalg.norm(flexible.tip_deflection, axis=2).max(axis=0)
    angle_error = np.abs(flexible.trajectory.q - flexible.trajectory.q_target).max(axis=0)
    root = [np.flatnonzero(arm.element_link == i) for i in range(arm.n)]
    axial = [float(np.abs(flexible.axial_force[:, e[0]]).max()) if e.size else 0.0 for e in root]
    data = {'arm': repr(arm), 'steps': int(flexible.t.size),
            'dt': float(np.max(np.diff(flexible.t))),
            'natural_frequencies_hz': [float(f) for f in freqs],
            'joints': [{'name': name, 'peak_tau_rigid': float(np.abs(rigid.tau[:, i]).max()),
                        'peak_tau_flexible': float(np.abs(flexible.tau[:, i]).max()),
                        'max_angle_error': float(angle_error[i]),
                        'max_tip_deflection': float(deflection[i]),
                        'max_root_axial_force': axial[i]}
                       for i, name in enumerate(arm.joint_names)]}
    table = _table(['joint', 'peak |tau| rigid', 'peak |tau| flexible', 'max angle error',
                    'max tip deflection [m]', 'max |axial| [N]'],
                   [[j['name']] + [_fmt(j[k]) for k in ('peak_tau_rigid', 'peak_tau_flexible',
                                                        'max_angle_error', 'max_tip_deflection',
                                                        'max_root_axial_force')]
                    for j in data['joints']])
    if args.plot:
        plot_flexible(flexible, rigid, args.plot)
        data['plot'] = args.plot
        table += f'\n\nfigures written to {args.plot}'
    if args.output:
        _write_flexible_csv(args.output, flexible)
        data['output'] = args.output
        table += f'\ntime series written to {args.output}'
    title = (f'{arm!r}\n{data["steps"]} steps of {data["dt"]:.3g} s; first modes (joints held at '
             f'the start): {", ".join(f"{f:.4g} Hz" for f in freqs)}')
    _emit(args, title, data, table)


def _write_flexible_csv(path, result):
    traj = result.trajectory
    columns = csvlog.joint_columns(traj.arm.joint_names, target=traj.q_target, reached=traj.q,
                                   effort=result.tau)
    deflection = np.linalg.norm(result.tip_deflection, axis=2)
    columns.update({f'{link.name}.tip_deflection': deflection[:, k]
                    for k, link in enumerate(traj.arm.links)})
    csvlog.write(path, result.t, columns)


def build_parser():
    """Build the argparse parser of ``manipulator-dynamics``."""
    parser = argparse.ArgumentParser(
        prog='manipulator-dynamics',
        description='Rigid-body dynamics of robot manipulators from URDF: gravity, inverse and '
                    'forward dynamics, inertia matrix, standard parameters.')
    sub = parser.add_subparsers(dest='command', required=True)

    def command(name, func, help_text, states=()):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument('urdf', nargs='?', help='URDF file (default: the bundled demo arm)')
        p.add_argument('--root-link', help='link to use as the fixed base')
        p.add_argument('--tip-link', action='append', help='keep only joints leading to this link '
                       '(repeatable)')
        p.add_argument('--without-link', action='append', help='a link not mounted on the robot '
                       '(a hand, a tool): left out with everything below it (repeatable)')
        p.add_argument('--joint-dynamics', metavar='YAML', help='armature / friction overrides')
        p.add_argument('--parameters', metavar='YAML', help='standard parameters to use instead '
                       "of the URDF's (identify --parameters-out writes them)")
        p.add_argument('--transmissions', metavar='YAML', help="the motors' gear ratios, "
                       "coupling and joint zero offsets, instead of the URDF's <transmission>: "
                       'logs may then give <joint>.motor_position and .motor_effort columns')
        p.add_argument('--check-inertia', choices=['raise', 'warn', 'ignore'], default='raise',
                       help='what to do with physically impossible inertias (default: raise)')
        p.add_argument('--format', choices=['table', 'json', 'yaml'], default='table')
        for s in states:
            p.add_argument(f'--{s}', metavar='V1,V2,...', help=f'{s}, one value per joint '
                           '(default zeros)')
        p.set_defaults(func=func)
        return p

    command('demo', cmd_demo, 'dynamics of the demo arm along a trajectory, with checks')
    command('info', cmd_info, 'joints, masses, limits and friction of a robot')
    command('gravity', cmd_gravity, 'gravity torques g(q)', ('q',))
    p = command('inverse', cmd_inverse, 'inverse dynamics tau(q, qd, qdd)', ('q', 'qd', 'qdd'))
    p.add_argument('--friction', action='store_true', help='include joint friction')
    command('inertia', cmd_inertia, 'inertia matrix M(q) and its UDU^T factors', ('q',))
    p = command('forward', cmd_forward, 'forward dynamics qdd(q, qd, tau)', ('q', 'qd', 'tau'))
    p.add_argument('--method', choices=['auto', 'udut', 'cholesky'], default='auto')
    p.add_argument('--friction', action='store_true', help='include joint friction')
    command('parameters', cmd_parameters, 'standard inertial parameters of every link')
    p = command('base-params', cmd_base_params, 'base (identifiable) inertial parameters and '
                'how the standard ones group into them')
    p.add_argument('--friction', action='store_true', help='include Fv, Fc of every joint')
    p.add_argument('--armature', action='store_true', help='include the rotor inertia Ia')
    p.add_argument('--samples', type=int, help='random states (default: 4 rows of W per '
                   'parameter)')
    p.add_argument('--seed', type=int, default=0, help='seed of the random states (default 0)')
    p.add_argument('--method', choices=['energy', 'dynamic'], default='energy',
                   help='rows of W: energy functions (default) or torque regressor')
    p.add_argument('--loops', metavar='YAML', help='loop closures of a closed-loop robot '
                   '(active joints, closed points)')
    p = command('identify', cmd_identify, 'identify the base parameters from measured data: a '
                'CSV file (time, <joint>.position, <joint>.effort, optionally '
                '<joint>.velocity), a numpy archive (t, q, tau, optionally qd and joints) or a '
                'rosbag2 recording of sensor_msgs/JointState with efforts')
    p.add_argument('data', nargs='+', help='CSV file, .npz or rosbag2 folder; several: logs '
                   'identified together (each filtered on its own, as is every stretch between '
                   'gaps in a log)')
    p.add_argument('--validate', metavar='LOG', action='append', help='a log not used for the '
                   "fit (repeatable): the URDF's, the identified and the consistent models' "
                   'torques compared with it, per joint')
    p.add_argument('--folds', type=int, metavar='K', help='k-fold cross-validation in time: '
                   'each log cut into K pieces, each held out in turn and predicted from the '
                   'rest (instead of --validate)')
    p.add_argument('--compare', metavar='YAML', action='append', help='standard parameters '
                   '(as --parameters-out writes them: a published or an earlier identified set) '
                   'judged on the held-out data beside the URDF and the identified model, '
                   'labelled by the file name (repeatable; with --validate or --folds)')
    p.add_argument('--validate-plot', metavar='PNG', help='plot the held-out torques '
                   '(--validate or --folds), measured and predicted by each model, a panel per '
                   'joint')
    p.add_argument('--friction', default='coulomb', metavar='LAW[,LAW...]', help='joint '
                   'friction law: none, coulomb (Fv qd + Fc sign(qd), the default), offset (+ Fo '
                   'per joint), smooth (Fc tanh(qd / vs) + Fo, vs fitted); several, '
                   'comma-separated, with --validate or --folds: the one that best predicts the '
                   'held-out data is kept')
    p.add_argument('--no-friction', action='store_true', help='same as --friction none')
    p.add_argument('--armature', action='store_true', help='identify the rotor inertia Ia')
    p.add_argument('--cutoff', type=_cutoff, help='low-pass cutoff in Hz, or auto: the one '
                   'whose fits best predict held-out pieces of the data (3 folds, 2.5-20x the '
                   "motion's bandwidth); default: auto, or where the data are too short to "
                   f'judge, {CUTOFF_HZ:g} Hz with the reason')
    p.add_argument('--still', type=_still, help='leave out the equations of a joint at rest '
                   'or reversing (it, or a motor that turns it, slower than this speed in rad/s '
                   'or m/s), whose dry friction holds anything up to Fc; auto: per joint and '
                   "motor from the data's noise at the cutoff; validation leaves out the same")
    p.add_argument('--topic', default='/joint_states', help='JointState topic in a rosbag2')
    p.add_argument('--stamps-as-logged', action='store_true', help="keep the logger's stamps: "
                   "by default a log with the robot's velocities (<joint>.velocity columns, "
                   "JointState velocity) is re-timed on the robot's clock where they show one")
    p.add_argument('--physically-consistent', action='store_true', help='also find standard '
                   'parameters every link of which is physically realisable (URDF as prior)')
    p.add_argument('--prior-weight', type=_number_or_auto('a positive weight'),
                   help="the consistent fit's prior weight (units of one equation's noise), or "
                   'auto: the one whose consistent sets best predict held-out pieces of the '
                   'data (3 folds), said with which set to trust; default: auto, or 1 with the '
                   'reason where the data are too short to fold')
    p.add_argument('--prior-threshold', type=_number_or_auto('a singular value'),
                   help='directions of the base parameters the motion barely excites keep the '
                   "prior's values (the URDF's, or --parameters): those the data know worse "
                   "than 1/THRESHOLD of the prior's scale (each parameter's prior value, at "
                   'least a tenth of the largest of its kind); 0: least squares; auto: chosen '
                   'on 3 held-out folds of the data between 0 and 1 where some direction is that '
                   'weak; default: auto, or least squares with the reason where the data are '
                   'too short to fold')
    p.add_argument('--urdf-out', metavar='URDF', help='write the URDF with the physically '
                   'consistent parameters (implies --physically-consistent; rotor inertias to '
                   '<stem>.joint_dynamics.yaml)')
    p.add_argument('--parameters-out', metavar='YAML', help='write the physically consistent '
                   'standard parameters, for --parameters, load_model(parameters=) and the '
                   "nodes' identified_parameters (implies --physically-consistent)")
    p = command('identify-gains', cmd_identify_gains, "identify each motor's drive gain "
                '(torque per ampere at its joint) with the base parameters, from logs of motor '
                'currents (time, <joint>.current, <joint>.position or <joint>.motor_position '
                'through --transmissions); the scale is fixed by a run with a known payload, '
                'or by the known masses of links a prismatic joint carries '
                "(Gautier & Briot's global identification)")
    p.add_argument('data', nargs='+', help='CSV logs of the robot without the payload')
    p.add_argument('--payload-log', metavar='LOG', action='append', nargs='+', help='CSV logs '
                   'of the robot carrying a load of known mass, all with the load mounted '
                   'once: what fixes the scale. Repeat it for each mounting (the load taken '
                   'off and put back, or another load): each has its own unknown centre of '
                   'mass and inertia')
    p.add_argument('--payload', type=_payload, metavar='LINK:MASS[:X,Y,Z[:IXX,...]]',
                   action='append', help='the load of --payload-log: its link and mass in kg '
                   '(what a scale weighed); optionally its centre of mass in the link frame (m) '
                   'and inertia about it (kg m^2). What is not given is identified with the '
                   'gains and reported; a point mass at the origin is LINK:MASS:0,0,0:0,0,0,0,'
                   '0,0. Once for every --payload-log, or once per --payload-log in order')
    p.add_argument('--known-link', type=_known_link, action='append',
                   metavar='LINK:MASS[:X,Y,Z[:IXX,...]]', help="a link's known mass (with what "
                   'is fixed to it), centre of mass and inertia, as --payload (repeatable; what '
                   'is not given is identified): fixes the scale where it determines base '
                   'parameters (the masses a prismatic joint carries); else an error names the '
                   'grouping equations it is caught in')
    p.add_argument('--known-parameter', type=_known_parameter, action='append',
                   metavar='NAME=VALUE', help='a standard parameter known by name, in SI units '
                   '(repeatable): a rotor inertia from its datasheet, Ia_<joint> at the joint, '
                   'which a horizontal axis regroups with the masses it carries')
    p.add_argument('--friction', default='coulomb', choices=['none', 'coulomb', 'offset'],
                   help='joint friction law (default coulomb)')
    p.add_argument('--armature', action='store_true', help='identify the rotor inertia Ia')
    p.add_argument('--cutoff', type=float, default=CUTOFF_HZ, help='low-pass cutoff in Hz '
                   f'(default {CUTOFF_HZ:g})')
    p.add_argument('--still', type=_still, help='as for identify: leave out the equations of '
                   'a joint or motor slower than this speed (rad/s or m/s), or auto')
    p.add_argument('--stamps-as-logged', action='store_true', help="keep the logger's stamps "
                   '(as for identify)')
    p.add_argument('--validate', metavar='LOG', action='append', help='a current log not used '
                   'for the fit (repeatable, without the payload): its torques through the '
                   'identified constants against the identified model')
    p.add_argument('--transmissions-out', metavar='YAML', help='write the transmissions with '
                   'the identified torque constants (for --transmissions and the nodes)')
    p = command('identify-payload', cmd_identify_payload, "identify a load's mass, centre of "
                'mass and inertia, with their deviations, from a log of the arm carrying it, '
                "the arm's own parameters known (--parameters from identify, --transmissions "
                'with the identified torque constants for current logs)')
    p.add_argument('data', nargs='+', help='CSV, .npz or rosbag2 logs of the arm carrying the '
                   'load (efforts, or <joint>.current through --transmissions)')
    p.add_argument('--link', required=True, help='the link that holds the load (a tool or '
                   'flange frame too); every quantity is in its frame')
    p.add_argument('--cutoff', type=float, default=CUTOFF_HZ, help='low-pass cutoff in Hz '
                   f'(default {CUTOFF_HZ:g})')
    p.add_argument('--topic', default='/joint_states', help='JointState topic in a rosbag2')
    p.add_argument('--payload-out', metavar='YAML', help='write payload_link and payload as a '
                   'ROS 2 parameters file for dynamics_node and trajectory_node')
    p = command('contact', cmd_contact, "run dynamics_node's momentum observer and contact "
                'levels over a log: the levels (given, from the identification --parameters '
                'carries, or learnt from the first seconds of motion) and every stretch of '
                'states above them')
    p.add_argument('log', help='a CSV, .npz or rosbag2 log with the measured velocities')
    p.add_argument('--gain', type=float, default=DEFAULT_GAIN, help='observer gain in 1/s '
                   f'(default {DEFAULT_GAIN:g}, as observer_gain)')
    p.add_argument('--contact-thresholds', default='auto', help="N m, one or '[a, b, ...]' per "
                   'joint, or auto (default), as the node parameter')
    p.add_argument('--collision-thresholds', default='auto', help='as --contact-thresholds')
    p.add_argument('--calibration', type=float, default=3.0, help='auto levels: seconds of free '
                   "motion they are learnt from, the log's first (default 3, as "
                   'contact_calibration)')
    p.add_argument('--no-friction', action='store_true', help='the joints have no friction of '
                   'their own (as observer_friction false)')
    p.add_argument('--topic', default='/joint_states', help='JointState topic in a rosbag2')
    p.add_argument('--stamps-as-logged', action='store_true', help='do not put the log on the '
                   "robot's clock by its velocities")
    p.add_argument('--thresholds-out', metavar='YAML', help='write the levels as a ROS 2 '
                   'parameters file for dynamics_node (it then starts with them as given)')
    p = command('fleet', cmd_fleet, "identify a fleet's logs, one identification per robot "
                "and period (a day, a week), on Dask where it is installed: each joint's "
                'friction coefficients over time, and the drifts from the first period')
    p.add_argument('logs', nargs='*', help='CSV, .npz or rosbag2 logs named <robot>_<period> '
                   '(see --pattern); several of one robot and period are identified together')
    p.add_argument('--manifest', metavar='CSV', help='the logs as a CSV with the columns '
                   "robot, period, log (paths relative to the manifest's folder), instead")
    p.add_argument('--pattern', metavar='REGEX', help='regular expression with the groups '
                   'robot and period, matched against each log name without its extension '
                   f'(default {NAME_PATTERN.replace("%", "%%")})')
    p.add_argument('--friction', default='coulomb', help='the one friction law of every '
                   'identification (default coulomb; offset, smooth, none)')
    p.add_argument('--armature', action='store_true', help='identify the rotor inertia Ia')
    p.add_argument('--cutoff', type=_cutoff, help='low-pass cutoff in Hz, or auto (default: '
                   'as identify, chosen per log)')
    p.add_argument('--still', type=_still, help='as for identify')
    p.add_argument('--topic', default='/joint_states', help='JointState topic in a rosbag2')
    p.add_argument('--stamps-as-logged', action='store_true', help="keep the logger's stamps")
    p.add_argument('--scheduler', metavar='ADDRESS', help='a running Dask scheduler '
                   '(tcp://host:8786); default: a local cluster, a worker per core')
    p.add_argument('--workers', type=int, help="the local cluster's worker processes "
                   '(default: one per core)')
    p.add_argument('--serial', action='store_true', help='identify in this process, one '
                   'after another (what happens, with a warning, without Dask)')
    p.add_argument('--sigmas', type=float, default=DRIFT_SIGMAS, help='a drift: this many '
                   'deviations of the difference from the first period (default '
                   f'{DRIFT_SIGMAS:g}) ...')
    p.add_argument('--confirm', type=int, default=CONFIRM, help='... in this many identified '
                   f'periods in a row (default {CONFIRM}; 1: every excursion)')
    p.add_argument('--output', metavar='DIR', help='write friction.csv (every coefficient), '
                   'drift.csv and, with drifts, drift.png')
    p.add_argument('--quiet', action='store_true', help='no progress line per identification')
    p = command('excitation', cmd_excitation, 'design an excitation trajectory for '
                'identification: a periodic Fourier series inside the limits that minimises the '
                'condition number of the base regressor, then the base parameters predicted '
                'above 10 %% relative standard deviation')
    p.add_argument('--duration', type=float, required=True, help='seconds (whole periods)')
    p.add_argument('--harmonics', type=int, default=5, help='harmonics per joint (default 5)')
    p.add_argument('--frequency', type=float, help='fundamental in Hz (default: about 0.1 Hz, '
                   'a whole number of periods in the duration)')
    p.add_argument('--rate', type=float, default=100.0, help='samples per second written '
                   '(default 100)')
    p.add_argument('--seed', type=int, default=0, help='seed of the starting motion (default 0)')
    p.add_argument('--margin', type=float, default=0.05, help='fraction of every limit kept '
                   'free (default 0.05)')
    p.add_argument('--maxiter', type=int, default=200, help='optimiser iterations at most, '
                   'per stage (default 200)')
    p.add_argument('--criterion', choices=CRITERIA, default=CRITERIA[0], help='relative_std '
                   '(default): the condition number, then the count of base parameters above '
                   '10 %% relative std; condition: the condition number alone')
    p.add_argument('--noise', type=float, default=0.02, help='torque noise the relative '
                   "deviations are predicted for, a fraction of each joint's RMS torque "
                   '(default 0.02)')
    p.add_argument('--no-friction', action='store_true', help='do not excite Fv, Fc')
    p.add_argument('--armature', action='store_true', default=None, help='excite the rotor '
                   'inertia Ia (default: if the robot has any)')
    p.add_argument('--output', metavar='CSV', help='write time, <joint>.position, .velocity '
                   'and .acceleration to this CSV')
    p = sub.add_parser('flexible', help='flexible-link arm: flexible trajectory and joint torques '
                       '(Isobe & Imaizumi)', description='Run the kinematics scheme and the '
                       'parallel inverse-dynamics scheme on a flexible arm and on the same arm '
                       'with rigid links, along a target trajectory.')
    p.add_argument('config', help='flexible arm YAML (see config/flexible_arm.yaml)')
    p.add_argument('trajectory', help='CSV with a time column and <joint>.position (or <joint>) '
                   'columns; others, as excitation --output writes, are ignored')
    p.add_argument('--dt', type=float, help='integrate on a uniform grid of this step (s); '
                   'default: the CSV samples')
    p.add_argument('--plot', metavar='PNG', help='write the figures to this PNG')
    p.add_argument('--output', metavar='CSV', help='write the time series (targets, reached '
                   'angles, efforts, tip deflections) to this CSV')
    p.add_argument('--format', choices=['table', 'json', 'yaml'], default='table')
    p.set_defaults(func=cmd_flexible)
    return parser


def main(argv=None):
    """Entry point of the ``manipulator-dynamics`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            args.func(args)
        except (ValueError, KeyError, OSError) as e:   # URDFError and friends are ValueErrors
            hint = '; on the command line: --check-inertia warn' if isinstance(
                e, InertiaError) else ''
            print(f'manipulator-dynamics: error: {e}{hint}', file=sys.stderr)
            return 2
        finally:
            for w in caught:
                print(f'manipulator-dynamics: warning: {w.message}', file=sys.stderr)
    return 0


def console():
    """
    Entry point of the ``manipulator-dynamics`` console script: :func:`main`, the process's own.

    The objects the imports made (numpy's, scipy's, pandas', numba's: about a million) live
    to the end, and the garbage collector's full passes walked every one of them: 0.07 s a
    pass, during a command and at its exit, where the interpreter's teardown took 0.3-0.5 s
    after every command.  Frozen once imported (:func:`gc.freeze`), and again before the
    process ends, they are never walked: nothing the imports made is garbage.
    """
    import gc

    gc.freeze()
    try:
        return main()
    finally:
        gc.freeze()


if __name__ == '__main__':
    sys.exit(console())
