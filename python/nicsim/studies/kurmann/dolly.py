"""Dolly's analytical resource model (Kurmann, Rauch, Stricker, Table 4).

Dolly streams a disk image down a multi-drop chain of TCP connections: the
first node (the *source*) reads the image and sends it; every node in
between (a *relay*) receives it, writes it to its disk and forwards it; the
last (the *sink*) receives and stores it. All nodes work at once, so the
chain runs at the rate of its slowest node, and a node at the rate of its
slowest resource:

    throughput = min over roles r in the chain of  min(W_r, M_r, P_r, D_r, C_r)

with, per byte of the image passing through a node of role r:

* wire      W = link rate / 8 x S / (w_data + a x w_ack)
  S payload bytes per TCP segment, w_data its wire bytes (Ethernet header,
  FCS, preamble and gap: 38 B per frame, IP 20 B per frame, TCP 32 B per
  segment with timestamps), one ACK frame (90 wire bytes) per 1/a segments
  in the same direction (a relay's links carry data one way and the ACKs of
  the other connection the same way). A full-duplex switched port carries
  each direction on its own, so one direction bounds the node.
* memory    M = B_mem / m,  m = the times each byte crosses the memory bus:
  one per DMA (NIC in, NIC out, disk) and two per CPU copy (read + write);
  B_mem the sustainable rate, twice the measured memcpy (a copy crosses
  the bus twice): 184 MB/s on the study's machine, not the PC100 peak.
* I/O bus   P = 1 / sum over crossings of 1 / R_op: R_write for a device
  writing host memory (NIC receive, disk read), R_read for a device reading
  it (NIC send, disk write). The rates come from nicsim's PCI burst model:
  width/8 x clock x burst cycles / (burst cycles + overhead [+ read
  latency]) (126 MB/s for the study's 32-bit/33 MHz PCI writes).
* disk      D = the disk's sustained rate, for a node that writes (or, as the
  source in the study's data flow, reads) the image.
* CPU       C = f / c, f the clock and c the cycles per byte:
  c = sum over copies of f / R_copy                       (memcpy rate, or
        the cached rate when the CPU just wrote the source and it fits in
        half the cache, as nicsim's timing model prices copies)
    + (rx_seg + a x tx_ack) / S   per segment received   (interrupt, driver,
        device, refill, IP, TCP; delayed ACK sent for every 1/a segments)
    + (tx_seg + a x rx_ack) / S   per segment sent       (TCP, IP, device,
        driver, TX clean; an ACK received for every 1/a segments)
    + per call / chunk            (system call, socket layer, wake-up)
  Every cost is the profile's cycles plus its memory accesses times the
  memory latency, as the simulator charges them.

The three variants of Table 4 differ in the link and in the copies:

* Fast Ethernet and Gigabit Ethernet (standard Linux 2.2 stack): 1448-byte
  segments in 1500-byte frames; the receive copy (socket buffer to user,
  cold: the NIC wrote it) and the send copy (user to socket buffer, hot).
* Zero-copy Gigabit Ethernet (speculative defragmentation plus page
  remapping or fbufs): no copy between NIC and user. A 4096-byte page is one
  TCP segment in three IP fragments; one receive interrupt and one IP/TCP
  pass per page, driver work per fragment (six descriptors per page on send).
  Remapping or fbuf costs are not in the profile and are left out.

Two data flows: ``disk_path=True`` is the study's node (Linux 2.2 ``write``
copies user data into the buffer cache, the disk controller then DMAs it
over PCI; the source reads the image from disk the same way back), the
flow the study's Table 4 reasons about. ``disk_path=False`` is the node
nicsim simulates, where the disk is only a rate (no copy, no DMA), so the
simulator can be checked against the model on equal terms.

Units: bytes per second in, bytes per second out (MB/s = 1e6 B/s in the
report); cycles per byte for CPU work.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nicsim.models.extract import load_profile

PROFILE = "kurmann-pii-400"
"""The study's machine (``crates/nicsim-core/profiles/kurmann-pii-400.toml``)."""

