"""The campaign commands: sweep, status, export, report."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import nicsim_command, run_cli

SWEEP = """\
name = "cli-rates"
description = "two rates, two MTUs"
base = "../scenarios/small-bulk.toml"
constraints = ["links[0].mtu != '9000B' or links[0].rate >= 1Gbps"]

[grid]
"links[0].rate" = ["100Mbps", "1Gbps"]
"links[0].mtu" = ["1500B", "9000B"]
"""


@pytest.fixture
def sweep_file(tmp_path: Path, base_file: Path) -> Path:
    path = tmp_path / "sweeps" / "cli-rates.toml"
    path.parent.mkdir()
    path.write_text(SWEEP, encoding="utf-8")
    return path


def test_sweep_status_export_report(tmp_path: Path, sweep_file: Path) -> None:
    results = tmp_path / "results"
    before = run_cli("status", sweep_file, "--results", results)
    assert before.returncode == 0, before.stderr
    assert "cli-rates: 3 points: 0 ok, 0 failed, 3 missing" in before.stdout

    first = run_cli("sweep", sweep_file, "--results", results, "--workers", "2")
    assert first.returncode == 0, first.stderr
    assert "3 points, 3 runs: 0 cached, 3 computed (0 failed)" in first.stdout
    assert "on local, 2 workers" in first.stdout
    assert first.stderr == ""  # no progress bar off a terminal

    again = run_cli("sweep", sweep_file, "--results", results)
    assert again.returncode == 0, again.stderr
    assert "3 cached, 0 computed" in again.stdout

    for target in (sweep_file, results):
        status = run_cli("status", target, "--results", results)
        assert status.returncode == 0, status.stderr
        assert "cli-rates: 3 points: 3 ok, 0 failed, 0 missing" in status.stdout

    csv = tmp_path / "out" / "rates.csv"
    exported = run_cli("export", results, csv)
    assert exported.returncode == 0, exported.stderr
    frame = pd.read_csv(csv)
    assert list(frame["links[0].rate"]) == ["100Mbps", "1Gbps", "1Gbps"]
    assert list(frame["links[0].mtu"]) == ["1500B", "1500B", "9000B"]
    assert set(frame["status"]) == {"ok"}
    parquet = tmp_path / "out" / "rates.parquet"
    assert run_cli("export", sweep_file, parquet, "--results", results).returncode == 0
    assert list(pd.read_parquet(parquet)["key"]) == list(frame["key"])

    report = run_cli("report", results, "--html", "--out", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "# Sweep cli-rates" in md and "two rates, two MTUs" in md
    assert "| links[0].rate | links[0].mtu | runs | goodput (Mbit/s) |" in md
    assert "![goodput (Mbit/s) vs links[0].rate](links_0__rate.png)" in md
    for name in ("links_0__rate.png", "links_0__mtu.png", "report.html"):
        assert (tmp_path / "report" / name).stat().st_size > 0
    assert (tmp_path / "report" / "links_0__rate.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_on_dask(tmp_path: Path, sweep_file: Path) -> None:
    results = tmp_path / "results"
    done = run_cli(
        "sweep", sweep_file, "--results", results, "--executor", "dask", "--workers", "2"
    )
    assert done.returncode == 0, done.stderr
    assert "3 computed" in done.stdout and "dask (LocalCluster), 2 workers" in done.stdout
    local = run_cli("sweep", sweep_file, "--results", tmp_path / "local", "--workers", "1")
    assert local.returncode == 0, local.stderr
    for run_file in (results / "runs").glob("*/*.json"):
        twin = tmp_path / "local" / "runs" / run_file.parent.name / run_file.name
        assert json.loads(run_file.read_text())["report"] == json.loads(twin.read_text())["report"]


def test_a_bad_sweep_is_one_line_naming_the_field(tmp_path: Path, sweep_file: Path) -> None:
    sweep_file.write_text(SWEEP.replace('"1Gbps"]', '"1Gbs"]'), encoding="utf-8")
    bad = run_cli("sweep", sweep_file, "--results", tmp_path / "results")
    assert bad.returncode == 2
    assert bad.stderr.startswith(
        f'error: {sweep_file}: grid."links[0].rate"[1]: links[0].rate: unknown unit "Gbs"'
    )
    assert len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()


def test_status_of_a_directory_that_is_not_results(tmp_path: Path) -> None:
    out = run_cli("status", tmp_path)
    assert out.returncode == 2
    assert "neither a sweep file nor a results directory" in out.stderr


def test_failed_runs_are_reported(tmp_path: Path, sweep_file: Path) -> None:
    sweep_file.write_text(SWEEP + '\n[fixed]\n"run.time_limit" = "10ms"\n', encoding="utf-8")
    done = run_cli("sweep", sweep_file, "--results", tmp_path / "results")
    assert done.returncode == 0, done.stderr
    assert "(1 failed)" in done.stdout
    assert "warning: 1 runs failed" in done.stderr
    status = run_cli("status", sweep_file, "--results", tmp_path / "results")
    assert "2 ok, 1 failed, 0 missing" in status.stdout
    assert "failed: links[0].rate='100Mbps', links[0].mtu='1500B' seed 1:" in status.stdout
    assert "run.time_limit" in status.stdout


def test_ctrl_c_keeps_finished_runs_and_a_rerun_completes(tmp_path: Path, base_file: Path) -> None:
    sweep_file = tmp_path / "sweeps" / "long.toml"
    sweep_file.parent.mkdir()
    sweep_file.write_text(
        'base = "../scenarios/small-bulk.toml"\n'
        '[fixed]\n"workload.bulk.bytes" = "16MiB"\n'
        '[grid]\n"links[0].rate" = ['
        + ", ".join(f'"{r}Mbps"' for r in range(100, 4100, 100))
        + "]\n",
        encoding="utf-8",
    )
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [nicsim_command(), "sweep", str(sweep_file), "--results", str(results), "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    runs = results / "runs"
    deadline = time.monotonic() + 120
    while len(list(runs.glob("*/*.json"))) < 3:  # wait until some runs are stored
        assert proc.poll() is None and time.monotonic() < deadline, "the sweep ended too early"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("error: interrupted; finished runs are kept")
    kept = len(list(runs.glob("*/*.json")))
    assert 3 <= kept < 40
    assert not list(results.rglob(".tmp-*"))
    status = run_cli("status", sweep_file, "--results", results)
    assert f"40 points: {kept} ok, 0 failed, {40 - kept} missing" in status.stdout
    rerun = run_cli("sweep", sweep_file, "--results", results, "--workers", "2")
    assert rerun.returncode == 0, rerun.stderr
    assert f"{kept} cached, {40 - kept} computed" in rerun.stdout
