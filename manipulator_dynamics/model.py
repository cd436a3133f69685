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
The robot model: a frozen, array-based fixed-base robot, built once from a URDF.

The model is data, in the spirit of Featherstone's spatial_v2: ``n`` bodies, one per movable joint,
numbered so that ``parent[i] < i`` (``-1`` is the fixed base), joint types as small integers, the
fixed placement of each joint frame in its parent body frame, and the 10 standard inertial
parameters of each body in Khalil's order ``XX XY XZ YY YZ ZZ MX MY MZ M`` (inertia tensor about
the body frame origin, first moments, mass), expressed in the body frame.  The body frame of joint
``i`` is the frame of its child link (URDF convention: the joint frame coincides with the child
link frame at ``q = 0``).

Fixed joints are merged: a link attached by a fixed joint is carried by the body it hangs from, its
inertia added to that body.  Every URDF link stays addressable through :attr:`Model.frames`.
:func:`~manipulator_dynamics.load_model` (in :mod:`.urdf`) builds one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
import math
import os
from types import MappingProxyType
from typing import Mapping, NamedTuple, Sequence

import numpy as np

from .inertia import body_fault, is_mass_distribution, tensor_fault

REVOLUTE = 0
PRISMATIC = 1
JOINT_TYPE_NAMES = ('revolute', 'prismatic')

#: Khalil's order of the 10 standard inertial parameters of a body, used everywhere in the package.
PARAMETER_NAMES = ('XX', 'XY', 'XZ', 'YY', 'YZ', 'ZZ', 'MX', 'MY', 'MZ', 'M')


def pseudo_inertia(phi):
    """
    Return the 4x4 pseudo-inertia ``[[Sigma, h], [h^T, m]]`` of one link's ten parameters.

    ``Sigma = 1/2 tr(I) 1 - I`` is the second moment of the mass, ``h = m c`` (Wensing, Kim &
    Slotine 2017, eq. 8); the parameters are realisable exactly when it is positive definite.
    """
    inertia = inertia_tensor(phi[:6])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    J[:3, 3] = J[3, :3] = phi[6:9]
    J[3, 3] = phi[9]
    return J


def standard_from_pseudo_inertia(J):
    """Return the ten parameters ``XX XY XZ YY YZ ZZ MX MY MZ M`` of a pseudo-inertia."""
    sigma = J[:3, :3]
    return np.array([*inertia_six(np.trace(sigma) * np.eye(3) - sigma), *J[:3, 3], J[3, 3]])


