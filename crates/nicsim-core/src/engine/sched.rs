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

#[derive(Debug)]
struct Entry<E> {
    key: (Time, Priority, u64),
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// A discrete-event scheduler over events of type `E`.
#[derive(Debug)]
pub struct Scheduler<E> {
    now: Time,
    next_seq: u64,
    heap: BinaryHeap<Reverse<Entry<E>>>,
    /// Sequence numbers of cancelled, not yet popped events (membership only;
    /// never iterated, so its order cannot leak into results).
    cancelled: HashSet<u64>,
    executed: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler { now: Time::ZERO, next_seq: 0, heap: BinaryHeap::new(), cancelled: HashSet::new(), executed: 0 }
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

    /// Schedule `event` at absolute time `at` (never in the past).
    pub fn at(&mut self, at: Time, prio: Priority, event: E) -> EventKey {
        assert!(at >= self.now, "scheduled an event in the past: {at} < {}", self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Entry { key: (at, prio, seq), event }));
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
        self.heap.peek().map(|Reverse(e)| e.key.0)
    }

    /// Pop the next live event and advance the clock to it.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.skip_cancelled();
        let Reverse(entry) = self.heap.pop()?;
        debug_assert!(entry.key.0 >= self.now, "time went backwards: {} after {}", entry.key.0, self.now);
        self.now = entry.key.0;
        self.executed += 1;
        Some((entry.key.0, entry.event))
    }

    /// Whether no live event is left (quiescence).
    pub fn is_idle(&mut self) -> bool {
        self.peek_time().is_none()
    }

    /// Live (not cancelled) events for which `pred` holds. Walks the whole
    /// queue: for end-of-run checks, not for the hot path.
    pub fn count_pending(&self, mut pred: impl FnMut(&E) -> bool) -> usize {
        self.heap.iter().filter(|Reverse(e)| !self.cancelled.contains(&e.key.2) && pred(&e.event)).count()
    }

    /// Check the queue's bookkeeping: no live event is earlier than the
    /// clock, and every cancelled key names an event still in the queue.
    pub fn check_invariants(&self) -> Result<(), String> {
        if let Some(Reverse(e)) = self.heap.iter().find(|Reverse(e)| e.key.0 < self.now) {
            return Err(format!("an event at {} is queued before the clock ({})", e.key.0, self.now));
        }
        let queued: HashSet<u64> = self.heap.iter().map(|Reverse(e)| e.key.2).collect();
        if let Some(k) = self.cancelled.iter().find(|k| !queued.contains(k)) {
            return Err(format!("cancelled key {k} names no queued event"));
        }
        if self.next_seq < self.heap.len() as u64 {
            return Err(format!("{} events queued but only {} ever scheduled", self.heap.len(), self.next_seq));
        }
        Ok(())
    }

    fn skip_cancelled(&mut self) {
        if self.cancelled.is_empty() {
            return;
        }
        while let Some(Reverse(top)) = self.heap.peek() {
            if self.cancelled.remove(&top.key.2) {
                self.heap.pop();
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
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_is_a_bug() {
        let mut s = Scheduler::new();
        s.at(Time(5), Priority::WIRE, ());
        s.pop();
        s.at(Time(4), Priority::WIRE, ());
    }
}
