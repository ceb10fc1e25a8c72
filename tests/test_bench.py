"""`nicsim bench`: the table's shape and arithmetic, files, and bad arguments.

Speed is never asserted: the figures depend on the machine and its load.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from nicsim import bench

BENCH_DIR = REPO / "scenarios" / "bench"


def test_every_benchmark_scenario_exists_and_validates() -> None:
    for b in bench.BENCHMARKS:
        if b.missing:
            assert not b.scenario
            continue
        path = BENCH_DIR / b.scenario
        assert path.is_file(), path
        done = run_cli("validate", path)
        assert done.returncode == 0, done.stderr
        # The --quick overrides name knobs the scenario has, and still validate.
        text = bench.scenario_text(path, b.quick)
        assert text != path.read_text(encoding="utf-8")


def test_quick_run_writes_a_consistent_table(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    done = run_cli(
        "bench", "--quick", "--only", "tcp-1g-mtu1500", "--only", "lro-capture",
        "--only", "tcp-10g-mtu1500-probe-interrupt", "--out", out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "| benchmark | scenario | sim_s | wall_s | slowdown |" in done.stdout
    doc = json.loads((out / "bench.json").read_text(encoding="utf-8"))
    rows = {r["benchmark"]: r for r in doc["rows"]}
    assert list(rows) == ["tcp-1g-mtu1500", "tcp-10g-mtu1500-probe-interrupt", "lro-capture"]
    assert doc["quick"] is True and doc["machine"]["cpus"] >= 1
    for name in ("tcp-1g-mtu1500", "tcp-10g-mtu1500-probe-interrupt"):
        row = rows[name]
        assert set(row) == set(bench.COLUMNS)
        assert row["status"] == "ok"
        assert row["sim_s"] > 0 and row["wall_s"] > 0 and row["cpu_s"] >= 0
        assert row["slowdown"] == pytest.approx(row["wall_s"] / row["sim_s"], rel=1e-12)
        assert row["cpu_slowdown"] == pytest.approx(row["cpu_s"] / row["sim_s"], rel=1e-12)
        assert row["frames_per_wall_s"] == pytest.approx(row["frames"] / row["wall_s"], rel=1e-12)
        assert row["events_per_wall_s"] == pytest.approx(row["events"] / row["wall_s"], rel=1e-12)
        assert row["events"] > row["frames"] > 0
        assert row["peak_rss_mb"] >= row["run_rss_mb"] >= 0
    # Without probes nothing is counted; with the interrupt probe every
    # counted event is an interrupt the run raised.
    assert rows["tcp-1g-mtu1500"]["probe_events"] is None
    assert rows["tcp-10g-mtu1500-probe-interrupt"]["probe_events"] > 0
    assert rows["lro-capture"]["status"].startswith("missing")
    assert rows["lro-capture"]["slowdown"] is None
    with (out / "bench.csv").open(encoding="utf-8", newline="") as f:
        table = list(csv.DictReader(f))
    assert tuple(table[0]) == bench.COLUMNS
    assert [r["benchmark"] for r in table] == list(rows)
    assert float(table[0]["slowdown"]) == rows["tcp-1g-mtu1500"]["slowdown"]
    markdown = (out / "bench.md").read_text(encoding="utf-8").splitlines()
    assert markdown[0] == "| " + " | ".join(bench.COLUMNS) + " |"
    assert len(markdown) == 2 + len(rows)


def test_probe_count_matches_the_runs_interrupts(tmp_path: Path) -> None:
    b = next(x for x in bench.BENCHMARKS if x.name == "tcp-10g-mtu1500-probe-interrupt")
    measured = bench.run_child(BENCH_DIR / b.scenario, b.quick, b.probes)
    from nicsim import _core

    report = json.loads(_core.run_scenario(bench.scenario_text(BENCH_DIR / b.scenario, b.quick), "x", None, None, None, None))
    interrupts = sum(h["timing"]["nic"]["interrupts"] for h in report["hosts"])
    assert measured["probe_events"] == interrupts
    assert measured["events"] == report["summary"]["events"]
    assert measured["frames"] == report["summary"]["frames"]


def test_list_names_every_benchmark() -> None:
    done = run_cli("bench", "--list")
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == [b.name for b in bench.BENCHMARKS]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--only", "warp-drive"), "unknown benchmark warp-drive; known: tcp-1g-mtu1500"),
        (("--repeat", "0"), "Invalid value for '--repeat'"),
        (("--scenarios", "/nonexistent/bench"), "benchmark scenario directory not found"),
    ],
)
def test_bad_arguments_are_one_clear_line(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    done = run_cli("bench", "--quick", *args, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert message in done.stderr
    assert not (tmp_path / "out").exists()


def test_repeat_below_one_is_refused_by_the_api() -> None:
    with pytest.raises(bench.BenchError, match="repeat must be at least 1"):
        bench.run_benchmarks(["tcp-1g-mtu1500"], repeat=0)
