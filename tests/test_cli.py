"""The `nicsim` command: output, exit codes, result files, determinism."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli, with_bad_link_rate


def test_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0
    assert done.stdout == "nicsim 0.1.0\n"


def test_bad_field_is_one_line_and_exit_2(bulk_scenario: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(with_bad_link_rate(bulk_scenario.read_text(encoding="utf-8")), encoding="utf-8")
    out = tmp_path / "out"
    for done in (run_cli("run", bad, "--out", out), run_cli("validate", bad)):
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith(f"error: {bad}: links[0].rate: "), done.stderr
        assert len(done.stderr.splitlines()) == 1
    assert not out.exists()


def test_missing_file_is_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    done = run_cli("run", missing)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert str(missing) in done.stderr
    assert "does not exist" in done.stderr


def test_file_that_is_not_utf8_is_exit_2(tmp_path: Path) -> None:
    scenario = tmp_path / "latin1.toml"
    scenario.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    for done in (run_cli("run", scenario), run_cli("validate", scenario)):
        assert done.returncode == 2
        assert done.stderr.startswith(f"error: {scenario}: not UTF-8 text"), done.stderr
        assert "Traceback" not in done.stderr


def test_validate_ok(bulk_scenario: Path) -> None:
    done = run_cli("validate", bulk_scenario)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


def test_run_prints_summary_and_writes_default_results(bulk_scenario: Path, tmp_path: Path) -> None:
    done = run_cli("run", bulk_scenario, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for field in ("gbe-mtu1500-bulk", "goodput", "Mbit/s", "Ethernet ceiling", "verified", "yes"):
        assert field in done.stdout
    out = tmp_path / "results" / "gbe-mtu1500-bulk"
    assert f"results written to {Path('results') / 'gbe-mtu1500-bulk'}: " in done.stdout
    assert json.loads((out / "result.json").read_text())["summary"]["verified"] is True
    assert (out / "summary.csv").is_file()
    assert (out / "links.csv").is_file()


def run_in(workdir: Path, scenario: Path, seed: int) -> dict[str, bytes]:
    """Run the scenario with relative --out and --pcap inside `workdir` and
    return every file written, by path relative to `workdir`."""
    workdir.mkdir()
    done = run_cli(
        "run", scenario, "--seed", str(seed), "--out", "out", "--pcap", "pcap", cwd=workdir
    )
    assert done.returncode == 0, done.stderr
    return {
        str(p.relative_to(workdir)): p.read_bytes()
        for p in sorted(workdir.rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_identical_files(bulk_scenario: Path, tmp_path: Path) -> None:
    first = run_in(tmp_path / "one", bulk_scenario, seed=42)
    second = run_in(tmp_path / "two", bulk_scenario, seed=42)
    names = sorted(first)
    assert {"out/result.json", "out/summary.csv", "out/links.csv"} <= set(names)
    assert any(n.startswith("pcap/") and n.endswith(".pcap") for n in names), names
    assert names == sorted(second)
    for name in names:
        assert first[name] == second[name], f"{name} differs between two runs with seed 42"


def test_another_seed_still_verifies(bulk_scenario: Path, tmp_path: Path) -> None:
    files = run_in(tmp_path / "run", bulk_scenario, seed=7)
    result = json.loads(files["out/result.json"])
    assert result["seed"] == 7
    assert result["summary"]["verified"] is True


REQUEST_RESPONSE = """
name = "rr"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
endpoints = ["a", "b"]
[workload.request_response]
client = "a"
server = "b"
transactions = 100
"""


def test_request_response_shows_transactions(tmp_path: Path) -> None:
    scenario = tmp_path / "rr.toml"
    scenario.write_text(REQUEST_RESPONSE, encoding="utf-8")
    done = run_cli("run", scenario, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for field in ("transactions", "100", "transaction rate", "mean latency", "p50 / p99 latency"):
        assert field in done.stdout
    summary = json.loads((tmp_path / "results" / "rr" / "result.json").read_text())["summary"]
    assert summary["transactions"] == 100
