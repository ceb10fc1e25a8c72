"""Every pcap nicsim writes is a valid capture to Wireshark's dissectors, and
the TCP stream tshark reassembles from it is the one the workload sent."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

import nicsim
from nicsim import Result

# Frames tshark flags: dissector failures, any expert info of warning level or
# worse (bad checksums are errors), and retransmissions on a lossless link.
SUSPICIOUS = "_ws.malformed || _ws.expert.severity >= warning || tcp.analysis.retransmission"
CHECKSUMS = ("-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE")


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
    files = [Path(p) for p in bulk_run.pcaps]
    assert files, "the run wrote no pcap"
    return files


def test_every_frame_dissects_cleanly(bulk_run: Result, pcaps: list[Path]) -> None:
    total = 0
    for pcap in pcaps:
        frames = tshark("-r", str(pcap), *CHECKSUMS, "-T", "fields", "-e", "frame.number").split()
        assert frames, f"{pcap} holds no frame"
        total += len(frames)
        flagged = tshark("-r", str(pcap), *CHECKSUMS, "-Y", SUSPICIOUS)
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


def test_tcp_stream_reassembles_to_what_was_sent(bulk_run: Result, pcaps: list[Path]) -> None:
    expected_bytes = bulk_run.summary["payload_bytes"]
    assert expected_bytes > 0
    data, back = sorted(follow_tcp_stream(pcaps[0]), key=len, reverse=True)
    assert back == b"", "a bulk transfer sends data one way only"
    assert len(data) == expected_bytes
    assert hashlib.sha256(data).hexdigest() == bulk_run.data["flows"][0]["sha256"]
