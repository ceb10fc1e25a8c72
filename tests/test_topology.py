"""Switched networks end to end: a Dolly chain through a switch, its checked
streams and per-link pcaps, which tshark dissects cleanly and in which every
hop's stream appears on the right links."""

from __future__ import annotations

from pathlib import Path

import nicsim
from test_pcap_tshark import SUSPICIOUS, tshark

CHAIN = """\
name = "dolly-chain"
[[hosts]]
name = "n0"
[[hosts]]
name = "n1"
[[hosts]]
name = "n2"
[[switches]]
name = "sw"
[[links]]
endpoints = ["n0", "sw"]
[[links]]
endpoints = ["n1", "sw"]
[[links]]
endpoints = ["n2", "sw"]
[workload.dolly]
nodes = ["n0", "n1", "n2"]
bytes = "1MiB"
port = 6000
"""


def test_a_dolly_chain_through_a_switch_is_captured_and_reported(tmp_path: Path) -> None:
    scenario = tmp_path / "chain.toml"
    scenario.write_text(CHAIN, encoding="utf-8")
    result = nicsim.run(scenario, pcap=tmp_path / "pcap", out=tmp_path / "out")
    data = result.data
    assert data["summary"]["verified"]
    assert [s["name"] for s in data["switches"]] == ["sw"]
    hops = [(f["from"], f["to"], f["bytes"]) for f in data["flows"]]
    assert hops == [("n0", "n1", 1 << 20), ("n1", "n2", 1 << 20)]
    pcaps = sorted(result.pcaps)
    assert len(pcaps) == 3
    conversations = {}
    for pcap in pcaps:
        options = ("-d", "tcp.port==6000,data")
        assert tshark("-r", str(pcap), *options, "-Y", SUSPICIOUS) == "", pcap
        ends = tshark("-r", str(pcap), *options, "-Y", "tcp.len > 0", "-T", "fields", "-e", "ip.src", "-e", "ip.dst")
        conversations[pcap.name] = {tuple(line.split("\t")) for line in ends.splitlines()}
    # n0 (10.0.0.1) only sends the image; n2 (10.0.0.3) only receives it;
    # n1's link carries it both ways.
    by_host = {name.split("-")[1]: pairs for name, pairs in conversations.items()}
    assert by_host["n0"] == {("10.0.0.1", "10.0.0.2")}
    assert by_host["n2"] == {("10.0.0.2", "10.0.0.3")}
    assert by_host["n1"] == {("10.0.0.1", "10.0.0.2"), ("10.0.0.2", "10.0.0.3")}
