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

"""Physically consistent estimates: the pseudo-inertia algebra, the checks, the fit."""

import dataclasses
import math
import re
import warnings

from helpers import body, erd, measured, needs_erd, rod
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.identification import consistent
from manipulator_dynamics.model import pseudo_inertia, standard_from_pseudo_inertia
import numpy as np
import pytest


def test_pseudo_inertia_is_the_second_moment_of_the_mass():
    """Point masses: J = sum m [r 1][r 1]^T, and the standard parameters come back from it."""
    rng = np.random.default_rng(0)
    r, m = rng.normal(size=(5, 3)), rng.uniform(0.5, 2.0, 5)
    J = sum(mk * np.outer(np.append(rk, 1), np.append(rk, 1)) for rk, mk in zip(r, m))
    inertia = sum(mk * (rk @ rk * np.eye(3) - np.outer(rk, rk)) for rk, mk in zip(r, m))
    phi = np.array([inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1], inertia[1, 2],
                    inertia[2, 2], *(m @ r), m.sum()])
    assert np.allclose(pseudo_inertia(phi), J)
    assert np.allclose(standard_from_pseudo_inertia(J), phi)


def test_the_prior_is_zero_at_the_urdf_convex_and_a_barrier():
    """
    The log-det divergence: zero at the prior, its gradient and Hessian exact, infinite outside.

    Its Hessian is positive definite on every realisable set tried (the fit is convex), and it
    grows without bound as a link nears the boundary of the realisable cone.
    """
    model = md.load_model(robots.path('demo_arm'))
    estimate = md.identify(model, simulate_demo(model), physically_consistent=True)
    prior = md.standard_parameters(model, friction=True)
    fit = consistent.ConsistentFit(estimate.base, prior, estimate.values)
    start = fit.start()
    value, gradient, hessian = fit.prior(start)
    assert value == pytest.approx(0.0, abs=1e-12) and np.abs(gradient).max() < 1e-9
    rng = np.random.default_rng(1)
    h = 1e-6
    for _ in range(3):
        phi = start * np.exp(0.1 * rng.normal(size=start.shape))
        for idx, J0 in zip(fit.links, fit.J0):           # a congruence keeps J realisable
            B = np.eye(4) + 0.1 * rng.normal(size=(4, 4))
            phi[idx] = standard_from_pseudo_inertia(B @ J0 @ B.T)
        value, gradient, hessian = fit.prior(phi)
        assert math.isfinite(value) and value > 0
        assert np.linalg.eigvalsh(hessian).min() > 0
        for k in rng.choice(len(phi), 8, replace=False):
            e = np.zeros(len(phi))
            e[k] = h * max(abs(phi[k]), 1e-3)
            plus, minus = fit.prior(phi + e), fit.prior(phi - e)
            assert (plus[0] - minus[0]) / (2 * e[k]) == pytest.approx(gradient[k], rel=1e-5,
                                                                      abs=1e-6)
            assert np.allclose((plus[1] - minus[1]) / (2 * e[k]), hessian[:, k], rtol=1e-4,
                               atol=1e-6 * np.abs(hessian[:, k]).max())
    # every link at once (prior) is the sum of each link's divergence (the scalars at the prior)
    linked, each = start.copy(), []
    for idx, J0 in zip(fit.links, fit.J0):
        B = np.eye(4) + 0.1 * rng.normal(size=(4, 4))
        linked[idx] = standard_from_pseudo_inertia(B @ J0 @ B.T)
        each.append(consistent.log_det_divergence(pseudo_inertia(linked[idx]), J0))
    assert fit.prior(linked, derivatives=False)[0] == pytest.approx(sum(each), rel=1e-12)
    idx, J0 = fit.links[1], fit.J0[1]
    w, V = np.linalg.eigh(J0)
    near = start.copy()
    values = []
    for kept in (1.0, 0.1, 0.01, -0.01):     # J's smallest eigenvalue to zero, then past it
        near[idx] = standard_from_pseudo_inertia(J0 - (1 - kept) * w[0] * np.outer(V[:, 0],
                                                                                   V[:, 0]))
        values.append(fit.prior(near)[0])
    assert values[0] < 1e-9 and values[0] < values[1] < values[2] and values[3] == math.inf
    # within round-off of the boundary is outside: J numerically singular, its inverse (the
    # gradient) undefined; a weak prior's line search once stepped there and the fit crashed
    size = np.diag(J0).max()
    J = J0 - (w[0] - 1e-16 * size) * np.outer(V[:, 0], V[:, 0])
    assert abs(np.linalg.eigvalsh(J).min()) < 1e-15 * size
    assert consistent.log_det_divergence(J, J0) == math.inf
    assert math.isfinite(consistent.log_det_divergence(J0 - 0.99 * w[0] * np.outer(
        V[:, 0], V[:, 0]), J0))


