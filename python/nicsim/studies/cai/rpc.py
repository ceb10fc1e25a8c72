"""The study's RPC experiment: 16 request/response connections into one
receiver core, with 4, 16, 32 and 64 KB requests and responses, in four
configurations (:data:`.experiments.RPCS`).

Every result of it is held out, so every number here is a prediction: the
throughput (transactions per second times the message size), throughput
per receiver core, the receiver's CPU and, with all optimisations, the
receiver's CPU breakdown. The clients' numbers are not compared: the
study's run on 16 cores of one host, nicsim's on 16 hosts
(:class:`.experiments.Rpc`). Beside them, not compared: the same runs
with every core at its highest clock
(:data:`.experiments.RPCS_FIXED_CLOCK`), since one transaction at a time
per connection leaves the cores partly idle and the powersave governor
the profile assumes sets their clocks from that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nicsim.studies.framework import Context, Run

from .experiments import CONFIG, RPC_CONFIGS, RPC_SIZES, RPCS, RPCS_FIXED_CLOCK, TURBO
from .metrics import measure_rpc
from .report import clocks_field, clocks_text, per_core_and_cpu_figure, run_quantities, simulated

Runs = Mapping[str, Run]
"""Run id (``rpc_<size>_<config>``) -> its run."""


def section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput per core and receiver CPU against the message size."""
    turbo = {(v.config, v.size): (measure_rpc(report), report.summary.raw)
             for v, report in simulated(ctx, runs, RPCS_FIXED_CLOCK)}
    rows: list[dict[str, Any]] = []
    for v, report in simulated(ctx, runs, RPCS):
        m = measure_rpc(report)
        for q in run_quantities(v.id, v.label, m, carried="the connections (one direction)"):
            if q.kind == "throughput" or v.breakdown:
                ctx.compare(q.id, q.description, q.unit, nicsim=q.nicsim)
        s = report.summary.raw
        rows.append({
            "config": v.config, "size": v.size,
            "transactions_per_s": round(float(s["transaction_rate"]), 1),
            "throughput_gbps": round(m.throughput_gbps, 4), "per_core_gbps": round(m.per_core_gbps, 4),
            "receiver_cpu_pct": round(m.receiver.cpu_pct, 2),
            "receiver_clocks_ghz": clocks_field(m.receiver.clocks_ghz),
            "p50_latency_us": round(1e6 * float(s["p50_latency_s"]), 2),
            "p99_latency_us": round(1e6 * float(s["p99_latency_s"]), 2),
            "retransmissions": m.retransmissions,
        })
        t, ts = turbo.get((v.config, v.size), (None, None))
        rows[-1] |= {
            "fixed_clock_throughput_gbps": round(t.throughput_gbps, 4) if t else None,
            "fixed_clock_receiver_cpu_pct": round(t.receiver.cpu_pct, 2) if t else None,
            "fixed_clock_p50_latency_us": round(1e6 * float(ts["p50_latency_s"]), 2) if ts else None,
        }
    ctx.csv("rpc.csv", rows)
    if not rows:
        return ["No run of the RPC experiment was simulated."]

    series = {
        CONFIG[c].label: ([r["size"] / 1000 for r in mine], [r["per_core_gbps"] for r in mine],
                          [r["receiver_cpu_pct"] for r in mine])
        for c in RPC_CONFIGS
        if (mine := [r for r in rows if r["config"] == c])
    }
    png = per_core_and_cpu_figure(ctx, "rpc", series, "request and response size (KB)",
                                  [n / 1000 for n in RPC_SIZES])

    lines = [
        "The study's RPC experiment (`short-incast.sh` in its artifact): 16 netperf `TCP_RR` clients, each on a",
        "core of its own, into netserver children all on the receiver's CPU 0 (frames steered to CPU 1's queue,",
        "or with aRFS to CPU 0); requests and responses of 4, 16, 32 and 64 KB, one transaction outstanding per",
        "connection. nicsim runs the 16 clients as 16 client hosts on a switch (its hosts have one application",
        "core each) and the receiver serves every connection on its application core (`rpc.toml`,",
        "`workload.dsm`). Throughput is the transactions per second times the size, as the study counts it",
        "(netperf's both directions, halved). Every result is held out: each row is a prediction. Its rows:",
        "`throughput_gbps.rpc_<size>_<config>`, `per_core_gbps.…`, `cpu_pct.receiver.…` and, with all",
        "optimisations (the study's breakdown), `breakdown_pct.receiver.<category>.…`.",
        "",
        f"![rpc]({png})",
        "",
        "| config | size | transactions/s | throughput | per core | receiver CPU | receiver clocks | p50 | p99 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| `{r['config']}` | {r['size']} B | {r['transactions_per_s']:.0f} | {r['throughput_gbps']:.2f} Gb/s |"
            f" {r['per_core_gbps']:.2f} Gb/s | {r['receiver_cpu_pct']:.1f} % | {clocks_text(r['receiver_clocks_ghz'])} |"
            f" {r['p50_latency_us']:.1f} µs | {r['p99_latency_us']:.1f} µs |"
        )
    lines += [
        "",
        "Receiver clocks: each busy core's mean clock while busy, which intel_pstate chose from its load",
        "(powersave). p50 and p99: each transaction's time from the client's first write of its request to its",
        "last read of the response, over the measured interval.",
    ]
    fixed = [r for r in rows if r["fixed_clock_throughput_gbps"] is not None]
    if fixed:
        turbo_text = TURBO.replace("GHz", " GHz")
        lines += [
            "",
            f"The same runs with every core of every host at {turbo_text} (intel_pstate's performance policy) instead",
            "of the clock the powersave policy picks from each core's load, which the profile assumes (the study does",
            "not say which its hosts ran; not compared, `fixed_clock_*` in `rpc.csv`). One transaction at a time per",
            "connection leaves cores partly idle; under powersave they slow down, which lengthens every transaction.",
            "",
            f"| config | size | throughput (powersave) | at {turbo_text}: throughput | receiver CPU | p50 |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for r in fixed:
            lines.append(
                f"| `{r['config']}` | {r['size']} B | {r['throughput_gbps']:.2f} Gb/s |"
                f" {r['fixed_clock_throughput_gbps']:.2f} Gb/s | {r['fixed_clock_receiver_cpu_pct']:.1f} % |"
                f" {r['fixed_clock_p50_latency_us']:.1f} µs |"
            )
    return lines
