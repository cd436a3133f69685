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

"""Excitation trajectories: at rest at both ends, inside every limit, better excitation."""

import csv
import json
import re

from helpers import erd, needs_erd
import manipulator_dynamics as md
from manipulator_dynamics import cli, robots
import numpy as np
import pytest

MARGIN = 0.05


def demo_urdf(**joints):
    """Return the demo arm's URDF with some joints' ``<limit>`` attributes replaced."""
    with open(robots.path('demo_arm'), encoding='utf-8') as f:
        text = f.read()
    for joint, attributes in joints.items():
        head, rest = text.split(f'<joint name="{joint}"', 1)
        block, tail = rest.split('</joint>', 1)
        for key, value in attributes.items():
            block = re.sub(f'{key}="[^"]*"', f'{key}="{value}"', block)
        text = f'{head}<joint name="{joint}"{block}</joint>{tail}'
    return text


@pytest.fixture(scope='module')
def demo():
    model = md.load_model(robots.path('demo_arm'))
    return model, md.excitation_trajectory(model, duration=10.0, maxiter=40)


def inside(model, motion, margin=MARGIN):
    """Worst use of each limit over every sample: position, velocity, effort (1 = at the limit)."""
    span = model.upper - model.lower
    middle = 0.5 * (model.upper + model.lower)
    position = np.abs(motion.q - middle) / ((0.5 - margin) * span)
    velocity = np.abs(motion.qd) / ((1 - margin) * model.velocity_limit)
    tau = md.inverse_dynamics(model, motion.q, motion.qd, motion.qdd, friction=True)
    effort = np.abs(tau) / ((1 - margin) * model.effort_limit)
    return position.max(axis=0), velocity.max(axis=0), effort.max(axis=0)


def test_starts_and_ends_at_rest_and_repeats(demo):
    model, motion = demo
    assert motion.t[0] == 0 and motion.t[-1] == pytest.approx(10.0)
    assert np.allclose(np.diff(motion.t), 0.01)
    for k in (0, -1):
        assert np.abs(motion.qd[k]).max() < 1e-12 and np.abs(motion.qdd[k]).max() < 1e-12
    assert np.allclose(motion.q[0], motion.q[-1], atol=1e-12)
    assert np.abs(motion.qd).max() > 0.5            # and it moves in between


def test_velocities_and_accelerations_are_the_derivatives(demo):
    """Central differences of ``sample`` at arbitrary times: the series is its own derivative."""
    _, motion = demo
    t, h = np.random.default_rng(3).uniform(0, 10, 50), 1e-5
    q, qd, qdd = motion.sample(t)
    plus, minus = motion.sample(t + h), motion.sample(t - h)
    assert np.allclose((plus[0] - minus[0]) / (2 * h), qd, atol=1e-7)
    assert np.allclose((plus[1] - minus[1]) / (2 * h), qdd, atol=1e-6)
    assert np.allclose(motion.sample(motion.t)[0], motion.q, atol=1e-12)


def test_every_sample_is_inside_the_limits(demo):
    model, motion = demo
    for use in inside(model, motion):
        assert use.max() <= 1 + 1e-9, use


def test_binding_limits_are_met_not_ignored():
    """
    Tight position, velocity and effort limits on some joints: the optimum runs into them.

    Each tightened limit is used to above 90 % (so the constraint was active, not trivially
    met) and never beyond, on every written sample at 250 Hz (finer than the optimiser's).
    """
    model0 = md.load_model(robots.path('demo_arm'))
    g = md.gravity_torques(model0, np.zeros(model0.n))
    urdf = demo_urdf(joint1={'lower': -0.3, 'upper': 0.5}, joint3={'velocity': 0.4},
                     joint2={'effort': f'{2.0 * abs(g[1]) + 20:.1f}'})
    model = md.load_model(urdf)
    # maxiter 100: the second stage converges in fewer; cut at 40 it stopped, on some builds of
    # numpy/scipy, while still moving towards the limits (84 % of joint 1's range).  5 s and 3
    # harmonics reach the limits as 10 s and 5 did (99.8 % against 94 %), in a third of the time
    motion = md.excitation_trajectory(model, duration=5.0, harmonics=3, maxiter=100, rate=250.0)
    position, velocity, effort = inside(model, motion)
    for use in (position[0], velocity[2], effort[1]):
        assert 0.9 < use <= 1 + 1e-9, (position, velocity, effort)


