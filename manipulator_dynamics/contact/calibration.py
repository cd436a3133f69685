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
Where the contact levels come from: as given, from an identification, or learnt from motion.

One policy for dynamics_node and for a log observed after the fact (:mod:`.replay`).  A level
given in N m is used as given.  Where one is ``auto``, an identification's ``contact_spread``
(the identified model's residual over logs the fit did not see:
:func:`.detection.spread_of_parameters`) sets it; without one, it is learnt from the first
seconds of free motion the observer sees once settled (:class:`Calibration`, by
:func:`.detection.motion_spread`'s rule: levels that follow the motion, at rest at least
:data:`.detection.FLOOR` of the largest effort), refused and learnt again where flawed
(:class:`Learning`, which the node and the replay both run).  :func:`resolve_thresholds` says
which, and why.
"""

from dataclasses import dataclass

import numpy as np
import yaml

from .detection import as_spread, FLOOR, motion_spread, spread_of_parameters, Thresholds, \
    thresholds, thresholds_from_spread
from .observer import STILL
from .._inputs import per_joint

#: States of a calibration kept whole; past them, every other one (the stride doubles): over
#: three minutes at 1 kHz, four arrays of them a few tens of MB.
CALIBRATION_KEPT = 200_000
#: A calibration is not used where gaps (intervals over :data:`GAP_PERIODS` of its median one)
#: hide more than this share of its time: a starved publisher's 10-100 ms every 0.2-1 s hides
#: about a tenth, which the observer rides through (the levels it learns are good); past a
#: quarter, most of what set the levels is what the states did not show.
GAP_SHARE = 0.25
GAP_PERIODS = 3.0
#: ... nor where a joint's spread exceeds this share of the largest torque the model says it
#: needed (``effort - r``) in the calibration: an error larger than all the model accounts for
#: is no model's error (friction and inertia off by 10-20 %, the realistic range, leave a
#: spread of a fifth of it at most), but the arm held or pushed, hitting something, a limit.
SPREAD_SHARE = 1.0
#: The growth of levels given in N m, the nodes' ``thresholds_<name>`` parameters and a
#: thresholds file's, in :class:`.detection.Thresholds`' order, and their units.
GROWTH = ('speed_growth', 'torque_growth', 'speed_from', 'torque_from')
GROWTH_UNITS = ('s/rad', '1/(N m)', 'rad/s', 'N m')


def parse_thresholds(value):
    """Return None for ``'auto'``, else the numbers of ``'5'`` or ``'[5, 4, 3]'`` (N m)."""
    if value.strip() == 'auto':
        return None
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        parsed = None
    numbers = parsed if isinstance(parsed, list) else [parsed]
    if not numbers or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                              for x in numbers):
        raise ValueError(f"must be 'auto', a number or a list of numbers (N m), got {value!r}")
    bad = [x for x in numbers if not (np.isfinite(x) and x > 0)]
    if bad:
        raise ValueError(f'thresholds must be finite numbers > 0 (N m), got {bad[0]}')
    return [float(x) for x in numbers]


def numbers(x):
    """Return per-joint values as text: one number where all are equal, else a list."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    return f'{x[0]:.4g}' if np.all(x == x[0]) else '[' + ', '.join(f'{v:.4g}' for v in x) + ']'


def said_spread(spread):
    """Return a :class:`.detection.Spread` in words: its rest and what it grows with."""
    spread = as_spread(spread)
    text = f'spread {numbers(spread.rest)} N m'
    if spread.growing():
        text += (f' within the motion seen, + {numbers(spread.speed)} N m per rad/s beyond '
                 f'{numbers(spread.speed_from)} rad/s and {numbers(spread.torque)} of the '
                 f"model's torque beyond {numbers(spread.torque_from)} N m")
    return text


def levels_from_spread(model, spread, contact=None, collision=None):
    """
    Return the :class:`.detection.Thresholds` a spread sets, those given (N m) kept.

    ``contact``, ``collision``: None (``auto``: from the spread) or N m, one or per joint.
    Both ``auto``: levels that follow the motion as the spread does; one given in N m: both
    constant (a level given holds at every state, and the other must stay above or below it).
    ``ValueError`` naming the joint whose spread or level cannot give one.
    """
    learnt = thresholds_from_spread(model, spread)
    if contact is None and collision is None:
        return learnt
    return thresholds(model, learnt.contact if contact is None else contact,
                      learnt.collision if collision is None else collision)


