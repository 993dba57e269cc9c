/* The mode machine and mission logic:
 *   DISARMED -arm-> IDLE -takeoff/mission start-> TAKEOFF -> MISSION
 *   -> LAND -> LANDED -(COM_DISARM_LAND s)-> DISARMED;
 *   HOLD, RTL and LAND on command from any flying mode; OFFBOARD on a
 *   setpoint from IDLE, any flying mode, or LANDED when it climbs; HOLD
 *   and OFFBOARD set down on the ground are LANDED too; battery
 *   failsafe. */
#include <math.h>
#include <string.h>

#include "ap_internal.h"
#include "ap_math.h"

int ap_mode_flying(uint32_t mode) {
  return mode == LOCKSTEP_MODE_TAKEOFF || mode == LOCKSTEP_MODE_MISSION || mode == LOCKSTEP_MODE_HOLD ||
         mode == LOCKSTEP_MODE_RTL || mode == LOCKSTEP_MODE_LAND || mode == LOCKSTEP_MODE_OFFBOARD;
}

static int on_ground(const ap_t *ap) {
  return ap->mode == LOCKSTEP_MODE_IDLE || ap->mode == LOCKSTEP_MODE_LANDED;
}

/* NaN (an unset hold time) counts as 0. */
static uint64_t seconds_to_us(float s) { return !(s > 0.0f) ? 0u : (uint64_t)llroundf(s * 1e6f); }

static float horizontal_dist(const ap_t *ap, const float target[3]) {
  float d[3] = {target[0] - ap->pos[0], target[1] - ap->pos[1], 0.0f};
  return ap_norm2(d);
}

static void target_here(ap_t *ap) {
  memcpy(ap->tgt.pos, ap->pos, sizeof(ap->tgt.pos));
  ap->tgt.yaw = ap_quat_yaw(ap->q);
  ap->tgt.vz_override = 0;
  ap->tgt.vz = 0.0f;
  ap->tgt.vxy_override = 0;
  ap->tgt.vxy[0] = ap->tgt.vxy[1] = 0.0f;
  ap->tgt.rates_override = 0;
  ap->tgt.xy_speed_max = ap->p.xy_cruise;
  ap->tgt.z_up_max = AP_FAR;
  ap->tgt.z_dn_max = AP_FAR;
}

static void enter_hold(ap_t *ap) {
  target_here(ap);
  ap->land_candidate = 0;
  ap->mode = LOCKSTEP_MODE_HOLD;
}

static void enter_land(ap_t *ap, int from_mission) {
  float yaw = ap->tgt.yaw;
  target_here(ap);
  ap->tgt.yaw = yaw;
  ap->tgt.vz_override = 1;
  ap->tgt.vz = ap->p.land_speed;
  ap->land_candidate = 0;
  ap->land_from_mission = from_mission;
  ap->mode = LOCKSTEP_MODE_LAND;
}

static void enter_rtl(ap_t *ap, int from_mission) {
  float yaw = ap->tgt.yaw;
  target_here(ap);
  ap->tgt.yaw = yaw;
  ap->tgt.pos[2] = fminf(ap->pos[2], ap->home[2] - ap->p.rtl_alt);
  ap->rtl_phase = AP_RTL_CLIMB;
  ap->land_candidate = 0;
  ap->land_from_mission = from_mission;
  ap->mode = LOCKSTEP_MODE_RTL;
}

static void enter_takeoff(ap_t *ap, float z_target) {
  target_here(ap);
  ap->tgt.pos[2] = z_target;
  ap->tgt.z_up_max = ap->p.tko_speed;
  ap_control_reset(ap);
  ap->mode = LOCKSTEP_MODE_TAKEOFF;
}