DISK_RATE = 30e6
"""Sustained disk write rate, B/s. Estimate for the study's era (1999-2000
IDE/SCSI disks sustained 20-35 MB/s); the same 30 MB/s as the simulated
chains (``dolly-*.toml``, ``scenarios/gbe-dolly.toml``). The study's own
disk rate is not in nicsim's copy of it."""

CHUNK = 64 * 1024
"""Bytes per read/write call, the scenarios' ``write_size`` (estimate)."""

ETHERNET_OVERHEAD = 38
"""Wire bytes per frame beyond the IP packet: preamble+SFD 8, header 14, FCS 4, gap 12."""
IP_HEADER = 20
TCP_HEADER = 32
"""TCP header with the timestamps option (smoltcp sends it), bytes."""
ACK_WIRE = 90
"""Wire bytes of a bare ACK: 14 + 20 + 32 + FCS 4 = 70 (above the 64-byte
minimum frame), plus preamble 8 and gap 12."""
ACK_RATIO = 0.5
"""ACKs per full segment: delayed ACK, one for every second segment (the
simulated chain shows 0.5: 23.6 k ACKs for 46.6 k segments)."""
PAGE = 4096
"""Zero-copy TCP segment: one page (the study)."""

# nicsim's PCI burst model defaults (crates/nicsim-core/src/bus/config.rs).
PCI_MAX_BURST = 512
"""Largest burst, bytes (bus model default)."""
PCI_OVERHEAD_CYCLES = 6
"""Bus cycles per burst beyond data (bus model default, calibrated to the study's 126 MB/s)."""
PCI_READ_LATENCY_S = 240e-9
"""Host memory read latency seen from PCI (bus model default, an estimate)."""

RESOURCES = ("wire", "memory", "pci", "disk", "cpu")
"""The per-node resources, in the order tables list them."""

_UNITS = {
    "Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9,
    "B/s": 1.0, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
    "KiB/s": 1024.0, "MiB/s": 1024.0**2, "GiB/s": 1024.0**3,
    "bps": 1 / 8, "kbps": 1e3 / 8, "Kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8,
    "B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3,
}


