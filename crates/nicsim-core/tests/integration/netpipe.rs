//! NetPIPE: latency is the physical one-way time, the peak approaches the
//! Ethernet ceiling, modelled hosts add their stack costs.

use crate::ideal::run;

fn netpipe(hosts: &str, opts: &str) -> String {
    format!(
        "{hosts}\n[[links]]\nendpoints = [\"a\", \"b\"]\nrate = \"1Gbps\"\npropagation = \"500ns\"\n\
         [workload.netpipe]\nclient = \"a\"\nserver = \"b\"\n{opts}\n[run]\ntime_limit = \"1000s\"\n"
    )
}

const IDEAL: &str = "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n";

fn timed(clock: &str) -> String {
    format!(
        "[[hosts]]\nname = \"a\"\nprofile = \"kurmann-pii-400\"\ncpu = {{ clock = \"{clock}\" }}\n\
         [[hosts]]\nname = \"b\"\nprofile = \"kurmann-pii-400\"\ncpu = {{ clock = \"{clock}\" }}\n"
    )
}

#[test]
fn ideal_latency_is_the_physical_one_way_time() {
    let r = run(&netpipe(IDEAL, "upper = \"64B\"\nrun_time = \"2ms\""));
    let points = r.netpipe.as_ref().unwrap();
    // A 1-byte block: a 67-byte frame = 91 bytes of wire time (728 ns) + 500 ns.
    assert!((points[0].time_s - 1.228e-6).abs() < 1e-12, "latency {}", points[0].time_s);
    assert_eq!(r.summary.latency_s, Some(points[0].time_s));
    // Each extra byte adds 8 ns of serialisation.
    let four = points.iter().find(|p| p.bytes == 4).unwrap();
    assert!((four.time_s - (1.228e-6 + 3.0 * 8e-9)).abs() < 1e-12);
    // NetPIPE's Mbps: bytes × 8 / t / 2^20.
    assert!((points[0].mbps - 8.0 / 1.228e-6 / 1048576.0).abs() < 1e-9);
}

#[test]
fn ideal_peak_approaches_the_goodput_ceiling() {
    let r = run(&netpipe(IDEAL, "upper = \"2MiB\"\nrun_time = \"5ms\""));
    let ceiling = 1e9 * 1448.0 / 1538.0;
    let peak = r.summary.goodput_bps;
    assert!(peak <= ceiling && peak > 0.99 * ceiling, "peak {peak} vs ceiling {ceiling}");
    // Throughput grows with block size, up to rounding at segment boundaries.
    let pts = r.netpipe.unwrap();
    assert!(pts.last().unwrap().mbps > 100.0 * pts[0].mbps);
}

#[test]
fn the_schedule_is_netpipes_and_each_point_has_at_least_three_repeats() {
    let r = run(&netpipe(IDEAL, "upper = \"300B\"\nrun_time = \"1ms\""));
    let sizes: Vec<u64> = r.netpipe.as_ref().unwrap().iter().map(|p| p.bytes).collect();
    assert_eq!(&sizes[..10], &[1, 2, 3, 4, 6, 8, 12, 13, 16, 19]);
    assert!(r.netpipe.unwrap().iter().all(|p| p.nrepeat >= 3));
}

#[test]
fn a_modelled_host_adds_its_stack_costs_to_the_latency() {
    let ideal = run(&netpipe(IDEAL, "upper = \"1B\"\nrun_time = \"1ms\"")).summary.latency_s.unwrap();
    let slow = run(&netpipe(&timed("400MHz"), "upper = \"1B\"\nrun_time = \"1ms\"")).summary.latency_s.unwrap();
    let fast = run(&netpipe(&timed("800MHz"), "upper = \"1B\"\nrun_time = \"1ms\"")).summary.latency_s.unwrap();
    assert!(slow > ideal + 10e-6, "a 400 MHz Linux 2.2 stack adds tens of µs: {slow} vs {ideal}");
    assert!(slow < ideal + 200e-6);
    // The CPU share of the latency halves with the clock; the bus and wire remain.
    let (cpu_slow, cpu_fast) = (slow - ideal, fast - ideal);
    assert!(cpu_fast < 0.6 * cpu_slow && cpu_fast > 0.45 * cpu_slow, "{cpu_slow} -> {cpu_fast}");
}

