"""Prediction against simulation: the analytical models (LAWS, EMO, LogGP)
confronted with nicsim on sweeps of the Ortiz machine (``nicsim models
compare``) and on the Ortiz study's own runs (its "Analytical models" section).

Each sweep has a reference point where the model's parameters are
extracted (:mod:`nicsim.models.extract`); every other point is predicted
from those parameters and the swept knob alone, and set beside what the
simulator did:

* ``nic-speed``   TCP stream, MTU 1500, 64 KiB writes; no offload and a
  communication processor at 100, 75, 50, 25 and 10 % of the host clock
  (LAWS, α). MTU 1500 because at the study's MTU 9000 the wire bounds every
  point down to 25 % (``nic-speed-jumbo`` shows that regime).
* ``nic-speed-jumbo`` the same at MTU 9000 (the study's).
* ``app-ratio``   the MTU 1500 stream with application compute on both hosts
  (LAWS, γ), without and with offload.
* ``offload-x``   NetPIPE latency, Offload 1, 2, 4, 6, 10 (EMO).
* ``netpipe``     NetPIPE curves, no offload and Offload 1 (LogGP T(k)).

The Elbeshti clock sweep (issue #6) does not exist yet and is not here.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicsim.campaign.cache import Cache
from nicsim.campaign.executors import Executor
from nicsim.campaign.reproduction import Reproduction
from nicsim.campaign.sweep import Sweep

from nicsim.models import extract as E
from nicsim.models.laws import LawsRatios

STUDY_DIR = Path(__file__).resolve().parent
"""The Ortiz study's scenario files."""
PROFILE = "ortiz-p4-400"
PROPAGATION_S = 10e-9
"""The Ortiz scenarios' cable (``propagation = "10ns"``)."""
ORTIZ_MTU = 9000
"""The Ortiz scenarios' MTU (jumbo frames)."""

CLOCK_RATIOS = (1.0, 0.75, 0.5, 0.25, 0.1)
"""NIC speed relative to the host: the study's 100/75/50/25 % plus 10 %,
where the jumbo-frame stream finally leaves the wire bound."""
MEMORY_MULTIPLIERS = (1.0, 2.0, 4.0, 6.0, 10.0)
"""The study's Offload x (Table I)."""
COMPUTE_PER_KIB = (0, 1000, 2000, 4000, 8000, 16000)
"""Application cycles per KiB: γ from 0 to about 4 on this machine (o is
3100 to 3900 cycles per KiB at MTU 1500)."""
STREAM_FIXED = {"workload.bulk.write_size": "64KiB", "workload.bulk.duration": "50ms"}

PUBLISHED_LATENCY_US = {1.0: 24.4, 2.0: 31.68, 4.0: 42.53, 6.0: 46.61, 10.0: 120.54}
"""The Ortiz study's Table I (Offload x, µs), for context only."""


@dataclass(frozen=True)
class Setting:
    """Both hosts' offload knobs."""

    label: str = field(compare=False)
    offload: bool = False
    ratio: float = 1.0
    x: float = 1.0


NO_OFFLOAD = Setting("no offload", False)


def _knobs(settings: Sequence[Setting]) -> dict[str, list[Any]]:
    zipped: dict[str, list[Any]] = {}
    for h in (0, 1):
        zipped[f"hosts[{h}].offload.enabled"] = [s.offload for s in settings]
        zipped[f"hosts[{h}].offload.clock_ratio"] = [s.ratio for s in settings]
        zipped[f"hosts[{h}].offload.memory_multiplier"] = [s.x for s in settings]
    return zipped


SPEEDS = [NO_OFFLOAD, *(Setting(f"NIC at {r * 100:g} %", True, ratio=r) for r in CLOCK_RATIOS)]
OFFLOAD_X = [NO_OFFLOAD, *(Setting(f"Offload {x:g}", True, x=x) for x in MEMORY_MULTIPLIERS)]


