/*
 * lockstep/autopilot.h — the contract between the lockstep harness and an
 * autopilot shared library. This file is the hand-written source of truth:
 * the Rust mirror (abi/src/bindings.rs) is generated from it by bindgen.
 *
 * ======================================================================
 * API conventions
 * ======================================================================
 *
 * Prefix      Every exported symbol is named lockstep_autopilot_*; every type
 *             lockstep_*; every macro LOCKSTEP_*.
 *
 * Version     LOCKSTEP_AUTOPILOT_ABI_VERSION is one integer, bumped on any
 *             change of a struct layout, a field's meaning or a function
 *             signature. The harness also loads libraries of the versions
 *             listed under "Older versions" (below the function types);
 *             it refuses any other version.
 *
 * Layout      The library reports the layout of every shared struct, field by
 *             field, through lockstep_autopilot_layout(). A library defines
 *             that function by expanding LOCKSTEP_AUTOPILOT_DEFINE_LAYOUT() in
 *             exactly one translation unit: the table is then computed with
 *             offsetof/sizeof/_Alignof/_Generic from the very struct
 *             definitions the library was compiled with, so a library built
 *             against a stale header reports its stale layout and is refused.
 *
 * Time        Integer microseconds (uint64_t) everywhere. The harness calls
 *             step() with strictly increasing time_us.
 *
 * Padding     No shared struct has implicit padding: reserved fields fill
 *             every gap, so each struct's fields tile it byte for byte.
 *             Reserved fields are written as 0 and ignored when read.
 *
 * Units       SI units with the unit in the field name (_m, _mps, _radps...).
 *             World frame NED (north, east, down) relative to the world
 *             origin; body frame FRD (forward, right, down); quaternions are
 *             Hamilton (w, x, y, z) rotating body vectors into NED.
 *
 * Ownership   The harness owns every struct it passes in and every struct the
 *             library writes into; the library must not keep a pointer to
 *             any of them after the call returns. The library owns the
 *             handle returned by create() until destroy(); strings it returns
 *             (name, layout names) are static and live as long as the library
 *             stays loaded.
 *
 * Enforced    The harness checks the contract after every step: the sensor
 *             frame is a private copy (writing into it, const here, is
 *             refused), the actuator frame is followed by a guard zone
 *             (writing past it is refused), and the outputs must be in
 *             range (see lockstep_actuator_frame). By default the library
 *             runs in a child process of the harness, so a crash, exit() or
 *             hang inside it is reported, never fatal to the harness.
 *
 * NULL        Every pointer argument is checked by the library; a NULL where
 *             one is not allowed returns LOCKSTEP_AP_ERR_NULL (or NULL from
 *             create). destroy(NULL) is a no-op.
 *
 * Out-params  Written only when the call returns LOCKSTEP_AP_OK. Every buffer
 *             comes with its length.
 *
 * Status      Functions return int32_t: LOCKSTEP_AP_OK (0) or one of the
 *             stable negative LOCKSTEP_AP_ERR_* values below. A library may
 *             describe the last failure of a handle through the optional
 *             lockstep_autopilot_last_error().
 *
 * Threading   An instance is never called concurrently; it may be moved
 *             between threads between calls. Distinct instances may be driven
 *             from distinct threads only when capabilities() has
 *             LOCKSTEP_AP_CAP_REENTRANT; without it the harness creates at
 *             most one instance per process.
 *
 * Required    abi_version, layout, capabilities, create, step, destroy.
 * Optional    (probed at load) mission_upload, param_set_f32, param_get_f32,
 *             param_set_i32, param_get_i32, param_count, param_info, reset,
 *             name, last_error; snapshot_size, snapshot, restore.
 */
#ifndef LOCKSTEP_AUTOPILOT_H
#define LOCKSTEP_AUTOPILOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOCKSTEP_AUTOPILOT_ABI_VERSION 4

/* ---- Limits -------------------------------------------------------------- */
#define LOCKSTEP_MAX_ROTORS 12
#define LOCKSTEP_MAX_MOTORS 16
#define LOCKSTEP_MAX_SERVOS 8

/* ---- Status codes (stable) ----------------------------------------------- */
#define LOCKSTEP_AP_OK 0
/** A required pointer argument was NULL. */
#define LOCKSTEP_AP_ERR_NULL (-1)
/** An argument was invalid (bad size field, value out of range, bad mission). */
#define LOCKSTEP_AP_ERR_INVALID (-2)
/** step() was called with a time that does not increase. */
#define LOCKSTEP_AP_ERR_TIME (-3)
/** The autopilot failed internally (non-finite state, exhausted resource). */
#define LOCKSTEP_AP_ERR_INTERNAL (-4)
/** The request is not supported by this library. */
#define LOCKSTEP_AP_ERR_UNSUPPORTED (-5)
/** A parameter name is unknown. */
#define LOCKSTEP_AP_ERR_NOT_FOUND (-6)
/** A parameter exists but has the other type (float vs int). */
#define LOCKSTEP_AP_ERR_TYPE (-7)

