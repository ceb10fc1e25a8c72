//! Timed hosts: the CPU, memory, bus and NIC models obey physics, and the
//! Kurmann profile lands near the study's calibration point.

use nicsim_core::api::Report;
use nicsim_core::sim::TimingReport;
use nicsim_core::{run_toml, RunOptions};

use crate::ideal::{bulk, config_error, run};

/// Two hosts with `profile`, each with `host` override lines, on a link.
fn timed_pair(profile: &str, host_a: &str, host_b: &str, link: &str, workload: &str) -> String {
    format!(
        "[[hosts]]\nname = \"a\"\nprofile = \"{profile}\"\n{host_a}\n[[hosts]]\nname = \"b\"\nprofile = \"{profile}\"\n{host_b}\n\
         [[links]]\nendpoints = [\"a\", \"b\"]\n{link}\n{workload}\n"
    )
}

fn timing(r: &Report, host: usize) -> &TimingReport {
    r.hosts[host].timing.as_ref().expect("a timed host reports its timing")
}

fn rr(transactions: u64) -> String {
    format!("[workload.request_response]\nclient = \"a\"\nserver = \"b\"\ntransactions = {transactions}\n")
}

/// Megabytes (10^6) per second of application data.
fn mb_per_s(r: &Report) -> f64 {
    r.summary.goodput_bps / 8e6
}

/// CPU time per transaction on `host`, seconds.
fn cpu_per_transaction(r: &Report, host: usize) -> f64 {
    let t = timing(r, host);
    let busy: f64 = t.cores.iter().map(|c| c.busy_s).sum();
    busy / r.summary.transactions.unwrap() as f64
}

#[test]
fn kurmann_standard_stack_lands_near_the_studys_42_mb_per_s() {
    let r = run(&timed_pair("kurmann-pii-400", "", "", "rate = \"1Gbps\"", &bulk("8MiB")));
    let mbs = mb_per_s(&r);
    assert!((42.0 * 0.9..=42.0 * 1.1).contains(&mbs), "standard TCP at {mbs:.1} MB/s, study: about 42");
    // The receiver is the bottleneck: its CPU is saturated, the PCI bus is not.
    assert!(timing(&r, 1).cpu_utilization > 0.95);
    assert!(timing(&r, 1).bus_utilization < 0.6);
}

#[test]
fn doubling_the_clock_halves_cpu_bound_per_message_time() {
    let slow = run(&timed_pair("kurmann-pii-400", "", "", "", &rr(50)));
    let fast = run(&timed_pair(
        "kurmann-pii-400",
        "cpu = { clock = \"800MHz\" }",
        "cpu = { clock = \"800MHz\" }",
        "",
        &rr(50),
    ));
    for host in 0..2 {
        let ratio = cpu_per_transaction(&slow, host) / cpu_per_transaction(&fast, host);
        assert!((ratio - 2.0).abs() < 0.02, "host {host}: CPU time per transaction fell by {ratio}, not 2");
    }
    // Latency falls too, but not by half: the wire and the bus do not speed up.
    let (s, f) = (slow.summary.p50_latency_s.unwrap(), fast.summary.p50_latency_s.unwrap());
    assert!(f < s && f > s / 2.0, "RTT {s} -> {f}");
}

#[test]
fn a_dma_bound_transfer_cannot_exceed_the_pci_bus() {
    // Make the CPUs and memory almost free: only the 32-bit/33 MHz PCI bus
    // (126 MB/s for large bursts) limits a 10 Gb/s link.
    let fast = "cpu = { clock = \"100GHz\" }\nmemory = { copy_bandwidth = \"100GB/s\", cached_copy_bandwidth = \"100GB/s\", bandwidth = \"1000GB/s\" }";
    let r = run(&timed_pair("kurmann-pii-400", fast, fast, "rate = \"10Gbps\"", &bulk("8MiB")));
    let mbs = mb_per_s(&r);
    assert!(mbs < 126.0, "{mbs:.1} MB/s through a 126 MB/s bus");
    assert!(mbs > 126.0 * 0.8, "{mbs:.1} MB/s: the bus, not something else, should limit");
    assert!(timing(&r, 1).bus_utilization > 0.9);
}

