//! Protocol offload: the stack runs on a communication processor (CPU1),
//! the application core only makes calls, posts commands and takes
//! completions; the communication processor's clock and memory delay
//! change its time physically.

use nicsim_core::api::Report;
use nicsim_core::sim::TimingReport;

use crate::ideal::{bulk, config_error, run};

fn pair(host: &str, workload: &str) -> String {
    format!(
        "[[hosts]]\nname = \"a\"\nprofile = \"ortiz-p4-400\"\n{host}\n[[hosts]]\nname = \"b\"\nprofile = \"ortiz-p4-400\"\n{host}\n\
         [[links]]\nendpoints = [\"a\", \"b\"]\nrate = \"1Gbps\"\nmtu = \"9000B\"\n{workload}\n"
    )
}

fn rr(transactions: u64) -> String {
    format!("[workload.request_response]\nclient = \"a\"\nserver = \"b\"\ntransactions = {transactions}\n")
}

fn timing(r: &Report, host: usize) -> &TimingReport {
    r.hosts[host].timing.as_ref().expect("timed")
}

fn offload(fields: &str) -> String {
    format!("offload = {{ enabled = true{fields} }}")
}

#[test]
fn with_offload_the_stack_runs_on_cpu1_and_cpu0_only_makes_calls() {
    let r = run(&pair(&offload(""), &rr(200)));
    assert!(r.summary.verified);
    for h in 0..2 {
        let t = timing(&r, h);
        let (cpu0, cpu1) = (&t.cores[0].cycles, &t.cores[1].cycles);
        for layer in ["tcp", "ip", "device", "driver"] {
            assert!(!cpu0.contains_key(layer), "host {h}: CPU0 ran {layer} work with the stack offloaded");
            assert!(cpu1.get(layer).copied().unwrap_or(0) > 0, "host {h}: CPU1 ran no {layer} work");
        }
        for layer in ["syscall", "socket", "command"] {
            assert!(cpu0.get(layer).copied().unwrap_or(0) > 0, "host {h}: CPU0 made no {layer} work");
        }
        // CPU1 polls: it takes no interrupts; CPU0's are all completions.
        assert_eq!(t.nic.interrupts, 0);
        assert!(t.nic.polls > 0);
        assert_eq!(t.cores[1].interrupts, 0);
        let o = t.offload.as_ref().expect("offload counters");
        assert_eq!(t.cores[0].interrupts, o.completion_interrupts);
        assert!(o.commands >= 400, "host {h}: {} commands for 200 transactions", o.commands);
    }
}

#[test]
fn without_offload_one_core_does_everything() {
    let r = run(&pair("", &rr(200)));
    assert!(r.summary.verified);
    for h in 0..2 {
        let t = timing(&r, h);
        assert!(t.cores[1].cycles.is_empty(), "host {h}: CPU1 worked without offload");
        assert!(!t.cores[0].cycles.contains_key("command"));
        assert!(t.nic.interrupts > 0);
        assert!(t.offload.is_none());
    }
}

/// One-way latency of 1-byte transactions, µs.
fn half_rtt_us(r: &Report) -> f64 {
    r.summary.p50_latency_s.unwrap() / 2.0 * 1e6
}

#[test]
fn latency_grows_linearly_with_the_memory_delay_multiplier() {
    // Each memory access on CPU1's path costs x times more and nothing else
    // changes, so equal steps of x add equal time (to the polling loop's
    // 0.5 µs turn, which quantises when CPU1 notices work).
    let lat: Vec<f64> = [1, 3, 5, 7]
        .iter()
        .map(|x| half_rtt_us(&run(&pair(&offload(&format!(", memory_multiplier = {x}")), &rr(100)))))
        .collect();
    let steps: Vec<f64> = lat.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(steps.iter().all(|&s| s > 1.0), "latency must grow with x: {lat:?}");
    for s in &steps {
        assert!((s - steps[0]).abs() <= 1.0 + 1e-9, "unequal steps {steps:?} for equal steps of x ({lat:?})");
    }
}

#[test]
fn halving_cpu1s_clock_doubles_its_time_when_memory_costs_nothing() {
    // With memory.latency = 0 every cost is instructions, so CPU1's busy
    // time for the same work scales with 1 / clock.
    let mem0 = "memory = { latency = 0 }\n";
    let full = run(&pair(&format!("{mem0}{}", offload("")), &rr(100)));
    let half = run(&pair(&format!("{mem0}{}", offload(", clock_ratio = 0.5")), &rr(100)));
    for h in 0..2 {
        let (a, b) = (&timing(&full, h).cores[1], &timing(&half, h).cores[1]);
        assert_eq!(a.cycles, b.cycles, "host {h}: the same work in cycles");
        let ratio = b.busy_s / a.busy_s;
        assert!((ratio - 2.0).abs() < 1e-6, "host {h}: CPU1 time grew by {ratio}, not 2");
    }
}

#[test]
fn offload_keeps_every_stream_intact() {
    for workload in [
        bulk("4MiB"),
        "[workload.udp_stream]\nfrom = \"a\"\nto = \"b\"\nsize = \"4000B\"\ncount = 500\n".to_string(),
        rr(50),
    ] {
        for fields in ["", ", notify = \"interrupt\"", ", location = \"nic\"", ", clock_ratio = 0.25"] {
            let r = run(&pair(&offload(fields), &workload));
            assert!(r.summary.verified, "offload{fields}: stream not verified");
            assert!(r.summary.payload_bytes > 0);
        }
    }
}

#[test]
fn interrupt_mode_interrupts_cpu1_not_cpu0() {
    let r = run(&pair(&offload(", notify = \"interrupt\""), &bulk("1MiB")));
    let t = timing(&r, 1);
    assert!(t.nic.interrupts > 0);
    assert_eq!(t.nic.polls, 0);
    assert!(t.cores[1].interrupts >= t.nic.interrupts, "NIC interrupts go to CPU1");
    assert_eq!(t.cores[0].interrupts, t.offload.as_ref().unwrap().completion_interrupts);
}

#[test]
fn bad_offload_settings_name_the_field() {
    let e = config_error(&pair("offload = { enabled = true, core = 0 }", &rr(1)));
    assert_eq!(e.path, "hosts[0].offload.core");
    assert!(e.reason.contains("app_core"), "{}", e.reason);
    let e = config_error(&pair("offload = { enabled = true, core = 2 }", &rr(1)));
    assert_eq!(e.path, "hosts[0].offload.core");
    let e = config_error(&pair("offload = { clock_ratio = 0.0 }", &rr(1)));
    assert_eq!(e.path, "hosts[0].offload.clock_ratio");
    let e = config_error(&pair("offload = { memory_multiplier = -1.0 }", &rr(1)));
    assert_eq!(e.path, "hosts[0].offload.memory_multiplier");
    let e = config_error(&pair("offload = { notify = \"sometimes\" }", &rr(1)));
    assert_eq!(e.path, "hosts[0].offload.notify");
    let e = config_error(&pair("offload = { enable = true }", &rr(1)));
    assert_eq!(e.path, "hosts[0].offload.enable");
}
