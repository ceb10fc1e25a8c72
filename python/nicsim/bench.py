"""End-to-end speed benchmarks: ``nicsim bench``.

Each benchmark runs one scenario from ``scenarios/bench/`` in a fresh child
process (``python -m nicsim.bench --child ...``), so the peak resident
memory of every benchmark is its own. The child times the simulation call
alone (not the interpreter start or the import) and reports:

- simulated seconds (``summary.sim_time_s``) and wall-clock seconds;
- **slowdown**: wall-clock seconds per simulated second (below 1: faster
  than real time), and the same over the CPU time the child used
  (``cpu_slowdown``), which a machine shared with other work inflates less;
- frames put on the wire per wall-clock second, and simulation events per
  wall-clock second (``summary.frames`` and ``summary.events``);
- the child's peak resident set (``VmHWM``) and how much of it the run
  added on top of the interpreter (``VmHWM`` after the run minus ``VmRSS``
  before it).

Two rows time the receive-coalescing engines instead of a simulation: a
capture of ``tcp-10g-mtu1500`` (100 ms of 10 Gb/s bulk TCP, made once per
``nicsim bench`` in the parent, untimed) is coalesced by
``nicsim._core.coalesce_pcap`` with the NIC LRO engine and with host GRO, in
a child process like the others, timing the call (reading the capture,
coalescing, writing the result). Their ``frames`` are the capture's frames,
``frames_per_wall_s`` the packets per second the engine took in,
``sim_s`` the simulated time the capture covers (so ``slowdown`` is
wall-clock seconds per second of captured traffic) and ``events`` is empty.

The figures are measurements of one machine at one moment; no test asserts
them. ``--quick`` shrinks every benchmark (shorter durations, smaller
NetPIPE sweep) so the whole table takes seconds; its figures are only good
for checking that the command works.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COLUMNS = (
    "benchmark",
    "scenario",
    "sim_s",
    "wall_s",
    "slowdown",
    "cpu_s",
    "cpu_slowdown",
    "frames",
    "frames_per_wall_s",
    "events",
    "events_per_wall_s",
    "peak_rss_mb",
    "run_rss_mb",
    "probe_events",
    "status",
)
"""Columns of the benchmark table, in order."""


@dataclass(frozen=True)
class Benchmark:
    """One end-to-end benchmark: a scenario, knob overrides, optional probes."""

    name: str
    scenario: str
    """File name in the benchmark scenario directory ('' when missing)."""
    what: str
    quick: dict[str, Any] = field(default_factory=dict)
    """Knob overrides (``workload.bulk.duration``) applied with ``--quick``."""
    probes: tuple[str, ...] = ()
    """Probe events a counting Python callable subscribes to."""
    record: tuple[str, ...] = ()
    """Probe events recorded in memory (``nicsim.run(..., record=...)``)."""
    missing: str = ""
    """Why the benchmark cannot run yet (empty: it runs)."""
    lro: str = ""
    """Receive-coalescing engine (``"nic"`` or ``"gro"``) timed over a
    capture of the scenario's run; empty: the run itself is timed."""
    capture: dict[str, Any] = field(default_factory=dict)
    """Knob overrides always applied to the run that makes the capture
    (``quick`` ones go on top with ``--quick``)."""


_QUICK_BULK = {"workload.bulk.duration": "20ms"}
# 100 ms of 10 Gb/s bulk TCP: about 65,000 frames and a 67 MB pcap, enough
# to time the coalescing engines over without a capture of hundreds of MB.
_LRO_CAPTURE = {"workload.bulk.duration": "100ms"}

