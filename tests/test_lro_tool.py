"""`nicsim lro` on a real capture: eight TCP flows captured by `nicsim run
--pcap`, coalesced by the NIC LRO engine and by host GRO. tshark (checksum
validation on) finds no malformed frame and no bad checksum in the output,
the output has fewer frames, and every TCP stream carries exactly the bytes
it carried in the input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import nicsim
from conftest import SCENARIOS, run_cli
from test_pcap_tshark import CHECKSUM_GOOD, CHECKSUMS, tshark

# scenarios/gbe-8-flows.toml with 256 KiB a flow instead of 8 MiB, so the
# capture stays small enough to dissect in seconds.
FLOW_BYTES = 256 * 1024


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The capture of the eight flows and the workload's port."""
    text = (SCENARIOS / "gbe-8-flows.toml").read_text(encoding="utf-8")
    text, count = re.subn(r'(?m)^bytes = "8MiB"$', f'bytes = "{FLOW_BYTES // 1024}KiB"', text)
    assert count == 1
    root = tmp_path_factory.mktemp("lro")
    scenario = root / "eight.toml"
    scenario.write_text(text, encoding="utf-8")
    result = nicsim.run(scenario, pcap=root / "pcap")
    assert result.summary["verified"]
    (pcap,) = result.pcaps
    return pcap, result.data["workload"]["port"]


def streams(pcap: Path, port: int) -> tuple[int, dict[tuple[str, ...], bytes]]:
    """Frames in `pcap` and the payload of each TCP direction, placed by
    relative sequence number; checks that every TCP frame's IP and TCP
    checksums verify. `tcp.payload`, not `data.data`: tshark does not hand
    a frame it calls a retransmission to the data dissector, and in the
    coalesced capture ACKs (passed through at once) precede the held data
    they acknowledge."""
    out = tshark(
        "-r", str(pcap), *CHECKSUMS, "-d", f"tcp.port=={port},data", "-T", "fields",
        "-e", "ip.src", "-e", "tcp.srcport", "-e", "ip.dst", "-e", "tcp.dstport",
        "-e", "tcp.seq", "-e", "tcp.len", "-e", "tcp.payload",
        "-e", "ip.checksum.status", "-e", "tcp.checksum.status",
    )  # fmt: skip
    placed: dict[tuple[str, ...], bytearray] = {}
    frames = 0
    for line in out.splitlines():
        frames += 1
        src, sport, dst, dport, seq, length, data, ip_ok, tcp_ok = line.split("\t")
        if not sport:
            continue
        assert (ip_ok, tcp_ok) == (CHECKSUM_GOOD, CHECKSUM_GOOD), f"{pcap}: bad checksum in {line[:200]}"
        if int(length) == 0:
            continue
        payload = bytes.fromhex(data)
        assert len(payload) == int(length)
        buf = placed.setdefault((src, sport, dst, dport), bytearray())
        at = int(seq) - 1  # relative sequence numbers count the SYN
        if len(buf) < at + len(payload):
            buf.extend(bytes(at + len(payload) - len(buf)))
        buf[at : at + len(payload)] = payload
    return frames, {key: bytes(buf) for key, buf in placed.items()}


@pytest.mark.parametrize("engine", ["nic", "gro"])
def test_coalesced_capture_is_valid_smaller_and_carries_the_same_streams(
    capture: tuple[Path, int], tmp_path: Path, engine: str
) -> None:
    pcap, port = capture
    out = tmp_path / f"{engine}.pcap"
    done = run_cli("lro", pcap, "-o", out, "--engine", engine)
    assert done.returncode == 0, done.stderr
    assert f"pcap written: {out}" in done.stdout
    assert "coalescing ratio" in done.stdout
    malformed = tshark("-r", str(out), *CHECKSUMS, "-d", f"tcp.port=={port},data",
                       "-Y", "_ws.malformed || _ws.expert.severity >= error")  # fmt: skip
    assert malformed == "", f"tshark flags frames:\n{malformed[:4000]}"
    frames_in, want = streams(pcap, port)
    frames_out, got = streams(out, port)
    assert frames_out < frames_in
    assert len(want) == 8, "eight data directions in the capture"
    assert all(len(data) == FLOW_BYTES for data in want.values())
    assert got == want
    if engine == "nic":
        assert "BOM" in done.stdout and "CAM occupancy" in done.stdout
    else:
        assert "poll batches" in done.stdout


def test_a_missing_or_bad_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = run_cli("lro", tmp_path / "nope.pcap", "-o", tmp_path / "out.pcap")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [f"error: {tmp_path / 'nope.pcap'}: no such file"]
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"this is not a capture file")
    done = run_cli("lro", bad, "-o", tmp_path / "out.pcap", "--engine", "gro")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: pcap header: not a pcap or pcapng file"), lines
    assert "Traceback" not in done.stderr
