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
Simulated robots (plants): efforts in, joint positions and velocities out, in the model's order.

Two engines behind one interface (``q``, ``qd``, ``step(tau)``, ``dt``, ``description``):

* :class:`MujocoPlant`: MuJoCo (``mujoco`` on PyPI, an optional dependency: the library never
  needs it) builds its own model from the URDF text the :class:`Model` was loaded from, with its
  own URDF parser and its own dynamics: an independent plant for a controller built on this
  package's model.  The inertials of the links that move are taken exactly as written
  (``fusestatic="false" inertiafromgeom="false" balanceinertia="false" boundmass="0"
  boundinertia="0"``: MuJoCo neither merges, guesses, balances nor bounds them), those of the
  links that never move are left out (see :func:`mujoco_xml`); armature, viscous and Coulomb
  friction come from the model (the URDF's ``damping`` and ``friction``, then the joint-dynamics
  YAML) as ``dof_armature``, ``dof_damping`` and ``dof_frictionloss``.  ``frictionloss`` is dry
  friction through a constraint, not ``Fc sign(qd)``: a joint at rest sticks until the effort
  exceeds ``Fc``; the constraint is made as stiff as the step allows, so that a sliding joint
  feels ``Fc`` (above 0.01 rad/s on the demo arm's light wrist, where MuJoCo's default softness
  gave a third of it at 0.1 rad/s).  What a MuJoCo joint has no element for, a friction offset
  ``Fo`` and a smooth Coulomb law ``Fc tanh(qd / vs)`` (``model.friction_offset``,
  ``model.coulomb_velocity``), is applied as a generalised force computed from the velocity at
  the start of each substep and held over it; a smooth law's slope at rest goes into
  ``dof_damping`` and the substeps are made short enough for it.  Position limits are enforced as
  MuJoCo enforces them: a soft constraint that lets the joint pass the limit by a little (about a
  milliradian under gravity) and pushes it back, never a hard stop and never an error, where a
  real drive would brake or fault.  URDF ``<mimic>`` relations, which MuJoCo's URDF import makes
  equality constraints, are left out: every joint is its own coordinate, as in this package's
  model, Pinocchio's default parser and ``/joint_states``.
* :class:`InternalPlant`: this package's forward dynamics (Saha's UDU^T method) under the classic
  Runge-Kutta scheme (:func:`~manipulator_dynamics.control.rk4_step`): no limits, a free
  multibody.  It agrees with any controller built on the same model, by construction.

