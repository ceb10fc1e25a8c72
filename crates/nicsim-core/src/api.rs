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
use crate::link::{goodput_ceiling, ChannelStats};
use crate::probe::observer::{Observer, Probes};
use crate::sim::Sim;
use crate::workload::{App, FlowReport};

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
    /// Application bytes delivered and verified (all streams).
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

/// One flow of a bulk transfer.
#[derive(Debug, Clone, Serialize)]
pub struct BulkFlowRow {
    /// Flow index across all transfers (also its pattern stream).
    pub flow: u32,
    /// Sending host.
    pub from: String,
    /// Receiving host.
    pub to: String,
    /// Bytes delivered and verified.
    pub bytes: u64,
    /// When its connection was established, seconds.
    pub start_s: f64,
    /// When its last byte reached the application, seconds.
    pub end_s: f64,
    /// bytes × 8 / (end − start).
    pub goodput_bps: f64,
}

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
    let mut flows = Vec::new();
    let (mut duration, mut ceiling) = (Dur::ZERO, None);
    let mut rr = RrStats::default();
    let (mut jain, mut bulk_flows) = (None, None);
    let (mut netpipe, mut latency, mut peak) = (None, None, None);
    let (mut send_bps, mut datagrams_sent, mut datagrams_received) = (None, None, None);
    match &s.workload {
        WorkloadConfig::Bulk(_) | WorkloadConfig::Transfers(_) => {
            let rows = bulk_rows(sim);
            let first = rows.iter().map(|r| r.start).min().unwrap_or(Time::ZERO);
            let last = rows.iter().map(|r| r.end).max().unwrap_or(first);
            duration = last.since(first);
            if rows.len() > 1 {
                let sum: f64 = rows.iter().map(|r| r.row.goodput_bps).sum();
                let squares: f64 = rows.iter().map(|r| r.row.goodput_bps * r.row.goodput_bps).sum();
                jain = Some(if squares > 0.0 { sum * sum / (rows.len() as f64 * squares) } else { 1.0 });
                bulk_flows = Some(rows.into_iter().map(|r| r.row).collect());
            }
            if let WorkloadConfig::Bulk(b) = &s.workload {
                let (tx, rx) = (host(sim, &b.from), host(sim, &b.to));
                let link = &s.links[sim_link(s, &b.from)];
                let ip_mtu = |h: usize| match s.hosts[h].tcp.mss {
                    Some(m) => (m.0 + 40).min(link.mtu.0),
                    None => link.mtu.0,
                };
                let mtu = ip_mtu(tx).min(ip_mtu(rx));
                let ts = if s.hosts[tx].tcp.timestamps && s.hosts[rx].tcp.timestamps { 12 } else { 0 };
                ceiling = Some(goodput_ceiling(link.rate, mtu, mtu - 40 - ts));
            }
        }
        WorkloadConfig::Dolly(d) => {
            // The chain's rate: the image over the time from the first write
            // to the last node's last byte on its disk.
            let first = match &sim.apps[host(sim, &d.nodes[0])] {
                App::BulkTx(tx) => tx.started,
                _ => None,
            };
            let last = match &sim.apps[host(sim, d.nodes.last().expect("validated: two nodes"))] {
                App::BulkRx(rx) => rx.last_byte,
                _ => None,
            };
            if let (Some(first), Some(last)) = (first, last) {
                duration = last.since(first);
                if duration.ps() > 0 {
                    peak = Some(d.bytes.0 as f64 * 8.0 / duration.as_secs_f64());
                }
            }
        }
        WorkloadConfig::Dsm(d) => {
            // All nodes' page transfers together, first fault to last page.
            let clients: Vec<_> = (d.nodes.iter())
                .filter_map(|n| match &sim.apps[host(sim, n)] {
                    App::RrClient(c) => Some(c),
                    _ => None,
                })
                .collect();
            let first = clients.iter().filter_map(|c| c.first).min();
            let last = clients.iter().filter_map(|c| c.last).max();
            if let (Some(first), Some(last)) = (first, last) {
                duration = last.since(first);
                let all: Vec<u64> = clients.iter().flat_map(|c| c.latencies.iter().copied()).collect();
                rr = rr_stats(&all, duration);
            }
        }
        WorkloadConfig::RequestResponse(r) => {
            if let App::RrClient(client) = &sim.apps[host(sim, &r.client)] {
                let first = client.first.expect("started");
                duration = client.last.expect("finished").since(first);
                rr = rr_stats(&client.latencies, duration);
            }
        }
        WorkloadConfig::TcpCrr(r) => {
            if let App::CrrClient(client) = &sim.apps[host(sim, &r.client)] {
                let first = client.first.expect("started");
                duration = client.last.expect("finished").since(first);
                rr = rr_stats(&client.latencies, duration);
            }
        }
        WorkloadConfig::Echo(e) => {
            if let App::Echo(client) = &sim.apps[host(sim, &e.client)] {
                let first = client.first.expect("started");
                duration = client.last.expect("finished").since(first);
                rr = rr_stats(&client.latencies, duration);
            }
        }
        WorkloadConfig::UdpRr(r) => {
            if let App::UdpRr(client) = &sim.apps[host(sim, &r.client)] {
                let first = client.first.expect("started");
                duration = client.last.expect("finished").since(first);
                rr = rr_stats(&client.latencies, duration);
            }
        }
        WorkloadConfig::UdpStream(crate::config::UdpStreamConfig { from, to, .. })
        | WorkloadConfig::PcapReplay(crate::config::PcapReplayConfig { from, to, .. }) => {
            // Receive rate over first send to last arrival; send rate over
            // first send to the sender's last datagram leaving its socket.
            if let (App::UdpTx(sender), App::UdpRx(receiver)) = (&sim.apps[host(sim, from)], &sim.apps[host(sim, to)]) {
                let start = sender.started.expect("the stream started");
                let sending = sender.finished_at().expect("the stream finished").since(start);
                duration = receiver.last.map_or(sending, |t| t.since(start));
                datagrams_sent = Some(sender.sent());
                datagrams_received = Some(receiver.received);
                if sending.ps() > 0 {
                    send_bps = Some(sender.sent_bytes() as f64 * 8.0 / sending.as_secs_f64());
                }
            }
        }
        WorkloadConfig::Netpipe(n) => {
            if let App::NpClient(client) = &sim.apps[host(sim, &n.client)] {
                let points = client.points.clone();
                latency = points.first().map(|p| p.time_s);
                peak = points.iter().map(|p| p.bytes as f64 * 8.0 / p.time_s).reduce(f64::max);
                netpipe = Some(points);
            }
            duration = finished.since(Time::ZERO);
        }
    }
    for (i, app) in sim.apps.iter().enumerate() {
        let me = &sim.hosts[i].name;
        flows.extend(app.flows(workload_peer(&s.workload, me), me, &sim.hosts));
    }
    let payload: u64 = flows.iter().map(|f| f.bytes).sum();
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

