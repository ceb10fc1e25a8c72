"""The Kurmann study: speculative defragmentation and zero-copy TCP/IP over
Gigabit Ethernet, and Dolly's throughput (Table 4).

Kurmann, Rauch, Stricker (ETH Zürich). 400 MHz Pentium II nodes (440BX,
SDRAM at 100 MHz, PCI 32 bit / 33 MHz), PacketEngines GNIC-II NICs, Linux
2.2, a store-and-forward GbE switch, MTU 1500 (the ``kurmann-pii-400``
profile).

The report is a list of :class:`Section` s. Each declares the simulated
:class:`Run` s it needs (a scenario file next to this module plus fixed knob
settings, each run as a one-point sweep through the study's
:class:`~nicsim.campaign.reproduction.Reproduction`, so results are cached)
and a function that turns those runs' reports into Markdown, CSV and
figures. Adding an experiment is adding a section (or, for another row of
Table 4, one entry in :data:`DOLLY_RUNS`); a section whose runs are not
declared is not written, so the report never shows a number it did not
compute. Sections now:

* calibration: the standard stack's bulk throughput
  (``standard.toml`` = ``scenarios/kurmann-standard.toml``) against the
  study's ~42 MB/s; memcpy (92 MB/s) and PCI (126 MB/s) as the profile's
  inputs and the rates the simulator shows for them;
* Table 4: Dolly over Fast Ethernet, Gigabit Ethernet and zero-copy Gigabit
  Ethernet from the analytical resource model (:mod:`.dolly`) and, where a
  run is declared, from simulation (``dolly-fe.toml``, ``dolly-gbe.toml``);
* receiver CPU load: every node's CPU in the simulated chains and the
  standard transfer, beside the model's.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicsim.campaign.cache import Cache
from nicsim.campaign.executors import Executor
from nicsim.campaign.reproduction import Reproduction
from nicsim.campaign.sweep import Sweep
from nicsim.studies import run_and_report, write_csv

from . import dolly
from .dolly import VARIANTS, ChainBounds, Machine

HERE = Path(__file__).parent

PUBLISHED_STANDARD_MBS = 42.0
"""The study: the standard Linux 2.2 TCP stack reaches about 42 MB/s."""
PUBLISHED_MEMCPY_MBS = 92.0
"""The study: memory-to-memory copy by the CPU."""
PUBLISHED_PCI_MBS = 126.0
"""The study: PCI 32/33 measured for large bursts (132 MB/s in theory)."""

MB = 1e6
"""The study's MB/s: 10^6 bytes per second."""

Report = Mapping[str, Any]
"""A run's report (``Result.data``)."""


@dataclass(frozen=True)
class Run:
    """One simulated point: a scenario next to this module and knob settings."""

    key: str
    scenario: str
    description: str
    fixed: Mapping[str, Any] = field(default_factory=dict)

    def sweep(self) -> Sweep:
        """The run as a one-point sweep named ``kurmann-<key>``."""
        return Sweep(HERE / self.scenario, fixed=dict(self.fixed), name=f"kurmann-{self.key}",
                     description=self.description)


STANDARD = Run("standard", "standard.toml", "32 MiB bulk TCP, standard stack, GbE (calibration, ~42 MB/s)")

DOLLY_RUNS: dict[str, Run] = {
    "fe": Run("dolly-fe", "dolly-fe.toml", "Dolly chain of four nodes over Fast Ethernet (Table 4)"),
    "gbe": Run("dolly-gbe", "dolly-gbe.toml", "Dolly chain of four nodes over GbE, standard stack (Table 4)"),
    "gbe-zc": Run(
        "dolly-gbe-zc",
        "dolly-gbe.toml",
        "Dolly chain of four nodes over GbE, zero-copy stack: fragmentation, speculation, fbufs (Table 4)",
        {f"hosts[{i}].zero_copy": {"fragment": True, "speculate": True, "os": "fbufs"} for i in range(4)},
    ),
}
"""Simulated rows of Table 4 by variant key (``dolly.VARIANTS``); the
zero-copy row is ``dolly-gbe.toml`` with every host's zero-copy knobs on."""


@dataclass
class Context:
    """Where a section writes and what it shares with the others."""

    out_dir: Path
    machine: Machine
    written: list[Path] = field(default_factory=list)

    def csv(self, name: str, rows: list[dict[str, Any]]) -> Path:
        path = write_csv(self.out_dir / name, rows)
        self.written.append(path)
        return path

    def figure(self, fig: Any, name: str) -> str:
        """Save ``fig`` as ``name.png``; returns the file name for Markdown."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        path = self.out_dir / f"{name}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        self.written.append(path)
        return path.name


@dataclass(frozen=True)
class Section:
    """A part of the report: the runs it needs and how it is written."""

    title: str
    runs: Callable[[], Sequence[Run]]
    write: Callable[[Mapping[str, Report], Context], list[str]]
    """(reports by run key, context) -> Markdown lines (below the title)."""


# --- reading runs -------------------------------------------------------------


def _report(cache: Cache, run: Run) -> Report:
    """The report of ``run``'s one point."""
    name = run.sweep().name
    frame = cache.to_pandas(name)
    rows = frame.to_dict("records")
    if len(rows) != 1 or rows[0]["status"] != "ok":
        raise RuntimeError(f"{name} did not run: {rows[0].get('error') if rows else 'no point'}")
    record = cache.get(rows[0]["key"])
    assert record is not None
    report: Report = record["report"]
    return report


