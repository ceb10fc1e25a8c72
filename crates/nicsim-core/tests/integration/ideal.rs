//! Ideal hosts: physics (goodput ceilings, latency, conservation),
//! integrity under impairments, determinism, and scenario errors.

use nicsim_core::api::Report;
use nicsim_core::{run_toml, ConfigError, Error, RunOptions};

pub(crate) fn scenario_file(name: &str) -> String {
    let path = format!("{}/../../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub(crate) fn run(text: &str) -> Report {
    run_toml(text, &RunOptions::default()).unwrap_or_else(|e| panic!("run failed: {e}"))
}

fn run_seed(text: &str, seed: u64) -> Report {
    run_toml(text, &RunOptions { seed: Some(seed), ..Default::default() })
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
}

/// A two-host scenario with a bulk transfer; `link` and `extra` are spliced in.
pub(crate) fn two_hosts(link: &str, host: &str, workload: &str) -> String {
    format!(
        "[[hosts]]\nname = \"a\"\n{host}\n[[hosts]]\nname = \"b\"\n{host}\n\
         [[links]]\nendpoints = [\"a\", \"b\"]\n{link}\n{workload}\n"
    )
}

pub(crate) fn bulk(bytes: &str) -> String {
    format!("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"{bytes}\"\n")
}

pub(crate) fn config_error(text: &str) -> ConfigError {
    match run_toml(text, &RunOptions::default()) {
        Err(Error::Config(e)) => e,
        Err(other) => panic!("expected a config error, got {other}"),
        Ok(_) => panic!("expected a config error, the run succeeded"),
    }
}

// ---------------------------------------------------------------- physics

/// Ethernet goodput of full segments: payload / (payload + 40 B IP/TCP +
/// 12 B timestamps + 14 B header + 4 B FCS + 8 B preamble + 12 B gap).
fn ceiling(rate: f64, mtu: f64) -> f64 {
    rate * (mtu - 52.0) / (mtu + 38.0)
}

fn assert_near_ceiling(r: &Report, rate: f64, mtu: f64) {
    let s = &r.summary;
    let c = ceiling(rate, mtu);
    assert!(s.verified);
    assert_eq!(s.retransmissions, 0, "lossless link");
    assert_eq!(s.drops, 0);
    assert!(s.goodput_bps <= c * 1.000_001, "goodput {} above the physical ceiling {c}", s.goodput_bps);
    assert!(s.goodput_bps >= c * 0.99, "goodput {} more than 1 % below the ceiling {c}", s.goodput_bps);
}

#[test]
fn gbe_mtu1500_reaches_the_ethernet_ceiling() {
    let r = run(&scenario_file("gbe-mtu1500-bulk"));
    assert_near_ceiling(&r, 1e9, 1500.0);
    // 1448/1538 of a gigabit, as the measurement spec states.
    assert!((ceiling(1e9, 1500.0) - 941.482e6).abs() < 1e3);
}

#[test]
fn gbe_mtu9000_reaches_the_jumbo_ceiling() {
    let r = run(&scenario_file("gbe-mtu9000-bulk"));
    assert_near_ceiling(&r, 1e9, 9000.0);
}

#[test]
fn a_9216_byte_mtu_is_accepted_and_fills_its_frames() {
    // 9216 B: the largest jumbo MTU common switches and NICs accept, the
    // limit of `links[].mtu`.
    let text = scenario_file("gbe-mtu9000-bulk").replace("mtu = \"9000B\"", "mtu = \"9216B\"");
    assert!(text.contains("9216B"));
    let r = run(&text);
    assert_near_ceiling(&r, 1e9, 9216.0);
    // Frames larger than a 9000-byte MTU allows (9014 B with the Ethernet
    // header): the mean over the data direction, handshake included.
    let ab = &r.links[0].stats;
    assert!(ab.bytes / ab.frames > 9014, "mean frame {} B", ab.bytes / ab.frames);
}

#[test]
fn ten_gbe_reaches_its_ceiling() {
    let text = scenario_file("10gbe-bulk").replace("512MiB", "128MiB");
    let r = run(&text);
    assert_near_ceiling(&r, 1e10, 1500.0);
}

#[test]
fn bytes_are_conserved_from_wire_to_application() {
    let r = run(&two_hosts("rate = \"1Gbps\"", "", &bulk("3MB")));
    let ab = &r.links[0];
    assert_eq!(ab.direction, "a->b");
    assert_eq!(r.summary.payload_bytes, 3_000_000);
    assert_eq!(r.flows[0].bytes, 3_000_000);
    // Every payload byte crossed the wire once, inside frames with headers.
    let headers = ab.stats.frames * (14 + 20 + 20);
    assert!(ab.stats.bytes >= 3_000_000 + headers);
    // Wire bytes add FCS, preamble and gap (and padding) to every frame.
    assert!(ab.stats.wire_bytes >= ab.stats.bytes + 24 * ab.stats.frames);
    // The host counters agree with the link's.
    assert_eq!(r.hosts[0].stats.tx_frames, ab.stats.frames);
    assert_eq!(r.hosts[1].stats.rx_frames, ab.stats.frames);
}

#[test]
fn request_response_latency_is_the_physical_round_trip() {
    // 1-byte requests and responses: each a 67-byte frame (14 + 20 + 32 TCP
    // with timestamps + 1), 91 bytes of wire time = 728 ns at 1 Gb/s, plus
    // 500 ns of propagation each way. Ideal hosts add nothing.
    let wl = "[workload.request_response]\nclient = \"a\"\nserver = \"b\"\ntransactions = 200\n";
    let r = run(&two_hosts("rate = \"1Gbps\"\npropagation = \"500ns\"", "", wl));
    let s = &r.summary;
    assert_eq!(s.transactions, Some(200));
    let one_way = 728e-9 + 500e-9;
    let p50 = s.p50_latency_s.unwrap();
    assert!((p50 - 2.0 * one_way).abs() < 1e-12, "median RTT {p50} != {}", 2.0 * one_way);
    assert!(s.mean_latency_s.unwrap() >= p50 * 0.999);
}

#[test]
fn doubling_the_rate_halves_the_transfer_time() {
    let slow = run(&two_hosts("rate = \"100Mbps\"", "", &bulk("2MB")));
    let fast = run(&two_hosts("rate = \"200Mbps\"", "", &bulk("2MB")));
    let ratio = slow.summary.duration_s / fast.summary.duration_s;
    assert!((ratio - 2.0).abs() < 0.01, "ratio {ratio}");
}

#[test]
fn duration_mode_sends_for_the_given_time() {
    let wl = "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nduration = \"20ms\"\n";
    let r = run(&two_hosts("rate = \"1Gbps\"", "", wl));
    let s = &r.summary;
    // Writing stops at 20 ms; what the 256 KiB send buffer still holds then
    // drains at line rate (2.2 ms more at most).
    let drain = 256.0 * 1024.0 * 8.0 / ceiling(1e9, 1500.0);
    assert!(s.duration_s >= 0.020 && s.duration_s < 0.020 + drain + 1e-4, "duration {}", s.duration_s);
    assert!(s.goodput_bps > 0.99 * ceiling(1e9, 1500.0));
}

// ------------------------------------------------------------ integrity

#[test]
fn without_backpressure_a_small_queue_drops_and_tcp_recovers() {
    let link = "rate = \"1Gbps\"\nqueue = 8\nbackpressure = false";
    let r = run(&two_hosts(link, "", &bulk("400kB")));
    assert!(r.summary.drops > 0, "an 8-frame queue must overflow");
    assert!(r.summary.retransmissions > 0);
    assert_eq!(r.flows[0].bytes, 400_000);
}

mod impaired {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// With loss, duplication, reordering and corruption the stream still
        /// arrives intact (smoltcp's 1 s minimum RTO makes each loss cost a
        /// simulated second, but wall time stays small).
        #[test]
        fn the_stream_arrives_intact(seed in any::<u64>(), cc in prop::sample::select(vec!["none", "reno", "cubic"])) {
            let link = "rate = \"1Gbps\"\nimpairments = { loss = 0.01, duplicate = 0.01, reorder = 0.01, corrupt = 0.005 }";
            let host = format!("tcp = {{ congestion_control = \"{cc}\" }}");
            let text = two_hosts(link, &host, &bulk("300kB")) + "[run]\ntime_limit = \"600s\"\n";
            let r = run_seed(&text, seed);
            prop_assert!(r.summary.verified);
            prop_assert_eq!(r.flows[0].bytes, 300_000);
            let plain = run_seed(&two_hosts("rate = \"1Gbps\"", "", &bulk("300kB")), seed);
            prop_assert_eq!(plain.flows[0].bytes, r.flows[0].bytes);
        }
    }
}

