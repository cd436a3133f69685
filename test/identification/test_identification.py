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

"""Identification: simulated robots with realistic noise give K_B back within the reported std."""

from helpers import DEMO_ARM_DYNAMICS, erd, EXCITATION_RATE, exciting, measured, needs_erd, \
    write_bag, write_log_csv
import manipulator_dynamics as md
from manipulator_dynamics import robots
from manipulator_dynamics.identification.logs import stamps_summary
from manipulator_dynamics.identification.selection import cutoff_summary, resolve_cutoff
from manipulator_dynamics.identification.validation import ExtrapolationWarning
import numpy as np
import pytest

RATE = EXCITATION_RATE          # Hz, a joint_states rate


def within_confidence(estimate, truth, sigmas):
    z = (estimate.values - truth) / estimate.std
    worst = int(np.argmax(np.abs(z)))
    assert np.abs(z).max() < sigmas, (estimate.names[worst], truth[worst],
                                      estimate.values[worst], estimate.std[worst])


def test_recovers_base_parameters_from_states(configured_arm, base):
    t, q, qd, qdd, tau, _ = measured(configured_arm)
    estimate = md.identify(configured_arm, (q, qd, qdd, tau), base=base)
    assert estimate.base is base and estimate.samples == len(t)
    assert estimate.data_summary() == f'{len(t)} states'
    within_confidence(estimate, base.values, 4.0)     # 62 parameters: |z| < 4 for all
    assert estimate.condition < 1e3
    np.testing.assert_array_less(estimate.residual_rms, 3 * estimate.sigma)


def test_recovers_base_parameters_from_positions_csv(configured_arm, base, tmp_path):
    t, _, _, _, tau, q_noisy = measured(configured_arm, seed=2)
    path = tmp_path / 'log.csv'
    header = ['time'] + [f'{j}.position' for j in configured_arm.joint_names] + \
        [f'{j}.effort' for j in configured_arm.joint_names] + ['ignored']
    rows = np.column_stack([t, q_noisy, tau, np.zeros_like(t)])
    np.savetxt(path, rows, delimiter=',', header=','.join(header), comments='')
    estimate = md.identify(configured_arm, path, base=base, cutoff=2.5)
    assert estimate.processing['decimation'] == int(RATE / (2.5 * 2.5))
    assert not estimate.processing['resampled']
    within_confidence(estimate, base.values, 4.0)
    # the rows fitted are the decimated ones: said beside the states logged, not for them
    assert estimate.samples < len(t) / estimate.processing['decimation']
    said = estimate.data_summary()
    assert said == f'{len(t)} logged states, filtered to {estimate.samples} rows'


def test_jittered_stamps_are_resampled(configured_arm, base):
    t, q, qd, qdd, tau, q_noisy = measured(configured_arm, seed=3)
    rng = np.random.default_rng(4)
    jittered = t + rng.uniform(-0.1, 0.1, t.shape) / RATE
    n = configured_arm.n
    q_jit = np.column_stack([np.interp(jittered, t, q_noisy[:, j]) for j in range(n)])
    tau_jit = np.column_stack([np.interp(jittered, t, tau[:, j]) for j in range(n)])
    estimate = md.identify(configured_arm, (jittered, q_jit, tau_jit), base=base, cutoff=2.5)
    assert estimate.processing['resampled']
    within_confidence(estimate, base.values, 4.5)


def test_rosbag2_recording(configured_arm, base, tmp_path):
    pytest.importorskip('rosbags', reason='rosbags reads rosbag2 without ROS: pip install rosbags')
    t, _, _, _, tau, q_noisy = measured(configured_arm, seed=5, seconds=12.0)
    write_bag(tmp_path / 'bag', configured_arm, t, q_noisy, tau)
    from_bag = md.identify(configured_arm, tmp_path / 'bag', base=base, cutoff=2.5)
    from_arrays = md.identify(configured_arm, (t + 100, q_noisy, tau), base=base, cutoff=2.5)
    np.testing.assert_allclose(from_bag.values, from_arrays.values, rtol=1e-6, atol=1e-9)
    assert from_bag.processing['topic'] == '/joint_states'


def test_ros2s_rosbag2_reader_and_rosbags_give_the_same_arrays(configured_arm, tmp_path):
    """rosbag2_py where ROS 2 is installed, rosbags elsewhere: one recording, the same arrays."""
    pytest.importorskip('rosbags', reason='rosbags writes the recording: pip install rosbags')
    pytest.importorskip('rosbag2_py', reason='rosbag2_py comes only with a ROS 2 installation '
                        '(ros-<distro>-rosbag2-py; no registry these machines reach serves it)')
    from manipulator_dynamics.recordings.formats import read_rosbag
    t, _, qd, _, tau, q_noisy = measured(configured_arm, seed=5, seconds=2.0)
    write_bag(tmp_path / 'bag', configured_arm, t, q_noisy, tau, qd=qd)
    ours, theirs = (read_rosbag(configured_arm, tmp_path / 'bag', velocity=True, reader=reader)
                    for reader in ('rosbag2_py', 'rosbags'))
    for key in ('t', 'q', 'tau', 'qd'):
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


def test_a_rosbag2_recording_without_a_reader_says_how_to_get_one(configured_arm, tmp_path,
                                                                  monkeypatch):
    pytest.importorskip('rosbags', reason='rosbags writes the recording: pip install rosbags')
    import sys
    from manipulator_dynamics.recordings.formats import read_rosbag
    t, _, _, _, tau, q_noisy = measured(configured_arm, seed=5, seconds=1.0)
    write_bag(tmp_path / 'bag', configured_arm, t, q_noisy, tau)
    for module in ('rosbag2_py', 'rosbags'):
        monkeypatch.setitem(sys.modules, module, None)       # neither importable
    with pytest.raises(md.IdentificationError, match=r'needs rosbag2_py \(a sourced ROS 2 '
                       r'installation: ros-<distro>-rosbag2-py\) or rosbags \(pip install '
                       r'rosbags, .*neither is importable here'):
        read_rosbag(configured_arm, tmp_path / 'bag')
    with pytest.raises(md.IdentificationError, match=r'needs rosbags \(pip install rosbags'):
        read_rosbag(configured_arm, tmp_path / 'bag', reader='rosbags')


