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
Closed loops: a robot as its URDF tree plus loop-closure constraints (Khalil & Dombre, A5.3).

A closure says that a point of ``link_a`` and a point of ``link_b`` coincide (the cut joint), and,
for a revolute cut joint in space, that an axis of each stays parallel.  The robot's motors drive
the ``active`` joints; every other joint of the tree is passive and follows from the closures::

    # config/fourbar_closure.yaml
    active: [crank_joint]
    reference: {coupler_joint: -0.5}   # optional: a guess near an assembled configuration
    closures:
      - link_a: coupler                # the loop is cut here
        point_a: [0.6, 0.0, 0.0]       # in link_a's frame
        link_b: rocker
        point_b: [0.3, 0.0, 0.0]       # in link_b's frame
        # axis_a: [0, 0, 1]            # optional, with axis_b: axes kept parallel
        # axis_b: [0, 0, 1]

Passive positions come from Gauss-Newton on the closure equations with exact Jacobians, passive
velocities and accelerations from the differentiated constraints ``J qd = 0`` and
``J qdd + Jdot qd = 0`` (``Jdot qd`` is the closure points' acceleration at ``qdd = 0``).
"""

from dataclasses import dataclass
import math
from typing import Mapping

import numpy as np

from ..model import read_yaml
from ..rigid.jacobian import direction_jacobian, frame_pose, point_jacobian, world_poses
from ..rigid.kinematics import body_motion, kernel_model, motion_workspace


class ClosureError(ValueError):
    """The loop closures are malformed, or the loop cannot be assembled."""


@dataclass(frozen=True)
class Closure:
    """Point ``point_a`` of ``link_a`` coincides with ``point_b`` of ``link_b`` (link frames)."""

    link_a: str
    point_a: np.ndarray
    link_b: str
    point_b: np.ndarray
    axis_a: np.ndarray = None
    axis_b: np.ndarray = None


@dataclass(frozen=True)
class ClosedLoops:
    """Closures of a model's tree, its active and passive joints (indices into joint_names)."""

    closures: tuple
    active: np.ndarray
    passive: np.ndarray
    reference: np.ndarray


def _vector(value, what):
    try:
        v = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ClosureError(f'{what} must be 3 numbers, got {value!r}') from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ClosureError(f'{what} must be 3 finite numbers, got {value!r}')
    return v


def load_closures(model, source):
    """Read closures from a YAML file, YAML text or mapping (format: the module docstring)."""
    if isinstance(source, ClosedLoops):
        return source
    source = read_yaml(source, 'closure', ClosureError)
    if not isinstance(source, Mapping):
        raise ClosureError('closures must be a mapping with keys active, closures [, reference]')
    unknown = set(source) - {'active', 'closures', 'reference'}
    if unknown:
        raise ClosureError(f'unknown closure keys: {", ".join(sorted(unknown))} (expected '
                           'active, closures, reference)')
    active = source.get('active')
    if not active or not isinstance(active, (list, tuple)):
        raise ClosureError('closures need "active": the list of joints the motors drive')
    for name in active:
        if name not in model.joint_names:
            raise ClosureError(f"active joint '{name}' is not a joint of '{model.name}' "
                               f'(joints: {", ".join(model.joint_names)})')
    entries = source.get('closures')
    if not entries or not isinstance(entries, (list, tuple)):
        raise ClosureError('closures need "closures": a list of {link_a, point_a, link_b, '
                           'point_b}')
    closures = []
    for k, entry in enumerate(entries):
        where = f'closure {k}'
        if not isinstance(entry, Mapping):
            raise ClosureError(f'{where} must be a mapping')
        for key in ('link_a', 'point_a', 'link_b', 'point_b'):
            if key not in entry:
                raise ClosureError(f'{where} lacks {key}')
        for key in ('link_a', 'link_b'):
            if entry[key] not in model.frames:
                raise ClosureError(f"{where}: {key} '{entry[key]}' is not a link of the model")
        axes = [entry.get('axis_a'), entry.get('axis_b')]
        if (axes[0] is None) != (axes[1] is None):
            raise ClosureError(f'{where}: give both axis_a and axis_b, or neither')
        if axes[0] is not None:
            axes = [_vector(a, f'{where}: axis') for a in axes]
            if min(np.linalg.norm(a) for a in axes) < 1e-12:
                raise ClosureError(f'{where}: axes must not be zero')
            axes = [a / np.linalg.norm(a) for a in axes]
        closures.append(Closure(entry['link_a'], _vector(entry['point_a'], f'{where}: point_a'),
                                entry['link_b'], _vector(entry['point_b'], f'{where}: point_b'),
                                axes[0], axes[1]))
    active_idx = np.array([model.joint_index(j) for j in active], dtype=np.int64)
    passive_idx = np.array([i for i in range(model.n) if i not in set(active_idx)],
                           dtype=np.int64)
    reference = np.zeros(model.n)
    for name, value in (source.get('reference') or {}).items():
        reference[model.joint_index(name)] = float(value)
    loops = ClosedLoops(tuple(closures), active_idx, passive_idx, reference)
    q0 = solve_passive(model, loops, reference)
    J = constraint_jacobian(model, loops, q0)
    rank = np.linalg.matrix_rank(J[:, passive_idx], tol=1e-9 * max(1.0, np.abs(J).max()))
    if rank < len(passive_idx):
        names = ', '.join(model.joint_names[i] for i in passive_idx)
        raise ClosureError(f'the closures determine {rank} of the {len(passive_idx)} passive '
                           f'joints ({names}): list the other motor-driven joints in "active"')
    return ClosedLoops(loops.closures, active_idx, passive_idx, q0)


def constraints(model, loops, q):
    """Closure residuals at ``q``: stacked ``p_a - p_b`` (and ``a_a x a_b``), shape (m,)."""
    R0, p0 = world_poses(model, q)
    out = []
    for c in loops.closures:
        Ra, pa, _ = frame_pose(model, c.link_a, R0, p0)
        Rb, pb, _ = frame_pose(model, c.link_b, R0, p0)
        out.append(pa + Ra @ c.point_a - pb - Rb @ c.point_b)
        if c.axis_a is not None:
            out.append(np.cross(Ra @ c.axis_a, Rb @ c.axis_b))
    return np.concatenate(out)


def constraint_jacobian(model, loops, q):
    """Jacobian ``d constraints / dq`` at ``q``, shape (m, n)."""
    R0, p0 = world_poses(model, q)
    rows = []
    for c in loops.closures:
        Ra, pa, ba = frame_pose(model, c.link_a, R0, p0)
        Rb, pb, bb = frame_pose(model, c.link_b, R0, p0)
        xa, xb = pa + Ra @ c.point_a, pb + Rb @ c.point_b
        rows.append(point_jacobian(model, R0, p0, ba, xa) -
                    point_jacobian(model, R0, p0, bb, xb))
        if c.axis_a is not None:
            ua, ub = Ra @ c.axis_a, Rb @ c.axis_b
            # d(ua x ub) = dua x ub + ua x dub, dua = Ja_col (a vector per joint)
            Ja, Jb = direction_jacobian(model, R0, ba, ua), direction_jacobian(model, R0, bb, ub)
            rows.append(np.cross(Ja.T, ub).T + np.cross(ua, Jb.T).T)
    return np.vstack(rows)


def solve_passive(model, loops, q, iterations=50):
    """Passive joints closing the loops, from the guess ``q`` (active joints kept); (n,)."""
    q = np.array(q, dtype=float)
    passive = loops.passive
    for _ in range(iterations):
        phi = constraints(model, loops, q)
        if np.abs(phi).max() < 1e-13:
            return q
        J = constraint_jacobian(model, loops, q)[:, passive]
        step = np.linalg.lstsq(J, -phi, rcond=None)[0]
        q[passive] += step
        if not np.all(np.isfinite(q)):
            break
    phi = constraints(model, loops, q)
    if not np.abs(phi).max() < 1e-10:
        active = ', '.join(f'{model.joint_names[i]}={q[i]:.4g}' for i in loops.active)
        raise ClosureError(f'the loops cannot be closed at {active} (residual '
                           f'{np.abs(phi).max():.2e} m): those active positions are outside the '
                           "mechanism's range; narrow the active joints' limits, or give a "
                           'reference configuration near an assembled one')
    return q


#: Largest step of an active joint (rad or m) between two Newton solves of the continuation.
CONTINUATION_STEP = 0.05


def complete(model, loops, qa, qda, qdda):
    """
    Full ``(q, qd, qdd, G)`` from the active joints' values: the state of the whole tree.

    The active joints move from the reference configuration to ``qa`` in steps of at most
    ``CONTINUATION_STEP``, the passive ones solved at each step: so the solution stays on the
    reference's assembly branch (a four-bar has two: solved from afar, Newton may land on the
    crossed one).  ``G (n, N_active)`` maps active velocities to all joint velocities.
    """
    q = loops.reference.copy()
    start = q[loops.active].copy()
    steps = max(1, int(math.ceil(np.abs(np.asarray(qa) - start).max() / CONTINUATION_STEP)))
    for k in range(1, steps + 1):
        q[loops.active] = start + (np.asarray(qa) - start) * (k / steps)
        q = solve_passive(model, loops, q)
    J = constraint_jacobian(model, loops, q)
    Jp, Ja = J[:, loops.passive], J[:, loops.active]
    pinv = np.linalg.pinv(Jp)
    G = np.zeros((model.n, len(loops.active)))
    G[loops.active, np.arange(len(loops.active))] = 1.0
    G[loops.passive] = -pinv @ Ja
    qd = G @ qda
    # Jdot qd: acceleration of the closure residual at qdd = 0, from a Newton-Euler pass
    bias = _closure_bias(model, loops, q, qd)
    qdd = G @ qdda
    qdd[loops.passive] -= pinv @ bias
    return q, qd, qdd, G


def _closure_bias(model, loops, q, qd):
    """``Jdot qd``: second time derivative of the closure residuals with ``qdd = 0``."""
    work = motion_workspace(model.n)
    body_motion(kernel_model(model), np.zeros(3), np.ascontiguousarray(q, dtype=float),
                np.ascontiguousarray(qd, dtype=float), np.zeros(model.n), work)
    R0 = work[2]
    w, dw, dv = work[4][0], work[4][1], work[4][2]

    def point_acc(link, point):
        frame = model.frames[link]
        if frame.body < 0:
            return np.zeros(3)
        b = frame.body
        r = frame.R @ point + frame.p      # in body frame
        acc = dv[b] + np.cross(dw[b], r) + np.cross(w[b], np.cross(w[b], r))
        return R0[b] @ acc

    def axis_rates(link, axis):
        frame = model.frames[link]
        if frame.body < 0:
            return np.zeros(3), np.zeros(3), np.zeros(3)
        b = frame.body
        u = frame.R @ axis
        du = np.cross(w[b], u)
        ddu = np.cross(dw[b], u) + np.cross(w[b], du)
        return R0[b] @ u, R0[b] @ du, R0[b] @ ddu

    out = []
    for c in loops.closures:
        out.append(point_acc(c.link_a, c.point_a) - point_acc(c.link_b, c.point_b))
        if c.axis_a is not None:
            ua, dua, ddua = axis_rates(c.link_a, c.axis_a)
            ub, dub, ddub = axis_rates(c.link_b, c.axis_b)
            out.append(np.cross(ddua, ub) + 2 * np.cross(dua, dub) + np.cross(ua, ddub))
    return np.concatenate(out)


def sample(model, loops, rng, count):
    """
    ``count`` random consistent states of the closed-loop robot: ``(q, qd, qdd, G)`` stacks.

    Active positions are drawn within their limits; a draw the loop cannot reach is drawn again
    (the mechanism's range may be narrower than the URDF limits).
    """
    lo = np.where(np.isfinite(model.lower), model.lower, -math.pi)[loops.active]
    hi = np.where(np.isfinite(model.upper), model.upper, math.pi)[loops.active]
    qs, qds, qdds, Gs = [], [], [], []
    tries = 0
    while len(qs) < count:
        tries += 1
        if tries > 20 * count + 100:
            raise ClosureError(f'only {len(qs)} of {tries} random active positions close the '
                               "loops: narrow the active joints' limits to the mechanism's range")
        qa = lo + (hi - lo) * rng.uniform(size=len(lo))
        try:
            q, qd, qdd, G = complete(model, loops, qa, rng.uniform(-1, 1, len(lo)),
                                     rng.uniform(-1, 1, len(lo)))
        except ClosureError:
            continue
        qs.append(q)
        qds.append(qd)
        qdds.append(qdd)
        Gs.append(G)
    return np.array(qs), np.array(qds), np.array(qdds), np.array(Gs)
