"""The Ortiz report's findings: the study's qualitative questions answered
from the model's numbers."""

from __future__ import annotations

from nicsim.studies.framework import Context

from .experiments import SPEEDS
from .load import load_rows, reductions, released_rows
from .report import netpipe_curves


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
    return out
