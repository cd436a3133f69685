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

"""The observer, the levels and the wrench one piece at a time: exact cases and bad input."""

from helpers import random_state
import manipulator_dynamics as md
from manipulator_dynamics.contact import detection
from manipulator_dynamics.contact.detection import (ContactDetector, learn_thresholds,
                                                    residual_spread, spread_of_parameters,
                                                    spread_yaml, thresholds)
from manipulator_dynamics.contact.observer import momentum_residual, MomentumObserver, observe
from manipulator_dynamics.contact.wrench import contact_wrench
from manipulator_dynamics.errors import IdentificationError
from manipulator_dynamics.rigid.jacobian import frame_jacobian
import numpy as np
import pytest


def test_a_held_external_torque_is_followed_with_the_designed_lag(arm):
    """
    A robot held still against gravity and a constant external torque: the designed lag.

    The efforts it reports are g - tau_ext, and the residual is tau_ext (1 - exp(-K t))
    exactly, sample by sample, whatever the (uneven) intervals.
    """
    rng = np.random.default_rng(0)
    q = np.full(arm.n, 0.3)
    ext = rng.uniform(-3, 3, arm.n)
    gain = rng.uniform(20, 80, arm.n)
    t = np.cumsum(rng.uniform(0.5e-3, 3e-3, 400))
    tau = np.tile(md.gravity_torques(arm, q) - ext, (len(t), 1))
    r = momentum_residual(arm, t, np.tile(q, (len(t), 1)), np.zeros((len(t), arm.n)), tau, gain)
    expected = ext * (1 - np.exp(-gain * (t - t[0])[:, None]))
    np.testing.assert_allclose(r, expected, rtol=0, atol=1e-12 * np.abs(ext).max())


def test_free_motion_by_the_model_itself_leaves_no_residual(arm):
    """Efforts from the model's own inverse dynamics along a motion: r stays at rounding."""
    t = np.arange(2000) * 1e-3
    w = np.linspace(1, 3, arm.n)
    q = 0.5 * np.sin(w * t[:, None])
    qd = 0.5 * w * np.cos(w * t[:, None])
    # what the joints applied over each interval: its mean (the dynamics integrated exactly
    # between states would need the plant; the midpoint's torque is exact to O(dt^2))
    mid = t[:-1] + 5e-4
    tau = np.zeros_like(q)
    tau[1:] = md.inverse_dynamics(arm, 0.5 * np.sin(w * mid[:, None]),
                                  0.5 * w * np.cos(w * mid[:, None]),
                                  -0.5 * w * w * np.sin(w * mid[:, None]))
    r = momentum_residual(arm, t, q, qd, tau, friction=False)
    scale = np.abs(tau).max()
    assert np.abs(r[1:]).max() < 1e-4 * scale        # O(dt^2) of the torques' scale


def test_repeats_are_skipped_and_time_may_not_go_back(arm):
    observer = MomentumObserver(arm)
    z = np.zeros(arm.n)
    g = md.gravity_torques(arm, z)
    observer.update(0.0, z, z, g + 1.0)
    first = observer.update(0.001, z, z, g + 1.0).copy()
    np.testing.assert_array_equal(observer.update(0.001, z, z, g + 7.0), first)   # a repeat
    with pytest.raises(ValueError, match='older than the last one'):
        observer.update(0.0005, z, z, g)
    observer.reset()
    np.testing.assert_array_equal(observer.residual, 0.0)
    assert observer.since is None
    observer.update(0.0005, z, z, g)                                # after a reset, any time
    with pytest.raises(ValueError, match='t goes back at sample 2'):
        momentum_residual(arm, [0, 1e-3, 5e-4], np.zeros((3, arm.n)), np.zeros((3, arm.n)),
                          np.zeros((3, arm.n)))


@pytest.mark.parametrize('gain, pattern', [
    (-1.0, "gain of joint 'joint1' is -1"), (np.nan, "gain of joint 'joint1' is nan"),
    ([50.0] * 6 + [0.0], "gain of joint 'joint7' is 0"), ([50.0, 60.0], 'one value or one per'),
])
def test_a_gain_that_cannot_work_is_refused_by_joint(arm, gain, pattern):
    with pytest.raises(ValueError, match=pattern):
        MomentumObserver(arm, gain)


