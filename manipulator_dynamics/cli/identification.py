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

"""The identification commands: base parameters, drive gains and a load from logs; excitation."""

import argparse
import dataclasses
import os

import numpy as np

from .options import add_command, ARMATURE, CUTOFF, fixed_cutoff, FORMAT, FRICTION_LAW, \
    friction_laws, load, LOG, MODEL, MODEL_FRICTION_IN, number_or_auto, STAMPS, STILL, TOPIC
from .output import emit, fmt, tabulate
from ..contact.observer import DEFAULT_GAIN
from ..errors import IdentificationError
from ..identification.estimate import cross_validate, identify, select_friction
from ..identification.excitation import CRITERIA, excitation_trajectory, WELL_IDENTIFIED
from ..identification.gains import identify_gains
from ..identification.known import KnownLink, KnownParameter, KnownPayload
from ..identification.payload import identify_payload
from ..identification.report import Report
from ..recordings.log import read_once

#: The friction laws identify-gains fits.
GAINS_LAWS = ('none', 'coulomb', 'offset')


def cmd_identify(args):
    """Identify the base parameters from logs; validate, choose the law, write the models."""
    if args.validate_plot and not (args.validate or args.folds):
        raise ValueError('--validate-plot needs --validate LOG or --folds K: the data to plot')
    if args.compare and not (args.validate or args.folds):
        raise ValueError('--compare needs --validate LOG or --folds K: the held-out data the '
                         'parameter sets are judged on')
    if args.validate and args.folds:
        raise ValueError('--validate and --folds: held-out data is one or the other')
    laws = friction_laws(args, several='with --validate or --folds')     # before any log is read
    if len(laws) > 1 and not (args.validate or args.folds):
        raise ValueError(f'--friction-law {args.friction_law}: choosing among laws needs '
                         '--validate LOG or --folds K, data the fits do not see (the training '
                         'fit always prefers more terms)')
    model = load(args)
    compare = {}
    for path in args.compare or ():
        label = os.path.splitext(os.path.basename(path))[0]
        if label in compare:
            raise ValueError(f'--compare {path}: two files named {label!r}; rename one')
        compare[label] = load(args, parameters=path)
    # read once: choosing the cutoff, the law, the folds and the final fit all use them
    data = read_once(model, args.data if len(args.data) > 1 else args.data[0], args.topic)
    check = None if not args.validate else read_once(
        model, args.validate if len(args.validate) > 1 else args.validate[0], args.topic)
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
    report = Report.of(estimate, model.joint_names)
    table = _estimate_table(model, estimate, report)
    if estimate.standard is not None:
        rows = [[name, fmt(value)]
                for name, value in zip(estimate.standard_names, estimate.standard)]
        info = estimate.consistency
        said = 'converged' if info['converged'] else 'DID NOT CONVERGE, the last iterate'
        along = '' if info['path_iterations'] == info['iterations'] else (
            f"; {info['path_iterations']} in all along the continuation from prior weight "
            f"{info['path_from']:g}")
        table += ('\n\nphysically consistent standard parameters '
                  f"({info['method']}, {info['seconds']:.2f} s, {info['iterations']} "
                  f"Newton steps: {said}: {info['status']}{along}):\n"
                  + tabulate(['standard parameter', 'value'], rows)
                  + '\n\nits residual RMS per joint: ' + ', '.join(
                      f'{j} {r:.3g}' for j, r in zip(model.joint_names, info['residual_rms'])))
        if report.prior_weight:
            table += '\n' + report.prior_weight
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
    emit(args, title, estimate.to_dict(), table)


def _estimate_table(model, estimate, report):
    """Tabulate the base parameters, then their fit's ``report`` (its data, deviations, law)."""
    rows = [[name, fmt(urdf), fmt(value), fmt(std), f'{rel:.3g}']
            for name, urdf, value, std, rel in zip(estimate.names, estimate.base.values,
                                                   estimate.values, estimate.std,
                                                   estimate.relative_std)]
    return tabulate(['base parameter', 'URDF', 'identified', 'std', 'std %'], rows) + \
        report.text()


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
    """Identify each motor's drive gain with the base parameters, from current logs."""
    law, = friction_laws(args, laws=GAINS_LAWS, one='the gains are identified under one law')
    model = load(args)
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
                           friction=law, armature=args.armature, cutoff=fixed_cutoff(args),
                           still=args.still,
                           retime=not args.stamps_as_logged)
    rows = [[j, fmt(nominal), fmt(g), fmt(s), f'{100 * s / abs(g):.3g}', fmt(kt)]
            for j, nominal, g, s, kt in zip(found.joints, found.nominal, found.gains, found.std,
                                            found.torque_constants)]
    estimate = found.estimate
    title = (f'identified the drive gains of {model.name} and {estimate.base.count} base '
             f'parameters from {estimate.data_summary()}, the scale fixed by '
             f'{found.fixed_by}; condition number '
             f'{estimate.condition:.3g}')
    table = tabulate(['motor', 'nominal N m/A', 'gain N m/A', 'std', 'std %',
                     'torque constant at motor'], rows)
    table += '\n(gain: torque per ampere at the joint the motor is named after, R[k,k] kt)'
    for i, mounted in enumerate(found.loads):
        table += '\n\n' + (f'--payload-log {i + 1}: ' if len(found.loads) > 1 else '') + \
            mounted.summary()
    table += '\n\n' + _estimate_table(model, estimate, Report.of(estimate, model.joint_names))
    if args.validate:
        check = args.validate if len(args.validate) > 1 else args.validate[0]
        table += '\n\n' + estimate.validate(check).table()
    if args.transmissions_out:
        found.transmissions_yaml(args.transmissions_out)
        table += (f'\n\nwritten: {args.transmissions_out} (--transmissions: reads '
                  '<joint>.current columns as torques through the identified constants)')
    emit(args, title, found.to_dict(), table)


