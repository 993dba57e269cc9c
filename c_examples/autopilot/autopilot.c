/* The lockstep reference autopilot: the ABI exports.
 *
 * Build with -DAP_SINGLE_INSTANCE for a variant that reports no
 * LOCKSTEP_AP_CAP_REENTRANT and refuses a second live instance itself. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ap_internal.h"
#include "ap_math.h"

LOCKSTEP_AUTOPILOT_DEFINE_LAYOUT()

#ifdef AP_SINGLE_INSTANCE
static int g_live_instances = 0;
#endif

void ap_set_error(ap_t *ap, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(ap->last_error, sizeof(ap->last_error), fmt, args);
  va_end(args);
}

LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_abi_version(void) { return LOCKSTEP_AUTOPILOT_ABI_VERSION; }

LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_capabilities(void) {
#ifdef AP_SINGLE_INSTANCE
  return 0u;
#else
  return LOCKSTEP_AP_CAP_REENTRANT;
#endif
}

LOCKSTEP_AP_EXPORT const char *lockstep_autopilot_name(void) {
#ifdef AP_SINGLE_INSTANCE
  return "lockstep-reference-autopilot 0.1.0 (single instance)";
#else
  return "lockstep-reference-autopilot 0.1.0";
#endif
}

static void put_err(char *err, size_t err_len, const char *msg) {
  if (err && err_len > 0) snprintf(err, err_len, "%s", msg);
}

static int config_ok(const lockstep_autopilot_config *c, char *msg, size_t len) {
  if (c->struct_size != sizeof(lockstep_autopilot_config)) {
    snprintf(msg, len, "config.struct_size is %u, this autopilot was built with %zu", (unsigned)c->struct_size,
             sizeof(lockstep_autopilot_config));
    return 0;
  }
  if (c->rotor_count < 1 || c->rotor_count > LOCKSTEP_MAX_ROTORS) {
    snprintf(msg, len, "config.rotor_count is %u, must be 1..%d", (unsigned)c->rotor_count, LOCKSTEP_MAX_ROTORS);
    return 0;
  }
  if (!(c->mass_kg > 0.0f) || !isfinite(c->mass_kg) || !(c->gravity_mps2 > 0.0f) || !isfinite(c->gravity_mps2)) {
    snprintf(msg, len, "config.mass_kg and config.gravity_mps2 must be positive and finite");
    return 0;
  }
  for (int i = 0; i < 3; i++)
    if (!(c->inertia_diag_kgm2[i] > 0.0f) || !isfinite(c->inertia_diag_kgm2[i])) {
      snprintf(msg, len, "config.inertia_diag_kgm2[%d] must be positive and finite", i);
      return 0;
    }
  if (c->autopilot_period_us == 0) {
    snprintf(msg, len, "config.autopilot_period_us must be positive");
    return 0;
  }
  if (!(c->rotor_time_constant_s >= 0.0f) || !isfinite(c->rotor_time_constant_s)) {
    snprintf(msg, len, "config.rotor_time_constant_s must be >= 0 and finite (0: unknown)");
    return 0;
  }
  if (!(c->thrust_model_factor >= 0.0f && c->thrust_model_factor <= 1.0f)) {
    snprintf(msg, len, "config.thrust_model_factor must be in [0, 1]");
    return 0;
  }
  if (!(fabs(c->origin_lat_deg) <= 90.0) || !(fabs(c->origin_lon_deg) <= 180.0) || !isfinite(c->origin_alt_m)) {
    snprintf(msg, len, "config origin latitude/longitude/altitude out of range");
    return 0;
  }
  return 1;
}

LOCKSTEP_AP_EXPORT lockstep_autopilot *lockstep_autopilot_create(const lockstep_autopilot_config *config, char *err,
                                                                 size_t err_len) {
  char msg[AP_ERR_LEN];
  if (!config) {
    put_err(err, err_len, "config is NULL");
    return NULL;
  }
  if (!config_ok(config, msg, sizeof(msg))) {
    put_err(err, err_len, msg);
    return NULL;
  }
#ifdef AP_SINGLE_INSTANCE
  if (g_live_instances > 0) {
    put_err(err, err_len, "this autopilot build supports one instance per process");
    return NULL;
  }
#endif
  ap_t *ap = calloc(1, sizeof(*ap));
  if (!ap) {
    put_err(err, err_len, "out of memory");
    return NULL;
  }
  ap->cfg = *config;
  if (!ap_mixer_build(&ap->mixer, config, msg, sizeof(msg))) {
    put_err(err, err_len, msg);
    free(ap);
    return NULL;
  }
  ap_params_default(&ap->p, config);
  ap_modes_reset(ap);
#ifdef AP_SINGLE_INSTANCE
  g_live_instances++;
#endif
  return ap;
}

LOCKSTEP_AP_EXPORT void lockstep_autopilot_destroy(lockstep_autopilot *ap) {
  if (!ap) return;
  free(ap);
#ifdef AP_SINGLE_INSTANCE
  g_live_instances--;
#endif
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_reset(lockstep_autopilot *ap) {
  if (!ap) return LOCKSTEP_AP_ERR_NULL;
  size_t off = offsetof(ap_t, last_time_us);
  memset((char *)ap + off, 0, sizeof(*ap) - off);
  ap->last_error[0] = '\0';
  ap_modes_reset(ap);
  return LOCKSTEP_AP_OK;
}

/* Migration: the instance is one flat struct (no pointers), so its state is
 * a header and the struct's bytes. restore() takes only a snapshot of this
 * build (magic, version, size) taken from an instance of the same config. */
