#!/usr/bin/env python3
"""A BlueZ stand-in for cyclelog's tests: owns org.bluez on a private bus and plays sensors from ride journals.

It exposes what a GATT client of BlueZ 5.66 sees (BlueZ's doc/org.bluez.*.rst):
ObjectManager on /, Adapter1 on /org/bluez/hci0 (discovery with a filter), Device1 + Battery1 per sensor (shown
once discovery starts), GattService1 / GattCharacteristic1 exported on connect, ReadValue (which also changes
Value, as BlueZ does), StartNotify / StopNotify, and Value PropertiesChanged once per notification.

A scenario (JSON) names the sensors and what goes wrong, in seconds after the first notification:
  {"sensors": [{"address": "C0:11:22:33:44:01", "name": "Stages Power L", "service": "1818",
                "measurement": "2a63", "journal": "ride.journal", "rateHz": 4, "battery": 80,
                "reads": {"2a65": "08000000", "2a5d": "05"}}],
   "events": [{"at": 6, "sensor": "C0:11:22:33:44:01", "do": "drop", "seconds": 4},
              {"at": 12, "sensor": "…", "do": "silence", "seconds": 5},
              {"at": 18, "do": "restart", "seconds": 2},
              {"at": 24, "sensor": "…", "do": "still", "seconds": 10}],
   "sentLog": "sent.log"}
"drop" loses the link (Connect fails until it is back in range); "silence" keeps the link but sends nothing;
"restart" is bluetoothd leaving the bus and coming back (connections and notify sessions lost); "still" keeps
sending, but 0 W without crank data (a power meter on a bike that stands), and the ride goes on where it
stopped afterwards. A sensor with "stillSeconds": N starts that way for its first N seconds; one with
"skipSeconds": N starts N seconds into its journal.

A power meter with "controlPoint": {"offset": -10, "crankLength": 345, "offsetResult": 1, "attError": "fe"}
gets a Cycling Power Control Point (write + indicate) that answers as ride_sensors.PowerControlPoint says, its
ATT errors passed on in BlueZ's words.

A smart trainer: {"address": …, "name": "KICKR", "service": "1826", "measurement": "2ad2",
"trainer": {"targets": ["power", "resistance", "sim"], "powerRange": [0, 1500, 1], "tauSeconds": 1,
"refuse": {"00": 5}, "readsHigh": 1.04, "cadence": 90}} sends Indoor Bike Data made by
ride_sensors.FitnessMachineTrainer (no journal), offers its Feature and ranges to read, a Fitness Machine Control
Point (write + indicate) that answers as the trainer does, and Fitness Machine Status. A power meter with
"follows": "<the trainer's address>" sends the trainer's true power (the rider's crank meter on that bike). The
event {"do": "cadence", "sensor": <trainer>, "rpm": 30} sets the rider's cadence.

A scenario with "hub": {…} also has a second adapter, /org/bluez/hci1, with GattManager1 and LEAdvertisingManager1
for `record --bridge`, and an app that connects to what is registered there, subscribes and writes (`Hub`).

What the sensors send, when, and how they answer is the shared emulator's (Tests/SensorEmulator/ride_sensors.py,
which the real-stack VM uses too); this file only shows it as BlueZ would. The sent log ("sentLog") has a line per
notification sent, "<unix time> <address> <uuid> <hex> <ride second>", per control-point write,
"<unix time> <address> write <hex>", and per scenario event, "<unix time> <address> event <what>", so tests can
compare what was sent with what was stored.
"""
import argparse
import asyncio
import json
import os
import sys
import time

from dbus_fast import DBusError, Message, MessageType, PropertyAccess, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, dbus_property, method

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "SensorEmulator"))
from ride_sensors import (  # noqa: E402
    AttError, FitnessMachineTrainer, PowerControlPoint, RideSensor, full_uuid, journal_notifications)

