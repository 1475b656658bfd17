#!/usr/bin/env python3
"""Inside the VM: an emulated sensor on hci1 and the real cyclelog binary on hci0, through one ride.

  drive.py --cyclelog BIN --streams STREAMS.json --out DIR   (streams from emulated_sensors.py)

1. `cyclelog scan` before the ride (the sensors advertising) and during it (connected, with their battery).
2. `cyclelog record`; `cyclelog pause`, `resume`, `lap` from another process over D-Bus; the sensor drops the
   link and comes back; it goes silent while connected; `cyclelog end`.

The sensor offers Cycling Power, Cycling Speed and Cadence and Heart Rate in one device (as a smart trainer with
a heart-rate relay does): btvirt (BlueZ 5.66) hands the peripheral of a second link from the same central the
wrong connection handle, so only the first link to each of its controllers carries data.
Everything lands in DIR: sent.log (every notification handed to bluetoothd), timeline.json (when each step
happened), record.log, scan-*.json and the database. check.py judges it afterwards, outside the VM.
"""
import argparse
import asyncio
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import emulated_sensors  # noqa: E402

SENSORS = [  # kinds, adapter, name, battery %
    (["power", "csc", "heart"], "hci1", "Emulated Bike", 76),
]


class Driver:
    def __init__(self, args):
        self.args = args
        self.out = args.out
        self.timeline = {}
        self.log = open(os.path.join(self.out, "sent.log"), "w")

    def mark(self, step):
        self.timeline[step] = time.time()
        print("[drive] %7.1f s  %s" % (time.monotonic() - self.started, step), flush=True)

    async def cyclelog(self, *arguments, output=None, timeout=60):
        command = [self.args.cyclelog, *arguments]
        stdout = open(os.path.join(self.out, output), "w") if output else asyncio.subprocess.PIPE
        process = await asyncio.create_subprocess_exec(*command, stdout=stdout, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), timeout)
        if process.returncode != 0:
            raise SystemExit("`%s` failed (%d): %s" % (" ".join(command), process.returncode, err.decode()))
        return out

    async def wait_for(self, what, condition, timeout):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise SystemExit("gave up after %d s waiting for %s" % (timeout, what))
            if self.recorder.returncode is not None:
                raise SystemExit("cyclelog record ended early while waiting for " + what)
            await asyncio.sleep(0.2)

    async def power_flows_again(self, sensor, step):
        """Waits until the sensor has handed bluetoothd five more power values, then marks `step`."""
        before = sensor.sent[0x2A63]
        await self.wait_for(step, lambda: sensor.sent[0x2A63] > before + 4, 60)
        self.mark(step)

    async def run(self):
        self.started = time.monotonic()
        bus = await emulated_sensors.system_bus()
        with open(self.args.streams) as f:
            streams = json.load(f)
        sensors = [emulated_sensors.Sensor(bus, kinds, adapter, name, battery, streams, self.log)
                   for kinds, adapter, name, battery in SENSORS]
        emulated_sensors.answer_advertisement_objects(
            bus, {sensor.root + "/advertisement": sensor.advertisement for sensor in sensors})
        for sensor in sensors:
            await sensor.register()
        self.mark("sensors advertising")
        bike = sensors[0]
        origin = min(second for stream in streams.values() for second, _ in stream)
        playing = [asyncio.ensure_future(sensor.play(time.monotonic(), origin)) for sensor in sensors]

        await self.cyclelog("scan", "--adapter", "hci0", "--timeout", "6", "--json", output="scan-before.json")
        self.mark("scanned")

        # SQLite's shared-memory WAL index does not work on the VM's shared folder: the database lives in the
        # guest's own memory and is copied out at the end.
        database = "/tmp/ride.sqlite"
        record = [self.args.cyclelog, "record", "--adapter", "hci0", "--plain", "--db", database,
                  "--name", "Real stack ride"]
        for sensor in sensors:
            record += ["--sensor", sensor.address]
        self.recorder = await asyncio.create_subprocess_exec(
            *record, stdout=open(os.path.join(self.out, "record.log"), "w"), stderr=asyncio.subprocess.STDOUT)
        self.mark("record started")
        measurements = (0x2A63, 0x2A5B, 0x2A37)
        await self.wait_for("every measurement to stream",
                            lambda: all(bike.sent[m] >= 4 for m in measurements), 120)
        self.mark("all streaming")

        await self.cyclelog("scan", "--adapter", "hci0", "--timeout", "2", "--json", output="scan-during.json")
        self.mark("scanned while recording")
        for command in ("pause", "resume", "lap"):
            await asyncio.sleep(4)
            await self.cyclelog(command)
            self.mark(command)

        await asyncio.sleep(3)
        self.mark("link drop")
        await bike.drop_link(self.args.drop_seconds)
        self.mark("back in range")
        await self.power_flows_again(bike, "streaming again")

        await asyncio.sleep(3)
        self.mark("silence")
        bike.silence(self.args.silence_seconds)
        await asyncio.sleep(self.args.silence_seconds)
        self.mark("talks again")
        await self.power_flows_again(bike, "streaming after the silence")

        await asyncio.sleep(4)
        await self.cyclelog("end")
        self.mark("end")
        await asyncio.wait_for(self.recorder.wait(), 60)
        self.mark("record exited %d" % self.recorder.returncode)
        for task in playing:
            task.cancel()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(database + suffix):
                shutil.copy(database + suffix, os.path.join(self.out, "ride.sqlite" + suffix))
        with open(os.path.join(self.out, "timeline.json"), "w") as f:
            json.dump({"sensor": {"address": bike.address, "name": bike.name, "battery": bike.battery},
                       "steps": self.timeline}, f, indent=1)
        if self.recorder.returncode != 0:
            raise SystemExit("cyclelog record exited with %d" % self.recorder.returncode)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cyclelog", required=True)
    parser.add_argument("--streams", required=True)
    parser.add_argument("--drop-seconds", type=float, default=10)
    parser.add_argument("--silence-seconds", type=float, default=12)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    asyncio.run(Driver(args).run())


if __name__ == "__main__":
    main()
