"""netperf-style tests on top of nicsim's workloads.

Each test runs one of the core's workloads between a *local* host (netperf's
side) and a *remote* host (netserver's side) and reports what netperf
reports, under netperf's omni output names:

============  ===================  =========================================
test          workload             measures
============  ===================  =========================================
TCP_STREAM    ``bulk``             goodput, connection set-up excluded, final
                                   flush included
UDP_STREAM    ``udp_stream``       send rate and receive rate, apart (UDP
                                   has no flow control)
TCP_RR        ``request_response`` transactions/s over one connection
UDP_RR        ``udp_rr``           transactions/s, one datagram each way
TCP_CRR       ``tcp_crr``          transactions/s, a new connection each
============  ===================  =========================================

CPU utilisation (0–100 % whatever the number of cores) and service demand
come from the timing model: for host h with ``n`` cores that were busy
``B`` seconds in all over the run, over the test's elapsed time ``T``,
``U = 100 · B / (n · T)`` and ``SD = U · 10000 · n / throughput`` — µs of
CPU per KB (1024 bytes) for STREAM tests (throughput in KB/s), per
transaction for RR tests (throughput in transactions/s). Both therefore
reduce to CPU time per unit of work: ``SD = B · 10^6 / work``. Ideal hosts
have no CPU model: their utilisation and service demand are NaN.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .campaign.knobs import dumps, loads
from .result import Result

TESTS: dict[str, str] = {
    "TCP_STREAM": "bulk",
    "UDP_STREAM": "udp_stream",
    "TCP_RR": "request_response",
    "UDP_RR": "udp_rr",
    "TCP_CRR": "tcp_crr",
}
"""netperf test name to the nicsim workload it runs."""

STREAM_TESTS = ("TCP_STREAM", "UDP_STREAM")

OMNI_COLUMNS: tuple[str, ...] = (
    "THROUGHPUT",
    "THROUGHPUT_UNITS",
    "ELAPSED_TIME",
    "LOCAL_SEND_SIZE",
    "REMOTE_RECV_SIZE",
    "LOCAL_SEND_THROUGHPUT",
    "REMOTE_RECV_THROUGHPUT",
    "LOCAL_CPU_UTIL",
    "REMOTE_CPU_UTIL",
    "LOCAL_SD",
    "REMOTE_SD",
    "SD_UNITS",
    "TRANSACTION_RATE",
    "RT_LATENCY",
    "MEAN_LATENCY",
    "P50_LATENCY",
    "P90_LATENCY",
    "P99_LATENCY",
)
"""Columns of ``netperf.csv``, with netperf omni's names: throughput in
:data:`UNITS` (STREAM) or transactions/s (RR), elapsed time in s, sizes in
bytes, CPU utilisation in %, service demand in µs/KB (STREAM) or µs/Tran
(RR), latencies in µs."""

UNITS: dict[str, tuple[str, float]] = {
    "k": ("10^3bits/s", 1e3 / 8),
    "m": ("10^6bits/s", 1e6 / 8),
    "g": ("10^9bits/s", 1e9 / 8),
    "K": ("KBytes/s", 1024.0),
    "M": ("MBytes/s", 1024.0**2),
    "G": ("GBytes/s", 1024.0**3),
}
"""netperf's ``-f`` letters: the units string and bytes per second per unit
(lower case: 10^x bits, upper case: 2^x bytes)."""

DEFAULT_STREAM_LENGTH = "10s"
"""Simulated length of a STREAM test (netperf's default ``-l 10``)."""
DEFAULT_TRANSACTIONS = 10_000
"""Transactions of an RR test."""

DEFAULT_PAIR = """\
name = "netperf"
description = "two ideal hosts on Gigabit Ethernet"

[[hosts]]
name = "local"

[[hosts]]
name = "remote"

[[links]]
endpoints = ["local", "remote"]
rate = "1Gbps"
propagation = "500ns"
"""
"""The system a test runs on when no scenario is given."""


class NetperfError(ValueError):
    """A netperf option that does not fit the test or the scenario."""


@dataclass(frozen=True)
class Options:
    """A netperf test's options (netperf's own letters in brackets)."""

    local: str | None = None
    """Host netperf runs on; default the first end of the first link."""
    remote: str | None = None
    """Host netserver runs on (``-H``); default the other end."""
    length: str | None = None
    """``-l``: a duration such as ``"1s"`` for STREAM tests, a transaction
    count for RR tests (netperf's ``-l -N``; the sign is ignored)."""
    send_size: str | None = None
    """``-m``: bytes per send call (STREAM)."""
    request: str | None = None
    """``-r`` first half: request size (RR)."""
    response: str | None = None
    """``-r`` second half: response size (RR)."""
    units: str = "m"
    """``-f``: throughput units letter, see :data:`UNITS`."""


def scenario_text(test: str, base: str | None, opts: Options) -> str:
    """The TOML of a scenario that runs netperf test ``test`` on the hosts and
    links of ``base`` (TOML text; its own workload is replaced), or on two
    ideal hosts over GbE when ``base`` is ``None``."""
    if test not in TESTS:
        raise NetperfError(f"unknown test {test!r}; one of {', '.join(TESTS)}")
    scenario = loads(base if base is not None else DEFAULT_PAIR)
    local, remote = _ends(scenario, opts)
    if opts.units not in UNITS:
        raise NetperfError(f"-f: unknown units {opts.units!r}; one of {', '.join(UNITS)}")
    workload: dict[str, Any]
    if test in STREAM_TESTS:
        length = opts.length or DEFAULT_STREAM_LENGTH
        if _is_count(length):
            raise NetperfError(f"-l: a STREAM test runs for a duration such as \"1s\", got {length!r}")
        if opts.request or opts.response:
            raise NetperfError("-r: request/response sizes are for RR tests")
        if test == "TCP_STREAM":
            workload = {"from": local, "to": remote, "duration": length}
            if opts.send_size:
                workload["write_size"] = opts.send_size
        else:
            workload = {"from": local, "to": remote, "duration": length}
            if opts.send_size:
                workload["size"] = opts.send_size
    else:
        length = opts.length or str(DEFAULT_TRANSACTIONS)
        if not _is_count(length):
            raise NetperfError(f"-l: an RR test runs a transaction count such as 10000, got {length!r}")
        if opts.send_size:
            raise NetperfError("-m: the send size is for STREAM tests; use -r for RR tests")
        workload = {"client": local, "server": remote, "transactions": abs(int(length))}
        if opts.request:
            workload["request"] = opts.request
        if opts.response:
            workload["response"] = opts.response
    scenario["workload"] = {TESTS[test]: workload}
    if test in STREAM_TESTS:
        # Leave room for the whole test: its length plus 10 s to drain.
        need = _duration_s(str(workload["duration"]))
        run = scenario.setdefault("run", {})
        have = _duration_s(str(run.get("time_limit", "60s")))
        if need is not None and have is not None and have < need + 10:
            run["time_limit"] = f"{need + 10:g}s"
    return dumps(scenario)


_DURATION_UNITS = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def _duration_s(text: str) -> float | None:
    """Seconds in a duration such as ``"10s"`` or ``"250ms"``; ``None`` if it
    is not one (the core then reports the error with its field path)."""
    for unit in sorted(_DURATION_UNITS, key=len, reverse=True):
        number = text[: -len(unit)]
        if text.endswith(unit) and number.replace(".", "", 1).isdigit():
            return float(number) * _DURATION_UNITS[unit]
    return None


def _ends(scenario: Mapping[str, Any], opts: Options) -> tuple[str, str]:
    hosts = [str(h.get("name")) for h in scenario.get("hosts") or [] if isinstance(h, dict)]
    links = [l for l in scenario.get("links") or [] if isinstance(l, dict)]
    for flag, name in (("local", opts.local), ("-H", opts.remote)):
        if name is not None and name not in hosts:
            raise NetperfError(f"{flag}: no host named {name!r} (hosts: {', '.join(hosts)})")
    local, remote = opts.local, opts.remote
    if local is None or remote is None:
        ends = [list(l.get("endpoints") or []) for l in links]
        pair = next((e for e in ends if len(e) == 2 and (local in e or remote in e)), None)
        pair = pair or (ends[0] if ends and len(ends[0]) == 2 else None)
        if pair is None:
            raise NetperfError("the scenario has no link to run the test over")
        if local is None:
            local = remote == pair[0] and pair[1] or pair[0]
        if remote is None:
            remote = pair[1] if local == pair[0] else pair[0]
    return str(local), str(remote)


def _is_count(text: str) -> bool:
    return text.lstrip("+-").isdigit()


def service_demand(util_percent: float, num_cpus: int, throughput: float) -> float:
    """netperf's service demand: ``U% · 10000 · num_cpus / throughput``.

    With ``throughput`` in KB/s (KB = 1024 bytes) it is µs of CPU per KB;
    in transactions/s, µs per transaction. NaN when the utilisation is
    unknown (an ideal host) or nothing was moved."""
    if math.isnan(util_percent) or throughput <= 0:
        return math.nan
    return util_percent * 10000.0 * num_cpus / throughput


def cpu(result: Result, host: str, elapsed_s: float) -> tuple[float, int]:
    """Host ``host``'s CPU utilisation in % over ``elapsed_s`` (all cores'
    busy time over cores × elapsed) and its number of cores; ``(nan, 0)``
    for an ideal host."""
    for h in result.hosts:
        if h.get("name") != host:
            continue
        timing = h.get("timing")
        if not isinstance(timing, dict):
            return math.nan, 0
        cores = [c for c in timing.get("cores") or [] if isinstance(c, dict)]
        busy = sum(float(c.get("busy_s") or 0.0) for c in cores)
        if not cores or elapsed_s <= 0:
            return math.nan, len(cores)
        return 100.0 * busy / (len(cores) * elapsed_s), len(cores)
    raise KeyError(host)


def omni_row(test: str, result: Result, units: str = "m") -> dict[str, Any]:
    """netperf's omni output of a finished run, one value per
    :data:`OMNI_COLUMNS` (NaN where it does not apply)."""
    workload = result.data.get("workload") or {}
    s = result.summary
    local = str(workload.get("from") or workload.get("client"))
    remote = str(workload.get("to") or workload.get("server"))
    elapsed = float(s.get("duration_s") or 0.0)
    u_local, n_local = cpu(result, local, elapsed)
    u_remote, n_remote = cpu(result, remote, elapsed)
    nan = math.nan
    row: dict[str, Any] = dict.fromkeys(OMNI_COLUMNS, nan)
    row["ELAPSED_TIME"] = elapsed
    if test in STREAM_TESTS:
        unit_name, unit_bytes = UNITS[units]
        recv_bytes_s = float(s.get("goodput_bps") or 0.0) / 8
        sent_bps = s.get("send_bps") if test == "UDP_STREAM" else s.get("goodput_bps")
        send_bytes_s = float(sent_bps or 0.0) / 8
        size = workload.get("write_size") if test == "TCP_STREAM" else workload.get("size")
        row.update(
            THROUGHPUT=recv_bytes_s / unit_bytes,
            THROUGHPUT_UNITS=unit_name,
            LOCAL_SEND_SIZE=_bytes(size),
            REMOTE_RECV_SIZE=_bytes(size),
            LOCAL_SEND_THROUGHPUT=send_bytes_s / unit_bytes,
            REMOTE_RECV_THROUGHPUT=recv_bytes_s / unit_bytes,
            LOCAL_SD=service_demand(u_local, n_local, send_bytes_s / 1024),
            REMOTE_SD=service_demand(u_remote, n_remote, recv_bytes_s / 1024),
            SD_UNITS="usec/KB",
        )
    else:
        rate = float(s.get("transaction_rate") or 0.0)
        micro = 1e6
        row.update(
            THROUGHPUT=rate,
            THROUGHPUT_UNITS="Trans/s",
            LOCAL_SEND_SIZE=_bytes(workload.get("request")),
            REMOTE_RECV_SIZE=_bytes(workload.get("request")),
            LOCAL_SD=service_demand(u_local, n_local, rate),
            REMOTE_SD=service_demand(u_remote, n_remote, rate),
            SD_UNITS="usec/Tran",
            TRANSACTION_RATE=rate,
            RT_LATENCY=micro / rate if rate > 0 else nan,
            MEAN_LATENCY=_micro(s.get("mean_latency_s")),
            P50_LATENCY=_micro(s.get("p50_latency_s")),
            P90_LATENCY=_micro(s.get("p90_latency_s")),
            P99_LATENCY=_micro(s.get("p99_latency_s")),
        )
    row["LOCAL_CPU_UTIL"] = u_local
    row["REMOTE_CPU_UTIL"] = u_remote
    return row


def _micro(seconds: Any) -> float:
    return math.nan if seconds is None else float(seconds) * 1e6


_SIZE_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "kB": 1000, "MB": 10**6, "GB": 10**9}


