"""The Won report's claims: every statement the study's text makes about
where the cycles go, checked on nicsim's runs.

The text describes figures nicsim's copy of the study does not have, in
words. The words get fixed meanings, set once here and used by every claim:
a layer's *share* is its cycles over the path's total (DMA included, as in
the study's stacked bars).
"""

from __future__ import annotations

from collections.abc import Iterable

from nicsim.studies.framework import Context

from .experiments import LABELS, MTU
from .report import echoes, fmt, sizes

NEGLIGIBLE = 0.10
"""A layer with "a negligible effect" has a share below this."""
SMALL = 0.20
""""Only a small portion", "minimal", "relatively insignificant": a share below this."""
SIGNIFICANT = 0.10
""""A significant portion": a share of at least this."""
CONSTANT = 0.10
""""Relatively constant": largest over smallest at most 1 + this."""
SIMILAR = 1.5
""""Similar results": the larger over the smaller at most this."""

ONE_FRAME = MTU - 20 - 8
"""The largest UDP payload in one frame."""

DRIVER = {"udp": ("dev", "dev_drv", "intr"), "via": ("dev_drv", "intr")}
"""The study's Driver layer: "For UDP/IP, the Driver layer was further
subdivided into ... (Intr), ... (Dev Drv.), and ... (Dev)"; M-VIA has no Dev."""


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _spread(xs: Iterable[float]) -> float:
    xs = list(xs)
    return max(xs) / min(xs) - 1 if min(xs) > 0 else float("inf")


