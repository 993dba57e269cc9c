/* Parameters: defaults and the by-name get/set exports. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "ap_internal.h"
#include "ap_math.h"

/* Rate and attitude gains from the thrust response's time constant tau
 * (config.rotor_time_constant_s; 30 ms when unknown): the rate loop (angular
 * acceleration per rate error, scaled by the inertia in control.c) crosses
 * over near 0.5 / tau, which keeps about 55 degrees of phase margin against
 * the rotor lag and the step delay; the attitude loop is three times slower. */
static void derive_gains(ap_params *p, const lockstep_autopilot_config *cfg) {
  /* The rate integrator must be able to hold the torque of one lost rotor:
   * 1.5 x the roll/pitch acceleration of one rotor's hover thrust at its arm. */
  p->rate_int_lim = 10.0f;
  if (cfg && cfg->rotor_count > 0) {
    float hover = cfg->mass_kg * cfg->gravity_mps2 / (float)cfg->rotor_count;
    float imin = fminf(cfg->inertia_diag_kgm2[0], cfg->inertia_diag_kgm2[1]);
    for (uint32_t i = 0; i < cfg->rotor_count; i++) {
      float m[3];
      ap_cross3(cfg->rotors[i].position_m, cfg->rotors[i].thrust_axis, m);
      float arm = sqrtf(m[0] * m[0] + m[1] * m[1]);
      if (imin > 0.0f) p->rate_int_lim = fmaxf(p->rate_int_lim, fminf(100.0f, 1.5f * arm * hover / imin));
    }
  }
  float tau = cfg ? cfg->rotor_time_constant_s : 0.0f;
  if (!(tau > 0.0f) || !isfinite(tau)) tau = 0.03f;
  float kp = fminf(fmaxf(0.5f / tau, 5.0f), 25.0f);
  float kp_yaw = fminf(fmaxf(0.6f * kp, 3.0f), 15.0f);
  for (int i = 0; i < 3; i++) {
    p->rate_p[i] = i < 2 ? kp : kp_yaw;
    p->rate_i[i] = i < 2 ? 0.5f * kp : 0.4f * kp_yaw;
    p->rate_d[i] = i < 2 ? 0.1f * tau * kp : 0.0f;
    p->att_p[i] = i < 2 ? fminf(fmaxf(kp / 3.0f, 2.0f), 8.0f) : fminf(2.8f, kp_yaw / 3.0f);
  }
}

void ap_params_default(ap_params *p, const lockstep_autopilot_config *cfg) {
  memset(p, 0, sizeof(*p));
  p->xy_p = 0.95f;
  p->z_p = 1.0f;
  p->xy_vel_p = 1.8f;
  p->xy_vel_i = 0.4f;
  p->xy_vel_d = 0.2f;
  p->z_vel_p = 4.0f;
  p->z_vel_i = 2.0f;
  p->z_vel_d = 0.0f;
  p->veld_lp_hz = 5.0f;
  p->xy_vel_max = 12.0f;
  p->xy_cruise = 5.0f;
  p->z_vel_max_up = 3.0f;
  p->z_vel_max_dn = 1.5f;
  p->acc_hor_max = 5.0f;
  p->tilt_max_deg = 35.0f;
  p->thr_min_frac = 0.12f;
  p->land_speed = 0.7f;
  p->tko_speed = 1.5f;
  derive_gains(p, cfg);
  p->rate_max_rp_deg = 220.0f;
  p->rate_max_y_deg = 200.0f;
  p->acc_rad = 2.0f;
  p->acc_alt = 0.8f;
  p->takeoff_alt = 2.5f;
  p->rtl_alt = 15.0f;
  p->land_trig_time_s = 1.0f;
  p->disarm_land_s = 2.0f;
  p->mot_idle = 0.05f;
  p->gyro_cutoff_hz = 40.0f;
  p->dgyro_cutoff_hz = 30.0f;
  p->yaw_to_wp = 0;
  p->low_bat_act = 1;
}

typedef struct param_desc {
  const char *name;
  int is_int;
  size_t offset;
  float min, max;
} param_desc;

#define PF(n, field, lo, hi) {n, 0, offsetof(ap_params, field), lo, hi}
#define PI(n, field, lo, hi) {n, 1, offsetof(ap_params, field), lo, hi}

