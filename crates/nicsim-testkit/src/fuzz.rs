//! Fuzz target bodies: one function per target, taking arbitrary bytes.
//!
//! Each function feeds the bytes to a parser or engine that reads untrusted
//! input and panics only if a property fails (a bug). The cargo-fuzz crate in
//! `fuzz/` calls them under libFuzzer on nightly; an ordinary `cargo test`
//! replays the checked-in corpus (`fuzz/corpus/<target>/`) through the same
//! functions on stable (nicsim-core's `tests/integration/fuzz_corpus.rs`),
//! so a crash once found stays fixed. Nothing here runs in a simulation.
//!
//! | target | input | property |
//! | --- | --- | --- |
//! | [`scenario`] | TOML text | parse + validate returns a value or an error; a valid scenario re-serialises to TOML that parses to the same scenario |
//! | [`units`] | text | each quantity parses or errs; a parsed value prints as text that parses back to it |
//! | [`tso`] | MSS + frame | segmentation returns frames with valid checksums carrying the input's payload in order |
//! | [`wire_monitor`] | frames | the TCP monitor counts no more data segments than frames, no more retransmissions than data segments |
//! | [`link_channel`] | settings + operations | a link direction with impairments conserves frames and changes at most one bit of any frame |
//! | [`pcap`] | file bytes | the pcap reader returns a capture or an error naming the header or a record within the file; no record holds more than its wire length or more bytes than the file |
//! | [`coalesce`] | described frames | NIC LRO and host GRO hand up no more frames than they got, merged frames have valid checksums and lengths, payload is conserved less counted duplicates, and every flow's bytes sit at their sequence numbers |

use std::collections::HashSet;

use smoltcp::wire::{
    checksum, EthernetFrame, EthernetProtocol, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, TcpPacket,
};

use nicsim_core::config::Impairments;
use nicsim_core::engine::rng::component_rng;
use nicsim_core::engine::units::{Bandwidth, Duration, Frequency, Quantity, Size};
use nicsim_core::engine::Dur;
use nicsim_core::link::Channel;
use nicsim_core::nic::gro::{Gro, GroConfig};
use nicsim_core::nic::lro::{LroConfig, NicLro};
use nicsim_core::nic::offload::merge::Coalesced;
use nicsim_core::nic::offload::Coalescer;
use nicsim_core::nic::tso::segment;
use nicsim_core::probe::wire::TcpMonitor;

/// The names of the targets, as `fuzz/fuzz_targets/<name>.rs` and
/// `fuzz/corpus/<name>/`.
pub const TARGETS: [&str; 7] = ["scenario", "units", "tso", "wire_monitor", "link_channel", "pcap", "coalesce"];

/// Run target `name` on `data`; panics on an unknown name.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "scenario" => scenario(data),
        "units" => units(data),
        "tso" => tso(data),
        "wire_monitor" => wire_monitor(data),
        "link_channel" => link_channel(data),
        "pcap" => pcap(data),
        "coalesce" => coalesce(data),
        other => panic!("no fuzz target named {other}"),
    }
}

/// The pcap reader (replay source) on arbitrary file bytes.
pub fn pcap(data: &[u8]) {
    // Global header 24 bytes, record header 16: no file holds more records than this.
    let most = (data.len().saturating_sub(24) / 16) as u64;
    match nicsim_core::probe::pcap_read::parse(data) {
        Ok(capture) => {
            assert!(
                capture.records.len() as u64 <= most,
                "{} records from {} bytes",
                capture.records.len(),
                data.len()
            );
            let bytes: usize = capture.records.iter().map(|r| r.data.len()).sum();
            assert!(bytes <= data.len(), "records hold {bytes} bytes, the file {}", data.len());
            for r in &capture.records {
                assert!(r.data.len() as u64 <= u64::from(r.orig_len), "a record captured more than its wire length");
            }
        }
        Err(e) => {
            if let Some(n) = e.record {
                assert!((1..=most + 1).contains(&n), "error names record {n} of a {}-byte file", data.len());
            }
            assert!(!e.reason.is_empty());
        }
    }
}

/// Scenario loader: arbitrary text through parsing and validation.
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(s) = nicsim_core::config::parse(text) else { return };
    // A valid scenario, written back out with canonical units, is the same scenario.
    let again = toml::to_string(&s).unwrap_or_else(|e| panic!("a valid scenario does not serialise: {e}"));
    let back =
        nicsim_core::config::parse(&again).unwrap_or_else(|e| panic!("re-serialised scenario rejected: {e}\n{again}"));
    let (a, b) = (serde_json::to_string(&s).expect("json"), serde_json::to_string(&back).expect("json"));
    assert_eq!(a, b, "scenario changed on a round trip through TOML");
}

