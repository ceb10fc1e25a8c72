"""`nicsim reproduce cai`: the Cai et al. study (one 100 Gb/s flow, seven
configurations), checked against issue #25's specification: the
comparison ids, the published calibration numbers, the layer-to-category
mapping, and the quantities recomputed here from the runs' raw reports.
The study is reproduced with short flows (:data:`SHORT`) to stay fast; the
full one is ``nicsim reproduce cai``."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from nicsim.studies import STUDIES, comparison
from nicsim.studies.cai import CATEGORIES, LAYER_CATEGORY, breakdown, build, category, measure, per_core
from nicsim.studies.cai.experiments import (
    BUFFERS,
    BUFFERS_FIXED_CLOCK,
    CONFIG,
    INCAST,
    MIXED,
    NO_DDIO,
    ALL_TO_ALL,
    NUMA,
    ONE_TO_ONE,
    ONE_TO_ONE_CONFIGS,
    ONE_TO_ONE_FLOWS,
    ONE_TO_ONE_SCENARIO,
    OUTCAST,
    OUTCAST_SCENARIO,
    RPC_SCENARIO,
    RPCS,
    RPCS_FIXED_CLOCK,
    SCENARIO,
    NoDdio,
    Rpc,
    TCP_RMEM_MAX,
    TCP_WMEM_MAX,
    WARMUP,
    _breakdown,
    autotuned_rcvbuf,
    autotuned_sndbuf,
    link_share_buffers,
    socket_buffers,
)
from nicsim.studies.cai.metrics import measure_mixed, measure_one_to_one, measure_outcast, measure_rpc
from nicsim.studies.records import RunReport

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parent.parent
SHORT = "8ms"
"""Simulated time per flow in these tests (the study's is longer)."""

# The specification (issue #25), written out here, not taken from the module.
CONFIGS = ["no_opts", "tso_gro", "jumbo", "tso_gro_jumbo", "tso_gro_arfs", "jumbo_arfs", "all_opts"]
BUFFER_KIB = [100, 200, 400, 800, 1600, 3200, 6400, 12800]
"""The study's buffer experiment (its artifact's tcp-buffer.sh: `--window` of each run, in KiB)."""
NO_DDIO_BREAKDOWN = ["no_opts", "tso_gro", "tso_gro_jumbo", "all_opts"]
"""The study's DDIO experiment (its artifact's single-flow-no-ddio.sh): every configuration, the
breakdown (--util-breakdown) of these four."""
INCAST_CONFIGS = ["no_opts", "tso_gro", "tso_gro_jumbo", "all_opts"]
INCAST_FLOWS = [8, 16, 24]
"""The study's incast experiment (its artifact's incast.sh): these configurations, each with 8, 16 and
24 flows into one receiver core; the breakdown (--util-breakdown) of all_opts."""
RPC_CONFIGS = ["no_opts", "tso_gro", "tso_gro_jumbo", "all_opts"]
RPC_SIZES = [4000, 16000, 32000, 64000]
"""The study's RPC experiment (its artifact's short-incast.sh): 16 netperf TCP_RR connections with
requests and responses of these sizes into one receiver core, in these configurations; the receiver's
breakdown (--util-breakdown) of all_opts."""
MIXED_RPCS = [1, 4, 16]
"""The study's mixed experiment (its artifact's mixed.sh): one long flow and 1, 4 or 16 netperf TCP_RR
connections of run_experiment_sender.py's default --rpc-size, 4000 bytes, on one core, in the RPC
experiment's configurations; the receiver's breakdown of all_opts."""
OUTCAST_CONFIGS = ["no_opts", "tso_gro", "tso_gro_jumbo", "all_opts"]
OUTCAST_FLOWS = [2, 4, 8]
"""The study's outcast experiment (its artifact's outcast.sh): these configurations, each with 2, 4
and 8 flows from one sender core (CPU 0) to as many receiver cores; throughput per core over the
sender's CPU (run_experiment_sender.py); the breakdown (--util-breakdown) of all_opts."""
ONE_TO_ONE_SPEC = ["no_opts", "tso_gro", "tso_gro_jumbo", "all_opts"]
"""The study's one-to-one experiment (its artifact's one-to-one.sh): these configurations, each with 8,
16 and 24 flows, flow i from sender CPU i to receiver CPU i; the receiver's breakdown of all_opts."""
COPY_CYCLES_PER_BYTE = 3.4e9 / 8.491e9
"""cai-xeon-6128's copy of received data from memory: cpu.clock over memory.copy_bandwidth."""
CALL_COPY_CYCLES = 33 - 10
"""cai-xeon-6128's copy routine's call per piece of an sk_buff that counts as copy: costs.copy_call
less costs.copy_call_thunk."""
PIECES_PER_BYTE = {1500: 1 / 1448, 9000: 4 / 8948}
"""Pieces a read copies per payload byte: a linear MTU 1500 frame is one; a jumbo frame is mlx5's
256-byte head and three pages."""
DDIO_BYTES = int(3.5 * 2**20)
"""cai-xeon-6128's memory.ddio: the L3 share DMA writes fill (one pool: no memory.ddio_ways)."""
SIDES = ["sender", "receiver"]
SPEC_CATEGORIES = ["data_copy", "etc", "lock", "mm", "netdev", "sched", "skb", "tcpip"]
KNOBS = {  # id: (mtu, tso, lro, arfs)
    "no_opts": (1500, False, "off", False),
    "tso_gro": (1500, True, "gro", False),
    "jumbo": (9000, False, "off", False),
    "tso_gro_jumbo": (9000, True, "gro", False),
    "tso_gro_arfs": (1500, True, "gro", True),
    "jumbo_arfs": (9000, False, "off", True),
    "all_opts": (9000, True, "gro", True),
}
PUBLISHED: dict[str, dict[str, Any]] = {
    "no_opts": {
        "throughput": 9.0, "per_core": 4.78, "cpu": (101.5, 185.8),
        "sender": (5.9, 4.9, 4.5, 8.2, 17.5, 2.2, 9.5, 41.5),
        "receiver": (7.4, 0.5, 8.9, 4.4, 9.3, 2.4, 7.3, 54.8),
    },
    "all_opts": {
        "throughput": 42.2, "per_core": 41.2, "cpu": (59.8, 100.0),
        "sender": (48.0, 4.8, 1.8, 6.8, 8.5, 7.0, 3.4, 12.7),
        "receiver": (54.3, 1.8, 0.6, 11.0, 18.3, 3.0, 3.7, 2.2),
    },
}
SPEC_MAPPING = {
    "data_copy": {"copy", "memory_stall"},
    "tcpip": {"tcp", "ip", "udp", "ip_frag", "socket"},
    "netdev": {"device", "driver", "coalesce", "interrupt"},
    "skb": {"skb"},
    "mm": {"mm"},
    "lock": {"lock"},
    "sched": {"sched", "syscall", "idle", "clock_read"},
    "user": {"app"},
}
"""Where the study's table of kernel symbols (symbol_mapping.tsv in its
artifact) puts what each layer stands for: the socket calls (sock_sendmsg,
inet_recvmsg, __sys_recvfrom) are tcp/ip, the system call's entry and exit
(entry_SYSCALL_64, do_syscall_64, syscall_return_via_sysret) sched, the
driver's interrupt handler (mlx5e_completion_event) netdev, the idle loop
entering and leaving its state (cpuidle_enter_state, intel_idle) sched,
the clock source's read_tsc of the time stamp the study's patched kernel
takes of each received frame sched, and user space is in no category
(software checksums, csum_partial and do_csum, choosing the idle state,
menu_select, the qdisc's fq_codel_dequeue, and
the time stamp's ktime_get and __x86_indirect_thunk_rax are etc). Every other layer is etc. The interrupt layer's entry
and exit are split off (INTERRUPT_ENTRY_EXIT)."""
INTERRUPT_ENTRY_EXIT = (600, 300)
"""cai-xeon-6128's cpu.interrupt_entry (the study's sched: interrupt_entry)
and cpu.interrupt_exit (etc: native_irq_return_iret, the APIC's EOI)."""
COVERAGE = 95.0
"""The study's script adds kernel symbols until they cover 95 % of the samples."""
CLAIMS = {
    "claim.receiver_bottleneck", "claim.no_opts_tcpip_largest", "claim.all_opts_copy_largest",
    "claim.tso_gro_raises_per_core", "claim.jumbo_raises_per_core", "claim.all_opts_highest_per_core",
    "claim.arfs_lowers_receiver_cpu", "claim.gro_lowers_receiver_tcpip_share", "claim.jumbo_raises_receiver_copy_share",
}


def expected_ids() -> list[str]:
    ids = []
    for c in CONFIGS:
        ids += [f"per_core_gbps.{c}", f"throughput_gbps.{c}"]
        ids += [f"cpu_pct.{s}.{c}" for s in SIDES]
        ids += [f"breakdown_pct.{s}.{cat}.{c}" for s in SIDES for cat in SPEC_CATEGORIES]
    for k in BUFFER_KIB:
        b = f"buffer_{k}k"
        ids += [f"throughput_gbps.{b}", f"per_core_gbps.{b}", f"cpu_pct.sender.{b}", f"cpu_pct.receiver.{b}",
                f"copy_latency_us.{b}", f"l3_miss_pct.{b}"]
    for c in CONFIGS:
        v = f"no_ddio_{c}"
        ids += [f"per_core_gbps.{v}", f"throughput_gbps.{v}"] + [f"cpu_pct.{s}.{v}" for s in SIDES]
        if c in NO_DDIO_BREAKDOWN:
            ids += [f"breakdown_pct.{s}.{cat}.{v}" for s in SIDES for cat in SPEC_CATEGORIES]
    for c in INCAST_CONFIGS:
        for n in INCAST_FLOWS:
            v = f"incast_{n}_{c}"
            ids += [f"throughput_gbps.{v}", f"per_core_gbps.{v}", f"cpu_pct.receiver.{v}"]
            if c == "all_opts":
                # incast.sh: --util-breakdown and --cache-miss in the all_opts runs only.
                ids += [f"breakdown_pct.receiver.{cat}.{v}" for cat in SPEC_CATEGORIES]
                ids += [f"l3_miss_pct.{v}"]
    for c in RPC_CONFIGS:
        for n in RPC_SIZES:
            v = f"rpc_{n}_{c}"
            ids += [f"per_core_gbps.{v}", f"throughput_gbps.{v}", f"cpu_pct.receiver.{v}"]
            if c == "all_opts":
                ids += [f"breakdown_pct.receiver.{cat}.{v}" for cat in SPEC_CATEGORIES]
    for c in RPC_CONFIGS:
        for n in MIXED_RPCS:
            v = f"mixed_{n}_{c}"
            ids += [f"per_core_gbps.{v}", f"throughput_gbps.{v}", f"cpu_pct.receiver.{v}"]
            if c == "all_opts":
                ids += [f"breakdown_pct.receiver.{cat}.{v}" for cat in SPEC_CATEGORIES]
    for flow in ["long", "short"]:
        for place in ["local", "remote"]:
            v = f"numa_{flow}_{place}"
            ids += [f"per_core_gbps.{v}", f"throughput_gbps.{v}", f"cpu_pct.receiver.{v}", f"l3_miss_pct.{v}"]
    for c in ONE_TO_ONE_SPEC:
        for n in [8, 16, 24]:
            v = f"all_to_all_{n}_{c}"
            ids += [f"per_core_gbps.{v}", f"throughput_gbps.{v}"] + [f"cpu_pct.{s}.{v}" for s in SIDES]
            if c == "all_opts":
                ids += [f"breakdown_pct.receiver.{cat}.{v}" for cat in SPEC_CATEGORIES]
    for c in ONE_TO_ONE_SPEC:
        for n in [8, 16, 24]:
            v = f"one_to_one_{n}_{c}"
            ids += [f"per_core_gbps.{v}", f"throughput_gbps.{v}"] + [f"cpu_pct.{s}.{v}" for s in SIDES]
            if c == "all_opts":
                ids += [f"breakdown_pct.receiver.{cat}.{v}" for cat in SPEC_CATEGORIES]
    for c in OUTCAST_CONFIGS:
        for n in OUTCAST_FLOWS:
            v = f"outcast_{n}_{c}"
            ids += [f"per_core_gbps.{v}", f"throughput_gbps.{v}"] + [f"cpu_pct.{s}.{v}" for s in SIDES]
            if c == "all_opts":
                ids += [f"breakdown_pct.{s}.{cat}.{v}" for s in SIDES for cat in SPEC_CATEGORIES]
    return ids


@pytest.fixture(scope="module")
def short(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study reproduced with :data:`SHORT` flows; returns its results directory."""
    results = tmp_path_factory.mktemp("cai")
    build(SHORT).reproduce(results / "report", results, progress=False)
    return results


@pytest.fixture(scope="module")
def rows(short: Path) -> list[comparison.Row]:
    return comparison.read(short / "report" / "comparison.csv")


@pytest.fixture(scope="module")
def reports(short: Path) -> dict[str, RunReport]:
    study = build(SHORT)
    loaded = study.load(short)
    out = {}
    for c in CONFIGS:
        r = loaded[CONFIG[c].run(SHORT).key]
        assert isinstance(r, RunReport)
        out[c] = r
    return out


def test_the_study_is_registered_and_the_command_takes_it() -> None:
    from click.testing import CliRunner

    from nicsim.cli import main

    assert STUDIES["cai"] == "nicsim.studies.cai"
    res = CliRunner().invoke(main, ["reproduce", "--help"])
    assert res.exit_code == 0 and "cai" in res.output


def test_every_required_id_is_present_exactly_once_with_its_unit_and_role(rows: list[comparison.Row]) -> None:
    numbers = [r for r in rows if r.role != "claim"]
    assert Counter(r.id for r in numbers) == Counter(expected_ids())
    for r in numbers:
        assert r.study == "cai"
        unit = "us" if r.id.startswith("copy_latency_us.") else "pct"
        assert r.unit == ("Gb/s" if r.id.startswith(("per_core_gbps.", "throughput_gbps.")) else unit), r.id
        config = r.id.rsplit(".", 1)[1]
        if config in ("no_opts", "all_opts"):
            assert r.role == "calibration" and r.published is not None, r.id
        else:
            assert r.role == "prediction" and r.published is None and r.error_pct is None, r.id


def test_calibration_rows_carry_the_published_values(rows: list[comparison.Row]) -> None:
    by = {r.id: r for r in rows}
    for c, p in PUBLISHED.items():
        assert by[f"throughput_gbps.{c}"].published == p["throughput"]
        assert by[f"per_core_gbps.{c}"].published == p["per_core"]
        assert by[f"cpu_pct.sender.{c}"].published == p["cpu"][0]
        assert by[f"cpu_pct.receiver.{c}"].published == p["cpu"][1]
        for side in SIDES:
            for cat, v in zip(SPEC_CATEGORIES, p[side]):
                r = by[f"breakdown_pct.{side}.{cat}.{c}"]
                assert r.published == v, r.id
                assert r.error_pct == pytest.approx(100 * (r.nicsim - v) / v)


def test_each_sides_breakdown_adds_up_to_the_studys_coverage(
        rows: list[comparison.Row], reports: dict[str, RunReport]) -> None:
    # No user-space work in these runs: the kernel's categories cover 95 % of the cycles.
    for c, report in reports.items():
        m = measure(report)
        for side in SIDES:
            assert list(m.sides[side].breakdown_pct) == SPEC_CATEGORIES
            assert m.sides[side].cycles.get("app", 0) == 0
            assert sum(m.sides[side].breakdown_pct.values()) == pytest.approx(COVERAGE, abs=1e-6), (c, side)
    by = {r.id: r.nicsim for r in rows}
    for c in CONFIGS:
        for side in SIDES:
            # The file keeps six significant digits per cell.
            assert sum(by[f"breakdown_pct.{side}.{cat}.{c}"] for cat in SPEC_CATEGORIES) == pytest.approx(
                COVERAGE, abs=1e-3)


def core_layer_names() -> list[str]:
    """Every layer name the core reports, read from the Rust source."""
    src = (REPO / "crates" / "nicsim-core" / "src" / "host" / "cpu.rs").read_text(encoding="utf-8")
    names = re.findall(r'Layer::\w+\s*=>\s*"([a-z_]+)"', src)
    assert len(names) >= 18, "could not read the Layer names from cpu.rs"
    return names


def test_the_mapping_puts_every_core_layer_in_exactly_one_category() -> None:
    names = core_layer_names()
    assert set(LAYER_CATEGORY.values()) <= set(SPEC_CATEGORIES) | {"user"}
    assert list(CATEGORIES) == SPEC_CATEGORIES
    for name in names:
        # Listed explicitly (a new layer must be placed on purpose), and where the brief puts it.
        assert name in LAYER_CATEGORY, f"layer {name!r} of cpu.rs has no category in LAYER_CATEGORY"
        homes = [cat for cat, layers in SPEC_MAPPING.items() if name in layers]
        assert len(homes) <= 1
        assert category(name) == (homes[0] if homes else "etc"), name
    for cat, layers in SPEC_MAPPING.items():
        for layer in layers:
            assert category(layer) == cat
    assert category("a_layer_added_later") == "etc"


def test_quantities_recomputed_from_the_raw_reports(rows: list[comparison.Row], reports: dict[str, RunReport]) -> None:
    by = {r.id: r.nicsim for r in rows}
    for c, report in reports.items():
        raw = report.raw
        gbps = raw["summary"]["goodput_bps"] / 1e9
        hosts = {h["name"]: h for h in raw["hosts"]}
        cpu = {side: 100 * sum(core["utilization"] for core in hosts[name]["timing"]["cores"])
               for side, name in (("sender", "a"), ("receiver", "b"))}
        assert gbps > 0 and cpu["receiver"] > 0
        assert by[f"throughput_gbps.{c}"] == pytest.approx(gbps, rel=1e-5)
        assert by[f"per_core_gbps.{c}"] == pytest.approx(gbps / (cpu["receiver"] / 100), rel=1e-5)
        for side, name in (("sender", "a"), ("receiver", "b")):
            assert by[f"cpu_pct.{side}.{c}"] == pytest.approx(cpu[side], rel=1e-5)
            cycles = hosts[name]["timing"]["cycles"]
            total = sum(cycles.values())
            irqs = sum(core["interrupts"] for core in hosts[name]["timing"]["cores"])
            entry, exit_ = (irqs * n for n in INTERRUPT_ENTRY_EXIT)
            assert cycles.get("interrupt", 0) >= entry + exit_
            for cat in SPEC_CATEGORIES:
                if cat == "etc":
                    mine = sum(v for k, v in cycles.items() if not any(k in ls for ls in SPEC_MAPPING.values()))
                    mine += exit_
                else:
                    mine = sum(v for k, v in cycles.items() if k in SPEC_MAPPING[cat])
                    mine += entry if cat == "sched" else -(entry + exit_) if cat == "netdev" else 0
                want = COVERAGE * mine / total
                assert by[f"breakdown_pct.{side}.{cat}.{c}"] == pytest.approx(want, abs=1e-4), (c, side, cat)


def test_each_busy_cores_clock_is_reported_within_the_p_state_limits(
        reports: dict[str, RunReport], short: Path) -> None:
    text = (short / "report" / "report.md").read_text(encoding="utf-8")
    for c, report in reports.items():
        m = measure(report)
        for side, host in (("sender", 0), ("receiver", 1)):
            cores = report.raw["hosts"][host]["timing"]["cores"]
            clocks = m.sides[side].clocks_ghz
            assert len(clocks) == sum(core["busy_s"] > 0 for core in cores) >= 1, (c, side)
            # intel_pstate keeps each core between its lowest P-state and turbo (1.2 and 3.7 GHz).
            assert all(1.2 - 1e-6 <= g <= 3.7 + 1e-6 for g in clocks), (c, side, clocks)
        row = next(line for line in text.splitlines() if line.startswith(f"| `{c}` | ") and "GHz" in line)
        assert " / ".join(f"{g:.2f}" for g in m.receiver.clocks_ghz) + " GHz" in row, row
    # Without aRFS the receiver's stack and reader run on two cores.
    assert len(measure(reports["no_opts"]).receiver.clocks_ghz) == 2


def test_each_configuration_sets_its_knobs_on_both_hosts(reports: dict[str, RunReport]) -> None:
    for c, (mtu, tso, lro, arfs) in KNOBS.items():
        fixed = CONFIG[c].run(SHORT).fixed
        assert fixed["links[0].mtu"] == f"{mtu}B"
        assert fixed["workload.bulk.duration"] == SHORT
        # The study measured long flows: the run's start is left out.
        assert fixed["workload.bulk.omit"] == WARMUP
        for host in ("a", "b"):
            assert reports[c].host(host).timed.raw["measured_from_s"] == pytest.approx(0.1), (c, host)
        for i in (0, 1):
            assert (fixed[f"hosts[{i}].nic.tso"], fixed[f"hosts[{i}].nic.lro"], fixed[f"hosts[{i}].nic.arfs"]) == (
                tso, lro, arfs)
            tx, rx = socket_buffers(mtu, tso)
            assert (fixed[f"hosts[{i}].tcp.tx_buffer"], fixed[f"hosts[{i}].tcp.rx_buffer"]) == (f"{tx}B", f"{rx}B")
    # The knobs reach the model: GRO merges segments only where it is on.
    for c, (_, _, lro, _) in KNOBS.items():
        gro = reports[c].host("b").timed.raw.get("gro")
        assert (gro is not None and gro["segments_merged"] > 0) == (lro == "gro"), c


@pytest.fixture(scope="module")
def buffer_reports(short: Path) -> dict[int, RunReport]:
    loaded = build(SHORT).load(short)
    out = {}
    for b in BUFFERS:
        r = loaded[b.run(SHORT).key]
        assert isinstance(r, RunReport)
        out[b.kib] = r
    return out


def test_the_buffer_runs_are_all_opts_with_both_buffers_fixed() -> None:
    assert [b.kib for b in BUFFERS] == BUFFER_KIB
    base = CONFIG["all_opts"].fixed(SHORT)
    for b in BUFFERS:
        knobs = b.fixed(SHORT)
        # iperf -w asks half and Linux doubles it: each buffer is the size in KiB of sk_buff memory,
        # as payload at MTU 9000 with TSO (the same charge as the autotuned caps).
        tx, rx = socket_buffers(9000, True, b.kib * 1024, b.kib * 1024)
        for i in range(2):
            assert knobs.pop(f"hosts[{i}].tcp.tx_buffer") == f"{tx}B"
            assert knobs.pop(f"hosts[{i}].tcp.rx_buffer") == f"{rx}B"
        assert knobs == {k: v for k, v in base.items() if not k.endswith(("tx_buffer", "rx_buffer"))}


def test_the_buffer_runs_reads_follow_ddio(buffer_reports: dict[int, RunReport]) -> None:
    for kib, report in buffer_reports.items():
        rc = report.host("b").timed.raw["rx_copy"]
        rx = socket_buffers(9000, True, kib * 1024, kib * 1024)[1]
        copied = rc["llc_bytes"] + rc["memory_bytes"]
        assert copied > 0 and rc["read_bytes"] >= copied, kib
        # The window keeps what is sent and not yet read within the receive buffer.
        assert 0 < rc["mean_unread_bytes"] <= rx, kib
        if rx <= DDIO_BYTES:
            # Nothing unread can be older than the newest 3.5 MiB of DMA writes: every copy hits the L3.
            assert rc["memory_bytes"] == 0, kib
        if rc["mean_unread_bytes"] > DDIO_BYTES:
            # The mean byte is read after more than DDIO's share came in behind it: some come from memory.
            assert rc["memory_bytes"] > 0, kib
    rates = {k: r.summary.goodput_bps for k, r in buffer_reports.items()}
    # A window-limited flow: up to 800 KiB each doubling of the buffer raises the throughput.
    small = [k for k in BUFFER_KIB if k <= 800]
    assert all(rates[a] < rates[b] for a, b in zip(small, small[1:])), rates


def test_the_fixed_clock_buffer_runs_differ_from_the_buffer_runs_only_in_the_clock() -> None:
    assert [b.kib for b in BUFFERS_FIXED_CLOCK] == BUFFER_KIB
    for b, f in zip(BUFFERS, BUFFERS_FIXED_CLOCK):
        assert f.id == f"{b.id}_fixed_clock"
        knobs = f.fixed(SHORT)
        # intel_pstate's performance policy: every core of both hosts at the Gold 6128's turbo (Intel ARK).
        for i in range(2):
            assert knobs.pop(f"hosts[{i}].cpu.pstate") == {"min": "3.7GHz", "turbo": "3.7GHz"}
        assert knobs == b.fixed(SHORT)


def test_at_a_fixed_clock_every_busy_core_runs_at_turbo_and_a_window_limited_flow_is_no_slower(
        short: Path) -> None:
    loaded = build(SHORT).load(short)
    rates = {}
    for b, f in zip(BUFFERS, BUFFERS_FIXED_CLOCK):
        gov, fix = loaded[b.run(SHORT).key], loaded[f.run(SHORT).key]
        assert isinstance(gov, RunReport) and isinstance(fix, RunReport)
        for host in ("a", "b"):
            busy = [c for c in fix.host(host).timed.raw["cores"] if c["busy_s"] > 0]
            assert busy and all(c["busy_clock_hz"] == pytest.approx(3.7e9, rel=1e-4) for c in busy), (b.kib, host)
        rates[b.kib] = (gov.summary.goodput_bps, fix.summary.goodput_bps)
    # The 100 KiB flow leaves its cores mostly idle: under powersave some core runs well below turbo.
    small = loaded[BUFFERS[0].run(SHORT).key]
    assert isinstance(small, RunReport)
    clocks = [c["busy_clock_hz"] for h in ("a", "b") for c in small.host(h).timed.raw["cores"] if c["busy_s"] > 0]
    assert min(clocks) < 3.0e9, clocks
    # A window-limited flow (up to 800 KiB) is bound by its round trip, which a faster clock can only
    # shorten: at turbo it moves at least as fast as under powersave.
    for kib in (k for k in BUFFER_KIB if k <= 800):
        assert rates[kib][1] >= rates[kib][0], (kib, rates[kib])


def test_the_no_ddio_runs_are_each_configuration_with_ddio_off_on_both_hosts() -> None:
    assert [v.config for v in NO_DDIO] == CONFIGS
    assert [v.config for v in NO_DDIO if v.breakdown] == NO_DDIO_BREAKDOWN
    for v in NO_DDIO:
        knobs = v.fixed(SHORT)
        assert v.id == f"no_ddio_{v.config}"
        for i in range(2):
            assert knobs.pop(f"hosts[{i}].memory.ddio") == "0B"
        assert knobs == CONFIG[v.config].fixed(SHORT)


def test_without_ddio_every_received_byte_is_copied_from_memory(short: Path) -> None:
    loaded = build(SHORT).load(short)
    for v in NO_DDIO:
        report = loaded[v.run(SHORT).key]
        with_ddio = loaded[CONFIG[v.config].run(SHORT).key]
        assert isinstance(report, RunReport) and isinstance(with_ddio, RunReport)
        b = report.host("b").timed
        # No DDIO: nothing reports reads from the L3.
        assert not b.raw.get("rx_copy"), v.id
        per_byte = b.cycles["copy"] / report.summary.payload_bytes
        on = with_ddio.host("b").timed.cycles["copy"] / with_ddio.summary.payload_bytes
        if KNOBS[v.config][3]:
            # aRFS: one core, so the copy is the data's, clock / memory.copy_bandwidth cycles a
            # byte, and the part of the copy routine's call per piece off the thunk (the measured
            # interval's payload; a read in progress at an edge is the slack).
            calls = CALL_COPY_CYCLES * PIECES_PER_BYTE[KNOBS[v.config][0]]
            assert per_byte == pytest.approx(COPY_CYCLES_PER_BYTE + calls, rel=0.01), v.id
        else:
            # Two cores: the copy also fetches lines the stack's core touched (cpu.line_transfer).
            assert per_byte > COPY_CYCLES_PER_BYTE, v.id
        # Without DDIO no byte is cheaper to copy than with it.
        assert on <= per_byte * 1.01, v.id


def test_the_incast_runs_are_the_configurations_with_several_flows() -> None:
    assert [(v.config, v.flows) for v in INCAST] == [(c, n) for c in INCAST_CONFIGS for n in INCAST_FLOWS]
    for v in INCAST:
        knobs = v.fixed(SHORT)
        assert v.id == f"incast_{v.flows}_{v.config}"
        assert knobs.pop("workload.bulk.flows") == v.flows
        assert knobs == CONFIG[v.config].fixed(SHORT)


def test_incast_flows_share_the_link_and_the_receivers_two_cores(short: Path) -> None:
    loaded = build(SHORT).load(short)
    for v in INCAST:
        report = loaded[v.run(SHORT).key]
        assert isinstance(report, RunReport)
        s = report.summary
        assert s.verified and s.lost == 0, v.id
        assert s.jain_fairness is not None and 0 < s.jain_fairness <= 1, v.id
        # Every flow ran and their aggregate is within the link's ceiling.
        assert len(report.raw["bulk_flows"]) == v.flows, v.id
        assert 0 < s.goodput_bps <= s.raw["ceiling_bps"], v.id
        # All flows run on the application's core and their frames on one queue: at most two busy
        # cores (one with aRFS, which moves the queue's work to the application's core).
        b = report.host("b").timed
        busy = [c for c in b.raw["cores"] if c["busy_s"] > 0]
        assert len(busy) <= (1 if KNOBS[v.config][3] else 2), v.id
        assert sum(c["utilization"] for c in busy) <= len(busy) + 1e-9, v.id


def every_host(n: int, config: str, buffers: tuple[int, int] | None = None, links: int | None = None,
               ) -> dict[str, Any]:
    """The knobs that put configuration ``config`` on hosts 0 to ``n`` - 1 and links 0 to ``links`` - 1
    (``n`` unless given), and the socket buffers ``buffers`` (send and receive) if given."""
    mtu, tso, lro, arfs = KNOBS[config]
    knobs: dict[str, Any] = {f"links[{i}].mtu": f"{mtu}B" for i in range(n if links is None else links)}
    for i in range(n):
        knobs |= {f"hosts[{i}].nic.tso": tso, f"hosts[{i}].nic.lro": lro, f"hosts[{i}].nic.arfs": arfs}
        if buffers is not None:
            knobs |= {f"hosts[{i}].tcp.tx_buffer": f"{buffers[0]}B", f"hosts[{i}].tcp.rx_buffer": f"{buffers[1]}B"}
    return knobs


def test_the_rpc_runs_set_every_host_and_link_of_the_rpc_scenario() -> None:
    s = tomllib.loads(RPC_SCENARIO.read_text(encoding="utf-8"))
    clients = [f"a{i}" for i in range(16)]
    assert [h["name"] for h in s["hosts"]] == ["b", *clients]
    # The clients are cores of one machine (the study's one sender).
    assert [h.get("machine") for h in s["hosts"]] == [None] + ["sender"] * 16
    for h in s["hosts"]:
        # netperf's TCP_RR sets no TCP_NODELAY without -D: Linux's Nagle rule.
        assert h["profile"] == "cai-xeon-6128" and h["tcp"]["nagle"] == "minshall"
    assert [sorted(link["endpoints"]) for link in s["links"]] == [sorted([n, "sw"]) for n in ["b", *clients]]
    assert all(link["rate"] == "100Gbps" for link in s["links"])
    assert (s["workload"]["dsm"]["home"], s["workload"]["dsm"]["nodes"]) == ("b", clients)
    assert [(v.config, v.size) for v in RPCS] == [(c, n) for c in RPC_CONFIGS for n in RPC_SIZES]
    for v in RPCS:
        assert v.id == f"rpc_{v.size}_{v.config}"
        knobs = v.fixed(SHORT)
        expected = {"workload.dsm.request": f"{v.size}B", "workload.dsm.page_size": f"{v.size}B",
                    "workload.dsm.duration": SHORT, "workload.dsm.omit": WARMUP}
        assert knobs == expected | every_host(17, v.config), v.id


def test_the_fixed_clock_rpc_runs_differ_from_the_rpc_runs_only_in_every_hosts_clock() -> None:
    assert [(v.config, v.size) for v in RPCS_FIXED_CLOCK] == [(v.config, v.size) for v in RPCS]
    for v, f in zip(RPCS, RPCS_FIXED_CLOCK):
        assert f.id == f"{v.id}_fixed_clock"
        knobs = f.fixed(SHORT)
        for i in range(17):
            assert knobs.pop(f"hosts[{i}].cpu.pstate") == {"min": "3.7GHz", "turbo": "3.7GHz"}, f.id
        assert knobs == v.fixed(SHORT), f.id


def test_at_a_fixed_clock_every_rpc_host_runs_at_turbo_and_with_arfs_transactions_are_no_slower(short: Path) -> None:
    loaded = build(SHORT).load(short)
    for v, f in zip(RPCS, RPCS_FIXED_CLOCK):
        gov, fix = loaded[v.run(SHORT).key], loaded[f.run(SHORT).key]
        assert isinstance(gov, RunReport) and isinstance(fix, RunReport)
        assert fix.summary.verified and fix.summary.retransmissions == 0, f.id
        for host in ["b", *(f"a{i}" for i in range(16))]:
            busy = [c for c in fix.host(host).timed.raw["cores"] if c["busy_s"] > 0]
            assert busy and all(c["busy_clock_hz"] == pytest.approx(3.7e9, rel=1e-4) for c in busy), (f.id, host)
        # One transaction at a time per connection. With aRFS each host runs its stack and its program
        # on one core, so a segment costs about the same whether it waits in the backlog or not, and
        # each transaction is a chain of work on fixed cores, which a faster clock can only shorten,
        # unless a timer the clock moves lengthens it: DIM, which picks each NIC's interrupt moderation
        # from the traffic it samples, may settle a faster host on a longer moderation (all_opts at
        # 16 000 B: a client's DIM ends on profile 3 at the fixed clock, 0 under the governor, and
        # the run is slower; with DIM off it is faster). Without aRFS a faster program holds its
        # sockets for less of the time, more segments get their TCP input on the interrupt core at the
        # cross-core price, and no such bound holds (no_opts at 64 000 B is slower at a fixed clock).
        if KNOBS[v.config][3]:
            rate = lambda r: r.summary.raw["transaction_rate"]
            hosts = ["b", *(f"a{i}" for i in range(16))]
            dim = lambda r: [r.host(h).timed.raw["nic"].get("dim_profile", 0) for h in hosts]
            longer = any(f > g for f, g in zip(dim(fix), dim(gov)))
            assert rate(fix) >= rate(gov) or longer, (v.id, dim(gov), dim(fix))


def test_rpcs_are_intact_and_the_throughput_is_one_directions(short: Path) -> None:
    loaded = build(SHORT).load(short)
    for v in RPCS:
        report = loaded[v.run(SHORT).key]
        assert isinstance(report, RunReport)
        s = report.summary
        assert s.verified and s.lost == 0 and s.retransmissions == 0, v.id
        # Every client's requests reached the receiver and its responses came back.
        for i in range(16):
            assert any(f["from"] == f"a{i}" and f["to"] == "b" and f["bytes"] > 0 for f in report.raw["flows"]), v.id
            assert any(f["from"] == "b" and f["to"] == f"a{i}" and f["bytes"] > 0 for f in report.raw["flows"]), v.id
        # The study's throughput: netperf's bytes both ways, halved, is transactions/s x size.
        m = measure_rpc(report)
        rate = s.raw["transaction_rate"]
        assert m.throughput_gbps == pytest.approx(rate * v.size * 8 / 1e9, rel=1e-9), v.id
        assert 0 < m.throughput_gbps < 100, v.id
        # Every connection is served on the receiver's application core and its frames on one queue:
        # at most two busy cores (one with aRFS).
        b = report.host("b").timed
        busy = [c for c in b.raw["cores"] if c["busy_s"] > 0]
        assert len(busy) <= (1 if KNOBS[v.config][3] else 2), v.id
        assert m.sides.keys() == {"receiver"}, v.id


def test_the_mixed_runs_add_rpc_connections_beside_the_flow(short: Path) -> None:
    assert [(v.config, v.rpcs) for v in MIXED] == [(c, n) for c in RPC_CONFIGS for n in MIXED_RPCS]
    loaded = build(SHORT).load(short)
    for v in MIXED:
        assert v.id == f"mixed_{v.rpcs}_{v.config}"
        knobs = v.fixed(SHORT)
        rpc = {k: knobs.pop(k) for k in list(knobs) if k.startswith("workload.bulk.rpc.")}
        assert rpc == {"workload.bulk.rpc.connections": v.rpcs, "workload.bulk.rpc.request": "4000B",
                       "workload.bulk.rpc.response": "4000B"}
        assert knobs == CONFIG[v.config].fixed(SHORT)
        report = loaded[v.run(SHORT).key]
        assert isinstance(report, RunReport)
        s = report.summary
        assert s.verified and s.lost == 0, v.id
        # The flow and each connection's requests, a to b; each connection's responses, b to a.
        assert sum(f["from"] == "a" for f in report.raw["flows"]) == 1 + v.rpcs, v.id
        assert sum(f["from"] == "b" and f["bytes"] >= 4000 for f in report.raw["flows"]) == v.rpcs, v.id
        # The study's throughput: the flow's and the connections' (one direction) together.
        m = measure_mixed(report, 4000)
        rate = s.raw["transaction_rate"]
        assert rate > 0, v.id
        assert m.throughput_gbps == pytest.approx((s.goodput_bps + rate * 4000 * 8) / 1e9, rel=1e-9), v.id
        b = report.host("b").timed
        busy = [c for c in b.raw["cores"] if c["busy_s"] > 0]
        assert len(busy) <= (1 if KNOBS[v.config][3] else 2), v.id


def test_the_outcast_runs_give_each_flow_a_receiver_of_its_own() -> None:
    s = tomllib.loads(OUTCAST_SCENARIO.read_text(encoding="utf-8"))
    receivers = [f"b{i}" for i in range(8)]
    assert [h["name"] for h in s["hosts"]] == ["a", *receivers]
    assert all(h["profile"] == "cai-xeon-6128" and h["tcp"]["nagle"] == "minshall" for h in s["hosts"])
    # The receivers are cores of one machine (one PCIe link, one L3's DDIO ways); the sender is one core.
    assert [h.get("machine") for h in s["hosts"]] == [None] + ["receiver"] * 8
    assert [sorted(link["endpoints"]) for link in s["links"]] == [sorted([n, "sw"]) for n in ["a", *receivers]]
    assert all(link["rate"] == "100Gbps" for link in s["links"])
    # The sender reaches every receiver at once (smoltcp would ask for the second's address a second later).
    assert s["run"]["arp"] == "warm"
    assert [(v.config, v.flows) for v in OUTCAST] == [(c, n) for c in OUTCAST_CONFIGS for n in OUTCAST_FLOWS]
    for v in OUTCAST:
        assert v.id == f"outcast_{v.flows}_{v.config}"
        mtu, tso = KNOBS[v.config][:2]
        tx, rx = socket_buffers(mtu, tso)
        knobs = v.fixed(SHORT)
        flows = knobs.pop("workload.transfers")
        assert flows == [{"from": "a", "to": f"b{n}", "port": 5001 + n, "duration": SHORT, "omit": WARMUP,
                          "write_size": "128KiB"} for n in range(v.flows)], v.id
        # The receivers stand for cores of one machine, which shares its DDIO ways among them itself.
        assert not [k for k in knobs if k.endswith(".memory.ddio")], v.id
        assert knobs == every_host(9, v.config, buffers=(tx, rx)), v.id


def test_outcast_flows_are_intact_and_divided_by_the_senders_cores(short: Path) -> None:
    loaded = build(SHORT).load(short)
    for v in OUTCAST:
        report = loaded[v.run(SHORT).key]
        assert isinstance(report, RunReport)
        s = report.summary
        assert s.verified and s.lost == 0, v.id
        # One flow to each receiver, each started at once (no second of ARP silence) and carrying data.
        flows = report.raw["bulk_flows"]
        assert [(f["from"], f["to"]) for f in flows] == [("a", f"b{n}") for n in range(v.flows)], v.id
        # Measured from the same moment: the warm-up's end (no flow waits a second for ARP).
        starts = [f["start_s"] for f in flows]
        assert all(f["bytes"] > 0 for f in flows) and max(starts) - min(starts) < 1e-3, v.id
        # All flows leave through a's one 100 Gb/s link: MSS (MTU less 52 B of headers with time stamps)
        # per MTU + 38 B of wire. What the receivers read in the measured interval is at most that, plus
        # what already waited in their receive buffers when it began.
        mtu, tso = KNOBS[v.config][:2]
        buffered = v.flows * socket_buffers(mtu, tso)[1] * 8 / s.duration_s
        assert 0 < s.goodput_bps <= 100e9 * (mtu - 52) / (mtu + 38) + buffered, v.id
        m = measure_outcast(report, v.receivers)
        # Throughput per core is over the sender's CPU; the receivers' CPU is every receiver's.
        a = report.host("a").timed
        sender_pct = 100 * sum(c["utilization"] for c in a.raw["cores"])
        assert m.per_core_gbps == pytest.approx(s.goodput_bps / 1e9 / (sender_pct / 100), rel=1e-9), v.id
        receivers = [report.host(f"b{n}").timed for n in range(v.flows)]
        assert m.receiver.cpu_pct == pytest.approx(
            100 * sum(c["utilization"] for t in receivers for c in t.raw["cores"]), rel=1e-9), v.id
        assert all(sum(c["utilization"] for c in t.raw["cores"]) > 0 for t in receivers), v.id
        # The summed breakdown still covers the study's 95 % (no user-space work in nicsim's iperf).
        assert sum(m.receiver.breakdown_pct.values()) == pytest.approx(95.0, abs=0.5), v.id


def test_the_numa_runs_are_the_other_experiments_and_the_rpcs_with_a_remote_receiver(short: Path) -> None:
    runs = {v.id: v.run(SHORT) for v in NUMA}
    assert list(runs) == ["numa_long_local", "numa_long_remote", "numa_short_local", "numa_short_remote"]
    # numa.sh: the long flow on CPU 0, then with --cpus 1 on both hosts (the DDIO experiment's all_opts);
    # 16 short connections (the RPC experiment at run_experiment_sender.py's default 4000 B), then
    # with the receiver's netserver alone on CPU 1.
    assert runs["numa_long_local"] == CONFIG["all_opts"].run(SHORT)
    assert runs["numa_long_remote"] == NoDdio("all_opts").run(SHORT)
    assert runs["numa_short_local"] == Rpc("all_opts", 4000).run(SHORT)
    remote = dict(runs["numa_short_remote"].fixed)
    assert remote.pop("hosts[0].memory.ddio") == "0B"
    assert remote == Rpc("all_opts", 4000).fixed(SHORT)
    loaded = build(SHORT).load(short)
    local_r, remote_r = loaded[runs["numa_short_local"].key], loaded[runs["numa_short_remote"].key]
    assert isinstance(local_r, RunReport) and isinstance(remote_r, RunReport)
    assert remote_r.summary.verified and remote_r.summary.lost == 0
    # Only the receiver lost DDIO; no byte it reads is cheaper to copy for that.
    assert not remote_r.host("b").timed.raw.get("rx_copy") and local_r.host("b").timed.raw.get("rx_copy")
    assert remote_r.host("a0").timed.raw.get("rx_copy")

    def copy_per_byte(r: RunReport) -> float:
        return r.host("b").timed.cycles["copy"] / r.summary.payload_bytes

    assert copy_per_byte(remote_r) >= copy_per_byte(local_r) * 0.99


def test_the_l3_miss_rate_is_the_share_of_the_received_bytes_copied_from_memory(
        short: Path, rows: list[comparison.Row]) -> None:
    by = {r.id: r.nicsim for r in rows if r.id.startswith("l3_miss_pct.")}
    assert by and all(0 <= x <= 100 for x in by.values()), by
    # numa.sh's remote runs: the receiver reads on a socket DDIO does not fill, so every line it
    # copies comes from memory (nicsim turns DDIO off on it).
    assert by["l3_miss_pct.numa_long_remote"] == 100.0
    assert by["l3_miss_pct.numa_short_remote"] == 100.0
    # The others, by hand from the receiver's rx_copy report: bytes from memory over bytes copied.
    loaded = build(SHORT).load(short)
    runs = {b.id: b.run(SHORT) for b in BUFFERS} | {v.id: v.run(SHORT) for v in INCAST if v.config == "all_opts"}
    runs |= {v.id: v.run(SHORT) for v in NUMA if v.place == "local"}
    assert len(runs) == 8 + 3 + 2
    for run_id, run in runs.items():
        report = loaded[run.key]
        assert isinstance(report, RunReport)
        rc = report.host("b").timed.raw["rx_copy"]
        assert rc["llc_bytes"] + rc["memory_bytes"] > 0, run_id
        assert by[f"l3_miss_pct.{run_id}"] == pytest.approx(
            100 * rc["memory_bytes"] / (rc["llc_bytes"] + rc["memory_bytes"]), rel=1e-5, abs=1e-9), run_id
    # A receive buffer within DDIO's share: every read finds its data in the L3.
    assert by["l3_miss_pct.buffer_100k"] == 0.0


def test_the_one_to_one_runs_give_each_flow_a_pair_of_hosts_on_one_shared_link() -> None:
    s = tomllib.loads(ONE_TO_ONE_SCENARIO.read_text(encoding="utf-8"))
    senders, receivers = [f"a{i}" for i in range(24)], [f"b{i}" for i in range(24)]
    assert [h["name"] for h in s["hosts"]] == senders + receivers
    assert all(h["profile"] == "cai-xeon-6128" and h["tcp"]["nagle"] == "minshall" for h in s["hosts"])
    # Each side's hosts are the cores of one machine.
    assert [h["machine"] for h in s["hosts"]] == ["sender"] * 24 + ["receiver"] * 24
    # One link between the senders' switch and the receivers' carries every flow, as the study's cable does.
    assert [sorted(link["endpoints"]) for link in s["links"]] == (
        [["sa", "sb"]] + [sorted([a, "sa"]) for a in senders] + [sorted([b, "sb"]) for b in receivers])
    assert all(link["rate"] == "100Gbps" for link in s["links"])
    assert [(v.config, v.flows) for v in ONE_TO_ONE] == [(c, n) for c in ONE_TO_ONE_CONFIGS for n in ONE_TO_ONE_FLOWS]
    for v in ONE_TO_ONE:
        assert v.id == f"one_to_one_{v.flows}_{v.config}"
        mtu, tso = KNOBS[v.config][:2]
        knobs = v.fixed(SHORT)
        assert knobs.pop("workload.transfers") == [
            {"from": f"a{n}", "to": f"b{n}", "port": 5001 + n, "duration": SHORT, "omit": WARMUP,
             "write_size": "128KiB"} for n in range(v.flows)], v.id
        assert not [k for k in knobs if k.endswith(".memory.ddio")], v.id
        assert knobs == every_host(48, v.config, buffers=socket_buffers(mtu, tso), links=49), v.id


def test_one_to_one_flows_are_intact_share_the_link_and_divide_by_the_receivers_cores(short: Path) -> None:
    loaded = build(SHORT).load(short)
    for v in ONE_TO_ONE:
        report = loaded[v.run(SHORT).key]
        assert isinstance(report, RunReport)
        s = report.summary
        assert s.verified and s.lost == 0, v.id
        flows = report.raw["bulk_flows"]
        assert [(f["from"], f["to"]) for f in flows] == [(f"a{n}", f"b{n}") for n in range(v.flows)], v.id
        assert all(f["bytes"] > 0 for f in flows), v.id
        # Every byte crossed the one shared link: what the receivers read in the measured interval is at most
        # its ceiling plus what already waited in their receive buffers.
        mtu, tso = KNOBS[v.config][:2]
        buffered = v.flows * socket_buffers(mtu, tso)[1] * 8 / s.duration_s
        assert 0 < s.goodput_bps <= 100e9 * (mtu - 52) / (mtu + 38) + buffered, v.id
        m = measure_one_to_one(report, v.senders, v.receivers)
        cpu = 100 * sum(c["utilization"] for b in v.receivers for c in report.host(b).timed.raw["cores"])
        assert m.receiver.cpu_pct == pytest.approx(cpu, rel=1e-9), v.id
        assert m.per_core_gbps == pytest.approx(s.goodput_bps / 1e9 / (cpu / 100), rel=1e-9), v.id
        # The idle pairs did nothing.
        idle = [f"b{n}" for n in range(v.flows, 24)]
        assert all(sum(c["busy_s"] for c in report.host(b).timed.raw["cores"]) < 1e-4 for b in idle), v.id
        # Each side's hosts report their machine's one PCIe link, which moved every receiver's frames:
        # more bytes than the measured payload.
        for side, hosts in (("sender", v.senders), ("receiver", v.receivers)):
            timed = [report.host(h).timed.raw for h in (*hosts, *idle[:1])] if side == "receiver" else [
                report.host(h).timed.raw for h in hosts]
            assert {t["machine"] for t in timed} == {side}, v.id
            assert len({(t["bus"]["bytes"], t["bus"]["wait_ps"]) for t in timed}) == 1, v.id
        payload = sum(f["bytes"] for f in flows)
        assert report.host("b0").timed.raw["bus"]["bytes"] > payload, v.id


def test_all_to_all_sends_a_flow_from_every_sender_to_every_receiver(short: Path) -> None:
    # all-to-all.sh: 8, 16 and 24 cores a side, the flow from sender i to receiver j on the artifact's
    # BASE_PORT + i * MAX_CONNECTIONS (24) + j.
    assert [(v.config, v.cores) for v in ALL_TO_ALL] == [(c, n) for c in ONE_TO_ONE_SPEC for n in (8, 16, 24)]
    loaded = build(SHORT).load(short)
    for v in ALL_TO_ALL:
        n = v.cores
        assert v.id == f"all_to_all_{n}_{v.config}"
        knobs = v.fixed(SHORT)
        pairs = [(f"a{i}", f"b{j}", 5001 + 24 * i + j) for i in range(n) for j in range(n)]
        assert [(f["from"], f["to"], f["port"]) for f in knobs["workload.transfers"]] == pairs, v.id
        assert all(f["duration"] == SHORT and f["omit"] == WARMUP for f in knobs["workload.transfers"]), v.id
        assert not [k for k in knobs if k.endswith(".memory.ddio")], v.id
        # Every host has the buffers autotuning gives a flow with its share of the link.
        tx, rx = link_share_buffers(*KNOBS[v.config][:2], n * n)
        assert {k: x for k, x in knobs.items() if ".tcp." in k} == {
            f"hosts[{h}].tcp.{b}": f"{size}B" for h in range(48) for b, size in (("tx_buffer", tx), ("rx_buffer", rx))
        }, v.id
        report = loaded[v.run(SHORT).key]
        assert isinstance(report, RunReport)
        s = report.summary
        assert s.verified and s.lost == 0, v.id
        assert [(f["from"], f["to"]) for f in report.raw["bulk_flows"]] == [(a, b) for a, b, _ in pairs], v.id
        assert all(f["bytes"] > 0 for f in report.raw["bulk_flows"]), v.id
        # The flows share the one link: together they carry at most its ceiling, plus what already waited
        # in the receive buffers when the measured interval began.
        mtu, tso = KNOBS[v.config][:2]
        buffered = n * n * rx * 8 / s.duration_s
        assert 0 < s.goodput_bps <= 100e9 * (mtu - 52) / (mtu + 38) + buffered, v.id
        m = measure_one_to_one(report, v.senders, v.receivers)
        cpu = 100 * sum(c["utilization"] for b in v.receivers for c in report.host(b).timed.raw["cores"])
        assert m.per_core_gbps == pytest.approx(s.goodput_bps / 1e9 / (cpu / 100), rel=1e-9), v.id


def test_autotuning_gives_many_slow_flows_smaller_buffers_than_its_caps() -> None:
    # Worked by hand (tcp_rcv_space_adjust's first adjustment). 576 flows share 100 Gb/s at MTU 1500, whose
    # TCP payload rate is 100e9 x 1448 / 1538: 20 431 bytes each in the first millisecond, more than the
    # first space of 10 x 1460. rcvwin = 2 x 20 431 + 16 x 1460 = 64 222, plus twice 64 222 x 5 831 // 14 600
    # = 25 649: 115 520 bytes, 79 segments of 2 996 bytes (1460 + 320 + 576 = 2 356, raised by 128 until
    # half of it holds 1460).
    assert 100e9 * 1448 / 1538 / 8 / 576 * 1e-3 == pytest.approx(20431.5, abs=0.1)
    assert autotuned_rcvbuf(1500, 20431.5) == 79 * 2996
    # The send buffer: twice a window of twice the 82 segments in the receive window (118 342 bytes), of
    # 4 096 + 256 bytes each (1460 + 320 + 320 rounded up to a power of two, and struct sk_buff).
    assert autotuned_sndbuf(1500, 79 * 2996) == 2 * 164 * 4352
    # At MTU 9000 (payload rate 100e9 x 8948 / 9038: 21 485 bytes each) the first space is two segments
    # (Linux caps the first window at 14 600 bytes' worth, at least 2): 17 920. rcvwin = 2 x 21 485 +
    # 16 x 8 960 = 186 330, plus twice 186 330 x 3 565 // 17 920 = 37 068: 260 466 bytes, 29 segments of
    # 17 920 bytes (8960 + 896 = 9 856, raised by 128 until half of it holds 8 960).
    assert 100e9 * 8948 / 9038 / 8 / 576 * 1e-3 == pytest.approx(21485.3, abs=0.1)
    assert autotuned_rcvbuf(9000, 21485.3) == 29 * 17920
    # A reader that copies no more than the first space leaves the first buffer; a fast one reaches the cap.
    assert autotuned_rcvbuf(1500, 14600) == 131072
    assert autotuned_rcvbuf(1500, 1e6) == TCP_RMEM_MAX
    # One flow, or 64 (all-to-all with 8 cores a side), get the caps every other run has; 256 and 576 less.
    for mtu, tso in ((1500, False), (9000, True)):
        caps = socket_buffers(mtu, tso)
        assert link_share_buffers(mtu, tso, 1) == caps == link_share_buffers(mtu, tso, 64)
        assert link_share_buffers(mtu, tso, 256)[1] < caps[1] / 2
        assert link_share_buffers(mtu, tso, 576)[1] < link_share_buffers(mtu, tso, 256)[1] / 2
        assert link_share_buffers(mtu, tso, 576)[0] < caps[0]


def test_socket_buffers_are_linuxs_autotuning_caps_as_payload() -> None:
    # Worked by hand from the kernel's sizes (experiments.py). Without GSO an unsent sk_buff holds one
    # MSS and costs 1 280 bytes of its own: 4 MiB x 1448 / 2728. A linear MTU 1500 frame is charged its
    # 2 KiB stride: 6 MiB x 1448 / 2048.
    assert socket_buffers(1500, False) == (4 * 2**20 * 1448 // 2728, 6 * 2**20 * 1448 // 2048)
    # With TSO at MTU 9000 an sk_buff holds 7 MSS (62 636 of at most 65 215 bytes); a jumbo frame is
    # charged its 640-byte head and 137 strides of 64 bytes (8 758 bytes after the 256 in its head).
    assert socket_buffers(9000, True) == (4 * 2**20 * 62636 // (62636 + 1280), 6 * 2**20 * 8948 // (640 + 137 * 64))
    for mtu in (1500, 9000):
        for tso in (False, True):
            tx, rx = socket_buffers(mtu, tso)
            # Overhead only ever takes room: the payload is below each cap, by less than half.
            assert TCP_WMEM_MAX / 2 < tx < TCP_WMEM_MAX and TCP_RMEM_MAX / 2 < rx < TCP_RMEM_MAX
        # Bigger sk_buffs waste less of the send buffer; the receive side does not see TSO.
        assert socket_buffers(mtu, True)[0] > socket_buffers(mtu, False)[0]
        assert socket_buffers(mtu, True)[1] == socket_buffers(mtu, False)[1]


def test_the_scenario_is_the_studys_set_up() -> None:
    s = tomllib.loads(SCENARIO.read_text(encoding="utf-8"))
    assert [h["name"] for h in s["hosts"]] == ["a", "b"]
    for h in s["hosts"]:
        assert h["profile"] == "cai-xeon-6128"
        # A writer blocks until a third of its buffer is free (Linux); the buffers are set per
        # configuration, and the file's are no_opts'. Linux's Nagle rule (tcp_nagle_check).
        tx, rx = socket_buffers(1500, False)
        tcp = {"rx_buffer": f"{rx}B", "tx_buffer": f"{tx}B", "write_wakeup": "third", "nagle": "minshall"}
        assert h["tcp"] == tcp
    (link,) = s["links"]
    assert (link["rate"], link["propagation"], link["endpoints"]) == ("100Gbps", "500ns", ["a", "b"])
    assert (s["workload"]["bulk"]["from"], s["workload"]["bulk"]["to"]) == ("a", "b")
    assert s["workload"]["bulk"]["write_size"] == "128KiB", "iperf's default read and write size"


def test_claims_are_rows_with_computed_0_or_1_verdicts(rows: list[comparison.Row], short: Path) -> None:
    claims = [r for r in rows if r.role == "claim"]
    assert {r.id for r in claims} == CLAIMS and len(claims) == len(CLAIMS)
    text = (short / "report" / "report.md").read_text(encoding="utf-8")
    for r in claims:
        assert r.nicsim in (0.0, 1.0) and r.unit == "bool"
        assert f"`{r.id}`" in text
    held = sum(r.nicsim == 1 for r in claims)
    assert f"{held} of {len(CLAIMS)} claims hold" in text


def test_report_sections_tables_and_figures(short: Path, rows: list[comparison.Row]) -> None:
    out = short / "report"
    text = (out / "report.md").read_text(encoding="utf-8")
    for s in build(SHORT).sections:
        assert f"## {s.title}" in text
    for name in ("throughput", "cpu", "breakdown"):
        assert f"({name}.png)" in text
        assert (out / f"{name}.png").read_bytes().startswith(b"\x89PNG")
        assert (out / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    # The calibration section names every row that misses 10 %, and only those.
    cal = [r for r in rows if r.role == "calibration"]
    missing = [r.id for r in cal if r.error_pct is None or abs(r.error_pct) > 10]
    section = text.split("## Calibration")[1].split("\n## ")[0]
    if missing:
        assert f"{len(missing)} of {len(cal)} calibration rows miss 10 %" in section
        listed = section.split("calibration rows miss 10 %:**")[1].split("\n")[0]
        assert sorted(re.findall(r"`([^`]+)`", listed)) == sorted(missing)
    else:
        assert f"All {len(cal)} calibration rows are within 10 %" in section
    with (out / "throughput.csv").open(encoding="utf-8") as f:
        assert [r["config"] for r in csv.DictReader(f)] == CONFIGS
    assert "(no_ddio.png)" in text and (out / "no_ddio.png").read_bytes().startswith(b"\x89PNG")
    with (out / "no_ddio.csv").open(encoding="utf-8") as f:
        assert [r["config"] for r in csv.DictReader(f)] == CONFIGS
    assert "(incast.png)" in text and (out / "incast.png").read_bytes().startswith(b"\x89PNG")
    with (out / "incast.csv").open(encoding="utf-8") as f:
        assert [(r["config"], int(r["flows"])) for r in csv.DictReader(f)] == [
            (c, n) for c in INCAST_CONFIGS for n in INCAST_FLOWS]
    assert "(rpc.png)" in text and (out / "rpc.png").read_bytes().startswith(b"\x89PNG")
    with (out / "rpc.csv").open(encoding="utf-8") as f:
        assert [(r["config"], int(r["size"])) for r in csv.DictReader(f)] == [
            (c, n) for c in RPC_CONFIGS for n in RPC_SIZES]
    assert "(mixed.png)" in text and (out / "mixed.png").read_bytes().startswith(b"\x89PNG")
    with (out / "mixed.csv").open(encoding="utf-8") as f:
        assert [(r["config"], int(r["rpcs"])) for r in csv.DictReader(f)] == [
            (c, n) for c in RPC_CONFIGS for n in MIXED_RPCS]


def test_the_short_study_is_deterministic(short: Path, tmp_path: Path) -> None:
    build(SHORT).reproduce(tmp_path / "report", tmp_path, progress=False)
    assert (tmp_path / "report" / "comparison.csv").read_bytes() == (short / "report" / "comparison.csv").read_bytes()


def test_bad_input_is_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="no CPU"):
        per_core(10.0, 0.0)
    with pytest.raises(ValueError, match="no CPU cycles"):
        breakdown({})
    with pytest.raises(ValueError, match="negative"):
        breakdown({"tcp": 10.0, "copy": -1.0})
    with pytest.raises(ValueError, match="8 values"):
        _breakdown(1.0, 2.0)
    assert per_core(30.0, 150.0) == pytest.approx(20.0)
    with pytest.raises(ValueError, match="more than the interrupt layer"):
        breakdown({"tcp": 10.0, "interrupt": 800.0}, 1, 600.0, 300.0)
    with pytest.raises(ValueError, match="negative interrupt count"):
        breakdown({"tcp": 10.0}, -1)


def test_the_breakdown_counts_as_the_studys_script_does() -> None:
    # Worked by hand. Kernel layers only: the eight shares cover 95 % of the cycles.
    assert breakdown({"tcp": 1.0, "copy": 3.0, "syscall": 4.0, "skb": 2.0}) == pytest.approx({
        "data_copy": 28.5, "etc": 0.0, "lock": 0.0, "mm": 0.0, "netdev": 0.0, "sched": 38.0, "skb": 19.0,
        "tcpip": 9.5})
    # Two interrupts of 600 + 1000 + 300 cycles: 1200 of entry (sched), 600 of exit (etc), 2000 of
    # handler (netdev); the socket layer is tcp/ip. 4000 kernel cycles, 95 % coverage.
    assert breakdown({"interrupt": 3800.0, "socket": 200.0}, 2, 600.0, 300.0) == pytest.approx({
        "data_copy": 0.0, "etc": 14.25, "lock": 0.0, "mm": 0.0, "netdev": 47.5, "sched": 28.5, "skb": 0.0,
        "tcpip": 4.75})
    # User space counts in the samples but in no category: with 10 % of the cycles in user space
    # the kernel's 90 % are all summed (the script never reaches 95 %).
    assert breakdown({"app": 100.0, "tcp": 900.0}) == pytest.approx({
        "data_copy": 0.0, "etc": 0.0, "lock": 0.0, "mm": 0.0, "netdev": 0.0, "sched": 0.0, "skb": 0.0,
        "tcpip": 90.0})
    # With 2 % in user space the script stops at 95 %.
    assert breakdown({"app": 20.0, "tcp": 980.0})["tcpip"] == pytest.approx(95.0)


def test_the_ddio_ways_check_reruns_the_runs_with_an_l3_miss_row_with_ways_on_both_hosts() -> None:
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "cai_ddio_ways.py"
    spec = importlib.util.spec_from_file_location("cai_ddio_ways", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    runs = script.runs(2)
    # The buffer runs, incast with all optimisations (8, 16, 24 flows) and the long flow (all_opts).
    expected = [f"buffer_{k}k" for k in BUFFER_KIB] + [f"incast_{n}_all_opts" for n in INCAST_FLOWS] + ["all_opts"]
    assert [r.key for r in runs] == [f"{k}-ways2" for k in expected]
    originals = [b.run() for b in BUFFERS] + [v.run() for v in INCAST if v.config == "all_opts"]
    originals.append(CONFIG["all_opts"].run())
    for r, o in zip(runs, originals):
        fixed = dict(r.fixed)
        assert fixed.pop("hosts[0].memory.ddio_ways") == 2 and fixed.pop("hosts[1].memory.ddio_ways") == 2
        assert fixed == dict(o.fixed) and r.scenario == o.scenario, r.key
