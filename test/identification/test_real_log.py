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
A real robot's log: a Franka Emika Panda's excitation run (Gaz et al., RA-L 2019).

The log lives beside the repository (``../shared/data/panda_gaz2019``, read its README) and is
never copied into it; without it these tests skip, saying so.
"""

import math
import os
import warnings

from helpers import consistent_at_every_weight, erd, needs_erd, ROOT
import manipulator_dynamics as md
from manipulator_dynamics.identification.consistent import ConsistentFit, physical_problems
from manipulator_dynamics.identification.logs import stretches
from manipulator_dynamics.recordings.log import read_series
from manipulator_dynamics.rigid.regressor import regressor
import numpy as np
import pytest

LOG = os.path.join(ROOT, '..', 'shared', 'data', 'panda_gaz2019',
                   'panda_exciting_traj_1.npz')
needs_log = pytest.mark.skipif(not os.path.isfile(LOG), reason=f'the real Panda log is not at '
                               f'{os.path.normpath(LOG)} (../shared/data beside the clone)')
#: The published model's normalised squared error on the same samples (the issue's measurement).
PUBLISHED = 0.13
CUTOFF = 5.0


@pytest.fixture(scope='module')
def log():
    data = np.load(LOG)
    return data['t'], data['q'], data['tau']


@pytest.fixture(scope='module')
def panda():
    # this robot had no hand: the URDF's hand (0.73 kg) and fingers left out
    return md.load_model(erd('panda_description/urdf/panda.urdf'), without_links=['panda_hand'],
                         check_inertia='warn')


@needs_erd
@needs_log
def test_the_log_is_read_from_its_own_file_by_joint_name(panda):
    """``identify(model, 'panda_exciting_traj_1.npz')``: the archive as the log came."""
    data = np.load(LOG)
    (t, q, tau), processing = read_series(panda, LOG, '/joint_states')
    order = [list(data['joints']).index(j) for j in panda.joint_names]
    assert processing['source'] == LOG and processing['timing']['retimed']   # by its qd
    np.testing.assert_array_equal(q, data['q'][:, order])
    np.testing.assert_array_equal(tau, data['tau'][:, order])
    assert len(t) == len(data['t'])


def squared_errors(model, base, values, t, q, tau):
    """
    Sum of squared torque errors and of squared torques on a held-out stretch, by hand.

    At the log's full rate (the library cuts it down first, and scores at every sample by
    interpolation): on the uniform grid the library puts the stamps on (the logger skipped
    samples), the positions filtered by scipy's own zero-phase Butterworth at the cutoff,
    differentiated by ``np.gradient``, the filter's transients trimmed, the torques as logged.
    """
    import scipy.signal

    (grid, q, tau), = stretches(model, [(t, q, tau)], CUTOFF)[0]
    step = float(np.median(np.diff(grid)))
    sos = scipy.signal.butter(4, CUTOFF * 2 * step, output='sos')
    qf = scipy.signal.sosfiltfilt(sos, q, axis=0)
    qd = np.gradient(qf, step, axis=0)
    qdd = np.gradient(qd, step, axis=0)
    trim = math.ceil(3 / (CUTOFF * step))                           # the filter's transients
    W = base.base_regressor(regressor(model, qf, qd, qdd, armature=base.armature,
                                      friction=base.friction))[trim:-trim]
    measured = tau[trim:-trim]
    return ((W @ values - measured) ** 2).sum(), (measured ** 2).sum()


@needs_erd
@needs_log
def test_each_third_held_out_is_predicted_from_the_other_two(log, panda):
    """
    Identify on two thirds (two logs: never filtered across the one held out), predict the third.

    On every fold the identified model beats the URDF's nominal parameters, and the normalised
    squared error pooled over the three thirds is at or below the published model's (measured
    2026-11-25: 0.084, 0.137, 0.086 % per fold, pooled 0.105 %, against the URDF's 0.236,
    0.174, 0.256 %).  The physically consistent set converges in well under 10 s (measured:
    6-8 Newton steps, 5-6 ms), is realisable, predicts within 5 % of least squares' error
    (measured: 0.085, 0.100, 0.088 %), and keeps the links the data cannot weigh at the URDF's
    mass (link 1, turning about the vertical: 4.93-4.95 kg against 4.97).
    """
    t, q, tau = log
    thirds = np.array_split(np.arange(len(t)), 3)
    pooled, consistent = np.zeros(2), 0.0
    prior = md.standard_parameters(panda, friction=True)
    for k, held in enumerate(thirds):
        train = [(t[i], q[i], tau[i]) for j, i in enumerate(thirds) if j != k]
        with warnings.catch_warnings():
            warnings.simplefilter('error', md.ConvergenceWarning)
            estimate = md.identify(panda, train, cutoff=CUTOFF, physically_consistent=True)
        assert len(estimate.processing['stretches']) == 2
        ours = squared_errors(panda, estimate.base, estimate.values, t[held], q[held], tau[held])
        urdf = squared_errors(panda, estimate.base, estimate.base.values, t[held], q[held],
                              tau[held])
        assert ours[0] < urdf[0], (k, ours[0] / ours[1], urdf[0] / urdf[1])
        pooled += ours
        # the library's validation says the same (its own trimming: a few samples apart)
        said = estimate.validate((t[held], q[held], tau[held])).error
        assert said['identified'] == pytest.approx(100 * ours[0] / ours[1], rel=0.02)
        assert said['urdf'] == pytest.approx(100 * urdf[0] / urdf[1], rel=0.02)
        info = estimate.consistency
        assert info['converged'] and info['seconds'] < 10, info
        assert physical_problems(estimate.standard, estimate.standard_names) == []
        assert said['consistent'] <= 1.05 * said['identified'], (k, said)
        consistent += said['consistent'] * ours[1]
        unweighable = list(unweighable_masses(estimate, prior))
        assert [link for link, _ in unweighable] == ['panda_link1']
        for link, mass in unweighable:
            assert mass == pytest.approx(prior[estimate.standard_names.index(f'M_{link}')],
                                         rel=0.05), (k, link)
    assert 100 * pooled[0] / pooled[1] <= PUBLISHED, 100 * pooled[0] / pooled[1]
    assert consistent / pooled[1] <= 1.05 * 100 * pooled[0] / pooled[1]


def unweighable_masses(estimate, prior):
    """Yield ``(link, consistent mass)`` of links whose mass and first moments no data see."""
    T = ConsistentFit(estimate.base, prior, estimate.values).T
    names = estimate.standard_names
    for i, name in enumerate(names):
        if name.startswith('M_') and not T[:, i - 3:i + 1].any():
            yield name[2:], estimate.standard[i]


@needs_erd
@needs_log
def test_the_loggers_stamps_are_reported(log, panda):
    """The log's repeats and missed samples are found; its 21 s are one stretch, no gap."""
    t, q, tau = log
    estimate = md.identify(panda, (t, q, tau), cutoff=CUTOFF)
    (report,) = estimate.processing['stamps']
    unchanged = np.all(q[1:] == q[:-1], axis=1) & np.all(tau[1:] == tau[:-1], axis=1)
    assert report['repeated'] == int(unchanged.sum()) > 1000
    assert report['skipped'] > 1000 and report['gaps'] == []
    assert abs(report['step_s'] - 1e-3) < 1e-5
    assert len(estimate.processing['stretches']) == 1


