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

from .base_parameters import base_parameters, grouping_matrix, link_columns, ZERO
from .filtering import CUTOFF_HZ
from .friction import averaged_coulomb, coulomb_torque
from .least_squares import weighted_least_squares
from .logs import condition
from .settings import Settings
from .._parallel import blas_on_one_thread
from ..errors import IdentificationError
from ..inertia import tensor_fault
from ..model import central_inertia, inertia_six, inertia_tensor, PARAMETER_NAMES, \
    transform_parameters
from ..rigid.jacobian import direction_jacobian, world_poses
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
        ``XX XY XZ YY YZ ZZ MX MY MZ M`` about the link's origin, and standard deviations
        (NaN where the data do not determine the parameter, see ``determined``; a known value
        has deviation 0).
    mass, mass_std : float
        kg.
    com, com_std : ndarray, shape (3,)
        Centre of mass, m (NaN where not determined).
    inertia : ndarray, shape (3, 3)
        Inertia about the centre of mass, kg m^2 (NaN where not determined).
    inertia_std : ndarray, shape (6,)
        Deviations of its ``ixx ixy ixz iyy iyz izz`` (first-order propagation).
    residual_rms : ndarray, shape (n,)
        RMS of what is left per joint after the arm and the payload.
    samples : int
        States used.
    processing : dict
        What was done to the data.
    determined : ndarray of bool, shape (10,)
        Which of ``values`` the data determine (or were known).
    notes : tuple of str
        What the data did not determine, and why.

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
    inertia_std: np.ndarray = None
    determined: np.ndarray = None
    notes: tuple = ()

    def apply(self, model, *, inertia=True):
        """
        Return ``model`` carrying this payload (:meth:`Model.with_payload`).

        ``inertia=False`` leaves its inertia out: a point mass at the identified centre of
        mass.  A short or slow motion pins a payload's mass and centre of mass down well before
        its inertia, whose estimate can then be as far from any body's as its deviations
        (``std[:6]``) allow; such an inertia is refused, saying so, rather than applied.
        """
        if not np.all(np.isfinite(self.com)) or not np.isfinite(self.mass):
            raise IdentificationError(
                f'the payload on {self.link}: its centre of mass is not determined '
                f'({"; ".join(self.notes)}): nothing to apply')
        if not inertia:
            return model.with_payload(self.link, self.mass, self.com)
        if not np.all(np.isfinite(self.inertia)):
            raise IdentificationError(
                f'the payload on {self.link}: its inertia is not determined '
                f'({"; ".join(self.notes)}); apply(model, inertia=False) takes the mass and '
                'centre of mass alone')
        try:
            return model.with_payload(self.link, self.mass, self.com, self.inertia)
        except ValueError as e:
            raise IdentificationError(
                f"{e}: the identified inertia is no rigid body's (its deviations, "
                f'{", ".join(f"{n} {s:.2g}" for n, s in zip(PARAMETER_NAMES[:6], self.std))} '
                'kg m^2, are as large as it is); a longer or faster motion identifies it, or '
                'apply(model, inertia=False) takes the mass and centre of mass alone') from None

    def summary(self):
        """Say the mass, centre of mass and inertia with their deviations, and the notes."""
        def pm(value, std):
            return 'not determined' if value != value else f'{value:.4g} +- {std:.2g}'
        xyz = ', '.join(f'{a} {pm(c, s)}' for a, c, s in zip('xyz', self.com, self.com_std))
        six = inertia_six(self.inertia)
        moments = ', '.join(f'{n.lower()} {pm(v, s)}' for n, v, s in
                            zip(PARAMETER_NAMES[:6], six, self.inertia_std))
        lines = [f'load on {self.link}: mass {pm(self.mass, self.mass_std)} kg',
                 f'  centre of mass (m, in {self.link}): {xyz}',
                 f'  inertia about it (kg m^2): {moments}']
        lines += [f'  note: {note}' for note in self.notes]
        return '\n'.join(lines)

    def usable(self, mass_tolerance, com_tolerance):
        """
        Return ``(True, '')`` where this estimate is fit to carry, else ``(False, why)``.

        Fit: the mass determined within ``mass_tolerance`` of it (one deviation, a share) and
        each coordinate of the centre of mass within ``com_tolerance`` (m).
        """
        short = []
        if not np.isfinite(self.mass):
            short.append('the mass is not determined')
        elif self.mass_std > mass_tolerance * abs(self.mass):
            short.append(f'the mass deviates by {self.mass_std:.2g} kg, more than '
                         f'{100 * mass_tolerance:g} % of it')
        for axis, c, sd in zip('xyz', self.com, self.com_std):
            if not np.isfinite(c):
                short.append(f'the centre of mass {axis} is not determined')
            elif sd > com_tolerance:
                short.append(f'the centre of mass {axis} deviates by {sd * 1e3:.2g} mm, more '
                             f'than {com_tolerance * 1e3:g} mm')
        return not short, '; '.join(short)

    def node_parameters(self):
        """
        Return ``(payload list, what it leaves out)``: the nodes' ``payload`` parameter.

        ``[mass, x, y, z, ixx, ixy, ixz, iyy, iyz, izz]``; ``[mass, x, y, z]`` where the inertia
        cannot be carried (:meth:`inertia_fault`: the nodes then carry a point mass at the
        centre of mass, which the second item says).  Raises if the mass or centre of mass is
        not determined.
        """
        if not (np.isfinite(self.mass) and np.all(np.isfinite(self.com))):
            raise IdentificationError(
                f'the payload on {self.link}: its mass and centre of mass are not both '
                f'determined ({"; ".join(self.notes) or "see the deviations"}): no payload '
                'parameters to write; move the joints that turn it through wider angles')
        values = [float(self.mass), *map(float, self.com)]
        why = self.inertia_fault()
        if not why:
            return values + [float(x) for x in inertia_six(self.inertia)], ''
        return values, f'{why}: the nodes carry a point mass at the centre of mass'

    def inertia_fault(self):
        """
        Say why the inertia cannot be carried ('' where it can).

        Not determined, no rigid body's, or not told apart from zero: a deviation as large as
        its largest principal moment (a short or slow motion pins the mass and the centre of
        mass down long before the inertia).
        """
        if not np.all(np.isfinite(self.inertia)):
            return 'its inertia is not determined'
        fault = tensor_fault(self.inertia)
        if fault:
            return f"its inertia is no rigid body's ({fault})"
        largest = float(np.abs(np.linalg.eigvalsh(self.inertia)).max())
        if not np.max(self.inertia_std) < largest:
            return (f'its inertia is not told apart from zero (deviations up to '
                    f'{np.max(self.inertia_std):.2g} kg m^2, its largest moment {largest:.2g})')
        return ''

    def parameters_yaml(self, path=None):
        """
        Return (and write to ``path``) a ROS 2 parameters file with ``payload_link``, ``payload``.

        For ``--ros-args --params-file`` of dynamics_node and trajectory_node (every node:
        ``/**``), or to read with ``ros2 param load``.
        """
        import yaml

        values, left_out = self.node_parameters()
        header = (f'# the load on {self.link} identified by manipulator-dynamics '
                  f'identify-payload: mass {self.mass:.6g} kg, centre of mass '
                  f'{", ".join(f"{c:.6g}" for c in self.com)} m'
                  + (f'\n# {left_out}' if left_out else '') + '\n')
        text = header + yaml.safe_dump({'/**': {'ros__parameters': {
            'payload_link': self.link, 'payload': values}}}, sort_keys=False)
        if path is not None:
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
        return text

    def to_dict(self):
        """Return a plain mapping for YAML or JSON (None where not determined)."""
        def plain(a):
            return [None if x != x else float(x) for x in np.ravel(a)]
        return {'link': self.link, 'mass': plain([self.mass])[0],
                'mass_std': plain([self.mass_std])[0],
                'com': plain(self.com), 'com_std': plain(self.com_std),
                'inertia': [plain(row) for row in self.inertia],
                'inertia_std': dict(zip([n.lower() for n in PARAMETER_NAMES[:6]],
                                        plain(self.inertia_std))),
                'parameters': dict(zip(PARAMETER_NAMES, plain(self.values))),
                'std': dict(zip(PARAMETER_NAMES, plain(self.std))),
                'determined': dict(zip(PARAMETER_NAMES, map(bool, self.determined))),
                'notes': list(self.notes),
                'residual_rms': self.residual_rms.tolist(), 'samples': self.samples}


