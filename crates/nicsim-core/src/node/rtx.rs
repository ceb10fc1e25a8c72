//! The sender's retransmission queue as the cost model sees it. Every data
//! sk_buff a TCP sender hands to its driver (a TSO super-segment is one, a
//! segment of one MSS without TSO is one) stays queued until an ACK covers
//! it. The driver sends a clone (`tcp_transmit_skb`, `skb_clone` of a
//! fast-clone pair), released when its descriptor is cleaned; the TCP
//! input of the ACK frees the original (Linux 5.4 `tcp_ack` →
//! `tcp_clean_rtx_queue` → `tcp_rtx_queue_unlink_and_free` →
//! `sk_wmem_free_skb` → `__kfree_skb`), and with it the pair's slab object
//! and head and its references to the send page fragments holding its
//! data (`skb_release_data` → `put_page`). A 32 KiB fragment page
//! (`SKB_FRAG_PAGE_ORDER`, filled by `sk_page_frag_refill` at write time)
//! goes back to the buddy allocator when the last sk_buff holding a part
//! of it is freed: once per 32 KiB acknowledged. A partly acknowledged
//! sk_buff stays queued (`tcp_tso_acked` trims it). A retransmission sends
//! again an sk_buff already queued: only data beyond the highest sequence
//! sent adds one. Units: bytes, sequence numbers.
//!
//! For TSO's deferral (`host/autosize.rs`) it also keeps the peer's window,
//! which Linux's `tcp_tso_should_defer` looks at: its newest ACK plus its
//! window field shifted by the scale its SYN announced (RFC 7323).

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;
use smoltcp::wire::{TcpOption, TcpPacket};

use crate::host::autosize::InFlight;
use crate::probe::wire::{FlowKey, TcpView};

/// Bytes of a send fragment page (`SKB_FRAG_PAGE_ORDER`: 32 KiB).
pub(super) const FRAG_PAGE: u64 = 32 * 1024;

/// One flow's queue: where each queued sk_buff ends, the highest sequence
/// sent, the highest acknowledged, acknowledged bytes short of a page, and
/// the peer's window (its right edge and size).
#[derive(Debug)]
struct Flow {
    ends: VecDeque<u32>,
    high: u32,
    acked: u32,
    carry: u64,
    window: Option<(u32, u32)>,
}

/// `a` is after `b` in sequence space (RFC 793 modular comparison).
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// A host's sent and not yet acknowledged data sk_buffs, per flow.
#[derive(Debug, Default)]
pub(crate) struct Rtx {
    flows: BTreeMap<FlowKey, Flow>,
    /// The window scale each peer announced in its SYN, by the flow as this
    /// host sends it.
    shifts: BTreeMap<FlowKey, u8>,
    /// The data sk_buffs counted so far.
    pub(super) stats: SendSkbStats,
}

/// A sender's data sk_buffs over the whole run: each one allocated (by a
/// write, or by a split at transmit) is queued when sent and freed by the
/// ACK that covers it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SendSkbStats {
    /// Allocated by writes: one per size goal of data
    /// (`tcp_sendmsg_locked` → `sk_stream_alloc_skb`).
    pub written: u64,
    /// Allocated at transmit: a TSO super-segment that ends inside an
    /// sk_buff splits it, and the rest becomes a new one (`tcp_write_xmit`
    /// → `tso_fragment` → `sk_stream_alloc_skb`, `skb_split`). Counted
    /// when a super-segment goes out and every sk_buff allocated so far has
    /// gone out already. Without TSO there is none: smoltcp sends a segment
    /// short of an MSS where the window ends, which Linux does not (its
    /// `tcp_snd_wnd_test` waits until the whole sk_buff fits), and such a
    /// segment is counted as sent but allocates nothing.
    pub split: u64,
    /// Sent and queued for retransmission (each TSO super-segment, or
    /// each segment without TSO, that carried new data).
    pub sent: u64,
    /// Freed by the ACKs that covered them.
    pub freed: u64,
}

impl SendSkbStats {
    /// Count one sk_buff sent (`tso`: a TSO super-segment); true when it
    /// needed a split's allocation because every sk_buff allocated so far
    /// had gone out.
    pub(super) fn send(&mut self, tso: bool) -> bool {
        self.sent += 1;
        let split = tso && self.sent > self.written + self.split;
        self.split += u64::from(split);
        split
    }
}

impl Rtx {
    /// The stack sends `frame`: a data segment beyond what was sent
    /// becomes a queued sk_buff. Returns whether it did.
    pub(super) fn sent(&mut self, frame: &[u8]) -> bool {
        let Some(v) = TcpView::parse(frame) else { return false };
        if v.payload == 0 || v.syn || v.rst {
            return false;
        }
        let end = v.seq.wrapping_add(v.payload as u32);
        let f = self.flows.entry(v.flow).or_insert(Flow {
            ends: VecDeque::new(),
            high: v.seq,
            acked: v.seq,
            carry: 0,
            window: None,
        });
        if after(end, f.high) {
            f.ends.push_back(end);
            f.high = end;
            return true;
        }
        false
    }

