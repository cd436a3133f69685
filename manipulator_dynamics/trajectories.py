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
Smooth joint motions with exact derivatives: an out-and-back move and a rest-to-rest transfer.

The demo, the command line's ``demo`` and the identification demo drive the robot with these;
each returns positions, velocities and accelerations in ``model.joint_names`` order, shape
``(N, n)``, at the times given.  (The excitation motions of identification, Fourier series
designed for the base parameters, are :mod:`.identification.excitation`.)
"""

import numpy as np


def joint_span(model):
    """Return each joint's usable half-range: ``min(upper, -lower)``, pi where unlimited."""
    return np.minimum(np.where(np.isfinite(model.upper), model.upper, np.pi),
                      -np.where(np.isfinite(model.lower), model.lower, -np.pi))


def out_and_back(amplitude, t, seconds):
    """
    Every joint out by its amplitude and back: ``q = A sin^2(pi t / T)``.

    Parameters
    ----------
    amplitude : array-like, shape (n,)
        ``A``, rad (or m); a fraction of :func:`joint_span` keeps the motion inside the limits.
    t : array-like, shape (N,)
        Times, s, from 0 to ``seconds``.
    seconds : float
        ``T``, the duration of the whole move; at rest at 0 and at ``T``.

    Returns
    -------
    q, qd, qdd : ndarray, shape (N, n)

    """
    amplitude = np.asarray(amplitude, dtype=float)
    w = np.pi / seconds
    s = np.asarray(t, dtype=float)[:, None]
    q = amplitude * np.sin(w * s) ** 2
    qd = amplitude * w * np.sin(2 * w * s)
    qdd = amplitude * 2 * w * w * np.cos(2 * w * s)
    return q, qd, qdd


def rest_to_rest(q_a, q_b, t, seconds):
    """
    Move from ``q_a`` to ``q_b`` by a quintic, at rest at both ends (no speed, no acceleration).

    ``t`` (N,) in ``[0, seconds]``; returns ``q, qd, qdd``, shape (N, n).
    """
    q_a = np.asarray(q_a, dtype=float)
    s = (np.asarray(t, dtype=float) / seconds)[:, None]
    d = np.asarray(q_b, dtype=float) - q_a
    q = q_a + d * (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5)
    qd = d * (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / seconds
    qdd = d * (60 * s - 180 * s ** 2 + 120 * s ** 3) / seconds ** 2
    return q, qd, qdd
