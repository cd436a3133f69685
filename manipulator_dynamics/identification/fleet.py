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
A fleet's logs: one identification per robot and period, and the friction that drifts.

Friction drifts with temperature and wear; a coefficient that leaves its robot's first period is
how a plant learns that a gearbox is failing.  :func:`identify_fleet` identifies every robot's
logs of every period (a day, a week: :func:`logs_by_name` groups them from the file names,
:func:`logs_of_manifest` from a CSV) with one friction law for all, so that a coefficient means
the same thing in every period, and reports (:class:`FleetReport`):

- each joint's friction coefficients (``Fv``, ``Fc``, and ``Fo`` or ``vs`` where the law has
  them) with their standard deviations, per robot and period;
- the drifts: a coefficient more than ``sigmas`` (3) deviations from the robot's first period,
  the deviation being that of the difference, ``hypot(std_k, std_first)`` (both are estimates).
  A fleet compares hundreds of coefficients, and one in 370 lies beyond 3 deviations by chance
  alone: a drift is said where ``confirm`` (2) periods in a row are beyond, from the first of
  them.  A coefficient beyond in fewer (the latest period, or a lone one) is listed apart, as
  an excursion to watch.

The identifications run on Dask (``dask.distributed``, the ``fleet`` extra) where it is
installed: on a local cluster sized to the machine (a worker process per core), or on an
existing one (``scheduler``).  Each worker reads its own logs and loads its own model: only
paths, options and each period's small :class:`PeriodResult` cross the network.  Without Dask,
or with ``serial=True``, they run one after another in this process; the results are the same.
A log that cannot be identified (bad stamps, joints the model does not have) gives a result
with its ``error``, named in the report; the others go on.
"""

import csv
from dataclasses import asdict, dataclass, field
import logging
import os
import re
import time
import warnings

import numpy as np

#: The friction terms tracked, in the order the tables show them (``vs``: the smooth law's
#: Coulomb velocity, fitted without a deviation, shown but not judged).
TERMS = ('Fv', 'Fc', 'Fo', 'vs')
#: A drift: this many deviations of the difference from the robot's first period...
DRIFT_SIGMAS = 3.0
#: ... in this many identified periods in a row.
CONFIRM = 2
#: :func:`logs_by_name`'s default: ``<robot>_<period>.<ext>``, the period after the last ``_``.
NAME_PATTERN = r'(?P<robot>.+)_(?P<period>[^_]+)'
#: What ``pip`` installs for :func:`identify_fleet` to run on Dask.
INSTALL = 'pip install manipulator_dynamics[fleet]'


@dataclass(frozen=True)
class FleetLog:
    """The logs of one robot in one period: identified together, as one identification."""

    robot: str
    period: str
    paths: tuple


def _natural(text):
    """Sort key that puts ``day2`` before ``day10`` and ISO dates in order."""
    return [(0, int(p), '') if p.isdigit() else (1, 0, p) for p in re.split(r'(\d+)', text)]


def _grouped(entries):
    """Group ``(robot, period, path)`` into :class:`FleetLog` in robot, then period order."""
    groups = {}
    for robot, period, path in entries:
        groups.setdefault((robot, period), []).append(os.fspath(path))
    return [FleetLog(robot, period, tuple(sorted(paths)))
            for (robot, period), paths in sorted(groups.items(),
                                                 key=lambda item: (_natural(item[0][0]),
                                                                   _natural(item[0][1])))]


def logs_by_name(paths, pattern=NAME_PATTERN):
    """
    Group log files (CSV, npz, rosbag2 folders) by robot and period from their names.

    ``pattern`` is a regular expression with the groups ``robot`` and ``period``, matched in
    full against each name without its extension (default: ``<robot>_<period>``, so
    ``ur10-3_2026-11-02.csv`` is robot ``ur10-3`` on ``2026-11-02``).  Several files of one
    robot and period are one identification.  Periods sort naturally (``day2`` before
    ``day10``; ISO dates in order).  A name that does not match is an error naming it.
    """
    regex = re.compile(pattern)
    missing = {'robot', 'period'} - set(regex.groupindex)
    if missing:
        raise ValueError(f'fleet name pattern {pattern!r} has no group '
                         f'{" or ".join(sorted(missing))}: write (?P<robot>...) and '
                         '(?P<period>...)')
    entries, unmatched = [], []
    for path in paths:
        stem = os.path.splitext(os.path.basename(os.path.normpath(os.fspath(path))))[0]
        match = regex.fullmatch(stem)
        if match is None:
            unmatched.append(os.fspath(path))
        else:
            entries.append((match['robot'], match['period'], path))
    if unmatched:
        raise ValueError(f'{len(unmatched)} log name(s) do not match the pattern {pattern!r} '
                         f'(robot and period): {", ".join(unmatched[:5])}'
                         + (' ...' if len(unmatched) > 5 else '')
                         + '; rename them, give --pattern, or list them in a manifest')
    if not entries:
        raise ValueError('no logs given')
    return _grouped(entries)


def logs_of_manifest(path):
    """
    Read a manifest CSV with the columns ``robot``, ``period`` and ``log``, a row per log.

    A relative ``log`` is relative to the manifest's folder.  Rows of the same robot and period
    are one identification.  A missing column or an empty cell is an error naming it.
    """
    folder = os.path.dirname(os.path.abspath(path))
    with open(path, newline='', encoding='utf-8') as f:
        reader = csv.DictReader(f)
        header = [h.strip() for h in reader.fieldnames or ()]
        missing = [c for c in ('robot', 'period', 'log') if c not in header]
        if missing:
            raise ValueError(f'manifest {path}: no column {", ".join(missing)} (its header: '
                             f'{", ".join(header) or "empty"}; needs robot, period, log)')
        entries = []
        for row_number, row in enumerate(reader, start=2):
            row = {k.strip(): (v or '').strip() for k, v in row.items() if k is not None}
            empty = [c for c in ('robot', 'period', 'log') if not row[c]]
            if empty:
                raise ValueError(f'manifest {path}, row {row_number}: empty {empty[0]}')
            entries.append((row['robot'], row['period'], os.path.join(folder, row['log'])))
    if not entries:
        raise ValueError(f'manifest {path}: no rows')
    return _grouped(entries)


@dataclass(frozen=True)
class PeriodResult:
    """
    One robot's identification in one period: its friction, or why it failed.

    ``coefficients``: ``{joint: {term: (value, std)}}`` of the friction terms the law has
    (``std`` NaN for ``vs``); ``error``: the message where the logs could not be identified
    (``coefficients`` is then empty).
    """

    robot: str
    period: str
    paths: tuple
    law: str = ''
    coefficients: dict = field(default_factory=dict)
    cutoff_hz: float = float('nan')
    samples: int = 0
    seconds: float = 0.0
    warnings: tuple = ()
    error: str = None


_MODELS = {}


def _model(urdf, load_options):
    """Load the fleet's model once per process (a worker identifies many periods)."""
    key = (os.fspath(urdf), repr(sorted(load_options.items())))
    if key not in _MODELS:
        from ..urdf import load_model
        _MODELS[key] = load_model(urdf, **load_options)
    return _MODELS[key]


