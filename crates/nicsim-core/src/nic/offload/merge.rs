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

/// A frame for the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coalesced {
    /// The Ethernet frame (merged, or exactly as received).
    pub frame: Vec<u8>,
    /// TCP segments merged into it (1: as received, or one trimmed segment).
    pub segments: u32,
}

/// What both coalescing engines (NIC LRO, GRO) offer: frames in, frames
/// for the host out, in order; with `_tagged`, each output carries the tag
/// (e.g. a timestamp) of its latest-arriving segment.
pub trait Coalescer {
    /// What the engine says of a frame (GRO: held or merged; NIC LRO: its class).
    type Verdict;

    /// Offer `frame` with `tag`; outputs ready for the host go to `out`.
    fn push_tagged(&mut self, frame: Vec<u8>, tag: u64, out: &mut Vec<(Coalesced, u64)>) -> Self::Verdict;

    /// Hand every held frame to `out`.
    fn flush_tagged(&mut self, out: &mut Vec<(Coalesced, u64)>);

    /// The engine's buffer for the untagged calls (kept to spare an allocation per frame).
    fn scratch(&mut self) -> &mut Vec<(Coalesced, u64)>;

    /// Offer a received frame; frames ready for the host are appended to `out`.
    fn push(&mut self, frame: Vec<u8>, out: &mut Vec<Coalesced>) -> Self::Verdict {
        let mut scratch = std::mem::take(self.scratch());
        let verdict = self.push_tagged(frame, 0, &mut scratch);
        out.extend(scratch.drain(..).map(|(c, _)| c));
        *self.scratch() = scratch;
        verdict
    }

    /// Hand every held frame to `out` (end of a poll batch, a timer, end of input).
    fn flush(&mut self, out: &mut Vec<Coalesced>) {
        let mut scratch = std::mem::take(self.scratch());
        self.flush_tagged(&mut scratch);
        out.extend(scratch.drain(..).map(|(c, _)| c));
        *self.scratch() = scratch;
    }
}

/// Statistics with the output counters both engines keep.
pub(super) trait OutputStats {
    /// Frames out, bytes out, frames passed through, aggregates, segments merged.
    fn output(&mut self) -> [&mut u64; 5];
    /// Frames passed through, by reason.
    fn reasons(&mut self) -> &mut PassReasons;
}

/// Why an engine handed a frame up unchanged instead of holding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassReason {
    /// A link type the offline tool cannot read, or a frame shorter than its link header.
    LinkLayer,
    /// Not TCP over IPv4 (ARP, IPv6, UDP, ICMP, ...).
    NotTcpIpv4,
    /// Captured shorter than its IP length (the capture's snap length cut it).
    Truncated,
    /// IPv4 or TCP header unreadable (lengths out of range).
    Malformed,
    /// An IPv4 fragment.
    IpFragment,
    /// IPv4 options or the reserved IP flag.
    IpOptions,
    /// TCP checksum left to the NIC (zero or only the pseudo-header sum):
    /// captured on the sending host before checksum offload filled it in.
    OffloadedChecksum,
    /// IP or TCP checksum wrong.
    BadChecksum,
    /// TCP flags the engine does not merge (SYN, RST, URG, CWR, no ACK; the
    /// NIC engine also FIN and ECE).
    Flags,
    /// No TCP payload (a pure ACK, a window update).
    NoPayload,
}

/// Frames passed through, by [`PassReason`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct PassReasons {
    /// [`PassReason::LinkLayer`].
    pub link_layer: u64,
    /// [`PassReason::NotTcpIpv4`].
    pub not_tcp_ipv4: u64,
    /// [`PassReason::Truncated`].
    pub truncated: u64,
    /// [`PassReason::Malformed`].
    pub malformed: u64,
    /// [`PassReason::IpFragment`].
    pub ip_fragment: u64,
    /// [`PassReason::IpOptions`].
    pub ip_options: u64,
    /// [`PassReason::OffloadedChecksum`].
    pub offloaded_checksum: u64,
    /// [`PassReason::BadChecksum`].
    pub bad_checksum: u64,
    /// [`PassReason::Flags`].
    pub flags: u64,
    /// [`PassReason::NoPayload`].
    pub no_payload: u64,
}

