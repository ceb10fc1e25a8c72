"""Reproductions of the studies nicsim was built to answer, one package per
study: ``nicsim reproduce <study>`` runs a study's experiments (cached, on
any executor) and writes a report with its tables and figures next to the
published numbers, and ``comparison.csv`` (:mod:`.comparison`);
``nicsim reproduce all`` runs every study and writes one summary
(:mod:`.summary`). Studies are built on :mod:`.framework`."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

STUDIES = {
    "elbeshti": "nicsim.studies.elbeshti",
    "kurmann": "nicsim.studies.kurmann",
    "ortiz": "nicsim.studies.ortiz",
    "won": "nicsim.studies.won",
    "cai": "nicsim.studies.cai",
}
"""Study short name -> package with ``STUDY`` and ``reproduce(out, results, executor, progress)``."""


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` (dicts with the same keys) as a CSV file with a header."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path
