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

import numpy as np

from ..rigid.jacobian import frame_jacobian

#: geometry_msgs/Wrench's components, in order.
COMPONENTS = ('force.x', 'force.y', 'force.z', 'torque.x', 'torque.y', 'torque.z')
#: Singular values of J^T below this share of the largest are zero (a singular configuration):
#: a direction that weak would amplify the torques' noise a million times.
RCOND = 1e-6
#: A component is observable when its unit vector lies in J^T's row space to within this
#: (the squared norm of its projection on that space is 1 minus at most this).
IN_ROW_SPACE = 1e-9


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
    J = frame_jacobian(model, link, q)
    tau = np.asarray(tau_ext, dtype=float)
    single = J.ndim == 2 and tau.ndim == 1
    if tau.ndim not in (1, 2) or tau.shape[-1] != model.n:
        raise ValueError(f'tau_ext must have shape ({model.n},) or (N, {model.n}), got '
                         f'{tau.shape}')
    if not np.all(np.isfinite(tau)):
        raise ValueError('tau_ext has non-finite values')
    J, tau = J.reshape(-1, 6, model.n), tau.reshape(-1, model.n)
    N = max(len(J), len(tau))
    if len(J) not in (1, N) or len(tau) not in (1, N):
        raise ValueError(f'q has {len(J)} states but tau_ext has {len(tau)}')
    JT = np.broadcast_to(np.swapaxes(J, 1, 2), (N, model.n, 6))
    U, s, Vt = np.linalg.svd(JT, full_matrices=False)           # (N,n,k), (N,k), (N,k,6)
    keep = s > RCOND * np.maximum(s[:, :1], 1e-300)
    inv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    F = np.einsum('ski,sk,sjk,sj->si', Vt, inv, U, np.broadcast_to(tau, (N, model.n)))
    observable = (np.einsum('ski,sk->si', Vt ** 2, keep) >= 1.0 - IN_ROW_SPACE) \
        & keep.any(axis=1)[:, None]
    F[~observable] = np.nan
    rank = keep.sum(axis=1)
    if single:
        return WrenchEstimate(link, F[0], observable[0], rank[0])
    return WrenchEstimate(link, F, observable, rank)
