//! The per-frame cost model of a timed host: what the cost model needs to
//! know about a frame ([`Shape`]) and the send and receive pieces of stack
//! work (transport once per datagram, checksum, IP and fragmentation,
//! device, driver) it costs on a core, in cycles.

use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet};

use crate::host::cpu::Layer;
use crate::host::timing::Timing;
use crate::nic::offload::RxCost;
use crate::workload::via;

/// Where a frame sits in an IP datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Frag {
    /// Not fragmented.
    Whole,
    /// First fragment (carries the transport header).
    First,
    /// A later fragment; `last` when it completes the datagram.
    Later { last: bool },
}

/// What the cost model needs to know about a frame.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    /// Transport protocol (None: not IPv4, e.g. ARP).
    pub(super) proto: Option<IpProtocol>,
    /// IP payload bytes in this frame.
    pub(super) payload: u64,
    /// Application bytes (TCP/UDP payload) in this frame.
    pub(super) data: u64,
    pub(super) frag: Frag,
    /// Offset of this fragment's data in its datagram, bytes.
    pub(super) offset: u64,
    /// A VIA frame (not IP).
    pub(super) via: Option<crate::workload::via::FrameInfo>,
}

pub(super) fn shape(frame: &[u8]) -> Shape {
    use smoltcp::wire::TcpPacket;
    let none = Shape { proto: None, payload: 0, data: 0, frag: Frag::Whole, offset: 0, via: None };
    if let Some(v) = crate::workload::via::frame_info(frame) {
        return Shape { payload: v.payload, data: v.payload, via: Some(v), ..none };
    }
    let Ok(eth) = EthernetFrame::new_checked(frame) else { return none };
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return none;
    }
    let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else { return none };
    let payload = ip.payload().len() as u64;
    let frag = match (ip.frag_offset(), ip.more_frags()) {
        (0, false) => Frag::Whole,
        (0, true) => Frag::First,
        (_, more) => Frag::Later { last: !more },
    };
    let data = match (ip.next_header(), frag) {
        (IpProtocol::Tcp, Frag::Whole) => TcpPacket::new_checked(ip.payload()).map_or(0, |t| t.payload().len() as u64),
        (IpProtocol::Udp, Frag::Whole | Frag::First) => payload.saturating_sub(8),
        _ => payload,
    };
    Shape { proto: Some(ip.next_header()), payload, data, frag, offset: u64::from(ip.frag_offset()), via: None }
}

/// `bh_lock_sock` in the softirq: the socket's spinlock, whose line the
/// application's core had last (when it runs elsewhere).
pub(super) fn bh_lock_sock(timing: &Timing, core: usize) -> Option<(Layer, u64)> {
    let lock = timing.cycles_on(core, timing.costs.sock_lock);
    (lock > 0).then(|| (Layer::Lock, lock + timing.line_transfer()))
}

/// The bytes the queueing discipline counts for a packet of `len` bytes
/// carrying `data` bytes of payload (`qdisc_pkt_len`, `net/core/dev.c`
/// `qdisc_pkt_len_init`, Linux 5.4): its length and, for a TSO
/// super-segment cut to `mss`, every further segment's headers.
pub(super) fn qdisc_pkt_len(len: u64, data: u64, mss: Option<u16>) -> u64 {
    let segments = mss.map_or(1, |m| data.div_ceil(u64::from(m.max(1))).max(1));
    len + (segments - 1) * len.saturating_sub(data)
}

/// `MAX_TCP_HEADER` on a distribution's x86-64 Linux 5.4 build:
/// `L1_CACHE_ALIGN(128 + MAX_HEADER)` with `MAX_HEADER` = `LL_MAX_HEADER`
/// (128 with Hyper-V networking configured) + 48 (IPv6 tunnels): 320.
const MAX_TCP_HEADER: u64 = 320;

/// The payload bytes `tcp_sendmsg` puts in one sk_buff of a stream whose
/// segments carry `mss` bytes (`tcp_xmit_size_goal`, Linux 5.4
/// `net/ipv4/tcp.c`): one MSS without GSO, else the whole MSS multiples
/// that fit in `sk_gso_max_size` (64 KiB) less one byte and the headroom.
pub(super) fn send_size_goal(mss: u64, gso: bool) -> u64 {
    let mss = mss.max(1);
    if !gso {
        return mss;
    }
    let most = 65_536 - 1 - MAX_TCP_HEADER;
    (most / mss).max(1) * mss
}

