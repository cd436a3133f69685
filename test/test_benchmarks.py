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
The benchmarks run as a user runs them, for a moment each (no timing is checked).

Their numbers are quoted in docs/speed.md, and nothing else runs them: bench_plant's first
stage once failed under the EventsExecutor (a callback that asked for the message info) on every
run, unseen.  Each runs in its own process, those over ROS 2 on a ROS domain of their own.
"""

import glob
import os
import re
import shutil
import subprocess
import sys

import pytest

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          'benchmarks')


def run(*args, timeout=300):
    """Run ``python3 *args`` in benchmarks/ on a domain apart from the suite's nodes (+50)."""
    suite = int(os.environ.get('ROS_DOMAIN_ID') or os.getpid())      # rosutil's, if it ran
    env = dict(os.environ, ROS_DOMAIN_ID=str(1 + (suite + 49) % 100))
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                            timeout=timeout, cwd=BENCHMARKS, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def needs_ros():
    pytest.importorskip('rclpy', reason='ROS 2 rclpy is not installed (pip install .[ros]; '
                        'dev.py test installs the PyPI wheels)')


def test_bench_dynamics_compares_every_robot_both_libraries_load():
    pytest.importorskip('pinocchio', reason='Pinocchio is not installed (pip install .[test])')
    out = run('bench_dynamics.py', '--every-robot', '--repeat', '1')
    rows = re.findall(r'^\| (\S+\.urdf) \| (\d+) \| (.+) \|$', out, re.MULTILINE)
    assert len(rows) > 20, out
    robots = {path: cells.split(' | ') for path, _, cells in rows}
    # three ratios, then Pinocchio's three times; romeo's FD is refused (a massless thumb)
    ratios = robots['ur_description/urdf/ur5_robot.urdf']
    assert len(ratios) == 4 and all(float(x) > 0 for x in ratios[:3]), ratios
    romeo = robots.get('romeo_description/urdf/romeo.urdf')
    assert romeo, 'romeo (a thumb that moves no mass) walks the singular row: not measured'
    assert romeo[2] == 'singular M' and romeo[3].endswith('singular M'), romeo


def test_bench_latency_measures_both_nodes_and_their_ratios():
    needs_ros()
    out = run('bench_latency.py', '--seconds', '0.3', '--rounds', '1', '--executor', 'events',
              '--observer', '--wrench', '--echo-depth', '100', '--echo-entities', '4',
              '--control')
    assert re.search(r"^events +the observer adds -?[\d.]+ % to dynamics_node's CPU", out,
                     re.MULTILINE), out
    for node in ('echo_node', 'echo_raw', 'dynamics_node', 'dynamics_node+'):
        row = re.search(rf'^events +{re.escape(node)} +([\d.]+) / +([\d.]+) +([\d.]+) / +'
                        r'([\d.]+) ', out, re.MULTILINE)
        assert row, out
        assert all(float(x) > 0 for x in row.groups()), row.group(0)
    # ours against both floors, and the raw echo against itself (--control)
    for title in ('ours / echo', 'ours / raw echo', 'the raw echo again / the raw echo'):
        ratios = re.search(rf'^{title}\b.*\n  events +in node p50 ([\d.]+) .*CPU per '
                           r'state ([\d.]+) ', out, re.MULTILINE)
        assert ratios and all(float(x) > 0 for x in ratios.groups()), out


def test_bench_state_path_splits_one_state_into_its_steps():
    """Every step of one state through dynamics_node is measured, and they fit in the whole."""
    needs_ros()
    out = run('bench_state_path.py', '--states', '300', '--observer')
    whole = re.search(r'^  the state callback, whole +([\d.]+)$', out, re.MULTILINE)
    general = re.search(r'^  the same on its general path +([\d.]+) +\(the compiled step '
                        r'declined\)', out, re.MULTILINE)
    assert whole and general, out
    whole, general = float(whole.group(1)), float(general.group(1))
    steps = {name.strip(): float(us) for name, us in re.findall(
        r'^    (\S.*?) +(-?[\d.]+)$', out, re.MULTILINE)}     # the general path's
    rest = steps.pop('the rest (the callback less those)')
    assert set(steps) == {'the state read from its bytes', 'g(q)', 'the command published',
                          'the observer step', 'the payload window'}, out
    assert re.search(r'^and where a state waited .*, the queue looked at: [\d.]+ us more$', out,
                     re.MULTILINE), out
    assert whole > 0 and general > 0 and all(us > 0 for us in steps.values()), out
    # seven figures printed to 0.01 us, each off by up to 0.005 from the one it was made of
    assert rest == pytest.approx(general - sum(steps.values()), abs=0.04), out


