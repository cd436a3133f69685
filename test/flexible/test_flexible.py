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
Flexible-link arms (Isobe & Imaizumi): the FEM model, the kinematics and the parallel schemes.

Oracles: the project's Newton-Euler torques (verified against Pinocchio elsewhere) for the rigid
limit, Euler-Bernoulli beam theory for the bending frequency, the arm's own eigenvalues for the
spectrum, and conservation of energy / the work-energy balance for the flexible torques.
"""

import math

from helpers import ROOT
from manipulator_dynamics import (flexible_inverse_dynamics, flexible_trajectory, FlexibleArm,
                                  FlexibleArmError, inverse_dynamics, load_model,
                                  parallel_matrices, robots)
from manipulator_dynamics.robots import random_urdf
import numpy as np
import pytest

# Euler-Bernoulli clamped-free beam: beta_1 L = 1.8751, w_1 = (beta_1 L)^2 sqrt(EI / (rho A L^4))
BETA1 = 1.8751040687


def quintic(t, duration, q0, q1):
    """Make a rest-to-rest quintic move and its exact derivatives: q, qd, qdd of shape (T, n)."""
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    s = np.clip(t / duration, 0.0, 1.0)[:, None]
    inside = ((t >= 0) & (t <= duration))[:, None]
    b = 10 * s**3 - 15 * s**4 + 6 * s**5
    db = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration * inside
    ddb = (60 * s - 180 * s**2 + 120 * s**3) / duration**2 * inside
    d = q1 - q0
    return q0 + d * b, d * db, d * ddb


def cantilever_hz(length, mass, ei):
    return BETA1**2 * math.sqrt(ei / (mass / length * length**4)) / (2 * math.pi)


def zero_crossing_hz(signal, t):
    """Mean frequency of a signal from its upward zero crossings (interpolated)."""
    x = signal - signal.mean()
    i = np.where((x[:-1] < 0) & (x[1:] >= 0))[0]
    tc = t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])
    return (len(tc) - 1) / (tc[-1] - tc[0])


def paper_three_link():
    """Build Isobe & Imaizumi's rigid 3-link arm: 0.40 m, 0.215 kg, centre of gravity mid-link."""
    return FlexibleArm.planar([0.4] * 3, [0.215] * 3, math.inf)


THREE_LINK_MOVE = (1.0, [-math.pi / 2, 0.0, 0.0], [0.3, math.pi / 2, -math.pi / 2])


def rms_error(tau, ref):
    return float(np.sqrt(np.mean((tau - ref) ** 2)) / np.sqrt(np.mean(ref ** 2)))


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------

def test_lumped_masses_and_rigid_model_keep_the_mass_distribution():
    arm = paper_three_link()
    assert arm.node_mass.sum() + 0.215 / 8 == pytest.approx(3 * 0.215)    # node 0 is the base
    rigid = arm.rigid_model()
    # each body carries the mass it owns; the first moment puts the centre of gravity mid-link
    # except that the node at the next joint (half an element of the next link) rides on it
    total = rigid.inertial[:, 9].sum() + arm.node_mass[0] + 0.215 / 8
    assert total == pytest.approx(3 * 0.215)
    assert len(arm.node_mass) == 13 and len(arm.element_nodes) == 12


def test_element_stiffness_bends_like_a_cantilever():
    """4 one-point Timoshenko elements under a tip load: deflection near P L^3 / 3 EI."""
    arm = FlexibleArm.planar([0.4], [0.0224], 0.46)
    from manipulator_dynamics.flexible.beam import element_global
    nn = len(arm.node_mass)
    K = np.zeros((6 * nn, 6 * nn))
    kg = np.empty((12, 12))
    for e, (a, b) in enumerate(arm.element_nodes):
        element_global(arm.element_axes[e], arm.element_stiffness[e], kg)
        K[6 * a:6 * a + 12, 6 * a:6 * a + 12] += kg
    f = np.zeros(6 * nn)
    f[6 * (nn - 1) + 1] = 1.0
    u = np.linalg.solve(K[6:, 6:], f[6:])
    exact = 0.4**3 / (3 * 0.46)
    # the reduced-integration linear element is stiff by 1 / (4 n^2) of the bending deflection
    assert u[-5] == pytest.approx(exact * (1 - 1 / 64), rel=2e-3)


