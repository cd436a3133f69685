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
What an identification says of how it was made: one report of the choices its fit kept.

A fit keeps in its ``processing`` what was done and why: each log's stamps and gaps, the
standard deviations' check against time, the friction law, the cutoff, the directions held at
the prior, the still joints and the prior weight.  Each part is said in the words of the module
that made the choice (:mod:`~manipulator_dynamics.identification.logs`, :mod:`.least_squares`,
:mod:`.friction`, :mod:`.selection`, :mod:`.stiction`); :class:`Report` gathers them once, for
the command line and anyone else who reports a fit.
"""

from dataclasses import dataclass

from .friction import friction_summary
from .least_squares import std_summary
from .logs import stamps_summary
from .selection import cutoff_summary, prior_threshold_summary, prior_weight_summary
from .stiction import still_summary


@dataclass(frozen=True)
class Report:
    """
    How a fit was made, part by part: each a line or two of text, '' where it has nothing.

    ``stamps``: each log's samples, jitter, repeats and gaps; ``residual``: the residual RMS per
    joint; ``std``: how the deviations were checked against time; ``friction``: the law, its
    Coulomb velocities and how it was chosen; ``cutoff``: the filter's cutoff and how it was
    chosen; ``prior_threshold``: which directions kept the prior's values; ``still``: the still
    speeds and the equations left out; ``prior_weight``: the consistent fit's prior weight and
    how it was chosen.
    """

    stamps: str
    residual: str
    std: str
    friction: str
    cutoff: str
    prior_threshold: str
    still: str
    prior_weight: str

    @classmethod
    def of(cls, estimate, joint_names):
        """Make the report of ``estimate`` (an :class:`.fit.Estimate`) of ``joint_names``."""
        processing = estimate.processing
        return cls(
            stamps=stamps_summary(processing),
            residual='residual RMS per joint: ' + ', '.join(
                f'{j} {r:.3g}' for j, r in zip(joint_names, estimate.residual_rms)),
            std=std_summary(processing), friction=friction_summary(processing),
            cutoff=cutoff_summary(processing),
            prior_threshold=prior_threshold_summary(processing),
            still=still_summary(processing), prior_weight=prior_weight_summary(processing))

    def text(self):
        """
        Return the report of the fit as the command line prints it under its parameters.

        Each block after a blank line: the stamps, the residuals with the deviations' check,
        the friction law with the cutoff, the prior's directions and the still joints.  The
        prior weight is said with the consistent parameters it chose (:attr:`prior_weight`).
        """
        text = '\n\n' + self.stamps if self.stamps else ''
        text += '\n\n' + self.residual + ('\n' + self.std if self.std else '')
        text += '\n\n' + self.friction
        for part in (self.cutoff, self.prior_threshold, self.still):
            if part:
                text += '\n' + part
        return text
