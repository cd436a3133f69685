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
A log observed as dynamics_node observes its joint states: the levels it would have raised.

:func:`replay` runs the momentum observer over a log's
:class:`~manipulator_dynamics.recordings.log.States` (:func:`.observer.observe`), riding
through gaps up to :func:`.detection.ride_bound` and starting again past it (as
:func:`.detection.residual_spread` does), takes its levels by the node's policy
(:func:`.calibration.resolve_thresholds`: as given, from an identification, or learnt by
:class:`.calibration.Learning` over the first settled seconds of motion) and lists every
stretch of states above a contact level: an :class:`Episode`.  What ``~/contact`` would have
said, before a robot runs with those levels: which pushes they catch, and whether free motion
crosses them.  A collision latches in the node until ``~/rearm``; here each
episode ends when every joint is back under its contact level, as if re-armed then (and a run
above it that starts again within the observer's time constant is the same episode: a
residual decaying through a level crosses it back and forth on its noise).  For each
joint it also says the share of watched states within its contact level and within its
collision level, and the margin: the largest ``(|r| - band) / level`` of any state (under 1:
every state within it).
"""

from dataclasses import dataclass, field

import numpy as np

from .calibration import GROWTH, Learnt, numbers, Refused
from .detection import COLLISION, CONTACT, LEVEL_NAMES, observed_stretches
from .observer import beyond, observe, observer_gains, SETTLING
from .settings import ContactSettings
from ..recordings.log import States


@dataclass(frozen=True)
class Episode:
    """States above a contact level from ``start`` to ``end`` (s): the highest, the joints."""

    start: float
    end: float
    level: int
    peak: dict                  # joint: largest |r| beyond the band over the episode, N m

    def describe(self):
        """One line: the times, the level and each joint's peak."""
        joints = ', '.join(f'{j} {v:.3g} N m' for j, v in self.peak.items())
        return f'{self.start:.3f}-{self.end:.3f} s {LEVEL_NAMES[self.level]}: {joints}'


@dataclass(frozen=True)
class Replay:
    """
    What :func:`replay` found: the levels, how they were set, and every :class:`Episode`.

    ``levels`` None: none could be set (``how`` says why) and nothing was watched.
    ``watched``: the seconds of states the levels judged; ``calibration``: the stamps of the
    first and last state a calibration learnt from (None where none ran); ``moments``: what it
    left out of the spread (:class:`.detection.Moment`); ``warnings``: what the node would
    have warned of.
    """

    levels: object
    how: str
    episodes: list
    watched: float = 0.0
    calibration: object = None
    moments: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    restarts: int = 0
    #: per joint: the share of watched states within its contact level, within its collision
    #: level, and the largest ``(|r| - band) / contact level``; None where nothing was watched
    within: dict = None

    def table(self, model):
        """Return the report as text: the levels, then one line per episode."""
        lines = []
        if self.levels is None:
            lines.append(f'no contact levels: {self.how}')
        else:
            grows = (' within the motion seen, growing beyond it' if self.levels.growing()
                     else '')
            lines.append(f'contact levels {self.how}: contact {numbers(self.levels.contact)} '
                         f'N m, collision {numbers(self.levels.collision)} N m{grows}')
        if self.calibration is not None:
            lines.append(f'calibration over {self.calibration[0]:.3f}-{self.calibration[1]:.3f} s')
        if self.moments:
            lines.append('moments left out of the spread: '
                         + ', '.join(m.describe() for m in self.moments))
        lines += [f'warning: {w}' for w in self.warnings]
        if self.levels is not None:
            counts = {LEVEL_NAMES[k]: sum(e.level == k for e in self.episodes)
                      for k in (CONTACT, COLLISION)}
            lines.append(f'{self.watched:.3f} s watched, {self.restarts} observer restart(s): '
                         f"{counts['contact']} contact(s), {counts['collision']} "
                         'collision(s)')
            lines += ['  ' + e.describe() for e in self.episodes]
        if self.within:
            lines.append('within the levels (share of watched states), and the margin (the '
                         'largest |r| - band over the contact level):')
            lines += [f'  {j}: contact {w["contact"]:.4%}, collision {w["collision"]:.4%}, '
                      f'margin {w["margin"]:.3g}' for j, w in self.within.items()]
        return '\n'.join(lines)

    def to_dict(self):
        """Return a plain mapping for YAML or JSON."""
        return {
            'how': self.how,
            'levels': None if self.levels is None else {
                'contact': self.levels.contact.tolist(),
                'collision': self.levels.collision.tolist(),
                **{name: None if values is None else np.asarray(values).tolist()
                   for name, values in zip(GROWTH, self.levels[2:])}},
            'calibration_s': None if self.calibration is None else list(self.calibration),
            'moments': [vars(m) for m in self.moments],
            'warnings': list(self.warnings),
            'watched_s': self.watched,
            'restarts': self.restarts,
            'within': self.within,
            'episodes': [{'start': e.start, 'end': e.end, 'level': LEVEL_NAMES[e.level],
                          'peak': dict(e.peak)} for e in self.episodes],
        }


