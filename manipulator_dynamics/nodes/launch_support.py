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
What the package's launch files share: launch arguments turned into node parameters.

A launch argument left empty is not passed at all, so that the node's default, or the value in
``params_file``, applies; one that is given wins over the file.  Each value takes the type of the
parameter it sets (the node's table decides, not a guess from the text):
``command_joints:="[joint1, joint2]"`` is a list of strings (``"[]"``: an empty one), ``rate:=500``
a float, ``use_sim_time:=true`` a bool, a joint called ``on`` a string.

Each launch file keeps what it declares as data: ``ARGUMENTS`` (name, default, description) and
``PARAMETERS`` (node -> {parameter: argument}), literals that the tests read without ``launch``
(which only a ROS 2 installation brings) and check against the nodes' tables.  ``launch`` itself
is imported only by the functions that run inside a launch.

``managed:=true`` starts the nodes that have a lifecycle as managed nodes (launch_ros's
``LifecycleNode``); with ``autostart:=true`` (the default) the launch configures each and, once
it is configured, activates it; with ``autostart:=false`` they wait, unconfigured, for a
lifecycle manager (Nav2's, or ``ros2 lifecycle set``).
"""

import os

import yaml


def declared(arguments):
    """``DeclareLaunchArgument`` of each ``(name, default, description)`` of ``arguments``."""
    from launch.actions import DeclareLaunchArgument

    return [DeclareLaunchArgument(name, default_value=default, description=text)
            for name, default, text in arguments]


#: The launch arguments of a launch file that starts managed-capable nodes (``PARAMETERS`` maps
#: each such node's ``managed`` to ``managed``; ``autostart`` is the launch's own).
MANAGED_ARGUMENTS = (
    ('managed', '', 'true: dynamics_node, trajectory_node and flexible_trajectory_node run as '
                    'managed (lifecycle) nodes (default false)'),
    ('autostart', 'true', 'with managed:=true, this launch configures and activates them '
                          '(false: they wait unconfigured for a lifecycle manager)'),
)


def node_actions(context, executable, namespace, parameters):
    """
    Return the launch actions that start ``executable``, a node of this package named after it.

    ``parameters`` (files and dicts, as launch_ros takes them) with ``managed`` true in a dict:
    a ``LifecycleNode`` and, with ``autostart``, its configure and then its activate.  The
    activation waits for the configure to succeed (a failed one says why in the node's log and
    leaves it unconfigured), and only that transition's end triggers it: a node an operator
    deactivates stays inactive.
    """
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import LifecycleNode, Node

    common = {'package': 'manipulator_dynamics', 'executable': executable, 'name': executable,
              'namespace': namespace, 'output': 'screen', 'parameters': parameters}
    if not any(isinstance(p, dict) and p.get('managed') for p in parameters):
        return [Node(**common)]
    node = LifecycleNode(**common)
    autostart = context.perform_substitution(LaunchConfiguration('autostart', default='true'))
    if not typed(autostart, False, 'autostart'):
        return [node]
    from launch.actions import EmitEvent, RegisterEventHandler
    from launch.events import matches_action
    from launch_ros.event_handlers import OnStateTransition
    from launch_ros.events.lifecycle import ChangeState
    from lifecycle_msgs.msg import Transition

    def change(transition):
        return EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(node),
                                           transition_id=transition))
    activate = RegisterEventHandler(OnStateTransition(
        target_lifecycle_node=node, start_state='configuring', goal_state='inactive',
        entities=[change(Transition.TRANSITION_ACTIVATE)]))
    return [node, activate, change(Transition.TRANSITION_CONFIGURE)]


def container_parameters(nodes):
    """
    Return a parameter file (as a dict) that gives each node of ``nodes`` its own section.

    ``nodes``: ``{node name: {parameter: value}}``.  One node_container hosts them all, and
    ``-p`` (what a launch_ros ``parameters`` dict becomes) would give every parameter to every
    node; a ``/**/<name>:`` section reaches its node only.
    """
    return {f'/**/{name}': {'ros__parameters': dict(params)} for name, params in nodes.items()}


def container_actions(namespace, files, nodes):
    """
    Return the launch action that starts ``nodes`` (``{executable: parameters}``) in one process.

    A ``node_container`` (see :mod:`.container`) with the parameter files ``files`` first and
    then one of :func:`container_parameters`, written here.  No ``name`` is given to the
    action: launch_ros would rename every node of the process with it.  The file is removed
    when the launch shuts down (it was left in the temporary folder, one per launch).
    """
    import tempfile

    from launch.actions import OpaqueFunction, RegisterEventHandler
    from launch.event_handlers import OnShutdown
    from launch_ros.actions import Node

    handle, path = tempfile.mkstemp(prefix='node_container_', suffix='.yaml')
    with open(handle, 'w') as f:
        yaml.safe_dump(container_parameters(nodes), f)
    return [Node(package='manipulator_dynamics', executable='node_container',
                 namespace=namespace, output='screen', arguments=list(nodes),
                 parameters=files + [path]),
            RegisterEventHandler(OnShutdown(on_shutdown=[OpaqueFunction(
                function=lambda context: remove_file(path))]))]


def remove_file(path):
    """Remove ``path`` if it is still there (a launch's own temporary file); return None."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def given_parameters(context, names, table=()):
    """
    Map parameter -> typed value for each launch argument of ``names`` that is not empty.

    ``names`` maps a parameter name to the launch argument that sets it; ``table`` is the node's
    parameter table (:class:`~manipulator_dynamics.nodes._parameters.Param` rows).
    """
    from launch.substitutions import LaunchConfiguration

    defaults = {p.name: p.default for p in table}
    defaults.setdefault('use_sim_time', False)
    params = {}
    for parameter, argument in names.items():
        text = context.perform_substitution(LaunchConfiguration(argument))
        if text == '':
            continue
        params[parameter] = typed(text, defaults.get(parameter, ''), argument)
    return params


def typed(text, default, argument):
    """Read launch argument ``text`` as the type of ``default``; ValueError names the argument."""
    try:
        if isinstance(default, str):
            return text
        if isinstance(default, bool):
            value = yaml.safe_load(text)
            if not isinstance(value, bool):
                raise ValueError('expected true or false')
            return value
        if isinstance(default, (int, float)):
            return type(default)(text)
        value = yaml.safe_load(text)
        if not isinstance(value, list):
            raise ValueError('expected a list such as [a, b]')
        kind = type(default[0]) if default else str
        if not value:
            # launch_ros cannot pass a list without a type; [''] is the nodes' "none given"
            if kind is not str:
                raise ValueError('needs at least one value')
            return ['']
        return [kind(v) for v in value]
    except ValueError as e:
        raise ValueError(f'launch argument {argument}:={text}: {e}') from None


def parameter_files(context, argument='params_file'):
    """Return the ``params_file`` launch argument as a list of zero or one file."""
    from launch.substitutions import LaunchConfiguration

    path = context.perform_substitution(LaunchConfiguration(argument))
    return [path] if path else []


def cell_namespace_refusal(namespace):
    """
    Return why gazebo.launch.py cannot honour ``namespace``, or None (none given).

    Namespacing the nodes alone left robot_state_publisher, the spawners and the controllers
    at the root, and dynamics_node listened to a /robot1/joint_states nobody published: a cell
    that does not connect, without a word.  The whole cell needs the controller manager's
    namespace in the URDF's gz_ros2_control plugin, which that file does not write.
    """
    if not namespace:
        return None
    return (f'gazebo.launch.py cannot put the cell in namespace {namespace!r}: the controller '
            "manager's namespace is set by gz_ros2_control's plugin in the URDF, not by the "
            'launch file. Run it without a namespace, or start your own namespaced Gazebo '
            f'bringup and dynamics.launch.py namespace:={namespace} beside it')


def container_refusal(container, managed):
    """
    Return why ``container:=true`` with ``managed:=true`` cannot be honoured, or None.

    The launch drives a managed node's transitions node by node (:func:`node_actions`), and
    the nodes of one node_container are not launch_ros lifecycle nodes to it: the container was
    dropped without a word, and the nodes ran apart.
    """
    if not (container and managed):
        return None
    return ('container:=true hosts unmanaged nodes only: with managed:=true the launch '
            "drives each node's transitions itself, which it cannot do inside one "
            'node_container. Drop one of the two (managed nodes run one process each)')
