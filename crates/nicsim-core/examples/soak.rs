//! Soak run: one long simulation (10^8 events by default) with the
//! process's memory sampled as it goes, to show memory stays flat.
//!
//! ```text
//!   host a ──10 Gb/s, 1 us, 0.1 % duplicated and reordered──▶ host b
//!   bulk TCP for as long as it takes to execute the events
//! ```
//!
//! Run it in release mode (not part of CI):
//!
//! ```sh
//! cargo run --release -p nicsim-core --example soak            # 10^8 events
//! cargo run --release -p nicsim-core --example soak -- 20000000
//! ```
//!
//! It prints one row per tenth of the run (events, simulated time, wall
//! time, resident memory, peak resident memory from `/proc/self/status`) and
//! exits with status 1 if resident memory at the end is more than 10 % (and
//! more than 8 MB) above what it was after the first tenth, or if the
//! simulator's invariants do not hold at the end.

use std::time::Instant;

use nicsim_core::config;
use nicsim_core::engine::{Dur, Time};
use nicsim_core::sim::Sim;

const SCENARIO: &str = r#"
name = "soak"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
endpoints = ["a", "b"]
rate = "10Gbps"
propagation = "1us"
impairments = { duplicate = 0.001, reorder = 0.001, reorder_delay = "5us" }
[workload.bulk]
from = "a"
to = "b"
duration = "100000s"
[run]
time_limit = "1000000s"
"#;

/// A field of `/proc/self/status` in kB (`VmRSS`, `VmHWM`); 0 elsewhere.
fn status_kb(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':')?.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let target: u64 = std::env::args().nth(1).map_or(100_000_000, |a| a.parse().expect("an event count"));
    let s = config::parse(SCENARIO).expect("the soak scenario is valid");
    let mut sim = Sim::build(&s, 1).expect("builds");
    let wall = Instant::now();
    println!("{:>12} {:>12} {:>9} {:>10} {:>10}", "events", "sim_s", "wall_s", "rss_MB", "peak_MB");
    let mut rss_after_first = 0;
    let mut step = Time(0);
    for tenth in 1..=10 {
        // Advance simulated time in small slices until this tenth's events are done.
        while sim.events() < target * tenth / 10 {
            step += Dur(1_000_000_000); // 1 ms
            sim.run(step, Dur::ZERO).expect("the run does not fail");
        }
        let (rss, peak) = (status_kb("VmRSS"), status_kb("VmHWM"));
        if tenth == 1 {
            rss_after_first = rss;
        }
        println!(
            "{:>12} {:>12.3} {:>9.1} {:>10.1} {:>10.1}",
            sim.events(),
            sim.now().as_secs_f64(),
            wall.elapsed().as_secs_f64(),
            rss as f64 / 1024.0,
            peak as f64 / 1024.0
        );
    }
    let rss_end = status_kb("VmRSS");
    let st = &sim.links[0].chans[0].stats;
    println!(
        "a->b: {} frames, {} duplicated, {} reordered; {:.0} events per wall-clock second",
        st.frames,
        st.duplicated,
        st.reordered,
        sim.events() as f64 / wall.elapsed().as_secs_f64()
    );
    let mut ok = true;
    if let Err(e) = sim.check_invariants() {
        println!("FAIL: invariant violated: {e}");
        ok = false;
    }
    let grown = rss_end.saturating_sub(rss_after_first);
    if grown * 10 > rss_after_first && grown > 8 * 1024 {
        println!("FAIL: resident memory grew by {} kB after the first tenth", grown);
        ok = false;
    }
    if ok {
        println!("OK: memory flat within 10 % after the first tenth, invariants hold");
    } else {
        std::process::exit(1);
    }
}
