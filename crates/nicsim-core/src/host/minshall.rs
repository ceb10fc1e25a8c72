//! Minshall's variant of Nagle's algorithm, as Linux has it
//! (`tcp.nagle = "minshall"`).
//!
//! Linux holds a segment shorter than the MSS only while an earlier short
//! segment is unacknowledged: `tcp_nagle_check` → `tcp_minshall_check`
//! (`after(tp->snd_sml, tp->snd_una)`), where `tcp_minshall_update` sets
//! `snd_sml` to the end of every short segment sent. A TSO segment counts
//! as short when its length is not a whole number of MSS (`skb->len <
//! tcp_skb_pcount(skb) * mss_now`). Both are in `net/ipv4/tcp_output.c`;
//! the rule is Greg Minshall's ("A Suggested Modification to Nagle's
//! Algorithm", draft-minshall-nagle-01, 1999).
//!
//! smoltcp has Nagle's original rule: a short segment waits while any
//! data is unacknowledged. A write whose tail is short then sends the tail
//! only once the full segments before it are acknowledged, and with a
//! delayed ACK that takes up to the timer. For one 64 KB request/response
//! between two `cai-xeon-6128` hosts without TSO that was a tenth of the
//! transactions taking 10 to 20 ms.
//!
//! nicsim keeps each socket's `snd_sml` and `snd_una` from the frames the
//! host sends and receives, and before each poll of the stack turns
//! smoltcp's rule on for the socket exactly while Linux's would hold.
//! Not modelled: two short segments sent in one poll (Linux would hold the
//! second).

use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket, TcpSeqNumber};

/// A socket under Minshall's rule: its handle, its local and remote ports
/// once connected, and its state.
pub type Tracked = (smoltcp::iface::SocketHandle, Option<(u16, u16)>, Minshall);

/// One connection's state: the end of the last short segment it sent
/// (`snd_sml`) and the highest acknowledgement it received (`snd_una`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Minshall {
    small_end: Option<TcpSeqNumber>,
    una: Option<TcpSeqNumber>,
}

impl Minshall {
    /// A short segment is in flight: Linux holds the next short one.
    pub fn hold(&self) -> bool {
        match (self.small_end, self.una) {
            (Some(end), Some(una)) => end > una,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// The connection sent `len` payload bytes from `seq`, in a segment of
    /// at most `mss` bytes a wire frame.
    pub fn sent(&mut self, seq: TcpSeqNumber, len: usize, mss: usize) {
        if len > 0 && mss > 0 && !len.is_multiple_of(mss) {
            self.small_end = Some(seq + len);
        }
    }

    /// The connection received acknowledgement number `ack`.
    pub fn acked(&mut self, ack: TcpSeqNumber) {
        if self.una.is_none_or(|una| ack > una) {
            self.una = Some(ack);
        }
    }
}

/// A TCP segment's ports, sequence number, acknowledgement number (if the
/// ACK flag is set) and payload length, or none for any other frame.
pub fn segment(frame: &[u8]) -> Option<(u16, u16, TcpSeqNumber, Option<TcpSeqNumber>, usize)> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let ip = Ipv4Packet::new_checked(eth.payload()).ok()?;
    if ip.next_header() != IpProtocol::Tcp || ip.frag_offset() != 0 {
        return None;
    }
    let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
    let ack = tcp.ack().then(|| tcp.ack_number());
    Some((tcp.src_port(), tcp.dst_port(), tcp.seq_number(), ack, tcp.payload().len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: usize = 1448;

    fn seq(n: i32) -> TcpSeqNumber {
        TcpSeqNumber(n)
    }

    #[test]
    fn full_segments_never_hold() {
        let mut m = Minshall::default();
        m.sent(seq(0), MSS, MSS);
        m.sent(seq(MSS as i32), 3 * MSS, MSS); // a TSO segment of three full segments
        assert!(!m.hold());
    }

    #[test]
    fn a_short_segment_holds_until_acknowledged() {
        let mut m = Minshall::default();
        m.sent(seq(0), 2 * MSS, MSS);
        m.sent(seq(2 * MSS as i32), 288, MSS); // a write's short tail: sent at once, then in flight
        assert!(m.hold());
        m.acked(seq(2 * MSS as i32)); // the full segments acknowledged, not the tail
        assert!(m.hold());
        m.acked(seq(2 * MSS as i32 + 288));
        assert!(!m.hold());
        // An older acknowledgement arriving late does not move snd_una back.
        m.acked(seq(MSS as i32));
        assert!(!m.hold());
    }

    #[test]
    fn a_tso_segment_with_a_short_tail_counts_as_short() {
        let mut m = Minshall::default();
        m.sent(seq(0), 64_000, MSS); // 44 full segments and 288 bytes
        assert!(m.hold());
        m.acked(seq(64_000));
        assert!(!m.hold());
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut m = Minshall::default();
        let start = seq(i32::MAX - 100);
        m.sent(start, 500, MSS);
        m.acked(start + 200);
        assert!(m.hold());
        m.acked(start + 500);
        assert!(!m.hold());
    }
}
