"""Write the small pcapng files of ``tests/data/captures/`` byte for byte,
from the pcapng specification (draft-ietf-opsawg-pcapng) and the link-layer
header formats (tcpdump.org/linktypes), with ``struct`` only:

``vlan.pcapng``
    One Ethernet interface (default microsecond timestamps), little-endian:
    a TCP flow 10.1.0.1:40000 > 10.1.0.2:5001 of ten 1000-byte segments,
    each frame 802.1Q-tagged with VLAN 100, the receiver's pure ACK after
    the fifth, an ARP request, and a double-tagged (802.1ad outer tag 7,
    802.1Q inner tag 100) frame of a second flow's single segment.
``sll.pcapng``
    One Linux cooked capture (SLL, link type 113) interface with nanosecond
    timestamps (``if_tsresol`` 9), big-endian: the same ten segments.
``multi.pcapng``
    Two interfaces: SLL2 (link type 276, ``if_tsresol`` 2^-20 s) and
    Ethernet without tags (``if_tsresol`` 9), each carrying one flow of six
    600-byte segments, their records interleaved, plus a name resolution
    block (skipped by readers).

Every IPv4 and TCP checksum is correct; payload byte ``i`` of a flow is
``(seed + i) % 251``. Run ``python tests/data/make_captures.py`` to rewrite
the files; ``tests/test_captures.py`` checks they are what this writes.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

OUT = Path(__file__).parent / "captures"

MAC_A = bytes.fromhex("020000000001")
MAC_B = bytes.fromhex("020000000002")


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of ``data``."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ip4(addr: str) -> bytes:
    return bytes(int(x) for x in addr.split("."))


def tcp_ipv4(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int, payload: bytes,
             ident: int) -> bytes:
    """An IPv4 packet (DF, TTL 64, no options) carrying a TCP segment
    (window 502, no options) with correct checksums."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 502, 0, 0) + payload
    pseudo = ip4(src) + ip4(dst) + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), ident, 0x4000, 64, 6, 0, ip4(src), ip4(dst))
    header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    return header + tcp


ACK, PSH = 0x10, 0x08


def flow(src: str, dst: str, sport: int, dport: int, segments: int, size: int, seed: int) -> list[bytes]:
    """``segments`` data segments of ``size`` bytes (ACK set, PSH on the last)."""
    isn = 1000 + seed
    packets = []
    for i in range(segments):
        payload = bytes((seed + i * size + j) % 251 for j in range(size))
        flags = ACK | (PSH if i == segments - 1 else 0)
        packets.append(tcp_ipv4(src, dst, sport, dport, isn + i * size, 7, flags, payload, ident=i + 1))
    return packets


def pure_ack(src: str, dst: str, sport: int, dport: int, ack: int) -> bytes:
    return tcp_ipv4(src, dst, sport, dport, 7, ack, ACK, b"", ident=99)


def ethernet(packet: bytes, tags: list[tuple[int, int]] = (), ethertype: int = 0x0800) -> bytes:
    """An Ethernet II frame from A to B with VLAN ``tags`` (TPID, VLAN ID),
    outermost first."""
    head = MAC_B + MAC_A
    for tpid, vid in tags:
        head += struct.pack("!HH", tpid, vid)
    frame = head + struct.pack("!H", ethertype) + packet
    return frame + bytes(max(0, 60 - len(frame)))  # minimum frame, no FCS


def sll(packet: bytes, outgoing: bool = True) -> bytes:
    """A Linux cooked capture v1 header: packet type (4 outgoing, 0 to us),
    ARPHRD_ETHER, address length 6, the address padded to 8, protocol."""
    return struct.pack("!HHH8sH", 4 if outgoing else 0, 1, 6, MAC_A + b"\0\0", 0x0800) + packet


def sll2(packet: bytes, ifindex: int = 2) -> bytes:
    """A Linux cooked capture v2 header: protocol, reserved, interface
    index, ARPHRD_ETHER, packet type outgoing, address length 6, address."""
    return struct.pack("!HHIHBB8s", 0x0800, 0, ifindex, 1, 4, 6, MAC_A + b"\0\0") + packet


def arp_request() -> bytes:
    body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, MAC_A, ip4("10.1.0.1"), bytes(6), ip4("10.1.0.2"))
    return ethernet(body, [(0x8100, 100)], ethertype=0x0806)