fn round_trip<Q: Quantity + PartialEq + std::fmt::Debug + std::fmt::Display>(text: &str) {
    if let Ok(v) = Q::parse(text) {
        let shown = v.to_string();
        assert_eq!(Q::parse(&shown), Ok(v), "{text:?} parsed to {v:?}, shown as {shown:?}");
    }
}

/// Unit parsers: every quantity type on the same text.
pub fn units(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    round_trip::<Bandwidth>(text);
    round_trip::<Frequency>(text);
    round_trip::<Duration>(text);
    round_trip::<Size>(text);
}

/// The TCP payload of a TCP/IPv4 frame (up to the IP total length), if it is one.
fn tcp_payload(frame: &[u8]) -> Option<&[u8]> {
    let v = nicsim_core::probe::wire::TcpView::parse(frame)?;
    Some(&frame[v.headers()..v.headers() + v.payload])
}

/// TSO and checksum offload: the first two bytes choose the MSS, the rest is the frame.
pub fn tso(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let mss = 1 + usize::from(u16::from_le_bytes([data[0], data[1]])) % 9000;
    let frame = &data[2..];
    let out = segment(frame, mss);
    assert!(!out.is_empty(), "segmentation lost the frame");
    let Some(payload) = tcp_payload(frame) else {
        assert_eq!(out, vec![frame.to_vec()], "a frame that is not TCP/IPv4 passes through");
        return;
    };
    let mut carried = Vec::with_capacity(payload.len());
    for (i, seg) in out.iter().enumerate() {
        let p = tcp_payload(seg).unwrap_or_else(|| panic!("segment {i} is not a TCP/IPv4 frame"));
        assert!(p.len() <= mss || out.len() == 1, "segment {i} carries {} bytes, above the MSS {mss}", p.len());
        let ip = Ipv4Packet::new_checked(&seg[14..]).expect("checked above");
        assert!(ip.verify_checksum(), "segment {i}: bad IP checksum");
        let tcp = TcpPacket::new_checked(ip.payload()).expect("checked above");
        let (src, dst) = (IpAddress::Ipv4(ip.src_addr()), IpAddress::Ipv4(ip.dst_addr()));
        assert!(tcp.verify_checksum(&src, &dst), "segment {i}: bad TCP checksum");
        carried.extend_from_slice(p);
    }
    assert_eq!(carried, payload, "the segments do not carry the payload in order");
}

/// TCP wire monitor: frames, each preceded by a two-byte length.
pub fn wire_monitor(data: &[u8]) {
    let mut m = TcpMonitor::default();
    let mut rest = data;
    let mut frames = 0u64;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        m.observe(&rest[2..2 + len]);
        frames += 1;
        rest = &rest[2 + len..];
    }
    assert!(m.data_segments <= frames, "{} data segments in {frames} frames", m.data_segments);
    assert!(m.retransmissions <= m.data_segments, "{} retransmissions of {}", m.retransmissions, m.data_segments);
}

