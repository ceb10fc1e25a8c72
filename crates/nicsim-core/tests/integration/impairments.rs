//! Impairment properties: for random seeds and random loss, duplication,
//! reordering and corruption on the link, between ideal hosts, timed hosts
//! (`kurmann-pii-400`) and hosts with TSO and checksum offload
//! (`modern-x86-pcie`), a run either completes with every byte verified and
//! accounted for, or fails with an explicit simulation error. Never silently
//! wrong data, never a panic, never a hang (`run.time_limit` bounds each run).
//!
//! Case counts keep the suite under about a minute in the dev profile; set
//! `PROPTEST_CASES` for a longer search (it replaces every count here).

use nicsim_core::api::Report;
use nicsim_core::{run_toml, Error, RunOptions};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default_cases);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Host profiles the properties run over: ideal, timed, timed with TSO.
const PROFILES: [&str; 3] =
    ["", "profile = \"kurmann-pii-400\"", "profile = \"modern-x86-pcie\"\nnic = { tso = true }"];

#[derive(Debug, Clone)]
struct Link {
    loss: f64,
    duplicate: f64,
    reorder: f64,
    corrupt: f64,
    delay_us: u32,
}

fn link() -> impl Strategy<Value = Link> {
    (0.0..0.08f64, 0.0..0.1f64, 0.0..0.1f64, 0.0..0.03f64, 1u32..40)
        .prop_map(|(loss, duplicate, reorder, corrupt, delay_us)| Link { loss, duplicate, reorder, corrupt, delay_us })
}

fn scenario(l: &Link, a: &str, b: &str, workload: &str, limit: &str) -> String {
    format!(
        "[[hosts]]\nname = \"a\"\n{a}\n[[hosts]]\nname = \"b\"\n{b}\n[[links]]\nendpoints = [\"a\", \"b\"]\n\
         rate = \"1Gbps\"\npropagation = \"1us\"\nimpairments = {{ loss = {}, duplicate = {}, reorder = {}, \
         reorder_delay = \"{}us\", corrupt = {} }}\n{workload}\n[run]\ntime_limit = \"{limit}\"\n",
        l.loss, l.duplicate, l.reorder, l.delay_us, l.corrupt
    )
}

/// The run's outcome: a report to check, or an explicit simulation error
/// (which must say why). Anything else fails the property.
fn outcome(text: &str, seed: u64) -> Result<Option<Report>, TestCaseError> {
    match run_toml(text, &RunOptions { seed: Some(seed), ..Default::default() }) {
        Ok(r) => {
            prop_assert!(r.summary.verified);
            Ok(Some(r))
        }
        Err(Error::Simulation(m)) => {
            prop_assert!(
                m.contains("did not finish") || m.contains("corrupted"),
                "a simulation error must say what failed: {m}"
            );
            Ok(None)
        }
        Err(other) => Err(TestCaseError::fail(format!("not a simulation error: {other}\n{text}"))),
    }
}

/// The bytes of the flow from `from` to `to`.
fn flow(r: &Report, from: &str, to: &str) -> u64 {
    r.flows.iter().find(|f| f.from == from && f.to == to).map_or(0, |f| f.bytes)
}

proptest! {
    #![proptest_config(config(10))]

    /// A bulk transfer delivers exactly its byte count, all verified.
    #[test]
    fn bulk_arrives_whole_or_fails_loudly(
        seed in any::<u64>(), l in link(), pa in 0..3usize, pb in 0..3usize, kb in 1u64..200,
    ) {
        let bytes = kb * 1000;
        let w = format!("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"{bytes}B\"\nwrite_size = \"7000B\"\n");
        let text = scenario(&l, PROFILES[pa], PROFILES[pb], &w, "400s");
        if let Some(r) = outcome(&text, seed)? {
            prop_assert_eq!(flow(&r, "a", "b"), bytes);
            prop_assert_eq!(r.summary.payload_bytes, bytes);
        }
    }
}

