//! Ethernet/IPv4/TCP test frames, built with smoltcp's emitters. Not
//! modelled: IP options, VLAN tags, IPv6.
//!
//! One builder, [`TcpFrame`], for every test that needs a TCP segment on
//! the wire: fill the fields that matter to the test, take the rest from
//! [`TcpFrame::default`], call [`TcpFrame::build`]. The IPv4 header has no
//! options, DF set, TTL 64; both checksums are valid unless
//! `tcp_checksum` is false (then the TCP checksum is left zero, as smoltcp
//! leaves it for a NIC that offloads it). [`ipv4_sized`] makes a frame that
//! only has a size, for tests of sizes on the wire. Units: bytes, TCP
//! sequence space.
//!
//! This file depends on std and smoltcp only: nicsim-core's unit tests
//! compile it as `crate::testing`, the test kit as `nicsim_testkit::frame`.

use smoltcp::phy::{Checksum, ChecksumCapabilities};
use smoltcp::wire::{
    EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet,
    Ipv4Repr, TcpControl, TcpPacket, TcpRepr, TcpSeqNumber, TcpTimestampRepr,
};

/// Bytes of an Ethernet header.
pub const ETH_HEADER: usize = 14;

/// The fields of one TCP segment in an Ethernet frame.
#[derive(Debug, Clone)]
pub struct TcpFrame<'a> {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub src: Ipv4Address,
    pub dst: Ipv4Address,
    /// The IPv4 identification field.
    pub ident: u16,
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    /// The ACK number; `None` leaves the ACK flag clear.
    pub ack: Option<u32>,
    pub window: u16,
    /// The window scale option (RFC 7323), on a SYN.
    pub window_scale: Option<u8>,
    pub control: TcpControl,
    pub timestamp: Option<TcpTimestampRepr>,
    /// Fill the TCP checksum (true) or leave it zero (false).
    pub tcp_checksum: bool,
    pub payload: &'a [u8],
}

impl Default for TcpFrame<'_> {
    /// 02:00:00:00:00:01 10.0.0.1:49152 to 02:00:00:00:00:02 10.0.0.2:5001,
    /// sequence 0, no ACK, window 1000, no flags or options, no payload.
    fn default() -> Self {
        TcpFrame {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src: Ipv4Address::new(10, 0, 0, 1),
            dst: Ipv4Address::new(10, 0, 0, 2),
            ident: 0,
            src_port: 49152,
            dst_port: 5001,
            seq: 0,
            ack: None,
            window: 1000,
            window_scale: None,
            control: TcpControl::None,
            timestamp: None,
            tcp_checksum: true,
            payload: &[],
        }
    }
}

impl TcpFrame<'_> {
    /// The frame's bytes.
    pub fn build(&self) -> Vec<u8> {
        let tcp = TcpRepr {
            src_port: self.src_port,
            dst_port: self.dst_port,
            control: self.control,
            seq_number: TcpSeqNumber(self.seq as i32),
            ack_number: self.ack.map(|a| TcpSeqNumber(a as i32)),
            window_len: self.window,
            window_scale: self.window_scale,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: self.timestamp,
            payload: self.payload,
        };
        let ip = Ipv4Repr {
            src_addr: self.src,
            dst_addr: self.dst,
            next_header: IpProtocol::Tcp,
            payload_len: tcp.buffer_len(),
            hop_limit: 64,
        };
        let eth = EthernetRepr {
            src_addr: EthernetAddress(self.src_mac),
            dst_addr: EthernetAddress(self.dst_mac),
            ethertype: EthernetProtocol::Ipv4,
        };
        let mut buf = vec![0u8; ETH_HEADER + ip.buffer_len() + tcp.buffer_len()];
        let mut f = EthernetFrame::new_unchecked(&mut buf);
        eth.emit(&mut f);
        let mut p = Ipv4Packet::new_unchecked(f.payload_mut());
        let caps = ChecksumCapabilities::default();
        ip.emit(&mut p, &caps);
        p.set_ident(self.ident);
        p.fill_checksum();
        let mut tcp_caps = ChecksumCapabilities::default();
        if !self.tcp_checksum {
            tcp_caps.tcp = Checksum::Rx;
        }
        let mut t = TcpPacket::new_unchecked(p.payload_mut());
        tcp.emit(&mut t, &IpAddress::Ipv4(self.src), &IpAddress::Ipv4(self.dst), &tcp_caps);
        buf
    }
}

/// An Ethernet frame carrying an IPv4 packet of `ip_len` bytes: a bare
/// IPv4 header (version, header length and total length set; protocol and
/// checksum zero) and zeros to the total length. For tests that care about
/// sizes on the wire only (pcap replay).
pub fn ipv4_sized(ip_len: u16) -> Vec<u8> {
    let mut f = vec![0u8; ETH_HEADER + usize::from(ip_len)];
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_frame_has_the_documented_header_bytes() {
        let f = TcpFrame { seq: 7, ack: Some(9), payload: b"abc", ..TcpFrame::default() }.build();
        assert_eq!(f.len(), 14 + 20 + 20 + 3);
        assert_eq!(&f[..14], &[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
        let ip = Ipv4Packet::new_checked(&f[14..]).unwrap();
        assert!(ip.verify_checksum());
        assert!(ip.dont_frag());
        assert_eq!(usize::from(ip.total_len()), f.len() - 14);
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert_eq!((tcp.src_port(), tcp.dst_port()), (49152, 5001));
        assert_eq!((tcp.seq_number(), tcp.ack_number(), tcp.ack()), (TcpSeqNumber(7), TcpSeqNumber(9), true));
        assert!(tcp.verify_checksum(&IpAddress::Ipv4(ip.src_addr()), &IpAddress::Ipv4(ip.dst_addr())));
        assert_eq!(tcp.payload(), b"abc");
    }

    #[test]
    fn an_offloaded_checksum_is_left_zero_and_the_ident_is_set() {
        let f = TcpFrame { ident: 0x1234, tcp_checksum: false, ..TcpFrame::default() }.build();
        let ip = Ipv4Packet::new_checked(&f[14..]).unwrap();
        assert_eq!(ip.ident(), 0x1234);
        assert!(ip.verify_checksum());
        assert_eq!(TcpPacket::new_checked(ip.payload()).unwrap().checksum(), 0);
    }
}