def payload_estimate(link, phi, cov, determined, notes=(), **more):
    """
    Return the :class:`PayloadEstimate` of ten parameters ``phi`` and their covariance ``cov``.

    ``determined (10,)``: which of them the data fix (or were known); the others, and what
    depends on them (the centre of mass ``h / m``, the inertia about it), are NaN.  Deviations
    by first-order propagation.  ``more``: ``residual_rms``, ``samples``, ``processing``.
    """
    phi, cov = np.asarray(phi, dtype=float), np.asarray(cov, dtype=float)
    determined = np.asarray(determined, dtype=bool)
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    shown = np.where(determined, phi, np.nan)
    # a mass that is not determined (zero in phi) makes what divides by it NaN: the flags say so
    with np.errstate(divide='ignore', invalid='ignore'):
        m = phi[9]
        com = np.where(determined[6:9] & determined[9], phi[6:9] / m, np.nan)
        # com = h / m: d com = (d h - com d m) / m
        J = np.zeros((3, 10))
        J[:, 6:9] = np.eye(3) / m
        J[:, 9] = -phi[6:9] / m ** 2
        com_std = np.where(np.isfinite(com), np.sqrt(np.maximum(np.diag(J @ cov @ J.T), 0.0)),
                           np.nan)
        # the inertia about the centre of mass, I_o - (h.h 1 - h h^T) / m, and its Jacobian
        central = inertia_six(central_inertia(phi)[2])
        step = 1e-7 * np.maximum(np.abs(phi), 1e-3)
        Jc = np.empty((6, 10))
        for k in range(10):
            up, down = phi.copy(), phi.copy()
            up[k] += step[k]
            down[k] -= step[k]
            Jc[:, k] = (inertia_six(central_inertia(up)[2])
                        - inertia_six(central_inertia(down)[2])) / (2 * step[k])
        fixed = determined[:6] & np.all(determined[6:10])
        central = np.where(fixed, central, np.nan)
        central_std = np.where(fixed, np.sqrt(np.maximum(np.diag(Jc @ cov @ Jc.T), 0.0)),
                               np.nan)
    return PayloadEstimate(link=link, values=shown, std=np.where(determined, std, np.nan),
                           mass=float(shown[9]),
                           mass_std=float(std[9]) if determined[9] else float('nan'),
                           com=com, com_std=com_std, inertia=inertia_tensor(central),
                           inertia_std=central_std, determined=determined, notes=tuple(notes),
                           **more)


