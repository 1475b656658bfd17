#!/usr/bin/env python3
"""Live-recording benchmark (`make bench`): the release `cyclelog record` against the BlueZ stand-in on a private
dbus-daemon, three sensors (power 4 Hz, CSC 2 Hz, heart rate 1 Hz) played from a real ride, in real time for
LIVE_BENCH_SECONDS (default 600: ten minutes of riding). Ended with SIGTERM like a service stop; then the
process's CPU time and peak RSS from wait4() and cyclelog's own arrival-to-stored latency (`record --latency`).
Targets: under 1 % of one core, under 25 MB RSS, p99 stored within 1.5 s.

Then `record --auto` waiting for a ride for LIVE_BENCH_WAIT_SECONDS (default 120): the power meter connected and
sending 0 W without crank data at 4 Hz, as a bike that stands by the trainer, all day. Target: under 1 % of one
core, under 25 MB RSS."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import results
from results import CYCLELOG, ROOT

STANDIN = os.path.join(ROOT, "Tests", "BlueZStandIn", "bluez_standin.py")
RIDE = os.path.join(ROOT, "Fixtures", "rides", "sweatpy_2020-06-01-16-52-40.journal")
SECONDS = float(os.environ.get("LIVE_BENCH_SECONDS", "600"))
WAIT_SECONDS = float(os.environ.get("LIVE_BENCH_WAIT_SECONDS", "120"))
SENSORS = [
    {"address": "C0:11:22:33:44:01", "name": "Stages Power L", "service": "1818", "measurement": "2a63",
     "journal": RIDE, "rateHz": 4, "battery": 80, "reads": {"2a65": "08000000", "2a5d": "05"}},
    {"address": "C0:11:22:33:44:02", "name": "Wahoo CADENCE", "service": "1816", "measurement": "2a5b",
     "journal": RIDE, "rateHz": 2, "battery": 60, "reads": {"2a5c": "0300"}},
    {"address": "C0:11:22:33:44:03", "name": "Polar H10", "service": "180d", "measurement": "2a37",
     "journal": RIDE, "rateHz": 1, "battery": 95},
]


def wait_for_line(path, text, seconds, process):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path) and text in open(path).read():
            return
        if process.poll() is not None:
            break
        time.sleep(0.05)
    sys.exit("live bench: %s never printed %r:\n%s" % (path, text, open(path).read() if os.path.exists(path) else ""))


def resident_mb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def verdict(ok):
    return "ok" if ok else "MISSED"


def main():
    ride()
    wait()


def wait():
    """`record --auto` with a standing bike: what the service costs between rides."""
    standing = dict(SENSORS[0], stillSeconds=1e9)
    with StandIn([standing]) as stand_in:
        database = os.path.join(stand_in.folder, "auto.sqlite")
        subprocess.run([CYCLELOG, "sensors", "add", standing["address"], "--db", database], check=True,
                       stdout=subprocess.DEVNULL)
        print("live bench: record --auto waiting beside a standing power meter for %.0f s (LIVE_BENCH_WAIT_SECONDS)"
              % WAIT_SECONDS, flush=True)
        record_log = os.path.join(stand_in.folder, "auto.log")
        record = stand_in.start([CYCLELOG, "record", "--auto", "--plain", "--db", database], record_log)
        wait_for_line(stand_in.sent_log, "2a63", 30, record)
        time.sleep(WAIT_SECONDS)
        waiting_rss_mb = resident_mb(record.pid)
        record.send_signal(signal.SIGTERM)
        _, status, usage = os.wait4(record.pid, 0)
        record.returncode = os.waitstatus_to_exitcode(status)
        output = open(record_log).read()
        if record.returncode != 0 or "Stopped while waiting for a ride." not in output:
            sys.exit("live bench: record --auto ended with status %d:\n%s" % (record.returncode, output))
        standing_values = sum(1 for line in open(stand_in.sent_log) if line.split()[2] == "2a63")
        cpu = usage.ru_utime + usage.ru_stime
        core_percent = 100 * cpu / WAIT_SECONDS
        print("| record --auto waiting, %.0f s | value | target |" % WAIT_SECONDS)
        print("|---|---|---|")
        print("| standing notifications received (0 W, no crank data) | %d | |" % standing_values)
        print("| CPU time per minute of waiting | %.3f s (%.2f %% of one core) | < 1 %% (%s) |"
              % (cpu / (WAIT_SECONDS / 60), core_percent, verdict(core_percent < 1)))
        print("| RSS while waiting / peak | %.1f / %.1f MB | < 25 MB (%s) |"
              % (waiting_rss_mb, usage.ru_maxrss / 1024, verdict(usage.ru_maxrss / 1024 < 25)))
        results.add("record --auto, waiting", "CPU time per minute", median=round(cpu / (WAIT_SECONDS / 60), 3),
                    unit="s", peak_mb=usage.ru_maxrss / 1024, target="< 1 % of a core, < 25 MB",
                    met=core_percent < 1 and usage.ru_maxrss / 1024 < 25)


class StandIn:
    """A private dbus-daemon with the BlueZ stand-in playing `sensors`; children stopped on exit. With
    `service_directories`, the bus activates services from FOLDER/share/dbus-1/services; `extra` goes into the
    scenario beside them (a `hub`)."""

    def __init__(self, sensors, service_directories=False, extra=None):
        self.sensors = sensors
        self.extra = extra or {}
        self.children = []
        self.service_directories = service_directories

    def __enter__(self):
        self.folder = tempfile.mkdtemp(prefix="cyclelog-live-bench-")
        self.address = "unix:path=" + os.path.join(self.folder, "bus")
        config = os.path.join(self.folder, "bus.conf")
        with open(config, "w") as file:
            services = os.path.join(self.folder, "share", "dbus-1", "services")
            file.write(BUS_CONFIG % (self.address, "<servicedir>%s</servicedir>" % services
                                     if self.service_directories else ""))
        scenario = os.path.join(self.folder, "scenario.json")
        self.sent_log = os.path.join(self.folder, "sent.log")
        with open(scenario, "w") as file:
            json.dump(dict(self.extra, sensors=self.sensors, sentLog=self.sent_log), file)
        daemon = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile"],
                                  stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.folder, "bus.log"), "w"))
        self.children.append(daemon)
        while not os.path.exists(os.path.join(self.folder, "bus")):
            time.sleep(0.01)
        standin_log = os.path.join(self.folder, "standin.log")
        standin = subprocess.Popen([sys.executable, STANDIN, "--address", self.address, "--scenario", scenario],
                                   stdout=open(standin_log, "w"), stderr=subprocess.STDOUT)
        self.children.append(standin)
        wait_for_line(standin_log, "on the bus as org.bluez", 20, standin)
        return self

    def start(self, command, log_path):
        environment = dict(os.environ, CYCLELOG_DBUS_ADDRESS=self.address, CYCLELOG_CONTROL_BUS=self.address)
        process = subprocess.Popen(command, env=environment, stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
        self.children.append(process)
        return process

    def __exit__(self, *_):
        for child in reversed(self.children):
            if child.poll() is None:
                child.terminate()
                try:
                    child.wait(5)
                except subprocess.TimeoutExpired:
                    child.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>%s</listen><auth>EXTERNAL</auth>%s
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/>
</policy></busconfig>
"""


