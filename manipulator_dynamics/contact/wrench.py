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
The external joint torques as a wrench at a link: least squares through the link's Jacobian.

A wrench ``F = (f, m)`` on link L (L's frame, moment about its origin) loads the joints with
``tau_ext = J_L^T F``.  Only the joints between the base and L carry it, so ``J_L^T`` has rank
at most the number of those joints (and less at a singularity): the components of ``F`` in the
null space of ``J_L^T`` leave no trace in the torques.  The estimate is the least-squares
solution of smallest norm, ``F = pinv(J_L^T) tau_ext``, and a component ``e_c . F`` is
*observable* exactly when ``e_c`` lies in the row space of ``J_L^T``: then it is determined by
the torques whatever the rest of the wrench.  Unobservable components are NaN.
"""

from dataclasses import dataclass

from numba import njit
import numpy as np

from .._inputs import states
from .._jit import JIT
from ..rigid.jacobian import frame_jacobian_sample, jacobian_workspace
from ..rigid.kinematics import all_finite, batch_row, kernel_model
from ..rigid.status import check, NON_FINITE, OK

#: geometry_msgs/Wrench's components, in order.
COMPONENTS = ('force.x', 'force.y', 'force.z', 'torque.x', 'torque.y', 'torque.z')
#: Singular values of J^T below this share of the largest are zero (a singular configuration):
#: a direction that weak would amplify the torques' noise a million times.
RCOND = 1e-6
#: A component is observable when its unit vector lies in J^T's row space to within this
#: (the squared norm of its projection on that space is 1 minus at most this).
IN_ROW_SPACE = 1e-9


@njit(**JIT)
def wrench_kernel(m, q, tau, body, Rf, pf, F, observable, rank):
    """Fill ``F, observable (N, 6)`` and ``rank (N,)`` (module docstring); return a status."""
    if not (all_finite(q) and all_finite(tau)):
        return NON_FINITE
    n = m.parent.shape[0]
    work, J = jacobian_workspace(n), np.empty((6, n))
    for k in range(F.shape[0]):
        frame_jacobian_sample(m, batch_row(k, q), body, Rf, pf, work, J)
        U, sv, Vt = np.linalg.svd(np.ascontiguousarray(J.T), full_matrices=False)
        r = batch_row(k, tau)
        kept = 0
        for c in range(6):
            F[k, c] = 0.0
            observable[k, c] = 0.0
        for i in range(sv.shape[0]):
            if sv[i] <= RCOND * sv[0] or sv[0] == 0.0:
                continue
            kept += 1
            ur = 0.0
            for j in range(n):
                ur += U[j, i] * r[j]
            for c in range(6):
                F[k, c] += Vt[i, c] * ur / sv[i]
                observable[k, c] += Vt[i, c] * Vt[i, c]
        rank[k] = kept
        for c in range(6):
            if kept == 0 or observable[k, c] < 1.0 - IN_ROW_SPACE:
                observable[k, c] = 0.0
                F[k, c] = np.nan
            else:
                observable[k, c] = 1.0
    return OK


@dataclass(frozen=True)
class WrenchEstimate:
    """
    A wrench at ``link`` and which of its components the torques determine.

    ``wrench (6,)`` or ``(N, 6)``: ``fx fy fz mx my mz`` in the link's frame (N, N m), NaN where
    not observable; ``observable``, booleans of the same shape; ``rank``, J^T's rank (per
    sample for a batch).
    """

    link: str
    wrench: np.ndarray
    observable: np.ndarray
    rank: np.ndarray

    def unobservable(self):
        """Names of the components that are not observable (at the only or first sample)."""
        mask = self.observable if self.observable.ndim == 1 else self.observable[0]
        return [c for c, ok in zip(COMPONENTS, mask) if not ok]


def contact_wrench(model, link, q, tau_ext):
    """
    Estimate the wrench on ``link`` that the external joint torques ``tau_ext`` come from.

    Parameters
    ----------
    model : Model
        The robot.
    link : str
        The link the contact is assumed on (any link of the URDF).
    q, tau_ext : array-like, shape (n,) or (N, n)
        Positions and external joint torques (an observer's residual).

    Returns
    -------
    WrenchEstimate

    """
    if link not in model.frames:
        raise ValueError(f"'{link}' is not a link of model '{model.name}' (links: "
                         f'{", ".join(model.frames)})')
    frame = model.frames[link]
    (q, tau), N, single = states(model, ('q', 'tau_ext'), q, tau_ext)
    F, observable = np.full((N, 6), np.nan), np.zeros((N, 6))
    rank = np.zeros(N, dtype=np.int64)
    if frame.body >= 0:
        check(model, wrench_kernel(kernel_model(model), q, tau, frame.body,
                                   np.ascontiguousarray(frame.R, dtype=float),
                                   np.ascontiguousarray(frame.p, dtype=float), F, observable,
                                   rank), ('q', 'tau_ext'), q, tau)
    observable = observable > 0.5
    if single:
        return WrenchEstimate(link, F[0], observable[0], rank[0])
    return WrenchEstimate(link, F, observable, rank)
