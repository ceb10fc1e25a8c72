//! Hosts joined by store-and-forward switches: frames reach the right
//! host, streams arrive intact, a shared output port is the bottleneck,
//! each switch adds one reception and its latency, and bad topologies are
//! refused with the field named.

use nicsim_core::api::Report;

use crate::ideal::{config_error, run};

/// Hosts `names` each on its own link to switch `sw` (rate, propagation).
fn star(names: &[&str], link: &str, latency: &str) -> String {
    let mut t = String::new();
    for n in names {
        t += &format!("[[hosts]]\nname = \"{n}\"\n");
    }
    t += &format!("[[switches]]\nname = \"sw\"\nlatency = \"{latency}\"\n");
    for n in names {
        t += &format!("[[links]]\nendpoints = [\"{n}\", \"sw\"]\n{link}\n");
    }
    t
}

fn transfer(from: &str, to: &str, bytes: &str, port: u16) -> String {
    format!("[[workload.transfers]]\nfrom = \"{from}\"\nto = \"{to}\"\nbytes = \"{bytes}\"\nport = {port}\n")
}

fn link<'a>(r: &'a Report, direction: &str) -> &'a nicsim_core::api::LinkRow {
    r.links.iter().find(|l| l.direction == direction).unwrap_or_else(|| panic!("no link {direction}"))
}

#[test]
fn two_streams_converging_on_one_host_share_its_port_at_the_goodput_ceiling() {
    let text = star(&["a", "b", "c"], "rate = \"1Gbps\"", "0ns")
        + &transfer("a", "c", "8MiB", 5001)
        + &transfer("b", "c", "8MiB", 5002);
    let r = run(&text);
    assert!(r.summary.verified);
    let got: Vec<(&str, &str, u64)> = r.flows.iter().map(|f| (f.from.as_str(), f.to.as_str(), f.bytes)).collect();
    assert_eq!(got, vec![("a", "c", 8 << 20), ("b", "c", 8 << 20)]);
    // Both streams cross c's one port: together they get its goodput ceiling.
    // 1448 B of payload (MSS 1460 less 12 B of TCP timestamps) per 1538 B of
    // wire (1500 + 14 header + 4 FCS + 20 preamble and gap).
    let ceiling = 1e9 * 1448.0 / 1538.0;
    let total = (16u64 << 20) as f64 * 8.0 / r.summary.duration_s;
    assert!(total <= ceiling * 1.0001 && total > ceiling * 0.97, "{total} vs ceiling {ceiling}");
    assert!(link(&r, "sw->c").utilization > 0.97);
    // Each sender's own link carries only its stream: half the rate.
    for host in ["a", "b"] {
        let u = link(&r, &format!("{host}->sw")).utilization;
        assert!((0.4..0.6).contains(&u), "{host}->sw busy {u}");
    }
    // Frames are conserved through the switch: all that came in went out.
    let sw = &r.switches[0];
    let into: u64 = ["a->sw", "b->sw", "c->sw"].iter().map(|d| link(&r, d).stats.delivered).sum();
    let out: u64 = ["sw->a", "sw->b", "sw->c"].iter().map(|d| link(&r, d).stats.frames).sum();
    assert_eq!(sw.stats.received, into);
    assert_eq!(sw.stats.queue_drops, 0);
    // ARP requests are the only broadcasts: flooded to the two other ports.
    assert!(sw.stats.flooded >= 1 && sw.stats.flooded <= 4, "{} floods", sw.stats.flooded);
    assert_eq!(out, sw.stats.forwarded + 2 * sw.stats.flooded);
}

/// Median one-way time of 1-byte transactions between a and b, seconds.
fn one_way(text: &str) -> f64 {
    run(text).summary.p50_latency_s.expect("latency") / 2.0
}

#[test]
fn a_switch_adds_one_store_and_forward_hop_and_its_latency() {
    let rr = "[workload.request_response]\nclient = \"a\"\nserver = \"b\"\ntransactions = 50\n";
    let direct = format!(
        "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[links]]\nendpoints = [\"a\", \"b\"]\n\
         propagation = \"1us\"\n{rr}"
    );
    let base = one_way(&direct);
    // Ideal hosts: the direct one-way time is one wire time of the segment
    // plus one propagation delay (1 µs).
    // (A 1-byte segment with TCP timestamps is a 67 B frame: 91 B of wire, 728 ns.)
    assert!(base > 1.6e-6 && base < 1.9e-6, "direct one-way {base} s");
    for latency_us in [0.0, 3.0] {
        let text = star(&["a", "b"], "propagation = \"1us\"", &format!("{latency_us}us")) + rr;
        let via = one_way(&text);
        // Store and forward over two such links: that time twice, plus the
        // switch's latency.
        let expected = 2.0 * base + latency_us * 1e-6;
        assert!((via - expected).abs() < 1e-9, "one-way {via} s through the switch, expected {expected} s");
    }
}