MuJoCo's plant can also stand in a cell (:class:`Cell`): the links made solid as capsules
(primitive shapes derived from the URDF's joint origins: each link's capsule runs from its
origin to each child's, a sphere where it has none; meshes never loaded) and a fixed box,
which they collide with (only with it: the links pass through each other, as the model has no
self-collision either).  :meth:`MujocoPlant.contact` gives the contact force MuJoCo computes
(``mj_contactForce``, summed over the robot-box contacts) and the deepest penetration: the
ground truth of a collision's detection and reaction.

Both hold the effort over a step of ``dt`` seconds, integrated in ``substeps`` equal substeps.
Both can push a link with a wrench (:meth:`MujocoPlant.push`): a real external force, which the
efforts they are given know nothing of, fixed in the link's frame or in the base's axes;
``pushed()`` says what it is now and its load on the joints, ``J^T F``, each engine computing it
its own way (MuJoCo from its body Jacobians): the ground truth of a contact estimate.
"""

import importlib.util
import math
from typing import NamedTuple
import warnings

import numpy as np

from .control import coulomb_shape, rk4_step
from .model import inertia_tensor
from .rigid.crba import inertia_matrix
from .rigid.forward import forward_dynamics
from .rigid.status import SingularInertiaError
from .urdf import urdf_inertials, URDFError, write_urdf

#: Engines of :func:`make_plant`.
ENGINES = ('mujoco', 'internal')
#: MuJoCo integrators by name; ``auto`` chooses (see :func:`choose_integrator`).
INTEGRATORS = ('auto', 'rk4', 'implicitfast', 'implicit', 'euler')
#: RK4's stability interval on the negative real axis is about -2.79: a joint whose damping
#: decays faster than this, times the substep, is integrated implicitly instead (margin 2).
RK4_STABLE = 1.4
#: Impedance of the dry-friction constraints (MuJoCo's ``solimp`` d0 and dwidth; see
#: :func:`mujoco_model`).
FRICTION_IMPEDANCE = 0.99
#: MuJoCo's refusals of a moving link's mass or principal moment that it finds zero (below its
#: mjMINVAL, 1e-15), which this package takes (see :func:`mujoco_model`).
ZERO_REFUSALS = ('mass and inertia of moving bodies must be larger than mjMINVAL',
                 'inertia must have positive eigenvalues')
#: What such a mass and moment are raised by, relative to the largest diagonal entry of M ...
FLOOR = 1e-15
#: ... and at least this (kg, kg m^2), a hundred times mjMINVAL ...
LEAST = 1e-13
#: ... and for a moment, this times the link's largest (MuJoCo refused a thin rod's 1e-14 kg
#: m^2 beside 0.01: it finds a tensor's eigenvalues to about 1e-12 of the largest).
RELATIVE = 1e-10
_INERTIA = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
#: What MuJoCo's compiler must not do to a URDF's inertials (see the module).
COMPILER = {'fusestatic': 'false', 'inertiafromgeom': 'false', 'balanceinertia': 'false',
            'boundmass': '0', 'boundinertia': '0', 'autolimits': 'true', 'discardvisual': 'true'}


class Cell(NamedTuple):
    """
    A simulated cell: the robot's links as capsules of ``link_radius`` (m), and a fixed box.

    ``box_size``: the box's edges (m, > 0), ``box_position`` its centre and ``box_rpy`` its
    orientation (roll, pitch, yaw, rad) in the robot's base (MuJoCo's world) frame.
    """

    link_radius: float
    box_size: tuple
    box_position: tuple
    box_rpy: tuple = (0.0, 0.0, 0.0)

    def checked(self):
        """Return the cell with float arrays; ValueError names a field that cannot be."""
        radius = float(self.link_radius)
        if not (math.isfinite(radius) and radius > 0):
            raise ValueError(f'link_radius must be a finite number of metres > 0, got '
                             f'{self.link_radius!r}')
        fields = {}
        for name in ('box_size', 'box_position', 'box_rpy'):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (3,) or not np.all(np.isfinite(value)):
                raise ValueError(f'{name} needs 3 finite numbers, got '
                                 f'{np.ravel(value).tolist()}')
            fields[name] = value
        if np.any(fields['box_size'] <= 0):
            raise ValueError(f'box_size must be > 0 on each edge (m), got '
                             f'{fields["box_size"].tolist()}')
        return Cell(radius, **fields)


def mujoco_available():
    """Tell whether the ``mujoco`` package is installed (without importing it)."""
    return importlib.util.find_spec('mujoco') is not None


def default_engine():
    """``'mujoco'`` where the ``mujoco`` package is installed, else ``'internal'``."""
    return 'mujoco' if mujoco_available() else 'internal'


class PlantError(ValueError):
    """A robot an engine cannot simulate: names the link or joint and what to do."""


def mujoco_xml(urdf, fixed=(), floors=None):
    """
    Return the URDF text MuJoCo's URDF import takes: meshes gone, inertials kept as written.

    ``<visual>`` and ``<collision>`` are removed (MuJoCo cannot resolve ``package://`` meshes,
    and the plant has no contacts), ``<mimic>`` too (free coordinates, as in the model), and a
    ``<mujoco><compiler .../></mujoco>`` element added (:data:`COMPILER`), replacing any the
    URDF has.  The ``<inertial>`` of the ``fixed`` links, which never move (the root and links
    fixed to it: those a model puts on body -1), is removed too: it acts on no joint, this
    package's model never reads it, and MuJoCo would refuse a base or sensor inertia it finds
    unphysical (a legged robot's or a mobile base's).
    An ``<inertia>`` gets the products of inertia the URDF leaves out, as zeros (this package
    reads them so; MuJoCo requires all six).  ``floors`` maps links to the least mass and
    principal moment they are given (see :func:`mujoco_model`).
    """
    from lxml import etree

    floors = floors or {}
    root = etree.fromstring(urdf if isinstance(urdf, bytes) else urdf.encode(),
                            etree.XMLParser(remove_comments=True))
    for tag in ('visual', 'collision', 'mujoco', 'mimic'):
        for element in list(root.iter(tag)):
            element.getparent().remove(element)
    for link in root.iterfind('link'):
        name = link.get('name')
        if name in fixed:
            for inertial in link.findall('inertial'):
                link.remove(inertial)
            continue
        if name in floors:
            _raise_inertial(link, floors[name])
        for inertia in link.iterfind('inertial/inertia'):
            for key in _INERTIA:
                inertia.set(key, inertia.get(key, '0'))
    etree.SubElement(etree.SubElement(root, 'mujoco'), 'compiler', **COMPILER)
    return etree.tostring(root, encoding='unicode')


def _raise_inertial(link, least):
    """
    Add ``least`` to ``link``'s mass where it is below that, and to its moments likewise.

    The moments are all raised by the same amount (the tensor plus that times the identity: its
    axes unchanged), at least :data:`RELATIVE` times the largest, where the smallest is below.
    """
    from lxml import etree

    inertial = link.find('inertial')
    if inertial is None:
        inertial = etree.SubElement(link, 'inertial')
    mass = inertial.find('mass')
    if mass is None:
        mass = etree.SubElement(inertial, 'mass', value='0')
    inertia = inertial.find('inertia')
    if inertia is None:
        inertia = etree.SubElement(inertial, 'inertia')
    try:
        m = float(mass.get('value', '0'))
        xx, xy, xz, yy, yz, zz = (float(inertia.get(key, '0')) for key in _INERTIA)
    except ValueError:
        return                          # not a number: the package's loader names the field
    if m < least:
        mass.set('value', repr(m + least))
    moments = np.linalg.eigvalsh([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    least = max(least, RELATIVE * float(np.abs(moments).max()))
    if moments[0] < least:
        for key, value in (('ixx', xx), ('iyy', yy), ('izz', zz)):
            inertia.set(key, repr(value + least))


def _refused_link(message):
    """Return the link MuJoCo's compile error names, or None."""
    text = str(message)
    return text.split("Element name '")[1].split("'")[0] if "Element name '" in text else None


