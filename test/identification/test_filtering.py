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

"""The filter by chunks against the whole-log filter, and the cutoff judged on fewer rows."""

import warnings

from helpers import exciting
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.identification import decimation
from manipulator_dynamics.identification.filtering import decimated, filtfilt, lowpass, \
    settling, zero_phase
from manipulator_dynamics.identification.fit import fit
from manipulator_dynamics.identification.logs import differentiate_logs
from manipulator_dynamics.identification.selection import choose_cutoff, folds_in_time
from manipulator_dynamics.identification.validation import ExtrapolationWarning, pooled
import numpy as np
import pytest
import scipy.signal


@pytest.mark.parametrize('cutoff', [0.3, 4.0, 150.0])
@pytest.mark.parametrize('chunk, step', [(40000, 1), (33333, 7), (1000, 10), (250000, 40)])
def test_chunks_equal_the_whole_log_filter(cutoff, chunk, step):
    """
    Chunk seams, chunks shorter than the padding, rows kept by any step: within 1e-9.

    A random walk and white noise at 1 kHz (a drifting joint and a noisy torque), filtered
    whole by ``sosfiltfilt``; what the filter took off, ``r = x - filtered``, summed as
    ``r^T r`` over a range of rows, the same.
    """
    rng = np.random.default_rng(0)
    x = np.cumsum(rng.normal(size=(200000, 3)), axis=0) + 5 * rng.normal(size=(200000, 3))
    sos = lowpass(cutoff, 1000.0)
    whole = scipy.signal.sosfiltfilt(sos, x, axis=0)
    scale = np.abs(whole).max()
    np.testing.assert_allclose(zero_phase(x, sos, chunk), whole, rtol=0, atol=1e-9 * scale)
    kept, taken = decimated(x, sos, step, chunk, moment=(5000, 190000))
    np.testing.assert_allclose(kept, whole[::step], rtol=0, atol=1e-9 * scale)
    r = (x - whole)[5000:190000]
    np.testing.assert_allclose(taken, r.T @ r, rtol=1e-9)


@pytest.mark.parametrize('spilled', [False, True], ids=['in memory', 'spilled'])
def test_arrays_side_by_side_are_filtered_as_each_alone(spilled):
    """
    ``decimated((q, tau), ...)``: one pass over both, each array's rows as alone, to the bit.

    With the moment, the first array's; a spilled log's rows spilled as each alone's; arrays
    of other lengths or shapes refused.
    """
    from manipulator_dynamics.recordings import spill
    rng = np.random.default_rng(3)
    arrays = []
    for width in (3, 2):
        x = spill.columns(50000, width, spilled)
        x[:] = np.cumsum(rng.normal(size=(50000, width)), axis=0)
        arrays.append(x)
    sos = lowpass(4.0, 1000.0)
    for step in (1, 20):
        together = decimated(tuple(arrays), sos, step, 7000)
        for alone, side in zip(arrays, together):
            assert np.array_equal(decimated(alone, sos, step, 7000), side)
            assert spill.is_spilled(side) == spilled
        (q, tau), taken = decimated(tuple(arrays), sos, step, 7000, moment=(900, 49000))
        kept, alone = decimated(arrays[0], sos, step, 7000, moment=(900, 49000))
        assert np.array_equal(q, kept) and np.array_equal(taken, alone)
        assert np.array_equal(tau, together[1])
    for bad in ((arrays[0], arrays[1][:-1]), (arrays[0], np.zeros(50000))):
        with pytest.raises(ValueError, match='side by side'):
            decimated(bad, sos, 20)


@pytest.mark.parametrize('shape', [(61,), (4000,), (500, 3), (40, 2, 3)])
def test_the_filter_is_scipys_to_the_last_bit(shape):
    """filtfilt, its initial state solved once per filter, equals sosfiltfilt exactly."""
    rng = np.random.default_rng(1)
    for cutoff, rate in ((5.0, 200.0), (0.3, 1000.0), (5.0, 200.0)):   # the last one cached
        x = rng.normal(size=shape)
        sos = lowpass(cutoff, rate)
        assert np.array_equal(filtfilt(sos, x), scipy.signal.sosfiltfilt(sos, x, axis=0))
    said = []
    for f in (filtfilt, lambda sos, x: scipy.signal.sosfiltfilt(sos, x, axis=0)):
        with pytest.raises(ValueError) as e:
            f(lowpass(5.0, 200.0), np.zeros(15))       # two sections: 15 samples of padding
        said.append(str(e.value))
    assert said[0] == said[1] and 'padlen, which is 15' in said[0]


