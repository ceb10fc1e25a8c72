//! Hosts on one machine (`hosts[i].machine`): they share its PCIe link, its
//! memory bandwidth and its L3's DDIO ways, and nothing else.

use nicsim_core::api::Report;
use nicsim_core::sim::TimingReport;

use crate::ideal::{config_error, run};

fn timing(r: &Report, host: usize) -> &TimingReport {
    r.hosts[host].timing.as_ref().expect("a timed host reports its timing")
}

/// Senders a0 and a1 on switch sa, receivers b0 and b1 on switch sb, the
/// switches joined by a link as fast as both flows; flow i from a<i> to
/// b<i>, measured after `omit`. Each receiver gets `receiver` override
/// lines (its machine among them, or none); the senders are machines of
/// their own.
fn two_flows(profile: &str, sender: &str, receiver: &str, rate_gbps: u32, workload: &str) -> String {
    let mut s = String::new();
    for (name, extra) in [("a0", sender), ("a1", sender), ("b0", receiver), ("b1", receiver)] {
        s += &format!("[[hosts]]\nname = \"{name}\"\nprofile = \"{profile}\"\n{extra}\n");
    }
    s += "[[switches]]\nname = \"sa\"\n[[switches]]\nname = \"sb\"\n";
    let link = |a: &str, b: &str, gbps: u32| {
        format!("[[links]]\nendpoints = [\"{a}\", \"{b}\"]\nrate = \"{gbps}Gbps\"\nmtu = \"1500B\"\nqueue = 100000\n")
    };
    s += &link("sa", "sb", 2 * rate_gbps);
    for (h, w) in [("a0", "sa"), ("a1", "sa"), ("b0", "sb"), ("b1", "sb")] {
        s += &link(h, w, rate_gbps);
    }
    for i in 0..2 {
        s += &format!("[[workload.transfers]]\nfrom = \"a{i}\"\nto = \"b{i}\"\nport = {}\n{workload}\n", 5001 + i);
    }
    s
}

/// Cores and memory nearly free (as in the modern host's PCIe test), so the
/// receivers' PCIe links are what is left; 4 MiB socket buffers.
const FAST: &str = "cpu = { clock = \"100GHz\" }\nmemory = { copy_bandwidth = \"1000GB/s\", \
                    cached_copy_bandwidth = \"1000GB/s\", bandwidth = \"10000GB/s\" }\n\
                    tcp = { rx_buffer = \"4MiB\", tx_buffer = \"4MiB\" }";

#[test]
fn hosts_on_one_machine_share_its_pcie_link() {
    // Each receiver's NIC in a gen3 x8 slot: one such link holds a 100 Gb/s
    // stream near 51 Gb/s (the modern host's PCIe test). Two receivers of
    // their own each take about that much; two on one machine take about
    // that much together.
    let x8 = format!("{FAST}\nbus = {{ lanes = 8 }}");
    let workload = "duration = \"10ms\"\nomit = \"5ms\"";
    let apart = run(&two_flows("modern-x86-pcie", FAST, &x8, 100, workload));
    let together = run(&two_flows("modern-x86-pcie", FAST, &format!("{x8}\nmachine = \"server\""), 100, workload));
    let gbps = |r: &Report| r.summary.goodput_bps / 1e9;
    let each = |r: &Report| r.bulk_flows.as_ref().unwrap().iter().map(|f| f.goodput_bps / 1e9).collect::<Vec<_>>();
    assert!(apart.summary.verified && together.summary.verified);
    assert!(each(&apart).iter().all(|&g| g > 45.0), "apart: {:?} Gb/s", each(&apart));
    assert!(gbps(&apart) > 90.0, "apart: {:.1} Gb/s", gbps(&apart));
    assert!(gbps(&together) < 0.6 * gbps(&apart), "together {:.1} vs apart {:.1} Gb/s", gbps(&together), gbps(&apart));
    assert!(gbps(&together) > 45.0, "together: {:.1} Gb/s, about one link's worth", gbps(&together));
    // The machine's link is the bottleneck, and each of its hosts reports
    // it: busier than either receiver's own link (its counters run from
    // the start, slow start included: 86 and 79 % when written).
    for h in [2, 3] {
        let (t, own) = (timing(&together, h), timing(&apart, h));
        assert_eq!(t.machine.as_deref(), Some("server"));
        assert!(own.machine.is_none());
        let (shared, alone) = (t.bus_utilization, own.bus_utilization);
        assert!(shared > 0.8 && shared > alone, "host {h}: the shared link {shared:.2} busy, its own {alone:.2}");
    }
    let (b2, b3) = (&timing(&together, 2).bus, &timing(&together, 3).bus);
    assert_eq!((b2.transfers, b2.bytes, b2.wait_ps), (b3.transfers, b3.bytes, b3.wait_ps));
    // The link moved both receivers' frames: more than either flow's payload alone.
    let payload: u64 = together.bulk_flows.as_ref().unwrap().iter().map(|f| f.bytes).sum();
    assert!(b2.bytes > payload, "{} bus bytes for {payload} bytes of payload", b2.bytes);
}