def test_a_numpy_archive_is_read_by_joint_name(configured_arm, base, tmp_path):
    """
    ``np.savez`` of t, q, tau (qd, joints): columns matched by name, another robot's ignored.

    The archive's columns are shuffled and one more joint is in it: the same estimate as from
    the arrays in the model's order.  Without ``joints`` the columns are the model's, in order.
    """
    t, _, qd, _, tau, q_noisy = measured(configured_arm, seed=5, seconds=12.0)
    shuffle = np.random.default_rng(0).permutation(configured_arm.n)
    names = [configured_arm.joint_names[j] for j in shuffle] + ['gripper_joint']

    def columns(a):
        return np.column_stack([a[:, shuffle], np.ones(len(a))])
    np.savez(tmp_path / 'named.npz', t=t, q=columns(q_noisy), tau=columns(tau), qd=columns(qd),
             joints=np.array(names))
    np.savez(tmp_path / 'ordered.npz', t=t, q=q_noisy, tau=tau)
    from_arrays = md.identify(configured_arm, {'t': t, 'q': q_noisy, 'tau': tau, 'qd': qd},
                              base=base, cutoff=2.5)
    named = md.identify(configured_arm, tmp_path / 'named.npz', base=base, cutoff=2.5)
    np.testing.assert_allclose(named.values, from_arrays.values, rtol=1e-12, atol=1e-12)
    assert named.processing['source'] == str(tmp_path / 'named.npz')
    assert named.processing['timing'] == from_arrays.processing['timing']   # qd re-timed it
    ordered = md.identify(configured_arm, tmp_path / 'ordered.npz', base=base, cutoff=2.5)
    np.testing.assert_allclose(ordered.values, md.identify(configured_arm, (t, q_noisy, tau),
                                                           base=base, cutoff=2.5).values,
                               rtol=1e-12)


