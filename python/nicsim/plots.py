"""Figures of nicsim results: NetPIPE's three graphs, curves over a sweep of
block sizes, and where the CPU cycles of timed hosts went.

Every function builds a :class:`matplotlib.figure.Figure` on the Agg canvas
(no window, no pyplot state), returns it, and saves it when given ``path``
(see :func:`save`: a ``.png`` or ``.pdf`` name writes that file, any other
name is a stem that gets both). Units are on every axis: sizes in bytes
(log₂ axis, ticks in B, KiB, MiB), times in seconds (log axis, ticks in ns,
µs, ms, s), throughput in NetPIPE's Mbps (2^20 bit/s) unless ``si=True``
asks for Mbit/s (10^6 bit/s).

NetPIPE inputs (``sources``) are one or a list of: a :class:`~nicsim.Result`,
a table like :meth:`Result.netpipe_table <nicsim.Result.netpipe_table>`
(columns ``bytes`` and ``time_s``, optionally ``mbps`` and ``mbit_s_si``), a
result directory holding ``netpipe.csv``, or such a CSV file.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from .result import Result

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

NetpipeSource = Union[Result, "pd.DataFrame", str, "os.PathLike[str]"]
"""One NetPIPE run: a Result, a netpipe table, a result directory or a
``netpipe.csv`` file."""

FIGSIZE = (7.0, 4.5)
"""Figure size in inches."""
DPI = 150
"""PNG resolution: a 7 × 4.5 in figure is 1050 × 675 pixels."""
FORMATS = (".png", ".pdf")
"""What :func:`save` writes for a stem."""
KNEE_SLOPE = 0.9
"""Log-log slope of time over size that counts as linear growth for
:func:`saturation_knee`: doubling the block size multiplies the time by at
least 2^0.9 ≈ 1.87."""
PIE_MIN_SHARE = 0.02
"""Layers below this share of a host's cycles are merged into "other" in
:func:`layer_pie`."""

MBPS_LABEL = "Throughput (Mbps, 1 Mbps = $2^{20}$ bit/s as in NetPIPE)"
SI_LABEL = "Throughput (Mbit/s, 1 Mbit/s = $10^{6}$ bit/s)"
SIZE_LABEL = "Block size (bytes)"


# --- inputs -----------------------------------------------------------------


def load_netpipe(
    sources: NetpipeSource | Sequence[NetpipeSource],
    labels: Sequence[str] | None = None,
) -> list[tuple[str, pd.DataFrame]]:
    """The NetPIPE curves of ``sources`` as ``(label, table)`` pairs, each
    table sorted by block size with ``bytes``, ``time_s``, ``mbps`` and
    ``mbit_s_si``. ``labels`` (one per source) default to the scenario's name,
    else the directory or file name, else ``run i``."""
    import pandas as pd

    items = _as_list(sources)
    if labels is not None and len(labels) != len(items):
        raise ValueError(f"{len(labels)} labels for {len(items)} NetPIPE runs")
    curves = []
    for i, item in enumerate(items):
        default = f"run {i + 1}"
        if isinstance(item, Result):
            table, default = item.netpipe_table(), item.name or default
        elif isinstance(item, pd.DataFrame):
            table = item
        else:
            table, default = _read_netpipe_csv(Path(item))
        curves.append((str(labels[i]) if labels is not None else default, _netpipe_frame(table)))
    return curves


def _as_list(sources: Any) -> list[Any]:
    import pandas as pd

    if isinstance(sources, (Result, pd.DataFrame, str, os.PathLike)):
        return [sources]
    return list(sources)


def _read_netpipe_csv(path: Path) -> tuple[pd.DataFrame, str]:
    """A result directory's (or a file's) NetPIPE table and its default label."""
    import json

    import pandas as pd

    csv = path / "netpipe.csv" if path.is_dir() else path
    if not csv.is_file():
        raise FileNotFoundError(f"{path}: no netpipe.csv (not a NetPIPE result?)")
    label = path.name if path.is_dir() else path.stem
    report = csv.parent / "result.json"
    if report.is_file():
        try:
            label = json.loads(report.read_text(encoding="utf-8"))["scenario"]["name"] or label
        except (ValueError, KeyError, TypeError):
            pass
    return pd.read_csv(csv), label


def _netpipe_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The table sorted by size, with both throughput columns."""
    missing = {"bytes", "time_s"} - set(table.columns)
    if missing:
        raise ValueError(f"a NetPIPE table needs columns bytes and time_s; missing {sorted(missing)}")
    t = table.sort_values("bytes", kind="stable").reset_index(drop=True)
    t = t[t["time_s"] > 0].copy()
    bits_per_s = t["bytes"] * 8 / t["time_s"]
    if "mbps" not in t:
        t["mbps"] = bits_per_s / 2**20
    if "mbit_s_si" not in t:
        t["mbit_s_si"] = bits_per_s / 1e6
    return t


