//! A receive window that never retreats, as Linux's: smoltcp advertises
//! its free buffer space rounded down to the window scale's unit and
//! accepts data only up to the edge it advertised last, so as its
//! acknowledgement advances by amounts that are not whole units the edge
//! can move back by up to one unit, and data the peer already sent up to
//! the old edge is cut off and must be retransmitted (Linux's
//! `tcp_select_window` never shrinks an offered window). nicsim takes one
//! unit off every window a host with a scaled window advertises: the edge
//! a peer sees is then at most the buffer's end minus one unit, which is
//! never beyond any edge the stack will accept later (that edge is at
//! least the buffer's end, which only moves forward, minus less than one
//! unit). Cost: one unit (4 B for a 256 KiB buffer, 256 B for 12 MiB) of
//! the advertised window.

use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet};

const ETH: usize = 14;
/// Offsets of the window and the checksum in the TCP header.
const WINDOW: usize = 14;
const CHECKSUM: usize = 16;

/// Take one unit off the window of `frame` if it is a TCP/IPv4 segment
/// other than a SYN or RST (whose windows are not scaled or not used);
/// `summed`: the stack filled the TCP checksum, which is then updated
/// (RFC 1624) rather than recomputed.
pub fn lower_window(frame: &mut [u8], summed: bool) {
    let Ok(eth) = EthernetFrame::new_checked(&*frame) else { return };
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return;
    }
    let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else { return };
    if ip.next_header() != IpProtocol::Tcp || ip.frag_offset() != 0 || ip.payload().len() < 20 {
        return;
    }
    let tcp = ETH + usize::from(ip.header_len());
    let flags = frame[tcp + 13];
    if flags & 0x06 != 0 {
        return; // SYN or RST
    }
    let window = u16::from_be_bytes([frame[tcp + WINDOW], frame[tcp + WINDOW + 1]]);
    if window == 0 {
        return;
    }
    frame[tcp + WINDOW..tcp + WINDOW + 2].copy_from_slice(&(window - 1).to_be_bytes());
    if summed {
        // HC' = ~(~HC + ~m + m') with m' = m - 1 (RFC 1624, equation 3).
        let hc = u16::from_be_bytes([frame[tcp + CHECKSUM], frame[tcp + CHECKSUM + 1]]);
        let mut sum = u32::from(!hc) + u32::from(!window) + u32::from(window - 1);
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        frame[tcp + CHECKSUM..tcp + CHECKSUM + 2].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TcpFrame;
    use smoltcp::wire::{IpAddress, TcpControl, TcpPacket};

    fn checksum_ok(frame: &[u8]) -> bool {
        let ip = Ipv4Packet::new_checked(&frame[ETH..]).unwrap();
        let (src, dst) = (IpAddress::Ipv4(ip.src_addr()), IpAddress::Ipv4(ip.dst_addr()));
        TcpPacket::new_checked(ip.payload()).unwrap().verify_checksum(&src, &dst)
    }

    fn window(frame: &[u8]) -> u16 {
        let ip = Ipv4Packet::new_checked(&frame[ETH..]).unwrap();
        TcpPacket::new_checked(ip.payload()).unwrap().window_len()
    }

    #[test]
    fn the_window_loses_one_unit_and_the_checksum_stays_valid() {
        for (win, payload) in [(1000u16, &b""[..]), (1, &b"data"[..]), (0xffff, &[0xab; 1448][..]), (0x8000, &b"x"[..])]
        {
            let mut f = TcpFrame { ack: Some(77), window: win, payload, ..Default::default() }.build();
            assert!(checksum_ok(&f));
            lower_window(&mut f, true);
            assert_eq!(window(&f), win - 1);
            assert!(checksum_ok(&f), "window {win}: checksum after the update");
        }
    }

    #[test]
    fn syn_rst_zero_windows_and_other_frames_are_left_alone() {
        for control in [TcpControl::Syn, TcpControl::Rst] {
            let f = TcpFrame { ack: Some(1), window: 500, control, ..Default::default() }.build();
            let mut g = f.clone();
            lower_window(&mut g, true);
            assert_eq!(f, g, "{control:?}");
        }
        let f = TcpFrame { ack: Some(1), window: 0, ..Default::default() }.build();
        let mut g = f.clone();
        lower_window(&mut g, true);
        assert_eq!(f, g, "a zero window stays zero");
        let mut arp = vec![0xffu8; 14];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let before = arp.clone();
        lower_window(&mut arp, true);
        assert_eq!(arp, before);
    }

    #[test]
    fn a_checksum_left_to_the_nic_is_not_touched() {
        let mut f = TcpFrame { ack: Some(1), window: 500, tcp_checksum: false, ..Default::default() }.build();
        lower_window(&mut f, false);
        assert_eq!(window(&f), 499);
        let ip = Ipv4Packet::new_checked(&f[ETH..]).unwrap();
        assert_eq!(TcpPacket::new_checked(ip.payload()).unwrap().checksum(), 0);
    }
}
