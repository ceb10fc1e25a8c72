"""The Won study: per-layer cycles of a send and a receive, UDP/IP vs M-VIA.

Won, Lee, Yu, Moh, Kim, Park, "Linux/SimOS -- a simulation environment for
evaluating high-speed communication systems". A SimOS MIPS machine ("Mipsy",
in-order, 32 KB L1 I/D at 1 cycle, 1 MB L2 at 10 cycles, 100-cycle memory,
an Ethernet NIC with 240 MB/s DMA, MTU 1500, Linux 2.3) sends messages to an
echo node over the kernel's UDP/IP or over M-VIA (user-level messaging).

One sweep over ``echo.toml`` (also at ``scenarios/won/``): protocol (udp,
via) times message size. Each run sends ten measured messages after two
warm-up ones; the client's report holds every message's send and receive
cycles by layer, grouped as the study groups them:

* UDP/IP: Socket, UDP, IP, Dev, Dev Drv, Intr, DMA (send copy and
  fragmentation in IP, receive copy in UDP, defragmentation in IP);
* M-VIA: VI Library, Transport, Dev Drv, Intr, DMA.

Send: the call until the send completion (the driver reclaimed the last
frame). Receive: the first frame's arrival at the NIC until the receive call
returns.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from nicsim.campaign.cache import Cache
from nicsim.campaign.executors import Executor
from nicsim.campaign.reproduction import Reproduction
from nicsim.campaign.sweep import Sweep
from nicsim.studies import run_and_report, write_csv

HERE = Path(__file__).parent

PROTOCOLS = ["udp", "via"]
SIZES = [4, 64, 256, 1024, 1472, 2048, 4096, 8192, 16384, 32768]
"""Message sizes (bytes): a few bytes to well above the MTU; 1472 B is the
largest UDP payload in one 1500-byte frame."""

UDP_LAYERS = ["socket", "udp", "ip", "dev", "dev_drv", "intr", "dma"]
VIA_LAYERS = ["vi_library", "transport", "dev_drv", "intr", "dma"]
LABELS = {
    "socket": "Socket",
    "udp": "UDP",
    "ip": "IP",
    "dev": "Dev",
    "dev_drv": "Dev Drv",
    "intr": "Intr",
    "dma": "DMA",
    "vi_library": "VI Library",
    "transport": "Transport",
}
COLORS = {
    "socket": "#4c72b0",
    "udp": "#55a868",
    "ip": "#c44e52",
    "dev": "#8172b2",
    "dev_drv": "#937860",
    "intr": "#da8bc3",
    "dma": "#8c8c8c",
    "vi_library": "#64b5cd",
    "transport": "#ccb974",
}
MTU = 1500


def sweeps() -> list[Sweep]:
    """The study's one sweep."""
    return [
        Sweep(
            HERE / "echo.toml",
            grid={"workload.echo.protocol": PROTOCOLS, "workload.echo.size": [f"{s}B" for s in SIZES]},
            name="won-echo",
            description="Messages to an echo node, UDP/IP and VIA, per size (Figures 3-7)",
        )
    ]


def study() -> Reproduction:
    """The study as a :class:`Reproduction`."""
    return Reproduction("won", sweeps=sweeps(), description=__doc__ or "")


def _runs(cache: Cache, sweep: str) -> list[dict[str, Any]]:
    """The echo report of every finished point of ``sweep``."""
    frame = cache.to_pandas(sweep)
    out = []
    for row in frame.to_dict("records"):
        if row["status"] != "ok":
            raise RuntimeError(f"{sweep} point {row['point']} did not run: {row.get('error')}")
        record = cache.get(row["key"])
        assert record is not None
        echo = record["report"]["echo"]
        if echo is None:
            raise RuntimeError(f"{sweep} point {row['point']} has no echo report")
        out.append(echo)
    return out


def reproduce(
    out: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
    executor: Executor | None = None,
    progress: bool | None = None,
) -> list[Path]:
    """Run what is missing and write the report; returns the files written."""

    def report(cache: Cache, out_dir: Path, wall: float) -> list[Path]:
        return write_report(_runs(cache, "won-echo"), out_dir, wall)

    return run_and_report(study(), report, out, results, executor, progress)


def _layers(proto: str) -> list[str]:
    return UDP_LAYERS if proto == "udp" else VIA_LAYERS


