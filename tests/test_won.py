"""`nicsim reproduce won`: the Won study end to end (a few seconds), checked
against the physics the study describes, from the files it writes."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from nicsim.cli import main

MTU = 1500


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("won")
    out = results / "report"
    res = CliRunner().invoke(main, ["reproduce", "won", "--results", str(results), "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_study_layers_add_up_to_each_total(report: Path) -> None:
    totals = {(r["protocol"], int(r["size"])): r for r in _rows(report / "totals.csv")}
    sums: dict[tuple[str, int, str], float] = {}
    for r in _rows(report / "layers.csv"):
        key = (r["protocol"], int(r["size"]), r["path"])
        sums[key] = sums.get(key, 0.0) + float(r["cycles"])
    assert {k[0] for k in sums} == {"udp", "via"}
    for (proto, size, path), s in sums.items():
        assert s == pytest.approx(float(totals[(proto, size)][f"{path}_cycles"]), abs=1.0), (proto, size, path)
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "add up to the\ntotal in every one." in text


def test_via_beats_udp_at_every_size_and_the_factors_are_in_the_closing_note(report: Path) -> None:
    rows = _rows(report / "improvement.csv")
    assert len(rows) >= 8
    text = (report / "report.md").read_text(encoding="utf-8")
    for r in rows:
        for path in ("send", "receive"):
            factor = float(r[f"udp_{path}"]) / float(r[f"via_{path}"])
            assert factor > 1.0, r
            assert float(r[f"{path}_factor"]) == pytest.approx(factor, abs=0.01)
        assert f"| {r['size']} |" in text.split("## Improvement factor")[1]


def test_udp_send_grows_in_ip_and_fragmentation_lands_above_the_mtu(report: Path) -> None:
    layers = {
        (r["protocol"], int(r["size"]), r["path"], r["layer"]): float(r["cycles"])
        for r in _rows(report / "nicsim-layers.csv")
    }
    study = {(r["protocol"], int(r["size"]), r["path"], r["layer"]): float(r["cycles"]) for r in _rows(report / "layers.csv")}
    sizes = sorted({k[1] for k in study})
    for s in sizes:
        one_frame = s + 28 <= MTU
        for path in ("send", "receive"):
            frag = layers.get(("udp", s, path, "ip_frag"), 0.0)
            assert (frag == 0) == one_frame, (s, path, frag)
        # The send copy is IP's, the receive copy UDP's.
        assert study[("udp", s, "send", "ip")] >= layers[("udp", s, "send", "copy")]
        assert study[("udp", s, "receive", "udp")] >= layers[("udp", s, "receive", "copy")]
        # VIA send never copies; socket work is constant.
        assert ("via", s, "send", "copy") not in layers
        assert study[("udp", s, "send", "socket")] == study[("udp", sizes[0], "send", "socket")]
    ips = [study[("udp", s, "send", "ip")] for s in sizes]
    assert ips == sorted(ips) and ips[-1] > 10 * ips[0]


def test_report_has_every_figure(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    for name in ("fig3-total-cycles", "fig4-send-layers", "fig5-receive-layers", "fig6-send-256B", "fig7-receive-4KB"):
        assert f"({name}.png)" in text
        assert (report / f"{name}.png").read_bytes().startswith(b"\x89PNG")
        assert (report / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    assert "## What the model says" in text and "does NOT hold" not in text
