/* Co-simulation from C: a system file whose external participant is this
 * program's callback.
 *
 *   cosim SYSTEM AUTOPILOT
 *
 * Runs examples/cosim/c_wind.toml (or a system like it: an external
 * participant `gust` with output wind_ned_mps[3] and input
 * position_ned_m[3], connected to a vehicle `iris`). The callback blows
 * 3 m/s north above 5 m and checks its arguments every call; at the end
 * the host checks that it was called once per step with consecutive
 * intervals, that the vehicle flies in the wind it was given, and walks
 * the error paths (binding a participant that is not external, an unknown
 * one, one twice, reading an unknown output, too small a buffer, stepping
 * past the end). Prints "ok" last. */
#include "common.h"

#include <math.h>
#include <string.h>

typedef struct {
  uint64_t calls;
  uint64_t next_t_us;
  uint64_t dt_us;
  int bad;
} gust_state;

static int32_t gust_step(void *user, uint64_t t_us, uint64_t dt_us, const double *inputs,
                         size_t n_inputs, double *outputs, size_t n_outputs) {
  gust_state *g = (gust_state *)user;
  if (n_inputs != 3 || n_outputs != 3 || t_us != g->next_t_us || dt_us == 0) g->bad = 1;
  g->calls++;
  g->next_t_us = t_us + dt_us;
  g->dt_us = dt_us;
  double altitude = -inputs[2];
  outputs[0] = altitude > 5.0 ? 3.0 : 0.0;
  outputs[1] = 0.0;
  outputs[2] = 0.0;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SYSTEM AUTOPILOT\n", argv[0]);
    return 2;
  }
  host_check_version();
  lockstep_options options;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.isolation = LOCKSTEP_ISOLATION_IN_PROCESS;
  options.autopilot_path = argv[2];

  lockstep_cosim *cs = NULL;
  CHECK(lockstep_cosim_new_from_file(argv[1], &options, &cs));
  gust_state g;
  memset(&g, 0, sizeof g);
  lockstep_cosim_participant p;
  memset(&p, 0, sizeof p);
  p.size = sizeof p;
  p.user = &g;
  p.step = gust_step;
  EXPECT(lockstep_cosim_step(cs, NULL), LOCKSTEP_ERR_CONFIG); /* gust not bound */
  EXPECT(lockstep_cosim_bind(cs, "iris", &p), LOCKSTEP_ERR_ARGUMENT);
  EXPECT(lockstep_cosim_bind(cs, "nobody", &p), LOCKSTEP_ERR_ARGUMENT);
  CHECK(lockstep_cosim_bind(cs, "gust", &p));
  EXPECT(lockstep_cosim_bind(cs, "gust", &p), LOCKSTEP_ERR_ARGUMENT);

  uint64_t t = 1;
  CHECK(lockstep_cosim_run_until(cs, 0)); /* time 0 is reached: no step */
  CHECK(lockstep_cosim_time(cs, &t));
  if (t != 0 || g.calls != 0) {
    fprintf(stderr, "run_until(0) stepped\n");
    return 1;
  }
  CHECK(lockstep_cosim_step(cs, &t));
  printf("first step to %" PRIu64 " us\n", t);
  EXPECT(lockstep_cosim_bind(cs, "gust", &p), LOCKSTEP_ERR_ARGUMENT); /* after the start */
  CHECK(lockstep_cosim_run_until(cs, 8000000));
  CHECK(lockstep_cosim_time(cs, &t));
  double pos[3], wind[3];
  size_t n = 0;
  CHECK(lockstep_cosim_output(cs, "iris.position_ned_m", pos, 3, &n));
  CHECK(lockstep_cosim_output(cs, "iris.wind_ned_mps", wind, 3, &n));
  printf("at %" PRIu64 " us: altitude %.3f m, wind %.3f %.3f %.3f m/s, %" PRIu64 " calls\n", t,
         -pos[2], wind[0], wind[1], wind[2], g.calls);
  if (g.bad || g.calls != t / g.dt_us || g.next_t_us != t) {
    fprintf(stderr, "the callback saw wrong arguments or counts\n");
    return 1;
  }
  /* Aloft the vehicle flies in exactly the wind the host gave it. */
  if (!(-pos[2] > 5.0) || wind[0] != 3.0 || wind[1] != 0.0 || wind[2] != 0.0) {
    fprintf(stderr, "the vehicle is not in the host's wind\n");
    return 1;
  }
  EXPECT(lockstep_cosim_output(cs, "iris.nothing", pos, 3, &n), LOCKSTEP_ERR_ARGUMENT);
  EXPECT(lockstep_cosim_output(cs, "iris.position_ned_m", pos, 2, &n), LOCKSTEP_ERR_BUFFER);
  if (n != 3) return 1;
  CHECK(lockstep_cosim_run_until(cs, 10000000));
  EXPECT(lockstep_cosim_step(cs, NULL), LOCKSTEP_ERR_ENDED);
  CHECK(lockstep_cosim_free(cs));
  EXPECT(lockstep_cosim_free(cs), LOCKSTEP_ERR_HANDLE);
  printf("ok\n");
  return 0;
}