#[test]
fn a_modern_hosts_pcie_link_carries_a_100_gbps_stream() {
    // With the CPUs and memory almost free, what is left between two
    // modern-x86-pcie hosts is the wire and each NIC's PCIe link. A 100 GbE
    // NIC sits in a x16 slot: gen3 x16 moves 15.75 GB/s each way, enough
    // for the 95 Gb/s of TCP payload a 100 Gb/s MTU 1500 link carries
    // (1448 of every 1538 bytes on the wire); gen3 x8 (7.88 GB/s, less
    // its packet headers and descriptors) holds it near 51 Gb/s.
    let fast = "cpu = { clock = \"100GHz\" }\nmemory = { copy_bandwidth = \"1000GB/s\", cached_copy_bandwidth = \"1000GB/s\", \
                bandwidth = \"10000GB/s\" }\ntcp = { rx_buffer = \"4MiB\", tx_buffer = \"4MiB\" }";
    let link = "rate = \"100Gbps\"\nmtu = \"1500B\"";
    // Measured after 5 ms: smoltcp's slow start begins at one segment.
    let workload = "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nduration = \"10ms\"\nomit = \"5ms\"\n";
    let r = run(&timed_pair("modern-x86-pcie", fast, fast, link, workload));
    let gbps = r.summary.goodput_bps / 1e9;
    let ceiling = 100.0 * 1448.0 / 1538.0;
    assert!(gbps > 0.9 * ceiling, "{gbps:.1} Gb/s of a {ceiling:.1} Gb/s ceiling");
    for host in 0..2 {
        let bus = timing(&r, host).bus_utilization;
        assert!(bus < 0.9, "host {host}: its PCIe link is {:.0} % busy", 100.0 * bus);
    }
}

#[test]
fn a_copy_bound_receiver_is_limited_by_its_copy_bandwidth() {
    let fast = "cpu = { clock = \"100GHz\" }\nmemory = { copy_bandwidth = \"100GB/s\", cached_copy_bandwidth = \"100GB/s\", bandwidth = \"1000GB/s\" }";
    let slow_copy = "cpu = { clock = \"100GHz\" }\nmemory = { copy_bandwidth = \"30MB/s\", bandwidth = \"1000GB/s\" }";
    let r = run(&timed_pair("kurmann-pii-400", fast, slow_copy, "rate = \"1Gbps\"", &bulk("4MiB")));
    let mbs = mb_per_s(&r);
    assert!(mbs <= 30.0 * 1.001, "{mbs:.2} MB/s past a 30 MB/s copy");
    assert!(mbs > 30.0 * 0.95, "{mbs:.2} MB/s: the copy should be the only limit");
    let copy = timing(&r, 1).cycles["copy"] as f64;
    let all: u64 = timing(&r, 1).cycles.values().sum();
    assert!(copy / all as f64 > 0.95);
}

#[test]
fn interrupt_moderation_cuts_the_interrupt_rate_by_its_factor() {
    let nic = |m: &str| format!("nic = {{ napi = false, moderation = {m} }}");
    let every = nic("{ rx_packets = 1, tx_delay = \"200us\", min_interval = \"0ns\" }");
    let eight = nic("{ rx_packets = 8, rx_abs_delay = \"200us\", tx_delay = \"200us\", min_interval = \"0ns\" }");
    let link = "rate = \"10Gbps\"";
    let base = run(&timed_pair("modern-x86-pcie", &every, &every, link, &bulk("16MiB")));
    let moderated = run(&timed_pair("modern-x86-pcie", &eight, &eight, link, &bulk("16MiB")));
    let rate = |r: &Report| timing(r, 1).cores.iter().map(|c| c.interrupts_per_s).sum::<f64>();
    let per_frame = |r: &Report| timing(r, 1).nic.interrupts as f64 / timing(r, 1).nic.rx_frames as f64;
    assert!(per_frame(&base) >= 0.9, "without moderation about one interrupt per frame, got {}", per_frame(&base));
    let factor = per_frame(&base) / per_frame(&moderated);
    assert!((6.0..=10.0).contains(&factor), "interrupts per frame fell by {factor}, configured 8");
    // Per second the fall is smaller: the moderated receiver, spared most
    // interrupts, takes frames faster (1.8 times as fast here; the 10 Gb/s
    // link caps it at about twice), so at least 6 / 2 = 3 times fewer.
    assert!(rate(&moderated) < rate(&base) / 3.0, "{} vs {} interrupts/s", rate(&moderated), rate(&base));
}

