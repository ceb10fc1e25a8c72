//! Kurmann et al.'s zero-copy TCP/IP: driver-level fragmentation,
//! speculative defragmentation, zero-copy OS embeddings, fallbacks,
//! interference and the match CAM (`scenarios/kurmann/`).

use nicsim_core::api::Report;
use nicsim_core::sim::{TimingReport, ZeroCopyStats};

use crate::ideal::run;

/// A scenario under `scenarios/kurmann/`, its bulk size replaced by `bytes`.
fn scenario(name: &str, bytes: &str) -> String {
    let path = format!("{}/../../scenarios/kurmann/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("bytes = ") {
            out.push_str(&format!("bytes = \"{bytes}\"\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn timing(r: &Report, h: usize) -> &TimingReport {
    r.hosts[h].timing.as_ref().expect("timed host")
}

fn zc(r: &Report, h: usize) -> &ZeroCopyStats {
    timing(r, h).zero_copy.as_ref().expect("a zero-copy host")
}

/// MB/s (10^6 bytes) of the run's goodput.
fn mbps(r: &Report) -> f64 {
    r.summary.goodput_bps / 8e6
}

#[test]
fn every_variant_prints() {
    for name in
        ["standard", "spec-only", "zc-os-only", "both-remap", "both-fbufs", "fallback-zc-to-std", "fallback-std-to-zc"]
    {
        let r = run(&scenario(name, "32MiB"));
        let cpu = timing(&r, 1).cpu_utilization;
        eprintln!("{name}: cpu a {:.3} b {:.3} bus a {:.3} b {:.3} pauses b {} cycles_a {:?}", timing(&r, 0).cpu_utilization, timing(&r, 1).cpu_utilization, timing(&r, 0).bus_utilization, timing(&r, 1).bus_utilization, timing(&r, 1).nic.pauses, timing(&r, 0).cycles);
        eprintln!(
            "{name}: {:.1} MB/s, receiver CPU {:.2}, verified {} zc_b {:?} zc_a {:?} cycles_b {:?}",
            mbps(&r),
            cpu,
            r.summary.verified,
            timing(&r, 1).zero_copy,
            timing(&r, 0).zero_copy,
            timing(&r, 1).cycles
        );
    }
}
