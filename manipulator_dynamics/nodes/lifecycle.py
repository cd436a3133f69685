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
Managed (lifecycle) nodes: ``managed:=true`` hands a node's start and stop to a supervisor.

A managed node starts *unconfigured* and serves the lifecycle services that ``ros2 lifecycle``,
launch_ros's ``LifecycleNode`` and Nav2's lifecycle manager call (``~/get_state``,
``~/change_state``, ``~/get_available_transitions``, ``~/transition_event``):

* ``configure`` loads the model and checks it (its kernels warmed): *inactive*;
* ``activate`` subscribes to its inputs and starts commanding, still behind the controller
  check (the controller is asked again: a safe start each time): *active*;
* ``deactivate`` stops the commands at once (not one more leaves) and drops its inputs, keeping
  the model: *inactive*;
* ``cleanup`` drops the model: *unconfigured*;
* ``shutdown`` (from any of them) does what is left: *finalized*, and the node leaves its
  process (which ends with its last node).

A transition that cannot be made (a URDF that does not load at configure, say) returns FAILURE:
the node logs why, undoes what it began and stays where it was.  With ``managed:=false`` (the
default) a node configures and activates itself as it starts and has no lifecycle services:
what it did before it had a lifecycle.  A node's subclass writes the steps (:meth:`configure`
returning why it cannot, :meth:`activate`, :meth:`deactivate`, :meth:`cleanup`), never the
bookkeeping.
"""

from rclpy.lifecycle import LifecycleNodeMixin, TransitionCallbackReturn
from rclpy.node import Node

from ._parameters import ConfigurationError, Param
from .diagnostics import ERROR, OK, Said
from .logs import QuickLogger

#: The parameter every managed-capable node has.
MANAGED_PARAM = Param('managed', False, 'a managed (lifecycle) node: it starts unconfigured and '
                      'a supervisor (ros2 lifecycle, launch) configures (loads the model), '
                      'activates (commands) and deactivates it', read_only=True)


class ManagedNode(LifecycleNodeMixin, Node):
    """
    A node that is managed with ``managed:=true`` and configures and activates itself otherwise.

    The subclass declares its parameters (``self.params``, with :data:`MANAGED_PARAM`), makes
    what lives in every state (publishers, the model source), and ends its constructor with
    :meth:`start`.
    """

    #: Unmanaged, a node that cannot configure ends (exit code 2, the reason said) rather than
    #: serve without what it needs and wait for it (a model may still come on a topic).
    NEEDS_CONFIGURE = False

    def __init__(self, node_name, **kwargs):
        self.said = Said()                      # what it logs, for /diagnostics
        Node.__init__(self, node_name, **kwargs)
        self.managed = False
        self.configured = self.active = self.finished = False
        self.failed = None                      # why the last transition failed, if it did
        self.inputs = []                        # the subscriptions activate makes

    def drop_inputs(self):
        """Destroy the subscriptions :meth:`activate` made (``self.inputs``): none from now."""
        for subscription in self.inputs:
            self.destroy_subscription(subscription)
        self.inputs = []

    def start(self):
        """End the constructor: managed, wait for ``configure``; else configure and activate."""
        self.managed = self.params.managed
        if self.managed:
            LifecycleNodeMixin.__init__(self)
            self.get_logger().info('managed: unconfigured until a supervisor configures it '
                                   f'(ros2 lifecycle set {self.get_fully_qualified_name()} '
                                   'configure)')
            return
        # unmanaged: as before lifecycles, a node without a model yet serves and waits for one
        reason = self.configure()
        if reason and self.NEEDS_CONFIGURE:
            raise ConfigurationError(reason)
        self.configured = True
        self.activate()
        self.active = True

    # --- the steps a node writes ---------------------------------------------------------------
    def configure(self):
        """Load what the node needs; return why it cannot (a string), or None."""
        return None

    def activate(self):
        """Subscribe to the inputs and start the outputs."""

    def deactivate(self):
        """Stop the outputs at once and drop the inputs (the model stays)."""

    def cleanup(self):
        """Drop what :meth:`configure` loaded."""

    # --- rclpy's transition callbacks ----------------------------------------------------------
    def on_configure(self, state):
        return self._transition('configure', 'inactive', self.configure, 'configured',
                                undo=self.cleanup)

    def on_activate(self, state):
        return self._transition('activate', 'active', self.activate, 'active',
                                undo=self.deactivate)

    def on_deactivate(self, state):
        return self._transition('deactivate', 'inactive', self.deactivate, 'active', False)

    def on_cleanup(self, state):
        return self._transition('cleanup', 'unconfigured', self.cleanup, 'configured', False)

    def on_shutdown(self, state):
        """From any state: deactivate and clean up what is up, then leave the process."""
        result = self._transition('shutdown', 'finalized', self._release)
        self.finished = True
        return result

    def on_error(self, state):
        """After a transition's error (rclpy's, its fault said where it happened): start afresh."""
        self._transition('error processing', 'unconfigured', self._release)
        return TransitionCallbackReturn.SUCCESS

    def _release(self):
        if self.active:
            self.active = False
            self.deactivate()
        if self.configured:
            self.configured = False
            self.cleanup()

    def _transition(self, name, goal, step, flag=None, value=True, undo=None):
        log = QuickLogger(self)
        try:
            reason = step()
        except Exception as e:                  # a fault in a step: FAILURE, said, never raised
            reason = f'{type(e).__name__}: {e}'
        if reason:
            self.failed = f'{name} failed: {reason}'
            log.error(f'{self.failed} (the node stays where it was)')
            if undo is not None:
                try:
                    undo()
                except Exception as e:
                    log.error(f'{name}: undoing it failed too: {type(e).__name__}: {e}')
            return TransitionCallbackReturn.FAILURE
        if flag is not None:
            setattr(self, flag, value)
        self.failed = None
        log.info(f'{name}: {goal}')
        return TransitionCallbackReturn.SUCCESS

    def say_state(self, report):
        """
        Say the lifecycle state in ``report``; return whether the node serves (active).

        A managed node not active is OK by design (a supervisor holds it), unless its last
        transition failed: an ERROR, with why.
        """
        state = self.lifecycle_state()
        if self.failed:
            report.say(ERROR, f'{state}: {self.failed}')
        elif state != 'active':
            report.say(OK, f'{state} (managed: its supervisor activates it)')
        return state == 'active'

    def lifecycle_state(self):
        """Return the lifecycle state's label (``active`` for an unmanaged node that serves)."""
        if self.managed:
            return self._state_machine.current_state[1]
        return 'active' if self.active else 'unconfigured'
