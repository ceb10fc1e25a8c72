"""The study's mixed experiment: one long flow and 1, 4 or 16 request/response
connections beside it on one core of each host, in four configurations
(:data:`.experiments.MIXED`).

Every result of it is held out, so every number here is a prediction: the
flow's and the connections' throughput together, throughput per receiver
core, the receiver's CPU and, with all optimisations, the receiver's CPU
breakdown (:class:`.experiments.Mixed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nicsim.studies.framework import Context, Run

from .experiments import MIXED, MIXED_CONFIGS, MIXED_RPC_SIZE, MIXED_RPCS
from .metrics import measure_mixed
from .report import per_core_and_cpu_figure, run_quantities, series_from_single, simulated, single_flows

Runs = Mapping[str, Run]
"""Run id (a configuration's, or ``mixed_<rpcs>_<config>``) -> its run."""


def section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput per core and receiver CPU against the number of RPC connections."""
    rows: list[dict[str, Any]] = []
    single = single_flows(ctx, runs, MIXED_CONFIGS)
    for v, report in simulated(ctx, runs, MIXED):
        m = measure_mixed(report, MIXED_RPC_SIZE)
        for q in run_quantities(v.id, v.label, m, carried="the flow and the connections"):
            if q.kind == "throughput" or v.breakdown:
                ctx.compare(q.id, q.description, q.unit, nicsim=q.nicsim)
        s = report.summary.raw
        rate = float(s.get("transaction_rate") or 0.0)
        rows.append({
            "config": v.config, "rpcs": v.rpcs,
            "throughput_gbps": round(m.throughput_gbps, 4),
            "flow_gbps": round(report.summary.goodput_bps / 1e9, 4),
            "rpc_transactions_per_s": round(rate, 1),
            "per_core_gbps": round(m.per_core_gbps, 4), "receiver_cpu_pct": round(m.receiver.cpu_pct, 2),
            "rpc_p50_us": round(1e6 * float(s.get("p50_latency_s") or 0.0), 2),
            "rpc_p99_us": round(1e6 * float(s.get("p99_latency_s") or 0.0), 2),
            "retransmissions": m.retransmissions,
        })
    ctx.csv("mixed.csv", rows)
    if not rows:
        return ["No run of the mixed experiment was simulated."]

    series = series_from_single(rows, MIXED_CONFIGS, "rpcs", single, 0)
    png = per_core_and_cpu_figure(ctx, "mixed", series, "RPC connections beside the flow (0: the flow alone)",
                                  [0, *MIXED_RPCS])

    lines = [
        "The study's mixed experiment (`mixed.sh` in its artifact): one long iperf flow and 1, 4 or 16 netperf",
        f"`TCP_RR` connections of {MIXED_RPC_SIZE} bytes each way beside it, all on CPU 0 of each host (the",
        "receiver's frames steered to CPU 1's queue, or with aRFS to CPU 0). nicsim's hosts run the flow and the",
        "connections in one program on their application core (`workload.bulk.rpc`). Throughput is the flow's",
        "and the connections' together (transactions per second times the size, as the study halves netperf's",
        "count). Every result is held out: each row is a prediction. Its rows:",
        "`throughput_gbps.mixed_<rpcs>_<config>`, `per_core_gbps.…`, `cpu_pct.receiver.…` and, with all",
        "optimisations (the study's breakdown), `breakdown_pct.receiver.<category>.…`.",
        "",
        f"![mixed]({png})",
        "",
        "| config | RPCs | throughput | of which the flow | RPC transactions/s | per core | receiver CPU"
        " | RPC p50 | RPC p99 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| `{r['config']}` | {r['rpcs']} | {r['throughput_gbps']:.2f} Gb/s | {r['flow_gbps']:.2f} Gb/s |"
            f" {r['rpc_transactions_per_s']:.0f} | {r['per_core_gbps']:.2f} Gb/s | {r['receiver_cpu_pct']:.1f} % |"
            f" {r['rpc_p50_us']:.1f} µs | {r['rpc_p99_us']:.1f} µs |"
        )
    lines += [
        "",
        "RPC p50 and p99: each transaction's time from the client's first write of its request to its last read",
        "of the response, over the measured interval.",
    ]
    return lines