@pytest.mark.parametrize('contact, collision, pattern', [
    (1.0, 1.0, "collision threshold of joint 'joint1' \\(1\\) must be above"),
    ([1.0] * 6 + [-1.0], 5.0, "contact threshold of joint 'joint7' is -1"),
    (1.0, np.inf, "collision threshold of joint 'joint1' is inf"),
    ([1.0, 2.0], 5.0, 'contact threshold: one value or one per joint'),
])
def test_thresholds_that_cannot_work_are_refused_by_joint(arm, contact, collision, pattern):
    with pytest.raises(ValueError, match=pattern):
        thresholds(arm, contact, collision)


def test_levels_and_the_latched_collision(arm):
    levels = thresholds(arm, 1.0, 3.0)
    detector = ContactDetector(arm, levels)
    r = np.zeros(arm.n)
    assert detector.update(r, 0.0) == detection.FREE
    r[2] = -1.5
    assert detector.update(r, 0.1) == detection.CONTACT
    r[2], r[5] = -3.5, 4.0
    assert detector.update(r, 0.2) == detection.COLLISION and detector.new
    assert detector.collision.joints == ('joint3', 'joint6')
    r[5] = 6.0
    assert detector.update(r, 0.3) == detection.COLLISION and not detector.new   # latched
    assert detector.update(np.zeros(arm.n), 0.4) == detection.COLLISION          # still
    assert 'joint6 6 N m' in detector.collision.describe(arm)
    released = detector.rearm()
    assert released.time == 0.2 and released.peak[5] == 6.0
    assert detector.update(np.zeros(arm.n), 0.5) == detection.FREE
    assert detector.rearm() is None


def test_learnt_thresholds_are_the_spread_times_the_documented_multiples(arm):
    rng = np.random.default_rng(1)
    r = rng.normal(size=(500, arm.n)) * np.linspace(0.1, 1.0, arm.n)
    levels = learn_thresholds(arm, r)
    spread = np.quantile(np.abs(r), detection.SPREAD_QUANTILE, axis=0)
    np.testing.assert_allclose(levels.contact, detection.CONTACT_MULTIPLE * spread)
    np.testing.assert_allclose(levels.collision, detection.COLLISION_MULTIPLE * spread)
    r[:, 3] = 0.0                                 # a joint that never moved: no spread to learn
    with pytest.raises(ValueError, match="joint 'joint4': its free-motion spread is 0"):
        learn_thresholds(arm, r)


def test_a_single_moment_does_not_set_the_spread_and_is_reported_with_its_time(arm):
    """
    A stop at the end of a run (a spike that decays through the lag): left out, and said.

    The rest of the run sets the spread; a stretch the user leaves out is left out too; a
    residual as even as noise has no moment, and its spread is its 99.9th percentile.
    """
    rng = np.random.default_rng(3)
    t = np.arange(20000) * 1e-3
    r = rng.normal(size=(len(t), arm.n)) * 0.5
    plain, none = detection.free_motion_spread(arm, r, t)
    assert none == [] and np.array_equal(plain, np.quantile(np.abs(r), 0.999, axis=0))
    stop = (t >= 19.5) & (t < 19.56)                    # 88 N m on joint2, decaying
    r[stop, 1] += 88.0 * np.exp(-(t[stop] - 19.5) / 0.02)
    spread, moments = detection.free_motion_spread(arm, r, t)
    assert spread[1] == pytest.approx(plain[1], rel=1e-3) and spread[1] < 3.0
    assert [m.joint for m in moments] == ['joint2']
    assert moments[0].start == pytest.approx(19.5) and moments[0].peak > 80.0
    assert 'joint2 at 19.500-' in moments[0].describe()
    levels = learn_thresholds(arm, r, t=t)
    assert levels.contact[1] == pytest.approx(detection.CONTACT_MULTIPLE * plain[1], rel=1e-3)
    r[5000:5030, 4] += 2.5                              # a bump the user knows of
    lifted, _ = detection.free_motion_spread(arm, r, t)
    kept, _ = detection.free_motion_spread(arm, r, t, exclude=[(4.99, 5.04)])
    assert kept[4] == pytest.approx(np.quantile(np.abs(np.r_[r[:4990, 4], r[5041:, 4]]), 0.999))
    assert lifted[4] > 1.2 * kept[4]
    with pytest.raises(ValueError, match='leave fewer than two samples'):
        detection.free_motion_spread(arm, r, t, exclude=[(0.0, 20.0)])


