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

"""A fleet's logs: one identification per robot and day, the drifts found, on Dask and without."""

import dataclasses
import json
import sys

from helpers import measured, write_log_csv
from manipulator_dynamics import cli, robots
from manipulator_dynamics.identification import fleet
import numpy as np
import pytest

ROBOTS, DAYS = 12, 5
#: (robot, joint) whose friction grows from the third day on: two joints of two robots.
DRIFTING = {('r03', 'joint2'), ('r03', 'joint5'), ('r10', 'joint1'), ('r10', 'joint6')}
SECONDS = 10.0
CUTOFF = '2.5'


def robot_on(arm, robot, day):
    """Return ``robot`` on ``day``: its own friction, 30 % more a day from day 3 if it drifts."""
    rng = np.random.default_rng(int(robot[1:]))
    viscous = arm.viscous * rng.uniform(0.8, 1.2, arm.n)
    coulomb = arm.coulomb * rng.uniform(0.8, 1.2, arm.n)
    for k, joint in enumerate(arm.joint_names):
        if (robot, joint) in DRIFTING and day >= 3:
            grown = 1.0 + 0.3 * (day - 2)
            viscous[k] *= grown
            coulomb[k] *= grown
    return dataclasses.replace(arm, viscous=viscous, coulomb=coulomb)


@pytest.fixture(scope='module')
def fleet_logs(arm, tmp_path_factory):
    """Write 12 robots x 5 days of 10 s logs (each its own motion and noise), and two bad ones."""
    folder = tmp_path_factory.mktemp('fleet')
    paths = []
    for r in range(1, ROBOTS + 1):
        robot = f'r{r:02d}'
        for day in range(1, DAYS + 1):
            t, _, _, _, tau, q = measured(robot_on(arm, robot, day), seed=100 * r + day,
                                          seconds=SECONDS, fundamental=0.2)
            paths.append(folder / f'{robot}_day{day}.csv')
            write_log_csv(paths[-1], arm.joint_names, t, q, tau)
    t, _, _, _, tau, q = measured(arm, seed=7, seconds=SECONDS, fundamental=0.2)
    renamed = ['elbow' if j == 'joint3' else j for j in arm.joint_names]
    paths.append(folder / 'r13_day1.csv')                   # a joint the model does not have
    write_log_csv(paths[-1], renamed, t, q, tau)
    paths.append(folder / 'r13_day2.csv')                   # stamps that go back
    write_log_csv(paths[-1], arm.joint_names, t[::-1].copy(), q, tau)
    return [str(p) for p in paths]


def run(args, capsys):
    assert cli.main(['fleet', robots.path('demo_arm'), *args, '--cutoff', CUTOFF,
                     '--format', 'json']) == 0
    return json.loads(capsys.readouterr().out)


def without_seconds(report):
    return [{k: v for k, v in r.items() if k != 'seconds'} for r in report['results']]


def drifting_joints(report):
    """Return ``{(robot, joint): the first period any of its coefficients drifts from}``."""
    found = {}
    for d in report['drifts']:
        key = (d['robot'], d['joint'])
        found[key] = min(found.get(key, d['since']), d['since'])
    return found


