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

"""Package hygiene: the ament_python layout, licence headers, and the ament linters' rules."""

import ast
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

from helpers import ROOT
import pytest

PYTHON_FILES = sorted(
    glob.glob(os.path.join(ROOT, 'manipulator_dynamics', '**', '*.py'), recursive=True)
    + glob.glob(os.path.join(ROOT, 'test', '**', '*.py'), recursive=True)
    + glob.glob(os.path.join(ROOT, 'launch', '*.py'))
    + glob.glob(os.path.join(ROOT, 'benchmarks', '*.py'))
    + glob.glob(os.path.join(ROOT, 'tools', '*.py'))
    + [os.path.join(ROOT, 'setup.py'), os.path.join(ROOT, 'dev.py')])


def setup_keywords():
    """Return the keyword arguments of the setup() call in setup.py, as AST nodes."""
    tree = ast.parse(open(os.path.join(ROOT, 'setup.py')).read())
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and getattr(node.func, 'id', '') == 'setup')
    return {kw.arg: kw.value for kw in call.keywords}


#: Where each module the package imports comes from, as package.xml names it (rosdep keys).
ROSDEP_KEYS = {
    'numpy': 'python3-numpy', 'numba': 'python3-numba', 'scipy': 'python3-scipy',
    'pandas': 'python3-pandas',
    'yaml': 'python3-yaml', 'lxml': 'python3-lxml', 'matplotlib': 'python3-matplotlib',
    'rclpy': 'rclpy', 'rcl_interfaces': 'rcl_interfaces',
    'builtin_interfaces': 'builtin_interfaces',
    'sensor_msgs': 'sensor_msgs', 'std_msgs': 'std_msgs', 'std_srvs': 'std_srvs',
    'geometry_msgs': 'geometry_msgs',
    'trajectory_msgs': 'trajectory_msgs', 'launch': 'launch', 'launch_ros': 'launch_ros',
    'ament_index_python': 'ament_index_python', 'rosgraph_msgs': 'rosgraph_msgs',
    'lifecycle_msgs': 'lifecycle_msgs', 'diagnostic_msgs': 'diagnostic_msgs',
    'rosbag2_py': 'rosbag2_py',
}
#: Imported only for an optional extra, where the code runs without it: no exec_depend (and
#: on no apt that rosdep knows: test_optional.py checks the code runs without each).
OPTIONAL = {'dask': 'the fleet extra: manipulator-dynamics fleet runs serially without it',
            'mujoco': "the sim extra: sim_node's engine mujoco; without it, the internal engine",
            'threadpoolctl': 'the threads extra: without it BLAS keeps its threads (more CPU)',
            'rosbags': 'the rosbag extra: rosbag2 recordings without ROS 2 (rosbag2_py with)'}
#: The rosdep keys package.xml may name, each a system package on every supported platform.
ALLOWED_KEYS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'rosdep_keys.yaml')


def allowed_keys():
    """Return the allowed rosdep keys (``rosdep_keys.yaml``) and the file's whole content."""
    import yaml
    with open(ALLOWED_KEYS) as f:
        data = yaml.safe_load(f)
    return set(data['python']) | set(data['ros']), data


def package_keys():
    """Return every dependency key package.xml names, by the tag that names it."""
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    return {(e.tag, e.text.strip()) for e in root if e.tag.endswith('depend')}


def test_every_key_of_package_xml_is_a_system_package_on_every_platform():
    """A key outside rosdep_keys.yaml (a pip key, none at all) would stop rosdep and bloom."""
    allowed, _ = allowed_keys()
    unknown = sorted(f'<{tag}>{key}' for tag, key in package_keys() if key not in allowed)
    assert not unknown, (f'package.xml names {", ".join(unknown)}: not in rosdep_keys.yaml, the '
                         'keys checked to resolve to a system package on every platform')
    assert not [key for _, key in package_keys() if key.endswith('-pip')]


@pytest.mark.skipif(not os.environ.get('ROSDISTRO_DIR'), reason='needs a rosdistro checkout: '
                    'ROSDISTRO_DIR=<ros/rosdistro> (its rosdep/*.yaml and <distro>/'
                    'distribution.yaml)')