class Writer:
    """A pcapng section in one byte order."""

    def __init__(self, big: bool) -> None:
        self.e = ">" if big else "<"
        self.data = bytearray()

    def block(self, kind: int, body: bytes) -> None:
        body += bytes(-len(body) % 4)
        length = 12 + len(body)
        self.data += struct.pack(f"{self.e}II", kind, length) + body + struct.pack(f"{self.e}I", length)

    def option(self, code: int, value: bytes) -> bytes:
        return struct.pack(f"{self.e}HH", code, len(value)) + value + bytes(-len(value) % 4)

    def section(self) -> None:
        body = struct.pack(f"{self.e}IHHq", 0x1A2B3C4D, 1, 0, -1)
        body += self.option(4, b"nicsim tests/data/make_captures.py") + self.option(0, b"")
        self.block(0x0A0D0D0A, body)

    def interface(self, linktype: int, name: str, tsresol: int | None) -> None:
        body = struct.pack(f"{self.e}HHI", linktype, 0, 262144) + self.option(2, name.encode())
        if tsresol is not None:
            body += self.option(9, bytes([tsresol]))
        self.block(1, body + self.option(0, b""))

    def packet(self, interface: int, ticks: int, frame: bytes) -> None:
        head = struct.pack(f"{self.e}IIIII", interface, ticks >> 32, ticks & 0xFFFFFFFF, len(frame), len(frame))
        self.block(6, head + frame)

    def name_resolution(self) -> None:
        record = ip4("10.1.0.2") + b"receiver\0"
        body = struct.pack(f"{self.e}HH", 1, len(record)) + record + bytes(-len(record) % 4)
        self.block(4, body + struct.pack(f"{self.e}HH", 0, 0))


# Start of every capture: 2026-01-01 00:00:00 UTC, in seconds.
EPOCH = 1_767_225_600


def vlan() -> bytes:
    w = Writer(big=False)
    w.section()
    w.interface(1, "eth0", None)  # microseconds, the default
    data = flow("10.1.0.1", "10.1.0.2", 40000, 5001, 10, 1000, seed=0)
    t = EPOCH * 1_000_000
    for i, packet in enumerate(data):
        w.packet(0, t + 10 * i, ethernet(packet, [(0x8100, 100)]))
        if i == 4:
            ack = pure_ack("10.1.0.2", "10.1.0.1", 5001, 40000, 1000 + 5000)
            w.packet(0, t + 10 * i + 5, ethernet(ack, [(0x8100, 100)]))
    w.packet(0, t + 200, arp_request())
    (single,) = flow("10.1.0.3", "10.1.0.2", 40001, 5001, 1, 300, seed=3)
    w.packet(0, t + 300, ethernet(single, [(0x88A8, 7), (0x8100, 100)]))
    return bytes(w.data)


def cooked() -> bytes:
    w = Writer(big=True)
    w.section()
    w.interface(113, "any", 9)  # nanoseconds
    t = EPOCH * 1_000_000_000
    for i, packet in enumerate(flow("10.1.0.1", "10.1.0.2", 40000, 5001, 10, 1000, seed=0)):
        w.packet(0, t + 10_000 * i + 7, sll(packet))
    return bytes(w.data)


def multi() -> bytes:
    w = Writer(big=False)
    w.section()
    w.interface(276, "any", 0x80 | 20)  # 2^-20 s
    w.interface(1, "eth1", 9)
    w.name_resolution()
    a = flow("10.2.0.1", "10.2.0.2", 41000, 5001, 6, 600, seed=11)
    b = flow("10.3.0.1", "10.3.0.2", 42000, 5001, 6, 600, seed=22)
    for i, (pa, pb) in enumerate(zip(a, b)):
        w.packet(0, EPOCH * 2**20 + 16 * i, sll2(pa))  # 16 ticks of 2^-20 s: 15.26 µs
        w.packet(1, EPOCH * 1_000_000_000 + 15_259 * i + 8_000, ethernet(pb))
    return bytes(w.data)


FILES = {"vlan.pcapng": vlan, "sll.pcapng": cooked, "multi.pcapng": multi}


def main() -> int:
    OUT.mkdir(exist_ok=True)
    for name, make in FILES.items():
        (OUT / name).write_bytes(make())
        print(OUT / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
