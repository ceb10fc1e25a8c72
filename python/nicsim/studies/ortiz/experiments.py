"""The Ortiz study's simulated runs and published numbers.

Every run is a scenario next to this module (also at ``scenarios/ortiz/``)
with both hosts' offload knobs fixed to one :class:`Setting`; only those
knobs and the message size change between runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nicsim.studies.framework import Grid, Run

HERE = Path(__file__).parent

PUBLISHED_LATENCY_US = {
    "no offload": 66.9,
    "Offload 1": 24.4,
    "Offload 2": 31.68,
    "Offload 4": 42.53,
    "Offload 6": 46.61,
    "Offload 10": 120.54,
}
"""Table I of the study: NetPIPE latency in µs (the calibration set)."""


@dataclass(frozen=True)
class Setting:
    """One configuration of both hosts."""

    label: str
    key: str
    """Short name for the runs' keys and ``comparison.csv`` ids."""
    offload: bool
    x: float = 1.0
    ratio: float = 1.0

    def knobs(self) -> dict[str, Any]:
        """Both hosts' offload knobs set to this setting."""
        out: dict[str, Any] = {}
        for h in (0, 1):
            out[f"hosts[{h}].offload.enabled"] = self.offload
            out[f"hosts[{h}].offload.memory_multiplier"] = self.x
            out[f"hosts[{h}].offload.clock_ratio"] = self.ratio
        return out


SETTINGS = [
    Setting("no offload", "no_offload", False),
    *(Setting(f"Offload {x}", f"offload{x}", True, float(x)) for x in (1, 2, 4, 6, 10)),
]
"""Table I's rows: no offload and Offload x (CPU1's memory delay x times the reference)."""
SPEEDS = [Setting(f"CPU1 at {int(r * 100)} %", f"cpu1_{int(r * 100)}", True, 1.0, r) for r in (0.75, 0.5, 0.25)]
"""Figure 8: CPU1 at 75, 50 and 25 % of CPU0's step rate, Offload 1."""
LOAD_SETTINGS = [SETTINGS[0], SETTINGS[1]]
"""Figures 3 and 4 and the released cycles: no offload and Offload 1."""
SIZES = ["64B", "256B", "1024B", "4096B", "8192B"]
"""UDP datagram sizes (netperf UDP_STREAM); TCP adds 16 and 64 KiB writes."""
TCP_SIZES = [*SIZES, "16KiB", "64KiB"]
COMPUTE = [0, 2500, 5000, 10000, 20000, 40000, 80000]
"""Application work on the receiver, cycles per KiB it reads (LAWS's a)."""

LATENCY = {s.label: Run(f"latency-{s.key}", HERE / "latency.toml",
                        f"NetPIPE latency, {s.label} (Table I)", s.knobs()) for s in SETTINGS}  # fmt: skip
NETPIPE = {s.label: Run(f"netpipe-{s.key}", HERE / "netpipe.toml",
                        f"NetPIPE curve, 1 B to 4 MiB, {s.label} (Figures 5-8)", s.knobs())
           for s in [*SETTINGS, *SPEEDS]}  # fmt: skip
TCP = {s.label: Grid(f"tcp-{s.key}", HERE / "stream.toml", {"workload.bulk.write_size": TCP_SIZES},
                     f"TCP stream per write size, {s.label} (Figures 3, 4)", s.knobs())
       for s in LOAD_SETTINGS}  # fmt: skip
UDP = {s.label: Grid(f"udp-{s.key}", HERE / "udp.toml", {"workload.udp_stream.size": SIZES},
                     f"UDP stream per datagram size, {s.label} (Figure 4)", s.knobs())
       for s in LOAD_SETTINGS}  # fmt: skip
COMPUTE_RUNS = {s.label: Grid(f"compute-{s.key}", HERE / "compute.toml",
                              {"hosts[1].app.compute_per_kib": COMPUTE},
                              f"TCP stream to a CPU-intensive application, {s.label} (released cycles)", s.knobs())
                for s in LOAD_SETTINGS}  # fmt: skip

SETTING_BY_LABEL = {s.label: s for s in [*SETTINGS, *SPEEDS]}
