//! Many concurrent TCP flows between a host pair: every flow intact, the
//! aggregate at the wire's ceiling, the flows sharing it.

use nicsim_core::api::Report;

use crate::ideal::{config_error, run, two_hosts};

fn flows(n: u32, amount: &str) -> String {
    format!("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nflows = {n}\n{amount}\n")
}

/// GbE goodput ceiling at MTU 1500 with timestamps: 1448 B per 1538 B of wire time.
const CEILING: f64 = 1e9 * 1448.0 / 1538.0;

/// Every flow delivered `bytes`, each on its own pattern stream.
fn assert_each_flow_intact(r: &Report, n: u64, bytes: u64) {
    assert!(r.summary.verified);
    let mut streams: Vec<u64> = r.flows.iter().filter(|f| f.to == "b").map(|f| f.stream).collect();
    streams.sort_unstable();
    assert_eq!(streams, (0..n).collect::<Vec<_>>(), "one checked stream per flow");
    assert!(r.flows.iter().all(|f| f.bytes == bytes), "every flow delivered {bytes} bytes");
    assert_eq!(r.summary.payload_bytes, n * bytes);
}

fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    sum * sum / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

#[test]
fn eight_flows_reach_the_gbe_ceiling_together_and_share_it() {
    let r = run(&two_hosts("rate = \"1Gbps\"", "", &flows(8, "bytes = \"8MiB\"")));
    assert_each_flow_intact(&r, 8, 8 << 20);
    let g = r.summary.goodput_bps;
    assert!((0.99 * CEILING..=CEILING * 1.000_001).contains(&g), "aggregate {g} vs ceiling {CEILING}");
    assert_eq!((r.summary.retransmissions, r.summary.drops), (0, 0));
    let rows = r.bulk_flows.as_ref().expect("per-flow rows");
    assert_eq!(rows.len(), 8);
    let per: Vec<f64> = rows.iter().map(|f| f.goodput_bps).collect();
    assert!(per.iter().all(|&x| x > 0.0 && x < CEILING), "{per:?}");
    let fairness = r.summary.jain_fairness.unwrap();
    assert!((fairness - jain(&per)).abs() < 1e-12);
    assert!(fairness > 0.9, "8 flows share the link fairly: Jain {fairness}");
}

#[test]
fn sixty_four_flows_stay_intact_at_the_ceiling() {
    let r = run(&two_hosts("rate = \"1Gbps\"", "", &flows(64, "bytes = \"1MiB\"")));
    assert_each_flow_intact(&r, 64, 1 << 20);
    let g = r.summary.goodput_bps;
    assert!((0.99 * CEILING..=CEILING * 1.000_001).contains(&g), "aggregate {g}");
}

#[test]
fn a_cpu_bound_receiver_gives_the_same_aggregate_to_four_flows_as_to_one() {
    let host = "profile = \"kurmann-pii-400\"";
    let one = run(&two_hosts("rate = \"1Gbps\"", host, &flows(1, "bytes = \"16MiB\"")));
    let four = run(&two_hosts("rate = \"1Gbps\"", host, &flows(4, "bytes = \"4MiB\"")));
    assert_each_flow_intact(&four, 4, 4 << 20);
    let ratio = four.summary.goodput_bps / one.summary.goodput_bps;
    assert!((ratio - 1.0).abs() < 0.02, "4 flows {} vs 1 flow {}", four.summary.goodput_bps, one.summary.goodput_bps);
    assert!(one.summary.jain_fairness.is_none() && one.bulk_flows.is_none(), "one flow: no per-flow table");
}

#[test]
fn concurrent_flows_are_deterministic() {
    let text = two_hosts("rate = \"1Gbps\"", "", &flows(8, "duration = \"5ms\""));
    assert_eq!(run(&text).to_json(), run(&text).to_json());
}

#[test]
fn bad_flow_counts_name_their_path() {
    let e = config_error(&two_hosts("", "", &flows(0, "bytes = \"1MiB\"")));
    assert_eq!(e.to_string(), "workload.bulk.flows: must be 1 to 1024, got 0");
    let e = config_error(&two_hosts("", "", &flows(10, "bytes = \"1MiB\"\nport = 65530")));
    assert_eq!(e.to_string(), "workload.bulk.flows: flow 9 would need port 65539 (port + flow index), above 65535");
}

/// `[[workload.transfers]]` entries, each `(from, to, extra lines)`.
fn transfers(entries: &[(&str, &str, &str)]) -> String {
    entries
        .iter()
        .map(|(from, to, extra)| format!("[[workload.transfers]]\nfrom = \"{from}\"\nto = \"{to}\"\n{extra}\n"))
        .collect()
}