/* NED target of a positional item; lat = lon = 0 means "here". */
static void item_ned(const ap_t *ap, const lockstep_mission_item *it, float out[3]) {
  if (it->lat_deg == 0.0 && it->lon_deg == 0.0) {
    out[0] = ap->pos[0];
    out[1] = ap->pos[1];
  } else {
    ap_geo_to_ned(&ap->cfg, it->lat_deg, it->lon_deg, out);
  }
  if (it->frame == LOCKSTEP_MAV_FRAME_GLOBAL)
    out[2] = -(float)((double)it->alt_m - ap->cfg.origin_alt_m);
  else
    out[2] = ap->home[2] - it->alt_m;
}

static void setup_item(ap_t *ap, int32_t idx);

static void finish_mission(ap_t *ap) {
  ap->mission_finished = 1;
  ap->mis_idx = (int32_t)ap->mission_count - 1;
  enter_hold(ap);
}

/* DO_CHANGE_SPEED: the speed limits for the rest of the mission. */
static void change_speed(ap_t *ap, const lockstep_mission_item *it) {
  float v = it->param2;
  if (!(v > 0.0f)) return; /* -1 or NaN: no change */
  switch ((int)it->param1) {
    case 0:
    case 1:
      ap->mis_xy_speed = v;
      break;
    case 2:
      ap->mis_up_speed = v;
      break;
    default:
      ap->mis_dn_speed = v;
      break;
  }
}

/* Runs the DO_ items from idx on: returns the index of the next navigation
 * item (or one past the end), -2 when DO_JUMPs loop without one. */
static int32_t next_nav_item(ap_t *ap, int32_t idx) {
  for (uint32_t hops = 0; idx >= 0 && (uint32_t)idx < ap->mission_count; hops++) {
    const lockstep_mission_item *it = &ap->mission[idx];
    if (hops > 2u * ap->mission_count + 2u) return -2;
    if (it->command == LOCKSTEP_MAV_CMD_DO_JUMP) {
      if (ap->jumps_left[idx] != 0) {
        if (ap->jumps_left[idx] > 0) ap->jumps_left[idx]--;
        idx = (int32_t)it->param1;
      } else {
        idx++;
      }
    } else if (it->command == LOCKSTEP_MAV_CMD_DO_CHANGE_SPEED) {
      change_speed(ap, it);
      idx++;
    } else {
      return idx;
    }
  }
  return idx;
}

static void setup_item(ap_t *ap, int32_t idx) {
  idx = next_nav_item(ap, idx);
  if (idx == -2) {
    ap_set_error(ap, "mission: DO_JUMP items loop without a navigation item; holding");
    ap->mission_finished = 1;
    enter_hold(ap);
    return;
  }
  if (idx < 0 || (uint32_t)idx >= ap->mission_count) {
    finish_mission(ap);
    return;
  }
  const lockstep_mission_item *it = &ap->mission[idx];
  float yaw = ap->tgt.yaw;
  ap->mis_idx = idx;
  ap->wp_reached = 0;
  ap->mode = LOCKSTEP_MODE_MISSION;
  target_here(ap);
  ap->tgt.yaw = yaw;
  ap->tgt.xy_speed_max = ap->mis_xy_speed;
  ap->tgt.z_up_max = ap->mis_up_speed;
  ap->tgt.z_dn_max = ap->mis_dn_speed;
  switch (it->command) {
    case LOCKSTEP_MAV_CMD_NAV_TAKEOFF: {
      float t[3];
      item_ned(ap, it, t);
      ap->tgt.pos[2] = t[2];
      ap->tgt.z_up_max = ap->p.tko_speed;
      break;
    }
    case LOCKSTEP_MAV_CMD_NAV_LAND:
      item_ned(ap, it, ap->tgt.pos);
      ap->tgt.pos[2] = ap->pos[2]; /* approach at the current altitude */
      break;
    case LOCKSTEP_MAV_CMD_NAV_RETURN_TO_LAUNCH:
      enter_rtl(ap, 1);
      break;
    default: /* WAYPOINT, LOITER_TIME */
      item_ned(ap, it, ap->tgt.pos);
      if (ap->p.yaw_to_wp && horizontal_dist(ap, ap->tgt.pos) > 1.0f)
        ap->tgt.yaw = atan2f(ap->tgt.pos[1] - ap->pos[1], ap->tgt.pos[0] - ap->pos[0]);
      break;
  }
}