def test_the_padding_outlasts_the_impulse_response():
    """Past :func:`settling` the impulse response stays below 1e-12 of its peak; not before."""
    for cutoff in (0.1, 2.0, 40.0):
        sos = lowpass(cutoff, 1000.0)
        pad = settling(sos)
        h = np.abs(scipy.signal.sosfilt(sos, np.r_[1.0, np.zeros(4 * pad)]))
        assert h[pad:].max() < 1e-12 * h.max() <= h[pad - 1]


def test_a_joint_held_still_has_no_speed():
    """A joint that does not move has zero speed, not the filter's rounding (its sign flips)."""
    frictional_arm = md.load_model(robots.path('demo_arm'))
    t, q, _, _ = exciting(frictional_arm, seconds=10.0, rate=1000.0)
    q[:, 2] = 0.7                                       # held by its brake
    tau = np.ones_like(q)
    _, qd, qdd, _, _, _ = differentiate_logs(frictional_arm, [(t, q, tau)], cutoff=5.0)
    assert np.all(qd[:, 2] == 0.0) and np.all(qdd[:, 2] == 0.0)
    assert (qd[:, [0, 1, 3]] != 0.0).mean() > 0.999       # the moving ones keep their speeds


def test_candidates_judged_on_fewer_rows_score_as_at_the_full_rate(frictional_arm, monkeypatch):
    """
    Each candidate's pooled held-out error equals the full-rate judgement's within 1 %.

    A 1 kHz log of 36 s with torque noise: every candidate fitted at its full rate on two
    thirds and validated on the third, the measured torques unfiltered (what
    :func:`choose_cutoff` did before :mod:`.decimation`), against the same judged on rows cut
    down to 20 per second per Hz of cutoff (scored at the full rate).
    The rows are 20 and 40 times fewer.
    """
    t, q, qd, qdd = exciting(frictional_arm, seconds=36.0, rate=1000.0, fundamental=1 / 12)
    tau = md.inverse_dynamics(frictional_arm, q, qd, qdd, friction=True)
    rng = np.random.default_rng(5)
    tau = tau + rng.normal(size=tau.shape) * (0.01 * np.abs(tau).max(axis=0) + 0.02)
    q = q + rng.normal(size=q.shape) * 1e-5
    candidates = [1.0, 2.5]
    _, report = choose_cutoff(frictional_arm, (t, q, tau), candidates=candidates)
    steps = decimation.steps(1000.0, candidates)
    assert steps == {1.0: 40, 2.5: 20}             # multiples of the highest's
    from manipulator_dynamics.identification import logs
    monkeypatch.setattr(logs, 'reduction', lambda rate, cutoff: 1)      # the full rate
    for c in candidates:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', ExtrapolationWarning)
            full = pooled([fit(frictional_arm, train, cutoff=c, validation=held).validation
                           for train, held in folds_in_time(frictional_arm, (t, q, tau), 3)])
        assert report['held_out_error'][c] == pytest.approx(full.error['identified'],
                                                            rel=0.01), c