/// One link direction with impairments driven by arbitrary operations:
/// 8 bytes of settings (rate, queue bound, loss, duplicate, reorder,
/// corrupt, seed), then one operation per byte.
pub fn link_channel(data: &[u8]) {
    if data.len() < 8 {
        return;
    }
    let (head, ops) = data.split_at(8);
    let p = |b: u8| f64::from(b) / 255.0;
    let rate = [10_000_000, 1_000_000_000, 7_000_000_000, 400_000_000_000][usize::from(head[0] & 3)];
    let capacity = 1 + usize::from(head[1] % 16);
    let impair = Impairments {
        loss: p(head[2]),
        duplicate: p(head[3]),
        reorder: p(head[4]),
        reorder_delay: Duration(20_000_000),
        corrupt: p(head[5]),
    };
    let rng = component_rng(u64::from(u16::from_le_bytes([head[6], head[7]])), "fuzz/link");
    let mut c = Channel::new(Bandwidth(rate), Dur(500_000), capacity, true, impair, rng);
    // What was sent, in queue order, to compare with what arrives.
    let mut sent: std::collections::VecDeque<Vec<u8>> = Default::default();
    let (mut offered, mut copies, mut busy_ps) = (0u64, 0u64, 0u64);
    for (i, &op) in ops.iter().enumerate() {
        match op % 4 {
            0 => {
                let frame: Vec<u8> = (0..usize::from(op) * 7).map(|j| (i + j) as u8).collect();
                offered += 1;
                if c.enqueue(frame.clone()) {
                    sent.push_back(frame);
                }
            }
            1 => {
                if let Some((t, frame)) = c.start() {
                    assert_eq!(frame, &sent[0][..], "the wire carries the head of the queue");
                    assert!(t.0 > 0, "a frame takes time to send");
                    busy_ps += t.0;
                }
            }
            2 if c.is_busy() => {
                let original = sent.pop_front().expect("a frame is on the wire");
                let before = c.stats.corrupted;
                let out = c.finish();
                assert!(out.len() <= 2, "{} copies of one frame", out.len());
                for d in &out {
                    assert_eq!(d.frame.len(), original.len(), "a delivered frame changed length");
                    let flipped: u32 = d.frame.iter().zip(&original).map(|(a, b)| (a ^ b).count_ones()).sum();
                    let corrupted = c.stats.corrupted - before;
                    assert_eq!(u64::from(flipped), corrupted, "bits flipped without a corruption counted");
                    assert!(d.frame[..14.min(d.frame.len())] == original[..14.min(original.len())], "header corrupted");
                }
                copies += out.len() as u64;
            }
            2 => {}
            _ => c.paused = op & 4 != 0,
        }
        c.check_invariants().unwrap_or_else(|e| panic!("after operation {i}: {e}"));
    }
    let st = &c.stats;
    assert_eq!(offered, st.queue_drops + st.delivered + st.lost + c.queued() as u64, "frames not conserved");
    assert_eq!(copies, st.delivered + st.duplicated, "copies delivered");
    assert_eq!(busy_ps, st.busy_ps, "busy time");
    assert_eq!(sent.len(), c.queued(), "queue contents");
}

// ------------------------------------------------------------- coalesce

/// Most frames one `coalesce` input offers (copies included).
const COALESCE_FRAMES: usize = 200;
/// Generated TCP flows (client 10.1.0.f:1000+f to 10.0.0.1:5001).
const COALESCE_FLOWS: usize = 8;
/// Largest generated payload (a 1500-byte MTU's MSS).
const COALESCE_MSS: usize = 1460;

/// The byte at stream offset `off` (bytes after the ISN) of generated flow
/// `flow`: a hash, so a byte moved anywhere else in the stream shows.
fn stream_byte(flow: usize, off: u64) -> u8 {
    let x = (off as u32 ^ ((flow as u32) << 28)).wrapping_mul(0x9E37_79B1);
    (x >> 24) as u8
}

fn flow_addrs(flow: usize) -> (Ipv4Address, Ipv4Address) {
    (Ipv4Address::new(10, 1, 0, flow as u8), Ipv4Address::new(10, 0, 0, 1))
}

/// The sender's state of one generated flow: where its stream stands and
/// the header fields its next segment carries.
#[derive(Debug, Clone)]
struct GenFlow {
    isn: u32,
    /// Offset of the first byte not yet sent.
    cursor: u64,
    /// Offset of the latest segment's first byte.
    last: u64,
    ack: u32,
    window: u16,
    ident: u16,
    ttl: u8,
    tos: u8,
    df: bool,
    timestamps: bool,
}

/// An IPv4 header (no options) with a valid checksum, then `payload`.
fn ipv4_datagram(proto: u8, frag: u16, src: Ipv4Address, dst: Ipv4Address, payload: &[u8]) -> Vec<u8> {
    let mut b = vec![0x45, 0];
    b.extend_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
    b.extend_from_slice(&[0, 1]);
    b.extend_from_slice(&frag.to_be_bytes());
    b.extend_from_slice(&[64, proto, 0, 0]);
    b.extend_from_slice(&src.octets());
    b.extend_from_slice(&dst.octets());
    b.extend_from_slice(payload);
    Ipv4Packet::new_unchecked(&mut b[..]).fill_checksum();
    b
}

/// Ethernet header from host `from` (a flow number, or 0xff) to the receiver.
fn ethernet(from: u8, ethertype: [u8; 2]) -> Vec<u8> {
    vec![2, 0, 0, 0, 0, 0xff, 2, 0, 0, 0, 0, from, ethertype[0], ethertype[1]]
}

