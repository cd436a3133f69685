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

"""The contact demos as a user runs them: ``python3 dev.py demo --push`` and ``--contact``."""

import re

import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs it)')
from rosutil import run_demo  # noqa: E402, I100


def test_contact_demo_finds_the_push_in_time_and_nothing_else(tmp_path):
    """
    ``python3 -m manipulator_dynamics.demo --push``: the push found, its torques estimated.

    Exit 0 means the push was detected within 3 time constants and a state, and nothing was
    before it.  What it prints is held too: the estimate within 5 % of the truth (the lag on a
    moving arm), the levels learnt, the collision re-armed with its peak.
    """
    plot = tmp_path / 'contact.png'
    printed = run_demo(tmp_path, '--push', '--pace', '0', '--plot', str(plot))
    delay = float(re.search(r'detected after ([\d.]+) ms', printed).group(1))
    share = float(re.search(r'largest error [\d.e+-]+ N m \(([\d.e+-]+) % of the peak\)',
                            printed).group(1))
    assert delay <= 3 * 20 + 4 and share <= 5.0, printed
    assert 'false alarms before the push: 0\n' in printed
    # a push that crosses both levels within a state says collision at once (the levels learnt
    # on |r| - band, at the floor of a model as exact as the plant's)
    said = re.search(r'~/contact said: ([a-z, ]+)\n', printed).group(1)
    assert said in ('free, contact, collision, free', 'free, collision, free'), said
    assert 'contact thresholds learnt from' in printed
    assert '/dynamics_node/rearm: re-armed after the collision at' in printed
    assert plot.stat().st_size > 10000


def test_collision_demo_runs_the_arm_into_the_box_and_stops_it(tmp_path):
    """
    ``python3 -m manipulator_dynamics.demo --contact``: the arm runs into a box and stops.

    sim_node's box, trajectory_node's stop.  Exit 0 means the collision level came within 60
    ms of the first touch, the force 300 ms after it was at most a fifth of its peak, and every
    joint was under 0.02 rad/s 0.5 s after the detection.  What it prints is held too.
    """
    pytest.importorskip('mujoco', reason="the box is MuJoCo's contact (pip install mujoco)")
    plot = tmp_path / 'collision.png'
    printed = run_demo(tmp_path, '--contact', '--pace', '0', '--plot', str(plot))
    delay = float(re.search(r'collision level at [\d.]+ s: (-?\d+) ms after the first touch',
                            printed).group(1))
    assert 0 <= delay <= 60, printed
    assert 'contact thresholds learnt from' in printed
    assert re.search(r'~/reaction said: .*stop since [\d.]+ s \(collision at', printed), printed
    assert 'trajectory abandoned at' in printed
    assert plot.stat().st_size > 10000


def test_two_demos_at_once_are_refused_by_name(capsys):
    from manipulator_dynamics.demo.__main__ import main
    with pytest.raises(SystemExit) as ended:
        main(['--contact', '--push'])
    assert ended.value.code == 2
    assert '--contact and --push are 2 demos: one at a time' in capsys.readouterr().err
