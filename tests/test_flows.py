"""Concurrent bulk flows: per-flow table, flows.csv and the summary line."""

from __future__ import annotations

import csv
from pathlib import Path

from conftest import GBE_MTU1500_GOODPUT_BPS, run_cli

SCENARIO = """\
name = "eight-flows"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
endpoints = ["a", "b"]
[workload.bulk]
from = "a"
to = "b"
flows = 8
bytes = "2MiB"
"""


def test_eight_flows_write_a_per_flow_table(tmp_path: Path) -> None:
    scenario = tmp_path / "flows.toml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    done = run_cli("run", scenario, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "Jain fairness" in done.stdout
    with open(tmp_path / "out" / "flows.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["flow"]) for r in rows] == list(range(8))
    assert all(int(r["bytes"]) == 2 * 1024 * 1024 for r in rows)
    # No flow can beat the wire, and together they fill it.
    goodputs = [float(r["goodput_bps"]) for r in rows]
    assert max(goodputs) < GBE_MTU1500_GOODPUT_BPS
    with open(tmp_path / "out" / "summary.csv", newline="", encoding="utf-8") as f:
        (summary,) = list(csv.DictReader(f))
    assert float(summary["goodput_bps"]) > 0.99 * GBE_MTU1500_GOODPUT_BPS
    fairness = float(summary["jain_fairness"])
    assert 1 / 8 <= fairness <= 1
    assert abs(fairness - sum(goodputs) ** 2 / (8 * sum(g * g for g in goodputs))) < 1e-9
