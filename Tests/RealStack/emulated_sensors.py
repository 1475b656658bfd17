"""Emulated cycling sensors. `RideSensor` is what every one does, whatever carries its notifications (bumble's
sensors are in bumble_sensors.py); `Sensor` is one on a real bluetoothd: a BlueZ GATT application plus an LE
advertisement on its own (virtual) controller, registered through org.bluez.GattManager1 and
org.bluez.LEAdvertisingManager1 (BlueZ doc/gatt-api.txt, doc/advertising-api.txt). bluetoothd turns it into real
ATT traffic on the emulated air.

The sensors play a real ride: the notification payloads of a cyclelog ride journal (Fixtures/rides/*.journal,
generated from the ride's FIT records by scripts/make-ride-fixtures.py, not by cyclelog), at the times the journal
gives. The power meter adds the wheel data of the same moment to its Cycling Power Measurement on the Cycling
Power clock (1/2048 s; spec §1.4), so one ride exercises power, crank and both wheel clocks.

Every notification sent while a client is subscribed is logged as
"<unix time> <address> <uuid> <hex> <ride second>" so that the harness can compare it with what was stored.
"""
import argparse
import asyncio
import collections
import datetime
import json
import struct
import sys
import time

from dbus_fast import BusType, Message, MessageType, PropertyAccess, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, dbus_property, method

BASE = "-0000-1000-8000-00805f9b34fb"


def full_uuid(short):
    return "%08x" % short + BASE


def journal_notifications(path):
    """(ride second, characteristic, payload) of every notification in a ride journal; ride second 0 is the
    journal's `start` (the ride's first record)."""
    with open(path) as journal:
        lines = [line.split(maxsplit=4) for line in journal if not line.startswith("#")]
    origin = next(parse_time(words[0]) for words in lines if words[1] == "start")
    return [(parse_time(words[0]) - origin, int(words[3], 16), bytes.fromhex(words[4].strip()))
            for words in lines if words[1] == "notify"]


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def with_wheel_data(power_payload, csc_payload):
    """A Cycling Power Measurement with power and crank data (flags 0x0020) plus the wheel revolutions of a CSC
    measurement (flags 0x01: uint32 revolutions, uint16 time in 1/1024 s) taken at the same moment, on the power
    meter's 1/2048-s wheel clock: flags 0x0030, then power, wheel revolutions, wheel time, crank data (spec §1.2)."""
    flags, watts, crank_revolutions, crank_time = struct.unpack("<HhHH", power_payload)
    assert flags == 0x0020, "the ride journals carry power and crank data only"
    _, wheel_revolutions, wheel_time_1024 = struct.unpack("<BIH", csc_payload)
    # The 1/1024-s value is the true time modulo 64 s; doubling it modulo 2^16 is the true 1/2048-s time modulo 32 s.
    wheel_time_2048 = (wheel_time_1024 * 2) & 0xFFFF
    return struct.pack("<HhIHHH", 0x0030, watts, wheel_revolutions, wheel_time_2048, crank_revolutions, crank_time)


class Characteristic(ServiceInterface):
    def __init__(self, sensor, path, service_path, uuid, flags, value=b""):
        super().__init__("org.bluez.GattCharacteristic1")
        self.sensor, self.path, self.service_path = sensor, path, service_path
        self.uuid, self.flags, self.value = uuid, flags, value
        self.notifying = False

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return full_uuid(self.uuid)

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return self.service_path

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return self.flags

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.value

    @method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        return self.value

    @method()
    def StartNotify(self):
        self.notifying = True
        self.sensor.log_event("subscribed %04x" % self.uuid)

    @method()
    def StopNotify(self):
        self.notifying = False
        self.sensor.log_event("unsubscribed %04x" % self.uuid)

    def notify(self, value):
        self.value = value
        self.emit_properties_changed({"Value": value})


class Service(ServiceInterface):
    def __init__(self, uuid):
        super().__init__("org.bluez.GattService1")
        self.uuid = uuid

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return full_uuid(self.uuid)

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return True