def replay(model, states, settings=None, **options):
    """
    Observe a log as dynamics_node would and return the levels it raises: a :class:`Replay`.

    The observer starts at the first state, rides through gaps up to
    :func:`.detection.ride_bound` and starts again past them; after each start it watches once
    settled (:data:`.observer.SETTLING` time constants).  ``ValueError`` for levels that are
    not levels (:func:`.calibration.resolve_thresholds` names them).

    Parameters
    ----------
    model : Model
        The robot, with the friction law its joints hold.
    states : States
        The log with its measured velocities, on the robot's clock
        (:func:`~manipulator_dynamics.recordings.log.read_states`), or arrays held as they are
        (:meth:`~manipulator_dynamics.recordings.log.States.of`).
    settings : ContactSettings, optional
        How the states are watched (:class:`.settings.ContactSettings`: the observer's gain
        and friction, the levels, the calibration's seconds, the levels' growth), or its
        fields by keyword: ``replay(model, states, gain=30.0)``.

    """
    if not isinstance(states, States):
        raise TypeError(f'replay watches States, not {type(states).__name__}: '
                        'read_states(model, log), or States.of(model, t, q, qd, tau)')
    settings = ContactSettings.given(settings, **options)
    t, q, qd, tau = states.t, states.q, states.qd, states.tau
    gains = observer_gains(model, settings.gain)
    levels, how, warning = settings.levels(model, gains)
    warnings = [warning] if warning else []
    parts, bound = observed_stretches(t, gains)
    r, band, settled = np.zeros((len(t), model.n)), np.zeros((len(t), model.n)), []
    for rows in parts:
        r[rows], band[rows] = observe(model, t[rows], q[rows], qd[rows], tau[rows], gains,
                                      friction=settings.friction)
        settled.append(rows[t[rows] - t[rows][0] >= SETTLING / gains.min()])
    firsts = {int(s[0]) for s in settled if len(s)}     # each stretch's first settled state
    settled = np.concatenate(settled)
    watch_from, learnt, moments = 0, None, []
    if levels is None:
        learning, outcome = settings.learning(model), None
        for k, i in enumerate(settled):
            if i in firsts and learning.started:    # a restart cut it (the node's policy)
                learning.restart()
            outcome = learning.add(t[i], t[i], r[i], qd[i], tau[i], band[i])
            if isinstance(outcome, Refused):
                warnings.append(outcome.text)
            elif outcome is not None:
                break
        if not isinstance(outcome, Learnt):
            return Replay(None, f'a calibration needs {settings.calibration:g} s of free '
                          f'motion once the observer has settled; the log has '
                          f'{learning.moved:.3g} s', [],
                          warnings=warnings, restarts=len(parts) - 1)
        warnings += outcome.warnings()
        levels, how, moments, learnt = outcome.levels, outcome.how, outcome.moments, outcome.span
        watch_from = k + 1
    watched = settled[watch_from:]
    outside = beyond(r[watched], band[watched])
    contact_at, collision_at = levels.at(qd[watched], tau[watched] - r[watched])
    episodes = _episodes(model, t[watched], outside, contact_at, collision_at,
                         np.diff(watched) > 1, 1.0 / gains.min())
    seconds = float(np.sum(np.minimum(np.diff(t[watched]), bound))) if len(watched) else 0.0
    within = None if not len(watched) else {
        j: {'contact': float(np.mean(outside[:, i] <= contact_at[:, i])),
            'collision': float(np.mean(outside[:, i] <= collision_at[:, i])),
            'margin': float(np.max(outside[:, i] / contact_at[:, i]))}
        for i, j in enumerate(model.joint_names)}
    return Replay(levels, how, episodes, watched=seconds, calibration=learnt, moments=moments,
                  warnings=warnings, restarts=len(parts) - 1, within=within)


def _episodes(model, t, outside, contact, collision, breaks, settle):
    """
    Return the :class:`Episode` s of watched states: runs above a contact level.

    ``outside (N, n)``: ``|r| - band``; ``contact``, ``collision (N, n)``: the levels at each
    state.  ``breaks (N - 1,)``: where the watched states skip unsettled ones (an episode never
    spans them).  Runs less than ``settle`` s apart (the observer's time constant) are one.
    """
    over = outside > contact
    level = np.where((outside > collision).any(axis=1), COLLISION,
                     np.where(over.any(axis=1), CONTACT, 0))
    active = level > 0
    cut = np.r_[True, breaks, True]             # before each state, and after the last
    starts = np.flatnonzero(active & (cut[:-1] | ~np.r_[False, active[:-1]]))
    ends = np.flatnonzero(active & (cut[1:] | ~np.r_[active[1:], False]))
    # a residual decaying through a level crosses it back and forth on its noise: one episode,
    # while the next run starts within a time constant of the last's end, no break between
    joined = [k for k in range(1, len(starts)) if t[starts[k]] - t[ends[k - 1]] < settle
              and not breaks[ends[k - 1]:starts[k]].any()]
    starts, ends = np.delete(starts, joined), np.delete(ends, [k - 1 for k in joined])
    episodes = []
    for a, b in zip(starts, ends):
        run = slice(a, b + 1)
        joints = np.flatnonzero(over[run].any(axis=0))
        episodes.append(Episode(float(t[a]), float(t[b]), int(level[run].max()),
                                {model.joint_names[j]: float(outside[run, j].max())
                                 for j in joints}))
    return episodes
