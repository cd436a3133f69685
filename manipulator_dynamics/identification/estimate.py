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
Identification of the base parameters from measured motion and efforts (Gautier's method).

``identify(model, data)`` solves ``tau = W_B(q, qd, qdd) K_B`` by weighted least squares:

1. Data: arrays ``(q, qd, qdd, tau)`` used as given, or a time series of positions and efforts (a
   CSV file, a numpy archive, a rosbag2 recording of ``/joint_states``, or ``(t, q, tau)``
   arrays).  A time series is put on a uniform grid (linear interpolation where stamps jitter
   by more than 1 %); positions are low-pass filtered by a zero-phase Butterworth filter
   (``scipy.signal.butter``, order 4, ``cutoff`` Hz, applied forward and backward by
   ``filtfilt``) and differentiated by central differences.  Then Gautier's parallel filter:
   the same filter on the efforts and on every column of the regressor, so that
   ``F(tau) = F(W_B) K_B`` holds exactly (filtering only the efforts would smooth Coulomb
   friction's jumps on one side and bias ``Fc`` and ``Fv``).  The
   ``3 fs / cutoff`` samples at each end, where the filter has transients, are dropped, and the
   rest decimated to about ``2.5 cutoff`` samples per second: the filtered noise carries
   ``2 cutoff`` independent samples per second, and more rows only repeat it (those kept still
   correlate by 0.3 with their neighbours: 3 checks).  The cutoff, unless given, is chosen from
   the data (:func:`choose_cutoff`): higher lets position noise, twice differentiated, into the
   regressor; lower attenuates the motion itself (by hand: about 5 times its highest frequency).
   A log with the robot's velocities is first re-timed on its clock (:mod:`.timing`).  The
   reading, checking and filtering are :mod:`.logs`'s.
2. Ordinary least squares gives the residuals of each joint and its noise ``sigma_j`` (their RMS
   with ``b / n`` degrees of freedom spent per joint); rows of joint j are weighted by
   ``1 / sigma_j`` and the weighted problem is solved again.
3. Standard deviations from ``cov = s^2 (W_w^T W_w)^-1``, ``s`` the RMS of the weighted residuals,
   widened where a jackknife in blocks of time shows the rows correlated
   (:func:`correlation_inflation`); relative ones in percent of ``|K_B|``.  Excitation is the
   condition number of ``W_B`` with unit columns (below ~1e3 is good); a rank-deficient ``W_B``
   is an error that names the base parameters the motion does not excite.
"""

import dataclasses
from dataclasses import dataclass, field
import math
import os
import warnings

import numpy as np

from .base_parameters import base_parameters, BaseParameters
from .consistent import ConsistentFit
from .logs import CUTOFF_HZ, IdentificationError, prepare, read_logs, read_time_series
from .stiction import left_out_summary, still_speeds, stuck
from ..model import Model
from ..rigid.regressor import regressor, standard_parameters
from ..rigid.rnea import inverse_dynamics
from ..urdf import write_joint_dynamics, write_urdf


#: Blocks of the delete-a-block jackknife that checks the reported standard deviations
#: (:func:`block_jackknife`): 10 gives each deviation 9 degrees of freedom (about 24 % of
#: scatter) while each block stays long against the residuals' correlation in time.
JACKKNIFE_BLOCKS = 10
#: The jackknife's median ratio above which the rows are taken as correlated and the deviations
#: widened by it: for independent rows it scatters from about 0.8 to 1.15 (10th-90th percentile
#: over noise draws, for 20-62 parameters), a real Panda's log gives 1.8 (5 Hz) to 2.2 (10 Hz).
CORRELATED = 1.25

#: Smallest torque noise assumed by the physically consistent fit, relative to each joint's RMS
#: torque (a very good torque sensor).
NOISE_FLOOR = 1e-4


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
        count = np.maximum(scored.sum(axis=0), 1)
        errors = {m: (measured - p) * scored for m, p in predicted.items()}
        total = float(((measured * scored) ** 2).sum())
        share = {} if left_out is None or not left_out.any() else dict(
            zip(joint_names, map(float, 100.0 * left_out.mean(axis=0))))
        return cls(joint_names=tuple(joint_names), samples=len(measured),
                   torque_rms=np.sqrt(((measured * scored) ** 2).sum(axis=0) / count),
                   rms={m: np.sqrt((e ** 2).sum(axis=0) / count) for m, e in errors.items()},
                   error={m: 100.0 * float((e ** 2).sum()) / total for m, e in errors.items()},
                   t=t, measured=measured, predicted=predicted, left_out=left_out,
                   left_out_percent=share)

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
        return '\n'.join(lines)

    def to_dict(self):
        """Return a plain mapping for YAML or JSON."""
        return {'samples': self.samples, 'torque_rms': self.torque_rms.tolist(),
                'rms': {m: v.tolist() for m, v in self.rms.items()},
                'normalised_squared_error_percent': dict(self.error),
                **({'beyond_training': self.beyond_training} if self.beyond_training else {}),
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


@dataclass(frozen=True, eq=False)
class Estimate:
    """
    Identified base parameters with their uncertainty.

    Attributes
    ----------
    base : BaseParameters
        The base parameters identified (names, groupings, URDF values).
    values : ndarray, shape (b,)
        Weighted least-squares estimate of ``K_B``.
    std : ndarray, shape (b,)
        Standard deviations of ``values``: the weighted fit's, widened where the rows are
        correlated in time (``processing['std']``, :func:`correlation_inflation`).
    covariance : ndarray, shape (b, b)
        Their covariance, widened as ``std`` (its diagonal is ``std**2``): for the deviation of
        a combination of base parameters (a published set's, grouped otherwise).
    relative_std : ndarray, shape (b,)
        ``100 std / |values|`` (percent; inf for a value of zero).
    condition : float
        Condition number of ``W_B`` with unit columns: the excitation of the motion.
    sigma : ndarray, shape (n,)
        Noise standard deviation of each joint's equation (the weights were ``1 / sigma``).
    residual_rms : ndarray, shape (n,)
        RMS of ``tau - W_B values`` per joint, in N m or N.
    samples : int
        Rows fitted: the states given, or a time series' states after the filter's trim and
        decimation (:meth:`data_summary` says both).
    processing : dict
        What was done to the data: source, rate, filter, trimmed samples.
    standard : ndarray, shape (p,) or None
        With ``physically_consistent``: a full set of standard parameters in ``standard_names``
        order, physically realisable (see :mod:`.consistent`), that reproduces the data.
    standard_names : tuple of str
        ``parameter_names(model, armature=..., friction=...)`` of the identified set.
    consistent_values : ndarray, shape (b,) or None
        The base parameters of ``standard`` (``K_B`` it implies).
    consistency : dict
        How the consistent set was found: method, seconds, evaluations, residual RMS per joint.
    validation : Validation or None
        With ``identify(..., validation=...)``: :meth:`validate` on those data.

    """

    base: BaseParameters
    values: np.ndarray
    std: np.ndarray
    relative_std: np.ndarray
    condition: float
    sigma: np.ndarray
    residual_rms: np.ndarray
    samples: int
    processing: dict = field(default_factory=dict)
    standard: np.ndarray = None
    consistent_values: np.ndarray = None
    consistency: dict = field(default_factory=dict)
    model: Model = field(default=None, repr=False)
    validation: Validation = None
    covariance: np.ndarray = field(default=None, repr=False)

    def validate(self, data, *, topic='/joint_states', compare=None):
        """
        Predict the torques of ``data`` (as :func:`identify` takes them) with every model.

        The URDF's base parameters, the identified ones and, where there is one, the physically
        consistent set, against the torques measured: the same filtering of positions as the
        fit (its cutoff), the measured torques unfiltered, at their full rate, each stretch's
        filter transients left out.  ``compare``: other models to judge beside them, ``{label:
        Model}`` on the same joints (a published or an earlier identified set:
        ``load_model(urdf, parameters='published.yaml')``); each predicts by its own inverse
        dynamics, with rotor inertia and friction as the fit has them.  Returns a
        :class:`Validation`.
        """
        model, base = self.model, self.base
        compare = _compared(model, compare)
        q, qd, qdd, tau, parallel, _ = prepare(
            model, data, cutoff=self.processing.get('cutoff_hz', CUTOFF_HZ), topic=topic,
            retime=self.processing.get('retime', True))
        W = base.base_regressor(regressor(model, q, qd, qdd, armature=base.armature,
                                          friction=base.friction))
        t = np.arange(len(tau), dtype=float)           # arrays given as they are: a count
        if parallel is not None:
            W, tau, t = parallel.rows(W), parallel.rows(tau), parallel.rows(parallel.t)
            q, qd, qdd = parallel.rows(q), parallel.rows(qd), parallel.rows(qdd)
        models = {'urdf': base.values, 'identified': self.values}
        if self.consistent_values is not None:
            models['consistent'] = self.consistent_values
        predicted = {m: W @ k for m, k in models.items()}
        for label, other in compare.items():
            predicted[label] = inverse_dynamics(other, q, qd, qdd, armature=bool(base.armature),
                                                friction=bool(base.friction))
        report = self.processing.get('still')
        left_out = None
        if report:
            left_out = stuck(model, qd, list(report['speeds'].values()))
        validation = Validation.of(model.joint_names, t, tau, predicted, left_out)
        seen = self.processing.get('training_range')
        if seen is not None:
            validation = dataclasses.replace(
                validation, beyond_training=beyond_training(model.joint_names, seen, q, qd))
            if validation.beyond_training:
                warnings.warn(ExtrapolationWarning(validation.beyond_summary()), stacklevel=2)
        return validation

    def data_summary(self):
        """
        Say what was fitted: ``'N states'`` as given, or ``'M logged states, filtered to N rows'``.

        A time series is decimated to about 2.5 samples per cutoff period after filtering (the
        module docstring), so the rows fitted are far fewer than the states logged: 10 s at
        1 kHz with a 2.5 Hz cutoff give about 50.
        """
        logged = sum(report['samples'] for report in self.processing.get('stamps', ()))
        if not logged:
            return f'{self.samples} states'
        return f'{logged} logged states, filtered to {self.samples} rows'

    def identified_model(self):
        """Return the model with the physically consistent standard parameters in place."""
        if self.standard is None:
            raise IdentificationError('no full set of standard parameters: identify with '
                                      'physically_consistent=True')
        return self.model.with_parameters(self.standard, self.standard_names)

    def parameters_yaml(self, path=None, more=None):
        """
        Return (and write to ``path``) the consistent standard parameters as YAML.

        ``load_model(urdf, parameters=path)``, the nodes' ``identified_parameters`` and the CLI's
        ``--parameters`` read it (see :func:`load_parameters`).  ``more``: entries written after
        them (the CLI's ``contact_spread``, which dynamics_node's ``auto`` contact thresholds
        read).
        """
        import yaml

        model = self.identified_model()
        values = {n: float(v) for n, v in zip(self.standard_names, self.standard)}
        values.update({f'Vs_{j}': float(v)
                       for j, v in zip(model.joint_names, model.coulomb_velocity) if v > 0})
        document = {'robot': model.name,
                    'identified': f'from {self.data_summary()}, base parameters '
                                  f'{self.base.count}, physically consistent',
                    'standard_parameters': values, **(more or {})}
        text = yaml.safe_dump(document, sort_keys=False)
        if path is not None:
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
        return text

    def to_urdf(self, path, joint_dynamics=None):
        """
        Write the robot's URDF with the identified inertials and friction (:func:`write_urdf`).

        Rotor inertias, friction offsets and Coulomb velocities, which URDF has no element for,
        go to the joint-dynamics YAML ``joint_dynamics`` (default: next to ``path``,
        ``<stem>.joint_dynamics.yaml``) when they were identified; the transmissions, with the
        coupled motors' identified friction, to ``<stem>.transmissions.yaml`` where the model
        has coupled motors.  Loading the URDF (with those YAML files) gives the identified
        model's torques.  Returns the paths written.
        """
        model = self.identified_model()
        write_urdf(model, path)
        written = [os.fspath(path)]
        if (self.base.armature or model.friction_offset.any()
                or model.coulomb_velocity.any()):
            if joint_dynamics is None:
                joint_dynamics = os.path.splitext(os.fspath(path))[0] + '.joint_dynamics.yaml'
            write_joint_dynamics(model, joint_dynamics)
            written.append(os.fspath(joint_dynamics))
        if model.transmissions is not None and model.transmissions.coupled_joints:
            import yaml
            motors = os.path.splitext(os.fspath(path))[0] + '.transmissions.yaml'
            with open(motors, 'w', encoding='utf-8') as f:
                yaml.safe_dump(model.transmissions.to_dict(), f, sort_keys=False)
            written.append(motors)
        return written

    @property
    def standard_names(self):
        """Names of ``standard``: the standard parameters of the identified set."""
        return self.base.standard_names

    @property
    def names(self):
        """Names of the base parameters, as ``base.names``."""
        return self.base.names

    def to_dict(self):
        """Return a plain mapping for YAML or JSON."""
        return {
            'count': self.base.count,
            'samples': self.samples,
            'condition': float(self.condition),
            'parameters': [{'name': n, 'value': float(v), 'std': float(s),
                            'relative_std_percent': float(r), 'urdf': float(u),
                            'equation': e}
                           for n, v, s, r, u, e in zip(self.names, self.values, self.std,
                                                       self.relative_std, self.base.values,
                                                       self.base.equations)],
            'residual_rms': self.residual_rms.tolist(),
            'sigma': self.sigma.tolist(),
            'processing': dict(self.processing),
            **({} if self.validation is None else {'validation': self.validation.to_dict()}),
            **({} if self.standard is None else {
                'standard': [{'name': n, 'value': float(v)}
                             for n, v in zip(self.standard_names, self.standard)],
                'consistency': {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                                for k, v in self.consistency.items()}}),
        }

    def to_yaml(self):
        """Return :meth:`to_dict` as a YAML document."""
        import yaml
        return yaml.safe_dump(self.to_dict(), sort_keys=False)


def identify(model, data, *, friction=True, armature=None, base=None, cutoff=None,
             topic='/joint_states', physically_consistent=False, prior_weight=1.0,
             validation=None, retime=True, compare=None, still=None):
    """
    Identify the base parameters of ``model`` from measured data.

    Parameters
    ----------
    model : Model
        The robot (its URDF values are only reported next to the estimate).
    data : tuple, mapping, path, or list of them
        ``(q, qd, qdd, tau)`` arrays of shape (N, n) used as they are; or ``(t, q, tau)`` /
        a mapping with keys ``t, q, tau`` (a time series, differentiated and filtered); or the
        path of a CSV file, a numpy archive (``.npz``) or a rosbag2 recording (see
        :func:`.logs.read_csv`, :func:`.logs.read_npz`, :func:`.logs.read_rosbag`);
        or a list of time series (tuples, mappings or paths), several logs identified together.
        A time series is split at its gaps and each stretch filtered alone (see
        :func:`.logs.differentiate`); ``estimate.processing`` reports the stamps of every log.
    friction : bool or str
        The joints' friction law to identify (:data:`FRICTION_LAWS`): ``False`` none; ``True``
        or ``'coulomb'`` viscous and Coulomb, ``Fv qd + Fc sign(qd)``; ``'offset'`` that plus a
        constant ``Fo`` per joint (asymmetric Coulomb friction, ``Fc +- Fo``, or a torque
        sensor's offset: the same column); ``'smooth'`` ``Fv qd + Fc tanh(qd / vs) + Fo``, the
        Coulomb velocity ``vs`` of each joint fitted first (:func:`fit_coulomb_velocity`), the
        rest linear as before.  Which law a robot needs is for held-out data to say
        (:func:`select_friction`), not the training fit, which more terms always improve.
    armature : bool or None
        Identify ``Ia`` of every joint too; None (default): if the model has rotor inertias.
    base : BaseParameters, optional
        Which base parameters to identify; computed when not given.
    cutoff : float, 'auto' or None
        Low-pass cutoff in Hz for time series; ``'auto'``: chosen from the data by
        :func:`choose_cutoff` (``processing['cutoff_selection']`` says how); None (default):
        the same, but data too short to judge any candidate get :data:`.logs.CUTOFF_HZ` and the
        reason (``cutoff_selection['fallback']``) where ``'auto'`` is an error.
    topic : str
        The JointState topic in a rosbag2 recording.
    physically_consistent : bool
        Also find ``estimate.standard``: standard parameters every link of which is physically
        realisable, fitting the same weighted equations, with the URDF's values as the prior
        for what the data do not determine (:mod:`.consistent`).
    prior_weight : float
        Weight of that prior, in units of one equation's noise per unit of its (dimensionless)
        deviation.
    validation : data, optional
        Data not used for the fit (as ``data``: other logs, or another stretch): the estimate's
        ``validation`` then compares the URDF's, the identified and the consistent models'
        torques with them (:meth:`Estimate.validate`).
    compare : mapping of str to Model, optional
        Other models the validation judges beside those, by label: a published parameter set
        or an earlier identification (``load_model(urdf, parameters=YAML)``).
    retime : bool
        Put a time series that has the robot's measured velocities on the robot's clock where
        they allow it (:func:`.timing.retime`; ``processing['timing']``); False: the stamps as
        logged.
    still : float, 'auto' or None
        Leave out each joint's equations where it, or a motor that turns it, is slower than
        this speed (rad/s or m/s): at rest and at reversals its dry friction is anything up to
        ``Fc``, not ``Fc s(qd)`` (:mod:`.stiction`); ``'auto'``: per joint and motor, from the
        data's noise at the cutoff; None (default): every equation.  Validation leaves out the
        same with the same speeds.  ``processing['still']`` reports them.

    Returns
    -------
    Estimate

    Raises
    ------
    IdentificationError
        With what is wrong and what to do.

    """
    law = friction_law(friction)
    _compared(model, compare)                         # refused before any work, not after it
    cutoff, chosen = resolve_cutoff(model, data, cutoff, topic=topic, friction=friction,
                                    armature=armature, retime=retime)
    q, qd, qdd, tau, parallel, processing = prepare(model, data, cutoff=cutoff, topic=topic,
                                                    retime=retime)
    if chosen is not None:
        processing['cutoff_selection'] = chosen
    processing['training_range'] = training_range(q, qd)
    if law == 'smooth':
        model = fit_coulomb_velocity(model, q, qd, qdd, tau, parallel, armature=armature)
        processing['coulomb_velocity'] = dict(zip(model.joint_names,
                                                  map(float, model.coulomb_velocity)))
    elif model.coulomb_velocity.any() or (law != 'offset' and model.friction_offset.any()):
        # the law asked for, not the model's: no smooth law, offsets only with 'offset'
        model = dataclasses.replace(
            model, coulomb_velocity=np.zeros(model.n),
            friction_offset=model.friction_offset if law == 'offset' else np.zeros(model.n))
    processing['friction'] = law
    if base is None:
        base = base_parameters(model, friction=_LAYOUT[law], armature=armature)
    b = base.count
    N, n = tau.shape
    if N * n < 2 * b:
        raise IdentificationError(f'{N} states give {N * n} equations for {b} base parameters: '
                                  f'record at least {math.ceil(2 * b / n)} states (many more '
                                  'for a useful estimate)')
    speeds, still_report = still_speeds(model, still, parallel, cutoff)
    Y = regressor(model, q, qd, qdd, armature=base.armature, friction=base.friction)
    W = base.base_regressor(Y)                      # (N, n, b)
    if parallel is not None:
        W, tau = parallel(W), parallel(tau)
        N = tau.shape[0]
    left_out = stuck(model, qd if parallel is None else parallel.kept(qd), speeds)
    processing['still'] = left_out_summary(still_report, model.joint_names, left_out)
    if left_out.any():
        W, tau = W * ~left_out[:, :, None], tau * ~left_out
    Wf = W.reshape(N * n, b)
    norms = np.linalg.norm(Wf, axis=0)
    check_excitation(base.names, Wf, norms)
    condition = float(np.linalg.cond(Wf / norms))
    K, cov, sigma, G, g = weighted_least_squares(W, tau, kept=~left_out)
    inflation, processing['std'] = correlation_inflation(G, g, N)
    if law == 'smooth':
        cov, processing['coulomb_velocity_std'] = _with_velocity_uncertainty(
            model, base, qd, parallel, K, sigma, G, g)
    std = inflation * np.sqrt(np.maximum(np.diag(cov), 0.0))
    with np.errstate(divide='ignore', invalid='ignore'):
        relative = np.where(np.abs(K) > 0, 100.0 * std / np.abs(K), np.inf)
    residual = tau - W @ K                          # zero where left out
    counted = np.maximum((~left_out).sum(axis=0), 1)
    standard = consistent = None
    consistency = {}
    if physically_consistent:
        # weights floored at NOISE_FLOOR of each joint's RMS torque: exact (simulated) data
        # would otherwise weigh 1e26 times the prior, which then cannot decide anything
        floor = NOISE_FLOOR * np.sqrt((tau ** 2).mean(axis=0))
        weights = 1.0 / np.maximum(sigma, np.where(floor > 0, floor, 1.0))
        Gc = (W * weights[None, :, None]).reshape(N * n, b)
        standard, consistency = _consistent(model, base, Gc, (tau * weights).reshape(-1), K,
                                            prior_weight)
        consistent = consistency.pop('T') @ standard
        consistency['residual_rms'] = np.sqrt(((tau - W @ consistent) ** 2).sum(axis=0)
                                              / counted)
    estimate = Estimate(base=base, values=K, std=std, relative_std=relative,
                        condition=condition, sigma=sigma,
                        residual_rms=np.sqrt((residual ** 2).sum(axis=0) / counted), samples=N,
                        processing=processing, standard=standard, consistent_values=consistent,
                        consistency=consistency, model=model,
                        covariance=inflation ** 2 * cov)
    if validation is None:
        return estimate
    return dataclasses.replace(estimate, validation=estimate.validate(validation, topic=topic,
                                                                      compare=compare))


#: Folds of the training data that choose a friction law when validation data are given.
SELECTION_FOLDS = 3


def select_friction(model, data, validation=None, *, laws=('coulomb', 'offset', 'smooth'),
                    folds=None, **options):
    """
    Identify with each friction law in ``laws`` and keep the one that best predicts held-out data.

    The laws are judged by :func:`cross_validate` on ``data`` alone, in ``folds`` pieces
    (:data:`SELECTION_FOLDS` by default when ``validation`` is given): the pooled error of each
    law's folds.  The chosen law is then identified on all of ``data``.  ``validation`` (data
    the fits do not see: other logs, another stretch) scores that one model only, so its error
    is strictly held out: nothing was chosen on it.  Without ``validation``, the estimate's
    ``validation`` is the chosen law's pooled folds (the error it was chosen by, so a little
    optimistic).  ``estimate.processing['friction_selection']`` holds every law's fold error
    (percent), ``friction_selection_by`` how.  More terms always fit the training data better,
    so only data left out can say whether a law is worth its parameters.  The cutoff, when
    chosen (``cutoff='auto'`` or None), is chosen on ``data`` too.  ``options`` go to
    :func:`identify`.
    """
    if validation is None and folds is None:
        raise IdentificationError('select_friction needs validation data or folds: the laws '
                                  'are compared on data the fits did not see')
    folds = SELECTION_FOLDS if folds is None else folds
    laws = [friction_law(law) for law in laws]
    topic = options.get('topic', '/joint_states')
    # once, with the first law, on the training data, not again for every law and fold
    options['cutoff'], cutoff_selection = resolve_cutoff(
        model, data, options.get('cutoff'), topic=topic,
        **_judging(dict(options, friction=laws[0])))
    logs = read_time_series(model, data, topic, 'choosing the friction law (by folds of the '
                            'training data)', options.get('retime', True))
    checks = {law: cross_validate(model, logs, folds=folds, friction=law, **options)
              for law in laws}
    errors = {law: c.pooled.error['identified'] for law, c in checks.items()}
    best = min(errors, key=errors.get)
    if validation is not None:
        chosen = identify(model, data, friction=best, validation=validation, **options)
        how = (f'{folds}-fold cross-validation in time of the training data; the validation '
               'data scored the chosen law only')
    else:
        chosen = dataclasses.replace(identify(model, data, friction=best, **options),
                                     validation=checks[best].pooled)
        how = f'{folds}-fold cross-validation in time'
    processing = {**chosen.processing, 'friction_selection': errors,
                  'friction_selection_by': how}
    if cutoff_selection is not None:
        processing['cutoff_selection'] = cutoff_selection
    return dataclasses.replace(chosen, processing=processing)


#: Multiples of the motion's bandwidth (:func:`motion_bandwidth`) ``cutoff='auto'`` tries.
CUTOFF_MULTIPLES = (2.5, 5.0, 10.0, 20.0)


def motion_bandwidth(logs, power=0.999):
    """
    Return the highest frequency of the motion in Hz: below it, ``power`` of the positions'.

    Per log and joint, the positions (on a uniform grid, their linear trend removed, a Hann
    window against the leakage of a log that is not a whole number of periods, which spread a
    thousandth of the power to 7 Hz) are Fourier transformed; the frequency under which
    ``power`` of their power lies, the largest over joints and logs.  Noise, flat and weak,
    does not move it.
    """
    highest = 0.0
    for t, q, _ in logs:
        t, q = np.asarray(t, dtype=float), np.asarray(q, dtype=float)
        step = float(np.median(np.diff(t)))
        grid = np.arange(t[0], t[-1], step)
        for j in range(q.shape[1]):
            x = np.interp(grid, t, q[:, j])
            x = x - np.polyval(np.polyfit(grid - grid[0], x, 1), grid - grid[0])
            spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x)))) ** 2
            if spectrum.sum() > 0:
                share = np.cumsum(spectrum) / spectrum.sum()
                f = np.fft.rfftfreq(len(x), step)[np.searchsorted(share, power)]
                highest = max(highest, float(f))
    return highest


def choose_cutoff(model, data, *, folds=3, candidates=None, topic='/joint_states', **options):
    """
    Choose the filter's cutoff from the data: the one whose fits best predict held-out pieces.

    Candidates: :data:`CUTOFF_MULTIPLES` of the motion's bandwidth (:func:`motion_bandwidth`),
    below 0.4 of the Nyquist frequency.  Each is judged by the pooled error of the identified
    model in :func:`cross_validate` (``folds`` pieces of every log, the measured torques
    unfiltered, so that every cutoff answers to the same measurements): too low a cutoff
    attenuates the motion, too high one lets the positions' noise, differentiated twice, into
    the regressor, and the held-out error sees both.  ``options`` go to :func:`identify`.
    Returns ``(cutoff, report)``, the report with the bandwidth and every candidate's error.
    """
    logs = read_time_series(model, data, topic, "cutoff='auto'", options.get('retime', True))
    bandwidth = motion_bandwidth(logs)
    fs = 1.0 / float(np.median(np.diff(np.asarray(logs[0][0], dtype=float))))
    if candidates is None:
        candidates = [m * bandwidth for m in CUTOFF_MULTIPLES if 0 < m * bandwidth < 0.2 * fs]
    errors, refused = {}, {}
    for c in candidates:
        try:
            check = cross_validate(model, logs, folds=folds, cutoff=float(c), topic=topic,
                                   **options)
        except IdentificationError as e:            # too low: the pieces are too short
            refused[float(c)] = str(e)
            continue
        errors[float(c)] = check.pooled.error['identified']
    if not errors:
        raise IdentificationError(f'no cutoff could be judged ({len(candidates)} tried around '
                                  f'the motion bandwidth {bandwidth:.3g} Hz): '
                                  + '; '.join(f'{c:.3g} Hz: {e}' for c, e in refused.items()))
    best = min(errors, key=errors.get)
    return best, {'bandwidth_hz': bandwidth, 'folds': folds, 'held_out_error': errors,
                  'refused': refused}


def resolve_cutoff(model, data, cutoff, *, topic='/joint_states', retime=True, **options):
    """
    Return ``(cutoff in Hz, how it was chosen or None)`` for ``identify``'s ``cutoff``.

    A number is used as it is; ``'auto'`` and None choose it from the data
    (:func:`choose_cutoff`, ``options`` going to :func:`identify`), None falling back to
    :data:`.logs.CUTOFF_HZ` with the reason where no candidate can be judged (too short a log) and
    for ``(q, qd, qdd, tau)`` arrays, which are not filtered.
    """
    if cutoff is not None and cutoff != 'auto':
        return cutoff, None
    if cutoff is None:
        logs = read_logs(model, data, topic, retime)
        if any(len(log) != 3 for log in logs):
            return CUTOFF_HZ, None                  # arrays: used as they are
        try:
            return choose_cutoff(model, logs, topic=topic, retime=retime, **options)
        except IdentificationError as e:
            return CUTOFF_HZ, {'fallback': f'{CUTOFF_HZ:g} Hz, the default: {e}'}
    return choose_cutoff(model, data, topic=topic, retime=retime, **options)


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
    return text


@dataclass(frozen=True, eq=False)
class CrossValidation:
    """
    K-fold cross-validation in time (:func:`cross_validate`).

    Attributes
    ----------
    estimates : list of Estimate
        Fold ``k``'s estimate, from every log's other pieces; its ``validation`` is on piece k.
    pooled : Validation
        Every fold's held-out torques and predictions together: its errors are the pooled
        normalised squared errors (sum of squared errors over all folds over that of squared
        torques), its table and plot those of all the held-out data.

    """

    estimates: list
    pooled: Validation

    def table(self):
        """Say each fold's normalised errors, then the pooled validation table."""
        lines = [f'{len(self.estimates)}-fold cross-validation in time, each piece held out '
                 'in turn:']
        for k, e in enumerate(self.estimates, start=1):
            errors = e.validation.error.items()
            lines.append(f'  fold {k}: ' + ', '.join(f'{m} {v:.4g} %' for m, v in errors)
                         + f' ({self.chosen(e)})')
        return '\n'.join(lines) + '\npooled ' + self.pooled.table()

    @staticmethod
    def chosen(estimate):
        """Say what a fold's fit took: its cutoff and law, and whether its training chose them."""
        p = estimate.processing
        cutoff = f"cutoff {p.get('cutoff_hz', CUTOFF_HZ):.3g} Hz"
        if 'held_out_error' in (p.get('cutoff_selection') or {}):
            cutoff += ' chosen'
        law = f"law {p.get('friction')}" + (' chosen' if 'friction_selection' in p else '')
        return f'{cutoff}, {law}, on its training pieces'

    def to_dict(self):
        """Return a plain mapping for YAML or JSON."""
        return {'folds': [dict(e.validation.to_dict(),
                               cutoff_hz=e.processing.get('cutoff_hz'),
                               friction=e.processing.get('friction'),
                               **({'friction_selection': e.processing['friction_selection']}
                                  if 'friction_selection' in e.processing else {}))
                          for e in self.estimates],
                'pooled': self.pooled.to_dict()}


def cross_validate(model, data, *, folds=3, topic='/joint_states', friction=True, **options):
    """
    Identify on all but one piece of the data, predict that piece; each piece in turn.

    Each log of ``data`` (time series, as :func:`identify` takes them) is cut into ``folds``
    consecutive pieces of equal length; fold ``k`` identifies on every other piece, each a log
    of its own (nothing is filtered across the piece left out), and validates on piece ``k``
    of every log.  ``options`` go to :func:`identify`.  Returns a :class:`CrossValidation`.

    What is chosen from data is chosen inside each fold, from its training pieces alone, so
    that every held-out score is strictly held out: the cutoff (``cutoff='auto'`` or None,
    :func:`choose_cutoff`), the friction law where ``friction`` is a list of laws
    (:func:`select_friction`, on folds of the training pieces), the still speeds
    (``still='auto'``).  Each fold's estimate reports what it chose.
    """
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise IdentificationError(f'folds must be an integer of at least 2, got {folds!r}')
    logs = read_time_series(model, data, topic, 'cross-validation in time',
                            options.get('retime', True))
    laws = list(friction) if isinstance(friction, (list, tuple)) else None
    pieces = [[tuple(np.asarray(x)[rows] for x in log)
               for rows in np.array_split(np.arange(len(log[0])), folds)] for log in logs]
    estimates = []
    for k in range(folds):
        train = [piece for cut in pieces for j, piece in enumerate(cut) if j != k]
        held = [cut[k] for cut in pieces]
        held = held if len(held) > 1 else held[0]
        # a piece held out of a motion often goes where the others did not: each fold's
        # validation keeps it (beyond_training), the warnings are for data a user holds out
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', ExtrapolationWarning)
            if laws is not None and len(laws) > 1:
                estimates.append(select_friction(model, train, held, laws=laws, topic=topic,
                                                 **options))
            else:
                estimates.append(identify(model, train, topic=topic, validation=held,
                                          friction=laws[0] if laws else friction, **options))
    return CrossValidation(estimates=estimates, pooled=_pooled([e.validation
                                                               for e in estimates]))


def _judging(options):
    """Return the options of :func:`identify` that :func:`choose_cutoff` judges with."""
    return {k: options[k] for k in ('friction', 'armature', 'retime') if k in options}


def _pooled(validations):
    """Return one Validation of several: their rows together."""
    models = [m for m in validations[0].predicted if all(m in v.predicted for v in validations)]
    left_out = None
    if any(v.left_out is not None for v in validations):
        left_out = np.concatenate([np.zeros(v.measured.shape, dtype=bool) if v.left_out is None
                                   else v.left_out for v in validations])
    return Validation.of(
        validations[0].joint_names, np.concatenate([v.t for v in validations]),
        np.concatenate([v.measured for v in validations]),
        {m: np.concatenate([v.predicted[m] for v in validations]) for m in models}, left_out)


def _compared(model, compare):
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


#: The friction laws :func:`identify` takes (its ``friction``), and their parameter layouts.
FRICTION_LAWS = ('none', 'coulomb', 'offset', 'smooth')
_LAYOUT = {'none': False, 'coulomb': True, 'offset': 'offset', 'smooth': 'offset'}

#: Coulomb velocities (rad/s, m/s) :func:`fit_coulomb_velocity` tries before refining; 0 is
#: the sign law.
COULOMB_VELOCITIES = (0.0, *np.logspace(-3, 0, 13))


def friction_law(friction):
    """Name the friction law of an ``identify(friction=...)`` argument; error if unknown."""
    if friction is False or friction is None:
        return 'none'
    if friction is True:
        return 'coulomb'
    if friction in FRICTION_LAWS:
        return friction
    raise IdentificationError(f'friction must be True, False or one of '
                              f'{", ".join(FRICTION_LAWS)}, got {friction!r}')


def fit_coulomb_velocity(model, q, qd, qdd, tau, parallel=None, *, armature=None, sweeps=2):
    """
    Fit each joint's Coulomb velocity ``vs`` of ``Fv qd + Fc tanh(qd / vs) + Fo``.

    Separable least squares: for given ``vs`` the law is linear in the parameters, so the
    weighted residual of the linear fit (every base parameter, the joints weighted by their
    noise) is a function of the ``vs`` alone.  Each joint's ``vs`` in turn is chosen among
    :data:`COULOMB_VELOCITIES` (0: the sign law) and refined by a golden-section search in
    ``log vs`` between the neighbours of the best, the others held; ``sweeps`` rounds.  Only the
    joint's own Coulomb column changes, so a trial costs one column filtered and one solve.
    Returns the model with ``coulomb_velocity`` set.
    """
    model = dataclasses.replace(model, coulomb_velocity=np.zeros(model.n))
    base = base_parameters(model, friction='offset', armature=armature)
    W = base.base_regressor(regressor(model, q, qd, qdd, armature=base.armature,
                                      friction='offset'))
    filtered = (lambda x: x) if parallel is None else parallel
    Wf, tf = filtered(W), filtered(tau)
    sigma = weighted_least_squares(Wf, tf)[2]
    tw = (tf / sigma).reshape(-1)
    column = {j: base.names.index(f'Fc_{name}') for j, name in enumerate(model.joint_names)
              if f'Fc_{name}' in base.names}

    def cost(j, vs):
        shape = np.tanh(qd[:, j] / vs) if vs > 0 else np.sign(qd[:, j])
        Wf[:, j, column[j]] = filtered(shape)
        G = (Wf / sigma[None, :, None]).reshape(len(tw), -1)
        r = tw - G @ np.linalg.lstsq(G, tw, rcond=None)[0]
        return float(r @ r)

    vs = np.zeros(model.n)
    grid = np.array(COULOMB_VELOCITIES)
    for _ in range(sweeps):
        for j in column:
            costs = [cost(j, v) for v in grid]
            k = int(np.argmin(costs))
            best, best_cost = grid[k], costs[k]
            if k > 0:                 # refine between the neighbours (log scale; 0 stays 0)
                lower = grid[k - 1] if k > 1 else grid[1] / 10
                upper = grid[k + 1] if k + 1 < len(grid) else grid[-1] * 10
                x, c = _golden(lambda x: cost(j, math.exp(x)), math.log(lower), math.log(upper))
                if c < best_cost:
                    best, best_cost = math.exp(x), c
            vs[j] = best
            cost(j, best)                         # leave the chosen column in place
    return dataclasses.replace(model, coulomb_velocity=vs)


def _with_velocity_uncertainty(model, base, qd, parallel, K, sigma, G, g):
    """
    Return the covariance of ``K`` widened by the fitted Coulomb velocities', and their std.

    Linearised about the fit, each ``vs_j`` is one more unknown with the column ``Fc_j d/dvs
    tanh(qd / vs)`` (filtered and weighted as the rest): the covariance of the augmented
    problem, marginalised over the ``vs``, is what the base parameters are known to, where
    the covariance given the ``vs`` would claim ``Fc`` and ``Fv`` better known than they are.
    """
    joints = [j for j, name in enumerate(model.joint_names)
              if model.coulomb_velocity[j] > 0 and f'Fc_{name}' in base.names]
    r = g - G @ K
    s2 = float(r @ r) / max(len(g) - G.shape[1] - len(joints), 1)
    if not joints:
        return s2 * np.linalg.inv(G.T @ G), {}
    N, n = qd.shape
    D = np.zeros((N, n, len(joints)))
    for k, j in enumerate(joints):
        vs = model.coulomb_velocity[j]
        fc = K[base.names.index(f'Fc_{model.joint_names[j]}')]
        D[:, j, k] = -fc * qd[:, j] / vs ** 2 * (1.0 - np.tanh(qd[:, j] / vs) ** 2)
    if parallel is not None:
        D = parallel(D)
    A = np.hstack([G, (D / sigma[None, :, None]).reshape(G.shape[0], len(joints))])
    full = s2 * np.linalg.pinv(A.T @ A)
    b = G.shape[1]
    std = np.sqrt(np.maximum(np.diag(full)[b:], 0.0))
    return full[:b, :b], {model.joint_names[j]: float(s) for j, s in zip(joints, std)}


def _golden(f, lo, hi, iterations=20):
    """Return ``(x, f(x))`` at the minimum of a unimodal ``f`` on ``[lo, hi]``."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return (c, fc) if fc < fd else (d, fd)


def _consistent(model, base, G, g, K, weight):
    """Physically consistent standard parameters for the weighted equations ``G K = g``."""
    if not (math.isfinite(weight) and weight > 0):
        raise IdentificationError(f'prior_weight must be positive, got {weight}')
    prior = standard_parameters(model, armature=base.armature, friction=base.friction)
    if len(prior) != len(base.standard_names):
        raise IdentificationError('physically_consistent needs the base parameters of this '
                                  'model (base was computed for another one)')
    Q, R = np.linalg.qr(G)
    fit = ConsistentFit(base, prior, K)
    standard, info = fit.solve(R, Q.T @ g, weight)
    info['T'] = fit.T
    return standard, info


def weighted_least_squares(W, tau, passes=5, kept=None):
    """
    Solve ``tau = W K`` (``W (N, n, b)``, ``tau (N, n)``) weighting each joint by its noise.

    Ordinary least squares gives each joint's residuals and noise ``sigma_j`` (their RMS with
    ``b / n`` degrees of freedom spent per joint); rows of joint j are weighted by
    ``1 / sigma_j`` and solved again.  The first ``sigma`` over-rates the quiet joints' noise:
    ordinary least squares lets the loud joints' noise into the shared parameters, and so into
    every joint's residuals (a wrist's by up to 70 % on a 7-joint arm).  So ``sigma`` is estimated
    again from the weighted fit's residuals, up to ``passes`` times, until it settles to 0.1 %.
    Returns ``K, cov, sigma, G, g``: the estimate, its covariance ``s^2 (G^T G)^-1`` (``s`` the
    RMS of the weighted residuals), and the weighted system ``G K = g``.  ``kept (N, n)``: the
    equations that count (the others' rows of ``W`` and ``tau`` are zero), for the noise's
    degrees of freedom; default every one.
    """
    N, n, b = W.shape
    K = np.linalg.lstsq(W.reshape(N * n, b), tau.reshape(-1), rcond=None)[0]
    rows = np.full(n, N) if kept is None else kept.sum(axis=0)
    dof = np.maximum(rows - b / n, 1.0)
    sigma = None
    for _ in range(passes):
        rho = tau - W @ K
        new = np.sqrt((rho ** 2).sum(axis=0) / dof)
        new = np.where(new > 0, new, max(new.max(), 1e-300))
        settled = sigma is not None and np.max(np.abs(new / sigma - 1)) < 1e-3
        sigma = new
        G = (W / sigma[None, :, None]).reshape(N * n, b)
        g = (tau / sigma).reshape(-1)
        K, *_ = np.linalg.lstsq(G, g, rcond=None)
        if settled:
            break
    weighted = g - G @ K
    s2 = float(weighted @ weighted) / max(int(rows.sum()) - b, 1)
    return K, s2 * np.linalg.inv(G.T @ G), sigma, G, g


def correlation_inflation(G, g, states, blocks=None):
    """
    Return ``(factor, report)``: how much the rows' correlation in time widens the deviations.

    ``s^2 (G^T G)^-1`` holds if the rows of ``G K = g`` are independent.  They are not quite,
    even for white torque noise (the parallel filter leaves neighbouring kept rows correlated
    by about 0.3), and far from it where the model misses something that follows the motion
    (a real robot: its residuals are smooth in time).  The delete-a-block jackknife measures the
    spread without that assumption: the ``states`` (``G`` has ``len(g) / states`` rows each, in
    time order) are cut into ``blocks`` consecutive blocks (:data:`JACKKNIFE_BLOCKS`), each left
    out in turn, ``jack^2 = (B - 1) / B sum_k (K_k - mean K)^2``.  The jackknife over-states
    the variance where leaving a block out costs much excitation (by 30 % on a 10 s
    excitation of the demo arm), so it is compared with what it would give if the rows were
    independent, known in closed form from ``M_k = M - G_k^T G_k`` (``M = G^T G``)::

        E[jack^2] = s^2 (B - 1) / B diag(sum_k M_k^-1 - 1/B sum_jk M_j^-1 C_jk M_k^-1)

    (``C_jk = M - G_j^T G_j - G_k^T G_k``, ``C_kk = M_k``).  The median over the parameters of
    ``jack / sqrt(E[jack^2])`` is one number, stable where each parameter's ratio alone
    scatters by a quarter, that says by how much fewer independent rows there are than rows;
    ``factor`` is that median where it is above :data:`CORRELATED` (for independent rows it
    scatters between about 0.8 and 1.15), else 1.  ``report``: ``method``, ``jackknife_ratio``
    (the median), ``factor`` and the ratio's 10th and 90th percentiles; 1 with the reason where
    there are fewer states than blocks or leaving a block out loses a parameter.
    """
    B = JACKKNIFE_BLOCKS if blocks is None else blocks
    plain = {'method': 'independent rows', 'factor': 1.0}
    if states < 2 * B:
        return 1.0, dict(plain, reason=f'{states} states: too few for a {B}-block jackknife')
    norms = np.linalg.norm(G, axis=0)
    G = G / np.where(norms > 0, norms, 1.0)           # unit columns: M well scaled
    edges = np.linspace(0, states, B + 1).round().astype(int) * (len(g) // states)
    M, r = G.T @ G, G.T @ g
    P = [G[a:b].T @ G[a:b] for a, b in zip(edges[:-1], edges[1:])]
    inverse = []
    for k, Pk in enumerate(P):
        if np.linalg.cond(M - Pk) > 1e12:
            return 1.0, dict(plain, reason=f'leaving block {k + 1} of {B} out loses a parameter')
        inverse.append(np.linalg.inv(M - Pk))
    K = np.array([Mk @ (r - G[a:b].T @ g[a:b])
                  for Mk, a, b in zip(inverse, edges[:-1], edges[1:])])
    jack = (B - 1) / B * ((K - K.mean(axis=0)) ** 2).sum(axis=0)
    full = np.linalg.solve(M, r)
    s2 = float(((g - G @ full) ** 2).sum()) / max(len(g) - G.shape[1], 1)
    cross = np.zeros(G.shape[1])
    for j in range(B):
        for k in range(B):
            C = M - P[j] if j == k else M - P[j] - P[k]
            cross += ((inverse[j] @ C) * inverse[k]).sum(axis=1)
    expected = s2 * (B - 1) / B * (sum(np.diag(Mk) for Mk in inverse) - cross / B)
    seen = expected > 0
    ratio = np.sqrt(jack[seen] / expected[seen])
    median = float(np.median(ratio))
    factor = median if median > CORRELATED else 1.0
    return factor, {
        'method': f'jackknife in {B} blocks of time against its value for independent rows',
        'jackknife_ratio': median, 'factor': factor,
        'ratio_percentiles_10_90': [float(x) for x in np.percentile(ratio, [10, 90])]}


def check_excitation(names, W, norms):
    """Raise naming the parameters that the motion leaves out (``W`` rank-deficient)."""
    unit = W / np.where(norms > 0, norms, 1.0)
    s, vt = np.linalg.svd(unit, full_matrices=False)[1:]
    small = s < 1e-8 * s[0]
    dead = norms <= 1e-12 * norms.max()
    if not (small.any() or dead.any()):
        return
    involved = set(np.flatnonzero(dead))
    for v in vt[small]:
        involved.update(np.flatnonzero(np.abs(v) > 0.1))
    listed = ', '.join(names[i] for i in sorted(involved))
    raise IdentificationError(
        f'the motion does not excite every parameter: {listed} cannot be told apart '
        f'({int(small.sum())} directions unobserved); move every joint, with varied '
        'velocities and accelerations (e.g. a sum of sines per joint), over a wide range')


def std_summary(processing):
    """Say how the deviations were checked against time (:func:`correlation_inflation`)."""
    told = processing.get('std')
    if not told:
        return ''
    if 'jackknife_ratio' not in told:
        return f"standard deviations: {told['method']} ({told['reason']})"
    ratio = told['jackknife_ratio']
    if told['factor'] > 1:
        return (f'standard deviations widened {ratio:.3g}x: a jackknife in '
                f'{JACKKNIFE_BLOCKS} blocks of time spreads that much more than independent '
                'rows would (residuals correlated in time: the model misses something that '
                'follows the motion)')
    return (f'standard deviations as fitted: a jackknife in {JACKKNIFE_BLOCKS} blocks of time '
            f'spreads {ratio:.3g}x what independent rows would (at most {CORRELATED:g} is '
            'independent)')


def friction_summary(processing):
    """Say which friction law was identified, its Coulomb velocities, and how it was chosen."""
    law = processing.get('friction', 'coulomb')
    text = f'friction law: {law} ({_LAW_TEXT[law]})'
    velocities = processing.get('coulomb_velocity')
    if velocities:
        text += '; Coulomb velocities vs: ' + ', '.join(
            f'{j} {v:.3g}' if v > 0 else f'{j} 0 (sign)' for j, v in velocities.items())
    chosen = processing.get('friction_selection')
    if chosen:
        by = processing.get('friction_selection_by', 'the validation data')
        text += (f'\nchosen on held-out data ({by}), normalised squared error of each law: '
                 + ', '.join(f'{law} {e:.4g} %' for law, e in chosen.items()))
    return text


_LAW_TEXT = {'none': 'no friction terms', 'coulomb': 'Fv qd + Fc sign(qd)',
             'offset': 'Fv qd + Fc sign(qd) + Fo', 'smooth': 'Fv qd + Fc tanh(qd / vs) + Fo'}
