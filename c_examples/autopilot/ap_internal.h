/* Internal state of the reference autopilot. */
#ifndef AP_INTERNAL_H
#define AP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "lockstep/autopilot.h"

#define AP_MAX_MISSION 256
/* A takeoff's height, m (MIS_TAKEOFF_ALT's range). */
#define AP_MIN_TAKEOFF_M 0.5f
#define AP_MAX_TAKEOFF_M 500.0f
#define AP_ERR_LEN 256
/* Yaw authority lost (a rotor out on a hexa or larger): the yaw rate has
 * stayed more than AP_YAW_LOST_RATE rad/s from its setpoint for
 * AP_YAW_LOST_US. The vehicle then gives yaw up (no yaw torque, the
 * heading free), holds its position and lands: the roll, pitch and
 * collective the remaining rotors still give are all spent on staying
 * level and in place, as ArduPilot's thrust-loss and PX4's failure
 * handling do. */
#define AP_YAW_LOST_RATE 1.0f
#define AP_YAW_LOST_US 1000000u
#define AP_YAW_LOST_MIN_ROTORS 6

/* Tunable parameters (names in params.c). Units in the comments. */
typedef struct ap_params {
  float xy_p, z_p;                      /* position gains, 1/s */
  float xy_vel_p, xy_vel_i, xy_vel_d;   /* velocity gains, 1/s, 1/s^2, 1 */
  float z_vel_p, z_vel_i, z_vel_d;      /* velocity gains, 1/s, 1/s^2, 1 */
  float xy_vel_max, z_vel_max_up, z_vel_max_dn; /* m/s */
  float xy_cruise;                                 /* m/s: the speed of automatic modes */
  float veld_lp_hz;                     /* low-pass of the velocity derivative (D term), Hz */
  float acc_hor_max;                    /* m/s^2 */
  float tilt_max_deg;                   /* deg */
  float thr_min_frac;                   /* minimum collective, fraction of weight */
  float land_speed, tko_speed;          /* m/s */
  float att_p[3];                       /* attitude gains roll, pitch, yaw, 1/s */
  float rate_p[3], rate_i[3], rate_d[3];/* rate gains on angular acceleration: 1/s, 1/s^2, 1 */
  float rate_int_lim;                   /* rad/s^2 */
  float rate_max_rp_deg, rate_max_y_deg;/* deg/s */
  float acc_rad, acc_alt;               /* waypoint acceptance, m */
  float takeoff_alt, rtl_alt;           /* m above home */
  float land_trig_time_s, disarm_land_s;/* s (disarm < 0: never) */
  float mot_idle;                       /* motor command when armed idle / minimum in flight */
  float gyro_cutoff_hz, dgyro_cutoff_hz;/* rate loop input and D-term low-pass cutoffs, Hz */
  int32_t yaw_to_wp;                    /* 1: face the next waypoint */
  int32_t low_bat_act;                  /* 0 none, 1 critical -> RTL and emergency -> LAND */
} ap_params;

typedef struct ap_biquad {
  float b0, b1, b2, a1, a2, z1, z2;
} ap_biquad;

/* The rate loop's gyro path (filter.c). */
typedef struct ap_gyro {
  ap_biquad lpf[3];
  float d_rc;          /* time constant of the derivative's low-pass, s */
  float rate[3];       /* filtered body rates, rad/s */
  float accel[3];      /* filtered angular acceleration, rad/s^2 */
  float period_avg_us; /* mean gap between samples (exponential average) */
  uint64_t last_us;    /* timestamp of the last sample used */
  uint64_t dt_us;      /* nominal sample period the filters are designed for (0: not yet) */
  int valid;           /* a sample has been seen */
  int redesign;        /* a cutoff changed: redesign at the next sample */
} ap_gyro;

typedef struct ap_mixer {
  uint32_t n;
  float B[4][LOCKSTEP_MAX_ROTORS]; /* roll, pitch, yaw torque and collective thrust per N of rotor thrust */
  float M[LOCKSTEP_MAX_ROTORS][4]; /* pseudo-inverse of B */
  float tmax[LOCKSTEP_MAX_ROTORS];
  float f; /* thrust model factor */
} ap_mixer;

/* A limit that does not limit (m/s). */
#define AP_FAR 1e9f

/* What the mode logic asks of the position controller. */
typedef struct ap_target {
  float pos[3];
  float yaw;
  int vz_override; /* 1: track vz below instead of pos[2] */
  float vz;
  int vxy_override; /* 1: track vxy below instead of pos[0..1] (OFFBOARD velocity) */
  float vxy[2];
  int rates_override; /* 1: fly rates and thrust_frac below (OFFBOARD rates) */
  float rates[3];     /* rad/s, FRD */
  float thrust_frac;  /* of the rotors' total at full command */
  float xy_speed_max; /* m/s, on top of MPC_XY_VEL_MAX */
  float z_up_max;     /* m/s, on top of MPC_Z_VEL_MAX_UP */
  float z_dn_max;     /* m/s, on top of MPC_Z_VEL_MAX_DN */
} ap_target;

