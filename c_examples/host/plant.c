#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/* Mode 3, the plant alone.
 *
 *   plant SPEC INTEGRATOR STEPS
 *
 * Creates the plant of SPEC (a built-in name or a spec file) stepped by
 * INTEGRATOR, holds every motor at the command that balances its weight
 * (found by bisection on the climb rate), steps it STEPS times 1 ms, and
 * prints the nanoseconds per step, the integrator's work and the state.
 * Then walks the error paths and prints "ok". */
#include "common.h"

#include <math.h>
#include <stdint.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A plant of SPEC by INTEGRATOR at 10 m, every motor held at u. */
static lockstep_plant *airborne(const char *spec, const char *integrator, double u) {
  lockstep_plant *p = NULL;
  CHECK(lockstep_plant_new(spec, integrator, 1000, &p));
  uint32_t n = 0;
  CHECK(lockstep_plant_rotor_count(p, &n));
  double x[64];
  size_t len = 0;
  CHECK(lockstep_plant_state(p, x, 64, &len));
  x[2] = -10.0; /* NED: 10 m up */
  CHECK(lockstep_plant_set_state(p, x, len));
  double cmd[LOCKSTEP_HARNESS_MAX_ROTORS];
  for (uint32_t i = 0; i < n; i++) cmd[i] = u;
  CHECK(lockstep_plant_set_motors(p, cmd, n));
  return p;
}

/* Vertical speed after one second at command u, from 10 m. */
static double climb_rate(const char *spec, const char *integrator, double u) {
  lockstep_plant *p = airborne(spec, integrator, u);
  CHECK(lockstep_plant_step(p, 1000000));
  lockstep_truth t = {.size = sizeof t};
  CHECK(lockstep_plant_truth(p, &t));
  CHECK(lockstep_plant_free(p));
  return -t.velocity_ned_mps[2];
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s SPEC INTEGRATOR STEPS\n", argv[0]);
    return 2;
  }
  host_check_version();
  const char *spec = argv[1], *integrator = argv[2];
  long steps = atol(argv[3]);

  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 30; i++) {
    double mid = 0.5 * (lo + hi);
    if (climb_rate(spec, integrator, mid) > 0.0) hi = mid; else lo = mid;
  }
  double hover = 0.5 * (lo + hi);
  printf("hover command %.4f\n", hover);

  lockstep_plant *p = airborne(spec, integrator, hover);
  uint32_t n = 0;
  CHECK(lockstep_plant_rotor_count(p, &n));
  double x[64];
  size_t len = 0;
  CHECK(lockstep_plant_state(p, x, 64, &len));
  double cmd[LOCKSTEP_HARNESS_MAX_ROTORS];
  for (uint32_t i = 0; i < n; i++) cmd[i] = hover;
  double t0 = now_ns();
  for (long i = 0; i < steps; i++) CHECK(lockstep_plant_step(p, 1000));
  double per_step = (now_ns() - t0) / (double)steps;
  lockstep_integrator_stats stats = {.size = sizeof stats};
  CHECK(lockstep_plant_stats(p, &stats));
  lockstep_truth t = {.size = sizeof t};
  CHECK(lockstep_plant_truth(p, &t));
  printf("ns_per_step %.1f\n", per_step);
  printf("stats rhs_evals=%llu accepted=%llu rejected=%llu\n",
         (unsigned long long)stats.rhs_evals, (unsigned long long)stats.accepted_steps,
         (unsigned long long)stats.rejected_steps);
  printf("time_us %llu altitude %.6f climb %.6f\n", (unsigned long long)t.time_us,
         -t.position_ned_m[2], -t.velocity_ned_mps[2]);

  /* The error paths. */
  EXPECT(lockstep_plant_set_motors(p, cmd, n - 1), LOCKSTEP_ERR_ARGUMENT);
  cmd[0] = 1.5;
  EXPECT(lockstep_plant_set_motors(p, cmd, n), LOCKSTEP_ERR_ARGUMENT);
  cmd[0] = NAN;
  EXPECT(lockstep_plant_set_motors(p, cmd, n), LOCKSTEP_ERR_ARGUMENT);
  EXPECT(lockstep_plant_set_motors(p, NULL, n), LOCKSTEP_ERR_NULL);
  EXPECT(lockstep_plant_state(p, x, 3, &len), LOCKSTEP_ERR_BUFFER);
  printf("state needs %zu values\n", len);
  x[5] = INFINITY;
  EXPECT(lockstep_plant_set_state(p, x, len), LOCKSTEP_ERR_ARGUMENT);
  lockstep_plant *q = NULL;
  EXPECT(lockstep_plant_new("no-such-aircraft", NULL, 0, &q), LOCKSTEP_ERR_CONFIG);
  EXPECT(lockstep_plant_new(spec, "no-such-method", 0, &q), LOCKSTEP_ERR_ARGUMENT);
  CHECK(lockstep_plant_free(p));
  EXPECT(lockstep_plant_free(p), LOCKSTEP_ERR_HANDLE);
  EXPECT(lockstep_plant_step(p, 1000), LOCKSTEP_ERR_HANDLE);
  printf("ok\n");
  return 0;
}
