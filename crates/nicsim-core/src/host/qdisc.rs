//! The software queue in front of a NIC's transmit ring, and the limit on
//! the bytes the ring itself may hold.
//!
//! * [`Qdisc`]: first in, first out (`fifo`, nicsim's default), or fair
//!   queueing by flow as Linux's fq_codel serves it (`fq_codel`): each
//!   flow (addresses, protocol, ports) has its own queue; a flow that
//!   becomes active joins the list of new flows, which is served first;
//!   the dequeue takes the head flow's next packet while its deficit is
//!   positive, and a flow whose deficit is spent gets one quantum more and
//!   goes to the tail of the old flows (deficit round robin,
//!   `net/sched/sch_fq_codel.c` `fq_codel_dequeue`). CoDel's drops (when
//!   a packet waited more than 5 ms for 100 ms) are not modelled: the
//!   queue is bounded by the stack's credit instead (`QDISC_LIMIT`).
//! * [`Bql`]: byte queue limits (`lib/dynamic_queue_limits.c`), which
//!   drivers such as mlx5 and ixgbe report to (`netdev_tx_sent_queue`,
//!   `netdev_tx_completed_queue`): the ring takes packets while the bytes
//!   posted and not yet completed are within a limit the completions tune:
//!   a completion that finds the ring run dry while packets were held back
//!   raises the limit by the bytes both posted and completed since the
//!   completion before, plus what was over the limit then; a limit with
//!   slack (more than twice what completes at once) for a whole second is
//!   lowered by the least slack seen.
//!
//! Units: bytes, picoseconds.

use std::collections::{BTreeMap, VecDeque};

use super::TxFrame;
use crate::engine::Time;

/// A flow: IPv4 source and destination, protocol, ports (zero for a frame
/// that is not IPv4 TCP or UDP).
type FlowKey = (u32, u32, u8, u16, u16);

fn flow_of(frame: &[u8]) -> FlowKey {
    let field = |r: std::ops::Range<usize>| frame.get(r).map(|b| b.iter().fold(0u32, |a, &x| a << 8 | u32::from(x)));
    if field(12..14) != Some(0x0800) {
        return (0, 0, 0, 0, 0);
    }
    let ihl = frame.get(14).map_or(20, |b| usize::from(b & 0x0f) * 4);
    let proto = frame.get(23).copied().unwrap_or(0);
    let (src, dst) = (field(26..30).unwrap_or(0), field(30..34).unwrap_or(0));
    let ports = |at: usize| field(at..at + 2).unwrap_or(0) as u16;
    match proto {
        6 | 17 => (src, dst, proto, ports(14 + ihl), ports(16 + ihl)),
        _ => (src, dst, proto, 0, 0),
    }
}

/// A flow's queue and deficit (fair queueing).
#[derive(Debug, Default)]
struct Flow {
    queue: VecDeque<TxFrame>,
    deficit: i64,
}

/// Fair queueing state: the flows, and the lists of new and old ones.
#[derive(Debug, Default)]
pub struct Fq {
    quantum: i64,
    flows: BTreeMap<FlowKey, Flow>,
    new_flows: VecDeque<FlowKey>,
    old_flows: VecDeque<FlowKey>,
    len: usize,
}

impl Fq {
    fn active(&self, key: &FlowKey) -> bool {
        self.new_flows.contains(key) || self.old_flows.contains(key)
    }

    fn push(&mut self, frame: TxFrame) {
        let key = flow_of(&frame.bytes);
        if !self.active(&key) {
            self.new_flows.push_back(key);
            self.flows.entry(key).or_default().deficit = self.quantum;
        }
        self.flows.entry(key).or_default().queue.push_back(frame);
        self.len += 1;
    }

    fn pop(&mut self) -> Option<TxFrame> {
        loop {
            let (new, key) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&k), _) => (true, k),
                (None, Some(&k)) => (false, k),
                (None, None) => return None,
            };
            let flow = self.flows.get_mut(&key).expect("a listed flow exists");
            if flow.deficit <= 0 {
                flow.deficit += self.quantum;
                self.list(new).pop_front();
                self.old_flows.push_back(key);
                continue;
            }
            let Some(frame) = flow.queue.pop_front() else {
                // An empty new flow goes behind the old ones once, so it
                // cannot starve them; an empty old flow becomes inactive.
                self.list(new).pop_front();
                if new && !self.old_flows.is_empty() {
                    self.old_flows.push_back(key);
                }
                continue;
            };
            flow.deficit -= frame.bytes.len() as i64;
            self.len -= 1;
            return Some(frame);
        }
    }

    /// Put back the frame `pop` just gave (the ring refused it).
    fn unpop(&mut self, frame: TxFrame) {
        let flow = self.flows.get_mut(&flow_of(&frame.bytes)).expect("the flow was just served");
        flow.deficit += frame.bytes.len() as i64;
        flow.queue.push_front(frame);
        self.len += 1;
    }

    fn list(&mut self, new: bool) -> &mut VecDeque<FlowKey> {
        if new {
            &mut self.new_flows
        } else {
            &mut self.old_flows
        }
    }
}

