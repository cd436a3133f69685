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
A log's samples checked: ``(N, n)`` arrays of finite numbers, stamps that never go back.

Every refusal names the sample and the joint.
"""

import numpy as np

from . import spill
from ..errors import RecordingError


def sample_matrix(model, name, x):
    """Return ``x`` as an ``(N, n)`` array of finite numbers, or refuse it naming the sample."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise RecordingError(f'{name} must be an array of numbers') from None
    if a.ndim != 2 or a.shape[1] != model.n:
        raise RecordingError(f'{name} must have shape (N, {model.n}) for the joints '
                             f'{", ".join(model.joint_names)}, got {a.shape}')
    first, count = None, 0
    for start, block in spill.by_chunks(a):         # a long log's: never all of it at once
        finite = np.isfinite(block)
        if finite.all():                            # the usual chunk: nothing to find
            continue
        bad = np.argwhere(~finite)
        if first is None:
            first = (start + int(bad[0][0]), int(bad[0][1]))
        count += len(bad)
    if first is not None:
        s, j = first
        raise RecordingError(f"{name}[{s}, {j}] (joint '{model.joint_names[j]}') is "
                             f'{a[s, j]}: {count} non-finite values in {name}; remove '
                             'those samples or fill the gaps before identifying')
    return a


def time_series(model, t, q, tau, where=''):
    """Check one log's ``t (N,)``, ``q``, ``tau (N, n)``; return them as arrays."""
    t = np.asarray(t, dtype=float).reshape(-1)
    try:
        q, tau = sample_matrix(model, 'q', q), sample_matrix(model, 'tau', tau)
    except RecordingError as e:
        raise RecordingError(where + str(e)) from None
    if not (len(t) == len(q) == len(tau)):
        raise RecordingError(f'{where}t, q and tau must have the same number of samples, '
                             f'got {len(t)}, {len(q)}, {len(tau)}')
    # a long log's stamps a chunk at a time: an hour's are 29 MB a copy
    if not all(np.all(np.isfinite(t[a:a + spill.CHUNK])) for a in range(0, len(t), spill.CHUNK)):
        raise RecordingError(f'{where}time stamps must be finite')
    back = spill.intervals(t, lambda dt: np.flatnonzero(dt < 0)[:1])
    if len(t) < 2 or len(back):
        at = int(back[0]) if len(back) else 0
        raise RecordingError(f'{where}time stamps must not decrease (sample {at}, '
                             f'{t[at]:.6g} s, is before the one before it): sort the data, '
                             'or pass each recording as its own log')
    return t, q, tau
