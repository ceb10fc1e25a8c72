"""A progress bar on stderr for long runs, drawn with ``rich.progress``.

The core calls back now and then (every 65,536 simulation events) with the
simulated time and how much of the workload is done; :class:`ProgressBar`
turns that into one rich progress line (description, bar, done/total,
share, simulated time) redrawn in place. It draws only when its stream is a
terminal and only once the run has taken ``delay`` seconds of wall-clock
time, so captured output and CI logs never see it. It reads the numbers it
is given and changes nothing in the run. Redraws happen in the callback,
never from a timer thread, so nothing runs beside the simulation.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

DELAY_S = 2.0
"""Wall-clock seconds before a run shows progress."""
REDRAW_S = 0.1
"""Least wall-clock time between two redraws."""


class ProgressBar:
    """A callable for ``nicsim.run(..., progress=...)`` that shows
    ``label ━━━━━━━━━━ done/total unit  pct %  simulated t s`` on ``stream``."""

    def __init__(
        self, label: str, unit: str = "", stream: TextIO | None = None, delay: float = DELAY_S
    ) -> None:
        self.label = label
        self.unit = unit
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.delay = delay
        self.started = time.perf_counter()
        self.last_draw = -1.0
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty and isatty())
        self._progress: Any = None
        self._task: Any = None

    def __call__(self, sim_time_s: float, done: int, total: int | None, events: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.started < self.delay or now - self.last_draw < REDRAW_S:
            return
        self.last_draw = now
        if self._progress is None:
            self._start()
        self._progress.update(self._task, completed=done, total=total, simulated=sim_time_s)
        self._progress.refresh()

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn

        unit = f" {self.unit}" if self.unit else ""
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(unit.strip()),
            TaskProgressColumn(),
            TextColumn("simulated {task.fields[simulated]:,.3f} s"),
            console=Console(file=self.stream, force_terminal=True),
            auto_refresh=False,
            transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task(self.label, total=None, simulated=0.0)

    def line(self, sim_time_s: float, done: int, total: int | None) -> str:
        """The progress numbers as plain text (for logs): done/total, share, simulated time."""
        unit = f" {self.unit}" if self.unit else ""
        if total:
            share = min(done / total, 1.0)
            count = f"{done:,}/{total:,}{unit} ({100 * share:.0f} %)"
        else:
            count = f"{done:,}{unit} done"
        return f"{self.label} {count} | simulated {sim_time_s:,.3f} s"

    def close(self) -> None:
        """Erase the bar, if one was drawn."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


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
