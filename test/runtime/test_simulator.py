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
sim_node's time without ROS: the command held and timed out, the events, both schedulers.

The plant here is a stand-in that records what it is asked (the engines themselves are tested
in test/test_plant.py), the clocks are the test's, and so every step is the test's to count.
sim_node over DDS is tested in test/nodes (the closed loops, the push, the load, lockstep).
"""

from types import SimpleNamespace

from helpers import Said
from manipulator_dynamics.runtime.simulator import HOLD_REPEAT, OPEN_LOOP, QUIET, SETTINGS
from manipulator_dynamics.runtime.simulator import Simulator
import numpy as np
import pytest

MS = 1_000_000
#: A clock time lockstep's commands come with: ignored, the physics time is theirs.
CLOCK = 123 * MS


class Plant:
    """Record the efforts of each step, and the pushes and loads, as the engines take them."""

    def __init__(self, n, diverge_at=None):
        self.q, self.qd = np.zeros(n), np.zeros(n)
        self.efforts, self.pushes, self.loads = [], [], []
        self.diverge_at = diverge_at

    def step(self, tau):
        if len(self.efforts) == self.diverge_at:
            raise FloatingPointError('the state is not finite')
        self.efforts.append(np.array(tau))

    def push(self, link, wrench, world=True):
        self.pushes.append((len(self.efforts), link, None if wrench is None else list(wrench),
                            world))

    def carry(self, link, mass, com, inertia):
        self.loads.append((len(self.efforts), link, mass, tuple(com), inertia))


class Wall:
    """A wall clock the test moves on."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def settings(**changes):
    values = {'lockstep': False, 'publish_every': 1, 'max_catch_up': 20,
              'lockstep_timeout': 5.0, 'pace': 0.0, 'command_timeout': 0.1,
              'wait_for_command': False, 'push_link': '', 'push_wrench': [0.0] * 6,
              'push_frame': 'world', 'push_start': 0.0, 'push_duration': 0.0, 'load_link': '',
              'load': [0.0], 'load_at': 0.0}
    assert set(values) == set(SETTINGS)
    values.update(changes)
    return SimpleNamespace(**values)


def simulator(model, dt=0.001, plant=None, **changes):
    published = []
    log, wall = Said(), Wall()
    plant = plant or Plant(model.n)
    sim = Simulator(model, plant, dt, settings(**changes), None, log, clock=wall)
    sim.publish = lambda: published.append((sim.stamp, sim.steps))
    return sim, plant, published, log, wall