def link_parameters(mass, com, inertia_com):
    """Return Khalil's ten parameters about the frame origin of a mass, its CoM, inertia at CoM."""
    c = np.asarray(com, dtype=float)
    J = np.asarray(inertia_com, dtype=float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([*inertia_six(J), *(mass * c), mass])


def transform_parameters(R, p):
    """
    Return ``A`` (10, 10): ten parameters in a frame, to those in a frame where it sits at R, p.

    With ``r' = R r + p``: ``m' = m``, ``h' = R h + m p``, and about the new origin
    ``I' = R I R^T + 2 (p . R h) 1 - (R h p^T + p (R h)^T) + m (|p|^2 1 - p p^T)``: linear in
    the parameters (so it maps regressor columns as well as values).
    """
    R, p = np.asarray(R, dtype=float), np.asarray(p, dtype=float)
    A = np.empty((10, 10))
    for k in range(10):
        phi = np.zeros(10)
        phi[k] = 1.0
        inertia = inertia_tensor(phi[:6])
        h, m = R @ phi[6:9], phi[9]
        new = (R @ inertia @ R.T + 2 * (p @ h) * np.eye(3) - np.outer(h, p) - np.outer(p, h)
               + m * (p @ p * np.eye(3) - np.outer(p, p)))
        A[:, k] = [*inertia_six(new), *(h + m * p), m]
    return A


def inertia_tensor(inertia):
    """Return a 3x3 inertia tensor from one (3, 3) or six ``ixx ixy ixz iyy iyz izz`` numbers."""
    a = np.asarray(inertia, dtype=float)
    if a.shape == (3, 3):
        return a
    if a.shape == (6,):
        xx, xy, xz, yy, yz, zz = a
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    raise ValueError(f'inertia must be a 3x3 tensor or 6 numbers ixx ixy ixz iyy iyz izz, got '
                     f'shape {a.shape}')


def inertia_six(inertia):
    """Return ``ixx ixy ixz iyy iyz izz`` of a 3x3 inertia tensor (its upper triangle)."""
    return np.asarray(inertia, dtype=float)[np.triu_indices(3)]


def central_inertia(phi):
    """Return ``(mass, centre of mass, inertia tensor about it)`` of one link's ten parameters."""
    m = phi[9]
    c = np.asarray(phi[6:9], dtype=float) / m
    return m, c, inertia_tensor(phi[:6]) - m * (c @ c * np.eye(3) - np.outer(c, c))


class URDFError(ValueError):
    """The URDF (or a file completing it) does not describe a robot we can compute with."""


class InertiaError(URDFError):
    """A link's inertial parameters are not physically possible."""


class InertiaWarning(UserWarning):
    """A link's inertial parameters are not physically possible, loaded anyway on request."""


class Frame(NamedTuple):
    """Where a URDF link sits: on body ``body`` (-1: the base), at pose ``R, p`` in its frame."""

    body: int
    R: np.ndarray
    p: np.ndarray


class Mimic(NamedTuple):
    """A URDF ``<mimic>``: ``q[joint] = multiplier * q[master] + offset`` (not enforced)."""

    master: str
    multiplier: float
    offset: float


class CoupledMotors(NamedTuple):
    """
    The motors that turn several joints (:meth:`Model.coupled_motors`), r of them.

    Motor k applies ``rows[k] (armature[k] rows[k] . qdd + viscous[k] w + coulomb[k] s(w))``,
    ``w = rows[k] . qd``, ``s`` the Coulomb law of its joint (``velocity[k]``, as
    :attr:`Model.coulomb_velocity`).  ``joints[k]`` is the model index of its own joint, whose
    ``rows[k]`` entry is 1 and whose ``Model.armature`` is ``armature[k]``.
    """

    joints: np.ndarray
    rows: np.ndarray
    armature: np.ndarray
    viscous: np.ndarray
    coulomb: np.ndarray
    velocity: np.ndarray


def _frozen(a, dtype=np.float64):
    a = np.ascontiguousarray(a, dtype=dtype)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Model:
    """
    A fixed-base rigid multibody system (serial chain or tree) with ``n`` one-coordinate joints.

    Arrays are read-only; ``n`` is ``len(joint_names)``.  Build one with :func:`load_model`.

    Attributes
    ----------
    name : str
        The URDF robot name.
    base_link : str
        The link that is the fixed base (the root, or the ``root_link`` asked for).
    joint_names : tuple of str, length n
        The joint order used by every function: one coordinate per joint, a continuous joint is an
        angle.
    link_names : tuple of str, length n
        ``link_names[i]`` is the child link of joint ``i``, whose frame is body ``i``'s frame.
    parent : ndarray of int, shape (n,)
        The parent body of body ``i``; ``-1`` for the base.  Always ``parent[i] < i``.
    joint_type : ndarray of int, shape (n,)
        ``REVOLUTE`` (0) or ``PRISMATIC`` (1).
    continuous : ndarray of bool, shape (n,)
        True for URDF continuous joints (revolute without position limits).
    axis : ndarray, shape (n, 3)
        Unit joint axis in the joint (body) frame.
    R_parent_joint, p_parent_joint : ndarray, shape (n, 3, 3) and (n, 3)
        Pose of joint frame ``i`` at ``q = 0`` in the frame of body ``parent[i]`` (or of the base).
    inertial : ndarray, shape (n, 10)
        Standard inertial parameters of each body about its frame origin, in its frame, in the
        order of :data:`PARAMETER_NAMES`; fixed children included.
    armature, viscous, coulomb : ndarray, shape (n,)
        Rotor inertia ``Ia`` (added on the diagonal of M), viscous ``Fv`` and Coulomb ``Fc``
        friction.  A joint whose motor is coupled (:attr:`transmissions`: the motor turns other
        joints too) has its armature act through the coupling, ``Ia c c^T`` in M, not on the
        diagonal alone (:meth:`coupled_motors`).
    friction_offset, coulomb_velocity : ndarray, shape (n,)
        The rest of each joint's friction law ``Fv qd + Fc s(qd) + Fo`` (:func:`friction_torque`):
        a constant ``Fo`` (asymmetric Coulomb friction, ``Fc + Fo`` one way and ``Fc - Fo`` the
        other, or a torque sensor's offset), and the velocity ``vs`` of the smooth Coulomb law
        ``s(qd) = tanh(qd / vs)``; 0 (the default, and all URDF can say) is ``sign(qd)``.
    lower, upper, velocity_limit, effort_limit : ndarray, shape (n,)
        URDF limits (``inf`` where the URDF gives none).
    gravity : ndarray, shape (3,)
        Gravity acceleration in the base frame.
    frames : mapping of str to Frame
        Every link kept in the model, merged ones included, with the body that carries it.
    mimic : mapping of str to Mimic
        URDF mimic relations between joints of the model.  They are documented, not enforced: every
        joint keeps its own coordinate, as /joint_states and Pinocchio's default URDF parser treat
        them.
    urdf : bytes or None
        The URDF document the model was loaded from (:func:`write_urdf` edits a copy of it).
    transmissions : Transmissions or None
        The motors of the joints that have them (:mod:`~manipulator_dynamics.transmissions`):
        a log's motor-side columns are read through them.

    """

    name: str
    base_link: str
    joint_names: tuple
    link_names: tuple
    parent: np.ndarray
    joint_type: np.ndarray
    continuous: np.ndarray
    axis: np.ndarray
    R_parent_joint: np.ndarray
    p_parent_joint: np.ndarray
    inertial: np.ndarray
    armature: np.ndarray
    viscous: np.ndarray
    coulomb: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    gravity: np.ndarray
    frames: Mapping = field(default_factory=dict)
    mimic: Mapping = field(default_factory=dict)
    urdf: bytes = field(default=None, repr=False)
    friction_offset: np.ndarray = None
    coulomb_velocity: np.ndarray = None
    transmissions: object = None

    def __post_init__(self):
        n = len(self.joint_names)
        put = object.__setattr__
        for name in ('friction_offset', 'coulomb_velocity'):
            if getattr(self, name) is None:
                put(self, name, np.zeros(n))
        put(self, 'joint_names', tuple(self.joint_names))
        put(self, 'link_names', tuple(self.link_names))
        put(self, 'parent', _frozen(self.parent, np.int64))
        put(self, 'joint_type', _frozen(self.joint_type, np.int64))
        put(self, 'continuous', _frozen(self.continuous, bool))
        for name in ('axis', 'R_parent_joint', 'p_parent_joint', 'inertial', 'armature', 'viscous',
                     'coulomb', 'friction_offset', 'coulomb_velocity', 'lower', 'upper',
                     'velocity_limit', 'effort_limit', 'gravity'):
            put(self, name, _frozen(getattr(self, name)))
        put(self, 'frames', MappingProxyType(dict(self.frames)))
        put(self, 'mimic', MappingProxyType(dict(self.mimic)))
        if np.any(self.parent >= np.arange(n)):
            raise ValueError('bodies must be numbered so that parent[i] < i')

    def coupled_motors(self) -> 'CoupledMotors':
        """
        Give the motors that turn several joints as the dynamics use them (:class:`CoupledMotors`).

        From :attr:`transmissions` (:meth:`Transmissions.coupled`); empty without any.
        """
        found = self.__dict__.get('_coupled_motors')
        if found is None:
            n = self.n
            if self.transmissions is None:
                joints, rows, viscous, coulomb = (np.zeros(0, dtype=np.int64), np.zeros((0, n)),
                                                  np.zeros(0), np.zeros(0))
            else:
                joints, rows, viscous, coulomb = self.transmissions.coupled(self.joint_names)
            found = CoupledMotors(joints, rows, self.armature[joints], viscous, coulomb,
                                  self.coulomb_velocity[joints])
            for a in found:
                a.flags.writeable = False
            object.__setattr__(self, '_coupled_motors', found)     # frozen; this is a cache
        return found

    def diagonal_armature(self) -> np.ndarray:
        """Return :attr:`armature` less the coupled motors' (theirs is ``Ia c c^T``, off it)."""
        armature = np.array(self.armature)
        armature[self.coupled_motors().joints] = 0.0
        return armature

    @property
    def n(self) -> int:
        """Give the number of joint coordinates (and of bodies)."""
        return len(self.joint_names)

    def joint_index(self, name: str) -> int:
        """Index of joint ``name`` in :attr:`joint_names`; ``KeyError`` naming it if absent."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"joint '{name}' is not a joint of model '{self.name}' "
                           f'(its joints: {", ".join(self.joint_names)})') from None

    def is_chain(self) -> bool:
        """Tell whether the bodies form one serial chain (``parent[i] == i - 1``)."""
        return bool(np.all(self.parent == np.arange(-1, self.n - 1)))

    def with_joint_dynamics(self, joint_dynamics) -> 'Model':
        """
        Return a copy with armature / friction overridden from a YAML file or mapping.

        See :func:`load_joint_dynamics` for the format.
        """
        values = load_joint_dynamics(joint_dynamics, self.joint_names)
        return dataclasses.replace(self, **{key: column(getattr(self, key))
                                            for key, column in values.items()})

    def with_parameters(self, values, names) -> 'Model':
        """
        Return a copy with standard parameters replaced: identified ones, for instance.

        ``names`` as :func:`parameter_names` makes them (``XX_<link>`` ... ``M_<link>`` for whole
        links, ``Ia_<joint>``, ``Fv_<joint>``, ``Fc_<joint>``, ``Fo_<joint>``, a coupled motor's
        ``Fvm_<joint>`` and ``Fcm_<joint>``), and ``Vs_<joint>``
        for the Coulomb velocity of a smooth friction law; what is not named keeps its value.
        A link's ten parameters are its body's, about the body frame, fixed children included.
        """
        values = np.asarray(values, dtype=float).reshape(-1)
        if len(values) != len(names):
            raise ValueError(f'{len(values)} values for {len(names)} names')
        where = {'Ia': 'armature', 'Fv': 'viscous', 'Fc': 'coulomb', 'Fo': 'friction_offset',
                 'Vs': 'coulomb_velocity'}
        arrays = {key: np.array(getattr(self, key)) for key in ('inertial', *where.values())}
        links = {name: i for i, name in enumerate(self.link_names)}
        joints = {name: i for i, name in enumerate(self.joint_names)}
        columns = {name: k for k, name in enumerate(PARAMETER_NAMES)}
        motor = {'Fvm': {}, 'Fcm': {}}
        coupled = (self.transmissions.coupled_joints if self.transmissions is not None else ())
        for name, value in zip(names, values):
            kind, _, owner = name.partition('_')
            if kind in motor and owner in coupled:
                motor[kind][owner] = value
            elif kind in columns and owner in links:
                arrays['inertial'][links[owner], columns[kind]] = value
            elif kind in where and owner in joints:
                if kind == 'Vs' and value < 0:
                    raise ValueError(f"'{name}' = {value}: a Coulomb velocity is >= 0")
                arrays[where[kind]][joints[owner]] = value
            else:
                raise ValueError(f"parameter '{name}' names no link or joint of model "
                                 f"'{self.name}' (names look like ZZ_<link>, Fv_<joint>, "
                                 'Fvm_<joint of a coupled motor>)')
        if motor['Fvm'] or motor['Fcm']:
            arrays['transmissions'] = self.transmissions.with_motor_friction(motor['Fvm'],
                                                                             motor['Fcm'])
        return dataclasses.replace(self, **arrays)

    def payload_frame(self, link) -> Frame:
        """Return where ``link`` sits on its body; ValueError if unknown or fixed to the base."""
        if link not in self.frames:
            raise ValueError(f"payload: '{link}' is not a link of model '{self.name}' (links: "
                             f'{", ".join(self.frames)})')
        frame = self.frames[link]
        if frame.body < 0:
            raise ValueError(f"payload: link '{link}' is fixed to the base: a payload there "
                             'loads no joint')
        return frame

    def with_payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=None) -> 'Model':
        """
        Return a copy carrying a rigid payload fixed to ``link`` (any link: a tool frame too).

        ``mass`` in kg, ``com`` its centre of mass in the link's frame, ``inertia`` its inertia
        about that centre, in the link's frame (3x3, or ``ixx ixy ixz iyy iyz izz``; default
        zero: a point mass).  Its parameters are added to the body the link is part of.

        Raises
        ------
        ValueError
            An unknown link or one fixed to the base, a negative or non-finite mass, an
            inertia that is not a mass distribution's (not positive semi-definite or breaking
            a triangle inequality).

        """
        frame = self.payload_frame(link)
        mass = float(mass)
        com = np.asarray(com, dtype=float)
        inertia = np.zeros((3, 3)) if inertia is None else inertia_tensor(inertia)
        if not (math.isfinite(mass) and mass >= 0):
            raise ValueError(f'payload: mass must be finite and >= 0, got {mass}')
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise ValueError(f'payload: com must be 3 finite numbers, got {com.tolist()}')
        if not np.all(np.isfinite(inertia)) or not np.allclose(inertia, inertia.T):
            raise ValueError('payload: inertia must be finite and symmetric')
        fault = tensor_fault(inertia)
        if fault:
            raise ValueError(f'payload: inertia {fault}')
        phi = transform_parameters(frame.R, frame.p) @ link_parameters(mass, com, inertia)
        inertial = np.array(self.inertial)
        inertial[frame.body] += phi
        return dataclasses.replace(self, inertial=inertial)

    def __repr__(self):
        kinds = ', '.join(f'{JOINT_TYPE_NAMES[t]}' for t in self.joint_type)
        shape = 'chain' if self.is_chain() else 'tree'
        return (f"Model('{self.name}', n={self.n}, {shape}, base='{self.base_link}', "
                f'joints: {kinds})')


# ---------------------------------------------------------------------------------------------------
# Joint dynamics overrides (armature, friction) from YAML
# ---------------------------------------------------------------------------------------------------

#: Fields of a joint-dynamics YAML entry: the Model field each sets, and whether it may be < 0.
_DYNAMICS_FIELDS = {'armature': ('armature', False), 'viscous': ('viscous', False),
                    'coulomb': ('coulomb', False), 'offset': ('friction_offset', True),
                    'coulomb_velocity': ('coulomb_velocity', False)}


def read_yaml(source, what, error):
    """
    ``source`` as a Python object: a YAML file path, YAML text, or already a mapping.

    A document that does not parse raises ``error`` naming ``what``.
    """
    import yaml

    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if os.path.exists(text):
            with open(text, encoding='utf-8') as f:
                text = f.read()
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise error(f'{what} YAML does not parse: {e}') from None
    return source


def load_joint_dynamics(source, joint_names: Sequence[str]):
    """
    Read armature / friction overrides; return ``{field: function(old_array) -> new_array}``.

    ``source`` is a YAML file path, a YAML string, or a mapping, of the form::

        joint_dynamics:            # the top-level key is optional
          panda_joint1: {armature: 0.1, viscous: 0.5, coulomb: 0.2}
          panda_joint2: {coulomb: 0.6, coulomb_velocity: 0.02, offset: -0.1}

    Fields left out keep the URDF's value (``<dynamics damping= friction=>``; armature, offset
    and coulomb_velocity 0).  The friction law is ``viscous qd + coulomb s(qd) + offset``, ``s``
    the sign of ``qd``, or ``tanh(qd / coulomb_velocity)`` where that is positive.
    """
    source = read_yaml(source, 'joint dynamics', URDFError)
    if source is None:
        source = {}
    if not isinstance(source, Mapping):
        raise URDFError('joint dynamics must be a mapping of joint name to '
                        '{' + ', '.join(_DYNAMICS_FIELDS) + '}, got ' + type(source).__name__)
    if 'joint_dynamics' in source:
        source = source['joint_dynamics'] or {}
    index = {name: i for i, name in enumerate(joint_names)}
    updates = {key: {} for key, _ in _DYNAMICS_FIELDS.values()}
    for joint, entry in source.items():
        if joint not in index:
            raise URDFError(f"joint dynamics names joint '{joint}', which is not a joint of the "
                            f'model (joints: {", ".join(joint_names)})')
        if not isinstance(entry, Mapping):
            raise URDFError(f"joint dynamics of '{joint}' must be a mapping with keys "
                            f'{sorted(_DYNAMICS_FIELDS)}')
        for key, value in entry.items():
            if key not in _DYNAMICS_FIELDS:
                raise URDFError(f"joint dynamics of '{joint}': unknown field '{key}' "
                                f'(expected {", ".join(sorted(_DYNAMICS_FIELDS))})')
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise URDFError(f"joint dynamics of '{joint}': {key} must be a number, "
                                f'got {value!r}') from None
            target, signed = _DYNAMICS_FIELDS[key]
            if not math.isfinite(value) or (value < 0 and not signed):
                raise URDFError(f"joint dynamics of '{joint}': {key} must be finite"
                                f"{'' if signed else ' and >= 0'}, got {value}")
            updates[target][index[joint]] = value

    def setter(values):
        def apply(old):
            new = np.array(old, dtype=float)
            for i, v in values.items():
                new[i] = v
            return new
        return apply

    return {key: setter(values) for key, values in updates.items()}


# ---------------------------------------------------------------------------------------------------
# Identified standard parameters from YAML
# ---------------------------------------------------------------------------------------------------

def load_parameters(source):
    """
    Read standard parameters (identified ones); return ``(names, values)``.

    ``source`` is a YAML file path, a YAML string, or a mapping, of the form written by
    ``Estimate.parameters_yaml`` (``manipulator-dynamics identify --parameters-out``)::

        standard_parameters:       # the top-level key is optional
          XX_link1: 0.0123         # names as parameter_names(): <kind>_<link> or _<joint>
          Fv_joint1: 0.5
          Vs_joint1: 0.02          # the Coulomb velocity of a smooth friction law

    Other top-level keys (``robot``, ``source``, ...) are ignored.
    """
    data = read_yaml(source, 'parameters', URDFError)
    if isinstance(data, Mapping) and 'standard_parameters' in data:
        data = data['standard_parameters']
    if not isinstance(data, Mapping) or not data:
        raise URDFError('parameters must be a mapping of parameter name to value under '
                        "'standard_parameters'")
    names = [str(name) for name in data]
    values = [finite_number(value, f"parameter '{name}'") for name, value in data.items()]
    return names, np.array(values)


def finite_number(value, what):
    """Return ``value`` as a finite float; URDFError saying ``what`` must be one otherwise."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise URDFError(f'{what} must be a number, got {value!r}') from None
    if not math.isfinite(v):
        raise URDFError(f'{what} must be finite, got {v}')
    return v


def parameter_problems(model):
    """List the bodies of ``model`` whose ten parameters are not a mass distribution."""
    problems = []
    for i, link in enumerate(model.link_names):
        phi = model.inertial[i]
        fault = None if is_mass_distribution(phi) else body_fault(phi)
        if fault:
            problems.append(f"body of link '{link}': {fault}")
    for kind, values in (('armature', model.armature), ('viscous', model.viscous),
                         ('coulomb', model.coulomb), ('coulomb_velocity', model.coulomb_velocity)):
        for j in np.flatnonzero(values < 0):
            problems.append(f"joint '{model.joint_names[j]}': {kind} {values[j]:.6g} is negative")
    return problems
