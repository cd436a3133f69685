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
The simulated robot's time: the plant stepped on the command it holds, its events and its pace.

What ``sim_node`` does between a command in and a state out, without ROS:

* the command held over each step, set to zero once it is older than ``command_timeout``;
* the events of the settings at their physics times: a push (a wrench on a link over a
  window) and a load picked up;
* the scheduler, one of two.  Real time (:meth:`Simulator.tick`): the steps due since the
  start, at most ``max_catch_up`` a tick, beyond which the physics time slips, said.
  Lockstep (:meth:`Simulator.command`, :meth:`Simulator.watch`, :meth:`Simulator.paced`):
  each ``publish_every`` steps wait for the command computed from the state before them, the
  robot held at its initial state until commands flow, ``pace`` physics seconds per wall second
  at most.

The settings are read where they are used, so that a node's live parameters (a push set with
``ros2 param set``) act from the next step: any object with the attributes of
:data:`SETTINGS`.  The simulator says what it does through ``log`` (``info(text)``,
``error(text)``, ``warn(kind, text)``: a warning throttled per kind) and hands each state to
``publish()``, which reads :attr:`Simulator.stamp` and the plant.
"""

import time

import numpy as np

#: Real time: physics integrated on one command beyond this (s) is an open loop, said once a
#: second.  Computed torque at trajectory_node's gains (kp 400, kd 40: crossover near 40 rad/s,
#: 76 degrees of phase margin) loses its margin near 33 ms of delay; a busy 2-core machine gave
#: 23-33 ms stretches and tracking errors up to radians, an idle one 8 ms.
OPEN_LOOP = 0.02
#: Lockstep: how often the held initial state is repeated, and how long commands must have
#: been quiet before the loop starts (wall seconds; see the module).
HOLD_REPEAT, QUIET = 1.0, 1.0

#: What the simulator reads of its settings (sim_node's parameters of these names).
SETTINGS = ('lockstep', 'publish_every', 'max_catch_up', 'lockstep_timeout', 'pace',
            'command_timeout', 'wait_for_command', 'push_link', 'push_wrench', 'push_frame',
            'push_start', 'push_duration', 'load_link', 'load', 'load_at')


class Simulator:
    """
    A plant (:mod:`manipulator_dynamics.plant`) stepped every ``dt`` s (see module).

    ``clock()`` is the wall clock of lockstep's waits (s, monotonic); the physics time of
    real time comes with each :meth:`tick`.
    """

    def __init__(self, model, plant, dt, settings, publish, log, clock=time.monotonic):
        self.model, self.plant, self.dt = model, plant, dt
        self.settings, self.publish, self.log, self.clock = settings, publish, log, clock
        self.step_ns = round(dt * 1e9)
        self.tau = np.zeros(model.n)
        self.command_at = None          # physics time of the latest command, ns
        self.steps, self.diverged, self.held_for, self.commands_in = 0, False, 0, 0
        self.pushing = False
        self.carried = False            # the load of the settings picked up
        self.t0 = 0 if settings.lockstep else None     # clock time of step 0, ns
        self.pace = (clock(), 0)                       # real-time factor: since, steps then
        # lockstep: held until commands flow; the wall times of the last command and of the
        # state awaiting its command; the wall time a paced step waits for, and pace's origin
        self.held, self.last_command_wall, self.awaiting = True, None, None
        self.pending, self.paced_from = None, None

    @property
    def stamp(self):
        """Return the physics time, ns."""
        return self.t0 + self.steps * self.step_ns

    @property
    def seconds(self):
        """Return the physics time since the simulation started, s."""
        return self.steps * self.dt

    def command(self, tau, now):
        """
        Hold ``tau`` (model order, checked and clamped) from the next step.

        ``now``: the clock's time (ns), the command's in real time; in lockstep the physics time
        is the command's instead, and a state awaiting its command is answered (the steps up to
        the next state are taken).
        """
        self.tau = tau
        self.held_for = 0
        self.commands_in += 1
        if not self.settings.lockstep:
            self.command_at = now
            return
        self.command_at = self.stamp
        self.last_command_wall = self.clock()
        if not self.held and self.awaiting is not None:
            self._advance()

    def loaded(self):
        """Forget the load picked up: the settings' load is picked up (again) at its time."""
        self.carried = False

    # --- real time ----------------------------------------------------------------------------
    def tick(self, now):
        """Take the steps due at the clock's time ``now`` (ns), publishing every publish_every."""
        self._timeout(now)
        settings = self.settings
        if self.t0 is None or (settings.wait_for_command and self.command_at is None):
            self.t0 = now - self.steps * self.step_ns        # physics starts (again) now
            self.pace = (self.clock(), self.steps)
            self.publish()
            return
        due = (now - self.t0) // self.step_ns - self.steps
        most = settings.max_catch_up
        if due > most:                                # too far behind: let physics time slip
            self.t0 += (due - most) * self.step_ns
            due = most
        every = settings.publish_every
        for _ in range(due):
            if not self._step():
                return
            if self.steps % every == 0:
                self.publish()
        self._report_pace()

    def _report_pace(self):
        since, steps = self.pace
        wall = self.clock() - since
        if wall < 2.0:
            return
        factor = (self.steps - steps) * self.dt / wall
        self.pace = (self.clock(), self.steps)
        if factor < 0.9:
            self.log.warn('pace', f'running at {factor:.2f} x real time (the machine is busy): '
                          'the physics time slips behind the wall clock')

    def _timeout(self, now):
        timeout = self.settings.command_timeout
        if self.command_at is None or now - self.command_at > timeout * 1e9:
            if self.command_at is not None and self.tau.any():
                self.log.warn('timeout', f'no effort command for '
                              f'{(now - self.command_at) * 1e-9:.3f} s (command_timeout '
                              f'{timeout:g} s): efforts set to zero')
            self.tau = np.zeros(self.model.n)

    # --- lockstep -----------------------------------------------------------------------------
    def watch(self):
        """
        Lockstep's watchdog, on a wall-clock timer: the held state repeated, the loop started.

        A state whose command has not come for ``lockstep_timeout`` s is stepped from with the
        last command, said.
        """
        now = self.clock()
        if self.held:
            if self.last_command_wall is None:
                if self.awaiting is None or now - self.awaiting >= HOLD_REPEAT:
                    self.publish()                      # for subscribers that came late
                    self.awaiting = now
            elif now - self.last_command_wall >= QUIET:
                self.held = False                       # one state, one command from now on
                self.log.info('lockstep: commands flow; the loop starts')
                self.paced_from = (now, self.stamp)
                self.publish()
                self.awaiting = now
            return
        if self.pending is None and now - self.awaiting >= self.settings.lockstep_timeout:
            self.log.warn('lockstep', f'lockstep: no command for {now - self.awaiting:.1f} s '
                          f'after the state at {self.stamp * 1e-9:.3f} s: stepping with the last '
                          "one (the loop now depends on the machine's timing)")
            self._timeout(self.stamp)
            self._advance()

    def _advance(self):
        settings = self.settings
        if settings.pace > 0:             # not ahead of the wall clock: wait for paced()
            wall, stamp = self.paced_from
            ahead = (self.stamp + settings.publish_every * self.step_ns - stamp) * 1e-9
            self.pending = wall + ahead / settings.pace
            if self.clock() < self.pending:
                return
        self.pending = None
        self._steps(settings.publish_every)
        self.awaiting = self.clock()

    def paced(self):
        """Lockstep with a pace, on a wall-clock timer: take the steps that waited for it."""
        if self.pending is not None and self.clock() >= self.pending:
            self.pending = None
            self._steps(self.settings.publish_every)
            self.awaiting = self.clock()

    # --- both ---------------------------------------------------------------------------------
    def _steps(self, count):
        for _ in range(count):
            if not self._step():
                return
        self.publish()

    def _step(self):
        if self.diverged:
            return False
        settings = self.settings
        if self.pushing or settings.push_duration > 0:
            self._push()
        if not self.carried and settings.load_link and \
                self.seconds >= settings.load_at - 0.5 * self.dt:
            self._carry()
        try:
            self.plant.step(self.tau)
        except FloatingPointError as e:
            self.diverged = True
            self.log.error(f'{e}: the simulation stops (no more joint_states); restart sim_node')
            return False
        self.steps += 1
        self.held_for += 1
        if self.held_for * self.dt > OPEN_LOOP and self.command_at is not None and \
                not settings.lockstep:
            self.log.warn('open loop', f'{self.held_for * self.dt * 1e3:.0f} ms of physics on '
                          'one command: the loop is open (a busy machine starves the controller '
                          'or this plant); lockstep:=true with pace:=1.0 slows the loop down '
                          'instead')
        return True

    def _push(self):
        """Push, or stop pushing, as the settings say for the step about to be taken."""
        s = self.settings
        t = self.seconds
        on = bool(s.push_link) and s.push_duration > 0 and \
            s.push_start <= t < s.push_start + s.push_duration
        if on and not self.pushing:
            self.plant.push(s.push_link, s.push_wrench, world=s.push_frame == 'world')
            self.log.info(f'pushing {s.push_link} with {list(s.push_wrench)} ({s.push_frame} '
                          f'axes) at {t:.3f} s for {s.push_duration:g} s')
        elif self.pushing and not on:
            self.plant.push(None, None)
            self.log.info(f'push on {s.push_link} ended at {t:.3f} s')
        self.pushing = on

    def _carry(self):
        """Pick the load of the settings up, from the step about to be taken."""
        s = self.settings
        values = [float(v) for v in s.load]
        self.plant.carry(s.load_link, values[0], values[1:4] or (0.0, 0.0, 0.0),
                         values[4:] or None)
        self.carried = True
        self.log.info(f'{s.load_link} picked up {values[0]:g} kg at {self.seconds:.3f} s: '
                      f'{values}')
