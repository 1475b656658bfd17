"""Emulated cycling sensors: what a sensor sends, when, and how its control point answers, whatever carries it.

One behaviour for every test that needs a sensor:
- the BlueZ stand-in (Tests/BlueZStandIn/bluez_standin.py) shows these sensors on a fake org.bluez on a private
  bus, for the command-line tests and `make demo-live`;
- the real-stack VM (Tests/RealStack) shows them to a real bluetoothd, as a GATT application on a virtual
  controller (emulated_sensors.py) or as bumble devices on the emulated air (bumble_sensors.py).
Each of those only carries the notifications (`RideSensor.notify`) and the control point's writes and answers.

A sensor plays a real ride: the notification payloads of a cyclelog ride journal (Fixtures/rides/*.journal, made
from the ride's FIT records by scripts/make-ride-fixtures.py, not by cyclelog). It plays them either at the times
the journal gives (`play`) or at a fixed rate (`play_at_rate`: a short test needs many notifications soon). It goes
silent, stands still or out of range on request, and logs every notification it sends while a client is
subscribed as "<unix time> <address> <uuid> <hex> <ride second>", every control-point write as
"<unix time> <address> write <hex>" and every event as "<unix time> <address> event <text>", so that a test can
compare what was sent with what was stored.
"""
import asyncio
import collections
import datetime
import math
import struct
import time

BASE = "-0000-1000-8000-00805f9b34fb"


def full_uuid(short):
    """The 128-bit form of a 16-bit UUID given as a number (0x2A63) or as hex text ("2a63")."""
    value = int(short, 16) if isinstance(short, str) else short
    return "%08x" % value + BASE


_MIDNIGHTS = {}


def parse_time(text):
    """Seconds since 1970 of a journal's UTC time, YYYY-MM-DDTHH:MM:SS[.ffffff]Z (a long ride has tens of thousands:
    strptime once per day, not per line)."""
    day = text[:10]
    midnight = _MIDNIGHTS.get(day)
    if midnight is None:
        midnight = _MIDNIGHTS[day] = datetime.datetime.strptime(day, "%Y-%m-%d").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    return midnight + int(text[11:13]) * 3600 + int(text[14:16]) * 60 + float(text[17:-1])


def journal_notifications(path):
    """(ride second, characteristic, payload) of every notification in a ride journal; ride second 0 is the
    journal's `start` (its first event when it has none)."""
    with open(path) as journal:
        lines = [line.split(maxsplit=4) for line in journal if line.strip() and not line.startswith("#")]
    starts = [parse_time(words[0]) for words in lines if words[1] == "start"]
    origin = starts[0] if starts else parse_time(lines[0][0])
    return [(parse_time(words[0]) - origin, int(words[3], 16), bytes.fromhex(words[4].strip()))
            for words in lines if words[1] == "notify" and len(words) == 5]


def with_wheel_data(power_payload, csc_payload):
    """A Cycling Power Measurement with power and crank data (flags 0x0020) plus the wheel revolutions of a CSC
    measurement (flags 0x01: uint32 revolutions, uint16 time in 1/1024 s) taken at the same moment, on the power
    meter's 1/2048-s wheel clock: flags 0x0030, then power, wheel revolutions, wheel time, crank data (GATT Specification Supplement)."""
    flags, watts, crank_revolutions, crank_time = struct.unpack("<HhHH", power_payload)
    assert flags == 0x0020, "the ride journals carry power and crank data only"
    _, wheel_revolutions, wheel_time_1024 = struct.unpack("<BIH", csc_payload)
    # The 1/1024-s value is the true time modulo 64 s; doubling it modulo 2^16 is the true 1/2048-s time modulo 32 s.
    wheel_time_2048 = (wheel_time_1024 * 2) & 0xFFFF
    return struct.pack("<HhIHHH", 0x0030, watts, wheel_revolutions, wheel_time_2048, crank_revolutions, crank_time)


def ride_streams(journal, from_second, seconds):
    """Per sensor kind, [ride second, payload hex] of its measurement for `seconds` from `from_second` of the
    ride; the power meter's carry the wheel data of the same moment, so one ride exercises power, crank and both
    wheel clocks."""
    streams = {"power": [], "csc": [], "heart": []}
    last_csc = None
    for second, uuid, payload in journal_notifications(journal):
        inside = from_second <= second < from_second + seconds
        if uuid == 0x2A5B:
            last_csc = payload
            if inside:
                streams["csc"].append((second, payload.hex()))
        elif uuid == 0x2A63 and inside and last_csc is not None:
            streams["power"].append((second, with_wheel_data(payload, last_csc).hex()))
        elif uuid == 0x2A37 and inside:
            streams["heart"].append((second, payload.hex()))
    return streams


