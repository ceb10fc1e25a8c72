"""The study's one-to-one experiment: 8, 16 and 24 long flows, each from a
sender core of its own to a receiver core of its own, in four
configurations (:data:`.experiments.ONE_TO_ONE`).

Every result of it is held out, so every number here is a prediction: the
flows' aggregate throughput, throughput per receiver core, both sides' CPU
and, with all optimisations, the receiver's CPU breakdown. nicsim's cores
are hosts, one pair per flow, summed as each side
(:class:`.experiments.OneToOne`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nicsim.studies.framework import Context, Run

from .experiments import ONE_TO_ONE, ONE_TO_ONE_CONFIGS, ONE_TO_ONE_FLOWS
from .metrics import measure_one_to_one
from .report import per_core_and_cpu_figure, run_quantities, series_from_single, simulated, single_flows

Runs = Mapping[str, Run]
"""Run id (a configuration's, or ``one_to_one_<flows>_<config>``) -> its run."""


def section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput, throughput per receiver core and the receiver's CPU against the number of flows."""
    rows: list[dict[str, Any]] = []
    single = single_flows(ctx, runs, ONE_TO_ONE_CONFIGS)
    for v, report in simulated(ctx, runs, ONE_TO_ONE):
        m = measure_one_to_one(report, v.senders, v.receivers)
        for q in run_quantities(v.id, v.label, m, carried="the flows"):
            breakdown = q.id.startswith("breakdown_pct.receiver.") and v.breakdown
            if q.kind == "throughput" or breakdown:
                ctx.compare(q.id, q.description, q.unit, nicsim=q.nicsim)
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
    ctx.csv("one_to_one.csv", rows)
    if not rows:
        return ["No run of the one-to-one experiment was simulated."]

    series = series_from_single(rows, ONE_TO_ONE_CONFIGS, "flows", single, 1)
    png = per_core_and_cpu_figure(ctx, "one_to_one", series, "flows, each core to a core (1: the single-flow run)",
                                  [1, *ONE_TO_ONE_FLOWS])

    lines = [
        "The study's one-to-one experiment (`one-to-one.sh` in its artifact): 8, 16 and 24 long flows, flow i from",
        "sender CPU i to receiver CPU i (its interrupts on CPU i + 1, or with aRFS on CPU i), all through the one",
        "cable. nicsim's hosts have one application core each, so each flow has a sender host and a receiver host",
        "(`one_to_one.toml`), the flows sharing one 100 Gb/s link between two switches, and each side's CPU and",
        "breakdown are its hosts' sums. The study's receiver cores share one L3: each receiver host gets an equal",
        "share of DDIO's 3.5 MiB. Every result is held out: each row is a prediction. Its rows:",
        "`throughput_gbps.one_to_one_<flows>_<config>`, `per_core_gbps.…` (per receiver core), `cpu_pct.<side>.…`",
        "and, with all optimisations (the study's breakdown), `breakdown_pct.receiver.<category>.…`.",
        "",
        f"![one_to_one]({png})",
        "",
        "| config | flows | throughput | per receiver core | receiver CPU | sender CPU | fairness | copied from memory |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        mem = "–" if r["copied_from_memory_pct"] is None else f"{r['copied_from_memory_pct']:.1f} %"
        fair = "–" if r["jain_fairness"] is None else f"{r['jain_fairness']:.4f}"
        lines.append(
            f"| `{r['config']}` | {r['flows']} | {r['throughput_gbps']:.2f} Gb/s | {r['per_core_gbps']:.2f} Gb/s |"
            f" {r['receiver_cpu_pct']:.1f} % | {r['sender_cpu_pct']:.1f} % | {fair} | {mem} |"
        )
    lines += [
        "",
        "Fairness: Jain's index of the flows' throughputs. Copied from memory: the share of the bytes read that",
        "DDIO (each receiver's share) no longer held; the study measures the L3 miss rate instead, so this is",
        "not a comparison row.",
    ]
    return lines
