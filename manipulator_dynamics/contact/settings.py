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
How a momentum observer watches a log: the one settings value of :func:`.replay.replay`.

The observer's gain and whether the joints' friction is theirs, the contact and collision
levels (given, identified, or learnt over free motion), the seconds a level is learnt from,
and what levels given in N m grow by: what a commanding node reads of its contact parameters
(:data:`~manipulator_dynamics.nodes.contact.CONTACT_PARAMS`,
:meth:`ContactSettings.of_parameters`), by the names a user writes in the library.  The
observer, the levels and their learning are made of them in one place
(:meth:`ContactSettings.observer`, :meth:`ContactSettings.levels`,
:meth:`ContactSettings.learning`), for the node's monitor and the replay of a log alike.  What
is watched (the states) is :class:`~manipulator_dynamics.recordings.log.States`.
"""

from dataclasses import dataclass

from .calibration import GROWTH, Learning, parse_thresholds, resolve_thresholds
from .observer import DEFAULT_GAIN, MomentumObserver
from .._settings import SettingsValue

#: Seconds of free motion ``auto`` levels are learnt from, by default (the node's
#: ``contact_calibration``, the command line's ``--calibration``).
CALIBRATION = 3.0


@dataclass(frozen=True, eq=False)
class ContactSettings(SettingsValue):
    """
    How the states are watched: the observer, the levels and how they are set.

    Attributes
    ----------
    gain : float or array-like
        The observer's gain, 1/s (the node's ``observer_gain``).
    friction : bool
        Count the model's friction law as the joints' own (the node's ``observer_friction``).
    contact, collision : None or N m
        The levels (one, or one per joint); None: ``auto``, as
        :func:`.calibration.resolve_thresholds` says.
    identified : path, text or mapping, optional
        Identified parameters whose ``contact_spread`` sets the ``auto`` levels.
    calibration : float
        Seconds of free motion an ``auto`` level is learnt from (the node's
        ``contact_calibration``): the log's first, once the observer has settled.
    growth : tuple, optional
        What levels given in N m grow by with the motion, and from where:
        ``(speed_growth, torque_growth, speed_from, torque_from)``, the node's
        ``thresholds_<name>`` (:data:`.calibration.GROWTH`).

    """

    gain: object = DEFAULT_GAIN
    friction: bool = True
    contact: object = None
    collision: object = None
    identified: object = None
    calibration: float = CALIBRATION
    growth: object = None

    OF = 'the contact watch'

    #: The commanding node's parameter each setting is read from (:meth:`of_parameters`);
    #: ``growth`` from ``thresholds_<name>`` of :data:`.calibration.GROWTH`.
    PARAMETERS = {'gain': 'observer_gain', 'friction': 'observer_friction',
                  'contact': 'contact_thresholds', 'collision': 'collision_thresholds',
                  'identified': 'identified_parameters', 'calibration': 'contact_calibration'}

    @classmethod
    def of_parameters(cls, params):
        """
        Return what a commanding node's contact parameters say, read now.

        ``params``: any object with them as attributes (:attr:`PARAMETERS`); the levels' text
        parsed (:func:`.calibration.parse_thresholds`: ``ValueError`` naming what is wrong);
        no ``identified_parameters`` (or an empty one): none.
        """
        read = {name: getattr(params, parameter) for name, parameter in cls.PARAMETERS.items()
                if name != 'identified'}
        read['contact'] = parse_thresholds(read['contact'])
        read['collision'] = parse_thresholds(read['collision'])
        read['identified'] = getattr(params, cls.PARAMETERS['identified'], '') or None
        read['growth'] = [getattr(params, f'thresholds_{name}') for name in GROWTH]
        return cls(**read)

    @property
    def given_levels(self):
        """Return the contact and collision levels given in N m, each None for ``auto``."""
        return self.contact, self.collision

    def observer(self, model):
        """Return the momentum observer of ``model`` at :attr:`gain`, with :attr:`friction`."""
        return MomentumObserver(model, self.gain, friction=self.friction)

    def levels(self, model, gains):
        """
        Return ``(levels, how, warning)`` to start with (:func:`.calibration.resolve_thresholds`).

        ``gains``: the observer's, per joint.  ``levels`` None: learn them (:meth:`learning`).
        """
        return resolve_thresholds(model, self.contact, self.collision, gains, self.identified,
                                  self.growth)

    def learning(self, model):
        """Return a :class:`.calibration.Learning` of the ``auto`` levels over free motion."""
        return Learning(model, self.calibration, self.given_levels)