/* ---- Capabilities -------------------------------------------------------- */
/** Several instances may live in one process, each fully independent. */
#define LOCKSTEP_AP_CAP_REENTRANT 0x1u

/* ---- Freshness bits of lockstep_sensor_frame.fresh_mask ------------------ */
/* A bit is set when its block holds a sample taken since the previous step. */
#define LOCKSTEP_FRESH_IMU 0x01u
#define LOCKSTEP_FRESH_MAG 0x02u
#define LOCKSTEP_FRESH_BARO 0x04u
#define LOCKSTEP_FRESH_GPS 0x08u
#define LOCKSTEP_FRESH_ESTIMATE 0x10u
#define LOCKSTEP_FRESH_BATTERY 0x20u
#define LOCKSTEP_FRESH_COMMANDS 0x40u

/* ---- Flight modes (lockstep_actuator_frame.mode, command mode_request) --- */
#define LOCKSTEP_MODE_NONE 0u     /* as a request: no change */
#define LOCKSTEP_MODE_DISARMED 1u /* motors stopped */
#define LOCKSTEP_MODE_IDLE 2u     /* armed on the ground, motors at idle */
#define LOCKSTEP_MODE_TAKEOFF 3u  /* vertical climb to the takeoff altitude */
#define LOCKSTEP_MODE_MISSION 4u  /* flying the uploaded mission */
#define LOCKSTEP_MODE_HOLD 5u     /* hold position and heading */
#define LOCKSTEP_MODE_RTL 6u      /* climb, return above home, land */
#define LOCKSTEP_MODE_LAND 7u     /* descend and land where it is */
#define LOCKSTEP_MODE_LANDED 8u   /* on the ground after landing; auto-disarms */
#define LOCKSTEP_MODE_OFFBOARD 9u /* flying the setpoint the commands carry */
#define LOCKSTEP_MODE_STACK 10u   /* armed under a flight stack (PX4, ArduPilot) whose own mode its
                                    * simulator link does not carry */

/* ---- Setpoints (command setpoint_mask) -----------------------------------
 * An operator's (or a learning agent's) setpoint, as MAVLink's
 * SET_POSITION_TARGET_LOCAL_NED and SET_ATTITUDE_TARGET give them: a
 * position (m, NED from the world origin), a velocity (m/s, NED), or body
 * rates (rad/s, FRD) with a collective thrust, in `setpoint`; a heading
 * with a position or a velocity. A command with one of the three puts a
 * flying (or armed, idle) vehicle in LOCKSTEP_MODE_OFFBOARD, which flies
 * the latest setpoint until the next one, another mode request, or a
 * failsafe. More than one of the three, none, or a heading with rates, is
 * refused. */
#define LOCKSTEP_SETPOINT_POSITION 0x01u
#define LOCKSTEP_SETPOINT_VELOCITY 0x02u
#define LOCKSTEP_SETPOINT_YAW 0x04u
#define LOCKSTEP_SETPOINT_RATES 0x08u

/* ---- Arm requests (command arm_request) ---------------------------------- */
#define LOCKSTEP_ARM_NONE 0u
#define LOCKSTEP_ARM_ARM 1u
#define LOCKSTEP_ARM_DISARM 2u

/* ---- GPS fix types ------------------------------------------------------- */
#define LOCKSTEP_GPS_FIX_NONE 0u
#define LOCKSTEP_GPS_FIX_2D 2u
#define LOCKSTEP_GPS_FIX_3D 3u

/* ---- Battery warnings ---------------------------------------------------- */
#define LOCKSTEP_BATTERY_OK 0u
#define LOCKSTEP_BATTERY_LOW 1u
#define LOCKSTEP_BATTERY_CRITICAL 2u
#define LOCKSTEP_BATTERY_EMERGENCY 3u

/* ---- MAVLink mission commands and frames understood by the contract -----
 * Items are uploaded without QGroundControl's home line: item 0 is the first
 * item after it. A parameter that is NaN is unset (as in MAVLink): use the
 * default. DO_JUMP's param1 is the 0-based index of the target item in the
 * uploaded mission (the harness converts the file's sequence number or
 * doJumpId), param2 the number of jumps (-1: forever). DO_CHANGE_SPEED:
 * param1 the speed type (0 airspeed, 1 ground speed: horizontal; 2 climb,
 * 3 descent), param2 the speed in m/s (-1 or NaN: no change), for the rest
 * of the mission. */
