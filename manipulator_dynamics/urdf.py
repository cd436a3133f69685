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
Loading a :class:`~manipulator_dynamics.Model` from URDF, step by step.

:func:`load_model` reads the XML with lxml (a syntax error says its line; each element is read
here, its error naming the link or joint and the attribute; meshes are never touched), checks
that the joints make a tree, picks the base and the joints kept (``root_link``,
``tip_links``), walks the tree into bodies (fixed joints and locked joints merge their links
into the body above), sums each body's inertial parameters, and reads limits,
friction and mimic relations.  Every error names the link, joint or field at fault.
"""

import math
import os
from typing import NamedTuple, Sequence
import warnings

import numpy as np

from .inertia import is_mass_distribution, tensor_fault
from .model import (central_inertia, finite_number, Frame, InertiaError, InertiaWarning,
                    link_parameters, load_parameters, Mimic, Model, parameter_problems, PRISMATIC,
                    REVOLUTE, URDFError)
from .transmissions import from_urdf as transmissions_of_urdf, load as load_transmissions


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


def _parse(data: bytes, with_root=False):
    """
    Read the URDF's ``<robot>``: its links and joints as :class:`_Robot` (meshes never loaded).

    lxml parses (a syntax error says its line); the elements are read here, each field's
    error naming its link or joint and the attribute.  What urdfdom requires is required:
    a name on every link and joint, a joint's type, parent and child, an inertial's mass value
    and all six inertia attributes.  ``with_root``: return the lxml ``<robot>`` element too
    (what the model reads beside: the ros2_control transmissions).
    """
    from lxml import etree

    try:
        root = etree.fromstring(data, parser=etree.XMLParser(remove_comments=True))
    except etree.XMLSyntaxError as e:
        raise URDFError(f'URDF is not well-formed XML: {e}') from None
    if root.tag != 'robot':
        raise URDFError(f'URDF root element must be <robot>, found <{root.tag}>')
    robot = _Robot(root.get('name'), [_read_link(e) for e in root.findall('link')],
                   [_read_joint(e) for e in root.findall('joint')])
    return (robot, root) if with_root else robot


class _Robot(NamedTuple):
    name: str
    links: list
    joints: list


class _Link(NamedTuple):
    name: str
    inertial: object            # _Inertial or None


class _Inertial(NamedTuple):
    origin: np.ndarray          # (4, 4) or None
    mass: float
    inertia: np.ndarray         # (3, 3)


class _Joint(NamedTuple):
    name: str
    type: str                   # noqa: A003 - the URDF's attribute, as every reader names it
    parent: str
    child: str
    origin: np.ndarray          # (4, 4) or None
    axis: np.ndarray            # (3,)
    limit: object               # _Limit or None
    dynamics: object            # _Dynamics or None
    mimic: object               # _Mimic or None


class _Limit(NamedTuple):
    effort: float
    velocity: float
    lower: float
    upper: float


class _Dynamics(NamedTuple):
    damping: str                # as written, None where absent (read where used)
    friction: str


class _Mimic(NamedTuple):
    joint: str
    multiplier: float
    offset: float


def _named(element, kind):
    """Return the ``name`` of a ``<link>`` or ``<joint>`` element, or raise saying where."""
    name = element.get('name')
    if not name:
        raise URDFError(f'a <{kind}> without a name (line {element.sourceline})')
    return name


def _numbers(element, attribute, count, where, default=None):
    """Return ``count`` numbers of ``element``'s ``attribute`` (``default`` text if absent)."""
    text = element.get(attribute, default)
    if text is None:
        raise URDFError(f'{where}: <{element.tag}> has no {attribute}')
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        values = []
    if len(values) != count:
        raise URDFError(f"{where}: <{element.tag}> {attribute}='{text}' is not {count} "
                        f'number{"s" if count > 1 else ""}')
    return values


def _number_or_none(element, attribute, where):
    """Return a number attribute, or None where the element or the attribute is absent."""
    if element is None or element.get(attribute) is None:
        return None
    return _numbers(element, attribute, 1, where)[0]