# --- the saturation knee ----------------------------------------------------


def saturation_knee(
    table: NetpipeSource | pd.DataFrame, slope: float = KNEE_SLOPE
) -> int | None:
    """The saturation point of a NetPIPE curve: the smallest block size from
    which on the time grows about linearly with the size, or ``None``.

    The rule: for each size n, take the first measured size m ≥ 2n and the
    log-log slope s(n) = log(t(m) / t(n)) / log(m / n) (1 for a time
    proportional to size, 0 for a constant time; comparing sizes at least a
    factor 2 apart keeps NetPIPE's ±3-byte perturbations from adding noise).
    The knee is the smallest n with s(k) ≥ ``slope`` for n and every larger
    size k that has such a partner. For t = a + b·n (a latency plus a
    transfer at rate 1/b) and the default 0.9 this is the first measured size
    with b·n ≥ 6.5·a. Sizes too close to the largest to have a partner cannot
    break the rule; a curve whose last slope is below ``slope`` has no knee.
    """
    [(_, t)] = load_netpipe(table)
    best = t.groupby("bytes", sort=True)["time_s"].min()
    sizes, times = list(best.index), list(best.to_numpy())
    knee = None
    for i in range(len(sizes) - 1, -1, -1):
        partner = next((j for j in range(i + 1, len(sizes)) if sizes[j] >= 2 * sizes[i]), None)
        if partner is None:
            continue
        s = math.log(times[partner] / times[i]) / math.log(sizes[partner] / sizes[i])
        if s < slope:
            break
        knee = int(sizes[i])
    return knee


# --- NetPIPE graphs ---------------------------------------------------------


