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
Settings: one frozen value that a computation and everything it hands down take.

A function takes its settings as one value or as keywords, as a user writes them
(``fit(model, data, friction='smooth')`` and ``fit(model, data, Settings(friction='smooth'))``
alike); :meth:`SettingsValue.given` makes the one of the other.  Each kind of settings is a
frozen dataclass that derives from :class:`SettingsValue` and says in ``OF`` what it settles:
:class:`.identification.settings.Settings` (what makes a recording's equations),
:class:`.contact.settings.ContactSettings` (how an observer watches a log).
"""

import dataclasses


class SettingsValue:
    """What every settings dataclass has: made of keywords, replaced, given back as keywords."""

    #: What the settings settle, in the refusal of an option that is none of them.
    OF = 'this computation'

    @classmethod
    def names(cls):
        """Return the settings' names, in the order of their fields."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def given(cls, settings=None, **options):
        """
        Return ``settings`` with ``options`` in place; made of ``options`` alone where None.

        What a function that takes settings or keywords makes of them.  An option that is no
        setting is a TypeError naming it, as a keyword would be.
        """
        names = cls.names()
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise TypeError(f"{', '.join(unknown)}: not settings of {cls.OF} (they are "
                            f"{', '.join(sorted(names))})")
        if settings is None:
            return cls(**options)
        return dataclasses.replace(settings, **options) if options else settings

    def replace(self, **changes):
        """Return these settings with ``changes``."""
        return dataclasses.replace(self, **changes)

    def options(self):
        """Return the settings as keywords, those the function that takes them takes."""
        return {name: getattr(self, name) for name in self.names()}