def _origin(element, where):
    """Return an ``<origin>``'s 4x4 transform (``xyz``, then ``rpy`` fixed-axis x-y-z), or None."""
    if element is None:
        return None
    xyz = np.array(_numbers(element, 'xyz', 3, where, '0 0 0'))
    roll, pitch, yaw = np.array(_numbers(element, 'rpy', 3, where, '0 0 0'))
    sr, sp, sy = np.sin(roll), np.sin(pitch), np.sin(yaw)
    cr, cp, cy = np.cos(roll), np.cos(pitch), np.cos(yaw)
    cc, cs, sc, ss = cr * cy, cr * sy, sr * cy, sr * sy
    R = np.identity(4)                          # Rz(yaw) Ry(pitch) Rx(roll), in this order of
    R[:3, :3] = [[cp * cy, sp * sc - cs, sp * cc + ss],     # products (yourdfpy's, to the bit)
                 [cp * sy, sp * ss + cc, sp * cs - sc],
                 [-sp, cp * sr, cp * cr]]
    T = np.identity(4)
    T[:3, 3] = xyz
    return np.dot(np.dot(np.identity(4), T), R)     # the transform as yourdfpy composed it


def _read_link(element):
    name = _named(element, 'link')
    inertial = element.find('inertial')
    if inertial is None:
        return _Link(name, None)
    where = f"link '{name}': inertial"
    origin = _origin(inertial.find('origin'), where)
    values = []
    for tag, keys in (('mass', ('value',)), ('inertia', ('ixx', 'ixy', 'ixz', 'iyy', 'iyz',
                                                         'izz'))):
        element = inertial.find(tag)
        if element is None:
            raise URDFError(f'{where} has no <{tag}>')
        values += [_numbers(element, key, 1, where)[0] for key in keys]
    mass, xx, xy, xz, yy, yz, zz = values
    return _Link(name, _Inertial(origin, mass, np.array(
        [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=np.float64)))


def _read_joint(element):
    name = _named(element, 'joint')
    where = f"joint '{name}'"
    kind = element.get('type')
    if not kind:
        raise URDFError(f'{where} has no type')
    ends = []
    for role in ('parent', 'child'):
        end = element.find(role)
        if end is None or not end.get('link'):
            raise URDFError(f'{where} has no <{role} link=...>')
        ends.append(end.get('link'))
    axis = element.find('axis')
    limit, dynamics, mimic = (element.find(tag) for tag in ('limit', 'dynamics', 'mimic'))
    return _Joint(
        name, kind, *ends, _origin(element.find('origin'), where),
        np.array([1.0, 0.0, 0.0]) if axis is None else
        np.array(_numbers(axis, 'xyz', 3, where, '1 0 0')),
        None if limit is None else _Limit(*(_number_or_none(limit, key, where) for key in (
            'effort', 'velocity', 'lower', 'upper'))),
        None if dynamics is None else _Dynamics(dynamics.get('damping'),
                                                dynamics.get('friction')),
        None if mimic is None else _Mimic(
            mimic.get('joint'), _numbers(mimic, 'multiplier', 1, where, '1')[0],
            _numbers(mimic, 'offset', 1, where, '0')[0]))


def _float_attr(value, what):
    return 0.0 if value is None else finite_number(value, what)


def _check_inertial(link, mass, inertia, check):
    """Raise (or warn) naming the link when its mass or inertia is not physically possible."""
    if not math.isfinite(mass) or mass < 0:
        raise InertiaError(f"link '{link}': mass must be finite and >= 0, got {mass}")
    if not np.all(np.isfinite(inertia)):
        raise InertiaError(f"link '{link}': inertia tensor has non-finite entries")
    if check == 'ignore':
        return
    fault = tensor_fault(inertia, mass)
    if fault is None:
        return
    message = f"link '{link}': inertia tensor {fault}"
    if check == 'raise':
        raise InertiaError(message + "; fix the URDF, or load it with check_inertia='warn'")
    warnings.warn(message, InertiaWarning, stacklevel=5)     # to load_model's caller


def load_model(urdf, *, root_link: str | None = None, tip_links: Sequence[str] | None = None,
               gravity=(0.0, 0.0, -9.81), joint_dynamics=None, parameters=None,
               check_inertia: str = 'raise',
               without_links: Sequence[str] | None = None, transmissions=None) -> Model:
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
    without_links : sequence of str, optional
        Links that are not mounted on the robot (a hand, a tool): each is left out with
        everything below it, its mass and its joints, as if the URDF ended above it.
    gravity : array-like, shape (3,)
        Gravity acceleration in the base frame, m/s^2.
    joint_dynamics : str, path or mapping, optional
        Armature / friction overrides, see :func:`load_joint_dynamics`.
    parameters : str, path or mapping, optional
        Standard parameters to use instead of the URDF's (identified ones: a YAML written by
        ``manipulator-dynamics identify --parameters-out``), see :func:`load_parameters`;
        applied after ``joint_dynamics``.  Impossible ones are treated as ``check_inertia``
        says.
    check_inertia : {'raise', 'warn', 'ignore'}
        What to do with an inertia tensor that is not positive semi-definite or violates the
        triangle inequality.  Negative or non-finite masses always raise.
    transmissions : str, path or mapping, optional
        The motors' transmissions (a YAML, see :mod:`~manipulator_dynamics.transmissions`),
        instead of the URDF's ``<transmission>`` elements, which are read otherwise.  They map a
        log's motor-side columns to the joints (:attr:`Model.transmissions`).

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
    data = _read_urdf(urdf)
    robot, root = _parse(data, with_root=True)
    links, parent_joint, children = _link_tree(robot)
    root_link = _root(links, parent_joint, root_link)
    _unmount(links, parent_joint, children, root_link, without_links or ())
    selected = _selection(links, parent_joint, root_link, tip_links)
    bodies, frames = _bodies(root_link, children, selected)
    n = len(bodies)
    limits = _joint_limits(bodies)
    model = Model(
        name=robot.name or 'robot', base_link=root_link,
        joint_names=[b.joint.name for b in bodies],
        link_names=[b.joint.child for b in bodies],
        parent=np.array([b.parent for b in bodies], dtype=np.int64),
        joint_type=np.array([PRISMATIC if b.joint.type == 'prismatic' else REVOLUTE
                             for b in bodies], dtype=np.int64),
        continuous=np.array([b.joint.type == 'continuous' for b in bodies], dtype=bool),
        axis=np.array([b.axis for b in bodies]).reshape(n, 3),
        R_parent_joint=np.array([b.R for b in bodies]).reshape(n, 3, 3),
        p_parent_joint=np.array([b.p for b in bodies]).reshape(n, 3),
        inertial=_inertial_parameters(links, frames, n, check_inertia),
        armature=np.zeros(n), **limits, gravity=g, frames=frames, mimic=_mimic(bodies),
        urdf=data, transmissions=_transmissions(root, transmissions, robot,
                                                [b.joint.name for b in bodies]))
    if joint_dynamics is not None:
        model = model.with_joint_dynamics(joint_dynamics)
    if parameters is not None:
        names, values = load_parameters(parameters)
        try:
            model = model.with_parameters(values, names)
        except ValueError as e:
            raise URDFError(f'parameters: {e}') from None
        problems = parameter_problems(model) if check_inertia != 'ignore' else []
        if problems and check_inertia == 'raise':
            raise InertiaError('parameters: ' + '; '.join(problems))
        for problem in problems:
            warnings.warn(f'parameters: {problem}', InertiaWarning, stacklevel=2)
    return model


