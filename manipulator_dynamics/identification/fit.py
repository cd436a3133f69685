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

``identify(model, data)`` (:mod:`.estimate`) solves ``tau = W_B(q, qd, qdd) K_B`` by weighted
least squares:

1. Data: arrays ``(q, qd, qdd, tau)`` used as given, or a time series of positions and efforts (a
   CSV file, a numpy archive, a rosbag2 recording of ``/joint_states``, or ``(t, q, tau)``
   arrays).  A time series is put on a uniform grid (linear interpolation where stamps jitter
   by more than 1 %); one sampled faster than 20 times the cutoff is cut down to that rate
   first (anti-aliased, zero phase, by chunks; validation still scores every sample:
   :func:`.identification.logs.differentiate_logs`); positions are low-pass filtered by a
   zero-phase Butterworth filter (order 4, ``cutoff`` Hz, as second-order sections applied
   forward and backward: :mod:`.filtering`) and differentiated by fourth-order central
   differences.  Then Gautier's parallel filter:
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
   reading, checking and filtering are :mod:`.identification.logs`'s.
2. Ordinary least squares gives the residuals of each joint and its noise ``sigma_j`` (their RMS
   with ``b / n`` degrees of freedom spent per joint); rows of joint j are weighted by
   ``1 / sigma_j`` and the weighted problem is solved again.
3. Standard deviations from ``cov = s^2 (W_w^T W_w)^-1``, ``s`` the RMS of the weighted residuals,
   widened where a jackknife in blocks of time shows the rows correlated
   (:func:`correlation_inflation`); relative ones in percent of ``|K_B|``.  Excitation is the
   condition number of ``W_B`` with unit columns (below ~1e3 is good); a rank-deficient ``W_B``
   is an error that names the base parameters the motion does not excite.
4. Directions of ``K_B`` the motion barely excites keep the prior's values (the model's: the
   URDF's or ``--parameters``), the rest coming from the data: a singular value ``s`` of the
   weighted ``W_B``, its columns scaled by each parameter's prior scale (its prior value, at
   least a tenth of the largest of its kind), says the data know that direction to ``1 / s``
   of the scale; at or below ``prior_threshold`` they are not used
   (:func:`.least_squares.at_the_prior`).  ``identify`` chooses the threshold on training
   folds (:func:`.selection.choose_prior_threshold`) where some direction is that weak.
