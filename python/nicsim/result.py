"""The result of one run: the core's JSON report, as data and as tables."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

HOST_COLUMNS: dict[str, str] = {
    "name": "object",
    "ip": "object",
    "tx_frames": "Int64",
    "rx_frames": "Int64",
    "profile": "object",
    "cpu_utilization": "float64",
    "max_core_utilization": "float64",
    "interrupts": "Int64",
    "interrupts_per_s": "float64",
    "bus_utilization": "float64",
    "rx_fifo_drops": "Int64",
    "rx_from_llc": "float64",
    "machine": "object",
}
"""Columns of :meth:`Result.hosts_table` and their dtypes; from ``profile``
on they are missing (NA) for ideal hosts. ``rx_from_llc`` is the share of
the received bytes the host's reads copied that DDIO had left in the
last-level cache (the rest came from memory); NA on a host without DDIO
(``memory.ddio``) or that read nothing. ``machine`` names the machine whose
PCIe link, memory and DDIO ways the host shares with others
(``hosts[i].machine``), NA for a machine of its own; on such a host
``bus_utilization`` is the machine's link's."""

CYCLES_COLUMNS: dict[str, str] = {
    "host": "object",
    "layer": "object",
    "cycles": "int64",
    "share": "float64",
}
"""Columns of :meth:`Result.cycles_table` and their dtypes."""

NETPIPE_COLUMNS: dict[str, str] = {
    "bytes": "int64",
    "nrepeat": "int64",
    "time_s": "float64",
    "mbps": "float64",
    "mbit_s_si": "float64",
}
"""Columns of :meth:`Result.netpipe_table` and their dtypes: block size,
messages per trial, time per block (one way for ping-pong), throughput in
NetPIPE's Mbps (2^20 bit/s) and in SI Mbit/s (10^6 bit/s)."""


BULK_FLOW_COLUMNS: dict[str, str] = {
    "flow": "int64",
    "from": "object",
    "to": "object",
    "bytes": "int64",
    "start_s": "float64",
    "end_s": "float64",
    "goodput_bps": "float64",
}
"""Columns of :meth:`Result.bulk_flows_table`: flow index, sending and
receiving host, bytes delivered,
connection established and last byte delivered (s), goodput (bit/s)."""


def np_out_line(nbytes: int, mbps: float, time_s: float) -> str:
    """One line of NetPIPE 3.7.2's ``np.out``, newline included: what
    ``fprintf(out, "%8d %lf %12.8lf\\n", bytes, Mbps, t)`` prints (bytes right
    aligned in 8 columns, Mbps with 6 decimals, seconds right aligned in 12
    columns with 8 decimals)."""
    # Python's "d" and "f" specs round and pad exactly as C's printf does.
    return f"{nbytes:8d} {mbps:f} {time_s:12.8f}\n"