# dbus-fast does not tell a method who called; the stand-in keeps notify sessions per sender as BlueZ does, so
# it records the sender of each incoming call here.
LAST_SENDER = [None]
ADAPTER = "/org/bluez/hci0"
HUB_ADAPTER = "/org/bluez/hci1"


def device_path(address):
    return ADAPTER + "/dev_" + address.replace(":", "_").upper()


# dbus-fast answers Properties.Get/GetAll and ObjectManager.GetManagedObjects from the @dbus_property
# declarations, and emits InterfacesAdded for every export.
class Adapter(ServiceInterface):
    def __init__(self, standin, address="00:AA:01:00:00:00", alias="standin"):
        super().__init__("org.bluez.Adapter1")
        self.standin = standin
        self.address, self.alias = address, alias
        self.powered = True
        self.discovering = False
        self.filter = {}

    @method()
    def SetDiscoveryFilter(self, properties: "a{sv}"):
        if not self.powered:
            raise DBusError("org.bluez.Error.NotReady", "Resource Not Ready")
        self.filter = {key: value.value for key, value in properties.items()}

    @method()
    def StartDiscovery(self):
        if not self.powered:
            raise DBusError("org.bluez.Error.NotReady", "Resource Not Ready")
        self.discovering = True
        self.emit_properties_changed({"Discovering": True})
        wanted = {uuid.lower() for uuid in self.filter.get("UUIDs", [])}
        for sensor in self.standin.sensors:
            if not wanted or full_uuid(sensor.service) in wanted:
                sensor.appear()

    @method()
    def StopDiscovery(self):
        # bluetoothd answers a client that has no discovery running this way (src/adapter.c, stop_discovery).
        if not self.discovering:
            raise DBusError("org.bluez.Error.Failed", "No discovery started")
        self.discovering = False
        self.emit_properties_changed({"Discovering": False})

    @dbus_property(access=PropertyAccess.READ)
    def Address(self) -> "s":
        return self.address

    @dbus_property(access=PropertyAccess.READ)
    def Alias(self) -> "s":
        return self.alias

    @dbus_property(access=PropertyAccess.READWRITE)
    def Powered(self) -> "b":
        return self.powered

    @Powered.setter
    def Powered(self, value: "b"):
        self.powered = value
        self.emit_properties_changed({"Powered": value})

    @dbus_property(access=PropertyAccess.READ)
    def Discovering(self) -> "b":
        return self.discovering


class Device(ServiceInterface):
    def __init__(self, sensor):
        super().__init__("org.bluez.Device1")
        self.sensor = sensor

    @method()
    async def Connect(self):
        await self.sensor.connect()

    @method()
    async def Disconnect(self):
        self.sensor.set_link(False)

    @dbus_property(access=PropertyAccess.READ)
    def Address(self) -> "s":
        return self.sensor.address

    @dbus_property(access=PropertyAccess.READ)
    def AddressType(self) -> "s":
        return "random"

    @dbus_property(access=PropertyAccess.READ)
    def Name(self) -> "s":
        return self.sensor.name

    @dbus_property(access=PropertyAccess.READ)
    def Alias(self) -> "s":
        return self.sensor.name

    @dbus_property(access=PropertyAccess.READ)
    def Adapter(self) -> "o":
        return ADAPTER

    @dbus_property(access=PropertyAccess.READ)
    def UUIDs(self) -> "as":
        return [full_uuid(self.sensor.service), full_uuid("180f")]

    @dbus_property(access=PropertyAccess.READ)
    def RSSI(self) -> "n":
        return self.sensor.rssi

    @dbus_property(access=PropertyAccess.READ)
    def Connected(self) -> "b":
        return self.sensor.connected

    @dbus_property(access=PropertyAccess.READ)
    def ServicesResolved(self) -> "b":
        return self.sensor.resolved


class Battery(ServiceInterface):
    def __init__(self, sensor):
        super().__init__("org.bluez.Battery1")
        self.sensor = sensor

    @dbus_property(access=PropertyAccess.READ)
    def Percentage(self) -> "y":
        return self.sensor.battery