#[test]
fn every_cycle_belongs_to_a_message_and_adds_up_to_the_cpu_time() {
    let r = run(&timed_pair("kurmann-pii-400", "", "", "", &rr(20)));
    for host in 0..2 {
        let t = timing(&r, host);
        let m = t.messages.as_ref().expect("request/response reports messages");
        let per_message_total = m.mean_total * m.count as f64;
        // The send path carries the request's call and segments, the receive
        // path the interrupt and the reply's processing.
        for layer in ["syscall", "copy", "tcp", "driver"] {
            assert!(m.mean_send.get(layer).copied().unwrap_or(0.0) > 0.0, "host {host}: no {layer} on the send path");
        }
        assert!(m.mean_receive["interrupt"] > 0.0 && m.mean_receive["tcp"] > 0.0);
        assert!(!m.mean_send.contains_key("interrupt"), "interrupts belong to the receive path");
        let core_total: u64 = t.cycles.values().sum();
        assert_eq!(
            per_message_total.round() as u64,
            core_total,
            "host {host}: per-message breakdowns cover all cycles"
        );
        // And those cycles are the busy time: at 400 MHz, 2.5 ns per cycle
        // (each job rounds up to a whole picosecond).
        let busy_s: f64 = t.cores.iter().map(|c| c.busy_s).sum();
        let cycles_s = core_total as f64 / 400e6;
        assert!((busy_s - cycles_s).abs() < 1e-9 + cycles_s * 1e-6, "host {host}: busy {busy_s} s vs {cycles_s} s");
    }
}

#[test]
fn probes_never_change_timing() {
    let text = timed_pair("kurmann-pii-400", "", "", "", &bulk("1MiB"));
    let plain = run(&text);
    let dir = std::env::temp_dir().join(format!("nicsim-probe-{}", std::process::id()));
    let traced = run_toml(&text, &RunOptions { pcap_dir: Some(dir.clone()), ..Default::default() }).unwrap();
    let finer = run(&(text.clone() + "[run]\nsample_interval = \"10us\"\n"));
    std::fs::remove_dir_all(&dir).unwrap();
    for other in [&traced, &finer] {
        assert_eq!(other.summary.duration_s, plain.summary.duration_s);
        assert_eq!(other.summary.events, plain.summary.events);
        for h in 0..2 {
            assert_eq!(timing(other, h).cycles, timing(&plain, h).cycles);
            assert_eq!(timing(other, h).nic.interrupts, timing(&plain, h).nic.interrupts);
        }
    }
}

#[test]
fn timed_and_ideal_hosts_share_a_link() {
    let text = "[[hosts]]\nname = \"a\"\nprofile = \"modern-x86-pcie\"\n[[hosts]]\nname = \"b\"\n\
                [[links]]\nendpoints = [\"a\", \"b\"]\n"
        .to_string()
        + &bulk("4MiB");
    let r = run(&text);
    assert!(r.summary.verified);
    assert!(r.hosts[0].timing.is_some() && r.hosts[1].timing.is_none());
}

#[test]
fn profile_errors_name_their_field() {
    let e = config_error(&timed_pair("kurmann-pii-400", "nic = { rx_ring = 100 }", "", "", &bulk("1MB")));
    assert_eq!(e.path, "hosts[0].nic.rx_ring");
    let e = config_error(&timed_pair("kurmann-pii-400", "", "cpu = { clock = \"1Gbps\" }", "", &bulk("1MB")));
    assert_eq!(e.path, "hosts[1].cpu.clock");
    let e = config_error(&timed_pair("no-such-machine", "", "", "", &bulk("1MB")));
    assert_eq!(e.path, "hosts[0].profile");
    let e = config_error(&timed_pair(
        "kurmann-pii-400",
        "bus = { kind = \"pcie\", gen = 3, lanes = 3 }",
        "",
        "",
        &bulk("1MB"),
    ));
    assert_eq!(e.path, "hosts[0].bus.lanes");
    let ideal_override = "[[hosts]]\nname = \"a\"\ncpu = { clock = \"1GHz\" }\n[[hosts]]\nname = \"b\"\n\
                          [[links]]\nendpoints = [\"a\", \"b\"]\n"
        .to_string()
        + &bulk("1MB");
    assert_eq!(config_error(&ideal_override).path, "hosts[0].cpu");
}

