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
nothing sets the scale.  Two things of known mass set it, alone or together:

- A run carrying a payload of known inertial parameters: there ``tau_known = Y_link(q, qd,
  qdd) phi_payload`` (the regressor columns of the link that holds it,
  :func:`..model.transform_parameters` of the payload's parameters), and the gains follow in
  N m/A.
- Known inertial parameters of the robot's own links (:class:`KnownLink`: a mass, and its
  centre of mass and inertia if known).  A value fixes the scale only through a combination
  of base parameters it alone determines: ``u^T K_B = u^T P_S phi_S`` for every ``u`` with
  ``u^T P`` zero outside the known entries ``S`` (``K_B = P K``, :func:`scale_constraints`).
  The masses a prismatic joint carries are such a combination; a revolute arm's link mass
  alone is not (it is regrouped with unknown first moments), and the error names the
  grouping equations it is caught in.  The fit then runs on ``K = K_p + Z z``, ``Z`` the null
  space of the constraints, and the covariance maps back through ``Z``.

What is known may still leave some gains free: a SCARA's quill mass fixes its lift's gain,
but what the quill adds to the arms' torques is regrouped into the arms' own parameters, and
their gains keep a scale of their own.  :func:`free_scales` finds such blocks on noise-free
equations before any log is read, and the error names the motors.  A lift under a pitching arm
ties them all: the arm's first moments move the lift's load as well as their own joints'.

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

from .base_parameters import base_parameters, random_states
from .fit import Estimate
from .friction import friction_law, LAYOUTS, with_law
from .least_squares import check_excitation, correlation_inflation, weighted_least_squares
from .logs import CUTOFF_HZ, differentiate_logs, IdentificationError, read_currents, \
    read_log
from .stiction import left_out_summary, still_speeds, stuck_rows
from ..inertia import tensor_fault
from ..model import inertia_tensor, link_parameters, PARAMETER_NAMES, transform_parameters
from ..rigid.regressor import regressor
from ..transmissions import combined, Transmissions


#: What a gain identification without a known payload is told to add.
SCALE_MISSING = (
    'drive gains need something of known mass to fix their scale: currents alone fit the '
    'parameters and the gains times any number. Add a run with a payload of known mass on a '
    'link: identify_gains(model, runs, loaded=[runs with the payload], payload=KnownPayload('
    'link, mass, com, inertia)); command line: --payload-log LOG --payload LINK:MASS[:X,Y,Z]; '
    'or the known mass of links a prismatic joint carries: known=[KnownLink(link, mass)], '
    '--known-link LINK:MASS (with a rotor inertia, KnownParameter(name, value), '
    '--known-parameter Ia_<joint>=VALUE, where the axis is horizontal)')
#: Relative size below which a singular value of the grouping matrix, or a known combination's
#: value, counts as zero (the grouping coefficients are exact to about 1e-12).
ZERO = 1e-9


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