class GattService(ServiceInterface):
    def __init__(self, sensor, uuid):
        super().__init__("org.bluez.GattService1")
        self.sensor, self.uuid = sensor, uuid

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return full_uuid(self.uuid)

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return True

    @dbus_property(access=PropertyAccess.READ)
    def Device(self) -> "o":
        return device_path(self.sensor.address)


class GattCharacteristic(ServiceInterface):
    def __init__(self, sensor, path, service_path, uuid, flags, value=b""):
        super().__init__("org.bluez.GattCharacteristic1")
        self.sensor, self.path, self.service_path, self.uuid, self.flags = sensor, path, service_path, uuid, flags
        self.value = value
        self.sessions = set()

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return full_uuid(self.uuid)

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return self.service_path

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.value

    @dbus_property(access=PropertyAccess.READ)
    def Notifying(self) -> "b":
        return bool(self.sessions)

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return self.flags

    @method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        if not self.sensor.connected:
            raise DBusError("org.bluez.Error.Failed", "Not connected")
        # BlueZ stores what it read as the new Value and announces it like a notification.
        self.emit_properties_changed({"Value": self.value})
        return self.value

    @method()
    def StartNotify(self):
        if "notify" not in self.flags and "indicate" not in self.flags:
            raise DBusError("org.bluez.Error.NotSupported", "Operation is not supported")
        self.sessions.add(LAST_SENDER[0])
        self.emit_properties_changed({"Notifying": True})

    @method()
    def StopNotify(self):
        self.sessions.discard(LAST_SENDER[0])
        if not self.sessions:
            self.emit_properties_changed({"Notifying": False})

    def notify(self, payload):
        self.value = payload
        self.emit_properties_changed({"Value": payload})

    @method()
    async def WriteValue(self, value: "ay", options: "a{sv}"):
        if "write" not in self.flags:
            raise DBusError("org.bluez.Error.NotPermitted", "Write not permitted")
        if not self.sensor.connected:
            raise DBusError("org.bluez.Error.Failed", "Not connected")
        self.sensor.log_write(value)
        try:
            respond = self.sensor.control_point.answer(bytes(value), indications_on=bool(self.sessions))
        except AttError as error:
            # BlueZ passes the sensor's ATT error on in these words (src/gatt-client.c).
            raise DBusError("org.bluez.Error.Failed", "Operation failed with ATT error: 0x%02x" % error.code)
        # The write is acknowledged first; the answer comes as an indication a little later.
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, self.notify, respond)
        if self.sensor.trainer is not None:
            status = next(c for c in self.sensor.gatt[2] if c.uuid == "2ada")
            for delay, message in self.sensor.trainer.status_after(bytes(value), respond):
                loop.call_later(0.2 + delay, status.notify, message)