def _refusal(message):
    """Turn MuJoCo's compile error into one that names the link and says what to do."""
    text = ' '.join(str(message).replace('Error: ', '').split())
    link = _refused_link(text)
    where = f"link '{link}'" if link else 'the URDF'
    text = text.split(' Element name')[0].split('; use ')[0]
    if 'larger than mjMINVAL' in text:
        advice = ('a moving link needs a mass and an inertia, and the plant gives them only to '
                  "its model's links (a model loaded with tip_links?): give it a small "
                  '<inertial> in the URDF, attach it with a fixed joint, or use engine:=internal')
    elif 'inertia must satisfy' in text:
        advice = ('its principal moments break the triangle inequality (A + B >= C): fix the '
                  "URDF's <inertia> (manipulator-dynamics check names the fault), or use "
                  'engine:=internal')
    elif 'positive eigenvalues' in text:
        advice = ('MuJoCo needs every principal moment above zero, and the plant raises only '
                  "those that are zero, not a negative one: fix the URDF's <inertia> "
                  '(manipulator-dynamics check names the fault), or use engine:=internal')
    else:
        advice = 'fix the URDF, or use engine:=internal'
    return PlantError(f'MuJoCo cannot take {where}: {text}; {advice}')


def mujoco_model(model, *, friction=True, timestep=0.001, integrator='rk4', cell=None):
    """
    Build the MuJoCo model of ``model``'s URDF (``model.urdf``), joints mapped by name.

    Where the model's inertial parameters are not its URDF's (a payload carried, identified
    parameters put in), the URDF written with them (:func:`.urdf.write_urdf`) is simulated.

    Returns ``(mj_model, qpos, dof)``: MuJoCo's model and, per joint of ``model`` (its order),
    the index of its coordinate in ``qpos`` and of its velocity in ``qvel``.  :class:`PlantError`
    names the link MuJoCo refuses, or the joint it lacks.  ``cell`` (a :class:`Cell`): the
    links made solid and the box beside them (:func:`_add_cell`).

    MuJoCo refuses a moving link without mass or with a zero principal moment, which this
    package takes (a massless link between two joints of a humanoid's hip, a point mass): such
    a link is given :data:`FLOOR` times the largest diagonal entry of ``M`` (at least
    :data:`LEAST`) more mass and moments, with a warning naming it.  Where that would be all a
    joint moves (``M`` singular: a massless hand), neither engine can simulate the robot and
    :class:`PlantError` names the joint.
    """
    import mujoco

    if model.urdf is None:
        raise PlantError(f"model '{model.name}' keeps no URDF text: load it with load_model")
    urdf = model.urdf
    if not np.allclose(urdf_inertials(model), model.inertial, rtol=1e-12, atol=1e-15):
        try:                    # a payload, identified parameters: MuJoCo simulates the model's
            urdf = write_urdf(model)
        except URDFError as e:
            raise PlantError(f"MuJoCo cannot simulate model '{model.name}': {e}") from None
    floor = max(FLOOR * _regular_scale(model), LEAST)
    fixed = {link for link, frame in model.frames.items() if frame.body < 0}
    floors = {}                  # links MuJoCo refused for a mass or moment it finds zero
    said = []                    # MuJoCo's own warnings, else written to ./MUJOCO_LOG.TXT
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(said.append)
    try:
        while True:
            said.clear()
            try:
                xml = mujoco_xml(urdf, fixed, floors)
                mj = mujoco.MjModel.from_xml_string(xml)
                break
            except ValueError as e:
                link = _refused_link(e)
                if link in floors or link not in model.frames or link in fixed or not any(
                        reason in str(e) for reason in ZERO_REFUSALS):
                    raise _refusal(e) from None
                floors[link] = floor
    finally:
        mujoco.set_mju_user_warning(previous)
    coupled = len(model.coupled_motors().joints) > 0
    if coupled or cell is not None:
        spec = mujoco.MjSpec.from_string(xml)
        if coupled:
            _add_coupled_motors(spec, model, friction)
        if cell is not None:
            _add_cell(mujoco, spec, mj, cell)
        mj = spec.compile()
        if coupled:
            _set_tendon_friction(mj, model, friction)
            mj.tendon_solref_fri[:] = (2 * timestep, 1.0)
            mj.tendon_solimp_fri[:, :2] = FRICTION_IMPEDANCE
    if floors:
        warnings.warn(f'MuJoCo: links {", ".join(floors)} move but lack a mass or a principal '
                      f'moment, which MuJoCo refuses: given at least {floor:.3g} more (kg, '
                      "kg m^2) each, just above MuJoCo's least", stacklevel=2)
    for text in said:
        warnings.warn(f'MuJoCo: {text}', stacklevel=2)
    qpos, dof = [], []
    for name in model.joint_names:
        j = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, name)
        if j < 0:
            raise PlantError(f"joint '{name}' of model '{model.name}' is not in MuJoCo's model "
                             '(a model loaded with root_link or tip_links? the plant simulates '
                             'the whole URDF)')
        qpos.append(mj.jnt_qposadr[j])
        dof.append(mj.jnt_dofadr[j])
    if mj.nv != model.n:
        extra = sorted({mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j)
                        for j in range(mj.njnt)} - set(model.joint_names))
        raise PlantError(f'MuJoCo has joints the model lacks: {", ".join(extra)} (a model '
                         'loaded with root_link or tip_links? the plant simulates the whole URDF)')
    dof = np.array(dof, dtype=np.int64)
    mj.dof_armature[dof] = model.diagonal_armature()   # a coupled motor's is its tendon's
    mj.dof_damping[dof] = damping(model) if friction else 0.0
    mj.dof_frictionloss[dof] = _dry_friction(model) if friction else 0.0
    # dry friction as stiff as the step allows (time constant two steps, the least MuJoCo
    # advises; impedance 0.99): sliding, it is Fc (MuJoCo's defaults, 20 ms and 0.9-0.95, gave
    # the demo arm's 0.04 kg m^2 wrist 0.32 Fc at 0.05-0.2 rad/s and 0.80 Fc above)
    mj.dof_solref[dof] = (2 * timestep, 1.0)
    mj.dof_solimp[dof, :2] = FRICTION_IMPEDANCE
    mj.opt.gravity[:] = model.gravity
    mj.opt.timestep = timestep
    mj.opt.integrator = {'rk4': mujoco.mjtIntegrator.mjINT_RK4,
                         'implicitfast': mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
                         'implicit': mujoco.mjtIntegrator.mjINT_IMPLICIT,
                         'euler': mujoco.mjtIntegrator.mjINT_EULER}[integrator]
    return mj, np.array(qpos, dtype=np.int64), dof


