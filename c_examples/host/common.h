/* What the host examples share: failing loudly with the library's message,
   checking that a call fails with the status expected, printing states. */
#ifndef LOCKSTEP_HOST_COMMON_H
#define LOCKSTEP_HOST_COMMON_H

#include <lockstep/harness.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* Exits with the call, its status name and the library's message. */
static inline void host_fail(const char *call, lockstep_status status) {
  char message[2048];
  size_t n = 0;
  if (lockstep_thread_last_error(message, sizeof message, &n) != LOCKSTEP_OK) {
    snprintf(message, sizeof message, "(a message of %zu bytes)", n);
  }
  fprintf(stderr, "%s: %s: %s\n", call, lockstep_status_name(status), message);
  exit(1);
}

#define CHECK(call)                                                            \
  do {                                                                         \
    lockstep_status check_status_ = (call);                                    \
    if (check_status_ != LOCKSTEP_OK) host_fail(#call, check_status_);         \
  } while (0)

/* The call must fail with `want`; prints the message it gave. */
#define EXPECT(call, want)                                                     \
  do {                                                                         \
    lockstep_status expect_status_ = (call);                                   \
    if (expect_status_ != (want)) {                                            \
      fprintf(stderr, "%s: %s, expected %s\n", #call,                          \
              lockstep_status_name(expect_status_), lockstep_status_name(want)); \
      exit(1);                                                                 \
    }                                                                          \
    char expect_message_[2048];                                                \
    size_t expect_n_ = 0;                                                      \
    if (lockstep_thread_last_error(expect_message_, sizeof expect_message_,    \
                                   &expect_n_) == LOCKSTEP_OK)                 \
      printf("expected %s: %s\n", lockstep_status_name(want), expect_message_); \
  } while (0)

/* Prints the true state as one line, each double with 17 significant
   digits (exactly: the test suite compares the bits):
   state T_US X Y Z VX VY VZ QW QX QY QZ P Q R */
static inline void print_state(const lockstep_truth *t) {
  printf("state %llu", (unsigned long long)t->time_us);
  for (int i = 0; i < 3; i++) printf(" %.17g", t->position_ned_m[i]);
  for (int i = 0; i < 3; i++) printf(" %.17g", t->velocity_ned_mps[i]);
  for (int i = 0; i < 4; i++) printf(" %.17g", t->attitude_q[i]);
  for (int i = 0; i < 3; i++) printf(" %.17g", t->rates_frd_radps[i]);
  printf("\n");
}

/* Prints the report of a run that has ended as `report BYTES {...}`:
   asks its length (LOCKSTEP_ERR_BUFFER with a NULL buffer), then reads it. */
static inline void print_report(lockstep_sim *sim) {
  size_t report_len = 0;
  EXPECT(lockstep_sim_report(sim, NULL, 0, &report_len), LOCKSTEP_ERR_BUFFER);
  char *report = malloc(report_len + 1);
  if (report == NULL) exit(1);
  CHECK(lockstep_sim_report(sim, report, report_len + 1, &report_len));
  printf("report %zu %s\n", report_len, report);
  free(report);
}

/* The library this program was compiled against is the one it runs with. */
static inline void host_check_version(void) {
  if (lockstep_harness_abi_version() != LOCKSTEP_HARNESS_ABI_VERSION) {
    fprintf(stderr, "liblockstep implements ABI %" PRIu32 "; this program was built for %" PRIu32 "\n",
            lockstep_harness_abi_version(), (uint32_t)LOCKSTEP_HARNESS_ABI_VERSION);
    exit(1);
  }
}

#endif
