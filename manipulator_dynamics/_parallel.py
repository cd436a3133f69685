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
Long batches split over the machine's cores, on plain Python threads.

The kernels release the GIL (``nogil=True``), so row chunks of one batch run truly in parallel.
Plain threads, not numba's ``parallel=True``: its default threading layer must not be entered
from two Python threads at once, which a ROS node with a multi-threaded executor would do.  Single
states and short batches stay on the caller's thread.
"""

import collections
from concurrent.futures import ThreadPoolExecutor
import functools
import os
import threading

#: Fewest rows worth a thread of their own: below this, handing work to a thread costs more than
#: it saves (a thread hand-off is tens of microseconds; a row is about a microsecond).
MIN_ROWS_PER_THREAD = 256

_lock = threading.Lock()
_pool = None
_threads = int(os.environ.get('MANIPULATOR_DYNAMICS_THREADS', '0')) or min(os.cpu_count() or 1, 8)


def set_threads(count):
    """
    Use at most ``count`` threads for a batch (1: never split).  Returns the previous count.

    The default is the number of cores (at most 8), or ``$MANIPULATOR_DYNAMICS_THREADS``.
    """
    global _threads, _pool
    if int(count) < 1:
        raise ValueError(f'thread count must be >= 1, got {count}')
    with _lock:
        previous, _threads = _threads, int(count)
        if _pool is not None and _pool._max_workers < _threads:
            _pool.shutdown(wait=False)
            _pool = None
    return previous


def get_threads():
    """Return the most threads a batch may use."""
    return _threads


def _shared_pool():
    """Return the threads every batch shares, started on first use."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_threads,
                                       thread_name_prefix='manipulator_dynamics')
        return _pool


def run(kernel, N, batched, **fixed):
    """
    Call ``kernel(**batched, **fixed)``, splitting the rows of the ``batched`` arrays over threads.

    ``batched`` maps argument names to arrays whose first axis is the batch of ``N`` rows; those
    with one row (or none: an absent external wrench) are broadcast, as the kernels do, and go
    whole to every chunk.  ``fixed`` arguments go to every chunk as they are.  Returns the list
    of the chunks' return values.
    """
    chunks = min(_threads, N // MIN_ROWS_PER_THREAD)
    if chunks <= 1:
        return [kernel(**batched, **fixed)]
    pool = _shared_pool()
    bounds = [N * c // chunks for c in range(chunks + 1)]

    def chunk(c):
        a, b = bounds[c], bounds[c + 1]
        part = {k: x[a:b] if x.shape[0] == N else x for k, x in batched.items()}
        # each chunk on its own copy of a shared structure (a kernel model: see its private())
        own = {k: v.private(c) if hasattr(v, 'private') else v for k, v in fixed.items()}
        return kernel(**part, **own)

    futures = [pool.submit(chunk, c) for c in range(chunks)]
    return [f.result() for f in futures]


#: Fewest values of an array worth a thread of their own in
#: :func:`..identification.filtering.filtered` (a filter passes each value twice in about 5 ns).
MIN_VALUES_PER_THREAD = 1 << 16


def in_order(function, items):
    """
    Return ``[function(item) for item in items]``, the items on the shared threads.

    For work that lets go of the GIL (numpy on large arrays, scipy's compiled loops) and whose
    results the caller combines in their order, so that nothing depends on which thread
    finished first.  One item, or one thread, runs on the caller's thread.
    """
    items = list(items)
    if len(items) <= 1:
        return [function(item) for item in items]
    return list(ahead(function, items, depth=len(items) + 1))     # every one at once


def ahead(function, items, depth=None):
    """
    Yield ``function(item)`` for each of ``items`` in their order, the next ones made meanwhile.

    For a stream of work that lets go of the GIL (pandas' C parser on a part of a file): while
    the caller holds one result, the shared threads make the next ``depth - 1`` (default:
    one per thread), so that the caller's work on each overlaps theirs, and no more than
    ``depth`` are held at once.  With one thread, each is made on the caller's
    thread when asked for.  Items the caller never asks for (it stopped early) are cancelled
    where not started.
    """
    if _threads <= 1:
        for item in items:
            yield function(item)
        return
    pool = _shared_pool()
    depth = depth or _threads + 1
    pending = collections.deque()
    try:
        for item in items:
            pending.append(pool.submit(function, item))
            if len(pending) >= depth:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()


def blas_on_one_thread(function):
    """
    Return ``function`` run with BLAS and LAPACK on one thread, as they were after it.

    What the package splits over the cores it splits itself, on the threads above.  OpenBLAS
    splits a product or a decomposition of a few thousand rows over threads of its own, and
    these then wait for more work by spinning on a core: beside the package's threads they
    took the cores from them.  The hour's identification (``benchmarks/bench_identification.py``)
    used 20 s of CPU in 13 s on two cores; with BLAS on one thread, 12 s in 11.5 s, every
    figure the same.  The entry points of identification are wrapped (threadpoolctl: 1 ms a
    call); blocks nest, each restoring what it found.  Not the excitation's optimiser, whose
    motion follows BLAS's rounding (commit eb38eb4 says how much).
    """
    @functools.wraps(function)
    def on_one_thread(*args, **kwargs):
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:                     # optional: the same figures, more CPU
            _without_threadpoolctl()
            return function(*args, **kwargs)
        with threadpool_limits(1, user_api='blas'):
            return function(*args, **kwargs)
    return on_one_thread


@functools.lru_cache(maxsize=None)
def _without_threadpoolctl():
    """Say once that BLAS keeps its own threads: threadpoolctl is not installed."""
    import warnings
    warnings.warn('threadpoolctl is not installed: BLAS keeps its own threads beside the '
                  "package's, which on few cores slows an identification down (the same "
                  'figures); pip install threadpoolctl, or apt install python3-threadpoolctl',
                  RuntimeWarning, stacklevel=3)