#define LOCKSTEP_MAV_CMD_NAV_WAYPOINT 16u
#define LOCKSTEP_MAV_CMD_NAV_LOITER_UNLIM 17u
#define LOCKSTEP_MAV_CMD_NAV_LOITER_TIME 19u
#define LOCKSTEP_MAV_CMD_NAV_RETURN_TO_LAUNCH 20u
#define LOCKSTEP_MAV_CMD_NAV_LAND 21u
#define LOCKSTEP_MAV_CMD_NAV_TAKEOFF 22u
#define LOCKSTEP_MAV_CMD_DO_JUMP 177u
#define LOCKSTEP_MAV_CMD_DO_CHANGE_SPEED 178u
#define LOCKSTEP_MAV_FRAME_GLOBAL 0u              /* altitude above mean sea level */
#define LOCKSTEP_MAV_FRAME_GLOBAL_RELATIVE_ALT 3u /* altitude above home */

/* ======================================================================== */
/* Shared structs                                                            */
/* ======================================================================== */

/** One rotor of the airframe, as the autopilot's mixer needs it. */
typedef struct lockstep_rotor_geometry {
  /** Rotor hub position relative to the centre of mass, body FRD. */
  float position_m[3];
  /** Unit direction of the thrust force in body FRD ((0,0,-1) for a flat rotor). */
  float thrust_axis[3];
  /** +1: spins counter-clockwise seen from the thrust side, so its reaction
   *  torque on the airframe is -torque_coeff_m * thrust * thrust_axis;
   *  -1: clockwise, the opposite torque. */
  int32_t spin_dir;
  /** Reaction torque per unit thrust (N*m per N). */
  float torque_coeff_m;
  /** Thrust at full command (1.0), N. */
  float max_thrust_n;
} lockstep_rotor_geometry;

/** Everything create() gets. struct_size must equal sizeof(lockstep_autopilot_config). */
typedef struct lockstep_autopilot_config {
  uint32_t struct_size;
  /** Rotors in use, 1..LOCKSTEP_MAX_ROTORS; motor output i drives rotors[i]. */
  uint32_t rotor_count;
  lockstep_rotor_geometry rotors[LOCKSTEP_MAX_ROTORS];
  /** Thrust curve: thrust/max_thrust = f*u^2 + (1-f)*u for command u in [0,1]. */
  float thrust_model_factor;
  float mass_kg;
  /** Principal moments of inertia (body FRD diagonal), kg*m^2. */
  float inertia_diag_kgm2[3];
  float gravity_mps2;
  /** Nominal step period of the autopilot (its rate is 1e6 / period). */
  uint32_t autopilot_period_us;
  /** Small-signal time constant of the thrust response to a motor command
   *  at hover (rotor speed and any ESC lag), seconds; 0 when unknown. */
  float rotor_time_constant_s;
  /** World origin: NED position (0,0,0) is here, on the WGS-84 ellipsoid. */
  double origin_lat_deg;
  double origin_lon_deg;
  /** Origin altitude above mean sea level. */
  double origin_alt_m;
} lockstep_autopilot_config;

/** Inertial measurement, body FRD. */
typedef struct lockstep_imu {
  uint64_t timestamp_us;
  /** Specific force (acceleration minus gravity), so (0,0,-g) at rest level. */
  float accel_mps2[3];
  float gyro_radps[3];
  float temperature_c;
  uint32_t reserved0;
} lockstep_imu;

typedef struct lockstep_mag {
  uint64_t timestamp_us;
  /** Magnetic field in body FRD. */
  float field_gauss[3];
  uint32_t reserved0;
} lockstep_mag;

typedef struct lockstep_baro {
  uint64_t timestamp_us;
  float pressure_pa;
  float temperature_c;
} lockstep_baro;

typedef struct lockstep_gps {
  uint64_t timestamp_us;
  double lat_deg;
  double lon_deg;
  /** Altitude above mean sea level. */
  float alt_m;
  float vel_ned_mps[3];
  /** LOCKSTEP_GPS_FIX_* */
  uint32_t fix_type;
  uint32_t satellites;
  /** Horizontal and vertical position accuracy (1 sigma). */
  float eph_m;
  float epv_m;
  float speed_accuracy_mps;
  uint32_t reserved0;
} lockstep_gps;

/** Estimator output: the state the autopilot controls on. */
typedef struct lockstep_estimate {
  uint64_t timestamp_us;
  float position_ned_m[3];
  float velocity_ned_mps[3];
  /** Body to NED, (w, x, y, z). */
  float attitude_q[4];
  float rates_frd_radps[3];
  uint32_t reserved0;
} lockstep_estimate;

typedef struct lockstep_battery {
  uint64_t timestamp_us;
  float voltage_v;
  float current_a;
  /** State of charge, 0..1. */
  float remaining;
  /** LOCKSTEP_BATTERY_* */
  uint32_t warning;
  /** 1 when the battery is connected to the bus. */
  uint32_t connected;
  uint32_t reserved0;
} lockstep_battery;

