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
The options the commands share, each declared once, as argparse parent parsers.

A command takes the parents it needs (``parents=[MODEL, LOG]``): the option then means the
same, with the same type and help, wherever it appears.  What a parent cannot say alone (a
command's own default) the command sets with ``set_defaults``.
"""

import argparse

import numpy as np

from .. import robots
from ..identification.filtering import CUTOFF_HZ
from ..identification.friction import FRICTION_LAWS
from ..urdf import load_model


def number_or_auto(what):
    """Return an argparse type: ``auto``, or a number (``what`` names it in the error)."""
    def parse(text):
        if text == 'auto':
            return text
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'{text!r} is neither {what} nor auto') from None
    return parse


def _parent():
    return argparse.ArgumentParser(add_help=False)


#: The robot: its URDF and what changes it (the base, the tips, links not mounted, joint
#: dynamics, parameters, transmissions), how impossible inertias are met.
MODEL = _parent()
MODEL.add_argument('urdf', nargs='?', help='URDF file (default: the bundled demo arm)')
MODEL.add_argument('--root-link', help='link to use as the fixed base')
MODEL.add_argument('--tip-link', action='append', help='keep only joints leading to this link '
                   '(repeatable)')
MODEL.add_argument('--without-link', action='append', help='a link not mounted on the robot '
                   '(a hand, a tool): left out with everything below it (repeatable)')
MODEL.add_argument('--joint-dynamics', metavar='YAML', help='armature / friction overrides')
MODEL.add_argument('--parameters', metavar='YAML', help='standard parameters to use instead '
                   "of the URDF's (identify --parameters-out writes them)")
MODEL.add_argument('--transmissions', metavar='YAML', help="the motors' gear ratios, "
                   "coupling and joint zero offsets, instead of the URDF's <transmission>: "
                   'logs may then give <joint>.motor_position and .motor_effort columns')
MODEL.add_argument('--check-inertia', choices=['raise', 'warn', 'ignore'], default='raise',
                   help='what to do with physically impossible inertias (default: raise)')

#: How the result is printed: a table for a person, JSON or YAML for a program.
FORMAT = _parent()
FORMAT.add_argument('--format', choices=['table', 'json', 'yaml'], default='table')

#: Where a rosbag2 keeps the states.
TOPIC = _parent()
TOPIC.add_argument('--topic', default='/joint_states', help='JointState topic in a rosbag2 '
                   '(default /joint_states)')

#: Whether a log is put on the robot's clock by its velocities.
STAMPS = _parent()
STAMPS.add_argument('--stamps-as-logged', action='store_true', help="keep the logger's stamps: "
                    "by default a log with the robot's velocities (<joint>.velocity columns, "
                    "JointState velocity) is re-timed on the robot's clock where they show one")

#: A log: its topic and its stamps.
LOG = argparse.ArgumentParser(add_help=False, parents=[TOPIC, STAMPS])

#: The low-pass filter of the identification's time series.
CUTOFF = _parent()
CUTOFF.add_argument('--cutoff', type=number_or_auto('a frequency in Hz'), help='low-pass cutoff '
                    'in Hz, or auto: the one whose fits best predict held-out pieces of the '
                    "data (3 folds, 2.5-20x the motion's bandwidth); default: auto where the "
                    f'command chooses (identify, fleet), else {CUTOFF_HZ:g} Hz')

#: The joints at rest, whose equations an identification leaves out.
STILL = _parent()
STILL.add_argument('--still', type=number_or_auto('a speed (rad/s or m/s)'), help='leave out '
                   'the equations of a joint at rest or reversing (it, or a motor that turns '
                   'it, slower than this speed in rad/s or m/s), whose dry friction holds '
                   "anything up to Fc; auto: per joint and motor from the data's noise at the "
                   'cutoff; validation leaves out the same')

#: The rotor inertias among the parameters an identification fits.
ARMATURE = _parent()
ARMATURE.add_argument('--armature', action='store_true', help='identify the rotor inertia Ia')

#: The friction law an identification fits: one, or several to choose among.  Its own option,
#: not ``--friction``, which everywhere switches the model's own friction (:func:`model_friction`).
FRICTION_LAW = _parent()
FRICTION_LAW.add_argument('--friction-law', default='coulomb', metavar='LAW[,LAW...]',
                          help='joint friction law fitted: none, coulomb (Fv qd + Fc sign(qd), '
                          'the default), offset (+ Fo per joint), smooth (Fc tanh(qd / vs) + '
                          'Fo, vs fitted); several, comma-separated, where the command chooses '
                          '(identify with --validate or --folds): the one that best predicts '
                          'the held-out data is kept')


def model_friction(default):
    """
    Return the parent of ``--friction`` / ``--no-friction``: the model's own joint friction.

    In the result (``default`` True: contact, excitation) or out (inverse, forward,
    base-params) unless said.  A parent per default: a parent's actions are shared by every
    command that takes it, so a command's ``set_defaults`` would change the others' too.
    """
    parent = _parent()
    parent.add_argument('--friction', action=argparse.BooleanOptionalAction, default=default,
                        help="the model's joint friction Fv qd + Fc s(qd) + Fo (the URDF's "
                        '<dynamics>, or --joint-dynamics), in or out')
    return parent


#: The model's friction, in unless --no-friction; out unless --friction.
MODEL_FRICTION_IN, MODEL_FRICTION_OUT = model_friction(True), model_friction(False)


def friction_laws(args, laws=FRICTION_LAWS, several=None, one=None):
    """
    Return the laws ``--friction-law`` names, each checked.

    ``laws``: those the command takes.  ``several``: what choosing among several needs
    (checked by the caller), said where a law is unknown; None where the command fits one law,
    for the reason ``one``.
    """
    chosen = args.friction_law.split(',')
    unknown = [law for law in chosen if law not in laws]
    if unknown:
        more = f'; several, comma-separated, {several}' if several else ''
        raise ValueError(f'--friction-law {args.friction_law}: unknown law {unknown[0]!r} (laws: '
                         f'{", ".join(laws)}{more})')
    if len(chosen) > 1 and several is None:
        raise ValueError(f'--friction-law {args.friction_law}: one law, not {len(chosen)} '
                         f'({one})')
    return chosen


def fixed_cutoff(args):
    """Return ``--cutoff`` in Hz for a command that does not choose one (default CUTOFF_HZ)."""
    if args.cutoff == 'auto':
        raise ValueError(f'--cutoff auto: {args.command} filters at a cutoff given in Hz '
                         f'(default {CUTOFF_HZ:g}); identify chooses one')
    return CUTOFF_HZ if args.cutoff is None else args.cutoff


def load(args, parameters=None):
    """Load the robot the :data:`MODEL` options describe; ``parameters`` for --parameters."""
    return load_model(args.urdf or robots.path('demo_arm'), **load_options(args),
                      parameters=parameters or args.parameters)


def load_options(args):
    """:func:`.load_model`'s keywords from the :data:`MODEL` options, but --parameters."""
    return {'root_link': args.root_link, 'tip_links': args.tip_link,
            'joint_dynamics': args.joint_dynamics, 'check_inertia': args.check_inertia,
            'without_links': args.without_link, 'transmissions': args.transmissions}


def add_states(parser, states):
    """Add a ``--<state> V1,V2,...`` option per name: one value per joint, zeros by default."""
    for s in states:
        parser.add_argument(f'--{s}', metavar='V1,V2,...', help=f'{s}, one value per joint '
                            '(default zeros)')


def joint_vector(text, model, what):
    """Read ``--<what>``'s comma-separated values: one per joint of ``model``, zeros if None."""
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


def add_command(sub, name, func, help_text, parents=(MODEL, FORMAT)):
    """
    Add the command ``name`` to the subparsers ``sub``: it runs ``func(args)``.

    No option is taken by an abbreviation: one spelling would name an option in one command and
    another in the next (``--friction``: the model's friction; abbreviated, the law fitted).
    """
    parser = sub.add_parser(name, help=help_text, description=help_text, parents=list(parents),
                            allow_abbrev=False)
    parser.set_defaults(func=func)
    return parser
