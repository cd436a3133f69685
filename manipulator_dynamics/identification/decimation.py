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
Pieces of logs at the rates the cutoff's candidates are judged at: filtered once at full rate.

Judging a cutoff ``c`` (:func:`.selection.choose_cutoff`) fits on positions filtered at ``c``,
their derivatives and the regressor, then the parallel filter keeps ``2.5 c`` rows per second.
None of it needs more than :data:`.filtering.RATE_PER_CUTOFF` samples per second per Hz of
``c`` (what :func:`.logs.differentiate_logs` cuts a fast log down to).  So each piece is
filtered once at its full rate (zero phase, chunk by chunk, :func:`.filtering.decimated`) by an
anti-alias low-pass at
:data:`.filtering.ALIAS_SHARE` of the rate it is cut down to, the highest candidate's, and
every lower candidate is cut down further from those rows, never from the full rate again.

The held-out piece is scored at its full rate against the torques as measured, so that every
candidate answers to the same measurements (:meth:`Decimated.error`): what the fit predicts at
the decimated rows, but its friction, is smooth (it is the rigid body's, of positions filtered
at ``c``) and is interpolated; the friction, whose Coulomb term jumps at each reversal, is
evaluated at every sample from the interpolated velocities (:func:`.validation.at_full_rate`).
An anti-aliased torque would smooth those jumps that the prediction keeps, and charge the
difference to the candidate.
"""

from dataclasses import dataclass
import functools
import warnings

import numpy as np

from .filtering import RATE_PER_CUTOFF, reduced, reduction
from .friction import friction_of
from .logs import stretches
from .pieces import made, Piece
from .validation import at_full_rate, ExtrapolationWarning

#: Rows, at the highest candidate's rate, below which a stretch is too short for any candidate:
#: the fit trims ``3 / cutoff`` seconds, 60 rows or more, at each end.
SHORTEST = 2 * 3 * int(RATE_PER_CUTOFF)


@dataclass(frozen=True, eq=False)
class Stretch:
    """
    A stretch between gaps, low-passed and decimated, and as measured.

    ``t (rows,)``, ``q`` and ``tau (rows, n)`` at the reduced rate; ``raw_t (N,)`` and
    ``raw_tau (N, n)``: the stretch at its full rate, which scores the predictions.
    :attr:`log`: ``(t, q, tau)`` as a log, which keeps what its fits make of it.
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    raw_t: np.ndarray
    raw_tau: np.ndarray

    @functools.cached_property
    def log(self):
        """Return ``(t, q, tau)``: a :class:`.pieces.Piece`, the same at every call."""
        return Piece((self.t, self.q, self.tau))

    def cut(self, factor, rate):
        """Return this stretch ``factor`` times shorter in rows; ``rate``: its own, in Hz."""
        if factor == 1:
            return self
        q, tau = reduced((self.q, self.tau), rate, factor)     # side by side: one pass
        return Stretch(t=self.t[::factor], q=q, tau=tau, raw_t=self.raw_t, raw_tau=self.raw_tau)


def steps(rate, candidates):
    """
    Return ``{cutoff: full-rate samples per row}`` at which each candidate is judged.

    The highest candidate's step first; the others integer multiples of it, so that each is cut
    from its rows.
    """
    top = reduction(rate, max(candidates))
    return {c: top * reduction(rate / top, c) for c in candidates}


class Decimated:
    """
    Pieces of logs, each at the rate every candidate cutoff is judged at.

    ``pieces``: ``(t, q, tau)`` of pieces of the logs (:class:`.pieces.Piece`, each keeping
    what is made of it for the candidates' highest and the model), each cut at its gaps as the
    highest candidate cuts it (:func:`.logs.stretches`) and filtered at the full rate once.
    :meth:`at` returns a piece's stretches for a candidate.
    """

    def __init__(self, model, pieces, candidates):
        self.candidates = sorted(float(c) for c in candidates)
        top = self.candidates[-1]
        self._model, self._arrays = model, list(pieces)
        self._pieces, self._rates, self._cache = [], [], {}
        for piece in self._arrays:
            stretched, rate = self.kept(len(self._pieces), 'rows',
                                        lambda piece=piece: self._first(piece, top))
            self._pieces.append(stretched)
            self._rates.append(rate)

    def _first(self, piece, top):
        """Return a piece's stretches at ``top``'s rate, and its rate."""
        cut, _, period = stretches(self._model, [piece], top)[:3]
        rate = 1.0 / period
        first = steps(rate, self.candidates)[top]
        return [Stretch(t, q, tau, t, tau).cut(first, rate) for t, q, tau in cut
                if len(t) >= SHORTEST * first], rate        # shorter: too short for any

    def kept(self, k, key, make, held=()):
        """
        Return ``make()`` for piece ``k``: made once where it is a :class:`.pieces.Piece`.

        ``key`` tells it apart from what else is kept of the piece (the highest candidate and
        the model are added); ``held``: objects ``key`` names by ``id``, held with it.
        """
        return made(self._arrays[k], ('ladder', id(self._model), self.candidates[-1], key),
                    make, (self._model,) + tuple(held))

    def __len__(self):
        """Return the number of pieces."""
        return len(self._pieces)

    def at(self, k, cutoff):
        """Return piece ``k``'s stretches at the rate ``cutoff`` is judged at."""
        key = (k, cutoff)
        if key not in self._cache:
            rate = self._rates[k]
            chosen = steps(rate, self.candidates)
            want, first = chosen[cutoff], chosen[self.candidates[-1]]
            self._cache[key] = [s.cut(want // first, rate / first) for s in self._pieces[k]]
        return self._cache[key]

    def forget(self, cutoff):
        """Let go of the stretches cut for ``cutoff`` (:meth:`at` cuts them again if asked)."""
        for key in [key for key in self._cache if key[1] == cutoff]:
            del self._cache[key]

    def error(self, fitted, k, cutoff):
        """
        Return ``(squared error, squared torques)`` of piece ``k`` as ``fitted`` predicts it.

        ``fitted``: an :class:`.fit.Estimate` of the other pieces at ``cutoff``.  Sums over the
        piece's samples at its full rate (:func:`.validation.at_full_rate`), where
        :meth:`.fit.Estimate.validate` would score them (each stretch's filter transients left
        out), of the measured torques minus the prediction, and of the measured torques.
        """
        held = self.at(k, cutoff)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', ExtrapolationWarning)
            t, q, qd, qdd = fitted.states([s.log for s in held])[:4]
        friction = friction_of(fitted.model, fitted.names, fitted.values)
        predicted = fitted.predictions(q, qd, qdd, {'identified': fitted.values})
        del q, qdd                      # a long piece's: not held while it is scored
        scored = at_full_rate(fitted.model.joint_names, [(s.raw_t, s.raw_tau) for s in held], t,
                              qd, predicted, {'identified': friction})
        return (float(scored.sums['squared_error']['identified'].sum()),
                float(scored.sums['squared_torque'].sum()))
