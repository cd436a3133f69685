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
Flexible-link arms as finite-element models (Isobe & Imaizumi, section 2).

Every link is a straight chain of linear Timoshenko beam elements from its joint to the next joint
(Isobe & Imaizumi's Fig. 2): stiffness by one-point integration at the element midpoint, element
mass lumped half to each of its two nodes, motor and payload masses at nodes.  Coordinates are
absolute Cartesian (3-D; a planar arm is the 3-D model lying in a plane).

The arm keeps its rigid skeleton, a :class:`~manipulator_dynamics.Model`, for the operating motion
``u_m`` (where every node would be if the links were rigid).  A node is fixed in the frame of the
body that carries it: the node of joint ``i + 1`` belongs to link ``i``, the node of the first
joint to the base.  A link given infinite stiffness is rigid: the same code path treats it as
the limit.

Element axes: ``x`` along the link, ``z`` the joint axis's component across the link (so bending
about ``z`` is bending in the plane in which the joint swings the link), ``y = z x x``.
"""

from dataclasses import dataclass, field
import math

import numpy as np

from . import beam
from .description import (beam_entries, COG, DISTRIBUTED, FlexibleArmError, Link, link_entry,
                          nonnegative, per_link, pick, positive, read_document)
from ..model import Model, REVOLUTE

# Shear, axial and torsional rigidity default to "stiff" relative to bending: a shear flexibility
# 12 EI / (GA l^2) of 1e-4 per element (a slender beam; Euler-Bernoulli behaviour), axial stretch
# of the same order, torsion equal to the smaller bending rigidity (a round tube has GJ ~ 0.77 EI).
_STIFF = 1.0e4

# A rigid link inside a flexible arm is a beam whose stiffness matrix is this many times the
# largest entry of any flexible element's (the limit of infinite stiffness, kept finite so that
# the band Cholesky stays accurate: its bending is then ~1e7 times a flexible link's, and the
# condition number of the effective stiffness stays near 1e12).
_RIGID_FACTOR = 1.0e3


def timoshenko_stiffness(length, ei_y, ei_z, ga, ea, gj):
    """
    Stiffness of a linear Timoshenko beam element with one-point (midpoint) integration.

    Local degrees of freedom, node 1 then node 2: ``(u, v, w, theta_x, theta_y, theta_z)``.
    Bending uses the rotation field (``EI/l`` on the rotations); the shear strain
    ``v' - theta_z`` (and ``w' + theta_y``) is evaluated once, at the midpoint, which removes
    shear locking and is exact for bending (Isobe & Imaizumi, section 2).

    Returns
    -------
    ndarray, shape (12, 12)

    """
    k = np.zeros((12, 12))
    for a, b, c in ((0, 6, ea / length), (3, 9, gj / length), (4, 10, ei_y / length),
                    (5, 11, ei_z / length)):
        k[a, a] += c
        k[b, b] += c
        k[a, b] -= c
        k[b, a] -= c
    # shear in the x-y plane: gamma_y = (v2 - v1)/l - (theta_z1 + theta_z2)/2
    # shear in the x-z plane: gamma_z = (w2 - w1)/l + (theta_y1 + theta_y2)/2
    for dofs, sign in (((1, 5, 7, 11), -1.0), ((2, 4, 8, 10), 1.0)):
        bvec = np.array([-1.0 / length, sign * 0.5, 1.0 / length, sign * 0.5])
        idx = np.array(dofs)
        k[np.ix_(idx, idx)] += ga * length * np.outer(bvec, bvec)
    return k


def _perpendicular(x, hint):
    """Return a unit vector perpendicular to the unit ``x``, as close to ``hint`` as possible."""
    z = hint - np.dot(hint, x) * x
    if np.linalg.norm(z) < 1e-9:
        trial = np.eye(3)[int(np.argmin(np.abs(x)))]
        z = trial - np.dot(trial, x) * x
    return z / np.linalg.norm(z)


@dataclass(frozen=True, eq=False)
class FlexibleArm:
    """
    A serial arm of flexible (or rigid) links, discretised into Timoshenko beam elements.

    Build one with :meth:`planar` or :meth:`from_model` (a URDF plus beam YAML).  Arrays are
    read-only.

    Attributes
    ----------
    model : Model
        The rigid skeleton (joints, axes, link frames) that gives the operating motion.
    links : tuple of Link, length n
        Beam properties of each link, in joint order.
    node_body : ndarray of int, shape (N,)
        The body each node is fixed to in the rigid motion (-1: the base).
    node_r : ndarray, shape (N, 3)
        Node position in that body's frame.
    node_mass : ndarray, shape (N,)
        Lumped mass of each node: half of each adjacent element (or the link's mass where its
        ``mass_at`` puts it), plus motor and payload masses.
    joint_node : ndarray of int, shape (n,)
        The node at each joint.  Nodes are numbered outwards: node 0 is the first joint, and the
        nodes outboard of joint ``i`` are exactly those numbered ``joint_node[i]`` and above.
    tip_node : ndarray of int, shape (n,)
        The node at the far end of each link.
    element_nodes : ndarray of int, shape (E, 2)
        The two nodes of each element (consecutive numbers).
    element_link : ndarray of int, shape (E,)
        The link each element belongs to.
    element_axes : ndarray, shape (E, 3, 3)
        The element axes (columns x, y, z) in the frame of its link.
    element_stiffness : ndarray, shape (E, 12, 12)
        Element stiffness in element axes (:func:`timoshenko_stiffness`).
    element_damping : ndarray, shape (E, 2)
        Rayleigh coefficients (alpha, beta) of each element: ``C_e = alpha M_e + beta K_e``.
    damping_mass : ndarray, shape (N,)
        ``alpha M`` lumped at the nodes: each link's mass where it sits times its ``alpha``.

    """

    model: Model
    links: tuple
    node_body: np.ndarray
    node_r: np.ndarray
    node_mass: np.ndarray
    joint_node: np.ndarray
    tip_node: np.ndarray
    element_nodes: np.ndarray
    element_link: np.ndarray
    element_axes: np.ndarray
    element_stiffness: np.ndarray
    element_damping: np.ndarray
    damping_mass: np.ndarray
    element_length: np.ndarray = field(repr=False)
    motor_masses: np.ndarray = field(repr=False)
    payload: float = field(repr=False)
    tip: np.ndarray = field(repr=False)

    @property
    def n(self) -> int:
        """Give the number of joints (and links)."""
        return self.model.n

    @property
    def joint_names(self) -> tuple:
        """Joint names, in the model's order."""
        return self.model.joint_names

    @property
    def rigid(self) -> bool:
        """Tell whether no link can bend: the deformation is then identically zero."""
        return all(link.rigid for link in self.links)

    def __repr__(self):
        kinds = ', '.join('rigid' if link.rigid else f'{link.elements} el.' for link in self.links)
        return (f"FlexibleArm('{self.model.name}', n={self.n}, nodes={len(self.node_mass)}, "
                f'links: {kinds})')

    # -----------------------------------------------------------------------------------------
    # Construction
    # -----------------------------------------------------------------------------------------

    @classmethod
    def planar(cls, lengths, masses, flexural_rigidity, elements_per_link=4, *,
               shear_rigidity=None, axial_rigidity=None, torsional_rigidity=None,
               damping=(0.0, 0.0), mass_at=None, motor_masses=None, payload=0.0,
               gravity=(0.0, -9.81, 0.0), base=(0.0, 0.0, 0.0), joint_names=None,
               name='planar_arm'):
        """
        Build a planar chain as in the paper: links along their ``x`` axes, joints about ``z``.

        The arm lies in the ``x-y`` plane at ``q = 0`` (stretched along ``x``).  The default
        gravity is ``-y``: the vertical plane of Isobe & Imaizumi's 3-link test; pass
        ``gravity=(0, 0, -9.81)`` for a horizontal plane.

        Parameters
        ----------
        lengths, masses : sequence of float, length n
            Link lengths (m) and masses (kg), each spread uniformly along its link.
        flexural_rigidity : float or sequence, length n
            ``EI`` (N m^2) of each link about both bending axes; a pair ``(EI_y, EI_z)`` per link
            for different ones; ``inf`` for a rigid link.
        elements_per_link : int or sequence of int
            Timoshenko elements per link (Isobe & Imaizumi use 4).
        shear_rigidity, axial_rigidity, torsional_rigidity : float or sequence, optional
            ``kappa G A`` (N), ``E A`` (N), ``G J`` (N m^2); default: stiff relative to bending.
        damping : pair or sequence of pairs
            Rayleigh ``(alpha, beta)`` per link: ``C = alpha M + beta K``.
        mass_at : str, sequence of int, or sequence of those, optional
            Where each link's mass sits: ``'distributed'`` (default: half of every element's to
            each of its nodes), ``'cog'`` (all of it at the node of the link's centre of
            gravity, mid-link here: Isobe & Imaizumi's pin-joint rigid-bar link; needs an even
            number of elements), or the link's node numbers (0 its joint, ``elements`` its far
            end) sharing it equally.  One value for all links or one per link.
        motor_masses : sequence of float, length n, optional
            Point masses at the joint nodes (``motor_masses[0]`` sits on the base: no effect).
        payload : float
            A point mass at the tip of the last link.
        base : array-like, shape (3,)
            Where the first joint is in the base frame (a second chain of a closed loop).
        gravity : array-like, shape (3,)
            Gravity in the base frame, m/s^2.
        joint_names : sequence of str, optional
            Default ``joint1 .. jointn``; the links are ``link1 .. linkn``, or ``<joint>_link``.
        name : str
            The arm's name (its model's).

        """
        lengths = per_link(lengths, None, 'lengths')
        n = len(lengths)
        masses = per_link(masses, n, 'masses')
        for i in range(n):
            positive(lengths[i], f'link {i + 1}', 'length')
        props = {'flexural_rigidity': flexural_rigidity, 'shear_rigidity': shear_rigidity,
                 'axial_rigidity': axial_rigidity, 'torsional_rigidity': torsional_rigidity,
                 'damping': damping, 'elements': elements_per_link, 'mass_at': mass_at}
        beams = {}
        if joint_names is None:
            names = [f'joint{i + 1}' for i in range(n)]
            link_names = [f'link{i + 1}' for i in range(n)]
        else:
            names = [str(j) for j in joint_names]
            if len(names) != n or len(set(names)) != n:
                raise FlexibleArmError(f'joint_names needs {n} distinct names, got {names}')
            link_names = [f'{j}_link' for j in names]
        for i in range(n):
            entry = {'mass': masses[i]}
            for key, value in props.items():
                if value is None:
                    continue
                entry[key] = pick(value, i, n, key)
            beams[link_names[i]] = entry
        eye = np.tile(np.eye(3), (n, 1, 1))
        p = np.zeros((n, 3))
        p[1:, 0] = lengths[:-1]
        try:
            p[0] = np.asarray(base, float).reshape(3)
        except (TypeError, ValueError):
            raise FlexibleArmError(f'base must be 3 numbers, got {base!r}') from None
        model = Model(name=name, base_link='base', joint_names=names,
                      link_names=link_names,
                      parent=np.arange(-1, n - 1), joint_type=np.full(n, REVOLUTE),
                      continuous=np.zeros(n, bool), axis=np.tile([0.0, 0.0, 1.0], (n, 1)),
                      R_parent_joint=eye, p_parent_joint=p, inertial=np.zeros((n, 10)),
                      armature=np.zeros(n), viscous=np.zeros(n), coulomb=np.zeros(n),
                      lower=np.full(n, -np.inf), upper=np.full(n, np.inf),
                      velocity_limit=np.full(n, np.inf), effort_limit=np.full(n, np.inf),
                      gravity=np.asarray(gravity, float))
        tip = [lengths[-1], 0.0, 0.0]
        return cls._build(model, beams, tip, motor_masses, payload)

    @classmethod
    def from_model(cls, model, beams, *, tip=None, motor_masses=None, payload=0.0):
        """
        Build a flexible arm on the skeleton of a rigid serial ``model`` (:func:`load_model`).

        Link ``i`` is a beam from joint ``i`` to joint ``i + 1`` (the last link: to ``tip``).  Its
        mass is the URDF link mass (or ``mass`` from ``beams``) spread uniformly along the beam:
        the beam is a line, so the URDF's centre-of-mass offset and rotational inertia are not
        represented.  A link of zero length (coincident joints, as in a spherical wrist) carries
        no element; its mass sits at its joint node.

        Parameters
        ----------
        model : Model
            A serial chain (``model.is_chain()``).
        beams : mapping or str
            ``{link_name: {flexural_rigidity, shear_rigidity, axial_rigidity,
            torsional_rigidity, mass, elements, damping, mass_at}}``, or a YAML file / text
            holding it (optionally under a top-level ``links:`` key, with ``tip``,
            ``motor_masses`` and ``payload`` beside it).  Every link needs
            ``flexural_rigidity`` (a number, a pair ``[EI_y, EI_z]``, or ``.inf``); the rest is
            optional.  ``mass_at: cog`` puts the link's mass at the node of its URDF centre of
            gravity (projected on the beam), which must be a node.
        tip : array-like, shape (3,), optional
            The end of the last link in its frame; default: twice its centre of mass.
        motor_masses : sequence of float, length n, optional
            Point masses at the joint nodes, kg (a ``motor_masses`` entry of the YAML wins).
        payload : float
            A point mass at the tip of the last link, kg (a ``payload`` entry of the YAML wins).

        """
        if not isinstance(model, Model):
            raise FlexibleArmError(f'from_model needs a Model, got {type(model).__name__}')
        if not model.is_chain():
            raise FlexibleArmError(f"model '{model.name}' is a tree; a flexible arm is a serial "
                                   'chain (choose one with load_model(tip_links=[...]))')
        entries, tip, motor_masses, payload = beam_entries(model, beams, tip, motor_masses,
                                                           payload)
        if tip is None:
            m = model.inertial[-1]
            com = m[6:9] / m[9] if m[9] > 0 else np.zeros(3)
            if np.linalg.norm(com) < 1e-9:
                raise FlexibleArmError(f"link '{model.link_names[-1]}': its centre of mass is on "
                                       'its joint, so the beam end cannot be guessed; give tip')
            tip = 2.0 * com
        return cls._build(model, entries, tip, motor_masses, payload,
                          _centres(model, tip))

    @classmethod
    def from_yaml(cls, source):
        """
        Build a flexible arm from one YAML document (see ``config/flexible_arm.yaml``).

        Either ``planar: {lengths, masses, flexural_rigidity, ...}`` (the arguments of
        :meth:`planar`), or ``urdf: PATH`` (relative to the YAML file, or the name of a bundled
        robot) with optional ``root_link``, ``tip_link`` and ``gravity``, plus ``links:``,
        ``tip``, ``motor_masses`` and ``payload`` for :meth:`from_model`.
        """
        kind, *what = read_document(source)
        return cls.planar(**what[0]) if kind == 'planar' else cls.from_model(*what)

    @classmethod
    def _build(cls, model, beams, tip, motor_masses, payload, centres=None):
        """
        Build the arm from checked beam entries.

        ``centres`` is where each link's centre of gravity lies along it, a fraction of its
        length (default mid-link: a uniform link).
        """
        n = model.n
        links = tuple(link_entry(name, beams[name]) for name in model.link_names)
        centres = [0.5] * n if centres is None else centres
        # The end of each link in its own frame: the next joint's origin, or the tip.
        ends = [np.asarray(model.p_parent_joint[i + 1], float) for i in range(n - 1)]
        try:
            ends.append(np.asarray(tip, float).reshape(3))
        except (TypeError, ValueError):
            raise FlexibleArmError(f'tip must be 3 numbers, got {tip!r}') from None
        lengths = [float(np.linalg.norm(e)) for e in ends]
        links = tuple(_with_length(link, length, centre)
                      for link, length, centre in zip(links, lengths, centres))
        motors = np.zeros(n) if motor_masses is None else np.asarray(
            per_link(motor_masses, n, 'motor_masses'), float)
        for i, m in enumerate(motors):
            nonnegative(m, model.joint_names[i], 'motor mass')
        nonnegative(payload, 'payload', 'mass')
        ref = _reference_stiffness(links, lengths)

        node_body, node_r, node_mass = [-1], [np.asarray(model.p_parent_joint[0], float)], [0.0]
        damping_mass = [0.0]
        joint_node, tip_node = [], []
        e_nodes, e_link, e_axes, e_k, e_c, e_len = [], [], [], [], [], []
        for i, link in enumerate(links):
            joint_node.append(len(node_mass) - 1)
            node_mass[-1] += motors[i]
            end = ends[i]
            if link.length < 1e-9 * max(1.0, max(lengths)):
                # zero length: no element, the link's mass sits on its joint node
                node_mass[-1] += link.mass
                damping_mass[-1] += link.damping[0] * link.mass
                tip_node.append(len(node_mass) - 1)
                continue
            x = end / link.length
            z = _perpendicular(x, np.asarray(model.axis[i], float))
            axes = np.column_stack([x, np.cross(z, x), z])
            ne = link.elements
            le = link.length / ne
            k = _element_stiffness(link, le, ref)
            start = len(node_mass) - 1
            shares = _mass_shares(link)
            for j in range(ne):
                node_body.append(i)
                node_r.append(end * (j + 1) / ne)
                node_mass.append(0.0)
                damping_mass.append(0.0)
                a = start + j
                e_nodes.append((a, a + 1))
                e_link.append(i)
                e_axes.append(axes)
                e_k.append(k)
                e_c.append(link.damping)
                e_len.append(le)
            for j, share in enumerate(shares):
                node_mass[start + j] += share
                damping_mass[start + j] += link.damping[0] * share
            tip_node.append(len(node_mass) - 1)
        node_mass[-1] += float(payload)
        if not e_nodes:
            raise FlexibleArmError(f"arm '{model.name}' has no link of non-zero length")
        node_mass[0] = 0.0          # the base node is clamped: its mass is carried by the base
        damping_mass[0] = 0.0
        return cls(model=model, links=links, node_body=_frozen(node_body, np.int64),
                   node_r=_frozen(node_r), node_mass=_frozen(node_mass),
                   joint_node=_frozen(joint_node, np.int64),
                   tip_node=_frozen(tip_node, np.int64),
                   element_nodes=_frozen(e_nodes, np.int64).reshape(-1, 2),
                   element_link=_frozen(e_link, np.int64), element_axes=_frozen(e_axes),
                   element_stiffness=_frozen(e_k), element_damping=_frozen(e_c),
                   damping_mass=_frozen(damping_mass),
                   element_length=_frozen(e_len), motor_masses=_frozen(motors),
                   payload=float(payload), tip=_frozen(ends[-1]))

    # -----------------------------------------------------------------------------------------
    # Derived models
    # -----------------------------------------------------------------------------------------

    def rigid_model(self) -> Model:
        """
        Return the rigid-body model with exactly this arm's mass distribution (lumped masses).

        Body ``i`` carries the nodes fixed to it as point masses, so the project's rigid-body
        algorithms (:func:`~manipulator_dynamics.inverse_dynamics`) give the torques of the arm
        with infinitely stiff links: the reference for the rigid limit.
        """
        inertial = np.zeros((self.n, 10))
        for k in range(len(self.node_mass)):
            b = self.node_body[k]
            if b < 0:
                continue
            m = self.node_mass[k]
            x, y, z = self.node_r[k]
            # point mass: J = m (|r|^2 1 - r r^T), first moment m r, in PARAMETER_NAMES order
            inertial[b] += m * np.array([y * y + z * z, -x * y, -x * z, x * x + z * z, -y * z,
                                         x * x + y * y, x, y, z, 1.0])
        fields = {k: getattr(self.model, k) for k in self.model.__dataclass_fields__
                  if self.model.__dataclass_fields__[k].init}
        fields['inertial'] = inertial
        return Model(**fields)

    def with_rigid_links(self) -> 'FlexibleArm':
        """Return this arm with every link rigid: the rigid reference of Isobe & Imaizumi."""
        beams = {}
        for link in self.links:
            beams[link.name] = {'mass': link.mass, 'elements': link.elements,
                                'flexural_rigidity': math.inf, 'mass_at': link.mass_at}
        return _rebuild(self, beams)

    def natural_frequencies(self, q=None, count=None):
        """
        Natural frequencies (Hz) of the arm with its joints held at ``q`` (default zero).

        The joints are locked, as the operating motion holds them, so these are the modes the
        trajectory excites: for one link, the clamped-free beam.  Rigid links are excluded
        (their stiffness is a numerical stand-in for infinity).
        """
        q = np.zeros(self.n) if q is None else np.asarray(q, float)
        return beam.natural_frequencies(self, q, count)