def test_a_fast_log_cut_down_fits_and_scores_as_at_its_full_rate(frictional_arm, monkeypatch):
    """
    A 1 kHz log fitted at 2 Hz is cut down 25 times first: as good a fit, scored the same.

    Against the same pipeline at the full rate (the cut-down switched off): both estimates
    within 4.5 deviations of the simulated arm's base parameters, as close to them overall
    (the RMS of the deviations' multiples at most 10 % more) and within 2 deviations of each other
    (the Coulomb columns differ: averaged over each row's interval where cut down, the instant's
    sign at the full rate); the still speeds (``'auto'``, from what the filters took off the
    positions) within 5 % and the equations left out within 5 points; without them, the
    validation of another run, scored at its every sample against the torques as measured,
    within 1 %, its
    rows 25 times fewer, each row's measured torque the log's own.
    """
    from manipulator_dynamics.identification import logs

    def run(seed, seconds):
        t, q, qd, qdd = exciting(frictional_arm, seconds=seconds, rate=1000.0, fundamental=0.1,
                                 seed=seed)
        tau = md.inverse_dynamics(frictional_arm, q, qd, qdd, friction=True)
        rng = np.random.default_rng(seed + 10)
        tau = tau + rng.normal(size=tau.shape) * (0.01 * np.abs(tau).max(axis=0) + 0.02)
        return t, q + rng.normal(size=q.shape) * 1e-5, tau
    train, held = run(0, 30.0), run(1, 20.0)
    cut = md.identify(frictional_arm, train, cutoff=2.0, still='auto', validation=held)
    assert cut.processing['reduced']['factor'] == 25
    monkeypatch.setattr(logs, 'reduction', lambda rate, cutoff: 1)
    full = md.identify(frictional_arm, train, cutoff=2.0, still='auto', validation=held)
    assert 'reduced' not in full.processing
    truth = full.base.values
    z = [(e.values - truth) / e.std for e in (cut, full)]
    assert np.abs(z[0]).max() < 4.5 and np.abs(z[1]).max() < 4.5
    assert np.sqrt((z[0] ** 2).mean()) < 1.1 * np.sqrt((z[1] ** 2).mean())
    assert np.all(np.abs(cut.values - full.values) < 2 * full.std)
    still = [e.processing['still'] for e in (cut, full)]
    np.testing.assert_allclose(list(still[0]['speeds'].values()),
                               list(still[1]['speeds'].values()), rtol=0.05)
    np.testing.assert_allclose(list(still[0]['left_out_percent'].values()),
                               list(still[1]['left_out_percent'].values()), atol=5.0)
    # every equation scored (the still ones left out are the nearest row's where cut down)
    monkeypatch.undo()
    cut = md.identify(frictional_arm, train, cutoff=2.0, validation=held)
    monkeypatch.setattr(logs, 'reduction', lambda rate, cutoff: 1)
    full = md.identify(frictional_arm, train, cutoff=2.0, validation=held)
    assert cut.validation.samples == pytest.approx(full.validation.samples, rel=0.01)
    assert len(cut.validation.t) < full.validation.samples / 24
    for model in ('urdf', 'identified'):
        assert cut.validation.error[model] == pytest.approx(full.validation.error[model],
                                                            rel=0.01), model
    row = np.searchsorted(held[0], cut.validation.t)
    np.testing.assert_array_equal(cut.validation.measured, held[2][row])


