"""Emulated cycling sensors that talk like real ones: each is a bumble (Google's Python Bluetooth stack) device
with its own in-process controller, and the kernel's side of the same emulated air is one more bumble controller
behind /dev/vhci. Unlike a BlueZ peripheral (which sends Handle Value Multiple Notifications, 0x23), bumble's GATT
server sends plain Handle Value Notifications (0x1B), one characteristic value per PDU, as power meters do. The
power meter also has a Cycling Power Control Point (write + indicate) for `cyclelog calibrate`.

Two bumble 0.0.236 shortcomings are worked around (../shared/spec/real-bluez-in-a-vm.md):
- its local link stamps LE ACL data with the sending controller's random address even when the link was made
  with the public one, so the peripheral finds no connection for it and drops everything: `AddressedLink` sends
  with the address the connection was made with;
- its controller announces LL Privacy and Extended Advertising but sends only the legacy LE Connection Complete
  event, for which kernel 6.1 then waits forever (the next Connect fails with EBUSY): those feature bits are
  hidden from the kernel.
"""
import asyncio
import os
import struct
import sys
import time

from bumble import att, hci
from bumble.controller import Controller
from bumble.core import UUID, AdvertisingData, PhysicalTransport
from bumble.device import Device, Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "SensorEmulator"))
from ride_sensors import (  # noqa: E402
    AttError, FitnessMachineTrainer, PowerControlPoint, RideSensor, measurement_streams)

HIDDEN_FEATURES = hci.LeFeatureMask.LL_PRIVACY | hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
PROPERTIES = {"read": Characteristic.Properties.READ, "notify": Characteristic.Properties.NOTIFY}
# The power meter's Cycling Power Feature: wheel and crank data (bits 2, 3), offset compensation (bit 9), crank
# length adjustment (bit 12) — what its control point answers (CPS).
POWER_FEATURES = struct.pack("<I", 0x0000120C)


class AddressedLink(LocalLink):
    """A LocalLink whose LE data carries the address each connection was made with."""

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        connection = sender_controller.le_connections.get(destination_address)
        receiver = self.find_le_controller(destination_address)
        if transport != PhysicalTransport.LE or connection is None or receiver is None:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        source = connection.self_address
        asyncio.get_running_loop().call_soon(lambda: receiver.on_link_acl_data(source, transport, data))


def controller(name, link, address, **transport):
    made = Controller(name, link=link, public_address=address, **transport)
    made.le_features = made.le_features & ~HIDDEN_FEATURES
    return made


async def kernel_controller(link, address):
    """Opens /dev/vhci: the kernel gets a new HCI controller (the next hciN) that is a bumble controller on
    `link`. Returns the transport, which must stay open as long as the controller is used, with the controller as
    its `controller`."""
    transport = await open_transport("vhci")
    # Kept on the transport: what the kernel asked it to advertise is read from it (`LegacyAdvertiser`).
    transport.controller = controller("linux", link, address, host_source=transport.source, host_sink=transport.sink)
    return transport


class Bystander:
    """A device that is not a sensor (a keyboard, say) on the same air: a bumble device advertising a service of its
    own and answering GATT discovery, which the host connects to during the ride. A capture of the ride must hold
    none of its traffic."""

    SERVICE = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"

    def __init__(self, link, address, name):
        own = controller(name, link, address)
        self.device = Device(name=name, address=hci.Address(address), host=Host(own, AsyncPipeSink(own)))
        self.address, self.name = address, name
        characteristic = Characteristic("6E400003-B5A3-F393-E0A9-E50E24DCCA9E", Characteristic.Properties.READ,
                                        Characteristic.READABLE, b"keys pressed: none")
        self.device.add_services([Service(self.SERVICE, [characteristic])])
        self.device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS,
             bytes(reversed(bytes.fromhex(self.SERVICE.replace("-", ""))))),
            (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()),
        ]))

    async def start(self):
        await self.device.power_on()
        await self.device.start_advertising(own_address_type=hci.OwnAddressType.PUBLIC)