def load_combinations(base, model, link, unknown):
    """
    Return ``basis (u, r)``: the combinations of a load's ``unknown`` parameters a torque shows.

    The load's parameters (``XX .. M`` in ``link``'s frame, indices ``unknown``) add to the
    body's, and torques see only the base parameters they move: ``P_body A psi``.  Combinations
    in its null space move none (a load on a vertical first axis shows no mass).  The basis
    spans a complement of that null space, columns scaled alike (``psi = basis @ y``).
    """
    if not unknown:
        return np.zeros((0, 0))
    frame = model.payload_frame(link)
    T = transform_parameters(frame.R, frame.p)[:, list(unknown)]
    M = grouping_matrix(base)[:, link_columns(base, model, frame.body)] @ T
    scale = np.linalg.norm(M, axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    _, s, vt = np.linalg.svd(M / scale, full_matrices=False)
    rank = int((s > ZERO * s[0]).sum()) if len(s) and s[0] > 0 else 0
    return vt[:rank].T / scale[:, None]


def determined_by(basis):
    """Return ``(u,)`` bool: which parameters lie in the span of the combinations ``basis``."""
    if not basis.shape[1]:
        return np.zeros(len(basis), dtype=bool)
    return np.linalg.norm(np.linalg.qr(basis)[0], axis=1) > 1 - 1e-6


def combination_names(basis, unknown, suffix):
    """Name each combination by the parameters that weigh in it: ``MX+MY_load``."""
    return tuple('+'.join(PARAMETER_NAMES[unknown[k]] for k in np.flatnonzero(
        np.abs(v) > 0.3 * np.abs(v).max())) + suffix for v in basis.T)


def payload_combinations(model, link):
    """
    Return the combinations of a load's ten parameters on ``link`` that this arm can show.

    :func:`load_combinations` over the arm's base parameters (without friction or rotor
    inertia, which a load does not touch): a basis ``(10, r)``, for :func:`identify_payload`'s
    ``combinations`` (computing it costs a base-parameter reduction; a node keeps it).
    """
    model.payload_frame(link)                          # an unknown link: ValueError naming it
    return load_combinations(base_parameters(model, armature=False), model, link, range(10))


def excited_directions(W):
    """
    Return ``E (r, k)``: the directions of ``W``'s columns the rows see, columns scaled alike.

    Unit columns, then the singular directions above ``1e-8`` of the largest (as
    :func:`.least_squares.check_excitation` calls a direction unobserved); the identity where
    every direction is seen.
    """
    norms = np.linalg.norm(W, axis=0)
    scale = np.where(norms > 1e-12 * max(norms.max(), 1e-300), norms, np.inf)
    s, vt = np.linalg.svd(W / scale, full_matrices=False)[1:]
    seen = (s > 1e-8 * s[0]) if len(s) and s[0] > 0 else np.zeros(len(s), dtype=bool)
    if seen.all() and np.all(np.isfinite(scale)):
        return np.eye(W.shape[1])
    return vt[seen].T / scale[:, None]


@blas_on_one_thread
def identify_payload(model, data, link, *, cutoff=CUTOFF_HZ, topic='/joint_states',
                     combinations=None, spread=None):
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
    combinations : ndarray, shape (10, r), optional
        :func:`payload_combinations` of the model and link, computed once (default: here).
    spread : Spread, optional
        The arm's own error on each joint's torque, as its free motion showed it (a
        :class:`..contact.detection.Spread`: the momentum observer's spread, which its contact
        levels are learnt from).  A model's error is absorbed by the load's parameters, and no
        residual shows it: a 15 % error in the arm's inertia put a 1.5 kg load at 2.5 kg, 97 of
        its deviations off.  Given the spread, each deviation is at least a third of the worst
        that an error within it at every state can do to that parameter
        (:func:`error_bound`): the truth lies within 3 of them wherever the arm's error stays
        within its spread (a load's motion beyond the free motion's may take it further: that
        arm's load came out 3.5 of them off, and too uncertain to apply).  Default: the
        deviations of the noise and of the error the residual shows.

    Returns
    -------
    PayloadEstimate
        What neither the arm's axes nor the motion show (a static pose shows the mass and the
        centre of mass across gravity) is NaN, flagged in ``determined`` and said in
        ``notes``; what they show comes with its deviation.

    Raises
    ------
    IdentificationError
        Bad data, too few states, a determined mass that is not positive.
    ValueError
        An unknown link, or one fixed to the base.

    """
    frame = model.payload_frame(link)
    found = condition(model, data, Settings(cutoff=cutoff, topic=topic))
    q, qd, qdd, tau, parallel = found.q, found.qd, found.qdd, found.tau, found.parallel
    processing = found.processing
    basis = payload_combinations(model, link) if combinations is None else combinations
    arm = inverse_dynamics(model, q, qd, qdd, friction=True)
    if parallel is not None and parallel.raw is not None:     # a log cut down: rows apart
        arm += coulomb_torque(model, qd, qdd, 1.0 / parallel.rate_hz) \
            - coulomb_torque(model, qd, qdd, 0.0)
    Y = regressor(model, q, qd, qdd, armature=False, friction=False)
    W = Y[..., 10 * frame.body:10 * frame.body + 10] @ transform_parameters(frame.R, frame.p) \
        @ basis
    rest = tau - arm
    if parallel is not None:
        W, rest = parallel(W), parallel(rest)
    N, n = rest.shape
    r = basis.shape[1]
    if N * n < 2 * r:
        raise IdentificationError(f'{N} states give {N * n} equations for {r} payload '
                                  'parameters: record more')
    notes = []
    structural = determined_by(basis)
    if not structural.all():
        notes.append(f'{", ".join(np.array(PARAMETER_NAMES)[~structural])} of a load on {link} '
                     "move no joint's torque on this arm (its axes): not determined")
    E = excited_directions(W.reshape(N * n, r))
    W, basis = W @ E, basis @ E
    determined = determined_by(basis)
    unexcited = determined != structural
    if unexcited.any():
        notes.append(f'{", ".join(np.array(PARAMETER_NAMES)[unexcited])}: the motion does not '
                     'excite them (a static pose shows the mass and the centre of mass across '
                     'gravity at most): not determined; move the joints that turn the link')
    if not W.shape[-1]:
        raise IdentificationError(f'the motion shows nothing of a load on {link}: move the '
                                  'joints that carry it')
    F = friction_corrections(model, qd, qdd, 1.0 / parallel.rate_hz
                             if parallel is not None and parallel.raw is not None else 0.0)
    if parallel is not None:
        F = parallel(F)
    carries = np.abs(W).sum(axis=(0, 2)) > 0        # the joints whose torque the load moves:
    F = F[..., np.r_[carries, carries]]             # another's friction says nothing of it
    F = F[..., np.linalg.norm(F.reshape(N * n, -1), axis=0) > 0]     # joints that moved
    fit = weighted_least_squares(np.concatenate([W, F], axis=-1), rest)
    k = W.shape[-1]
    y, cov_y = fit.K[:k], correlated_covariance(fit, N, BLOCKS)[:k, :k]
    phi, cov = basis @ y, basis @ cov_y @ basis.T
    if spread is not None:
        bound = spread.at(qd, tau)
        cov = at_least(cov, error_bound(fit, parallel(bound) if parallel is not None else bound,
                                        basis) / 3.0)
    if determined[9] and not phi[9] > 0:
        raise IdentificationError(f'the payload on {link} came out with mass {phi[9]:.4g} kg '
                                  f'(std {np.sqrt(cov[9, 9]):.2g}): none, or the arm model is '
                                  'off')
    residual = rest - np.concatenate([W, F], axis=-1) @ fit.K
    return payload_estimate(link, phi, cov, determined, notes,
                            residual_rms=np.sqrt((residual ** 2).mean(axis=0)), samples=N,
                            processing=processing)


#: Contiguous blocks of the states whose scores :func:`correlated_covariance` sums: the model's
#: error follows the motion, not the noise, and is correlated across a block; ten, as batch
#: means take them (more blocks, shorter than the error's correlation, hide it again).
BLOCKS = 10


def friction_corrections(model, qd, qdd, period):
    """
    Return ``F (N, n, 2 n)``: a correction of each joint's viscous and Coulomb friction.

    Joint ``j``'s ``qd_j`` and its Coulomb law's ``s(qd_j)`` (averaged over a row's interval,
    as the identification takes it: :func:`.friction.averaged_coulomb`), in ``j``'s equation
    alone.  Friction is what an arm's model knows least (it drifts with temperature, wear and
    load): a payload fitted on a model whose friction is 20 % off took the error on its centre
    of mass, 13-26 deviations off; fitted with these, the error is the corrections', and the
    deviations carry what it costs.
    """
    N, n = qd.shape
    F = np.zeros((N, n, 2 * n))
    F[:, np.arange(n), np.arange(n)] = qd
    names = [f'Fc_{j}' for j in model.joint_names]
    F[..., n:] = averaged_coulomb(model, np.zeros((N, n, n)), names, qd, qdd, period)
    return F


def correlated_covariance(fit, N, blocks=BLOCKS):
    """
    Return the covariance of ``fit.K`` with the residual correlated in time: batch means.

    ``fit``: a :class:`.least_squares.WeightedFit` over ``N`` states.  Its own covariance
    ``s^2 (G^T G)^-1`` takes every equation's error as independent; a model's error (friction,
    inertia off) follows the motion and is not.  The sandwich ``(G^T G)^-1 S (G^T G)^-1``, ``S``
    the scores ``G^T e`` summed over :data:`BLOCKS` contiguous blocks and their outer products
    added (``blocks / (blocks - 1)`` for the mean they lose), counts it; each parameter's
    deviation is the larger of the two, so white noise keeps its own (the sandwich estimates it
    with ten degrees of freedom only).
    """
    G = fit.G.reshape(N, -1, fit.G.shape[-1])
    e = (fit.g - fit.G @ fit.K).reshape(N, -1)
    scores = np.einsum('tjb,tj->tb', G, e)
    sums = np.array([part.sum(axis=0) for part in np.array_split(scores, blocks)])
    inverse = np.linalg.pinv(fit.G.T @ fit.G)
    sandwich = inverse @ (sums.T @ sums * blocks / (blocks - 1)) @ inverse
    return at_least(fit.cov, np.sqrt(np.maximum(np.diag(sandwich), 0.0)))


def error_bound(fit, bound, combination=None):
    """
    Return how far each of ``fit.K`` can be moved by a torque error within ``bound (N, n)``.

    ``fit``: a :class:`.least_squares.WeightedFit` of ``N`` states.  An error ``e`` with
    ``|e| <= bound`` at every state moves ``K`` by ``C e``, ``C = (G^T G)^-1 G^T`` over ``e /
    sigma``; its worst, each state's error of the sign that moves ``K_i`` most, is ``|C|
    (bound / sigma)``.  ``combination (p, k)``: the bound of ``combination @ K[:k]`` instead
    (the load's parameters of its combinations).  A bound, not a deviation: a model's error
    follows the motion, as the load's regressor does, and no random sign counts it.
    """
    effect = np.linalg.pinv(fit.G.T @ fit.G) @ fit.G.T
    if combination is not None:
        effect = combination @ effect[:combination.shape[1]]
    return np.abs(effect) @ (np.asarray(bound, dtype=float) / fit.sigma).reshape(-1)


def at_least(cov, std):
    """Return ``cov`` scaled so that each deviation is at least ``std``, its correlations kept."""
    own = np.sqrt(np.diag(cov))
    scale = np.maximum(1.0, np.divide(std, own, out=np.ones_like(own), where=own > 0))
    return cov * np.outer(scale, scale)


def joints_to_move(model, link, q):
    """
    Return the joints that turn ``link`` relative to gravity at ``q (n,)``.

    What a pose cannot show of a load (its centre of mass along gravity, its inertia) needs
    the link turned and accelerated: by the revolute joints between it and the base whose
    axes are not along gravity there (``|w_i x g| > 0.1 |g|``).
    """
    g = np.asarray(model.gravity, dtype=float)
    if not np.linalg.norm(g) > 0:
        return []
    R0, _ = world_poses(model, np.asarray(q, dtype=float))
    J = direction_jacobian(model, R0, model.payload_frame(link).body, g / np.linalg.norm(g))
    return [model.joint_names[i] for i in np.flatnonzero(np.linalg.norm(J, axis=0) > 0.1)]