def test_rosdep_keys_resolve_to_system_packages():
    """Each allowed key: apt on every platform (python), released in every distribution (ros)."""
    import yaml
    here = os.environ['ROSDISTRO_DIR']
    _, data = allowed_keys()
    rules = {}
    for name in ('base.yaml', 'python.yaml'):
        with open(os.path.join(here, 'rosdep', name)) as f:
            rules.update(yaml.safe_load(f))
    for key, apt in data['python'].items():
        assert key in rules, f'{key}: no rosdep rule'
        for platform in data['platforms']:
            rule = rules[key].get(platform)
            assert isinstance(rule, list) and apt in rule, (key, platform, rule)
    for distro in data['distributions']:
        with open(os.path.join(here, distro, 'distribution.yaml')) as f:
            repositories = yaml.safe_load(f)['repositories']
        released = {package for name, repository in repositories.items()
                    for package in (repository.get('release') or {}).get(
                        'packages', [name] if repository.get('release') else [])}
        missing = [key for key in data['ros'] if key not in released]
        assert not missing, f'{distro} releases none of {missing}'


def imported_modules(paths):
    """Top-level modules imported by ``paths`` (absolute imports only)."""
    found = set()
    for path in paths:
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.Import):
                found.update(a.name.split('.')[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split('.')[0])
    return found


def test_package_xml_declares_what_the_code_imports():
    """Every module the package and its launch files import is an exec_depend of package.xml."""
    code = [p for p in PYTHON_FILES
            if os.sep + 'manipulator_dynamics' + os.sep in p or os.sep + 'launch' + os.sep in p]
    code = [p for p in code if os.sep + 'test' + os.sep not in p]
    modules = imported_modules(code) - set(sys.stdlib_module_names) - {'manipulator_dynamics'}
    modules -= set(OPTIONAL)
    unknown = modules - set(ROSDEP_KEYS)
    assert not unknown, f'imported but not in ROSDEP_KEYS (nor in package.xml): {unknown}'
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    exec_depends = {e.text for e in root.findall('exec_depend')}
    missing = {ROSDEP_KEYS[m] for m in modules} - exec_depends
    assert not missing, f'package.xml lacks <exec_depend> for {sorted(missing)}'


def test_package_xml():
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    assert root.get('format') == '3'
    assert root.findtext('name') == 'manipulator_dynamics'
    exec_depends = {e.text for e in root.findall('exec_depend')}
    assert {'rclpy', 'sensor_msgs', 'trajectory_msgs', 'std_msgs', 'std_srvs', 'python3-numpy',
            'python3-numba', 'python3-scipy', 'python3-yaml', 'python3-lxml'} <= exec_depends
    assert root.find('export/build_type').text == 'ament_python'
    version = ast.literal_eval(setup_keywords()['version'])
    assert root.findtext('version') == version


def test_package_xmls_version_floors_are_setup_pys():
    """A ``version_gte`` of package.xml is setup.py's floor, and numba's is stated in both."""
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    floors = dict(re.fullmatch(r'([\w-]+)>=([\d.]+)', r).groups() for r in
                  ast.literal_eval(setup_keywords()['install_requires']) if '>=' in r)
    module = {key: name for name, key in ROSDEP_KEYS.items()}
    gte = {module[e.text]: e.get('version_gte') for e in root.findall('exec_depend')
           if e.get('version_gte')}
    assert gte, 'package.xml states no version floor'
    assert 'numba' in gte
    for name, version in gte.items():
        assert floors[name] == version, (name, version, floors.get(name))


def test_ament_layout():
    assert os.path.isfile(os.path.join(ROOT, 'resource', 'manipulator_dynamics'))
    cfg = open(os.path.join(ROOT, 'setup.cfg')).read()
    assert 'script_dir=$base/lib/manipulator_dynamics' in cfg
    assert 'install_scripts=$base/lib/manipulator_dynamics' in cfg
    source = open(os.path.join(ROOT, 'setup.py')).read()
    for needle in ("'resource/' + package_name", "'launch'", "'config'", "['package.xml']"):
        assert needle in source


def test_console_scripts_exist():
    scripts = ast.literal_eval(setup_keywords()['entry_points'])['console_scripts']
    for entry in scripts:
        name, target = (s.strip() for s in entry.split('='))
        module, func = target.split(':')
        mod = __import__(module, fromlist=[func])
        assert callable(getattr(mod, func)), entry


def test_public_names_are_what_they_name():
    """Every name of ``__all__`` loads (lazily) to a function or class, never to a module."""
    import pkgutil
    import types

    import manipulator_dynamics as md
    for info in pkgutil.walk_packages(md.__path__, 'manipulator_dynamics.'):
        if not {'nodes', 'demo'} & set(info.name.split('.')):  # rclpy: test_nodes_* import them
            __import__(info.name)           # a submodule import must shadow no public name
    for name in md.__all__:
        value = getattr(md, name)
        assert not isinstance(value, types.ModuleType), name
    assert sorted(md.__all__) == sorted(md._MODULE_OF)


def package_modules():
    """Map the dotted name of each module of the package to its file."""
    modules = {}
    for path in PYTHON_FILES:
        parts = os.path.relpath(path, ROOT).split(os.sep)
        if parts[0] == 'manipulator_dynamics':
            modules['.'.join(parts)[:-len('.py')].removesuffix('.__init__')] = path
    return modules


def import_statements():
    """
    Yield ``(module, line, module imported from, names)`` for every import of the package.

    Function-level imports included; ``import a.b`` gives ``('a.b', [])``, ``from .x import y``
    the absolute ``x`` and ``['y']``.
    """
    for name, path in package_modules().items():
        package = (name if path.endswith('__init__.py') else name.rsplit('.', 1)[0]).split('.')
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.ImportFrom):
                module = ('.'.join(package[:len(package) - node.level + 1]
                                   + ([node.module] if node.module else []))
                          if node.level else node.module)
                yield name, node.lineno, module, [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                for a in node.names:
                    yield name, node.lineno, a.name, []


def package_imports():
    """Map each module of the package to the package modules it imports, anywhere in its code."""
    modules = {}
    for name, _, module, names in import_statements():
        targets = modules.setdefault(name, set())
        targets.add(module)
        targets.update(f'{module}.{n}' for n in names)
    modules.update({m: set() for m in package_modules() if m not in modules})
    return {m: {t for t in ts if t in modules and t != m} for m, ts in modules.items()}


def test_no_import_cycle():
    """The layers import downwards only: no module reaches back, even from inside a function."""
    graph = package_imports()
    assert 'manipulator_dynamics.rigid.rnea' in graph
    state = {}

    def visit(m, path):
        if state.get(m) == 'done':
            return
        assert state.get(m) != 'open', 'import cycle: ' + ' -> '.join(path + [m])
        state[m] = 'open'
        for t in sorted(graph[m]):
            if not t.endswith('__init__') and t != 'manipulator_dynamics':
                visit(t, path + [m])
        state[m] = 'done'

    for m in sorted(graph):
        visit(m, [])


def test_kernels_never_import_nodes():
    """Layers: the library never imports nodes/ or demo/, and no node imports a demo."""
    def layer(module):
        parts = module.split('.')
        return 'demo' if 'demo' in parts else 'nodes' if 'nodes' in parts else 'library'

    above = {'library': {'nodes', 'demo'}, 'nodes': {'demo'}, 'demo': set()}
    for m, targets in package_imports().items():
        assert not [t for t in targets if layer(t) in above[layer(m)]], m


def test_contact_detection_reads_nothing_from_identification_nor_anything_private():
    """
    contact/ stands beside identification/, not on it: logs come from recordings/.

    Nor does a module import a private name (``_name``) of another package's module: a helper
    that two packages use is public where it is defined.  (The package's private modules,
    ``_jit``, ``_inputs``, ``_parallel``, are its shared internals: theirs are not counted.)
    """
    graph = package_imports()
    contact = [m for m in graph if m.startswith('manipulator_dynamics.contact')]
    assert contact
    for m in contact:
        assert not [t for t in graph[m] if '.identification' in t], m
    for path in PYTHON_FILES:
        if os.path.relpath(path, ROOT).split(os.sep)[0] != 'manipulator_dynamics':
            continue
        private = [f'{"." * node.level}{node.module}.{a.name}'
                   for node in ast.walk(ast.parse(open(path).read()))
                   if isinstance(node, ast.ImportFrom) and node.level != 1 and node.module
                   and not node.module.rsplit('.', 1)[-1].startswith('_')
                   for a in node.names if a.name.startswith('_') and not a.name.startswith('__')]
        assert not private, (path, private)


#: The library's uses of rclpy, each inside the function that needs it: ROS 2's rosbag2 reader,
#: tried only where rosbag2_py imports (a ROS 2 installation, rclpy with it), its messages
#: deserialised as ROS 2 does; and the wire format's serialisers, which the nodes alone call,
#: checking their bytes against rclpy's own before a node publishes them.
ROS_ONLY = {(os.path.join('recordings', 'formats.py'), 'rclpy.serialization'),
            ('wire.py', 'rclpy.serialization')}


def test_runtime_code_never_imports_test_oracles_or_ros():
    """Pinocchio is a test oracle, rclpy is for nodes/ and demo/: the library imports neither."""
    package = os.path.join(ROOT, 'manipulator_dynamics')
    for path in PYTHON_FILES:
        parts = path.split(os.sep)
        if 'manipulator_dynamics' not in parts or {'nodes', 'demo'} & set(parts):
            continue
        tree = ast.parse(open(path).read())
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ''] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                if (os.path.relpath(path, package), name) in ROS_ONLY:
                    continue
                assert name.split('.')[0] not in ('pinocchio', 'rclpy'), (path, name)


