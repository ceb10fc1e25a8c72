"""`nicsim reproduce all`: every study's rows in one comparison.csv, a summary
page and figure, a cached second run that simulates nothing, and
docs/validation.md exactly what the code generates from those rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from nicsim.campaign.executors import LocalExecutor
from nicsim.studies import STUDIES, comparison, summary

REPO = Path(__file__).resolve().parent.parent


class CountingExecutor(LocalExecutor):
    """A local pool that counts the runs it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.runs = 0

    def map(self, tasks):  # type: ignore[no-untyped-def, override]
        self.runs += len(tasks)
        return super().map(tasks)


@pytest.fixture(scope="module")
def everything(reproductions: Path) -> tuple[Path, int, int]:
    """(results root, runs of the first reproduction, runs of the second).
    The root is the session's, so the study tests' runs are reused."""
    root = reproductions
    ex = CountingExecutor()
    with ex:
        summary.reproduce_all(results=root, executor=ex, progress=False)
        first = ex.runs
        summary.reproduce_all(out=root / "again", results=root, executor=ex, progress=False)
    return root, first, ex.runs - first


def test_a_second_reproduction_simulates_nothing(everything: tuple[Path, int, int]) -> None:
    root, first, second = everything
    assert second == 0
    runs = sum(1 for name in STUDIES for _ in (root / name / "runs").rglob("*.json"))
    assert runs >= first and runs > 100, "every study's runs are in the shared cache"


def test_the_combined_file_has_every_studys_rows(everything: tuple[Path, int, int]) -> None:
    root, _, _ = everything
    combined = comparison.read(root / "all" / "comparison.csv")
    for name in STUDIES:
        own = comparison.read(root / name / "report" / "comparison.csv")
        assert own, f"{name} compares nothing"
        assert [r for r in combined if r.study == name] == own
    assert {r.study for r in combined} == set(STUDIES)
    assert (root / "all" / "comparison.csv").read_bytes() == (root / "again" / "comparison.csv").read_bytes()


def test_the_summary_page_and_figure_are_written(everything: tuple[Path, int, int]) -> None:
    root, _, _ = everything
    text = (root / "all" / "summary.md").read_text(encoding="utf-8")
    for name in STUDIES:
        assert f"## {name}" in text and f"| {name} |" in text
    assert "![published against nicsim](published-vs-nicsim.png)" in text
    for ext in ("png", "pdf"):
        assert (root / "all" / f"published-vs-nicsim.{ext}").stat().st_size > 10_000


def test_docs_validation_page_is_what_the_code_generates(everything: tuple[Path, int, int]) -> None:
    root, _, _ = everything
    rows = comparison.read(root / "all" / "comparison.csv")
    committed = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    assert committed == summary.render_docs(rows), "docs/validation.md is stale: run `make docs`"
    assert (REPO / "docs" / summary.DOCS_FIGURE).exists()
