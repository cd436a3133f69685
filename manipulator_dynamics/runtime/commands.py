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
From a joint state to its effort command: the law of a mode, the controller's order, the limits.

What a commanding node computes between the state it read
(:mod:`~manipulator_dynamics.runtime.joint_states`) and the command it publishes
(:class:`..nodes.commands.CommandOutput`, which waits for the controller):

* :func:`command_order`: the model's indices of the controller's joints, in its order;
* :class:`Law`: a mode's efforts at a state, ``g(q)`` (``gravity_compensation``),
  ``M(q) qdd_d + h(q, qd)`` (``inverse_dynamics``, the desired accelerations
  :class:`Desired` keeps) or none, plus the joints' friction where asked;
* :func:`clamp_efforts`: the efforts within the URDF limits;
* :class:`CompiledStep`: all of it in one compiled call, from a driver's state as the bytes
  it came in to the command as the bytes it leaves in
  (:func:`..wire.command_from_bytes`), for the layout a reader learnt.
"""

from operator import gt as _gt

import numpy as np

from .refused import BadMessage, by_name
from .._inputs import zeros
from ..control import friction_torque, GRAVITY, GRAVITY_FRICTION, INVERSE
from ..names import joint_map, JointNamesError
from ..rigid.kinematics import ARMATURE, FRICTION, kernel_model
from ..rigid.status import OK
from ..wire import bytes_call

#: The command laws, by the name a node's ``mode`` gives them.
MODES = ('gravity_compensation', 'inverse_dynamics', 'none')


def check_command_joints(model, names):
    """Reason why ``names`` (empty entries ignored) are not all joints of ``model``, or None."""
    try:
        joint_map(model.joint_names if model is not None else (), names,
                  what='the command order', unknown=model is not None)
    except JointNamesError as e:
        return str(e)
    return None


def command_order(model, names):
    """
    Return the model's indices (int64) of the command joints ``names``, in their order.

    Empty entries are ignored; none at all: the model's joints, in its order.  Raises
    :class:`..names.JointNamesError` naming the joints that are not the model's, or repeated.
    """
    names = [n for n in names if n] or list(model.joint_names)
    joint_map(model.joint_names, names, what='the command order', unknown=True)
    return np.array([model.joint_index(n) for n in names], dtype=np.int64)


def clamp_efforts(model, tau, throttle):
    """``tau`` within the URDF effort limits; a throttled warning names the joints clamped."""
    limit = model.effort_limit
    # the common case, none over, in C without numpy's dispatch: 0.53 us for 7 joints against
    # 0.72 for np.count_nonzero(np.abs(tau) > limit) in a warm loop
    if not any(map(_gt, map(abs, tau.tolist()), limit.tolist())):
        return tau
    clamped = np.clip(tau, -limit, limit)
    over = [model.joint_names[i] for i in np.flatnonzero(clamped != tau)]
    throttle.warn('clamped', f'efforts clamped to the URDF limits: {", ".join(over)}')
    return clamped


class Law:
    """
    The efforts a ``mode`` (:data:`MODES`) commands at a state, in the model's joint order.

    ``gravity_compensation``: ``g(q)``, with ``friction`` plus ``Fv qd + Fc s(qd) + Fo`` (the
    model's law; where the state has velocities).  ``inverse_dynamics``: ``M(q) qdd_d +
    h(q, qd)`` at the desired accelerations (a state without velocities: at rest), the rotors'
    inertia included, with ``friction`` the joints' friction too.  ``none``: no commands.
    """

    def __init__(self, mode, friction=False):
        if mode not in MODES:
            raise ValueError(f'unknown command mode {mode!r} (known: {", ".join(MODES)})')
        self.mode, self.friction = mode, bool(friction)
        self.commands = mode != 'none'
        #: whether :meth:`efforts` takes the desired accelerations (:class:`Desired`)
        self.desired = mode == 'inverse_dynamics'
        #: whether :meth:`efforts` is ``g(q)`` itself, as ``~/gravity_torques`` publishes it
        self.gravity = mode == 'gravity_compensation'

    def efforts(self, dynamics, model, q, qd, qdd_d=None, g=None):
        """
        Return the efforts at ``(q, qd)`` (``qd`` None: not measured), or None in mode none.

        ``dynamics``: :mod:`~manipulator_dynamics.runtime.dynamics`' compiled or interpreted
        functions; ``qdd_d``: the desired accelerations (``inverse_dynamics``); ``g``: ``g(q)``
        where computed already.
        """
        if self.gravity:
            tau = g if g is not None else dynamics.gravity_torques(model, q)
            if self.friction and qd is not None:
                tau = tau + friction_torque(model, qd)
            return tau
        if not self.desired:
            return None
        rates = qd if qd is not None else zeros(model.n)
        return dynamics.inverse_dynamics(model, q, rates, qdd_d, friction=self.friction)

    def compiled(self, has_qd):
        """Return ``(law, flags)`` of :func:`..wire.command_from_bytes` for :meth:`efforts`."""
        if self.gravity:
            return GRAVITY_FRICTION if self.friction and has_qd else GRAVITY, 0
        return INVERSE, ARMATURE | (FRICTION if self.friction else 0)


class Desired:
    """
    The desired accelerations of ``inverse_dynamics``: the last given, while fresh, else zero.

    :meth:`take` checks a desired state (trajectory_msgs/JointTrajectory's fields: one point,
    an acceleration per joint name, every joint of the model by name, finite), :meth:`at` gives
    them while younger than ``timeout`` s and otherwise zero, saying so through ``warn(text)``.
    """

    def __init__(self, timeout, warn):
        self.timeout, self.warn = timeout, warn
        self.latest = None                      # (qdd (n,), taken at, ns)

    def clear(self):
        """Forget the desired accelerations (a new model, a deactivation, a clock gone back)."""
        self.latest = None

    def take(self, model, msg, now_ns):
        """Keep ``msg``'s accelerations (model order) from ``now_ns``; raises BadMessage."""
        if len(msg.points) != 1:
            raise BadMessage('points', 'desired_state needs exactly one point, got '
                             f'{len(msg.points)}')
        point = msg.points[0]
        names = list(msg.joint_names)
        if len(point.accelerations) != len(names):
            raise BadMessage('lengths', 'desired_state needs one acceleration per joint name: '
                             f'{len(names)} names, {len(point.accelerations)} accelerations')
        rows = by_name(model, names, what='desired_state', every=True).rows
        qdd = np.asarray(point.accelerations, dtype=float)[rows]
        if not np.all(np.isfinite(qdd)):
            raise BadMessage('non-finite', 'desired_state has non-finite accelerations')
        self.latest = (qdd, now_ns)

    def at(self, now_ns, n):
        """Return the desired accelerations (model order, ``n``) at ``now_ns``: or zero."""
        if self.latest is not None:
            qdd, since = self.latest
            if now_ns - since <= self.timeout * 1e9:
                return qdd
            self.warn('inverse_dynamics: no fresh desired_state, using zero accelerations')
        return zeros(n)


class CompiledStep:
    """
    One joint state's bytes to its command's bytes, in one compiled call.

    For the layout ``wire`` a reader learnt (:meth:`.joint_states.JointStates.front`: a driver
    naming every joint, its arrays one block), ``law`` (:class:`Law`), the command's ``order``
    (:func:`command_order`), its effort ``limits`` (model order; inf: none) and the ``buffer``
    it is published from (:class:`..wire.Float64Bytes`): :meth:`take` checks the bytes against
    the layout, the stamp in order (after ``newest``) and fresh (``stale_after`` s, 0: never
    stale), the values finite, computes the law (into :attr:`tau`, model order) and writes the
    command in the controller's order into ``buffer``.  Whatever it does not accept (another
    layout, a value not finite, a stamp out of order or stale, an effort beyond its limit) it
    leaves to the general path: the reader, :meth:`Law.efforts` and :func:`clamp_efforts`,
    which say why and clamp.

    :meth:`take` and :meth:`renew` are closures over the call's fixed arguments, made once:
    a method reading them from the instance cost a 1 kHz loop 0.2 us a state (a fifth of
    that as closures, bench_state_path's warm loop).
    """

    __slots__ = ('law', 'renew', 'shape', 'take', 'takes_desired', 'tau')

    def __init__(self, model, wire, law, order, limits, buffer, stale_after):
        layout, block = wire.compiled
        filled, n = wire.block[0][0], model.n
        self.law, flags = law.compiled(filled > 1)
        self.shape = shape = (filled, n)
        self.tau = tau = np.empty(n)
        #: whether each :meth:`take` is given the desired accelerations (:class:`Desired`)
        self.takes_desired = self.law == INVERSE
        self.take, self.renew = _step(bytes_call.call, kernel_model(model).address, layout,
                                      block, wire.map.gather, self.law, flags, zeros(n), limits,
                                      order, stale_after * 1e9, tau, buffer, shape)

    @classmethod
    def plan(cls, model, wire, law, order, limits, buffer, stale_after):
        """Return the step, or None where there is none: no layout, no law, no bytes out."""
        if wire is None or not law.commands or buffer is None or order is None:
            return None
        return cls(model, wire, law, order, limits, buffer, stale_after)


def _step(call, address, layout, block, gather, law, flags, zero, limits, order, stale, tau,
          buffer, shape):
    """
    Return :meth:`CompiledStep.take` and :meth:`CompiledStep.renew` over these arguments.

    ``take(data, qdd, newest, now)``: the state ``data`` (bytes) at ``now`` (ns), ``qdd`` the
    desired accelerations (model order) where the law takes them (else None): ``(status,
    stamp, state)``.  OK: the command is in the buffer, ``state`` the ``(filled, n)`` values
    read (model order, its own arrays: a reader may keep them), ``tau`` the law's efforts.
    :data:`..wire.NOT_THIS_LAYOUT`: the layout was not this one (the step is spent).
    ``renew()``: make the arrays the next state is read into, after a send (off its latency;
    a take after none makes them itself).
    """
    empty = np.empty
    fresh = [None]                              # the arrays the next state is read into

    def take(data, qdd, newest, now):
        state = fresh[0]
        if state is None:
            state = empty(shape)
        status, stamp = call(address, data, layout, block, gather, law, flags,
                             zero if qdd is None else qdd, limits, order, newest, now, stale,
                             state, tau, buffer)
        fresh[0] = None if status == OK else state     # taken: the next state's are new
        return status, stamp, state

    def renew():
        fresh[0] = empty(shape)

    return take, renew