def test_excursions_under_the_contact_level_do_not_set_the_spread_by_their_height(arm):
    """
    The spread is a quantile of free motion, not its maximum: short excursions count by weight.

    A real arm's residual jumps at each reversal (friction's sign, a velocity that lags): here
    0.05 % of the run at 1.8 times the joint's 99.9th percentile, under the contact level so no
    moment.  The maximum would take them as the spread and put contact at 3.6 times the
    percentile; the quantile hardly moves, and the run stays under its levels.
    """
    rng = np.random.default_rng(4)
    t = np.arange(60000) * 1e-3
    r = rng.normal(size=(len(t), arm.n)) * 0.5
    even, _ = detection.free_motion_spread(arm, r, t)
    jumps = rng.choice(len(t), 30, replace=False)
    r[jumps, 2] = 1.8 * even[2] * rng.choice([-1.0, 1.0], 30)
    spread, moments = detection.free_motion_spread(arm, r, t)
    assert moments == [] and np.abs(r[:, 2]).max() == pytest.approx(1.8 * even[2])
    assert even[2] <= spread[2] < 1.1 * even[2]
    levels = learn_thresholds(arm, r, t=t)
    detector = ContactDetector(arm, levels)
    assert all(detector.update(x, k * 1e-3) == detection.FREE for k, x in enumerate(r[::7]))


def test_the_spread_written_with_the_parameters_is_read_back_at_its_gain_only(arm, tmp_path):
    t = np.arange(600) * 1e-3
    rng = np.random.default_rng(2)
    q, qd = rng.normal(size=(2, 600, arm.n)) * 0.01
    tau = md.gravity_torques(arm, q) + rng.normal(size=(600, arm.n))
    log = {'t': t, 'q': q, 'qd': qd, 'tau': tau}
    spread = residual_spread(arm, log, 50.0)
    document = {'contact_spread': spread_yaml(arm, spread, 50.0, 'run2.csv')}
    np.testing.assert_array_equal(spread_of_parameters(arm, document, 50.0), spread)
    with pytest.raises(ValueError, match='measured at observer gain 50.0 1/s'):
        spread_of_parameters(arm, document, 100.0)
    assert spread_of_parameters(arm, {'standard_parameters': {'M_link1': 1.0}}, 50.0) is None
    with pytest.raises(IdentificationError, match='log 1 has no measured velocities'):
        residual_spread(arm, {'t': t, 'q': q, 'tau': tau})


def test_the_wrench_estimate_at_the_tip_and_half_way(arm):
    rng = np.random.default_rng(3)
    q, _, _ = random_state(arm, rng)
    F = rng.uniform(-5, 5, 6)
    # link2's two joints: only the moment about joint 2's own axis (a coordinate axis of its
    # frame) is a component they see whole; at the tool all six
    axis = 3 + int(np.argmax(np.abs(arm.axis[1])))
    for link, observable in (('tool0', list(range(6))), ('link2', [axis])):
        J = frame_jacobian(arm, link, q)
        estimate = contact_wrench(arm, link, q, J.T @ F)
        assert np.flatnonzero(estimate.observable).tolist() == observable
        np.testing.assert_allclose(estimate.wrench[estimate.observable], F[estimate.observable],
                                   rtol=1e-9, atol=1e-9)
        assert np.isnan(estimate.wrench[~estimate.observable]).all()
    assert contact_wrench(arm, 'link2', q, np.zeros(arm.n)).rank == 2
    # J^T F is what inverse dynamics subtracts for f_ext
    qd, qdd = rng.uniform(-1, 1, (2, arm.n))
    difference = md.inverse_dynamics(arm, q, qd, qdd) - md.inverse_dynamics(
        arm, q, qd, qdd, f_ext={'tool0': F})
    np.testing.assert_allclose(difference, frame_jacobian(arm, 'tool0', q).T @ F, atol=1e-12)