class Advertisement(ServiceInterface):
    def __init__(self, name, services):
        super().__init__("org.bluez.LEAdvertisement1")
        self.name, self.services = name, services

    @dbus_property(access=PropertyAccess.READ)
    def Type(self) -> "s":
        return "peripheral"

    @dbus_property(access=PropertyAccess.READ)
    def ServiceUUIDs(self) -> "as":
        return [full_uuid(uuid) for uuid in self.services]

    @dbus_property(access=PropertyAccess.READ)
    def LocalName(self) -> "s":
        return self.name

    # LE General Discoverable in the flags: Linux's general discovery drops advertisements without it.
    @dbus_property(access=PropertyAccess.READ)
    def Discoverable(self) -> "b":
        return True

    @method()
    def Release(self):
        pass

    def managed_objects(self, path):
        return {path: {"org.bluez.LEAdvertisement1": {
            "Type": Variant("s", self.Type), "ServiceUUIDs": Variant("as", self.ServiceUUIDs),
            "LocalName": Variant("s", self.LocalName), "Discoverable": Variant("b", self.Discoverable)}}}


def answer_advertisement_objects(bus, advertisements):
    """bluetoothd reads an advertisement's properties through GetManagedObjects on the advertisement's own path;
    dbus-fast answers that call with the objects below the path only, which leaves the advertisement empty
    (non-connectable, no name, no services). This answers it with the advertisement itself."""

    def handler(message):
        if (message.message_type == MessageType.METHOD_CALL and message.member == "GetManagedObjects"
                and message.path in advertisements):
            return Message.new_method_return(message, "a{oa{sa{sv}}}",
                                             [advertisements[message.path].managed_objects(message.path)])
        return None

    bus.add_message_handler(handler)


# kind → (service, measurement, [(characteristic, flags, value)]) per spec §1, §3, §4.
KINDS = {
    "power": (0x1818, 0x2A63, [(0x2A65, ["read"], struct.pack("<I", 0x0000000C)),  # wheel and crank data
                               (0x2A5D, ["read"], bytes([5]))]),  # left crank
    "csc": (0x1816, 0x2A5B, [(0x2A5C, ["read"], struct.pack("<H", 0x0001)),  # wheel data
                             (0x2A5D, ["read"], bytes([12]))]),  # rear wheel
    "heart": (0x180D, 0x2A37, [(0x2A38, ["read"], bytes([1]))]),  # chest
}


# A power meter on a bike that stands: Cycling Power Measurement with flags 0 and 0 W.
STILL = bytes(4)
STILL_MEASUREMENT = 0x2A63


class RideSensor:
    """What every emulated sensor does, whatever carries its notifications: it plays the ride's measurements at
    the journal's times, goes silent or out of range on request, and logs every notification it sends."""

    def __init__(self, name, battery, kinds, streams, log):
        self.name, self.battery, self.kinds, self.log = name, battery, kinds, log
        self.address = None
        self.silent_until = {}
        self.still_until = 0.0
        self.dropped = False
        self.sent = collections.Counter()  # notifications sent, per measurement
        self.streams = {}
        for kind in kinds:
            self.streams[KINDS[kind][1]] = [(second, bytes.fromhex(payload)) for second, payload in streams[kind]]

    def services(self):
        """[(service, [(characteristic, flags, value)])] of the sensor's kinds, then Battery."""
        entries = []
        for kind in self.kinds:
            service, measurement, extras = KINDS[kind]
            entries.append((service, [(measurement, ["notify"], b"")] + extras))
        entries.append((0x180F, [(0x2A19, ["read", "notify"], bytes([self.battery]))]))
        return entries

    def log_event(self, text):
        self.log.write("%.6f %s event %s\n" % (time.time(), self.address, text.replace(" ", "_")))
        self.log.flush()

    def silence(self, seconds):
        """The sensor stays connected but sends nothing for `seconds`."""
        for measurement in self.streams:
            self.silent_until[measurement] = time.monotonic() + seconds
        self.log_event("silent")

    def still(self, seconds):
        """The bike stands for `seconds`: a power meter sends 0 W without crank data (flags 0, spec §1.2); the
        other measurements send nothing. The ride goes on where it was afterwards."""
        self.still_until = time.monotonic() + seconds
        self.log_event("still")

    def ride_on(self):
        """Pedalling again, from where the ride was."""
        self.still_until = 0.0
        self.log_event("rides on")

    async def play(self, started, origin):
        """Sends the ride's notifications: ride second `origin` at `started` (a time.monotonic value)."""
        await asyncio.gather(*(self.play_one(uuid, started, origin) for uuid in self.streams))

    async def play_one(self, measurement, started, origin):
        for second, payload in self.streams[measurement]:
            delay = started + (second - origin) - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            silent = time.monotonic() < self.silent_until.get(measurement, 0)
            if time.monotonic() < self.still_until:
                if measurement != STILL_MEASUREMENT:
                    continue
                payload = STILL
            if self.dropped or silent or not await self.notify(measurement, payload):
                continue
            self.sent[measurement] += 1
            self.log.write("%.6f %s %04x %s %.3f\n" % (time.time(), self.address, measurement, payload.hex(), second))
            self.log.flush()

    async def notify(self, measurement, payload):
        """Sends one notification if a client is subscribed; says whether it was sent."""
        raise NotImplementedError