def quantity(text: str | float | int, what: str) -> float:
    """A unit-bearing profile or scenario value in base units (Hz, B/s for
    rates, bytes for sizes): ``"400MHz"`` -> 4e8, ``"1Gbps"`` -> 1.25e8."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]+)\s*", text)
    if not m or m.group(2) not in _UNITS:
        raise ValueError(f"{what}: cannot read {text!r} (a number and a unit such as MHz, MB/s, Mbps, KiB)")
    return float(m.group(1)) * _UNITS[m.group(2)]


@dataclass(frozen=True)
class Machine:
    """A node's numbers, read from a host profile."""

    name: str
    clock_hz: float
    memcpy: float
    """Copy rate of cold data, B/s (study: 92 MB/s)."""
    cached_copy: float
    """Copy rate when the source is in cache, B/s."""
    cache_bytes: float
    memory: float
    """Sustainable memory-system bandwidth, B/s: what the measured copy
    moves, each byte crossing the memory bus twice (2 x 92 MB/s = 184 MB/s
    on the study's 440BX; the study: "The limiting factor on current PCs is
    the memory system utilization"). The PC100 peak is :attr:`memory_peak`."""
    pci_write: float
    """I/O bus rate of a device writing host memory, B/s."""
    pci_read: float
    """I/O bus rate of a device reading host memory, B/s."""
    costs: Mapping[str, float] = field(repr=False)
    memory_peak: float = math.nan
    """Peak memory bus bandwidth, B/s (the profile's ``memory.bandwidth``:
    PC100, 64 bit x 100 MHz = 800 MB/s), for reference only."""
    """Cycles of each profile cost entry (cycles + mem x latency), plus
    ``interrupt_entry`` and ``interrupt_exit``."""

    @classmethod
    def from_profile(cls, name: str = PROFILE) -> Machine:
        """The machine of built-in profile ``name``."""
        prof = load_profile(name)
        if prof is None:
            raise ValueError(f"profile {name!r}: no such built-in profile")
        return cls.from_table(name, prof)

    @classmethod
    def from_table(cls, name: str, prof: Mapping[str, Any]) -> Machine:
        """The machine of a parsed profile table."""

        def get(section: str, key: str) -> Any:
            try:
                return prof[section][key]
            except KeyError:
                raise ValueError(f"profile {name!r}: {section}.{key} is missing") from None

        clock = quantity(get("cpu", "clock"), f"{name}: cpu.clock")
        latency = float(prof.get("memory", {}).get("latency", 0))
        costs = {
            k: float(v.get("cycles", 0)) + float(v.get("mem", 0)) * latency
            for k, v in prof.get("costs", {}).items()
            if isinstance(v, Mapping)
        }
        costs["interrupt_entry"] = float(prof.get("cpu", {}).get("interrupt_entry", 0))
        costs["interrupt_exit"] = float(prof.get("cpu", {}).get("interrupt_exit", 0))
        bus = prof.get("bus", {})
        if bus.get("kind", "pci") != "pci":
            raise ValueError(f"profile {name!r}: bus.kind {bus.get('kind')!r}: the Dolly model knows PCI only")
        width = float(bus.get("width_bits", 32))
        bus_clock = quantity(bus.get("clock", "33MHz"), f"{name}: bus.clock")
        burst_cycles = quantity(bus.get("max_burst", PCI_MAX_BURST), f"{name}: bus.max_burst") / (width / 8)
        overhead = float(bus.get("overhead_cycles", PCI_OVERHEAD_CYCLES))
        read_latency = float(bus.get("read_latency_cycles", math.ceil(PCI_READ_LATENCY_S * bus_clock - 1e-9)))
        peak = width / 8 * bus_clock
        return cls(
            name=name,
            clock_hz=clock,
            memcpy=quantity(get("memory", "copy_bandwidth"), f"{name}: memory.copy_bandwidth"),
            cached_copy=quantity(
                prof["memory"].get("cached_copy_bandwidth", prof["memory"]["copy_bandwidth"]),
                f"{name}: memory.cached_copy_bandwidth",
            ),
            cache_bytes=quantity(prof["memory"].get("cache_size", 0), f"{name}: memory.cache_size"),
            memory=2 * quantity(get("memory", "copy_bandwidth"), f"{name}: memory.copy_bandwidth"),
            memory_peak=quantity(get("memory", "bandwidth"), f"{name}: memory.bandwidth"),
            pci_write=peak * burst_cycles / (burst_cycles + overhead),
            pci_read=peak * burst_cycles / (burst_cycles + overhead + read_latency),
            costs=costs,
        )

    def cost(self, *names: str) -> float:
        """Cycles of the named cost entries together (absent entries cost 0)."""
        return sum(self.costs.get(n, 0.0) for n in names)


@dataclass(frozen=True)
class Variant:
    """One row of Table 4: a link and a stack."""

    key: str
    label: str
    link_rate: float
    """Link rate, B/s."""
    zero_copy: bool = False
    mtu: int = 1500

    @property
    def segment(self) -> int:
        """TCP payload bytes per segment."""
        return PAGE if self.zero_copy else self.mtu - IP_HEADER - TCP_HEADER

    @property
    def frames(self) -> int:
        """Ethernet frames per segment (IP fragments of 8-byte-aligned payload)."""
        per_fragment = (self.mtu - IP_HEADER) // 8 * 8
        return math.ceil((self.segment + TCP_HEADER) / per_fragment)

    @property
    def wire_bytes(self) -> int:
        """Wire bytes of one data segment with all its frames."""
        return self.segment + TCP_HEADER + self.frames * (IP_HEADER + ETHERNET_OVERHEAD)


FAST_ETHERNET = Variant("fe", "Fast Ethernet", 100e6 / 8)
GIGABIT = Variant("gbe", "Gigabit Ethernet", 1e9 / 8)
ZERO_COPY_GIGABIT = Variant("gbe-zc", "Zero-copy Gigabit Ethernet", 1e9 / 8, zero_copy=True)
VARIANTS = (FAST_ETHERNET, GIGABIT, ZERO_COPY_GIGABIT)
"""Table 4's rows."""