class Sensor(RideSensor):
    """A sensor of the scenario: the shared emulator's behaviour (ride_sensors.py), paced at `rateHz`, shown as
    BlueZ shows a device (Device1, Battery1, its GATT objects once connected)."""

    def __init__(self, standin, spec, base_folder):
        measurement = int(spec["measurement"], 16)
        trainer = spec.get("trainer")
        self.trainer = None if trainer is None else FitnessMachineTrainer(
            targets=trainer.get("targets", ("power", "resistance", "sim")),
            power_range=trainer.get("powerRange", (0, 1500, 1)),
            resistance_range=trainer.get("resistanceRange", (0, 200, 1)),
            tau_seconds=trainer.get("tauSeconds", 1.0), refuse=trainer.get("refuse"),
            reads_high=trainer.get("readsHigh", 1.0), cadence_rpm=trainer.get("cadence", 90.0),
            spin_down_result=trainer.get("spinDownResult", 2))
        self.follows = spec.get("follows", "").upper()
        if self.trainer is not None or self.follows:
            # Made as it goes (the trainer's model), not played from a journal.
            notifications = [(0.0, b"")]
        else:
            journal = spec["journal"] if os.path.isabs(spec["journal"]) else os.path.join(base_folder, spec["journal"])
            notifications = [(second, payload) for second, uuid, payload in journal_notifications(journal)
                             if uuid == measurement]
        if not notifications:
            raise SystemExit(f"{journal} has no {spec['measurement']} notifications")
        self.rate = float(spec.get("rateHz", 1))
        # "skipSeconds": start that far into the journal (its notifications at the sensor's rate).
        skipped = int(float(spec.get("skipSeconds", 0)) * self.rate)
        notifications = notifications[skipped:] or notifications
        super().__init__(spec["name"], int(spec.get("battery", 90)), {measurement: notifications}, standin.sent_log)
        self.standin = standin
        self.address = spec["address"].upper()
        self.service = spec["service"]
        self.measurement = measurement
        self.reads = {uuid: bytes.fromhex(value) for uuid, value in spec.get("reads", {}).items()}
        if self.trainer is not None:
            self.reads.update({"2acc": self.trainer.feature(), "2ad8": self.trainer.supported_power_range(),
                               "2ad6": self.trainer.supported_resistance_range()})
        self.rssi = int(spec.get("rssi", -60))
        self.measurement_flags = spec.get("measurementFlags", ["notify"])
        control_point = spec.get("controlPoint")
        self.control_point = self.trainer if control_point is None else PowerControlPoint(
            offset=int(control_point.get("offset", 0)), crank_half_mm=control_point.get("crankLength"),
            offset_result=int(control_point.get("offsetResult", 1)),
            att_error=int(control_point["attError"], 16) if "attError" in control_point else None)
        self.control_point_uuid = "2ad9" if self.trainer is not None else "2a66"
        self.connected = False
        self.resolved = False
        self.visible = False
        self.in_range = True
        self.still_seconds = float(spec.get("stillSeconds", 0))
        self.path = device_path(self.address)
        self.device = Device(self)
        self.battery_interface = Battery(self)
        self.gatt = None

    def appear(self):
        if self.visible:
            return
        self.visible = True
        self.standin.export(self.path, [self.device, self.battery_interface])

    def build_gatt(self):
        if self.gatt is not None:
            return
        service_path = self.path + "/service000c"
        service = GattService(self, self.service)
        characteristics = [GattCharacteristic(self, service_path + "/char000d", service_path, self.measurement,
                                              self.measurement_flags, self.streams[self.measurement][0][1])]
        handle = 0x10
        for uuid, value in self.reads.items():
            characteristics.append(GattCharacteristic(self, service_path + f"/char{handle:04x}", service_path,
                                                      uuid, ["read"], value))
            handle += 3
        if self.control_point is not None:
            characteristics.append(GattCharacteristic(self, service_path + f"/char{handle:04x}", service_path,
                                                      self.control_point_uuid, ["write", "indicate"]))
            handle += 3
        if self.trainer is not None:
            characteristics.append(GattCharacteristic(self, service_path + f"/char{handle:04x}", service_path,
                                                      "2ada", ["notify"]))
        self.gatt = (service_path, service, characteristics)
        self.standin.export(service_path, [service])
        for characteristic in characteristics:
            self.standin.export(characteristic.path, [characteristic])

    @property
    def measurement_characteristic(self):
        return self.gatt[2][0] if self.gatt else None

    async def connect(self):
        if self.connected:
            raise DBusError("org.bluez.Error.AlreadyConnected", "Already Connected")
        await asyncio.sleep(0.3)
        if not self.in_range:
            raise DBusError("org.bluez.Error.Failed", "le-connection-abort-by-local")
        self.set_link(True)

    def set_link(self, up):
        if up == self.connected:
            return
        if up:
            self.connected = True
            self.device.emit_properties_changed({"Connected": True})
            self.build_gatt()
            self.resolved = True
            self.device.emit_properties_changed({"ServicesResolved": True})
        else:
            self.resolved = False
            self.device.emit_properties_changed({"ServicesResolved": False})
            self.connected = False
            self.device.emit_properties_changed({"Connected": False})

    def forget_sessions(self):
        self.connected = self.resolved = False
        if self.gatt:
            for characteristic in self.gatt[2]:
                characteristic.sessions.clear()

    def listening(self, measurement):
        characteristic = self.measurement_characteristic
        return bool(self.standin.on_bus and self.connected and characteristic and characteristic.sessions)

    async def notify(self, measurement, payload):
        self.measurement_characteristic.notify(payload)
        self.standin.first_sent()
        return True

    async def run(self):
        if self.trainer is None and not self.follows:
            return await self.play_at_rate(self.measurement, self.rate, self.still_seconds)
        # A trainer's data, or a meter on the trainer's bike: made from the trainer's model at the sensor's rate.
        trainer = self.trainer or next(s.trainer for s in self.standin.sensors if s.address == self.follows)
        period, next_time, second = 1.0 / self.rate, time.monotonic(), 0.0
        while True:
            next_time += period
            await asyncio.sleep(max(0.0, next_time - time.monotonic()))
            if self.listening(self.measurement):
                payload = trainer.bike_data() if self.trainer is not None else trainer.meter_measurement()
                if await self.send(self.measurement, payload, second):
                    second += period


