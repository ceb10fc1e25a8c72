"""Run and resolve scenarios given as a TOML file or as TOML text."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from . import _core
from ._core import ProbeEvent
from .result import Result

if TYPE_CHECKING:
    import pandas as pd

Scenario = Union[str, os.PathLike[str]]
"""A path to a TOML scenario file, or the TOML text itself."""

Probes = Mapping[str, Callable[[ProbeEvent], object]]
"""Event name (one of :data:`PROBE_EVENTS`) to the callable that gets each
such event."""


def read_scenario(scenario: Scenario) -> tuple[str, str]:
    """Return ``(text, source)`` for a scenario.

    A path-like object is always a file. A string is a file if it is one line
    and either names an existing file or ends in ``.toml``; otherwise it is
    TOML text, and its source is ``"<string>"``.
    """
    if isinstance(scenario, str) and not _names_file(scenario):
        return scenario, "<string>"
    path = Path(scenario)
    return path.read_text(encoding="utf-8"), str(path)


def _names_file(text: str) -> bool:
    if "\n" in text:
        return False
    if text.endswith(".toml"):
        return True
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # too long or NUL: not a file name
        return False


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    pcap: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    probes: Probes | None = None,
    progress: Callable[[float, int, int | None, int], object] | None = None,
    record: Iterable[str] | None = None,
) -> Result:
    """Run a scenario and return its result.

    ``seed`` overrides the scenario's seed; ``pcap`` is a directory (created
    if needed) that gets one pcap file per link; ``out`` is a directory the
    result files are written to (see :meth:`Result.write`). ``probes`` maps
    event names to callables, each called with every such event as a
    :class:`ProbeEvent` (see docs/probes.md); an unknown name raises
    ``ValueError``, and the first exception a probe raises is raised once the
    run is over. Probes never change the result. The GIL is released during
    the run, except while a probe runs.

    ``record`` names events (the same names) to keep in memory instead of
    calling anything: after the run, ``result.records[name]`` is a
    :class:`pandas.DataFrame` with a row per event (``time_ps``,
    ``time_s``, ``host`` and the event's fields). It costs a few
    nanoseconds an event, where a probe costs a Python call.
    """
    text, source = read_scenario(scenario)
    wanted = None if probes is None else dict(probes)
    names = None if record is None else _record_names(record)
    out_core = _core.run_scenario(text, source, seed, pcap, wanted, progress, names)
    if names is None:
        result = Result(out_core, pcap)
    else:
        json_text, hosts, series = out_core
        result = Result(json_text, pcap, records=_records(hosts, series))
    if out is not None:
        result.write(out)
    return result


def _record_names(record: Iterable[str]) -> list[str]:
    if isinstance(record, str):
        raise TypeError(f"record takes a list of event names, not one string: use record=[{record!r}]")
    return list(record)


def _records(hosts: list[str], series: dict[str, tuple[list[str], bytes, bytes, bytes]]) -> dict[str, pd.DataFrame]:
    """The recorded events as one DataFrame per event name."""
    import numpy as np
    import pandas as pd

    frames = {}
    for name, (fields, time_ps, host, values) in series.items():
        t = np.frombuffer(time_ps, dtype="<u8").astype(np.int64)
        codes = np.frombuffer(host, dtype="<u4").astype(np.int64)
        table = np.frombuffer(values, dtype="<f8").reshape(len(t), len(fields))
        columns: dict[str, Any] = {
            "time_ps": t,
            "time_s": t / 1e12,
            "host": pd.Categorical.from_codes(codes, categories=hosts) if hosts else pd.Categorical([]),
        }
        for k, field in enumerate(fields):
            columns[field] = table[:, k].copy()
        frames[name] = pd.DataFrame(columns)
    return frames


def resolve(scenario: Scenario) -> dict[str, Any]:
    """Validate a scenario and return it fully resolved: every default filled
    in and every unit canonical."""
    text, source = read_scenario(scenario)
    resolved: dict[str, Any] = json.loads(_core.resolve_scenario(text, source))
    return resolved


def profiles() -> list[tuple[str, str]]:
    """The built-in timing profiles, as ``(name, description)`` pairs."""
    return _core.profiles()