@dataclass(frozen=True)
class KnownLink:
    """
    What is known of one of the robot's own links: its mass, and its centre of mass and inertia.

    ``link`` is a link a joint moves, with what is fixed to it (the model's body: the mass is
    the sum).  ``mass`` kg; ``com`` its centre of mass in the link's frame (m), or None if
    unknown; ``inertia`` about it (3 x 3 or ``ixx ixy ixz iyy iyz izz``, kg m^2), or None if
    unknown (it needs ``com``).  What is not given is identified.
    """

    link: str
    mass: float
    com: tuple = None
    inertia: object = None

    def known(self, model):
        """Return ``(standard parameter names, their values)`` this knowledge fixes."""
        if self.link not in model.link_names:
            frame = model.frames.get(self.link)
            if frame is None:
                raise IdentificationError(
                    f"the known link: '{self.link}' is not a link of model '{model.name}' "
                    f'(links a joint moves: {", ".join(model.link_names)})')
            if frame.body < 0:
                raise IdentificationError(f"the known link: '{self.link}' is fixed to the base: "
                                          'its mass loads no joint')
            raise IdentificationError(
                f"the known link: '{self.link}' is fixed to "
                f"'{model.link_names[frame.body]}': give that link's mass, with what is fixed "
                'to it (the model knows them as one body)')
        mass = float(self.mass)
        if not (np.isfinite(mass) and mass > 0):
            raise IdentificationError(f"the known link '{self.link}': mass must be finite and "
                                      f'> 0, got {self.mass}')
        if self.inertia is not None and self.com is None:
            raise IdentificationError(f"the known link '{self.link}': an inertia about the "
                                      'centre of mass needs the centre of mass (com)')
        com = np.zeros(3) if self.com is None else np.asarray(self.com, dtype=float)
        inertia = np.zeros((3, 3)) if self.inertia is None else inertia_tensor(self.inertia)
        if com.shape != (3,) or not np.all(np.isfinite(com)) or not np.all(np.isfinite(inertia)):
            raise IdentificationError(f"the known link '{self.link}': com must be 3 finite "
                                      'numbers and inertia finite')
        fault = tensor_fault(inertia) if self.inertia is not None else None
        if fault:
            raise IdentificationError(f"the known link '{self.link}': inertia {fault}")
        phi = link_parameters(mass, com, inertia)
        given = [9] + ([6, 7, 8] if self.com is not None else []) + (
            list(range(6)) if self.inertia is not None else [])
        return ([f'{PARAMETER_NAMES[k]}_{self.link}' for k in given], phi[given])

    def describe(self):
        """Say what is known, for the summaries."""
        what = 'mass' if self.com is None else 'inertials'
        return f'the known {what} of {self.link} ({self.mass:g} kg)'

    def to_dict(self):
        """Return a plain mapping for YAML or JSON (None: not known)."""
        return {'link': self.link, 'mass': float(self.mass),
                'com': None if self.com is None else [float(x) for x in self.com],
                'inertia': None if self.inertia is None
                else inertia_tensor(self.inertia).tolist()}


@dataclass(frozen=True)
class KnownParameter:
    """
    One standard parameter known by its name, in SI units.

    A rotor inertia from the motor's datasheet (``Ia_<joint>``, at the joint), a link's mass
    (``M_<link>``): any name of :func:`~manipulator_dynamics.rigid.regressor.parameter_names`
    the fit has.

    On a horizontal axis a rotor inertia is what the carried masses are regrouped with:
    ``M_carriage_R = M_carriage + Ia_rail + ...`` (no gravity tells them apart).
    """

    name: str
    value: float

    def known(self, model):
        """Return ``([name], [value])``; refuse a value that is not a finite number."""
        try:
            value = float(self.value)
        except (TypeError, ValueError):
            value = float('nan')
        if not np.isfinite(value):
            raise IdentificationError(f'the known {self.name}: its value must be a finite '
                                      f'number, got {self.value!r}')
        return [self.name], [value]

    def describe(self):
        """Say what is known, for the summaries."""
        return f'{self.name} = {self.value:g}'

    def to_dict(self):
        """Return a plain mapping for YAML or JSON."""
        return {'parameter': self.name, 'value': float(self.value)}


def grouping_matrix(base):
    """Return ``P (b, p)``: ``K_B = P K`` over ``base.standard_names``."""
    P = np.zeros((base.count, len(base.standard_names)))
    P[np.arange(base.count), base.index] = 1.0
    position = {name: i for i, name in enumerate(base.standard_names)}
    if base.grouped:
        P[:, [position[name] for name in base.grouped]] += base.beta
    return P