/** Operator commands; acted on only when LOCKSTEP_FRESH_COMMANDS is set. */
typedef struct lockstep_commands {
  uint64_t timestamp_us;
  /** LOCKSTEP_ARM_* */
  uint32_t arm_request;
  /** LOCKSTEP_MODE_* (NONE for no change) */
  uint32_t mode_request;
  /** 1 to start (or restart) the uploaded mission. */
  uint32_t mission_start;
  /** LOCKSTEP_SETPOINT_* bits: what the setpoint fields hold (0: no
   *  setpoint). */
  uint32_t setpoint_mask;
  /** POSITION: m, NED; VELOCITY: m/s, NED; RATES: body rates, rad/s, FRD. */
  float setpoint[3];
  /** YAW: heading, rad from north. */
  float setpoint_yaw_rad;
  /** RATES: collective thrust, a fraction (0 to 1) of the rotors' total
   *  thrust at full command. */
  float setpoint_thrust;
  /** With mode_request TAKEOFF: the height to climb to, m above home; 0:
   *  the library's default takeoff height (PX4's MIS_TAKEOFF_ALT). Since
   *  ABI 4 (a reserved field, always 0, before). */
  float takeoff_alt_m;
} lockstep_commands;

/** Everything the autopilot observes at one step. */
typedef struct lockstep_sensor_frame {
  /** The lockstep time of this step (equal to step()'s time_us). */
  uint64_t time_us;
  /** LOCKSTEP_FRESH_* bits: which blocks hold new samples. */
  uint32_t fresh_mask;
  /** 1 when the vehicle rests on the ground (ground-contact sensor). */
  uint32_t landed;
  lockstep_imu imu;
  lockstep_mag mag;
  lockstep_baro baro;
  lockstep_gps gps;
  lockstep_estimate estimate;
  lockstep_battery battery;
  lockstep_commands commands;
} lockstep_sensor_frame;

/** The controller setpoints of one step, for logging. */
typedef struct lockstep_setpoints {
  float position_ned_m[3];
  float velocity_ned_mps[3];
  float accel_ned_mps2[3];
  float yaw_rad;
  /** Body to NED, (w, x, y, z). */
  float attitude_q[4];
  float rates_frd_radps[3];
  /** Body torque requested from the mixer, N*m. */
  float torque_frd_nm[3];
  /** Collective thrust requested from the mixer (along -z body), N. */
  float thrust_n;
} lockstep_setpoints;

/** Everything the autopilot writes at one step. */
typedef struct lockstep_actuator_frame {
  /** Motor commands in [0, 1]; index i drives rotor i. Entries at and
   *  beyond config.rotor_count must be 0 (the harness refuses the step). */
  float motors[LOCKSTEP_MAX_MOTORS];
  /** Servo commands in [-1, 1]; a multirotor has none, so all must be 0. */
  float servos[LOCKSTEP_MAX_SERVOS];
  /** 1 when armed. */
  uint32_t armed;
  /** LOCKSTEP_MODE_* */
  uint32_t mode;
  /** Index of the mission item being flown, -1 when none; otherwise below
   *  mission_count. */
  int32_t mission_current;
  /** Items in the uploaded mission (0 before any upload). */
  uint32_t mission_count;
  /** 1 once the last mission item has been completed. */
  uint32_t mission_finished;
  uint32_t reserved0;
  lockstep_setpoints setpoints;
} lockstep_actuator_frame;

/** One mission item, as in a MAVLink MISSION_ITEM_INT / QGC WPL 110 line. */
typedef struct lockstep_mission_item {
  /** LOCKSTEP_MAV_CMD_* */
  uint32_t command;
  /** LOCKSTEP_MAV_FRAME_* */
  uint32_t frame;
  float param1;
  float param2;
  float param3;
  float param4;
  double lat_deg;
  double lon_deg;
  float alt_m;
  uint32_t autocontinue;
} lockstep_mission_item;

/* ======================================================================== */
/* Layout table                                                              */
/* ======================================================================== */

/* Type codes of lockstep_layout_field.type_code. */
#define LOCKSTEP_TYPE_U8 1u
#define LOCKSTEP_TYPE_I8 2u
#define LOCKSTEP_TYPE_U16 3u
#define LOCKSTEP_TYPE_I16 4u
#define LOCKSTEP_TYPE_U32 5u
#define LOCKSTEP_TYPE_I32 6u
#define LOCKSTEP_TYPE_U64 7u
#define LOCKSTEP_TYPE_I64 8u
#define LOCKSTEP_TYPE_F32 9u
#define LOCKSTEP_TYPE_F64 10u
/** A nested struct; type_name names it and it has its own table entry. */
#define LOCKSTEP_TYPE_STRUCT 11u

typedef struct lockstep_layout_field {
  const char *name;
  /** For LOCKSTEP_TYPE_STRUCT, the struct's name; NULL otherwise. */
  const char *type_name;
  uint32_t type_code;
  uint32_t offset;
  /** Number of elements (1 for a scalar, N for an array). */
  uint32_t count;
  /** Size of one element in bytes. */
  uint32_t elem_size;
} lockstep_layout_field;

