"""The Ortiz report's sections on CPU0: its load (Figure 3), its interrupts
(Figure 4), the cycles offload releases and a CPU-intensive application."""

from __future__ import annotations

import math
import statistics
from typing import Any

from nicsim.studies.framework import Context

from .experiments import COMPUTE_RUNS, SETTING_BY_LABEL, TCP, UDP
from .report import Runs, runs


FIG3_HOST = "sender"
"""The host whose CPU0 load Figure 3 plots: the one whose application "generates data"."""
FIG4_HOST = "receiver"
"""The host whose interrupts Figure 4 counts: the one that receives the messages."""


def _size(value: Any) -> int:
    text = str(value)
    for unit, scale in (("KiB", 1024), ("B", 1)):
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * scale)
    return int(text)


def _cpu0(report: dict[str, Any], host: int) -> dict[str, float]:
    t = report["hosts"][host]["timing"]
    c0, c1 = t["cores"][0], t["cores"][1]
    return {
        "cpu0_util": c0["utilization"],
        "cpu1_util": c1["utilization"],
        "cpu0_busy_s": c0["busy_s"],
        "cpu0_cycles": sum(c0["cycles"].values()),
        "cpu0_interrupts": c0["interrupts"],
        "cpu0_interrupts_per_s": c0["interrupts_per_s"],
        "cpu1_interrupts": c1["interrupts"],
    }


def load_rows(ctx: Context) -> list[dict[str, Any]]:
    """One row per protocol, size, setting and host (writes ``load.csv`` once)."""
    rows = []
    for proto, table, knob in (("tcp", TCP, "workload.bulk.write_size"), ("udp", UDP, "workload.udp_stream.size")):
        got = runs(ctx, table)
        # Sizes outer, settings inner (the order the study's sweeps always had).
        sizes = list(dict.fromkeys(str(p[knob]) for _, p, _ in got))
        for size in sizes:
            for label, params, rep in got:
                if str(params[knob]) != size:
                    continue
                for host, role in ((0, "sender"), (1, "receiver")):
                    row = {"proto": proto, "size": _size(params[knob]), "setting": label, "host": role}
                    row["goodput_mbps"] = rep["summary"]["goodput_bps"] / 1e6
                    row["duration_s"] = rep["summary"]["duration_s"]
                    row.update(_cpu0(rep, host))
                    rows.append(row)
    if not any(p.name == "load.csv" for p in ctx.written):
        ctx.csv("load.csv", rows)
    return rows


def pick(rows: list[dict[str, Any]], proto: str, setting: str, role: str) -> dict[int, dict[str, Any]]:
    return {r["size"]: r for r in rows if r["proto"] == proto and r["setting"] == setting and r["host"] == role}


