//! The send side of a host's NIC driver: frames the stack emits get their
//! send-path processing as CPU jobs that may finish out of order; the
//! driver posts them to the NIC's TX ring in the order the stack emitted
//! them (as the socket lock ensures), and a full ring queues them in the
//! software queue (qdisc: first in, first out, or fq_codel's round robin
//! of flows; `qdisc.rs`) in front of it, which bounds how many frames the
//! stack may emit.
//!
//! ```text
//!  stack ─ emit (seq) ─▶ send job on a core ─▶ reorder by seq ─▶ [qdisc] ─▶ TX ring
//!                                                               ◀─ clean-up frees slots
//! ```
//!
//! Units: frames. The ring itself (slots in use) is the NIC's; the driver
//! asks it to take a frame through a callback.

use std::collections::BTreeMap;

use super::qdisc::Qdisc;
use super::TxFrame;

/// Frames the software queue (qdisc) holds in front of a full TX ring
/// (Linux's default `txqueuelen`).
pub const QDISC_LIMIT: usize = 1000;

/// The driver's transmit state.
#[derive(Debug, Default)]
pub struct TxDriver {
    /// Send jobs running (emitted, not yet done).
    jobs: usize,
    /// Number of the next frame the stack emits, and of the next to post.
    emitted: u64,
    posted: u64,
    /// Frames whose send processing ended ahead of an earlier frame's.
    ready: BTreeMap<u64, TxFrame>,
    qdisc: Qdisc,
    /// The stack could not emit everything it had (no credit left).
    pub stack_blocked: bool,
}

impl TxDriver {
    /// A driver whose software queue is `qdisc`.
    pub fn new(qdisc: Qdisc) -> TxDriver {
        TxDriver { qdisc, ..TxDriver::default() }
    }

    /// Frames the stack may emit now without overflowing the qdisc.
    pub fn credit(&self) -> usize {
        QDISC_LIMIT.saturating_sub(self.qdisc.len() + self.jobs)
    }

    /// The stack emitted a frame: its number (its send job starts).
    pub fn emit(&mut self) -> u64 {
        self.jobs += 1;
        self.emitted += 1;
        self.emitted - 1
    }

    /// Frame `seq`'s send job is done: post every frame now in order,
    /// each to the ring (`ring` gives it back when the ring is full) unless
    /// frames already wait in the qdisc.
    pub fn done(&mut self, seq: u64, frame: TxFrame, mut ring: impl FnMut(TxFrame) -> Option<TxFrame>) {
        self.jobs -= 1;
        self.ready.insert(seq, frame);
        while let Some(frame) = self.ready.remove(&self.posted) {
            self.posted += 1;
            let queued = if self.qdisc.is_empty() { ring(frame) } else { Some(frame) };
            if let Some(frame) = queued {
                self.qdisc.push(frame);
            }
        }
    }

    /// Ring slots were freed: move queued frames to the ring while it takes them.
    pub fn refill(&mut self, mut ring: impl FnMut(TxFrame) -> Option<TxFrame>) {
        while let Some(frame) = self.qdisc.pop() {
            if let Some(back) = ring(frame) {
                self.qdisc.unpop(back);
                break;
            }
        }
    }

    /// Check the bookkeeping; a failure is a simulator bug.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.posted > self.emitted {
            return Err(format!("{} frames posted of {} emitted", self.posted, self.emitted));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(tag: u8) -> TxFrame {
        TxFrame { bytes: vec![tag], tso_mss: None, core: 0 }
    }

    /// A ring of `slots` that records the tags it took.
    fn ring(slots: usize, took: &mut Vec<u8>) -> impl FnMut(TxFrame) -> Option<TxFrame> + '_ {
        move |f| {
            if took.len() >= slots {
                return Some(f);
            }
            took.push(f.bytes[0]);
            None
        }
    }

    #[test]
    fn frames_reach_the_ring_in_the_order_the_stack_emitted_them() {
        let mut d = TxDriver::default();
        let seqs: Vec<u64> = (0..3).map(|_| d.emit()).collect();
        assert_eq!(seqs, [0, 1, 2]);
        assert_eq!(d.credit(), QDISC_LIMIT - 3);
        let mut took = Vec::new();
        // Frame 2's job ends first, then 0, then 1.
        d.done(2, frame(2), ring(8, &mut took));
        assert!(took.is_empty(), "frame 2 waits for 0 and 1");
        d.done(0, frame(0), ring(8, &mut took));
        d.done(1, frame(1), ring(8, &mut took));
        assert_eq!(took, [0, 1, 2]);
        assert_eq!(d.credit(), QDISC_LIMIT);
        d.check_invariants().unwrap();
    }

    #[test]
    fn a_full_ring_queues_frames_in_the_qdisc_until_slots_free() {
        let mut d = TxDriver::default();
        let mut took = Vec::new();
        for tag in 0..4 {
            let seq = d.emit();
            d.done(seq, frame(tag), ring(2, &mut took));
        }
        assert_eq!(took, [0, 1]);
        // Two frames wait in the qdisc and count against the stack's credit.
        assert_eq!(d.credit(), QDISC_LIMIT - 2);
        let mut after = Vec::new();
        d.refill(ring(1, &mut after));
        assert_eq!(after, [2], "one slot freed takes the oldest queued frame");
        d.refill(ring(5, &mut after));
        assert_eq!(after, [2, 3]);
        assert_eq!(d.credit(), QDISC_LIMIT);
    }
}
