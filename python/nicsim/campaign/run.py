"""Running a sweep: compute what the cache lacks, store each result as it
arrives.

:func:`run_missing` records the sweep's manifest, reconciles the index with
the run files, hands every point whose key has no file to the executor (each
distinct key once) and stores each outcome the moment it arrives. Stopping
it at any point (Ctrl-C, a crash, an exception from ``on_result``) loses at
most the runs in flight; the next call computes exactly the rest.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .cache import FORMAT, Cache
from .executors import Executor, LocalExecutor

if TYPE_CHECKING:
    from .sweep import PlannedPoint, Sweep


@dataclass
class RunStats:
    """What one :func:`run_missing` call did."""

    points: int = 0
    """Points in the sweep (replicas count separately)."""
    runs: int = 0
    """Distinct runs (points with equal keys share one)."""
    cached: int = 0
    """Runs already in the cache before this call."""
    computed: int = 0
    """Runs simulated by this call (ok or failed)."""
    failed: int = 0
    """Runs of this call whose simulation failed (cached as failed)."""
    errors: list[str] = field(default_factory=list)
    """Runs that could not be done (not cached): one message each."""
    wall_s: float = 0.0
    """Wall-clock time of the call."""
    executor: str = ""
    """The executor that ran the runs, if any ran."""

    @property
    def complete(self) -> bool:
        """Every run of the sweep is now in the cache."""
        return self.cached + self.computed == self.runs


OnResult = Callable[["PlannedPoint", dict[str, Any], RunStats], None]
"""Called after each run is stored: the point, the stored record and the
counts so far. An exception it raises stops the sweep (what is stored stays)."""


def progress_enabled() -> bool:
    """Progress bars only on a terminal, and never in CI."""
    return sys.stderr.isatty() and not os.environ.get("CI")


def run_missing(
    sweep: Sweep,
    cache: Cache,
    executor: Executor | None = None,
    *,
    progress: bool | None = None,
    on_result: OnResult | None = None,
) -> RunStats:
    """Run the sweep's points that ``cache`` does not hold yet.

    ``executor`` defaults to a :class:`LocalExecutor` on every core (created
    only if there is work, and closed afterwards; an executor passed in is
    left open). ``progress`` shows a progress bar with ETA on stderr
    (default: when stderr is a terminal and ``CI`` is not set).
    """
    from nicsim import __version__

    started = time.perf_counter()
    plan = sweep.plan()
    cache.record_sweep(sweep.manifest())
    first: dict[str, PlannedPoint] = {}
    for point in plan:
        first.setdefault(point.key, point)
    done = cache.sync(first)
    todo = [p for key, p in first.items() if key not in done]
    stats = RunStats(points=len(plan), runs=len(first), cached=len(done))
    if not todo:
        stats.wall_s = time.perf_counter() - started
        return stats

    own = executor is None
    runner = LocalExecutor() if executor is None else executor
    stats.executor = runner.describe()
    show = progress_enabled() if progress is None else progress
    bar = RunBar(len(todo), f"{sweep.name} ({stats.executor})", show)
    outcomes = runner.map([(p.scenario, p.seed) for p in todo])
    try:
        with bar:
            for i, outcome in outcomes:
                point = todo[i]
                record = None
                if outcome.get("status") == "error":
                    error = outcome.get("error")
                else:
                    record = _record(point, outcome, sweep.name, __version__)
                    error = _version_mismatch(record, __version__)
                if record is None or error is not None:
                    stats.errors.append(f"{_describe(point)}: {error}")
                    bar.advance()
                    continue
                cache.put(record)
                stats.computed += 1
                if record["status"] != "ok":
                    stats.failed += 1
                bar.advance()
                if on_result is not None:
                    on_result(point, record, stats)
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()
        if own:
            runner.close()
        stats.wall_s = time.perf_counter() - started
    return stats


def _record(
    point: PlannedPoint, outcome: dict[str, Any], sweep: str, version: str
) -> dict[str, Any]:
    """The self-describing run record stored in the cache."""
    import json

    from nicsim import resolve

    ok = outcome.get("status") == "ok"
    return {
        "format": FORMAT,
        "key": point.key,
        "nicsim_version": version,
        "seed": point.seed,
        "status": "ok" if ok else "failed",
        "error": None if ok else outcome.get("error"),
        "wall_s": outcome.get("wall_s"),
        "sweep": sweep,
        "params": point.params,
        "scenario": resolve(point.scenario),
        "scenario_toml": point.scenario,
        "report": json.loads(outcome["report"]) if ok else None,
    }


def _version_mismatch(record: dict[str, Any], version: str) -> str | None:
    """Why a result cannot be stored under its key: the worker ran another
    nicsim version than the one in the key (a mismatched cluster)."""
    report = record.get("report") or {}
    theirs = report.get("nicsim_version", version)
    return None if theirs == version else f"the worker runs nicsim {theirs}, this process {version}"


def _describe(point: PlannedPoint) -> str:
    params = ", ".join(f"{k}={v!r}" for k, v in point.params.items())
    return f"point ({params}, seed {point.seed})"


class RunBar:
    """A rich progress bar with ETA on stderr, or nothing."""

    def __init__(self, total: int, title: str, enabled: bool) -> None:
        self.enabled = enabled
        self.total = total
        self.title = title
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> RunBar:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("runs"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.title, total=self.total)
        return self

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def describe(self, title: str) -> None:
        """Change the bar's title (the study's experiment running now)."""
        if self._bar is not None:
            self._bar.update(self._task, description=title)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
