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

"""Messages to and from arrays (a message refused: :mod:`..runtime.refused`)."""

import numpy as np
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String

from ..runtime.refused import BadMessage, by_name  # noqa: F401 (their home: the runtime)
from ..wire import float64_array


def deserialize_joint_state(data):
    """Return the sensor_msgs/JointState of CDR bytes (rclpy's RMWError if they are not one)."""
    return deserialize_message(data, JointState)


def time_message(ns):
    """Make the builtin_interfaces/Time of ``ns`` nanoseconds (a stamp as the nodes keep it)."""
    from builtin_interfaces.msg import Time
    sec, nanosec = divmod(ns, 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def vector_message(values, label='joint'):
    """Make a 1-D Float64MultiArray."""
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label=label, size=len(values), stride=len(values))]
    msg.data = float64_array(values)
    return msg


def array_message(a, labels):
    """Make a Float64MultiArray of ``a``, row-major, one dimension per label (ROS layout rules)."""
    msg = Float64MultiArray()
    strides = np.cumprod(a.shape[::-1])[::-1]
    msg.layout.dim = [MultiArrayDimension(label=label, size=size, stride=int(stride))
                      for label, size, stride in zip(labels, a.shape, strides)]
    msg.data = float64_array(a.reshape(-1))
    return msg


def matrix_message(M):
    """Make a 2-D Float64MultiArray, row-major: dim[0] rows, dim[1] columns (ROS layout rules)."""
    return array_message(M, ('rows', 'cols'))


def names_message(names):
    """Make the joint order of array topics a YAML flow list in a std_msgs/String."""
    return String(data='[' + ', '.join(names) + ']')
