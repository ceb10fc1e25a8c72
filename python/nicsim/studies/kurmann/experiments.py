"""The Kurmann study's simulated runs and published numbers.

Each run is a scenario next to this module (copies of ``scenarios/kurmann*``,
checked equal by the tests) plus fixed knob settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nicsim.studies.framework import Run

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
    "zc-os-only": zc_run("zc-os-only", "zero-copy OS (fbufs) only: the defragmenting copy remains"),
    "both-remap": zc_run("both-remap", "speculation + page remapping with copy-on-write"),
    "both-fbufs": zc_run("both-fbufs", "speculation + fast buffers"),
}
"""Figure 5's bars: large-transfer throughput per variant (32 MiB bulk)."""

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