def measurement_streams(kinds, streams_by_kind):
    """`ride_streams`' streams of `kinds` as a RideSensor takes them: measurement → [(ride second, payload)]."""
    return {KINDS[kind][1]: [(second, bytes.fromhex(payload)) for second, payload in streams_by_kind[kind]]
            for kind in kinds}


# kind → (service, measurement, [(characteristic, flags, value)]) per the GATT Specification Supplement.
KINDS = {
    "power": (0x1818, 0x2A63, [(0x2A65, ["read"], struct.pack("<I", 0x0000000C)),  # wheel and crank data
                               (0x2A5D, ["read"], bytes([5]))]),  # left crank
    "csc": (0x1816, 0x2A5B, [(0x2A5C, ["read"], struct.pack("<H", 0x0001)),  # wheel data
                             (0x2A5D, ["read"], bytes([12]))]),  # rear wheel
    "heart": (0x180D, 0x2A37, [(0x2A38, ["read"], bytes([1]))]),  # chest
}

# A power meter on a bike that stands: Cycling Power Measurement with flags 0 and 0 W (GATT Specification Supplement).
STILL_MEASUREMENT = 0x2A63
STILL = bytes(4)


class AttError(Exception):
    """A write the sensor refuses with an ATT error code (BlueZ passes it on as "ATT error: 0x..")."""

    def __init__(self, code):
        super().__init__("ATT error 0x%02x" % code)
        self.code = code


class PowerControlPoint:
    """A power meter's Cycling Power Control Point (CPS): Start Offset Compensation (0x0C) answers
    `offset_result` (1 success, with the offset; 2 not supported; 4 failed), Set Crank Length (0x04) keeps the
    length in 1/2 mm and Request Crank Length (0x05) reports it, other op codes are not supported. A write
    without indications on fails with ATT error 0xFD as the spec says; `att_error` makes every write fail with
    that code instead (a meter that misbehaves)."""

    def __init__(self, offset=0, crank_half_mm=None, offset_result=1, att_error=None):
        self.offset, self.crank_half_mm = offset, crank_half_mm
        self.offset_result, self.att_error = offset_result, att_error

    def answer(self, request, indications_on):
        """The indication that answers `request`; raises AttError when the write itself fails."""
        if self.att_error is not None:
            raise AttError(self.att_error)
        if not indications_on:
            raise AttError(0xFD)
        op = request[0]
        if op == 0x0C:
            offset = struct.pack("<h", self.offset) if self.offset_result == 1 else b""
            return bytes([0x20, op, self.offset_result]) + offset
        if op == 0x04 and len(request) == 3:
            self.crank_half_mm = struct.unpack("<H", request[1:3])[0]
            return bytes([0x20, op, 0x01])
        if op == 0x05 and self.crank_half_mm is not None:
            return bytes([0x20, op, 0x01]) + struct.pack("<H", self.crank_half_mm)
        return bytes([0x20, op, 0x02])


