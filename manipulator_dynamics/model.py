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
"""

from __future__ import annotations

from dataclasses import dataclass, field
import io
import math
import os
from types import MappingProxyType
from typing import Mapping, NamedTuple, Sequence
import warnings

import numpy as np

REVOLUTE = 0
PRISMATIC = 1
JOINT_TYPE_NAMES = ('revolute', 'prismatic')

#: Khalil's order of the 10 standard inertial parameters of a body, used everywhere in the package.
PARAMETER_NAMES = ('XX', 'XY', 'XZ', 'YY', 'YZ', 'ZZ', 'MX', 'MY', 'MZ', 'M')


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
        friction.
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

    def __post_init__(self):
        n = len(self.joint_names)
        put = object.__setattr__
        put(self, 'joint_names', tuple(self.joint_names))
        put(self, 'link_names', tuple(self.link_names))
        put(self, 'parent', _frozen(self.parent, np.int64))
        put(self, 'joint_type', _frozen(self.joint_type, np.int64))
        put(self, 'continuous', _frozen(self.continuous, bool))
        for name in ('axis', 'R_parent_joint', 'p_parent_joint', 'inertial', 'armature', 'viscous',
                     'coulomb', 'lower', 'upper', 'velocity_limit', 'effort_limit', 'gravity'):
            put(self, name, _frozen(getattr(self, name)))
        put(self, 'frames', MappingProxyType(dict(self.frames)))
        put(self, 'mimic', MappingProxyType(dict(self.mimic)))
        if np.any(self.parent >= np.arange(n)):
            raise ValueError('bodies must be numbered so that parent[i] < i')

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
        fields = {k: getattr(self, k) for k in self.__dataclass_fields__
                  if self.__dataclass_fields__[k].init}
        for key, column in values.items():
            fields[key] = column(fields[key])
        return Model(**fields)

    def __repr__(self):
        kinds = ', '.join(f'{JOINT_TYPE_NAMES[t]}' for t in self.joint_type)
        shape = 'chain' if self.is_chain() else 'tree'
        return (f"Model('{self.name}', n={self.n}, {shape}, base='{self.base_link}', "
                f'joints: {kinds})')


# ---------------------------------------------------------------------------------------------------
# Joint dynamics overrides (armature, friction) from YAML
# ---------------------------------------------------------------------------------------------------

_DYNAMICS_FIELDS = {'armature': 'armature', 'viscous': 'viscous', 'coulomb': 'coulomb'}


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

    Fields left out keep the URDF's value (``<dynamics damping= friction=>``; armature 0).
    """
    source = read_yaml(source, 'joint dynamics', URDFError)
    if source is None:
        source = {}
    if not isinstance(source, Mapping):
        raise URDFError('joint dynamics must be a mapping of joint name to '
                        '{armature, viscous, coulomb}, got ' + type(source).__name__)
    if 'joint_dynamics' in source:
        source = source['joint_dynamics'] or {}
    index = {name: i for i, name in enumerate(joint_names)}
    updates = {key: {} for key in _DYNAMICS_FIELDS.values()}
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
            if not math.isfinite(value) or value < 0:
                raise URDFError(f"joint dynamics of '{joint}': {key} must be finite and >= 0, "
                                f'got {value}')
            updates[_DYNAMICS_FIELDS[key]][index[joint]] = value

    def setter(values):
        def apply(old):
            new = np.array(old, dtype=float)
            for i, v in values.items():
                new[i] = v
            return new
        return apply

    return {key: setter(values) for key, values in updates.items()}


# ---------------------------------------------------------------------------------------------------
# URDF loading
# ---------------------------------------------------------------------------------------------------

def _read_urdf(urdf) -> bytes:
    if isinstance(urdf, bytes):
        return urdf
    is_text = isinstance(urdf, str) and urdf.lstrip().startswith('<')
    if isinstance(urdf, os.PathLike) or (isinstance(urdf, str) and not is_text):
        path = os.fspath(urdf)
        if not os.path.isfile(path):
            raise FileNotFoundError(f'URDF file not found: {path}')
        with open(path, 'rb') as f:
            return f.read()
    if isinstance(urdf, str):
        return urdf.encode('utf-8')
    raise TypeError(f'urdf must be a file path or an XML string, got {type(urdf).__name__}')


