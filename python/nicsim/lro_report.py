"""What ``nicsim lro`` says about a coalescing run: the table it prints, the
one line about offloaded checksums, and the files it writes next to the
output capture (the whole report as JSON, where every frame went as CSV,
and each TCP direction's coalescing as CSV).

The report is the JSON ``_core.coalesce_pcap`` returns; this module only
presents it."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

# Why a frame passed through, in the report's field order.
REASONS: dict[str, str] = {
    "link_layer": "link type not read, or shorter than its link header",
    "not_tcp_ipv4": "not TCP over IPv4 (ARP, IPv6, UDP, ...)",
    "truncated": "cut by the capture's snap length",
    "malformed": "IPv4 or TCP header unreadable",
    "ip_fragment": "IPv4 fragment",
    "ip_options": "IPv4 options or reserved flag",
    "offloaded_checksum": "TCP checksum left to the NIC (offloaded)",
    "bad_checksum": "bad IP or TCP checksum",
    "flags": "TCP flags not merged (SYN, RST, URG, CWR, no ACK; nic also FIN, ECE)",
    "no_payload": "no TCP payload (pure ACK)",
}

# Where a frame went, for the accounting CSV.
FATES: dict[str, str] = {
    "merged": "merged into a frame of two or more segments",
    "alone": "held, then sent up alone (nothing joined it before a flush)",
    "duplicates_dropped": "dropped: all its data was already held",
}


def files(output: Path) -> dict[str, Path]:
    """The files written next to ``output``: ``<stem>.lro.json``,
    ``<stem>.frames.csv``, ``<stem>.flows.csv``."""
    stem = output.with_suffix("")
    return {
        "json": stem.with_name(stem.name + ".lro.json"),
        "frames": stem.with_name(stem.name + ".frames.csv"),
        "flows": stem.with_name(stem.name + ".flows.csv"),
    }


def write(report: dict[str, Any], output: Path) -> dict[str, Path]:
    """Write the report's JSON and CSV files next to ``output``."""
    paths = files(output)
    paths["json"].write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    with paths["frames"].open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["fate", "reason", "description", "frames"])
        for fate, description in FATES.items():
            w.writerow([fate, "", description, report["accounting"][fate]])
        for reason, description in REASONS.items():
            w.writerow(["passed_through", reason, description, report["passed"][reason]])
    with paths["flows"].open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        columns = ["interface", "src", "dst", "frames_in", "frames_out", "payload_in", "payload_out"]
        w.writerow([*columns, "coalescing_ratio"])
        for flow in report["flows"]:
            w.writerow([*(flow[c] for c in columns), f"{flow['coalescing_ratio']:.4f}"])
    return paths


def checksum_line(report: dict[str, Any]) -> str | None:
    """One line on offloaded TCP checksums, or None when there were none."""
    n, tcp = report["checksums_offloaded"], report["tcp_frames"]
    if n == 0:
        return None
    what = (
        f"{n:,} of {tcp:,} TCP frames carry an offloaded TCP checksum (zero or only the "
        "pseudo-header sum: captured on the sending host before its NIC computed it)"
    )
    if report["assume_checksums_ok"]:
        return f"{what}; treated as good (--assume-checksums-ok) and written correctly in the output."
    return f"{what}; they were passed through, not merged. Rerun with --assume-checksums-ok to treat them as good."


def _count(n: int) -> str:
    return f"{n:,}"


def table(report: dict[str, Any], source: Path) -> Table:
    """What a coalescing run did: frames, where each went and why, classes,
    CAM and flushes."""
    t = Table(title=f"nicsim lro ({report['engine']})", show_header=False, title_justify="left")
    t.add_column("field", style="bold")
    t.add_column("value")

    def row(field: str, value: str) -> None:
        t.add_row(field, Text(value))

    def causes(counts: dict[str, int]) -> str:
        return ", ".join(f"{cause} {n:,}" for cause, n in counts.items())

    row("input", f"{source} ({report['format']}, {report['interfaces']} interface(s))")
    row("frames", f"{report['frames_in']:,} in, {report['frames_out']:,} out")
    row("coalescing ratio", f"{report['coalescing_ratio']:.2f} frames in per frame out")
    a = report["accounting"]
    row(
        "every frame",
        f"merged {a['merged']:,}, sent up alone {a['alone']:,}, "
        f"passed through {a['passed_through']:,}, dropped as duplicates {a['duplicates_dropped']:,}",
    )
    reasons = [f"{name.replace('_', ' ')} {n:,}" for name, n in report["passed"].items() if n]
    row("passed through", f"{a['passed_through']:,}" + (f" ({', '.join(reasons)})" if reasons else ""))
    stats = report["nic"] if report["engine"] == "nic" else report["gro"]
    row("aggregates", f"{stats['aggregates']:,} frames carrying {stats['segments_merged']:,} segments")
    row("bytes (as Ethernet frames)", f"{stats['bytes_in']:,} in, {stats['bytes_out']:,} out")
    if report["engine"] == "nic":
        row("classes", ", ".join(f"{name} {n:,}" for name, n in stats["classes"].items()))
        row("duplicates dropped", f"{stats['duplicates_dropped']:,} segments, {stats['duplicate_bytes']:,} B")
        row("CAM occupancy", f"max {stats['cam_max']}, mean {stats['cam_mean']:.2f} of 64 entries")
        row("evictions", _count(stats["evictions"]))
    else:
        row("poll batches", _count(report["batches"]))
        row("flows held", f"max {stats['max_flows_held']} of 64")
    row("flushes", causes(stats["flushes"]))
    if report["engine"] == "gro":
        row("mismatch: test failed", causes(stats["mismatches"]))
    flows = report["flows"]
    shown = sorted(flows, key=lambda f: -f["frames_in"])[:8]
    for flow in shown:
        row(
            f"flow {flow['src']} > {flow['dst']}",
            f"{flow['frames_in']:,} -> {flow['frames_out']:,} frames "
            f"(ratio {flow['coalescing_ratio']:.2f}), {flow['payload_out']:,} B payload",
        )
    if len(flows) > len(shown):
        row("flows", f"{len(flows) - len(shown):,} more in the flows CSV")
    return t