#: The box's name in MuJoCo's model, and the collision classes: the links collide with the box
#: only (contype 1, conaffinity 2 against the box's 2 and 1), never with each other.
BOX = 'cell_box'
LINK_CLASS, BOX_CLASS = (1, 2), (2, 1)


def _add_cell(mujoco, spec, mj, cell):
    """
    Add ``cell``'s geometry to ``spec``: a capsule per link and child, and the box.

    ``mj``: the model compiled without it, whose bodies' positions in their parents
    (``body_pos``, the URDF's joint origins) shape the capsules.  Only the bodies that move
    (not welded to the world) are made solid.
    """
    cell = cell.checked()
    children = {}
    for b in range(1, mj.nbody):
        children.setdefault(int(mj.body_parentid[b]), []).append(b)
    for b in range(1, mj.nbody):
        if mj.body_weldid[b] == 0:                  # welded to the world: never moves
            continue
        body = spec.body(mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b))
        ends = [np.array(mj.body_pos[c]) for c in children.get(b, ())]
        ends = [end for end in ends if np.linalg.norm(end) > cell.link_radius * 1e-3]
        shapes = [(mujoco.mjtGeom.mjGEOM_CAPSULE, end) for end in ends] or \
            [(mujoco.mjtGeom.mjGEOM_SPHERE, None)]
        for kind, end in shapes:
            geom = body.add_geom(type=kind, size=[cell.link_radius, 0.0, 0.0],
                                 contype=LINK_CLASS[0], conaffinity=LINK_CLASS[1])
            if end is not None:
                geom.fromto = [0.0, 0.0, 0.0, *end]
    quat = np.zeros(4)
    mujoco.mju_euler2Quat(quat, cell.box_rpy, 'XYZ')
    spec.worldbody.add_geom(name=BOX, type=mujoco.mjtGeom.mjGEOM_BOX,
                            size=(cell.box_size / 2).tolist(), pos=cell.box_position.tolist(),
                            quat=quat.tolist(), contype=BOX_CLASS[0],
                            conaffinity=BOX_CLASS[1])


def _add_coupled_motors(spec, model, friction):
    """
    Add to ``spec`` a fixed tendon per coupled motor (:meth:`Model.coupled_motors`).

    The tendon's length is ``c . q``: its ``armature`` is the motor's rotor inertia (``Ia c
    c^T`` in M), its ``damping`` and ``frictionloss`` the motor's viscous and dry friction, so
    that MuJoCo turns the motor as the model does.  A coupled motor with a smooth Coulomb law
    has no MuJoCo counterpart: :class:`PlantError` names it.
    """
    motors = model.coupled_motors()
    for k, (j, row) in enumerate(zip(motors.joints, motors.rows)):
        if friction and motors.coulomb[k] and motors.velocity[k] > 0:
            raise PlantError(f'the coupled motor of joint {model.joint_names[j]!r} has a smooth '
                             'Coulomb law, which a MuJoCo tendon cannot hold (its dry friction '
                             'is the sign)')
        tendon = spec.add_tendon()
        tendon.name = f'motor_{model.joint_names[j]}'
        for i in np.flatnonzero(row):
            tendon.wrap_joint(model.joint_names[i], float(row[i]))
        tendon.armature = float(motors.armature[k])


