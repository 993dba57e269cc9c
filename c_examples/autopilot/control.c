/* Cascaded multirotor control:
 * position (P) -> velocity (PID, anti-windup) -> acceleration -> thrust vector
 * with tilt limit -> attitude (quaternion error, P) -> body rates (PID on
 * angular acceleration, scaled by the inertia, plus gyroscopic feed-forward)
 * -> torque and collective thrust for the mixer. */
#include <math.h>
#include <string.h>

#include "ap_internal.h"
#include "ap_math.h"

void ap_control_reset(ap_t *ap) {
  memset(ap->vel_int, 0, sizeof(ap->vel_int));
  memset(ap->rate_int, 0, sizeof(ap->rate_int));
  memset(ap->vel_d, 0, sizeof(ap->vel_d));
  memcpy(ap->vel_prev, ap->vel, sizeof(ap->vel_prev));
  memcpy(ap->rates_prev, ap->rates, sizeof(ap->rates_prev));
  ap->ctrl_init = 1;
}

/* Refreshes the cached cos/sin of the yaw target and tan of the tilt limit
 * when they changed. */
static void refresh_trig(ap_t *ap) {
  if (!ap->trig.valid || ap->trig.yaw != ap->tgt.yaw) {
    ap->trig.yaw = ap->tgt.yaw;
    ap->trig.cos_yaw = cosf(ap->tgt.yaw);
    ap->trig.sin_yaw = sinf(ap->tgt.yaw);
  }
  if (!ap->trig.valid || ap->trig.tilt_deg != ap->p.tilt_max_deg) {
    ap->trig.tilt_deg = ap->p.tilt_max_deg;
    ap->trig.tan_tilt = tanf(ap->p.tilt_max_deg * (float)AP_PI / 180.0f);
  }
  ap->trig.valid = 1;
}

/* Position and velocity loops: writes the NED acceleration setpoint and the
 * resulting thrust vector (N, NED). */
static void position_velocity(ap_t *ap, float dt, float thrust_vec[3]) {
  const ap_params *p = &ap->p;
  const ap_target *t = &ap->tgt;
  float g = ap->cfg.gravity_mps2, mass = ap->cfg.mass_kg;
  float vsp[3];
  if (t->vxy_override) {
    vsp[0] = t->vxy[0];
    vsp[1] = t->vxy[1];
  } else {
    vsp[0] = p->xy_p * (t->pos[0] - ap->pos[0]);
    vsp[1] = p->xy_p * (t->pos[1] - ap->pos[1]);
  }
  float vxy = sqrtf(vsp[0] * vsp[0] + vsp[1] * vsp[1]);
  float vmax = fminf(p->xy_vel_max, t->xy_speed_max);
  if (vxy > vmax) {
    vsp[0] *= vmax / vxy;
    vsp[1] *= vmax / vxy;
  }
  vsp[2] = t->vz_override ? t->vz : p->z_p * (t->pos[2] - ap->pos[2]);
  vsp[2] = ap_clampf(vsp[2], -fminf(p->z_vel_max_up, t->z_up_max), fminf(p->z_vel_max_dn, t->z_dn_max));

  float kp[3] = {p->xy_vel_p, p->xy_vel_p, p->z_vel_p};
  float ki[3] = {p->xy_vel_i, p->xy_vel_i, p->z_vel_i};
  float kd[3] = {p->xy_vel_d, p->xy_vel_d, p->z_vel_d};
  float acc[3], err[3];
  /* The D term acts on the velocity's derivative through a first-order
   * low-pass (MPC_VELD_LP): the raw difference of estimates amplifies their
   * noise by 1/dt. */
  float alpha = dt > 0.0f ? dt / (dt + 1.0f / (2.0f * (float)AP_PI * p->veld_lp_hz)) : 0.0f;
  for (int i = 0; i < 3; i++) {
    err[i] = vsp[i] - ap->vel[i];
    float dvel = dt > 0.0f ? (ap->vel[i] - ap->vel_prev[i]) / dt : 0.0f;
    ap->vel_d[i] += alpha * (dvel - ap->vel_d[i]);
    acc[i] = kp[i] * err[i] + ap->vel_int[i] - kd[i] * ap->vel_d[i];
    ap->vel_prev[i] = ap->vel[i];
  }
  /* Touching down: hold the attitude level rather than chase horizontal
   * errors with the little thrust left (a horizontal integrator wound up
   * against the legs' friction tips the vehicle over when it lifts). */
  int descending = ap->mode == LOCKSTEP_MODE_LAND || (ap->mode == LOCKSTEP_MODE_RTL && ap->rtl_phase == AP_RTL_DESCEND) ||
                   ((ap->mode == LOCKSTEP_MODE_HOLD || ap->mode == LOCKSTEP_MODE_OFFBOARD) && ap->took_off);
  if (descending && (ap->land_candidate || ap->landed_flag)) {
    acc[0] = acc[1] = 0.0f;
    ap->vel_int[0] = ap->vel_int[1] = 0.0f;
  }
  /* Horizontal acceleration limit, then thrust vector with minimum collective
   * and tilt limit. */
  float axy = sqrtf(acc[0] * acc[0] + acc[1] * acc[1]);
  int sat_xy = 0, sat_z = 0;
  if (axy > p->acc_hor_max) {
    acc[0] *= p->acc_hor_max / axy;
    acc[1] *= p->acc_hor_max / axy;
    sat_xy = 1;
  }
  float f[3] = {mass * acc[0], mass * acc[1], mass * (acc[2] - g)};
  float fz_max = -p->thr_min_frac * mass * g; /* most downward (least upward) allowed */
  if (f[2] > fz_max) {
    f[2] = fz_max;
    sat_z = 1;
  }
  float total_max = 0.0f;
  for (uint32_t i = 0; i < ap->mixer.n; i++) total_max += ap->mixer.tmax[i] * ap->mixer.B[3][i];
  if (-f[2] > 0.95f * total_max) {
    f[2] = -0.95f * total_max;
    sat_z = 1;
  }
  float fxy = sqrtf(f[0] * f[0] + f[1] * f[1]);
  float fxy_max = -f[2] * ap->trig.tan_tilt;
  if (fxy > fxy_max && fxy > 0.0f) {
    f[0] *= fxy_max / fxy;
    f[1] *= fxy_max / fxy;
    sat_xy = 1;
  }
  /* Anti-windup: integrate an axis only when its output is not saturated in
   * the direction of the error; clamp the integrators. */
  for (int i = 0; i < 3; i++) {
    int sat = i < 2 ? sat_xy : sat_z;
    float lim = i < 2 ? p->acc_hor_max : g;
    float tentative = ap->vel_int[i] + ki[i] * err[i] * dt;
    /* The error pushes further into saturation when it has the sign of the
     * demanded acceleration (z: positive = wants less thrust). */
    int pushes_out = err[i] * acc[i] > 0.0f;
    if (!(sat && pushes_out)) ap->vel_int[i] = ap_clampf(tentative, -lim, lim);
  }
  for (int i = 0; i < 3; i++) {
    thrust_vec[i] = f[i];
    int tracks_velocity = i == 2 ? t->vz_override : t->vxy_override;
    ap->sp.position_ned_m[i] = tracks_velocity ? ap->pos[i] : t->pos[i];
    ap->sp.velocity_ned_mps[i] = vsp[i];
    ap->sp.accel_ned_mps2[i] = acc[i];
  }
}