/// A valid Ethernet/IPv4/TCP frame of flow `flow` carrying stream bytes
/// `[off, off + len)` with TCP flags `flags`; returns it and its IP header length.
fn gen_segment(flow: usize, g: &GenFlow, off: u64, len: usize, flags: u8, ip_options: bool) -> (Vec<u8>, usize) {
    let (src, dst) = flow_addrs(flow);
    let ip_hlen = if ip_options { 24 } else { 20 };
    let tcp_hlen = if g.timestamps { 32 } else { 20 };
    let total = ip_hlen + tcp_hlen + len;
    let mut b = ethernet(flow as u8, [0x08, 0x00]);
    b.reserve(total);
    b.extend_from_slice(&[0x40 | (ip_hlen / 4) as u8, g.tos]);
    b.extend_from_slice(&(total as u16).to_be_bytes());
    b.extend_from_slice(&g.ident.to_be_bytes());
    b.extend_from_slice(&[if g.df { 0x40 } else { 0 }, 0, g.ttl, 6, 0, 0]);
    b.extend_from_slice(&src.octets());
    b.extend_from_slice(&dst.octets());
    if ip_options {
        b.extend_from_slice(&[1, 1, 1, 0]); // NOP NOP NOP EOL
    }
    b.extend_from_slice(&(1000 + flow as u16).to_be_bytes());
    b.extend_from_slice(&5001u16.to_be_bytes());
    b.extend_from_slice(&g.isn.wrapping_add(off as u32).to_be_bytes());
    b.extend_from_slice(&g.ack.to_be_bytes());
    b.extend_from_slice(&[((tcp_hlen / 4) as u8) << 4, flags]);
    b.extend_from_slice(&g.window.to_be_bytes());
    b.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    if g.timestamps {
        b.extend_from_slice(&[1, 1, 8, 10, 0, 0, 0x10, flow as u8, 0, 0, 0, 7]);
    }
    b.extend((0..len as u64).map(|i| stream_byte(flow, off + i)));
    let mut ip = Ipv4Packet::new_unchecked(&mut b[14..]);
    ip.fill_checksum();
    let mut tcp = TcpPacket::new_unchecked(&mut b[14 + ip_hlen..]);
    tcp.fill_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst));
    (b, ip_hlen)
}

/// Bytes read one at a time, zero past the end.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
}

/// The generated flows' ISNs: byte 2 of a `coalesce` input sets their top
/// byte (0: each a few segments before the sequence wrap).
fn coalesce_isns(data: &[u8]) -> Vec<u32> {
    let base = u32::from(data.get(2).copied().unwrap_or(0)) << 24;
    (0..COALESCE_FLOWS).map(|f| base.wrapping_sub(1000 + 7919 * f as u32)).collect()
}