def _set_tendon_friction(mj, model, on):
    """Switch the coupled motors' friction (their tendons' damping, frictionloss) on or off."""
    if mj.ntendon:
        motors = model.coupled_motors()
        mj.tendon_damping[:] = motors.viscous if on else 0.0
        mj.tendon_frictionloss[:] = motors.coulomb if on else 0.0


def _regular_scale(model):
    """Return M's largest diagonal entry at mid-range; :class:`PlantError` where M is singular."""
    if model.n == 0:
        return 1.0
    q = np.zeros(model.n)
    limited = np.isfinite(model.lower) & np.isfinite(model.upper)
    q[limited] = (model.lower[limited] + model.upper[limited]) / 2
    try:
        forward_dynamics(model, q, np.zeros(model.n), np.zeros(model.n))
    except SingularInertiaError as e:
        raise PlantError(f'neither engine can simulate this robot: {e}') from None
    return float(np.diagonal(inertia_matrix(model, q)).max())


def choose_integrator(model, q, h, *, friction=True):
    """
    Return ``(integrator, reason)``: ``'rk4'`` unless the joints' damping is too stiff for it.

    Measured at 1 ms on example-robot-data arms: Euler and implicitfast gain energy on an
    undamped swing (errors of 78-18,000 mrad after 1 s against a 0.01 ms reference) but handle
    stiff URDF damping; RK4 is accurate undamped (at most 5 mrad) but unstable where a joint's
    damping is stiff (xarm7, z1).  So: RK4 while the fastest damping rate ``lambda``, the
    largest eigenvalue of ``M(q)^-1 D`` (``D`` the joints' :func:`damping`, ``M`` with
    armature), keeps ``lambda h`` within :data:`RK4_STABLE`; ``implicitfast`` (damping
    integrated implicitly) otherwise.
    """
    rate = damping_rate(model, q, friction)
    if rate == 0:
        return 'rk4', 'no joint damping'
    if rate * h <= RK4_STABLE:
        return 'rk4', f'damping rate {rate:.3g}/s x step {h:g} s = {rate * h:.2g} <= {RK4_STABLE}'
    return 'implicitfast', (f'damping rate {rate:.3g}/s x step {h:g} s = {rate * h:.2g} > '
                            f'{RK4_STABLE}: too stiff for RK4')


