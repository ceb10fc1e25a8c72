"""The Elbeshti study's experiments and constants.

Experiments 1-4 call nicsim's core (``nic::risc``) directly through
``nicsim._core``; experiments 5 and 6 run small scenarios of this package
(:mod:`.traffic`, :mod:`.hostsim`). None goes through the result cache:
the whole computation takes a few seconds, and :func:`data` keeps it for
the report's sections.
"""

from __future__ import annotations

import functools
from typing import Any

from nicsim import _core

from . import hostsim, traffic

CLASSES = ["BOM", "COM", "EOM", "SSM", "OOP"]
STUDY_BUSY = {"BOM": 22, "COM": 29, "EOM": 28, "SSM": 17, "OOP": 34}
"""Busy instructions per class (the study's Table I: total minus idle; OOP
is 34 at 1500 and 1024 B, 32 at 512 B)."""
TABLE_I = {
    "SSM": {1500: (52, 35), 1024: (40, 23), 512: (27, 10)},
    "BOM": {1500: (52, 30), 1024: (40, 18), 512: (27, 5)},
    "COM": {1500: (56, 27), 1024: (44, 15), 512: (31, 2)},
    "EOM": {1500: (56, 28), 1024: (44, 16), 512: (31, 3)},
    "OOP": {1500: (59, 25), 1024: (47, 13), 512: (32, 0)},
}
"""The study's Table I (DMA at 5x the core clock): (total, idle) RISC
cycles per class and IP packet size, as published: the calibration set."""
FITTED = {"word_cycles": 1, "prologue": 15, "prologue_free": 2}
"""The core model's knobs (``nic::risc::CoreConfig::study``): DMA clocks the
DMA holds the bus per 64-bit word (fitted), instructions before the move
(the study's 15), bus-free instructions kept in them (fitted)."""
CONVENTIONS = {
    "38 B (study: header 14 + FCS 4 + preamble 8 + gap 12)": {"framing": 18, "preamble": 8, "ifg": 12},
    "20 B (preamble 8 + gap 12)": {"framing": 0, "preamble": 8, "ifg": 12},
    "0 B (IP packet only)": {"framing": 0, "preamble": 0, "ifg": 0},
}
"""Wire bytes per IP packet the line-rate solver can count; the study's
812,743.82 packets/s at 10 Gbps and 123.04 ns at 100 Gbps are 1538 B per
1500-byte packet, the first."""
SIZES = [512, 1024, 1500]
"""IP packet sizes of the study's tables (1500 B carries the 1460-byte maximum segment)."""
FIG6_SIZES = [256, 384, 512, 640, 768, 896, 1024, 1152, 1280, 1408, 1500]
BUDGET_FRAMES = [64, 128, 256, 512, 1024, 1500]
GBPS = 1_000_000_000
DMA_RATIO = 5.0
"""The study's DMA/core clock ratio for Table I."""
DMA_FIXED_HZ = 3_759_000_000
"""The study's fixed DMA clock (Table II and its final configuration)."""
HOST_CLOCK_HZ = 4_000_000_000
HOST_CYCLES = 2927
STUDY_PPS = 812_743.82
STUDY_SEGMENT_BUS_CYCLES = 366
PACKETS = 4000
"""Frames per simulation of the line-rate solver (200 bulk windows)."""
HOST_DMA_PACKETS = 20000
"""Frames per simulation with RB -> host transfers: RB (1.97 MB) must have
time to fill if those transfers fall behind."""