// ----------------------------------------------------------- determinism

#[test]
fn same_seed_gives_identical_reports_and_traces() {
    let text = two_hosts("rate = \"1Gbps\"\nimpairments = { loss = 0.002, reorder = 0.01 }", "", &bulk("2MB"));
    let tmp = std::env::temp_dir().join(format!("nicsim-det-{}", std::process::id()));
    let runs: Vec<(String, Vec<u8>)> = (0..2)
        .map(|i| {
            let dir = tmp.join(i.to_string());
            let r = run_toml(&text, &RunOptions { seed: Some(9), pcap_dir: Some(dir.clone()), ..Default::default() })
                .unwrap();
            (r.to_json(), std::fs::read(dir.join("link0-a-b.pcap")).unwrap())
        })
        .collect();
    assert_eq!(runs[0].0, runs[1].0);
    assert_eq!(runs[0].1, runs[1].1);
    let other = run_toml(&text, &RunOptions { seed: Some(10), ..Default::default() }).unwrap();
    assert_ne!(other.to_json(), runs[0].0, "a different seed changes ISNs and impairments");
    std::fs::remove_dir_all(&tmp).unwrap();
}

// ------------------------------------------------------------ bad input

#[test]
fn unknown_key_names_its_path() {
    let e = config_error(&two_hosts("rate = \"1Gbps\"\nrat = \"1Gbps\"", "", &bulk("1MB")));
    assert_eq!(e.path, "links[0].rat");
    assert!(e.reason.contains("unknown field"), "{}", e.reason);
}

