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
Argument checks shared by the public functions: shapes, batches, finiteness, external wrenches.

The fast path costs a few hundred nanoseconds; the slow path (building a precise message) runs only
when something is wrong.
"""

import numpy as np

_F64 = np.dtype(np.float64)
_NO_WRENCH = {}


_ZEROS = {}


def zeros(n):
    """Return a read-only vector of ``n`` zeros, made once per ``n``."""
    z = _ZEROS.get(n)
    if z is None:
        z = _ZEROS[n] = np.zeros(n)
        z.flags.writeable = False
    return z


def states(model, names, *arrays):
    """
    Return ``(list of 2-D float64 arrays, N, single)`` for joint-space arguments.

    ``names`` names the ``arrays`` in messages.  Each argument is ``(n,)`` or ``(N, n)`` in the
    order of ``model.joint_names``; a 1-D argument is broadcast over the batch of the 2-D ones,
    which must share one ``N``.  ``single`` is True when every argument was 1-D (the caller then
    returns 1-D results).
    """
    shape = (model.n,)
    for x in arrays:            # fast path: what a control loop passes
        if not (type(x) is np.ndarray and x.shape == shape and x.dtype is _F64
                and x.flags.c_contiguous):
            return _states(model, names, arrays)
    return [x[None] for x in arrays], 1, True


def per_joint(model, value, what, unit, positive=True):
    """
    Return ``value`` as ``(n,)``: one number for every joint, or one per joint, each finite > 0.

    ``ValueError`` says ``what`` is wrong, naming the joint (a gain, a threshold, ...).
    ``positive=False``: each finite >= 0 (a growth, which may be none).
    """
    x = np.asarray(value, dtype=float).reshape(-1)
    if x.size == 1:
        x = np.full(model.n, x[0])
    if x.shape != (model.n,):
        raise ValueError(f"{what}: one value or one per joint ({model.n} for '{model.name}'), "
                         f'got {x.size}')
    for i in np.flatnonzero(~(np.isfinite(x) & ((x > 0) if positive else (x >= 0)))):
        raise ValueError(f"{what} of joint '{model.joint_names[i]}' is {x[i]:g}: it must be a "
                         f'finite number {">" if positive else ">="} 0 ({unit})')
    return x


def vectors(a, b, c):
    """
    Tell whether ``a, b, c`` are 1-D float64 arrays: the control loop's fast path.

    Lengths and finiteness are then checked by the compiled kernel, which returns a status; on a
    non-zero status the caller takes the general path, which raises the precise error.  Written
    out, not looped: this runs on every call of the single-state functions.  An object that only
    looks like an array fails the compiled entry point's own conversion with ``TypeError``, and
    the caller then takes the general path too.
    """
    try:
        return (a.dtype is _F64 and b.dtype is _F64 and c.dtype is _F64 and a.ndim == 1
                and b.ndim == 1 and c.ndim == 1)
    except AttributeError:
        return False


def _states(model, names, arrays):
    n = model.n
    out = []
    N = 1
    single = True
    for name, x in zip(names, arrays):
        try:
            a = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f'{name} must be an array of numbers, '
                            f'got {type(x).__name__}') from None
        if a.ndim == 1 and a.shape[0] == n:
            a = a.reshape(1, n)
        elif a.ndim == 2 and a.shape[1] == n and a.shape[0] > 0:
            single = False
            if a.shape[0] != 1:
                if N != 1 and a.shape[0] != N:
                    raise ValueError(f'{name} has {a.shape[0]} samples but an earlier argument '
                                     f'has {N}')
                N = a.shape[0]
        else:
            raise ValueError(f'{name} must have shape ({n},) or (N, {n}) for the {n} joints of '
                             f"'{model.name}' (order: model.joint_names), got shape {a.shape}")
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
        out.append(a)
    return out, N, single


def raise_nonfinite(model, names, *arrays):
    """Raise ``ValueError`` naming the first non-finite element of the 2-D ``arrays``."""
    for name, a in zip(names, arrays):
        bad = np.argwhere(~np.isfinite(a))
        if len(bad):
            s, j = bad[0]
            where = f'{name}[{j}]' if a.shape[0] == 1 else f'{name}[{s}, {j}] (sample {s})'
            raise ValueError(f"{where} is {a[s, j]} for joint '{model.joint_names[j]}': "
                             'inputs must be finite')
    raise ValueError('inputs must be finite')  # pragma: no cover - callers check first


def external_wrenches(model, f_ext, N):
    """
    Convert ``{link: wrench}`` to the kernels' ``(Nf, n, 6)`` body-frame array, Nf in {0, 1, N}.

    A wrench is ``[fx, fy, fz, mx, my, mz]`` (the order of geometry_msgs/Wrench) exerted *on* the
    link by the environment, expressed in the link frame, moment about the link frame origin; shape
    (6,) or (N, 6).  Links merged into a body through fixed joints are accepted.
    """
    if f_ext is None or len(f_ext) == 0:
        none = _NO_WRENCH.get(model.n)
        if none is None:
            none = _NO_WRENCH[model.n] = np.zeros((0, model.n, 6))
        return none
    rows = 1
    converted = []
    for link, wrench in f_ext.items():
        if link not in model.frames:
            raise ValueError(f"f_ext names link '{link}', which is not a link of model "
                             f"'{model.name}'")
        w = np.asarray(wrench, dtype=np.float64)
        if w.shape == (6,):
            w = w.reshape(1, 6)
        elif not (w.ndim == 2 and w.shape[1] == 6 and w.shape[0] in (1, N)):
            raise ValueError(f"f_ext['{link}'] must have shape (6,) or ({N}, 6), got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError(f"f_ext['{link}'] has non-finite values")
        rows = max(rows, w.shape[0])
        converted.append((model.frames[link], w))
    out = np.zeros((rows, model.n, 6))
    for frame, w in converted:
        if frame.body < 0:
            continue                      # a wrench on the fixed base moves nothing
        f = w[:, :3] @ frame.R.T
        m = w[:, 3:] @ frame.R.T + np.cross(frame.p, f)
        out[:, frame.body, :3] += f
        out[:, frame.body, 3:] += m
    return out
