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

"""A log observed offline as dynamics_node observes it: the levels, and what crosses them."""

import json

from helpers import LOG_PUSHES, pushed_log
from manipulator_dynamics import robots
from manipulator_dynamics.cli import main
from manipulator_dynamics.contact.calibration import Calibration, parse_thresholds, \
    resolve_thresholds
from manipulator_dynamics.contact.detection import observed_stretches, residual_spread, \
    spread_yaml, thresholds_from_spread
from manipulator_dynamics.contact.observer import observer_gains
from manipulator_dynamics.contact.replay import replay
from manipulator_dynamics.contact.settings import ContactSettings
from manipulator_dynamics.errors import RecordingError
from manipulator_dynamics.recordings import csvlog
from manipulator_dynamics.recordings.log import States
import numpy as np
import pytest


def test_every_push_and_nothing_else_is_an_episode(arm):
    """
    Levels learnt from the first 3 s of motion: each push an episode, on its joint, in time.

    Every episode starts within 30 ms of its push (the observer's time constant is 20 ms), on
    the pushed joint alone, and free motion raises none.
    """
    found = replay(arm, States.of(arm, *pushed_log(arm)))
    assert found.levels is not None and found.how.startswith('learnt from 3 s of free motion')
    assert found.calibration[0] == pytest.approx(0.1, abs=2e-3)        # 5 time constants
    assert len(found.episodes) == len(LOG_PUSHES), found.table(arm)
    for episode, (start, length, joint, push) in zip(found.episodes, LOG_PUSHES):
        assert start <= episode.start < start + 0.03
        assert start + length - 0.01 < episode.end < start + length + 0.2
        assert list(episode.peak) == [arm.joint_names[joint]]
        assert episode.peak[arm.joint_names[joint]] == pytest.approx(abs(push), rel=0.15)
    assert found.episodes[2].level == 2 and found.episodes[1].level in (1, 2)


def test_levels_given_or_identified_are_used_as_the_node_uses_them(arm):
    """Both levels given: used as given; an identified spread: its levels, nothing learnt."""
    log = States.of(arm, *pushed_log(arm))
    given = replay(arm, log, contact=[2.0], collision=[10.0])
    assert given.how == 'as given' and given.calibration is None
    np.testing.assert_array_equal(given.levels.contact, np.full(arm.n, 2.0))
    spread = np.full(arm.n, 0.5)
    identified = {'contact_spread': spread_yaml(arm, spread, 50.0, 'validation.csv')}
    by_spread = replay(arm, log, identified=identified)
    assert by_spread.how.startswith('learnt from the identification')
    np.testing.assert_allclose(by_spread.levels.contact,
                               thresholds_from_spread(arm, spread).contact)
    at_another_gain = replay(arm, log, identified=identified, gain=30.0)
    assert at_another_gain.how.startswith('learnt from 3 s of free motion')
    assert 'measured at observer gain 50.0' in at_another_gain.warnings[0]


def test_the_replay_takes_states_and_one_settings_value(arm):
    """``replay(model, states, ContactSettings(...))`` is ``replay(model, states, **fields)``."""
    t, q, qd, tau = pushed_log(arm, seconds=8.0, pushes=((5.0, 0.4, 1, 8.0),))
    states = States.of(arm, t, q, qd, tau)
    assert len(states) == len(t) and not states.timing['retimed']
    settings = ContactSettings(gain=40.0, contact=[3.0], collision=[9.0])
    by_value = replay(arm, states, settings)
    assert by_value.to_dict() == replay(arm, states, gain=40.0, contact=[3.0],
                                        collision=[9.0]).to_dict()
    assert by_value.episodes and by_value.how == 'as given'
    # a field replaced by keyword; the rest of the value kept
    assert replay(arm, states, settings, collision=[30.0]).levels.collision[0] == 30.0
    assert settings.replace(gain=20.0).options() == {**settings.options(), 'gain': 20.0}
    with pytest.raises(TypeError, match='stop_time: not settings of the contact watch'):
        replay(arm, states, stop_time=0.1)
    with pytest.raises(TypeError, match=r'States, not tuple: read_states\(model, log\)'):
        replay(arm, (t, q, qd, tau))
    with pytest.raises(RecordingError, match='qd has 10 samples, t'):
        States.of(arm, t, q, qd[:10], tau)


