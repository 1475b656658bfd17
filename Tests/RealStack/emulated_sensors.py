"""Emulated cycling sensors on a real bluetoothd: each `Sensor` is a BlueZ GATT application plus an LE
advertisement on its own (virtual) controller, registered through org.bluez.GattManager1 and
org.bluez.LEAdvertisingManager1 (BlueZ doc/gatt-api.txt, doc/advertising-api.txt). bluetoothd turns it into real
ATT traffic on the emulated air.

What a sensor sends and when is the shared emulator's (Tests/SensorEmulator/ride_sensors.py: a real ride's
notifications at the journal's times, the power meter's with the wheel data of the same moment); bumble's sensors
(bumble_sensors.py) and the BlueZ stand-in of the command-line tests use the same. Run as a program, this writes the
sensors' notification streams for a window of a ride (made before the VM boots: parsing a long journal under
software emulation takes minutes).
"""
import argparse
import json
import os
import sys

from dbus_fast import BusType, Message, MessageType, PropertyAccess, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, dbus_property, method

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "SensorEmulator"))
from ride_sensors import RideSensor, full_uuid, measurement_streams, ride_streams  # noqa: E402


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


class Sensor(RideSensor):
    """One emulated sensor on one BlueZ adapter: a GATT application with the services of `kinds` (and Battery)
    and an advertisement."""

    def __init__(self, bus, kinds, adapter, name, battery, streams, log):
        super().__init__(name, battery, measurement_streams(kinds, streams), log, kinds)
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Writes the sensors' notification streams for a ride window.")
    parser.add_argument("journal")
    parser.add_argument("--from-second", type=float, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    arguments = parser.parse_args()
    json.dump(ride_streams(arguments.journal, arguments.from_second, arguments.seconds), sys.stdout)
