"""Typed views of a run's report, for the studies.

A study reads the JSON report the core writes (``Result.data``) through
these records instead of string-keyed look-ups, so a misspelt field fails
where it is read, with the field's name, rather than deep inside a figure.
Each record keeps the part of the report it was made from in ``raw`` for
the fields no study reads often enough to type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MB = 1e6
"""The studies' MB: 10^6 bytes."""


def _counts(x: Mapping[str, Any] | None) -> Mapping[str, float]:
    return {k: float(v) for k, v in (x or {}).items()}


@dataclass(frozen=True)
class Summary:
    """The run's headline numbers (``report["summary"]``)."""

    goodput_bps: float
    """Application bytes delivered per second, in bit/s (0 when the workload has none)."""
    payload_bytes: int
    duration_s: float
    sim_time_s: float
    frames: int
    retransmissions: int
    verified: bool
    """Every delivered byte matched what was sent."""
    raw: Mapping[str, Any]
    lost: int = 0
    """Frames the links' impairments dropped."""
    jain_fairness: float | None = None
    """Jain's index of the flows' throughputs (runs of several flows only)."""

    @property
    def mbs(self) -> float:
        """Goodput in the studies' MB/s (10^6 bytes per second)."""
        return self.goodput_bps / 8 / MB

    @classmethod
    def parse(cls, d: Mapping[str, Any]) -> Summary:
        return cls(
            goodput_bps=float(d.get("goodput_bps") or 0.0),
            payload_bytes=int(d.get("payload_bytes") or 0),
            duration_s=float(d.get("duration_s") or 0.0),
            sim_time_s=float(d["sim_time_s"]),
            frames=int(d.get("frames") or 0),
            retransmissions=int(d.get("retransmissions") or 0),
            verified=bool(d.get("verified")),
            raw=d,
            lost=int(d.get("lost") or 0),
            jain_fairness=None if d.get("jain_fairness") is None else float(d["jain_fairness"]),
        )


@dataclass(frozen=True)
class HostTiming:
    """A timed host's measurements (``hosts[i]["timing"]``)."""

    profile: str
    cpu_utilization: float
    bus_utilization: float
    cycles: Mapping[str, float]
    """CPU cycles by layer over the run."""
    cycles_send: Mapping[str, float]
    cycles_receive: Mapping[str, float]
    nic: Mapping[str, Any]
    bus: Mapping[str, Any]
    zero_copy: Mapping[str, Any]
    """The zero-copy engine's counters; empty for a host without one."""
    raw: Mapping[str, Any]

    @property
    def total_cycles(self) -> float:
        return sum(self.cycles.values())

    @classmethod
    def parse(cls, d: Mapping[str, Any]) -> HostTiming:
        return cls(
            profile=str(d.get("profile", "")),
            cpu_utilization=float(d["cpu_utilization"]),
            bus_utilization=float(d.get("bus_utilization") or 0.0),
            cycles=_counts(d.get("cycles")),
            cycles_send=_counts(d.get("cycles_send")),
            cycles_receive=_counts(d.get("cycles_receive")),
            nic=d.get("nic") or {},
            bus=d.get("bus") or {},
            zero_copy=d.get("zero_copy") or {},
            raw=d,
        )


@dataclass(frozen=True)
class HostReport:
    """One host of the run (``report["hosts"][i]``)."""

    name: str
    tx_frames: int
    rx_frames: int
    timing: HostTiming | None
    """``None`` for an ideal host (no timing models)."""
    raw: Mapping[str, Any]

    @property
    def timed(self) -> HostTiming:
        """The timing record; a run whose host is ideal is a study bug."""
        if self.timing is None:
            raise RuntimeError(f"host {self.name} is not a timed host")
        return self.timing

    @classmethod
    def parse(cls, d: Mapping[str, Any]) -> HostReport:
        timing = d.get("timing")
        return cls(
            name=str(d["name"]),
            tx_frames=int(d.get("tx_frames") or 0),
            rx_frames=int(d.get("rx_frames") or 0),
            timing=HostTiming.parse(timing) if timing else None,
            raw=d,
        )


@dataclass(frozen=True)
class LinkReport:
    """One direction of a link (``report["links"][i]``)."""

    link: str
    direction: str
    frames: int
    utilization: float
    raw: Mapping[str, Any]

    @classmethod
    def parse(cls, d: Mapping[str, Any]) -> LinkReport:
        return cls(str(d["link"]), str(d["direction"]), int(d["frames"]), float(d["utilization"]), d)


@dataclass(frozen=True)
class Flow:
    """A checked byte stream (``report["flows"][i]``)."""

    source: str
    sink: str
    bytes: int

    @classmethod
    def parse(cls, d: Mapping[str, Any]) -> Flow:
        return cls(str(d["from"]), str(d["to"]), int(d["bytes"]))


@dataclass(frozen=True)
class RunReport:
    """A run's report as typed records; ``raw`` is the whole JSON report."""

    name: str
    """The scenario's name."""
    seed: int
    workload: Mapping[str, Any]
    summary: Summary
    hosts: Sequence[HostReport]
    links: Sequence[LinkReport]
    flows: Sequence[Flow]
    raw: Mapping[str, Any]

    def host(self, which: int | str) -> HostReport:
        """A host by index or by name."""
        if isinstance(which, int):
            return self.hosts[which]
        for h in self.hosts:
            if h.name == which:
                return h
        raise KeyError(f"{self.name}: no host named {which!r}")

    @property
    def max_link_utilization(self) -> float:
        return max((x.utilization for x in self.links), default=0.0)

    @classmethod
    def parse(cls, d: Mapping[str, Any]) -> RunReport:
        return cls(
            name=str(d["scenario"]["name"]),
            seed=int(d["seed"]),
            workload=d.get("workload") or {},
            summary=Summary.parse(d["summary"]),
            hosts=[HostReport.parse(h) for h in d.get("hosts") or []],
            links=[LinkReport.parse(x) for x in d.get("links") or []],
            flows=[Flow.parse(f) for f in d.get("flows") or []],
            raw=d,
        )
