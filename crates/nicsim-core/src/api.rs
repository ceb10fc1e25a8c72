//! The entry points the CLI and the Python binding call.
//!
//! Everything crossing this boundary is plain data: TOML text in, JSON text
//! out, so results are identical whatever process or machine ran them. A
//! report holds no wall-clock time and no absolute path: the same scenario
//! and seed give byte-identical JSON.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::{self, Scenario, WorkloadConfig};
use crate::engine::{Dur, Time};
use crate::error::Error;
use crate::host::HostStats;
use crate::link::ChannelStats;
use crate::probe::observer::{Observer, Probes};
use crate::sim::Sim;
use crate::workload::{FlowReport, Outcome, RunView};

/// How to run a scenario (things that are not part of the scenario itself).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Where the scenario came from (a file path), for results.
    pub source: String,
    /// Overrides the scenario's `seed` when set.
    pub seed: Option<u64>,
    /// Write one pcap per link into this directory when set.
    pub pcap_dir: Option<PathBuf>,
}

/// Identity of the scenario a report came from.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioInfo {
    /// Scenario name.
    pub name: String,
    /// Where it was read from.
    pub source: String,
    /// Its description.
    pub description: String,
}

/// The headline numbers of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Application bytes per second × 8 over `duration_s` (NetPIPE: the
    /// peak over block sizes, bytes × 8 / one-way time).
    pub goodput_bps: f64,
    /// NetPIPE latency: the one-way time of the smallest block.
    pub latency_s: Option<f64>,
    /// UDP stream: the sender's rate (netperf reports send and receive rates apart).
    pub send_bps: Option<f64>,
    /// UDP stream: datagrams sent.
    pub datagrams_sent: Option<u64>,
    /// UDP stream: datagrams received (duplicates included).
    pub datagrams_received: Option<u64>,
    /// Application bytes delivered and verified (all streams; after a
    /// warm-up, `omit`, those delivered after it).
    pub payload_bytes: u64,
    /// Measured interval: connection established → last byte delivered
    /// (bulk), or first request → last response (request/response).
    pub duration_s: f64,
    /// Simulated time when the workload finished.
    pub sim_time_s: f64,
    /// Frames put on the wire, all links and directions.
    pub frames: u64,
    /// Frames dropped at full link queues.
    pub drops: u64,
    /// Frames lost to impairments.
    pub lost: u64,
    /// TCP data segments that re-sent sequence space.
    pub retransmissions: u64,
    /// TCP data segments on the wire.
    pub data_segments: u64,
    /// Ethernet goodput ceiling for full-sized segments (bulk only).
    pub ceiling_bps: Option<f64>,
    /// Every delivered byte matched what was sent.
    pub verified: bool,
    /// Completed transactions (request/response only).
    pub transactions: Option<u64>,
    /// Transactions per second.
    pub transaction_rate: Option<f64>,
    /// Mean round-trip time of a transaction, seconds.
    pub mean_latency_s: Option<f64>,
    /// Median round-trip time, seconds.
    pub p50_latency_s: Option<f64>,
    /// 90th-percentile round-trip time, seconds.
    pub p90_latency_s: Option<f64>,
    /// 99th-percentile round-trip time, seconds.
    pub p99_latency_s: Option<f64>,
    /// Simulation events executed.
    pub events: u64,
    /// Bulk transfers with several flows: Jain's fairness index of their
    /// goodputs, (Σx)² / (n · Σx²), 1 when all are equal, 1/n at worst.
    pub jain_fairness: Option<f64>,
}

pub use crate::workload::BulkFlowRow;

/// One switch's counters.
#[derive(Debug, Clone, Serialize)]
pub struct SwitchRow {
    /// Switch name.
    pub name: String,
    /// Frames received, forwarded, flooded and dropped.
    #[serde(flatten)]
    pub stats: crate::sim::SwitchStats,
}

/// One direction of one link.
#[derive(Debug, Clone, Serialize)]
pub struct LinkRow {
    /// Link name, `a-b`.
    pub link: String,
    /// Direction, `a->b`.
    pub direction: String,
    /// Counters.
    #[serde(flatten)]
    pub stats: ChannelStats,
    /// TCP retransmissions seen in this direction.
    pub retransmissions: u64,
    /// Busy fraction of the wire over `sim_time_s`.
    pub utilization: f64,
}

/// One host.
#[derive(Debug, Clone, Serialize)]
pub struct HostRow {
    /// Host name.
    pub name: String,
    /// IPv4 address.
    pub ip: String,
    /// Counters.
    #[serde(flatten)]
    pub stats: HostStats,
    /// What the timing model measured (hosts with a profile).
    pub timing: Option<crate::sim::TimingReport>,
}

