"""The Kurmann zero-copy scenarios' captures, read by tshark (checksum
validation on): the driver's IPv4 fragments are well-formed and reassemble
into page-sized TCP segments, the admission control frames (EtherType
0x88B6) are on the wire as many times as the hosts say they sent them, and
every TCP stream carries exactly the bytes the workload sent.

Small versions of `scenarios/kurmann/*.toml` (a few MiB instead of 32).
tshark is required, as in test_pcap_tshark.py: a missing tshark fails."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import nicsim
from conftest import SCENARIOS
from nicsim import Result, _core
from test_pcap_tshark import CHECKSUM_GOOD, CHECKSUMS, tshark

KURMANN = SCENARIOS / "kurmann"
PAGE = 4096  # the zero-copy unit: `zero_copy.page` default, one page of TCP data
TCP_HEADER = 32  # 20 B + 12 B of timestamps (smoltcp sends them)
FRAGMENT_IP_LEN = 1500  # a full-size fragment fills the 1500 B MTU
# Frames tshark must not show: dissector failures, errors (bad checksums are
# errors with CHECKSUMS) and retransmissions (the links are lossless).
# Warnings are allowed: a CPU-bound receiver's "TCP Window Full" is one.
BAD = "_ws.malformed || _ws.expert.severity >= error || tcp.analysis.retransmission"
ADMISSION_ETHERTYPE = "0x88b6"
# Kind byte right after the Ethernet header (crates/nicsim-core/src/sim/specdefrag.rs).
FAST_REQ, FAST_ACK, FAST_NACK = 1, 2, 3


def run_small(tmp: Path, name: str, size: str, copies: int) -> Result:
    """Run `scenarios/kurmann/NAME.toml` with each of its `copies` transfer
    sizes replaced by `size`, with a pcap of every link."""
    text = (KURMANN / f"{name}.toml").read_text(encoding="utf-8")
    text, count = re.subn(r'(?m)^bytes = "\d+MiB"$', f'bytes = "{size}"', text)
    assert count == copies, f"{name}: {count} transfer sizes"
    scenario = tmp / f"{name}.toml"
    scenario.write_text(text, encoding="utf-8")
    result = nicsim.run(scenario, pcap=tmp / "pcap")
    assert result.summary["verified"]
    assert result.pcaps
    return result


def options(result: Result) -> tuple[str, ...]:
    """Checksum validation on, and the workload's ports (the bulk port, or
    those of the transfers: 5001 and 5002) dissected as plain data."""
    port = result.data["workload"].get("port")
    ports = [port] if port else [5001, 5002]
    return (*CHECKSUMS, *(arg for p in ports for arg in ("-d", f"tcp.port=={p},data")))


def fields(pcap: Path, opts: tuple[str, ...], *names: str, where: str = "") -> list[list[str]]:
    """One row of `names` per frame (those matching display filter `where`)."""
    args = ["-r", str(pcap), *opts, "-T", "fields", "-E", "occurrence=f"]
    if where:
        args += ["-Y", where]
    for name in names:
        args += ["-e", name]
    return [line.split("\t") for line in tshark(*args).splitlines()]


def assert_clean(pcap: Path, opts: tuple[str, ...]) -> None:
    """No malformed frame, no error, no retransmission, and every IP and TCP
    checksum tshark checks is verified good."""
    flagged = tshark("-r", str(pcap), *opts, "-Y", BAD)
    assert flagged == "", f"{pcap}: tshark flags frames:\n{flagged[:4000]}"
    rows = fields(pcap, opts, "ip.checksum.status", "tcp.srcport", "tcp.checksum.status", where="ip")
    assert rows, f"{pcap} holds no IP frame"
    assert all(ip == CHECKSUM_GOOD for ip, _, _ in rows), f"{pcap}: an IP checksum does not verify"
    tcp = [status for _, port, status in rows if port]
    assert tcp and all(s == CHECKSUM_GOOD for s in tcp), f"{pcap}: a TCP checksum does not verify"


def follow(pcap: Path, stream: int) -> tuple[bytes, bytes]:
    """The bytes each endpoint of TCP stream `stream` sent, as tshark
    reassembles them (`-z follow,tcp,raw`: one hex line per segment, node 1's
    indented by a tab)."""
    out = tshark("-r", str(pcap), "-q", "-z", f"follow,tcp,raw,{stream}")
    lines = out.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Node 1: ")]
    assert len(starts) == 1, out[:2000]
    sent: tuple[list[bytes], list[bytes]] = ([], [])
    for line in lines[starts[0] + 1 :]:
        if line.startswith("="):
            break
        sent[1 if line.startswith("\t") else 0].append(bytes.fromhex(line.strip()))
    return b"".join(sent[0]), b"".join(sent[1])


def assert_streams_carry_the_transfers(pcap: Path, result: Result) -> None:
    """Each TCP stream in `pcap` carries one flow's bytes one way, exactly
    the transfer size and exactly the pattern the workload sent."""
    flows = result.data["flows"]
    got = []
    for index in range(len(flows)):
        data, back = sorted(follow(pcap, index), key=len, reverse=True)
        assert back == b"", "a bulk transfer sends data one way only"
        got.append(data)
    want = [_core.pattern_bytes(result.data["seed"], f["stream"], 0, f["bytes"]) for f in flows]
    assert sorted(map(len, got)) == sorted(f["bytes"] for f in flows)
    assert sorted(got) == sorted(want), "a reassembled stream differs from what was sent"


def host(result: Result, name: str) -> dict[str, Any]:
    (found,) = [h for h in result.data["hosts"] if h["name"] == name]
    return found


def zero_copy(result: Result, name: str) -> dict[str, int]:
    """Host `name`'s zero-copy counters."""
    counters: dict[str, int] = host(result, name)["timing"]["zero_copy"]
    return counters