/// The sk_buffs a write of `bytes` allocates when the unsent tail sk_buff
/// holds `fill` of `goal` bytes (`tcp_sendmsg_locked` fills the tail one
/// first), and how full the new tail is.
pub(super) fn send_skbs(fill: u64, bytes: u64, goal: u64) -> (u64, u64) {
    let goal = goal.max(1);
    let fill = fill % goal;
    ((fill + bytes).div_ceil(goal) - u64::from(fill > 0), (fill + bytes) % goal)
}

/// Send-path pieces of a frame the queueing discipline counts as `qlen`
/// bytes ([`qdisc_pkt_len`]): transport (once per datagram), software
/// checksum, IP (and fragmentation per fragment), device, the queueing
/// discipline, driver.
pub(super) fn tx_pieces(timing: &Timing, s: Shape, qlen: u64, core: usize) -> Vec<(Layer, u64)> {
    if let Some(v) = s.via {
        return via_tx_pieces(timing, v, core);
    }
    let c = &timing.costs;
    let cy = |cost| timing.cycles_on(core, cost);
    let mut pieces = Vec::with_capacity(6);
    if s.proto.is_some() {
        if matches!(s.frag, Frag::Whole | Frag::First) {
            match s.proto {
                Some(IpProtocol::Tcp) => pieces.push((Layer::Tcp, cy(c.tcp_tx))),
                Some(IpProtocol::Udp) => pieces.push((Layer::Udp, cy(c.udp_tx))),
                _ => {}
            }
            pieces.push((Layer::Ip, cy(c.ip_tx)));
            // A TCP data segment's sk_buff was built by the write that
            // queued its data (`send_skbs`), on the writer's core; every
            // other segment gets its own here.
            if !(s.proto == Some(IpProtocol::Tcp) && s.data > 0) {
                push_nonzero(&mut pieces, Layer::Skb, cy(c.skb_alloc));
                push_nonzero(&mut pieces, Layer::Mm, cy(c.skb_slab));
            }
        }
        if !timing.nic.checksum_offload {
            pieces.push((Layer::Checksum, timing.checksum_cycles_on(core, s.payload)));
        }
        if s.frag != Frag::Whole {
            pieces.push((Layer::IpFrag, cy(c.ip_frag)));
        }
    }
    pieces.push((Layer::Device, cy(c.device_tx)));
    // Deficit round robin: a pass of the dequeue loop per quantum the packet
    // counts, in expectation (a pure ACK takes a pass every few packets).
    let rounds = cy(c.qdisc_round) * qlen / c.qdisc_quantum.0;
    push_nonzero(&mut pieces, Layer::Qdisc, cy(c.qdisc) + rounds);
    pieces.push((Layer::Driver, cy(c.driver_tx)));
    pieces
}

/// Receive-path pieces of a frame: driver, device, IP (and
/// defragmentation per fragment), checksum, transport (once per datagram,
/// when its last fragment completes it).
pub(super) fn rx_pieces(timing: &Timing, s: Shape, core: usize) -> Vec<(Layer, u64)> {
    if let Some(v) = s.via {
        return via_rx_pieces(timing, v, core);
    }
    let c = &timing.costs;
    let cy = |cost| timing.cycles_on(core, cost);
    let mut pieces = timing.rx_frame_pieces(core);
    pieces.push((Layer::Device, cy(c.device_rx)));
    if s.proto.is_none() {
        return pieces;
    }
    pieces.push((Layer::Ip, cy(c.ip_rx)));
    if s.frag != Frag::Whole {
        pieces.push((Layer::IpFrag, cy(c.ip_defrag)));
        if c.ip_defrag_copy && s.frag == (Frag::Later { last: true }) {
            // Linux 2.2 `ip_glue`: a new buffer for the whole datagram,
            // every fragment's data copied in from where DMA left it.
            pieces.push((Layer::IpFrag, timing.copy_cycles(s.offset + s.payload, false)));
        }
    }
    if !timing.nic.checksum_offload {
        pieces.push((Layer::Checksum, timing.checksum_cycles_on(core, s.payload)));
    }
    if matches!(s.frag, Frag::Whole | Frag::Later { last: true }) {
        match s.proto {
            // Under the socket backlog, TCP input is its own job (see `backlog.rs`).
            Some(IpProtocol::Tcp) if !timing.cpu.socket_backlog => {
                pieces.extend(tcp_input_pieces(timing, s, core, false))
            }
            Some(IpProtocol::Udp) => pieces.push((Layer::Udp, cy(c.udp_rx))),
            _ => {}
        }
    }
    pieces
}

