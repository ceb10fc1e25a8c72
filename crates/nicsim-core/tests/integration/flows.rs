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

/// One flow from a to b for 20 ms after a 5 ms warm-up, with `rpc` beside it.
fn flow_with_rpcs(rpc: &str) -> String {
    format!(
        "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nduration = \"20ms\"\nomit = \"5ms\"\n{}",
        if rpc.is_empty() { String::new() } else { format!("rpc = {{ {rpc} }}\n") }
    )
}

#[test]
fn request_response_connections_beside_a_flow_share_its_link_and_stop_with_it() {
    // Linux's Nagle rule: a request's short tail does not wait for a delayed ACK.
    let (link, host) = ("rate = \"1Gbps\"", "tcp = { nagle = \"minshall\" }");
    let alone = run(&two_hosts(link, host, &flow_with_rpcs("")));
    let rpc = "connections = 4, request = \"4000B\", response = \"4000B\"";
    let mixed = run(&two_hosts(link, host, &flow_with_rpcs(rpc)));
    assert!(mixed.summary.verified);
    // The flow and every connection's requests and responses, each checked on its own stream.
    let from_a = mixed.flows.iter().filter(|f| f.from == "a" && f.to == "b").count();
    let from_b = mixed.flows.iter().filter(|f| f.from == "b" && f.to == "a").count();
    assert_eq!((from_a, from_b), (5, 4), "{:?}", mixed.flows);
    // The connections ran through the measured interval, one transaction at
    // a time each (a few: each request waits behind the flow's data, about
    // 2 ms of it at 1 Gb/s, in the sender's buffer and the link's queue).
    let n = mixed.summary.transactions.expect("the connections' transactions");
    let rate = mixed.summary.transaction_rate.expect("their rate");
    assert!(n >= 20, "{n} transactions");
    assert!(mixed.flows.iter().filter(|f| f.from == "b").all(|f| f.bytes >= 4000), "{:?}", mixed.flows);
    // They share the link with the flow: the flow gets less, and what b
    // received after the warm-up, the flow's bytes and the connections'
    // requests, fits what the link carries from then to the run's end.
    let (g0, g1) = (alone.summary.goodput_bps, mixed.summary.goodput_bps);
    assert!(g1 < g0, "flow {g1} b/s beside the connections vs {g0} alone");
    let received = g1 * mixed.summary.duration_s + n as f64 * 4000.0 * 8.0;
    let carried = CEILING * (mixed.summary.sim_time_s - 0.005);
    assert!(received <= carried, "{received} bits received after the warm-up, the link carries {carried}");
    assert!(rate > 0.0);
    // No transaction starts after the flow's end (5 + 20 ms): the run
    // outlasts the flow alone (which drains its buffer after it) by at most
    // one transaction.
    let p99 = mixed.summary.p99_latency_s.expect("latencies");
    let (end0, end1) = (alone.summary.sim_time_s, mixed.summary.sim_time_s);
    assert!(end1 <= end0 + p99, "run ends at {end1} s, the flow alone at {end0} s, p99 {p99} s");
}

#[test]
fn bad_rpc_settings_beside_a_flow_name_their_field() {
    let flow = |extra: &str, rpc: &str| {
        two_hosts("", "", &format!("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\n{extra}\nrpc = {{ {rpc} }}\n"))
    };
    for (text, path, reason) in [
        (flow("bytes = \"1MiB\"", "connections = 1"), "workload.bulk.rpc", "needs duration"),
        (flow("duration = \"1ms\"", "connections = 0"), "workload.bulk.rpc.connections", "1 to 1024"),
        (flow("duration = \"1ms\"", "connections = 1, request = \"0B\""), "workload.bulk.rpc.request", "1B to 1GiB"),
        (flow("duration = \"1ms\"\nflows = 4", "connections = 2, port = 5003"), "workload.bulk.rpc.port", "overlap"),
        (flow("duration = \"1ms\"", "connections = 2, port = 65535"), "workload.bulk.rpc.port", "65535"),
    ] {
        let e = config_error(&text);
        assert_eq!(e.path, path, "{e}");
        assert!(e.reason.contains(reason), "{path}: {}", e.reason);
    }
}
