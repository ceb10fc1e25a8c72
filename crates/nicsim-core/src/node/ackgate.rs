//! Linux's test before a receiver ACKs at once. After a data segment,
//! `__tcp_ack_snd_check` (Linux 5.4 `net/ipv4/tcp_input.c`) sends the ACK
//! right away only if more than one MSS is unacknowledged **and** either
//! everything received was read (`rcv_nxt - copied_seq < sk_rcvlowat`) or
//! the window it would advertise is no smaller than the one it advertised
//! last (`__tcp_select_window(sk) >= tp->rcv_wnd`; "tcp_recvmsg() will
//! send ACK otherwise"), or in quick-ACK mode. The window shrinks as data
//! waits unread, so while the reader is behind the softirq does not ACK;
//! the ACK stays scheduled and the reader sends it when its copy is done
//! (`tcp_recvmsg` → `tcp_cleanup_rbuf`: an ACK is scheduled and more than
//! one MSS is unacknowledged), from its own core, covering everything
//! received so far. The delayed-ACK timer (`TCP_DELACK_MIN`, 40 ms) sends
//! it if nothing else does.
//!
//! smoltcp ACKs every second full segment whatever its window does. This
//! stage sits between smoltcp and the driver: outside a read, it holds a
//! pure ACK whose window field is smaller than the last one its flow sent
//! (the newest held ACK of a flow replaces the one before: smoltcp counts
//! a held ACK as sent, so the newest carries the highest acknowledgment),
//! unless it repeats the last acknowledgment sent (a duplicate ACK: Linux
//! ACKs at once while out-of-order data waits);
//! a later frame of the flow that is sent (an ACK whose window is back, a
//! data segment) drops it; the reader's poll after a read sends it. smoltcp
//! advertises its receive buffer's free bytes and Linux half its free
//! buffer space, so both shrink and grow with the unread data alike.
//! Units: bytes, picoseconds.

use serde::Serialize;

use super::super::host::TxFrame;
use crate::engine::{Dur, Time};
use crate::probe::wire::{FlowKey, TcpView};

/// Linux's `TCP_DELACK_MIN` (HZ / 25): the delayed-ACK timer at its shortest.
pub(crate) const DELACK: Dur = Dur(40_000_000_000);

/// The held ACK of each flow and the window each flow advertised last.
#[derive(Debug, Default)]
pub(crate) struct AckGate {
    held: Vec<(FlowKey, TxFrame, Time)>,
    /// Per flow: the window field and the acknowledgment it sent last.
    last: Vec<(FlowKey, u16, u32)>,
    pub(crate) stats: AckStats,
}

/// What the window test did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AckStats {
    /// Pure ACKs held because the window would have shrunk.
    pub held: u64,
    /// Held ACKs the reader sent after its copy (the others were replaced
    /// by a newer one, dropped for a frame that carried the acknowledgment,
    /// or sent by the delayed-ACK timer).
    pub sent_by_reader: u64,
}

/// The flow and window field of a frame that carries an ACK, and whether it
/// is a pure ACK (no data, SYN, FIN or RST).
struct Ack {
    flow: FlowKey,
    window: u16,
    ack: u32,
    pure: bool,
}

/// Offset of the window field in a TCP header, bytes.
const TCP_WINDOW: usize = 14;

fn ack_of(frame: &[u8]) -> Option<Ack> {
    let v = TcpView::parse(frame)?;
    let ack = v.ack?;
    let at = crate::link::ETH_HEADER as usize + v.ip_header + TCP_WINDOW;
    let window = u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]);
    Some(Ack { flow: v.flow, window, ack, pure: v.payload == 0 && !v.syn && !v.fin && !v.rst })
}

impl AckGate {
    /// The frames the stack emitted at `now` that go out now. `read(flow)`:
    /// the reader has just copied from that flow's socket (its
    /// `tcp_cleanup_rbuf`), so the flow's held ACK goes too (the caller also
    /// says so in quick-ACK mode, which ACKs at once).
    pub(crate) fn offer(&mut self, frames: Vec<TxFrame>, now: Time, read: impl Fn(&FlowKey) -> bool) -> Vec<TxFrame> {
        if frames.is_empty() && self.held.is_empty() {
            return frames;
        }
        let mut out = Vec::with_capacity(frames.len() + self.held.len());
        for frame in frames {
            let Some(a) = ack_of(&frame.bytes) else {
                out.push(frame);
                continue;
            };
            let flow = a.flow;
            let last = self.last.iter().find(|l| l.0 == flow);
            if a.pure && !read(&flow) && last.is_some_and(|&(_, w, n)| a.window < w && a.ack != n) {
                self.stats.held += 1;
                match self.held.iter_mut().find(|(f, _, _)| *f == flow) {
                    Some(h) => h.1 = frame,
                    None => self.held.push((flow, frame, now)),
                }
                continue;
            }
            self.held.retain(|(f, _, _)| *f != flow);
            self.sent(&a);
            out.push(frame);
        }
        let due = |flow: &FlowKey, since: Time| read(flow) || now >= since + DELACK;
        if self.held.iter().any(|(flow, _, since)| due(flow, *since)) {
            let (go, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held).into_iter().partition(|h| due(&h.0, h.2));
            self.held = keep;
            for (flow, frame, _) in go {
                self.stats.sent_by_reader += u64::from(read(&flow));
                if let Some(a) = ack_of(&frame.bytes) {
                    self.sent(&a);
                }
                out.push(frame);
            }
        }
        out
    }

