"""The Elbeshti study: a RISC-core NIC running large receive offload at
40-100 Gbps (Elbeshti, Dixon, Koziniec, ISCIT 2012).

Everything here comes from nicsim's core through ``nicsim._core``:

1. host software LRO (2927 cycles per packet) at 10 Gbps, 1500-byte
   packets, on a 4 GHz core of nicsim's CPU model: packets/s and CPU share;
2. the per-packet time budget at 40 and 100 Gbps, 64-1500-byte frames
   (preamble/SFD 8 B and gap 12 B on the wire);
3. total and idle core cycles per LRO class for 512/1024/1500-byte packets,
   DMA at 5x the core clock (Table I) and at 3759 MHz (Table II), from the
   core/bus timing model (``nic::risc``);
4. the minimum core clock sustaining 100 Gbps with no RBI overrun (bisection
   over simulations of the two-buffer RBI, the study's Figure 6) and the
   DMA/core ratio at which idle cycles vanish;
5. the NIC LRO engine (``nic::lro``, and host GRO beside it) on captures of
   nicsim runs: one bulk flow, 80 interleaved flows, and impaired traffic
   (:mod:`nicsim.studies.elbeshti.traffic`).

Built on :mod:`nicsim.studies.framework`: constants and the computation
are in :mod:`.experiments`, the report's sections in :mod:`.report` and
:mod:`.calibration` (the compared numbers and the claims); no section
needs a cached run (experiments 5 and 6 run small scenarios of this
package directly): the whole report takes a few seconds. The calibration
set is Table I (the core model's two fitted parameters are fitted to it);
Table II, the minimum clocks and the host's LRO share are predictions.
"""

from __future__ import annotations


from nicsim.studies.framework import Section, Study

from .calibration import compared
from .experiments import CLASSES, DMA_FIXED_HZ, DMA_RATIO, SIZES, STUDY_BUSY, compute, data
from .report import INTRO, budget, host, host_engine, lro_traffic, minclock, tables

__all__ = ["CLASSES", "DMA_FIXED_HZ", "DMA_RATIO", "SIZES", "STUDY", "STUDY_BUSY", "compute", "data", "reproduce"]

STUDY = Study(
    "elbeshti",
    title="Elbeshti et al.: a RISC-core NIC for LRO at 100 Gbps, reproduced by nicsim",
    intro=INTRO,
    sections=[
        Section("Experiment 1: software LRO on the host", [], host),
        Section("Experiment 2: per-packet time budget (preamble/SFD 8 B + gap 12 B)", [], budget),
        Section("Experiment 3: core cycles per packet (Tables I and II)", [], tables),
        Section("Experiment 4: minimum core clock at 100 Gbps (Figure 6) and where idle vanishes", [], minclock),
        Section("Table I, Table II and the minimum clocks: published and nicsim", [], compared),
        Section("Experiment 5: the LRO engine on nicsim traffic", [], lro_traffic),
        Section("Experiment 6 (nicsim's): the NIC engine in a whole host", [], host_engine),
    ],
    description=__doc__ or "",
)
"""The study: its sections in report order."""


reproduce = STUDY.reproduce
"""Run what is missing and write the report; returns the files written."""
