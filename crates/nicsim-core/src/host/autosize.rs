//! TSO autosizing and deferral: Linux sends a TCP flow's data to a TSO NIC
//! in super-segments of whole MSS multiples, up to 64 KiB, and waits a
//! little for more data rather than send a short one (`tcp_tso_autosize`,
//! `tcp_tso_should_defer`, `tcp_mss_split_point` in Linux 5.4's
//! `net/ipv4/tcp_output.c`). smoltcp sends whatever the window allows at
//! each poll, typically a couple of MSS as each ACK arrives. This stage
//! sits between smoltcp and the driver and does what Linux's TCP output
//! does, for each flow on its own (each socket has its own write queue):
//! it holds the flow's data segment, appends the segments that follow it
//! in sequence, and releases whole MSS multiples once 64 KiB are gathered,
//! when anything else of the flow must go out first, or `hold` after the
//! first byte was held. Whether a flow's short super-segment waits is
//! Linux 5.4's `tcp_tso_should_defer`, tested whenever the host's stack
//! runs (an ACK arriving, a write) and in this order: send it now when the
//! flow has nothing sent and unacknowledged ("no head": no ACK is coming
//! that could bring room or data); when the peer's window has room from
//! the held data's start for a whole super-segment, or for a third of the
//! window (`sysctl_tcp_tso_win_divisor` 3). Otherwise it waits, for an ACK
//! or more data, and at most `hold`, which stands in for Linux's wait for
//! the next ACK (Linux has no timer here). The host's retransmission queue
//! (`node/rtx.rs`) gives what is in flight and the peer's window. Until session
//! 43 the stage held one segment for the whole host, whatever was in
//! flight: another flow's frame sent it out short, and a request on an idle
//! connection waited the whole `hold`; until session 46 only the first
//! test was made, and data in flight always waited whatever the window.
//! smoltcp marks a segment for TSO only when it is
//! longer than an MSS; a shorter one that continues the held data (smoltcp
//! sends trains of them, 323, 85, 32 bytes, at the end of bursts) joins it, as Linux
//! keeps a sub-MSS tail in its write queue rather than send it alone.
//! Units: bytes, picoseconds.
//!
//! Not modelled: the pacing-rate term of the autosize goal (Linux sizes
//! super-segments to about 1 ms of the flow's rate, which is 64 KiB above
//! about 0.5 Gb/s); the congestion window in the window tests (smoltcp
//! keeps it to itself: the peer's window alone bounds the room, as it does
//! on a path that loses nothing once slow start has passed it); the test
//! that sends at once when the oldest unacknowledged sk_buff left less than
//! half a smoothed round trip ago (tried in session 46: it moves the
//! calibration, to be refitted with it; the fit's log); the test that sends
//! at once when the flow's last transmission is over 1 ms old.

use smoltcp::wire::{Ipv4Packet, TcpPacket, TcpSeqNumber};

use super::TxFrame;
use crate::engine::{Dur, Time};
use crate::probe::wire::{FlowKey, TcpView};

const ETH: usize = 14;
/// Largest IP datagram a TSO super-segment may be (`GSO_MAX_SIZE`).
const GSO_MAX: usize = 65_535;

/// A held data segment, built into a frame only when it goes out (so that
/// appending to it does not copy what it holds).
#[derive(Debug)]
struct Held {
    /// The headers of the newest segment appended (its ACK, window, timestamps).
    headers: Vec<u8>,
    flow: ([u8; 4], u16, [u8; 4], u16),
    seq: TcpSeqNumber,
    mss: u16,
    payload: Vec<u8>,
    /// When its first byte was held.
    since: Time,
}

impl Held {
    /// The super-segment as it goes to the driver.
    fn frame(self) -> TxFrame {
        TxFrame {
            bytes: rebuild(&self.headers, self.headers.len(), self.seq, &self.payload),
            tso_mss: Some(self.mss),
            core: 0,
        }
    }
}

/// Where a frame's TCP payload starts, its flow and its sequence numbers.
#[derive(Debug, Clone, Copy)]
struct Seg {
    headers: usize,
    flow: ([u8; 4], u16, [u8; 4], u16),
    seq: TcpSeqNumber,
    len: usize,
}

