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
Launch files, read as files: what they start is this package's, every argument is documented.

They run for real, under ``ros2 launch`` and ``launch_test`` against a colcon install, in
test_ros2_launch.py.
"""

import ast
import glob
import os

from helpers import ROOT
import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest
import yaml

LAUNCH_FILES = sorted(glob.glob(os.path.join(ROOT, 'launch', '*.launch.py')))


def console_scripts():
    tree = ast.parse(open(os.path.join(ROOT, 'setup.py')).read())
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call)
                and getattr(n.func, 'id', '') == 'setup')
    entry = next(kw.value for kw in call.keywords if kw.arg == 'entry_points')
    return {s.split('=')[0].strip() for s in ast.literal_eval(entry)['console_scripts']}


def keyword_strings(path, keyword):
    tree = ast.parse(open(path).read())
    return [kw.value.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            for kw in node.keywords if kw.arg == keyword and isinstance(kw.value, ast.Constant)]


def test_there_are_launch_files():
    names = {os.path.basename(p) for p in LAUNCH_FILES}
    assert {'dynamics.launch.py', 'demo.launch.py', 'flexible.launch.py',
            'gazebo.launch.py'} <= names


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=os.path.basename)
def test_launch_executables_exist(path):
    tree = ast.parse(open(path).read())
    strings = {n.value for n in ast.walk(tree)
               if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    ours = console_scripts() | {os.path.basename(p) for p in LAUNCH_FILES}   # or includes one
    assert strings & ours, f'{path} starts no node of this package'
    for call in ast.walk(tree):        # Node(package='manipulator_dynamics', executable=...)
        if not isinstance(call, ast.Call):
            continue
        kw = {k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)}
        if kw.get('package') == 'manipulator_dynamics' and 'executable' in kw:
            assert kw['executable'] in console_scripts(), kw['executable']


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=os.path.basename)
def test_launch_files_define_generate_launch_description(path):
    tree = ast.parse(open(path).read())
    assert any(isinstance(n, ast.FunctionDef) and n.name == 'generate_launch_description'
               for n in tree.body)


def test_ros2_controllers_yaml_drives_the_demo_arm_by_effort():
    """config/ros2_controllers.yaml: forward_command_controller on every demo-arm joint, effort."""
    model = md.load_model(robots.path('demo_arm'))
    with open(os.path.join(ROOT, 'config', 'ros2_controllers.yaml')) as f:
        doc = yaml.safe_load(f)
    manager = doc['controller_manager']['ros__parameters']
    assert manager['effort_controller']['type'] == \
        'forward_command_controller/ForwardCommandController'
    assert manager['joint_state_broadcaster']['type'] == \
        'joint_state_broadcaster/JointStateBroadcaster'
    controller = doc['effort_controller']['ros__parameters']
    assert controller['interface_name'] == 'effort'
    assert controller['joints'] == list(model.joint_names)


def test_ros2_control_description_loads_in_our_model():
    """The demo arm with its <ros2_control> system is the same robot to the library."""
    from lxml import etree
    plain = md.load_model(robots.path('demo_arm'))
    text = robots.with_ros2_control(robots.path('demo_arm'), '/share/ros2_controllers.yaml')
    model = md.load_model(text)
    assert model.joint_names == plain.joint_names
    q = np.linspace(-1, 1, model.n)
    np.testing.assert_array_equal(md.gravity_torques(model, q), md.gravity_torques(plain, q))
    root = etree.fromstring(text.encode())
    system = root.find('ros2_control')
    assert system.find('hardware/plugin').text == 'gz_ros2_control/GazeboSimSystem'
    assert [j.get('name') for j in system.findall('joint')] == list(model.joint_names)
    for joint in system.findall('joint'):
        assert [c.get('name') for c in joint.findall('command_interface')] == ['effort']
    assert root.find('gazebo/plugin/parameters').text == '/share/ros2_controllers.yaml'


# What each launch file declares, read as data: the checks below need neither ``launch`` nor a
# ROS 2 installation, only the nodes' parameter tables (rclpy, from PyPI here).

#: Launch arguments that set no node parameter, and where they go instead.
LAUNCH_LEVEL = {'namespace': "the nodes' namespace", 'params_file': 'parameter files, read first',
                'world': "Gazebo's world (gz_sim.launch.py)",
                'autostart': 'the transitions the launch makes (launch_support.node_actions)',
                'container': 'one node_container process (launch_support.container_actions)'}


def launch_data(path):
    """Read a launch file's literals ``ARGUMENTS``, ``PARAMETERS``, ``FORWARDED`` (or empty)."""
    from manipulator_dynamics.nodes import launch_support

    def value(node):
        # a literal, or literals joined with launch_support's (``(...) + MANAGED_ARGUMENTS``)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return value(node.left) + value(node.right)
        if isinstance(node, ast.Name):
            return getattr(launch_support, node.id)
        return ast.literal_eval(node)
    found = {'ARGUMENTS': (), 'PARAMETERS': {}, 'FORWARDED': {}}
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                getattr(node.targets[0], 'id', None) in found:
            found[node.targets[0].id] = value(node.value)
    return found['ARGUMENTS'], found['PARAMETERS'], found['FORWARDED']


