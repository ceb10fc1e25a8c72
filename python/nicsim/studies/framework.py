"""The reproduction framework: one shape for every study.

A study declares its **experiments** (simulated runs) and the **sections** of
its report; the framework runs what the result cache does not hold yet,
hands each section its runs' reports as typed records, and writes
``report.md``, the sections' CSV tables and figures, the published-vs-nicsim
table, the claims table and ``comparison.csv`` (format: :mod:`.comparison`).

Per study, the package ``nicsim.studies.<name>`` has::

    __init__.py      re-exports only (STUDY, reproduce, what tests import)
    experiments.py   Run / Grid declarations and the study's constants
    report.py        the sections (more modules if the report is long)

The contract::

    STANDARD = Run("standard", HERE / "standard.toml", "32 MiB bulk TCP ...",
                   fixed={"hosts[1].zero_copy.os": "fbufs"})
    ECHO = Grid("echo", HERE / "echo.toml",
                {"workload.echo.size": ["4B", "64B"]}, "messages to an echo node")

    def calibration(ctx: Context) -> list[str]:          # Markdown lines
        r = ctx.report(STANDARD)                         # RunReport
        for p in ctx.points(ECHO): p.params, p.report    # Point per grid point
        ctx.compare("fig5.mbs.standard", "standard stack bulk throughput",
                    "MB/s", nicsim=r.summary.mbs, published=42.0,
                    role="calibration")
        ctx.claim("claim.socket_constant", "the paper's sentence",
                  evidence="socket layer 410-415 cycles at every size",
                  holds=spread < 0.05)                   # computed, never typed
        png = ctx.figure(fig, "figure5")                 # file name for Markdown
        ctx.csv("figure5.csv", rows)
        return [f"![Figure 5]({png})", ...]

    STUDY = Study("kurmann", title="...", intro=[...], sections=[
        Section("Calibration", [STANDARD], calibration), ...])

``STUDY.reproduce(out, results, executor, progress)`` runs every experiment
(each is one cached sweep named ``<study>-<key>``, so a re-run reuses every
result) and writes the report. A section whose experiments did not all run
is left out, so the report never shows a number it did not compute.
Sections that need no simulation (an analytical model, a bound) declare no
experiments.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from nicsim.campaign.cache import Cache
from nicsim.campaign.executors import Executor, LocalExecutor
from nicsim.campaign.run import RunBar, progress_enabled, run_missing
from nicsim.campaign.sweep import Sweep

from . import comparison, write_csv
from .comparison import Claim, Row
from .records import RunReport

if TYPE_CHECKING:
    from nicsim.campaign.run import RunStats

__all__ = ["Claim", "Context", "Grid", "Point", "Row", "Run", "RunReport", "Section", "Study", "write_csv"]


@dataclass(frozen=True)
class Run:
    """One simulated point: a scenario file and knob settings."""

    key: str
    """Unique within the study; the cache's sweep is ``<study>-<key>``."""
    scenario: Path
    description: str
    fixed: Mapping[str, Any] = field(default_factory=dict)

    def sweep(self, study: str) -> Sweep:
        return Sweep(self.scenario, fixed=dict(self.fixed), name=f"{study}-{self.key}",
                     description=self.description)


@dataclass(frozen=True)
class Grid:
    """A sweep: a scenario file, knobs to vary (cross product) and fixed ones."""

    key: str
    scenario: Path
    grid: Mapping[str, Sequence[Any]]
    description: str
    fixed: Mapping[str, Any] = field(default_factory=dict)

    def sweep(self, study: str) -> Sweep:
        return Sweep(self.scenario, grid={k: list(v) for k, v in self.grid.items()}, fixed=dict(self.fixed),
                     name=f"{study}-{self.key}", description=self.description)


Experiment = Union[Run, Grid]


@dataclass(frozen=True)
class Point:
    """One point of a grid: its knob values and its run's report."""

    params: Mapping[str, Any]
    report: RunReport


@dataclass(frozen=True)
class Section:
    """A part of the report: the experiments it needs and how it is written."""

    title: str
    needs: Sequence[Experiment]
    write: Callable[[Context], list[str]]
    """(context) -> Markdown lines below the section's title."""