/// The frames a `coalesce` input describes: 3 bytes of settings, then
/// records (see [`coalesce`]).
fn coalesce_frames(data: &[u8]) -> Vec<Vec<u8>> {
    const ACK: u8 = 0x10;
    let mut flows: Vec<GenFlow> = coalesce_isns(data)
        .into_iter()
        .enumerate()
        .map(|(f, isn)| GenFlow {
            isn,
            cursor: 0,
            last: 0,
            ack: 1 + f as u32,
            window: 8192,
            ident: (f as u16) << 12,
            ttl: 64,
            tos: 0,
            df: true,
            timestamps: f % 2 == 1,
        })
        .collect();
    let mut r = Bytes(data.get(3..).unwrap_or(&[]));
    let mut frames: Vec<Vec<u8>> = Vec::new();
    // The latest generated segment and its IP header length, for the copy records.
    let mut last: Option<(Vec<u8>, usize)> = None;
    while !r.0.is_empty() && frames.len() < COALESCE_FRAMES {
        let t = r.next();
        let flow = usize::from(t & 7);
        match t >> 3 {
            0..=27 => {
                let (sel, p) = (r.next(), r.next());
                let len = usize::from(u16::from_le_bytes([r.next(), r.next()])) % (COALESCE_MSS + 1);
                let g = &mut flows[flow];
                match sel >> 5 {
                    4 => g.ack = g.ack.wrapping_add(1 + 1000 * u32::from(p)),
                    5 => g.window = g.window.wrapping_add(1 + u16::from(p)),
                    6 => g.ident = g.ident.wrapping_sub(1), // the next repeats the last
                    7 => match p & 3 {
                        0 => g.timestamps = !g.timestamps,
                        1 => g.df = !g.df,
                        2 => g.ttl = g.ttl.wrapping_sub(1),
                        _ => g.tos ^= 0x04,
                    },
                    _ => {}
                }
                g.ident = g.ident.wrapping_add(1);
                let flags = match sel & 31 {
                    16..=19 => ACK | 0x08, // PSH
                    20 => ACK | 0x01,      // FIN
                    21 => ACK | 0x09,      // FIN PSH
                    22 => ACK | 0x02,      // SYN
                    23 => ACK | 0x04,      // RST
                    24 => ACK | 0x20,      // URG
                    25 => ACK | 0x40,      // ECE
                    26 => ACK | 0x80,      // CWR
                    27 => 0,               // no ACK
                    29 => ACK | 0x88,      // PSH CWR
                    _ => ACK,
                };
                // Position: in order, a retransmission at or before the latest
                // segment, or after a hole.
                let step = u64::from(p & 15) * 211;
                let off = match p >> 6 {
                    2 => g.last.saturating_sub(step),
                    3 => g.cursor + 1 + step,
                    _ => g.cursor,
                };
                g.last = off;
                g.cursor = g.cursor.max(off + len as u64);
                let (frame, ip_hlen) = gen_segment(flow, g, off, len, flags, sel & 31 == 28);
                frames.push(frame.clone());
                if p & 16 != 0 && frames.len() < COALESCE_FRAMES {
                    frames.push(frame.clone()); // duplicated
                }
                if p & 32 != 0 {
                    // Reordered: overtakes up to four frames.
                    let n = frames.len();
                    let to = n - 1 - (1 + usize::from(p & 3)).min(n - 1);
                    let f = frames.pop().expect("just pushed");
                    frames.insert(to, f);
                }
                last = Some((frame, ip_hlen));
            }
            28 => {
                // Raw bytes; never with source 10.x.x.x, so never one of the generated flows.
                let n = usize::from(u16::from_le_bytes([r.next(), r.next()])) % 1600;
                let mut raw: Vec<u8> = (0..n.min(r.0.len())).map(|_| r.next()).collect();
                if raw.len() > 26 && raw[26] == 10 {
                    raw[26] = 11;
                }
                frames.push(raw);
            }
            29 => {
                // The latest segment cut short.
                let c = usize::from(r.next());
                if let Some((f, _)) = &last {
                    frames.push(f[..c * f.len() / 256].to_vec());
                }
            }
            30 => {
                // The latest segment again with a bad IP or TCP checksum or another MAC.
                let c = r.next();
                if let Some((f, ip_hlen)) = &last {
                    let mut d = f.clone();
                    let at = [24, 14 + ip_hlen + 16, 11, 5][usize::from(c & 3)];
                    d[at] ^= (c >> 2) | 1;
                    frames.push(d);
                }
            }
            _ => {
                // Traffic that is not a TCP segment: ARP, UDP or a later IP fragment of the flow.
                let c = r.next();
                let (src, dst) = flow_addrs(flow);
                let frame = match c % 3 {
                    0 => [ethernet(0xff, [0x08, 0x06]), vec![0; 28]].concat(),
                    1 => [
                        ethernet(flow as u8, [0x08, 0x00]),
                        ipv4_datagram(17, 0, src, dst, &[0, 1, 0, 2, 0, 12, 0, 0, 1, 2, 3, 4]),
                    ]
                    .concat(),
                    _ => [ethernet(flow as u8, [0x08, 0x00]), ipv4_datagram(6, 1 + u16::from(c), src, dst, &[c; 40])]
                        .concat(),
                };
                frames.push(frame);
            }
        }
    }
    frames
}

/// A generated flow's segment: (flow, sequence number, payload), if
/// `frame` is a TCP/IPv4 frame of one of the generated flows.
fn generated(frame: &[u8]) -> Option<(usize, u32, &[u8])> {
    let payload = tcp_payload(frame)?;
    let ip = Ipv4Packet::new_checked(&frame[14..]).ok()?;
    let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
    let flow = (0..COALESCE_FLOWS).find(|&f| flow_addrs(f) == (ip.src_addr(), ip.dst_addr()))?;
    if (tcp.src_port(), tcp.dst_port()) != (1000 + flow as u16, 5001) {
        return None;
    }
    Some((flow, tcp.seq_number().0 as u32, payload))
}

