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
The incremental scheme one control sample at a time (Isobe & Imaizumi, Figs. 3c and 4).

Oracles: Newton-Euler on a point-mass URDF for the rigid-bar arm, and the batch scheme, which
sees the whole target at once.
"""

import math

from manipulator_dynamics import (flexible_inverse_dynamics, FlexibleArm, FlexibleStream,
                                  inverse_dynamics, load_model)
import numpy as np
import pytest
from test_flexible import (paper_two_link, paper_two_link_move, quintic, rms_error,
                           THREE_LINK_MOVE)
from test_flexible_masses import point_mass_chain


def rigid_bar_arm():
    """Isobe & Imaizumi's Fig. 3 arm: 3 links of 0.4 m, 0.215 kg at mid-link, vertical plane."""
    arm = FlexibleArm.planar([0.4] * 3, [0.215] * 3, math.inf, mass_at='cog')
    reference = load_model(point_mass_chain([0.215] * 3, [0.2] * 3, [0.4] * 3),
                           gravity=(0.0, -9.81, 0.0))
    return arm, reference


def run(stream, q, qd=None, qdd=None):
    """Torques of the start and of one step per further sample."""
    taus = [stream.sample.tau]
    for k in range(1, len(q)):
        taus.append(stream.step(q[k], None if qd is None else qd[k],
                                None if qdd is None else qdd[k]).tau)
    return np.array(taus)


def test_with_the_targets_derivatives_a_rigid_arm_streams_newton_euler():
    arm, reference = rigid_bar_arm()
    t = np.linspace(0.0, 1.0, 51)
    q, qd, qdd = quintic(t, *THREE_LINK_MOVE)
    tau = run(FlexibleStream(arm, q[0], 0.02), q, qd, qdd)
    np.testing.assert_allclose(tau, inverse_dynamics(reference, q, qd, qdd), atol=1e-10)


def test_fig3c_positions_only_converge_with_steps_per_second():
    """Samples of positions only: 50 to 100 steps per second of motion agree well."""
    arm, reference = rigid_bar_arm()
    errors = {}
    for steps in (10, 25, 50, 100, 200, 400):
        t = np.linspace(0.0, 1.0, steps + 1)
        q, qd, qdd = quintic(t, *THREE_LINK_MOVE)
        tau = run(FlexibleStream(arm, q[0], 1.0 / steps), q)
        errors[steps] = rms_error(tau, inverse_dynamics(reference, q, qd, qdd))
    print('\nsteps per 1.0 s   RMS torque error of the stream vs Newton-Euler')
    for steps, err in errors.items():
        print(f'{steps:15d}   {err:.2%}')
    assert errors[50] < 0.05 and errors[100] < 0.02
    values = list(errors.values())
    assert all(b < a / 2.5 for a, b in zip(values, values[1:])), errors


def test_stream_and_batch_agree_on_a_flexible_arm():
    """Fed the batch's own target derivatives, the stream is the batch, step for step."""
    arm = paper_two_link()
    t = np.arange(0.0, 0.6, 1e-3)
    q = paper_two_link_move(t)
    batch = flexible_inverse_dynamics(arm, t, q)
    from scipy.interpolate import CubicSpline
    spline = CubicSpline(t, q, axis=0)                       # the batch's derivatives
    qd, qdd = spline(t, 1), spline(t, 2)
    stream = FlexibleStream(arm, q[0], 1e-3, qd0=qd[0], qdd0=qdd[0])
    samples = [stream.sample] + [stream.step(q[k], qd[k], qdd[k]) for k in range(1, len(t))]
    scale = np.abs(batch.tau).max()
    np.testing.assert_allclose([s.tau for s in samples], batch.tau, atol=1e-9 * scale)
    np.testing.assert_allclose([s.q for s in samples], batch.trajectory.q, atol=1e-10)
    np.testing.assert_allclose([s.tip_deflection for s in samples], batch.tip_deflection,
                               atol=1e-9 * np.abs(batch.tip_deflection).max())
    # the stream's nodal forces are summed from increments (eq. 14), the batch's are not: the
    # roundoff of 600 increments of the stiff axial modes' accelerations is left
    np.testing.assert_allclose([s.axial_force for s in samples], batch.axial_force,
                               atol=1e-7 * np.abs(batch.axial_force).max())
    # positions only: the same motion within the lag of the causal derivatives
    causal = run(FlexibleStream(arm, q[0], 1e-3), q)
    assert rms_error(causal, batch.tau) < 0.01
    assert np.abs(batch.tip_deflection).max() > 1e-3           # it does bend


def test_the_stream_is_causal_and_a_rejected_sample_changes_nothing():
    arm = FlexibleArm.planar([0.4], [0.0224], 0.46)
    t = np.arange(0.0, 0.3, 1e-3)
    q, _, _ = quintic(t, 0.2, [0.0], [1.0])
    other = q.copy()
    other[150:] += 0.3                                         # a different future
    a, b = FlexibleStream(arm, q[0], 1e-3), FlexibleStream(arm, q[0], 1e-3)
    for k in range(1, 150):
        assert np.array_equal(a.step(q[k]).tau, b.step(other[k]).tau)
        if k == 100:
            for bad, message in (([0.1, 0.2], r'q must have 1 values \(joints joint1\), got 2'),
                                 ([math.nan], "q of joint 'joint1' is not finite")):
                with pytest.raises(ValueError, match=message):
                    b.step(bad)
    assert a.steps == b.steps == 149
    assert not np.array_equal(a.step(q[150]).tau, b.step(other[150]).tau)


def test_bad_streams_are_named():
    arm = FlexibleArm.planar([0.4], [0.0224], 0.46)
    with pytest.raises(ValueError, match=r'too coarse for the first bending mode.*at most'):
        FlexibleStream(arm, [0.0], 0.02)
    with pytest.raises(ValueError, match='dt must be positive'):
        FlexibleStream(arm, [0.0], 0.0)
    with pytest.raises(ValueError, match='q0 must have 1 values'):
        FlexibleStream(arm, [0.0, 0.0], 1e-3)
    with pytest.raises(TypeError, match='arm must be a FlexibleArm'):
        FlexibleStream('arm', [0.0], 1e-3)