#[test]
fn opposite_transfers_use_both_directions_of_the_full_duplex_link() {
    let wl = transfers(&[("a", "b", "bytes = \"16MiB\""), ("b", "a", "bytes = \"16MiB\"")]);
    let r = run(&two_hosts("rate = \"1Gbps\"", "", &wl));
    assert!(r.summary.verified);
    let rows = r.bulk_flows.as_ref().unwrap();
    assert_eq!(rows.iter().map(|f| (f.from.as_str(), f.to.as_str())).collect::<Vec<_>>(), [("a", "b"), ("b", "a")]);
    assert!(rows.iter().all(|f| f.bytes == 16 << 20 && f.goodput_bps < CEILING));
    // Each direction carries one flow's 1538-byte data frames and the other
    // flow's ACKs, one 90-byte ACK (of wire time) per two segments: 1448 B of
    // payload per 1538 + 45 B, 914.7 Mbit/s each way, 1.83 Gbit/s together.
    let each = 1e9 * 1448.0 / (1538.0 + 45.0);
    for f in rows {
        assert!((f.goodput_bps / each - 1.0).abs() < 0.005, "{} -> {}: {} vs {each}", f.from, f.to, f.goodput_bps);
    }
    let g = r.summary.goodput_bps;
    assert!((g / (2.0 * each) - 1.0).abs() < 0.005, "aggregate {g} vs 2 x {each}");
    assert!(g > 1.9 * CEILING, "more than one direction's ceiling: full duplex");
}

#[test]
fn transfers_on_separate_links_each_reach_their_ceiling() {
    let text = format!(
        "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[hosts]]\nname = \"c\"\n[[hosts]]\nname = \"d\"\n\
         [[links]]\nendpoints = [\"a\", \"b\"]\n[[links]]\nendpoints = [\"c\", \"d\"]\n{}",
        transfers(&[("a", "b", "bytes = \"8MiB\"\nflows = 2"), ("c", "d", "bytes = \"8MiB\"")])
    );
    let r = run(&text);
    let rows = r.bulk_flows.as_ref().unwrap();
    assert_eq!(rows.len(), 3);
    let cd = rows.iter().find(|f| f.from == "c").unwrap();
    assert!(cd.goodput_bps > 0.99 * CEILING && cd.goodput_bps <= CEILING * 1.000_001, "{}", cd.goodput_bps);
    let ab: f64 = rows.iter().filter(|f| f.from == "a").map(|f| f.bytes as f64).sum();
    assert_eq!(ab, 16.0 * 1048576.0);
    let streams: Vec<u64> = r.flows.iter().map(|f| f.stream).collect();
    assert_eq!(streams.len(), 3, "{streams:?}");
}

#[test]
fn bad_transfers_name_their_entry() {
    let e =
        config_error(&two_hosts("", "", &transfers(&[("a", "b", "bytes = \"1MiB\""), ("b", "z", "bytes = \"1MiB\"")])));
    assert_eq!(e.to_string(), "workload.transfers[1].to: no host named \"z\"");
    let wl = transfers(&[("a", "b", "bytes = \"1MiB\"\nflows = 4"), ("a", "b", "bytes = \"1MiB\"\nport = 5003")]);
    let e = config_error(&two_hosts("", "", &wl));
    assert_eq!(
        e.to_string(),
        "workload.transfers[1].port: ports 5003 to 5003 on host \"b\" overlap those of workload.transfers[0] (5001 to 5004)"
    );
    let e = config_error(&two_hosts("", "", "[workload]\ntransfers = []\n"));
    assert_eq!(e.to_string(), "workload.transfers: give at least one transfer");
}

#[test]
fn a_receiver_writing_to_a_slow_disk_holds_the_transfer_to_the_disk_rate() {
    // Dolly's last node: every 64 KiB read is written to a 25 MB/s
    // (200 Mbit/s) disk before the next read; TCP's window holds the sender back.
    let wl = "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"8MiB\"\ndisk_rate = \"25MB/s\"\n";
    let r = run(&two_hosts("rate = \"1Gbps\"", "", wl));
    assert!(r.summary.verified);
    let g = r.summary.goodput_bps;
    assert!(g <= 200e6 * 1.000_001 && g > 0.99 * 200e6, "goodput {g} vs the 200 Mbit/s disk");
    assert_eq!((r.summary.drops, r.summary.retransmissions), (0, 0));
    // A disk faster than the wire leaves the wire as the limit.
    let fast = run(&two_hosts("rate = \"1Gbps\"", "", &wl.replace("25MB/s", "1GB/s")));
    let g = fast.summary.goodput_bps;
    assert!(g > 0.98 * CEILING && g <= CEILING * 1.000_001, "goodput {g} vs the wire's {CEILING}");
}
