"""Model parameters from a run's probes: per-layer cycles per core, busy
time, NIC and link counters, the workload's bytes.

Nothing here fits a curve to the quantity a model will predict. Each
parameter is a physical count divided by a physical count:

* a core's clock is its cycles over its busy time (the report gives both);
* ``o`` (LAWS) is the host's communication cycles (every layer but ``app``)
  per byte delivered, ``a`` its ``app`` cycles per byte;
* ``p`` is the share of ``o`` that leaves the application core with offload;
  ``β`` the communication processor's cycles per byte over the host cycles
  they replaced (measured where both processors run at the same clock and
  memory speed, so that α = 1 there);
* ``B`` is the wire's payload rate for full-sized frames (the report's
  ``ceiling_bps``);
* EMO and LogGP per-message cycles are a processor's cycles over the
  messages sent (NIC transmit frames; one frame per small message);
* LogGP's ``G`` is the slowest per-byte stage: the wire, a user/kernel copy
  (``copy`` cycles per byte copied) or the I/O bus (its busy time per byte);
* latency that no processor accounts for (DMA, bus, notification, polling)
  is the residual at the reference point, and is held constant.

Where a prediction needs to know how much of the communication processor's
work is memory access (Offload x multiplies only that part; a slower clock
slows only the rest), the share comes from the profile's cost table, the
same instruction and memory-access counts the simulator charges; see
:func:`memory_share`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nicsim import _core

from .emo import Emo
from .laws import Laws
from .loggp import LogGP

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Report = Mapping[str, Any]
"""A run's report (``Result.data``)."""

APP_LAYER = "app"
"""The layer application compute is charged to; every other layer is communication."""


class ExtractionError(ValueError):
    """A report that lacks what a model needs (an ideal host, no bytes moved...)."""


def _timing(report: Report, host: int) -> Mapping[str, Any]:
    hosts = report.get("hosts") or []
    if host >= len(hosts) or not hosts[host].get("timing"):
        raise ExtractionError(f"host {host} has no timing report (an ideal host?)")
    timing: Mapping[str, Any] = hosts[host]["timing"]
    return timing


def core_cycles(report: Report, host: int, core: int, *, app: bool | None = None) -> float:
    """Cycles of one core; ``app=False`` leaves out the ``app`` layer,
    ``app=True`` counts only it."""
    cores = _timing(report, host)["cores"]
    if core >= len(cores):
        return 0.0
    cycles: Mapping[str, int] = cores[core]["cycles"]
    if app is None:
        return float(sum(cycles.values()))
    if app:
        return float(cycles.get(APP_LAYER, 0))
    return float(sum(v for k, v in cycles.items() if k != APP_LAYER))


def clock_hz(report: Report, host: int, core: int) -> float:
    """A core's clock: its cycles over its busy time (NaN if it never ran)."""
    c = _timing(report, host)["cores"][core]
    busy = float(c["busy_s"])
    return core_cycles(report, host, core) / busy if busy > 0 else math.nan


def stack_cores(report: Report, host: int) -> tuple[int, int | None]:
    """(application core, communication processor or None): the busiest
    other core with offload counters, else none."""
    t = _timing(report, host)
    cores = t["cores"]
    if not t.get("offload") or len(cores) < 2:
        return 0, None
    others = [c for c in cores[1:] if sum(c["cycles"].values()) > 0]
    if not others:
        return 0, None
    return 0, max(others, key=lambda c: sum(c["cycles"].values()))["core"]


@dataclass(frozen=True)
class HostStream:
    """One host's per-byte work in a stream (cycles per byte)."""

    name: str
    clock_hz: float
    app: float
    """``a``: application cycles per byte on the application core."""
    comm: float
    """Communication cycles per byte on the application core (and, without
    offload, on every core)."""
    nic: float
    """Cycles per byte on the communication processor (0 without offload)."""
    nic_clock_hz: float
    utilization: float
    """Busy share of the application core."""
    nic_utilization: float