/// TCP input of a segment on a core: the protocol, the socket lock (unless
/// the segment comes from the backlog: the softirq took the lock to queue
/// it), and for a segment without data (an ACK) its buffers, freed here.
///
/// With the application on another core, input in the softirq pays
/// `tcp_rx_remote` for the socket state the application's core wrote
/// last. Input from the backlog runs on the application's core, where that
/// state is at hand; it reads instead the sk_buff lines the softirq's core
/// wrote ([`BACKLOG_SKB_LINES`]), and it leaves out the start of TCP input
/// the softirq ran before queueing it (`tcp_rx_demux`:
/// [`backlog_queue_pieces`]).
pub(super) fn tcp_input_pieces(timing: &Timing, s: Shape, core: usize, backlogged: bool) -> Vec<(Layer, u64)> {
    let c = &timing.costs;
    let cy = |cost| timing.cycles_on(core, cost);
    let remote = if !timing.split_cores() {
        0
    } else if core == timing.cpu.app_core as usize {
        BACKLOG_SKB_LINES * timing.line_transfer()
    } else if s.data == 0 {
        cy(c.tcp_ack_rx_remote.unwrap_or(c.tcp_rx_remote))
    } else {
        cy(c.tcp_rx_remote)
    };
    let input = cy(if s.data == 0 { c.tcp_ack_rx.unwrap_or(c.tcp_rx) } else { c.tcp_rx });
    let input = if backlogged { input.saturating_sub(cy(c.tcp_rx_demux)) } else { input };
    let mut pieces = vec![(Layer::Tcp, input + remote)];
    if !backlogged {
        pieces.extend(bh_lock_sock(timing, core));
    }
    if s.data == 0 {
        // An ACK or control segment is consumed here, not by a read.
        push_nonzero(&mut pieces, Layer::Skb, cy(c.skb_free));
        push_nonzero(&mut pieces, Layer::Mm, cy(c.page_free) + cy(c.skb_slab));
    }
    pieces
}

/// The softirq's work on `core` to queue a TCP segment to the socket
/// backlog (`tcp_v4_rcv` finds the socket owned by an application call):
/// the start of TCP input up to that test (`tcp_rx_demux`), with
/// `cpu.backlog_queue_line` the socket's queue line
/// ([`BACKLOG_QUEUE_LINES`]) and, under `bh_lock_sock`, the lock. The
/// owner's core runs the rest of TCP input when the call releases the
/// socket ([`tcp_input_pieces`]).
pub(super) fn backlog_queue_pieces(timing: &Timing, core: usize) -> Vec<(Layer, u64)> {
    let demux = timing.cycles_on(core, timing.costs.tcp_rx_demux);
    let line = if timing.cpu.backlog_queue_line { BACKLOG_QUEUE_LINES * timing.line_transfer() } else { 0 };
    let mut pieces = Vec::with_capacity(4);
    push_nonzero(&mut pieces, Layer::Tcp, demux + line);
    pieces.extend(bh_lock_sock(timing, core));
    pieces
}

/// Add a piece of stack work unless it costs nothing (a profile that does
/// not price that layer leaves its jobs as they were).
pub(super) fn push_nonzero(pieces: &mut Vec<(Layer, u64)>, layer: Layer, cycles: u64) {
    if cycles > 0 {
        pieces.push((layer, cycles));
    }
}

/// The receive cost model of a host with `timing`: a frame's pieces on a
/// core, and whether IP reassembly rebuilt its datagram by copying.
pub(super) fn rx_cost(timing: &Timing, frame: &[u8], core: usize) -> RxCost {
    let sh = shape(frame);
    RxCost {
        pieces: rx_pieces(timing, sh, core),
        glued: timing.costs.ip_defrag_copy && sh.frag == (Frag::Later { last: true }),
        ip_payload: sh.payload,
    }
}

/// Send-path pieces of a VIA frame: transport (fragment header, one
/// translation per page) and driver (DMA set-up).
fn via_tx_pieces(timing: &Timing, v: via::FrameInfo, core: usize) -> Vec<(Layer, u64)> {
    let c = &timing.costs;
    let cy = |cost| timing.cycles_on(core, cost);
    let transport = cy(c.via_tx) + v.pages * cy(c.via_translate);
    vec![(Layer::ViaTransport, transport), (Layer::Driver, cy(c.driver_tx))]
}

