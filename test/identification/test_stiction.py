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
A robot that comes to rest: its dry friction holds what it holds, not ``Fc sign(noise)``.

The oracle: torques written from the model while the arm moves, and at rest the gravity torque
plus a friction held at half of ``Fc`` (within what a sticking joint can hold), with the
encoder's noise on the positions.  Every equation kept, the Coulomb estimates are several of
their deviations off; with the still speeds they are within 3.
"""

from helpers import exciting
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.identification.logs import differentiate_logs
from manipulator_dynamics.identification.stiction import motor_rows, STILL_REACH, \
    still_speeds, stuck, stuck_rows
import numpy as np
import pytest


def resting_log(model, seed):
    """Return ``(t, q, tau)`` of 12 s of motion slowing to rest, then 4 s at rest."""
    t, q, _, _ = exciting(model, seconds=16.0, seed=seed)
    dt = t[1] - t[0]
    s = np.clip((12.0 - t) / 2.0, 0.0, 1.0)
    s = s * s * (3.0 - 2.0 * s)                             # smoothly to rest at 12 s
    q = q[0] + s[:, None] * (q - q[0])
    qd = np.gradient(q, dt, axis=0)
    tau = md.inverse_dynamics(model, q, qd, np.gradient(qd, dt, axis=0), friction=True)
    tau[t >= 12.0] += 0.5 * model.coulomb                   # held, not +-Fc
    rng = np.random.default_rng(seed)
    return (t, q + rng.normal(size=q.shape) * 1e-5,
            tau + rng.normal(size=tau.shape) * 0.02)


def coulomb_deviations(model, estimate):
    """Return each ``Fc_j``'s error in its reported deviations."""
    truth = dict(zip(estimate.base.standard_names,
                     md.standard_parameters(model, armature=True, friction=True)))
    return np.array([(estimate.values[k] - truth[name]) / estimate.std[k]
                     for k, name in enumerate(estimate.names) if name.startswith('Fc_')])


def test_the_still_speeds_leave_out_the_rest_and_the_dry_friction_comes_back(configured_arm):
    log, check = resting_log(configured_arm, 1), resting_log(configured_arm, 2)
    every = md.identify(configured_arm, log, armature=True, validation=check)
    assert np.abs(coulomb_deviations(configured_arm, every)).max() > 3     # the defect this is for
    assert every.processing['still'] is None and not every.validation.left_out_percent
    estimate = md.identify(configured_arm, log, armature=True, still='auto', validation=check)
    assert np.abs(coulomb_deviations(configured_arm, estimate)).max() < 3
    report = estimate.processing['still']
    assert report['how'].startswith('auto')
    assert set(report['speeds']) == set(configured_arm.joint_names)
    # the rest is a quarter of the states: the fit leaves out its rows, widened by the filter's
    # reach (a cutoff period each way) and the reversals with theirs; validation the states
    for share in report['left_out_percent'].values():
        assert 26 < share < 40
    for share in estimate.validation.left_out_percent.values():
        assert 24 < share < 30
    assert estimate.validation.error['identified'] < 0.2 * every.validation.error['identified']
    assert 'not scored, a joint or its motor stuck' in estimate.validation.table()
    given = md.identify(configured_arm, log, armature=True, still=0.01)
    assert set(given.processing['still']['speeds'].values()) == {0.01}


def test_a_coupled_motor_that_stands_still_leaves_out_both_its_joints():
    model = md.load_model(robots.path('demo_arm'), transmissions={
        'joints': ['joint6', 'joint7'], 'reduction': [[40.0, 0.0], [30.0, 30.0]]})
    rows, names = motor_rows(model)
    assert names[-1] == 'motor of joint7' and list(rows[-1][-2:]) == [1.0, 1.0]
    qd = np.full((3, model.n), 0.5)
    qd[1, 6] = -0.5                 # joints 6 and 7 turn, their motor does not
    qd[2, 2] = 0.0                  # joint 3 stands still alone
    left = stuck(model, qd, np.full(len(rows), 0.1))
    assert not left[0].any()
    assert list(np.flatnonzero(left[1])) == [5, 6] and list(np.flatnonzero(left[2])) == [2]
    assert not stuck(model, qd, np.zeros(len(rows))).any()


def test_one_stuck_state_spoils_the_filtered_rows_within_a_cutoff_period(configured_arm):
    rate, cutoff = 100.0, 5.0                       # 20 samples per Hz: not cut down
    t = np.arange(0.0, 10.0, 1.0 / rate)
    q = 0.3 * np.sin(t)[:, None] + np.zeros((1, configured_arm.n))
    parallel = differentiate_logs(configured_arm, [(t, q, q)], cutoff=cutoff)[4]
    qd = np.full((len(t), configured_arm.n), 0.5)
    at = len(t) // 2
    qd[at, 2] = 0.0                                 # joint 3 sticks for one state
    left = stuck_rows(configured_arm, qd, np.full(configured_arm.n, 0.01), parallel, cutoff)
    source = parallel.kept(np.arange(len(t))[:, None])[:, 0]
    near = np.abs(source - at) <= STILL_REACH * rate / cutoff
    assert near.sum() >= 3                          # the rows it reaches are several
    assert np.array_equal(left[:, 2], near) and not left[:, [0, 1, 3, 4, 5, 6]].any()
    speeds = np.full(configured_arm.n, 0.01)          # arrays, fitted as given: the state's own
    assert np.array_equal(stuck_rows(configured_arm, qd, speeds),
                          stuck(configured_arm, qd, speeds))


@pytest.mark.parametrize('still, complaint', [
    ('fast', "still must be a speed .*'auto' or None, got 'fast'"),
    (-0.1, 'still must be a positive speed'),
    (float('nan'), 'still must be a positive speed'),
])
def test_a_bad_still_speed_is_refused_saying_what_it_takes(configured_arm, still, complaint):
    with pytest.raises(md.IdentificationError, match=complaint):
        still_speeds(configured_arm, still)


def test_auto_still_speeds_need_a_time_series(configured_arm):
    t, q, qd, qdd = exciting(configured_arm, seconds=4.0)
    tau = md.inverse_dynamics(configured_arm, q, qd, qdd, friction=True)
    with pytest.raises(md.IdentificationError, match="still='auto' reads the speeds from a time"):
        md.identify(configured_arm, (q, qd, qdd, tau), still='auto')
    estimate = md.identify(configured_arm, (q, qd, qdd, tau), still=0.05)
    assert estimate.processing['still']['how'] == 'given'
