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
Identification with what the data choose: ``identify``, ``select_friction``, ``cross_validate``.

:func:`identify` resolves the cutoff (:mod:`.selection`) and fits (:mod:`.fit`, whose module
says the method), its equations made once, of one :class:`.settings.Settings`;
:func:`select_friction` keeps the friction law whose fits best predict held-out folds of the
training data; :func:`cross_validate` holds out pieces in time, each fold choosing what it
chooses on its own training pieces.  The layers go one way: these call :mod:`.selection`,
which calls :mod:`.fit`, which chooses nothing.
"""

import dataclasses
from dataclasses import dataclass
import warnings

from .filtering import CUTOFF_HZ
from .fit import fitted, solve, validated
from .friction import friction_law
from .least_squares import PRIOR_THRESHOLDS
from .selection import base_columns, choose_prior_threshold, choose_prior_weight, \
    folds_in_time, resolve_cutoff
from .settings import Settings
from .validation import compared, ExtrapolationWarning, pooled, Validation
from .._parallel import blas_on_one_thread
from ..errors import IdentificationError
from ..recordings.log import read_recording, read_time_series


@blas_on_one_thread
def identify(model, data, *, friction=True, armature=None, base=None, cutoff=None,
             topic='/joint_states', physically_consistent=False, prior_weight=1.0,
             validation=None, retime=True, compare=None, still=None, prior_threshold=None):
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
        :mod:`..recordings.formats`), or a :class:`..recordings.log.Log` of one;
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
        the same, but data too short to judge any candidate get
        :data:`.filtering.CUTOFF_HZ` and the reason (``cutoff_selection['fallback']``) where
        ``'auto'`` is an error.
    topic : str
        The JointState topic in a rosbag2 recording.
    physically_consistent : bool
        Also find ``estimate.standard``: standard parameters every link of which is physically
        realisable, fitting the same weighted equations, with the URDF's values as the prior
        for what the data do not determine (:mod:`.consistent`).
    prior_weight : float, 'auto' or None
        Weight of that prior, in units of one equation's noise per unit of its (dimensionless)
        deviation; ``'auto'``: the one whose consistent sets best predict held-out pieces of
        ``data`` (:func:`choose_prior_weight`, ``processing['prior_weight_selection']`` says
        the errors and which set the held-out data say to trust); None: the same, but data
        that cannot be cut into folds (arrays, too short a log) get 1 and the reason.
    validation : data, optional
        Data not used for the fit (as ``data``: other logs, or another stretch): the estimate's
        ``validation`` then compares the URDF's, the identified and the consistent models'
        torques with them (:meth:`Estimate.validate`).
    compare : mapping of str to Model, optional
        Other models the validation judges beside those, by label: a published parameter set
        or an earlier identification (``load_model(urdf, parameters=YAML)``).
    retime : bool
        Put a time series that has the robot's measured velocities on the robot's clock where
        they allow it (:func:`..recordings.timing.retime`; ``processing['timing']``); False:
        the stamps as logged.
    still : float, 'auto' or None
        Leave out each joint's equations where it, or a motor that turns it, is slower than
        this speed (rad/s or m/s): at rest and at reversals its dry friction is anything up to
        ``Fc``, not ``Fc s(qd)`` (:mod:`.stiction`); ``'auto'``: per joint and motor, from the
        data's noise at the cutoff; None (default): every equation.  Validation leaves out the
        same with the same speeds.  ``processing['still']`` reports them.
    prior_threshold : float, 'auto' or None
        Directions of the base parameters whose singular value (of the weighted regressor, its
        columns scaled by the parameters' prior scales: the data know a direction to ``1 / s``
        of that scale) is at or below it keep the prior's values, the model's (the URDF's, or
        its ``parameters``): where the motion does not reach, the estimate stays what it was
        (:func:`.least_squares.at_the_prior`); 0: least squares.
        ``'auto'``: chosen among :data:`.least_squares.PRIOR_THRESHOLDS` by held-out pieces of
        ``data`` (:func:`choose_prior_threshold`) where some direction is that weak, least
        squares otherwise; None (default): the same, but data that cannot be cut into folds get
        least squares and the reason.  ``processing['prior']`` says the directions kept.

    Returns
    -------
    Estimate

    Raises
    ------
    IdentificationError
        With what is wrong and what to do.

    """
    law = friction_law(friction)
    compared(model, compare)                          # refused before any work, not after it
    weighing = physically_consistent and (prior_weight is None or isinstance(prior_weight, str))
    if weighing and prior_weight not in (None, 'auto'):
        raise IdentificationError(f"prior_weight must be a positive number, 'auto' or None, "
                                  f'got {prior_weight!r}')
    choosing = prior_threshold is None or prior_threshold == 'auto'
    if isinstance(prior_threshold, str) and not choosing:
        raise IdentificationError(f"prior_threshold must be a number >= 0, 'auto' or None, "
                                  f'got {prior_threshold!r}')
    if base is None and law != 'smooth':            # once: every fit below has the same columns
        base = base_columns(model, law, armature)
    # read and put on the robot's clock once: the choices and the fit below read it as it is
    data = read_recording(model, data, topic, retime)
    settings = Settings(friction=friction, armature=armature, base=base, topic=topic,
                        retime=retime, still=still)
    # the cutoff's candidates are judged on every equation, as least squares fits them
    cutoff, chosen = resolve_cutoff(model, data, cutoff, settings.replace(still=None))
    settings = settings.replace(cutoff=cutoff)
    weighed = None
    if weighing:
        prior_weight, weighed = _chosen(
            lambda: choose_prior_weight(model, data, settings, folds=SELECTION_FOLDS),
            prior_weight, 1.0, '1, the default')
    # the equations made once, solved at least squares and again where the folds choose a
    # threshold: only what is solved of them depends on it
    found = fitted(model, data, settings, chosen)
    solving = {'physically_consistent': physically_consistent, 'prior_weight': prior_weight}
    estimate = solve(found, prior_threshold=0.0 if choosing else prior_threshold, **solving)
    if choosing and estimate.processing['prior']['smallest'] <= max(PRIOR_THRESHOLDS):
        # some direction is weak: the folds say
        threshold, thresholded = _chosen(
            lambda: choose_prior_threshold(model, data, settings, folds=SELECTION_FOLDS),
            prior_threshold, 0.0, '0 (least squares), the default')
        if threshold > 0:
            estimate = solve(found, prior_threshold=threshold, **solving)
        estimate.processing['prior_threshold_selection'] = thresholded
    if weighed is not None:
        estimate.processing['prior_weight_selection'] = weighed
    return validated(estimate, validation, topic, compare)