/// The result of one run, serialisable to JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// nicsim version that produced it.
    pub nicsim_version: String,
    /// The scenario.
    pub scenario: ScenarioInfo,
    /// The seed used.
    pub seed: u64,
    /// The workload as configured (`kind` plus its fields).
    pub workload: serde_json::Value,
    /// Headline numbers.
    pub summary: Summary,
    /// Per link direction.
    pub links: Vec<LinkRow>,
    /// Per switch.
    pub switches: Vec<SwitchRow>,
    /// Per host.
    pub hosts: Vec<HostRow>,
    /// Every checked byte stream.
    pub flows: Vec<FlowReport>,
    /// Per-flow goodput of a bulk transfer with several flows.
    pub bulk_flows: Option<Vec<BulkFlowRow>>,
    /// NetPIPE's measurements, one per block size (NetPIPE workloads).
    pub netpipe: Option<Vec<crate::workload::netpipe::NetpipePoint>>,
    /// Per-message send and receive cycles by layer (echo workload).
    pub echo: Option<crate::sim::EchoReport>,
    /// Trace files written (names inside the pcap directory).
    pub pcaps: Vec<String>,
}

impl Report {
    /// Pretty JSON, byte-identical for the same scenario and seed.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises")
    }
}

/// Parse, validate and run a scenario given as TOML text.
pub fn run_toml(text: &str, opts: &RunOptions) -> Result<Report, Error> {
    let scenario = config::parse(text)?;
    run_scenario(&scenario, opts)
}

/// Parse and validate a scenario; return it fully resolved (defaults filled
/// in, units canonical) as JSON.
pub fn resolve_toml(text: &str, source: &str) -> Result<String, Error> {
    let mut scenario = config::parse(text)?;
    // A pcap replay file must exist and parse.
    crate::workload::replay::prepare(&mut scenario, source)?;
    Ok(serde_json::to_string_pretty(&scenario).expect("a scenario always serialises"))
}

/// `length` bytes of pattern stream `stream` of a run seeded with `seed`,
/// from `offset`: exactly what that stream's sender wrote.
pub fn pattern_bytes(seed: u64, stream: u64, offset: u64, length: usize) -> Vec<u8> {
    let mut buf = vec![0u8; length];
    crate::workload::pattern::Pattern::new(seed, stream).fill(offset, &mut buf);
    buf
}

/// Run a validated scenario.
pub fn run_scenario(s: &Scenario, opts: &RunOptions) -> Result<Report, Error> {
    run_observed(s, opts, None, None).map(|(report, _)| report)
}

/// Parse, validate and run a scenario, calling `progress` now and then
/// (every 65 536 events) with how far it has got, and feeding named events
/// to `observer` if given. Neither changes the result.
pub fn run_toml_progress(
    text: &str,
    opts: &RunOptions,
    observer: Option<Box<dyn Observer>>,
    progress: crate::sim::ProgressHook,
) -> Result<(Report, Option<Box<dyn Observer>>), Error> {
    let scenario = config::parse(text)?;
    run_observed(&scenario, opts, observer, Some(progress))
}

/// Parse, validate and run a scenario, feeding named events to `observer`
/// (see [`crate::probe::observer`]); the observer is handed back.
pub fn run_toml_observed(
    text: &str,
    opts: &RunOptions,
    observer: Box<dyn Observer>,
) -> Result<(Report, Box<dyn Observer>), Error> {
    let scenario = config::parse(text)?;
    let (report, observer) = run_observed(&scenario, opts, Some(observer), None)?;
    Ok((report, observer.expect("the observer given is handed back")))
}

fn run_observed(
    s: &Scenario,
    opts: &RunOptions,
    observer: Option<Box<dyn Observer>>,
    on_progress: Option<crate::sim::ProgressHook>,
) -> Result<(Report, Option<Box<dyn Observer>>), Error> {
    let seed = opts.seed.unwrap_or(s.seed);
    let mut loaded;
    let s = if matches!(&s.workload, WorkloadConfig::PcapReplay(_)) {
        loaded = s.clone();
        crate::workload::replay::prepare(&mut loaded, &opts.source)?;
        &loaded
    } else {
        s
    };
    let mut sim = Sim::build(s, seed)?;
    if let Some(dir) = opts.pcap_dir.as_deref() {
        sim.record_traces(dir)?;
    }
    if let Some(o) = observer {
        sim.probes = Probes::new(o);
    }
    sim.progress = on_progress;
    let max_prop = s.links.iter().map(|l| l.propagation.0).max().unwrap_or(0);
    let drain = Dur(1_000_000_000u64.max(8 * max_prop));
    sim.run(Time::ZERO + s.run.time_limit.dur(), drain)?;
    let pcaps = sim.finish_traces()?;
    let Some(finished) = sim.finished_at else {
        return Err(Error::Simulation(format!(
            "the workload did not finish within run.time_limit = {} ({})",
            s.run.time_limit,
            progress(&sim)
        )));
    };
    let report = report(s, opts, &sim, finished, pcaps);
    Ok((report, std::mem::take(&mut sim.probes).into_observer()))
}