class FitnessMachineTrainer:
    """A smart trainer's Fitness Machine Service (FTMS): the features and ranges it declares, a control point
    that answers as the spec says (Request Control before anything else, else Control Not Permitted; a target
    outside the declared range is Invalid Parameter; a mode its features do not list is Op Code Not Supported;
    `refuse` maps op codes to the result they always get), and a power that follows its target as a first-order
    lag with time constant `tau_seconds`. It reports `reads_high` times its true power (a trainer that reads high);
    the rider's own crank meter on the same bike (`meter_measurement`) sends the true power. `cadence_rpm` is the
    rider's, which a test lowers to see the recorder ease ERG."""

    TARGET_BITS = {"inclination": 1, "resistance": 2, "power": 3, "sim": 13, "spindown": 15}

    def __init__(self, targets=("power", "resistance", "sim"), power_range=(0, 1500, 1), resistance_range=(0, 200, 1),
                 tau_seconds=1.0, refuse=None, reads_high=1.0, cadence_rpm=90.0, free_watts=120.0,
                 spin_down_result=0x02):
        self.targets = set(targets)
        self.power_range, self.resistance_range = tuple(power_range), tuple(resistance_range)
        self.tau = max(0.05, float(tau_seconds))
        self.refuse = {int(op, 16) if isinstance(op, str) else op: result for op, result in (refuse or {}).items()}
        self.reads_high, self.cadence_rpm, self.free_watts = float(reads_high), float(cadence_rpm), float(free_watts)
        self.spin_down_result = spin_down_result
        self.controlled = False
        self.mode = "free"
        self.target_watts = self.true_watts = self.free_watts
        self.last_step = time.monotonic()

    def takes(self, target):
        return target in self.targets

    def feature(self):
        """Fitness Machine Feature: cadence (bit 1) and power (bit 14) measured; the targets it takes."""
        bits = 0
        for target in self.targets:
            bits |= 1 << self.TARGET_BITS[target]
        return struct.pack("<II", (1 << 1) | (1 << 14), bits)

    def supported_power_range(self):
        return struct.pack("<hhH", *self.power_range)

    def supported_resistance_range(self):
        return struct.pack("<hhH", *self.resistance_range)

    def answer(self, request, indications_on):
        """The indication that answers `request` (`80 op result [parameter]`); raises AttError when indications
        are off (ATT error 0xFD, as for any control point)."""
        if not indications_on:
            raise AttError(0xFD)
        op = request[0]

        def result(code, parameter=b""):
            return bytes([0x80, op, code]) + parameter
        if op in self.refuse:
            return result(self.refuse[op])
        if op == 0x00:
            self.controlled = True
            return result(0x01)
        if not self.controlled:
            return result(0x05)
        if op == 0x01:
            self.controlled = False
            self.mode, self.target_watts = "free", self.free_watts
            return result(0x01)
        if op == 0x05:
            if not self.takes("power"):
                return result(0x02)
            if len(request) != 3:
                return result(0x03)
            watts = struct.unpack("<h", request[1:3])[0]
            if not self.power_range[0] <= watts <= self.power_range[1]:
                return result(0x03)
            self.mode, self.target_watts = "erg", float(watts)
            return result(0x01)
        if op == 0x04:
            if not self.takes("resistance"):
                return result(0x02)
            if len(request) != 2 or not self.resistance_range[0] <= request[1] <= self.resistance_range[1]:
                return result(0x03)
            # A heavier level takes more power at the same cadence: up to three times the free power.
            share = request[1] / max(1, self.resistance_range[1])
            self.mode, self.target_watts = "resistance", self.free_watts * (1 + 2 * share)
            return result(0x01)
        if op == 0x11:
            if not self.takes("sim") or len(request) != 7:
                return result(0x02 if not self.takes("sim") else 0x03)
            grade = struct.unpack("<h", request[3:5])[0] / 100
            # About 25 W more per 1 % of grade at a steady speed.
            self.mode, self.target_watts = "sim", max(0.0, self.free_watts + 25 * grade)
            return result(0x01)
        if op in (0x07, 0x08):
            return result(0x01)
        if op == 0x13:
            if not self.takes("spindown"):
                return result(0x02)
            return result(0x01, struct.pack("<HH", 2000, 3000))
        return result(0x02)

    def status_after(self, request, answer):
        """Fitness Machine Status messages that follow an answer, as (seconds later, bytes): a spin down that
        started reports Spin Down Status (Fitness Machine Status op 0x14) 1 requested, then 4 stop pedalling, then its result
        (`spin_down_result`: 2 success, 3 error)."""
        if request[:1] == b"\x13" and answer[:3] == bytes([0x80, 0x13, 0x01]):
            return [(0.5, bytes([0x14, 0x01])), (1.5, bytes([0x14, 0x04])), (3.0, bytes([0x14, self.spin_down_result]))]
        return []

    def step(self):
        """The true power moves toward the target: P += (target − P)(1 − e^(−dt/τ))."""
        now = time.monotonic()
        elapsed, self.last_step = now - self.last_step, now
        self.true_watts += (self.target_watts - self.true_watts) * (1 - math.exp(-elapsed / self.tau))

    def bike_data(self):
        """Indoor Bike Data: flags 0x0044 (cadence and power present; speed always is): 30.00 km/h, the
        rider's cadence, and the power as the trainer reads it."""
        self.step()
        reported = int(round(self.true_watts * self.reads_high))
        return struct.pack("<HHHh", 0x0044, 3000, int(self.cadence_rpm * 2), max(-32768, min(32767, reported)))

    def meter_measurement(self):
        """The crank meter on the same bike: Cycling Power Measurement, flags 0, the true power."""
        self.step()
        return struct.pack("<Hh", 0, int(round(self.true_watts)))