class Result:
    """One run's result.

    ``json`` is the report exactly as the core produced it (byte-identical for
    the same scenario and seed); ``data`` is that report parsed. Optional
    fields may be missing or ``None``. ``pcap_dir`` is where the run wrote its
    pcap files, if it was asked to. ``records`` maps each event name the run
    was asked to record (``nicsim.run(..., record=[...])``) to a DataFrame
    of those events; it is empty otherwise.
    """

    def __init__(
        self,
        json_text: str,
        pcap_dir: str | os.PathLike[str] | None = None,
        *,
        records: dict[str, pd.DataFrame] | None = None,
    ) -> None:
        self.json: str = json_text
        self.data: dict[str, Any] = json.loads(json_text)
        self.pcap_dir: Path | None = None if pcap_dir is None else Path(pcap_dir)
        self.records: dict[str, pd.DataFrame] = records or {}

    @property
    def summary(self) -> dict[str, Any]:
        """Headline numbers: goodput, duration, frames, drops, verified, ..."""
        summary: dict[str, Any] = self.data.get("summary") or {}
        return summary

    @property
    def name(self) -> str:
        """The scenario's name."""
        scenario = self.data.get("scenario") or {}
        return str(scenario.get("name") or "")

    @property
    def seed(self) -> int | None:
        """The seed the run used."""
        seed: int | None = self.data.get("seed")
        return seed

    @property
    def workload(self) -> str:
        """The workload kind, e.g. ``"bulk"``."""
        workload = self.data.get("workload") or {}
        return str(workload.get("kind") or "")

    @property
    def pcaps(self) -> list[Path]:
        """The pcap files the run wrote (one per link), if it was asked to."""
        names = self.data.get("pcaps") or []
        folder = self.pcap_dir if self.pcap_dir is not None else Path()
        return [folder / name for name in names]

    def table(self) -> pd.DataFrame:
        """One row: scenario, workload, seed, nicsim version and the summary."""
        import pandas as pd

        row: dict[str, Any] = {
            "scenario": self.name,
            "workload": self.workload,
            "seed": self.seed,
            "nicsim_version": self.data.get("nicsim_version"),
        }
        row.update(self.summary)
        return pd.DataFrame([row])

    def links_table(self) -> pd.DataFrame:
        """One row per link direction: frames, bytes, drops, utilization, ..."""
        import pandas as pd

        return pd.DataFrame(self.data.get("links") or [])

    @property
    def hosts(self) -> list[dict[str, Any]]:
        """The report's hosts: name, ip, counters, and ``timing`` (``None``
        for an ideal host)."""
        return [h for h in self.data.get("hosts") or [] if isinstance(h, dict)]

    def hosts_table(self) -> pd.DataFrame:
        """One row per host: name, ip, frames sent and received, and for
        timed hosts the profile, mean and busiest-core CPU utilization,
        interrupts and interrupts per second (all cores), bus utilization,
        NIC receive-FIFO drops and, with DDIO, the share of the bytes read
        found in the last-level cache. The columns are always there
        (:data:`HOST_COLUMNS`); the timing ones are NA for ideal hosts."""
        rows = []
        for host in self.hosts:
            row: dict[str, Any] = {
                "name": host.get("name"),
                "ip": host.get("ip"),
                "tx_frames": host.get("tx_frames"),
                "rx_frames": host.get("rx_frames"),
            }
            timing = host.get("timing")
            if isinstance(timing, dict):
                cores = [c for c in timing.get("cores") or [] if isinstance(c, dict)]
                utilizations = [c["utilization"] for c in cores if c.get("utilization") is not None]
                row.update(
                    profile=timing.get("profile"),
                    cpu_utilization=timing.get("cpu_utilization"),
                    max_core_utilization=max(utilizations, default=None),
                    interrupts=sum(c.get("interrupts") or 0 for c in cores),
                    interrupts_per_s=sum(c.get("interrupts_per_s") or 0.0 for c in cores),
                    bus_utilization=timing.get("bus_utilization"),
                    rx_fifo_drops=(timing.get("nic") or {}).get("rx_fifo_drops"),
                    rx_from_llc=_llc_share(timing.get("rx_copy")),
                    machine=timing.get("machine"),
                )
            rows.append(row)
        return _typed_frame(rows, HOST_COLUMNS)

    def cycles_table(self) -> pd.DataFrame:
        """Where the CPU cycles of each timed host went: one row per (host,
        layer) with the cycles, all cores together, and the layer's share of
        that host's cycles. Empty, with the columns of
        :data:`CYCLES_COLUMNS`, when no host is timed."""
        rows = []
        for host in self.hosts:
            timing = host.get("timing")
            if not isinstance(timing, dict):
                continue
            cycles = {k: v for k, v in (timing.get("cycles") or {}).items() if v}
            total = sum(cycles.values())
            for layer, n in cycles.items():
                rows.append(
                    {"host": host.get("name"), "layer": layer, "cycles": n, "share": n / total}
                )
        return _typed_frame(rows, CYCLES_COLUMNS)

    def bulk_flows_table(self) -> pd.DataFrame:
        """A bulk transfer with several flows: one row per flow (see
        :data:`BULK_FLOW_COLUMNS`); empty, with those columns, otherwise. The
        summary's ``jain_fairness`` is Jain's index over their goodputs."""
        rows = [r for r in self.data.get("bulk_flows") or [] if isinstance(r, dict)]
        return _typed_frame(rows, BULK_FLOW_COLUMNS)

    @property
    def netpipe(self) -> list[dict[str, Any]] | None:
        """NetPIPE's points (``bytes``, ``nrepeat``, ``time_s``, ``mbps``),
        one per block size in the order measured; ``None`` for other
        workloads."""
        points = self.data.get("netpipe")
        if not isinstance(points, list):
            return None
        return [p for p in points if isinstance(p, dict)]

    def netpipe_table(self) -> pd.DataFrame:
        """NetPIPE's measurements, one row per block size in the order
        measured: ``bytes``, ``nrepeat``, ``time_s`` (the minimum over trials
        of the time per block, one way for ping-pong), ``mbps`` (NetPIPE's
        Mbps, bytes × 8 / time / 2^20) and ``mbit_s_si`` (bytes × 8 / time /
        10^6). Empty, with the columns of :data:`NETPIPE_COLUMNS`, for other
        workloads."""
        rows = [{**p, "mbit_s_si": _si_mbit_s(p)} for p in self.netpipe or []]
        return _typed_frame(rows, NETPIPE_COLUMNS)

    def np_out(self) -> str:
        """The run as NetPIPE 3.7.2 writes ``np.out``: one line per block size,
        ``bytes Mbps seconds`` (see :func:`np_out_line`); empty for other
        workloads."""
        return "".join(
            np_out_line(int(p["bytes"]), float(p["mbps"]), float(p["time_s"]))
            for p in self.netpipe or []
        )

    def write(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write ``result.json``, ``summary.csv``, ``links.csv``,
        ``hosts.csv`` and ``cycles.csv`` into ``out_dir`` (created if needed)
        and return their paths; a bulk transfer with several flows also gets
        ``flows.csv`` (the :meth:`bulk_flows_table`). A NetPIPE run also gets ``np.out`` (as
        NetPIPE writes it, see :meth:`np_out`) and ``netpipe.csv`` (the
        :meth:`netpipe_table`).

        The files hold nothing that varies between runs of the same scenario
        and seed: ``result.json`` is :attr:`json` byte for byte.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        result_json = out / "result.json"
        result_json.write_bytes(self.json.encode("utf-8"))
        summary_csv = out / "summary.csv"
        self.table().to_csv(summary_csv, index=False, lineterminator="\n")
        links_csv = out / "links.csv"
        self.links_table().to_csv(links_csv, index=False, lineterminator="\n")
        hosts_csv = out / "hosts.csv"
        self.hosts_table().to_csv(hosts_csv, index=False, lineterminator="\n")
        cycles_csv = out / "cycles.csv"
        self.cycles_table().to_csv(cycles_csv, index=False, lineterminator="\n")
        written = [result_json, summary_csv, links_csv, hosts_csv, cycles_csv]
        if self.data.get("bulk_flows"):
            flows_csv = out / "flows.csv"
            self.bulk_flows_table().to_csv(flows_csv, index=False, lineterminator="\n")
            written.append(flows_csv)
        if self.netpipe is not None:
            np_out = out / "np.out"
            np_out.write_bytes(self.np_out().encode("ascii"))
            netpipe_csv = out / "netpipe.csv"
            self.netpipe_table().to_csv(netpipe_csv, index=False, lineterminator="\n")
            written += [np_out, netpipe_csv]
        return written

    def __repr__(self) -> str:
        if self.netpipe is not None:
            points, latency = len(self.netpipe), self.summary.get("latency_s")
            return f"<Result {self.name!r} seed={self.seed} points={points} latency_s={latency}>"
        goodput = self.summary.get("goodput_bps")
        verified = self.summary.get("verified")
        return f"<Result {self.name!r} seed={self.seed} goodput_bps={goodput} verified={verified}>"


def _si_mbit_s(point: dict[str, Any]) -> float | None:
    """A NetPIPE point's throughput in SI Mbit/s (10^6 bit/s)."""
    time_s = point.get("time_s")
    return point["bytes"] * 8 / time_s / 1e6 if time_s else None


def _typed_frame(rows: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    """``rows`` as a DataFrame with exactly ``columns``, in order and typed;
    a key a row lacks is NA."""
    import pandas as pd

    return pd.DataFrame(
        {
            name: pd.Series([row.get(name) for row in rows], dtype=dtype)
            for name, dtype in columns.items()
        }
    )


def _llc_share(rx_copy: Any) -> float | None:
    """The share of the bytes a host's reads copied that they found in the
    last-level cache (its report's ``timing.rx_copy``, present with DDIO);
    ``None`` without the report or without a byte read."""
    if not isinstance(rx_copy, dict):
        return None
    read = rx_copy.get("read_bytes") or 0
    return rx_copy.get("llc_bytes", 0) / read if read > 0 else None