class GattManager(ServiceInterface):
    """The hub adapter's GATT server manager: a registered application is read by the scenario's app (`Hub`)."""

    def __init__(self, hub):
        super().__init__("org.bluez.GattManager1")
        self.hub = hub

    @method()
    def RegisterApplication(self, application: "o", options: "a{sv}"):
        self.hub.registered(LAST_SENDER[0], application)

    @method()
    def UnregisterApplication(self, application: "o"):
        self.hub.unregistered()


class AdvertisingManager(ServiceInterface):
    def __init__(self, hub):
        super().__init__("org.bluez.LEAdvertisingManager1")
        self.hub = hub

    @method()
    def RegisterAdvertisement(self, advertisement: "o", options: "a{sv}"):
        self.hub.log("advertised")

    @method()
    def UnregisterAdvertisement(self, advertisement: "o"):
        self.hub.log("withdrawn")


class AppDevice(ServiceInterface):
    """The app as BlueZ shows a central connected to the hub's adapter."""

    def __init__(self, address, name):
        super().__init__("org.bluez.Device1")
        # Not `name`: dbus-fast keeps the interface's name there.
        self.address, self.app_name, self.connected = address, name, True

    @dbus_property(access=PropertyAccess.READ)
    def Address(self) -> "s":
        return self.address

    @dbus_property(access=PropertyAccess.READ)
    def AddressType(self) -> "s":
        return "public"

    @dbus_property(access=PropertyAccess.READ)
    def Name(self) -> "s":
        return self.app_name

    @dbus_property(access=PropertyAccess.READ)
    def Alias(self) -> "s":
        return self.app_name

    @dbus_property(access=PropertyAccess.READ)
    def Adapter(self) -> "o":
        return HUB_ADAPTER

    @dbus_property(access=PropertyAccess.READ)
    def Connected(self) -> "b":
        return self.connected