def simulate_demo(model):
    motion = md.excitation_trajectory(model, duration=4.0, maxiter=0)
    return motion.q, motion.qd, motion.qdd, simulate(model, motion)


def test_physical_problems_name_the_link_and_the_fault():
    names = md.parameter_names(md.load_model(robots.path('demo_arm')), friction=True)
    model = md.load_model(robots.path('demo_arm'))
    good = md.standard_parameters(model, friction=True)
    assert consistent.physical_problems(good, names) == []
    links = model.link_names
    bad = good.copy()
    bad[names.index(f'M_{links[2]}')] = -1.0
    start = names.index(f'XX_{links[4]}')
    bad[start:start + 10] = body(2.0, [0.01, 0.01, 0.03], [0.25, 0, 0])    # 0.03 > 0.01 + 0.01
    bad[names.index(f'Fv_{model.joint_names[1]}')] = -0.1
    problems = consistent.physical_problems(bad, names)
    assert len(problems) == 3, problems
    assert f'link {links[2]}: mass -1' in problems[0]
    assert f'link {links[4]}' in problems[1] and 'centre of mass' in problems[1]
    assert f'Fv_{model.joint_names[1]}' in problems[2]


@pytest.fixture(scope='module')
def demo_motion():
    model = md.load_model(robots.path('demo_arm'))
    return model, md.excitation_trajectory(model, duration=10.0, maxiter=15)


def simulate(model, motion, noise=0.0, seed=0):
    tau = md.inverse_dynamics(model, motion.q, motion.qd, motion.qdd, friction=True)
    rng = np.random.default_rng(seed)
    return tau + noise * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)


def test_a_urdf_that_fits_the_data_is_returned_whole(demo_motion):
    """
    Data of the URDF's own robot, no noise: every standard parameter comes back, seen or not.

    The data determine only the base parameters; the prior (the URDF) decides the rest, and
    since it is realisable and fits, the whole vector is the URDF's.
    """
    model, motion = demo_motion
    tau = simulate(model, motion)
    estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, tau),
                           physically_consistent=True)
    prior = md.standard_parameters(model, friction=True)
    assert estimate.standard_names == md.parameter_names(model, friction=True)
    assert np.allclose(estimate.standard, prior, rtol=1e-5, atol=1e-7 * np.abs(prior).max())
    assert consistent.physical_problems(estimate.standard, estimate.standard_names) == []
    assert estimate.consistency['converged'] is True


def test_a_fit_that_did_not_converge_says_so(demo_motion, monkeypatch, capsys, tmp_path):
    """Out of Newton steps: a ConvergenceWarning, ``converged`` False, and the CLI says so."""
    from helpers import write_log_csv
    from manipulator_dynamics import cli
    model, motion = demo_motion
    tau = 1.3 * simulate(model, motion, noise=0.01)       # a robot far from its URDF
    monkeypatch.setattr(consistent, 'MAX_ITERATIONS', 2)
    with pytest.warns(md.ConvergenceWarning, match=r'did not converge: .* \(2 iterations'):
        estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, tau),
                               physically_consistent=True)
    assert estimate.consistency['converged'] is False
    assert estimate.consistency['iterations'] == 2
    write_log_csv(tmp_path / 'log.csv', model.joint_names, motion.t, motion.q, tau)
    assert cli.main(['identify', robots.path('demo_arm'), str(tmp_path / 'log.csv'),
                     '--cutoff', '2.5', '--physically-consistent']) == 0
    out, err = capsys.readouterr()
    assert '2 Newton steps: DID NOT CONVERGE, the last iterate' in out
    assert 'manipulator-dynamics: warning: the physically consistent fit did not converge' in err


