"""Lockstep rounds per second against each flight-stack peer over loopback,
side by side with the same flight on the in-process reference autopilot,
paired in one run (a benchmark: not run by the tests).

    python3 tests/peers/bench_rounds.py [--reps 3] [--duration 45]

For each peer: the wall time of a flight of DURATION simulated seconds, its
real-time factor, rounds per second, and the added wall time per round
against the library flown on the same scenario just before (the peer's own
controller, in Python, is part of it; the `echo` rows answer at once and
show the link alone).
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("LOCKSTEP_BIN", os.path.join(ROOT, "target", "release", "lockstep"))
SCEN = {"px4": os.path.join(ROOT, "examples", "scenarios", "px4_sitl.toml"),
        "ardupilot": os.path.join(ROOT, "examples", "scenarios", "ardupilot_json.toml")}
RATE = {"px4": 250, "ardupilot": 400}


def port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def as_library(path):
    """The scenario without its [autopilot] section: the bundled library flies it."""
    text, keep = open(path).read().split("\n"), []
    skip = False
    for line in text:
        if line.startswith("["):
            skip = line.strip() == "[autopilot]"
        if not skip:
            keep.append(line)
    f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False, dir=os.path.dirname(path))
    f.write("\n".join(keep))
    f.close()
    return f.name


def fly(args, peer=None):
    run = subprocess.Popen([BIN, "fly"] + args + ["--json"], stdout=subprocess.PIPE, text=True)
    if peer:
        subprocess.run(peer, check=True, capture_output=True)
    out, _ = run.communicate()
    return json.loads(out)["wall_time_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=45.0)
    a = ap.parse_args()
    rows = []
    libs = {k: as_library(v) for k, v in SCEN.items()}
    try:
        measure(a, rows, libs)
    finally:
        for f in libs.values():
            os.unlink(f)
    print("%-10s %-5s %12s %12s %10s %10s %14s" % ("peer", "plan", "library s", "peer s",
                                                   "RTF peer", "rounds/s", "added us/round"))
    for stack, plan, wl, wp, rounds in rows:
        print("%-10s %-5s %12.3f %12.3f %10.1f %10.0f %14.1f" % (
            stack, plan, wl, wp, a.duration / wp, rounds / wp, (wp - wl) / rounds * 1e6))


def measure(a, rows, libs):
    for stack in ["px4", "ardupilot"]:
        for plan in ["box", "echo"]:
            lib, peer = [], []
            for _ in range(a.reps):
                base = [SCEN[stack], "--duration", str(a.duration)]
                lib.append(fly([libs[stack], "--duration", str(a.duration),
                                "--isolation", "in-process"]))
                if stack == "px4":
                    p = port(socket.SOCK_STREAM)
                    cmd = [sys.executable, os.path.join(HERE, "px4_peer.py"), "--port", str(p),
                           "--plan", plan]
                    extra = ["--set", 'autopilot.boot="strict"']
                else:
                    p = port(socket.SOCK_DGRAM)
                    cmd = [sys.executable, os.path.join(HERE, "ardupilot_peer.py"), "--port",
                           str(p), "--plan", plan]
                    extra = []
                peer.append(fly(base + ["--set", "autopilot.port=%d" % p] + extra, cmd))
            rounds = a.duration * RATE[stack] + 1
            wl, wp = statistics.median(lib), statistics.median(peer)
            rows.append((stack, plan, wl, wp, rounds))


if __name__ == "__main__":
    main()