static const param_desc PARAMS[] = {
    PF("MPC_XY_P", xy_p, 0.0f, 10.0f),
    PF("MPC_Z_P", z_p, 0.0f, 10.0f),
    PF("MPC_XY_VEL_P", xy_vel_p, 0.0f, 20.0f),
    PF("MPC_XY_VEL_I", xy_vel_i, 0.0f, 20.0f),
    PF("MPC_XY_VEL_D", xy_vel_d, 0.0f, 5.0f),
    PF("MPC_Z_VEL_P", z_vel_p, 0.0f, 20.0f),
    PF("MPC_Z_VEL_I", z_vel_i, 0.0f, 20.0f),
    PF("MPC_Z_VEL_D", z_vel_d, 0.0f, 5.0f),
    PF("MPC_VELD_LP", veld_lp_hz, 0.5f, 100.0f),
    PF("MPC_XY_VEL_MAX", xy_vel_max, 0.1f, 30.0f),
    PF("MPC_XY_CRUISE", xy_cruise, 0.1f, 30.0f),
    PF("MPC_Z_VEL_MAX_UP", z_vel_max_up, 0.1f, 15.0f),
    PF("MPC_Z_VEL_MAX_DN", z_vel_max_dn, 0.1f, 15.0f),
    PF("MPC_ACC_HOR_MAX", acc_hor_max, 0.5f, 20.0f),
    PF("MPC_TILTMAX_AIR", tilt_max_deg, 5.0f, 85.0f),
    PF("MPC_THR_MIN", thr_min_frac, 0.0f, 0.9f),
    PF("MPC_LAND_SPEED", land_speed, 0.1f, 5.0f),
    PF("MPC_TKO_SPEED", tko_speed, 0.1f, 10.0f),
    PF("MC_ROLL_P", att_p[0], 0.0f, 20.0f),
    PF("MC_PITCH_P", att_p[1], 0.0f, 20.0f),
    PF("MC_YAW_P", att_p[2], 0.0f, 20.0f),
    PF("MC_ROLLRATE_P", rate_p[0], 0.0f, 200.0f),
    PF("MC_PITCHRATE_P", rate_p[1], 0.0f, 200.0f),
    PF("MC_YAWRATE_P", rate_p[2], 0.0f, 200.0f),
    PF("MC_ROLLRATE_I", rate_i[0], 0.0f, 200.0f),
    PF("MC_PITCHRATE_I", rate_i[1], 0.0f, 200.0f),
    PF("MC_YAWRATE_I", rate_i[2], 0.0f, 200.0f),
    PF("MC_ROLLRATE_D", rate_d[0], 0.0f, 5.0f),
    PF("MC_PITCHRATE_D", rate_d[1], 0.0f, 5.0f),
    PF("MC_YAWRATE_D", rate_d[2], 0.0f, 5.0f),
    PF("MC_RATE_INT_LIM", rate_int_lim, 0.0f, 100.0f),
    PF("MC_RP_RATE_MAX", rate_max_rp_deg, 10.0f, 1800.0f),
    PF("MC_YAWRATE_MAX", rate_max_y_deg, 10.0f, 1800.0f),
    PF("NAV_ACC_RAD", acc_rad, 0.05f, 200.0f),
    PF("NAV_ACC_ALT", acc_alt, 0.05f, 50.0f),
    PF("MIS_TAKEOFF_ALT", takeoff_alt, 0.5f, 500.0f),
    PF("RTL_RETURN_ALT", rtl_alt, 0.0f, 500.0f),
    PF("LNDMC_TRIG_TIME", land_trig_time_s, 0.1f, 10.0f),
    PF("COM_DISARM_LAND", disarm_land_s, -1.0f, 60.0f),
    PF("MOT_IDLE", mot_idle, 0.0f, 0.3f),
    PF("IMU_GYRO_CUTOFF", gyro_cutoff_hz, 5.0f, 1000.0f),
    PF("IMU_DGYRO_CUTOFF", dgyro_cutoff_hz, 5.0f, 1000.0f),
    PI("MIS_YAW_TO_WP", yaw_to_wp, 0.0f, 1.0f),
    PI("COM_LOW_BAT_ACT", low_bat_act, 0.0f, 1.0f),
};

#define PARAM_COUNT (sizeof(PARAMS) / sizeof(PARAMS[0]))

static const param_desc *find(ap_t *ap, const char *name) {
  for (size_t i = 0; i < PARAM_COUNT; i++)
    if (strcmp(PARAMS[i].name, name) == 0) return &PARAMS[i];
  ap_set_error(ap, "unknown parameter %.64s", name);
  return NULL;
}

