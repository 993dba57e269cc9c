/* A slung load as an FMI 2.0 co-simulation FMU: a point mass hanging from
 * the vehicle's centre of mass on an elastic tether that only pulls, over
 * flat ground at down = 0 (the world origin's altitude).
 *
 * Inputs: the attachment point's position and velocity (NED), held over a
 * step and moved at that velocity within it. Outputs: the mean tether force
 * on the vehicle over the last step (so the impulse handed to the vehicle
 * is the one the load received, and momentum is conserved across the
 * coupling), the load's position and velocity, the tension at the end of
 * the step. The load integrates with RK4 at `substep_s` inside each step.
 *
 * Tension T = k * stretch + c * stretch rate while the tether is longer than
 * `length_m`, never negative. The ground pushes back with a stiff
 * spring-damper and drags horizontally while the load touches it. At its
 * first step the load is placed below the attachment point at the static
 * stretch m g / k, or on the ground under it with a slack tether if that is
 * below ground.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2.h"

#define GUID "{8f2d6c1e-3b7a-4c59-9e0d-lockstep-slung-load-1}"

enum {
  VR_MASS = 0,
  VR_LENGTH = 1,
  VR_STIFFNESS = 2,
  VR_DAMPING = 3,
  VR_GRAVITY = 4,
  VR_SUBSTEP = 5,
  VR_VEHICLE = 10, /* 10..15: north, east, down, vn, ve, vd */
  VR_FORCE = 20,   /* 20..22 */
  VR_LOAD = 23,    /* 23..28: north, east, down, vn, ve, vd */
  VR_TENSION = 29,
  VR_COUNT = 30
};

/* MODE_ERROR: a step returned fmi2Error; FMI 2.0 then allows only get
 * functions, fmi2Reset and fmi2FreeInstance, and this FMU holds its
 * importer to that. */
enum { MODE_INSTANTIATED, MODE_INITIALIZING, MODE_STEPPING, MODE_TERMINATED, MODE_ERROR };

/* Ground contact: stiff and well damped; viscous drag while touching. */
#define GROUND_K 20000.0
#define GROUND_C 300.0
#define GROUND_DRAG 30.0

typedef struct {
  fmi2CallbackFunctions cb;
  char name[128];
  double v[VR_COUNT];
  int placed;
  int mode; /* MODE_* */
  double time;
} slung_load;

static void say(slung_load *s, fmi2Status st, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (s->cb.logger)
    s->cb.logger(s->cb.componentEnvironment, s->name, st, "slung_load",
                 "%s", msg);
}

static int is_parameter(fmi2ValueReference r) { return r <= VR_SUBSTEP; }
static int is_input(fmi2ValueReference r) {
  return r >= VR_VEHICLE && r < VR_VEHICLE + 6;
}
static int is_output(fmi2ValueReference r) {
  return r >= VR_FORCE && r <= VR_TENSION;
}

/* Forces on the load (acceleration out) and the tether's pull on the
 * vehicle, for load state p, v and attachment a, va. */
static void forces(const slung_load *s, const double p[3], const double v[3],
                   const double a[3], const double va[3], double acc[3],
                   double pull[3], double *tension) {
  const double m = s->v[VR_MASS], len = s->v[VR_LENGTH];
  const double k = s->v[VR_STIFFNESS], c = s->v[VR_DAMPING];
  double d[3], r = 0.0, rate = 0.0, t = 0.0;
  for (int i = 0; i < 3; i++) {
    d[i] = p[i] - a[i];
    r += d[i] * d[i];
  }
  r = sqrt(r);
  if (r > 1e-9 && r > len) {
    for (int i = 0; i < 3; i++) rate += (v[i] - va[i]) * d[i] / r;
    t = k * (r - len) + c * rate;
    if (t < 0.0) t = 0.0;
  }
  double f[3] = {0.0, 0.0, m * s->v[VR_GRAVITY]};
  for (int i = 0; i < 3; i++) {
    double u = r > 1e-9 ? d[i] / r : 0.0;
    f[i] -= t * u;
    pull[i] = t * u;
  }
  if (p[2] > 0.0) {
    double n = GROUND_K * p[2] + GROUND_C * v[2];
    if (n > 0.0) f[2] -= n;
    f[0] -= GROUND_DRAG * v[0];
    f[1] -= GROUND_DRAG * v[1];
  }
  for (int i = 0; i < 3; i++) acc[i] = f[i] / m;
  *tension = t;
}

