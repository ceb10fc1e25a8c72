"""The ``nicsim`` command.

    nicsim run SCENARIO [--seed N] [--pcap DIR] [--out DIR]
    nicsim validate SCENARIO
    nicsim profiles
    nicsim plot RESULT_DIR [RESULT_DIR ...] [--labels A,B,...] [--out DIR]
    nicsim netperf TEST [SCENARIO] [-H HOST] [-L HOST] [-l LEN] [-m SIZE] [-r REQ,RESP] [-f U]
    nicsim sweep FILE | status | export | report   (see nicsim.campaign.cli)
    nicsim models laws | emo | loggp | compare       (see nicsim.models.cli)
    nicsim bench [--quick] [--only NAME] [--repeat N] [--out DIR]
    nicsim lro IN.pcap -o OUT.pcap [--engine nic|gro] [--batch-gap US] [--assume-checksums-ok] [--json]

Errors are one line on stderr, never a traceback: exit code 2 for a bad
scenario or a missing file, 1 for a run that fails.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import __version__, lro_report, netperf, plots
from .progress import UNITS as PROGRESS_UNITS
from .progress import ProgressBar
from . import _core
from ._core import ScenarioError, SimulationError
from .api import profiles as builtin_profiles
from .api import resolve
from .api import run as run_scenario
from .campaign.cli import COMMANDS as CAMPAIGN_COMMANDS
from .models.cli import models as models_group
from .result import Result

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2

SCENARIO_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nicsim", message="%(prog)s %(version)s")
def main() -> None:
    """nicsim: simulate networked hosts and their NICs."""


for command in CAMPAIGN_COMMANDS:
    main.add_command(command)
main.add_command(models_group)


@main.command()
@click.argument("scenario", type=SCENARIO_FILE)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**64 - 1),
    help="Override the scenario's seed.",
)
@click.option(
    "--pcap",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write one pcap file per link into this directory.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write result files [default: results/<scenario name>].",
)
def run(scenario: Path, seed: int | None, pcap: Path | None, out: Path | None) -> None:
    """Run SCENARIO (a TOML file), print a summary and write result files."""
    started = time.perf_counter()
    bar = _progress_bar(scenario)
    try:
        result = run_scenario(scenario, seed=seed, pcap=pcap, progress=bar)
    except ScenarioError as e:
        bar.close()
        _fail(f"{scenario}: {e}", EXIT_BAD_INPUT)
    except UnicodeDecodeError as e:
        _fail(f"{scenario}: not UTF-8 text ({e.reason} at byte {e.start})", EXIT_BAD_INPUT)
    except (SimulationError, OSError) as e:
        bar.close()
        _fail(str(e), EXIT_FAILED)
    bar.close()
    wall_s = time.perf_counter() - started

    out_dir = out if out is not None else Path("results") / _file_name(result.name or scenario.stem)
    try:
        written = result.write(out_dir)
        figures = plots.result_figures(result, out_dir)
    except OSError as e:
        _fail(f"cannot write results: {e}", EXIT_FAILED)

    console = Console()
    console.print(_summary_table(result, wall_s))
    timed = _timed_hosts_table(result)
    if timed is not None:
        console.print(timed)
    click.echo(f"results written to {out_dir}: {', '.join(p.name for p in written)}")
    if figures:
        click.echo(f"figures written to {out_dir}: {', '.join(p.name for p in figures)}")
    for pcap in result.pcaps:
        click.echo(f"pcap written: {pcap}")


@main.command()
@click.argument("scenario", type=SCENARIO_FILE)
def validate(scenario: Path) -> None:
    """Check SCENARIO (a TOML file) without running it."""
    try:
        resolve(scenario)
    except ScenarioError as e:
        _fail(f"{scenario}: {e}", EXIT_BAD_INPUT)
    except UnicodeDecodeError as e:
        _fail(f"{scenario}: not UTF-8 text ({e.reason} at byte {e.start})", EXIT_BAD_INPUT)
    except OSError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    except SimulationError as e:
        _fail(str(e), EXIT_FAILED)
    click.echo("ok")


@main.command()
def profiles() -> None:
    """List the built-in host timing profiles (hosts[i].profile)."""
    entries = builtin_profiles()
    width = max(len(name) for name, _ in entries)
    for name, description in entries:
        click.echo(f"{name:<{width}}  {description}")


@main.command()
@click.argument(
    "result_dirs",
    metavar="RESULT_DIR...",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option(
    "--labels",
    help="Comma-separated curve labels, one per RESULT_DIR [default: the scenario names].",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results") / "plots",
    show_default=True,
    help="Where to write the figures.",
)
def plot(result_dirs: tuple[Path, ...], labels: str | None, out: Path) -> None:
    """Overlay the NetPIPE runs in RESULT_DIRs (written by nicsim run, each
    with a netpipe.csv): throughput, signature and saturation graphs as PNG
    and PDF."""
    names = None if labels is None else [label.strip() for label in labels.split(",")]
    if names is not None and len(names) != len(result_dirs):
        _fail(f"--labels gives {len(names)} labels for {len(result_dirs)} result directories",
              EXIT_BAD_INPUT)  # fmt: skip
    for folder in result_dirs:
        if not (folder / "netpipe.csv").is_file():
            _fail(f"{folder}: no netpipe.csv (not a NetPIPE result?)", EXIT_BAD_INPUT)
    try:
        written = plots.netpipe_figures(list(result_dirs), out, names)
    except (OSError, ValueError, KeyError) as e:
        _fail(f"cannot plot: {e}", EXIT_FAILED)
    click.echo(f"figures written to {out}: {', '.join(p.name for p in written)}")


@main.command(name="lro")
@click.argument("input_pcap", metavar="IN.pcap", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the coalesced frames (the input's format: pcap or pcapng, nanosecond "
    "timestamps). OUT.lro.json, OUT.frames.csv and OUT.flows.csv are written next to it.",
)
@click.option(
    "--engine",
    type=click.Choice(["nic", "gro"]),
    default="nic",
    show_default=True,
    help="nic: the Elbeshti NIC LRO engine; gro: Linux host GRO.",
)
@click.option(
    "--batch-gap",
    type=click.FloatRange(min=0),
    default=20.0,
    show_default=True,
    help="GRO: frames closer than this many microseconds form one poll batch.",
)
@click.option(
    "--assume-checksums-ok",
    is_flag=True,
    help="Treat TCP checksums left to the NIC (zero or the pseudo-header sum, as a capture on the "
    "sending host shows them under checksum offload) as good, and write them correctly.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (for scripts) instead of the table.")
def lro_command(
    input_pcap: Path, output: Path, engine: str, batch_gap: float, assume_checksums_ok: bool, as_json: bool
) -> None:
    """Coalesce the TCP segments of a capture (pcap or pcapng; Ethernet with
    or without VLAN tags, Linux cooked SLL/SLL2, raw IP) as a receive-offload
    engine would and write the frames the host sees, each stamped with the
    time of its latest segment. Says where every frame went and why frames
    passed through unmerged."""
    if not input_pcap.is_file():
        _fail(f"{input_pcap}: no such file", EXIT_BAD_INPUT)
    try:
        text = _core.coalesce_pcap(
            input_pcap, output, engine, batch_gap, assume_checksums_ok=assume_checksums_ok
        )
        report = json.loads(text)
        written = lro_report.write(report, output)
    except OSError as e:
        code = EXIT_BAD_INPUT if str(e).startswith(str(input_pcap)) else EXIT_FAILED
        _fail(str(e), code)
    note = lro_report.checksum_line(report)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        if note:
            click.echo(note, err=True)
        return
    Console().print(lro_report.table(report, input_pcap))
    if note:
        click.echo(note)
    click.echo(f"pcap written: {output}")
    click.echo(f"report written: {', '.join(str(p) for p in written.values())}")


@main.command(name="netperf")
@click.argument("test", type=click.Choice(list(netperf.TESTS), case_sensitive=False))
@click.argument("scenario", type=SCENARIO_FILE, required=False)
@click.option("-H", "--remote", help="Host netserver runs on [default: the local host's peer].")
@click.option("-L", "--local", help="Host netperf runs on [default: the first end of the first link].")
@click.option(
    "-l",
    "--length",
    help=f"STREAM: simulated duration [default: {netperf.DEFAULT_STREAM_LENGTH}]; "
    f"RR: transaction count [default: {netperf.DEFAULT_TRANSACTIONS}].",
)
@click.option("-m", "--send-size", help="STREAM: bytes per send, e.g. 64KiB or 1472B.")
@click.option("-r", "--request-response", "rr", help="RR: request and response sizes, REQ[,RESP].")
@click.option(
    "-f",
    "--units",
    type=click.Choice(list(netperf.UNITS)),
    default="m",
    show_default=True,
    help="Throughput units: k/m/g 10^3/10^6/10^9 bit/s, K/M/G 2^10/2^20/2^30 bytes/s.",
)
@click.option("--profile", help="Without SCENARIO: timing profile of both hosts (see nicsim profiles).")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), help="Override the scenario's seed.")
@click.option("--pcap", type=click.Path(file_okay=False, path_type=Path), help="Write pcaps here.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write result files [default: results/<scenario name>-<test>].",
)
def netperf_command(
    test: str,
    scenario: Path | None,
    remote: str | None,
    local: str | None,
    length: str | None,
    send_size: str | None,
    rr: str | None,
    units: str,
    profile: str | None,
    seed: int | None,
    pcap: Path | None,
    out: Path | None,
) -> None:
    """Run netperf test TEST (TCP_STREAM, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR)
    on the hosts and links of SCENARIO (its workload is replaced) or, without
    one, on two ideal hosts over Gigabit Ethernet. Prints netperf's numbers
    and writes netperf.csv (omni column names) beside the usual result files."""
    test = test.upper()
    request, response = (None, None) if rr is None else (rr.split(",", 1) + [None])[:2]
    opts = netperf.Options(local, remote, length, send_size, request or None, response or None, units)
    try:
        base = None if scenario is None else scenario.read_text(encoding="utf-8")
        if profile is not None:
            if base is not None:
                raise netperf.NetperfError("--profile is for the built-in host pair; set hosts[].profile in SCENARIO")
            base = netperf.DEFAULT_PAIR.replace('name = "local"', f'name = "local"\nprofile = "{profile}"')
            base = base.replace('name = "remote"', f'name = "remote"\nprofile = "{profile}"')
        text = netperf.scenario_text(test, base, opts)
    except netperf.NetperfError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    except UnicodeDecodeError as e:
        _fail(f"{scenario}: not UTF-8 text ({e.reason} at byte {e.start})", EXIT_BAD_INPUT)
    except Exception as e:  # a TOML syntax error in SCENARIO
        _fail(f"{scenario}: {e}", EXIT_BAD_INPUT)
    source = str(scenario) if scenario is not None else "<netperf>"
    started = time.perf_counter()
    bar = ProgressBar(f"netperf {test}", PROGRESS_UNITS.get(netperf.TESTS[test], ""))
    try:
        pcap_dir = None if pcap is None else str(pcap)
        result = Result(_core.run_scenario(text, source, seed, pcap_dir, None, bar), pcap)
    except ScenarioError as e:
        bar.close()
        _fail(f"{source}: {e}", EXIT_BAD_INPUT)
    except (SimulationError, OSError) as e:
        bar.close()
        _fail(str(e), EXIT_FAILED)
    bar.close()
    wall_s = time.perf_counter() - started
    row = netperf.omni_row(test, result, units)
    name = _file_name(f"{result.name or 'netperf'}-{test.lower()}")
    out_dir = out if out is not None else Path("results") / name
    try:
        written = result.write(out_dir)
        csv = out_dir / "netperf.csv"
        netperf.write_csv([row], csv)
    except OSError as e:
        _fail(f"cannot write results: {e}", EXIT_FAILED)
    console = Console()
    console.print(_netperf_table(test, result, row, wall_s))
    click.echo(f"results written to {out_dir}: {', '.join(p.name for p in [*written, csv])}")


@main.command(name="bench")
@click.option("--quick", is_flag=True, help="Shrink every benchmark to run in seconds (checks the command, not the speed).")
@click.option("--only", "only", multiple=True, metavar="NAME", help="Run only this benchmark (repeatable); see --list.")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs per benchmark, each in a fresh process; the fastest is reported.")  # fmt: skip
@click.option(
    "--scenarios",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory of the benchmark scenarios [default: scenarios/bench of the source tree].",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results") / "bench",
    show_default=True,
    help="Where to write bench.md, bench.csv and bench.json.",
)
@click.option("--list", "list_only", is_flag=True, help="List the benchmarks and exit.")
def bench_command(
    quick: bool, only: tuple[str, ...], repeat: int, scenarios: Path | None, out: Path, list_only: bool
) -> None:
    """Run the end-to-end speed benchmarks, each in its own process, and
    print slowdown (wall-clock seconds per simulated second), frames and
    events per wall-clock second and peak memory (see docs/performance.md)."""
    from . import bench

    if list_only:
        for b in bench.BENCHMARKS:
            click.echo(f"{b.name:<34} {b.missing or b.what}")
        return

    def echo(row: dict[str, Any]) -> None:
        if row["status"] == "ok":
            # LRO benchmarks time no simulation: they have no events.
            events = row["events_per_wall_s"]
            per_s = f"{events / 1e6:7.3f} M events/s" if events is not None else f"{'':>7}   no events"
            click.echo(
                f"{row['benchmark']:<34} slowdown {row['slowdown']:8.3f} (cpu {row['cpu_slowdown']:.3f})  "
                f"{row['frames_per_wall_s'] / 1e6:7.3f} M frames/s  "
                f"{per_s}  peak {row['peak_rss_mb']:7.1f} MB"
            )
        else:
            click.echo(f"{row['benchmark']:<34} {row['status']}")

    try:
        rows = bench.run_benchmarks(
            list(only) or None, quick=quick, repeat=repeat, scenario_dir=scenarios, out=out, echo=echo
        )
    except bench.BenchError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    except OSError as e:
        _fail(f"cannot write results: {e}", EXIT_FAILED)
    click.echo("")
    click.echo(bench.markdown(rows), nl=False)
    click.echo(f"results written to {out}: bench.md, bench.csv, bench.json")
    if any(r["status"].startswith("failed") for r in rows):
        _fail("some benchmarks failed", EXIT_FAILED)


def _netperf_table(test: str, result: Result, row: dict[str, Any], wall_s: float) -> Table:
    """netperf's numbers of one test, with units."""
    workload = result.data.get("workload") or {}
    local = workload.get("from") or workload.get("client")
    remote = workload.get("to") or workload.get("server")
    table = Table(title=f"nicsim {__version__} netperf {test} {local} -> {remote}", show_header=False,
                  title_justify="left")  # fmt: skip
    table.add_column("field", style="bold")
    table.add_column("value")

    def num(value: Any, fmt: str, unit: str) -> str:
        return "n/a" if value is None or _missing(value) else f"{value:{fmt}} {unit}"

    table.add_row("scenario", result.name)
    table.add_row("throughput", num(row["THROUGHPUT"], ",.2f", str(row["THROUGHPUT_UNITS"])))
    if test == "UDP_STREAM":
        table.add_row("send rate (local)", num(row["LOCAL_SEND_THROUGHPUT"], ",.2f", str(row["THROUGHPUT_UNITS"])))
        table.add_row("receive rate (remote)", num(row["REMOTE_RECV_THROUGHPUT"], ",.2f", str(row["THROUGHPUT_UNITS"])))
        s = result.summary
        table.add_row("datagrams sent / received", f"{s.get('datagrams_sent')} / {s.get('datagrams_received')}")
    table.add_row("elapsed time", num(row["ELAPSED_TIME"], ".6f", "s"))
    if test not in netperf.STREAM_TESTS:
        table.add_row("round-trip latency", num(row["RT_LATENCY"], ",.3f", "us per transaction"))
        table.add_row("p50 / p90 / p99", " / ".join(num(row[c], ",.3f", "us") for c in
                                                    ("P50_LATENCY", "P90_LATENCY", "P99_LATENCY")))  # fmt: skip
    table.add_row("CPU local / remote", " / ".join(num(row[c], ".2f", "%") for c in ("LOCAL_CPU_UTIL", "REMOTE_CPU_UTIL")))
    sd_unit = str(row["SD_UNITS"])
    table.add_row("service demand local / remote", " / ".join(num(row[c], ",.3f", sd_unit) for c in ("LOCAL_SD", "REMOTE_SD")))
    verified = result.summary.get("verified")
    table.add_row("verified", "yes" if verified else "no")
    table.add_row("wall-clock time", f"{wall_s:.3f} s")
    return table


