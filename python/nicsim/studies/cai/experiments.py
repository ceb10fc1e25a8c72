"""The Cai study's runs, its published calibration numbers and its CPU
categories.

Seven configurations of one long TCP flow over ``flow.toml``: the MTU, TSO,
GRO and aRFS are switched on both hosts (the study's optimisations). Each is
one :class:`~nicsim.studies.framework.Run` of :data:`DURATION` of simulated
time. Only ``no_opts`` and ``all_opts`` have published numbers here
(:data:`PUBLISHED`, the calibration set); the five others are predictions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nicsim.studies.framework import Run

HERE = Path(__file__).parent
SCENARIO = HERE / "flow.toml"

DURATION = "200ms"
"""Measured simulated time of each flow: long enough for the socket buffers
(:func:`socket_buffers`) to fill many times over at the study's rates,
short enough for the seven runs to take seconds."""

WARMUP = "100ms"
"""Simulated time before the measured interval (``workload.bulk.omit``, as
iperf3's ``--omit``): the study measured long flows, so neither the flow's
start nor the cores' clocks settling from where they started (ten samples
of ``cpu.pstate``, which samples every 10 ms as Linux's ``intel_pstate``)
are in its numbers."""

PROFILE = "cai-xeon-6128"
"""The profile both hosts of ``flow.toml`` use."""

SENDER = "a"
RECEIVER = "b"
SIDES = {"sender": SENDER, "receiver": RECEIVER}
"""The study's sides and the hosts of ``flow.toml`` that play them."""


# The socket buffers. The study's iperf runs without -w (run_iperf in its
# run_experiment_sender.py and run_experiment_receiver.py), so Linux sizes
# both buffers itself, up to tcp_wmem[2] and tcp_rmem[2]; its --sock-size
# raises only net.core.wmem_max and rmem_max, which bound SO_SNDBUF and
# SO_RCVBUF, not autotuning. Both buffers reach their caps in a long flow:
# the send buffer is 2 x cwnd x per-MSS memory (tcp_sndbuf_expand) and the
# flow is window-limited, the receive buffer follows what the reader copies
# in an RTT that timestamps make at least 1 ms (tcp_rcv_space_adjust,
# tcp_rcv_rtt_measure_ts). Linux charges sk_buffs' truesize against them
# and nicsim's buffers hold payload, so each cap is scaled by the payload
# share of the sk_buffs that fill it.
TCP_WMEM_MAX = 4 * 2**20
"""tcp_wmem[2]: Linux 5.4 net/ipv4/tcp.c tcp_init, min(4 MiB, 1/128 of memory)."""
TCP_RMEM_MAX = 6 * 2**20
"""tcp_rmem[2]: the same, min(6 MiB, 1/128 of memory) (256 GB hosts)."""
MAX_TCP_HEADER = 320
"""L1_CACHE_ALIGN(128 + MAX_HEADER), MAX_HEADER 176 with LL_MAX_HEADER 128:
the header room of every TCP sk_buff."""
SEND_HEAD_TRUESIZE = 1280
"""An unsent sk_buff's own truesize: sk_stream_alloc_skb allocates
MAX_TCP_HEADER plus skb_shared_info (320), a kmalloc-1024 object, so
SKB_TRUESIZE(704) = 704 + 256 (struct sk_buff, cache-aligned) + 320. Each
copied byte adds one (skb_copy_to_page_nocache)."""
GSO_MAX_SIZE = 65536
"""A TSO sk_buff carries at most gso_max_size - 1 - MAX_TCP_HEADER bytes,
whole MSS (tcp_xmit_size_goal)."""
RX_HEAD_TRUESIZE = 640
"""What a non-linear mlx5 frame's head adds to the queue once GRO or the
receive queue steals it: napi_alloc_skb(256) is SKB_TRUESIZE(320) = 896
bytes, less the struct sk_buff (256) freed with the stolen head
(skb_gro_receive, skb_try_coalesce)."""
RX_STRIDE = 64
"""Stride of the non-linear striding RQ (MTU 9000; MLX5_MPWRQ_LOG_STRIDE_SZ
6): each frame's data is charged in whole strides."""
RX_MAX_HEAD = 256
"""MLX5E_RX_MAX_HEAD: the bytes mlx5 copies into a non-linear frame's head."""
HEADERS = 66
"""Ethernet, IPv4 and TCP headers with timestamps."""
PAGE_SIZE = 4096


# How far autotuning grows the buffers of many slow flows. tcp_rcv_space_adjust
# (Linux 5.4 net/ipv4/tcp_input.c) runs after each read: once a receiver RTT
# estimate has passed since its last measurement (with timestamps at least one
# 1 ms tick: tcp_rcv_rtt_measure_ts), if the reader copied more than in the
# interval before (rcvq_space.space, at first min(rcv_wnd, TCP_INIT_CWND x
# advmss): tcp_init_buffer_space), the buffer becomes (2 x copied + 16 x
# advmss) plus twice that times the copy's growth over the interval before,
# in segments of SKB_TRUESIZE(advmss + MAX_TCP_HEADER) bytes, at most
# tcp_rmem[2]; it never shrinks. A flow that copies several times the first
# space in its first millisecond reaches the cap at once (one flow, the
# incast, outcast and one-to-one flows, all-to-all with 8 cores a side); the
# 256 and 576 flows of all-to-all with 16 and 24 cores a side, each with its
# share of the link, stay far below it. The send buffer follows the
# congestion window (tcp_sndbuf_expand: twice the window's segments of
# per-MSS memory), which a flow limited by the receive window grows in slow
# start to twice the segments in flight (tcp_is_cwnd_limited).
TCP_RMEM_DEFAULT = 131072
"""tcp_rmem[1], a socket's first receive buffer (Linux 4.20 and later)."""
TCP_INIT_CWND = 10
"""TCP_INIT_CWND: the first window's segments (include/net/tcp.h)."""
SKB_OVERHEAD = 256 + 320
"""SKB_TRUESIZE(x) - x: struct sk_buff and skb_shared_info, cache-aligned."""
RCV_RTT_S = 1e-3
"""The receiver's RTT estimate with timestamps on a sub-millisecond path: one
tick of the 1 kHz TCP timestamp clock (TCP_TS_HZ), the least it takes."""
WIRE_OVERHEAD = 38
"""Ethernet bytes per frame besides the IP packet: header 14, FCS 4,
preamble 8, inter-frame gap 12."""


def autotuned_rcvbuf(mtu: int, copied: float) -> int:
    """The receive buffer (sk_buff memory) Linux 5.4's autotuning sets at
    its first adjustment for a flow whose reader copied ``copied`` bytes in
    the first receiver RTT estimate (module comment above); the later ones
    leave it there while the copy does not grow."""
    advmss = mtu - 40
    # The first window (tcp_select_initial_window): TCP_INIT_CWND segments,
    # fewer above 1460 bytes (14 600 bytes' worth, at least 2).
    space = (TCP_INIT_CWND if advmss <= 1460 else max(1460 * TCP_INIT_CWND // advmss, 2)) * advmss
    if copied <= space:
        return TCP_RMEM_DEFAULT
    rcvwin = 2 * int(copied) + 16 * advmss
    rcvwin += 2 * (rcvwin * (int(copied) - space) // space)
    rcvmem = advmss + MAX_TCP_HEADER + SKB_OVERHEAD
    while rcvmem - rcvmem // 2 < advmss:  # tcp_win_from_space, tcp_adv_win_scale 1
        rcvmem += 128
    return max(TCP_RMEM_DEFAULT, min(rcvwin // advmss * rcvmem, TCP_RMEM_MAX))


def autotuned_sndbuf(mtu: int, rcvbuf: int) -> int:
    """The send buffer (sk_buff memory) of a flow whose peer's receive
    buffer is ``rcvbuf``: twice the congestion window's segments of per-MSS
    memory (the MSS, MAX_TCP_HEADER and skb_shared_info rounded up to a power
    of two, plus struct sk_buff), the window grown to twice the segments the
    receive window (half the buffer) holds, at most tcp_wmem[2]."""
    mss = mtu - 40
    per_mss = (1 << (mss + MAX_TCP_HEADER + 320 - 1).bit_length()) + 256
    window = rcvbuf - rcvbuf // 2
    cwnd = max(TCP_INIT_CWND, 2 * -(-window // mss))
    return min(2 * cwnd * per_mss, TCP_WMEM_MAX)


def link_share_buffers(mtu: int, tso: bool, flows: int, rate_bps: float = 100e9) -> tuple[int, int]:
    """Payload bytes of the send and receive buffers of each of ``flows``
    flows that share a link of ``rate_bps`` equally: the buffers autotuning
    sets when each reader copies its share of the link's TCP payload rate
    in the first millisecond (:func:`autotuned_rcvbuf`,
    :func:`autotuned_sndbuf`), as payload (:func:`socket_buffers`)."""
    payload_bps = rate_bps * (mtu - 52) / (mtu + WIRE_OVERHEAD)
    rcvbuf = autotuned_rcvbuf(mtu, payload_bps / 8 / flows * RCV_RTT_S)
    return socket_buffers(mtu, tso, autotuned_sndbuf(mtu, rcvbuf), rcvbuf)


def _linear_stride(mtu: int) -> int:
    """mlx5's linear stride for ``mtu`` (mlx5e_rx_get_linear_frag_sz): the
    frame with its Ethernet header, VLAN tag and FCS (18 bytes) after
    NET_SKB_PAD (64) of headroom, cache-aligned, plus skb_shared_info
    (320), rounded up to a power of two. A frame is built over one such
    stride (mlx5e_skb_from_cqe_mpwrq_linear, build_skb) when it is at most a
    page (mlx5e_rx_mpwqe_is_linear_skb); the stride is what it adds to the
    queue once its head is stolen."""
    size = -(-(mtu + 18 + 64) // 64) * 64 + 320
    return 1 << (size - 1).bit_length()


def socket_buffers(mtu: int, tso: bool, wmem: int = TCP_WMEM_MAX, rmem: int = TCP_RMEM_MAX) -> tuple[int, int]:
    """Payload bytes of the sender's and the receiver's socket buffers at MTU
    ``mtu`` with TSO/GSO on or off: the buffers' sizes in sk_buff memory
    (``wmem`` and ``rmem``; Linux's autotuning caps unless given) times the
    payload share of the sk_buffs charged to them (module comment above)."""
    mss = mtu - 52  # IPv4 and TCP headers with timestamps
    per_skb = mss * ((GSO_MAX_SIZE - 1 - MAX_TCP_HEADER) // mss) if tso else mss
    tx = wmem * per_skb // (per_skb + SEND_HEAD_TRUESIZE)
    frame = _linear_stride(mtu)
    if frame > PAGE_SIZE:
        data = mss + HEADERS - RX_MAX_HEAD
        frame = RX_HEAD_TRUESIZE + -(-data // RX_STRIDE) * RX_STRIDE
    rx = rmem * mss // frame
    return tx, rx


@dataclass(frozen=True)
class Config:
    """One of the study's configurations: what is switched on, on both hosts."""

    id: str
    """The configuration's id in ``comparison.csv`` (``per_core_gbps.<id>``)."""
    label: str
    """A short name for tables and figures."""
    mtu: int
    """Link MTU in bytes."""
    tso: bool
    """TCP segmentation offload on both NICs."""
    lro: str
    """Receive coalescing (``nic.lro``): ``off`` or ``gro``."""
    arfs: bool
    """Accelerated receive flow steering on both NICs."""

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """The scenario overrides of this configuration (the framework's dotted paths)."""
        knobs: dict[str, Any] = {
            "links[0].mtu": f"{self.mtu}B",
            "workload.bulk.duration": duration,
            "workload.bulk.omit": WARMUP,
        }
        tx, rx = socket_buffers(self.mtu, self.tso)
        for i in range(len(SIDES)):
            knobs[f"hosts[{i}].tcp.tx_buffer"] = f"{tx}B"
            knobs[f"hosts[{i}].tcp.rx_buffer"] = f"{rx}B"
            knobs[f"hosts[{i}].nic.tso"] = self.tso
            knobs[f"hosts[{i}].nic.lro"] = self.lro
            knobs[f"hosts[{i}].nic.arfs"] = self.arfs
        return knobs

    def run(self, duration: str = DURATION) -> Run:
        """The configuration's run (its cache sweep is ``cai-<id>``; another
        ``duration`` makes another key, so a shorter test run never meets
        the study's in the cache)."""
        return _run(self.id, self.label, self.fixed(duration), duration)


def _run(id: str, label: str, knobs: dict[str, Any], duration: str) -> Run:
    """A run of ``flow.toml`` with ``knobs``, keyed by ``id`` (and by
    ``duration`` when it is not the study's)."""
    key = id if duration == DURATION else f"{id}-{duration}"
    return Run(key, SCENARIO, f"one TCP flow, {label}, {duration}", knobs)


CONFIGS: tuple[Config, ...] = (
    Config("no_opts", "no optimisations", 1500, tso=False, lro="off", arfs=False),
    Config("tso_gro", "TSO/GRO", 1500, tso=True, lro="gro", arfs=False),
    Config("jumbo", "jumbo frames", 9000, tso=False, lro="off", arfs=False),
    Config("tso_gro_jumbo", "TSO/GRO + jumbo", 9000, tso=True, lro="gro", arfs=False),
    Config("tso_gro_arfs", "TSO/GRO + aRFS", 1500, tso=True, lro="gro", arfs=True),
    Config("jumbo_arfs", "jumbo + aRFS", 9000, tso=False, lro="off", arfs=True),
    Config("all_opts", "all optimisations", 9000, tso=True, lro="gro", arfs=True),
)
"""The study's configurations, in its order (fewest optimisations first)."""

CONFIG = {c.id: c for c in CONFIGS}
RUNS: dict[str, Run] = {c.id: c.run() for c in CONFIGS}
"""Each configuration's run, by configuration id."""


class _Experiment:
    """A run of one of the study's further experiments: its ``id`` in
    ``comparison.csv``, its ``label`` and its overrides (``fixed``)."""

    @property
    def id(self) -> str:
        raise NotImplementedError

    @property
    def label(self) -> str:
        raise NotImplementedError

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        raise NotImplementedError

    def run(self, duration: str = DURATION) -> Run:
        """The run (its cache sweep is ``cai-<id>``, another for another ``duration``)."""
        return _run(self.id, self.label, self.fixed(duration), duration)


BUFFER_KIB = (100, 200, 400, 800, 1600, 3200, 6400, 12800)
"""The socket buffer sizes (KiB) of the study's buffer experiment, all
optimisations on (its ``scripts/receiver/tcp-buffer.sh`` and
``scripts/sender/tcp-buffer.sh``: ``--window`` of each). Its ``run_iperf``
gives iperf ``-w`` half of it on both hosts ("50.0K": iperf 2 reads K as
1 024 bytes), and Linux doubles what ``SO_SNDBUF`` and ``SO_RCVBUF`` ask
for and stops autotuning them (``sock_setsockopt``: ``val * 2``,
``SOCK_SNDBUF_LOCK``, ``SOCK_RCVBUF_LOCK``); ``--sock-size`` raised
``net.core.wmem_max`` and ``rmem_max`` to 12 MiB, above every half asked."""


TURBO = "3.7GHz"
"""The Xeon Gold 6128's highest clock (Intel ARK; the profile's
``cpu.pstate.turbo``), where intel_pstate's performance policy holds every
core."""


@dataclass(frozen=True)
class BufferSize(_Experiment):
    """One run of the buffer experiment: all optimisations, both socket
    buffers fixed at ``kib`` KiB of sk_buff memory."""

    kib: int
    fixed_clock: bool = False
    """Every core of both hosts at :data:`TURBO` (intel_pstate's performance
    policy) instead of the clock the powersave policy picks from each core's
    load, which the profile assumes: how much of a run's result the clock
    governor makes. Not one of the study's runs."""

    @property
    def id(self) -> str:
        """The run's id (``throughput_gbps.<id>`` in ``comparison.csv`` for
        the study's runs; the fixed-clock runs are only in ``buffers.csv``)."""
        return f"buffer_{self.kib}k" + ("_fixed_clock" if self.fixed_clock else "")

    @property
    def label(self) -> str:
        clock = f", every core at {TURBO}" if self.fixed_clock else ""
        return f"all optimisations, {self.kib} KiB socket buffers{clock}"

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """all_opts' overrides with both hosts' buffers at this size (as payload)."""
        base = CONFIG["all_opts"]
        knobs = base.fixed(duration)
        tx, rx = socket_buffers(base.mtu, base.tso, self.kib * 1024, self.kib * 1024)
        for i in range(len(SIDES)):
            knobs[f"hosts[{i}].tcp.tx_buffer"] = f"{tx}B"
            knobs[f"hosts[{i}].tcp.rx_buffer"] = f"{rx}B"
            if self.fixed_clock:
                knobs[f"hosts[{i}].cpu.pstate"] = {"min": TURBO, "turbo": TURBO}
        return knobs


BUFFERS: tuple[BufferSize, ...] = tuple(BufferSize(k) for k in BUFFER_KIB)
"""The buffer experiment's runs, smallest first. Every result is held out
(predictions)."""

BUFFERS_FIXED_CLOCK: tuple[BufferSize, ...] = tuple(BufferSize(k, fixed_clock=True) for k in BUFFER_KIB)
"""The same runs with every core at :data:`TURBO`: the clock governor's
share in the buffer experiment's predictions (reported beside them, not
compared)."""


NO_DDIO_BREAKDOWN = ("no_opts", "tso_gro", "tso_gro_jumbo", "all_opts")
"""The configurations of the DDIO experiment whose CPU breakdown the study
records (``--util-breakdown`` in its ``single-flow-no-ddio.sh``)."""


@dataclass(frozen=True)
class NoDdio(_Experiment):
    """One run of the study's DDIO experiment (``single-flow-no-ddio.sh`` in
    its artifact): configuration ``config`` with the application, and with
    aRFS the flow's interrupts, on a socket other than the NIC's. DDIO
    places a NIC's writes only in the L3 of the NIC's own socket (Intel's
    VTune cookbook, "IO Issues: Remote Socket Accesses": DDIO helps "only
    for the local socket configuration"), so none of the flow's received
    data arrives in a cache its cores share: nicsim runs the
    configuration with ``memory.ddio`` at zero on both hosts. The study
    moves the application from CPU 0 to CPU 1 (``--cpus 1``) and, without
    aRFS, the interrupts from CPU 1 to CPU 2 (``--affinity 2``)."""

    config: str

    @property
    def id(self) -> str:
        """The run's id in ``comparison.csv`` (``throughput_gbps.<id>``)."""
        return f"no_ddio_{self.config}"

    @property
    def label(self) -> str:
        return f"{CONFIG[self.config].label}, DDIO off"

    @property
    def breakdown(self) -> bool:
        """Whether the study records this run's CPU breakdown."""
        return self.config in NO_DDIO_BREAKDOWN

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """The configuration's overrides with DDIO off on both hosts."""
        knobs = CONFIG[self.config].fixed(duration)
        for i in range(len(SIDES)):
            knobs[f"hosts[{i}].memory.ddio"] = "0B"
        return knobs


NO_DDIO: tuple[NoDdio, ...] = tuple(NoDdio(c.id) for c in CONFIGS)
"""The DDIO experiment's runs, in the study's order. Every result is held
out (predictions)."""


INCAST_CONFIGS = ("no_opts", "tso_gro", "tso_gro_jumbo", "all_opts")
"""The configurations of the study's incast experiment, in its order
(``incast.sh`` in its artifact's ``scripts/receiver`` and ``scripts/sender``)."""
INCAST_FLOWS = (8, 16, 24)
"""Its numbers of flows (``--num-connections``)."""
INCAST_BREAKDOWN = ("all_opts",)
"""The incast configurations whose CPU breakdown the study records (``--util-breakdown``)."""
INCAST_CACHE_MISS = ("all_opts",)
"""The incast configurations whose receiver L3 miss rate the study records (``--cache-miss``)."""


@dataclass(frozen=True)
class Incast(_Experiment):
    """One run of the study's incast experiment: ``flows`` long flows into
    one receiver core, configuration ``config``. The study's receiver runs
    every flow's iperf server on CPU 0 and steers all of their frames to CPU
    1's queue, or with aRFS to CPU 0 (``run_flows``, ``--config incast``), as
    nicsim's receiver runs all flows on ``cpu.app_core``. Its sender runs
    each flow's iperf client on a core of its own (CPUs 0 to ``flows`` - 1);
    nicsim's sender runs them all on its one application core, round robin
    (``workload.bulk.flows``), so only the receiver's numbers are compared."""

    config: str
    flows: int

    @property
    def id(self) -> str:
        """The run's id in ``comparison.csv`` (``throughput_gbps.<id>``)."""
        return f"incast_{self.flows}_{self.config}"

    @property
    def label(self) -> str:
        return f"{CONFIG[self.config].label}, {self.flows} flows into one core"

    @property
    def breakdown(self) -> bool:
        """Whether the study records this run's CPU breakdown."""
        return self.config in INCAST_BREAKDOWN

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """The configuration's overrides with ``flows`` flows."""
        knobs = CONFIG[self.config].fixed(duration)
        knobs["workload.bulk.flows"] = self.flows
        return knobs


INCAST: tuple[Incast, ...] = tuple(Incast(c, n) for c in INCAST_CONFIGS for n in INCAST_FLOWS)
"""The incast experiment's runs, in the study's order. Every result is held
out (predictions)."""


RPC_SCENARIO = HERE / "rpc.toml"
"""The RPC experiment's scenario: 16 client hosts and the receiver ``b`` on a switch."""
RPC_CONFIGS = ("no_opts", "tso_gro", "tso_gro_jumbo", "all_opts")
"""The configurations of the study's RPC experiment, in its order
(``short-incast.sh`` in its artifact's ``scripts/receiver`` and ``scripts/sender``)."""
RPC_SIZES = (4000, 16000, 32000, 64000)
"""Its request and response sizes in bytes (netperf ``TCP_RR -r size,size``)."""
RPC_CONNECTIONS = 16
"""Its connections (``--num-connections 16``): one netperf client per sender core."""
RPC_BREAKDOWN = ("all_opts",)
"""The RPC configurations whose receiver CPU breakdown the study records (``--util-breakdown``)."""
RPC_HOSTS = RPC_CONNECTIONS + 1
"""Hosts (and links) of ``rpc.toml``: the receiver ``b`` first, then the clients."""


@dataclass(frozen=True)
class Rpc(_Experiment):
    """One run of the study's RPC experiment (``short-incast.sh``): 16
    netperf ``TCP_RR`` connections of ``size``-byte requests and responses
    into one receiver core, configuration ``config``. The study's sender
    runs each client on a core of its own (CPUs 0 to 15), its receiver
    every netserver child on CPU 0, with the frames steered to CPU 1's
    queue or, with aRFS, to CPU 0. nicsim's hosts have one application core
    each, so ``rpc.toml`` has 16 client hosts on a switch; the receiver
    serves every connection as one program (``workload.dsm``), as nicsim's
    incast receiver does. Only the receiver's numbers are compared.

    Throughput is the study's: netperf reports the bytes of both directions
    and the study halves it (``process_throughput_output``), so it is the
    transactions per second times ``size``."""

    config: str
    size: int
    fixed_clock: bool = False
    """Every core of every host at :data:`TURBO` (intel_pstate's
    performance policy) instead of the powersave policy the profile
    assumes; not one of the study's runs (as :attr:`BufferSize.fixed_clock`)."""

    @property
    def id(self) -> str:
        """The run's id (``throughput_gbps.<id>`` in ``comparison.csv`` for
        the study's runs; the fixed-clock runs are only in ``rpc.csv``)."""
        return f"rpc_{self.size}_{self.config}" + ("_fixed_clock" if self.fixed_clock else "")

    @property
    def label(self) -> str:
        clock = f", every core at {TURBO}" if self.fixed_clock else ""
        return f"{CONFIG[self.config].label}, 16 RPC connections of {self.size} B into one core{clock}"

    @property
    def breakdown(self) -> bool:
        """Whether the study records this run's CPU breakdown."""
        return self.config in RPC_BREAKDOWN

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """The configuration on every host and link, the message size and the duration."""
        c = CONFIG[self.config]
        knobs: dict[str, Any] = {
            "workload.dsm.request": f"{self.size}B",
            "workload.dsm.page_size": f"{self.size}B",
            "workload.dsm.duration": duration,
            "workload.dsm.omit": WARMUP,
        }
        for i in range(RPC_HOSTS):
            knobs[f"links[{i}].mtu"] = f"{c.mtu}B"
            knobs[f"hosts[{i}].nic.tso"] = c.tso
            knobs[f"hosts[{i}].nic.lro"] = c.lro
            knobs[f"hosts[{i}].nic.arfs"] = c.arfs
            if self.fixed_clock:
                knobs[f"hosts[{i}].cpu.pstate"] = {"min": TURBO, "turbo": TURBO}
        return knobs

    def run(self, duration: str = DURATION) -> Run:
        """The run of ``rpc.toml`` (its cache sweep is ``cai-<id>``)."""
        key = self.id if duration == DURATION else f"{self.id}-{duration}"
        return Run(key, RPC_SCENARIO, f"{self.label}, {duration}", self.fixed(duration))


RPCS: tuple[Rpc, ...] = tuple(Rpc(c, n) for c in RPC_CONFIGS for n in RPC_SIZES)
"""The RPC experiment's runs, in the study's order. Every result is held
out (predictions)."""

RPCS_FIXED_CLOCK: tuple[Rpc, ...] = tuple(Rpc(c, n, fixed_clock=True) for c in RPC_CONFIGS for n in RPC_SIZES)
"""The same runs with every core at :data:`TURBO`: the clock governor's
share in the RPC predictions (reported beside them, not compared)."""


MIXED_CONFIGS = RPC_CONFIGS
"""The configurations of the study's mixed experiment, in its order (``mixed.sh``)."""
MIXED_RPCS = (1, 4, 16)
"""Its numbers of RPC connections beside the long flow (``--num-rpcs``)."""
MIXED_RPC_SIZE = 4000
"""Their request and response size: ``run_experiment_sender.py``'s default ``--rpc-size``,
which ``mixed.sh`` does not set."""
MIXED_BREAKDOWN = ("all_opts",)
"""The mixed configurations whose receiver CPU breakdown the study records (``--util-breakdown``)."""


@dataclass(frozen=True)
class Mixed(_Experiment):
    """One run of the study's mixed experiment (``mixed.sh``): one long
    iperf flow and ``rpcs`` netperf ``TCP_RR`` connections of
    :data:`MIXED_RPC_SIZE` bytes beside it, configuration ``config``. Its
    sender runs the iperf client and every netperf client on CPU 0
    (``run_flows`` with ``--flow-type mixed``), its receiver the iperf
    server and the netserver on CPU 0: one application core each, as
    nicsim's hosts run them (``workload.bulk.rpc``). Throughput is the
    flow's and the connections' together (the study adds iperf's and
    netperf's halved); only the receiver's numbers are compared, as in the
    other multi-connection experiments."""

    config: str
    rpcs: int

    @property
    def id(self) -> str:
        """The run's id in ``comparison.csv`` (``throughput_gbps.<id>``)."""
        return f"mixed_{self.rpcs}_{self.config}"

    @property
    def label(self) -> str:
        connections = "connection" if self.rpcs == 1 else "connections"
        return f"{CONFIG[self.config].label}, one flow and {self.rpcs} RPC {connections} on one core"

    @property
    def breakdown(self) -> bool:
        """Whether the study records this run's CPU breakdown."""
        return self.config in MIXED_BREAKDOWN

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """The configuration's overrides with the connections beside the flow."""
        knobs = CONFIG[self.config].fixed(duration)
        knobs["workload.bulk.rpc.connections"] = self.rpcs
        knobs["workload.bulk.rpc.request"] = f"{MIXED_RPC_SIZE}B"
        knobs["workload.bulk.rpc.response"] = f"{MIXED_RPC_SIZE}B"
        return knobs


MIXED: tuple[Mixed, ...] = tuple(Mixed(c, n) for c in MIXED_CONFIGS for n in MIXED_RPCS)
"""The mixed experiment's runs, in the study's order. Every result is held
out (predictions)."""


OUTCAST_SCENARIO = HERE / "outcast.toml"
"""The outcast experiment's scenario: the sender ``a`` and receivers ``b0`` to ``b7`` on a switch."""
OUTCAST_CONFIGS = ("no_opts", "tso_gro", "tso_gro_jumbo", "all_opts")
"""The configurations of the study's outcast experiment, in its order
(``outcast.sh`` in its artifact's ``scripts/receiver`` and ``scripts/sender``)."""
OUTCAST_FLOWS = (2, 4, 8)
"""Its numbers of flows (``--num-connections``)."""
OUTCAST_BREAKDOWN = ("all_opts",)
"""The outcast configurations whose CPU breakdown the study records (``--util-breakdown``)."""
OUTCAST_HOSTS = 1 + max(OUTCAST_FLOWS)
"""Hosts (and links) of ``outcast.toml``: the sender ``a`` first, then the receivers."""


def outcast_receivers(flows: int) -> tuple[str, ...]:
    """The receiver hosts of an outcast run with ``flows`` flows."""
    return tuple(f"b{i}" for i in range(flows))


@dataclass(frozen=True)
class Outcast(_Experiment):
    """One run of the study's outcast experiment (``outcast.sh``): ``flows``
    long iperf flows from one sender core, each to a receiver core of its
    own, configuration ``config``. The study's sender runs every iperf
    client on CPU 0 with the flows' interrupts on CPU 1 (or, with aRFS, on
    CPU 0), as nicsim's sender runs every flow on ``cpu.app_core`` with its
    softirq work on ``cpu.irq_core``; its receiver runs each server on CPU
    ``n``. nicsim's hosts have one application core each, so ``outcast.toml``
    has one receiver host per flow on a switch, all on one machine (its
    PCIe link and its L3's DDIO ways shared). Here the sender is the
    bottleneck and the study divides the throughput by the sender's CPU
    (``run_experiment_sender.py``: ``total_throughput * 100 / cpu_util``
    for ``--config outcast``); the receivers' CPU and breakdown are the
    sums over the receiver hosts."""

    config: str
    flows: int

    @property
    def id(self) -> str:
        """The run's id in ``comparison.csv`` (``throughput_gbps.<id>``)."""
        return f"outcast_{self.flows}_{self.config}"

    @property
    def label(self) -> str:
        return f"{CONFIG[self.config].label}, {self.flows} flows from one core"

    @property
    def breakdown(self) -> bool:
        """Whether the study records this run's CPU breakdown."""
        return self.config in OUTCAST_BREAKDOWN

    @property
    def receivers(self) -> tuple[str, ...]:
        return outcast_receivers(self.flows)

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """The configuration on every host and link, and one flow per receiver."""
        knobs = every_host(self.config, OUTCAST_HOSTS, OUTCAST_HOSTS)
        knobs["workload.transfers"] = flows(["a"] * self.flows, self.receivers, duration)
        return knobs

    def run(self, duration: str = DURATION) -> Run:
        """The run of ``outcast.toml`` (its cache sweep is ``cai-<id>``)."""
        key = self.id if duration == DURATION else f"{self.id}-{duration}"
        return Run(key, OUTCAST_SCENARIO, f"{self.label}, {duration}", self.fixed(duration))


FLOW_PORT = 5001
"""The first flow's port (the artifact's ``BASE_PORT``; flow ``n`` uses ``BASE_PORT + n``)."""
FLOW_WRITE = "128KiB"
"""iperf's default read and write size for TCP, as ``flow.toml`` has it."""


def every_host(config: str, hosts: int, links: int, buffers: tuple[int, int] | None = None) -> dict[str, Any]:
    """Configuration ``config`` on hosts 0 to ``hosts`` - 1 (TSO, GRO, aRFS,
    the socket buffers Linux autotunes, or ``buffers``: send and receive
    payload bytes) and the MTU of links 0 to ``links`` - 1."""
    c = CONFIG[config]
    tx, rx = buffers or socket_buffers(c.mtu, c.tso)
    knobs: dict[str, Any] = {f"links[{i}].mtu": f"{c.mtu}B" for i in range(links)}
    for i in range(hosts):
        knobs[f"hosts[{i}].tcp.tx_buffer"] = f"{tx}B"
        knobs[f"hosts[{i}].tcp.rx_buffer"] = f"{rx}B"
        knobs[f"hosts[{i}].nic.tso"] = c.tso
        knobs[f"hosts[{i}].nic.lro"] = c.lro
        knobs[f"hosts[{i}].nic.arfs"] = c.arfs
    return knobs


def flows(senders: list[str], receivers: tuple[str, ...], duration: str) -> list[dict[str, Any]]:
    """One iperf flow from each of ``senders`` to the receiver at the same
    place, on ports ``FLOW_PORT`` + n, for ``duration`` after the warm-up."""
    if len(senders) != len(receivers):
        raise ValueError(f"{len(senders)} senders for {len(receivers)} receivers")
    return [{"from": a, "to": b, "port": FLOW_PORT + n, "duration": duration, "omit": WARMUP, "write_size": FLOW_WRITE}
            for n, (a, b) in enumerate(zip(senders, receivers))]

OUTCAST: tuple[Outcast, ...] = tuple(Outcast(c, n) for c in OUTCAST_CONFIGS for n in OUTCAST_FLOWS)
"""The outcast experiment's runs, in the study's order. Every result is held
out (predictions)."""


ONE_TO_ONE_SCENARIO = HERE / "one_to_one.toml"
"""The one-to-one experiment's scenario: senders ``a0`` to ``a23`` on switch
``sa``, receivers ``b0`` to ``b23`` on switch ``sb``, one link between them."""
ONE_TO_ONE_CONFIGS = ("no_opts", "tso_gro", "tso_gro_jumbo", "all_opts")
"""The configurations of the study's one-to-one experiment, in its order
(``one-to-one.sh`` in its artifact's ``scripts/receiver`` and ``scripts/sender``)."""
ONE_TO_ONE_FLOWS = (8, 16, 24)
"""Its numbers of flows (``--num-connections``)."""
ONE_TO_ONE_BREAKDOWN = ("all_opts",)
"""The one-to-one configurations whose CPU breakdown the study records (``--util-breakdown``)."""
ONE_TO_ONE_PAIRS = max(ONE_TO_ONE_FLOWS)
"""Sender and receiver hosts of ``one_to_one.toml`` (each): hosts ``a0``.. first, then ``b0``.."""


@dataclass(frozen=True)
class OneToOne(_Experiment):
    """One run of the study's one-to-one experiment (``one-to-one.sh``):
    ``flows`` long iperf flows, flow ``i`` from sender core ``i`` to
    receiver core ``i``, configuration ``config``. The study divides the
    throughput by the receiver's CPU (all its cores). nicsim's hosts have
    one application core each, so ``one_to_one.toml`` gives each flow a
    sender host and a receiver host, the flows sharing one 100 Gb/s link
    between two switches as the study's share its cable; each side's CPU
    and breakdown are the sums over its hosts. Each side's hosts are one
    machine (``machine`` in the scenario), as the study's cores are one
    server's: they share its PCIe link and its L3's DDIO ways, each with its
    own NIC queue pair; its memory bandwidth they do not share here, and
    the study's placement of each flow's interrupts on the next flow's core
    (``--affinity`` is each CPU + 1) they cannot."""

    config: str
    flows: int

    @property
    def id(self) -> str:
        """The run's id in ``comparison.csv`` (``throughput_gbps.<id>``)."""
        return f"one_to_one_{self.flows}_{self.config}"

    @property
    def label(self) -> str:
        return f"{CONFIG[self.config].label}, {self.flows} flows, each core to a core"

    @property
    def breakdown(self) -> bool:
        """Whether the study records this run's CPU breakdown."""
        return self.config in ONE_TO_ONE_BREAKDOWN

    @property
    def senders(self) -> tuple[str, ...]:
        return tuple(f"a{i}" for i in range(self.flows))

    @property
    def receivers(self) -> tuple[str, ...]:
        return tuple(f"b{i}" for i in range(self.flows))

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """The configuration on every host and link, and one flow per pair."""
        knobs = every_host(self.config, 2 * ONE_TO_ONE_PAIRS, 1 + 2 * ONE_TO_ONE_PAIRS)
        knobs["workload.transfers"] = flows(list(self.senders), self.receivers, duration)
        return knobs

    def run(self, duration: str = DURATION) -> Run:
        """The run of ``one_to_one.toml`` (its cache sweep is ``cai-<id>``)."""
        key = self.id if duration == DURATION else f"{self.id}-{duration}"
        return Run(key, ONE_TO_ONE_SCENARIO, f"{self.label}, {duration}", self.fixed(duration))


ONE_TO_ONE: tuple[OneToOne, ...] = tuple(OneToOne(c, n) for c in ONE_TO_ONE_CONFIGS for n in ONE_TO_ONE_FLOWS)
"""The one-to-one experiment's runs, in the study's order. Every result is
held out (predictions)."""


ALL_TO_ALL_CONFIGS = ONE_TO_ONE_CONFIGS
"""The configurations of the study's all-to-all experiment, in its order (``all-to-all.sh``)."""
ALL_TO_ALL_CORES = (8, 16, 24)
"""Its cores a side (``--num-connections``): every sender core sends a flow
to every receiver core, so 64, 256 and 576 flows. Each flow's buffers are
those Linux's autotuning gives a flow with its share of the link
(:func:`link_share_buffers`): the caps with 8 cores a side, less with 16
and 24 (0.89 and 0.17 MB of receive buffer without TSO at MTU 1 500, 2.0
and 0.49 MB with all optimisations), which also keeps the runs' memory
within a gigabyte or two (with every buffer at its cap, 16 and 24 cores
took 3.0 and 5.9 GB, session 37 and 38)."""
ALL_TO_ALL_BREAKDOWN = ("all_opts",)
"""The all-to-all configurations whose CPU breakdown the study records (``--util-breakdown``)."""
ALL_TO_ALL_PORT_STRIDE = 24
"""The ports of sender ``i``'s flows start at ``FLOW_PORT + i`` times this (the
artifact's ``BASE_PORT + i * MAX_CONNECTIONS + j``, ``MAX_CONNECTIONS`` 24)."""


@dataclass(frozen=True)
class AllToAll(_Experiment):
    """One run of the study's all-to-all experiment (``all-to-all.sh``):
    ``cores`` sender cores each send a long iperf flow to each of ``cores``
    receiver cores, configuration ``config``, the throughput divided by the
    receiver's CPU. It runs on ``one_to_one.toml``: sender hosts ``a0``..
    and receiver hosts ``b0``.. stand for the cores, every sender runs its
    flows as one program on its application core and every receiver its
    flows likewise, all through the one shared link, each side one machine
    (:class:`OneToOne`). The study spreads the interrupts
    over every CPU without aRFS (``--affinity`` 0 to 23), which nicsim's
    hosts, each with its own interrupt core, cannot."""

    config: str
    cores: int

    @property
    def id(self) -> str:
        """The run's id in ``comparison.csv`` (``throughput_gbps.<id>``)."""
        return f"all_to_all_{self.cores}_{self.config}"

    @property
    def label(self) -> str:
        return f"{CONFIG[self.config].label}, {self.cores} cores to {self.cores} cores, {self.cores ** 2} flows"

    @property
    def breakdown(self) -> bool:
        """Whether the study records this run's CPU breakdown."""
        return self.config in ALL_TO_ALL_BREAKDOWN

    @property
    def senders(self) -> tuple[str, ...]:
        return tuple(f"a{i}" for i in range(self.cores))

    @property
    def receivers(self) -> tuple[str, ...]:
        return tuple(f"b{i}" for i in range(self.cores))

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """The configuration on every host and link with the buffers autotuning
        gives each flow (:func:`link_share_buffers`), and a flow from every
        sender to every receiver."""
        c = CONFIG[self.config]
        buffers = link_share_buffers(c.mtu, c.tso, self.cores**2)
        knobs = every_host(self.config, 2 * ONE_TO_ONE_PAIRS, 1 + 2 * ONE_TO_ONE_PAIRS, buffers)
        knobs["workload.transfers"] = [
            {"from": a, "to": b, "port": FLOW_PORT + i * ALL_TO_ALL_PORT_STRIDE + j, "duration": duration,
             "omit": WARMUP, "write_size": FLOW_WRITE}
            for i, a in enumerate(self.senders) for j, b in enumerate(self.receivers)
        ]
        return knobs

    def run(self, duration: str = DURATION) -> Run:
        """The run of ``one_to_one.toml`` (its cache sweep is ``cai-<id>``)."""
        key = self.id if duration == DURATION else f"{self.id}-{duration}"
        return Run(key, ONE_TO_ONE_SCENARIO, f"{self.label}, {duration}", self.fixed(duration))


ALL_TO_ALL: tuple[AllToAll, ...] = tuple(AllToAll(c, n) for c in ALL_TO_ALL_CONFIGS for n in ALL_TO_ALL_CORES)
"""The all-to-all experiment's runs nicsim makes, in the study's order. Every
result is held out (predictions)."""


NUMA_FLOWS = ("long", "short")
"""The study's NUMA experiment's flows (``numa.sh``): one long iperf flow, or
16 netperf ``TCP_RR`` connections of the default ``--rpc-size`` into one
core (``--config incast --flow-type short``)."""
NUMA_PLACES = ("local", "remote")
"""Where its receiver runs the application: on CPU 0, the NIC's socket, or
on CPU 1 (``--cpus 1``), another socket."""
NUMA_RPC_SIZE = 4000
"""The short flows' request and response size: ``run_experiment_sender.py``'s
default ``--rpc-size``, which ``numa.sh`` does not set."""


@dataclass(frozen=True)
class Numa(_Experiment):
    """One run of the study's NUMA experiment (``numa.sh``), all
    optimisations: ``flow`` (``long`` or ``short``) with the receiver's
    application on the NIC's socket (``local``) or another (``remote``).
    Three of its four runs are runs of other experiments: the long flow
    local is ``all_opts``; remote, both hosts run iperf on CPU 1 and with
    aRFS its interrupts too, which is the DDIO experiment's ``all_opts``
    (:class:`NoDdio`); the short flows local are the RPC experiment's
    4 000-byte ``all_opts``. The fourth moves only the receiver's netserver
    to CPU 1 (the sender's clients keep their CPUs), so nicsim runs the RPC
    scenario with DDIO off on the receiver ``b`` alone. The study also
    measures the receiver's L3 miss rate, which nicsim does not report."""

    flow: str
    place: str

    @property
    def id(self) -> str:
        """The run's id in ``comparison.csv`` (``per_core_gbps.<id>``)."""
        return f"numa_{self.flow}_{self.place}"

    @property
    def label(self) -> str:
        what = "one long flow" if self.flow == "long" else f"16 RPC connections of {NUMA_RPC_SIZE} B"
        return f"all optimisations, {what}, the receiver's application on the {self.place} socket"

    @property
    def breakdown(self) -> bool:
        return False

    def fixed(self, duration: str = DURATION) -> dict[str, Any]:
        """The overrides of its run."""
        return dict(self.run(duration).fixed)

    def run(self, duration: str = DURATION) -> Run:
        """The run: another experiment's, or for the short flows remote, the
        RPC run with DDIO off on the receiver (its cache sweep ``cai-<id>``)."""
        if self.flow == "long":
            return CONFIG["all_opts"].run(duration) if self.place == "local" else NoDdio("all_opts").run(duration)
        rpc = Rpc("all_opts", NUMA_RPC_SIZE)
        if self.place == "local":
            return rpc.run(duration)
        knobs = {**rpc.fixed(duration), "hosts[0].memory.ddio": "0B"}
        key = self.id if duration == DURATION else f"{self.id}-{duration}"
        return Run(key, RPC_SCENARIO, f"{self.label}, {duration}", knobs)


NUMA: tuple[Numa, ...] = tuple(Numa(f, p) for f in NUMA_FLOWS for p in NUMA_PLACES)
"""The NUMA experiment's runs, in the study's order. Every result is held
out (predictions)."""


CATEGORIES = ("data_copy", "etc", "lock", "mm", "netdev", "sched", "skb", "tcpip")
"""The study's CPU categories, in its order."""

LAYER_CATEGORY: Mapping[str, str] = {
    # The study classifies perf's kernel symbols by its own table
    # (symbol_mapping.tsv of its artifact, github.com/Terabit-Ethernet/
    # terabit-network-stack-profiling); each layer goes where that table
    # puts the functions it stands for.
    # data_copy: copy_user_enhanced_fast_string, _copy_to_iter, skb_copy_datagram_iter, memcpy_erms...
    "copy": "data_copy",
    "memory_stall": "data_copy",
    # etc: csum_partial and do_csum, software checksums (no cycles in the study's configurations,
    # whose NICs check and fill in the checksums). Until session 33 nicsim put them in data_copy.
    "checksum": "etc",
    # tcpip: tcp_*, ip_*, and the socket calls: sock_sendmsg, inet_sendmsg, sock_write_iter,
    # sock_recvmsg, inet_recvmsg, __sys_recvfrom, tcp_sendmsg, tcp_recvmsg.
    "tcp": "tcpip",
    "ip": "tcpip",
    "udp": "tcpip",
    "ip_frag": "tcpip",
    "socket": "tcpip",
    # netdev: __dev_queue_xmit, the qdisc, mlx5e_* (the driver, its interrupt handler
    # mlx5e_completion_event and __napi_schedule), napi_gro_receive, dev_gro_receive.
    "device": "netdev",
    "driver": "netdev",
    "coalesce": "netdev",
    # The time stamp the study's kernel takes of every received frame (its
    # kernel_patch/profiling.patch: napi_gro_receive sets gro_tstamp = ktime_get()):
    # ktime_get and the retpoline thunk of its indirect call (__x86_indirect_thunk_rax)
    # are etc, the clock source's read_tsc sched.
    "clock": "etc",
    "clock_read": "sched",
    # The retpoline thunk of the indirect call each piece of a read's copy makes
    # (__skb_datagram_iter's cb: __x86_indirect_thunk_rax) is etc.
    "indirect": "etc",
    # The study's own categories, one layer each.
    "skb": "skb",
    "mm": "mm",
    "lock": "lock",
    "sched": "sched",
    # sched: entry_SYSCALL_64, do_syscall_64 and syscall_return_via_sysret are the system call's
    # entry and exit.
    "syscall": "sched",
    # The idle loop, which sar counts as idle time and perf samples: choosing the state
    # (do_idle, menu_select, tick_nohz_next_event) is etc; entering and leaving it
    # (cpuidle_enter_state, intel_idle, poll_idle, tick_nohz_idle_enter, pick_next_task_idle) sched.
    "idle_select": "etc",
    "idle": "sched",
    # The interrupt layer holds three things the study puts in three categories: see
    # INTERRUPT_SPLIT.
    "interrupt": "netdev",
    # User space: the study sums kernel symbols only (perf's "[k]" lines); the application's
    # cycles are samples in no category.
    "app": "user",
    # etc: fq_codel_dequeue and ktime_get, the qdisc's dequeue and its clock reads
    # (fq_codel_enqueue is not in the table at all).
    "qdisc": "etc",
    # etc: everything else the core reports (nothing of it runs in the study's configurations).
    "command": "etc",
    "via_library": "etc",
    "via_transport": "etc",
    "dma": "etc",
}
"""nicsim's CPU layer (``timing.cycles`` key) -> the study's category, or
``user`` for cycles in no category. A layer not listed (one added to the
core later) counts as ``etc``: see :func:`category`. The ``interrupt``
layer is split (:data:`INTERRUPT_SPLIT`): what is left of it after its
entry and exit is the driver's handler."""

USER = "user"
"""The category of user-space cycles: none of the study's eight."""

INTERRUPT_SPLIT = {"interrupt_entry": "sched", "interrupt_exit": "etc"}
"""Each interrupt's entry (``interrupt_entry``, the study's ``sched``) and
exit (``native_irq_return_iret``, ``native_apic_msr_eoi_write``: ``etc``),
the profile's ``cpu.interrupt_entry`` and ``cpu.interrupt_exit`` cycles;
the rest of the ``interrupt`` layer is the driver's handler
(``mlx5e_completion_event``, ``__napi_schedule``: ``netdev``)."""

COVERAGE_PCT = 95.0
"""The study's script adds perf's kernel lines, largest first, until they
reach 95 % of the samples (``process_util_breakdown_output``): the
breakdown leaves out the smallest functions' last 5 %. nicsim's categories
are scaled to cover the same share, the tail taken from each in
proportion."""

DEFAULT_CATEGORY = "etc"


def category(layer: str) -> str:
    """The study's category of nicsim layer ``layer`` (unlisted layers are ``etc``)."""
    return LAYER_CATEGORY.get(layer, DEFAULT_CATEGORY)


@dataclass(frozen=True)
class Published:
    """The study's numbers for one configuration (its calibration set)."""

    throughput_gbps: float
    per_core_gbps: float
    cpu_pct: Mapping[str, float]
    """Side -> CPU % (100 = one core)."""
    breakdown_pct: Mapping[str, Mapping[str, float]]
    """Side -> category -> % of that side's CPU cycles."""


def _breakdown(*values: float) -> dict[str, float]:
    if len(values) != len(CATEGORIES):
        raise ValueError(f"a breakdown has {len(CATEGORIES)} values, got {len(values)}")
    return dict(zip(CATEGORIES, values))


PUBLISHED: Mapping[str, Published] = {
    "no_opts": Published(
        throughput_gbps=9.0,
        per_core_gbps=4.78,
        cpu_pct={"sender": 101.5, "receiver": 185.8},
        breakdown_pct={
            "sender": _breakdown(5.9, 4.9, 4.5, 8.2, 17.5, 2.2, 9.5, 41.5),
            "receiver": _breakdown(7.4, 0.5, 8.9, 4.4, 9.3, 2.4, 7.3, 54.8),
        },
    ),
    "all_opts": Published(
        throughput_gbps=42.2,
        per_core_gbps=41.2,
        cpu_pct={"sender": 59.8, "receiver": 100.0},
        breakdown_pct={
            "sender": _breakdown(48.0, 4.8, 1.8, 6.8, 8.5, 7.0, 3.4, 12.7),
            "receiver": _breakdown(54.3, 1.8, 0.6, 11.0, 18.3, 3.0, 3.7, 2.2),
        },
    ),
}
"""The published numbers of the two calibration configurations (issue #25);
every other configuration's are held out."""

CALIBRATION = tuple(PUBLISHED)
"""The configurations whose rows are calibration (the others are predictions)."""
