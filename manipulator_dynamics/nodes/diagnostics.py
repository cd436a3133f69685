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
``/diagnostics``: a node's health once a second, as diagnostic_updater publishes it.

rqt_robot_monitor and diagnostic_aggregator read diagnostic_msgs/DiagnosticArray on
``/diagnostics`` (absolute: one topic for the whole robot).  Each node publishes one
DiagnosticStatus named ``<node name>: <what it does>``, its ``hardware_id`` the robot model's
name, every ``PERIOD`` seconds of the steady clock (a paused simulation does not stop it):

* ``level``: the worst of what the node says in :meth:`Report.say` (its conditions: no model,
  waiting for the controller, an order mismatch, stale states in the window, clamped efforts)
  and of the warnings and errors it logged in the window (the same words as its log, so the
  two never disagree); ``message``: what was said at that level, joined by ``"; "``;
* ``values``: what the node adds (key, value) after the common ones: the lifecycle state, the
  model and its source, the last error logged (and when).

No maintained Python diagnostic_updater installs from PyPI, so this is the small part of it
that the nodes need.  A node's serving path pays nothing for it: the counts it keeps anyway
are read once a second; :class:`Window` is what it adds per state (one append).
"""

import time

import numpy as np

OK, WARN, ERROR = 0, 1, 2
LEVELS = ('OK', 'WARN', 'ERROR')
#: seconds between two reports (diagnostic_updater's default period)
PERIOD = 1.0


class Report:
    """One status as a node builds it: the worst level said, its messages, the key-values."""

    def __init__(self):
        self.level, self.messages, self.values = OK, [], []

    def say(self, level, message):
        """Add a problem (or, at OK, a note) at ``level``; the worst level leads the message."""
        if level > self.level:
            self.level, self.messages = level, []
        if level == self.level and message not in self.messages:
            self.messages.append(message)

    def add(self, key, value):
        """Add a key-value (the value as text; floats with 4 significant digits)."""
        if isinstance(value, float):
            value = f'{value:.4g}'
        self.values.append((key, str(value)))

    @property
    def message(self):
        return '; '.join(self.messages) or 'OK'


class Window:
    """The durations of the last report's window and how far a node's counts moved in it."""

    def __init__(self):
        self.samples = []
        self.since = time.monotonic()
        self.counts = {}                  # the totals at the last take

    def record(self, ns):
        """Add one duration (ns): a state's latency in the node."""
        self.samples.append(ns)

    def take(self, counts):
        """
        Return ``(seconds, durations (ns), moved)`` since the last take; start anew.

        ``counts``: the node's totals now (``{name: count}``); ``moved``: each one's increase.
        """
        now = time.monotonic()
        seconds, samples = now - self.since, self.samples
        moved = {k: v - self.counts.get(k, 0) for k, v in counts.items()}
        self.since, self.samples, self.counts = now, [], dict(counts)
        return seconds, samples, moved


#: The counts of a commanding node's window, as its values name them.
COUNTED = (('superseded', 'superseded states'), ('stale', 'stale states'),
           ('clamped', 'clamped commands'))


def stream_values(report, seconds, moved, samples, what):
    """
    Add a commanding node's window to ``report``: its rates, its latency, its counts.

    ``moved``: :meth:`Window.take`'s (``read`` and ``sent`` states and commands, and those of
    :data:`COUNTED` the node keeps); ``samples``: its latencies (ns), measured as ``what`` says.
    """
    report.add('states in (Hz)', moved['read'] / seconds)
    report.add('commands out (Hz)', moved['sent'] / seconds)
    if samples:
        p50, p99 = np.percentile(np.asarray(samples, dtype=float) * 1e-6, [50, 99])
        report.add(f'latency p50 (ms, {what})', float(p50))
        report.add(f'latency p99 (ms, {what})', float(p99))
    else:
        report.add(f'latency p50 (ms, {what})', '-')
        report.add(f'latency p99 (ms, {what})', '-')
    for key, name in COUNTED:
        if key in moved:
            report.add(f'{name} (last {seconds:.3g} s)', moved[key])


def stream_warnings(report, moved):
    """Say the window's stale states and clamped commands (WARN, as the log warns of each)."""
    if moved['stale']:
        report.say(WARN, f'{moved["stale"]} stale joint states dropped')
    if moved['clamped']:
        report.say(WARN, f'{moved["clamped"]} commands clamped to the URDF effort limits')


class Said:
    """
    The warnings and errors a node logged: the last error, and those of the current window.

    :class:`~manipulator_dynamics.nodes.logs.QuickLogger` (which every log line of the nodes goes
    through) hands each one to its node's ``said``.
    """

    def __init__(self):
        self.window = []                  # (level, text) logged since the last report
        self.last_error = None            # (wall time, text)

    def record(self, level, text):
        self.window.append((level, text))
        if level == ERROR:
            self.last_error = (time.time(), text)

    def take(self):
        window, self.window = self.window, []
        return window


class Diagnostics:
    """
    Publish ``node``'s status on ``/diagnostics`` every :data:`PERIOD` s.

    ``what`` names the status (``<node>: <what>``); ``diagnose(report, seconds)`` adds the node's
    own conditions and values (``seconds``: the window's length, for rates).  The node must have
    ``said`` (:class:`Said`), and may have ``source`` (a ModelSource) and ``lifecycle_state()``.
    """

    def __init__(self, node, what, diagnose):
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.clock import Clock, ClockType

        self.node, self.diagnose = node, diagnose
        self.name = f'{node.get_name()}: {what}'
        self.pub = node.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.timer = node.create_timer(PERIOD, self.publish,
                                       clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.last = None                   # the last status published (for tests and logs)

    def status(self):
        """Build the status now (and start the next window)."""
        node = self.node
        report = Report()
        state = node.lifecycle_state() if hasattr(node, 'lifecycle_state') else 'active'
        report.add('lifecycle', state)
        source = getattr(node, 'source', None)
        model = getattr(source, 'model', None)
        if source is not None:
            report.add('model', f'{model.name} ({model.n} joints)' if model is not None else
                       'none')
            report.add('model source', source.what or '-')
        self.diagnose(report)
        for level, text in node.said.take():
            report.say(level, text)
        error = node.said.last_error
        report.add('last error', '-' if error is None else
                   f'{error[1]} ({time.strftime("%H:%M:%S", time.localtime(error[0]))})')
        return report, '' if model is None else model.name

    def publish(self):
        from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

        report, hardware = self.status()
        status = DiagnosticStatus(level=bytes([report.level]), name=self.name,
                                  message=report.message, hardware_id=hardware,
                                  values=[KeyValue(key=k, value=v) for k, v in report.values])
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.pub.publish(msg)
        self.last = report
