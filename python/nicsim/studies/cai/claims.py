"""The Cai report's claims: statements that follow from the study's set-up
(issue #25) and from general networking knowledge, each checked on
nicsim's seven runs by code. None is a published number; each verdict is
computed here from the runs' measurements."""

from __future__ import annotations

from nicsim.studies.framework import Context

from .experiments import CATEGORIES
from .metrics import Metrics
from .report import CATEGORY_LABELS, Runs, metrics


def _largest(m: Metrics, side: str) -> str:
    br = m.sides[side].breakdown_pct
    return max(CATEGORIES, key=lambda c: br[c])


def _pc(m: Metrics) -> str:
    return f"{m.per_core_gbps:.2f} Gb/s"


def claims(runs: Runs, ctx: Context) -> list[str]:
    """Every claim, with its evidence and computed verdict."""
    ms = metrics(ctx, runs)
    ids = list(ms)

    def cpu(c: str, side: str) -> float:
        return ms[c].sides[side].cpu_pct

    def share(c: str, side: str, cat: str) -> float:
        return ms[c].sides[side].breakdown_pct[cat]

    heavier = [c for c in ids if cpu(c, "receiver") < cpu(c, "sender")]
    ctx.claim(
        "claim.receiver_bottleneck",
        "The receiver uses at least as much CPU as the sender in every configuration (the receiver is the bottleneck side)",
        "receiver / sender CPU %: " + ", ".join(f"{c} {cpu(c, 'receiver'):.0f}/{cpu(c, 'sender'):.0f}" for c in ids),
        holds=not heavier,
    )

    no, allo = ms["no_opts"], ms["all_opts"]
    ctx.claim(
        "claim.no_opts_tcpip_largest",
        "Without optimisations, per-packet TCP/IP processing is the largest CPU category on both sides",
        "largest category without optimisations: "
        + ", ".join(f"{s} {CATEGORY_LABELS[_largest(no, s)]} ({share('no_opts', s, _largest(no, s)):.1f} %)"
                    for s in ("sender", "receiver")),
        holds=all(_largest(no, s) == "tcpip" for s in ("sender", "receiver")),
    )
    ctx.claim(
        "claim.all_opts_copy_largest",
        "With all optimisations, data copy is the largest CPU category on both sides",
        "largest category with all optimisations: "
        + ", ".join(f"{s} {CATEGORY_LABELS[_largest(allo, s)]} ({share('all_opts', s, _largest(allo, s)):.1f} %;"
                    f" data copy {share('all_opts', s, 'data_copy'):.1f} %)" for s in ("sender", "receiver")),
        holds=all(_largest(allo, s) == "data_copy" for s in ("sender", "receiver")),
    )

    for opt, name in (("tso_gro", "TSO/GRO"), ("jumbo", "Jumbo frames")):
        ctx.claim(
            f"claim.{opt}_raises_per_core",
            f"{name} raise throughput per core over no optimisations",
            f"per core: {opt} {_pc(ms[opt])}, no_opts {_pc(no)}",
            holds=ms[opt].per_core_gbps > no.per_core_gbps,
        )
    best = max(ids, key=lambda c: ms[c].per_core_gbps)
    others = max(ms[c].per_core_gbps for c in ids if c != "all_opts")
    ctx.claim(
        "claim.all_opts_highest_per_core",
        "All optimisations together give the highest throughput per core",
        f"per core: all_opts {_pc(allo)}; highest of the others {others:.2f} Gb/s; best: {best}",
        holds=allo.per_core_gbps > others,
    )

    pairs = (("tso_gro_arfs", "tso_gro"), ("jumbo_arfs", "jumbo"))
    ctx.claim(
        "claim.arfs_lowers_receiver_cpu",
        "aRFS lowers the receiver's CPU use (TSO/GRO + aRFS vs TSO/GRO; jumbo + aRFS vs jumbo)",
        "receiver CPU %: " + ", ".join(f"{a} {cpu(a, 'receiver'):.1f} vs {b} {cpu(b, 'receiver'):.1f}" for a, b in pairs),
        holds=all(cpu(a, "receiver") < cpu(b, "receiver") for a, b in pairs),
    )

    gro_pairs = (("tso_gro", "no_opts"), ("tso_gro_jumbo", "jumbo"))
    ctx.claim(
        "claim.gro_lowers_receiver_tcpip_share",
        "TSO/GRO lower the receiver's TCP/IP share (per-packet processing amortised over aggregated segments)",
        "receiver TCP/IP share: " + ", ".join(
            f"{a} {share(a, 'receiver', 'tcpip'):.1f} % vs {b} {share(b, 'receiver', 'tcpip'):.1f} %" for a, b in gro_pairs),
        holds=all(share(a, "receiver", "tcpip") < share(b, "receiver", "tcpip") for a, b in gro_pairs),
    )
    ctx.claim(
        "claim.jumbo_raises_receiver_copy_share",
        "Jumbo frames raise the receiver's data-copy share over no optimisations (fewer packets per byte copied)",
        f"receiver data copy share: jumbo {share('jumbo', 'receiver', 'data_copy'):.1f} %,"
        f" no_opts {share('no_opts', 'receiver', 'data_copy'):.1f} %",
        holds=share("jumbo", "receiver", "data_copy") > share("no_opts", "receiver", "data_copy"),
    )

    held = sum(c.holds for c in ctx.claims)
    lines = [
        f"{held} of {len(ctx.claims)} claims hold. Each follows from the study's set-up or from general networking",
        "knowledge; none is a published result of the intermediate configurations (those are held out). Each",
        "verdict is computed from the runs above: a share is a category's cycles over the side's total, \"raise\"",
        "and \"lower\" are strict. The claims table, with each claim's evidence, closes the report.",
    ]
    failing = [c.id for c in ctx.claims if not c.holds]
    if failing:
        lines += ["", "Not holding on this profile: " + ", ".join(f"`{i}`" for i in failing) + "."]
    return lines