def resolve_thresholds(model, contact, collision, gain, identified=None, growth=None):
    """
    Return ``(levels, how, warning)``: the contact levels to start with, or None to learn them.

    ``contact``, ``collision``: None (``auto``) or N m, as :func:`parse_thresholds` gives them;
    ``gain``: the observer's, which an identification's spread must have been measured at;
    ``identified``: identified parameters (a YAML path, text or mapping) whose
    ``contact_spread`` sets the ``auto`` levels, or None; ``growth``: ``(speed, torque,
    speed_from, torque_from)``, what levels given in N m grow by and from where
    (:class:`.detection.Thresholds`: one value or one per joint each), or None (constant).
    ``levels``: :class:`Thresholds`, or None where they are to be learnt from free motion
    (:class:`Calibration`); ``how``: where
    they come from, in words; ``warning``: why the identification's spread was not used, or
    None.  ``ValueError`` where the levels given, or those the spread sets, are not levels (a
    joint named).
    """
    if contact is not None and collision is not None:
        levels = thresholds(model, contact, collision)
        if growth is None or not np.any(growth[0]) and not np.any(growth[1]):
            return levels, 'as given', None
        growth = [per_joint(model, x, f'thresholds_{what}', unit, positive=False)
                  for x, what, unit in zip(growth, GROWTH, GROWTH_UNITS)]
        return levels._replace(**dict(zip(Thresholds._fields[2:], growth))), \
            'as given, growing with the motion', None
    if identified:
        try:
            spread = spread_of_parameters(model, identified, gain)
        except ValueError as e:
            return None, 'learnt from free motion', str(e)
        if spread is not None:
            where = f'the identification ({identified})' if isinstance(identified, str) and \
                '\n' not in identified else 'the identification'
            return (levels_from_spread(model, spread, contact, collision),
                    f'learnt from {where}, {said_spread(spread)}', None)
    return None, 'learnt from free motion', None


class Calibration:
    """
    The spread of free motion learnt state by state, as the observer settles and the robot moves.

    :meth:`add` takes each settled state in turn and says when ``seconds`` of them had some
    joint moving (at :data:`.observer.STILL` or faster); :meth:`result` then gives the
    :class:`.detection.Spread` by :func:`.detection.motion_spread` (the moments left out, with
    the states' stamps), at rest at least :data:`.detection.FLOOR` of the largest effort seen.
    Past :data:`CALIBRATION_KEPT` states, every other one is kept (the stride doubles): a long
    calibration stays a few tens of MB.
    """

    def __init__(self, model, seconds):
        self.model, self.seconds = model, float(seconds)
        self.kept = {'r': [], 'band': [], 'qd': [], 'effort': []}
        self.stamps = []
        self.count, self.stride = 0, 1
        self.effort, self.motion = 0.0, np.zeros(model.n)
        self.needed = np.zeros(model.n)         # each joint's largest |effort - r| seen
        self.moved, self.at = 0.0, None

    def add(self, t, stamp, r, qd, effort, band=None):
        """
        Take one settled state; return whether the calibration has its seconds of motion.

        ``t``: the observer's time (s), which measures the motion; ``stamp``: the state's own
        (s), which the moments are told by; ``r``: the residual, ``band`` its dry-friction
        band (None: none), ``qd`` the velocities, ``effort`` what the joints applied.
        """
        self.count += 1
        if self.count % self.stride == 0:
            kept = self.kept
            kept['r'].append(np.array(r, dtype=float))
            kept['band'].append(np.zeros(self.model.n) if band is None
                                else np.array(band, dtype=float))
            kept['qd'].append(np.array(qd, dtype=float))
            kept['effort'].append(np.array(effort, dtype=float))
            self.stamps.append(float(stamp))
            if len(self.stamps) >= CALIBRATION_KEPT:
                self.kept = {key: x[1::2] for key, x in kept.items()}
                self.stamps = self.stamps[1::2]
                self.stride *= 2
        speed = np.abs(qd)
        np.maximum(self.motion, speed, out=self.motion)
        self.effort = max(self.effort, float(np.abs(effort).max()))
        np.maximum(self.needed, np.abs(np.subtract(effort, r)), out=self.needed)
        if self.at is not None and speed.max() >= STILL:
            self.moved += t - self.at
        self.at = t
        return self.done

    @property
    def done(self):
        """Whether ``seconds`` of motion are in."""
        return self.moved >= self.seconds

    def still_joints(self):
        """Return the joints that never moved (under :data:`.observer.STILL`) so far."""
        return [j for j, v in zip(self.model.joint_names, self.motion) if v < STILL]

    def result(self):
        """Return ``(spread, moments)``: the :class:`.detection.Spread`, its moments left out."""
        r, band, qd, effort = (np.array(self.kept[key]) for key in ('r', 'band', 'qd', 'effort'))
        spread, moments = motion_spread(self.model, r, np.array(self.stamps), band=band, qd=qd,
                                        tau=effort - r)
        return spread.at_least(FLOOR * self.effort), moments

    def flaws(self, spread):
        """
        Return why levels from ``spread`` (:meth:`result`'s) must not be used: [] if none.

        Gaps that hid more than :data:`GAP_SHARE` of the calibration's time, and joints whose
        spread at rest, or at their fastest, exceeds :data:`SPREAD_SHARE` of the largest torque
        the model says they needed in it (above the floor every joint has), each named with its
        figures.
        """
        said = []
        stamps = np.array(self.stamps)
        if len(stamps) > 2:
            dt = np.diff(stamps)
            span = stamps[-1] - stamps[0]
            hidden = dt[dt > GAP_PERIODS * np.median(dt)].sum()
            if span > 0 and hidden > GAP_SHARE * span:
                said.append(f'gaps in the joint states hid {hidden:.3g} s of its {span:.3g} s '
                            f'(more than {GAP_SHARE:.0%})')
        spread = as_spread(spread)
        floor = FLOOR * self.effort
        largest = spread.rest           # within the motion it saw: growth is beyond it
        wild = [j for j in range(self.model.n)
                if largest[j] > SPREAD_SHARE * self.needed[j] and largest[j] > floor]
        if wild:
            said.append("a spread beyond all the model says the joint needed, no model's error "
                        '(the arm held or pushed, hitting something, a limit): '
                        + ', '.join(f'{self.model.joint_names[j]} {largest[j]:.3g} N m against '
                                    f'{self.needed[j]:.3g}' for j in wild))
        return said