#[test]
fn observers_see_every_named_event_and_change_nothing() {
    use nicsim_core::probe::observer::{Observer, ProbeEvent};
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::rc::Rc;

    type Counts = Rc<RefCell<BTreeMap<&'static str, u64>>>;
    struct Count(Counts);
    impl Observer for Count {
        fn wants(&self, name: &str) -> bool {
            name != "job"
        }
        fn on_event(&mut self, e: &ProbeEvent<'_>) {
            *self.0.borrow_mut().entry(e.name).or_default() += 1;
        }
    }
    let text = timed_pair("kurmann-pii-400", "", "", "", &rr(30));
    let plain = run(&text);
    let counts: Counts = Rc::default();
    let (seen, _) =
        nicsim_core::api::run_toml_observed(&text, &RunOptions::default(), Box::new(Count(counts.clone()))).unwrap();
    assert_eq!(seen.to_json(), plain.to_json(), "an observer must not change the run");
    let counts = counts.borrow();
    assert_eq!(counts["frame"], plain.summary.frames);
    let interrupts: u64 = (0..2).map(|h| timing(&plain, h).nic.interrupts).sum();
    assert_eq!(counts["interrupt"], interrupts);
    assert!(!counts.contains_key("job"), "events nobody asked for are not produced");
    assert!(counts["call"] >= 2 * 30, "every request and response is at least one call");
    assert!(counts["deliver"] > 0);
}

#[test]
fn a_recording_holds_the_events_an_observer_sees_and_changes_nothing() {
    use nicsim_core::probe::observer::{Observer, ProbeEvent, Recorder, Recording, EVENTS};
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Keeps every event whole, for comparison.
    type Seen = Rc<RefCell<Vec<(&'static str, u64, String, Vec<(&'static str, f64)>)>>>;
    struct Keep(Seen);
    impl Observer for Keep {
        fn wants(&self, _: &str) -> bool {
            true
        }
        fn on_event(&mut self, e: &ProbeEvent<'_>) {
            self.0.borrow_mut().push((e.name, e.time.ps(), e.host.to_owned(), e.fields.to_vec()));
        }
    }
    let text = timed_pair("kurmann-pii-400", "", "", "", &rr(30));
    let plain = run(&text);
    let seen: Seen = Rc::default();
    nicsim_core::api::run_toml_observed(&text, &RunOptions::default(), Box::new(Keep(seen.clone()))).unwrap();
    let recording = Rc::new(RefCell::new(Recording::of(["frame", "job"])));
    let everything = Rc::new(RefCell::new(Recording::of(EVENTS)));
    nicsim_core::api::run_toml_observed(&text, &RunOptions::default(), Box::new(Recorder(everything.clone()))).unwrap();
    let (recorded, _) =
        nicsim_core::api::run_toml_observed(&text, &RunOptions::default(), Box::new(Recorder(recording.clone())))
            .unwrap();
    assert_eq!(recorded.to_json(), plain.to_json(), "recording must not change the run");
    let r = recording.borrow();
    let frames = r.series[0].as_ref().expect("frame was asked for");
    assert_eq!(frames.len() as u64, plain.summary.frames);
    assert_eq!(frames.fields, ["link", "direction", "bytes"]);
    assert!(r.series[1].is_none() && r.series[2].is_none(), "names not asked for are not recorded");
    assert!(frames.column("bytes").unwrap().iter().all(|&b| (42.0..=1514.0).contains(&b)));
    assert!(frames.column("cycles").is_none());
    assert_eq!(r.series[0], everything.borrow().series[0], "what is recorded does not depend on what else is");
    // Row by row, a recording of everything is what an observer saw.
    let seen = seen.borrow();
    let r = everything.borrow();
    for (i, name) in EVENTS.iter().enumerate() {
        let series = r.series[i].as_ref().unwrap();
        let expected: Vec<_> = seen.iter().filter(|e| e.0 == *name).collect();
        assert_eq!(series.len(), expected.len(), "{name}");
        assert!(!expected.is_empty());
        for (k, e) in expected.iter().enumerate() {
            assert_eq!(series.time_ps[k], e.1);
            assert_eq!(r.hosts[series.host[k] as usize], e.2);
            let row = &series.values[k * series.fields.len()..(k + 1) * series.fields.len()];
            assert_eq!(row, e.3.iter().map(|f| f.1).collect::<Vec<_>>());
        }
        assert!(series.time_ps.windows(2).all(|w| w[0] <= w[1]), "in simulated-time order");
    }
    assert_eq!(r.hosts.len(), 2);
}

