"""lockstep's plant against an independent simulator (RotorPy's
`Multirotor`) and against the spec's first principles: the models and
helpers of `test_physics_outside.py` (issue 38, items 1 and 2).

The checks and the tables are in `physics_checks.py`.

Frames: everything is compared in lockstep's frames (NED world, FRD body,
quaternion [w, x, y, z] body -> NED). RotorPy flies in a z-up world with an
FLU body; F = diag(1, -1, -1) maps both ways (roll kept, pitch and yaw
flipped), and its quaternion [x, y, z, w] is mapped with it.

"+x %" is thrust: rotor i's steady-state thrust target is T_h (1 + x_i),
i.e. its speed target w_h sqrt(1 + x_i). RotorPy is commanded that speed;
lockstep the command u_i its own static drive train (ESC, motor, the packs'
EMF and R0 at the manoeuvre's start, avionics load, zero inflow) maps to it.
Commands are held over RotorPy's step (RP_DT; 10 ms in the hover), sampled
at each interval's midpoint, so the three models see the same input.

Three models fly each manoeuvre from lockstep's hover trim:
  - lockstep's Plant (RK4 at 1 ms, its default physics);
  - RotorPy's Multirotor with the parameters of `rotorpy_params`;
  - the analytic model `analytic` built from the spec alone (its one
    linearisation: lockstep's drive train), in two variants: with lockstep's
    structure (drive train and bus linearised at hover,
    rotor inertia reaction, torque inflow, battery drift, the spec's angular
    damping, the octa's actuator lag as its own lag) and with RotorPy's
    (first-order rotor servo, no reaction, yaw damping from the rotors'
    H-forces). Their difference is the predicted effect of the models'
    structural differences (docs/physics-crosscheck.md lists them).
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
import time

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: pytest's own dependency there
    import tomli as tomllib

import numpy as np

import lockstep

AIRFRAMES = ("iris", "hexa", "octa")
F = np.diag([1.0, -1.0, -1.0])  # NED/FRD <-> NWU/FLU (its own inverse)
RHO_REF = 1.225  # kg/m^3, the density lockstep's thrust_coeff refers to
ALT_M = 20.0  # m above the 488 m origin: ground effect and contact inactive
LS_US = 1000  # lockstep's physics step (RK4), us
# RotorPy: one `step` per 2 ms. Its solve_ivp restarts at every call, so the
# cost is per call (1 ms steps cost 2.5 to 3 times as much for the same
# result); 2 ms is 1/18 of the fastest time constant here (the rotors',
# 37 ms), and the commands are held over the same 2 ms in all three models.
RP_DT = 0.002
# RotorPy's integrator, set explicitly (its default is rtol 1e-3): RK45 at
# rtol 1e-9, atol 1e-11, first_step = the step. One RK45 step per call meets
# it (7 right-hand sides); rtol 1e-7 gives the same figures to 9 digits, so
# its error is far below FLOOR (5e-4 of a peak).
RP_INTEGRATOR = {"method": "RK45", "rtol": 1e-9, "atol": 1e-11}  # and first_step = the step


# ------------------------------------------------------------ the spec


def isa_density(alt_m: float) -> float:
    """ISA troposphere at a geometric altitude (lockstep's env/atmosphere)."""
    r0 = 6_356_766.0
    h = r0 * alt_m / (r0 + alt_m)
    t0, p0, g0, r_air = 288.15, 101_325.0, 9.80665, 8.31432 / 0.0289644
    t = t0 - 0.0065 * h
    return p0 * (t / t0) ** (g0 / (r_air * 0.0065)) / (r_air * t)


class Spec:
    """A built-in airframe's resolved spec and the figures derived from it."""

    def __init__(self, name: str):
        self.name = name
        s = tomllib.loads(lockstep.spec_toml(name, resolved=True))
        b, p, m = s["body"], s["propeller"], s["motor"]
        self.mass = b["mass_kg"]
        self.inertia = np.array(b["inertia_kgm2"], float)  # FRD tensor
        self.lin_drag = np.array(b["linear_drag_ns_per_m"], float)
        self.quad_drag = np.array(b["quadratic_drag_ns2_per_m2"], float)
        self.ang_damp = np.array(b["angular_damping_nms_per_rad"], float)
        self.pos = np.array([r["position_m"] for r in s["rotors"]], float)
        assert all(r["thrust_axis"] == [0.0, 0.0, -1.0] for r in s["rotors"]), "flat rotors"
        self.spin = np.array([r["spin_dir"] for r in s["rotors"]], float)
        self.n = len(self.spin)
        self.kt, self.kq_m = p["thrust_coeff_n_s2"], p["torque_coeff_m"]
        self.radius, self.j0 = p["radius_m"], p["zero_thrust_advance_ratio"]
        self.q1, self.q2 = p["torque_inflow_coeffs"]
        self.ke = 60.0 / (2 * math.pi * m["kv_rpm_per_v"])  # V s/rad = N m/A
        self.r_mot, self.i0 = m["resistance_ohm"], m["no_load_current_a"]
        self.jr, self.visc = m["rotor_inertia_kgm2"], m["viscous_friction_nms_per_rad"]
        self.i_max = m["current_limit_a"]
        self.eta, self.dz = s["esc"]["efficiency"], s["esc"]["deadzone"]
        a = s["actuator"]
        assert a["model"] in ("direct", "first_order")
        self.act_tau = a.get("time_constant_s", 0.0) if a["model"] == "first_order" else 0.0
        self.batts = s["batteries"]
        self.p_av = s["power"]["avionics_power_w"]
        self.g = s["environment"]["gravity_mps2"]
        self.origin_alt = s["environment"]["origin_alt_m"]
        self.i_batt = 13 + self.n * (2 if self.act_tau else 1)  # first (SOC, v1)

    def kt_eff(self, rho):
        """Thrust per (rad/s)^2 at density rho and no inflow, N s^2."""
        return self.kt * rho / RHO_REF

    def hover_speed(self, rho):
        """sqrt(m g / (n kT rho/rho_ref)), rad/s."""
        return math.sqrt(self.mass * self.g / (self.n * self.kt_eff(rho)))

    def kz(self, rho):
        """T = kT w^2 (1 - J/J0), J = (pi/R) v/w  =>  dT/dv = -kz w with
        kz = kT pi/(R J0), N/(rad/s * m/s): RotorPy's k_z."""
        return self.kt_eff(rho) * math.pi / (self.radius * self.j0)

    def source(self, x):
        """The packs' Thevenin equivalent at state x: EMF (V), conductance (S)."""
        es, gs = [], []
        for j, bt in enumerate(self.batts):
            soc, v1 = x[self.i_batt + 2 * j], x[self.i_batt + 2 * j + 1]
            es.append(np.interp(soc, bt["ocv_soc"], bt["ocv_v"]) - v1)
            gs.append(1.0 / bt["r0_ohm"])
        es, gs = np.array(es), np.array(gs)
        return float((es * gs).sum() / gs.sum()), float(gs.sum())

    def static_command(self, w, rho, emf, g):
        """Commands u whose steady state at zero inflow is rotor speeds w:
        torque balance -> current -> motor voltage; the bus
        G (E - V) = sum(V_m I)/eta + P_av/V; the ESC's map. Returns u, V, I."""
        w = np.asarray(w, float)
        q = self.kq_m * self.kt_eff(rho) * w**2
        i = (q + self.ke * self.i0 + self.visc * w) / self.ke
        vm = self.ke * w + self.r_mot * i
        p = (vm * i).sum() / self.eta + self.p_av
        v = 0.5 * (emf + math.sqrt(emf * emf - 4 * p / g))
        return self.dz + vm / v * (1 - self.dz), v, i

    def speed_of_command(self, u, rho, emf, g):
        """The inverse for equal commands u on every rotor (bisection)."""
        lo, hi = 0.0, emf / self.ke
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.static_command(np.full(self.n, mid), rho, emf, g)[0][0] < u:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    def operating_point(self, x):
        """Hover at lockstep's state x: density, speeds, duty, bus."""
        rho = isa_density(self.origin_alt - x[2])
        emf, g = self.source(x)
        w = self.hover_speed(rho)
        u, v, i = self.static_command(np.full(self.n, w), rho, emf, g)
        op = dict(rho=rho, w=w, t=self.mass * self.g / self.n, emf=emf, G=g, u=u[0], v=v,
                  i=i[0], d=(u[0] - self.dz) / (1 - self.dz), kt=self.kt_eff(rho), kz=self.kz(rho))
        op["q"] = self.kq_m * op["t"]
        op["dq"] = 2 * op["q"] / w  # dQ/dw at hover, N m s/rad
        op["i_bus"] = (op["d"] * i.sum() / self.eta) + self.p_av / v
        return op

    def tau_rotor(self, op, k):
        """Small-signal rotor time constant when k rotors step together: the
        packs' R0 (seen through the duty d) adds to the winding resistance,
        R_eff = R + k d^2 R0/eta (the R1||C1 branch is slow: a short for a
        40 ms transient); plus the actuator lag (a sum of lags). s."""
        r_eff = self.r_mot + k * op["d"] ** 2 / (op["G"] * self.eta)
        return self.jr / (self.ke**2 / r_eff + op["dq"] + self.visc)

    def drive_train_matrix(self, op):
        """lockstep's drive train linearised at hover with its bus:
        d(dw)/dt = M (dw - dw_target). Its eigenvalues: -1/tau_rotor(op, 0)
        for patterns summing to zero, about -1/tau_rotor(op, n) for all
        rotors together (exactly, with the avionics load's P/V^2 term)."""
        v, d = op["v"], op["d"]
        s = self.eta * op["G"] - self.eta * self.p_av / v**2 + self.n * d * d / self.r_mot
        own = -(self.ke**2 / self.r_mot + op["dq"] + self.visc)
        bus = self.ke**2 * d * d / (self.r_mot**2 * s)
        return (own * np.eye(self.n) + bus * np.ones((self.n, self.n))) / self.jr

    def emf_drift(self, op, x0, t):
        """The packs' EMF change after t s of hover from state x0 (V): SOC
        falls at the hover current, v1 charges through R1 || C1; each pack's
        share of the current by its R0 (the closed form at constant current)."""
        gs = np.array([1 / b["r0_ohm"] for b in self.batts])
        de = 0.0
        for j, b in enumerate(self.batts):
            soc, v1 = x0[self.i_batt + 2 * j], x0[self.i_batt + 2 * j + 1]
            ij = op["i_bus"] * gs[j] / gs.sum()
            soc_t = soc - ij * t / (3600 * b["capacity_ah"])
            tc = b["r1_ohm"] * b["c1_f"]
            v1_t = ij * b["r1_ohm"] + (v1 - ij * b["r1_ohm"]) * math.exp(-t / tc)
            e0 = np.interp(soc, b["ocv_soc"], b["ocv_v"]) - v1
            de += gs[j] / gs.sum() * (np.interp(soc_t, b["ocv_soc"], b["ocv_v"]) - v1_t - e0)
        return de

    def full_throttle_speed(self, op):
        """Steady rotor speed with every command at 1 (bus sag, current limit)."""
        lo, hi = 0.0, op["emf"] / self.ke
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            try:
                u, _, i = self.static_command(np.full(self.n, mid), op["rho"], op["emf"], op["G"])
                ok = u[0] < 1.0 and i[0] < self.i_max
            except ValueError:  # the pack cannot deliver that power
                ok = False
            lo, hi = (mid, hi) if ok else (lo, mid)
        return lo


# ------------------------------------------------------------ the mapping


def rotorpy_params(sp: Spec, op: dict, k_bus: float = 0) -> dict:
    """lockstep's spec -> RotorPy's `Multirotor` quad_params at the
    operating point `op` (hover at the test altitude); `k_bus` is how many
    rotors step together (RotorPy's one time constant is lockstep's
    small-signal one for that pattern). RotorPy: FLU body, SI units."""
    i_flu = F @ sp.inertia @ F  # kg m^2; FRD -> FLU: Ixy and Ixz change sign
    w_h = op["w"]
    return {
        "mass": sp.mass,  # kg
        "Ixx": i_flu[0, 0], "Iyy": i_flu[1, 1], "Izz": i_flu[2, 2],  # kg m^2
        "Ixy": i_flu[0, 1], "Iyz": i_flu[1, 2], "Ixz": i_flu[0, 2],
        "num_rotors": sp.n,
        "rotor_radius": sp.radius,  # m (RotorPy does not use it in Multirotor)
        # m, FLU; hub z = 0: lockstep's linear drag acts at the CoM and RotorPy's
        # H-force at the hub, so a hub below the CoM would add a moment there.
        "rotor_pos": {f"r{i + 1}": np.array([p[0], -p[1], 0.0]) for i, p in enumerate(sp.pos)},
        # lockstep's spin_dir +1 puts its reaction torque on +z FRD (down);
        # RotorPy's rotor_directions +1 on +z FLU (up).
        "rotor_directions": -sp.spin.astype(int),
        "rI": np.zeros(3),
        # N/(m/s)^2: the same numbers; lockstep's per body axis c_i |v_i| v_i,
        # RotorPy's |v| c_i v_i (equal on an axis, 29 % apart at 45 degrees).
        "c_Dx": sp.quad_drag[0], "c_Dy": sp.quad_drag[1], "c_Dz": sp.quad_drag[2],
        # N/(rad/s)^2: kT at the density of the test altitude (lockstep scales
        # thrust by rho/rho_ref; RotorPy has no atmosphere).
        "k_eta": op["kt"],
        # N m/(rad/s)^2: (Q/T)_0 kT; lockstep's torque also falls with inflow
        # (q1, q2): RotorPy has no counterpart (a structural difference).
        "k_m": sp.kq_m * op["kt"],
        # N/(rad/s * m/s): lockstep's linear drag is per body axis at the CoM
        # and independent of rotor speed; RotorPy's is k_d w_i per rotor at the
        # hub, isotropic in x and y: equal at hover on the x axis (lockstep's y
        # is 8 % lower on every built-in).
        "k_d": sp.lin_drag[0] / (sp.n * w_h),
        # N/(rad/s * m/s): the thrust's inflow loss kT w^2 J/J0 is exactly
        # k_z w v inside lockstep's J range [-J0/2, J0].
        "k_z": op["kz"],
        "k_h": 0.0, "k_flap": 0.0,  # lockstep has no translational lift or flapping
        # s: lockstep's drive train (ESC, BLDC, bus) linearised for k rotors
        # stepping together, plus the actuator lag (octa: 10 ms) as a sum of lags.
        "tau_m": sp.tau_rotor(op, k_bus) + sp.act_tau,
        "rotor_speed_min": 0.0,  # rad/s: lockstep's ESC has no braking
        "rotor_speed_max": sp.full_throttle_speed(op),  # rad/s, never reached here
        "motor_noise_std": 0.0,
    }


def _pack_state_any(cls, state):
    """RotorPy 3.0.0's `_pack_state` allocates 16 + 4 states; this one takes
    the rotor count from the state (needed for the hexa and the octa)."""
    return np.concatenate([state["x"], state["v"], state["q"], state["w"], state["wind"],
                           state["rotor_speeds"]]).astype(float)


@contextlib.contextmanager
def _pinv_for_non_square():
    """RotorPy 3.0.0's constructor inverts the 4 x n allocation matrix with
    np.linalg.inv (square only for 4 rotors). The matrix is used only by the
    higher control abstractions, never by cmd_motor_speeds: a pseudo-inverse
    lets the constructor finish for 6 and 8 rotors."""
    inv = np.linalg.inv
    np.linalg.inv = lambda a: inv(a) if np.shape(a)[-1] == np.shape(a)[-2] else np.linalg.pinv(a)
    try:
        yield
    finally:
        np.linalg.inv = inv


def build_rotorpy(params: dict, state0: dict, g: float, dt: float = RP_DT):
    from rotorpy.vehicles.multirotor import Multirotor

    try:  # the 6/8-rotor workaround, only where RotorPy needs it
        packed = Multirotor._pack_state(state0)
    except ValueError:
        packed = []
    if len(packed) != 16 + len(state0["rotor_speeds"]):
        Multirotor._pack_state = classmethod(_pack_state_any)
    with _pinv_for_non_square():
        m = Multirotor(params, initial_state=state0, control_abstraction="cmd_motor_speeds",
                       aero=True, enable_ground=False, integrator_kwargs=dict(RP_INTEGRATOR, first_step=dt))
    m.g = g  # RotorPy hard-codes 9.81; the spec says 9.80665
    m.weight = np.array([0.0, 0.0, -m.mass * g])
    return m


def to_rotorpy(x, n):
    qw, qx, qy, qz = x[6:10]
    return {"x": F @ x[0:3], "v": F @ x[3:6], "q": np.array([qx, -qy, -qz, qw]),
            "w": F @ x[10:13], "wind": np.zeros(3), "rotor_speeds": np.array(x[13:13 + n], float)}


def euler(q):
    """Roll, pitch, yaw (rad) of a [w, x, y, z] quaternion."""
    w, x, y, z = q
    return np.array([math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y)),
                     math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x)))),
                     math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))])


