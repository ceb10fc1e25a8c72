"""Captures as users have them, through `nicsim lro` and the pcap replay
workload.

1. Real Linux captures made here: two network namespaces joined by a veth
   pair, a Python TCP client sending 512 KiB to a server, the sender's
   interface captured by `tcpdump` (pcap) and `dumpcap` (pcapng, what
   Wireshark writes) with transmit checksum offload on and off (`ethtool
   -K tx`). With offload on the kernel leaves TCP checksums for the NIC, so
   the capture holds partial checksums: `nicsim lro` merges none of those
   frames and says why in one line; with `--assume-checksums-ok` it merges
   them; with offload off it merges without the option. Every output TCP
   checksum verifies in tshark and the data direction's payload is exactly
   what the client sent. Skipped, with the reason, only when this machine
   cannot create network namespaces.
2. The small pcapng files of `tests/data/captures/` (written by
   `tests/data/make_captures.py`): VLAN and QinQ tags, Linux SLL and SLL2,
   two interfaces, microsecond, nanosecond and 2^-20 s timestamps.

tcpdump, dumpcap (tshark's package), ip and ethtool must be installed (`make
test` installs them, scripts/system-deps); a missing one fails, it does not
skip.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import nicsim
from conftest import REPO, run_cli
from test_lro_tool import streams
from test_pcap_tshark import CHECKSUM_GOOD, CHECKSUMS, tshark

DATA = REPO / "tests" / "data"
CAPTURES = DATA / "captures"
PORT = 5201
SENT = bytes((i * 7 + i // 251) % 256 for i in range(512 * 1024))
SBIN_PATH = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"


def tool(name: str) -> str:
    found = shutil.which(name, path=SBIN_PATH)
    if found is None:
        pytest.fail(f"{name} is not installed: make test installs it (scripts/system-deps test)")
    return found


def lro(capture: Path, out: Path, *options: str) -> tuple[dict, subprocess.CompletedProcess[str]]:
    """`nicsim lro --json` on `capture`: the report and the process."""
    done = run_cli("lro", capture, "-o", out, "--json", *options)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done


def accounted(report: dict) -> None:
    """Every frame read is merged, alone, passed through or dropped, and
    the reasons sum to the frames passed through."""
    a = report["accounting"]
    assert a["merged"] + a["alone"] + a["passed_through"] + a["duplicates_dropped"] == report["frames_in"], a
    assert sum(report["passed"].values()) == a["passed_through"]


# ---------------------------------------------------------------------------
# Real captures between two network namespaces


SERVER = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.77.0.2", %d))
s.listen(1)
print("ready", flush=True)
c, _ = s.accept()
n = 0
while True:
    b = c.recv(1 << 16)
    if not b:
        break
    n += len(b)
c.close()
print(n, flush=True)
""" % PORT

CLIENT = """
import socket, sys
data = bytes((i * 7 + i // 251) %% 256 for i in range(512 * 1024))
c = socket.create_connection(("10.77.0.2", %d))
c.sendall(data)
c.shutdown(socket.SHUT_WR)
c.recv(1)
c.close()
""" % PORT


