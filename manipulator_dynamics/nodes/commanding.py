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
A node that commands efforts from a model and the joint states: dynamics_node, trajectory_node.

What both do is written here once:

* the parameters both apply as they change: ``stale_after``, ``command_joints``, ``payload``
  and ``payload_link`` (:meth:`CommandingNode._on_parameters`; the node's own after them);
* the command output (:class:`.commands.CommandOutput`: the controller's order, the clamping
  and its count) and the joint states, made again on every model (:meth:`_on_model`);
* the lifecycle's steps: deactivate stops the commands first, then drops the inputs and the
  timer and forgets the states; cleanup drops the model; a clock that jumps back forgets the
  states (a simulation reset);
* a joint state read and, where refused, said (:meth:`read_state`), and the counts that
  ``/diagnostics`` reads once a second (:meth:`counts`);
* the kernels (:mod:`.kernels`): loaded at configure where they are compiled, else compiled in
  the background from the node's start while it commands from the interpreted dynamics
  (``self.kernels.dynamics``, the one the node calls), and said in ``/diagnostics`` until
  they are ready (:meth:`.kernels.Kernels.say`);
* with ``external_torques``, the momentum observer and its levels (:mod:`.nodes.contact`) on every
  state the node reads, and the reaction to a collision (``collision_reaction``:
  :mod:`..contact.reaction`): latched on the state that raised the collision level, said on
  ``~/reaction`` (std_msgs/String, transient local) and at ERROR in ``/diagnostics``, the
  commands the reaction's (:meth:`reacting`, :meth:`reaction_torques`) until ``~/rearm``.

A subclass makes its inputs in :meth:`activate` (into ``self.inputs``), computes and sends its
commands (:meth:`.commands.CommandOutput.publish`), hands each state it reads to the observer
before it commands from it (``self.contact.observe``, then ``self.contact.publish`` after the
send, where :meth:`guarded`; else ``self.contact.on_state`` after), and adds to each step
through the hooks
(:meth:`stopped`, :meth:`dropped`, :meth:`clock_jumped`, :meth:`model_changed`,
:meth:`parameters_changed`, :meth:`kernels_loaded`, :meth:`collided`, :meth:`rearmed`).
"""

from std_msgs.msg import String

from ._parameters import Parameters
from .commands import command_joints_check, CommandOutput
from .contact import ContactOutput, gain_check
from .diagnostics import Diagnostics, ERROR, Window
from .joint_states import on_time_jump_back
from .kernels import Kernels, WithKernels
from .lifecycle import ManagedNode
from .logs import QuickLogger, Throttled
from .messages import deserialize_joint_state
from .model_source import ModelSource, payload_check
from .process import clock_ns
from .qos import LATCHED
from ..contact.reaction import NONE, Reaction
from ..precompile import warm_up
from ..runtime.joint_states import JointStates
from ..runtime.refused import BadMessage


class CommandingNode(WithKernels, ManagedNode):
    """
    The common part of the nodes that command efforts (see the module).

    ``table``: the node's parameters (with :data:`.commands.COMMAND_PARAMS`, the model's, the
    payload's and the joint states'); ``checks``: its own parameters' checks beside the shared
    ones.  The subclass makes what its model needs (what :meth:`model_changed` sets), then
    ends its constructor with :meth:`serve`.
    """

    #: The kernel groups (:data:`..precompile.GROUPS`) the node's dynamics need.
    GROUPS = ('rigid',)

    def __init__(self, node_name, table, checks=None, **kwargs):
        super().__init__(node_name, **kwargs)
        self.now_ns = clock_ns(self)
        self.contact = self.reaction = None
        self.params = Parameters(self, table, self._on_parameters, checks={
            'command_joints': command_joints_check(self),
            'payload': payload_check(self, 'payload'),
            'payload_link': payload_check(self, 'payload_link'),
            'observer_gain': self._contact_check('check_gain', gain_check),
            'contact_link': self._contact_check('check_link'),
            'collision_reaction': self._unless_reacting('collision_reaction'),
            'stop_time': self._unless_reacting('stop_time'), **(checks or {})})
        self.throttle = Throttled(self)
        self.log = QuickLogger(self)
        self.command = CommandOutput(self, self.params)
        self.states = None                      # JointStates of the model, once there is one
        self.source = ModelSource(self, self.params, self._on_model)     # loads at configure
        self.timer = None                       # what activate makes, deactivate drops
        self.read = self.stale = 0              # states read, refused as stale
        self.window = Window()                  # the current /diagnostics window
        self.jumps = on_time_jump_back(self, self._on_time_jump)
        self.contact = ContactOutput(self, self.params, self.now_ns, self._on_collision,
                                     self._on_rearm)
        self.reaction_pub = self.create_publisher(String, '~/reaction', LATCHED)
        # before anyone asks: compiling, where they are not, starts with the node
        self.kernels = Kernels(self, self.kernel_groups(), self._load_kernels,
                               self._on_kernels)

    def serve(self, what):
        """End the constructor: ``/diagnostics`` (saying ``what`` the node does), then start."""
        self.diagnostics = Diagnostics(self, what, self._diagnose)
        self.start()

    # --- the hooks a subclass writes ------------------------------------------------------------
    #: Whether the node calls the forward dynamics (the ``forward`` group).
    FORWARD = False

    def warm(self, model):
        """Compile (or load) the kernels ``model`` needs before it serves (its groups)."""
        warm_up(model, contact=self.params.external_torques, forward=self.FORWARD)

    def kernel_groups(self):
        """Return the kernel groups the node needs, as its parameters stand at its start."""
        return self.GROUPS + (('contact',) if self.params.external_torques else ())

    def model_changed(self, model, previous):
        """Take a new model (``previous``: the one before, or None)."""

    def kernels_loaded(self, model):
        """Start what only the kernels serve, once they are loaded (``model``, or None)."""

    def parameters_changed(self, changed):
        """Apply the node's own parameters among ``changed`` (names), once accepted."""

    def stopped(self):
        """Drop what the commands were made from, after a deactivate: the inputs are gone."""

    def dropped(self):
        """Drop what a model gave, after a cleanup."""

    def clock_jumped(self, delta_ns):
        """Follow the clock jumping back by ``delta_ns`` (< 0): the states are forgotten."""

    def collided(self, why):
        """Follow the reaction's start (``why``: the collision, said): it commands from now."""

    def rearmed(self):
        """Follow the end of a reaction (``~/rearm``): the node's own commands from now."""

    def reaction_note(self):
        """Return what ``~/reaction`` adds to the reaction's state (``'; ...'``), or ''."""
        return ''

    def _diagnose(self, report):
        """Say the node's state in ``report`` (once a second)."""

    # --- lifecycle (see .lifecycle) ------------------------------------------------------------
    def configure(self):
        return self.source.configure()

    def deactivate(self):
        self.command.disable()                  # first: not one more command
        self.drop_inputs()
        self.set_timer(0.0, None)
        if self.states is not None:
            self.states.forget()
        self.contact.reset('the node was deactivated')      # a latched reaction stays
        self.stopped()

    def cleanup(self):
        self.source.cleanup()
        self.states = None
        self.command.set_model(None)
        self.contact.set_model(None)
        self.dropped()

    def _on_time_jump(self, delta_ns):
        if self.states is not None:
            self.states.forget()
        self.contact.reset('the clock jumped back')
        self.clock_jumped(delta_ns)

    def set_timer(self, rate, callback):
        """Call ``callback`` at ``rate`` Hz, instead of any timer before (0: no timer)."""
        if self.timer is not None:
            self.destroy_timer(self.timer)
            self.timer = None
        if rate > 0:
            self.timer = self.create_timer(1.0 / rate, callback)

    # --- model, parameters, states ---------------------------------------------------------------
    def _on_model(self, model):
        if self.kernels.dynamics.ready:         # else loaded once compiled (_on_kernels)
            self.warm(model)
        previous = self.states.model if self.states is not None else None
        self.states = JointStates(model, self.params.stale_after,
                                  deserialize=deserialize_joint_state)
        self.command.set_model(model)
        self._set_reaction(model)
        if self.kernels.dynamics.ready:         # else once they are (_on_kernels)
            self.contact.set_model(model)
        self.model_changed(model, previous)

    def _load_kernels(self):
        """Load the compiled kernels (in the kernels' thread) for the model there is, if one."""
        model = self.source.model
        if model is not None:
            self.warm(model)

    def _on_kernels(self):
        model = self.source.model
        if model is not None:
            self.warm(model)                    # loaded in the thread: this takes no time
            self._set_reaction(model)           # the compiled dynamics from now on
        self.contact.set_model(model, 'the kernels are ready')
        self.kernels_loaded(model)

    def _on_parameters(self, changed):
        if 'stale_after' in changed and self.states is not None:
            self.states.stale_after = self.params.stale_after
        if 'command_joints' in changed and self.source.model is not None:
            self.command.set_model(self.source.model)
        if changed & {'payload', 'payload_link'} and self.source.loaded is not None:
            self.source.apply_payload()         # a new model: _on_model takes it
        if changed & {'collision_reaction', 'stop_time', 'external_torques'} and \
                self.source.model is not None:      # (external_torques: ~/reaction says so)
            self._set_reaction(self.source.model)
        self.parameters_changed(changed)
        self.contact.on_parameters(changed)

    def _contact_check(self, method, before=None):
        """Check a parameter as the contact output does, once it exists (``before`` until then)."""
        def check(value):
            if self.contact is None:
                return before(value) if before else None
            return getattr(self.contact, method)(value)
        return check

    def _unless_reacting(self, name):
        """Refuse a change of ``name`` while a reaction is latched: ~/rearm first."""
        def check(value):
            if self.reaction is not None and self.reaction.latched:
                return (f'a collision reaction is in force ({self.reaction.describe()}): '
                        f'call ~/rearm before changing {name}')
            return None
        return check

    # --- the reaction to a collision (..contact.reaction) ---------------------------------------
    def _set_reaction(self, model):
        """Make the reaction for ``model`` and the parameters; one in force stays in force."""
        previous = self.reaction
        self.reaction = Reaction(model, self.params.collision_reaction, self.params.stop_time,
                                 self.kernels.dynamics)
        if previous is not None and previous.latched:
            self.reaction.trigger(previous.since, previous.direction, previous.why)
        self._say_reaction()

    def guarded(self):
        """Whether a collision would be reacted to: each state is observed before its command."""
        return self.contact.monitor.observer is not None and self.reaction is not None and \
            self.reaction.kind != NONE

    def reacting(self):
        """Whether a reaction is in force: the commands are :meth:`reaction_torques`."""
        return self.reaction is not None and self.reaction.latched

    def reaction_torques(self, q, qd, stamp_ns):
        """Return the reaction's efforts at a state (model order; its stamp, ns, or 0: now)."""
        return self.reaction.torques(q, qd, (stamp_ns or self.now_ns()) * 1e-9)

    def _on_collision(self, t, residual, why):
        """React to the collision the observer latched (at ``t`` s, on ``residual``)."""
        if self.reaction is None or not self.reaction.trigger(t, residual, why):
            return
        self.log.error(f'collision reaction: {self.reaction.kind}, from the state at {t:.3f} s '
                       f'({why}), until ~/rearm')
        self.collided(why)
        self._say_reaction()

    def _on_rearm(self):
        """``~/rearm``: end the reaction in force; return what it says of it (or None)."""
        ended = self.reaction.rearm() if self.reaction is not None else None
        if ended is None:
            return None
        self.rearmed()
        self._say_reaction()
        return f'the {self.reaction.kind} reaction ended'

    def _say_reaction(self):
        """Publish the reaction's state on ``~/reaction`` (with :meth:`reaction_note`)."""
        if self.reaction is None:
            return
        said = self.reaction.describe() if self.params.external_torques else \
            f'off: external_torques is false ({self.reaction.kind} once it is on)'
        self.reaction_pub.publish(String(data=said + self.reaction_note()))

    def contact_values(self, report):
        """
        Add the observer's and the reaction's key-values to ``report``; return its problems.

        ``[(level, text)]``: what :meth:`say_contact` says once the node serves (the observer
        not watching, a contact, a latched collision; ERROR while a reaction is in force).
        """
        observer, said = self.contact.summary()
        report.add('external torques', said)
        problems = [(observer, f'external torques: {said}')] if observer else []
        reaction = self.reaction
        if reaction is None or not self.params.external_torques:
            report.add('collision reaction', 'off' if reaction is None or
                       self.params.collision_reaction == NONE else 'off (external_torques false)')
            return problems
        report.add('collision reaction', reaction.describe())
        if reaction.latched:
            problems.append((ERROR, f'collision reaction {reaction.describe()}'))
        return problems

    @staticmethod
    def say_contact(report, problems):
        """Say :meth:`contact_values`' ``problems`` in ``report``."""
        for level, text in problems:
            report.say(level, text)

    def read_state(self, data, now_ns):
        """
        Merge one joint state's bytes: the model's ``(q, qd, effort, stamp)``, or None.

        None for another robot's joints, or a state refused (said, throttled; a stale one
        counted).
        """
        try:
            return self.states.read_serialized(data, now_ns)
        except BadMessage as e:
            self.refused(e)
            return None

    def refused(self, error):
        """Say, throttled, why a joint state was dropped; count a stale one."""
        self.throttle.warn('states ' + error.kind, f'dropped joint_states: {error}')
        self.stale += error.kind == 'stale'

    def counts(self, **more):
        """Take the diagnostics window: ``(seconds, latencies, new counts)`` of read, sent, ..."""
        return self.window.take({'read': self.read, 'sent': self.command.sent,
                                 'stale': self.stale, 'clamped': self.command.clamped, **more})
