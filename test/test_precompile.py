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
    assert said[0].startswith('compiling (or loading from the cache) 2 kernel groups in 2 '
                              'processes side by side: '
                              'the momentum observer')
    assert any(line.startswith('flexible ready in ') for line in said)
    assert said[-1].startswith('kernels ready')


def test_one_job_compiles_here_in_the_groups_order():
    said = []
    seconds = pc.precompile(said.append, groups=('flexible', 'rigid'), jobs=1)
    assert list(seconds) == ['rigid', 'flexible']                 # GROUPS' order
    assert said[0].startswith('compiling the rigid-body kernels')


def test_an_unknown_group_is_refused_naming_the_groups(capsys):
    with pytest.raises(ValueError, match="no kernel group 'gravity' .*forward, library, rigid, "
                       'base-parameters, contact, flexible'):
        pc.precompile(groups=('rigid', 'gravity'))
    with pytest.raises(SystemExit):
        pc.main(['--only', 'rigid,gravity'])
    assert "no kernel group 'gravity'" in capsys.readouterr().err


def test_processes_take_turns_at_the_kernel_cache():
    """
    While one process holds the cache's lock, another waits for it; released, it goes on.

    The lock that keeps nodes started together from compiling the same kernels each.
    """
    import subprocess
    import sys
    code = ('from manipulator_dynamics.precompile import one_at_a_time\n'
            "print('asking', flush=True)\n"
            'with one_at_a_time():\n'
            "    print('inside', flush=True)\n")
    with pc.one_at_a_time():
        other = subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE,
                                 text=True)
        assert other.stdout.readline() == 'asking\n'
        with pytest.raises(subprocess.TimeoutExpired):
            other.wait(timeout=1.0)                      # held here: it cannot get in
    out, _ = other.communicate(timeout=60)
    assert out == 'inside\n' and other.returncode == 0


def test_a_nodes_warm_up_holds_the_lock_and_precompile_groups_do_not(monkeypatch):
    """warm_up (a node's start) runs under the lock; a precompile group, side by side, not."""
    import contextlib

    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    held = []

    @contextlib.contextmanager
    def recorded():
        held.append(True)
        yield
    monkeypatch.setattr(pc, 'one_at_a_time', recorded)
    model = md.load_model(robots.path('demo_arm'))
    pc.warm_up(model)
    assert held == [True]
    pc.warm_up(model, exclusive=False)
    assert held == [True]


def test_the_library_group_is_compiled_only_when_asked_for():
    """The install compiles the nodes' groups; the library's offline kernels only on request."""
    assert pc.LIBRARY not in pc.GROUPS
    said = []
    seconds = pc.precompile(said.append, groups=(pc.LIBRARY,), jobs=1)
    assert list(seconds) == ['library']
    assert said[0].startswith("compiling the library's offline kernels (Coriolis matrix")