def cmd_identify_payload(args):
    """Identify a load's mass, centre of mass and inertia, the arm's parameters known."""
    model = load(args)
    found = identify_payload(model, args.data if len(args.data) > 1 else args.data[0],
                             args.link, cutoff=fixed_cutoff(args), topic=args.topic)
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
    emit(args, title, found.to_dict(), table)


def _contact_spread(estimate, check, topic):
    """
    Return the identified model's residual spread over the validation logs, and what to say.

    A YAML entry for the parameters file (None where it cannot be had): the momentum
    observer's residual spread (its 99.9th percentile, moments left out, growing with each
    joint's speed and the model's torque) on data the fit did not see, at the default gain,
    which dynamics_node's ``contact_thresholds: auto`` stands on (:mod:`.contact.detection`).
    """
    from ..contact.calibration import said_spread
    from ..contact.detection import residual_spread, spread_yaml
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
    """Design an excitation trajectory: periodic, inside the limits, well conditioned."""
    model = load(args)
    motion = excitation_trajectory(
        model, duration=args.duration, harmonics=args.harmonics, frequency=args.frequency,
        rate=args.rate, seed=args.seed, friction=args.friction, armature=args.armature,
        margin=args.margin, maxiter=args.maxiter, criterion=args.criterion, noise=args.noise)
    if args.output:
        motion.to_csv(args.output)
    rows = [[j, fmt(q0), fmt(lo), fmt(hi), fmt(v)]
            for j, q0, lo, hi, v in zip(model.joint_names, motion.offset, motion.q.min(axis=0),
                                        motion.q.max(axis=0), np.abs(motion.qd).max(axis=0))]
    table = tabulate(['joint', 'mean position', 'lowest', 'highest', 'fastest'], rows)
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
    emit(args, f'excitation trajectory for {model.name}: {motion.summary()}', data, table)


def add_commands(sub):
    """Add the identification commands to the subparsers ``sub``."""
    _add_identify(sub)
    _add_identify_gains(sub)
    _add_identify_payload(sub)
    _add_excitation(sub)


def _add_identify(sub):
    p = add_command(sub, 'identify', cmd_identify, 'identify the base parameters from measured '
                    'data: a CSV file (time, <joint>.position, <joint>.effort, optionally '
                    '<joint>.velocity), a numpy archive (t, q, tau, optionally qd and joints) or '
                    'a rosbag2 recording of sensor_msgs/JointState with efforts',
                    (MODEL, FORMAT, LOG, CUTOFF, STILL, FRICTION_LAW, ARMATURE))
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
    p.add_argument('--physically-consistent', action='store_true', help='also find standard '
                   'parameters every link of which is physically realisable (URDF as prior)')
    p.add_argument('--prior-weight', type=number_or_auto('a positive weight'),
                   help="the consistent fit's prior weight (units of one equation's noise), or "
                   'auto: the one whose consistent sets best predict held-out pieces of the '
                   'data (3 folds), said with which set to trust; default: auto, or 1 with the '
                   'reason where the data are too short to fold')
    p.add_argument('--prior-threshold', type=number_or_auto('a singular value'),
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


def _add_identify_gains(sub):
    p = add_command(sub, 'identify-gains', cmd_identify_gains, "identify each motor's drive "
                    'gain (torque per ampere at its joint) with the base parameters, from logs '
                    'of motor currents (time, <joint>.current, <joint>.position or '
                    '<joint>.motor_position through --transmissions); the scale is fixed by a '
                    'run with a known payload, or by the known masses of links a prismatic joint '
                    f"carries (Gautier & Briot's global identification); friction laws: "
                    f'{", ".join(GAINS_LAWS)}', (MODEL, FORMAT, STAMPS, CUTOFF, STILL,
                                                 FRICTION_LAW, ARMATURE))
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
    p.add_argument('--validate', metavar='LOG', action='append', help='a current log not used '
                   'for the fit (repeatable, without the payload): its torques through the '
                   'identified constants against the identified model')
    p.add_argument('--transmissions-out', metavar='YAML', help='write the transmissions with '
                   'the identified torque constants (for --transmissions and the nodes)')


def _add_identify_payload(sub):
    p = add_command(sub, 'identify-payload', cmd_identify_payload, "identify a load's mass, "
                    'centre of mass and inertia, with their deviations, from a log of the arm '
                    "carrying it, the arm's own parameters known (--parameters from identify, "
                    '--transmissions with the identified torque constants for current logs)',
                    (MODEL, FORMAT, TOPIC, CUTOFF))
    p.add_argument('data', nargs='+', help='CSV, .npz or rosbag2 logs of the arm carrying the '
                   'load (efforts, or <joint>.current through --transmissions)')
    p.add_argument('--link', required=True, help='the link that holds the load (a tool or '
                   'flange frame too); every quantity is in its frame')
    p.add_argument('--payload-out', metavar='YAML', help='write payload_link and payload as a '
                   'ROS 2 parameters file for dynamics_node and trajectory_node')


def _add_excitation(sub):
    p = add_command(sub, 'excitation', cmd_excitation, 'design an excitation trajectory for '
                    'identification: a periodic Fourier series inside the limits that minimises '
                    'the condition number of the base regressor, then the base parameters '
                    'predicted above 10 %% relative standard deviation; --no-friction: Fv, Fc '
                    'not excited', (MODEL, FORMAT, MODEL_FRICTION_IN))
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
    p.add_argument('--armature', action='store_true', default=None, help='excite the rotor '
                   'inertia Ia (default: if the robot has any)')
    p.add_argument('--output', metavar='CSV', help='write time, <joint>.position, .velocity '
                   'and .acceleration to this CSV')
