/* A minimal autopilot that the harness must refuse or survive, one way per
 * build.
 *
 * build.rs compiles this file once per case: with one of the BROKEN_*
 * defines below, or against a deliberately altered copy of
 * include/lockstep/autopilot.h (other ABI version, a sensor frame of another
 * size, two fields swapped, a field of another type). Faults in step()
 * strike at BROKEN_AT_US (5 s) so that a run has a log before them. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lockstep/autopilot.h"

#define BROKEN_AT_US 5000000u

#ifdef BROKEN_STEP_SEGV_MIGRATES
/* A vehicle that can migrate (an 8-byte state) and crashes at 5 s: a
 * fleet's lookahead steps past the crash and must redo it. */
#define BROKEN_STEP_SEGV 1
#define BROKEN_MIGRATES 1
#endif

/* A write through a NULL pointer the compiler cannot see through. */
static volatile int *volatile broken_null;
#define BROKEN_FAULT() (*broken_null = 1)

#if defined(BROKEN_TABLE_BAD_POINTER) || defined(BROKEN_TABLE_COUNT) || defined(BROKEN_TABLE_DUPLICATE) || \
    defined(BROKEN_TABLE_GARBAGE_COUNT) || defined(BROKEN_TABLE_DUPLICATE_STRUCT)
/* The real table under another name; lockstep_autopilot_layout below
 * returns a damaged one. */
#define lockstep_autopilot_layout lockstep_broken_real_layout
#define BROKEN_TABLE 1
#endif

LOCKSTEP_AUTOPILOT_DEFINE_LAYOUT()

#ifdef BROKEN_TABLE
#undef lockstep_autopilot_layout
LOCKSTEP_AP_EXPORT const lockstep_layout_table *lockstep_autopilot_layout(void) {
  static lockstep_layout_table broken_table;
  const lockstep_layout_table *real = lockstep_broken_real_layout();
  broken_table = *real;
#if defined(BROKEN_TABLE_BAD_POINTER)
  /* A pointer into nothing. */
  broken_table.structs = (const lockstep_layout_struct *)(uintptr_t)0x10;
#elif defined(BROKEN_TABLE_COUNT)
  /* Far more structs than the array holds. */
  broken_table.struct_count = 100000;
#elif defined(BROKEN_TABLE_GARBAGE_COUNT)
  /* A few more structs than the array holds: whatever follows it is read. */
  broken_table.struct_count = real->struct_count + 3;
#elif defined(BROKEN_TABLE_DUPLICATE)
  /* lockstep_baro lists pressure_pa twice; the second copy is wrong. */
  static lockstep_layout_struct broken_structs[64];
  static lockstep_layout_field broken_fields[256];
  memcpy(broken_structs, real->structs, real->struct_count * sizeof(lockstep_layout_struct));
  for (uint32_t i = 0; i < real->struct_count; i++) {
    if (strcmp(broken_structs[i].name, "lockstep_baro") != 0) continue;
    uint32_t n = broken_structs[i].field_count;
    memcpy(broken_fields, broken_structs[i].fields, n * sizeof(lockstep_layout_field));
    broken_fields[n] = broken_fields[1];
    broken_fields[n].offset += 4;
    broken_structs[i].fields = broken_fields;
    broken_structs[i].field_count = n + 1;
  }
  broken_table.structs = broken_structs;
#elif defined(BROKEN_TABLE_DUPLICATE_STRUCT)
  /* The last struct listed a second time. */
  static lockstep_layout_struct broken_structs[64];
  memcpy(broken_structs, real->structs, real->struct_count * sizeof(lockstep_layout_struct));
  broken_structs[real->struct_count] = broken_structs[real->struct_count - 1];
  broken_table.structs = broken_structs;
  broken_table.struct_count = real->struct_count + 1;
#endif
  return &broken_table;
}
#endif

#ifdef BROKEN_CTOR_SEGV
__attribute__((constructor)) static void broken_ctor(void) { BROKEN_FAULT(); }
#endif
#ifdef BROKEN_CTOR_EXIT0
__attribute__((constructor)) static void broken_ctor(void) { _exit(0); }
#endif
#ifdef BROKEN_CTOR_HANG
__attribute__((constructor)) static void broken_ctor(void) {
  for (volatile int spin = 1; spin;) {
  }
}
#endif
#ifdef BROKEN_LAZY_UNDEFINED
/* Defined nowhere: a lazily bound library would fail only when step calls it. */
extern void lockstep_broken_no_such_function(void);
#endif
#ifdef BROKEN_STACK_OVERFLOW
static volatile int broken_depth_limit = 0x7fffffff;
static int broken_recurse(volatile char *prev, int depth) {
  volatile char frame[4096];
  if (depth > broken_depth_limit) return 0;
  frame[0] = (char)depth;
  frame[4095] = prev ? prev[0] : 0;
  return broken_recurse(frame, depth + 1) + frame[4095];
}
#endif

struct lockstep_autopilot {
  char err[128];
};

LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_abi_version(void) { return LOCKSTEP_AUTOPILOT_ABI_VERSION; }
#ifdef BROKEN_UNKNOWN_CAPS
LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_capabilities(void) { return 0x80000000u | LOCKSTEP_AP_CAP_REENTRANT; }
#else
LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_capabilities(void) { return LOCKSTEP_AP_CAP_REENTRANT; }
#endif
LOCKSTEP_AP_EXPORT const char *lockstep_autopilot_name(void) { return "lockstep-broken-fixture " BROKEN_CASE; }

