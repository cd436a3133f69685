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
What is known of a robot and of its loads, and whether it fixes the drive gains' scale.

Runs of a robot alone fit its base parameters and drive gains up to a common scale
(:mod:`.gains`).  Two things of known mass set it, alone or together:

- A run carrying a load of known mass (:class:`KnownPayload`): the load adds
  ``Y_link(q, qd, qdd) A phi_load`` (the regressor columns of the body that holds it, ``A``
  :func:`..model.transform_parameters`); the known part of ``phi_load`` (the mass, and the
  centre of mass and inertia where given) goes to the right-hand side, the rest are unknowns
  of the same system, a set per mounting (:class:`Mounting`: only their combinations that
  move a base parameter).  Gautier and Briot's global identification needs the mass alone.
- Known inertial parameters of the robot's own links (:class:`KnownLink`) and standard
  parameters known by name (:class:`KnownParameter`).  A value fixes the scale only through a
  combination of base parameters it alone determines: ``u^T K_B = u^T P_S phi_S`` for every
  ``u`` with ``u^T P`` zero outside the known entries ``S`` (``K_B = P K``,
  :func:`scale_constraints`).  The masses a prismatic joint carries are such a combination; a
  revolute arm's link mass alone is not (it is regrouped with unknown first moments), and the
  error names the grouping equations it is caught in.

What is known may still leave some gains free: a SCARA's quill mass fixes its lift's gain,
but what the quill adds to the arms' torques is regrouped into the arms' own parameters, and
their gains keep a scale of their own.  :func:`free_scales` finds such blocks on noise-free
equations before any log is read, and the error names the motors.
"""

from dataclasses import dataclass

import numpy as np

from .base_parameters import grouping_matrix, link_columns, random_states, ZERO
from .payload import combination_names, determined_by, load_combinations, payload_estimate
from ..errors import IdentificationError
from ..inertia import tensor_fault
from ..model import inertia_tensor, link_parameters, PARAMETER_NAMES, transform_parameters
from ..rigid.regressor import regressor


#: What a gain identification without a known payload is told to add.
SCALE_MISSING = (
    'drive gains need something of known mass to fix their scale: currents alone fit the '
    'parameters and the gains times any number. Add a run with a load of known mass on a '
    'link (its mass is enough: its centre of mass and inertia are identified): '
    'identify_gains(model, runs, loaded=[runs with the load], payload=KnownPayload(link, '
    'mass)); command line: --payload-log LOG --payload LINK:MASS; '
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