def test_a_nodes_contact_parameters_are_the_settings_value_the_replay_takes(arm):
    """
    :meth:`.ContactSettings.of_parameters` reads a commanding node's contact parameters.

    Every setting is a parameter of the node's table (the identification's file: the model
    source's); its defaults are the library's; values set on the node watch a log as the same
    settings given by keyword do; a level that is not one is refused, saying so.
    """
    from types import SimpleNamespace
    from manipulator_dynamics.contact.calibration import GROWTH
    from manipulator_dynamics.contact.settings import CALIBRATION
    from manipulator_dynamics.nodes.contact import CONTACT_PARAMS
    params = {p.name: p.default for p in CONTACT_PARAMS}
    read = set(ContactSettings.PARAMETERS.values()) - {'identified_parameters'}
    assert read | {f'thresholds_{name}' for name in GROWTH} <= set(params)
    defaults = ContactSettings.of_parameters(SimpleNamespace(**params))
    assert defaults.contact is defaults.collision is defaults.identified is None
    assert defaults.calibration == CALIBRATION and defaults.gain == params['observer_gain']
    assert defaults.friction is params['observer_friction']
    params.update(observer_gain=[40.0], contact_thresholds='3', collision_thresholds='[9]',
                  identified_parameters='')
    settings = ContactSettings.of_parameters(SimpleNamespace(**params))
    assert settings.given_levels == ([3.0], [9.0])
    t, q, qd, tau = pushed_log(arm, seconds=8.0, pushes=((5.0, 0.4, 1, 8.0),))
    states = States.of(arm, t, q, qd, tau)
    watched = replay(arm, states, settings)
    assert watched.episodes and watched.to_dict() == replay(
        arm, states, gain=40.0, contact=[3.0], collision=[9.0]).to_dict()
    with pytest.raises(ValueError, match="must be 'auto', a number or a list"):
        ContactSettings.of_parameters(SimpleNamespace(**dict(params, contact_thresholds='x')))


def test_the_policy_names_where_each_level_comes_from(arm):
    gains = observer_gains(arm, 50.0)
    levels, how, warning = resolve_thresholds(arm, None, [9.0], gains)
    assert levels is None and how == 'learnt from free motion' and warning is None
    with pytest.raises(ValueError, match="joint 'joint2'.* must be above its contact"):
        resolve_thresholds(arm, [1.0] * arm.n, [2.0, 0.5] + [2.0] * (arm.n - 2), gains)
    assert parse_thresholds('[1, 2.5]') == [1.0, 2.5] and parse_thresholds(' auto') is None
    with pytest.raises(ValueError, match='finite numbers > 0'):
        parse_thresholds('-3')


def test_a_log_too_short_to_learn_from_says_so(arm):
    found = replay(arm, States.of(arm, *pushed_log(arm, seconds=2.0, pushes=())))
    assert found.levels is None and found.episodes == []
    assert 'a calibration needs 3 s of free motion' in found.how
    assert 'the log has 1.9 s' in found.how


def test_a_gap_past_the_ride_bound_restarts_the_observer_not_its_levels(arm):
    """A 0.5 s gap: one restart, the levels kept, every push still found and nothing else."""
    found = replay(arm, States.of(arm, *pushed_log(arm, gap=(11.0, 11.5))))
    assert found.restarts == 1 and len(found.episodes) == len(LOG_PUSHES), found.table(arm)


def test_the_spread_and_the_replay_cut_a_log_where_the_node_starts_again(arm, monkeypatch):
    """
    A 50 ms gap is ridden through, a 500 ms one is not: the spread measures what the node sees.

    ``residual_spread`` once cut at ten sample periods (10 ms here): after each short gap it
    left out a settling it does not need, and at a log's restart it never saw the states the
    node sees.  Both now cut by :func:`ride_bound` (138 ms at 50/s).
    """
    t = np.r_[np.arange(0.0, 1.0, 1e-3), np.arange(1.05, 2.0, 1e-3), np.arange(2.5, 3.0, 1e-3)]
    parts, bound = observed_stretches(t, observer_gains(arm, 50.0))
    assert bound == pytest.approx(np.log(1000) / 50)
    assert [len(p) for p in parts] == [1950, 500]
    from manipulator_dynamics.contact import detection
    observed = []

    def spy(model, t, *args, **kwargs):
        observed.append((t[0], t[-1]))
        return observe(model, t, *args, **kwargs)
    observe = detection.observe
    monkeypatch.setattr(detection, 'observe', spy)
    t, q, qd, tau = pushed_log(arm, seconds=12.0, pushes=(), gap=(6.0, 6.05))
    assert replay(arm, States.of(arm, t, q, qd, tau)).restarts == 0
    spread = residual_spread(arm, [{'t': t, 'q': q, 'qd': qd, 'tau': tau},
                                   {'t': t[t < 3.0], 'q': q[t < 3.0], 'qd': qd[t < 3.0],
                                    'tau': tau[t < 3.0]}])
    assert len(observed) == 2 and observed[0][1] - observed[0][0] > 11.9     # each log whole
    assert np.all(spread.rest > 0)


