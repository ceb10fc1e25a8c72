"""The study's socket-buffer experiment: all optimisations, both socket
buffers fixed from 100 KiB to 12.5 MiB (:data:`.experiments.BUFFER_KIB`).

Every result of it is held out, so every number here is a prediction:
throughput, throughput per core, each side's CPU, and the time received
data waits between the NAPI poll that takes it and the read that copies it
(the study's "data copy latency", which its kernel measures from the
frame's GRO, in ``napi_gro_receive``, to the copy in ``tcp_recvmsg``).
and the receiver's L3 miss rate, which the study reads from perf
(``LLC-load-misses`` over ``LLC-loads``) and nicsim takes to be the share
of the copied bytes that came from memory rather than from the L3, where
DDIO put them (:attr:`.metrics.Metrics.l3_miss_pct`).

Beside them, not compared: the same runs with every core at its highest
clock (:data:`.experiments.BUFFERS_FIXED_CLOCK`), since a window-limited
flow's cores are partly idle and the powersave governor the profile
assumes lowers their clocks, which lengthens the round trip that bounds
the flow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nicsim.studies.framework import Context, Run

from .experiments import BUFFERS, BUFFERS_FIXED_CLOCK, CONFIG, TURBO, socket_buffers
from .metrics import Metrics, measure
from .report import clocks_field, clocks_text, compare_l3_miss

Runs = Mapping[str, Run]
"""Buffer run id (``buffer_<kib>k``) -> its run."""


def metrics(ctx: Context, runs: Runs, fixed_clock: bool = False) -> dict[int, Metrics]:
    """Each buffer size's measurements (KiB -> metrics), smallest first: the
    study's runs, or with ``fixed_clock`` those with every core at turbo."""
    every = BUFFERS_FIXED_CLOCK if fixed_clock else BUFFERS
    return {b.kib: measure(ctx.report(runs[b.id])) for b in every if b.id in runs and ctx.has(runs[b.id])}