def write_report(echoes: list[dict[str, Any]], out_dir: Path, wall_s: float) -> list[Path]:
    """Tables, figures and ``report.md`` from the echo runs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    by = {(e["protocol"], int(e["size"])): e for e in echoes}
    sizes = sorted({s for _, s in by})

    def save(fig: Any, name: str) -> str:
        for ext in ("png", "pdf"):
            path = out_dir / f"{name}.{ext}"
            fig.savefig(path, dpi=120)
            written.append(path)
        plt.close(fig)
        return f"{name}.png"

    # Per message: does the breakdown add up to the total?
    checked, mismatched = 0, []
    for e in echoes:
        for m in e["messages"]:
            for path in ("send", "receive"):
                side = m[path]
                checked += 1
                if sum(side["study"].values()) != side["total"] or sum(side["cycles"].values()) != side["total"]:
                    mismatched.append((e["protocol"], e["size"], m["msg"], path))

    totals = []
    layer_rows = []
    nicsim_rows = []
    for (proto, size), e in sorted(by.items()):
        totals.append(
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
        for path in ("send", "receive"):
            for layer in _layers(proto):
                layer_rows.append(
                    {
                        "protocol": proto,
                        "size": size,
                        "path": path,
                        "layer": layer,
                        "cycles": round(e[path]["study"].get(layer, 0.0), 1),
                    }
                )
            for layer, v in e[path]["cycles"].items():
                nicsim_rows.append({"protocol": proto, "size": size, "path": path, "layer": layer, "cycles": round(v, 1)})
    written.append(write_csv(out_dir / "totals.csv", totals))
    written.append(write_csv(out_dir / "layers.csv", layer_rows))
    written.append(write_csv(out_dir / "nicsim-layers.csv", nicsim_rows))

    improvement = []
    for s in sizes:
        u, v = by[("udp", s)], by[("via", s)]
        improvement.append(
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
    written.append(write_csv(out_dir / "improvement.csv", improvement))

    # Figure 3: total cycles vs size.
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for proto, name in (("udp", "UDP/IP"), ("via", "M-VIA")):
        for path, style in (("send", "-o"), ("receive", "--s")):
            ax.plot(sizes, [by[(proto, s)][path]["total"] for s in sizes], style, label=f"{name} {path}")
    ax.axvline(MTU, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("cycles per message")
    ax.set_title("Send and receive cycles vs message size")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig3 = save(fig, "fig3-total-cycles")

    # Figures 4 and 5: stacked per-layer bars, UDP and VIA side by side.
    def stacked(path: str, name: str, title: str) -> str:
        fig, ax = plt.subplots(figsize=(10, 4.8))
        width = 0.38
        seen: set[str] = set()
        for i, s in enumerate(sizes):
            for k, proto in enumerate(PROTOCOLS):
                x = i + (k - 0.5) * width
                bottom = 0.0
                for layer in _layers(proto):
                    v = by[(proto, s)][path]["study"].get(layer, 0.0)
                    label = LABELS[layer] if layer not in seen else None
                    seen.add(layer)
                    ax.bar(x, v, width * 0.95, bottom=bottom, color=COLORS[layer], label=label,
                           hatch="//" if proto == "via" else None, edgecolor="white", linewidth=0.3)
                    bottom += v
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels([f"{s}" for s in sizes])
        ax.set_xlabel("message size (bytes); left bar UDP/IP, right (hatched) M-VIA")
        ax.set_ylabel("cycles per message")
        ax.set_title(title)
        ax.legend(fontsize=8, ncol=3)
        ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        return save(fig, name)

    fig4 = stacked("send", "fig4-send-layers", "Send cycles by layer")
    fig5 = stacked("receive", "fig5-receive-layers", "Receive cycles by layer")

    # Figures 6 and 7: one size, the driver split into Intr / Dev Drv / Dev.
    def breakdown(size: int, path: str, name: str, title: str) -> str:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for ax, proto, pname in zip(axes, PROTOCOLS, ("UDP/IP", "M-VIA")):
            st = by[(proto, size)][path]["study"]
            layers = _layers(proto)
            vals = [st.get(layer, 0.0) for layer in layers]
            bars = ax.bar([LABELS[layer] for layer in layers], vals, color=[COLORS[layer] for layer in layers])
            for b, v in zip(bars, vals):
                ax.annotate(f"{v:.0f}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom", fontsize=7)
            ax.set_title(f"{pname}: {sum(vals):.0f} cycles")
            ax.tick_params(axis="x", labelrotation=30, labelsize=8)
            ax.grid(True, axis="y", alpha=0.3)
        axes[0].set_ylabel("cycles")
        fig.suptitle(title)
        fig.tight_layout()
        return save(fig, name)

    fig6 = breakdown(256, "send", "fig6-send-256B", "256-byte send by layer")
    fig7 = breakdown(4096, "receive", "fig7-receive-4KB", "4-KB receive by layer")

    written.append(
        _markdown(out_dir, by, sizes, totals, improvement, checked, mismatched, wall_s, (fig3, fig4, fig5, fig6, fig7))
    )
    return written


def _fmt(x: float) -> str:
    return f"{x:,.0f}"


def _markdown(
    out_dir: Path,
    by: dict[tuple[str, int], dict[str, Any]],
    sizes: list[int],
    totals: list[dict[str, Any]],
    improvement: list[dict[str, Any]],
    checked: int,
    mismatched: list[tuple[Any, ...]],
    wall_s: float,
    figs: tuple[str, ...],
) -> Path:
    fig3, fig4, fig5, fig6, fig7 = figs
    lines = [
        "# Won et al.: UDP/IP vs M-VIA by layer, reproduced by nicsim",
        "",
        "Host a is the study's SimOS machine (`won-simos-mips`: in-order Mipsy at about one",
        "instruction per cycle, 32 KB L1 I/D at 1 cycle, 1 MB L2 at 10 cycles, 100-cycle memory,",
        "NIC DMA at 240 MB/s, MTU 1500, Linux 2.3 costs; clock 200 MHz, an estimate). It sends each",
        "message to echo node b, which swaps the headers of every frame and returns it; then it",
        "receives the echo. Ten measured messages per point after two warm-up ones (ARP, first",
        "call). Send: the call until the send completion; receive: first frame at the NIC until the",
        "receive call returns. DMA is the frames' DMA time in CPU cycles. The per-layer costs are",
        "estimates documented in the profile (the study's own per-layer numbers are not in nicsim's",
        "spec); only the protocol and the size change between points.",
        f"All runs took {wall_s:.1f} s of wall time (cached points are not rerun).",
        "",
        f"Breakdowns checked: {checked} message sides; the per-layer cycles add up to the",
        "total in " + ("every one." if not mismatched else f"all but {len(mismatched)}: {mismatched[:5]}"),
        "",
        f"## Figure 3: total cycles vs message size\n\n![total]({fig3})\n",
        "| size (B) | frames | UDP send | UDP receive | VIA send | VIA receive |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for s in sizes:
        u, v = by[("udp", s)], by[("via", s)]
        lines.append(
            f"| {s} | {u['send']['frames']:.0f} / {v['send']['frames']:.0f} | {_fmt(u['send']['total'])} |"
            f" {_fmt(u['receive']['total'])} | {_fmt(v['send']['total'])} | {_fmt(v['receive']['total'])} |"
        )
    lines += [
        "",
        "(frames: UDP / VIA frames per message; cycles are means over the measured messages.)",
        "",
        f"## Figure 4: send cycles by layer\n\n![send layers]({fig4})\n",
        f"## Figure 5: receive cycles by layer\n\n![receive layers]({fig5})\n",
    ]
    for path in ("send", "receive"):
        for proto, name in (("udp", "UDP/IP"), ("via", "M-VIA")):
            layers = _layers(proto)
            lines += [
                f"**{name} {path}** (cycles per message)",
                "",
                "| size (B) | " + " | ".join(LABELS[x] for x in layers) + " | total |",
                "| --- |" + " --- |" * (len(layers) + 1),
            ]
            for s in sizes:
                st = by[(proto, s)][path]["study"]
                lines.append(
                    f"| {s} | " + " | ".join(_fmt(st.get(x, 0.0)) for x in layers)
                    + f" | {_fmt(by[(proto, s)][path]['total'])} |"
                )
            lines.append("")
    lines += [
        f"## Figure 6: 256-byte send\n\n![256 B send]({fig6})\n",
        f"## Figure 7: 4-KB receive\n\n![4 KB receive]({fig7})\n",
        "## What the model says",
        "",
    ]
    lines += _findings(by, sizes)
    lines += [
        "",
        "## Improvement factor of M-VIA over UDP/IP",
        "",
        "| size (B) | send: UDP / VIA cycles | factor | receive: UDP / VIA cycles | factor |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in improvement:
        lines.append(
            f"| {r['size']} | {_fmt(r['udp_send'])} / {_fmt(r['via_send'])} | {r['send_factor']:.2f} |"
            f" {_fmt(r['udp_receive'])} / {_fmt(r['via_receive'])} | {r['receive_factor']:.2f} |"
        )
    sf = [r["send_factor"] for r in improvement]
    rf = [r["receive_factor"] for r in improvement]
    lines += [
        "",
        f"M-VIA needs fewer cycles than UDP/IP at every size: {min(sf):.2f}x to {max(sf):.2f}x on send and",
        f"{min(rf):.2f}x to {max(rf):.2f}x on receive. The study publishes its own factors per size, but",
        "nicsim's copy of the study (`spec/papers/won-simos-via.md`) does not quote them, so this report",
        "cannot put them side by side; these factors come from the profile's documented estimates,",
        "not from a fit to the study.",
    ]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _findings(by: dict[tuple[str, int], dict[str, Any]], sizes: list[int]) -> list[str]:
    """The study's qualitative structure, checked on the model's numbers."""
    out = []
    small, one = sizes[0], max(s for s in sizes if s + 28 <= MTU)
    big = sizes[-1]
    multi = [s for s in sizes if s + 28 > MTU]

    def st(proto: str, s: int, path: str, layer: str) -> float:
        return float(by[(proto, s)][path]["study"].get(layer, 0.0))

    def nl(proto: str, s: int, path: str, layer: str) -> float:
        return float(by[(proto, s)][path]["cycles"].get(layer, 0.0))

    # UDP send: the IP layer holds the copy (and checksum) and grows.
    ip_grow = st("udp", one, "send", "ip") - st("udp", small, "send", "ip")
    tot_grow = by[("udp", one)]["send"]["total"] - by[("udp", small)]["send"]["total"]
    out.append(
        f"- UDP send, {small} B to {one} B (one frame): total +{_fmt(tot_grow)} cycles, of which the IP layer"
        f" (send copy and checksum) +{_fmt(ip_grow)} ({ip_grow / tot_grow * 100:.0f} %) and DMA"
        f" +{_fmt(st('udp', one, 'send', 'dma') - st('udp', small, 'send', 'dma'))}."
    )
    socket = [st("udp", s, "send", "socket") for s in sizes]
    out.append(
        f"- The socket layer is constant: {_fmt(min(socket))} to {_fmt(max(socket))} cycles per send over all sizes."
    )
    frag = [s for s in sizes if nl("udp", s, "send", "ip_frag") > 0]
    defrag = [s for s in sizes if nl("udp", s, "receive", "ip_frag") > 0]
    out.append(
        f"- IP fragmentation (send) appears at {frag[0] if frag else 'no'} B and above, defragmentation"
        f" (receive) at {defrag[0] if defrag else 'no'} B and above; none at {one} B or below"
        f" ({'holds' if frag == multi and defrag == multi else 'does NOT hold'})."
    )
    rc = nl("udp", big, "receive", "copy")
    out.append(
        f"- UDP receive at {big} B: the copy to user space ({_fmt(rc)} cycles) sits in the UDP layer"
        f" ({_fmt(st('udp', big, 'receive', 'udp'))} cycles in all), defragmentation in IP"
        f" ({_fmt(nl('udp', big, 'receive', 'ip_frag'))} of IP's {_fmt(st('udp', big, 'receive', 'ip'))})."
    )
    via_cpu = [by[("via", s)]["send"]["total"] - st("via", s, "send", "dma") for s in sizes if s <= MTU - 20]
    out.append(
        f"- M-VIA send has no copy (copy cycles on send: {_fmt(max(nl('via', s, 'send', 'copy') for s in sizes))});"
        f" up to the MTU its CPU cycles are {_fmt(min(via_cpu))} to {_fmt(max(via_cpu))} whatever the size, only DMA"
        f" grows ({_fmt(st('via', small, 'send', 'dma'))} to {_fmt(st('via', one, 'send', 'dma'))} cycles)."
    )
    grow = {
        layer: st("udp", big, "receive", layer) - st("udp", small, "receive", layer) for layer in UDP_LAYERS
    }
    top = sorted(grow.items(), key=lambda kv: -kv[1])[:3]
    out.append(
        f"- What grows with size on UDP receive ({small} B to {big} B): "
        + ", ".join(f"{LABELS[k]} +{_fmt(v)}" for k, v in top)
        + f"; the socket layer +{_fmt(grow['socket'])}, the per-frame layers Intr +{_fmt(grow['intr'])}"
        f" and Dev +{_fmt(grow['dev'])} (with the number of frames)."
    )
    vt = st("via", big, "receive", "transport")
    out.append(
        f"- M-VIA receive at {big} B: the transport ({_fmt(vt)} cycles) carries translation, defragmentation and the"
        f" copy from the driver's buffer into registered memory ({_fmt(nl('via', big, 'receive', 'copy'))} cycles):"
        " M-VIA over a plain Ethernet NIC copies once on receive."
    )
    factor = {
        s: (
            by[("udp", s)]["send"]["total"] / by[("via", s)]["send"]["total"],
            by[("udp", s)]["receive"]["total"] / by[("via", s)]["receive"]["total"],
        )
        for s in sizes
    }
    recv_better = [s for s in sizes if factor[s][1] > factor[s][0]]
    out.append(
        "- The receive factor exceeds the send factor at "
        + (", ".join(f"{s} B" for s in recv_better) if recv_better else "no size")
        + " (VIA's receive skips socket, wake-up, system call, IP and checksum, a fixed saving);"
        " at larger sizes the receive copy, which both protocols pay, dilutes it."
    )
    return out
