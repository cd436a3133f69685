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

"""The identification demo, as a user runs it: the simulated arm identified from its motion."""

import importlib.util

import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs it)')
from rosutil import run_demo  # noqa: E402, I100


def test_identification_demo_identifies_the_simulated_arm(tmp_path):
    """
    ``python3 -m manipulator_dynamics.demo --identify``: sim_node, trajectory_node, DDS.

    Exit 0 means the identified model predicts a validation motion's torques within 5 % RMS on
    every joint and its parameters pass every physical check; the plot is written.
    """
    plot = tmp_path / 'identification.png'
    printed = run_demo(tmp_path, '--identify', '--duration', '10', '--plot', str(plot))
    assert 'every check passed' in printed, printed
    assert 'validation motion: RMS torque error' in printed
    if importlib.util.find_spec('mujoco') is not None:       # the test extra installs it
        assert 'with MuJoCo' in printed, printed              # an independent plant
    assert plot.stat().st_size > 10000
