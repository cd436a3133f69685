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
``/diagnostics`` over DDS, read as rqt_robot_monitor reads it: the level, message and values.

One dynamics_node goes through the cases in turn: no model, waiting for the controller, an
order mismatch, commanding, stale states, clamping.  Each WARN or ERROR is checked against the
node's log (/rosout) at the same level.
"""

import re

import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest

pytest.importorskip('rclpy', reason='the node tests need rclpy (pip install rclpy)')
pytest.importorskip('diagnostic_msgs', reason='diagnostic_msgs (pip install ros-diagnostic-msgs)')

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402, I100
from rcl_interfaces.msg import Log  # noqa: E402, I100
from rclpy.duration import Duration  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import String  # noqa: E402, I100

from test_nodes_dynamics import LATCHED, state  # noqa: E402, I100

ARM = robots.path('demo_arm')
OK, WARN, ERROR = 0, 1, 2
LOG_LEVEL = {WARN: Log.WARN, ERROR: Log.ERROR}


class Monitor:
    """The statuses of one node on /diagnostics, and its log."""

    def __init__(self, client, node):
        self.client, self.node = client, node
        self.arrays = client.listen(DiagnosticArray, '/diagnostics', 100)
        self.logs = client.listen_log()

    def statuses(self):
        return [s for a in self.arrays for s in a.status if s.name.startswith(self.node + ':')]

    def wait(self, level, words, what, timeout=30.0):
        """Wait for a status at ``level`` whose message has ``words``; return its values."""
        def found():
            return [s for s in self.statuses()[-3:] if s.level[0] == level and
                    words in s.message]
        self.client.wait(found, timeout, f'{what}: {words} ({("OK", "WARN", "ERROR")[level]})'
                         f'; last: {[(s.level, s.message) for s in self.statuses()[-2:]]}')
        status = found()[-1]
        return status, {v.key: v.value for v in status.values}

    def logged(self, level, pattern):
        """Assert the node logged ``pattern`` (a regular expression) at ``level``."""
        self.client.wait(lambda: any(m.name == self.node and m.level == LOG_LEVEL[level] and
                                     re.search(pattern, m.msg) for m in self.logs),
                         30.0, f'the log line {pattern!r}')


def low_limit_urdf(joint, limit):
    """Return the demo arm's URDF text with ``joint``'s effort limit set to ``limit``."""
    with open(ARM) as f:
        urdf = f.read()
    element = re.search(rf'<joint name="{joint}".*?</joint>', urdf, re.S).group(0)
    return urdf.replace(element, re.sub(r'effort="[^"]*"', f'effort="{limit}"', element))


def test_diagnostics_say_each_case_at_its_level_with_the_logs(client, processes):
    """
    No model, waiting, mismatch, commanding, stale, clamping: each at its level, with values.

    The node takes its model from /robot_description, so that one run goes through them all.
    """
    model = md.load_model(ARM)
    names, q = list(model.joint_names), np.linspace(-0.5, 0.5, model.n)
    monitor = Monitor(client, 'dynamics_node')
    processes('dynamics_node', 'mode:=gravity_compensation')
    pub = client.publisher(JointState, '/joint_states', 10)
    stale = {'on': False}

    def send():
        stamp = client.node.get_clock().now()
        if stale['on']:
            stamp = stamp - Duration(seconds=2.0)
        pub.publish(state(names, q, qd=np.zeros(model.n), stamp=stamp))
    client.node.create_timer(0.01, send)

    status, values = monitor.wait(WARN, 'no robot model yet', 'no model')
    assert values['model'] == 'none' and values['lifecycle'] == 'active', values
    monitor.logged(WARN, 'joint_states received but no robot model yet')

    description = client.publisher(String, '/robot_description', LATCHED)
    with open(ARM) as f:
        description.publish(String(data=f.read()))
    status, values = monitor.wait(WARN, 'waiting for effort_controller', 'no controller')
    assert values['controller'] == 'waiting for effort_controller', values
    assert values['model'] == 'demo_arm (7 joints)', values
    assert values['model source'] == 'topic robot_description', values
    assert status.hardware_id == 'demo_arm'
    monitor.logged(WARN, "waiting for controller /effort_controller to answer for its 'joints'")

    wrong = client.controller(names[::-1])
    status, values = monitor.wait(ERROR, 'order mismatch', 'a controller in another order')
    assert values['controller'].startswith('order mismatch: controller /effort_controller'), values
    monitor.logged(ERROR, "controller /effort_controller's joints are .* but the commands' order")
    client.remove(wrong)

    client.controller(names)
    status, values = monitor.wait(OK, 'commanding', 'the controller in the order')
    assert status.message == 'commanding', status.message
    assert float(values['states in (Hz)']) > 20 and float(values['commands out (Hz)']) > 20
    p50 = float(values['latency p50 (ms, DDS receipt to command)'])
    p99 = float(values['latency p99 (ms, DDS receipt to command)'])
    assert 0 < p50 <= p99 < 1000, values
    assert values['last error'].startswith("controller /effort_controller's joints are"), values

    stale['on'] = True
    status, values = monitor.wait(WARN, 'stale joint states dropped', 'states 2 s old')
    assert int(next(v for k, v in values.items() if k.startswith('stale states'))) > 0
    assert float(values['commands out (Hz)']) == 0, values
    monitor.logged(WARN, r'dropped joint_states: joint_states of .* s old, more than stale_after')
    stale['on'] = False

    limited = names[1]
    description.publish(String(data=low_limit_urdf(limited, 1.0)))
    status, values = monitor.wait(WARN, 'commands clamped to the URDF effort limits', 'clamping')
    assert int(next(v for k, v in values.items() if k.startswith('clamped commands'))) > 0
    monitor.logged(WARN, f'efforts clamped to the URDF limits: {limited}')


def test_a_managed_node_says_its_state_and_a_failed_configure(client, processes):
    """Unconfigured is OK (a supervisor holds it); a failed configure is an ERROR saying why."""
    monitor = Monitor(client, 'trajectory_node')
    processes('trajectory_node', 'managed:=true')
    status, values = monitor.wait(OK, 'unconfigured (managed', 'a managed node')
    assert values['lifecycle'] == 'unconfigured' and values['model'] == 'none', values
    life = client.lifecycle('/trajectory_node')
    assert not life.change('configure')[0]
    status, values = monitor.wait(ERROR, 'configure failed: no robot model', 'failed')
    monitor.logged(ERROR, 'configure failed: no robot model')
    assert values['last error'].startswith('configure failed: no robot model'), values


def test_every_other_node_reports_once_a_second(client, processes):
    """sim_node, base_params_node, flexible_trajectory_node: OK while they serve, their model."""
    names = ('sim_node', 'base_params_node', 'flexible_trajectory_node')
    monitors = {name: Monitor(client, name) for name in names}
    for name in names:                                  # started together: one wait for all
        processes(name, *(() if name == 'flexible_trajectory_node' else (f'urdf_path:={ARM}',)))
    for name, monitor in monitors.items():
        status, values = monitor.wait(OK, '', f'{name} serving')
        assert values['model'] != 'none', (name, values)
    first = {name: len(m.statuses()) for name, m in monitors.items()}
    client.spin(2.5)
    for name, monitor in monitors.items():
        assert 2 <= len(monitor.statuses()) - first[name] <= 3, name       # 1 Hz
