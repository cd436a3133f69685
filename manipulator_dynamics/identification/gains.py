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

- A run carrying a load of known mass (:class:`KnownPayload`): there the load adds
  ``Y_link(q, qd, qdd) A phi_load`` (the regressor columns of the body that holds it, ``A``
  :func:`..model.transform_parameters`); the known part of ``phi_load`` (the mass, and the
  centre of mass and inertia where given) goes to the right-hand side, the rest are unknowns
  of the same system, a set per mounting (:class:`Mounting`: only their combinations that
  move a base parameter), and the gains follow in N m/A.
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

from .base_parameters import base_parameters, grouping_matrix, link_columns, random_states, \
    ZERO
from .fit import Estimate
from .friction import friction_law, LAYOUTS, with_law
from .least_squares import check_excitation, correlation_inflation, weighted_least_squares
from .logs import CUTOFF_HZ, differentiate_logs, IdentificationError, read_currents, \
    read_log
from .payload import combination_names, determined_by, load_combinations, payload_estimate
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


def known_inertials(what, mass, com, inertia):
    """
    Return ``(phi (10,), given)``: ten parameters about a link's origin, and which are known.

    ``mass`` kg (> 0); ``com`` m, or None: unknown; ``inertia`` about it (3 x 3 or six), or
    None: unknown (it needs ``com``).  What is not known is zero in ``phi``.  Bad values are
    refused naming ``what`` (``"the known link 'forearm'"``).
    """
    try:
        mass = float(mass)
    except (TypeError, ValueError):
        mass = float('nan')
    if not (np.isfinite(mass) and mass > 0):
        raise IdentificationError(f'{what}: its mass must be finite and > 0 (kg), got {mass}')
    if inertia is not None and com is None:
        raise IdentificationError(f'{what}: an inertia about the centre of mass needs the '
                                  'centre of mass (com)')
    c = np.zeros(3) if com is None else np.asarray(com, dtype=float)
    tensor = np.zeros((3, 3)) if inertia is None else inertia_tensor(inertia)
    if c.shape != (3,) or not np.all(np.isfinite(c)) or not np.all(np.isfinite(tensor)):
        raise IdentificationError(f'{what}: com must be 3 finite numbers and inertia finite')
    fault = tensor_fault(tensor) if inertia is not None else None
    if fault:
        raise IdentificationError(f'{what}: inertia {fault}')
    given = [9] + ([6, 7, 8] if com is not None else []) + (
        list(range(6)) if inertia is not None else [])
    phi = np.zeros(10)
    phi[given] = link_parameters(mass, c, tensor)[given]
    return phi, given


@dataclass(frozen=True)
class KnownPayload:
    """
    A load of known mass held by ``link`` in a run: what fixes the gains.

    ``mass`` kg (weighed); ``com`` its centre of mass in the link's frame (m), or None: unknown,
    identified with the gains; ``inertia`` about it (3 x 3 or ``ixx ixy ixz iyy iyz izz``,
    kg m^2), or None: unknown (it needs ``com``).  What is not given is identified, as for
    :class:`KnownLink`; a point mass at the link's origin is ``com=(0, 0, 0), inertia=0``,
    written out.
    """

    link: str
    mass: float
    com: tuple = None
    inertia: object = None

    def split(self, model):
        """
        Return ``(body, known (10,), unknown)``, refusing bad values by name.

        The body that holds the load, the parameters it adds there with what is unknown set
        to zero, and the indices (of ``XX .. M`` in the link's frame) that are unknown.
        """
        phi, given = known_inertials(f"the known payload on '{self.link}'", self.mass,
                                     self.com, self.inertia)
        try:
            frame = model.payload_frame(self.link)
        except ValueError as e:
            raise IdentificationError(f'the known payload: {e}') from None
        known = np.zeros(10)
        known[given] = phi[given]
        unknown = [k for k in range(10) if k not in given]
        return frame.body, transform_parameters(frame.R, frame.p) @ known, unknown

    def describe(self):
        """Say what is known, for the summaries."""
        what = ('' if self.com is None else ', its centre of mass'
                + ('' if self.inertia is None else ' and inertia'))
        return f'{self.mass:g} kg on {self.link} in a run{what}'

    def to_dict(self):
        """Return a plain mapping for YAML or JSON (None: not known)."""
        return {'link': self.link, 'mass': float(self.mass),
                'com': None if self.com is None else [float(x) for x in self.com],
                'inertia': None if self.inertia is None
                else inertia_tensor(self.inertia).tolist()}