def test_a_groups_mark_belongs_to_its_install_not_to_every_copy_of_the_source(tmp_path):
    """
    Two installs of one source share the cache folder but not its machine code, nor its marks.

    Numba files machine code under the source's folder and checks its time stamp: a clone
    beside a checkout (a CI clone, a colcon install beside the source) found the checkout's
    marks, took its groups for compiled, and compiled inside ``configure``.
    """
    import os
    import shutil
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(pc.__file__))
    other = tmp_path / 'copy'
    shutil.copytree(here, other / 'manipulator_dynamics', copy_function=shutil.copy2,
                    ignore=shutil.ignore_patterns('__pycache__', '_prebuilt'))
    code = ('import os, sys\n'
            'from manipulator_dynamics import precompile as pc\n'
            "if sys.argv[1] == 'mark':\n"
            "    open(pc.mark('rigid'), 'a').close()\n"
            "print(pc.cache_dir(), pc.compiled(('rigid',)), pc.install_key())\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / 'cache'))

    def run(action, path=None):
        environ = dict(env, PYTHONPATH=str(path)) if path else env
        out = subprocess.run([sys.executable, '-c', code, action], env=environ, cwd=tmp_path,
                             capture_output=True, text=True, check=True).stdout.split()
        return out[0], out[1] == 'True', out[2]

    folder, marked, key = run('mark')
    assert marked
    copied, marked, copy_key = run('look', other)
    assert copied == folder, 'the same source: the same cache folder'
    assert not marked and copy_key != key, "the copy took the install's mark for its own"
    assert run('look')[1], 'the install lost its own mark'


#: In a process of its own: load the kernels of the groups named in argv[2] (as a node's
#: background compile leaves them in the cache), then run dynamics_node's ~/estimate_payload on
#: the window in argv[1]; print every kernel signature the estimate needed beyond those.
_ESTIMATE = """
import gc, sys
import numpy as np
from numba.core.dispatcher import Dispatcher
from manipulator_dynamics import precompile, robots
from manipulator_dynamics.identification.payload import identify_payload, payload_combinations
from manipulator_dynamics.urdf import load_model


def loaded():
    return {(f'{d.py_func.__module__}.{d.py_func.__qualname__}', str(s))
            for d in gc.get_objects() if isinstance(d, Dispatcher) for s in d.signatures}


for group in sys.argv[2].split(','):
    precompile._compile(group)
before = loaded()
window = dict(np.load(sys.argv[1]))
model = load_model(robots.path('demo_arm_gripper'), tip_links=['tool0'])
found = identify_payload(model, window, 'tool0',
                         combinations=payload_combinations(model, 'tool0'))
assert abs(found.mass - 1.5) < 1e-3, found.summary()
for kernel in sorted({name for name, _ in loaded() - before}):
    print(kernel)
"""


def test_dynamics_nodes_payload_estimate_needs_no_kernel_its_groups_do_not_compile(tmp_path):
    """
    ``~/estimate_payload`` runs only kernels dynamics_node's own groups compile.

    Where the install compiled nothing, the node compiles its groups in the background; a
    kernel outside them would be compiled inside the service's call, tens of seconds with no
    command sent.  The suite's cache holds every kernel, so each runs compiled from it: what
    is checked is which ones the estimate called beyond those its groups loaded.
    """
    import subprocess
    import sys

    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    import numpy as np
    pytest.importorskip('rclpy', reason="dynamics_node's groups: the node needs rclpy")
    from manipulator_dynamics.nodes.dynamics_node import DynamicsNode
    model = md.load_model(robots.path('demo_arm_gripper'), tip_links=['tool0'])
    held = model.with_payload('tool0', 1.5, [0.01, -0.02, 0.05])
    t = np.arange(3000) * 1e-3                                 # 3 s at 1 kHz, as the node keeps
    w = 2 * np.pi * np.array([0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])[:model.n]
    q = 0.8 * np.sin(np.outer(t, w))
    qd = 0.8 * w * np.cos(np.outer(t, w))
    qdd = -0.8 * w ** 2 * np.sin(np.outer(t, w))
    np.savez(tmp_path / 'window.npz', t=t, q=q, qd=qd,
             tau=md.inverse_dynamics(held, q, qd, qdd, friction=True))
    groups = DynamicsNode.GROUPS + ('contact',)
    out = subprocess.run([sys.executable, '-c', _ESTIMATE, str(tmp_path / 'window.npz'),
                          ','.join(groups)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == '', ('~/estimate_payload would compile, beyond the groups '
                              f'{", ".join(groups)}:\n{out.stdout}')


def test_a_long_logs_identification_needs_no_kernel_its_groups_do_not_compile(tmp_path):
    """
    A long log is identified with the kernels of the rigid and base-parameters groups alone.

    The log spilled to a file, its pieces views of it: no kernel is compiled at its first run.
    The filter reads a spilled log's columns where they lie, in the file's column order and in
    pieces of it (numba's ``F`` and ``A`` layouts): compiled at the first long log after an
    install, they had made it 2-4 s slower and 40-50 MB larger than the runs after it.
    """
    import subprocess
    import sys

    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    import numpy as np
    model = md.load_model(robots.path('demo_arm'))
    t = np.arange(40000) * 1e-3
    w = 2 * np.pi * np.array([0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5])[:model.n]
    q = 0.8 * np.sin(np.outer(t, w))
    qd = 0.8 * w * np.cos(np.outer(t, w))
    qdd = -0.8 * w ** 2 * np.sin(np.outer(t, w))
    np.savez(tmp_path / 'log.npz', t=t, q=q, tau=md.inverse_dynamics(model, q, qd, qdd))
    out = subprocess.run([sys.executable, '-c', _IDENTIFY, str(tmp_path / 'log.npz')],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == '', ('identifying a long log would compile, beyond the groups rigid '
                              f'and base-parameters:\n{out.stdout}')


#: In a process of its own: load the kernels of the rigid and base-parameters groups, then
#: identify the log in argv[1] spilled to a file (cutoff chosen, 3 folds); print every kernel
#: signature that needed beyond those.
_IDENTIFY = """
import gc, sys
import numpy as np
from numba.core.dispatcher import Dispatcher
import manipulator_dynamics as md
from manipulator_dynamics import precompile, robots
from manipulator_dynamics.recordings import spill


def loaded():
    return {(f'{d.py_func.__module__}.{d.py_func.__qualname__}', str(s))
            for d in gc.get_objects() if isinstance(d, Dispatcher) for s in d.signatures}


for group in ('rigid', 'base-parameters'):
    precompile._compile(group)
before = loaded()
log = dict(np.load(sys.argv[1]))
t, q, tau = spill.stamps(len(log['t']), True), *(spill.columns(len(log['t']), log['q'].shape[1],
                                                                True) for _ in range(2))
t[:], q[:], tau[:] = log['t'], log['q'], log['tau']
model = md.load_model(robots.path('demo_arm'))
md.cross_validate(model, (t, q, tau), folds=3)
for kernel in sorted({name for name, _ in loaded() - before}):
    print(kernel)
"""


def test_a_user_who_cannot_write_the_cache_gets_the_kernels_in_the_temporary_folder(tmp_path):
    """
    A service user without a writable home: the kernels' cache moves, and a warning says where.

    Numba, finding no writable cache for a kernel beside a read-only install (a .deb's),
    refuses to import it; the package's own cache folder could not be made, so the kernels
    now go to this user's folder in the temporary folder, said once at import.
    """
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != 'NUMBA_CACHE_DIR'}
    env.update(XDG_CACHE_HOME='/proc/no-such-cache', TMPDIR=str(tmp_path))   # cannot be made
    script = ('import numba, warnings; warnings.simplefilter("always"); '
              'import manipulator_dynamics.rigid.rnea; print(numba.config.CACHE_DIR)')
    result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    where = result.stdout.strip().splitlines()[-1]
    assert where.startswith(os.path.join(str(tmp_path), f'manipulator_dynamics-{os.getuid()}')), \
        where
    assert os.path.isdir(where)
    assert 'the kernel cache /proc/no-such-cache/manipulator_dynamics/numba-' in result.stderr
    assert 'set NUMBA_CACHE_DIR to a folder this user can write' in result.stderr