def reductions(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[int, float]]:
    """1 − interrupts(offload)/interrupts(no offload) on CPU0 per protocol, host and size.
    Both settings count every interrupt CPU0 takes (``cores[0].interrupts_per_s``):
    NIC interrupts without offload, completion interrupts from CPU1 with it."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    for proto in ("tcp", "udp"):
        for role in ("sender", "receiver"):
            no, off = pick(rows, proto, "no offload", role), pick(rows, proto, "Offload 1", role)
            red = {}
            for s in sorted(no):
                base = no[s]["cpu0_interrupts_per_s"]
                red[s] = 1 - off[s]["cpu0_interrupts_per_s"] / base if base > 0 else math.nan
            out[(proto, role)] = red
    return out


def cpu0(ctx: Context) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = load_rows(ctx)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, role in zip(axes, ("sender", "receiver")):
        for setting in ("no offload", "Offload 1"):
            got = pick(rows, "tcp", setting, role)
            sizes = sorted(got)
            ax.plot(sizes, [got[s]["cpu0_util"] * 100 for s in sizes], marker="o", label=setting)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_title(f"CPU0 load, TCP {role}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("CPU0 load (%)")
    fig.tight_layout()
    fig3 = ctx.figure(fig, "fig3-cpu0-load", pdf=True)

    reduction = reductions(rows)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (proto, role), red in reduction.items():
        ax.plot(list(red), list(red.values()), marker="o", label=f"{proto.upper()} {role}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("1 − interrupts(offload) / interrupts(no offload)")
    ax.set_title("Reduction of CPU0's interrupt rate with offload")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig4 = ctx.figure(fig, "fig4-interrupt-reduction", pdf=True)

    for s in ("no offload", "Offload 1"):
        got = pick(rows, "tcp", s, FIG3_HOST)
        ctx.compare(f"fig3.cpu0_load_max_pct.{SETTING_BY_LABEL[s].key}",
                    f"largest CPU0 load over TCP message sizes, {FIG3_HOST}, {s} (Figure 3)", "%",
                    nicsim=max(r["cpu0_util"] for r in got.values()) * 100)  # fmt: skip
    for proto in ("tcp", "udp"):
        ctx.compare(f"fig4.interrupt_reduction_pct.{proto}",
                    f"median over message sizes of 1 − CPU0 interrupts/s with Offload 1 / without, {proto.upper()}"
                    f" {FIG4_HOST} (Figure 4)", "%",
                    nicsim=statistics.median(reduction[(proto, FIG4_HOST)].values()) * 100)  # fmt: skip
    lines = [f"![load]({fig3})", "", f"![irq]({fig4})", "",
             f"Figure 3's host is the TCP {FIG3_HOST} (the study: with offload CPU0 \"only executes the",
             "application that generates data\"); Figure 4's is the "
             f"{FIG4_HOST} (interrupts to \"attend the received messages\", section II). CPU0's",
             "interrupts are counted the same way in both settings: every interrupt CPU0 takes (NIC",
             "interrupts without offload; CPU1's completion interrupts with it). Reduction per size:", ""]
    lines += ["| proto | host | " + " | ".join(f"{s} B" for s in reduction[("tcp", "receiver")]) + " |"]
    lines += ["| --- | --- |" + " --- |" * len(reduction[("tcp", "receiver")])]
    for (proto, role), red in reduction.items():
        lines.append(f"| {proto.upper()} | {role} | " + " | ".join(f"{v:.2f}" for v in red.values()) + " |")
    return lines


def released_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """CPU0 cycles per KB moved over TCP, without and with offload."""
    out = []
    for role in ("sender", "receiver"):
        no, off = pick(rows, "tcp", "no offload", role), pick(rows, "tcp", "Offload 1", role)
        for s in sorted(no):

            def per_kb(r: dict[str, Any]) -> float:
                kb = r["goodput_mbps"] * 1e6 / 8 * r["duration_s"] / 1024
                return r["cpu0_cycles"] / kb

            out.append(
                {
                    "host": role,
                    "size": s,
                    "cpu0_cycles_per_kb_no_offload": round(per_kb(no[s])),
                    "cpu0_cycles_per_kb_offload": round(per_kb(off[s])),
                    "released_share": round(1 - per_kb(off[s]) / per_kb(no[s]), 3),
                    "cpu0_idle_no_offload": round(1 - no[s]["cpu0_util"], 3),
                    "cpu0_idle_offload": round(1 - off[s]["cpu0_util"], 3),
                }
            )
    return out


def released(ctx: Context) -> list[str]:
    load = load_rows(ctx)
    rows = released_rows(load)
    ctx.csv("released.csv", rows)
    size = max(r["size"] for r in load)
    no, off = (pick(load, "tcp", s, "receiver")[size] for s in ("no offload", "Offload 1"))
    freed = (no["cpu0_util"] - off["cpu0_util"]) * 100
    ctx.compare("released_cpu_cycles_pct", f"share of CPU0's cycles Offload 1 releases to a lowest-priority"
                f" CPU-intensive application, TCP receiver, {size} B writes", "%", nicsim=freed)  # fmt: skip
    lines = [
        f"With {size} B writes the TCP receiver's CPU0 is busy {no['cpu0_util'] * 100:.1f} % of the time without",
        f"offload ({no['goodput_mbps']:.0f} Mbit/s) and {off['cpu0_util'] * 100:.1f} % with Offload 1"
        f" ({off['goodput_mbps']:.0f} Mbit/s): offload releases {freed:.1f} % of CPU0's cycles.",
        "",
        "A CPU-bound application on CPU0 at the lowest priority gets every cycle the",
        "communication leaves (no cache interference is modelled). Per KB moved over TCP:",
        "",
        "| host | size (B) | CPU0 cycles/KB, no offload | with offload | released |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['host']} | {r['size']} | {r['cpu0_cycles_per_kb_no_offload']} | "
            f"{r['cpu0_cycles_per_kb_offload']} | {r['released_share'] * 100:.0f} % |"
        )
    return lines


def compute_rows(got: Runs) -> list[dict[str, Any]]:
    """Per setting and application work: goodput, and how CPU0 of the
    receiver splits between the application and communication."""
    rows = []
    for label, params, rep in got:
        t = rep["hosts"][1]["timing"]
        c0 = t["cores"][0]
        busy = sum(c0["cycles"].values())
        app = c0["cycles"].get("app", 0)
        kib = rep["summary"]["goodput_bps"] / 8 * rep["summary"]["duration_s"] / 1024
        rows.append(
            {
                "setting": label,
                "compute_per_kib": int(params["hosts[1].app.compute_per_kib"]),
                "goodput_mbps": round(rep["summary"]["goodput_bps"] / 1e6, 2),
                "cpu0_util": round(c0["utilization"], 4),
                "app_share": round(app / busy if busy else 0.0, 4),
                "comm_cycles_per_kib": round((busy - app) / kib) if kib else 0,
            }
        )
    rows.sort(key=lambda r: (r["setting"] != "no offload", r["compute_per_kib"]))
    return rows


def compute(ctx: Context) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = compute_rows(runs(ctx, COMPUTE_RUNS))
    ctx.csv("compute.csv", rows)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for setting in ("no offload", "Offload 1"):
        got = [r for r in rows if r["setting"] == setting]
        xs = [r["compute_per_kib"] for r in got]
        axes[0].plot(xs, [r["goodput_mbps"] for r in got], marker="o", label=setting)
        axes[1].plot(xs, [r["app_share"] * 100 for r in got], marker="o", label=setting)
    axes[0].set_ylabel("goodput (Mbit/s)")
    axes[1].set_ylabel("CPU0 cycles for the application (%)")
    for ax in axes:
        ax.set_xscale("symlog", linthresh=2500)
        ax.set_xlabel("application work (cycles per KiB)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_title("Receiver goodput vs application work")
    axes[1].set_title("CPU0 share the application gets")
    fig.tight_layout()
    fig9 = ctx.figure(fig, "fig9-compute", pdf=True)
    base = {r["compute_per_kib"]: r for r in rows if r["setting"] == "no offload"}
    gain = [r for r in rows if r["setting"] == "Offload 1" and r["compute_per_kib"] > 0]
    lines = [
        "Host b's application works on every KiB it reads (`app.compute_per_kib` cycles on CPU0,",
        "LAWS's *a*); host a streams 16 KiB writes to it. Without offload CPU0 also runs the stack",
        "(*o* cycles per KiB); with Offload 1 the stack and the socket copy move to CPU1 and the",
        "application gets the cycles released. LAWS bounds the gain of a CPU-bound application by",
        "1/γ, γ = a/o.",
        "",
        f"![compute]({fig9})",
        "",
        "| work a (cycles/KiB) | goodput, no offload (Mbit/s) | Offload 1 | gain | CPU-bound gain"
        " (a + o) / (a + o') − 1 | LAWS bound 1/γ | o: CPU0 comm cycles/KiB, no offload | o': Offload 1 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in gain:
        b = base[r["compute_per_kib"]]
        a, o, o_off = r["compute_per_kib"], b["comm_cycles_per_kib"], r["comm_cycles_per_kib"]
        g = r["goodput_mbps"] / b["goodput_mbps"] - 1
        lines.append(
            f"| {a} | {b['goodput_mbps']:.1f} | {r['goodput_mbps']:.1f} | {g * 100:+.1f} % |"
            f" {((a + o) / (a + o_off) - 1) * 100:+.1f} % | {o / a * 100:.1f} % | {o} | {o_off} |"
        )
    lines += [
        "",
        "Where the wire or the sender bounds goodput (little application work) offload gains",
        "little. Once the receiver's CPU0 is the bottleneck, the application gets the cycles",
        "released, but its read waits while CPU1 copies the data (the call is synchronous), so",
        "the gain stays below (a + o)/(a + o') − 1, o' being what stays on CPU0 (system call,",
        "socket layer and the command interface).",
    ]
    return lines