BENCHMARKS: tuple[Benchmark, ...] = (
    *(
        Benchmark(
            f"tcp-{rate}g-mtu{mtu}",
            f"tcp-{rate}g-mtu{mtu}.toml",
            f"bulk TCP {rate} Gb/s, MTU {mtu}, modern-x86-pcie hosts (timing on)",
            _QUICK_BULK,
        )
        for rate in (1, 10, 40, 100)
        for mtu in (1500, 9000)
    ),
    Benchmark(
        "netpipe-gbe",
        "netpipe-gbe.toml",
        "NetPIPE full sweep 1 B to 8 MiB, ideal hosts, GbE",
        {"workload.netpipe.upper": "1KiB", "workload.netpipe.run_time": "1ms"},
    ),
    Benchmark(
        "flows64-10g",
        "flows64-10g.toml",
        "64 concurrent bulk TCP flows, 10 Gb/s, modern-x86-pcie hosts",
        _QUICK_BULK,
    ),
    Benchmark(
        "tcp-10g-mtu1500-probe-interrupt",
        "tcp-10g-mtu1500.toml",
        "tcp-10g-mtu1500 with a Python probe counting interrupt events",
        _QUICK_BULK,
        probes=("interrupt",),
    ),
    Benchmark(
        "tcp-10g-mtu1500-probe-all",
        "tcp-10g-mtu1500.toml",
        "tcp-10g-mtu1500 with a Python probe counting every probe event",
        _QUICK_BULK,
        probes=("frame", "deliver", "interrupt", "job", "call"),
    ),
    Benchmark(
        "tcp-10g-mtu1500-record-all",
        "tcp-10g-mtu1500.toml",
        "tcp-10g-mtu1500 recording every probe event in memory (record=...)",
        _QUICK_BULK,
        record=("frame", "deliver", "interrupt", "job", "call"),
    ),
    *(
        Benchmark(
            f"lro-capture-{engine}",
            "tcp-10g-mtu1500.toml",
            f"{what} packets per second over a capture of 100 ms of tcp-10g-mtu1500",
            {"workload.bulk.duration": "5ms"},
            lro=engine,
            capture=_LRO_CAPTURE,
        )
        for engine, what in (("nic", "NIC LRO engine"), ("gro", "host GRO"))
    ),
)


class BenchError(ValueError):
    """A bad benchmark request (unknown name, missing scenario directory)."""


def default_scenario_dir() -> Path:
    """``scenarios/bench`` under the working directory if there is one, else
    that of the source tree this package runs from (an editable install)."""
    here = Path.cwd() / "scenarios" / "bench"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "scenarios" / "bench"