# ------------------------------------------------------------ lockstep's trim


def fly_to(sp: Spec, alt=ALT_M, climb_s=8.0, hold_s=6.0, ctl_us=10_000):
    """lockstep's Plant flown straight up to `alt` m by a collective PID at
    100 Hz (equal commands: no moments, it stays level) and held. Returns
    the plant and the commands of the hold's last second."""
    p = lockstep.Plant(sp.name, integrator="rk4", max_step_us=LS_US)
    dt, integ, us = ctl_us * 1e-6, 0.0, []
    steps = int(round((climb_s + hold_s) / dt))
    for k in range(steps):
        x = p.state
        op_rho = isa_density(sp.origin_alt - x[2])
        emf, g = sp.source(x)
        s = min(k * dt / climb_s, 1.0)
        e = alt * (3 * s * s - 2 * s**3) + x[2]
        integ += e * dt
        a = 12.0 * e + 6.0 * (alt * (6 * s - 6 * s * s) / climb_s + x[5]) + 8.0 * integ  # (s+2)^3
        w = sp.hover_speed(op_rho) * math.sqrt(max(0.2, 1.0 + a / sp.g))
        u = float(np.clip(sp.static_command(np.full(sp.n, w), op_rho, emf, g)[0][0], 0, 1))
        p.set_motors(np.full(sp.n, u))
        p.step(ctl_us)
        if k >= steps - int(round(1.0 / dt)):
            us.append(u)
    return p, np.array(us)


