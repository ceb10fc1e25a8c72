"""The Ortiz report's findings: the study's qualitative questions answered
from the model's numbers."""

from __future__ import annotations

from nicsim.studies.framework import Context

import statistics
from typing import Any

from .experiments import LATENCY, SPEEDS
from .load import FIG3_HOST, FIG4_HOST, load_rows, pick, reductions, released_rows
from .report import mean_mbps, netpipe_curves, runs


def findings(ctx: Context) -> list[str]:
    curves = netpipe_curves(ctx)
    peaks = {label: max(p["mbps"] for p in pts) for label, pts in curves.items()}
    rows = load_rows(ctx)
    reduction = reductions(rows)
    released = released_rows(rows)
    out = []
    load: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r["proto"] == "tcp":
            load.setdefault((r["setting"], r["host"]), []).append(r["cpu0_util"])
    for role in ("sender", "receiver"):
        no = sum(load[("no offload", role)]) / len(load[("no offload", role)])
        off = sum(load[("Offload 1", role)]) / len(load[("Offload 1", role)])
        verdict = "lowers" if off < no else "does not lower"
        out.append(
            f"- Offload {verdict} CPU0's load on the TCP {role}: {no * 100:.0f} % → {off * 100:.0f} % "
            "averaged over message sizes."
        )
    for proto in ("tcp", "udp"):
        red = reduction[(proto, "receiver")]
        out.append(
            f"- CPU0 interrupts on the {proto.upper()} receiver fall by "
            f"{min(red.values()) * 100:.0f} % to {max(red.values()) * 100:.0f} % across sizes."
        )
    no_peak, off_peak = peaks["no offload"], peaks["Offload 1"]
    verdict = "raises" if off_peak > no_peak else "does not raise"
    out.append(f"- Offload 1 {verdict} peak NetPIPE throughput: {no_peak:.0f} → {off_peak:.0f} Mbps.")
    paying = [label for label in ("Offload 1", *(s.label for s in SPEEDS)) if peaks[label] >= no_peak]
    failing = [label for label in (s.label for s in SPEEDS) if peaks[label] < no_peak]
    if failing:
        out.append(
            f"- Offload stops paying in peak throughput at {failing[0]}"
            f" ({peaks[failing[0]]:.0f} Mbps vs {no_peak:.0f} without offload); still pays at: {', '.join(paying)}."
        )
    else:
        out.append("- Offload pays in peak throughput at every CPU1 speed tried (down to 25 %).")
    best = max(released, key=lambda r: r["released_share"])
    out.append(
        f"- Offload releases up to {best['released_share'] * 100:.0f} % of CPU0's cycles per KB "
        f"({best['host']}, {best['size']} B messages)."
    )
    claims(ctx, curves, rows, reduction)
    return out


def _f(x: float) -> str:
    return f"{x:.1f}"


