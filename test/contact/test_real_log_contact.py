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
No false alarm on a real robot: a Franka Emika Panda's log, free motion, no contact.

The log (``../shared/data/panda_gaz2019``, read its README) is a 21 s excitation run with the
robot's own velocity signal and its link-side torque sensors; it lives beside the repository
and without it these tests skip, saying so.  Cut in thirds: on each third held out, the model
is identified on the other two (its friction law and filter cutoff chosen by folds of those
two alone), the thresholds are learnt on another third, and the held-out third must raise no
contact.  The residual there, with the identified model, is smaller than with the URDF's.
"""

import os
import warnings

from helpers import erd, needs_erd, ROOT
import manipulator_dynamics as md
from manipulator_dynamics.contact.detection import (ContactDetector, FREE, learn_thresholds,
                                                    residual_spread, spread_of_parameters,
                                                    spread_yaml, thresholds_from_spread)
from manipulator_dynamics.contact.observer import beyond, momentum_residual, observe
from manipulator_dynamics.recordings.timing import retime
import numpy as np
import pytest

LOG = os.path.join(ROOT, '..', 'shared', 'data', 'panda_gaz2019',
                   'panda_exciting_traj_1.npz')
needs_log = pytest.mark.skipif(not os.path.isfile(LOG), reason=f'the real Panda log is not at '
                               f'{os.path.normpath(LOG)} (../shared/data beside the clone)')
GAIN = 50.0                     # 1/s: the node's default
SETTLE = 5.0 / GAIN             # s: the observer starts each third from rest


@pytest.fixture(scope='module')
def folds():
    """Per held-out third: its samples, the URDF's model, the model identified without it."""
    data = np.load(LOG)
    panda = md.load_model(erd('panda_description/urdf/panda.urdf'), without_links=['panda_hand'],
                          check_inertia='warn')
    order = [list(data['joints']).index(j) for j in panda.joint_names]
    t, q, qd, tau = data['t'], data['q'][:, order], data['qd'][:, order], data['tau'][:, order]
    robot_t, report = retime(t, q, qd)             # the logger's stamps on the robot's clock
    assert report['retimed'], report
    thirds = np.array_split(np.arange(len(t)), 3)
    out = []
    for k, held in enumerate(thirds):
        train = [(t[i], q[i], tau[i]) for j, i in enumerate(thirds) if j != k]
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            estimate = md.select_friction(panda, train, folds=2, physically_consistent=True)
        out.append((held, thirds[(k + 1) % 3], panda, estimate))
    return (robot_t, q, qd, tau), out


def residual(model, log, rows):
    t, q, qd, tau = log
    r = momentum_residual(model, t[rows], q[rows], qd[rows], tau[rows], GAIN)
    return r[t[rows] - t[rows][0] >= SETTLE]


def observed(model, log, rows):
    """Return the settled ``(r, band, qd, tau)`` of ``rows``: what the node's detector takes."""
    t, q, qd, tau = log
    r, band = observe(model, t[rows], q[rows], qd[rows], tau[rows], GAIN)
    settled = t[rows] - t[rows][0] >= SETTLE
    return r[settled], band[settled], qd[rows][settled], tau[rows][settled]


@needs_erd
@needs_log
def test_the_identified_model_leaves_a_smaller_residual_than_the_urdfs(folds):
    """
    The observer's residual on each held-out third: RMS per joint, the two models.

    Measured 2026-11-26: overall RMS identified 0.46, 0.41, 0.49 N m against the URDF's 0.61,
    0.56, 0.64 (the joints' sensor offsets and friction the URDF lacks).
    """
    log, thirds = folds
    for held, _, panda, estimate in thirds:
        urdf = residual(panda, log, held)
        ours = residual(estimate.identified_model(), log, held)
        assert np.sqrt((ours ** 2).mean()) < np.sqrt((urdf ** 2).mean())
        assert (np.sqrt((ours ** 2).mean(axis=0)) < np.sqrt((urdf ** 2).mean(axis=0))).sum() \
            >= panda.n - 1                   # joint by joint too, all but one at most


@needs_erd
@needs_log
@pytest.mark.parametrize('learnt', ['calibration', 'identification'])
def test_auto_thresholds_raise_no_alarm_on_a_third_they_did_not_see(folds, learnt):
    """
    Learn ``auto`` thresholds both ways; neither raises an alarm on the third held out.

    From the residual over another third (a calibration stretch of free motion, as the node
    learns it), or from the identification's validation on that third, written beside the
    parameters and read back as the node reads it.  Measured 2026-11-29 (the spread the 99.9th
    percentile): the held-out residual reached 0.92, 0.68, 0.73 of the contact level at most,
    both ways (0.81, 0.59, 0.68 with the calibration's maximum as the spread).  With the levels
    growing beyond the calibration's motion, judged on ``|r| - band`` at each state's own levels
    (2026-12-02): 0.91, 0.70, 0.73, both ways.
    """
    log, thirds = folds
    t, q, qd, tau = log
    for held, calibration, panda, estimate in thirds:
        model = estimate.identified_model()
        if learnt == 'calibration':
            r, band, speeds, efforts = observed(model, log, calibration)
            levels = learn_thresholds(model, r, efforts, band=band, qd=speeds)
        else:
            validation = {'t': t[calibration], 'q': q[calibration], 'qd': qd[calibration],
                          'tau': tau[calibration]}
            spread = residual_spread(model, validation, GAIN)
            document = {'standard_parameters': {},
                        'contact_spread': spread_yaml(model, spread, GAIN, 'a third')}
            levels = thresholds_from_spread(model, spread_of_parameters(model, document, GAIN))
        detector = ContactDetector(model, levels)
        r, band, speeds, efforts = observed(model, log, held)
        states = [detector.update(x, k, b, v, e)
                  for k, (x, b, v, e) in enumerate(zip(r, band, speeds, efforts))]
        contact = levels.at(speeds, efforts - r)[0]
        assert set(states) == {FREE}, (beyond(r, band) / contact).max(axis=0).round(2)
