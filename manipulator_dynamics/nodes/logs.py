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

"""Logging from a control loop: without a lookup per record, and throttled by reason."""

import contextlib
import sys
import warnings

import rclpy
import rclpy.logging


@contextlib.contextmanager
def warnings_logged(log, prefix=''):
    """
    Run the block with Python's warnings written to ``log`` (``log.warning``), not to stderr.

    A warning of the library (an inertia it doubts, links given MuJoCo's least mass) is then in
    the node's log and ``/rosout``, where a launched node's user looks; every one, even when the
    block raises.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            yield
        finally:
            for w in caught:
                log.warning(f'{prefix}{w.message}')


class QuickLogger:
    """
    A node's logger for the serving path: rclpy's output (console, ``/rosout``) in microseconds.

    rclpy's logger finds its caller with ``inspect.getframeinfo``, which reads the caller's source
    file: ~3 ms a call on this machine, ~50 ms the first time, and as much again for a call its
    ``throttle_duration_sec`` suppresses.  A 1 kHz loop loses cycles to every line it logs.  This
    one names the caller from the frame alone and hands the record to rcutils as rclpy's logger
    does in the end; where that entry point is missing (another rclpy), it falls back to rclpy's
    logger.
    """

    def __init__(self, node):
        self.node = node
        self.logger = node.get_logger()
        try:
            from rclpy.impl.implementation_singleton import rclpy_implementation
            self._emit = rclpy_implementation.rclpy_logging_rcutils_log
        except (ImportError, AttributeError):
            self._emit = None

    def _log(self, severity, text):
        if severity >= rclpy.logging.LoggingSeverity.WARN:
            said = getattr(self.node, 'said', None)         # /diagnostics says it too
            if said is not None:
                said.record(2 if severity >= rclpy.logging.LoggingSeverity.ERROR else 1, text)
        if not self.logger.is_enabled_for(severity):
            return
        if self._emit is None:
            self.logger.log(text, severity)
            return
        frame = sys._getframe(2)                      # whoever called info(), warning(), ...
        self._emit(severity, self.logger.name, text, frame.f_code.co_name,
                   frame.f_code.co_filename, frame.f_lineno)

    def info(self, text):
        self._log(rclpy.logging.LoggingSeverity.INFO, text)

    def warning(self, text):
        self._log(rclpy.logging.LoggingSeverity.WARN, text)

    def error(self, text):
        self._log(rclpy.logging.LoggingSeverity.ERROR, text)


class Throttled:
    """
    Warnings at most once per ``period`` seconds for each kind of problem.

    Also the log a runtime object says what it does through (``info``, ``error``, ``warn``:
    :mod:`..runtime.simulator`), all three in microseconds.

    rclpy's own throttle is per call site: one kind of bad input would hide all the others (and
    it costs a full rclpy log call even when it suppresses one).
    """

    def __init__(self, node, period=1.0):
        import time
        self.log, self.period, self.last = QuickLogger(node), period, {}
        self.clock = time.monotonic

    def info(self, text):
        """Log ``text`` (not throttled), as :class:`QuickLogger` does."""
        self.log._log(rclpy.logging.LoggingSeverity.INFO, text)

    def error(self, text):
        """Log ``text`` at error level, not throttled, as :class:`QuickLogger` does."""
        self.log._log(rclpy.logging.LoggingSeverity.ERROR, text)

    def warn(self, kind, text):
        now = self.clock()
        if now - self.last.get(kind, -1e9) >= self.period:
            self.last[kind] = now
            self.log._log(rclpy.logging.LoggingSeverity.WARN, text)