def claims(ctx: Context, curves: dict[str, list[dict[str, float]]], rows: list[dict[str, Any]],
           reduction: dict[tuple[str, str], dict[int, float]]) -> None:  # fmt: skip
    """What the study's text says each figure shows (as far as not held out)
    and its statements about the two models, each with nicsim's verdict."""
    peaks = {label: max(p["mbps"] for p in pts) for label, pts in curves.items()}
    means = mean_mbps(curves)
    lat = {label: rep["summary"]["latency_s"] * 1e6 for label, _, rep in runs(ctx, LATENCY)}
    # Model A can carry the wire: NetPIPE's TCP payload ceiling at MTU 9000 (mega = 2^20).
    ceiling = 1e9 * 8948 / 9038 / 2**20
    ctx.claim("claim.model_a_reaches_1gbps",
              "a Pentium 4 based machine running at 400 MHz (enough to have up to 1 Gbps at network level)",
              f"no offload: NetPIPE peak {_f(peaks['no offload'])} Mbps, TCP payload ceiling {_f(ceiling)}",
              holds=peaks["no offload"] >= 0.9 * ceiling)  # fmt: skip
    off_irq = [r["cpu1_interrupts"] for r in rows if r["setting"] == "Offload 1"]
    ctx.claim("claim.cpu1_isolated",
              "it is possible to assign a CPU to the communication subsystem, isolating it from any other load,"
              " running no other threads and receiving no interrupts",
              f"CPU1 polls: {sum(off_irq)} interrupts on CPU1 over {len(off_irq)} offloaded stream runs",
              holds=sum(off_irq) == 0)  # fmt: skip
    send_no = pick(rows, "tcp", "no offload", FIG3_HOST)
    send_off = pick(rows, "tcp", "Offload 1", FIG3_HOST)
    lower = [s for s in send_no if send_off[s]["cpu0_util"] < send_no[s]["cpu0_util"]]
    ctx.claim("claim.fig3_offload_lowers_cpu0_load",
              "When the protocol is offloaded, the CPU0 load is lower as it only executes the application that"
              " generates data",
              f"TCP {FIG3_HOST}, CPU0 load lower with Offload 1 at {len(lower)} of {len(send_no)} message sizes"
              f" (largest: {_f(max(r['cpu0_util'] for r in send_no.values()) * 100)} % without,"
              f" {_f(max(r['cpu0_util'] for r in send_off.values()) * 100)} % with)",
              holds=len(lower) == len(send_no))  # fmt: skip
    busiest = max(r["cpu0_util"] for r in send_no.values())
    ctx.claim("claim.fig3_cpu0_busy_without_offload",
              "When the CPU0 has to generate data and process the protocol, its load grows [...]: the CPU0 is busy"
              " and there are not many cycles available for other tasks",
              f"TCP {FIG3_HOST} without offload: CPU0 load up to {_f(busiest * 100)} % (busy: at least 80 %)",
              holds=busiest >= 0.8)  # fmt: skip
    med = {p: statistics.median(reduction[(p, FIG4_HOST)].values()) for p in ("tcp", "udp")}
    ctx.claim("claim.fig4_fewer_interrupts",
              "The curves of Figure 4 provide the benefit on CPU time associated to the interrupts when the"
              " communication protocol is offloaded",
              f"{FIG4_HOST}: median reduction of CPU0's interrupts/s {_f(med['tcp'] * 100)} % (TCP),"
              f" {_f(med['udp'] * 100)} % (UDP); offload posts a completion interrupt per wake-up of the reader,"
              " which NIC coalescing does not merge",
              holds=med["tcp"] > 0 and med["udp"] > 0)  # fmt: skip
    ctx.claim("claim.table1_offload_lowers_latency",
              "in Table 1, we can see the latency improvement",
              f"NetPIPE latency {_f(lat['Offload 1'])} µs with Offload 1, {_f(lat['no offload'])} µs without",
              holds=lat["Offload 1"] < lat["no offload"])  # fmt: skip
    xs = [lat[f"Offload {x}"] for x in (1, 2, 4, 6, 10)]
    ctx.claim("claim.fig5_memory_latency_bottleneck",
              "memory latency is an important bottleneck in the communications path",
              "NetPIPE latency for Offload 1, 2, 4, 6, 10: " + ", ".join(_f(v) for v in xs) + " µs",
              holds=all(b > a for a, b in zip(xs, xs[1:])) and xs[-1] > 2 * xs[0])  # fmt: skip
    first = {label: pts[0] for label, pts in curves.items()}
    last = {label: pts[-1] for label, pts in curves.items()}
    small = first["Offload 10"]["time_s"] / first["Offload 1"]["time_s"]
    large = last["Offload 10"]["time_s"] / last["Offload 1"]["time_s"]
    ctx.claim("claim.fig5_small_packets_most_affected",
              "its effect is more noticeable for small packets",
              f"Offload 10 / Offload 1 one-way time: {small:.2f}x at {first['Offload 1']['bytes']} B,"
              f" {large:.2f}x at {last['Offload 1']['bytes']} B (CPU1 copies every byte at its memory delay)",
              holds=small > large)  # fmt: skip
    ctx.claim("claim.fig7_offload_improves_throughput",
              "Figure 7 shows the throughput improvement for different offloading configurations",
              f"mean NetPIPE throughput {_f(means['Offload 1'])} Mbps with Offload 1,"
              f" {_f(means['no offload'])} without",
              holds=means["Offload 1"] > means["no offload"])  # fmt: skip
    better = [x for x in (2, 4, 6, 10) if means[f"Offload {x}"] > means["no offload"]]
    ctx.claim("claim.conclusion_realistic_delays",
              "the improvement provided by offloading [...] not only in the ideal case [...] but also in more"
              " realistic situations, in which memory latencies and non-ideal buses are modelled",
              "mean NetPIPE throughput above no offload's at Offload "
              + (", ".join(str(x) for x in better) if better else "none of 2, 4, 6, 10")
              + "; " + ", ".join(f"Offload {x}: {_f(means[f'Offload {x}'])}" for x in (2, 4, 6, 10))
              + f" vs {_f(means['no offload'])} Mbps",
              holds=bool(better))  # fmt: skip
    speeds = [means["Offload 1"], *(means[s.label] for s in SPEEDS)]
    ctx.claim("claim.fig8_nic_speed_matters",
              "Figure 8 shows the effect of the technology of the NIC processor in the performance of protocol"
              " offloading",
              "mean NetPIPE throughput at CPU1 100/75/50/25 %: " + ", ".join(_f(v) for v in speeds) + " Mbps",
              holds=all(b <= a for a, b in zip(speeds, speeds[1:])) and speeds[-1] < 0.9 * speeds[0])  # fmt: skip
    slow = [s.label for s in SPEEDS if means[s.label] < means["no offload"]]
    ctx.claim("claim.nic_can_be_the_bottleneck",
              "the part of the protocol that is offloaded would require more execution time in the NIC than in"
              " the CPU, and the NIC could appear as the communication bottleneck",
              "below no offload's mean throughput at: " + (", ".join(slow) if slow else "no CPU1 speed tried"),
              holds=bool(slow))  # fmt: skip
