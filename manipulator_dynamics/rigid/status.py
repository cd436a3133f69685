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
What every compiled kernel returns, and the one place that turns it into an error.

A kernel cannot raise a useful error (numba's are terse, and a batch runs in threads): it
returns a status, and the public function calls :func:`check`, which raises the error that
names the argument, sample and joint.  ``OK``: done; ``NON_FINITE``: an input is nan or inf;
``BAD_VECTOR``: a single-state call's vector has the wrong length (the caller then takes the
general path, which says which); ``k >= 0``: a zero pivot at joint ``k``, M(q) singular.
"""

from .._inputs import raise_nonfinite

OK, NON_FINITE, BAD_VECTOR = -1, -2, -3


class SingularInertiaError(ValueError):
    """M(q) is singular: a joint moves no inertia (a massless tip, or mass only on its axis)."""


def worst(statuses):
    """Return one status for a batch's chunks: a non-finite input first, then a singular joint."""
    return NON_FINITE if NON_FINITE in statuses else max(statuses)


def check(model, status, names, *arrays):
    """
    Raise for a kernel's ``status`` (or a list of them, one per chunk of a batch); else return.

    ``names`` and ``arrays``: the inputs, for the message of a non-finite one.
    """
    if not isinstance(status, int):
        status = worst(status)
    if status == NON_FINITE:
        raise_nonfinite(model, names, *arrays)
    if status >= 0:
        raise_singular(model, status)


def raise_singular(model, k):
    """Raise :class:`SingularInertiaError` naming joint ``k``."""
    name = model.joint_names[k]
    raise SingularInertiaError(
        f"M(q) is singular: joint '{name}' moves no inertia about its axis (the links it "
        'carries have zero mass and inertia, or all their mass lies on the axis) and has no '
        f"armature; give those links mass, set an armature for '{name}', or leave it out with "
        'tip_links')
