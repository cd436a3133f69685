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
A node's parameters, declared once from one table, validated before they apply.

Each node lists its parameters as :class:`Param` rows (name, default, description, range,
read-only, check).  :class:`Parameters` declares them all, validates the start values, and keeps
the current values as attributes (``node.params.rate``).  A change goes through two steps, as
rclpy intends: the on-set callback only validates (every check of the table; ranges and read-only
are rclpy's), and the post-set callback, which rclpy calls only for an accepted change, updates
the values and tells the node which names changed.  A rejected change therefore never alters
behaviour.  (rclpy calls on-set callbacks newest first: applying a change in one of them, as
this package once did, applies it before the validator has had its say.)
"""

import difflib
import math
from typing import Any, Callable, NamedTuple, Optional

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.exceptions import ParameterException
from rclpy.parameter import Parameter


class ConfigurationError(ValueError):
    """A node was started with an invalid parameter value: it does not start."""


class Param(NamedTuple):
    """One parameter: its default fixes its type; ``check(value)`` returns a reason or None."""

    name: str
    default: Any
    description: str
    check: Optional[Callable[[Any], Optional[str]]] = None
    read_only: bool = False
    low: Optional[float] = None            # inclusive range of a number (rclpy enforces it)
    high: Optional[float] = None


class Parameters:
    """
    Declare ``table`` on ``node``; current values as attributes; ``on_change(names)`` after.

    Raises :class:`ConfigurationError` naming the parameter when a start value is of the wrong
    type, out of range or fails its check.  Start values are forgiving where ROS's typing is
    not: ``rate:=500`` for a float parameter is 500.0, and ``command_joints:=[]`` (a list with
    no type) is the parameter's empty default.
    """

    def __init__(self, node, table, on_change=None, checks=None):
        self._node = node
        self._table = {p.name: p for p in table}
        self._checks = {p.name: p.check for p in table if p.check}
        self._checks.update(checks or {})
        self._on_change = on_change
        for p in table:
            value = self._declare(p)
            check = self._checks.get(p.name)
            reason = check(value) if check else None
            if reason:
                raise ConfigurationError(f'parameter {p.name}: {reason}')
            setattr(self, p.name, value)        # plain attributes: read on every message
        node.add_on_set_parameters_callback(self._validate)
        node.add_post_set_parameters_callback(self._applied)

    def _declare(self, p):
        descriptor = ParameterDescriptor(description=p.description, read_only=p.read_only)
        if p.low is not None:
            if isinstance(p.default, float):
                descriptor.floating_point_range = [FloatingPointRange(
                    from_value=float(p.low), to_value=float(p.high), step=0.0)]
            else:
                descriptor.integer_range = [IntegerRange(
                    from_value=int(p.low), to_value=int(p.high), step=1)]
        override = getattr(self._node, '_parameter_overrides', {}).get(p.name)
        value, ignore = p.default, False
        if override is not None:
            kind = override.type_
            if kind == Parameter.Type.NOT_SET and isinstance(p.default, list):
                ignore = True                     # name:=[] - an empty list has no type
            elif kind == Parameter.Type.INTEGER and isinstance(p.default, float):
                value, ignore = float(override.value), True
            elif kind == Parameter.Type.INTEGER_ARRAY and isinstance(p.default, list) and \
                    p.default and isinstance(p.default[0], float):
                value, ignore = [float(v) for v in override.value], True
        start = value if override is None or ignore else override.value
        if p.low is not None and isinstance(start, (int, float)) and \
                not p.low <= start <= p.high:      # (rclpy's own message is three times longer)
            raise ConfigurationError(f'parameter {p.name}: must be within [{p.low:g}, '
                                     f'{p.high:g}], got {start!r}')
        try:
            declared = self._node.declare_parameter(p.name, value, descriptor,
                                                    ignore_override=ignore)
        except ParameterException as e:
            raise ConfigurationError(f'parameter {p.name}: {e}') from None
        return declared.value

    def _validate(self, params):
        for param in params:
            check = self._checks.get(param.name)
            reason = check(param.value) if check else None
            if reason:
                return SetParametersResult(successful=False, reason=f'{param.name}: {reason}')
        return SetParametersResult(successful=True)

    def _applied(self, params):
        changed = set()
        for param in params:
            if param.name in self._table:
                setattr(self, param.name, param.value)
                changed.add(param.name)
        if changed and self._on_change is not None:
            self._on_change(changed)


def refuse_unknown(nodes):
    """
    Raise :class:`ConfigurationError` for a parameter given to one of ``nodes`` that none has.

    rclpy keeps every override a node is started with (``-p``, ``--params-file``) and ignores
    those it never declares: ``-p external_torque:=true`` would start a node that does not do
    what was asked.  Called once the nodes are made (their parameters declared): each name
    given to a node must be declared by it, or, in one process hosting several (``-p`` reaches
    them all), by one of the others.  The error names the node, the parameter and the nearest
    name the node has.
    """
    declared = {node: set(node.list_parameters([], 0).names) for node in nodes}
    known = set().union(*declared.values())
    for node in nodes:
        given = getattr(node, '_parameter_overrides', {})
        unknown = sorted(name for name in given if name not in known)
        if not unknown:
            continue
        names = sorted(declared[node])
        said = []
        for name in unknown:
            near = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
            said.append(f"'{name}'" + (f" (did you mean '{near[0]}'?)" if near else ''))
        raise ConfigurationError(
            f'{node.get_name()} has no parameter {", ".join(said)}: it is not started, since '
            'it would ignore what was asked (ros2 param list names its parameters)')


def finite_positive(value):
    """Reason why ``value`` is not a finite number > 0, or None."""
    return None if isinstance(value, (int, float)) and math.isfinite(value) and value > 0 else \
        f'must be a finite number > 0, got {value!r}'


def zero_or_positive(value):
    """Reason why ``value`` is neither 0 nor a finite number > 0, or None."""
    return None if value == 0 else finite_positive(value)


def one_of(*choices):
    """Check that a value is one of ``choices``."""
    def check(value):
        return None if value in choices else f'must be one of {", ".join(choices)}, got {value!r}'
    return check
