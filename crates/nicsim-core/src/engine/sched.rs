//! The event queue: a min-heap keyed by (time, priority, sequence).
//!
//! The key is a total order, so a run is a pure function of its inputs:
//! events at the same instant run by priority, then in the order they were
//! scheduled (FIFO). Scheduling returns an [`EventKey`] that cancels the
//! event; cancelled entries are skipped lazily when they reach the top.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use super::time::{Dur, Time};

/// Tie-breaker among events at the same instant; lower runs first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub u8);

impl Priority {
    /// Hardware completions (a frame finishes serialising or arrives): the
    /// wire's state at an instant is settled before any software looks at it.
    pub const WIRE: Priority = Priority(0);
    /// Hardware timers (interrupt moderation, NIC work) — after the wire.
    pub const DEVICE: Priority = Priority(1);
    /// Software: stack polls and applications see every frame that arrived
    /// at the same instant in one batch.
    pub const SOFTWARE: Priority = Priority(2);
}

/// Handle of a scheduled event; cancels it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventKey(u64);

/// A heap entry: the event's key packed into two words, and the slot of
/// the event in the scheduler's slab. Events stay put in the slab while
/// their 24-byte entries move in the heap, so a push or pop moves a few
/// words whatever the size of `E`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    /// Time in picoseconds.
    time: u64,
    /// Priority in the top 8 bits, sequence number in the low 56.
    prio_seq: u64,
    /// Index into the slab. A full word although slots fit in 32 bits:
    /// the heap's sift copies entries with word-sized loads, and a 32-bit
    /// field stored just before such a load defeats store-to-load
    /// forwarding (perf put 40 % of `Scheduler::at`'s samples on that
    /// load). The entry is 24 bytes either way.
    slot: u64,
}

/// Bits of `Entry::prio_seq` that hold the sequence number.
const SEQ_BITS: u32 = 56;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

impl Entry {
    fn seq(&self) -> u64 {
        self.prio_seq & SEQ_MASK
    }
}

/// A discrete-event scheduler over events of type `E`.
#[derive(Debug)]
pub struct Scheduler<E> {
    now: Time,
    next_seq: u64,
    /// Min-heap on (time, priority, sequence); the slot breaks no ties
    /// because sequence numbers are unique.
    heap: BinaryHeap<Reverse<Entry>>,
    /// Events by slot; `None` for a free slot.
    slab: Vec<Option<E>>,
    /// Free slots, reused last-in first-out (which slot an event gets never
    /// affects the order events run in).
    free: Vec<u32>,
    /// Sequence numbers of cancelled, not yet popped events (membership only;
    /// never iterated, so its order cannot leak into results).
    cancelled: HashSet<u64>,
    executed: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler {
            now: Time::ZERO,
            next_seq: 0,
            heap: BinaryHeap::new(),
            slab: Vec::new(),
            free: Vec::new(),
            cancelled: HashSet::new(),
            executed: 0,
        }
    }
}