def scale_constraints(base, model, known):
    """
    Return ``(C (k, b), d (k,))``: what the known link values fix, ``C K_B = d``.

    Each row is a combination of base parameters that the known standard parameters alone
    determine (module docstring).  Raises, naming the grouping equations, if the values
    determine none, or only combinations that are zero (they cannot fix a scale).
    """
    names, values = [], []
    for item in known:
        if not isinstance(item, (KnownLink, KnownParameter)):
            raise IdentificationError('known must hold KnownLink(link, mass, com, inertia) or '
                                      f'KnownParameter(name, value), got {type(item).__name__}')
        more, more_values = item.known(model)
        repeated = set(more) & set(names)
        if repeated:
            raise IdentificationError(f'the known {", ".join(sorted(repeated))} is given twice')
        names += more
        values.extend(more_values)
    position = {name: i for i, name in enumerate(base.standard_names)}
    missing = [name for name in names if name not in position]
    if missing:
        raise IdentificationError(
            f'the known {", ".join(missing)}: not a standard parameter of model '
            f"'{model.name}' as identified here (names look like M_<link>, ZZ_<link>, "
            'Ia_<joint> with armature, Fv_<joint> with friction)')
    S = [position[name] for name in names]
    P = grouping_matrix(base)
    rest = np.delete(P, S, axis=1)
    u, s, _ = np.linalg.svd(rest, full_matrices=True)
    rank = int((s > ZERO * s[0]).sum()) if len(s) else 0
    U = u[:, rank:]
    d = U.T @ P[:, S] @ np.asarray(values)
    size = np.linalg.norm(U.T @ P[:, S], axis=1) * np.linalg.norm(values)
    if U.shape[1] and np.any(np.abs(d) > ZERO * size):
        return U.T, d
    caught = [i for i in range(base.count) if np.any(np.abs(P[i, S]) > ZERO)]
    if not caught:
        raise IdentificationError(
            f"the known {', '.join(names)} cannot fix the gains' scale: it has no effect on "
            "any joint's torque (no base parameter holds it). Give the mass of a link a "
            'prismatic joint carries, or a run with a known payload (--payload-log LOG '
            '--payload LINK:MASS[:X,Y,Z])')
    equations = '; '.join(base.equations[i] for i in caught[:4]) + (
        f' (and {len(caught) - 4} more)' if len(caught) > 4 else '')
    why = ('it is regrouped with parameters nobody gave: ' + equations if U.shape[1] == 0
           else 'the combinations it determines are zero: ' + equations)
    raise IdentificationError(
        f"the known {', '.join(names)} cannot fix the gains' scale: {why}. Give what those "
        'equations hold too (the mass of every link a prismatic joint carries: --known-link '
        'LINK:MASS; a rotor inertia from its datasheet: --known-parameter Ia_<joint>=VALUE), '
        'or a run with a known payload (--payload-log LOG --payload LINK:MASS[:X,Y,Z])')


def link_columns(base, model, body):
    """Return the slice of a standard regressor's columns that multiply ``body``'s parameters."""
    start = base.standard_names.index(f'{PARAMETER_NAMES[0]}_{model.link_names[body]}')
    return slice(start, start + len(PARAMETER_NAMES))