class RideSensor:
    """One emulated sensor: its measurements' payloads over time, the states a test puts it in, and its log.
    `streams` maps each measurement (a number) to [(ride second, payload bytes)]; `kinds` names the services it
    offers (KINDS), for transports that build them from here."""

    def __init__(self, name, battery, streams, log, kinds=()):
        self.name, self.battery, self.kinds, self.log = name, battery, list(kinds), log
        self.address = None
        self.streams = streams
        self.silent_until = {}
        self.still_until = 0.0
        self.dropped = False
        self.sent = collections.Counter()  # notifications sent, per measurement

    def services(self):
        """[(service, [(characteristic, flags, value)])] of the sensor's kinds, then Battery."""
        entries = []
        for kind in self.kinds:
            service, measurement, extras = KINDS[kind]
            entries.append((service, [(measurement, ["notify"], b"")] + extras))
        entries.append((0x180F, [(0x2A19, ["read", "notify"], bytes([self.battery]))]))
        return entries

    def log_line(self, text):
        self.log.write("%.6f %s %s\n" % (time.time(), self.address, text))
        self.log.flush()

    def log_event(self, text):
        self.log_line("event " + text.replace(" ", "_"))

    def log_write(self, value):
        self.log_line("write " + bytes(value).hex())

    def silence(self, seconds):
        """The sensor stays connected but sends nothing for `seconds`."""
        for measurement in self.streams:
            self.silent_until[measurement] = time.monotonic() + seconds
        self.log_event("silent")

    def still(self, seconds):
        """The bike stands for `seconds`: a power meter sends 0 W without crank data (flags 0); the
        other measurements send nothing. The ride goes on where it was afterwards."""
        self.still_until = time.monotonic() + seconds
        self.log_event("still")

    def ride_on(self):
        """Pedalling again, from where the ride was."""
        self.still_until = 0.0
        self.log_event("rides on")

    def is_silent(self, measurement):
        return time.monotonic() < self.silent_until.get(measurement, 0)

    def is_still(self):
        return time.monotonic() < self.still_until

    async def send(self, measurement, payload, second):
        """One notification if the link carries it (`notify`); logged when sent. Says whether it was sent."""
        if self.dropped or self.is_silent(measurement):
            return False
        if self.is_still():
            if measurement != STILL_MEASUREMENT:
                return False
            payload = STILL
        if not await self.notify(measurement, payload):
            return False
        self.sent[measurement] += 1
        self.log_line("%04x %s %.3f" % (measurement, payload.hex(), second))
        return True

    async def play(self, started, origin, pace=1.0):
        """Sends the ride's notifications at the journal's times: ride second `origin` at `started` (a
        time.monotonic value), `pace` ride seconds a second, from `origin` on. What falls while nobody listens is
        not sent, and the ride goes on."""
        await asyncio.gather(*(self.play_one(measurement, started, origin, pace) for measurement in self.streams))

    async def play_one(self, measurement, started, origin, pace):
        for second, payload in self.streams[measurement]:
            if second < origin:
                continue
            delay = started + (second - origin) / pace - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            await self.send(measurement, payload, second)

    async def play_at_rate(self, measurement, rate_hz, still_first_seconds=0.0):
        """Sends the measurement's payloads `rate_hz` times a second, over and over. The ride moves on only with what
        was sent: while nobody listens, or the sensor is silent or still, it waits where it is. With
        `still_first_seconds`, the bike stands that long from the first notification sent."""
        payloads = self.streams[measurement]
        played = 0
        period = 1.0 / rate_hz
        next_time = time.monotonic()
        while True:
            next_time += period
            await asyncio.sleep(max(0.0, next_time - time.monotonic()))
            if not self.listening(measurement):
                continue
            if self.sent[measurement] == 0 and still_first_seconds > 0:
                self.still(still_first_seconds)
            standing = self.is_still()
            second, payload = payloads[played % len(payloads)]
            if await self.send(measurement, payload, second) and not standing:
                played += 1

    def listening(self, measurement):
        """Whether a client would receive the measurement now (connected and subscribed)."""
        return True

    async def notify(self, measurement, payload):
        """Sends one notification if a client is subscribed; says whether it was sent."""
        raise NotImplementedError