impl<E> Scheduler<E> {
    /// An empty scheduler at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of events popped so far.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    /// Events in the queue, cancelled ones not yet skipped included.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether the queue holds no entry at all.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `event` at absolute time `at` (never in the past).
    pub fn at(&mut self, at: Time, prio: Priority, event: E) -> EventKey {
        assert!(at >= self.now, "scheduled an event in the past: {at} < {}", self.now);
        let seq = self.next_seq;
        assert!(seq <= SEQ_MASK, "more than 2^56 events scheduled");
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slab[slot as usize] = Some(event);
                slot
            }
            None => {
                let slot = u32::try_from(self.slab.len()).expect("fewer than 2^32 pending events");
                self.slab.push(Some(event));
                slot
            }
        };
        let prio_seq = (u64::from(prio.0) << SEQ_BITS) | seq;
        self.heap.push(Reverse(Entry { time: at.0, prio_seq, slot: u64::from(slot) }));
        EventKey(seq)
    }

    /// Schedule `event` after `delay`.
    pub fn after(&mut self, delay: Dur, prio: Priority, event: E) -> EventKey {
        self.at(self.now + delay, prio, event)
    }

    /// Cancel a scheduled event. Cancelling one that already ran is harmless.
    pub fn cancel(&mut self, key: EventKey) {
        if key.0 < self.next_seq {
            self.cancelled.insert(key.0);
        }
    }

    /// Time of the next live event, if any.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.skip_cancelled();
        self.heap.peek().map(|Reverse(e)| Time(e.time))
    }

    /// Pop the next live event and advance the clock to it.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.skip_cancelled();
        let Reverse(entry) = self.heap.pop()?;
        let at = Time(entry.time);
        debug_assert!(at >= self.now, "time went backwards: {at} after {}", self.now);
        self.now = at;
        self.executed += 1;
        Some((at, self.take(entry.slot as u32)))
    }

    /// Remove the event in `slot` and free the slot.
    fn take(&mut self, slot: u32) -> E {
        let event = self.slab[slot as usize].take().expect("a queued entry names a full slot");
        self.free.push(slot);
        event
    }

    /// Whether no live event is left (quiescence).
    pub fn is_idle(&mut self) -> bool {
        self.peek_time().is_none()
    }

    /// Live (not cancelled) events for which `pred` holds. Walks the whole
    /// queue: for end-of-run checks, not for the hot path.
    pub fn count_pending(&self, mut pred: impl FnMut(&E) -> bool) -> usize {
        self.heap
            .iter()
            .filter(|Reverse(e)| !self.cancelled.contains(&e.seq()))
            .filter(|Reverse(e)| self.slab[e.slot as usize].as_ref().is_some_and(&mut pred))
            .count()
    }

    /// Check the queue's bookkeeping: no live event is earlier than the
    /// clock, every cancelled key names an event still in the queue, and
    /// every queued entry names its own full slot of the slab.
    pub fn check_invariants(&self) -> Result<(), String> {
        if let Some(Reverse(e)) = self.heap.iter().find(|Reverse(e)| e.time < self.now.0) {
            return Err(format!("an event at {} is queued before the clock ({})", Time(e.time), self.now));
        }
        let queued: HashSet<u64> = self.heap.iter().map(|Reverse(e)| e.seq()).collect();
        if let Some(k) = self.cancelled.iter().find(|k| !queued.contains(k)) {
            return Err(format!("cancelled key {k} names no queued event"));
        }
        if self.next_seq < self.heap.len() as u64 {
            return Err(format!("{} events queued but only {} ever scheduled", self.heap.len(), self.next_seq));
        }
        let slots: HashSet<u64> = self.heap.iter().map(|Reverse(e)| e.slot).collect();
        let full = self.slab.iter().filter(|s| s.is_some()).count();
        if slots.len() != self.heap.len() || full != self.heap.len() || self.free.len() + full != self.slab.len() {
            return Err(format!(
                "{} events queued in {} distinct slots, but the slab holds {full} events and {} free slots of {}",
                self.heap.len(),
                slots.len(),
                self.free.len(),
                self.slab.len()
            ));
        }
        if let Some(Reverse(e)) = self.heap.iter().find(|Reverse(e)| self.slab[e.slot as usize].is_none()) {
            return Err(format!("queued event {} names the empty slot {}", e.seq(), e.slot));
        }
        Ok(())
    }

    fn skip_cancelled(&mut self) {
        if self.cancelled.is_empty() {
            return;
        }
        while let Some(Reverse(top)) = self.heap.peek() {
            if self.cancelled.remove(&top.seq()) {
                let slot = top.slot as u32;
                self.heap.pop();
                drop(self.take(slot));
            } else {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_priority_then_fifo() {
        let mut s = Scheduler::new();
        s.at(Time(10), Priority::SOFTWARE, "late-soft");
        s.at(Time(5), Priority::SOFTWARE, "soft-1");
        s.at(Time(5), Priority::WIRE, "wire");
        s.at(Time(5), Priority::SOFTWARE, "soft-2");
        let order: Vec<_> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["wire", "soft-1", "soft-2", "late-soft"]);
        assert_eq!(s.now(), Time(10));
    }

    #[test]
    fn cancelled_events_never_run() {
        let mut s = Scheduler::new();
        let a = s.at(Time(1), Priority::WIRE, 'a');
        s.at(Time(2), Priority::WIRE, 'b');
        s.cancel(a);
        assert_eq!(s.pop(), Some((Time(2), 'b')));
        assert!(s.is_idle());
        assert_eq!(s.executed(), 1);
    }

    #[test]
    fn counts_live_pending_events_and_checks_itself() {
        let mut s = Scheduler::new();
        let a = s.at(Time(3), Priority::WIRE, 1);
        s.at(Time(4), Priority::WIRE, 2);
        s.at(Time(5), Priority::WIRE, 3);
        s.cancel(a);
        assert_eq!(s.count_pending(|&e| e >= 1), 2, "the cancelled one is not pending");
        assert_eq!(s.count_pending(|&e| e == 3), 1);
        s.check_invariants().unwrap();
        assert_eq!(s.pop(), Some((Time(4), 2)));
        s.check_invariants().unwrap();
        // A cancel of an event that already ran leaves a dangling key: caught.
        s.cancel(a);
        let e = s.check_invariants().unwrap_err();
        assert!(e.contains("names no queued event"), "{e}");
    }

    #[test]
    fn slots_are_reused_and_order_is_by_key_not_by_slot() {
        let mut s = Scheduler::new();
        // Fill, drain half, refill: new events land in old slots but still
        // run in (time, priority, sequence) order.
        for i in 0..8u64 {
            s.at(Time(100 - i), Priority::SOFTWARE, i);
        }
        for _ in 0..4 {
            s.pop();
        }
        s.at(Time(100), Priority::WIRE, 100);
        s.at(Time(100), Priority::SOFTWARE, 101);
        s.at(Time(99), Priority::SOFTWARE, 102);
        s.check_invariants().unwrap();
        assert_eq!(s.len(), 7);
        let order: Vec<_> = std::iter::from_fn(|| s.pop()).map(|(t, e)| (t.0, e)).collect();
        assert_eq!(order, [(97, 3), (98, 2), (99, 1), (99, 102), (100, 100), (100, 0), (100, 101)]);
        assert!(s.is_empty());
        assert!(s.slab.len() <= 8, "slots were reused: {}", s.slab.len());
        s.check_invariants().unwrap();
    }

    #[test]
    fn cancelled_events_free_their_slots() {
        let mut s = Scheduler::new();
        let keys: Vec<_> = (0..4u64).map(|i| s.at(Time(i), Priority::DEVICE, i)).collect();
        s.cancel(keys[0]);
        s.cancel(keys[1]);
        assert_eq!(s.count_pending(|_| true), 2);
        assert_eq!(s.pop(), Some((Time(2), 2)));
        s.check_invariants().unwrap();
        assert_eq!(s.free.len(), 3, "two cancelled and one popped slot are free");
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_is_a_bug() {
        let mut s = Scheduler::new();
        s.at(Time(5), Priority::WIRE, ());
        s.pop();
        s.at(Time(4), Priority::WIRE, ());
    }
}
