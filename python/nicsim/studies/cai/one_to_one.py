"""The study's one-to-one and all-to-all experiments: long flows from
sender cores to receiver cores, each core with a host of its own
(:data:`.experiments.ONE_TO_ONE`, :data:`.experiments.ALL_TO_ALL`). In
one-to-one, 8, 16 and 24 flows, each from a core of its own to a core of
its own; in all-to-all, a flow from every one of 8 sender cores to every
one of 8, 16 or 24 receiver cores. Both run in four configurations.

Every result of them is held out, so every number here is a prediction:
the flows' aggregate throughput, throughput per receiver core, both sides'
CPU and, with all optimisations, the receiver's CPU breakdown. nicsim's
cores are hosts, summed as each side, and each side's hosts are one machine
(one PCIe link, one L3's DDIO ways: :class:`.experiments.OneToOne`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nicsim.studies.framework import Context, Run

from .experiments import (
    ALL_TO_ALL,
    ALL_TO_ALL_CONFIGS,
    ALL_TO_ALL_CORES,
    CONFIG,
    ONE_TO_ONE,
    ONE_TO_ONE_CONFIGS,
    ONE_TO_ONE_FLOWS,
    AllToAll,
    OneToOne,
    link_share_buffers,
)
from .metrics import measure_one_to_one
from .report import flows_table, per_core_and_cpu_figure, run_quantities, series_from_single, simulated, single_flows

Runs = Mapping[str, Run]
"""Run id (a configuration's, ``one_to_one_<flows>_<config>`` or ``all_to_all_<cores>_<config>``) -> its run."""


def _rows(runs: Runs, ctx: Context, experiments: Sequence[OneToOne | AllToAll], x: str) -> list[dict[str, Any]]:
    """Each run's table row (``x``: the run's number of flows or cores),
    its comparison rows added to the report on the way."""
    rows: list[dict[str, Any]] = []
    for v, report in simulated(ctx, runs, experiments):
        m = measure_one_to_one(report, v.senders, v.receivers)
        for q in run_quantities(v.id, v.label, m, carried="the flows"):
            breakdown = q.id.startswith("breakdown_pct.receiver.") and v.breakdown
            if q.kind == "throughput" or breakdown:
                ctx.compare(q.id, q.description, q.unit, nicsim=q.nicsim)
        reads = m.reads
        fairness = report.summary.jain_fairness
        rows.append({
            "config": v.config, x: getattr(v, x),
            "throughput_gbps": round(m.throughput_gbps, 4), "per_core_gbps": round(m.per_core_gbps, 4),
            "receiver_cpu_pct": round(m.receiver.cpu_pct, 2), "sender_cpu_pct": round(m.sender.cpu_pct, 2),
            "jain_fairness": None if fairness is None else round(fairness, 5),
            "copied_from_memory_pct": None if reads is None else round(reads.from_memory_pct, 2),
            "retransmissions": m.retransmissions,
        })
    return rows


def _table(rows: list[dict[str, Any]], x: str) -> list[str]:
    return flows_table(rows, x) + [
        "",
        "Fairness: Jain's index of the flows' throughputs. Copied from memory: the share of the bytes read that",
        "DDIO (the receiving machine's ways, shared by its cores) no longer held; the study does not measure the L3",
        "miss rate in this experiment, so this is not a comparison row.",
    ]


def section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput, throughput per receiver core and the receiver's CPU against the number of flows."""
    rows = _rows(runs, ctx, ONE_TO_ONE, "flows")
    ctx.csv("one_to_one.csv", rows)
    if not rows:
        return ["No run of the one-to-one experiment was simulated."]
    series = series_from_single(rows, ONE_TO_ONE_CONFIGS, "flows", single_flows(ctx, runs, ONE_TO_ONE_CONFIGS), 1)
    png = per_core_and_cpu_figure(ctx, "one_to_one", series, "flows, each core to a core (1: the single-flow run)",
                                  [1, *ONE_TO_ONE_FLOWS])
    return [
        "The study's one-to-one experiment (`one-to-one.sh` in its artifact): 8, 16 and 24 long flows, flow i from",
        "sender CPU i to receiver CPU i (its interrupts on CPU i + 1, or with aRFS on CPU i), all through the one",
        "cable. nicsim's hosts have one application core each, so each flow has a sender host and a receiver host",
        "(`one_to_one.toml`), the flows sharing one 100 Gb/s link between two switches, and each side's CPU and",
        "breakdown are its hosts' sums. Each side's hosts are one machine (`machine`), as the study's cores are one",
        "server's: they share its PCIe link and its L3's 3.5 MiB of DDIO ways, each with its own NIC queue pair.",
        "Every result is held out: each row is a prediction. Its rows:",
        "`throughput_gbps.one_to_one_<flows>_<config>`, `per_core_gbps.…` (per receiver core), `cpu_pct.<side>.…`",
        "and, with all optimisations (the study's breakdown), `breakdown_pct.receiver.<category>.…`.",
        "",
        f"![one_to_one]({png})",
        "",
        *_table(rows, "flows"),
    ]


def all_to_all_section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput, throughput per receiver core and both sides' CPU of every configuration."""
    rows = _rows(runs, ctx, ALL_TO_ALL, "cores")
    ctx.csv("all_to_all.csv", rows)
    if not rows:
        return ["No run of the all-to-all experiment was simulated."]
    configs = ", ".join(f"`{c}`" for c in ALL_TO_ALL_CONFIGS)
    series = series_from_single(rows, ALL_TO_ALL_CONFIGS, "cores", single_flows(ctx, runs, ALL_TO_ALL_CONFIGS), 1)
    png = per_core_and_cpu_figure(ctx, "all_to_all", series, "cores a side, every core to every core (1: the single-flow run)",
                                  [1, *ALL_TO_ALL_CORES])
    buffers = ["| cores a side | flows | " + " | ".join(f"`{c}` send / receive" for c in ALL_TO_ALL_CONFIGS) + " |",
               "| --- | --- | " + " | ".join("---" for _ in ALL_TO_ALL_CONFIGS) + " |"]
    for cores in ALL_TO_ALL_CORES:
        cells = []
        for c in ALL_TO_ALL_CONFIGS:
            tx, rx = link_share_buffers(CONFIG[c].mtu, CONFIG[c].tso, cores**2)
            cells.append(f"{tx / 1e6:.2f} / {rx / 1e6:.2f} MB")
        buffers.append(f"| {cores} | {cores**2} | " + " | ".join(cells) + " |")
    return [
        "The study's all-to-all experiment (`all-to-all.sh` in its artifact): every sender core sends a long flow",
        "to every receiver core, with 8, 16 and 24 cores a side (64, 256 and 576 flows). nicsim runs them in",
        f"{configs} on `one_to_one.toml`: each sender host runs its flows and each receiver host its flows as one",
        "program on its application core, all through the one shared link, each side one machine (one PCIe link,",
        "one L3's DDIO ways). Every result is held out: each row is a prediction. Its rows:",
        "`throughput_gbps.all_to_all_<cores>_<config>`, `per_core_gbps.…` (per receiver core), `cpu_pct.<side>.…`",
        "and, with all optimisations, `breakdown_pct.receiver.<category>.…`.",
        "",
        "Each flow's socket buffers (payload bytes) are those Linux's autotuning gives a flow whose reader copies",
        "its share of the link's TCP payload rate in the first millisecond (`link_share_buffers` in",
        "`experiments.py`: `tcp_rcv_space_adjust`'s first adjustment, and `tcp_sndbuf_expand` for a window-limited",
        "flow). With 8 cores a side they are the caps every other run has; with 16 and 24 they are smaller. nicsim",
        "does not simulate the autotuning itself: the buffers are fixed for the whole run.",
        "",
        *buffers,
        "",
        f"![all_to_all]({png})",
        "",
        *_table(rows, "cores"),
    ]