fn progress(sim: &Sim) -> String {
    let parts: Vec<String> = sim
        .apps
        .iter()
        .zip(&sim.hosts)
        .flat_map(|(app, host)| app.flows("peer", &host.name, &sim.hosts))
        .map(|f| format!("{} received {} bytes", f.to, f.bytes))
        .collect();
    if parts.is_empty() {
        "no byte arrived".into()
    } else {
        parts.join(", ")
    }
}

fn report(s: &Scenario, opts: &RunOptions, sim: &Sim, finished: Time, pcaps: Vec<String>) -> Report {
    let w = crate::workload::spec::of(&s.workload);
    let view = RunView { scenario: s, hosts: &sim.hosts, apps: &sim.apps, finished };
    let Outcome {
        duration,
        ceiling_bps: ceiling,
        rr,
        jain,
        bulk_flows,
        netpipe,
        latency_s: latency,
        peak_bps: peak,
        send_bps,
        datagrams_sent,
        datagrams_received,
        measured_bytes,
    } = w.outcome(&view);
    let mut flows = Vec::new();
    for (i, app) in sim.apps.iter().enumerate() {
        let me = &sim.hosts[i].name;
        flows.extend(app.flows(w.peer(me), me, &sim.hosts));
    }
    // After a warm-up only the bytes delivered after it count.
    let payload: u64 = measured_bytes.unwrap_or_else(|| flows.iter().map(|f| f.bytes).sum());
    let sim_time = finished.as_secs_f64();
    let mut links = Vec::new();
    for link in &sim.links {
        for d in 0..2 {
            let (a, b) = (sim.node_name(link.ends[d]), sim.node_name(link.ends[1 - d]));
            let st = link.chans[d].stats.clone();
            links.push(LinkRow {
                link: link.name.clone(),
                direction: format!("{a}->{b}"),
                utilization: if finished.ps() > 0 { st.busy_ps as f64 / finished.ps() as f64 } else { 0.0 },
                retransmissions: link.monitors[d].retransmissions,
                stats: st,
            });
        }
    }
    let sum = |f: fn(&LinkRow) -> u64| links.iter().map(f).sum::<u64>();
    // TCP analysis of the directions leaving hosts: each segment counted
    // once, at its first hop, however many switches it crosses.
    let first_hops =
        (sim.links.iter()).flat_map(|l| (0..2).filter(|&d| l.ends[d] < sim.hosts.len()).map(move |d| &l.monitors[d]));
    let summary = Summary {
        goodput_bps: match peak {
            Some(p) => p,
            None if duration.ps() > 0 => payload as f64 * 8.0 / duration.as_secs_f64(),
            None => 0.0,
        },
        latency_s: latency,
        send_bps,
        datagrams_sent,
        datagrams_received,
        payload_bytes: payload,
        duration_s: duration.as_secs_f64(),
        sim_time_s: sim_time,
        frames: sum(|l| l.stats.frames),
        drops: sum(|l| l.stats.queue_drops),
        lost: sum(|l| l.stats.lost),
        retransmissions: first_hops.clone().map(|m| m.retransmissions).sum(),
        data_segments: first_hops.map(|m| m.data_segments).sum(),
        ceiling_bps: ceiling,
        verified: true,
        transactions: rr.transactions,
        transaction_rate: rr.rate,
        mean_latency_s: rr.mean,
        p50_latency_s: rr.p50,
        p90_latency_s: rr.p90,
        p99_latency_s: rr.p99,
        events: sim.events(),
        jain_fairness: jain,
    };
    let mut workload = serde_json::to_value(&s.workload).expect("serialisable");
    if let serde_json::Value::Object(map) = &mut workload {
        if let Some((kind, fields)) = map.iter().next().map(|(k, v)| (k.clone(), v.clone())) {
            let mut flat = serde_json::Map::new();
            flat.insert("kind".into(), kind.into());
            if let serde_json::Value::Object(f) = fields {
                flat.extend(f);
            }
            workload = serde_json::Value::Object(flat);
        }
    }
    Report {
        nicsim_version: crate::VERSION.into(),
        scenario: ScenarioInfo {
            name: s.name.clone(),
            source: opts.source.clone(),
            description: s.description.clone(),
        },
        seed: sim.seed,
        workload,
        summary,
        links,
        switches: sim.switches.iter().map(|w| SwitchRow { name: w.name.clone(), stats: w.stats.clone() }).collect(),
        hosts: sim
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| HostRow {
                name: h.name.clone(),
                ip: h.ip.to_string(),
                stats: h.stats.clone(),
                timing: sim.timing_report(i, sim.now().max(finished)),
            })
            .collect(),
        flows,
        bulk_flows,
        netpipe,
        echo: match &s.workload {
            WorkloadConfig::Echo(e) => sim.echo_report(e),
            _ => None,
        },
        pcaps: pcaps
            .iter()
            .map(|p| std::path::Path::new(p).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default())
            .collect(),
    }
}
