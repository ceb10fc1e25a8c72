"""nicsim.plots: every figure renders to a sane PNG and PDF with the right
title, axes and marks; `nicsim plot` overlays result directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.image
import pandas as pd
import pytest
from conftest import run_cli
from matplotlib.figure import Figure

from nicsim import Result, plots

# 7 x 4.5 inches at 150 dpi.
PNG_SHAPE = (675, 1050)

SIZES = [2**k for k in range(0, 21, 2)]  # 1 B to 1 MiB


def latency_plus_transfer(n: int) -> float:
    """10 us of latency plus 8 ns per byte: a knee at 8 KiB (b n >= 6.46 a)."""
    return 1e-5 + 8e-9 * n


CURVE = pd.DataFrame({"bytes": SIZES, "time_s": [latency_plus_transfer(n) for n in SIZES]})
SLOWER = CURVE.assign(time_s=CURVE["time_s"] * 3)

CYCLES = pd.DataFrame(
    {
        "host": ["a", "a", "a", "b", "b", "b", "b"],
        "layer": ["copy", "tcp", "ip", "copy", "tcp", "ip", "syscall"],
        "cycles": [6_000_000, 3_000_000, 1_000_000, 5_000_000, 4_000_000, 1_000_000, 10_000],
    }
)


def png_of(fig: Figure, path: Path) -> Any:
    written = plots.save(fig, path)
    assert written == [path]
    assert path.stat().st_size > 5_000
    return matplotlib.image.imread(path)


def only_axes(fig: Figure) -> Any:
    assert len(fig.axes) == 1
    return fig.axes[0]


def legend_texts(ax: Any) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


def test_throughput_vs_size(tmp_path: Path) -> None:
    fig = plots.throughput_vs_size(CURVE, ["ideal"])
    ax = only_axes(fig)
    assert ax.get_title() == "NetPIPE throughput vs block size"
    assert ax.get_xlabel() == "Block size (bytes)"
    assert "Mbps" in ax.get_ylabel() and "2^{20}" in ax.get_ylabel()
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    (line,) = ax.get_lines()
    expected = [n * 8 / latency_plus_transfer(n) / 2**20 for n in SIZES]
    assert list(line.get_ydata()) == pytest.approx(expected)
    assert legend_texts(ax) == [f"ideal (peak {max(expected):.1f} Mbps)"]
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] > max(expected)
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert "1 KiB" in ticks and "1 MiB" in ticks
    assert png_of(fig, tmp_path / "t.png").shape[:2] == PNG_SHAPE


def test_throughput_in_si_units() -> None:
    ax = only_axes(plots.throughput_vs_size(CURVE, si=True))
    assert "Mbit/s" in ax.get_ylabel()
    (line,) = ax.get_lines()
    assert line.get_ydata()[-1] == pytest.approx(2**20 * 8 / latency_plus_transfer(2**20) / 1e6)


def test_signature_marks_the_latency(tmp_path: Path) -> None:
    fig = plots.signature(CURVE, ["ideal"])
    ax = only_axes(fig)
    assert ax.get_title() == "NetPIPE signature graph"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
    assert "One-way time" in ax.get_xlabel() and "(s," in ax.get_xlabel()
    assert "Mbps" in ax.get_ylabel()
    first = CURVE["time_s"][0]  # 10.008 us
    assert legend_texts(ax) == ["ideal (latency 10.01 µs)"]
    assert [a.get_text() for a in ax.texts] == ["latency 10.01 µs"]
    assert ax.texts[0].xy[0] == first
    assert any(list(line.get_xdata()) == [first, first] for line in ax.get_lines())  # axvline
    assert png_of(fig, tmp_path / "s.png").shape[:2] == PNG_SHAPE


def test_overlays_keep_labels_in_the_legend() -> None:
    ax = only_axes(plots.signature([CURVE, SLOWER], ["fast", "slow"]))
    assert [t.split(" (")[0] for t in legend_texts(ax)] == ["fast", "slow"]
    assert len(ax.texts) == 0  # no arrows that could cross the other curve
    with pytest.raises(ValueError, match="1 labels for 2"):
        plots.throughput_vs_size([CURVE, SLOWER], ["one"])


def test_saturation_marks_the_knee(tmp_path: Path) -> None:
    fig = plots.saturation(CURVE, ["ideal"])
    ax = only_axes(fig)
    assert ax.get_title() == "NetPIPE saturation graph"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "Block size (bytes)"
    assert "One-way time" in ax.get_ylabel()
    knee = plots.saturation_knee(CURVE)
    assert knee == 16384  # 4 KiB steps: 8 KiB is not measured
    assert legend_texts(ax) == ["ideal (saturation from 16,384 B)"]
    assert any(list(line.get_xdata()) == [knee, knee] for line in ax.get_lines())
    assert png_of(fig, tmp_path / "k.png").shape[:2] == PNG_SHAPE


def test_rtt_is_twice_the_one_way_time() -> None:
    ax = only_axes(plots.rtt_vs_size(CURVE))
    assert ax.get_title() == "Round-trip time vs block size"
    assert "Round-trip time" in ax.get_ylabel()
    (line,) = ax.get_lines()
    assert list(line.get_ydata()) == pytest.approx([2 * t for t in CURVE["time_s"]])


def test_cpu_load_and_interrupts_take_plain_series(tmp_path: Path) -> None:
    receiver = [(65536, 0.9), (64, 0.2), (1024, 0.5)]
    sender = [(64, 0.1), (1024, 0.3), (65536, 0.6)]
    fig = plots.cpu_load_vs_size([receiver, sender], ["receiver", "sender"])
    ax = only_axes(fig)
    assert ax.get_title() == "CPU load vs block size"
    assert ax.get_ylabel() == "CPU utilization (%)"
    assert ax.get_xlabel() == "Block size (bytes)"
    first = ax.get_lines()[0]
    assert list(first.get_xdata()) == [64, 1024, 65536]  # sorted by size
    assert list(first.get_ydata()) == pytest.approx([20, 50, 90])
    assert legend_texts(ax) == ["receiver", "sender"]
    assert png_of(fig, tmp_path / "c.png").shape[:2] == PNG_SHAPE

    ax = only_axes(plots.interrupts_vs_size([(64, 12000.0), (4096, 8000.0)]))  # one series
    assert ax.get_ylabel() == "Interrupts per second"
    assert len(ax.get_lines()) == 1 and ax.get_legend() is None


def test_layer_bars_stack_each_hosts_layers(tmp_path: Path) -> None:
    fig = plots.layer_bars(CYCLES)
    ax = only_axes(fig)
    assert ax.get_title() == "CPU cycles by layer"
    assert ax.get_ylabel() == "CPU cycles (millions)"
    assert ax.get_xlabel() == "Host"
    assert len(ax.patches) == 2 * 4  # 2 hosts x 4 layers (a has no syscall: a 0 bar)
    tops = {}
    for patch in ax.patches:
        x = round(patch.get_x() + patch.get_width() / 2)
        tops[x] = max(tops.get(x, 0.0), patch.get_y() + patch.get_height())
    assert tops == pytest.approx({0: 10.0, 1: 10.01})
    # most cycles at the bottom; legend read from the top down
    assert legend_texts(ax) == ["syscall", "ip", "tcp", "copy"]
    assert png_of(fig, tmp_path / "bars.png").shape[:2] == PNG_SHAPE

    shares = only_axes(plots.layer_bars(CYCLES, share=True))
    assert "%" in shares.get_ylabel()
    assert max(p.get_y() + p.get_height() for p in shares.patches) == pytest.approx(100)


def test_layer_pie_merges_small_layers(tmp_path: Path) -> None:
    fig = plots.layer_pie(CYCLES, "b")
    ax = only_axes(fig)
    assert ax.get_title() == "CPU cycles by layer on host b"
    labels = legend_texts(ax)  # 5 / 10.01 = 49.95 %, 0.01 / 10.01 < 2 %: other
    assert labels == ["copy (50.0 %)", "tcp (40.0 %)", "ip (10.0 %)", "other (0.1 %)"]
    assert len(ax.patches) == 4
    assert png_of(fig, tmp_path / "pie.png").shape[:2] == PNG_SHAPE
    with pytest.raises(ValueError, match="no cycles for host 'c'"):
        plots.layer_pie(CYCLES, "c")


def test_save_writes_png_and_pdf_for_a_stem(tmp_path: Path) -> None:
    stem = tmp_path / "deep" / "run.v2"
    written = plots.save(plots.saturation(CURVE), stem)
    assert written == [tmp_path / "deep" / "run.v2.png", tmp_path / "deep" / "run.v2.pdf"]
    assert written[0].read_bytes().startswith(b"\x89PNG")
    assert written[1].read_bytes().startswith(b"%PDF")
    fig = plots.throughput_vs_size(CURVE, path=tmp_path / "only.pdf")
    assert isinstance(fig, Figure)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "only.pdf"]


def test_figures_are_reproducible(tmp_path: Path) -> None:
    for name in ("one", "two"):
        plots.signature([CURVE, SLOWER], ["a", "b"], path=tmp_path / name)
    for ext in (".png", ".pdf"):
        one = (tmp_path / f"one{ext}").read_bytes()
        assert one == (tmp_path / f"two{ext}").read_bytes(), ext


def result_dir(folder: Path, name: str, table: pd.DataFrame) -> Path:
    """A result directory as `nicsim run` leaves it: result.json, netpipe.csv."""
    points = [
        {"bytes": int(r.bytes), "nrepeat": 3, "time_s": float(r.time_s),
         "mbps": r.bytes * 8 / r.time_s / 2**20}
        for r in table.itertuples()
    ]  # fmt: skip
    report = {"scenario": {"name": name}, "workload": {"kind": "netpipe"}, "summary": {},
              "netpipe": points}  # fmt: skip
    Result(json.dumps(report)).write(folder)
    return folder


def test_load_netpipe_reads_result_directories(tmp_path: Path) -> None:
    folder = result_dir(tmp_path / "r1", "fast-run", CURVE)
    [(label, table)] = plots.load_netpipe(folder)
    assert label == "fast-run"
    assert table["bytes"].tolist() == SIZES
    assert table["mbit_s_si"].tolist() == pytest.approx(
        [n * 8 / latency_plus_transfer(n) / 1e6 for n in SIZES]
    )
    with pytest.raises(FileNotFoundError, match="no netpipe.csv"):
        plots.load_netpipe(tmp_path)


def test_cli_plot_overlays_result_dirs(tmp_path: Path) -> None:
    one = result_dir(tmp_path / "one", "fast-run", CURVE)
    two = result_dir(tmp_path / "two", "slow-run", SLOWER)
    out = tmp_path / "figs"
    done = run_cli("plot", one, two, "--labels", "fast,slow", "--out", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"figures written to {out}: netpipe-throughput.png, ")
    for stem in plots.NETPIPE_FIGURES:
        assert matplotlib.image.imread(out / f"{stem}.png").shape[:2] == PNG_SHAPE
        assert (out / f"{stem}.pdf").stat().st_size > 1_000


def test_cli_plot_errors_are_one_line(tmp_path: Path) -> None:
    one = result_dir(tmp_path / "one", "fast-run", CURVE)
    done = run_cli("plot", one, "--labels", "a,b", "--out", tmp_path / "figs")
    assert done.returncode == 2
    assert done.stderr == "error: --labels gives 2 labels for 1 result directories\n"
    done = run_cli("plot", tmp_path, "--out", tmp_path / "figs")
    assert done.returncode == 2
    assert done.stderr == f"error: {tmp_path}: no netpipe.csv (not a NetPIPE result?)\n"
    assert not (tmp_path / "figs").exists()