/// The software queue in front of the transmit ring.
#[derive(Debug)]
pub enum Qdisc {
    /// First in, first out.
    Fifo(VecDeque<TxFrame>),
    /// fq_codel's deficit round robin over flows (no CoDel drops).
    FqCodel(Box<Fq>),
}

impl Default for Qdisc {
    fn default() -> Self {
        Qdisc::Fifo(VecDeque::new())
    }
}

impl Qdisc {
    /// Fair queueing by flow with `quantum` bytes a round.
    pub fn fq_codel(quantum: u64) -> Qdisc {
        Qdisc::FqCodel(Box::new(Fq { quantum: quantum.max(1) as i64, ..Fq::default() }))
    }

    /// Frames queued.
    pub fn len(&self) -> usize {
        match self {
            Qdisc::Fifo(q) => q.len(),
            Qdisc::FqCodel(f) => f.len,
        }
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queue a frame.
    pub fn push(&mut self, frame: TxFrame) {
        match self {
            Qdisc::Fifo(q) => q.push_back(frame),
            Qdisc::FqCodel(f) => f.push(frame),
        }
    }

    /// The next frame to send.
    pub fn pop(&mut self) -> Option<TxFrame> {
        match self {
            Qdisc::Fifo(q) => q.pop_front(),
            Qdisc::FqCodel(f) => f.pop(),
        }
    }

    /// Put back the frame [`Qdisc::pop`] just gave.
    pub fn unpop(&mut self, frame: TxFrame) {
        match self {
            Qdisc::Fifo(q) => q.push_front(frame),
            Qdisc::FqCodel(f) => f.unpop(frame),
        }
    }
}

/// How long a limit must have had slack before it is lowered (the
/// kernel's `slack_hold_time`, HZ: one second).
const SLACK_HOLD_PS: u64 = 1_000_000_000_000;

/// Byte queue limits of one transmit ring (Linux's `struct dql`).
#[derive(Debug, Clone, Default)]
pub struct Bql {
    /// Bytes posted and completed so far.
    queued: u64,
    completed: u64,
    /// The limit, and `limit + completed` when it was last set.
    limit: u64,
    adj_limit: u64,
    /// The last post's bytes; at the last completion: what was posted, by
    /// how much the limit was over, and the last post's bytes.
    last_obj: u64,
    prev_queued: u64,
    prev_ovlimit: u64,
    prev_last_obj: u64,
    lowest_slack: Option<u64>,
    slack_start: Time,
}

impl Bql {
    /// Whether the ring may take another packet (`dql_avail` not negative).
    pub fn open(&self) -> bool {
        self.queued <= self.adj_limit
    }

    /// The limit now, bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// A packet of `bytes` was posted (`dql_queued`).
    pub fn queued(&mut self, bytes: u64) {
        self.last_obj = bytes;
        self.queued += bytes;
    }