#define AP_SNAPSHOT_MAGIC 0x53414b4cu /* "LKAS" */
#define AP_SNAPSHOT_VERSION 1u
typedef struct ap_snapshot_header {
  uint32_t magic, version;
  uint64_t size;
} ap_snapshot_header;

LOCKSTEP_AP_EXPORT size_t lockstep_autopilot_snapshot_size(const lockstep_autopilot *ap) {
  return ap ? sizeof(ap_snapshot_header) + sizeof(ap_t) : 0;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_snapshot(const lockstep_autopilot *ap, uint8_t *buf, size_t buf_len,
                                                       size_t *out_len) {
  if (!ap || !buf || !out_len) return LOCKSTEP_AP_ERR_NULL;
  size_t n = sizeof(ap_snapshot_header) + sizeof(ap_t);
  if (buf_len < n) return LOCKSTEP_AP_ERR_INVALID;
  ap_snapshot_header h = {AP_SNAPSHOT_MAGIC, AP_SNAPSHOT_VERSION, sizeof(ap_t)};
  memcpy(buf, &h, sizeof(h));
  memcpy(buf + sizeof(h), ap, sizeof(ap_t));
  *out_len = n;
  return LOCKSTEP_AP_OK;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_restore(lockstep_autopilot *ap, const uint8_t *buf, size_t len) {
  if (!ap || !buf) return LOCKSTEP_AP_ERR_NULL;
  ap_snapshot_header h;
  if (len != sizeof(h) + sizeof(ap_t)) {
    ap_set_error(ap, "a snapshot of %zu bytes; this build's are %zu", len, sizeof(h) + sizeof(ap_t));
    return LOCKSTEP_AP_ERR_INVALID;
  }
  memcpy(&h, buf, sizeof(h));
  if (h.magic != AP_SNAPSHOT_MAGIC || h.version != AP_SNAPSHOT_VERSION || h.size != sizeof(ap_t)) {
    ap_set_error(ap, "not a snapshot of this build (magic %08x, version %u)", (unsigned)h.magic,
                 (unsigned)h.version);
    return LOCKSTEP_AP_ERR_INVALID;
  }
  /* Compared as bytes: buf need not be aligned for ap_t. */
  if (memcmp(buf + sizeof(h) + offsetof(ap_t, cfg), &ap->cfg, sizeof(ap->cfg)) != 0) {
    ap_set_error(ap, "the snapshot was taken from an instance of another config");
    return LOCKSTEP_AP_ERR_INVALID;
  }
  memcpy(ap, buf + sizeof(h), sizeof(ap_t));
  return LOCKSTEP_AP_OK;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_last_error(const lockstep_autopilot *ap, char *buf, size_t buf_len) {
  if (!ap || !buf) return LOCKSTEP_AP_ERR_NULL;
  if (buf_len == 0) return LOCKSTEP_AP_ERR_INVALID;
  snprintf(buf, buf_len, "%s", ap->last_error);
  return LOCKSTEP_AP_OK;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_mission_upload(lockstep_autopilot *ap,
                                                             const lockstep_mission_item *items, size_t count) {
  if (!ap) return LOCKSTEP_AP_ERR_NULL;
  if (count > 0 && !items) return LOCKSTEP_AP_ERR_NULL;
  if (!ap_mission_validate(ap, items, count)) return LOCKSTEP_AP_ERR_INVALID;
  if (count > 0) memcpy(ap->mission, items, count * sizeof(*items));
  ap->mission_count = (uint32_t)count;
  ap_mission_restart(ap);
  ap->mis_idx = -1;
  ap->mission_finished = 0;
  ap->takeoff_then_mission = 0;
  if (ap->mode == LOCKSTEP_MODE_MISSION) {
    /* The old mission is gone: hold where we are. */
    memcpy(ap->tgt.pos, ap->pos, sizeof(ap->tgt.pos));
    ap->tgt.vz_override = 0;
    ap->mode = LOCKSTEP_MODE_HOLD;
  }
  return LOCKSTEP_AP_OK;
}

static int read_inputs(ap_t *ap, const lockstep_sensor_frame *s) {
  if (s->fresh_mask & LOCKSTEP_FRESH_ESTIMATE) {
    const lockstep_estimate *e = &s->estimate;
    if (!ap_finite_n(e->position_ned_m, 3) || !ap_finite_n(e->velocity_ned_mps, 3) ||
        !ap_finite_n(e->attitude_q, 4) || !ap_finite_n(e->rates_frd_radps, 3)) {
      ap_set_error(ap, "estimate sampled at %llu us is not finite", (unsigned long long)e->timestamp_us);
      return 0;
    }
    memcpy(ap->pos, e->position_ned_m, sizeof(ap->pos));
    memcpy(ap->vel, e->velocity_ned_mps, sizeof(ap->vel));
    memcpy(ap->q, e->attitude_q, sizeof(ap->q));
    ap_quat_normalize(ap->q);
    memcpy(ap->rates, e->rates_frd_radps, sizeof(ap->rates));
    if (!ap->have_estimate) {
      memcpy(ap->vel_prev, ap->vel, sizeof(ap->vel));
      memcpy(ap->rates_prev, ap->rates, sizeof(ap->rates));
    }
    ap->have_estimate = 1;
  }
  if (s->fresh_mask & LOCKSTEP_FRESH_IMU) {
    if (!ap_finite_n(s->imu.gyro_radps, 3)) {
      ap_set_error(ap, "gyro sampled at %llu us is not finite", (unsigned long long)s->imu.timestamp_us);
      return 0;
    }
    ap_gyro_update(&ap->gyro, &ap->p, s->imu.gyro_radps, s->imu.timestamp_us, ap->cfg.autopilot_period_us);
  }
  if (s->fresh_mask & LOCKSTEP_FRESH_BATTERY) ap->battery_warning = s->battery.warning;
  ap->landed_flag = s->landed != 0;
  return 1;
}

static void write_outputs(ap_t *ap, float dt, uint64_t now_us, lockstep_actuator_frame *out) {
  memset(out, 0, sizeof(*out));
  float idle_frac = ap_cmd_to_thrust(ap->p.mot_idle, ap->mixer.f);
  if (ap_mode_flying(ap->mode)) {
    float torque[3], thrust;
    ap_control_run(ap, dt, now_us, torque, &thrust);
    ap_mixer_allocate(&ap->mixer, torque, thrust, idle_frac, ap->thrust_cmd);
    for (uint32_t i = 0; i < ap->mixer.n; i++)
      out->motors[i] = ap_thrust_to_cmd(ap->thrust_cmd[i] / ap->mixer.tmax[i], ap->mixer.f);
  } else {
    /* On the ground: setpoints follow the vehicle, controllers stay reset. */
    ap_control_reset(ap);
    memset(&ap->sp, 0, sizeof(ap->sp));
    memcpy(ap->sp.position_ned_m, ap->pos, sizeof(ap->pos));
    memcpy(ap->sp.attitude_q, ap->have_estimate ? ap->q : (const float[4]){1, 0, 0, 0}, sizeof(ap->sp.attitude_q));
    ap->sp.yaw_rad = ap->have_estimate ? ap_quat_yaw(ap->q) : 0.0f;
    if (ap->mode == LOCKSTEP_MODE_IDLE || ap->mode == LOCKSTEP_MODE_LANDED)
      for (uint32_t i = 0; i < ap->mixer.n; i++) out->motors[i] = ap->p.mot_idle;
  }
  out->armed = ap->mode != LOCKSTEP_MODE_DISARMED;
  out->mode = ap->mode;
  out->mission_current = ap->mission_count > 0 ? ap->mis_idx : -1;
  out->mission_count = ap->mission_count;
  out->mission_finished = (uint32_t)ap->mission_finished;
  out->setpoints = ap->sp;
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_step(lockstep_autopilot *ap, uint64_t time_us,
                                                   const lockstep_sensor_frame *sensors,
                                                   lockstep_actuator_frame *actuators) {
  if (!ap || !sensors || !actuators) return LOCKSTEP_AP_ERR_NULL;
  if (ap->has_time && time_us <= ap->last_time_us) {
    ap_set_error(ap, "step at %llu us does not follow %llu us", (unsigned long long)time_us,
                 (unsigned long long)ap->last_time_us);
    return LOCKSTEP_AP_ERR_TIME;
  }
  if (sensors->time_us != time_us) {
    ap_set_error(ap, "sensor frame time %llu us differs from step time %llu us",
                 (unsigned long long)sensors->time_us, (unsigned long long)time_us);
    return LOCKSTEP_AP_ERR_INVALID;
  }
  uint64_t dt_us = ap->has_time ? time_us - ap->last_time_us : ap->cfg.autopilot_period_us;
  ap->last_time_us = time_us;
  ap->has_time = 1;
  /* Integrators see at most 100 ms per step, so a long gap cannot kick them. */
  float dt = (float)((double)(dt_us < 100000u ? dt_us : 100000u) * 1e-6);
  if (!read_inputs(ap, sensors)) return LOCKSTEP_AP_ERR_INVALID;
  if (sensors->fresh_mask & LOCKSTEP_FRESH_COMMANDS) ap_modes_commands(ap, &sensors->commands, time_us);
  ap_modes_update(ap, time_us);
  lockstep_actuator_frame out;
  write_outputs(ap, dt, time_us, &out);
  for (int i = 0; i < LOCKSTEP_MAX_MOTORS; i++)
    if (!isfinite(out.motors[i])) {
      ap_set_error(ap, "controller produced a non-finite motor command at %llu us", (unsigned long long)time_us);
      return LOCKSTEP_AP_ERR_INTERNAL;
    }
  *actuators = out;
  return LOCKSTEP_AP_OK;
}
