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
The cutoff from the data: the motion's bandwidth, and the candidate whose fits best predict.

:func:`choose_cutoff` tries multiples of the motion's bandwidth (:func:`motion_bandwidth`) and
keeps the one whose fits (:func:`.fit.fit`, the settings given) best predict held-out pieces
in time (:func:`folds_in_time`); :func:`resolve_cutoff` is what ``identify(cutoff=...)`` does with
its argument.  :func:`choose_prior_weight` does the same for the physically consistent fit's
prior weight, :func:`choose_prior_threshold` for the prior's threshold.  Each takes the
:class:`.settings.Settings` the fits are made with (or their options by keyword).  It sits
below :mod:`.estimate`: it fits, it never identifies with choices of its
own, so nothing here calls back up.
"""

import warnings

import numpy as np

from .base_parameters import base_parameters
from .decimation import Decimated
from .filtering import CUTOFF_HZ
from .fit import factored, fit, solve_values
from .friction import LAYOUTS, with_law
from .least_squares import PRIOR_THRESHOLDS
from .logs import at_grid
from .pieces import made, named, Piece
from .settings import Settings
from .validation import ExtrapolationWarning, pooled
from ..errors import IdentificationError
from ..recordings import spill
from ..recordings.log import read_series_list, read_time_series


#: Multiples of the motion's bandwidth (:func:`motion_bandwidth`) ``cutoff='auto'`` tries.
CUTOFF_MULTIPLES = (2.5, 5.0, 10.0, 20.0)

#: Prior weights ``prior_weight='auto'`` tries (units of one equation's noise): from a prior
#: that decides little beside thousands of samples to one that outweighs a thousand of them.
PRIOR_WEIGHTS = (0.1, 1.0, 10.0, 100.0, 1000.0)


def base_columns(model, law, armature):
    """Return the base parameters of ``model`` with the friction ``law`` and ``armature``."""
    return base_parameters(with_law(model, law), friction=LAYOUTS[law], armature=armature)


def motion_bandwidth(logs, power=0.999):
    """
    Return the highest frequency of the motion in Hz: below it, ``power`` of the positions'.

    Per log and joint, the positions (on a uniform grid, their linear trend removed, a Hann
    window against the leakage of a log that is not a whole number of periods, which spread a
    thousandth of the power to 7 Hz) are Fourier transformed, zero-padded to the next length
    the transform is fast for (a log's own length is often not: an hour at 1 kHz one sample
    short took 1.1 s a joint, padded 0.17 s); the frequency under which ``power`` of their
    power lies, the largest over joints and logs.  Noise, flat and weak, does not move it.
    Rounded to nine significant digits: it is known to a bin of the spectrum, a thousandth of
    it or more, and the digits beyond are the stamps' rounding (the thirds of one motion found
    0.25500000000603 and 0.25499999999878 Hz), so that pieces of one motion agree on it.  Not
    to fewer: a cutoff's rows per sample (:func:`.filtering.reduction`) would move with it
    where the bandwidth is a round fraction of the rate (5/9 Hz at 1 kHz: 9 samples a row).
    """
    import scipy.fft

    highest = 0.0
    for t, q, _ in logs:
        t, q = np.asarray(t, dtype=float), np.asarray(q, dtype=float)
        intervals = np.diff(t)
        step = float(np.median(intervals, overwrite_input=True))
        del intervals
        # an hour's column is 29 MB: the grid and its trend are made a chunk at a time, never
        # whole; the transform's input is padded where it is made, not copied
        grid = spill.Range(t[0], t[-1], step)
        middle = sum(float(g.sum()) for _, g in grid) / len(grid)
        slope = sum(float((g - middle) @ (g - middle)) for _, g in grid)
        length = scipy.fft.next_fast_len(len(grid), real=True)
        # the window once for every joint (its cosines had been a third of the pass), in a
        # file where the log is long, as the log is
        window = spill.columns(len(grid), 1, spill.is_spilled(q) or None)[:, 0]
        for a, g in grid:
            window[a:a + len(g)] = grid.hanning(a, len(g))
            spill.release(window)
        for j in range(q.shape[1]):
            column, x = np.ascontiguousarray(q[:, j]), np.zeros(length)
            for a, g in grid:                       # between the samples around the chunk
                x[a:a + len(g)] = at_grid(g, t, column[:, None])[:, 0]
                spill.release(q, t)                 # a long log's: a chunk at a time
            del column
            along = sum(float((g - middle) @ x[a:a + len(g)]) for a, g in grid)
            mean, across = x[:len(grid)].mean(), max(slope, 1e-300)
            for a, g in grid:
                x[a:a + len(g)] -= mean + (g - middle) * along / across
                x[a:a + len(g)] *= window[a:a + len(g)]
                spill.release(window)
            spectrum = power_spectrum(x)            # in x's own memory
            total = spectrum.sum()
            if total > 0:
                f = first_reaching(spectrum, total, power) * (1.0 / (length * step))  # rfftfreq's
                highest = max(highest, float(f))
            del x, spectrum                         # not beside the next column's
        del window
    return float(f'{highest:.9g}')


def first_reaching(spectrum, total, share):
    """
    Return ``np.searchsorted(np.cumsum(spectrum) / total, share)``, to the bit: a chunk at a time.

    The cumulative sum is carried from chunk to chunk as numpy's runs (each sum the one before
    plus the next bin), and the search stops at the first chunk that reaches ``share``: a
    motion's power lies in its lowest bins, and the rest of the spectrum is never summed.
    """
    carried = 0.0
    for a in range(0, len(spectrum), spill.CHUNK):
        part = np.cumsum(np.concatenate([[carried], spectrum[a:a + spill.CHUNK]]))[1:]
        carried = part[-1]
        np.divide(part, total, out=part)
        found = int(np.searchsorted(part, share))
        if found < len(part):
            return a + found
    return len(spectrum)


def power_spectrum(x):
    """
    Return ``abs(scipy.fft.rfft(x)) ** 2``, to the last bit, in the memory of ``x (L,)``.

    ``scipy.fft.rfft`` returns a complex array beside its input, and its absolute value a
    third: 2.5 times the input's bytes (an hour at 1 kHz: 72 MB a column, growing with the
    log).  ``scipy.fftpack.rfft`` transforms in place, its output packed as ``r0, r1, i1, r2,
    i2, ...`` (the same numbers as ``scipy.fft.rfft``'s, bit for bit); each bin's power is
    taken from its pair, a chunk at a time, by numpy's complex absolute value, and written
    where the bins already read lay.  ``x`` is overwritten: the power is its first
    ``L // 2 + 1`` entries.
    """
    import scipy.fftpack

    length = len(x)
    packed = scipy.fftpack.rfft(x, overwrite_x=True)
    last = packed[-1] if length % 2 == 0 else None     # Nyquist's bin: real alone
    pairs = (length - 1) // 2                           # the bins with an imaginary part
    power = packed[:length // 2 + 1]
    power[0] = packed[0] * packed[0]
    for a in range(1, pairs + 1, spill.CHUNK):
        b = min(pairs + 1, a + spill.CHUNK)
        z = np.empty(b - a, dtype=complex)
        z.real, z.imag = packed[2 * a - 1:2 * b - 1:2], packed[2 * a:2 * b:2]
        power[a:b] = np.square(np.abs(z))       # each bin after the ones it was read from
    if last is not None:
        power[-1] = last * last
    return power


def choose_cutoff(model, data, settings=None, *, folds=3, candidates=None, **options):
    """
    Choose the filter's cutoff from the data: the one whose fits best predict held-out pieces.

    Candidates: :data:`CUTOFF_MULTIPLES` of the motion's bandwidth (:func:`motion_bandwidth`),
    below 0.2 of the sample rate.  Each is judged by the pooled error of the identified model
    over :func:`folds_in_time` (``folds`` pieces of every log, the measured torques unfiltered,
    so that every cutoff answers to the same measurements): too low a cutoff attenuates the
    motion, too high one lets the positions' noise, differentiated twice, into the regressor,
    and the held-out error sees both.  The pieces are filtered at their full rate once and each
    candidate judged on as few rows as it needs (:mod:`.decimation`), one pass per candidate.

    The error is a valley in the cutoff (the attenuation falls, the noise rises): the
    candidates are judged from the lowest up, and once one's error is above the smallest
    below it the valley's floor is passed and the higher ones, each twice as costly as the one
    below it, are not judged (``report['not_judged']``, said in :func:`cutoff_summary`).
    ``candidates`` given are judged every one.  ``settings`` (or their ``options``): the fits'
    (:class:`.settings.Settings`; its cutoff is each candidate's).  Returns
    ``(cutoff, report)``, the report with the bandwidth and every judged candidate's error.
    """
    settings = Settings.given(settings, **options)
    logs = [Piece.of(log) for log in read_time_series(model, data, settings.topic,
                                                      "cutoff='auto'", settings.retime)]
    # the largest of each log's (motion_bandwidth's own), each found once for a piece
    bandwidth = max(made(log, 'bandwidth', lambda log=log: motion_bandwidth([log]))
                    for log in logs)
    fs = 1.0 / float(np.median(np.diff(np.asarray(logs[0][0], dtype=float)),
                               overwrite_input=True))   # not a copy beside the intervals
    valley = candidates is None                 # the user's own candidates are judged whole
    if candidates is None:
        candidates = [m * bandwidth for m in CUTOFF_MULTIPLES if 0 < m * bandwidth < 0.2 * fs]
    candidates = [float(c) for c in candidates]
    errors, refused, not_judged = {}, {}, []
    law = settings.law
    if candidates and settings.base is None and law != 'smooth':
        # once, not per candidate and fold: the same robot, law and columns every time
        settings = settings.replace(base=base_columns(model, law, settings.armature))
    if candidates:
        pieces = [piece for log in logs for piece in log.pieces(folds)]
        ladder = Decimated(model, pieces, candidates)
        held = [[i * folds + k for i in range(len(logs))] for k in range(folds)]
        for c in sorted(candidates):
            if valley and errors and errors[max(errors)] > min(errors.values()):
                not_judged.append(c)                # past the valley's floor: see above
                continue
            try:
                errors[c] = held_out_error(model, ladder, held, c, settings=settings)
            except IdentificationError as e:        # too low: the pieces are too short
                refused[c] = str(e)
            ladder.forget(c)                        # an hour's pieces: 20-40 MB a candidate
    if not errors:
        raise IdentificationError(f'no cutoff could be judged ({len(candidates)} tried around '
                                  f'the motion bandwidth {bandwidth:.3g} Hz): '
                                  + '; '.join(f'{c:.3g} Hz: {e}' for c, e in refused.items()))
    best = min(errors, key=errors.get)
    return best, {'bandwidth_hz': bandwidth, 'folds': folds, 'held_out_error': errors,
                  'refused': refused, 'not_judged': not_judged}


def held_out_error(model, ladder, folds, cutoff, settings=None):
    """
    Return the pooled normalised squared error (percent) of fits at ``cutoff`` over folds.

    ``ladder``: the pieces (:class:`.decimation.Decimated`); ``folds``: per fold, the pieces it
    holds out, the others its training; ``settings``: the fits' (:class:`.settings.Settings`,
    its cutoff ``cutoff``).  Errors and energies at the full rate
    (:meth:`.decimation.Decimated.error`).  Each piece's equations are made and decomposed
    once (:func:`.fit.equations`, :func:`.fit.factored`) and each fold solves those of its
    training pieces stacked, where nothing in a piece's equations depends on the others: every
    law but the smooth one, whose Coulomb velocity is fitted on all the rows, and no
    ``still='auto'``, whose speeds are all the pieces'.  Only the values of a fold are
    computed (:func:`.fit.solve_values`): its prediction is what is judged.
    """
    settings = Settings.given(settings, cutoff=cutoff)
    pieces = None
    if settings.law != 'smooth' and settings.still in (None, 0):
        key = ('factors', cutoff) + settings.key(named)
        pieces = [ladder.kept(j, key, lambda j=j: piece_factors(model, ladder.at(j, cutoff),
                                                                settings),
                              (settings.base, settings.armature))
                  for j in range(len(ladder))]
    wrong = total = 0.0
    for held in folds:
        train = [s.log for j in range(len(ladder)) if j not in held
                 for s in ladder.at(j, cutoff)]
        if not train or not all(ladder.at(j, cutoff) for j in held):
            raise IdentificationError(f'a piece of the {len(folds)} folds has no stretch long '
                                      f'enough to filter at {cutoff:g} Hz')
        if pieces is None:
            estimate = fit(model, train, settings)
        else:
            made = [pieces[j] for j in range(len(ladder)) if j not in held]
            found = [p for p in made if not isinstance(p, IdentificationError)]
            if not found:
                raise made[0]
            estimate = solve_values(found)
        for j in held:
            missed, energy = ladder.error(estimate, j, cutoff)
            wrong, total = wrong + missed, total + energy
    return 100.0 * wrong / total


def piece_factors(model, stretched, settings):
    """
    Return the :class:`.fit.Factored` equations of one piece's stretches, or the error.

    ``settings``: :func:`held_out_error`'s, the candidate's cutoff in place.
    """
    if not stretched:
        return IdentificationError(f'no stretch long enough to filter at {settings.cutoff:g} Hz')
    try:
        return factored(model, [s.log for s in stretched], settings)
    except IdentificationError as e:        # its stretches too short: the others may do
        return e


def resolve_cutoff(model, data, cutoff, settings=None, **options):
    """
    Return ``(cutoff in Hz, how it was chosen or None)`` for ``identify``'s ``cutoff``.

    A number is used as it is; ``'auto'`` and None choose it from the data
    (:func:`choose_cutoff`, its fits made with ``settings`` or their ``options``), None falling
    back to :data:`.filtering.CUTOFF_HZ` with the reason where no candidate can be judged (too
    short a log) and for ``(q, qd, qdd, tau)`` arrays, which are not filtered.
    """
    if cutoff is not None and cutoff != 'auto':
        return cutoff, None
    settings = Settings.given(settings, **options)
    if cutoff is None:
        logs = read_series_list(model, data, settings.topic, settings.retime)
        if any(len(log) != 3 for log in logs):
            return CUTOFF_HZ, None                  # arrays: used as they are
        try:
            return choose_cutoff(model, logs, settings)
        except IdentificationError as e:
            return CUTOFF_HZ, {'fallback': f'{CUTOFF_HZ:g} Hz, the default: {e}'}
    return choose_cutoff(model, data, settings)


def cutoff_summary(processing):
    """Say the cutoff and, when chosen from the data, how; empty for arrays used as given."""
    if 'cutoff_hz' not in processing:
        return ''
    text = f"cutoff: {processing['cutoff_hz']:.3g} Hz"
    chosen = processing.get('cutoff_selection')
    if chosen and 'fallback' in chosen:
        text += f" (not chosen from the data: {chosen['fallback']})"
    elif chosen:
        text += (f" (chosen: the smallest {chosen['folds']}-fold held-out error; motion "
                 f"bandwidth {chosen['bandwidth_hz']:.3g} Hz): " + ', '.join(
                     f'{c:.3g} Hz {e:.4g} %' for c, e in chosen['held_out_error'].items()))
        if chosen['refused']:
            text += '; too low to judge: ' + ', '.join(f'{c:.3g} Hz' for c in chosen['refused'])
        if chosen.get('not_judged'):
            text += ("; not judged, past the error's rise: "
                     + ', '.join(f'{c:.3g} Hz' for c in chosen['not_judged']))
    return text


def folds_in_time(model, data, folds, topic='/joint_states', retime=True, what='folds in time'):
    """
    Cut every log of ``data`` into ``folds`` pieces in time: ``[(train, held), ...]``.

    Fold ``k`` holds out piece ``k`` of every log (one log: the piece itself, else a list)
    and trains on every other piece, each a log of its own, so that nothing is filtered across
    the piece left out.  The pieces are views of the logs (:func:`fold_ranges`), not copies.
    """
    logs = read_time_series(model, data, topic, what, retime)
    pieces = [Piece.of(log).pieces(folds) for log in logs]
    splits = []
    for k in range(folds):
        held = [cut[k] for cut in pieces]
        splits.append(([piece for cut in pieces for j, piece in enumerate(cut) if j != k],
                       held if len(held) > 1 else held[0]))
    return splits


def choose_prior_weight(model, data, settings=None, *, folds=3, candidates=PRIOR_WEIGHTS,
                        **options):
    """
    Choose the consistent fit's prior weight: the one whose sets best predict held-out pieces.

    Over :func:`folds_in_time` of ``data``: each fold fits on its training pieces once (the
    ``settings`` or their ``options`` given, :func:`.fit.fit`), finds the consistent set at every
    candidate weight (by continuation, :meth:`.consistent.ConsistentFit.path`) and predicts its
    held-out piece with each, and with least squares.  A candidate that did not converge on
    some fold is not chosen.  Returns ``(weight, report)``: the pooled held-out error of each
    candidate and of least squares, and which set the held-out data say to trust.
    """
    settings = Settings.given(settings, **options)
    topic = settings.topic
    splits = folds_in_time(model, data, folds, topic, settings.retime, "prior_weight='auto'")
    validations, unconverged = [], set()
    for train, held in splits:
        estimate = fit(model, train, settings, physically_consistent=True,
                       path_weights=candidates)
        path = estimate.consistency['path']
        unconverged.update(w for w, found in path.items() if not found['converged'])
        names = estimate.standard_names
        compare = {f'{w:g}': estimate.model.with_parameters(found['standard'], names)
                   for w, found in path.items()}
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', ExtrapolationWarning)
            validations.append(estimate.validate(held, topic=topic, compare=compare))
    errors = pooled(validations).error
    candidates = {float(w): errors[f'{float(w):g}'] for w in candidates}
    eligible = {w: e for w, e in candidates.items() if w not in unconverged}
    if not eligible:
        raise IdentificationError(
            "prior_weight='auto': the consistent fit converged at none of the weights "
            f'{", ".join(f"{w:g}" for w in candidates)} on every fold: give a weight')
    best = min(eligible, key=eligible.get)
    least = errors['identified']
    trust = 'consistent' if eligible[best] <= least else 'least squares'
    return best, {'chosen': best, 'folds': folds, 'held_out_error': candidates,
                  'least_squares': least,
                  'unconverged': sorted(unconverged), 'trust': trust}


#: Held-out errors closer than this share of the best are not told apart by
#: :func:`choose_prior_threshold`: the prior is kept.
INDISTINCT = 0.01


def choose_prior_threshold(model, data, settings=None, *, folds=3, candidates=PRIOR_THRESHOLDS,
                           **options):
    """
    Choose at which singular value a direction keeps the prior: the best on held-out pieces.

    Over :func:`folds_in_time` of ``data``: each fold fits its training pieces once, solves at
    every candidate threshold (:func:`.least_squares.at_the_prior`, one decomposition) and
    predicts its held-out piece with each, and with the prior.  The held-out pieces come from
    the same motion, which cannot show what a direction it does not excite would do elsewhere:
    so the largest threshold whose pooled error is within one standard error of the best
    wins (the one-standard-error rule: Hastie, Tibshirani & Friedman, *The Elements of
    Statistical Learning*, 2009, 7.10), the standard error that of its per-fold difference from
    the best, and at least :data:`INDISTINCT` of the best error (three folds make a poor
    standard error).  Returns ``(threshold, report)``: each candidate's pooled held-out error,
    the standard errors, and the prior's error.
    """
    settings = Settings.given(settings, **options)
    topic = settings.topic
    splits = folds_in_time(model, data, folds, topic, settings.retime, "prior_threshold='auto'")
    validations = []
    for train, held in splits:
        try:
            estimate = fit(model, train, settings, prior_thresholds=candidates)
            with warnings.catch_warnings():
                warnings.simplefilter('ignore', ExtrapolationWarning)
                validations.append(estimate.validate(held, topic=topic,
                                                     alternatives=estimate.alternatives))
        except np.linalg.LinAlgError as e:      # a fold too short for its law (smooth's vs)
            raise IdentificationError(f'a fold of {folds} could not be fitted: {e}') from None
        except ValueError as e:                 # a set no model can hold (motor friction < 0)
            raise IdentificationError(f'a fold of {folds} could not be judged: {e}') from None
    errors = pooled(validations).error
    judged = {float(t): errors[f'{float(t):g}'] for t in candidates}
    per_fold = {t: np.array([v.error[f'{t:g}'] for v in validations]) for t in judged}
    best = min(sorted(judged), key=judged.get)
    spread = {t: float(np.std(per_fold[t] - per_fold[best], ddof=1) / np.sqrt(len(validations)))
              if len(validations) > 1 else 0.0 for t in judged}
    chosen = max(t for t in judged
                 if judged[t] - judged[best] <= max(spread[t], INDISTINCT * judged[best]))
    return chosen, {'chosen': chosen, 'folds': folds, 'held_out_error': judged,
                    'standard_error': spread, 'best': best, 'prior': errors['urdf']}


def prior_threshold_summary(processing):
    """Say which directions kept the prior's values, and how the threshold was chosen."""
    held = processing.get('prior')
    if not held:
        return ''
    chosen = processing.get('prior_threshold_selection')
    if not held['directions']:
        text = ('every direction of the base parameters from the data (smallest '
                f"prior-scaled singular value {held['smallest']:.3g}")
        text += (f": none at or below {held['threshold']:g})" if held['threshold'] else ')')
    else:
        text = (f"{held['directions']} direction(s) of the base parameters kept at the prior "
                f"(prior-scaled singular value at or below {held['threshold']:g}: the data "
                f"know them worse than 1/{held['threshold']:g} of its scale; the smallest "
                f"{held['smallest']:.3g})")
        if held['parameters']:
            text += ("; mostly the prior's, their deviations not the data's: "
                     + ', '.join(held['parameters']))
    if chosen and 'fallback' in chosen:
        text += f"; threshold not chosen from the data: {chosen['fallback']}"
    elif chosen:
        text += (f"; threshold chosen on {chosen['folds']}-fold held-out error (the largest "
                 'within a standard error of the best): ' + ', '.join(
                     f'{t:g} {e:.4g} %' for t, e in chosen['held_out_error'].items())
                 + f"; the prior alone {chosen['prior']:.4g} %")
    return text


def prior_weight_summary(processing):
    """Say the prior weight chosen, the held-out errors that chose it and which set to trust."""
    chosen = processing.get('prior_weight_selection')
    if not chosen:
        return ''
    if 'fallback' in chosen:
        return f"prior weight: not chosen from the data: {chosen['fallback']}"
    text = (f"prior weight {chosen['chosen']:g} (chosen: the smallest {chosen['folds']}-fold "
            'held-out error of the consistent set): ' + ', '.join(
                f'{w:g} {e:.4g} %' for w, e in chosen['held_out_error'].items())
            + f"; least squares {chosen['least_squares']:.4g} %")
    if chosen['unconverged']:
        text += '; did not converge: ' + ', '.join(f'{w:g}' for w in chosen['unconverged'])
    if chosen['trust'] == 'consistent':
        return text + ('. Trust the consistent set: it is realisable and predicts the held-out '
                       'pieces at least as well as least squares')
    return text + ('. Least squares predicts the held-out pieces better: trust it for '
                   'prediction; the consistent set is the realisable one (for simulation and '
                   'control, where a non-physical set is unsafe)')
