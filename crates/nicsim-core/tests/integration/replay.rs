//! pcap replay: a capture's sizes and times come back out on the wire.

use std::path::{Path, PathBuf};

use nicsim_core::engine::Time;
use nicsim_core::probe::pcap::Trace;
use nicsim_core::probe::pcap_read;
use nicsim_core::{run_toml, Error, RunOptions};
use nicsim_testkit::frame::ipv4_sized;

use crate::ideal::{run, two_hosts};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nicsim-replay-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Write `records` (ns since the start, IP length) with nicsim's pcap writer, starting at 5 s.
fn write_pcap(path: &Path, records: &[(u64, u16)]) {
    let mut t = Trace::create(path).unwrap();
    for &(ns, len) in records {
        t.record(Time((5_000_000_000 + ns) * 1000), &ipv4_sized(len)).unwrap();
    }
    t.finish().unwrap();
}

fn replay(file: &Path, extra: &str) -> String {
    let wl =
        format!("[workload.pcap_replay]\nfrom = \"a\"\nto = \"b\"\nfile = {:?}\n{extra}\n", file.display().to_string());
    two_hosts("rate = \"1Gbps\"\npropagation = \"500ns\"", "", &wl)
}

#[test]
fn replayed_datagrams_keep_the_captures_sizes_and_times() {
    let dir = scratch("roundtrip");
    // 200 packets of 28 B to 1500 B of IP, 20 µs apart with a 1 ms pause in
    // the middle: every one fits on the idle wire before the next is due.
    let records: Vec<(u64, u16)> =
        (0..200u64).map(|i| (i * 20_000 + if i >= 100 { 1_000_000 } else { 0 }, (28 + i * 7 % 1473) as u16)).collect();
    let input = dir.join("in.pcap");
    write_pcap(&input, &records);
    let out = dir.join("out");
    let opts = RunOptions { pcap_dir: Some(out.clone()), ..Default::default() };
    let r = run_toml(&replay(&input, ""), &opts).unwrap_or_else(|e| panic!("{e}"));
    let s = &r.summary;
    assert!(s.verified);
    assert_eq!((s.datagrams_sent, s.datagrams_received), (Some(200), Some(200)));
    // UDP payload = IP length - 20 - 8, but never below the 8-byte sequence number.
    let payload: u64 = records.iter().map(|&(_, l)| (u64::from(l) - 28).max(8)).sum();
    assert_eq!(s.payload_bytes, payload);
    // On the wire the UDP frames go at the captured times (relative to the
    // first record, the sender starting at 0) with the captured sizes; only
    // the first waits for ARP: request and reply of 84 B of wire time
    // (672 ns) plus 500 ns of cable each, 2344 ns.
    let trace = pcap_read::parse(&std::fs::read(out.join("link0-a-b.pcap")).unwrap()).unwrap();
    let sent: Vec<(u128, usize)> = trace
        .records
        .iter()
        .filter(|f| f.data.get(12..14) == Some(&[0x08, 0x00][..]) && f.data[14 + 9] == 17)
        .map(|f| (f.time_ns, f.data.len()))
        .collect();
    assert_eq!(sent.len(), 200);
    for (i, (&(t, len), &(ns, ip))) in sent.iter().zip(&records).enumerate() {
        let want_t = if i == 0 { 2344 } else { ns };
        let want_ip = u64::from(ip).max(36);
        assert_eq!((t, len as u64), (u128::from(want_t), 14 + want_ip), "datagram {i}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_truncated_pcap_is_a_config_error_naming_the_record() {
    let dir = scratch("truncated");
    let good = dir.join("good.pcap");
    write_pcap(&good, &[(0, 100), (1000, 1500), (2000, 1500)]);
    let bytes = std::fs::read(&good).unwrap();
    let cut = dir.join("cut.pcap");
    // Global header 24 B, records of 16 + 114 and 16 + 1514 B, then the third
    // record's header and 100 of its 1514 bytes.
    std::fs::write(&cut, &bytes[..24 + 130 + 1530 + 16 + 100]).unwrap();
    let text = replay(&cut, "");
    match run_toml(&text, &RunOptions::default()) {
        Err(Error::Config(e)) => {
            assert_eq!(e.path, "workload.pcap_replay.file");
            assert!(e.reason.ends_with("pcap record 3: truncated: header says 1514 bytes, 100 remain"), "{}", e.reason);
        }
        other => panic!("expected a config error, got {:?}", other.map(|_| ())),
    }
    // A device is not read at all (it could block or never end).
    match run_toml(&replay(Path::new("/dev/zero"), ""), &RunOptions::default()) {
        Err(Error::Config(e)) => assert_eq!(e.reason, "cannot read \"/dev/zero\": not a regular file"),
        other => panic!("expected a config error, got {:?}", other.map(|_| ())),
    }
    let missing = replay(&dir.join("missing.pcap"), "");
    match run_toml(&missing, &RunOptions::default()) {
        Err(Error::Config(e)) => assert!(e.reason.starts_with("cannot read"), "{}", e.reason),
        other => panic!("expected a config error, got {:?}", other.map(|_| ())),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn limit_replays_only_the_first_records() {
    let dir = scratch("limit");
    let input = dir.join("in.pcap");
    write_pcap(&input, &[(0, 100), (10_000, 200), (20_000, 300)]);
    let r = run(&replay(&input, "limit = 2"));
    assert_eq!(r.summary.datagrams_received, Some(2));
    assert_eq!(r.summary.payload_bytes, 72 + 172);
    std::fs::remove_dir_all(&dir).unwrap();
}
