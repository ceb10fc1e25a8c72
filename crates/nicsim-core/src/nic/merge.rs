//! What the receive-coalescing engines (`lro`, `gro`) share: a checked view
//! of an Ethernet/IPv4/TCP frame and an aggregate that grows by appending
//! payload to the first segment's frame, then rewrites its headers.
//!
//! An aggregate keeps the first segment's Ethernet, IPv4 and TCP headers
//! (options included). On finishing it sets the IP total length, and for
//! more than one segment the ACK number and window of the latest segment
//! and PSH/FIN if any merged segment had them; both checksums are
//! recomputed. A single untouched segment comes back exactly as received.

use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, TcpPacket};

use super::lro::Coalesced;

/// Statistics with the output counters both engines keep.
pub(super) trait OutputStats {
    /// Frames out, bytes out, frames passed through, aggregates, segments merged.
    fn output(&mut self) -> [&mut u64; 5];
}

/// Hand `frame` up as it was received.
pub(super) fn pass(stats: &mut impl OutputStats, frame: Vec<u8>, tag: u64, out: &mut Vec<(Coalesced, u64)>) {
    let [frames, bytes, passed, _, _] = stats.output();
    *passed += 1;
    *frames += 1;
    *bytes += frame.len() as u64;
    out.push((Coalesced { frame, segments: 1 }, tag));
}

/// Hand `agg` up, its headers rewritten.
pub(super) fn emit(stats: &mut impl OutputStats, agg: Aggregate, out: &mut Vec<(Coalesced, u64)>) {
    let (c, tag) = agg.finish();
    let [frames, bytes, _, aggregates, merged] = stats.output();
    *frames += 1;
    *bytes += c.frame.len() as u64;
    if c.segments > 1 {
        *aggregates += 1;
        *merged += u64::from(c.segments);
    }
    out.push((c, tag));
}

/// Ethernet header length (no VLAN tag).
pub(crate) const ETH: usize = 14;
/// Largest IPv4 total length.
pub(crate) const IP_MAX: usize = 65_535;

/// A TCP connection as the NIC's CAM keys it: IPv4 addresses and ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct FlowKey {
    pub src: Ipv4Address,
    pub dst: Ipv4Address,
    pub sport: u16,
    pub dport: u16,
}

/// The parts of a TCP/IPv4 Ethernet frame the engines decide on. Built only
/// by [`parse`], so the offsets are in bounds.
#[derive(Debug, Clone)]
pub(crate) struct TcpView {
    pub key: FlowKey,
    /// IPv4 header length (20 without options).
    pub ip_hlen: usize,
    /// TCP header length (20 plus options).
    pub tcp_hlen: usize,
    /// Offset of the TCP payload in the frame.
    pub payload_at: usize,
    /// End of the IP datagram in the frame (Ethernet padding excluded).
    pub end: usize,
    pub seq: u32,
    pub ack: u32,
    pub window: u16,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub psh: bool,
    pub ack_flag: bool,
    pub urg: bool,
    pub ece: bool,
    pub cwr: bool,
    /// IP header: options present, a fragment, any flag but DF.
    pub ip_options: bool,
    pub fragment: bool,
    pub df: bool,
    pub reserved_flag: bool,
    pub ttl: u8,
    /// DSCP and ECN byte.
    pub tos: u8,
    pub ident: u16,
    /// Both checksums are valid.
    pub checksums_ok: bool,
}

impl TcpView {
    /// TCP payload length.
    pub fn len(&self) -> usize {
        self.end - self.payload_at
    }
}

/// What an Ethernet frame is, for a coalescing engine.
pub(crate) enum Kind {
    /// Not IPv4 (ARP, IPv6, ...) or IPv4 but not TCP.
    Other,
    /// An IPv4 fragment after the first (no TCP header in it), by address pair.
    LaterFragment(Ipv4Address, Ipv4Address),
    /// A TCP/IPv4 frame whose TCP header could be read.
    Tcp(TcpView),
}

