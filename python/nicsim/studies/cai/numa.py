"""The study's NUMA experiment: one long flow, or 16 request/response
connections into one core, all optimisations, with the receiver's
application on the NIC's socket or another (:data:`.experiments.NUMA`).

Every result of it is held out, so every number here is a prediction:
throughput, throughput per receiver core, the receiver's CPU and its L3
miss rate (:attr:`.metrics.Metrics.l3_miss_pct`: the share of the received
bytes its reads copied from memory, 100 % where DDIO does not fill its L3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nicsim.studies.framework import Context, Run

from .experiments import NUMA
from .metrics import measure, measure_rpc
from .report import compare_l3_miss, run_quantities, simulated

Runs = Mapping[str, Run]
"""Run id (``numa_<flow>_<place>``) -> its run."""


def section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput per receiver core of each flow on each socket."""
    rows: list[dict[str, Any]] = []
    for v, report in simulated(ctx, runs, NUMA):
        m = measure(report) if v.flow == "long" else measure_rpc(report)
        carried = "the flow" if v.flow == "long" else "the connections (one direction)"
        for q in run_quantities(v.id, v.label, m, carried=carried):
            if q.id.startswith(("throughput_gbps.", "per_core_gbps.", "cpu_pct.receiver.")):
                ctx.compare(q.id, q.description, q.unit, nicsim=q.nicsim)
        compare_l3_miss(ctx, v.id, v.label, m)
        reads = m.reads
        rows.append({
            "flow": v.flow, "place": v.place, "run": runs[v.id].key,
            "throughput_gbps": round(m.throughput_gbps, 4), "per_core_gbps": round(m.per_core_gbps, 4),
            "receiver_cpu_pct": round(m.receiver.cpu_pct, 2),
            "copied_from_memory_pct": None if reads is None else round(reads.from_memory_pct, 2),
            "l3_miss_pct": round(m.l3_miss_pct, 2),
        })
    ctx.csv("numa.csv", rows)
    if not rows:
        return ["No run of the NUMA experiment was simulated."]
    lines = [
        "The study's NUMA experiment (`numa.sh` in its artifact), all optimisations: one long iperf flow, or 16",
        "netperf `TCP_RR` connections of 4 000 bytes into one core, with the receiver's application (and, with",
        "aRFS, its interrupts) on CPU 0, the NIC's socket, or CPU 1, another socket, where DDIO does not place",
        "the received data. Three of its runs are other experiments' (the long flow local is `all_opts`, remote",
        "the DDIO experiment's `all_opts`, whose sender moves too; the short flows local are the RPC",
        "experiment's 4 000-byte `all_opts`); the fourth is the RPC run with DDIO off on the receiver alone.",
        "Every result is held out: each row is a prediction. Its rows: `throughput_gbps.numa_<flow>_<place>`,",
        "`per_core_gbps.…`, `cpu_pct.receiver.…` and `l3_miss_pct.…`. The L3 miss rate is nicsim's stand-in for",
        "the study's (perf's `LLC-load-misses` over `LLC-loads`): the share of the received bytes the reads",
        "copied from memory because DDIO no longer held them in the L3, or 100 % where DDIO is off and every",
        "byte comes from memory; it takes the copy's reads for all the loads the L3 sees.",
        "",
        "| flow | receiver's application | run | throughput | per core | receiver CPU | L3 miss rate |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['flow']} | {r['place']} socket | `{r['run']}` | {r['throughput_gbps']:.2f} Gb/s |"
            f" {r['per_core_gbps']:.2f} Gb/s | {r['receiver_cpu_pct']:.1f} % | {r['l3_miss_pct']:.1f} % |"
        )
    return lines
