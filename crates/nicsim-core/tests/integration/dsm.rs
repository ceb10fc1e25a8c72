//! Page traffic of a distributed shared memory: nodes fault on pages held
//! by a home node, one request at a time each.

use crate::ideal::{config_error, run};

/// Hosts `home` and `nodes` on one GbE switch, a DSM workload with `extra`.
fn dsm(nodes: &[&str], extra: &str) -> String {
    let mut t = "[[hosts]]\nname = \"home\"\n".to_string();
    for n in nodes {
        t += &format!("[[hosts]]\nname = \"{n}\"\n");
    }
    t += "[[switches]]\nname = \"sw\"\n[[links]]\nendpoints = [\"home\", \"sw\"]\n";
    for n in nodes {
        t += &format!("[[links]]\nendpoints = [\"{n}\", \"sw\"]\n");
    }
    let list: Vec<String> = nodes.iter().map(|n| format!("\"{n}\"")).collect();
    t + &format!("[workload.dsm]\nhome = \"home\"\nnodes = [{}]\n{extra}\n", list.join(", "))
}

#[test]
fn a_page_fault_costs_at_least_the_page_on_the_wire_twice() {
    let r = run(&dsm(&["a"], "pages = 200"));
    assert!(r.summary.verified);
    assert_eq!(r.summary.transactions, Some(200));
    // Every page and request arrived intact, in both directions.
    let bytes: Vec<(&str, &str, u64)> = r.flows.iter().map(|f| (f.from.as_str(), f.to.as_str(), f.bytes)).collect();
    assert!(bytes.contains(&("home", "a", 200 * 4096)), "{bytes:?}");
    assert!(bytes.contains(&("a", "home", 200 * 64)), "{bytes:?}");
    // A 4 KiB page is three full-size frames' worth of wire (1448 + 1448 +
    // 1200 B of payload, 66 B of headers each, + 24 B framing): about 34 µs at
    // 1 Gb/s; through the store-and-forward switch its last frame crosses a
    // second link, and the request crosses two. Ideal hosts add nothing else.
    let page_wire = (4096.0 + 3.0 * (66.0 + 24.0)) * 8.0 / 1e9;
    let p50 = r.summary.p50_latency_s.expect("latency");
    assert!(p50 > page_wire, "page fault {p50} s below the page's wire time {page_wire} s");
    assert!(p50 < page_wire + 30e-6, "page fault {p50} s, page wire time {page_wire} s");
}

#[test]
fn think_time_adds_to_every_fault_but_the_first() {
    let base = run(&dsm(&["a"], "pages = 50"));
    let slow = run(&dsm(&["a"], "pages = 50\nthink = \"100us\""));
    assert!(slow.summary.verified);
    let extra = slow.summary.duration_s - base.summary.duration_s;
    // Within 0.1 µs per gap (TCP's ACKs fall a little differently around
    // a pause; measured: 61 ns per gap less).
    assert!((extra - 49.0 * 100e-6).abs() < 49.0 * 0.1e-6, "think added {extra} s over 49 gaps of 100 µs");
    // The faults themselves take as long as before.
    let (a, b) = (base.summary.p50_latency_s.unwrap(), slow.summary.p50_latency_s.unwrap());
    assert!((a - b).abs() < 1e-7, "fault {a} s alone vs {b} s with think time");
}

#[test]
fn concurrent_faults_share_the_home_nodes_port() {
    let one = run(&dsm(&["a"], "pages = 300"));
    let three = run(&dsm(&["a", "b", "c"], "pages = 300"));
    assert!(three.summary.verified);
    assert_eq!(three.summary.transactions, Some(900));
    for n in ["a", "b", "c"] {
        assert!(three.flows.iter().any(|f| f.from == "home" && f.to == n && f.bytes == 300 * 4096), "{n}");
        // Each node's requests, named by the node that sent them.
        assert!(three.flows.iter().any(|f| f.from == n && f.to == "home" && f.bytes == 300 * 64), "{n}");
    }
    // Three nodes fault at once: pages queue at home's port, so each fault
    // takes longer, but more pages move per second in all.
    let (lat1, lat3) = (one.summary.mean_latency_s.unwrap(), three.summary.mean_latency_s.unwrap());
    assert!(lat3 > lat1 * 1.2, "mean fault {lat3} s with three nodes vs {lat1} s alone");
    let (rate1, rate3) = (one.summary.transaction_rate.unwrap(), three.summary.transaction_rate.unwrap());
    assert!(rate3 > rate1 * 1.5, "{rate3} pages/s with three nodes vs {rate1} alone");
}