@dataclass(frozen=True, eq=False)
class Mounting:
    """
    One mounting of a load in the loaded runs: its runs, what is known and what is not.

    ``columns (10, r)`` map the ``r`` combinations of the load's unknown parameters that any
    torque can show (the others move no base parameter) into the parameters of ``body``;
    ``known (10,)`` is what the known values add there.  The loaded runs' torques are
    ``Y_body (known + columns y)``, ``y`` identified with the gains.
    """

    runs: object
    payload: KnownPayload
    body: int
    known: np.ndarray
    unknown: tuple
    basis: np.ndarray               # (u, r): psi = basis @ y, psi the unknown link parameters
    names: tuple

    @classmethod
    def of(cls, model, base, runs, payload, label):
        """Split ``payload``'s parameters and find the combinations of the unknown ones."""
        if not isinstance(payload, KnownPayload):
            raise IdentificationError(f'payload must be a KnownPayload(link, mass, com, '
                                      f'inertia), got {type(payload).__name__}')
        body, known, unknown = payload.split(model)
        basis = load_combinations(base, model, payload.link, unknown)
        names = combination_names(basis, unknown, f'_load{label}')
        return cls(runs, payload, body, known, tuple(unknown), basis, names)

    def columns(self, model):
        """Return ``(10, r)``: the unknown combinations in the body's parameters."""
        frame = model.payload_frame(self.payload.link)
        return transform_parameters(frame.R, frame.p)[:, list(self.unknown)] @ self.basis

    def mass_fixes_scale(self, base, model):
        """Whether the known part moves base parameters that the unknown part cannot."""
        P = grouping_matrix(base)[:, link_columns(base, model, self.body)]
        shown = P @ self.known
        if not np.linalg.norm(shown) > 0:
            return False
        if not self.basis.shape[1]:
            return True
        span = P @ self.columns(model)
        span = span / np.linalg.norm(span, axis=0)
        rest = shown - span @ np.linalg.lstsq(span, shown, rcond=None)[0]
        return np.linalg.norm(rest) > 1e-6 * np.linalg.norm(shown)

    def estimate(self, y, cov_y, residual_rms, samples):
        """Return the load identified: a :class:`.payload.PayloadEstimate`."""
        p = self.payload
        psi, _ = known_inertials(p.link, p.mass, p.com, p.inertia)
        cov = np.zeros((10, 10))
        determined = np.ones(10, dtype=bool)
        notes = []
        if self.unknown:
            u = list(self.unknown)
            psi[u] = self.basis @ y
            cov[np.ix_(u, u)] = self.basis @ cov_y @ self.basis.T
            lost = [k for k, inside in zip(u, determined_by(self.basis)) if not inside]
            determined[lost] = False
            if lost:
                notes.append(f'{", ".join(PARAMETER_NAMES[k] for k in lost)} of the load move '
                             "no torque apart from the arm's own parameters: not determined")
        return payload_estimate(p.link, psi, cov, determined, notes,
                                residual_rms=residual_rms, samples=samples)


def suspects(mountings):
    """Say what was taken as known of the loads and may be wrong: for :func:`with_gains`."""
    said = []
    for m in mountings:
        p = m.payload
        if p.com is not None:
            said.append(f'the centre of mass of the {p.mass:g} kg load on {p.link} is not what '
                        'was given')
        runs = m.runs if isinstance(m.runs, (list, tuple)) else [m.runs]
        if len(runs) > 1:
            said.append(f'the {len(runs)} runs with the load on {p.link} do not share one '
                        'mounting (give each its own: --payload-log once per mounting)')
    return said


def mountings_of(model, base, loaded, payload):
    """
    Return the :class:`Mounting` of each group of loaded runs.

    ``payload`` one :class:`KnownPayload`: ``loaded`` (a run or a list of them) is one
    mounting.  A list of them: ``loaded`` is a list as long, item i the run or runs of
    mounting i (each its own centre of mass and inertia, unknowns of their own; the same load
    remounted, or another load).
    """
    if not loaded:
        return []
    if payload is None:
        raise IdentificationError('runs with a payload need the payload: '
                                  'payload=KnownPayload(link, mass)')
    if isinstance(payload, KnownPayload):
        groups, payloads = [loaded], [payload]
    else:
        payloads = list(payload)
        groups = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
        if len(groups) != len(payloads):
            raise IdentificationError(
                f'{len(payloads)} payloads for {len(groups)} groups of loaded runs: give one '
                'payload per mounting, loaded=[runs of mounting 1, runs of mounting 2, ...]')
    return [Mounting.of(model, base, runs, p, i + 1 if len(payloads) > 1 else '')
            for i, (runs, p) in enumerate(zip(groups, payloads))]


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
        phi, given = known_inertials(f"the known link '{self.link}'", self.mass, self.com,
                                     self.inertia)
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