class Namespaces:
    """Namespaces `a` and `b` joined by veth `va` - `vb` (10.77.0.1/.2)."""

    def __init__(self, sudo: list[str]) -> None:
        self.sudo = sudo
        self.ip = tool("ip")
        tag = os.getpid()
        self.a, self.b = f"nicsim-a-{tag}", f"nicsim-b-{tag}"

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self.sudo, *args], capture_output=True, text=True, timeout=60)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip()}")
        return done

    def inside(self, ns: str, *args: str) -> list[str]:
        return [*self.sudo, self.ip, "netns", "exec", ns, *args]

    def create(self) -> None:
        self.run(self.ip, "netns", "add", self.a)
        self.run(self.ip, "netns", "add", self.b)
        self.run(self.ip, "link", "add", "va", "netns", self.a, "type", "veth", "peer", "name", "vb", "netns", self.b)
        for ns, dev, addr in ((self.a, "va", "10.77.0.1/24"), (self.b, "vb", "10.77.0.2/24")):
            self.run(self.ip, "-n", ns, "addr", "add", addr, "dev", dev)
            self.run(self.ip, "-n", ns, "link", "set", dev, "up")
            self.run(self.ip, "-n", ns, "link", "set", "lo", "up")
            # No IPv6 neighbour discovery in the captures.
            self.run(*self.inside(ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"))
        # MTU-sized segments on the wire: no TSO or GSO super-frames.
        self.run(*self.inside(self.a, tool("ethtool"), "-K", "va", "tso", "off", "gso", "off"))

    def delete(self) -> None:
        for ns in (self.a, self.b):
            self.run(self.ip, "netns", "del", ns, check=False)

    def capture(self, offload: bool, pcap: Path, pcapng: Path) -> None:
        """Send `SENT` from a to b with transmit checksum offload on or off,
        captured on `va` by tcpdump into `pcap` and dumpcap into `pcapng`."""
        for ns, dev in ((self.a, "va"), (self.b, "vb")):
            self.run(*self.inside(ns, tool("ethtool"), "-K", dev, "tx", "on" if offload else "off"))
        capturers = [
            subprocess.Popen(
                self.inside(self.a, tool("tcpdump"), "-i", "va", "-s", "0", "--immediate-mode", "-U", "-Z", "root",
                             "-w", str(pcap)),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ),
            subprocess.Popen(
                self.inside(self.a, tool("dumpcap"), "-q", "-i", "va", "-w", str(pcapng)),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ),
        ]  # fmt: skip
        server = None
        try:
            deadline = time.monotonic() + 20
            while not all(f.is_file() and f.stat().st_size > 0 for f in (pcap, pcapng)):
                assert time.monotonic() < deadline, "the capturers did not start"
                time.sleep(0.05)
            time.sleep(0.5)  # both now read the interface
            server = subprocess.Popen(
                self.inside(self.b, sys.executable, "-c", SERVER), stdout=subprocess.PIPE, text=True
            )
            assert server.stdout is not None
            assert server.stdout.readline().strip() == "ready"
            client = subprocess.run(self.inside(self.a, sys.executable, "-c", CLIENT), capture_output=True,
                                    text=True, timeout=60)  # fmt: skip
            assert client.returncode == 0, client.stderr
            assert server.stdout.readline().strip() == str(len(SENT))
            server.wait(timeout=20)
            time.sleep(0.5)  # the last ACKs reach the capture
        finally:
            if server is not None and server.poll() is None:
                server.kill()
            for p in capturers:
                # sudo forwards the signal to tcpdump/dumpcap, which write out and stop.
                p.send_signal(signal.SIGINT)
            for p in capturers:
                p.wait(timeout=20)


def privileges() -> list[str] | str:
    """The prefix that runs a command as root, or why there is none."""
    if os.geteuid() == 0:
        return []
    sudo = shutil.which("sudo")
    if sudo and subprocess.run([sudo, "-n", "true"], capture_output=True).returncode == 0:
        return [sudo, "-n"]
    return "not root and no passwordless sudo"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[bool, str], Path]]:
    """Captures by (offload on, "pcap" | "pcapng")."""
    prefix = privileges()
    if isinstance(prefix, str):
        pytest.skip(f"cannot create network namespaces here: {prefix}")
    for name in ("tcpdump", "dumpcap", "ethtool", "ip"):
        tool(name)
    ns = Namespaces(prefix)
    try:
        ns.create()
    except RuntimeError as e:
        ns.delete()
        pytest.skip(f"cannot create network namespaces here: {e}")
    root = tmp_path_factory.mktemp("real")
    os.chmod(root, 0o755)
    files = {}
    try:
        for offload in (True, False):
            tag = "on" if offload else "off"
            pcap, pcapng = root / f"offload-{tag}.pcap", root / f"offload-{tag}.pcapng"
            for _ in range(CAPTURE_ATTEMPTS):
                ns.capture(offload, pcap, pcapng)
                if offload or not (bad_checksums(pcap) or bad_checksums(pcapng)):
                    break
            files[(offload, "pcap")], files[(offload, "pcapng")] = pcap, pcapng
    finally:
        ns.delete()
    yield files


# Once in a fresh-clone CI run (stop 44) the offload-off capture held a
# server ACK whose TCP checksum did not verify, in both files; it never
# recurred here in 9 runs, 6 of them under full CPU load. The kernel wrote
# that frame, not nicsim, so the fixture takes the capture again (up to this
# many times) and the tests then check whatever it has: a capture that is
# still bad fails them.
CAPTURE_ATTEMPTS = 3


def bad_checksums(pcap: Path) -> list[str]:
    """Frames of `pcap` whose IP or TCP checksum does not verify."""
    out = tshark("-r", str(pcap), *CHECKSUMS, "-T", "fields", "-e", "frame.number",
                 "-e", "ip.checksum.status", "-e", "tcp.checksum.status",
                 "-Y", "tcp")  # fmt: skip
    return [line for line in out.splitlines() if line.split("\t")[1:] != [CHECKSUM_GOOD, CHECKSUM_GOOD]]


def data_direction(pcap: Path) -> bytes:
    """The client-to-server payload of `pcap`, checking every TCP checksum."""
    _, placed = streams(pcap, PORT)
    (data,) = [b for (src, sport, dst, dport), b in placed.items() if dport == str(PORT)]
    return data


