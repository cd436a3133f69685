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
The console scripts of the nodes: quiet about a Ctrl-C that comes while a node is still loading.

A node's module imports numpy, numba, rclpy and the library (about half a second) before its
``main()`` can install its signal handling; a Ctrl-C in that window (a person who starts
``ros2 launch`` and stops it at once) printed a KeyboardInterrupt traceback and died with exit
code -2; one that landed inside rclpy's C extension import came out as "ImportError:
initialization failed".  These entry points make SIGINT and SIGTERM end the process at once with
exit code 0 until the node's own handling (``process.ros_init``) takes over, then import what
the node loads (:data:`PRELOADED`) and the node, and run it.
"""

import importlib
import os
import signal
import sys


def _leave(signum, frame):
    """End the process now, with exit code 0: nothing of the node runs yet that must be undone."""
    # os._exit, not SystemExit: the signal can land inside a C extension's import (rclpy's
    # pybind11 module), which turns a SystemExit raised there into "ImportError: initialization
    # failed" and a traceback; code that catches BaseException would swallow it altogether.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def quiet_until_ready():
    """Make SIGINT and SIGTERM end the process quietly until ``process.ros_init`` takes over."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _leave)


#: What every node imports on its way to its first model, loaded while a signal still ends the
#: process at once: the URDF parser's C extension (lxml).  Loaded later, inside the node's own
#: signal handling, a Ctrl-C that landed in an extension's initialisation crashed the process
#: (a segmentation fault, exit -11, seen once in
#: test_interrupts_while_a_node_starts_end_it_cleanly, when the parser was yourdfpy with trimesh).
PRELOADED = ('lxml.etree',)


def _run(module, function='main'):
    quiet_until_ready()
    for name in PRELOADED:
        importlib.import_module(name)
    return getattr(importlib.import_module(f'manipulator_dynamics.nodes.{module}'), function)()


def dynamics_node():
    """Console script ``dynamics_node``."""
    return _run('dynamics_node')


def trajectory_node():
    """Console script ``trajectory_node``."""
    return _run('trajectory_node')


def sim_node():
    """Console script ``sim_node``."""
    return _run('sim_node')


def base_params_node():
    """Console script ``base_params_node``."""
    return _run('base_params_node')


def flexible_trajectory_node():
    """Console script ``flexible_trajectory_node``."""
    return _run('flexible_trajectory_node')


def node_container():
    """Console script ``node_container``: several nodes in one process."""
    return _run('container')


def demo_trajectory():
    """Console scripts ``demo_trajectory`` and ``send_trajectory``."""
    return _run('send_trajectory', 'demo_trajectory')
