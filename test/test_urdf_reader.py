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
The URDF reader (lxml alone): every URDF of example-robot-data gives the model it gave before.

The package read a URDF's elements with yourdfpy, which imports trimesh (0.2-0.4 s of every
command's and node's start) and is on no distribution's apt.  The model each file gave then is
the oracle here, to the bit: yourdfpy's reading put in the reader's place, every field of the
two models compared byte for byte.  What yourdfpy let pass that urdfdom refuses (an inertia
without its six values, a joint without a type) is refused here, naming the link or joint.
"""

from collections.abc import Mapping
import dataclasses
import io
import os
import warnings

from helpers import ERD, erd_urdfs
import manipulator_dynamics as md
from manipulator_dynamics import robots, urdf
import numpy as np
import pytest

DEMO = robots.path('demo_arm')


def yourdfpy_parse(data, with_root=False):
    """Read as the package did before: lxml for the syntax, yourdfpy for the elements."""
    from lxml import etree
    import yourdfpy
    root = etree.fromstring(data, parser=etree.XMLParser(remove_comments=True))
    robot = yourdfpy.URDF.load(io.BytesIO(data), load_meshes=False, build_scene_graph=False,
                               load_collision_meshes=False,
                               build_collision_scene_graph=False).robot
    return (robot, root) if with_root else robot


def same(a, b, where='model'):
    """Assert ``a`` and ``b`` equal to the bit: arrays byte for byte, dtypes and shapes too."""
    if dataclasses.is_dataclass(a):
        for field in dataclasses.fields(a):
            same(getattr(a, field.name), getattr(b, field.name), f'{where}.{field.name}')
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        assert a.tobytes() == b.tobytes(), f'{where}: {a} != {b}'
    elif isinstance(a, Mapping):
        assert list(a) == list(b), where
        for key in a:
            same(a[key], b[key], f'{where}[{key!r}]')
    elif isinstance(a, tuple) and hasattr(a, '_fields'):
        for name in a._fields:
            same(getattr(a, name), getattr(b, name), f'{where}.{name}')
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            same(x, y, f'{where}[{k}]')
    elif isinstance(a, float):
        assert isinstance(b, float) and np.float64(a).tobytes() == np.float64(b).tobytes(), \
            f'{where}: {a!r} != {b!r}'
    else:
        assert a == b, f'{where}: {a!r} != {b!r}'


def loaded(path):
    """Return the model of ``path`` (inertias as they are), or the error it raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', md.InertiaWarning)
            return md.load_model(path, check_inertia='ignore')
    except md.URDFError as e:
        return e


@pytest.mark.skipif(ERD is None, reason='example-robot-data is not installed (pip install '
                    '.[test])')
@pytest.mark.parametrize('path', erd_urdfs() + [DEMO],
                         ids=lambda p: os.path.relpath(p, ERD or ''))
def test_every_urdf_gives_the_model_it_gave_with_yourdfpy(path, monkeypatch):
    pytest.importorskip('yourdfpy', reason='yourdfpy is the reader this one replaced, the '
                        'oracle of the same model (pip install .[test])')
    ours = loaded(path)
    monkeypatch.setattr(urdf, '_parse', yourdfpy_parse)
    try:
        theirs = loaded(path)
    except Exception as e:  # noqa: B902 - yourdfpy's own errors: ours must refuse too
        theirs = e
    if isinstance(theirs, Exception):
        assert isinstance(ours, md.URDFError), (ours, theirs)
        return
    assert not isinstance(ours, Exception), ours
    same(ours, theirs)


def test_the_demo_arm_is_read_without_trimesh():
    import subprocess
    import sys
    script = ('import sys; from manipulator_dynamics import robots; import manipulator_dynamics '
              "as md; md.load_model(robots.path('demo_arm')); "
              "print(sorted(m for m in ('trimesh', 'yourdfpy') if m in sys.modules))")
    result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]', result.stdout


def demo_with(old, new):
    """Return the demo arm's URDF text with ``old`` replaced by ``new`` (once, checked)."""
    with open(DEMO) as f:
        text = f.read()
    assert old in text, old
    return text.replace(old, new, 1)


def first(tag):
    """Return the first ``<tag ...>`` element's opening text of the demo arm's URDF."""
    with open(DEMO) as f:
        text = f.read()
    start = text.index(f'<{tag} ')
    return text[start:text.index('>', start) + 1]


@pytest.mark.parametrize('edit, message', [
    (lambda: (first('inertia'), '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0"/>'),
     r"link 'base_link': inertial: <inertia> has no iyz"),
    (lambda: (first('mass'), '<mass/>'), r"link 'base_link': inertial: <mass> has no value"),
    (lambda: (first('mass'), '<mass value="heavy"/>'),
     r"link 'base_link': inertial: <mass> value='heavy' is not 1 number"),
    (lambda: ('<joint name="joint1" type="revolute">', '<joint name="joint1">'),
     r"joint 'joint1' has no type"),
    (lambda: ('<joint name="joint1" type="revolute">', '<joint type="revolute">'),
     r'a <joint> without a name \(line \d+\)'),
    (lambda: (first('axis'), '<axis xyz="0 0"/>'),
     r"joint 'joint1': <axis> xyz='0 0' is not 3 numbers"),
    (lambda: (first('limit'), '<limit lower="-1" upper="one" effort="10" velocity="1"/>'),
     r"joint 'joint1': <limit> upper='one' is not 1 number"),
])
def test_what_urdfdom_refuses_is_refused_by_name(edit, message):
    old, new = edit()
    with pytest.raises(md.URDFError, match=message):
        md.load_model(demo_with(old, new))