#: The header ament_copyright asks of every source file (its apache2 template), comment marks off.
HEADER = """Copyright 2026 The manipulator_dynamics Authors

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.""".splitlines()
SOURCE_ENDINGS = ('.py', '.sh', '.bash', '.c', '.cc', '.cpp', '.h', '.hpp', '.cmake')


def source_files():
    """Every source file of the checkout: by its ending, or a script by its ``#!`` line."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith('.') or d == '.ci']
        dirs[:] = [d for d in dirs if d not in ('build', 'install', 'log', '__pycache__')
                   and not d.endswith('.egg-info')]
        for name in files:
            path = os.path.join(folder, name)
            with open(path, 'rb') as f:
                script = f.read(2) == b'#!'
            if name.endswith(SOURCE_ENDINGS) or script:
                found.append(path)
    return sorted(found)


def test_every_source_file_is_found():
    """The header test below sees the scripts without an ending too, and nothing built."""
    paths = {os.path.relpath(p, ROOT) for p in source_files()}
    assert {'.ci/run', 'dev.py', 'setup.py', 'launch/dynamics.launch.py',
            'manipulator_dynamics/rigid/rnea.py', 'test/launch/test_demo_launch.py'} <= paths
    assert not [p for p in paths if p.startswith(('.venv', '.git' + os.sep))]


@pytest.mark.parametrize('path', source_files(), ids=lambda p: os.path.relpath(p, ROOT))
def test_licence_header(path):
    """
    The Apache-2.0 header, line for line, at the top of every source file (after any ``#!``).

    ament_copyright checks this where ROS 2 is installed; no registry here serves it, so this
    test asks the same of every file, whatever the machine.
    """
    lines = open(path).read().splitlines()
    start = 1 if lines and lines[0].startswith('#!') else 0
    block = lines[start:start + len(HEADER)]
    assert [line[2:] if line.startswith('# ') else line.lstrip('#') for line in block] == \
        HEADER, f"{os.path.relpath(path, ROOT)}: no Apache-2.0 header at its top (copy dev.py's)"


def test_licence_and_contributing_files_are_apache_2():
    """Beside the headers, ament_copyright looks for the licence and its contribution clause."""
    licence = open(os.path.join(ROOT, 'LICENSE')).read()
    assert 'Apache License' in licence and 'Version 2.0, January 2004' in licence
    assert 'TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION' in licence
    contributing = open(os.path.join(ROOT, 'CONTRIBUTING.md')).read()
    assert '5. Submission of Contributions.' in contributing


def top_level_names(path):
    """Names a module's source binds at its top level: functions, classes, assignments, imports."""
    names = set()
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split('.')[0] for a in node.names)
    return names