def test_bench_state_cost_runs_its_counted_run_and_reads_callgrinds_totals(tmp_path, capsys):
    """
    The counted run natively (callgrind's requests do nothing outside valgrind), the report.

    Under valgrind the run takes minutes (the kernels compile for its simulated CPU first), so
    the suite walks the run itself, its three callbacks commanding, and reads counts in
    callgrind_annotate's own format.
    """
    needs_ros()
    if shutil.which('cc') is None or not os.path.exists('/usr/include/valgrind/callgrind.h'):
        pytest.skip('bench_state_cost builds its shim with cc and valgrind/callgrind.h, which '
                    'this machine lacks')
    sys.path.insert(0, BENCHMARKS)
    try:
        import bench_state_cost
    finally:
        sys.path.remove(BENCHMARKS)
    bench_state_cost.build_shim(str(tmp_path))
    run('bench_state_cost.py', '--child', str(tmp_path), '--states', '5')
    line = ('{:>10s} (100.0%) {:>8s} (100.0%) {:>8s} (100.0%) {:>6s} (100.0%)  PROGRAM TOTALS\n')
    function = ' 1,631,093 (13.31%) 52,913 (10.61%) 36,658 (16.51%)   954 ( 1.72%)  ceval.c:_Py\n'
    counts = {name: bench_state_cost.totals('Events shown:     Ir I1mr D1mr D1mw\n' + function
                                            + line.format(*cells)) for name, cells in (
        ('echo', ('8,877,200', '367,200', '150,000', '36,800')),
        ('ours', ('12,253,830', '498,512', '222,023', '55,592')),
        ('unchecked', ('11,147,500', '470,000', '200,000', '.')),
        ('echo_sent', ('5,045,600', '200,000', '80,000', '10,400')),
        ('ours_sent', ('5,770,800', '250,000', '120,000', '28,400')),
        ('unchecked_sent', ('5,184,000', '230,000', '100,000', '16,200')))}
    assert counts['unchecked'] == (11147500, 470000, 200000)
    bench_state_cost.report(counts, 100)
    out = capsys.readouterr().out
    rows = re.findall(r'^  (\S.*?) +(\d+) +(\d+) +(\d+) +(\d+)(?:   ([\d.]+), ([\d.]+))?$', out,
                      re.MULTILINE)
    labels = ['raw echo', 'dynamics_node', "dynamics_node, no controller's check"]
    assert [row[0] for row in rows] == labels * 2, out
    assert rows[1][1:] == ('122538', '4985', '2776', '7761', '1.38', '1.40'), out
    assert rows[4][1:] == ('57708', '2500', '1484', '3984', '1.14', '1.37'), out


def test_bench_plant_paces_the_plant_in_real_time():
    """The first stage (sim_node alone, heard here with the receipt times) for 0.3 s."""
    needs_ros()
    out = run('-c', 'import bench_plant; '
              "rate, (p50, p99), worst = bench_plant.real_time('internal', 0.3, False); "
              'print(rate, p50, p99, worst)')
    rate, p50, p99, worst = map(float, out.split()[-4:])
    assert rate > 100                             # 1000 states a second, on a busy machine less
    assert 0 < p50 <= p99 <= worst


def test_the_raw_echo_reads_the_positions_from_the_bytes():
    """The raw floor's own parsing: any names and frame, the positions as rclpy reads them."""
    needs_ros()
    sys.path.insert(0, BENCHMARKS)
    try:
        from echo_node import positions_as_array
    finally:
        sys.path.remove(BENCHMARKS)
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    for names, frame in ((['a'], ''), (['joint1', 'j2', 'xyz'], 'base'),
                         ([f'panda_joint{i}' for i in range(1, 8)], 'world')):
        msg = JointState(name=names, position=[0.1 * i - 0.3 for i in range(len(names))],
                         velocity=[1.0] * len(names), effort=[2.0] * len(names))
        msg.header.frame_id = frame
        msg.header.stamp.sec = 7
        out = deserialize_message(positions_as_array(serialize_message(msg)), Float64MultiArray)
        assert list(out.data) == list(msg.position) and not out.layout.dim


def test_bench_soak_reports_memory_and_latency_over_the_run():
    """Three seconds of the soak, the URDF replaced every second: its table and its verdicts."""
    needs_ros()
    out = run('bench_soak.py', '--minutes', '0.05', '--replace-every', '1')
    # at 1, 2 and maybe 3 s of a 3 s run: whether the last lands before the end is the
    # machine's timing (CI beside a busy suite saw 3), not the node's
    assert re.search(r'robot_description replaced [23] times', out), out
    row = re.search(r'^ +1 +([\d.]+) +(\d+) +([\d.]+) +([\d.]+) ', out, re.MULTILINE)
    assert row and float(row.group(1)) > 50 and int(row.group(2)) > 1000, out
    assert re.search(r'growth [+-][\d.]+ MB \(goal < 5 MB\)', out), out
    assert re.search(r'p99 last minute / first minute: [\d.]+', out), out


def test_bench_start_sets_the_first_seconds_against_the_rest():
    """One round of two seconds, the first one apart: both windows' rows and the verdict line."""
    needs_ros()
    out = run('bench_start.py', '--rounds', '1', '--seconds', '2', '--first', '1')
    for window in ('0-1 s', '1-2 s'):
        row = re.search(rf'^ +1 +{window} +([\d.]+) +([\d.]+) +(\d+) +([\d.]+|nan)$', out,
                        re.MULTILINE)
        assert row and float(row.group(1)) >= float(row.group(2)) >= 0, out
    assert re.search(r'^longest gap over the rounds: first 1 s [\d.]+ ms, the rest [\d.]+ ms$',
                     out, re.MULTILINE), out