"""

import dataclasses
from dataclasses import dataclass, field
import math
import os
import warnings

import numpy as np

from .base_parameters import base_parameters, BaseParameters
from .consistent import ConsistentFit, CONTINUED_FROM, ConvergenceWarning
from .filtering import CUTOFF_HZ
from .friction import base_rows, fit_coulomb_velocity, friction_of, LAYOUTS, row_period, \
    with_law, with_velocity_uncertainty
from .least_squares import at_the_prior, block_edges, check_excitation, factored_inflation, \
    factored_residual_rms, joint_factors, JointFactors, noise_weighted, prior_scale, \
    relative_std
from .logs import condition
from .settings import Settings
from .stiction import left_out_summary, motor_rows, still_speeds, stuck, stuck_rows
from .validation import at_full_rate, beyond_training, compared, ExtrapolationWarning, \
    training_range, Validation
from ..errors import IdentificationError
from ..model import Model
from ..rigid.regressor import standard_parameters
from ..rigid.rnea import inverse_dynamics
from ..urdf import write_joint_dynamics, write_urdf


#: Smallest torque noise assumed by the physically consistent fit, relative to each joint's RMS
#: torque (a very good torque sensor).
NOISE_FLOOR = 1e-4


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
    alternatives : dict or None
        With ``fit(..., prior_thresholds=...)``: the estimate at each of those thresholds,
        ``{'<threshold>': K_B}``, which :meth:`validate` judges beside the others.

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
    alternatives: dict = field(default=None, repr=False)

    def validate(self, data, *, topic='/joint_states', compare=None, alternatives=None):
        """
        Predict the torques of ``data`` (as :func:`identify` takes them) with every model.

        The URDF's base parameters, the identified ones and, where there is one, the physically
        consistent set, against the torques measured: the same filtering of positions as the
        fit (its cutoff), the measured torques unfiltered, at their full rate, each stretch's
        filter transients left out.  ``compare``: other models to judge beside them, ``{label:
        Model}`` on the same joints (a published or an earlier identified set:
        ``load_model(urdf, parameters='published.yaml')``); each predicts by its own inverse
        dynamics, with rotor inertia and friction as the fit has them.  ``alternatives``: other
        base-parameter vectors of this fit, ``{label: K_B}`` (:attr:`alternatives`).  Returns a
        :class:`Validation`.
        """
        model, base = self.model, self.base
        compare = compared(model, compare)
        t, q, qd, qdd, tau, parallel = self.states(data, topic=topic)
        raw = None if parallel is None else parallel.raw
        models = {'urdf': base.values, 'identified': self.values}
        if self.consistent_values is not None:
            models['consistent'] = self.consistent_values
        models.update(alternatives or {})
        predicted = self.predictions(q, qd, qdd, models)
        for label, other in compare.items():
            predicted[label] = inverse_dynamics(other, q, qd, qdd, armature=bool(base.armature),
                                                friction=bool(base.friction))
        report = self.processing.get('still')
        left_out = None
        if report:                                      # by name: the report may be reread
            left_out = stuck(model, qd, [report['speeds'][name]
                                         for name in motor_rows(model)[1]],
                             series=parallel is not None)
        if raw is None:
            validation = Validation.of(model.joint_names, t, tau, predicted, left_out)
        else:                                           # a log cut down: its every sample
            frictions = dict.fromkeys(predicted)
            if base.friction:
                frictions.update({m: friction_of(model, base.names, k)
                                  for m, k in models.items()})
                frictions.update(compare)
            validation = at_full_rate(model.joint_names, raw, t, qd, predicted, frictions,
                                      left_out, parallel.row_ranges)
        seen = self.processing.get('training_range')
        if seen is not None:
            validation = dataclasses.replace(
                validation, beyond_training=beyond_training(model.joint_names, seen, q, qd))
            if validation.beyond_training:
                warnings.warn(ExtrapolationWarning(validation.beyond_summary()), stacklevel=2)
        return validation

    def states(self, data, *, topic='/joint_states'):
        """
        Return ``(t, q, qd, qdd, tau, parallel)`` of ``data``, the rows :meth:`validate` scores.

        Filtered as the fit was (its cutoff), the efforts as measured; a time series' rows, each
        stretch's filter transients left out; arrays as given (``t`` then counts them,
        ``parallel`` is None).  ``parallel``: the time series' filter
        (:func:`.logs.differentiate_logs`); where a fast log was cut down, its ``raw`` holds
        each stretch at its full rate, ``(t, tau)``, and the rows are fewer, their efforts
        anti-aliased.
        """
        found = condition(self.model, data, Settings(
            cutoff=self.processing.get('cutoff_hz', CUTOFF_HZ), topic=topic,
            retime=self.processing.get('retime', True)))
        return found.scored() + (found.parallel,)

    def predictions(self, q, qd, qdd, vectors):
        """
        Return ``{label: W_B(q, qd, qdd) K (N, n)}`` for base-parameter vectors ``{label: K}``.

        Each by the inverse dynamics of the model that holds it (:func:`holding`): a 7-joint
        arm's row in 0.23 us, where its base regressor took 5.7 us and 3 kB.
        """
        base = self.base
        if not len(q):                              # no rows: nothing to predict
            return {label: np.empty(np.shape(q)) for label in vectors}
        return {label: inverse_dynamics(holding(self.model, base, K), q, qd, qdd,
                                        armature=bool(base.armature),
                                        friction=bool(base.friction))
                for label, K in vectors.items()}

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
        coupled motors' identified friction and the drives' torque constants, to
        ``<stem>.transmissions.yaml`` where the model has coupled motors or torque constants.
        Loading the URDF (with those YAML files) gives the identified
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
        drives = model.transmissions
        if drives is not None and (drives.coupled_joints
                                   or np.isfinite(drives.torque_constant).any()):
            import yaml
            motors = os.path.splitext(os.fspath(path))[0] + '.transmissions.yaml'
            with open(motors, 'w', encoding='utf-8') as f:
                yaml.safe_dump(drives.to_dict(), f, sort_keys=False)
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


def holding(model, base, K):
    """
    Return ``model`` holding the base parameters ``K`` of ``base``: its inverse dynamics are W_B K.

    The columns of ``W_B`` are the standard regressor's at ``base.index``, so the standard
    vector that is ``K`` there and zero elsewhere gives ``W K = W_B K``; the rigid bodies are
    linear in their ten parameters each, the rotor inertia and the friction in theirs (each
    law's shape, the Coulomb velocities, the model's), so the model with that vector, and zero
    for every parameter the base parameters do not name (friction offsets, a coupled motor's
    friction, rotor inertia), predicts ``W_B K`` by its inverse dynamics, with the armature
    and friction the base parameters have.
    """
    full = np.zeros(len(base.standard_names))
    full[base.index] = K
    zero = np.zeros(model.n)
    blank = dataclasses.replace(model, inertial=np.zeros_like(model.inertial), armature=zero,
                                viscous=zero, coulomb=zero, friction_offset=zero)
    coupled = model.transmissions.coupled_joints if model.transmissions is not None else ()
    if coupled:
        none = dict.fromkeys(coupled, 0.0)
        blank = dataclasses.replace(blank, transmissions=model.transmissions.with_motor_friction(
            none, none))
    return blank.with_parameters(full, base.standard_names)


@dataclass(frozen=True, eq=False)
class Equations:
    """
    The equations ``tau = W_B K_B`` of some data, filtered and checked, before they are solved.

    What :func:`equations` makes of data and :func:`solve` solves; reduced to their factors
    (:func:`factored`), those of pieces fitted together stack (:func:`solve_values`, the folds
    of :func:`.selection.choose_cutoff`: each piece's equations are made once, not once per
    fold it trains).  ``W (N, n, b)``, ``tau (N, n)``:
    the rows (zero where ``left_out``: a joint stuck, :mod:`.stiction`); ``model``: the robot
    with the friction law fitted; ``qd`` and ``parallel``: the rows' velocities and the time
    series' filter (None for arrays), which the smooth law's deviations need.
    """

    model: Model
    base: BaseParameters
    W: np.ndarray
    tau: np.ndarray
    left_out: np.ndarray
    qd: np.ndarray
    parallel: object
    processing: dict


def equations(model, data, settings=None, **options):
    """
    Read, filter and check ``data``; return its :class:`Equations` (nothing is solved).

    The module's steps 1 and the rows left out where a joint is stuck (``still``,
    :mod:`.stiction`); ``settings`` (:class:`.settings.Settings`) or their ``options`` by
    keyword, as :func:`fit` takes them.
    """
    model, base, q, qd, qdd, tau, parallel, left_out, processing = _conditioned(
        model, data, Settings.given(settings, **options))
    rows = _row_maker(model, base, parallel)
    if parallel is None:
        W = rows(q, qd, qdd)
    else:                                           # by chunks: only the rows kept are held
        W = parallel.apply(rows, q, qd, qdd)
    if left_out.any():
        W *= ~left_out[:, :, None]                  # made here: zeroed in place, not copied
        tau = tau * ~left_out
    return Equations(model=model, base=base, W=W, tau=tau, left_out=left_out, qd=qd,
                     parallel=parallel, processing=processing)


def _conditioned(model, data, settings):
    """
    Return what :func:`equations` makes its rows of, and the rows it leaves out.

    ``(model, base, q, qd, qdd, tau, parallel, left_out, processing)``: the model with its
    friction law, the base parameters, the states, the efforts as fitted (through the
    parallel filter where there is one) and the equations left out (:mod:`.stiction`).
    """
    law, base, armature, cutoff = settings.law, settings.base, settings.armature, settings.cutoff
    found = condition(model, data, settings)
    q, qd, qdd, tau, parallel = found.q, found.qd, found.qdd, found.tau, found.parallel
    processing = found.processing
    processing['training_range'] = training_range(q, qd)
    if law == 'smooth':
        model = fit_coulomb_velocity(model, q, qd, qdd, tau, parallel, armature=armature)
        processing['coulomb_velocity'] = dict(zip(model.joint_names,
                                                  map(float, model.coulomb_velocity)))
    else:
        model = with_law(model, law)
    processing['friction'] = law
    if base is None:
        base = base_parameters(model, friction=LAYOUTS[law], armature=armature)
    speeds, still_report = still_speeds(model, settings.still, parallel, cutoff)
    if parallel is not None:
        tau = parallel(tau)
    left_out = stuck_rows(model, qd, speeds, parallel, cutoff)
    processing['still'] = left_out_summary(still_report, model.joint_names, left_out)
    return model, base, q, qd, qdd, tau, parallel, left_out, processing


def _row_maker(model, base, parallel):
    """Return ``rows(q, qd, qdd)``: the base regressor's rows ``(N, n, b)`` of those states."""
    period = row_period(parallel)                   # a log cut down: rows apart

    def rows(q, qd, qdd):
        return base_rows(model, base, q, qd, qdd, period)
    return rows