def section(runs: Runs, ctx: Context) -> list[str]:
    """Throughput, CPU and the receiver's reads across the buffer sizes."""
    ms = metrics(ctx, runs)
    turbo = metrics(ctx, runs, fixed_clock=True)
    turbo_text = TURBO.replace("GHz", " GHz")
    by_kib = {b.kib: b for b in BUFFERS}
    base = CONFIG["all_opts"]
    rows: list[dict[str, Any]] = []
    for kib, m in ms.items():
        b = by_kib[kib]
        r = m.reads
        if r is None:
            raise ValueError(f"{b.id}: the receiver's report has no rx_copy (the profile models no DDIO)")
        tx, rx = socket_buffers(base.mtu, base.tso, kib * 1024, kib * 1024)
        ctx.compare(f"throughput_gbps.{b.id}", f"throughput of the flow, {b.label}", "Gb/s", nicsim=m.throughput_gbps)
        ctx.compare(f"per_core_gbps.{b.id}", f"throughput per receiver core, {b.label}", "Gb/s",
                    nicsim=m.per_core_gbps)
        for side in ("sender", "receiver"):
            ctx.compare(f"cpu_pct.{side}.{b.id}", f"{side} CPU utilisation (100 = one core), {b.label}", "pct",
                        nicsim=m.sides[side].cpu_pct)
        ctx.compare(f"copy_latency_us.{b.id}",
                    f"mean time received data waits from its NAPI poll (GRO) to its copy, {b.label}", "us",
                    nicsim=r.mean_wait_us)
        compare_l3_miss(ctx, b.id, b.label, m)
        row = {"kib": kib, "tx_payload_bytes": tx, "rx_payload_bytes": rx,
               "throughput_gbps": round(m.throughput_gbps, 4), "per_core_gbps": round(m.per_core_gbps, 4),
               "sender_cpu_pct": round(m.sender.cpu_pct, 2), "receiver_cpu_pct": round(m.receiver.cpu_pct, 2),
               "sender_clocks_ghz": clocks_field(m.sender.clocks_ghz),
               "receiver_clocks_ghz": clocks_field(m.receiver.clocks_ghz),
               "copied_from_memory_pct": round(r.from_memory_pct, 2),
               "mean_unread_bytes": round(r.mean_unread_bytes), "copy_latency_us": round(r.mean_wait_us, 2),
               "retransmissions": m.retransmissions}
        t = turbo.get(kib)
        t_reads = t.reads if t is not None else None
        row |= {"fixed_clock_throughput_gbps": round(t.throughput_gbps, 4) if t else None,
                "fixed_clock_sender_cpu_pct": round(t.sender.cpu_pct, 2) if t else None,
                "fixed_clock_receiver_cpu_pct": round(t.receiver.cpu_pct, 2) if t else None,
                "fixed_clock_copy_latency_us": round(t_reads.mean_wait_us, 2) if t_reads else None}
        rows.append(row)
    ctx.csv("buffers.csv", rows)
    if not rows:
        return ["No buffer run was simulated."]

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kibs = [r["kib"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    ax = axes[0]
    ax.plot(kibs, [r["throughput_gbps"] for r in rows], "o-", label="throughput")
    ax.plot(kibs, [r["per_core_gbps"] for r in rows], "s--", label="per receiver core")
    fixed = [(r["kib"], r["fixed_clock_throughput_gbps"]) for r in rows if r["fixed_clock_throughput_gbps"] is not None]
    if fixed:
        ax.plot([k for k, _ in fixed], [g for _, g in fixed], "^:", color="#777777",
                label=f"throughput, every core at {turbo_text}")
    ax.set_ylabel("Gb/s")
    ax.set_title("Throughput")
    ax.legend(fontsize=8)
    ax = axes[1]
    ax.plot(kibs, [r["receiver_cpu_pct"] for r in rows], "o-", color="#c44e52", label="receiver")
    ax.plot(kibs, [r["sender_cpu_pct"] for r in rows], "s--", color="#55a868", label="sender")
    ax.set_ylabel("CPU % (100 = one core)")
    ax.set_title("CPU")
    ax.legend(fontsize=8)
    ax = axes[2]
    ax.plot(kibs, [r["copy_latency_us"] for r in rows], "o-", color="#8172b2", label="wait to the copy (us)")
    ax.set_yscale("log")
    ax.set_ylabel("us")
    ax.set_title("Receiver: wait to the copy and L3 misses")
    twin = ax.twinx()
    twin.plot(kibs, [r["copied_from_memory_pct"] for r in rows], "s--", color="#dd8452",
              label="L3 miss rate: copied from memory (%)")
    twin.set_ylim(-5, 105)
    twin.set_ylabel("% of bytes copied")
    lines_, labels_ = ax.get_legend_handles_labels()
    more, more_labels = twin.get_legend_handles_labels()
    ax.legend(lines_ + more, labels_ + more_labels, fontsize=8, loc="upper left")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(kibs)
        ax.set_xticklabels([str(k) for k in kibs], rotation=45, fontsize=7)
        ax.set_xlabel("socket buffers (KiB each)")
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    png = ctx.figure(fig, "buffers", pdf=True)

    lines = [
        "The study's buffer experiment: all optimisations, with iperf's `-w` fixing both hosts' socket buffers",
        "(`tcp-buffer.sh` in its artifact; Linux doubles what `-w` asks and stops autotuning). Every result of it",
        "is held out: each row below is a prediction (`throughput_gbps.buffer_<size>k`, `per_core_gbps.…`,",
        "`cpu_pct.<side>.…`, `copy_latency_us.…`, `l3_miss_pct.…`). Payload: the buffer's bytes of payload once sk_buff",
        "overhead is charged (as for the autotuned buffers of the other runs).",
        "",
        f"![buffer sizes]({png})",
        "",
        "| buffers | payload (send / receive) | throughput | per core | sender CPU | receiver CPU | clocks (sender,"
        " receiver) | copied from memory | unread (mean) | wait to the copy |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['kib']} KiB | {r['tx_payload_bytes'] / 1e3:.0f} / {r['rx_payload_bytes'] / 1e3:.0f} KB |"
            f" {r['throughput_gbps']:.2f} Gb/s | {r['per_core_gbps']:.2f} Gb/s | {r['sender_cpu_pct']:.1f} % |"
            f" {r['receiver_cpu_pct']:.1f} % | {clocks_text(r['sender_clocks_ghz'])},"
            f" {clocks_text(r['receiver_clocks_ghz'])} | {r['copied_from_memory_pct']:.1f} % |"
            f" {r['mean_unread_bytes'] / 1e3:.0f} KB | {r['copy_latency_us']:.1f} us |"
        )
    lines += [
        "",
        "Clocks: each busy core's mean clock while busy, which intel_pstate chose from its load (powersave).",
        "Copied from memory: the share of the bytes the receiver's reads copied that DDIO no longer held in the",
        "L3 (`memory.ddio`: DMA writes fill a share of the L3, newest first); it is the row `l3_miss_pct.…`,",
        "nicsim's stand-in for the study's L3 miss rate, which takes the copy's reads of the received data for",
        "all the loads the L3 sees (the Cai page's \"What is measured\"). Unread: the time-mean payload taken",
        "from the ring by the driver's NAPI poll and not yet read. Wait to the copy: that amount over the rate of",
        "reading (Little's law), the mean time from a byte's NAPI poll to its copy; the study stamps each frame",
        "in `napi_gro_receive` within that poll. nicsim's DDIO holds exactly the newest `memory.ddio` bytes, so",
        "the step from cache to memory is sharper than a real L3's replacement makes it (`memory.ddio_ways`",
        "models DDIO's share as ways of each set; `cai-xeon-6128` does not use it).",
    ]
    if fixed:
        lines += [
            "",
            f"The same runs with every core of both hosts at {turbo_text} (intel_pstate's performance policy) instead of",
            "the clock the powersave policy picks from each core's load, which the profile assumes (the study does",
            "not say which its hosts ran; not compared, `fixed_clock_*` in `buffers.csv`). A window-limited flow",
            "leaves its cores partly idle, so under powersave they slow down, which lengthens the round trip that",
            "bounds the flow and so idles them further: where the two columns part, the prediction is the",
            "governor's as much as the stack's, and a small change anywhere on the sender or receiver can move it",
            "between the clocks that loop settles at.",
            "",
            f"| buffers | throughput (powersave) | at {turbo_text}: throughput | sender CPU | receiver CPU | wait to the copy |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for r in rows:
            if r["fixed_clock_throughput_gbps"] is None:
                continue
            wait = r["fixed_clock_copy_latency_us"]
            lines.append(
                f"| {r['kib']} KiB | {r['throughput_gbps']:.2f} Gb/s | {r['fixed_clock_throughput_gbps']:.2f} Gb/s |"
                f" {r['fixed_clock_sender_cpu_pct']:.1f} % | {r['fixed_clock_receiver_cpu_pct']:.1f} % |"
                f" {'–' if wait is None else f'{wait:.1f} us'} |"
            )
    return lines