# ---------------------------------------------------------------------------------------------
# Rigid limit: the parallel scheme against Newton-Euler (Isobe & Imaizumi's Fig. 3)
# ---------------------------------------------------------------------------------------------

def test_rigid_three_link_within_one_percent_at_100_steps_and_converging():
    arm = paper_three_link()
    rigid = arm.rigid_model()
    errors = {}
    for steps_per_second in (25, 50, 100, 200, 400):
        t = np.linspace(0.0, 1.0, steps_per_second + 1)
        q, qd, qdd = quintic(t, *THREE_LINK_MOVE)
        tau = flexible_inverse_dynamics(arm, t, q).tau
        errors[steps_per_second] = rms_error(tau, inverse_dynamics(rigid, q, qd, qdd))
    print('\nsteps/s  RMS error of the parallel scheme vs Newton-Euler')
    for sps, err in errors.items():
        print(f'{sps:7d}  {err:.2e}')
    assert errors[100] < 0.01
    values = list(errors.values())
    assert all(b < a / 2 for a, b in zip(values, values[1:])), errors


def test_the_rigid_torques_do_not_depend_on_how_the_arm_is_split_into_elements():
    t = np.linspace(0.0, 1.0, 201)
    q, qd, qdd = quintic(t, *THREE_LINK_MOVE)
    for elements in (1, 3, 6):
        arm = FlexibleArm.planar([0.4] * 3, [0.215] * 3, math.inf, elements_per_link=elements)
        tau = flexible_inverse_dynamics(arm, t, q).tau
        assert rms_error(tau, inverse_dynamics(arm.rigid_model(), q, qd, qdd)) < 2e-3


@pytest.mark.parametrize('seed', [3, 11])
def test_rigid_limit_on_random_3d_chains_with_prismatic_joints(seed):
    model = load_model(random_urdf(seed, n=5, branching=0.0), gravity=(0.3, -0.2, -9.81))
    beams = {name: {'flexural_rigidity': math.inf} for name in model.link_names}
    arm = FlexibleArm.from_model(model, beams, tip=[0.2, 0.1, 0.05])
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, 1001)
    q, qd, qdd = quintic(t, 1.0, rng.uniform(-1, 1, model.n), rng.uniform(-1, 1, model.n))
    tau = flexible_inverse_dynamics(arm, t, q).tau
    assert rms_error(tau, inverse_dynamics(arm.rigid_model(), q, qd, qdd)) < 1e-4