void ap_mission_restart(ap_t *ap) {
  for (uint32_t i = 0; i < ap->mission_count; i++) {
    const lockstep_mission_item *it = &ap->mission[i];
    ap->jumps_left[i] = it->command == LOCKSTEP_MAV_CMD_DO_JUMP ? (int32_t)it->param2 : 0;
  }
  ap->mis_xy_speed = ap->p.xy_cruise;
  ap->mis_up_speed = AP_FAR;
  ap->mis_dn_speed = AP_FAR;
}

static void begin_mission(ap_t *ap, int32_t idx) {
  if (ap->mission_count == 0) {
    ap_set_error(ap, "mission start refused: no mission uploaded");
    return;
  }
  if (idx == 0) ap_mission_restart(ap);
  ap->mission_finished = 0;
  if (on_ground(ap)) {
    idx = next_nav_item(ap, idx);
    if (idx < 0 || (uint32_t)idx >= ap->mission_count) {
      ap_set_error(ap, "mission start refused: no navigation item to fly");
      return;
    }
    const lockstep_mission_item *it = &ap->mission[idx];
    float z = ap->home[2] - ap->p.takeoff_alt;
    ap->takeoff_advance = it->command == LOCKSTEP_MAV_CMD_NAV_TAKEOFF;
    if (ap->takeoff_advance) {
      float t[3];
      item_ned(ap, it, t);
      z = t[2];
    }
    ap->mis_idx = idx;
    ap->takeoff_then_mission = 1;
    enter_takeoff(ap, z);
  } else {
    setup_item(ap, idx);
  }
}

void ap_modes_reset(ap_t *ap) {
  ap->mode = LOCKSTEP_MODE_DISARMED;
  ap->mis_idx = -1;
  ap->mission_finished = 0;
  ap->takeoff_then_mission = 0;
}

static void arm(ap_t *ap) {
  if (!ap->have_estimate) {
    ap_set_error(ap, "arming refused: no estimated state received yet");
    return;
  }
  memcpy(ap->home, ap->pos, sizeof(ap->home));
  target_here(ap);
  ap_control_reset(ap);
  ap->took_off = 0;
  ap->mode = LOCKSTEP_MODE_IDLE;
}

/* Whether a setpoint lifts a landed vehicle: a position more than
 * NAV_ACC_ALT above it, a climb faster than the land detector's still
 * (0.2 m/s), or rates with more collective than its low thrust (half the
 * weight). Any other keeps it on the ground, as it asks. */
static int setpoint_climbs(const ap_t *ap, const lockstep_commands *cmd, int pos, int vel) {
  const float *v = cmd->setpoint;
  if (pos) return v[2] < ap->pos[2] - ap->p.acc_alt;
  if (vel) return v[2] < -0.2f;
  float total_max = 0.0f;
  for (uint32_t i = 0; i < ap->mixer.n; i++) total_max += ap->mixer.tmax[i] * ap->mixer.B[3][i];
  return cmd->setpoint_thrust * total_max > 0.5f * ap->cfg.mass_kg * ap->cfg.gravity_mps2;
}

/* A setpoint command: OFFBOARD flies it (from IDLE or LANDED, a takeoff
 * under the setpoint's control, or from any flying mode). */
