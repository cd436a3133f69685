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
A packaged install's first start: dynamics_node's first command and its kernels, empty cache.

A .deb (bloom's rules) runs ``setup.py install --root`` into a staging folder on a build
machine, so the install step compiles no kernel (``InstallAndPrecompile``), and dpkg unpacks
the files read-only under the prefix.  This does the same with the checkout's files: a staged
install, copied to its prefix and made read-only, then dynamics_node started from it by its
console script (no ``ros2 launch`` needed), as

* a user with an empty cache (``XDG_CACHE_HOME`` a new folder), twice: the first start compiles
  in the background, the second loads what the first left;
* a service user without a home (as ``nobody``, ``HOME=/nonexistent``; only when run as root):
  the kernels go to the temporary folder, with a warning.

For each: seconds from the process's start to its first effort command (joint states published
at 100 Hz from here) and to ``kernels ready`` in its log.  ``.venv/bin/python
benchmarks/bench_packaged_start.py`` (rclpy from the venv or a sourced ROS 2); as root, with a
Python that ``nobody`` can run (``.venv-debian/bin/python``, the distribution's own), for the
service user too.
"""

import os
import pwd
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

import rclpy  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

JOINTS = [f'joint{i}' for i in range(1, 8)]
URDF = 'demo_arm.urdf'              # the installed copy (share/manipulator_dynamics/urdf)


def packaged_install(top):
    """Stage-install the checkout as a .deb build does, unpack it read-only; return its prefix."""
    source, stage, prefix = (os.path.join(top, name) for name in ('src', 'stage', 'opt'))
    files = subprocess.run(['git', 'ls-files', '-co', '--exclude-standard'], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        os.makedirs(os.path.dirname(os.path.join(source, name)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, name), os.path.join(source, name))
    start = time.monotonic()
    built = subprocess.run([sys.executable, 'setup.py', 'install', f'--root={stage}',
                            f'--prefix={prefix}', '--single-version-externally-managed'],
                           cwd=source, capture_output=True, text=True, check=True)
    said = [line for line in built.stderr.splitlines() if 'kernels are not compiled' in line]
    print(f'staged install: {time.monotonic() - start:.1f} s; it said: {said[0] if said else "-"}')
    shutil.copytree(stage + prefix, prefix, symlinks=True)
    subprocess.run(['chmod', '-R', 'a-w', prefix], check=True)
    return prefix


def first_start(prefix, env, user=None, timeout=300):
    """Start dynamics_node from ``prefix``; return (first command, kernels ready, warnings)."""
    rclpy.init()
    # named as a ros2_control controller, with its 'joints': dynamics_node commands only once
    # the controller of its command topic has confirmed the order
    node = rclpy.create_node('effort_controller')
    node.declare_parameter('joints', JOINTS)
    first = []
    node.create_subscription(Float64MultiArray, '/effort_controller/commands',
                             lambda _msg: first or first.append(time.monotonic()), 10)
    states = node.create_publisher(JointState, 'joint_states', 10)
    lines, ready = [], []

    def read(stream):
        for line in stream:
            lines.append(line.rstrip())
            if 'kernels ready after' in line:
                ready.append(time.monotonic())

    start = time.monotonic()
    process = subprocess.Popen(
        [os.path.join(prefix, 'lib', 'manipulator_dynamics', 'dynamics_node'), '--ros-args',
         '-p', 'mode:=gravity_compensation', '-p',
         f'urdf_path:={os.path.join(prefix, "share", "manipulator_dynamics", "urdf", URDF)}'],
        env=env, user=user, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, cwd='/')
    reader = threading.Thread(target=read, args=(process.stdout,), daemon=True)
    reader.start()
    try:
        while time.monotonic() - start < timeout and process.poll() is None:
            states.publish(JointState(name=JOINTS, position=[0.1] * 7))
            rclpy.spin_once(node, timeout_sec=0.01)
            background = any('compiling them in the background' in line for line in lines)
            if first and (ready or not background) and time.monotonic() - first[0] > 1.0:
                break
    finally:
        process.terminate()
        process.wait(timeout=60)
        reader.join(timeout=10)
        node.destroy_node()
        rclpy.shutdown()
    said = [re.sub(r'^.*?\]: ', '', line) for line in lines
            if 'WARN' in line or 'Warning' in line or 'cannot be written' in line]
    if not first:                   # what the node said instead, to tell why
        said += lines[-10:]
    return ((first[0] - start) if first else None, (ready[0] - start) if ready else None, said)


def report(label, result):
    """Print one start's figures."""
    command, ready, said = result
    print(f'{label}: first command after '
          + (f'{command:.2f} s' if command is not None else 'none')
          + ', kernels ready after '
          + (f'{ready:.1f} s' if ready is not None else 'none (loaded at start, or never)'))
    for line in said:
        print(f'    said: {line[:200]}')


def main():
    top = tempfile.mkdtemp(prefix='packaged-')
    os.chmod(top, 0o755)
    try:
        prefix = packaged_install(top)
        site = sysconfig.get_path('purelib', vars={'base': prefix})
        env = dict(os.environ, PYTHONPATH=site + os.pathsep + os.environ.get('PYTHONPATH', ''))
        env.pop('NUMBA_CACHE_DIR', None)
        cache = tempfile.mkdtemp(prefix='fresh-cache-', dir=top)
        user_env = dict(env, XDG_CACHE_HOME=cache)
        report('a user, empty cache, first start', first_start(prefix, user_env))
        report('the same user, second start', first_start(prefix, user_env))
        if os.getuid() == 0:
            # ROS 2's own logging needs a folder it can write (rcl fails to initialise
            # without one): a service's unit gives it ROS_LOG_DIR, as here
            logs = tempfile.mkdtemp(prefix='ros-log-', dir=top)
            os.chmod(logs, 0o777)
            service = dict(env, HOME='/nonexistent', ROS_LOG_DIR=logs)
            service.pop('XDG_CACHE_HOME', None)
            nobody = pwd.getpwnam('nobody')
            shutil.rmtree(os.path.join(tempfile.gettempdir(),
                                       f'manipulator_dynamics-{nobody.pw_uid}'),
                          ignore_errors=True)
            try:
                report('a service user without a home (nobody)',
                       first_start(prefix, service, user='nobody'))
            except PermissionError:
                print(f'a service user without a home (nobody): not measured, as nobody cannot '
                      f'run this interpreter ({os.path.realpath(sys.executable)}): run the '
                      'bench with a Python nobody can read (.ci/debian makes .venv-debian)')
    finally:
        subprocess.run(['chmod', '-R', 'u+w', top])
        shutil.rmtree(top, ignore_errors=True)


if __name__ == '__main__':
    main()
