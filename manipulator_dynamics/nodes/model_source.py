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

"""Where a node's model comes from: a URDF file or /robot_description, and a payload."""

import os

from std_msgs.msg import String

from ._parameters import one_of, Param
from .logs import QuickLogger, warnings_logged
from .process import settle_what_loaded
from .qos import LATCHED
from ..urdf import load_model


def existing_file(value):
    """Reason why ``value`` is not empty or an existing file, or None."""
    return None if not value or os.path.isfile(value) else f'no such file: {value}'


#: What a node without its model says (/diagnostics, its log): the parameters that give one.
NO_MODEL = 'no robot model yet (robot_description, urdf_path)'

#: Where a node's robot model comes from (see :class:`ModelSource`).
MODEL_PARAMS = (
    Param('robot_description', '', 'URDF text (overrides urdf_path and the topic)',
          read_only=True),
    Param('urdf_path', '', 'URDF file, used when robot_description is empty',
          existing_file, read_only=True),
    Param('robot_description_topic', 'robot_description',
          'topic of the URDF (transient local), relative to the namespace; empty: do not listen',
          read_only=True),
    Param('root_link', '', 'link to use as the fixed base (empty: the URDF root)',
          read_only=True),
    Param('tip_links', [''], 'keep only joints leading to these links (empty: all)',
          read_only=True),
    Param('without_links', [''], 'links not mounted (a hand, a tool): left out with everything '
          'below them (empty: none)', read_only=True),
    Param('joint_dynamics', '', 'YAML file of armature and friction per joint', existing_file,
          read_only=True),
    Param('identified_parameters', '', 'YAML file of standard parameters to use instead of the '
          "URDF's (manipulator-dynamics identify --parameters-out)", existing_file,
          read_only=True),
    Param('transmissions', '', 'YAML file of the motors (gear ratios, coupling, zero offsets, '
          "coupled motors' friction) instead of the URDF's <transmission>", existing_file,
          read_only=True),
    Param('check_inertia', 'warn', "physically impossible inertias: 'raise' rejects the URDF, "
          "'warn' loads it and logs (default), 'ignore'", one_of('raise', 'warn', 'ignore'),
          read_only=True),
)


#: A payload held by the robot, changeable while the node runs (``ros2 param set``).
PAYLOAD_PARAMS = (
    Param('payload_link', '', 'link that holds a payload (a gripper or tool frame too); '
          'empty: none'),
    Param('payload', [0.0], "the payload: mass (kg)[, centre of mass x y z (m) in payload_link's "
          'frame[, inertia about it ixx ixy ixz iyy iyz izz (kg m^2)]]'),
)


def with_payload(model, link, values):
    """Return ``model`` carrying the payload of the parameters; ValueError naming the fault."""
    values = [float(v) for v in values]
    if len(values) not in (1, 4, 10):
        raise ValueError(f'payload needs 1, 4 or 10 numbers (mass[, x y z[, ixx ixy ixz iyy '
                         f'iyz izz]]), got {len(values)}')
    if not link:
        if values[0] != 0:
            raise ValueError('payload has a mass but payload_link is empty')
        return model
    return model.with_payload(link, values[0], values[1:4] or (0.0, 0.0, 0.0),
                              values[4:] or None)


def payload_check(node, name, names=('payload_link', 'payload'), model=None):
    """
    Check a payload's link or values (``name``, one of ``names``) against the other and a model.

    ``model()`` gives the model without the payload (default: the node's ``source.loaded``);
    sim_node checks its ``load_link`` and ``load`` the same way.
    """
    link_name, values_name = names

    def check(value):
        params = getattr(node, 'params', None)
        loaded = model() if model is not None else \
            getattr(getattr(node, 'source', None), 'loaded', None)
        if params is None or loaded is None:
            # declaring (the other one is not known yet) or no model: the shape only
            if name == values_name and len(value) not in (1, 4, 10):
                return f'needs 1, 4 or 10 numbers, got {len(value)}'
            return None
        link = value if name == link_name else getattr(params, link_name)
        values = value if name == values_name else getattr(params, values_name)
        try:
            with_payload(loaded, link, values)
        except ValueError as e:
            return str(e)
        return None
    return check


