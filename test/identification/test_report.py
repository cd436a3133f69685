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

"""The one report of how a fit was made: each part its module's words, in the CLI's order."""

from helpers import measured
import manipulator_dynamics as md
from manipulator_dynamics.identification.report import Report
import pytest


@pytest.fixture(scope='module')
def fitted(arm):
    t, q, qd, qdd, tau, noisy_q = measured(arm, seconds=8.0)
    from_log = md.identify(arm, {'t': t, 'q': noisy_q, 'tau': tau}, cutoff=2.5, still='auto')
    from_arrays = md.identify(arm, (q, qd, qdd, tau))
    return from_log, from_arrays


def test_a_log_s_fit_reports_each_choice_in_its_place(arm, fitted):
    from_log, _ = fitted
    report = Report.of(from_log, arm.joint_names)
    assert report.stamps.startswith('log 1: ') and 'samples at' in report.stamps
    assert report.residual.startswith('residual RMS per joint: ' + arm.joint_names[0])
    assert report.friction.startswith('friction law: coulomb')
    assert report.cutoff == 'cutoff: 2.5 Hz'
    assert report.still.startswith('still speeds (')
    assert report.prior_weight == ''            # no consistent fit: no prior weight chosen
    parts = [report.stamps, report.residual, report.friction, report.cutoff, report.still]
    text = report.text()
    at = [text.index(part) for part in parts]
    assert at == sorted(at) and text.startswith('\n\n' + report.stamps)
    assert (report.std == '') == ('standard deviations' not in text)


def test_arrays_used_as_given_report_no_stamps_and_no_cutoff(arm, fitted):
    _, from_arrays = fitted
    report = Report.of(from_arrays, arm.joint_names)
    assert report.stamps == report.cutoff == report.still == ''
    assert report.text().startswith('\n\nresidual RMS per joint: ')
    assert report.text().count('\n\n') == 2     # the residuals' block, the friction law's