#[test]
fn tso_cuts_sender_cycles_per_byte_and_keeps_frames_valid() {
    use pcap_file::pcap::PcapReader;
    use smoltcp::wire::{EthernetFrame, IpAddress, Ipv4Packet, TcpPacket};

    let link = "rate = \"10Gbps\"";
    let buffers = "tcp = { rx_buffer = \"4MiB\", tx_buffer = \"4MiB\" }";
    let with = format!("{buffers}\nnic = {{ tso = true, tso_defer = \"0ns\" }}");
    let without = format!("{buffers}\nnic = {{ tso = false }}");
    let plain = run(&timed_pair("modern-x86-pcie", &without, buffers, link, &bulk("32MiB")));
    let dir = std::env::temp_dir().join(format!("nicsim-tso-{}", std::process::id()));
    let text = timed_pair("modern-x86-pcie", &with, buffers, link, &bulk("32MiB"));
    let tso = run_toml(&text, &RunOptions { pcap_dir: Some(dir.clone()), ..Default::default() }).unwrap();
    assert!(tso.summary.verified && tso.flows[0].bytes == 32 << 20);
    // TSO pays the per-segment send costs once per super-segment. smoltcp
    // sends what each ACK's window allows (about two segments; it has no
    // TSO deferral), so the send path's cycles per byte fall by about a third.
    let per_byte = |r: &Report| timing(r, 0).cycles_send.values().sum::<u64>() as f64 / r.summary.payload_bytes as f64;
    assert!(per_byte(&tso) < 0.8 * per_byte(&plain), "TSO {} vs {} cycles per byte", per_byte(&tso), per_byte(&plain));
    assert_eq!(tso.summary.retransmissions, 0);
    // What went on the wire: standard-size frames with valid checksums.
    let file = std::fs::File::open(dir.join("link0-a-b.pcap")).unwrap();
    let mut reader = PcapReader::new(file).unwrap();
    let mut frames = 0;
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        assert!(p.data.len() <= 1514, "a {}-byte frame left a TSO NIC", p.data.len());
        let eth = EthernetFrame::new_checked(&p.data[..]).unwrap();
        if let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) {
            assert!(ip.verify_checksum());
            if let Ok(tcp) = TcpPacket::new_checked(ip.payload()) {
                let (s, d) = (IpAddress::Ipv4(ip.src_addr()), IpAddress::Ipv4(ip.dst_addr()));
                assert!(tcp.verify_checksum(&s, &d), "bad TCP checksum in frame {frames}");
            }
        }
        frames += 1;
    }
    assert_eq!(frames, tso.summary.frames);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn byte_queue_limits_keep_the_transmit_ring_short_without_costing_throughput() {
    // A modern host sends faster than 1 GbE carries: without byte queue
    // limits its 512-descriptor ring fills and the backlog waits there; with
    // them the ring holds a few frames' bytes and the backlog waits in the
    // qdisc, and the link never goes idle for want of a frame.
    let host = |bql: bool, qdisc: &str| {
        format!("nic = {{ bql = {bql}, qdisc = \"{qdisc}\" }}\ntcp = {{ tx_buffer = \"4MiB\", rx_buffer = \"4MiB\" }}")
    };
    let link = "rate = \"1Gbps\"";
    let runs = [(false, "fifo"), (true, "fifo"), (true, "fq_codel")]
        .map(|(bql, q)| run(&timed_pair("modern-x86-pcie", &host(bql, q), &host(false, "fifo"), link, &bulk("16MiB"))));
    let ring = |r: &Report| timing(r, 0).nic.max_tx_ring_used;
    assert_eq!(ring(&runs[0]), 512, "without limits the ring fills");
    for r in &runs[1..] {
        assert!(ring(r) <= 16, "with byte queue limits the ring held {} frames", ring(r));
        let (g, base) = (r.summary.goodput_bps, runs[0].summary.goodput_bps);
        assert!((g / base - 1.0).abs() < 0.001, "{g} against {base} b/s");
        assert!(r.summary.verified);
    }
}