/// The segment of TCP segment `v` if it carries data and no SYN, FIN or RST.
fn data_of(v: &TcpView) -> Option<Seg> {
    if v.syn || v.fin || v.rst || v.payload == 0 {
        return None;
    }
    Some(Seg { headers: v.headers(), flow: v.flow, seq: TcpSeqNumber(v.seq as i32), len: v.payload })
}

/// The segment of `frame` if it carries data and no SYN, FIN or RST.
#[cfg(test)]
fn data_segment(frame: &[u8]) -> Option<Seg> {
    data_of(&TcpView::parse(frame)?)
}

/// `frame`'s headers with payload `payload` starting at sequence `seq`.
fn rebuild(frame: &[u8], headers: usize, seq: TcpSeqNumber, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(headers + payload.len());
    out.extend_from_slice(&frame[..headers]);
    out.extend_from_slice(payload);
    let mut ip = Ipv4Packet::new_unchecked(&mut out[ETH..]);
    ip.set_total_len((headers - ETH + payload.len()) as u16);
    let ip_len = usize::from(ip.header_len());
    TcpPacket::new_unchecked(&mut out[ETH + ip_len..]).set_seq_number(seq);
    out
}

/// What the deferral needs to know of a flow with data sent and not yet
/// acknowledged (from the host's retransmission queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    /// The peer's window: its right edge (sequence number) and its size,
    /// bytes, once an ACK has told it.
    pub window: Option<(u32, u32)>,
}

/// Whether `h` goes out now rather than wait (`tcp_tso_should_defer`'s
/// "send_now"), with its flow's state `f` and a super-segment of `goal`
/// bytes.
fn send_now(h: &Held, f: Option<InFlight>, goal: usize) -> bool {
    let Some(f) = f else { return true };
    f.window.is_some_and(|(edge, window)| {
        // The room from the held data's start to the window's edge.
        let room = (edge.wrapping_sub(h.seq.0 as u32) as i32).max(0) as u64;
        room >= goal as u64 || room >= u64::from(window / WIN_DIVISOR)
    })
}

/// `sysctl_tcp_tso_win_divisor`'s default: a third of the window free is
/// enough to send.
const WIN_DIVISOR: u32 = 3;

/// The largest super-segment of `mss` payloads with `headers` bytes of IP
/// and TCP headers: the whole MSS multiples within `GSO_MAX`.
fn goal_of(headers: usize, mss: u16) -> usize {
    (GSO_MAX - headers) / usize::from(mss) * usize::from(mss)
}

/// The deferral stage of one host: what each flow holds (Linux defers
/// each socket's write queue on its own).
#[derive(Debug)]
pub struct Autosize {
    hold: Dur,
    held: Vec<Held>,
}

impl Autosize {
    /// A stage that holds a short super-segment at most `hold`.
    pub fn new(hold: Dur) -> Autosize {
        Autosize { hold, held: Vec::new() }
    }

    /// When the first held segment must go out, if any is held.
    pub fn deadline(&self) -> Option<Time> {
        self.held.iter().map(|h| h.since + self.hold).min()
    }

