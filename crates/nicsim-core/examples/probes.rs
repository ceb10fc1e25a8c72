//! The cost of probes: run a scenario with no observer, then with a Rust
//! observer that counts every probe event (`frame`, `deliver`,
//! `interrupt`, `job`, `call`), then with a [`Recorder`] keeping every event
//! in memory, alternating, best of five each, and print the three times:
//! CPU time of this thread (from `/proc/thread-self/schedstat`, so a busy
//! machine inflates it less than wall-clock time) where there is one.
//!
//! ```sh
//! cargo run --release -p nicsim-core --example probes -- scenarios/bench/tcp-10g-mtu1500.toml
//! ```
//!
//! Python probes (`nicsim.run(..., probes=...)`) add the cost of a Python
//! call per event on top; `nicsim bench` measures those.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use nicsim_core::api::run_toml_observed;
use nicsim_core::probe::observer::{Observer, ProbeEvent, Recorder, Recording, EVENTS};
use nicsim_core::{run_toml, RunOptions};

/// Seconds this thread has run on a CPU (Linux), else wall-clock seconds.
fn cpu_seconds(wall: &Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or_else(|| wall.elapsed().as_secs_f64(), |ns| ns as f64 / 1e9)
}

/// Counts every event it is given, per name.
#[derive(Default)]
struct Count([u64; EVENTS.len()]);

impl Observer for Count {
    fn wants(&self, _name: &str) -> bool {
        true
    }
    fn on_event(&mut self, event: &ProbeEvent<'_>) {
        let i = EVENTS.iter().position(|n| *n == event.name).expect("a known event");
        self.0[i] += 1;
    }
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: probes SCENARIO.toml");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).expect("a readable scenario");
    let opts = RunOptions::default();
    let off = || run_toml(&text, &opts).expect("runs").to_json();
    let counted = || {
        let (report, observer) = run_toml_observed(&text, &opts, Box::<Count>::default()).expect("runs");
        // The observer's counts are not printed; its presence is what is timed.
        drop(observer);
        report.to_json()
    };
    let kept = || {
        let recording = Rc::new(RefCell::new(Recording::of(EVENTS)));
        let (report, observer) = run_toml_observed(&text, &opts, Box::new(Recorder(recording.clone()))).expect("runs");
        drop(observer);
        assert!(recording.borrow().series.iter().flatten().any(|s| !s.is_empty()), "events were recorded");
        report.to_json()
    };
    // The three kinds of run alternate, so that a machine getting busier
    // or quieter affects each alike; the best of five of each is kept.
    let kinds: [&dyn Fn() -> String; 3] = [&off, &counted, &kept];
    let mut best = [f64::INFINITY; 3];
    let mut outs: [String; 3] = Default::default();
    let clock = Instant::now();
    for _ in 0..5 {
        for (k, run) in kinds.iter().enumerate() {
            let t = cpu_seconds(&clock);
            outs[k] = run();
            best[k] = best[k].min(cpu_seconds(&clock) - t);
        }
    }
    let [off, on, kept] = best;
    let [plain, observed, recorded] = outs;
    assert_eq!(plain, observed, "probes changed the result");
    assert_eq!(plain, recorded, "recording changed the result");
    println!(
        "probes off: {off:.3} s; probes on (Rust observer, every event): {on:.3} s ({:+.1} %); \
         every event recorded (Recorder, no Python): {kept:.3} s ({:+.1} %)",
        (on / off - 1.0) * 100.0,
        (kept / off - 1.0) * 100.0
    );
}
