"""The Kurmann study: speculative defragmentation and zero-copy TCP/IP over
Gigabit Ethernet, and Dolly's throughput (Table 4).

Kurmann, Rauch, Stricker (ETH Zürich). 400 MHz Pentium II nodes (440BX,
SDRAM at 100 MHz, PCI 32 bit / 33 MHz), PacketEngines GNIC-II NICs, Linux
2.2, a store-and-forward GbE switch, MTU 1500 (the ``kurmann-pii-400``
profile).

The study is built on :mod:`nicsim.studies.framework`: the runs are in
:mod:`.experiments`, the report's sections in :mod:`.report` and
:mod:`.dolly_report`, and this module only assembles them. Adding an
experiment is adding a section (or, for another row of Table 4, one entry
in :data:`DOLLY_RUNS`). Sections now:

* calibration: the standard stack's bulk throughput
  (``standard.toml`` = ``scenarios/kurmann-standard.toml``) against the
  study's ~42 MB/s; memcpy (92 MB/s) and PCI (126 MB/s) as the profile's
  inputs and the rates the simulator shows for them;
* Figures 5 and 6, Tables 1 and 2: the zero-copy variants, the fallbacks,
  interference and the traces' traffic (:mod:`.report`, :mod:`.traces`);
* Table 4: Dolly over Fast Ethernet, Gigabit Ethernet and zero-copy Gigabit
  Ethernet from the analytical resource model (:mod:`.dolly`) and, where a
  run is declared, from simulation (``dolly-fe.toml``, ``dolly-gbe.toml``);
* receiver CPU load: every node's CPU in the simulated chains and the
  standard transfer, beside the model's.
"""

from __future__ import annotations


from nicsim.studies.framework import Section, Study

from .dolly_report import cpu_load, cpu_runs, table4
from .experiments import (
    CAMS,
    CHECKSUM_SENSITIVITY,
    DOLLY_RUNS,
    FIGURE5,
    FIGURE6,
    INTERFERENCE,
    PUBLISHED_STANDARD_MBS,
    STANDARD,
    TABLE1,
    TABLE2,
    TRACE_COMPOSITION,
    TRACE_HOSTS,
    TRACES,
)
from .report import calibration, figure5, figure6, machine, table1, table2
from .traces import table2_traces

__all__ = [
    "CAMS", "DOLLY_RUNS", "FIGURE5", "FIGURE6", "INTERFERENCE", "PUBLISHED_STANDARD_MBS", "STANDARD", "STUDY",
    "TABLE1", "TABLE2", "TRACES", "TRACE_COMPOSITION", "TRACE_HOSTS", "machine", "reproduce",
]

STUDY = Study(
    "kurmann",
    title="Kurmann et al.: zero-copy TCP/IP over Gigabit Ethernet and Dolly, reproduced by nicsim",
    intro=[
        "Hosts are the study's machine (`kurmann-pii-400`: 400 MHz Pentium II, 440BX, SDRAM at 100 MHz,",
        "PCI 32 bit / 33 MHz, GNIC-II, Linux 2.2 stack costs, MTU 1500). Numbers marked \"study\" are the",
        "study's; the per-layer stack costs are estimates documented in the profile. The calibration set:",
        "the standard stack's ~42 MB/s, memcpy 92 MB/s, PCI 126 MB/s and speculation + fast buffers at",
        "75 MB/s; everything else is a prediction. MB/s is 10^6 bytes per second.",
    ],
    sections=[
        Section("Calibration", [STANDARD], calibration),
        Section("Figure 5: zero-copy variants", [*FIGURE5.values(), CHECKSUM_SENSITIVITY], figure5),
        Section("Figure 6: fallbacks", [STANDARD, *FIGURE6.values()], figure6),
        Section("Table 1: interference", list(TABLE1.values()), table1),
        Section("Table 2: speculation on the traces' traffic", [r for runs in TRACES.values() for r in runs],
                table2_traces),
        Section("Table 2, patterns with and without admission control", list(TABLE2.values()), table2),
        Section("Table 4: Dolly", list(DOLLY_RUNS.values()), table4),
        Section("Receiver CPU load", cpu_runs(), cpu_load),
    ],
    description=__doc__ or "",
)
"""The study: its sections in report order."""


reproduce = STUDY.reproduce
"""Run what is missing and write the report; returns the files written."""