    /// The frames the stack emitted at `now`, in order: returns what goes to
    /// the driver now, each flow's in order. `in_flight(flow)`: the flow's
    /// data sent and not yet acknowledged (before these frames), if any;
    /// what each flow holds afterwards goes now if [`send_now`] says so.
    pub fn offer(
        &mut self,
        frames: Vec<TxFrame>,
        now: Time,
        in_flight: impl Fn(&FlowKey) -> Option<InFlight>,
    ) -> Vec<TxFrame> {
        let mut out = Vec::with_capacity(frames.len());
        // Flows that sent a whole super-segment in this call.
        let mut full: Vec<FlowKey> = Vec::new();
        let hold = self.hold;
        self.release(&mut out, |h| h.since + hold <= now);
        for f in frames {
            let view = TcpView::parse(&f.bytes);
            let seg = view.as_ref().and_then(data_of);
            let at = view.and_then(|v| self.held.iter().position(|h| h.flow == v.flow));
            // A short segment smoltcp did not mark for TSO joins the held
            // data it continues (see the module's documentation).
            let joins = |h: &Held, s: &Seg| h.seq + h.payload.len() == s.seq && s.len <= usize::from(h.mss);
            let mss = f
                .tso_mss
                .or_else(|| at.map(|i| &self.held[i]).filter(|h| seg.is_some_and(|s| joins(h, &s))).map(|h| h.mss));
            let (Some(mss), Some(seg)) = (mss, seg) else {
                // Anything else goes out after what its flow held before it;
                // other flows keep theirs.
                out.extend(at.map(|i| self.held.remove(i).frame()));
                out.push(f);
                continue;
            };
            let follows = at.is_some_and(|i| {
                let h = &self.held[i];
                h.seq + h.payload.len() == seg.seq && h.mss == mss
            });
            // The data to send from `start`, and since when the first of it waits.
            let data = &f.bytes[seg.headers..seg.headers + seg.len];
            let (start, mut payload, since) = match (follows, at.map(|i| self.held.remove(i))) {
                (true, Some(mut h)) => {
                    h.payload.extend_from_slice(data);
                    (h.seq, h.payload, h.since)
                }
                (_, old) => {
                    out.extend(old.map(Held::frame));
                    (seg.seq, data.to_vec(), now)
                }
            };
            // Whole 64 KiB super-segments go out now (the newest segment's
            // headers: its ACK, window and timestamps); the rest is held.
            let goal = goal_of(seg.headers - ETH, mss);
            let mut seq = start;
            let mut at = 0;
            while payload.len() - at >= goal {
                let bytes = rebuild(&f.bytes, seg.headers, seq, &payload[at..at + goal]);
                out.push(TxFrame { bytes, tso_mss: Some(mss), core: 0 });
                seq += goal;
                at += goal;
            }
            if at > 0 && !full.contains(&seg.flow) {
                full.push(seg.flow);
            }
            if at < payload.len() {
                payload.drain(..at);
                let headers = f.bytes[..seg.headers].to_vec();
                self.held.push(Held { headers, flow: seg.flow, seq, mss, payload, since });
            }
        }
        // What each flow holds now goes if Linux would send it (see
        // `send_now`); a flow that had nothing in flight sends what it
        // gathered in this call at once, as one super-segment (Linux's write
        // of it is one sk_buff, pushed at the end of the call: `tcp_push`,
        // and `tcp_tso_should_defer` finds no head), even where smoltcp
        // emitted it in pieces (its send buffer is a ring: data that wraps
        // goes out as two segments). Behind a whole super-segment sent in
        // this call the rest waits: Linux corks it until the first has left
        // (`tcp_should_autocork`: the retransmission queue is not empty and
        // the sent sk_buff's clone is still held by the qdisc or the driver).
        self.release(&mut out, |h| {
            let goal = goal_of(h.headers.len() - ETH, h.mss);
            !full.contains(&h.flow) && send_now(h, in_flight(&h.flow), goal)
        });
        out
    }

