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
nothing sets the scale.  A load of known mass in some runs, or what is known of the robot's own
links, sets it (:mod:`.known`, which also checks, before any log is read, that it reaches every
gain); the fit then runs on ``K = K_p + Z z``, ``Z`` the null space of the known values'
constraints, and the covariance maps back through ``Z``.

Each group of runs (without, with the payload) is filtered and differentiated as
:func:`.logs.differentiate_logs` does, its parallel filter on every column and on
``tau_known``; the still speeds and the deviations widened by a jackknife in time are
:func:`.fit.fit`'s.  The fit starts from weighted least squares and ends with the noise where
it is, in the currents (:func:`noise_in_currents`): least squares shrinks a block of gains
that a weak equation ties to the known mass (its noise shrinks with it).  The identified
constants go back into the transmissions (:attr:`GainEstimate.model`, ``torque_constant`` in
their YAML), through which :func:`.estimate.identify` then reads the currents as torques
(``<joint>.current`` columns) with every option it has.
"""

import dataclasses
from dataclasses import dataclass, field
import os

import numpy as np

from .base_parameters import base_parameters, link_columns
from .filtering import CUTOFF_HZ
from .fit import Estimate
from .friction import base_rows, friction_law, LAYOUTS, row_period, with_law
from .known import free_scales, mountings_of, scale_constraints, SCALE_MISSING, \
    scale_summary, suspects
from .least_squares import check_excitation, correlation_inflation, relative_std, \
    residual_rms, weighted_least_squares
from .logs import differentiate_logs
from .stiction import left_out_summary, still_speeds, stuck_rows
from .._parallel import blas_on_one_thread
from ..errors import IdentificationError
from ..recordings.formats import read_currents
from ..recordings.log import read_series
from ..rigid.regressor import regressor
from ..transmissions import combined, Transmissions


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
    payloads : tuple of KnownPayload
        What was known of the load of each mounting in the loaded runs.
    loads : tuple of PayloadEstimate
        Each mounting's load as identified with the gains: its known mass, its centre of mass
        and inertia with their deviations (NaN where the runs cannot determine them).
    known : tuple of KnownLink and KnownParameter
        What was known of the robot that fixed the scale (with or beside the payload).
    covariance : ndarray, shape (b + n, b + n)
        Of the base parameters then the gains, widened as ``std``.

    """

    joints: tuple
    gains: np.ndarray
    std: np.ndarray
    torque_constants: np.ndarray
    nominal: np.ndarray
    estimate: Estimate
    payloads: tuple = ()
    loads: tuple = ()
    covariance: np.ndarray = field(default=None, repr=False)
    known: tuple = ()

    @property
    def fixed_by(self):
        """Say what fixed the scale: ``'2 kg on wrist_3_link in a run'``, the known links."""
        return scale_summary(self.payloads, self.known)

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
        lines = [f'drive gains (torque per ampere at the joint), scale fixed by {self.fixed_by}:']
        for j, g, s, k, nominal in zip(self.joints, self.gains, self.std,
                                       self.torque_constants, self.nominal):
            off = (f'; nominal {nominal:.5g}, {100.0 * (nominal / g - 1.0):+.1f} % off'
                   if nominal == nominal else '')
            lines.append(f'  {j}: {g:.5g} +- {s:.2g} ({100.0 * s / abs(g):.2g} %), torque '
                         f'constant {k:.5g} at the motor{off}')
        for i, load in enumerate(self.loads):
            lines.append((f'mounting {i + 1}: ' if len(self.loads) > 1 else '')
                         + load.summary())
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
                'payloads': [p.to_dict() for p in self.payloads],
                'loads': [load.to_dict() for load in self.loads],
                'known': [k.to_dict() for k in self.known],
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