def _transmissions(root, source, robot, model_joints):
    """Return the model's transmissions: the YAML's, else the URDF's; None if there are none."""
    urdf_joints = [j.name for j in robot.joints]
    name = robot.name or 'robot'
    found = load_transmissions(source, urdf_joints) if source is not None else \
        transmissions_of_urdf(root, urdf_joints)
    return None if found is None else found.restricted(model_joints, f"model '{name}'")


class _Body(NamedTuple):
    """A movable joint kept in the model: its body's parent and its frame at ``q = 0``."""

    joint: object
    parent: int
    R: np.ndarray
    p: np.ndarray
    axis: np.ndarray


def _link_tree(robot):
    """Index links and joints by name; check that the joints make a tree of defined links."""
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
    return links, parent_joint, children


def _root(links, parent_joint, root_link):
    """Return the fixed base: ``root_link`` checked, or the URDF's one root."""
    if root_link is None:
        roots = [name for name in links if name not in parent_joint]
        if len(roots) != 1:
            raise URDFError(f'URDF has {len(roots)} root links ({", ".join(roots)}): all links '
                            'must hang from one root; pass root_link to choose one')
        return roots[0]
    if root_link not in links:
        raise URDFError(f"root_link '{root_link}' is not a link of the URDF")
    return root_link


def _unmount(links, parent_joint, children, root_link, without_links):
    """Remove each of ``without_links`` and its subtree from the tree, in place."""
    for name in without_links:
        if name not in links:
            raise URDFError(f"without_links: '{name}' is not a link of the URDF (or is below "
                            'another link left out)')
        link = name
        while link != root_link and link in parent_joint:
            link = parent_joint[link].parent
        if name == root_link or link != root_link:
            raise URDFError(f"without_links: '{name}' is not below root link '{root_link}'")
        joint = parent_joint.pop(name)
        children[joint.parent].remove(joint)
        below = [name]
        while below:
            link = below.pop()
            below += [j.child for j in children.pop(link)]
            parent_joint.pop(link, None)
            del links[link]


def _selection(links, parent_joint, root_link, tip_links):
    """Return the links on the paths from the root to ``tip_links`` (None: every link)."""
    if tip_links is None:
        return None
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
    return on_path