    /// Sends to `out` every held segment `due` picks, in the order held.
    fn release(&mut self, out: &mut Vec<TxFrame>, due: impl Fn(&Held) -> bool) {
        if self.held.iter().any(&due) {
            let (go, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held).into_iter().partition(|h| due(h));
            self.held = keep;
            out.extend(go.into_iter().map(Held::frame));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TcpFrame;
    use smoltcp::wire::TcpControl;

    const MSS: u16 = 1448;

    /// A flow with data in flight whose round trip and window are not
    /// known yet: it defers.
    fn busy(_: &FlowKey) -> Option<InFlight> {
        Some(InFlight { window: None })
    }

    /// A flow with nothing in flight.
    fn idle(_: &FlowKey) -> Option<InFlight> {
        None
    }

    fn seg(seq: u32, len: usize, port: u16) -> TxFrame {
        let payload: Vec<u8> = (0..len).map(|i| (seq as usize + i) as u8).collect();
        let bytes = TcpFrame { seq, ack: Some(1), src_port: port, payload: &payload, ..Default::default() }.build();
        TxFrame { bytes, tso_mss: Some(MSS), core: 0 }
    }

    /// (sequence number, payload) of a frame.
    fn data(f: &TxFrame) -> (u32, Vec<u8>) {
        let s = data_segment(&f.bytes).expect("a data segment");
        (s.seq.0 as u32, f.bytes[s.headers..s.headers + s.len].to_vec())
    }

    fn t(us: u64) -> Time {
        Time(us * crate::engine::time::PS_PER_US)
    }

    #[test]
    fn segments_in_sequence_gather_into_whole_64k_super_segments() {
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        let mut out = Vec::new();
        let mut seq = 0u32;
        // 60 segments of 2 MSS, 100 ns apart: 173,760 bytes in 6 us.
        for i in 0..60 {
            out.extend(a.offer(vec![seg(seq, 2 * usize::from(MSS), 1)], Time(i * 100_000), busy));
            seq += 2 * u32::from(MSS);
        }
        let goal = (65_535 - 40) / 1448 * 1448; // 45 MSS under 20 bytes of IP and 20 of TCP header
        assert_eq!(out.len(), 173_760 / goal);
        let mut next = 0u32;
        for f in &out {
            let (s, p) = data(f);
            assert_eq!((s, p.len()), (next, goal));
            assert!(p.iter().enumerate().all(|(i, &b)| b == (s as usize + i) as u8), "the bytes are the stack's");
            next += goal as u32;
        }
        // The rest waits, and goes out at the deadline.
        // The second super-segment ended exactly with segment 44; what is
        // held started waiting with segment 45.
        assert_eq!(a.deadline(), Some(Time(45 * 100_000) + Dur(20 * crate::engine::time::PS_PER_US)));
        let rest = a.offer(Vec::new(), a.deadline().unwrap(), busy);
        assert_eq!(rest.len(), 1);
        assert_eq!(data(&rest[0]), (next, (next..seq).map(|i| i as u8).collect()));
        assert!(a.deadline().is_none());
    }

    #[test]
    fn a_short_unmarked_segment_that_continues_the_held_data_joins_it() {
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        assert!(a.offer(vec![seg(0, 3 * usize::from(MSS) + 323, 1)], t(0), busy).is_empty());
        // smoltcp marks only segments longer than an MSS for TSO.
        let short = |seq: u32, len: usize| TxFrame { tso_mss: None, ..seg(seq, len, 1) };
        let tail = 3 * u32::from(MSS) + 323;
        assert!(a.offer(vec![short(tail, 85), short(tail + 85, 32)], t(1), busy).is_empty());
        // All of it goes out as one super-segment at the first deadline.
        let out = a.offer(Vec::new(), a.deadline().unwrap(), busy);
        assert_eq!(out.len(), 1);
        assert_eq!(data(&out[0]), (0, (0..tail + 117).map(|i| i as u8).collect()));
        assert_eq!(out[0].tso_mss, Some(MSS));
        // One that does not continue it (or with nothing held) goes out as it is.
        assert!(a.offer(vec![seg(10_000, 2000, 1)], t(40), busy).is_empty());
        let out = a.offer(vec![short(20_000, 85)], t(41), busy);
        assert_eq!(out.iter().map(|f| data(f).0).collect::<Vec<_>>(), vec![10_000, 20_000]);
        assert_eq!(a.offer(vec![short(30_000, 85)], t(42), busy).len(), 1);
    }

    #[test]
    fn anything_else_goes_out_after_what_its_flow_held_in_order() {
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        assert!(a.offer(vec![seg(0, 1000, 1)], t(0), busy).is_empty());
        // Another flow holds its own; the first keeps what it held.
        assert!(a.offer(vec![seg(5000, 500, 2)], t(1), busy).is_empty());
        // A gap in sequence: that flow's held data goes out, the new data is held.
        let out = a.offer(vec![seg(9000, 100, 2)], t(2), busy);
        assert_eq!(out.iter().map(|f| data(f).0).collect::<Vec<_>>(), vec![5000]);
        // A FIN (not a data segment to gather) follows what its flow held.
        let fin =
            TcpFrame { seq: 9100, ack: Some(1), src_port: 2, control: TcpControl::Fin, ..Default::default() }.build();
        let out = a.offer(vec![TxFrame { bytes: fin.clone(), tso_mss: None, core: 0 }], t(3), busy);
        assert_eq!(out.len(), 2);
        assert_eq!(data(&out[0]).0, 9000);
        assert_eq!(out[1].bytes, fin);
        // The first flow's data waits until its own deadline.
        assert_eq!(a.deadline(), Some(t(20)));
        let out = a.offer(Vec::new(), t(20), busy);
        assert_eq!(out.iter().map(data).collect::<Vec<_>>(), vec![(0, (0..1000).map(|i| i as u8).collect())]);
        assert!(a.deadline().is_none());
    }

    #[test]
    fn a_flow_with_nothing_in_flight_defers_nothing() {
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        // A response of 3 MSS and 100 bytes on an idle connection goes at once, whole.
        let len = 3 * usize::from(MSS) + 100;
        let out = a.offer(vec![seg(0, len, 1)], t(0), idle);
        assert_eq!(out.iter().map(data).collect::<Vec<_>>(), vec![(0, (0..len).map(|i| i as u8).collect())]);
        assert!(a.deadline().is_none());
        // Emitted in two pieces (smoltcp's ring wrapped): one super-segment, at once.
        let out = a.offer(vec![seg(70_000, 2000, 2), seg(72_000, 2000, 2)], t(1), idle);
        assert_eq!(
            out.iter().map(data).collect::<Vec<_>>(),
            vec![(70_000, (70_000..74_000).map(|i| i as u8).collect())]
        );
        assert!(a.deadline().is_none());
        // Behind a whole super-segment the rest waits, corked, as with data in flight.
        let goal = (65_535 - 40) / 1448 * 1448;
        let out = a.offer(vec![seg(0, 40_000, 3), seg(40_000, goal + 500 - 40_000, 3)], t(2), idle);
        assert_eq!(out.iter().map(|f| data(f).1.len()).collect::<Vec<_>>(), vec![goal]);
        assert_eq!(a.deadline(), Some(t(22)));
        // A flow with data in flight holds its short segment for more.
        assert!(a.offer(vec![seg(0, 2000, 4)], t(3), busy).is_empty());
        // Once nothing of it is in flight (its data acknowledged), what it holds goes.
        let out = a.offer(Vec::new(), t(4), |f| if f.1 == 4 { busy(f) } else { None });
        assert_eq!(out.iter().map(|f| data(f).1.len()).collect::<Vec<_>>(), vec![500]);
        assert_eq!(a.deadline(), Some(t(23)));
    }

    #[test]
    fn interleaved_flows_each_gather_whole_super_segments() {
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        let mut out = Vec::new();
        // Two flows take turns, 2 MSS each time, 100 ns apart.
        for i in 0..46u32 {
            let seq = i * 2 * u32::from(MSS);
            out.extend(a.offer(
                vec![seg(seq, 2 * usize::from(MSS), 1), seg(seq, 2 * usize::from(MSS), 2)],
                Time(u64::from(i) * 100_000),
                busy,
            ));
        }
        // Each flow sent 92 MSS: two whole super-segments of 45 MSS each, none cut short by the other.
        let goal = (65_535 - 40) / 1448 * 1448;
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|f| data(f).1.len() == goal));
        for port in [1, 2] {
            let seqs: Vec<u32> = out
                .iter()
                .filter(|f| TcpView::parse(&f.bytes).is_some_and(|v| v.flow.1 == port))
                .map(|f| data(f).0)
                .collect();
            assert_eq!(seqs, vec![0, goal as u32], "flow {port}");
        }
    }

