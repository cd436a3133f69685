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
Transmissions: how the motors turn the joints, as ros2_control's transmission_interface has it.

Every linear transmission is one matrix ``R`` (motors by joints) and the joints' zero offsets::

    q_motor = R (q - offset)        qd_motor = R qd        tau = R^T tau_motor

so that the power through it is kept (``tau . qd = tau_motor . qd_motor``).  A simple
reduction is a number on the diagonal (ros2_control's ``SimpleTransmission``: the joint's
``mechanical_reduction`` and ``offset``); a differential couples two joints and two actuators
(``DifferentialTransmission``: ``q_a1 = n_a1 (n_j1 x1 + n_j2 x2)``, ``q_a2 = n_a2 (n_j1 x1 -
n_j2 x2)``, ``x = q - offset``); a coupled wrist, where one motor turns with two joints, is a
row with two entries (a Staubli TX40's motor 6: ``32 q5 + 32 q6``).  Each motor is named after
the joint it drives (the row's own joint), so a log's motor columns are
``<joint>.motor_position``, ``<joint>.motor_velocity`` and ``<joint>.motor_effort``.

Read from a URDF's ``<transmission>`` elements (ros2_control's ``<plugin>`` or ROS 1's
``<type>``; ``<mechanical_reduction>`` or ``<mechanicalReduction>``; inside ``<ros2_control>``
or at the top) by :func:`from_urdf`, or from a YAML file with a full matrix by :func:`load`::

    joints: [joint_1, joint_2, joint_3, joint_4, joint_5, joint_6]   # R's columns and rows
    reduction:                     # motors by joints; or {joint: N} for simple reductions
      - [32, 0, 0, 0, 0, 0]
      - [0, 32, 0, 0, 0, 0]
      - [0, 0, 45, 0, 0, 0]
      - [0, 0, 0, -48, 0, 0]
      - [0, 0, 0, 0, 45, 0]
      - [0, 0, 0, 0, 32, 32]
    offset: {joint_2: -1.5707963267948966, joint_3: 1.5707963267948966}   # or a list
    motor_friction: {joint_6: {viscous: 0.6, coulomb: 1.9}}   # coupled motors only
    torque_constant: {joint_1: 0.43, joint_2: 0.43}   # N m/A at the motor: currents read

**Currents.**  A drive that logs its motor's current ``i_k`` (``<joint>.current``, the motor
named after its joint) gives its torque through the torque constant ``kt_k`` (N m/A at the
motor): ``tau_motor = kt i``, then ``tau = R^T tau_motor``.  At the joint the motor is named
after, that is a *gain* ``g_k = R[k, k] kt_k`` (N m/A at the joint):
``tau = sum_k c_k g_k i_k``.  Nominal constants are often 10-30 % off;
:mod:`.identification.gains` identifies them.

