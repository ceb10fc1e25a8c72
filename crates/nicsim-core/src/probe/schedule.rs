//! A replay schedule read from a capture: when each datagram goes,
//! relative to the first record, and its payload size (the pcap replay
//! workload sends it; see `workload::replay` for the rules). Units:
//! picoseconds, bytes.

use crate::engine::Dur;
use crate::probe::pcap_read::{link_header_len, network_layer, Capture, PcapError};

/// Smallest replayed payload: the sequence number.
pub const MIN_PAYLOAD: u64 = 8;
/// Largest UDP payload over IPv4.
pub const MAX_PAYLOAD: u64 = 65_507;

/// When each datagram goes, relative to the first, and its payload size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Send time of datagram `i` after the sender starts.
    pub at: Vec<Dur>,
    /// Payload bytes of datagram `i`.
    pub sizes: Vec<u64>,
}

impl Schedule {
    /// The replay of `capture`'s first `limit` records.
    pub fn from_capture(capture: &Capture, limit: Option<u64>) -> Result<Schedule, PcapError> {
        for (i, iface) in capture.interfaces.iter().enumerate() {
            if link_header_len(iface.linktype).is_none() && capture.records.iter().any(|r| r.interface == i) {
                let reason = format!(
                    "link type {} is not supported (Ethernet 1, Linux SLL 113, SLL2 276, raw IP 101/228/229, loopback 0)",
                    iface.linktype
                );
                return Err(PcapError::header(reason));
            }
        }
        let take = limit.map_or(capture.records.len(), |l| (l as usize).min(capture.records.len()));
        let records = &capture.records[..take];
        let Some(first) = records.first() else {
            return Err(PcapError::header("the file holds no record to replay"));
        };
        let (mut at, mut sizes) = (Vec::with_capacity(take), Vec::with_capacity(take));
        let mut prev = first.time_ns;
        for (i, r) in records.iter().enumerate() {
            let n = i as u64 + 1;
            // Records stay in capture order. A record stamped before its
            // predecessor (a capture timestamped on several CPUs, or merged
            // from several interfaces, has a few, by microseconds) goes out
            // right after it: the replay never sends into the past.
            prev = prev.max(r.time_ns);
            let ps = (prev - first.time_ns).checked_mul(1000).and_then(|p| u64::try_from(p).ok());
            let Some(ps) = ps else {
                return Err(PcapError::record(n, "more than 200 days after the first record"));
            };
            at.push(Dur(ps));
            let linktype = capture.linktype_of(r);
            let overhead = link_header_len(linktype).unwrap_or(0) as u64 + 20;
            let ip_payload = network_layer(linktype, &r.data)
                .ok()
                .and_then(|n| ip_payload(n.ethertype, &r.data[n.offset..]))
                .unwrap_or(u64::from(r.orig_len).saturating_sub(overhead));
            sizes.push(ip_payload.saturating_sub(8).clamp(MIN_PAYLOAD, MAX_PAYLOAD));
        }
        Ok(Schedule { at, sizes })
    }

    /// Largest payload.
    pub fn max_size(&self) -> u64 {
        self.sizes.iter().copied().max().unwrap_or(MIN_PAYLOAD)
    }
}

/// The IP payload length an IPv4 header declares (total length less the
/// header) or an IPv6 header (its payload length); the caller takes the UDP
/// header off it.
fn ip_payload(ethertype: u16, ip: &[u8]) -> Option<u64> {
    if ethertype == 0x86dd {
        let len = ip.get(4..6)?;
        return (ip.first()? >> 4 == 6).then(|| u64::from(u16::from_be_bytes([len[0], len[1]])));
    }
    if ethertype != 0x0800 {
        return None;
    }
    let (&vihl, total) = (ip.first()?, ip.get(2..4)?);
    let ihl = u64::from(vihl & 0x0f) * 4;
    let total = u64::from(u16::from_be_bytes(total.try_into().ok()?));
    (vihl >> 4 == 4 && ihl >= 20 && total >= ihl).then_some(total - ihl)
}
