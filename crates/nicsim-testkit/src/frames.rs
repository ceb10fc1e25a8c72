//! The one builder of Ethernet/IPv4/TCP test frames: every field a test
//! varies, defaults for the rest, real checksums (or the TCP checksum left
//! to a NIC, as a TSO stack leaves it).

use smoltcp::phy::{Checksum, ChecksumCapabilities};
use smoltcp::wire::{
    EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet,
    Ipv4Repr, TcpControl, TcpPacket, TcpRepr, TcpSeqNumber, TcpTimestampRepr,
};

/// Ethernet header bytes.
pub const ETH: usize = 14;

/// A TCP segment in an IPv4 packet in an Ethernet frame.
#[derive(Debug, Clone)]
pub struct TcpFrame<'a> {
    /// Source MAC address (default 02:00:00:00:00:01).
    pub src_mac: [u8; 6],
    /// Destination MAC address (default 02:00:00:00:00:02).
    pub dst_mac: [u8; 6],
    /// Source address (default 10.0.0.1).
    pub src: [u8; 4],
    /// Destination address (default 10.0.0.2).
    pub dst: [u8; 4],
    /// Source port (default 49152).
    pub src_port: u16,
    /// Destination port (default 5001).
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number (default 1000).
    pub ack: Option<u32>,
    /// Window (default 8192).
    pub window: u16,
    /// SYN, FIN, RST, PSH or none.
    pub control: TcpControl,
    /// Payload.
    pub payload: &'a [u8],
    /// IP identification (default 0).
    pub ident: u16,
    /// TCP timestamp option.
    pub timestamp: Option<TcpTimestampRepr>,
    /// Leave the TCP checksum to the NIC (as a stack with TSO does).
    pub tcp_checksum_to_nic: bool,
}

impl Default for TcpFrame<'_> {
    fn default() -> Self {
        TcpFrame {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            src_port: 49152,
            dst_port: 5001,
            seq: 0,
            ack: Some(1000),
            window: 8192,
            control: TcpControl::None,
            payload: &[],
            ident: 0,
            timestamp: None,
            tcp_checksum_to_nic: false,
        }
    }
}

impl TcpFrame<'_> {
    /// The frame's bytes.
    pub fn build(&self) -> Vec<u8> {
        let (src, dst) = (Ipv4Address::from(self.src), Ipv4Address::from(self.dst));
        let tcp = TcpRepr {
            src_port: self.src_port,
            dst_port: self.dst_port,
            control: self.control,
            seq_number: TcpSeqNumber(self.seq as i32),
            ack_number: self.ack.map(|a| TcpSeqNumber(a as i32)),
            window_len: self.window,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: self.timestamp,
            payload: self.payload,
        };
        let ip = Ipv4Repr {
            src_addr: src,
            dst_addr: dst,
            next_header: IpProtocol::Tcp,
            payload_len: tcp.buffer_len(),
            hop_limit: 64,
        };
        let eth = EthernetRepr {
            src_addr: EthernetAddress(self.src_mac),
            dst_addr: EthernetAddress(self.dst_mac),
            ethertype: EthernetProtocol::Ipv4,
        };
        let mut buf = vec![0u8; ETH + 20 + tcp.buffer_len()];
        let mut f = EthernetFrame::new_unchecked(&mut buf);
        eth.emit(&mut f);
        let mut p = Ipv4Packet::new_unchecked(f.payload_mut());
        let caps = ChecksumCapabilities::default();
        ip.emit(&mut p, &caps);
        if self.ident != 0 {
            p.set_ident(self.ident);
            p.fill_checksum();
        }
        let mut t = TcpPacket::new_unchecked(p.payload_mut());
        let mut tcp_caps = ChecksumCapabilities::default();
        if self.tcp_checksum_to_nic {
            tcp_caps.tcp = Checksum::Rx;
        }
        tcp.emit(&mut t, &IpAddress::Ipv4(src), &IpAddress::Ipv4(dst), &tcp_caps);
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_frame_has_valid_checksums_and_its_fields() {
        let f = TcpFrame { seq: 7, payload: b"abc", ident: 9, ..Default::default() }.build();
        assert_eq!(f.len(), ETH + 20 + 20 + 3);
        let ip = Ipv4Packet::new_checked(&f[ETH..]).unwrap();
        assert!(ip.verify_checksum());
        assert_eq!(ip.ident(), 9);
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert!(tcp.verify_checksum(&ip.src_addr().into(), &ip.dst_addr().into()));
        assert_eq!((tcp.seq_number(), tcp.payload()), (TcpSeqNumber(7), &b"abc"[..]));
    }

    #[test]
    fn a_checksum_left_to_the_nic_is_not_filled() {
        let f = TcpFrame { payload: b"abc", tcp_checksum_to_nic: true, ..Default::default() }.build();
        let ip = Ipv4Packet::new_checked(&f[ETH..]).unwrap();
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert!(!tcp.verify_checksum(&ip.src_addr().into(), &ip.dst_addr().into()));
    }
}
