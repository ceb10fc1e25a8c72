"""Write the checked-in seed corpus of each fuzz target into fuzz/corpus/.

Run from the repository root: `python3 fuzz/seeds.py` for every target, or
`python3 fuzz/seeds.py coalesce ...` for some. The corpus is small
(tens of files per target) and every file in it is replayed by
`cargo test` (crates/nicsim-core/tests/integration/fuzz_corpus.rs). Crash
inputs found by fuzzing are added by hand under `corpus/<target>/crash-*`
and are not touched by this script.
"""

from __future__ import annotations

import random
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def write(target: str, name: str, data: bytes | str) -> None:
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data.encode() if isinstance(data, str) else data)


# ------------------------------------------------------------- scenarios

TWO = '[[hosts]]\nname = "a"\n{host}\n[[hosts]]\nname = "b"\n{host}\n[[links]]\nendpoints = ["a", "b"]\n{link}\n{workload}\n'
BULK = '[workload.bulk]\nfrom = "a"\nto = "b"\nbytes = "1MB"\n'


def scenarios() -> None:
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        write("scenario", "repo-" + path.name, path.read_bytes())
    # The Kurmann study's scenarios (zero-copy knobs) as well.
    for path in sorted((ROOT / "scenarios" / "kurmann").glob("*.toml")):
        write("scenario", "repo-kurmann_" + path.name, path.read_bytes())
    cases = {
        "udp-stream": TWO.format(host="", link='rate = "100Mbps"', workload='[workload.udp_stream]\nfrom = "a"\nto = "b"\ncount = 10\nrate = "1Mbps"\narrivals = "poisson"\non = "1ms"\noff = "2ms"\n'),
        "udp-rr": TWO.format(host="", link="", workload='[workload.udp_rr]\nclient = "a"\nserver = "b"\nrequest = "100B"\n'),
        "rr": TWO.format(host='tcp = { nagle = false, delayed_ack = "off", congestion_control = "cubic" }', link="", workload='[workload.request_response]\nclient = "a"\nserver = "b"\ntransactions = 5\n'),
        "netpipe": TWO.format(host="", link="", workload='[workload.netpipe]\nclient = "a"\nserver = "b"\nupper = "64kB"\nbuffer = "128KiB"\nstream = true\n'),
        "timed-overrides": TWO.format(host='profile = "kurmann-pii-400"\ncpu = { clock = "800MHz" }\nnic = { rx_ring = 256, moderation = { rx_packets = 4, rx_delay = "10us" } }', link="", workload=BULK),
        "timed-tso": TWO.format(host='profile = "modern-x86-pcie"\nbus = { kind = "pcie", gen = 3, lanes = 8 }', link='rate = "10Gbps"', workload=BULK),
        "machine": TWO.format(host='profile = "modern-x86-pcie"\nmachine = "server"', link='rate = "10Gbps"', workload=BULK),
        "bad-machine": TWO.format(host='profile = "modern-x86-pcie"\nmachine = "server"', link="", workload=BULK).replace('name = "b"\nprofile = "modern-x86-pcie"\nmachine = "server"', 'name = "b"\nprofile = "modern-x86-pcie"\nmachine = "server"\nbus = { lanes = 8 }'),
        "impaired": TWO.format(host="", link='impairments = { loss = 0.1, duplicate = 0.1, reorder = 0.1, reorder_delay = "1us", corrupt = 0.1 }', workload=BULK),
        "ips": TWO.format(host="", link="", workload=BULK).replace('name = "b"', 'name = "b"\nip = "192.168.1.2/16"').replace('name = "a"', 'name = "a"\nip = "192.168.7.1/16"'),
        "bad-unit": TWO.format(host="", link='rate = "1Gbs"', workload=BULK),
        "bad-ring": TWO.format(host='profile = "kurmann-pii-400"\nnic = { rx_ring = 100 }', link="", workload=BULK),
        "bad-field": TWO.format(host="tcp = { nagel = true }", link="", workload=BULK),
        "bad-endpoint": TWO.format(host="", link="", workload=BULK.replace('to = "b"', 'to = "c"')),
        "bad-mtu": TWO.format(host="", link='mtu = "0B"', workload=BULK),
        "duration-bulk": TWO.format(host="", link="", workload='[workload.bulk]\nfrom = "a"\nto = "b"\nduration = "10ms"\nwrite_size = "1B"\n') + '[run]\ntime_limit = "1s"\nsample_interval = "1ms"\n',
        "syntax": '[[hosts]\nname = "a',
        "empty": "",
    }
    for name, text in cases.items():
        write("scenario", name + ".toml", text)