@pytest.mark.parametrize('arrays, message', [
    ({'t': [0.0, 1.0], 'q': np.zeros((2, 7))}, r'no array tau \(arrays: q, t; expected t, q, '),
    ({'t': [0.0, 1.0], 'q': np.zeros((2, 6)), 'tau': np.zeros((2, 6)),
      'joints': ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6']}, 'joint7'),
    ({'t': [0.0, 1.0], 'q': np.zeros(2), 'tau': np.zeros((2, 7))}, r'q must be \(samples, '),
    ({'t': [0.0, 1.0], 'q': np.zeros((2, 7)), 'tau': np.zeros((2, 6)),
      'joints': [f'joint{i}' for i in range(1, 8)]}, 'tau has 6 columns for 7 joints'),
], ids=['no tau', 'a joint missing', 'one-dimensional q', 'columns and names disagree'])
def test_a_numpy_archive_that_cannot_be_read_says_why(configured_arm, tmp_path, arrays, message):
    path = tmp_path / 'log.npz'
    np.savez(path, **arrays)
    with pytest.raises(md.IdentificationError, match=message):
        md.identify(configured_arm, path, cutoff=2.5)
    (tmp_path / 'not.npz').write_text('text')
    with pytest.raises(md.IdentificationError, match='is not a readable numpy archive'):
        md.identify(configured_arm, tmp_path / 'not.npz', cutoff=2.5)


def test_poor_excitation_names_the_parameters(configured_arm, base):
    t, q, qd, qdd = exciting(configured_arm)
    q[:, 1:], qd[:, 1:], qdd[:, 1:] = 0.0, 0.0, 0.0          # only joint 1 moves
    tau = md.inverse_dynamics(configured_arm, q, qd, qdd, friction=True)
    with pytest.raises(md.IdentificationError, match='does not excite every parameter: .*'
                                                     'Fv_joint2.*move every joint'):
        md.identify(configured_arm, (q, qd, qdd, tau), base=base)


@pytest.mark.parametrize('mutate, pattern', [
    (lambda d: d.__setitem__(3, np.where(np.arange(d[3].size).reshape(d[3].shape) == 40,
                                         np.nan, d[3])),
     r"tau\[5, 5\] \(joint 'joint6'\) is nan"),
    (lambda d: d.__setitem__(1, d[1][:, :6]), r'qd must have shape \(N, 7\)'),
    (lambda d: d.__setitem__(2, d[2][:-1]), 'q, qd, qdd and tau must have the same shape'),
    (lambda d: [d.__setitem__(i, d[i][:5]) for i in range(4)], 'record at least'),
])
def test_bad_arrays(configured_arm, base, mutate, pattern):
    t, q, qd, qdd, tau, _ = measured(configured_arm, seconds=2.0)
    data = [q, qd, qdd, tau]
    mutate(data)
    with pytest.raises(md.IdentificationError, match=pattern):
        md.identify(configured_arm, tuple(data), base=base)


def test_bad_time_series(configured_arm, base, tmp_path):
    t, _, _, _, tau, q = measured(configured_arm, seconds=4.0)
    t_bad = t.copy()
    t_bad[50] = t_bad[48]
    with pytest.raises(md.IdentificationError, match=r'time stamps must not decrease \(sample '
                       r'50, 0\.24 s, is before'):
        md.identify(configured_arm, (t_bad, q, tau), base=base)
    with pytest.raises(md.IdentificationError, match='cutoff 150 Hz must be between 0 and half'):
        md.identify(configured_arm, (t, q, tau), base=base, cutoff=150)
    with pytest.raises(md.IdentificationError, match='none long enough to filter'):
        md.identify(configured_arm, (t[:50], q[:50], tau[:50]), base=base, cutoff=2.5)
    path = tmp_path / 'bad.csv'
    path.write_text('time,joint1.position\n0,0\n')
    with pytest.raises(md.IdentificationError, match='lacks the columns joint2.position'):
        md.identify(configured_arm, path, base=base)
    with pytest.raises(md.IdentificationError, match='no such data file'):
        md.identify(configured_arm, tmp_path / 'missing.csv', base=base)


def test_bag_without_the_topic(configured_arm, base, tmp_path):
    pytest.importorskip('rosbags', reason='rosbags reads rosbag2 without ROS: pip install rosbags')
    t, _, _, _, tau, q = measured(configured_arm, seconds=1.0)
    write_bag(tmp_path / 'bag', configured_arm, t, q, tau)
    with pytest.raises(md.IdentificationError, match='has no topic /states'):
        md.identify(configured_arm, tmp_path / 'bag', base=base, topic='/states')


def without_the_middle(t, *arrays):
    """Keep the first and last third of a log: two stretches, the stamps keeping the gap."""
    third = len(t) // 3
    keep = np.r_[0:third, 2 * third:len(t)]
    return (t[keep],) + tuple(a[keep] for a in arrays)


def test_a_log_with_a_gap_is_filtered_in_stretches(configured_arm, base):
    """
    The middle third left out, the stamps keeping the gap: nothing is drawn across it.

    Filtering across the gap invented seconds of motion that never happened (on a real log,
    errors of 2-5 % against 0.09 %); each stretch filtered alone gives the parameters back as
    the whole log does, within the reported std, and the gap is reported.
    """
    t, _, _, _, tau, q = measured(configured_arm, seed=5, seconds=30.0)
    tg, qg, taug = without_the_middle(t, q, tau)
    estimate = md.identify(configured_arm, (tg, qg, taug), base=base, cutoff=2.5)
    stamps = estimate.processing['stamps']
    assert len(stamps) == 1 and len(stamps[0]['gaps']) == 1
    (a, b), = stamps[0]['gaps']
    assert a == tg[len(t) // 3 - 1] and b == tg[len(t) // 3]
    assert len(estimate.processing['stretches']) == 2
    within_confidence(estimate, base.values, 4.0)
    summary = stamps_summary(estimate.processing)
    assert f'gaps: {a:.3f}-{b:.3f} s' in summary and 'filtered in 2 stretch(es)' in summary


def test_several_logs_are_one_identification(configured_arm, base, tmp_path):
    """Identify two logs given as a list (arrays, CSV files): as one log with a gap."""
    t, _, _, _, tau, q = measured(configured_arm, seed=6, seconds=30.0)
    tg, qg, taug = without_the_middle(t, q, tau)
    gap = md.identify(configured_arm, (tg, qg, taug), base=base, cutoff=2.5)
    cut = len(t) // 3
    logs = [(tg[:cut], qg[:cut], taug[:cut]), (tg[cut:], qg[cut:], taug[cut:])]
    two = md.identify(configured_arm, logs, base=base, cutoff=2.5)
    # the same equations; the weighting's iteration stops at 0.1 % settled: not bit for bit
    np.testing.assert_allclose(two.values, gap.values, rtol=1e-6, atol=1e-12)
    paths = []
    for i, (ti, qi, taui) in enumerate(logs):
        paths.append(tmp_path / f'run{i}.csv')
        # each from its 0
        write_log_csv(paths[-1], configured_arm.joint_names, ti - ti[0], qi, taui)
    csvs = md.identify(configured_arm, paths, base=base, cutoff=2.5)
    np.testing.assert_allclose(csvs.values, gap.values, rtol=1e-6, atol=1e-12)
    assert csvs.processing['source'] == [str(p) for p in paths]
    assert len(csvs.processing['stamps']) == 2 and not any(
        r['gaps'] for r in csvs.processing['stamps'])


def test_a_loggers_repeats_and_missed_samples_are_found(configured_arm, base):
    """
    A logger that stamps on receipt, misses samples and writes some twice: found and reported.

    Each robot sample stamped within +- 0.2 of a period of its time; 3 % never written, 3 %
    written again half a period later.  The repeats are dropped, the missed samples
    interpolated over, and all of it reported; the parameters come back within their std.
    """
    t, _, _, _, tau, q = measured(configured_arm, seed=7)
    rng = np.random.default_rng(8)
    written = np.flatnonzero(rng.uniform(size=len(t)) > 0.03)
    twice = rng.uniform(size=len(written)) < 0.03
    rows = np.sort(np.r_[written, written[twice]], kind='stable')
    stamps = t[rows] + rng.uniform(-0.2, 0.2, len(rows)) / RATE
    stamps[1:][rows[1:] == rows[:-1]] = (t[rows] + 0.5 / RATE)[1:][rows[1:] == rows[:-1]]
    estimate = md.identify(configured_arm, (stamps, q[rows], tau[rows]), base=base, cutoff=2.5)
    (report,) = estimate.processing['stamps']
    assert report['samples'] == len(rows)
    assert report['repeated'] == twice.sum() > 50
    assert report['skipped'] == np.sum(np.diff(written) > 1) > 50
    assert 0.5 < report['jitter_ms'] < 1.2 and not report['gaps']       # period 5 ms
    assert estimate.processing['resampled']
    within_confidence(estimate, base.values, 4.5)


def test_bad_logs_are_named(configured_arm, base):
    t, _, _, _, tau, q = measured(configured_arm, seconds=4.0)
    with pytest.raises(md.IdentificationError, match=r'log 2: q must have shape \(N, 7\)'):
        md.identify(configured_arm, [(t, q, tau), (t, q[:, :3], tau)], base=base)
    with pytest.raises(md.IdentificationError, match='several logs must each be a time series'):
        md.identify(configured_arm, [(t, q, tau), (q, q, q, tau)], base=base)


@needs_erd
def test_a_log_without_the_fingers_names_the_tip_links(tmp_path, capsys):
    """
    A panda log without the finger joints, with the stock URDF: the error says how to cut it.

    Walked as a user would on the command line: the suggested ``--tip-link`` then identifies.
    """
    from manipulator_dynamics import cli
    urdf = erd('panda_description/urdf/panda.urdf')
    configured_arm = md.load_model(urdf, tip_links=['panda_link7'], check_inertia='warn')
    assert configured_arm.joint_names == tuple(f'panda_joint{i}' for i in range(1, 8))
    t, _, _, _, tau, q = measured(configured_arm, seconds=12.0)
    write_log_csv(tmp_path / 'log.csv', configured_arm.joint_names, t, q, tau)
    with pytest.raises(md.IdentificationError, match=r'lacks the columns panda_finger_joint1'
                       r".*tip_links=\['panda_link7'\]"):
        md.identify(md.load_model(urdf, check_inertia='warn'), tmp_path / 'log.csv')
    assert cli.main(['identify', urdf, str(tmp_path / 'log.csv'), '--cutoff', '2.5']) != 0
    assert '--tip-link panda_link7' in capsys.readouterr().err
    assert cli.main(['identify', urdf, str(tmp_path / 'log.csv'), '--cutoff', '2.5',
                     '--tip-link', 'panda_link7', '--check-inertia', 'warn']) == 0
    assert 'identified' in capsys.readouterr().out


def test_no_tip_links_to_suggest_where_a_middle_joint_is_missing(configured_arm):
    from manipulator_dynamics.recordings.formats import suggest_tip_links
    names = list(configured_arm.joint_names)
    assert suggest_tip_links(configured_arm, names[:3] + names[4:]) == ''
    assert "tip_links=['link4']" in suggest_tip_links(configured_arm, names[:4])


def test_validation_compares_every_model_on_data_not_fitted(configured_arm, base, tmp_path,
                                                            capsys):
    """
    Identify on one motion, validate on another: the library and ``identify --validate``.

    The robot carries 1 kg more at its wrist than its URDF says.  On the validation motion the
    identified model's error per joint is the sensor noise there (1 % of the joint's torque
    range + 0.02 N m), where the URDF's is larger by far.
    """
    from manipulator_dynamics import cli
    heavier = configured_arm.with_parameters([configured_arm.inertial[6, 9] + 1.0], ['M_link7'])
    fit, check = measured(heavier, seed=11), measured(heavier, seed=12, seconds=12.0)
    estimate = md.identify(configured_arm, (fit[0], fit[5], fit[4]), base=base, cutoff=2.5,
                           validation=(check[0], check[5], check[4]))
    validation = estimate.validation
    tau = md.inverse_dynamics(heavier, *check[1:4], friction=True)
    noise = 0.01 * np.abs(tau).max(axis=0) + 0.02
    assert validation.samples == len(check[0]) - 2 * int(np.ceil(3 * RATE / 2.5))
    assert np.all(validation.rms['identified'] < 1.2 * noise), validation.table()
    assert np.all(validation.rms['identified'] > 0.8 * noise), validation.table()
    assert validation.error['urdf'] > 10 * validation.error['identified'], validation.table()
    assert estimate.to_dict()['validation']['normalised_squared_error_percent'] == \
        validation.error
    # the same from the command line, the validation log a CSV of its own
    write_log_csv(tmp_path / 'fit.csv', configured_arm.joint_names, fit[0], fit[5], fit[4])
    write_log_csv(tmp_path / 'check.csv', configured_arm.joint_names, check[0], check[5], check[4])
    assert cli.main(['identify', robots.path('demo_arm'), str(tmp_path / 'fit.csv'),
                     '--joint-dynamics', DEMO_ARM_DYNAMICS, '--armature', '--cutoff', '2.5',
                     '--validate', str(tmp_path / 'check.csv')]) == 0
    out = capsys.readouterr().out
    # scored at every sample, shown at the rows predicted: 200 Hz cut down 4 times for 2.5 Hz
    assert estimate.processing['reduced']['factor'] == 4
    assert np.array_equal(validation.t, check[0][240:-240:4])        # its rows' own stamps
    np.testing.assert_array_equal(validation.measured, check[4][240:-240:4])
    assert cli.main(['identify', robots.path('demo_arm'), str(tmp_path / 'fit.csv'),
                     '--validate-plot', str(tmp_path / 'v.png')]) == 2
    assert '--validate-plot needs --validate LOG' in capsys.readouterr().err
    assert cli.main(['identify', robots.path('demo_arm'), str(tmp_path / 'fit.csv'),
                     '--joint-dynamics', DEMO_ARM_DYNAMICS, '--armature', '--cutoff', '2.5',
                     '--validate', str(tmp_path / 'check.csv'), '--validate-plot',
                     str(tmp_path / 'v.png')]) == 0
    assert f'plot: {tmp_path / "v.png"}' in capsys.readouterr().out
    assert (tmp_path / 'v.png').stat().st_size > 10000
    assert f'validation on {validation.samples} states: normalised squared error urdf ' \
        f'{validation.error["urdf"]:.4g} %, identified {validation.error["identified"]:.4g} %' \
        in out


def test_validation_judges_other_parameter_sets_beside_the_urdf(configured_arm, base, tmp_path,
                                                                capsys):
    """
    ``compare`` / ``--compare YAML``: a published or earlier set judged on the held-out data.

    The robot is 1 kg heavier at its wrist than its URDF.  Its true parameters, given as a
    parameters YAML, predict the held-out torques to the sensor noise; the URDF given again as
    a compared model predicts them through its own inverse dynamics exactly as the base
    parameters' row ``urdf`` does through the regressor (two independent computations).
    """
    from manipulator_dynamics import cli
    heavier = configured_arm.with_parameters([configured_arm.inertial[6, 9] + 1.0], ['M_link7'])
    fit, check = measured(heavier, seed=13), measured(heavier, seed=14, seconds=12.0)
    estimate = md.identify(configured_arm, (fit[0], fit[5], fit[4]), base=base, cutoff=2.5,
                           validation=(check[0], check[5], check[4]),
                           compare={'truth': heavier, 'again': configured_arm})
    validation = estimate.validation
    assert list(validation.error) == ['urdf', 'identified', 'truth', 'again']
    assert validation.error['again'] == pytest.approx(validation.error['urdf'], rel=1e-9)
    tau = md.inverse_dynamics(heavier, *check[1:4], friction=True)
    noise = 0.01 * np.abs(tau).max(axis=0) + 0.02
    assert np.all(validation.rms['truth'] < 1.2 * noise), validation.table()
    assert validation.error['urdf'] > 10 * validation.error['truth'], validation.table()
    # the command line: the true set as a parameters YAML, labelled by its file's name
    names = md.parameter_names(heavier, friction=True)
    values = md.standard_parameters(heavier, friction=True)
    (tmp_path / 'truth.yaml').write_text('standard_parameters:\n' + ''.join(
        f'  {n}: {float(v)!r}\n' for n, v in zip(names, values)))
    write_log_csv(tmp_path / 'fit.csv', configured_arm.joint_names, fit[0], fit[5], fit[4])
    write_log_csv(tmp_path / 'check.csv', configured_arm.joint_names, check[0], check[5], check[4])
    command = ['identify', robots.path('demo_arm'), str(tmp_path / 'fit.csv'), '--joint-dynamics',
               DEMO_ARM_DYNAMICS, '--armature', '--cutoff', '2.5']
    assert cli.main(command + ['--validate', str(tmp_path / 'check.csv'), '--compare',
                               str(tmp_path / 'truth.yaml')]) == 0
    out = capsys.readouterr().out
    assert f'truth {validation.error["truth"]:.4g} %' in out, out
    assert cli.main(command + ['--compare', str(tmp_path / 'truth.yaml')]) == 2
    assert '--compare needs --validate LOG or --folds K' in capsys.readouterr().err
    with pytest.raises(md.IdentificationError, match="compare 'short': its joints joint1, "):
        estimate.validate((check[0], check[5], check[4]),
                          compare={'short': md.load_model(robots.path('demo_arm'),
                                                          tip_links=['link3'])})
    with pytest.raises(md.IdentificationError, match="the label 'urdf' is the validation's"):
        md.identify(configured_arm, (fit[0], fit[5], fit[4]), compare={'urdf': heavier})


@pytest.fixture(scope='module')
def rough(configured_arm):
    """Give the demo arm the friction of a real joint: offsets and smooth Coulomb laws."""
    rng = np.random.default_rng(21)
    return configured_arm.with_joint_dynamics({
        j: {'offset': float(rng.uniform(-0.3, 0.3)),
            'coulomb_velocity': float(rng.uniform(0.03, 0.15))}
        for j in configured_arm.joint_names})


def logged(model, seed):
    """Return a logger's view of ``measured``: stamps +- 0.2 periods, 3 % missed, 3 % twice."""
    t, _, _, _, tau, q = measured(model, seed=seed)
    rng = np.random.default_rng(seed + 100)
    written = np.flatnonzero(rng.uniform(size=len(t)) > 0.03)
    rows = np.sort(np.r_[written, written[rng.uniform(size=len(written)) < 0.03]],
                   kind='stable')
    stamps = t[rows] + rng.uniform(-0.2, 0.2, len(rows)) / RATE
    again = np.r_[False, rows[1:] == rows[:-1]]
    stamps[again] = t[rows[again]] + 0.5 / RATE
    return stamps, q[rows], tau[rows]


def test_a_real_joints_friction_is_recovered_from_a_loggers_log(rough):
    """
    Offsets, smooth Coulomb laws, jittered stamps, missed and repeated samples: all recovered.

    ``friction='smooth'`` fits every joint's Coulomb velocity ``vs`` (within 25 % of the
    truth), and every base parameter, the offsets among them, lands within 4.5 of its
    reported standard deviations.
    """
    truth = md.base_parameters(rough, friction='offset', armature=True)
    estimate = md.identify(rough, logged(rough, 30), friction='smooth', armature=True,
                           cutoff=2.5)
    assert estimate.processing['friction'] == 'smooth'
    assert estimate.names == truth.names and any(n.startswith('Fo_') for n in truth.names)
    np.testing.assert_allclose(estimate.model.coulomb_velocity, rough.coulomb_velocity,
                               rtol=0.25)
    (report,) = estimate.processing['stamps']
    assert report['repeated'] > 50 and report['skipped'] > 50
    within_confidence(estimate, truth.values, 4.5)


def test_the_friction_law_is_chosen_on_held_out_data(configured_arm, rough):
    """
    The laws compared on pieces of the training data the fits did not see; never on validation.

    On the rough arm's data a law with offsets wins, by more than a third of the error; on
    data of the arm whose law is ``Fv qd + Fc sign(qd)`` the extra terms buy little (under 5 %:
    a smooth law fits the filtered velocity's sign changes a little better).  The validation
    data only score the law chosen: other validation data, the same choice and fold errors, and
    the score is that law's identified on all the training data.
    """
    chosen = md.select_friction(rough, logged(rough, 31), logged(rough, 32), cutoff=2.5,
                                armature=True)
    errors = chosen.processing['friction_selection']
    assert set(errors) == {'coulomb', 'offset', 'smooth'}
    law = chosen.processing['friction']
    assert law in ('offset', 'smooth') and errors[law] == min(errors.values())
    assert errors['coulomb'] > 1.5 * min(errors.values()), errors
    assert 'training data; the validation data scored the chosen law only' in \
        chosen.processing['friction_selection_by']
    other = md.select_friction(rough, logged(rough, 31), logged(rough, 37), cutoff=2.5,
                               armature=True)
    assert other.processing['friction_selection'] == errors
    alone = md.identify(rough, logged(rough, 31), friction=law, cutoff=2.5, armature=True,
                        validation=logged(rough, 32))
    assert chosen.validation.error == alone.validation.error
    plain = md.select_friction(configured_arm, logged(configured_arm, 33),
                               logged(configured_arm, 34), cutoff=2.5,
                               armature=True).processing['friction_selection']
    assert plain['coulomb'] <= 1.05 * min(plain.values()), plain
    with pytest.raises(md.IdentificationError, match='needs validation data'):
        md.select_friction(configured_arm, logged(configured_arm, 33), None)
    with pytest.raises(md.IdentificationError, match="friction must be .* got 'stribeck'"):
        md.identify(configured_arm, logged(configured_arm, 33), friction='stribeck')


def test_the_cli_chooses_the_law_and_writes_it_back(rough, tmp_path, capsys):
    """
    ``identify --friction-law coulomb,offset,smooth --validate LOG --urdf-out``: the user's path.

    The law chosen on folds of fit.csv is printed with every law's error, check.csv scoring it
    alone; the URDF written with
    its joint-dynamics YAML (offsets, Coulomb velocities) and the parameters YAML both load
    back into the identified model: the same torques.
    """
    from manipulator_dynamics import cli
    for name, seed in (('fit.csv', 35), ('check.csv', 36)):
        write_log_csv(tmp_path / name, rough.joint_names, *logged(rough, seed))
    urdf = tmp_path / 'identified.urdf'
    command = ['identify', robots.path('demo_arm'), str(tmp_path / 'fit.csv'), '--joint-dynamics',
               DEMO_ARM_DYNAMICS, '--armature', '--cutoff', '2.5', '--friction-law',
               'coulomb,offset,smooth']
    assert cli.main(command + ['--validate', str(tmp_path / 'check.csv'), '--urdf-out', str(urdf),
                               '--parameters-out', str(tmp_path / 'p.yaml')]) == 0
    out = capsys.readouterr().out
    assert 'chosen on held-out data (3-fold cross-validation in time of the training data; the ' \
        'validation data scored the chosen law only), normalised squared error of each law: ' \
        'coulomb ' in out
    law = out.split('friction law: ')[1].split(' ')[0]
    assert law in ('offset', 'smooth'), out
    dynamics = tmp_path / 'identified.joint_dynamics.yaml'
    assert f'written: {urdf}, {dynamics}' in out
    loaded = md.load_model(str(urdf), joint_dynamics=str(dynamics))
    also = md.load_model(robots.path('demo_arm'), parameters=str(tmp_path / 'p.yaml'))
    assert np.abs(loaded.friction_offset).min() > 0
    np.testing.assert_array_equal(loaded.coulomb_velocity, also.coulomb_velocity)
    assert (loaded.coulomb_velocity > 0).any() == (law == 'smooth')
    t, q, qd, qdd = exciting(rough, seconds=2.0, seed=5)
    np.testing.assert_allclose(md.inverse_dynamics(loaded, q, qd, qdd, friction=True),
                               md.inverse_dynamics(also, q, qd, qdd, friction=True),
                               rtol=1e-9, atol=1e-9)
    assert cli.main(command) == 2
    assert 'choosing among laws needs --validate LOG' in capsys.readouterr().err
    assert cli.main(command[:-1] + ['stribeck']) == 2
    assert "unknown law 'stribeck'" in capsys.readouterr().err


def test_k_fold_cross_validation_from_the_command_line(rough, tmp_path, capsys):
    """
    ``identify LOG --folds 3``: the log cut in three, each third predicted from the others.

    With several friction laws the final fit chooses among them by folds of the whole log, and
    each fold by folds of its own two thirds (pieces of 2 s: a 5 Hz filter's, not 2.5 Hz's);
    ``--folds`` and ``--validate`` together, or fewer than two folds, are refused, saying why.
    """
    from manipulator_dynamics import cli
    write_log_csv(tmp_path / 'log.csv', rough.joint_names, *logged(rough, 37))
    command = ['identify', robots.path('demo_arm'), str(tmp_path / 'log.csv'), '--joint-dynamics',
               DEMO_ARM_DYNAMICS, '--armature', '--cutoff', '5']
    assert cli.main(command + ['--folds', '3']) == 0
    out = capsys.readouterr().out
    assert '3-fold cross-validation in time, each piece held out in turn:' in out
    assert 'fold 3: urdf ' in out and 'pooled validation on ' in out
    assert cli.main(command + ['--folds', '3', '--friction-law', 'coulomb,offset']) == 0
    out = capsys.readouterr().out
    assert 'chosen on held-out data (3-fold cross-validation in time)' in out
    assert 'friction law: offset' in out
    assert out.count('Hz, law offset chosen, on its training pieces') == 3, out
    assert cli.main(command + ['--folds', '3', '--validate', str(tmp_path / 'log.csv')]) == 2
    assert 'held-out data is one or the other' in capsys.readouterr().err
    assert cli.main(command + ['--folds', '1']) == 2
    assert 'folds must be an integer of at least 2, got 1' in capsys.readouterr().err
    with pytest.raises(md.IdentificationError, match='needs time series'):
        t, q, qd, qdd, tau, _ = measured(rough, seed=38)
        md.cross_validate(rough, (q, qd, qdd, tau))


def test_nothing_a_fold_chooses_sees_its_held_out_piece(rough):
    """
    Corrupt the third a fold holds out: its cutoff, law and estimate do not move.

    Each fold of :func:`cross_validate` chooses the cutoff and the friction law on its own
    training pieces; were any chosen on the held-out piece (or on the whole log), a third
    scaled and shifted would change what fold 3 chose, or its parameters.
    """
    t, q, tau = logged(rough, 39)
    thirds = np.array_split(np.arange(len(t)), 3)
    spoiled = tau.copy()
    spoiled[thirds[2]] = 3.0 * tau[thirds[2]] + 5.0
    runs = [md.cross_validate(rough, (t, q, x), folds=3, friction=['coulomb', 'offset'],
                              armature=True) for x in (tau, spoiled)]
    clean, bad = (run.estimates[2] for run in runs)
    for key in ('cutoff_hz', 'friction', 'friction_selection', 'cutoff_selection'):
        assert clean.processing[key] == bad.processing[key], key
    np.testing.assert_array_equal(clean.values, bad.values)
    assert bad.validation.error['identified'] > 10 * clean.validation.error['identified']
    assert 'chosen' in runs[0].table() and 'on its training pieces' in runs[0].table()


def test_the_cutoff_is_chosen_from_the_data(configured_arm, base, tmp_path, capsys):
    """
    ``cutoff='auto'``: the motion's bandwidth from its spectrum, the cutoff from held-out error.

    The motion's highest harmonic is 0.5 Hz: the bandwidth found is that (the Hann window
    widens a line by a bin or two), every
    candidate is judged on held-out pieces, the one with the smallest error is used and
    reported, and the estimate is as good as at a cutoff chosen by hand.  The CLI's
    ``--cutoff auto`` says the same; a cutoff that is neither a number nor auto is refused.
    """
    from manipulator_dynamics import cli
    t, _, _, _, tau, q = measured(configured_arm, seed=40)
    estimate = md.identify(configured_arm, (t, q, tau), base=base, cutoff='auto')
    chosen = estimate.processing['cutoff_selection']
    assert 0.4 < chosen['bandwidth_hz'] <= 0.5 + 2 / 20.0      # within two bins of 20 s
    errors = chosen['held_out_error']
    assert len(errors) >= 3 and estimate.processing['cutoff_hz'] == min(errors, key=errors.get)
    within_confidence(estimate, base.values, 4.5)
    write_log_csv(tmp_path / 'log.csv', configured_arm.joint_names, t, q, tau)
    command = ['identify', robots.path('demo_arm'), str(tmp_path / 'log.csv'), '--joint-dynamics',
               DEMO_ARM_DYNAMICS, '--armature', '--cutoff']
    assert cli.main(command + ['auto']) == 0
    out = capsys.readouterr().out
    assert f"cutoff: {estimate.processing['cutoff_hz']:.3g} Hz (chosen: the smallest 3-fold " \
        'held-out error; motion bandwidth' in out
    with pytest.raises(SystemExit) as stopped:             # argparse's own usage error
        cli.main(command + ['fast'])
    assert stopped.value.code == 2
    assert "'fast' is neither a frequency in Hz nor auto" in capsys.readouterr().err
    with pytest.raises(md.IdentificationError, match="cutoff='auto' needs time series"):
        md.identify(configured_arm, measured(configured_arm, seed=41)[1:5], cutoff='auto')


def test_the_cutoffs_are_judged_up_to_the_errors_rise(configured_arm, monkeypatch):
    """
    The candidates are judged from the lowest up; past the first rise of the error, no more.

    The error is a valley in the cutoff: once a candidate's is above the smallest below it,
    the higher ones (each twice the rows) are not judged, and the report and the summary say
    which.  A candidate too low to judge is no rise.  Candidates the user gives are judged
    every one.  On a real log, the cutoff and the errors judged are those of judging them all.
    """
    from manipulator_dynamics.identification import selection
    t, _, _, _, tau, q = measured(configured_arm, seed=42)
    noisy = q + np.random.default_rng(7).normal(size=q.shape) * 3e-4   # the highest, too high
    _, whole = selection.choose_cutoff(configured_arm, (t, noisy, tau))
    every = selection.choose_cutoff(configured_arm, (t, noisy, tau), candidates=[
        m * whole['bandwidth_hz'] for m in selection.CUTOFF_MULTIPLES])
    errors = whole['held_out_error']
    assert every[0] == min(errors, key=errors.get) and whole['not_judged']
    assert errors == {c: every[1]['held_out_error'][c] for c in errors}
    assert sorted(errors) + whole['not_judged'] == sorted(every[1]['held_out_error'])
    curve = {}

    def held_out_error(model, ladder, folds, cutoff, **options):
        asked.append(cutoff)
        rank = sorted(ladder.candidates).index(cutoff)
        if curve[rank] is None:
            raise md.IdentificationError('too short')
        return curve[rank]
    monkeypatch.setattr(selection, 'held_out_error', held_out_error)
    for shape, judged, best in (((3.0, 2.0, 2.5, 1.0), 3, 1), ((None, 2.0, 1.0, 3.0), 4, 2),
                                ((1.0, 2.0, 0.5, 0.1), 2, 0), ((4.0, 3.0, 2.0, 1.0), 4, 3)):
        curve.update(enumerate(shape))
        asked = []
        cutoff, report = selection.choose_cutoff(configured_arm, (t, q, tau))
        tried = [m * report['bandwidth_hz'] for m in selection.CUTOFF_MULTIPLES]
        assert asked == tried[:judged] and report['not_judged'] == tried[judged:], shape
        assert cutoff == tried[best], shape
        said = cutoff_summary({'cutoff_hz': cutoff, 'cutoff_selection': report})
        assert ('not judged, past the error' in said) == (judged < 4), said
        asked = []
        assert selection.choose_cutoff(configured_arm, (t, q, tau), candidates=tried)[1][
            'not_judged'] == [] and asked == tried


def test_without_a_cutoff_the_data_choose_it(configured_arm, base, tmp_path, capsys):
    """
    No cutoff given: chosen as ``'auto'`` does, in the library and on the command line.

    A log with no motion band to choose around falls back to the default, 10 Hz, and says why
    (``'auto'`` asked for is an error there); ``(q, qd, qdd, tau)`` arrays are not filtered and
    choose nothing.  Cross-validation and the choice of the friction law choose it once, on
    every log, and report it.
    """
    from manipulator_dynamics import cli
    t, _, _, _, tau, q = measured(configured_arm, seed=42)
    estimate = md.identify(configured_arm, (t, q, tau), base=base)
    chosen = estimate.processing['cutoff_selection']
    assert estimate.processing['cutoff_hz'] == min(chosen['held_out_error'],
                                                   key=chosen['held_out_error'].get)
    # a ramp and noise: no motion band to choose around
    ramp = (t, np.outer(t, np.ones(configured_arm.n)) * 0.01
            + np.random.default_rng(44).normal(size=q.shape) * 1e-6, tau)
    cutoff, chosen = resolve_cutoff(configured_arm, ramp, None)
    assert cutoff == 10.0 and chosen['fallback'].startswith(
        '10 Hz, the default: no cutoff could be judged (0 tried')
    assert 'not chosen from the data: 10 Hz, the default' in cutoff_summary(
        {'cutoff_hz': cutoff, 'cutoff_selection': chosen})
    with pytest.raises(md.IdentificationError, match='no cutoff could be judged'):
        resolve_cutoff(configured_arm, ramp, 'auto')
    assert resolve_cutoff(configured_arm, ramp, 2.5) == (2.5, None)
    arrays = md.identify(configured_arm, measured(configured_arm, seed=43)[1:5], base=base)
    assert 'cutoff_selection' not in arrays.processing
    check = md.cross_validate(configured_arm, (t, q, tau), folds=3)
    for e in check.estimates:                   # each fold chose on its own training pieces
        errors = e.processing['cutoff_selection']['held_out_error']
        assert e.processing['cutoff_hz'] == min(errors, key=errors.get)
    assert check.table().count('Hz chosen, law coulomb, on its training pieces') == 3
    write_log_csv(tmp_path / 'log.csv', configured_arm.joint_names, t, q, tau)
    assert cli.main(['identify', robots.path('demo_arm'), str(tmp_path / 'log.csv'),
                     '--joint-dynamics', DEMO_ARM_DYNAMICS, '--armature']) == 0
    assert f"cutoff: {estimate.processing['cutoff_hz']:.3g} Hz (chosen: the smallest 3-fold" \
        in capsys.readouterr().out


@pytest.mark.parametrize('noise', ['white', 'slow'])
def test_reported_deviations_are_the_spread_over_noise_draws(configured_arm, base, noise):
    """
    Sixteen draws of the torque noise: the estimates scatter as much as the deviations say.

    White noise, 1 % + 0.02 N m per joint: the jackknife in blocks of time finds the rows
    independent (factor 1) and the scatter over draws is 1.13 times the mean reported deviation
    (median over the parameters; the filtered rows' own correlation, 0.31 between neighbours).
    Noise as slow as the motion (white noise low-passed at 0.3 Hz: a model error that follows
    the motion), the same RMS: ``s^2 (W^T W)^-1`` alone reports 2.0 times too little; the
    jackknife widens the deviations by 1.7-1.95 and the scatter is again 1.13 times them.
    """
    import scipy.signal
    t, q, qd, qdd = exciting(configured_arm)
    tau = md.inverse_dynamics(configured_arm, q, qd, qdd, friction=True)
    scale = 0.01 * np.abs(tau).max(axis=0) + 0.02
    b, a = scipy.signal.butter(2, 0.3 / (RATE / 2))
    values, stds, factors = [], [], []
    for seed in range(16):
        rng = np.random.default_rng(seed)
        e = rng.normal(size=tau.shape)
        if noise == 'slow':             # the filter's start-up left out: 2000 samples, 10 s
            e = scipy.signal.lfilter(b, a, rng.normal(size=(len(t) + 2000, configured_arm.n)),
                                     axis=0)
            e = e[2000:] / e[2000:].std(axis=0)
        estimate = md.identify(configured_arm,
                               (t, q + rng.normal(size=q.shape) * 1e-5, tau + e * scale),
                               base=base, cutoff=2.5)
        values.append(estimate.values)
        stds.append(estimate.std)
        factors.append(estimate.processing['std']['factor'])
    spread = np.std(values, axis=0, ddof=1) / np.mean(stds, axis=0)
    assert 0.85 < np.median(spread) < 1.35, np.median(spread)
    if noise == 'white':
        assert factors == [1.0] * 16
    else:
        assert min(factors) > 1.4
        assert np.median(spread * np.mean(factors)) > 1.6    # without the jackknife's factor


def test_validation_beyond_the_training_range_is_said(configured_arm, base):
    """
    A validation motion that takes joints further or faster than the fit saw: warned, named.

    The model is judged outside what it was identified on, a score that says little of it:
    ``ExtrapolationWarning``, the joints and shares in ``validation.beyond_training``, its
    table and its dict.  A motion inside the training data's range raises nothing.
    """
    rng = np.random.default_rng(5)
    wide, narrow = rng.uniform(-1.0, 1.0, (2, 600, configured_arm.n))
    qd, qdd = rng.uniform(-1.0, 1.0, (2, 600, configured_arm.n))
    inside = 0.5 * narrow
    tau = md.inverse_dynamics(configured_arm, inside, 0.5 * qd, qdd, friction=True)
    outside = inside.copy()
    outside[:, 3] = 2.0 * wide[:, 3]                 # joint 4 twice as far, both ways
    fast = 0.5 * qd.copy()
    fast[:, 1] *= 3.0                                # joint 2 three times as fast
    check = (outside, fast, qdd,
             md.inverse_dynamics(configured_arm, outside, fast, qdd, friction=True))
    with pytest.warns(ExtrapolationWarning,
                      match=r'joint2 speeds [\d.]+ %, joint4 positions [\d.]+ %'):
        estimate = md.identify(configured_arm, (inside, 0.5 * qd, qdd, tau), base=base,
                               validation=check)
    beyond = estimate.validation.beyond_training
    assert set(beyond) == {'joint2', 'joint4'}, beyond
    assert beyond['joint4']['positions'] > 0.3 and beyond['joint2']['speeds'] > 0.3
    assert 'leave the training data' in estimate.validation.table()
    assert estimate.to_dict()['validation']['beyond_training'] == beyond
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        again = md.identify(configured_arm, (inside, 0.5 * qd, qdd, tau), base=base,
                            validation=(inside[::-1], 0.5 * qd[::-1], qdd[::-1], tau[::-1]))
    assert again.validation.beyond_training == {}
