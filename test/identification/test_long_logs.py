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
What makes long logs affordable gives the results of the plain way, to rounding.

A log read once (:class:`.recordings.log.Log`), folds solved from their pieces' factors (TSQR), the
filters' columns on threads, predictions made by chunks: each against the computation it
replaces.
"""

import warnings

from helpers import coupled, measured
import manipulator_dynamics as md
from manipulator_dynamics import _parallel, robots
from manipulator_dynamics.cli import main
from manipulator_dynamics.errors import IdentificationError
from manipulator_dynamics.identification.decimation import Decimated
from manipulator_dynamics.identification.fit import equations, factored, fit, holding, \
    solve, solve_values
from manipulator_dynamics.identification.least_squares import joint_factors, JointFactors
from manipulator_dynamics.identification.pieces import fold_ranges
from manipulator_dynamics.identification.selection import held_out_error
from manipulator_dynamics.identification.validation import ExtrapolationWarning
from manipulator_dynamics.recordings import csvlog
from manipulator_dynamics.recordings.formats import read_csv
from manipulator_dynamics.recordings.log import Log, read_once
from manipulator_dynamics.rigid.regressor import regressor
import numpy as np
import pytest
import scipy.signal


@pytest.fixture(scope='module')
def log(frictional_arm):
    """Return a 1 kHz log of 30 s with torque and position noise: ``(t, q, tau)``."""
    t, _, _, _, tau, q = measured(frictional_arm, seconds=30.0, rate=1000.0, fundamental=0.1)
    return t, q, tau


def pieces_of(log, count):
    """Return the log cut in ``count`` consecutive pieces (views)."""
    return [tuple(x[r] for x in log) for r in fold_ranges([log], count)[0]]


def test_folds_solved_from_their_pieces_factors_equal_the_stacked_rows(frictional_arm, log):
    """
    Two pieces' factors stacked (TSQR) solve as their equations stacked: values to 1e-9.

    The pieces are fitted as two logs, each filtered alone, by :func:`fit` and by
    :func:`solve_values` of their :func:`factored` equations: the same values, noise and
    condition number; the factors of the rows stacked equal the stacked factors.
    """
    a, b = pieces_of(log, 2)
    whole = fit(frictional_arm, [a, b], cutoff=2.0)
    parts = [factored(frictional_arm, [p], cutoff=2.0) for p in (a, b)]
    alone = solve_values(parts)
    np.testing.assert_allclose(alone.values, whole.values, rtol=1e-9,
                               atol=1e-9 * np.abs(whole.values).max())
    np.testing.assert_allclose(alone.sigma, whole.sigma, rtol=1e-9)
    assert alone.condition == pytest.approx(whole.condition, rel=1e-9)
    assert alone.samples == whole.samples
    assert np.isnan(alone.std).all()                       # not computed, and not pretended
    # the stacked factors are those of the stacked rows: R^T R = W^T W and R^T z = W^T tau
    # (R itself is not unique where a joint's rows leave columns out: its descendants' alone)
    found = [equations(frictional_arm, [p], cutoff=2.0) for p in (a, b)]
    W, tau = np.concatenate([f.W for f in found]), np.concatenate([f.tau for f in found])
    stacked = JointFactors.stacked([joint_factors(f.W, f.tau) for f in found])
    for j in range(frictional_arm.n):
        gram = W[:, j].T @ W[:, j]
        np.testing.assert_allclose(stacked.R[j].T @ stacked.R[j], gram, rtol=0,
                                   atol=1e-10 * np.abs(gram).max())
        np.testing.assert_allclose(stacked.R[j].T @ stacked.z[j], W[:, j].T @ tau[:, j],
                                   rtol=0, atol=1e-10 * np.abs(gram).max())
    # and what the factors hold of the torques is all of them: |z|^2 + outside = |tau|^2
    np.testing.assert_allclose((stacked.z ** 2).sum(axis=1) + stacked.outside,
                               (tau ** 2).sum(axis=0), rtol=1e-9)


@pytest.mark.parametrize('still', [None, 0.05])
def test_factors_made_chunk_by_chunk_are_those_of_the_whole_regressor(frictional_arm, log,
                                                                      monkeypatch, still):
    """
    :func:`factored` never holds the regressor: its chunks' factors stacked are the whole's.

    The parallel filter's chunks made small, and :data:`.fit.GATHERED` too, so that the rows
    are decomposed a few chunks at a time and their factors stacked on stacked ones; with and
    without equations left out (a joint slower than ``still``): ``R^T R = W^T W``, ``R^T z =
    W^T tau`` and ``|z|^2 + outside = |tau|^2`` per joint, and the same counts of rows.
    """
    from manipulator_dynamics.identification import fit as fitting, logs
    monkeypatch.setattr(logs, 'PARALLEL_CHUNK', 50)
    monkeypatch.setattr(fitting, 'GATHERED', 20)
    chunks = []
    monkeypatch.setattr(fitting, 'joint_factors',
                        lambda W, tau: chunks.append(len(W)) or joint_factors(W, tau))
    found = equations(frictional_arm, [log], cutoff=2.0, still=still)
    chunked = factored(frictional_arm, [log], cutoff=2.0, still=still)
    assert len(chunks) > 5 and sum(chunks) == len(found.tau) and max(chunks) < 40
    assert (still is None) == (not found.left_out.any())
    np.testing.assert_array_equal(chunked.rows, (~found.left_out).sum(axis=0))
    assert chunked.samples == len(found.tau)
    R, z = chunked.factors.R, chunked.factors.z
    for j in range(frictional_arm.n):
        gram = found.W[:, j].T @ found.W[:, j]
        np.testing.assert_allclose(R[j].T @ R[j], gram, rtol=0, atol=1e-10 * np.abs(gram).max())
        np.testing.assert_allclose(R[j].T @ z[j], found.W[:, j].T @ found.tau[:, j], rtol=0,
                                   atol=1e-10 * np.abs(gram).max())
    np.testing.assert_allclose((z ** 2).sum(axis=1) + chunked.factors.outside,
                               (found.tau ** 2).sum(axis=0), rtol=1e-9)


def test_a_regressors_zero_columns_are_not_filtered_and_stay_zero_to_the_bit(
        frictional_arm, log, monkeypatch):
    """
    The parallel filter skips the columns zero throughout a chunk: the rows filtering all give.

    Most of the demo arm's regressor columns are zero for most joints (its subtree's
    parameters and its own friction alone); the equations are those of every column filtered,
    bit for bit.
    """
    from manipulator_dynamics.identification import filtering, logs
    skipping = equations(frictional_arm, [log], cutoff=2.0)
    flat = skipping.W.reshape(len(skipping.W), -1)
    assert (~np.any(flat != 0, axis=0)).sum() > flat.shape[1] // 4     # many zero columns
    monkeypatch.setattr(logs, '_filtered_columns', lambda sos, x, rows: filtering.filtered(
        sos, x, rows).reshape((len(rows),) + x.shape[1:]))
    every = equations(frictional_arm, [log], cutoff=2.0)
    np.testing.assert_array_equal(skipping.W, every.W)
    np.testing.assert_array_equal(skipping.tau, every.tau)


def test_the_cutoffs_held_out_error_from_factors_equals_fold_by_fold_fits(frictional_arm, log):
    """
    :func:`held_out_error` (each piece decomposed once) equals fitting every fold again.

    Three pieces, each fold fitted on the other two by :func:`fit` and scored by
    :meth:`.decimation.Decimated.error`: the pooled error to 1e-9.
    """
    ladder = Decimated(frictional_arm, pieces_of(log, 3), [1.0, 2.0])
    folds = [[0], [1], [2]]
    for cutoff in (1.0, 2.0):
        wrong = total = 0.0
        for held in folds:
            train = [(s.t, s.q, s.tau) for j in range(3) if j not in held
                     for s in ladder.at(j, cutoff)]
            estimate = fit(frictional_arm, train, cutoff=cutoff)
            with warnings.catch_warnings():
                warnings.simplefilter('ignore', ExtrapolationWarning)
                missed, energy = ladder.error(estimate, held[0], cutoff)
            wrong, total = wrong + missed, total + energy
        assert held_out_error(frictional_arm, ladder, folds, cutoff) == pytest.approx(
            100.0 * wrong / total, rel=1e-9)
    # a candidate judged is let go of, and cut again the same if asked again
    kept = ladder.at(0, 1.0)
    ladder.forget(1.0)
    again = ladder.at(0, 1.0)
    assert again is not kept and len(again) == len(kept)
    for a, b in zip(again, kept):
        np.testing.assert_array_equal(a.q, b.q)
        np.testing.assert_array_equal(a.tau, b.tau)


@pytest.mark.parametrize('stamps', ['on a grid', 'jittering'])
def test_the_folds_choices_make_what_they_share_once(frictional_arm, log, stamps, monkeypatch):
    """
    Cross-validation's cutoffs, chosen in every fold, judge each shared piece once: the same.

    Three folds choose on folds of their two training thirds: every ninth of the log is a
    piece of two choices, and every third's bandwidth is found for two; every third is two
    folds' training log and the third's held-out piece, each cut down to the cutoff's rate.
    Made once (the folds' pieces are :class:`.pieces.Piece`, which keep what is made of them),
    the folds' estimates and choices are those made apart, to the bit, with half the pieces'
    factors and bandwidths, and a third of the thirds' cuts where the folds chose one cutoff.
    So too where the stamps jitter (a real log's), each stretch then interpolated onto a grid
    anew at every call: a third's cut is kept on the log it comes from, not by the arrays
    made for it, which are not held.
    """
    from manipulator_dynamics.identification import logs, selection
    from manipulator_dynamics.identification.pieces import Piece
    if stamps == 'jittering':               # 3 % of a step: interpolated (above 1 %)
        t, q, tau = log
        jitter = 0.03 * np.diff(t).mean() * np.random.default_rng(5).standard_normal(len(t))
        log = (t + jitter, q, tau)
    made = {}

    def counted(module, name):
        function = getattr(module, name)

        def count(*args, **options):
            made[name] = made.get(name, 0) + (len(args[0]) if name == 'motion_bandwidth' else 1)
            return function(*args, **options)
        monkeypatch.setattr(module, name, count)
    counted(selection, 'piece_factors')
    counted(selection, 'motion_bandwidth')
    counted(logs, 'reduced')
    runs = []
    for share in (True, False):
        if not share:                       # every call makes what it needs
            monkeypatch.setattr(Piece, 'made', lambda self, key, make, held=(): make())
        made.clear()
        runs.append((md.cross_validate(frictional_arm, log, folds=3), dict(made)))
    (shared, few), (apart, many) = runs
    assert all(e.processing['resampled'] == (stamps == 'jittering') for e in apart.estimates)
    assert few['motion_bandwidth'] == 3 and many['motion_bandwidth'] == 6     # per third
    if stamps == 'on a grid':
        judged = sum(len(e.processing['cutoff_selection'][k]) for e in apart.estimates
                     for k in ('held_out_error', 'refused'))      # refused: too few rows
        assert many['piece_factors'] == 6 * judged and few['piece_factors'] == 3 * judged
        chosen = {e.processing['cutoff_hz'] for e in apart.estimates}
        assert len(chosen) == 1             # one cutoff: each third cut down once, not thrice
        assert many['reduced'] == 9 and few['reduced'] == 3     # positions and efforts, one pass
    # jittering, each third's median interval (its period) is its own, to a few parts in
    # 10^4: so are its bandwidth and the candidates, and the folds judge pieces apart
    for a, b in zip(shared.estimates, apart.estimates):
        assert a.processing['cutoff_selection'] == b.processing['cutoff_selection']
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_array_equal(a.std, b.std)
        assert a.validation.error == b.validation.error


def test_a_stretch_goes_on_its_grid_as_np_interp_puts_it(monkeypatch):
    """
    :func:`.logs._on_grid`, every column at once by chunks on threads: ``np.interp``'s values.

    To the bit, for jittering stamps, grids that begin before the first stamp and end after
    the last, points on stamps, chunk seams (a chunk of 7 points), arrays in rows, columns or
    strided, in memory and spilled, and pieces of a spilled log.
    """
    from manipulator_dynamics.identification import logs
    from manipulator_dynamics.recordings import spill
    monkeypatch.setattr(logs, 'ON_GRID_CHUNK', 7)
    rng = np.random.default_rng(3)
    for N in (1, 2, 5, 300):
        t = np.cumsum(1e-3 * (1 + 0.03 * rng.standard_normal(N)))
        x = rng.standard_normal((N, 4))
        grids = [spill.arange(t[0], t[-1] + 5e-4, 1e-3),
                 np.sort(np.concatenate([[t[0] - 1], t[:3], np.linspace(t[0], t[-1], 2 * N),
                                         [t[-1], t[-1] + 1]]))]
        filed = spill.columns(N, 4, spill=True)
        filed[:] = x
        for grid in grids:
            want = np.column_stack([np.interp(grid, t, x[:, j]) for j in range(4)])
            for given in (x, np.asfortranarray(x), np.repeat(x, 2, axis=1)[:, ::2], filed):
                got = logs._on_grid(grid, t, given)
                np.testing.assert_array_equal(got, want)
                assert spill.is_spilled(got) == (given is filed)
            if N > 3:
                piece = logs._on_grid(grid[2:], t[2:], filed[2:])
                np.testing.assert_array_equal(piece, np.column_stack(
                    [np.interp(grid[2:], t[2:], x[2:, j]) for j in range(4)]))
    assert logs._on_grid(np.zeros(0), t, x).shape == (0, 4)


def test_a_stretch_put_on_a_grid_is_known_by_its_log(frictional_arm, log, monkeypatch):
    """
    Where the stamps jitter, a stretch is interpolated anew at every call: its cut is kept.

    A :class:`.pieces.Piece` keeps a stretch cut down to a cutoff's rate by its span in the
    log, not by the arrays interpolated for it: a second fit of the same piece cuts nothing
    again, gives the same estimate to the bit, and what is kept is known by numbers, never by
    an array made for a call (an hour's stretch: 100 MB and more); a plain tuple keeps
    nothing.
    """
    from manipulator_dynamics.identification import logs
    from manipulator_dynamics.identification.pieces import Piece
    t, q, tau = log
    jitter = 0.03 * np.diff(t).mean() * np.random.default_rng(5).standard_normal(len(t))
    jittering = Piece((t + jitter, q, tau))
    made = []
    reduced = logs.reduced
    monkeypatch.setattr(logs, 'reduced', lambda *a, **k: made.append(1) or reduced(*a, **k))
    first = fit(frictional_arm, jittering, cutoff=2.0)
    assert first.processing['resampled'] and len(made) == 1      # positions and efforts
    again = fit(frictional_arm, jittering, cutoff=2.0)
    assert len(made) == 1
    kept = [x for key in jittering._kept for x in key]
    assert kept and all(isinstance(x, (str, int, float, tuple)) for x in kept)
    np.testing.assert_array_equal(first.values, again.values)
    np.testing.assert_array_equal(first.std, again.std)
    fit(frictional_arm, tuple(jittering), cutoff=2.0)
    assert len(made) == 2                           # a tuple: cut again, nothing kept


def test_a_logs_stamps_are_checked_once_for_a_piece(frictional_arm, log, monkeypatch):
    """
    A long log's stamps are checked once for each cutoff where it is a :class:`.pieces.Piece`.

    Every fit, choice and validation of a piece cuts it at its gaps (:func:`.logs.stretches`),
    each a pass over its samples to find repeats; a third of a log is two folds' training log
    and the third fold's held-out piece.  What a second call returns equals the first's and
    what is made of a plain tuple; a report changed by its caller changes no other's; and
    what is kept holds the samples kept, not copies of them.  A log in memory is checked at
    every call: what is kept holds its arrays, and a stretch's rows made for one call would
    be held to the end.
    """
    from manipulator_dynamics.identification import logs
    from manipulator_dynamics.identification.pieces import Piece
    from manipulator_dynamics.recordings import spill
    t, q, tau = log
    again = np.r_[np.arange(len(t)), [100, 100, 2000]]
    again.sort()
    repeated = [spill.stamps(len(again), True), spill.columns(len(again), q.shape[1], True),
                spill.columns(len(again), q.shape[1], True)]
    for x, y in zip(repeated, (t, q, tau)):
        x[:] = y[again]                                 # a logger's repeats: three rows twice
    assert all(spill.is_spilled(x) for x in repeated)
    repeated = tuple(repeated)
    checked = []
    check = logs.check_stamps
    monkeypatch.setattr(logs, 'check_stamps', lambda *a: checked.append(1) or check(*a))
    apart = logs.stretches(frictional_arm, [repeated], 2.0)
    assert len(checked) == 1 and apart[1][0]['repeated'] == 3
    logs.stretches(frictional_arm, [repeated], 2.0)
    assert len(checked) == 2                            # a tuple keeps nothing
    piece = Piece(repeated)
    first = logs.stretches(frictional_arm, [piece], 2.0)
    first[1][0]['gaps'].append([0.0, 1.0])
    second = logs.stretches(frictional_arm, [piece], 2.0)
    assert len(checked) == 3
    logs.stretches(frictional_arm, [piece], 4.0)                  # another cutoff: other gaps
    assert len(checked) == 4
    made = [x for _, kept in piece._kept.values() for x in kept if isinstance(x, np.ndarray)]
    kept = len(piece._kept)
    in_memory = Piece(tuple(np.array(x) for x in repeated))
    logs.stretches(frictional_arm, [in_memory], 2.0)
    logs.stretches(frictional_arm, [in_memory], 2.0)
    assert len(checked) == 6 and not in_memory._kept and len(piece._kept) == kept == 2
    assert second[1] == apart[1] and first[2:] == second[2:] == apart[2:]
    for one, other in zip(second[0], apart[0]):
        for a, b in zip(one, other):
            np.testing.assert_array_equal(a, b)
    assert made and all(x.dtype == bool or x.dtype.kind == 'i' or any(
        np.shares_memory(x, a) for a in repeated) for x in made)


def test_a_piece_cuts_into_the_same_pieces_and_sends_nothing_it_made():
    """
    :meth:`.pieces.Piece.pieces` gives the same Pieces at every call, views of its arrays.

    Cut as :func:`.pieces.fold_ranges` cuts (3.0 folds refused, not taken for 3); a Piece
    pickled (to a worker) is its arrays alone, what it made left behind.
    """
    import pickle
    from manipulator_dynamics.identification.pieces import fold_ranges, Piece
    t = np.arange(10.0)
    piece = Piece((t, np.ones((10, 2)), np.zeros((10, 2))))
    thirds = piece.pieces(3)
    assert piece.pieces(3) is thirds and [len(p[0]) for p in thirds] == [4, 3, 3]
    assert all(isinstance(p, Piece) and np.shares_memory(p[0], t) for p in thirds)
    assert [p[0][0] for p in thirds] == [t[r][0] for r in fold_ranges([piece], 3)[0]]
    with pytest.raises(IdentificationError, match='folds must be an integer'):
        piece.pieces(3.0)
    assert piece.made('k', lambda: 1) == 1 and piece.made('k', lambda: 2) == 1
    sent = pickle.loads(pickle.dumps(piece))
    assert isinstance(sent, Piece) and not sent._kept and sent.made('k', lambda: 2) == 2
    np.testing.assert_array_equal(sent[0], t)


def test_predictions_are_the_base_regressor_times_the_values(frictional_arm, log):
    """:meth:`Estimate.predictions`, by the inverse dynamics of a model, equals ``W_B K``."""
    t, q, tau = log
    estimate = fit(frictional_arm, (t, q, tau), cutoff=2.0)
    _, qf, qd, qdd, _, _ = estimate.states((t, q, tau))
    W = estimate.base.base_regressor(regressor(frictional_arm, qf, qd, qdd, armature=False,
                                               friction=estimate.base.friction))
    got = estimate.predictions(qf, qd, qdd, {'a': estimate.values, 'b': estimate.base.values})
    np.testing.assert_allclose(got['a'], W @ estimate.values, rtol=0,
                               atol=1e-12 * np.abs(tau).max())
    np.testing.assert_allclose(got['b'], W @ estimate.base.values, rtol=0,
                               atol=1e-12 * np.abs(tau).max())
    none = estimate.predictions(qf[:0], qd[:0], qdd[:0], {'a': estimate.values})
    assert none['a'].shape == (0, frictional_arm.n)


@pytest.mark.parametrize('kind', ['plain', 'offsets and smooth laws', 'coupled wrist'])
def test_a_model_holding_base_parameters_predicts_what_they_do(frictional_arm, kind):
    """
    The inverse dynamics of :func:`.fit.holding` are ``W_B K``, for any ``K`` and base.

    Every friction layout, with and without rotor inertia; on the arm with offsets and smooth
    Coulomb laws, and on a coupled wrist whose motors have friction and inertia of their own
    (parameters the model has and the base parameters may not name: left out, not kept).
    """
    rng = np.random.default_rng(7)
    model = {'plain': frictional_arm,
             'offsets and smooth laws': frictional_arm.with_joint_dynamics({
                 j: {'offset': float(rng.uniform(-0.3, 0.3)),
                     'coulomb_velocity': float(rng.uniform(0.03, 0.15))}
                 for j in frictional_arm.joint_names}),
             'coupled wrist': coupled(frictional_arm)}[kind]
    q, qd, qdd = (rng.uniform(-1.5, 1.5, (40, model.n)) for _ in range(3))
    for friction in (False, True, 'offset'):
        for armature in (False, True):
            base = md.base_parameters(model, friction=friction, armature=armature)
            K = base.values * rng.uniform(0.5, 1.5, base.count) + rng.normal(0, 0.05, base.count)
            W = base.base_regressor(regressor(model, q, qd, qdd, armature=base.armature,
                                              friction=base.friction))
            got = md.inverse_dynamics(holding(model, base, K), q, qd, qdd,
                                      armature=bool(base.armature),
                                      friction=bool(base.friction))
            np.testing.assert_allclose(got, W @ K, rtol=0, atol=1e-11 * np.abs(W @ K).max(),
                                       err_msg=f'friction {friction}, armature {armature}')


def test_columns_on_threads_give_the_filter_bit_for_bit():
    """:func:`.filtering.filtered`'s rows and columns, on threads: scipy's filter's, identical."""
    from manipulator_dynamics.identification.filtering import filtered
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40000, 6, 5))
    sos = scipy.signal.butter(4, 0.02, output='sos')
    whole = scipy.signal.sosfiltfilt(sos, x, axis=0).reshape(len(x), -1)
    rows, columns = np.arange(100, len(x) - 100, 7), np.array([0, 3, 4, 17, 29])
    previous = _parallel.set_threads(2)
    try:
        got = filtered(sos, x, rows)
        some = filtered(sos, np.asfortranarray(x.reshape(len(x), -1)), rows, columns)
    finally:
        _parallel.set_threads(previous)
    assert got.shape == (len(rows), 30) and np.array_equal(got, whole[rows])
    assert np.array_equal(some, whole[rows][:, columns])
    with pytest.raises(ValueError, match='rows must ascend'):
        filtered(sos, x, rows[::-1])


def write_log(path, frictional_arm, log):
    t, q, tau = log
    csvlog.write(path, t, csvlog.joint_columns(frictional_arm.joint_names, position=q, effort=tau))


def test_a_log_read_once_identifies_as_its_path(frictional_arm, log, tmp_path):
    """``identify`` and ``cross_validate`` of a :class:`Log` equal those of its path."""
    path = tmp_path / 'run.csv'
    write_log(path, frictional_arm, log)
    once = read_once(frictional_arm, str(path))
    assert isinstance(once, Log) and once.source == str(path)
    by_path = md.identify(frictional_arm, str(path), cutoff=2.0)
    by_log = md.identify(frictional_arm, once, cutoff=2.0)
    np.testing.assert_array_equal(by_log.values, by_path.values)
    assert by_log.processing['source'] == by_path.processing['source'] == str(path)
    folds = md.cross_validate(frictional_arm, [once, once], folds=2, cutoff=2.0)
    assert folds.pooled.error['identified'] == pytest.approx(md.cross_validate(
        frictional_arm, [str(path), str(path)], folds=2, cutoff=2.0).pooled.error['identified'],
        rel=1e-12)


def test_a_log_read_for_other_joints_is_refused_naming_them(frictional_arm, log, tmp_path):
    path = tmp_path / 'run.csv'
    write_log(path, frictional_arm, log)
    once = read_once(frictional_arm, str(path))
    cut = md.load_model(robots.path('demo_arm'), tip_links=[frictional_arm.link_names[1]])
    with pytest.raises(IdentificationError, match=r'run\.csv was read for the joints .*'
                       + frictional_arm.joint_names[-1]):
        md.identify(cut, once, cutoff=2.0)
    with pytest.raises(IdentificationError, match='no such data file or recording: '):
        read_once(frictional_arm, str(tmp_path / 'absent.csv'))


def test_the_command_line_reads_each_log_once(frictional_arm, log, tmp_path, monkeypatch, capsys):
    """
    ``identify LOG --folds 3`` and ``--validate`` read each file once, however many use it.

    Three folds, the final fit, the validation (and, without ``--cutoff``, the cutoff's choice
    in each): before, each read the file again (an hour at 1 kHz: 4 s a time).
    """
    path, other = tmp_path / 'run.csv', tmp_path / 'other.csv'
    write_log(path, frictional_arm, log)
    reads = []
    real = csvlog.chunks

    def counted(p, size=None):
        reads.append(str(p))
        return real(p, size)
    monkeypatch.setattr(csvlog, 'chunks', counted)
    assert main(['identify', robots.path('demo_arm'), str(path), '--joint-dynamics',
                 str(write_friction(frictional_arm, tmp_path)), '--folds', '3', '--cutoff', '2',
                 '--format', 'json']) == 0
    assert reads == [str(path)]
    write_log(other, frictional_arm, tuple(x[:15000] for x in log))
    reads.clear()
    assert main(['identify', robots.path('demo_arm'), str(path), '--joint-dynamics',
                 str(write_friction(frictional_arm, tmp_path)), '--validate', str(other),
                 '--cutoff', '2', '--format', 'json']) == 0
    assert sorted(reads) == sorted([str(path), str(other)])
    capsys.readouterr()


def write_friction(frictional_arm, tmp_path):
    import yaml
    path = tmp_path / 'friction.yaml'
    path.write_text(yaml.safe_dump({'joint_dynamics': {
        j: {'viscous': 0.3, 'coulomb': 0.5} for j in frictional_arm.joint_names}}))
    return path


def test_solve_equals_fit_of_the_same_equations(frictional_arm, log):
    """:func:`fit` is :func:`factored` (with its blocks) then :func:`solve`: nothing between."""
    estimate = solve(factored(frictional_arm, log, cutoff=2.0, blocks=True))
    np.testing.assert_array_equal(estimate.values, fit(frictional_arm, log, cutoff=2.0).values)
    with pytest.raises(IdentificationError, match='need their jackknife blocks'):
        solve(factored(frictional_arm, log, cutoff=2.0))


def test_a_fit_from_its_blocks_factors_is_the_fit_of_every_row(frictional_arm, log, monkeypatch):
    """
    The reported fit never holds its regressor, and reports what the whole regressor gives.

    :func:`factored` with the jackknife's blocks, the parallel filter's chunks and
    :data:`.fit.GATHERED` made small so that blocks end inside chunks: each block's factors
    are its rows' (``R^T R = W^T W``); solved, the values, noise, deviations (the jackknife's
    widening too), residuals, condition and the physically consistent set equal
    :func:`solve` of :func:`equations` to 1e-9.
    """
    from manipulator_dynamics.identification import fit as fitting, logs
    from manipulator_dynamics.identification.least_squares import block_edges
    monkeypatch.setattr(logs, 'PARALLEL_CHUNK', 70)
    monkeypatch.setattr(fitting, 'GATHERED', 30)
    found = equations(frictional_arm, log, cutoff=2.0)
    blocked = factored(frictional_arm, log, cutoff=2.0, blocks=True)
    edges = block_edges(len(found.tau))
    assert len(blocked.blocks) == len(edges) - 1 == 10
    assert any(e % 70 for e in edges[1:-1])                     # blocks end inside chunks
    for f, a, b in zip(blocked.blocks, edges[:-1], edges[1:]):
        gram = np.einsum('kja,kjb->jab', found.W[a:b], found.W[a:b])
        np.testing.assert_allclose(np.einsum('jka,jkb->jab', f.R, f.R), gram, rtol=0,
                                   atol=1e-10 * np.abs(gram).max())
    options = {'physically_consistent': True, 'prior_weight': 1.0}
    whole, parts = solve(found, **options), solve(blocked, **options)
    for name in ('values', 'std', 'sigma', 'residual_rms', 'consistent_values'):
        np.testing.assert_allclose(getattr(parts, name), getattr(whole, name), rtol=1e-9,
                                   atol=1e-12, err_msg=name)
    assert parts.processing['std']['method'].startswith('jackknife')
    assert parts.processing['std']['jackknife_ratio'] == pytest.approx(
        whole.processing['std']['jackknife_ratio'], rel=1e-9)
    assert parts.condition == pytest.approx(whole.condition, rel=1e-9)
    assert parts.consistency['residual_rms'] == pytest.approx(whole.consistency['residual_rms'],
                                                              rel=1e-9)
    assert parts.samples == whole.samples == len(found.tau)


def test_a_csv_read_by_chunks_is_the_csv_read_whole(frictional_arm, log, tmp_path, monkeypatch):
    """Chunks of 64 kB give every column as the whole file's read, each row once."""
    path = tmp_path / 'run.csv'
    write_log(path, frictional_arm, log)
    whole = csvlog.read(path)
    monkeypatch.setattr(csvlog, 'CHUNK_BYTES', 1 << 16)
    parts = list(csvlog.chunks(path))
    assert len(parts) >= path.stat().st_size >> 17 > 3            # each a line past 64 kB
    np.testing.assert_array_equal(np.concatenate([p.values for p in parts]), whole.values)
    for room in (None, 10):             # as many rows as its size allows; too few: grown
        if room:
            monkeypatch.setattr(csvlog, 'rows_at_most', lambda path: room)
        t, q, tau = read_csv(frictional_arm, str(path))
        np.testing.assert_array_equal(t, whole.time())
        np.testing.assert_array_equal(q, whole.field(frictional_arm.joint_names, 'position'))
        np.testing.assert_array_equal(tau, whole.field(frictional_arm.joint_names, 'effort'))


def test_a_long_logs_columns_are_spilled_and_identify_as_in_memory(frictional_arm, log, tmp_path,
                                                                   monkeypatch, capsys):
    """
    A log longer than :data:`.spill.SPILL_ROWS` is read into a file, not memory: same results.

    The stamps, positions and efforts of the CSV are held by maps of temporary files
    (:mod:`.recordings.spill`); ``identify`` with the cutoff chosen and 3-fold validation,
    through the command line as a user runs it, prints what it prints of the log in memory, to
    the last digit; a value not a number is named by its sample and joint as before.
    """
    from manipulator_dynamics.recordings import spill
    path = tmp_path / 'run.csv'
    write_log(path, frictional_arm, log)
    friction = write_friction(frictional_arm, tmp_path)

    def identified():
        assert main(['identify', robots.path('demo_arm'), str(path), '--joint-dynamics',
                     str(friction), '--folds', '3', '--format', 'json']) == 0
        return capsys.readouterr().out
    in_memory = identified()
    assert '"cutoff_selection"' in in_memory or 'held_out' in in_memory
    monkeypatch.setattr(spill, 'SPILL_ROWS', 1000)
    t, q, tau = read_csv(frictional_arm, str(path))
    assert spill.is_spilled(q) and spill.is_spilled(tau) and spill.is_spilled(t)
    assert q.flags.f_contiguous or q[:, 0].flags.c_contiguous        # a column at a time
    whole = csvlog.read(path)
    np.testing.assert_array_equal(q, whole.field(frictional_arm.joint_names, 'position'))
    np.testing.assert_array_equal(tau, whole.field(frictional_arm.joint_names, 'effort'))
    assert identified() == in_memory
    lines = path.read_text().splitlines()
    cells = lines[20001].split(',')
    cells[3] = 'nan'
    lines[20001] = ','.join(cells)
    path.write_text('\n'.join(lines) + '\n')
    t, q, tau = read_csv(frictional_arm, str(path))
    assert spill.is_spilled(q)
    with pytest.raises(IdentificationError, match=r'\[20000, .*: 1 non-finite'):
        md.identify(frictional_arm, str(path), cutoff=2.0)


def test_non_finite_values_are_counted_over_chunks_and_the_first_named(frictional_arm,
                                                                       monkeypatch):
    """Chunks without a bad value are passed over; the first one's sample and every one count."""
    from manipulator_dynamics.recordings import spill
    from manipulator_dynamics.recordings.samples import sample_matrix
    monkeypatch.setattr(spill, 'CHUNK', 100)
    q = np.zeros((1000, frictional_arm.n))
    assert sample_matrix(frictional_arm, 'q', q) is not None
    q[250, 2], q[251, 0], q[777, frictional_arm.n - 1] = np.nan, np.inf, -np.inf
    joint = frictional_arm.joint_names[2]
    with pytest.raises(IdentificationError, match=rf"q\[250, 2\] \(joint '{joint}'\) "
                       r'is nan: 3 non-finite values in q'):
        sample_matrix(frictional_arm, 'q', q)


def test_a_bad_value_in_a_later_chunk_is_named_by_row_and_column(frictional_arm, log, tmp_path,
                                                                 monkeypatch):
    path = tmp_path / 'run.csv'
    write_log(path, frictional_arm, log)
    lines = path.read_text().splitlines()
    cells = lines[2501].split(',')
    cells[3] = 'oops'
    lines[2501] = ','.join(cells)
    path.write_text('\n'.join(lines) + '\n')
    monkeypatch.setattr(csvlog, 'CHUNK_BYTES', 1 << 16)            # the row in the 4th or later
    header = lines[0].split(',')
    with pytest.raises(IdentificationError, match=rf'row 2502, column {header[3]}: not a '
                       "number: 'oops'"):
        read_csv(frictional_arm, str(path))
    cells[3] = 'nan'                            # read, then refused where it is used
    lines[2501] = ','.join(cells)
    path.write_text('\n'.join(lines) + '\n')
    t, q, tau = read_csv(frictional_arm, str(path))
    assert len(t) == len(log[0]) and np.isnan(q).sum() + np.isnan(tau).sum() == 1
    with pytest.raises(IdentificationError, match=r'\[2500, .*non-finite'):
        md.identify(frictional_arm, str(path), cutoff=2.0)


def test_scoring_on_threads_gives_the_sums_of_one_thread(frictional_arm, log, monkeypatch):
    """:func:`.validation.at_full_rate`'s chunks on two threads: the same sums, bit for bit."""
    from manipulator_dynamics.identification import validation
    t, q, tau = log
    estimate = fit(frictional_arm, (t, q, tau), cutoff=2.0)
    monkeypatch.setattr(validation, 'SCORED_CHUNK', 3000)      # ten chunks
    runs = []
    for threads in (1, 2):
        previous = _parallel.set_threads(threads)
        try:
            runs.append(estimate.validate((t, q, tau)))
        finally:
            _parallel.set_threads(previous)
    one, two = runs
    assert one.samples == two.samples > 20000                 # every sample but the ends
    for m in ('urdf', 'identified'):
        assert np.array_equal(one.sums['squared_error'][m], two.sums['squared_error'][m])
    assert np.array_equal(one.sums['squared_torque'], two.sums['squared_torque'])


def test_scoring_is_scipys_spline_and_the_friction_law_at_every_sample():
    """
    :func:`.validation.at_full_rate` against its definition, written with scipy and numpy.

    Two stretches at 1 kHz, predictions at 50 rows a second: the smooth part splined by
    scipy's ``CubicSpline`` over each whole stretch, the friction (smooth and sign laws, offsets,
    coupled motors) of :func:`..control.friction_torque` at the splined velocities, summed at
    every sample; a model without friction; equations left out at some rows.
    """
    import scipy.interpolate

    from manipulator_dynamics.control import friction_torque
    from manipulator_dynamics.identification.validation import at_full_rate
    from helpers import with_random_joint_dynamics
    law = coupled(with_random_joint_dynamics(md.load_model(robots.path('demo_arm')), 3, laws=True))
    n, rng = law.n, np.random.default_rng(5)
    raw = [(np.arange(3000) * 1e-3, rng.normal(size=(3000, n))),
           (5.0 + np.arange(2000) * 1e-3, rng.normal(size=(2000, n)))]
    t = np.concatenate([np.arange(150) * 0.02, 5.0 + np.arange(100) * 0.02])
    qd = np.sin(np.outer(t, np.arange(1, n + 1)))               # reversals: Coulomb switches
    predicted = {'with': rng.normal(size=(len(t), n)), 'without': rng.normal(size=(len(t), n))}
    left_out = rng.uniform(size=(len(t), n)) < 0.1
    for out in (None, left_out):
        got = at_full_rate(law.joint_names, raw, t, qd, predicted, {'with': law}, out)
        wrong = {m: np.zeros(n) for m in predicted}
        torque = np.zeros(n)
        for raw_t, raw_tau in raw:
            inside = np.flatnonzero((t >= raw_t[0]) & (t <= raw_t[-1]))
            at = raw_t[:np.searchsorted(raw_t, t[inside[-1]]) + 20]   # the last row's too
            spline = scipy.interpolate.CubicSpline(t[inside], np.hstack(
                [predicted['with'] - friction_torque(law, qd), predicted['without'], qd])[inside],
                axis=0)(at)
            scored = np.ones((len(at), n), dtype=bool) if out is None else ~out[inside][
                np.clip(np.searchsorted(t[inside], at), 0, len(inside) - 1)]
            missed = {'with': raw_tau[:len(at)] - spline[:, :n]
                      - friction_torque(law, spline[:, 2 * n:]),
                      'without': raw_tau[:len(at)] - spline[:, n:2 * n]}
            for m in predicted:
                wrong[m] += (missed[m] ** 2 * scored).sum(axis=0)
            torque += (raw_tau[:len(at)] ** 2 * scored).sum(axis=0)
        for m in predicted:
            np.testing.assert_allclose(got.sums['squared_error'][m], wrong[m], rtol=1e-12)
        np.testing.assert_allclose(got.sums['squared_torque'], torque, rtol=1e-13)
    from manipulator_dynamics.identification.validation import _spline
    with pytest.raises(ValueError, match='K >= 4'):            # its indices are not checked
        _spline(np.arange(3.0), np.zeros((3, 2)))


def test_a_chunks_spline_is_the_whole_stretchs_to_rounding(frictional_arm, log, monkeypatch):
    """
    Scored by chunks, each with a spline of its own rows and a margin: the sums of one spline.

    :data:`.validation.SPLINE_MARGIN` rows each side make a chunk's spline the stretch's to
    rounding; without them, the chunks' ends would bend the interpolated prediction.
    """
    from manipulator_dynamics.identification import validation
    t, q, tau = log
    estimate = fit(frictional_arm, (t, q, tau), cutoff=2.0)
    monkeypatch.setattr(validation, 'SCORED_CHUNK', 1 << 30)     # one chunk: one spline
    whole = estimate.validate((t, q, tau)).sums
    monkeypatch.setattr(validation, 'SCORED_CHUNK', 1500)        # twenty chunks
    chunked = estimate.validate((t, q, tau)).sums
    for m in ('urdf', 'identified'):
        np.testing.assert_allclose(chunked['squared_error'][m], whole['squared_error'][m],
                                   rtol=1e-12)
    monkeypatch.setattr(validation, 'SPLINE_MARGIN', 0)          # the margin matters
    bent = estimate.validate((t, q, tau)).sums
    assert not np.allclose(bent['squared_error']['identified'],
                           whole['squared_error']['identified'], rtol=1e-9, atol=0)


def test_identification_runs_blas_on_one_thread_and_gives_back_what_it_found(frictional_arm, log,
                                                                             monkeypatch):
    """
    ``identify`` and ``cross_validate`` keep BLAS on one thread inside; the caller's after.

    OpenBLAS's own threads spin on the cores the package's threads split the work over
    (:func:`.._parallel.blas_on_one_thread`).  A fit inside sees one BLAS thread; after
    the call, and after a call that failed, the count the caller had set is back.
    """
    from manipulator_dynamics.identification import estimate
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas():
        return {i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'}
    if not blas():
        pytest.skip('no BLAS library found by threadpoolctl in this process')
    seen, real = [], estimate.fitted

    def probed(*args, **kwargs):
        seen.append(blas())
        return real(*args, **kwargs)
    monkeypatch.setattr(estimate, 'fitted', probed)
    with threadpool_limits(2, user_api='blas'):
        md.identify(frictional_arm, log, cutoff=2.0)
        md.cross_validate(frictional_arm, log, folds=2, cutoff=2.0)
        after = blas()
        with pytest.raises(IdentificationError):
            md.identify(frictional_arm, tuple(x[:5] for x in log), cutoff=2.0)
        failed = blas()
    assert len(seen) >= 3 and all(s == {1} for s in seen), seen
    assert after == failed == {2}