class MujocoPlant:
    """A robot simulated by MuJoCo (see the module); ``q``, ``qd`` in the model's order."""

    engine = 'mujoco'

    def __init__(self, model, q0, dt, *, substeps=1, friction=True, integrator='auto',
                 cell=None):
        import mujoco

        self._mujoco = mujoco
        self.model, self.dt, self.substeps = model, float(dt), int(substeps)
        q0 = np.broadcast_to(np.asarray(q0, dtype=float), (model.n,))
        # a smooth Coulomb law is applied explicitly, updated each substep: substeps short
        # enough for its slope at rest (as the internal plant's)
        self._applied = friction and bool(model.friction_offset.any()
                                          or model.coulomb_velocity.any())
        if model.coulomb_velocity.any():
            rate = damping_rate(model, q0, friction)
            self.substeps = max(self.substeps, math.ceil(rate * self.dt / RK4_STABLE))
        h = self.dt / self.substeps
        why = f'{integrator} as asked'
        if integrator == 'auto':
            integrator, why = choose_integrator(model, q0, h, friction=friction)
        self.integrator = integrator
        self.mj, self._qpos, self._dof = mujoco_model(model, friction=friction, timestep=h,
                                                      integrator=integrator, cell=cell)
        self.cell = cell
        self._box = mujoco.mj_name2id(self.mj, mujoco.mjtObj.mjOBJ_GEOM, BOX) if cell else -1
        self.data = mujoco.MjData(self.mj)
        self.said = []                  # MuJoCo's warnings, else written to ./MUJOCO_LOG.TXT
        mujoco.set_mju_user_warning(self.said.append)
        self.data.qpos[self._qpos] = q0
        mujoco.mj_forward(self.mj, self.data)
        self.description = (f'MuJoCo {mujoco.__version__}, {integrator} ({why}), '
                            f'{h * 1e3:g} ms x {self.substeps}')
        self.wrench = None                  # (link, (6,) wrench in its frame), or None
        self._body = -1

    def push(self, link, wrench, world=False):
        """
        Push ``link`` with ``wrench`` ``(fx, fy, fz, mx, my, mz)`` from the next step on.

        The moment is about the link's origin.  In the link's frame, turning with it (a load
        carried by the link, as ``f_ext``), or with ``world`` in the base frame's axes (a push
        from outside, which keeps its direction as the link moves).  ``wrench=None`` stops
        pushing.  ``ValueError`` names a link the robot does not have.
        """
        self.data.xfrc_applied[:] = 0.0
        if wrench is None:
            self.wrench, self._body = None, -1
            return
        link, wrench = _checked_push(self.model, link, wrench)
        body = self._mujoco.mj_name2id(self.mj, self._mujoco.mjtObj.mjOBJ_BODY, link)
        if body < 0:
            raise ValueError(f"push: link '{link}' is not a body of MuJoCo's model")
        self.wrench, self._body, self._world = (link, wrench), body, bool(world)

    def _set_push(self):
        """Write the push for MuJoCo: world axes, at the body's centre of mass."""
        b, d = self._body, self.data
        f, m = self.wrench[1][:3], self.wrench[1][3:]
        if not self._world:
            R = d.xmat[b].reshape(3, 3)
            f, m = R @ f, R @ m
        d.xfrc_applied[b, :3] = f
        d.xfrc_applied[b, 3:] = m + np.cross(d.xpos[b] - d.xipos[b], f)

    def pushed(self):
        """
        Say what pushes now: ``(link, wrench in the link's frame, J^T F)``, or None.

        ``J^T F``, its load on the joints in the model's order, from MuJoCo's own Jacobians.
        """
        if self.wrench is None:
            return None
        mujoco, b, d = self._mujoco, self._body, self.data
        mujoco.mj_kinematics(self.mj, d)
        mujoco.mj_comPos(self.mj, d)
        self._set_push()
        jacp, jacr = np.zeros((3, self.mj.nv)), np.zeros((3, self.mj.nv))
        mujoco.mj_jacBodyCom(self.mj, d, jacp, jacr, b)
        x = d.xfrc_applied[b]
        R = d.xmat[b].reshape(3, 3)               # the link frame (MuJoCo's body frame)
        moment = x[3:] - np.cross(d.xpos[b] - d.xipos[b], x[:3])    # about the link's origin
        local = np.concatenate([R.T @ x[:3], R.T @ moment])
        return self.wrench[0], local, (jacp.T @ x[:3] + jacr.T @ x[3:])[self._dof]

    def contact(self):
        """
        Return ``(force, depth)``: the box's push on the robot now, and the deepest penetration.

        ``force`` (3,), N, in the base frame's axes: MuJoCo's contact forces
        (``mj_contactForce``, normal and friction) of every robot-box contact, summed; ``depth``
        (m, >= 0): how far the deepest of them reaches into the box.  Zeros without a cell, or
        without contact.
        """
        mujoco, d = self._mujoco, self.data
        force, depth, f6 = np.zeros(3), 0.0, np.zeros(6)
        if self._box < 0:
            return force, depth
        for i in range(d.ncon):
            c = d.contact[i]
            if self._box not in (c.geom1, c.geom2):
                continue
            mujoco.mj_contactForce(self.mj, d, i, f6)
            # in the contact's frame (rows: the normal, from geom1 to geom2, then the tangents):
            # the force geom1 exerts on geom2
            on_second = c.frame.reshape(3, 3).T @ f6[:3]
            force += on_second if c.geom2 != self._box else -on_second
            depth = max(depth, -float(c.dist))
        return force, depth

    def carry(self, link, mass, com=(0.0, 0.0, 0.0), inertia=None):
        """
        Pick up a load on ``link`` from the next step on, as :meth:`Model.with_payload` takes it.

        MuJoCo's body of the link becomes the merged body (parallel axes, then its principal
        axes: ``body_mass``, ``body_ipos``, ``body_inertia``, ``body_iquat``) and
        ``mj_setConst`` recomputes what depends on it; the state goes on where it was.
        ``ValueError`` names a bad load.
        """
        mujoco = self._mujoco
        self.model.with_payload(link, mass, com, inertia)           # checks it, names a fault
        b = mujoco.mj_name2id(self.mj, mujoco.mjtObj.mjOBJ_BODY, link)
        if b < 0:
            raise ValueError(f"carry: link '{link}' is not a body of MuJoCo's model")
        mj = self.mj
        m1, c1 = float(mj.body_mass[b]), np.array(mj.body_ipos[b])
        R1 = np.zeros(9)
        mujoco.mju_quat2Mat(R1, mj.body_iquat[b])
        R1 = R1.reshape(3, 3)
        I1 = R1 @ np.diag(mj.body_inertia[b]) @ R1.T
        m2, c2 = float(mass), np.asarray(com, dtype=float)
        I2 = np.zeros((3, 3)) if inertia is None else inertia_tensor(inertia)
        m = m1 + m2
        c = (m1 * c1 + m2 * c2) / m

        def shifted(inertia, mass, d):               # parallel axes, to the merged centre
            return inertia + mass * (d @ d * np.eye(3) - np.outer(d, d))
        moments, axes = np.linalg.eigh(shifted(I1, m1, c1 - c) + shifted(I2, m2, c2 - c))
        if np.linalg.det(axes) < 0:
            axes[:, 0] = -axes[:, 0]
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, axes.reshape(-1))
        mj.body_mass[b], mj.body_ipos[b], mj.body_inertia[b] = m, c, moments
        mj.body_iquat[b] = quat
        # mj_setConst works at qpos0 in the data it is given: the state is put back after it
        qpos, qvel, t = self.data.qpos.copy(), self.data.qvel.copy(), self.data.time
        mujoco.mj_setConst(mj, self.data)
        self.data.qpos[:], self.data.qvel[:], self.data.time = qpos, qvel, t
        mujoco.mj_forward(mj, self.data)

    def set_friction(self, on):
        """Switch the joint friction (damping, frictionloss and the applied rest) on or off."""
        self.mj.dof_damping[self._dof] = damping(self.model) if on else 0.0
        self.mj.dof_frictionloss[self._dof] = _dry_friction(self.model) if on else 0.0
        _set_tendon_friction(self.mj, self.model, on)
        self._applied = bool(on) and bool(self.model.friction_offset.any()
                                          or self.model.coulomb_velocity.any())

    @property
    def q(self):
        """Joint positions, model order (a copy)."""
        return self.data.qpos[self._qpos]

    @property
    def qd(self):
        """Joint velocities, model order (a copy)."""
        return self.data.qvel[self._dof]

    def step(self, tau):
        """Hold the efforts ``tau`` (model order) for ``dt`` seconds."""
        if self._applied or self.wrench is not None:
            for _ in range(self.substeps):
                # what MuJoCo's joints cannot say, from each substep's starting velocity
                self.data.qfrc_applied[self._dof] = tau - _applied_friction(self.model, self.qd) \
                    if self._applied else tau
                if self.wrench is not None:           # turned with the link, each substep
                    self._set_push()
                self._mujoco.mj_step(self.mj, self.data)
        else:
            self.data.qfrc_applied[self._dof] = tau
            self._mujoco.mj_step(self.mj, self.data, nstep=self.substeps)
        bad = self.data.warning[self._mujoco.mjtWarning.mjWARN_BADQACC].number
        finite = np.all(np.isfinite(self.data.qpos)) and np.all(np.isfinite(self.data.qvel))
        if bad or not finite:
            # MuJoCo resets the state on a bad acceleration: never let that pass for motion
            raise FloatingPointError(f'MuJoCo diverged ({self.description}) at t = '
                                     f'{self.data.time:.4f} s: {"; ".join(self.said)}')