/// Receive-path pieces of a VIA frame: driver, transport (demultiplex,
/// translate, defragment), the copy into the registered buffer.
fn via_rx_pieces(timing: &Timing, v: via::FrameInfo, core: usize) -> Vec<(Layer, u64)> {
    let c = &timing.costs;
    let cy = |cost| timing.cycles_on(core, cost);
    let mut transport = cy(c.via_rx) + v.pages * cy(c.via_translate);
    if v.fragmented {
        transport += cy(c.via_defrag);
    }
    // The data came by DMA: it is not in the cache.
    let copy = timing.copy_cycles(v.payload, false);
    vec![(Layer::Driver, cy(c.driver_rx)), (Layer::ViaTransport, transport), (Layer::Copy, copy)]
}

/// Bytes of receive buffer a frame of `len` bytes made of `segments` wire
/// frames took. Without a striding receive queue each wire frame takes whole
/// 4 KiB pages (mlx5's legacy queue splits a jumbo frame into page-sized
/// fragments; a 1500-byte frame fits in one). With one (`nic.striding_rq`,
/// mlx5 `mlx5e_mpwqe_get_log_stride_size` in Linux 5.4) the queue's stride
/// follows its largest frame (`max_frame`, the MTU's): if that fits a page
/// with headroom and `skb_shared_info`, the stride is that size rounded up
/// to a power of two (a linear SKB's stride) and every wire frame, an ACK
/// too, takes one whole stride; otherwise a frame takes its length rounded
/// up to 64-byte strides (`MLX5_MPWRQ_DEF_LOG_STRIDE_SZ` 6).
pub(super) fn rx_footprint(striding: bool, max_frame: u64, len: u64, segments: u32) -> u64 {
    let segments = u64::from(segments.max(1));
    let wire = len.div_ceil(segments);
    let one = if !striding {
        wire.div_ceil(PAGE) * PAGE
    } else {
        match linear_size(max_frame) {
            Some(linear) => linear.next_power_of_two(),
            None => wire.div_ceil(64) * 64,
        }
    };
    segments * one
}

/// A wire frame of `wire` bytes as a linear sk_buff: SKB_DATA_ALIGN
/// (64-byte cache lines) of headroom + frame (with the 4-byte FCS and a
/// VLAN tag's room), plus `skb_shared_info`, if that fits a page (mlx5
/// builds the sk_buff around the buffer); `None`: the frame is put in
/// page fragments with a copied head.
fn linear_size(wire: u64) -> Option<u64> {
    let linear = (64 + wire + 8).div_ceil(64) * 64 + 320;
    (linear <= PAGE).then_some(linear)
}

/// Cache lines holding payload that the receive stack's core touched, per
/// wire frame of a frame of `len` bytes made of `segments` wire frames. A
/// linear frame: the line the TCP header ends in also holds the first
/// payload bytes (headers end at byte 66 of the frame, 64 bytes into the
/// buffer). A larger frame: mlx5 copies its first `MLX5E_RX_MAX_HEAD` (256)
/// bytes into a new sk_buff head (`mlx5e_skb_from_cqe_mpwrq_nonlinear`,
/// `mlx5e_skb_from_cqe_nonlinear`), whose payload bytes 66 to 255 fill
/// three lines the stack's core wrote.
pub(super) fn head_lines(len: u64, segments: u32) -> u64 {
    let segments = u64::from(segments.max(1));
    let per_frame = if linear_size(len.div_ceil(segments)).is_some() { 1 } else { 3 };
    segments * per_frame
}

/// Page fragments of the sk_buff that holds a frame of `len` bytes made of
/// `segments` wire frames, or `None` when GRO had to chain it (`frag_list`).
/// A linear wire frame is all in the head; a larger one has the 256 bytes
/// mlx5 copies into the head (`MLX5E_RX_MAX_HEAD`) and the rest in one
/// fragment per page it spans. GRO adds each later wire frame's head as a
/// fragment and then its pages (`skb_gro_receive`), and chains the frame
/// that would pass `MAX_SKB_FRAGS` (17) instead.
pub(super) fn skb_frags(len: u64, segments: u32) -> Option<u64> {
    let frags = copy_pieces(len, segments) - 1;
    (frags <= MAX_SKB_FRAGS).then_some(frags)
}