@pytest.fixture(scope="module")
def fbufs(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """both-fbufs: fragmenting sender, speculating receiver, 4 MiB."""
    return run_small(tmp_path_factory.mktemp("fbufs"), "both-fbufs", "4MiB", 1)


def test_fragmented_pages_dissect_cleanly_and_reassemble_into_pages(fbufs: Result) -> None:
    (pcap,) = fbufs.pcaps
    opts = options(fbufs)
    assert_clean(pcap, opts)
    rows = fields(
        pcap, opts, "ip.flags.mf", "ip.frag_offset", "ip.len", "ip.reassembled.length", "tcp.len", where="ip"
    )
    fragments = [r for r in rows if r[0] in ("1", "True") or int(r[1] or 0) > 0]
    sender = zero_copy(fbufs, "a")
    # tshark counts the fragments on the wire independently of the driver's counter.
    assert len(fragments) == sender["tx_fragments"] > 0
    # All but the last fragment of a datagram are full-size, at multiples of
    # 1480 B (tshark 4.0 shows the offset in 8-byte units: 185 = 1480 / 8).
    more = [r for r in fragments if r[0] in ("1", "True")]
    assert more and all(int(r[2]) == FRAGMENT_IP_LEN for r in more)
    offsets = {int(r[1]) for r in fragments}
    assert offsets in ({0, 185, 370}, {0, 1480, 2960}), offsets
    # tshark rebuilds each datagram into one TCP segment: one per fragmented
    # packet the sender counted, and every data segment on the wire is one.
    whole = [r for r in rows if r[3]]
    assert len(whole) == sender["tx_fragmented"]
    data = [r for r in rows if r[4] and int(r[4]) > 0]
    assert [r for r in data if r[3]] == whole
    # Besides the pages, at most a few window-edge slivers (the advertised
    # window is one scale unit short, host/window.rs) fit one frame unfragmented.
    slivers = [r for r in data if not r[3]]
    assert len(slivers) <= 3 and all(int(r[4]) < 1460 for r in slivers), slivers
    sizes = Counter(int(r[4]) for r in whole)
    assert all(int(r[3]) == int(r[4]) + TCP_HEADER for r in whole)
    assert max(sizes) == PAGE
    # Page-sized segments, but for the unaligned head and tail of the
    # transfer, which the zero-copy OS copies (copy_fallbacks), and a page
    # cut short at the window's edge before each sliver.
    assert len(whole) - sizes[PAGE] <= 2 + len(slivers), sizes
    (flow,) = fbufs.data["flows"]
    assert sum(n * size for size, n in sizes.items()) + sum(int(r[4]) for r in slivers) == flow["bytes"]
    assert zero_copy(fbufs, "b")["spec_hits"] == len(whole)


def test_fragmented_stream_reassembles_to_what_was_sent(fbufs: Result) -> None:
    (pcap,) = fbufs.pcaps
    assert_streams_carry_the_transfers(pcap, fbufs)


@pytest.fixture(scope="module")
def converge(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """table2-converge-admission: two 1 MiB zero-copy streams into a master
    through a switch, implicit admission control."""
    return run_small(tmp_path_factory.mktemp("converge"), "table2-converge-admission", "1MiB", 2)


def control_frames(pcap: Path, opts: tuple[str, ...]) -> Counter[tuple[str, str, int]]:
    """(source MAC, destination MAC, kind) of every admission control frame,
    with how often it occurs; checks each is a 60-byte frame tshark
    dissects as an unknown EtherType's data."""
    rows = fields(
        pcap, opts, "eth.src", "eth.dst", "frame.len", "frame.protocols", "data.data",
        where=f"eth.type == {ADMISSION_ETHERTYPE}",
    )  # fmt: skip
    for src, dst, length, protocols, payload in rows:
        assert int(length) == 60 and protocols == "eth:ethertype:data", (src, dst, length, protocols)
        assert len(payload) == 2 * (60 - 14) and int(payload[2:], 16) == 0
    return Counter((src, dst, int(payload[:2], 16)) for src, dst, _, _, payload in rows)


def test_admission_control_frames_are_on_the_wire_as_counted(converge: Result) -> None:
    opts = options(converge)
    by_link = {p.stem.split("-", 1)[1]: p for p in converge.pcaps}
    assert set(by_link) == {"a-sw", "b-sw", "sw-master"}
    for pcap in by_link.values():
        assert_clean(pcap, opts)
    master = control_frames(by_link["sw-master"], opts)
    kinds: Counter[int] = Counter()
    for (_, _, kind), n in master.items():
        kinds[kind] += n
    # Requests all go to one address (the master's), answers all come from it.
    (master_mac,) = {dst for (_, dst, kind) in master if kind == FAST_REQ}
    assert {src for (src, _, kind) in master if kind != FAST_REQ} == {master_mac}
    a, b, m = (zero_copy(converge, h) for h in ("a", "b", "master"))
    assert set(kinds) <= {FAST_REQ, FAST_ACK, FAST_NACK}
    assert kinds[FAST_REQ] == a["fast_requests"] + b["fast_requests"] > 0
    assert kinds[FAST_ACK] == m["fast_acks_sent"] > 0
    assert kinds[FAST_NACK] == m["fast_nacks_sent"]
    # Each sender's own link carries its requests and the master's answers to it.
    for name, counters in (("a", a), ("b", b)):
        seen: Counter[int] = Counter()
        for (_, _, kind), n in control_frames(by_link[f"{name}-sw"], opts).items():
            seen[kind] += n
        assert seen[FAST_REQ] == counters["fast_requests"]
        assert seen[FAST_ACK] == counters["fast_admitted"]
        # refusals of its requests, and revocations when the slot went to the other sender
        assert seen[FAST_NACK] == counters["fast_refused"] + counters["fast_revoked"]


def test_converging_streams_reassemble_to_what_was_sent(converge: Result) -> None:
    (pcap,) = [p for p in converge.pcaps if p.stem.endswith("sw-master")]
    assert_streams_carry_the_transfers(pcap, converge)
    rows = fields(pcap, options(converge), "ip.reassembled.length", where="ip.reassembled.length")
    sent = zero_copy(converge, "a")["tx_fragmented"] + zero_copy(converge, "b")["tx_fragmented"]
    assert len(rows) == sent > 0


@pytest.fixture(scope="module")
def std_to_zc(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """fallback-std-to-zc: a standard sender to a zero-copy receiver, 2 MiB."""
    return run_small(tmp_path_factory.mktemp("std-to-zc"), "fallback-std-to-zc", "2MiB", 1)


def test_a_standard_sender_puts_standard_segments_on_the_wire(std_to_zc: Result) -> None:
    (pcap,) = std_to_zc.pcaps
    opts = options(std_to_zc)
    assert_clean(pcap, opts)
    rows = fields(pcap, opts, "ip.flags.mf", "ip.frag_offset", "tcp.len", where="ip")
    assert not [r for r in rows if r[0] in ("1", "True") or int(r[1] or 0) > 0], "no fragments"
    lengths = Counter(int(r[2]) for r in rows if r[2] and int(r[2]) > 0)
    # The standard sender's own MTU limits it: 1500 - 20 - 32 = 1448 B of data.
    assert max(lengths) == 1448
    # Every frame above the 66-byte first header buffer (the SYN and every
    # data segment) lands in the receiver's speculative descriptors and fails.
    large = fields(pcap, opts, "frame.len", where=f"ip.src == {host(std_to_zc, 'a')['ip']} && frame.len > 66")
    receiver = zero_copy(std_to_zc, "b")
    assert len(large) == receiver["rx_large"] == receiver["spec_misses"] > sum(lengths.values())
    assert_streams_carry_the_transfers(pcap, std_to_zc)
