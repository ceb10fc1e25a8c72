"""Timed hosts through the Python API and the command: host and cycle tables,
result files, the timed-hosts table and `nicsim profiles`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import nicsim
from nicsim import Result
from nicsim.result import CYCLES_COLUMNS, HOST_COLUMNS

from conftest import SCENARIOS, run_cli

KURMANN = SCENARIOS / "kurmann-standard.toml"
BUILTIN_PROFILES = ["kurmann-pii-400", "ortiz-p4-400", "won-simos-mips", "modern-x86-pcie", "cai-xeon-6128"]


@pytest.fixture(scope="module")
def kurmann() -> Result:
    """Two kurmann-pii-400 hosts, a sends 32 MiB to b over GbE."""
    return nicsim.run(KURMANN)


def test_kurmann_lands_near_the_studys_42_mb_per_s(kurmann: Result) -> None:
    assert kurmann.summary["verified"] is True
    assert kurmann.summary["goodput_bps"] / 8e6 == pytest.approx(42, rel=0.1)


def test_hosts_table_has_cpu_utilization_of_timed_hosts(kurmann: Result) -> None:
    hosts = kurmann.hosts_table()
    assert list(hosts["name"]) == ["a", "b"]
    assert hosts["cpu_utilization"].notna().all()
    sender, receiver = hosts["cpu_utilization"].tolist()
    # The receiver is the bottleneck (the study's finding): its CPU is saturated.
    assert receiver > 0.95
    assert sender < receiver


def test_hosts_table_sums_the_reports_cores(kurmann: Result) -> None:
    hosts = kurmann.hosts_table().set_index("name")
    for host in kurmann.hosts:
        timing = host["timing"]
        row = hosts.loc[host["name"]]
        assert row["interrupts"] == sum(c["interrupts"] for c in timing["cores"]) > 0
        assert row["interrupts"] == timing["nic"]["interrupts"]
        assert row["bus_utilization"] == timing["bus_utilization"]
        assert row["rx_fifo_drops"] == timing["nic"]["rx_fifo_drops"]
        assert row["tx_frames"] == host["tx_frames"]
        assert row["profile"] == timing["profile"]


def test_cycles_table_shares_sum_to_one_per_host(kurmann: Result) -> None:
    cycles = kurmann.cycles_table()
    assert list(cycles.columns) == list(CYCLES_COLUMNS)
    assert sorted(set(cycles["host"])) == ["a", "b"]
    assert (cycles["cycles"] > 0).all()
    for host, shares in cycles.groupby("host")["share"]:
        assert shares.sum() == pytest.approx(1.0, abs=1e-12), host
    # On the receiver copying into the application's buffer leads.
    receiver = cycles[cycles["host"] == "b"].set_index("layer")["share"]
    assert receiver.idxmax() == "copy"


def test_ideal_hosts_give_typed_tables_without_timing(bulk_scenario: Path) -> None:
    result = nicsim.run(bulk_scenario)
    hosts = result.hosts_table()
    assert list(hosts.columns) == list(HOST_COLUMNS)
    assert {str(t) for t in hosts.dtypes} == set(HOST_COLUMNS.values())
    assert len(hosts) == 2
    assert hosts["tx_frames"].notna().all()
    assert hosts["cpu_utilization"].isna().all()
    cycles = result.cycles_table()
    assert cycles.empty
    assert dict(cycles.dtypes.astype(str)) == CYCLES_COLUMNS


def test_write_adds_host_and_cycle_files(kurmann: Result, tmp_path: Path) -> None:
    written = kurmann.write(tmp_path)
    assert [p.name for p in written] == [
        "result.json", "summary.csv", "links.csv", "hosts.csv", "cycles.csv",
    ]  # fmt: skip
    hosts = pd.read_csv(tmp_path / "hosts.csv")
    assert list(hosts["name"]) == ["a", "b"]
    assert hosts["cpu_utilization"].tolist() == kurmann.hosts_table()["cpu_utilization"].tolist()
    cycles = pd.read_csv(tmp_path / "cycles.csv")
    assert len(cycles) == len(kurmann.cycles_table())
    again = nicsim.run(KURMANN).write(tmp_path / "again")
    for first, second in zip(written, again):
        assert first.read_bytes() == second.read_bytes(), first.name


def test_profiles_are_the_builtins() -> None:
    listed = nicsim.profiles()
    assert [name for name, _ in listed] == BUILTIN_PROFILES
    assert all(description for _, description in listed)


def test_cli_lists_profiles() -> None:
    done = run_cli("profiles")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == BUILTIN_PROFILES
    assert "Kurmann" in lines[0]


def test_cli_shows_timed_hosts(kurmann: Result, tmp_path: Path) -> None:
    done = run_cli("run", KURMANN, "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    receiver = kurmann.hosts_table().set_index("name").loc["b"]
    for text in (
        "timed hosts",
        "CPU",
        f"{100 * receiver['cpu_utilization']:.1f} %",
        f"{receiver['interrupts_per_s']:,.0f}",
        "400 MHz Pentium II",
        "copy",
    ):
        assert text in done.stdout, text
    assert "hosts.csv, cycles.csv" in done.stdout


def test_cli_shows_where_a_ddio_hosts_reads_found_the_data(tmp_path: Path) -> None:
    # modern-x86-pcie has DDIO; at 10 GbE the reader keeps up, so every byte
    # it reads is still in DDIO's share of the L3. The sender reads nothing.
    done = run_cli("run", SCENARIOS / "modern-10gbe-timed.toml", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    hosts = pd.read_csv(tmp_path / "hosts.csv").set_index("name")
    assert hosts.loc["b", "rx_from_llc"] == 1.0
    assert pd.isna(hosts.loc["a", "rx_from_llc"])
    line = next(line for line in done.stdout.splitlines() if "reads from L3" in line)
    assert "—" in line and "100.0 %" in line


def test_a_servers_cores_share_its_pcie_link(tmp_path: Path) -> None:
    # Four flows from four client cores to four server cores fill the
    # 100 GbE cable; on one machine the server's cores share one PCIe link,
    # which is then several times as busy as each core's own link would be.
    server = SCENARIOS / "modern-100g-server.toml"
    done = run_cli("run", server, "--out", tmp_path / "one")
    assert done.returncode == 0, done.stderr
    assert "client" in done.stdout, "the timed-hosts table names each host's machine"
    apart = tmp_path / "apart.toml"
    apart.write_text("".join(line for line in server.read_text().splitlines(True) if not line.startswith("machine =")))
    together = pd.read_csv(tmp_path / "one" / "hosts.csv").set_index("name")
    alone = nicsim.run(apart).hosts_table().set_index("name")
    receivers = [f"b{i}" for i in range(4)]
    assert (together.loc[receivers, "machine"] == "server").all()
    assert alone["machine"].isna().all()
    shared = together.loc[receivers, "bus_utilization"]
    assert shared.nunique() == 1, "one link, one set of counters"
    own = alone.loc[receivers, "bus_utilization"]
    assert shared.iloc[0] > 3 * own.max(), (shared.iloc[0], own.max())
    summary = pd.read_csv(tmp_path / "one" / "summary.csv").iloc[0]
    ceiling = 100e9 * 1448 / 1538
    assert 0.98 * ceiling < summary["goodput_bps"] <= ceiling * 1.0001


def test_cli_without_ddio_says_nothing_of_the_l3(tmp_path: Path) -> None:
    done = run_cli("run", KURMANN, "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "reads from L3" not in done.stdout
    assert pd.read_csv(tmp_path / "hosts.csv")["rx_from_llc"].isna().all()


def test_cli_leaves_ideal_output_alone(bulk_scenario: Path, tmp_path: Path) -> None:
    done = run_cli("run", bulk_scenario, "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "timed hosts" not in done.stdout
    assert "CPU" not in done.stdout


MODERN_OFFLOADS = SCENARIOS / "sweeps" / "modern-100g-offloads.toml"


@pytest.fixture(scope="module")
def modern_offloads() -> dict[tuple[str, bool, bool], Result]:
    """The eight points of the modern-100g-offloads sweep, shortened to 40 ms
    after 20 ms of warm-up, by (MTU, TSO and GRO, aRFS)."""
    text = MODERN_OFFLOADS.read_text(encoding="utf-8")
    text += '\n[fixed]\n"workload.bulk.duration" = "40ms"\n"workload.bulk.omit" = "20ms"\n'
    sweep = nicsim.Sweep.from_toml(text, directory=MODERN_OFFLOADS.parent)
    runs = {}
    for p in sweep.points():
        # TSO and GRO, and aRFS, are switched on both hosts together.
        assert p.params["hosts[0].nic.tso"] == p.params["hosts[1].nic.tso"] == (p.params["hosts[1].nic.lro"] == "gro")
        assert p.params["hosts[0].nic.arfs"] == p.params["hosts[1].nic.arfs"]
        key = (p.params["links[0].mtu"], p.params["hosts[0].nic.tso"], p.params["hosts[0].nic.arfs"])
        runs[key] = nicsim.run(p.scenario)
    assert len(runs) == 8
    return runs


def busiest_core(result: Result, host: int) -> float:
    return max(c["utilization"] for c in result.data["hosts"][host]["timing"]["cores"])


def test_one_flow_at_100g_is_bound_by_a_saturated_receiver_core_whatever_is_switched_on(
    modern_offloads: dict[tuple[str, bool, bool], Result],
) -> None:
    for key, r in modern_offloads.items():
        s = r.summary
        assert s["verified"] is True, key
        assert s["retransmissions"] == 0, key
        # Well short of the link: the receiver's core, not the wire, bounds it.
        assert 0 < s["goodput_bps"] < 0.7 * s["ceiling_bps"], key
        assert busiest_core(r, 1) > 0.99, key
        assert busiest_core(r, 0) < 0.9, key


def test_at_100g_the_per_packet_bound_receiver_gains_most_from_fewer_packets(
    modern_offloads: dict[tuple[str, bool, bool], Result],
) -> None:
    gbps = {k: r.summary["goodput_bps"] / 1e9 for k, r in modern_offloads.items()}
    plain = gbps[("1500B", False, False)]
    # A jumbo frame carries 6.2 times a standard frame's payload (8 948 against
    # 1 448 bytes) and GRO hands the stack one sk_buff for many frames: the
    # receiver's per-packet work shrinks by that much, and so the bound.
    assert gbps[("9000B", False, False)] > 4 * plain
    assert gbps[("1500B", True, False)] > 3 * plain
    # Both together gain less than each alone multiplied: the copy, paid per
    # byte, is left.
    assert gbps[("9000B", True, False)] < gbps[("9000B", False, False)] * gbps[("1500B", True, False)] / plain
