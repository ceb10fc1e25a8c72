//! pcap replay: a capture's frame sizes and inter-arrival times, replayed
//! as UDP datagrams from one host to another (a `udp_stream` whose sizes
//! and send times come from the file).
//!
//! Record `i` is sent `tᵢ − t₀` after the sender starts (times relative to
//! the first record), never earlier; a datagram the socket or the link
//! cannot take yet goes as soon as it can, and later ones keep their own
//! times. Its payload is the captured IPv4 packet's payload less the 8-byte
//! UDP header (so the replayed IP packets have the captured sizes); when a
//! record holds no IPv4 header it is the frame's original length less the
//! Ethernet, IPv4 and UDP headers (42 B; 28 B for raw IP captures). Sizes
//! are clamped to 8 B (the sequence number every datagram carries) to
//! 65 507 B. The file is data: only its sizes and times are used.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{PcapReplayConfig, Scenario, WorkloadConfig};
use crate::engine::Dur;
use crate::error::ConfigError;
use crate::probe::pcap_read::{self, Capture, PcapError, LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_RAW};

/// Largest pcap file read (a bound on memory, not on the format).
pub const MAX_FILE: u64 = 1 << 30;

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
        // Link and IPv4 headers in front of the IP payload.
        let overhead = match capture.linktype {
            LINKTYPE_ETHERNET => 14 + 20,
            LINKTYPE_RAW | LINKTYPE_IPV4 => 20,
            other => {
                return Err(PcapError {
                    record: None,
                    reason: format!("link type {other} is not supported (Ethernet 1, raw IP 101 or 228)"),
                })
            }
        };
        let take = limit.map_or(capture.records.len(), |l| (l as usize).min(capture.records.len()));
        let records = &capture.records[..take];
        let Some(first) = records.first() else {
            return Err(PcapError { record: None, reason: "the file holds no record to replay".into() });
        };
        let (mut at, mut sizes) = (Vec::with_capacity(take), Vec::with_capacity(take));
        let mut prev = first.time_ns;
        for (i, r) in records.iter().enumerate() {
            let n = i as u64 + 1;
            if r.time_ns < prev {
                let reason = format!("time goes backwards ({} ns before record {})", prev - r.time_ns, n - 1);
                return Err(PcapError { record: Some(n), reason });
            }
            prev = r.time_ns;
            let ps = (r.time_ns - first.time_ns).checked_mul(1000).and_then(|p| u64::try_from(p).ok());
            let Some(ps) = ps else {
                return Err(PcapError { record: Some(n), reason: "more than 200 days after the first record".into() });
            };
            at.push(Dur(ps));
            let ip = if capture.linktype == LINKTYPE_ETHERNET { ethernet_ip(&r.data) } else { Some(&r.data[..]) };
            let ip_payload = ip.and_then(ipv4_payload).unwrap_or(u64::from(r.orig_len).saturating_sub(overhead));
            sizes.push(ip_payload.saturating_sub(8).clamp(MIN_PAYLOAD, MAX_PAYLOAD));
        }
        Ok(Schedule { at, sizes })
    }

    /// Largest payload.
    pub fn max_size(&self) -> u64 {
        self.sizes.iter().copied().max().unwrap_or(MIN_PAYLOAD)
    }
}

/// The IP packet inside an Ethernet frame (after one optional VLAN tag).
fn ethernet_ip(frame: &[u8]) -> Option<&[u8]> {
    let ethertype = u16::from_be_bytes(frame.get(12..14)?.try_into().ok()?);
    match ethertype {
        0x0800 => frame.get(14..),
        0x8100 if frame.get(16..18)? == [0x08, 0x00] => frame.get(18..),
        _ => None,
    }
}

/// The IP payload length an IPv4 header declares (total length less the
/// header); the caller takes the UDP header off it.
fn ipv4_payload(ip: &[u8]) -> Option<u64> {
    let (&vihl, total) = (ip.first()?, ip.get(2..4)?);
    let ihl = u64::from(vihl & 0x0f) * 4;
    let total = u64::from(u16::from_be_bytes(total.try_into().ok()?));
    (vihl >> 4 == 4 && ihl >= 20 && total >= ihl).then_some(total - ihl)
}