def test_a_different_robot_is_found_and_stays_physical(demo_motion):
    """
    The robot carries 1.5 kg more at its last link than its URDF says; no noise.

    The consistent set reproduces the true base parameters and torques (the prior yields where
    the data speak), and is realisable.
    """
    model, motion = demo_motion
    inertial = model.inertial.copy()
    inertial[-1] += rod(1.5, 0.1, 0.03, [0.02, 0.0, 0.08])
    true = dataclasses.replace(model, inertial=inertial)
    tau = simulate(true, motion)
    estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, tau),
                           physically_consistent=True)
    truth = md.base_parameters(true, friction=True).values
    scale = np.abs(truth).max()
    assert np.allclose(estimate.values, truth, atol=1e-8 * scale)
    assert np.allclose(estimate.consistent_values, truth, atol=1e-5 * scale)
    assert estimate.consistency['residual_rms'].max() < 1e-4 * np.sqrt((tau ** 2).mean())
    assert consistent.physical_problems(estimate.standard, estimate.standard_names) == []
    M = estimate.standard[estimate.standard_names.index(f'M_{model.link_names[-1]}')]
    assert M > model.inertial[-1, 9] + 0.5       # the payload's mass went somewhere near it


@needs_erd
def test_noisy_panda_data_consistent_estimate_validates_as_well():
    """
    Panda arm, 2 % torque noise: the least-squares set is physically impossible, ours is not.

    The unconstrained base parameters, completed with the URDF where they say nothing (the
    minimum-norm correction), break triangle inequalities or give negative friction; the
    consistent set passes every check, and on a validation motion (another seed) its torque
    error is within 1.5x of the unconstrained fit's.
    """
    model = md.load_model(erd('panda_description/urdf/panda.urdf'), tip_links=['panda_link8'])
    motion = md.excitation_trajectory(model, duration=20.0, maxiter=30)
    tau = simulate(model, motion, noise=0.02, seed=0)
    estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, tau),
                           physically_consistent=True)
    prior = md.standard_parameters(model, friction=True)
    T = consistent.ConsistentFit(estimate.base, prior, estimate.values).T
    completed = prior + np.linalg.pinv(T) @ (estimate.values - T @ prior)
    assert consistent.physical_problems(completed, estimate.standard_names)
    assert consistent.physical_problems(estimate.standard, estimate.standard_names) == []
    check = md.excitation_trajectory(model, duration=10.0, maxiter=0, seed=5)
    measured = simulate(model, check, noise=0.02, seed=1)
    Y = md.regressor(model, check.q, check.qd, check.qdd, friction=True)
    free = np.sqrt(((estimate.base.base_regressor(Y) @ estimate.values - measured) ** 2).mean())
    ours = np.sqrt(((Y @ estimate.standard - measured) ** 2).mean())
    assert ours <= 1.5 * free, (ours, free)
    assert estimate.consistency['seconds'] > 0


def wrong_prior_log(model, scale, seed):
    """Return ``(t, q, tau)`` of a robot whose links are ``scale`` times its URDF's, noisy."""
    truth = dataclasses.replace(model, inertial=model.inertial * scale)
    t, _, _, _, tau, q = measured(truth, seed=seed, seconds=20.0)
    return t, q, tau


