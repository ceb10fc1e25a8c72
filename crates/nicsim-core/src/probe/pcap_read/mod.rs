//! Reading capture files as untrusted input: classic pcap (libpcap format)
//! and pcapng (Wireshark's default, and `tcpdump`'s with `--pcapng`).
//!
//! Classic pcap: the global header (magic `a1b2c3d4` with microsecond or
//! `a1b23c4d` with nanosecond timestamps, in either byte order), then
//! records of a 16-byte header and the captured bytes.
//!
//! ```text
//!  global header (24 B): magic | major 2 | minor 4 | zone | sigfigs | snaplen | linktype
//!  record header (16 B): seconds | µs or ns | captured length | original length
//! ```
//!
//! pcapng: blocks read with the `pcap-file` crate's parser; every section
//! (its own byte order), every interface (its own link type, timestamp
//! resolution `if_tsresol` and offset `if_tsoffset`), and Enhanced, Simple
//! and (obsolete) Packet blocks. Other blocks (name resolution, statistics,
//! custom) are skipped.
//!
//! Every malformation is an error naming the record (classic pcap, numbered
//! from 1 as Wireshark numbers frames) or the block (pcapng, numbered from
//! 1, with the packet number when it is a packet block) and the reason;
//! nothing panics.
//!
//! [`network_layer`] finds the network-layer packet inside a record of the
//! link types nicsim reads: Ethernet (with any number of 802.1Q/802.1ad VLAN
//! tags), Linux cooked capture SLL and SLL2, raw IP, and BSD loopback.

mod pcapng;

use std::fmt;

/// BSD loopback (`LINKTYPE_NULL`): a 4-byte address family in host order.
pub const LINKTYPE_NULL: u32 = 0;
/// Link types this reader knows the headers of.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Raw IP (`LINKTYPE_RAW`).
pub const LINKTYPE_RAW: u32 = 101;
/// Linux cooked capture v1 (`LINKTYPE_LINUX_SLL`, `tcpdump -i any` before libpcap 1.10).
pub const LINKTYPE_LINUX_SLL: u32 = 113;
/// Raw IPv4 (`LINKTYPE_IPV4`).
pub const LINKTYPE_IPV4: u32 = 228;
/// Raw IPv6 (`LINKTYPE_IPV6`).
pub const LINKTYPE_IPV6: u32 = 229;
/// Linux cooked capture v2 (`LINKTYPE_LINUX_SLL2`, `tcpdump -i any` since libpcap 1.10).
pub const LINKTYPE_LINUX_SLL2: u32 = 276;

/// Largest captured length accepted (libpcap's `MAXIMUM_SNAPLEN`).
pub const MAX_RECORD: u32 = 262_144;

mod field {
    pub const GLOBAL_HEADER: usize = 24;
    pub const RECORD_HEADER: usize = 16;
    pub const MAGIC_MICRO: u32 = 0xa1b2_c3d4;
    pub const MAGIC_NANO: u32 = 0xa1b2_3c4d;
    pub const MAGIC_PCAPNG: u32 = 0x0a0d_0d0a;
}

/// Where a capture file is malformed and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcapError {
    /// Record (classic pcap) or packet (pcapng) number from 1; `None` for
    /// the file header or a block that is not a packet.
    pub record: Option<u64>,
    /// pcapng block number from 1; `None` for classic pcap.
    pub block: Option<u64>,
    /// What is wrong.
    pub reason: String,
}

impl PcapError {
    /// An error in the file header (or of the file as a whole).
    pub fn header(reason: impl Into<String>) -> Self {
        PcapError { record: None, block: None, reason: reason.into() }
    }

    /// An error in record (packet) `n` of a classic pcap file.
    pub fn record(n: u64, reason: impl Into<String>) -> Self {
        PcapError { record: Some(n), block: None, reason: reason.into() }
    }
}

impl fmt::Display for PcapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.block, self.record) {
            (Some(b), Some(n)) => write!(f, "pcapng block {b} (packet {n}): {}", self.reason),
            (Some(b), None) => write!(f, "pcapng block {b}: {}", self.reason),
            (None, Some(n)) => write!(f, "pcap record {n}: {}", self.reason),
            (None, None) => write!(f, "pcap header: {}", self.reason),
        }
    }
}

impl std::error::Error for PcapError {}

