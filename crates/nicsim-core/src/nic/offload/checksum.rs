//! Transmit checksum offload on a NIC without TSO (`nic.checksum_offload`):
//! the stack leaves each TCP checksum to the NIC, which fills it in as the
//! frame leaves (IPv4 header and UDP checksums stay the stack's, as smoltcp
//! makes them). The receive side of checksum offload is a cost, not a
//! frame change: the stack's check of a received frame costs no cycles
//! when the NIC made it (`node/cost.rs`).

use super::tso::fill_checksums;
use super::{Setup, StackOffloads, TxOffload};

/// The checksum engine of a host whose NIC fills TCP checksums but does
/// not segment (a host with TSO runs [`super::tso::Segmentation`], which
/// fills them too: it comes first in the registry).
#[derive(Debug)]
pub struct TxChecksum;

impl TxChecksum {
    /// The engine of a host with `nic.checksum_offload` on.
    pub fn from_host(host: &Setup) -> Option<TxChecksum> {
        host.timing.nic.checksum_offload.then_some(TxChecksum)
    }
}

impl TxOffload for TxChecksum {
    fn stack(&self) -> StackOffloads {
        StackOffloads { segmentation: false, tcp_checksum: true }
    }

    fn segment(&mut self, mut bytes: Vec<u8>, _tso_mss: Option<u16>) -> Vec<Vec<u8>> {
        fill_checksums(&mut bytes);
        vec![bytes]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TcpFrame;
    use smoltcp::wire::{IpAddress, Ipv4Packet, TcpPacket};

    #[test]
    fn the_nic_fills_the_tcp_checksum_the_stack_left() {
        let payload = [7u8; 300];
        let left = TcpFrame { tcp_checksum: false, payload: &payload, ..TcpFrame::default() }.build();
        let made = TcpFrame { tcp_checksum: true, payload: &payload, ..TcpFrame::default() }.build();
        assert_ne!(left, made, "the stack left the checksum out");
        let out = TxChecksum.segment(left, None);
        assert_eq!(out, vec![made.clone()], "one frame, byte for byte as a stack that sums it");
        let ip = Ipv4Packet::new_checked(&out[0][14..]).unwrap();
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert!(tcp.verify_checksum(&IpAddress::Ipv4(ip.src_addr()), &IpAddress::Ipv4(ip.dst_addr())));
        assert_eq!(TxChecksum.wire_frames(&made, None), 1);
    }
}