def sweeps() -> list[Sweep]:
    """The comparison's sweeps (32 runs, about 25 s on two cores)."""
    stream = STUDY_DIR / "stream.toml"
    return [
        Sweep(stream, zip=_knobs(SPEEDS), fixed={**STREAM_FIXED, "links[0].mtu": "1500B"}, name="nic-speed",
              description="TCP stream, MTU 1500, NIC processor speed (LAWS alpha)"),
        Sweep(stream, zip=_knobs(SPEEDS), fixed=STREAM_FIXED, name="nic-speed-jumbo",
              description="TCP stream, MTU 9000, NIC processor speed (LAWS alpha)"),
        Sweep(stream, zip=[{f"hosts[{h}].app.compute_per_kib": list(COMPUTE_PER_KIB) for h in (0, 1)},
                           _knobs([NO_OFFLOAD, Setting("Offload 1", True)])],
              fixed={**STREAM_FIXED, "links[0].mtu": "1500B"}, name="app-ratio", description="TCP stream, MTU 1500, application compute (LAWS gamma)"),
        Sweep(STUDY_DIR / "latency.toml", zip=_knobs(OFFLOAD_X), name="offload-x",
              description="NetPIPE latency per Offload x (EMO)"),
        Sweep(STUDY_DIR / "netpipe.toml", zip=_knobs([NO_OFFLOAD, Setting("Offload 1", True)]), name="netpipe",
              description="NetPIPE curves, no offload and Offload 1 (LogGP)"),
    ]  # fmt: skip


Runs = list[tuple[dict[str, Any], dict[str, Any]]]
"""(knob values, report) of every point of a sweep."""


def run(
    results: str | os.PathLike[str],
    executor: Executor | None = None,
    progress: bool | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, Runs]:
    """Run what the cache in ``results`` lacks; return every sweep's points."""
    chosen = [s for s in sweeps() if names is None or s.name in names]
    Reproduction("models", sweeps=chosen).run(executor, results, progress=progress)
    out: dict[str, Runs] = {}
    with Cache(results) as cache:
        for sweep in chosen:
            rows = []
            for row in cache.to_pandas(sweep.name).to_dict("records"):
                if row["status"] != "ok":
                    raise RuntimeError(f"{sweep.name} point {row['point']} did not run: {row.get('error')}")
                record = cache.get(row["key"])
                assert record is not None
                rows.append((record["params"], record["report"]))
            out[sweep.name] = rows
    return out


def _setting(params: dict[str, Any]) -> Setting:
    if not params["hosts[0].offload.enabled"]:
        return NO_OFFLOAD
    ratio = float(params["hosts[0].offload.clock_ratio"])
    x = float(params["hosts[0].offload.memory_multiplier"])
    label = f"Offload {x:g}" if ratio == 1.0 else f"NIC at {ratio * 100:g} %"
    return Setting(label, True, ratio, x)


def _err(pred: float, sim: float) -> float:
    """Signed relative error of a prediction, %."""
    return (pred - sim) / sim * 100.0


def _mbps(bytes_per_s: float) -> float:
    return bytes_per_s * 8 / 1e6


def _nic_share(report: dict[str, Any], profile: dict[str, Any] | None) -> float | None:
    """Memory-access share of the communication processors' cycles."""
    if profile is None:
        return None
    cycles: dict[str, float] = {}
    for h in range(len(report["hosts"])):
        _, core = E.stack_cores(report, h)
        if core is not None:
            for k, v in report["hosts"][h]["timing"]["cores"][core]["cycles"].items():
                cycles[k] = cycles.get(k, 0.0) + v
    return E.memory_share(profile, cycles) if cycles else None


def _bottleneck(report: dict[str, Any]) -> str:
    """What limited a stream in the simulator: a core above 95 % busy, else the wire."""
    busiest = ("wire", 0.0)
    for h in report["hosts"]:
        for c in (h.get("timing") or {}).get("cores", []):
            if c["utilization"] > busiest[1]:
                role = "host" if c["core"] == 0 else "nic"
                busiest = (f"{role} {h['name']}", c["utilization"])
    return busiest[0] if busiest[1] > 0.95 else "wire"