enum ap_rtl_phase { AP_RTL_CLIMB, AP_RTL_RETURN, AP_RTL_DESCEND };

struct lockstep_autopilot {
  lockstep_autopilot_config cfg;
  ap_params p;
  ap_mixer mixer;
  lockstep_mission_item mission[AP_MAX_MISSION];
  uint32_t mission_count;
  int32_t jumps_left[AP_MAX_MISSION]; /* DO_JUMP repeats left (-1 forever) */
  float mis_xy_speed, mis_up_speed, mis_dn_speed; /* DO_CHANGE_SPEED limits (1e9: none) */
  char last_error[AP_ERR_LEN];

  /* runtime (cleared by reset) */
  uint64_t last_time_us;
  int has_time;
  uint32_t mode;
  int have_estimate;
  float pos[3], vel[3], q[4], rates[3];
  int landed_flag;
  uint32_t battery_warning;
  float home[3];
  ap_target tgt;
  int32_t mis_idx;
  int mission_finished;
  int wp_reached;
  uint64_t wp_reached_us;
  int takeoff_then_mission; /* TAKEOFF mode continues into the mission */
  int takeoff_advance;      /* ... past item mis_idx (a TAKEOFF item) */
  int land_from_mission;    /* LAND mode entered from a mission LAND item */
  uint32_t bat_action_level;
  int rtl_phase;
  uint64_t land_since_us;
  int land_candidate;
  int took_off; /* off the ground (the landed flag clear) since arming or leaving LANDED */
  uint64_t landed_since_us;
  float vel_int[3], vel_prev[3], vel_d[3];
  float rate_int[3], rates_prev[3];
  ap_gyro gyro;
  /* Trigonometry of slowly changing inputs, recomputed when they change
   * (valid = 0 after reset). */
  struct {
    int valid;
    float yaw, cos_yaw, sin_yaw;
    float tilt_deg, tan_tilt;
  } trig;
  int ctrl_init;
  uint64_t yaw_err_since_us; /* yaw rate far from its setpoint since (0: not) */
  int yaw_lost;              /* yaw given up: see AP_YAW_LOST_RATE */
  int yaw_lost_handled;      /* the landing it calls for was started */
  lockstep_setpoints sp;
  float thrust_cmd[LOCKSTEP_MAX_ROTORS];
};
typedef struct lockstep_autopilot ap_t;

/* autopilot.c */
void ap_set_error(ap_t *ap, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* params.c */
void ap_params_default(ap_params *p, const lockstep_autopilot_config *cfg);
/* filter.c */
void ap_biquad_design(ap_biquad *f, float cutoff_hz, float sample_hz);
void ap_biquad_reset(ap_biquad *f, float x);
float ap_biquad_apply(ap_biquad *f, float x);
void ap_gyro_reset(ap_gyro *g);
/* period_us: the autopilot's period, standing in for the IMU's until the
 * second sample has measured it. */
void ap_gyro_update(ap_gyro *g, const ap_params *p, const float gyro[3], uint64_t t_us, uint32_t period_us);
/* A sample within AP_GYRO_STALE_PERIODS of the IMU's own period. */
int ap_gyro_current(const ap_gyro *g, uint64_t now_us, uint32_t period_us);
/* mixer.c */
int ap_mixer_build(ap_mixer *m, const lockstep_autopilot_config *cfg, char *err, size_t err_len);
void ap_mixer_allocate(const ap_mixer *m, const float torque[3], float thrust, float tmin_frac,
                       float thrust_out[LOCKSTEP_MAX_ROTORS]);
float ap_thrust_to_cmd(float frac, float f);
float ap_cmd_to_thrust(float cmd, float f);
/* geo.c */
void ap_geo_to_ned(const lockstep_autopilot_config *cfg, double lat_deg, double lon_deg, float out_ne[2]);
/* control.c */
void ap_control_reset(ap_t *ap);
void ap_control_run(ap_t *ap, float dt, uint64_t now_us, float torque[3], float *thrust);
/* modes.c */
void ap_modes_reset(ap_t *ap);
void ap_modes_commands(ap_t *ap, const lockstep_commands *cmd, uint64_t now);
void ap_modes_update(ap_t *ap, uint64_t now);
int ap_mode_flying(uint32_t mode);
int ap_mission_validate(ap_t *ap, const lockstep_mission_item *items, size_t count);
/* Jump counters and speed limits back to the uploaded mission's start. */
void ap_mission_restart(ap_t *ap);

#endif