def test_L_T_P_form_equals_the_scheme():
    arm = FlexibleArm.planar([0.3, 0.25, 0.2], [0.1, 0.08, 0.05], [2.0, 1.0, 0.5],
                             gravity=(0.0, -9.81, 0.0))
    t = np.arange(0.0, 0.6, 1e-3)
    q, _, _ = quintic(t, 0.4, [0.0, 0.3, -0.2], [0.8, -0.4, 0.6])
    result = flexible_inverse_dynamics(arm, t, q)
    for step in (0, 150, 450):
        L, T, P = parallel_matrices(result.trajectory, step)
        np.testing.assert_allclose(L @ T @ P, result.tau[step], rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Flexible links
# ---------------------------------------------------------------------------------------------

def paper_one_link(elements=4):
    return FlexibleArm.planar([0.4], [0.0224], 0.46, elements_per_link=elements,
                              gravity=(0.0, 0.0, -9.81))


def paper_two_link(gravity=(0.0, 0.0, -9.81)):
    """Build Isobe & Imaizumi's 2-link arm (Fig. 8): 0.2 m, 11.2 g, EI 0.46 and 0.046 N m^2."""
    return FlexibleArm.planar([0.2, 0.2], [0.0112, 0.0112], [0.46, 0.046], gravity=gravity)


def paper_two_link_move(t):
    """Joint 1 by 0.5 rad, joint 2 by 1.0 rad in 0.2 s (Fig. 8): positions ``(T, 2)``."""
    return quintic(t, 0.2, [0.0, 0.0], [0.5, 1.0])[0]


def test_one_link_residual_vibration_is_the_first_bending_mode():
    """Isobe & Imaizumi's 1-link arm: a 0.2 s move; what rings after it is the cantilever mode."""
    arm = paper_one_link()
    t = np.arange(0.0, 2.2, 1e-3)
    q, _, _ = quintic(t, 0.2, [0.0], [1.0])
    result = flexible_inverse_dynamics(arm, t, q)
    after = t > 0.25
    theory = cantilever_hz(0.4, 0.0224, 0.46)
    assert theory == pytest.approx(10.02, abs=0.01)          # Isobe & Imaizumi's theoretical value
    for signal in (result.tau[after, 0], result.tip_deflection[after, 0, 1]):
        assert zero_crossing_hz(signal, t[after]) == pytest.approx(theory, rel=0.03)
    # the flexible arm lags, then rings: the reached angle differs from the target
    assert np.ptp(result.trajectory.q[after, 0]) > 1e-3


def test_first_mode_converges_with_elements_per_link():
    theory = cantilever_hz(0.4, 0.0224, 0.46)
    errors = [abs(paper_one_link(e).natural_frequencies(count=1)[0] / theory - 1)
              for e in (1, 2, 4, 8, 16)]
    assert errors[2] < 0.03
    assert all(b < a / 3 for a, b in zip(errors, errors[1:])), errors


def test_two_link_torque_spectrum_shows_two_modes():
    """Check the paper's 2-link arm (EI 0.46, 0.046): its torques ring at its two lowest modes."""
    arm = paper_two_link()
    t = np.arange(0.0, 4.2, 1e-3)
    result = flexible_inverse_dynamics(arm, t, paper_two_link_move(t))
    after = t >= 0.2
    freq = np.fft.rfftfreq(int(after.sum()), 1e-3)
    spectrum = 0.0
    for joint in range(2):
        signal = result.tau[after, joint] - result.tau[after, joint].mean()
        amplitude = np.abs(np.fft.rfft(signal * np.hanning(signal.size)))
        spectrum = spectrum + amplitude / amplitude.max()
    peaks = [i for i in range(1, len(spectrum) - 1)
             if spectrum[i] > spectrum[i - 1] and spectrum[i] >= spectrum[i + 1]]
    first = max(peaks, key=lambda i: spectrum[i])
    # the strongest peak at least 5 Hz (20 bins) away: the Hann window's leakage there is below
    # 1e-4 of the main peak, so a peak above 1 % is a second mode, not leakage
    second = max((i for i in peaks if abs(freq[i] - freq[first]) > 5.0),
                 key=lambda i: spectrum[i])
    assert spectrum[second] > 0.01 * spectrum[first]
    # in-plane modes of the arm at its final pose (the out-of-plane ones are not excited)
    modes = arm.natural_frequencies([0.5, 1.0], 4)
    resolution = 1.0 / (t[after][-1] - 0.2)
    for i in (first, second):
        assert np.min(np.abs(modes - freq[i])) < 2 * resolution, (freq[i], modes)


def test_energy_is_conserved_once_the_motion_stops():
    arm = paper_two_link(gravity=(0.0, -9.81, 0.0))
    t = np.arange(0.0, 1.5, 1e-3)
    q = paper_two_link_move(t)
    energy = flexible_trajectory(arm, t, q, spectral_radius=1.0,
                                 geometric_stiffening=False).energy
    total = energy.sum(axis=1)[t > 0.2]
    vibration = energy[t > 0.2, 0].max()              # the kinetic energy that keeps swinging
    assert vibration > 0
    # the trapezoidal rule conserves this energy exactly for a linear system; what is left is
    # the roundoff of ~1e3 band solves with a stiffness condition number ~1e8 (stiff axial and
    # shear terms)
    assert np.ptp(total) < 1e-7 * vibration
    # generalized-alpha takes energy from the modes the step does not resolve: the bending
    # vibration loses under 1e-4 of itself in 1.3 s
    damped = flexible_trajectory(arm, t, q, geometric_stiffening=False).energy.sum(axis=1)
    damped = damped[t > 0.2]
    assert 1e-3 * np.ptp(total) < damped[0] - damped[-1] < 1e-4 * vibration


def axial_spectrum(arm, dt, spectral_radius):
    """Spectrum of the root element's axial force after the paper's 1-link move stops."""
    t = np.arange(0.0, 2.3, dt)
    q, _, _ = quintic(t, 0.2, [0.0], [1.0])
    axial = flexible_inverse_dynamics(arm, t, q, spectral_radius=spectral_radius).axial_force
    x = axial[t > 0.3, 0] - axial[t > 0.3, 0].mean()
    window = np.hanning(x.size)
    return np.fft.rfftfreq(x.size, dt), np.abs(np.fft.rfft(x * window)) * 2 / window.sum()


def test_fig7_axial_force_rings_at_twice_the_bending_frequency():
    """
    Isobe & Imaizumi's Fig. 7: after the stop the axial force rings, here at 2 f1.

    The tip swings at the first bending frequency f1; the axial force follows the square of that
    swing (the inertial force on the bent chord), so 2 f1.  At the default 1 ms step no ringing
    of the stiff axial and shear modes is left over it.
    """
    arm = paper_one_link()
    f1 = arm.natural_frequencies(count=1)[0]
    freq, amplitude = axial_spectrum(arm, 1e-3, 0.8)              # the defaults: 1 ms, 0.8
    resolution = freq[1]
    peak = freq[np.argmax(amplitude)]
    assert abs(peak - 2 * f1) < resolution, (peak, 2 * f1)
    assert amplitude[freq > 100].max() < 0.01 * amplitude.max()
    # the same ringing as at a five times finer step
    fine_freq, fine = axial_spectrum(arm, 2e-4, 0.8)
    assert amplitude.max() == pytest.approx(fine[np.abs(fine_freq - peak) < 1.5 * resolution]
                                            .max(), rel=0.02)
    # the paper's trapezoidal rule at the same step: its undamped stiff modes, aliased near the
    # Nyquist frequency, ring louder than the 2 f1 ringing itself
    freq, trapezoidal = axial_spectrum(arm, 1e-3, 1.0)
    assert freq[np.argmax(trapezoidal)] > 100
    assert trapezoidal[freq > 100].max() > amplitude.max()


def kane_hub(omega, ts, t):
    """Hub angle, rate and acceleration of the spin-up at time ``t`` (scalar)."""
    if t >= ts:
        return omega * ts / 2 + omega * (t - ts), omega, 0.0
    a = 2 * math.pi / ts
    return (omega / ts * (t**2 / 2 + (math.cos(a * t) - 1) / a**2),
            omega / ts * (t - math.sin(a * t) / a), omega / ts * (1 - math.cos(a * t)))


def kane_spin_up(omega, elements, dt=5e-3, stiffening=True, seconds=25.0):
    """
    Kane, Ryan & Banerjee's spin-up beam: 10 m, 1.2 kg/m, EI 14000 N m^2, EA 2.8e7 N.

    The hub spins up in Ts = 15 s to ``omega`` (rad/s) as ``omega / Ts (t - Ts / 2 pi
    sin(2 pi t / Ts))``, then turns steadily; no gravity.  Returns ``t`` and the tip's
    deflection across the beam in the spinning frame, m.
    """
    ts = 15.0
    arm = FlexibleArm.planar([10.0], [12.0], 14000.0, elements_per_link=elements,
                             axial_rigidity=2.8e7, gravity=(0.0, 0.0, 0.0))
    t = np.arange(0.0, seconds, dt)
    theta = np.array([kane_hub(omega, ts, x)[0] for x in t])
    tip = flexible_trajectory(arm, t, theta[:, None],
                              geometric_stiffening=stiffening).tip_deflection[:, 0]
    return t, -np.sin(theta) * tip[:, 0] + np.cos(theta) * tip[:, 1]


@pytest.mark.parametrize('omega', [4.0, 6.0])
def test_spin_up_beam_stays_bounded_only_with_geometric_stiffening(omega):
    """
    Kane, Ryan & Banerjee (1987): spun past its first bending frequency (3.8 rad/s), the beam.

    Without the centrifugal tension's stiffness the co-rotational linear model softens without
    bound; with it the tip lags while the hub accelerates and rings about zero once it turns
    steadily.  The lag's largest value is the static deflection of the cantilever under the
    largest inertial load of the spin-up, rho A alpha x with alpha = 2 omega / Ts, 11 q L^4 /
    (120 EI) at the tip (the dynamics and the stiffening shift it by a few per cent).
    """
    t, free = kane_spin_up(omega, 8, stiffening=False)
    assert np.abs(free[t > 20]).max() > 100.0                     # metres: diverged
    lags = []
    for elements in (4, 8, 16):
        t, tip = kane_spin_up(omega, elements)
        lags.append(-tip.min())
    static = 11 * 1.2 * (2 * omega / 15.0) * 10.0**5 / (120 * 14000.0)
    print(f'\nspin-up to {omega} rad/s: largest lag {lags} m (4, 8, 16 elements), static '
          f'estimate {static:.3f} m')
    assert lags[-1] == pytest.approx(static, rel=0.1)
    assert abs(lags[2] - lags[1]) < abs(lags[1] - lags[0]) / 3            # converging
    steady = tip[t > 18]
    assert abs(steady.mean()) < 0.01 * lags[-1] and np.abs(steady).max() < 0.1 * lags[-1]
    # and the step does not matter (a lag that grew with it was a co-rotation error, now gone)
    t, coarse = kane_spin_up(omega, 8, dt=2e-2)
    assert -coarse.min() == pytest.approx(lags[1], rel=0.01)


def finite_segment_spin_up(pin, omega, segments, seconds=25.0, ts=15.0, length=10.0,
                           mass_per_length=1.2, ei=14000.0):
    """
    Integrate the spin-up beam as a chain of rigid rods on hinge springs ``EI / h`` (Pinocchio).

    Fully nonlinear: large rotations, centrifugal and Coriolis forces exact; no stiffening term
    is added, it comes from the geometry.  The hinges sit at the segments' midpoints
    ``(i - 1/2) h`` (a half rod at the hub, clamped, and at the tip), which makes a cantilever's
    tip compliance ``L^3 / 3 EI (1 - 1 / 4 N^2)``.  The hub follows the spin-up; the hinges are
    integrated by scipy's DOP853.  Returns ``t`` (every 0.05 s) and the tip's deflection across
    the hub frame, m.
    """
    from scipy.integrate import solve_ivp
    h = length / segments
    model = pin.Model()
    model.gravity.setZero()

    def rod(size):
        mass = mass_per_length * size
        return pin.Inertia(mass, np.array([size / 2, 0.0, 0.0]),
                           np.diag([0.0, mass * size**2 / 12, mass * size**2 / 12]))

    joint = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), 'hub')
    model.appendBodyToJoint(joint, rod(h / 2), pin.SE3.Identity())
    rods = [h] * (segments - 1) + [h / 2]
    offset = h / 2
    for i, size in enumerate(rods):
        joint = model.addJoint(joint, pin.JointModelRZ(),
                               pin.SE3(np.eye(3), np.array([offset, 0.0, 0.0])), f'hinge{i}')
        model.appendBodyToJoint(joint, rod(size), pin.SE3.Identity())
        offset = size
    data = model.createData()
    n, spring = segments, ei / h

    def rates(t, x):
        angle, rate, acceleration = kane_hub(omega, ts, t)
        q, v = np.r_[angle, x[:n]], np.r_[rate, x[n:]]
        a = np.zeros(n + 1)
        a[0] = acceleration
        bias = pin.rnea(model, data, q, v, a)[1:]        # with the hub's acceleration
        M = pin.crba(model, data, q)
        return np.r_[x[n:], np.linalg.solve(M[1:, 1:], -spring * x[:n] - bias)]

    t = np.arange(0.0, seconds, 0.05)
    solution = solve_ivp(rates, (0.0, seconds), np.zeros(2 * n), method='DOP853', rtol=1e-8,
                         atol=1e-10, t_eval=t)
    assert solution.success, solution.message
    return t, (np.array(rods)[:, None] * np.sin(np.cumsum(solution.y[:n], axis=0))).sum(axis=0)


