//! netperf-style tests: TCP_CRR (a connection per transaction) and the
//! latency percentiles.

use crate::ideal::{config_error, run, two_hosts};

const GBE: &str = "rate = \"1Gbps\"\npropagation = \"500ns\"";

fn crr(fields: &str) -> String {
    format!("[workload.tcp_crr]\nclient = \"a\"\nserver = \"b\"\n{fields}\n")
}

#[test]
fn one_crr_transaction_costs_arp_handshake_request_and_response() {
    // Wire time at 1 Gb/s of each frame (frame + 4 FCS + 8 preamble + 12 gap),
    // each followed by 500 ns of propagation:
    //   ARP request and reply: 60 + 24 = 84 B -> 672 ns each;
    //   SYN and SYN-ACK: 14 + 20 + 40 TCP (MSS, window scale, SACK, timestamps)
    //   = 74 + 24 = 98 B -> 784 ns each;
    //   the ACK of the SYN-ACK (66 B) and the 1-byte request (67 B) leave back to
    //   back: 90 + 91 B -> 1448 ns; the server ACKs the request at once (a new
    //   connection is in quick-ACK mode), so its ACK (720 ns) goes out just
    //   ahead of the response (728 ns).
    let ns = (672 + 500) * 2 + (784 + 500) * 2 + 1448 + 500 + 720 + 728 + 500;
    let r = run(&two_hosts(GBE, "", &crr("transactions = 1")));
    let s = &r.summary;
    assert_eq!(s.transactions, Some(1));
    let t = s.mean_latency_s.unwrap();
    assert!((t - ns as f64 * 1e-9).abs() < 1e-12, "transaction time {t} s, expected {ns} ns");
}

#[test]
fn tcp_crr_connects_once_per_transaction_and_checks_every_byte() {
    let r = run(&two_hosts(GBE, "", &crr("transactions = 300\nrequest = \"100B\"\nresponse = \"200B\"")));
    let s = &r.summary;
    assert!(s.verified);
    assert_eq!(s.transactions, Some(300));
    let got = |to: &str| r.flows.iter().find(|f| f.to == to).unwrap().bytes;
    assert_eq!((got("b"), got("a")), (300 * 100, 300 * 200), "every request and response arrived whole");
    // Per transaction the client sends SYN, the ACK of the SYN-ACK, the
    // request, the (quick) ACK of the response, FIN and the ACK of the
    // server's FIN: six frames, plus one ARP request for the whole run.
    let a_to_b = r.links.iter().find(|l| l.direction == "a->b").unwrap();
    assert_eq!(a_to_b.stats.frames, 300 * 6 + 1);
    assert_eq!(s.retransmissions, 0);
    // A 1-byte exchange on an open connection takes 2 x (728 + 500) ns; a new
    // connection adds the SYN/SYN-ACK round trip (2 x (784 + 500) ns) and the
    // ACKs in front of the request and of the response (720 ns each: the
    // server ACKs at once on a new connection), here with 100 B and 200 B payloads
    // (+99 x 8 ns and +199 x 8 ns of wire time). The previous connection's
    // four closing frames (720 ns each) may still be ahead in the queues.
    let least = (2.0 * (728.0 + 500.0) + 2.0 * (784.0 + 500.0) + 2.0 * 720.0 + 298.0 * 8.0) * 1e-9;
    let most = least + 4.0 * 720e-9;
    let p50 = s.p50_latency_s.unwrap();
    assert!(p50 >= least - 1e-12 && p50 <= most + 1e-12, "median {p50} outside [{least}, {most}]");
    let (p90, p99) = (s.p90_latency_s.unwrap(), s.p99_latency_s.unwrap());
    assert!(p50 <= p90 && p90 <= p99, "percentiles in order: {p50} {p90} {p99}");
}

#[test]
fn tcp_crr_rejects_zero_transactions_by_path() {
    let e = config_error(&two_hosts(GBE, "", &crr("transactions = 0")));
    assert_eq!(e.to_string(), "workload.tcp_crr.transactions: must be at least 1");
}

#[test]
fn tcp_crr_is_deterministic() {
    let text = two_hosts(GBE, "", &crr("transactions = 50"));
    assert_eq!(run(&text).to_json(), run(&text).to_json());
}

/// CPU seconds per transaction on host `h` (all cores).
fn cpu_per_transaction(r: &nicsim_core::api::Report, h: usize) -> f64 {
    let t = r.hosts[h].timing.as_ref().expect("a timed host");
    t.cores.iter().map(|c| c.busy_s).sum::<f64>() / r.summary.transactions.unwrap() as f64
}

#[test]
fn on_timed_hosts_a_new_connection_costs_cpu_and_time() {
    let host = "profile = \"kurmann-pii-400\"";
    let rr = "[workload.request_response]\nclient = \"a\"\nserver = \"b\"\ntransactions = 300\n";
    let open = run(&two_hosts(GBE, host, rr));
    let fresh = run(&two_hosts(GBE, host, &crr("transactions = 300")));
    assert!(fresh.summary.verified);
    for h in 0..2 {
        let (a, b) = (cpu_per_transaction(&open, h), cpu_per_transaction(&fresh, h));
        // Connect, close and three more frames each way per transaction.
        assert!(b > 1.5 * a, "host {h}: CPU per CRR transaction {b} not well above per RR transaction {a}");
    }
    let (a, b) = (open.summary.p50_latency_s.unwrap(), fresh.summary.p50_latency_s.unwrap());
    assert!(b > a + 2.0 * (784.0 + 500.0) * 1e-9, "CRR median {b} vs RR median {a}");
}

#[test]
fn ephemeral_ports_wrap_around_cleanly() {
    // 16384 ports in 49152..65535: transaction 16385 reuses the first one.
    let r = run(&two_hosts(GBE, "", &crr("transactions = 16500")));
    assert_eq!(r.summary.transactions, Some(16500));
    assert_eq!(r.summary.retransmissions, 0, "a reused port is a new connection, not a retransmission");
}

#[test]
fn a_progress_hook_sees_the_run_advance_and_changes_nothing() {
    use std::sync::{Arc, Mutex};
    let rr = "[workload.request_response]\nclient = \"a\"\nserver = \"b\"\ntransactions = 60000\n";
    let text = two_hosts(GBE, "", rr);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let hook = Box::new(move |p: &nicsim_core::sim::Progress| sink.lock().unwrap().push(*p));
    let (with, _) = nicsim_core::api::run_toml_progress(&text, &Default::default(), None, hook).unwrap();
    assert_eq!(with.to_json(), run(&text).to_json(), "the hook only reads");
    let seen = seen.lock().unwrap();
    assert!(seen.len() >= 2, "{} reports", seen.len());
    assert!(seen.iter().all(|p| p.total == Some(60000) && p.done <= 60000));
    assert!(seen.windows(2).all(|w| w[0].done <= w[1].done && w[0].sim_time_s <= w[1].sim_time_s));
    assert!(seen.last().unwrap().done > seen[0].done);
}