class Hub:
    """A second adapter (hci1) with GattManager1 and LEAdvertisingManager1, and an app that connects to what is
    registered there as bluetoothd's GATT client would: it reads the application's objects, subscribes to `subscribe`,
    logs each value the application announces ("<unix time> <app> hub-<uuid> <hex>") and writes `writes` to the
    Fitness Machine control point, or the write's `characteristic` ("<unix time> <app> app-write <hex>", then
    "… app-written <hex> ok|<error>").
    {"hub": {"app": "00:AA:02:00:00:06", "appName": "App", "appAt": 2, "subscribe": ["2a63", "2ad9"],
             "writes": [{"at": 4, "value": "00"}, {"at": 6, "value": "05c800"},
                        {"at": 8, "characteristic": "2a55", "value": "0140420f00"}], "reconnectAt": 60,
             "reconnects": 50, "awaySeconds": 0.5, "backSeconds": 1, "leaveAt": 150}}
    Times count from the first notification, as the scenario's events do."""

    def __init__(self, standin, spec):
        self.standin, self.spec = standin, spec
        self.adapter = Adapter(standin, spec.get("adapterAddress", "00:AA:01:00:00:02"), "hub")
        self.interfaces = [self.adapter, GattManager(self), AdvertisingManager(self)]
        self.app = spec.get("app", "00:AA:02:00:00:06").upper()
        self.device = AppDevice(self.app, spec.get("appName", "App"))
        self.device_path = HUB_ADAPTER + "/dev_" + self.app.replace(":", "_")
        self.application = None

    def log(self, what):
        self.standin.sent_log.write("%.6f %s %s\n" % (time.time(), self.app, what))

    def registered(self, sender, path):
        self.application = (sender, path)
        self.log("registered")
        asyncio.get_running_loop().create_task(self.ride())

    def unregistered(self):
        self.application = None
        self.log("unregistered")

    async def call(self, path, interface, member, signature="", body=()):
        reply = await self.standin.bus.call(Message(
            destination=self.application[0], path=path, interface=interface, member=member,
            signature=signature, body=list(body)))
        if reply.message_type == MessageType.ERROR:
            raise DBusError(reply.error_name, " ".join(str(part) for part in reply.body))
        return reply.body

    async def ride(self):
        await self.standin.started.wait()
        await self.standin.until(self.spec.get("appAt", 1))
        sender, root = self.application
        self.standin.export(self.device_path, [self.device])
        self.log("connected")
        objects = (await self.call(root, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))[0]
        paths = {}
        for path, interfaces in objects.items():
            characteristic = interfaces.get("org.bluez.GattCharacteristic1")
            if characteristic:
                paths[characteristic["UUID"].value[4:8]] = path
        uuids = {path: uuid for uuid, path in paths.items()}

        def announced(message):
            if (message.message_type == MessageType.SIGNAL and message.sender == sender
                    and message.member == "PropertiesChanged" and message.path in uuids
                    and "Value" in message.body[1]):
                self.log("hub-%s %s" % (uuids[message.path], bytes(message.body[1]["Value"].value).hex()))
        self.standin.bus.add_message_handler(announced)
        await self.standin.bus.call(Message(
            destination="org.freedesktop.DBus", path="/org/freedesktop/DBus", interface="org.freedesktop.DBus",
            member="AddMatch", signature="s",
            body=["type='signal',sender='%s',member='PropertiesChanged'" % sender]))
        await self.sessions(paths, "StartNotify")
        self.log("subscribed")
        for write in self.spec.get("writes", []):
            await self.standin.until(write["at"])
            self.log("app-write %s" % write["value"])
            try:
                await self.call(paths[write.get("characteristic", "2ad9")], "org.bluez.GattCharacteristic1",
                                "WriteValue", "aya{sv}",
                                [bytes.fromhex(write["value"]), {"device": Variant("o", self.device_path)}])
                self.log("app-written %s ok" % write["value"])
            except DBusError as error:
                self.log("app-written %s %s" % (write["value"], error.type))
        # Then (from `reconnectAt`) away and back `reconnects` times, as an app whose link drops: bluetoothd ends the
        # notify sessions of a link that went down, and the app subscribes again once it is back.
        await self.standin.until(self.spec.get("reconnectAt", 0))
        for _ in range(self.spec.get("reconnects", 0)):
            await self.connect(False, paths)
            await asyncio.sleep(self.spec.get("awaySeconds", 0.5))
            await self.connect(True, paths)
            await asyncio.sleep(self.spec.get("backSeconds", 1.0))
        if "leaveAt" in self.spec:
            await self.standin.until(self.spec["leaveAt"])
            await self.connect(False, paths)

    async def sessions(self, paths, member):
        """StartNotify or StopNotify on each characteristic of `subscribe`, as bluetoothd calls them."""
        for uuid in self.spec.get("subscribe", []):
            await self.call(paths[uuid], "org.bluez.GattCharacteristic1", member)

    async def connect(self, up, paths):
        if not up:
            await self.sessions(paths, "StopNotify")
        self.device.connected = up
        self.device.emit_properties_changed({"Connected": up})
        if up:
            await self.sessions(paths, "StartNotify")
        self.log("connected" if up else "left")