@functools.lru_cache(maxsize=None)
def trim(name: str):
    """The hover trim: the hold, then 1 s open loop at the static map's
    hover command. Returns (state x0, dict of figures)."""
    sp = Spec(name)
    p, us = fly_to(sp)
    op = sp.operating_point(p.state)
    x_hold = p.state.copy()
    p.set_motors(np.full(sp.n, op["u"]))
    p.step(1_000_000)
    return p.state.copy(), dict(u_pid=us, op_hold=op, x_hold=x_hold,
                                sf=np.array(p.truth["specific_force_frd_mps2"]),
                                bus_v=p.battery()["voltage_v"], bus_i=p.battery()["current_a"])


def trimmed_plant(sp: Spec):
    """A fresh plant at the trim state (re-flown: lockstep has no state
    setter; the flight is deterministic, checked bit for bit)."""
    x0, t = trim(sp.name)
    p, _ = fly_to(sp)
    p.set_motors(np.full(sp.n, t["op_hold"]["u"]))
    p.step(1_000_000)
    assert np.array_equal(p.state, x0), "lockstep's trim is not reproducible"
    return p


# ------------------------------------------------------------ manoeuvres


class Manoeuvre:
    def __init__(self, name, dur, fun, events, k_bus, axes, wind=(0.0, 0.0, 0.0), dt=RP_DT):
        self.name, self.dur, self.fun, self.events, self.k_bus = name, dur, fun, events, k_bus
        self.dt = dt  # RotorPy's step, the hold of the commands and the compared samples, s
        self.axes = axes  # the quantities and axes it excites: {quantity: [axis, ...]}
        self.wind = np.array(wind, float)  # NED, m/s, from t = 0