    /// What the TSO deferral needs of `flow` (as its data frames go out):
    /// `None` when it has nothing sent and not yet acknowledged.
    pub(super) fn in_flight(&self, flow: &FlowKey) -> Option<InFlight> {
        let f = self.flows.get(flow).filter(|f| after(f.high, f.acked))?;
        Some(InFlight { window: f.window })
    }

    /// TCP input of `frame` from the peer: the sk_buffs its ACK frees, and
    /// the send fragment pages freed with them.
    pub(super) fn acked(&mut self, frame: &[u8]) -> (u64, u64) {
        if let Some((flow, shift)) = syn_window_shift(frame) {
            self.shifts.insert(flow, shift);
        }
        // A host that has sent no data (a receiver) has nothing to free.
        if self.flows.is_empty() {
            return (0, 0);
        }
        let Some(v) = TcpView::parse(frame) else { return (0, 0) };
        let Some(ack) = v.ack else { return (0, 0) };
        let (src, sport, dst, dport) = v.flow;
        let flow = (dst, dport, src, sport);
        let Some(f) = self.flows.get_mut(&flow) else { return (0, 0) };
        // The ACK of a FIN is one past the data.
        let ack = if after(ack, f.high) { f.high } else { ack };
        if after(f.acked, ack) {
            return (0, 0);
        }
        let window = u32::from(v.window) << self.shifts.get(&flow).copied().unwrap_or(0);
        f.window = Some((ack.wrapping_add(window), window));
        if ack == f.acked {
            return (0, 0);
        }
        f.carry += u64::from(ack.wrapping_sub(f.acked));
        f.acked = ack;
        let mut skbs = 0;
        while f.ends.front().is_some_and(|&end| !after(end, ack)) {
            f.ends.pop_front();
            skbs += 1;
        }
        let pages = f.carry / FRAG_PAGE;
        f.carry %= FRAG_PAGE;
        self.stats.freed += skbs;
        (skbs, pages)
    }
}