/// Read what the engines need from `frame`; nothing here panics.
pub(crate) fn parse(frame: &[u8]) -> Kind {
    let Ok(eth) = EthernetFrame::new_checked(frame) else { return Kind::Other };
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return Kind::Other;
    }
    let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else { return Kind::Other };
    if ip.version() != 4 || ip.next_header() != IpProtocol::Tcp {
        return Kind::Other;
    }
    if ip.frag_offset() != 0 {
        return Kind::LaterFragment(ip.src_addr(), ip.dst_addr());
    }
    let ip_hlen = usize::from(ip.header_len());
    let total = usize::from(ip.total_len());
    let Ok(tcp) = TcpPacket::new_checked(&ip.as_ref()[ip_hlen..total]) else { return Kind::Other };
    let tcp_hlen = usize::from(tcp.header_len());
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    let fragment = ip.more_frags();
    let checksums_ok =
        ip.verify_checksum() && (fragment || tcp.verify_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst)));
    // Byte 6 of the IP header: reserved bit, DF, MF, offset high bits.
    let reserved_flag = ip.as_ref()[6] & 0x80 != 0;
    Kind::Tcp(TcpView {
        key: FlowKey { src, dst, sport: tcp.src_port(), dport: tcp.dst_port() },
        ip_hlen,
        tcp_hlen,
        payload_at: ETH + ip_hlen + tcp_hlen,
        end: ETH + total,
        seq: tcp.seq_number().0 as u32,
        ack: tcp.ack_number().0 as u32,
        window: tcp.window_len(),
        syn: tcp.syn(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        psh: tcp.psh(),
        ack_flag: tcp.ack(),
        urg: tcp.urg(),
        ece: tcp.ece(),
        cwr: tcp.cwr(),
        ip_options: ip_hlen != 20,
        fragment,
        df: ip.dont_frag(),
        reserved_flag,
        ttl: ip.hop_limit(),
        tos: (ip.dscp() << 2) | ip.ecn(),
        ident: ip.ident(),
        checksums_ok,
    })
}

/// `a - b` on the sequence-number circle, as a signed distance.
pub(crate) fn seq_diff(a: u32, b: u32) -> i64 {
    i64::from(a.wrapping_sub(b) as i32)
}

/// Segments merged into one frame, growing in place.
#[derive(Debug, Clone)]
pub(crate) struct Aggregate {
    /// The first segment's frame, then every appended payload.
    frame: Vec<u8>,
    ip_hlen: usize,
    tcp_hlen: usize,
    /// Sequence number of the first payload byte.
    pub seq: u32,
    /// Payload bytes held.
    pub len: usize,
    /// TCP segments in it.
    pub segments: u32,
    ack: u32,
    window: u16,
    psh: bool,
    fin: bool,
    /// Caller's tag (e.g. timestamp) of the segment that arrived last.
    pub tag: u64,
    /// Arrival order of the segment that arrived last (the ACK/window source).
    pub order: u64,
    /// The frame differs from the one received (trimmed or merged).
    modified: bool,
}

impl Aggregate {
    /// Start an aggregate with `frame`, dropping the first `skip` payload
    /// bytes (already held elsewhere).
    pub fn start(frame: Vec<u8>, view: &TcpView, skip: usize, tag: u64, order: u64) -> Aggregate {
        let mut frame = frame;
        let modified = skip > 0;
        if modified {
            frame.drain(view.payload_at..view.payload_at + skip);
            frame.truncate(view.end - skip);
        }
        Aggregate {
            frame,
            ip_hlen: view.ip_hlen,
            tcp_hlen: view.tcp_hlen,
            seq: view.seq.wrapping_add(skip as u32),
            len: view.len() - skip,
            segments: 1,
            ack: view.ack,
            window: view.window,
            psh: view.psh,
            fin: view.fin,
            tag,
            order,
            modified,
        }
    }

    /// Sequence number just after the held payload.
    pub fn end_seq(&self) -> u32 {
        self.seq.wrapping_add(self.len as u32)
    }

    /// Bytes of the merged frame (headers and payload, no padding).
    pub fn frame_len(&self) -> usize {
        ETH + self.ip_hlen + self.tcp_hlen + self.len
    }

    /// IP total length after appending `more` payload bytes.
    pub fn ip_len_with(&self, more: usize) -> usize {
        self.ip_hlen + self.tcp_hlen + self.len + more
    }

    /// Append the payload of `frame` (described by `view`) from byte `skip`.
    pub fn append(&mut self, frame: &[u8], view: &TcpView, skip: usize, tag: u64, order: u64) {
        if !self.modified {
            self.frame.truncate(self.frame_len());
        }
        self.frame.extend_from_slice(&frame[view.payload_at + skip..view.end]);
        self.len += view.len() - skip;
        self.segments += 1;
        self.psh |= view.psh;
        self.fin |= view.fin;
        if order >= self.order {
            self.ack = view.ack;
            self.window = view.window;
            self.tag = tag;
            self.order = order;
        }
        self.modified = true;
    }

