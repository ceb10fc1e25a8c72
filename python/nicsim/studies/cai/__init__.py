"""The Cai study: where a 100 Gb/s host's CPU goes for one long TCP flow.

Cai, Chaudhary, Vuppalapati, Hwang, Agarwal, "Understanding Host Network
Stack Overheads", SIGCOMM 2021. Two servers (Xeon Gold 6128 at 3.4 GHz,
ConnectX-5 Ex 100 Gb/s, direct cable, Linux 5.4) and one long iperf flow
with autotuned socket buffers, under seven configurations of TSO/GRO, jumbo
frames and aRFS. Throughput per core is the flow's throughput over the
receiver's cores used.

Built on :mod:`nicsim.studies.framework`: the configurations, the published
calibration set and the layer-to-category mapping are in
:mod:`.experiments`, the measurements in :mod:`.metrics`, the report's
sections in :mod:`.report` and :mod:`.claims`, the study assembled in
:mod:`.study`.
"""

from __future__ import annotations

from .experiments import (
    CALIBRATION, CATEGORIES, CONFIG, CONFIGS, DURATION, LAYER_CATEGORY, PUBLISHED, RUNS, SIDES, Config, Published,
    category,
)
from .metrics import Metrics, Side, breakdown, category_cycles, cpu_pct, interrupt_cycles, measure, per_core
from .report import TOLERANCE_PCT, quantities
from .study import STUDY, build, reproduce

__all__ = [
    "CALIBRATION", "CATEGORIES", "CONFIG", "CONFIGS", "DURATION", "LAYER_CATEGORY", "PUBLISHED", "RUNS", "SIDES",
    "STUDY", "TOLERANCE_PCT", "Config", "Metrics", "Published", "Side", "breakdown", "build", "category",
    "category_cycles", "cpu_pct", "interrupt_cycles", "measure", "per_core", "quantities", "reproduce",
]
