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
``python3 -m manipulator_dynamics.demo``: the tracking demo.

``--identify``: the identification demo; ``--contact``: the collision demo (the arm runs into a
box and stops); ``--push``: the contact demo (the arm pushed, the push estimated).
"""

import argparse
import sys


def main(argv=None):
    """Run the demo the arguments choose: tracking, ``--identify``, ``--contact``, ``--push``."""
    parser = argparse.ArgumentParser(description='The loop on the bundled demo arm, its nodes as '
                                     'processes over DDS (localhost only): computed-torque '
                                     'tracking, or with --identify identification')
    parser.add_argument('--plot', help='PNG to write ("" for none; default demo.png, '
                        'identification.png with --identify, collision.png with --contact, '
                        'contact.png with --push)')
    parser.add_argument('--identify', action='store_true', help='the identification demo: the '
                        'simulated arm identified from an excitation motion it runs')
    parser.add_argument('--contact', action='store_true', help='the collision demo: the arm '
                        "runs into a box in sim_node's MuJoCo cell, and trajectory_node stops it")
    parser.add_argument('--push', action='store_true', help='the push demo: the arm pushed '
                        'half way through its motion, dynamics_node estimating the push')
    parser.add_argument('--duration', type=float, default=20.0, help='seconds of excitation '
                        '(--identify; default 20)')
    parser.add_argument('--engine', default='auto', choices=['auto', 'mujoco', 'internal'],
                        help="sim_node's engine (default auto: MuJoCo where installed)")
    parser.add_argument('--real-time', action='store_true', help='sim_node free in real time '
                        '(default: lockstep at real-time pace, the same motion however busy '
                        'the machine is)')
    parser.add_argument('--pace', type=float, default=1.0, help='lockstep: physics seconds per '
                        'wall second at most (default 1, real time; 0: as fast as the loop '
                        'turns, the same motion sooner)')
    args = parser.parse_args(argv)
    chosen = [f'--{name}' for name in ('identify', 'contact', 'push') if getattr(args, name)]
    if len(chosen) > 1:
        parser.error(f'{" and ".join(chosen)} are {len(chosen)} demos: one at a time')
    try:
        if args.contact:
            from .collision import run as collision
            return collision('collision.png' if args.plot is None else args.plot,
                             not args.real_time, args.engine, args.pace)
        if args.push:
            from .contact import run as contact
            return contact('contact.png' if args.plot is None else args.plot,
                           not args.real_time, args.engine, args.pace)
        if args.identify:
            from .identification import run as identification
            plot = 'identification.png' if args.plot is None else args.plot
            return identification(plot, args.duration, not args.real_time, args.engine,
                                  args.pace)
        from .tracking import run
        return run('demo.png' if args.plot is None else args.plot, not args.real_time,
                   args.engine, args.pace)
    except RuntimeError as e:
        print(f'demo failed: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