/// One captured frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Timestamp in nanoseconds since the epoch.
    pub time_ns: u128,
    /// Length of the frame on the wire.
    pub orig_len: u32,
    /// The captured bytes (at most `orig_len`).
    pub data: Vec<u8>,
    /// Index into [`Capture::interfaces`] (0 for classic pcap).
    pub interface: usize,
}

/// The file format a capture came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Classic libpcap format.
    Pcap,
    /// pcapng.
    PcapNg,
}

/// An interface the capture was taken on (classic pcap: one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// Link type of its records (1 Ethernet, 113 SLL, 276 SLL2, ...).
    pub linktype: u32,
    /// Timestamp unit in nanoseconds as a fraction `num / den`
    /// (µs: 1000/1; ns: 1/1; pcapng `if_tsresol` 2⁻¹⁰: 10⁹/1024).
    pub unit: (u128, u128),
    /// Seconds added to every timestamp (pcapng `if_tsoffset`; 0 in pcap).
    pub offset_s: i64,
    /// Its name (`if_name`), if the file gives one.
    pub name: Option<String>,
}

impl Interface {
    /// Whether timestamps resolve nanoseconds or finer.
    pub fn nanosecond(&self) -> bool {
        self.unit.0 <= self.unit.1
    }
}

/// A whole capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// Classic pcap or pcapng.
    pub format: Format,
    /// Every interface, in the order the file describes them (pcapng: all
    /// sections').
    pub interfaces: Vec<Interface>,
    /// The records in file order.
    pub records: Vec<Record>,
}

impl Capture {
    /// Link type of the first interface (the only one in classic pcap).
    pub fn linktype(&self) -> u32 {
        self.interfaces.first().map_or(LINKTYPE_ETHERNET, |i| i.linktype)
    }

    /// Link type of record `r`.
    pub fn linktype_of(&self, r: &Record) -> u32 {
        self.interfaces[r.interface].linktype
    }
}

fn header_err<T>(reason: impl Into<String>) -> Result<T, PcapError> {
    Err(PcapError::header(reason))
}

/// Parse a classic pcap or pcapng file held in `data`.
pub fn parse(data: &[u8]) -> Result<Capture, PcapError> {
    if data.len() >= 4 && u32::from_le_bytes(data[..4].try_into().expect("4 bytes")) == field::MAGIC_PCAPNG {
        return pcapng::parse(data);
    }
    if data.len() < field::GLOBAL_HEADER {
        return header_err(format!("truncated: {} bytes needed, {} present", field::GLOBAL_HEADER, data.len()));
    }
    let magic_le = u32::from_le_bytes(data[..4].try_into().expect("4 bytes"));
    let (big, nanosecond) = match (magic_le, magic_le.swap_bytes()) {
        (field::MAGIC_MICRO, _) => (false, false),
        (field::MAGIC_NANO, _) => (false, true),
        (_, field::MAGIC_MICRO) => (true, false),
        (_, field::MAGIC_NANO) => (true, true),
        _ => return header_err(format!("not a pcap or pcapng file (magic number {magic_le:#010x})")),
    };
    let u16_at = |at: usize| {
        let b: [u8; 2] = data[at..at + 2].try_into().expect("2 bytes");
        if big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    };
    let u32_at = |at: usize| {
        let b: [u8; 4] = data[at..at + 4].try_into().expect("4 bytes");
        if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let major = u16_at(4);
    if major != 2 {
        return header_err(format!("unsupported version {major}.{} (only 2.x)", u16_at(6)));
    }
    // The link type's low 16 bits; the upper ones may carry FCS flags.
    let linktype = u32_at(20) & 0xffff;
    let unit: u128 = if nanosecond { 1 } else { 1000 };
    let fraction_limit: u32 = if nanosecond { 1_000_000_000 } else { 1_000_000 };
    let mut records = Vec::new();
    let mut at = field::GLOBAL_HEADER;
    let mut n: u64 = 0;
    while at < data.len() {
        n += 1;
        let err = |reason: String| Err(PcapError::record(n, reason));
        let left = data.len() - at;
        if left < field::RECORD_HEADER {
            return err(format!("truncated: the record header needs {} bytes, {left} remain", field::RECORD_HEADER));
        }
        let (secs, frac, incl, orig) = (u32_at(at), u32_at(at + 4), u32_at(at + 8), u32_at(at + 12));
        if frac >= fraction_limit {
            let what = if nanosecond { "nanoseconds" } else { "microseconds" };
            return err(format!("{what} field is {frac}, not below {fraction_limit}"));
        }
        if incl > MAX_RECORD {
            return err(format!("captured length {incl} exceeds the {MAX_RECORD}-byte maximum"));
        }
        if incl > orig {
            return err(format!("captured length {incl} exceeds the original length {orig}"));
        }
        let body = at + field::RECORD_HEADER;
        let remain = data.len() - body;
        if incl as usize > remain {
            return err(format!("truncated: header says {incl} bytes, {remain} remain"));
        }
        let time_ns = u128::from(secs) * 1_000_000_000 + u128::from(frac) * unit;
        records.push(Record { time_ns, orig_len: orig, data: data[body..body + incl as usize].to_vec(), interface: 0 });
        at = body + incl as usize;
    }
    let interfaces = vec![Interface { linktype, unit: (unit, 1), offset_s: 0, name: None }];
    Ok(Capture { format: Format::Pcap, interfaces, records })
}

/// Where the network-layer packet of a record starts, and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetworkLayer {
    /// Bytes of link-layer header in front of it (Ethernet with its VLAN
    /// tags, the SLL or SLL2 header, ...).
    pub offset: usize,
    /// Its EtherType (0x0800 IPv4, 0x86dd IPv6, 0x0806 ARP, ...).
    pub ethertype: u16,
    /// Destination and source MAC addresses where the link header has them
    /// (Ethernet; SLL and SLL2 give the source when it is 6 bytes long;
    /// zero otherwise).
    pub macs: [u8; 12],
    /// 802.1Q/802.1ad VLAN tags passed.
    pub vlan_tags: u8,
}

