"""The Python API against the real native module."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import nicsim
from nicsim import _core
from nicsim.api import read_scenario

from conftest import GBE_MTU1500_GOODPUT_BPS, with_bad_link_rate


def test_version_is_the_core_version() -> None:
    assert nicsim.__version__ == _core.version() == "0.1.0"


def test_error_types() -> None:
    assert issubclass(nicsim.ScenarioError, ValueError)
    assert issubclass(nicsim.SimulationError, RuntimeError)


def test_string_with_newline_is_toml_text() -> None:
    assert read_scenario('name = "x"\n') == ('name = "x"\n', "<string>")


def test_existing_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('name = "x"\n', encoding="utf-8")
    assert read_scenario(path) == ('name = "x"\n', str(path))
    assert read_scenario(str(path)) == ('name = "x"\n', str(path))


def test_long_one_line_string_is_text() -> None:
    text = "name = " + '"' + "x" * 5000 + '"'
    assert read_scenario(text) == (text, "<string>")


def test_missing_toml_file_is_an_error_not_text(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_scenario(str(tmp_path / "missing.toml"))


def test_bad_unit_names_the_field(bulk_scenario: Path) -> None:
    text = with_bad_link_rate(bulk_scenario.read_text(encoding="utf-8"))
    with pytest.raises(nicsim.ScenarioError) as info:
        nicsim.run(text)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.path == "links[0].rate"
    assert err.reason
    assert str(err) == f"{err.path}: {err.reason}"


def test_resolve_rejects_what_run_rejects(bulk_scenario: Path) -> None:
    text = with_bad_link_rate(bulk_scenario.read_text(encoding="utf-8"))
    with pytest.raises(nicsim.ScenarioError) as info:
        nicsim.resolve(text)
    assert info.value.path == "links[0].rate"


def test_resolve_returns_the_scenario(bulk_scenario: Path) -> None:
    resolved = nicsim.resolve(bulk_scenario)
    assert resolved["name"] == "gbe-mtu1500-bulk"
    assert [h["name"] for h in resolved["hosts"]] == ["a", "b"]


def test_bulk_transfer_reaches_the_ethernet_ceiling(bulk_scenario: Path, tmp_path: Path) -> None:
    result = nicsim.run(bulk_scenario, out=tmp_path)
    s = result.summary
    assert s["verified"] is True
    assert s["goodput_bps"] == pytest.approx(GBE_MTU1500_GOODPUT_BPS, rel=0.01)
    assert s["drops"] == 0
    assert s["retransmissions"] == 0
    assert result.data["scenario"]["source"] == str(bulk_scenario)
    assert result.seed is not None
    assert (tmp_path / "result.json").read_text(encoding="utf-8") == result.json


def test_seed_overrides_the_scenario(bulk_scenario: Path) -> None:
    result = nicsim.run(bulk_scenario, seed=12345)
    assert result.seed == 12345
    assert result.summary["verified"] is True


def test_run_releases_the_gil(bulk_scenario: Path) -> None:
    """Another Python thread keeps running while the native run does."""
    text = bulk_scenario.read_text(encoding="utf-8")
    inside: list[float] = []

    def simulate() -> None:
        inside.append(time.perf_counter())
        _core.run_scenario(text)
        inside.append(time.perf_counter())

    worker = threading.Thread(target=simulate)
    ticks: list[float] = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    start, end = inside
    # With the GIL held for the whole run, this thread could not tick in between.
    assert sum(start < t < end for t in ticks) >= 10, f"run took {end - start:.3f} s"


def test_pattern_bytes_is_a_deterministic_stream() -> None:
    whole = _core.pattern_bytes(1, 0, 0, 4096)
    assert isinstance(whole, bytes) and len(whole) == 4096
    assert _core.pattern_bytes(1, 0, 1000, 100) == whole[1000:1100]
    assert _core.pattern_bytes(1, 1, 0, 4096) != whole
    assert _core.pattern_bytes(2, 0, 0, 4096) != whole
