#!/usr/bin/env python3
"""Inside the VM: emulated sensors on virtual controllers and the real cyclelog binary, through six rides.

  drive.py --cyclelog BIN --mirror BIN --streams STREAMS.json --phone HOST:PORT --out DIR
  (streams from emulated_sensors.py; the phone is phone.py on the host, run.sh says how it is reached)

1. btvirt (BlueZ to BlueZ, ATT 0x23): one device with Cycling Power, Cycling Speed and Cadence and Heart Rate (as
   a smart trainer with a heart-rate relay) registered with bluetoothd on hci1; `cyclelog scan` and a short
   `cyclelog record` on hci0. btvirt (BlueZ 5.66) hands the peripheral of a second link from the same central the
   wrong connection handle, so this ride keeps one link.
2. bumble (ATT 0x1B, as real sensors send): a power meter, a speed and cadence sensor and a heart-rate strap, each
   its own device, and the kernel's controller behind /dev/vhci on the same emulated air. `cyclelog scan` before
   and during the ride (connected, with their batteries); `cyclelog record`; `cyclelog pause`, `resume`, `lap`
   from another process over D-Bus; the power meter drops its link and comes back; the speed sensor goes silent
   while connected; `cyclelog end`.
3. auto (the same bumble air): the power meter is added with `cyclelog sensors add`, zeroed and given a crank
   length with `cyclelog calibrate` through its control point (write + indicate); then `cyclelog record --auto`
   waits while the bike stands, records when the meter sends power, and saves the ride on its own after
   --end-after without pedalling; SIGTERM stops it while it waits for the next ride.
4. wait (the same air): `cyclelog record --wait`, then `cyclelog start`, `marker`, `water` and `end` from the command
   line, with `cyclelog-mirror` beside it and a paired stream client reading every message it sends.
5. trainer (the same air): `cyclelog record --control erg` steering bumble's trainer; a target from the phone's API;
   a lap and a pause tapped on the mirror's page on the rider's phone (Chromium on the host, phone.py) and each
   undone from the page's Undo; `end` letting the trainer go.
6. hub (the same air and a second kernel controller): `cyclelog record --bridge` advertising as a sensor hub; an app
   (a bumble central) subscribes, sets its wheel count, rides ERG through it, leaves and comes back --hub-reconnects
   times; with --hub-soak N it stays once more while the sensors play faster, until it has received N
   notifications; an app over DirCon (`cyclelog-mirror serve --dircon`) last.
With --service (service_guest.sh, systemd as PID 1): cyclelog.service as `make install` leaves it, recording the btvirt
bike: started (READY=1), killed with SIGKILL (Restart= brings it back), stopped with `systemctl stop` (the ride
saved), started again and frozen with SIGSTOP (the watchdog restarts it), stopped again; what systemd and /proc say
about the process at each step goes to DIR/service/facts.json.
Everything lands in DIR/<ride>: sent.log (every notification the sensors sent), timeline.json (the sensors and when
each step happened), record.log, scan-*.json and the database. check.py judges it afterwards, outside the VM.
"""
import argparse
import asyncio
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import emulated_sensors  # noqa: E402
import ride_sensors  # noqa: E402 (on the path emulated_sensors sets)
from dbus_fast import Variant  # noqa: E402

MEASUREMENTS = {"power": 0x2A63, "csc": 0x2A5B, "heart": 0x2A37}
BUMBLE_KERNEL_CONTROLLER = "00:AA:02:00:00:00"
BUMBLE_SENSORS = [  # kind, address, name, battery %
    ("power", "00:AA:02:00:00:01", "Emulated Power", 81),
    ("csc", "00:AA:02:00:00:02", "Emulated Speed", 64),
    ("heart", "00:AA:02:00:00:03", "Emulated Heart", 12),
]
BYSTANDER = ("00:AA:02:00:00:09", "Keyboard")  # legacy advertising data holds 31 octets
TRAINER = ("00:AA:02:00:00:04", "Emulated Trainer")
HUB_CONTROLLER = "00:AA:02:00:00:05"  # the second kernel controller on the bumble air: the hub's
APP = "00:AA:02:00:00:06"  # the app a rider rides in, a bumble central
HUB_ERG_WATTS = 230  # what the app asks of the trainer through the hub
HUB_TRAINER = ("00:AA:02:00:00:07", "Emulated Trainer")  # the trainer of the hub's ride, on a controller of its own
PHONE_PAGE_PORT = 8787  # the trainer ride's mirror on the guest's network (run.sh forwards a host port to it)
# Ride seconds a second while the hub's app soaks (--hub-soak): about 20 notifications in and 50 to the app a second.
# Under software emulation on two cores, 16 times the pace (about 80 in and 65 out a second) starved the guest:
# every sensor fell silent at once for seconds and the recorder reconnected them, as its silence rule says.
HUB_SOAK_PACE = 3
DIRCON_ERG_WATTS = 250  # what the app on the network asks of the trainer through the hub over DirCon
DIRCON_NAME = "Pain cave"  # the DirCon hub's mDNS instance name


