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

"""Rigid-body dynamics of robot manipulators from URDF."""

from ._parallel import get_threads, set_threads
from .base_parameters import base_parameters, BaseParameters
from .crba import inertia_matrix
from .energy import energy, energy_regressor
from .flexible import (closed_loop_inverse_dynamics, ClosedLoopDynamics, flexible_inverse_dynamics,
                       flexible_trajectory, FlexibleDynamics, FlexibleTrajectory,
                       parallel_inverse_dynamics, parallel_matrices)
from .flexible_arm import FlexibleArm, FlexibleArmError
from .forward import choose_method, forward_dynamics
from .identification import Estimate, IdentificationError, identify
from .model import InertiaError, InertiaWarning, load_model, Model, PARAMETER_NAMES, URDFError
from .regressor import parameter_names, regressor, standard_parameters
from .rnea import bias_forces, gravity_torques, inverse_dynamics
from .udut import SingularInertiaError, udut

__all__ = [
    'BaseParameters', 'ClosedLoopDynamics', 'Estimate', 'FlexibleArm', 'FlexibleArmError',
    'FlexibleDynamics', 'FlexibleTrajectory', 'IdentificationError', 'InertiaError',
    'InertiaWarning', 'Model', 'PARAMETER_NAMES', 'SingularInertiaError', 'URDFError',
    'base_parameters', 'bias_forces', 'choose_method', 'closed_loop_inverse_dynamics', 'energy',
    'energy_regressor', 'flexible_inverse_dynamics', 'flexible_trajectory', 'forward_dynamics',
    'get_threads', 'gravity_torques', 'identify', 'inertia_matrix', 'inverse_dynamics',
    'load_model', 'parallel_inverse_dynamics', 'parallel_matrices', 'parameter_names',
    'regressor', 'set_threads', 'standard_parameters', 'udut',
]