@pytest.mark.parametrize('omega', [4.0, 6.0])
def test_spin_up_beam_follows_a_nonlinear_multibody_beam(omega):
    """
    The whole spin-up, against an independent nonlinear model of the same beam.

    Kane, Ryan & Banerjee's published curve is not on this machine; what they computed, a beam
    with its large motion and geometric nonlinearity intact, is: a chain of rigid rods and
    hinge springs in Pinocchio, integrated without linearisation.  With 16 elements the tip's
    deflection follows the 10-rod chain within 2 % of the largest lag over the whole 25 s, and
    closer than with 8 elements (the chain's own error is about 0.5 %: 20 rods move its lag by
    that much).
    """
    pin = pytest.importorskip('pinocchio', reason='Pinocchio integrates the reference beam: '
                              'pip install pin')
    t_chain, chain = finite_segment_spin_up(pin, omega, 10)
    lag = -chain.min()
    errors = []
    for elements in (8, 16):
        t, tip = kane_spin_up(omega, elements)
        errors.append(np.abs(np.interp(t_chain, t, tip) - chain).max() / lag)
    print(f'\nspin-up to {omega} rad/s: chain lag {lag:.4f} m; FEM - chain, largest: '
          f'{100 * errors[0]:.2f} % (8 elements), {100 * errors[1]:.2f} % (16)')
    assert errors[1] < 0.02
    assert errors[1] < errors[0]


