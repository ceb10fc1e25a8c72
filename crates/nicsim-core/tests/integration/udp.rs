//! UDP workloads: stream rates, pacing, fragmentation, loss, request/response.

use nicsim_core::api::Report;

use crate::ideal::run;

fn pair(link: &str, host: &str, workload: &str) -> String {
    format!(
        "[[hosts]]\nname = \"a\"\n{host}\n[[hosts]]\nname = \"b\"\n{host}\n[[links]]\nendpoints = [\"a\", \"b\"]\n\
         rate = \"1Gbps\"\npropagation = \"500ns\"\n{link}\n{workload}\n[run]\ntime_limit = \"100s\"\n"
    )
}

fn stream(fields: &str) -> String {
    format!("[workload.udp_stream]\nfrom = \"a\"\nto = \"b\"\n{fields}\n")
}

fn datagrams(r: &Report) -> (u64, u64) {
    (r.summary.datagrams_sent.unwrap(), r.summary.datagrams_received.unwrap())
}

#[test]
fn an_unpaced_stream_fills_the_wire_to_the_udp_ceiling() {
    let r = run(&pair("", "", &stream("size = \"1472B\"\ncount = 20000")));
    let ceiling = 1e9 * 1472.0 / 1538.0;
    let (sent, got) = datagrams(&r);
    assert_eq!((sent, got), (20000, 20000), "lossless with back-pressure");
    assert!(
        r.summary.goodput_bps <= ceiling * 1.0001 && r.summary.goodput_bps > 0.99 * ceiling,
        "{}",
        r.summary.goodput_bps
    );
    assert_eq!(r.flows[0].bytes, 20000 * 1472);
}

#[test]
fn a_paced_stream_runs_at_its_rate() {
    let r = run(&pair("", "", &stream("size = \"1000B\"\ncount = 2000\nrate = \"100Mbps\"")));
    // 1000 B every 80 µs: the last of 2000 is sent at 159.92 ms and arrives
    // 9.028 µs later (a 1042 B frame is 1066 B of wire time, 8.528 µs at
    // 1 Gb/s, plus 500 ns).
    assert!((r.summary.duration_s - (1999.0 * 80e-6 + 9.028e-6)).abs() < 1e-12, "{}", r.summary.duration_s);
    let send = r.summary.send_bps.unwrap();
    assert!((send / 100e6 - 1.0).abs() < 0.001, "send rate {send}");
}

#[test]
fn large_datagrams_are_fragmented_and_reassembled() {
    let r = run(&pair("", "", &stream("size = \"4000B\"\ncount = 500")));
    assert_eq!(datagrams(&r), (500, 500));
    // 4000 + 8 bytes of UDP over a 1480-byte fragment payload: 3 fragments each.
    assert_eq!(r.links[0].stats.frames, 500 * 3 + 1, "3 fragments per datagram plus one ARP request");
}

#[test]
fn losses_are_counted_and_the_run_ends_after_the_linger() {
    let r = run(&pair("impairments = { loss = 0.05 }", "", &stream("size = \"512B\"\ncount = 2000")));
    let (sent, got) = datagrams(&r);
    assert_eq!(sent, 2000);
    assert!(got < sent && got > 1800, "about 5 % lost: {got} of {sent}");
    assert!(r.summary.verified);
}

#[test]
fn udp_request_response_latency_is_the_physical_round_trip() {
    let wl = "[workload.udp_rr]\nclient = \"a\"\nserver = \"b\"\ntransactions = 100\n";
    let r = run(&pair("", "", wl));
    // A 1-byte UDP datagram: a 43-byte frame padded to 64 B, 84 B of wire
    // time = 672 ns, plus 500 ns, each way.
    let p50 = r.summary.p50_latency_s.unwrap();
    assert!((p50 - 2.0 * (672e-9 + 500e-9)).abs() < 1e-12, "{p50}");
    assert_eq!(r.summary.transactions, Some(100));
}

#[test]
fn timed_fragmentation_costs_land_in_ip_frag() {
    let host = "profile = \"won-simos-mips\"";
    let r = run(&pair("", host, &stream("size = \"4000B\"\ncount = 50")));
    for h in 0..2 {
        let t = r.hosts[h].timing.as_ref().unwrap();
        assert!(t.cycles.get("ip_frag").copied().unwrap_or(0) > 0, "host {h}: no fragmentation cycles");
        assert!(t.cycles.get("checksum").copied().unwrap_or(0) > 0, "the Won NIC does not offload checksums");
    }
    // UDP is charged once per datagram on each side, not per fragment.
    let udp_tx = r.hosts[0].timing.as_ref().unwrap().cycles["udp"];
    let one = 290; // the profile's udp_tx: 290 cycles (udp_sendmsg), no memory access
    assert_eq!(udp_tx, 50 * one);
}

#[test]
fn poisson_arrivals_keep_the_mean_rate_with_random_gaps() {
    let wl = stream("size = \"500B\"\ncount = 5000\nrate = \"50Mbps\"\narrivals = \"poisson\"");
    let r = run(&pair("", "", &wl));
    let send = r.summary.send_bps.unwrap();
    // 5000 exponential gaps: the mean is within a few percent of 80 µs.
    assert!((send / 50e6 - 1.0).abs() < 0.05, "mean rate {send}");
    let cbr = run(&pair("", "", &stream("size = \"500B\"\ncount = 5000\nrate = \"50Mbps\"")));
    assert_ne!(r.summary.duration_s, cbr.summary.duration_s, "random gaps, not constant ones");
    let again = run(&pair("", "", &wl));
    assert_eq!(again.summary.duration_s, r.summary.duration_s, "seeded: the same run twice");
}

#[test]
fn on_off_bursts_send_only_while_on() {
    let continuous = run(&pair("", "", &stream("size = \"1000B\"\nduration = \"10ms\"\nrate = \"200Mbps\"")));
    let bursty = run(&pair(
        "",
        "",
        &stream("size = \"1000B\"\nduration = \"10ms\"\nrate = \"200Mbps\"\non = \"1ms\"\noff = \"1ms\""),
    ));
    let (c, b) = (datagrams(&continuous).0 as f64, datagrams(&bursty).0 as f64);
    assert!((b / c - 0.5).abs() < 0.05, "half the time on: {b} of {c}");
}