typedef struct lockstep_layout_struct {
  const char *name;
  uint32_t size;
  uint32_t align;
  uint32_t field_count;
  uint32_t reserved0;
  const lockstep_layout_field *fields;
} lockstep_layout_struct;

typedef struct lockstep_layout_table {
  uint32_t abi_version;
  uint32_t struct_count;
  const lockstep_layout_struct *structs;
} lockstep_layout_table;

/* ======================================================================== */
/* Functions                                                                 */
/* ======================================================================== */

#if defined(_WIN32)
#define LOCKSTEP_AP_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define LOCKSTEP_AP_EXPORT __attribute__((visibility("default")))
#else
#define LOCKSTEP_AP_EXPORT
#endif

/** Opaque autopilot instance. */
typedef struct lockstep_autopilot lockstep_autopilot;

/* -- Required -- */

/** Returns LOCKSTEP_AUTOPILOT_ABI_VERSION as the library was compiled. */
LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_abi_version(void);
/** Returns the static layout table (define it with LOCKSTEP_AUTOPILOT_DEFINE_LAYOUT()). */
LOCKSTEP_AP_EXPORT const lockstep_layout_table *lockstep_autopilot_layout(void);
/** Returns LOCKSTEP_AP_CAP_* bits. */
LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_capabilities(void);
/** Creates an instance, or returns NULL and writes a NUL-terminated message
 *  of at most err_len bytes (err may be NULL when err_len is 0). */
LOCKSTEP_AP_EXPORT lockstep_autopilot *lockstep_autopilot_create(const lockstep_autopilot_config *config,
                                                                 char *err, size_t err_len);
/** Runs one control step at time_us; writes the whole actuator frame on success. */
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_step(lockstep_autopilot *ap, uint64_t time_us,
                                                   const lockstep_sensor_frame *sensors,
                                                   lockstep_actuator_frame *actuators);
/** Destroys an instance; NULL is a no-op. */
LOCKSTEP_AP_EXPORT void lockstep_autopilot_destroy(lockstep_autopilot *ap);

/* -- Optional -- */

/** Replaces the mission with count items (count 0 clears it). */
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_mission_upload(lockstep_autopilot *ap,
                                                             const lockstep_mission_item *items,
                                                             size_t count);
/** Parameters by NUL-terminated name. */
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_set_f32(lockstep_autopilot *ap, const char *name,
                                                            float value);
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_get_f32(lockstep_autopilot *ap, const char *name,
                                                            float *out_value);
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_set_i32(lockstep_autopilot *ap, const char *name,
                                                            int32_t value);
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_get_i32(lockstep_autopilot *ap, const char *name,
                                                            int32_t *out_value);
/** Parameter enumeration (ABI 4; optional, both or neither): the library's
 *  whole parameter table, so that ground stations and logs can list it.
 *  param_count: how many parameters the instance has (a constant for the
 *    instance's life).
 *  param_info: parameter `index` (0 to count - 1, a stable order): its name
 *    (NUL-terminated, at most LOCKSTEP_PARAM_NAME_MAX bytes before the NUL,
 *    written to out_name, which holds name_len bytes), its type
 *    (LOCKSTEP_PARAM_TYPE_*) and its default, the value it had just after
 *    create() (an int32 default is exact in the double). The value in force
 *    is read with param_get_f32 / param_get_i32 by name.
 *    LOCKSTEP_AP_ERR_INVALID for an index past the end or a name_len too
 *    small for the name. */
#define LOCKSTEP_PARAM_NAME_MAX 16u
#define LOCKSTEP_PARAM_TYPE_F32 1u
#define LOCKSTEP_PARAM_TYPE_I32 2u
LOCKSTEP_AP_EXPORT uint32_t lockstep_autopilot_param_count(lockstep_autopilot *ap);
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_param_info(lockstep_autopilot *ap, uint32_t index, char *out_name,
                                                         size_t name_len, uint32_t *out_type,
                                                         double *out_default);
/** Returns the instance to its state just after create() (parameters and the
 *  mission are kept). */
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_reset(lockstep_autopilot *ap);
/** Returns a static "name version" string. */
LOCKSTEP_AP_EXPORT const char *lockstep_autopilot_name(void);
/** Copies the message of the instance's last failure (empty if none) into buf
 *  as a NUL-terminated string of at most buf_len bytes. */
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_last_error(const lockstep_autopilot *ap, char *buf,
                                                         size_t buf_len);