def stream_work(report: Report, host: int) -> HostStream:
    """Per-byte work of ``host`` in a stream run (bulk or UDP stream)."""
    s = report["summary"]
    nbytes = float(s.get("payload_bytes") or 0)
    if nbytes <= 0:
        raise ExtractionError("the run delivered no payload bytes")
    app_core, nic_core = stack_cores(report, host)
    t = _timing(report, host)
    if nic_core is None:
        comm = sum(core_cycles(report, host, c["core"], app=False) for c in t["cores"])
        nic, nic_clock, nic_util = 0.0, math.nan, 0.0
    else:
        comm = core_cycles(report, host, app_core, app=False)
        nic = core_cycles(report, host, nic_core)
        nic_clock = clock_hz(report, host, nic_core)
        nic_util = float(t["cores"][nic_core]["utilization"])
    return HostStream(
        name=str(report["hosts"][host]["name"]),
        clock_hz=clock_hz(report, host, app_core),
        app=core_cycles(report, host, app_core, app=True) / nbytes,
        comm=comm / nbytes,
        nic=nic / nbytes,
        nic_clock_hz=nic_clock,
        utilization=float(t["cores"][app_core]["utilization"]),
        nic_utilization=nic_util,
    )


def wire_payload_rate(report: Report) -> float:
    """B: payload bytes per second the wire carries in full-sized frames."""
    ceiling = report["summary"].get("ceiling_bps")
    if not ceiling:
        raise ExtractionError("the report has no ceiling_bps (not a bulk transfer?)")
    return float(ceiling) / 8


@dataclass(frozen=True)
class LawsHost:
    """LAWS parameters of one host, extracted at a reference pair of runs
    (the same workload without and with offload at the reference clock
    ratio and memory multiplier)."""

    name: str
    a: float
    """Application cycles per byte."""
    o: float
    """Communication cycles per byte without offload."""
    X: float
    """Seconds per host cycle."""
    B: float
    """Wire payload rate, bytes/s."""
    p: float
    """Share of ``o`` that leaves the application core."""
    beta: float
    """Communication processor cycles per byte over ``p·o`` at α = 1."""
    nic_memory_share: float | None = None
    """Share of the communication processor's cycles that are memory
    accesses at the reference (from the profile), or None if unknown."""

    def model(self, alpha: float, a: float | None = None) -> Laws:
        """LAWS with lag ratio ``alpha`` (and application work ``a`` cycles/B)."""
        return Laws(
            a=self.a if a is None else a, o=self.o, X=self.X, Y=alpha * self.X, B=self.B, p=self.p, beta=self.beta
        )


def laws_reference(base: Report, offload: Report, ref_clock_ratio: float = 1.0) -> list[LawsHost]:
    """LAWS parameters per host from a run without offload (``base``) and
    the same workload with offload (``offload``, communication processor at
    ``ref_clock_ratio`` of the host clock and reference memory delay)."""
    out = []
    for h in range(len(base["hosts"])):
        if not base["hosts"][h].get("timing"):
            continue
        b, f = stream_work(base, h), stream_work(offload, h)
        if b.comm <= 0:
            raise ExtractionError(f"host {b.name} did no communication work")
        p = 1 - f.comm / b.comm
        if p <= 0:
            raise ExtractionError(f"host {b.name}: offload left the host no less work ({f.comm:.3g} vs {b.comm:.3g} cycles/B)")
        # NIC time per byte at the reference = alpha_ref * beta * p * o * X, alpha_ref = 1 / ratio.
        beta = f.nic / (p * b.comm)
        out.append(
            LawsHost(name=b.name, a=b.app, o=b.comm, X=1 / b.clock_hz, B=wire_payload_rate(base), p=p, beta=beta)
        )
    if not out:
        raise ExtractionError("no timed host in the run")
    _ = ref_clock_ratio
    return out


def lag_ratio(clock_ratio: float, memory_multiplier: float = 1.0, memory_share: float | None = None) -> float:
    """α of a communication processor at ``clock_ratio`` of the host clock
    whose memory accesses take ``memory_multiplier`` times the host's.

    With ``memory_share`` None: the nominal LAWS lag ratio, 1 / clock_ratio
    (and × memory_multiplier: every unit of work slows alike). With the
    share φ of memory-access cycles in the offloaded work: instructions slow
    with the clock, memory accesses with the memory delay,
    α = (1 − φ) / clock_ratio + φ · memory_multiplier."""
    if clock_ratio <= 0 or memory_multiplier <= 0:
        raise ValueError("clock_ratio and memory_multiplier must be > 0")
    if memory_share is None:
        return memory_multiplier / clock_ratio
    return (1 - memory_share) / clock_ratio + memory_share * memory_multiplier


def laws_predict(hosts: Iterable[LawsHost], alpha: float | None, a: float | None = None) -> float:
    """End-to-end stream throughput (bytes/s): the slowest host's LAWS
    throughput; ``alpha`` None means no offload (T_before)."""
    rates = []
    for h in hosts:
        m = h.model(alpha if alpha is not None else 1.0, a)
        rates.append(m.before() if alpha is None else m.after())
    return min(rates)


# --- Message-oriented: EMO and LogGP -------------------------------------------