def test_real_time_takes_the_steps_due_and_publishes_every_publish_every(model):
    sim, plant, published, _, _ = simulator(model, publish_every=2)
    sim.tick(5_000 * MS)                        # the first tick starts the physics there
    assert sim.steps == 0 and published == [(5_000 * MS, 0)]
    sim.tick(5_007 * MS)
    assert sim.steps == 7 and [p[1] for p in published[1:]] == [2, 4, 6]
    assert sim.stamp == 5_007 * MS
    sim.tick(5_007 * MS + MS // 2)              # half a step: nothing due
    assert sim.steps == 7


def test_a_late_tick_catches_up_at_most_max_catch_up_and_the_physics_time_slips(model):
    sim, plant, published, _, _ = simulator(model, max_catch_up=5)
    sim.tick(0)
    sim.tick(50 * MS)                           # 50 steps due, 5 taken
    assert sim.steps == 5 and sim.stamp == 50 * MS
    sim.tick(53 * MS)
    assert sim.steps == 8 and sim.stamp == 53 * MS


def test_the_command_is_held_over_the_steps_and_zero_once_it_times_out(model):
    sim, plant, _, log, _ = simulator(model, command_timeout=0.005)
    sim.tick(0)
    tau = np.arange(1.0, model.n + 1)
    sim.command(tau, 0)
    sim.tick(3 * MS)
    assert all(np.array_equal(e, tau) for e in plant.efforts)
    sim.tick(10 * MS)                           # 10 ms after the command: timed out
    assert not sim.tau.any() and 'timeout' in log.kinds()
    assert not plant.efforts[-1].any()
    assert sim.commands_in == 1


def test_one_command_held_beyond_the_open_loop_limit_is_said(model):
    sim, _, _, log, _ = simulator(model, command_timeout=1.0)
    sim.tick(0)
    sim.command(np.ones(model.n), 0)
    steps = int(OPEN_LOOP / 0.001)
    sim.tick(steps * MS)
    assert 'open loop' not in log.kinds()
    sim.tick((steps + 2) * MS)
    assert 'open loop' in log.kinds()


def test_wait_for_command_holds_the_physics_until_the_first_command(model):
    sim, plant, published, _, _ = simulator(model, wait_for_command=True)
    for now in (0, 10 * MS, 20 * MS):
        sim.tick(now)
    assert sim.steps == 0 and len(published) == 3 and not plant.efforts
    sim.command(np.ones(model.n), 20 * MS)
    sim.tick(24 * MS)
    assert sim.steps == 4


def test_a_slow_machine_is_said_from_the_real_time_factor(model):
    sim, _, _, log, wall = simulator(model, max_catch_up=10)
    sim.tick(0)
    for i in range(1, 30):                      # 10 steps a tick, a tick every 0.1 s wall
        wall.now += 0.1
        sim.tick(i * 100 * MS)
    assert 'pace' in log.kinds()
    assert '0.10 x real time' in dict(log.lines)['pace']


def test_the_push_acts_over_its_window_of_physics_time_and_the_load_from_its_time(model):
    link = next(name for name, frame in model.frames.items() if frame.body == model.n - 1)
    sim, plant, _, log, _ = simulator(model, push_link=link, push_wrench=[1, 2, 3, 0, 0, 0],
                                      push_frame='link', push_start=0.0045, push_duration=0.003,
                                      load_link=link, load=[1.5, 0.0, 0.0, 0.1], load_at=0.006)
    sim.tick(0)
    sim.command(np.zeros(model.n), 0)
    sim.tick(10 * MS)
    assert plant.pushes == [(5, link, [1, 2, 3, 0, 0, 0], False), (8, None, None, True)]
    assert plant.loads == [(6, link, 1.5, (0.0, 0.0, 0.1), None)]
    sim.tick(20 * MS)
    assert len(plant.loads) == 1                # carried: picked up once
    sim.loaded()                                # the load's settings changed: picked up again
    sim.tick(21 * MS)
    assert len(plant.loads) == 2
    said = ' '.join(text for _, text in log.lines)
    assert f'pushing {link}' in said and f'push on {link} ended at 0.008 s' in said
    assert f'{link} picked up 1.5 kg at 0.006 s' in said


def test_a_diverged_plant_stops_the_simulation_saying_so(model):
    sim, plant, published, log, _ = simulator(model, plant=Plant(model.n, diverge_at=3))
    sim.tick(0)
    sim.tick(10 * MS)
    assert sim.diverged and sim.steps == 3 and len(published) == 4
    assert log.lines[-1][0] == 'error' and 'the simulation stops' in log.lines[-1][1]
    sim.tick(20 * MS)
    assert sim.steps == 3


def test_lockstep_holds_until_commands_flow_then_answers_one_state_per_command(model):
    sim, plant, published, log, wall = simulator(model, lockstep=True, publish_every=2)
    sim.watch()                                 # held: the initial state, for late subscribers
    wall.now += 0.5
    sim.watch()
    wall.now += HOLD_REPEAT
    sim.watch()
    assert sim.steps == 0 and len(published) == 2
    sim.command(np.ones(model.n), CLOCK)        # commands come; the loop waits for them to
    wall.now += QUIET                           # fall quiet, then starts
    sim.watch()
    assert not sim.held and len(published) == 3 and sim.steps == 0
    for k in range(1, 4):
        sim.command(np.full(model.n, float(k)), CLOCK)
        assert sim.steps == 2 * k and published[-1] == (2 * k * MS, 2 * k)
        assert all(e[0] == k for e in plant.efforts[-2:])
    assert sim.command_at == 4 * MS             # the physics time of the command


def test_lockstep_steps_with_the_last_command_after_lockstep_timeout_saying_so(model):
    sim, plant, published, log, wall = simulator(model, lockstep=True, lockstep_timeout=2.0)
    sim.command(np.ones(model.n), CLOCK)
    wall.now += QUIET
    sim.watch()
    wall.now += 1.0
    sim.watch()
    assert sim.steps == 0
    wall.now += 1.5
    sim.watch()
    assert sim.steps == 1 and 'lockstep' in log.kinds()
    assert 'stepping with the last one' in dict(log.lines)['lockstep']


def test_lockstep_with_a_pace_is_never_ahead_of_the_wall_clock(model):
    sim, plant, published, _, wall = simulator(model, lockstep=True, pace=1.0, publish_every=10)
    sim.command(np.ones(model.n), CLOCK)
    wall.now += QUIET
    sim.watch()                                 # starts: 10 steps are 10 ms of wall time
    sim.command(np.ones(model.n), CLOCK)
    assert sim.steps == 0 and sim.pending == pytest.approx(wall.now + 0.01)
    sim.paced()
    assert sim.steps == 0
    wall.now += 0.01
    sim.paced()
    assert sim.steps == 10
