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

"""Payloads: attached to any link of a model, and identified from a short motion."""

from helpers import erd, needs_erd, write_log_csv
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.model import inertia_tensor, link_parameters, PARAMETER_NAMES
import numpy as np
import pytest

GRIPPER = robots.path('demo_arm_gripper')
BOX = (1.2, [0.01, -0.02, 0.08], [0.004, 0.0003, -0.0002, 0.005, 0.0001, 0.003])


def point_masses(model, link, masses, points):
    """Return the model with point masses at ``points`` of ``link``, by the URDF route."""
    for m, p in zip(masses, points):
        model = model.with_payload(link, m, p)
    return model


def test_a_payload_is_its_mass_at_its_place_whatever_the_link():
    """
    On a tool frame (fixed, rotated, offset) or on the body's own link: the same torques.

    The tool frame's pose in the body comes from the model; a point mass given in the tool
    frame at ``c`` is the one given in the body's link at ``R c + p``.
    """
    model = md.load_model(GRIPPER, tip_links=['tool0'])
    frame = model.frames['tool0']
    body_link = model.link_names[frame.body]
    c = np.array([0.02, -0.01, 0.05])
    a = model.with_payload('tool0', 0.8, c)
    b = model.with_payload(body_link, 0.8, frame.R @ c + frame.p)
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, (10, model.n)) for _ in range(3))
    ta, tb = (md.inverse_dynamics(m, q, qd, qdd) for m in (a, b))
    assert np.allclose(ta, tb, rtol=1e-12, atol=1e-12)
    assert not np.allclose(ta, md.inverse_dynamics(model, q, qd, qdd), rtol=1e-3)


def test_a_payload_inertia_is_that_of_its_masses():
    """Six point masses about a centre: the payload given by mass, CoM and their inertia."""
    model = md.load_model(robots.path('demo_arm'))
    centre, d, m = np.array([0.01, 0.02, 0.1]), 0.05, 0.2
    points = [centre + s * d * e for e in np.eye(3) for s in (-1, 1)]
    masses = [m] * 6
    inertia = np.diag([4 * m * d * d] * 3)          # two pairs of masses off each axis
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-1, 1, (10, model.n)) for _ in range(3))
    expected = md.inverse_dynamics(point_masses(model, 'link7', masses, points), q, qd, qdd)
    got = md.inverse_dynamics(model.with_payload('link7', 6 * m, centre, inertia), q, qd, qdd)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('args, words', [
    (('nolink', 1.0), ["'nolink' is not a link"]),
    (('world', 1.0), ["'world' is fixed to the base"]),
    (('link7', -1.0), ['mass must be finite and >= 0']),
    (('link7', 1.0, [0, 0]), ['com must be 3 finite numbers']),
    (('link7', 1.0, [0, 0, 0], [1, 0, 0, 1, 0, 3]), ['principal moments', 'sum of the other']),
    (('link7', 1.0, [0, 0, 0], [1, 2]), ['3x3 tensor or 6 numbers']),
])
def test_a_bad_payload_says_what_is_wrong(args, words):
    model = md.load_model(robots.path('demo_arm'))
    with pytest.raises(ValueError) as e:
        model.with_payload(*args)
    for w in words:
        assert w in str(e.value)


@pytest.fixture(scope='module')
def motion():
    model = md.load_model(GRIPPER, tip_links=['tool0'])
    # the first stage only: ten payload parameters need no more, in a third of the time
    return model, md.excitation_trajectory(model, duration=10.0, maxiter=10,
                                           criterion='condition')


def test_identify_payload_exactly_without_noise(motion):
    model, mo = motion
    held = model.with_payload('tool0', *BOX)
    tau = md.inverse_dynamics(held, mo.q, mo.qd, mo.qdd, friction=True)
    payload = md.identify_payload(model, (mo.q, mo.qd, mo.qdd, tau), 'tool0')
    assert payload.mass == pytest.approx(BOX[0], rel=1e-8)
    assert np.allclose(payload.com, BOX[1], atol=1e-8)
    xx, xy, xz, yy, yz, zz = BOX[2]
    assert np.allclose(payload.inertia, [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], atol=1e-8)
    again = payload.apply(model)
    assert np.allclose(md.inverse_dynamics(again, mo.q, mo.qd, mo.qdd, friction=True), tau,
                       atol=1e-8 * np.abs(tau).max())