def _parse(data: bytes):
    """Parse with lxml for a precise syntax error, then with yourdfpy (meshes never loaded)."""
    from lxml import etree
    import yourdfpy

    try:
        root = etree.fromstring(data, parser=etree.XMLParser(remove_comments=True))
    except etree.XMLSyntaxError as e:
        raise URDFError(f'URDF is not well-formed XML: {e}') from None
    if root.tag != 'robot':
        raise URDFError(f'URDF root element must be <robot>, found <{root.tag}>')
    try:
        urdf = yourdfpy.URDF.load(io.BytesIO(data), load_meshes=False, build_scene_graph=False,
                                  load_collision_meshes=False, build_collision_scene_graph=False)
        return urdf.robot
    except Exception as e:  # noqa: B902 - yourdfpy raises bare ValueError, TypeError, ...
        raise URDFError(f'URDF could not be read: {type(e).__name__}: {e}') from None


def _float_attr(value, what):
    if value is None:
        return 0.0
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise URDFError(f'{what} must be a number, got {value!r}') from None
    if not math.isfinite(v):
        raise URDFError(f'{what} must be finite, got {v}')
    return v


def _check_inertial(link, mass, inertia, check):
    """Raise (or warn) naming the link when its mass or inertia is not physically possible."""
    if not math.isfinite(mass) or mass < 0:
        raise InertiaError(f"link '{link}': mass must be finite and >= 0, got {mass}")
    if not np.all(np.isfinite(inertia)):
        raise InertiaError(f"link '{link}': inertia tensor has non-finite entries")
    if check == 'ignore':
        return
    ev = np.linalg.eigvalsh(inertia)
    # Tolerance: URDFs print inertias with ~6 significant digits, so a principal moment may round
    # to a relative 1e-6 below the physical bound; a tensor that is all zeros (a massless frame) is
    # valid.
    tol = 1e-6 * max(abs(ev).max(), 1e-300)
    problem = None
    if ev[0] < -tol:
        problem = (f'is not positive semi-definite (principal moments {ev[0]:.6g}, {ev[1]:.6g}, '
                   f'{ev[2]:.6g})')
    elif ev[0] + ev[1] < ev[2] - tol:
        problem = (f'violates the triangle inequality: principal moments {ev[0]:.6g} + '
                   f'{ev[1]:.6g} < {ev[2]:.6g}')
    elif mass == 0 and ev[2] > 0:
        problem = f'is not zero although the mass is zero (largest principal moment {ev[2]:.6g})'
    if problem is None:
        return
    message = f"link '{link}': inertia tensor {problem}"
    if check == 'raise':
        raise InertiaError(message + "; fix the URDF, or load it with check_inertia='warn'")
    warnings.warn(message, InertiaWarning, stacklevel=4)


def _standard_parameters(mass, com, inertia_com):
    """Khalil's 10 standard parameters about the frame origin from mass, CoM, inertia at CoM."""
    c = np.asarray(com, dtype=float)
    J = inertia_com + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2], *(mass * c), mass])