def _rebuild(arm, beams):
    return FlexibleArm._build(arm.model, beams, arm.tip, arm.motor_masses, arm.payload,
                              [link.centre for link in arm.links])


def _centres(model, tip):
    """Where each link's URDF centre of gravity lies along its beam, as a fraction of it."""
    centres = []
    for i in range(model.n):
        end = np.asarray(model.p_parent_joint[i + 1] if i + 1 < model.n else tip, float)
        m = model.inertial[i]
        length2 = float(end @ end)
        centres.append(float(m[6:9] @ end / m[9] / length2) if m[9] > 0 and length2 > 0
                       else 0.5)
    return centres


def _mass_shares(link):
    """Share the link's mass among its ``elements + 1`` nodes as its ``mass_at`` says."""
    ne = link.elements
    shares = np.zeros(ne + 1)
    if link.mass_at == DISTRIBUTED:
        shares[:-1] += link.mass / ne / 2
        shares[1:] += link.mass / ne / 2
        return shares
    if link.mass_at == COG:
        j = round(link.centre * ne)
        if not 0 <= j <= ne or abs(link.centre * ne - j) > 1e-6:
            nodes = ', '.join(f'{k / ne:.3g}' for k in range(ne + 1))
            raise FlexibleArmError(
                f"link '{link.name}': mass_at cog needs a node at its centre of gravity, "
                f'{link.centre:.4g} of its length, but its {ne} elements put nodes at {nodes}; '
                'choose elements to place one there, or list the nodes (mass_at: [..])')
        shares[j] = link.mass
        return shares
    for j in link.mass_at:
        if not 0 <= j <= ne:
            raise FlexibleArmError(f"link '{link.name}': mass_at names node {j}, but its nodes "
                                   f'are 0 (its joint) to {ne} (its far end)')
        shares[j] += link.mass / len(link.mass_at)
    return shares