def rotating_cantilever_flap(omega, ei=14000.0, mass_per_length=1.2, length=10.0, n=100):
    """
    First flapwise frequency (rad/s) of a uniform cantilever spinning at ``omega`` about its root.

    Euler-Bernoulli with the centrifugal tension ``N(x) = rho A omega^2 (L^2 - x^2) / 2``, that
    is ``EI w'''' - (N w')' = rho A w^2 w``, by Hermite cubic elements (consistent mass and
    geometric stiffness): an independent discretisation of the classical problem.
    """
    from scipy.linalg import eigh
    le = length / n
    k = ei / le**3 * np.array(
        [[12, 6 * le, -12, 6 * le], [6 * le, 4 * le**2, -6 * le, 2 * le**2],
         [-12, -6 * le, 12, -6 * le], [6 * le, 2 * le**2, -6 * le, 4 * le**2]])
    m = mass_per_length * le / 420 * np.array(
        [[156, 22 * le, 54, -13 * le], [22 * le, 4 * le**2, 13 * le, -3 * le**2],
         [54, 13 * le, 156, -22 * le], [-13 * le, -3 * le**2, -22 * le, 4 * le**2]])
    g = 1 / (30 * le) * np.array(
        [[36, 3 * le, -36, 3 * le], [3 * le, 4 * le**2, -3 * le, -le**2],
         [-36, -3 * le, 36, -3 * le], [3 * le, -le**2, -3 * le, 4 * le**2]])
    K = np.zeros((2 * n + 2, 2 * n + 2))
    M = np.zeros_like(K)
    for e in range(n):
        x = (e + 0.5) * le
        tension = mass_per_length * omega**2 * (length**2 - x**2) / 2
        K[2 * e:2 * e + 4, 2 * e:2 * e + 4] += k + tension * g
        M[2 * e:2 * e + 4, 2 * e:2 * e + 4] += m
    return math.sqrt(eigh(K[2:, 2:], M[2:, 2:], eigvals_only=True)[0])


