"""The Kurmann report's Dolly sections: Table 4 (a multi-drop chain over
Fast Ethernet, Gigabit Ethernet and zero-copy Gigabit Ethernet, from the
analytical resource model of :mod:`.dolly` and from simulation) and every
node's CPU load beside the model's."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from nicsim.studies.framework import Context, Run, RunReport

from . import dolly
from .dolly import VARIANTS, ChainBounds, Machine
from .experiments import DOLLY_RUNS, MB, STANDARD
from .report import machine

TABLE4_NETS = {"fe": "fe", "gbe": "gbe", "gbe-zc": "zc_gbe"}
"""Table 4's variants (``dolly.VARIANTS`` keys) by comparison id part."""


def image_rate(report: RunReport) -> float:
    """A Dolly run's rate, B/s: the image's bytes over the time until the
    last node has stored it (the run's goodput)."""
    return report.summary.goodput_bps / 8


def cpu(report: RunReport, host: str) -> float:
    """A timed host's CPU utilisation over the run."""
    return report.host(host).timed.cpu_utilization


def _node_roles(report: RunReport) -> list[tuple[str, str]]:
    """(host, role) along a Dolly chain."""
    nodes = list(report.workload["nodes"])
    return [(n, "source" if i == 0 else "sink" if i == len(nodes) - 1 else "relay") for i, n in enumerate(nodes)]


def _mbs(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x / MB:.1f}"


# --- Table 4 ----------------------------------------------------------------------


def _chains(nodes: int) -> dict[str, tuple[ChainBounds, ChainBounds]]:
    """(study's data flow, nicsim's node) bounds per variant."""
    return {
        v.key: (dolly.chain(machine(), v, dolly.DISK_RATE, nodes),
                dolly.chain(machine(), v, dolly.DISK_RATE, nodes, disk_path=False))
        for v in VARIANTS
    }


def _check_disk(report: RunReport) -> None:
    disk = report.workload.get("disk_rate")
    bps = dolly.quantity(disk, "workload.dolly.disk_rate") if disk else math.nan
    if not math.isclose(bps, dolly.DISK_RATE, rel_tol=1e-6):
        raise RuntimeError(f"{report.name}: disk_rate {disk} differs from the model's "
                           f"{dolly.DISK_RATE / MB:.0f} MB/s")


def table4(ctx: Context) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nodes = 4
    sims = {k: ctx.report(run) for k, run in DOLLY_RUNS.items() if ctx.has(run)}
    for r in sims.values():
        _check_disk(r)
        nodes = len(r.workload["nodes"])
    chains = _chains(nodes)
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
            row["sim_verified"] = sim.summary.verified
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
    for v in VARIANTS:
        net = TABLE4_NETS[v.key]
        ctx.compare(f"table4.modeled_mbs.{net}", f"Dolly chain, {v.label}: the study's data-flow model", "MB/s",
                    nicsim=chains[v.key][0].throughput / MB)
        if v.key in sims:
            ctx.compare(f"table4.simulated_mbs.{net}", f"Dolly chain, {v.label}: simulated", "MB/s",
                        nicsim=image_rate(sims[v.key]) / MB)
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
    lines += ["", *_table4_findings(rows, chains, machine(), nodes)]
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


def cpu_runs() -> list[Run]:
    return [STANDARD, *DOLLY_RUNS.values()]


def cpu_load(ctx: Context) -> list[str]:
    m = machine()
    rows = []
    for run in cpu_runs():
        if not ctx.has(run):
            continue
        r = ctx.report(run)
        if run is STANDARD:
            variant, nodes, disk = dolly.GIGABIT, 2, math.inf
            roles = [(r.flows[0].source, "source"), (r.flows[0].sink, "sink")]
        else:
            key = next(k for k, x in DOLLY_RUNS.items() if x is run)
            variant = next(v for v in VARIANTS if v.key == key)
            roles = _node_roles(r)
            nodes, disk = len(roles), dolly.DISK_RATE
        c = dolly.chain(m, variant, disk, nodes, disk_path=False)
        rate = r.summary.goodput_bps / 8
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
    for run in DOLLY_RUNS.values():
        if not ctx.has(run):
            continue
        r = ctx.report(run)
        relay = next((h for h, role in _node_roles(r) if role == "relay"), None)
        if relay is None:
            continue
        t = r.host(relay).timed
        cycles = t.total_cycles
        calls = t.cycles.get("socket", 0) + t.cycles.get("syscall", 0)
        lines.append(
            f"- {run.key}: relay {relay} took {t.nic['interrupts'] / max(1, t.nic['rx_frames']):.2f} interrupts"
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