def free_scales(model, base, C, constraints, carried=None, seed=0):
    """
    Return the motors whose gains nothing of known mass fixes (empty: every gain is fixed).

    The runs' equations may split into blocks that share no base parameter a known mass
    touches: a SCARA's quill mass fixes its lift's gain, but what it adds to the arm's joints
    is regrouped into their own parameters, so their gains and parameters keep a scale of
    their own.  The data cannot tell: a free block goes to zero in the fit, at the noise's
    residual.  So the system is built without noise at random states for a random standard
    parameter vector (the structure decides, not the values): the unloaded runs' equations,
    the loaded runs' (``carried = (body, phi)``, the payload), the known links' ``constraints
    (k, b + n)``; a direction none of them sees is a free scale.
    """
    rng = np.random.default_rng(seed)
    b, n = base.count, model.n
    q, qd, qdd = random_states(model, rng, max(4 * (b + n) // n + 10, 30))
    Y = regressor(model, q, qd, qdd, armature=base.armature, friction=base.friction)
    K = rng.uniform(0.5, 1.5, Y.shape[-1]) * rng.choice([-1.0, 1.0], Y.shape[-1])
    W = base.base_regressor(Y)
    torques = [Y @ K]
    if carried is not None:
        body, phi = carried
        torques.append(torques[0] + Y[..., link_columns(base, model, body)] @ phi)
    blocks = []
    for tau in torques:
        current = np.linalg.solve(C.T, tau.T).T                 # tau = C^T i, unit gains
        block = np.concatenate([W, -np.einsum('sk,kj->sjk', current, C)], axis=2)
        blocks.append(block.reshape(-1, b + n))
    if len(constraints):
        blocks.append(constraints)
    system = np.vstack([block / np.linalg.norm(block) for block in blocks])
    system /= np.where((norms := np.linalg.norm(system, axis=0)) > 0, norms, 1.0)
    s, vt = np.linalg.svd(system, full_matrices=False)[1:]
    free = vt[s < ZERO * s[0]]
    motors = set()
    for v in free:
        gains = np.abs(v[b:])
        motors.update(np.flatnonzero(gains > 0.1 * gains.max()) if gains.max() > ZERO else ())
    return [model.joint_names[k] for k in sorted(motors)]


def scale_summary(payload, known):
    """Say what fixed the gains' scale: the payload's run, the known links."""
    parts = [] if payload is None else [f'{payload.mass:g} kg on {payload.link} in a run']
    parts += [k.describe() for k in known]
    return ', '.join(parts)


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
    payload : KnownPayload or None
        The payload of the runs that carried one.
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
    payload: KnownPayload
    covariance: np.ndarray = field(default=None, repr=False)
    known: tuple = ()

    @property
    def fixed_by(self):
        """Say what fixed the scale: ``'2 kg on wrist_3_link in a run'``, the known links."""
        return scale_summary(self.payload, self.known)

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
                'payload': None if self.payload is None else self.payload.to_dict(),
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
    converge.
    """
    from scipy.optimize import least_squares

    n, m = A.shape[1], Z.shape[1]
    AZ, r0 = A @ Z, rhs - A @ x_p
    dof = np.maximum(kept.sum(axis=0) - m / n, 1.0)
    C2 = C ** 2

    def noise(z, e):
        g = (x_p + Z @ z)[b:]
        s = np.sqrt((C2 * ((g * e) ** 2)[:, None]).sum(axis=0))
        return g, np.where(s > 0, s, 1e-300)

    def residual(z, e):
        return ((AZ @ z - r0) / noise(z, e)[1]).reshape(-1)

    def jacobian(z, e):
        g, s = noise(z, e)
        r = (AZ @ z - r0) / s
        ds = (C2 * (g * e ** 2)[:, None]).T @ Z[b:] / s[:, None]         # (n, m)
        return (AZ / s[:, None] - r[..., None] * (ds / s[:, None])[None]).reshape(-1, m)

    g0 = (x_p + Z @ z)[b:]
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
        new = sigma / np.maximum(np.abs(x[b:]), 1e-300)
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
        (t, q, current), _ = read_log(model, {'t': d['t'], 'q': d['q'], 'tau': d['current'],
                                              'qd': d.get('qd')}, None, retime)
        logs.append((t, q, current))
        sources.append(source)
    return logs, sources


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
        Runs with ``payload`` on: what fixes the gains' scale, or helps ``known`` fix it.
    payload : KnownPayload
        The payload of those runs.
    known : sequence of KnownLink and KnownParameter
        Known masses (centres of mass, inertias) of the robot's own links, and standard
        parameters known by name (a rotor inertia from its datasheet): they fix the scale
        where they determine a combination of base parameters (module docstring), with or
        without a payload run.  With neither, an error says what to add.
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
    if loaded and payload is None:
        raise IdentificationError('runs with a payload need the payload: '
                                  'payload=KnownPayload(link, mass, com, inertia)')
    if not loaded and not known:
        raise IdentificationError(SCALE_MISSING)
    if payload is not None and not isinstance(payload, KnownPayload):
        raise IdentificationError(f'payload must be a KnownPayload(link, mass, com, inertia), '
                                  f'got {type(payload).__name__}')
    model = with_law(model, law)
    payload = payload if loaded else None                     # a payload without its runs: unused
    carried = None if payload is None else payload.body_parameters(model)
    base = base_parameters(model, friction=LAYOUTS[law], armature=armature)
    b, n = base.count, model.n
    if known:
        C_known, d_known = scale_constraints(base, model, known)
        constraints = np.hstack([C_known, np.zeros((len(d_known), n))])
    else:
        constraints, d_known = np.zeros((0, b + n)), np.zeros(0)
    C = current_rows(model)
    free = free_scales(model, base, C, constraints, carried)
    if free:
        raise IdentificationError(
            f'the gains of {", ".join(free)} keep a scale of their own: what fixes the scale '
            f'({scale_summary(payload, known)}) reaches them through no base '
            'parameter they share, and any multiple of their gains and parameters fits alike. '
            'Add a run with a known payload on a link they move (--payload-log LOG --payload '
            'LINK:MASS[:X,Y,Z]), or what is known of a link they carry (its centre of mass: '
            '--known-link LINK:MASS:X,Y,Z)')
    systems, processing, speeds, report = [], {}, None, None
    groups = [('without payload', data)] + ([('with payload', loaded)] if loaded else [])
    for group, runs in groups:
        logs, sources = current_logs(model, runs, retime)
        q, qd, qdd, current, parallel, more = differentiate_logs(model, logs, cutoff=cutoff)
        if speeds is None:
            speeds, report = still_speeds(model, still, parallel, cutoff)
        Y = regressor(model, q, qd, qdd, armature=base.armature, friction=base.friction)
        A = np.concatenate([base.base_regressor(Y),
                            -np.einsum('sk,kj->sjk', current, C)], axis=2)
        tau_known = np.zeros((len(q), n))
        if group == 'with payload':
            body, phi = carried
            tau_known = Y[..., link_columns(base, model, body)] @ phi
        A, rhs = parallel(A), -parallel(tau_known)
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
    # the known links' rows, each as large as the largest column: the scale they fix counts
    rows = constraints / np.linalg.norm(constraints, axis=1, keepdims=True) * norms.max()
    checked = np.vstack([flat, rows])
    check_excitation(names, checked, np.linalg.norm(checked, axis=0))
    # the fit on x = x_p + Z z, the constraints' null space (Z = 1 without known links)
    x_p = np.linalg.lstsq(constraints, d_known, rcond=None)[0] if len(d_known) \
        else np.zeros(b + n)
    Z = np.linalg.svd(constraints)[2][len(d_known):].T if len(d_known) else np.eye(b + n)
    z, cov, sigma, G, g = weighted_least_squares(A @ Z, rhs - A @ x_p, kept=~left)
    z, cov, sigma, G, g = noise_in_currents(A, rhs, ~left, C, b, Z, x_p, z, sigma)
    inflation, processing['std'] = correlation_inflation(G, g, N)
    x, cov = x_p + Z @ z, Z @ (inflation ** 2 * cov) @ Z.T
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    processing['still'] = left_out_summary(report, model.joint_names, left)
    processing.update(cutoff_hz=float(cutoff), friction=law,
                      payload=None if payload is None else payload.to_dict(),
                      known=[k.to_dict() for k in known],
                      scale_fixed_by=scale_summary(payload, known))
    gains = x[b:]
    residual = rhs - A @ x
    counted = np.maximum((~left).sum(axis=0), 1)
    with np.errstate(divide='ignore', invalid='ignore'):
        relative = np.where(np.abs(x[:b]) > 0, 100.0 * std[:b] / np.abs(x[:b]), np.inf)
    identified = with_gains(model, gains)
    reduced = flat @ Z
    estimate = Estimate(base=base, values=x[:b], std=std[:b], relative_std=relative,
                        condition=float(np.linalg.cond(reduced / np.linalg.norm(reduced,
                                                                                axis=0))),
                        sigma=sigma,
                        residual_rms=np.sqrt((residual ** 2).sum(axis=0) / counted), samples=N,
                        processing=processing, model=identified, covariance=cov[:b, :b])
    return GainEstimate(joints=model.joint_names, gains=gains, std=std[b:],
                        torque_constants=gains / own_reductions(model),
                        nominal=nominal_gains(model),
                        estimate=estimate, payload=payload, covariance=cov, known=known)