@needs_erd
@needs_log
def test_the_real_joints_need_offsets_as_held_out_data_say(log, panda):
    """
    Each third held out: the law chosen on folds of the other two has offsets, and beats Coulomb.

    The third itself only scores the chosen law and the plain sign law.

    ``Fv qd + Fc sign(qd)`` alone leaves the torque sensors' offsets and the joints' asymmetric
    friction in the error: with an offset per joint (or the smooth law with offsets) every
    fold predicts better, and :func:`select_friction` keeps a law with offsets (measured
    2026-11-25: coulomb 0.084, 0.137, 0.086 %; offset 0.078, 0.104, 0.080 %; smooth 0.077,
    0.107, 0.079 %; the smooth law's Coulomb velocities 0.02-0.09 rad/s).
    """
    t, q, tau = log
    thirds = np.array_split(np.arange(len(t)), 3)
    pooled = dict.fromkeys(('chosen', 'coulomb'), 0.0)
    for k, held in enumerate(thirds):
        train = [(t[i], q[i], tau[i]) for j, i in enumerate(thirds) if j != k]
        check = (t[held], q[held], tau[held])
        chosen = md.select_friction(panda, train, check, cutoff=CUTOFF)
        errors = chosen.processing['friction_selection']      # of folds of the two thirds
        assert chosen.processing['friction'] in ('offset', 'smooth'), (k, errors)
        assert errors['offset'] < errors['coulomb'] and errors['smooth'] < errors['coulomb']
        plain = md.identify(panda, train, friction='coulomb', cutoff=CUTOFF, validation=check)
        energy = (tau[held] ** 2).sum()
        pooled['chosen'] += chosen.validation.error['identified'] * energy
        pooled['coulomb'] += plain.validation.error['identified'] * energy
    assert pooled['chosen'] < 0.95 * pooled['coulomb'], pooled


