//! Full-duplex Ethernet: two independent directions ([`Channel`]s), each a
//! bounded FIFO in front of a serialiser, then a propagation delay.
//!
//! Wire time per frame is `(max(frame + FCS, 64) + preamble/SFD + IFG) × 8 /
//! rate`: the frame as smoltcp emits it (header + payload, no FCS), plus the
//! 4-byte FCS, padding to the 64-byte minimum, 8 bytes of preamble and
//! start-of-frame delimiter and a 12-byte inter-frame gap. Fractions of a
//! picosecond are carried from frame to frame, so a long run keeps exact
//! line rate. Impairments (loss, duplication, reordering, corruption) are
//! drawn from the channel's own seeded RNG. Not modelled: PAUSE frames,
//! autonegotiation, bit errors other than the single-bit `corrupt`.

pub mod switch;

use std::collections::VecDeque;

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::engine::units::{Bandwidth, Duration};
use crate::engine::Dur;

/// Preamble and start-of-frame delimiter, bytes.
pub const PREAMBLE_SFD: u64 = 8;
/// Frame check sequence, bytes.
pub const FCS: u64 = 4;
/// Inter-frame gap, bytes.
pub const IFG: u64 = 12;
/// Minimum frame including FCS, bytes.
pub const MIN_FRAME: u64 = 64;
/// Ethernet II header, bytes.
pub const ETH_HEADER: u64 = 14;

/// Bytes of wire time a frame of `len` bytes (header + payload, no FCS) occupies.
pub fn wire_bytes(len: usize) -> u64 {
    (len as u64 + FCS).max(MIN_FRAME) + PREAMBLE_SFD + IFG
}

/// The goodput ceiling of full frames carrying `payload` bytes of
/// application data per `mtu`-byte IP packet, at `rate`.
pub fn goodput_ceiling(rate: Bandwidth, mtu: u64, payload: u64) -> f64 {
    rate.0 as f64 * payload as f64 / wire_bytes((mtu + ETH_HEADER) as usize) as f64
}

/// Counters of one direction of a link.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ChannelStats {
    /// Frames that went on the wire.
    pub frames: u64,
    /// Their bytes (header + payload, no FCS).
    pub bytes: u64,
    /// Their wire bytes (with FCS, padding, preamble, IFG).
    pub wire_bytes: u64,
    /// Frames dropped because the queue was full.
    pub queue_drops: u64,
    /// Frames that finished serialising and reached the far end (each
    /// counted once; `duplicated` counts the extra copies).
    pub delivered: u64,
    /// Frames lost on the wire (impairment).
    pub lost: u64,
    /// Extra copies delivered (impairment).
    pub duplicated: u64,
    /// Frames held back (impairment).
    pub reordered: u64,
    /// Frames delivered with a flipped bit (impairment).
    pub corrupted: u64,
    /// Picoseconds the wire was busy.
    pub busy_ps: u64,
}

/// A frame leaving the far end of the wire after `extra` beyond propagation.
#[derive(Debug)]
pub struct Delivery {
    /// Delay beyond the channel's propagation delay.
    pub extra: Dur,
    /// The bytes as they arrive (possibly corrupted).
    pub frame: Vec<u8>,
}

/// One direction of a link.
#[derive(Debug)]
pub struct Channel {
    rate: Bandwidth,
    /// One-way propagation delay.
    pub propagation: Dur,
    capacity: usize,
    /// Whether a full queue makes the sender wait instead of dropping.
    pub backpressure: bool,
    queue: VecDeque<Vec<u8>>,
    on_wire: bool,
    /// The receiver asked the sender to pause (802.3x): no new frame starts.
    pub paused: bool,
    /// Carried fraction of a picosecond, in units of 1/rate ps.
    carry: u64,
    impair: Impairments,
    rng: Rng,
    /// Frames the queue took (for the conservation check).
    accepted: u64,
    /// Counters.
    pub stats: ChannelStats,
}

impl Channel {
    /// A direction with the given rate, propagation, queue bound and impairments.
    pub fn new(
        rate: Bandwidth,
        propagation: Dur,
        capacity: usize,
        backpressure: bool,
        impair: Impairments,
        rng: Rng,
    ) -> Self {
        assert!(rate.0 > 0 && capacity > 0);
        Channel {
            rate,
            propagation,
            capacity,
            backpressure,
            queue: VecDeque::with_capacity(capacity.min(4096)),
            on_wire: false,
            paused: false,
            carry: 0,
            impair,
            rng,
            accepted: 0,
            stats: ChannelStats::default(),
        }
    }

    /// Frames the queue can still take.
    pub fn free_slots(&self) -> usize {
        self.capacity - self.queue.len()
    }