/// Transactions, rate and latency statistics (s) of a request/response run.
#[derive(Debug, Default)]
struct RrStats {
    transactions: Option<u64>,
    rate: Option<f64>,
    mean: Option<f64>,
    p50: Option<f64>,
    p90: Option<f64>,
    p99: Option<f64>,
}

/// The statistics of a request/response run that took `duration`;
/// percentile `q` is the smallest latency with at least `q` of them at or
/// below it (nearest rank).
fn rr_stats(latencies: &[u64], duration: Dur) -> RrStats {
    let mut lat = latencies.to_vec();
    lat.sort_unstable();
    let secs = |ps: u64| ps as f64 / 1e12;
    let n = lat.len();
    let rank = |q: f64| secs(lat[((n as f64 * q).ceil() as usize).clamp(1, n) - 1]);
    RrStats {
        transactions: Some(n as u64),
        rate: Some(n as f64 / duration.as_secs_f64().max(1e-18)),
        mean: Some(secs(lat.iter().sum::<u64>()) / n as f64),
        p50: Some(secs(lat[(n - 1) / 2])),
        p90: Some(rank(0.9)),
        p99: Some(rank(0.99)),
    }
}

/// The applications of a host: its members if several, else itself.
fn members(app: &App) -> Vec<&App> {
    match app {
        App::Multi(m) => m.members.iter().collect(),
        one => vec![one],
    }
}

/// A bulk flow's row and its interval.
struct BulkRow {
    row: BulkFlowRow,
    start: Time,
    end: Time,
}

/// Every bulk flow of a finished run, by flow number: its sender and
/// receiver wherever they run.
fn bulk_rows(sim: &Sim) -> Vec<BulkRow> {
    let mut senders = std::collections::BTreeMap::new();
    let mut receivers = std::collections::BTreeMap::new();
    for (h, app) in sim.apps.iter().enumerate() {
        for a in members(app) {
            match a {
                App::BulkTx(t) => {
                    senders.insert(t.flow, (h, t));
                }
                App::BulkRx(r) => {
                    receivers.insert(r.flow, (h, r));
                }
                _ => {}
            }
        }
    }
    let mut rows = Vec::new();
    for (flow, (from, snd)) in senders {
        let Some(&(to, rcv)) = receivers.get(&flow) else { continue };
        let start = snd.started.expect("a finished transfer started");
        let end = rcv.last_byte.expect("a finished transfer delivered");
        let bytes = rcv.received();
        let secs = end.since(start).as_secs_f64();
        let row = BulkFlowRow {
            flow,
            from: sim.hosts[from].name.clone(),
            to: sim.hosts[to].name.clone(),
            bytes,
            start_s: start.as_secs_f64(),
            end_s: end.as_secs_f64(),
            goodput_bps: if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 },
        };
        rows.push(BulkRow { row, start, end });
    }
    rows
}

fn host(sim: &Sim, name: &str) -> usize {
    sim.hosts.iter().position(|h| h.name == name).expect("validated")
}

fn sim_link(s: &Scenario, host: &str) -> usize {
    s.links.iter().position(|l| l.endpoints.iter().any(|e| e == host)).expect("validated: every host is on a link")
}

/// The host at the other end of `me`'s part in a two-party workload.
fn workload_peer<'a>(w: &'a WorkloadConfig, me: &str) -> &'a str {
    let other = |a: &'a String, b: &'a String| if a == me { b.as_str() } else { a.as_str() };
    match w {
        WorkloadConfig::Bulk(b) => other(&b.from, &b.to),
        WorkloadConfig::Transfers(list) => {
            list.iter().find(|b| b.from == me || b.to == me).map_or("", |b| other(&b.from, &b.to))
        }
        WorkloadConfig::RequestResponse(r) | WorkloadConfig::UdpRr(r) | WorkloadConfig::TcpCrr(r) => {
            other(&r.client, &r.server)
        }
        WorkloadConfig::Netpipe(n) => other(&n.client, &n.server),
        WorkloadConfig::Echo(e) => other(&e.client, &e.server),
        WorkloadConfig::UdpStream(u) => other(&u.from, &u.to),
        WorkloadConfig::PcapReplay(p) => other(&p.from, &p.to),
        // Receivers know their upstream node; name the image's source.
        WorkloadConfig::Dolly(d) => d.nodes[0].as_str(),
        WorkloadConfig::Dsm(d) => {
            if d.home == me {
                d.nodes.first().map_or("", String::as_str)
            } else {
                d.home.as_str()
            }
        }
    }
}