def _laws_bottleneck(ref: LawsReference, alpha: float | None) -> str:
    """The stage LAWS says limits the slowest host (``alpha`` None: no offload)."""
    models = [h.model(alpha or 1.0) for h in ref.hosts]
    slowest = min(models, key=lambda m: m.before() if alpha is None else m.after())
    return slowest.ratios.bottleneck_before() if alpha is None else slowest.ratios.bottleneck_after()


@dataclass
class LawsReference:
    """LAWS parameters per host and the NIC's memory-access share."""

    hosts: list[E.LawsHost]
    memory_share: float | None

    def bottleneck_host(self) -> E.LawsHost:
        """The host with the lowest throughput without offload."""
        return min(self.hosts, key=lambda h: h.model(1.0).before())


def laws_reference(base: dict[str, Any], offload: dict[str, Any]) -> LawsReference:
    """LAWS at a reference pair: the workload without offload and at Offload 1
    with the NIC at the host's clock."""
    return LawsReference(E.laws_reference(base, offload), _nic_share(offload, E.load_profile(PROFILE)))


def nic_speed_table(runs: Runs) -> tuple[list[dict[str, Any]], LawsReference]:
    """LAWS predictions of a NIC-speed sweep from its no-offload and
    100 % points."""
    by = {_setting(p): r for p, r in runs}
    ref = laws_reference(by[NO_OFFLOAD], by[Setting("NIC at 100 %", True, 1.0)])
    rows = []
    for s, rep in sorted(by.items(), key=lambda kv: (kv[0].offload, -kv[0].ratio)):
        sim = rep["summary"]["goodput_bps"] / 8
        if not s.offload:
            nominal = memory = E.laws_predict(ref.hosts, None)
            alpha_n = alpha_m = math.nan
        else:
            alpha_n = E.lag_ratio(s.ratio)
            alpha_m = E.lag_ratio(s.ratio, 1.0, ref.memory_share) if ref.memory_share is not None else math.nan
            nominal = E.laws_predict(ref.hosts, alpha_n)
            memory = E.laws_predict(ref.hosts, alpha_m) if not math.isnan(alpha_m) else math.nan
        b = ref.bottleneck_host().model(1.0 if math.isnan(alpha_m) else alpha_m).ratios
        rows.append({
            "setting": s.label,
            "clock_ratio": s.ratio if s.offload else "",
            "alpha_nominal": round(alpha_n, 3),
            "alpha_memory": round(alpha_m, 3),
            "simulated_mbps": round(_mbps(sim), 1),
            "laws_nominal_mbps": round(_mbps(nominal), 1),
            "error_nominal_pct": round(_err(nominal, sim), 1),
            "laws_memory_mbps": round(_mbps(memory), 1),
            "error_memory_pct": round(_err(memory, sim), 1),
            "laws_bottleneck": b.bottleneck_after() if s.offload else b.bottleneck_before(),
            "simulated_bottleneck": _bottleneck(rep),
        })  # fmt: skip
    return rows, ref


def app_ratio_table(runs: Runs, ref: LawsReference) -> list[dict[str, Any]]:
    """LAWS predictions of the application-ratio sweep from the a = 0
    reference (``ref``); ``a`` at each point is the compute knob / 1024."""
    pairs: dict[int, dict[bool, dict[str, Any]]] = {}
    for p, r in runs:
        pairs.setdefault(int(p["hosts[0].app.compute_per_kib"]), {})[bool(p["hosts[0].offload.enabled"])] = r
    bott = ref.bottleneck_host()
    rows = []
    for per_kib in sorted(pairs):
        a = per_kib / 1024
        before, after = pairs[per_kib][False], pairs[per_kib][True]
        t_b, t_a = before["summary"]["goodput_bps"] / 8, after["summary"]["goodput_bps"] / 8
        measured_a = E.stream_work(before, 1).app
        pb = E.laws_predict(ref.hosts, None, a)
        pa = E.laws_predict(ref.hosts, 1.0, a)
        gamma = a / bott.o
        delta_sim, delta_pred = t_a / t_b - 1, pa / pb - 1
        rows.append({
            "compute_per_kib": per_kib,
            "gamma": round(gamma, 3),
            "measured_a_cycles_per_byte": round(measured_a, 3),
            "bound_1_over_gamma": round(1 / gamma, 3) if gamma > 0 else "inf",
            "simulated_before_mbps": round(_mbps(t_b), 1),
            "laws_before_mbps": round(_mbps(pb), 1),
            "error_before_pct": round(_err(pb, t_b), 1),
            "simulated_after_mbps": round(_mbps(t_a), 1),
            "laws_after_mbps": round(_mbps(pa), 1),
            "error_after_pct": round(_err(pa, t_a), 1),
            "simulated_improvement": round(delta_sim, 3),
            "laws_improvement": round(delta_pred, 3),
        })  # fmt: skip
    return rows