@pytest.mark.parametrize("kind", ["pcap", "pcapng"])
def test_offloaded_checksums_are_named_and_not_merged(real: dict, tmp_path: Path, kind: str) -> None:
    report, done = lro(real[(True, kind)], tmp_path / f"out.{kind}")
    n = report["checksums_offloaded"]
    # 512 KiB in segments of at most 1448 B: at least 363 data frames, all offloaded.
    assert n >= len(SENT) // 1448, report
    assert len(bad_checksums(real[(True, kind)])) >= n, "the fixture's check sees offloaded checksums"
    assert report["passed"]["offloaded_checksum"] == n
    assert report["accounting"]["merged"] == 0
    accounted(report)
    assert report["format"] == kind
    (flow,) = [f for f in report["flows"] if f["dst"].endswith(f":{PORT}")]
    # Every payload byte comes out; a capture taken on a loaded machine may
    # hold retransmitted segments, so it has at least the transfer.
    assert flow["payload_in"] == flow["payload_out"] >= len(SENT), "the whole transfer is in the capture"
    assert flow["frames_in"] == flow["frames_out"]
    (line,) = [x for x in done.stderr.splitlines() if "offloaded TCP checksum" in x]
    assert line.startswith(f"{n:,} of {report['tcp_frames']:,} TCP frames carry an offloaded TCP checksum")
    assert "--assume-checksums-ok" in line
    table = run_cli("lro", real[(True, kind)], "-o", tmp_path / f"table.{kind}")
    assert "offloaded" in table.stdout and "passed through" in table.stdout
    assert f"{n:,} of {report['tcp_frames']:,} TCP frames carry an offloaded TCP checksum" in table.stdout