#[test]
fn a_chain_of_switches_delivers_across_every_hop() {
    let mut t = String::new();
    for n in ["a", "b"] {
        t += &format!("[[hosts]]\nname = \"{n}\"\n");
    }
    for w in ["s1", "s2", "s3"] {
        t += &format!("[[switches]]\nname = \"{w}\"\n");
    }
    for (x, y) in [("a", "s1"), ("s1", "s2"), ("s2", "s3"), ("s3", "b")] {
        t += &format!("[[links]]\nendpoints = [\"{x}\", \"{y}\"]\n");
    }
    t += "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"2MiB\"\n";
    let r = run(&t);
    assert!(r.summary.verified);
    assert_eq!(r.flows[0].bytes, 2 << 20);
    // Data segments are counted once, at the first hop.
    let on_first = (r.links.iter().find(|l| l.direction == "a->s1").unwrap().stats.frames) as f64;
    assert!(r.summary.data_segments as f64 <= on_first);
    for w in &r.switches {
        assert!(w.stats.forwarded > 1400, "{}: {} frames forwarded", w.name, w.stats.forwarded);
    }
}

#[test]
fn a_host_with_warm_neighbour_caches_reaches_every_receiver_at_once() {
    let flows =
        transfer("a", "b", "1MiB", 5001) + &transfer("a", "c", "1MiB", 5002) + &transfer("a", "d", "1MiB", 5003);
    let text = star(&["a", "b", "c", "d"], "rate = \"10Gbps\"", "0ns") + &flows;
    let starts =
        |r: &Report| r.bulk_flows.as_ref().expect("per-flow rows").iter().map(|f| f.start_s).collect::<Vec<f64>>();
    // smoltcp's way (the default): one ARP request, then a second of
    // silence for the whole host, so the second and third receivers are
    // reached one and two seconds late.
    let cold = run(&text);
    assert!(cold.summary.verified);
    let s = starts(&cold);
    assert!(s[0] < 1e-3 && (1.0..1.001).contains(&s[1]) && (2.0..2.001).contains(&s[2]), "cold starts {s:?}");
    assert!(cold.switches[0].stats.flooded >= 3, "each ARP request is flooded");
    // Warm: every host knows the others at the start; all three connect at
    // once, every stream intact, and no ARP (the only broadcast) is sent.
    let warm = run(&(text + "[run]\narp = \"warm\"\n"));
    assert!(warm.summary.verified);
    let s = starts(&warm);
    assert!(s.iter().all(|&t| t < 1e-4), "warm starts {s:?}");
    assert_eq!(warm.flows.iter().map(|f| f.bytes).collect::<Vec<_>>(), vec![1 << 20; 3]);
    assert_eq!(warm.switches[0].stats.flooded, 0);
}

#[test]
fn bad_topologies_name_the_field() {
    let base = "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[switches]]\nname = \"sw\"\n";
    let bulk = "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MiB\"\n";
    let links = |pairs: &[(&str, &str, &str)]| {
        pairs
            .iter()
            .map(|(x, y, extra)| format!("[[links]]\nendpoints = [\"{x}\", \"{y}\"]\n{extra}\n"))
            .collect::<String>()
    };
    let cases: Vec<(String, &str, &str)> = vec![
        (
            base.to_string() + &links(&[("a", "sw", ""), ("b", "sx", "")]) + bulk,
            "links[1].endpoints[1]",
            "no host or switch named \"sx\"",
        ),
        (
            base.to_string() + &links(&[("a", "sw", ""), ("b", "sw", ""), ("a", "b", "")]) + bulk,
            "links[2].endpoints[0]",
            "already on links[0]",
        ),
        (
            base.to_string()
                + "[[switches]]\nname = \"s2\"\n"
                + &links(&[("a", "sw", ""), ("sw", "s2", ""), ("s2", "sw", ""), ("b", "s2", "")])
                + bulk,
            "links[2].endpoints",
            "closes a loop",
        ),
        (
            base.to_string() + &links(&[("a", "sw", ""), ("b", "sw", "mtu = \"9000B\"")]) + bulk,
            "links[1].mtu",
            "differs from links[0].mtu",
        ),
        (
            base.to_string() + "[[switches]]\nname = \"s2\"\n" + &links(&[("a", "sw", ""), ("b", "sw", "")]) + bulk,
            "switches[1]",
            "on no link",
        ),
        (
            base.to_string() + "[[switches]]\nname = \"a\"\n" + &links(&[("a", "sw", ""), ("b", "sw", "")]) + bulk,
            "switches[1].name",
            "hosts[0]",
        ),
        (
            base.replace("name = \"sw\"\n", "name = \"sw\"\nlatency = \"11s\"\n")
                + &links(&[("a", "sw", ""), ("b", "sw", "")])
                + bulk,
            "switches[0].latency",
            "at most 10s",
        ),
        (
            "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[hosts]]\nname = \"c\"\n[[hosts]]\nname = \"d\"\n"
                .to_string()
                + &links(&[("a", "c", ""), ("b", "d", "")])
                + bulk,
            "workload.bulk.to",
            "not connected",
        ),
    ];
    for (text, path, reason) in cases {
        let e = config_error(&text);
        assert_eq!(e.path, path, "{e}");
        assert!(e.reason.contains(reason), "{path}: {}", e.reason);
    }
}