    /// Append a whole other aggregate that starts where this one ends.
    pub fn absorb(&mut self, other: Aggregate) {
        debug_assert_eq!(other.seq, self.end_seq());
        if !self.modified {
            self.frame.truncate(self.frame_len());
        }
        let at = ETH + other.ip_hlen + other.tcp_hlen;
        self.frame.extend_from_slice(&other.frame[at..at + other.len]);
        self.len += other.len;
        self.segments += other.segments;
        self.psh |= other.psh;
        self.fin |= other.fin;
        if other.order >= self.order {
            self.ack = other.ack;
            self.window = other.window;
            self.tag = other.tag;
            self.order = other.order;
        }
        self.modified = true;
    }

    /// The frame for the host: headers rewritten if anything changed.
    pub fn finish(self) -> (Coalesced, u64) {
        let (segments, tag) = (self.segments, self.tag);
        if !self.modified {
            return (Coalesced { frame: self.frame, segments }, tag);
        }
        let mut frame = self.frame;
        let total = self.ip_hlen + self.tcp_hlen + self.len;
        debug_assert!(total <= IP_MAX);
        frame.truncate(ETH + total);
        let mut ip = Ipv4Packet::new_unchecked(&mut frame[ETH..]);
        ip.set_total_len(total as u16);
        ip.fill_checksum();
        let (src, dst) = (IpAddress::Ipv4(ip.src_addr()), IpAddress::Ipv4(ip.dst_addr()));
        let mut tcp = TcpPacket::new_unchecked(&mut frame[ETH + self.ip_hlen..]);
        tcp.set_seq_number(smoltcp::wire::TcpSeqNumber(self.seq as i32));
        tcp.set_ack_number(smoltcp::wire::TcpSeqNumber(self.ack as i32));
        tcp.set_window_len(self.window);
        tcp.set_psh(self.psh);
        tcp.set_fin(self.fin);
        tcp.fill_checksum(&src, &dst);
        (Coalesced { frame, segments }, tag)
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    //! Literal TCP/IPv4 frames for the engines' tests.
    use super::*;
    use smoltcp::phy::ChecksumCapabilities;
    use smoltcp::wire::{EthernetAddress, EthernetRepr, Ipv4Repr, TcpControl, TcpRepr, TcpSeqNumber};

    /// A valid frame of flow `port` (client port; server port 5001) with
    /// `payload`, sequence number `seq`, ACK `ack`, window `window`.
    pub fn frame(port: u16, seq: u32, payload: &[u8], control: TcpControl, ack: u32, window: u16) -> Vec<u8> {
        let (src, dst) = (Ipv4Address::new(10, 0, 0, 1), Ipv4Address::new(10, 0, 0, 2));
        let tcp = TcpRepr {
            src_port: port,
            dst_port: 5001,
            control,
            seq_number: TcpSeqNumber(seq as i32),
            ack_number: Some(TcpSeqNumber(ack as i32)),
            window_len: window,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload,
        };
        let ip = Ipv4Repr {
            src_addr: src,
            dst_addr: dst,
            next_header: IpProtocol::Tcp,
            payload_len: tcp.buffer_len(),
            hop_limit: 64,
        };
        let eth = EthernetRepr {
            src_addr: EthernetAddress([2, 0, 0, 0, 0, 1]),
            dst_addr: EthernetAddress([2, 0, 0, 0, 0, 2]),
            ethertype: EthernetProtocol::Ipv4,
        };
        let mut buf = vec![0u8; ETH + 20 + tcp.buffer_len()];
        let mut f = EthernetFrame::new_unchecked(&mut buf);
        eth.emit(&mut f);
        let mut p = Ipv4Packet::new_unchecked(f.payload_mut());
        let caps = ChecksumCapabilities::default();
        ip.emit(&mut p, &caps);
        let mut t = TcpPacket::new_unchecked(p.payload_mut());
        tcp.emit(&mut t, &IpAddress::Ipv4(src), &IpAddress::Ipv4(dst), &caps);
        buf
    }

    /// A data segment: `len` bytes of a pattern that depends on the
    /// sequence number, so a merged payload can be checked byte by byte.
    pub fn data(port: u16, seq: u32, len: usize, psh: bool) -> Vec<u8> {
        let payload: Vec<u8> = (0..len).map(|i| pattern(seq.wrapping_add(i as u32))).collect();
        let control = if psh { TcpControl::Psh } else { TcpControl::None };
        frame(port, seq, &payload, control, 1000, 8192)
    }

    /// The byte at sequence number `seq` in every fixture stream.
    pub fn pattern(seq: u32) -> u8 {
        (seq % 251) as u8
    }

    /// Check `frame`'s lengths and checksums; return (seq, payload, psh).
    pub fn check(frame: &[u8]) -> (u32, Vec<u8>, bool) {
        let ip = Ipv4Packet::new_checked(&frame[ETH..]).expect("an IPv4 packet");
        assert!(ip.verify_checksum(), "IP checksum");
        assert_eq!(usize::from(ip.total_len()), frame.len() - ETH, "IP total length");
        let tcp = TcpPacket::new_checked(ip.payload()).expect("a TCP segment");
        assert!(tcp.verify_checksum(&IpAddress::Ipv4(ip.src_addr()), &IpAddress::Ipv4(ip.dst_addr())), "TCP checksum");
        (tcp.seq_number().0 as u32, tcp.payload().to_vec(), tcp.psh())
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::*;
    use super::*;

    #[test]
    fn an_aggregate_of_three_rewrites_lengths_ack_window_and_checksums() {
        let a = data(1, u32::MAX - 99, 100, false); // wraps through zero
        let b = data(1, 0, 200, false);
        let c = fixture::frame(1, 200, &[pattern(200)], smoltcp::wire::TcpControl::Psh, 5000, 100);
        let Kind::Tcp(va) = parse(&a) else { panic!() };
        let Kind::Tcp(vb) = parse(&b) else { panic!() };
        let Kind::Tcp(vc) = parse(&c) else { panic!() };
        let mut agg = Aggregate::start(a.clone(), &va, 0, 1, 1);
        agg.append(&b, &vb, 0, 2, 2);
        agg.append(&c, &vc, 0, 3, 3);
        assert_eq!(agg.end_seq(), 201);
        let (out, tag) = agg.finish();
        assert_eq!((out.segments, tag), (3, 3));
        assert_eq!(out.frame.len(), 14 + 20 + 20 + 301);
        let (seq, payload, psh) = check(&out.frame);
        assert_eq!(seq, u32::MAX - 99);
        assert!(psh, "PSH of the last segment kept");
        let want: Vec<u8> = (0..301u32).map(|i| pattern((u32::MAX - 99).wrapping_add(i))).collect();
        assert_eq!(payload, want);
        let tcp = TcpPacket::new_checked(&out.frame[ETH + 20..]).unwrap();
        assert_eq!((tcp.ack_number().0, tcp.window_len()), (5000, 100), "ACK and window of the latest");
        assert_eq!(out.frame[..ETH + 2], a[..ETH + 2], "Ethernet header, IP version and TOS kept");
        assert_eq!(out.frame[ETH + 4..ETH + 10], a[ETH + 4..ETH + 10], "IP ID, flags, TTL, protocol kept");
        assert_eq!(out.frame[ETH + 12..ETH + 24], a[ETH + 12..ETH + 24], "addresses and ports kept");
    }

    #[test]
    fn a_single_untouched_segment_comes_back_as_received() {
        let mut a = data(1, 7, 6, false);
        a.extend([0; 6]); // Ethernet padding to 60 bytes
        let Kind::Tcp(v) = parse(&a) else { panic!() };
        let (out, _) = Aggregate::start(a.clone(), &v, 0, 0, 0).finish();
        assert_eq!(out.frame, a);
    }

    #[test]
    fn a_trimmed_start_moves_the_sequence_number() {
        let a = data(1, 1000, 100, false);
        let Kind::Tcp(v) = parse(&a) else { panic!() };
        let (out, _) = Aggregate::start(a, &v, 40, 0, 0).finish();
        let (seq, payload, _) = check(&out.frame);
        assert_eq!(seq, 1040);
        assert_eq!(payload, (1040..1100u32).map(pattern).collect::<Vec<_>>());
    }

    #[test]
    fn parse_sorts_frames() {
        assert!(matches!(parse(&[0xff; 42]), Kind::Other));
        let mut bad = data(1, 0, 10, false);
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let Kind::Tcp(v) = parse(&bad) else { panic!() };
        assert!(!v.checksums_ok);
        let Kind::Tcp(v) = parse(&data(1, 0, 10, false)) else { panic!() };
        assert!(v.checksums_ok && v.df && !v.fragment && !v.ip_options);
        assert_eq!(v.len(), 10);
    }
}