    /// When the oldest held ACK's delayed-ACK timer runs out.
    pub(crate) fn deadline(&self) -> Option<Time> {
        self.held.iter().map(|&(_, _, since)| since + DELACK).min()
    }

    fn sent(&mut self, a: &Ack) {
        match self.last.iter_mut().find(|l| l.0 == a.flow) {
            Some(l) => (l.1, l.2) = (a.window, a.ack),
            None => self.last.push((a.flow, a.window, a.ack)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TcpFrame;

    fn ack(ack: u32, window: u16) -> TxFrame {
        TxFrame {
            bytes: TcpFrame { seq: 1, ack: Some(ack), window, ..Default::default() }.build(),
            tso_mss: None,
            core: 0,
        }
    }

    /// The acknowledgment numbers of `frames`.
    fn acks(frames: &[TxFrame]) -> Vec<u32> {
        frames.iter().map(|f| ack_of(&f.bytes).expect("an ACK").ack).collect()
    }

    #[test]
    fn a_shrinking_window_waits_for_the_read_and_the_newest_ack_goes() {
        let mut g = AckGate::default();
        // The first ACK of a flow and one whose window is kept go at once.
        assert_eq!(acks(&g.offer(vec![ack(2_897, 1000)], Time(1), |_| false)), [2_897]);
        assert_eq!(acks(&g.offer(vec![ack(5_793, 1000)], Time(2), |_| false)), [5_793]);
        // Unread data shrank the window: both wait; the newer replaces the older.
        assert!(g.offer(vec![ack(8_689, 990)], Time(3), |_| false).is_empty());
        assert!(g.offer(vec![ack(11_585, 980)], Time(4), |_| false).is_empty());
        assert_eq!(g.deadline(), Some(Time(3) + DELACK));
        // The reader's copy sends the newest one.
        assert_eq!(acks(&g.offer(Vec::new(), Time(5), |_| true)), [11_585]);
        assert_eq!(g.stats, AckStats { held: 2, sent_by_reader: 1 });
        assert_eq!(g.deadline(), None);
        // Measured against what went last (980), a window of 985 goes at once.
        assert_eq!(acks(&g.offer(vec![ack(14_481, 985)], Time(6), |_| false)), [14_481]);
    }

    #[test]
    fn a_duplicate_ack_or_a_data_segment_is_never_held_and_the_timer_sends_the_rest() {
        let mut g = AckGate::default();
        g.offer(vec![ack(2_897, 1000)], Time(1), |_| false);
        // Out-of-order data: the duplicate ACK goes at once whatever its window.
        assert_eq!(acks(&g.offer(vec![ack(2_897, 900)], Time(2), |_| false)), [2_897]);
        // A held ACK is dropped when a later frame of the flow carries the acknowledgment.
        assert!(g.offer(vec![ack(5_793, 800)], Time(3), |_| false).is_empty());
        let data = TcpFrame { seq: 1, ack: Some(8_689), window: 700, payload: &[7; 100], ..Default::default() };
        let out = g.offer(vec![TxFrame { bytes: data.build(), tso_mss: None, core: 0 }], Time(4), |_| false);
        assert_eq!(acks(&out), [8_689]);
        assert_eq!(g.deadline(), None);
        // With no read, the delayed-ACK timer sends a held ACK 40 ms on, not before.
        assert!(g.offer(vec![ack(11_585, 600)], Time(5), |_| false).is_empty());
        assert!(g.offer(Vec::new(), Time(4) + DELACK, |_| false).is_empty());
        assert_eq!(acks(&g.offer(Vec::new(), Time(5) + DELACK, |_| false)), [11_585]);
    }

    #[test]
    fn a_read_sends_the_held_ack_of_its_own_flow_only() {
        let mut g = AckGate::default();
        let of = |port: u16, ack: u32, window: u16| TxFrame {
            bytes: TcpFrame { src_port: port, seq: 1, ack: Some(ack), window, ..Default::default() }.build(),
            tso_mss: None,
            core: 0,
        };
        g.offer(vec![of(5001, 2_897, 1000), of(5002, 2_897, 1000)], Time(1), |_| false);
        // Both flows' windows shrink: both ACKs wait.
        assert!(g.offer(vec![of(5001, 5_793, 900), of(5002, 5_793, 900)], Time(2), |_| false).is_empty());
        // A read of the first flow's socket sends its ACK; the other's waits on.
        let out = g.offer(Vec::new(), Time(3), |f| f.1 == 5001);
        assert_eq!(out.len(), 1);
        assert_eq!(TcpView::parse(&out[0].bytes).map(|v| v.flow.1), Some(5001));
        assert_eq!(g.stats.sent_by_reader, 1);
        assert_eq!(g.deadline(), Some(Time(2) + DELACK));
    }
}