**The motors in the dynamics.**  A motor is scaled to the joint it is named after: its velocity
``w_k = c_k . qd`` with ``c_k = R[k] / R[k, k]`` (``qd_motor_k / R[k, k]``), its rotor inertia
``Ia_k = R[k, k]^2 J_k`` (the joint's armature, ``model.armature``) and its friction in torque at
that joint.  What it applies at the joints is ``c_k (Ia_k c_k . qdd + Fvm_k w_k + Fcm_k s(w_k))``:
on a simple reduction (``c_k = e_k``) this is the joint's own armature and friction, as the model
has always held them; a *coupled* motor, whose row turns other joints too (a Staubli TX40's motor
6 turns with ``qd5 + qd6``), applies its inertia and friction on every joint it turns (FIGAROH's
``Iam6``, ``fvm6``, ``fsm6``).  Its friction ``motor_friction`` (viscous ``Fvm``, Coulomb ``Fcm``,
the joint's Coulomb law) comes in addition to the joints' own; a simple reduction's motor friction
is the joint's, and is refused here.  :meth:`Transmissions.coupled` gives the coupled motors.

Every refusal is a :class:`TransmissionError` naming the joint, the transmission or the field.
"""

import math

import numpy as np

from .model import read_yaml, URDFError


class TransmissionError(URDFError):
    """A transmission that cannot be used: unknown joints, a singular matrix, a bad field."""


#: ros2_control's and ROS 1's transmission types understood, by the last part of their name.
SIMPLE, DIFFERENTIAL = 'SimpleTransmission', 'DifferentialTransmission'


class Transmissions:
    """
    The motors of some joints of a robot: ``q_motor = R (q - offset)``, ``tau = R^T tau_motor``.

    Parameters
    ----------
    joints : sequence of str, length m
        The joints driven through transmissions: the columns of ``R`` and, each motor named
        after its joint, its rows.
    reduction : array-like, shape (m, m)
        ``R``: invertible (a joint no motor turns, or two motors that move alike, is refused).
    offset : array-like, shape (m,)
        Each joint's position where its motor reads zero (ros2_control's joint ``offset``).
    name : str, optional
        What the errors call it (a URDF transmission's name).

    Attributes
    ----------
    joints : tuple of str
    reduction, offset : ndarray (read-only)
    blocks : tuple of tuple of str
        The joints that transmissions couple (each simple one alone).
    unusable : mapping of str to str
        Joints whose URDF transmission could not be read, each with the reason: a model still
        loads (a vendor's URDF may hold a type of its own), and a log's motor columns for that
        joint are refused with it.
    motor_viscous, motor_coulomb : ndarray, shape (m,) (read-only)
        The coupled motors' friction, at their joint's scale (module docstring); zero for the
        others.
    torque_constant : ndarray, shape (m,) (read-only)
        Each motor's torque per ampere at the motor, N m/A; NaN where none is known (its
        currents cannot be read).

    """

    def __init__(self, joints, reduction, offset=None, name=None, unusable=None,
                 motor_viscous=None, motor_coulomb=None, torque_constant=None):
        self.name = name or 'transmissions'
        self.unusable = dict(unusable or {})
        joints = tuple(str(j) for j in joints)
        m = len(joints)
        if len(set(joints)) != m:
            twice = sorted({j for j in joints if joints.count(j) > 1})
            raise TransmissionError(f'transmissions: joint {twice[0]!r} named twice')
        R = np.array(reduction, dtype=float)
        if R.shape != (m, m):
            raise TransmissionError(f'transmissions: the reduction matrix must be {m} by {m} '
                                    f'(motors by joints: {", ".join(joints)}), got {R.shape}')
        offset = np.zeros(m) if offset is None else np.array(offset, dtype=float)
        if offset.shape != (m,):
            raise TransmissionError(f'transmissions: offset must have {m} values, one per joint, '
                                    f'got {offset.shape}')
        for what, values in (('reduction', R), ('offset', offset)):
            bad = np.argwhere(~np.isfinite(values))
            if len(bad):
                where = joints[bad[0][-1]]
                raise TransmissionError(f'transmissions: {what} of joint {where!r} is not finite')
        for j, name in enumerate(joints):
            if not R[:, j].any():
                raise TransmissionError(f'transmissions: no motor turns joint {name!r} (its '
                                        'column of the reduction matrix is zero)')
        if m and np.linalg.cond(R) > 1e12:
            raise TransmissionError('transmissions: the reduction matrix is singular (two motors '
                                    f'move alike): joints {", ".join(joints)}')
        R.setflags(write=False)
        offset.setflags(write=False)
        self.joints, self.reduction, self.offset = joints, R, offset
        self._inverse = np.linalg.inv(R) if m else R
        self.blocks = _blocks(joints, R)
        off_diagonal = R - np.diag(np.diag(R))
        self._coupled = tuple(k for k in range(m) if off_diagonal[k].any())
        for k in self._coupled:
            if R[k, k] == 0.0:
                raise TransmissionError(
                    f'transmissions: the motor of joint {joints[k]!r} does not turn it (its '
                    'diagonal entry is zero): each motor is named after a joint it turns')
        friction = []
        for what, values in (('motor_viscous', motor_viscous), ('motor_coulomb', motor_coulomb)):
            values = np.zeros(m) if values is None else np.array(values, dtype=float)
            if values.shape != (m,) or not np.all(np.isfinite(values)) or np.any(values < 0):
                raise TransmissionError(f'transmissions: {what} must be {m} finite values >= 0, '
                                        f'one per joint, got {values!r}')
            simple = [joints[k] for k in np.flatnonzero(values) if k not in self._coupled]
            if simple:
                raise TransmissionError(
                    f'transmissions: motor friction of joint {simple[0]!r}, whose motor turns it '
                    "alone: that friction is the joint's own (Fv, Fc in joint_dynamics)")
            values.setflags(write=False)
            friction.append(values)
        self.motor_viscous, self.motor_coulomb = friction
        kt = np.full(m, np.nan) if torque_constant is None else \
            np.array(torque_constant, dtype=float)
        if kt.shape != (m,) or np.any(kt <= 0) or np.any(np.isinf(kt)):
            raise TransmissionError(f'transmissions: torque_constant must be {m} values > 0 (NaN: '
                                    f'unknown), one per joint, got {kt!r}')
        kt.setflags(write=False)
        self.torque_constant = kt

    def __repr__(self):
        return f'Transmissions({", ".join(self.joints)})'

    def __eq__(self, other):
        return (isinstance(other, Transmissions) and self.joints == other.joints
                and np.array_equal(self.reduction, other.reduction)
                and np.array_equal(self.offset, other.offset)
                and np.array_equal(self.motor_viscous, other.motor_viscous)
                and np.array_equal(self.motor_coulomb, other.motor_coulomb)
                and np.array_equal(self.torque_constant, other.torque_constant, equal_nan=True)
                and self.unusable == other.unusable)

    __hash__ = None

    # --- the maps ---------------------------------------------------------------------------
    def joint_positions(self, motor_positions):
        """``q = R^-1 q_motor + offset``: ``(..., m)`` motor positions to the joints'."""
        return np.asarray(motor_positions, dtype=float) @ self._inverse.T + self.offset

    def joint_velocities(self, motor_velocities):
        """``qd = R^-1 qd_motor``."""
        return np.asarray(motor_velocities, dtype=float) @ self._inverse.T

    def joint_efforts(self, motor_efforts):
        """``tau = R^T tau_motor``: what the motors' torques apply at the joints."""
        return np.asarray(motor_efforts, dtype=float) @ self.reduction

    def motor_positions(self, positions):
        """``q_motor = R (q - offset)``."""
        return (np.asarray(positions, dtype=float) - self.offset) @ self.reduction.T

    def motor_velocities(self, velocities):
        """``qd_motor = R qd``."""
        return np.asarray(velocities, dtype=float) @ self.reduction.T

    def motor_efforts(self, efforts):
        """``tau_motor = R^-T tau``: the motor torques that apply ``tau`` at the joints."""
        return np.asarray(efforts, dtype=float) @ self._inverse

    # --- the motors in the dynamics -----------------------------------------------------------
    def coupled(self, joint_names):
        """
        Give the coupled motors over a model's joints: ``(joints, rows, viscous, coulomb)``.

        ``joints`` (r,) the model index of each one's own joint, ``rows`` (r, n) its ``c_k``
        over ``joint_names`` (module docstring), ``viscous`` and ``coulomb`` (r,) its friction.
        Every joint of a coupled motor must be in ``joint_names``.
        """
        index = {name: i for i, name in enumerate(joint_names)}
        r = len(self._coupled)
        joints, rows = np.zeros(r, dtype=np.int64), np.zeros((r, len(joint_names)))
        for row, k in enumerate(self._coupled):
            for j in np.flatnonzero(self.reduction[k]):
                if self.joints[j] not in index:
                    raise TransmissionError(f'transmissions: the motor of joint '
                                            f'{self.joints[k]!r} turns {self.joints[j]!r}, '
                                            'which is not a joint of the model')
                rows[row, index[self.joints[j]]] = self.reduction[k, j] / self.reduction[k, k]
            joints[row] = index[self.joints[k]]
        pick = list(self._coupled)
        return joints, rows, self.motor_viscous[pick], self.motor_coulomb[pick]

    @property
    def coupled_joints(self):
        """Name the joints whose motors are coupled (module docstring), in :attr:`joints` order."""
        return tuple(self.joints[k] for k in self._coupled)

    def with_motor_friction(self, viscous=None, coulomb=None):
        """Return a copy with the coupled motors' friction replaced: ``{joint: value}``."""
        values = [np.array(self.motor_viscous), np.array(self.motor_coulomb)]
        for array, given in zip(values, (viscous, coulomb)):
            for joint, value in (given or {}).items():
                if joint not in self.joints:
                    raise TransmissionError(f'transmissions: motor friction of {joint!r}, a joint '
                                            f'no transmission names ({", ".join(self.joints)})')
                array[self.joints.index(joint)] = value
        return Transmissions(self.joints, self.reduction, self.offset, self.name, self.unusable,
                             *values, self.torque_constant)

    def with_torque_constants(self, constants):
        """Return a copy with some motors' torque constants replaced: ``{joint: N m/A}``."""
        kt = np.array(self.torque_constant)
        for joint, value in constants.items():
            if joint not in self.joints:
                raise TransmissionError(f'transmissions: torque constant of {joint!r}, a joint no '
                                        f'transmission names ({", ".join(self.joints)})')
            kt[self.joints.index(joint)] = value
        return Transmissions(self.joints, self.reduction, self.offset, self.name, self.unusable,
                             self.motor_viscous, self.motor_coulomb, kt)

    def gains(self):
        """Return each motor's gain at its joint, ``R[k, k] kt_k`` (N m/A; NaN: unknown)."""
        return np.diag(self.reduction) * self.torque_constant

    def current_rows(self):
        """Return ``C`` (m, m) with ``tau = C^T (g * i)``: row k is ``c_k = R[k] / R[k, k]``."""
        return self.reduction / np.diag(self.reduction)[:, None]

    def to_dict(self):
        """Return the YAML form :func:`load` reads (plain lists and floats)."""
        out = {'joints': list(self.joints), 'reduction': self.reduction.tolist(),
               'offset': {j: float(v) for j, v in zip(self.joints, self.offset) if v}}
        friction = {self.joints[k]: {'viscous': float(self.motor_viscous[k]),
                                     'coulomb': float(self.motor_coulomb[k])}
                    for k in self._coupled
                    if self.motor_viscous[k] or self.motor_coulomb[k]}
        if friction:
            out['motor_friction'] = friction
        known = {j: float(k) for j, k in zip(self.joints, self.torque_constant) if k == k}
        if known:
            out['torque_constant'] = known
        return out

    # --- for a model --------------------------------------------------------------------------
    def restricted(self, model_joints, model_name='the model'):
        """
        Keep the transmissions of the joints in ``model_joints``; the others' are dropped.

        A transmission that couples a joint of the model with one that is not (a sub-tree, a
        link not mounted) is refused: its motors' positions need both.
        """
        keep = set(model_joints)
        for block in self.blocks:
            inside = [j for j in block if j in keep]
            if inside and len(inside) < len(block):
                outside = [j for j in block if j not in keep]
                raise TransmissionError(
                    f'a transmission couples {", ".join(inside)} (in {model_name}) with '
                    f'{", ".join(outside)} (not in it): its motors need every joint it turns')
        unusable = {j: why for j, why in self.unusable.items() if j in keep}
        if all(j in keep for j in self.joints) and unusable == self.unusable:
            return self
        rows = [k for k, j in enumerate(self.joints) if j in keep]
        if not rows and not unusable:
            return None
        return Transmissions([self.joints[k] for k in rows], self.reduction[np.ix_(rows, rows)],
                             self.offset[rows], self.name, unusable, self.motor_viscous[rows],
                             self.motor_coulomb[rows], self.torque_constant[rows])


def _blocks(joints, R):
    """Group the joints that the matrix couples (connected components), in the joints' order."""
    m = len(joints)
    group = list(range(m))

    def find(i):
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i
    for r, c in zip(*np.nonzero(R)):
        a, b = find(r), find(c)
        if a != b:
            group[max(a, b)] = min(a, b)
    out = {}
    for j in range(m):
        out.setdefault(find(j), []).append(joints[j])
    return tuple(tuple(v) for v in out.values())


def combined(parts, unusable=None):
    """
    Make one :class:`Transmissions` of several, each over its own joints (block diagonal).

    A joint in two of them is refused, naming it.  ``unusable``: see :class:`Transmissions`.
    """
    joints, seen = [], {}
    for part in parts:
        for j in part.joints:
            if j in seen:
                raise TransmissionError(f"joint {j!r} is in two transmissions, '{seen[j]}' and "
                                        f"'{part.name}'")
            seen[j] = part.name
            joints.append(j)
    m = len(joints)
    R, offset, at = np.zeros((m, m)), np.zeros(m), 0
    viscous, coulomb, kt = np.zeros(m), np.zeros(m), np.full(m, np.nan)
    for part in parts:
        size = len(part.joints)
        R[at:at + size, at:at + size] = part.reduction
        offset[at:at + size] = part.offset
        viscous[at:at + size] = part.motor_viscous
        coulomb[at:at + size] = part.motor_coulomb
        kt[at:at + size] = part.torque_constant
        at += size
    return Transmissions(joints, R, offset, unusable=unusable, motor_viscous=viscous,
                         motor_coulomb=coulomb, torque_constant=kt)


# --- YAML -------------------------------------------------------------------------------------
def load(source, joint_names=None):
    """
    Read transmissions from a YAML file path, YAML text or a mapping (module docstring).

    ``reduction`` is a matrix (with ``joints`` naming its columns and rows) or a mapping
    ``{joint: N}`` of simple reductions; ``offset`` a list in ``joints`` order or a mapping
    (absent joints: 0).  With ``joint_names`` (the model's), every joint must be one of them.
    """
    data = read_yaml(source, 'transmissions', TransmissionError)
    if not isinstance(data, dict):
        raise TransmissionError('transmissions YAML must be a mapping with reduction (and '
                                f'joints, offset), got {type(data).__name__}')
    fields = ('joints', 'reduction', 'offset', 'motor_friction', 'torque_constant')
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise TransmissionError(f'transmissions YAML: unknown field {unknown[0]!r} (fields: '
                                f'{", ".join(fields)})')
    if 'reduction' not in data:
        raise TransmissionError('transmissions YAML has no reduction (a matrix with joints, or '
                                '{joint: N})')
    reduction = data['reduction']
    if isinstance(reduction, dict):
        joints = list(reduction)
        if 'joints' in data and list(data['joints']) != joints:
            raise TransmissionError('transmissions YAML: reduction names joints '
                                    f'{", ".join(joints)}, joints says {data["joints"]}')
        R = np.diag([_number(reduction[j], f'reduction of {j!r}') for j in joints])
    else:
        if 'joints' not in data:
            raise TransmissionError('transmissions YAML: a reduction matrix needs joints: the '
                                    'names of its columns (and of its rows, the motors)')
        joints = [str(j) for j in data['joints']]
        if not isinstance(reduction, list) or not all(isinstance(r, list) for r in reduction):
            raise TransmissionError('transmissions YAML: reduction must be a list of rows (one '
                                    'per motor) or {joint: N}')
        for i, row in enumerate(reduction):
            if len(row) != len(joints):
                raise TransmissionError(f'transmissions YAML: reduction row {i + 1} (motor of '
                                        f'{joints[i] if i < len(joints) else "?"}) has '
                                        f'{len(row)} values for {len(joints)} joints')
        R = [[_number(x, f'reduction row {i + 1}') for x in row] for i, row in
             enumerate(reduction)]
    offset = data.get('offset')
    if isinstance(offset, dict):
        stray = [j for j in offset if j not in joints]
        if stray:
            raise TransmissionError(f'transmissions YAML: offset of {stray[0]!r}, a joint no '
                                    'reduction names')
        offset = [_number(offset.get(j, 0.0), f'offset of {j!r}') for j in joints]
    elif offset is not None:
        if not isinstance(offset, list):
            raise TransmissionError('transmissions YAML: offset must be a list (joints order) or '
                                    '{joint: offset}')
        offset = [_number(x, 'offset') for x in offset]
    if joint_names is not None:
        stray = [j for j in joints if j not in joint_names]
        if stray:
            raise TransmissionError(f'transmissions: {stray[0]!r} is not a joint of the robot '
                                    f'(its joints: {", ".join(joint_names)})')
    viscous, coulomb = _motor_friction(data.get('motor_friction'), joints)
    constants = data.get('torque_constant') or {}
    if not isinstance(constants, dict):
        raise TransmissionError('transmissions YAML: torque_constant must be {joint: N m/A}, got '
                                f'{type(constants).__name__}')
    stray = [j for j in constants if j not in joints]
    if stray:
        raise TransmissionError(f'transmissions YAML: torque_constant of {stray[0]!r}, a joint '
                                'no reduction names')
    kt = [_number(constants[j], f'torque_constant of {j!r}') if j in constants else math.nan
          for j in joints]
    return Transmissions(joints, R, offset, motor_viscous=viscous, motor_coulomb=coulomb,
                         torque_constant=kt)


def _motor_friction(given, joints):
    """``motor_friction: {joint: {viscous: .., coulomb: ..}}`` as two arrays in joints order."""
    viscous, coulomb = np.zeros(len(joints)), np.zeros(len(joints))
    if given is None:
        return viscous, coulomb
    if not isinstance(given, dict):
        raise TransmissionError('transmissions YAML: motor_friction must be {joint: {viscous: .., '
                                f'coulomb: ..}}, got {type(given).__name__}')
    for joint, terms in given.items():
        if joint not in joints:
            raise TransmissionError(f'transmissions YAML: motor_friction of {joint!r}, a joint '
                                    'no reduction names')
        if not isinstance(terms, dict) or set(terms) - {'viscous', 'coulomb'}:
            raise TransmissionError(f'transmissions YAML: motor_friction of {joint!r} must be '
                                    f'{{viscous: .., coulomb: ..}}, got {terms!r}')
        k = joints.index(joint)
        viscous[k] = _number(terms.get('viscous', 0.0), f'motor_friction viscous of {joint!r}')
        coulomb[k] = _number(terms.get('coulomb', 0.0), f'motor_friction coulomb of {joint!r}')
    return viscous, coulomb


def _number(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise TransmissionError(f'transmissions: {what} must be a finite number, got {x!r}')
    return float(x)


# --- URDF -------------------------------------------------------------------------------------
def from_urdf(root, joint_names=None):
    """
    Read the transmissions of a URDF's parsed ``<robot>`` element (lxml); None if it has none.

    Simple and differential transmissions, in ros2_control's form (``<plugin>``, a joint's
    ``<mechanical_reduction>`` and ``<offset>``; a differential's actuators' reductions too) or
    ROS 1's (``<type>``, the actuator's ``<mechanicalReduction>``).  One of another type, or
    that does not read, leaves its joints :attr:`~Transmissions.unusable` with the reason: the
    model loads, and a log's motor columns for those joints are refused (a log read through a
    transmission misread would be wrong silently).
    """
    parts, unusable = [], {}
    for element in root.iter('transmission'):
        name = element.get('name') or '(unnamed)'
        try:
            parts.append(_transmission(element, name))
        except TransmissionError as e:
            for joint in element.findall('joint'):
                unusable[joint.get('name')] = str(e)
    names = {}
    for part in parts:
        for j in part.joints:
            names.setdefault(j, []).append(part.name)
    for j, where in names.items():
        if len(where) > 1:
            unusable[j] = f"joint {j!r} is in two transmissions, '{where[0]}' and '{where[1]}'"
        elif joint_names is not None and j not in joint_names:
            unusable[j] = f"transmission '{where[0]}' turns {j!r}, not a joint of the robot"
    for part in parts:                      # a coupled joint's partner goes with it
        bad = [j for j in part.joints if j in unusable]
        for j in part.joints if bad else ():
            unusable.setdefault(j, unusable[bad[0]])
    usable = [p for p in parts if not any(j in unusable for j in p.joints)]
    if not usable and not unusable:
        return None
    return combined(usable, unusable)


def _transmission(element, name):
    """Read one ``<transmission>`` element (see :func:`from_urdf`)."""
    kind = (_text(element, 'plugin') or _text(element, 'type') or '').split('/')[-1]
    kind = kind.replace('Loader', '')
    joints = list(element.findall('joint'))
    actuators = list(element.findall('actuator'))
    if kind == SIMPLE:
        if len(joints) != 1:
            raise TransmissionError(f"transmission '{name}': a SimpleTransmission turns one "
                                    f'joint, it names {len(joints)}')
        joint = joints[0]
        n = _reduction(joint, name) if _has_reduction(joint) else (
            _reduction(actuators[0], name) if actuators and _has_reduction(actuators[0])
            else 1.0)
        return Transmissions([joint.get('name')], [[n]], [_offset(joint, name)], name)
    if kind == DIFFERENTIAL:
        if len(joints) != 2 or len(actuators) != 2:
            raise TransmissionError(f"transmission '{name}': a DifferentialTransmission "
                                    f'turns two joints with two actuators, it names '
                                    f'{len(joints)} and {len(actuators)}')
        joints = _by_role(joints, 'joint', name)
        actuators = _by_role(actuators, 'actuator', name)
        jr = [_reduction(j, name) if _has_reduction(j) else 1.0 for j in joints]
        ar = [_reduction(a, name) if _has_reduction(a) else 1.0 for a in actuators]
        R = [[ar[0] * jr[0], ar[0] * jr[1]], [ar[1] * jr[0], -ar[1] * jr[1]]]
        return Transmissions([j.get('name') for j in joints], R,
                             [_offset(j, name) for j in joints], name)
    raise TransmissionError(f"transmission '{name}': type {kind or '(none)'!r} is not "
                            f'understood (only {SIMPLE} and {DIFFERENTIAL}; a YAML with the full '
                            'matrix, --transmissions, says any linear one)')


def _text(element, tag):
    child = element.find(tag)
    return None if child is None or child.text is None else child.text.strip()


def _has_reduction(element):
    return any(element.find(tag) is not None
               for tag in ('mechanical_reduction', 'mechanicalReduction'))


def _reduction(element, name):
    text = _text(element, 'mechanical_reduction') or _text(element, 'mechanicalReduction')
    try:
        n = float(text)
    except (TypeError, ValueError):
        n = math.nan
    if not math.isfinite(n) or n == 0.0:
        raise TransmissionError(f"transmission '{name}': the mechanical reduction of "
                                f"{element.tag} '{element.get('name')}' must be a finite number "
                                f'other than 0, got {text!r}')
    return n


def _offset(joint, name):
    text = _text(joint, 'offset')
    if text is None:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise TransmissionError(f"transmission '{name}': the offset of joint "
                                f"'{joint.get('name')}' must be a finite number, got {text!r}")
    return value


def _by_role(elements, kind, name):
    """Order a differential's two joints or actuators by their roles (joint1, joint2)."""
    roles = [e.get('role') for e in elements]
    if all(roles):
        expected = [f'{kind}1', f'{kind}2']
        if sorted(roles) != expected:
            raise TransmissionError(f"transmission '{name}': the {kind}s' roles must be "
                                    f'{" and ".join(expected)}, got {", ".join(roles)}')
        return sorted(elements, key=lambda e: e.get('role'))
    return elements
