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

"""Where the motion does not reach, the estimate stays at the prior; worse than it, it says so."""

from helpers import exciting
import manipulator_dynamics as md
from manipulator_dynamics import cli, robots
from manipulator_dynamics.identification.least_squares import at_the_prior, NO_PRIOR, \
    prior_scale
from manipulator_dynamics.rigid.regressor import parameter_names, standard_parameters
import numpy as np
import pytest


@pytest.fixture(scope='module')
def truth(arm):
    """Make the real robot: every standard parameter 0.85-1.15 times the URDF's (its prior)."""
    phi = standard_parameters(arm)
    rng = np.random.default_rng(5)
    return arm.with_parameters(phi * rng.uniform(0.85, 1.15, len(phi)), parameter_names(arm))


def run(model, seed, amplitude, seconds=30.0):
    """Return a noisy 200 Hz log of a Fourier motion, each joint scaled by ``amplitude``."""
    t, q, qd, qdd = exciting(model, seconds=seconds, seed=seed, scale=1.0)
    q, qd, qdd = q * amplitude, qd * amplitude, qdd * amplitude
    tau = md.inverse_dynamics(model, q, qd, qdd, friction=True)
    rng = np.random.default_rng(seed + 50)
    tau = tau + rng.normal(size=tau.shape) * (0.01 * np.abs(tau).max(axis=0) + 0.02)
    return t, q + rng.normal(size=q.shape) * 1e-5, tau


@pytest.fixture(scope='module')
def runs(truth):
    """Return a run that barely moves four joints (the fit), and one that moves them all."""
    weak = np.array([0.25, 0.25, 3e-4, 0.25, 3e-4, 3e-4, 3e-4])
    return run(truth, 1, weak), run(truth, 2, np.full(7, 0.25))


def test_unexcited_directions_keep_the_prior_and_predict_no_worse_than_it(arm, runs):
    """
    A run that leaves directions unexcited: held at the prior, it predicts another run better.

    Least squares fits the noise in those directions and predicts the second run far worse
    than the URDF it started from; the estimate identify makes by default, the threshold chosen
    on its training folds, predicts it no worse than the URDF.
    """
    train, check = runs
    least = md.identify(arm, train, cutoff=2.5, validation=check, prior_threshold=0.0)
    assert least.validation.error['identified'] > 10 * least.validation.error['urdf']
    assert least.validation.worse_than_prior()
    estimate = md.identify(arm, train, cutoff=2.5, validation=check)
    held = estimate.processing['prior']
    chosen = estimate.processing['prior_threshold_selection']
    assert held['directions'] > 0 and held['threshold'] == chosen['chosen'] > 0
    assert set(chosen['held_out_error']) == {0.0, 1.0}
    assert estimate.validation.error['identified'] <= estimate.validation.error['urdf']
    assert not estimate.validation.worse_than_prior()
    # the joints that barely moved: their viscous friction is the prior's, not the noise's
    for joint in ('joint3', 'joint5', 'joint6', 'joint7'):
        assert f'Fv_{joint}' in held['parameters']
        i = estimate.names.index(f'Fv_{joint}')
        assert estimate.values[i] == pytest.approx(estimate.base.values[i], rel=0.05)


def test_the_summary_line_says_when_the_set_predicts_worse_than_its_prior(runs, tmp_path,
                                                                          capsys):
    """``--prior-threshold 0`` (least squares) on the weak run: the title line says it."""
    from helpers import write_log_csv
    train, check = runs
    names = md.load_model(robots.path('demo_arm')).joint_names
    write_log_csv(tmp_path / 'fit.csv', names, *train)
    write_log_csv(tmp_path / 'check.csv', names, *check)
    common = ['identify', robots.path('demo_arm'), str(tmp_path / 'fit.csv'), '--cutoff', '2.5',
              '--validate', str(tmp_path / 'check.csv')]
    assert cli.main(common + ['--prior-threshold', '0']) == 0
    title = capsys.readouterr().out.splitlines()[0]
    assert 'WORSE THAN THE PRIOR it started from on the held-out data: identified' in title
    assert cli.main(common) == 0
    out = capsys.readouterr().out
    assert 'WORSE' not in out.splitlines()[0]
    assert 'direction(s) of the base parameters kept at the prior' in out
    assert 'threshold chosen on 3-fold held-out error' in out


def test_at_the_prior_solves_about_the_prior_in_the_directions_the_data_know():
    """
    Threshold 0 is least squares; above it, the held directions carry the prior exactly.

    In the scaled space (``D^-1 (K - prior)``), the estimate has no part along a held
    direction, and the projector maps least squares' estimate onto the one kept.
    """
    rng = np.random.default_rng(0)
    b = 6
    R = rng.normal(size=(40, b)) * np.array([1.0, 1.0, 1.0, 1.0, 1e-3, 1e-4]) * 50
    z = rng.normal(size=40)
    prior, scale = rng.normal(size=b), rng.uniform(0.5, 2.0, b)
    estimates, report = at_the_prior(R, z, prior, (0.0, 1.0), scale)
    np.testing.assert_allclose(estimates[0.0], np.linalg.lstsq(R, z, rcond=None)[0],
                               rtol=1e-9, atol=1e-9)
    held = report(1.0)
    assert held['directions'] == 2 and held['smallest'] < 1.0
    U, S, Vt = np.linalg.svd(R * scale, full_matrices=False)
    step = (estimates[1.0] - prior) / scale
    np.testing.assert_allclose(Vt[S <= 1.0] @ step, 0.0, atol=1e-12)
    P = held['projector']
    np.testing.assert_allclose(P @ (estimates[0.0] - prior), estimates[1.0] - prior,
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(held['share'][4:], 1.0, atol=0.01)   # those two columns held


def test_a_parameter_the_prior_puts_at_zero_takes_a_tenth_of_its_units_largest():
    """
    Products of inertia from the inertias, a friction offset from the Coulomb friction.

    A URDF without friction says nothing of it: its scale is out of the prior's reach.
    """
    names = ('XX_link1', 'XY_link1', 'Ia_joint1', 'MX_link1', 'MY_link1', 'Fc_joint1',
             'Fo_joint1', 'Fv_joint1')
    scale = prior_scale(names, [0.2, 0.0, 0.01, -0.5, 0.0, 2.0, 0.0, 0.3])
    np.testing.assert_allclose(scale, [0.2, 0.02, 0.02, 0.5, 0.05, 2.0, 0.2, 0.3])
    bare = prior_scale(names, [0.2, 0.0, 0.01, -0.5, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(bare[5:], NO_PRIOR * 0.5)


def test_the_summary_line_shows_the_digits_where_the_set_is_worse():
    """Errors equal to four digits: the line shows where they differ, and by how much."""
    from manipulator_dynamics.identification.validation import Validation
    v = Validation(joint_names=('a',), samples=10, torque_rms=np.ones(1), rms={},
                   error={'urdf': 0.0126712, 'identified': 0.0126734})
    line = v.worse_summary()
    assert 'identified 0.012673 % against 0.012671 % (0.017 % more)' in line, line
    v = Validation(joint_names=('a',), samples=10, torque_rms=np.ones(1), rms={},
                   error={'urdf': 0.0126734, 'identified': 0.0126712})
    assert v.worse_summary() == ''