def answer_control_point(sensor, answers, value):
    """A write to `sensor`'s control point, answered by `answers` (the shared emulator's): logged as `control point
    write`, then indicated after the Write Response and logged as `control point answer`; a refused write becomes
    the ATT error the sensor sends."""
    value = bytes(value)
    sensor.log_event("control point write %s" % value.hex())
    indications_on = any(cccds.get(sensor.control_point.handle, b"\0")[0] & 0x02
                         for cccds in sensor.device.gatt_server.subscribers.values())
    try:
        answer = answers.answer(value, indications_on)
    except AttError as error:
        raise att.ATT_Error(error_code=error.code)

    async def indicate():
        await asyncio.sleep(0.2)  # the Write Response goes first
        await sensor.device.indicate_subscribers(sensor.control_point, answer)
        sensor.log_event("control point answer %s" % answer.hex())
    asyncio.ensure_future(indicate())


class BumbleTrainer(RideSensor):
    """A smart trainer on the emulated air: the Fitness Machine Service of the shared emulator's trainer
    (ride_sensors.FitnessMachineTrainer) — Indoor Bike Data made from its model 4 times a second, its Feature and
    Supported Power Range to read, a Fitness Machine Control Point (write + indicate) answered as FTMS says, and
    Fitness Machine Status."""

    def __init__(self, link, address, name, log, trainer=None):
        self.trainer = trainer or FitnessMachineTrainer()
        super().__init__(name, 100, {0x2AD2: [(0.0, self.trainer.bike_data())]}, log, [])
        own = controller(name, link, address)
        self.device = Device(name=name, address=hci.Address(address), host=Host(own, AsyncPipeSink(own)))
        self.address = address
        self.bike_data = Characteristic("2AD2", Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
        self.control_point = Characteristic(
            "2AD9", Characteristic.Properties.WRITE | Characteristic.Properties.INDICATE, Characteristic.WRITEABLE,
            CharacteristicValue(write=self.on_control_point_write))
        self.status = Characteristic("2ADA", Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
        characteristics = [
            self.bike_data,
            Characteristic("2ACC", Characteristic.Properties.READ, Characteristic.READABLE, self.trainer.feature()),
            Characteristic("2AD8", Characteristic.Properties.READ, Characteristic.READABLE,
                           self.trainer.supported_power_range()),
            self.control_point, self.status,
        ]
        self.device.add_services([Service("1826", characteristics)])
        self.device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", 0x1826)),
            (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()),
        ]))

    async def start(self):
        await self.device.power_on()
        await self.device.start_advertising(own_address_type=hci.OwnAddressType.PUBLIC)

    def subscribed(self, characteristic, bit):
        return any(cccds.get(characteristic.handle, b"\0")[0] & bit
                   for cccds in self.device.gatt_server.subscribers.values())

    async def notify(self, measurement, payload):
        if not self.subscribed(self.bike_data, 0x01):
            return False
        await self.device.notify_subscribers(self.bike_data, payload)
        return True

    async def run(self):
        """Indoor Bike Data from the trainer's model, 4 times a second, while a client listens."""
        second = 0.0
        while True:
            await asyncio.sleep(0.25)
            if await self.send(0x2AD2, self.trainer.bike_data(), second):
                second += 0.25

    def on_control_point_write(self, connection, value):
        """Answered as the shared emulator's trainer answers."""
        answer_control_point(self, self.trainer, value)