def claims(ctx: Context) -> list[str]:
    """Every claim, as ``claim.<id>`` rows; returns the section's lines."""
    by = echoes(ctx)
    ss = sizes(by)
    big = [s for s in ss if s > ONE_FRAME]
    small = [s for s in ss if s <= ONE_FRAME]

    def st(proto: str, s: int, path: str, layer: str) -> float:
        return float(by[(proto, s)][path]["study"].get(layer, 0.0))

    def nl(proto: str, s: int, path: str, layer: str) -> float:
        return float(by[(proto, s)][path]["cycles"].get(layer, 0.0))

    def total(proto: str, s: int, path: str) -> float:
        return float(by[(proto, s)][path]["total"])

    def share(proto: str, s: int, path: str, group: Iterable[str]) -> float:
        return sum(st(proto, s, path, g) for g in group) / total(proto, s, path)

    def largest(proto: str, s: int, path: str) -> str:
        study = by[(proto, s)][path]["study"]
        return max(study, key=lambda k: study[k])

    # Socket: constant and small.
    sock = {p: [st("udp", s, p, "socket") for s in ss] for p in ("send", "receive")}
    ctx.claim("claim.udp_socket_constant",
              "For UDP/IP send/receive, the amount of cycle time spent on the Socket layer stays relatively constant for all message sizes",
              f"Socket: send {fmt(min(sock['send']))}-{fmt(max(sock['send']))}, receive"
              f" {fmt(min(sock['receive']))}-{fmt(max(sock['receive']))} cycles over {ss[0]} B to {ss[-1]} B",
              holds=all(_spread(v) <= CONSTANT for v in sock.values()))
    sock_share = {(s, p): share("udp", s, p, ["socket"]) for s in ss for p in ("send", "receive")}
    worst = max(sock_share, key=lambda k: sock_share[k])
    over = sorted({f"{s} B {p}" for (s, p), v in sock_share.items() if v >= SMALL})
    ctx.claim("claim.udp_socket_small", "[the Socket layer] represents only a small portion of the total execution time",
              f"largest Socket share {_pct(sock_share[worst])} ({worst[0]} B {worst[1]}); at or above"
              f" {_pct(SMALL)}: {', '.join(over) if over else 'none'}",
              holds=not over)

    # UDP send: IP grows with the copy and fragmentation.
    ip_send = [st("udp", s, "send", "ip") for s in ss]
    ctx.claim("claim.udp_send_ip_grows", "the amount of time spent on the IP layer increases as the message size increases",
              f"UDP send IP: {', '.join(fmt(x) for x in ip_send)} cycles ({ss[0]} B to {ss[-1]} B)",
              holds=all(b > a for a, b in zip(ip_send, ip_send[1:])))
    copy_in_ip = all(st("udp", s, "send", "ip") >= nl("udp", s, "send", "copy") + nl("udp", s, "send", "checksum")
                     for s in ss)
    frag_where = [s for s in ss if nl("udp", s, "send", "ip_frag") > 0]
    udp_send = [st("udp", s, "send", "udp") for s in ss]
    ctx.claim("claim.udp_send_copy_frag_in_ip",
              "in Linux, in addition to IP fragmentation, data copying from user space to sk_buff buffer during a send is done at the IP layer",
              f"send copy and checksum ({fmt(nl('udp', ss[-1], 'send', 'copy') + nl('udp', ss[-1], 'send', 'checksum'))}"
              f" cycles at {ss[-1]} B) within IP at every size; fragmentation cycles at"
              f" {', '.join(f'{s} B' for s in frag_where) or 'no size'}; UDP send layer"
              f" {fmt(min(udp_send))}-{fmt(max(udp_send))}",
              holds=copy_in_ip and frag_where == big and _spread(udp_send) <= CONSTANT)

    # UDP receive: the copy in UDP, defragmentation in IP.
    copy_in_udp = all(st("udp", s, "receive", "udp") >= nl("udp", s, "receive", "copy") for s in ss)
    udp_recv = [st("udp", s, "receive", "udp") for s in ss]
    ctx.claim("claim.udp_recv_copy_in_udp", "data copying from sk_buff buffer to user space during a receive is done at the UDP layer",
              f"receive copy within UDP at every size; UDP receive {fmt(udp_recv[0])} to {fmt(udp_recv[-1])} cycles",
              holds=copy_in_udp and udp_recv[-1] > 10 * udp_recv[0])
    ip_one = [st("udp", s, "receive", "ip") for s in small]
    defrag_share = [nl("udp", s, "receive", "ip_frag") / st("udp", s, "receive", "ip") for s in big]
    ctx.claim("claim.udp_recv_ip_defrag",
              "For receive, the time spent on the IP layer increases for message sizes larger than MTU mainly due to defragmentation",
              f"UDP receive IP {fmt(min(ip_one))}-{fmt(max(ip_one))} cycles up to {small[-1]} B,"
              f" {fmt(st('udp', big[0], 'receive', 'ip'))} at {big[0]} B; defragmentation"
              f" {_pct(min(defrag_share))} or more of IP above the MTU",
              holds=_spread(ip_one) <= CONSTANT and min(st("udp", s, "receive", "ip") for s in big) > max(ip_one)
              and min(defrag_share) > 0.5)

    # M-VIA library and transport.
    lib = {(s, p): share("via", s, p, ["vi_library"]) for s in ss for p in ("send", "receive")}
    lw = max(lib, key=lambda k: lib[k])
    lib_cycles = {st("via", s, p, "vi_library") for s in ss for p in ("send",)}
    ctx.claim("claim.via_library_negligible", "the Library layer has a negligible effect on the overall performance",
              f"VI Library share at most {_pct(lib[lw])} ({lw[0]} B {lw[1]}); send library"
              f" {', '.join(fmt(x) for x in sorted(lib_cycles))} cycles at every size",
              holds=lib[lw] < NEGLIGIBLE)
    tr = {(s, p): share("via", s, p, ["transport"]) for s in ss for p in ("send", "receive")}
    tw = min(tr, key=lambda k: tr[k])
    ctx.claim("claim.via_transport_significant",
              "virtual-to-physical address translation and fragmentation/defragmentation in the Transport layer constitute a significant portion of the total execution time",
              f"Transport share at least {_pct(tr[tw])} ({tw[0]} B {tw[1]})",
              holds=tr[tw] >= SIGNIFICANT)

    # Driver and NIC: similar, varying with size, small.
    ratios = {}
    for s in ss:
        for p in ("send", "receive"):
            u = sum(st("udp", s, p, g) for g in DRIVER["udp"])
            v = sum(st("via", s, p, g) for g in DRIVER["via"])
            ratios[(s, p, "driver")] = max(u, v) / min(u, v)
            ud, vd = st("udp", s, p, "dma"), st("via", s, p, "dma")
            ratios[(s, p, "dma")] = max(ud, vd) / min(ud, vd)
    rw = max(ratios, key=lambda k: ratios[k])
    ctx.claim("claim.driver_nic_similar", "For Driver and NIC layers, both protocols show similar results",
              f"UDP/IP over M-VIA (Driver: Dev + Dev Drv + Intr vs Dev Drv + Intr; DMA) at most"
              f" {ratios[rw]:.2f}x ({rw[2]}, {rw[0]} B {rw[1]})",
              holds=ratios[rw] <= SIMILAR)
    grows = all(sum(st(pr, ss[-1], p, g) for g in DRIVER[pr]) > sum(st(pr, ss[0], p, g) for g in DRIVER[pr])
                for pr in ("udp", "via") for p in ("send", "receive"))
    weighted = {
        (pr, p): sum(sum(st(pr, s, p, g) for g in DRIVER[pr]) for s in ss) / sum(total(pr, s, p) for s in ss)
        for pr in ("udp", "via") for p in ("send", "receive")
    }
    ctx.claim("claim.driver_varies_with_size", "the execution time of the Driver layer varies as a function of the message size",
              f"Driver cycles grow from {ss[0]} B to {ss[-1]} B on both paths of both protocols: {grows}",
              holds=grows)
    ww = max(weighted, key=lambda k: weighted[k])
    ctx.claim("claim.driver_small_portion", "[the Driver layer] represents only a small portion of the total execution time",
              "Driver share of all sizes' cycles: " + ", ".join(f"{pr} {p} {_pct(v)}" for (pr, p), v in weighted.items()),
              holds=weighted[ww] < SMALL)
    fits = {}
    for pr in ("udp", "via"):
        for p in ("send", "receive"):
            xs, ys = [float(s) for s in ss], [st(pr, s, p, "dma") for s in ss]
            n = len(xs)
            mx, my = sum(xs) / n, sum(ys) / n
            b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
            a = my - b * mx
            ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
            ss_tot = sum((y - my) ** 2 for y in ys)
            fits[(pr, p)] = (b, 1 - ss_res / ss_tot)
    slopes = [b for b, _ in fits.values()]
    ctx.claim("claim.dma_linear", "The DMA transfer in the NIC also varies linearly with the message size ... DMA transfer time is dependent only on the message size",
              "linear fits: " + ", ".join(f"{pr} {p} {b:.3f} cycles/B (R² {r2:.5f})" for (pr, p), (b, r2) in fits.items()),
              holds=min(r2 for _, r2 in fits.values()) >= 0.999 and max(slopes) / min(slopes) <= 1.05)

    # Figures 6 and 7.
    l256 = largest("udp", 256, "send")
    ctx.claim("claim.udp_send_ip_dominant",
              "For send, data copying and fragmentation occurs at the IP layer and it becomes dominant as message size grows. As a result it constitutes a large portion of the overall send time as shown in Figure 6",
              f"largest UDP send layer: {LABELS[l256]} at 256 B ({_pct(share('udp', 256, 'send', ['ip']))} IP),"
              f" {LABELS[largest('udp', ss[-1], 'send')]} at {ss[-1]} B ({_pct(share('udp', ss[-1], 'send', ['ip']))} IP)",
              holds=l256 == "ip" and largest("udp", ss[-1], "send") == "ip")
    r4, s4 = share("udp", 4096, "receive", ["udp"]), share("udp", 4096, "send", ["udp"])
    ctx.claim("claim.udp_recv_copy_large",
              "data copying for a receive operation occurs at the UDP layer and thus represents a large portion of the overall execution time compared to a send operation",
              f"UDP layer share at 4096 B: receive {_pct(r4)}, send {_pct(s4)}",
              holds=r4 > s4 and r4 >= SIGNIFICANT)
    l4k = largest("udp", 4096, "receive")
    d4k = nl("udp", 4096, "receive", "ip_frag") / st("udp", 4096, "receive", "ip")
    ctx.claim("claim.udp_recv_4k_ip_dominates", "due to its large message size (4 Kbytes) IP layer still dominates because of defragmentation",
              f"largest layer of the UDP 4096 B receive: {LABELS[l4k]} ({fmt(st('udp', 4096, 'receive', 'ip'))} IP,"
              f" {fmt(st('udp', 4096, 'receive', 'udp'))} UDP cycles); defragmentation {_pct(d4k)} of IP",
              holds=l4k == "ip" and d4k > 0.5)
    parts = {g: share("udp", 256, "send", [g]) for g in DRIVER["udp"]}
    ctx.claim("claim.udp_small_send_driver_significant",
              "all three portions of the Driver layer represent a significant portion of the overall execution time for sending a small message",
              "UDP 256 B send: " + ", ".join(f"{LABELS[g]} {_pct(v)}" for g, v in parts.items()),
              holds=min(parts.values()) >= SIGNIFICANT)
    d4 = share("udp", 4096, "receive", DRIVER["udp"])
    ctx.claim("claim.udp_large_driver_insignificant", "for a large message as shown in Figure 7, the Driver layer becomes relatively insignificant",
              f"Driver share of the UDP 4096 B receive: {_pct(d4)}", holds=d4 < SMALL)
    devdrv_rx = max(st("udp", s, "receive", "dev_drv") for s in ss)
    ctx.claim("claim.udp_recv_intr_dev_only", "a receive operation is interrupt initiated and thus handled only by Intr and Dev",
              f"Dev Drv on UDP receives: at most {fmt(devdrv_rx)} cycles; Intr and Dev carry the driver's work",
              holds=devdrv_rx == 0 and all(st("udp", s, "receive", "intr") > 0 and st("udp", s, "receive", "dev") > 0 for s in ss))
    dev_via = max(nl("via", s, p, "device") + st("via", s, p, "dev") for s in ss for p in ("send", "receive"))
    ctx.claim("claim.via_no_dev", "There is no Dev in M-VIA since it is a low-latency, user-level messaging",
              f"device-layer cycles on M-VIA paths: {fmt(dev_via)}", holds=dev_via == 0)
    v256 = share("via", 256, "send", DRIVER["via"])
    ctx.claim("claim.via_small_send_driver_minimal", "the combined effect of Intr and Dev Drv. is minimal for small messages",
              f"Intr + Dev Drv share of the M-VIA 256 B send: {_pct(v256)}"
              f" ({fmt(st('via', 256, 'send', 'intr'))} + {fmt(st('via', 256, 'send', 'dev_drv'))} of {fmt(total('via', 256, 'send'))} cycles)",
              holds=v256 < SMALL)
    i4 = share("via", 4096, "receive", ["intr"])
    ctx.claim("claim.via_4k_recv_intr",
              "for a large message as shown in Figure 7, Intr portion is significant but Dev Drv. has no effect. This is because receive operations are completely handled by Intr",
              f"M-VIA 4096 B receive: Intr {_pct(i4)}, Dev Drv {fmt(st('via', 4096, 'receive', 'dev_drv'))} cycles",
              holds=i4 >= SIGNIFICANT and st("via", 4096, "receive", "dev_drv") == 0)
    faster = [(s, p) for s in ss for p in ("send", "receive") if total("udp", s, p) <= total("via", s, p)]
    ctx.claim("claim.via_faster", "The results in Figure 3 clearly show the advantage of using low-latency, user-level messaging",
              f"M-VIA takes fewer cycles than UDP/IP at {2 * len(ss) - len(faster)} of {2 * len(ss)} (size, path) points",
              holds=not faster)

    failing = [c.id for c in ctx.claims if not c.holds]
    notes = [f"- `{i}`: {WHY[i]}" for i in failing if i in WHY]
    unexplained = [i for i in failing if i not in WHY]
    lines = [
        "Each claim's verdict is computed from nicsim's runs. The words mean: negligible, a share",
        f"below {_pct(NEGLIGIBLE)}; small, minimal, insignificant, below {_pct(SMALL)}; significant, at",
        f"least {_pct(SIGNIFICANT)}; constant, within {_pct(CONSTANT)}; similar, within a factor {SIMILAR}.",
        "A share is a layer's cycles over its path's total, DMA included. The claims table closes the report.",
    ]
    if failing:
        lines += ["", "Why the claims that do not hold cannot hold in this model:", "", *notes]
        lines += [f"- `{i}`: not explained yet." for i in unexplained]
    return lines