@dataclass(frozen=True)
class MessageWork:
    """Per one-way message (both ends together) in a ping-pong run."""

    host_cycles: float
    """Application-core cycles, sender and receiver together."""
    host_layers: dict[str, float]
    nic_cycles: float
    """Communication-processor cycles, sender and receiver together."""
    nic_layers: dict[str, float]
    host_hz: float
    nic_hz: float
    wire_s: float
    """Serialisation of one frame plus propagation."""
    latency_s: float
    """The run's NetPIPE latency (smallest block, one way)."""


def message_work(report: Report, propagation_s: float = 0.0) -> MessageWork:
    """Per-message work of a NetPIPE latency run (small blocks, one frame per
    message): each processor's cycles over the frames the hosts sent."""
    latency = report["summary"].get("latency_s")
    if latency is None:
        raise ExtractionError("the run has no NetPIPE latency")
    frames = 0.0
    host_layers: dict[str, float] = {}
    nic_layers: dict[str, float] = {}
    host_hz, nic_hz = math.nan, math.nan
    for h, entry in enumerate(report["hosts"]):
        t = entry.get("timing")
        if not t:
            continue
        frames += float(t["nic"]["tx_frames"])
        app_core, nic_core = stack_cores(report, h)
        for k, v in t["cores"][app_core]["cycles"].items():
            host_layers[k] = host_layers.get(k, 0.0) + v
        host_hz = clock_hz(report, h, app_core)
        if nic_core is not None:
            for k, v in t["cores"][nic_core]["cycles"].items():
                nic_layers[k] = nic_layers.get(k, 0.0) + v
            nic_hz = clock_hz(report, h, nic_core)
    if frames <= 0:
        raise ExtractionError("no timed host sent a frame")
    host_layers = {k: v / frames for k, v in host_layers.items()}
    nic_layers = {k: v / frames for k, v in nic_layers.items()}
    link = report["links"][0]
    wire = float(link["busy_ps"]) / 1e12 / max(1, int(link["frames"]))
    return MessageWork(
        host_cycles=sum(host_layers.values()),
        host_layers=host_layers,
        nic_cycles=sum(nic_layers.values()),
        nic_layers=nic_layers,
        host_hz=host_hz,
        nic_hz=nic_hz if not math.isnan(nic_hz) else host_hz,
        wire_s=wire + propagation_s,
        latency_s=float(latency),
    )


MOVE_LAYERS = ("syscall", "socket", "copy", "memory_stall")
"""Host layers that move data and control between host and application (EMO's O_HA)."""
INTERFACE_LAYERS = ("command", "interrupt")
"""Host layers that move control between NIC (or communication processor) and host (O_NH)."""


def emo_reference(work: MessageWork) -> Emo:
    """EMO of one one-way message from its per-message work; the latency
    no processor accounts for goes to L_NH (held constant by predictions)."""
    o_ha = sum(work.host_layers.get(k, 0.0) for k in MOVE_LAYERS)
    o_nh = sum(work.host_layers.get(k, 0.0) for k in INTERFACE_LAYERS)
    c_h = max(0.0, work.host_cycles - o_ha - o_nh)
    accounted = work.wire_s + work.nic_cycles / work.nic_hz + work.host_cycles / work.host_hz
    return Emo(
        C_N=work.nic_cycles,
        C_H=c_h,
        R_N=work.nic_hz,
        R_H=work.host_hz,
        O_NH=o_nh,
        O_HA=o_ha,
        L_W=work.wire_s,
        L_NH=max(0.0, work.latency_s - accounted),
        L_HA=o_ha / work.host_hz,
    )


def emo_at(ref: Emo, alpha_scale: float) -> Emo:
    """``ref`` with the communication processor ``alpha_scale`` times slower
    (its time per message scaled; everything else held)."""
    return Emo(
        C_N=ref.C_N * alpha_scale, C_H=ref.C_H, R_N=ref.R_N, R_H=ref.R_H, C_A=ref.C_A, O_NH=ref.O_NH,
        O_HA=ref.O_HA, L_W=ref.L_W, L_NH=ref.L_NH, L_HA=ref.L_HA,
    )  # fmt: skip


@dataclass(frozen=True)
class LogGPReference:
    """LogGP parameters and the per-byte stages they came from (s/B)."""

    model: LogGP
    wire_G: float
    copy_G: float
    bus_G: float

    @property
    def serial_G(self) -> float:
        """Per-byte cost if no stage overlapped: copy and DMA at both ends plus the wire."""
        return self.wire_G + 2 * self.copy_G + 2 * self.bus_G


