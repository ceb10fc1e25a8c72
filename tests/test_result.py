"""Result: tables and files from a report, whatever optional keys it lacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from nicsim import Result

SUMMARY: dict[str, Any] = {
    "goodput_bps": 941_000_000.5,
    "payload_bytes": 67_108_864,
    "duration_s": 0.57,
    "sim_time_s": 0.58,
    "frames": 70_000,
    "drops": 0,
    "retransmissions": 0,
    "ceiling_bps": 941_482_444.7,
    "verified": True,
    "transactions": None,
    "transaction_rate": None,
    "mean_latency_s": None,
}
LINK: dict[str, Any] = {
    "link": "a-b",
    "direction": "a->b",
    "frames": 46_000,
    "bytes": 69_000_000,
    "wire_bytes": 70_000_000,
    "queue_drops": 0,
    "lost": 0,
    "duplicated": 0,
    "reordered": 0,
    "corrupted": 0,
    "utilization": 0.99,
}
TIMING: dict[str, Any] = {
    "profile": "400 MHz Pentium II",
    "cpu_utilization": 0.5,
    "cycles": {"copy": 300, "tcp": 100, "ip": 0},
    "cores": [
        {"core": 0, "utilization": 0.8, "interrupts": 30, "interrupts_per_s": 3000.0},
        {"core": 1, "utilization": 0.2, "interrupts": 10, "interrupts_per_s": 1000.0},
    ],
    "nic": {"rx_frames": 5, "tx_frames": 6, "rx_fifo_drops": 2},
    "bus_utilization": 0.25,
    "messages": None,
    "rx_copy": {"llc_bytes": 750, "memory_bytes": 250, "read_bytes": 1000},
}
HOSTS: list[dict[str, Any]] = [
    {"name": "a", "ip": "10.0.0.1", "tx_frames": 6, "rx_frames": 5, "timing": None},
    {"name": "b", "ip": "10.0.0.2", "tx_frames": 5, "rx_frames": 6, "timing": TIMING},
]
REPORT: dict[str, Any] = {
    "nicsim_version": "0.1.0",
    "scenario": {"name": "demo", "source": "demo.toml", "description": "é"},
    "seed": 7,
    "workload": {"kind": "bulk"},
    "summary": SUMMARY,
    "links": [LINK, {**LINK, "direction": "b->a"}],
    "hosts": HOSTS,
}


def test_table_is_one_row_with_identity_and_summary() -> None:
    table = Result(json.dumps(REPORT)).table()
    assert len(table) == 1
    row = table.iloc[0]
    assert row["scenario"] == "demo"
    assert row["workload"] == "bulk"
    assert row["seed"] == 7
    assert row["nicsim_version"] == "0.1.0"
    assert row["goodput_bps"] == SUMMARY["goodput_bps"]
    assert list(table.columns)[4:] == list(SUMMARY)


def test_links_table_has_a_row_per_direction() -> None:
    links = Result(json.dumps(REPORT)).links_table()
    assert list(links["direction"]) == ["a->b", "b->a"]
    assert list(links.columns) == list(LINK)


def test_write_keeps_the_json_byte_for_byte(tmp_path: Path) -> None:
    # Unusual but valid formatting: the file must be this text, not a re-dump.
    text = json.dumps(REPORT, indent=3, ensure_ascii=False) + "\n"
    written = Result(text).write(tmp_path / "out")
    names = ["result.json", "summary.csv", "links.csv", "hosts.csv", "cycles.csv"]
    assert [p.name for p in written] == names
    assert (tmp_path / "out" / "result.json").read_bytes() == text.encode("utf-8")


def test_csv_files_are_deterministic(tmp_path: Path) -> None:
    text = json.dumps(REPORT)
    for out in ("one", "two"):
        Result(text).write(tmp_path / out)
    for name in ("summary.csv", "links.csv", "hosts.csv", "cycles.csv"):
        one = (tmp_path / "one" / name).read_bytes()
        assert one == (tmp_path / "two" / name).read_bytes()
        assert b"\r" not in one
    header, row = (tmp_path / "one" / "summary.csv").read_text().splitlines()
    assert header.startswith("scenario,workload,seed,nicsim_version,goodput_bps,")
    assert row.startswith("demo,bulk,7,0.1.0,941000000.5,")


def test_hosts_table_sums_cores_and_leaves_ideal_hosts_na() -> None:
    hosts = Result(json.dumps(REPORT)).hosts_table().set_index("name")
    ideal, timed = hosts.loc["a"], hosts.loc["b"]
    assert ideal["tx_frames"] == 6
    assert ideal[["profile", "cpu_utilization", "interrupts", "rx_fifo_drops"]].isna().all()
    assert timed["interrupts"] == 40
    assert timed["interrupts_per_s"] == 4000.0
    assert timed["cpu_utilization"] == 0.5
    assert timed["max_core_utilization"] == 0.8
    assert timed["bus_utilization"] == 0.25
    assert timed["rx_fifo_drops"] == 2
    assert timed["rx_from_llc"] == 0.75
    assert pd.isna(ideal["rx_from_llc"])
    assert pd.isna(timed["machine"]) and pd.isna(ideal["machine"])


def test_hosts_table_names_a_hosts_machine() -> None:
    report = {**REPORT, "hosts": [HOSTS[0], {**HOSTS[1], "timing": {**TIMING, "machine": "server"}}]}
    hosts = Result(json.dumps(report)).hosts_table().set_index("name")
    assert hosts.loc["b", "machine"] == "server"
    assert pd.isna(hosts.loc["a", "machine"])


def test_cycles_table_is_tidy_with_shares() -> None:
    cycles = Result(json.dumps(REPORT)).cycles_table()
    assert cycles.to_dict("records") == [
        {"host": "b", "layer": "copy", "cycles": 300, "share": 0.75},
        {"host": "b", "layer": "tcp", "cycles": 100, "share": 0.25},
    ]


def test_hosts_csv_leaves_ideal_timing_empty(tmp_path: Path) -> None:
    Result(json.dumps(REPORT)).write(tmp_path)
    header, ideal, timed = (tmp_path / "hosts.csv").read_text().splitlines()
    assert header == (
        "name,ip,tx_frames,rx_frames,profile,cpu_utilization,max_core_utilization,"
        "interrupts,interrupts_per_s,bus_utilization,rx_fifo_drops,rx_from_llc,machine"
    )
    assert ideal == "a,10.0.0.1,6,5,,,,,,,,,"
    assert timed == "b,10.0.0.2,5,6,400 MHz Pentium II,0.5,0.8,40,4000.0,0.25,2,0.75,"
    assert (tmp_path / "cycles.csv").read_text().splitlines()[0] == "host,layer,cycles,share"


@given(dropped=st.sets(st.sampled_from(sorted(TIMING))))
def test_missing_timing_fields_never_break_host_tables(dropped: set[str]) -> None:
    timing = {k: v for k, v in TIMING.items() if k not in dropped}
    result = Result(json.dumps({**REPORT, "hosts": [HOSTS[0], {**HOSTS[1], "timing": timing}]}))
    assert len(result.hosts_table()) == 2
    assert len(result.cycles_table()) == (0 if "cycles" in dropped else 2)


@given(
    dropped=st.sets(st.sampled_from(sorted(REPORT))),
    nulled=st.sets(st.sampled_from(sorted(SUMMARY))),
)
def test_missing_or_null_fields_never_break_tables(dropped: set[str], nulled: set[str]) -> None:
    report = {k: v for k, v in REPORT.items() if k not in dropped}
    if "summary" in report:
        report["summary"] = {k: (None if k in nulled else v) for k, v in SUMMARY.items()}
    result = Result(json.dumps(report))
    assert len(result.table()) == 1
    assert len(result.links_table()) == (0 if "links" in dropped else 2)
    assert len(result.hosts_table()) == (0 if "hosts" in dropped else 2)
    assert list(result.cycles_table().columns) == ["host", "layer", "cycles", "share"]
    assert isinstance(result.name, str)
    assert isinstance(repr(result), str)


def test_pcaps_are_named_inside_the_pcap_dir(tmp_path: Path) -> None:
    text = json.dumps({**REPORT, "pcaps": ["link0-a-b.pcap"]})
    assert Result(text, tmp_path).pcaps == [tmp_path / "link0-a-b.pcap"]
    assert Result(text).pcaps == [Path("link0-a-b.pcap")]


def test_a_host_that_read_nothing_has_no_llc_share() -> None:
    timing = {**TIMING, "rx_copy": {"llc_bytes": 0, "memory_bytes": 0, "read_bytes": 0}}
    report = {**REPORT, "hosts": [HOSTS[0], {**HOSTS[1], "timing": timing}]}
    assert pd.isna(Result(json.dumps(report)).hosts_table().set_index("name").loc["b", "rx_from_llc"])