    /// `bytes` completed at `now` (`dql_completed`).
    pub fn completed(&mut self, bytes: u64, now: Time) {
        let pos = |a: u64, b: u64| a.saturating_sub(b);
        let queued = self.queued;
        let completed = self.completed + bytes;
        let mut limit = self.limit;
        let mut ovlimit = pos(queued - self.completed, limit);
        let inprogress = queued - completed;
        let prev_inprogress = self.prev_queued - self.completed;
        let all_prev_completed = completed >= self.prev_queued;
        if (ovlimit > 0 && inprogress == 0) || (self.prev_ovlimit > 0 && all_prev_completed) {
            // Starved: the ring ran dry while packets were held back.
            limit += pos(completed, self.prev_queued) + self.prev_ovlimit;
            self.slack_start = now;
            self.lowest_slack = None;
        } else if inprogress > 0 && prev_inprogress > 0 && !all_prev_completed {
            let slack = pos(limit + self.prev_ovlimit, 2 * (completed - self.completed));
            let last = if self.prev_ovlimit > 0 { pos(self.prev_last_obj, self.prev_ovlimit) } else { 0 };
            let slack = slack.max(last);
            self.lowest_slack = Some(self.lowest_slack.map_or(slack, |l| l.min(slack)));
            if now.since(self.slack_start).0 > SLACK_HOLD_PS {
                limit = pos(limit, self.lowest_slack.unwrap_or(0));
                self.slack_start = now;
                self.lowest_slack = None;
            }
        }
        if limit != self.limit {
            self.limit = limit;
            ovlimit = 0;
        }
        self.adj_limit = limit + completed;
        self.prev_ovlimit = ovlimit;
        self.prev_last_obj = self.last_obj;
        self.completed = completed;
        self.prev_queued = queued;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet/IPv4/TCP frame of `len` bytes from source port `port`.
    fn tcp(port: u16, len: usize) -> TxFrame {
        let mut b = vec![0u8; len.max(54)];
        b[12] = 0x08;
        b[14] = 0x45;
        b[23] = 6;
        b[26..30].copy_from_slice(&[10, 0, 0, 1]);
        b[30..34].copy_from_slice(&[10, 0, 0, 2]);
        b[34..36].copy_from_slice(&port.to_be_bytes());
        b[36..38].copy_from_slice(&5001u16.to_be_bytes());
        TxFrame { bytes: b, tso_mss: None, core: 0 }
    }

    fn port(f: &TxFrame) -> u16 {
        u16::from_be_bytes([f.bytes[34], f.bytes[35]])
    }

    #[test]
    fn fair_queueing_interleaves_flows_a_quantum_each_where_fifo_keeps_their_runs() {
        let mut fifo = Qdisc::default();
        let mut fq = Qdisc::fq_codel(1514);
        for p in [1u16, 2] {
            for _ in 0..3 {
                fifo.push(tcp(p, 1514));
                fq.push(tcp(p, 1514));
            }
        }
        let order = |q: &mut Qdisc| std::iter::from_fn(|| q.pop()).map(|f| port(&f)).collect::<Vec<_>>();
        assert_eq!(order(&mut fifo), [1, 1, 1, 2, 2, 2]);
        assert_eq!(order(&mut fq), [1, 2, 1, 2, 1, 2]);
        assert!(fq.is_empty());
    }

    #[test]
    fn a_quantum_covers_several_small_packets_of_a_flow() {
        // 500-byte packets: a 1514-byte quantum takes four before the turn
        // passes (the deficit must be spent, below zero, to rotate).
        let mut fq = Qdisc::fq_codel(1514);
        for p in [1u16, 2] {
            for _ in 0..5 {
                fq.push(tcp(p, 500));
            }
        }
        let order: Vec<u16> = std::iter::from_fn(|| fq.pop()).map(|f| port(&f)).collect();
        assert_eq!(order, [1, 1, 1, 1, 2, 2, 2, 2, 1, 2]);
    }

    #[test]
    fn a_refused_frame_goes_back_where_it_was() {
        let mut fq = Qdisc::fq_codel(1514);
        for p in [1u16, 2] {
            fq.push(tcp(p, 1514));
            fq.push(tcp(p, 1514));
        }
        let first = fq.pop().unwrap();
        assert_eq!(port(&first), 1);
        fq.unpop(first);
        assert_eq!(fq.len(), 4);
        let order: Vec<u16> = std::iter::from_fn(|| fq.pop()).map(|f| port(&f)).collect();
        assert_eq!(order, [1, 2, 1, 2]);
    }

    #[test]
    fn a_flow_that_arrives_later_is_served_before_the_old_flows() {
        let mut fq = Qdisc::fq_codel(1514);
        for _ in 0..4 {
            fq.push(tcp(1, 1514));
        }
        assert_eq!(port(&fq.pop().unwrap()), 1);
        assert_eq!(port(&fq.pop().unwrap()), 1, "its deficit rotated it to the old flows");
        fq.push(tcp(2, 1514));
        assert_eq!(port(&fq.pop().unwrap()), 2, "a new flow goes first");
    }

    #[test]
    fn byte_queue_limits_grow_when_the_ring_runs_dry_with_packets_held_back() {
        let mut q = Bql::default();
        assert!(q.open(), "an empty ring takes a first packet");
        q.queued(1514);
        assert!(!q.open(), "a limit of 0 holds everything after it");
        // It completes and the ring is dry while the next waited: the limit
        // grows by the bytes posted and completed since the last completion.
        q.completed(1514, Time(1_000_000));
        assert_eq!(q.limit(), 1514);
        q.queued(1514);
        assert!(q.open());
        q.queued(1514);
        assert!(!q.open());
        q.completed(3028, Time(2_000_000));
        assert_eq!(q.limit(), 1514 + 3028, "starved again: the two posted since grow it");
        // Completions that leave packets in flight do not lower it within a second.
        for i in 0..10u64 {
            q.queued(1514);
            q.queued(1514);
            q.completed(1514, Time(3_000_000 + i));
        }
        assert_eq!(q.limit(), 4542);
    }
}
