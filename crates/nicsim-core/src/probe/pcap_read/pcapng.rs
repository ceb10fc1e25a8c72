//! pcapng: blocks read with the `pcap-file` crate's parser; every section
//! (its own byte order), every interface (its own link type, timestamp
//! resolution `if_tsresol` and offset `if_tsoffset`), and Enhanced, Simple
//! and (obsolete) Packet blocks. Other blocks (name resolution, statistics,
//! custom) are skipped. Errors name the block (numbered from 1) and, for a
//! packet block, the packet.

use super::*;

/// The timestamp unit of pcapng option `if_tsresol` as nanoseconds `num / den`:
/// bit 7 clear, 10⁻ᵛ s; set, 2⁻ᵛ s (pcapng specification, section 4.2).
fn tsresol_unit(v: u8) -> Result<(u128, u128), String> {
    let exp = u32::from(v & 0x7f);
    if v & 0x80 == 0 {
        match exp {
            0..=9 => Ok((10u128.pow(9 - exp), 1)),
            10..=30 => Ok((1, 10u128.pow(exp - 9))),
            _ => Err(format!("if_tsresol 10^-{exp} s is finer than nicsim reads (10^-30 s)")),
        }
    } else if exp <= 64 {
        Ok((1_000_000_000, 1u128 << exp))
    } else {
        Err(format!("if_tsresol 2^-{exp} s is finer than nicsim reads (2^-64 s)"))
    }
}

/// Parse a pcapng file held in `data`.
pub(super) fn parse(data: &[u8]) -> Result<Capture, PcapError> {
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
    use pcap_file::pcapng::{Block, PcapNgParser};
    use pcap_file::PcapError as Raw;

    let describe = |e: Raw| match e {
        Raw::IncompleteBuffer => "truncated: the block runs past the end of the file".to_string(),
        Raw::InvalidField(what) => format!("invalid field ({what})"),
        other => other.to_string(),
    };
    let (mut rest, mut parser) =
        PcapNgParser::new(data).map_err(|e| PcapError { record: None, block: Some(1), reason: describe(e) })?;
    let mut capture = Capture { format: Format::PcapNg, interfaces: Vec::new(), records: Vec::new() };
    // Interfaces of the current section start at `base` in `capture.interfaces`.
    let mut base = 0usize;
    let mut block: u64 = 1;
    let mut packets: u64 = 0;
    let mut last_time: u128 = 0;
    while !rest.is_empty() {
        block += 1;
        let (next, b) =
            parser.next_block(rest).map_err(|e| PcapError { record: None, block: Some(block), reason: describe(e) })?;
        rest = next;
        let err = |record: Option<u64>, reason: String| Err(PcapError { record, block: Some(block), reason });
        // (interface in this section, raw timestamp or None, original length, data)
        let (iface, raw_ts, orig, bytes) = match b {
            Block::SectionHeader(_) => {
                base = capture.interfaces.len();
                continue;
            }
            Block::InterfaceDescription(idb) => {
                let mut unit = (1000, 1);
                let mut offset_s: i64 = 0;
                let mut name = None;
                for o in &idb.options {
                    match o {
                        InterfaceDescriptionOption::IfTsResol(v) => match tsresol_unit(*v) {
                            Ok(u) => unit = u,
                            Err(reason) => return err(None, reason),
                        },
                        InterfaceDescriptionOption::IfTsOffset(s) => offset_s = *s as i64,
                        InterfaceDescriptionOption::IfName(n) => name = Some(n.to_string()),
                        _ => {}
                    }
                }
                let linktype = u32::from(idb.linktype);
                capture.interfaces.push(Interface { linktype, unit, offset_s, name });
                continue;
            }
            Block::EnhancedPacket(p) => (p.interface_id as usize, Some(p.timestamp.as_nanos()), p.original_len, p.data),
            Block::Packet(p) => (usize::from(p.interface_id), Some(u128::from(p.timestamp)), p.original_len, p.data),
            Block::SimplePacket(p) => (0, None, p.original_len, p.data),
            _ => continue,
        };
        packets += 1;
        let n = Some(packets);
        let Some(interface) = base.checked_add(iface).filter(|&i| i < capture.interfaces.len()) else {
            let known = capture.interfaces.len() - base;
            return err(n, format!("interface {iface} is not described (the section describes {known})"));
        };
        if bytes.len() > MAX_RECORD as usize {
            return err(n, format!("captured length {} exceeds the {MAX_RECORD}-byte maximum", bytes.len()));
        }
        // A Simple Packet Block's original length may exceed what it holds;
        // an Enhanced one's captured length may not exceed the original.
        if bytes.len() as u64 > u64::from(orig) {
            return err(n, format!("captured length {} exceeds the original length {orig}", bytes.len()));
        }
        let time_ns = match raw_ts {
            None => last_time,
            Some(raw) => {
                let Interface { unit: (num, den), offset_s: offset, .. } = capture.interfaces[interface];
                let ns = raw.checked_mul(num).map(|v| v / den);
                let ns = ns.and_then(|ns| {
                    let shift = i128::from(offset) * 1_000_000_000;
                    u128::try_from(i128::try_from(ns).ok()? + shift).ok()
                });
                match ns {
                    Some(t) => t,
                    None => return err(n, "timestamp out of range (before 1970 after if_tsoffset)".into()),
                }
            }
        };
        last_time = time_ns;
        capture.records.push(Record { time_ns, orig_len: orig, data: bytes.into_owned(), interface });
    }
    Ok(capture)
}
