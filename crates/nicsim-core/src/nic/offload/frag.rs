//! Driver-level IPv4 fragmentation and speculative defragmentation on
//! frames (Kurmann, Rauch and Stricker, "Speculative defragmentation").
//!
//! Send: the stack hands the driver an IP packet that carries one page of
//! TCP data (the virtual interface's MTU); [`fragment`] cuts it into
//! standard IPv4 fragments (More-Fragments flag, offsets in 8-byte units,
//! header checksum refilled), which any IPv4 receiver reassembles.
//!
//! Receive: the driver pre-loads descriptors guessing that the next frames
//! are the fragments of one page-sized packet, in order, with headers of
//! known length ([`Guess`]). [`check_train`] says whether the frames so far
//! still fit that guess, and [`rebuild`] turns a complete train into the
//! one IP packet the stack sees (no copy in the model's accounting: the
//! payloads already sit in the page).
//!
//! Left out: IP options (a header with options never fits the guess),
//! IPv6. Units: bytes.

use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket};

/// Ethernet header bytes.
pub const ETH_HEADER: usize = 14;
/// IPv4 header bytes without options.
pub const IP_HEADER: usize = 20;

/// Where the driver expects the payloads of a fragment train to land.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guess {
    /// TCP header bytes (with options) of the first fragment.
    pub tcp_header: usize,
    /// IP payload bytes of every fragment but the last (the link MTU minus
    /// the IP header, rounded down to 8).
    pub fragment_payload: usize,
    /// Page size: the TCP data of one train fills at most one page.
    pub page: usize,
}

impl Guess {
    /// The guess for a link of IP MTU `link_mtu`, TCP headers of
    /// `tcp_header` bytes and pages of `page` bytes.
    pub fn new(link_mtu: usize, tcp_header: usize, page: usize) -> Guess {
        Guess { tcp_header, fragment_payload: (link_mtu - IP_HEADER) & !7, page }
    }

    /// Bytes of the header buffer of the first descriptor (Ethernet + IP + TCP).
    pub fn first_header(&self) -> usize {
        ETH_HEADER + IP_HEADER + self.tcp_header
    }

    /// Header-buffer bytes of the descriptor at position `k` of a train.
    pub fn header_at(&self, k: usize) -> usize {
        if k == 0 {
            self.first_header()
        } else {
            ETH_HEADER + IP_HEADER
        }
    }

    /// Most fragments one page-sized packet takes.
    pub fn max_fragments(&self) -> usize {
        (self.page + self.tcp_header).div_ceil(self.fragment_payload)
    }
}

/// The IPv4 packet inside an Ethernet frame, if it is one.
fn ipv4(frame: &[u8]) -> Option<Ipv4Packet<&[u8]>> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let ip = Ipv4Packet::new_checked(&frame[ETH_HEADER..]).ok()?;
    Some(ip)
}

/// Whether `frame` is an IPv4 fragment (More-Fragments set or an offset).
pub fn is_fragment(frame: &[u8]) -> bool {
    ipv4(frame).is_some_and(|ip| ip.more_frags() || ip.frag_offset() != 0)
}

/// IP payload bytes of the whole datagram when `frame` is its last
/// fragment (More-Fragments clear, an offset), else `None`.
pub fn last_fragment_total(frame: &[u8]) -> Option<usize> {
    let ip = ipv4(frame)?;
    if ip.more_frags() || ip.frag_offset() == 0 {
        return None;
    }
    let len = usize::from(ip.total_len()).checked_sub(usize::from(ip.header_len()))?;
    Some(usize::from(ip.frag_offset()) + len)
}

