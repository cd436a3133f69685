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
A node's process and the garbage collector: what a load leaves is frozen, wherever it came from.

A node freezes its start-up heap (``process.settle_garbage``), so that a full collection in the
loop walks only what serving made.  A model that came on ``/robot_description`` arrived after
that freeze: its load's objects (~90,000 in a fresh process) stayed for the next full collection
to walk, 20-75 ms with the GIL held, once, at random in the first seconds of commanding (a
10 s run on TALOS's arm stalled 99 ms, and the arm fell).  Counted here, not timed: the objects
a full collection would walk once the model is taken.
"""

import os
import subprocess
import sys

import pytest

pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; dev.py '
                    'test installs the PyPI wheels)')

#: What a full collection may still walk once a model is taken: the few objects the callback
#: itself holds (a load leaves tens of thousands in a fresh process).
LEFT = 1000

#: A fresh process, as a node's: its imports, the node made without a model, the start-up
#: frozen, then a URDF heard on the topic; it prints how many objects a full collection walks.
HEARING = """
import gc, sys
sys.path.insert(0, {test!r})
from manipulator_dynamics import robots
from manipulator_dynamics.nodes import model_source, process
from manipulator_dynamics.nodes.{module} import {node}
from rosutil import in_process
from std_msgs.msg import String
if sys.argv[1] == 'unsettled':
    model_source.settle_what_loaded = lambda: None
with open(robots.path('demo_arm')) as f:
    urdf = f.read()
with in_process({node}, controller_name='-', stale_after=0.0) as node:
    assert node.source.model is None, 'the model must come on the topic, after the freeze'
    process.settle_garbage()
    node.source._on_description(String(data=urdf))
    assert node.source.model is not None
    print(len(gc.get_objects()))
"""


def tracked_after_hearing(module, node, how='settled'):
    """Run :data:`HEARING` for ``node`` of ``module``; return the objects left to walk."""
    test = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = HEARING.format(test=test, module=module, node=node)
    result = subprocess.run([sys.executable, '-c', script, how], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[-1])


@pytest.mark.parametrize('module, node', [('dynamics_node', 'DynamicsNode'),
                                          ('trajectory_node', 'TrajectoryNode')])
def test_a_model_heard_after_the_start_leaves_nothing_for_a_collection_in_the_loop(module,
                                                                                   node):
    left = tracked_after_hearing(module, node)
    assert left < LEFT, f'{left} objects for the next full collection to walk'


def test_without_settling_the_load_a_collection_would_walk_it():
    # the check above can fail: the same path with the load left unfrozen
    left = tracked_after_hearing('dynamics_node', 'DynamicsNode', 'unsettled')
    assert left > 10 * LEFT, left