@dataclass(frozen=True)
class Learnt:
    """
    Levels a :class:`Learning` learnt: what they are, how they were set, what to say of them.

    ``span``: the stamps (s) of the first and the last state they were learnt from; ``still``:
    the joints that never moved in it; ``moments``: what the spread left out.
    """

    levels: Thresholds
    how: str
    span: tuple
    still: list
    moments: list

    def warnings(self):
        """Return what the levels' user must be warned of (joints the motion never moved)."""
        if not self.still:
            return []
        return [f'joints {", ".join(self.still)} did not move during the calibration (under '
                f'{STILL:g} rad/s): their levels hold at rest, and motion may cross them']


@dataclass(frozen=True)
class Refused:
    """Levels a :class:`Learning` learnt and may not use (:meth:`Calibration.flaws`), said."""

    text: str


class Learning:
    """
    The policy by which ``auto`` levels are learnt, for dynamics_node and a log's replay alike.

    A :class:`Calibration` over the settled states of free motion, one at a time (:meth:`add`).
    Levels its flaws refuse are said (a :class:`Refused`) and learnt again from the next state;
    :meth:`restart` (the observer restarted: a stall cut the motion in two) starts again.  The
    levels given in N m (``given``: contact, collision, each None for ``auto``) stay as given.
    """

    def __init__(self, model, seconds, given=(None, None)):
        self.model, self.seconds, self.given = model, float(seconds), tuple(given)
        self.restart()

    def restart(self):
        """Forget what was learnt so far: the next state starts the calibration."""
        self.calibration, self.began = Calibration(self.model, self.seconds), None

    @property
    def started(self):
        """Whether a state went into the calibration under way."""
        return self.began is not None

    @property
    def moved(self):
        """Return the seconds of free motion the calibration under way has seen."""
        return self.calibration.moved

    def add(self, t, stamp, r, qd, effort, band=None):
        """
        Take one settled state (as :meth:`Calibration.add`); return what it ends, if anything.

        None while learning; a :class:`Learnt` once ``seconds`` of motion set levels that may
        be used; a :class:`Refused` where they may not (learning starts again).  ValueError
        where the spread cannot make levels with the ones given (:func:`levels_from_spread`).
        """
        if self.began is None:
            self.began = float(stamp)
        learner = self.calibration
        if not learner.add(t, stamp, r, qd, effort, band):
            return None
        spread, moments = learner.result()
        where = f'{learner.moved:.3g} s of free motion'
        span = (self.began, float(stamp))
        flaws = learner.flaws(spread)
        if flaws:
            self.restart()
            return Refused(f'contact thresholds not used, learnt from {where} ({span[0]:.3f}-'
                           f'{span[1]:.3f} s) with ' + '; '.join(flaws) + ': learning them '
                           'again')
        levels = levels_from_spread(self.model, spread, *self.given)
        return Learnt(levels, f'learnt from {where}, {said_spread(spread)}', span,
                      learner.still_joints(), moments)


def thresholds_yaml(model, levels, gain, how, path=None):
    """
    Return (and write to ``path``) a ROS 2 parameters file that gives dynamics_node these levels.

    ``contact_thresholds`` and ``collision_thresholds`` per joint in N m, in ``model``'s joint
    order (within the motion seen), what they grow by beyond it (``thresholds_speed_growth``,
    ``thresholds_torque_growth``, ``thresholds_speed_from``, ``thresholds_torque_from``:
    :class:`.detection.Thresholds`), and the ``observer_gain``
    they hold at, for ``--ros-args --params-file`` (every node:
    ``/**``) or ``ros2 param load``: the node then starts with them as given, nothing to learn.
    ``how``: where they came from, said in the header with the joints.  Numbers are written to
    the last digit: read back, they are the levels.
    """
    def listed(x):
        return '[' + ', '.join(repr(float(v)) for v in x) + ']'
    gains = np.broadcast_to(np.asarray(gain, dtype=float), (model.n,))
    header = (f'# contact levels of {model.name}, {how}\n'
              f'# joints: {", ".join(model.joint_names)}\n')
    text = header + yaml.safe_dump({'/**': {'ros__parameters': {
        'contact_thresholds': listed(levels.contact),
        'collision_thresholds': listed(levels.collision),
        **{f'thresholds_{name}': [float(x) for x in (np.zeros(model.n) if values is None
                                                     else values)]
           for name, values in zip(GROWTH, levels[2:])},
        'observer_gain': [float(g) for g in gains]}}}, sort_keys=False, width=1000)
    if path is not None:
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
    return text