def _bytes(size: Any) -> float:
    """A canonical size string of a resolved scenario (``"64KiB"``) in bytes."""
    if size is None:
        return math.nan
    text = str(size)
    for unit in sorted(_SIZE_UNITS, key=len, reverse=True):
        if text.endswith(unit) and text[: -len(unit)].replace(".", "", 1).isdigit():
            value = float(text[: -len(unit)]) * _SIZE_UNITS[unit]
            return int(value) if value.is_integer() else value
    return math.nan


def run(
    test: str,
    scenario: str | None = None,
    options: Options | None = None,
    *,
    seed: int | None = None,
    progress: Any = None,
) -> tuple[Result, dict[str, Any]]:
    """Run netperf test ``test`` on the hosts and links of ``scenario`` (a
    path to a TOML file or TOML text; ``None``: two ideal hosts over GbE) and
    return the run's :class:`~nicsim.Result` and its omni row."""
    from .api import read_scenario
    from .api import run as run_scenario

    opts = options or Options()
    base = None if scenario is None else read_scenario(scenario)[0]
    result = run_scenario(scenario_text(test, base, opts), seed=seed, progress=progress)
    return result, omni_row(test, result, opts.units)


def write_csv(rows: list[dict[str, Any]], path: Any) -> None:
    """Write omni rows as netperf's CSV: a header of :data:`OMNI_COLUMNS`,
    then one line per row; NaN cells are empty."""
    def cell(value: Any) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return ""
        return repr(value) if isinstance(value, float) else str(value)

    with open(path, "w", encoding="utf-8", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(OMNI_COLUMNS)
        for r in rows:
            out.writerow([cell(r.get(c)) for c in OMNI_COLUMNS])
