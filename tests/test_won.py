"""`nicsim reproduce won`: the Won study end to end (about ten seconds),
checked against the physics the study describes, from the files it writes."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from nicsim.cli import main
from nicsim.studies import comparison
from nicsim.studies.won import SIZES, STUDY

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


def _study(report: Path) -> dict[tuple[str, int, str, str], float]:
    return {(r["protocol"], int(r["size"]), r["path"], r["layer"]): float(r["cycles"]) for r in _rows(report / "layers.csv")}


def _nicsim(report: Path) -> dict[tuple[str, int, str, str], float]:
    return {
        (r["protocol"], int(r["size"]), r["path"], r["layer"]): float(r["cycles"])
        for r in _rows(report / "nicsim-layers.csv")
    }


def test_study_layers_add_up_to_each_total(report: Path) -> None:
    totals = {(r["protocol"], int(r["size"])): r for r in _rows(report / "totals.csv")}
    sums: dict[tuple[str, int, str], float] = {}
    for (proto, size, path, _), v in _study(report).items():
        sums[(proto, size, path)] = sums.get((proto, size, path), 0.0) + v
    assert {k[0] for k in sums} == {"udp", "via"} and {k[1] for k in sums} == set(SIZES)
    for (proto, size, path), s in sums.items():
        assert s == pytest.approx(float(totals[(proto, size)][f"{path}_cycles"]), abs=1.0), (proto, size, path)
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "add up to the\ntotal in every one." in text


def test_comparison_has_a_factor_per_size_and_path_with_min_and_max(report: Path) -> None:
    rows = {r.id: r for r in comparison.read(report / "comparison.csv")}
    improvement = {int(r["size"]): r for r in _rows(report / "improvement.csv")}
    for path in ("send", "receive"):
        factors = []
        for size in SIZES:
            r = rows[f"factor.{path}.{size}"]
            # Held out: no published value, a prediction, the ratio of the two totals.
            assert (r.role, r.published, r.unit) == ("prediction", None, "ratio")
            i = improvement[size]
            assert r.nicsim == pytest.approx(float(i[f"udp_{path}"]) / float(i[f"via_{path}"]), abs=0.01)
            assert r.nicsim > 1.0, f"M-VIA beats UDP/IP on {path} at {size} B"
            factors.append(r.nicsim)
        assert rows[f"factor.{path}.min"].nicsim == min(factors)
        assert rows[f"factor.{path}.max"].nicsim == max(factors)


def test_every_claim_is_a_row_and_every_failing_one_is_explained(report: Path) -> None:
    rows = [r for r in comparison.read(report / "comparison.csv") if r.role == "claim"]
    ids = {r.id for r in rows}
    assert len(rows) == len(ids) >= 20
    for must in ("claim.via_no_dev", "claim.via_library_negligible", "claim.udp_socket_constant",
                 "claim.udp_recv_4k_ip_dominates", "claim.via_4k_recv_intr", "claim.dma_linear"):
        assert must in ids
    text = (report / "report.md").read_text(encoding="utf-8")
    for r in rows:
        assert r.nicsim in (0.0, 1.0)
        assert f"`{r.id}`" in text
        if r.nicsim == 0.0:
            assert f"- `{r.id}`: " in text.split("Why the claims that do not hold")[1], r.id
    assert "not explained yet" not in text


def test_mechanisms_no_dev_in_via_constant_library_receive_in_intr(report: Path) -> None:
    study, nicsim = _study(report), _nicsim(report)
    for size in SIZES:
        for path in ("send", "receive"):
            assert ("via", size, path, "dev") not in study
            assert ("via", size, path, "device") not in nicsim
            assert study[("via", size, path, "vi_library")] == study[("via", SIZES[0], path, "vi_library")]
            assert study[("udp", size, path, "socket")] == study[("udp", SIZES[0], path, "socket")]
        # Receives are handled by Intr (and Dev): no Dev Drv for either protocol.
        assert study[("udp", size, "receive", "dev_drv")] == 0
        assert study[("via", size, "receive", "dev_drv")] == 0
        # Zero-copy send: M-VIA copies nothing on send, and once on receive.
        assert ("via", size, "send", "copy") not in nicsim
        assert nicsim[("via", size, "receive", "copy")] > 0
        # Fragmentation and defragmentation in IP exactly above the MTU.
        one_frame = size + 28 <= MTU
        for path in ("send", "receive"):
            assert (nicsim.get(("udp", size, path, "ip_frag"), 0.0) == 0) == one_frame, (size, path)


def test_only_dma_moves_with_the_clock(report: Path) -> None:
    rows = _rows(report / "clock.csv")
    assert rows
    for r in rows:
        cpu = {r[k] for k in r if k.startswith("factor_without_dma")}
        assert len(cpu) == 1, f"CPU-only factor moved with the clock: {r}"
        # DMA is a rate in time: a faster clock adds DMA cycles to both
        # protocols, which pulls the factor towards 1.
        assert float(r["factor_100MHz"]) >= float(r["factor_200MHz"]) >= float(r["factor_400MHz"]), r
    assert "equal those at the profile's 200 MHz at every size and on both paths: yes" in (
        report / "report.md"
    ).read_text(encoding="utf-8")


def test_report_has_every_figure_and_section(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    for name in ("fig3-total-cycles", "fig4-send-layers", "fig5-receive-layers", "fig6-send-256B", "fig7-receive-4KB"):
        assert f"({name}.png)" in text
        assert (report / f"{name}.png").read_bytes().startswith(b"\x89PNG")
        assert (report / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    for s in STUDY.sections:
        assert f"## {s.title}" in text
    assert "## Claims of the study's text" in text


def test_study_scenario_is_the_shipped_one() -> None:
    repo = Path(__file__).resolve().parent.parent
    shipped = repo / "scenarios" / "won" / "echo.toml"
    assert (repo / "python" / "nicsim" / "studies" / "won" / "echo.toml").read_text() == shipped.read_text()
