/* Control allocation built from the rotor geometry of the config.
 *
 * B (4 x n) maps rotor thrusts (N) to body roll/pitch/yaw torque (N*m) and
 * collective thrust along -z body (N): column i is
 *   [ r_i x a_i - spin_i * k_i * a_i ; -a_i.z ]
 * M = B^T (B B^T)^-1 is its pseudo-inverse (exact for a quad, least-norm for
 * hexa/octa). Saturation: roll/pitch first (scaled down only when no shift of
 * the collective fits), then the collective is shifted as little as possible,
 * then as much yaw as fits. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ap_internal.h"
#include "ap_math.h"

/* Inverts a 4x4 matrix in place with Gauss-Jordan and partial pivoting;
 * returns 0 when singular relative to its scale. */
static int invert4(double a[4][4]) {
  double inv[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  double scale = 0.0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) scale = fmax(scale, fabs(a[i][j]));
  if (scale <= 0.0) return 0;
  for (int c = 0; c < 4; c++) {
    int piv = c;
    for (int r = c + 1; r < 4; r++)
      if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
    if (fabs(a[piv][c]) < 1e-9 * scale) return 0;
    for (int j = 0; j < 4; j++) {
      double t = a[c][j];
      a[c][j] = a[piv][j];
      a[piv][j] = t;
      t = inv[c][j];
      inv[c][j] = inv[piv][j];
      inv[piv][j] = t;
    }
    double d = a[c][c];
    for (int j = 0; j < 4; j++) {
      a[c][j] /= d;
      inv[c][j] /= d;
    }
    for (int r = 0; r < 4; r++) {
      if (r == c) continue;
      double k = a[r][c];
      for (int j = 0; j < 4; j++) {
        a[r][j] -= k * a[c][j];
        inv[r][j] -= k * inv[c][j];
      }
    }
  }
  memcpy(a, inv, sizeof(inv));
  return 1;
}

int ap_mixer_build(ap_mixer *m, const lockstep_autopilot_config *cfg, char *err, size_t err_len) {
  memset(m, 0, sizeof(*m));
  m->n = cfg->rotor_count;
  m->f = cfg->thrust_model_factor;
  for (uint32_t i = 0; i < m->n; i++) {
    const lockstep_rotor_geometry *r = &cfg->rotors[i];
    float axis[3] = {r->thrust_axis[0], r->thrust_axis[1], r->thrust_axis[2]};
    float len = ap_norm3(axis);
    if (!(len > 0.5f && len < 1.5f)) {
      snprintf(err, err_len, "rotor %u: thrust_axis (%g, %g, %g) is not a unit vector", i, (double)axis[0],
               (double)axis[1], (double)axis[2]);
      return 0;
    }
    for (int k = 0; k < 3; k++) axis[k] /= len;
    if (r->spin_dir != 1 && r->spin_dir != -1) {
      snprintf(err, err_len, "rotor %u: spin_dir is %d, must be +1 or -1", i, (int)r->spin_dir);
      return 0;
    }
    if (!(r->max_thrust_n > 0.0f) || !(r->torque_coeff_m >= 0.0f) || !ap_finite_n(r->position_m, 3)) {
      snprintf(err, err_len, "rotor %u: max_thrust_n must be > 0, torque_coeff_m >= 0, position finite", i);
      return 0;
    }
    float moment[3];
    ap_cross3(r->position_m, axis, moment);
    for (int k = 0; k < 3; k++) m->B[k][i] = moment[k] - (float)r->spin_dir * r->torque_coeff_m * axis[k];
    m->B[3][i] = -axis[2];
    m->tmax[i] = r->max_thrust_n;
  }
  double bbt[4][4];
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      double s = 0.0;
      for (uint32_t i = 0; i < m->n; i++) s += (double)m->B[a][i] * (double)m->B[b][i];
      bbt[a][b] = s;
    }
  if (!invert4(bbt)) {
    snprintf(err, err_len,
             "the %u-rotor geometry cannot produce independent roll, pitch, yaw torque and thrust "
             "(B*B^T is singular)",
             m->n);
    return 0;
  }
  for (uint32_t i = 0; i < m->n; i++)
    for (int c = 0; c < 4; c++) {
      double s = 0.0;
      for (int a = 0; a < 4; a++) s += (double)m->B[a][i] * bbt[a][c];
      m->M[i][c] = (float)s;
    }
  return 1;
}