/// Cut the IPv4 packet in Ethernet frame `frame` into fragments that fit
/// IP MTU `link_mtu`, with identification `ident`. `None` when the frame is
/// not IPv4 or already fits. Fragments clear Don't-Fragment (the driver
/// fragments on the stack's behalf) and carry a fresh header checksum.
pub fn fragment(frame: &[u8], link_mtu: usize, ident: u16) -> Option<Vec<Vec<u8>>> {
    let ip = ipv4(frame)?;
    let hl = usize::from(ip.header_len());
    let total = usize::from(ip.total_len());
    if total <= link_mtu || ip.more_frags() || ip.frag_offset() != 0 || link_mtu < hl + 8 {
        return None;
    }
    let chunk = (link_mtu - hl) & !7;
    let payload = &frame[ETH_HEADER + hl..ETH_HEADER + total];
    let mut out = Vec::with_capacity(payload.len().div_ceil(chunk));
    for (i, part) in payload.chunks(chunk).enumerate() {
        let mut f = Vec::with_capacity(ETH_HEADER + hl + part.len());
        f.extend_from_slice(&frame[..ETH_HEADER + hl]);
        f.extend_from_slice(part);
        let mut p = Ipv4Packet::new_unchecked(&mut f[ETH_HEADER..]);
        p.set_total_len((hl + part.len()) as u16);
        p.set_ident(ident);
        p.set_dont_frag(false);
        p.set_more_frags((i + 1) * chunk < payload.len());
        p.set_frag_offset((i * chunk) as u16);
        p.fill_checksum();
        out.push(f);
    }
    Some(out)
}

/// How a train of frames compares with the driver's guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Every frame so far landed where expected; more fragments are due.
    Partial,
    /// The train is a whole packet, every payload where expected.
    Complete,
    /// The last frame broke the guess (not a fragment, wrong datagram,
    /// disorder, options, unexpected size).
    Mismatch,
}

/// Compare the train `frames` (the newest last) with `guess`; the frames
/// before the newest are known to fit already.
pub fn check_train(frames: &[&[u8]], guess: &Guess) -> Check {
    let k = frames.len() - 1;
    let (Some(first), Some(ip)) = (ipv4(frames[0]), ipv4(frames[k])) else { return Check::Mismatch };
    let payload = ip.payload().len();
    let fits = ip.header_len() as usize == IP_HEADER
        && usize::from(ip.total_len()) == IP_HEADER + payload
        && usize::from(ip.frag_offset()) == k * guess.fragment_payload
        && ip.next_header() == IpProtocol::Tcp
        && ip.src_addr() == first.src_addr()
        && ip.dst_addr() == first.dst_addr()
        && ip.ident() == first.ident()
        && k * guess.fragment_payload + payload <= guess.page + guess.tcp_header
        && (!ip.more_frags() || payload == guess.fragment_payload)
        && (ip.more_frags() || k > 0);
    if !fits {
        return Check::Mismatch;
    }
    if k == 0 {
        let tcp_ok =
            TcpPacket::new_checked(ip.payload()).is_ok_and(|t| usize::from(t.header_len()) == guess.tcp_header);
        if !tcp_ok {
            return Check::Mismatch;
        }
    }
    match (ip.more_frags(), k + 1 < guess.max_fragments()) {
        (false, _) => Check::Complete,
        (true, true) => Check::Partial,
        (true, false) => Check::Mismatch,
    }
}

/// The IP packet a complete train carries, as one Ethernet frame: the first
/// fragment's headers with the whole length, no fragment flags, a fresh
/// checksum, followed by every fragment's payload in order.
pub fn rebuild(frames: &[&[u8]]) -> Vec<u8> {
    let payload: usize = frames.iter().map(|f| f.len() - ETH_HEADER - IP_HEADER).sum();
    let mut out = Vec::with_capacity(ETH_HEADER + IP_HEADER + payload);
    out.extend_from_slice(&frames[0][..ETH_HEADER + IP_HEADER]);
    for f in frames {
        let ip = Ipv4Packet::new_unchecked(&f[ETH_HEADER..]);
        out.extend_from_slice(ip.payload());
    }
    let mut p = Ipv4Packet::new_unchecked(&mut out[ETH_HEADER..]);
    p.set_total_len((IP_HEADER + payload) as u16);
    p.set_more_frags(false);
    p.set_frag_offset(0);
    p.set_dont_frag(true);
    p.fill_checksum();
    out
}