#: What :func:`solve_values` adds up, and what it lists, of its pieces' ``processing``.
_ADDED, _LISTED = ('trimmed_samples',), ('stamps', 'stretches', 'too_short')


def _merged(processings):
    """Return one ``processing`` of pieces solved together: counts added, lists joined."""
    processing = dict(processings[0])
    for key in _ADDED:
        if key in processing:
            processing[key] = sum(p[key] for p in processings)
    for key in _LISTED:
        if key in processing:
            processing[key] = [x for p in processings for x in p[key]]
    seen = [p['training_range'] for p in processings]
    processing['training_range'] = {
        'position_min': np.min([r['position_min'] for r in seen], axis=0).tolist(),
        'position_max': np.max([r['position_max'] for r in seen], axis=0).tolist(),
        'speed_max': np.max([r['speed_max'] for r in seen], axis=0).tolist()}
    return processing


def fit(model, data, settings=None, *, physically_consistent=False, prior_weight=1.0,
        validation=None, compare=None, cutoff_selection=None, path_weights=None,
        prior_threshold=0.0, prior_thresholds=None, **options):
    """
    Identify with everything given: :func:`.estimate.identify`'s parameters, a ``cutoff`` in Hz.

    ``settings``: what makes the equations (:class:`.settings.Settings`), or its ``options``
    by keyword (``friction``, ``armature``, ``base``, ``cutoff``, ``topic``, ``retime``,
    ``still``); the rest says how they are solved and judged.

    ``prior_threshold``: directions of the base parameters whose (prior-scaled) singular value
    is at or below it keep the prior's values (0: least squares; the module, step 4);
    ``prior_thresholds``: also the estimates at these, in ``alternatives``, for their choice.

    ``path_weights`` (with ``physically_consistent``): also the consistent sets at these prior
    weights, in ``consistency['path']`` (``{weight: {'standard', 'converged'}}``), found by
    continuation from the largest (:meth:`.consistent.ConsistentFit.path`): what the choice of
    the weight (:func:`.selection.choose_prior_weight`) compares.

    Nothing is chosen from the data here (the cutoff and the friction law are
    :mod:`.selection`'s and :mod:`.estimate`'s); ``cutoff_selection``, how the caller chose the
    cutoff, is reported in ``processing``.  :func:`fitted` (the equations), :func:`solve`, then
    :func:`validated`.
    """
    settings = Settings.given(settings, **options)          # an unknown law: refused first
    compared(model, compare)                         # refused before any work, not after it
    found = fitted(model, data, settings, cutoff_selection)
    estimate = solve(found, physically_consistent=physically_consistent,
                     prior_weight=prior_weight, path_weights=path_weights,
                     prior_threshold=prior_threshold, prior_thresholds=prior_thresholds)
    return validated(estimate, validation, settings.topic, compare)