impl PassReasons {
    /// Count one frame passed for `why`.
    pub fn add(&mut self, why: PassReason) {
        *self.get_mut(why) += 1;
    }

    fn get_mut(&mut self, why: PassReason) -> &mut u64 {
        match why {
            PassReason::LinkLayer => &mut self.link_layer,
            PassReason::NotTcpIpv4 => &mut self.not_tcp_ipv4,
            PassReason::Truncated => &mut self.truncated,
            PassReason::Malformed => &mut self.malformed,
            PassReason::IpFragment => &mut self.ip_fragment,
            PassReason::IpOptions => &mut self.ip_options,
            PassReason::OffloadedChecksum => &mut self.offloaded_checksum,
            PassReason::BadChecksum => &mut self.bad_checksum,
            PassReason::Flags => &mut self.flags,
            PassReason::NoPayload => &mut self.no_payload,
        }
    }

    /// Add every count of `other`.
    pub fn absorb(&mut self, other: &PassReasons) {
        for (a, b) in self.counts_mut().into_iter().zip(other.counts()) {
            *a += b;
        }
    }

    /// Every count, in field order.
    pub fn counts(&self) -> [u64; 10] {
        [
            self.link_layer,
            self.not_tcp_ipv4,
            self.truncated,
            self.malformed,
            self.ip_fragment,
            self.ip_options,
            self.offloaded_checksum,
            self.bad_checksum,
            self.flags,
            self.no_payload,
        ]
    }

    fn counts_mut(&mut self) -> [&mut u64; 10] {
        [
            &mut self.link_layer,
            &mut self.not_tcp_ipv4,
            &mut self.truncated,
            &mut self.malformed,
            &mut self.ip_fragment,
            &mut self.ip_options,
            &mut self.offloaded_checksum,
            &mut self.bad_checksum,
            &mut self.flags,
            &mut self.no_payload,
        ]
    }

    /// Frames passed through, all reasons.
    pub fn total(&self) -> u64 {
        self.counts().iter().sum()
    }
}

/// Why the IPv4 layer of `v` keeps it from merging (both engines).
pub(crate) fn ip_reason(v: &TcpView) -> Option<PassReason> {
    if v.fragment {
        Some(PassReason::IpFragment)
    } else if v.ip_options || v.reserved_flag {
        Some(PassReason::IpOptions)
    } else if !v.checksums_ok {
        Some(if v.offloaded { PassReason::OffloadedChecksum } else { PassReason::BadChecksum })
    } else {
        None
    }
}

/// Hand `frame` up as it was received, counting why.
pub(super) fn pass(
    stats: &mut impl OutputStats,
    why: PassReason,
    frame: Vec<u8>,
    tag: u64,
    out: &mut Vec<(Coalesced, u64)>,
) {
    stats.reasons().add(why);
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
    /// The frame came over a wire that cannot damage it, so its TCP
    /// checksum was taken as valid without summing the segment (as a NIC
    /// verifies it in hardware), and an aggregate started from it leaves
    /// the TCP checksum unfilled (Linux marks GRO's aggregates
    /// `CHECKSUM_UNNECESSARY`; the host's stack does not verify them).
    pub trusted: bool,
    pub checksums_ok: bool,
    /// The IP checksum is valid and the TCP checksum field holds zero or the
    /// pseudo-header sum only: left for the sending NIC to fill in
    /// (checksum offload; Linux `CHECKSUM_PARTIAL`).
    pub offloaded: bool,
}

impl TcpView {
    /// TCP payload length.
    pub fn len(&self) -> usize {
        self.end - self.payload_at
    }

    /// The TCP options of `frame`, the frame this view was parsed from.
    pub fn options<'a>(&self, frame: &'a [u8]) -> &'a [u8] {
        &frame[ETH + self.ip_hlen + 20..self.payload_at]
    }
}

/// What an Ethernet frame is, for a coalescing engine.
pub(crate) enum Kind {
    /// Not TCP/IPv4 ([`PassReason::NotTcpIpv4`]), cut by the capture
    /// ([`PassReason::Truncated`]) or unreadable ([`PassReason::Malformed`]).
    Other(PassReason),
    /// An IPv4 fragment after the first (no TCP header in it), by address pair.
    LaterFragment(Ipv4Address, Ipv4Address),
    /// A TCP/IPv4 frame whose TCP header could be read.
    Tcp(TcpView),
}