static void offboard(ap_t *ap, const lockstep_commands *cmd) {
  uint32_t m = cmd->setpoint_mask;
  int pos = (m & LOCKSTEP_SETPOINT_POSITION) != 0, vel = (m & LOCKSTEP_SETPOINT_VELOCITY) != 0;
  int rates = (m & LOCKSTEP_SETPOINT_RATES) != 0, yaw = (m & LOCKSTEP_SETPOINT_YAW) != 0;
  uint32_t known = LOCKSTEP_SETPOINT_POSITION | LOCKSTEP_SETPOINT_VELOCITY | LOCKSTEP_SETPOINT_YAW | LOCKSTEP_SETPOINT_RATES;
  if ((m & ~known) != 0 || pos + vel + rates != 1 || (rates && yaw)) {
    ap_set_error(ap, "setpoint refused: mask 0x%x is not one of a position, a velocity (each with or without yaw) "
                 "or rates", (unsigned)m);
    return;
  }
  const float *v = cmd->setpoint;
  if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]) || (yaw && !isfinite(cmd->setpoint_yaw_rad)) ||
      (rates && !(cmd->setpoint_thrust >= 0.0f && cmd->setpoint_thrust <= 1.0f))) {
    ap_set_error(ap, "setpoint refused: not finite, or a thrust outside 0..1");
    return;
  }
  if (ap->mode != LOCKSTEP_MODE_OFFBOARD) {
    /* Landed: a setpoint that keeps it down is what it does already (a
     * ground station streams the last one until told otherwise). */
    if (ap->mode == LOCKSTEP_MODE_LANDED && !setpoint_climbs(ap, cmd, pos, vel)) return;
    if (!(ap_mode_flying(ap->mode) || on_ground(ap))) {
      ap_set_error(ap, "setpoint refused in mode %u", (unsigned)ap->mode);
      return;
    }
    float yaw = ap->tgt.yaw;
    target_here(ap);
    ap->tgt.yaw = yaw;
    ap->land_candidate = 0;
    if (on_ground(ap)) {
      ap_control_reset(ap);
      ap->took_off = 0;
    }
    ap->takeoff_then_mission = 0;
    ap->mode = LOCKSTEP_MODE_OFFBOARD;
  }
  ap_target *t = &ap->tgt;
  t->rates_override = 0;
  if (rates) {
    memcpy(t->pos, ap->pos, sizeof(t->pos));
    t->rates_override = 1;
    memcpy(t->rates, v, sizeof(t->rates));
    t->thrust_frac = cmd->setpoint_thrust;
  } else if (pos) {
    /* A position is flown at the cruise speed (a station's "go to"). */
    memcpy(t->pos, v, sizeof(t->pos));
    t->vxy_override = 0;
    t->vz_override = 0;
    t->xy_speed_max = ap->p.xy_cruise;
  } else {
    /* A velocity is flown as asked, up to MPC_XY_VEL_MAX (PX4's limit on
     * offboard and manual velocities), not the cruise speed. */
    t->xy_speed_max = AP_FAR;
    memcpy(t->pos, ap->pos, sizeof(t->pos));
    t->vxy_override = 1;
    t->vxy[0] = v[0];
    t->vxy[1] = v[1];
    t->vz_override = 1;
    t->vz = v[2];
  }
  if (yaw) t->yaw = cmd->setpoint_yaw_rad;
}

