"""NetPIPE runs: np.out as NPtcp 3.7.2 writes it, netpipe.csv, the table, the
saturation knee, and `nicsim run` on a NetPIPE scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.image
import pandas as pd
import pytest
from conftest import SCENARIOS, run_cli

import nicsim
from nicsim import Result
from nicsim.plots import saturation_knee
from nicsim.result import NETPIPE_COLUMNS, np_out_line

# A 1 GbE pair of ideal hosts, NetPIPE from 1 B to 64 B with 2 ms trials:
# 22 block sizes in about a tenth of a second.
SHORT = """
name = "netpipe-short"
seed = 1

[[hosts]]
name = "a"

[[hosts]]
name = "b"

[[links]]
endpoints = ["a", "b"]
rate = "1Gbps"
propagation = "500ns"

[workload.netpipe]
client = "a"
server = "b"
upper = "64B"
run_time = "2ms"
"""

# NetPIPE's schedule from 1 B with perturbation 3: powers of 2 and 1.5 x
# powers of 2, with +-3 B once the increment exceeds 4.
SCHEDULE_START = [1, 2, 3, 4, 6, 8, 12, 13, 16, 19, 21, 24, 27]


def point(nbytes: int, time_s: float, nrepeat: int = 3) -> dict[str, Any]:
    return {"bytes": nbytes, "nrepeat": nrepeat, "time_s": time_s,
            "mbps": nbytes * 8 / time_s / 2**20}  # fmt: skip


POINTS = [
    point(1, 1.88716e-05, nrepeat=2527),  # the example line of the measurement spec
    point(8388608, 0.071303364),
    point(123456789, 12.5),  # wider than %8d: the field grows, as in C
]
REPORT: dict[str, Any] = {
    "nicsim_version": "0.1.0",
    "scenario": {"name": "np-fixture", "source": "np.toml", "description": ""},
    "seed": 1,
    "workload": {"kind": "netpipe"},
    "summary": {"goodput_bps": 941e6, "latency_s": 1.88716e-05},
    "links": [],
    "hosts": [],
    "netpipe": POINTS,
}
# By hand: %8d right-aligns the bytes in 8 columns; %lf is %f, 6 decimals
# (8 / 1.88716e-5 / 2^20 = 0.4042791..., 64 / 0.071303364 = 897.5733599...,
# 987654312 / 12.5 / 2^20 = 75.3520441...); %12.8lf right-aligns 8 decimals
# in 12 columns.
NP_OUT = (
    "       1 0.404279   0.00001887\n"
    " 8388608 897.573360   0.07130336\n"
    "123456789 75.352044  12.50000000\n"
)


@pytest.fixture(scope="module")
def short() -> Result:
    return nicsim.run(SHORT)


def test_np_out_is_nptcp_format_on_a_fixture(tmp_path: Path) -> None:
    result = Result(json.dumps(REPORT))
    assert result.np_out() == NP_OUT
    written = result.write(tmp_path)
    assert [p.name for p in written][-2:] == ["np.out", "netpipe.csv"]
    assert (tmp_path / "np.out").read_bytes() == NP_OUT.encode("ascii")


def test_np_out_line_pads_like_printf() -> None:
    assert np_out_line(64, 12.5, 0.5) == "      64 12.500000   0.50000000\n"
    assert np_out_line(1, 0.0000004, 1.234567895e-06) == "       1 0.000000   0.00000123\n"


def test_netpipe_csv_is_the_tidy_table(tmp_path: Path) -> None:
    Result(json.dumps(REPORT)).write(tmp_path)
    table = pd.read_csv(tmp_path / "netpipe.csv")
    assert list(table.columns) == list(NETPIPE_COLUMNS)
    assert table["bytes"].tolist() == [1, 8388608, 123456789]
    assert table["nrepeat"].tolist() == [2527, 3, 3]
    assert table["mbit_s_si"][1] == pytest.approx(8388608 * 8 / 0.071303364 / 1e6, rel=1e-12)
    assert table["mbps"][1] == pytest.approx(897.57336, rel=1e-8)


def test_other_workloads_have_no_netpipe_files(tmp_path: Path) -> None:
    result = Result(json.dumps({**REPORT, "workload": {"kind": "bulk"}, "netpipe": None}))
    names = [p.name for p in result.write(tmp_path)]
    assert "np.out" not in names
    assert not (tmp_path / "np.out").exists()
    table = result.netpipe_table()
    assert table.empty
    assert dict(table.dtypes.astype(str)) == NETPIPE_COLUMNS
    assert result.np_out() == ""


def test_real_run_table_is_monotone_and_consistent(short: Result) -> None:
    table = short.netpipe_table()
    assert len(table) == 22
    assert table["bytes"].is_monotonic_increasing and table["bytes"].is_unique
    assert table["bytes"].tolist()[: len(SCHEDULE_START)] == SCHEDULE_START
    assert table["bytes"].max() <= 64 + 3
    assert (table["nrepeat"] >= 3).all()
    assert (table["time_s"] > 0).all()
    assert table["mbps"].tolist() == pytest.approx(
        (table["bytes"] * 8 / table["time_s"] / 2**20).tolist(), rel=1e-12
    )
    assert short.summary["latency_s"] == table["time_s"][0]
    assert short.summary["goodput_bps"] == pytest.approx(table["mbit_s_si"].max() * 1e6, rel=1e-12)
    # 91 B on the wire for 1 B of TCP payload (with timestamps) at 1 Gbit/s,
    # plus 500 ns of propagation.
    assert short.summary["latency_s"] == pytest.approx(91 * 8e-9 + 500e-9, rel=1e-9)


def test_real_run_np_out_matches_the_table(short: Result, tmp_path: Path) -> None:
    short.write(tmp_path)
    lines = (tmp_path / "np.out").read_text(encoding="ascii").splitlines()
    table = short.netpipe_table()
    assert len(lines) == len(table)
    assert [int(line[:8]) for line in lines] == table["bytes"].tolist()
    first = lines[0].split()
    assert first[2] == f"{short.summary['latency_s']:.8f}"
    assert first[2] == "0.00000123"
    assert all(len(line.split()) == 3 and line[8] == " " for line in lines)


def test_write_is_deterministic(short: Result, tmp_path: Path) -> None:
    again = nicsim.run(SHORT)
    for out, result in (("one", short), ("two", again)):
        result.write(tmp_path / out)
    for name in ("np.out", "netpipe.csv", "result.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


# --- the saturation knee ------------------------------------------------------

POWERS = [2**k for k in range(21)]


def table_of(sizes: list[int], time: Any) -> pd.DataFrame:
    return pd.DataFrame({"bytes": sizes, "time_s": [time(n) for n in sizes]})


def test_knee_of_a_sharp_corner() -> None:
    # Constant 10 us up to 1 KiB, then proportional to size: the corner.
    table = table_of(POWERS, lambda n: 1e-5 * max(1.0, n / 1024))
    assert saturation_knee(table) == 1024


def test_knee_of_latency_plus_transfer() -> None:
    # t = a + b n: doubling n multiplies t by >= 2^0.9 once b n >= 6.46 a,
    # i.e. n >= 6461 B for a = 10 us, b = 10 ns/B; 4096 gives 1.80, 8192 1.89.
    a, b = 1e-5, 1e-8
    table = table_of(POWERS, lambda n: a + b * n)
    assert saturation_knee(table) == 8192
    assert saturation_knee(table, slope=0.5) == 1024  # 2^0.5: b n >= 2.41 a


def test_knee_must_hold_to_the_end() -> None:
    # Linear from 64 B to 512 B, flat again to 4 KiB, linear after: the
    # saturation point is the last corner, not the first.
    def t(n: int) -> float:
        if n <= 64:
            return 1e-6
        if n <= 512:
            return 1e-6 * n / 64
        if n <= 4096:
            return 8e-6
        return 8e-6 * n / 4096

    assert saturation_knee(table_of(POWERS, t)) == 4096


def test_no_knee_when_the_curve_ends_flat() -> None:
    table = table_of(POWERS, lambda n: 1e-6 * min(n, 4096) + 1e-5)
    assert saturation_knee(table) is None


def test_knee_ignores_noise_between_perturbed_neighbours() -> None:
    # NetPIPE's +-3 B points sit next to each size; here they come out 1 %
    # slower. Slopes between such close neighbours would be wild; slopes over
    # a factor of at least 2 are not. 1021 B (1 KiB - 3) already takes twice
    # as long as its partner 2045 B, 515 B (to 2045 B) does not.
    sizes = sorted({s for n in POWERS if n >= 16 for s in (n - 3, n, n + 3)} | {1, 2, 4, 8})
    powers = set(POWERS)
    table = table_of(sizes, lambda n: 1e-5 * max(1.0, n / 1024) * (1 if n in powers else 1.01))
    assert saturation_knee(table) == 1021


# --- the command line -----------------------------------------------------------


def test_cli_run_writes_np_out_and_figures(short: Result, tmp_path: Path) -> None:
    scenario = tmp_path / "short.toml"
    scenario.write_text(SHORT, encoding="utf-8")
    out = tmp_path / "out"
    done = run_cli("run", scenario, "--out", out)
    assert done.returncode == 0, done.stderr
    for text in ("latency", "1.228 µs", "peak throughput", "Mbit/s", "NetPIPE Mbps", "block sizes",
                 "22 (1 B to 67 B)", "wall-clock time"):  # fmt: skip
        assert text in done.stdout, text
    assert (out / "np.out").read_text(encoding="ascii") == short.np_out()
    assert (out / "netpipe.csv").is_file()
    for stem in ("netpipe-throughput", "netpipe-signature", "netpipe-saturation"):
        image = matplotlib.image.imread(out / f"{stem}.png")
        assert image.shape[0] > 300 and image.shape[1] > 500, stem
        assert (out / f"{stem}.pdf").read_bytes().startswith(b"%PDF"), stem
        assert f"{stem}.png" in done.stdout
    assert f"figures written to {out}: " in done.stdout
    assert not (out / "cycles-by-layer.png").exists()  # ideal hosts: no cycles


def test_cli_run_of_timed_hosts_writes_layer_bars(tmp_path: Path) -> None:
    text = (SCENARIOS / "kurmann-netpipe.toml").read_text(encoding="utf-8")
    short = text.replace('upper = "8MiB"', 'upper = "16B"\nrun_time = "2ms"')
    assert short != text
    scenario = tmp_path / "kurmann-short.toml"
    scenario.write_text(short, encoding="utf-8")
    done = run_cli("run", scenario, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "timed hosts" in done.stdout
    image = matplotlib.image.imread(tmp_path / "out" / "cycles-by-layer.png")
    assert image.shape[0] > 300
    assert "cycles-by-layer.png" in done.stdout


def test_shipped_netpipe_scenarios_validate() -> None:
    for name in ("gbe-netpipe", "kurmann-netpipe"):
        resolved = nicsim.resolve(SCENARIOS / f"{name}.toml")
        netpipe = resolved["workload"]["netpipe"]
        assert netpipe["upper"] == "8MiB", name
        assert resolved["run"]["time_limit"] == "1000s", name
