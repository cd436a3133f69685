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

A module per family of commands (:mod:`.rigid`, :mod:`.identification`, :mod:`.contact`,
:mod:`.fleet`, :mod:`.flexible`) adds its commands; the options they share are declared once,
as parent parsers, in :mod:`.options`.
"""

import argparse
import sys
import warnings

from . import contact, fleet, flexible, identification, rigid
from ..model import InertiaError

#: The families of commands, in the order ``--help`` lists them.
FAMILIES = (rigid, identification, contact, fleet, flexible)


def build_parser():
    """Build the argparse parser of ``manipulator-dynamics``."""
    parser = argparse.ArgumentParser(
        prog='manipulator-dynamics',
        description='Rigid-body dynamics of robot manipulators from URDF: gravity, inverse and '
                    'forward dynamics, inertia matrix, standard parameters.')
    sub = parser.add_subparsers(dest='command', required=True)
    for family in FAMILIES:
        family.add_commands(sub)
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
