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

from dataclasses import dataclass

from .filtering import CUTOFF_HZ
from .friction import friction_law
from .._settings import SettingsValue


@dataclass(frozen=True, eq=False)
class Settings(SettingsValue):
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

    OF = 'the equations'

    def __post_init__(self):
        """Refuse an unknown friction law before anything is read."""
        friction_law(self.friction)

    @property
    def law(self):
        """Return the friction law's name (:data:`.friction.FRICTION_LAWS`)."""
        return friction_law(self.friction)

    def key(self, named):
        """
        Return the settings as part of a key, each value through ``named`` (held by id).

        The columns by what they are (:attr:`.base_parameters.BaseParameters.identity`): the
        same for two made apart of one robot.
        """
        return tuple((name, named(getattr(self, name) if name != 'base' or self.base is None
                                  else self.base.identity)) for name in self.names())