def image_rate(report: Report) -> float:
    """A Dolly run's rate, B/s: the image's bytes over the time until the
    last node has stored it (the run's goodput)."""
    return float(report["summary"]["goodput_bps"]) / 8


def cpu(report: Report, host: str) -> float:
    """A timed host's CPU utilisation over the run."""
    for h in report["hosts"]:
        if h["name"] == host:
            return float(h["timing"]["cpu_utilization"])
    raise KeyError(host)


def _node_roles(report: Report) -> list[tuple[str, str]]:
    """(host, role) along a Dolly chain."""
    nodes = list(report["workload"]["nodes"])
    return [(n, "source" if i == 0 else "sink" if i == len(nodes) - 1 else "relay") for i, n in enumerate(nodes)]


def _mbs(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x / MB:.1f}"


# --- calibration ----------------------------------------------------------------


def _calibration(reports: Mapping[str, Report], ctx: Context) -> list[str]:
    r = reports[STANDARD.key]
    m = ctx.machine
    rate = float(r["summary"]["goodput_bps"]) / 8
    recv = next(h for h in r["hosts"] if h["name"] == r["flows"][0]["to"])
    send = next(h for h in r["hosts"] if h["name"] == r["flows"][0]["from"])
    delivered = float(r["summary"]["payload_bytes"])
    copy_cycles = float(recv["timing"]["cycles_receive"].get("copy", 0))
    copy_rate = m.clock_hz * delivered / copy_cycles if copy_cycles else math.nan
    bus = recv["timing"]["bus"]
    bus_busy_s = sum(float(x["busy_ps"]) for x in bus["resources"]) / 1e12
    bus_rate = float(bus["bytes"]) / bus_busy_s
    plain = dolly.chain(m, dolly.GIGABIT, math.inf, nodes=2, disk_path=False)
    sink = plain.nodes["sink"]
    rows = [
        {"quantity": "standard stack bulk throughput", "study_mbs": PUBLISHED_STANDARD_MBS,
         "nicsim_sim_mbs": round(rate / MB, 2), "nicsim_model_mbs": round(plain.throughput / MB, 2),
         "how": "simulated 32 MiB GbE transfer / resource model of a plain transfer"},
        {"quantity": "memcpy", "study_mbs": PUBLISHED_MEMCPY_MBS,
         "nicsim_sim_mbs": round(copy_rate / MB, 2), "nicsim_model_mbs": round(m.memcpy / MB, 2),
         "how": "receiver's copy cycles for the bytes delivered / profile memory.copy_bandwidth"},
        {"quantity": "PCI large writes", "study_mbs": PUBLISHED_PCI_MBS,
         "nicsim_sim_mbs": round(bus_rate / MB, 2), "nicsim_model_mbs": round(m.pci_write / MB, 2),
         "how": "receiver's bus bytes / bus busy time (all transfers, descriptors too) / PCI burst model"},
    ]
    ctx.csv("calibration.csv", rows)
    lines = [
        "| quantity | study | nicsim simulated | nicsim model | how nicsim gets it |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append(f"| {row['quantity']} | {row['study_mbs']:.0f} MB/s | {row['nicsim_sim_mbs']:.1f} MB/s |"
                     f" {row['nicsim_model_mbs']:.1f} MB/s | {row['how']} |")
    gap = (rate / MB / PUBLISHED_STANDARD_MBS - 1) * 100
    link_util = max(float(x["utilization"]) for x in r["links"])
    busy = {
        "receiver's CPU": cpu(r, recv["name"]),
        "sender's CPU": cpu(r, send["name"]),
        "receiver's PCI bus": float(recv["timing"]["bus_utilization"]),
        "sender's PCI bus": float(send["timing"]["bus_utilization"]),
        "link": link_util,
    }
    busiest = max(busy, key=lambda k: busy[k])
    lines += [
        "",
        f"The standard stack reaches {rate / MB:.1f} MB/s in simulation ({gap:+.1f} % against the study's",
        f"{PUBLISHED_STANDARD_MBS:.0f} MB/s); the receiver's CPU is busy {cpu(r, recv['name']) * 100:.1f} % of the time, the",
        f"sender's {cpu(r, send['name']) * 100:.1f} %, the receiver's PCI bus {recv['timing']['bus_utilization'] * 100:.1f} %"
        f" and the link {link_util * 100:.1f} %: the {busiest} is the bottleneck.",
        f"The resource model (`dolly.py`) applied to a plain transfer (no disk) puts the receiver's CPU at",
        f"{sink.cpu_cycles_per_byte:.2f} cycles per byte ({sink.cpu_parts['copies']:.2f} in the receive copy at",
        f"{m.memcpy / MB:.0f} MB/s, {sink.cpu_parts['receive']:.2f} in per-segment stack work) and bounds it at",
        f"{plain.throughput / MB:.1f} MB/s ({plain.bottleneck}).",
        "",
        f"memcpy and PCI are inputs, not results: the profile's `memory.copy_bandwidth` is the study's",
        f"{PUBLISHED_MEMCPY_MBS:.0f} MB/s and the simulated receiver's copy runs at {copy_rate / MB:.1f} MB/s",
        f"(its copy cycles over the bytes it delivered, at {m.clock_hz / 1e6:.0f} MHz). nicsim's PCI burst model",
        f"(`bus/config.rs`, calibrated to the study's {PUBLISHED_PCI_MBS:.0f} MB/s) gives "
        f"{m.pci_write / MB:.1f} MB/s for large device writes and {m.pci_read / MB:.1f} MB/s for device reads",
        f"(read latency per burst); the receiver's bus moved {float(bus['bytes']) / MB:.1f} MB in",
        f"{bus_busy_s * 1e3:.0f} ms of busy time, {bus_rate / MB:.1f} MB/s including descriptors and short",
        f"transfers, busy {recv['timing']['bus_utilization'] * 100:.0f} % of the run.",
    ]
    return lines


