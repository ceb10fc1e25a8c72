//! An example receive offload engine, and the test that it plugs in: a
//! lossy receive path that drops every `n`-th TCP data frame as it reaches
//! the NIC (as a NIC out of buffers would). It exists to show what adding
//! an engine takes (this file and one registry line, see
//! `docs/models/offload.md`); it is compiled for tests only.

use super::{RxCx, RxOffload, Setup};

/// Drops every `every`-th TCP data frame arriving from the wire.
#[derive(Debug)]
pub struct DropEvery {
    every: u64,
    seen: u64,
    dropped: u64,
}

impl DropEvery {
    /// An engine dropping every `every`-th data frame (`every` ≥ 2).
    pub fn new(every: u64) -> DropEvery {
        assert!(every >= 2, "dropping every frame stops every transfer");
        DropEvery { every, seen: 0, dropped: 0 }
    }

    /// Frames dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// No profile asks for it: tests install it on a host themselves.
    pub fn from_host(_host: &Setup) -> Option<DropEvery> {
        None
    }
}

/// Whether `frame` is a TCP/IPv4 segment carrying data (an Ethernet, IPv4
/// and TCP header of at least 54 bytes, then payload).
fn tcp_data(frame: &[u8]) -> bool {
    use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket};
    let Ok(eth) = EthernetFrame::new_checked(frame) else { return false };
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return false;
    }
    let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else { return false };
    ip.next_header() == IpProtocol::Tcp && TcpPacket::new_checked(ip.payload()).is_ok_and(|t| !t.payload().is_empty())
}

impl RxOffload for DropEvery {
    fn arrive(&mut self, _cx: &mut RxCx, frame: Vec<u8>) -> Option<Vec<u8>> {
        if !tcp_data(&frame) {
            return Some(frame);
        }
        self.seen += 1;
        if self.seen.is_multiple_of(self.every) {
            self.dropped += 1;
            return None;
        }
        Some(frame)
    }
}