def module_names(name):
    """
    Return the names module ``name`` of this package has, without what only ROS 2 installs.

    The module is imported; where that fails on a module from outside the package (``launch``,
    which a ROS 2 installation brings; the checkout's own ``launch/`` folder can stand in for a
    missing one as a namespace package), its names are read from its source instead.
    """
    import importlib
    try:
        return set(dir(importlib.import_module(name)))
    except ModuleNotFoundError as e:
        if (e.name or '').split('.')[0] == 'manipulator_dynamics':
            raise
        return top_level_names(importlib.util.find_spec(name).origin)


def test_module_names_are_read_from_source_where_the_import_needs_ros2(monkeypatch):
    """Without ``launch`` the names come from the source; a missing module of ours still fails."""
    import importlib

    real = importlib.import_module

    def without_launch(name, *args):
        if name == 'manipulator_dynamics.nodes.launch_support':
            raise ModuleNotFoundError("No module named 'launch.substitutions'",
                                      name='launch.substitutions')
        return real(name, *args)

    monkeypatch.setattr(importlib, 'import_module', without_launch)
    names = module_names('manipulator_dynamics.nodes.launch_support')
    assert {'given_parameters', 'typed', 'parameter_files', 'declared', 'yaml'} <= names
    assert 'LaunchConfiguration' not in names           # imported inside functions only
    with pytest.raises(ModuleNotFoundError):
        module_names('manipulator_dynamics.no_such_module')


