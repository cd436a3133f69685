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
Saha's UDU^T decomposition, checked against the inertia matrix it factors: no oracle needed.

``U diag(D) U^T = M`` with U unit upper triangular, zero wherever joint i is not on joint j's
path to the root, and D positive (each pivot the inertia of an articulated body about its axis).
"""

from helpers import assert_rel, random_state
import manipulator_dynamics as md
import numpy as np


def test_factors_the_inertia_matrix(rigid):
    rng = np.random.default_rng(1)
    q, _, _ = random_state(rigid, rng)
    U, D = md.udut(rigid, q)
    assert_rel(U @ np.diag(D) @ U.T, md.inertia_matrix(rigid, q), 1e-11, 'U D U^T')
    without = md.udut(rigid, q, armature=False)
    assert_rel(without[0] @ np.diag(without[1]) @ without[0].T,
               md.inertia_matrix(rigid, q, armature=False), 1e-11, 'without armature')


def test_structure(rigid):
    rng = np.random.default_rng(2)
    q, _, _ = random_state(rigid, rng)
    U, D = md.udut(rigid, q)
    assert np.all(D > 0)
    np.testing.assert_array_equal(np.diag(U), 1.0)
    path = np.eye(rigid.n, dtype=bool)
    for j in range(rigid.n):
        i = rigid.parent[j]
        while i >= 0:
            path[i, j] = True
            i = rigid.parent[i]
    assert not U[~path].any()               # off the root paths, including the lower triangle


def test_last_pivot_is_the_tip_inertia(rigid):
    """``D`` of a leaf joint is the inertia of its body alone about its axis (M's diagonal)."""
    rng = np.random.default_rng(3)
    q, _, _ = random_state(rigid, rng)
    U, D = md.udut(rigid, q)
    M = md.inertia_matrix(rigid, q)
    leaves = set(range(rigid.n)) - set(rigid.parent)
    for k in leaves:
        assert abs(D[k] - M[k, k]) <= 1e-12 * M[k, k]


def test_batch_equals_single(rigid):
    rng = np.random.default_rng(4)
    q, _, _ = random_state(rigid, rng, N=5)
    U, D = md.udut(rigid, q)
    for s in range(len(q)):
        u, d = md.udut(rigid, q[s])
        np.testing.assert_array_equal(U[s], u)
        np.testing.assert_array_equal(D[s], d)
