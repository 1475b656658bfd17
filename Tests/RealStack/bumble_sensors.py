"""Emulated cycling sensors that talk like real ones: each is a bumble (Google's Python Bluetooth stack) device
with its own in-process controller, and the kernel's side of the same emulated air is one more bumble controller
behind /dev/vhci. Unlike a BlueZ peripheral (which sends Handle Value Multiple Notifications, 0x23), bumble's GATT
server sends plain Handle Value Notifications (0x1B), one characteristic value per PDU, as power meters do.

Two bumble 0.0.236 shortcomings are worked around (../shared/spec/real-bluez-in-a-vm.md):
- its local link stamps LE ACL data with the sending controller's random address even when the link was made
  with the public one, so the peripheral finds no connection for it and drops everything: `AddressedLink` sends
  with the address the connection was made with;
- its controller announces LL Privacy and Extended Advertising but sends only the legacy LE Connection Complete
  event, for which kernel 6.1 then waits forever (the next Connect fails with EBUSY): those feature bits are
  hidden from the kernel.
"""
import asyncio
import struct

from bumble import hci
from bumble.controller import Controller
from bumble.core import AdvertisingData, PhysicalTransport
from bumble.device import Device
from bumble.gatt import Characteristic, Service
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink

from emulated_sensors import RideSensor

HIDDEN_FEATURES = hci.LeFeatureMask.LL_PRIVACY | hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
PROPERTIES = {"read": Characteristic.Properties.READ, "notify": Characteristic.Properties.NOTIFY}


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
    `link`. Returns the transport, which must stay open as long as the controller is used."""
    transport = await open_transport("vhci")
    controller("linux", link, address, host_source=transport.source, host_sink=transport.sink)
    return transport


class BumbleSensor(RideSensor):
    """One emulated sensor: a bumble device on its own controller on `link`, with public address `address`,
    advertising its services (connectable, general discoverable) whenever it is not connected."""

    def __init__(self, link, address, kinds, name, battery, streams, log):
        super().__init__(name, battery, kinds, streams, log)
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
                characteristic = Characteristic(
                    "%04X" % uuid, properties, Characteristic.READABLE, value)
                characteristics.append(characteristic)
                self.characteristics[uuid] = characteristic
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