/// Check the generated flows' bytes in `frames` (each at its sequence
/// number) and return the stream ranges they cover, per flow, merged.
fn flow_coverage(frames: &[&[u8]], flows: &[u32], who: &str) -> Vec<Vec<(u64, u64)>> {
    let mut spans: Vec<Vec<(u64, u64)>> = vec![Vec::new(); flows.len()];
    for (i, frame) in frames.iter().enumerate() {
        let Some((flow, seq, payload)) = generated(frame) else { continue };
        let start = u64::from(seq.wrapping_sub(flows[flow]));
        for (j, &b) in payload.iter().enumerate() {
            let want = stream_byte(flow, start + j as u64);
            assert_eq!(b, want, "{who}: frame {i}, flow {flow}: wrong byte at stream offset {}", start + j as u64);
        }
        if !payload.is_empty() {
            spans[flow].push((start, start + payload.len() as u64));
        }
    }
    for s in &mut spans {
        s.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(s.len());
        for &(a, b) in s.iter() {
            match merged.last_mut() {
                Some(m) if a <= m.1 => m.1 = m.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *s = merged;
    }
    spans
}

/// A frame a coalescing engine made (merged or trimmed) must be TCP/IPv4
/// with an IP total length covering exactly the frame and valid checksums.
/// The checksums are computed here with smoltcp's checksum functions rather
/// than `verify_checksum`, which returns true under `cfg(fuzzing)`.
fn check_made_frame(frame: &[u8], who: &str) {
    let eth = EthernetFrame::new_checked(frame).unwrap_or_else(|e| panic!("{who}: not Ethernet: {e}"));
    assert_eq!(eth.ethertype(), EthernetProtocol::Ipv4, "{who}: not IPv4");
    let ip = Ipv4Packet::new_checked(eth.payload()).unwrap_or_else(|e| panic!("{who}: bad IPv4 header: {e}"));
    assert_eq!(ip.version(), 4, "{who}: IP version");
    assert_eq!(ip.next_header(), IpProtocol::Tcp, "{who}: not TCP");
    assert_eq!(usize::from(ip.total_len()), frame.len() - 14, "{who}: IP total length is not the frame's");
    let header = &eth.payload()[..usize::from(ip.header_len())];
    assert_eq!(checksum::data(header), !0, "{who}: bad IP header checksum");
    let tcp = TcpPacket::new_checked(ip.payload()).unwrap_or_else(|e| panic!("{who}: bad TCP header: {e}"));
    let segment = tcp.into_inner();
    let pseudo = checksum::pseudo_header_v4(&ip.src_addr(), &ip.dst_addr(), IpProtocol::Tcp, segment.len() as u32);
    assert_eq!(checksum::combine(&[pseudo, checksum::data(segment)]), !0, "{who}: bad TCP checksum");
}

/// What an engine reported, for [`check_coalesced`].
struct EngineReport {
    frames_in: u64,
    frames_out: u64,
    bytes_out: u64,
    held: usize,
    /// Segments and payload bytes dropped as duplicates (LRO only).
    dup_segments: u64,
    dup_bytes: u64,
}

/// Total TCP payload bytes of the TCP/IPv4 frames among `frames`.
fn payload_bytes<'a>(frames: impl Iterator<Item = &'a [u8]>) -> u64 {
    frames.map(|f| tcp_payload(f).map_or(0, |p| p.len() as u64)).sum()
}

/// The frames offered to the engines and what the checks need of them.
struct Offered<'a> {
    frames: &'a [Vec<u8>],
    exact: HashSet<&'a [u8]>,
    payload: u64,
    isns: Vec<u32>,
    cover: Vec<Vec<(u64, u64)>>,
}

impl<'a> Offered<'a> {
    fn new(frames: &'a [Vec<u8>], isns: Vec<u32>) -> Self {
        let all: Vec<&[u8]> = frames.iter().map(|f| &f[..]).collect();
        Offered {
            frames,
            exact: all.iter().copied().collect(),
            payload: payload_bytes(all.iter().copied()),
            cover: flow_coverage(&all, &isns, "input"),
            isns,
        }
    }
}

