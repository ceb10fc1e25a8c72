//! A CPU-intensive application: `app.compute_per_kib` cycles of the
//! application's own work per KiB it moves, on its core (LAWS's `a`).

use nicsim_core::api::Report;
use nicsim_core::sim::TimingReport;

use crate::ideal::{bulk, config_error, run, two_hosts};

const LINK: &str = "rate = \"1Gbps\"\nmtu = \"1500B\"";

fn timing(r: &Report, host: usize) -> &TimingReport {
    r.hosts[host].timing.as_ref().expect("timed")
}

fn host(profile: &str, extra: &str) -> String {
    format!("profile = \"{profile}\"\n{extra}")
}

fn app_cycles(t: &TimingReport, core: usize) -> u64 {
    t.cores[core].cycles.get("app").copied().unwrap_or(0)
}

#[test]
fn application_work_is_charged_per_kib_on_the_app_core() {
    let per_kib = 3000u64;
    let r = run(&two_hosts(
        LINK,
        &host("kurmann-pii-400", &format!("app = {{ compute_per_kib = {per_kib} }}")),
        &bulk("2MiB"),
    ));
    assert!(r.summary.verified);
    let kib = 2048u64;
    for h in 0..2 {
        let t = timing(&r, h);
        let app = app_cycles(t, 0);
        // Each call rounds its share up to a whole cycle: at most one extra per call.
        assert!(app >= per_kib * kib, "host {h}: {app} app cycles for {kib} KiB");
        assert!(app <= per_kib * kib + 10_000, "host {h}: {app} app cycles for {kib} KiB");
        assert_eq!(t.cycles.get("app").copied(), Some(app), "host {h}: app work ran on another core");
    }
    let plain = run(&two_hosts(LINK, &host("kurmann-pii-400", ""), &bulk("2MiB")));
    assert!(!timing(&plain, 0).cycles.contains_key("app"), "no compute configured, yet app work was charged");
}

#[test]
fn a_cpu_bound_receiver_moves_data_at_its_compute_rate() {
    // 40 000 cycles per KiB at 400 MHz is 100 µs per KiB: at most 10.24 MB/s,
    // whatever the network could do. The stack's own work on the same core
    // (about 7 000 cycles per KiB on this profile) slows it a little more.
    let per_kib = 40_000.0;
    let receiver = "profile = \"kurmann-pii-400\"\napp = { compute_per_kib = 40000 }";
    let text = format!(
        "[[hosts]]\nname = \"a\"\nprofile = \"kurmann-pii-400\"\n[[hosts]]\nname = \"b\"\n{receiver}\n\
         [[links]]\nendpoints = [\"a\", \"b\"]\n{LINK}\n{}",
        bulk("4MiB")
    );
    let r = run(&text);
    assert!(r.summary.verified);
    let bound = 400e6 / per_kib * 1024.0 * 8.0;
    let g = r.summary.goodput_bps;
    assert!(g <= bound * 1.01, "goodput {g} above the compute bound {bound}");
    assert!(g >= bound * 0.75, "goodput {g} far below the compute bound {bound}");
    let t = timing(&r, 1);
    assert!(t.cores[0].utilization > 0.95, "the receiver's core is the bottleneck: {}", t.cores[0].utilization);
    // The sender waits on the receiver: its core is mostly idle.
    assert!(timing(&r, 0).cores[0].utilization < 0.5);
}

#[test]
fn offload_speeds_up_a_cpu_bound_application_by_at_most_one_over_gamma() {
    // LAWS: moving the communication overhead o off the application core
    // lets a CPU-bound application run at 1/(a X) instead of 1/((a + o) X):
    // the improvement is at most 1/γ with γ = a/o (Shivam and Chase 2003).
    let per_kib = 20_000u64;
    let work = |extra: &str| {
        let h = host("ortiz-p4-400", &format!("app = {{ compute_per_kib = {per_kib} }}\n{extra}"));
        run(&two_hosts(LINK, &h, &bulk("4MiB")))
    };
    let before = work("");
    let after = work("offload = { enabled = true }");
    assert!(before.summary.verified && after.summary.verified);
    // o: the receiving core's communication cycles per KiB without offload.
    let t = timing(&before, 1);
    let comm: u64 = t.cores[0].cycles.iter().filter(|(l, _)| **l != "app").map(|(_, c)| c).sum();
    let gamma = per_kib as f64 / (comm as f64 / 4096.0);
    let gain = after.summary.goodput_bps / before.summary.goodput_bps - 1.0;
    assert!(gain > 0.0, "offload did not help a CPU-bound application (gain {gain})");
    assert!(gain <= 1.0 / gamma * 1.05, "gain {gain} beyond the LAWS bound 1/γ = {}", 1.0 / gamma);
}

#[test]
fn compute_needs_a_profile_and_sane_numbers() {
    let e = config_error(&two_hosts(LINK, "app = { compute_per_kib = 10 }", &bulk("1MiB")));
    assert_eq!(e.path, "hosts[0].app");
    let e = config_error(&two_hosts(LINK, &host("kurmann-pii-400", "app = { compute_per_kib = -5.0 }"), &bulk("1MiB")));
    assert_eq!(e.path, "hosts[0].app.compute_per_kib");
    let e = config_error(&two_hosts(LINK, &host("kurmann-pii-400", "app = { compute_per_kb = 5 }"), &bulk("1MiB")));
    assert_eq!(e.path, "hosts[0].app.compute_per_kb");
}
