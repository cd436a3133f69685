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

"""Long batches split over threads give exactly the single-thread results, errors included."""

import manipulator_dynamics as md
from manipulator_dynamics import _parallel, robots
import numpy as np
import pytest

N = 3 * _parallel.MIN_ROWS_PER_THREAD + 7      # three uneven chunks on three threads


@pytest.fixture
def threads():
    previous = md.set_threads(3)
    yield
    md.set_threads(previous)


@pytest.fixture(scope='module')
def tree():
    return md.load_model(robots.path('demo_arm_gripper'))


def batch(model, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (3, N, model.n))


def each(model, q, qd, qdd):
    tau = md.inverse_dynamics(model, q, qd, qdd)
    return {'tau': tau, 'M': md.inertia_matrix(model, q),
            'udut': md.forward_dynamics(model, q, qd, tau, method='udut'),
            'cholesky': md.forward_dynamics(model, q, qd, tau, method='cholesky'),
            'U': md.udut(model, q)[0], 'Y': md.regressor(model, q, qd, qdd)}


def test_threads_give_the_single_thread_results(tree, threads):
    q, qd, qdd = batch(tree)
    split = each(tree, q, qd, qdd)
    md.set_threads(1)
    whole = each(tree, q, qd, qdd)
    for key in whole:
        np.testing.assert_array_equal(split[key], whole[key], err_msg=key)


def test_broadcast_rows_with_threads(tree, threads):
    q, qd, qdd = batch(tree, 1)
    tau = md.inverse_dynamics(tree, q, qd[0], qdd[0])
    md.set_threads(1)
    np.testing.assert_array_equal(tau, md.inverse_dynamics(tree, q, qd[0], qdd[0]))


def test_errors_from_a_later_chunk(tree, threads):
    q, qd, qdd = batch(tree, 2)
    q[N - 3, 4] = np.nan
    with pytest.raises(ValueError, match=rf'q\[{N - 3}, 4\] \(sample {N - 3}\) is nan for joint '
                                         "'joint5'"):
        md.forward_dynamics(tree, q, qd, qdd)
    xml = ('<robot name="r"><link name="b"/><link name="a"><inertial><mass value="1"/>'
           '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
           '<link name="t"/>'
           '<joint name="j1" type="continuous"><parent link="b"/><child link="a"/>'
           '</joint>'
           '<joint name="j2" type="continuous"><parent link="a"/><child link="t"/></joint>'
           '</robot>')
    massless_tip = md.load_model(xml)
    with pytest.raises(md.SingularInertiaError, match="joint 'j2'"):
        md.forward_dynamics(massless_tip, np.zeros((N, 2)), np.zeros(2), np.zeros(2))


def test_each_chunk_runs_on_its_own_copy_of_the_model(tree, threads):
    """A kernel model shared by the threads' chunks would share its reference counters."""
    from manipulator_dynamics.rigid.kinematics import kernel_model
    m = kernel_model(tree)
    runs = []
    for _ in range(2):
        seen = []

        def kernel(q, m):
            seen.append(m)             # list.append is atomic: the chunks run on their threads
            return 0
        assert _parallel.run(kernel, N, {'q': np.zeros((N, tree.n))}, m=m) == [0, 0, 0]
        runs.append({id(x): x for x in seen})
    assert len(runs[0]) == 3 and id(m) in runs[0], 'a copy per chunk, the first is the model'
    assert runs[0].keys() == runs[1].keys(), 'made once, kept with the model'


def test_thread_count_is_validated():
    with pytest.raises(ValueError, match='thread count must be >= 1'):
        md.set_threads(0)
    assert md.get_threads() >= 1


def test_without_threadpoolctl_blas_keeps_its_threads_and_says_so_once(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, 'threadpoolctl', None)      # not installed
    _parallel._without_threadpoolctl.cache_clear()
    wrapped = _parallel.blas_on_one_thread(lambda x: 2 * x)
    with pytest.warns(RuntimeWarning, match='threadpoolctl is not installed: BLAS keeps its own '
                      'threads.*pip install threadpoolctl'):
        assert wrapped(3) == 6
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert wrapped(4) == 8                   # said once
    _parallel._without_threadpoolctl.cache_clear()