def _chosen(choose, asked, default, said):
    """
    Return ``choose()``, a value and its report; where the folds cannot judge, the default.

    ``asked``: the argument given, ``'auto'`` (then its failure is the caller's error) or None
    (then ``(default, {'fallback': said and why})``).
    """
    try:
        return choose()
    except IdentificationError as e:
        if asked == 'auto':
            raise
        return default, {'fallback': f'{said}: {e}'}


#: Folds of the training data that choose a friction law when validation data are given.
SELECTION_FOLDS = 3


@blas_on_one_thread
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
    chosen (``cutoff='auto'`` or None), is chosen on ``data`` too; the laws are compared as
    least squares fits them unless ``prior_threshold`` is a number, and the chosen law's
    estimate keeps the prior where :func:`identify` says.  ``options`` go to
    :func:`identify`.
    """
    if validation is None and folds is None:
        raise IdentificationError('select_friction needs validation data or folds: the laws '
                                  'are compared on data the fits did not see')
    folds = SELECTION_FOLDS if folds is None else folds
    laws = [friction_law(law) for law in laws]
    topic = options.get('topic', '/joint_states')
    data = read_recording(model, data, topic, options.get('retime', True))     # once for all
    # each law's columns once, for its every fold and its fit (a base given: every law's)
    given = options.pop('base', None)
    bases = {law: given if given is not None or law == 'smooth' else
             base_columns(model, law, options.get('armature')) for law in laws}
    # once, with the first law, on the training data, not again for every law and fold
    options['cutoff'], cutoff_selection = resolve_cutoff(
        model, data, options.get('cutoff'), friction=laws[0], armature=options.get('armature'),
        topic=topic, retime=options.get('retime', True), base=bases[laws[0]])
    logs = read_time_series(model, data, topic, 'choosing the friction law (by folds of the '
                            'training data)', options.get('retime', True))
    # the laws compared as least squares fit them (a threshold given is kept): what the prior
    # keeps is chosen once, for the law chosen, not again in every law's every fold
    threshold = options.get('prior_threshold')
    compared_as = dict(options, prior_threshold=0.0 if threshold in (None, 'auto') else threshold)
    checks = {law: cross_validate(model, logs, folds=folds, friction=law, base=bases[law],
                                  **compared_as) for law in laws}
    errors = {law: c.pooled.error['identified'] for law, c in checks.items()}
    best = min(errors, key=errors.get)
    if validation is not None:
        chosen = identify(model, data, friction=best, base=bases[best], validation=validation,
                          **options)
        how = (f'{folds}-fold cross-validation in time of the training data; the validation '
               'data scored the chosen law only')
    else:
        chosen = dataclasses.replace(identify(model, data, friction=best, base=bases[best],
                                              **options),
                                     validation=checks[best].pooled)
        how = f'{folds}-fold cross-validation in time'
    processing = {**chosen.processing, 'friction_selection': errors,
                  'friction_selection_by': how}
    if cutoff_selection is not None:
        processing['cutoff_selection'] = cutoff_selection
    return dataclasses.replace(chosen, processing=processing)


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


@blas_on_one_thread
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
    splits = folds_in_time(model, data, folds, topic, options.get('retime', True),
                           'cross-validation in time')
    laws = list(friction) if isinstance(friction, (list, tuple)) else None
    choosing = laws is not None and len(laws) > 1
    if not choosing:
        friction = laws[0] if laws else friction
        if options.get('base') is None and friction_law(friction) != 'smooth':
            # once: every fold's fit and choices have the same columns
            options['base'] = base_columns(model, friction_law(friction),
                                           options.get('armature'))
    estimates = []
    # the folds' pieces are the same Pieces (folds_in_time): what their choices make of the
    # pieces they share is made once, and kept on the pieces, which go with the splits
    for train, held in splits:
        # a piece held out of a motion often goes where the others did not: each fold's
        # validation keeps it (beyond_training), the warnings are for data a user holds out
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', ExtrapolationWarning)
            if choosing:
                estimates.append(select_friction(model, train, held, laws=laws, topic=topic,
                                                 **options))
            else:
                estimates.append(identify(model, train, topic=topic, validation=held,
                                          friction=friction, **options))
    return CrossValidation(estimates=estimates, pooled=pooled([e.validation
                                                               for e in estimates]))