def fitted(model, data, settings, cutoff_selection=None):
    """
    Return the equations of ``data`` that :func:`solve` takes, solved as often as asked.

    :func:`factored` with each jackknife block's factors, but :func:`equations` for the smooth
    law, whose deviations take every row: never the whole regressor where it is not needed
    (TSQR).  ``cutoff_selection``: how the cutoff was chosen, reported in ``processing``.
    """
    found = equations(model, data, settings) if settings.law == 'smooth' else \
        factored(model, data, settings, blocks=True)
    if cutoff_selection is not None:
        found.processing['cutoff_selection'] = cutoff_selection
    return found


def validated(estimate, validation, topic='/joint_states', compare=None):
    """Return ``estimate`` with its :meth:`~Estimate.validate` on ``validation``, if given."""
    if validation is None:
        return estimate
    return dataclasses.replace(estimate, validation=estimate.validate(validation, topic=topic,
                                                                      compare=compare))


def solve(found, *, physically_consistent=False, prior_weight=1.0, path_weights=None,
          prior_threshold=0.0, prior_thresholds=None):
    """
    Solve equations: the module's steps 2 to 4, and the consistent set if asked.

    ``found``: :class:`Equations`, or their :class:`Factored` form with each jackknife block's
    factors (:func:`factored` with ``blocks``), which every step but the smooth law's
    deviations takes.  Returns the :class:`Estimate` (without validation); the options as
    :func:`fit` takes them.
    """
    # its own: equations solved at a prior threshold and again at another (identify's choice)
    model, base, processing = found.model, found.base, dict(found.processing)
    law = processing['friction']
    b = base.count
    if isinstance(found, Equations):
        # W is decomposed once, a jackknife block at a time: every step from the joints'
        N, n = found.tau.shape
        rows = (~found.left_out).sum(axis=0)
        edges = block_edges(N)
        blocks = [joint_factors(found.W[i:j], found.tau[i:j])
                  for i, j in zip(edges[:-1], edges[1:])]
    elif found.blocks is None:
        raise IdentificationError('solve: factored equations need their jackknife blocks '
                                  '(factored(..., blocks=True))')
    else:
        N, rows, blocks = found.samples, found.rows, found.blocks
        n = len(rows)
    factors = JointFactors.stacked(blocks)
    condition = _checked(base, factors, N, processing)
    K, cov, sigma = noise_weighted(factors, rows)
    estimates, K, cov = _at_the_prior(base, (factors.R / sigma[:, None, None]).reshape(n * b, b),
                                      (factors.z / sigma[:, None]).reshape(-1), K, cov,
                                      processing, prior_threshold, prior_thresholds)
    inflation, processing['std'] = factored_inflation(blocks, sigma, N)
    if law == 'smooth':
        if not isinstance(found, Equations):
            raise IdentificationError("solve: the smooth law's deviations need the equations "
                                      '(equations(), not factored())')
        cov, processing['coulomb_velocity_std'] = with_velocity_uncertainty(
            model, base, found.qd, found.parallel, K, sigma,
            (found.W / sigma[None, :, None]).reshape(N * n, b), (found.tau / sigma).reshape(-1))
    std = inflation * np.sqrt(np.maximum(np.diag(cov), 0.0))
    standard = consistent = None
    consistency = {}
    if physically_consistent:
        # weights floored at NOISE_FLOOR of each joint's RMS torque: exact (simulated) data
        # would otherwise weigh 1e26 times the prior, which then cannot decide anything
        floor = NOISE_FLOOR * np.sqrt(((factors.z ** 2).sum(axis=1) + factors.outside) / N)
        weights = 1.0 / np.maximum(sigma, np.where(floor > 0, floor, 1.0))
        # the weighted equations by each joint's factors: (n b, b) rows whatever the log's
        # length, the same least squares but for a constant (what Q_j leaves of tau_j)
        standard, consistency = _consistent(
            model, base, (factors.R * weights[:, None, None]).reshape(n * b, b),
            (factors.z * weights[:, None]).reshape(-1), K, prior_weight, path_weights)
        consistent = consistency.pop('T') @ standard
        consistency['residual_rms'] = factored_residual_rms(factors, consistent, rows)
    return Estimate(base=base, values=K, std=std, relative_std=relative_std(K, std),
                    condition=condition, sigma=sigma,
                    residual_rms=factored_residual_rms(factors, K, rows), samples=N,
                    processing=processing, standard=standard, consistent_values=consistent,
                    consistency=consistency, model=model,
                    covariance=inflation ** 2 * cov,
                    alternatives=None if prior_thresholds is None else {
                        f'{t:g}': estimates[t] for t in prior_thresholds})