/* Attitude setpoint from the thrust vector and yaw (cosine and sine given). */
static void attitude_setpoint(const float f[3], float cy, float sy, float q_sp[4]) {
  float n = ap_norm3(f);
  float bz[3] = {0.0f, 0.0f, 1.0f};
  if (n > 1e-6f)
    for (int i = 0; i < 3; i++) bz[i] = -f[i] / n;
  float xc[3] = {cy, sy, 0.0f};
  float by[3], bx[3];
  ap_cross3(bz, xc, by);
  float nb = ap_norm3(by);
  if (nb < 1e-6f) { /* thrust horizontal along the heading: pick any */
    by[0] = -sy;
    by[1] = cy;
    by[2] = 0.0f;
  } else {
    for (int i = 0; i < 3; i++) by[i] /= nb;
  }
  ap_cross3(by, bz, bx);
  ap_quat_from_axes(bx, by, bz, q_sp);
}

/* A yaw rate error beyond AP_YAW_LOST_RATE held for AP_YAW_LOST_US, on a
 * vehicle with rotors to spare, is a rotor out: yaw is given up. */
static void detect_yaw_loss(ap_t *ap, float yaw_rate_err, uint64_t now_us) {
  if (ap->yaw_lost || ap->mixer.n < AP_YAW_LOST_MIN_ROTORS) return;
  if (fabsf(yaw_rate_err) <= AP_YAW_LOST_RATE) {
    ap->yaw_err_since_us = 0;
    return;
  }
  if (ap->yaw_err_since_us == 0) {
    ap->yaw_err_since_us = now_us > 0 ? now_us : 1;
  } else if (now_us - ap->yaw_err_since_us >= AP_YAW_LOST_US) {
    ap->yaw_lost = 1;
  }
}