def _bodies(root_link, children, selected):
    """
    Walk the tree from the root: one body per selected movable joint, every link's frame.

    Depth first, children in document order, as Pinocchio numbers them.  Fixed joints, and
    movable ones outside the selection (locked at zero), merge their child into the body above.
    """
    bodies = []
    frames = {root_link: Frame(-1, np.eye(3), np.zeros(3))}
    stack = [(root_link, child) for child in reversed(children[root_link])]
    while stack:
        parent_link, joint = stack.pop()
        frame = frames[parent_link]
        T = np.eye(4) if joint.origin is None else np.asarray(joint.origin, dtype=float)
        if not np.all(np.isfinite(T)):
            raise URDFError(f"joint '{joint.name}': origin has non-finite values")
        R = frame.R @ T[:3, :3]
        p = frame.R @ T[:3, 3] + frame.p
        movable = joint.type in ('revolute', 'continuous', 'prismatic')
        kept = selected is None or joint.child in selected
        if joint.type in ('floating', 'planar') and kept:
            raise URDFError(f"joint '{joint.name}' is {joint.type}: manipulator_dynamics models "
                            'fixed-base robots with one-coordinate joints; pass '
                            f"root_link='{joint.child}' to model what hangs below it")
        if joint.type not in ('revolute', 'continuous', 'prismatic', 'fixed', 'floating',
                              'planar'):
            raise URDFError(f"joint '{joint.name}' has unknown type '{joint.type}'")
        if movable and kept:
            axis = np.asarray((1.0, 0.0, 0.0) if joint.axis is None else joint.axis, dtype=float)
            norm = np.linalg.norm(axis)
            if not np.isfinite(norm) or norm < 1e-12:
                raise URDFError(f"joint '{joint.name}' has a zero or non-finite axis "
                                f'{axis.tolist()}')
            bodies.append(_Body(joint, frame.body, R, p, axis / norm))
            frames[joint.child] = Frame(len(bodies) - 1, np.eye(3), np.zeros(3))
        else:
            frames[joint.child] = Frame(frame.body, R, p)
        stack.extend((joint.child, child) for child in reversed(children[joint.child]))
    return bodies, frames


def _inertial_parameters(links, frames, n, check_inertia):
    """Sum the 10 standard parameters of each body, every link merged into it included."""
    inertial = np.zeros((n, 10))
    for name, phi in _link_parameters(links, frames, check_inertia).items():
        inertial[frames[name].body] += phi
    return inertial


def _link_parameters(links, frames, check_inertia):
    """Return ``{link: its 10 parameters in its body's frame}`` for links with an inertial."""
    out = {}
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
        out[name] = link_parameters(mass, frame.R @ T[:3, 3] + frame.p, R @ inertia @ R.T)
    return out


def _joint_limits(bodies):
    """Read position, velocity and effort limits, viscous and Coulomb friction: Model fields."""
    n = len(bodies)
    lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
    velocity, effort = np.full(n, np.inf), np.full(n, np.inf)
    viscous, coulomb = np.zeros(n), np.zeros(n)
    for i, body in enumerate(bodies):
        joint = body.joint
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
    return {'lower': lower, 'upper': upper, 'velocity_limit': velocity, 'effort_limit': effort,
            'viscous': viscous, 'coulomb': coulomb}


def _mimic(bodies):
    """Read the URDF mimic relations between joints of the model."""
    names = [b.joint.name for b in bodies]
    return {b.joint.name: Mimic(b.joint.mimic.joint, float(b.joint.mimic.multiplier or 1.0),
                                float(b.joint.mimic.offset or 0.0))
            for b in bodies if b.joint.mimic is not None and b.joint.mimic.joint in names}


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


# ---------------------------------------------------------------------------------------------------
# Writing a model's parameters back into its URDF
# ---------------------------------------------------------------------------------------------------

def urdf_inertials(model):
    """Return the bodies' ten parameters as the model's URDF text gives them, ``(n, 10)``."""
    links = _link_tree(_parse(model.urdf))[0]
    return _inertial_parameters(links, model.frames, model.n, 'ignore')