static int32_t lookup(ap_t *ap, const char *name, int want_int, const param_desc **out) {
  if (!ap || !name) return LOCKSTEP_AP_ERR_NULL;
  const param_desc *d = find(ap, name);
  if (!d) return LOCKSTEP_AP_ERR_NOT_FOUND;
  if (d->is_int != want_int) {
    ap_set_error(ap, "parameter %s is %s", d->name, d->is_int ? "an int32" : "a float");
    return LOCKSTEP_AP_ERR_TYPE;
  }
  *out = d;
  return LOCKSTEP_AP_OK;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_set_f32(lockstep_autopilot *ap, const char *name, float value) {
  const param_desc *d;
  int32_t rc = lookup(ap, name, 0, &d);
  if (rc != LOCKSTEP_AP_OK) return rc;
  if (!isfinite(value) || value < d->min || value > d->max) {
    ap_set_error(ap, "parameter %s = %g is outside [%g, %g]", d->name, (double)value, (double)d->min,
                 (double)d->max);
    return LOCKSTEP_AP_ERR_INVALID;
  }
  memcpy((char *)&ap->p + d->offset, &value, sizeof(value));
  /* The gyro filters take a new cutoff at the next IMU sample. */
  if (d->offset == offsetof(ap_params, gyro_cutoff_hz) || d->offset == offsetof(ap_params, dgyro_cutoff_hz))
    ap->gyro.redesign = 1;
  /* A new cruise speed is in force at once, as PX4's DO_CHANGE_SPEED is:
   * for the leg being flown and the rest of a mission (until one of its
   * DO_CHANGE_SPEED items says otherwise). */
  if (d->offset == offsetof(ap_params, xy_cruise)) {
    if (ap->tgt.xy_speed_max < AP_FAR) ap->tgt.xy_speed_max = value; /* not a velocity flown */
    ap->mis_xy_speed = value;
  }
  return LOCKSTEP_AP_OK;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_get_f32(lockstep_autopilot *ap, const char *name,
                                                            float *out_value) {
  const param_desc *d;
  if (!out_value) return LOCKSTEP_AP_ERR_NULL;
  int32_t rc = lookup(ap, name, 0, &d);
  if (rc != LOCKSTEP_AP_OK) return rc;
  memcpy(out_value, (const char *)&ap->p + d->offset, sizeof(*out_value));
  return LOCKSTEP_AP_OK;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_set_i32(lockstep_autopilot *ap, const char *name, int32_t value) {
  const param_desc *d;
  int32_t rc = lookup(ap, name, 1, &d);
  if (rc != LOCKSTEP_AP_OK) return rc;
  if ((float)value < d->min || (float)value > d->max) {
    ap_set_error(ap, "parameter %s = %d is outside [%g, %g]", d->name, (int)value, (double)d->min, (double)d->max);
    return LOCKSTEP_AP_ERR_INVALID;
  }
  memcpy((char *)&ap->p + d->offset, &value, sizeof(value));
  return LOCKSTEP_AP_OK;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_get_i32(lockstep_autopilot *ap, const char *name,
                                                            int32_t *out_value) {
  const param_desc *d;
  if (!out_value) return LOCKSTEP_AP_ERR_NULL;
  int32_t rc = lookup(ap, name, 1, &d);
  if (rc != LOCKSTEP_AP_OK) return rc;
  memcpy(out_value, (const char *)&ap->p + d->offset, sizeof(*out_value));
  return LOCKSTEP_AP_OK;
}

/* The enumeration came with ABI 4 (the build also compiles this library
 * against the ABI-3 header, as an old library the harness must still load). */
#if LOCKSTEP_AUTOPILOT_ABI_VERSION >= 4
LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_param_count(lockstep_autopilot *ap) {
  return ap ? (uint32_t)PARAM_COUNT : 0u;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_info(lockstep_autopilot *ap, uint32_t index, char *out_name,
                                                         size_t name_len, uint32_t *out_type, double *out_default) {
  if (!ap || !out_name || !out_type || !out_default) return LOCKSTEP_AP_ERR_NULL;
  if (index >= PARAM_COUNT) {
    ap_set_error(ap, "parameter index %u is past the last (%u parameters)", (unsigned)index, (unsigned)PARAM_COUNT);
    return LOCKSTEP_AP_ERR_INVALID;
  }
  const param_desc *d = &PARAMS[index];
  size_t n = strlen(d->name);
  if (name_len <= n) {
    ap_set_error(ap, "parameter %s needs a name buffer of %zu bytes, not %zu", d->name, n + 1, name_len);
    return LOCKSTEP_AP_ERR_INVALID;
  }
  /* The defaults: what create() set for this instance's config. */
  ap_params def;
  ap_params_default(&def, &ap->cfg);
  const char *field = (const char *)&def + d->offset;
  if (d->is_int) {
    int32_t v;
    memcpy(&v, field, sizeof(v));
    *out_default = (double)v;
  } else {
    float v;
    memcpy(&v, field, sizeof(v));
    *out_default = (double)v;
  }
  memcpy(out_name, d->name, n + 1);
  *out_type = d->is_int ? LOCKSTEP_PARAM_TYPE_I32 : LOCKSTEP_PARAM_TYPE_F32;
  return LOCKSTEP_AP_OK;
}
#endif