def test_identify_payload_within_its_sigmas_with_noise(motion):
    """
    2 % torque noise, 20 draws: the errors are the size the reported sigmas say.

    Mass and centre of mass errors over their standard deviations have an RMS between 0.5 and
    1.5 (honest sigmas: neither hiding errors nor padding them), none beyond 4, and the mass is
    known to 5 %.
    """
    model, mo = motion
    held = model.with_payload('tool0', *BOX)
    tau = md.inverse_dynamics(held, mo.q, mo.qd, mo.qdd, friction=True)
    z = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        noisy = tau + 0.02 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
        payload = md.identify_payload(model, (mo.q, mo.qd, mo.qdd, noisy), 'tool0')
        z.append(np.r_[(payload.mass - BOX[0]) / payload.mass_std,
                       (payload.com - BOX[1]) / payload.com_std])
        assert payload.mass_std < 0.05 * BOX[0]
    rms = np.sqrt((np.array(z) ** 2).mean(axis=0))
    assert np.all((rms > 0.5) & (rms < 1.5)), rms
    assert np.abs(z).max() < 4
    assert payload.to_dict()['mass'] == payload.mass


def test_a_noisy_inertia_is_refused_with_the_way_out(motion):
    """
    A point mass's inertia, identified from noisy torques, is no body's: ``apply`` says so.

    The estimate's inertia scatters around zero by its deviations, so that it is not positive
    semi-definite for most noise draws; ``apply`` refuses it naming the deviations, and
    ``apply(model, inertia=False)`` carries the mass at the identified centre of mass.
    """
    model, mo = motion
    held = model.with_payload('tool0', BOX[0], BOX[1])            # a point mass: no inertia
    tau = md.inverse_dynamics(held, mo.q, mo.qd, mo.qdd, friction=True)
    refused = 0
    for seed in range(5):
        rng = np.random.default_rng(seed)
        noisy = tau + 0.02 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
        payload = md.identify_payload(model, (mo.q, mo.qd, mo.qdd, noisy), 'tool0')
        if np.linalg.eigvalsh(payload.inertia).min() < 0:
            refused += 1
            with pytest.raises(md.IdentificationError, match=r'no rigid body.s \(its deviations, '
                               r'XX .* inertia=False\) takes the mass and centre of mass'):
                payload.apply(model)
        point = payload.apply(model, inertia=False)
        expected = model.with_payload('tool0', payload.mass, payload.com)
        assert np.array_equal(point.inertial, expected.inertial)
    assert refused >= 1


def test_identify_payload_from_a_csv_time_series(motion, tmp_path):
    """Positions and efforts over time (filtered and differentiated as identify does)."""
    model, mo = motion
    held = model.with_payload('tool0', *BOX)
    tau = md.inverse_dynamics(held, mo.q, mo.qd, mo.qdd, friction=True)
    write_log_csv(tmp_path / 'log.csv', model.joint_names, mo.t, mo.q, tau)
    payload = md.identify_payload(model, tmp_path / 'log.csv', 'tool0', cutoff=4.0)
    assert payload.mass == pytest.approx(BOX[0], rel=0.01)
    assert np.allclose(payload.com, BOX[1], atol=2e-3)
    assert payload.processing['source'].endswith('log.csv')


def test_a_motion_that_leaves_the_payload_unseen_says_what_it_shows(motion):
    """Only the first joint moves: what it shows is the truth, the rest is said not determined."""
    model, mo = motion
    q, qd, qdd = (np.zeros_like(mo.q) for _ in range(3))
    q[:, 0], qd[:, 0], qdd[:, 0] = mo.q[:, 0], mo.qd[:, 0], mo.qdd[:, 0]
    tau = md.inverse_dynamics(model.with_payload('tool0', *BOX), q, qd, qdd, friction=True)
    payload = md.identify_payload(model, (q, qd, qdd, tau), 'tool0')
    assert 0 < payload.determined.sum() < 10, payload.determined
    assert any('the motion does not excite' in note for note in payload.notes), payload.notes
    truth = link_parameters(BOX[0], np.asarray(BOX[1]), inertia_tensor(BOX[2]))
    shown = payload.determined
    assert np.allclose(payload.values[shown], truth[shown], rtol=1e-6, atol=1e-9)
    ok, why = payload.usable(0.02, 0.01)
    assert not ok and 'is not determined' in why