#[test]
fn bad_dsm_settings_name_the_field() {
    for (nodes, extra, path, reason) in [
        (&["a"][..], "nodes = []", "workload.dsm.nodes", "at least one"),
        (&["a"][..], "pages = 0", "workload.dsm.pages", "at least 1"),
        (&["a"][..], "page_size = \"0B\"", "workload.dsm.page_size", "1B to 1GiB"),
        (&["a", "b"][..], "nodes = [\"a\", \"a\"]", "workload.dsm.nodes[1]", "already nodes[0]"),
        (&["a"][..], "nodes = [\"home\"]", "workload.dsm.nodes[0]", "different hosts"),
        (&["a"][..], "think = \"20s\"", "workload.dsm.think", "at most 10s"),
        (&["a", "b"][..], "port = 65535", "workload.dsm.port", "65535"),
        (&["a"][..], "pages = 5\nduration = \"1ms\"", "workload.dsm", "not both"),
        (&["a"][..], "duration = \"0s\"", "workload.dsm.duration", "above zero"),
        (&["a"][..], "omit = \"1ms\"", "workload.dsm.omit", "needs duration"),
    ] {
        let mut text = dsm(nodes, extra);
        if extra.starts_with("nodes") {
            // Replace the generated list with the bad one.
            let start = text.find("nodes = [").unwrap();
            let end = start + text[start..].find('\n').unwrap();
            text.replace_range(start..=end, "");
        }
        let e = config_error(&text);
        assert_eq!(e.path, path, "{e}");
        assert!(e.reason.contains(reason), "{path}: {}", e.reason);
    }
}

#[test]
fn a_home_serving_more_nodes_than_a_default_neighbour_cache_never_waits_for_arp() {
    // smoltcp's default neighbour cache holds 8 hosts; a home serving 16
    // evicted some and waited a second of ARP silence per miss (its nodes'
    // SYNs backed off for 31 s). With a cache for the whole subnet, every
    // node's connection opens at once and nothing is retransmitted.
    let names: Vec<String> = (0..16).map(|i| format!("n{i}")).collect();
    let nodes: Vec<&str> = names.iter().map(String::as_str).collect();
    let r = run(&dsm(&nodes, "pages = 20"));
    assert!(r.summary.verified);
    assert_eq!(r.summary.transactions, Some(16 * 20));
    assert_eq!(r.summary.retransmissions, 0);
    // 320 faults of a 4 KiB page through one GbE port: about 11 ms of wire;
    // a single second of waiting would show.
    assert!(r.summary.duration_s < 0.1, "{} s", r.summary.duration_s);
}

#[test]
fn a_dsm_of_fixed_duration_counts_only_the_faults_after_its_warm_up() {
    // Two nodes fault for 30 ms; then for 20 ms after a 10 ms warm-up.
    let plain = run(&dsm(&["a", "b"], "duration = \"30ms\""));
    let warm = run(&dsm(&["a", "b"], "duration = \"20ms\"\nomit = \"10ms\""));
    assert!(plain.summary.verified && warm.summary.verified);
    // Each node stops at the first fault it would start after the end: the
    // run ends within one fault (about 40 us here) of it.
    for r in [&plain, &warm] {
        assert!((r.summary.sim_time_s - 0.030).abs() < 1e-3, "{} s", r.summary.sim_time_s);
    }
    // The measured interval is the 20 ms after the warm-up.
    assert!((warm.summary.duration_s - 0.020).abs() < 1e-3, "{} s", warm.summary.duration_s);
    // The pages delivered during the warm-up were moved and checked, but not counted.
    let n = warm.summary.transactions.unwrap();
    let pages: u64 = warm.flows.iter().filter(|f| f.from == "home").map(|f| f.bytes / 4096).sum();
    assert_eq!(pages, plain.summary.transactions.unwrap(), "the same faults with and without a warm-up");
    assert!(pages > n, "{pages} pages moved, {n} measured");
    // What is measured is the measured faults' pages and requests.
    assert_eq!(warm.summary.payload_bytes, n * (4096 + 64));
    // Left out with the warm-up, the connections' start (the first page's
    // short tail waits for a delayed ACK under Nagle's original rule) no
    // longer lowers the rate, which stays below what home's GbE port can
    // carry: a page and its three frames' headers and framing, about 35 us.
    let (measured, whole) = (warm.summary.transaction_rate.unwrap(), plain.summary.transaction_rate.unwrap());
    let port = 1e9 / ((4096.0 + 3.0 * (66.0 + 24.0)) * 8.0);
    assert!(measured > whole && measured < port, "{measured} faults/s measured, {whole} in all, port {port}");
}