@needs_erd
@needs_log
def test_k_fold_in_time_is_the_held_out_thirds(log, panda):
    """
    ``cross_validate(folds=3)``: the thirds held out in turn, everything chosen on the other two.

    Each fold chooses its cutoff (from 2.5-20x the motion's bandwidth) and its friction law
    (coulomb or offset; the smooth law's choice is the test above's) on folds of its two
    training thirds alone, and reports them;
    its error is what identifying with those choices on the two thirds and validating on the
    third gives.  Every third is predicted better than by the URDF, and the pooled error of
    the identified and the consistent models is at or below the published model's.
    """
    t, q, tau = log
    check = md.cross_validate(panda, (t, q, tau), folds=3, physically_consistent=True,
                              friction=['coulomb', 'offset'])
    thirds = np.array_split(np.arange(len(t)), 3)
    held, fold = thirds[1], check.estimates[1]
    assert set(fold.processing['friction_selection']) == {'coulomb', 'offset'}
    assert 'held_out_error' in fold.processing['cutoff_selection']
    alone = md.identify(panda, [(t[i], q[i], tau[i]) for i in (thirds[0], thirds[2])],
                        cutoff=fold.processing['cutoff_hz'], friction=fold.processing['friction'],
                        validation=(t[held], q[held], tau[held]))
    assert fold.validation.error['identified'] == pytest.approx(
        alone.validation.error['identified'], rel=1e-6)
    for e in check.estimates:
        assert e.validation.error['identified'] < e.validation.error['urdf'], e.validation.error
    pooled = check.pooled
    assert pooled.samples == sum(e.validation.samples for e in check.estimates)
    energy = [e.validation.sums['squared_torque'].sum() for e in check.estimates]
    total = sum(e.validation.error['identified'] * w for e, w in zip(check.estimates, energy))
    assert pooled.error['identified'] == pytest.approx(total / sum(energy))
    assert pooled.error['identified'] <= PUBLISHED < pooled.error['urdf']
    assert pooled.error['consistent'] <= 1.05 * pooled.error['identified']
    assert check.table().count('Hz chosen, law ') == 3, check.table()


@needs_erd
@needs_log
def test_the_cutoff_chosen_from_the_log_predicts_the_held_out_third(log, panda):
    """
    ``cutoff='auto'`` on the two thirds of each fold: the third held out is still predicted.

    The motion's bandwidth comes out near its highest harmonic (0.375 Hz; 0.556-0.567 Hz with
    the window's widening and the shorter logs), the cutoff is chosen on held-out pieces of
    the training thirds (measured: 5.56, 11.34, 5.67 Hz), and the third left out is predicted
    below the published model's error on every fold (0.079, 0.094, 0.081 %).
    """
    t, q, tau = log
    thirds = np.array_split(np.arange(len(t)), 3)
    for k, held in enumerate(thirds):
        train = [(t[i], q[i], tau[i]) for j, i in enumerate(thirds) if j != k]
        estimate = md.identify(panda, train, cutoff='auto', friction='offset',
                               validation=(t[held], q[held], tau[held]))
        chosen = estimate.processing['cutoff_selection']
        assert 0.375 <= chosen['bandwidth_hz'] < 0.75, chosen
        errors = chosen['held_out_error']
        assert estimate.processing['cutoff_hz'] == min(errors, key=errors.get)
        error = estimate.validation.error
        assert error['identified'] < PUBLISHED < error['urdf'], (k, chosen, error)