def test_a_fleets_drift_is_found_on_dask_and_serially_alike(fleet_logs, tmp_path, capsys):
    """
    12 robots x 5 days, friction growing on two joints of two robots from day 3.

    The drift report names exactly those four joints, each from day 3; a local Dask cluster
    and the serial run give the same results; the two bad logs are named, the rest identified.
    """
    pytest.importorskip('dask.distributed', reason='the fleet extra: pip install '
                        'manipulator_dynamics[fleet]')
    on_dask = run([*fleet_logs, '--workers', '2', '--output', str(tmp_path / 'dask')], capsys)
    serial = run([*fleet_logs, '--serial', '--quiet'], capsys)
    assert on_dask['engine'].startswith('dask (local cluster, 2 workers')
    assert serial['engine'] == 'serial'
    first, second = without_seconds(on_dask), without_seconds(serial)
    assert [(r['robot'], r['period'], r['error']) for r in first] == \
        [(r['robot'], r['period'], r['error']) for r in second]
    for a, b in zip(first, second):
        for joint, terms in a['coefficients'].items():
            for term, value in terms.items():
                np.testing.assert_allclose(value, b['coefficients'][joint][term], rtol=1e-12,
                                           err_msg=f"{a['robot']} {a['period']} {term}")
    assert on_dask['drifts'] == serial['drifts']

    assert drifting_joints(on_dask) == dict.fromkeys(DRIFTING, 'day3')
    failed = {r['period']: r['error'] for r in on_dask['results'] if r['error']}
    assert set(failed) == {'day1', 'day2'}
    assert 'joint3' in failed['day1']
    assert 'time' in failed['day2'] or 'stamp' in failed['day2']
    assert len(on_dask['results']) == ROBOTS * DAYS + 2
    written = tmp_path / 'dask'
    table = (written / 'friction.csv').read_text()
    assert 'r13_day1.csv' in table and 'r13_day2.csv' in table
    assert (written / 'drift.png').stat().st_size > 10_000
    drift = (written / 'drift.csv').read_text().splitlines()
    assert {tuple(line.split(',')[:2]) for line in drift[1:] if ',drift,' in line} == DRIFTING


def test_the_table_names_every_robots_joints_and_the_failed_logs(fleet_logs, capsys):
    """The human table: a block per robot and joint, a row per day, the failures by file."""
    assert cli.main(['fleet', robots.path('demo_arm'), *fleet_logs[:DAYS], fleet_logs[-1],
                     '--cutoff', CUTOFF, '--serial', '--quiet']) == 0
    out = capsys.readouterr().out
    assert 'r01, joint7 (friction law coulomb):' in out
    assert out.count('day5  ') == 7                     # one row per joint of r01
    assert 'r13_day2.csv' in out and 'FAILED' in out
    assert 'drift: none' in out


def test_without_dask_the_fleet_runs_serially_and_says_how_to_install_it(
        arm, fleet_logs, monkeypatch):
    """No dask.distributed: a warning naming the extra, and the same results, serially."""
    logs = fleet.logs_by_name(fleet_logs[:2])
    options = {'cutoff': 2.5}
    serial = fleet.identify_fleet(robots.path('demo_arm'), logs, serial=True, **options)
    monkeypatch.setitem(sys.modules, 'dask.distributed', None)     # import fails
    with pytest.warns(UserWarning, match=r'pip install manipulator_dynamics\[fleet\]'):
        fallback = fleet.identify_fleet(robots.path('demo_arm'), logs, **options)
    assert fallback.engine == 'serial'
    assert [r.coefficients for r in fallback.results] == [r.coefficients for r in serial.results]
    with pytest.raises(ValueError, match='--scheduler tcp://nowhere:8786: dask.distributed is '
                       'not installed'):
        fleet.identify_fleet(robots.path('demo_arm'), logs, scheduler='tcp://nowhere:8786')


def result(robot, period, values, std=0.01, error=None):
    coefficients = {} if error else {'j1': {'Fv': (values, std), 'Fc': (1.0, std)}}
    return fleet.PeriodResult(robot, period, (f'{robot}_{period}.csv',), law='coulomb',
                              coefficients=coefficients, error=error)


def test_a_drift_is_confirmed_by_consecutive_periods_and_a_lone_excursion_is_watched():
    """
    Beyond 3 deviations of the difference in 2 identified periods in a row: a drift from the first.

    A lone excursion, or one in the latest period, is listed to watch; a failed period in
    between does not break a run; ``confirm=1`` makes every excursion a drift.
    """
    far = 1.0 + 4 * np.hypot(0.01, 0.01)                # 4 deviations of the difference
    near = 1.0 + 2 * np.hypot(0.01, 0.01)
    results = (
        [result('a', f'd{k}', v) for k, v in enumerate([1.0, near, far, far, far], start=1)]
        + [result('b', f'd{k}', v) for k, v in enumerate([1.0, far, 1.0, 1.0, far], start=1)]
        + [result('c', 'd1', 1.0), result('c', 'd2', 1.0), result('c', 'd3', far),
           result('c', 'd4', 0.0, error='IdentificationError: stamps go back'),
           result('c', 'd5', far)])
    report = fleet.FleetReport(tuple(results))
    assert [(d.robot, d.term, d.since) for d in report.drifts] == [
        ('a', 'Fv', 'd3'), ('c', 'Fv', 'd3')]
    assert report.drifts[1].periods == ('d1', 'd2', 'd3', 'd5')
    assert [(d.robot, d.since) for d in report.excursions] == [('b', 'd2')]
    np.testing.assert_allclose(report.drifts[0].z, [0, 2, 4, 4, 4])
    assert 'c d4' not in report.drift_summary() and 'to watch' in report.drift_summary()
    every = fleet.FleetReport(tuple(results), confirm=1)
    assert [(d.robot, d.since) for d in every.drifts] == [('a', 'd3'), ('b', 'd2'), ('c', 'd3')]
    assert [r.period for r in report.failed] == ['d4']


