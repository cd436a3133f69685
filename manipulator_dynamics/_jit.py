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
Numba's setup, in one place: the compile options of every kernel and the cache of machine code.

Importing this module points numba's cache at :func:`numba_cache_dir`; every kernel module
imports :data:`JIT` from here, so the cache is set before the first kernel is compiled.
"""

import hashlib
import os
import shutil

import numba

#: Folders of the package with no compiled code (none of their modules imports numba or this
#: module; test_jit_cache checks it): editing them keeps the cache.
_NO_KERNELS = ('nodes', 'runtime', 'cli', 'demo', 'robots', '_prebuilt', '__pycache__')
_HERE = os.path.dirname(os.path.abspath(__file__))


def kernel_modules(here=_HERE):
    """Yield the path of every module of the package that can hold or feed a kernel, in order."""
    for folder, subfolders, files in os.walk(here):
        subfolders[:] = sorted(d for d in subfolders if d not in _NO_KERNELS)
        for name in sorted(files):
            if name.endswith('.py'):
                yield os.path.join(folder, name)


def _source_digest(here=_HERE):
    """
    Hash of numba's version and every module of the package: the key of its compiled code.

    Numba keys a cached kernel on its own file's timestamp only, so a kernel that inlines a helper
    from another module would keep stale machine code after the helper changes (in a checkout, or
    a symlink install).  Keying the whole cache on a hash of every module that can hold or feed a
    kernel avoids that.  ``here``: the package's folder.
    """
    # str(): where numba is a documentation build's stand-in, its version is no string
    digest = hashlib.sha256(str(numba.__version__).encode())
    for path in kernel_modules(here):
        with open(path, 'rb') as f:
            digest.update(os.path.relpath(path, here).encode() + f.read())
    return 'numba-' + digest.hexdigest()[:16]


def numba_cache_dir():
    """
    Numba's cache folder for this exact source of the package.

    The base is ``$NUMBA_CACHE_DIR`` when set, else the user's cache folder.  Where the install
    step compiled the kernels (``_prebuilt/`` beside this file, see ``precompile.py``), the
    machine code of this copy of the package is taken from there: the first node after
    ``colcon build`` loads it instead of compiling for 20 s.  Numba files a kernel under the
    path of its source, so the same sources run from a checkout have entries of their own in
    the same folder; those already there do not stop the installed copy's from being added.

    Where that folder cannot be written (a service user without a home of its own, a
    read-only one), the kernels go to a folder of this user's in the temporary folder instead,
    and a warning says so: numba, finding no writable cache for a kernel beside a read-only
    install, would refuse to import it.
    """
    here = _HERE
    name = _source_digest()
    base = os.environ.get('NUMBA_CACHE_DIR') or os.path.join(
        os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache'),
        'manipulator_dynamics')
    target = os.path.join(base, name)
    if not _writable(target):
        import tempfile
        import warnings
        fallback = os.path.join(tempfile.gettempdir(), f'manipulator_dynamics-{os.getuid()}',
                                name)
        warnings.warn(f'the kernel cache {target} cannot be written (no home of this user, or a '
                      f'read-only one): the kernels are kept in {fallback}, which a reboot may '
                      'clear; set NUMBA_CACHE_DIR to a folder this user can write to keep them',
                      RuntimeWarning, stacklevel=2)
        base, target = os.path.dirname(fallback), fallback
        os.makedirs(target, exist_ok=True)
    prebuilt = os.path.join(here, '_prebuilt', name)
    if os.path.isdir(prebuilt) and os.path.abspath(base) != os.path.join(here, '_prebuilt'):
        _add_missing(prebuilt, target)
    return target


def _writable(folder):
    """Tell whether ``folder`` exists, or can be made, and files can be written in it."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def _add_missing(source, target):
    """
    Copy into ``target`` the files of ``source`` it lacks, each renamed into place.

    Nodes starting together may copy the same file: a rename is atomic, so none ever reads half
    a file.  Without room or rights nothing is copied, and numba compiles instead.
    """
    for folder, _, files in os.walk(source):
        into = os.path.join(target, os.path.relpath(folder, source))
        for name in files:
            dest = os.path.join(into, name)
            if os.path.exists(dest):
                continue
            scratch = f'{dest}.{os.getpid()}.tmp'
            try:
                os.makedirs(into, exist_ok=True)
                shutil.copyfile(os.path.join(folder, name), scratch)
                os.replace(scratch, dest)
            except OSError:
                try:
                    os.remove(scratch)
                except OSError:
                    pass
                return


numba.config.CACHE_DIR = numba_cache_dir()

JIT = {'cache': True, 'nogil': True, 'fastmath': {'contract'}, 'error_model': 'numpy'}

#: Options of the helpers the kernels call per body or per sample.  Numba compiles each function
#: on its own and LLVM does not inline across them, so a helper call is a real call that spills
#: every value to memory around it; ``inline='always'`` splices the helper into its caller at
#: numba's level instead.  That made the articulated-inertia sweep 2.8 times faster.
INLINE = dict(JIT, inline='always')

#: Options of the single-state entry points (the ``*_vector`` kernels): they keep the GIL.
#: Releasing it and taking it back costs 0.04-0.05 us, 7 % of one call of M on a 7-joint arm,
#: and a call of a microsecond leaves no time for another thread to use it.  The batch kernels,
#: which the threads of ``_parallel`` run, release it.
ONE_STATE = dict(JIT, nogil=False)


class Signature:
    """
    One kernel compiled for one fixed signature, called without numba's type dispatch.

    A call through a numba dispatcher types every argument and looks its signature up before
    running the machine code: about 30 ns per array argument and more for a structure, half the
    time of a 7-joint inverse dynamics.  A control loop calls with the same types every time, so
    the single-state paths resolve the compiled entry point once (the first call compiles it, or
    loads it from the cache) and then call it directly.

    The entry point converts its arguments to the declared types without checking them: the
    caller must pass exactly those (the public functions check dtype and ndim and take the
    general path otherwise).  1-D inputs are declared with any layout (``'A'``), so a strided
    view is read correctly.  The model is passed as its address (``rigid.kinematics.model_at``),
    an integer, which converts 0.07 us faster than the structure itself.
    """

    def __init__(self, kernel, *argtypes):
        self.kernel = kernel
        self.argtypes = tuple(argtypes)

    def call(self, *args):
        """Call the kernel; the first call binds ``call`` to the compiled entry point itself."""
        entry = self.kernel.compile(self.argtypes)
        self.call = entry
        return entry(*args)


#: Types of the single-state paths: an input vector of any layout, an output vector or matrix.
VECTOR = numba.types.Array(numba.types.float64, 1, 'A')
OUT_VECTOR = numba.types.Array(numba.types.float64, 1, 'C')
OUT_MATRIX = numba.types.Array(numba.types.float64, 2, 'C')
INT = numba.types.int64
FLOAT = numba.types.float64
BOOL = numba.types.boolean
