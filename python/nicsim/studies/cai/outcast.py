"""The study's outcast experiment: 2, 4 and 8 long flows from one sender
core, each to a receiver core of its own, in four configurations
(:data:`.experiments.OUTCAST`).

Every result of it is held out, so every number here is a prediction: the
flows' aggregate throughput, throughput per sender core (the study's
bottleneck here), both sides' CPU and, with all optimisations, both sides'
CPU breakdown. nicsim's receiver cores are receiver hosts, one per flow,
summed as one side, on one machine (one PCIe link, one L3's DDIO ways:
:class:`.experiments.Outcast`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nicsim.studies.framework import Context, Run

from .experiments import OUTCAST, OUTCAST_CONFIGS, OUTCAST_FLOWS
from .metrics import measure_outcast
from .report import cell, per_core_and_cpu_figure, run_quantities, series_from_single, simulated, single_flows

Runs = Mapping[str, Run]
"""Run id (a configuration's, or ``outcast_<flows>_<config>``) -> its run."""


def section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput, throughput per sender core and the sender's CPU against the number of flows."""
    rows: list[dict[str, Any]] = []
    single = single_flows(ctx, runs, OUTCAST_CONFIGS, per_core_side="sender")
    for v, report in simulated(ctx, runs, OUTCAST):
        m = measure_outcast(report, v.receivers)
        for q in run_quantities(v.id, v.label, m, carried="the flows"):
            if q.kind == "throughput" or v.breakdown:
                ctx.compare(q.id, q.description, q.unit, nicsim=q.nicsim)
        fairness = report.summary.jain_fairness
        rows.append({
            "config": v.config, "flows": v.flows,
            "throughput_gbps": round(m.throughput_gbps, 4), "per_core_gbps": round(m.per_core_gbps, 4),
            "sender_cpu_pct": round(m.sender.cpu_pct, 2), "receiver_cpu_pct": round(m.receiver.cpu_pct, 2),
            "jain_fairness": None if fairness is None else round(fairness, 5),
            "retransmissions": m.retransmissions,
        })
    ctx.csv("outcast.csv", rows)
    if not rows:
        return ["No run of the outcast experiment was simulated."]

    series = series_from_single(rows, OUTCAST_CONFIGS, "flows", single, 1, side="sender")
    png = per_core_and_cpu_figure(ctx, "outcast", series, "flows from one core (1: the single-flow run)",
                                  [1, *OUTCAST_FLOWS], side="sender")

    lines = [
        "The study's outcast experiment (`outcast.sh` in its artifact): 2, 4 and 8 long flows whose iperf clients",
        "all run on the sender's CPU 0 (their interrupts on CPU 1, or with aRFS on CPU 0), each to an iperf server",
        "on a receiver core of its own. Here the sender is the bottleneck, and the study divides the throughput",
        "by the sender's CPU. nicsim's sender runs every flow on its application core, one socket call at a time",
        "in turn; its receiver cores are receiver hosts, one per flow, on a switch (`outcast.toml`), whose CPU and",
        "breakdown are summed as the receiver's; they are one machine (`machine`), sharing its PCIe link and its",
        "L3's DDIO ways. Every result is held out: each row is a prediction. Its rows:",
        "`throughput_gbps.outcast_<flows>_<config>`, `per_core_gbps.…` (per sender core), `cpu_pct.<side>.…`",
        "and, with all optimisations (the study's breakdown), `breakdown_pct.<side>.<category>.…`.",
        "",
        f"![outcast]({png})",
        "",
        "| config | flows | throughput | per sender core | sender CPU | receiver CPU (all receivers) | fairness |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        fair = cell(r["jain_fairness"], ".4f")
        lines.append(
            f"| `{r['config']}` | {r['flows']} | {r['throughput_gbps']:.2f} Gb/s | {r['per_core_gbps']:.2f} Gb/s |"
            f" {r['sender_cpu_pct']:.1f} % | {r['receiver_cpu_pct']:.1f} % | {fair} |"
        )
    lines += [
        "",
        "Fairness: Jain's index of the flows' throughputs. The single-flow point of each line is the",
        "configuration's own run, divided by its sender's CPU as this experiment divides.",
    ]
    return lines