@dataclass
class Context:
    """What a section reads and where it writes."""

    study: str
    out_dir: Path
    runs: Mapping[str, RunReport | list[Point]]
    written: list[Path] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)

    def report(self, run: Run) -> RunReport:
        """The report of a :class:`Run`."""
        got = self.runs[run.key]
        if not isinstance(got, RunReport):
            raise TypeError(f"{run.key} is a grid; read it with points()")
        return got

    def points(self, grid: Grid) -> list[Point]:
        """Every point of a :class:`Grid`, in the grid's order."""
        got = self.runs[grid.key]
        if isinstance(got, RunReport):
            raise TypeError(f"{grid.key} is a single run; read it with report()")
        return got

    def has(self, experiment: Experiment) -> bool:
        return experiment.key in self.runs

    def compare(self, id: str, description: str, unit: str, *, nicsim: float,  # noqa: A002 - the file's word
                published: float | None = None, role: str = "prediction") -> Row:
        """Add a ``comparison.csv`` row (checked now: a bad row fails here)."""
        row = Row(self.study, id, description, unit, float(nicsim),
                  None if published is None else float(published), role)
        self.rows.append(row)
        return row

    def claim(self, id: str, quote: str, evidence: str, holds: bool) -> Claim:  # noqa: A002
        """Add a claim of the study's text with nicsim's evidence and the
        verdict the calling code computed from it."""
        c = Claim(self.study, id, quote, evidence, holds)
        self.claims.append(c)
        return c

    def csv(self, name: str, rows: list[dict[str, Any]]) -> Path:
        path = write_csv(self.out_dir / name, rows)
        self.written.append(path)
        return path

    def figure(self, fig: Any, name: str, *, pdf: bool = False, dpi: int = 120) -> str:
        """Save ``fig`` as ``name.png`` (and ``name.pdf``); returns the PNG's
        file name for Markdown."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        path = self.out_dir / f"{name}.png"
        fig.savefig(path, dpi=dpi)
        self.written.append(path)
        if pdf:
            fig.savefig(path.with_suffix(".pdf"))
            self.written.append(path.with_suffix(".pdf"))
        plt.close(fig)
        return path.name


@dataclass(frozen=True)
class Study:
    """A study: its report's sections, the experiments they need, and how it is written."""

    name: str
    title: str
    """The report's heading."""
    intro: Sequence[str]
    """Markdown lines under the heading: the machine, the calibration set."""
    sections: Sequence[Section]
    description: str = ""

    def __post_init__(self) -> None:
        seen: dict[str, Experiment] = {}
        for s in self.sections:
            for e in s.needs:
                if seen.setdefault(e.key, e) != e:
                    raise ValueError(f"{self.name}: two different experiments are named {e.key!r}")

    def experiments(self) -> list[Experiment]:
        """Every experiment the sections need, each once, in order."""
        seen: dict[str, Experiment] = {}
        for s in self.sections:
            for e in s.needs:
                seen.setdefault(e.key, e)
        return list(seen.values())

    def sweeps(self) -> list[Sweep]:
        return [e.sweep(self.name) for e in self.experiments()]

    def default_results(self) -> Path:
        return Path("results") / "reproductions" / self.name

    def run(self, results: str | os.PathLike[str] | None = None, executor: Executor | None = None,
            progress: bool | None = None) -> dict[str, RunStats]:
        """Run every experiment's missing points into ``results``."""
        results_dir = Path(results) if results is not None else self.default_results()
        show = progress_enabled() if progress is None else progress
        runner = executor if executor is not None else LocalExecutor()
        stats: dict[str, RunStats] = {}
        try:
            with Cache(results_dir) as cache:
                plans = [(e, e.sweep(self.name)) for e in self.experiments()]
                left = {e.key: _missing(cache, s) for e, s in plans}
                total = sum(left.values())
                with RunBar(total, self.name, show and total > 0) as bar:
                    for e, sweep in plans:
                        if left[e.key]:
                            bar.describe(f"{self.name}: {e.key} ({left[e.key]} to run)")
                        stats[e.key] = run_missing(sweep, cache, runner, progress=False,
                                                   on_result=lambda *_: bar.advance())
                        if stats[e.key].errors:
                            raise RuntimeError(f"{sweep.name}: " + "; ".join(stats[e.key].errors[:3]))
        finally:
            if executor is None:
                runner.close()
        return stats

    def load(self, results: str | os.PathLike[str] | None = None) -> dict[str, RunReport | list[Point]]:
        """Every experiment's reports from the cache (all must have run)."""
        results_dir = Path(results) if results is not None else self.default_results()
        out: dict[str, RunReport | list[Point]] = {}
        with Cache(results_dir) as cache:
            for e in self.experiments():
                points = [Point(p.params, _report(cache, e, p.key)) for p in e.sweep(self.name).plan()]
                out[e.key] = points[0].report if isinstance(e, Run) else points
        return out

    def reproduce(
        self,
        out: str | os.PathLike[str] | None = None,
        results: str | os.PathLike[str] | None = None,
        executor: Executor | None = None,
        progress: bool | None = None,
    ) -> list[Path]:
        """Run what is missing under ``results`` (default
        ``results/reproductions/<name>``) and write the report to ``out``
        (default ``<results>/report``); returns the files written."""
        results_dir = Path(results) if results is not None else self.default_results()
        out_dir = Path(out) if out is not None else results_dir / "report"
        started = time.perf_counter()
        self.run(results_dir, executor, progress)
        wall = time.perf_counter() - started
        return self.write_report(self.load(results_dir), out_dir, wall)

    def write_report(self, runs: Mapping[str, RunReport | list[Point]], out_dir: Path,
                     wall_s: float | None = None) -> list[Path]:
        """``report.md``, its tables and figures and ``comparison.csv`` from the runs."""
        out_dir.mkdir(parents=True, exist_ok=True)
        ctx = Context(self.name, out_dir, runs)
        lines = [f"# {self.title}", "", *self.intro]
        if wall_s is not None:
            lines.append(f"All runs took {wall_s:.1f} s of wall time (cached runs are not rerun).")
        lines.append("")
        for s in self.sections:
            if any(e.key not in runs for e in s.needs):
                continue
            lines += [f"## {s.title}", "", *s.write(ctx), ""]
        lines += comparison_section(ctx.rows, ctx.claims)
        rows = ctx.rows + [c.row() for c in ctx.claims]
        ctx.written.append(comparison.write(out_dir / "comparison.csv", rows))
        path = out_dir / "report.md"
        path.write_text("\n".join(lines), encoding="utf-8")
        ctx.written.append(path)
        return ctx.written


