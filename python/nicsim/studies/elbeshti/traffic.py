"""Elbeshti experiment 5: the NIC LRO engine (``nic::lro``) and host GRO on
captures of real nicsim traffic.

Each case runs a scenario of this package with ``nicsim.run(..., pcap=DIR)``,
keeps the frames the receiving host's NIC gets (the link pcap holds both
directions; b's own ACKs are not its NIC's input), and coalesces them with
``_core.coalesce_pcap``. A nicsim link pcap is taken where frames start on
the wire, at the sender, so the link's loss, duplication and reordering are
not in it. Two inputs stand for impaired traffic: the capture of a run over
a lossy link (it holds TCP's retransmissions, which arrive out of order) and
the bulk capture put through :func:`impair`, a seeded loss / duplicate /
neighbour-swap pass done here in Python — what a receiving NIC would see if
the link did that and TCP never repaired it.

All of it is deterministic: fixed scenario seeds, a fixed impairment seed.
"""

from __future__ import annotations

import json
import random
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nicsim import _core
from nicsim.api import run

HERE = Path(__file__).parent
CLASSES = ["BOM", "COM", "EOM", "SSM", "OOP"]
STUDY_WINDOW = 20
"""The study's flush window (frames): every stream is flushed every 20 frames."""
STUDY_CAM = 64
"""The study's CAM entries."""
BIG_WINDOW = 1000
"""A flush window far above the CAM's 64 entries (nicsim's choice, not the
study's: the window then no longer bounds the streams held, and 80 flows
overflow the CAM)."""
IMPAIR_SEED = 5
LOSS = 0.01
DUPLICATE = 0.01
REORDER = 0.01
"""Impairment pass rates: those of ``scenarios/gbe-lossy-bulk.toml`` (1 % each)."""
BATCH_GAP_US = 20.0
"""GRO's poll-batch gap: ``coalesce_pcap``'s default (an estimate, docs/models/lro.md)."""
NIC_FLUSHES = ["window", "psh", "page_full", "no_page", "evict", "passthrough", "explicit"]
GRO_FLUSHES = ["psh_fin", "short", "size_64k", "mismatch", "not_mergeable", "flows_full", "poll_end"]


@dataclass(frozen=True)
class Case:
    """One traffic case: a scenario of this package, optionally impaired."""

    name: str
    scenario: str
    impaired: bool
    description: str


CASES = [
    Case("bulk", "bulk.toml", False, "one 4 MiB TCP bulk flow"),
    Case("flows80", "flows80.toml", False, "80 interleaved 64 KiB TCP flows"),
    Case("lossy-run", "lossy.toml", False, "1 MiB over a link with 1 % loss/dup/reorder (sender capture: retransmissions)"),
    Case("bulk-impaired", "bulk.toml", True, "the bulk capture with seeded 1 % loss, 1 % duplication, 1 % neighbour swaps"),
]


# --- classic pcap, as nicsim writes it (nanosecond, little-endian) ----------

_MAGICS = {0xA1B2C3D4: 1000, 0xA1B23C4D: 1}
"""pcap magic -> nanoseconds per fraction unit (microsecond or nanosecond)."""


def read_pcap(path: Path) -> tuple[int, list[tuple[int, bytes]]]:
    """Link type and ``(time_ns, frame)`` records of a classic pcap."""
    data = path.read_bytes()
    for endian in ("<", ">"):
        (magic,) = struct.unpack(endian + "I", data[:4])
        if magic in _MAGICS:
            break
    else:
        raise ValueError(f"{path}: not a classic pcap")
    unit = _MAGICS[magic]
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    records = []
    at = 24
    while at + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack(endian + "IIII", data[at : at + 16])
        at += 16
        records.append((sec * 1_000_000_000 + frac * unit, data[at : at + caplen]))
        at += caplen
    return linktype, records


def write_pcap(path: Path, linktype: int, records: list[tuple[int, bytes]]) -> None:
    """Write a nanosecond little-endian pcap."""
    out = [struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 0xFFFF, linktype)]
    for t, frame in records:
        out.append(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(frame), len(frame)))
        out.append(frame)
    path.write_bytes(b"".join(out))


def _receiver_mac(records: list[tuple[int, bytes]]) -> bytes:
    """The Ethernet destination of the first TCP SYN (no ACK) of IPv4: the
    receiving host's MAC."""
    for _, f in records:
        if len(f) >= 34 and f[12:14] == b"\x08\x00" and f[23] == 6:
            tcp = 14 + (f[14] & 0x0F) * 4
            if len(f) > tcp + 13 and f[tcp + 13] & 0x12 == 0x02:
                return f[0:6]
    raise ValueError("no TCP SYN in the capture")