@pytest.mark.parametrize('omega', [2.0, 6.0])
def test_a_spinning_beam_rings_at_the_rotating_cantilevers_lead_lag_frequency(omega):
    """
    Ring, turning steadily at ``omega``, at the lead-lag frequency ``sqrt(w_flap^2 - omega^2)``.

    In the plane of rotation the centrifugal tension stiffens the beam as it does out of it, and
    a sideways displacement is softened by ``omega^2`` (which the co-rotational model has by
    itself).  At low speed that is Southwell's ``w0^2 + 0.1933 omega^2``; at 6 rad/s, 1.6 times
    the first frequency at rest, the linear formula is 2.5 % high and the eigenvalue is the
    oracle.  The beam of Kane et al. is spun up in 3 s and then rings about its steady state.
    """
    arm = FlexibleArm.planar([10.0], [12.0], 14000.0, elements_per_link=16,
                             axial_rigidity=2.8e7, gravity=(0.0, 0.0, 0.0))
    dt, ts = 5e-3, 3.0
    t = np.arange(0.0, 40.0, dt)
    theta = np.where(t < ts, omega / ts * (t**2 / 2 + (ts / (2 * math.pi))**2
                                           * (np.cos(2 * math.pi * t / ts) - 1)),
                     omega * ts / 2 + omega * (t - ts))
    tip = flexible_trajectory(arm, t, theta[:, None]).tip_deflection[:, 0]
    across = -np.sin(theta) * tip[:, 0] + np.cos(theta) * tip[:, 1]
    after = t > ts + 1.0
    measured = 2 * math.pi * zero_crossing_hz(across[after], t[after])
    expected = math.sqrt(rotating_cantilever_flap(omega)**2 - omega**2)
    print(f'\nspinning at {omega} rad/s: lead-lag {measured:.4f} rad/s, the rotating '
          f'cantilever {expected:.4f}')
    assert measured == pytest.approx(expected, rel=0.01)


def test_damping_takes_the_vibration_away():
    arm = FlexibleArm.planar([0.4], [0.0224], 0.46, damping=(0.0, 2e-3))
    t = np.arange(0.0, 1.5, 1e-3)
    q, _, _ = quintic(t, 0.2, [0.0], [1.0])
    tip = flexible_trajectory(arm, t, q).tip_deflection[:, 0, 1]
    early = np.ptp(tip[(t > 0.25) & (t < 0.45)])
    late = np.ptp(tip[t > 1.3])
    assert late < 0.2 * early


