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
Compile the kernels ahead of their first call: once per node, and once at install time.

Numba compiles a kernel on its first call and keeps the machine code in its cache; a cold cache
costs a node about 20 s before its first command (five nodes compiling at once on two cores,
over a minute), and for those seconds an arm has no gravity compensation.  Two remedies, both
here:

* :func:`warm_up` runs every kernel a node uses once, before the node serves, so that even the
  load from a warm cache (a few hundred ms) never lands on the first message;
* ``python -m manipulator_dynamics.precompile`` compiles every kernel the nodes use into the
  cache (``$NUMBA_CACHE_DIR`` when set); setup.py runs it when the package is installed
  (``colcon build``, ``setup.py install``) into ``<package>/_prebuilt``, which the first import
  copies into the user's cache (see ``_kinematics.numba_cache_dir``).  Numba keys cached code
  on the source file's absolute path and timestamp, so this is done from the installed files,
  where the nodes will run them.
"""

import sys
import time

import numpy as np


def warm_up(model, contact=False):
    """
    Run every rigid-body kernel a node uses once on ``model``, single state and batch.

    ``contact``: the momentum observer's and the contact wrench's too (dynamics_node with
    ``external_torques``).
    """
    from .rigid.crba import inertia_matrix
    from .rigid.forward import forward_dynamics
    from .rigid.rnea import bias_forces, gravity_torques, inverse_dynamics
    z = np.zeros(model.n)
    if model.n:
        gravity_torques(model, z)
        bias_forces(model, z, z)
        inverse_dynamics(model, z, z, z, friction=True)
        # the batched kernel: trajectory_node's efforts of every point (1.3 s to compile, 6 ms
        # to load, either of which would delay the first trajectory)
        inverse_dynamics(model, z[None], z[None], z[None], friction=True)
        inertia_matrix(model, z)
        for method in ('udut', 'cholesky'):
            try:
                forward_dynamics(model, z, z, z, method=method)
            except ValueError:        # a singular M: the node reports it when it happens
                pass
        if contact:
            from .contact.detection import ContactDetector, thresholds
            from .contact.observer import MomentumObserver
            from .contact.wrench import contact_wrench
            observer = MomentumObserver(model)
            observer.update(0.0, z, z, z)
            r = observer.update(1e-3, z, z, z)
            ContactDetector(model, thresholds(model, 1.0, 2.0)).update(r, 1e-3, observer.band)
            contact_wrench(model, model.link_names[-1], z, z)


def precompile(progress=None):
    """
    Compile what every node runs: rigid-body kernels, base parameters, the flexible schemes.

    ``progress(text)``, when given, hears what is being compiled and the seconds so far (a
    cold cache takes about a minute on two cores, a warm one a second or two).
    """
    from . import robots
    from .flexible.arm import FlexibleArm
    from .flexible.dynamics import flexible_inverse_dynamics
    from .flexible.stream import FlexibleStream
    from .identification.base_parameters import base_parameters
    from .urdf import load_model
    start = time.monotonic()

    def say(what):
        if progress is not None:
            progress(f'{what} ({time.monotonic() - start:.1f} s so far)')

    model = load_model(robots.path('demo_arm'))
    say('compiling the rigid-body kernels (inverse, forward dynamics, inertia matrix, the '
        'momentum observer)')
    warm_up(model, contact=True)
    for method in ('energy', 'dynamic'):
        say(f'compiling the base-parameter kernels ({method})')
        base_parameters(model, method=method, friction=True, armature=True)
    say('compiling the flexible-link kernels')
    arm = FlexibleArm.planar([0.2, 0.2], [0.0112, 0.0112], [0.46, 0.046])
    flexible_inverse_dynamics(arm, np.arange(3) * 1e-6, np.zeros((3, arm.n)))
    FlexibleStream(arm, np.zeros(arm.n), 1e-6).step(np.zeros(arm.n))  # mode:=stream's kernels
    arm.natural_frequencies(count=2)
    say('kernels ready')


def main():
    """``python -m manipulator_dynamics.precompile``: compile into the cache, say where."""
    start = time.monotonic()
    precompile(lambda text: print(f'manipulator_dynamics: {text}', flush=True))
    from ._jit import numba_cache_dir
    print(f'manipulator_dynamics: kernels compiled into {numba_cache_dir()} in '
          f'{time.monotonic() - start:.1f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