/// Pieces a read copies one at a time from the sk_buff of a frame of `len`
/// bytes made of `segments` wire frames (`__skb_datagram_iter`): the
/// head's payload, then each page fragment, and as many again for each
/// sk_buff GRO chained (`frag_list`). Each wire frame brings one head (the
/// first's stays the head, GRO makes the later ones fragments) and the
/// pages past mlx5's copied head (none for a linear frame). Receive-queue
/// and backlog coalescing move heads and fragments the same way, so the
/// count holds for the sk_buff the read finds.
pub(super) fn copy_pieces(len: u64, segments: u32) -> u64 {
    let n = u64::from(segments.max(1));
    let pages = match linear_size(len.div_ceil(n)) {
        Some(_) => 0,
        None => len.div_ceil(n).saturating_sub(MAX_HEAD).div_ceil(PAGE),
    };
    n * (1 + pages)
}

/// Linux's `MAX_SKB_FRAGS` with 4 KiB pages.
pub(super) const MAX_SKB_FRAGS: u64 = 17;

/// mlx5's `MLX5E_RX_MAX_HEAD`: bytes of a non-linear frame copied into its head.
const MAX_HEAD: u64 = 256;

/// Cache lines the receive stack's core touches per wire frame besides
/// `head_lines`: the `sk_buff` (224 bytes, 4 lines, x86-64 Linux 5.4), its
/// `skb_shared_info` (320 bytes, 5 lines) and the completion (a 64-byte
/// mlx5 CQE). How many frames back its private cache reaches is its size
/// over these lines.
pub(super) const STACK_LINES_PER_FRAME: u64 = 10;

/// Cache lines of each sk_buff a read consumes that `tcp_recvmsg` touches
/// while the receive stack's core wrote them last (x86-64 Linux 5.4): the
/// sk_buff's list links and TCP control block (`next`, `prev`, `cb`: its
/// first line), its length fields (`len`, `data_len`: the second line), and
/// the socket's receive-queue head, which each enqueue writes
/// (`__skb_queue_tail`) and each dequeue writes back (`__skb_unlink`).
/// The free of the sk_buff (its reference count and shared info) is priced
/// apart (`skb_free`, one line more).
pub(super) const READ_WALK_LINES: u64 = 3;

/// Cache lines of a backlogged segment that TCP input on the application's
/// core reads after the softirq's core wrote them: the sk_buff's list links
/// and control block (its first line, which `tcp_add_backlog` and
/// `__sk_add_backlog` write), its length and header offsets (its second),
/// and the packet's IP and TCP headers, which the softirq parsed
/// (`tcp_v4_rcv` pulls them and fills the control block from them).
pub(super) const BACKLOG_SKB_LINES: u64 = 3;

/// Cache lines of the socket the softirq writes to queue a segment to the
/// backlog besides the lock's (priced in [`bh_lock_sock`]), which the
/// owner's core wrote last: `sk_add_backlog` reads `sk_rmem_alloc` and
/// writes `sk_backlog`'s tail and length, which share one line with
/// `sk_receive_queue` (Linux 5.4 `struct sock`: bytes 192 to 255, the line
/// after `sk_lock`'s). The owner wrote it last: its reads dequeue from the
/// receive queue and lower `sk_rmem_alloc` as they free what they copied
/// (`sock_rfree`), and `release_sock` empties the backlog; its loop reads
/// the queue's and the backlog's tails for each sk_buff it copies
/// (`skb_peek_tail`, `sk_backlog.tail`), so the line goes back and forth
/// about once for each segment the softirq queues while a call holds the
/// socket, which is what `cpu.backlog_queue_line` charges (an upper
/// bound: a line the owner has not touched since is not moved).
pub(super) const BACKLOG_QUEUE_LINES: u64 = 1;

/// A receive buffer page.
pub(super) const PAGE: u64 = 4096;