def manoeuvres(sp: Spec) -> dict:
    """Relative thrust steps x_i(t) per rotor. k_bus: rotors stepping
    together at the first step (RotorPy's time constant follows it)."""
    x, y, n = sp.pos[:, 0], sp.pos[:, 1], sp.n
    right, left = (y > 1e-9) * 1.0, (y < -1e-9) * 1.0
    ccw = sp.spin  # +1 on CCW rotors (spin_dir +1), -1 on CW: a +yaw torque pattern
    zero = np.zeros(n)

    def chirp(t, dur=3.0, f0=1.0, f1=6.0, a=0.03):
        ph = 2 * math.pi * (f0 * t + 0.5 * (f1 - f0) / dur * t * t)
        win = min(1.0, t / 0.25, max(0.0, (dur - t) / 0.25))
        return win * a * (np.sign(np.round(-y, 9)) * math.sin(ph)
                          + np.sign(np.round(x, 9)) * math.sin(ph + 2.1) + ccw * math.sin(ph + 4.2))

    ms = [
        # Nothing moves in hover but the packs' slow drift: RotorPy's step is
        # 10 ms there (its cost is per step: 5 s at 2 ms would be a third of
        # the whole module's time).
        Manoeuvre("hover", 5.0, lambda t: zero, [], 0, {"rotor speed": [0], "velocity": [2], "position": [2]},
                  dt=0.01),
        Manoeuvre("collective", 2.0, lambda t: np.full(n, 0.10 if t < 1.0 else 0.0), [0.0, 1.0], n,
                  {"rotor speed": [0], "accel": [2], "velocity": [2], "position": [2]}),
        Manoeuvre("roll doublet", 1.5, lambda t: 0.05 * (right if t < 0.3 else left if t < 0.6 else zero),
                  [0.0, 0.3, 0.6], n / 2, {"rotor speed": [0], "rates": [0], "alpha": [0], "attitude": [0],
                                            "velocity": [1], "position": [1]}),
        Manoeuvre("yaw steps", 3.0, lambda t: 0.05 * ccw * (1 if t < 1.0 else -1 if 1.5 <= t < 2.5 else 0),
                  [0.0, 1.0, 1.5, 2.5], 0, {"rotor speed": [0], "rates": [2], "alpha": [2], "attitude": [2]}),
        Manoeuvre("chirp", 3.0, chirp, [], 0, {"rotor speed": list(range(n)), "rates": [0, 1, 2], "alpha": [0, 1, 2],
                                               "attitude": [0, 1, 2], "velocity": [0, 1], "position": [0, 1]}),
        # The drag cross-check: a 5 m/s wind from the south at hover trim.
        Manoeuvre("wind step", 1.0, lambda t: zero, [0.0], 0, {"accel": [0], "velocity": [0], "position": [0]},
                  wind=(5.0, 0.0, 0.0)),
    ]
    return {m.name: m for m in ms}


