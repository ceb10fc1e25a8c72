"""``nicsim reproduce all``: every study, one ``comparison.csv``, one page.

Runs each study of :data:`nicsim.studies.STUDIES` (cached runs are reused),
gathers their ``comparison.csv`` files into one, and writes ``summary.md``:
per study, the calibration residuals, the predictions that have a published
value, and how many claims hold; and ``published-vs-nicsim.png``/``.pdf``,
every number that has both a published and a nicsim value on log-log axes
with the 1:1 line and a ±15 % band.

``docs/validation.md`` is generated from the combined file by
:func:`render_docs` (``make docs``), so the page never drifts from what the
code computes; a test regenerates it and compares.

Run as ``python -m nicsim.studies.summary COMPARISON_CSV DOCS_DIR`` to
(re)write ``DOCS_DIR/validation.md`` and its figure.
"""

from __future__ import annotations

import importlib
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from nicsim.campaign.executors import Executor

from . import STUDIES, comparison
from .comparison import Row

BAND = 0.15
"""The band drawn around the 1:1 line, and the share counted as "close"."""
COLORS = {"ortiz": "#4c72b0", "elbeshti": "#dd8452", "won": "#55a868", "kurmann": "#c44e52", "cai": "#8172b2"}


def reproduce_all(
    out: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
    executor: Executor | None = None,
    progress: bool | None = None,
) -> list[Path]:
    """Every study under ``results`` (default ``results/reproductions``,
    one folder per study, each with its ``report/``), then the combined
    ``comparison.csv``, ``summary.md`` and figure in ``out`` (default
    ``<results>/all``); returns the files written."""
    root = Path(results) if results is not None else Path("results") / "reproductions"
    out_dir = Path(out) if out is not None else root / "all"
    rows: list[Row] = []
    for name, module_name in STUDIES.items():
        module = importlib.import_module(module_name)
        written = module.reproduce(root / name / "report", root / name, executor, progress=progress)
        csv_path = next((p for p in written if p.name == "comparison.csv"), None)
        if csv_path is None:
            raise RuntimeError(f"{name}: its reproduction wrote no comparison.csv")
        rows += comparison.read(csv_path)
    return write_summary(rows, out_dir)


