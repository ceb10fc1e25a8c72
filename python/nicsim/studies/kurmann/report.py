"""The Kurmann report's sections: calibration, the zero-copy variants
(Figures 5 and 6) and speculation under interference and on application
traffic (Tables 1 and 2). Dolly (Table 4) and the CPU load are in
:mod:`.dolly_report`."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from nicsim.studies.framework import Context, RunReport

from . import dolly
from .dolly import Machine
from .experiments import (
    FIGURE5,
    FIGURE6,
    INTERFERENCE,
    MB,
    PUBLISHED_MEMCPY_MBS,
    PUBLISHED_PCI_MBS,
    PUBLISHED_STANDARD_MBS,
    STANDARD,
    TABLE1,
    TABLE2,
)


@lru_cache(maxsize=1)
def machine() -> Machine:
    """The study's node, read from the ``kurmann-pii-400`` profile."""
    return Machine.from_profile()


def zc(r: RunReport, host: int) -> Any:
    """A host's zero-copy counters (empty for a standard host)."""
    return r.host(host).timed.zero_copy


# --- calibration ----------------------------------------------------------------


def calibration(ctx: Context) -> list[str]:
    r = ctx.report(STANDARD)
    m = machine()
    rate = r.summary.goodput_bps / 8
    recv = r.host(r.flows[0].sink).timed
    send = r.host(r.flows[0].source).timed
    delivered = float(r.summary.payload_bytes)
    copy_cycles = recv.cycles_receive.get("copy", 0)
    copy_rate = m.clock_hz * delivered / copy_cycles if copy_cycles else float("nan")
    bus = recv.bus
    bus_busy_s = sum(float(x["busy_ps"]) for x in bus["resources"]) / 1e12
    bus_rate = float(bus["bytes"]) / bus_busy_s
    plain = dolly.chain(m, dolly.GIGABIT, float("inf"), nodes=2, disk_path=False)
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
    ctx.compare("calibration.memcpy_mbs", "memory-to-memory copy by the CPU (simulated receive copy)", "MB/s",
                nicsim=copy_rate / MB, published=PUBLISHED_MEMCPY_MBS, role="calibration")
    ctx.compare("calibration.pci_mbs", "PCI 32/33 large burst transfers (nicsim's burst model)", "MB/s",
                nicsim=m.pci_write / MB, published=PUBLISHED_PCI_MBS, role="calibration")
    lines = [
        "| quantity | study | nicsim simulated | nicsim model | how nicsim gets it |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append(f"| {row['quantity']} | {row['study_mbs']:.0f} MB/s | {row['nicsim_sim_mbs']:.1f} MB/s |"
                     f" {row['nicsim_model_mbs']:.1f} MB/s | {row['how']} |")
    gap = (rate / MB / PUBLISHED_STANDARD_MBS - 1) * 100
    link_util = r.max_link_utilization
    busy = {
        "receiver's CPU": recv.cpu_utilization,
        "sender's CPU": send.cpu_utilization,
        "receiver's PCI bus": recv.bus_utilization,
        "sender's PCI bus": send.bus_utilization,
        "link": link_util,
    }
    busiest = max(busy, key=lambda k: busy[k])
    lines += [
        "",
        f"The standard stack reaches {rate / MB:.1f} MB/s in simulation ({gap:+.1f} % against the study's",
        f"{PUBLISHED_STANDARD_MBS:.0f} MB/s); the receiver's CPU is busy {recv.cpu_utilization * 100:.1f} % of the time, the",
        f"sender's {send.cpu_utilization * 100:.1f} %, the receiver's PCI bus {recv.bus_utilization * 100:.1f} %"
        f" and the link {link_util * 100:.1f} %: the {busiest} is the bottleneck.",
        "The resource model (`dolly.py`) applied to a plain transfer (no disk) puts the receiver's CPU at",
        f"{sink.cpu_cycles_per_byte:.2f} cycles per byte ({sink.cpu_parts['copies']:.2f} in the receive copy at",
        f"{m.memcpy / MB:.0f} MB/s, {sink.cpu_parts['receive']:.2f} in per-segment stack work) and bounds it at",
        f"{plain.throughput / MB:.1f} MB/s ({plain.bottleneck}).",
        "",
        "memcpy and PCI are inputs, not results: the profile's `memory.copy_bandwidth` is the study's",
        f"{PUBLISHED_MEMCPY_MBS:.0f} MB/s and the simulated receiver's copy runs at {copy_rate / MB:.1f} MB/s",
        f"(its copy cycles over the bytes it delivered, at {m.clock_hz / 1e6:.0f} MHz). nicsim's PCI burst model",
        f"(`bus/config.rs`, calibrated to the study's {PUBLISHED_PCI_MBS:.0f} MB/s) gives "
        f"{m.pci_write / MB:.1f} MB/s for large device writes and {m.pci_read / MB:.1f} MB/s for device reads",
        f"(read latency per burst); the receiver's bus moved {float(bus['bytes']) / MB:.1f} MB in",
        f"{bus_busy_s * 1e3:.0f} ms of busy time, {bus_rate / MB:.1f} MB/s including descriptors and short",
        f"transfers, busy {recv.bus_utilization * 100:.0f} % of the run.",
    ]
    return lines


# --- zero-copy variants: Figures 5 and 6 ----------------------------------------