def test_the_prior_weight_is_chosen_on_folds_of_the_training_data_alone():
    """
    ``prior_weight='auto'``: the weight whose consistent sets best predict held-out pieces.

    A URDF 30 % off the robot is a prior to weigh little: the weight chosen leaves the data in
    charge, where the heaviest candidate's consistent set predicts many times worse.  A URDF
    that is the robot costs nothing at any weight.  The choice is reproduced by fitting each
    fold at the chosen weight, and validation data given to identify play no part in it.
    """
    from manipulator_dynamics.identification.fit import fit
    from manipulator_dynamics.identification.selection import folds_in_time, PRIOR_WEIGHTS
    from manipulator_dynamics.identification.validation import pooled
    model = md.load_model(robots.path('demo_arm'))
    log = wrong_prior_log(model, 1.3, seed=1)
    check = wrong_prior_log(model, 1.3, seed=2)
    estimate = md.identify(model, log, cutoff=5.0, physically_consistent=True,
                           prior_weight='auto', validation=check)
    report = estimate.processing['prior_weight_selection']
    errors, chosen = report['held_out_error'], report['chosen']
    assert set(errors) == set(PRIOR_WEIGHTS) and not report['unconverged']
    assert chosen == min(errors, key=errors.get) and chosen <= 100.0
    assert estimate.consistency['prior_weight'] == chosen
    assert errors[1000.0] > 5 * errors[chosen]
    assert report['trust'] == ('consistent' if errors[chosen] <= report['least_squares']
                               else 'least squares')
    # what the report says is what fitting each fold at that weight gives
    folds = [fit(model, train, cutoff=5.0, physically_consistent=True, prior_weight=chosen,
                 validation=held).validation for train, held in folds_in_time(model, log, 3)]
    assert pooled(folds).error['consistent'] == pytest.approx(errors[chosen], rel=1e-6)
    # the validation data, scaled and shifted, change nothing of the choice
    t, q, tau = check
    other = md.identify(model, log, cutoff=5.0, physically_consistent=True,
                        prior_weight='auto', validation=(t, q, 3 * tau + 5))
    assert other.processing['prior_weight_selection'] == report
    assert np.array_equal(other.standard, estimate.standard)
    # a URDF that is the robot: every weight predicts alike
    right = md.identify(model, wrong_prior_log(model, 1.0, seed=1), cutoff=5.0,
                        physically_consistent=True, prior_weight='auto')
    errors = right.processing['prior_weight_selection']['held_out_error']
    assert max(errors.values()) < 1.02 * min(errors.values())


def test_the_command_line_says_which_set_to_trust_and_why(tmp_path, capsys):
    from helpers import write_log_csv
    from manipulator_dynamics import cli
    model = md.load_model(robots.path('demo_arm'))
    t, q, tau = wrong_prior_log(model, 1.3, seed=1)
    write_log_csv(tmp_path / 'log.csv', model.joint_names, t, q, tau)
    command = ['identify', robots.path('demo_arm'), str(tmp_path / 'log.csv'), '--cutoff', '5',
               '--physically-consistent']
    assert cli.main(command) == 0
    out = capsys.readouterr().out
    assert re.search(r'prior weight [0-9.]+ \(chosen: the smallest 3-fold held-out error of the '
                     r'consistent set\): 0.1 .* %; least squares [0-9.]+ %\. (Trust the '
                     r'consistent set|Least squares predicts)', out), out
    assert cli.main(command + ['--prior-weight', '2']) == 0
    assert 'prior weight' not in capsys.readouterr().out.split('standard parameter')[-1]
    # too short to cut into folds: the default weight, and why
    short = tmp_path / 'short.csv'
    write_log_csv(short, model.joint_names, t[:800], q[:800], tau[:800])
    assert cli.main(command[:2] + [str(short), '--cutoff', '5', '--physically-consistent']) == 0
    out = capsys.readouterr().out
    assert re.search(r'prior weight: not chosen from the data: 1, the default: .*(\d+ states '
                     r'after the filter .* give \d+ equations for \d+ base parameters|none long '
                     r'enough to filter at 5 Hz)', out), out