def with_gains(model, gains, suspects=()):
    """
    Return ``model`` whose transmissions hold the torque constants of ``gains`` (n,).

    ``suspects``: what else was taken as known (a load's centre of mass, one mounting for
    several runs), said in the error where a constant comes out negative.
    """
    drives = model.transmissions
    constants = gains / own_reductions(model)
    bad = [j for j, kt in zip(model.joint_names, constants) if not kt > 0]
    if bad:
        also = ''.join(f', or {s}' for s in suspects)
        raise IdentificationError(
            f'the identified torque constant of {", ".join(bad)} is not positive: its current '
            "turns the motor against the reduction's sign (a sign convention of the log or of "
            f'the reduction), or the data do not determine it (see its deviation){also}')
    by_joint = dict(zip(model.joint_names, constants))
    parts = [] if drives is None else [drives.with_torque_constants(
        {j: by_joint[j] for j in drives.joints})]
    own = [j for j in model.joint_names if drives is None or j not in drives.joints]
    if own:
        parts.append(Transmissions(own, np.eye(len(own)), name='own motors',
                                   torque_constant=[by_joint[j] for j in own]))
    merged = combined(parts, unusable=None if drives is None else drives.unusable)
    return dataclasses.replace(model, transmissions=merged)


def noise_in_currents(A, rhs, kept, C, b, Z, x_p, z, sigma, passes=5):
    """
    Refit ``A (x_p + Z z) = rhs`` with the noise where it is: in the currents.

    Least squares weights each joint's equations by one number, but the currents' noise sits in
    ``D(i) g``: a block of gains and parameters that only a weak equation ties to the known
    mass gives less residual noise the smaller it is, and the fit shrinks it (a lift's arm
    came out at 0.43 of its scale, 13 deviations off).  Here joint j's equations are divided by
    the noise the gains put in them, ``s_j(g)^2 = sum_k C[k, j]^2 g_k^2 e_k^2`` (``e_k`` motor
    k's current noise, from the residuals, settled over ``passes``): the objective is
    indifferent to any block's scale, and only what fixes it does.  Gauss-Newton
    (Levenberg-Marquardt) from the least squares ``z``, weights ``sigma`` (N m per joint).

    Returns ``z, cov, sigma, G, g`` as :func:`.least_squares.weighted_least_squares` does
    (``G z = g`` the weighted system linearised at the solution); raises if it does not
    converge.  The unknowns are ``b`` base parameters, then the ``n = C.shape[0]`` gains, then
    any others (the loads' unknown parameters).
    """
    from scipy.optimize import least_squares

    n, m = A.shape[1], Z.shape[1]
    gains = slice(b, b + n)
    AZ, r0 = A @ Z, rhs - A @ x_p
    dof = np.maximum(kept.sum(axis=0) - m / n, 1.0)
    C2 = C ** 2

    def noise(z, e):
        g = (x_p + Z @ z)[gains]
        s = np.sqrt((C2 * ((g * e) ** 2)[:, None]).sum(axis=0))
        return g, np.where(s > 0, s, 1e-300)

    def residual(z, e):
        return ((AZ @ z - r0) / noise(z, e)[1]).reshape(-1)

    def jacobian(z, e):
        g, s = noise(z, e)
        r = (AZ @ z - r0) / s
        ds = (C2 * (g * e ** 2)[:, None]).T @ Z[gains] / s[:, None]         # (n, m)
        return (AZ / s[:, None] - r[..., None] * (ds / s[:, None])[None]).reshape(-1, m)

    g0 = (x_p + Z @ z)[gains]
    e = sigma / np.where(np.abs(g0) > 0, np.abs(g0), 1.0)
    for _ in range(passes):
        found = least_squares(residual, z, jacobian, args=(e,), method='lm', x_scale='jac',
                              xtol=1e-12, ftol=1e-12, max_nfev=200)
        if found.status <= 0:
            raise IdentificationError(f'the gains did not converge with the current noise in '
                                      f'the model ({found.message}): the data may not fix '
                                      "their scale (see the gains' deviations by least squares)")
        z = found.x
        x = x_p + Z @ z
        sigma = np.sqrt(((A @ x - rhs) ** 2).sum(axis=0) / dof)
        new = sigma / np.maximum(np.abs(x[gains]), 1e-300)
        settled = np.max(np.abs(new / e - 1.0)) < 1e-3
        e = new
        if settled:
            break
    G = jacobian(z, e)
    weighted = residual(z, e)
    s2 = float(weighted @ weighted) / max(int(kept.sum()) - m, 1)
    return z, s2 * np.linalg.inv(G.T @ G), sigma, G, G @ z - weighted


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
        (t, q, current), _ = read_series(model, {'t': d['t'], 'q': d['q'], 'tau': d['current'],
                                                 'qd': d.get('qd')}, None, retime)
        logs.append((t, q, current))
        sources.append(source)
    return logs, sources