def load_model(urdf, *, root_link: str | None = None, tip_links: Sequence[str] | None = None,
               gravity=(0.0, 0.0, -9.81), joint_dynamics=None,
               check_inertia: str = 'raise') -> Model:
    """
    Build a :class:`Model` from a URDF file path or XML string; meshes are never touched.

    Parameters
    ----------
    urdf : str, bytes or path-like
        A path to a ``.urdf`` file, or the XML itself (a string starting with ``<``).
    root_link : str, optional
        The link to treat as the fixed base; default: the URDF's root link.  Everything above it is
        ignored (an arm on a mobile base: ``root_link='arm_base_link'``).
    tip_links : sequence of str, optional
        Keep only the joints on the paths from ``root_link`` to these links.  Movable joints that
        hang from a kept body but lead to no tip are locked at zero, and what they carry is merged
        into that body (the mass of a gripper beyond the chosen tip still loads the arm).
    gravity : array-like, shape (3,)
        Gravity acceleration in the base frame, m/s^2.
    joint_dynamics : str, path or mapping, optional
        Armature / friction overrides, see :func:`load_joint_dynamics`.
    check_inertia : {'raise', 'warn', 'ignore'}
        What to do with an inertia tensor that is not positive semi-definite or violates the
        triangle inequality.  Negative or non-finite masses always raise.

    Raises
    ------
    URDFError
        Malformed XML, a missing link, a cycle, duplicate names, floating or planar joints in the
        selection, a zero axis, non-numeric fields; :class:`InertiaError` for impossible inertias.

    """
    if check_inertia not in ('raise', 'warn', 'ignore'):
        raise ValueError("check_inertia must be 'raise', 'warn' or 'ignore', "
                         f'got {check_inertia!r}')
    g = np.asarray(gravity, dtype=float)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise ValueError(f'gravity must be 3 finite numbers, got {gravity!r}')
    robot = _parse(_read_urdf(urdf))

    links = {}
    for link in robot.links:
        if link.name in links:
            raise URDFError(f"link '{link.name}' is defined twice")
        links[link.name] = link
    joints, parent_joint, children = {}, {}, {name: [] for name in links}
    for joint in robot.joints:
        if joint.name in joints:
            raise URDFError(f"joint '{joint.name}' is defined twice")
        joints[joint.name] = joint
        for role, link in (('parent', joint.parent), ('child', joint.child)):
            if link not in links:
                raise URDFError(f"joint '{joint.name}' names {role} link '{link}', "
                                'which the URDF does not define')
        if joint.child in parent_joint:
            raise URDFError(f"link '{joint.child}' is the child of two joints, "
                            f"'{parent_joint[joint.child].name}' and '{joint.name}': a URDF must "
                            'be a tree (give closed loops as a tree plus loop constraints)')
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    _check_acyclic(links, parent_joint)

    if root_link is None:
        roots = [name for name in links if name not in parent_joint]
        if len(roots) != 1:
            raise URDFError(f'URDF has {len(roots)} root links ({", ".join(roots)}): all links '
                            'must hang from one root; pass root_link to choose one')
        root_link = roots[0]
    elif root_link not in links:
        raise URDFError(f"root_link '{root_link}' is not a link of the URDF")

    on_path = None
    if tip_links is not None:
        on_path = set()
        for tip in tip_links:
            if tip not in links:
                raise URDFError(f"tip link '{tip}' is not a link of the URDF")
            link = tip
            while link != root_link:
                if link not in parent_joint:
                    raise URDFError(f"tip link '{tip}' is not below root link '{root_link}'")
                on_path.add(link)
                link = parent_joint[link].parent

    bodies = []          # per body: joint, parent body, R, p (of the joint frame), unit axis
    inertial = []        # per body: 10 standard parameters
    frames = {root_link: Frame(-1, np.eye(3), np.zeros(3))}
    stack = [(root_link, child) for child in reversed(children[root_link])]
    while stack:                       # depth first, children in document order, as Pinocchio does
        parent_link, joint = stack.pop()
        frame = frames[parent_link]
        T = np.eye(4) if joint.origin is None else np.asarray(joint.origin, dtype=float)
        if not np.all(np.isfinite(T)):
            raise URDFError(f"joint '{joint.name}': origin has non-finite values")
        R = frame.R @ T[:3, :3]
        p = frame.R @ T[:3, 3] + frame.p
        movable = joint.type in ('revolute', 'continuous', 'prismatic')
        selected = on_path is None or joint.child in on_path
        if joint.type in ('floating', 'planar') and selected:
            raise URDFError(f"joint '{joint.name}' is {joint.type}: manipulator_dynamics models "
                            'fixed-base robots with one-coordinate joints; pass '
                            f"root_link='{joint.child}' to model what hangs below it")
        if joint.type not in ('revolute', 'continuous', 'prismatic', 'fixed', 'floating',
                              'planar'):
            raise URDFError(f"joint '{joint.name}' has unknown type '{joint.type}'")
        if movable and selected:
            axis = np.asarray((1.0, 0.0, 0.0) if joint.axis is None else joint.axis, dtype=float)
            norm = np.linalg.norm(axis)
            if not np.isfinite(norm) or norm < 1e-12:
                raise URDFError(f"joint '{joint.name}' has a zero or non-finite axis "
                                f'{axis.tolist()}')
            bodies.append((joint, frame.body, R, p, axis / norm))
            inertial.append(np.zeros(10))
            frames[joint.child] = Frame(len(bodies) - 1, np.eye(3), np.zeros(3))
        else:                          # fixed, or movable but outside the selection: locked at 0
            frames[joint.child] = Frame(frame.body, R, p)
        stack.extend((joint.child, child) for child in reversed(children[joint.child]))

    for name, frame in frames.items():
        link = links[name]
        if link.inertial is None or frame.body < 0:
            continue
        mass = _float_attr(link.inertial.mass, f"link '{name}': mass")
        inertia = np.zeros((3, 3)) if link.inertial.inertia is None else \
            np.asarray(link.inertial.inertia, dtype=float)
        _check_inertial(name, mass, inertia, check_inertia)
        T = np.eye(4) if link.inertial.origin is None else np.asarray(link.inertial.origin, float)
        R = frame.R @ T[:3, :3]
        inertial[frame.body] += _standard_parameters(mass, frame.R @ T[:3, 3] + frame.p,
                                                     R @ inertia @ R.T)

    n = len(bodies)
    lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
    velocity, effort = np.full(n, np.inf), np.full(n, np.inf)
    viscous, coulomb = np.zeros(n), np.zeros(n)
    for i, (joint, *_rest) in enumerate(bodies):
        where = f"joint '{joint.name}'"
        if joint.limit is not None:
            if joint.type != 'continuous':
                if joint.limit.lower is not None:
                    lower[i] = _float_attr(joint.limit.lower, f'{where}: limit lower')
                if joint.limit.upper is not None:
                    upper[i] = _float_attr(joint.limit.upper, f'{where}: limit upper')
            if joint.limit.velocity is not None:
                velocity[i] = abs(_float_attr(joint.limit.velocity, f'{where}: limit velocity'))
            if joint.limit.effort is not None:
                effort[i] = abs(_float_attr(joint.limit.effort, f'{where}: limit effort'))
        if joint.dynamics is not None:
            viscous[i] = _float_attr(joint.dynamics.damping, f'{where}: dynamics damping')
            coulomb[i] = _float_attr(joint.dynamics.friction, f'{where}: dynamics friction')
            if viscous[i] < 0 or coulomb[i] < 0:
                raise URDFError(f'{where}: dynamics damping and friction must be >= 0, '
                                f'got {viscous[i]} and {coulomb[i]}')

    names = [b[0].name for b in bodies]
    mimic = {}
    for joint, *_rest in bodies:
        if joint.mimic is not None and joint.mimic.joint in names:
            mimic[joint.name] = Mimic(joint.mimic.joint, float(joint.mimic.multiplier or 1.0),
                                      float(joint.mimic.offset or 0.0))
    model = Model(
        name=robot.name or 'robot', base_link=root_link, joint_names=names,
        link_names=[b[0].child for b in bodies],
        parent=np.array([b[1] for b in bodies], dtype=np.int64),
        joint_type=np.array([PRISMATIC if b[0].type == 'prismatic' else REVOLUTE for b in bodies],
                            dtype=np.int64),
        continuous=np.array([b[0].type == 'continuous' for b in bodies], dtype=bool),
        axis=np.array([b[4] for b in bodies]).reshape(n, 3),
        R_parent_joint=np.array([b[2] for b in bodies]).reshape(n, 3, 3),
        p_parent_joint=np.array([b[3] for b in bodies]).reshape(n, 3),
        inertial=np.array(inertial).reshape(n, 10), armature=np.zeros(n), viscous=viscous,
        coulomb=coulomb, lower=lower, upper=upper, velocity_limit=velocity, effort_limit=effort,
        gravity=g, frames=frames, mimic=mimic)
    if joint_dynamics is not None:
        model = model.with_joint_dynamics(joint_dynamics)
    return model


def _check_acyclic(links, parent_joint):
    """Raise naming the links of a cycle, if following parents from some link comes back to it."""
    done = set()
    for start in links:
        path, link = [], start
        while link in parent_joint and link not in done:
            if link in path:
                cycle = path[path.index(link):]
                raise URDFError('URDF joints form a cycle through links ' +
                                ' -> '.join(cycle + [link]))
            path.append(link)
            link = parent_joint[link].parent
        done.update(path)
