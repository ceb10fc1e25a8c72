"""Shared fixtures: the repository's scenarios and the installed `nicsim` command."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"
BULK = SCENARIOS / "gbe-mtu1500-bulk.toml"

# 1448 B of TCP payload per 1538 B on the wire (1500 B MTU: 20 B IP and 32 B
# TCP with timestamps; 14 B header, 4 B FCS, 8 B preamble, 12 B gap).
GBE_MTU1500_GOODPUT_BPS = 1448 / 1538 * 1e9


@pytest.fixture(scope="session")
def bulk_scenario() -> Path:
    """The 1 GbE, 1500 B MTU bulk transfer between hosts a and b."""
    assert BULK.is_file(), f"{BULK} is missing"
    return BULK


def nicsim_command() -> str:
    """The `nicsim` console script of the Python running the tests."""
    script = Path(sys.executable).parent / "nicsim"
    if script.is_file():
        return str(script)
    found = shutil.which("nicsim")
    assert found is not None, "the nicsim command is not installed (pip install .)"
    return found


def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `nicsim ARGS...` and capture its output."""
    return subprocess.run(
        [nicsim_command(), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def with_bad_link_rate(text: str) -> str:
    """The scenario with its first link's rate written in a wrong unit."""
    bad, count = re.subn(r'(?m)^(\s*rate\s*=\s*)"[^"]*"', r'\g<1>"1Gbs"', text, count=1)
    assert count == 1, "the scenario has no link rate to break"
    return bad


@pytest.fixture(scope="session")
def reproductions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One results root for every study reproduced in this session
    (``<root>/<study>``, its report in ``<root>/<study>/report``), the layout
    of ``nicsim reproduce all``: each study's runs are simulated once however
    many test modules read them."""
    return tmp_path_factory.mktemp("reproductions")


def reproduce_study(root: Path, study: str) -> Path:
    """``nicsim reproduce STUDY`` (through the command) into ``root/STUDY``;
    returns the results directory (the report is in its ``report/``)."""
    from click.testing import CliRunner

    from nicsim.cli import main

    results = root / study
    res = CliRunner().invoke(
        main, ["reproduce", study, "--results", str(results), "--out", str(results / "report"), "--no-progress"]
    )
    assert res.exit_code == 0, res.output
    return results
