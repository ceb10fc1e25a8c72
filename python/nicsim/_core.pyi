"""Type stub for the native module built from crates/nicsim-py."""

import os
from collections.abc import Callable

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
) -> str: ...
def resolve_scenario(text: str, source: str = "<string>") -> str: ...
def pattern_bytes(seed: int, stream: int, offset: int, length: int) -> bytes: ...
def profiles() -> list[tuple[str, str]]: ...
def profile_text(name: str) -> str | None: ...
def coalesce_pcap(
    input: str | os.PathLike[str],
    output: str | os.PathLike[str],
    engine: str = "nic",
    batch_gap_us: float = 20.0,
) -> str: ...
