"""``nicsim models``: evaluate LAWS, EMO and LogGP from explicit parameters,
or run the comparison with simulation.

    nicsim models laws --alpha A --gamma G --sigma S [--beta B] [--p P]
    nicsim models emo --c-n C --c-h C --r-n HZ --r-h HZ [...]
    nicsim models loggp --L S --o S --G S [--g S] [-k BYTES ...]
    nicsim models compare [--out DIR] [--results DIR] [--workers N]
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import NoReturn

import click

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.6g}"


@click.group(name="models")
def models() -> None:
    """Analytical models of offload and messaging (LAWS, EMO, LogGP)."""


@models.command()
@click.option("--alpha", type=float, required=True, help="Lag ratio α = Y/X (NIC time per unit of work over the host's).")
@click.option("--gamma", type=float, required=True, help="Application ratio γ = a/o.")
@click.option("--sigma", type=float, required=True, help="Wire ratio σ = (1/(oX))/B.")
@click.option("--beta", type=float, default=1.0, show_default=True, help="Structural ratio β.")
@click.option("--p", "p", type=float, default=1.0, show_default=True, help="Fraction of the overhead offloaded.")
def laws(alpha: float, gamma: float, sigma: float, beta: float, p: float) -> None:
    """LAWS throughput before and after offload (normalised to the wire),
    the improvement, its bound 1/γ and the help/hurt conditions."""
    from .laws import LawsRatios

    try:
        r = LawsRatios(alpha=alpha, gamma=gamma, sigma=sigma, beta=beta, p=p)
    except ValueError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    click.echo(f"T_before/B      {_fmt(r.before())}  (bottleneck: {r.bottleneck_before()})")
    click.echo(f"T_after/B       {_fmt(r.after())}  (bottleneck: {r.bottleneck_after()})")
    click.echo(f"improvement δ   {_fmt(r.improvement())}")
    click.echo(f"bound 1/γ       {_fmt(r.bound())}")
    click.echo(f"host-bound      {'yes' if r.host_bound() else 'no'}  (σ < 1 + γ)")
    click.echo(f"NIC saturates   {'yes' if r.nic_saturates_first() else 'no'}  (p α β > 1 + γ)")
    verdict = "helps" if r.helps() else "hurts" if r.hurts() else "changes nothing"
    click.echo(f"offload         {verdict}")


@models.command()
@click.option("--c-n", "c_n", type=float, required=True, help="Protocol cycles per message on the NIC.")
@click.option("--c-h", "c_h", type=float, required=True, help="Protocol cycles per message on the host.")
@click.option("--r-n", "r_n", type=float, required=True, help="NIC rate, cycles/s.")
@click.option("--r-h", "r_h", type=float, required=True, help="Host rate, cycles/s.")
@click.option("--c-a", "c_a", type=float, default=0.0, show_default=True, help="Application cycles per message.")
@click.option("--o-nh", "o_nh", type=float, default=0.0, show_default=True, help="Host cycles NIC<->host.")
@click.option("--o-ha", "o_ha", type=float, default=0.0, show_default=True, help="Host cycles host<->application.")
@click.option("--l-w", "l_w", type=float, default=0.0, show_default=True, help="Wire time, s.")
@click.option("--l-nh", "l_nh", type=float, default=0.0, show_default=True, help="NIC->host time, s.")
@click.option("--l-ha", "l_ha", type=float, default=0.0, show_default=True, help="Host->application time, s.")
def emo(c_n: float, c_h: float, r_n: float, r_h: float, c_a: float, o_nh: float, o_ha: float,
        l_w: float, l_nh: float, l_ha: float) -> None:  # fmt: skip
    """EMO latency, overhead and gap of one message, and its LogP mapping."""
    from .emo import Emo

    try:
        m = Emo(C_N=c_n, C_H=c_h, R_N=r_n, R_H=r_h, C_A=c_a, O_NH=o_nh, O_HA=o_ha, L_W=l_w, L_NH=l_nh, L_HA=l_ha)
    except ValueError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    lp = m.to_logp()
    click.echo(f"latency   {m.latency():.6g} s")
    click.echo(f"overhead  {m.overhead():.6g} s")
    click.echo(f"gap       {m.gap():.6g} s")
    click.echo(f"LogP      L = {lp.L:.6g} s, o = {lp.o:.6g} s, g = {lp.g:.6g} s")


@models.command()
@click.option("--L", "L", type=float, required=True, help="Latency, s.")
@click.option("--o", "o", type=float, required=True, help="Overhead at each end, s.")
@click.option("--G", "G", type=float, default=0.0, show_default=True, help="Gap per byte, s/B.")
@click.option("--g", "g", type=float, default=0.0, show_default=True, help="Gap between messages, s.")
@click.option("-k", "--bytes", "sizes", type=int, multiple=True, help="Message sizes [default: 1, 1 KiB, 64 KiB, 1 MiB].")
def loggp(L: float, o: float, G: float, g: float, sizes: tuple[int, ...]) -> None:  # noqa: N803 - the model's names
    """LogGP T(k) = o + (k − 1)G + L + o for each size k."""
    from .loggp import LogGP

    try:
        m = LogGP(L=L, o=o, g=g, G=G)
        for k in sizes or (1, 1024, 65536, 1 << 20):
            click.echo(f"{k:>10} B  T = {m.time(k):.6g} s  ({m.throughput(k) * 8 / 1e6:.6g} Mbit/s)")
    except ValueError as e:
        _fail(str(e), EXIT_BAD_INPUT)


@models.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("results") / "models",
              show_default=True, help="Where to write the report, CSV tables and figures.")
@click.option("--results", type=click.Path(file_okay=False, path_type=Path),
              help="Result cache for the runs [default: OUT/runs].")
@click.option("--workers", type=click.IntRange(1, None), help="Local worker processes [default: every core].")
@click.option("--progress/--no-progress", default=None, help="Progress bars on stderr [default: on a terminal].")
def compare(out: Path, results: Path | None, workers: int | None, progress: bool | None) -> None:  # fmt: skip
    """Run the comparison sweeps (Ortiz machine: NIC speed, application ratio,
    Offload x, NetPIPE) and write predicted vs simulated with the errors."""
    from nicsim.campaign.executors import LocalExecutor

    from nicsim.studies.ortiz import analytical as C

    try:
        with LocalExecutor(workers) as runner:
            written = C.compare(out, results, runner, progress)
    except KeyboardInterrupt:
        _fail("interrupted; finished runs are kept: rerun to complete", EXIT_FAILED)
    except (OSError, RuntimeError, ValueError) as e:
        _fail(str(e), EXIT_FAILED)
    report = next(p for p in written if p.name == "report.md")
    click.echo(f"models: {len(written)} files in {report.parent}")
    click.echo(f"report: {report}")
