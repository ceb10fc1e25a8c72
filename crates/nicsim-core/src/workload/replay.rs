//! pcap replay: a capture's frame sizes and inter-arrival times, replayed
//! as UDP datagrams from one host to another (a `udp_stream` whose sizes
//! and send times come from the file).
//!
//! Record `i` is sent `tᵢ − t₀` after the sender starts (times relative to
//! the first record), never earlier; a datagram the socket or the link
//! cannot take yet goes as soon as it can, and later ones keep their own
//! times. Its payload is the captured IP packet's payload less the 8-byte
//! UDP header (so the replayed IP packets have the captured sizes); when a
//! record holds no IPv4 or IPv6 header it is the frame's original length
//! less the link header (Ethernet 14 B, Linux SLL 16 B, SLL2 20 B, raw IP
//! 0 B, loopback 4 B), a 20-byte IPv4 header and the UDP header. Sizes are
//! clamped to 8 B (the sequence number every datagram carries) to 65 507 B.
//! The file is data: only its sizes and times are used. Classic pcap and
//! pcapng are read (every interface, in file order; VLAN tags are passed
//! over), see [`crate::probe::pcap_read`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{PcapReplayConfig, Scenario, WorkloadConfig};
use crate::error::ConfigError;
use crate::probe::pcap_read::{self};

/// Largest pcap file read (a bound on memory, not on the format).
pub const MAX_FILE: u64 = 1 << 30;

pub use crate::probe::schedule::{Schedule, MAX_PAYLOAD, MIN_PAYLOAD};

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
    use crate::engine::Dur;
    use crate::probe::pcap_read::{
        Capture, Format, Interface, Record, LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL2, LINKTYPE_RAW,
    };

    fn capture(linktype: u32, records: Vec<(u128, u32, Vec<u8>)>) -> Capture {
        let records = records
            .into_iter()
            .map(|(time_ns, orig_len, data)| Record { time_ns, orig_len, data, interface: 0 })
            .collect();
        let interfaces = vec![Interface { linktype, unit: (1, 1), offset_s: 0, name: None }];
        Capture { format: Format::Pcap, interfaces, records }
    }

    /// An Ethernet frame whose IPv4 header says `total` bytes, captured
    /// up to the end of that header.
    fn eth_ipv4(total: u16) -> Vec<u8> {
        crate::testing::ipv4_sized(total)[..14 + 20].to_vec()
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
    fn vlan_tagged_and_cooked_records_of_several_interfaces_give_their_ip_sizes() {
        // A VLAN-tagged Ethernet frame of a 1000-byte IPv4 packet (interface
        // 0) and an SLL2 record of a 600-byte one (interface 1).
        let mut tagged = vec![0u8; 12];
        tagged.extend([0x81, 0x00, 0x00, 0x0a, 0x08, 0x00, 0x45, 0, 0x03, 0xe8]);
        tagged.extend([0; 16]);
        let mut sll2 = vec![0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 4, 6, 1, 2, 3, 4, 5, 6, 0, 0];
        sll2.extend([0x45, 0, 0x02, 0x58]);
        sll2.extend([0; 16]);
        let mut c = capture(LINKTYPE_ETHERNET, vec![(0, 1018, tagged), (1_000, 620, sll2), (2_000, 120, vec![0; 8])]);
        c.interfaces.push(Interface { linktype: LINKTYPE_LINUX_SLL2, unit: (1, 1), offset_s: 0, name: None });
        c.records[1].interface = 1;
        c.records[2].interface = 1;
        let s = Schedule::from_capture(&c, None).unwrap();
        // 1000 - 20 - 8; 600 - 20 - 8; a cut record: 120 - 20 (SLL2) - 20 - 8.
        assert_eq!(s.sizes, vec![972, 572, 72]);
    }

    #[test]
    fn a_record_stamped_before_its_predecessor_goes_right_after_it() {
        let c = capture(LINKTYPE_RAW, vec![(10, 100, vec![]), (20, 100, vec![]), (15, 100, vec![]), (30, 100, vec![])]);
        let s = Schedule::from_capture(&c, None).unwrap();
        assert_eq!(s.at, vec![Dur(0), Dur(10_000), Dur(10_000), Dur(20_000)]);
    }

    #[test]
    fn unknown_link_types_and_empty_files_are_refused() {
        let e = Schedule::from_capture(&capture(105, vec![(0, 100, vec![])]), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pcap header: link type 105 is not supported (Ethernet 1, Linux SLL 113, SLL2 276, raw IP 101/228/229, loopback 0)"
        );
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
