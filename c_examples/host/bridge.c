/* Mode 2, the autopilot against a plant the host owns.
 *
 *   bridge SCENARIO AUTOPILOT
 *
 * The host's physics here is lockstep's own plant (a lockstep_plant made
 * from the same scenario), standing in for a game engine or a robotics
 * simulator: at each boundary the bridge asks for, the host advances its
 * plant there, hands over the truth and battery, gets the motor commands
 * back and holds them (with the bridge's wind) until the next boundary.
 * Prints the true state every second as `sim` does (the same flight, bit
 * for bit), walks the error paths, and prints "ok". */
#include "common.h"

#include <math.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SCENARIO AUTOPILOT\n", argv[0]);
    return 2;
  }
  host_check_version();
  lockstep_options options;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.isolation = LOCKSTEP_ISOLATION_IN_PROCESS;
  options.autopilot_path = argv[2];

  lockstep_bridge *bridge = NULL;
  CHECK(lockstep_bridge_new_from_file(argv[1], &options, &bridge));
  lockstep_plant *plant = NULL; /* the host's physics */
  CHECK(lockstep_plant_new_from_scenario(argv[1], &plant));
  uint32_t rotors = 0;
  CHECK(lockstep_bridge_rotor_count(bridge, &rotors));

  uint64_t now = 0, t = 0;
  lockstep_actuators act = {.size = sizeof act};
  while (lockstep_bridge_next_time_us(bridge, &t) == LOCKSTEP_OK) {
    CHECK(lockstep_plant_step(plant, t - now));
    now = t;
    lockstep_truth truth = {.size = sizeof truth};
    CHECK(lockstep_plant_truth(plant, &truth));
    lockstep_battery_state battery = {.size = sizeof battery};
    CHECK(lockstep_plant_battery(plant, 0, &battery));
    if (battery.remaining < 0.0) battery.remaining = 0.0;
    CHECK(lockstep_bridge_step(bridge, &truth, &battery, &act));
    CHECK(lockstep_plant_set_motors(plant, act.motors, act.motor_count));
    double wind[3];
    CHECK(lockstep_bridge_wind(bridge, wind));
    CHECK(lockstep_plant_set_wind(plant, wind));
    if (t % 1000000 == 0) print_state(&truth);
  }
  printf("actuators mode=%" PRIu32 " armed=%" PRIu32 " mission_current=%" PRId32
         " finished=%" PRIu32 "\n", act.mode, act.armed,
         act.mission_current, act.mission_finished);

  /* The error paths. */
  lockstep_truth truth = {.size = sizeof truth};
  CHECK(lockstep_plant_truth(plant, &truth));
  EXPECT(lockstep_bridge_step(bridge, &truth, NULL, &act), LOCKSTEP_ERR_ENDED);
  lockstep_fault fault = {.size = sizeof fault, .kind = LOCKSTEP_FAULT_MOTOR_FAIL, .index = 0};
  EXPECT(lockstep_bridge_fault(bridge, &fault), LOCKSTEP_ERR_UNSUPPORTED);
  fault.kind = LOCKSTEP_FAULT_SENSOR_DROPOUT;
  fault.index = LOCKSTEP_SENSOR_GPS;
  CHECK(lockstep_bridge_fault(bridge, &fault));
  EXPECT(lockstep_bridge_step(bridge, NULL, NULL, &act), LOCKSTEP_ERR_NULL);
  EXPECT(lockstep_plant_set_motors(plant, act.motors, rotors + 1), LOCKSTEP_ERR_ARGUMENT);
  double nan_wind[3] = {0.0, NAN, 0.0};
  EXPECT(lockstep_plant_set_wind(plant, nan_wind), LOCKSTEP_ERR_ARGUMENT);
  /* A handle of one type is not one of another. */
  EXPECT(lockstep_plant_step((lockstep_plant *)bridge, 1000), LOCKSTEP_ERR_HANDLE);
  CHECK(lockstep_bridge_free(bridge));
  EXPECT(lockstep_bridge_free(bridge), LOCKSTEP_ERR_HANDLE);
  CHECK(lockstep_plant_free(plant));
  EXPECT(lockstep_plant_free(plant), LOCKSTEP_ERR_HANDLE);
  printf("ok\n");
  return 0;
}