class StandIn:
    def __init__(self, address, scenario, base_folder):
        self.address = address
        self.scenario = scenario
        self.exported = {}
        self.bus = None
        self.on_bus = False
        self.adapter = Adapter(self)
        self.hub = Hub(self, scenario["hub"]) if "hub" in scenario else None
        if self.hub:
            self.export(HUB_ADAPTER, self.hub.interfaces)
        log_path = scenario.get("sentLog")
        self.sent_log = open(log_path or os.devnull, "w", buffering=1)
        self.sensors = [Sensor(self, spec, base_folder) for spec in scenario["sensors"]]
        self.first_notification = None
        self.started = asyncio.Event()

    def export(self, path, interfaces):
        self.exported[path] = interfaces
        if self.on_bus:
            for interface in interfaces:
                self.bus.export(path, interface)

    async def until(self, seconds):
        """Sleeps until `seconds` after the first notification (the scenario's clock)."""
        await asyncio.sleep(max(0.0, self.first_notification + seconds - time.monotonic()))

    def first_sent(self):
        """The scenario's times count from the first notification."""
        if self.first_notification is None:
            self.first_notification = time.monotonic()
            self.started.set()

    async def join_bus(self):
        self.bus = await MessageBus(bus_address=self.address).connect()
        self.bus.export(ADAPTER, self.adapter)
        for path, interfaces in self.exported.items():
            for interface in interfaces:
                self.bus.export(path, interface)
        self.on_bus = True
        await self.bus.request_name("org.bluez")
        print("standin: on the bus as org.bluez", flush=True)

    async def leave_bus(self):
        self.on_bus = False
        self.adapter.discovering = False
        for sensor in self.sensors:
            sensor.forget_sessions()
        self.bus.disconnect()
        await self.bus.wait_for_disconnect()
        print("standin: left the bus", flush=True)

    async def play_events(self):
        await self.started.wait()
        for event in sorted(self.scenario.get("events", []), key=lambda e: e["at"]):
            await self.until(event["at"])
            seconds = event.get("seconds", 0)
            sensor = next((s for s in self.sensors if s.address == event.get("sensor", "").upper()), None)
            print(f"standin: {event['do']} {event.get('sensor', '')} for {seconds} s", flush=True)
            if event["do"] == "drop":
                sensor.in_range = False
                sensor.set_link(False)
                asyncio.get_running_loop().call_later(seconds, setattr, sensor, "in_range", True)
            elif event["do"] == "silence":
                sensor.silence(seconds)
            elif event["do"] == "still":
                sensor.still(seconds)
            elif event["do"] == "cadence":
                sensor.trainer.cadence_rpm = float(event["rpm"])
                sensor.log_event("cadence %s" % event["rpm"])
            elif event["do"] == "restart":
                await self.leave_bus()
                await asyncio.sleep(seconds)
                await self.join_bus()




def remember_sender(bus):
    def handler(message: Message):
        if message.message_type == MessageType.METHOD_CALL:
            LAST_SENDER[0] = message.sender
        return None
    bus.add_message_handler(handler)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True, help="the private bus, unix:path=…")
    parser.add_argument("--scenario", required=True)
    args = parser.parse_args()
    with open(args.scenario) as file:
        scenario = json.load(file)
    standin = StandIn(args.address, scenario, os.path.dirname(os.path.abspath(args.scenario)))
    original_join = standin.join_bus

    async def join_and_watch():
        await original_join()
        remember_sender(standin.bus)
    standin.join_bus = join_and_watch
    await standin.join_bus()
    tasks = [asyncio.create_task(sensor.run()) for sensor in standin.sensors]
    tasks.append(asyncio.create_task(standin.play_events()))
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
