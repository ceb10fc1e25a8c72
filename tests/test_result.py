"""Result: tables and files from a report, whatever optional keys it lacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
REPORT: dict[str, Any] = {
    "nicsim_version": "0.1.0",
    "scenario": {"name": "demo", "source": "demo.toml", "description": "é"},
    "seed": 7,
    "workload": {"kind": "bulk"},
    "summary": SUMMARY,
    "links": [LINK, {**LINK, "direction": "b->a"}],
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
    assert [p.name for p in written] == ["result.json", "summary.csv", "links.csv"]
    assert (tmp_path / "out" / "result.json").read_bytes() == text.encode("utf-8")


def test_csv_files_are_deterministic(tmp_path: Path) -> None:
    text = json.dumps(REPORT)
    for out in ("one", "two"):
        Result(text).write(tmp_path / out)
    for name in ("summary.csv", "links.csv"):
        one = (tmp_path / "one" / name).read_bytes()
        assert one == (tmp_path / "two" / name).read_bytes()
        assert b"\r" not in one
    header, row = (tmp_path / "one" / "summary.csv").read_text().splitlines()
    assert header.startswith("scenario,workload,seed,nicsim_version,goodput_bps,")
    assert row.startswith("demo,bulk,7,0.1.0,941000000.5,")


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
    assert isinstance(result.name, str)
    assert isinstance(repr(result), str)


def test_pcaps_are_named_inside_the_pcap_dir(tmp_path: Path) -> None:
    text = json.dumps({**REPORT, "pcaps": ["link0-a-b.pcap"]})
    assert Result(text, tmp_path).pcaps == [tmp_path / "link0-a-b.pcap"]
    assert Result(text).pcaps == [Path("link0-a-b.pcap")]