@pytest.mark.parametrize('length', [999, 1000, 1 << 20, 3 * 5 ** 7 + 1])
def test_the_power_spectrum_is_numpys_to_the_bit_in_the_inputs_own_memory(length, monkeypatch):
    """
    ``power_spectrum``: ``abs(rfft(x)) ** 2`` bit for bit, odd and even lengths, by chunks.

    Made in the input's memory: beyond it, less than a tenth of its bytes is allocated (the
    complex transform and its absolute value took 2.5 times them: an hour's column 72 MB).
    """
    import tracemalloc

    import scipy.fft
    from manipulator_dynamics.identification.selection import power_spectrum
    from manipulator_dynamics.recordings import spill
    monkeypatch.setattr(spill, 'CHUNK', 1000)
    x = np.random.default_rng(length).normal(size=length)
    expected = np.abs(scipy.fft.rfft(x)) ** 2
    tracemalloc.start()
    try:
        found = power_spectrum(x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(found, expected)
    assert np.shares_memory(found, x)
    if length > 1 << 16:
        assert peak < 0.1 * x.nbytes, f'{peak / x.nbytes:.2f} of the input allocated'


def test_the_share_of_the_power_is_found_as_numpy_finds_it(monkeypatch):
    """
    ``first_reaching``: numpy's cumulative share searched, to the bit, a chunk at a time.

    Spectra whose power lies low (a motion's), high, flat, and in one bin; shares reached in
    the first chunk, at a seam, in the last bin, and never (a share of 1 that the rounded sum
    falls short of).
    """
    from manipulator_dynamics.identification.selection import first_reaching
    from manipulator_dynamics.recordings import spill
    monkeypatch.setattr(spill, 'CHUNK', 100)
    rng = np.random.default_rng(4)
    f = np.arange(1001.0)
    spectra = [np.exp(-f / 20) * rng.uniform(0.5, 1, f.size), np.exp(f / 200 - 5),
               rng.uniform(0, 1, f.size), np.where(f == 300, 2.0, 0.0), rng.uniform(0, 1, 100)]
    for spectrum in spectra:
        total = spectrum.sum()
        share = np.cumsum(spectrum) / total
        seam = share[min(100, len(share) - 1)]
        for power in (0.0, 0.5, 0.9, 0.999, share[99], seam, share[-1], 1.0,
                      np.nextafter(share[-1], 2.0)):
            assert first_reaching(spectrum, total, power) == np.searchsorted(share, power), \
                (len(spectrum), power)


@pytest.mark.parametrize('chunk', [None, 1000], ids=['one chunk', 'chunks of 1000'])
def test_the_motion_bandwidth_is_where_its_power_ends(monkeypatch, chunk):
    """
    ``motion_bandwidth``: the frequency under which 0.999 of the positions' power lies.

    Two joints, sines at 0.3 and 0.8 Hz over 120 s at 200 Hz with a linear drift and
    micro-radian noise: the highest, 0.8 Hz, to within the Hann window's main lobe (2 bins of
    the padded transform).  And the transform made a chunk at a time equals the plain one
    (interpolate, detrend, window, transform, cumulative share) on an odd length: to the last
    bit in one chunk, and in many (sums by chunks differ from whole ones only in rounding).
    """
    import scipy.fft
    from manipulator_dynamics.identification.selection import motion_bandwidth
    from manipulator_dynamics.recordings import spill
    if chunk:
        monkeypatch.setattr(spill, 'CHUNK', chunk)
    rng = np.random.default_rng(2)
    t = np.arange(24001) / 200.0 + rng.normal(0, 1e-6, 24001)
    q = np.column_stack([np.sin(2 * np.pi * 0.3 * t) + 0.01 * t,
                         0.5 * np.sin(2 * np.pi * 0.8 * t + 1.0)])
    q += rng.normal(0, 1e-6, q.shape)
    found = motion_bandwidth([(t, q, None)])
    filed = spill.columns(len(t), 2, spill=True)      # a long log's: its window in a file too
    filed[:] = q
    assert motion_bandwidth([(t, filed, None)]) == found
    step = float(np.median(np.diff(t)))
    length = scipy.fft.next_fast_len(len(np.arange(t[0], t[-1], step)), real=True)
    assert 0.8 <= found <= 0.8 + 2 / (length * step)

    def plain(t, q, power=0.999):
        grid = np.arange(t[0], t[-1], step)
        s = grid - grid.mean()
        highest = 0.0
        for j in range(q.shape[1]):
            x = np.interp(grid, t, q[:, j])
            x -= x.mean() + s * (s @ x) / max(float(s @ s), 1e-300)
            spectrum = np.abs(scipy.fft.rfft(x * np.hanning(len(grid)), n=length)) ** 2
            share = np.cumsum(spectrum) / spectrum.sum()
            highest = max(highest, float(scipy.fft.rfftfreq(length, step)[
                np.searchsorted(share, power)]))
        return float(f'{highest:.9g}')                  # its nine significant digits
    assert found == plain(t, q)
    assert motion_bandwidth([(t, q, None)], power=0.9) == plain(t, q, power=0.9)
    for start, stop, step in ((t[0], t[-1], float(np.median(np.diff(t)))), (0.0, 1.0, 0.1),
                              (2e-4, 3.0, 1e-3), (1.7e9, 1.7e9 + 2.5, 1e-3)):
        grid = spill.Range(start, stop, step)       # numpy's range and window, bit for bit
        np.testing.assert_array_equal(np.concatenate([g for _, g in grid]),
                                      np.arange(start, stop, step))
        np.testing.assert_array_equal(np.concatenate([grid.hanning(a, len(g)) for a, g in grid]),
                                      np.hanning(len(grid)))
        np.testing.assert_array_equal(spill.arange(start, stop, step),
                                      np.arange(start, stop, step))