def select(names: list[str] | None) -> list[Benchmark]:
    """The benchmarks called ``names`` (all when none are given), in table order."""
    if not names:
        return list(BENCHMARKS)
    known = {b.name: b for b in BENCHMARKS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise BenchError(
            f"unknown benchmark {', '.join(unknown)}; known: {', '.join(known)}"
        )
    return [b for b in BENCHMARKS if b.name in names]


def scenario_text(path: Path, overrides: dict[str, Any]) -> str:
    """The scenario at ``path`` with knob ``overrides`` applied, as TOML text."""
    text = path.read_text(encoding="utf-8")
    if not overrides:
        return text
    from .campaign import knobs

    scenario = knobs.loads(text)
    for knob, value in overrides.items():
        knobs.set_knob(scenario, knob, value)
    return knobs.dumps(scenario)


def _status_kb(name: str) -> int:
    """A ``/proc/self/status`` field in kB (0 where there is none)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_child(
    path: Path, overrides: dict[str, Any], probes: tuple[str, ...], record: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Run one benchmark in this process and measure it (the child's side)."""
    from . import _core

    text = scenario_text(path, overrides)
    counts = {"n": 0}

    def count(_event: Any) -> None:
        counts["n"] += 1

    wanted = {name: count for name in probes} if probes else None
    rss_before = _status_kb("VmRSS")
    started, cpu_started = time.perf_counter(), time.process_time()
    out = _core.run_scenario(text, str(path), None, None, wanted, None, list(record) if record else None)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if record:
        out, _hosts, series = out
        counts["n"] += sum(len(times) // 8 for _fields, times, _host, _values in series.values())
    report = json.loads(out)
    peak = _status_kb("VmHWM")
    summary = report["summary"]
    return {
        "sim_s": summary["sim_time_s"],
        "wall_s": wall,
        "cpu_s": cpu,
        "frames": summary["frames"],
        "events": summary["events"],
        "peak_rss_kb": peak,
        "run_rss_kb": max(peak - rss_before, 0),
        "probe_events": counts["n"] if probes or record else None,
    }


def run_lro_child(capture: Path, output: Path, engine: str) -> dict[str, Any]:
    """Coalesce ``capture`` into ``output`` with ``engine`` in this process
    and measure it (the child's side of an LRO benchmark)."""
    from . import _core

    rss_before = _status_kb("VmRSS")
    started, cpu_started = time.perf_counter(), time.process_time()
    report = json.loads(_core.coalesce_pcap(capture, output, engine))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak = _status_kb("VmHWM")
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "frames": report["frames_in"],
        "frames_out": report["frames_out"],
        "events": None,
        "peak_rss_kb": peak,
        "run_rss_kb": max(peak - rss_before, 0),
        "probe_events": None,
    }


@dataclass(frozen=True)
class Capture:
    """A pcap made for the LRO benchmarks and the simulated time it covers."""

    pcap: Path
    sim_s: float


class Captures:
    """The captures the LRO benchmarks coalesce, made once per scenario and
    overrides (untimed) in a temporary directory ``workdir``."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._made: dict[tuple[Path, str], Capture] = {}

    def get(self, path: Path, overrides: dict[str, Any]) -> Capture:
        """The capture of the single-link scenario at ``path`` with ``overrides``."""
        text = scenario_text(path, overrides)
        key = (path, text)
        if key not in self._made:
            from . import _core

            directory = self.workdir / f"capture-{len(self._made)}"
            report = json.loads(_core.run_scenario(text, str(path), None, str(directory), None, None))
            pcaps = sorted(directory.glob("*.pcap"))
            if len(pcaps) != 1:
                raise BenchError(f"{path}: an LRO benchmark needs a scenario with one link, not {len(pcaps)}")
            self._made[key] = Capture(pcaps[0], report["summary"]["sim_time_s"])
        return self._made[key]


def _best_of(cmd: list[str], repeat: int, row: dict[str, Any]) -> dict[str, Any] | None:
    """Run ``cmd`` ``repeat`` times; its fastest measurement, or None after
    marking ``row`` failed."""
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines() or ["no output"]
            row["status"] = f"failed: {lines[-1]}"
            return None
        one = json.loads(done.stdout)
        if best is None or one["wall_s"] < best["wall_s"]:
            best = one
    return best


def measure(
    bench: Benchmark, scenario_dir: Path, quick: bool, repeat: int, captures: Captures | None = None
) -> dict[str, Any]:
    """Run ``bench`` ``repeat`` times, each in a fresh process; the row of
    the fastest run. LRO benchmarks take their capture from ``captures``."""
    row: dict[str, Any] = {c: None for c in COLUMNS}
    row["benchmark"] = bench.name
    row["scenario"] = bench.scenario
    if bench.missing:
        row["status"] = bench.missing
        return row
    path = scenario_dir / bench.scenario
    if not path.is_file():
        raise BenchError(f"{path}: benchmark scenario not found (use --scenarios DIR)")
    if bench.lro:
        if captures is None:
            raise BenchError(f"{bench.name}: an LRO benchmark needs a directory for its capture")
        try:
            capture = captures.get(path, {**bench.capture, **(bench.quick if quick else {})})
        except BenchError:
            raise
        except (ValueError, RuntimeError, OSError) as e:  # ScenarioError, SimulationError, I/O
            row["status"] = f"failed: capture: {str(e).splitlines()[0]}"
            return row
        output = captures.workdir / f"{bench.name}-out.pcap"
        cmd = [sys.executable, "-m", "nicsim.bench", "--lro-capture", str(capture.pcap),
               "--engine", bench.lro, "--output", str(output)]  # fmt: skip
        best = _best_of(cmd, repeat, row)
        output.unlink(missing_ok=True)
        sim = capture.sim_s
    else:
        cmd = [sys.executable, "-m", "nicsim.bench", "--child", str(path)]
        if quick:
            cmd.append("--quick-overrides")
        cmd += [f"--probe={p}" for p in bench.probes]
        cmd += [f"--record={r}" for r in bench.record]
        best = _best_of(cmd, repeat, row)
        sim = best["sim_s"] if best is not None else 0.0
    if best is None:
        return row
    wall, events = best["wall_s"], best["events"]
    row.update(
        sim_s=sim,
        wall_s=wall,
        slowdown=wall / sim if sim > 0 else None,
        cpu_s=best["cpu_s"],
        cpu_slowdown=best["cpu_s"] / sim if sim > 0 else None,
        frames=best["frames"],
        frames_per_wall_s=best["frames"] / wall if wall > 0 else None,
        events=events,
        events_per_wall_s=events / wall if events is not None and wall > 0 else None,
        peak_rss_mb=best["peak_rss_kb"] / 1024,
        run_rss_mb=best["run_rss_kb"] / 1024,
        probe_events=best["probe_events"],
        status="ok",
    )
    return row


def machine() -> dict[str, Any]:
    """What the figures were taken on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    from . import __version__

    return {
        "nicsim_version": __version__,
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def _cell(value: Any, column: str) -> str:
    if value is None:
        return ""
    if column in ("frames_per_wall_s", "events_per_wall_s"):
        return f"{value / 1e6:.3f} M"
    if column in ("sim_s", "wall_s", "slowdown", "cpu_s", "cpu_slowdown"):
        return f"{value:.3f}"
    if column in ("peak_rss_mb", "run_rss_mb"):
        return f"{value:.1f}"
    return str(value)


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table as Markdown."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row[c], c) for c in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def to_csv(rows: list[dict[str, Any]]) -> str:
    """The table as CSV (raw numbers, empty cells for missing values)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: "" if row[c] is None else row[c] for c in COLUMNS})
    return out.getvalue()


def run_benchmarks(
    names: list[str] | None = None,
    *,
    quick: bool = False,
    repeat: int = 1,
    scenario_dir: Path | None = None,
    out: Path | None = None,
    echo: Any = None,
) -> list[dict[str, Any]]:
    """Run the benchmarks called ``names`` (all by default) and return their
    rows; with ``out``, write ``bench.md``, ``bench.csv`` and ``bench.json``
    there. ``echo`` is called with each row as it is measured."""
    if repeat < 1:
        raise BenchError(f"repeat must be at least 1, got {repeat}")
    benches = select(names)
    directory = scenario_dir if scenario_dir is not None else default_scenario_dir()
    if not directory.is_dir():
        raise BenchError(f"{directory}: benchmark scenario directory not found (use --scenarios DIR)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="nicsim-bench-") as workdir:
        captures = Captures(Path(workdir))
        for bench in benches:
            row = measure(bench, directory, quick, repeat, captures)
            rows.append(row)
            if echo is not None:
                echo(row)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "bench.md").write_text(markdown(rows), encoding="utf-8")
        (out / "bench.csv").write_text(to_csv(rows), encoding="utf-8")
        doc = {"machine": machine(), "quick": quick, "repeat": repeat, "rows": rows}
        (out / "bench.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return rows


def _child_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m nicsim.bench", description=__doc__)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--child", type=Path, help="scenario file to run and measure")
    what.add_argument("--lro-capture", type=Path, help="pcap to coalesce and measure")
    parser.add_argument("--quick-overrides", action="store_true", help="apply the benchmark's --quick knobs")
    parser.add_argument("--probe", action="append", default=[], help="probe event to count")
    parser.add_argument("--record", action="append", default=[], help="probe event to record")
    parser.add_argument("--engine", choices=("nic", "gro"), default="nic", help="coalescing engine (--lro-capture)")
    parser.add_argument("--output", type=Path, help="where the coalesced pcap goes (--lro-capture)")
    args = parser.parse_args(argv)
    if args.lro_capture is not None:
        if args.output is None:
            parser.error("--lro-capture needs --output")
        print(json.dumps(run_lro_child(args.lro_capture, args.output, args.engine)))
        return 0
    overrides: dict[str, Any] = {}
    if args.quick_overrides:
        for bench in BENCHMARKS:
            if bench.scenario == args.child.name:
                overrides = bench.quick
                break
    print(json.dumps(run_child(args.child, overrides, tuple(args.probe), tuple(args.record))))
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