def friction_coefficients(estimate):
    """Return ``{joint: {term: (value, std)}}`` of an estimate's friction terms."""
    index = {name: i for i, name in enumerate(estimate.names)}
    model = estimate.model
    out = {}
    for k, joint in enumerate(model.joint_names):
        terms = {}
        for term in TERMS[:3]:
            i = index.get(f'{term}_{joint}', index.get(f'{term}_{joint}_R'))
            if i is not None:
                terms[term] = (float(estimate.values[i]), float(estimate.std[i]))
        if model.coulomb_velocity[k] > 0:
            terms['vs'] = (float(model.coulomb_velocity[k]), float('nan'))
        if terms:
            out[joint] = terms
    return out


def identify_period(urdf, load_options, identify_options, log):
    """
    Identify one :class:`FleetLog` (what a Dask worker runs); return a :class:`PeriodResult`.

    Reads the logs and loads the model here, on the worker.  Any failure becomes the result's
    ``error``: one robot's bad log must not stop a fleet's run.
    """
    from .estimate import identify
    from ..recordings.log import read_once

    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            model = _model(urdf, load_options)
            data = read_once(model, list(log.paths) if len(log.paths) > 1 else log.paths[0],
                             identify_options.get('topic', '/joint_states'))
            estimate = identify(model, data, **identify_options)
        except Exception as e:  # noqa: B902 - any log's failure is reported, the fleet goes on
            return PeriodResult(log.robot, log.period, log.paths,
                                seconds=time.perf_counter() - start,
                                warnings=tuple(str(w.message) for w in caught),
                                error=f'{type(e).__name__}: {e}')
    return PeriodResult(log.robot, log.period, log.paths,
                        law=estimate.processing.get('friction', ''),
                        coefficients=friction_coefficients(estimate),
                        cutoff_hz=float(estimate.processing.get('cutoff_hz', float('nan'))),
                        samples=int(estimate.samples), seconds=time.perf_counter() - start,
                        warnings=tuple(str(w.message) for w in caught))


