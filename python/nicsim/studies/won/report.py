"""The Won report's sections: totals (Figure 3), cycles by layer (Figures 4
and 5), the 256-byte send and 4-KB receive (Figures 6 and 7) and the
improvement factor of M-VIA over UDP/IP."""

from __future__ import annotations

from typing import Any

from nicsim.studies.framework import Context

from .experiments import COLORS, ECHO, LABELS, MTU, PROTOCOLS, layers

Echoes = dict[tuple[str, int], dict[str, Any]]


def echoes(ctx: Context) -> Echoes:
    """Each run's echo report by (protocol, size)."""
    out: Echoes = {}
    for p in ctx.points(ECHO):
        echo = p.report.raw.get("echo")
        if echo is None:
            raise RuntimeError(f"won echo point {dict(p.params)} has no echo report")
        out[(echo["protocol"], int(echo["size"]))] = echo
    return out


def sizes(by: Echoes) -> list[int]:
    return sorted({s for _, s in by})


def fmt(x: float) -> str:
    return f"{x:,.0f}"


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def totals(ctx: Context) -> list[str]:
    """Figure 3: total cycles per message, and the check that every
    message's layers add up to its total."""
    by = echoes(ctx)
    checked, mismatched = 0, []
    for (proto, size), e in sorted(by.items()):
        for m in e["messages"]:
            for path in ("send", "receive"):
                side = m[path]
                checked += 1
                if sum(side["study"].values()) != side["total"] or sum(side["cycles"].values()) != side["total"]:
                    mismatched.append((proto, size, m["msg"], path))
    rows = []
    for (proto, size), e in sorted(by.items()):
        rows.append(
            {
                "protocol": proto,
                "size": size,
                "send_cycles": round(e["send"]["total"], 1),
                "receive_cycles": round(e["receive"]["total"], 1),
                "send_elapsed_cycles": round(e["send"]["elapsed"], 1),
                "receive_elapsed_cycles": round(e["receive"]["elapsed"], 1),
                "frames": round(e["send"]["frames"], 2),
                "messages": e["measured"],
            }
        )
    ctx.csv("totals.csv", rows)
    plt = _plt()
    ss = sizes(by)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for proto, name in (("udp", "UDP/IP"), ("via", "M-VIA")):
        for path, style in (("send", "-o"), ("receive", "--s")):
            ax.plot(ss, [by[(proto, s)][path]["total"] for s in ss], style, label=f"{name} {path}")
    ax.axvline(MTU, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("cycles per message")
    ax.set_title("Send and receive cycles vs message size")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    png = ctx.figure(fig, "fig3-total-cycles", pdf=True)
    lines = [
        f"Breakdowns checked: {checked} message sides; the per-layer cycles add up to the",
        "total in " + ("every one." if not mismatched else f"all but {len(mismatched)}: {mismatched[:5]}"),
        "",
        f"![total]({png})",
        "",
        "| size (B) | frames | UDP send | UDP receive | VIA send | VIA receive |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for s in ss:
        u, v = by[("udp", s)], by[("via", s)]
        lines.append(
            f"| {s} | {u['send']['frames']:.0f} / {v['send']['frames']:.0f} | {fmt(u['send']['total'])} |"
            f" {fmt(u['receive']['total'])} | {fmt(v['send']['total'])} | {fmt(v['receive']['total'])} |"
        )
    lines += ["", "(frames: UDP / VIA frames per message; cycles are means over the measured messages.)"]
    return lines


def by_layer(ctx: Context) -> list[str]:
    """Figures 4 and 5: stacked per-layer bars and tables."""
    by = echoes(ctx)
    ss = sizes(by)
    layer_rows, nicsim_rows = [], []
    for (proto, size), e in sorted(by.items()):
        for path in ("send", "receive"):
            for layer in layers(proto):
                layer_rows.append({"protocol": proto, "size": size, "path": path, "layer": layer,
                                   "cycles": round(e[path]["study"].get(layer, 0.0), 1)})
            for layer, v in e[path]["cycles"].items():
                nicsim_rows.append({"protocol": proto, "size": size, "path": path, "layer": layer, "cycles": round(v, 1)})
    ctx.csv("layers.csv", layer_rows)
    ctx.csv("nicsim-layers.csv", nicsim_rows)
    plt = _plt()

    def stacked(path: str, name: str, title: str) -> str:
        fig, ax = plt.subplots(figsize=(10, 4.8))
        width = 0.38
        seen: set[str] = set()
        for i, s in enumerate(ss):
            for k, proto in enumerate(PROTOCOLS):
                x = i + (k - 0.5) * width
                bottom = 0.0
                for layer in layers(proto):
                    v = by[(proto, s)][path]["study"].get(layer, 0.0)
                    label = LABELS[layer] if layer not in seen else None
                    seen.add(layer)
                    ax.bar(x, v, width * 0.95, bottom=bottom, color=COLORS[layer], label=label,
                           hatch="//" if proto == "via" else None, edgecolor="white", linewidth=0.3)
                    bottom += v
        ax.set_xticks(range(len(ss)))
        ax.set_xticklabels([f"{s}" for s in ss])
        ax.set_xlabel("message size (bytes); left bar UDP/IP, right (hatched) M-VIA")
        ax.set_ylabel("cycles per message")
        ax.set_title(title)
        ax.legend(fontsize=8, ncol=3)
        ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        return ctx.figure(fig, name, pdf=True)

    fig4 = stacked("send", "fig4-send-layers", "Send cycles by layer")
    fig5 = stacked("receive", "fig5-receive-layers", "Receive cycles by layer")
    lines = [f"![send layers]({fig4})", "", f"![receive layers]({fig5})", ""]
    for path in ("send", "receive"):
        for proto, name in (("udp", "UDP/IP"), ("via", "M-VIA")):
            ls = layers(proto)
            lines += [
                f"**{name} {path}** (cycles per message)",
                "",
                "| size (B) | " + " | ".join(LABELS[x] for x in ls) + " | total |",
                "| --- |" + " --- |" * (len(ls) + 1),
            ]
            for s in ss:
                st = by[(proto, s)][path]["study"]
                lines.append(f"| {s} | " + " | ".join(fmt(st.get(x, 0.0)) for x in ls)
                             + f" | {fmt(by[(proto, s)][path]['total'])} |")
            lines.append("")
    return lines


def breakdowns(ctx: Context) -> list[str]:
    """Figures 6 and 7: one size each, the driver split into Intr / Dev Drv / Dev."""
    by = echoes(ctx)
    plt = _plt()

    def breakdown(size: int, path: str, name: str, title: str) -> str:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for ax, proto, pname in zip(axes, PROTOCOLS, ("UDP/IP", "M-VIA")):
            st = by[(proto, size)][path]["study"]
            ls = layers(proto)
            vals = [st.get(layer, 0.0) for layer in ls]
            bars = ax.bar([LABELS[layer] for layer in ls], vals, color=[COLORS[layer] for layer in ls])
            for b, v in zip(bars, vals):
                ax.annotate(f"{v:.0f}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom", fontsize=7)
            ax.set_title(f"{pname}: {sum(vals):.0f} cycles")
            ax.tick_params(axis="x", labelrotation=30, labelsize=8)
            ax.grid(True, axis="y", alpha=0.3)
        axes[0].set_ylabel("cycles")
        fig.suptitle(title)
        fig.tight_layout()
        return ctx.figure(fig, name, pdf=True)

    fig6 = breakdown(256, "send", "fig6-send-256B", "256-byte send by layer")
    fig7 = breakdown(4096, "receive", "fig7-receive-4KB", "4-KB receive by layer")
    return ["### Figure 6: 256-byte send", "", f"![256 B send]({fig6})", "",
            "### Figure 7: 4-KB receive", "", f"![4 KB receive]({fig7})"]


def improvement(ctx: Context) -> list[str]:
    """The improvement factor of M-VIA over UDP/IP, per size."""
    by = echoes(ctx)
    rows = []
    for s in sizes(by):
        u, v = by[("udp", s)], by[("via", s)]
        rows.append(
            {
                "size": s,
                "udp_send": round(u["send"]["total"]),
                "via_send": round(v["send"]["total"]),
                "send_factor": round(u["send"]["total"] / v["send"]["total"], 3),
                "udp_receive": round(u["receive"]["total"]),
                "via_receive": round(v["receive"]["total"]),
                "receive_factor": round(u["receive"]["total"] / v["receive"]["total"], 3),
            }
        )
    ctx.csv("improvement.csv", rows)
    for path in ("send", "receive"):
        for r in rows:
            ctx.compare(f"factor.{path}.{r['size']}", f"M-VIA over UDP/IP {path} cycles, {r['size']} B message", "ratio",
                        nicsim=r[f"{path}_factor"])
        fs = [r[f"{path}_factor"] for r in rows]
        ctx.compare(f"factor.{path}.min", f"smallest M-VIA over UDP/IP {path} factor, {rows[0]['size']} B to"
                    f" {rows[-1]['size']} B", "ratio", nicsim=min(fs))
        ctx.compare(f"factor.{path}.max", f"largest M-VIA over UDP/IP {path} factor, {rows[0]['size']} B to"
                    f" {rows[-1]['size']} B", "ratio", nicsim=max(fs))
    lines = [
        "| size (B) | send: UDP / VIA cycles | factor | receive: UDP / VIA cycles | factor |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']} | {fmt(r['udp_send'])} / {fmt(r['via_send'])} | {r['send_factor']:.2f} |"
            f" {fmt(r['udp_receive'])} / {fmt(r['via_receive'])} | {r['receive_factor']:.2f} |"
        )
    sf = [r["send_factor"] for r in rows]
    rf = [r["receive_factor"] for r in rows]
    lines += [
        "",
        f"M-VIA needs fewer cycles than UDP/IP at every size: {min(sf):.2f}x to {max(sf):.2f}x on send and",
        f"{min(rf):.2f}x to {max(rf):.2f}x on receive. The study's own factors are held out from nicsim's",
        "copy of the study; these come from the profile's documented costs, not from a fit.",
    ]
    return lines
