"""Writes btsnoop captures (datalink 1002, H4) of one LE connection to a sensor, with the GATT discovery
that lets a reader map handles to characteristics. Layouts from BlueZ's doc/btsnoop-protocol.rst and the Core Specification (HCI, L2CAP, ATT)."""
import struct

EPOCH_OFFSET_US = 0x00DCDDB30F2F8000  # btsnoop µs since 0 AD minus this = Unix µs (Wireshark's wiretap/btsnoop.c)
CONNECTION = 0x0040

# Service ranges and characteristic handles of the emulated sensor: (service UUID, start, end,
# characteristic declaration handle, value handle, characteristic UUID).
SERVICES = {
    0x2A63: (0x1818, 0x000C, 0x0016, 0x000D, 0x000E),
    0x2A5B: (0x1816, 0x0020, 0x0026, 0x0021, 0x0022),
    0x2A37: (0x180D, 0x0030, 0x0036, 0x0031, 0x0032),
}


class BtsnoopWriter:
    def __init__(self, path, start_unix_s=1714550400):
        self.file = open(path, "wb")
        self.file.write(b"btsnoop\x00" + struct.pack(">II", 1, 1002))
        self.time_us = start_unix_s * 1_000_000

    def record(self, flags, data, step_us=250_000):
        self.time_us += step_us
        header = struct.pack(">IIIIq", len(data), len(data), flags, 0, self.time_us + EPOCH_OFFSET_US)
        self.file.write(header + data)

    def event(self, payload):
        self.record(3, b"\x04" + payload, 1000)

    def att(self, pdu, received):
        l2cap = struct.pack("<HH", len(pdu), 0x0004) + pdu
        acl = struct.pack("<HH", CONNECTION | (0x2 << 12), len(l2cap)) + l2cap
        self.record(1 if received else 0, b"\x02" + acl, 1000 if not received else 250_000)

    def connect_and_discover(self):
        # LE Connection Complete: handle 0x0040, central, random peer C0:11:22:33:44:55 (Core Specification, HCI events).
        self.event(bytes.fromhex("3e130100400000015544332211c018000000f40100"))
        groups = b"".join(struct.pack("<HHH", start, end, service) for service, start, end, _, _ in SERVICES.values())
        self.att(bytes.fromhex("100100ffff0028"), False)
        self.att(b"\x11\x06" + groups, True)
        for uuid, (_, start, end, declaration, value) in SERVICES.items():
            self.att(b"\x08" + struct.pack("<HH", start, end) + b"\x03\x28", False)
            self.att(b"\x09\x07" + struct.pack("<HBHH", declaration, 0x10, value, uuid), True)

    def notify(self, characteristic, value):
        self.att(b"\x1b" + struct.pack("<H", SERVICES[characteristic][4]) + value, True)

    def close(self):
        self.file.close()