def test_work_of_the_flexible_torques_is_the_energy_gained():
    """
    For a flexible 3-D arm, the torques' work during the move equals the energy it gains.

    This checks the flexible torques of the parallel scheme independently of how they are summed.
    The linear model (no geometric stiffening) is the one whose energy is exactly kinetic plus
    gravity plus strain: the geometric stiffness of the rigid motion's axial forces stands for
    the work of those forces on the links' second-order shortening, which that sum leaves out.
    What is left, 1.4e-4 of the energy at any step, is the linear model's own: it falls to 1e-5
    for links 4 times as stiff.  The default generalized-alpha balances as well as the
    trapezoidal rule (spectral radius 1) once its accelerations are taken at the steps' own
    times; its acceleration variable lags by (alpha_f - alpha_m) h, which left the work 1.7e-3
    short at a 1 ms step and 5.4e-4 at 0.25 ms.
    """
    model = load_model(robots.path('demo_arm'))
    beams = {name: {'flexural_rigidity': 40.0} for name in model.link_names}
    arm = FlexibleArm.from_model(model, beams)

    def balance(dt, spectral_radius):
        t = np.arange(0.0, 0.8, dt)
        q, qd, _ = quintic(t, 0.6, np.zeros(model.n), np.linspace(0.4, -0.3, model.n))
        result = flexible_inverse_dynamics(arm, t, q, geometric_stiffening=False,
                                           spectral_radius=spectral_radius)
        assert abs(result.tip_deflection).max() > 1e-4           # it does bend
        power = np.einsum('ti,ti->t', result.tau, qd)
        work = np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(t))
        energy = result.trajectory.energy.sum(axis=1)
        return work / (energy[-1] - energy[0]) - 1

    errors = {(dt, rho): balance(dt, rho) for dt in (1e-3, 2.5e-4) for rho in (1.0, 0.8)}
    print('\nwork / energy - 1:', {k: f'{v:.2e}' for k, v in errors.items()})
    for error in errors.values():
        assert abs(error) < 3e-4
        assert abs(error - errors[2.5e-4, 1.0]) < 1e-4            # not an error of the step


def test_the_shipped_configs_load():
    import os
    config = os.path.join(ROOT, 'config')
    arm = FlexibleArm.from_yaml(os.path.join(config, 'flexible_arm.yaml'))
    assert arm.n == 7 and [link.rigid for link in arm.links].count(True) == 3
    assert FlexibleArm.from_yaml(os.path.join(config, 'flexible_two_link.yaml')).n == 2


def test_yaml_and_from_model_build_the_same_arm(tmp_path):
    text = f'urdf: {robots.path("demo_arm")}\nlinks:\n  {{names}}\n'
    model = load_model(robots.path('demo_arm'))
    entries = '\n  '.join(
        f'{name}: {{flexural_rigidity: 50.0, elements: 2}}' for name in model.link_names)
    path = tmp_path / 'arm.yaml'
    path.write_text(text.replace('{names}', entries))
    arm = FlexibleArm.from_yaml(str(path))
    direct = FlexibleArm.from_model(model, {name: {'flexural_rigidity': 50.0, 'elements': 2}
                                            for name in model.link_names})
    np.testing.assert_array_equal(arm.node_mass, direct.node_mass)
    np.testing.assert_array_equal(arm.element_stiffness, direct.element_stiffness)
    assert arm.node_mass.sum() + model.inertial[0, 9] / 4 == pytest.approx(
        model.inertial[:, 9].sum())


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize('kwargs, message', [
    ({'flexural_rigidity': 0.0}, "link 'link1': flexural_rigidity must be positive"),
    ({'flexural_rigidity': -1.0}, "link 'link1': flexural_rigidity must be positive"),
    ({'masses': [0.0]}, "link 'link1': mass must be positive"),
    ({'lengths': [-0.4]}, 'link 1: length must be positive'),
    ({'elements_per_link': 0}, "link 'link1': elements must be an integer >= 1"),
    ({'shear_rigidity': 0.0}, "link 'link1': shear_rigidity must be positive"),
    ({'masses': [0.1, 0.2]}, 'masses needs 1 values'),
])
def test_bad_arms_are_named(kwargs, message):
    args = {'lengths': [0.4], 'masses': [0.0224], 'flexural_rigidity': 0.46}
    args.update(kwargs)
    with pytest.raises(FlexibleArmError, match=message):
        FlexibleArm.planar(**args)


