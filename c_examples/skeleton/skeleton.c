/* A minimal autopilot to start from: everything autopilot.h requires and
 * nothing more. It arms on command and holds 2 m above its start with a
 * PID loop on the estimated altitude, all motors equal (no attitude
 * control: it flies only in calm air on a symmetric airframe). Build it
 * and check it:
 *
 *   cc -std=c11 -shared -fPIC -fvisibility=hidden -Iinclude \
 *      c_examples/skeleton/skeleton.c -lm -o libskeleton.so
 *   lockstep check-lib ./libskeleton.so
 *   lockstep fly examples/scenarios/skeleton.toml --autopilot ./libskeleton.so
 *
 * A C++ stack provides the layout table the same way: one C11 translation
 * unit includes autopilot.h and expands LOCKSTEP_AUTOPILOT_DEFINE_LAYOUT()
 * (it needs C11's _Generic), and the C++ code defines the other functions
 * with extern "C" and the shared structs from the same header. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lockstep/autopilot.h"

LOCKSTEP_AUTOPILOT_DEFINE_LAYOUT()

#define HOLD_HEIGHT_M 2.0f

struct lockstep_autopilot {
  lockstep_autopilot_config cfg;
  int armed;
  int have_estimate;
  float z, vz;    /* estimated NED altitude and vertical speed */
  float z_target; /* NED */
  float z_int;    /* integral of the altitude error, m*s */
};

LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_abi_version(void) { return LOCKSTEP_AUTOPILOT_ABI_VERSION; }

LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_capabilities(void) { return LOCKSTEP_AP_CAP_REENTRANT; }

LOCKSTEP_AP_EXPORT lockstep_autopilot *lockstep_autopilot_create(const lockstep_autopilot_config *config,
                                                                 char *err, size_t err_len) {
  if (!config || config->struct_size != sizeof(*config) || config->rotor_count == 0 ||
      config->rotor_count > LOCKSTEP_MAX_ROTORS) {
    if (err && err_len > 0) {
      strncpy(err, "skeleton: config missing, of another size, or without rotors", err_len - 1);
      err[err_len - 1] = '\0';
    }
    return NULL;
  }
  lockstep_autopilot *ap = calloc(1, sizeof(*ap));
  if (!ap) return NULL;
  ap->cfg = *config;
  return ap;
}

/* The command that gives each rotor `thrust` newtons, from the config's
 * thrust curve t/max = f u^2 + (1 - f) u. */
static float command_for(const lockstep_autopilot_config *c, float thrust) {
  float r = thrust / c->rotors[0].max_thrust_n, f = c->thrust_model_factor;
  r = r < 0.0f ? 0.0f : (r > 1.0f ? 1.0f : r);
  if (f <= 0.0f) return r;
  return (-(1.0f - f) + sqrtf((1.0f - f) * (1.0f - f) + 4.0f * f * r)) / (2.0f * f);
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_step(lockstep_autopilot *ap, uint64_t time_us,
                                                   const lockstep_sensor_frame *s, lockstep_actuator_frame *out) {
  (void)time_us;
  if (!ap || !s || !out) return LOCKSTEP_AP_ERR_NULL;
  if (s->fresh_mask & LOCKSTEP_FRESH_ESTIMATE) {
    ap->z = s->estimate.position_ned_m[2];
    ap->vz = s->estimate.velocity_ned_mps[2];
    ap->have_estimate = 1;
  }
  if ((s->fresh_mask & LOCKSTEP_FRESH_COMMANDS) && ap->have_estimate) {
    if (s->commands.arm_request == LOCKSTEP_ARM_ARM && !ap->armed) {
      ap->armed = 1;
      ap->z_target = ap->z - HOLD_HEIGHT_M;
      ap->z_int = 0.0f;
    } else if (s->commands.arm_request == LOCKSTEP_ARM_DISARM) {
      ap->armed = 0;
    }
  }
  memset(out, 0, sizeof(*out));
  out->mission_current = -1;
  out->armed = (uint32_t)ap->armed;
  out->mode = ap->armed ? LOCKSTEP_MODE_HOLD : LOCKSTEP_MODE_DISARMED;
  if (ap->armed) {
    const lockstep_autopilot_config *c = &ap->cfg;
    /* PID on altitude (NED: down is positive), as an acceleration upwards;
     * the integral takes up what the thrust model gets wrong (the pack's
     * voltage, say), clamped to +-3 m/s^2. */
    float e = ap->z - ap->z_target, dt = (float)c->autopilot_period_us * 1e-6f;
    ap->z_int += e * dt;
    if (ap->z_int > 3.0f) ap->z_int = 3.0f;
    if (ap->z_int < -3.0f) ap->z_int = -3.0f;
    float a_up = 2.0f * e + 3.0f * ap->vz + 0.5f * ap->z_int;
    float thrust = c->mass_kg * (c->gravity_mps2 + a_up) / (float)c->rotor_count;
    float u = command_for(c, thrust);
    for (uint32_t i = 0; i < c->rotor_count; i++) out->motors[i] = u;
    out->setpoints.position_ned_m[2] = ap->z_target;
    out->setpoints.thrust_n = thrust * (float)c->rotor_count;
  }
  return LOCKSTEP_AP_OK;
}

LOCKSTEP_AP_EXPORT void lockstep_autopilot_destroy(lockstep_autopilot *ap) { free(ap); }