def offload_x_table(runs: Runs) -> tuple[list[dict[str, Any]], E.Emo]:
    """EMO predictions of NetPIPE latency per Offload x from the Offload 1 point."""
    by = {_setting(p): r for p, r in runs}
    ref_run = by[Setting("Offload 1", True, 1.0, 1.0)]
    work = E.message_work(ref_run, PROPAGATION_S)
    emo = E.emo_reference(work)
    profile = E.load_profile(PROFILE)
    share = E.memory_share(profile, work.nic_layers) if profile is not None else None
    rows = []
    for s, rep in sorted(by.items(), key=lambda kv: (kv[0].offload, kv[0].x)):
        sim = rep["summary"]["latency_s"]
        if not s.offload:
            own = E.emo_reference(E.message_work(rep, PROPAGATION_S))
            rows.append({
                "setting": s.label, "x": "", "simulated_us": round(sim * 1e6, 2), "emo_memory_us": "",
                "error_memory_pct": "", "emo_nominal_us": "", "error_nominal_pct": "",
                "published_us": 66.9, "residual_L_NH_us": round(own.L_NH * 1e6, 2),
            })  # fmt: skip
            continue
        mem = E.emo_at(emo, E.lag_ratio(1.0, s.x, share)).latency() if share is not None else math.nan
        nominal = E.emo_at(emo, E.lag_ratio(1.0, s.x)).latency()
        rows.append({
            "setting": s.label, "x": s.x, "simulated_us": round(sim * 1e6, 2),
            "emo_memory_us": round(mem * 1e6, 2), "error_memory_pct": round(_err(mem, sim), 1),
            "emo_nominal_us": round(nominal * 1e6, 2), "error_nominal_pct": round(_err(nominal, sim), 1),
            "published_us": PUBLISHED_LATENCY_US[s.x], "residual_L_NH_us": round(emo.L_NH * 1e6, 2),
        })  # fmt: skip
    return rows, emo


BANDS = ((1, 64), (65, 1024), (1025, 9000), (9001, 65536), (65537, 1 << 30))
"""NetPIPE block sizes grouped for the LogGP error summary (bytes)."""


def loggp_tables(
    latency_runs: Runs, curve_runs: Runs
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, E.LogGPReference]]:
    """LogGP T(k) against the NetPIPE curves: per-point rows, per-band
    summary rows and the parameters per setting."""
    lat = {_setting(p).label: r for p, r in latency_runs}
    points, summary, refs = [], [], {}
    for p, curve in curve_runs:
        label = _setting(p).label
        if label not in lat:
            continue
        ref = E.loggp_reference(lat[label], curve, PROPAGATION_S, ORTIZ_MTU)
        refs[label] = ref
        errs: dict[tuple[int, int], list[float]] = {b: [] for b in BANDS}
        for pt in curve["netpipe"]:
            k, sim = int(pt["bytes"]), float(pt["time_s"])
            pred = ref.model.time(k)
            serial = ref.model.time(k) + (k - 1) * (ref.serial_G - ref.model.G)
            e = _err(pred, sim)
            points.append({"setting": label, "bytes": k, "simulated_us": round(sim * 1e6, 3),
                           "loggp_us": round(pred * 1e6, 3), "error_pct": round(e, 1),
                           "serial_G_us": round(serial * 1e6, 3), "error_serial_pct": round(_err(serial, sim), 1)})  # fmt: skip
            for b in BANDS:
                if b[0] <= k <= b[1]:
                    errs[b].append(e)
        for b, es in errs.items():
            if es:
                summary.append({"setting": label, "bytes": f"{b[0]}–{b[1] if b[1] < 1 << 30 else 'max'}",
                                "points": len(es), "mean_error_pct": round(sum(es) / len(es), 1),
                                "max_abs_error_pct": round(max(abs(x) for x in es), 1)})  # fmt: skip
    return points, summary, refs