static void place(slung_load *s) {
  const double *a = &s->v[VR_VEHICLE];
  double below = s->v[VR_LENGTH] +
                 s->v[VR_MASS] * s->v[VR_GRAVITY] / s->v[VR_STIFFNESS];
  double down = a[2] + below;
  if (down > 0.0) down = 0.0; /* on the ground, tether slack */
  s->v[VR_LOAD + 0] = a[0];
  s->v[VR_LOAD + 1] = a[1];
  s->v[VR_LOAD + 2] = down;
  for (int i = 0; i < 3; i++)
    s->v[VR_LOAD + 3 + i] = down < 0.0 ? a[3 + i] : 0.0;
  s->placed = 1;
}

static fmi2Status step(slung_load *s, double dt) {
  if (!s->placed) place(s);
  double *p = &s->v[VR_LOAD], *v = &s->v[VR_LOAD + 3];
  const double *a0 = &s->v[VR_VEHICLE], *va = &s->v[VR_VEHICLE + 3];
  int n = (int)ceil(dt / s->v[VR_SUBSTEP] - 1e-9);
  if (n < 1) n = 1;
  double h = dt / n, impulse[3] = {0.0, 0.0, 0.0}, tension = 0.0;
  for (int k = 0; k < n; k++) {
    double tau = k * h;
    double kp[4][3], kv[4][3], pull[4][3], pp[3], vv[3], a[3];
    const double frac[4] = {0.0, 0.5, 0.5, 1.0};
    for (int j = 0; j < 4; j++) {
      for (int i = 0; i < 3; i++) {
        double w = j == 0 ? 0.0 : frac[j] * h;
        pp[i] = p[i] + (j == 0 ? 0.0 : w * kp[j - 1][i]);
        vv[i] = v[i] + (j == 0 ? 0.0 : w * kv[j - 1][i]);
        a[i] = a0[i] + va[i] * (tau + frac[j] * h);
      }
      forces(s, pp, vv, a, va, kv[j], pull[j], &tension);
      for (int i = 0; i < 3; i++) kp[j][i] = vv[i];
    }
    for (int i = 0; i < 3; i++) {
      p[i] += h / 6.0 * (kp[0][i] + 2.0 * kp[1][i] + 2.0 * kp[2][i] + kp[3][i]);
      v[i] += h / 6.0 * (kv[0][i] + 2.0 * kv[1][i] + 2.0 * kv[2][i] + kv[3][i]);
      impulse[i] += h / 6.0 *
                    (pull[0][i] + 2.0 * pull[1][i] + 2.0 * pull[2][i] + pull[3][i]);
    }
  }
  for (int i = 0; i < 3; i++) {
    s->v[VR_FORCE + i] = impulse[i] / dt;
    if (!isfinite(p[i]) || !isfinite(v[i])) {
      say(s, fmi2Error, "the load's state is no longer finite at t = %g s",
          s->time + dt);
      return fmi2Error;
    }
  }
  /* The tension at the end of the step. */
  double acc[3], pull[3], a_end[3];
  for (int i = 0; i < 3; i++) a_end[i] = a0[i] + va[i] * dt;
  forces(s, p, v, a_end, va, acc, pull, &tension);
  s->v[VR_TENSION] = tension;
  return fmi2OK;
}

static const char *check_parameters(const slung_load *s) {
  if (!(s->v[VR_MASS] > 0.0)) return "load_mass_kg must be positive";
  if (!(s->v[VR_LENGTH] > 0.0)) return "length_m must be positive";
  if (!(s->v[VR_STIFFNESS] > 0.0)) return "stiffness_n_per_m must be positive";
  if (!(s->v[VR_DAMPING] >= 0.0)) return "damping_ns_per_m must not be negative";
  if (!(s->v[VR_GRAVITY] > 0.0)) return "gravity_mps2 must be positive";
  if (!(s->v[VR_SUBSTEP] > 0.0 && s->v[VR_SUBSTEP] <= 0.01))
    return "substep_s must be in (0, 0.01]";
  return NULL;
}

/* ---- FMI 2.0 ----------------------------------------------------------- */

FMI2_EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
FMI2_EXPORT const char *fmi2GetVersion(void) { return "2.0"; }

FMI2_EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on,
                                           size_t n, const fmi2String cat[]) {
  (void)c; (void)on; (void)n; (void)cat;
  return fmi2OK;
}

