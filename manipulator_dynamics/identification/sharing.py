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
What is made of a piece of a log once, where several choices and fits make the same.

:func:`.estimate.cross_validate` identifies in every fold, each on its training pieces, and
chooses each fold's cutoff on folds of those: with three folds, every third of a log is a
training log of two folds and the held-out piece of the third, and every ninth a piece of two
folds' choices.  Within :func:`sharing`, what they make of the same piece alike is made once:
a log's motion bandwidth, a log's stamps checked and its gaps found at a cutoff
(:func:`.logs.stretches`), a piece's anti-aliased rows at the highest candidate's rate and its
equations' factors at each candidate (:mod:`.selection`, :mod:`.decimation`), a stretch of a
fit or a validation cut down to the cutoff's rate (:func:`.logs.differentiate_logs`, where
the folds chose one cutoff), the base parameters' columns.  The results are those made apart,
to the bit.  Two things are rounded to nine significant digits so that pieces of one log
agree on them: the motion's bandwidth (the candidates follow it) and the sample period (the
filters' coefficients follow it); the digits beyond are the stamps' rounding.

A piece is known by where its arrays lie in memory, their shape, strides and type, with the
model and the options that made it from them: the arrays (and anything else a key names by its
``id``) are held with what was made, so that no other can take their place while it is kept.
A stretch cut down to a cutoff's rate is known by the log it comes from and its span in it
(:func:`.logs.differentiate_logs`): where the stamps jitter, it is put on a grid anew at every
call, in arrays that are never held.  Nothing is kept beyond the block.
"""

import contextlib
import contextvars

import numpy as np

#: The :class:`Shared` of the :func:`sharing` block running, or None.
_SHARED = contextvars.ContextVar('manipulator_dynamics_shared_pieces', default=None)


@contextlib.contextmanager
def sharing():
    """Within, what is made of a piece of a log is made once (see the module)."""
    token = _SHARED.set(Shared())
    try:
        yield
    finally:
        _SHARED.reset(token)


def shared():
    """Return the :class:`Shared` of the :func:`sharing` block running, or None."""
    return _SHARED.get()


class Shared:
    """What was made of pieces of logs within a :func:`sharing` block, by what made it."""

    def __init__(self):
        self._kept = {}

    def get(self, kind, arrays, key, make, held=()):
        """
        Return ``make()``, made once for ``kind``, ``arrays`` and ``key``.

        ``held``: objects ``key`` names by their ``id``, held with it.
        """
        where = (kind, key) + tuple(_where(x) for x in arrays)
        if where not in self._kept:
            self._kept[where] = (arrays, held, make())
        return self._kept[where][2]


def once(kind, arrays, key, make, held=()):
    """Return ``make()``: made once within a :func:`sharing` block, each time outside one."""
    found = _SHARED.get()
    return make() if found is None else found.get(kind, arrays, key, make, held)


def named(value):
    """Return ``value`` where it can be part of a key, else its ``id`` (hold the value)."""
    try:
        hash(value)
    except TypeError:
        return ('id', id(value))
    return value


def _where(x):
    """Return what tells array ``x`` from any other while it lives (and is held)."""
    if not isinstance(x, np.ndarray):
        return 'id', id(x)
    face = x.__array_interface__
    return face['data'][0], face['shape'], face['strides'], face['typestr']