# ------------------------------------------------------------------ units

def units() -> None:
    texts = [
        "1Gbps", "400MHz", "1.2us", "9000B", "64KiB", "126MB/s", " 2 ms ", "0.5ns", "1.5KiB", "0ps",
        "1.5B", "0.1ps", "4KB", "1GBps", "1500", "-5B", "1e3B", "1.2.3B", "99999999999999999999GiB",
        "18446744073709551615ps", "18446744073709551616ps", "3µs", ".5ms", "5.", "Mbps", "10 Mbit/s",
    ]
    for i, t in enumerate(texts):
        write("units", f"u{i:02}", t)


# ----------------------------------------------------------------- frames

def csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


ETH = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00])


def ipv4(proto: int, payload: bytes, *, options: bytes = b"", flags_frag: int = 0, ident: int = 7) -> bytes:
    ihl = 5 + len(options) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 4 * ihl + len(payload), ident, flags_frag, 64, proto, 0,
                      bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + options
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def tcp(seq: int, payload: bytes, *, flags: int = 0x18, timestamps: bool = True, checksum: bool = True) -> bytes:
    opts = b"\x01\x01\x08\x0a" + struct.pack("!II", 5, 6) if timestamps else b""
    off = (20 + len(opts)) // 4
    seg = struct.pack("!HHIIBBHHH", 49152, 5001, seq & 0xFFFFFFFF, 77, off << 4, flags, 4000, 0, 0) + opts + payload
    if checksum:
        pseudo = bytes([10, 0, 0, 1, 10, 0, 0, 2, 0, 6]) + struct.pack("!H", len(seg))
        seg = seg[:16] + struct.pack("!H", csum(pseudo + seg)) + seg[18:]
    return seg


def frames() -> dict[str, bytes]:
    data = bytes(i % 251 for i in range(10_000))
    return {
        "super-10000": ETH + ipv4(6, tcp(1000, data, checksum=False)),
        "super-fin-wrap": ETH + ipv4(6, tcp(-10, data[:3000], flags=0x19, checksum=False)),
        "small": ETH + ipv4(6, tcp(5, b"hello")),
        "ack": ETH + ipv4(6, tcp(5, b"", flags=0x10, timestamps=False)),
        "syn": ETH + ipv4(6, tcp(0, b"", flags=0x02)),
        "ip-options": ETH + ipv4(6, tcp(9, data[:2000], checksum=False), options=b"\x01\x01\x01\x00"),
        "padded": ETH + ipv4(6, tcp(9, b"x")) + b"\0" * 6,
        "udp": ETH + ipv4(17, struct.pack("!HHHH", 1, 2, 12, 0) + b"abcd"),
        "fragment": ETH + ipv4(6, data[:1480], flags_frag=0x2000),
        "arp": bytes([0xFF] * 6 + [2, 0, 0, 0, 0, 1] + [0x08, 0x06]) + bytes(28),
        "truncated": (ETH + ipv4(6, tcp(5, data[:100])))[:40],
    }


def tso() -> None:
    for name, f in frames().items():
        for mss in (536, 1448, 8948):
            write("tso", f"{name}-{mss}", struct.pack("<H", mss) + f)