void ap_modes_commands(ap_t *ap, const lockstep_commands *cmd, uint64_t now) {
  (void)now;
  if (cmd->arm_request == LOCKSTEP_ARM_ARM && ap->mode == LOCKSTEP_MODE_DISARMED) arm(ap);
  if (cmd->arm_request == LOCKSTEP_ARM_DISARM && ap->mode != LOCKSTEP_MODE_DISARMED) {
    ap->mode = LOCKSTEP_MODE_DISARMED;
    ap->takeoff_then_mission = 0;
  }
  uint32_t req = cmd->mode_request;
  if (req != LOCKSTEP_MODE_NONE) {
    int flying = ap_mode_flying(ap->mode);
    /* On the ground the vehicle may be told to hold/RTL only when the
     * ground-contact sensor says it is not resting on the ground. */
    int airborne = flying || (on_ground(ap) && !ap->landed_flag);
    if (ap->mode == LOCKSTEP_MODE_DISARMED) {
      ap_set_error(ap, "mode request %u refused: disarmed", (unsigned)req);
    } else if (req == LOCKSTEP_MODE_HOLD && airborne) {
      enter_hold(ap);
    } else if (req == LOCKSTEP_MODE_RTL && airborne) {
      enter_rtl(ap, 0);
    } else if (req == LOCKSTEP_MODE_LAND && flying) {
      enter_land(ap, 0);
    } else if (req == LOCKSTEP_MODE_TAKEOFF && on_ground(ap)) {
      /* The height asked for (ABI 4; 0: MIS_TAKEOFF_ALT), over where the
       * vehicle stands. */
#if LOCKSTEP_AUTOPILOT_ABI_VERSION >= 4
      float h = cmd->takeoff_alt_m == 0.0f ? ap->p.takeoff_alt : cmd->takeoff_alt_m;
#else
      float h = ap->p.takeoff_alt;
#endif
      if (!(h >= AP_MIN_TAKEOFF_M && h <= AP_MAX_TAKEOFF_M)) {
        ap_set_error(ap, "takeoff refused: height %g m is outside [%g, %g]", (double)h, (double)AP_MIN_TAKEOFF_M,
                     (double)AP_MAX_TAKEOFF_M);
      } else {
        ap->takeoff_then_mission = 0;
        enter_takeoff(ap, ap->pos[2] - h);
      }
    } else if (req == LOCKSTEP_MODE_MISSION && ap->mission_count > 0) {
      begin_mission(ap, ap->mis_idx < 0 || ap->mission_finished ? 0 : ap->mis_idx);
    } else {
      ap_set_error(ap, "mode request %u refused in mode %u", (unsigned)req, (unsigned)ap->mode);
    }
  }
  if (cmd->mission_start) {
    if (ap->mode == LOCKSTEP_MODE_DISARMED)
      ap_set_error(ap, "mission start refused: disarmed");
    else
      begin_mission(ap, 0);
  }
  if (cmd->setpoint_mask != 0) offboard(ap, cmd);
}

static void land_detect(ap_t *ap, uint64_t now) {
  float weight = ap->cfg.mass_kg * ap->cfg.gravity_mps2;
  int cond = ap->landed_flag || (fabsf(ap->vel[2]) < 0.2f && ap->sp.thrust_n < 0.5f * weight);
  if (!cond) {
    ap->land_candidate = 0;
    return;
  }
  if (!ap->land_candidate) {
    ap->land_candidate = 1;
    ap->land_since_us = now;
    return;
  }
  if (now - ap->land_since_us >= seconds_to_us(ap->p.land_trig_time_s)) {
    if (ap->land_from_mission && (uint32_t)(ap->mis_idx + 1) >= ap->mission_count) ap->mission_finished = 1;
    ap->land_from_mission = 0;
    ap->mode = LOCKSTEP_MODE_LANDED;
    ap->landed_since_us = now;
  }
}

static void mission_update(ap_t *ap, uint64_t now) {
  const lockstep_mission_item *it = &ap->mission[ap->mis_idx];
  float dz = fabsf(ap->tgt.pos[2] - ap->pos[2]);
  switch (it->command) {
    case LOCKSTEP_MAV_CMD_NAV_TAKEOFF:
      if (dz < ap->p.acc_alt) setup_item(ap, ap->mis_idx + 1);
      return;
    case LOCKSTEP_MAV_CMD_NAV_LAND:
      if (horizontal_dist(ap, ap->tgt.pos) < ap->p.acc_rad) {
        /* Descend onto the item's point, not onto wherever we are. */
        float n = ap->tgt.pos[0], e = ap->tgt.pos[1];
        enter_land(ap, 1);
        ap->tgt.pos[0] = n;
        ap->tgt.pos[1] = e;
      }
      return;
    default:
      break;
  }
  if (!ap->wp_reached) {
    float acc = (it->command == LOCKSTEP_MAV_CMD_NAV_WAYPOINT && it->param2 > 0.0f) ? it->param2 : ap->p.acc_rad;
    if (horizontal_dist(ap, ap->tgt.pos) < acc && dz < ap->p.acc_alt) {
      ap->wp_reached = 1;
      ap->wp_reached_us = now;
    }
    return;
  }
  if (it->command == LOCKSTEP_MAV_CMD_NAV_LOITER_UNLIM) return; /* until told otherwise */
  if (now - ap->wp_reached_us >= seconds_to_us(it->param1) && it->autocontinue)
    setup_item(ap, ap->mis_idx + 1);
}

