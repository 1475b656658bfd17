#!/usr/bin/env python3
"""A DirCon app, written from the protocol's public description (Wahoo's "wahoo-fitness-tnp": a 6-byte header of
version, message type, sequence number, response code and a big-endian data length; 128-bit UUIDs written in their
text order; properties read 0x01, write 0x02, notify 0x04), not from cyclelog's code. Standard library only.

    dircon_client.py HOST PORT REPORT RELEASE [WATTS]
    dircon_client.py mdns SECONDS REPORT RELEASE [WATTS]

With `mdns` it first finds the hub as an app does: a DNS query for the PTR records of _wahoo-fitness-tnp._tcp.local
sent to the mDNS group from a port of its own (a one-shot query, RFC 6762 5.1 and 6.7, answered to that port), then
the instance's SRV, TXT and address records (RFC 6763), for at most SECONDS. Then it discovers the services and their characteristics, reads every readable one, enables the notifications of
Cycling Power Measurement, CSC Measurement, Indoor Bike Data, the SC Control Point and the Fitness Machine control
point, listens for 3 s, resets its odometer (Set Cumulative Value 1 000 000 on the SC Control Point, CSCS 1.0 §3.4),
asks for control and ERG at WATTS (200 by default), sends a message type DirCon does not have, writes REPORT (JSON), and keeps its connection until the
file RELEASE appears (at most 60 s), so that the recorder sees it steering."""
import json
import os
import socket
import struct
import sys
import time

BASE_TAIL = bytes.fromhex("00001000800000805f9b34fb")


def uuid128(short):
    return struct.pack(">I", short) + BASE_TAIL


def short(uuid):
    return struct.unpack(">I", uuid[:4])[0] if uuid[4:] == BASE_TAIL else None


class App:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.sequence = 0
        self.notifications = []  # (seconds since start, uuid16, hex)
        self.start = time.monotonic()

    def read_message(self, deadline):
        while True:
            if len(self.buffer) >= 6:
                version, kind, sequence, code, length = struct.unpack(">BBBBH", self.buffer[:6])
                if len(self.buffer) >= 6 + length:
                    data = self.buffer[6:6 + length]
                    self.buffer = self.buffer[6 + length:]
                    assert version == 1, version
                    return kind, sequence, code, data
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(4096)
            except socket.timeout:
                return None
            if not chunk:
                raise ConnectionError("the hub closed the connection")
            self.buffer += chunk

    def request(self, kind, data=b"", seconds=5):
        """Sends a request; its answer (response code, data). Notifications meanwhile are kept."""
        self.sequence = (self.sequence + 1) % 256
        self.sock.sendall(struct.pack(">BBBBH", 1, kind, self.sequence, 0, len(data)) + data)
        deadline = time.monotonic() + seconds
        while True:
            message = self.read_message(deadline)
            if message is None:
                raise TimeoutError("no answer to message type %d" % kind)
            got_kind, sequence, code, body = message
            if got_kind == 6:
                self.keep(body)
                continue
            if got_kind == kind and sequence == self.sequence:
                return code, body

    def keep(self, body):
        self.notifications.append((round(time.monotonic() - self.start, 3), short(body[:16]), body[16:].hex()))

    def listen(self, seconds):
        deadline = time.monotonic() + seconds
        while (message := self.read_message(deadline)) is not None:
            if message[0] == 6:
                self.keep(message[3])

    def answer_on_control_point(self, op_code, seconds=5):
        """The Fitness Machine control point's answer to `op_code` (80 op result), as a notification."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for _, uuid, value in self.notifications:
                if uuid == 0x2AD9 and value.startswith("80%02x" % op_code):
                    return value
            self.listen(0.1)
        return None


SERVICE = "_wahoo-fitness-tnp._tcp.local"
PTR, TXT, SRV, A = 12, 16, 33, 1


def dns_name(data, offset):
    """A possibly compressed name (RFC 1035 4.1.4) at `offset`: the name and the offset after it."""
    labels, end, jumps = [], None, 0
    while True:
        length = data[offset]
        if length >= 0xC0:
            end = end or offset + 2
            offset = ((length & 0x3F) << 8) | data[offset + 1]
            jumps += 1
            if jumps > 32:
                raise ValueError("a name that loops")
            continue
        if length == 0:
            return ".".join(labels), end or offset + 1
        labels.append(data[offset + 1:offset + 1 + length].decode())
        offset += 1 + length


def dns_records(data):
    """Every resource record of a DNS message: (name, type, value)."""
    _, _, questions, answers, authority, additional = struct.unpack(">HHHHHH", data[:12])
    offset = 12
    for _ in range(questions):
        _, offset = dns_name(data, offset)
        offset += 4
    records = []
    for _ in range(answers + authority + additional):
        name, offset = dns_name(data, offset)
        kind, _, _, length = struct.unpack(">HHIH", data[offset:offset + 10])
        offset += 10
        body = data[offset:offset + length]
        if kind == PTR:
            value = dns_name(data, offset)[0]
        elif kind == SRV:
            value = (struct.unpack(">H", body[4:6])[0], dns_name(data, offset + 6)[0])
        elif kind == TXT:
            value, i = [], 0
            while i < len(body):
                value.append(body[i + 1:i + 1 + body[i]].decode())
                i += 1 + body[i]
        elif kind == A:
            value = socket.inet_ntoa(body)
        else:
            value = body
        records.append((name.lower(), kind, value))
        offset += length
    return records


def query(sock, name, kind):
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.split(".")) + b"\0"
    sock.sendto(struct.pack(">HHHHHH", 0x2A2A, 0, 1, 0, 0, 0) + labels + struct.pack(">HH", kind, 1),
                ("224.0.0.251", 5353))


def find_by_mdns(seconds):
    """The hub as DirCon apps find it: (instance, address, port, TXT strings)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    sock.bind(("", 0))
    deadline = time.monotonic() + seconds
    known = {}
    instance = None
    while time.monotonic() < deadline:
        if instance is None:
            query(sock, SERVICE, PTR)
        else:
            for name, kind in ((instance, SRV), (instance, TXT)):
                if (name, kind) not in known:
                    query(sock, name, kind)
            target = known.get((instance, SRV), (0, None))[1]
            if target and (target.lower(), A) not in known:
                query(sock, target, A)
        sock.settimeout(0.5)
        try:
            while True:
                data, _ = sock.recvfrom(9000)
                for name, kind, value in dns_records(data):
                    known[(name, kind)] = value
                    if kind == PTR and name == SERVICE.lower():
                        instance = value.lower()
        except socket.timeout:
            pass
        if instance and (instance, SRV) in known and (instance, TXT) in known:
            port, target = known[(instance, SRV)]
            if (target.lower(), A) in known:
                return instance, known[(target.lower(), A)], port, known[(instance, TXT)]
    raise TimeoutError("no %s answered by mDNS in %s s: %s" % (SERVICE, seconds, known))