def test_the_wrench_refuses_what_it_cannot_use(arm):
    q = np.zeros(arm.n)
    with pytest.raises(ValueError, match="'hand' is not a link of model"):
        contact_wrench(arm, 'hand', q, q)
    with pytest.raises(ValueError, match=r"tau_ext\[0\] is nan for joint 'joint1'"):
        contact_wrench(arm, 'tool0', q, np.full(arm.n, np.nan))
    assert not contact_wrench(arm, 'base_link', q, q).observable.any()   # fixed to the base


def test_the_momentum_terms_are_M_qd_and_C_transpose_qd_less_gravity_and_friction(rigid):
    """One Coriolis pass gives p and s: against inertia_matrix, coriolis_matrix, gravity."""
    from manipulator_dynamics.contact.observer import momentum_terms
    from manipulator_dynamics.control import friction_torque
    rng = np.random.default_rng(4)
    q, qd, _ = random_state(rigid, rng, N=5)
    p, s = momentum_terms(rigid, q, qd, still=0.0)
    M, C = md.inertia_matrix(rigid, q), md.coriolis_matrix(rigid, q, qd)
    expected = np.einsum('sji,sj->si', C, qd) - md.gravity_torques(rigid, q) \
        - friction_torque(rigid, qd)
    np.testing.assert_allclose(p, np.einsum('sij,sj->si', M, qd), rtol=1e-10,
                               atol=1e-10 * np.abs(p).max())
    np.testing.assert_allclose(s, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
    one = momentum_terms(rigid, q[2], qd[2], friction=False)
    np.testing.assert_allclose(one[1], s[2] + friction_torque(rigid, qd[2]), rtol=1e-10,
                               atol=1e-10 * np.abs(s).max())
    # a joint slower than `still`: its Coulomb part left to the band, the rest of its law kept
    slow = qd[2].copy()
    slow[1] = 0.004
    _, s_slow = momentum_terms(rigid, q[2], slow, still=0.01)
    _, s_law = momentum_terms(rigid, q[2], slow, still=0.0)
    coulomb = rigid.coulomb[1] * (np.tanh(0.004 / rigid.coulomb_velocity[1])
                                  if rigid.coulomb_velocity[1] > 0 else 1.0)
    np.testing.assert_allclose(s_slow - s_law, np.eye(rigid.n)[1] * coulomb, rtol=1e-9,
                               atol=1e-12)


def test_at_rest_dry_friction_is_a_band_not_a_false_push(arm):
    """
    A joint held still by its dry friction: whatever it holds within +-Fc is no contact.

    The efforts leave an unexplained 0.7 Fc on joint 2 at rest (the stiction a brake would
    hold): the residual shows it, the band rises to Fc through the lag and the levels see
    nothing; 1.5 Fc is a push (0.5 Fc beyond what friction can hold).
    """
    model = arm.with_joint_dynamics({'joint2': {'coulomb': 2.0}})
    t = np.arange(400) * 1e-3
    q = np.tile(np.full(model.n, 0.3), (len(t), 1))
    # at rest: velocities that are noise, whose sign flips (their momentum's noise, 1e-6 x M
    # per ms, stays far below the torques here)
    qd = np.random.default_rng(5).normal(size=q.shape) * 1e-6
    g = md.gravity_torques(model, q[0])
    for share, expected in ((0.7, detection.FREE), (1.5, detection.CONTACT)):
        held = np.zeros(model.n)
        held[1] = share * 2.0
        tau = np.tile(g - held, (len(t), 1))
        r, band = observe(model, t, q, qd, tau)
        settled = t > 0.2
        np.testing.assert_allclose(r[settled, 1], held[1], rtol=0, atol=0.02)
        np.testing.assert_allclose(band[settled, 1], 2.0, rtol=1e-3)
        detector = ContactDetector(model, thresholds(model, 0.4, 1.2))
        assert detector.update(r[-1], t[-1], band[-1]) == expected
        assert detector.update(r[-1], t[-1]) == detection.COLLISION   # without the band