def free_scales(model, base, C, constraints, mountings=(), seed=0):
    """
    Return the motors whose gains nothing of known mass fixes (empty: every gain is fixed).

    The runs' equations may split into blocks that share no base parameter a known mass
    touches: a SCARA's quill mass fixes its lift's gain, but what it adds to the arm's joints
    is regrouped into their own parameters, so their gains and parameters keep a scale of
    their own.  The data cannot tell: a free block goes to zero in the fit, at the noise's
    residual.  So the system is built without noise at random states for a random standard
    parameter vector (the structure decides, not the values): the unloaded runs' equations,
    each mounting's (:class:`Mounting`: its known part, and its unknown combinations as
    columns of their own), the known links' ``constraints (k, b + n)``; a direction none of
    them sees is a free scale.
    """
    rng = np.random.default_rng(seed)
    b, n = base.count, model.n
    extra = [m.basis.shape[1] for m in mountings]
    width = b + n + sum(extra)
    q, qd, qdd = random_states(model, rng, max(4 * width // n + 10, 30))
    Y = regressor(model, q, qd, qdd, armature=base.armature, friction=base.friction)
    K = rng.uniform(0.5, 1.5, Y.shape[-1]) * rng.choice([-1.0, 1.0], Y.shape[-1])
    W = base.base_regressor(Y)

    def block(tau, load=None, columns=None):
        current = np.linalg.solve(C.T, tau.T).T                 # tau = C^T i, unit gains
        out = np.zeros((len(tau), n, width))
        out[..., :b + n] = np.concatenate([W, -np.einsum('sk,kj->sjk', current, C)], axis=2)
        if load is not None:
            start = b + n + sum(extra[:load])
            out[..., start:start + extra[load]] = columns
        return out.reshape(-1, width)

    blocks = [block(Y @ K)]
    for i, m in enumerate(mountings):
        Y_body = Y[..., link_columns(base, model, m.body)]
        columns = Y_body @ m.columns(model)
        y = rng.uniform(0.5, 1.5, extra[i])
        blocks.append(block(Y @ K + Y_body @ m.known + columns @ y, i, columns))
    if len(constraints):
        blocks.append(np.hstack([constraints, np.zeros((len(constraints), sum(extra)))]))
    system = np.vstack([x / np.linalg.norm(x) for x in blocks])
    system /= np.where((norms := np.linalg.norm(system, axis=0)) > 0, norms, 1.0)
    s, vt = np.linalg.svd(system, full_matrices=False)[1:]
    free = vt[s < ZERO * s[0]]
    motors = set()
    for v in free:
        gains = np.abs(v[b:b + n])
        motors.update(np.flatnonzero(gains > 0.1 * gains.max()) if gains.max() > ZERO else ())
    return [model.joint_names[k] for k in sorted(motors)]


def scale_summary(payloads, known):
    """Say what fixed the gains' scale: the loads in the runs, the known links."""
    return ', '.join([p.describe() for p in payloads] + [k.describe() for k in known])


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
        A[..., :b] = base.base_regressor(Y)
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
    z, cov, sigma, G, g = weighted_least_squares(A @ Z, rhs - A @ x_p, kept=~left)
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
    counted = np.maximum((~left).sum(axis=0), 1)
    with np.errstate(divide='ignore', invalid='ignore'):
        relative = np.where(np.abs(x[:b]) > 0, 100.0 * std[:b] / np.abs(x[:b]), np.inf)
    identified = with_gains(model, gains, suspects(mountings))
    reduced = flat @ Z
    estimate = Estimate(base=base, values=x[:b], std=std[:b], relative_std=relative,
                        condition=float(np.linalg.cond(reduced / np.linalg.norm(reduced,
                                                                                axis=0))),
                        sigma=sigma,
                        residual_rms=np.sqrt((residual ** 2).sum(axis=0) / counted), samples=N,
                        processing=processing, model=identified, covariance=cov[:b, :b])
    loads = []
    for i, m in enumerate(mountings):
        part = slice(b + n + sum(extra[:i]), b + n + sum(extra[:i + 1]))
        rows_i = np.concatenate([np.zeros(len(s[1]), dtype=bool) if k != i + 1
                                 else np.ones(len(s[1]), dtype=bool)
                                 for k, s in enumerate(systems)])
        kept_i = (~left)[rows_i]
        rms = np.sqrt((residual[rows_i] ** 2).sum(axis=0) / np.maximum(kept_i.sum(axis=0), 1))
        loads.append(m.estimate(x[part], cov[part, part], rms, int(rows_i.sum())))
    return GainEstimate(joints=model.joint_names, gains=gains, std=std[b:b + n],
                        torque_constants=gains / own_reductions(model),
                        nominal=nominal_gains(model), estimate=estimate, payloads=payloads,
                        loads=tuple(loads), covariance=cov[:b + n, :b + n], known=known)
