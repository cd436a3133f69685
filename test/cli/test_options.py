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

"""The command line's options: each shared one declared once, with one meaning everywhere."""

import argparse

from manipulator_dynamics import cli
from manipulator_dynamics.cli import options
import pytest


def commands():
    """Map each command of ``manipulator-dynamics`` to its parser."""
    sub, = (a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def taker(parsers):
    """Return ``has(command, option)``: whether the command of ``parsers`` takes the option."""
    def has(command, option):
        return any(option in a.option_strings for a in parsers[command]._actions)
    return has


def meaning(action):
    """Return what an option means to a user: its kind, type, values, constant and help."""
    return (type(action).__name__, action.type, action.nargs, tuple(action.choices or ()),
            action.const, action.help, action.metavar)


#: Options of one concept whose values are the command's own: the algorithm (forward
#: dynamics' method; base-params' rows of W), the seed of its random states or motion, the
#: rotor inertia among the parameters counted, identified or excited (excitation: by default
#: where the robot has any), the held-out log (of efforts; of currents), where the result is
#: written (a CSV; a folder).
OWN_VALUES = {'--method', '--seed', '--armature', '--validate', '--output'}


def test_every_option_means_one_thing_wherever_it_appears():
    """
    An option string names the same option (kind, type, values, help) in every command.

    The friction law fitted (``--friction-law``) and the model's own friction (``--friction``
    / ``--no-friction``) are two options, not one spelling of two meanings; :data:`OWN_VALUES`:
    one concept, its values the command's own.
    """
    seen = {}
    for name, parser in commands().items():
        for action in parser._actions:
            for option in action.option_strings:
                seen.setdefault(option, {}).setdefault(meaning(action), []).append(name)
    several = {option: list(meanings.values()) for option, meanings in seen.items()
               if len(meanings) > 1 and option not in OWN_VALUES}
    assert not several, f'options of several meanings, by the commands of each: {several}'
    assert all(len(seen[option]) > 1 for option in OWN_VALUES), 'OWN_VALUES: one meaning now'


def test_the_friction_law_and_the_models_friction_are_two_options():
    """The law fitted and the switch of the model's friction: each where it means something."""
    parsers = commands()
    has = taker(parsers)
    fitting = {'identify', 'identify-gains', 'fleet'}
    switching = {'inverse', 'forward', 'base-params', 'contact', 'excitation'}
    for command in parsers:
        assert has(command, '--friction-law') == (command in fitting), command
        assert has(command, '--friction') == has(command, '--no-friction') == (
            command in switching), command
    with pytest.raises(SystemExit) as refused:           # argparse's usage line, status 2
        cli.build_parser().parse_args(['identify', 'log.csv', '--friction', 'coulomb'])
    assert refused.value.code == 2


def test_the_shared_options_come_from_their_parents():
    """Every command that reads a log, filters it or fits a law takes the parent's option."""
    parsers = commands()
    has = taker(parsers)
    for command in ('identify', 'contact', 'fleet', 'identify-payload'):
        assert has(command, '--topic'), command
    for command in ('identify', 'identify-gains', 'contact', 'fleet'):
        assert has(command, '--stamps-as-logged'), command
    for command in ('identify', 'identify-gains', 'identify-payload', 'fleet'):
        assert has(command, '--cutoff'), command
    for command in ('identify', 'identify-gains', 'fleet'):
        assert has(command, '--still') and has(command, '--friction-law'), command
    for command in set(parsers) - {'flexible'}:
        assert has(command, '--root-link') and has(command, '--format'), command
    assert not has('identify-gains', '--topic'), 'it reads CSV logs only: a --topic it ignores'


@pytest.mark.parametrize('args, message', [
    (['identify-gains', 'run.csv', '--friction-law', 'smooth'],
     "unknown law 'smooth' (laws: none, coulomb, offset)"),
    (['identify-gains', 'run.csv', '--friction-law', 'coulomb,offset'], 'one law, not 2'),
    (['identify-payload', 'run.csv', '--link', 'link7', '--cutoff', 'auto'],
     'identify-payload filters at a cutoff given in Hz'),
    (['identify-gains', 'run.csv', '--cutoff', 'auto'], 'identify-gains filters at a cutoff'),
    (['identify', 'run.csv', '--friction-law', 'coulomb,dry'], "unknown law 'dry'"),
])
def test_a_value_the_command_cannot_take_is_named(capsys, args, message):
    """A law or a cutoff the command cannot use: one line naming it, status 2, nothing read."""
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert 'no such data file' not in err            # refused before the log is looked for


@pytest.mark.parametrize('args, friction', [
    (['inverse'], False), (['inverse', '--friction'], True), (['inverse', '--no-friction'], False),
    (['forward', '--friction'], True), (['base-params', '--friction'], True),
    (['contact', 'log.csv'], True), (['contact', 'log.csv', '--no-friction'], False),
    (['excitation', '--duration', '10'], True),
    (['excitation', '--duration', '10', '--no-friction'], False),
])
def test_the_models_friction_is_a_switch_with_each_commands_default(args, friction):
    assert cli.build_parser().parse_args(args).friction is friction


@pytest.mark.parametrize('args, laws', [
    (['identify', 'log.csv'], ['coulomb']),
    (['identify', 'log.csv', '--friction-law', 'coulomb,offset'], ['coulomb', 'offset']),
    (['identify', 'log.csv', '--friction-law', 'none'], ['none']),
    (['fleet', 'arm.urdf', 'a_1.csv', '--friction-law', 'smooth'], ['smooth']),
])
def test_the_friction_law_is_read_once_for_every_command(args, laws):
    parsed = cli.build_parser().parse_args(args)
    assert options.friction_laws(parsed, several='with --validate') == laws


def test_cutoff_is_one_type_everywhere():
    """``--cutoff`` is a number or auto in every command; where none is given, 10 Hz or auto."""
    parser = cli.build_parser()
    for command in ('identify', 'fleet', 'identify-gains'):
        extra = ['arm.urdf'] if command == 'fleet' else []
        assert parser.parse_args([command, *extra, 'a.csv', '--cutoff', '2.5']).cutoff == 2.5
        assert parser.parse_args([command, *extra, 'a.csv', '--cutoff', 'auto']).cutoff == 'auto'
    payload = parser.parse_args(['identify-payload', 'a.csv', '--link', 'link7'])
    assert options.fixed_cutoff(payload) == options.CUTOFF_HZ
