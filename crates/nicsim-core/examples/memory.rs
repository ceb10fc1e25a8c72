//! Memory over simulated time: run a scenario in one-second slices of
//! simulated time and print the process's resident memory after each.
//!
//! ```sh
//! cargo run --release -p nicsim-core --example memory -- scenarios/bench/memory-10g-60s.toml
//! ```
//!
//! One row per simulated second: simulated seconds, events, frames on the
//! wire, wall-clock seconds, resident and peak resident memory (MB, from
//! `/proc/self/status`). The last line compares the memory at the end with
//! the memory after the first simulated second (after warm-up: socket
//! buffers, rings and queues filled). Not part of CI.

use std::time::Instant;

use nicsim_core::config;
use nicsim_core::engine::{Dur, Time};
use nicsim_core::sim::Sim;

/// A field of `/proc/self/status` in kB (`VmRSS`, `VmHWM`); 0 elsewhere.
fn status_kb(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':')?.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: memory SCENARIO.toml");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).expect("a readable scenario");
    let s = config::parse(&text).expect("a valid scenario");
    let mut sim = Sim::build(&s, s.seed).expect("builds");
    let wall = Instant::now();
    let frames = |sim: &Sim| sim.links.iter().flat_map(|l| l.chans.iter()).map(|c| c.stats.frames).sum::<u64>();
    println!("{:>6} {:>12} {:>10} {:>8} {:>8} {:>8}", "sim_s", "events", "frames", "wall_s", "rss_MB", "peak_MB");
    let (mut second, mut after_first) = (0u64, 0u64);
    while sim.finished_at.is_none() && sim.now() < Time::ZERO + s.run.time_limit.dur() {
        second += 1;
        sim.run(Time(second * 1_000_000_000_000), Dur::ZERO).expect("the run does not fail");
        let (rss, peak) = (status_kb("VmRSS"), status_kb("VmHWM"));
        if second == 1 {
            after_first = rss;
        }
        println!(
            "{:>6} {:>12} {:>10} {:>8.1} {:>8.1} {:>8.1}",
            second,
            sim.events(),
            frames(&sim),
            wall.elapsed().as_secs_f64(),
            rss as f64 / 1024.0,
            peak as f64 / 1024.0
        );
    }
    let end = status_kb("VmRSS");
    println!(
        "resident memory: {:.1} MB after 1 s, {:.1} MB after {second} s ({:+.1} MB)",
        after_first as f64 / 1024.0,
        end as f64 / 1024.0,
        (end as f64 - after_first as f64) / 1024.0
    );
}
