/* Mode 1, a whole vehicle from C.
 *
 *   sim SCENARIO AUTOPILOT [LOG]
 *
 * Flies SCENARIO with the autopilot library AUTOPILOT to its end (writing
 * the CSV log to LOG if given), printing the true state every second as
 *   state T_US X Y Z VX VY VZ QW QX QY QZ P Q R
 * (each double with 17 significant digits: exactly), then the last
 * actuator outputs, battery and estimate, then the run's verdict
 *   verdict passed=P outcome=O class=C exit=E crashes=N checks=K failed=F
 * and its report (the JSON `lockstep fly --json` prints) as
 *   report BYTES {...}
 * then walks the error paths (a wrong struct size, NULL, an unknown
 * command, a verdict before the end, stepping after the end, a double
 * free, a stale and a never-created handle) and prints "ok". The exit
 * status is the verdict's, as `lockstep fly` gives it. */
#include "common.h"

#include <stdint.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SCENARIO AUTOPILOT [LOG]\n", argv[0]);
    return 2;
  }
  host_check_version();
  printf("liblockstep %s, ABI %" PRIu32 "\n", lockstep_version(), lockstep_harness_abi_version());

  lockstep_options options;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.isolation = LOCKSTEP_ISOLATION_IN_PROCESS;
  options.autopilot_path = argv[2];
  options.log_path = argc > 3 ? argv[3] : NULL;

  lockstep_sim *sim = NULL;
  CHECK(lockstep_sim_new_from_file(argv[1], &options, &sim));
  uint64_t end_us = 0;
  CHECK(lockstep_sim_end_us(sim, &end_us));
  uint32_t rotors = 0;
  CHECK(lockstep_sim_rotor_count(sim, &rotors));

  for (uint64_t t = 0; t <= end_us; t += 1000000) {
    CHECK(lockstep_sim_run_until(sim, t));
    lockstep_truth truth = {.size = sizeof truth};
    CHECK(lockstep_sim_truth(sim, &truth));
    print_state(&truth);
  }
  CHECK(lockstep_sim_run_until(sim, end_us)); /* a duration off the whole seconds */

  lockstep_actuators act = {.size = sizeof act};
  CHECK(lockstep_sim_actuators(sim, &act));
  printf("actuators t=%llu mode=%" PRIu32 " armed=%" PRIu32 " mission_current=%" PRId32
         " finished=%" PRIu32 " motors",
         (unsigned long long)act.time_us, act.mode, act.armed, act.mission_current,
         act.mission_finished);
  for (uint32_t i = 0; i < act.motor_count; i++) printf(" %.4f", act.motors[i]);
  printf("\n");
  lockstep_battery_state battery = {.size = sizeof battery};
  CHECK(lockstep_sim_battery(sim, 0, &battery));
  printf("battery %.3f V %.3f A remaining %.4f\n", battery.voltage_v, battery.current_a,
         battery.remaining);
  lockstep_estimate est = {.size = sizeof est};
  CHECK(lockstep_sim_estimate(sim, &est));
  printf("estimate t=%llu position %.3f %.3f %.3f\n", (unsigned long long)est.timestamp_us,
         est.position_ned_m[0], est.position_ned_m[1], est.position_ned_m[2]);
  /* The verdict is the end's: not before it. */
  lockstep_verdict verdict = {.size = sizeof verdict};
  EXPECT(lockstep_sim_verdict(sim, &verdict), LOCKSTEP_ERR_NOT_ENDED);
  CHECK(lockstep_sim_finish(sim));
  CHECK(lockstep_sim_verdict(sim, &verdict));
  printf("verdict passed=%" PRIu32 " outcome=%" PRIu32 " class=%" PRIu32 " exit=%" PRIu32
         " crashes=%" PRIu32 " checks=%" PRIu32 " failed=%" PRIu32 " simulated_us=%llu\n",
         verdict.passed, verdict.outcome, verdict.error_class, verdict.exit_status,
         verdict.crashes, verdict.checks, verdict.checks_failed,
         (unsigned long long)verdict.simulated_us);
  /* The report: ask its length, then read it. */
  print_report(sim);
  int status = (int)verdict.exit_status;

  /* The error paths: each a status, none undefined behaviour. */
  uint64_t done = 0;
  EXPECT(lockstep_sim_step(sim, 1, &done), LOCKSTEP_ERR_ENDED);
  lockstep_truth old = {.size = 16};
  EXPECT(lockstep_sim_truth(sim, &old), LOCKSTEP_ERR_STRUCT_SIZE);
  EXPECT(lockstep_sim_truth(sim, NULL), LOCKSTEP_ERR_NULL);
  EXPECT(lockstep_sim_command(sim, 99), LOCKSTEP_ERR_ARGUMENT);
  EXPECT(lockstep_sim_battery(sim, 99, &battery), LOCKSTEP_ERR_ARGUMENT);
  char small[4];
  size_t need = 0;
  EXPECT(lockstep_sim_last_error(sim, small, sizeof small, &need), LOCKSTEP_ERR_BUFFER);
  printf("last error needs %zu bytes\n", need + 1);
  CHECK(lockstep_sim_free(sim));
  EXPECT(lockstep_sim_free(sim), LOCKSTEP_ERR_HANDLE);
  EXPECT(lockstep_sim_step(sim, 1, &done), LOCKSTEP_ERR_HANDLE);
  EXPECT(lockstep_sim_free(NULL), LOCKSTEP_ERR_NULL);
  EXPECT(lockstep_sim_step((lockstep_sim *)(uintptr_t)0x1234, 1, &done), LOCKSTEP_ERR_HANDLE);
  lockstep_options bad = options;
  bad.size = 8;
  EXPECT(lockstep_sim_new_from_file(argv[1], &bad, &sim), LOCKSTEP_ERR_STRUCT_SIZE);
  EXPECT(lockstep_sim_new_from_file("no/such/scenario.toml", &options, &sim),
         LOCKSTEP_ERR_CONFIG);
  printf("ok\n");
  return status;
}