@dataclass(frozen=True)
class Copy:
    """One CPU copy of every byte."""

    what: str
    hot: bool
    """The CPU wrote the source just before (it is in cache)."""


@dataclass(frozen=True)
class Flow:
    """What one byte of the image does in a node."""

    role: str
    net_in: bool
    net_out: bool
    disk_write: bool
    disk_read: bool
    copies: tuple[Copy, ...]
    dma_writes: int
    """Device writes to host memory per byte (NIC receive, disk read)."""
    dma_reads: int
    """Device reads of host memory per byte (NIC send, disk write)."""

    @property
    def memory_crossings(self) -> int:
        """Times the byte crosses the memory bus: once per DMA, twice per copy."""
        return self.dma_writes + self.dma_reads + 2 * len(self.copies)

    @property
    def pci_crossings(self) -> int:
        return self.dma_writes + self.dma_reads


def flow(role: str, zero_copy: bool, disk_path: bool = True) -> Flow:
    """The data flow through a ``source``, ``relay`` or ``sink`` node."""
    if role not in ("source", "relay", "sink"):
        raise ValueError(f"role must be source, relay or sink, got {role!r}")
    net_in = role != "source"
    net_out = role != "sink"
    disk_write = role != "source"
    disk_read = role == "source" and disk_path
    copies: list[Copy] = []
    writes = reads = 0
    if disk_read:
        writes += 1  # disk controller DMA into the buffer cache
        copies.append(Copy("read() buffer cache to user", hot=False))
    if net_in:
        writes += 1  # NIC receive DMA
        if not zero_copy:
            copies.append(Copy("receive socket buffer to user", hot=False))
    if disk_write and disk_path:
        # the user buffer is hot after a receive copy; after a zero-copy
        # receive it holds what the NIC's DMA wrote (cold)
        copies.append(Copy("write() user to buffer cache", hot=net_in and not zero_copy))
        reads += 1  # disk controller DMA out of the buffer cache
    if net_out:
        reads += 1  # NIC send DMA
        if not zero_copy:
            copies.append(Copy("send user to socket buffer", hot=True))
    return Flow(role, net_in, net_out, disk_write, disk_read, tuple(copies), writes, reads)


@dataclass(frozen=True)
class NodeBounds:
    """A node's per-resource throughput bounds, B/s."""

    role: str
    bounds: Mapping[str, float]
    cpu_cycles_per_byte: float
    cpu_parts: Mapping[str, float]
    """Cycles per byte by part: copies, receive, send, calls."""
    memory_crossings: int
    pci_crossings: int

    @property
    def throughput(self) -> float:
        """The node's rate: its slowest resource's bound."""
        return min(self.bounds.values())

    @property
    def bottleneck(self) -> str:
        """The resource with the lowest bound (the first in RESOURCES order on ties)."""
        return min(RESOURCES, key=lambda r: (self.bounds[r], RESOURCES.index(r)))

    def cpu_load(self, rate: float, clock_hz: float) -> float:
        """CPU utilisation at ``rate`` B/s through the node."""
        return self.cpu_cycles_per_byte * rate / clock_hz