def pitch_step(sp: Spec) -> Manoeuvre:
    front = (sp.pos[:, 0] > 1e-9) * 1.0
    return Manoeuvre("pitch step", 0.35, lambda t: 0.05 * front * (t < 0.3), [0.0, 0.3], sp.n / 2, {})


def inputs(m: Manoeuvre, n: int):
    """The manoeuvre's relative thrust steps held over intervals of m.dt,
    sampled at each interval's midpoint: array (intervals, n)."""
    k = int(round(m.dur / m.dt))
    return np.array([m.fun((j + 0.5) * m.dt) for j in range(k)]).reshape(k, n)


# ------------------------------------------------------------ flights


def fly_lockstep(sp: Spec, m: Manoeuvre):
    """lockstep from the trim: records every 1 ms (state rows)."""
    x0, _ = trim(sp.name)
    op = sp.operating_point(x0)
    p = trimmed_plant(sp)
    p.set_wind(m.wind)
    xs = inputs(m, sp.n)
    rows, per = [p.state.copy()], int(round(m.dt * 1e6 / LS_US))
    for xi in xs:
        u = sp.static_command(op["w"] * np.sqrt(1.0 + xi), op["rho"], op["emf"], op["G"])[0]
        p.set_motors(np.clip(u, 0.0, 1.0))
        for _ in range(per):
            p.step(LS_US)
            rows.append(p.state.copy())
    return record_lockstep(sp, np.array(rows), m.dt)


