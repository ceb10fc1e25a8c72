//! TCP analysis of frames as they go on the wire: per flow, the highest
//! sequence number sent so far; a data segment that does not advance it is a
//! retransmission (close to the rule as tshark's `tcp.analysis.retransmission`,
//! without its fast-retransmit and spurious sub-cases).

use std::collections::BTreeMap;

use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket};

/// A TCP flow as seen on one direction of a link.
pub type FlowKey = ([u8; 4], u16, [u8; 4], u16);

/// Bytes of an Ethernet header.
const ETH: usize = 14;

/// What a TCP segment in an unfragmented IPv4 Ethernet frame is: its header
/// lengths, its flow, its sequence number, its payload length (up to the IP
/// total length) and its control flags. One parse for every component that
/// needs these (the wire monitor, TSO, TSO autosizing, the fuzz kit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpView {
    /// IPv4 header length, bytes.
    pub ip_header: usize,
    /// TCP header length (options included), bytes.
    pub tcp_header: usize,
    /// Source and destination address and port.
    pub flow: FlowKey,
    /// Sequence number.
    pub seq: u32,
    /// TCP payload bytes.
    pub payload: usize,
    /// Acknowledgment number, if the ACK flag is set.
    pub ack: Option<u32>,
    /// The window field as sent (before any window scaling).
    pub window: u16,
    /// SYN, FIN, RST.
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
}

impl TcpView {
    /// The view of `frame`, if it is an unfragmented TCP/IPv4 Ethernet frame
    /// whose headers are whole.
    pub fn parse(frame: &[u8]) -> Option<TcpView> {
        let eth = EthernetFrame::new_checked(frame).ok()?;
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            return None;
        }
        let ip = Ipv4Packet::new_checked(eth.payload()).ok()?;
        if ip.next_header() != IpProtocol::Tcp || ip.more_frags() || ip.frag_offset() != 0 {
            return None;
        }
        let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
        Some(TcpView {
            ip_header: usize::from(ip.header_len()),
            tcp_header: usize::from(tcp.header_len()),
            flow: (ip.src_addr().octets(), tcp.src_port(), ip.dst_addr().octets(), tcp.dst_port()),
            seq: tcp.seq_number().0 as u32,
            payload: tcp.payload().len(),
            ack: tcp.ack().then(|| tcp.ack_number().0 as u32),
            window: tcp.window_len(),
            syn: tcp.syn(),
            fin: tcp.fin(),
            rst: tcp.rst(),
        })
    }

    /// Bytes of Ethernet, IP and TCP headers: where the payload starts.
    pub fn headers(&self) -> usize {
        ETH + self.ip_header + self.tcp_header
    }
}

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
        let Some(v) = TcpView::parse(frame) else { return };
        let (len, seq, key) = (v.payload as u32, v.seq, v.flow);
        let end = seq.wrapping_add(len).wrapping_add(u32::from(v.syn) + u32::from(v.fin));
        if v.syn {
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

/// Swap the frame's source and destination: MACs, and for IPv4 the
/// addresses and (in a UDP datagram's first fragment) the ports.
pub fn swap_headers(frame: &mut [u8]) {
    use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, UdpPacket};
    let Ok(mut eth) = EthernetFrame::new_checked(&mut *frame) else { return };
    let (src, dst) = (eth.src_addr(), eth.dst_addr());
    eth.set_src_addr(dst);
    eth.set_dst_addr(src);
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return;
    }
    let Ok(mut ip) = Ipv4Packet::new_checked(eth.payload_mut()) else { return };
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    ip.set_src_addr(dst);
    ip.set_dst_addr(src);
    // A first fragment holds only part of the datagram its UDP length
    // counts, so the header is read unchecked once it is there.
    if ip.next_header() == IpProtocol::Udp && ip.frag_offset() == 0 && ip.payload_mut().len() >= 8 {
        let mut udp = UdpPacket::new_unchecked(ip.payload_mut());
        let (s, d) = (udp.src_port(), udp.dst_port());
        udp.set_src_port(d);
        udp.set_dst_port(s);
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

    #[test]
    fn swapping_keeps_checksums_valid() {
        use smoltcp::phy::ChecksumCapabilities;
        use smoltcp::wire::*;
        let (a, b) = (Ipv4Address::new(10, 0, 0, 1), Ipv4Address::new(10, 0, 0, 2));
        let udp = UdpRepr { src_port: 49152, dst_port: 5001 };
        let ip = Ipv4Repr { src_addr: a, dst_addr: b, next_header: IpProtocol::Udp, payload_len: 8 + 5, hop_limit: 64 };
        let mut f = vec![0u8; 14 + 20 + 8 + 5];
        let mut eth = EthernetFrame::new_unchecked(&mut f[..]);
        eth.set_src_addr(EthernetAddress([2, 0, 0, 0, 0, 1]));
        eth.set_dst_addr(EthernetAddress([2, 0, 0, 0, 0, 2]));
        eth.set_ethertype(EthernetProtocol::Ipv4);
        let caps = ChecksumCapabilities::default();
        let mut p = Ipv4Packet::new_unchecked(eth.payload_mut());
        ip.emit(&mut p, &caps);
        let mut u = UdpPacket::new_unchecked(p.payload_mut());
        udp.emit(&mut u, &a.into(), &b.into(), 5, |buf| buf.copy_from_slice(b"hello"), &caps);
        swap_headers(&mut f);
        let eth = EthernetFrame::new_checked(&f[..]).unwrap();
        assert_eq!(eth.dst_addr(), EthernetAddress([2, 0, 0, 0, 0, 1]));
        let p = Ipv4Packet::new_checked(eth.payload()).unwrap();
        assert!(p.verify_checksum());
        assert_eq!((p.src_addr(), p.dst_addr()), (b, a));
        let u = UdpPacket::new_checked(p.payload()).unwrap();
        assert!(u.verify_checksum(&b.into(), &a.into()));
        assert_eq!((u.src_port(), u.dst_port()), (5001, 49152));
    }
}