class ModelSource:
    """
    The robot model of a node: from parameters, or else from the ``robot_description`` topic.

    ``params`` holds :data:`MODEL_PARAMS`.  A model given by parameter (``robot_description``
    text, else ``urdf_path``) is authoritative: the topic is not used (a simulator's description
    arriving late must not replace it).  Otherwise a URDF on the topic (relative name: a
    namespace moves it) replaces the model whenever its text changes; a bad one is logged and
    the previous model kept.  ``on_model(model)`` is called with each new model.

    Nothing is loaded before :meth:`configure` (a managed node's transition, or the start of an
    unmanaged one); the topic's text is kept until then.  :meth:`cleanup` drops the model.
    """

    def __init__(self, node, params, on_model):
        self.node = node
        self.params = params
        self.on_model = on_model
        self.model = None
        self.loaded = None                    # the model as loaded, without a payload
        self.log = QuickLogger(node)
        self.what = None                      # where the model came from, once loaded
        self._urdf = None
        self._heard = None                    # the topic's latest text
        self._open = False                    # configured: the topic's texts load as they come
        self.topic = None
        if not params.robot_description and not params.urdf_path and \
                params.robot_description_topic:
            sub = node.create_subscription(String, params.robot_description_topic,
                                           self._on_description, LATCHED)
            self.topic = sub.topic_name

    def configure(self):
        """Load the model; return why there is none (a string), or None."""
        self._open = True
        p = self.params
        if p.robot_description:
            return self.load(p.robot_description, 'parameter robot_description')
        if p.urdf_path:
            return self.load(p.urdf_path, f'urdf_path {p.urdf_path}')
        if self._heard is not None:
            return self.load(self._heard, 'topic robot_description')
        if self.topic is not None:
            return (f'no robot model: robot_description and urdf_path are empty and no URDF '
                    f'came on {self.topic} yet')
        return 'no robot model: robot_description, urdf_path and robot_description_topic are empty'

    def cleanup(self):
        """Drop the model; the topic's texts are kept, not loaded, until :meth:`configure`."""
        self._open = False
        self.model = self.loaded = self._urdf = self.what = None

    def _on_description(self, msg):
        self._heard = msg.data
        if self._open and msg.data != self._urdf:
            self.load(msg.data, 'topic robot_description')

    def load(self, urdf, source):
        """Load ``urdf`` (text or path); return None, or why not (said; the old model kept)."""
        p = self.params
        tips = [t for t in p.tip_links if t]
        unmounted = [link for link in p.without_links if link]
        try:
            with warnings_logged(self.log, f'{source}: '):
                model = load_model(urdf, root_link=p.root_link or None, tip_links=tips or None,
                                   joint_dynamics=p.joint_dynamics or None,
                                   parameters=p.identified_parameters or None,
                                   transmissions=p.transmissions or None,
                                   check_inertia=p.check_inertia,
                                   without_links=unmounted or None)
        except (ValueError, OSError, KeyError) as e:
            self.log.error(f'{source} rejected, keeping the previous model: {e}')
            return f'{source} rejected: {e}'
        self._urdf = urdf if isinstance(urdf, str) and urdf.lstrip().startswith('<') else None
        if self._urdf is None:
            with open(urdf, encoding='utf-8') as f:        # loaded: the file exists
                self._urdf = f.read()
        self.loaded, self.what = model, source
        self.log.info(f'model from {source}: {model!r}')
        self.apply_payload()
        return None

    def apply_payload(self):
        """Put the payload of the parameters (if the node has them) on the loaded model."""
        p, model = self.params, self.loaded
        link, values = getattr(p, 'payload_link', ''), getattr(p, 'payload', [0.0])
        try:
            model = with_payload(self.loaded, link, values)
        except ValueError as e:
            self.log.error(f'payload ignored, the model carries none: {e}')
        if model is not self.loaded:
            where = {1: f"a point mass at {link}'s origin (give x y z and the inertia to place "
                        'it)',
                     4: f'a point mass at {list(values[1:4])} (no inertia given)'}
            self.log.info(f'payload on {link}: {values[0]:g} kg, '
                          + where.get(len(values), f'centre of mass {list(values[1:4])}, '
                                      f'inertia {list(values[4:])}'))
        self.model = model
        self.on_model(model)
        settle_what_loaded()                  # not walked by a collection in the loop
