"""What the Cai study measures, computed from one run's report.

* throughput: the flow's goodput (Gb/s);
* CPU %: per side, the sum over the host's cores of their busy fraction,
  times 100 (100 % = one core busy for the whole run);
* throughput per core: throughput over the receiver's cores used (its CPU % / 100);
* breakdown: per side, the host's CPU cycles by layer grouped into the
  study's categories (:data:`.experiments.LAYER_CATEGORY`, after the
  study's own table of kernel symbols), as a percentage of the host's total
  cycles, covering the 95 % of them the study's script adds up;
* where the receiver's reads found the data (:class:`Reads`): the share
  copied from memory rather than the L3 (DDIO), and how long data waited
  between the NAPI poll that took it and its read;
* the receiver's L3 miss rate (:attr:`Metrics.l3_miss_pct`), which the
  study reads from perf's ``LLC-load-misses`` over ``LLC-loads``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nicsim.studies.records import HostTiming, RunReport

from nicsim.models.extract import load_profile

from .experiments import CATEGORIES, COVERAGE_PCT, INTERRUPT_SPLIT, PROFILE, SIDES, USER, category


@dataclass(frozen=True)
class Side:
    """One host's CPU in a run."""

    cpu_pct: float
    """Sum of the host's core utilisations x 100."""
    cycles: Mapping[str, float]
    """Cycles per nicsim layer (non-zero layers only)."""
    breakdown_pct: Mapping[str, float]
    """Category -> % of the host's cycles, every category of :data:`CATEGORIES`, in its order
    (they add up to 95 without user-space work: see :func:`breakdown`)."""
    clocks_ghz: tuple[float, ...] = ()
    """Mean clock while busy of each core that ran, in core order (``cpu.pstate`` sets it)."""

    @property
    def total_cycles(self) -> float:
        return sum(self.cycles.values())


@dataclass(frozen=True)
class Reads:
    """What the receiver's reads found (the core's ``rx_copy`` report, with
    DDIO modelled), over the measured interval."""

    llc_bytes: int
    """Payload bytes copied while DDIO still held them in the L3."""
    memory_bytes: int
    """Payload bytes copied from memory: newer DMA writes had evicted them."""
    mean_unread_bytes: float
    """Time-mean payload bytes taken from the ring (NAPI) and not yet read."""
    mean_wait_us: float
    """Mean time from a byte's NAPI poll to its read (Little's law), us."""

    @property
    def from_memory_pct(self) -> float:
        """Share of the copied bytes that came from memory, %."""
        total = self.llc_bytes + self.memory_bytes
        return 100.0 * self.memory_bytes / total if total else 0.0


@dataclass(frozen=True)
class Metrics:
    """The study's quantities for one configuration's run."""

    throughput_gbps: float
    sides: Mapping[str, Side]
    """``sender`` and ``receiver``."""
    retransmissions: int
    reads: Reads | None = None
    """Where the receiver's reads found the data (``None``: no DDIO in the profile)."""
    per_core_side: str = "receiver"
    """The side whose cores the throughput is divided by: the receiver's,
    or in the outcast experiment the sender's (the study's bottleneck there)."""

    @property
    def per_core_gbps(self) -> float:
        """Throughput over the cores ``per_core_side`` used."""
        return per_core(self.throughput_gbps, self.sides[self.per_core_side].cpu_pct)

    @property
    def l3_miss_pct(self) -> float:
        """The receiver's L3 miss rate, %: the share of the received bytes its
        reads copied from memory rather than the L3, or 100 without DDIO (the
        NIC's writes then go to memory and invalidate the lines in the L3).

        The study's is perf's ``LLC-load-misses`` over ``LLC-loads`` on the
        receiver's cores, which on Skylake-SP count the demand data reads
        that leave the core's L2 and those of them the L3 does not serve
        (Linux ``arch/x86/events/intel/core.c`` ``skl_hw_cache_extra_regs``:
        ``SKL_DEMAND_READ`` with ``SKL_LLC_ACCESS``, and with ``SKL_L3_MISS``).
        nicsim takes the copy's reads of the received data for all of them:
        the stack's other data (sockets, sk_buffs, descriptors) is taken to
        stay in the cores' own caches, and the L2's prefetchers to cover
        lines from the L3 and from memory alike (docs/studies/cai.md)."""
        if self.reads is None:
            return 100.0
        return self.reads.from_memory_pct

    @property
    def sender(self) -> Side:
        return self.sides["sender"]

    @property
    def receiver(self) -> Side:
        return self.sides["receiver"]


