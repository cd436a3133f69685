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
Joints by name: the one mapping from a message's (a log's, a parameter's) order to the model's.

ROS 2 messages name their joints, in any order, sometimes with another robot's among them; the
model has its own order (``model.joint_names``).  :func:`joint_map` matches the two and says,
naming them, which names are given twice, missing or unknown.
"""

from typing import NamedTuple, Sequence

import numpy as np


class JointNamesError(ValueError):
    """Names that cannot be matched to the model: ``kind`` is duplicated, missing or unknown."""

    def __init__(self, kind, reason):
        super().__init__(reason)
        self.kind = kind


class JointMap(NamedTuple):
    """``names[rows[k]]`` is the model's joint ``joints[k]``: ``x_model[joints] = x[rows]``."""

    rows: np.ndarray
    joints: np.ndarray


def joint_map(model_names: Sequence[str], names: Sequence[str], *, what='the message',
              every=False, unknown=False, hint='') -> JointMap:
    """
    Match ``names`` to ``model_names``; in the model's order.

    Parameters
    ----------
    model_names : sequence of str
        The model's joints, in its order.
    names : sequence of str
        The names given (a message's, a log's, a parameter's); empty names are skipped.
    what : str
        What gave them, for the messages (``'trajectory'``, ``'/joint_states'``).
    every : bool
        Every joint of the model must be there (``kind`` ``'missing'``).
    hint : str
        Said after the missing joints: what to do.
    unknown : bool
        Refuse names the model does not have (``'unknown'``); else they are ignored: another
        robot's joints on a shared topic.

    Raises
    ------
    JointNamesError
        A name given twice (``'duplicated'``), and the cases above.

    """
    given = [n for n in names if n]
    if len(set(given)) != len(given):
        twice = sorted({n for n in given if given.count(n) > 1})
        raise JointNamesError('duplicated', f'{what} names {", ".join(twice)} more than once')
    index = {n: i for i, n in enumerate(names) if n}
    if unknown:
        strangers = [n for n in given if n not in model_names]
        if strangers:
            raise JointNamesError('unknown', f'{what} names {", ".join(strangers)}: not joints '
                                  'of the model')
    if every:
        missing = [j for j in model_names if j not in index]
        if missing:
            raise JointNamesError('missing', f'{what} lacks joints {", ".join(missing)}{hint}')
    pairs = [(index[j], k) for k, j in enumerate(model_names) if j in index]
    return JointMap(np.array([r for r, _ in pairs], dtype=np.int64),
                    np.array([k for _, k in pairs], dtype=np.int64))
