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
Rigid-body dynamics of robot manipulators from URDF.

Every public name is importable from here (``manipulator_dynamics.load_model``, ``from
manipulator_dynamics import base_parameters``); each module loads on first use of one of its
names (PEP 562), so that a node that needs the rigid-body kernels does not also import the
identification and flexible-link layers and scipy.linalg (about 0.3 s of each node's start-up:
five nodes start on two cores).
"""

import importlib

#: module of each public name
_WHERE = {
    '._parallel': ('get_threads', 'set_threads'),
    '.identification.base_parameters': ('base_parameters', 'BaseParameters'),
    '.identification.closures': ('ClosedLoops', 'ClosureError', 'load_closures'),
    '.identification.consistent': ('ConvergenceWarning', 'physical_problems'),
    '.rigid.crba': ('inertia_matrix',),
    '.rigid.coriolis': ('coriolis_matrix',),
    '.rigid.jacobian': ('frame_jacobian',),
    '.contact.observer': ('MomentumObserver', 'momentum_residual'),
    '.contact.detection': ('ContactDetector', 'learn_thresholds', 'motion_spread',
                           'residual_spread', 'Spread', 'spread_of_parameters', 'Thresholds',
                           'thresholds_from_spread'),
    '.contact.wrench': ('contact_wrench', 'WrenchEstimate'),
    '.rigid.energy': ('energy', 'energy_regressor'),
    '.flexible.dynamics': ('flexible_inverse_dynamics', 'flexible_trajectory', 'FlexibleDynamics',
                           'FlexibleTrajectory', 'parallel_inverse_dynamics',
                           'parallel_matrices'),
    '.flexible.loop': ('closed_loop_inverse_dynamics', 'ClosedLoopDynamics'),
    '.flexible.arm': ('FlexibleArm', 'FlexibleArmError'),
    '.flexible.stream': ('FlexibleSample', 'FlexibleStream'),
    '.rigid.forward': ('choose_method', 'forward_dynamics'),
    '.identification.estimate': ('CrossValidation', 'cross_validate', 'identify',
                                 'select_friction'),
    '.identification.fit': ('Estimate',),
    '.recordings.log': ('Log', 'read_once'),
    '.errors': ('IdentificationError', 'RecordingError'),
    '.identification.excitation': ('Excitation', 'excitation_trajectory'),
    '.identification.payload': ('identify_payload', 'PayloadEstimate'),
    '.model': ('InertiaError', 'InertiaWarning', 'Model', 'PARAMETER_NAMES', 'URDFError'),
    '.rigid.regressor': ('parameter_names', 'regressor', 'standard_parameters'),
    '.rigid.rnea': ('bias_forces', 'gravity_torques', 'inverse_dynamics'),
    '.rigid.status': ('SingularInertiaError',),
    '.rigid.udut': ('udut',),
    '.urdf': ('load_model', 'write_joint_dynamics', 'write_urdf'),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    'BaseParameters', 'ClosedLoopDynamics', 'ClosedLoops', 'ClosureError', 'ContactDetector',
    'ConvergenceWarning', 'CrossValidation', 'contact_wrench', 'cross_validate', 'Estimate',
    'Excitation', 'FlexibleArm', 'FlexibleArmError', 'FlexibleDynamics', 'FlexibleSample',
    'FlexibleStream', 'FlexibleTrajectory',
    'IdentificationError', 'InertiaError', 'InertiaWarning', 'Log', 'Model', 'PARAMETER_NAMES',
    'PayloadEstimate', 'SingularInertiaError', 'URDFError', 'base_parameters', 'bias_forces',
    'choose_method', 'closed_loop_inverse_dynamics', 'coriolis_matrix', 'energy',
    'energy_regressor',
    'excitation_trajectory', 'flexible_inverse_dynamics', 'flexible_trajectory',
    'forward_dynamics', 'frame_jacobian', 'get_threads', 'gravity_torques', 'identify',
    'identify_payload', 'inertia_matrix', 'inverse_dynamics', 'learn_thresholds',
    'load_closures', 'load_model', 'MomentumObserver', 'momentum_residual', 'motion_spread',
    'parallel_inverse_dynamics', 'parallel_matrices', 'parameter_names', 'physical_problems',
    'read_once', 'RecordingError', 'regressor', 'residual_spread', 'select_friction',
    'set_threads', 'Spread', 'spread_of_parameters', 'standard_parameters', 'Thresholds',
    'thresholds_from_spread', 'udut', 'WrenchEstimate',
    'write_joint_dynamics',
    'write_urdf',
]


def __getattr__(name):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'manipulator_dynamics' has no attribute '{name}'")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value                      # once: later lookups are plain attributes
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
