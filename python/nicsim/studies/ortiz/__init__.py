"""The Ortiz study: protocol offload to a communication processor.

Ortiz, Ortega, Díaz, Prieto, "Modeling network behaviour by full-system
simulation" (Simics). Two Pentium 4-class hosts at 400 MHz, memory 10 times
slower than the CPU, BCM5703C gigabit NICs on PCI, a crossover cable, MTU
9000. Model A runs application and stack on CPU0; Model B runs the stack on
CPU1 (the communication processor), whose memory accesses take x times the
reference delay ("Offload x") and whose speed is a fraction of CPU0's.

The study is built on :mod:`nicsim.studies.framework`: the runs are in
:mod:`.experiments` (scenario files next to it, also at ``scenarios/ortiz/``;
only the offload knobs and the message size change between runs), the
report's sections in :mod:`.report` (Table I, NetPIPE curves), :mod:`.load`
(CPU0's load and interrupts, released cycles, a CPU-intensive application),
:mod:`.findings` (the comparison rows and the claims) and :mod:`.analytical`
(LAWS, EMO and LogGP against the runs; also ``nicsim models compare``).
"""

from __future__ import annotations


from nicsim.studies.framework import Section, Study

from .analytical import models_section
from .experiments import (
    COMPUTE_RUNS,
    LATENCY,
    LOAD_SETTINGS,
    NETPIPE,
    PUBLISHED_LATENCY_US,
    SETTINGS,
    SIZES,
    SPEEDS,
    TCP,
    TCP_SIZES,
    UDP,
    Setting,
)
from .findings import findings
from .load import compute, cpu0, released
from .report import rtt_and_saturation, table1, throughput

__all__ = [
    "COMPUTE_RUNS", "LATENCY", "LOAD_SETTINGS", "NETPIPE", "PUBLISHED_LATENCY_US", "SETTINGS", "SIZES", "SPEEDS",
    "STUDY", "TCP", "TCP_SIZES", "UDP", "Setting", "reproduce",
]

_NETPIPE = list(NETPIPE.values())
_LOAD = [*TCP.values(), *UDP.values()]

STUDY = Study(
    "ortiz",
    title="Ortiz et al.: protocol offload to a communication processor, reproduced by nicsim",
    intro=[
        "Two `ortiz-p4-400` hosts (Pentium 4 class at 400 MHz, memory access 10 cycles, BCM5703C on",
        "PCI, Linux 2.6 costs), crossover GbE, MTU 9000. *No offload*: CPU0 runs application and",
        "stack (Model A). *Offload x*: CPU1 runs the stack and the socket copy and polls; its memory",
        "accesses take x times the reference delay (Model B). One parameter set; only the offload",
        "knobs change.",
    ],
    sections=[
        Section("Table I: NetPIPE latency", list(LATENCY.values()), table1),
        Section("Figures 5 and 6: RTT and saturation", _NETPIPE, rtt_and_saturation),
        Section("Figures 7 and 8: throughput vs block size", _NETPIPE, throughput),
        Section("Figures 3 and 4: CPU0 load and interrupts", _LOAD, cpu0),
        Section("Released CPU0 cycles", list(TCP.values()), released),
        Section("A CPU-intensive application", list(COMPUTE_RUNS.values()), compute),
        Section("What the model says", [*LATENCY.values(), *_NETPIPE, *_LOAD, *COMPUTE_RUNS.values()], findings),
        Section("Analytical models", [*LATENCY.values(), *_NETPIPE, *TCP.values()], models_section),
    ],
    description=__doc__ or "",
)
"""The study: its sections in report order."""


reproduce = STUDY.reproduce
"""Run what is missing and write the report; returns the files written."""