def _progress_bar(scenario: Path) -> ProgressBar:
    """A stderr progress line for a run of ``scenario`` (drawn only on a terminal)."""
    try:
        kind = next(iter(resolve(scenario).get("workload") or {}), "")
    except Exception:  # the run itself reports a bad scenario
        kind = ""
    return ProgressBar(scenario.stem, PROGRESS_UNITS.get(kind, ""))


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _file_name(name: str) -> str:
    """A scenario name made safe to use as a directory name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "scenario"


def _summary_table(result: Result, wall_s: float) -> Table:
    s = result.summary
    table = Table(title=f"nicsim {__version__}", show_header=False, title_justify="left")
    table.add_column("field", style="bold")
    table.add_column("value")

    def row(field: str, value: str) -> None:
        table.add_row(field, Text(value))

    scenario = result.data.get("scenario") or {}
    row("scenario", result.name)
    row("file", str(scenario.get("source")))
    row("workload", result.workload)
    row("seed", str(result.seed))
    goodput, ceiling = s.get("goodput_bps"), s.get("ceiling_bps")
    if result.netpipe is not None:
        _netpipe_rows(result, row)
    else:
        row("goodput", "n/a" if goodput is None else _mbps(goodput))
    if goodput is not None and ceiling:
        share = 100 * goodput / ceiling
        row("of ceiling", f"{share:.2f} % of the {_mbps(ceiling)} Ethernet ceiling")
    if s.get("jain_fairness") is not None:
        flows = result.bulk_flows_table()
        low, high = flows["goodput_bps"].min(), flows["goodput_bps"].max()
        row("flows", f"{len(flows)}: {_mbps(low)} to {_mbps(high)} each, Jain fairness {s['jain_fairness']:.4f}")
    row("payload", _count(s.get("payload_bytes"), "B"))
    row("duration", _seconds(s.get("duration_s")))
    row("simulated time", _seconds(s.get("sim_time_s")))
    row("frames", _count(s.get("frames")))
    row("drops", _count(s.get("drops")))
    if s.get("lost") is not None:
        row("lost", _count(s.get("lost")))
    row("retransmissions", _count(s.get("retransmissions")))
    verified = s.get("verified")
    row("verified", "n/a" if verified is None else ("yes" if verified else "no"))
    if s.get("transactions") is not None:
        row("transactions", _count(s.get("transactions")))
        rate = s.get("transaction_rate")
        row("transaction rate", "n/a" if rate is None else f"{rate:,.1f} /s")
        row("mean latency", _seconds(s.get("mean_latency_s")))
        if s.get("p50_latency_s") is not None:
            row(
                "p50 / p99 latency",
                f"{_seconds(s['p50_latency_s'])} / {_seconds(s.get('p99_latency_s'))}",
            )
    row("wall-clock time", f"{wall_s:.3f} s")
    segments = s.get("data_segments")
    if segments is not None and wall_s > 0:
        row("simulation speed", f"{segments / wall_s:,.0f} data segments per wall-clock second")
    return table


def _netpipe_rows(result: Result, row: Callable[[str, str], None]) -> None:
    """Latency, peak throughput and the block sizes of a NetPIPE run."""
    table = result.netpipe_table()
    latency = result.summary.get("latency_s")
    row("latency", "n/a" if latency is None else f"{latency * 1e6:,.3f} µs (one way, smallest block)")
    if table.empty:
        row("peak throughput", "n/a")
    else:
        best = table.iloc[int(table["mbps"].to_numpy().argmax())]
        row("peak throughput", f"{best['mbit_s_si']:,.2f} Mbit/s at {int(best['bytes']):,} B")
        row("peak, NetPIPE Mbps", f"{best['mbps']:,.2f} Mbps (1 Mbps = 2^20 bit/s)")
    sizes = "0" if table.empty else (
        f"{len(table)} ({int(table['bytes'].min()):,} B to {int(table['bytes'].max()):,} B)"
    )  # fmt: skip
    row("block sizes", sizes)


TOP_LAYERS = 4
"""Layers shown per timed host, by share of its cycles."""
PROFILE_WIDTH = 40
"""Characters of a profile description shown in the timed-hosts table."""


def _timed_hosts_table(result: Result) -> Table | None:
    """What the timing model measured, one column per timed host; ``None``
    when every host is ideal."""
    hosts = result.hosts_table()
    hosts = hosts[hosts["profile"].notna()]
    if hosts.empty:
        return None
    cycles = result.cycles_table()
    table = Table(title="timed hosts", title_justify="left")
    table.add_column("host", style="bold")
    for name in hosts["name"]:
        table.add_column(str(name))

    def row(field: str, values: list[str]) -> None:
        table.add_row(field, *(Text(v) for v in values))

    records = hosts.to_dict("records")
    cores = {h.get("name"): len((h.get("timing") or {}).get("cores") or []) for h in result.hosts}
    row("profile", [_shorten(str(h["profile"]), PROFILE_WIDTH) for h in records])
    if any(not _missing(h["machine"]) for h in records):
        row("machine", ["—" if _missing(h["machine"]) else str(h["machine"]) for h in records])
    row("CPU", [_cpu(h["cpu_utilization"], cores.get(h["name"], 0)) for h in records])
    if any(n > 1 for n in cores.values()):
        row("busiest core", [_percent(h["max_core_utilization"]) for h in records])
    row("interrupts/s", [_rate(h["interrupts_per_s"]) for h in records])
    row("bus", [_percent(h["bus_utilization"]) for h in records])
    if any(not _missing(h["rx_fifo_drops"]) and h["rx_fifo_drops"] > 0 for h in records):
        row("NIC FIFO drops", [_count(h["rx_fifo_drops"]) for h in records])
    if any(not _missing(h["rx_from_llc"]) for h in records):
        row("reads from L3", ["—" if _missing(h["rx_from_llc"]) else _percent(h["rx_from_llc"]) for h in records])
    top = []
    for h in records:
        mine = cycles[cycles["host"] == h["name"]]
        mine = mine.sort_values("share", ascending=False, kind="stable").head(TOP_LAYERS)
        top.append("\n".join(f"{r.layer} {100 * r.share:.1f} %" for r in mine.itertuples()))
    row("cycles by layer", [t or "none" for t in top])
    return table


def _shorten(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters, at a comma if it can be."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    comma = cut.rfind(",")
    return (cut[:comma] if comma > 0 else cut.rstrip()) + "…"


def _missing(value: Any) -> bool:
    """Whether a table cell is empty: None, NaN or pandas' NA."""
    import pandas as pd

    return bool(pd.isna(value))


def _mbps(bps: float) -> str:
    return f"{bps / 1e6:,.2f} Mbit/s"


def _cpu(share: Any, cores: int) -> str:
    """Mean utilization, saying over how many cores when more than one."""
    text = _percent(share)
    return text if cores <= 1 or text == "n/a" else f"{text} of {cores} cores"


def _percent(share: Any) -> str:
    return "n/a" if _missing(share) else f"{100 * share:.1f} %"


def _rate(per_s: Any) -> str:
    return "n/a" if _missing(per_s) else f"{per_s:,.0f}"


def _count(value: Any, unit: str = "") -> str:
    if _missing(value):
        return "n/a"
    return f"{value:,}{' ' + unit if unit else ''}"


def _seconds(value: Any) -> str:
    if value is None:
        return "n/a"
    if value == 0:
        return "0 s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if abs(value) >= scale:
            return f"{value / scale:,.3f} {unit}"
    return f"{value / 1e-9:,.3f} ns"
