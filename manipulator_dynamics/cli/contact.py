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

"""``contact``: dynamics_node's momentum observer and contact levels, run over a log."""

from .options import add_command, FORMAT, load, LOG, MODEL, MODEL_FRICTION_IN
from .output import emit
from ..contact.observer import DEFAULT_GAIN
from ..contact.settings import CALIBRATION, ContactSettings


def cmd_contact(args):
    """Observe a log as dynamics_node would: the levels, and the states above them."""
    from ..contact.calibration import parse_thresholds, thresholds_yaml
    from ..contact.replay import replay
    from ..recordings.log import read_states

    model = load(args)
    levels = {}
    for name in ('contact_thresholds', 'collision_thresholds'):
        try:
            levels[name] = parse_thresholds(getattr(args, name))
        except ValueError as e:
            raise ValueError(f'--{name.replace("_", "-")}: {e}') from None
    states, = read_states(model, args.log, args.topic, retime=not args.stamps_as_logged)
    found = replay(model, states, ContactSettings(
        gain=args.gain, friction=args.friction, contact=levels['contact_thresholds'],
        collision=levels['collision_thresholds'], identified=args.parameters,
        calibration=args.calibration))
    title = (f'{args.log} observed as dynamics_node would ({len(states)} states, observer gain '
             f'{args.gain:g}/s): the levels it would raise')
    table = found.table(model)
    if args.thresholds_out:
        if found.levels is None:
            raise ValueError(f'--thresholds-out {args.thresholds_out}: no levels to write '
                             f'({found.how})')
        thresholds_yaml(model, found.levels, args.gain, found.how, args.thresholds_out)
        table += (f'\n\nwritten: {args.thresholds_out} (contact_thresholds, '
                  'collision_thresholds and observer_gain for dynamics_node: --ros-args '
                  '--params-file, or ros2 param load)')
    emit(args, title, found.to_dict(), table)


def add_commands(sub):
    """Add ``contact`` to the subparsers ``sub``."""
    p = add_command(sub, 'contact', cmd_contact, "run dynamics_node's momentum observer and "
                    'contact levels over a log: the levels (given, from the identification '
                    '--parameters carries, or learnt from the first seconds of motion) and every '
                    'stretch of states above them; --no-friction: the joints have no friction '
                    'of their own (as observer_friction false)',
                    (MODEL, FORMAT, LOG, MODEL_FRICTION_IN))
    p.add_argument('log', help='a CSV, .npz or rosbag2 log with the measured velocities')
    p.add_argument('--gain', type=float, default=DEFAULT_GAIN, help='observer gain in 1/s '
                   f'(default {DEFAULT_GAIN:g}, as observer_gain)')
    p.add_argument('--contact-thresholds', default='auto', help="N m, one or '[a, b, ...]' per "
                   'joint, or auto (default), as the node parameter')
    p.add_argument('--collision-thresholds', default='auto', help='as --contact-thresholds')
    p.add_argument('--calibration', type=float, default=CALIBRATION, help='auto levels: seconds '
                   "of free motion they are learnt from, the log's first (default "
                   f'{CALIBRATION:g}, as contact_calibration)')
    p.add_argument('--thresholds-out', metavar='YAML', help='write the levels as a ROS 2 '
                   'parameters file for dynamics_node (it then starts with them as given)')
