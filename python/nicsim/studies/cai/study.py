"""The Cai study assembled: its introduction, its sections and their runs
(:func:`build`), and ``nicsim reproduce cai`` (:func:`reproduce`)."""

from __future__ import annotations

import functools

from nicsim.studies.framework import Section, Study

from . import buffers, ddio, incast, mixed, numa, one_to_one, outcast, report, rpc
from .claims import claims
from .experiments import (
    BUFFERS,
    BUFFERS_FIXED_CLOCK,
    CALIBRATION,
    CATEGORIES,
    CONFIGS,
    DURATION,
    INCAST,
    LAYER_CATEGORY,
    MIXED,
    NO_DDIO,
    ALL_TO_ALL,
    NUMA,
    ONE_TO_ONE,
    OUTCAST,
    RPCS,
    RPCS_FIXED_CLOCK,
)


_MAPPING = ", ".join(
    f"{cat}: " + "/".join(f"`{layer}`" for layer, c in LAYER_CATEGORY.items() if c == cat) for cat in CATEGORIES
)

INTRO = [
    "Two `cai-xeon-6128` hosts (Xeon Gold 6128 at 3.4 GHz, six cores, ConnectX-5 Ex 100 Gb/s on PCIe gen3 x16,",
    "Linux 5.4 costs) on a 100 Gb/s direct cable; one bulk TCP flow from a (sender) to b (receiver) with the",
    "socket buffers Linux autotunes (4 and 6 MiB of sk_buff memory, as payload 2.1 to 5.7 MiB), for a fixed",
    "time ({duration} of simulated time per configuration). Seven configurations",
    "switch, on both hosts, the MTU (1500 or 9000 B), TSO (`nic.tso`), GRO (`nic.lro = \"gro\"`) and aRFS",
    "(`nic.arfs`: the flow's interrupts and softirq work run on the application's core).",
    "",
    "Measured per run: the flow's throughput; each side's CPU % (the sum of its cores' busy fractions x 100,",
    "so 100 % is one core); throughput per core (throughput over the receiver's CPU % / 100); and each side's",
    "CPU cycles grouped into the study's eight categories as a percentage of the side's cycles.",
    "",
    "**Calibration vs prediction.** Only `no_opts` and `all_opts` have published numbers here: the profile is",
    "fitted to them (every one of their rows in `comparison.csv` has role `calibration`). The five other",
    "configurations' results are held out: their rows are predictions from the same profile, unchanged, and so",
    "are the study's buffer experiment's (all optimisations with both socket buffers fixed, 100 KiB to 12.5 MiB)",
    "its DDIO experiment's (every configuration with the flow's cores on a socket without the NIC), its",
    "incast experiment's (8, 16 and 24 flows into one receiver core), its outcast experiment's (2, 4 and 8",
    "flows from one sender core, each to a receiver core of its own), its one-to-one experiment's (8, 16",
    "and 24 flows, each from a core of its own to a core of its own), its all-to-all experiment's (8, 16",
    "and 24 cores a side, each sending a flow to each), its RPC experiment's (16",
    "request/response connections of 4 to 64 KB into one receiver core), its mixed experiment's (one",
    "flow and 1, 4 or 16 such connections on one core) and its NUMA experiment's (a flow or 16 such",
    "connections, the receiver's application on either socket).",
    "",
    f"**nicsim layers to the study's categories** (any layer not listed counts as etc): {_MAPPING}.",
    "",
]


DESCRIPTION = (
    "Cai et al., SIGCOMM 2021: one long TCP flow between two Xeon Gold 6128 hosts with 100 Gb/s ConnectX-5 Ex"
    " NICs, seven configurations of TSO/GRO, jumbo frames and aRFS; throughput per core and the CPU breakdown;"
    " socket buffers from 100 KiB to 12.5 MiB; DDIO off; incast; outcast; one-to-one; all-to-all; RPCs; a flow with RPCs; NUMA."
)


def build(duration: str = DURATION) -> Study:
    """The study with each flow running for ``duration`` (the default is the
    study's; tests build a shorter one, whose runs have other cache keys)."""
    runs = {c.id: c.run(duration) for c in CONFIGS}
    buffer_runs = {b.id: b.run(duration) for b in BUFFERS + BUFFERS_FIXED_CLOCK}
    no_ddio_runs = {v.id: v.run(duration) for v in NO_DDIO}
    incast_runs = {v.id: v.run(duration) for v in INCAST}
    outcast_runs = {v.id: v.run(duration) for v in OUTCAST}
    one_to_one_runs = {v.id: v.run(duration) for v in ONE_TO_ONE}
    all_to_all_runs = {v.id: v.run(duration) for v in ALL_TO_ALL}
    rpc_runs = {v.id: v.run(duration) for v in RPCS + RPCS_FIXED_CLOCK}
    mixed_runs = {v.id: v.run(duration) for v in MIXED}
    numa_runs = {v.id: v.run(duration) for v in NUMA}
    calibration_runs = [runs[c] for c in CALIBRATION]
    every = list(runs.values())
    return Study(
        "cai",
        title="Cai et al.: host network stack overheads at 100 Gb/s, reproduced by nicsim",
        intro=[line.format(duration=duration) if "{duration}" in line else line for line in INTRO],
        sections=[
            Section("Calibration: no optimisations and all optimisations", calibration_runs,
                    functools.partial(report.calibration, runs)),
            Section("Throughput, throughput per core and CPU use", every, functools.partial(report.throughput, runs)),
            Section("CPU breakdown by category", every, functools.partial(report.breakdowns, runs)),
            Section("Socket buffer size (all optimisations)", list(buffer_runs.values()),
                    functools.partial(buffers.section, buffer_runs)),
            Section("DDIO off (the application on another socket)", every + list(no_ddio_runs.values()),
                    functools.partial(ddio.section, {**runs, **no_ddio_runs})),
            Section("Incast: several flows into one core", every + list(incast_runs.values()),
                    functools.partial(incast.section, {**runs, **incast_runs})),
            Section("Outcast: several flows from one core", every + list(outcast_runs.values()),
                    functools.partial(outcast.section, {**runs, **outcast_runs})),
            Section("One-to-one: flows from core to core", every + list(one_to_one_runs.values()),
                    functools.partial(one_to_one.section, {**runs, **one_to_one_runs})),
            Section("All-to-all: every core to every core", every + list(all_to_all_runs.values()),
                    functools.partial(one_to_one.all_to_all_section, {**runs, **all_to_all_runs})),
            Section("RPCs: 16 request/response connections into one core", list(rpc_runs.values()),
                    functools.partial(rpc.section, rpc_runs)),
            Section("A flow and RPCs on one core", every + list(mixed_runs.values()),
                    functools.partial(mixed.section, {**runs, **mixed_runs})),
            Section("NUMA: the receiver's application on another socket", list(numa_runs.values()),
                    functools.partial(numa.section, numa_runs)),
            Section("Claims", every, functools.partial(claims, runs)),
        ],
        description=DESCRIPTION,
    )


STUDY = build()
"""The study: its sections in report order."""


reproduce = STUDY.reproduce
"""Run what is missing and write the report; returns the files written."""
