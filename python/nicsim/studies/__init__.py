"""Reproductions of the studies nicsim was built to answer, one module per
study: ``nicsim reproduce <study>`` runs a study's experiments (cached, on
any executor) and writes a report with its tables and figures next to the
published numbers."""

from __future__ import annotations

STUDIES = {
    "ortiz": "nicsim.studies.ortiz",
    "won": "nicsim.studies.won",
}
"""Study short name -> module with ``reproduce(out, results, executor)``."""