def _checked(base, factors, N, processing):
    """
    Refuse equations too few or that leave a base parameter unexcited; return the condition.

    The condition number of ``W_B`` with unit columns, from R of its QR (its singular values
    and column norms): the joints' ``factors`` stacked.
    """
    n, b = factors.z.shape
    if N * n < 2 * b:
        after = '' if 'cutoff_hz' not in processing else \
            ' after the filter (2.5 per cutoff period)'
        raise IdentificationError(f'{N} states{after} give {N * n} equations for {b} base '
                                  f'parameters: record at least {math.ceil(2 * b / n)} '
                                  f'states{after} (many more for a useful estimate)')
    R = factors.unweighted_r()
    norms = np.linalg.norm(R, axis=0)
    check_excitation(base.names, R, norms)
    return float(np.linalg.cond(R / np.where(norms > 0, norms, 1.0)))


def _at_the_prior(base, R, z, K, cov, processing, prior_threshold, prior_thresholds):
    """
    Keep the prior where the data do not reach (the module, step 4): ``(estimates, K, cov)``.

    ``R``, ``z``: the weighted system's compact form; ``estimates``: ``{threshold: K}`` at
    ``prior_threshold`` and every one of ``prior_thresholds``.  Says in ``processing['prior']``
    how many directions kept the prior.
    """
    if isinstance(prior_threshold, bool) or not isinstance(prior_threshold, (int, float)) \
            or not (math.isfinite(prior_threshold) and 0 <= prior_threshold):
        raise IdentificationError(f'prior_threshold must be a singular value >= 0, or '
                                  f"'auto' for identify, got {prior_threshold!r}")
    estimates, at_prior = at_the_prior(R, z, base.values,
                                       {float(prior_threshold), *(prior_thresholds or ())},
                                       prior_scale(base.names, base.values, K,
                                                   np.sqrt(np.maximum(np.diag(cov), 0.0))))
    held = at_prior(prior_threshold)
    processing['prior'] = {'threshold': held['threshold'], 'directions': held['directions'],
                           'smallest': held['smallest'],
                           'parameters': [base.names[i] for i in np.flatnonzero(
                               held['share'] > 0.5)]}
    if held['directions']:
        K = estimates[prior_threshold]
        cov = held['projector'] @ cov @ held['projector'].T
    return estimates, K, cov


