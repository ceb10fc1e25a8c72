//! TSO autosizing and deferral: Linux sends a TCP flow's data to a TSO NIC
//! in super-segments of whole MSS multiples, up to 64 KiB, and waits a
//! little for more data rather than send a short one (`tcp_tso_autosize`,
//! `tcp_tso_should_defer`, `tcp_mss_split_point` in Linux 5.4's
//! `net/ipv4/tcp_output.c`). smoltcp sends whatever the window allows at
//! each poll, typically a couple of MSS as each ACK arrives. This stage
//! sits between smoltcp and the driver and does what Linux's TCP output
//! does: it holds a flow's data segment, appends the segments that follow
//! it in sequence, and releases whole MSS multiples once 64 KiB are
//! gathered, when anything else must go out first, or `hold` after the
//! first byte was held. smoltcp marks a segment for TSO only when it is
//! longer than an MSS; a shorter one that continues the held data (smoltcp
//! sends trains of them, 323, 85, 32 bytes, at the end of bursts) joins it, as Linux
//! keeps a sub-MSS tail in its write queue rather than send it alone.
//! Units: bytes, picoseconds.
//!
//! Not modelled: the pacing-rate term of the autosize goal (Linux sizes
//! super-segments to about 1 ms of the flow's rate, which is 64 KiB above
//! about 0.5 Gb/s), the congestion- and receive-window tests of the
//! deferral (smoltcp has already applied the windows).

use smoltcp::wire::{Ipv4Packet, TcpPacket, TcpSeqNumber};

use super::TxFrame;
use crate::engine::{Dur, Time};
use crate::probe::wire::TcpView;

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