fn check_coalesced(who: &str, input: &Offered<'_>, out: &[Coalesced], r: &EngineReport) {
    let n = input.frames.len() as u64;
    assert_eq!(r.held, 0, "{who}: segments held after the final flush");
    assert_eq!(r.frames_in, n, "{who}: frames in");
    assert_eq!(r.frames_out, out.len() as u64, "{who}: frames out counted");
    let bytes: u64 = out.iter().map(|c| c.frame.len() as u64).sum();
    assert_eq!(r.bytes_out, bytes, "{who}: bytes out counted");
    // 3. Frames: no more out than in; every frame in went up inside one frame
    // out or was dropped as a duplicate.
    assert!(out.len() as u64 <= n, "{who}: {} frames out of {n} in", out.len());
    let segments: u64 = out.iter().map(|c| u64::from(c.segments)).sum();
    assert_eq!(segments + r.dup_segments, n, "{who}: {segments} segments up and {} dropped of {n}", r.dup_segments);
    // 2. A frame that is not exactly one received, or that holds several
    // segments, was made by the engine and must be valid.
    for (i, c) in out.iter().enumerate() {
        assert!(c.segments >= 1, "{who}: frame {i} of no segment");
        if c.segments > 1 || !input.exact.contains(&c.frame[..]) {
            check_made_frame(&c.frame, &format!("{who}: frame {i} ({} segments)", c.segments));
        }
    }
    // 3. Payload: what went up is what came in, less the counted duplicates.
    let frames_out: Vec<&[u8]> = out.iter().map(|c| &c.frame[..]).collect();
    let p_out = payload_bytes(frames_out.iter().copied());
    let p_in = input.payload;
    assert_eq!(p_out + r.dup_bytes, p_in, "{who}: {p_out} payload bytes out, {} dropped, {p_in} in", r.dup_bytes);
    // 4. Every generated byte out sits at its sequence number, and the bytes
    // out cover the same stream ranges as the bytes in.
    let cover_out = flow_coverage(&frames_out, &input.isns, who);
    for (flow, (a, b)) in input.cover.iter().zip(&cover_out).enumerate() {
        assert_eq!(a, b, "{who}: flow {flow} stream ranges in (left) and out (right) differ");
    }
}

