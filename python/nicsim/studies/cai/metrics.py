"""What the Cai study measures, computed from one run's report.

* throughput: the flow's goodput (Gb/s);
* CPU %: per side, the sum over the host's cores of their busy fraction,
  times 100 (100 % = one core busy for the whole run);
* throughput per core: throughput over the receiver's cores used (its CPU % / 100);
* breakdown: per side, the host's CPU cycles by layer grouped into the
  study's categories (:data:`.experiments.LAYER_CATEGORY`), as a percentage
  of the host's total cycles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nicsim.studies.records import HostTiming, RunReport

from .experiments import CATEGORIES, SIDES, category


@dataclass(frozen=True)
class Side:
    """One host's CPU in a run."""

    cpu_pct: float
    """Sum of the host's core utilisations x 100."""
    cycles: Mapping[str, float]
    """Cycles per nicsim layer (non-zero layers only)."""
    breakdown_pct: Mapping[str, float]
    """Category -> % of the host's cycles, every category of :data:`CATEGORIES`, in its order."""

    @property
    def total_cycles(self) -> float:
        return sum(self.cycles.values())


@dataclass(frozen=True)
class Metrics:
    """The study's quantities for one configuration's run."""

    throughput_gbps: float
    sides: Mapping[str, Side]
    """``sender`` and ``receiver``."""
    retransmissions: int

    @property
    def per_core_gbps(self) -> float:
        """Throughput over the receiver's cores used."""
        return per_core(self.throughput_gbps, self.sides["receiver"].cpu_pct)

    @property
    def sender(self) -> Side:
        return self.sides["sender"]

    @property
    def receiver(self) -> Side:
        return self.sides["receiver"]


def per_core(throughput_gbps: float, receiver_cpu_pct: float) -> float:
    """Throughput per receiver core: ``throughput / (cpu % / 100)``."""
    if receiver_cpu_pct <= 0:
        raise ValueError(f"the receiver used no CPU ({receiver_cpu_pct} %): no throughput per core")
    return throughput_gbps / (receiver_cpu_pct / 100.0)


def cpu_pct(timing: HostTiming) -> float:
    """Sum over the host's cores of ``utilization`` x 100."""
    cores = timing.raw.get("cores")
    if not cores:
        raise ValueError("the host's timing report lists no cores")
    return 100.0 * sum(float(c["utilization"]) for c in cores)


def breakdown(cycles: Mapping[str, float]) -> dict[str, float]:
    """Cycles per nicsim layer -> % per study category (every category, in
    :data:`CATEGORIES` order; they add up to 100)."""
    total = sum(cycles.values())
    if total <= 0:
        raise ValueError("no CPU cycles to break down")
    by = dict.fromkeys(CATEGORIES, 0.0)
    for layer, v in cycles.items():
        if v < 0:
            raise ValueError(f"layer {layer!r} has negative cycles ({v})")
        by[category(layer)] += v
    return {c: 100.0 * v / total for c, v in by.items()}


def measure(report: RunReport) -> Metrics:
    """The study's quantities from a flow's run."""
    sides: dict[str, Side] = {}
    for side, host in SIDES.items():
        t = report.host(host).timed
        sides[side] = Side(cpu_pct(t), dict(t.cycles), breakdown(t.cycles))
    return Metrics(report.summary.goodput_bps / 1e9, sides, report.summary.retransmissions)