static void battery_failsafe(ap_t *ap) {
  if (!ap->p.low_bat_act || !ap_mode_flying(ap->mode)) return;
  uint32_t w = ap->battery_warning;
  if (w <= ap->bat_action_level) return;
  ap->bat_action_level = w;
  if (w >= LOCKSTEP_BATTERY_EMERGENCY && ap->mode != LOCKSTEP_MODE_LAND)
    enter_land(ap, 0);
  else if (w == LOCKSTEP_BATTERY_CRITICAL && ap->mode != LOCKSTEP_MODE_LAND && ap->mode != LOCKSTEP_MODE_RTL)
    enter_rtl(ap, 0);
}

void ap_modes_update(ap_t *ap, uint64_t now) {
  if (ap_mode_flying(ap->mode) && !ap->landed_flag) ap->took_off = 1;
  battery_failsafe(ap);
  /* Yaw authority lost: land where it is (once; a later command may still
   * send it elsewhere, without yaw). */
  if (ap->yaw_lost && !ap->yaw_lost_handled && ap_mode_flying(ap->mode)) {
    ap->yaw_lost_handled = 1;
    if (ap->mode != LOCKSTEP_MODE_LAND) enter_land(ap, 0);
  }
  switch (ap->mode) {
    case LOCKSTEP_MODE_TAKEOFF:
      if (fabsf(ap->tgt.pos[2] - ap->pos[2]) < ap->p.acc_alt) {
        if (ap->takeoff_then_mission) {
          ap->takeoff_then_mission = 0;
          setup_item(ap, ap->takeoff_advance ? ap->mis_idx + 1 : ap->mis_idx);
        } else {
          /* Hold at the height climbed to, not where the climb was
           * judged done (within NAV_ACC_ALT of it). */
          float z = ap->tgt.pos[2];
          enter_hold(ap);
          ap->tgt.pos[2] = z;
        }
      }
      break;
    case LOCKSTEP_MODE_MISSION:
      mission_update(ap, now);
      break;
    case LOCKSTEP_MODE_RTL:
      if (ap->rtl_phase == AP_RTL_CLIMB && fabsf(ap->tgt.pos[2] - ap->pos[2]) < ap->p.acc_alt) {
        ap->rtl_phase = AP_RTL_RETURN;
        ap->tgt.pos[0] = ap->home[0];
        ap->tgt.pos[1] = ap->home[1];
      } else if (ap->rtl_phase == AP_RTL_RETURN && horizontal_dist(ap, ap->home) < 0.5f * ap->p.acc_rad) {
        ap->rtl_phase = AP_RTL_DESCEND;
        ap->tgt.vz_override = 1;
        ap->tgt.vz = ap->p.land_speed;
        ap->land_candidate = 0;
      } else if (ap->rtl_phase == AP_RTL_DESCEND) {
        land_detect(ap, now);
      }
      break;
    case LOCKSTEP_MODE_LAND:
      land_detect(ap, now);
      break;
    case LOCKSTEP_MODE_HOLD:
    case LOCKSTEP_MODE_OFFBOARD:
      /* Set down by a setpoint, or told to hold once down: landed as in
       * LAND, then disarmed (PX4's land detector and auto-disarm run in
       * every mode). Only after a takeoff: OFFBOARD starts on the ground. */
      if (ap->took_off) land_detect(ap, now);
      break;
    case LOCKSTEP_MODE_LANDED:
      if (ap->p.disarm_land_s >= 0.0f && now - ap->landed_since_us >= seconds_to_us(ap->p.disarm_land_s))
        ap->mode = LOCKSTEP_MODE_DISARMED;
      break;
    default:
      break;
  }
}