def wire_monitor() -> None:
    fr = frames()
    flow = [ETH + ipv4(6, tcp(seq, bytes(100), checksum=False)) for seq in (0, 100, 200, 100, 300, -100)]
    seqs = {
        "flow-with-retransmission": flow,
        "all-kinds": list(fr.values()),
        "one-each": [fr["small"], fr["ack"], fr["udp"]],
    }
    for name, fs in seqs.items():
        write("wire_monitor", name, b"".join(struct.pack("<H", len(f)) + f for f in fs))
    for name, f in fr.items():
        write("wire_monitor", "single-" + name, struct.pack("<H", len(f)) + f)


def link_channel() -> None:
    rng = random.Random(12)
    write("link_channel", "clean", bytes([1, 3, 0, 0, 0, 0, 0, 0]) + bytes([8, 1, 2] * 20))
    write("link_channel", "all-impairments", bytes([2, 15, 60, 60, 60, 60, 1, 0]) + bytes([16, 16, 1, 2, 2] * 20))
    write("link_channel", "certain-loss", bytes([0, 0, 255, 0, 0, 0, 2, 0]) + bytes([4, 1, 2] * 10))
    write("link_channel", "paused", bytes([3, 4, 0, 0, 0, 0, 3, 0]) + bytes([8, 7, 1, 2, 3, 1, 2]))
    for i in range(12):
        write("link_channel", f"random-{i:02}", bytes(rng.randrange(256) for _ in range(8 + rng.randrange(200))))


# --------------------------------------------------------------- coalesce
# Records of nicsim_testkit::fuzz::coalesce: 3 setting bytes (small LRO sizes,
# GRO limits and poll batch, ISN base), then records whose first byte is
# flow (low 3 bits) | kind << 3.

PSH, FIN, FIN_PSH, SYN, RST, URG, ECE, CWR, NO_ACK, IP_OPTIONS, PSH_CWR = 16, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29
NEW_ACK, NEW_WINDOW, SAME_ID, OTHER_FIELD = 4 << 5, 5 << 5, 6 << 5, 7 << 5
RETX, HOLE, DUP, MOVE = 2 << 6, 3 << 6, 16, 32


def seg(flow: int, length: int, sel: int = 0, pos: int = 0) -> bytes:
    return bytes([flow & 7, sel, pos]) + struct.pack("<H", length)


def raw(data: bytes) -> bytes:
    return bytes([28 << 3]) + struct.pack("<H", len(data)) + data


def cut(at: int) -> bytes:
    return bytes([29 << 3, at])


def damaged(which: int, xor: int = 0x55) -> bytes:
    return bytes([30 << 3, (xor << 2 | which) & 0xFF])


def other(flow: int, kind: int) -> bytes:
    return bytes([31 << 3 | flow, kind])