ETHERNET_OVERHEAD = 38
"""Wire bytes of a frame beyond its IP packet: preamble and SFD 8, header 14, FCS 4, gap 12."""
TCP_IP_HEADERS = 52
"""IPv4 20 + TCP 20 + timestamps option 12 bytes per segment."""


def loggp_reference(
    latency_run: Report, curve_run: Report, propagation_s: float = 0.0, mtu: int = 9000
) -> LogGPReference:
    """LogGP from a latency run (o and L at the smallest block) and the
    per-byte stages of a NetPIPE curve run of the same setting (G). The
    wire's gap per payload byte is its time per wire byte (busy time over
    wire bytes) times the wire bytes of a full-sized TCP segment of ``mtu``
    per payload byte."""
    work = message_work(latency_run, propagation_s)
    o = work.host_cycles / 2 / work.host_hz
    L = max(0.0, work.latency_s - 2 * o)
    payload = float(curve_run["summary"].get("payload_bytes") or 0)
    if payload <= 0:
        raise ExtractionError("the NetPIPE run reports no payload bytes")
    # The copy runs on the application core, or on the communication
    # processor (at its own clock) when the profile moves it there.
    copy_s = sum(
        float(c["cycles"].get("copy", 0)) / (work.host_hz if i == 0 else work.nic_hz)
        for h in curve_run["hosts"] if h.get("timing")
        for i, c in enumerate(h["timing"]["cores"])
    )  # fmt: skip
    # Each byte is copied once by its sender and once by its receiver.
    copy_G = copy_s / (2 * payload)
    bus = [h["timing"]["bus"] for h in curve_run["hosts"] if h.get("timing")]
    bus_G = max(
        (sum(r["busy_ps"] for r in b["resources"]) / 1e12 / b["bytes"] for b in bus if b["bytes"] > 0), default=0.0
    )
    link = curve_run["links"][0]
    per_wire_byte = float(link["busy_ps"]) / 1e12 / max(1, int(link["wire_bytes"]))
    wire_G = per_wire_byte * (mtu + ETHERNET_OVERHEAD) / (mtu - TCP_IP_HEADERS)
    G = max(wire_G, copy_G, bus_G)
    return LogGPReference(LogGP(L=L, o=o, g=0.0, G=G), wire_G=wire_G, copy_G=copy_G, bus_G=bus_G)


# --- The profile's cost table ----------------------------------------------------

LAYER_COSTS = {
    "tcp": ("tcp_tx", "tcp_rx"),
    "udp": ("udp_tx", "udp_rx"),
    "ip": ("ip_tx", "ip_rx"),
    "ip_frag": ("ip_frag", "ip_defrag"),
    "device": ("device_tx", "device_rx"),
    "qdisc": ("qdisc",),
    "driver": ("driver_tx", "driver_rx", "driver_tx_clean", "driver_refill"),
    "interrupt": ("interrupt",),
    "command": ("offload.command_rx", "offload.completion"),
}
"""The cost entries whose cycles the simulator charges to each layer on a
communication processor (``crates/nicsim-core/src/sim/timed.rs``)."""


def load_profile(name: str) -> dict[str, Any] | None:
    """A built-in profile's table (the TOML compiled into the core), or None
    if there is no such profile."""
    text = _core.profile_text(name)
    return None if text is None else tomllib.loads(text)


def memory_share(profile: Mapping[str, Any], layer_cycles: Mapping[str, float]) -> float:
    """Share of a communication processor's cycles that are memory accesses
    at the reference (memory multiplier 1, clock ratio 1): per layer, the
    memory-access cycles of the cost entries charged to it over their total
    (entries weighted equally), weighted by the layer's measured cycles.
    Layers with no cost entry (interrupt entry and exit) count as no memory."""
    latency = float(profile.get("memory", {}).get("latency", 0))
    costs = dict(profile.get("costs", {}))
    for k, v in profile.get("offload", {}).items():
        if isinstance(v, Mapping):
            costs[f"offload.{k}"] = v
    total = sum(layer_cycles.values())
    if total <= 0:
        raise ExtractionError("no cycles on the communication processor")
    mem = 0.0
    for layer, cycles in layer_cycles.items():
        entries = [costs[e] for e in LAYER_COSTS.get(layer, ()) if e in costs]
        if not entries:
            continue
        m = sum(float(e.get("mem", 0)) * latency for e in entries)
        c = sum(float(e.get("cycles", 0)) for e in entries)
        mem += cycles * (m / (m + c) if m + c > 0 else 0.0)
    return mem / total
