"""The Won report's clock section: the profile's 200 MHz is an estimate,
and the study's results are in cycles. Every CPU cost is in cycles; only
DMA (240 MB/s, a rate in time) becomes more cycles on a faster clock."""

from __future__ import annotations

from typing import Any

from nicsim.studies.framework import Context

from .experiments import CLOCK, CLOCK_SIZES
from .report import echoes


def clock(ctx: Context) -> list[str]:
    base = echoes(ctx)
    runs: dict[tuple[str, str, int], dict[str, Any]] = {}
    for p in ctx.points(CLOCK):
        e = p.report.raw["echo"]
        runs[(str(p.params["hosts[0].cpu.clock"]), e["protocol"], int(e["size"]))] = e
    clocks = sorted({c for c, _, _ in runs}, key=lambda c: float(c.rstrip("MHz")))

    def cpu(e: dict[str, Any], path: str) -> dict[str, float]:
        return {k: v for k, v in e[path]["cycles"].items() if k != "dma"}

    same = all(cpu(runs[(c, pr, s)], path) == cpu(base[(pr, s)], path)
               for c in clocks for pr in ("udp", "via") for s in CLOCK_SIZES for path in ("send", "receive"))

    def factor(e_u: dict[str, Any], e_v: dict[str, Any], path: str, with_dma: bool) -> float:
        def t(e: dict[str, Any]) -> float:
            return float(e[path]["total"]) - (0.0 if with_dma else float(e[path]["cycles"].get("dma", 0.0)))
        return t(e_u) / t(e_v)

    rows = []
    lines = [
        f"Every CPU layer's cycles at {', '.join(clocks)} equal those at the profile's 200 MHz at every size"
        f" and on both paths: {'yes' if same else '**no**'}. Only DMA moves: its 240 MB/s is a rate in time.",
        "",
        "| size (B) | path | factor at " + " | ".join(["200MHz", *clocks]) + " | factor without DMA |",
        "| --- | --- |" + " --- |" * (len(clocks) + 2),
    ]
    for s in CLOCK_SIZES:
        for path in ("send", "receive"):
            fs = [factor(base[("udp", s)], base[("via", s)], path, True)]
            fs += [factor(runs[(c, "udp", s)], runs[(c, "via", s)], path, True) for c in clocks]
            cpu_only = factor(base[("udp", s)], base[("via", s)], path, False)
            cpu_at = [factor(runs[(c, "udp", s)], runs[(c, "via", s)], path, False) for c in clocks]
            rows.append({"size": s, "path": path, "factor_200MHz": round(fs[0], 3),
                         **{f"factor_{c}": round(f, 3) for c, f in zip(clocks, fs[1:])},
                         "factor_without_dma_200MHz": round(cpu_only, 3),
                         **{f"factor_without_dma_{c}": round(f, 3) for c, f in zip(clocks, cpu_at)}})
            lines.append(f"| {s} | {path} | " + " | ".join(f"{f:.2f}" for f in fs) + f" | {cpu_only:.2f} |")
    ctx.csv("clock.csv", rows)
    return lines
