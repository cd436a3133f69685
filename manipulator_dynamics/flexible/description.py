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
A flexible arm's description, checked: its links' beam properties and its YAML document.

What :mod:`.arm` builds the finite-element model from: every entry checked, every error naming
the link and the field (:class:`FlexibleArmError`).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
import os

import numpy as np

from .. import robots
from ..model import read_yaml
from ..urdf import load_model

#: Beam properties of a link, as YAML keys and :meth:`FlexibleArm.planar` arguments.
BEAM_FIELDS = ('flexural_rigidity', 'shear_rigidity', 'axial_rigidity', 'torsional_rigidity',
               'mass', 'elements', 'damping', 'mass_at')

#: Where a link's mass may sit (``mass_at``): spread along it (the default), all of it at the node
#: of its centre of gravity (Isobe & Imaizumi's pin-joint rigid-bar link), or a list of nodes.
DISTRIBUTED = 'distributed'
COG = 'cog'


class FlexibleArmError(ValueError):
    """A flexible arm that cannot be built: the message names the link and the field."""


@dataclass(frozen=True)
class Link:
    """Beam properties of one link (SI units); ``inf`` flexural rigidity means rigid."""

    name: str
    length: float
    mass: float
    elements: int
    flexural_rigidity: tuple        # (EI_y, EI_z), N m^2
    shear_rigidity: float           # kappa G A, N
    axial_rigidity: float           # E A, N
    torsional_rigidity: float       # G J, N m^2
    damping: tuple                  # Rayleigh (alpha 1/s, beta s)
    mass_at: object = DISTRIBUTED   # DISTRIBUTED, COG, or a tuple of the link's node numbers
    centre: float = 0.5             # its centre of gravity along it, a fraction of its length

    @property
    def rigid(self) -> bool:
        """Tell whether this link has infinite flexural rigidity."""
        return math.isinf(self.flexural_rigidity[0]) or math.isinf(self.flexural_rigidity[1])


#: The keys of a ``planar:`` document: the arguments of :meth:`FlexibleArm.planar`.
PLANAR_ARGS = ('lengths', 'masses', 'flexural_rigidity', 'elements_per_link', 'shear_rigidity',
               'axial_rigidity', 'torsional_rigidity', 'damping', 'mass_at', 'motor_masses',
               'payload', 'gravity', 'base', 'joint_names', 'name')


def read_document(source):
    """
    Read a flexible arm's YAML document (see ``config/flexible_arm.yaml``), its keys checked.

    Returns ``('planar', arguments of FlexibleArm.planar)`` or ``('model', the URDF's Model,
    the document)`` for :meth:`FlexibleArm.from_model`; a document that is neither is refused
    with what it lacks.
    """
    doc = read_yaml(source, 'flexible arm', FlexibleArmError)
    if not isinstance(doc, Mapping):
        raise FlexibleArmError('a flexible arm YAML must be a mapping with a planar: or urdf: '
                               'key')
    doc = doc.get('flexible_arm', doc)
    if 'planar' in doc:
        args = dict(doc['planar'] or {})
        missing = [k for k in ('lengths', 'masses', 'flexural_rigidity') if k not in args]
        if missing:
            raise FlexibleArmError(f'planar arm: missing {", ".join(missing)}')
        unknown = set(args) - set(PLANAR_ARGS)
        if unknown:
            raise FlexibleArmError(f'planar arm: unknown key(s) {", ".join(sorted(unknown))} '
                                   f'(expected {", ".join(PLANAR_ARGS)})')
        return 'planar', args
    if 'urdf' in doc:
        path = doc['urdf']
        if path in robots.NAMES:
            path = robots.path(path)
        base = os.path.dirname(os.fspath(source)) if isinstance(source, (str, os.PathLike)) \
            and os.path.exists(os.fspath(source)) else ''
        if base and not os.path.isabs(path) and not os.path.exists(path):
            path = os.path.join(base, path)
        tips = doc.get('tip_link')
        model = load_model(path, root_link=doc.get('root_link'),
                           tip_links=[tips] if isinstance(tips, str) else tips,
                           gravity=doc.get('gravity', (0.0, 0.0, -9.81)))
        return 'model', model, doc
    raise FlexibleArmError('a flexible arm YAML needs a planar: or a urdf: key')