def test_a_static_pose_shows_the_mass_and_says_which_joints_to_move(motion):
    """Held at one pose with noisy torques: the mass, not the whole centre of mass."""
    model, mo = motion
    q = np.tile(mo.q[len(mo.q) // 3], (2000, 1))
    zero = np.zeros_like(q)
    tau = md.inverse_dynamics(model.with_payload('tool0', *BOX), q, zero, zero, friction=True)
    rng = np.random.default_rng(3)
    noisy = tau + 0.02 * rng.normal(size=tau.shape)
    t = np.arange(len(q)) * 1e-3
    payload = md.identify_payload(model, {'t': t, 'q': q + 1e-6 * rng.normal(size=q.shape),
                                          'tau': noisy}, 'tool0')
    assert payload.mass == pytest.approx(BOX[0], rel=0.02)
    assert payload.mass_std < 0.02 * BOX[0]
    ok, why = payload.usable(0.02, 0.01)
    assert not ok and 'centre of mass' in why and 'the mass' not in why, why
    from manipulator_dynamics.identification.payload import joints_to_move
    turning = joints_to_move(model, 'tool0', q[0])
    assert turning and set(turning) <= set(model.joint_names)
    # a joint about gravity's axis (the first, vertical) turns nothing relative to it
    assert model.joint_names[0] not in turning


def test_identify_payload_rejects_an_unknown_link(motion):
    model, mo = motion
    with pytest.raises(ValueError, match="'nolink' is not a link"):
        md.identify_payload(model, (mo.q, mo.qd, mo.qdd, mo.q), 'nolink')


@needs_erd
def test_panda_payload_on_its_hand():
    """A real robot: a 2 kg object in the panda's hand (fixed to link8), 20 s, 2 % noise."""
    model = md.load_model(erd('panda_description/urdf/panda.urdf'), tip_links=['panda_hand'])
    mo = md.excitation_trajectory(model, duration=20.0, maxiter=20)
    box = (2.0, [0.0, 0.01, 0.1], [0.01, 0.0, 0.0, 0.012, 0.0, 0.008])
    tau = md.inverse_dynamics(model.with_payload('panda_hand', *box), mo.q, mo.qd, mo.qdd,
                              friction=True)
    rng = np.random.default_rng(8)
    noisy = tau + 0.02 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
    payload = md.identify_payload(model, (mo.q, mo.qd, mo.qdd, noisy), 'panda_hand')
    assert abs(payload.mass - 2.0) < 4 * payload.mass_std
    assert np.all(np.abs(payload.com - box[1]) < 4 * payload.com_std)
    assert payload.mass_std < 0.05 and payload.com_std.max() < 0.01


def test_a_load_where_the_axes_hide_it_is_said_not_determined(motion):
    """On link1, turned about a vertical axis alone, a load shows only its moment about it."""
    model, mo = motion
    held = model.with_payload('link1', *BOX)
    tau = md.inverse_dynamics(held, mo.q, mo.qd, mo.qdd, friction=True)
    payload = md.identify_payload(model, (mo.q, mo.qd, mo.qdd, tau), 'link1')
    assert not payload.determined[9] and np.isnan(payload.mass)
    assert np.all(np.isnan(payload.com)) and np.all(np.isnan(payload.inertia))
    assert 'M of a load on link1' in payload.notes[0] and 'not determined' in payload.notes[0]
    # what it does show, the moment about the vertical axis (ZZ about the link's origin), is
    # the truth's
    zz = PARAMETER_NAMES.index('ZZ')
    assert payload.determined.sum() == 1 and payload.determined[zz]
    truth = link_parameters(BOX[0], np.asarray(BOX[1]), inertia_tensor(BOX[2]))
    assert payload.values[zz] == pytest.approx(truth[zz], rel=1e-6)
    with pytest.raises(md.IdentificationError, match='not both determined'):
        payload.parameters_yaml()


def test_the_command_line_identifies_a_load_and_writes_the_nodes_parameters(motion, tmp_path,
                                                                            capsys):
    import yaml
    from manipulator_dynamics.cli import main
    model, mo = motion
    held = model.with_payload('tool0', *BOX)
    tau = md.inverse_dynamics(held, mo.q, mo.qd, mo.qdd, friction=True)
    log, out = tmp_path / 'loaded.csv', tmp_path / 'payload.yaml'
    write_log_csv(log, model.joint_names, mo.t, mo.q, tau)
    urdf = str(GRIPPER)
    common = ['identify-payload', urdf, str(log), '--tip-link', 'tool0', '--link', 'tool0',
              '--cutoff', '4']
    assert main([*common, '--payload-out', str(out), '--format', 'yaml']) == 0
    document = yaml.safe_load(capsys.readouterr().out)
    api = md.identify_payload(model, str(log), 'tool0', cutoff=4.0)
    assert document['mass'] == pytest.approx(api.mass, rel=1e-12)
    assert np.allclose(document['com'], api.com, rtol=1e-12)
    assert document['mass'] == pytest.approx(BOX[0], rel=0.01)
    written = yaml.safe_load(out.read_text())['/**']['ros__parameters']
    assert written['payload_link'] == 'tool0' and len(written['payload']) in (4, 10)
    carrying = model.with_payload('tool0', written['payload'][0], written['payload'][1:4])
    assert np.allclose(carrying.inertial[-1][9], held.inertial[-1][9], rtol=0.01)
    assert main(common) == 0
    table = capsys.readouterr().out
    assert 'load on tool0: mass ' in table and 'centre of mass (m, in tool0)' in table
    # bad input: a link the model lacks, a log of another robot's joints
    assert main([*common[:-4], '--link', 'nolink']) == 2
    assert "'nolink' is not a link" in capsys.readouterr().err
    other = tmp_path / 'other.csv'
    write_log_csv(other, [f'other_{j}' for j in model.joint_names], mo.t, mo.q, tau)
    assert main(['identify-payload', urdf, str(other), '--tip-link', 'tool0', '--link',
                 'tool0']) == 2
    assert 'joint1' in capsys.readouterr().err


@pytest.mark.parametrize('share', [0.7, 1.3])
def test_a_load_on_an_arm_whose_friction_is_off_is_within_three_deviations(motion, share):
    """
    The arm's friction 30 % off its model: the load within 3 of its deviations, 10 draws.

    Fitted without a correction of the arm's friction, the friction's error went into the load:
    its centre of mass 13-26 deviations off (the deviations those of white noise).  With each
    joint's viscous and Coulomb friction corrected in the same fit
    (:func:`.payload.friction_corrections`), and the deviations counting an error correlated in
    time (:func:`.payload.correlated_covariance`), the truth lies within 3 of them, and the
    estimate stays fit to carry.
    """
    import dataclasses
    model, mo = motion
    truth = dataclasses.replace(model, viscous=model.viscous * share,
                                coulomb=model.coulomb * share).with_payload('tool0', *BOX)
    tau = md.inverse_dynamics(truth, mo.q, mo.qd, mo.qdd, friction=True)
    for seed in range(10):
        rng = np.random.default_rng(seed)
        noisy = tau + 0.02 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
        payload = md.identify_payload(model, (mo.q, mo.qd, mo.qdd, noisy), 'tool0')
        z = np.r_[(payload.mass - BOX[0]) / payload.mass_std,
                  (payload.com - BOX[1]) / payload.com_std]
        assert np.all(np.abs(z) < 3.0), z
        assert payload.usable(0.02, 0.01)[0]


def test_deviations_count_an_error_correlated_in_time():
    """A smooth error, not white: the batch-means deviations grow; white noise keeps its own."""
    from manipulator_dynamics.identification.least_squares import weighted_least_squares
    from manipulator_dynamics.identification.payload import correlated_covariance
    rng = np.random.default_rng(0)
    N = 2000
    t = np.linspace(0.0, 10.0, N)
    W = np.stack([np.sin(t), np.cos(0.7 * t), np.ones(N)], axis=-1)[:, None, :]
    white = rng.normal(size=(N, 1))
    smooth = np.sin(0.3 * t)[:, None] + 0.05 * white          # an error that follows the motion
    for error, grows in ((white, False), (smooth, True)):
        fit = weighted_least_squares(W, W @ np.array([1.0, 2.0, 3.0]) + error)
        ratio = np.sqrt(np.diag(correlated_covariance(fit, N)) / np.diag(fit.cov))
        assert np.all(ratio >= 1.0)
        assert (ratio.max() > 3.0) == grows, ratio


@pytest.mark.parametrize('share', [0.85, 1.15])
def test_a_load_on_an_arm_whose_inertia_is_off_counts_the_arm_s_spread(motion, share):
    """
    The arm's inertia 15 % off: given its free-motion spread, the load within 3 deviations.

    The load's parameters absorb the arm's error, which no residual shows.  Without the spread
    the deviations are the noise's and the error's left in the residual, and the truth lies far
    outside them (the check below fails there).  The spread is the observer's as its contact
    levels learn it: the residual of the arm's free motion, without the load, against the
    model (:func:`..contact.detection.motion_spread`).
    """
    import dataclasses
    from manipulator_dynamics.contact.detection import motion_spread
    model, mo = motion
    arm = dataclasses.replace(model, inertial=model.inertial * share)
    expected = md.inverse_dynamics(model, mo.q, mo.qd, mo.qdd, friction=True)
    free = md.inverse_dynamics(arm, mo.q, mo.qd, mo.qdd, friction=True)
    spread, _ = motion_spread(model, free - expected, qd=mo.qd, tau=expected)
    tau = md.inverse_dynamics(arm.with_payload('tool0', *BOX), mo.q, mo.qd, mo.qdd,
                              friction=True)
    rng = np.random.default_rng(0)
    tau = tau + 0.01 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)

    def deviations(payload):
        return np.r_[(payload.mass - BOX[0]) / payload.mass_std,
                     (payload.com - BOX[1]) / payload.com_std]
    alone = md.identify_payload(model, (mo.q, mo.qd, mo.qdd, tau), 'tool0')
    assert np.abs(deviations(alone)).max() > 3.0, deviations(alone)
    counted = md.identify_payload(model, (mo.q, mo.qd, mo.qdd, tau), 'tool0', spread=spread)
    assert np.all(np.abs(deviations(counted)) < 3.0), deviations(counted)
    assert counted.mass == alone.mass and np.all(counted.mass_std >= alone.mass_std)


def test_the_error_bound_is_the_worst_an_error_within_it_does():
    """Every error within the bound moves each parameter by at most the bound's; one reaches it."""
    from manipulator_dynamics.identification.least_squares import weighted_least_squares
    from manipulator_dynamics.identification.payload import error_bound
    rng = np.random.default_rng(1)
    N = 400
    W = rng.normal(size=(N, 2, 3))
    tau = W @ np.array([1.0, -2.0, 0.5]) + 0.01 * rng.normal(size=(N, 2))
    fit = weighted_least_squares(W, tau)
    bound = np.abs(rng.normal(size=(N, 2))) + 0.1
    worst = error_bound(fit, bound)
    effect = np.linalg.pinv(fit.G.T @ fit.G) @ fit.G.T
    for _ in range(50):
        e = bound * rng.uniform(-1.0, 1.0, size=bound.shape)
        assert np.all(np.abs(effect @ (e / fit.sigma).reshape(-1)) <= worst + 1e-12)
    for i in range(3):                          # each state's error of the worst sign
        e = bound * np.sign(effect[i]).reshape(N, 2)
        assert abs(effect[i] @ (e / fit.sigma).reshape(-1)) == pytest.approx(worst[i])