class Ride:
    """One recorded ride: its output folder, its log of sent notifications, its steps and its cyclelog calls."""

    def __init__(self, args, name, started):
        self.args, self.started = args, started
        self.out = os.path.join(args.out, name)
        os.makedirs(self.out, exist_ok=True)
        self.log = open(os.path.join(self.out, "sent.log"), "w")
        self.timeline = {}
        self.recorder = None
        self.database = "/tmp/%s.sqlite" % name

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
            if self.recorder and self.recorder.returncode is not None:
                raise SystemExit("cyclelog record ended early while waiting for " + what)
            await asyncio.sleep(0.2)

    async def flows_again(self, sensor, measurement, step):
        """Waits until `sensor` has sent five more `measurement` values, then marks `step`."""
        before = sensor.sent[measurement]
        await self.wait_for(step, lambda: sensor.sent[measurement] > before + 4, 60)
        self.mark(step)

    async def record(self, adapter, sensors, capture=None):
        # SQLite's shared-memory WAL index does not work on the VM's shared folder: the database lives in the
        # guest's own memory and is copied out at the end.
        command = [self.args.cyclelog, "record", "--adapter", adapter, "--plain", "--db", self.database,
                   "--name", "Real stack ride"] + (["--capture", capture] if capture else [])
        for sensor in sensors:
            command += ["--sensor", sensor.address]
        self.recorder = await asyncio.create_subprocess_exec(
            *command, stdout=open(os.path.join(self.out, "record.log"), "w"), stderr=asyncio.subprocess.STDOUT)
        self.mark("record started")
        await self.wait_for("every measurement to stream",
                            lambda: all(sensor.sent[m] >= 4 for sensor in sensors for m in sensor.streams), 120)
        self.mark("all streaming")

    async def end(self, sensors, playing):
        await self.cyclelog("end", "--now")
        self.mark("end")
        await self.finish(sensors, playing)

    async def finish(self, sensors, playing):
        """Waits for the recorder to exit, stops the sensors and keeps the database and the timeline."""
        await asyncio.wait_for(self.recorder.wait(), 60)
        self.mark("record exited %d" % self.recorder.returncode)
        for task in playing:
            task.cancel()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.database + suffix):
                shutil.copy(self.database + suffix, os.path.join(self.out, "ride.sqlite" + suffix))
        with open(os.path.join(self.out, "timeline.json"), "w") as f:
            json.dump({"sensors": [{"address": s.address, "name": s.name, "battery": s.battery, "kinds": s.kinds}
                                   for s in sensors], "steps": self.timeline,
                   "bystander": {"address": BYSTANDER[0], "name": BYSTANDER[1]}}, f, indent=1)
        if self.recorder.returncode != 0:
            raise SystemExit("cyclelog record exited with %d" % self.recorder.returncode)


