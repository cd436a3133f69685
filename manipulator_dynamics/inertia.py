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
Is an inertia physical: the one check, with one tolerance, for every loader, payload and fit.

A body's inertial parameters are a mass distribution exactly when its pseudo-inertia
``[[Sigma, h], [h^T, m]]`` is positive semi-definite (Wensing, Kim & Slotine, 2017): the mass
not negative and, about the centre of mass, the principal moments not negative and each at most
the sum of the other two (the triangle inequalities).  :func:`tensor_fault` checks a tensor
about the centre of mass (a URDF link's, a payload's); :func:`body_fault` a body's ten
parameters about its frame (a model's, an identified set's).
"""

import numpy as np

#: Relative tolerance of every check, on the largest principal moment: URDFs print inertias with
#: about 6 significant digits, so a principal moment may round to a relative 1e-6 beyond its
#: bound; further than that is not round-off.
TOLERANCE = 1e-6

#: The scale the tolerance takes for a tensor whose moments are all below it (kg m^2): a
#: milligram a millimetre from its axis, less than any robot link has.  A point mass's zero
#: tensor with the products a CAD export leaves on it (1e-20) is then zero, not a fault.
SMALLEST = 1e-12


def tensor_fault(inertia, mass=None):
    """
    Say why a 3x3 inertia tensor about the centre of mass is impossible; None when it is not.

    With ``mass`` 0, the tensor must be zero too (a massless frame), to the tolerance.
    """
    moments = np.linalg.eigvalsh(np.asarray(inertia, dtype=float))
    tol = TOLERANCE * max(np.abs(moments).max(), SMALLEST)
    a, b, c = moments
    if a < -tol:
        return f'is not positive semi-definite (principal moments {a:.6g}, {b:.6g}, {c:.6g})'
    if a + b < c - tol:
        return (f'violates the triangle inequality (principal moments {a:.6g} + {b:.6g} < '
                f'{c:.6g}: each must be at most the sum of the other two)')
    if mass is not None and mass == 0 and c > tol:
        return f'is not zero although the mass is zero (largest principal moment {c:.6g})'
    return None


def body_fault(phi):
    """
    Say why a body's ten parameters ``XX XY XZ YY YZ ZZ MX MY MZ M`` are impossible; or None.

    The mass must be positive (a body of no mass at all is :func:`is_mass_distribution`'s
    case), and the inertia about the centre of mass pass :func:`tensor_fault`.
    """
    phi = np.asarray(phi, dtype=float)
    m = phi[9]
    if not m > 0:
        return f'mass {m:.6g} kg is not positive'
    xx, xy, xz, yy, yz, zz = phi[:6]
    c = phi[6:9] / m
    about_com = (np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
                 - m * (c @ c * np.eye(3) - np.outer(c, c)))
    fault = tensor_fault(about_com)
    return None if fault is None else f'inertia about the centre of mass {fault}'


def is_mass_distribution(phi):
    """Tell whether ten parameters are a mass distribution, or nothing at all (all zero)."""
    return bool(np.all(np.asarray(phi) == 0)) or body_fault(phi) is None