def throughput_vs_size(
    sources: NetpipeSource | Sequence[NetpipeSource],
    labels: Sequence[str] | None = None,
    *,
    si: bool = False,
    title: str = "NetPIPE throughput vs block size",
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """Throughput over block size (log₂ x axis), one curve per run; the
    legend gives each run's peak."""
    fig, ax = _figure(title)
    column = "mbit_s_si" if si else "mbps"
    unit = "Mbit/s" if si else "Mbps"
    curves = load_netpipe(sources, labels)
    for label, t in curves:
        if not t.empty:
            label = f"{label} (peak {t[column].max():.1f} {unit})"
        ax.plot(t["bytes"], t[column], marker="o", markersize=2.5, linewidth=1.2, label=label)
    _size_axis(ax, "x")
    ax.set_ylabel(SI_LABEL if si else MBPS_LABEL)
    _legend_headroom(ax, len(curves))
    _finish(ax, "upper left")
    return _saved(fig, path)


def signature(
    sources: NetpipeSource | Sequence[NetpipeSource],
    labels: Sequence[str] | None = None,
    *,
    si: bool = False,
    title: str = "NetPIPE signature graph",
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """NetPIPE's signature graph: throughput over one-way time (log time
    axis). Each curve's first point, the smallest block, is its latency: it
    is circled, a dotted line marks its time, and the legend gives it (one
    curve also gets an arrow and text)."""
    fig, ax = _figure(title)
    column = "mbit_s_si" if si else "mbps"
    curves = load_netpipe(sources, labels)
    for label, t in curves:
        if t.empty:
            ax.plot([], [], label=label)
            continue
        first = t.iloc[0]
        latency = f"latency {_time_text(first['time_s'])}"
        (line,) = ax.plot(t["time_s"], t[column], marker="o", markersize=2.5, linewidth=1.2,
                          label=f"{label} ({latency})")  # fmt: skip
        color = line.get_color()
        ax.axvline(first["time_s"], color=color, linestyle=":", linewidth=0.9)
        ax.plot([first["time_s"]], [first[column]], marker="o", markersize=7, color=color,
                fillstyle="none", clip_on=False)  # fmt: skip
        if len(curves) == 1:
            ax.annotate(latency, xy=(first["time_s"], first[column]), xytext=(24, 40),
                        textcoords="offset points", color=color,
                        arrowprops={"arrowstyle": "->", "color": color, "linewidth": 0.8})  # fmt: skip
    _time_axis(ax, "x", "One-way time per block")
    ax.set_ylabel(SI_LABEL if si else MBPS_LABEL)
    _legend_headroom(ax, len(curves))
    _finish(ax, "upper left")
    return _saved(fig, path)


def saturation(
    sources: NetpipeSource | Sequence[NetpipeSource],
    labels: Sequence[str] | None = None,
    *,
    slope: float = KNEE_SLOPE,
    title: str = "NetPIPE saturation graph",
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """NetPIPE's saturation graph: one-way time over block size, log-log,
    with each curve's saturation knee (:func:`saturation_knee`) circled,
    marked by a dashed line and given in the legend (one curve also gets an
    arrow and text)."""
    fig, ax = _figure(title)
    curves = load_netpipe(sources, labels)
    for label, t in curves:
        knee = saturation_knee(t, slope) if not t.empty else None
        text = f"saturation from {knee:,} B" if knee is not None else "no saturation point"
        (line,) = ax.plot(t["bytes"], t["time_s"], marker="o", markersize=2.5, linewidth=1.2,
                          label=f"{label} ({text})")  # fmt: skip
        if knee is None:
            continue
        at = float(t.loc[t["bytes"] == knee, "time_s"].min())
        color = line.get_color()
        ax.axvline(knee, color=color, linestyle="--", linewidth=0.8)
        ax.plot([knee], [at], marker="o", markersize=7, color=color, fillstyle="none")
        if len(curves) == 1:
            ax.annotate(text, xy=(knee, at), xytext=(-12, 30), textcoords="offset points",
                        ha="right", color=color,
                        arrowprops={"arrowstyle": "->", "color": color, "linewidth": 0.8})  # fmt: skip
    _size_axis(ax, "x")
    _time_axis(ax, "y", "One-way time per block")
    _finish(ax, "upper left")
    return _saved(fig, path)


def rtt_vs_size(
    sources: NetpipeSource | Sequence[NetpipeSource],
    labels: Sequence[str] | None = None,
    *,
    title: str = "Round-trip time vs block size",
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """Round-trip time (2 × NetPIPE's one-way time, so ping-pong runs only)
    over block size, log-log."""
    fig, ax = _figure(title)
    for label, t in load_netpipe(sources, labels):
        ax.plot(t["bytes"], 2 * t["time_s"], marker="o", markersize=2.5, linewidth=1.2,
                label=label)  # fmt: skip
    _size_axis(ax, "x")
    _time_axis(ax, "y", "Round-trip time")
    _finish(ax, "upper left")
    return _saved(fig, path)


# --- any value over a sweep of sizes ----------------------------------------

Series = Sequence[tuple[float, float]]
"""One curve: (block size in bytes, value) pairs."""


def series_vs_size(
    series: Series | Sequence[Series],
    labels: Sequence[str] | None = None,
    *,
    ylabel: str,
    title: str,
    scale: float = 1.0,
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """Any measured value over block size (log₂ x axis): ``series`` is one
    list of ``(size, value)`` pairs or a list of them, one per label; each
    value is multiplied by ``scale`` before it is drawn."""
    curves = _as_series(series)
    if labels is not None and len(labels) != len(curves):
        raise ValueError(f"{len(labels)} labels for {len(curves)} series")
    fig, ax = _figure(title)
    for i, curve in enumerate(curves):
        points = sorted((float(x), float(y) * scale) for x, y in curve)
        label = str(labels[i]) if labels is not None else None
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3,
                linewidth=1.2, label=label)  # fmt: skip
    _size_axis(ax, "x")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    _finish(ax, "best", legend=labels is not None)
    return _saved(fig, path)


def cpu_load_vs_size(
    series: Series | Sequence[Series],
    labels: Sequence[str] | None = None,
    *,
    title: str = "CPU load vs block size",
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """CPU utilization over block size; values are shares from 0 to 1 (as
    in :meth:`Result.hosts_table <nicsim.Result.hosts_table>`), drawn in %."""
    return series_vs_size(series, labels, ylabel="CPU utilization (%)", title=title, scale=100,
                          path=path)  # fmt: skip


def interrupts_vs_size(
    series: Series | Sequence[Series],
    labels: Sequence[str] | None = None,
    *,
    title: str = "Interrupt rate vs block size",
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """Interrupts per second over block size."""
    return series_vs_size(series, labels, ylabel="Interrupts per second", title=title, path=path)


def _as_series(series: Any) -> list[list[tuple[float, float]]]:
    """One series or a list of series, as a list of series."""
    items = list(series)
    if items and _is_pair(items[0]):
        return [items]
    return [list(s) for s in items]


def _is_pair(item: Any) -> bool:
    try:
        x, y = item
        float(x), float(y)
    except (TypeError, ValueError):
        return False
    return True


# --- CPU cycles by layer ----------------------------------------------------


def layer_bars(
    cycles: Result | pd.DataFrame,
    *,
    share: bool = False,
    title: str = "CPU cycles by layer",
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """One stacked bar per timed host, one segment per layer: the cycles
    (all cores) or, with ``share=True``, each layer's share in %. ``cycles``
    is a :meth:`Result.cycles_table <nicsim.Result.cycles_table>` (columns
    host, layer, cycles) or the Result itself."""
    table = _cycles_frame(cycles)
    fig, ax = _figure(title)
    if table.empty:
        ax.text(0.5, 0.5, "no timed host", ha="center", va="center", transform=ax.transAxes)
        return _saved(fig, path)
    pivot = table.pivot_table(index="host", columns="layer", values="cycles", aggfunc="sum",
                              sort=False).fillna(0)  # fmt: skip
    order = list(pivot.sum().sort_values(ascending=False, kind="stable").index)
    pivot = pivot[order]
    if share:
        pivot = pivot.div(pivot.sum(axis=1), axis=0) * 100
        ylabel, factor = "Share of the host's CPU cycles (%)", 1.0
    else:
        factor, unit = _count_unit(float(pivot.sum(axis=1).max()))
        ylabel = f"CPU cycles ({unit})" if unit else "CPU cycles"
    colors = _layer_colors(order)
    hosts = [str(h) for h in pivot.index]
    bottom = [0.0] * len(hosts)
    for layer in order:
        values = [float(v) / factor for v in pivot[layer]]
        ax.bar(hosts, values, bottom=bottom, width=0.6, label=layer, color=colors[layer],
               edgecolor="white", linewidth=0.5)  # fmt: skip
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xlabel("Host")
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    handles, names = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], names[::-1], title="layer", loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)  # fmt: skip
    return _saved(fig, path)


def layer_pie(
    cycles: Result | pd.DataFrame,
    host: str,
    *,
    title: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """One host's CPU cycles as a pie by layer; layers under
    :data:`PIE_MIN_SHARE` are merged into "other"."""
    table = _cycles_frame(cycles)
    mine = table[table["host"] == host]
    if mine.empty:
        raise ValueError(f"no cycles for host {host!r}; timed hosts: {sorted(set(table['host']))}")
    by_layer = mine.groupby("layer", sort=False)["cycles"].sum()
    order = list(table.groupby("layer", sort=False)["cycles"].sum().sort_values(
        ascending=False, kind="stable").index)  # fmt: skip
    colors = _layer_colors(order)
    total = float(by_layer.sum())
    wedges: list[tuple[str, float, Any]] = []
    other = 0.0
    for layer in order:
        n = float(by_layer.get(layer, 0))
        if n <= 0:
            continue
        if n / total < PIE_MIN_SHARE:
            other += n
        else:
            wedges.append((layer, n, colors[layer]))
    if other > 0:
        wedges.append(("other", other, "0.75"))
    fig, ax = _figure(title or f"CPU cycles by layer on host {host}")
    ax.pie(
        [w[1] for w in wedges],
        colors=[w[2] for w in wedges],
        autopct=lambda pct: f"{pct:.0f} %" if pct >= 4 else "",
        pctdistance=0.75,
        startangle=90,
        counterclock=False,
        wedgeprops={"edgecolor": "white", "linewidth": 0.8},
        textprops={"fontsize": "small"},
    )
    ax.set_aspect("equal")
    ax.legend([f"{w[0]} ({100 * w[1] / total:.1f} %)" for w in wedges], title="layer",
              loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small",
              frameon=False)  # fmt: skip
    return _saved(fig, path)


def _cycles_frame(cycles: Result | pd.DataFrame) -> pd.DataFrame:
    table = cycles.cycles_table() if isinstance(cycles, Result) else cycles
    missing = {"host", "layer", "cycles"} - set(table.columns)
    if missing:
        raise ValueError(f"a cycles table needs columns host, layer, cycles; missing {sorted(missing)}")
    return table


def _layer_colors(order: Sequence[str]) -> dict[str, Any]:
    """A colour per layer, in the order given (most cycles first): the ten
    distinct colours of tab10, then tab20 when there are more layers."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(order) <= 10 else "tab20"]
    return {layer: cmap(i % cmap.N) for i, layer in enumerate(order)}


def _count_unit(largest: float) -> tuple[float, str]:
    for factor, unit in ((1e9, "billions"), (1e6, "millions"), (1e3, "thousands")):
        if largest >= 10 * factor:
            return factor, unit
    return 1.0, ""


# --- the figures of a run ---------------------------------------------------

NETPIPE_FIGURES = ("netpipe-throughput", "netpipe-signature", "netpipe-saturation")
"""File stems of :func:`netpipe_figures`: throughput vs size, signature and
saturation graphs."""
LAYERS_FIGURE = "cycles-by-layer"
"""File stem of the per-layer bars :func:`result_figures` writes for timed hosts."""


def netpipe_figures(
    sources: NetpipeSource | Sequence[NetpipeSource],
    out_dir: str | os.PathLike[str],
    labels: Sequence[str] | None = None,
) -> list[Path]:
    """Write NetPIPE's three graphs of ``sources`` (overlaid when several)
    into ``out_dir`` as PNG and PDF (:data:`NETPIPE_FIGURES`) and return the
    files written."""
    curves = load_netpipe(sources, labels)
    tables, names = [t for _, t in curves], [label for label, _ in curves]
    out = Path(out_dir)
    written: list[Path] = []
    graphs: tuple[Callable[..., Figure], ...] = (throughput_vs_size, signature, saturation)
    for stem, draw in zip(NETPIPE_FIGURES, graphs):
        written += save(draw(tables, names), out / stem)
    return written


def result_figures(result: Result, out_dir: str | os.PathLike[str]) -> list[Path]:
    """The figures ``nicsim run`` writes for one run: NetPIPE's three graphs
    for a NetPIPE run and the cycles per layer (:func:`layer_bars`) when a
    host is timed; PNG and PDF each. Returns the files written (none for an
    untimed bulk or request/response run)."""
    written: list[Path] = []
    if result.netpipe:
        written += netpipe_figures(result, out_dir)
    cycles = result.cycles_table()
    if not cycles.empty:
        title = f"CPU cycles by layer ({result.name})" if result.name else "CPU cycles by layer"
        written += save(layer_bars(cycles, title=title), Path(out_dir) / LAYERS_FIGURE)
    return written


# --- saving -----------------------------------------------------------------


def save(fig: Figure, path: str | os.PathLike[str]) -> list[Path]:
    """Write ``fig`` and return the files written: ``path`` itself when it
    ends in ``.png`` or ``.pdf``, else ``path.png`` and ``path.pdf`` (a stem).
    Parent directories are created. A figure built twice from the same data
    gives the same bytes (the PDF carries no creation date)."""
    p = Path(path)
    targets = [p] if p.suffix.lower() in FORMATS else [p.with_name(p.name + ext) for ext in FORMATS]
    p.parent.mkdir(parents=True, exist_ok=True)
    for target in targets:
        if target.suffix.lower() == ".pdf":
            fig.savefig(target, metadata={"CreationDate": None})
        else:
            fig.savefig(target, dpi=DPI)
    return targets


def _saved(fig: Figure, path: str | os.PathLike[str] | None) -> Figure:
    if path is not None:
        save(fig, path)
    return fig


# --- axes -------------------------------------------------------------------


def _figure(title: str) -> tuple[Figure, Axes]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title)
    return fig, ax


def _finish(ax: Axes, legend_at: str, legend: bool = True) -> None:
    ax.grid(which="major", color="0.85", linewidth=0.6)
    ax.grid(which="minor", color="0.94", linewidth=0.4)
    ax.set_axisbelow(True)
    if legend and ax.get_legend_handles_labels()[0]:
        options: dict[str, Any] = {"loc": legend_at, "fontsize": "small"}
        ax.legend(**options)


def _legend_headroom(ax: Axes, entries: int) -> None:
    """Start the y axis at 0 and leave room above the highest curve for a
    legend of ``entries`` lines in the upper left corner."""
    top = float(ax.dataLim.ymax) if ax.has_data() else 0.0
    if math.isfinite(top) and top > 0:
        ax.set_ylim(0, top * (1.06 + 0.07 * entries))
    else:
        ax.set_ylim(bottom=0)


def _size_axis(ax: Axes, which: str) -> None:
    """A log₂ axis of block sizes with ticks at powers of 2 in B, KiB, MiB."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=2)
    lo, hi = ax.get_xlim() if which == "x" else ax.get_ylim()
    decades = math.log2(max(hi, 2.0)) - math.log2(max(lo, 1.0))
    step = 1 if decades <= 12 else 2 if decades <= 24 else 4
    axis.set_major_locator(LogLocator(base=2.0**step, numticks=40))
    axis.set_major_formatter(FuncFormatter(lambda v, _: _size_text(v)))
    axis.set_minor_locator(LogLocator(base=2.0, numticks=80))
    axis.set_minor_formatter(NullFormatter())
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(SIZE_LABEL)


def _time_axis(ax: Axes, which: str, quantity: str) -> None:
    """A log₁₀ axis of seconds with ticks written in ns, µs, ms or s."""
    from matplotlib.ticker import FuncFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_formatter(FuncFormatter(lambda v, _: _time_text(v, tick=True)))
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(f"{quantity} (s, log scale)")


def _size_text(n: float) -> str:
    """1 B, 512 B, 1 KiB, 1.5 KiB, 8 MiB."""
    if n <= 0:
        return ""
    for factor, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if n >= factor:
            return f"{n / factor:.3g} {unit}"
    return f"{n:.0f} B"


def _time_text(seconds: float, tick: bool = False) -> str:
    """1.228 µs, 10 ms; ticks (powers of ten) without decimals."""
    if seconds <= 0:
        return ""
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if seconds >= factor * 0.9995 or unit == "ns":
            value = seconds / factor
            return f"{value:.0f} {unit}" if tick else f"{value:.4g} {unit}"
    return ""
