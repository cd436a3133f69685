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
The joint-space inertia matrix (Khalil's composite links), checked without an oracle.

Column j of M is the effort that a unit acceleration of joint j alone needs at rest, less
gravity's: ``M[:, j] = ID(q, 0, e_j) - ID(q, 0, 0)``.  M is symmetric, positive definite, and
zero between joints on different branches of a tree.
"""

from helpers import assert_rel, random_state
import manipulator_dynamics as md
import numpy as np


def test_columns_are_unit_accelerations(rigid):
    rng = np.random.default_rng(1)
    q, _, _ = random_state(rigid, rng)
    M = md.inertia_matrix(rigid, q)
    zero = np.zeros(rigid.n)
    g = md.inverse_dynamics(rigid, q, zero, zero)
    columns = np.column_stack([md.inverse_dynamics(rigid, q, zero, e) - g
                               for e in np.eye(rigid.n)])
    assert_rel(M, columns, 1e-11, 'M columns')


def test_symmetric_positive_definite(rigid):
    rng = np.random.default_rng(2)
    q, _, _ = random_state(rigid, rng)
    M = md.inertia_matrix(rigid, q)
    np.testing.assert_array_equal(M, M.T)
    assert np.linalg.eigvalsh(M).min() > 0


def test_branches_do_not_couple(rigid):
    """M[i, j] = 0 unless one of joints i, j carries the other (tree sparsity)."""
    rng = np.random.default_rng(3)
    q, _, _ = random_state(rigid, rng)
    M = md.inertia_matrix(rigid, q)
    ancestors = []
    for i, a in enumerate(rigid.parent):
        ancestors.append({i} | (ancestors[a] if a >= 0 else set()))
    for i in range(rigid.n):
        for j in range(rigid.n):
            if i not in ancestors[j] and j not in ancestors[i]:
                assert M[i, j] == 0.0, (i, j)


def test_armature_on_the_diagonal(rigid):
    rng = np.random.default_rng(4)
    q, _, _ = random_state(rigid, rng)
    np.testing.assert_allclose(md.inertia_matrix(rigid, q)
                               - md.inertia_matrix(rigid, q, armature=False),
                               np.diag(rigid.armature), rtol=0, atol=1e-13)


def test_batch_equals_single(rigid):
    rng = np.random.default_rng(5)
    q, _, _ = random_state(rigid, rng, N=5)
    M = md.inertia_matrix(rigid, q)
    for s in range(len(q)):
        np.testing.assert_array_equal(M[s], md.inertia_matrix(rigid, q[s]))
