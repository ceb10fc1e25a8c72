"""Reproductions: a study as a list of sweeps plus the function that turns
their results into a report.

A reproduction runs all its sweeps into one results directory (so points
they share are simulated once) on one executor, then calls its report
function with a table per sweep. Studies add themselves as instances::

    study = Reproduction(
        "kurmann-2003",
        sweeps=[Sweep.from_file("scenarios/sweeps/kurmann-mtu.toml"), ...],
        report=plot_kurmann_figures,   # (frames, out_dir) -> written files
    )
    study.run()            # computes only what is missing
    study.write_report("results/reproductions/kurmann-2003/report")
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .cache import Cache, safe_name
from .executors import Executor, LocalExecutor
from .run import RunStats, run_missing
from .sweep import Sweep

if TYPE_CHECKING:
    import pandas as pd

ReportFunction = Callable[[dict[str, "pd.DataFrame"], Path], Sequence[Path]]
"""Makes a study's report from one table per sweep (by sweep name) into a
directory; returns the files it wrote."""


@dataclass
class Reproduction:
    """A named list of sweeps and the report they feed."""

    name: str
    sweeps: list[Sweep]
    report: ReportFunction | None = None
    description: str = ""
    stats: dict[str, RunStats] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [s.name for s in self.sweeps]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"{self.name}: sweep names must differ; repeated: {', '.join(twice)}")

    def default_results(self) -> Path:
        """``results/reproductions/<name>``."""
        return Path("results") / "reproductions" / safe_name(self.name)

    def run(
        self,
        executor: Executor | None = None,
        results: str | os.PathLike[str] | None = None,
        *,
        progress: bool | None = None,
    ) -> dict[str, pd.DataFrame]:
        """Run every sweep's missing points; return one table per sweep."""
        results_dir = Path(results) if results is not None else self.default_results()
        runner = executor if executor is not None else LocalExecutor()
        try:
            with Cache(results_dir) as cache:
                for sweep in self.sweeps:
                    self.stats[sweep.name] = run_missing(sweep, cache, runner, progress=progress)
                return {s.name: cache.to_pandas(s.name) for s in self.sweeps}
        finally:
            if executor is None:
                runner.close()

    def write_report(
        self, out: str | os.PathLike[str], frames: dict[str, pd.DataFrame] | None = None
    ) -> list[Path]:
        """The study's report in ``out``; with no report function, the
        generic sweep report of each sweep."""
        out_dir = Path(out)
        if frames is None:
            with Cache(self.default_results()) as cache:
                frames = {s.name: cache.to_pandas(s.name) for s in self.sweeps}
        if self.report is not None:
            return list(self.report(frames, out_dir))
        from .report import write_report

        written: list[Path] = []
        for sweep in self.sweeps:
            written += write_report(
                frames[sweep.name],
                out_dir / safe_name(sweep.name),
                title=sweep.name,
                description=sweep.description,
                axes=sweep.axes,
            )
        return written