class MirrorStream:
    """`cyclelog-mirror` beside the recorder, and a paired script reading its stream: every message's event,
    data and arrival time go to mirror-stream.jsonl."""

    def __init__(self, ride, binary, types="read", listen="127.0.0.1:0"):
        """`types`: what the script's device is paired for (`cyclelog-mirror pair --types`); `listen`: the
        address it serves on (this script reaches it on the loopback either way)."""
        self.ride, self.binary, self.types, self.listen = ride, binary, types, listen

    async def start(self):
        out = self.ride.out
        self.process = await asyncio.create_subprocess_exec(
            self.binary, "serve", "--listen", self.listen, "--state-dir", os.path.join(out, "mirror-state"),
            stdout=open(os.path.join(out, "mirror.log"), "w"), stderr=asyncio.subprocess.STDOUT)
        port = None
        for _ in range(300):
            serving = re.search(r"serving http://[^ ]+:(\d+) ", open(os.path.join(out, "mirror.log")).read())
            if serving:
                port = int(serving.group(1))
                break
            await asyncio.sleep(0.1)
        if port is None:
            raise SystemExit("cyclelog-mirror did not start: " + open(os.path.join(out, "mirror.log")).read())
        self.port = port
        self.token = token = (await self.pair("vm", "--types", self.types, "--token"))["token"]
        reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        self.writer.write(("GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                           "Accept: text/event-stream\r\n\r\n" % (port, token)).encode())
        self.subscribed = asyncio.Event()
        self.reading = asyncio.create_task(self.read(reader))
        # Open once its snapshot came: from then on the mirror passes the client every reading (on a loaded
        # machine the request alone can take over a second to be answered).
        await asyncio.wait_for(self.subscribed.wait(), 60)
        self.ride.mark("mirror stream open")

    async def read(self, reader):
        """Each message is one chunk whose JSON is one `data:` line: the chunk sizes between are skipped."""
        with open(os.path.join(self.ride.out, "mirror-stream.jsonl"), "w") as log:
            event = None
            while True:
                line = await reader.readline()
                if not line:
                    return
                text = line.decode().rstrip("\r\n")
                if text.startswith("event: "):
                    event = text[7:]
                elif text.startswith("data: "):
                    log.write(json.dumps({"time": time.time(), "event": event, "data": json.loads(text[6:])}) + "\n")
                    log.flush()
                    if event == "snapshot":
                        self.subscribed.set()

    async def post(self, path, body):
        """A paired phone's POST: its status code and JSON answer."""
        return await post_json("127.0.0.1", self.port, path, body, "Authorization: Bearer %s\r\n" % self.token)

    async def pair(self, name, *options):
        """`cyclelog-mirror pair`'s answer: a pairing link for a phone to open, or with --token a device's token."""
        pairing = await asyncio.create_subprocess_exec(
            self.binary, "pair", "--name", name, "--json", *options,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        answer, errors = await asyncio.wait_for(pairing.communicate(), 30)
        if pairing.returncode != 0:
            raise SystemExit("cyclelog-mirror pair failed: " + errors.decode())
        return json.loads(answer)

    async def stop(self):
        self.ride.mark("mirror stream closed")
        self.reading.cancel()
        self.writer.close()
        self.process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(self.process.wait(), 20)
        self.ride.mark("mirror exited %d" % self.process.returncode)


async def post_json(host, port, path, body, headers="", timeout=20):
    """A POST of a JSON body over HTTP/1.1: the status code and the answer's body."""
    data = json.dumps(body).encode()
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(("POST %s HTTP/1.1\r\nHost: %s:%d\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n"
                  "Connection: close\r\n\r\n" % (path, host, port, headers, len(data))).encode() + data)
    response = (await asyncio.wait_for(reader.read(), timeout)).decode()
    writer.close()
    return int(response.split()[1]), response.split("\r\n\r\n", 1)[-1]


class Phone:
    """The rider's phone: the mirror's page in Chromium on the host (phone.py), told what to tap."""

    def __init__(self, ride, address):
        self.ride, self.answers = ride, []
        self.host, port = address.rsplit(":", 1)
        self.port = int(port)

    async def ask(self, request, **body):
        status, answer = await post_json(self.host, self.port, "/" + request, body, timeout=120)
        answer = json.loads(answer) if status == 200 else {"error": "HTTP %d" % status}
        self.answers.append({"request": request, "asked": body, "answer": answer})
        with open(os.path.join(self.ride.out, "phone.json"), "w") as f:
            json.dump(self.answers, f, indent=1)
        if "error" in answer:
            raise SystemExit("the phone's page, asked to %s %s: %s" % (request, body, answer["error"]))
        return answer


def window_start(streams):
    """The ride window's first second: `streams` holds the measurements played (per kind, or per measurement)."""
    return min(second for stream in streams.values() for second, _ in stream)


def play_all(sensors, streams, origin=None, pace=1.0):
    """Plays each sensor's streams from ride second `origin` (the start of the ride window when None), `pace` ride
    seconds a second."""
    if origin is None:
        origin = window_start(streams)
    now = time.monotonic()
    return [asyncio.ensure_future(sensor.play(now, origin, pace)) for sensor in sensors]


async def btvirt_ride(args, streams, started):
    ride = Ride(args, "btvirt", started)
    bus = await emulated_sensors.system_bus()
    bike = emulated_sensors.Sensor(bus, ["power", "csc", "heart"], "hci1", "Emulated Bike", 76, streams, ride.log)
    emulated_sensors.answer_advertisement_objects(bus, {bike.root + "/advertisement": bike.advertisement})
    await bike.register()
    ride.mark("sensor advertising")
    playing = play_all([bike], streams)
    await ride.cyclelog("scan", "--adapter", "hci0", "--timeout", "6", "--json", output="scan-before.json")
    ride.mark("scanned")
    await ride.record("hci0", [bike])
    await asyncio.sleep(args.btvirt_seconds)
    await ride.end([bike], playing)
    bus.disconnect()


async def adapter_path(bus, address, timeout=60):
    """The object path bluetoothd gave the adapter with `address`, once it is there and powered on."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = await emulated_sensors.call(bus, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        for path, interfaces in reply[0].items():
            adapter = interfaces.get("org.bluez.Adapter1")
            if adapter and adapter["Address"].value == address:
                await emulated_sensors.call(bus, path, "org.freedesktop.DBus.Properties", "Set", "ssv",
                                            ["org.bluez.Adapter1", "Powered", Variant("b", True)])
                return path
        await asyncio.sleep(0.5)
    raise SystemExit("bluetoothd never showed the adapter %s" % address)


async def discover_bystander(bus, adapter):
    """The bystander's object in bluetoothd, made trusted so that it stays until it is connected. `cyclelog scan`
    looks for cycling services only, so bluetoothd made none for it; and the kernel reports no advertisement while
    the adapter holds connections, so this runs before the ride connects its sensors."""
    keyboard = "%s/dev_%s" % (adapter, BYSTANDER[0].replace(":", "_"))
    # LE only: an unfiltered discovery is interleaved with classic inquiry, which this LE controller ends at once.
    await emulated_sensors.call(bus, adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", "a{sv}",
                                [{"Transport": Variant("s", "le")}])
    await emulated_sensors.call(bus, adapter, "org.bluez.Adapter1", "StartDiscovery")
    for _ in range(150):
        objects = await emulated_sensors.call(bus, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        if keyboard in objects[0]:
            break
        await asyncio.sleep(0.2)
    else:
        raise SystemExit("bluetoothd never showed the bystander %s" % keyboard)
    await emulated_sensors.call(bus, adapter, "org.bluez.Adapter1", "StopDiscovery")
    await emulated_sensors.call(bus, keyboard, "org.freedesktop.DBus.Properties", "Set", "ssv",
                                ["org.bluez.Device1", "Trusted", Variant("b", True)])
    return keyboard


async def bumble_ride(args, streams, started):
    ride = Ride(args, "bumble", started)
    import bumble_sensors  # slow under software emulation (about 20 s), so only now

    ride.mark("bumble imported")
    link = bumble_sensors.AddressedLink()
    transport = await bumble_sensors.kernel_controller(link, BUMBLE_KERNEL_CONTROLLER)
    bus = await emulated_sensors.system_bus()
    adapter = await adapter_path(bus, BUMBLE_KERNEL_CONTROLLER)
    ride.mark("kernel controller %s" % adapter.rsplit("/", 1)[-1])
    sensors = [bumble_sensors.BumbleSensor(link, address, [kind], name, battery, streams, ride.log)
               for kind, address, name, battery in BUMBLE_SENSORS]
    for sensor in sensors:
        await sensor.start()
    ride.mark("sensors advertising")
    power, speed, _ = sensors
    playing = play_all(sensors, streams)
    await ride.cyclelog("scan", "--adapter", BUMBLE_KERNEL_CONTROLLER, "--timeout", "6", "--json",
                        output="scan-before.json")
    ride.mark("scanned")
    bystander = bumble_sensors.Bystander(link, *BYSTANDER)
    await bystander.start()
    keyboard = await discover_bystander(bus, adapter)
    ride.mark("bystander discovered")
    await ride.record(BUMBLE_KERNEL_CONTROLLER, sensors, capture=os.path.join(ride.out, "ride.btsnoop"))
    await ride.cyclelog("scan", "--adapter", BUMBLE_KERNEL_CONTROLLER, "--timeout", "2", "--json",
                        output="scan-during.json")
    ride.mark("scanned while recording")
    # The kernel's facts about each controller while the three sensors are connected (doctor's exit status says
    # whether recording could start, which is beside the point here), and the management API's view beside them.
    for command, name in (([args.cyclelog, "doctor", "--json", "--timeout", "1"], "doctor-during.json"),
                          (["btmgmt", "info"], "btmgmt-info.txt")):
        _, out, _ = await run_command(*command)
        with open(os.path.join(ride.out, name), "w") as f:
            f.write(out)
    ride.mark("adapter facts")
    # A device that is not a sensor, connected during the ride (BlueZ discovers its services and reads them): the
    # ride's capture must hold none of it, while btmon's holds all.
    await emulated_sensors.call(bus, keyboard, "org.bluez.Device1", "Connect")
    for _ in range(100):
        resolved = await emulated_sensors.call(bus, keyboard, "org.freedesktop.DBus.Properties", "Get", "ss",
                                               ["org.bluez.Device1", "ServicesResolved"])
        if resolved[0].value:
            break
        await asyncio.sleep(0.2)
    ride.mark("bystander connected")
    # Without CAP_NET_RAW (root without it here) there is no capture, and the message says how to get one.
    code, _, err = await run_command("setpriv", "--bounding-set", "-net_raw", "--inh-caps", "-net_raw",
                                     args.cyclelog, "capture", "/tmp/denied.btsnoop", "--seconds", "1")
    with open(os.path.join(ride.out, "capture-denied.txt"), "w") as f:
        f.write("exit %d\n%s" % (code, err))
    ride.mark("capture without CAP_NET_RAW")
    # `capture` alone, beside the ride, naming the power meter only: its connection is kept, the others' are not
    # (connected sensors do not advertise, and nothing else names them).
    await run_command(args.cyclelog, "capture", os.path.join(ride.out, "power.btsnoop"), "--seconds", "4",
                      "--adapter", BUMBLE_KERNEL_CONTROLLER, "--sensor", BUMBLE_SENSORS[0][1], "--db",
                      "/tmp/no-such.sqlite")
    ride.mark("captured the power meter alone")
    # A capture on a disk that fills: one free page of a tiny tmpfs. It stops, says so, and keeps whole records.
    tiny = "/tmp/tiny-disk"
    os.makedirs(tiny, exist_ok=True)
    await run_command("mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", tiny)
    with open(os.path.join(tiny, "filler"), "wb") as f:
        f.write(bytes(4096))
    code, _, err = await run_command(args.cyclelog, "capture", os.path.join(tiny, "full.btsnoop"), "--seconds", "20",
                                     "--adapter", BUMBLE_KERNEL_CONTROLLER, "--db", "/tmp/no-such.sqlite",
                                     *[argument for sensor in sensors for argument in ("--sensor", sensor.address)])
    with open(os.path.join(ride.out, "capture-full.txt"), "w") as f:
        f.write("exit %d\n%s" % (code, err))
    shutil.copy(os.path.join(tiny, "full.btsnoop"), os.path.join(ride.out, "full.btsnoop"))
    await run_command("umount", tiny)
    ride.mark("capture on a full disk")
    for command in ("pause", "resume", "lap"):
        await asyncio.sleep(4)
        await ride.cyclelog(command)
        ride.mark(command)

    await asyncio.sleep(3)
    ride.mark("link drop")
    await power.drop_link(args.drop_seconds)
    ride.mark("back in range")
    await ride.flows_again(power, MEASUREMENTS["power"], "streaming again")

    await asyncio.sleep(3)
    ride.mark("silence")
    speed.silence(args.silence_seconds)
    await asyncio.sleep(args.silence_seconds)
    ride.mark("talks again")
    await ride.flows_again(speed, MEASUREMENTS["csc"], "streaming after the silence")

    await asyncio.sleep(4)
    await ride.end(sensors, playing)
    await auto_ride(args, power, started)
    await wait_ride(args, power, started)
    await trainer_ride(args, link, started)
    await hub_ride(args, link, sensors, streams, started)
    await transport.close()


async def hub_ride(args, link, sensors, streams, started):
    """The box as a sensor hub: `record --bridge` recording the three sensors and the trainer through the first
    kernel controller and advertising on a second one of the same air, where an app (a bumble central) finds it,
    reads what it declares, subscribes to its four measurements, sets its wheel count and rides ERG through it;
    then the app leaves (the trainer is let go) and the ride ends."""
    ride = Ride(args, "hub", started)
    import bumble_sensors

    hub_transport = await bumble_sensors.kernel_controller(link, HUB_CONTROLLER)
    bus = await emulated_sensors.system_bus()
    hub_adapter = await adapter_path(bus, HUB_CONTROLLER)
    ride.mark("hub controller %s" % hub_adapter.rsplit("/", 1)[-1])
    for sensor in sensors:
        sensor.log = ride.log
    trainer = bumble_sensors.BumbleTrainer(link, HUB_TRAINER[0], HUB_TRAINER[1], ride.log)
    await trainer.start()
    played_from = time.monotonic()
    sensors_playing = play_all(sensors, streams)
    trainer_playing = asyncio.ensure_future(trainer.run())
    log_path = os.path.join(ride.out, "record.log")
    command = [args.cyclelog, "record", "--adapter", BUMBLE_KERNEL_CONTROLLER, "--bridge", "--bridge-adapter",
               HUB_CONTROLLER, "--plain", "--db", ride.database, "--name", "Through the hub"]
    for sensor in sensors + [trainer]:
        command += ["--sensor", sensor.address]
    ride.recorder = await asyncio.create_subprocess_exec(*command, stdout=open(log_path, "w"),
                                                         stderr=asyncio.subprocess.STDOUT)
    ride.mark("record --bridge started")
    await ride.wait_for("the hub to advertise", lambda: "the hub is advertising" in open(log_path).read(), 60)
    ride.mark("hub advertising")
    # The app comes once the trainer is there, as a rider opens the app once the box shows the trainer: what the
    # app reads of the Fitness Machine then follows the real trainer.
    await ride.wait_for("the trainer to stream", lambda: "Emulated Trainer=streaming" in open(log_path).read(), 120)
    app = bumble_sensors.App(link, APP, os.path.join(ride.out, "app.log"))
    # What bluetoothd asked the hub's controller to send: the advertising data and the scan response (which bumble's
    # emulated air does not carry to a scanner).
    advertiser = hub_transport.controller.le_legacy_advertiser
    app.write("advertising-data", bytes(advertiser.advertising_data).hex())
    app.write("scan-response", bytes(advertiser.scan_response_data).hex() or "-")
    await app.join(HUB_CONTROLLER)
    ride.mark("app subscribed")
    answers = await app.ride_erg(HUB_ERG_WATTS)
    ride.mark("app: ERG %d W answered %s" % (HUB_ERG_WATTS, " ".join(answer.hex() for answer in answers)))
    await ride.cyclelog("status", "--json", output="status-app-steering.json")
    await asyncio.sleep(args.hub_seconds)
    await app.leave()
    ride.mark("app left")
    await asyncio.sleep(3)
    await ride.cyclelog("status", "--json", output="status-app-gone.json")
    # The app's link drops and comes back, as on a phone that moves away: it subscribes again each time (the
    # wheel count it set stays), and the recording loses nothing.
    for again in range(args.hub_reconnects):
        await app.join(HUB_CONTROLLER, set_wheel=False)
        await asyncio.sleep(1)
        await app.leave()
    ride.mark("app came back and left %d times" % args.hub_reconnects)
    if args.hub_soak:
        sensors_playing = await hub_soak(ride, app, sensors, streams, sensors_playing, played_from, args.hub_soak)
    # The mirror serving DirCon starts once the Bluetooth app has left: beside it, under emulation, its start and
    # its following of the recorder would slow what that app is measured on.
    await dircon_app(ride, args)
    await ride.end(sensors + [trainer], sensors_playing + [trainer_playing])
    bus.disconnect()
    await hub_transport.close()


async def hub_soak(ride, app, sensors, streams, playing, played_from, notifications):
    """The app stays while the sensors play the ride HUB_SOAK_PACE times faster, until it has received
    `notifications` notifications on this visit; then they play on at the ride's pace, from where they got to.
    `playing`: their tasks, which started at `played_from` (time.monotonic()); returns those playing now."""
    for task in playing:
        task.cancel()
    fast_from = time.monotonic()
    reached = window_start(streams) + fast_from - played_from
    playing = play_all(sensors, streams, reached, HUB_SOAK_PACE)
    await app.join(HUB_CONTROLLER, set_wheel=False)
    before = app.notifications
    ride.mark("app stays while the sensors play %g times the ride's pace" % HUB_SOAK_PACE)
    # The limit is for a guest that stalls.
    await ride.wait_for("%d notifications to the app" % notifications,
                        lambda: app.notifications - before >= notifications, max(120, notifications / 5))
    await app.leave()
    for task in playing:
        task.cancel()
    playing = play_all(sensors, streams, reached + (time.monotonic() - fast_from) * HUB_SOAK_PACE)
    ride.mark("app stayed for %d notifications" % (app.notifications - before))
    return playing


async def dircon_app(ride, args):
    """The same hub over DirCon: `cyclelog-mirror serve --dircon` beside the recorder, announced by the guest's
    avahi-daemon; an app on the network (Tests/DirCon/dircon_client.py, written from the protocol's description)
    finds it by mDNS, reads, subscribes, rides ERG at DIRCON_ERG_WATTS and leaves."""
    log_path = os.path.join(ride.out, "dircon-mirror.log")
    mirror = await asyncio.create_subprocess_exec(
        args.mirror, "serve", "--listen", "127.0.0.1:0", "--state-dir", os.path.join(ride.out, "dircon-state"),
        "--dircon", "0.0.0.0:36866", "--dircon-name", DIRCON_NAME, stdout=open(log_path, "w"),
        stderr=asyncio.subprocess.STDOUT)
    await ride.wait_for("the DirCon hub announced", lambda: "announced by mDNS" in open(log_path).read(), 60)
    ride.mark("dircon announced")
    report, release = os.path.join(ride.out, "dircon.json"), os.path.join(ride.out, "dircon.release")
    client = await asyncio.create_subprocess_exec(
        sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "DirCon", "dircon_client.py"),
        "mdns", "30", report, release, str(DIRCON_ERG_WATTS), stdout=open(os.path.join(ride.out, "dircon.out"), "w"),
        stderr=asyncio.subprocess.STDOUT)
    await ride.wait_for("the DirCon app's report", lambda: os.path.exists(report) or client.returncode is not None,
                        120)
    ride.mark("dircon app steering")
    await ride.cyclelog("status", "--json", output="status-dircon-steering.json")
    open(release, "w").close()
    await asyncio.wait_for(client.wait(), 30)
    ride.mark("dircon app left")
    await asyncio.sleep(3)
    mirror.send_signal(signal.SIGTERM)
    await asyncio.wait_for(mirror.wait(), 30)


async def trainer_ride(args, link, started):
    """ERG on the real stack: `record --control erg` steering the emulated trainer through bluetoothd (its control
    point written with Write Requests, answered with indications), a target sent from the phone's API (`POST
    /api/v1/control` by a paired device) reaching the trainer, and `end` letting it go (Reset)."""
    ride = Ride(args, "trainer", started)
    import bumble_sensors

    trainer = bumble_sensors.BumbleTrainer(link, TRAINER[0], TRAINER[1], ride.log)
    await trainer.start()
    playing = [asyncio.ensure_future(trainer.run())]
    ride.mark("trainer advertising")

    def written():
        ride.log.flush()
        # "<time> <address> event control_point_write_<hex>"
        return [line.split()[-1].rsplit("_", 1)[-1] for line in open(os.path.join(ride.out, "sent.log"))
                if "event control_point_write_" in line]
    log_path = os.path.join(ride.out, "record.log")
    ride.recorder = await asyncio.create_subprocess_exec(
        args.cyclelog, "record", "--adapter", BUMBLE_KERNEL_CONTROLLER, "--sensor", trainer.address, "--control",
        "erg", "--target-watts", "200", "--plain", "--db", ride.database, "--name", "ERG on the real stack",
        stdout=open(log_path, "w"), stderr=asyncio.subprocess.STDOUT)
    ride.mark("record --control erg started")
    await ride.wait_for("control and 200 W written", lambda: "05c800" in written(), 120)
    ride.mark("ERG at 200 W")
    # Served on the guest's network too, where the rider's phone reaches it (run.sh forwards the host's port to it).
    mirror = MirrorStream(ride, args.mirror, types="control", listen="0.0.0.0:%d" % PHONE_PAGE_PORT)
    await mirror.start()
    phone = Phone(ride, args.phone)
    shown = await phone.ask("open", url=(await mirror.pair("phone"))["url"])
    ride.mark("phone: the page paired and shows the ride %s" % shown["state"])
    status, answer = await mirror.post(
        "/api/v1/control", {"requestId": "vm-trainer-1", "command": "target", "args": {"watts": 260}})
    ride.mark("phone: target 260 W answered %d %s" % (status, answer.strip()))
    if status != 200:
        raise SystemExit("the phone's target was refused: %d %s" % (status, answer))
    await ride.wait_for("260 W written", lambda: "050401" in written(), 30)
    ride.mark("ERG at 260 W")
    await asyncio.sleep(6)
    # A lap and a pause tapped on the phone's page, each taken back with the Undo the page then offers.
    for command, button in (("lap", "lapButton"), ("pause", "pauseResume")):
        await phone.ask("tap", button=button)
        ride.mark("phone: %s tapped" % command)
        # Long enough that a pause left in would show in the ride's moving time.
        await asyncio.sleep(3)
        undone = await phone.ask("undo", action=command)
        ride.mark("phone: %s tapped, the page says %r" % (undone["offered"], undone["shown"]))
        await asyncio.sleep(2)
    await phone.ask("screenshot", name="trainer-phone-undone")
    await mirror.stop()
    await ride.cyclelog("end", "--now")
    ride.mark("end")
    await ride.wait_for("the trainer let go", lambda: written()[-1:] == ["01"], 30)
    ride.mark("trainer reset")
    await ride.finish([trainer], playing)


async def auto_ride(args, power, started):
    ride = Ride(args, "auto", started)
    power.log = ride.log
    adapter = BUMBLE_KERNEL_CONTROLLER
    await ride.cyclelog("sensors", "add", power.address, "--name", power.name, "--db", ride.database)
    await ride.cyclelog("calibrate", power.name, "--crank-length", "172.5", "--adapter", adapter, "--json",
                        "--db", ride.database, output="calibrate.json")
    ride.mark("calibrated")
    power.still(600)  # standing until the recorder has seen it stand
    playing = play_all([power], power.streams)
    log_path = os.path.join(ride.out, "record.log")
    ride.recorder = await asyncio.create_subprocess_exec(
        args.cyclelog, "record", "--auto", "--end-after", "%gs" % args.end_after, "--adapter", adapter, "--plain",
        "--db", ride.database, stdout=open(log_path, "w"), stderr=asyncio.subprocess.STDOUT)
    ride.mark("record --auto started")
    standing = power.sent[ride_sensors.STILL_MEASUREMENT]
    await ride.wait_for("the recorder to see the bike stand",
                        lambda: power.sent[ride_sensors.STILL_MEASUREMENT] >= standing + 4 * args.still_seconds, 90)
    ride.mark("stood connected")
    power.ride_on()

    def said(text):
        with open(log_path) as log:
            return text in log.read()
    await ride.wait_for("the ride to start on its own", lambda: said("pedalling: recording workout 1"), 90)
    ride.mark("started on its own")
    await asyncio.sleep(args.auto_ride_seconds)
    ride.mark("standstill")
    power.still(args.end_after + 30)
    await ride.wait_for("the ride to end on its own", lambda: said("saving workout 1"), args.end_after + 30)
    ride.mark("ended on its own")
    # Its summary is printed as it goes back to waiting; a SIGTERM while it saves would end it with this ride.
    await ride.wait_for("the ride's summary", lambda: said("Workout 1 — "), 60)
    ride.mark("waiting again")
    ride.recorder.send_signal(signal.SIGTERM)
    ride.mark("SIGTERM")
    await ride.finish([power], playing)


async def wait_ride(args, power, started):
    """`record --wait`: connected and waiting; `cyclelog start` with a name and goal, a marker and a drink, `end`;
    waiting again until SIGTERM."""
    ride = Ride(args, "wait", started)
    power.log = ride.log
    power.ride_on()
    playing = play_all([power], power.streams)
    log_path = os.path.join(ride.out, "record.log")
    ride.recorder = await asyncio.create_subprocess_exec(
        args.cyclelog, "record", "--wait", "--adapter", BUMBLE_KERNEL_CONTROLLER, "--sensor", power.address,
        "--plain", "--db", ride.database, stdout=open(log_path, "w"), stderr=asyncio.subprocess.STDOUT)
    ride.mark("record --wait started")

    async def status():
        return json.loads(await ride.cyclelog("status", "--json"))

    async def wait_for_status(what, condition, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if condition(await status()):
                    return
            except SystemExit:  # not on the bus yet
                pass
            await asyncio.sleep(0.5)
        raise SystemExit("gave up after %d s waiting for %s" % (timeout, what))
    await wait_for_status("the meter streaming while waiting",
                          lambda s: s["State"] == "waiting" and s["Sensors"][0]["state"] == "streaming", 120)
    ride.mark("waiting, streaming")
    # A screen that sees the ride's numbers and its intake (the water logged is an intake event).
    mirror = MirrorStream(ride, args.mirror, types="read,intake")
    await mirror.start()
    await asyncio.sleep(3)
    started_output = (await ride.cyclelog("start", "--name", "Started on request", "--goal", "30m")).decode()
    ride.mark("start: " + started_output.strip())
    await asyncio.sleep(4)
    await ride.cyclelog("marker", "top of the climb")
    ride.mark("marker")
    await asyncio.sleep(2)
    await ride.cyclelog("water", "250ml")
    ride.mark("water")
    await asyncio.sleep(3)
    await ride.cyclelog("end", "--now")
    ride.mark("end")
    await wait_for_status("waiting again", lambda s: s["State"] == "waiting", 60)
    ride.mark("waiting again")
    await mirror.stop()
    ride.recorder.send_signal(signal.SIGTERM)
    ride.mark("SIGTERM")
    await ride.finish([power], playing)


SERVICE = "cyclelog.service"
SERVICE_DATABASE = "/var/lib/cyclelog/cyclelog.sqlite"
UNIT_PROPERTIES = ["ActiveState", "SubState", "Result", "MainPID", "NRestarts", "ExecMainCode", "ExecMainStatus",
                   "StatusText", "User", "WatchdogUSec"]


def unit_state():
    """What systemd says about cyclelog.service now."""
    text = subprocess.run(["systemctl", "show", SERVICE, "-p", ",".join(UNIT_PROPERTIES)], capture_output=True,
                          text=True, check=True).stdout
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def process_facts(pid):
    """What the kernel says about the service's process: who it runs as and what it may do."""
    with open("/proc/%d/status" % pid) as f:
        status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    with open("/proc/%d/net/dev" % pid) as f:
        interfaces = [line.split(":")[0].strip() for line in f.readlines()[2:]]
    mounts = {}
    with open("/proc/%d/mountinfo" % pid) as f:
        for line in f:
            fields = line.split()
            mounts[fields[4]] = fields[5].split(",")[0]  # mount point -> ro or rw
    uid = int(status["Uid"].split()[0])
    return {"user": pwd.getpwuid(uid).pw_name, "noNewPrivileges": status.get("NoNewPrivs"),
            "seccomp": status.get("Seccomp"), "effectiveCapabilities": status.get("CapEff"),
            "boundingCapabilities": status.get("CapBnd"), "networkInterfaces": interfaces,
            "rootMount": mounts.get("/"), "stateDirectoryMount": mounts.get("/var/lib/cyclelog"),
            "homeMount": mounts.get("/home")}


SYNC_TRIGGER = "/var/lib/cyclelog/ride-saved"


def server_rides():
    """The rides on the shared store (PostgreSQL in this VM), read as its superuser: identity, version, digest."""
    text = subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-h", "/run/postgresql", "-d", "cyclelog",
                           "-AtF", "|", "-c", "SELECT sync_identifier, version, content_digest FROM ride "
                           "ORDER BY start_time"], capture_output=True, text=True).stdout
    return [line.split("|") for line in text.splitlines() if line]


def unit_properties(unit, names):
    text = subprocess.run(["systemctl", "show", unit, "-p", ",".join(names)], capture_output=True,
                          text=True).stdout
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def service_journal():
    return subprocess.run(["journalctl", "-u", SERVICE, "-o", "cat", "--no-pager"], capture_output=True,
                          text=True).stdout


async def run_command(*command, timeout=120):
    process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    return process.returncode, out.decode(), err.decode()


async def service_ride(args, streams, started):
    ride = Ride(args, "service", started)
    facts = {}
    bus = await emulated_sensors.system_bus()
    bike = emulated_sensors.Sensor(bus, ["power", "csc", "heart"], "hci1", "Emulated Bike", 76, streams, ride.log)
    emulated_sensors.answer_advertisement_objects(bus, {bike.root + "/advertisement": bike.advertisement})
    await bike.register()
    playing = play_all([bike], streams)
    ride.mark("sensor advertising")

    async def systemctl(*arguments, step):
        began = time.monotonic()
        status, _, err = await run_command("systemctl", *arguments, SERVICE)
        facts[step] = {"seconds": round(time.monotonic() - began, 2), "status": status, "error": err.strip(),
                       "unit": unit_state()}
        ride.mark(step)
        return facts[step]["unit"]

    async def journal_says(text, timeout):
        await ride.wait_for("the service's journal to say " + repr(text), lambda: text in service_journal(), timeout)
        ride.mark("said: " + text)

    async def restarted_from(pid, step, timeout):
        def back():
            unit = unit_state()
            return unit["ActiveState"] == "active" and unit["MainPID"] not in ("0", str(pid))
        await ride.wait_for("systemd to start the service again", back, timeout)
        facts[step] = {"unit": unit_state()}
        ride.mark(step)

    async def pushed(count, step):
        """Waits until `count` rides are on the shared store: the ride the last stop saved, pushed by
        cyclelog-sync.service as systemd started it on the recorder's trigger file."""
        await ride.wait_for("%d rides on the shared store" % count, lambda: len(server_rides()) >= count, 120)
        seen = time.time()
        trigger = open(SYNC_TRIGGER).read() if os.path.exists(SYNC_TRIGGER) else None
        saved = os.stat(SYNC_TRIGGER).st_mtime if trigger is not None else None
        facts[step] = {"rides": len(server_rides()), "trigger": trigger,
                       "secondsFromSave": round(seen - saved, 2) if saved else None}
        ride.mark("%s (%s s after the save)" % (step, facts[step]["secondsFromSave"]))

    # As the service guide says: the sensor is remembered as the service's user, then the service is started.
    status, out, err = await run_command("runuser", "-u", "cyclelog", "--", args.cyclelog, "sensors", "add",
                                         bike.address, "--name", bike.name, "--db", SERVICE_DATABASE)
    facts["sensorsAdd"] = {"status": status, "output": (out + err).strip()}
    ride.mark("sensors add exited %d" % status)
    if status != 0:
        raise SystemExit("`cyclelog sensors add` as user cyclelog failed: " + err)

    unit = await systemctl("start", step="start")
    pid = int(unit["MainPID"])
    facts["process"] = process_facts(pid) if pid else None
    await journal_says("pedalling: recording workout 1", 90)
    # The rider's group may read and control the service's ride; anyone else may read it but not control it.
    for user, command in (("cyclelog", "status"), ("nobody", "status"), ("nobody", "pause")):
        status, out, err = await run_command("runuser", "-u", user, "--", args.cyclelog, command,
                                             "--control-bus", "system")
        facts["%s %s" % (user, command)] = {"status": status, "output": (out + err).strip()}
    await asyncio.sleep(args.service_ride_seconds)

    os.kill(pid, signal.SIGKILL)
    ride.mark("kill -9")
    await restarted_from(pid, "restarted after kill -9", 60)
    await journal_says("pedalling: recording workout 2", 90)
    await asyncio.sleep(args.service_ride_seconds)
    await systemctl("stop", step="stop")
    await pushed(1, "workout 2 on the shared store")

    unit = await systemctl("start", step="start again")
    pid = int(unit["MainPID"])
    await journal_says("pedalling: recording workout 3", 90)
    os.kill(pid, signal.SIGSTOP)
    ride.mark("SIGSTOP")
    await journal_says("Watchdog timeout", 120)
    await restarted_from(pid, "restarted by the watchdog", 90)
    await journal_says("pedalling: recording workout 4", 90)
    await asyncio.sleep(args.service_ride_seconds / 2)
    await systemctl("stop", step="stop again")
    await pushed(2, "workout 4 on the shared store")

    # The recording guide's drop-in for a capture: the service then holds CAP_NET_RAW and writes the bike's traffic.
    drop_in = "/etc/systemd/system/%s.d/capture.conf" % SERVICE
    os.makedirs(os.path.dirname(drop_in), exist_ok=True)
    shutil.copy("/usr/local/share/doc/cyclelog/cyclelog-capture.conf", drop_in)
    await run_command("systemctl", "daemon-reload")
    unit = await systemctl("start", step="start with the capture drop-in")
    pid = int(unit["MainPID"])
    facts["captureProcess"] = process_facts(pid) if pid else None
    await journal_says("pedalling: recording workout 5", 90)
    await asyncio.sleep(args.service_ride_seconds / 2)
    await systemctl("stop", step="stop with the capture drop-in")
    await pushed(3, "workout 5 on the shared store")
    capture = "/var/lib/cyclelog/capture.btsnoop"
    if os.path.exists(capture):
        facts["capture"] = {"mode": oct(os.stat(capture).st_mode & 0o777),
                            "owner": pwd.getpwuid(os.stat(capture).st_uid).pw_name}
        shutil.copy(capture, os.path.join(ride.out, "capture.btsnoop"))
    os.remove(drop_in)
    await run_command("systemctl", "daemon-reload")

    for task in playing:
        task.cancel()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(SERVICE_DATABASE + suffix):
            shutil.copy(SERVICE_DATABASE + suffix, os.path.join(ride.out, "ride.sqlite" + suffix))
    with open(os.path.join(ride.out, "journal.txt"), "w") as f:
        f.write(subprocess.run(["journalctl", "-u", SERVICE, "-o", "short-monotonic", "--no-pager"],
                               capture_output=True, text=True).stdout)
    facts["serverRides"] = server_rides()
    facts["syncService"] = unit_properties("cyclelog-sync.service", ["Result", "ExecMainStatus", "User",
                                                                     "ActiveState"])
    facts["syncPath"] = unit_properties("cyclelog-sync.path", ["ActiveState", "UnitFileState"])
    with open(os.path.join(ride.out, "sync-journal.txt"), "w") as f:
        f.write(subprocess.run(["journalctl", "-u", "cyclelog-sync.service", "-o", "short-monotonic", "--no-pager"],
                               capture_output=True, text=True).stdout)
    with open(os.path.join(ride.out, "facts.json"), "w") as f:
        json.dump(facts, f, indent=1)
    with open(os.path.join(ride.out, "timeline.json"), "w") as f:
        json.dump({"sensors": [{"address": bike.address, "name": bike.name, "battery": bike.battery,
                                "kinds": bike.kinds}], "steps": ride.timeline}, f, indent=1)
    bus.disconnect()


async def main(args):
    started = time.monotonic()
    with open(args.streams) as f:
        streams = json.load(f)
    if args.service:
        await service_ride(args, streams, started)
        return
    await btvirt_ride(args, streams, started)
    await bumble_ride(args, streams, started)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cyclelog", required=True)
    parser.add_argument("--mirror", help="cyclelog-mirror, run beside `record --wait`")
    parser.add_argument("--phone", help="HOST:PORT of phone.py, the rider's phone on the host (run.sh)")
    parser.add_argument("--streams", required=True)
    parser.add_argument("--btvirt-seconds", type=float, default=8)
    parser.add_argument("--drop-seconds", type=float, default=10)
    parser.add_argument("--silence-seconds", type=float, default=12)
    parser.add_argument("--still-seconds", type=float, default=4, help="auto: standing, connected, before riding")
    parser.add_argument("--auto-ride-seconds", type=float, default=15, help="auto: riding")
    parser.add_argument("--end-after", type=float, default=8, help="auto: record --auto --end-after")
    parser.add_argument("--hub-seconds", type=float, default=8, help="hub: the app subscribed")
    parser.add_argument("--hub-reconnects", type=int, default=3, help="hub: the app's link dropping and back")
    parser.add_argument("--hub-soak", type=int, default=0,
                        help="hub: notifications the app receives in one more visit, the ride played faster")
    parser.add_argument("--service", action="store_true", help="ride against cyclelog.service (systemd as PID 1)")
    parser.add_argument("--service-ride-seconds", type=float, default=15, help="service: riding before each step")
    parser.add_argument("--out", required=True)
    asyncio.run(main(parser.parse_args()))
