"""The MAVLink vehicle's cost, measured (a benchmark: not run by the tests).

    python3 tests/peers/bench_gcs.py [--reps 5] [--duration 600] [--long 7200]

1. Wall time per boundary of the ground-station example flown as fast as
   possible, served to a station that reads every message (a pymavlink
   connection on loopback, streaming the default telemetry), against the
   same flight not served; the runs alternate (A B A B ...) and the ratio is
   taken pair by pair, so a drifting machine does not bias it.
2. The served process's resident memory over a long flight (LONG simulated
   seconds) as fast as possible with the station reading: sampled from
   /proc every second; flat means no growth with time.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("LOCKSTEP_BIN", os.path.join(ROOT, "target", "release", "lockstep"))
GCS = os.path.join(ROOT, "examples", "scenarios", "gcs.toml")


class Station:
    """A station that reads and counts every datagram, as a ground station
    listening on its port does."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.count, self.stop = 0, False
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while not self.stop:
            try:
                self.sock.recvfrom(65536)
                self.count += 1
            except socket.timeout:
                pass

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


def fly(duration, station, out):
    # Both paced alike: as fast as the machine goes.
    args = [BIN, "fly", GCS, "--json", "--duration", str(duration), "--out", out,
            "--speed", "1e6"]
    if station is not None:
        args += ["--mavlink", "udp:127.0.0.1:%d" % station.port]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    report = json.loads(r.stdout)
    return report["wall_time_s"], report["boundaries"]


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", type=float, default=600.0)
    ap.add_argument("--long", type=float, default=7200.0)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-gcs-")
    ratios, served_us, alone_us, datagrams = [], [], [], []
    for i in range(a.reps + 1):
        st = Station()
        w_served, b = fly(a.duration, st, os.path.join(tmp, "s%d" % i))
        time.sleep(0.3)
        st.close()
        w_alone, b2 = fly(a.duration, None, os.path.join(tmp, "a%d" % i))
        assert b == b2
        if i == 0:
            continue  # warm-up
        served_us.append(w_served / b * 1e6)
        alone_us.append(w_alone / b * 1e6)
        ratios.append(w_served / w_alone)
        datagrams.append(st.count)
    print("flight: %s, %g s simulated, %d boundaries, %d pairs after a warm-up"
          % (os.path.basename(GCS), a.duration, b, a.reps))
    for name, xs in [("served us/boundary", served_us), ("alone us/boundary", alone_us),
                     ("ratio served/alone", ratios)]:
        print("%-20s min %.3f  median %.3f  max %.3f" % (name, min(xs), statistics.median(xs), max(xs)))
    print("datagrams read by the station per flight: median %d" % statistics.median(datagrams))

    st = Station()
    args = [BIN, "fly", GCS, "--json", "--duration", str(a.long), "--speed", "1e6",
            "--mavlink", "udp:127.0.0.1:%d" % st.port, "--out", os.path.join(tmp, "long")]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []
    while p.poll() is None:
        r = rss_kib(p.pid)
        if r is not None:
            samples.append(r)
        time.sleep(1.0)
    out, _ = p.communicate()
    st.close()
    report = json.loads(out)
    n = len(samples)
    print("long flight: %g s simulated in %.1f s of wall time; RSS (KiB) over %d samples: "
          "first %d, at a quarter %d, half %d, three quarters %d, last %d, max %d"
          % (a.long, report["wall_time_s"], n, samples[0], samples[n // 4], samples[n // 2],
             samples[3 * n // 4], samples[-1], max(samples)))


if __name__ == "__main__":
    sys.exit(main())
