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
A piece of a log in time, which keeps what is made of it.

:func:`.estimate.cross_validate` identifies in every fold, each on its training pieces, and
chooses each fold's cutoff on folds of those: with three folds, every third of a log is a
training log of two folds and the held-out piece of the third, and every ninth a piece of two
folds' choices.  The folds are cut by :meth:`Piece.pieces`, which gives a piece's pieces once:
every fold, choice and validation that cuts a third gets the same ninths, and what is made of
a piece is made once, on the piece (:func:`made`): its motion bandwidth, its stamps checked
and its gaps found at a cutoff (:func:`.logs.stretches`), its anti-aliased rows at the highest
candidate's rate and its equations' factors at each candidate (:mod:`.selection`,
:mod:`.decimation`), a stretch of it cut down to a cutoff's rate
(:func:`.logs.differentiate_logs`).  The results are those made apart, to the bit.  Two things
are rounded to nine significant digits so that pieces of one log agree on them: the motion's
bandwidth (the candidates follow it) and the sample period (the filters' coefficients follow
it); the digits beyond are the stamps' rounding.

What is kept lives as long as the piece: the pieces of a cross-validation are its own, and go
with it.  A log given as a plain tuple keeps nothing: each call makes what it needs.
"""

import numpy as np

from ..errors import IdentificationError


class Piece(tuple):
    """
    A time series ``(t, q, tau)``, a log or a piece of one, that keeps what is made of it.

    A tuple, read wherever ``(t, q, tau)`` is (:func:`..recordings.log.read_series` gives it
    back as it is): :meth:`pieces` cuts it in time, once; :meth:`made` keeps what is made of it.
    """

    def __new__(cls, arrays):
        """Hold the arrays ``(t, q, tau)`` as they are (views, not copies)."""
        piece = super().__new__(cls, arrays)
        piece._kept, piece._cut = {}, {}
        return piece

    def __getnewargs__(self):
        """Pickle the arrays alone: what was made of them is not sent."""
        return (tuple(self),)

    def __getstate__(self):
        """Send nothing of what was made (a copy makes it again)."""
        return None

    def __setstate__(self, state):
        """Begin a copy with nothing made."""
        self._kept, self._cut = {}, {}

    @classmethod
    def of(cls, log):
        """Return ``log`` where it is a Piece, else a Piece of its arrays."""
        return log if isinstance(log, cls) else cls(tuple(log))

    def pieces(self, folds):
        """
        Return this series cut into ``folds`` consecutive pieces of equal length: Pieces.

        Views of its arrays (:func:`fold_ranges`), the same Pieces at every call.
        """
        key = (type(folds), folds)            # 3.0 is refused, not the cut of 3
        if key not in self._cut:
            self._cut[key] = [Piece(tuple(np.asarray(x)[r] for x in self))
                              for r in fold_ranges([self], folds)[0]]
        return self._cut[key]

    def made(self, key, make, held=()):
        """
        Return ``make()``, made once for ``key``.

        ``held``: objects ``key`` names by their ``id``, held with what was made, so that no
        other can take their place while it is kept.
        """
        if key not in self._kept:
            self._kept[key] = (held, make())
        return self._kept[key][1]


def fold_ranges(logs, folds):
    """Return per log the ``folds`` slices that cut it into consecutive pieces of equal length."""
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise IdentificationError(f'folds must be an integer of at least 2, got {folds!r}')
    ranges = []
    for log in logs:
        edges = np.cumsum([0] + [len(a) for a in np.array_split(np.arange(len(log[0])), folds)])
        ranges.append([slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])])
    return ranges


def made(log, key, make, held=()):
    """Return ``make()``: kept on ``log`` where it is a :class:`Piece`, made anew where not."""
    if isinstance(log, Piece):
        return log.made(key, make, held)
    return make()


def named(value):
    """Return ``value`` where it can be part of a key, else its ``id`` (hold the value)."""
    try:
        hash(value)
    except TypeError:
        return ('id', id(value))
    return value
