//! Fuzz target bodies: one function per target, taking arbitrary bytes.
//!
//! Each function feeds the bytes to a parser or engine that reads untrusted
//! input and panics only if a property fails (a bug). The cargo-fuzz crate in
//! `fuzz/` calls them under libFuzzer on nightly; an ordinary `cargo test`
//! replays the checked-in corpus (`fuzz/corpus/<target>/`) through the same
//! functions on stable (`tests/integration/fuzz_corpus.rs`), so a crash once
//! found stays fixed. Nothing here runs in a simulation.
//!
//! | target | input | property |
//! | --- | --- | --- |
//! | [`scenario`] | TOML text | parse + validate returns a value or an error; a valid scenario re-serialises to TOML that parses to the same scenario |
//! | [`units`] | text | each quantity parses or errs; a parsed value prints as text that parses back to it |
//! | [`tso`] | MSS + frame | segmentation returns frames with valid checksums carrying the input's payload in order |
//! | [`wire_monitor`] | frames | the TCP monitor counts no more data segments than frames, no more retransmissions than data segments |
//! | [`link_channel`] | settings + operations | a link direction with impairments conserves frames and changes at most one bit of any frame |
//! | [`pcap`] | file bytes | the pcap reader returns a capture or an error naming the header or a record within the file; no record holds more than its wire length or more bytes than the file |

use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpAddress, IpProtocol, Ipv4Packet, TcpPacket};

use crate::config::Impairments;
use crate::engine::rng::component_rng;
use crate::engine::units::{Bandwidth, Duration, Frequency, Quantity, Size};
use crate::engine::Dur;
use crate::link::Channel;
use crate::nic::tso::segment;
use crate::probe::wire::TcpMonitor;

/// The names of the targets, as `fuzz/fuzz_targets/<name>.rs` and
/// `fuzz/corpus/<name>/`.
pub const TARGETS: [&str; 6] = ["scenario", "units", "tso", "wire_monitor", "link_channel", "pcap"];

/// Run target `name` on `data`; panics on an unknown name.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "scenario" => scenario(data),
        "units" => units(data),
        "tso" => tso(data),
        "wire_monitor" => wire_monitor(data),
        "link_channel" => link_channel(data),
        "pcap" => pcap(data),
        other => panic!("no fuzz target named {other}"),
    }
}

/// The pcap reader (replay source) on arbitrary file bytes.
pub fn pcap(data: &[u8]) {
    // Global header 24 bytes, record header 16: no file holds more records than this.
    let most = (data.len().saturating_sub(24) / 16) as u64;
    match crate::probe::pcap_read::parse(data) {
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
    let Ok(s) = crate::config::parse(text) else { return };
    // A valid scenario, written back out with canonical units, is the same scenario.
    let again = toml::to_string(&s).unwrap_or_else(|e| panic!("a valid scenario does not serialise: {e}"));
    let back = crate::config::parse(&again).unwrap_or_else(|e| panic!("re-serialised scenario rejected: {e}\n{again}"));
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
    let eth = EthernetFrame::new_checked(frame).ok()?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let ip = Ipv4Packet::new_checked(eth.payload()).ok()?;
    if ip.next_header() != IpProtocol::Tcp || ip.more_frags() || ip.frag_offset() != 0 {
        return None;
    }
    let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
    let off = frame.len() - eth.payload().len() + usize::from(ip.header_len()) + usize::from(tcp.header_len());
    Some(&frame[off..off + tcp.payload().len()])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "no fuzz target")]
    fn an_unknown_target_is_an_error() {
        run("nope", b"");
    }
}
