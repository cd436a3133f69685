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

"""A node's process: rclpy's start and shutdown, signals, the garbage collector."""

import functools
import gc
import inspect
import os
import signal
import sys
from time import time_ns

import rclpy
import rclpy.logging

from ._parameters import ConfigurationError, refuse_unknown


def quiet_unraisable(unraisable, default=sys.unraisablehook, stopping=lambda: True):
    """
    Drop the complaints a stop signal leaves in finalisers; pass every other one on.

    * The node's stop handler (:func:`_quiet_signals`) raises KeyboardInterrupt during start-up;
      when the signal lands while the garbage collector runs a ``__del__`` (a ``ZipFile``'s, in
      CI), Python swallows it there and prints "Exception ignored in ... KeyboardInterrupt".
      Nothing is lost: the handler has set ``requested``, and the node stops as soon as it
      would start serving.
    * A KeyboardInterrupt that lands inside a constructor leaves a half-built object, whose
      ``__del__`` then fails on the attribute it never got: "Exception ignored ...
      AttributeError" (``rclpy.task.Future`` without ``_exception``; llvmlite's ``ObjectRef``
      without ``_as_parameter_``, interrupted while numba loads).  Harmless (the node is
      stopping), but it reads as a crash: dropped once ``stopping()`` says a stop was asked for,
      whichever class it was.
    """
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        return
    where = getattr(unraisable.object, '__qualname__', '')
    if (isinstance(unraisable.exc_value, AttributeError) and where.endswith('__del__')
            and stopping()):
        return
    default(unraisable)


def settle_garbage():
    """
    Keep Python's full garbage collections out of the control loop: call once, after start-up.

    The imports (numba, llvmlite, scipy) and the warmed kernels leave ~170,000 objects that the
    cyclic collector walks on every full collection: ~80 ms, with the GIL held, whenever one comes
    due, and a 1 kHz loop has stalled that long at random.  Collect once and freeze what is left
    (``gc.freeze``): later collections see only objects made while serving.
    """
    gc.collect()
    gc.freeze()


def settle_what_loaded():
    """
    Freeze what a load added once the process had settled (:func:`settle_garbage`); else nothing.

    A model that comes on ``/robot_description`` arrives after the start-up was frozen, and its
    load (the URDF parser's imports, the kernels' dispatch) leaves ~90,000 objects of its own.
    The next full collection walks them: 20-75 ms here, with the GIL held, due at random once
    the node commands (the start's 99 ms stall).  Called where a model or kernels were taken in
    (:class:`.model_source.ModelSource`, :class:`.kernels.Kernels`); a process that never froze
    (a test's, a tool's) is left as it is.
    """
    if gc.get_freeze_count():
        settle_garbage()


def _quiet_signals():
    """
    Make SIGINT and SIGTERM stop a node without a traceback, however many arrive.

    A person's Ctrl-C on ``ros2 launch`` reaches every process of the terminal's group, and launch
    then sends its own SIGINT: a node gets two.  Python's handler raises KeyboardInterrupt
    wherever the node happens to be, the second time inside ``destroy_node`` (a traceback and
    exit code -2).  rclpy's handler (which :func:`ros_init` leaves out) shuts the context down
    at once, under a callback in flight: its publish fails and the executor logs a FATAL
    "Exception in callback" on a plain stop.  With this one, while the node starts (loading,
    warming kernels), the first signal interrupts the start-up at once (``interruptible``); once
    it serves, a signal only asks the spin loop to end (``requested``: :func:`spin` then destroys
    the node and shuts the context down, in that order), and no later one raises anywhere.
    ``interrupted`` says the start-up was cut: whatever error it ends with is then the
    signal's (:func:`cut_by_stop`).
    """
    def stop(signum, frame):
        stop.requested = True
        if stop.interruptible:
            stop.interruptible = False
            stop.interrupted = True
            raise KeyboardInterrupt
    stop.interruptible, stop.requested, stop.interrupted = True, False, False
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    return stop