FMI2_EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type,
                                          fmi2String guid,
                                          fmi2String resources,
                                          const fmi2CallbackFunctions *cb,
                                          fmi2Boolean visible,
                                          fmi2Boolean logging) {
  (void)resources; (void)visible; (void)logging;
  if (!cb || type != fmi2CoSimulation) return NULL;
  if (!guid || strcmp(guid, GUID) != 0) {
    if (cb->logger)
      cb->logger(cb->componentEnvironment, name ? name : "", fmi2Error,
                 "slung_load", "guid mismatch: %s", guid ? guid : "(null)");
    return NULL;
  }
  slung_load *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  memcpy((void *)&s->cb, cb, sizeof *cb);
  snprintf(s->name, sizeof s->name, "%s", name ? name : "");
  s->v[VR_MASS] = 0.5;
  s->v[VR_LENGTH] = 2.0;
  s->v[VR_STIFFNESS] = 2000.0;
  s->v[VR_DAMPING] = 20.0;
  s->v[VR_GRAVITY] = 9.80665;
  s->v[VR_SUBSTEP] = 0.0005;
  return s;
}

FMI2_EXPORT void fmi2FreeInstance(fmi2Component c) { free(c); }

FMI2_EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_on,
                                           fmi2Real tol, fmi2Real start,
                                           fmi2Boolean stop_on, fmi2Real stop) {
  (void)tol_on; (void)tol; (void)stop_on; (void)stop;
  slung_load *s = c;
  if (!s) return fmi2Error;
  s->time = start;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
  slung_load *s = c;
  if (!s) return fmi2Error;
  s->mode = MODE_INITIALIZING;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
  slung_load *s = c;
  if (!s) return fmi2Error;
  const char *bad = check_parameters(s);
  if (bad) {
    say(s, fmi2Error, "%s", bad);
    return fmi2Error;
  }
  s->mode = MODE_STEPPING;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2Terminate(fmi2Component c) {
  slung_load *s = c;
  if (!s) return fmi2Error;
  if (s->mode == MODE_ERROR) {
    say(s, fmi2Error, "fmi2Terminate after fmi2Error (FMI 2.0 allows only "
                      "get functions, fmi2Reset and fmi2FreeInstance)");
    return fmi2Error;
  }
  s->mode = MODE_TERMINATED;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2Reset(fmi2Component c) {
  slung_load *s = c;
  if (!s) return fmi2Error;
  fmi2CallbackFunctions cb;
  char name[128];
  memcpy(&cb, &s->cb, sizeof cb);
  memcpy(name, s->name, sizeof name);
  memset(s, 0, sizeof *s);
  memcpy((void *)&s->cb, &cb, sizeof cb);
  memcpy(s->name, name, sizeof name);
  s->v[VR_MASS] = 0.5;
  s->v[VR_LENGTH] = 2.0;
  s->v[VR_STIFFNESS] = 2000.0;
  s->v[VR_DAMPING] = 20.0;
  s->v[VR_GRAVITY] = 9.80665;
  s->v[VR_SUBSTEP] = 0.0005;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[],
                                   size_t n, fmi2Real value[]) {
  slung_load *s = c;
  if (!s || (n && (!vr || !value))) return fmi2Error;
  for (size_t i = 0; i < n; i++) {
    if (!(is_parameter(vr[i]) || is_input(vr[i]) || is_output(vr[i]))) {
      say(s, fmi2Error, "no Real variable with value reference %u", vr[i]);
      return fmi2Error;
    }
    value[i] = s->v[vr[i]];
  }
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[],
                                   size_t n, const fmi2Real value[]) {
  slung_load *s = c;
  if (!s || (n && (!vr || !value))) return fmi2Error;
  for (size_t i = 0; i < n; i++) {
    /* Parameters are fixed once initialization ends. */
    if (is_parameter(vr[i]) && s->mode <= MODE_INITIALIZING) {
      s->v[vr[i]] = value[i];
    } else if (is_input(vr[i]) && s->mode != MODE_TERMINATED && s->mode != MODE_ERROR) {
      s->v[vr[i]] = value[i];
    } else {
      say(s, fmi2Error, "value reference %u cannot be set now", vr[i]);
      return fmi2Error;
    }
  }
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[],
                                      size_t n, fmi2Integer value[]) {
  (void)vr; (void)value;
  return n == 0 && c ? fmi2OK : fmi2Error;
}
FMI2_EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[],
                                      size_t n, const fmi2Integer value[]) {
  (void)vr; (void)value;
  return n == 0 && c ? fmi2OK : fmi2Error;
}
FMI2_EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[],
                                      size_t n, fmi2Boolean value[]) {
  (void)vr; (void)value;
  return n == 0 && c ? fmi2OK : fmi2Error;
}
FMI2_EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[],
                                      size_t n, const fmi2Boolean value[]) {
  (void)vr; (void)value;
  return n == 0 && c ? fmi2OK : fmi2Error;
}
FMI2_EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[],
                                     size_t n, fmi2String value[]) {
  (void)vr; (void)value;
  return n == 0 && c ? fmi2OK : fmi2Error;
}
FMI2_EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[],
                                     size_t n, const fmi2String value[]) {
  (void)vr; (void)value;
  return n == 0 && c ? fmi2OK : fmi2Error;
}