def write_summary(rows: Sequence[Row], out_dir: Path) -> list[Path]:
    """The combined ``comparison.csv``, the figure and ``summary.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [comparison.write(out_dir / "comparison.csv", rows)]
    written += figure(rows, out_dir / "published-vs-nicsim")
    page = out_dir / "summary.md"
    page.write_text(render(rows, "published-vs-nicsim.png", heading="# nicsim against the studies"),
                    encoding="utf-8")
    written.append(page)
    return written


def _studies(rows: Sequence[Row]) -> list[str]:
    return list(dict.fromkeys(r.study for r in rows))


def _fmt(x: float | None, unit: str) -> str:
    if x is None:
        return "—"
    return comparison.decimal(x) + ("" if unit in ("ratio", "bool") else f" {unit}")


def _err(r: Row) -> str:
    return comparison.pct(r.error_pct)


def study_overview(rows: Sequence[Row]) -> list[str]:
    """One line per study: calibration residuals, predictions, claims."""
    lines = [
        "| study | calibration rows | largest calibration residual | predictions (with a published value) |"
        f" within ±{BAND * 100:.0f} % | median \\|error\\| of those | claims held |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in _studies(rows):
        mine = [r for r in rows if r.study == s]
        cal = [r for r in mine if r.role == "calibration"]
        pred = [r for r in mine if r.role == "prediction"]
        judged = [r for r in pred if r.error_pct is not None]
        claims = [r for r in mine if r.role == "claim"]
        worst = max((r for r in cal if r.error_pct is not None), key=lambda r: abs(r.error_pct or 0.0), default=None)
        close = sum(abs(r.error_pct or 0.0) <= BAND * 100 for r in judged)
        median = statistics.median(abs(r.error_pct or 0.0) for r in judged) if judged else None
        lines.append(
            f"| {s} | {len(cal)} | {'—' if worst is None else f'{_err(worst)} (`{worst.id}`)'} |"
            f" {len(pred)} ({len(judged)}) | {close} of {len(judged)} |"
            f" {'—' if median is None else f'{median:.1f} %'} |"
            f" {sum(r.nicsim == 1 for r in claims)} of {len(claims)} |"
        )
    return lines


def render(rows: Sequence[Row], figure_name: str, heading: str) -> str:
    """The summary page (Markdown): the overview, then per study every
    number with a published value, every prediction without one, and every
    claim with its verdict."""
    lines = [
        heading,
        "",
        "Generated from `comparison.csv` (`nicsim reproduce all`). Calibration rows are the published",
        "numbers a study's profile was fitted to; predictions come from the same profile unchanged.",
        "A prediction without a published value is one the study gives only in a figure or that is",
        "held out from nicsim's copy of the study. Each study's report explains every row.",
        "",
        *study_overview(rows),
        "",
        f"![published against nicsim]({figure_name})",
        "",
    ]
    for s in _studies(rows):
        mine = [r for r in rows if r.study == s]
        shown = [r for r in mine if r.published is not None]
        held = [r for r in mine if r.published is None and r.role != "claim"]
        claims = [r for r in mine if r.role == "claim"]
        lines += [f"## {s}", ""]
        if shown:
            lines += ["Numbers with a published value:", "",
                      "| id | quantity | role | published | nicsim | error |", "| --- | --- | --- | --- | --- | --- |"]
            lines += [f"| `{r.id}` | {r.description} | {r.role} | {_fmt(r.published, r.unit)} |"
                      f" {_fmt(r.nicsim, r.unit)} | {_err(r)} |" for r in shown]
            lines.append("")
        if held:
            lines += ["Predictions whose published value is held out or only in a figure:", "",
                      "| id | quantity | nicsim |", "| --- | --- | --- |"]
            lines += [f"| `{r.id}` | {r.description} | {_fmt(r.nicsim, r.unit)} |" for r in held]
            lines.append("")
        if claims:
            lines += [f"Claims of the text: {sum(r.nicsim == 1 for r in claims)} of {len(claims)} hold.", "",
                      "| id | the study says | verdict |", "| --- | --- | --- |"]
            lines += [f"| `{r.id}` | {r.description} | {'holds' if r.nicsim == 1 else '**does not hold**'} |"
                      for r in claims]
            lines.append("")
    return "\n".join(lines)


def figure(rows: Sequence[Row], stem: Path, *, pdf: bool = True) -> list[Path]:
    """Published against nicsim for every row with both (positive values),
    log-log, one colour per study; circles are calibration, triangles
    predictions; a point outside the band is labelled with its id. Written
    as ``stem.png`` (and ``stem.pdf``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = [r for r in rows if r.published is not None and r.published > 0 and r.nicsim > 0]
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    if pairs:
        lo = min(min(r.published or 0.0, r.nicsim) for r in pairs) / 2
        hi = max(max(r.published or 0.0, r.nicsim) for r in pairs) * 2
    else:
        lo, hi = 0.1, 10.0
    xs = [lo, hi]
    ax.fill_between(xs, [x * (1 - BAND) for x in xs], [x * (1 + BAND) for x in xs], color="0.88",
                    label=f"±{BAND * 100:.0f} %")
    ax.plot(xs, xs, color="0.4", lw=1, label="nicsim = published")
    for s in _studies(pairs):
        for role, marker in (("calibration", "o"), ("prediction", "^")):
            pts = [r for r in pairs if r.study == s and r.role == role]
            if pts:
                ax.scatter([r.published for r in pts], [r.nicsim for r in pts], marker=marker, s=28,
                           color=COLORS.get(s, "0.2"), edgecolor="black", linewidth=0.4,
                           label=f"{s} ({role})", zorder=3)
    for r in pairs:
        if abs(r.error_pct or 0.0) > BAND * 100:
            ax.annotate(f"{r.study} {r.id}", (r.published, r.nicsim), fontsize=6, xytext=(4, -8),
                        textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("published value (the study's unit)")
    ax.set_ylabel("nicsim value (same unit)")
    ax.set_title("Every number with a published value")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    written = [stem.with_suffix(".png")]
    fig.savefig(written[0], dpi=130)
    if pdf:
        written.append(stem.with_suffix(".pdf"))
        fig.savefig(written[1])
    plt.close(fig)
    return written


DOCS_FIGURE = "validation-published-vs-nicsim.png"
"""The figure's name next to ``docs/validation.md``."""


def render_docs(rows: Sequence[Row]) -> str:
    """``docs/validation.md``'s text for these rows."""
    return render(rows, DOCS_FIGURE, heading="# Validation: nicsim against the studies") + (
        "\nThis page is generated: run `make docs` after a change that moves a number. Each study's\n"
        "report (`nicsim reproduce STUDY`) explains every row, with the evidence for each claim.\n"
    )


def write_docs(comparison_csv: Path, docs_dir: Path) -> list[Path]:
    """(Re)write ``docs_dir/validation.md`` and its figure from a combined ``comparison.csv``."""
    rows = comparison.read(comparison_csv)
    page = docs_dir / "validation.md"
    page.write_text(render_docs(rows), encoding="utf-8")
    return [page, *figure(rows, docs_dir / Path(DOCS_FIGURE).stem, pdf=False)]


if __name__ == "__main__":  # pragma: no cover - make docs
    if len(sys.argv) != 3:
        sys.exit("usage: python -m nicsim.studies.summary COMPARISON_CSV DOCS_DIR")
    for p in write_docs(Path(sys.argv[1]), Path(sys.argv[2])):
        print(p)