@dataclass(frozen=True, eq=False)
class Factored:
    """
    :class:`Equations` reduced to what their weighted least-squares values need.

    Each joint's QR factors (:func:`.least_squares.joint_factors`), the equations that count
    per joint (``rows (n,)``) and the rows (``samples``): a few kilobytes, whatever the
    length of the data.  Those of pieces stack (:func:`solve_values`): each piece's rows are
    decomposed once, however many folds it trains.
    """

    model: Model
    base: BaseParameters
    factors: object
    rows: np.ndarray
    samples: int
    processing: dict
    blocks: list = None


#: Rows :func:`factored` gathers before it decomposes them and stacks their factors on those
#: before (:meth:`.least_squares.JointFactors.stacked`): a 7-joint arm's are 15-25 MB, whatever
#: the length of the data; far fewer, and numpy's QR of a few rows a call costs more than it
#: saves (an hour's log: 7 s more in 28).
GATHERED = 4096


def factored(model, data, settings=None, *, blocks=False, **options):
    """
    Return the :class:`Factored` form of :func:`equations`, never holding all of their rows.

    The same equations, each chunk of rows the parallel filter makes
    (:func:`.logs.differentiate_logs`'s ``apply``) decomposed as it comes and the chunks'
    factors stacked (TSQR): a piece of an hour's log at the highest cutoff judged has a
    regressor of 70 MB, its factors a few hundred kilobytes.  Equal to the factors of
    :func:`equations` to rounding.  ``blocks``: also each jackknife block's factors apart
    (:func:`.least_squares.block_edges`), what :func:`solve` takes for the deviations.
    """
    model, base, q, qd, qdd, tau, parallel, left_out, processing = _conditioned(
        model, data, Settings.given(settings, **options))
    rows, kept = _row_maker(model, base, parallel), ~left_out
    N, n = tau.shape
    edges = block_edges(N) if blocks else np.array([0, N])
    done, gathered = [], []                 # each block's factors; the rows gathered since
    factors = None                          # the current block's rows decomposed so far

    def decompose():
        nonlocal factors
        if gathered:
            found = joint_factors(np.concatenate([w for w, _ in gathered]),
                                  np.concatenate([t for _, t in gathered]))
            factors = found if factors is None else JointFactors.stacked([factors, found])
            gathered.clear()

    def finish():
        nonlocal factors
        decompose()
        b = base.count
        done.append(factors if factors is not None else
                    JointFactors(np.zeros((n, b, b)), np.zeros((n, b)), np.zeros(n)))
        factors = None

    def reduce(start, W):
        a, stop = start, start + len(W)
        while a < stop:                     # the chunk's rows, cut where a block ends
            while a >= edges[len(done) + 1]:
                finish()
            end = min(stop, edges[len(done) + 1])
            gathered.append((W[a - start:end - start] * kept[a:end, :, None],
                             tau[a:end] * kept[a:end]))
            if sum(len(w) for w, _ in gathered) >= GATHERED:
                decompose()
            a = end
    if parallel is None:
        reduce(0, rows(q, qd, qdd))
    else:
        parallel.apply(rows, q, qd, qdd, reduce=reduce)
    while len(done) < len(edges) - 1:
        finish()
    return Factored(model=model, base=base,
                    factors=done[0] if len(done) == 1 else JointFactors.stacked(done),
                    rows=kept.sum(axis=0), samples=N, processing=processing,
                    blocks=done if blocks else None)