void ap_control_run(ap_t *ap, float dt, uint64_t now_us, float torque[3], float *thrust) {
  const ap_params *p = &ap->p;
  if (!ap->ctrl_init) ap_control_reset(ap);
  /* Yaw given up: the heading is wherever the vehicle points, so the
   * attitude error holds the tilt alone. */
  if (ap->yaw_lost) ap->tgt.yaw = ap_quat_yaw(ap->q);
  refresh_trig(ap);
  float f[3] = {0.0f, 0.0f, 0.0f};
  float q_sp[4] = {ap->q[0], ap->q[1], ap->q[2], ap->q[3]};
  float rmax[3] = {p->rate_max_rp_deg, p->rate_max_rp_deg, p->rate_max_y_deg};
  float rsp[3];
  if (ap->tgt.rates_override) {
    /* OFFBOARD rates: the rate loop flies the commanded rates; the thrust
     * vector is the commanded collective along the current body -z. */
    for (int i = 0; i < 3; i++) {
      float lim = rmax[i] * (float)AP_PI / 180.0f;
      rsp[i] = ap_clampf(ap->tgt.rates[i], -lim, lim);
    }
    float total_max = 0.0f;
    for (uint32_t i = 0; i < ap->mixer.n; i++) total_max += ap->mixer.tmax[i] * ap->mixer.B[3][i];
    float bz_body[3] = {0.0f, 0.0f, 1.0f}, bz_ned[3];
    ap_quat_rotate(ap->q, bz_body, bz_ned);
    for (int i = 0; i < 3; i++) {
      f[i] = -ap->tgt.thrust_frac * total_max * bz_ned[i];
      ap->sp.position_ned_m[i] = ap->pos[i];
      ap->sp.velocity_ned_mps[i] = ap->vel[i];
      ap->sp.accel_ned_mps2[i] = 0.0f;
    }
  } else {
    position_velocity(ap, dt, f);
    attitude_setpoint(f, ap->trig.cos_yaw, ap->trig.sin_yaw, q_sp);
    /* Attitude: q_err = q^-1 (x) q_sp, rate setpoint 2*sign(w)*K*vec(q_err). */
    float qc[4] = {ap->q[0], -ap->q[1], -ap->q[2], -ap->q[3]}, qe[4];
    ap_quat_mul(qc, q_sp, qe);
    float sgn = qe[0] >= 0.0f ? 1.0f : -1.0f;
    for (int i = 0; i < 3; i++) {
      float lim = rmax[i] * (float)AP_PI / 180.0f;
      rsp[i] = ap_clampf(2.0f * sgn * p->att_p[i] * qe[i + 1], -lim, lim);
    }
  }

  /* Rates: angular acceleration command, times inertia, plus w x Jw, on the
   * filtered gyro (the estimate's rates only while no IMU sample is current,
   * measured in the IMU's own periods; the autopilot's period stands in
   * before the IMU's is known). */
  const float *J = ap->cfg.inertia_diag_kgm2;
  int use_gyro = ap_gyro_current(&ap->gyro, now_us, ap->cfg.autopilot_period_us);
  float w[3], alpha[3];
  for (int i = 0; i < 3; i++) {
    w[i] = use_gyro ? ap->gyro.rate[i] : ap->rates[i];
    float e = rsp[i] - w[i];
    float dw = use_gyro ? ap->gyro.accel[i] : (dt > 0.0f ? (ap->rates[i] - ap->rates_prev[i]) / dt : 0.0f);
    alpha[i] = p->rate_p[i] * e + ap->rate_int[i] - p->rate_d[i] * dw;
    ap->rate_int[i] = ap_clampf(ap->rate_int[i] + p->rate_i[i] * e * dt, -p->rate_int_lim, p->rate_int_lim);
    ap->rates_prev[i] = ap->rates[i];
  }
  float jw[3] = {J[0] * w[0], J[1] * w[1], J[2] * w[2]}, gyro[3];
  ap_cross3(w, jw, gyro);
  for (int i = 0; i < 3; i++) torque[i] = J[i] * alpha[i] + gyro[i];
  detect_yaw_loss(ap, rsp[2] - w[2], now_us);
  if (ap->yaw_lost) {
    /* No yaw torque: every rotor's margin goes to roll, pitch and thrust. */
    torque[2] = 0.0f;
    rsp[2] = w[2];
    ap->rate_int[2] = 0.0f;
  }

  /* Collective: the thrust vector projected on the current body -z axis
   * keeps the vertical force right while the attitude converges. */
  float bz_body[3] = {0.0f, 0.0f, 1.0f}, bz_ned[3];
  ap_quat_rotate(ap->q, bz_body, bz_ned);
  float proj = -ap_dot3(f, bz_ned);
  *thrust = ap->tgt.rates_override ? proj : fmaxf(proj, p->thr_min_frac * ap->cfg.mass_kg * ap->cfg.gravity_mps2);

  ap->sp.yaw_rad = ap->tgt.yaw;
  memcpy(ap->sp.attitude_q, q_sp, sizeof(q_sp));
  memcpy(ap->sp.rates_frd_radps, rsp, sizeof(rsp));
  memcpy(ap->sp.torque_frd_nm, torque, 3 * sizeof(float));
  ap->sp.thrust_n = *thrust;
}