@pytest.mark.parametrize("engine", ["nic", "gro"])
@pytest.mark.parametrize("kind", ["pcap", "pcapng"])
def test_assume_checksums_ok_merges_and_writes_correct_checksums(
    real: dict, tmp_path: Path, kind: str, engine: str
) -> None:
    out = tmp_path / f"out.{kind}"
    report, _ = lro(real[(True, kind)], out, "--assume-checksums-ok", "--engine", engine)
    assert report["checksums_filled"] == report["checksums_offloaded"] > 0
    assert report["passed"]["offloaded_checksum"] == 0
    assert report["accounting"]["merged"] > 0
    assert report["frames_out"] < report["frames_in"]
    accounted(report)
    # Every TCP checksum in the output verifies (streams() checks), and the
    # data direction carries exactly what the client sent.
    assert data_direction(out) == SENT
    (flow,) = [f for f in report["flows"] if f["dst"].endswith(f":{PORT}")]
    assert flow["payload_in"] == flow["payload_out"] >= len(SENT)  # retransmissions repeat bytes
    assert flow["coalescing_ratio"] == pytest.approx(flow["frames_in"] / flow["frames_out"])
    assert flow["coalescing_ratio"] > 1.5
    with open(out.with_suffix("").with_name(out.stem + ".flows.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["payload_out"]) for r in rows if r["dst"].endswith(f":{PORT}")] == [flow["payload_out"]]
    with open(out.with_suffix("").with_name(out.stem + ".frames.csv"), newline="") as f:
        assert sum(int(r["frames"]) for r in csv.DictReader(f)) == report["frames_in"]


@pytest.mark.parametrize("kind", ["pcap", "pcapng"])
def test_a_capture_without_checksum_offload_merges_as_is(real: dict, tmp_path: Path, kind: str) -> None:
    capture = real[(False, kind)]
    assert data_direction(capture) == SENT, "the capture itself is whole and its checksums good"
    out = tmp_path / f"out.{kind}"
    report, done = lro(capture, out)
    assert report["checksums_offloaded"] == 0
    assert "offloaded" not in done.stderr
    assert report["accounting"]["merged"] > 0
    accounted(report)
    assert data_direction(out) == SENT
    flagged = tshark("-r", str(out), *CHECKSUMS, "-d", f"tcp.port=={PORT},data",
                     "-Y", "_ws.malformed || _ws.expert.severity >= error")  # fmt: skip
    assert flagged == ""


def test_the_replay_workload_reads_a_dumpcap_pcapng(real: dict, tmp_path: Path) -> None:
    capture = real[(False, "pcapng")]
    # UDP payload per record: the IPv4 packet less 20 + 8 B, or a frame
    # without IPv4 (ARP) less 14 + 20 + 8 B; never below 8 B.
    rows = [line.split("\t") for line in tshark("-r", str(capture), "-T", "fields", "-e", "frame.len",
                                                 "-e", "ip.len").splitlines()]  # fmt: skip
    assert len(rows) > 300
    want = sum(max(int(ip) - 28 if ip else int(frame) - 42, 8) for frame, ip in rows)
    result = nicsim.run(replay_scenario(tmp_path, capture))
    assert result.summary["verified"]
    assert result.summary["datagrams_sent"] == len(rows)
    assert result.summary["payload_bytes"] == want


# ---------------------------------------------------------------------------
# Checked-in pcapng files


def test_the_checked_in_files_are_what_the_script_writes() -> None:
    sys.path.insert(0, str(DATA))
    try:
        import make_captures
    finally:
        sys.path.remove(str(DATA))
    for name, make in make_captures.FILES.items():
        assert (CAPTURES / name).read_bytes() == make(), f"rerun python tests/data/make_captures.py ({name})"


def pattern(seed: int, length: int) -> bytes:
    return bytes((seed + i) % 251 for i in range(length))


def fields(pcap: Path, *names: str) -> list[list[str]]:
    args = [a for n in names for a in ("-e", n)]
    out = tshark("-r", str(pcap), *CHECKSUMS, "-d", "tcp.port==5001,data", "-T", "fields", *args)
    return [line.split("\t") for line in out.splitlines()]


def test_vlan_tags_survive_coalescing(tmp_path: Path) -> None:
    out = tmp_path / "vlan.pcapng"
    report, _ = lro(CAPTURES / "vlan.pcapng", out)
    assert (report["format"], report["frames_in"], report["frames_out"]) == ("pcapng", 13, 4)
    assert report["accounting"] == {"merged": 10, "alone": 1, "passed_through": 2, "duplicates_dropped": 0}
    assert {k: v for k, v in report["passed"].items() if v} == {"not_tcp_ipv4": 1, "no_payload": 1}
    rows = fields(out, "frame.protocols", "vlan.id", "tcp.len", "tcp.payload", "ip.checksum.status",
                  "tcp.checksum.status")  # fmt: skip
    protocols = [r[0] for r in rows]
    assert all(":vlan:" in p for p in protocols), protocols
    assert sum(":ieee8021ad:" in p for p in protocols) == 1, "the QinQ frame keeps both tags"
    assert all(r[1].split(",")[-1] == "100" for r in rows), rows
    merged = [r for r in rows if r[2] == "10000"]
    assert len(merged) == 1 and bytes.fromhex(merged[0][3]) == pattern(0, 10000)
    assert all(r[4:] == ["1", "1"] for r in rows if r[2]), "IP and TCP checksums good"


def test_sll_and_sll2_and_two_interfaces(tmp_path: Path) -> None:
    out = tmp_path / "sll.pcapng"
    report, _ = lro(CAPTURES / "sll.pcapng", out)
    assert (report["frames_in"], report["frames_out"]) == (10, 1)
    ((proto, length, payload, *_),) = fields(out, "frame.protocols", "tcp.len", "tcp.payload")
    assert proto.startswith("sll:") and length == "10000" and bytes.fromhex(payload) == pattern(0, 10000)

    out = tmp_path / "multi.pcapng"
    report, _ = lro(CAPTURES / "multi.pcapng", out, "--engine", "gro")
    assert (report["interfaces"], report["frames_in"], report["frames_out"]) == (2, 12, 2)
    assert [f["interface"] for f in report["flows"]] == [0, 1]
    rows = fields(out, "frame.interface_id", "frame.protocols", "tcp.payload", "frame.time_epoch")
    assert [(r[0], r[1].split(":")[0]) for r in rows] == [("0", "sll"), ("1", "eth")]
    assert bytes.fromhex(rows[0][2]) == pattern(11, 3600)
    assert bytes.fromhex(rows[1][2]) == pattern(22, 3600)
    # Stamped with each flow's last segment: 5 × 16 ticks of 2^-20 s and
    # 8 µs + 5 × 15.259 µs after 2026-01-01 (tshark prints nanoseconds).
    assert rows[0][3] == "1767225600.000076293"
    assert rows[1][3] == "1767225600.000084295"


def replay_scenario(root: Path, capture: Path) -> Path:
    text = (
        '[[hosts]]\nname = "a"\n\n[[hosts]]\nname = "b"\n\n'
        '[[links]]\nendpoints = ["a", "b"]\nrate = "1Gbps"\n\n'
        f'[workload.pcap_replay]\nfrom = "a"\nto = "b"\nfile = "{capture}"\n'
    )
    path = root / "replay.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_replay_workload_reads_the_checked_in_pcapng(tmp_path: Path) -> None:
    # vlan.pcapng: ten 1040-byte IP packets, a 40-byte ACK, an ARP frame of
    # 60 bytes (no IP: 60 - 14 - 20 - 8 = 18 B) and a 340-byte packet under
    # two tags; multi.pcapng: twelve 640-byte packets on two interfaces.
    for name, want in (("vlan.pcapng", 10 * 1012 + 12 + 18 + 312), ("multi.pcapng", 12 * 612)):
        result = nicsim.run(replay_scenario(tmp_path, CAPTURES / name))
        assert result.summary["verified"], name
        assert result.summary["payload_bytes"] == want, name