/** Migration (optional; all three or none): the instance's whole state as
 *  bytes, so that a running vehicle can move to an instance of the same
 *  library in another process or on another machine (distributed runs).
 *  The receiving instance was created with the same config (and given the
 *  same parameters and mission); after restore() it must step exactly as
 *  the original would have, bit for bit.
 *  snapshot_size: the bytes snapshot() writes now, at most
 *    LOCKSTEP_AUTOPILOT_MAX_SNAPSHOT (0: the instance cannot be moved now).
 *  snapshot: writes the state into buf (buf_len at least snapshot_size())
 *    and its length into *out_len.
 *  restore: replaces the instance's state with a snapshot; on an error
 *    (LOCKSTEP_AP_ERR_INVALID for bytes it does not recognise or that were
 *    taken from an instance of another config) the instance is unchanged.
 *  A library without them still flies; a distributed run pins its vehicles
 *  to where they start. */
#define LOCKSTEP_AUTOPILOT_MAX_SNAPSHOT 1048576u
LOCKSTEP_AP_EXPORT size_t lockstep_autopilot_snapshot_size(const lockstep_autopilot *ap);
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_snapshot(const lockstep_autopilot *ap, uint8_t *buf,
                                                       size_t buf_len, size_t *out_len);
LOCKSTEP_AP_EXPORT int32_t lockstep_autopilot_restore(lockstep_autopilot *ap, const uint8_t *buf,
                                                      size_t len);

/* Function pointer types of every symbol, for loaders. */
typedef uint32_t (*lockstep_autopilot_abi_version_fn)(void);
typedef const lockstep_layout_table *(*lockstep_autopilot_layout_fn)(void);
typedef uint32_t (*lockstep_autopilot_capabilities_fn)(void);
typedef lockstep_autopilot *(*lockstep_autopilot_create_fn)(const lockstep_autopilot_config *config,
                                                            char *err, size_t err_len);
typedef int32_t (*lockstep_autopilot_step_fn)(lockstep_autopilot *ap, uint64_t time_us,
                                              const lockstep_sensor_frame *sensors,
                                              lockstep_actuator_frame *actuators);
typedef void (*lockstep_autopilot_destroy_fn)(lockstep_autopilot *ap);
typedef int32_t (*lockstep_autopilot_mission_upload_fn)(lockstep_autopilot *ap,
                                                        const lockstep_mission_item *items,
                                                        size_t count);
typedef int32_t (*lockstep_autopilot_param_set_f32_fn)(lockstep_autopilot *ap, const char *name,
                                                       float value);
typedef int32_t (*lockstep_autopilot_param_get_f32_fn)(lockstep_autopilot *ap, const char *name,
                                                       float *out_value);
typedef int32_t (*lockstep_autopilot_param_set_i32_fn)(lockstep_autopilot *ap, const char *name,
                                                       int32_t value);
typedef int32_t (*lockstep_autopilot_param_get_i32_fn)(lockstep_autopilot *ap, const char *name,
                                                       int32_t *out_value);
typedef uint32_t (*lockstep_autopilot_param_count_fn)(lockstep_autopilot *ap);
typedef int32_t (*lockstep_autopilot_param_info_fn)(lockstep_autopilot *ap, uint32_t index, char *out_name,
                                                    size_t name_len, uint32_t *out_type, double *out_default);
typedef int32_t (*lockstep_autopilot_reset_fn)(lockstep_autopilot *ap);
typedef const char *(*lockstep_autopilot_name_fn)(void);
typedef int32_t (*lockstep_autopilot_last_error_fn)(const lockstep_autopilot *ap, char *buf,
                                                    size_t buf_len);
typedef size_t (*lockstep_autopilot_snapshot_size_fn)(const lockstep_autopilot *ap);
typedef int32_t (*lockstep_autopilot_snapshot_fn)(const lockstep_autopilot *ap, uint8_t *buf,
                                                  size_t buf_len, size_t *out_len);
typedef int32_t (*lockstep_autopilot_restore_fn)(lockstep_autopilot *ap, const uint8_t *buf,
                                                 size_t len);

/* Older versions the harness still loads:
 *   3  lockstep_commands.takeoff_alt_m was `uint32_t reserved0` (the
 *      harness writes 0 there: such a library takes off to its own
 *      default height); no param_count / param_info. Every other struct
 *      and function is as in version 4. */
#define LOCKSTEP_AUTOPILOT_ABI_OLDEST 3

/* ======================================================================== */
/* Layout table generator (C11; not seen by bindgen)                        */
/* ======================================================================== */
#if !defined(LOCKSTEP_BINDGEN) && !defined(__cplusplus)

#define LOCKSTEP__TYPE_CODE(expr)                                                                  \
  _Generic((expr),                                                                                 \
      uint8_t: LOCKSTEP_TYPE_U8,                                                                   \
      int8_t: LOCKSTEP_TYPE_I8,                                                                    \
      uint16_t: LOCKSTEP_TYPE_U16,                                                                 \
      int16_t: LOCKSTEP_TYPE_I16,                                                                  \
      uint32_t: LOCKSTEP_TYPE_U32,                                                                 \
      int32_t: LOCKSTEP_TYPE_I32,                                                                  \
      uint64_t: LOCKSTEP_TYPE_U64,                                                                 \
      int64_t: LOCKSTEP_TYPE_I64,                                                                  \
      float: LOCKSTEP_TYPE_F32,                                                                    \
      double: LOCKSTEP_TYPE_F64)

