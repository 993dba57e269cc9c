/* A minimal autopilot that the loader must refuse, one way per build.
 *
 * build.rs compiles this file once per case: with one of the BROKEN_*
 * defines below, or against a deliberately altered copy of
 * include/lockstep/autopilot.h (other ABI version, a sensor frame of another
 * size, two fields swapped, a field of another type). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockstep/autopilot.h"

LOCKSTEP_AUTOPILOT_DEFINE_LAYOUT()

struct lockstep_autopilot {
  char err[128];
};

LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_abi_version(void) { return LOCKSTEP_AUTOPILOT_ABI_VERSION; }
LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_capabilities(void) { return LOCKSTEP_AP_CAP_REENTRANT; }
LOCKSTEP_AP_EXPORT const char *lockstep_autopilot_name(void) { return "lockstep-broken-fixture " BROKEN_CASE; }

LOCKSTEP_AP_EXPORT lockstep_autopilot *lockstep_autopilot_create(const lockstep_autopilot_config *config, char *err,
                                                                 size_t err_len) {
  (void)config;
#ifdef BROKEN_CREATE_NULL
  if (err && err_len) snprintf(err, err_len, "broken fixture: refusing to create (rotor_count %u)",
                               config ? (unsigned)config->rotor_count : 0u);
  return NULL;
#else
  (void)err;
  (void)err_len;
  return calloc(1, sizeof(lockstep_autopilot));
#endif
}

#ifndef BROKEN_OMIT_STEP
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_step(lockstep_autopilot *ap, uint64_t time_us,
                                                   const lockstep_sensor_frame *sensors,
                                                   lockstep_actuator_frame *out) {
  (void)sensors;
  if (!ap || !out) return LOCKSTEP_AP_ERR_NULL;
  memset(out, 0, sizeof(*out));
  out->mode = LOCKSTEP_MODE_DISARMED;
  out->mission_current = -1;
  out->setpoints.attitude_q[0] = 1.0f;
#ifdef BROKEN_STEP_ERROR
  snprintf(ap->err, sizeof(ap->err), "broken fixture: simulated controller fault at %llu us",
           (unsigned long long)time_us);
  return LOCKSTEP_AP_ERR_INTERNAL;
#else
  (void)time_us;
#endif
#ifdef BROKEN_NAN_OUTPUT
  out->motors[2] = NAN;
#endif
#ifdef BROKEN_OUT_OF_RANGE
  out->motors[1] = 1.5f;
#endif
  return LOCKSTEP_AP_OK;
}
#endif

LOCKSTEP_AP_EXPORT void lockstep_autopilot_destroy(lockstep_autopilot *ap) { free(ap); }

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_last_error(const lockstep_autopilot *ap, char *buf, size_t buf_len) {
  if (!ap || !buf || !buf_len) return LOCKSTEP_AP_ERR_NULL;
  snprintf(buf, buf_len, "%s", ap->err);
  return LOCKSTEP_AP_OK;
}