/// The flow (as the receiver of `frame` sends it) and the window scale of
/// `frame`, if it is a SYN announcing one (RFC 7323's option; shifts above
/// 14 count as 14).
fn syn_window_shift(frame: &[u8]) -> Option<(FlowKey, u8)> {
    // Only a SYN is parsed: the flags byte, before anything else.
    let ihl = usize::from(frame.get(14)? & 0x0f) * 4;
    if frame.get(14 + ihl + 13)? & 0x02 == 0 {
        return None;
    }
    let v = TcpView::parse(frame)?;
    let tcp = TcpPacket::new_checked(frame.get(14 + v.ip_header..)?).ok()?;
    let mut options = tcp.options();
    while !options.is_empty() {
        let (rest, option) = TcpOption::parse(options).ok()?;
        match option {
            TcpOption::WindowScale(shift) => {
                let (src, sport, dst, dport) = v.flow;
                return Some(((dst, dport, src, sport), shift.min(14)));
            }
            TcpOption::EndOfList => return None,
            _ => options = rest,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TcpFrame;

    /// A segment from the sender (`to_peer`) or from the peer, with `seq`,
    /// `ack` and `payload` bytes.
    fn frame(to_peer: bool, seq: u32, ack: Option<u32>, payload: usize) -> Vec<u8> {
        let data = vec![0u8; payload];
        let f = TcpFrame { seq, ack, payload: &data, ..TcpFrame::default() };
        if to_peer {
            return f.build();
        }
        frame_from_peer(f)
    }

    /// `f` as the peer sends it (addresses and ports swapped).
    fn frame_from_peer(f: TcpFrame) -> Vec<u8> {
        TcpFrame {
            src: f.dst,
            dst: f.src,
            src_port: f.dst_port,
            dst_port: f.src_port,
            src_mac: f.dst_mac,
            dst_mac: f.src_mac,
            ..f
        }
        .build()
    }

    #[test]
    fn an_ack_frees_the_sk_buffs_it_covers_whole_and_a_fragment_page_per_32_kib() {
        let mut q = Rtx::default();
        // Three TSO super-segments of 64 000 bytes from sequence 1000.
        for i in 0..3 {
            q.sent(&frame(true, 1000 + i * 64_000, Some(1), 64_000));
        }
        // Half the first one: nothing freed, 32 000 bytes short of a page.
        assert_eq!(q.acked(&frame(false, 1, Some(33_000), 0)), (0, 0));
        // The rest of the first and all of the second: two sk_buffs, and
        // 128 000 bytes acknowledged in all hold three whole 32 KiB pages.
        assert_eq!(q.acked(&frame(false, 1, Some(129_000), 0)), (2, 3));
        // An old ACK frees nothing; one past the data (a FIN) frees the last.
        assert_eq!(q.acked(&frame(false, 1, Some(129_000), 0)), (0, 0));
        let flow = TcpView::parse(&frame(true, 0, None, 1)).expect("a segment").flow;
        assert!(q.in_flight(&flow).is_some());
        assert_eq!(q.acked(&frame(false, 1, Some(193_001), 0)), (1, 2));
        // All of it acknowledged: nothing in flight; a flow never sent on has nothing either.
        assert!(q.in_flight(&flow).is_none());
        assert!(q.in_flight(&(flow.2, flow.3, flow.0, flow.1)).is_none());
    }

    #[test]
    fn a_retransmission_queues_no_sk_buff_and_other_flows_and_pure_acks_are_not_queued() {
        let mut q = Rtx::default();
        assert!(q.sent(&frame(true, 0, Some(1), 1448)));
        assert!(q.sent(&frame(true, 1448, Some(1), 1448)));
        // The first segment again: already queued.
        assert!(!q.sent(&frame(true, 0, Some(1), 1448)));
        // A pure ACK the host sends holds no data.
        assert!(!q.sent(&frame(true, 2896, Some(1), 0)));
        // An ACK for the other direction's data frees nothing here.
        assert_eq!(q.acked(&frame(true, 2896, Some(2896), 0)), (0, 0));
        // A segment without the ACK flag acknowledges nothing.
        assert_eq!(q.acked(&frame(false, 1, None, 0)), (0, 0));
        assert_eq!(q.acked(&frame(false, 1, Some(2896), 0)), (2, 0));
    }

    #[test]
    fn a_super_segment_sent_when_every_sk_buff_allocated_is_out_is_a_split() {
        let mut s = SendSkbStats { written: 2, ..SendSkbStats::default() };
        // Two whole sk_buffs go out, then a third super-segment: the window
        // had cut one of them short, and its rest needed an sk_buff.
        assert!(!s.send(true));
        assert!(!s.send(true));
        assert!(s.send(true));
        assert_eq!((s.sent, s.split), (3, 1));
        // A write allocates two more; both go out whole.
        s.written += 2;
        assert!(!s.send(true));
        assert!(!s.send(true));
        // Without TSO a segment short of an MSS allocates nothing.
        assert!(!s.send(false));
        assert_eq!((s.written, s.split, s.sent), (4, 1, 6));
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut q = Rtx::default();
        let start = u32::MAX - 999;
        q.sent(&frame(true, start, Some(1), 1000));
        q.sent(&frame(true, start.wrapping_add(1000), Some(1), 1000));
        assert_eq!(q.acked(&frame(false, 1, Some(1000), 0)), (2, 0));
    }

    #[test]
    fn the_deferral_sees_the_peers_window_scaled_as_its_syn_announced() {
        use smoltcp::wire::TcpControl;
        let mut q = Rtx::default();
        // The peer's SYN-ACK announces a window scale of 7 (it arrives before any data is sent).
        let syn_ack =
            frame_from_peer(TcpFrame { control: TcpControl::Syn, window_scale: Some(7), ..TcpFrame::default() });
        assert_eq!(q.acked(&syn_ack), (0, 0));
        let flow = TcpView::parse(&frame(true, 0, None, 1)).expect("a segment").flow;
        q.sent(&frame(true, 1000, Some(1), 10_000));
        // Nothing acknowledged yet: no window known.
        assert_eq!(q.in_flight(&flow), Some(InFlight { window: None }));
        let ack = |n: u32, window: u16| frame_from_peer(TcpFrame { ack: Some(n), window, ..TcpFrame::default() });
        q.acked(&ack(6000, 100));
        assert_eq!(q.in_flight(&flow), Some(InFlight { window: Some((6000 + (100 << 7), 100 << 7)) }));
        // A window update with no new data acknowledged moves it too.
        q.acked(&ack(6000, 300));
        assert_eq!(q.in_flight(&flow), Some(InFlight { window: Some((6000 + (300 << 7), 300 << 7)) }));
        // An older ACK changes nothing.
        q.acked(&ack(5000, 1));
        assert_eq!(q.in_flight(&flow), Some(InFlight { window: Some((6000 + (300 << 7), 300 << 7)) }));
        // Without a scale from the SYN the field counts as it is.
        let mut q = Rtx::default();
        q.sent(&frame(true, 1000, Some(1), 10_000));
        q.acked(&ack(6000, 100));
        assert_eq!(q.in_flight(&flow), Some(InFlight { window: Some((6100, 100)) }));
    }
}