/// Raise the MSS option of a TCP SYN in Ethernet frame `frame` to `mss`
/// (if it is lower) and refill the TCP checksum; returns whether it changed
/// the frame. The zero-copy driver sizes its segments by its own virtual
/// interface (one page per packet, cut into standard fragments that any
/// IPv4 receiver reassembles), not by the MSS an unprepared peer derives
/// from its 1500-byte MTU (the study's section 5.3 sender that "dumps
/// fragmented 4 KByte TCP packets to an unprepared standard Linux receiver").
pub fn raise_syn_mss(frame: &mut [u8], mss: u16) -> bool {
    let Some(ip) = ipv4(frame) else { return false };
    if ip.next_header() != IpProtocol::Tcp || ip.more_frags() || ip.frag_offset() != 0 {
        return false;
    }
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    let start = ETH_HEADER + usize::from(ip.header_len());
    let end = ETH_HEADER + usize::from(ip.total_len());
    if end > frame.len() || start >= end {
        return false;
    }
    let Ok(mut tcp) = TcpPacket::new_checked(&mut frame[start..end]) else { return false };
    if !tcp.syn() {
        return false;
    }
    let options = tcp.options_mut();
    let mut i = 0;
    let mut changed = false;
    while i < options.len() {
        match options[i] {
            0 => break,
            1 => i += 1,
            kind => {
                let Some(&len) = options.get(i + 1) else { break };
                let len = usize::from(len);
                if len < 2 || i + len > options.len() {
                    break;
                }
                if kind == 2 && len == 4 && u16::from_be_bytes([options[i + 2], options[i + 3]]) < mss {
                    options[i + 2..i + 4].copy_from_slice(&mss.to_be_bytes());
                    changed = true;
                }
                i += len;
            }
        }
    }
    if changed {
        tcp.fill_checksum(&src.into(), &dst.into());
    }
    changed
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testing::TcpFrame;
    use smoltcp::wire::TcpTimestampRepr;

    /// An Ethernet/IPv4/TCP frame with `data` bytes of payload (pattern
    /// `i % 251`), TCP header of 32 bytes (timestamps), IP ident 0, DF set,
    /// TCP checksum left zero, as smoltcp emits it for a NIC that offloads it.
    pub(crate) fn tcp_frame(data: usize) -> Vec<u8> {
        let payload: Vec<u8> = (0..data).map(|i| (i % 251) as u8).collect();
        TcpFrame {
            src_port: 12345,
            dst_port: 80,
            seq: 1,
            ack: Some(1),
            window: 0x1000,
            timestamp: Some(TcpTimestampRepr::new(1, 1)),
            tcp_checksum: false,
            payload: &payload,
            ..TcpFrame::default()
        }
        .build()
    }

    fn refs(v: &[Vec<u8>]) -> Vec<&[u8]> {
        v.iter().map(|f| f.as_slice()).collect()
    }

    #[test]
    fn a_page_becomes_three_valid_fragments() {
        let frame = tcp_frame(4096);
        let frags = fragment(&frame, 1500, 77).unwrap();
        assert_eq!(frags.len(), 3);
        // 4096 + 32 TCP bytes: 1480 + 1480 + 1168.
        let lens: Vec<usize> = frags.iter().map(|f| f.len() - 34).collect();
        assert_eq!(lens, [1480, 1480, 1168]);
        for (i, f) in frags.iter().enumerate() {
            let ip = Ipv4Packet::new_checked(&f[14..]).unwrap();
            assert!(ip.verify_checksum(), "fragment {i} checksum");
            assert_eq!(ip.ident(), 77);
            assert!(!ip.dont_frag());
            assert_eq!(ip.more_frags(), i < 2);
            assert_eq!(ip.frag_offset() as usize, i * 1480);
            assert_eq!(usize::from(ip.total_len()), f.len() - 14);
            assert_eq!(&f[..14], &frame[..14]);
        }
        // Small packets are left alone.
        assert!(fragment(&tcp_frame(1000), 1500, 1).is_none());
    }

    #[test]
    fn a_complete_train_rebuilds_the_packet() {
        let frame = tcp_frame(4096);
        let frags = fragment(&frame, 1500, 9).unwrap();
        let g = Guess::new(1500, 32, 4096);
        assert_eq!(g.max_fragments(), 3);
        assert_eq!(check_train(&refs(&frags[..1]), &g), Check::Partial);
        assert_eq!(check_train(&refs(&frags[..2]), &g), Check::Partial);
        assert_eq!(check_train(&refs(&frags), &g), Check::Complete);
        let whole = rebuild(&refs(&frags));
        assert_eq!(whole.len(), frame.len());
        assert_eq!(&whole[34..], &frame[34..], "payload intact");
        let ip = Ipv4Packet::new_checked(&whole[14..]).unwrap();
        assert!(ip.verify_checksum());
        assert_eq!(usize::from(ip.total_len()), 20 + 32 + 4096);
        assert!(!ip.more_frags() && ip.frag_offset() == 0);
    }

    #[test]
    fn interference_disorder_and_guesses_break_the_train() {
        let frags = fragment(&tcp_frame(4096), 1500, 9).unwrap();
        let g = Guess::new(1500, 32, 4096);
        // An interfering small frame in the middle.
        let ack = tcp_frame(0);
        assert_eq!(check_train(&[&frags[0], &ack], &g), Check::Mismatch);
        // Disorder.
        assert_eq!(check_train(&[&frags[0], &frags[2]], &g), Check::Mismatch);
        assert_eq!(check_train(&[&frags[1]], &g), Check::Mismatch);
        // A fragment of another datagram.
        let other = fragment(&tcp_frame(4096), 1500, 10).unwrap();
        assert_eq!(check_train(&[&frags[0], &other[1]], &g), Check::Mismatch);
        // A wrong TCP header guess.
        let g20 = Guess::new(1500, 20, 4096);
        assert_eq!(check_train(&[&frags[0]], &g20), Check::Mismatch);
        // A standard (unfragmented) segment.
        assert_eq!(check_train(&[&tcp_frame(1448)], &g), Check::Mismatch);
        assert!(is_fragment(&frags[2]) && !is_fragment(&ack));
        assert_eq!(last_fragment_total(&frags[2]), Some(4096 + 32));
        assert_eq!((last_fragment_total(&frags[0]), last_fragment_total(&ack)), (None, None));
        assert_eq!((g.header_at(0), g.header_at(1)), (66, 34));
    }

    #[test]
    fn a_syn_gets_the_page_mss_and_a_valid_checksum_other_frames_stay() {
        use smoltcp::wire::{IpAddress, Ipv4Address};
        // SYN with MSS 1460 (options: MSS, NOP, NOP, timestamps).
        let mut f = tcp_frame(0);
        f[ETH_HEADER + IP_HEADER + 13] = 0x02; // flags: SYN
        f[ETH_HEADER + IP_HEADER + 20..ETH_HEADER + IP_HEADER + 24].copy_from_slice(&[2, 4, 0x05, 0xb4]);
        let src = IpAddress::Ipv4(Ipv4Address::new(10, 0, 0, 1));
        let dst = IpAddress::Ipv4(Ipv4Address::new(10, 0, 0, 2));
        TcpPacket::new_unchecked(&mut f[ETH_HEADER + IP_HEADER..]).fill_checksum(&src, &dst);
        assert!(raise_syn_mss(&mut f, 4108));
        let tcp = TcpPacket::new_checked(&f[ETH_HEADER + IP_HEADER..]).unwrap();
        assert_eq!(&tcp.options()[..4], &[2, 4, 0x10, 0x0c]);
        assert!(tcp.verify_checksum(&src, &dst));
        // Already large enough, or not a SYN: untouched.
        assert!(!raise_syn_mss(&mut f, 4000));
        let mut ack = tcp_frame(100);
        let before = ack.clone();
        assert!(!raise_syn_mss(&mut ack, 4108));
        assert_eq!(ack, before);
    }
}