def test_bench_identification_measures_long_logs_against_the_floor():
    """
    Six and twelve seconds of the synthetic 1 kHz log: identified by the CLI, time and memory.

    And the longer one's peak memory over the shorter one's, the figure of flat memory.
    """
    from helpers import ERD
    if ERD is None:
        pytest.skip('example-robot-data is not installed (pip install .[test])')
    out = run('bench_identification.py', '--long', '--minutes', '0.1', '0.2')
    flat = re.search(r'^peak memory of 0\.2 min over: 0\.1 min ([\d.]+)$', out, re.MULTILINE)
    assert flat and 0.5 < float(flat.group(1)) < 2.0, out
    row = re.search(r'^\| 0\.2 min \| 12000 \| ([\d.]+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| '
                    r'([\d.]+) \| (\d+) \| ([\d.e-]+) \|$', out, re.MULTILINE)
    assert row, out
    wall, memory, floor, ratio, cutoff, rows, error = map(float, row.groups())
    assert wall > 0 and memory > 50 and floor > 0 and ratio > 0 and cutoff > 0 and rows > 0
    assert 0 < error < 1, out                  # the identified model predicts the held-out


def test_bench_identification_writes_a_log_whose_stamps_jitter():
    """
    ``--jitter``: the long log's stamps jitter as a real logger's, and it is identified.

    The log read back jitters by about the share asked, and the bench identifies it and says
    so above its table.
    """
    import importlib.util
    import tempfile

    import numpy as np
    from helpers import ERD
    if ERD is None:
        pytest.skip('example-robot-data is not installed (pip install .[test])')
    spec = importlib.util.spec_from_file_location(
        'bench_identification', os.path.join(BENCHMARKS, 'bench_identification.py'))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path, kw = bench.ROBOTS['panda arm']
    model = bench.md.load_model(bench.erd(path), **kw)
    with tempfile.TemporaryDirectory() as directory:
        log = os.path.join(directory, 'jitter.csv')
        assert bench.long_log(log, model, 0.05, jitter=0.03) == 3000
        t = np.loadtxt(log, delimiter=',', skiprows=1, usecols=0)
    jitter = np.std(np.diff(t) - 1e-3) / 1e-3
    assert 0.03 < jitter < 0.05, jitter             # each interval: two stamps' jitter
    out = run('bench_identification.py', '--long', '--minutes', '0.1', '--jitter', '0.03')
    assert 'stamps jittering by 3 % of the period, RMS' in out, out
    assert re.search(r'^\| 0\.1 min \| 6000 \| [\d.]+ \| \d+ \|', out, re.MULTILINE), out


def test_bench_identification_measures_the_childs_own_peak_not_its_own():
    """
    The long logs' peak memory is the identifying process's, whatever the bench held before.

    ``wait4``'s ``ru_maxrss`` of a child started by ``vfork`` and ``exec`` carries the
    parent's high-water mark: the bench's figure had been its own peak (a pandas read of the
    previous log) wherever that was the larger.
    """
    import importlib.util
    import numpy as np
    spec = importlib.util.spec_from_file_location(
        'bench_identification', os.path.join(BENCHMARKS, 'bench_identification.py'))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    held = np.ones(50_000_000)                  # 400 MB touched: this process's high water
    _, peak, out = bench.identify_in_process([sys.executable, '-m', 'platform'])
    del held
    assert out.strip(), out
    assert 0 < peak < 200, peak                 # a bare interpreter's, not the 400 MB above


def test_bench_packaged_start_installs_as_a_deb_does(tmp_path, capsys):
    """
    Its install half: staged (``--root``), nothing compiled and saying so, unpacked read-only.

    The node's start it then measures needs minutes of compiling; the console script and the
    URDF it starts with are where a packaged install has them.
    """
    needs_ros()
    sys.path.insert(0, BENCHMARKS)
    try:
        import bench_packaged_start as bench
    finally:
        sys.path.remove(BENCHMARKS)
    prefix = bench.packaged_install(str(tmp_path))
    assert 'the kernels are not compiled at install' in capsys.readouterr().out
    try:
        script = os.path.join(prefix, 'lib', 'manipulator_dynamics', 'dynamics_node')
        urdf = os.path.join(prefix, 'share', 'manipulator_dynamics', 'urdf', bench.URDF)
        assert os.access(script, os.X_OK) and os.path.isfile(urdf)
        assert not os.access(prefix, os.W_OK) or os.getuid() == 0
        assert not os.stat(urdf).st_mode & 0o222          # read-only, as dpkg unpacks it
        assert not glob.glob(os.path.join(prefix, '**', '_prebuilt'), recursive=True)
    finally:
        subprocess.run(['chmod', '-R', 'u+w', str(tmp_path)], check=True)
