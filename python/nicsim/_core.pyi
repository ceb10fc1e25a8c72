"""Type stub for the native module built from crates/nicsim-py."""

import os
from collections.abc import Callable
from typing import Any

__all__ = [
    "PROBE_EVENTS",
    "ProbeEvent",
    "ScenarioError",
    "SimulationError",
    "version",
    "run_scenario",
    "resolve_scenario",
    "pattern_bytes",
    "profiles",
    "profile_text",
    "coalesce_pcap",
    "risc_cycles",
    "risc_simulate",
    "risc_min_clock",
    "risc_budget_ns",
    "host_lro",
]

PROBE_EVENTS: tuple[str, ...]

class ScenarioError(ValueError):
    """The scenario is invalid; `path` names the field and `reason` says why."""

    path: str
    reason: str

class SimulationError(RuntimeError):
    """The simulation ran but failed."""

class ProbeEvent:
    """One event a probe asked for: its name, simulated time, host and numeric
    fields (`event["bytes"]`)."""

    @property
    def name(self) -> str: ...
    @property
    def time_ps(self) -> int: ...
    @property
    def time_s(self) -> float: ...
    @property
    def host(self) -> str: ...
    @property
    def fields(self) -> dict[str, float]: ...
    def __getitem__(self, key: str) -> float: ...

def version() -> str: ...
def run_scenario(
    text: str,
    source: str = "<string>",
    seed: int | None = None,
    pcap_dir: str | os.PathLike[str] | None = None,
    probes: dict[str, Callable[[ProbeEvent], object]] | None = None,
    progress: Callable[[float, int, int | None, int], object] | None = None,
    record: list[str] | None = None,
) -> str | tuple[str, list[str], dict[str, tuple[list[str], bytes, bytes, bytes]]]: ...
def resolve_scenario(text: str, source: str = "<string>") -> str: ...
def pattern_bytes(seed: int, stream: int, offset: int, length: int) -> bytes: ...
def profiles() -> list[tuple[str, str]]: ...
def profile_text(name: str) -> str | None: ...
def coalesce_pcap(
    input: str | os.PathLike[str],
    output: str | os.PathLike[str],
    engine: str = "nic",
    batch_gap_us: float = 20.0,
    flush_packets: int | None = None,
    cam_entries: int | None = None,
    assume_checksums_ok: bool = False,
) -> str: ...
def risc_cycles(
    size: int,
    core_clock_hz: int = 1_000_000_000,
    dma_ratio: float | None = None,
    dma_clock_hz: int | None = None,
    word_cycles: int = 1,
    prologue: int = 15,
    prologue_free: int = 2,
    program: dict[str, int] | None = None,
    classes: list[str] | None = None,
) -> list[dict[str, Any]]: ...
def risc_simulate(
    size: int,
    line_rate_bps: int,
    core_clock_hz: int,
    packets: int = 1000,
    pattern: list[str] | None = None,
    host_dma: bool = False,
    arrivals: list[tuple[int, int, str]] | None = None,
    *,
    dma_ratio: float | None = None,
    dma_clock_hz: int | None = None,
    word_cycles: int = 1,
    prologue: int = 15,
    prologue_free: int = 2,
    program: dict[str, int] | None = None,
    buffers: int = 2,
    framing: int = 18,
    preamble: int = 8,
    ifg: int = 12,
) -> dict[str, Any]: ...
def risc_min_clock(
    size: int,
    line_rate_bps: int,
    packets: int = 2000,
    pattern: list[str] | None = None,
    host_dma: bool = False,
    *,
    dma_ratio: float | None = None,
    dma_clock_hz: int | None = None,
    word_cycles: int = 1,
    prologue: int = 15,
    prologue_free: int = 2,
    program: dict[str, int] | None = None,
    buffers: int = 2,
    framing: int = 18,
    preamble: int = 8,
    ifg: int = 12,
) -> dict[str, Any]: ...
def risc_budget_ns(line_rate_bps: int, frame: int, overhead: int = 20) -> float: ...
def host_lro(
    line_rate_bps: int = 10_000_000_000,
    size: int = 1500,
    clock_hz: int = 4_000_000_000,
    cycles: int = 2927,
    overhead: int = 38,
    window_s: float = 0.01,
) -> dict[str, Any]: ...
