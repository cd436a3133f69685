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
A node's kernels: loaded at configure, or compiled in the background while it serves.

Numba compiles a kernel on its first call: a minute for a node's groups on two cores.  Where
the install compiled them (``colcon build``: :mod:`..precompile`), a node finds its groups
marked in the cache and loads them as it configures, in a few hundred ms.  Where it could not
(``pip install -e .``, ``colcon build --symlink-install``, a wheel, kernels compiled on another
CPU, a read-only install space), the node says so once and, as it starts, before anyone asks:

* starts ``python -m manipulator_dynamics.precompile --only <its groups> --jobs 1`` in a
  process of its own, at a lower priority (the node's loop keeps its core); nodes started
  together compile each group once (its lock), and the process ends with the node;
* answers ``configure`` at once, and commands from its first state with the interpreted
  dynamics (:mod:`..runtime.dynamics`: :mod:`..rigid.reference`, the numpy oracle the kernels
  are tested against, plus the joints' friction and the coupled motors' inertia): 0.7 ms for
  the gravity torques of a 7-joint arm, against 1.5 us compiled;
* reports itself not ready in ``/diagnostics`` (WARN, the groups compiled so far and the
  seconds), and leaves what only the kernels serve (the other ``~/`` outputs, the momentum
  observer, the payload estimate) until they are ready;
* once the process has ended, loads the kernels in a thread (the commands go on meanwhile)
  and switches to them between two states (:meth:`Kernels.poll`, on the executor).

A compile that fails is an error in ``/diagnostics`` and the log (its last lines); the node
keeps commanding from the interpreted dynamics.

A node with no interpreted path (flexible_trajectory_node: the finite elements of a flexible
arm, interpreted, take seconds a step) does the same but the commands: it answers
``configure`` at once and refuses what needs the kernels, saying why, until they are ready
(``meanwhile`` says what it does instead).
"""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from .logs import QuickLogger
from .process import settle_what_loaded
from .. import precompile
from ..runtime.dynamics import Compiled, Interpreted

#: Seconds between two looks at the background compile.
POLL = 0.2
#: The background compile's niceness: the node's own loop keeps its core.
NICENESS = 10


class Kernels:
    """
    The kernels of ``groups`` for ``node``: :attr:`dynamics` is what the node calls now.

    ``load()`` loads them for the node's model, if it has one (its warm-up); it runs in a
    thread once the background compile has ended.  ``ready()`` is called on the executor once
    they are loaded.  Where the groups are compiled already, neither is called: the node warms
    up at configure, as it always did.
    """

    def __init__(self, node, groups, load, ready,
                 meanwhile='commands from the interpreted dynamics'):
        self.node, self.groups, self._load, self._ready = node, tuple(groups), load, ready
        self.meanwhile = meanwhile
        self.log = QuickLogger(node)
        self.dynamics = Compiled
        self.process = self.loading = self.failed = None
        self.started = time.monotonic()
        if precompile.compiled(self.groups):
            return
        self.dynamics = Interpreted
        self._start()

    # --- the background compile ------------------------------------------------------------------
    def _start(self):
        self.output = tempfile.TemporaryFile('w+')
        command = [sys.executable, '-m', precompile.__name__, '--only', ','.join(self.groups),
                   '--jobs', '1']
        self.process = subprocess.Popen(command, stdout=self.output, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, preexec_fn=_child)
        self.timer = self.node.create_timer(POLL, self.poll)
        self.log.warning(
            f'the kernels of {", ".join(self.groups)} are not compiled for this machine in '
            f'{precompile.cache_dir()} (an install that could not compile them: pip install '
            '-e, colcon build --symlink-install, a wheel, another CPU): compiling them in the '
            f'background (pid {self.process.pid}, about a minute on two cores); until they are '
            f'ready: {self.meanwhile}, and the node reports itself not ready')

    def poll(self):
        """Follow the compile, then the load; switch to the kernels once loaded (executor)."""
        if self.process is not None and self.process.poll() is not None:
            code, self.process = self.process.returncode, None
            if code != 0:
                self._fail(code)
                return
            self.loading = threading.Thread(target=self._load_in_thread, daemon=True,
                                            name='kernels')
            self.loading.start()
        if self.loading is not None and not self.loading.is_alive():
            self.loading = None
            self.timer.cancel()
            if self.failed is None:
                self.dynamics = Compiled
                self.log.info(f'kernels ready after {time.monotonic() - self.started:.1f} s')
                self._ready()
                settle_what_loaded()

    def _load_in_thread(self):
        try:
            self._load()
        except Exception as e:          # said on the executor; the interpreted path goes on
            self.failed = f'loading the compiled kernels failed: {type(e).__name__}: {e}'
            self.log.error(f'{self.failed}; still: {self.meanwhile}')

    def _fail(self, code):
        self.timer.cancel()
        self.output.seek(0)
        tail = ''.join(self.output.readlines()[-5:]).strip()
        self.failed = f'compiling the kernels failed (exit status {code})'
        self.log.error(f'{self.failed}; still: {self.meanwhile}. Its last lines:\n{tail}')

    def state(self):
        """Return ``(level, text)`` for /diagnostics: (0, '') once the kernels are loaded."""
        if self.dynamics is Compiled:
            return 0, ''
        if self.failed:
            return 2, f'{self.failed}: {self.meanwhile}'
        done = [g for g in self.groups if precompile.compiled((g,))]
        now = 'loading them' if self.process is None else (
            f'{len(done)} of {len(self.groups)} groups done')
        return 1, (f'not ready: the kernels are compiling in the background '
                   f'({time.monotonic() - self.started:.0f} s so far, {now}); {self.meanwhile}')

    def say(self, report):
        """Say in ``report`` whether the kernels are ready (not ready: WARN, and why)."""
        level, text = self.state()
        report.add('kernels', text or 'compiled')
        if level:
            report.say(level, text)

    def stop(self):
        """End the background compile (the node is going)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                self.process.kill()


class WithKernels:
    """A node's part that ends its background compile with it (its ``kernels``, once made)."""

    def destroy_node(self):
        kernels = getattr(self, 'kernels', None)   # none where the constructor failed first
        if kernels is not None:
            kernels.stop()
        super().destroy_node()


def compiling(node):
    """Return whether the kernels of ``node`` are not ready yet (a node without any: False)."""
    kernels = getattr(node, 'kernels', None)   # none where its constructor failed first
    return kernels is not None and not kernels.dynamics.ready


def _child():
    """In the compile's process: a lower priority, and an end with the node's process."""
    os.nice(NICENESS)
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)          # PR_SET_PDEATHSIG
    except (OSError, AttributeError):                       # not Linux: stop() ends it
        pass