/** A scalar field. */
#define LOCKSTEP_LAYOUT_SCALAR(T, f)                                                               \
  {#f, NULL, LOCKSTEP__TYPE_CODE(((T *)0)->f), (uint32_t)offsetof(T, f), 1u,                       \
   (uint32_t)sizeof(((T *)0)->f)}
/** An array of scalars. */
#define LOCKSTEP_LAYOUT_ARRAY(T, f)                                                                \
  {#f, NULL, LOCKSTEP__TYPE_CODE(((T *)0)->f[0]), (uint32_t)offsetof(T, f),                        \
   (uint32_t)(sizeof(((T *)0)->f) / sizeof(((T *)0)->f[0])), (uint32_t)sizeof(((T *)0)->f[0])}
/** A nested struct of type S (a compile error if the field is not an S). */
#define LOCKSTEP_LAYOUT_STRUCT(T, f, S)                                                            \
  {#f, #S, _Generic(((T *)0)->f, S: LOCKSTEP_TYPE_STRUCT), (uint32_t)offsetof(T, f), 1u,           \
   (uint32_t)sizeof(S)}
/** An array of nested structs of type S. */
#define LOCKSTEP_LAYOUT_STRUCT_ARRAY(T, f, S)                                                      \
  {#f, #S, _Generic(((T *)0)->f[0], S: LOCKSTEP_TYPE_STRUCT), (uint32_t)offsetof(T, f),            \
   (uint32_t)(sizeof(((T *)0)->f) / sizeof(S)), (uint32_t)sizeof(S)}

#define LOCKSTEP__LAYOUT_ENTRY(T, fields)                                                          \
  {#T, (uint32_t)sizeof(T), (uint32_t)_Alignof(T), (uint32_t)(sizeof(fields) / sizeof(fields[0])), \
   0u, fields}

/** Expands, in one translation unit, to the definition of
 *  lockstep_autopilot_layout() describing every shared struct as compiled. */