def ignore_signals():
    """
    Ignore SIGINT and SIGTERM from here on: the node is stopping anyway.

    Python resets the handlers it installed to the default at exit, while numba and the DDS
    threads are still being torn down (tens of ms): launch's SIGINT landing then killed a node
    with exit code -2.  Called once the node is done, and again after ``rclpy.try_shutdown``
    (which puts back the handler rclpy found at ``init``).
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)


def shut_down(*nodes):
    """
    Destroy ``nodes`` (None: none) and shut rclpy down, deaf to further SIGINT and SIGTERM.

    A managed node not yet finalized goes through its ``shutdown`` transition first (it stops
    commanding and says so), as rclcpp's lifecycle nodes do when their context ends.
    """
    ignore_signals()
    for node in nodes:
        if node is not None:
            leave(node)
    rclpy.try_shutdown()
    ignore_signals()


def leave(node, executor=None):
    """Finalize ``node`` if it is managed and not yet, then destroy it with its companions."""
    if getattr(node, 'managed', False) and not node.finished:
        try:
            node.trigger_shutdown()
        except Exception as e:              # a state with no shutdown (mid-transition): said
            rclpy.logging.get_logger(node.get_name()).warning(f'no shutdown transition: {e}')
    for companion in [*getattr(node, 'companions', ()), node]:
        if executor is not None:
            executor.remove_node(companion)
        companion.destroy_node()


def ros_init(args=None):
    """
    ``rclpy.init`` for a node's process; return the signal handler (see _quiet_signals).

    A stop signal while rclpy initialises (the handler raises KeyboardInterrupt inside it, in its
    logging's set-up for one) shuts down what it began and ends the process with exit code 0:
    the node never started.
    """
    from rclpy.signals import SignalHandlerOptions
    handler = _quiet_signals()
    sys.unraisablehook = functools.partial(quiet_unraisable, stopping=lambda: handler.requested)
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except KeyboardInterrupt:
        shut_down(None)
        raise SystemExit(0) from None
    return handler


#: The environment variable that chooses a node's executor, one of :data:`EXECUTORS`.
EXECUTOR_VARIABLE = 'MANIPULATOR_DYNAMICS_EXECUTOR'
#: ``events``: rclpy.experimental.EventsExecutor, the default where this rclpy has it (Kilted
#: on); ``single``: rclpy's SingleThreadedExecutor (the default where it has not).
EXECUTORS = ('events', 'single')


def executor_name():
    """
    Return the executor this process's nodes run on: :data:`EXECUTOR_VARIABLE`'s, or the default.

    EventsExecutor where rclpy has it: at 1 kHz into dynamics_node it cuts the CPU per state to
    a third and halves the latency in the node (benchmarks/bench_latency.py; commit 2a8903b).
    """
    name = os.environ.get(EXECUTOR_VARIABLE)
    if name:
        return name
    try:
        from rclpy.experimental import EventsExecutor  # noqa: F401
    except ImportError:
        return 'single'
    return 'events'


def with_receipt_time(callback):
    """
    Return a subscription callback that hands ``callback(msg, info)`` the message info.

    ``info['received_timestamp']`` is the DDS receipt (ns, the system clock), under either
    executor.  rclpy asks a callback's signature whether it takes the info: two arguments, and
    each executor then takes the message with its info.  rclpy's SingleThreadedExecutor calls
    ``callback(msg, info)``; rclpy 9's EventsExecutor calls it with one argument, the tuple
    ``(msg, info)`` (``callback(msg_info)`` in its events_executor.cpp), and a plain callback
    of two arguments fails there.  The returned function's signature says two arguments and
    it takes either call (a message is never a tuple: raw, it is ``bytes``).
    """
    def on_message(msg, info=None):
        if info is None:                        # the EventsExecutor's (msg, info)
            msg, info = msg
        return callback(msg, info)
    on_message.__signature__ = _MESSAGE_AND_INFO
    return on_message


_MESSAGE_AND_INFO = inspect.Signature([
    inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in ('msg', 'info')])


def clock_ns(node):
    """
    Return a function: the node's clock now, in ns (its ROS time: simulated under use_sim_time).

    ``node.get_clock().now()`` builds a Time object, whose checks cost 1.3 of the 2 us a call
    takes: a tenth of a 1 kHz state callback.  Reading rclpy's clock handle itself (which
    ``now()`` reads, and which follows ``/clock`` the same way) still takes 0.7 us.  A ROS clock
    whose simulated time is not active reads the system clock (rcl's ``rcl_get_system_time``,
    CLOCK_REALTIME: ``time.time_ns``, 0.04 us), and rcl tells each change of that state to the
    clock's jump callbacks as it makes it (``use_sim_time`` set, at start or later): so this reads
    the handle only while simulated time is active, and ``time.time_ns`` otherwise.
    """
    clock = node.get_clock()
    handle = getattr(clock, 'handle', None)
    if handle is None or not hasattr(handle, 'get_now'):
        return lambda: clock.now().nanoseconds
    simulated = None                          # unknown: read the handle

    def now():
        if simulated is False:
            return time_ns()
        with handle:
            return handle.get_now().nanoseconds
    try:
        from rclpy.clock import ClockChange, ClockType, JumpThreshold
        register = clock.create_jump_callback
    except (ImportError, AttributeError):
        return now
    if clock.clock_type != ClockType.ROS_TIME:
        return now

    def on_jump(jump):
        nonlocal simulated
        if jump.clock_change == ClockChange.ROS_TIME_ACTIVATED:
            simulated = True
        elif jump.clock_change == ClockChange.ROS_TIME_DEACTIVATED:
            simulated = False
    now.jump_handle = register(                             # kept alive with the function
        JumpThreshold(min_forward=None, min_backward=None, on_clock_change=True),
        post_callback=on_jump)
    simulated = clock.ros_time_is_active      # after the handler: no change can fall between
    return now


def make_executor(name=None, context=None):
    """
    Return the executor ``name``, by default :func:`executor_name`'s (on rclpy's ``context``).

    An unknown name, or ``events`` where this rclpy lacks it, is an error naming the choices.
    """
    name = name or executor_name()
    if name == 'single':
        from rclpy.executors import SingleThreadedExecutor
        return SingleThreadedExecutor(context=context)
    if name == 'events':
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:
            raise ConfigurationError(f'{EXECUTOR_VARIABLE}=events: this rclpy has no '
                                     'rclpy.experimental.EventsExecutor (Kilted on); use '
                                     'single') from None
        return _with_a_real_stderr(lambda: EventsExecutor(context=context))
    raise ConfigurationError(f'{EXECUTOR_VARIABLE}={name!r}: the executor is one of '
                             f'{", ".join(EXECUTORS)}')


def _with_a_real_stderr(make):
    """
    Return ``make()`` with ``sys.stderr`` a file that has a descriptor while it runs.

    rclpy 9's EventsExecutor enables ``faulthandler`` on ``sys.stderr`` as it is made, which
    fails (io.UnsupportedOperation: fileno) where something replaced it by an object in memory:
    a notebook, an IDE's console, pytest's ``capsys``.  The process's own stderr then takes the
    tracebacks of a crash in C++.
    """
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):     # no stream, or one without a descriptor
        if sys.__stderr__ is not None:
            replaced, sys.stderr = sys.stderr, sys.__stderr__
            try:
                return make()
            finally:
                sys.stderr = replaced
    return make()


def cut_by_stop(handler, error):
    """
    Whether ``error`` ended a start-up that a stop signal cut: the stop asked for, not a fault.

    ``handler`` is :func:`ros_init`'s.  The start-up ends however the code the signal landed in
    lets its KeyboardInterrupt out: as rclpy's RCLError once the context is down, or as a
    library's own error (trimesh catches BaseException around an import, then fails with a
    TypeError on what it kept).
    """
    return handler.interrupted or isinstance(error, RuntimeError) and not rclpy.ok()


def spin(node_class, args=None):
    """
    Run a node until SIGINT or SIGTERM, then shut down with exit code 0: its ``main()``.

    A node that is done by itself (a one-shot sender) shuts its context down: spin then ends too;
    so does a managed node's ``shutdown`` transition (it is then finalized).
    """
    spin_nodes([node_class], args)


def _name_of(factory):
    """Return the name to log a failed start under: the node's, its class's, the program's."""
    keywords = getattr(factory, 'keywords', None) or {}
    if 'node_name' in keywords:
        return keywords['node_name']
    return getattr(getattr(factory, 'func', factory), '__name__', None) or \
        os.path.basename(sys.argv[0]) or 'node'


