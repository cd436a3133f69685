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
A node started where its kernels are not compiled: it answers and commands at once.

As a user installs it with ``pip install -e .`` (this suite's own install, which runs no
install step) on a machine whose kernel cache is empty (``NUMBA_CACHE_DIR``, a new folder):
a managed dynamics_node configures in under 5 s and commands gravity compensation from its
first states, from the interpreted dynamics, while its kernels compile in the background;
``/diagnostics`` says it is not ready.  The second test gives it a cache that holds the
kernels without their marks (as a compile that ended with the node would leave it), so that
the background compile ends in seconds: the node then switches to the kernels and starts what
only they serve.  The nodes with no interpreted path (flexible_trajectory_node,
base_params_node) answer at once too, and refuse what needs the kernels, saying why, until they
are ready; then they serve.
"""

import os
import shutil
import time

import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest
import yaml

pytest.importorskip('rclpy', reason='the node tests need rclpy (pip install rclpy)')
pytest.importorskip('diagnostic_msgs', reason='diagnostic_msgs (pip install ros-diagnostic-msgs)')

from std_msgs.msg import Float64MultiArray  # noqa: E402, I100
from test_nodes_base_params import call  # noqa: E402, I100
from test_nodes_flexible import CONFIG, OUT, target  # noqa: E402, I100
from trajectory_msgs.msg import JointTrajectory  # noqa: E402, I100
from test_diagnostics import Monitor, WARN  # noqa: E402, I100
from test_lifecycle import feed_states, MODEL_JOINTS  # noqa: E402, I100

ARM = robots.path('demo_arm')
#: The issue's bound, from the process's start: configure's answer, and the first command.
READY_WITHIN = 5.0


def background_compile(logs):
    """Return the pid of the background compile the node said it started, or None."""
    for record in logs:
        if 'compiling them in the background (pid ' in record.msg:
            return int(record.msg.split('(pid ')[1].split(',')[0])
    return None


def ended(pid):
    """Return whether the process is gone, or is a zombie nobody waited for."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().split(') ')[1][0] == 'Z'
    except FileNotFoundError:
        return True


def test_a_managed_node_on_an_empty_cache_configures_and_commands_within_seconds(
        client, processes, tmp_path):
    """Configure answers, and the first command leaves, under 5 s from the process's start."""
    monitor = Monitor(client, 'dynamics_node')
    controller = client.controller(MODEL_JOINTS)
    feed_states(client)
    start = time.monotonic()
    node = processes('dynamics_node', 'managed:=true', f'urdf_path:={ARM}',
                     'mode:=gravity_compensation',
                     env={'NUMBA_CACHE_DIR': str(tmp_path / 'empty')})
    lifecycle = client.lifecycle('/dynamics_node')
    ok, _ = lifecycle.change('configure')
    configured = time.monotonic() - start
    assert ok and configured < READY_WITHIN, f'configure answered after {configured:.1f} s'
    assert lifecycle.change('activate')[0]
    client.wait(lambda: controller.received, 30.0, 'the first command')
    first = time.monotonic() - start
    assert first < READY_WITHIN, f'the first command came {first:.1f} s after the start'
    print(f'from the start: configure answered after {configured:.2f} s, the first command '
          f'after {first:.2f} s')
    model = md.load_model(ARM)
    np.testing.assert_allclose(controller.received[0].data,
                               md.gravity_torques(model, np.full(7, 0.1)), atol=1e-9)
    status, values = monitor.wait(WARN, 'not ready: the kernels are compiling in the '
                                  'background', 'the node not ready')
    assert 'commands from the interpreted dynamics' in values['kernels']
    monitor.logged(WARN, r'not compiled for this machine .* compiling them in the background')
    pid = background_compile(monitor.logs)
    assert pid is not None and not ended(pid)
    code, output = node.stop()
    assert code == 0, output
    end = time.monotonic() + 10.0
    while not ended(pid) and time.monotonic() < end:
        time.sleep(0.1)
    assert ended(pid), 'the background compile outlived its node'


