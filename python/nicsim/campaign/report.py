"""Sweep reports: a Markdown (and optionally HTML) page with a table of the
swept knobs against the summary metrics and one figure per swept knob.

Each figure plots the metric (mean over replicas; the bars span the
replicas' standard deviation) against one knob, one line per combination of
the other knobs' values. Knob values are shown as written in the sweep and
ordered by magnitude (``100Mbps < 1Gbps``), evenly spaced.
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .units import parse_quantity

if TYPE_CHECKING:
    import pandas as pd

METRICS: dict[str, tuple[str, float]] = {
    "goodput_bps": ("goodput (Mbit/s)", 1e-6),
    "transaction_rate": ("transactions per second", 1.0),
    "mean_latency_s": ("mean latency (µs)", 1e6),
    "p99_latency_s": ("p99 latency (µs)", 1e6),
    "duration_s": ("duration (ms)", 1e3),
    "frames": ("frames", 1.0),
    "retransmissions": ("retransmissions", 1.0),
    "drops": ("queue drops", 1.0),
}
"""Summary fields a report knows how to label, with their display scale."""

DEFAULT_METRICS = ("transaction_rate", "goodput_bps", "mean_latency_s", "duration_s")
"""The first of these with data is plotted when none is asked for (bulk
transfers have no transaction rate)."""

MAX_LINES = 10
"""More combinations of the other knobs than this are averaged into one line."""

NOT_KNOBS = {"sweep", "point"}


def swept_knobs(frame: pd.DataFrame) -> list[str]:
    """The knob columns of a sweep table: those between ``point`` and
    ``replica``."""
    cols = list(frame.columns)
    if "point" not in cols or "replica" not in cols:
        return []
    return [c for c in cols[cols.index("point") + 1 : cols.index("replica")] if c not in NOT_KNOBS]


def default_metrics(frame: pd.DataFrame) -> list[str]:
    """The metric to plot: the first of :data:`DEFAULT_METRICS` with data."""
    for name in DEFAULT_METRICS:
        if name in frame.columns and frame[name].notna().any():
            return [name]
    return []


def ordered_values(values: Sequence[Any]) -> list[Any]:
    """Distinct values, by magnitude when they are numbers or quantities of
    one kind, else in order of first appearance."""
    distinct: list[Any] = []
    for v in values:
        if not any(_same(v, d) for d in distinct):
            distinct.append(v)
    quantities = [parse_quantity(v) if isinstance(v, str) else None for v in distinct]
    if (
        distinct
        and all(q is not None for q in quantities)
        and len({q.kind for q in quantities if q}) == 1
    ):
        return [
            v
            for _, v in sorted(
                zip([q.value for q in quantities if q], distinct), key=lambda t: t[0]
            )
        ]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in distinct):
        return sorted(distinct)
    return distinct


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _label(value: Any) -> str:
    """A knob value as the sweep file would write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return value if isinstance(value, str) else repr(value)


def _hashable(value: Any) -> Any:
    return _label(value) if isinstance(value, (list, dict)) else value


def aggregate(frame: pd.DataFrame, knobs: list[str], metrics: list[str]) -> pd.DataFrame:
    """Mean (and standard deviation, ``<metric>_std``) of each metric over
    the replicas of each point, for the runs that succeeded; ``runs`` counts
    them."""
    import pandas as pd

    ok = frame[frame["status"] == "ok"] if "status" in frame.columns else frame
    rows = []
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, point in enumerate(
        ok[knobs].itertuples(index=False, name=None) if knobs else [()] * len(ok)
    ):
        groups.setdefault(tuple(_hashable(v) for v in point), []).append(i)
    for members in groups.values():
        part = ok.iloc[members]
        row: dict[str, Any] = dict(zip(knobs, part[knobs].iloc[0].tolist() if knobs else []))
        row["runs"] = len(members)
        for m in metrics:
            cells = [_number(v) for v in part[m]] if m in part.columns else []
            values = [v for v in cells if not math.isnan(v)]
            row[m] = sum(values) / len(values) if values else math.nan
            row[f"{m}_std"] = _std(values) if len(values) > 1 else 0.0
        rows.append(row)
    return pd.DataFrame(
        rows, columns=[*knobs, "runs", *[c for m in metrics for c in (m, f"{m}_std")]]
    )


