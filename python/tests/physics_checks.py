"""The checks of `test_physics_outside.py` on the models of
`physics_models.py`: lockstep against RotorPy against the analytic model,
with tolerances derived from the models' documented differences, and the
spec's first principles per airframe.

    python3 python/tests/physics_checks.py [iris hexa octa] > tables.md

prints the tables of docs/physics-crosscheck.md (about 60 s for the three).
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
import time

import numpy as np

from physics_models import *  # noqa: F401,F403 (the models, their helpers)
from physics_models import _SpeedPerEmf  # noqa: F401
# ------------------------------------------------------------ comparison


def series(rec, quantity, axes, w_h):
    """(samples, axes) of one quantity; rotor speeds as deviations from hover."""
    v = rec[quantity]
    v = v - w_h if quantity == "rotor speed" else v
    return v[:, axes]


def rel_error(a, b, scale, skip=()):
    """max |a - b| / scale over the samples but those in `skip`."""
    d = np.abs(a - b)
    d[list(skip)] = 0.0
    return float(np.max(d) / scale)


def peak(x):
    return float(np.max(np.abs(x)))


def step_table(name, what, ax, at_ms):
    """Values right after each step: lockstep, analytic (lockstep's
    structure), RotorPy, analytic (RotorPy's)."""
    f = flights(name, what)
    out = []
    for e in f["m"].events:
        for dt in at_ms:
            i = int(round((e + dt * 1e-3) / f["m"].dt))
            if i < len(f["ls"]["t"]):
                q = "accel" if what == "collective" else "alpha"
                sign = -1.0 if q == "accel" else 1.0  # a_up = -a_D
                out.append((e, dt, *[sign * f[k][q][i, ax] for k in ("ls", "an_ls", "rp", "an_rp")]))
    return out


def t63(t, w, t_step, t_end):
    """63 % rise (or fall) time of w after a step at t_step, linear
    interpolation between samples (the final value: w at t_end)."""
    k0, k1 = np.searchsorted(t, t_step), np.searchsorted(t, t_end)
    w0, w1 = w[k0], w[k1]
    target = w0 + (1 - math.exp(-1)) * (w1 - w0)
    seg = (w[k0:k1 + 1] - target) * np.sign(w1 - w0)
    j = int(np.argmax(seg >= 0))
    f = -seg[j - 1] / (seg[j] - seg[j - 1])
    return t[k0 + j - 1] + f * (t[1] - t[0]) - t[k0]


def lag_chain_t63(tau_a, tau_m):
    """63 % time of two first-order lags in series (tau_a = 0: tau_m)."""
    if tau_a == 0:
        return tau_m
    lo, hi = 0.0, 10 * (tau_a + tau_m)
    for _ in range(80):
        t = 0.5 * (lo + hi)
        y = 1 - (tau_m * math.exp(-t / tau_m) - tau_a * math.exp(-t / tau_a)) / (tau_m - tau_a)
        lo, hi = (t, hi) if y < 1 - math.exp(-1) else (lo, t)
    return lo


# ------------------------------------------------------------ tolerances

# Numerical floor of every comparison, as a fraction of the quantity's peak
# over the manoeuvre. Its parts, each estimated for the fastest dynamics here
# (the rotors, tau >= 33 ms) and RP_DT = 2 ms: the analytic model's held
# remainder (Adams-Bashforth, error ~(h/tau)^2 of a remainder that is
# ~dw/w ~ 3 % of the response: 1e-4); lockstep's angular and linear
# accelerations by central differences of its 1 ms states ((h/tau)^2/6:
# 1.2e-4); lockstep's RK4 at 1 ms ((h/tau)^4: 1e-6); RotorPy's RK45 at rtol
# 1e-9. Sum 2.2e-4; the floor is over twice that.
FLOOR = 5e-4


def taylor_term(sp: Spec, op: dict, m: Manoeuvre) -> float:
    """The analytic model's one linearisation is lockstep's drive train at
    hover; at a manoeuvre's largest speed target its rate constant differs
    (dQ/dw grows with w; the duty, and so the bus coupling, with the
    command): the relative change of the small-signal time constant
    between hover and that target, for the manoeuvre's bus pattern, the two
    causes added in size: the duty steps at once and the speed follows, so
    early in a transient only the first acts, late both. A
    lag off by that fraction moves a step response by at most 1/e of it:
    the term carries a margin of e."""
    dw = op["w"] * (np.sqrt(1.0 + np.abs(inputs(m, sp.n)).max()) - 1.0)
    if dw == 0:
        return 0.0
    w = op["w"] + dw
    u = sp.static_command(np.full(sp.n, w), op["rho"], op["emf"], op["G"])[0][0]
    k, tau = m.k_bus, sp.tau_rotor(op, m.k_bus)
    by_dq = sp.tau_rotor(dict(op, dq=2 * sp.kq_m * op["kt"] * w), k)
    by_duty = sp.tau_rotor(dict(op, d=(u - sp.dz) / (1 - sp.dz)), k)
    return abs(by_dq / tau - 1.0) + abs(by_duty / tau - 1.0)


def battery_term(sp: Spec, op: dict, m: Manoeuvre, x0) -> float:
    """`emf_drift` holds the bus current at its hover value; the current goes
    as w^3, so the drift rate is off by up to 3 (dw_target + dw_drift)/w_h,
    on a drift of dw_drift(T) over the manoeuvre: relative to a peak of at
    least half of (dw_target + dw_drift), at most 6 dw_drift(T)/w_h."""
    return 6 * abs(SPEED_PER_EMF[sp.name] * sp.emf_drift(op, x0, m.dur)) / op["w"]


def tolerances(name: str, manoeuvre: str) -> dict:
    """Per comparison, as a fraction of the quantity's peak: RotorPy against
    the analytic model with RotorPy's structure (its servo is linear: the
    floor alone); lockstep against the model with lockstep's structure;
    lockstep minus RotorPy against the difference the structures predict."""
    sp = Spec(name)
    x0, _ = trim(name)
    op = sp.operating_point(x0)
    m = manoeuvres(sp)[manoeuvre]
    t, b = taylor_term(sp, op, m), battery_term(sp, op, m, x0)
    return dict(rp=FLOOR, ls=t + b + FLOOR, diff=t + b + 2 * FLOOR, taylor=t, battery=b)


def compare(name: str, manoeuvre: str) -> list:
    """Rows (quantity, axes, peak, errors...) for one manoeuvre: each
    error is max |a - b| / peak over the manoeuvre (samples at a step
    edge skipped for the accelerations)."""
    f = flights(name, manoeuvre)
    m, w_h = f["m"], Spec(name).operating_point(trim(name)[0])["w"]
    rows = []
    for q, axes in m.axes.items():
        a = {k: series(f[k] | {"rotor speed": f[k]["w"]}, q, axes, w_h) for k in ("ls", "rp", "an_ls", "an_rp")}
        # lockstep's accelerations are central differences of its 1 ms
        # states: at a step the acceleration has a kink (a jump with the
        # rotor reaction), which they straddle; at t = 0 they are one-sided.
        k = {0} | {int(round(e / m.dt)) for e in m.events} if q in ("alpha", "accel") else ()
        sc = max(peak(a["an_ls"]), peak(a["an_rp"]))
        rows.append(dict(
            quantity=q, axes=axes, peak=sc,
            ls=rel_error(a["ls"], a["an_ls"], sc, k),
            rp=rel_error(a["rp"], a["an_rp"], sc, k),
            diff=rel_error(a["ls"] - a["rp"], a["an_ls"] - a["an_rp"], sc, k),
            raw=rel_error(a["ls"], a["rp"], sc, k),
            structural=rel_error(a["an_ls"], a["an_rp"], sc, k)))
    return rows


# ------------------------------------------------------------ first principles


def spec_torques(sp: Spec, x, wdot, wind=np.zeros(3)):
    """Body torque on lockstep's state x from the spec's equations alone:
    thrust kT (rho/rho_ref) w^2 (1 - J/J0) at each arm, torque (Q/T)0
    kT w^2 (1 + q1 J + q2 J^2) plus the rotor reaction J_r dot(w) by spin,
    the spec's angular damping, omega x (I omega + h). Then alpha = I^-1 tau."""
    w, om = x[13:13 + sp.n], x[10:13]
    kt = sp.kt_eff(isa_density(sp.origin_alt - x[2]))
    vb = rotation(euler(x[6:10])).T @ (x[3:6] - wind)
    v_ax = -vb[2] - sp.pos[:, 1] * om[0] + sp.pos[:, 0] * om[1]
    j = np.clip(math.pi / sp.radius * v_ax / np.where(w > 0, w, np.inf), -sp.j0 / 2, sp.j0)
    t = kt * w * w * (1 - j / sp.j0)
    q = sp.kq_m * kt * w * w * (1 + sp.q1 * j + sp.q2 * j * j)
    h = np.array([0.0, 0.0, -(sp.spin * sp.jr * w).sum()])
    tau = np.array([-(sp.pos[:, 1] * t).sum(), (sp.pos[:, 0] * t).sum(), (sp.spin * (q + sp.jr * wdot)).sum()])
    return tau - sp.ang_damp * om - cross(om, sp.inertia @ om + h), t


def deriv4(y, h):
    """Fourth-order central differences (error h^4/30 y^(5)); the two
    samples at each end are left at 0."""
    d = np.zeros_like(y)
    d[2:-2] = (-y[4:] + 8 * y[3:-1] - 8 * y[1:-3] + y[:-4]) / (12 * h)
    return d


def identity_error(sp: Spec, m: Manoeuvre):
    """tau = I alpha along a lockstep flight: lockstep's angular acceleration
    against I^-1 tau(spec, its own rotor speeds, rates and attitude), both
    derivatives by fourth-order central differences of the 1 ms states;
    the samples within 2 ms of a step (and of the ends) are skipped: the
    differences straddle the step's kink there."""
    s = lockstep_rows(sp.name, m.name)
    h = LS_US * 1e-6
    alpha, wdot = deriv4(s[:, 10:13], h), deriv4(s[:, 13:13 + sp.n], h)
    keep = np.ones(len(s), bool)
    keep[[0, 1, -2, -1]] = False
    for e in m.events:
        i = int(round(e / h))
        keep[max(i - 2, 0):i + 3] = False
    pred = np.array([np.linalg.solve(sp.inertia, spec_torques(sp, x, wd)[0]) for x, wd in zip(s[keep], wdot[keep])])
    return np.abs(alpha[keep] - pred).max(0)


@functools.lru_cache(maxsize=None)
def lockstep_rows(name, manoeuvre):
    """lockstep's state every 1 ms through a manoeuvre (incl. the pitch step)."""
    sp = Spec(name)
    m = pitch_step(sp) if manoeuvre == "pitch step" else manoeuvres(sp)[manoeuvre]
    return fly_lockstep(sp, m)["x_all"]


def step_alpha(sp: Spec, op: dict, x_rel):
    """The steady angular acceleration of relative thrust steps x_rel from
    tau = I alpha: arms x thrust and (Q/T)0 x thrust by spin (rad/s^2)."""
    dT = op["t"] * np.asarray(x_rel)
    tau = np.array([-(sp.pos[:, 1] * dT).sum(), (sp.pos[:, 0] * dT).sum(), (sp.spin * sp.kq_m * dT).sum()])
    return np.linalg.solve(sp.inertia, tau)


def chain(t, tau_a, tau_m):
    """Step response of two lags in series and its derivative (tau_a may be 0)."""
    if tau_a == 0:
        return 1 - math.exp(-t / tau_m), math.exp(-t / tau_m) / tau_m
    y = 1 - (tau_m * math.exp(-t / tau_m) - tau_a * math.exp(-t / tau_a)) / (tau_m - tau_a)
    return y, (math.exp(-t / tau_m) - math.exp(-t / tau_a)) / (tau_m - tau_a)


@functools.lru_cache(maxsize=None)
def fall(name, alt=250.0, secs=8.0):
    """lockstep with its motors cut at `alt` m: time, down speed, residual
    thrust (the coasting rotors' kT w^2 (1 - J/J0), spec) every 10 ms."""
    sp = Spec(name)
    p, _ = fly_to(sp, alt=alt, climb_s=30.0, hold_s=3.0)
    p.set_motors(np.zeros(sp.n))
    rows = [p.state.copy()]
    for _ in range(int(round(secs / 0.01))):
        p.step(10_000)
        rows.append(p.state.copy())
    s = np.array(rows)
    thrust = np.array([spec_torques(sp, x, np.zeros(sp.n))[1].sum() for x in s])
    return np.arange(len(s)) * 0.01, s[:, 5], thrust


def fall_ode(sp: Spec, t, v0, thrust):
    """m dv/dt = m g - c_Dz v|v| - c1z v - T(t), RK4 on the 10 ms grid with
    the residual thrust interpolated linearly."""
    v, out = v0, [v0]
    c1, c2 = sp.lin_drag[2], sp.quad_drag[2]

    def a(tt, vv):
        return sp.g - (c2 * abs(vv) * vv + c1 * vv + np.interp(tt, t, thrust)) / sp.mass

    for k in range(len(t) - 1):
        h, tk = t[k + 1] - t[k], t[k]
        k1 = a(tk, v)
        k2 = a(tk + h / 2, v + h / 2 * k1)
        k3 = a(tk + h / 2, v + h / 2 * k2)
        k4 = a(tk + h, v + h * k3)
        v += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(v)
    return np.array(out)


def level_speed(c1, c2, m, g, deg):
    """The airspeed along one body axis whose drag is m g tan(theta):
    c1 v + c2 v^2 = m g tan(theta) (the level-flight speed at tilt theta
    in the small-tilt, body-axis form)."""
    f = m * g * math.tan(math.radians(deg))
    return (-c1 + math.sqrt(c1 * c1 + 4 * c2 * f)) / (2 * c2)


def rotor_t63(name, manoeuvre, rotor, t_end):
    """lockstep's 63 % time of one rotor after the manoeuvre's first step."""
    s = lockstep_rows(name, manoeuvre)
    t = np.arange(len(s)) * LS_US * 1e-6
    return t63(t, s[:, 13 + rotor], 0.0, t_end)


def linear_t63(sp: Spec, op: dict, x_rel, rotor):
    """The same from the drive train linearised with its bus (all rotors
    coupled, `drive_train_matrix`) and the actuator lag: the exact
    small-signal figure the R_eff formula approximates."""
    n, h = sp.n, 1e-4
    from scipy.linalg import expm

    tgt = np.asarray(x_rel, float)
    M = sp.drive_train_matrix(op)
    if sp.act_tau:
        A = np.block([[M, -M], [np.zeros((n, n)), -np.eye(n) / sp.act_tau]])
        b = np.concatenate([np.zeros(n), tgt / sp.act_tau])
    else:
        A, b = M, -M @ tgt
    big = np.zeros((len(A) + 1, len(A) + 1))
    big[:-1, :-1], big[:-1, -1] = A * h, b * h
    E = expm(big)
    x, ws = np.zeros(len(A)), [0.0]
    for _ in range(4000):
        x = E[:-1, :-1] @ x + E[:-1, -1]
        ws.append(x[rotor])
    return t63(np.arange(len(ws)) * h, np.array(ws), 0.0, 0.399)


@functools.lru_cache(maxsize=None)
def first_principles(name: str) -> list:
    """Rows (figure, unit, from the spec, lockstep, tolerance, where the
    tolerance comes from): the spec's first principles against lockstep."""
    sp = Spec(name)
    x0, tr = trim(name)
    op, oph = sp.operating_point(x0), tr["op_hold"]
    ms = manoeuvres(sp)
    rows, group = [], ["hover"]

    def row(fig, unit, spec, ls, tol, why):
        rows.append(dict(figure=fig, unit=unit, spec=spec, lockstep=ls, tol=tol, why=why, group=group[0]))

    # Hover. The trim ends with 1 s open loop at the static map's hover
    # command for the EMF at its start; the EMF falls meanwhile.
    w_ls = x0[13:13 + sp.n].mean()
    w_static = sp.speed_of_command(oph["u"], op["rho"], op["emf"], op["G"])
    drift_rate = SPEED_PER_EMF[name] * sp.emf_drift(op, x0, 1.0)  # rad/s per s
    lag = 1.5 * abs(drift_rate) * sp.tau_rotor(op, sp.n) + 1e-6 * op["w"]
    row("hover rotor speed sqrt(m g / (n kT rho/rho0))", "rad/s", op["w"], w_ls, abs(w_static - op["w"]) + lag,
        "the packs' EMF fell in the trim's open-loop second: the static drive train at the trim's EMF "
        "gives that much less; plus the next row's lag")
    row("hover rotor speed, static drive train at the trim's EMF", "rad/s", w_static, w_ls, lag,
        "the rotors lag the drifting steady speed by tau x its rate (x1.5: tau depends on the pattern; +1e-6)")
    thrust_sf = -sp.mass * tr["sf"][2]  # N, from lockstep's specific force
    row("hover thrust m g", "N", sp.mass * sp.g, thrust_sf,
        sp.mass * sp.g * (2 * abs(w_ls / op["w"] - 1) + abs(x0[5]) * op["kz"] * op["w"] * sp.n / (sp.mass * sp.g))
        + 1e-6,
        "thrust goes as w^2: twice the rotor speed's shortfall (row 1), plus the inflow of the trim's "
        "residual sink rate (kz w v)")
    _, t_spec = spec_torques(sp, x0, np.zeros(sp.n))
    row("thrust kT rho/rho0 w^2 (1 - J/J0) at lockstep's rotor speeds", "N", t_spec.sum(), thrust_sf,
        1e-6 * thrust_sf, "an identity (same equations, same state): floating point and the ISA density (1e-6)")
    du = [sp.static_command(np.full(sp.n, oph["w"]), oph["rho"], oph["emf"] + e, oph["G"])[0][0] for e in (1e-3, -1e-3)]
    row("hover command, static drive train (ESC, BLDC, bus)", "", oph["u"], tr["u_pid"].mean(),
        abs((du[0] - du[1]) / 2e-3 * sp.emf_drift(oph, tr["x_hold"], 1.0)),
        "the PID's mean over the hold's last second against the static map at its end: the command "
        "the EMF's fall over that second moves")
    area = math.pi * sp.radius**2
    p_ideal = op["t"] ** 1.5 / math.sqrt(2 * op["rho"] * area)
    row("figure of merit: momentum theory's T^1.5/sqrt(2 rho A) over the shaft power (Q/T)0 T w", "", 0.5,
        p_ideal / (op["q"] * op["w"]), 0.5, "momentum theory's ideal power bounds the shaft power: within (0, 1)")
    # Steps: tau = I alpha with the spec's arms and coefficients.
    group[0] = "steps"
    for label, m, ax in (("roll", ms["roll doublet"], 0), ("pitch", pitch_step(sp), 1), ("yaw", ms["yaw steps"], 2)):
        a_star = step_alpha(sp, op, m.fun(0.0))[ax]
        row(f"{label}: tau = I alpha along the flight, with lockstep's rotor speeds", "rad/s^2",
            0.0, identity_error(sp, m)[ax], FLOOR * abs(a_star),
            "identity (spec thrust, torque, reaction, damping, gyroscopics on lockstep's state): central "
            "differences of rates and rotor speeds (FLOOR of the step's alpha)")
    for label, m, ax, t_at in (("roll", ms["roll doublet"], 0, 0.29), ("pitch", pitch_step(sp), 1, 0.29),
                               ("yaw", ms["yaw steps"], 2, 0.99)):
        s = lockstep_rows(name, m.name)
        h = LS_US * 1e-6
        i = int(round(t_at / h))
        x = s[i]
        alpha = (s[i + 1, 10:13] - s[i - 1, 10:13]) / (2 * h)
        om = x[10:13]
        # damping-corrected: add back the spec's damping, the inflow damping
        # kz w_h sum(arm^2) and omega x I omega
        d_in = op["kz"] * op["w"] * np.array([(sp.pos[:, 1] ** 2).sum(), (sp.pos[:, 0] ** 2).sum(), 0.0])
        corr = alpha + np.linalg.solve(sp.inertia, (sp.ang_damp + d_in) * om + cross(om, sp.inertia @ om))
        a_star = step_alpha(sp, op, m.fun(0.0))[ax]
        k = m.k_bus
        y, _ = chain(t_at, sp.act_tau, sp.tau_rotor(op, k))
        j_max = math.pi / sp.radius * np.abs(sp.pos[:, :2]).max() * np.abs(om).max() / op["w"]
        q1 = 2 * op["q"] * abs(sp.q1) * j_max / (op["w"] * (sp.ke**2 / sp.r_mot + op["dq"])) / 0.05
        row(f"{label} step +5 %: steady alpha = I^-1 sum(arm x dT) (damping added back, t = {t_at} s)",
            "rad/s^2", a_star, corr[ax], abs(a_star) * ((1 - y) + q1 + 2 * taylor_term(sp, op, m) * (1 - y) + FLOOR),
            "the rotors' unsettled part (lag chain at t) and the inflow's torque (q1 J at the peak rate) "
            "moving the rotor speeds")
    # Yaw right after the step: the rotor reaction from the drive train's lag.
    m = ms["yaw steps"]
    tau0, dws = sp.tau_rotor(op, 0), op["w"] * (np.sqrt(1 + m.fun(0.0)) - 1)
    h = LS_US * 1e-6

    def a_yaw(t, reaction=True, damped=True):
        y, dy = chain(t, sp.act_tau, tau0)
        tz = (sp.spin * (sp.kq_m * 2 * op["kt"] * op["w"] * dws * y + reaction * sp.jr * dws * dy)).sum()
        if damped:  # the spec's yaw damping on the rate built so far, r = integral of alpha
            ts = np.linspace(0.0, t, 41)
            tz -= sp.ang_damp[2] * np.trapezoid([a_yaw(u, reaction, False) for u in ts], ts)
        return np.linalg.solve(sp.inertia, [0.0, 0.0, tz])[2]

    for t_at in (0.002, 0.010):
        s = lockstep_rows(name, m.name)
        i = int(round(t_at / h))
        a_ls = (s[i + 1, 12] - s[i - 1, 12]) / (2 * h)
        a_dd = abs(a_yaw(t_at + h) - 2 * a_yaw(t_at) + a_yaw(t_at - h)) / h**2  # |alpha''|
        row(f"yaw step, alpha_z at +{t_at * 1e3:.0f} ms: (Q/T)0 dT + rotor reaction J_r dw/dt - D r "
            f"(without the reaction: {a_yaw(t_at, False):.4f})", "rad/s^2", a_yaw(t_at), a_ls,
            abs(a_yaw(t_at)) * (taylor_term(sp, op, m) + FLOOR) + h**2 / 6 * a_dd,
            "the drive train's rate at the target vs hover (Taylor term), the central difference's "
            "h^2/6 alpha'' (from the closed form)")
    # Rotor time constants: R_eff = R + k d^2 R0/eta for k rotors stepping.
    group[0] = "rotor time constant"
    for label, mn, k, rotor, t_end in (("collective, all rotors", "collective", sp.n, 0, 0.5),
                                       ("one side (roll)", "roll doublet", sp.n / 2,
                                        int(np.argmax(sp.pos[:, 1])), 0.29),
                                       ("CW/CCW pairs (yaw)", "yaw steps", 0, int(np.argmax(sp.spin)), 0.5)):
        m = ms[mn]
        pred = lag_chain_t63(sp.act_tau, sp.tau_rotor(op, k))
        lin = linear_t63(sp, op, op["w"] * (np.sqrt(1 + m.fun(0.0)) - 1), rotor)
        dw = op["w"] * (math.sqrt(1 + m.fun(0.0)[rotor]) - 1)
        drift = abs(SPEED_PER_EMF[name] * sp.emf_drift(op, x0, t_end))
        row(f"rotor 63 % time, {label} (R_eff with k = {k:g}{', + 10 ms ESC lag' if sp.act_tau else ''})",
            "ms", pred * 1e3, rotor_t63(name, mn, rotor, t_end) * 1e3,
            pred * 1e3 * (taylor_term(sp, op, m) + abs(lin / pred - 1) + 2 * drift / abs(dw) + FLOOR),
            "the time constant's change over the step (Taylor term); the R_eff formula against the exactly "
            "coupled bus (a one-side step mixes two modes); the packs' drift moving the final value")
    # Drag: terminal descent (motors cut at 250 m) and level speeds.
    group[0] = "drag"
    t, v, thrust = fall(name)
    vt = math.sqrt(sp.mass * sp.g / sp.quad_drag[2]) if sp.lin_drag[2] == 0 else None
    assert vt is not None, "the built-ins have no linear z drag"
    t_d = np.trapezoid(thrust, t) / (sp.mass * sp.g)  # time the coasting rotors hold the weight
    row("terminal descent sqrt(m g / c_Dz), motors cut, after 8 s", "m/s", vt, v[-1],
        vt * (2 * math.exp(-2 * sp.g * (t[-1] - t_d) / vt) + thrust[-1] / (2 * sp.mass * sp.g) + 1e-4),
        "the approach 2 v_t exp(-2 g (t - t_d)/v_t) (t_d: the time the coasting rotors' thrust held the "
        "weight) and the residual thrust's share")
    row("descent against m dv/dt = m g - c_Dz v^2 - T_rotors(t) (the coasting rotors' spec thrust)", "m/s",
        fall_ode(sp, t, v[0], thrust)[-1], v[-1], 1e-4 * vt,
        "RK4 on 10 ms with the rotor thrust interpolated linearly (1e-4 of v_t)")
    R0 = rotation(euler(x0[6:10]))
    p = trimmed_plant(sp)
    for ax, axis in ((0, "x"), (1, "y")):
        for deg in (10, 20):
            vl = level_speed(sp.lin_drag[ax], sp.quad_drag[ax], sp.mass, sp.g, deg)
            p.set_wind(R0 @ (np.eye(3)[ax] * vl) + x0[3:6])  # airspeed vl along the body axis
            drag = sp.mass * p.truth["specific_force_frd_mps2"][ax]  # the wind pushes: + along it
            # lockstep's speed for that drag: one Newton step from vl on the spec's slope
            v_ls = vl + (sp.mass * sp.g * math.tan(math.radians(deg)) - drag) / (
                sp.lin_drag[ax] + 2 * sp.quad_drag[ax] * vl)
            row(f"level speed at {deg} deg tilt, body {axis}: c1 v + c2 v^2 = m g tan theta", "m/s", vl, v_ls,
                1e-6 * vl, "an identity (lockstep's drag at that airspeed, read before any step): floating point")
    return rows


# ------------------------------------------------------------ the report


def pct(x):
    return f"{100 * x:.2f} %" if x >= 1e-4 else f"{100 * x:.3f} %"


def report(names=AIRFRAMES):
    """The tables of docs/physics-crosscheck.md, as markdown."""
    out = []
    p = out.append
    sps = {nm: Spec(nm) for nm in names}
    ops = {nm: sps[nm].operating_point(trim(nm)[0]) for nm in names}
    p("### RotorPy's parameters per airframe (hover at 20 m above the 488 m origin)\n")
    p("| key (unit) | " + " | ".join(names) + " |")
    p("|---|" + "---|" * len(names))
    prm = {nm: rotorpy_params(sps[nm], ops[nm]) for nm in names}
    for key, unit, fmt in (("mass", "kg", "{:.4g}"), ("Ixx", "kg m²", "{:.5g}"), ("Iyy", "kg m²", "{:.5g}"),
                           ("Izz", "kg m²", "{:.5g}"), ("Ixz", "kg m² (FLU)", "{:.4g}"),
                           ("rotor_directions", "±1", "{}"), ("k_eta", "N/(rad/s)²", "{:.5g}"),
                           ("k_m", "N m/(rad/s)²", "{:.5g}"), ("k_d", "N/(rad/s · m/s)", "{:.5g}"),
                           ("k_z", "N/(rad/s · m/s)", "{:.5g}"), ("c_Dx", "N/(m/s)²", "{:.4g}"),
                           ("c_Dz", "N/(m/s)²", "{:.4g}"), ("rotor_speed_max", "rad/s", "{:.1f}")):
        p(f"| `{key}` ({unit}) | " + " | ".join(fmt.format([int(v) for v in prm[nm][key]] if key == "rotor_directions"
                                                           else prm[nm][key]) for nm in names) + " |")
    p("| `tau_m` (ms, with the octa's 10 ms ESC lag): k = 0 (stiff bus: yaw, chirp, hover) / n/2 (roll) / n (collective) | " + " | ".join(
        " / ".join(f"{1e3 * (sps[nm].tau_rotor(ops[nm], k) + sps[nm].act_tau):.2f}"
                   for k in (0, sps[nm].n / 2, sps[nm].n)) for nm in names) + " |")
    p("| hover speed ω_h (rad/s) | " + " | ".join(f"{ops[nm]['w']:.2f}" for nm in names) + " |")
    for nm in names:
        sp = sps[nm]
        p(f"\n### {nm}: lockstep against RotorPy and the analytic model\n")
        p("Each figure is max |a − b| over the manoeuvre as a fraction of the quantity's peak (rotor speeds: "
          "deviation from hover). *structural* = the difference the two analytic variants predict; "
          "*unexplained* = |(lockstep − RotorPy) − (predicted)|; tolerances: lockstep vs its model / "
          "RotorPy vs its model / unexplained.\n")
        p("| manoeuvre | quantity | peak | lockstep − RotorPy | structural | unexplained | lockstep vs model "
          "| RotorPy vs model | tolerances |")
        p("|---|---|---|---|---|---|---|---|---|")
        for mn in manoeuvres(sp):
            tol = tolerances(nm, mn)
            for r in compare(nm, mn):
                names_ = {"alpha": "xyz", "accel": "xyz", "velocity": "NED", "position": "NED", "rates": "pqr",
                          "attitude": ("roll", "pitch", "yaw")}.get(r["quantity"])
                axes = f" {names_[r['axes'][0]]}" if names_ and len(r["axes"]) == 1 else ""
                axes = " NE" if r["quantity"] in ("velocity", "position") and len(r["axes"]) == 2 else axes
                p(f"| {mn} | {r['quantity']}{axes} | {r['peak']:.4g} | {pct(r['raw'])} | {pct(r['structural'])} "
                  f"| {pct(r['diff'])} | {pct(r['ls'])} | {pct(r['rp'])} | {pct(tol['ls'])} / {pct(tol['rp'])} "
                  f"/ {pct(tol['diff'])} |")
        p(f"\n{nm}: right after each step (lockstep | analytic, lockstep's structure | RotorPy | analytic, "
          "RotorPy's structure)\n")
        p("| manoeuvre | step at | after | quantity | lockstep | analytic (ls) | RotorPy | analytic (rp) |")
        p("|---|---|---|---|---|---|---|---|")
        for mn, ax, q in (("collective", 2, "a_up (m/s²)"), ("roll doublet", 0, "α_x (rad/s²)"),
                          ("yaw steps", 2, "α_z (rad/s²)")):
            tau = flights(nm, mn)["an_rp"]["tau_m"] * 1e3
            for e, dt, *v in step_table(nm, mn, ax, (2, tau, 3 * tau, 250)):
                p(f"| {mn} | {e:.1f} s | +{dt:.0f} ms | {q} | " + " | ".join(f"{x:.4f}" for x in v) + " |")
        p(f"\n{nm}: RotorPy's wall time: " + ", ".join(
            f"{mn} {flights(nm, mn)['rp_wall']:.1f} s" for mn in manoeuvres(sp)) + ".")
    p("\n### First principles against lockstep\n")
    p("| figure | unit | " + " | ".join(f"{nm}: spec → lockstep (tolerance)" for nm in names) + " |")
    p("|---|---|" + "---|" * len(names))
    fps = {nm: first_principles(nm) for nm in names}
    for i, r in enumerate(fps[names[0]]):
        cells = []
        for nm in names:
            q = fps[nm][i]
            cells.append(f"{q['spec']:.6g} → {q['lockstep']:.6g} (±{q['tol']:.2g})")
        p(f"| {r['figure']} | {r['unit']} | " + " | ".join(cells) + " |")
    p("\nWhere each tolerance comes from:\n")
    for i, r in enumerate(fps[names[0]]):
        p(f"{i + 1}. {r['figure']}: {r['why']}.")
    return "\n".join(out)


if __name__ == "__main__":
    t0 = time.perf_counter()
    print(report(tuple(sys.argv[1:]) or AIRFRAMES))
    print(f"\n({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
