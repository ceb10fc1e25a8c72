"""Reports, the progress bar and reproductions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from nicsim.campaign import Cache, LocalExecutor, Reproduction, Sweep
from nicsim.campaign.report import aggregate, ordered_values, swept_knobs, write_report


def test_values_are_ordered_by_magnitude() -> None:
    assert ordered_values(["1Gbps", "100Mbps", "10Gbps", "1Gbps"]) == ["100Mbps", "1Gbps", "10Gbps"]
    assert ordered_values(["64KiB", "1MiB", "1000B"]) == ["1000B", "64KiB", "1MiB"]
    assert ordered_values([3, 1, 2]) == [1, 2, 3]
    assert ordered_values(["reno", "cubic", "none"]) == ["reno", "cubic", "none"]  # as written
    assert ordered_values([True, False]) == [True, False]


def test_report_with_replicas_and_a_zip_axis(
    tmp_path: Path, base_file: Path, local: Callable[[int], LocalExecutor]
) -> None:
    sweep = Sweep(
        base_file,
        grid={"links[0].rate": ["1Gbps", "100Mbps"]},
        zip={
            "hosts[0].tcp.tx_buffer": ["64KiB", "1MiB"],
            "hosts[1].tcp.rx_buffer": ["64KiB", "1MiB"],
        },
        replicas=2,
        name="report",
        description="a test report",
    )
    frame = sweep.run(local(2), tmp_path / "results", progress=False)
    knobs = swept_knobs(frame)
    assert knobs == ["links[0].rate", "hosts[0].tcp.tx_buffer", "hosts[1].tcp.rx_buffer"]
    table = aggregate(frame, knobs, ["goodput_bps"])
    assert len(table) == 4 and list(table["runs"]) == [2, 2, 2, 2]
    first = frame[
        (frame["links[0].rate"] == "1Gbps") & (frame["hosts[0].tcp.tx_buffer"] == "64KiB")
    ]
    assert table["goodput_bps"][0] == pytest.approx(first["goodput_bps"].mean())

    written = write_report(
        frame,
        tmp_path / "report",
        title="Sweep report",
        description="a test report",
        axes=sweep.axes,
        html_page=True,
    )
    names = sorted(p.name for p in written)
    # One figure per axis: the zip group is one axis, named by its first knob.
    assert names == ["hosts_0__tcp_tx_buffer.png", "links_0__rate.png", "report.html", "report.md"]
    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "- ok / failed / missing: 8 / 0 / 0" in md
    assert "goodput (Mbit/s) vs hosts[0].tcp.tx_buffer = hosts[1].tcp.rx_buffer" in md
    rows = [line for line in md.splitlines() if line.startswith("| 1") or line.startswith("| 100")]
    assert [r.split(" | ")[0] for r in rows] == ["| 1Gbps", "| 1Gbps", "| 100Mbps", "| 100Mbps"]
    with pytest.raises(ValueError, match="no metric 'nonsense'"):
        write_report(frame, tmp_path / "bad", title="x", metrics=["nonsense"])


def test_progress_bar_on_request(
    tmp_path: Path,
    base_file: Path,
    capsys: pytest.CaptureFixture[str],
    local: Callable[[int], LocalExecutor],
) -> None:
    sweep = Sweep(base_file, grid={"links[0].rate": ["1Gbps", "10Gbps"]}, name="progress")
    sweep.run_missing(local(1), tmp_path / "results", progress=True)
    err = capsys.readouterr().err
    assert "progress" in err and "2/2" in err and "ETA" in err
    sweep = Sweep(base_file, grid={"links[0].rate": ["2Gbps"]}, name="quiet")
    sweep.run_missing(local(1), tmp_path / "results")  # not a terminal: no bar
    assert capsys.readouterr().err == ""


def test_a_reproduction_runs_its_sweeps_into_one_cache_and_reports(
    tmp_path: Path, base_file: Path, local: Callable[[int], LocalExecutor]
) -> None:
    rates = Sweep(base_file, grid={"links[0].rate": ["1Gbps", "10Gbps"]}, name="rates")
    mtus = Sweep(
        base_file, grid={"links[0].mtu": ["1000B", "1500B"]}, name="mtus"
    )  # 1500B at 1Gbps: shared

    def report(frames, out: Path) -> list[Path]:  # noqa: ANN001
        out.mkdir(parents=True, exist_ok=True)
        path = out / "summary.txt"
        path.write_text(
            " ".join(f"{n}:{len(f)}" for n, f in sorted(frames.items())), encoding="utf-8"
        )
        return [path]

    study = Reproduction("study", [rates, mtus], report=report)
    frames = study.run(local(2), tmp_path / "results", progress=False)
    assert set(frames) == {"rates", "mtus"}
    assert study.stats["rates"].computed == 2
    assert study.stats["mtus"].computed == 1  # the shared point was already there
    assert study.write_report(tmp_path / "report", frames)[0].read_text() == "mtus:2 rates:2"
    with Cache(tmp_path / "results") as cache:
        assert cache.sweeps() == ["mtus", "rates"]
    with pytest.raises(ValueError, match="repeated: rates"):
        Reproduction("twice", [rates, rates])
