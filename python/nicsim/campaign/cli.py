"""The campaign commands of ``nicsim``:

    nicsim sweep FILE [--executor local|dask] [--workers N] [--scheduler ADDR]
    nicsim status SWEEP_OR_RESULTS_DIR
    nicsim export SWEEP_OR_RESULTS_DIR OUT.csv|OUT.parquet [--sweep NAME]
    nicsim report SWEEP_OR_RESULTS_DIR [--out DIR] [--html] [--metric NAME]... [--sweep NAME]

A sweep's results go to ``results/sweeps/<name>`` unless ``--results DIR``
(on every command) says otherwise. Exit codes as for ``nicsim run``: 2 for a bad sweep file or a
missing file, 1 when runs could not be done (rerun to complete them), 130
when interrupted (what finished is kept).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from nicsim.studies import STUDIES

from .sweep import Sweep, SweepError

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

RESULTS_OPTION = click.option(
    "--results",
    type=click.Path(file_okay=False, path_type=Path),
    help="Results directory [default: results/sweeps/<sweep name>].",
)
SWEEP_OPTION = click.option("--sweep", "sweep_name", help="Only this sweep of a results directory.")
TARGET = click.Path(exists=True, path_type=Path)


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _load(path: Path) -> Sweep:
    """The sweep in ``path`` with every point expanded and checked."""
    try:
        sweep = Sweep.from_file(path)
        sweep.plan()
        return sweep
    except SweepError as e:
        _fail(f"{path}: {e}", EXIT_BAD_INPUT)
    except OSError as e:
        _fail(str(e), EXIT_BAD_INPUT)


def _target(
    target: Path, results: Path | None, sweep_name: str | None
) -> tuple[Path, str | None, Sweep | None]:
    """(results directory, sweep name or None for all, the sweep if a file)."""
    if target.is_file():
        sweep = _load(target)
        return (results or sweep.default_results()), sweep.name, sweep
    if not (target / "index.sqlite").is_file() and not (target / "runs").is_dir():
        _fail(f"{target} is neither a sweep file nor a results directory", EXIT_BAD_INPUT)
    return target, sweep_name, None


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Where the runs go: a process pool here, or Dask.",
)
@click.option("--workers", type=click.IntRange(1), help="Worker processes [default: every core].")
@click.option("--scheduler", help="Dask scheduler address (implies --executor dask).")
@RESULTS_OPTION
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar [default: on a terminal]."
)
def sweep(
    file: Path,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    results: Path | None,
    progress: bool | None,
) -> None:
    """Run the points of sweep FILE that are not in the cache yet."""
    from .executors import make_executor

    the_sweep = _load(file)
    results_dir = results or the_sweep.default_results()
    try:
        runner = make_executor(executor, workers, scheduler)
    except ImportError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    try:
        with runner:
            stats = the_sweep.run_missing(runner, results_dir, progress=progress)
    except KeyboardInterrupt:
        _fail(
            f"interrupted; finished runs are kept in {results_dir}: rerun to complete",
            EXIT_INTERRUPTED,
        )
    except OSError as e:
        _fail(f"cannot write results: {e}", EXIT_FAILED)
    where = f" on {stats.executor}" if stats.executor else ""
    click.echo(
        f"sweep {the_sweep.name}: {stats.points} points, {stats.runs} runs: {stats.cached} cached, "
        f"{stats.computed} computed ({stats.failed} failed) in {stats.wall_s:.2f} s{where}"
    )
    click.echo(f"results: {results_dir}")
    if stats.failed:
        click.echo(
            f"warning: {stats.failed} runs failed; `nicsim status {file}` lists them", err=True
        )
    if stats.errors:
        for message in stats.errors[:10]:
            click.echo(f"error: {message}", err=True)
        _fail(f"{len(stats.errors)} runs could not be done; rerun to retry them", EXIT_FAILED)


@click.command()
@click.argument("target", type=TARGET)
@RESULTS_OPTION
def status(target: Path, results: Path | None) -> None:
    """How many points of a sweep (a file) or of every sweep in a results
    directory are done, failed or missing."""
    from .cache import Cache

    results_dir, name, the_sweep = _target(target, results, None)
    if the_sweep is not None:
        plan = the_sweep.plan()
        keys = {p.key for p in plan}
        if not results_dir.is_dir():
            done: dict[str, str] = {}
        else:
            with Cache(results_dir) as cache:
                cache.sync(keys)
                done = cache.statuses(keys)
        counts = {"ok": 0, "failed": 0, "missing": 0}
        for p in plan:
            counts[done.get(p.key, "missing")] += 1
        click.echo(
            f"{the_sweep.name}: {len(plan)} points: {counts['ok']} ok, {counts['failed']} failed, "
            f"{counts['missing']} missing ({results_dir})"
        )
        if counts["failed"]:
            with Cache(results_dir) as cache:
                frame = (
                    cache.to_pandas(the_sweep.name) if the_sweep.name in cache.sweeps() else None
                )
            if frame is not None:
                for _, row in frame[frame["status"] == "failed"].head(10).iterrows():
                    params = ", ".join(f"{k}={row[k]!r}" for k in the_sweep.knobs)
                    click.echo(f"  failed: {params} seed {row['seed']}: {row['error']}")
        return
    with Cache(results_dir) as cache:
        names = cache.sweeps() if name is None else [name]
        if not names:
            click.echo(f"{results_dir}: no sweeps")
        for n in names:
            c = cache.status(n)
            summary = f"{c['ok']} ok, {c['failed']} failed, {c['missing']} missing"
            click.echo(f"{n}: {c['total']} points: {summary}")


@click.command()
@click.argument("target", type=TARGET)
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@RESULTS_OPTION
@SWEEP_OPTION
def export(target: Path, out: Path, results: Path | None, sweep_name: str | None) -> None:
    """Write a sweep's results (a sweep file or a results directory) to OUT:
    CSV for .csv, Parquet for .parquet."""
    from .cache import Cache

    results_dir, name, _ = _target(target, results, sweep_name)
    if not results_dir.is_dir():
        _fail(f"no results in {results_dir}: run `nicsim sweep {target}` first", EXIT_BAD_INPUT)
    try:
        with Cache(results_dir) as cache:
            path = cache.export(out, name)
            rows = len(cache.to_pandas(name))
    except (KeyError, ValueError) as e:
        _fail(str(e).strip("'\""), EXIT_BAD_INPUT)
    except OSError as e:
        _fail(f"cannot write {out}: {e}", EXIT_FAILED)
    click.echo(f"{rows} rows written to {path}")


@click.command()
@click.argument("target", type=TARGET)
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), help="[default: RESULTS/report]"
)
@click.option("--html", is_flag=True, help="Also write report.html.")
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="Summary field to plot (repeatable) [default: goodput].",
)
@RESULTS_OPTION
@SWEEP_OPTION
def report(
    target: Path,
    out: Path | None,
    html: bool,
    metrics: tuple[str, ...],
    results: Path | None,
    sweep_name: str | None,
) -> None:
    """Write a Markdown report with one figure per swept knob for a sweep
    (a sweep file) or for every sweep in a results directory."""
    from .cache import Cache, safe_name
    from .report import write_report

    results_dir, name, _ = _target(target, results, sweep_name)
    if not results_dir.is_dir():
        _fail(f"no results in {results_dir}: run `nicsim sweep {target}` first", EXIT_BAD_INPUT)
    base_out = out or results_dir / "report"
    with Cache(results_dir) as cache:
        names = cache.sweeps() if name is None else [name]
        if not names:
            _fail(f"no sweeps in {results_dir}", EXIT_BAD_INPUT)
        for n in names:
            try:
                manifest = cache.manifest(n)
                frame = cache.to_pandas(n)
            except KeyError as e:
                _fail(str(e).strip("'\""), EXIT_BAD_INPUT)
            folder = base_out if len(names) == 1 else base_out / safe_name(n)
            facts = [
                ("base scenario", str(manifest.get("base"))),
                ("replicas", str(manifest.get("replicas"))),
            ]
            if manifest.get("constraints"):
                facts.append(("constraints", "; ".join(manifest["constraints"])))
            try:
                written = write_report(
                    frame,
                    folder,
                    title=f"Sweep {n}",
                    description=manifest.get("description") or "",
                    metrics=list(metrics) or None,
                    html_page=html,
                    facts=facts,
                    axes=manifest.get("axes"),
                )
            except ValueError as e:
                _fail(str(e), EXIT_BAD_INPUT)
            click.echo(f"report for {n} written to {folder}: {', '.join(p.name for p in written)}")




@click.command()
@click.argument("study", type=click.Choice([*sorted(STUDIES), "all"]))
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Where the runs go: a process pool here, or Dask.",
)
@click.option("--workers", type=click.IntRange(1), help="Worker processes [default: every core].")
@click.option("--scheduler", help="Dask scheduler address (implies --executor dask).")
@click.option(
    "--results",
    type=click.Path(file_okay=False, path_type=Path),
    help="Results directory (the cache) [default: results/reproductions/<study>; for all: results/reproductions].",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Report directory [default: <results>/report; for all: <results>/all].",
)
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar [default: on a terminal]."
)
def reproduce(
    study: str,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    results: Path | None,
    out: Path | None,
    progress: bool | None,
) -> None:
    """Run a study's experiments and write its report (Markdown, PNG, PDF,
    CSV) with the published numbers beside nicsim's, and its comparison.csv.
    STUDY "all" runs every study (cached runs are reused) and writes one
    comparison.csv, summary.md and a published-vs-nicsim figure."""
    import importlib
    import time

    from .executors import make_executor

    if study == "all":
        from nicsim.studies.summary import reproduce_all as run_study
    else:
        run_study = importlib.import_module(STUDIES[study]).reproduce
    try:
        runner = make_executor(executor, workers, scheduler)
    except ImportError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    started = time.perf_counter()
    try:
        with runner:
            written = run_study(out, results, runner, progress=progress)
    except KeyboardInterrupt:
        _fail("interrupted; finished runs are kept: rerun to complete", EXIT_INTERRUPTED)
    except (OSError, RuntimeError, ValueError) as e:
        _fail(str(e), EXIT_FAILED)
    report = next(p for p in written if p.name in ("report.md", "summary.md"))
    click.echo(f"{study}: {len(written)} files in {report.parent} ({time.perf_counter() - started:.1f} s)")
    click.echo(f"report: {report}")
    click.echo(f"comparison: {report.parent / 'comparison.csv'}")


COMMANDS = [sweep, status, export, report, reproduce]
"""The commands ``nicsim.cli`` adds to the ``nicsim`` group."""
