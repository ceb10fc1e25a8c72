"""Every pcap nicsim writes is a valid capture to Wireshark's dissectors, and
the TCP stream tshark reassembles from it is the one the workload sent.

tshark is required: a missing tshark fails these tests (install the Debian
package `tshark`; `make test` does, through scripts/system-deps)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import nicsim
from nicsim import Result, _core

# Frames tshark flags: dissector failures, any expert info of warning level or
# worse (bad checksums are errors), and retransmissions on a lossless link.
SUSPICIOUS = "_ws.malformed || _ws.expert.severity >= warning || tcp.analysis.retransmission"
CHECKSUMS = ("-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE")
# Checksum status field value for a verified, correct checksum.
CHECKSUM_GOOD = "1"
PCAP_NANOSECOND_MAGIC = bytes.fromhex("4d3cb2a1")  # 0xa1b23c4d, little-endian


def tshark(*args: str) -> str:
    exe = shutil.which("tshark")
    if exe is None:
        pytest.fail("tshark is not installed: apt-get install tshark (Debian package)")
    done = subprocess.run([exe, *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def bulk_run(bulk_scenario: Path, tmp_path_factory: pytest.TempPathFactory) -> Result:
    return nicsim.run(bulk_scenario, pcap=tmp_path_factory.mktemp("pcap"))


@pytest.fixture(scope="module")
def pcaps(bulk_run: Result) -> list[Path]:
    files = bulk_run.pcaps
    assert files, "the run wrote no pcap"
    assert all(f.is_file() for f in files), files
    return files


def decode_payload_as_data(result: Result) -> tuple[str, str]:
    """tshark options that dissect the workload's TCP payload as plain data:
    the synthetic byte pattern otherwise trips heuristic dissectors (Thrift)."""
    return ("-d", f"tcp.port=={result.data['workload']['port']},data")


def test_pcaps_have_nanosecond_timestamps(pcaps: list[Path]) -> None:
    for pcap in pcaps:
        with pcap.open("rb") as f:
            assert f.read(4) == PCAP_NANOSECOND_MAGIC, pcap


def test_every_frame_dissects_cleanly(bulk_run: Result, pcaps: list[Path]) -> None:
    options = (*CHECKSUMS, *decode_payload_as_data(bulk_run))
    total = 0
    for pcap in pcaps:
        fields = tshark(
            "-r", str(pcap), *options, "-T", "fields",
            "-e", "frame.protocols", "-e", "ip.checksum.status", "-e", "tcp.checksum.status",
        )  # fmt: skip
        rows = [line.split("\t") for line in fields.splitlines()]
        tcp = [row for row in rows if ":ip:tcp" in row[0]]
        assert tcp, f"{pcap} holds no TCP frame"
        assert all(row[1:] == [CHECKSUM_GOOD, CHECKSUM_GOOD] for row in tcp), pcap
        total += len(rows)
        flagged = tshark("-r", str(pcap), *options, "-Y", SUSPICIOUS)
        assert flagged == "", f"{pcap}: tshark flags frames:\n{flagged[:4000]}"
    assert total == sum(link["frames"] for link in bulk_run.data["links"])


def follow_tcp_stream(pcap: Path) -> tuple[bytes, bytes]:
    """The bytes each endpoint of TCP stream 0 sent, as tshark reassembles
    them: `-z follow,tcp,raw,0` prints one hex line per segment, node 1's
    lines indented by a tab; node 0 is the host that opened the connection."""
    out = tshark("-r", str(pcap), "-q", "-z", "follow,tcp,raw,0")
    lines = out.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Node 1: ")]
    assert len(starts) == 1, out[:2000]
    sent: tuple[list[bytes], list[bytes]] = ([], [])
    for line in lines[starts[0] + 1 :]:
        if line.startswith("="):
            break
        node = 1 if line.startswith("\t") else 0
        sent[node].append(bytes.fromhex(line.strip()))
    return b"".join(sent[0]), b"".join(sent[1])


def test_tcp_stream_reassembles_to_what_was_sent(
    bulk_scenario: Path, bulk_run: Result, pcaps: list[Path]
) -> None:
    scenario_bytes = 64 * 2**20  # `bytes = "64MiB"` in the scenario file
    assert 'bytes = "64MiB"' in bulk_scenario.read_text(encoding="utf-8")
    data, back = sorted(follow_tcp_stream(pcaps[0]), key=len, reverse=True)
    assert back == b"", "a bulk transfer sends data one way only"
    assert len(data) == scenario_bytes
    (flow,) = bulk_run.data["flows"]
    assert flow["bytes"] == scenario_bytes
    sent = _core.pattern_bytes(bulk_run.data["seed"], flow["stream"], 0, scenario_bytes)
    if data != sent:
        first = next(i for i, (got, want) in enumerate(zip(data, sent)) if got != want)
        pytest.fail(f"reassembled stream differs from what was sent at byte {first}")
