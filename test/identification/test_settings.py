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

"""One settings object makes a recording's equations; a recording is conditioned into one value."""

from helpers import exciting
import manipulator_dynamics as md
from manipulator_dynamics._parallel import blas_on_one_thread
from manipulator_dynamics.errors import IdentificationError
from manipulator_dynamics.identification import estimate, fit
from manipulator_dynamics.identification.logs import condition, Conditioned
from manipulator_dynamics.identification.settings import Settings
import numpy as np
import pytest


@pytest.fixture(scope='module')
def log(frictional_arm):
    """Return 12 s of a noisy 200 Hz Fourier motion of the frictional arm: ``(t, q, tau)``."""
    t, q, qd, qdd = exciting(frictional_arm, seconds=12.0, seed=3, rate=200.0)
    tau = md.inverse_dynamics(frictional_arm, q, qd, qdd, friction=True)
    rng = np.random.default_rng(4)
    return t, q + rng.normal(size=q.shape) * 1e-6, tau + rng.normal(size=tau.shape) * 0.01


def test_settings_are_given_by_keyword_or_as_one_object_alike():
    """``Settings.given``: the keywords a fit takes, on their own or over settings given."""
    made = Settings.given(friction='offset', cutoff=3.0)
    assert (made.law, made.cutoff, made.topic, made.retime) == ('offset', 3.0,
                                                                '/joint_states', True)
    over = Settings.given(made, still=0.01)
    assert (over.law, over.cutoff, over.still) == ('offset', 3.0, 0.01) and made.still is None
    assert Settings.given(made) is made
    assert made.options() == {'friction': 'offset', 'armature': None, 'base': None,
                              'cutoff': 3.0, 'topic': '/joint_states', 'retime': True,
                              'still': None}


def test_an_option_that_is_no_setting_and_an_unknown_law_are_refused_by_name():
    with pytest.raises(TypeError, match='prior_weight: not settings of the equations'):
        Settings.given(prior_weight=1.0)
    with pytest.raises(IdentificationError, match='sticky'):
        Settings(friction='sticky')


def test_a_fit_of_settings_is_the_fit_of_their_keywords_to_the_bit(frictional_arm, log):
    kept = {'friction': 'offset', 'cutoff': 4.0, 'still': 0.02}
    by_keyword = fit.fit(frictional_arm, log, **kept)
    by_settings = fit.fit(frictional_arm, log, Settings(**kept))
    np.testing.assert_array_equal(by_keyword.values, by_settings.values)
    np.testing.assert_array_equal(by_keyword.std, by_settings.std)
    assert by_keyword.processing['friction'] == by_settings.processing['friction'] == 'offset'
    # the keywords beside the settings take their place
    changed = fit.fit(frictional_arm, log, Settings(**kept), cutoff=5.0)
    assert changed.processing['cutoff_hz'] == 5.0
    with pytest.raises(TypeError, match='validate: not settings'):
        fit.fit(frictional_arm, log, validate=log)


def test_equations_solved_twice_are_solved_as_if_made_twice(frictional_arm, log):
    """``solve`` keeps its own processing: equations made once serve every threshold."""
    found = fit.fitted(frictional_arm, log, Settings(cutoff=4.0))
    before = dict(found.processing)
    first = fit.solve(found, prior_threshold=0.0)
    again = fit.solve(found, prior_threshold=1e3)          # every direction at the prior
    assert found.processing == before and 'prior' not in found.processing
    made_again = fit.solve(fit.fitted(frictional_arm, log, Settings(cutoff=4.0)),
                           prior_threshold=1e3)
    np.testing.assert_array_equal(again.values, made_again.values)
    np.testing.assert_array_equal(again.std, made_again.std)
    assert again.processing['prior'] == made_again.processing['prior']
    assert first.processing['prior']['directions'] == 0 < again.processing['prior']['directions']


@pytest.fixture(scope='module')
def weak(frictional_arm):
    """Return a log that barely moves four joints: some directions are weak, the folds choose."""
    t, q, qd, qdd = exciting(frictional_arm, seconds=20.0, seed=1, scale=1.0, rate=200.0)
    amplitude = np.array([0.25, 0.25, 3e-4, 0.25, 3e-4, 3e-4, 3e-4])
    q, qd, qdd = q * amplitude, qd * amplitude, qdd * amplitude
    tau = md.inverse_dynamics(frictional_arm, q, qd, qdd, friction=True)
    rng = np.random.default_rng(51)
    tau = tau + rng.normal(size=tau.shape) * (0.01 * np.abs(tau).max(axis=0) + 0.02)
    return t, q + rng.normal(size=q.shape) * 1e-5, tau