def per_core(throughput_gbps: float, cpu_pct: float) -> float:
    """Throughput per core: ``throughput / (cpu % / 100)``."""
    if cpu_pct <= 0:
        raise ValueError(f"the side used no CPU ({cpu_pct} %): no throughput per core")
    return throughput_gbps / (cpu_pct / 100.0)


def cpu_pct(timing: HostTiming) -> float:
    """Sum over the host's cores of ``utilization`` x 100."""
    cores = timing.raw.get("cores")
    if not cores:
        raise ValueError("the host's timing report lists no cores")
    return 100.0 * sum(float(c["utilization"]) for c in cores)


def category_cycles(
    cycles: Mapping[str, float], interrupts: int = 0, entry: float = 0.0, exit_: float = 0.0
) -> dict[str, float]:
    """Cycles per nicsim layer -> cycles per study category (every category,
    in :data:`CATEGORIES` order; user-space cycles are in none).

    ``interrupts`` interrupts each paid ``entry`` and ``exit_`` cycles of the
    ``interrupt`` layer (:data:`.experiments.INTERRUPT_SPLIT`); the rest of
    that layer is the driver's handler."""
    by = dict.fromkeys(CATEGORIES, 0.0)
    for layer, v in cycles.items():
        if v < 0:
            raise ValueError(f"layer {layer!r} has negative cycles ({v})")
        cat = category(layer)
        if cat != USER:
            by[cat] += v
    if interrupts < 0:
        raise ValueError(f"a negative interrupt count ({interrupts})")
    split = {"interrupt_entry": interrupts * entry, "interrupt_exit": interrupts * exit_}
    if sum(split.values()) > cycles.get("interrupt", 0.0) * (1 + 1e-9):
        raise ValueError(
            f"{interrupts} interrupts of {entry:g} + {exit_:g} cycles are more than the interrupt layer's "
            f"{cycles.get('interrupt', 0.0):g}")
    for part, v in split.items():
        by[category("interrupt")] -= v
        by[INTERRUPT_SPLIT[part]] += v
    return by


def breakdown(
    cycles: Mapping[str, float], interrupts: int = 0, entry: float = 0.0, exit_: float = 0.0
) -> dict[str, float]:
    """Cycles per nicsim layer -> % per study category, as the study's script
    counts them (every category, in :data:`CATEGORIES` order; the interrupt
    layer split as :func:`category_cycles` does).

    The shares are of all cycles, user space included; the kernel's are
    scaled to cover at most :data:`.experiments.COVERAGE_PCT` % of them, so
    they add up to 95 when there is no user-space work."""
    total = sum(cycles.values())
    if total <= 0:
        raise ValueError("no CPU cycles to break down")
    by = category_cycles(cycles, interrupts, entry, exit_)
    kernel = sum(by.values())
    scale = min(1.0, COVERAGE_PCT / 100.0 * total / kernel) if kernel > 0 else 1.0
    return {c: 100.0 * scale * v / total for c, v in by.items()}


def interrupt_cycles(profile: str = PROFILE) -> tuple[float, float]:
    """``cpu.interrupt_entry`` and ``cpu.interrupt_exit`` of built-in profile ``profile``."""
    prof = load_profile(profile)
    if prof is None:
        raise ValueError(f"profile {profile!r}: no such built-in profile")
    cpu = prof.get("cpu", {})
    return float(cpu.get("interrupt_entry", 0)), float(cpu.get("interrupt_exit", 0))


def _side(report: RunReport, *hosts: str) -> Side:
    """The CPU of host ``hosts`` in the run, summed over them when there are
    several (the outcast experiment's receivers stand for cores of one host)."""
    entry, exit_ = interrupt_cycles()
    timings = [report.host(h).timed for h in hosts]
    cores = [c for t in timings for c in t.raw.get("cores", [])]
    interrupts = sum(int(c.get("interrupts", 0)) for c in cores)
    clocks = tuple(float(c.get("busy_clock_hz", 0.0)) / 1e9 for c in cores if float(c.get("busy_s", 0.0)) > 0)
    cycles: dict[str, float] = {}
    for t in timings:
        for layer, v in t.cycles.items():
            cycles[layer] = cycles.get(layer, 0.0) + v
    return Side(sum(cpu_pct(t) for t in timings), cycles, breakdown(cycles, interrupts, entry, exit_), clocks)