/// Receive coalescing: NIC LRO (the study's sizes, and small sizes from
/// byte 0) and host GRO (limits and poll-batch length from byte 1) on the
/// frames the bytes describe, each flushed at the end.
///
/// Byte 2 sets the eight flows' ISNs (0: just before the sequence wrap).
/// Then records, until the input ends or 200 frames are made; the first
/// byte's low 3 bits name a flow (0..7) and its top 5 bits the kind:
/// * 0..=27, a data segment, 4 more bytes: `sel` (low 5 bits: flags — PSH,
///   FIN, SYN, RST, URG, ECE, CWR, no ACK, IP options, mostly none; top 3:
///   a lasting header change — ACK number, window, a repeated IP ID, or
///   timestamps, DF, TTL, TOS), `pos` (top 2 bits: in order, a
///   retransmission from the latest segment back `(pos & 15) × 211` bytes,
///   or after a hole of `1 + (pos & 15) × 211`; bit 4 duplicates, bit 5
///   moves it up to 4 frames earlier), and a little-endian length, modulo
///   1461 (0 is a pure ACK). The payload at stream offset `o` of flow `f`
///   is `stream_byte(f, o)`.
/// * 28: 2-byte length (mod 1600) and that many raw bytes.
/// * 29: the latest segment cut at `byte / 256` of its length.
/// * 30: the latest segment again with a byte of its IP or TCP checksum or
///   of a MAC address changed.
/// * 31: ARP, UDP, or a later IP fragment of the flow.
pub fn coalesce(data: &[u8]) {
    let frames = coalesce_frames(data);
    let input = Offered::new(&frames, coalesce_isns(data));
    let setting = |i: usize| data.get(i).copied().unwrap_or(0);
    let (h0, h1) = (setting(0), setting(1));
    let small = LroConfig {
        cam_entries: 1 + usize::from(h0 & 3),
        pages: usize::from((h0 >> 2) & 3),
        page_size: [2048, 4096, 9000, 30 * 1024][usize::from((h0 >> 4) & 3)],
        flush_packets: [1, 3, 7, 1000][usize::from(h0 >> 6)],
        trusted: false,
    };
    for (who, cfg) in [("NIC LRO (study)", LroConfig::default()), ("NIC LRO (small)", small)] {
        let mut lro = NicLro::new(cfg);
        let mut out = Vec::new();
        for f in &frames {
            lro.push(f.clone(), &mut out);
        }
        lro.flush(&mut out);
        let s = lro.stats();
        let report = EngineReport {
            frames_in: s.frames_in,
            frames_out: s.frames_out,
            bytes_out: s.bytes_out,
            held: lro.held(),
            dup_segments: s.duplicates_dropped,
            dup_bytes: s.duplicate_bytes,
        };
        check_coalesced(who, &input, &out, &report);
    }
    let cfg = GroConfig {
        max_flows: [64, 1, 2, 3][usize::from((h1 >> 4) & 3)],
        max_ip_len: [GroConfig::default().max_ip_len, 9000, 4000, 1500][usize::from(h1 >> 6)],
        trusted: false,
    };
    let batch = usize::from(h1 & 15); // frames per poll batch; 0: one batch
    let mut gro = Gro::new(cfg);
    let mut out = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        gro.push(f.clone(), &mut out);
        if batch > 0 && (i + 1) % batch == 0 {
            gro.flush(&mut out);
        }
    }
    gro.flush(&mut out);
    let s = gro.stats();
    let report = EngineReport {
        frames_in: s.frames_in,
        frames_out: s.frames_out,
        bytes_out: s.bytes_out,
        held: gro.held(),
        dup_segments: 0,
        dup_bytes: 0,
    };
    check_coalesced("GRO", &input, &out, &report);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "no fuzz target")]
    fn an_unknown_target_is_an_error() {
        run("nope", b"");
    }

    /// Four in-order segments of flow 0 (the last with PSH) through the
    /// study's LRO: one merged frame.
    fn merged() -> (Vec<Vec<u8>>, Vec<u32>, Vec<Coalesced>, EngineReport) {
        let mut data = vec![0, 0, 0];
        for sel in [0, 0, 0, 16] {
            data.extend_from_slice(&[0, sel, 0, 100, 0]);
        }
        let input = coalesce_frames(&data);
        let mut lro = NicLro::new(LroConfig::default());
        let mut out = Vec::new();
        for f in &input {
            lro.push(f.clone(), &mut out);
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].segments, 4);
        let s = lro.stats();
        let report = EngineReport {
            frames_in: s.frames_in,
            frames_out: s.frames_out,
            bytes_out: s.bytes_out,
            held: lro.held(),
            dup_segments: 0,
            dup_bytes: 0,
        };
        check_coalesced("LRO", &Offered::new(&input, coalesce_isns(&data)), &out, &report);
        (input, coalesce_isns(&data), out, report)
    }

    /// Recompute the IP total length and both checksums of a TCP/IPv4 frame.
    fn refill(frame: &mut [u8]) {
        let len = frame.len() - 14;
        let mut ip = Ipv4Packet::new_unchecked(&mut frame[14..]);
        ip.set_total_len(len as u16);
        ip.fill_checksum();
        let (src, dst) = (IpAddress::Ipv4(ip.src_addr()), IpAddress::Ipv4(ip.dst_addr()));
        TcpPacket::new_unchecked(&mut frame[34..]).fill_checksum(&src, &dst);
    }

    #[test]
    #[should_panic(expected = "wrong byte at stream offset")]
    fn coalesce_catches_a_misplaced_byte() {
        let (input, isns, mut out, report) = merged();
        let f = &mut out[0].frame;
        f.swap(54 + 150, 54 + 151);
        refill(f);
        check_coalesced("LRO", &Offered::new(&input, isns), &out, &report);
    }

    #[test]
    #[should_panic(expected = "bad TCP checksum")]
    fn coalesce_catches_a_bad_checksum_on_a_merged_frame() {
        let (input, isns, mut out, report) = merged();
        out[0].frame[60] ^= 1;
        check_coalesced("LRO", &Offered::new(&input, isns), &out, &report);
    }

    #[test]
    #[should_panic(expected = "payload bytes out")]
    fn coalesce_catches_lost_payload() {
        let (input, isns, mut out, mut report) = merged();
        let f = &mut out[0].frame;
        f.truncate(f.len() - 10);
        refill(f);
        report.bytes_out -= 10;
        check_coalesced("LRO", &Offered::new(&input, isns), &out, &report);
    }

    #[test]
    #[should_panic(expected = "stream ranges in (left) and out (right) differ")]
    fn coalesce_catches_bytes_counted_as_duplicates_but_lost() {
        let (input, isns, mut out, mut report) = merged();
        let f = &mut out[0].frame;
        f.truncate(f.len() - 10);
        refill(f);
        report.bytes_out -= 10;
        report.dup_bytes = 10;
        check_coalesced("LRO", &Offered::new(&input, isns), &out, &report);
    }
}
