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
dynamics_node's payload output: a load picked up while it runs, estimated and applied.

* ``~/estimate_payload`` (std_srvs/Trigger): the load at ``payload_link`` from the last
  ``payload_window`` seconds of the joint states it read (positions, velocities, the efforts
  the joints applied), the arm's model without any payload known
  (:func:`~manipulator_dynamics.identification.payload.identify_payload`).  Where the motion
  determines the mass within ``payload_mass_tolerance`` and the centre of mass within
  ``payload_com_tolerance``, it sets the ``payload`` parameter: commands and observer change
  together (one new model), and the answer gives the mass, the centre of mass and their
  deviations.  Otherwise nothing changes, and the answer says what was determined and which
  joints to move.
* ``~/clear_payload`` (Trigger): puts the load down (``payload: [0.0]``).
* ``~/payload`` (geometry_msgs/InertiaStamped, transient local, ``frame_id`` the link): the
  load in use, on every change, whichever way it came (the parameter, the service).

The estimate runs in the service's callback, on a window that is filtered and decimated
first: tens of milliseconds, during which the node sends no command (the controller holds the
last one).
"""

from collections import deque

from geometry_msgs.msg import InertiaStamped
import numpy as np
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

from ._parameters import finite_positive, Param
from .kernels import compiling
from .logs import QuickLogger
from .model_source import NO_MODEL
from .qos import LATCHED
from ..errors import IdentificationError
from ..identification.payload import identify_payload, joints_to_move, payload_combinations

#: Fewest states in the window worth an estimate (a tenth of a second at 1 kHz).
FEWEST = 100

#: dynamics_node's parameters of the payload estimate.
PAYLOAD_ESTIMATE_PARAMS = (
    Param('payload_window', 5.0, '~/estimate_payload reads the joint states of the last this '
          'many seconds', finite_positive, low=0.05, high=3600.0),
    Param('payload_mass_tolerance', 0.02, '~/estimate_payload applies an estimate whose mass '
          'deviation is at most this share of the mass', finite_positive, low=1e-6, high=1.0),
    Param('payload_com_tolerance', 0.01, '~/estimate_payload applies an estimate whose centre '
          'of mass deviations are at most this (m)', finite_positive, low=1e-6, high=10.0),
)


def inertia_message(link, values, stamp=None):
    """Return the InertiaStamped of the ``payload`` parameter's ``values`` on ``link``."""
    values = [float(v) for v in values] + [0.0] * (10 - len(values))
    msg = InertiaStamped()
    if stamp is not None:
        msg.header.stamp = stamp
    msg.header.frame_id = link
    i = msg.inertia
    i.m = values[0]
    i.com.x, i.com.y, i.com.z = values[1:4]
    i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz = values[4:]
    return msg