def main():
    report_path, release = sys.argv[3], sys.argv[4]
    watts = int(sys.argv[5]) if len(sys.argv) > 5 else 200
    report = {}
    if sys.argv[1] == "mdns":
        instance, host, port, txt = find_by_mdns(float(sys.argv[2]))
        report["mdns"] = {"instance": instance, "address": host, "port": port, "txt": txt}
    else:
        host, port = sys.argv[1], int(sys.argv[2])
    app = App(host, port)
    report["app"] = "%s:%d" % app.sock.getsockname()[:2]
    code, data = app.request(1)
    services = [short(data[i:i + 16]) for i in range(0, len(data), 16)]
    report["services"] = ["%04x" % s for s in services]
    report["characteristics"], report["reads"] = {}, {}
    for service in services:
        code, data = app.request(2, uuid128(service))
        assert code == 0 and short(data[:16]) == service, (code, data.hex())
        records = [(short(data[i:i + 16]), data[i + 16]) for i in range(16, len(data), 17)]
        report["characteristics"]["%04x" % service] = {"%04x" % u: p for u, p in records}
        for uuid, properties in records:
            if properties & 0x01:
                code, value = app.request(3, uuid128(uuid))
                report["reads"]["%04x" % uuid] = value[16:].hex() if code == 0 else "code %d" % code
    report["enabled"] = {}
    for uuid in (0x2A63, 0x2A5B, 0x2AD2, 0x2A55, 0x2AD9):
        code, data = app.request(5, uuid128(uuid) + b"\x01")
        report["enabled"]["%04x" % uuid] = code
    app.listen(3)
    # Op code 0x01 and the count as a little-endian uint32.
    code, _ = app.request(4, uuid128(0x2A55) + bytes([0x01]) + struct.pack("<I", 1_000_000))
    report["setCumulativeValue"] = code
    code, _ = app.request(4, uuid128(0x2AD9) + b"\x00")
    report["requestControl"] = [code, app.answer_on_control_point(0x00)]
    code, _ = app.request(4, uuid128(0x2AD9) + bytes([0x05]) + struct.pack("<h", watts))
    report["setTargetPower"] = [code, app.answer_on_control_point(0x05, seconds=8)]
    code, _ = app.request(9, b"")
    report["unknownType"] = code
    code, _ = app.request(3, uuid128(0x2AD9))
    report["readControlPoint"] = code
    app.listen(2)
    report["notifications"] = app.notifications
    with open(report_path + ".part", "w") as file:
        json.dump(report, file)
    os.rename(report_path + ".part", report_path)
    deadline = time.monotonic() + 60
    while not os.path.exists(release) and time.monotonic() < deadline:
        app.listen(0.2)
    app.sock.close()


if __name__ == "__main__":
    sys.exit(main())
