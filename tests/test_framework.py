"""The reproduction framework: comparison.csv's format is enforced, a claim's
verdict is the code's, a study's runs are cached, and sections read typed
records."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import pytest

from nicsim.campaign.executors import LocalExecutor
from nicsim.studies import comparison
from nicsim.studies.comparison import Claim, ComparisonError, Row
from nicsim.studies.framework import Context, Grid, Run, Section, Study

REPO = Path(__file__).resolve().parent.parent

TINY = """
name = "tiny"
seed = 7
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
endpoints = ["a", "b"]
rate = "1Gbps"
[workload.bulk]
from = "a"
to = "b"
bytes = "{size}"
"""


# --- rows and the file ---------------------------------------------------------------


def _row(**kw: Any) -> Row:
    args: dict[str, Any] = dict(study="x", id="a.b", description="a thing", unit="MB/s", nicsim=1.0,
                                published=2.0, role="prediction")
    args.update(kw)
    return Row(**args)


@pytest.mark.parametrize(
    "kw, field",
    [
        (dict(role="guess"), "role"),
        (dict(unit="42"), "unit"),
        (dict(unit=""), "unit"),
        (dict(nicsim=math.nan), "nicsim"),
        (dict(published=math.inf), "published"),
        (dict(nicsim="40.5"), "nicsim"),
        (dict(id="Fig 5"), "id"),
        (dict(study="Kurmann"), "study"),
        (dict(description="two\nlines"), "description"),
        (dict(published=0.0), "published value of 0"),
        (dict(id="claim.x"), "claim"),
        (dict(role="claim", id="claim.x", unit="bool", nicsim=2.0, published=None), "claim"),
        (dict(role="claim", id="claim.x", unit="bool", nicsim=1.0, published=1.0), "claim"),
    ],
)
def test_a_malformed_row_is_refused_with_its_field(kw: dict[str, Any], field: str) -> None:
    with pytest.raises(ComparisonError, match=field):
        _row(**kw)


def test_error_pct_is_computed_and_numbers_are_plain_decimals(tmp_path: Path) -> None:
    rows = [_row(id="a", nicsim=40.5432, published=42.0), _row(id="b", nicsim=1234567.0, published=None),
            _row(id="c", nicsim=0.000123456789, published=0.0001)]
    path = comparison.write(tmp_path / "comparison.csv", rows)
    with path.open(newline="", encoding="utf-8") as f:
        cells = list(csv.DictReader(f))
    assert list(cells[0]) == list(comparison.COLUMNS)
    assert cells[0]["error_pct"] == "-3.46857"  # 100 (40.5432 - 42) / 42
    assert cells[1]["nicsim"] == "1234567" and cells[1]["published"] == "" and cells[1]["error_pct"] == ""
    assert cells[2]["nicsim"] == "0.000123457" and cells[2]["error_pct"] == "23.4568"
    back = comparison.read(path)
    assert [r.id for r in back] == ["a", "b", "c"]
    assert back[0].published == 42.0 and back[1].published is None


@pytest.mark.parametrize(
    "column, value, reason",
    [
        ("nicsim", "40.5 MB/s", "plain decimal"),
        ("nicsim", "1,234", "plain decimal"),
        ("published", "4.2e1", "plain decimal"),
        ("error_pct", "-10", "error_pct"),
        ("error_pct", "", "error_pct"),
        ("role", "calibrated", "role"),
    ],
)
def test_a_malformed_file_is_refused_with_the_line(tmp_path: Path, column: str, value: str, reason: str) -> None:
    path = comparison.write(tmp_path / "comparison.csv", [_row(id="ok"), _row(id="bad", nicsim=40.5, published=42.0)])
    with path.open(newline="", encoding="utf-8") as f:
        cells = list(csv.DictReader(f))
    cells[1][column] = value
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(comparison.COLUMNS))
        w.writeheader()
        w.writerows(cells)
    with pytest.raises(ComparisonError, match=rf"comparison.csv:3: .*{reason}"):
        comparison.read(path)


def test_a_repeated_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ComparisonError, match="twice"):
        comparison.write(tmp_path / "c.csv", [_row(id="a"), _row(id="a")])


def test_a_claim_verdict_must_be_computed_not_typed() -> None:
    with pytest.raises(ComparisonError, match="computed bool"):
        Claim("x", "claim.y", "the text", "evidence", "holds")  # type: ignore[arg-type]
    with pytest.raises(ComparisonError, match="evidence"):
        Claim("x", "claim.y", "the text", " ", True)
    failing = Claim("x", "claim.y", "the socket layer stays constant", "410 to 900 cycles", 900 / 410 < 1.1)
    assert failing.holds is False
    assert failing.row().nicsim == 0 and failing.row().role == "claim" and failing.row().unit == "bool"


# --- a study end to end -----------------------------------------------------------------


class CountingExecutor(LocalExecutor):
    """Counts the runs it is asked to do."""

    def __init__(self) -> None:
        super().__init__(workers=1)
        self.runs = 0

    def map(self, tasks):  # type: ignore[no-untyped-def, override]
        self.runs += len(tasks)
        return super().map(tasks)


def _tiny_study(tmp_path: Path) -> Study:
    small = tmp_path / "small.toml"
    small.write_text(TINY.format(size="64KiB"), encoding="utf-8")
    one = Run("one", small, "64 KiB over GbE")
    sizes = Grid("sizes", small, {"workload.bulk.bytes": ["16KiB", "32KiB"]}, "two sizes")

    def first(ctx: Context) -> list[str]:
        r = ctx.report(one)
        ctx.compare("one.goodput_mbs", "goodput of 64 KiB", "MB/s", nicsim=r.summary.mbs, published=100.0,
                    role="calibration")
        by = {p.params["workload.bulk.bytes"]: p.report.summary.payload_bytes for p in ctx.points(sizes)}
        ctx.claim("claim.sizes_delivered", "every byte arrives", f"delivered {by}", by == {"16KiB": 16384,
                                                                                          "32KiB": 32768})
        ctx.claim("claim.impossible", "goodput beats the wire", f"{r.summary.goodput_bps:.0f} bit/s",
                  r.summary.goodput_bps > 1e9)
        return [f"goodput {r.summary.mbs:.1f} MB/s"]

    return Study("tiny", "Tiny", ["a study for tests"], [Section("First", [one, sizes], first)])


def test_a_study_writes_its_report_and_comparison_and_a_rerun_runs_nothing(tmp_path: Path) -> None:
    study = _tiny_study(tmp_path)
    ex = CountingExecutor()
    with ex:
        written = study.reproduce(tmp_path / "out", tmp_path / "results", ex, progress=False)
        assert ex.runs == 3
        again = study.reproduce(tmp_path / "out2", tmp_path / "results", ex, progress=False)
        assert ex.runs == 3, "a second reproduction reuses every cached run"
    assert {p.name for p in written} == {p.name for p in again} == {"comparison.csv", "report.md"}
    rows = comparison.read(tmp_path / "out" / "comparison.csv")
    assert [(r.id, r.role) for r in rows] == [("one.goodput_mbs", "calibration"), ("claim.sizes_delivered", "claim"),
                                              ("claim.impossible", "claim")]
    assert rows[1].nicsim == 1 and rows[2].nicsim == 0
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## First" in text and "1 of 2 claims hold" in text and "**does not hold**" in text
    assert (tmp_path / "out" / "comparison.csv").read_bytes() == (tmp_path / "out2" / "comparison.csv").read_bytes()


def test_two_experiments_with_one_key_are_refused(tmp_path: Path) -> None:
    a = Run("k", tmp_path / "a.toml", "a")
    b = Run("k", tmp_path / "b.toml", "b")
    with pytest.raises(ValueError, match="'k'"):
        Study("s", "S", [], [Section("A", [a], lambda ctx: []), Section("B", [b], lambda ctx: [])])