def _reads(report: RunReport, *hosts: str) -> Reads | None:
    """Where the reads of host ``hosts`` found the data, summed over them
    when there are several (their mean wait weighted by the bytes each read)."""
    copies = [rc for h in hosts if (rc := report.host(h).timed.raw.get("rx_copy"))]
    if not copies:
        return None
    if len(copies) == 1:
        rc = copies[0]
        return Reads(int(rc["llc_bytes"]), int(rc["memory_bytes"]), float(rc["mean_unread_bytes"]),
                     1e6 * float(rc["mean_wait_s"]))
    llc = sum(int(rc["llc_bytes"]) for rc in copies)
    memory = sum(int(rc["memory_bytes"]) for rc in copies)
    read = [int(rc["llc_bytes"]) + int(rc["memory_bytes"]) for rc in copies]
    wait = sum(r * float(rc["mean_wait_s"]) for r, rc in zip(read, copies)) / sum(read) if sum(read) else 0.0
    return Reads(llc, memory, sum(float(rc["mean_unread_bytes"]) for rc in copies), 1e6 * wait)


def measure(report: RunReport) -> Metrics:
    """The study's quantities from a flow's run."""
    sides = {side: _side(report, host) for side, host in SIDES.items()}
    return Metrics(report.summary.goodput_bps / 1e9, sides, report.summary.retransmissions,
                   _reads(report, SIDES["receiver"]))


def measure_mixed(report: RunReport, rpc_bytes: int) -> Metrics:
    """The study's quantities from a run of its mixed experiment (a flow and
    request/response connections of ``rpc_bytes`` each way beside it): the
    receiver's side only, and the flow's throughput plus the connections'
    (transactions per second times ``rpc_bytes``: one direction, as the
    study halves netperf's count)."""
    receiver = SIDES["receiver"]
    rate = float(report.summary.raw.get("transaction_rate") or 0.0)
    gbps = (report.summary.goodput_bps + rate * rpc_bytes * 8) / 1e9
    return Metrics(gbps, {"receiver": _side(report, receiver)}, report.summary.retransmissions,
                   _reads(report, receiver))


def measure_outcast(report: RunReport, receivers: tuple[str, ...]) -> Metrics:
    """The study's quantities from a run of its outcast experiment
    (``outcast.toml``): every flow's goodput together, the sender's side,
    the receiver hosts ``receivers`` summed as one side, and throughput
    per sender core (the study divides by the sender's CPU there)."""
    sender = SIDES["sender"]
    sides = {"sender": _side(report, sender), "receiver": _side(report, *receivers)}
    return Metrics(report.summary.goodput_bps / 1e9, sides, report.summary.retransmissions, None, "sender")


def measure_one_to_one(report: RunReport, senders: tuple[str, ...], receivers: tuple[str, ...]) -> Metrics:
    """The study's quantities from a run of its one-to-one experiment
    (``one_to_one.toml``): every flow's goodput together, the sender hosts
    ``senders`` summed as one side and the receiver hosts ``receivers`` as
    the other (each stands for a core of one host), throughput per
    receiver core."""
    sides = {"sender": _side(report, *senders), "receiver": _side(report, *receivers)}
    return Metrics(report.summary.goodput_bps / 1e9, sides, report.summary.retransmissions, _reads(report, *receivers))


def measure_rpc(report: RunReport) -> Metrics:
    """The study's quantities from a run of its RPC experiment (``rpc.toml``):
    the receiver's side only, and the throughput of one direction. netperf's
    ``TCP_RR`` reports the bytes both ways and the study halves it
    (``process_throughput_output``); nicsim's goodput counts the measured
    transactions' requests and responses, so half of it is the same."""
    receiver = SIDES["receiver"]
    return Metrics(report.summary.goodput_bps / 2e9, {"receiver": _side(report, receiver)},
                   report.summary.retransmissions, _reads(report, receiver))