def test_identify_makes_its_equations_once_where_the_folds_choose_a_threshold(
        frictional_arm, weak, monkeypatch):
    """The threshold chosen is a second solve of the same equations, not a second fit."""
    made = []
    real = fit.fitted

    def counted(*args, **kwargs):
        made.append(args[1])
        return real(*args, **kwargs)
    monkeypatch.setattr(estimate, 'fitted', counted)
    found = md.identify(frictional_arm, weak, cutoff=2.5)
    chosen = found.processing['prior_threshold_selection']
    assert chosen['chosen'] > 0 and found.processing['prior']['directions'] > 0
    assert len(made) == 1                           # the whole log's equations: once
    # identify's BLAS is on one thread (_parallel.blas_on_one_thread); OpenBLAS's rounding
    # follows its threads, so the fit it is compared with runs on one too
    direct = blas_on_one_thread(fit.fit)(frictional_arm, weak, cutoff=2.5,
                                         prior_threshold=chosen['chosen'])
    np.testing.assert_array_equal(found.values, direct.values)
    np.testing.assert_array_equal(found.std, direct.std)
    assert found.processing['prior'] == direct.processing['prior']


def test_a_log_file_is_read_and_put_on_the_robots_clock_once(frictional_arm, log, tmp_path,
                                                             monkeypatch):
    """``identify(model, 'log.csv')``: the cutoff's choice, the prior's and the fit, one read."""
    from helpers import write_log_csv
    from manipulator_dynamics.recordings import log as recording, timing
    t, q, tau = log
    qd = np.gradient(q, t, axis=0)
    path = tmp_path / 'log.csv'
    write_log_csv(path, frictional_arm.joint_names, t + 0.0004 * np.sin(t), q, tau, qd)
    reads, retimes = [], []
    read_file, retime = recording.read_file, timing.retime
    monkeypatch.setattr(recording, 'read_file', lambda *a: reads.append(a) or read_file(*a))
    monkeypatch.setattr(timing, 'retime', lambda *a: retimes.append(a) or retime(*a))
    found = md.identify(frictional_arm, str(path), physically_consistent=True,
                        prior_weight='auto')
    assert len(reads) == len(retimes) == 1
    assert 'cutoff_selection' in found.processing and 'prior_weight_selection' in found.processing
    assert found.processing['source'] == str(path) and 'timing' in found.processing
    # the same as the file's read by the caller and given as a Log
    monkeypatch.undo()
    given = md.identify(frictional_arm, md.read_once(frictional_arm, str(path)),
                        physically_consistent=True, prior_weight='auto')
    np.testing.assert_array_equal(found.values, given.values)
    np.testing.assert_array_equal(found.standard, given.standard)


def test_a_recording_is_conditioned_into_one_value_with_what_was_done(frictional_arm, log):
    found = condition(frictional_arm, log, Settings(cutoff=4.0))
    assert isinstance(found, Conditioned)
    assert found.processing['cutoff_hz'] == 4.0 and found.processing['retime']
    assert found.q.shape == found.qd.shape == found.qdd.shape == (len(found.tau), 7)
    t, q, qd, qdd, tau = found.scored()
    rows = found.parallel.rows
    np.testing.assert_array_equal(q, rows(found.q))
    np.testing.assert_array_equal(tau, rows(found.tau))
    assert np.all(np.diff(t) > 0) and log[0][0] < t[0] and t[-1] < log[0][-1]  # ends trimmed
    # what a validation scores of it: the same rows
    estimate = md.identify(frictional_arm, log, cutoff=4.0)
    states = estimate.states(log)
    for mine, theirs in zip((t, q, qd, qdd, tau), states):
        np.testing.assert_array_equal(mine, theirs)


def test_arrays_are_conditioned_as_they_are(frictional_arm, log):
    t, q, qd, qdd = exciting(frictional_arm, seconds=1.0, rate=100.0)
    tau = md.inverse_dynamics(frictional_arm, q, qd, qdd, friction=True)
    found = condition(frictional_arm, (q, qd, qdd, tau), Settings())
    assert found.parallel is None and found.processing['source'] == 'arrays'
    scored = found.scored()
    np.testing.assert_array_equal(scored[0], np.arange(len(q), dtype=float))
    for given, kept in zip((q, qd, qdd, tau), scored[1:]):
        np.testing.assert_array_equal(given, kept)
    with pytest.raises(IdentificationError, match='same shape'):
        condition(frictional_arm, (q, qd, qdd, tau[:-1]), Settings())