@blas_on_one_thread
def identify_gains(model, data, loaded=None, payload=None, *, known=(), friction='coulomb',
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
        Runs carrying a load of known mass: what fixes the gains' scale, or helps ``known``
        fix it.  With one ``payload``, one mounting (the runs share the load's centre of mass
        and inertia); with a list of payloads, a list as long: item i the run or runs of
        mounting i, each with unknowns of its own (the load remounted, or another load).
    payload : KnownPayload or list of them
        The load of each mounting: its mass, and its centre of mass and inertia where known
        (what is not given is identified with the gains and reported in
        :attr:`GainEstimate.loads`).
    known : sequence of KnownLink and KnownParameter
        Known masses (centres of mass, inertias) of the robot's own links, and standard
        parameters known by name (a rotor inertia from its datasheet): they fix the scale
        where they determine a combination of base parameters (module docstring), with or
        without a payload run.  With neither, an error says what to add.
    friction, armature, still, retime
        As :func:`.estimate.identify` takes them (friction ``'none'``, ``'coulomb'`` or
        ``'offset'``); ``still='auto'`` reads the speeds from the runs without the payload.
    cutoff : float
        The filter's cutoff in Hz (default :data:`.filtering.CUTOFF_HZ`).

    Returns
    -------
    GainEstimate

    Raises
    ------
    IdentificationError
        Nothing that fixes the scale (:data:`SCALE_MISSING`; known links that determine no
        base parameter, naming the equations they are grouped in), bad data, a motion that
        does not excite every parameter and gain (named), a gain with the wrong sign.

    """
    law = friction_law(friction)
    if law == 'smooth':
        raise IdentificationError("drive gains take friction 'none', 'coulomb' or 'offset' "
                                  "(the smooth law's Coulomb velocities are fitted apart: "
                                  'identify the gains first, then identify(friction=smooth) '
                                  'reads the currents through them)')
    known = tuple(known or ())
    if not loaded and not known:
        raise IdentificationError(SCALE_MISSING)
    model = with_law(model, law)
    base = base_parameters(model, friction=LAYOUTS[law], armature=armature)
    mountings = mountings_of(model, base, loaded, payload)   # a payload without runs: unused
    b, n = base.count, model.n
    extra = [m.basis.shape[1] for m in mountings]
    width = b + n + sum(extra)
    if known:
        C_known, d_known = scale_constraints(base, model, known)
        constraints = np.hstack([C_known, np.zeros((len(d_known), width - b))])
    else:
        constraints, d_known = np.zeros((0, width)), np.zeros(0)
    payloads = tuple(m.payload for m in mountings)
    if not known and not any(m.mass_fixes_scale(base, model) for m in mountings):
        raise IdentificationError(
            f"the load's mass ({scale_summary(payloads, known)}) cannot fix the gains' scale: "
            'it moves only base parameters that its unknown centre of mass and inertia move '
            'too. Give its centre of mass (--payload LINK:MASS:X,Y,Z), or carry it on a link '
            'more joints move')
    C = current_rows(model)
    free = free_scales(model, base, C, constraints[:, :b + n], mountings)
    if free:
        raise IdentificationError(
            f'the gains of {", ".join(free)} keep a scale of their own: what fixes the scale '
            f'({scale_summary(payloads, known)}) reaches them through no base '
            'parameter they share, and any multiple of their gains and parameters fits alike. '
            'Add a run with a known payload on a link they move (--payload-log LOG --payload '
            'LINK:MASS[:X,Y,Z]), or what is known of a link they carry (its centre of mass: '
            '--known-link LINK:MASS:X,Y,Z)')
    systems, processing, speeds, report = [], {}, None, None
    groups = [('without payload', data, None)] + [
        (f'with payload {i + 1}' if len(mountings) > 1 else 'with payload', m.runs, i)
        for i, m in enumerate(mountings)]
    for group, runs, load in groups:
        logs, sources = current_logs(model, runs, retime)
        q, qd, qdd, current, parallel, more = differentiate_logs(model, logs, cutoff=cutoff)
        if speeds is None:
            speeds, report = still_speeds(model, still, parallel, cutoff)
        Y = regressor(model, q, qd, qdd, armature=base.armature, friction=base.friction)
        A = np.zeros((len(q), n, width))
        A[..., :b] = base_rows(model, base, q, qd, qdd, row_period(parallel), Y)
        A[..., b:b + n] = -np.einsum('sk,kj->sjk', current, C)
        tau_known = np.zeros((len(q), n))
        if load is not None:
            m = mountings[load]
            Y_body = Y[..., link_columns(base, model, m.body)]
            tau_known = Y_body @ m.known
            start = b + n + sum(extra[:load])
            A[..., start:start + extra[load]] = Y_body @ m.columns(model)
        A, rhs = parallel(A), -parallel(tau_known)
        left = stuck_rows(model, qd, speeds, parallel, cutoff)
        systems.append((A * ~left[..., None], rhs * ~left, left))
        processing[group] = dict(more, source=sources)
        processing.setdefault('stamps', []).extend(more['stamps'])
    A = np.concatenate([s[0] for s in systems])
    rhs = np.concatenate([s[1] for s in systems])
    left = np.concatenate([s[2] for s in systems])
    names = [*base.names, *(f'g_{j}' for j in model.joint_names),
             *(name for m in mountings for name in m.names)]
    N = len(rhs)
    if N * n < 2 * width:
        raise IdentificationError(f'{N} states give {N * n} equations for {b} base parameters, '
                                  f'{n} gains and {sum(extra)} unknowns of the loads: record '
                                  'longer runs')
    flat = A.reshape(N * n, width)
    norms = np.linalg.norm(flat, axis=0)
    # the known links' rows, each as large as the largest column: the scale they fix counts
    rows = constraints / np.linalg.norm(constraints, axis=1, keepdims=True) * norms.max()
    checked = np.vstack([flat, rows])
    check_excitation(names, checked, np.linalg.norm(checked, axis=0))
    # the fit on x = x_p + Z z, the constraints' null space (Z = 1 without known links)
    x_p = np.linalg.lstsq(constraints, d_known, rcond=None)[0] if len(d_known) \
        else np.zeros(width)
    Z = np.linalg.svd(constraints)[2][len(d_known):].T if len(d_known) else np.eye(width)
    z, cov, sigma, G, g = weighted_least_squares(A @ Z, rhs - A @ x_p, kept=~left)[:5]
    z, cov, sigma, G, g = noise_in_currents(A, rhs, ~left, C, b, Z, x_p, z, sigma)
    inflation, processing['std'] = correlation_inflation(G, g, N)
    x, cov = x_p + Z @ z, Z @ (inflation ** 2 * cov) @ Z.T
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    processing['still'] = left_out_summary(report, model.joint_names, left)
    processing.update(cutoff_hz=float(cutoff), friction=law,
                      payloads=[p.to_dict() for p in payloads],
                      known=[k.to_dict() for k in known],
                      scale_fixed_by=scale_summary(payloads, known))
    gains = x[b:b + n]
    residual = rhs - A @ x
    identified = with_gains(model, gains, suspects(mountings))
    reduced = flat @ Z
    estimate = Estimate(base=base, values=x[:b], std=std[:b],
                        relative_std=relative_std(x[:b], std[:b]),
                        condition=float(np.linalg.cond(reduced / np.linalg.norm(reduced,
                                                                                axis=0))),
                        sigma=sigma,
                        residual_rms=residual_rms(residual, left), samples=N,
                        processing=processing, model=identified, covariance=cov[:b, :b])
    loads, edges = [], np.cumsum([0] + [len(system[1]) for system in systems])
    for i, m in enumerate(mountings):               # system i + 1 holds mounting i's runs
        part = slice(b + n + sum(extra[:i]), b + n + sum(extra[:i + 1]))
        rows = slice(edges[i + 1], edges[i + 2])
        rms = residual_rms(residual[rows], left[rows])
        loads.append(m.estimate(x[part], cov[part, part], rms, int(rows.stop - rows.start)))
    return GainEstimate(joints=model.joint_names, gains=gains, std=std[b:b + n],
                        torque_constants=gains / own_reductions(model),
                        nominal=nominal_gains(model), estimate=estimate, payloads=payloads,
                        loads=tuple(loads), covariance=cov[:b + n, :b + n], known=known)