    /// Whether a frame is being serialised.
    pub fn is_busy(&self) -> bool {
        self.on_wire
    }

    /// Queue a frame. Returns `false` (and counts a drop) when the queue is full.
    pub fn enqueue(&mut self, frame: Vec<u8>) -> bool {
        if self.queue.len() >= self.capacity {
            self.stats.queue_drops += 1;
            return false;
        }
        self.queue.push_back(frame);
        self.accepted += 1;
        true
    }

    /// Frames in the queue, including the one on the wire.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Check the channel's bookkeeping: every frame the queue took is queued,
    /// lost or delivered (`accepted = delivered + lost + queued`), frames on
    /// the wire are those started and not finished, and the queue is within
    /// its bound. Returns what is wrong; a failure is a simulator bug.
    pub fn check_invariants(&self) -> Result<(), String> {
        let st = &self.stats;
        let queued = self.queue.len() as u64;
        if self.queue.len() > self.capacity {
            return Err(format!("queue holds {queued} frames, above its bound of {}", self.capacity));
        }
        if self.on_wire && queued == 0 {
            return Err("a frame is on the wire but the queue is empty".into());
        }
        let finished = st.delivered + st.lost;
        if st.frames != finished + u64::from(self.on_wire) {
            return Err(format!(
                "{} frames started but {} delivered + {} lost + {} on the wire",
                st.frames,
                st.delivered,
                st.lost,
                u64::from(self.on_wire)
            ));
        }
        if self.accepted != finished + queued {
            return Err(format!(
                "{} frames accepted but {} delivered + {} lost + {queued} queued",
                self.accepted, st.delivered, st.lost
            ));
        }
        if st.duplicated > st.delivered || st.corrupted > st.delivered || st.reordered > st.delivered {
            return Err(format!(
                "more impaired frames ({} duplicated, {} corrupted, {} reordered) than delivered ({})",
                st.duplicated, st.corrupted, st.reordered, st.delivered
            ));
        }
        if st.bytes > st.wire_bytes {
            return Err(format!("{} frame bytes exceed {} wire bytes", st.bytes, st.wire_bytes));
        }
        Ok(())
    }

    /// Start serialising the head frame if the wire is idle; returns its
    /// wire time and the frame (for traces), or `None` if idle or empty.
    pub fn start(&mut self) -> Option<(Dur, &[u8])> {
        if self.on_wire || self.paused {
            return None;
        }
        let frame = self.queue.front()?;
        let wire = wire_bytes(frame.len());
        let (ps, rem) = self.rate.ps_for_bits(wire * 8);
        let carried = self.carry + rem;
        let extra = carried / self.rate.0;
        self.carry = carried % self.rate.0;
        let time = Dur(ps + extra);
        self.on_wire = true;
        self.stats.frames += 1;
        self.stats.bytes += frame.len() as u64;
        self.stats.wire_bytes += wire;
        self.stats.busy_ps += time.0;
        Some((time, frame))
    }

    /// The head frame finished serialising: apply impairments and return
    /// what reaches the far end (zero, one or two deliveries).
    pub fn finish(&mut self) -> Vec<Delivery> {
        assert!(self.on_wire, "finish without a frame on the wire");
        self.on_wire = false;
        let mut frame = self.queue.pop_front().expect("frame on the wire is queued");
        let imp = &self.impair;
        if imp.loss > 0.0 && self.rng.gen_bool(imp.loss) {
            self.stats.lost += 1;
            return Vec::new();
        }
        self.stats.delivered += 1;
        if imp.corrupt > 0.0 && self.rng.gen_bool(imp.corrupt) && frame.len() > ETH_HEADER as usize {
            let bit = self.rng.gen_range(ETH_HEADER as usize * 8..frame.len() * 8);
            frame[bit / 8] ^= 1 << (bit % 8);
            self.stats.corrupted += 1;
        }
        let mut extra = Dur::ZERO;
        if imp.reorder > 0.0 && self.rng.gen_bool(imp.reorder) {
            extra = imp.reorder_delay.dur();
            self.stats.reordered += 1;
        }
        if imp.duplicate > 0.0 && self.rng.gen_bool(imp.duplicate) {
            self.stats.duplicated += 1;
            let copy = Delivery { extra, frame: frame.clone() };
            return vec![Delivery { extra, frame }, copy];
        }
        vec![Delivery { extra, frame }]
    }
}

