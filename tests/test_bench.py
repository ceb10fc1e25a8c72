"""`nicsim bench`: the table's shape and arithmetic, files, and bad arguments.

Speed is never asserted: the figures depend on the machine and its load.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from nicsim import _core, bench

BENCH_DIR = REPO / "scenarios" / "bench"


def test_every_benchmark_scenario_exists_and_validates(tmp_path: Path) -> None:
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
        if b.lro:
            # The capture's overrides too, alone and with the quick ones on top.
            for overrides in (b.capture, {**b.capture, **b.quick}):
                knobbed = tmp_path / f"{b.name}.toml"
                knobbed.write_text(bench.scenario_text(path, overrides), encoding="utf-8")
                done = run_cli("validate", knobbed)
                assert done.returncode == 0, done.stderr


def test_quick_run_writes_a_consistent_table(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    done = run_cli(
        "bench", "--quick", "--only", "tcp-1g-mtu1500", "--only", "lro-capture-gro", "--only", "lro-capture-nic",
        "--only", "tcp-10g-mtu1500-probe-interrupt", "--out", out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "| benchmark | scenario | sim_s | wall_s | slowdown |" in done.stdout
    doc = json.loads((out / "bench.json").read_text(encoding="utf-8"))
    rows = {r["benchmark"]: r for r in doc["rows"]}
    assert list(rows) == ["tcp-1g-mtu1500", "tcp-10g-mtu1500-probe-interrupt", "lro-capture-nic", "lro-capture-gro"]
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
    # The LRO rows coalesce one capture of the quick tcp-10g-mtu1500 run:
    # as many frames in as that run put on the wire, over its simulated time.
    lro = next(b for b in bench.BENCHMARKS if b.name == "lro-capture-nic")
    text = bench.scenario_text(BENCH_DIR / lro.scenario, {**lro.capture, **lro.quick})
    summary = json.loads(_core.run_scenario(text, "x", None, None, None, None))["summary"]
    for name in ("lro-capture-nic", "lro-capture-gro"):
        row = rows[name]
        assert set(row) == set(bench.COLUMNS)
        assert row["status"] == "ok"
        assert row["frames"] == summary["frames"] > 1000
        assert row["sim_s"] == summary["sim_time_s"]
        assert row["wall_s"] > 0 and row["frames_per_wall_s"] > 0
        assert row["frames_per_wall_s"] == pytest.approx(row["frames"] / row["wall_s"], rel=1e-12)
        assert row["slowdown"] == pytest.approx(row["wall_s"] / row["sim_s"], rel=1e-12)
        assert row["events"] is None and row["events_per_wall_s"] is None and row["probe_events"] is None
        assert row["peak_rss_mb"] >= row["run_rss_mb"] >= 0
    assert "lro-capture-nic" in done.stdout and "no events" in done.stdout
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
    report = json.loads(_core.run_scenario(bench.scenario_text(BENCH_DIR / b.scenario, b.quick), "x", None, None, None, None))
    interrupts = sum(h["timing"]["nic"]["interrupts"] for h in report["hosts"])
    assert measured["probe_events"] == interrupts
    assert measured["events"] == report["summary"]["events"]
    assert measured["frames"] == report["summary"]["frames"]


def test_recording_benchmark_counts_what_the_probe_benchmark_counts() -> None:
    """The record-all row records exactly the events the probe-all row calls a
    Python probe for, and neither changes the simulation."""
    rec = next(x for x in bench.BENCHMARKS if x.name == "tcp-10g-mtu1500-record-all")
    probe = next(x for x in bench.BENCHMARKS if x.name == "tcp-10g-mtu1500-probe-all")
    assert rec.record == probe.probes and rec.scenario == probe.scenario
    recorded = bench.run_child(BENCH_DIR / rec.scenario, rec.quick, (), rec.record)
    called = bench.run_child(BENCH_DIR / probe.scenario, probe.quick, probe.probes)
    assert recorded["probe_events"] == called["probe_events"] > 0
    assert (recorded["events"], recorded["frames"]) == (called["events"], called["frames"])


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


def test_the_lro_child_coalesces_the_capture_it_is_given(tmp_path: Path) -> None:
    """The child of an LRO benchmark runs the engine it is named (the NIC
    engine and GRO report different statistics) over every frame of the
    capture and writes fewer frames than it read (bulk TCP coalesces)."""
    from nicsim.bench import Captures, run_lro_child

    b = next(x for x in bench.BENCHMARKS if x.name == "lro-capture-nic")
    capture = Captures(tmp_path).get(BENCH_DIR / b.scenario, {**b.capture, **b.quick})
    assert capture.sim_s > 0
    for engine in ("nic", "gro"):
        out = tmp_path / f"{engine}.pcap"
        measured = run_lro_child(capture.pcap, out, engine)
        report = json.loads(_core.coalesce_pcap(capture.pcap, tmp_path / "again.pcap", engine))
        assert report["engine"] == engine
        assert measured["frames"] == report["frames_in"] > 0
        assert 0 < measured["frames_out"] == report["frames_out"] < measured["frames"]
        assert out.read_bytes() == (tmp_path / "again.pcap").read_bytes()
        assert measured["wall_s"] > 0 and measured["events"] is None


def test_an_lro_benchmark_needs_a_single_link_capture(tmp_path: Path) -> None:
    scenarios = tmp_path / "bench"
    scenarios.mkdir()
    two_links = """\
name = "switched"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
[[links]]
endpoints = ["a", "sw"]
[[links]]
endpoints = ["sw", "b"]
[workload.bulk]
from = "a"
to = "b"
duration = "1ms"
"""
    (scenarios / "tcp-10g-mtu1500.toml").write_text(two_links, encoding="utf-8")
    with pytest.raises(bench.BenchError, match="needs a scenario with one link, not 2"):
        bench.run_benchmarks(["lro-capture-nic"], scenario_dir=scenarios)