# --- Table 4 ----------------------------------------------------------------------


def _dolly_runs() -> list[Run]:
    return list(DOLLY_RUNS.values())


def _chains(ctx: Context, nodes: int) -> dict[str, tuple[ChainBounds, ChainBounds]]:
    """(study's data flow, nicsim's node) bounds per variant."""
    return {
        v.key: (dolly.chain(ctx.machine, v, dolly.DISK_RATE, nodes),
                dolly.chain(ctx.machine, v, dolly.DISK_RATE, nodes, disk_path=False))
        for v in VARIANTS
    }


def _check_disk(report: Report) -> None:
    disk = report["workload"].get("disk_rate")
    bps = dolly.quantity(disk, "workload.dolly.disk_rate") if disk else math.nan
    if not math.isclose(bps, dolly.DISK_RATE, rel_tol=1e-6):
        raise RuntimeError(f"{report['scenario']['name']}: disk_rate {disk} differs from the model's "
                           f"{dolly.DISK_RATE / MB:.0f} MB/s")


def _table4(reports: Mapping[str, Report], ctx: Context) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nodes = 4
    sims = {k: reports[run.key] for k, run in DOLLY_RUNS.items() if run.key in reports}
    for r in sims.values():
        _check_disk(r)
        nodes = len(r["workload"]["nodes"])
    chains = _chains(ctx, nodes)
    rows: list[dict[str, Any]] = []
    bound_rows: list[dict[str, Any]] = []
    for v in VARIANTS:
        study, node = chains[v.key]
        sim = sims.get(v.key)
        row: dict[str, Any] = {
            "variant": v.key,
            "label": v.label,
            "model_mbs": round(study.throughput / MB, 2),
            "model_bottleneck": study.bottleneck,
            "model_node": study.limiting_role,
            "nicsim_node_model_mbs": round(node.throughput / MB, 2),
            "nicsim_node_model_bottleneck": node.bottleneck,
            "sim_mbs": "",
            "sim_relay_cpu": "",
            "sim_verified": "",
        }
        if sim is not None:
            relays = [h for h, role in _node_roles(sim) if role == "relay"]
            row["sim_mbs"] = round(image_rate(sim) / MB, 2)
            row["sim_relay_cpu"] = round(max((cpu(sim, h) for h in relays), default=math.nan), 4)
            row["sim_verified"] = bool(sim["summary"]["verified"])
        rows.append(row)
        for flow_name, c in (("study", study), ("nicsim-node", node)):
            for role, nb in c.nodes.items():
                bound_rows.append({
                    "variant": v.key, "flow": flow_name, "role": role,
                    **{f"{res}_mbs": round(nb.bounds[res] / MB, 2) for res in dolly.RESOURCES},
                    "bottleneck": nb.bottleneck,
                    "memory_crossings": nb.memory_crossings, "pci_crossings": nb.pci_crossings,
                    "cpu_cycles_per_byte": round(nb.cpu_cycles_per_byte, 3),
                    **{f"cpu_{k}": round(x, 3) for k, x in nb.cpu_parts.items()},
                })
    ctx.csv("table4.csv", rows)
    ctx.csv("table4-bounds.csv", bound_rows)

    # Figure: throughput per variant, and the relay's bounds per resource.
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    xs = range(len(VARIANTS))
    w = 0.27
    ax.bar([x - w for x in xs], [chains[v.key][0].throughput / MB for v in VARIANTS], w,
           label="model (study's data flow)", color="#4c72b0")
    ax.bar(list(xs), [chains[v.key][1].throughput / MB for v in VARIANTS], w,
           label="model (nicsim's node)", color="#8da0cb")
    sim_x = [x + w for x, v in zip(xs, VARIANTS) if v.key in sims]
    ax.bar(sim_x, [image_rate(sims[v.key]) / MB for v in VARIANTS if v.key in sims], w,
           label="simulated", color="#55a868")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([v.label.replace(" Gigabit", "\nGigabit") for v in VARIANTS], fontsize=8)
    ax.set_ylabel("Dolly throughput (MB/s)")
    ax.set_title("Table 4: Dolly over a four-node chain")
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    for i, res in enumerate(dolly.RESOURCES):
        vals = [min(_busiest(chains[v.key][0]).bounds[res], 1e9) / MB for v in VARIANTS]
        bx.bar([x + (i - 2) * 0.16 for x in xs], vals, 0.16, label=res)
    bx.set_yscale("log")
    bx.set_ylim(5, 1000)
    ticks = [5, 10, 20, 50, 100, 200, 500, 1000]
    bx.set_yticks(ticks)
    bx.set_yticklabels([str(t) for t in ticks])
    bx.minorticks_off()
    bx.set_xticks(list(xs))
    bx.set_xticklabels([v.label.replace(" Gigabit", "\nGigabit") for v in VARIANTS], fontsize=8)
    bx.set_ylabel("bound (MB/s)")
    bx.set_title("A relay's bound per resource (study's data flow)")
    bx.legend(fontsize=7, ncol=3)
    bx.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    png = ctx.figure(fig, "table4-dolly")

    lines = [
        f"A chain of {nodes} `kurmann-pii-400` nodes on one switch: the source sends the image, each relay",
        f"receives it, writes it to a {dolly.DISK_RATE / MB:.0f} MB/s disk (an estimate) and forwards it, the sink stores it.",
        "The model gives each node's bound per resource; the chain runs at its slowest node's.",
        "\"Study's data flow\" counts the disk path as Linux 2.2 does it (a copy into the buffer cache and",
        "a disk DMA over PCI; the source reads the image from disk); \"nicsim's node\" is what the",
        "simulator models, where the disk is only a rate, so that column checks the simulator.",
        "",
        "| variant | model (study's flow) | bottleneck | model (nicsim's node) | bottleneck | simulated | relay CPU (sim) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        sim_cell = f"{row['sim_mbs']:.1f} MB/s" if row["sim_mbs"] != "" else "not simulated yet"
        cpu_cell = f"{row['sim_relay_cpu'] * 100:.1f} %" if row["sim_relay_cpu"] != "" else "—"
        lines.append(
            f"| {row['label']} | {row['model_mbs']:.1f} MB/s | {row['model_node']} {row['model_bottleneck']} |"
            f" {row['nicsim_node_model_mbs']:.1f} MB/s | {row['nicsim_node_model_bottleneck']} | {sim_cell} | {cpu_cell} |"
        )
    lines += [
        "",
        f"![Table 4]({png})",
        "",
        "Per-resource bounds of a relay (MB/s; the study's data flow, then nicsim's node):",
        "",
        "| variant | flow | wire | memory | PCI | disk | CPU | memory crossings | PCI crossings | CPU cycles/B |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for v in VARIANTS:
        for flow_name, c in (("study", chains[v.key][0]), ("nicsim", chains[v.key][1])):
            nb = c.nodes.get("relay") or c.nodes["sink"]
            lines.append(
                f"| {v.label} | {flow_name} | " + " | ".join(_mbs(nb.bounds[res]) for res in dolly.RESOURCES)
                + f" | {nb.memory_crossings} | {nb.pci_crossings} | {nb.cpu_cycles_per_byte:.2f} |"
            )
    lines += ["", *_table4_findings(rows, chains, ctx.machine, nodes)]
    return lines


def _busiest(c: ChainBounds) -> dolly.NodeBounds:
    """The chain's relay (the sink in a two-node chain)."""
    return c.nodes.get("relay") or c.nodes["sink"]


def _table4_findings(
    rows: list[dict[str, Any]],
    chains: Mapping[str, tuple[ChainBounds, ChainBounds]],
    machine: Machine,
    nodes: int,
) -> list[str]:
    out = []
    for row in rows:
        if row["sim_mbs"] == "":
            out.append(f"- {row['label']}: not simulated (no run declared for it in `DOLLY_RUNS`); the model's"
                       " row stands alone.")
            continue
        node = chains[row["variant"]][1]
        ratio = row["sim_mbs"] / row["nicsim_node_model_mbs"]
        out.append(
            f"- {row['label']}: simulated {row['sim_mbs']:.1f} MB/s is {ratio * 100:.0f} % of the model's bound for"
            f" nicsim's node ({row['nicsim_node_model_mbs']:.1f} MB/s, {node.bottleneck}-bound at the {node.limiting_role});"
            f" the stream arrived intact at every node: {'yes' if row['sim_verified'] else 'NO'}."
        )
    fe = chains["fe"][0]
    out.append(
        f"- Fast Ethernet is {fe.bottleneck}-bound at {fe.throughput / MB:.2f} MB/s; a relay's port carries"
        f" {_busiest(fe).bounds['wire'] / MB:.2f} MB/s of payload (12.5 MB/s less Ethernet, IP and TCP headers"
        " and the other connection's ACKs)."
    )
    g, z = chains["gbe"][0], chains["gbe-zc"][0]
    gr, zr = _busiest(g), _busiest(z)
    copies = len(dolly.flow(gr.role, zero_copy=False).copies)
    out.append(
        f"- Gigabit Ethernet with the standard stack: the {g.limiting_role}'s {g.bottleneck} bounds the chain at"
        f" {g.throughput / MB:.1f} MB/s (the relay's CPU: {gr.cpu_cycles_per_byte:.1f} cycles per byte,"
        f" {gr.cpu_parts['copies']:.1f} of them in {copies} copies; the disk allows {gr.bounds['disk'] / MB:.0f} MB/s)."
        f" Zero copy removes the two network copies ({zr.cpu_cycles_per_byte:.1f} cycles per byte left) and the"
        f" bottleneck is the {z.limiting_role}'s {z.bottleneck} ({z.throughput / MB:.1f} MB/s)."
    )
    # How much the memory bound hangs on the one input the study does not give.
    m = _busiest(g)
    tight = dataclasses.replace(machine, memory=2 * machine.memcpy)
    g2 = dolly.chain(tight, dolly.GIGABIT, dolly.DISK_RATE, nodes)
    z2 = dolly.chain(tight, dolly.ZERO_COPY_GIGABIT, dolly.DISK_RATE, nodes)
    out.append(
        f"- The memory bound uses the profile's {machine.memory / MB:.0f} MB/s (PC100 peak): a standard relay's"
        f" {m.memory_crossings} crossings allow {m.bounds['memory'] / MB:.0f} MB/s"
        f" ({'the bottleneck' if m.bottleneck == 'memory' else 'not the bottleneck'}). Were the sustainable rate only the"
        f" traffic of the measured copy (2 x {machine.memcpy / MB:.0f} MB/s), the standard relay's memory bound would be"
        f" {_busiest(g2).bounds['memory'] / MB:.1f} MB/s (chain: {g2.throughput / MB:.1f} MB/s,"
        f" {g2.bottleneck}) and the zero-copy one at {_busiest(z2).bounds['memory'] / MB:.1f} MB/s"
        f" (chain: {z2.throughput / MB:.1f} MB/s, {z2.bottleneck})."
    )
    return out


# --- receiver CPU load -----------------------------------------------------------


def _cpu_runs() -> list[Run]:
    return [STANDARD, *DOLLY_RUNS.values()]


def _cpu_load(reports: Mapping[str, Report], ctx: Context) -> list[str]:
    m = ctx.machine
    rows = []
    for run in _cpu_runs():
        r = reports.get(run.key)
        if r is None:
            continue
        if run is STANDARD:
            variant, nodes, disk = dolly.GIGABIT, 2, math.inf
            roles = [(r["flows"][0]["from"], "source"), (r["flows"][0]["to"], "sink")]
        else:
            key = next(k for k, x in DOLLY_RUNS.items() if x is run)
            variant = next(v for v in VARIANTS if v.key == key)
            roles = _node_roles(r)
            nodes, disk = len(roles), dolly.DISK_RATE
        c = dolly.chain(m, variant, disk, nodes, disk_path=False)
        rate = float(r["summary"]["goodput_bps"]) / 8
        for host, role in roles:
            rows.append({
                "run": run.key, "host": host, "role": role,
                "sim_rate_mbs": round(rate / MB, 2),
                "sim_cpu": round(cpu(r, host), 4),
                "model_cpu_at_sim_rate": round(c.nodes[role].cpu_load(rate, m.clock_hz), 4),
            })
    ctx.csv("cpu-load.csv", rows)
    lines = [
        "Every node's CPU utilisation in each simulated run, and the resource model's (nicsim's node:",
        "its cycles per byte times the simulated rate, over the clock). The study reports the",
        "receiver's CPU load per variant, but nicsim's copy of the study does not quote its values.",
        "",
        "| run | host | role | rate (MB/s) | CPU (simulated) | CPU (model at that rate) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append(f"| {row['run']} | {row['host']} | {row['role']} | {row['sim_rate_mbs']:.1f} |"
                     f" {row['sim_cpu'] * 100:.1f} % | {row['model_cpu_at_sim_rate'] * 100:.1f} % |")
    lines += ["", "Where the model and the simulated relays differ, and why:", ""]
    for key, run in DOLLY_RUNS.items():
        r = reports.get(run.key)
        if r is None:
            continue
        relay = next((h for h, role in _node_roles(r) if role == "relay"), None)
        if relay is None:
            continue
        h = next(x for x in r["hosts"] if x["name"] == relay)
        t = h["timing"]
        cycles = sum(t["cycles"].values())
        calls = t["cycles"].get("socket", 0) + t["cycles"].get("syscall", 0)
        lines.append(
            f"- {run.key}: relay {relay} took {t['nic']['interrupts'] / max(1, t['nic']['rx_frames']):.2f} interrupts"
            f" per received frame (the model: 1, TX completions folded into receive interrupts) and spent"
            f" {calls / cycles * 100:.1f} % of its cycles in system calls and the socket layer (the model assumes"
            f" full {dolly.CHUNK // 1024} KiB reads and writes:"
            f" {m.cost('syscall', 'socket_recv', 'wakeup', 'syscall', 'socket_send') / dolly.CHUNK:.2f} cycles per byte)."
        )
    lines += [
        "",
        "On a slow link a relay finds only a few kilobytes waiting when it wakes, so it reads in small",
        "chunks and pays the call and wake-up costs per segment rather than per 64 KiB, and its TX",
        "completions no longer coincide with receive interrupts; the model, which prices full chunks",
        "and one interrupt per received frame, underestimates that CPU load. It is a load, not a bound:",
        "the Fast Ethernet chain stays wire-bound either way.",
    ]
    return lines

# --- zero-copy variants: Figures 5 and 6 ----------------------------------------


def _zc_run(key: str, description: str, fixed: Mapping[str, Any] | None = None, scenario: str | None = None) -> Run:
    """A run of ``zc/<scenario or key>.toml`` (copies of ``scenarios/kurmann/``)."""
    return Run(key, f"zc/{scenario or key}.toml", description, dict(fixed or {}))


FIGURE5 = {
    "standard": STANDARD,
    "spec-only": _zc_run("spec-only", "speculative defragmentation only (data still copied at the socket)"),
    "zc-os-only": _zc_run("zc-os-only", "zero-copy OS (fbufs) only: the defragmenting copy remains"),
    "both-remap": _zc_run("both-remap", "speculation + page remapping with copy-on-write"),
    "both-fbufs": _zc_run("both-fbufs", "speculation + fast buffers"),
}
"""Figure 5's bars: large-transfer throughput per variant (32 MiB bulk)."""

FIGURE6 = {
    "fallback-zc-to-std": _zc_run("fallback-zc-to-std", "zero-copy sender to a standard receiver"),
    "fallback-std-to-zc": _zc_run("fallback-std-to-zc", "standard sender to a zero-copy receiver"),
}
"""Figure 6's bars: the two fallback scenarios."""


def _zc(report: Report, host: int) -> Mapping[str, Any]:
    """A host's zero-copy counters (zeros for a standard host)."""
    return report["hosts"][host]["timing"].get("zero_copy") or {}


def _variant_row(key: str, r: Report) -> dict[str, Any]:
    rx = r["hosts"][1]["timing"]
    z = _zc(r, 1)
    rate = float(r["summary"]["goodput_bps"]) / 8
    return {
        "variant": key,
        "mbs": round(rate / MB, 2),
        "receiver_cpu": round(float(rx["cpu_utilization"]), 4),
        "receiver_cycles_per_byte": round(sum(rx["cycles"].values()) / r["summary"]["payload_bytes"], 2),
        "receiver_copy_cycles_per_byte": round(rx["cycles"].get("copy", 0) / r["summary"]["payload_bytes"], 2),
        "sender_bus_utilization": round(float(r["hosts"][0]["timing"]["bus_utilization"]), 4),
        "spec_hits": z.get("spec_hits", 0),
        "spec_misses": z.get("spec_misses", 0),
        "cleanup_bytes": z.get("cleanup_bytes", 0),
        "zero_copy_pages": z.get("zero_copy_pages", 0),
        "copy_fallbacks": z.get("copy_fallbacks", 0),
        "verified": bool(r["summary"]["verified"]),
    }


def _bars(ctx: Context, rows: list[dict[str, Any]], name: str, title: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    labels = [r["variant"] for r in rows]
    bars = ax.bar(labels, [r["mbs"] for r in rows], color="tab:blue")
    for b, r in zip(bars, rows):
        ax.annotate(f"receiver CPU {r['receiver_cpu'] * 100:.0f} %", (b.get_x() + b.get_width() / 2, b.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.axhline(PUBLISHED_STANDARD_MBS, color="grey", ls="--", lw=1, label="study: standard stack ~42 MB/s")
    ax.set_ylabel("throughput (MB/s)")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left")
    plt.setp(ax.get_xticklabels(), rotation=15, fontsize=8)
    fig.tight_layout()
    return ctx.figure(fig, name)


def _variant_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| variant | MB/s | receiver CPU | receiver cycles/B | of which copy | sender bus busy |"
        " speculation hits / misses | cleanup MB | zero-copy pages | copy fall-backs |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {r['mbs']:.1f} | {r['receiver_cpu'] * 100:.1f} % | {r['receiver_cycles_per_byte']:.2f} |"
            f" {r['receiver_copy_cycles_per_byte']:.2f} | {r['sender_bus_utilization'] * 100:.1f} % |"
            f" {r['spec_hits']} / {r['spec_misses']} | {r['cleanup_bytes'] / MB:.1f} | {r['zero_copy_pages']} |"
            f" {r['copy_fallbacks']} |"
        )
    return lines


def _figure5(reports: Mapping[str, Report], ctx: Context) -> list[str]:
    rows = [_variant_row(k, reports[run.key]) for k, run in FIGURE5.items()]
    ctx.csv("figure5.csv", rows)
    png = _bars(ctx, rows, "figure5", "Figure 5: 32 MiB bulk TCP, kurmann-pii-400, GbE")
    by = {r["variant"]: r for r in rows}
    best = max(rows, key=lambda r: r["mbs"])
    lines = [
        "Large-transfer throughput of every combination of speculative defragmentation and zero-copy",
        "OS support (32 MiB bulk TCP; the receiver's CPU load on each bar). Only the standard stack's",
        "number is calibrated; every other number is a prediction from the same profile plus the",
        "zero-copy costs in its `[zero_copy]` section, which are estimates (the study gives none).",
        "",
        f"![Figure 5]({png})",
        "",
        *_variant_table(rows),
        "",
        f"- Standard stack: {by['standard']['mbs']:.1f} MB/s (study ~{PUBLISHED_STANDARD_MBS:.0f} MB/s), receiver CPU-bound.",
        "- Speculation alone removes the defragmenting copy and the per-fragment IP work, but the",
        f"  socket copy stays: {by['spec-only']['mbs']:.1f} MB/s.",
        f"- Zero-copy OS alone keeps the defragmenting copy: {by['zc-os-only']['mbs']:.1f} MB/s.",
        f"- Both together remove every copy: {by['both-remap']['mbs']:.1f} MB/s with remapping,"
        f" {by['both-fbufs']['mbs']:.1f} MB/s with fbufs; the fastest ({best['variant']}) is"
        f" {best['mbs'] / by['standard']['mbs']:.2f}x the standard stack. There the sender's PCI bus is"
        f" {by['both-fbufs']['sender_bus_utilization'] * 100:.0f} % busy: the bus, not a CPU, bounds it.",
    ]
    return lines


def _figure6(reports: Mapping[str, Report], ctx: Context) -> list[str]:
    rows = [_variant_row("standard", reports[STANDARD.key])]
    rows += [_variant_row(k, reports[run.key]) for k, run in FIGURE6.items()]
    ctx.csv("figure6.csv", rows)
    png = _bars(ctx, rows, "figure6", "Figure 6: fallbacks (standard stack for reference)")
    by = {r["variant"]: r for r in rows}
    zs = reports[FIGURE6["fallback-zc-to-std"].key]
    fragments = _zc(zs, 0).get("tx_fragments", 0)
    lines = [
        f"![Figure 6]({png})",
        "",
        *_variant_table(rows),
        "",
        f"- Zero-copy sender to a standard receiver: {by['fallback-zc-to-std']['mbs']:.1f} MB/s, the standard"
        f" speed, as the study requires. In nicsim the sender made {fragments} fragments: the standard",
        "  receiver advertises a 1460-byte MSS, so the sender's TCP never builds page-sized segments and the",
        "  fragmented path is not exercised (the study's sender fragments anyway; this is a difference).",
        f"- Standard sender to a zero-copy receiver: {by['fallback-std-to-zc']['mbs']:.1f} MB/s; every burst"
        f" fails the speculation ({by['fallback-std-to-zc']['spec_misses']} misses) and"
        f" {by['fallback-std-to-zc']['cleanup_bytes'] / MB:.1f} MB go through the cleanup copy.",
    ]
    return lines


# --- Table 1: interference --------------------------------------------------------


INTERFERENCE = (0, 100, 10_000)
CAMS = ("off", "2way", "4way")
TABLE1 = {
    (n, cam): _zc_run(
        f"interference-{n}-cam-{cam}",
        f"100,000 zero-copy pages, {n} interfering frames, match CAM {cam}",
        {"hosts[1].zero_copy.cam": cam} if cam != "off" else {},
        scenario=f"interference-{n}",
    )
    for n in INTERFERENCE
    for cam in CAMS
}
"""Table 1's runs, with the proposed match CAM as extra columns."""


def _table1(reports: Mapping[str, Report], ctx: Context) -> list[str]:
    rows = []
    for (n, cam), run in TABLE1.items():
        r = reports[run.key]
        z = _zc(r, 1)
        rows.append({
            "interfering_frames": n, "cam": cam,
            "pages": _zc(r, 0).get("tx_fragmented", 0),
            "failed_zero_copy": z.get("spec_misses", 0),
            "cam_regular": z.get("cam_regular", 0),
            "mbs": round(float(r["summary"]["goodput_bps"]) / 8 / MB, 2),
            "verified": bool(r["summary"]["verified"]),
        })
    ctx.csv("table1.csv", rows)
    lines = [
        "A transfer of 100,000 zero-copy 4 KiB pages with N interfering frames (small UDP broadcasts",
        "injected at the receiver's NIC at random times over the transfer). Failed zero-copy packets are",
        "failed speculations (each costs a cleanup copy). The CAM columns are the study's proposed",
        "hardware (section 6): a match CAM sends frames that are not fast-path data to the regular",
        "descriptor list instead of breaking the speculation.",
        "",
        "| interfering frames | CAM | failed zero-copy packets | frames sent to the regular list | MB/s |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(f"| {r['interfering_frames']:,} | {r['cam']} | {r['failed_zero_copy']:,} | {r['cam_regular']:,} | {r['mbs']:.1f} |")
    lines += [
        "",
        "The study's numbers for this table are not in nicsim's copy of the study; these are predictions.",
    ]
    return lines


# --- Table 2: application traffic ----------------------------------------------------


TABLE2 = {
    (pattern, admission): _zc_run(
        f"table2-{pattern}{'-admission' if admission else ''}",
        f"Table 2: {pattern} traffic, admission control {'on' if admission else 'off'}",
    )
    for pattern in ("converge", "dsm")
    for admission in (False, True)
}
"""Table 2's runs: two result streams converging on a master, serialized DSM pages."""


def _table2(reports: Mapping[str, Report], ctx: Context) -> list[str]:
    rows = []
    for (pattern, admission), run in TABLE2.items():
        r = reports[run.key]
        potential = sum(_zc(r, h).get("tx_fragmented", 0) for h in range(len(r["hosts"])))
        for h, host in enumerate(r["hosts"]):
            z = _zc(r, h)
            rows.append({
                "pattern": pattern, "admission": admission, "host": host["name"],
                "frames": host["timing"]["nic"]["rx_frames"],
                "large_data": z.get("rx_large", 0), "small_control": z.get("rx_small", 0),
                "potential_zero_copy": z.get("spec_hits", 0) + z.get("spec_misses", 0),
                "successful_zero_copy": z.get("spec_hits", 0),
                "fast_nacks_sent": z.get("fast_nacks_sent", 0),
                "run_potential": potential,
                "mbs": round(float(r["summary"]["goodput_bps"]) / 8 / MB, 2),
            })
    ctx.csv("table2.csv", rows)
    lines = [
        "Per receiving host: frames received (total, large data, small control), zero-copy packets it",
        "could have taken (speculations attempted) and took (speculations that succeeded). Converging:",
        "two hosts send 8 MiB each to a master at the same time through a switch; DSM: serialized",
        "4 KiB page transfers between a home node and clients. 'Pages sent' counts the page trains",
        "every sender fragmented (the potential of the whole run).",
        "",
        "| pattern | admission | host | frames | large data | small control | potential zero-copy | successful | pages sent (run) | MB/s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['pattern']} | {'on' if r['admission'] else 'off'} | {r['host']} | {r['frames']:,} | {r['large_data']:,} |"
            f" {r['small_control']:,} | {r['potential_zero_copy']:,} | {r['successful_zero_copy']:,} |"
            f" {r['run_potential']:,} | {r['mbs']:.1f} |"
        )
    return lines



SECTIONS: list[Section] = [
    Section("Calibration", lambda: [STANDARD], _calibration),
    Section("Figure 5: zero-copy variants", lambda: list(FIGURE5.values()), _figure5),
    Section("Figure 6: fallbacks", lambda: [STANDARD, *FIGURE6.values()], _figure6),
    Section("Table 1: interference", lambda: list(TABLE1.values()), _table1),
    Section("Table 2: speculation on application traffic", lambda: list(TABLE2.values()), _table2),
    Section("Table 4: Dolly", _dolly_runs, _table4),
    Section("Receiver CPU load", _cpu_runs, _cpu_load),
]
"""The report's sections, in order."""


def runs() -> list[Run]:
    """Every run the sections need, each once."""
    seen: dict[str, Run] = {}
    for s in SECTIONS:
        for r in s.runs():
            seen.setdefault(r.key, r)
    return list(seen.values())


def study() -> Reproduction:
    """The study as a :class:`Reproduction`."""
    return Reproduction("kurmann", sweeps=[r.sweep() for r in runs()], description=__doc__ or "")


def reproduce(
    out: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
    executor: Executor | None = None,
    progress: bool | None = None,
) -> list[Path]:
    """Run what is missing and write the report; returns the files written."""

    def report(cache: Cache, out_dir: Path, wall: float) -> list[Path]:
        return write_report({r.key: _report(cache, r) for r in runs()}, out_dir, wall)

    return run_and_report(study(), report, out, results, executor, progress)


def write_report(reports: Mapping[str, Report], out_dir: Path, wall_s: float,
                 machine: Machine | None = None) -> list[Path]:
    """``report.md`` with every section, its CSVs and figures, from the runs' reports."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ctx = Context(out_dir, machine or Machine.from_profile())
    lines = [
        "# Kurmann et al.: zero-copy TCP/IP over Gigabit Ethernet and Dolly, reproduced by nicsim",
        "",
        "Hosts are the study's machine (`kurmann-pii-400`: 400 MHz Pentium II, 440BX, SDRAM at 100 MHz,",
        "PCI 32 bit / 33 MHz, GNIC-II, Linux 2.2 stack costs, MTU 1500). Numbers marked \"study\" are the",
        "study's; the per-layer stack costs are estimates documented in the profile, calibrated on one",
        "point, the standard stack's ~42 MB/s. MB/s is 10^6 bytes per second.",
        f"All runs took {wall_s:.1f} s of wall time (cached runs are not rerun).",
        "",
    ]
    for s in SECTIONS:
        if any(r.key not in reports for r in s.runs()):
            continue
        lines += [f"## {s.title}", "", *s.write(reports, ctx), ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    ctx.written.append(path)
    return ctx.written