def test_a_robot_that_cannot_hold_mid_range_moves_about_a_posture_it_can_hold():
    """
    Joint 2 needs 51 N m at the middle of its range [0.3, 2.0] and may give 40: start elsewhere.

    (A Baxter's shoulder is such a joint in its URDF: its spring is not modelled.)  The motion
    is designed about a posture found to hold, and every sample stays inside every limit.
    """
    model = md.load_model(demo_urdf(joint2={'lower': 0.3, 'upper': 2.0, 'effort': 40}))
    motion = md.excitation_trajectory(model, duration=5.0, harmonics=3, maxiter=5)
    for use in inside(model, motion):
        assert use.max() <= 1 + 1e-9, use
    assert abs(motion.offset[1] - 1.15) > 0.2                 # not about the middle


def test_a_robot_that_holds_itself_nowhere_is_told_which_joints():
    weak = demo_urdf(joint2={'lower': 0.3, 'upper': 2.0, 'effort': 0.01})
    with pytest.raises(ValueError, match=r'no posture found.*joint2 \(\d+%\) of the limit'):
        md.excitation_trajectory(md.load_model(weak), duration=5.0)


def test_a_robot_whose_friction_takes_its_whole_effort_is_told_which_joints():
    """Upright it holds itself with no effort at all; moving needs more than 0.01 N m."""
    weak = demo_urdf(**{f'joint{j}': {'effort': 0.01} for j in range(1, 8)})
    model = md.load_model(weak)
    stuck = [j for j, c in zip(model.joint_names, model.coulomb) if c >= 0.0095]
    assert stuck
    with pytest.raises(ValueError, match='cannot move.*Coulomb friction of ' + ', '.join(stuck)):
        md.excitation_trajectory(model, duration=5.0)


def test_optimised_motion_excites_better_than_its_random_start(demo):
    """
    The condition number falls well below the seeded random motion's; it is the one identify sees.

    ``identify`` computes the condition number of W_B with unit columns by its own path
    (torques simulated without noise from the motion).
    """
    model, motion = demo
    assert motion.condition < 0.5 * motion.initial_condition
    assert motion.condition < 20
    tau = md.inverse_dynamics(model, motion.q, motion.qd, motion.qdd, friction=True)
    estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, tau))
    assert estimate.condition == pytest.approx(motion.condition, rel=1e-9)
    assert estimate.base.count == motion.base.count
    assert np.allclose(estimate.values, estimate.base.values, rtol=1e-6,
                       atol=1e-9 * np.abs(estimate.base.values).max())


def test_same_seed_same_motion_other_seed_other_start():
    model = md.load_model(robots.path('demo_arm'))
    kw = {'duration': 5.0, 'harmonics': 3, 'maxiter': 3}
    a, b = (md.excitation_trajectory(model, **kw) for _ in range(2))
    c = md.excitation_trajectory(model, seed=1, **kw)
    assert np.array_equal(a.q, b.q) and a.condition == b.condition
    assert not np.allclose(a.q, c.q) and a.initial_condition != c.initial_condition
    assert a.elapsed > 0 and a.iterations >= 1 and '1 period of 5 s' in a.summary()


@pytest.mark.parametrize('kw, words', [
    ({'duration': 7.0, 'frequency': 0.1}, ['whole number of periods', '0.1 Hz']),
    ({'duration': -1.0}, ['duration', 'positive']),
    ({'duration': 10.0, 'harmonics': 1}, ['harmonics', 'at least 2']),
    ({'duration': 10.0, 'margin': 0.6}, ['margin']),
    ({'duration': 10.0, 'rate': 0.0}, ['rate']),
    ({'duration': 10.0, 'criterion': 'd-optimal'}, ['criterion', 'relative_std, condition']),
    ({'duration': 10.0, 'noise': 0.0}, ['noise', 'positive']),
])
def test_bad_arguments_say_what_is_wrong(kw, words):
    model = md.load_model(robots.path('demo_arm'))
    with pytest.raises(ValueError) as e:
        md.excitation_trajectory(model, **kw)
    for w in words:
        assert w in str(e.value)


def test_a_joint_without_velocity_limit_is_named():
    model = md.load_model(demo_urdf(joint4={'velocity': 0}))
    with pytest.raises(ValueError, match='joint4.*velocity limit'):
        md.excitation_trajectory(model, duration=10.0)