/// The segment of `frame` if it carries data and no SYN, FIN or RST.
fn data_segment(frame: &[u8]) -> Option<Seg> {
    let v = TcpView::parse(frame)?;
    if v.syn || v.fin || v.rst || v.payload == 0 {
        return None;
    }
    Some(Seg { headers: v.headers(), flow: v.flow, seq: TcpSeqNumber(v.seq as i32), len: v.payload })
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

/// The deferral stage of one host.
#[derive(Debug)]
pub struct Autosize {
    hold: Dur,
    held: Option<Held>,
}

impl Autosize {
    /// A stage that holds a short super-segment at most `hold`.
    pub fn new(hold: Dur) -> Autosize {
        Autosize { hold, held: None }
    }

    /// When the held segment must go out, if one is held.
    pub fn deadline(&self) -> Option<Time> {
        self.held.as_ref().map(|h| h.since + self.hold)
    }

    /// The frames the stack emitted at `now`, in order: returns what goes to
    /// the driver now, in order.
    pub fn offer(&mut self, frames: Vec<TxFrame>, now: Time) -> Vec<TxFrame> {
        let mut out = Vec::with_capacity(frames.len());
        if self.deadline().is_some_and(|d| d <= now) {
            out.extend(self.held.take().map(Held::frame));
        }
        for f in frames {
            let seg = data_segment(&f.bytes);
            // A short segment smoltcp did not mark for TSO joins the held
            // data it continues (see the module's documentation).
            let joins =
                |h: &Held, s: &Seg| h.flow == s.flow && h.seq + h.payload.len() == s.seq && s.len <= usize::from(h.mss);
            let mss =
                f.tso_mss.or_else(|| self.held.as_ref().filter(|h| seg.is_some_and(|s| joins(h, &s))).map(|h| h.mss));
            let (Some(mss), Some(seg)) = (mss, seg) else {
                // Anything else goes out after what was held before it.
                out.extend(self.held.take().map(Held::frame));
                out.push(f);
                continue;
            };
            let follows = self
                .held
                .as_ref()
                .is_some_and(|h| h.flow == seg.flow && h.seq + h.payload.len() == seg.seq && h.mss == mss);
            // The data to send from `start`, and since when the first of it waits.
            let data = &f.bytes[seg.headers..seg.headers + seg.len];
            let (start, mut payload, since) = match (follows, self.held.take()) {
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
            let goal = (GSO_MAX - (seg.headers - ETH)) / usize::from(mss) * usize::from(mss);
            let mut seq = start;
            let mut at = 0;
            while payload.len() - at >= goal {
                let bytes = rebuild(&f.bytes, seg.headers, seq, &payload[at..at + goal]);
                out.push(TxFrame { bytes, tso_mss: Some(mss), core: 0 });
                seq += goal;
                at += goal;
            }
            if at < payload.len() {
                payload.drain(..at);
                let headers = f.bytes[..seg.headers].to_vec();
                self.held = Some(Held { headers, flow: seg.flow, seq, mss, payload, since });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TcpFrame;
    use smoltcp::wire::TcpControl;

    const MSS: u16 = 1448;

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
            out.extend(a.offer(vec![seg(seq, 2 * usize::from(MSS), 1)], Time(i * 100_000)));
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
        let rest = a.offer(Vec::new(), a.deadline().unwrap());
        assert_eq!(rest.len(), 1);
        assert_eq!(data(&rest[0]), (next, (next..seq).map(|i| i as u8).collect()));
        assert!(a.deadline().is_none());
    }

    #[test]
    fn a_short_unmarked_segment_that_continues_the_held_data_joins_it() {
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        assert!(a.offer(vec![seg(0, 3 * usize::from(MSS) + 323, 1)], t(0)).is_empty());
        // smoltcp marks only segments longer than an MSS for TSO.
        let short = |seq: u32, len: usize| TxFrame { tso_mss: None, ..seg(seq, len, 1) };
        let tail = 3 * u32::from(MSS) + 323;
        assert!(a.offer(vec![short(tail, 85), short(tail + 85, 32)], t(1)).is_empty());
        // All of it goes out as one super-segment at the first deadline.
        let out = a.offer(Vec::new(), a.deadline().unwrap());
        assert_eq!(out.len(), 1);
        assert_eq!(data(&out[0]), (0, (0..tail + 117).map(|i| i as u8).collect()));
        assert_eq!(out[0].tso_mss, Some(MSS));
        // One that does not continue it (or with nothing held) goes out as it is.
        assert!(a.offer(vec![seg(10_000, 2000, 1)], t(40)).is_empty());
        let out = a.offer(vec![short(20_000, 85)], t(41));
        assert_eq!(out.iter().map(|f| data(f).0).collect::<Vec<_>>(), vec![10_000, 20_000]);
        assert_eq!(a.offer(vec![short(30_000, 85)], t(42)).len(), 1);
    }

    #[test]
    fn anything_else_goes_out_after_what_was_held_in_order() {
        let mut a = Autosize::new(Dur(20 * crate::engine::time::PS_PER_US));
        assert!(a.offer(vec![seg(0, 1000, 1)], t(0)).is_empty());
        // Another flow: the held one goes out first, the new one is held.
        let out = a.offer(vec![seg(5000, 500, 2)], t(1));
        assert_eq!(out.iter().map(|f| data(f).0).collect::<Vec<_>>(), vec![0]);
        // A gap in sequence: the same.
        let out = a.offer(vec![seg(9000, 100, 2)], t(2));
        assert_eq!(out.iter().map(|f| data(f).0).collect::<Vec<_>>(), vec![5000]);
        // A FIN (not a data segment to gather) follows what was held.
        let fin =
            TcpFrame { seq: 9100, ack: Some(1), src_port: 2, control: TcpControl::Fin, ..Default::default() }.build();
        let out = a.offer(vec![TxFrame { bytes: fin.clone(), tso_mss: None, core: 0 }], t(3));
        assert_eq!(out.len(), 2);
        assert_eq!(data(&out[0]).0, 9000);
        assert_eq!(out[1].bytes, fin);
        assert!(a.deadline().is_none());
    }
}