def compute() -> dict[str, Any]:
    """Every experiment's numbers, as plain rows."""
    host = []
    for gbps in (10, 40, 100):
        h = _core.host_lro(line_rate_bps=gbps * GBPS, size=1500, clock_hz=HOST_CLOCK_HZ, cycles=HOST_CYCLES)
        host.append(
            {
                "line_rate_gbps": gbps,
                "packet_size": 1500,
                "wire_overhead_bytes": 38,
                "packets_per_s": round(h["packets_per_s"], 2),
                "cycles_per_packet": h["cycles_per_packet"],
                "host_clock_ghz": HOST_CLOCK_HZ / 1e9,
                "cpu_share": round(h["share"], 5),
                "simulated_cpu_share": round(h["simulated_share"], 5),
                "study_packets_per_s": STUDY_PPS if gbps == 10 else "",
            }
        )

    budget = []
    for frame in BUDGET_FRAMES:
        row: dict[str, Any] = {"frame": frame}
        for gbps in (40, 100):
            ns = _core.risc_budget_ns(gbps * GBPS, frame, 20)
            row[f"budget_ns_{gbps}g"] = round(ns, 3)
            row[f"host_cycles_{gbps}g"] = round(ns * HOST_CLOCK_HZ / 1e9, 1)
            row[f"host_lro_pps_share_{gbps}g"] = round(HOST_CYCLES / (ns * HOST_CLOCK_HZ / 1e9), 2)
        budget.append(row)

    minclock = []
    for size in sorted(set(SIZES) | set(FIG6_SIZES)):
        for label, dma in (("ratio 5x", {"dma_ratio": DMA_RATIO}), ("3759 MHz", {"dma_clock_hz": DMA_FIXED_HZ})):
            m = _core.risc_min_clock(size, 100 * GBPS, packets=PACKETS, **dma)
            row = {
                "line_rate_gbps": 100,
                "size": size,
                "dma": label,
                "host_dma": False,
                "min_clock_mhz": m["clock_mhz"],
                "drops_1mhz_below": m["drops_below"],
                "mean_total_cycles": round(m["mean_total_cycles"], 2),
                "mean_idle_cycles": round(m["mean_idle_cycles"], 2),
                "arrival_interval_ns": round(m["arrival_interval_ns"], 3),
                "frames": m["frames"],
                "probes": m["probes"],
            }
            if size in SIZES:
                check = _core.risc_simulate(size, 100 * GBPS, m["clock_hz"], packets=PACKETS, **dma)
                below = _core.risc_simulate(size, 100 * GBPS, m["clock_hz"] * 98 // 100, packets=PACKETS, **dma)
                row.update(
                    drops_at_min=check["drops"],
                    drops_at_98pct=below["drops"],
                    busy_share=round(check["busy_share"], 4),
                    idle_share=round(check["idle_share"], 4),
                )
            minclock.append(row)
        if size in SIZES:
            for label, dma in (("ratio 5x", {"dma_ratio": DMA_RATIO}), ("3759 MHz", {"dma_clock_hz": DMA_FIXED_HZ})):
                try:
                    m = _core.risc_min_clock(size, 100 * GBPS, packets=HOST_DMA_PACKETS, host_dma=True, **dma)
                except _core.ScenarioError as e:
                    # The bus cannot carry both moves at this DMA clock, whatever the core.
                    minclock.append(
                        {"line_rate_gbps": 100, "size": size, "dma": label, "host_dma": True, "min_clock_mhz": "",
                         "unsustainable": e.reason}
                    )
                    continue
                minclock.append(
                    {
                        "line_rate_gbps": 100,
                        "size": size,
                        "dma": label,
                        "host_dma": True,
                        "min_clock_mhz": m["clock_mhz"],
                        "drops_1mhz_below": m["drops_below"],
                        "mean_total_cycles": round(m["mean_total_cycles"], 2),
                        "mean_idle_cycles": round(m["mean_idle_cycles"], 2),
                        "arrival_interval_ns": round(m["arrival_interval_ns"], 3),
                        "frames": m["frames"],
                        "probes": m["probes"],
                    }
                )

    # Per class: the lowest clock a stream of that class alone sustains at
    # 100 Gbps with the DMA at 3759 MHz; a size's clock (Table II's column)
    # is the highest of them, the one that sustains every class.
    class_clock = []
    for conv, line in CONVENTIONS.items():
        for size in SIZES:
            for cls in CLASSES:
                m = _core.risc_min_clock(size, 100 * GBPS, dma_clock_hz=DMA_FIXED_HZ, packets=PACKETS, pattern=[cls],
                                         **line)
                class_clock.append({"convention": conv, "size": size, "class": cls, "min_clock_mhz": m["clock_mhz"],
                                    "drops_1mhz_below": m["drops_below"],
                                    "arrival_interval_ns": round(m["arrival_interval_ns"], 3)})
    study_conv = next(iter(CONVENTIONS))
    size_clock = {
        size: 1_000_000 * max(r["min_clock_mhz"] for r in class_clock if r["size"] == size and r["convention"] == study_conv)
        for size in SIZES
    }
    idle_1x = {(r["class"], size): r["idle"] for size in SIZES for r in _core.risc_cycles(size, dma_ratio=1.0)}

    tables = []
    for table, clock_of, dma in (
        ("I", lambda s: 1_000_000_000, {"dma_ratio": DMA_RATIO}),
        ("II", lambda s: size_clock[s], {"dma_clock_hz": DMA_FIXED_HZ}),
    ):
        for size in SIZES:
            for r in _core.risc_cycles(size, core_clock_hz=clock_of(size), **dma):
                tables.append(
                    {
                        "table": table,
                        "size": size,
                        "class": r["class"],
                        "core_clock_mhz": r["core_clock_hz"] / 1e6,
                        "dma_clock_mhz": r["dma_clock_hz"] / 1e6,
                        "moved_bytes": r["moved_bytes"],
                        "bus_cycles": r["bus_cycles"],
                        "dma_core_cycles": r["dma_core_cycles"],
                        "busy": r["busy"],
                        "prologue": r["prologue"],
                        "during": r["during"],
                        "tail": r["tail"],
                        "overlapped": r["overlapped"],
                        "idle": r["idle"],
                        "total": r["total"],
                        "study_busy": STUDY_BUSY[r["class"]],
                        "published_total": TABLE_I[r["class"]][size][0] if table == "I" else "",
                        "published_idle": TABLE_I[r["class"]][size][1] if table == "I" else "",
                        "idle_dma_1x": idle_1x[(r["class"], size)],
                        "idle_free_ratio": r["idle_free_ratio"],
                    }
                )

    ratios = []
    for size in SIZES:
        for r in _core.risc_cycles(size, dma_ratio=1.0):
            vanish = r["idle_free_ratio"]
            at = _core.risc_cycles(size, dma_ratio=vanish, classes=[r["class"]])[0]
            below = _core.risc_cycles(size, dma_ratio=vanish * 0.99, classes=[r["class"]])[0]
            ratios.append(
                {
                    "size": size,
                    "class": r["class"],
                    "bus_cycles": r["bus_cycles"],
                    "overlappable": r["during"],
                    "idle_free_ratio": vanish,
                    "idle_at_ratio": at["idle"],
                    "idle_at_99pct": below["idle"],
                }
            )
    curve = []
    for size in SIZES:
        for tenth in range(10, 601, 5):
            r = _core.risc_cycles(size, dma_ratio=tenth / 10, classes=["COM"])[0]
            curve.append({"size": size, "dma_ratio": tenth / 10, "class": "COM", "idle": r["idle"], "total": r["total"]})
    keys: list[str] = []
    for r in minclock:
        keys += [k for k in r if k not in keys]
    minclock = [{k: r.get(k, "") for k in keys} for r in minclock]
    segment = _core.risc_cycles(1500, dma_ratio=1.0, classes=["COM"])[0]
    lro = traffic.compute()
    return {
        "class_clock": class_clock,
        "host": host,
        "budget": budget,
        "tables": tables,
        "minclock": minclock,
        "ratios": ratios,
        "curve": curve,
        "segment": segment,
        "traffic": lro["rows"],
        "impairments": lro["impairments"],
        "host_sim": hostsim.compute(),
    }



@functools.lru_cache(maxsize=1)
def data() -> dict[str, Any]:
    """:func:`compute`'s rows, computed once per process (the sections share them)."""
    return compute()
