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
"""Measured simulated time of each flow: long enough for the 12 MiB windows
to fill many times over at the study's rates, short enough for the seven
runs to take seconds."""

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
        for i in range(len(SIDES)):
            knobs[f"hosts[{i}].nic.tso"] = self.tso
            knobs[f"hosts[{i}].nic.lro"] = self.lro
            knobs[f"hosts[{i}].nic.arfs"] = self.arfs
        return knobs

    def run(self, duration: str = DURATION) -> Run:
        """The configuration's run (its cache sweep is ``cai-<id>``; another
        ``duration`` makes another key, so a shorter test run never meets
        the study's in the cache)."""
        key = self.id if duration == DURATION else f"{self.id}-{duration}"
        return Run(key, SCENARIO, f"one TCP flow, {self.label}, {duration}", self.fixed(duration))


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

CATEGORIES = ("data_copy", "etc", "lock", "mm", "netdev", "sched", "skb", "tcpip")
"""The study's CPU categories, in its order."""

LAYER_CATEGORY: Mapping[str, str] = {
    # The study classifies perf's kernel symbols by its own table
    # (symbol_mapping.tsv of its artifact, github.com/Terabit-Ethernet/
    # terabit-network-stack-profiling); each layer goes where that table
    # puts the functions it stands for.
    # data_copy: copy_user_enhanced_fast_string, _copy_to_iter, skb_copy_datagram_iter, memcpy_erms, csum_partial...
    "copy": "data_copy",
    "memory_stall": "data_copy",
    "checksum": "data_copy",
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