def received(records: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """The frames the receiving host's NIC gets: addressed to its MAC or broadcast."""
    mac = _receiver_mac(records)
    return [(t, f) for t, f in records if f[0:6] in (mac, b"\xff" * 6)]


def impair(records: list[tuple[int, bytes]], seed: int = IMPAIR_SEED) -> tuple[list[tuple[int, bytes]], dict[str, int]]:
    """A seeded link pass over ``records``: each frame is lost with
    probability ``LOSS``; a kept frame gets a copy 1 ns after it with
    probability ``DUPLICATE``, and with probability ``REORDER`` it is
    delayed behind the next kept frame (stamped 2 ns after that one; its
    copy, if any, is not delayed), unless a delayed frame is waiting for
    this one. Returns the frames and the count of each impairment."""
    rng = random.Random(seed)
    out: list[tuple[int, bytes]] = []
    held: bytes | None = None
    counts = {"lost": 0, "duplicated": 0, "reordered": 0}
    for t, f in records:
        if rng.random() < LOSS:
            counts["lost"] += 1
            continue
        duplicate = rng.random() < DUPLICATE
        delay = rng.random() < REORDER
        batch = [(t, f)]
        if duplicate:
            counts["duplicated"] += 1
            batch.append((t + 1, f))
        if held is not None:
            batch.append((t + 2, held))
            held = None
        elif delay:
            counts["reordered"] += 1
            held = batch.pop(0)[1]
        out.extend(batch)
    if held is not None:
        out.append((out[-1][0] + 2 if out else 0, held))
    return out, counts


# --- the experiment ---------------------------------------------------------


def _row(case: Case, engine: str, window: int | str, stats: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "case": case.name,
        "engine": engine,
        "flush_packets": window,
        "cam_entries": STUDY_CAM if engine == "nic" else "",
        "frames_in": stats["frames_in"],
        "frames_out": stats["frames_out"],
        "coalescing_ratio": round(stats["coalescing_ratio"], 4),
    }
    s = stats["nic"] if engine == "nic" else stats["gro"]
    row.update(
        aggregates=s["aggregates"],
        segments_merged=s["segments_merged"],
        passthrough=s["passthrough"],
        bytes_in=s["bytes_in"],
        bytes_out=s["bytes_out"],
    )
    for c in CLASSES:
        row[c] = s["classes"][c] if engine == "nic" else ""
    row["cam_max"] = s["cam_max"] if engine == "nic" else ""
    row["cam_mean"] = round(s["cam_mean"], 4) if engine == "nic" else ""
    row["evictions"] = s["evictions"] if engine == "nic" else ""
    row["duplicates_dropped"] = s["duplicates_dropped"] if engine == "nic" else ""
    row["gro_max_flows_held"] = s["max_flows_held"] if engine == "gro" else ""
    for cause in NIC_FLUSHES:
        row[f"flush_{cause}"] = s["flushes"][cause] if engine == "nic" else ""
    for cause in GRO_FLUSHES:
        row[f"gro_flush_{cause}"] = s["flushes"][cause] if engine == "gro" else ""
    return row


def compute(work: Path | None = None) -> dict[str, Any]:
    """Run every case; returns ``{"rows": [...], "impairments": {...},
    "inputs": {case: path}}``. Pcaps go to ``work`` (a temporary directory
    if None; the input paths are then gone on return)."""
    if work is None:
        with tempfile.TemporaryDirectory() as tmp:
            return compute(Path(tmp))
    rows: list[dict[str, Any]] = []
    impairments: dict[str, int] = {}
    inputs: dict[str, str] = {}
    for case in CASES:
        cap = work / case.name
        result = run(HERE / case.scenario, pcap=cap)
        (link,) = result.pcaps
        linktype, records = read_pcap(Path(link))
        frames = received(records)
        if case.impaired:
            frames, impairments = impair(frames)
        src = work / f"{case.name}.in.pcap"
        write_pcap(src, linktype, frames)
        inputs[case.name] = str(src)
        windows: list[int | None] = [None, BIG_WINDOW] if case.name == "flows80" else [None]
        for window in windows:
            stats = json.loads(_core.coalesce_pcap(src, work / f"{case.name}.nic.pcap", "nic", flush_packets=window))
            rows.append(_row(case, "nic", window or STUDY_WINDOW, stats))
        stats = json.loads(_core.coalesce_pcap(src, work / f"{case.name}.gro.pcap", "gro", batch_gap_us=BATCH_GAP_US))
        rows.append(_row(case, "gro", "", stats))
    return {"rows": rows, "impairments": impairments, "inputs": inputs}