/// Whole pages out of `bytes` more of receive buffer, keeping the remainder
/// in `carry` (a page is allocated, or freed, once frames have filled it).
pub(super) fn whole_pages(carry: &mut u64, bytes: u64) -> u64 {
    *carry += bytes;
    let pages = *carry / PAGE;
    *carry %= PAGE;
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp_segment(data: u64) -> Shape {
        Shape { proto: Some(IpProtocol::Tcp), payload: 20 + data, data, frag: Frag::Whole, offset: 0, via: None }
    }

    fn price(cycles: u64) -> crate::host::timing::Cost {
        crate::host::timing::Cost { cycles, mem: 0 }
    }

    /// `cai-xeon-6128` without aRFS, a line transfer at 100 cycles, TCP
    /// input at 1000 (20 000 more in the softirq) and none of it before the
    /// owner's test; its softirq's and application's cores.
    fn split_cores() -> (Timing, usize, usize) {
        let mut t = crate::host::timing::resolve("hosts[0]", "cai-xeon-6128", &[]).unwrap();
        t.nic.arfs = false;
        t.cpu.line_transfer = 100;
        t.costs.tcp_rx = price(1000);
        t.costs.tcp_rx_remote = price(20_000);
        t.costs.tcp_rx_demux = price(0);
        let (softirq, app) = (t.cpu.irq_core as usize, t.cpu.app_core as usize);
        assert_ne!(softirq, app);
        (t, softirq, app)
    }

    #[test]
    fn tcp_input_pays_the_cross_core_extra_in_the_softirq_only_and_a_pure_ack_its_own_prices() {
        let (mut t, softirq, app) = split_cores();
        t.costs.tcp_ack_rx = None;
        t.costs.tcp_ack_rx_remote = None;
        // In the softirq (the socket free), or from the backlog on the owner's core.
        let direct = |t: &Timing, data| tcp_input_pieces(t, tcp_segment(data), softirq, false)[0];
        let backlog = |t: &Timing, data| tcp_input_pieces(t, tcp_segment(data), app, true)[0];
        // Unpriced apart, a pure ACK costs what a data segment does.
        for data in [0, 1448] {
            assert_eq!(direct(&t, data), (Layer::Tcp, 21_000));
            // From the backlog: three lines of the sk_buff, no socket state.
            assert_eq!(backlog(&t, data), (Layer::Tcp, 1000 + 3 * 100));
        }
        t.costs.tcp_ack_rx = Some(price(3000));
        t.costs.tcp_ack_rx_remote = Some(price(7000));
        assert_eq!(direct(&t, 0), (Layer::Tcp, 10_000));
        assert_eq!(backlog(&t, 0), (Layer::Tcp, 3000 + 3 * 100));
        assert_eq!(direct(&t, 1448), (Layer::Tcp, 21_000));
        // With aRFS the softirq runs on the application's core: no extra.
        t.nic.arfs = true;
        assert_eq!(backlog(&t, 0), (Layer::Tcp, 3000));
        assert_eq!(backlog(&t, 1448), (Layer::Tcp, 1000));
    }

    #[test]
    fn a_backlogged_segment_s_input_is_split_between_the_softirq_and_the_owner_and_costs_the_queue_line() {
        let (mut t, softirq, app) = split_cores();
        t.costs.tcp_ack_rx = Some(price(3000));
        t.costs.tcp_rx_demux = price(150);
        t.costs.sock_lock = price(50);
        let cycles = |p: &[(Layer, u64)], layer| p.iter().filter(|&&(l, _)| l == layer).map(|&(_, c)| c).sum::<u64>();
        // The softirq: the start of TCP input and the queue's line (tcp), the
        // lock and its line (lock).
        t.cpu.backlog_queue_line = true;
        let queue = backlog_queue_pieces(&t, softirq);
        assert_eq!(cycles(&queue, Layer::Tcp), 150 + 100);
        assert_eq!(cycles(&queue, Layer::Lock), 50 + 100);
        // Without the queue line: the start of the input and the lock only.
        t.cpu.backlog_queue_line = false;
        let without = backlog_queue_pieces(&t, softirq);
        assert_eq!((cycles(&without, Layer::Tcp), cycles(&without, Layer::Lock)), (150, 50 + 100));
        t.cpu.backlog_queue_line = true;
        // The owner: the rest of the input, for data and for a pure ACK.
        for (data, input) in [(1448, 1000), (0, 3000)] {
            let rest = tcp_input_pieces(&t, tcp_segment(data), app, true);
            assert_eq!(rest[0], (Layer::Tcp, input - 150 + 3 * 100));
            // Input's own cycles are paid once: the start in the softirq, the rest on the owner.
            assert_eq!(cycles(&queue, Layer::Tcp) - 100 + rest[0].1 - 3 * 100, input);
        }
        // Direct input in the softirq pays the whole input, the start included.
        assert_eq!(tcp_input_pieces(&t, tcp_segment(1448), softirq, false)[0], (Layer::Tcp, 21_000));
        // With aRFS (one core) no line moves: the softirq pays the start and the lock.
        t.nic.arfs = true;
        let queue = backlog_queue_pieces(&t, app);
        assert_eq!((cycles(&queue, Layer::Tcp), cycles(&queue, Layer::Lock)), (150, 50));
        assert_eq!(tcp_input_pieces(&t, tcp_segment(1448), app, true)[0], (Layer::Tcp, 850));
    }

    #[test]
    fn the_qdisc_counts_every_segment_s_headers_and_takes_a_pass_per_quantum() {
        use crate::host::timing::{resolve, Cost};
        // A full MTU-1500 frame: 66 bytes of headers (TCP with timestamps), 1448 of data.
        assert_eq!(qdisc_pkt_len(1514, 1448, None), 1514);
        assert_eq!(qdisc_pkt_len(1514, 1448, Some(1448)), 1514);
        // A 45-segment super-segment: 66 + 65 160 bytes, and 44 more headers.
        assert_eq!(qdisc_pkt_len(65_226, 65_160, Some(1448)), 68_130);
        // A short last segment is a segment.
        assert_eq!(qdisc_pkt_len(66 + 2000, 2000, Some(1448)), 66 + 2000 + 66);
        assert_eq!(qdisc_pkt_len(66, 0, Some(1448)), 66);

        let mut t = resolve("hosts[0]", "cai-xeon-6128", &[]).unwrap();
        let price = |cycles| Cost { cycles, mem: 0 };
        t.costs.qdisc = price(100);
        t.costs.qdisc_round = price(10);
        let seg =
            Shape { proto: Some(IpProtocol::Tcp), payload: 1480, data: 1448, frag: Frag::Whole, offset: 0, via: None };
        let qdisc = |t: &Timing, qlen| {
            let p = tx_pieces(t, seg, qlen, 0);
            p.iter().filter(|x| x.0 == Layer::Qdisc).map(|x| x.1).sum::<u64>()
        };
        assert_eq!(t.costs.qdisc_quantum.0, 1514, "psched_mtu at MTU 1500");
        assert_eq!(qdisc(&t, 1514), 100 + 10);
        assert_eq!(qdisc(&t, 68_130), 100 + 450);
        // A pure ACK takes a pass every 23 packets: none of its own, rounded down.
        assert_eq!(qdisc(&t, 66), 100);
        t.costs.qdisc_quantum.0 = 9014;
        assert_eq!(qdisc(&t, 68_130), 100 + 75);
    }

    #[test]
    fn a_write_builds_the_data_sk_buffs_and_sending_them_allocates_none() {
        use crate::host::timing::{resolve, Cost};
        // tcp_xmit_size_goal: one MSS without GSO; with it, the MSS
        // multiples within 65 536 - 1 - 320 = 65 215 bytes: 45 x 1 448 and 7 x 8 948.
        assert_eq!(send_size_goal(1448, false), 1448);
        assert_eq!(send_size_goal(1448, true), 65_160);
        assert_eq!(send_size_goal(8948, true), 62_636);
        // 128 KiB into an empty queue: 90 full sk_buffs and a tail of 752 bytes.
        assert_eq!(send_skbs(0, 131_072, 1448), (91, 752));
        // The next write tops up that tail (696 bytes), then 90 more and 56 over.
        assert_eq!(send_skbs(752, 131_072, 1448), (91, 56));
        assert_eq!(send_skbs(0, 131_072, 65_160), (3, 752));
        assert_eq!(send_skbs(752, 131_072, 65_160), (2, 1504));
        // A write that fits in the tail allocates nothing; one that fills it exactly leaves none.
        assert_eq!(send_skbs(752, 696, 1448), (0, 0));
        assert_eq!(send_skbs(0, 0, 1448), (0, 0));

        let mut t = resolve("hosts[0]", "cai-xeon-6128", &[]).unwrap();
        t.costs.skb_alloc = Cost { cycles: 200, mem: 0 };
        t.costs.skb_slab = Cost { cycles: 70, mem: 0 };
        let seg = |data| Shape {
            proto: Some(IpProtocol::Tcp),
            payload: 32 + data,
            data,
            frag: Frag::Whole,
            offset: 0,
            via: None,
        };
        let alloc = |s: Shape| {
            let p = tx_pieces(&t, s, 66 + s.data, 0);
            let of = |l| p.iter().filter(|x| x.0 == l).map(|x| x.1).sum::<u64>();
            (of(Layer::Skb), of(Layer::Mm))
        };
        assert_eq!(alloc(seg(1448)), (0, 0), "a data segment's sk_buff came from the write");
        assert_eq!(alloc(seg(0)), (200, 70), "a pure ACK is allocated as it is sent");
        let udp = Shape { proto: Some(IpProtocol::Udp), ..seg(1448) };
        assert_eq!(alloc(udp), (200, 70), "a datagram is allocated as it is sent");
    }

    #[test]
    fn an_skb_has_a_fragment_per_page_beyond_its_head_and_gro_chains_past_seventeen() {
        // A linear MTU 1500 frame is all head; GRO adds each later frame's head.
        assert_eq!(skb_frags(1514, 1), Some(0));
        assert_eq!(skb_frags(18 * 1514, 18), Some(17));
        assert_eq!(skb_frags(19 * 1514, 19), None);
        // A jumbo frame: 256 bytes of head, 8 758 in three pages.
        assert_eq!(skb_frags(9014, 1), Some(3));
        assert_eq!(skb_frags(4 * 9014, 4), Some(15));
        assert_eq!(skb_frags(5 * 9014, 5), None);
    }

    #[test]
    fn a_read_copies_a_piece_per_wire_frame_head_and_per_page_beyond_it() {
        // A linear MTU 1500 frame is one piece; GRO makes each later head a
        // fragment, so an aggregate is one piece a wire frame.
        assert_eq!(copy_pieces(1514, 1), 1);
        assert_eq!(copy_pieces(45 * 1514, 45), 45);
        // A jumbo frame: the 190 payload bytes of mlx5's 256-byte head, then
        // 8 758 bytes in three pages; chained or not, four pieces a frame.
        assert_eq!(copy_pieces(9014, 1), 4);
        assert_eq!(copy_pieces(7 * 9014, 7), 28);
    }

    #[test]
    fn a_legacy_queue_gives_every_wire_frame_whole_pages() {
        assert_eq!(rx_footprint(false, 1514, 1514, 1), PAGE);
        assert_eq!(rx_footprint(false, 9014, 9014, 1), 3 * PAGE);
        // A GRO aggregate of three 1514-byte wire frames.
        assert_eq!(rx_footprint(false, 1514, 3 * 1514, 3), 3 * PAGE);
    }

    #[test]
    fn a_striding_queue_packs_two_mtu_1500_frames_a_page_and_jumbo_frames_in_64_byte_strides() {
        // 64 + 1514 + 8 -> 1600 aligned, + 320 = 1920 -> a 2 KiB stride.
        assert_eq!(rx_footprint(true, 1514, 1514, 1), 2048);
        assert_eq!(rx_footprint(true, 9014, 9014, 1), 9024);
        // The stride is the queue's: an ACK takes a whole 2 KiB stride at
        // MTU 1500, and two 64-byte strides at MTU 9000.
        assert_eq!(rx_footprint(true, 1514, 66, 1), 2048);
        assert_eq!(rx_footprint(true, 9014, 66, 1), 128);
        let mut carry = 0;
        let pages: u64 = (0..10).map(|_| whole_pages(&mut carry, rx_footprint(true, 1514, 1514, 1))).sum();
        assert_eq!((pages, carry), (5, 0));
        let pages: u64 = (0..4).map(|_| whole_pages(&mut carry, rx_footprint(true, 9014, 9014, 1))).sum();
        assert_eq!((pages, carry), (8, 4 * 9024 - 8 * PAGE));
    }

    #[test]
    fn a_linear_frame_shares_one_payload_line_with_its_headers_and_a_copied_head_three() {
        assert_eq!(head_lines(1514, 1), 1);
        // A GRO aggregate of 20 MTU-1500 frames: one line per wire frame.
        assert_eq!(head_lines(20 * 1514, 20), 20);
        assert_eq!(head_lines(9014, 1), 3);
        assert_eq!(head_lines(4 * 9014, 4), 12);
        // The largest linear frame: 64 + 3640 + 8 = 3712 bytes, + 320 = 4032 <= 4096.
        assert_eq!((head_lines(3640, 1), head_lines(3712, 1)), (1, 3));
    }
}