def coalesce() -> None:
    rng = random.Random(21)
    study = bytes([0xFF, 0x00, 0x00])  # small LRO: 4 entries, 3 pages, 30 KB, window 1000; GRO: 64 flows, one batch
    cases: dict[str, bytes] = {
        "empty": b"",
        "bulk-one-flow": study + b"".join(seg(0, 1460) for _ in range(60)) + seg(0, 500, PSH),
        "bulk-wrap-gro-batches": bytes([0x00, 0x07, 0x00]) + b"".join(seg(2, 1448) for _ in range(45)) + seg(2, 10, FIN),
        "eight-flows": bytes([0b01_11_01_11, 0x15, 0x80])
        + b"".join(seg(f, [1460, 1000, 536, 100][(i + f) % 4] if i % 7 else 1460, PSH if i % 9 == 8 else 0)
                   for i in range(20) for f in range(8)),
        "retransmissions": study + b"".join(
            [seg(1, 1000), seg(1, 1000), seg(1, 1000, 0, RETX), seg(1, 1000), seg(1, 1460, 0, RETX | 2),
             seg(1, 1000, 0, DUP), seg(1, 700, 0, RETX | 5), seg(1, 1000), seg(1, 1000, 0, RETX | DUP), seg(1, 300, PSH)] * 4),
        "holes-then-fill": bytes([0x9A, 0x31, 0x40]) + b"".join(
            [seg(3, 1000), seg(3, 1000, 0, HOLE), seg(3, 1000), seg(3, 1000, 0, RETX | 10), seg(3, 1000, 0, RETX | 5),
             seg(3, 1000, 0, HOLE | 2), seg(3, 800, 0, RETX | 9), seg(3, 1000, PSH)] * 5),
        "reordered": bytes([0x3F, 0x02, 0xFF]) + b"".join(
            seg(i % 3, 1460, 0, MOVE | (i % 4) if i % 3 == 1 else 0) for i in range(60)),
        "flags": bytes([0xC5, 0x20, 0x01]) + b"".join(
            seg(f % 8, 700, 0) + seg(f % 8, 700, flag) + seg(f % 8, 700, 0)
            for f, flag in enumerate([PSH, FIN, FIN_PSH, SYN, RST, URG, ECE, CWR, NO_ACK, IP_OPTIONS, PSH_CWR]))
        + seg(0, 0) + seg(0, 0, NO_ACK),
        "header-changes": bytes([0xFF, 0x60, 0x10]) + b"".join(
            seg(4, 1000) + seg(4, 1000) + seg(4, 1000, change, k) + seg(4, 1000)
            for change, k in [(NEW_ACK, 0), (NEW_WINDOW, 3), (SAME_ID, 0), (OTHER_FIELD, 0), (OTHER_FIELD, 1),
                              (OTHER_FIELD, 2), (OTHER_FIELD, 3), (SAME_ID | PSH, 0)]),
        "garbage-and-other-traffic": bytes([0x12, 0x93, 0x00])
        + seg(5, 1000) + raw(frames()["small"]) + seg(5, 1000) + raw(bytes(rng.randrange(256) for _ in range(300)))
        + seg(5, 1000) + other(5, 0) + seg(5, 1000) + other(5, 1) + seg(5, 1000) + other(5, 2) + seg(5, 1000)
        + raw(frames()["fragment"]) + raw(frames()["ack"]) + raw(frames()["small"]) + raw(b"") + seg(5, 1000, PSH),
        "cut-and-damaged": bytes([0x55, 0x44, 0x33]) + b"".join(
            seg(6, 1200) + seg(6, 1200) + op for op in
            [cut(0), cut(13), cut(40), cut(255), damaged(0), damaged(1), damaged(2), damaged(3), damaged(1, 0)]) + seg(6, 5, PSH),
        "max-frames": study + b"".join(seg(i % 8, 100, 0, DUP if i % 5 == 0 else 0) for i in range(250)),
    }
    for name, data in cases.items():
        write("coalesce", name, data)
    for i in range(6):
        write("coalesce", f"random-{i:02}", bytes(rng.randrange(256) for _ in range(3 + rng.randrange(600))))


GENERATORS = {
    "scenario": scenarios,
    "units": units,
    "tso": tso,
    "wire_monitor": wire_monitor,
    "link_channel": link_channel,
    "coalesce": coalesce,
}


def main(targets: list[str]) -> None:
    unknown = [t for t in targets if t not in GENERATORS]
    if unknown:
        sys.exit(f"no seed generator for {', '.join(unknown)}; known: {', '.join(GENERATORS)}")
    for target in targets or list(GENERATORS):
        d = CORPUS / target
        if d.exists():
            for f in d.iterdir():
                if not f.name.startswith("crash-"):
                    f.unlink()
        GENERATORS[target]()
    for d in sorted(CORPUS.iterdir()):
        print(f"{d.name}: {len(list(d.iterdir()))} files")


if __name__ == "__main__":
    main(sys.argv[1:])