def test_scripts_outside_the_package_import_names_that_exist():
    """
    Launch files, tools and benchmarks import only names the package has.

    A module that moves breaks them silently until a user runs them (gazebo.launch.py once
    imported load_model from the module it had left); this reads their imports and resolves each
    one, without starting ROS and without ROS 2's launch tools (:func:`module_names`).
    """
    import importlib

    found = 0
    for folder in ('launch', 'tools', 'benchmarks'):
        for path in glob.glob(os.path.join(ROOT, folder, '*.py')):
            for node in ast.walk(ast.parse(open(path).read())):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and \
                        (node.module or '').split('.')[0] == 'manipulator_dynamics':
                    names = module_names(node.module)
                    for alias in node.names:
                        found += 1
                        assert alias.name in names or importlib.util.find_spec(
                            f'{node.module}.{alias.name}'), \
                            f'{os.path.relpath(path, ROOT)}: {node.module} has no {alias.name}'
    assert found > 5


def test_the_changelog_is_what_catkin_prepare_release_reads():
    """CHANGELOG.rst: its title, then Forthcoming or package.xml's version, each underlined."""
    import re
    with open(os.path.join(ROOT, 'CHANGELOG.rst')) as f:
        lines = f.read().splitlines()
    assert lines[1] == 'Changelog for package manipulator_dynamics'
    assert lines[0] == lines[2] == '^' * len(lines[1])
    headings = [(a, b) for a, b in zip(lines, lines[1:]) if b and set(b) == {'-'}]
    assert headings and all(len(b) == len(a) for a, b in headings), headings
    version = ET.parse(os.path.join(ROOT, 'package.xml')).getroot().findtext('version')
    first = headings[0][0]
    released = rf'{re.escape(version)} \(\d{{4}}-\d\d-\d\d\)'
    assert first == 'Forthcoming' or re.fullmatch(released, first), first


def test_the_launch_tests_are_collected_where_launch_testings_plugin_is_loaded():
    """
    test/launch runs under pytest where launch_testing's plugin is loaded, and only there.

    The plugin is asked for by the name its entry point registers (and where launch_testing
    is installed, that entry point is read back); no option turns it off, and the test extra's
    pytest is one it loads on (below 9).
    """
    import configparser
    import importlib.metadata
    import importlib.util
    from types import SimpleNamespace
    # By its path: a folder's conftest.py is also imported under the name ``conftest``.
    spec = importlib.util.spec_from_file_location('root_conftest',
                                                  os.path.join(ROOT, 'test', 'conftest.py'))
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)

    def Config(*plugins):                       # noqa: N802 - pytest's config, as far as read
        return SimpleNamespace(pluginmanager=SimpleNamespace(hasplugin=plugins.__contains__))

    launch = conftest.LAUNCH_TESTS
    assert conftest.pytest_ignore_collect(launch, Config()) is True
    assert conftest.pytest_ignore_collect(launch, Config('launch_testing')) is None
    assert conftest.pytest_ignore_collect(os.path.join(ROOT, 'test', 'rigid'), Config()) is None
    ini = configparser.ConfigParser()
    ini.read(os.path.join(ROOT, 'setup.cfg'))
    assert 'launch' not in ini.get('tool:pytest', 'addopts', fallback='')
    extra = re.search(r"'test': \[(.*?)\]", open(os.path.join(ROOT, 'setup.py')).read(), re.S)
    assert "'pytest>=7,<9'" in extra[1]
    try:
        importlib.metadata.distribution('launch_testing')
    except importlib.metadata.PackageNotFoundError:
        return                  # no ROS 2 here: the name is launch_testing's setup.py's
    names = {e.name for e in importlib.metadata.entry_points(group='pytest11')
             if e.value.startswith('launch_testing.')}
    assert conftest.LAUNCH_TESTING_PLUGIN in names, names


