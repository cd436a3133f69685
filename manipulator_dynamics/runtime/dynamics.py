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
The dynamics a commanding node calls: compiled, or interpreted while its kernels compile.

:class:`Compiled` is the kernels (:mod:`..rigid.rnea`, :mod:`..control`); :class:`Interpreted`
gives the same results to 1e-12 from :mod:`..rigid.reference`, the numpy oracle the kernels
are tested against, with what the kernels add to it: 0.7 ms for the gravity torques of a
7-joint arm, against 1.5 us compiled.  Which of the two a node holds, and when it switches,
is :mod:`..nodes.kernels`'.
"""

import numpy as np

from ..control import computed_torque, friction_torque
from ..rigid import reference
from ..rigid.rnea import gravity_torques, inverse_dynamics


class Compiled:
    """The compiled dynamics a commanding node calls (:mod:`..rigid.rnea`, :mod:`..control`)."""

    ready = True
    gravity_torques = staticmethod(gravity_torques)
    inverse_dynamics = staticmethod(inverse_dynamics)
    computed_torque = staticmethod(computed_torque)


class Interpreted:
    """
    The same dynamics, interpreted, while the kernels compile (the same results to 1e-12).

    :func:`..rigid.reference.inverse_dynamics` (rigid bodies and each joint's rotor inertia),
    plus what the kernels add to it: the coupled motors' inertia ``c Ia (c . qdd)`` (for the
    reference's ``Ia qdd`` on the motor's joint) and, with ``friction``,
    :func:`..control.friction_torque` (the coupled motors' friction with it).
    A batch ``(N, n)`` is taken one state at a time.
    """

    ready = False

    @staticmethod
    def inverse_dynamics(model, q, qd, qdd, *, friction=False):
        q, qd, qdd = (np.asarray(a, dtype=float) for a in (q, qd, qdd))
        if q.ndim == 2:
            return np.array([Interpreted.inverse_dynamics(model, *s, friction=friction)
                             for s in zip(q, qd, qdd)]).reshape(q.shape)
        tau = reference.inverse_dynamics(model, q, qd, qdd)
        motors = model.coupled_motors()
        for joint, row, armature in zip(motors.joints, motors.rows, motors.armature):
            tau = tau + armature * (row @ qdd) * row         # c Ia (c . qdd), for
            tau[joint] -= armature * qdd[joint]             # the reference's Ia qdd_j
        if friction:
            tau = tau + friction_torque(model, qd)
        return tau

    @staticmethod
    def gravity_torques(model, q):
        z = np.zeros(model.n)
        return reference.inverse_dynamics(model, np.asarray(q, dtype=float), z, z)

    @staticmethod
    def computed_torque(model, q, qd, q_d, qd_d, qdd_d, kp, kd, *, friction=False):
        """:func:`..control.computed_torque`: ``M(q) acc + h(q, qd)`` is the dynamics at acc."""
        acc = qdd_d + kp * (q_d - q) + kd * (qd_d - qd)
        tau = Interpreted.inverse_dynamics(model, q, qd, acc)
        if friction:
            tau = tau + friction_torque(model, qd, qd_d)
        return tau