/// Per-frame impairment probabilities (each 0 to 1).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Impairments {
    /// Probability a frame is lost on the wire.
    #[serde(default)]
    pub loss: f64,
    /// Probability a frame is delivered twice.
    #[serde(default)]
    pub duplicate: f64,
    /// Probability a frame is held back by `reorder_delay` (so later frames overtake it).
    #[serde(default)]
    pub reorder: f64,
    /// Extra delay of a reordered frame.
    #[serde(default = "default_reorder_delay")]
    pub reorder_delay: Duration,
    /// Probability one bit of the frame (after the Ethernet header) is flipped.
    #[serde(default)]
    pub corrupt: f64,
}

fn default_reorder_delay() -> Duration {
    Duration(20_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::component_rng;

    fn chan(rate: u64, cap: usize, imp: Impairments) -> Channel {
        Channel::new(Bandwidth(rate), Dur::ZERO, cap, true, imp, component_rng(1, "test"))
    }

    #[test]
    fn wire_overhead_matches_ethernet() {
        // 1500-byte IP packet: 1514 B frame + FCS + preamble + IFG = 1538 B.
        assert_eq!(wire_bytes(1514), 1538);
        // A 42-byte ARP-sized frame is padded to the 64-byte minimum.
        assert_eq!(wire_bytes(42), 84);
        let ceiling = goodput_ceiling(Bandwidth(1_000_000_000), 1500, 1448);
        assert!((ceiling - 1448.0 / 1538.0 * 1e9).abs() < 1e-3);
    }

    #[test]
    fn serialisation_time_is_exact_over_many_frames() {
        // 84 wire bytes at 3 Gb/s is 224 ns exactly; at 7 Gb/s it is 96 ns exactly
        // but each 1-byte-longer frame leaves a remainder that must carry.
        let mut c = chan(7_000_000_000, 10, Impairments::default());
        let mut total = 0;
        for _ in 0..7 {
            c.enqueue(vec![0; 1500]);
            let (t, _) = c.start().unwrap();
            total += t.0;
            c.finish();
        }
        // 7 frames × 1524 wire bytes × 8 bits / 7 Gb/s = 12192 ns exactly.
        assert_eq!(total, 7 * 1524 * 8 * 1000 / 7);
    }

    #[test]
    fn full_queue_drops_and_counts() {
        let mut c = chan(1_000_000_000, 2, Impairments::default());
        assert!(c.enqueue(vec![0; 60]));
        assert!(c.enqueue(vec![0; 60]));
        assert_eq!(c.free_slots(), 0);
        assert!(!c.enqueue(vec![0; 60]));
        assert_eq!(c.stats.queue_drops, 1);
    }

    #[test]
    fn certain_loss_delivers_nothing_and_duplication_two() {
        let mut c = chan(1_000_000_000, 4, Impairments { loss: 1.0, ..Default::default() });
        c.enqueue(vec![1; 100]);
        c.start();
        assert!(c.finish().is_empty());
        assert_eq!(c.stats.lost, 1);
        let mut d = chan(1_000_000_000, 4, Impairments { duplicate: 1.0, ..Default::default() });
        d.enqueue(vec![1; 100]);
        d.start();
        assert_eq!(d.finish().len(), 2);
    }

    #[test]
    fn corruption_flips_exactly_one_bit_after_the_header() {
        let mut c = chan(1_000_000_000, 4, Impairments { corrupt: 1.0, ..Default::default() });
        c.enqueue(vec![0; 100]);
        c.start();
        let out = c.finish();
        let ones: u32 = out[0].frame.iter().map(|b| b.count_ones()).sum();
        assert_eq!(ones, 1);
        assert!(out[0].frame[..14].iter().all(|&b| b == 0));
    }

    #[test]
    fn conservation_holds_through_impairments_and_catches_a_miscount() {
        let imp = Impairments { loss: 0.3, duplicate: 0.2, reorder: 0.2, corrupt: 0.2, ..Default::default() };
        let mut c = chan(1_000_000_000, 3, imp);
        let mut copies = 0;
        for i in 0..200 {
            c.enqueue(vec![0; 60 + i]);
            if i % 3 == 0 {
                c.start();
            }
            c.check_invariants().unwrap();
            if i % 5 == 0 && c.is_busy() {
                copies += c.finish().len() as u64;
            }
            c.check_invariants().unwrap();
        }
        // 200 offered to a 3-frame queue: some dropped, the rest accounted for.
        let st = c.stats.clone();
        assert!(st.queue_drops > 0 && st.lost > 0 && st.duplicated > 0);
        assert_eq!(copies, st.delivered + st.duplicated);
        assert_eq!(200, st.queue_drops + st.delivered + st.lost + c.queued() as u64);
        c.stats.lost += 1;
        let e = c.check_invariants().unwrap_err();
        assert!(e.contains("delivered"), "{e}");
    }
}