int ap_mission_validate(ap_t *ap, const lockstep_mission_item *items, size_t count) {
  if (count > AP_MAX_MISSION) {
    ap_set_error(ap, "mission has %zu items, at most %d are supported", count, AP_MAX_MISSION);
    return 0;
  }
  for (size_t i = 0; i < count; i++) {
    const lockstep_mission_item *it = &items[i];
    uint32_t c = it->command;
    if (c == LOCKSTEP_MAV_CMD_DO_JUMP) {
      float t = it->param1, r = it->param2;
      if (!(t >= 0.0f) || t != floorf(t) || t >= (float)count) {
        ap_set_error(ap, "mission item %zu: DO_JUMP (177) to item %g: no such item (0 to %zu)", i, (double)t,
                     count - 1);
        return 0;
      }
      if (!(r >= -1.0f) || r != floorf(r) || r > 1e6f) {
        ap_set_error(ap, "mission item %zu: DO_JUMP (177) repeat count %g is not -1 or a count", i, (double)r);
        return 0;
      }
      continue;
    }
    if (c == LOCKSTEP_MAV_CMD_DO_CHANGE_SPEED) {
      float k = it->param1;
      if (!(k >= 0.0f && k <= 3.0f) || k != floorf(k)) {
        ap_set_error(ap, "mission item %zu: DO_CHANGE_SPEED (178) speed type %g is not 0 to 3", i, (double)k);
        return 0;
      }
      if (isinf(it->param2)) {
        ap_set_error(ap, "mission item %zu: DO_CHANGE_SPEED (178) speed is not finite", i);
        return 0;
      }
      continue;
    }
    if (c != LOCKSTEP_MAV_CMD_NAV_WAYPOINT && c != LOCKSTEP_MAV_CMD_NAV_LOITER_TIME &&
        c != LOCKSTEP_MAV_CMD_NAV_LOITER_UNLIM && c != LOCKSTEP_MAV_CMD_NAV_RETURN_TO_LAUNCH &&
        c != LOCKSTEP_MAV_CMD_NAV_LAND && c != LOCKSTEP_MAV_CMD_NAV_TAKEOFF) {
      ap_set_error(ap, "mission item %zu: command %u is not supported", i, (unsigned)c);
      return 0;
    }
    if (c != LOCKSTEP_MAV_CMD_NAV_RETURN_TO_LAUNCH && it->frame != LOCKSTEP_MAV_FRAME_GLOBAL &&
        it->frame != LOCKSTEP_MAV_FRAME_GLOBAL_RELATIVE_ALT) {
      ap_set_error(ap, "mission item %zu: frame %u is not supported (0 or 3)", i, (unsigned)it->frame);
      return 0;
    }
    /* NaN params are unset; infinities are refused. */
    if (!isfinite(it->lat_deg) || !isfinite(it->lon_deg) || fabs(it->lat_deg) > 90.0 ||
        fabs(it->lon_deg) > 180.0 || !isfinite(it->alt_m) || isinf(it->param1) || isinf(it->param2)) {
      ap_set_error(ap, "mission item %zu: position or parameters out of range", i);
      return 0;
    }
    if (it->param1 < 0.0f && (c == LOCKSTEP_MAV_CMD_NAV_WAYPOINT || c == LOCKSTEP_MAV_CMD_NAV_LOITER_TIME)) {
      ap_set_error(ap, "mission item %zu: hold time %g s is negative", i, (double)it->param1);
      return 0;
    }
  }
  return 1;
}