#[test]
fn stream_mode_measures_one_way_throughput() {
    let r = run(&netpipe(IDEAL, "upper = \"1MiB\"\nrun_time = \"5ms\"\nstream = true"));
    let ceiling = 1e9 * 1448.0 / 1538.0;
    assert!(r.summary.goodput_bps > 0.99 * ceiling && r.summary.goodput_bps <= ceiling);
}

#[test]
fn bidirectional_blocks_cross_at_once_and_fill_both_directions() {
    let r = run(&netpipe(IDEAL, "bidirectional = true\nupper = \"256KiB\"\nrun_time = \"5ms\""));
    assert!(r.summary.verified);
    let points = r.netpipe.as_ref().unwrap();
    // NetPIPE -2 reports the bytes moved both ways: twice the block.
    assert_eq!(points[0].bytes, 2);
    assert!(points.iter().all(|p| p.bytes % 2 == 0));
    // Both 1-byte blocks cross the full-duplex link at once: a round takes
    // one one-way time, 728 ns of wire time + 500 ns, and is not halved (an
    // occasional pure ACK in front of a block adds its 720 ns to one round).
    let t = points[0].time_s;
    assert!((1.228e-6 - 1e-12..1.228e-6 * 1.01).contains(&t), "1-byte round {t}");
    // Large blocks keep both directions busy: up to twice the one-way ceiling.
    let ceiling = 1e9 * 1448.0 / 1538.0;
    let peak = r.summary.goodput_bps;
    assert!(peak <= 2.0 * ceiling * 1.000_001 && peak > 1.9 * ceiling, "peak {peak} vs 2 x {ceiling}");
    // The schedule stops at the 256 KiB send buffer (as NPtcp -2 caps its
    // upper bound); NetPIPE still tests that size's + 3 perturbation.
    assert_eq!(points.last().unwrap().bytes / 2, 256 * 1024 + 3);
}

#[test]
fn bidirectional_and_stream_exclude_each_other() {
    let text = netpipe(IDEAL, "bidirectional = true\nstream = true");
    let e = crate::ideal::config_error(&text);
    assert_eq!(
        e.to_string(),
        "workload.netpipe.bidirectional: cannot be combined with stream mode (NetPIPE's -2 and -s)"
    );
}

#[test]
fn over_udp_the_latency_is_a_minimum_frame_and_the_peak_the_udp_ceiling() {
    let r = run(&netpipe(IDEAL, "transport = \"udp\"\nupper = \"1MiB\"\nrun_time = \"5ms\""));
    assert!(r.summary.verified);
    let points = r.netpipe.as_ref().unwrap();
    // A 1-byte datagram: 14 + 20 + 8 + 1 = 43 B, padded to the 60-byte
    // minimum frame: 84 B of wire time (672 ns) + 500 ns, one way.
    assert!((points[0].time_s - 1.172e-6).abs() < 1e-12, "latency {}", points[0].time_s);
    // Large blocks go as 1472-byte datagrams: 1472 B of payload per 1538 B on the wire.
    let ceiling = 1e9 * 1472.0 / 1538.0;
    let peak = r.summary.goodput_bps;
    assert!(peak <= ceiling * 1.000_001 && peak > 0.95 * ceiling, "peak {peak} vs {ceiling}");
    assert_eq!(r.summary.retransmissions, 0);
}

#[test]
fn udp_netpipe_refuses_an_impaired_link() {
    let text =
        netpipe(IDEAL, "transport = \"udp\"").replace("propagation", "impairments = { loss = 0.01 }\npropagation");
    let e = crate::ideal::config_error(&text);
    assert_eq!(
        e.to_string(),
        "workload.netpipe.transport: UDP does not retransmit or reorder: NetPIPE over UDP needs links[0] without impairments"
    );
}