class PayloadOutput:
    """The window of states, the two services and ``~/payload`` for one node (see module)."""

    def __init__(self, node, params, source):
        self.node, self.params, self.source = node, params, source
        self.log = QuickLogger(node)
        self.pub = node.create_publisher(InertiaStamped, '~/payload', LATCHED)
        node.create_service(Trigger, '~/estimate_payload', self._estimate)
        node.create_service(Trigger, '~/clear_payload', self._clear)
        self.window = deque()                   # (stamp ns, q, qd, effort), oldest first
        self._combinations = (None, None, None)     # (model, link, basis)
        self.said = None

    def set_model(self, model):
        """
        Start the window again on a new model (or a new payload on it); say it on ``~/payload``.

        The combinations a load on ``payload_link`` can show are worked out here, once per
        arm model, not when the service is called.
        """
        self.window.clear()
        self.publish()
        loaded = self.source.loaded
        if loaded is not None and self.params.payload_link:
            try:
                self._basis(loaded, self.params.payload_link)
            except ValueError as e:                 # the parameter checks name it already
                self.log.warning(f'payload estimate: {e}')

    def reset(self):
        """Forget the window (a clock that jumped, a deactivation)."""
        self.window.clear()

    def publish(self):
        """Say the payload in use on ``~/payload`` (once per change)."""
        p = self.params
        said = (p.payload_link, tuple(p.payload))
        if said != self.said:
            self.said = said
            self.pub.publish(inertia_message(p.payload_link, p.payload,
                                             self.node.get_clock().now().to_msg()))

    def on_state(self, q, qd, effort, stamp):
        """Keep a state that has velocities and efforts; drop what left the window."""
        if qd is None or effort is None or not self.params.payload_link:
            return
        window = self.window
        window.append((stamp, q, qd, effort))
        oldest = stamp - round(self.params.payload_window * 1e9)
        while window[0][0] < oldest:
            window.popleft()

    # --- the services ----------------------------------------------------------------------
    def _estimate(self, request, response):
        response.success = False
        link, model = self.params.payload_link, self.source.loaded
        if not link:
            response.message = 'not estimated: payload_link is empty (set the link that holds it)'
            return response
        if model is None:
            response.message = f'not estimated: {NO_MODEL}'
            return response
        if compiling(self.node):
            response.message = ('not estimated: the kernels are still compiling (see '
                                '/diagnostics); ask again once they are ready')
            return response
        states = list(self.window)
        if len(states) < FEWEST:
            response.message = (f'not estimated: {len(states)} joint states with velocities '
                                f'and efforts in the last {self.params.payload_window:g} s '
                                f'(at least {FEWEST}): the window is short or the states '
                                'carry no velocity or effort')
            return response
        stamp, q, qd, effort = (np.array(x) for x in zip(*states))
        spread = self.node.contact.spread()
        try:
            found = identify_payload(model, {'t': (stamp - stamp[0]) * 1e-9, 'q': q, 'qd': qd,
                                             'tau': effort}, link,
                                     combinations=self._basis(model, link), spread=spread)
        except (IdentificationError, ValueError) as e:
            response.message = f'not estimated: {e}; the payload in use is unchanged'
            self.log.warning(f'~/estimate_payload: {e}')
            return response
        ok, short = found.usable(self.params.payload_mass_tolerance,
                                 self.params.payload_com_tolerance)
        span = (stamp[-1] - stamp[0]) * 1e-9
        counted = '' if spread is None else (
            " (the deviations count the arm's own error, as the contact levels learnt it)")
        if not ok:
            turn = joints_to_move(model, link, q[-1])
            response.message = (
                f'not applied (the payload in use is unchanged): {short}. From {span:.3g} s of '
                f'states{counted}: {found.summary()}. Move '
                + (', '.join(turn) if turn else 'the joints that carry it')
                + f' (they turn {link} relative to gravity) through wide angles, with '
                'accelerations, then ask again')
            self.log.warning(f'~/estimate_payload: {response.message}')
            return response
        values = found.node_parameters()[0]
        result = self.node.set_parameters([Parameter('payload', Parameter.Type.DOUBLE_ARRAY,
                                                     values)])[0]
        if not result.successful:
            response.message = f'not applied: {result.reason}'
            return response
        response.success = True
        response.message = f'applied, from {span:.3g} s of states{counted}: {found.summary()}'
        self.log.info(f'~/estimate_payload: {response.message}')
        return response

    def _basis(self, model, link):
        kept_model, kept_link, basis = self._combinations
        if kept_model is not model or kept_link != link:
            basis = payload_combinations(model, link)
            self._combinations = (model, link, basis)
        return basis

    def _clear(self, request, response):
        result = self.node.set_parameters([Parameter('payload', Parameter.Type.DOUBLE_ARRAY,
                                                     [0.0])])[0]
        response.success = bool(result.successful)
        response.message = 'the load is put down: no payload' if result.successful else \
            f'not cleared: {result.reason}'
        self.log.info(f'~/clear_payload: {response.message}')
        return response
