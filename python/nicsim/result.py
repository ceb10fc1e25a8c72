"""The result of one run: the core's JSON report, as data and as tables."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


class Result:
    """One run's result.

    ``json`` is the report exactly as the core produced it (byte-identical for
    the same scenario and seed); ``data`` is that report parsed. Optional
    fields may be missing or ``None``. ``pcap_dir`` is where the run wrote its
    pcap files, if it was asked to.
    """

    def __init__(self, json_text: str, pcap_dir: str | os.PathLike[str] | None = None) -> None:
        self.json: str = json_text
        self.data: dict[str, Any] = json.loads(json_text)
        self.pcap_dir: Path | None = None if pcap_dir is None else Path(pcap_dir)

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

    def write(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write ``result.json``, ``summary.csv`` and ``links.csv`` into
        ``out_dir`` (created if needed) and return their paths.

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
        return [result_json, summary_csv, links_csv]

    def __repr__(self) -> str:
        goodput = self.summary.get("goodput_bps")
        verified = self.summary.get("verified")
        return f"<Result {self.name!r} seed={self.seed} goodput_bps={goodput} verified={verified}>"
