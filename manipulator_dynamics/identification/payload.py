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
A payload's inertial parameters from a short motion, the arm's own parameters known.

The arm's model (its URDF, or better its identified parameters) predicts the torques without
the payload; what is left is linear in the payload's ten parameters in the frame of the link
that holds it (Khalil & Dombre, 12.6: the load identified with the robot's parameters known):

    tau - ID_arm(q, qd, qdd) = Y_b(q, qd, qdd) A phi_payload

``Y_b`` the regressor columns of the body the link is part of, ``A`` the rigid map of the
link's frame into the body's (:func:`transform_parameters`).  The same data processing and
weighted least squares as :func:`identify`; mass, centre of mass and central inertia follow,
with standard deviations (the centre of mass's by first-order propagation through ``h / m``).
"""

from dataclasses import dataclass, field

import numpy as np

from .least_squares import check_excitation, weighted_least_squares
from .logs import CUTOFF_HZ, IdentificationError, prepare
from ..model import central_inertia, PARAMETER_NAMES, transform_parameters
from ..rigid.regressor import regressor
from ..rigid.rnea import inverse_dynamics


@dataclass(frozen=True, eq=False)
class PayloadEstimate:
    """
    A payload identified on a link.

    Attributes
    ----------
    link : str
        The link that holds it; every quantity is in its frame.
    values, std : ndarray, shape (10,)
        ``XX XY XZ YY YZ ZZ MX MY MZ M`` about the link's origin, and standard deviations.
    mass, mass_std : float
        kg.
    com, com_std : ndarray, shape (3,)
        Centre of mass, m.
    inertia : ndarray, shape (3, 3)
        Inertia about the centre of mass, kg m^2.
    residual_rms : ndarray, shape (n,)
        RMS of what is left per joint after the arm and the payload.
    samples : int
        States used.
    processing : dict
        What was done to the data.

    """

    link: str
    values: np.ndarray
    std: np.ndarray
    mass: float
    mass_std: float
    com: np.ndarray
    com_std: np.ndarray
    inertia: np.ndarray
    residual_rms: np.ndarray
    samples: int
    processing: dict = field(default_factory=dict)

    def apply(self, model, *, inertia=True):
        """
        Return ``model`` carrying this payload (:meth:`Model.with_payload`).

        ``inertia=False`` leaves its inertia out: a point mass at the identified centre of
        mass.  A short or slow motion pins a payload's mass and centre of mass down well before
        its inertia, whose estimate can then be as far from any body's as its deviations
        (``std[:6]``) allow; such an inertia is refused, saying so, rather than applied.
        """
        if not inertia:
            return model.with_payload(self.link, self.mass, self.com)
        try:
            return model.with_payload(self.link, self.mass, self.com, self.inertia)
        except ValueError as e:
            raise IdentificationError(
                f"{e}: the identified inertia is no rigid body's (its deviations, "
                f'{", ".join(f"{n} {s:.2g}" for n, s in zip(PARAMETER_NAMES[:6], self.std))} '
                'kg m^2, are as large as it is); a longer or faster motion identifies it, or '
                'apply(model, inertia=False) takes the mass and centre of mass alone') from None

    def to_dict(self):
        """Return a plain mapping for YAML or JSON."""
        return {'link': self.link, 'mass': float(self.mass), 'mass_std': float(self.mass_std),
                'com': self.com.tolist(), 'com_std': self.com_std.tolist(),
                'inertia': self.inertia.tolist(),
                'parameters': {name: float(v) for name, v in zip(PARAMETER_NAMES, self.values)},
                'std': {name: float(v) for name, v in zip(PARAMETER_NAMES, self.std)},
                'residual_rms': self.residual_rms.tolist(), 'samples': self.samples}


def identify_payload(model, data, link, *, cutoff=CUTOFF_HZ, topic='/joint_states'):
    """
    Identify the payload held by ``link`` from motion data, the arm's parameters known.

    Parameters
    ----------
    model : Model
        The arm without the payload, friction included (``inverse_dynamics(..., friction=True)``
        must predict its torques: load its identified parameters if there are).
    data
        As :func:`identify` takes it: arrays, ``(t, q, tau)``, a CSV file, a numpy archive or
        a rosbag2 folder.
    link : str
        The link that holds the payload (a gripper's or tool's frame is fine).
    cutoff, topic
        As for :func:`identify`.

    Returns
    -------
    PayloadEstimate

    Raises
    ------
    IdentificationError
        Bad data, or a motion that leaves some of the payload's parameters unexcited (named).
    ValueError
        An unknown link, or one fixed to the base.

    """
    frame = model.payload_frame(link)
    q, qd, qdd, tau, parallel, processing = prepare(model, data, cutoff=cutoff, topic=topic)
    arm = inverse_dynamics(model, q, qd, qdd, friction=True)
    Y = regressor(model, q, qd, qdd, armature=False, friction=False)
    W = Y[..., 10 * frame.body:10 * frame.body + 10] @ transform_parameters(frame.R, frame.p)
    rest = tau - arm
    if parallel is not None:
        W, rest = parallel(W), parallel(rest)
    N, n = rest.shape
    if N * n < 20:
        raise IdentificationError(f'{N} states give {N * n} equations for 10 payload '
                                  'parameters: record more')
    Wf = W.reshape(N * n, 10)
    names = [f'{name}_payload' for name in PARAMETER_NAMES]
    check_excitation(names, Wf, np.linalg.norm(Wf, axis=0))
    phi, cov, _, _, _ = weighted_least_squares(W, rest)
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    m = phi[9]
    if not m > 0:
        raise IdentificationError(f'the payload on {link} came out with mass {m:.4g} kg '
                                  f'(std {std[9]:.2g}): none, or the arm model is off')
    mass, com, inertia = central_inertia(phi)
    # com = h / m: d com = (d h - com d m) / m
    J = np.zeros((3, 10))
    J[:, 6:9] = np.eye(3) / m
    J[:, 9] = -com / m
    com_std = np.sqrt(np.maximum(np.diag(J @ cov @ J.T), 0.0))
    residual = rest - W @ phi
    return PayloadEstimate(link=link, values=phi, std=std, mass=float(mass),
                           mass_std=float(std[9]), com=com, com_std=com_std, inertia=inertia,
                           residual_rms=np.sqrt((residual ** 2).mean(axis=0)), samples=N,
                           processing=processing)