def parameter_table(node):
    """Return the ``PARAMS`` table of the node called ``node``, by parameter name."""
    import importlib
    pytest.importorskip('rclpy', reason="the nodes' tables import rclpy (pip install .[ros]; "
                        'python3 dev.py test installs the PyPI wheels)')
    module = importlib.import_module(f'manipulator_dynamics.nodes.{node}')
    return {p.name: p for p in module.PARAMS}


def markdown_rows(heading):
    """Return the cells of the first table under ``heading`` in docs/nodes.md (bars kept)."""
    import re
    text = open(os.path.join(ROOT, 'docs', 'nodes.md')).read()
    table = '| ' + text[text.index(heading + '\n'):].split('\n\n| ', 1)[1].split('\n\n')[0]
    rows = [re.split(r'(?<!\\)\|', line)[1:-1] for line in table.splitlines()]
    return [[cell.strip() for cell in row] for row in rows[2:]]


def code_names(cell):
    """Return the names in backticks of a README cell, leaving out what stands in parentheses."""
    import re
    while re.search(r'\([^()]*\)', cell):
        cell = re.sub(r'\([^()]*\)', '', cell)
    return cell.split('`')[1::2]


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=os.path.basename)
def test_every_launch_argument_sets_a_node_parameter_of_its_type(path):
    """
    Each argument a launch file declares reaches a parameter that its node's table has.

    Its default, where it has one, is read as that parameter's type (as ``ros2 launch`` does,
    through ``launch_support.typed``) and passes the table's own check; an argument forwarded to
    an included launch file is one that file declares.
    """
    from manipulator_dynamics.nodes.launch_support import typed

    arguments, parameters, forwarded = launch_data(path)
    declared = {name for name, _, _ in arguments}
    defaults = {name: default for name, default, _ in arguments}
    assert len(declared) == len(arguments), 'an argument declared twice'
    reached = set()
    for node, names in parameters.items():
        table = parameter_table(node)
        for parameter, argument in names.items():
            assert argument in declared, f'{argument} sets {node}.{parameter} but is not declared'
            reached.add(argument)
            if parameter == 'use_sim_time':        # every node has it: rclpy declares it
                continue
            assert parameter in table, f'{argument}: {node} has no parameter {parameter}'
            if defaults[argument]:
                row = table[parameter]
                value = typed(defaults[argument], row.default, argument)
                reason = row.check(value) if row.check else None
                assert reason is None, f'default {argument}:={defaults[argument]}: {reason}'
    for included, names in forwarded.items():
        target, _, _ = launch_data(os.path.join(ROOT, 'launch', included))
        for theirs, ours in names.items():
            assert ours in declared and theirs in {a for a, _, _ in target}, (included, theirs)
            reached.add(ours)
    assert declared - set(LAUNCH_LEVEL) <= reached, \
        f'declared but reaching no node: {sorted(declared - set(LAUNCH_LEVEL) - reached)}'