def cores():
    """Return the cores this process may run on (a local cluster's worker count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                              # not on Linux
        return os.cpu_count() or 1


def _on_dask(tasks, scheduler, workers, progress):
    """Run ``identify_period`` over ``tasks`` on Dask; None where Dask is not installed."""
    try:
        from dask.distributed import as_completed, Client, LocalCluster
    except ImportError:
        return None
    if scheduler:
        client, cluster = Client(scheduler), None
    else:
        # one single-threaded worker process per core: the kernels hold the GIL, numpy's own
        # threads would fight over the cores
        cluster = LocalCluster(n_workers=workers or cores(), threads_per_worker=1,
                               processes=True, dashboard_address=None,
                               silence_logs=logging.WARNING)
        client = Client(cluster)
    try:
        futures = [client.submit(identify_period, *task, pure=False) for task in tasks]
        where = {future.key: i for i, future in enumerate(futures)}
        results = [None] * len(tasks)
        for future in as_completed(futures):
            i = where[future.key]
            log = tasks[i][3]
            try:
                results[i] = future.result()
            except Exception as e:  # noqa: B902 - a worker lost (its memory, its machine)
                results[i] = PeriodResult(log.robot, log.period, log.paths,
                                          error=f'the worker failed: {type(e).__name__}: {e}')
            if progress:
                progress(results[i])
        return results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def identify_fleet(urdf, logs, *, load_options=None, scheduler=None, workers=None,
                   serial=False, sigmas=DRIFT_SIGMAS, confirm=CONFIRM, progress=None,
                   **identify_options):
    """
    Identify every robot's logs of every period and report the friction's drifts.

    Parameters
    ----------
    urdf : str
        The robots' URDF (one model: a fleet of one type).
    logs : list of FleetLog
        From :func:`logs_by_name` or :func:`logs_of_manifest`.
    load_options : dict, optional
        :func:`.urdf.load_model`'s keyword arguments (``joint_dynamics``, ``parameters``,
        ``transmissions``, ...), the same for every robot.
    scheduler : str, optional
        The address of a running Dask scheduler; default: a local cluster.
    workers : int, optional
        The local cluster's worker processes (default: one per core, :func:`cores`).
    serial : bool
        Identify in this process, one period after another (also what happens, with a
        warning that says how to install it, where Dask is not installed).
    sigmas, confirm : float, int
        A drift: ``sigmas`` deviations from the first period in ``confirm`` periods in a row.
    progress : callable, optional
        Called with each :class:`PeriodResult` as it is done.
    **identify_options
        :func:`.estimate.identify`'s options (``friction``, ``armature``, ``cutoff``,
        ``still``, ``retime``, ``topic``), the same for every period: one friction law.

    Returns
    -------
    FleetReport

    """
    if isinstance(identify_options.get('friction'), (list, tuple)):
        raise ValueError('a fleet is identified with one friction law: a coefficient compared '
                         'over time must mean the same thing in every period')
    tasks = [(os.fspath(urdf), dict(load_options or {}), identify_options, log)
             for log in logs]
    results, engine = None, 'serial'
    if not serial:
        results = _on_dask(tasks, scheduler, workers, progress)
        if results is None:
            if scheduler:
                raise ValueError(f'--scheduler {scheduler}: dask.distributed is not '
                                 f'installed ({INSTALL})')
            warnings.warn(f'dask.distributed is not installed, identifying the fleet serially '
                          f'in this process ({INSTALL} to run it on a cluster)', stacklevel=2)
        else:
            engine = f'dask ({scheduler})' if scheduler else \
                f'dask (local cluster, {workers or cores()} workers)'
    if results is None:
        results = []
        for task in tasks:
            results.append(identify_period(*task))
            if progress:
                progress(results[-1])
    return FleetReport(tuple(results), sigmas=sigmas, confirm=confirm, engine=engine)


@dataclass(frozen=True)
class Drift:
    """
    A friction coefficient that left its robot's first period.

    ``since``: the first period of the run of ``confirm`` periods beyond ``sigmas`` (for an
    excursion, the period beyond); ``periods``, ``values``, ``std`` and ``z``: the robot's
    identified periods, the coefficient and its deviation in each, and how many deviations of
    the difference each lies from the first (0 for the first).
    """

    robot: str
    joint: str
    term: str
    since: str
    periods: tuple
    values: tuple
    std: tuple
    z: tuple


@dataclass(frozen=True)
class FleetReport:
    """What :func:`identify_fleet` found: every period's result, the drifts, the excursions."""

    results: tuple
    sigmas: float = DRIFT_SIGMAS
    confirm: int = CONFIRM
    engine: str = 'serial'

    @property
    def failed(self):
        """Return the results whose logs could not be identified."""
        return [r for r in self.results if r.error is not None]

    def series(self):
        """Yield ``(robot, joint, term, periods, values, std)`` of every coefficient over time."""
        robots = {}
        for r in self.results:
            if r.error is None:
                robots.setdefault(r.robot, []).append(r)
        for robot, results in robots.items():
            first = results[0]
            for joint, terms in first.coefficients.items():
                for term in terms:
                    rows = [(r.period, *r.coefficients[joint][term]) for r in results
                            if term in r.coefficients.get(joint, {})]
                    periods, values, std = zip(*rows)
                    yield robot, joint, term, periods, np.array(values), np.array(std)

    def _judged(self):
        """Return ``(drifts, excursions)``: lists of :class:`Drift`."""
        drifts, excursions = [], []
        for robot, joint, term, periods, values, std in self.series():
            if not np.isfinite(std[0]):
                continue                                # vs: no deviation to judge it by
            with np.errstate(divide='ignore', invalid='ignore'):
                z = (values - values[0]) / np.hypot(std, std[0])
            z[0] = 0.0
            beyond = np.abs(z) > self.sigmas
            run, since = 0, None
            for k, out in enumerate(beyond):
                run = run + 1 if out else 0
                if run == self.confirm and since is None:
                    since = k - self.confirm + 1
            if since is None and not beyond.any():
                continue
            found = drifts if since is not None else excursions
            found.append(Drift(robot, joint, term,
                               periods[since if since is not None else np.argmax(beyond)],
                               periods, tuple(values.tolist()), tuple(std.tolist()),
                               tuple(z.tolist())))
        return drifts, excursions

    @property
    def drifts(self):
        """Return the coefficients beyond ``sigmas`` deviations in ``confirm`` periods in a row."""
        return self._judged()[0]

    @property
    def excursions(self):
        """Return the coefficients beyond ``sigmas`` deviations, not in ``confirm`` in a row."""
        return self._judged()[1]

    def rows(self):
        """Return the long table: a dict per robot, period, joint and term (or failed log)."""
        rows = []
        for r in self.results:
            if r.error is not None:
                rows.append({'robot': r.robot, 'period': r.period, 'joint': '', 'term': '',
                             'value': '', 'std': '', 'law': '', 'cutoff_hz': '',
                             'logs': ' '.join(r.paths), 'error': r.error})
                continue
            for joint, terms in r.coefficients.items():
                for term, (value, std) in terms.items():
                    rows.append({'robot': r.robot, 'period': r.period, 'joint': joint,
                                 'term': term, 'value': value, 'std': std, 'law': r.law,
                                 'cutoff_hz': r.cutoff_hz, 'logs': ' '.join(r.paths),
                                 'error': ''})
        return rows

    def joint_tables(self):
        """
        Yield ``(title, headers, rows)``: per robot and joint, each period's coefficients.

        A cell is ``value +- std``; a failed period is a row that says why, naming its logs.
        """
        by_robot = {}
        for r in self.results:
            by_robot.setdefault(r.robot, []).append(r)
        for robot, results in by_robot.items():
            joints = next((list(r.coefficients) for r in results if r.error is None), [])
            if not joints:                              # every period failed: say each
                joints = [None]
            for joint in joints:
                terms = [t for t in TERMS
                         if joint and any(t in r.coefficients.get(joint, {}) for r in results)]
                law = next((r.law for r in results if r.error is None), '')
                headers = ['period'] + ([f'{t} +- std' for t in terms] or ['result'])
                rows = []
                for r in results:
                    if r.error is not None:
                        rows.append([r.period, f'FAILED ({", ".join(r.paths)}): {r.error}']
                                    + [''] * (len(headers) - 2))
                    else:
                        rows.append([r.period] + [_with_std(*r.coefficients[joint][t])
                                                  if t in r.coefficients.get(joint, {})
                                                  else '-' for t in terms])
                yield (f'{robot}, {joint} (friction law {law}):' if joint else
                       f'{robot}: every period failed', headers, rows)

    def title(self):
        """Say how many identifications ran, where, and how many failed."""
        return (f'{len(self.results)} identifications of '
                f'{len({r.robot for r in self.results})} robots ({self.engine}); '
                f'{len(self.failed)} failed')

    def drift_summary(self):
        """Say the drifts, then the excursions not confirmed."""
        drifts, excursions = self._judged()
        rule = (f'beyond {self.sigmas:g} deviations of the difference from the first period '
                f'in {self.confirm} identified periods in a row')
        if not drifts:
            text = f'drift: none ({rule})'
        else:
            text = f'drift ({rule}):\n' + '\n'.join(
                f'  {d.robot} {d.joint} {d.term}: from {d.since} '
                f'({_with_std(d.values[0], d.std[0])} in {d.periods[0]}, now '
                f'{_with_std(d.values[-1], d.std[-1])}, {d.z[-1]:+.1f} deviations)'
                for d in drifts)
        if excursions:
            text += (f'\nto watch (beyond {self.sigmas:g} deviations, not in {self.confirm} '
                     'periods in a row):\n' + '\n'.join(
                         f'  {d.robot} {d.joint} {d.term}: in {d.since} '
                         f'({d.z[d.periods.index(d.since)]:+.1f} deviations)'
                         for d in excursions))
        return text

    def to_dict(self):
        """Return a plain mapping for JSON or YAML."""
        drifts, excursions = self._judged()
        return {'engine': self.engine, 'sigmas': self.sigmas, 'confirm': self.confirm,
                'results': [_plain(asdict(r)) for r in self.results],
                'drifts': [_plain(asdict(d)) for d in drifts],
                'excursions': [_plain(asdict(d)) for d in excursions]}

    def write(self, folder):
        """
        Write ``friction.csv`` (:meth:`rows`), ``drift.csv`` and, with drifts, ``drift.png``.

        Returns the paths written.
        """
        os.makedirs(folder, exist_ok=True)
        written = [os.path.join(folder, 'friction.csv'), os.path.join(folder, 'drift.csv')]
        rows = self.rows()
        with open(written[0], 'w', newline='', encoding='utf-8') as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ['robot'])
            writer.writeheader()
            writer.writerows(rows)
        drifts, excursions = self._judged()
        with open(written[1], 'w', newline='', encoding='utf-8') as f:
            writer = csv.writer(f)
            writer.writerow(['robot', 'joint', 'term', 'status', 'since', 'first_value',
                             'first_std', 'last_value', 'last_std', 'last_deviations'])
            for status, found in (('drift', drifts), ('watch', excursions)):
                for d in found:
                    writer.writerow([d.robot, d.joint, d.term, status, d.since, d.values[0],
                                     d.std[0], d.values[-1], d.std[-1], d.z[-1]])
        if drifts:
            written.append(self.plot(os.path.join(folder, 'drift.png')))
        return written

    def plot(self, path):
        """Plot every drifting coefficient over its robot's periods, the first's 3-sigma band."""
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt

        drifts = self.drifts
        if not drifts:
            raise ValueError('no drift to plot')
        columns = min(3, len(drifts))
        rows = -(-len(drifts) // columns)
        fig, axes = plt.subplots(rows, columns, figsize=(4.5 * columns, 3.2 * rows),
                                 squeeze=False)
        for ax, d in zip(axes.flat, drifts):
            x = np.arange(len(d.periods))
            ax.errorbar(x, d.values, yerr=d.std, fmt='o-', capsize=3, label='identified')
            band = self.sigmas * np.hypot(d.std, d.std[0])
            ax.fill_between(x, d.values[0] - band, d.values[0] + band, alpha=0.2, color='grey',
                            label=f'first +- {self.sigmas:g} std of the difference')
            ax.axvline(d.periods.index(d.since), color='red', ls=':', label=f'since {d.since}')
            ax.set_xticks(x, d.periods, rotation=30, ha='right', fontsize=7)
            ax.set_title(f'{d.robot}: {d.term} of {d.joint}', fontsize=9)
            ax.legend(fontsize=6)
        for ax in axes.flat[len(drifts):]:
            ax.set_visible(False)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return path


def _with_std(value, std):
    return f'{value:.4g} +- {std:.2g}' if np.isfinite(std) else f'{value:.4g}'


def _plain(value):
    """Return ``value`` with tuples as lists and NaN as None, for JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
