"""A progress line on stderr for long runs.

The core calls back now and then (every 65,536 simulation events) with the
simulated time and how much of the workload is done; :class:`ProgressBar`
turns that into one line rewritten in place. It draws only when its stream
is a terminal and only once the run has taken ``delay`` seconds of
wall-clock time, so captured output and CI logs never see it. It reads the
numbers it is given and changes nothing in the run.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

DELAY_S = 2.0
"""Wall-clock seconds before a run shows progress."""
REDRAW_S = 0.1
"""Least wall-clock time between two redraws."""
WIDTH = 24
"""Characters of the bar itself."""


class ProgressBar:
    """A callable for ``nicsim.run(..., progress=...)`` that draws
    ``label [#####-----] done/total (pct) | simulated t`` on ``stream``."""

    def __init__(
        self, label: str, unit: str = "", stream: TextIO | None = None, delay: float = DELAY_S
    ) -> None:
        self.label = label
        self.unit = unit
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.delay = delay
        self.started = time.perf_counter()
        self.last_draw = -1.0
        self.drawn = False
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty and isatty())

    def __call__(self, sim_time_s: float, done: int, total: int | None, events: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.started < self.delay or now - self.last_draw < REDRAW_S:
            return
        self.last_draw = now
        self.stream.write("\r" + self.line(sim_time_s, done, total) + "\x1b[K")
        self.stream.flush()
        self.drawn = True

    def line(self, sim_time_s: float, done: int, total: int | None) -> str:
        """The progress line for these numbers."""
        unit = f" {self.unit}" if self.unit else ""
        if total:
            share = min(done / total, 1.0)
            filled = int(share * WIDTH)
            bar = "#" * filled + "-" * (WIDTH - filled)
            count = f"[{bar}] {done:,}/{total:,}{unit} ({100 * share:.0f} %)"
        else:
            count = f"{done:,}{unit} done"
        return f"{self.label} {count} | simulated {sim_time_s:,.3f} s"

    def close(self) -> None:
        """Erase the line, if one was drawn."""
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


UNITS = {
    "netpipe": "block sizes",
    "request_response": "transactions",
    "udp_rr": "transactions",
    "tcp_crr": "transactions",
    "bulk": "bytes",
    "transfers": "bytes",
    "udp_stream": "datagrams",
    "pcap_replay": "datagrams",
}
"""What ``done`` counts, by workload kind."""
