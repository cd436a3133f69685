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
Compile the kernels ahead of their first call: once per node, and once at install time.

Numba compiles a kernel on its first call and keeps the machine code in its cache; a cold cache
costs a node about 20 s before its first command (five nodes compiling at once on two cores,
over a minute), and for those seconds an arm has no gravity compensation.  Two remedies, both
here:

* :func:`warm_up` runs every kernel a node uses once, before the node serves, so that even the
  load from a warm cache (a few hundred ms) never lands on the first message;
* ``python -m manipulator_dynamics.precompile`` compiles every kernel the nodes use into the
  cache (``$NUMBA_CACHE_DIR`` when set); setup.py runs it when the package is installed
  (``colcon build``, ``setup.py install``) into ``<package>/_prebuilt``, which the first import
  copies into the user's cache (see ``_kinematics.numba_cache_dir``).  Numba keys cached code
  on the source file's absolute path and timestamp, so this is done from the installed files,
  where the nodes will run them.

Each group compiled leaves a mark in the cache (:func:`compiled`), keyed on this machine's CPU
as numba keys its machine code: a node that finds its groups' marks loads them as it
configures; one that does not (an editable install, a wheel, kernels compiled on another CPU)
starts this module in a background process and commands from the interpreted dynamics until
they are ready (:mod:`.nodes.kernels`).
"""

import contextlib
import functools
import hashlib
import os
import sys
import time

import numpy as np


@contextlib.contextmanager
def one_at_a_time(group=None):
    """
    Hold the kernel cache's lock: one process at a time compiles or loads into it.

    Nodes started together on a cold cache (``ros2 launch`` of the demo's five) each compiled
    the same kernels at once, five times over on two cores; with the lock the first compiles
    and the others, waiting, then load its machine code from the cache.  On a warm cache the
    wait is the others' load (a few hundred ms each).  Where the lock cannot be made (a
    read-only cache), nothing waits.  ``group``: the lock of that group only
    (:func:`compile_group`'s), which a node loading another group's kernels never waits for.
    """
    import fcntl

    try:
        lock = open(os.path.join(cache_dir(), f'.compile-{group}.lock' if group
                                 else '.compile.lock'), 'a')
    except OSError:
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def cache_dir():
    """Return numba's cache folder for this source (made if missing; ``_jit.numba_cache_dir``)."""
    import numba

    from . import _jit  # noqa: F401 - sets numba's cache folder, this source's
    os.makedirs(numba.config.CACHE_DIR, exist_ok=True)
    return numba.config.CACHE_DIR


def machine_key():
    """
    Return a short key of what numba keys machine code on: the target, CPU name and features.

    Code compiled for another CPU (a wheel's ``_prebuilt``, a cache shared over a network) is
    compiled again by numba on this one; so is a group's mark (:func:`compiled`).
    """
    from numba.core.registry import cpu_target
    magic = cpu_target.target_context.codegen().magic_tuple()
    return hashlib.sha256(repr(magic).encode()).hexdigest()[:12]


@functools.lru_cache(maxsize=None)
def install_key():
    """
    Return a short key of this install: its folder, and its modules' time stamps and sizes.

    Numba files a kernel's machine code under the path of its source folder, and keeps it only
    while the source file has the time stamp and size it was compiled from.  Two installs of
    one source (a checkout and its colcon install, two virtual environments, two clones)
    share the cache folder, keyed on the source's content (:func:`._jit.numba_cache_dir`),
    but not the machine code: a group's mark (:func:`compiled`) is this install's alone.
    """
    from ._jit import _HERE, kernel_modules
    digest = hashlib.sha256(_HERE.encode())
    for path in kernel_modules():
        stat = os.stat(path)
        digest.update(f'{path} {stat.st_mtime_ns} {stat.st_size}'.encode())
    return digest.hexdigest()[:12]


def mark(group):
    """Return the path of ``group``'s mark: compiled into the cache, this machine, this install."""
    return os.path.join(cache_dir(), f'.compiled-{group}-{machine_key()}-{install_key()}')


def compiled(groups):
    """
    Return whether every group of ``groups`` was compiled into the cache for this install.

    :func:`compile_group` marks a group once its kernels are in the cache; a node that finds
    its groups marked loads them at configure (a few hundred ms), and compiles them in the
    background otherwise (:mod:`.nodes.kernels`).  A cache that lost files since only makes
    numba compile them again, as without the mark.
    """
    try:
        return all(os.path.exists(mark(g)) for g in groups)
    except OSError:             # no cache folder can be made: nothing was compiled into one
        return False


def warm_up(model, contact=False, exclusive=True, pushes=False, forward=True):
    """
    Run every rigid-body kernel a node uses once on ``model``, single state and batch.

    ``forward``: the forward dynamics too (the ``forward`` group: dynamics_node's
    ``~/forward_dynamics``, sim_node's internal engine; trajectory_node never calls it).
    ``contact``: the momentum observer's and the contact wrench's too (dynamics_node with
    ``external_torques``).  ``pushes``: the forward dynamics under external wrenches too
    (sim_node's internal engine, whose pushes take that path: 20 s to compile on a cold cache,
    which a push would otherwise stall the simulation for; not in a precompiled group, which
    it would take past a minute on two cores).  ``exclusive`` (a node's start): under
    :func:`one_at_a_time`, so that nodes started together never compile a kernel twice;
    :func:`precompile`'s groups, each in a process of its own, compile side by side without
    it.
    """
    if exclusive:
        with one_at_a_time():
            return warm_up(model, contact, exclusive=False, pushes=pushes, forward=forward)
    from .rigid.crba import inertia_matrix
    from .rigid.rnea import bias_forces, gravity_torques, inverse_dynamics
    z = np.zeros(model.n)
    if model.n:
        gravity_torques(model, z)
        bias_forces(model, z, z)
        inverse_dynamics(model, z, z, z, friction=True)
        # the batched kernel: trajectory_node's efforts of every point (1.3 s to compile, 6 ms
        # to load, either of which would delay the first trajectory)
        inverse_dynamics(model, z[None], z[None], z[None], friction=True)
        inertia_matrix(model, z)
        _warm_command(model)
        if forward:
            _warm_forward(model)
        if contact:
            _warm_contact(model)
        if pushes:
            _warm_pushes(model)


def _warm_command(model):
    """Compile dynamics_node's state-to-command call (``wire.command_from_bytes``)."""
    from .control import GRAVITY
    from .rigid.kinematics import kernel_model
    from .wire import bytes_call
    n = model.n
    index = np.arange(n)
    # one position array of n values, 16 bytes in, after a header of any 16 bytes
    data = bytes(16) + np.zeros(n).tobytes()
    bytes_call.call(kernel_model(model).address, data, np.full(16, -1, dtype=np.int16),
                    np.array([16, 8 * n, 1, n]), index, GRAVITY, 0, np.zeros(n),
                    np.full(n, np.inf), index, 0, 0, 0.0, np.empty((1, n)), np.empty(n),
                    np.empty(n))


def _warm_forward(model):
    """Run the forward dynamics, both methods (UDU^T, Cholesky)."""
    from .rigid.forward import forward_dynamics
    z = np.zeros(model.n)
    for method in ('udut', 'cholesky'):
        try:
            forward_dynamics(model, z, z, z, method=method)
        except ValueError:        # a singular M: the node reports it when it happens
            pass


def _warm_pushes(model):
    """Run the forward dynamics under an external wrench (the batched kernel's path)."""
    from .rigid.forward import forward_dynamics
    z = np.zeros(model.n)
    try:
        forward_dynamics(model, z, z, z, {model.link_names[-1]: np.zeros(6)})
    except ValueError:            # a singular M: the node reports it when it meets it
        pass


def _warm_contact(model):
    """Run the momentum observer's, contact detection's and the contact wrench's kernels."""
    from .contact.detection import ContactDetector, thresholds
    from .contact.observer import MomentumObserver
    from .contact.wrench import contact_wrench
    z = np.zeros(model.n)
    observer = MomentumObserver(model)
    observer.update(0.0, z, z, z)
    r = observer.update(1e-3, z, z, z)
    ContactDetector(model, thresholds(model, 1.0, 2.0)).update(r, 1e-3, observer.band)
    contact_wrench(model, model.link_names[-1], z, z)


#: The kernel groups, in the order precompile starts them: each depends on no
#: other's compiled code, so that each can compile in a process of its own.  On two cores, from
#: an empty cache, two side by side (2026-11-28): forward 30 s, rigid 26 s, base-parameters 12 s,
#: contact 23 s, flexible 31 s (the forward dynamics are a group of their own: with them, rigid
#: took 66 s, the longest pole of every start from an empty cache, for a kernel trajectory_node
#: never calls).
GROUPS = ('forward', 'rigid', 'base-parameters', 'contact', 'flexible')

#: Kernels no node calls, only the library's users (the Coriolis matrix, UDU^T, batched M and
#: h, forward dynamics under external wrenches, the offline momentum residual): compiled when
#: asked for (``--only library``; ``dev.py test`` asks, beside the nodes' groups, so that the
#: suite does not compile them one by one on one core), never at install.
LIBRARY = 'library'

#: What each group compiles, as the progress lines say it.
ABOUT = {LIBRARY: "the library's offline kernels (Coriolis matrix, UDU^T, batched M and h, "
         'external wrenches, momentum residual)',
         'rigid': 'the rigid-body kernels (inverse dynamics, inertia matrix, Jacobians)',
         'forward': 'the forward dynamics kernels (UDU^T, Cholesky)',
         'base-parameters': 'the base-parameter and regressor kernels (energy, dynamic), the '
         "identification's filter",
         'contact': 'the momentum observer, contact detection and wrench kernels',
         'flexible': 'the flexible-link kernels'}


def compile_group(name):
    """
    Compile (or load from the cache) the kernels of group ``name`` (:data:`GROUPS`); mark it.

    Under the group's lock (:func:`one_at_a_time`): two processes asked for the same group
    (two nodes started together on a cold cache) compile it once, and the second loads it.
    """
    if name not in GROUPS + (LIBRARY,):
        raise ValueError(f'no kernel group {name!r} (groups: {", ".join(GROUPS + (LIBRARY,))})')
    with one_at_a_time(name):
        _compile(name)
        try:
            open(mark(name), 'a').close()
        except OSError:         # a read-only cache: it is not marked, and loads as it can
            pass


def _compile(name):
    from . import robots
    from .urdf import load_model
    model = load_model(robots.path('demo_arm'))
    if name == 'rigid':
        from .rigid.jacobian import frame_jacobian
        warm_up(model, exclusive=False, forward=False)
        frame_jacobian(model, model.link_names[-1], np.zeros(model.n))   # the commands', tests'
    elif name == 'forward':
        _warm_forward(model)
    elif name == 'contact':
        _warm_contact(model)
    elif name == 'base-parameters':
        from .identification.base_parameters import base_parameters
        from .identification.filtering import filtfilt, lowpass
        for method in ('energy', 'dynamic'):
            base_parameters(model, method=method, friction=True, armature=True)
        # every time series identified: in memory (C), a long log's columns where they lie in
        # its file (F), and a piece of them (A)
        for x in (np.zeros((40, 2)), np.zeros((40, 2), order='F'), np.zeros((80, 2))[::2]):
            filtfilt(lowpass(1.0, 100.0), x)
        from .identification.logs import _on_grid
        _on_grid(np.arange(4.0), np.arange(5.0) * 0.9, np.zeros((5, 2)))   # jittering stamps
        _warm_scoring(model)
    elif name == LIBRARY:
        _warm_library(model)
    else:
        from .flexible.arm import FlexibleArm
        from .flexible.dynamics import flexible_inverse_dynamics
        from .flexible.stream import FlexibleStream
        arm = FlexibleArm.planar([0.2, 0.2], [0.0112, 0.0112], [0.46, 0.046])
        flexible_inverse_dynamics(arm, np.arange(3) * 1e-6, np.zeros((3, arm.n)))
        FlexibleStream(arm, np.zeros(arm.n), 1e-6).step(np.zeros(arm.n))  # mode:=stream's
        arm.natural_frequencies(count=2)


def _warm_scoring(model):
    """Score predictions at a full rate (validation's spline and friction), both kinds of law."""
    from .identification.validation import at_full_rate
    raw_t, t = np.arange(40) * 0.01, np.arange(8) * 0.05
    rows = np.zeros((8, model.n))
    for left_out in (None, np.zeros((8, model.n), dtype=bool)):
        at_full_rate(model.joint_names, [(raw_t, np.ones((40, model.n)))], t, rows,
                     {'rigid': rows, 'friction': rows}, {'friction': model}, left_out)


def _warm_library(model):
    """Run the library's kernels that no node calls, single state and batch."""
    from . import coriolis_matrix, momentum_residual, udut
    from .rigid.crba import inertia_matrix
    from .rigid.rnea import bias_forces
    z, batch = np.zeros(model.n), np.zeros((2, model.n))
    coriolis_matrix(model, z, z)
    coriolis_matrix(model, batch, batch)
    udut(model, z)
    inertia_matrix(model, batch)
    bias_forces(model, batch, batch)
    _warm_pushes(model)
    momentum_residual(model, np.arange(3) * 1e-3, np.zeros((3, model.n)),
                      np.zeros((3, model.n)), np.zeros((3, model.n)))


def precompile(progress=None, groups=GROUPS, jobs=None):
    """
    Compile the kernels of ``groups`` (default every one: what every node and command runs).

    ``jobs`` processes compile groups side by side (default: one per core, at most one per
    group); each writes into the shared cache (numba's index files are per kernel, and a
    cache file is renamed into place), so that the nodes started next load every kernel.
    With one job, or one group, they compile here.  ``progress(text)``, when given, hears what
    is compiled and the seconds so far (a cold cache takes about a minute on two cores, a warm
    one a second or two).  Returns ``{group: seconds}``.
    """
    import subprocess

    every = GROUPS[:1] + (LIBRARY,) + GROUPS[1:]        # the longest first, side by side
    unknown = [g for g in groups if g not in every]
    if unknown:
        raise ValueError(f'no kernel group {unknown[0]!r} (groups: {", ".join(every)})')
    groups = [g for g in every if g in groups]
    jobs = min(len(groups), jobs or os.cpu_count() or 1)
    start = time.monotonic()

    def say(what):
        if progress is not None:
            progress(f'{what} ({time.monotonic() - start:.1f} s so far)')

    seconds = {}
    if jobs <= 1:
        for group in groups:
            say(f'compiling {ABOUT[group]}')
            began = time.monotonic()
            compile_group(group)
            seconds[group] = time.monotonic() - began
        say('kernels ready')
        return seconds
    say(f'compiling (or loading from the cache) {len(groups)} kernel groups in {jobs} '
        'processes side by side: '
        + '; '.join(ABOUT[g] for g in groups))
    waiting, running = list(groups), {}
    while waiting or running:
        while waiting and len(running) < jobs:
            group = waiting.pop(0)
            running[group] = (subprocess.Popen(
                [sys.executable, '-m', __package__ + '.precompile', '--group', group,
                 '--quiet']),
                time.monotonic())
        time.sleep(0.05)
        for group, (process, began) in list(running.items()):
            if process.poll() is None:
                continue
            del running[group]
            if process.returncode != 0:
                for other, _ in running.values():
                    other.kill()
                raise RuntimeError(f'compiling {ABOUT[group]} failed (exit status '
                                   f'{process.returncode}); its error is printed above')
            seconds[group] = time.monotonic() - began
            say(f'{group} ready in {seconds[group]:.1f} s')
    say('kernels ready')
    return seconds


def main(argv=None):
    """``python -m manipulator_dynamics.precompile``: compile into the cache, say where."""
    import argparse

    parser = argparse.ArgumentParser(description='Compile the kernels into the cache.')
    parser.add_argument('--only', metavar='GROUP[,GROUP...]', help='these groups only ('
                        + ', '.join(GROUPS + (LIBRARY,)) + '; default: ' + ', '.join(GROUPS)
                        + ')')
    parser.add_argument('--jobs', type=int, help='processes side by side (default: one per '
                        'core)')
    parser.add_argument('--group', choices=GROUPS + (LIBRARY,), help=argparse.SUPPRESS)
    parser.add_argument('--quiet', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.group:
        compile_group(args.group)
        return 0
    start = time.monotonic()
    groups = GROUPS if not args.only else tuple(g.strip() for g in args.only.split(','))
    try:
        precompile(lambda text: print(f'manipulator_dynamics: {text}', flush=True), groups,
                   args.jobs)
    except ValueError as e:
        parser.error(str(e))
    from ._jit import numba_cache_dir
    print(f'manipulator_dynamics: kernels compiled into {numba_cache_dir()} in '
          f'{time.monotonic() - start:.1f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