# --- Figures -----------------------------------------------------------------------


def _save(fig: Any, out_dir: Path, name: str, written: list[Path]) -> str:
    import matplotlib.pyplot as plt

    for ext in ("png", "pdf"):
        path = out_dir / f"{name}.{ext}"
        fig.savefig(path, dpi=120)
        written.append(path)
    plt.close(fig)
    return f"{name}.png"


def laws_figure(
    ref: LawsReference,
    speed_points: Sequence[tuple[float, float]],
    app_points: Sequence[tuple[float, float]],
    out_dir: Path,
    written: list[Path],
) -> str:
    """LAWS improvement of the bottleneck host over (α, γ), its help/hurt
    boundary and the simulated improvements on top: ``speed_points`` as
    (α, δ), ``app_points`` as (γ, δ) at α = 1."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    h = ref.bottleneck_host()
    r = h.model(1.0).ratios
    alphas = np.logspace(-1, np.log10(12), 160)
    gammas = np.linspace(0, 5, 160)
    delta = np.array([[LawsRatios(al, g, r.sigma, r.beta, r.p).improvement() for al in alphas] for g in gammas])
    fig, ax = plt.subplots(figsize=(7.5, 5))
    mesh = ax.pcolormesh(alphas, gammas, delta, cmap="RdBu", vmin=-1, vmax=1, shading="auto")
    fig.colorbar(mesh, ax=ax, label="LAWS improvement δ = T_after / T_before − 1")
    ax.contour(alphas, gammas, delta, levels=[0.0], colors="k", linewidths=1.2)
    ax.plot(alphas, np.maximum(r.p * alphas * r.beta - 1, 0), "k--", linewidth=0.8, label="p·α·β = 1 + γ (NIC saturates first)")
    cmap = plt.get_cmap("RdBu")
    for pts, marker, label in (
        ([(a, 0.0, d) for a, d in speed_points], "o", "simulated, NIC-speed sweep (γ = 0)"),
        ([(1.0, g, d) for g, d in app_points], "s", "simulated, application-ratio sweep (α = 1)"),
    ):
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], c=[cmap((max(-1, min(1, p[2])) + 1) / 2) for p in pts],
                       edgecolors="k", marker=marker, s=60, label=label, zorder=3)  # fmt: skip
    ax.set_xscale("log")
    ax.set_ylim(-0.2, float(gammas[-1]))
    ax.set_xlabel("lag ratio α (NIC time per unit of work / host's)")
    ax.set_ylabel("application ratio γ = a / o")
    ax.set_title(f"LAWS regions, host {h.name}: σ = {r.sigma:.2f}, β = {r.beta:.2f}, p = {r.p:.2f} (solid: δ = 0)")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return _save(fig, out_dir, "laws-regions", written)


def loggp_figure(points: list[dict[str, Any]], out_dir: Path, written: list[Path]) -> str:
    """LogGP T(k) lines over the simulated NetPIPE one-way times."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5))
    for i, label in enumerate(dict.fromkeys(p["setting"] for p in points)):
        mine = [p for p in points if p["setting"] == label]
        ks = [p["bytes"] for p in mine]
        color = f"C{i}"
        ax.plot(ks, [p["simulated_us"] for p in mine], "o", markersize=3, color=color, label=f"{label}: nicsim")
        ax.plot(ks, [p["loggp_us"] for p in mine], "-", color=color, label=f"{label}: LogGP, G = slowest stage")
        ax.plot(ks, [p["serial_G_us"] for p in mine], ":", color=color, label=f"{label}: G = sum of stages")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("block size k (bytes)")
    ax.set_ylabel("one-way time T(k) (µs)")
    ax.set_title("LogGP T(k) = 2o + L + (k − 1)G against NetPIPE (Ortiz machine)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, out_dir, "loggp-netpipe", written)


def emo_figure(rows: list[dict[str, Any]], out_dir: Path, written: list[Path]) -> str:
    """Latency per Offload x: nicsim, EMO and the study's Table I."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r["x"] != ""]
    xs = [r["x"] for r in rows]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(xs, [r["simulated_us"] for r in rows], "o-", label="nicsim")
    ax.plot(xs, [r["emo_memory_us"] for r in rows], "s--", label="EMO, memory share from the profile")
    ax.plot(xs, [r["emo_nominal_us"] for r in rows], "^:", label="EMO, whole NIC time × x")
    ax.plot(xs, [r["published_us"] for r in rows], "kx", label="Ortiz et al., Table I")
    ax.set_xlabel("Offload x (memory delay of the communication processor)")
    ax.set_ylabel("NetPIPE latency (µs)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, out_dir, "emo-offload-x", written)


# --- Report --------------------------------------------------------------------------


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as CSV (header from the first row)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def markdown_table(rows: list[dict[str, Any]], columns: Sequence[str]) -> list[str]:
    """A Markdown table of ``columns`` of ``rows``."""
    out = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for r in rows:
        out.append("| " + " | ".join(_cell(r.get(c, "")) for c in columns) + " |")
    return out


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:g}"
    return str(value)


def _max_abs(rows: list[dict[str, Any]], column: str) -> float:
    vals = [abs(r[column]) for r in rows if isinstance(r.get(column), (int, float)) and not math.isnan(r[column])]
    return max(vals) if vals else math.nan


def write_report(data: dict[str, Runs], out_dir: Path) -> list[Path]:
    """CSV error tables, figures and ``report.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    lines = [
        "# Analytical models against nicsim",
        "",
        "Each model's parameters are extracted at a reference point from the run's probes (per-layer",
        "cycles per core, clocks, wire and bus counters); every other point is predicted from them and",
        "the swept knob alone. Error = (model − nicsim) / nicsim. See docs/models/analytical.md.",
        "",
    ]
    speed_pts: list[tuple[float, float]] = []
    app_pts: list[tuple[float, float]] = []
    ref = None
    for name, title in (("nic-speed", "MTU 1500"), ("nic-speed-jumbo", "MTU 9000 (the study's)")):
        if name not in data:
            continue
        rows, r = nic_speed_table(data[name])
        written.append(write_csv(out_dir / f"{name}.csv", rows))
        if name == "nic-speed":
            ref = r
            base = next(x["simulated_mbps"] for x in rows if x["setting"] == "no offload")
            speed_pts = [(x["alpha_memory"], x["simulated_mbps"] / base - 1) for x in rows if x["clock_ratio"] != ""]
        h = r.bottleneck_host().model(1.0).ratios
        lines += [
            f"## LAWS: NIC speed, TCP stream, {title}",
            "",
            f"Reference: no offload and the NIC at 100 %. Bottleneck host without offload: σ = {h.sigma:.3f},",
            f"p = {h.p:.3f}, β = {h.beta:.3f}; memory-access share of the NIC's work φ = "
            + ("unknown" if r.memory_share is None else f"{r.memory_share:.3f}") + ".",
            "*nominal*: α = 1 / clock ratio (LAWS's lag ratio); *memory*: α = (1 − φ) / ratio + φ.",
            "",
            *markdown_table(rows, ["setting", "alpha_memory", "simulated_mbps", "laws_nominal_mbps",
                                   "error_nominal_pct", "laws_memory_mbps", "error_memory_pct",
                                   "laws_bottleneck", "simulated_bottleneck"]),
            "",
        ]  # fmt: skip
    if "app-ratio" in data and ref is not None:
        rows = app_ratio_table(data["app-ratio"], ref)
        written.append(write_csv(out_dir / "app-ratio.csv", rows))
        app_pts = [(x["gamma"], x["simulated_improvement"]) for x in rows]
        lines += [
            "## LAWS: application ratio, TCP stream, MTU 1500",
            "",
            "Both hosts compute `compute_per_kib` cycles per KiB (a = that / 1024 cycles per byte); γ of the",
            "bottleneck host. Parameters from the a = 0 reference of the NIC-speed sweep.",
            "",
            *markdown_table(rows, ["compute_per_kib", "gamma", "simulated_before_mbps", "laws_before_mbps",
                                   "error_before_pct", "simulated_after_mbps", "laws_after_mbps", "error_after_pct",
                                   "simulated_improvement", "laws_improvement", "bound_1_over_gamma"]),
            "",
        ]  # fmt: skip
    if ref is not None:
        fig = laws_figure(ref, speed_pts, app_pts, out_dir, written)
        lines += [f"![LAWS regions]({fig})", ""]
    if "offload-x" in data:
        rows, emo = offload_x_table(data["offload-x"])
        written.append(write_csv(out_dir / "offload-x.csv", rows))
        fig = emo_figure(rows, out_dir, written)
        lines += [
            "## EMO: NetPIPE latency per Offload x",
            "",
            f"Reference: Offload 1. Per one-way message: C_N = {emo.C_N:.0f} NIC cycles, host O_NH + C_H + O_HA =",
            f"{emo.O_NH + emo.C_H + emo.O_HA:.0f} cycles, L_W = {emo.L_W * 1e6:.2f} µs, unaccounted L_NH =",
            f"{emo.L_NH * 1e6:.2f} µs; EMO o = {emo.overhead() * 1e6:.2f} µs, g = {emo.gap() * 1e6:.2f} µs.",
            "*memory*: only the NIC's memory-access cycles scale with x; *nominal*: all of C_N/R_N does.",
            "",
            *markdown_table(rows, ["setting", "simulated_us", "emo_memory_us", "error_memory_pct", "emo_nominal_us",
                                   "error_nominal_pct", "published_us", "residual_L_NH_us"]),
            "",
            f"![EMO]({fig})",
            "",
        ]  # fmt: skip
    if "netpipe" in data and "offload-x" in data:
        points, summary, refs = loggp_tables(data["offload-x"], data["netpipe"])
        written.append(write_csv(out_dir / "loggp-points.csv", points))
        written.append(write_csv(out_dir / "loggp.csv", summary))
        fig = loggp_figure(points, out_dir, written)
        params = [
            f"{label}: L = {r.model.L * 1e6:.2f} µs, o = {r.model.o * 1e6:.2f} µs, G = {r.model.G * 1e9:.3f} ns/B "
            f"(wire {r.wire_G * 1e9:.3f}, copy {r.copy_G * 1e9:.3f}, bus {r.bus_G * 1e9:.3f})"
            for label, r in refs.items()
        ]
        lines += [
            "## LogGP: NetPIPE one-way time T(k)",
            "",
            "o and L from the latency run (smallest block) of the same setting, G the slowest per-byte stage.",
            "",
            *(f"- {p}" for p in params),
            "",
            *markdown_table(summary, ["setting", "bytes", "points", "mean_error_pct", "max_abs_error_pct"]),
            "",
            f"![LogGP]({fig})",
            "",
        ]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written.append(path)
    return written


def compare(
    out: str | os.PathLike[str],
    results: str | os.PathLike[str] | None = None,
    executor: Executor | None = None,
    progress: bool | None = None,
) -> list[Path]:
    """Run the sweeps (cached in ``results``, default ``out/runs``) and write the report to ``out``."""
    out_dir = Path(out)
    data = run(results if results is not None else out_dir / "runs", executor, progress)
    return write_report(data, out_dir)


def ortiz_section(
    data: dict[str, list[tuple[str, dict[str, Any], dict[str, Any]]]], out_dir: Path, written: list[Path]
) -> list[str]:
    """The "Analytical models" section of the Ortiz report, from the study's
    own sweeps: EMO of Table I, LAWS of the CPU1-speed curves (peak NetPIPE
    throughput, parameters from the 64 KiB TCP stream) and LogGP of the
    NetPIPE curves. Writes ``models-*.csv``; returns Markdown lines."""

    def runs(name: str) -> Runs:
        return [(params, rep) for _, params, rep in data[name]]

    lines = [
        "## Analytical models",
        "",
        "Parameters extracted at a reference point from the runs' per-layer cycles, clocks and wire;",
        "the other points predicted (see docs/models/analytical.md and `nicsim models compare`).",
        "",
    ]
    emo_rows, _ = offload_x_table(runs("ortiz-latency"))
    written.append(write_csv(out_dir / "models-emo.csv", emo_rows))
    lines += [
        "EMO of Table I from Offload 1 (only the NIC's memory-access cycles scale with x):",
        "",
        *markdown_table(emo_rows, ["setting", "simulated_us", "emo_memory_us", "error_memory_pct", "published_us"]),
        "",
    ]
    tcp = {(_setting(p), str(p["workload.bulk.write_size"])): rep for _, p, rep in data["ortiz-tcp"]}
    big = [k for k in tcp if k[1] in ("64KiB", "65536B")]
    if big:
        size = big[0][1]
        ref = laws_reference(tcp[(NO_OFFLOAD, size)], tcp[(Setting("Offload 1", True), size)])
        laws_rows = []
        for p, rep in runs("ortiz-netpipe"):
            s = _setting(p)
            if s.offload and s.x != 1.0:
                continue
            alpha = None if not s.offload else E.lag_ratio(s.ratio, 1.0, ref.memory_share)
            pred = E.laws_predict(ref.hosts, alpha)
            peak = max(pt["bytes"] / pt["time_s"] for pt in rep["netpipe"])
            laws_rows.append({"setting": "CPU1 at 100 %" if s.offload and s.ratio == 1.0 else s.label.replace("NIC", "CPU1"),
                              "simulated_peak_mbps": round(_mbps(peak), 1), "laws_mbps": round(_mbps(pred), 1),
                              "error_pct": round(_err(pred, peak), 1),
                              "laws_bottleneck": _laws_bottleneck(ref, alpha)})  # fmt: skip
        written.append(write_csv(out_dir / "models-laws.csv", laws_rows))
        h = ref.bottleneck_host().model(1.0).ratios
        lines += [
            f"LAWS of Figure 8 (peak NetPIPE throughput) from the {size} TCP stream without offload and at",
            f"Offload 1 (bottleneck host σ = {h.sigma:.2f}, p = {h.p:.2f}, β = {h.beta:.2f}; α from the clock and",
            "the NIC's memory-access share):",
            "",
            *markdown_table(laws_rows, ["setting", "simulated_peak_mbps", "laws_mbps", "error_pct", "laws_bottleneck"]),
            "",
        ]
    main = [(p, r) for p, r in runs("ortiz-latency") if _setting(p) in (NO_OFFLOAD, Setting("Offload 1", True))]
    _, summary, refs = loggp_tables(main, runs("ortiz-netpipe"))
    written.append(write_csv(out_dir / "models-loggp.csv", summary))
    lines += [
        "LogGP T(k) = 2o + L + (k − 1)G against the NetPIPE curves (o, L from the latency run, G the",
        "slowest per-byte stage, the wire): exact at small blocks, too low between one and a few frames,",
        "where per-byte stages add up instead of overlapping:",
        "",
        *markdown_table(summary, ["setting", "bytes", "points", "mean_error_pct", "max_abs_error_pct"]),
        "",
    ]
    return lines


def models_section(ctx: Any) -> list[str]:
    """The Ortiz report's "Analytical models" section (a framework section)."""
    from .experiments import LATENCY, NETPIPE, TCP
    from .report import runs

    data = {"ortiz-latency": runs(ctx, LATENCY), "ortiz-netpipe": runs(ctx, NETPIPE), "ortiz-tcp": runs(ctx, TCP)}
    return ortiz_section(data, ctx.out_dir, ctx.written)[2:]
