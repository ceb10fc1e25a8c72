"""The Kurmann study's simulated runs and published numbers.

Each run is a scenario next to this module (copies of ``scenarios/kurmann*``,
checked equal by the tests) plus fixed knob settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nicsim.studies.framework import Grid, Run

HERE = Path(__file__).parent

PUBLISHED_STANDARD_MBS = 42.0
"""The study: the standard Linux 2.2 TCP stack reaches about 42 MB/s."""
PUBLISHED_MEMCPY_MBS = 92.0
"""The study: memory-to-memory copy by the CPU."""
PUBLISHED_PCI_MBS = 126.0
"""The study: PCI 32/33 measured for large bursts (132 MB/s in theory)."""

MB = 1e6
"""The study's MB/s: 10^6 bytes per second."""

STANDARD = Run("standard", HERE / "standard.toml", "32 MiB bulk TCP, standard stack, GbE (calibration, ~42 MB/s)")

DOLLY_RUNS: dict[str, Run] = {
    "fe": Run("dolly-fe", HERE / "dolly-fe.toml", "Dolly chain of four nodes over Fast Ethernet (Table 4)"),
    "gbe": Run("dolly-gbe", HERE / "dolly-gbe.toml", "Dolly chain of four nodes over GbE, standard stack (Table 4)"),
    "gbe-zc": Run(
        "dolly-gbe-zc",
        HERE / "dolly-gbe.toml",
        "Dolly chain of four nodes over GbE, zero-copy stack: fragmentation, speculation, fbufs (Table 4)",
        {f"hosts[{i}].zero_copy": {"fragment": True, "speculate": True, "os": "fbufs"} for i in range(4)},
    ),
}
"""Simulated rows of Table 4 by variant key (``dolly.VARIANTS``); the
zero-copy row is ``dolly-gbe.toml`` with every host's zero-copy knobs on."""


def zc_run(key: str, description: str, fixed: Mapping[str, Any] | None = None, scenario: str | None = None) -> Run:
    """A run of ``zc/<scenario or key>.toml`` (copies of ``scenarios/kurmann/``)."""
    return Run(key, HERE / "zc" / f"{scenario or key}.toml", description, dict(fixed or {}))


FIGURE5 = {
    "standard": STANDARD,
    "spec-only": zc_run("spec-only", "speculative defragmentation only (data still copied at the socket)"),
    "zc-os-only": zc_run("zc-os-only", "zero-copy OS (page remapping) only: the defragmenting copy remains"),
    "both-remap": zc_run("both-remap", "speculation + page remapping with copy-on-write"),
    "both-fbufs": zc_run("both-fbufs", "speculation + fast buffers"),
}
"""Figure 5's bars: large-transfer throughput per variant (32 MiB bulk)."""

CHECKSUM_RATES = ("150MB/s", "165MB/s", "184MB/s", "220MB/s", "250MB/s")
CHECKSUM_SENSITIVITY = Grid(
    "fbufs-checksum-rate", HERE / "zc" / "both-fbufs.toml",
    {"hosts[1].memory.checksum_bandwidth": list(CHECKSUM_RATES)},
    "speculation + fbufs with the receiver's checksum rate varied around 184 MB/s (2 x memcpy)",
)
"""How the 75 MB/s calibration point hangs on the one rate behind it."""

FIGURE6 = {
    "fallback-zc-to-std": zc_run("fallback-zc-to-std", "zero-copy sender to a standard receiver"),
    "fallback-std-to-zc": zc_run("fallback-std-to-zc", "standard sender to a zero-copy receiver"),
}
"""Figure 6's bars: the two fallback scenarios."""

INTERFERENCE = (0, 100, 10_000)
CAMS = ("off", "2way", "4way")
TABLE1 = {
    (n, cam): zc_run(
        f"interference-{n}-cam-{cam}",
        f"100,000 zero-copy pages, {n} interfering frames, match CAM {cam}",
        {"hosts[1].zero_copy.cam": cam} if cam != "off" else {},
        scenario=f"interference-{n}",
    )
    for n in INTERFERENCE
    for cam in CAMS
}
"""Table 1's runs, with the proposed match CAM as extra columns."""

TABLE2 = {
    (pattern, admission): zc_run(
        f"table2-{pattern}{'-admission' if admission else ''}",
        f"Table 2: {pattern} traffic, admission control {'on' if admission else 'off'}",
    )
    for pattern in ("converge", "dsm")
    for admission in (False, True)
}
"""Table 2's runs: two result streams converging on a master, serialized DSM pages."""

TRACE_HOSTS = ("master", "host1", "host2")
"""The three nodes of the study's traces (Table 2)."""

TRACE_COMPOSITION = {
    "oracle": {
        "master": {"total": 129835, "large": 90725, "small": 39110, "potential": 26505},
        "host1": {"total": 67524, "large": 45877, "small": 21647, "potential": 12611},
        "host2": {"total": 62311, "large": 44848, "small": 17463, "potential": 13894},
    },
    "treadmarks": {
        "master": {"total": 68182, "large": 44004, "small": 24178, "potential": 14670},
        "host1": {"total": 51095, "large": 30707, "small": 20388, "potential": 10231},
        "host2": {"total": 50731, "large": 30419, "small": 20312, "potential": 10135},
    },
}
"""Table 2's published composition of each trace per host (received frames:
total, large data, small control; potential zero-copy packets)."""

TRACES = {
    "oracle": (
        zc_run("trace-oracle-results", "Table 2, Oracle/TPC-D: two result bursts converge on the master"),
        zc_run("trace-oracle-distribute", "Table 2, Oracle/TPC-D: the master sends to host 1 and host 2"),
    ),
    "treadmarks": (
        zc_run("trace-treadmarks-to-host1", "Table 2, TreadMarks/SOR: host 1 faults pages in from the master"),
        zc_run("trace-treadmarks-to-host2", "Table 2, TreadMarks/SOR: host 2 faults pages in from the master"),
        zc_run("trace-treadmarks-from-host1", "Table 2, TreadMarks/SOR: the master fetches pages back from host 1"),
        zc_run("trace-treadmarks-from-host2", "Table 2, TreadMarks/SOR: the master fetches pages back from host 2"),
    ),
}
"""The runs that rebuild each trace's traffic from the mechanisms the study
names: per host, its potential zero-copy packets arrive as page trains."""