/* No state saving, derivatives or asynchronous steps (the model description
 * says so): each refuses with fmi2Error. */
static fmi2Status unsupported(fmi2Component c, const char *what) {
  if (c) say(c, fmi2Error, "%s is not supported", what);
  return fmi2Error;
}
FMI2_EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *st) {
  (void)st;
  return unsupported(c, "fmi2GetFMUstate");
}
FMI2_EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate st) {
  (void)st;
  return unsupported(c, "fmi2SetFMUstate");
}
FMI2_EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *st) {
  (void)st;
  return unsupported(c, "fmi2FreeFMUstate");
}
FMI2_EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate st,
                                                  size_t *n) {
  (void)st; (void)n;
  return unsupported(c, "fmi2SerializedFMUstateSize");
}
FMI2_EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate st,
                                             fmi2Byte b[], size_t n) {
  (void)st; (void)b; (void)n;
  return unsupported(c, "fmi2SerializeFMUstate");
}
FMI2_EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[],
                                               size_t n, fmi2FMUstate *st) {
  (void)b; (void)n; (void)st;
  return unsupported(c, "fmi2DeSerializeFMUstate");
}
FMI2_EXPORT fmi2Status fmi2GetDirectionalDerivative(
    fmi2Component c, const fmi2ValueReference u[], size_t nu,
    const fmi2ValueReference z[], size_t nz, const fmi2Real du[], fmi2Real dz[]) {
  (void)u; (void)nu; (void)z; (void)nz; (void)du; (void)dz;
  return unsupported(c, "fmi2GetDirectionalDerivative");
}
FMI2_EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c,
                                                   const fmi2ValueReference vr[],
                                                   size_t n, const fmi2Integer order[],
                                                   const fmi2Real value[]) {
  (void)vr; (void)n; (void)order; (void)value;
  return unsupported(c, "fmi2SetRealInputDerivatives");
}
FMI2_EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c,
                                                    const fmi2ValueReference vr[],
                                                    size_t n, const fmi2Integer order[],
                                                    fmi2Real value[]) {
  (void)vr; (void)n; (void)order; (void)value;
  return unsupported(c, "fmi2GetRealOutputDerivatives");
}
FMI2_EXPORT fmi2Status fmi2CancelStep(fmi2Component c) {
  return unsupported(c, "fmi2CancelStep");
}

FMI2_EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real dt,
                                  fmi2Boolean no_set_prior) {
  (void)no_set_prior;
  slung_load *s = c;
  if (!s) return fmi2Error;
  if (s->mode != MODE_STEPPING) {
    say(s, fmi2Error, "fmi2DoStep outside step mode");
    return fmi2Error;
  }
  if (!(dt > 0.0)) {
    say(s, fmi2Error, "communication step %g s is not positive", dt);
    return fmi2Error;
  }
  fmi2Status st = step(s, dt);
  s->time = t + dt;
  if (st == fmi2Error) s->mode = MODE_ERROR;
  return st;
}

FMI2_EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k,
                                     fmi2Status *v) {
  (void)k; (void)v;
  return unsupported(c, "fmi2GetStatus");
}
FMI2_EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k,
                                         fmi2Real *v) {
  slung_load *s = c;
  if (s && k == fmi2LastSuccessfulTime && v) {
    *v = s->time;
    return fmi2OK;
  }
  return unsupported(c, "fmi2GetRealStatus");
}
FMI2_EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k,
                                            fmi2Integer *v) {
  (void)k; (void)v;
  return unsupported(c, "fmi2GetIntegerStatus");
}
FMI2_EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k,
                                            fmi2Boolean *v) {
  (void)k; (void)v;
  return unsupported(c, "fmi2GetBooleanStatus");
}
FMI2_EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k,
                                           fmi2String *v) {
  (void)k; (void)v;
  return unsupported(c, "fmi2GetStringStatus");
}