def test_bad_beam_yaml_is_named():
    model = load_model(robots.path('demo_arm'))
    with pytest.raises(FlexibleArmError, match="link 'nope'"):
        FlexibleArm.from_model(model, {'nope': {'flexural_rigidity': 1.0}})
    with pytest.raises(FlexibleArmError, match='flexural_rigidity is missing'):
        FlexibleArm.from_model(model, {model.link_names[0]: {'mass': 1.0}})
    beams = {name: {'flexural_rigidity': 1.0} for name in model.link_names}
    beams[model.link_names[2]]['stiffnes'] = 3.0
    with pytest.raises(FlexibleArmError, match='unknown field.*stiffnes'):
        FlexibleArm.from_model(model, beams)


@pytest.mark.parametrize('t, q, message', [
    (np.array([0.0, 0.1, 0.1, 0.2]), np.zeros((4, 2)), r'increase strictly: t\[2\]'),
    (np.array([0.0, 0.2, 0.1, 0.3]), np.zeros((4, 2)), 'increase strictly'),
    (np.linspace(0, 1, 5), np.zeros((5, 3)), r'shape \(T, 2\).*joint1, joint2'),
    (np.linspace(0, 1, 5), np.zeros((4, 2)), 't has 5 samples but q has 4'),
    (np.linspace(0, 1, 2), np.zeros((2, 2)), 'at least 3 samples'),
    (np.linspace(0, 1, 5), np.array([[0, 0]] * 4 + [[0, np.nan]]),
     "q of joint 'joint2' is not finite at sample 4"),
])
def test_bad_trajectories_are_named(t, q, message):
    arm = paper_two_link()
    with pytest.raises(ValueError, match=message):
        flexible_trajectory(arm, t, q)


def test_a_step_too_coarse_for_the_first_mode_is_refused_with_the_step_to_use():
    arm = paper_one_link()
    t = np.arange(0.0, 1.0, 0.02)                              # 20 ms: 5 steps per 10 Hz period
    q, _, _ = quintic(t, 0.2, [0.0], [1.0])
    with pytest.raises(ValueError, match=r'first bending mode.*9\.858 Hz.*at most 0\.0101 s'):
        flexible_trajectory(arm, t, q)
    result = flexible_trajectory(arm, t, q, dt=0.005)          # resampled: accepted
    assert result.t[1] - result.t[0] == pytest.approx(0.005)


def test_rigid_links_are_the_limit_of_stiff_ones_in_a_mixed_3d_arm():
    """Links 1, 6, 7 rigid, the rest flexible: as the rest stiffens, the torques become rigid."""
    model = load_model(robots.path('demo_arm'))
    t = np.arange(0.0, 1.0, 5e-4)
    q, _, _ = quintic(t, 0.8, np.zeros(model.n), [0.8, -0.5, 0.4, -0.9, 0.6, 0.5, 0.3])

    def arm(ei):
        stiffness = [math.inf if i in (0, 5, 6) else ei for i in range(model.n)]
        return FlexibleArm.from_model(model, {name: {'flexural_rigidity': value}
                                              for name, value in zip(model.link_names, stiffness)})
    rigid = flexible_inverse_dynamics(arm(math.inf), t, q).tau
    errors = [rms_error(flexible_inverse_dynamics(arm(ei), t, q).tau, rigid)
              for ei in (1e4, 1e5, 1e6)]
    assert all(b < a / 2 for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 0.01


def test_the_shipped_demo_arm_config_runs_bounded():
    import os
    arm = FlexibleArm.from_yaml(os.path.join(ROOT, 'config',
                                             'flexible_arm.yaml'))
    t = np.arange(0.0, 1.5, 1e-3)
    q, _, _ = quintic(t, 0.8, np.zeros(arm.n), [0.8, -0.5, 0.4, -0.9, 0.6, 0.5, 0.3])
    result = flexible_inverse_dynamics(arm, t, q)
    rigid = flexible_inverse_dynamics(arm.with_rigid_links(), t, q)
    assert np.abs(result.tip_deflection).max() < 0.02                 # mm, not metres
    assert np.abs(result.tau).max() < 3 * np.abs(rigid.tau).max()