class InternalPlant:
    """This package's forward dynamics under RK4 (see the module); ``q``, ``qd`` model order."""

    engine = 'internal'
    integrator = 'rk4'

    def __init__(self, model, q0, dt, *, substeps=1, friction=True):
        self.model, self.dt, self.friction = model, float(dt), friction
        self.q = np.zeros(model.n) + np.asarray(q0, dtype=float)
        self.qd = np.zeros(model.n)
        # RK4 is explicit: damping (a smooth Coulomb law's slope at rest among it) faster than
        # RK4_STABLE per substep would blow up, so the substeps are made short enough for it
        rate = damping_rate(model, self.q, True)
        self.substeps = max(int(substeps), math.ceil(rate * self.dt / RK4_STABLE))
        self.description = (f"this package's forward dynamics, RK4, "
                            f'{self.dt / self.substeps * 1e3:g} ms x {self.substeps}')
        if self.substeps > int(substeps):
            self.description += f' (damping rate {rate:.3g}/s: {substeps} was unstable)'
        self.wrench, self._world = None, False

    def push(self, link, wrench, world=False):
        """Push ``link`` with ``wrench`` from the next step on (as :meth:`MujocoPlant.push`)."""
        self.wrench = None if wrench is None else _checked_push(self.model, link, wrench)
        self._world = bool(world)

    def _local(self, q):
        """Return the push's wrench in its link's frame at ``q``, as ``f_ext`` takes it."""
        link, wrench = self.wrench
        if not self._world:
            return wrench
        from .rigid.jacobian import frame_pose, world_poses
        R = frame_pose(self.model, link, *world_poses(self.model, q))[0]
        return np.concatenate([R.T @ wrench[:3], R.T @ wrench[3:]])

    def pushed(self):
        """Say what pushes now: ``(link, wrench in its frame, J^T F)``, or None (as MuJoCo's)."""
        if self.wrench is None:
            return None
        from .rigid.jacobian import frame_jacobian
        local = self._local(self.q)
        return self.wrench[0], local, frame_jacobian(self.model, self.wrench[0], self.q).T @ local

    def carry(self, link, mass, com=(0.0, 0.0, 0.0), inertia=None):
        """Pick up a load on ``link`` from the next step on (as :meth:`MujocoPlant.carry`)."""
        self.model = self.model.with_payload(link, mass, com, inertia)

    def set_friction(self, on):
        """Switch the joint friction on or off."""
        self.friction = bool(on)

    def step(self, tau):
        """Hold the efforts ``tau`` (model order) for ``dt`` seconds."""
        h = self.dt / self.substeps
        try:
            for _ in range(self.substeps):
                # a push held over the substep in the link's frame, turned as it starts
                f_ext = None if self.wrench is None else {self.wrench[0]: self._local(self.q)}
                self.q, self.qd = rk4_step(self.model, self.q, self.qd, tau, h,
                                           friction=self.friction, f_ext=f_ext)
        except ValueError as e:                   # a stage's state was no longer finite
            raise FloatingPointError(f'the simulation diverged ({self.description}): {e}') \
                from None
        if not (np.all(np.isfinite(self.q)) and np.all(np.isfinite(self.qd))):
            raise FloatingPointError(f'the simulation diverged ({self.description})')