#define LOCKSTEP_AUTOPILOT_DEFINE_LAYOUT()                                                         \
  static const lockstep_layout_field lockstep__rotor_fields[] = {                                  \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_rotor_geometry, position_m),                                  \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_rotor_geometry, thrust_axis),                                 \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_rotor_geometry, spin_dir),                                   \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_rotor_geometry, torque_coeff_m),                             \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_rotor_geometry, max_thrust_n),                               \
  };                                                                                               \
  static const lockstep_layout_field lockstep__config_fields[] = {                                 \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, struct_size),                              \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, rotor_count),                              \
      LOCKSTEP_LAYOUT_STRUCT_ARRAY(lockstep_autopilot_config, rotors, lockstep_rotor_geometry),    \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, thrust_model_factor),                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, mass_kg),                                  \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_autopilot_config, inertia_diag_kgm2),                         \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, gravity_mps2),                             \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, autopilot_period_us),                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, rotor_time_constant_s),                    \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, origin_lat_deg),                           \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, origin_lon_deg),                           \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_autopilot_config, origin_alt_m),                             \
  };                                                                                               \
  static const lockstep_layout_field lockstep__imu_fields[] = {                                    \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_imu, timestamp_us),                                          \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_imu, accel_mps2),                                             \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_imu, gyro_radps),                                             \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_imu, temperature_c),                                         \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_imu, reserved0),                                             \
  };                                                                                               \
  static const lockstep_layout_field lockstep__mag_fields[] = {                                    \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mag, timestamp_us),                                          \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_mag, field_gauss),                                            \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mag, reserved0),                                             \
  };                                                                                               \
  static const lockstep_layout_field lockstep__baro_fields[] = {                                   \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_baro, timestamp_us),                                         \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_baro, pressure_pa),                                          \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_baro, temperature_c),                                        \
  };                                                                                               \
  static const lockstep_layout_field lockstep__gps_fields[] = {                                    \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, timestamp_us),                                          \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, lat_deg),                                               \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, lon_deg),                                               \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, alt_m),                                                 \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_gps, vel_ned_mps),                                            \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, fix_type),                                              \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, satellites),                                            \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, eph_m),                                                 \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, epv_m),                                                 \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, speed_accuracy_mps),                                    \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_gps, reserved0),                                             \
  };                                                                                               \
  static const lockstep_layout_field lockstep__estimate_fields[] = {                               \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_estimate, timestamp_us),                                     \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_estimate, position_ned_m),                                    \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_estimate, velocity_ned_mps),                                  \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_estimate, attitude_q),                                        \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_estimate, rates_frd_radps),                                   \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_estimate, reserved0),                                        \
  };                                                                                               \
  static const lockstep_layout_field lockstep__battery_fields[] = {                                \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_battery, timestamp_us),                                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_battery, voltage_v),                                         \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_battery, current_a),                                         \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_battery, remaining),                                         \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_battery, warning),                                           \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_battery, connected),                                         \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_battery, reserved0),                                         \
  };                                                                                               \
  static const lockstep_layout_field lockstep__commands_fields[] = {                               \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, timestamp_us),                                     \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, arm_request),                                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, mode_request),                                     \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, mission_start),                                    \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, setpoint_mask),                                    \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_commands, setpoint),                                          \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, setpoint_yaw_rad),                                 \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, setpoint_thrust),                                  \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, takeoff_alt_m),                                    \
  };                                                                                               \
  static const lockstep_layout_field lockstep__sensor_fields[] = {                                 \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_sensor_frame, time_us),                                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_sensor_frame, fresh_mask),                                   \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_sensor_frame, landed),                                       \
      LOCKSTEP_LAYOUT_STRUCT(lockstep_sensor_frame, imu, lockstep_imu),                            \
      LOCKSTEP_LAYOUT_STRUCT(lockstep_sensor_frame, mag, lockstep_mag),                            \
      LOCKSTEP_LAYOUT_STRUCT(lockstep_sensor_frame, baro, lockstep_baro),                          \
      LOCKSTEP_LAYOUT_STRUCT(lockstep_sensor_frame, gps, lockstep_gps),                            \
      LOCKSTEP_LAYOUT_STRUCT(lockstep_sensor_frame, estimate, lockstep_estimate),                  \
      LOCKSTEP_LAYOUT_STRUCT(lockstep_sensor_frame, battery, lockstep_battery),                    \
      LOCKSTEP_LAYOUT_STRUCT(lockstep_sensor_frame, commands, lockstep_commands),                  \
  };                                                                                               \
  static const lockstep_layout_field lockstep__setpoints_fields[] = {                              \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_setpoints, position_ned_m),                                   \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_setpoints, velocity_ned_mps),                                 \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_setpoints, accel_ned_mps2),                                   \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_setpoints, yaw_rad),                                         \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_setpoints, attitude_q),                                       \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_setpoints, rates_frd_radps),                                  \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_setpoints, torque_frd_nm),                                    \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_setpoints, thrust_n),                                        \
  };                                                                                               \
  static const lockstep_layout_field lockstep__actuator_fields[] = {                               \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_actuator_frame, motors),                                      \
      LOCKSTEP_LAYOUT_ARRAY(lockstep_actuator_frame, servos),                                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_actuator_frame, armed),                                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_actuator_frame, mode),                                       \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_actuator_frame, mission_current),                            \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_actuator_frame, mission_count),                              \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_actuator_frame, mission_finished),                           \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_actuator_frame, reserved0),                                  \
      LOCKSTEP_LAYOUT_STRUCT(lockstep_actuator_frame, setpoints, lockstep_setpoints),              \
  };                                                                                               \
  static const lockstep_layout_field lockstep__mission_item_fields[] = {                           \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, command),                                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, frame),                                        \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, param1),                                       \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, param2),                                       \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, param3),                                       \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, param4),                                       \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, lat_deg),                                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, lon_deg),                                      \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, alt_m),                                        \
      LOCKSTEP_LAYOUT_SCALAR(lockstep_mission_item, autocontinue),                                 \
  };                                                                                               \
  static const lockstep_layout_struct lockstep__layout_structs[] = {                               \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_rotor_geometry, lockstep__rotor_fields),                     \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_autopilot_config, lockstep__config_fields),                  \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_imu, lockstep__imu_fields),                                  \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_mag, lockstep__mag_fields),                                  \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_baro, lockstep__baro_fields),                                \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_gps, lockstep__gps_fields),                                  \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_estimate, lockstep__estimate_fields),                        \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_battery, lockstep__battery_fields),                          \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_commands, lockstep__commands_fields),                        \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_sensor_frame, lockstep__sensor_fields),                      \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_setpoints, lockstep__setpoints_fields),                      \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_actuator_frame, lockstep__actuator_fields),                  \
      LOCKSTEP__LAYOUT_ENTRY(lockstep_mission_item, lockstep__mission_item_fields),                \
  };                                                                                               \
  static const lockstep_layout_table lockstep__layout_table = {                                    \
      LOCKSTEP_AUTOPILOT_ABI_VERSION,                                                              \
      (uint32_t)(sizeof(lockstep__layout_structs) / sizeof(lockstep__layout_structs[0])),          \
      lockstep__layout_structs,                                                                    \
  };                                                                                               \
  LOCKSTEP_AP_EXPORT const lockstep_layout_table *lockstep_autopilot_layout(void) {                \
    return &lockstep__layout_table;                                                                \
  }

#endif /* !LOCKSTEP_BINDGEN && !__cplusplus */

#ifdef __cplusplus
}
#endif

#endif /* LOCKSTEP_AUTOPILOT_H */