def _frozen(a, dtype=np.float64):
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


def _with_length(link, length, centre):
    return Link(**{**link.__dict__, 'length': length, 'centre': centre})


def _reference_stiffness(links, lengths):
    """Return the largest stiffness entry of any flexible element: a rigid link's scale."""
    entries = [np.abs(_element_stiffness(link, length / link.elements, None)).max()
               for link, length in zip(links, lengths) if not link.rigid and length > 0]
    return max(entries) if entries else 1.0


def _element_stiffness(link, le, ref):
    """Stiffness (12, 12) of one element of ``link``, of length ``le``."""
    if link.rigid:
        stiff = _STIFF * 12.0 / le ** 2
        unit = timoshenko_stiffness(le, 1.0, 1.0, stiff, stiff, 1.0)
        return unit * (_RIGID_FACTOR * ref / np.abs(unit).max())
    ei_y, ei_z = link.flexural_rigidity
    stiff = _STIFF * 12.0 * max(ei_y, ei_z) / le ** 2
    ga = link.shear_rigidity if math.isfinite(link.shear_rigidity) else stiff
    ea = link.axial_rigidity if math.isfinite(link.axial_rigidity) else stiff
    gj = link.torsional_rigidity if math.isfinite(link.torsional_rigidity) else min(ei_y, ei_z)
    return timoshenko_stiffness(le, ei_y, ei_z, ga, ea, gj)