class Sensor(RideSensor):
    """One emulated sensor on one BlueZ adapter: a GATT application with the services of `kinds` (and Battery)
    and an advertisement."""

    def __init__(self, bus, kinds, adapter, name, battery, streams, log):
        super().__init__(name, battery, kinds, streams, log)
        self.bus, self.adapter = bus, adapter
        self.adapter_path = "/org/bluez/" + adapter
        self.root = "/cyclelog/" + adapter
        self.characteristics = {}
        entries = self.services()
        for service_index, (uuid, characteristics) in enumerate(entries):
            service_path = "%s/service%d" % (self.root, service_index)
            bus.export(service_path, Service(uuid))
            for index, (char_uuid, flags, value) in enumerate(characteristics):
                path = "%s/char%d" % (service_path, index)
                characteristic = Characteristic(self, path, service_path, char_uuid, flags, value)
                bus.export(path, characteristic)
                self.characteristics[char_uuid] = characteristic
        self.advertisement = Advertisement(name, [uuid for uuid, _ in entries[:-1]])
        bus.export(self.root + "/advertisement", self.advertisement)

    async def call(self, path, interface, member, signature="", body=()):
        return await call(self.bus, path, interface, member, signature, body)

    async def register(self):
        adapter = self.adapter_path
        properties = "org.freedesktop.DBus.Properties"
        await self.call(adapter, properties, "Set", "ssv", ["org.bluez.Adapter1", "Alias", Variant("s", self.name)])
        await self.call(adapter, properties, "Set", "ssv", ["org.bluez.Adapter1", "Powered", Variant("b", True)])
        self.address = (await self.call(adapter, properties, "Get", "ss", ["org.bluez.Adapter1", "Address"]))[0].value
        await self.call(adapter, "org.bluez.GattManager1", "RegisterApplication", "oa{sv}", [self.root, {}])
        await self.call(adapter, "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement", "oa{sv}",
                        [self.root + "/advertisement", {}])

    async def notify(self, measurement, payload):
        characteristic = self.characteristics[measurement]
        if not characteristic.notifying:
            return False
        characteristic.notify(payload)
        return True


async def call(bus, path, interface, member, signature="", body=()):
    """Calls bluetoothd; raises with its error name when it refuses."""
    reply = await bus.call(Message(destination="org.bluez", path=path, interface=interface, member=member,
                                   signature=signature, body=list(body)))
    if reply.message_type == MessageType.ERROR:
        raise RuntimeError("%s.%s on %s: %s %s" % (interface, member, path, reply.error_name, reply.body))
    return reply.body


async def system_bus():
    return await MessageBus(bus_type=BusType.SYSTEM).connect()


def ride_streams(journal, from_second, seconds):
    """Per sensor kind, [ride second, payload hex] of its measurement for `seconds` from `from_second` of the
    ride. Made before the VM boots: parsing a long journal under software emulation takes minutes."""
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Writes the sensors' notification streams for a ride window.")
    parser.add_argument("journal")
    parser.add_argument("--from-second", type=float, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    arguments = parser.parse_args()
    json.dump(ride_streams(arguments.journal, arguments.from_second, arguments.seconds), sys.stdout)