def test_cli_writes_the_motion_as_csv(tmp_path, capsys):
    out = tmp_path / 'traj.csv'
    code = cli.main(['excitation', '--duration', '5', '--harmonics', '3', '--maxiter', '5',
                     '--rate', '20', '--output', str(out), '--format', 'json', '--criterion',
                     'condition'])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    with open(out, newline='', encoding='utf-8') as f:
        rows = list(csv.DictReader(f))
    model = md.load_model(robots.path('demo_arm'))
    assert len(rows) == report['samples'] == 101
    assert float(rows[-1]['time']) == pytest.approx(5.0)
    q = np.array([[float(r[f'{j}.position']) for j in model.joint_names] for r in rows])
    qd = np.array([[float(r[f'{j}.velocity']) for j in model.joint_names] for r in rows])
    assert np.abs(qd[[0, -1]]).max() < 1e-9 and np.ptp(q, axis=0).min() > 0
    assert report['condition'] < report['initial_condition']
    assert report['criterion'] == 'condition'
    predicted = report['predicted_relative_std_percent']
    assert list(predicted) == list(md.base_parameters(model, friction=True).names)
    assert report['predicted_well_identified'] == sum(
        r is not None and r < 10 for r in predicted.values())


def test_cli_rejects_a_duration_of_no_whole_period(capsys):
    code = cli.main(['excitation', '--duration', '7', '--frequency', '0.1'])
    assert code == 2
    assert 'whole number of periods' in capsys.readouterr().err


@needs_erd
def test_identification_from_the_optimised_motion_beats_a_random_one():
    """
    Panda, 20 s at 100 Hz, torques with 2 % noise: each design stage identifies more.

    The same noise model for every motion (2 % of each joint's RMS torque, Gaussian), counted as
    an engineer counts: base parameters below 10 % relative standard deviation.  The condition
    number design beats the random start (and its condition number falls to a fifth or less);
    the relative-deviation stage beats the condition number alone, and its prediction is what
    the identification then finds, within two parameters.  (The parameters it leaves above
    the line are measured in the README: 1e-4 kg m^2 stays under the noise of a gravity-loaded
    joint whatever the motion.)
    """
    model = md.load_model(erd('panda_description/urdf/panda.urdf'), tip_links=['panda_link8'])
    rng = np.random.default_rng(7)

    def identified(motion):
        tau = md.inverse_dynamics(model, motion.q, motion.qd, motion.qdd, friction=True)
        noisy = tau + 0.02 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
        estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, noisy), friction=False)
        return (estimate.relative_std < 10).sum(), estimate.condition

    kw = {'duration': 20.0, 'friction': False}
    start = md.excitation_trajectory(model, maxiter=0, **kw)
    alone = md.excitation_trajectory(model, maxiter=60, criterion='condition', **kw)
    both = md.excitation_trajectory(model, maxiter=30, **kw)
    (good0, cond0), (good1, cond1), (good2, _) = map(identified, (start, alone, both))
    assert cond1 < 0.2 * cond0
    assert good1 >= good0 + 3, (good0, good1)
    assert good2 >= good1 + 3, (good1, good2)
    assert abs(both.well_identified[0] - good2) <= 2 and both.well_identified[1] == 43


def test_predicted_deviations_are_the_ones_identification_finds():
    """
    ``predicted_relative_std`` is weighted least squares' own covariance on the motion.

    Demo arm, torques with the noise the prediction assumes (2 % of each joint's RMS torque):
    identify's standard deviations equal the predicted ones to the noise estimate's own
    scatter.  The relative-deviation design floors each joint's noise at its level on the
    condition-number optimum (a sensor's noise does not fall when the joint idles), so there it
    predicts no less than identify finds.
    """
    model = md.load_model(robots.path('demo_arm'))
    rng = np.random.default_rng(3)
    for criterion in ('condition', 'relative_std'):
        motion = md.excitation_trajectory(model, duration=10.0, harmonics=3, maxiter=15,
                                          criterion=criterion)
        tau = md.inverse_dynamics(model, motion.q, motion.qd, motion.qdd, friction=True)
        noisy = tau + 0.02 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
        estimate = md.identify(model, (motion.q, motion.qd, motion.qdd, noisy))
        known = np.isfinite(motion.predicted_relative_std)
        values = np.abs(motion.base.values)        # rounding leaves 1e-19 where zero is meant
        assert np.array_equal(known, values > 1e-6 * values.max()) and known.sum() > 20
        predicted = motion.predicted_relative_std[known] * np.abs(motion.base.values[known]) / 100
        ratio = estimate.std[known] / predicted
        if criterion == 'condition':
            assert np.all(np.abs(ratio - 1) < 0.1), ratio
        else:
            assert np.all(ratio < 1.1) and np.median(ratio) > 0.5, ratio
        assert motion.criterion == criterion and motion.noise == 0.02