def plot_knob(
    table: pd.DataFrame, axis: Sequence[str], knobs: list[str], metric: str, path: Path
) -> Path:
    """One PNG: ``metric`` against ``axis`` (a knob, or zipped knobs that
    move together, named by the first), a line per combination of the other
    knobs (from :func:`aggregate`'s table). The y axis is logarithmic when
    the values span more than two decades."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label, scale = METRICS.get(metric, (metric, 1.0))
    knob = axis[0]
    xs = ordered_values(list(table[knob]))
    position = {_label(v): i for i, v in enumerate(xs)}
    others = [k for k in knobs if k not in axis]
    rank = {k: {_label(v): i for i, v in enumerate(ordered_values(list(table[k])))} for k in others}
    lines: dict[tuple[int, ...], tuple[str, list[tuple[int, float, float]]]] = {}
    combos = {tuple(_label(v) for v in r) for r in table[others].itertuples(index=False, name=None)}
    merge = len(combos) > MAX_LINES
    for _, row in table.iterrows():
        if merge or not others:
            order: tuple[int, ...] = ()
            name = f"mean over {len(combos)} combinations of the other knobs" if merge else ""
        else:
            order = tuple(rank[k][_label(row[k])] for k in others)
            name = ", ".join(f"{k}={_label(row[k])}" for k in others)
        lines.setdefault(order, (name, []))[1].append(
            (position[_label(row[knob])], row[metric] * scale, row[f"{metric}_std"] * scale)
        )
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    ys: list[float] = []
    for _, (name, pts) in sorted(lines.items()):
        if merge:  # average over the other knobs: mean and spread per x
            by_x: dict[int, list[float]] = {}
            for x, y, _ in pts:
                by_x.setdefault(x, []).append(y)
            pts = [(x, sum(v) / len(v), _std(v)) for x, v in by_x.items()]
        pts.sort()
        ys += [p[1] for p in pts if not math.isnan(p[1])]
        ax.errorbar(
            [p[0] for p in pts],
            [p[1] for p in pts],
            yerr=[0 if math.isnan(p[2]) else p[2] for p in pts],
            marker="o",
            capsize=3,
            label=name or None,
        )
    many = len(xs) > 6
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels(
        [_label(v) for v in xs], rotation=30 if many else 0, ha="right" if many else "center"
    )
    ax.set_xlabel(" = ".join(axis) if len(axis) > 1 else knob)
    ax.set_ylabel(label)
    if ys and min(ys) > 0 and max(ys) / min(ys) > 100:
        ax.set_yscale("log")
    ax.set_title(f"{label} vs {knob}")
    ax.grid(True, alpha=0.3)
    if any(name for name, _ in lines.values()):
        ax.legend(fontsize="small")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _number(value: Any) -> float:
    """A table cell as a float; NaN when it is empty or not a number."""
    try:
        return math.nan if value is None else float(value)
    except (TypeError, ValueError):
        return math.nan


def _std(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def _file_stem(knob: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in knob).strip("_")


def _cell(value: Any, scale: float = 1.0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value * scale:.6g}"
    return _label(value)


def write_report(
    frame: pd.DataFrame,
    out: str | os.PathLike[str],
    *,
    title: str,
    description: str = "",
    metrics: Sequence[str] | None = None,
    html_page: bool = False,
    facts: Sequence[tuple[str, str]] = (),
    axes: Sequence[Sequence[str]] | None = None,
) -> list[Path]:
    """Write ``report.md`` (and ``report.html``) with a figure per swept knob
    into ``out``; returns the files written. ``axes`` groups knobs that move
    together (a zip group): one figure per group, against its first knob."""
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    knobs = swept_knobs(frame)
    groups = [list(a) for a in axes if a and a[0] in knobs] if axes else [[k] for k in knobs]
    chosen = list(metrics) if metrics else default_metrics(frame)
    missing = [m for m in chosen if m not in frame.columns]
    if missing:
        raise ValueError(
            f"no metric {missing[0]!r} in the results; have {', '.join(frame.columns)}"
        )
    table = aggregate(frame, knobs, chosen)
    written: list[Path] = []
    figures: list[tuple[str, Path]] = []
    if len(table):
        for axis in groups:
            knob = axis[0]
            if len(ordered_values(list(table[knob]))) < 2:
                continue
            for m in chosen:
                name = (
                    f"{_file_stem(knob)}.png" if len(chosen) == 1 else f"{m}-{_file_stem(knob)}.png"
                )
                caption = f"{METRICS.get(m, (m, 1))[0]} vs {' = '.join(axis)}"
                figures.append((caption, plot_knob(table, axis, knobs, m, out_dir / name)))
    written += [p for _, p in figures]

    status = frame["status"].value_counts().to_dict() if "status" in frame.columns else {}
    versions = sorted({str(v) for v in frame.get("nicsim_version", []) if isinstance(v, str)})
    all_facts = [
        ("points", str(len(frame))),
        (
            "ok / failed / missing",
            " / ".join(str(status.get(s, 0)) for s in ("ok", "failed", "missing")),
        ),
        ("nicsim version", ", ".join(versions) or "n/a"),
        *facts,
    ]
    header = [*knobs, "runs", *[METRICS.get(m, (m, 1))[0] for m in chosen]]
    body = [
        [
            *(_cell(row[k]) for k in knobs),
            str(row["runs"]),
            *(_cell(row[m], METRICS.get(m, (m, 1.0))[1]) for m in chosen),
        ]
        for _, row in table.iterrows()
    ]
    failures = []
    if "status" in frame.columns:
        for _, row in frame[frame["status"] == "failed"].iterrows():
            params = ", ".join(f"{k}={_label(row[k])}" for k in knobs)
            failures.append(f"{params} (seed {row['seed']}): {row.get('error')}")

    md = [f"# {title}", ""]
    if description:
        md += [description, ""]
    md += [f"- {k}: {v}" for k, v in all_facts] + [""]
    md += ["## Results", "", "Means over replicas of the runs that succeeded.", ""]
    md += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    md += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
    md.append("")
    if figures:
        md += ["## Figures", ""]
        for caption, path in figures:
            md += [f"![{caption}]({path.name})", ""]
    if failures:
        md += ["## Failed runs", ""] + [f"- {f}" for f in failures] + [""]
    report_md = out_dir / "report.md"
    report_md.write_text("\n".join(md), encoding="utf-8")
    written.append(report_md)

    if html_page:
        esc = html.escape
        rows_html = "\n".join(
            "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in body
        )
        page = HTML_TEMPLATE.format(
            title=esc(title),
            description=f"<p>{esc(description)}</p>" if description else "",
            facts="".join(f"<li>{esc(k)}: {esc(v)}</li>" for k, v in all_facts),
            header="".join(f"<th>{esc(h)}</th>" for h in header),
            rows=rows_html,
            figures="".join(
                FIGURE_TEMPLATE.format(src=esc(p.name), caption=esc(c)) for c, p in figures
            ),
            failures="".join(f"<li>{esc(f)}</li>" for f in failures),
        )
        report_html = out_dir / "report.html"
        report_html.write_text(page, encoding="utf-8")
        written.append(report_html)
    return written


HTML_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em auto; max-width: 60em; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }}
figure {{ display: inline-block; margin: 1em; }} img {{ max-width: 100%; }}
</style></head><body>
<h1>{title}</h1>
{description}
<ul>{facts}</ul>
<h2>Results</h2><p>Means over replicas of the runs that succeeded.</p>
<table><thead><tr>{header}</tr></thead><tbody>
{rows}
</tbody></table>
<h2>Figures</h2>
{figures}
<ul>{failures}</ul>
</body></html>
"""

FIGURE_TEMPLATE = (
    '<figure><img src="{src}" alt="{caption}"><figcaption>{caption}</figcaption></figure>'
)