class BumbleSensor(RideSensor):
    """One emulated sensor: a bumble device on its own controller on `link`, with public address `address`,
    advertising its services (connectable, general discoverable) whenever it is not connected."""

    def __init__(self, link, address, kinds, name, battery, streams, log, offset=-10, crank_half_mm=340):
        super().__init__(name, battery, measurement_streams(kinds, streams), log, kinds)
        self.answers = PowerControlPoint(offset=offset, crank_half_mm=crank_half_mm)
        self.control_point = None
        own = controller(name, link, address)
        self.device = Device(name=name, address=hci.Address(address), host=Host(own, AsyncPipeSink(own)))
        self.address = address
        self.characteristics = {}
        services = []
        entries_per_service = self.services()
        for service_uuid, entries in entries_per_service:
            characteristics = []
            for uuid, flags, value in entries:
                properties = Characteristic.Properties(0)
                for flag in flags:
                    properties |= PROPERTIES[flag]
                if uuid == 0x2A65:
                    value = POWER_FEATURES
                characteristic = Characteristic(
                    "%04X" % uuid, properties, Characteristic.READABLE, value)
                characteristics.append(characteristic)
                self.characteristics[uuid] = characteristic
            if service_uuid == 0x1818:
                # Cycling Power Control Point: written with a Write Request, answered with an indication.
                self.control_point = Characteristic(
                    "2A66", Characteristic.Properties.WRITE | Characteristic.Properties.INDICATE,
                    Characteristic.WRITEABLE, CharacteristicValue(write=self.on_control_point_write))
                characteristics.append(self.control_point)
            services.append(Service("%04X" % service_uuid, characteristics))
        self.device.add_services(services)
        self.device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),  # LE General Discoverable, BR/EDR not supported
            (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
             b"".join(struct.pack("<H", uuid) for uuid, _ in entries_per_service[:-1])),  # Battery unlisted
            (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()),
        ]))
        self.device.on("connection", self.on_connection)

    def on_connection(self, connection):
        self.log_event("connected")
        connection.on("disconnection", lambda reason: self.on_disconnection())

    def on_disconnection(self):
        self.log_event("disconnected")
        if not self.dropped:
            asyncio.ensure_future(self.advertise())

    async def start(self):
        await self.device.power_on()
        await self.advertise()

    async def advertise(self):
        await self.device.start_advertising(own_address_type=hci.OwnAddressType.PUBLIC)

    def subscribed(self, characteristic):
        return any(cccds.get(characteristic.handle, b"\0")[0] & 0x01
                   for cccds in self.device.gatt_server.subscribers.values())

    async def notify(self, measurement, payload):
        characteristic = self.characteristics[measurement]
        if not self.subscribed(characteristic):
            return False
        await self.device.notify_subscribers(characteristic, payload)
        return True

    def on_control_point_write(self, connection, value):
        """The power meter's control point answers as the shared emulator's does (ride_sensors.PowerControlPoint)."""
        answer_control_point(self, self.answers, value)

    async def drop_link(self, seconds):
        """The sensor goes out of range: it stops sending, drops the link from its side, and does not advertise
        (so reconnecting fails) until it comes back `seconds` later."""
        self.dropped = True
        await asyncio.sleep(0.5)  # the last notification reaches the air before the link goes
        for connection in list(self.device.connections.values()):
            await connection.disconnect()
        self.log_event("dropped the link")
        await asyncio.sleep(seconds)
        self.dropped = False
        await self.advertise()
        self.log_event("back in range")


