"""The study's DDIO experiment: the seven configurations with the
application (and, with aRFS, the flow's interrupts) on a socket without the
NIC, where DDIO cannot place the received data (:data:`.experiments.NO_DDIO`).

Every result of it is held out, so every number here is a prediction:
throughput, throughput per core, each side's CPU, and the CPU breakdown of
the four configurations the study breaks down. The section sets each run
beside the same configuration with DDIO (the configuration's own run), so
the difference is what nicsim says DDIO is worth.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nicsim.studies.framework import Context, Run

from .experiments import CATEGORIES, CONFIG, NO_DDIO, RECEIVER, SIDES
from .metrics import Metrics, measure
from .report import CATEGORY_LABELS, cell, run_quantities, simulated

Runs = Mapping[str, Run]
"""Run id (a configuration's, or ``no_ddio_<config>``) -> its run."""


def metrics(ctx: Context, runs: Runs) -> dict[str, tuple[Metrics | None, Metrics]]:
    """Each configuration's measurements with DDIO (None if its run is
    missing) and without, in the study's order."""
    out: dict[str, tuple[Metrics | None, Metrics]] = {}
    for v, report in simulated(ctx, runs, NO_DDIO):
        base = runs.get(v.config)
        with_ddio = measure(ctx.report(base)) if base is not None and ctx.has(base) else None
        out[v.config] = (with_ddio, measure(report))
    return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def frames_per_input(ctx: Context, run: Run | None) -> float | None:
    """Wire frames per TCP input at the receiver over the whole run, warm-up
    included: the frames its NIC took over the frames its stack processed
    (after GRO and the socket backlog's joins). None without the run."""
    if run is None or not ctx.has(run):
        return None
    host = ctx.report(run).host(RECEIVER)
    wire = int(host.timed.nic.get("rx_frames", 0))
    return wire / host.rx_frames if host.rx_frames else None


def _change(new: float, old: float | None) -> str:
    if old is None or old == 0:
        return "–"
    return f"{100 * (new / old - 1):+.1f} %"


def section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput, CPU and breakdowns with DDIO off, beside the same configurations with it."""
    ms = metrics(ctx, runs)
    by_config = {v.config: v for v in NO_DDIO}
    rows: list[dict[str, Any]] = []
    breakdown_rows: list[dict[str, Any]] = []
    for config, (on, off) in ms.items():
        v = by_config[config]
        for q in run_quantities(v.id, v.label, off):
            if q.kind == "throughput" or v.breakdown:
                ctx.compare(q.id, q.description, q.unit, nicsim=q.nicsim)
        rows.append({
            "config": config,
            "throughput_gbps": round(off.throughput_gbps, 4), "per_core_gbps": round(off.per_core_gbps, 4),
            "sender_cpu_pct": round(off.sender.cpu_pct, 2), "receiver_cpu_pct": round(off.receiver.cpu_pct, 2),
            "with_ddio_throughput_gbps": None if on is None else round(on.throughput_gbps, 4),
            "with_ddio_per_core_gbps": None if on is None else round(on.per_core_gbps, 4),
            "with_ddio_receiver_cpu_pct": None if on is None else round(on.receiver.cpu_pct, 2),
            "frames_per_tcp_input": _round(frames_per_input(ctx, runs[v.id])),
            "with_ddio_frames_per_tcp_input": _round(frames_per_input(ctx, runs.get(config))),
            "retransmissions": off.retransmissions,
        })
        if v.breakdown:
            for side in SIDES:
                for cat in CATEGORIES:
                    breakdown_rows.append({
                        "config": config, "side": side, "category": cat,
                        "nicsim_pct": round(off.sides[side].breakdown_pct[cat], 3),
                        "with_ddio_pct": None if on is None else round(on.sides[side].breakdown_pct[cat], 3),
                    })
    ctx.csv("no_ddio.csv", rows)
    ctx.csv("no_ddio_breakdown.csv", breakdown_rows)
    if not rows:
        return ["No run of the DDIO experiment was simulated."]

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = [r["config"] for r in rows]
    x = range(len(configs))
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
    for ax, key, title in ((axes[0], "per_core_gbps", "Throughput per receiver core (Gb/s)"),
                           (axes[1], "receiver_cpu_pct", "Receiver CPU (%, 100 = one core)")):
        with_ddio = [r[f"with_ddio_{key}"] or 0.0 for r in rows]
        ax.bar([i - 0.2 for i in x], with_ddio, 0.4, label="DDIO", color="#4c72b0")
        ax.bar([i + 0.2 for i in x], [r[key] for r in rows], 0.4, label="DDIO off", color="#dd8452")
        ax.set_xticks(list(x))
        ax.set_xticklabels([CONFIG[c].label for c in configs], rotation=30, ha="right", fontsize=7)
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    png = ctx.figure(fig, "no_ddio", pdf=True)

    lines = [
        "The study's DDIO experiment (`single-flow-no-ddio.sh` in its artifact): each configuration with the",
        "application on CPU 1 instead of CPU 0 and, without aRFS, the interrupts on CPU 2 instead of CPU 1, on",
        "sockets without the NIC, so DDIO cannot place the received data in a cache the flow's cores share.",
        "nicsim runs each configuration with `memory.ddio` at zero on both hosts. Every result of it is held out:",
        "each row below is a prediction, set beside nicsim's run of the same configuration with DDIO.",
        "",
        f"![DDIO off]({png})",
        "",
        "| config | throughput | change | per core | change | sender CPU | receiver CPU | change"
        " | frames per TCP input (with DDIO) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| `{r['config']}` | {r['throughput_gbps']:.2f} Gb/s | "
            f"{_change(r['throughput_gbps'], r['with_ddio_throughput_gbps'])} | {r['per_core_gbps']:.2f} Gb/s | "
            f"{_change(r['per_core_gbps'], r['with_ddio_per_core_gbps'])} | {r['sender_cpu_pct']:.1f} % | "
            f"{r['receiver_cpu_pct']:.1f} % | {_change(r['receiver_cpu_pct'], r['with_ddio_receiver_cpu_pct'])} |"
            f" {cell(r['frames_per_tcp_input'], '.2f')} ({cell(r['with_ddio_frames_per_tcp_input'], '.2f')}) |"
        )
    lines += [
        "",
        "Change: against the same configuration with DDIO. Frames per TCP input: the receiver's wire frames over",
        "the inputs its TCP processed, after GRO and the socket backlog's joins (whole run, warm-up included).",
        "",
        "Where the socket buffers are larger than DDIO's share of the L3 (`memory.ddio`, 3.5 MiB), the reads",
        "copy from memory with DDIO as well, so turning it off changes little. In `no_opts` with DDIO the",
        "softirq's core is the saturated one and the reader keeps up, reading from the L3. From memory its copies",
        "take longer, each read holds the socket lock longer, and the segments that arrive meanwhile wait in the",
        "socket backlog, where Linux 5.0 and later join them (`tcp_add_backlog`, `cpu.backlog_coalesce`) and TCP",
        "takes them on the application's core instead of the softirq's: fewer, larger TCP inputs off the",
        "saturated core, which in nicsim more than pays for the slower copy. Whether a real receiver crosses",
        "into that regime is what the study's runs will show.",
        "",
    ]
    broken = [c for c in configs if by_config[c].breakdown]
    if broken:
        lines += [
            "**Receiver CPU by category, DDIO off** (% of the side's cycles; in brackets, with DDIO)",
            "",
            "| config | " + " | ".join(CATEGORY_LABELS[c] for c in CATEGORIES) + " |",
            "| --- |" + " --- |" * len(CATEGORIES),
        ]
        for c in broken:
            on, off = ms[c]
            cells = []
            for cat in CATEGORIES:
                text = f"{off.receiver.breakdown_pct[cat]:.1f}"
                if on is not None:
                    text += f" ({on.receiver.breakdown_pct[cat]:.1f})"
                cells.append(text)
            lines.append(f"| `{c}` | " + " | ".join(cells) + " |")
        lines += ["", "Both sides' breakdowns are in `comparison.csv` and `no_ddio_breakdown.csv`.", ""]
    lines += [
        "Without aRFS the study's interrupt core is on another socket than the NIC in its default runs too",
        "(CPU 1, whose receive queue's pages are on CPU 1's node), so by the artifact's placement those runs",
        "differ from the default ones only by the application's socket. nicsim's fitted profile keeps DDIO in",
        "the default runs without aRFS (turning it off there does not fit the calibration set: the model page",
        "and the fit log); its rows for them here are what nicsim's DDIO is worth in its model of those runs.",
    ]
    return lines