#: The layers in their order, bottom up, and what docs/design.md's Layout says of them.
LAYERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'layers.yaml')


def layers():
    """Return layers.yaml's layers, bottom up: each a list of names that share its rank."""
    import yaml
    with open(LAYERS) as f:
        return yaml.safe_load(f)['layers']


def layer_ranks():
    """Map each layer (a module or subpackage name, or the facade) to its rank, bottom up."""
    return {name: rank for rank, names in enumerate(layers()) for name in names}


def layer_of(module):
    """Return the layer of a package module: its first name below the package, or the facade."""
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else 'manipulator_dynamics'


def test_layers_import_in_designs_order():
    """
    Every import goes to the module's own layer or one before it; every module is in a layer.

    The layers and their order are layers.yaml's.  ``from .. import rigid`` imports the
    subpackage, not the facade; a name the facade holds (``from .. import udut``, a function)
    is an import of the facade.
    """
    ranks = layer_ranks()
    modules = set(package_imports())
    unplaced = sorted({layer_of(m) for m in modules} - set(ranks))
    assert not unplaced, f'modules in no layer of layers.yaml: {unplaced}'
    assert not set(ranks) - {layer_of(m) for m in modules}, 'a layer of nothing'
    upward = set()
    for name, line, module, names in import_statements():
        # each name a submodule, else the module itself (the facade, for a public name)
        targets = ({f'{module}.{n}' if f'{module}.{n}' in modules else module for n in names}
                   if names else {module}) & modules
        upward.update(f'{name} (layer {layer_of(name)}) imports {t} (layer {layer_of(t)}), '
                      f'line {line}' for t in targets
                      if ranks[layer_of(t)] > ranks[layer_of(name)])
    upward = sorted(upward)
    assert not upward, 'imports up the layers of layers.yaml:\n' + '\n'.join(upward)


def test_design_lists_the_layers_in_their_order():
    """docs/design.md's Layout names the layers of layers.yaml, in their order, bottom up."""
    text = open(os.path.join(ROOT, 'docs', 'design.md')).read()
    tree = re.search(r'## Layout\n.*?```\nmanipulator_dynamics/\n(.*?)```', text, re.S)[1]
    listed = []
    for line in tree.splitlines():
        if re.match(r'  \S', line):      # a layer's line: its names, two spaces, what it is
            listed += [word.removesuffix('.py').removesuffix('/').replace(
                '__init__', 'manipulator_dynamics')
                for word in re.split(r'\s{2,}', line.strip())[0].split()]
    in_order = [name for names in layers() for name in names]
    assert listed == in_order, f'design.md lists {listed}'


def test_the_tests_folders_mirror_the_subpackages():
    """
    Each folder of test/ is a subpackage's (or the package's as a whole, or launch_testing's).

    So a subpackage's tests are found where its modules are: test/recordings/ for recordings/.
    """
    subpackages = {name.split('.')[1] for name, path in package_modules().items()
                   if path.endswith('__init__.py') and name.count('.') == 1}
    folders = {entry.name for entry in os.scandir(os.path.join(ROOT, 'test'))
               if entry.is_dir() and not entry.name.startswith(('.', '__'))}
    assert folders - {'package', 'launch'} <= subpackages, sorted(folders - subpackages)
    assert 'recordings' in folders and 'recordings' in subpackages
