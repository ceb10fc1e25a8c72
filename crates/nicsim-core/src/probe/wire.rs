//! TCP analysis of frames as they go on the wire: per flow, the highest
//! sequence number sent so far; a data segment that does not advance it is a
//! retransmission (close to the rule as tshark's `tcp.analysis.retransmission`,
//! without its fast-retransmit and spurious sub-cases).

use std::collections::BTreeMap;

use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket};

/// A TCP flow as seen on one direction of a link.
type FlowKey = ([u8; 4], u16, [u8; 4], u16);

/// Per-direction TCP counters.
#[derive(Debug, Default)]
pub struct TcpMonitor {
    /// Highest sequence number end sent, per flow.
    highest: BTreeMap<FlowKey, u32>,
    /// Segments carrying payload.
    pub data_segments: u64,
    /// Data segments that re-sent already-sent sequence space.
    pub retransmissions: u64,
}

impl TcpMonitor {
    /// Look at one frame going on the wire.
    pub fn observe(&mut self, frame: &[u8]) {
        let Ok(eth) = EthernetFrame::new_checked(frame) else {
            return;
        };
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            return;
        }
        let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else {
            return;
        };
        if ip.next_header() != IpProtocol::Tcp || ip.more_frags() || ip.frag_offset() != 0 {
            return;
        }
        let Ok(tcp) = TcpPacket::new_checked(ip.payload()) else {
            return;
        };
        let len = tcp.payload().len() as u32;
        let seq = tcp.seq_number().0 as u32;
        let end = seq.wrapping_add(len).wrapping_add(u32::from(tcp.syn()) + u32::from(tcp.fin()));
        let key = (ip.src_addr().octets(), tcp.src_port(), ip.dst_addr().octets(), tcp.dst_port());
        if tcp.syn() {
            // A new connection (TCP_CRR reuses ports): its sequence space starts here.
            self.highest.insert(key, seq);
        }
        let highest = self.highest.entry(key).or_insert(seq);
        // A data segment starting before the highest sequence sent re-sends
        // sequence space (wholly or partly): a retransmission.
        if len > 0 {
            self.data_segments += 1;
            if (highest.wrapping_sub(seq) as i32) > 0 {
                self.retransmissions += 1;
            }
        }
        if (end.wrapping_sub(*highest) as i32) > 0 {
            *highest = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TcpFrame;
    use smoltcp::wire::TcpControl;

    /// A literal Ethernet/IPv4/TCP frame with `len` payload bytes at `seq`.
    fn segment(seq: i32, len: usize) -> Vec<u8> {
        flagged(seq, len, TcpControl::None)
    }

    /// The same with a control flag (SYN, FIN, ...).
    fn flagged(seq: i32, len: usize, control: TcpControl) -> Vec<u8> {
        let payload = vec![7u8; len];
        TcpFrame { seq: seq as u32, control, payload: &payload, ..TcpFrame::default() }.build()
    }

    #[test]
    fn counts_resent_sequence_space_only() {
        let mut m = TcpMonitor::default();
        m.observe(&segment(1000, 100));
        m.observe(&segment(1100, 100));
        assert_eq!(m.retransmissions, 0);
        m.observe(&segment(1000, 100)); // whole segment again
        m.observe(&segment(1150, 100)); // overlaps the end
        m.observe(&segment(1250, 0)); // pure ACK: not data
        assert_eq!((m.data_segments, m.retransmissions), (4, 2));
    }

    #[test]
    fn a_new_connection_on_a_reused_port_starts_afresh() {
        let mut m = TcpMonitor::default();
        m.observe(&segment(5000, 100));
        m.observe(&flagged(1000, 0, TcpControl::Syn)); // same ports, lower initial sequence
        m.observe(&segment(1001, 100));
        assert_eq!((m.data_segments, m.retransmissions), (2, 0));
        m.observe(&segment(1001, 100));
        assert_eq!(m.retransmissions, 1);
    }

    #[test]
    fn sequence_wrap_is_not_a_retransmission() {
        let mut m = TcpMonitor::default();
        m.observe(&segment(-100, 100)); // 2^32 - 100 .. 2^32
        m.observe(&segment(0, 100));
        assert_eq!(m.retransmissions, 0);
        m.observe(&segment(-100, 100));
        assert_eq!(m.retransmissions, 1);
    }
}