LOCKSTEP_AP_EXPORT lockstep_autopilot *lockstep_autopilot_create(const lockstep_autopilot_config *config, char *err,
                                                                 size_t err_len) {
  (void)config;
#ifdef BROKEN_CREATE_SEGV
  BROKEN_FAULT();
#endif
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
#ifndef BROKEN_SOMETIMES_SEGV
  (void)sensors;
#endif
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
#ifdef BROKEN_PRINTS
  /* Chatter on stdout, buffered by stdio (a pipe is fully buffered): it
   * reaches the pipe at exit, after anything the harness printed. */
  if (time_us % 1000000u == 0u) printf("autopilot says t = %llu\n", (unsigned long long)time_us);
  if (time_us == 2000000u) printf("a line without its end ");
#endif
#ifdef BROKEN_SOMETIMES_SEGV
  /* Crashes in about half of the runs: those whose gyro noise at 5 s is
   * positive about x (a Monte Carlo batch's mixed fate). */
  if (time_us == BROKEN_AT_US && sensors && sensors->imu.gyro_radps[0] > 0.0f) BROKEN_FAULT();
#endif
  if (time_us >= BROKEN_AT_US) {
#ifdef BROKEN_STEP_SEGV
    BROKEN_FAULT();
#endif
#ifdef BROKEN_STEP_ABORT
    abort();
#endif
#ifdef BROKEN_STACK_OVERFLOW
    out->motors[0] = (float)broken_recurse(NULL, 0);
#endif
#ifdef BROKEN_STEP_EXIT0
    exit(0);
#endif
#ifdef BROKEN_STEP__EXIT
    _exit(3);
#endif
#ifdef BROKEN_STEP_HANG
    for (volatile int spin = 1; spin;) {
    }
#endif
#ifdef BROKEN_LAZY_UNDEFINED
    lockstep_broken_no_such_function();
#endif
#ifdef BROKEN_WRITE_PAST
    ((volatile char *)(out + 1))[40] = 1;
#endif
#ifdef BROKEN_WRITE_SENSORS
    ((lockstep_sensor_frame *)sensors)->estimate.position_ned_m[0] = NAN;
#endif
#ifdef BROKEN_MISSION_CURRENT
    out->mission_current = 1000;
#endif
#ifdef BROKEN_MISSION_COUNT
    out->mission_count = 3;
#endif
#ifdef BROKEN_EXTRA_MOTOR
    out->motors[LOCKSTEP_MAX_MOTORS - 1] = 0.25f;
#endif
#ifdef BROKEN_SERVO
    out->servos[0] = 0.5f;
#endif
  }
#ifdef BROKEN_OUT_OF_RANGE
  out->motors[1] = 1.5f;
#endif
  return LOCKSTEP_AP_OK;
}
#endif

LOCKSTEP_AP_EXPORT void lockstep_autopilot_destroy(lockstep_autopilot *ap) {
#ifdef BROKEN_DESTROY_SEGV
  if (ap) BROKEN_FAULT();
#endif
  free(ap);
}

LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_last_error(const lockstep_autopilot *ap, char *buf, size_t buf_len) {
  if (!ap || !buf || !buf_len) return LOCKSTEP_AP_ERR_NULL;
  snprintf(buf, buf_len, "%s", ap->err);
  return LOCKSTEP_AP_OK;
}

/* Migration: only snapshot_size (a partial set the loader refuses), a size
 * past the bound, or a crash in snapshot. */
#ifdef BROKEN_PARTIAL_ENUMERATION
/* param_count without param_info. */
LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_param_count(lockstep_autopilot *ap) {
  (void)ap;
  return 1u;
}
#endif

#if defined(BROKEN_PARTIAL_MIGRATION) || defined(BROKEN_SNAPSHOT_OVERSIZE) || defined(BROKEN_SNAPSHOT_SEGV) || \
    defined(BROKEN_MIGRATES)
LOCKSTEP_AP_EXPORT size_t lockstep_autopilot_snapshot_size(const lockstep_autopilot *ap) {
  (void)ap;
#ifdef BROKEN_SNAPSHOT_OVERSIZE
  return (size_t)LOCKSTEP_AUTOPILOT_MAX_SNAPSHOT + 1u;
#else
  return 8u;
#endif
}
#endif
#if defined(BROKEN_SNAPSHOT_OVERSIZE) || defined(BROKEN_SNAPSHOT_SEGV) || defined(BROKEN_MIGRATES)
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_snapshot(const lockstep_autopilot *ap, uint8_t *buf, size_t buf_len,
                                                       size_t *out_len) {
  (void)ap;
#ifdef BROKEN_SNAPSHOT_SEGV
  BROKEN_FAULT();
#endif
  if (buf_len < 8u) return LOCKSTEP_AP_ERR_INVALID;
  memset(buf, 0, 8u);
  *out_len = 8u;
  return LOCKSTEP_AP_OK;
}
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_restore(lockstep_autopilot *ap, const uint8_t *buf, size_t len) {
  (void)ap;
  (void)buf;
  return len == 8u ? LOCKSTEP_AP_OK : LOCKSTEP_AP_ERR_INVALID;
}
#endif
