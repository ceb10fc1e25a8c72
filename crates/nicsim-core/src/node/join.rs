//! Linux's coalescing of the socket backlog (`cpu.backlog_coalesce`,
//! Linux 5.0 and later, `tcp_add_backlog`): a segment queued behind the
//! backlog's last one joins it when it continues it, as `skb_try_coalesce`
//! allows (see [`Joining::join`]).

use super::cost::{skb_frags, MAX_SKB_FRAGS};
use crate::nic::offload::merge::{Aggregate, FlowKey, TcpView, IP_MAX};

/// The backlog's last segment while later ones may still join it
/// (`cpu.backlog_coalesce`), with what a joining segment must match.
#[derive(Debug)]
pub(crate) struct Joining {
    /// Its place in arrival order.
    id: u64,
    agg: Aggregate,
    key: FlowKey,
    tos: u8,
    /// ECE and CWR.
    ecn: (bool, bool),
    options: Vec<u8>,
    /// Page fragments of the sk_buff so far.
    frags: u64,
}

impl Joining {
    /// Start with segment `v` of `frame` (`segments` wire frames), if it
    /// could take others: an in-order data or ACK segment, checked, unchained.
    pub(super) fn start(id: u64, frame: Vec<u8>, v: &TcpView, segments: u32) -> Result<Joining, Vec<u8>> {
        let frags = skb_frags(frame.len() as u64, segments);
        let Some(frags) = frags.filter(|_| may_join(v)) else {
            return Err(frame);
        };
        let options = v.options(&frame).to_vec();
        let mut agg = Aggregate::start(frame, v, 0, 0, 0);
        agg.segments = segments.max(1);
        Ok(Joining { id, agg, key: v.key, tos: v.tos, ecn: (v.ece, v.cwr), options, frags })
    }

    /// Take `frame` (`segments` wire frames) if `tcp_add_backlog` would.
    pub(super) fn join(&mut self, frame: &[u8], v: &TcpView, segments: u32) -> bool {
        let same = may_join(v)
            && v.key == self.key
            && v.seq == self.agg.end_seq()
            && v.tos == self.tos
            && (v.ece, v.cwr) == self.ecn
            && v.options(frame) == self.options.as_slice();
        // A segment without payload fits the tail room; one with payload
        // brings its head as a fragment, and its own fragments.
        let frags = match (v.len(), skb_frags(frame.len() as u64, segments)) {
            (0, _) => Some(self.frags),
            (_, Some(f)) => joined_frags(self.frags, f),
            _ => None,
        };
        // nicsim's frames are IP datagrams: no more than 64 KiB.
        let Some(frags) = frags.filter(|_| same && self.agg.ip_len_with(v.len()) <= IP_MAX) else { return false };
        let order = u64::from(self.agg.segments);
        self.agg.append(frame, v, 0, 0, order);
        self.agg.segments += segments.max(1) - 1;
        self.frags = frags;
        true
    }

    /// The joined segment as the backlog holds it: its place in arrival
    /// order, its frame, its wire frames.
    pub(super) fn finish(self) -> (u64, Vec<u8>, u32) {
        let (c, _) = self.agg.finish();
        (self.id, c.frame, c.segments)
    }
}

/// Page fragments of an sk_buff of `to` fragments after a segment with
/// payload and `from` fragments joins it (`skb_try_coalesce`: the joining
/// head becomes one more fragment), or `None` past `MAX_SKB_FRAGS`.
pub(super) fn joined_frags(to: u64, from: u64) -> Option<u64> {
    (to + from < MAX_SKB_FRAGS).then_some(to + from + 1)
}

/// A segment `tcp_add_backlog` may coalesce at all: an ACK without SYN,
/// RST or URG whose checksum held.
fn may_join(v: &TcpView) -> bool {
    v.ack_flag && !(v.syn || v.rst || v.urg) && v.checksums_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::offload::merge::fixture::{check, data, frame, pattern};
    use crate::nic::offload::merge::parse;
    use crate::nic::offload::merge::Kind;
    use smoltcp::wire::TcpControl;

    fn view(f: &[u8]) -> TcpView {
        match parse(f) {
            Kind::Tcp(v) => v,
            _ => panic!("a TCP frame"),
        }
    }

    fn start(f: Vec<u8>, segments: u32) -> Result<Joining, Vec<u8>> {
        let v = view(&f);
        Joining::start(0, f, &v, segments)
    }

    /// Offer back-to-back segments of `mss` bytes after the first until one
    /// does not join; the joined segment and how many it holds.
    fn join_run(mss: usize) -> (Vec<u8>, u32) {
        let mut j = start(data(1, 0, mss, false), 1).expect("a data segment may take others");
        let mut seq = mss as u32;
        loop {
            let f = data(1, seq, mss, false);
            if !j.join(&f, &view(&f), 1) {
                break;
            }
            seq += mss as u32;
        }
        let (_, f, segments) = j.finish();
        (f, segments)
    }

    #[test]
    fn mtu_1500_segments_join_until_the_sk_buff_has_seventeen_fragments() {
        let (f, segments) = join_run(1448);
        // The first segment's head, then 17 heads as fragments.
        assert_eq!(segments, 18);
        let (seq, payload, _) = check(&f);
        assert_eq!(seq, 0);
        assert_eq!(payload.len(), 18 * 1448);
        assert!(payload.iter().enumerate().all(|(i, &b)| b == pattern(i as u32)), "the stream, in order");
    }

    #[test]
    fn jumbo_segments_join_four_to_an_sk_buff() {
        // Each brings its head and its three page fragments: 3 + 4 + 4 + 4.
        assert_eq!(join_run(8948).1, 4);
    }

    #[test]
    fn a_gap_or_another_flow_does_not_join() {
        let mut j = start(data(1, 0, 1448, false), 1).unwrap();
        let gap = data(1, 1449, 1448, false);
        assert!(!j.join(&gap, &view(&gap), 1));
        let other = data(2, 1448, 1448, false);
        assert!(!j.join(&other, &view(&other), 1));
        let next = data(1, 1448, 1448, false);
        assert!(j.join(&next, &view(&next), 1));
    }

    #[test]
    fn acks_join_and_the_latest_ack_and_window_stand() {
        let ack = |n: u32, window: u16| frame(1, 7, &[], TcpControl::None, n, window);
        let mut j = start(ack(1000, 100), 1).unwrap();
        let later = ack(5000, 300);
        assert!(j.join(&later, &view(&later), 1));
        let (_, f, segments) = j.finish();
        assert_eq!(segments, 2);
        let v = view(&f);
        assert_eq!((v.ack, v.window, v.len()), (5000, 300, 0));
    }

    #[test]
    fn a_gro_aggregate_gro_had_to_chain_takes_no_other() {
        // 19 linear frames passed MAX_SKB_FRAGS in GRO: a frag_list.
        let chained = data(1, 0, 19 * 1448, false);
        assert!(start(chained, 19).is_err());
        let unchained = data(1, 0, 18 * 1448, false);
        assert!(start(unchained, 18).is_ok());
    }
}
