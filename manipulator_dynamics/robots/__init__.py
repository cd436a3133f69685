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
Bundled robots and random ones.

``demo_arm`` (7 joints), ``demo_arm_gripper`` (a tree with prismatic fingers), ``parallelogram``
(the tree of a planar four-bar; its loop closure is config/parallelogram_loops.yaml).

:func:`random_urdf` makes seeded random fixed-base trees and chains (any axes, rpy origins, merged
fixed links, every joint type) for tests and benchmarks.
"""

import math
import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ('demo_arm', 'demo_arm_gripper', 'parallelogram')


def path(name='demo_arm'):
    """Path of a bundled URDF."""
    if name not in NAMES:
        raise ValueError(f"no bundled robot '{name}' (bundled: {', '.join(NAMES)})")
    return os.path.join(_HERE, name + '.urdf')


def _rpy(rng):
    return ' '.join(f'{v:.6f}' for v in rng.uniform(-math.pi, math.pi, 3))


def _xyz(rng, scale=0.3):
    return ' '.join(f'{v:.6f}' for v in rng.uniform(-scale, scale, 3))


def _inertial(rng):
    """Make a physically valid random inertial: principal moments obey the triangle inequality."""
    mass = rng.uniform(0.2, 5.0)
    a, b = rng.uniform(0.005, 0.05, 2)
    c = rng.uniform(abs(a - b) + 1e-4, a + b)         # triangle inequality, strictly
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = rng.uniform(0, math.pi)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    R = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K
    inertia = R @ np.diag([a, b, c]) @ R.T
    i = inertia
    return (f'<inertial><origin xyz="{_xyz(rng, 0.2)}" rpy="{_rpy(rng)}"/>'
            f'<mass value="{mass:.6f}"/>'
            f'<inertia ixx="{i[0, 0]:.9f}" ixy="{i[0, 1]:.9f}" ixz="{i[0, 2]:.9f}" '
            f'iyy="{i[1, 1]:.9f}" iyz="{i[1, 2]:.9f}" izz="{i[2, 2]:.9f}"/></inertial>')


def random_urdf(seed, n=8, branching=0.4, fixed_links=3, prismatic=0.25, continuous=0.15):
    """
    Make a random fixed-base tree robot as URDF text: any axes, rpy origins, fixed links.

    ``branching`` is the chance that a joint hangs from a random earlier link instead of the last
    one (0 gives a chain).
    """
    rng = np.random.default_rng(seed)
    links = ['base']
    bodies = {'base': ''}
    has_child = set()
    movable = 0
    joints = []
    while movable < n:
        parent = links[-1] if rng.uniform() > branching else links[rng.integers(len(links))]
        name = f'l{len(links)}'
        fixed = fixed_links > 0 and rng.uniform() < 0.2
        if fixed:
            fixed_links -= 1
            kind = 'fixed'
        else:
            u = rng.uniform()
            kind = 'prismatic' if u < prismatic else ('continuous' if u < prismatic + continuous
                                                      else 'revolute')
            movable += 1
        bodies[name] = _inertial(rng) if rng.uniform() > 0.1 or kind == 'fixed' else ''
        has_child.add(parent)
        axis = rng.normal(size=3)
        axis_text = ' '.join(f'{v:.6f}' for v in axis / np.linalg.norm(axis))
        bound = {'revolute': 2.5, 'prismatic': 0.5}.get(kind)
        limit = (f'<limit lower="{-bound}" upper="{bound}" effort="100" velocity="3"/>'
                 if bound else '')
        joints.append(f'<joint name="j{len(links)}" type="{kind}"><parent link="{parent}"/>'
                      f'<child link="{name}"/><origin xyz="{_xyz(rng)}" rpy="{_rpy(rng)}"/>'
                      f'<axis xyz="{axis_text}"/>{limit}</joint>')
        links.append(name)
    for name in links[1:]:              # every tip gets mass, so that M is positive definite
        if name not in has_child and not bodies[name]:
            bodies[name] = _inertial(rng)
    parts = [f'<link name="{name}">{body}</link>' for name, body in bodies.items()]
    return f'<robot name="random{seed}">' + ''.join(parts) + ''.join(joints) + '</robot>'


def with_ros2_control(urdf, controllers_yaml, joints=None,
                      plugin='gz_ros2_control/GazeboSimSystem'):
    """
    Add a ``<ros2_control>`` system and the Gazebo plugin to a URDF: effort in, state out.

    Every movable joint (or ``joints``) gets an ``effort`` command interface and ``position``,
    ``velocity`` and ``effort`` state interfaces, which ros2_control's joint_state_broadcaster and
    ``forward_command_controller`` (``interface_name: effort``) use; the Gazebo plugin
    (gz_ros2_control) loads ``controllers_yaml``.  ``urdf`` is a path or the XML text; the
    result is the XML text.  Nothing else of the URDF changes.
    """
    from lxml import etree
    text = open(urdf, encoding='utf-8').read() if not urdf.lstrip().startswith('<') else urdf
    root = etree.fromstring(text.encode())
    movable = [j.get('name') for j in root.iter('joint')
               if j.get('type') in ('revolute', 'continuous', 'prismatic')]
    control = etree.SubElement(root, 'ros2_control', name='GazeboSimSystem', type='system')
    etree.SubElement(etree.SubElement(control, 'hardware'), 'plugin').text = plugin
    for name in joints or movable:
        joint = etree.SubElement(control, 'joint', name=name)
        etree.SubElement(joint, 'command_interface', name='effort')
        for state in ('position', 'velocity', 'effort'):
            etree.SubElement(joint, 'state_interface', name=state)
    gazebo = etree.SubElement(root, 'gazebo')
    loader = etree.SubElement(gazebo, 'plugin', filename='gz_ros2_control-system',
                              name='gz_ros2_control::GazeboSimROS2ControlPlugin')
    etree.SubElement(loader, 'parameters').text = controllers_yaml
    return etree.tostring(root, encoding='unicode')
