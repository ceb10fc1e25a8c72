//! Reading classic pcap files (libpcap format) as untrusted input: the
//! global header (magic `a1b2c3d4` with microsecond or `a1b23c4d` with
//! nanosecond timestamps, in either byte order), then records of a 16-byte
//! header and the captured bytes. Every malformation is an error naming the
//! record (numbered from 1, as Wireshark numbers frames) and the reason;
//! nothing panics. pcapng files are recognised and refused.
//!
//! ```text
//!  global header (24 B): magic | major 2 | minor 4 | zone | sigfigs | snaplen | linktype
//!  record header (16 B): seconds | µs or ns | captured length | original length
//! ```

use std::fmt;

/// Link types this reader knows the headers of.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Raw IP (`LINKTYPE_RAW`).
pub const LINKTYPE_RAW: u32 = 101;
/// Raw IPv4 (`LINKTYPE_IPV4`).
pub const LINKTYPE_IPV4: u32 = 228;

/// Largest captured length accepted (libpcap's `MAXIMUM_SNAPLEN`).
pub const MAX_RECORD: u32 = 262_144;

mod field {
    pub const GLOBAL_HEADER: usize = 24;
    pub const RECORD_HEADER: usize = 16;
    pub const MAGIC_MICRO: u32 = 0xa1b2_c3d4;
    pub const MAGIC_NANO: u32 = 0xa1b2_3c4d;
    pub const MAGIC_PCAPNG: u32 = 0x0a0d_0d0a;
}

/// Where a pcap file is malformed and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcapError {
    /// Record number from 1; `None` for the global header.
    pub record: Option<u64>,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for PcapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.record {
            Some(n) => write!(f, "pcap record {n}: {}", self.reason),
            None => write!(f, "pcap header: {}", self.reason),
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
}

/// A whole capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// Link type of every record (1 Ethernet, 101/228 raw IP, ...).
    pub linktype: u32,
    /// Whether timestamps had nanosecond resolution.
    pub nanosecond: bool,
    /// The records in file order.
    pub records: Vec<Record>,
}

fn header_err<T>(reason: impl Into<String>) -> Result<T, PcapError> {
    Err(PcapError { record: None, reason: reason.into() })
}

/// Parse a classic pcap file held in `data`.
pub fn parse(data: &[u8]) -> Result<Capture, PcapError> {
    if data.len() < field::GLOBAL_HEADER {
        if data.len() >= 4 && u32::from_le_bytes(data[..4].try_into().expect("4 bytes")) == field::MAGIC_PCAPNG {
            return header_err("this is a pcapng file; convert it with `editcap -F pcap`");
        }
        return header_err(format!("truncated: {} bytes needed, {} present", field::GLOBAL_HEADER, data.len()));
    }
    let magic_le = u32::from_le_bytes(data[..4].try_into().expect("4 bytes"));
    let (big, nanosecond) = match (magic_le, magic_le.swap_bytes()) {
        (field::MAGIC_MICRO, _) => (false, false),
        (field::MAGIC_NANO, _) => (false, true),
        (_, field::MAGIC_MICRO) => (true, false),
        (_, field::MAGIC_NANO) => (true, true),
        (field::MAGIC_PCAPNG, _) => return header_err("this is a pcapng file; convert it with `editcap -F pcap`"),
        _ => return header_err(format!("not a pcap file (magic number {magic_le:#010x})")),
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
        let err = |reason: String| Err(PcapError { record: Some(n), reason });
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
        records.push(Record { time_ns, orig_len: orig, data: data[body..body + incl as usize].to_vec() });
        at = body + incl as usize;
    }
    Ok(Capture { linktype, nanosecond, records })
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
        assert_eq!((c.linktype, c.nanosecond, c.records.len()), (1, false, 2));
        assert_eq!(c.records[0], Record { time_ns: 2_500_000_000, orig_len: 60, data: vec![1, 2, 3] });
        assert_eq!(c.records[1].time_ns, 2_500_001_000);
    }

    #[test]
    fn reads_nanosecond_little_endian_records() {
        let mut f = header(0xa1b2_3c4d, false, 101);
        f.extend(record(false, 1, 7, 1, 1));
        f.push(9);
        let c = parse(&f).unwrap();
        assert_eq!((c.linktype, c.nanosecond), (101, true));
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
        assert_eq!(parse(garbage).unwrap_err().to_string(), "pcap header: not a pcap file (magic number 0x20544547)");
        let mut ng = 0x0a0d_0d0a_u32.to_le_bytes().to_vec();
        ng.extend([0; 40]);
        assert!(parse(&ng).unwrap_err().reason.contains("pcapng"));
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
        assert_eq!((c.linktype, c.nanosecond), (LINKTYPE_ETHERNET, true));
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

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// Whatever the bytes, a parse that succeeds accounts for every byte
        /// of the file and never holds more than a record's original length.
        fn consistent(data: &[u8]) -> Result<(), TestCaseError> {
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