/// Read what the engines need from `frame`; nothing here panics.
pub(crate) fn parse(frame: &[u8]) -> Kind {
    parse_with(frame, false)
}

/// [`parse`], with the TCP checksum taken as valid when the frame is
/// `trusted` (it crossed an undamaging wire from another stack).
pub(crate) fn parse_with(frame: &[u8], trusted: bool) -> Kind {
    let Ok(eth) = EthernetFrame::new_checked(frame) else { return Kind::Other(PassReason::LinkLayer) };
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return Kind::Other(PassReason::NotTcpIpv4);
    }
    let bytes = eth.payload();
    // Byte 9 is the protocol, bytes 2..4 the total length.
    if bytes.len() >= 20 && bytes[0] >> 4 == 4 && bytes[9] == 6 {
        let total = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
        if bytes.len() < total {
            return Kind::Other(PassReason::Truncated);
        }
    }
    let Ok(ip) = Ipv4Packet::new_checked(bytes) else { return Kind::Other(PassReason::Malformed) };
    if ip.version() != 4 || ip.next_header() != IpProtocol::Tcp {
        return Kind::Other(PassReason::NotTcpIpv4);
    }
    if ip.frag_offset() != 0 {
        return Kind::LaterFragment(ip.src_addr(), ip.dst_addr());
    }
    let ip_hlen = usize::from(ip.header_len());
    let total = usize::from(ip.total_len());
    let Ok(tcp) = TcpPacket::new_checked(&ip.as_ref()[ip_hlen..total]) else {
        return Kind::Other(PassReason::Malformed);
    };
    let tcp_hlen = usize::from(tcp.header_len());
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    let fragment = ip.more_frags();
    let ip_ok = ip.verify_checksum();
    let checksums_ok =
        ip_ok && (fragment || trusted || tcp.verify_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst)));
    let offloaded = ip_ok && !checksums_ok && {
        let field = tcp.checksum();
        field == 0 || field == pseudo_header_sum(src, dst, total - ip_hlen)
    };
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
        offloaded,
        trusted,
    })
}