def _missing(cache: Cache, sweep: Sweep) -> int:
    keys = {p.key for p in sweep.plan()}
    return len(keys - cache.sync(keys))


def _report(cache: Cache, e: Experiment, key: str) -> RunReport:
    record = cache.get(key)
    if record is None or record.get("status") != "ok":
        why = "not run" if record is None else record.get("error")
        raise RuntimeError(f"{e.key}: a run did not complete: {why}")
    return RunReport.parse(record["report"])


def _cell(x: float | None, unit: str) -> str:
    if x is None:
        return "—"
    return comparison.decimal(x) + ("" if unit in ("ratio", "bool", "") else f" {unit}")


def comparison_section(rows: Sequence[Row], claims: Sequence[Claim]) -> list[str]:
    """The report's closing sections: every compared number, then every claim."""
    lines: list[str] = []
    if rows:
        lines += [
            "## Published and nicsim",
            "",
            "Every number this reproduction compares (also in `comparison.csv`). Calibration rows are",
            "what the profile was fitted to; predictions come from the same profile unchanged. A",
            "prediction with no published value is one the study gives only in a figure or that is",
            "held out from nicsim's copy of the study.",
            "",
            "| id | quantity | role | published | nicsim | error |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for r in rows:
            err = r.error_pct
            lines.append(f"| `{r.id}` | {r.description} | {r.role} | {_cell(r.published, r.unit)} |"
                         f" {_cell(r.nicsim, r.unit)} | {comparison.pct(err)} |")
        lines.append("")
    if claims:
        held = sum(c.holds for c in claims)
        lines += [
            "## Claims of the study's text",
            "",
            f"{held} of {len(claims)} claims hold on nicsim's runs. Each verdict is computed from the",
            "evidence shown, by the code that writes this report.",
            "",
            "| id | the study says | nicsim's evidence | verdict |",
            "| --- | --- | --- | --- |",
        ]
        for c in claims:
            lines.append(f"| `{c.id}` | {c.quote} | {c.evidence} | {'holds' if c.holds else '**does not hold**'} |")
        lines.append("")
    return lines