def write_urdf(model, path=None):
    """
    Return (and write to ``path``) the model's URDF with the model's inertials and friction.

    Everything else of the document the model was loaded from stays as it was (comments too).
    Each body's ten parameters go to the inertial of its own link (the joint's child), less what
    links fixed to it carry in the URDF, so that loading the file gives the model's parameters
    back.  When that difference is not realisable (the identified body is lighter than its fixed
    children), the whole body goes to its own link and the fixed children lose their inertials;
    links merged by a *locked* movable joint (outside ``tip_links``) are never stripped, since
    another selection would move them.  Friction goes to ``<dynamics damping= friction=>`` of
    the joints where it differs from the URDF's; rotor inertia has no URDF element (see
    :func:`write_joint_dynamics`).

    Raises
    ------
    URDFError
        The model has no URDF, or a body cannot be written (names the links).

    """
    from lxml import etree

    if model.urdf is None:
        raise URDFError(f"model '{model.name}' was not loaded from a URDF: nothing to write into")
    robot = _parse(model.urdf)
    links, parent_joint, _ = _link_tree(robot)
    frames = model.frames
    original = _link_parameters(links, frames, 'ignore')
    root = etree.fromstring(model.urdf)
    elements = {(e.tag, e.get('name')): e for e in root if e.tag in ('link', 'joint')}
    for i, own in enumerate(model.link_names):
        others = [name for name in original if frames[name].body == i and name != own]
        phi = model.inertial[i] - sum((original[name] for name in others), np.zeros(10))
        if not is_mass_distribution(phi):
            locked = [name for name in others if not _fixed_to(name, own, parent_joint)]
            if locked:
                raise URDFError(
                    f"body of link '{own}': the identified inertia is less than what links "
                    f'{", ".join(locked)} (merged by a locked movable joint) carry in the URDF, '
                    'and they cannot be stripped: load the model with those joints selected')
            phi = np.array(model.inertial[i])
            for name in others:
                _set_inertial(elements[('link', name)], None)
            if not is_mass_distribution(phi):
                raise URDFError(f"body of link '{own}': its parameters are not physically "
                                'realisable (identify with physically_consistent=True)')
        _set_inertial(elements[('link', own)], phi)
        joint = model.joint_names[i]
        urdf_joint = next(j for j in robot.joints if j.name == joint)
        dyn = urdf_joint.dynamics
        old = (_float_attr(dyn.damping, 'damping') if dyn else 0.0,
               _float_attr(dyn.friction, 'friction') if dyn else 0.0)
        new = (float(model.viscous[i]), float(model.coulomb[i]))
        if not np.allclose(old, new, rtol=1e-12, atol=0.0):
            element = elements[('joint', joint)]
            dynamics = element.find('dynamics')
            if dynamics is None:
                dynamics = etree.SubElement(element, 'dynamics')
            dynamics.set('damping', _number(new[0]))
            dynamics.set('friction', _number(new[1]))
    text = etree.tostring(root, encoding='unicode')
    text = '<?xml version="1.0"?>\n' + text + '\n'
    if path is not None:
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
    return text


def write_joint_dynamics(model, path=None):
    """
    Return (and write to ``path``) the joint-dynamics YAML of what URDF cannot say.

    Per joint, where nonzero: the rotor inertia, the friction offset and the Coulomb velocity
    of a smooth law (:func:`~manipulator_dynamics.model.load_joint_dynamics` reads it back).
    """
    import yaml

    entries = {}
    for i, joint in enumerate(model.joint_names):
        entry = {key: float(values[i]) for key, values in (
            ('armature', model.armature), ('offset', model.friction_offset),
            ('coulomb_velocity', model.coulomb_velocity)) if values[i] != 0}
        if entry:
            entries[joint] = entry
    text = yaml.safe_dump({'joint_dynamics': entries}, sort_keys=False)
    if path is not None:
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
    return text


def _fixed_to(link, ancestor, parent_joint):
    """Tell whether ``link`` hangs from ``ancestor`` through fixed joints only."""
    while link != ancestor:
        joint = parent_joint[link]
        if joint.type != 'fixed':
            return False
        link = joint.parent
    return True


def _number(x):
    return repr(float(x))


def _set_inertial(link, phi):
    """Replace a link element's ``<inertial>`` (in place, where it was) by ``phi``; None: drop."""
    from lxml import etree

    old = link.find('inertial')
    if phi is None or np.all(phi == 0):
        if old is not None:
            link.remove(old)
        return
    m, c, inertia = central_inertia(phi)
    new = etree.Element('inertial')
    etree.SubElement(new, 'origin', xyz=' '.join(_number(x) for x in c), rpy='0 0 0')
    etree.SubElement(new, 'mass', value=_number(m))
    etree.SubElement(new, 'inertia', **{
        key: _number(inertia[a, b]) for key, (a, b) in (
            ('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)), ('iyz', (1, 2)),
            ('izz', (2, 2)))})
    if old is None:
        link.insert(0, new)
    else:
        new.tail = old.tail
        link.replace(old, new)
