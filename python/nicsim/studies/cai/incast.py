"""The study's incast experiment: 8, 16 and 24 long flows into one receiver
core, in four configurations (:data:`.experiments.INCAST`).

Every result of it is held out, so every number here is a prediction: the
flows' aggregate throughput, throughput per receiver core, the receiver's
CPU and, with all optimisations, the receiver's CPU breakdown and L3
miss rate. The
sender's numbers are not compared: the study's sender runs each flow on a
core of its own, nicsim's runs them all on one (:class:`.experiments.Incast`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nicsim.studies.framework import Context, Run

from .experiments import INCAST, INCAST_CACHE_MISS, INCAST_CONFIGS, INCAST_FLOWS
from .metrics import measure
from .report import (compare_l3_miss, flows_table, per_core_and_cpu_figure, run_quantities, series_from_single,
                     simulated, single_flows)

Runs = Mapping[str, Run]
"""Run id (a configuration's, or ``incast_<flows>_<config>``) -> its run."""


def section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput, throughput per core and receiver CPU against the number of flows."""
    rows: list[dict[str, Any]] = []
    single = single_flows(ctx, runs, INCAST_CONFIGS)
    for v, report in simulated(ctx, runs, INCAST):
        m = measure(report)
        for q in run_quantities(v.id, v.label, m, carried="the flows"):
            receiver = q.id.startswith(("throughput_gbps.", "per_core_gbps.", "cpu_pct.receiver.",
                                        "breakdown_pct.receiver."))
            if receiver and (q.kind == "throughput" or v.breakdown):
                ctx.compare(q.id, q.description, q.unit, nicsim=q.nicsim)
        if v.config in INCAST_CACHE_MISS:
            compare_l3_miss(ctx, v.id, v.label, m)
        reads = m.reads
        fairness = report.summary.jain_fairness
        rows.append({
            "config": v.config, "flows": v.flows,
            "throughput_gbps": round(m.throughput_gbps, 4), "per_core_gbps": round(m.per_core_gbps, 4),
            "receiver_cpu_pct": round(m.receiver.cpu_pct, 2), "sender_cpu_pct": round(m.sender.cpu_pct, 2),
            "jain_fairness": None if fairness is None else round(fairness, 5),
            "copied_from_memory_pct": None if reads is None else round(reads.from_memory_pct, 2),
            "retransmissions": m.retransmissions,
        })
    ctx.csv("incast.csv", rows)
    if not rows:
        return ["No run of the incast experiment was simulated."]

    series = series_from_single(rows, INCAST_CONFIGS, "flows", single, 1)
    png = per_core_and_cpu_figure(ctx, "incast", series, "flows into one core (1: the single-flow run)",
                                  [1, *INCAST_FLOWS])

    lines = [
        "The study's incast experiment (`incast.sh` in its artifact): 8, 16 and 24 long flows whose iperf servers",
        "all run on the receiver's CPU 0, their frames steered to CPU 1's queue, or with aRFS to CPU 0. nicsim's",
        "receiver runs every flow on its application core, one socket call at a time in turn, and its sender",
        "likewise on one core (the study's sender gives each flow a core: its numbers are not compared). Every",
        "result is held out: each row is a prediction. Its rows: `throughput_gbps.incast_<flows>_<config>`,",
        "`per_core_gbps.…`, `cpu_pct.receiver.…` and, with all optimisations (the study's breakdown),",
        "`breakdown_pct.receiver.<category>.…` and the L3 miss rate `l3_miss_pct.…`.",
        "",
        f"![incast]({png})",
        "",
        *flows_table(rows, "flows", per_core="per core", sender_cpu="sender CPU (one core)"),
    ]
    lines += [
        "",
        "Fairness: Jain's index of the flows' throughputs. Copied from memory: the share of the bytes read that",
        "DDIO no longer held in the L3 (all flows' data share its 3.5 MiB). With all optimisations it is the row",
        "`l3_miss_pct.…`: nicsim's stand-in for the study's L3 miss rate, which takes the copy's reads of the",
        "received data for all the loads the L3 sees (the study measures it in those runs only).",
    ]
    return lines
