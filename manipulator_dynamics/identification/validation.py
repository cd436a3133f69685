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
Validation: torques of data a fit did not see, predicted by each model and compared.

:class:`Validation` holds the comparison (per joint RMS errors, normalised squared errors, the
equations left out as stuck, :mod:`.stiction`); :func:`beyond_training` says where held-out data
leave the range the fit saw (:class:`ExtrapolationWarning`); :func:`pooled` joins the folds of a
cross-validation, :func:`compared` checks the parameter sets judged beside the identified one.
"""

from dataclasses import dataclass, field

import numba
import numpy as np

from .._jit import JIT
from .._parallel import in_order
from ..errors import IdentificationError
from ..model import Model
from ..recordings import spill
from ..rigid.kinematics import FRICTION, kernel_model
from ..rigid.rnea import add_coupled, joint_friction


@dataclass(frozen=True, eq=False)
class Validation:
    """
    Torques of data not used for the fit, predicted by each model and compared with the measured.

    Attributes
    ----------
    joint_names : tuple of str
    samples : int
        States compared (at the data's full rate; the filter's transients left out).
    torque_rms : ndarray, shape (n,)
        RMS of each joint's measured torque.
    rms : dict of str to ndarray (n,)
        Per model (``urdf``, ``identified``, and ``consistent`` where there is one): the RMS of
        each joint's error, measured minus predicted.
    error : dict of str to float
        Per model: the normalised squared error, percent: the sum over joints and samples of
        the squared errors over that of the squared measured torques.

    """

    joint_names: tuple
    samples: int
    torque_rms: np.ndarray
    rms: dict
    error: dict
    t: np.ndarray = field(default=None, repr=False)
    measured: np.ndarray = field(default=None, repr=False)
    predicted: dict = field(default=None, repr=False)
    #: Joints whose validation states leave the training data's range (:func:`beyond_training`).
    beyond_training: dict = field(default_factory=dict)
    #: ``(N, n)`` equations not scored (a joint stuck, :mod:`.stiction`), or None.
    left_out: np.ndarray = field(default=None, repr=False)
    #: Per joint, the share of its equations not scored (percent); empty if none was.
    left_out_percent: dict = field(default_factory=dict)
    #: Per joint, what pooling adds up: ``squared_error`` ``{model: (n,)}``, ``squared_torque``
    #: and ``count`` ``(n,)``, over every sample scored (at the full rate where ``t``,
    #: ``measured`` and ``predicted`` hold fewer rows, :func:`at_full_rate`).
    sums: dict = field(default=None, repr=False)

    def beyond_summary(self):
        """Say which joints the validation data take beyond what the fit saw, or ''."""
        if not self.beyond_training:
            return ''
        parts = [f'{joint} {what} {100 * share:.3g} %' for joint, shares in
                 self.beyond_training.items() for what, share in shares.items()]
        return ("the validation data leave the training data's range (share of its states): "
                + ', '.join(parts) + ': the model is judged outside what it was fitted on')

    @classmethod
    def of(cls, joint_names, t, measured, predicted, left_out=None):
        """
        Compare the ``measured`` torques (N, n) with each model's ``predicted`` ones.

        ``left_out (N, n)``: equations not scored (a joint stuck: :mod:`.stiction`); the RMS
        values and errors are over the others.
        """
        scored = np.ones(measured.shape, dtype=bool) if left_out is None else ~left_out
        sums = {'squared_error': {m: (((measured - p) * scored) ** 2).sum(axis=0)
                                  for m, p in predicted.items()},
                'squared_torque': ((measured * scored) ** 2).sum(axis=0),
                'count': scored.sum(axis=0)}
        return cls.of_sums(joint_names, sums, len(measured), t, measured, predicted, left_out)

    @classmethod
    def of_sums(cls, joint_names, sums, samples, t, measured, predicted, left_out=None):
        """
        Return the validation of ``sums`` (see :attr:`sums`) over ``samples`` states.

        ``t``, ``measured``, ``predicted`` and ``left_out``: rows to show (the plot), all of
        them or fewer.
        """
        count = np.maximum(sums['count'], 1)
        total = float(sums['squared_torque'].sum())
        share = {} if (sums['count'] == samples).all() else dict(
            zip(joint_names, map(float, 100.0 * (1.0 - sums['count'] / samples))))
        return cls(joint_names=tuple(joint_names), samples=int(samples),
                   torque_rms=np.sqrt(sums['squared_torque'] / count),
                   rms={m: np.sqrt(e / count) for m, e in sums['squared_error'].items()},
                   error={m: 100.0 * float(e.sum()) / total
                          for m, e in sums['squared_error'].items()},
                   t=t, measured=measured, predicted=predicted, left_out=left_out,
                   left_out_percent=share, sums=sums)

    def plot(self, path):
        """Write a PNG of measured and predicted torques, a panel per joint; return ``path``."""
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        n = len(self.joint_names)
        fig, axes = plt.subplots(n, 1, figsize=(9, 1.6 * n + 1), sharex=True, squeeze=False)
        for j, (ax, name) in enumerate(zip(axes[:, 0], self.joint_names)):
            ax.plot(self.t, self.measured[:, j], lw=1.5, color='0.3', label='measured')
            for model, tau in self.predicted.items():
                ax.plot(self.t, tau[:, j], '--', lw=1,
                        label=f'{model} ({self.error[model]:.3g} %)')
            ax.set_ylabel(f'{name}\n[N m]')
            ax.grid(alpha=0.3)
        axes[0, 0].legend(fontsize=8, ncol=len(self.predicted) + 1)
        axes[0, 0].set_title("validation: measured torques and each model's prediction "
                             '(normalised squared error)')
        axes[-1, 0].set_xlabel('time [s] (gaps between stretches left out)')
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return path

    def worse_than_prior(self):
        """
        Name the identified sets that predict these data worse than the prior they started from.

        ``'urdf'`` is that prior (the model's parameters as loaded: the URDF's, or
        ``--parameters``); returns ``{'identified': (its error, the prior's)}``, the
        consistent set likewise, empty where none is worse.
        """
        prior = self.error.get('urdf')
        if prior is None:
            return {}
        return {m: (self.error[m], prior) for m in ('identified', 'consistent')
                if m in self.error and self.error[m] > prior}

    def worse_summary(self):
        """Say :meth:`worse_than_prior` in a line, or ''."""
        worse = self.worse_than_prior()
        if not worse:
            return ''
        return ('WORSE THAN THE PRIOR it started from on the held-out data: ' + ', '.join(
            f"{m} {' % against '.join(_apart(e, p))} % ({100 * (e / p - 1):.2g} % more)"
            for m, (e, p) in worse.items())
            + ': keep the prior, or record a motion that excites what it does not')

    def table(self):
        """Say it as text: the normalised errors, then the RMS error of every joint."""
        models = list(self.rms)
        lines = [f'validation on {self.samples} states: normalised squared error '
                 + ', '.join(f'{m} {self.error[m]:.4g} %' for m in models),
                 f'  {"joint":24s}' + ''.join(f'{m + " RMS":>16s}' for m in models)
                 + f'{"torque RMS":>16s}']
        for j, name in enumerate(self.joint_names):
            lines.append(f'  {name:24s}' + ''.join(f'{self.rms[m][j]:16.4g}' for m in models)
                         + f'{self.torque_rms[j]:16.4g}')
        if self.left_out_percent:
            lines.append('not scored, a joint or its motor stuck (slower than the still '
                         'speeds): ' + ', '.join(f'{j} {p:.3g} %' for j, p in
                                                 self.left_out_percent.items()))
        if self.beyond_training:
            lines.append('warning: ' + self.beyond_summary())
        if self.worse_than_prior():
            lines.append('warning: ' + self.worse_summary())
        return '\n'.join(lines)

    def to_dict(self):
        """Return a plain mapping for YAML or JSON."""
        return {'samples': self.samples, 'torque_rms': self.torque_rms.tolist(),
                'rms': {m: v.tolist() for m, v in self.rms.items()},
                'normalised_squared_error_percent': dict(self.error),
                **({'beyond_training': self.beyond_training} if self.beyond_training else {}),
                **({'worse_than_prior': {m: list(v) for m, v in self.worse_than_prior().items()}}
                   if self.worse_than_prior() else {}),
                **({'left_out_percent': self.left_out_percent} if self.left_out_percent
                   else {})}


class ExtrapolationWarning(UserWarning):
    """Validation data that leave the range of the data the model was identified on."""


#: A validation state is beyond the training data when a joint's position lies outside their
#: range widened by this share of it on each side, or its speed above their largest by it.
RANGE_MARGIN = 0.05
#: A joint is named when more than this share of the validation states are beyond.
BEYOND_SHARE = 0.01


def training_range(q, qd):
    """Return what the fit saw, per joint: the positions' least and largest, the top speed."""
    return {'position_min': q.min(axis=0).tolist(), 'position_max': q.max(axis=0).tolist(),
            'speed_max': np.abs(qd).max(axis=0).tolist()}


def beyond_training(joint_names, seen, q, qd):
    """
    Return ``{joint: {'positions' or 'speeds': share}}`` of validation states beyond ``seen``.

    ``seen`` as :func:`training_range` gives it; a joint is named when more than
    :data:`BEYOND_SHARE` of the states take it further than :data:`RANGE_MARGIN` outside.
    """
    lo, hi = np.array(seen['position_min']), np.array(seen['position_max'])
    margin = RANGE_MARGIN * np.maximum(hi - lo, 1e-9)
    top = np.array(seen['speed_max']) * (1 + RANGE_MARGIN)
    shares = {'positions': ((q < lo - margin) | (q > hi + margin)).mean(axis=0),
              'speeds': (np.abs(qd) > top).mean(axis=0)}
    out = {}
    for j, joint in enumerate(joint_names):
        found = {what: float(s[j]) for what, s in shares.items() if s[j] > BEYOND_SHARE}
        if found:
            out[joint] = found
    return out


def pooled(validations):
    """Return one Validation of several: their sums added, their rows together."""
    models = [m for m in validations[0].predicted if all(m in v.predicted for v in validations)]
    left_out = None
    if any(v.left_out is not None for v in validations):
        left_out = np.concatenate([np.zeros(v.measured.shape, dtype=bool) if v.left_out is None
                                   else v.left_out for v in validations])
    sums = {'squared_error': {m: sum(v.sums['squared_error'][m] for v in validations)
                              for m in models},
            'squared_torque': sum(v.sums['squared_torque'] for v in validations),
            'count': sum(v.sums['count'] for v in validations)}
    return Validation.of_sums(
        validations[0].joint_names, sums, sum(v.samples for v in validations),
        np.concatenate([v.t for v in validations]),
        np.concatenate([v.measured for v in validations]),
        {m: np.concatenate([v.predicted[m] for v in validations]) for m in models}, left_out)


#: Samples scored at a time by :func:`at_full_rate`.
SCORED_CHUNK = 1 << 16

#: Rows on each side of a chunk that its spline (:func:`at_full_rate`) is also drawn through.
#: A cubic spline's rows pull on one another by a factor ``2 - sqrt(3) = 0.27`` a row; 64
#: rows away that is 1e-37, so a chunk's spline is the whole stretch's to rounding, and an
#: hour's held-out piece is never splined at once (its coefficients alone: 100 MB and more).
SPLINE_MARGIN = 64


def _squares(x, scored=None):
    """Return each column's sum of squares of ``x (N, n)``, over the ``scored`` rows only."""
    # in rows, whatever the layout of ``x`` (a spilled log's columns lie apart): einsum adds
    # in the order the memory lies in, and a log must score the same spilled or not
    x = np.ascontiguousarray(x) if scored is None else np.multiply(x, scored, order='C')
    return np.einsum('ij,ij->j', x, x)          # a third of ((x ** 2).sum(axis=0))'s time


def _apart(a, b, digits=4):
    """Return ``a`` and ``b`` as text, with the fewest digits (``digits`` or more) that differ."""
    for d in range(digits, 17):
        x, y = f'{a:.{d}g}', f'{b:.{d}g}'
        if x != y:
            break
    return x, y


def at_full_rate(joint_names, raw, t, qd, predicted, frictions, left_out=None, ranges=None):
    """
    Score predictions made at fewer rows against the torques of every sample, as measured.

    ``raw``: each stretch at its full rate, ``(t (N,), tau (N, n))``; ``t``, ``qd`` and
    ``predicted {model: (rows, n)}``: the rows predicted, within the stretches, in time order;
    ``frictions {model: Model or None}``: the friction each model's prediction holds.  What a
    model predicts but its friction is the rigid body's, smooth below the fit's cutoff: it is
    interpolated (a cubic spline through the rows, not-a-knot as scipy's ``CubicSpline``, drawn
    chunk by chunk: :data:`SPLINE_MARGIN`) at every sample; its friction, whose Coulomb term
    jumps at each reversal, is evaluated at every sample, on the interpolated velocities (the
    law of :func:`..control.friction_torque`).  Both in one compiled pass a chunk
    (:func:`_spline`, :func:`_missed`), which holds no sample's values beyond its own.  An
    equation left out at a row (``left_out``) is left out at the samples nearest it.  Scored
    between each stretch's first and last rows, by chunks.  ``ranges``: each stretch's rows,
    ``(start, stop)`` (several logs may overlap in time); default: the rows whose stamps lie
    within it.  Returns a :class:`Validation` whose sums are the full rate's, its rows the ones
    predicted (the measured torque at each).
    """
    from ..control import friction_torque

    n = len(joint_names)
    models = list(predicted)
    smooth = np.hstack([predicted[m] - (0.0 if frictions.get(m) is None
                                        else friction_torque(frictions[m], qd))
                        for m in models] + [qd])
    laws = {m: None if frictions.get(m) is None else kernel_model(frictions[m]) for m in models}
    sums = {'squared_error': {m: np.zeros(n) for m in models}, 'squared_torque': np.zeros(n),
            'count': np.zeros(n, dtype=np.int64)}
    samples, measured = 0, np.empty((len(t), n))
    everywhere = np.ones((0, n), dtype=np.bool_)
    for k, (raw_t, raw_tau) in enumerate(raw):
        if ranges is None:
            inside = np.flatnonzero((t >= raw_t[0]) & (t <= raw_t[-1]))
        else:
            inside = np.arange(*ranges[k])
        if len(inside) < 4:
            continue
        rows_t, rows_smooth = t[inside], smooth[inside]
        a, b = np.searchsorted(raw_t, t[inside[[0, -1]]])
        # each row stands for the samples up to the next: the last one's too
        b = min(len(raw_t) - 1, b + int(round((t[inside[1]] - t[inside[0]])
                                              / (raw_t[1] - raw_t[0]))) - 1)
        measured[inside] = spill.take(raw_tau, np.searchsorted(raw_t, t[inside]))

        def chunk(start, raw_t=raw_t, raw_tau=raw_tau, rows_t=rows_t, rows_smooth=rows_smooth,
                  inside=inside, b=b):
            """Return one chunk's sums: its samples' squared errors, torques and counts."""
            stop = min(b + 1, start + SCORED_CHUNK)
            at = np.ascontiguousarray(raw_t[start:stop], dtype=float)
            tau = np.ascontiguousarray(raw_tau[start:stop], dtype=float)
            lo = max(0, int(np.searchsorted(rows_t, at[0], 'right')) - 1 - SPLINE_MARGIN)
            hi = min(len(rows_t), int(np.searchsorted(rows_t, at[-1])) + 1 + SPLINE_MARGIN)
            x = np.ascontiguousarray(rows_t[lo:hi], dtype=float)
            c = _spline(x, np.ascontiguousarray(rows_smooth[lo:hi], dtype=float))
            scored = None                   # every sample, unless an equation is left out
            if left_out is not None:
                nearest = inside[np.clip(np.searchsorted(t[inside], at), 0, len(inside) - 1)]
                scored = ~left_out[nearest]
            errors = {}
            for k, m in enumerate(models):
                errors[m] = np.zeros(n)
                _missed(c, x, at, tau, k * n, len(models) * n, laws[m],
                        everywhere if scored is None else scored, errors[m])
            torque = _squares(tau, scored)
            spill.release(raw_tau, raw_t)
            count = np.full(n, len(at)) if scored is None else scored.sum(axis=0)
            return errors, torque, count, len(at)
        # the chunks on threads (the kernels let go of the GIL), added in their order: the
        # sums of one thread's, bit for bit
        for errors, torque, count, rows in in_order(chunk, range(a, b + 1, SCORED_CHUNK)):
            for m in models:
                sums['squared_error'][m] += errors[m]
            sums['squared_torque'] += torque
            sums['count'] += count
            samples += rows
    return Validation.of_sums(joint_names, sums, samples, t, measured, predicted, left_out)


@numba.njit(**JIT)
def _spline(x, y):
    """
    Return the not-a-knot cubic spline through ``y (K, C)`` at ``x (K,)``, ``K >= 4``.

    scipy's ``CubicSpline(x, y, axis=0)``: the same system for the slopes at the rows (its
    ends not-a-knot), solved by elimination (the matrix once, every column's right side with
    it), and the same coefficients, as ``(K - 1, C, 4)``: per interval and column, those of
    ``h^3, h^2, h, 1``, ``h`` the time since the interval's start.
    """
    K, C = y.shape
    if K < 4 or x.shape[0] != K:        # unchecked indices below: never past the arrays
        raise ValueError('_spline needs x (K,) and y (K, C) with K >= 4')
    dx = np.empty(K - 1)
    for i in range(K - 1):
        dx[i] = x[i + 1] - x[i]
    lower, diag, upper = np.zeros(K), np.empty(K), np.zeros(K)
    d0, d1 = x[2] - x[0], x[K - 1] - x[K - 3]
    diag[0], upper[0] = dx[1], d0
    for i in range(1, K - 1):
        lower[i], diag[i], upper[i] = dx[i], 2.0 * (dx[i - 1] + dx[i]), dx[i - 1]
    lower[K - 1], diag[K - 1] = d1, dx[K - 3]
    w = np.zeros(K)
    for i in range(1, K):
        w[i] = lower[i] / diag[i - 1]
        diag[i] -= w[i] * upper[i - 1]
    slope, s, c = np.empty((K - 1, C)), np.empty((K, C)), np.empty((K - 1, C, 4))
    for i in range(K - 1):                  # row by row, the columns side by side
        for j in range(C):
            slope[i, j] = (y[i + 1, j] - y[i, j]) / dx[i]
    for j in range(C):
        s[0, j] = ((dx[0] + 2.0 * d0) * dx[1] * slope[0, j] + dx[0] ** 2 * slope[1, j]) / d0
        s[K - 1, j] = (dx[K - 2] ** 2 * slope[K - 3, j]
                       + (2.0 * d1 + dx[K - 2]) * dx[K - 3] * slope[K - 2, j]) / d1
    for i in range(1, K - 1):
        for j in range(C):
            s[i, j] = 3.0 * (dx[i] * slope[i - 1, j] + dx[i - 1] * slope[i, j])
    for i in range(1, K):
        for j in range(C):
            s[i, j] -= w[i] * s[i - 1, j]
    for j in range(C):
        s[K - 1, j] /= diag[K - 1]
    for i in range(K - 2, -1, -1):
        for j in range(C):
            s[i, j] = (s[i, j] - upper[i] * s[i + 1, j]) / diag[i]
    for i in range(K - 1):
        for j in range(C):
            t = (s[i, j] + s[i + 1, j] - 2.0 * slope[i, j]) / dx[i]
            c[i, j, 0] = t / dx[i]
            c[i, j, 1] = (slope[i, j] - s[i, j]) / dx[i] - t
            c[i, j, 2] = s[i, j]
            c[i, j, 3] = y[i, j]
    return c


@numba.njit(**JIT)
def _missed(c, x, at, tau, column, speeds, law, scored, out):
    """
    Add to ``out (n,)`` each joint's squared error at the samples ``at``: ``tau`` minus the spline.

    ``c``, ``x``: :func:`_spline`'s, its columns ``column ..`` the prediction's smooth part,
    ``speeds ..`` the velocities; ``law``: the friction's model (a kernel model, or None: no
    friction), its law at the interpolated velocities taken off too; ``scored (samples, n)``:
    the equations counted (no rows: every one).  Beyond the last row, its interval's cubic.
    """
    n, K = tau.shape[1], x.shape[0]
    v, f = np.empty(n), np.zeros(n)
    i = 0
    for k in range(at.shape[0]):
        a = at[k]
        while i < K - 2 and a >= x[i + 1]:
            i += 1
        h = a - x[i]
        if law is not None:
            for j in range(n):
                p = c[i, speeds + j]
                v[j] = ((p[0] * h + p[1]) * h + p[2]) * h + p[3]
                f[j] = joint_friction(law, j, v[j])
            add_coupled(law, v, v, FRICTION, f)
        for j in range(n):
            if scored.shape[0] == 0 or scored[k, j]:
                p = c[i, column + j]
                e = tau[k, j] - (((p[0] * h + p[1]) * h + p[2]) * h + p[3]) - f[j]
                out[j] += e * e


def compared(model, compare):
    """Check ``compare`` (``{label: Model}``, or None) against ``model``; return it as a dict."""
    if compare is None:
        return {}
    if not isinstance(compare, dict):
        raise IdentificationError("compare must map a label to a Model, e.g. {'published': "
                                  "load_model(urdf, parameters='published.yaml')}, got "
                                  f'{type(compare).__name__}')
    for label, other in compare.items():
        if label in ('urdf', 'identified', 'consistent'):
            raise IdentificationError(f"compare: the label '{label}' is the validation's own "
                                      'model of that name: choose another')
        if not isinstance(other, Model):
            raise IdentificationError(f"compare '{label}': a Model is needed (load_model(urdf, "
                                      f'parameters=...)), got {type(other).__name__}')
        if tuple(other.joint_names) != tuple(model.joint_names):
            raise IdentificationError(
                f"compare '{label}': its joints {', '.join(other.joint_names)} are not the "
                f"identified model's {', '.join(model.joint_names)} (the same URDF, root, tip "
                'and left-out links are needed)')
    return dict(compare)