def beam_entries(model, beams, tip, motor_masses, payload):
    """
    Read the beam properties of every link of ``model``'s chain (a mapping, or a YAML document).

    Returns ``(entries by link name, tip, motor_masses, payload)``: a document with ``links:``
    may also give ``tip``, ``motor_masses`` and ``payload``, which win over the arguments.  A
    link missing its ``flexural_rigidity``, or a name that is no link of the chain, is refused;
    a link's ``mass`` defaults to its URDF mass.
    """
    beams = read_yaml(beams, 'beam properties', FlexibleArmError)
    if not isinstance(beams, Mapping):
        raise FlexibleArmError('beam properties must be a mapping of link name to '
                               f'{{{", ".join(BEAM_FIELDS)}}}')
    if 'links' in beams:
        tip = beams.get('tip', tip)
        motor_masses = beams.get('motor_masses', motor_masses)
        payload = beams.get('payload', payload)
        beams = beams['links']
        if not isinstance(beams, Mapping):
            raise FlexibleArmError("'links' must be a mapping of link name to beam properties")
    for name in beams:
        if name not in model.link_names:
            raise FlexibleArmError(f"beam properties name link '{name}', which is not a link "
                                   f'of the chain (links: {", ".join(model.link_names)})')
    entries = {}
    for i, name in enumerate(model.link_names):
        entry = dict(beams.get(name) or {})
        if 'flexural_rigidity' not in entry:
            raise FlexibleArmError(f"link '{name}': flexural_rigidity is missing (a number in "
                                   'N m^2, a pair [EI_y, EI_z], or .inf for a rigid link)')
        entry.setdefault('mass', float(model.inertial[i, 9]))
        entries[name] = entry
    return entries, tip, motor_masses, payload


def per_link(value, n, what):
    """Return ``value`` as a list of floats, one per link (``n`` of them unless ``n`` is None)."""
    try:
        values = [float(v) for v in np.atleast_1d(np.asarray(value, dtype=float))]
    except (TypeError, ValueError):
        raise FlexibleArmError(f'{what} must be numbers, got {value!r}') from None
    if n is not None and len(values) != n:
        raise FlexibleArmError(f'{what} needs {n} values (one per link), got {len(values)}')
    if not values:
        raise FlexibleArmError(f'{what} is empty: an arm needs at least one link')
    return values


def pick(value, i, n, key):
    """
    Link ``i``'s value of a property given for all links or as a sequence of one per link.

    ``damping`` is a pair ``(alpha, beta)`` for all links or a sequence of pairs; ``mass_at`` a
    word or a list of node numbers for all links, or a sequence of those; other properties are
    one number for all links or a sequence of ``n`` (each ``flexural_rigidity`` may itself be a
    pair ``(EI_y, EI_z)``).
    """
    if key == 'mass_at':
        if isinstance(value, str) or all(isinstance(v, (int, np.integer)) for v in value):
            return value
    elif isinstance(value, (str, bytes)):
        raise FlexibleArmError(f'{key} must be numbers, got {value!r}')
    if not isinstance(value, (Sequence, np.ndarray)):
        return value
    if key == 'damping' and len(value) and not isinstance(value[0], (Sequence, np.ndarray)):
        return value
    if len(value) == n:
        return value[i]
    raise FlexibleArmError(f'{key} needs one value for all links or {n} (one per link), got '
                           f'{len(value)}')


