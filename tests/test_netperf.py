"""netperf-style tests: service demand against its definition, CPU from
the timing model, omni CSV columns, the CLI."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from conftest import SCENARIOS, run_cli

import nicsim
from nicsim import netperf

OMNI = [
    "THROUGHPUT", "THROUGHPUT_UNITS", "ELAPSED_TIME", "LOCAL_SEND_SIZE", "REMOTE_RECV_SIZE",
    "LOCAL_SEND_THROUGHPUT", "REMOTE_RECV_THROUGHPUT", "LOCAL_CPU_UTIL", "REMOTE_CPU_UTIL",
    "LOCAL_SD", "REMOTE_SD", "SD_UNITS", "TRANSACTION_RATE", "RT_LATENCY", "MEAN_LATENCY",
    "P50_LATENCY", "P90_LATENCY", "P99_LATENCY",
]  # fmt: skip


def test_service_demand_of_a_stream_worked_by_hand() -> None:
    # 100 Mbit/s = 12,500,000 B/s = 12,207.03125 KB/s (KB = 1024 B). Two CPUs
    # at 25 % each spend 0.5 CPU-s per second: 500,000 µs / 12,207.03125 KB
    # = 40.96 µs/KB, and netperf's formula 25 × 10000 × 2 / 12,207.03125 gives
    # the same.
    assert netperf.service_demand(25.0, 2, 12_207.03125) == pytest.approx(40.96, rel=1e-12)


def test_service_demand_of_transactions_worked_by_hand() -> None:
    # One CPU half busy at 20,000 transactions/s: 0.5 s / 20,000 = 25 µs each.
    assert netperf.service_demand(50.0, 1, 20_000.0) == pytest.approx(25.0, rel=1e-12)
    assert math.isnan(netperf.service_demand(math.nan, 1, 20_000.0)), "no CPU model: no service demand"


def _report(busy_local: list[float], busy_remote: list[float] | None) -> nicsim.Result:
    """A hand-made report of a 2-second, 250,000,000-byte TCP stream."""

    def host(name: str, busy: list[float] | None) -> dict:
        timing = None if busy is None else {"cores": [{"busy_s": b} for b in busy]}
        return {"name": name, "timing": timing}

    data = {
        "scenario": {"name": "hand"},
        "workload": {"kind": "bulk", "from": "x", "to": "y", "write_size": "64KiB"},
        "summary": {"goodput_bps": 1e9, "duration_s": 2.0, "payload_bytes": 250_000_000},
        "hosts": [host("x", busy_local), host("y", busy_remote)],
    }
    return nicsim.Result(json.dumps(data))


def test_omni_row_from_busy_times_worked_by_hand() -> None:
    row = netperf.omni_row("TCP_STREAM", _report([0.3, 0.1], None))
    # Two cores busy 0.4 s in all over 2 s: 0.4 / (2 × 2) = 10 %.
    assert row["LOCAL_CPU_UTIL"] == pytest.approx(10.0, rel=1e-12)
    # 10 × 10000 × 2 / (125,000,000 B/s / 1024) = 1.6384 µs/KB; equally
    # 400,000 µs of CPU / (250,000,000 / 1024) KB.
    assert row["LOCAL_SD"] == pytest.approx(1.6384, rel=1e-12)
    assert row["THROUGHPUT"] == pytest.approx(1000.0) and row["THROUGHPUT_UNITS"] == "10^6bits/s"
    assert row["LOCAL_SEND_SIZE"] == 65536
    # The remote is an ideal host: no CPU model, so NaN, not 0.
    assert math.isnan(row["REMOTE_CPU_UTIL"]) and math.isnan(row["REMOTE_SD"])


def test_service_demand_of_a_timed_stream_is_cpu_time_per_kb() -> None:
    text = netperf.scenario_text(
        "TCP_STREAM", (SCENARIOS / "kurmann-standard.toml").read_text(), netperf.Options(length="0.2s")
    )
    result = nicsim.run(text)
    row = netperf.omni_row("TCP_STREAM", result)
    s = result.summary
    assert s["verified"]
    kb = s["payload_bytes"] / 1024
    for side, name in (("LOCAL", "a"), ("REMOTE", "b")):
        (host,) = [h for h in result.hosts if h["name"] == name]
        cores = host["timing"]["cores"]
        busy_us = sum(c["busy_s"] for c in cores) * 1e6
        # Service demand is CPU time per KB moved, whatever the CPU count.
        assert row[f"{side}_SD"] == pytest.approx(busy_us / kb, rel=1e-9)
        util = row[f"{side}_CPU_UTIL"]
        assert util == pytest.approx(100 * busy_us / 1e6 / (len(cores) * s["duration_s"]), rel=1e-12)
        assert 0 < util <= 100
    # The study's receiver is CPU-bound (the scenario's own calibration note).
    assert row["REMOTE_CPU_UTIL"] > 90


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_cli_tcp_rr_writes_omni_csv(tmp_path: Path) -> None:
    done = run_cli("netperf", "TCP_RR", "-l", "2000", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "netperf.csv", encoding="utf-8") as f:
        assert f.readline().rstrip("\n").split(",") == OMNI
    (row,) = _csv(tmp_path / "netperf.csv")
    assert row["THROUGHPUT_UNITS"] == "Trans/s"
    # One-byte transactions between ideal hosts over GbE with 500 ns of cable:
    # 2 × (91 B of wire time = 728 ns + 500 ns) = 2.456 µs.
    assert float(row["P50_LATENCY"]) == pytest.approx(2.456, abs=1e-9)
    assert float(row["P50_LATENCY"]) <= float(row["P90_LATENCY"]) <= float(row["P99_LATENCY"])
    assert float(row["RT_LATENCY"]) == pytest.approx(1e6 / float(row["TRANSACTION_RATE"]), rel=1e-12)
    assert row["LOCAL_CPU_UTIL"] == "" and row["LOCAL_SD"] == "", "ideal hosts have no CPU model"


def test_cli_udp_stream_reports_send_and_receive_rates(tmp_path: Path) -> None:
    done = run_cli("netperf", "UDP_STREAM", "-l", "20ms", "-m", "1000B", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    (row,) = _csv(tmp_path / "netperf.csv")
    result = json.loads((tmp_path / "result.json").read_text())
    s = result["summary"]
    assert float(row["LOCAL_SEND_THROUGHPUT"]) == pytest.approx(s["send_bps"] / 1e6, rel=1e-12)
    assert float(row["REMOTE_RECV_THROUGHPUT"]) == pytest.approx(s["goodput_bps"] / 1e6, rel=1e-12)
    # What arrives cannot exceed the wire: 1000 B of payload per 1066 B of wire time.
    assert float(row["REMOTE_RECV_THROUGHPUT"]) <= 1000 * 1000 / 1066 * (1 + 1e-9)
    assert row["LOCAL_SEND_SIZE"] == "1000"
    assert "send rate (local)" in done.stdout and "receive rate (remote)" in done.stdout


def test_cli_tcp_crr_and_timed_profile(tmp_path: Path) -> None:
    done = run_cli("netperf", "TCP_CRR", "-l", "200", "--profile", "kurmann-pii-400", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    (row,) = _csv(tmp_path / "netperf.csv")
    assert row["SD_UNITS"] == "usec/Tran"
    rate = float(row["TRANSACTION_RATE"])
    for side in ("LOCAL", "REMOTE"):
        util = float(row[f"{side}_CPU_UTIL"])
        assert 0 < util <= 100
        # One CPU: SD = U % × 10000 / rate.
        assert float(row[f"{side}_SD"]) == pytest.approx(util * 10000 / rate, rel=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["TCP_STREAM", "-l", "1000"], "-l: a STREAM test runs for a duration"),
        (["TCP_RR", "-l", "1s"], "-l: an RR test runs a transaction count"),
        (["TCP_RR", "-H", "nosuch"], "-H: no host named 'nosuch'"),
        (["TCP_RR", "-m", "1KiB"], "-m: the send size is for STREAM tests"),
    ],
)
def test_cli_bad_options_are_one_line_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    done = run_cli("netperf", *args, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {message}"), done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_cli_bad_size_names_the_workload_field(tmp_path: Path) -> None:
    done = run_cli("netperf", "TCP_RR", "-r", "0B,1B", "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "workload.request_response.request: must be 1B to 1GiB" in done.stderr, done.stderr


def test_python_api_runs_a_test_on_the_default_pair() -> None:
    result, row = nicsim.netperf.run("UDP_RR", options=netperf.Options(length="500"))
    assert result.summary["transactions"] == 500
    assert row["THROUGHPUT_UNITS"] == "Trans/s"
    # One 1-byte datagram each way: 43 B padded to a 60-byte frame, 84 B of
    # wire time (672 ns), plus 500 ns of cable, twice: 2.344 µs.
    assert row["P50_LATENCY"] == pytest.approx(2.344, abs=1e-9)


def test_a_stream_longer_than_the_default_time_limit_gets_room_to_finish() -> None:
    text = netperf.scenario_text("TCP_STREAM", None, netperf.Options(length="90s"))
    resolved = nicsim.resolve(text)
    # The default limit is 60 s; a 90 s test gets 90 s plus 10 s to drain.
    assert resolved["run"]["time_limit"] == "100s"
    short = nicsim.resolve(netperf.scenario_text("TCP_STREAM", None, netperf.Options(length="20ms")))
    assert short["run"]["time_limit"] == "60s", "a limit that is already enough stays"