def test_the_calibration_keeps_every_other_state_past_its_cap(arm, monkeypatch):
    from manipulator_dynamics.contact import calibration
    monkeypatch.setattr(calibration, 'CALIBRATION_KEPT', 100)
    learner = Calibration(arm, 1.0)
    q = np.zeros(arm.n)
    for k in range(1200):
        learner.add(k * 1e-3, k * 1e-3, np.full(arm.n, k * 1e-3), q + 0.1, q + 1.0)
    assert learner.done and learner.stride == 16 and len(learner.stamps) < 100
    assert all(len(x) == len(learner.stamps) for x in learner.kept.values())
    spread, moments = learner.result()
    assert spread.rest.max() <= 1.2 and not moments


def test_the_command_line_reports_each_episode(arm, tmp_path, capsys):
    """``manipulator-dynamics contact LOG`` on a CSV with velocities: the episodes, by name."""
    t, q, qd, tau = pushed_log(arm)
    path = tmp_path / 'pushed.csv'
    csvlog.write(path, t, csvlog.joint_columns(arm.joint_names, position=q, velocity=qd,
                                               effort=tau))
    assert main(['contact', robots.path('demo_arm'), str(path), '--format', 'json']) == 0
    report = json.loads(capsys.readouterr().out)
    assert [e['start'] for e in report['episodes']] == pytest.approx(
        [p[0] for p in LOG_PUSHES], abs=0.03)
    assert main(['contact', robots.path('demo_arm'), str(path)]) == 0
    text = capsys.readouterr().out
    assert 'contact levels learnt from 3 s of free motion' in text
    assert '1 contact(s), 2 collision(s)' in text or '0 contact(s), 3 collision(s)' in text
    assert main(['contact', robots.path('demo_arm'), str(path), '--contact-thresholds',
                 'lots']) == 2
    assert "--contact-thresholds: must be 'auto', a number" in capsys.readouterr().err


def test_the_levels_written_are_read_back_to_the_last_digit(arm, tmp_path, capsys):
    """``contact --thresholds-out``: a parameters file whose levels parse back exactly."""
    import yaml
    t, q, qd, tau = pushed_log(arm)
    path, out = tmp_path / 'pushed.csv', tmp_path / 'levels.yaml'
    csvlog.write(path, t, csvlog.joint_columns(arm.joint_names, position=q, velocity=qd,
                                               effort=tau))
    assert main(['contact', robots.path('demo_arm'), str(path), '--thresholds-out',
                 str(out), '--format', 'json']) == 0
    levels = json.loads(capsys.readouterr().out)['levels']
    saved = yaml.safe_load(out.read_text())['/**']['ros__parameters']
    assert parse_thresholds(saved['contact_thresholds']) == levels['contact']
    assert parse_thresholds(saved['collision_thresholds']) == levels['collision']
    assert saved['observer_gain'] == [50.0] * arm.n
    assert main(['contact', robots.path('demo_arm'), str(path), '--calibration', '60',
                 '--thresholds-out', str(out)]) == 2
    assert 'no levels to write (a calibration needs 60 s' in capsys.readouterr().err


def test_levels_a_calibration_may_not_use_are_learnt_again_from_what_follows(arm):
    """
    The node's policy over a log: half of every 120 ms dropped for the first 4 s, then whole.

    The first calibration's gaps hid half its time: refused, said in the warnings, and learnt
    again from the states after it; every push is still found, and nothing else.
    """
    t, q, qd, tau = pushed_log(arm)
    keep = ~((t < 4.0) & (t % 0.12 >= 0.06))
    found = replay(arm, States.of(arm, t[keep], q[keep], qd[keep], tau[keep]))
    refused = [w for w in found.warnings if 'not used' in w]
    assert len(refused) == 1 and 'gaps in the joint states hid' in refused[0], found.warnings
    assert found.calibration[0] > 3.0, found.calibration
    assert len(found.episodes) == len(LOG_PUSHES), found.table(arm)