def test_the_docs_launch_table_lists_what_each_file_declares():
    rows = markdown_rows('## Launch files')
    documented = {code_names(row[0])[0]: set(code_names(row[2])) for row in rows}
    assert set(documented) == {os.path.basename(p) for p in LAUNCH_FILES}
    for path in LAUNCH_FILES:
        arguments, _, _ = launch_data(path)
        assert documented[os.path.basename(path)] == {name for name, _, _ in arguments}, path


def test_every_parameter_the_docs_document_is_in_its_nodes_table():
    rows = markdown_rows('## The nodes')
    nodes = {code_names(row[0])[0]: code_names(row[3]) for row in rows}
    assert set(nodes) == {'dynamics_node', 'trajectory_node', 'base_params_node',
                          'flexible_trajectory_node', 'sim_node'}
    for node, names in nodes.items():
        unknown = set(names) - set(parameter_table(node))
        assert names and not unknown, f'docs/nodes.md: {node} has no parameters {unknown}'


def test_launch_arguments_take_the_type_of_the_parameter_they_set():
    import re

    from manipulator_dynamics.nodes.launch_support import typed

    assert typed('[j1, j2]', [''], 'command_joints') == ['j1', 'j2']
    assert typed('[]', [''], 'command_joints') == ['']         # the nodes' "none given"
    assert typed('500', 0.0, 'rate') == 500.0 and isinstance(typed('500', 0.0, 'rate'), float)
    assert typed('true', False, 'use_sim_time') is True
    assert typed('on', '', 'payload_link') == 'on'              # a joint called "on" is a name
    assert typed('[1, 2]', [0.5], 'initial_positions') == [1.0, 2.0]
    for text, default, why in (('fast', 0.0, 'could not convert'),
                               ('maybe', False, 'true or false'),
                               ('j1', [''], 'a list such as'), ('[]', [0.5], 'at least one')):
        message = re.escape(f'launch argument arg:={text}: ') + '.*' + why
        with pytest.raises(ValueError, match=message):
            typed(text, default, 'arg')


def test_the_gazebo_cell_refuses_a_namespace_it_cannot_give_every_node():
    """A namespace reached dynamics.launch.py alone: the cell did not connect, unsaid."""
    from manipulator_dynamics.nodes.launch_support import cell_namespace_refusal
    assert cell_namespace_refusal('') is None
    why = cell_namespace_refusal('robot1')
    assert "cannot put the cell in namespace 'robot1'" in why
    assert 'dynamics.launch.py namespace:=robot1' in why
    with open(os.path.join(ROOT, 'launch', 'gazebo.launch.py')) as f:
        source = f.read()
    assert "cell_namespace_refusal(LaunchConfiguration('namespace').perform(context))" in source
    _, _, forwarded = launch_data(os.path.join(ROOT, 'launch', 'gazebo.launch.py'))
    assert 'namespace' not in forwarded['dynamics.launch.py'], 'the nodes alone namespaced'


def test_demo_launch_refuses_a_container_of_managed_nodes_and_keeps_it_when_unmanaged():
    """container:=true managed:=true dropped the container unsaid; managed:=false did too."""
    from manipulator_dynamics.nodes.launch_support import container_refusal
    assert container_refusal(False, True) is None and container_refusal(True, False) is None
    assert 'container:=true hosts unmanaged nodes only' in container_refusal(True, True)
    with open(os.path.join(ROOT, 'launch', 'demo.launch.py')) as f:
        source = f.read()
    assert "given_parameters(context, PARAMETERS[n], TABLES[n]).get('managed')" in source
    assert 'why = container_refusal(container, managed)' in source


def test_a_launchs_own_temporary_file_is_removed_once(tmp_path):
    from manipulator_dynamics.nodes.launch_support import remove_file
    path = tmp_path / 'node_container_x.yaml'
    path.write_text('{}')
    remove_file(str(path))
    assert not path.exists()
    remove_file(str(path))                       # gone already: nothing to say