#[test]
fn unknown_key_deep_in_a_host_names_its_path() {
    let e = config_error(&two_hosts("", "tcp = { nagel = false }", &bulk("1MB")));
    assert_eq!(e.path, "hosts[0].tcp.nagel");
}

#[test]
fn bad_unit_names_its_path() {
    let e = config_error(&two_hosts("rate = \"1Gbs\"", "", &bulk("1MB")));
    assert_eq!(e.path, "links[0].rate");
    assert!(e.reason.contains("unknown unit"), "{}", e.reason);
    let e = config_error(&two_hosts("", "tcp = { rx_buffer = \"64KB\" }", &bulk("1MB")));
    assert_eq!(e.path, "hosts[0].tcp.rx_buffer");
    assert!(e.reason.contains("ambiguous"), "{}", e.reason);
    let e = config_error(&two_hosts("mtu = 1500", "", &bulk("1MB")));
    assert_eq!(e.path, "links[0].mtu");
    assert!(e.reason.contains("missing unit"), "{}", e.reason);
}

#[test]
fn out_of_range_names_its_path() {
    let e = config_error(&two_hosts("rate = \"800Gbps\"", "", &bulk("1MB")));
    assert_eq!(e.path, "links[0].rate");
    let e = config_error(&two_hosts("impairments = { loss = 1.5 }", "", &bulk("1MB")));
    assert_eq!(e.path, "links[0].impairments.loss");
    let e = config_error(&two_hosts("mtu = \"10000B\"", "", &bulk("1MB")));
    assert_eq!(e.path, "links[0].mtu");
}

#[test]
fn inconsistent_combinations_name_their_path() {
    let e = config_error(&two_hosts("rate = \"100Mbps\"\nmtu = \"9000B\"", "", &bulk("1MB")));
    assert_eq!(e.path, "links[0].mtu");
    assert!(e.reason.contains("jumbo"), "{}", e.reason);
    let both = "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MB\"\nduration = \"1s\"\n";
    assert_eq!(config_error(&two_hosts("", "", both)).path, "workload.bulk");
    let to_self = "[workload.bulk]\nfrom = \"a\"\nto = \"a\"\nbytes = \"1MB\"\n";
    assert_eq!(config_error(&two_hosts("", "", to_self)).path, "workload.bulk.to");
    let e = config_error(&two_hosts("mtu = \"1500B\"", "tcp = { mss = \"8000B\" }", &bulk("1MB")));
    assert_eq!(e.path, "hosts[0].tcp.mss");
}

#[test]
fn toml_syntax_errors_give_a_line() {
    let e = config_error("[[hosts]]\nname = \"a\nname = 3\n");
    assert!(e.reason.contains("line"), "{}", e.reason);
}

#[test]
fn an_unfinished_workload_is_a_simulation_error() {
    let text = two_hosts("rate = \"10Mbps\"", "", &bulk("10MB")) + "[run]\ntime_limit = \"10ms\"\n";
    match run_toml(&text, &RunOptions::default()) {
        Err(Error::Simulation(m)) => assert!(m.contains("did not finish"), "{m}"),
        other => panic!("expected a simulation error, got {:?}", other.map(|r| r.summary)),
    }
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    const VALID: &str = "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[links]]\nendpoints = [\"a\", \"b\"]\n\
        rate = \"1Gbps\"\n[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"10kB\"\n";

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Arbitrary text is rejected with an error, never a panic.
        #[test]
        fn on_arbitrary_text(text in "\\PC{0,200}") {
            let _ = nicsim_core::resolve_toml(&text, "fuzz");
        }

        /// A valid scenario with one byte replaced either runs or is
        /// rejected with a config error that names a field or a line.
        #[test]
        fn on_mutated_scenarios(at in 0usize..VALID.len(), byte in prop::sample::select(b"0aZ\"=[]{}.,-_ 9\n".to_vec())) {
            let mut bytes = VALID.as_bytes().to_vec();
            bytes[at] = byte;
            let Ok(text) = String::from_utf8(bytes) else { return Ok(()) };
            match nicsim_core::resolve_toml(&text, "fuzz") {
                Ok(_) => {}
                Err(Error::Config(e)) => prop_assert!(!e.reason.is_empty()),
                Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
            }
        }
    }
}
