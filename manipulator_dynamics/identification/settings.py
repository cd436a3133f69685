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
How a recording becomes equations: the one settings object a fit and its folds share.

:func:`.estimate.identify` takes its options by keyword, as a user writes them; what makes
the equations of some data of them (the recording's conditioning and the friction law, the
columns, the equations left out) is one :class:`Settings`, made once and handed down: to
:func:`.fit.fit` and its :func:`.fit.equations`, to the folds that choose the cutoff, the
prior's weight and threshold (:mod:`.selection`), and to a fold's fit in
:func:`.estimate.cross_validate`.  What is solved of the equations (the prior, the consistent
set) and what they are judged on (validation data, models compared) are not settings of the
equations: they stay the solving's keywords.
"""

import dataclasses
from dataclasses import dataclass

from .filtering import CUTOFF_HZ
from .friction import friction_law


@dataclass(frozen=True, eq=False)
class Settings:
    """
    What makes a recording's equations: its conditioning, the friction law, the columns.

    Attributes
    ----------
    friction : bool or str
        The friction law as given (:func:`.friction.friction_law` reads it; :attr:`law` is
        the law).
    armature : bool or None
        Identify the rotor inertias; None: where the model has them.
    base : BaseParameters or None
        The columns; None: made from the model with the law.
    cutoff : float
        The low-pass cutoff in Hz (a number here: :func:`.selection.resolve_cutoff` chooses one
        from ``'auto'`` or None before any settings are made of it).
    topic : str
        The JointState topic of a rosbag2 recording.
    retime : bool
        Put a log with the robot's velocities on the robot's clock (:mod:`..recordings.timing`).
    still : float, 'auto' or None
        Leave out the equations of a joint slower than this (:mod:`.stiction`).

    """

    friction: object = True
    armature: object = None
    base: object = None
    cutoff: float = CUTOFF_HZ
    topic: str = '/joint_states'
    retime: bool = True
    still: object = None

    def __post_init__(self):
        """Refuse an unknown friction law before anything is read."""
        friction_law(self.friction)

    @classmethod
    def given(cls, settings=None, **options):
        """
        Return ``settings`` with ``options`` in place; made of ``options`` alone where None.

        What a function that takes settings or keywords makes of them: ``fit(model, data,
        friction='smooth')`` and ``fit(model, data, Settings(friction='smooth'))`` alike.  An
        option that is no setting is a TypeError naming it, as a keyword would be.
        """
        unknown = sorted(set(options) - NAMES)
        if unknown:
            raise TypeError(f"{', '.join(unknown)}: not settings of the equations (they are "
                            f"{', '.join(sorted(NAMES))})")
        if settings is None:
            return cls(**options)
        return dataclasses.replace(settings, **options) if options else settings

    @property
    def law(self):
        """Return the friction law's name (:data:`.friction.FRICTION_LAWS`)."""
        return friction_law(self.friction)

    def replace(self, **changes):
        """Return these settings with ``changes``."""
        return dataclasses.replace(self, **changes)

    def options(self):
        """Return the settings as keywords (those :func:`.fit.fit` and ``identify`` take)."""
        return {name: getattr(self, name) for name in ORDER}

    def key(self, named):
        """Return the settings as part of a key, each value through ``named`` (held by id)."""
        return tuple((name, named(getattr(self, name))) for name in ORDER)


#: The settings' names, in the order of their fields.
ORDER = tuple(f.name for f in dataclasses.fields(Settings))
NAMES = frozenset(ORDER)