def solve_values(pieces, *, prior_threshold=0.0, prior_thresholds=None):
    """
    Solve :class:`Factored` pieces together for their values alone: an :class:`Estimate`.

    The values, the noise and the condition are :func:`solve`'s of the pieces' equations
    stacked to rounding; the deviations are not computed (nan: their
    widening needs the rows in time, :func:`correlation_inflation`): for a fold judged by
    what it predicts (:func:`.selection.held_out_error`), never for a set reported.
    """
    first = pieces[0]
    if any(p.processing['friction'] == 'smooth' for p in pieces):
        raise ValueError('the smooth law is fitted on every row at once: not by pieces')
    base = first.base
    factors = type(first.factors).stacked([p.factors for p in pieces])
    rows, N = sum(p.rows for p in pieces), sum(p.samples for p in pieces)
    processing = _merged([p.processing for p in pieces])
    condition = _checked(base, factors, N, processing)
    K, cov, sigma = noise_weighted(factors, rows)
    n, b = factors.z.shape
    estimates, K, cov = _at_the_prior(
        base, (factors.R / sigma[:, None, None]).reshape(n * b, b),
        (factors.z / sigma[:, None]).reshape(-1), K, cov, processing, prior_threshold,
        prior_thresholds)
    processing['std'] = {'method': 'not computed: a fold judged by its prediction alone'}
    unknown = np.full(b, np.nan)
    return Estimate(base=base, values=K, std=unknown, relative_std=unknown,
                    condition=condition, sigma=sigma, residual_rms=np.full(n, np.nan),
                    samples=N, processing=processing, model=first.model,
                    covariance=np.full((b, b), np.nan),
                    alternatives=None if prior_thresholds is None else {
                        f'{t:g}': estimates[t] for t in prior_thresholds})


def _consistent(model, base, G, g, K, weight, path=None):
    """
    Physically consistent standard parameters for the weighted equations ``G K = g``.

    ``G`` and ``g`` may be any rows whose least squares is the equations' but for a constant:
    their joints' factors (:func:`solve`).
    """
    for w in [weight, *(path or ())]:
        if isinstance(w, (bool, str)) or not (math.isfinite(w) and w > 0):
            raise IdentificationError(f"prior_weight must be positive (or 'auto' for "
                                      f'identify), got {w!r}')
    prior = standard_parameters(model, armature=base.armature, friction=base.friction)
    if len(prior) != len(base.standard_names):
        raise IdentificationError('physically_consistent needs the base parameters of this '
                                  'model (base was computed for another one)')
    Q, R = np.linalg.qr(G)
    fit = ConsistentFit(base, prior, K)
    # a weak prior's optimum lies far from the prior, where Newton steps from it crawl (the
    # TX40 at 0.1: 175 of 200): reached by continuation from a strong one, each solve from the
    # last optimum, as the weights of ``path`` are
    wanted = {float(weight), *(float(w) for w in path or ())}
    solved = fit.path(R, Q.T @ g, wanted | {max(wanted | {CONTINUED_FROM})})
    standard, info = solved[float(weight)]
    if not info['converged']:                       # said as the solve itself would say it
        warnings.warn(ConvergenceWarning(
            f"the physically consistent fit did not converge: {info['status']} "
            f"({info['iterations']} iterations, {info['path_iterations']} along the "
            f"continuation from prior weight {info['path_from']:g}); its result is realisable "
            'but not the best fit'), stacklevel=4)
    info['T'] = fit.T
    if path:
        info['path'] = {w: {'standard': solved[float(w)][0],
                            'converged': solved[float(w)][1]['converged'],
                            'iterations': solved[float(w)][1]['path_iterations']}
                        for w in path}
    return standard, info
