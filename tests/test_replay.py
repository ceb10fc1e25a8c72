"""pcap replay from the command line: files relative to the scenario, bad
pcaps as one-line errors."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from conftest import run_cli

RR = """\
name = "capture-me"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
endpoints = ["a", "b"]
[workload.request_response]
client = "a"
server = "b"
request = "700B"
response = "1200B"
transactions = 50
"""

REPLAY = """\
name = "replay"
[[hosts]]
name = "x"
[[hosts]]
name = "y"
[[links]]
endpoints = ["x", "y"]
[workload.pcap_replay]
from = "x"
to = "y"
file = "{file}"
"""


def test_a_nicsim_capture_replays_from_beside_the_scenario(tmp_path: Path) -> None:
    source = tmp_path / "rr.toml"
    source.write_text(RR, encoding="utf-8")
    done = run_cli("run", source, "--out", tmp_path / "rr", "--pcap", tmp_path / "cap")
    assert done.returncode == 0, done.stderr
    (capture,) = (tmp_path / "cap").glob("*.pcap")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "trace.pcap").write_bytes(capture.read_bytes())
    scenario = tmp_path / "sub" / "replay.toml"
    scenario.write_text(REPLAY.format(file="trace.pcap"), encoding="utf-8")
    done = run_cli("run", scenario, "--out", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    captured = json.loads((tmp_path / "rr" / "result.json").read_text())
    replayed = json.loads((tmp_path / "out" / "result.json").read_text())
    # Every frame of the capture (both directions, ARP, SYNs and ACKs) becomes one datagram.
    frames = captured["summary"]["frames"]
    assert replayed["summary"]["datagrams_sent"] == frames
    assert replayed["summary"]["datagrams_received"] == frames
    assert replayed["summary"]["verified"] is True


def test_a_garbage_pcap_is_one_line_exit_2(tmp_path: Path) -> None:
    pcap = tmp_path / "bad.pcap"
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    record = struct.pack("<IIII", 0, 0, 1514, 1514)
    pcap.write_bytes(header + record + bytes(300))
    scenario = tmp_path / "replay.toml"
    scenario.write_text(REPLAY.format(file="bad.pcap"), encoding="utf-8")
    for done in (run_cli("validate", scenario), run_cli("run", scenario, "--out", tmp_path / "o")):
        assert done.returncode == 2
        assert done.stderr == (
            f"error: {scenario}: workload.pcap_replay.file: bad.pcap: "
            "pcap record 1: truncated: header says 1514 bytes, 300 remain\n"
        ), done.stderr