/// Bytes of link-layer header before the network layer of `linktype`
/// without VLAN tags, for the link types [`network_layer`] reads.
pub fn link_header_len(linktype: u32) -> Option<usize> {
    match linktype {
        LINKTYPE_ETHERNET => Some(14),
        LINKTYPE_LINUX_SLL => Some(16),
        LINKTYPE_LINUX_SLL2 => Some(20),
        LINKTYPE_RAW | LINKTYPE_IPV4 | LINKTYPE_IPV6 => Some(0),
        LINKTYPE_NULL => Some(4),
        _ => None,
    }
}

const VLAN_TPIDS: [u16; 3] = [0x8100, 0x88a8, 0x9100];

/// The network-layer packet inside `frame` of link type `linktype`, or why
/// there is none: a link type nicsim does not read, or a frame shorter
/// than its link header.
pub fn network_layer(linktype: u32, frame: &[u8]) -> Result<NetworkLayer, String> {
    let be16 = |at: usize| frame.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    let short = |need: usize| format!("{} bytes, shorter than the {need}-byte link header", frame.len());
    let mut macs = [0u8; 12];
    // (offset of the EtherType field, offset of what follows it)
    let (mut type_at, mut offset) = match linktype {
        LINKTYPE_ETHERNET => {
            let Some(m) = frame.get(..12) else { return Err(short(14)) };
            macs.copy_from_slice(m);
            (12, 14)
        }
        LINKTYPE_LINUX_SLL => {
            // packet type, ARPHRD type, address length, 8 address bytes, protocol
            if frame.len() < 16 {
                return Err(short(16));
            }
            if be16(4) == Some(6) {
                macs[6..].copy_from_slice(&frame[6..12]);
            }
            (14, 16)
        }
        LINKTYPE_LINUX_SLL2 => {
            // protocol, reserved, interface index, ARPHRD type, packet type,
            // address length, 8 address bytes
            if frame.len() < 20 {
                return Err(short(20));
            }
            if frame[11] == 6 {
                macs[6..].copy_from_slice(&frame[12..18]);
            }
            (0, 20)
        }
        LINKTYPE_RAW | LINKTYPE_IPV4 | LINKTYPE_IPV6 => {
            let ethertype = match (linktype, frame.first().map(|b| b >> 4)) {
                (LINKTYPE_IPV4, _) | (LINKTYPE_RAW, Some(4)) => 0x0800,
                (LINKTYPE_IPV6, _) | (LINKTYPE_RAW, Some(6)) => 0x86dd,
                _ => return Err("raw IP record holds neither IPv4 nor IPv6".into()),
            };
            return Ok(NetworkLayer { offset: 0, ethertype, macs, vlan_tags: 0 });
        }
        LINKTYPE_NULL => {
            let Some(b) = frame.get(..4) else { return Err(short(4)) };
            // The address family in the capturing host's byte order: AF_INET is 2
            // everywhere; AF_INET6 is 24, 28 or 30 by system.
            let family = if b[0] == 0 && b[1] == 0 { u32::from(b[3]) } else { u32::from(b[0]) };
            let ethertype = match family {
                2 => 0x0800,
                24 | 28 | 30 => 0x86dd,
                other => return Err(format!("loopback address family {other} is neither IPv4 nor IPv6")),
            };
            return Ok(NetworkLayer { offset: 4, ethertype, macs, vlan_tags: 0 });
        }
        other => {
            return Err(format!(
                "link type {other} is not read by nicsim (Ethernet 1, Linux SLL 113, SLL2 276, raw IP 101/228/229, loopback 0)"
            ))
        }
    };
    let mut vlan_tags = 0u8;
    loop {
        let Some(ethertype) = be16(type_at) else { return Err(short(type_at + 2)) };
        if !VLAN_TPIDS.contains(&ethertype) {
            return Ok(NetworkLayer { offset, ethertype, macs, vlan_tags });
        }
        // A tag: 2 bytes of priority, DEI and VLAN ID, then the next EtherType.
        if frame.len() < offset + 4 {
            return Err(format!("{} bytes, shorter than its VLAN tag", frame.len()));
        }
        type_at = offset + 2;
        offset += 4;
        vlan_tags = vlan_tags.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A global header: `magic` written little-endian unless `big`.
    fn header(magic: u32, big: bool, linktype: u32) -> Vec<u8> {
        let mut h = Vec::new();
        let w32 = |h: &mut Vec<u8>, v: u32| h.extend(if big { v.to_be_bytes() } else { v.to_le_bytes() });
        w32(&mut h, magic);
        h.extend(if big { [0, 2, 0, 4] } else { [2, 0, 4, 0] });
        w32(&mut h, 0);
        w32(&mut h, 0);
        w32(&mut h, 65535);
        w32(&mut h, linktype);
        h
    }

    fn record(big: bool, secs: u32, frac: u32, incl: u32, orig: u32) -> Vec<u8> {
        let mut r = Vec::new();
        for v in [secs, frac, incl, orig] {
            r.extend(if big { v.to_be_bytes() } else { v.to_le_bytes() });
        }
        r
    }

    #[test]
    fn reads_microsecond_big_endian_records() {
        let mut f = header(0xa1b2_c3d4, true, 1);
        f.extend(record(true, 2, 500_000, 3, 60));
        f.extend([1, 2, 3]);
        f.extend(record(true, 2, 500_001, 0, 0));
        let c = parse(&f).unwrap();
        assert_eq!((c.linktype(), c.interfaces[0].nanosecond(), c.records.len()), (1, false, 2));
        assert_eq!(c.records[0], Record { time_ns: 2_500_000_000, orig_len: 60, data: vec![1, 2, 3], interface: 0 });
        assert_eq!(c.records[1].time_ns, 2_500_001_000);
    }

    #[test]
    fn reads_nanosecond_little_endian_records() {
        let mut f = header(0xa1b2_3c4d, false, 101);
        f.extend(record(false, 1, 7, 1, 1));
        f.push(9);
        let c = parse(&f).unwrap();
        assert_eq!((c.linktype(), c.interfaces[0].nanosecond()), (101, true));
        assert_eq!(c.records[0].time_ns, 1_000_000_007);
    }

    #[test]
    fn a_truncated_record_names_its_number_and_sizes() {
        let mut f = header(0xa1b2_c3d4, false, 1);
        for _ in 0..16 {
            f.extend(record(false, 0, 0, 4, 4));
            f.extend([0; 4]);
        }
        f.extend(record(false, 0, 0, 1514, 1514));
        f.extend([0; 300]);
        assert_eq!(parse(&f).unwrap_err().to_string(), "pcap record 17: truncated: header says 1514 bytes, 300 remain");
    }

    #[test]
    fn a_cut_record_header_is_an_error() {
        let mut f = header(0xa1b2_c3d4, false, 1);
        f.extend([0; 10]);
        assert_eq!(
            parse(&f).unwrap_err().to_string(),
            "pcap record 1: truncated: the record header needs 16 bytes, 10 remain"
        );
    }

    #[test]
    fn malformed_headers_and_fields_give_their_reason() {
        assert_eq!(parse(&[1, 2, 3]).unwrap_err().to_string(), "pcap header: truncated: 24 bytes needed, 3 present");
        let garbage = b"GET / HTTP/1.1\r\nHost: example\r\n\r\n";
        assert_eq!(
            parse(garbage).unwrap_err().to_string(),
            "pcap header: not a pcap or pcapng file (magic number 0x20544547)"
        );
        let mut v1 = header(0xa1b2_c3d4, false, 1);
        v1[4] = 1;
        assert_eq!(parse(&v1).unwrap_err().to_string(), "pcap header: unsupported version 1.4 (only 2.x)");
        let mut f = header(0xa1b2_c3d4, false, 1);
        f.extend(record(false, 0, 1_000_000, 0, 0));
        assert_eq!(
            parse(&f).unwrap_err().to_string(),
            "pcap record 1: microseconds field is 1000000, not below 1000000"
        );
        let mut f = header(0xa1b2_c3d4, false, 1);
        f.extend(record(false, 0, 0, 10, 5));
        f.extend([0; 10]);
        assert_eq!(
            parse(&f).unwrap_err().to_string(),
            "pcap record 1: captured length 10 exceeds the original length 5"
        );
        let mut f = header(0xa1b2_c3d4, false, 1);
        f.extend(record(false, 0, 0, 300_000, 300_000));
        assert_eq!(
            parse(&f).unwrap_err().to_string(),
            "pcap record 1: captured length 300000 exceeds the 262144-byte maximum"
        );
    }

    #[test]
    fn a_trace_written_by_nicsim_reads_back_exactly() {
        use crate::engine::Time;
        let path = std::env::temp_dir().join(format!("nicsim-pcap-read-{}.pcap", std::process::id()));
        let frames: Vec<(u64, Vec<u8>)> =
            vec![(0, vec![0xaa; 60]), (1_234_567, vec![1, 2, 3]), (5_000_000_000_001_000, vec![7; 1514])];
        let mut t = crate::probe::pcap::Trace::create(&path).unwrap();
        for (ps, f) in &frames {
            t.record(Time(*ps), f).unwrap();
        }
        t.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let c = parse(&bytes).unwrap();
        assert_eq!((c.linktype(), c.interfaces[0].nanosecond()), (LINKTYPE_ETHERNET, true));
        let got: Vec<(u128, u32, Vec<u8>)> = c.records.into_iter().map(|r| (r.time_ns, r.orig_len, r.data)).collect();
        let want: Vec<(u128, u32, Vec<u8>)> =
            frames.into_iter().map(|(ps, f)| (u128::from(ps / 1000), f.len() as u32, f)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_prefix_parses_only_when_cut_between_records() {
        let mut f = header(0xa1b2_3c4d, false, 1);
        for i in 0..5u32 {
            f.extend(record(false, i, i, 3, 3));
            f.extend([i as u8; 3]);
        }
        // 24-byte header, then records of 16 + 3 bytes: a cut is fine exactly
        // at a record boundary and an error anywhere else.
        for cut in 0..f.len() {
            let boundary = cut >= 24 && (cut - 24) % 19 == 0;
            assert_eq!(parse(&f[..cut]).is_ok(), boundary, "cut at {cut}");
        }
        assert_eq!(parse(&f).unwrap().records.len(), 5);
    }

    /// A pcapng block of `kind` around `body` (little-endian unless `big`).
    fn block(big: bool, kind: u32, body: &[u8]) -> Vec<u8> {
        let w32 = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        let len = 12 + body.len() as u32;
        let mut b = w32(kind).to_vec();
        b.extend(w32(len));
        b.extend(body);
        b.extend(w32(len));
        b
    }

    fn shb(big: bool) -> Vec<u8> {
        let mut body = Vec::new();
        if big {
            body.extend(0x1a2b_3c4d_u32.to_be_bytes());
            body.extend([0, 1, 0, 0]);
        } else {
            body.extend(0x1a2b_3c4d_u32.to_le_bytes());
            body.extend([1, 0, 0, 0]);
        }
        body.extend([0xff; 8]); // section length unknown
        block(big, 0x0a0d_0d0a, &body)
    }

    /// An interface of `linktype`; `tsresol` the if_tsresol option, if any.
    fn idb(big: bool, linktype: u16, tsresol: Option<u8>) -> Vec<u8> {
        let w16 = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut body = w16(linktype).to_vec();
        body.extend([0, 0]);
        body.extend(if big { 262_144u32.to_be_bytes() } else { 262_144u32.to_le_bytes() });
        if let Some(r) = tsresol {
            body.extend(w16(9));
            body.extend(w16(1));
            body.extend([r, 0, 0, 0]);
            body.extend([0, 0, 0, 0]); // opt_endofopt
        }
        block(big, 1, &body)
    }

    fn epb(big: bool, interface: u32, ts: u64, data: &[u8], orig: u32) -> Vec<u8> {
        let w32 = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut body = w32(interface).to_vec();
        body.extend(w32((ts >> 32) as u32));
        body.extend(w32(ts as u32));
        body.extend(w32(data.len() as u32));
        body.extend(w32(orig));
        body.extend(data);
        block(big, 6, &body)
    }

    #[test]
    fn pcapng_reads_every_interface_with_its_link_type_and_resolution() {
        for big in [false, true] {
            let mut f = shb(big);
            f.extend(idb(big, 1, None)); // µs, the default
            f.extend(idb(big, 276, Some(9))); // ns
            f.extend(idb(big, 113, Some(0x80 | 10))); // 2^-10 s
            f.extend(epb(big, 0, 1_500_000, &[1, 2, 3], 3));
            f.extend(block(big, 5, &[0; 12])); // interface statistics: skipped
            f.extend(epb(big, 1, 2_000_000_007, &[4; 5], 60));
            f.extend(epb(big, 2, 3 * 1024 + 512, &[5], 1));
            let c = parse(&f).unwrap();
            assert_eq!(c.format, Format::PcapNg);
            let links: Vec<u32> = c.interfaces.iter().map(|i| i.linktype).collect();
            assert_eq!(links, [1, 276, 113]);
            let got: Vec<(u128, u32, usize, usize)> =
                c.records.iter().map(|r| (r.time_ns, r.orig_len, r.data.len(), r.interface)).collect();
            assert_eq!(
                got,
                [(1_500_000_000, 3, 3, 0), (2_000_000_007, 60, 5, 1), (3_500_000_000, 1, 1, 2)],
                "big-endian {big}"
            );
            assert_eq!(c.linktype_of(&c.records[1]), LINKTYPE_LINUX_SLL2);
        }
    }

    #[test]
    fn a_second_section_numbers_its_interfaces_afresh() {
        let mut f = shb(false);
        f.extend(idb(false, 1, Some(9)));
        f.extend(epb(false, 0, 10, &[1], 1));
        f.extend(shb(true));
        f.extend(idb(true, 101, Some(9)));
        f.extend(epb(true, 0, 20, &[0x45], 1));
        let c = parse(&f).unwrap();
        assert_eq!(c.records.iter().map(|r| (r.interface, r.time_ns)).collect::<Vec<_>>(), [(0, 10), (1, 20)]);
        assert_eq!(c.linktype_of(&c.records[1]), LINKTYPE_RAW);
    }

    #[test]
    fn pcapng_errors_name_the_block_and_packet() {
        let mut f = shb(false);
        f.extend(idb(false, 1, None));
        f.extend(epb(false, 0, 0, &[0; 4], 4));
        f.extend(epb(false, 3, 0, &[0; 4], 4));
        assert_eq!(
            parse(&f).unwrap_err().to_string(),
            "pcapng block 4 (packet 2): interface 3 is not described (the section describes 1)"
        );
        let mut f = shb(false);
        f.extend(idb(false, 1, None));
        f.extend(epb(false, 0, 0, &[0; 8], 4));
        assert_eq!(
            parse(&f).unwrap_err().to_string(),
            "pcapng block 3 (packet 1): captured length 8 exceeds the original length 4"
        );
        let mut f = shb(false);
        f.extend(idb(false, 1, None));
        let cut = epb(false, 0, 0, &[0; 40], 40);
        f.extend(&cut[..30]);
        let e = parse(&f).unwrap_err();
        assert_eq!((e.block, e.record), (Some(3), None));
        assert!(e.reason.starts_with("truncated"), "{e}");
        let mut f = shb(false);
        f.extend(idb(false, 1, Some(40)));
        assert_eq!(
            parse(&f).unwrap_err().to_string(),
            "pcapng block 2: if_tsresol 10^-40 s is finer than nicsim reads (10^-30 s)"
        );
    }

    #[test]
    fn network_layer_passes_vlan_tags_and_cooked_headers() {
        let mut eth = vec![0xaa; 6];
        eth.extend([0xbb; 6]);
        eth.extend([0x81, 0x00, 0x00, 0x64, 0x88, 0xa8, 0x00, 0x05, 0x08, 0x00, 0x45]);
        let n = network_layer(LINKTYPE_ETHERNET, &eth).unwrap();
        assert_eq!((n.offset, n.ethertype, n.vlan_tags), (22, 0x0800, 2));
        assert_eq!(n.macs[..6], [0xaa; 6]);
        // SLL: outgoing (4), ARPHRD_ETHER (1), 6-byte address, 2 pad, IPv4.
        let mut sll = vec![0, 4, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x08, 0x00];
        sll.push(0x45);
        let n = network_layer(LINKTYPE_LINUX_SLL, &sll).unwrap();
        assert_eq!((n.offset, n.ethertype, n.vlan_tags), (16, 0x0800, 0));
        assert_eq!(n.macs, [0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6]);
        // SLL2: IPv6 protocol, interface 3, 6-byte address.
        let mut sll2 = vec![0x86, 0xdd, 0, 0, 0, 0, 0, 3, 0, 1, 0, 6, 9, 9, 9, 9, 9, 9, 0, 0];
        sll2.push(0x60);
        let n = network_layer(LINKTYPE_LINUX_SLL2, &sll2).unwrap();
        assert_eq!((n.offset, n.ethertype), (20, 0x86dd));
        // SLL carrying a VLAN tag libpcap put back in.
        let mut tagged = vec![0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x81, 0x00, 0x00, 0x07, 0x08, 0x00];
        tagged.push(0x45);
        let n = network_layer(LINKTYPE_LINUX_SLL, &tagged).unwrap();
        assert_eq!((n.offset, n.ethertype, n.vlan_tags), (20, 0x0800, 1));
        assert_eq!(network_layer(LINKTYPE_RAW, &[0x45]).unwrap().ethertype, 0x0800);
        assert_eq!(network_layer(LINKTYPE_NULL, &[2, 0, 0, 0, 0x45]).unwrap().offset, 4);
        assert_eq!(
            network_layer(LINKTYPE_ETHERNET, &[0; 10]).unwrap_err(),
            "10 bytes, shorter than the 14-byte link header"
        );
        assert_eq!(network_layer(LINKTYPE_ETHERNET, &eth[..16]).unwrap_err(), "16 bytes, shorter than its VLAN tag");
        assert!(network_layer(127, &eth).unwrap_err().starts_with("link type 127 is not read by nicsim"));
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// Whatever the bytes, a parse that succeeds accounts for every byte
        /// of the file and never holds more than a record's original length.
        fn consistent(data: &[u8]) -> Result<(), TestCaseError> {
            if data.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
                return Ok(());
            }
            if let Ok(c) = parse(data) {
                let used: usize = 24 + c.records.iter().map(|r| 16 + r.data.len()).sum::<usize>();
                prop_assert_eq!(used, data.len());
                for r in &c.records {
                    prop_assert!(r.data.len() as u64 <= u64::from(r.orig_len));
                    prop_assert!(r.data.len() as u32 <= MAX_RECORD);
                }
            }
            Ok(())
        }

        proptest! {
            #[test]
            fn arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..300)) {
                consistent(&data)?;
            }

            /// A pcapng file of a valid header and interface followed by
            /// anything parses or fails; it never panics.
            #[test]
            fn arbitrary_pcapng_blocks(tail in prop::collection::vec(any::<u8>(), 0..300), at in 0usize..100, byte in any::<u8>()) {
                let mut f = super::shb(false);
                f.extend(super::idb(false, 1, Some(9)));
                f.extend(super::epb(false, 0, 5, &[7; 20], 20));
                let i = at % f.len();
                f[i] = byte;
                f.extend(tail);
                if let Ok(c) = parse(&f) {
                    for r in &c.records {
                        prop_assert!(r.interface < c.interfaces.len());
                        prop_assert!(r.data.len() as u64 <= u64::from(r.orig_len));
                    }
                }
            }

            #[test]
            fn a_good_file_with_one_byte_changed(at in 0usize..88, byte in any::<u8>()) {
                let mut f = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0];
                for i in 0..2u8 {
                    f.extend([i, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 16, 0, 0, 0]);
                    f.extend([i; 16]);
                }
                prop_assert_eq!(parse(&f).unwrap().records.len(), 2);
                f[at] = byte;
                consistent(&f)?;
            }
        }
    }
}
