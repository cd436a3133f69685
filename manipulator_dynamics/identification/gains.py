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
Drive gains: each motor's torque per ampere, identified with the robot's base parameters.

A robot without joint torque sensors logs its motors' currents ``i``.  Through its transmissions
(:mod:`..transmissions`) they give the joint torques ``tau = C^T (g * i)``: ``g_k = R[k, k] kt_k``
is the *gain* of motor k at the joint it is named after (N m/A there), ``C``'s row k is
``c_k = R[k] / R[k, k]``; a joint without a transmission is its own motor, ``c_k = e_k``.
Nominal torque constants are often 10-30 % off.  Gautier and Briot's global identification
(Gautier & Briot, "Global identification of joint drive gains and dynamic parameters of
robots", ASME J. Dyn. Sys. Meas. Control 136, 2014) estimates the gains and the base parameters
from one linear system::

    W_B(q, qd, qdd) K_B - D(i) g = -tau_known          D(i)[s, j, k] = C[k, j] i_k(s)

Alone, runs of the robot make it homogeneous: ``(K_B, g)`` and ``(a K_B, a g)`` fit alike, and
nothing sets the scale.  A run carrying a payload of known inertial parameters does: there
``tau_known = Y_link(q, qd, qdd) phi_payload`` (the regressor columns of the link that holds
it, :func:`..model.transform_parameters` of the payload's parameters), and the gains follow in
N m/A.  Each group of runs (without, with the payload) is filtered and differentiated as
:func:`.logs.differentiate_logs` does, its parallel filter on every column and on
``tau_known``; the weighted least squares, the still speeds and the deviations widened by a
jackknife in time are :func:`.fit.fit`'s (the equations are in N m, each joint weighted by its
noise).  The identified constants go back into the transmissions (:attr:`GainEstimate.model`,
``torque_constant`` in their YAML), through which :func:`.estimate.identify` then reads the
currents as torques (``<joint>.current`` columns) with every option it has.
"""

import dataclasses
from dataclasses import dataclass, field
import os

import numpy as np

from .base_parameters import base_parameters
from .fit import Estimate
from .friction import friction_law, LAYOUTS, with_law
from .least_squares import check_excitation, correlation_inflation, weighted_least_squares
from .logs import CUTOFF_HZ, differentiate_logs, IdentificationError, read_currents, \
    read_log
from .stiction import left_out_summary, still_speeds, stuck_rows
from ..model import inertia_tensor, link_parameters, transform_parameters
from ..rigid.regressor import regressor
from ..transmissions import combined, Transmissions


#: What a gain identification without a known payload is told to add.
SCALE_MISSING = (
    'drive gains need something of known mass to fix their scale: currents alone fit the '
    'parameters and the gains times any number. Add a run with a payload of known mass on a '
    'link: identify_gains(model, runs, loaded=[runs with the payload], payload=KnownPayload('
    'link, mass, com, inertia)); command line: --payload-log LOG --payload LINK:MASS[:X,Y,Z]')


@dataclass(frozen=True)
class KnownPayload:
    """
    A payload of known inertial parameters, held by ``link`` in a run: what fixes the gains.

    ``mass`` kg, ``com`` its centre of mass in the link's frame (m), ``inertia`` about it (3 x 3
    or ``ixx ixy ixz iyy iyz izz``, kg m^2; None: a point mass).
    """

    link: str
    mass: float
    com: tuple = (0.0, 0.0, 0.0)
    inertia: object = None

    def body_parameters(self, model):
        """Return ``(body index, its 10 parameters in that body's frame)``; refuse bad values."""
        try:
            model.with_payload(self.link, self.mass, self.com, self.inertia)
            frame = model.payload_frame(self.link)
        except ValueError as e:
            raise IdentificationError(f'the known payload: {e}') from None
        inertia = np.zeros((3, 3)) if self.inertia is None else inertia_tensor(self.inertia)
        phi = link_parameters(float(self.mass), np.asarray(self.com, dtype=float), inertia)
        return frame.body, transform_parameters(frame.R, frame.p) @ phi

    def to_dict(self):
        """Return a plain mapping for YAML or JSON."""
        return {'link': self.link, 'mass': float(self.mass),
                'com': [float(x) for x in self.com],
                'inertia': None if self.inertia is None
                else inertia_tensor(self.inertia).tolist()}


@dataclass(frozen=True, eq=False)
class GainEstimate:
    """
    Identified drive gains, and the base parameters identified with them.

    Attributes
    ----------
    joints : tuple of str
        The motors, each named after its joint (the model's joint order).
    gains, std : ndarray, shape (n,)
        Each motor's gain at its joint, ``R[k, k] kt_k`` (N m/A or N/A), and its standard
        deviation (widened as the estimate's, ``estimate.processing['std']``).
    torque_constants : ndarray, shape (n,)
        ``gains / R[k, k]``: N m/A at the motor (the gain where a joint has no transmission).
    nominal : ndarray, shape (n,)
        The gains the model's torque constants gave (NaN where it had none).
    estimate : Estimate
        The base parameters identified with the gains; its ``model`` carries the identified
        torque constants in its transmissions (reads ``<joint>.current`` logs as torques).
    payload : KnownPayload
    covariance : ndarray, shape (b + n, b + n)
        Of the base parameters then the gains, widened as ``std``.

    """

    joints: tuple
    gains: np.ndarray
    std: np.ndarray
    torque_constants: np.ndarray
    nominal: np.ndarray
    estimate: Estimate
    payload: KnownPayload
    covariance: np.ndarray = field(default=None, repr=False)

    @property
    def relative_std(self):
        """Return ``100 std / |gains|`` (percent)."""
        return 100.0 * self.std / np.abs(self.gains)

    @property
    def model(self):
        """Return the model with the identified torque constants in its transmissions."""
        return self.estimate.model

    def summary(self):
        """Say the gains, their deviations and how far the nominal ones were, a line each."""
        lines = ['drive gains (torque per ampere at the joint), scale fixed by '
                 f'{self.payload.mass:g} kg on {self.payload.link}:']
        for j, g, s, k, nominal in zip(self.joints, self.gains, self.std,
                                       self.torque_constants, self.nominal):
            off = (f'; nominal {nominal:.5g}, {100.0 * (nominal / g - 1.0):+.1f} % off'
                   if nominal == nominal else '')
            lines.append(f'  {j}: {g:.5g} +- {s:.2g} ({100.0 * s / abs(g):.2g} %), torque '
                         f'constant {k:.5g} at the motor{off}')
        return '\n'.join(lines)

    def transmissions_yaml(self, path=None):
        """
        Return (and write to ``path``) the transmissions with the identified torque constants.

        ``--transmissions`` and ``load_model(..., transmissions=path)`` read it; through it
        :func:`.estimate.identify` reads ``<joint>.current`` logs as torques.
        """
        import yaml

        text = yaml.safe_dump(self.model.transmissions.to_dict(), sort_keys=False)
        if path is not None:
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
        return text

    def to_dict(self):
        """Return a plain mapping for YAML or JSON: the gains, then the estimate's."""
        return {'gains': {j: {'gain': float(g), 'std': float(s), 'torque_constant': float(k),
                              'nominal': None if nominal != nominal else float(nominal)}
                          for j, g, s, k, nominal in zip(self.joints, self.gains, self.std,
                                                         self.torque_constants, self.nominal)},
                'payload': self.payload.to_dict(),
                'transmissions': self.model.transmissions.to_dict(),
                **self.estimate.to_dict()}


def current_rows(model):
    """Return ``C (n, n)``: ``tau = C^T (g * i)`` over the model's joints (module docstring)."""
    C = np.eye(model.n)
    drives = model.transmissions
    if drives is not None:
        index = [model.joint_index(j) for j in drives.joints]
        C[np.ix_(index, index)] = drives.current_rows()
    return C


def nominal_gains(model):
    """Return the gains the model's torque constants give, ``(n,)``, NaN where none."""
    out = np.full(model.n, np.nan)
    drives = model.transmissions
    if drives is not None:
        out[[model.joint_index(j) for j in drives.joints]] = drives.gains()
    return out


def own_reductions(model):
    """Return ``R[k, k]`` of each joint's motor, in the model's order (1: no transmission)."""
    out = np.ones(model.n)
    drives = model.transmissions
    if drives is not None:
        out[[model.joint_index(j) for j in drives.joints]] = np.diag(drives.reduction)
    return out


def with_gains(model, gains):
    """Return ``model`` whose transmissions hold the torque constants of ``gains`` (n,)."""
    drives = model.transmissions
    constants = gains / own_reductions(model)
    bad = [j for j, kt in zip(model.joint_names, constants) if not kt > 0]
    if bad:
        raise IdentificationError(
            f'the identified torque constant of {", ".join(bad)} is not positive: its current '
            "turns the motor against the reduction's sign (a sign convention of the log or of "
            'the reduction), or the data do not determine it (see its deviation)')
    by_joint = dict(zip(model.joint_names, constants))
    parts = [] if drives is None else [drives.with_torque_constants(
        {j: by_joint[j] for j in drives.joints})]
    own = [j for j in model.joint_names if drives is None or j not in drives.joints]
    if own:
        parts.append(Transmissions(own, np.eye(len(own)), name='own motors',
                                   torque_constant=[by_joint[j] for j in own]))
    merged = combined(parts, unusable=None if drives is None else drives.unusable)
    return dataclasses.replace(model, transmissions=merged)


def current_logs(model, data, retime=True):
    """Read current logs: ``(list of (t, q, current), sources)``; see :func:`identify_gains`."""
    logs, sources = [], []
    for i, d in enumerate(data if isinstance(data, list) else [data]):
        source = 'arrays'
        if isinstance(d, (str, os.PathLike)):
            source = os.fspath(d)
            if not (os.path.isfile(source) and source.lower().endswith('.csv')):
                raise IdentificationError(f'{source}: drive gains read CSV logs with '
                                          '<joint>.current columns (no such CSV file)')
            d = read_currents(model, source)
        if not isinstance(d, dict) or any(k not in d for k in ('t', 'q', 'current')):
            raise IdentificationError(f'current log {i + 1} must be a CSV file or a mapping with '
                                      't, q, current (and qd, the measured velocities)')
        # the currents in the efforts' place: read, checked and re-timed as any log
        (t, q, current), _ = read_log(model, {'t': d['t'], 'q': d['q'], 'tau': d['current'],
                                              'qd': d.get('qd')}, None, retime)
        logs.append((t, q, current))
        sources.append(source)
    return logs, sources


def identify_gains(model, data, loaded=None, payload=None, *, friction='coulomb',
                   armature=None, cutoff=CUTOFF_HZ, still=None, retime=True):
    """
    Identify each motor's drive gain with the base parameters, from logged currents.

    Parameters
    ----------
    model : Model
        The robot with its transmissions (gear ratios, couplings; torque constants, if given,
        are the nominal gains reported beside the identified ones).
    data : path, mapping or list of them
        Runs without the payload: CSV logs with ``<joint>.current`` (every motor's current,
        the motor named after its joint) and positions (``<joint>.position`` or, through the
        transmissions, ``<joint>.motor_position``), or mappings with ``t, q, current`` (``qd``).
    loaded : path, mapping or list of them
        Runs with ``payload`` on: what fixes the gains' scale.  Without it, an error says so.
    payload : KnownPayload
        The payload of those runs.
    friction, armature, still, retime
        As :func:`.estimate.identify` takes them (friction ``'none'``, ``'coulomb'`` or
        ``'offset'``); ``still='auto'`` reads the speeds from the runs without the payload.
    cutoff : float
        The filter's cutoff in Hz (default :data:`.logs.CUTOFF_HZ`).

    Returns
    -------
    GainEstimate

    Raises
    ------
    IdentificationError
        Nothing that fixes the scale (:data:`SCALE_MISSING`), bad data, a motion that does not
        excite every parameter and gain (named), a gain that comes out with the wrong sign.

    """
    law = friction_law(friction)
    if law == 'smooth':
        raise IdentificationError("drive gains take friction 'none', 'coulomb' or 'offset' "
                                  "(the smooth law's Coulomb velocities are fitted apart: "
                                  'identify the gains first, then identify(friction=smooth) '
                                  'reads the currents through them)')
    if payload is None or not loaded:
        raise IdentificationError(SCALE_MISSING)
    if not isinstance(payload, KnownPayload):
        raise IdentificationError(f'payload must be a KnownPayload(link, mass, com, inertia), '
                                  f'got {type(payload).__name__}')
    model = with_law(model, law)
    body, phi = payload.body_parameters(model)
    base = base_parameters(model, friction=LAYOUTS[law], armature=armature)
    C = current_rows(model)
    b, n = base.count, model.n
    systems, processing, speeds, report = [], {}, None, None
    for group, runs in (('without payload', data), ('with payload', loaded)):
        logs, sources = current_logs(model, runs, retime)
        q, qd, qdd, current, parallel, more = differentiate_logs(model, logs, cutoff=cutoff)
        if speeds is None:
            speeds, report = still_speeds(model, still, parallel, cutoff)
        Y = regressor(model, q, qd, qdd, armature=base.armature, friction=base.friction)
        A = np.concatenate([base.base_regressor(Y),
                            -np.einsum('sk,kj->sjk', current, C)], axis=2)
        known = np.zeros((len(q), n))
        if group == 'with payload':
            rigid = regressor(model, q, qd, qdd, armature=False, friction=False)
            known = rigid[..., 10 * body:10 * body + 10] @ phi
        A, rhs = parallel(A), -parallel(known)
        left = stuck_rows(model, qd, speeds, parallel, cutoff)
        systems.append((A * ~left[..., None], rhs * ~left, left))
        processing[group] = dict(more, source=sources)
        processing.setdefault('stamps', []).extend(more['stamps'])
    A = np.concatenate([s[0] for s in systems])
    rhs = np.concatenate([s[1] for s in systems])
    left = np.concatenate([s[2] for s in systems])
    names = [*base.names, *(f'g_{j}' for j in model.joint_names)]
    N = len(rhs)
    if N * n < 2 * (b + n):
        raise IdentificationError(f'{N} states give {N * n} equations for {b} base parameters '
                                  f'and {n} gains: record longer runs')
    flat = A.reshape(N * n, b + n)
    norms = np.linalg.norm(flat, axis=0)
    check_excitation(names, flat, norms)
    x, cov, sigma, G, g = weighted_least_squares(A, rhs, kept=~left)
    inflation, processing['std'] = correlation_inflation(G, g, N)
    cov = inflation ** 2 * cov
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    processing['still'] = left_out_summary(report, model.joint_names, left)
    processing.update(cutoff_hz=float(cutoff), friction=law, payload=payload.to_dict())
    gains = x[b:]
    residual = rhs - A @ x
    counted = np.maximum((~left).sum(axis=0), 1)
    with np.errstate(divide='ignore', invalid='ignore'):
        relative = np.where(np.abs(x[:b]) > 0, 100.0 * std[:b] / np.abs(x[:b]), np.inf)
    identified = with_gains(model, gains)
    estimate = Estimate(base=base, values=x[:b], std=std[:b], relative_std=relative,
                        condition=float(np.linalg.cond(flat / norms)), sigma=sigma,
                        residual_rms=np.sqrt((residual ** 2).sum(axis=0) / counted), samples=N,
                        processing=processing, model=identified, covariance=cov[:b, :b])
    return GainEstimate(joints=model.joint_names, gains=gains, std=std[b:],
                        torque_constants=gains / own_reductions(model),
                        nominal=nominal_gains(model),
                        estimate=estimate, payload=payload, covariance=cov)
