"""Determinism seen from Python: the same scenario and seed give the same
report and the same pcap bytes, whether probes are attached or not and
whether the run happens in this process or a fresh one.

(LocalExecutor against DaskExecutor is in tests/campaign/test_executors.py;
the CLI's result files in tests/test_cli.py.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nicsim

EVENTS = ("frame", "deliver", "interrupt", "job", "call")

# Lossy, duplicating, reordering, corrupting link between a timed host and
# an ideal one: every random stream and both host models take part.
SCENARIO = """
name = "determinism"
seed = 3
[[hosts]]
name = "a"
profile = "kurmann-pii-400"
[[hosts]]
name = "b"
[[links]]
endpoints = ["a", "b"]
rate = "1Gbps"
propagation = "2us"
impairments = { loss = 0.01, duplicate = 0.02, reorder = 0.02, reorder_delay = "10us", corrupt = 0.005 }
[workload.bulk]
from = "a"
to = "b"
bytes = "300kB"
[run]
time_limit = "200s"
"""


def run(pcap: Path, probed: bool) -> tuple[str, bytes, int]:
    seen: list[object] = []
    probes = {name: seen.append for name in EVENTS} if probed else None
    result = nicsim.run(SCENARIO, pcap=pcap, probes=probes)
    trace = (pcap / "link0-a-b.pcap").read_bytes()
    return result.json, trace, len(seen)


def test_probes_change_neither_the_report_nor_the_trace(tmp_path: Path) -> None:
    plain, plain_trace, _ = run(tmp_path / "plain", probed=False)
    again, again_trace, _ = run(tmp_path / "again", probed=False)
    probed, probed_trace, events = run(tmp_path / "probed", probed=True)
    assert events > 1000, "the probes saw the run"
    assert plain == again and plain_trace == again_trace
    assert probed == plain
    assert probed_trace == plain_trace
    report = json.loads(plain)
    assert report["summary"]["lost"] > 0 and report["summary"]["verified"], "the impairments took effect"


def test_a_fresh_process_gives_the_same_report(tmp_path: Path) -> None:
    code = (
        "import sys, nicsim; "
        "sys.stdout.write(nicsim.run(sys.stdin.read()).json)"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], input=SCENARIO, capture_output=True, text=True, check=True
    ).stdout
    assert other == nicsim.run(SCENARIO).json


def test_the_seed_argument_matters(tmp_path: Path) -> None:
    # Guards the comparisons above against a report that ignores the seed.
    assert nicsim.run(SCENARIO, seed=4).json != nicsim.run(SCENARIO, seed=3).json