def variant_row(key: str, r: RunReport) -> dict[str, Any]:
    rx = r.host(1).timed
    z = zc(r, 1)
    payload = r.summary.payload_bytes
    return {
        "variant": key,
        "mbs": round(r.summary.mbs, 2),
        "receiver_cpu": round(rx.cpu_utilization, 4),
        "receiver_cycles_per_byte": round(rx.total_cycles / payload, 2),
        "receiver_copy_cycles_per_byte": round(rx.cycles.get("copy", 0) / payload, 2),
        "sender_bus_utilization": round(r.host(0).timed.bus_utilization, 4),
        "spec_hits": z.get("spec_hits", 0),
        "spec_misses": z.get("spec_misses", 0),
        "cleanup_bytes": z.get("cleanup_bytes", 0),
        "zero_copy_pages": z.get("zero_copy_pages", 0),
        "copy_fallbacks": z.get("copy_fallbacks", 0),
        "verified": r.summary.verified,
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


FIGURE5_IDS = {
    "standard": ("fig5.mbs.standard", "standard Linux 2.2 TCP stack, large transfers", PUBLISHED_STANDARD_MBS,
                 "calibration"),
    "spec-only": ("fig5.mbs.spec_only", "speculative defragmentation alone", None, "prediction"),
    "zc-os-only": ("fig5.mbs.zc_os_only", "zero-copy OS support (fbufs) alone", None, "prediction"),
    "both-remap": ("fig5.mbs.remap_defrag", "speculation + page remapping with copy-on-write", None, "prediction"),
    "both-fbufs": ("fig5.mbs.fbufs_defrag", "speculation + fast buffers", 75.0, "calibration"),
}
"""Figure 5's bars as comparison rows: id, description, the study's MB/s
where its text gives it (the caption's 42 and 75), role."""


def figure5(ctx: Context) -> list[str]:
    rows = [variant_row(k, ctx.report(run)) for k, run in FIGURE5.items()]
    ctx.csv("figure5.csv", rows)
    png = _bars(ctx, rows, "figure5", "Figure 5: 32 MiB bulk TCP, kurmann-pii-400, GbE")
    by = {r["variant"]: r for r in rows}
    for key, (cid, what, published, role) in FIGURE5_IDS.items():
        ctx.compare(cid, what, "MB/s", nicsim=ctx.report(FIGURE5[key]).summary.mbs, published=published, role=role)
    best = max(rows, key=lambda r: r["mbs"])
    return [
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


def figure6(ctx: Context) -> list[str]:
    rows = [variant_row("standard", ctx.report(STANDARD))]
    rows += [variant_row(k, ctx.report(run)) for k, run in FIGURE6.items()]
    ctx.csv("figure6.csv", rows)
    png = _bars(ctx, rows, "figure6", "Figure 6: fallbacks (standard stack for reference)")
    by = {r["variant"]: r for r in rows}
    fragments = zc(ctx.report(FIGURE6["fallback-zc-to-std"]), 0).get("tx_fragments", 0)
    ctx.compare("fig6.mbs.zc_to_std", "zero-copy sender to a standard receiver", "MB/s",
                nicsim=ctx.report(FIGURE6["fallback-zc-to-std"]).summary.mbs)
    ctx.compare("fig6.mbs.std_to_zc", "standard sender to a zero-copy receiver (cleanup on every burst)", "MB/s",
                nicsim=ctx.report(FIGURE6["fallback-std-to-zc"]).summary.mbs)
    return [
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


# --- Table 1: interference --------------------------------------------------------


def table1(ctx: Context) -> list[str]:
    rows = []
    for (n, cam), run in TABLE1.items():
        r = ctx.report(run)
        z = zc(r, 1)
        rows.append({
            "interfering_frames": n, "cam": cam,
            "pages": zc(r, 0).get("tx_fragmented", 0),
            "failed_zero_copy": z.get("spec_misses", 0),
            "cam_regular": z.get("cam_regular", 0),
            "mbs": round(r.summary.mbs, 2),
            "verified": r.summary.verified,
        })
    ctx.csv("table1.csv", rows)
    for n in INTERFERENCE:
        r = ctx.report(TABLE1[(n, "off")])
        ctx.compare(f"table1.failed.{n}", f"failed zero-copy packets with {n} interfering packets", "packets",
                    nicsim=zc(r, 1).get("spec_misses", 0))
        ctx.compare(f"table1.mbs.{n}", f"throughput with {n} interfering packets", "MB/s", nicsim=r.summary.mbs)
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
    for row in rows:
        lines.append(f"| {row['interfering_frames']:,} | {row['cam']} | {row['failed_zero_copy']:,} |"
                     f" {row['cam_regular']:,} | {row['mbs']:.1f} |")
    lines += [
        "",
        "The study's numbers for this table are not in nicsim's copy of the study; these are predictions.",
    ]
    return lines


# --- Table 2: application traffic ----------------------------------------------------


def table2(ctx: Context) -> list[str]:
    rows = []
    for (pattern, admission), run in TABLE2.items():
        r = ctx.report(run)
        potential = sum(zc(r, h).get("tx_fragmented", 0) for h in range(len(r.hosts)))
        for h, host in enumerate(r.hosts):
            z = zc(r, h)
            rows.append({
                "pattern": pattern, "admission": admission, "host": host.name,
                "frames": host.timed.nic["rx_frames"],
                "large_data": z.get("rx_large", 0), "small_control": z.get("rx_small", 0),
                "potential_zero_copy": z.get("spec_hits", 0) + z.get("spec_misses", 0),
                "successful_zero_copy": z.get("spec_hits", 0),
                "fast_nacks_sent": z.get("fast_nacks_sent", 0),
                "run_potential": potential,
                "mbs": round(r.summary.mbs, 2),
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
    for row in rows:
        lines.append(
            f"| {row['pattern']} | {'on' if row['admission'] else 'off'} | {row['host']} | {row['frames']:,} |"
            f" {row['large_data']:,} | {row['small_control']:,} | {row['potential_zero_copy']:,} |"
            f" {row['successful_zero_copy']:,} | {row['run_potential']:,} | {row['mbs']:.1f} |"
        )
    return lines