#[test]
fn hosts_on_one_machine_share_its_ddio_ways() {
    // Each reader computes on what it reads and falls behind a 10 Gb/s
    // flow, so its 768 KiB receive buffer stays nearly full: a byte waits
    // while about that much more arrives behind it. In a 1 MiB DDIO share
    // of its own most of it is still in the L3 when read; two such flows on
    // one machine write twice as much into the same share between a byte's
    // arrival and its read, and more of it comes from memory.
    let receiver = "memory = { ddio = \"1MiB\" }\napp = { compute_per_kib = 5000 }\n\
                    tcp = { rx_buffer = \"768KiB\" }";
    let workload = "duration = \"20ms\"\nomit = \"5ms\"";
    let apart = run(&two_flows("modern-x86-pcie", "", receiver, 10, workload));
    let together = run(&two_flows("modern-x86-pcie", "", &format!("{receiver}\nmachine = \"server\""), 10, workload));
    let from_llc = |r: &Report, h: usize| {
        let c = timing(r, h).rx_copy.as_ref().expect("a DDIO host reports where its reads found the data");
        assert_eq!(c.llc_bytes + c.memory_bytes, c.read_bytes, "every byte read is from the L3 or from memory");
        assert!(c.read_bytes > 4 << 20, "{} bytes read", c.read_bytes);
        c.llc_bytes as f64 / c.read_bytes as f64
    };
    for h in [2, 3] {
        let (alone, shared) = (from_llc(&apart, h), from_llc(&together, h));
        assert!(alone > 0.5, "host {h} alone: {:.0} % of its reads from the L3", 100.0 * alone);
        assert!(
            shared < 0.7 * alone,
            "host {h}: {:.0} % from the L3 on one machine, {:.0} % alone",
            100.0 * shared,
            100.0 * alone
        );
    }
}

#[test]
fn a_machine_of_one_host_changes_nothing() {
    // The machine's parts are the host's own when it is alone on it.
    let receiver = "memory = { ddio = \"1MiB\" }\napp = { compute_per_kib = 5000 }\n\
                    tcp = { rx_buffer = \"768KiB\" }";
    let workload = "duration = \"5ms\"";
    let plain = two_flows("modern-x86-pcie", "", receiver, 10, workload);
    let mut named = plain.replacen("name = \"b0\"\n", "name = \"b0\"\nmachine = \"m0\"\n", 1);
    named = named.replacen("name = \"b1\"\n", "name = \"b1\"\nmachine = \"m1\"\n", 1);
    assert_ne!(plain, named);
    let (a, b) = (run(&plain), run(&named));
    assert_eq!(a.summary.goodput_bps, b.summary.goodput_bps);
    for h in 0..4 {
        let (x, y) = (timing(&a, h), timing(&b, h));
        assert_eq!(x.cycles, y.cycles, "host {h}");
        assert_eq!((x.bus.bytes, x.bus.wait_ps), (y.bus.bytes, y.bus.wait_ps), "host {h}");
    }
}

#[test]
fn hosts_on_one_machine_are_deterministic() {
    let text = two_flows("modern-x86-pcie", "", "machine = \"server\"", 10, "duration = \"3ms\"");
    assert_eq!(run(&text).to_json(), run(&text).to_json());
}

#[test]
fn a_machine_needs_timed_hosts_with_one_bus_and_one_memory() {
    let base = two_flows("modern-x86-pcie", "", "machine = \"server\"", 10, "duration = \"1ms\"");
    // An ideal host has nothing to share.
    let ideal = base.replacen("name = \"b1\"\nprofile = \"modern-x86-pcie\"\n", "name = \"b1\"\n", 1);
    assert_eq!(
        config_error(&ideal).to_string(),
        "hosts[3].machine: needs hosts[3].profile: an ideal host has no bus or memory to share"
    );
    let other_bus = base.replacen("name = \"b1\"\n", "name = \"b1\"\nbus = { lanes = 8 }\n", 1);
    assert_eq!(
        config_error(&other_bus).to_string(),
        "hosts[3].bus: differs from hosts[2]'s, which is on the same machine \"server\" (its hosts share one bus)"
    );
    let other_memory = base.replacen("name = \"b0\"\n", "name = \"b0\"\nmemory = { ddio = \"1MiB\" }\n", 1);
    assert_eq!(
        config_error(&other_memory).to_string(),
        "hosts[3].memory: differs from hosts[2]'s, which is on the same machine \"server\" (its hosts share one memory)"
    );
    let bad_name = base.replace("machine = \"server\"", "machine = \"a b\"");
    assert_eq!(
        config_error(&bad_name).to_string(),
        "hosts[2].machine: must be letters, digits, '-' or '_', got \"a b\""
    );
}