def _checked_push(model, link, wrench):
    """Return ``(link, wrench (6,))`` checked: a link of the robot that moves, 6 finite values."""
    if link not in model.frames:
        raise ValueError(f"push: '{link}' is not a link of '{model.name}' (links: "
                         f'{", ".join(model.frames)})')
    if model.frames[link].body < 0:
        raise ValueError(f"push: link '{link}' is fixed to the base: a push there moves nothing")
    w = np.asarray(wrench, dtype=float)
    if w.shape != (6,) or not np.all(np.isfinite(w)):
        raise ValueError(f'push: the wrench must be 6 finite numbers fx fy fz mx my mz, got '
                         f'{np.asarray(wrench).tolist()}')
    return link, w


def damping(model):
    """
    Return each joint's viscous damping, a smooth Coulomb law's slope at rest included.

    ``Fc tanh(qd / vs)`` damps like ``Fc / vs`` near rest: MuJoCo takes that as ``damping``
    (integrated implicitly where the integrator does) and the rest, ``Fc tanh(qd / vs) -
    Fc qd / vs``, as an applied force (:func:`_applied_friction`), whose slope lies between 0
    and ``-Fc / vs``: held over a step, it takes back at most what the damping gave.
    """
    return model.viscous + _coulomb_slope(model)


def _coulomb_slope(model):
    """Return ``Fc / vs`` of the joints with a smooth Coulomb law, 0 of the others."""
    smooth = model.coulomb_velocity > 0
    return np.where(smooth, model.coulomb / np.where(smooth, model.coulomb_velocity, 1.0), 0.0)


def damping_rate(model, q, friction=True):
    """Return the fastest decay rate (1/s) of the damping at ``q``: ``M^-1 D``'s (motors' too)."""
    from .rigid.crba import inertia_matrix

    motors = model.coupled_motors()
    D = np.diag(damping(model)) + motors.rows.T @ (motors.viscous[:, None] * motors.rows)
    if not friction or not np.any(D > 0):
        return 0.0
    M = inertia_matrix(model, np.asarray(q, dtype=float))
    # M^-1 D's eigenvalues are those of L^-1 D L^-T (M = L L^T): symmetric, real
    L = np.linalg.cholesky(M)
    X = np.linalg.solve(L, np.linalg.solve(L, D).T)
    return float(np.max(np.linalg.eigvalsh(0.5 * (X + X.T))))


def _dry_friction(model):
    """Return MuJoCo's ``frictionloss``: the Coulomb friction of joints whose law is the sign."""
    return np.where(model.coulomb_velocity > 0, 0.0, model.coulomb)


def _applied_friction(model, qd):
    """Return the friction MuJoCo's joints do not model: offsets, smooth laws less their slope."""
    smooth = model.coulomb_velocity > 0
    if not smooth.any():
        return model.friction_offset
    return model.friction_offset + np.where(
        smooth, model.coulomb * coulomb_shape(model, qd) - _coulomb_slope(model) * qd, 0.0)


def make_plant(engine, model, q0, dt, *, substeps=1, friction=True, integrator='auto',
               cell=None):
    """
    Return the plant of ``engine`` (:data:`ENGINES`); ``integrator`` and ``cell`` are MuJoCo's.

    :class:`PlantError` names a joint that moves no inertia (``M`` singular), which neither
    engine can simulate, and a cell the internal engine cannot have.
    """
    _regular_scale(model)
    if engine == 'mujoco':
        if not mujoco_available():
            raise PlantError("engine 'mujoco' needs the mujoco package (pip install mujoco), "
                             'or use engine:=internal')
        return MujocoPlant(model, q0, dt, substeps=substeps, friction=friction,
                           integrator=integrator, cell=cell)
    if engine == 'internal':
        if integrator not in ('auto', 'rk4'):
            raise PlantError(f"engine 'internal' integrates with rk4 only, not {integrator}")
        if cell is not None:
            raise PlantError("engine 'internal' has no contacts: a cell (an obstacle) needs "
                             'engine mujoco')
        return InternalPlant(model, q0, dt, substeps=substeps, friction=friction)
    raise PlantError(f'engine must be one of {", ".join(ENGINES)}, got {engine!r}')
