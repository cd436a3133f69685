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

"""The demos' loop: its waits allow a slow start, and end at once when a node has died."""

import time

import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')


def test_a_node_that_dies_ends_the_wait_at_once_with_its_last_words(capsys):
    """
    The wait for the nodes allows minutes (a busy machine), but not for a node that has exited.

    sim_node with a rate of 0 stops on its parameter: the demo says so within seconds, not
    after the 15-minute allowance.
    """
    from manipulator_dynamics.demo import loop as _loop
    loop = _loop.Loop([('sim_node', {'rate': '0.0'}), ('trajectory_node', {})])
    started = time.monotonic()
    try:
        with pytest.raises(RuntimeError, match=r'the nodes to start .*exited: sim_node \(exit '
                           r'code [1-9].*parameter rate: must be within'):
            loop.close(['joint1'], [0.0])
    finally:
        loop.stop()
    assert time.monotonic() - started < _loop.START / 2     # did not sit out the allowance


def test_a_loop_that_cannot_start_leaves_no_node_running(monkeypatch):
    """A node that cannot be started ends the ones started before it: none is left orphaned."""
    from manipulator_dynamics.demo import loop as _loop
    started, start = [], _loop.start_node

    def recorded(name, params):
        started.append(start(name, params))
        return started[-1]
    monkeypatch.setattr(_loop, 'start_node', recorded)
    with pytest.raises(FileNotFoundError, match='not_a_node'):
        _loop.Loop([('trajectory_node', {}), ('not_a_node', {})])
    assert len(started) == 1 and started[0].poll() is not None
