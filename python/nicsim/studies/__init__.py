"""Reproductions of the studies nicsim was built to answer, one package per
study: ``nicsim reproduce <study>`` runs a study's experiments (cached, on
any executor) and writes a report with its tables and figures next to the
published numbers, and ``comparison.csv`` (:mod:`.comparison`);
``nicsim reproduce all`` runs every study and writes one summary
(:mod:`.summary`). Studies are built on :mod:`.framework`."""

from __future__ import annotations

import csv
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nicsim.campaign.cache import Cache
from nicsim.campaign.executors import Executor
from nicsim.campaign.reproduction import Reproduction

STUDIES = {
    "elbeshti": "nicsim.studies.elbeshti",
    "kurmann": "nicsim.studies.kurmann",
    "ortiz": "nicsim.studies.ortiz",
    "won": "nicsim.studies.won",
}
"""Study short name -> module with ``reproduce(out, results, executor)``."""


def run_and_report(
    repro: Reproduction,
    report: Callable[[Cache, Path, float], list[Path]],
    out: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
    executor: Executor | None = None,
    progress: bool | None = None,
) -> list[Path]:
    """Run a study's missing points under ``results`` (default
    ``results/reproductions/<name>``), then ``report(cache, out_dir,
    wall_s)`` writes its report to ``out`` (default ``<results>/report``);
    returns the files written."""
    results_dir = Path(results) if results is not None else repro.default_results()
    out_dir = Path(out) if out is not None else results_dir / "report"
    started = time.perf_counter()
    repro.run(executor, results_dir, progress=progress)
    wall = time.perf_counter() - started
    with Cache(results_dir) as cache:
        return report(cache, out_dir, wall)


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` (dicts with the same keys) as a CSV file with a header."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path
