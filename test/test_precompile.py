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
Kernel groups compiled side by side, only those asked for.

A cold cache takes a minute to compile (``benchmarks/bench_cold_start.py`` measures it); these
tests run on the suite's warm cache, where each group's process loads its kernels in seconds:
what they check is the plumbing, the groups and what is said.
"""

from manipulator_dynamics import precompile as pc
import pytest


def test_groups_compile_side_by_side_in_processes_of_their_own():
    said = []
    seconds = pc.precompile(said.append, groups=('flexible', 'contact'), jobs=2)
    assert set(seconds) == {'contact', 'flexible'} and all(s > 0 for s in seconds.values())
    assert said[0].startswith('compiling 2 kernel groups in 2 processes side by side: '
                              'the momentum observer')
    assert any(line.startswith('flexible ready in ') for line in said)
    assert said[-1].startswith('kernels ready')


def test_one_job_compiles_here_in_the_groups_order():
    said = []
    seconds = pc.precompile(said.append, groups=('flexible', 'rigid'), jobs=1)
    assert list(seconds) == ['rigid', 'flexible']                 # GROUPS' order
    assert said[0].startswith('compiling the rigid-body kernels')


def test_an_unknown_group_is_refused_naming_the_groups(capsys):
    with pytest.raises(ValueError, match="no kernel group 'gravity' .*rigid, base-parameters, "
                       'contact, flexible'):
        pc.precompile(groups=('rigid', 'gravity'))
    with pytest.raises(SystemExit):
        pc.main(['--only', 'rigid,gravity'])
    assert "no kernel group 'gravity'" in capsys.readouterr().err
