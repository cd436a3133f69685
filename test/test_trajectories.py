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

"""The demos' motions: derivatives that are the derivatives, at rest where they say."""

from manipulator_dynamics import robots
from manipulator_dynamics.trajectories import joint_span, out_and_back, rest_to_rest
from manipulator_dynamics.urdf import load_model
import numpy as np
import pytest


def differentiated(x, t):
    """Central differences of ``x`` along time, ends left out (second order: error ~ h^2)."""
    return (x[2:] - x[:-2]) / (t[2:] - t[:-2])[:, None]


def test_rest_to_rest_starts_and_ends_at_rest():
    q_a, q_b = np.array([0.1, -0.2]), np.array([0.5, 0.3])
    t = np.linspace(0.0, 2.0, 2001)
    q, qd, qdd = rest_to_rest(q_a, q_b, t, 2.0)
    assert np.allclose(q[0], q_a) and np.allclose(q[-1], q_b)
    assert np.allclose(qd[[0, -1]], 0) and np.allclose(qdd[[0, -1]], 0)
    # h = 1 ms: the differences' error is about h^2 times the third derivative, below 1e-5
    np.testing.assert_allclose(differentiated(q, t), qd[1:-1], atol=1e-5)
    np.testing.assert_allclose(differentiated(qd, t), qdd[1:-1], atol=1e-5)


def test_out_and_back_stays_inside_the_limits_and_returns():
    model = load_model(robots.path('demo_arm'))
    span = joint_span(model)
    assert np.all(span > 0) and np.all(span <= np.pi)
    amplitude = 0.9 * span * np.cos(np.arange(model.n))
    t = np.linspace(0.0, 4.0, 4001)
    q, qd, qdd = out_and_back(amplitude, t, 4.0)
    assert q.shape == qd.shape == qdd.shape == (len(t), model.n)
    assert np.all(q <= model.upper) and np.all(q >= model.lower)
    np.testing.assert_allclose(np.abs(q).max(axis=0), np.abs(amplitude), rtol=1e-6)
    assert np.allclose(q[[0, -1]], 0) and np.allclose(qd[[0, -1]], 0)
    np.testing.assert_allclose(differentiated(q, t), qd[1:-1], atol=1e-5)
    np.testing.assert_allclose(differentiated(qd, t), qdd[1:-1], atol=1e-5)
    assert qdd[0] == pytest.approx(2 * (np.pi / 4.0) ** 2 * amplitude)