/// The ones'-complement sum (folded, not inverted) of the TCP/IPv4
/// pseudo-header: what Linux leaves in the TCP checksum field of a
/// `CHECKSUM_PARTIAL` segment for the NIC to complete (`tcp_v4_send_check`
/// stores `~tcp_v4_check(len, saddr, daddr, 0)`).
pub(crate) fn pseudo_header_sum(src: Ipv4Address, dst: Ipv4Address, tcp_len: usize) -> u16 {
    let (s, d) = (src.octets(), dst.octets());
    let words = [
        u16::from_be_bytes([s[0], s[1]]),
        u16::from_be_bytes([s[2], s[3]]),
        u16::from_be_bytes([d[0], d[1]]),
        u16::from_be_bytes([d[2], d[3]]),
        6,
        tcp_len as u16,
    ];
    let mut sum: u32 = words.iter().map(|&w| u32::from(w)).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Write the correct TCP checksum into a TCP/IPv4 Ethernet frame whose
/// checksum was left to the NIC (`v.offloaded`).
pub(crate) fn fill_tcp_checksum(frame: &mut [u8], v: &TcpView) {
    let (src, dst) = (IpAddress::Ipv4(v.key.src), IpAddress::Ipv4(v.key.dst));
    let mut tcp = TcpPacket::new_unchecked(&mut frame[ETH + v.ip_hlen..v.end]);
    tcp.fill_checksum(&src, &dst);
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
    /// Leave the TCP checksum of a rewritten aggregate unfilled ([`TcpView::trusted`]).
    trusted: bool,
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
            trusted: view.trusted,
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
            // An aggregate that grows once usually grows toward 64 KiB:
            // one allocation instead of a copy at every doubling.
            self.frame.reserve((ETH + IP_MAX).saturating_sub(self.frame.len()));
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
        if !self.trusted {
            tcp.fill_checksum(&src, &dst);
        }
        (Coalesced { frame, segments }, tag)
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    //! Literal TCP/IPv4 frames for the engines' tests.
    use super::*;
    pub use crate::testing::TcpFrame;
    use smoltcp::wire::TcpControl;

    /// A valid frame of flow `port` (client port; server port 5001) with
    /// `payload`, sequence number `seq`, ACK `ack`, window `window`.
    pub fn frame(port: u16, seq: u32, payload: &[u8], control: TcpControl, ack: u32, window: u16) -> Vec<u8> {
        TcpFrame { src_port: port, seq, ack: Some(ack), window, control, payload, ..TcpFrame::default() }.build()
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
    fn a_trusted_frame_is_not_summed_and_its_aggregate_keeps_the_first_checksum() {
        let (a, b) = (data(1, 0, 100, false), data(1, 100, 100, false));
        // A damaged checksum: refused unless the wire is trusted.
        let mut bad = a.clone();
        bad[ETH + 20 + 16] ^= 0xff;
        let Kind::Tcp(v) = parse(&bad) else { panic!() };
        assert!(!v.checksums_ok && !v.trusted);
        let Kind::Tcp(v) = parse_with(&bad, true) else { panic!() };
        assert!(v.checksums_ok && v.trusted);
        // Trusted aggregates keep the first segment's TCP checksum field (not
        // filled for the merged segment); IP's is still rewritten.
        let merged = |trusted: bool| {
            let Kind::Tcp(va) = parse_with(&a, trusted) else { panic!() };
            let Kind::Tcp(vb) = parse_with(&b, trusted) else { panic!() };
            let mut agg = Aggregate::start(a.clone(), &va, 0, 1, 1);
            agg.append(&b, &vb, 0, 2, 2);
            agg.finish().0.frame
        };
        let (filled, trusted) = (merged(false), merged(true));
        check(&filled);
        let field = ETH + 20 + 16..ETH + 20 + 18;
        assert_eq!(trusted[field.clone()], a[field.clone()]);
        assert_ne!(filled[field.clone()], a[field.clone()]);
        assert!(Ipv4Packet::new_checked(&trusted[ETH..]).unwrap().verify_checksum());
        assert_eq!(trusted[..ETH + 36], filled[..ETH + 36]);
        assert_eq!(trusted[ETH + 38..], filled[ETH + 38..]);
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
        assert!(matches!(parse(&[0xff; 42]), Kind::Other(PassReason::NotTcpIpv4)));
        assert!(matches!(parse(&[0xff; 10]), Kind::Other(PassReason::LinkLayer)));
        let whole = data(1, 0, 100, false);
        assert!(matches!(parse(&whole[..96]), Kind::Other(PassReason::Truncated)));
        let mut bad = data(1, 0, 10, false);
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let Kind::Tcp(v) = parse(&bad) else { panic!() };
        assert!(!v.checksums_ok && !v.offloaded);
        let Kind::Tcp(v) = parse(&data(1, 0, 10, false)) else { panic!() };
        assert!(v.checksums_ok && v.df && !v.fragment && !v.ip_options);
        assert_eq!(v.len(), 10);
    }

    #[test]
    fn an_offloaded_checksum_is_told_from_a_bad_one_and_filled_in() {
        let good = data(1, 0, 100, false);
        let at = ETH + 20 + 16; // TCP checksum field
                                // The pseudo-header sum of 10.0.0.1 > 10.0.0.2, protocol 6, 120 TCP
                                // bytes, by hand: 0x0a00 + 0x0001 + 0x0a00 + 0x0002 + 6 + 120 = 0x1481.
        assert_eq!(pseudo_header_sum(Ipv4Address::new(10, 0, 0, 1), Ipv4Address::new(10, 0, 0, 2), 120), 0x1481);
        for field in [0x1481u16, 0] {
            let mut f = good.clone();
            f[at..at + 2].copy_from_slice(&field.to_be_bytes());
            let Kind::Tcp(v) = parse(&f) else { panic!() };
            assert!(!v.checksums_ok && v.offloaded, "field {field:#x}");
            assert_eq!(ip_reason(&v), Some(PassReason::OffloadedChecksum));
            fill_tcp_checksum(&mut f, &v);
            assert_eq!(f, good, "filled in as the sender's NIC would");
        }
        let mut f = good.clone();
        f[at..at + 2].copy_from_slice(&0x1482u16.to_be_bytes());
        let Kind::Tcp(v) = parse(&f) else { panic!() };
        assert_eq!(ip_reason(&v), Some(PassReason::BadChecksum));
    }
}