def record_lockstep(sp, s, dt):
    """State rows every 1 ms -> the compared quantities every dt."""
    h = LS_US * 1e-6
    rates = s[:, 10:13]
    alpha = np.gradient(rates, h, axis=0)  # central differences (one-sided at the ends)
    acc = np.gradient(s[:, 3:6], h, axis=0)
    sl = slice(0, None, int(round(dt / h)))
    return dict(t=np.arange(len(s))[sl] * h, w=s[sl, 13:13 + sp.n], rates=rates[sl], alpha=alpha[sl],
                attitude=np.array([euler(q) for q in s[sl, 6:10]]), velocity=s[sl, 3:6],
                position=s[sl, 0:3] - s[0, 0:3], accel=acc[sl], x_all=s)


def fly_rotorpy(sp: Spec, m: Manoeuvre):
    """RotorPy from the same trim state, one `step` per m.dt; the angular
    and linear accelerations are its exact `statedot`."""
    x0, _ = trim(sp.name)
    op = sp.operating_point(x0)
    st = to_rotorpy(x0, sp.n)
    st["wind"] = F @ m.wind
    mr = build_rotorpy(rotorpy_params(sp, op, m.k_bus), st, sp.g, m.dt)
    out = {k: [] for k in ("w", "rates", "alpha", "attitude", "velocity", "position", "accel")}
    xs = inputs(m, sp.n)
    for j in range(len(xs) + 1):
        ctl = {"cmd_motor_speeds": op["w"] * np.sqrt(1.0 + xs[min(j, len(xs) - 1)])}
        sd = mr.statedot(st, ctl, m.dt)
        qx, qy, qz, qw = st["q"]
        out["w"].append(np.array(st["rotor_speeds"], float))
        out["rates"].append(F @ st["w"])
        out["alpha"].append(F @ sd["wdot"])
        out["accel"].append(F @ sd["vdot"])
        out["attitude"].append(euler([qw, qx, -qy, -qz]))
        out["velocity"].append(F @ st["v"])
        out["position"].append(F @ st["x"] - x0[0:3])
        if j < len(xs):
            st = mr.step(st, ctl, m.dt)
    o = {k: np.array(v) for k, v in out.items()}
    o["t"] = np.arange(len(xs) + 1) * m.dt
    return o


# ------------------------------------------------------------ the analytic model


def cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def rotation(eu):
    """Body -> NED rotation of roll, pitch, yaw (ZYX Euler angles)."""
    (cr, sr), (cp, s_p), (cy, sy) = [(math.cos(a), math.sin(a)) for a in eu]
    return np.array([[cp * cy, sr * s_p * cy - cr * sy, cr * s_p * cy + sr * sy],
                     [cp * sy, sr * s_p * sy + cr * cy, cr * s_p * sy - sr * cy],
                     [-s_p, sr * cp, cr * cp]])


