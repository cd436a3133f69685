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
What is optional is optional: every module imports, and a model loads, without any of it.

A system install (rosdep, a .deb) brings only package.xml's keys, all on apt: MuJoCo, Dask,
threadpoolctl, rosbags are extras (setup.py), and yourdfpy is no longer read.  A fresh process
is told none of them exists, then imports every module of the package and computes a model's
dynamics.
"""

import subprocess
import sys

#: The optional modules, and the extra that brings each (setup.py's extras_require).
OPTIONAL = {'mujoco': 'sim', 'dask': 'fleet', 'distributed': 'fleet', 'threadpoolctl': 'threads',
            'rosbags': 'rosbag', 'yourdfpy': 'test', 'trimesh': None}

SCRIPT = """
import sys
for name in {optional!r}:
    sys.modules[name] = None                  # import name: ImportError, as if not installed
import importlib, pkgutil
import manipulator_dynamics as md
failed = []
for info in pkgutil.walk_packages(md.__path__, 'manipulator_dynamics.'):
    if info.name.endswith('__main__'):
        continue
    try:
        importlib.import_module(info.name)
    except ImportError as e:
        failed.append(f'{{info.name}}: {{e}}')
from manipulator_dynamics import robots
model = md.load_model(robots.path('demo_arm'))
md.inverse_dynamics(model, [0.1] * model.n, [0.0] * model.n, [0.0] * model.n)
print('failed:', failed)
"""


def test_every_module_imports_and_a_model_loads_without_the_optional_modules():
    result = subprocess.run([sys.executable, '-c', SCRIPT.format(optional=sorted(OPTIONAL))],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith('failed: []'), result.stdout


def test_the_optional_modules_are_setups_extras():
    from test_package import setup_keywords
    import ast
    extras = ast.literal_eval(setup_keywords()['extras_require'])
    requires = ' '.join(ast.literal_eval(setup_keywords()['install_requires']))
    for module, extra in OPTIONAL.items():
        assert module not in requires, f'{module} is in install_requires: not optional'
        if extra is not None:
            assert any(module in r for r in extras[extra]), (module, extra, extras[extra])