    #[test]
    fn room_in_the_window_for_a_third_of_it_or_a_whole_super_segment_sends_at_once() {
        let goal = goal_of(40, MSS) as u32;
        // A window of 300 000 bytes: a third is 100 000, more than a whole
        // super-segment (65 160 bytes); one of 90 000 bytes: a third is 30 000.
        let state = |edge: u32, window: u32| move |_: &FlowKey| Some(InFlight { window: Some((edge, window)) });
        let held = |a: &mut Autosize, seq: u32, f: &dyn Fn(&FlowKey) -> Option<InFlight>| {
            a.offer(vec![seg(seq, 2000, 1)], t(0), f).len()
        };
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        // Room of a whole super-segment from the held data's start: it goes.
        assert_eq!(held(&mut a, 0, &state(goal, 300_000)), 1);
        // Room just short of it, and short of a third: it waits.
        assert_eq!(held(&mut a, 10_000, &state(10_000 + goal - 1, 300_000)), 0);
        assert!(a.deadline().is_some());
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        // A third of a 90 000-byte window is room enough; a byte less is not.
        assert_eq!(held(&mut a, 0, &state(30_000, 90_000)), 1);
        assert_eq!(held(&mut a, 50_000, &state(50_000 + 29_999, 90_000)), 0);
        // The window's edge behind the held data (a probe past it): no room.
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        assert_eq!(held(&mut a, 100_000, &state(99_000, 90_000)), 0);
    }
}
