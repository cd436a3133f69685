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

"""node_container: the demo's nodes in one process, each with its own name and parameters."""

import manipulator_dynamics as md
from manipulator_dynamics import robots
import numpy as np
import pytest
import yaml

pytest.importorskip('rclpy', reason='the node tests need rclpy (pip install rclpy)')

from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64MultiArray  # noqa: E402, I100
from std_srvs.srv import Trigger  # noqa: E402, I100
from trajectory_msgs.msg import JointTrajectory  # noqa: E402, I100

from rosutil import stamp  # noqa: E402, I100
from test_nodes_trajectory import DYNAMICS, trajectory  # noqa: E402, I100

ARM = robots.path('demo_arm')


def test_node_specs_name_what_is_wrong():
    from manipulator_dynamics.nodes.container import node_specs
    assert node_specs(['dynamics_node', 'dynamics_node=arm']) == [
        ('dynamics_node', 'dynamics_node'), ('dynamics_node', 'arm')]
    for words, said in ((['dynamics'], "unknown node 'dynamics' (known: dynamics_node, "),
                        (['sim_node='], 'an empty node name'),
                        (['sim_node', 'sim_node'], 'node names given twice: sim_node'),
                        ([], 'no node given')):
        with pytest.raises(ValueError, match=said.replace('(', r'\(')):
            node_specs(words)


def test_a_bad_node_list_is_refused_with_the_usage(processes):
    code, output = processes('node_container', args=('dynamics', 'sim_node')).wait()
    assert code == 2 and "unknown node 'dynamics'" in output and 'usage:' in output, output


def test_the_demo_nodes_in_one_process_close_the_loop(client, processes, tmp_path):
    """
    sim_node, trajectory_node, dynamics_node (renamed) and base_params_node in one container.

    Each reads its own section of one parameter file (trajectory_node takes its plan on another
    topic, the renamed dynamics node has mode none), a remap prefixed with one node's name
    moves that node's topic only, the lockstep loop tracks the plan, the service answers, and
    Ctrl-C ends the process with exit code 0.
    """
    model = md.load_model(ARM, joint_dynamics=DYNAMICS)
    msg, t, q, qd, qdd = trajectory(model, seconds=2.0, points=11)
    from manipulator_dynamics.nodes.launch_support import container_parameters
    robot = {'urdf_path': ARM, 'joint_dynamics': DYNAMICS}
    params = container_parameters({       # as demo.launch.py container:=true writes them
        'sim_node': dict(robot, lockstep=True, initial_positions=q[0].tolist()),
        'trajectory_node': dict(robot, use_sim_time=True, trajectory_topic='plan'),
        'arm_dynamics': dict(robot, use_sim_time=True, mode='none', outputs=['gravity_torques']),
        'base_params_node': robot})
    path = tmp_path / 'nodes.yaml'
    path.write_text(yaml.safe_dump(params))
    container = processes('node_container', args=(
        'sim_node', 'trajectory_node', 'dynamics_node=arm_dynamics', 'base_params_node',
        '--ros-args', '--params-file', str(path),
        '-r', 'arm_dynamics:~/gravity_torques:=/arm_gravity'))
    states = client.listen(JointState, '/joint_states', 100000)
    gravity = client.listen(Float64MultiArray, '/arm_gravity', 100)
    client.wait(lambda: states, 60.0, 'the held state on /joint_states')
    hosted = {'sim_node', 'trajectory_node', 'arm_dynamics', 'base_params_node',
              'effort_controller'}
    # the container makes its nodes in turn: sim_node publishes while the others still load
    client.wait(lambda: hosted <= set(client.node.get_node_names()), 60.0,
                'every node of the container, by its name')
    pub = client.publisher(JointTrajectory, '/plan')
    client.wait_for_subscriber(pub)
    pub.publish(msg)
    client.wait(lambda: states and stamp(states[-1]) >= t[-1] + 0.2, 120.0,
                'the lockstep loop to run the trajectory')
    client.wait(lambda: gravity, 30.0, 'the renamed node on its remapped topic')
    at = np.array([stamp(s) for s in states])
    reached = np.array(states[int(np.searchsorted(at, t[-1]))].position)
    assert np.abs(reached - q[-1]).max() < 0.01
    answer = client.call(client.node.create_client(Trigger, '/compute_base_params'),
                         Trigger.Request())
    assert answer.success and 'count:' in answer.message
    code, output = container.stop()
    assert code == 0 and 'Traceback' not in output, output