/// Where `file` is: relative paths are relative to the scenario file
/// `source` (if it is one), else to the working directory.
pub fn resolve_path(file: &str, source: &str) -> PathBuf {
    let path = Path::new(file);
    let base = Path::new(source).parent().filter(|_| !source.is_empty() && !source.starts_with('<'));
    match base {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

/// Read and check the replay file of `cfg`, found relative to `source`.
pub fn load(cfg: &PcapReplayConfig, source: &str) -> Result<Schedule, ConfigError> {
    let field = "workload.pcap_replay.file";
    let path = resolve_path(&cfg.file, source);
    let cannot = |e: String| ConfigError::new(field, format!("cannot read \"{}\": {e}", path.display()));
    // Only a regular file: a device or a pipe could block or never end.
    let meta = std::fs::metadata(&path).map_err(|e| cannot(e.to_string()))?;
    if !meta.is_file() {
        return Err(cannot("not a regular file".into()));
    }
    if meta.len() > MAX_FILE {
        return Err(cannot(format!("{} bytes, more than the 1 GiB nicsim reads", meta.len())));
    }
    let bytes = std::fs::read(&path).map_err(|e| cannot(e.to_string()))?;
    let capture = pcap_read::parse(&bytes).map_err(|e| ConfigError::new(field, format!("{}: {e}", cfg.file)))?;
    Schedule::from_capture(&capture, cfg.limit).map_err(|e| ConfigError::new(field, format!("{}: {e}", cfg.file)))
}

/// Load the replay schedule of a scenario's `pcap_replay` workload, if it
/// has one and it is not loaded yet.
pub fn prepare(s: &mut Scenario, source: &str) -> Result<(), ConfigError> {
    if let WorkloadConfig::PcapReplay(cfg) = &mut s.workload {
        if cfg.schedule.is_none() {
            cfg.schedule = Some(Arc::new(load(cfg, source)?));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::pcap_read::Record;

    fn capture(linktype: u32, records: Vec<(u128, u32, Vec<u8>)>) -> Capture {
        let records = records.into_iter().map(|(time_ns, orig_len, data)| Record { time_ns, orig_len, data }).collect();
        Capture { linktype, nanosecond: true, records }
    }

    /// An Ethernet frame whose IPv4 header says `total` bytes.
    fn eth_ipv4(total: u16) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[16..18].copy_from_slice(&total.to_be_bytes());
        f
    }

    #[test]
    fn sizes_come_from_the_ip_header_and_times_from_the_first_record() {
        // 1500-byte IP packet: 1480 B of IP payload, 1472 B of UDP payload.
        // A frame cut to 40 B of ARP-like bytes: 60 B on the wire - 42 = 18 B.
        // A 60-byte minimum frame carrying a 28-byte IP packet: 0 B -> clamped to 8.
        let c = capture(
            LINKTYPE_ETHERNET,
            vec![(1_000, 1514, eth_ipv4(1500)), (1_500, 60, vec![0; 40]), (4_000, 60, eth_ipv4(28))],
        );
        let s = Schedule::from_capture(&c, None).unwrap();
        assert_eq!(s.sizes, vec![1472, 18, 8]);
        assert_eq!(s.at, vec![Dur(0), Dur(500_000), Dur(3_000_000)]);
        assert_eq!(Schedule::from_capture(&c, Some(2)).unwrap().sizes.len(), 2);
    }

    #[test]
    fn time_going_backwards_names_the_record() {
        let c = capture(LINKTYPE_RAW, vec![(10, 100, vec![]), (20, 100, vec![]), (15, 100, vec![])]);
        let e = Schedule::from_capture(&c, None).unwrap_err();
        assert_eq!(e.to_string(), "pcap record 3: time goes backwards (5 ns before record 2)");
    }

    #[test]
    fn unknown_link_types_and_empty_files_are_refused() {
        let e = Schedule::from_capture(&capture(105, vec![(0, 100, vec![])]), None).unwrap_err();
        assert_eq!(e.to_string(), "pcap header: link type 105 is not supported (Ethernet 1, raw IP 101 or 228)");
        let e = Schedule::from_capture(&capture(1, vec![]), None).unwrap_err();
        assert_eq!(e.to_string(), "pcap header: the file holds no record to replay");
    }

    #[test]
    fn relative_paths_follow_the_scenario_file() {
        assert_eq!(resolve_path("t.pcap", "scenarios/x.toml"), Path::new("scenarios/t.pcap"));
        assert_eq!(resolve_path("/abs/t.pcap", "scenarios/x.toml"), Path::new("/abs/t.pcap"));
        assert_eq!(resolve_path("t.pcap", "<string>"), Path::new("t.pcap"));
    }
}
