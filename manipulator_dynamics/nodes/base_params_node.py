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

"""``base_params_node``: the service ``/compute_base_params`` (std_srvs/srv/Trigger).

On the model of ``robot_description`` (topic or parameters, as dynamics_node), computes the base
inertial parameters and answers with ``success`` and, in ``message``, a YAML document: ``count``,
``parameters`` (a list of ``{name, value, equation}``), ``samples``, ``seed``, ``method``,
``friction``, ``armature``, ``no_effect``, ``grouped``, ``rank_gap``, ``check_error``.  Options
are parameters: ``friction``, ``armature``, ``samples`` (0: the default), ``seed``, ``method``
(energy | dynamic), ``loops`` (YAML of loop closures).  Without a model, or when the computation
fails, ``success`` is false and ``message`` says why.  A separate node, so that a computation of
tens of milliseconds never sits in a 1 kHz joint-state callback.
"""

import warnings

from rclpy.node import Node
from std_srvs.srv import Trigger

from ._common import describe, existing_file, ModelSource, parameter_check, spin
from ..base_parameters import base_parameters


class BaseParamsNode(Node):
    """Serves /compute_base_params (see module)."""

    def __init__(self, node_name='base_params_node', **kwargs):
        super().__init__(node_name, **kwargs)
        p = self.declare_parameter
        p('friction', False, describe('include Fv, Fc of every joint'))
        p('armature', False, describe('include the rotor inertia Ia of every joint'))
        p('samples', 0, describe('random states drawn (0: about 4 rows per parameter)'))
        p('seed', 0, describe('seed of the random states'))
        p('method', 'energy', describe('rows of W: energy | dynamic'))
        p('loops', '', describe('YAML file of loop closures (closed-loop robots)'))
        parameter_check(self, {
            'samples': lambda v: None if v >= 0 else 'must be >= 0',
            'method': lambda v: None if v in ('energy', 'dynamic') else 'must be energy or '
            'dynamic',
            'loops': existing_file,
        })
        self.source = ModelSource(self, lambda model: None)
        self.create_service(Trigger, '/compute_base_params', self._on_request)

    def _on_request(self, request, response):
        model = self.source.model
        if model is None:
            response.success = False
            response.message = ('no robot model loaded yet: publish /robot_description or set '
                                'robot_description / urdf_path')
            return response
        get = self.get_parameter
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                base = base_parameters(model, friction=get('friction').value,
                                       armature=get('armature').value,
                                       samples=get('samples').value or None,
                                       seed=get('seed').value, method=get('method').value,
                                       loops=get('loops').value or None)
            for w in caught:
                self.get_logger().warning(str(w.message))
        except ValueError as e:
            response.success = False
            response.message = f'base parameters of {model.name} failed: {e}'
            return response
        response.success = True
        response.message = base.to_yaml()
        self.get_logger().info(f'{base.count} base parameters of {model.name} computed')
        return response


def main(args=None):
    """Console script ``base_params_node``."""
    spin(BaseParamsNode, args)
