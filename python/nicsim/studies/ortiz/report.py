"""The Ortiz report's sections on NetPIPE: Table I (the calibration) and the
curves of Figures 5 to 8. CPU0's load, its interrupts and the released
cycles are in :mod:`.load`; the analytical models in :mod:`.analytical`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nicsim.studies.framework import Context, Grid, Run

from .experiments import LATENCY, NETPIPE, PUBLISHED_LATENCY_US, SETTINGS, SPEEDS

Runs = list[tuple[str, dict[str, Any], dict[str, Any]]]
"""(setting label, knob values, report) of every run of a table of experiments."""


def runs(ctx: Context, table: Mapping[str, Run | Grid]) -> Runs:
    """Every run of ``table`` (setting label -> Run or Grid) as (label, params, report)."""
    from .experiments import SETTING_BY_LABEL

    out: Runs = []
    for label, e in table.items():
        knobs = SETTING_BY_LABEL[label].knobs()
        if isinstance(e, Run):
            out.append((label, knobs, dict(ctx.report(e).raw)))
        else:
            out += [(label, {**knobs, **p.params}, dict(p.report.raw)) for p in ctx.points(e)]
    return out


def _pct(nicsim: float, published: float) -> float:
    return (nicsim - published) / published * 100.0


def table1(ctx: Context) -> list[str]:
    rows = []
    for label, _, rep in runs(ctx, LATENCY):
        lat = rep["summary"]["latency_s"] * 1e6
        pub = PUBLISHED_LATENCY_US[label]
        rows.append(
            {"setting": label, "published_us": pub, "nicsim_us": round(lat, 2), "diff_pct": round(_pct(lat, pub), 1)}
        )
    ctx.csv("table1.csv", rows)
    keys = {s.label: s.key for s in SETTINGS}
    for r in rows:
        ctx.compare(f"table1.latency_us.{keys[r['setting']]}", f"NetPIPE latency, {r['setting']} (Table I)", "µs",
                    nicsim=r["nicsim_us"], published=r["published_us"], role="calibration")  # fmt: skip
    lines = ["| setting | published (µs) | nicsim (µs) | difference |", "| --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['setting']} | {r['published_us']} | {r['nicsim_us']:.2f} | {r['diff_pct']:+.1f} % |")
    misses = [r["setting"] for r in rows if abs(r["diff_pct"]) > 10]
    lines += [
        "",
        "Rows within 10 %: "
        + ", ".join(r["setting"] for r in rows if abs(r["diff_pct"]) <= 10)
        + ". Rows missed: "
        + (", ".join(misses) if misses else "none")
        + ".",
        "",
        "nicsim's latency grows linearly with x: every memory access on CPU1's path costs x",
        "times more and nothing else changes. The study's rows 1 to 6 lie near a line; Offload 10",
        "(120.54 µs) is far above it (the step from 6 to 10 costs 18.5 µs per unit of x against",
        "2 to 5 below). nicsim has no mechanism that makes slow memory superlinear (e.g. a queue",
        "or timer that only starts to matter past a threshold), so it cannot follow that row.",
    ]
    return lines


def netpipe_curves(ctx: Context) -> dict[str, list[dict[str, float]]]:
    """NetPIPE points per setting label (writes ``netpipe.csv`` once)."""
    curves: dict[str, list[dict[str, float]]] = {}
    rows = []
    for label, _, rep in runs(ctx, NETPIPE):
        curves[label] = rep["netpipe"]
        for p in rep["netpipe"]:
            rows.append({"setting": label, "bytes": p["bytes"], "time_s": p["time_s"], "mbps": p["mbps"]})
    if not any(p.name == "netpipe.csv" for p in ctx.written):
        ctx.csv("netpipe.csv", rows)
    return curves


def _curve_fig(ctx: Context, curves: dict[str, list[dict[str, float]]], labels: Sequence[str], y: str,
               name: str, title: str, ylabel: str, loglog: bool) -> str:  # fmt: skip
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label in labels:
        pts = curves[label]
        xs = [p["bytes"] for p in pts]
        if y == "rtt":
            ys = [2 * p["time_s"] * 1e6 for p in pts]
        elif y == "time":
            ys = [p["time_s"] for p in pts]
        else:
            ys = [p["mbps"] for p in pts]
        ax.plot(xs, ys, label=label, linewidth=1.2)
    ax.set_xscale("log", base=2)
    if loglog:
        ax.set_yscale("log")
    ax.set_xlabel("block size (bytes)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return ctx.figure(fig, name, pdf=True)


MAIN_LABELS = [s.label for s in SETTINGS]
SPEED_LABELS = ["no offload", "Offload 1", *(s.label for s in SPEEDS)]


def rtt_and_saturation(ctx: Context) -> list[str]:
    curves = netpipe_curves(ctx)
    fig5 = _curve_fig(ctx, curves, MAIN_LABELS, "rtt", "fig5-rtt", "RTT vs block size (NetPIPE, TCP)",
                      "round-trip time (µs)", True)  # fmt: skip
    fig6 = _curve_fig(ctx, curves, MAIN_LABELS, "time", "fig6-saturation", "Saturation graph (NetPIPE)",
                      "one-way time (s)", True)  # fmt: skip
    return [f"![RTT]({fig5})", "", f"![saturation]({fig6})"]


def throughput(ctx: Context) -> list[str]:
    curves = netpipe_curves(ctx)
    fig7 = _curve_fig(ctx, curves, MAIN_LABELS, "mbps", "fig7-throughput", "Throughput vs block size (NetPIPE, TCP)",
                      "throughput (NetPIPE Mbps)", False)  # fmt: skip
    fig8 = _curve_fig(ctx, curves, SPEED_LABELS, "mbps", "fig8-cpu1-speed", "Throughput vs CPU1 speed (Offload 1)",
                      "throughput (NetPIPE Mbps)", False)  # fmt: skip
    peaks = {label: max(p["mbps"] for p in pts) for label, pts in curves.items()}
    means = mean_mbps(curves)
    for s in SETTINGS:
        ctx.compare(f"fig7.mean_mbps.{s.key}", f"mean NetPIPE throughput over the curve's block sizes, {s.label}"
                    " (Figure 7)", "Mbps", nicsim=means[s.label])  # fmt: skip
    for key, label in (("no_offload", "no offload"), ("cpu1_100", "Offload 1"),
                       *((s.key, s.label) for s in SPEEDS)):  # fmt: skip
        name = "CPU1 at 100 %" if key == "cpu1_100" else label
        ctx.compare(f"fig8.mean_mbps.{key}", f"mean NetPIPE throughput over the curve's block sizes, {name}"
                    " (Figure 8, Offload 1 delays)", "Mbps", nicsim=means[label])  # fmt: skip
    lines = [f"![throughput]({fig7})", "", f"![speed]({fig8})", "",
             "| setting | peak throughput (NetPIPE Mbps) |", "| --- | --- |"]  # fmt: skip
    for label, peak in peaks.items():
        lines.append(f"| {label} | {peak:.1f} | {means[label]:.1f} |")
    lines[4:6] = ["| setting | peak throughput (NetPIPE Mbps) | mean over block sizes (Mbps) |", "| --- | --- | --- |"]
    return lines


def mean_mbps(curves: dict[str, list[dict[str, float]]]) -> dict[str, float]:
    """Mean NetPIPE throughput over every block size of each setting's curve
    (NetPIPE's own schedule, 1 B to 4 MiB with its perturbations)."""
    return {label: sum(p["mbps"] for p in pts) / len(pts) for label, pts in curves.items()}