def test_once_compiled_in_the_background_the_node_switches_to_the_kernels(
        client, processes, tmp_path):
    """The compile ends (the cache holds the kernels, not their marks): the kernels take over."""
    from manipulator_dynamics import precompile
    cache = compiled_cache(tmp_path)
    monitor = Monitor(client, 'dynamics_node')
    inertia = client.listen(Float64MultiArray, '/dynamics_node/inertia_matrix')
    controller = client.controller(MODEL_JOINTS)
    feed_states(client)
    processes('dynamics_node', f'urdf_path:={ARM}', 'mode:=gravity_compensation',
              'external_torques:=true', env={'NUMBA_CACHE_DIR': str(cache)})
    monitor.logged(WARN, r'kernels of rigid, forward, base-parameters, contact are not '
                   r'compiled for this machine')
    client.wait(lambda: controller.received, 30.0, 'the first command')
    client.wait(lambda: inertia, 60.0, '~/inertia_matrix, once the kernels are ready')
    assert any('kernels ready after' in r.msg for r in monitor.logs)
    client.wait(lambda: any({v.key: v.value for v in s.values}.get('kernels') == 'compiled'
                            and 'not ready' not in s.message for s in monitor.statuses()),
                30.0, '/diagnostics saying the kernels are compiled')
    assert any('observer started (the kernels are ready)' in r.msg for r in monitor.logs)
    assert all(os.path.exists(cache / os.path.basename(precompile.cache_dir())
                              / os.path.basename(precompile.mark(group)))
               for group in ('rigid', 'forward', 'base-parameters', 'contact'))
    np.testing.assert_allclose(inertia[-1].data[:7], md.inertia_matrix(
        md.load_model(ARM), np.full(7, 0.1))[0], atol=1e-9)


def compiled_cache(tmp_path):
    """Return a NUMBA_CACHE_DIR holding this suite's kernels but not their marks."""
    from manipulator_dynamics import precompile
    cache = tmp_path / 'cache'
    shutil.copytree(precompile.cache_dir(), cache / os.path.basename(precompile.cache_dir()),
                    ignore=shutil.ignore_patterns('.compiled-*', '*.lock'))
    return cache


def test_nodes_without_an_interpreted_path_answer_at_once_and_refuse_until_ready(
        client, processes, tmp_path):
    """flexible_trajectory_node configures, and base_params_node answers, saying why not yet."""
    monitor = Monitor(client, 'flexible_trajectory_node')
    out = client.listen(JointTrajectory, OUT)
    start = time.monotonic()
    empty = {'NUMBA_CACHE_DIR': str(tmp_path / 'empty')}
    flexible = processes('flexible_trajectory_node', 'managed:=true', f'arm_config:={CONFIG}',
                         env=empty)
    processes('base_params_node', f'urdf_path:={ARM}', env=empty)
    lifecycle = client.lifecycle('/flexible_trajectory_node')
    ok, _ = lifecycle.change('configure')
    configured = time.monotonic() - start
    assert ok and configured < READY_WITHIN, f'configure answered after {configured:.1f} s'
    assert lifecycle.change('activate')[0]
    answer = call(client)
    assert not answer.success and 'not ready: the kernels are compiling' in answer.message
    assert 'ask again once they are ready' in answer.message
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    pub.publish(target())
    monitor.logged(WARN, r'target rejected: not ready: the kernels are compiling in the '
                   r'background .*targets are refused')
    _, values = monitor.wait(WARN, 'not ready: the kernels are compiling', 'not ready')
    assert 'targets are refused' in values['kernels']
    assert not out, 'a trajectory answered before the kernels were ready'
    pid = background_compile(monitor.logs)
    assert pid is not None
    code, output = flexible.stop()
    assert code == 0, output


def test_once_compiled_the_nodes_without_an_interpreted_path_serve(client, processes, tmp_path):
    """The compile ends (kernels cached, not marked): the flexible arm's trajectory comes."""
    cache = {'NUMBA_CACHE_DIR': str(compiled_cache(tmp_path))}
    monitor = Monitor(client, 'flexible_trajectory_node')
    out = client.listen(JointTrajectory, OUT)
    processes('flexible_trajectory_node', f'arm_config:={CONFIG}', env=cache)
    processes('base_params_node', f'urdf_path:={ARM}', env=cache)
    monitor.logged(WARN, r'kernels of flexible are not compiled for this machine')
    client.wait(lambda: any(r.name == 'flexible_trajectory_node' and 'kernels ready after'
                            in r.msg for r in monitor.logs), 60.0, 'the kernels ready')
    pub = client.publisher(JointTrajectory, '/joint_trajectory')
    client.wait_for_subscriber(pub)
    pub.publish(target())
    client.wait(lambda: out, 30.0, 'the flexible trajectory, once the kernels are ready')
    end, answer = time.monotonic() + 60.0, call(client)
    while not answer.success and time.monotonic() < end:      # its compile: its own
        client.spin(0.5)
        answer = call(client)
    assert answer.success, answer.message
    assert yaml.safe_load(answer.message)['count'] == md.base_parameters(
        md.load_model(ARM)).count