def positive(value, where, what):
    """Return ``value`` as a positive float, or refuse it naming ``where`` and ``what``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise FlexibleArmError(f'{where}: {what} must be a number, got {value!r}') from None
    if not v > 0 or math.isnan(v):
        raise FlexibleArmError(f'{where}: {what} must be positive, got {v:g}')
    return v


def nonnegative(value, where, what):
    """Return ``value`` as a finite float >= 0, or refuse it naming ``where`` and ``what``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise FlexibleArmError(f'{where}: {what} must be a number, got {value!r}') from None
    if not (v >= 0 and math.isfinite(v)):
        raise FlexibleArmError(f'{where}: {what} must be finite and >= 0, got {v:g}')
    return v


def link_entry(name, entry):
    """Check link ``name``'s beam properties ``entry``; return its :class:`Link` (length 0)."""
    if not isinstance(entry, Mapping):
        raise FlexibleArmError(f"link '{name}': beam properties must be a mapping")
    unknown = set(entry) - set(BEAM_FIELDS)
    if unknown:
        raise FlexibleArmError(f"link '{name}': unknown field(s) {', '.join(sorted(unknown))} "
                               f'(expected {", ".join(BEAM_FIELDS)})')
    ei = entry['flexural_rigidity']
    ei = [ei, ei] if not isinstance(ei, (Sequence, np.ndarray)) or isinstance(ei, str) \
        else list(ei)
    if len(ei) != 2:
        raise FlexibleArmError(f"link '{name}': flexural_rigidity must be one number or a pair "
                               f'[EI_y, EI_z], got {len(ei)} values')
    ei = tuple(positive(v, f"link '{name}'", 'flexural_rigidity') for v in ei)
    mass = positive(entry.get('mass', 0.0), f"link '{name}'", 'mass')
    if math.isinf(mass):
        raise FlexibleArmError(f"link '{name}': mass must be finite")
    optional = {}
    for key in ('shear_rigidity', 'axial_rigidity', 'torsional_rigidity'):
        if entry.get(key) is not None:
            optional[key] = positive(entry[key], f"link '{name}'", key)
    elements = entry.get('elements', 4)
    if isinstance(elements, bool) or not isinstance(elements, (int, np.integer)) or elements < 1:
        raise FlexibleArmError(f"link '{name}': elements must be an integer >= 1, got "
                               f'{elements!r}')
    damping = entry.get('damping', (0.0, 0.0))
    if isinstance(damping, Mapping):
        damping = (damping.get('alpha', 0.0), damping.get('beta', 0.0))
    try:
        damping = tuple(float(v) for v in damping)
    except (TypeError, ValueError):
        raise FlexibleArmError(f"link '{name}': damping must be a pair (alpha, beta), got "
                               f'{damping!r}') from None
    if len(damping) != 2 or not all(math.isfinite(v) and v >= 0 for v in damping):
        raise FlexibleArmError(f"link '{name}': damping must be two finite numbers >= 0 "
                               f'(alpha 1/s, beta s), got {damping}')
    return Link(name=name, length=0.0, mass=mass, elements=int(elements), flexural_rigidity=ei,
                shear_rigidity=optional.get('shear_rigidity', math.nan),
                axial_rigidity=optional.get('axial_rigidity', math.nan),
                torsional_rigidity=optional.get('torsional_rigidity', math.nan), damping=damping,
                mass_at=mass_at_entry(name, entry.get('mass_at')))


def mass_at_entry(name, value):
    """Check a link's ``mass_at``: DISTRIBUTED, COG, or a non-empty list of node numbers."""
    if value is None or value == DISTRIBUTED:
        return DISTRIBUTED
    if value == COG:
        return COG
    if isinstance(value, (Sequence, np.ndarray)) and not isinstance(value, str) and len(value) \
            and all(isinstance(j, (int, np.integer)) and not isinstance(j, bool) for j in value):
        return tuple(int(j) for j in value)
    raise FlexibleArmError(f"link '{name}': mass_at must be '{DISTRIBUTED}', '{COG}' or a list "
                           f'of node numbers along the link, got {value!r}')