WHY = {
    "claim.udp_socket_small": (
        "the Socket layer holds the system call and, on receive, the wake-up: `schedule()` into the reader"
        " that sleeps in `skb_recv_datagram` (generic socket code), the same cycles at every size. A"
        " constant layer is a small share only of a large total: far below the threshold at 32 KiB, above"
        " it for the receives of a few hundred bytes (evidence column). The text does not say where its"
        " annotations put the scheduler."
    ),
    "claim.driver_nic_similar": (
        "the text's own Driver layers differ: UDP's has Dev (`dev_queue_xmit`, per frame) and its transmit"
        " completion frees an sk_buff; M-VIA has no Dev (\"There is no Dev in M-VIA\") and no sk_buff."
        " Receive drivers are equal and DMA differs by the header sizes only; the Driver layers of small"
        " sends differ by the factor in the evidence column."
    ),
    "claim.driver_small_portion": (
        "M-VIA's send takes the driver's DMA set-up and a transmit interrupt per frame, as UDP's does: a"
        " zero-copy send buffer may be reused only once the NIC has read it, so the driver must learn that"
        " the DMA finished. With no socket, IP or copy beside them, they are a large share of M-VIA's send."
    ),
    "claim.udp_small_send_driver_significant": (
        "Intr is significant, and so is the Driver layer as a whole, but Dev (`dev_queue_xmit`, ~150"
        " instructions) and Dev Drv (`hard_start_xmit`, ~70 instructions and one uncached access) are each"
        " below the threshold of a 256 B send; their code paths give no more."
    ),
    "claim.via_small_send_driver_minimal": (
        "with the same driver as UDP (the text: \"M-VIA uses a similar type of driver\") and UDP's driver"
        " significant for a 256 B send, M-VIA's is a larger share of its smaller total. The text measures"
        " `VipPostSend()` from call to return; it returns once the driver has started the DMA, about"
        " 1.2 us before the transmit interrupt of a 256 B frame, so the study's M-VIA send likely holds"
        " neither that interrupt nor much of the driver. nicsim's send runs to the send completion for"
        " both protocols; a call-to-return window is not modelled."
    ),
}
"""Why a claim that does not hold cannot hold in this model (shown only for
claims whose verdict is "does not hold")."""
