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
``base_params_node``: the service ``compute_base_params`` (std_srvs/srv/Trigger).

On the model of ``robot_description`` (topic or parameters, as dynamics_node), computes the base
inertial parameters and answers with ``success`` and, in ``message``, a YAML document: ``count``,
``parameters`` (a list of ``{name, value, equation}``), ``samples``, ``seed``, ``method``,
``friction``, ``armature``, ``no_effect``, ``grouped``, ``rank_gap``, ``check_error``.  Options
are parameters: ``friction``, ``armature``, ``samples`` (0: the default), ``seed``, ``method``
(energy | dynamic), ``loops`` (YAML of loop closures).  The service name is relative: in a
namespace it is ``/<namespace>/compute_base_params``.  Without a model, or when the computation
fails, ``success`` is false and ``message`` says why.  A separate node, so that a computation of
tens of milliseconds never sits in a 1 kHz joint-state callback.

Kernels the install could not compile for this machine (``pip install -e``, a wheel, another
CPU) compile in a background process from the node's start (:mod:`.kernels`, about 15 s on
two cores): until they are ready a request is answered at once, ``success`` false and
``message`` saying so (ask again), and ``/diagnostics`` says not ready.
"""

from rclpy.node import Node
from std_srvs.srv import Trigger

from ._parameters import one_of, Param, Parameters
from .diagnostics import Diagnostics, OK, Said, WARN
from .kernels import compiling, Kernels, WithKernels
from .logs import warnings_logged
from .model_source import existing_file, MODEL_PARAMS, ModelSource, NO_MODEL
from .process import spin
from ..identification.base_parameters import base_parameters

PARAMS = MODEL_PARAMS + (
    Param('friction', False, 'include Fv, Fc of every joint'),
    Param('armature', False, 'include the rotor inertia Ia of every joint'),
    Param('samples', 0, 'random states drawn (0: about 4 rows per parameter)', low=0,
          high=10_000_000),
    Param('seed', 0, 'seed of the random states', low=0, high=2 ** 31 - 1),
    Param('method', 'energy', 'rows of W: energy | dynamic', one_of('energy', 'dynamic')),
    Param('loops', '', 'YAML file of loop closures (closed-loop robots)', existing_file),
)


class BaseParamsNode(WithKernels, Node):
    """Serves compute_base_params (see module)."""

    def __init__(self, node_name='base_params_node', **kwargs):
        self.said = Said()                # what it logs, for /diagnostics
        super().__init__(node_name, **kwargs)
        self.params = Parameters(self, PARAMS)
        self.answered = self.failed = 0
        self.source = ModelSource(self, self.params, lambda model: None)
        self.source.configure()           # a model given, or the topic's when it comes
        self.create_service(Trigger, 'compute_base_params', self._on_request)
        self.diagnostics = Diagnostics(self, 'base parameters service', self._diagnose)
        # before anyone asks: compiling, where they are not, starts with the node
        self.kernels = Kernels(self, ('base-parameters',), self._load_kernels, lambda: None,
                               meanwhile='requests are refused')

    def _diagnose(self, report):
        report.add('requests answered', self.answered)
        report.add('requests failed', self.failed)
        self.kernels.say(report)
        if self.source.model is None:
            report.say(WARN, NO_MODEL)
        elif not compiling(self):
            report.say(OK, 'serving compute_base_params')

    def _on_request(self, request, response):
        model = self.source.model
        if model is None:
            self.failed += 1
            response.success = False
            response.message = (f'{NO_MODEL}: publish the robot_description topic or set '
                                'either parameter')
            return response
        if compiling(self):
            self.failed += 1
            response.success = False
            response.message = f'{self.kernels.state()[1]}: ask again once they are ready'
            return response
        try:
            with warnings_logged(self.get_logger()):
                base = self._compute()
        except ValueError as e:
            self.failed += 1
            response.success = False
            response.message = f'base parameters of {model.name} failed: {e}'
            return response
        self.answered += 1
        response.success = True
        response.message = base.to_yaml()
        self.get_logger().info(f'{base.count} base parameters of {model.name} computed')
        return response

    def _compute(self):
        """Return the base parameters of the model as the parameters ask (None: no model)."""
        model, p = self.source.model, self.params
        if model is None:
            return None
        return base_parameters(model, friction=p.friction, armature=p.armature,
                               samples=p.samples or None, seed=p.seed, method=p.method,
                               loops=p.loops or None)

    def _load_kernels(self):
        """Load the compiled kernels (in the kernels' thread) on the model, if there is one."""
        try:
            self._compute()
        except ValueError:      # the options' fault: the request that meets it says so
            pass


def main(args=None):
    """Console script ``base_params_node``."""
    spin(BaseParamsNode, args)


if __name__ == '__main__':
    main()
