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

"""The identification tests' robots, beside the suite's plain demo arm (``arm``)."""

from helpers import DEMO_ARM_DYNAMICS
import pytest


@pytest.fixture(scope='module')
def configured_arm():
    """Load the demo arm with the rotor inertias and friction of config/demo_arm_dynamics.yaml."""
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    return md.load_model(robots.path('demo_arm'), joint_dynamics=DEMO_ARM_DYNAMICS)


@pytest.fixture(scope='module')
def frictional_arm(arm):
    """Load the demo arm with viscous 0.3 N m s/rad and Coulomb 0.5 N m friction on each joint."""
    import manipulator_dynamics as md
    from manipulator_dynamics import robots
    return md.load_model(robots.path('demo_arm'), joint_dynamics={
        j: {'viscous': 0.3, 'coulomb': 0.5} for j in arm.joint_names})


@pytest.fixture(scope='module')
def base(configured_arm):
    """Return the configured arm's base parameters, friction and rotor inertia included."""
    import manipulator_dynamics as md
    return md.base_parameters(configured_arm, friction=True, armature=True)