def test_the_weight_path_reaches_weak_priors_where_newton_from_the_prior_crawls():
    """
    Continuation in the weight: each solve starts from the last one's optimum.

    A weak prior's optimum lies far from the prior: from the prior, Newton crawls (damped steps
    against the barrier); along the path from 100 down, every weight converges in a few steps
    each, at the optimum a solve from the prior reaches.
    """
    model = md.load_model(robots.path('demo_arm'))
    estimate = md.identify(model, wrong_prior_log(model, 1.3, seed=1), cutoff=5.0,
                           physically_consistent=True)
    assert estimate.consistency['converged']
    base = estimate.base
    fit = consistent.ConsistentFit(base, md.standard_parameters(model, friction=True),
                                   estimate.values)
    rng = np.random.default_rng(0)
    G = rng.normal(size=(400, base.count))
    g = G @ estimate.values + 0.01 * rng.normal(size=400)
    Q, R = np.linalg.qr(G)
    path = fit.path(R, Q.T @ g, (0.01, 1.0, 100.0))
    assert sorted(path) == [0.01, 1.0, 100.0]
    for weight, (phi, info) in path.items():
        assert info['converged'], (weight, info)
        assert consistent.physical_problems(phi, base.standard_names) == []
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', md.ConvergenceWarning)
            alone, told = fit.solve(R, Q.T @ g, weight)
        if told['converged']:                               # the same convex optimum
            # converged: half the Newton decrement below 1e-9 of the objective; a parameter
            # the weak prior barely holds moves that little by 1e-4 (MZ_link2: 1.1e-4)
            assert np.allclose(phi, alone, rtol=1e-3, atol=1e-8 * np.abs(alone).max())
        if weight == 0.01:                                  # measured: 5 steps against 23
            assert 3 * info['iterations'] < told['iterations'], (info, told)


def test_prior_weight_must_be_positive(demo_motion):
    model, motion = demo_motion
    tau = simulate(model, motion)
    with pytest.raises(md.IdentificationError, match='prior_weight'):
        md.identify(model, (motion.q, motion.qd, motion.qdd, tau), physically_consistent=True,
                    prior_weight=0.0)
    with pytest.raises(md.IdentificationError, match='prior_weight must be a positive number, '
                       "'auto' or None, got 'fast'"):
        md.identify(model, (motion.q, motion.qd, motion.qdd, tau), physically_consistent=True,
                    prior_weight='fast')
    with pytest.raises(md.IdentificationError, match='needs time series'):
        md.identify(model, (motion.q, motion.qd, motion.qdd, tau), physically_consistent=True,
                    prior_weight='auto')


def test_the_consistent_fit_on_each_joints_factors_is_the_fit_on_every_row():
    """
    The consistent fit on each joint's factors is the one on every weighted row.

    ``solve`` hands it ``(n b, b)`` rows, not ``(N n, b)``: their least squares differ by a
    constant alone.
    """
    from manipulator_dynamics.identification import fit
    arm = md.load_model(robots.path('demo_arm'))
    t, _, _, _, tau, q = measured(arm, seed=4, seconds=40.0)
    found = fit.equations(arm, (t, q, tau), cutoff=10.0)
    estimate = fit.solve(found, physically_consistent=True, prior_weight=1.0)
    N, n, b = found.W.shape
    floor = fit.NOISE_FLOOR * np.sqrt((found.tau ** 2).mean(axis=0))
    weights = 1.0 / np.maximum(estimate.sigma, np.where(floor > 0, floor, 1.0))
    every, _ = fit._consistent(estimate.model, estimate.base,
                               (found.W * weights[None, :, None]).reshape(N * n, b),
                               (found.tau * weights).reshape(-1), estimate.values, 1.0)
    assert N * n > 20 * b
    np.testing.assert_allclose(estimate.standard, every, rtol=1e-7,
                               atol=1e-9 * np.abs(every).max())
