"""The analytical models (LAWS, EMO, LogGP): formulas on hand-worked cases,
extraction from real runs checked against physics, the CLI's errors, and
the comparison with simulation."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import nicsim
from nicsim.cli import main
from nicsim.models import Emo, Laws, LawsRatios, LogGP
from nicsim.studies.ortiz import analytical as C
from nicsim.models import extract as E

STUDY = Path(nicsim.__file__).parent / "studies" / "ortiz"


# --- LAWS -------------------------------------------------------------------------


def test_laws_hurts_when_the_nic_saturates_first() -> None:
    # σ = 1, γ = 0.5, α = 2, β = 1: before min(1, 1/1.5) = 2/3; after
    # min(1, 1/0.5, 1/2) = 1/2; δ = (1/2)/(2/3) − 1 = −1/4.
    r = LawsRatios(alpha=2, gamma=0.5, sigma=1, beta=1)
    assert r.before() == pytest.approx(2 / 3)
    assert r.after() == pytest.approx(0.5)
    assert r.improvement() == pytest.approx(-0.25)
    assert r.nic_saturates_first() and r.hurts() and not r.helps()
    assert r.bottleneck_before() == "host" and r.bottleneck_after() == "nic"


def test_laws_reaches_its_bound_one_over_gamma() -> None:
    # σ = 0.5, γ = 1, α = β = 1: before 0.5/2 = 1/4, after min(1, 0.5, 0.5) = 1/2: δ = 1 = 1/γ.
    r = LawsRatios(alpha=1, gamma=1, sigma=0.5, beta=1)
    assert r.before() == pytest.approx(0.25)
    assert r.after() == pytest.approx(0.5)
    assert r.improvement() == pytest.approx(1.0)
    assert r.bound() == pytest.approx(1.0)
    assert r.host_bound() and r.helps()


def test_laws_cannot_help_a_wire_bound_host() -> None:
    # σ = 3 ≥ 1 + γ = 2: the wire already limits; with a fast NIC nothing changes.
    r = LawsRatios(alpha=0.5, gamma=1, sigma=3)
    assert not r.host_bound()
    assert r.before() == 1.0 and r.after() == 1.0 and r.improvement() == 0.0


def test_the_hurt_condition_only_hurts_when_the_nic_falls_below_the_wire() -> None:
    # αβ = 2 > 1 + γ = 1, but σ = 5: the NIC still moves 5/2 of the wire rate,
    # so offload neither helps nor hurts; at σ = 1.5 < αβ it hurts.
    assert LawsRatios(alpha=2, gamma=0, sigma=5).improvement() == 0.0
    r = LawsRatios(alpha=2, gamma=0, sigma=1.5)
    assert r.nic_saturates_first() and r.hurts()
    assert r.improvement() == pytest.approx(1.5 / 2 / 1 - 1)


@given(
    alpha=st.floats(0.01, 100), gamma=st.floats(0.01, 50), sigma=st.floats(0.01, 100),
    beta=st.floats(0.01, 10), p=st.floats(0, 1),
)  # fmt: skip
def test_laws_improvement_never_exceeds_one_over_gamma(alpha: float, gamma: float, sigma: float,
                                                       beta: float, p: float) -> None:  # fmt: skip
    r = LawsRatios(alpha, gamma, sigma, beta, p)
    assert r.improvement() <= 1 / gamma * (1 + 1e-9)
    if r.helps():
        assert r.host_bound(), "offload helped a host that was not the bottleneck"
    if r.nic_saturates_first():
        assert not r.helps()


def test_laws_from_explicit_parameters_agrees_with_the_ratio_form() -> None:
    # a = 1, o = 2 cycles/B, X = 1 ns, Y = 2 ns, B = 4e8 B/s: before
    # min(4e8, 1/3e-9) = 3.33e8; after min(4e8, 1/1e-9, 1/(2 · 2e-9)) = 2.5e8.
    m = Laws(a=1, o=2, X=1e-9, Y=2e-9, B=4e8)
    assert m.before() == pytest.approx(1 / 3e-9)
    assert m.after() == pytest.approx(2.5e8)
    r = m.ratios
    assert (r.alpha, r.gamma, r.sigma) == pytest.approx((2.0, 0.5, 1.25))
    assert r.before() * m.B == pytest.approx(m.before())
    assert r.after() * m.B == pytest.approx(m.after())


def test_laws_partial_offload() -> None:
    # o = 4, p = 1/2, a = 0, X = Y = 1, B = 10: before 1/4; after min(10, 1/2, 1/2) = 1/2.
    m = Laws(a=0, o=4, X=1, Y=1, B=10, p=0.5)
    assert m.before() == pytest.approx(0.25)
    assert m.after() == pytest.approx(0.5)
    assert m.improvement() == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [{"alpha": 0}, {"alpha": -1}, {"gamma": -0.1}, {"sigma": math.nan}, {"p": 1.5}])
def test_laws_rejects_impossible_ratios(bad: dict[str, float]) -> None:
    args = {"alpha": 1.0, "gamma": 0.0, "sigma": 1.0, **bad}
    with pytest.raises(ValueError):
        LawsRatios(**args)


def test_lag_ratio_nominal_and_with_memory() -> None:
    assert E.lag_ratio(0.5) == 2.0
    assert E.lag_ratio(1.0, 4.0) == 4.0
    # 60 % instructions at half the clock (1.2) plus 40 % memory at the host's speed (0.4).
    assert E.lag_ratio(0.5, 1.0, 0.4) == pytest.approx(1.6)
    assert E.lag_ratio(1.0, 3.0, 0.25) == pytest.approx(0.75 + 0.75)


# --- EMO and LogGP -------------------------------------------------------------------


def test_emo_latency_overhead_gap_and_logp() -> None:
    # NIC 400 cycles at 100 MHz = 4 µs; host O_NH + C_H = 300 cycles = 3 µs;
    # O_HA 300 cycles; latency 1 + 4 + 2 + 3 + 3 = 13 µs; o = 6 µs; g = max(4, 6).
    m = Emo(C_N=400, C_H=200, R_N=1e8, R_H=1e8, O_NH=100, O_HA=300, L_W=1e-6, L_NH=2e-6, L_HA=3e-6)
    assert m.latency() == pytest.approx(13e-6)
    assert m.overhead() == pytest.approx(6e-6)
    assert m.gap() == pytest.approx(6e-6)
    lp = m.to_logp()
    assert (lp.L, lp.o, lp.g) == pytest.approx((7e-6, 6e-6, 6e-6))


def test_emo_maps_to_laws_against_its_host_only_baseline() -> None:
    base = Emo(C_N=0, C_H=1000, R_N=1e8, R_H=2e8, C_A=500)
    off = Emo(C_N=800, C_H=0, R_N=1e8, R_H=2e8, O_NH=200, C_A=500)
    r = off.to_laws(message_bytes=1000, bandwidth=1e8, baseline=base)
    # Host did 1000 cycles, now 200: p = 0.8, β = 800 / 800; α = 2e8 / 1e8;
    # γ = 500 / 1000; σ = 1000 B × 2e8 / 1000 per s / 1e8 B/s = 2.
    assert (r.p, r.beta, r.alpha, r.gamma, r.sigma) == pytest.approx((0.8, 1.0, 2.0, 0.5, 2.0))


def test_loggp_time_of_a_message() -> None:
    m = LogGP(L=10e-6, o=5e-6, G=8e-9)
    assert m.time(1) == pytest.approx(20e-6)
    assert m.time(1001) == pytest.approx(28e-6)
    assert m.throughput(1001) == pytest.approx(1001 / 28e-6)
    with pytest.raises(ValueError):
        m.time(0)
    with pytest.raises(ValueError):
        LogGP(L=-1, o=0)


# --- Extraction from real runs ------------------------------------------------------


def _stream(offload: str, mtu: str = "1500B", compute: int = 0) -> dict:
    text = (STUDY / "stream.toml").read_text(encoding="utf-8")
    host = f"offload = {offload}" + (f"\napp = {{ compute_per_kib = {compute} }}" if compute else "")
    text = text.replace("offload = { enabled = false }", host)
    text = text.replace('mtu = "9000B"', f'mtu = "{mtu}"').replace('write_size = "1024B"', 'write_size = "64KiB"')
    return nicsim.run(text).data


@pytest.fixture(scope="module")
def streams() -> dict[str, dict]:
    return {
        "base": _stream("{ enabled = false }"),
        "off": _stream("{ enabled = true }"),
        "slow": _stream("{ enabled = true, clock_ratio = 0.25 }"),
        "compute": _stream("{ enabled = false }", compute=4096),
    }


def test_extracted_clock_is_the_profiles_400_mhz(streams: dict[str, dict]) -> None:
    assert E.clock_hz(streams["base"], 0, 0) == pytest.approx(400e6, rel=1e-3)
    # The communication processor at a quarter of the clock.
    assert E.clock_hz(streams["slow"], 1, 1) == pytest.approx(100e6, rel=1e-3)


def test_extracted_o_is_the_per_layer_cycles_per_byte(streams: dict[str, dict]) -> None:
    rep = streams["base"]
    hosts = E.laws_reference(rep, streams["off"])
    for h, entry in zip(hosts, rep["hosts"]):
        cycles = sum(v for k, v in entry["timing"]["cycles"].items() if k != "app")
        assert h.o == pytest.approx(cycles / rep["summary"]["payload_bytes"])
        # At least the user/kernel copy: 320 MB/s at 400 MHz is 1.25 cycles per byte
        # (the sender copies in, the receiver out; checksums are offloaded).
        assert h.o > 400e6 / 320e6
        assert 0 < h.p < 1 and h.beta > 0
    # The receiver does more per byte than the sender (interrupts, per-frame receive work).
    assert hosts[1].o > hosts[0].o


def test_extracted_a_is_the_compute_knob(streams: dict[str, dict]) -> None:
    rep = streams["compute"]
    for h in (0, 1):
        assert E.stream_work(rep, h).app == pytest.approx(4096 / 1024, rel=0.02)


def test_laws_before_is_an_upper_bound_close_to_a_host_bound_stream(streams: dict[str, dict]) -> None:
    # The receiver is CPU-bound at MTU 1500; LAWS assumes it is busy 100 % of
    # the time, so it predicts a little more than the simulator delivers.
    hosts = E.laws_reference(streams["base"], streams["off"])
    pred = E.laws_predict(hosts, None)
    sim = streams["base"]["summary"]["goodput_bps"] / 8
    assert sim < pred < 1.05 * sim


def test_memory_share_of_the_communication_processor(streams: dict[str, dict]) -> None:
    profile = E.load_profile("ortiz-p4-400")
    assert profile is not None and E.load_profile("no-such-profile") is None
    core = E.stack_cores(streams["off"], 1)[1]
    assert core == 1
    share = E.memory_share(profile, streams["off"]["hosts"][1]["timing"]["cores"][core]["cycles"])
    # The stack's entries cost 20-45 % memory at 10 cycles per access.
    assert 0.2 < share < 0.45


@pytest.fixture(scope="module")
def latency_runs() -> dict[str, dict]:
    text = (STUDY / "latency.toml").read_text(encoding="utf-8")
    return {
        "no": nicsim.run(text).data,
        "off": nicsim.run(text.replace("offload = { enabled = false }", "offload = { enabled = true }")).data,
    }


def test_emo_residual_is_the_nics_coalescing_delay_without_offload(latency_runs: dict[str, dict]) -> None:
    # With offload, CPU work and the wire account for the latency (the
    # residual is bus and polling time, under a microsecond). Without, the
    # NIC holds a lone frame for its 50 µs RX coalescing timer, which no
    # processor accounts for: EMO's L_NH must come out near 50 µs.
    off = E.emo_reference(E.message_work(latency_runs["off"], 10e-9))
    assert off.L_NH < 1e-6
    assert off.latency() == pytest.approx(latency_runs["off"]["summary"]["latency_s"])
    no = E.emo_reference(E.message_work(latency_runs["no"], 10e-9))
    assert no.C_N == 0
    assert 49e-6 < no.L_NH < 53e-6


def test_loggp_wire_gap_is_the_jumbo_frame_ceiling(latency_runs: dict[str, dict]) -> None:
    ref = E.loggp_reference(latency_runs["off"], latency_runs["off"], 10e-9, mtu=9000)
    # 1 Gb/s, 8948 payload bytes per 9038 wire bytes: 8.08 ns per payload byte.
    assert ref.wire_G == pytest.approx(8e-9 * 9038 / 8948, rel=1e-3)
    assert ref.model.G >= ref.wire_G
    assert ref.model.time(1) == pytest.approx(latency_runs["off"]["summary"]["latency_s"])


# --- Comparison ----------------------------------------------------------------------


def test_nic_speed_sweep_laws_gets_help_and_hurt_right(tmp_path: Path) -> None:
    data = C.run(tmp_path, names=["nic-speed"], progress=False)
    rows, ref = C.nic_speed_table(data["nic-speed"])
    by = {r["setting"]: r for r in rows}
    base = by["no offload"]["simulated_mbps"]
    # Offload at the host's speed helps, at a quarter of it hurts: in the
    # simulator and in LAWS alike.
    assert by["Offload 1"]["simulated_mbps"] > base and by["Offload 1"]["laws_memory_mbps"] > base
    assert by["NIC at 25 %"]["simulated_mbps"] < base and by["NIC at 25 %"]["laws_memory_mbps"] < base
    for r in rows:
        if r["clock_ratio"] != "" and r["clock_ratio"] < 1:
            # Counting memory accesses at the memory's speed never predicts worse than the clock alone.
            assert abs(r["error_memory_pct"]) <= abs(r["error_nominal_pct"]) + 1e-9


# --- CLI -----------------------------------------------------------------------------


def test_cli_laws_evaluates_a_hand_worked_case() -> None:
    res = CliRunner().invoke(main, ["models", "laws", "--alpha", "2", "--gamma", "0.5", "--sigma", "1"])
    assert res.exit_code == 0, res.output
    assert "hurts" in res.output and "-0.25" in res.output


@pytest.mark.parametrize(
    "args",
    [
        ["models", "laws", "--alpha", "-1", "--gamma", "0", "--sigma", "1"],
        ["models", "laws", "--alpha", "1", "--gamma", "0", "--sigma", "1", "--p", "2"],
        ["models", "loggp", "--L", "1e-6", "--o", "-1"],
        ["models", "loggp", "--L", "1e-6", "--o", "1e-6", "-k", "0"],
        ["models", "emo", "--c-n", "1", "--c-h", "1", "--r-n", "0", "--r-h", "1e9"],
    ],
)
def test_cli_bad_input_is_a_one_line_error(args: list[str]) -> None:
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2
    assert res.output.startswith("error: ") and "Traceback" not in res.output


def test_cli_missing_parameter_is_exit_two() -> None:
    res = CliRunner().invoke(main, ["models", "laws", "--alpha", "1"])
    assert res.exit_code == 2 and "--gamma" in res.output


def test_cli_compare_writes_the_report(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["models", "compare", "--out", str(tmp_path), "--no-progress", "--workers", "2"])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    for section in ("## LAWS: NIC speed", "## LAWS: application ratio", "## EMO", "## LogGP"):
        assert section in text
    for fig in ("laws-regions", "loggp-netpipe", "emo-offload-x"):
        assert (tmp_path / f"{fig}.png").read_bytes().startswith(b"\x89PNG")
    with (tmp_path / "app-ratio.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if float(r["gamma"]) > 0:
            # Both the model and the simulator respect the 1/γ bound.
            assert float(r["simulated_improvement"]) <= float(r["bound_1_over_gamma"])
            assert float(r["laws_improvement"]) <= float(r["bound_1_over_gamma"])