def ride():
    """`record` with three sensors for SECONDS of riding."""
    with StandIn(SENSORS) as stand_in:
        folder, sent_log = stand_in.folder, stand_in.sent_log
        record_log = os.path.join(folder, "record.log")
        command = [CYCLELOG, "record", "--plain", "--latency", "--db", os.path.join(folder, "live.sqlite")]
        for sensor in SENSORS:
            command += ["--sensor", sensor["address"]]
        print("live bench: recording three sensors for %.0f s in real time (LIVE_BENCH_SECONDS)" % SECONDS,
              flush=True)
        record = stand_in.start(command, record_log)
        wait_for_line(sent_log, "2a37", 30, record)
        time.sleep(SECONDS)
        riding_rss_mb = resident_mb(record.pid)
        stop_time = time.time()
        record.send_signal(signal.SIGTERM)
        _, status, usage = os.wait4(record.pid, 0)
        record.returncode = os.waitstatus_to_exitcode(status)
        output = open(record_log).read()
        if record.returncode != 0:
            sys.exit("live bench: cyclelog record ended with status %d:\n%s" % (record.returncode, output))
        match = re.search(r"store latency: (\d+) notifications, p50 (\d+) ms, p99 (\d+) ms, max (\d+) ms", output)
        if not match:
            sys.exit("live bench: no latency line in the output:\n" + output)
        sent = sum(1 for line in open(sent_log) if float(line.split()[0]) < stop_time)
        stored, p50, p99, worst = (int(value) for value in match.groups())
        cpu = usage.ru_utime + usage.ru_stime
        minutes = SECONDS / 60
        rss_mb = usage.ru_maxrss / 1024
        core_percent = 100 * cpu / SECONDS
        print("| live recording, %.0f s, 3 sensors | value | target |" % SECONDS)
        print("|---|---|---|")
        print("| notifications sent before SIGTERM / stored | %d / %d | all |" % (sent, stored))
        print("| CPU time (whole process, incl. start) | %.2f s | |" % cpu)
        print("| CPU time per minute of riding | %.3f s (%.2f %% of one core) | < 1 %% (%s) |"
              % (cpu / minutes, core_percent, verdict(core_percent < 1)))
        print("| RSS while riding, just before SIGTERM | %.1f MB | |" % riding_rss_mb)
        print("| peak RSS (whole process, incl. saving at the end) | %.1f MB | < 25 MB (%s) |"
              % (rss_mb, verdict(rss_mb < 25)))
        print("| arrival → stored p50 / p99 / max | %d / %d / %d ms | p99 ≤ 1500 ms (%s) |"
              % (p50, p99, worst, verdict(p99 <= 1500)))
        results.add("record, 3 sensors", "CPU time per minute of riding", median=round(cpu / minutes, 3), unit="s",
                    peak_mb=rss_mb, target="< 1 % of a core, < 25 MB", met=core_percent < 1 and rss_mb < 25)
        results.add("record, 3 sensors", "arrival → stored, p99 (p50 %d ms)" % p50, median=p99, unit="ms",
                    target="p99 ≤ 1500 ms", met=p99 <= 1500)


if __name__ == "__main__":
    main()