def analytic(sp: Spec, m: Manoeuvre, structure: str):
    """The spec's equations about the hover trim, with `structure`
    "lockstep" or "rotorpy" (the differences are the models' structural
    differences, docs/physics-crosscheck.md):

    rotors   lockstep: its drive train and bus linearised at hover,
             d(dw)/dt = M (dw - a) - (torque beyond (Q/T)0 kT0 w^2: inflow
             q1 J + q2 J^2, density)/J_r, a the steady speed target (through
             the actuator lag if the spec has one), shifted by the packs'
             EMF drift (`emf_drift`); RotorPy: d(dw)/dt = (a - dw)/tau_m.
             This is the one linearisation (its remainder: `taylor_term`).
    thrust   kT w^2 - kz w v_axial (kT, kz at the density of the altitude
             for lockstep, of the trim for RotorPy); torque (Q/T)0 kT w^2,
             times 1 + q1 J + q2 J^2 for lockstep.
    body     I dot(omega) = sum r x T + yaw torques - omega x I omega, and
             lockstep: the rotors' reaction sum s J_r dot(w) and gyroscopic
             omega x h, the spec's angular damping; RotorPy: its H-forces
             -kd w_i (v + omega x r_i) at the hubs (its yaw damping).
    drag     lockstep: per body axis (c1 + c2 |v_i|) v_i; RotorPy: c2 |v| v
             and the H-forces.
    The linear part (the Jacobian at hover) is integrated exactly over each
    step (matrix exponential), the remainder held over the step at its
    Adams-Bashforth extrapolation to the midpoint."""
    x0, _ = trim(sp.name)
    op = sp.operating_point(x0)
    n, ls = sp.n, structure == "lockstep"
    lag = ls and sp.act_tau > 0
    tau_m = sp.tau_rotor(op, m.k_bus) + sp.act_tau
    w_h, I, I_inv = op["w"], sp.inertia, np.linalg.inv(sp.inertia)
    r = sp.pos * [1.0, 1.0, 0.0]  # thrust along -z: the hub height makes no moment
    M = sp.drive_train_matrix(op) if ls else -np.eye(n) / tau_m
    kd = rotorpy_params(sp, op)["k_d"]
    j_per_v = math.pi / sp.radius  # J = j_per_v v_axial / w
    na = n if lag else 0
    iw = n + na  # body rates; then Euler angles, NED velocity, position
    N = iw + 12

    def f(s, tgt):
        dw, om, eu, v, p = s[:n], s[iw:iw + 3], s[iw + 3:iw + 6], s[iw + 6:iw + 9], s[iw + 9:]
        a = s[n:iw] if lag else tgt
        w = w_h + dw
        R = rotation(eu)
        vb = R.T @ (v - m.wind)  # airspeed, body axes
        v_ax = -vb[2] - r[:, 1] * om[0] + r[:, 0] * om[1]  # axial inflow at each hub
        kt = sp.kt_eff(isa_density(sp.origin_alt - x0[2] - p[2])) if ls else op["kt"]
        thrust = kt * w * w - kt * j_per_v / sp.j0 * w * v_ax
        q = sp.kq_m * kt * w * w
        ds = np.zeros(N)
        if ls:
            j = j_per_v * v_ax / w
            extra = q * (sp.q1 * j + sp.q2 * j * j) + sp.kq_m * (kt - op["kt"]) * w * w
            dwdot = M @ (dw - a) - extra / sp.jr
            q = q + q * (sp.q1 * j + sp.q2 * j * j)
            h = np.array([0.0, 0.0, -(sp.spin * sp.jr * w).sum()])
            yaw = (sp.spin * (q + sp.jr * dwdot)).sum()
            f_b = np.array([0.0, 0.0, -thrust.sum()]) - (sp.lin_drag + sp.quad_drag * np.abs(vb)) * vb
            tq = np.array([-(r[:, 1] * thrust).sum(), (r[:, 0] * thrust).sum(), yaw])
            tq = tq - sp.ang_damp * om - cross(om, I @ om + h)
            if lag:
                ds[n:iw] = (tgt - a) / sp.act_tau
        else:
            dwdot = (a - dw) / tau_m
            # H-forces at the hubs, body x y: -kd w_i (v + omega x r_i)
            hv = -kd * w[:, None] * (vb[None, :2] + om[2] * np.column_stack([-r[:, 1], r[:, 0]]))
            f_b = np.array([hv[:, 0].sum(), hv[:, 1].sum(), -thrust.sum()])
            f_b = f_b - sp.quad_drag * np.linalg.norm(vb) * vb
            yaw = (sp.spin * q).sum() + (r[:, 0] * hv[:, 1] - r[:, 1] * hv[:, 0]).sum()
            tq = np.array([-(r[:, 1] * thrust).sum(), (r[:, 0] * thrust).sum(), yaw]) - cross(om, I @ om)
        cr, sr, tt, ct = math.cos(eu[0]), math.sin(eu[0]), math.tan(eu[1]), math.cos(eu[1])
        ds[:n] = dwdot
        ds[iw:iw + 3] = I_inv @ tq
        ds[iw + 3:iw + 6] = [om[0] + (om[1] * sr + om[2] * cr) * tt, om[1] * cr - om[2] * sr,
                             (om[1] * sr + om[2] * cr) / ct]
        ds[iw + 6:iw + 9] = R @ f_b / sp.mass + [0.0, 0.0, sp.g]
        ds[iw + 9:] = v
        return ds

    eps = 1e-5
    zs, zt = np.zeros(N), np.zeros(n)
    A = np.column_stack([(f(e * eps, zt) - f(-e * eps, zt)) / (2 * eps) for e in np.eye(N)])
    B = np.column_stack([(f(zs, e * eps) - f(zs, -e * eps)) / (2 * eps) for e in np.eye(n)])
    from scipy.linalg import expm

    big = np.zeros((2 * N + n, 2 * N + n))
    big[:N, :N], big[:N, N:N + n], big[:N, N + n:] = A, B, np.eye(N)
    E = expm(big * m.dt)
    Ad, Bt, Bn = E[:N, :N], E[:N, N:N + n], E[:N, N + n:]
    s = np.zeros(N)
    s[:n] = x0[13:13 + n] - w_h
    if lag:
        s[n:iw] = s[:n]
    s[iw:iw + 3], s[iw + 3:iw + 6], s[iw + 6:iw + 9] = x0[10:13], euler(x0[6:10]), x0[3:6]
    xs = inputs(m, n)
    rows, ds_rows, prev, tgt_before = [], [], None, np.zeros(n)
    for k in range(len(xs) + 1):
        tgt = w_h * (np.sqrt(1.0 + xs[min(k, len(xs) - 1)]) - 1.0)
        if ls:  # the packs' EMF drift at fixed commands moves the steady speeds
            tgt = tgt + SPEED_PER_EMF[sp.name] * sp.emf_drift(op, x0, (k + 0.5) * m.dt)
        d = f(s, tgt)
        rows.append(s.copy())
        # lockstep's rotor reaction makes its angular acceleration jump where
        # the command does; its central differences straddle each sample:
        # the mean of the two sides is what they see.
        ds_rows.append(0.5 * (d + f(s, tgt_before)) if ls else d)
        tgt_before = tgt
        nl = d - A @ s - B @ tgt
        s = Ad @ s + Bt @ tgt + Bn @ (nl if prev is None else 1.5 * nl - 0.5 * prev)
        prev = nl
    r_, d_ = np.array(rows), np.array(ds_rows)
    return dict(t=np.arange(len(r_)) * m.dt, w=w_h + r_[:, :n], rates=r_[:, iw:iw + 3],
                alpha=d_[:, iw:iw + 3], attitude=r_[:, iw + 3:iw + 6], velocity=r_[:, iw + 6:iw + 9],
                position=r_[:, iw + 9:], accel=d_[:, iw + 6:iw + 9], tau_m=tau_m)


class _SpeedPerEmf(dict):
    """d(hover speed)/d(EMF) at fixed commands, rad/s per V (static map)."""

    def __missing__(self, name):
        sp = Spec(name)
        op = sp.operating_point(trim(name)[0])
        e = 0.01
        f = [sp.speed_of_command(op["u"], op["rho"], op["emf"] + s, op["G"]) for s in (e, -e)]
        self[name] = (f[0] - f[1]) / (2 * e)
        return self[name]


SPEED_PER_EMF = _SpeedPerEmf()


@functools.lru_cache(maxsize=None)
def flights(name: str, manoeuvre: str):
    """lockstep, RotorPy and the two analytic variants for one manoeuvre."""
    sp = Spec(name)
    m = manoeuvres(sp)[manoeuvre]
    t0 = time.perf_counter()
    rp = fly_rotorpy(sp, m)
    rp_wall = time.perf_counter() - t0
    return dict(ls=fly_lockstep(sp, m), rp=rp, an_ls=analytic(sp, m, "lockstep"),
                an_rp=analytic(sp, m, "rotorpy"), m=m, rp_wall=rp_wall)