class App:
    """The app a rider rides in, as a bumble central on the same air: it finds the hub by its advertisement,
    connects, reads what the hub declares, subscribes to its four measurements and, as an app resetting its
    odometer, sets the wheel revolutions through the SC Control Point; then, as an app riding ERG, it asks for the
    trainer and a target power through the Fitness Machine control point. Everything it receives goes to its log,
    a line each: "<unix time> advertisement <name> <16-bit uuids>" (bumble's controller answers a scan request with
    the advertising data again, so a name bluetoothd puts in the scan response is not seen here), "<unix time>
    read <uuid> <hex>",
    "<unix time> notify <uuid> <hex>", "<unix time> indicate <uuid> <hex>"."""

    MEASUREMENTS = (0x2A63, 0x2A5B, 0x2A37, 0x2AD2)
    READS = (0x2A65, 0x2A5D, 0x2A5C, 0x2A38, 0x2ACC, 0x2AD8, 0x2AD6)
    SC_CONTROL_POINT = 0x2A55
    MACHINE_CONTROL_POINT, MACHINE_STATUS = 0x2AD9, 0x2ADA
    SET_WHEEL_REVOLUTIONS = bytes([0x01, 0x40, 0x42, 0x0F, 0x00])  # Set Cumulative Value, 1 000 000

    def __init__(self, link, address, log_path):
        own = controller("app", link, address)
        self.device = Device(name="App", address=hci.Address(address), host=Host(own, AsyncPipeSink(own)))
        self.log = open(log_path, "w")
        self.connection = None
        self.notifications = 0  # received, on every visit

    def write(self, kind, text):
        self.log.write("%.6f %s %s\n" % (time.time(), kind, text))
        self.log.flush()
        self.notifications += kind == "notify"

    async def find(self, address, timeout=30):
        found = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement):
            if str(advertisement.address).split("/")[0].upper() == address and not found.done():
                found.set_result(advertisement)
        self.device.on("advertisement", on_advertisement)
        await self.device.start_scanning(legacy=True, own_address_type=hci.OwnAddressType.PUBLIC)
        advertisement = await asyncio.wait_for(found, timeout)
        await self.device.stop_scanning()
        name = advertisement.data.get(AdvertisingData.COMPLETE_LOCAL_NAME) or ""
        uuids = advertisement.data.get(AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS) or []
        self.write("advertisement", "%s %s" % (name.replace(" ", "_"),
                                               ",".join(uuid.to_hex_str().lower() for uuid in uuids)))
        return advertisement.address

    async def join(self, address, set_wheel=True):
        """Finds the hub, connects, reads, subscribes and (`set_wheel`) sets the wheel count."""
        await self.device.power_on()
        hub = await self.find(address)
        self.connection = await self.device.connect(hub, own_address_type=hci.OwnAddressType.PUBLIC, timeout=30)
        peer = Peer(self.connection)
        await peer.discover_services()
        await peer.discover_characteristics()

        def characteristic(uuid):
            return peer.get_characteristics_by_uuid(UUID.from_16_bits(uuid))[0]
        for uuid in self.READS:
            self.write("read", "%04x %s" % (uuid, bytes(await peer.read_value(characteristic(uuid))).hex()))
        for uuid in self.MEASUREMENTS:
            await peer.subscribe(characteristic(uuid),
                                 lambda value, uuid=uuid: self.write("notify", "%04x %s" % (uuid, bytes(value).hex())))
        control_point = characteristic(self.SC_CONTROL_POINT)
        await peer.subscribe(control_point, lambda value: self.write(
            "indicate", "%04x %s" % (self.SC_CONTROL_POINT, bytes(value).hex())), prefer_notify=False)
        if set_wheel:
            await peer.write_value(control_point, self.SET_WHEEL_REVOLUTIONS, with_response=True)
            self.write("wrote", "%04x %s" % (self.SC_CONTROL_POINT, self.SET_WHEEL_REVOLUTIONS.hex()))
        self.answers = asyncio.Queue()

        def answered(value):
            self.write("indicate", "%04x %s" % (self.MACHINE_CONTROL_POINT, bytes(value).hex()))
            self.answers.put_nowait(bytes(value))
        self.machine = characteristic(self.MACHINE_CONTROL_POINT)
        await peer.subscribe(self.machine, answered, prefer_notify=False)
        await peer.subscribe(characteristic(self.MACHINE_STATUS), lambda value: self.write(
            "notify", "%04x %s" % (self.MACHINE_STATUS, bytes(value).hex())))
        self.peer = peer

    async def ask(self, request, timeout=10):
        """One Fitness Machine control point request, written with a Write Request; its indicated answer."""
        await self.peer.write_value(self.machine, request, with_response=True)
        self.write("wrote", "%04x %s" % (self.MACHINE_CONTROL_POINT, request.hex()))
        return await asyncio.wait_for(self.answers.get(), timeout)

    async def ride_erg(self, watts):
        """Asks for the trainer (Request Control), then ERG at `watts` (Set Target Power, sint16 W): the answers."""
        return [await self.ask(bytes([0x00])), await self.ask(struct.pack("<Bh", 0x05, watts))]

    async def leave(self):
        await self.connection.disconnect()
        self.write("left", "-")
