"""The Cai report's sections: calibration (the two published
configurations, every number side by side), throughput and CPU across the
seven configurations, and the CPU breakdown by category.

Every section reads the runs of :data:`.experiments.RUNS` (or the shorter
ones a test builds with :func:`nicsim.studies.cai.build`) as
:class:`.metrics.Metrics`; the comparison rows are made by
:func:`quantities`, one place for every id of ``comparison.csv``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from nicsim.studies import comparison
from nicsim.studies.framework import Context, Run
from nicsim.studies.records import RunReport

from .experiments import (
    CALIBRATION,
    CATEGORIES,
    CONFIG,
    CONFIGS,
    LAYER_CATEGORY,
    PUBLISHED,
    SIDES,
    Published,
    _Experiment,
)
from .metrics import Metrics, measure

Runs = Mapping[str, Run]
"""Configuration id -> its run."""

TOLERANCE_PCT = 10.0
"""A calibration row "misses" when nicsim is further than this from the published value (relative)."""

CATEGORY_LABELS = {
    "data_copy": "data copy",
    "etc": "etc",
    "lock": "lock/unlock",
    "mm": "memory alloc/dealloc",
    "netdev": "netdev subsystem",
    "sched": "scheduling",
    "skb": "skb management",
    "tcpip": "TCP/IP processing",
}
COLORS = {
    "data_copy": "#4c72b0",
    "etc": "#8c8c8c",
    "lock": "#c44e52",
    "mm": "#8172b2",
    "netdev": "#dd8452",
    "sched": "#da8bc3",
    "skb": "#ccb974",
    "tcpip": "#55a868",
}


def metrics(ctx: Context, runs: Runs) -> dict[str, Metrics]:
    """Each configuration's measurements, in the study's order."""
    return {c.id: measure(ctx.report(runs[c.id])) for c in CONFIGS if c.id in runs and ctx.has(runs[c.id])}


def single_flows(ctx: Context, runs: Runs, configs: tuple[str, ...], per_core_side: str = "receiver",
                 ) -> dict[str, Metrics]:
    """The single-flow runs of ``configs`` that ``runs`` has and that ran,
    measured, their throughput per core over ``per_core_side``'s CPU (the
    point each line of a figure of another experiment starts from)."""
    return {c: dataclasses.replace(measure(ctx.report(runs[c])), per_core_side=per_core_side)
            for c in configs if c in runs and ctx.has(runs[c])}


E = TypeVar("E", bound=_Experiment)


def simulated(ctx: Context, runs: Runs, experiments: Iterable[E]) -> Iterator[tuple[E, RunReport]]:
    """Each of ``experiments`` whose run ``runs`` has and that ran, with its report, in order."""
    for v in experiments:
        if v.id in runs and ctx.has(runs[v.id]):
            yield v, ctx.report(runs[v.id])


@dataclass(frozen=True)
class Quantity:
    """One number of ``comparison.csv`` for one configuration."""

    id: str
    description: str
    unit: str
    nicsim: float
    published: float | None
    kind: str
    """``throughput`` (throughput, per core, CPU %) or ``breakdown``."""


def quantities(config: str, m: Metrics) -> list[Quantity]:
    """Every compared number of configuration ``config``; ``published`` is
    set for the calibration configurations only."""
    return run_quantities(config, CONFIG[config].label, m, PUBLISHED.get(config))


def run_quantities(config: str, label: str, m: Metrics, pub: Published | None = None,
                   carried: str = "the flow") -> list[Quantity]:
    """Every compared number of run ``config`` (an id of ``comparison.csv``:
    a configuration, or one of another experiment's runs), described by
    ``label``, with the published numbers ``pub`` if any; the sides ``m``
    measured (the RPC experiment's only the receiver's); ``carried`` names
    what the throughput is of."""
    out = [
        Quantity(f"per_core_gbps.{config}", f"throughput per {m.per_core_side} core, {label}", "Gb/s",
                 m.per_core_gbps, pub.per_core_gbps if pub else None, "throughput"),
        Quantity(f"throughput_gbps.{config}", f"throughput of {carried}, {label}", "Gb/s",
                 m.throughput_gbps, pub.throughput_gbps if pub else None, "throughput"),
    ]
    measured = [side for side in SIDES if side in m.sides]
    for side in measured:
        out.append(Quantity(f"cpu_pct.{side}.{config}", f"{side} CPU utilisation (100 = one core), {label}", "pct",
                            m.sides[side].cpu_pct, pub.cpu_pct[side] if pub else None, "throughput"))
    for side in measured:
        for cat in CATEGORIES:
            out.append(Quantity(
                f"breakdown_pct.{side}.{cat}.{config}",
                f"{side} CPU share of {CATEGORY_LABELS[cat]}, {label}", "pct",
                m.sides[side].breakdown_pct[cat], pub.breakdown_pct[side][cat] if pub else None, "breakdown"))
    return out


def compare_l3_miss(ctx: Context, run: str, label: str, m: Metrics) -> None:
    """The prediction row of run ``run``'s receiver L3 miss rate
    (:attr:`.metrics.Metrics.l3_miss_pct`), described by ``label``."""
    ctx.compare(f"l3_miss_pct.{run}",
                f"receiver L3 miss rate (the study: perf's LLC-load-misses over LLC-loads; nicsim: the share of"
                f" the received bytes the reads copied from memory), {label}", "pct", nicsim=m.l3_miss_pct)


def _role(config: str) -> str:
    return "calibration" if config in CALIBRATION else "prediction"


def _add(ctx: Context, config: str, qs: list[Quantity]) -> None:
    for q in qs:
        ctx.compare(q.id, q.description, q.unit, nicsim=q.nicsim, published=q.published, role=_role(config))


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def series_from_single(
    rows: list[dict[str, Any]], configs: tuple[str, ...], x_key: str, single: Mapping[str, Metrics], x_single: float,
    side: str = "receiver",
) -> dict[str, tuple[list[float], list[float], list[float]]]:
    """Per configuration label, the x, per-core and ``side`` CPU values of
    ``rows`` (an experiment's table, keyed by ``config``, with
    ``<side>_cpu_pct``), led by the configuration's single-flow run at
    ``x_single`` when ``single`` has it."""
    series = {}
    for c in configs:
        mine = [r for r in rows if r["config"] == c]
        if not mine:
            continue
        lead = [single[c]] if c in single else []
        series[CONFIG[c].label] = (
            [x_single for _ in lead] + [r[x_key] for r in mine],
            [m.per_core_gbps for m in lead] + [r["per_core_gbps"] for r in mine],
            [m.sides[side].cpu_pct for m in lead] + [r[f"{side}_cpu_pct"] for r in mine],
        )
    return series


def per_core_and_cpu_figure(
    ctx: Context, name: str, series: Mapping[str, tuple[list[float], list[float], list[float]]],
    xlabel: str, xticks: list[float], side: str = "receiver",
) -> str:
    """A two-panel figure ``name``: throughput per ``side`` core and that
    side's CPU against ``x``, one line per ``series`` label (its x,
    per-core and CPU values); returns the PNG's name for the report."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
    for label, (x, per_core, cpu) in series.items():
        axes[0].plot(x, per_core, "o-", label=label)
        axes[1].plot(x, cpu, "o-", label=label)
    axes[0].set_ylabel(f"Gb/s per {side} core")
    axes[0].set_title(f"Throughput per {side} core")
    axes[1].set_ylabel(f"{side} CPU % (100 = one core)")
    axes[1].set_title(f"{side.capitalize()} CPU")
    for ax in axes:
        ax.set_xticks(xticks)
        ax.set_xlabel(xlabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return ctx.figure(fig, name, pdf=True)


def cell(x: float | None, spec: str = ".1f", unit: str = "") -> str:
    """``x`` formatted by ``spec`` and followed by ``unit``, or "–" where there is no value."""
    return "–" if x is None else f"{x:{spec}}{unit}"


def flows_table(rows: list[dict[str, Any]], x: str, per_core: str = "per receiver core",
                sender_cpu: str = "sender CPU") -> list[str]:
    """The multi-flow experiments' table: one line per row of ``rows`` (keys
    ``config``, ``x``, ``throughput_gbps``, ``per_core_gbps``,
    ``receiver_cpu_pct``, ``sender_cpu_pct``, ``jain_fairness`` and
    ``copied_from_memory_pct``), its per-core and sender columns headed
    ``per_core`` and ``sender_cpu``."""
    lines = [
        f"| config | {x} | throughput | {per_core} | receiver CPU | {sender_cpu} | fairness | copied from memory |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| `{r['config']}` | {r[x]} | {r['throughput_gbps']:.2f} Gb/s | {r['per_core_gbps']:.2f} Gb/s |"
            f" {r['receiver_cpu_pct']:.1f} % | {r['sender_cpu_pct']:.1f} % | {cell(r['jain_fairness'], '.4f')} |"
            f" {cell(r['copied_from_memory_pct'], unit=' %')} |"
        )
    return lines


def _num(x: float) -> str:
    return f"{x:.2f}" if abs(x) < 100 else f"{x:.1f}"


def _unit(unit: str) -> str:
    """A unit as the report prints it."""
    return "%" if unit == "pct" else unit


def calibration(runs: Runs, ctx: Context) -> list[str]:
    """The two calibration configurations, every published number beside nicsim's."""
    ms = metrics(ctx, runs)
    lines = [
        "The profile `cai-xeon-6128` is fitted to these two configurations only. A row misses when nicsim",
        f"is more than {TOLERANCE_PCT:.0f} % (relative) from the published value. The difference is shown too (in",
        "percentage points for the breakdown): a 10 % miss of a 0.5 % share is a twentieth of a point.",
        "",
    ]
    missed: list[str] = []
    rows: list[dict[str, Any]] = []
    for config in CALIBRATION:
        qs = quantities(config, ms[config])
        _add(ctx, config, qs)
        lines += [
            f"### {CONFIG[config].label} (`{config}`)",
            "",
            "| id | published | nicsim | error | difference | within 10 % |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for q in qs:
            assert q.published is not None
            err = comparison.error_pct(q.nicsim, q.published)
            ok = err is not None and abs(err) <= TOLERANCE_PCT
            if not ok:
                missed.append(q.id)
            diff = q.nicsim - q.published
            u = _unit(q.unit)
            lines.append(f"| `{q.id}` | {_num(q.published)} {u} | {_num(q.nicsim)} {u} |"
                         f" {comparison.pct(err)} | {diff:+.2f} {u} | {'yes' if ok else '**misses**'} |")
            rows.append({"config": config, "id": q.id, "unit": q.unit, "published": q.published,
                         "nicsim": round(q.nicsim, 4), "error_pct": None if err is None else round(err, 2),
                         "within_10pct": ok})
        lines.append("")
    ctx.csv("calibration.csv", rows)
    total = len(rows)
    if missed:
        lines += [f"**{len(missed)} of {total} calibration rows miss {TOLERANCE_PCT:.0f} %:** "
                  + ", ".join(f"`{i}`" for i in missed) + "."]
    else:
        lines += [f"All {total} calibration rows are within {TOLERANCE_PCT:.0f} %."]
    sums = [f"{config} {side} {sum(PUBLISHED[config].breakdown_pct[side].values()):.1f} %"
            for config in CALIBRATION for side in SIDES]
    lines += ["", "The published breakdowns add up to " + ", ".join(sums) + ": the study's script adds perf's",
              "kernel symbols, largest first, until they cover 95 % of the samples, and drops symbols its table does",
              "not list. nicsim's shares are counted the same way: its layers placed where the study's table puts",
              "the functions they stand for (the system call's entry and exit are `sched`, the socket calls `tcpip`,",
              "an interrupt's entry `sched`, its exit `etc`, the driver's handler `netdev`), scaled to cover 95 % of",
              "the cycles; they add up to 95 %."]
    empty = [c for c in CATEGORIES
             if all(m.sides[s].breakdown_pct[c] == 0 for m in ms.values() for s in SIDES)]
    if empty:
        lines += ["", "Categories with no cycles in any run (no nicsim layer of that category was charged): "
                  + ", ".join(f"`{c}`" for c in empty) + "."]
    return lines


def _predictions(ctx: Context, runs: Runs, kind: str) -> dict[str, Metrics]:
    """Every configuration's metrics; the prediction rows of quantity `kind`
    (the configurations outside the calibration set) go to comparison.csv."""
    ms = metrics(ctx, runs)
    for config, m in ms.items():
        if config not in CALIBRATION:
            _add(ctx, config, [q for q in quantities(config, m) if q.kind == kind])
    return ms


def throughput(runs: Runs, ctx: Context) -> list[str]:
    """Throughput, throughput per core and CPU % of each side across the configurations."""
    ms = _predictions(ctx, runs, "throughput")
    ids = list(ms)
    labels = [CONFIG[c].label for c in ids]
    rows: list[dict[str, Any]] = []
    for c, m in ms.items():
        lasted = ctx.report(runs[c]).summary.duration_s
        rows.append({"config": c, "mtu": CONFIG[c].mtu, "tso": CONFIG[c].tso, "gro": CONFIG[c].lro == "gro",
                     "arfs": CONFIG[c].arfs, "throughput_gbps": round(m.throughput_gbps, 4),
                     "per_core_gbps": round(m.per_core_gbps, 4),
                     "sender_cpu_pct": round(m.sender.cpu_pct, 2), "receiver_cpu_pct": round(m.receiver.cpu_pct, 2),
                     "sender_clocks_ghz": clocks_field(m.sender.clocks_ghz),
                     "receiver_clocks_ghz": clocks_field(m.receiver.clocks_ghz),
                     "flow_s": round(lasted, 6), "retransmissions": m.retransmissions})
    ctx.csv("throughput.csv", rows)

    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    xs = list(range(len(ids)))
    for ax, what, title in ((axes[0], "throughput_gbps", "Throughput (Gb/s)"),
                            (axes[1], "per_core_gbps", "Throughput per receiver core (Gb/s)")):
        vals = [getattr(ms[c], what) for c in ids]
        ax.bar(xs, vals, 0.6, color="#4c72b0", label="nicsim")
        pub = [(i, getattr(PUBLISHED[c], what)) for i, c in enumerate(ids) if c in PUBLISHED]
        ax.scatter([i for i, _ in pub], [v for _, v in pub], marker="_", s=600, color="black", linewidths=2.5,
                   label="published", zorder=3)
        marked = dict(pub)
        for i, v in zip(xs, vals):
            # Above the published mark too, where there is one, so that it stays visible.
            ax.annotate(f"{v:.1f}", (i, max(v, marked.get(i, v))), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7)
        ax.set_ylim(top=ax.get_ylim()[1] * 1.06)  # room for the labels
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig_t = ctx.figure(fig, "throughput", pdf=True)

    fig, ax = plt.subplots(figsize=(8, 4))
    w = 0.38
    for k, (side, color) in enumerate((("sender", "#55a868"), ("receiver", "#c44e52"))):
        x = [i + (k - 0.5) * w for i in xs]
        ax.bar(x, [ms[c].sides[side].cpu_pct for c in ids], w * 0.95, color=color, label=f"{side} (nicsim)")
        marks = [(x[i], PUBLISHED[c].cpu_pct[side]) for i, c in enumerate(ids) if c in PUBLISHED]
        ax.scatter([p for p, _ in marks], [v for _, v in marks], marker="_", s=250, color="black", linewidths=2.5,
                   label="published" if k == 0 else None, zorder=3)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("CPU utilisation (%; 100 = one core)")
    ax.set_title("CPU used by each side")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig_c = ctx.figure(fig, "cpu", pdf=True)

    lines = [
        f"![throughput and throughput per core]({fig_t})",
        "",
        f"![CPU per side]({fig_c})",
        "",
        "| config | MTU | TSO | GRO | aRFS | throughput | per core | sender CPU | receiver CPU | sender clocks | receiver clocks"
        " | flow | retransmissions |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| `{r['config']}` | {r['mtu']} | {_yes(r['tso'])} | {_yes(r['gro'])} | {_yes(r['arfs'])} |"
            f" {r['throughput_gbps']:.2f} Gb/s | {r['per_core_gbps']:.2f} Gb/s | {r['sender_cpu_pct']:.1f} % |"
            f" {r['receiver_cpu_pct']:.1f} % | {clocks_text(r['sender_clocks_ghz'])} | {clocks_text(r['receiver_clocks_ghz'])} |"
            f" {r['flow_s'] * 1e3:.1f} ms | {r['retransmissions']} |"
        )
    lines += ["", "Black marks: the published values of the calibration configurations; the others are held out.",
              "Flow: from the first byte sent to the last byte delivered (the sender stops after the run's",
              "duration; the buffered bytes drain after it); throughput is the delivered bytes over that time.",
              "Clocks: each busy core's mean clock while busy, in core order (the interrupt core first without aRFS),",
              "as Linux's `intel_pstate` sets it from the core's load (`cpu.pstate`; turbo 3.7 GHz)."]
    retx = [f"`{r['config']}` ({r['retransmissions']})" for r in rows if r["retransmissions"]]
    if retx:
        lines += ["", "**Flows with retransmissions** (a retransmission timeout stalls the flow and its throughput is"
                  " averaged over the stall): " + ", ".join(retx) + "."]
    return lines


def clocks_field(ghz: Iterable[float]) -> str:
    """Busy cores' clocks (GHz) as a CSV field: ``"3.70 2.21"``."""
    return " ".join(f"{g:.2f}" for g in ghz)


def clocks_text(clocks: str) -> str:
    """Busy cores' clocks as a table cell (``"3.70 2.21"`` -> ``"3.70 / 2.21 GHz"``; none: ``"–"``)."""
    return " / ".join(clocks.split()) + " GHz" if clocks else "–"


def _yes(b: bool) -> str:
    return "on" if b else "off"


def breakdowns(runs: Runs, ctx: Context) -> list[str]:
    """The CPU breakdown by category: stacked bars per configuration, one panel per side."""
    ms = _predictions(ctx, runs, "breakdown")
    ids = list(ms)
    rows: list[dict[str, Any]] = []
    for c, m in ms.items():
        for side in SIDES:
            for cat in CATEGORIES:
                pub = PUBLISHED[c].breakdown_pct[side][cat] if c in PUBLISHED else None
                rows.append({"config": c, "side": side, "category": cat,
                             "nicsim_pct": round(m.sides[side].breakdown_pct[cat], 3), "published_pct": pub})
    ctx.csv("breakdown.csv", rows)
    layer_rows = [{"config": c, "side": side, "layer": layer, "category": LAYER_CATEGORY.get(layer, "etc"),
                   "cycles": v}
                  for c, m in ms.items() for side in SIDES for layer, v in sorted(m.sides[side].cycles.items())]
    ctx.csv("layers.csv", layer_rows)

    # Bars: nicsim for every configuration; beside each calibration one, the published breakdown (hatched).
    bars: list[tuple[str, str, Mapping[str, Mapping[str, float]]]] = []
    for c in ids:
        bars.append((CONFIG[c].label, "nicsim", {s: ms[c].sides[s].breakdown_pct for s in SIDES}))
        if c in PUBLISHED:
            bars.append((f"{CONFIG[c].label} (published)", "published", PUBLISHED[c].breakdown_pct))
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    for ax, side in zip(axes, SIDES):
        for i, (_, source, br) in enumerate(bars):
            bottom = 0.0
            for cat in CATEGORIES:
                v = br[side][cat]
                ax.bar(i, v, 0.7, bottom=bottom, color=COLORS[cat], hatch="//" if source == "published" else None,
                       edgecolor="white", linewidth=0.3, label=CATEGORY_LABELS[cat] if i == 0 else None)
                bottom += v
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels([b[0] for b in bars], rotation=35, ha="right", fontsize=7)
        ax.set_title(f"{side} CPU by category")
        ax.set_ylim(0, 100)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("% of the side's CPU cycles")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    png = ctx.figure(fig, "breakdown", pdf=True)

    lines = [f"![CPU breakdown]({png})", "",
             "Hatched bars: the published breakdowns of the calibration configurations.", ""]
    for side in SIDES:
        lines += [
            f"**{side}** (% of the side's CPU cycles)",
            "",
            "| config | " + " | ".join(CATEGORY_LABELS[c] for c in CATEGORIES) + " |",
            "| --- |" + " --- |" * len(CATEGORIES),
        ]
        for c in ids:
            mine = ms[c].sides[side].breakdown_pct
            lines.append(f"| `{c}` | " + " | ".join(f"{mine[cat]:.1f}" for cat in CATEGORIES) + " |")
            if c in PUBLISHED:
                pb = PUBLISHED[c].breakdown_pct[side]
                lines.append("| published | " + " | ".join(f"{pb[cat]:.1f}" for cat in CATEGORIES) + " |")
        lines.append("")
    return lines