proptest! {
    #![proptest_config(config(8))]

    /// Request/response delivers every request and every response, verified.
    #[test]
    fn request_response_completes_every_transaction_or_fails_loudly(
        seed in any::<u64>(), l in link(), pa in 0..3usize, pb in 0..3usize,
        n in 1u64..15, req in 1u64..3000, resp in 1u64..5000,
    ) {
        let w = format!(
            "[workload.request_response]\nclient = \"a\"\nserver = \"b\"\nrequest = \"{req}B\"\n\
             response = \"{resp}B\"\ntransactions = {n}\n"
        );
        let text = scenario(&l, PROFILES[pa], PROFILES[pb], &w, "400s");
        if let Some(r) = outcome(&text, seed)? {
            prop_assert_eq!(r.summary.transactions, Some(n));
            prop_assert_eq!(flow(&r, "a", "b"), n * req);
            prop_assert_eq!(flow(&r, "b", "a"), n * resp);
        }
    }
}

proptest! {
    #![proptest_config(config(6))]

    /// NetPIPE over small blocks: every block it measured arrived verified.
    #[test]
    fn netpipe_verifies_every_block_or_fails_loudly(
        seed in any::<u64>(), l in link(), pa in 0..3usize, upper in 1u64..3000,
    ) {
        let w = format!(
            "[workload.netpipe]\nclient = \"a\"\nserver = \"b\"\nupper = \"{upper}B\"\nrun_time = \"1ms\"\n"
        );
        let text = scenario(&l, PROFILES[pa], PROFILES[pa], &w, "400s");
        if let Some(r) = outcome(&text, seed)? {
            let points = r.netpipe.as_ref().expect("a NetPIPE report");
            prop_assert!(!points.is_empty());
            prop_assert!(points.iter().all(|p| p.bytes <= upper.max(1) + 3), "no block above upper + perturbation");
            prop_assert!(flow(&r, "a", "b") > 0 && flow(&r, "b", "a") > 0);
        }
    }
}

proptest! {
    #![proptest_config(config(8))]

    /// A UDP stream: every datagram that arrives is verified on its own;
    /// none arrives that was not sent (duplicates aside).
    #[test]
    fn udp_stream_delivers_only_verified_datagrams(
        seed in any::<u64>(), l in link(), pa in 0..3usize, pb in 0..3usize,
        size in 8u64..4000, count in 1u64..300,
    ) {
        let w = format!(
            "[workload.udp_stream]\nfrom = \"a\"\nto = \"b\"\nsize = \"{size}B\"\ncount = {count}\nlinger = \"2ms\"\n"
        );
        let text = scenario(&l, PROFILES[pa], PROFILES[pb], &w, "60s");
        if let Some(r) = outcome(&text, seed)? {
            let (sent, got) = (r.summary.datagrams_sent.unwrap(), r.summary.datagrams_received.unwrap());
            prop_assert_eq!(sent, count);
            let copies: u64 = r.links.iter().filter(|x| x.direction == "a->b").map(|x| x.stats.duplicated).sum();
            prop_assert!(got <= sent + copies, "{} received of {} sent with {} duplicates", got, sent, copies);
            prop_assert_eq!(flow(&r, "a", "b"), got * size);
        }
    }
}

#[test]
fn a_lossless_link_never_takes_the_error_branch() {
    // The properties above accept an explicit error; make sure the same
    // set-ups do succeed when nothing is impaired, for every profile pair.
    let clean = Link { loss: 0.0, duplicate: 0.0, reorder: 0.0, corrupt: 0.0, delay_us: 1 };
    for a in PROFILES {
        for b in PROFILES {
            let w = "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"50kB\"\n";
            let r = run_toml(&scenario(&clean, a, b, w, "10s"), &RunOptions::default())
                .unwrap_or_else(|e| panic!("{a} -> {b}: {e}"));
            assert_eq!(flow(&r, "a", "b"), 50_000);
        }
    }
}
