//! Dolly's multi-drop chain: every node gets the image intact, a middle
//! node's link carries the image both ways, a slow disk or a slow relay
//! bounds the whole chain.

use nicsim_core::api::Report;

use crate::ideal::{config_error, run};

/// Nodes `n0..n{k-1}` on one switch, `host` spliced into each, a Dolly
/// chain over them in order with `extra` options.
fn chain(k: usize, host: &str, extra: &str) -> String {
    let mut t = String::new();
    for i in 0..k {
        t += &format!("[[hosts]]\nname = \"n{i}\"\n{host}\n");
    }
    t += "[[switches]]\nname = \"sw\"\n";
    for i in 0..k {
        t += &format!("[[links]]\nendpoints = [\"n{i}\", \"sw\"]\n");
    }
    let nodes: Vec<String> = (0..k).map(|i| format!("\"n{i}\"")).collect();
    t + &format!("[workload.dolly]\nnodes = [{}]\n{extra}\n", nodes.join(", "))
}

fn utilization(r: &Report, direction: &str) -> f64 {
    r.links.iter().find(|l| l.direction == direction).expect("link").utilization
}

#[test]
fn every_node_receives_the_whole_image_at_near_the_wire_rate() {
    let r = run(&chain(4, "", "bytes = \"16MiB\""));
    assert!(r.summary.verified);
    let hops: Vec<(&str, &str, u64)> = r.flows.iter().map(|f| (f.from.as_str(), f.to.as_str(), f.bytes)).collect();
    assert_eq!(hops, vec![("n0", "n1", 16 << 20), ("n1", "n2", 16 << 20), ("n2", "n3", 16 << 20)]);
    // A middle node's one link carries the image out and the ACKs of the
    // image coming in, both ways: the chain runs at a full-duplex link's
    // rate for data plus ACKs, a little under the one-way ceiling.
    let ceiling = 1e9 * 1448.0 / 1538.0;
    let g = r.summary.goodput_bps;
    assert!(g < ceiling && g > 0.95 * ceiling, "chain at {g} bit/s, ceiling {ceiling}");
    for d in ["n1->sw", "sw->n1", "n2->sw", "sw->n2"] {
        assert!(utilization(&r, d) > 0.98, "{d} only {} busy", utilization(&r, d));
    }
}

#[test]
fn a_slow_disk_holds_the_whole_chain_to_its_rate() {
    let r = run(&chain(3, "", "bytes = \"8MiB\"\ndisk_rate = \"25MB/s\""));
    assert!(r.summary.verified);
    let g = r.summary.goodput_bps;
    assert!((g / 200e6 - 1.0).abs() < 0.01, "chain at {g} bit/s, disk 200 Mbit/s");
}

#[test]
fn a_cpu_bound_relay_runs_slower_than_a_point_to_point_transfer() {
    // A relay does a receiver's and a sender's stack work for every byte,
    // on one CPU: the chain is slower than one transfer between two such
    // hosts, and the relay's CPU is the busiest.
    let host = "profile = \"kurmann-pii-400\"";
    let r = run(&chain(3, host, "bytes = \"8MiB\""));
    assert!(r.summary.verified);
    let pair = run(&chain(2, host, "bytes = \"8MiB\""));
    let (g3, g2) = (r.summary.goodput_bps, pair.summary.goodput_bps);
    assert!(g3 < 0.8 * g2, "chain {g3} bit/s vs a pair's {g2}");
    let util = |h: usize| r.hosts[h].timing.as_ref().expect("timed").cores[0].utilization;
    assert!(util(1) > 0.95, "relay CPU {}", util(1));
    assert!(util(1) > util(0) && util(1) > util(2));
}

#[test]
fn bad_chains_name_the_field() {
    for (extra, nodes, path, reason) in [
        ("bytes = \"1MiB\"", "[\"n0\"]", "workload.dolly.nodes", "at least two"),
        ("bytes = \"1MiB\"", "[\"n0\", \"n1\", \"n0\"]", "workload.dolly.nodes[2]", "already nodes[0]"),
        ("bytes = \"1MiB\"", "[\"n0\", \"zz\"]", "workload.dolly.nodes[1]", "no host named"),
        ("bytes = \"0B\"", "[\"n0\", \"n1\"]", "workload.dolly.bytes", "above zero"),
        ("bytes = \"1MiB\"\ndisk_rate = \"0MB/s\"", "[\"n0\", \"n1\"]", "workload.dolly.disk_rate", "above zero"),
    ] {
        let text = chain(3, "", extra).replace("[\"n0\", \"n1\", \"n2\"]", nodes);
        let e = config_error(&text);
        assert_eq!(e.path, path, "{e}");
        assert!(e.reason.contains(reason), "{path}: {}", e.reason);
    }
    // Two nodes with no path between them.
    let apart = "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[hosts]]\nname = \"c\"\n[[hosts]]\nname = \"d\"\n\
                 [[links]]\nendpoints = [\"a\", \"b\"]\n[[links]]\nendpoints = [\"c\", \"d\"]\n\
                 [workload.dolly]\nnodes = [\"a\", \"b\", \"c\"]\nbytes = \"1MiB\"\n";
    let e = config_error(apart);
    assert_eq!(e.path, "workload.dolly.nodes[2]");
    assert!(e.reason.contains("not connected"), "{}", e.reason);
}
