"""`nicsim reproduce elbeshti`: the report is written with its tables, its
CSV rows are what the bindings return, and the study's numbers are in it.
Plus the bindings' physics and errors."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from nicsim import _core
from nicsim.cli import main

GBPS = 1_000_000_000


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("elbeshti")
    out = results / "report"
    res = CliRunner().invoke(
        main, ["reproduce", "elbeshti", "--results", str(results), "--out", str(out), "--no-progress"]
    )
    assert res.exit_code == 0, res.output
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_report_has_every_table_and_figure(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    for heading in (
        "## Experiment 1",
        "## Experiment 2",
        "### Table I: DMA at 5x the core clock",
        "### Table II: DMA at 3759 MHz",
        "## Experiment 4",
    ):
        assert heading in text, heading
    for fig in ("fig6-min-clock", "tables-busy-idle", "idle-vs-ratio"):
        assert f"]({fig}.png)" in text
        assert (report / f"{fig}.png").stat().st_size > 1000
    # No section for experiment 5 until the engine lands.
    assert "Experiment 5" not in text


def test_study_numbers_are_in_the_report(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "812,743.82" in text
    assert "366 bus cycles (183 read + 183 write" in text
    assert "2927 cycles" in text
    # The busy counts, per class, in both tables.
    for cls, busy in (("BOM", 22), ("COM", 29), ("EOM", 28), ("SSM", 17), ("OOP", 32)):
        assert text.count(f"| {cls} | {busy} |") == 2, cls


def test_table_rows_match_the_bindings(report: Path) -> None:
    rows = _rows(report / "tables.csv")
    assert {(r["table"], int(r["size"])) for r in rows} == {(t, s) for t in ("I", "II") for s in (512, 1024, 1500)}
    assert len(rows) == 30
    for r in rows:
        kw = {"dma_ratio": 5.0} if r["table"] == "I" else {"dma_clock_hz": 3_759_000_000}
        clock = round(float(r["core_clock_mhz"]) * 1e6)
        b = _core.risc_cycles(int(r["size"]), core_clock_hz=clock, classes=[r["class"]], **kw)[0]
        assert (int(r["busy"]), int(r["idle"]), int(r["total"])) == (b["busy"], b["idle"], b["total"]), r
        assert int(r["busy"]) == int(r["study_busy"])
        assert int(r["total"]) == int(r["busy"]) + int(r["idle"])
    # The bus rule: 2 × ceil((size − 40) / 8) bus cycles.
    for r in rows:
        assert int(r["bus_cycles"]) == 2 * math.ceil((int(r["size"]) - 40) / 8)


def test_min_clock_rows_match_the_bindings_and_hold_at_the_edge(report: Path) -> None:
    rows = [r for r in _rows(report / "minclock.csv") if r["host_dma"] == "False" and r["size"] in ("512", "1024", "1500")]
    assert len(rows) == 6
    for r in rows:
        kw = {"dma_ratio": 5.0} if r["dma"] == "ratio 5x" else {"dma_clock_hz": 3_759_000_000}
        m = _core.risc_min_clock(int(r["size"]), 100 * GBPS, packets=int(r["frames"]), **kw)
        assert m["clock_mhz"] == int(r["min_clock_mhz"])
        assert int(r["drops_at_min"]) == 0 and int(r["drops_at_98pct"]) > 0, r
    # Smaller packets arrive more often: the clock needed rises as size falls.
    for dma in ("ratio 5x", "3759 MHz"):
        clocks = [int(r["min_clock_mhz"]) for r in sorted(rows, key=lambda r: int(r["size"])) if r["dma"] == dma]
        assert clocks == sorted(clocks, reverse=True), (dma, clocks)


def test_host_rows_and_the_wire_overhead(report: Path) -> None:
    rows = {int(r["line_rate_gbps"]): r for r in _rows(report / "host.csv")}
    assert float(rows[10]["packets_per_s"]) == pytest.approx(812_743.82, abs=0.01)
    # 10 Gbps over 1538 bytes per packet: 1500 + 38 B of overhead.
    assert 10 * GBPS / (1538 * 8) == pytest.approx(812_743.82, abs=0.01)
    assert float(rows[10]["cpu_share"]) == pytest.approx(812_743.82 * 2927 / 4e9, abs=1e-4)
    h = _core.host_lro()
    assert float(rows[10]["simulated_cpu_share"]) == pytest.approx(h["simulated_share"], abs=1e-5)
    budget = {int(r["frame"]): r for r in _rows(report / "budget.csv")}
    assert float(budget[64]["budget_ns_100g"]) == pytest.approx(6.72)
    assert float(budget[1500]["budget_ns_40g"]) == pytest.approx(304.0)


def test_idle_vanishes_at_the_reported_ratio(report: Path) -> None:
    for r in _rows(report / "ratios.csv"):
        assert float(r["idle_free_ratio"]) == pytest.approx(int(r["bus_cycles"]) / 7, abs=1e-5)
        assert int(r["idle_at_ratio"]) == 0 and int(r["idle_at_99pct"]) > 0


def test_simulate_conserves_frames_and_overload_drops() -> None:
    ok = _core.risc_simulate(1500, 100 * GBPS, 2_000_000_000, packets=500)
    assert (ok["offered"], ok["processed"], ok["drops"]) == (500, 500, 0)
    assert ok["busy_share"] + ok["idle_share"] == pytest.approx(1.0)
    slow = _core.risc_simulate(1500, 100 * GBPS, 400_000_000, packets=500)
    assert slow["drops"] > 100 and slow["processed"] + slow["drops"] == 500
    starts = [f["start_ps"] for f in slow["frames"]]
    assert starts == sorted(starts)


def test_bad_arguments_name_the_field() -> None:
    with pytest.raises(_core.ScenarioError) as e:
        _core.risc_cycles(1500, dma_ratio=5.0, dma_clock_hz=3_759_000_000)
    assert e.value.path == "dma_clock_hz"
    with pytest.raises(_core.ScenarioError) as e:
        _core.risc_simulate(1500, 100 * GBPS, 10**9, pattern=["BOM", "XYZ"])
    assert e.value.path == "pattern[1]"
    with pytest.raises(_core.ScenarioError) as e:
        _core.risc_cycles(1500, program={"COM": 0})
    assert e.value.path == "program.COM"
    with pytest.raises(_core.ScenarioError) as e:
        _core.risc_simulate(1500, 100 * GBPS, 10**9, arrivals=[(0, 1500, "COM"), (10, 1500, "COM")])
    assert e.value.path == "arrivals[1].time"
    with pytest.raises(_core.ScenarioError) as e:
        _core.risc_simulate(1500, 100 * GBPS, 0)
    assert e.value.path == "core_clock_hz"
    # A fixed DMA too slow for the line: no core clock helps, and the error says why.
    with pytest.raises(_core.ScenarioError) as e:
        _core.risc_min_clock(1500, 100 * GBPS, dma_clock_hz=1_000_000_000, packets=100)
    assert e.value.path == "dma_clock_hz" and "366.0 ns" in e.value.reason