def node_bounds(
    machine: Machine,
    variant: Variant,
    role: str,
    disk_rate: float = DISK_RATE,
    *,
    disk_path: bool = True,
    chunk: int = CHUNK,
) -> NodeBounds:
    """Per-resource bounds of one node of the chain."""
    if disk_rate <= 0 or math.isnan(disk_rate):
        raise ValueError(f"disk_rate must be above zero, got {disk_rate!r}")
    f = flow(role, variant.zero_copy, disk_path)
    seg, frames = variant.segment, variant.frames
    m = machine

    # wire: the busiest direction of the node's port
    acks_same_way = ACK_RATIO if (f.net_in and f.net_out) else 0.0
    wire = variant.link_rate * seg / (variant.wire_bytes + acks_same_way * ACK_WIRE)

    memory = m.memory / f.memory_crossings
    pci_time = f.dma_writes / m.pci_write + f.dma_reads / m.pci_read
    pci = 1 / pci_time
    disk = disk_rate if (f.disk_write or f.disk_read) else math.inf

    interrupt = m.cost("interrupt", "interrupt_entry", "interrupt_exit")
    rx_frame = m.cost("driver_rx", "device_rx", "driver_refill")
    tx_frame = m.cost("driver_tx", "driver_tx_clean")
    # a bare ACK: one frame each way through the whole path
    ack_rx = interrupt + rx_frame + m.cost("ip_rx", "tcp_rx")
    ack_tx = tx_frame + m.cost("tcp_tx", "ip_tx", "device_tx")
    if variant.zero_copy:
        # speculative defragmentation: one interrupt and one IP/TCP pass per
        # page, driver and device work per fragment; driver fragmentation on send
        rx_seg = interrupt + frames * rx_frame + m.cost("ip_rx", "tcp_rx")
        tx_seg = m.cost("tcp_tx", "ip_tx", "device_tx") + frames * tx_frame
    else:
        rx_seg = frames * (interrupt + rx_frame) + m.cost("ip_rx", "tcp_rx")
        tx_seg = frames * tx_frame + m.cost("tcp_tx", "ip_tx", "device_tx")
    small = m.cache_bytes / 2
    copy = sum(
        m.clock_hz / (m.cached_copy if c.hot and chunk <= small else m.memcpy) for c in f.copies
    )
    receive = (rx_seg + ACK_RATIO * ack_tx) / seg if f.net_in else 0.0
    send = (tx_seg + ACK_RATIO * ack_rx) / seg if f.net_out else 0.0
    calls = 0.0
    if f.net_in:
        calls += m.cost("syscall", "socket_recv", "wakeup")
    if f.net_out:
        calls += m.cost("syscall", "socket_send")
    if f.disk_write and disk_path:
        calls += m.cost("syscall")
    if f.disk_read:
        calls += m.cost("syscall")
    calls /= chunk
    cycles = copy + receive + send + calls
    cpu = m.clock_hz / cycles
    return NodeBounds(
        role=role,
        bounds={"wire": wire, "memory": memory, "pci": pci, "disk": disk, "cpu": cpu},
        cpu_cycles_per_byte=cycles,
        cpu_parts={"copies": copy, "receive": receive, "send": send, "calls": calls},
        memory_crossings=f.memory_crossings,
        pci_crossings=f.pci_crossings,
    )


def roles(nodes: int) -> tuple[str, ...]:
    """The roles in a chain of ``nodes`` nodes (at least two)."""
    if nodes < 2:
        raise ValueError(f"a chain needs at least two nodes, got {nodes}")
    return ("source", "sink") if nodes == 2 else ("source", "relay", "sink")


@dataclass(frozen=True)
class ChainBounds:
    """A whole chain: every role's bounds and the rate of the slowest node."""

    variant: Variant
    nodes: Mapping[str, NodeBounds]

    @property
    def throughput(self) -> float:
        return min(n.throughput for n in self.nodes.values())

    @property
    def limiting_role(self) -> str:
        """The slowest node's role (a relay on ties: it does the most work)."""
        return min(self.nodes, key=lambda r: (self.nodes[r].throughput, r != "relay"))

    @property
    def bottleneck(self) -> str:
        """The limiting node's scarcest resource."""
        return self.nodes[self.limiting_role].bottleneck


def chain(
    machine: Machine,
    variant: Variant,
    disk_rate: float = DISK_RATE,
    nodes: int = 4,
    *,
    disk_path: bool = True,
    chunk: int = CHUNK,
) -> ChainBounds:
    """The Dolly chain's bounds for ``variant``."""
    return ChainBounds(
        variant,
        {r: node_bounds(machine, variant, r, disk_rate, disk_path=disk_path, chunk=chunk) for r in roles(nodes)},
    )
