//! Same scenario and seed ⇒ the same JSON report and the same pcap bytes,
//! run after run, for every workload kind, ideal and timed hosts, with
//! probes on or off.

use std::path::{Path, PathBuf};

use nicsim_core::api::{run_toml_observed, Report};
use nicsim_core::probe::observer::{Observer, ProbeEvent};
use nicsim_core::{run_toml, RunOptions};

use crate::ideal::{bulk, two_hosts};

/// Wants every event and counts them (so the probe path really runs).
#[derive(Default)]
struct Everything(u64);

impl Observer for Everything {
    fn wants(&self, _: &str) -> bool {
        true
    }
    fn on_event(&mut self, _: &ProbeEvent<'_>) {
        self.0 += 1;
    }
}

struct Output {
    json: String,
    pcap: Vec<u8>,
}

fn scratch(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nicsim-determinism-{}-{tag}", std::process::id()))
}

fn pcap_of(dir: &Path, r: &Report) -> Vec<u8> {
    assert_eq!(r.pcaps.len(), 1, "one link, one trace");
    std::fs::read(dir.join(&r.pcaps[0])).unwrap()
}

/// Run `text` with seed 5, writing its trace to `dir`; with `probes`, an
/// observer that wants every event.
fn once(text: &str, dir: &Path, probes: bool) -> Output {
    let opts = RunOptions { seed: Some(5), pcap_dir: Some(dir.to_path_buf()), source: "det".into() };
    let report = if probes {
        let (r, _) = run_toml_observed(text, &opts, Box::new(Everything::default())).unwrap();
        r
    } else {
        run_toml(text, &opts).unwrap()
    };
    Output { pcap: pcap_of(dir, &report), json: report.to_json() }
}

fn assert_deterministic(tag: &str, text: &str) {
    let base = scratch(tag);
    let runs: Vec<Output> = [(0, false), (1, false), (2, true), (3, true)]
        .iter()
        .map(|&(i, probes)| once(text, &base.join(i.to_string()), probes))
        .collect();
    for (i, r) in runs.iter().enumerate().skip(1) {
        assert!(r.json == runs[0].json, "{tag}: run {i} report differs from run 0");
        assert!(r.pcap == runs[0].pcap, "{tag}: run {i} trace differs from run 0");
    }
    assert!(runs[0].pcap.len() > 24 + 16, "{tag}: the trace holds frames");
    std::fs::remove_dir_all(&base).unwrap();
}

const IMPAIRED: &str = "rate = \"1Gbps\"\npropagation = \"2us\"\n\
    impairments = { loss = 0.01, duplicate = 0.01, reorder = 0.02, reorder_delay = \"15us\", corrupt = 0.005 }";

#[test]
fn bulk_over_an_impaired_link() {
    assert_deterministic("bulk", &(two_hosts(IMPAIRED, "", &bulk("500kB")) + "[run]\ntime_limit = \"300s\"\n"));
}

#[test]
fn request_response_between_timed_hosts() {
    let rr = "[workload.request_response]\nclient = \"a\"\nserver = \"b\"\nrequest = \"3000B\"\ntransactions = 40\n";
    assert_deterministic("rr", &two_hosts("impairments = { reorder = 0.05 }", "profile = \"kurmann-pii-400\"", rr));
}

#[test]
fn tso_bulk_between_modern_hosts() {
    assert_deterministic(
        "tso",
        &two_hosts("rate = \"10Gbps\"", "profile = \"modern-x86-pcie\"\nnic = { tso = true }", &bulk("2MB")),
    );
}

#[test]
fn a_poisson_udp_stream_with_loss() {
    let udp = "[workload.udp_stream]\nfrom = \"a\"\nto = \"b\"\nsize = \"700B\"\ncount = 400\n\
               rate = \"50Mbps\"\narrivals = \"poisson\"\nlinger = \"1ms\"\n";
    assert_deterministic("udp", &two_hosts("impairments = { loss = 0.05, duplicate = 0.05 }", "", udp));
}

#[test]
fn netpipe_over_small_blocks() {
    let np = "[workload.netpipe]\nclient = \"a\"\nserver = \"b\"\nupper = \"2kB\"\nrun_time = \"2ms\"\n";
    assert_deterministic("netpipe", &two_hosts("", "profile = \"kurmann-pii-400\"", np));
}

#[test]
fn a_different_seed_gives_a_different_impaired_run() {
    // Guards the tests above against comparing constants: the seed reaches
    // the impairments and the stacks.
    let text = two_hosts(IMPAIRED, "", &bulk("500kB")) + "[run]\ntime_limit = \"300s\"\n";
    let a = run_toml(&text, &RunOptions { seed: Some(5), ..Default::default() }).unwrap();
    let b = run_toml(&text, &RunOptions { seed: Some(6), ..Default::default() }).unwrap();
    assert_ne!(a.to_json(), b.to_json());
}
