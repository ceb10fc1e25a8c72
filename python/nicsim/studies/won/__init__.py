"""The Won study: per-layer cycles of a send and a receive, UDP/IP vs M-VIA.

Won, Lee, Yu, Moh, Kim, Park, "Linux/SimOS -- a simulation environment for
evaluating high-speed communication systems". A SimOS MIPS machine ("Mipsy",
in-order, 32 KB L1 I/D at 1 cycle, 1 MB L2 at 10 cycles, 100-cycle memory,
an Ethernet NIC with 240 MB/s DMA, MTU 1500, Linux 2.3) sends messages to an
echo node over the kernel's UDP/IP or over M-VIA (user-level messaging).

Built on :mod:`nicsim.studies.framework`: the runs are in
:mod:`.experiments`, the report's sections in :mod:`.report`, :mod:`.clock` and
:mod:`.claims` (every statement of the text about where cycles go, each
checked by code). Layers, as the
study groups them:

* UDP/IP: Socket, UDP, IP, Dev, Dev Drv, Intr, DMA (send copy and
  fragmentation in IP, receive copy in UDP, defragmentation in IP);
* M-VIA: VI Library, Transport, Dev Drv, Intr, DMA.

Send: the call until the send completion (the driver reclaimed the last
frame). Receive: the first frame's arrival at the NIC until the receive call
returns.
"""

from __future__ import annotations


from nicsim.studies.framework import Section, Study

from .claims import NEGLIGIBLE, SIGNIFICANT, SIMILAR, SMALL, claims
from .clock import clock
from .experiments import CLOCK, ECHO, MTU, PROTOCOLS, SIZES
from .report import breakdowns, by_layer, improvement, totals

__all__ = [
    "CLOCK", "ECHO", "MTU", "NEGLIGIBLE", "PROTOCOLS", "SIGNIFICANT", "SIMILAR", "SIZES", "SMALL", "STUDY", "reproduce",
]

STUDY = Study(
    "won",
    title="Won et al.: UDP/IP vs M-VIA by layer, reproduced by nicsim",
    intro=[
        "Host a is the study's SimOS machine (`won-simos-mips`: in-order Mipsy at about one",
        "instruction per cycle, 32 KB L1 I/D at 1 cycle, 1 MB L2 at 10 cycles, 100-cycle memory,",
        "NIC DMA at 240 MB/s, MTU 1500, Linux 2.3 costs; clock 200 MHz, an estimate). It sends each",
        "message to echo node b, which swaps the headers of every frame and returns it; then it",
        "receives the echo. Ten measured messages per point after two warm-up ones (ARP, first",
        "call). Send: the call until the send completion; receive: first frame at the NIC until the",
        "receive call returns. DMA is the frames' DMA time in CPU cycles. The per-layer costs come",
        "from the code paths and the machine (`docs/models/via.md`); no published number calibrates",
        "this study; only the protocol and the size change between points.",
    ],
    sections=[
        Section("Figure 3: total cycles vs message size", [ECHO], totals),
        Section("Figures 4 and 5: cycles by layer", [ECHO], by_layer),
        Section("Figures 6 and 7: one size, the driver split", [ECHO], breakdowns),
        Section("Improvement factor of M-VIA over UDP/IP", [ECHO], improvement),
        Section("What the clock estimate moves", [ECHO, CLOCK], clock),
        Section("Claims of the text: how they are checked", [ECHO], claims),
    ],
    description=__doc__ or "",
)
"""The study: its sections in report order."""


reproduce = STUDY.reproduce
"""Run what is missing and write the report; returns the files written."""
