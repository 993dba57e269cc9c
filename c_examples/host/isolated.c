/* A whole vehicle from C with the autopilot in a child process, the host
 * found by the library itself (options.autopilot_host_path NULL).
 *
 *   isolated SCENARIO AUTOPILOT UNTIL_US
 *
 * Flies SCENARIO with AUTOPILOT isolated until UNTIL_US (or until the
 * autopilot fails: a crash in the child is a status, not the end of this
 * program), finishes the run (a failed step ended it) and prints
 *   stopped STATUS_NAME MESSAGE        (only when a step failed)
 *   report BYTES {...}
 *   ok
 * Creating the vehicle failing (no host to be found) prints
 *   create STATUS_NAME MESSAGE
 * and exits 3. */
#include "common.h"

#include <string.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s SCENARIO AUTOPILOT UNTIL_US\n", argv[0]);
    return 2;
  }
  host_check_version();
  lockstep_options options;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.isolation = LOCKSTEP_ISOLATION_PROCESS;
  options.autopilot_path = argv[2];
  options.autopilot_host_path = NULL;

  char message[2048];
  size_t n = 0;
  lockstep_sim *sim = NULL;
  lockstep_status s = lockstep_sim_new_from_file(argv[1], &options, &sim);
  if (s != LOCKSTEP_OK) {
    if (lockstep_thread_last_error(message, sizeof message, &n) != LOCKSTEP_OK) message[0] = 0;
    printf("create %s %s\n", lockstep_status_name(s), message);
    return 3;
  }
  s = lockstep_sim_run_until(sim, strtoull(argv[3], NULL, 10));
  if (s != LOCKSTEP_OK) {
    if (lockstep_sim_last_error(sim, message, sizeof message, &n) != LOCKSTEP_OK) message[0] = 0;
    printf("stopped %s %s\n", lockstep_status_name(s), message);
  } else {
    CHECK(lockstep_sim_finish(sim));
  }
  print_report(sim);
  CHECK(lockstep_sim_free(sim));
  printf("ok\n");
  return 0;
}
