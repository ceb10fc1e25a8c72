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
