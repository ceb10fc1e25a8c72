"""Type stub for the native module built from crates/nicsim-py."""

import os

__all__ = [
    "ScenarioError",
    "SimulationError",
    "version",
    "run_scenario",
    "resolve_scenario",
    "pattern_bytes",
]

class ScenarioError(ValueError):
    """The scenario is invalid; `path` names the field and `reason` says why."""

    path: str
    reason: str

class SimulationError(RuntimeError):
    """The simulation ran but failed."""

def version() -> str: ...
def run_scenario(
    text: str,
    source: str = "<string>",
    seed: int | None = None,
    pcap_dir: str | os.PathLike[str] | None = None,
) -> str: ...
def resolve_scenario(text: str, source: str = "<string>") -> str: ...
def pattern_bytes(seed: int, stream: int, offset: int, length: int) -> bytes: ...