def test_logs_are_grouped_by_robot_and_period_from_their_names(tmp_path):
    """The default ``<robot>_<period>``; periods in natural order; a name that does not match."""
    names = ['ur10_b_day10.csv', 'ur10_b_day2.csv', 'ur10_a_2026-11-02.npz',
             'ur10_a_2026-11-01.csv', 'ur10_a_2026-11-01.npz', 'bag_folder_w3']
    logs = fleet.logs_by_name([tmp_path / n for n in names])
    assert [(g.robot, g.period, len(g.paths)) for g in logs] == [
        ('bag_folder', 'w3', 1), ('ur10_a', '2026-11-01', 2), ('ur10_a', '2026-11-02', 1),
        ('ur10_b', 'day2', 1), ('ur10_b', 'day10', 1)]
    with pytest.raises(ValueError, match=r'1 log name\(s\) do not match .*nodate\.csv'):
        fleet.logs_by_name([tmp_path / 'r1_day1.csv', tmp_path / 'nodate.csv'])
    with pytest.raises(ValueError, match='has no group period'):
        fleet.logs_by_name(['a.csv'], pattern=r'(?P<robot>.+)')
    logs = fleet.logs_by_name(['cell4-robot7-w12.csv'], pattern=r'cell\d+-(?P<robot>robot\d+)'
                              r'-(?P<period>w\d+)')
    assert (logs[0].robot, logs[0].period) == ('robot7', 'w12')


def test_a_manifest_lists_the_logs_and_its_errors_name_row_and_column(tmp_path):
    """Paths relative to the manifest; a missing column or an empty cell is named."""
    (tmp_path / 'logs').mkdir()
    manifest = tmp_path / 'logs' / 'fleet.csv'
    manifest.write_text('robot,period,log\nr2,week1,a.csv\nr1,week2,b.csv\nr1,week1,c.csv\n'
                        'r1,week1,d.csv\n')
    logs = fleet.logs_of_manifest(manifest)
    assert [(g.robot, g.period, [p.rsplit('/', 2)[-2:] for p in g.paths]) for g in logs] == [
        ('r1', 'week1', [['logs', 'c.csv'], ['logs', 'd.csv']]),
        ('r1', 'week2', [['logs', 'b.csv']]), ('r2', 'week1', [['logs', 'a.csv']])]
    manifest.write_text('robot,day,log\nr1,1,a.csv\n')
    with pytest.raises(ValueError, match='no column period'):
        fleet.logs_of_manifest(manifest)
    manifest.write_text('robot,period,log\nr1,1,a.csv\nr1,,b.csv\n')
    with pytest.raises(ValueError, match='row 3: empty period'):
        fleet.logs_of_manifest(manifest)


def test_the_cli_refuses_what_a_fleet_cannot_be_run_with(fleet_logs, tmp_path, capsys):
    """No URDF first, neither logs nor manifest, several laws: each said, exit status 2."""
    assert cli.main(['fleet', *fleet_logs[:2]]) == 2
    assert "fleet needs the robots' URDF first" in capsys.readouterr().err
    assert cli.main(['fleet', robots.path('demo_arm')]) == 2
    assert 'the logs (grouped by robot and period' in capsys.readouterr().err
    assert cli.main(['fleet', robots.path('demo_arm'), fleet_logs[0],
                     '--friction-law', 'coulomb,offset']) == 2
    assert 'a fleet is compared under one law' in capsys.readouterr().err
