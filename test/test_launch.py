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

"""Launch files: what runs here, and launch_testing tests for where ROS 2 is installed.

``launch`` and ``launch_testing`` come with a ROS 2 installation only (the PyPI project called
``launch`` is unrelated): the launch_testing tests in test/launch/ skip without them, and the same
scenarios run here through the nodes' console scripts (test_nodes_*.py).  What does run here: every
executable a launch file names is a console script of setup.py, and every argument it declares is
documented.
"""

import ast
import glob
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
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
    assert {'dynamics.launch.py', 'demo.launch.py', 'flexible.launch.py'} <= names


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=os.path.basename)
def test_launch_executables_exist(path):
    executables = keyword_strings(path, 'executable')
    assert executables, f'{path} starts no node'
    assert set(executables) <= console_scripts(), set(executables) - console_scripts()
    assert set(keyword_strings(path, 'package')) == {'manipulator_dynamics'}


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=os.path.basename)
def test_launch_files_define_generate_launch_description(path):
    tree = ast.parse(open(path).read())
    assert any(isinstance(n, ast.FunctionDef) and n.name == 'generate_launch_description'
               for n in tree.body)