@needs_erd
@needs_log
def test_the_robots_velocities_put_the_log_back_on_its_clock(panda):
    """
    The log's own velocities re-time it on the robot's 1 kHz clock; a higher cutoff then helps.

    Measured: 20438 of 20543 intervals re-timed (the rest at rest, where the velocities are
    noise), the period 0.999984 ms of the logger's clock, the logger's stamps 0-5.7 ms behind
    the robot's.  With 3-fold cross-validation (offset friction) the pooled held-out error at a
    20 Hz cutoff is 0.084 % re-timed against 0.273 % on the stamps as logged (their jitter,
    differentiated twice); at 10 Hz 0.086 % against 0.090 %; at 5 Hz, where the filter hides
    the jitter, 0.090 % against 0.089 %.
    """
    data = np.load(LOG)
    log = {k: data[k] for k in ('t', 'q', 'qd', 'tau')}
    estimate = md.identify(panda, log, friction='offset', cutoff=20.0)
    timing = estimate.processing['timing']
    assert timing['retimed'] and timing['retimed_intervals'] > 0.99 * (len(data['t']) - 1)
    assert timing['period_s'] == pytest.approx(1e-3, rel=1e-4)
    errors = {retime: md.cross_validate(panda, log, folds=3, friction='offset', cutoff=20.0,
                                        retime=retime).pooled.error['identified']
              for retime in (True, False)}
    assert errors[True] <= PUBLISHED and 2 * errors[True] < errors[False], errors


@needs_erd
@needs_log
def test_the_reported_deviations_are_the_spread_over_the_held_out_thirds(log, panda):
    """
    Identified on each pair of thirds, the estimates scatter as much as the deviations say.

    The jackknife spread of the three fold estimates, ``sqrt(2/3 sum (K_k - mean)^2)``, against
    the deviations reported on the whole log: median ratio over the base parameters 1.23 at 5
    Hz and 1.03 at 10 Hz (measured 2026-11-25), where ``s^2 (W^T W)^-1`` alone gives 2.2; the
    jackknife in blocks of time found the rows correlated and widened them by 1.8 and 2.2.
    """
    t, q, tau = log
    thirds = np.array_split(np.arange(len(t)), 3)
    for cutoff in (5.0, 10.0):
        whole = md.identify(panda, log, friction='offset', cutoff=cutoff)
        factor = whole.processing['std']['factor']
        folds = np.array([md.identify(panda, [(t[i], q[i], tau[i]) for j, i in enumerate(thirds)
                                              if j != k], friction='offset', cutoff=cutoff).values
                          for k in range(3)])
        spread = np.sqrt(2 / 3 * ((folds - folds.mean(axis=0)) ** 2).sum(axis=0)) / whole.std
        assert 1.5 < factor < 3.0, whole.processing['std']
        assert 0.7 < np.median(spread) < 1.5 < np.median(spread) * factor, (cutoff, spread)


@needs_erd
@needs_log
def test_the_consistent_fit_converges_at_every_prior_weight(panda, log):
    """
    On the real Panda, every weight ``prior_weight='auto'`` tries converges, by continuation.

    From the prior straight to 0.1 took 129 Newton steps of 200 (Coulomb friction; the TX40
    175): a weak prior's optimum is far from the prior.  Down the path from 1000: 74 in all,
    10 at 0.1 itself; with offsets, as here, fewer than 150 in all.
    """
    found = consistent_at_every_weight(panda, log, cutoff=CUTOFF, friction='offset')
    assert all(converged for converged, _ in found.values()), found
    assert found[0.1][1] < 150, found
