"""The FMU checked by an independent FMI master (FMPy, from PyPI).

usage: python3 .ci/fmu-check.py VEHICLE.FMU NATIVE_LOG.CSV

- fmpy's validation of the FMU reports nothing;
- fmpy.simulate_fmu over the whole scenario (90,000 doStep calls of 1 ms)
  reproduces the native run's true state bit for bit at every row of the
  native CSV log (`lockstep fly --log`, whose numbers round-trip exactly);
- a communication step that is not a whole number of microseconds is
  refused with fmi2Error and a logged message saying so, the instance then
  in FMI's error state until fmi2Reset;
- a simulation asked to run past the scenario's end keeps everything up to
  the end (each step from the end is fmi2Discard with fmi2Terminated, which
  FMPy takes as the end of the run);
- the doStep cost from FMPy, per 1 ms step, is printed for the notes.
"""
import contextlib
import csv
import io
import sys
import time

from fmpy import read_model_description, simulate_fmu
from fmpy.fmi2 import FMU2Slave
from fmpy.validation import validate_fmu
from fmpy import extract

fmu, log = sys.argv[1], sys.argv[2]

problems = validate_fmu(fmu)
if problems:
    sys.exit("fmpy.validate_fmu: " + "; ".join(problems))
print("validate_fmu: no problems")

md = read_model_description(fmu)
stop = float(md.defaultExperiment.stopTime)
names = ["north_m", "east_m", "down_m", "v_north_mps", "v_east_mps", "v_down_mps",
         "q_w", "q_x", "q_y", "q_z", "p_radps", "q_radps", "r_radps"]
columns = ["x_m", "y_m", "z_m", "vx_mps", "vy_mps", "vz_mps",
           "qw", "qx", "qy", "qz", "p_radps", "q_radps", "r_radps"]

native = {}
with open(log) as f:
    for row in csv.DictReader(f):
        native[int(row["time_us"])] = [float(row[c]) for c in columns]

t0 = time.perf_counter()
# For co-simulation FMPy steps at the output interval: 1 ms steps.
result = simulate_fmu(fmu, stop_time=stop, step_size=0.001, output_interval=0.001,
                      output=["truth_" + n for n in names])
wall = time.perf_counter() - t0
compared = 0
for r in result:
    t_us = round(r["time"] * 1e6)
    if t_us not in native:
        continue
    fmu_state = [float(r["truth_" + n]) for n in names]
    if fmu_state != native[t_us]:
        diffs = [(n, a, b) for n, a, b in zip(names, fmu_state, native[t_us]) if a != b]
        sys.exit(f"t = {t_us} us: the FMU and the native run differ: {diffs[:3]}")
    compared += 1
if compared < len(native) * 0.99:
    sys.exit(f"compared only {compared} of {len(native)} native rows")
steps = round(stop / 0.001)
print(f"simulate_fmu: {compared} rows bit-identical to the native run "
      f"({steps} doStep calls in {wall:.2f} s: {wall / steps * 1e6:.1f} us per 1 ms step, from FMPy)")

# A step that is not whole microseconds: refused, and the log says why
# (FMPy's default logger prints the FMU's messages).
unzipped = extract(fmu)
slave = FMU2Slave(guid=md.guid, unzipDirectory=unzipped,
                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName="check")
slave.instantiate(loggingOn=True)
slave.setupExperiment(startTime=0.0)
slave.enterInitializationMode()
slave.exitInitializationMode()
slave.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.001)
printed = io.StringIO()
try:
    with contextlib.redirect_stdout(printed):
        slave.doStep(currentCommunicationPoint=0.001, communicationStepSize=0.0005005)
    sys.exit("a step of 500.5 us was accepted")
except Exception as e:  # fmpy raises FMICallException on fmi2Error
    expected = "fmi2DoStep: the communication step 0.0005005 s is not a whole number of microseconds"
    if expected not in printed.getvalue():
        sys.exit(f"refused ({e}) without logging `{expected}`: {printed.getvalue()!r}")
    print(f"a step of 500.5 us: refused, logged `{expected}`")
# FMI 2.0's error state after it: fmi2Terminate refused, fmi2Reset taken.
try:
    with contextlib.redirect_stdout(io.StringIO()):
        slave.terminate()
    sys.exit("fmi2Terminate was taken after fmi2Error")
except Exception:
    print("after it: fmi2Terminate refused (FMI's error state), fmi2Reset taken")
slave.reset()
slave.freeInstance()

# Past the end: FMPy stops at the scenario's end with every row before it.
with contextlib.redirect_stdout(io.StringIO()):
    past = simulate_fmu(fmu, stop_time=stop + 2.0, step_size=0.5, output_interval=0.5,
                        output=["truth_north_m"])
# (FMPy records the point it stopped at once more after the discarded step.)
if past["time"][-1] != stop or len(set(past["time"])) != round(stop / 0.5) + 1:
    sys.exit(f"a run past the end kept {len(past)} rows to {past['time'][-1]} s, not the whole {stop} s")
print(f"simulate_fmu to {stop + 2.0} s: {len(past)} rows, to the scenario's end at {stop} s")
print("fmu check: ok")