/* Feasible interval of the collective shift s for u + s*c within [lo, hi],
 * with s at most `cap`. */
static int shift_range(const ap_mixer *m, const float u[], const float c[], const float lo[], const float hi[],
                       float cap, float *smin, float *smax) {
  float a = -INFINITY, b = cap;
  for (uint32_t i = 0; i < m->n; i++) {
    if (c[i] > 1e-6f) {
      a = fmaxf(a, (lo[i] - u[i]) / c[i]);
      b = fminf(b, (hi[i] - u[i]) / c[i]);
    } else if (u[i] < lo[i] - 1e-6f || u[i] > hi[i] + 1e-6f) {
      return 0;
    }
  }
  *smin = a;
  *smax = b;
  return a <= b;
}

void ap_mixer_allocate(const ap_mixer *m, const float torque[3], float thrust, float tmin_frac,
                       float out[LOCKSTEP_MAX_ROTORS]) {
  float u_t[LOCKSTEP_MAX_ROTORS], u_rp[LOCKSTEP_MAX_ROTORS], u_y[LOCKSTEP_MAX_ROTORS], c[LOCKSTEP_MAX_ROTORS];
  float lo[LOCKSTEP_MAX_ROTORS], hi[LOCKSTEP_MAX_ROTORS], u[LOCKSTEP_MAX_ROTORS];
  uint32_t n = m->n;
  for (uint32_t i = 0; i < n; i++) {
    u_t[i] = m->M[i][3] * thrust;
    u_rp[i] = m->M[i][0] * torque[0] + m->M[i][1] * torque[1];
    u_y[i] = m->M[i][2] * torque[2];
    c[i] = m->M[i][3];
    lo[i] = tmin_frac * m->tmax[i];
    hi[i] = m->tmax[i];
  }
  /* The most the collective may rise: only up to the idle floor of the
   * torque-free request. */
  float cap = 0.0f;
  for (uint32_t i = 0; i < n; i++)
    if (c[i] > 1e-6f) cap = fmaxf(cap, (lo[i] - u_t[i]) / c[i]);
  /* Roll/pitch at full authority if some collective shift fits it, else the
   * largest fraction that does (bisection, fixed iteration count). */
  float k = 1.0f, smin, smax;
  for (uint32_t i = 0; i < n; i++) u[i] = u_t[i] + u_rp[i];
  if (!shift_range(m, u, c, lo, hi, cap, &smin, &smax)) {
    float good = 0.0f, bad = 1.0f;
    for (int it = 0; it < 24; it++) {
      float mid = 0.5f * (good + bad);
      for (uint32_t i = 0; i < n; i++) u[i] = u_t[i] + mid * u_rp[i];
      if (shift_range(m, u, c, lo, hi, cap, &smin, &smax))
        good = mid;
      else
        bad = mid;
    }
    k = good;
    for (uint32_t i = 0; i < n; i++) u[i] = u_t[i] + k * u_rp[i];
    if (!shift_range(m, u, c, lo, hi, cap, &smin, &smax)) smin = smax = 0.0f;
  }
  float s = ap_clampf(0.0f, smin, smax);
  for (uint32_t i = 0; i < n; i++) u[i] += s * c[i];
  /* As much yaw as fits. */
  float alpha = 1.0f;
  for (uint32_t i = 0; i < n; i++) {
    if (u_y[i] > 1e-9f) alpha = fminf(alpha, fmaxf(0.0f, (hi[i] - u[i]) / u_y[i]));
    if (u_y[i] < -1e-9f) alpha = fminf(alpha, fmaxf(0.0f, (lo[i] - u[i]) / u_y[i]));
  }
  for (uint32_t i = 0; i < n; i++) out[i] = ap_clampf(u[i] + alpha * u_y[i], lo[i], hi[i]);
  for (uint32_t i = n; i < LOCKSTEP_MAX_ROTORS; i++) out[i] = 0.0f;
}

float ap_cmd_to_thrust(float cmd, float f) { return f * cmd * cmd + (1.0f - f) * cmd; }

float ap_thrust_to_cmd(float frac, float f) {
  frac = ap_clampf(frac, 0.0f, 1.0f);
  if (f < 1e-6f) return frac;
  float b = 1.0f - f;
  return ap_clampf((-b + sqrtf(b * b + 4.0f * f * frac)) / (2.0f * f), 0.0f, 1.0f);
}