def spin_nodes(factories, args=None):
    """
    Run the nodes that ``factories`` make, in one process on one executor (see :func:`spin`).

    Each is made in turn (a factory is a node class, or a function of no arguments); a managed
    node that is finalized leaves, and the process ends with the last one.  A node that cannot
    start (a ConfigurationError: a bad value, or a parameter that none of them has,
    :func:`._parameters.refuse_unknown`) ends the process with exit code 2, saying why: the
    others do not run without it.
    """
    from rclpy.executors import ExternalShutdownException
    handler = ros_init(args)
    nodes = []
    factory = None
    try:
        # the executor first: a signal during the nodes' start-up then finds it whole
        executor = make_executor()
        for factory in factories:
            node = factory()
            nodes.append(node)
            executor.add_node(node)
            for companion in getattr(node, 'companions', ()):     # nodes it shows beside it
                executor.add_node(companion)
        refuse_unknown(nodes)                   # a parameter none of them has: not started
        settle_garbage()
        handler.interruptible = False
        # a stop signal only sets handler.requested (rclpy's own handler, which would wake a
        # spin() at once, is left out: it shut the context down under a callback in flight); a
        # wake-up every 0.1 s when idle (nothing on a busy 1 kHz loop) ends the loop once a stop
        # was asked for or the nodes shut their context down: a node stops within 0.1 s
        while nodes and rclpy.ok() and not handler.requested:
            executor.spin_once(timeout_sec=0.1)
            for node in [n for n in nodes if getattr(n, 'finished', False)]:
                nodes.remove(node)
                leave(node, executor)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception as e:
        if cut_by_stop(handler, e):
            pass
        elif isinstance(e, ConfigurationError):
            rclpy.logging.get_logger(_name_of(factory)).fatal(f'not started: {e}')
            raise SystemExit(2)
        else:
            raise
    finally:
        handler.interruptible = False
        shut_down(*nodes)
