//! Each workload as one [`Workload`]: it installs its applications, adjusts
//! the hosts it runs on, names each host's peer, and writes its own section
//! of a run's summary ([`Outcome`]). [`of`] is the registry: the one place
//! that maps a scenario's workload to its implementation.
//!
//! ```text
//!  scenario.workload ─ of() ─▶ dyn Workload ─ adjust_hosts / adjust_timing ─▶ assembly
//!                                          ─ install ─▶ one App per host ─▶ run
//!                                          ─ outcome(RunView) ─▶ the summary's workload fields
//! ```

use std::collections::BTreeMap;

use serde::Serialize;

use super::install::{
    install_bulk, install_crr, install_dolly, install_dsm, install_echo, install_netpipe, install_replay, install_rr,
    install_udp_rr, install_udp_stream,
};
use super::netpipe::NetpipePoint;
use super::{App, Host, RrClient};
use crate::config::{
    BulkConfig, DollyConfig, DsmConfig, EchoConfig, HostConfig, NetpipeConfig, PcapReplayConfig, RrConfig, Scenario,
    UdpStreamConfig, WorkloadConfig,
};
use crate::engine::{Dur, Time};
use crate::error::ConfigError;
use crate::host::timing::Timing;
use crate::link::goodput_ceiling;

/// A finished run as a workload reads it for its summary.
pub struct RunView<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// The hosts, in scenario order.
    pub hosts: &'a [Host],
    /// Their applications.
    pub apps: &'a [App],
    /// When the workload finished (or the run stopped).
    pub finished: Time,
}

impl RunView<'_> {
    /// The application of host `name`.
    pub fn app(&self, name: &str) -> &App {
        &self.apps[self.hosts.iter().position(|h| h.name == name).expect("validated")]
    }
}

/// A workload's section of a run's summary.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The interval the goodput is measured over.
    pub duration: Dur,
    /// The link's goodput ceiling, where one flow defines it (bits/s).
    pub ceiling_bps: Option<f64>,
    /// Transactions and latencies of a request/response workload.
    pub rr: RrStats,
    /// Jain's fairness index over several bulk flows.
    pub jain: Option<f64>,
    /// Every bulk flow, when there are several.
    pub bulk_flows: Option<Vec<BulkFlowRow>>,
    /// NetPIPE's curve.
    pub netpipe: Option<Vec<NetpipePoint>>,
    /// NetPIPE's smallest-block latency, seconds.
    pub latency_s: Option<f64>,
    /// The goodput the workload reports instead of payload over duration (bits/s).
    pub peak_bps: Option<f64>,
    /// A UDP stream's send rate (bits/s).
    pub send_bps: Option<f64>,
    /// Datagrams a UDP stream sent.
    pub datagrams_sent: Option<u64>,
    /// Datagrams a UDP stream's receiver took.
    pub datagrams_received: Option<u64>,
    /// The payload the workload measured, when it leaves out a warm-up
    /// (`omit`); else the payload is every byte delivered.
    pub measured_bytes: Option<u64>,
}

/// Transactions, rate and latency statistics (s) of a request/response run.
#[derive(Debug, Default)]
pub struct RrStats {
    /// Transactions completed.
    pub transactions: Option<u64>,
    /// Transactions per second.
    pub rate: Option<f64>,
    /// Mean latency.
    pub mean: Option<f64>,
    /// Median latency.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
}

/// One bulk flow of a run with several.
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

/// A workload of a scenario.
pub trait Workload {
    /// Refuse to run when something the workload needs is not loaded.
    fn ready(&self) -> Result<(), ConfigError> {
        Ok(())
    }

    /// Settings the workload imposes on its hosts' configurations.
    fn adjust_hosts(&self, _hosts: &mut [HostConfig]) {}

    /// Settings the workload imposes on timed host `name`'s profile.
    fn adjust_timing(&self, _name: &str, _timing: &mut Timing) {}

    /// Whether frames can reach a stack other than as a stack emitted them
    /// (a replayed capture, an echo node turning them round).
    fn rewrites_frames(&self) -> bool {
        false
    }

    /// The echo node and its turnaround, if the workload has one.
    fn echo_node(&self) -> Option<(&str, Dur)> {
        None
    }

    /// The host whose messages are measured one by one, and whether they
    /// travel over VIA.
    fn measured_client(&self) -> Option<(&str, bool)> {
        None
    }

    /// Create the sockets and put each host's application in `apps`.
    fn install(&self, hosts: &mut [Host], apps: &mut [App], seed: u64);

    /// The host at the other end of `me`'s part.
    fn peer(&self, me: &str) -> &str;

    /// The workload's section of the summary of a finished run.
    fn outcome(&self, run: &RunView) -> Outcome;
}

/// The workload a scenario runs.
pub fn of(cfg: &WorkloadConfig) -> Box<dyn Workload + '_> {
    match cfg {
        WorkloadConfig::Bulk(b) => Box::new(Bulk { list: std::slice::from_ref(b), single: true }),
        WorkloadConfig::Transfers(list) => Box::new(Bulk { list, single: false }),
        WorkloadConfig::RequestResponse(r) => Box::new(Rr(r, RrKind::Tcp)),
        WorkloadConfig::UdpRr(r) => Box::new(Rr(r, RrKind::Udp)),
        WorkloadConfig::TcpCrr(r) => Box::new(Rr(r, RrKind::Crr)),
        WorkloadConfig::Netpipe(n) => Box::new(n),
        WorkloadConfig::UdpStream(u) => Box::new(u),
        WorkloadConfig::PcapReplay(p) => Box::new(p),
        WorkloadConfig::Dolly(d) => Box::new(d),
        WorkloadConfig::Dsm(d) => Box::new(d),
        WorkloadConfig::Echo(e) => Box::new(e),
    }
}

/// The other of `a` and `b` from `me`'s side.
fn other<'a>(me: &str, a: &'a str, b: &'a str) -> &'a str {
    if a == me {
        b
    } else {
        a
    }
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

/// Request/response clients' transactions taken together.
struct Measured {
    /// From the first request (or the warm-up's end) to the last response.
    duration: Dur,
    /// Each transaction's round trip, ps (after the warm-up, if any).
    latencies: Vec<u64>,
    /// Whether a warm-up was left out.
    after_warm_up: bool,
}

impl Measured {
    fn stats(&self) -> RrStats {
        if self.latencies.is_empty() {
            RrStats::default()
        } else {
            rr_stats(&self.latencies, self.duration)
        }
    }
}

/// The transactions of `clients` together: after the warm-up (`omit`) if
/// one was measured, from its end; `None` before any transaction.
fn measured_transactions(clients: &[&RrClient]) -> Option<Measured> {
    let measured_from = clients.iter().filter_map(|c| c.measured.map(|m| m.0)).min();
    let first = measured_from.or(clients.iter().filter_map(|c| c.first).min())?;
    let last = clients.iter().filter_map(|c| c.last).max()?;
    let skip = |c: &RrClient| c.measured.map_or(0, |m| m.1);
    Some(Measured {
        duration: last.since(first),
        latencies: clients.iter().flat_map(|c| c.latencies[skip(c)..].iter().copied()).collect(),
        after_warm_up: measured_from.is_some(),
    })
}

/// The outcome of a client that recorded each transaction's latency
/// between its first and last.
fn transactions(first: Option<Time>, last: Option<Time>, latencies: &[u64]) -> Outcome {
    let duration = last.expect("finished").since(first.expect("started"));
    Outcome { duration, rr: rr_stats(latencies, duration), ..Outcome::default() }
}

/// Bulk TCP transfers: one (`single`, with the link's goodput ceiling) or several.
struct Bulk<'a> {
    list: &'a [BulkConfig],
    single: bool,
}

impl Workload for Bulk<'_> {
    fn install(&self, hosts: &mut [Host], apps: &mut [App], seed: u64) {
        install_bulk(self.list, hosts, apps, seed);
    }

    fn peer(&self, me: &str) -> &str {
        match (self.single, self.list) {
            (true, [b]) => other(me, &b.from, &b.to),
            _ => self.list.iter().find(|b| b.from == me || b.to == me).map_or("", |b| other(me, &b.from, &b.to)),
        }
    }

    fn outcome(&self, run: &RunView) -> Outcome {
        let rows = bulk_rows(run);
        let first = rows.iter().map(|r| r.1).min().unwrap_or(Time::ZERO);
        let last = rows.iter().map(|r| r.2).max().unwrap_or(first);
        let mut out = Outcome { duration: last.since(first), ..Outcome::default() };
        if self.list.iter().any(|b| b.omit.is_some()) {
            out.measured_bytes = Some(rows.iter().map(|r| r.0.bytes).sum());
        }
        if rows.len() > 1 {
            let sum: f64 = rows.iter().map(|r| r.0.goodput_bps).sum();
            let squares: f64 = rows.iter().map(|r| r.0.goodput_bps * r.0.goodput_bps).sum();
            out.jain = Some(if squares > 0.0 { sum * sum / (rows.len() as f64 * squares) } else { 1.0 });
            out.bulk_flows = Some(rows.into_iter().map(|r| r.0).collect());
        }
        if let (true, [b]) = (self.single, self.list) {
            // Request/response connections beside the flow (`rpc`): their
            // transactions, over the time they ran after the warm-up.
            let clients: Vec<&RrClient> = (members(run.app(&b.from)).into_iter())
                .filter_map(|a| match a {
                    App::RrClient(c) => Some(c),
                    _ => None,
                })
                .collect();
            if let Some(m) = measured_transactions(&clients) {
                out.rr = m.stats();
            }
            let s = run.scenario;
            let host = |name: &str| s.hosts.iter().find(|h| h.name == name).expect("validated");
            let (tx, rx) = (host(&b.from), host(&b.to));
            let link =
                s.links.iter().find(|l| l.endpoints.contains(&b.from)).expect("validated: every host is on a link");
            let ip_mtu = |h: &HostConfig| match h.tcp.mss {
                Some(m) => (m.0 + 40).min(link.mtu.0),
                None => link.mtu.0,
            };
            let mtu = ip_mtu(tx).min(ip_mtu(rx));
            let ts = if tx.tcp.timestamps && rx.tcp.timestamps { 12 } else { 0 };
            out.ceiling_bps = Some(goodput_ceiling(link.rate, mtu, mtu - 40 - ts));
        }
        out
    }
}

/// The applications of a host: its members if several, else itself.
fn members(app: &App) -> Vec<&App> {
    match app {
        App::Multi(m) => m.members.iter().collect(),
        one => vec![one],
    }
}

/// Every bulk flow of a finished run, by flow number, with its interval:
/// its sender and receiver wherever they run.
fn bulk_rows(run: &RunView) -> Vec<(BulkFlowRow, Time, Time)> {
    let mut senders = BTreeMap::new();
    let mut receivers = BTreeMap::new();
    for (h, app) in run.apps.iter().enumerate() {
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
        let started = snd.started.expect("a finished transfer started");
        let end = rcv.last_byte.expect("a finished transfer delivered");
        // After a warm-up (`omit`) the flow is measured from its end.
        let (start, before) = match rcv.measured {
            Some((from, bytes)) if from > started => (from.min(end), bytes),
            _ => (started, 0),
        };
        let bytes = rcv.received() - before;
        let secs = end.since(start).as_secs_f64();
        let row = BulkFlowRow {
            flow,
            from: run.hosts[from].name.clone(),
            to: run.hosts[to].name.clone(),
            bytes,
            start_s: start.as_secs_f64(),
            end_s: end.as_secs_f64(),
            goodput_bps: if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 },
        };
        rows.push((row, start, end));
    }
    rows
}

/// Which transport a request/response workload uses.
#[derive(Clone, Copy)]
enum RrKind {
    /// One TCP connection for all transactions.
    Tcp,
    /// UDP datagrams.
    Udp,
    /// A new TCP connection per transaction.
    Crr,
}

/// A request/response workload.
struct Rr<'a>(&'a RrConfig, RrKind);

impl Workload for Rr<'_> {
    fn install(&self, hosts: &mut [Host], apps: &mut [App], seed: u64) {
        match self.1 {
            RrKind::Tcp => install_rr(self.0, hosts, apps, seed),
            RrKind::Udp => install_udp_rr(self.0, hosts, apps, seed),
            RrKind::Crr => install_crr(self.0, hosts, apps, seed),
        }
    }

    fn peer(&self, me: &str) -> &str {
        other(me, &self.0.client, &self.0.server)
    }

    fn outcome(&self, run: &RunView) -> Outcome {
        match (self.1, run.app(&self.0.client)) {
            (RrKind::Tcp, App::RrClient(c)) => transactions(c.first, c.last, &c.latencies),
            (RrKind::Udp, App::UdpRr(c)) => transactions(c.first, c.last, &c.latencies),
            (RrKind::Crr, App::CrrClient(c)) => transactions(c.first, c.last, &c.latencies),
            _ => Outcome::default(),
        }
    }
}

impl Workload for &NetpipeConfig {
    fn adjust_hosts(&self, hosts: &mut [HostConfig]) {
        // NetPIPE's `-b`: both ends' socket buffers.
        if let Some(b) = self.buffer {
            for h in hosts.iter_mut().filter(|h| h.name == self.client || h.name == self.server) {
                h.tcp.rx_buffer = b;
                h.tcp.tx_buffer = b;
                h.udp.rx_buffer = b;
                h.udp.tx_buffer = b;
            }
        }
    }

    fn adjust_timing(&self, name: &str, timing: &mut Timing) {
        if name == self.client || name == self.server {
            timing.memory.cold_cache |= self.invalidate_cache;
        }
    }

    fn install(&self, hosts: &mut [Host], apps: &mut [App], seed: u64) {
        install_netpipe(self, hosts, apps, seed);
    }

    fn peer(&self, me: &str) -> &str {
        other(me, &self.client, &self.server)
    }

    fn outcome(&self, run: &RunView) -> Outcome {
        let mut out = Outcome { duration: run.finished.since(Time::ZERO), ..Outcome::default() };
        if let App::NpClient(client) = run.app(&self.client) {
            let points = client.points.clone();
            out.latency_s = points.first().map(|p| p.time_s);
            out.peak_bps = points.iter().map(|p| p.bytes as f64 * 8.0 / p.time_s).reduce(f64::max);
            out.netpipe = Some(points);
        }
        out
    }
}

/// A UDP stream's outcome: receive rate over first send to last arrival;
/// send rate over first send to the sender's last datagram leaving its socket.
fn udp_stream(run: &RunView, from: &str, to: &str) -> Outcome {
    let mut out = Outcome::default();
    if let (App::UdpTx(sender), App::UdpRx(receiver)) = (run.app(from), run.app(to)) {
        let start = sender.started.expect("the stream started");
        let sending = sender.finished_at().expect("the stream finished").since(start);
        out.duration = receiver.last.map_or(sending, |t| t.since(start));
        out.datagrams_sent = Some(sender.sent());
        out.datagrams_received = Some(receiver.received);
        if sending.ps() > 0 {
            out.send_bps = Some(sender.sent_bytes() as f64 * 8.0 / sending.as_secs_f64());
        }
    }
    out
}

impl Workload for &UdpStreamConfig {
    fn install(&self, hosts: &mut [Host], apps: &mut [App], seed: u64) {
        install_udp_stream(self, hosts, apps, seed);
    }

    fn peer(&self, me: &str) -> &str {
        other(me, &self.from, &self.to)
    }

    fn outcome(&self, run: &RunView) -> Outcome {
        udp_stream(run, &self.from, &self.to)
    }
}

impl Workload for &PcapReplayConfig {
    fn ready(&self) -> Result<(), ConfigError> {
        match self.schedule {
            Some(_) => Ok(()),
            None => Err(ConfigError::new(
                "workload.pcap_replay.file",
                "the capture is not loaded: resolve the scenario first (api::run_scenario loads it)",
            )),
        }
    }

    fn rewrites_frames(&self) -> bool {
        true
    }

    fn install(&self, hosts: &mut [Host], apps: &mut [App], seed: u64) {
        install_replay(self, hosts, apps, seed);
    }

    fn peer(&self, me: &str) -> &str {
        other(me, &self.from, &self.to)
    }

    fn outcome(&self, run: &RunView) -> Outcome {
        udp_stream(run, &self.from, &self.to)
    }
}

impl Workload for &DollyConfig {
    fn install(&self, hosts: &mut [Host], apps: &mut [App], seed: u64) {
        install_dolly(self, hosts, apps, seed);
    }

    /// Receivers know their upstream node; name the image's source.
    fn peer(&self, _me: &str) -> &str {
        self.nodes[0].as_str()
    }

    /// The chain's rate: the image over the time from the first write to
    /// the last node's last byte on its disk.
    fn outcome(&self, run: &RunView) -> Outcome {
        let mut out = Outcome::default();
        let first = match run.app(&self.nodes[0]) {
            App::BulkTx(tx) => tx.started,
            _ => None,
        };
        let last = match run.app(self.nodes.last().expect("validated: two nodes")) {
            App::BulkRx(rx) => rx.last_byte,
            _ => None,
        };
        if let (Some(first), Some(last)) = (first, last) {
            out.duration = last.since(first);
            if out.duration.ps() > 0 {
                out.peak_bps = Some(self.bytes.0 as f64 * 8.0 / out.duration.as_secs_f64());
            }
        }
        out
    }
}

impl Workload for &DsmConfig {
    fn install(&self, hosts: &mut [Host], apps: &mut [App], seed: u64) {
        install_dsm(self, hosts, apps, seed);
    }

    fn peer(&self, me: &str) -> &str {
        if self.home == me {
            self.nodes.first().map_or("", String::as_str)
        } else {
            self.home.as_str()
        }
    }

    /// All nodes' page transfers together, first fault to last page; after
    /// a warm-up (`omit`), those completed after it, from its end.
    fn outcome(&self, run: &RunView) -> Outcome {
        let mut out = Outcome::default();
        let clients: Vec<_> = (self.nodes.iter())
            .filter_map(|n| match run.app(n) {
                App::RrClient(c) => Some(c),
                _ => None,
            })
            .collect();
        if let Some(m) = measured_transactions(&clients) {
            out.duration = m.duration;
            if m.after_warm_up {
                // The payload both ways of the transactions measured.
                out.measured_bytes = Some(m.latencies.len() as u64 * (self.request.0 + self.page_size.0));
            }
            out.rr = m.stats();
        }
        out
    }
}

impl Workload for &EchoConfig {
    fn rewrites_frames(&self) -> bool {
        true
    }

    fn echo_node(&self) -> Option<(&str, Dur)> {
        Some((&self.server, self.delay.dur()))
    }

    fn measured_client(&self) -> Option<(&str, bool)> {
        Some((&self.client, self.protocol == crate::config::MessageProtocol::Via))
    }

    fn install(&self, hosts: &mut [Host], apps: &mut [App], seed: u64) {
        install_echo(self, hosts, apps, seed);
    }

    fn peer(&self, me: &str) -> &str {
        other(me, &self.client, &self.server)
    }

    fn outcome(&self, run: &RunView) -> Outcome {
        match run.app(&self.client) {
            App::Echo(c) => transactions(c.first, c.last, &c.latencies),
            _ => Outcome::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(workload: &str) -> Scenario {
        let hosts = "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[hosts]]\nname = \"c\"\n\
                     [[switches]]\nname = \"s\"\n[[links]]\nendpoints = [\"a\", \"s\"]\n\
                     [[links]]\nendpoints = [\"b\", \"s\"]\n[[links]]\nendpoints = [\"c\", \"s\"]\n";
        crate::config::parse(&format!("{hosts}{workload}")).expect("a valid scenario")
    }

    #[test]
    fn each_side_of_a_two_party_workload_names_the_other() {
        let s = scenario("[workload.request_response]\nclient = \"a\"\nserver = \"b\"\n");
        let w = of(&s.workload);
        assert_eq!((w.peer("a"), w.peer("b")), ("b", "a"));
        let s = scenario(
            "[[workload.transfers]]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MiB\"\n\
             [[workload.transfers]]\nfrom = \"c\"\nto = \"b\"\nbytes = \"1MiB\"\nport = 6000\n",
        );
        let w = of(&s.workload);
        assert_eq!((w.peer("a"), w.peer("c")), ("b", "b"));
        assert_eq!(w.peer("nobody"), "");
    }

    #[test]
    fn netpipe_sets_both_ends_socket_buffers_and_no_other_host() {
        let s = scenario("[workload.netpipe]\nclient = \"a\"\nserver = \"b\"\nbuffer = \"64KiB\"\n");
        let mut hosts = s.hosts.clone();
        of(&s.workload).adjust_hosts(&mut hosts);
        assert_eq!((hosts[0].tcp.rx_buffer.0, hosts[1].udp.tx_buffer.0), (65536, 65536));
        assert_eq!(hosts[2].tcp.rx_buffer.0, s.hosts[2].tcp.rx_buffer.0);
        assert_ne!(hosts[2].tcp.rx_buffer.0, 65536);
    }

    #[test]
    fn only_an_echo_has_an_echo_node_and_only_a_replay_or_an_echo_rewrites_frames() {
        let echo = scenario("[workload.echo]\nclient = \"a\"\nserver = \"b\"\nprotocol = \"via\"\n");
        let w = of(&echo.workload);
        assert_eq!(w.echo_node().map(|(n, _)| n), Some("b"));
        assert_eq!(w.measured_client(), Some(("a", true)));
        assert!(w.rewrites_frames());
        let bulk = scenario("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MiB\"\n");
        let w = of(&bulk.workload);
        assert!(w.echo_node().is_none() && w.measured_client().is_none() && !w.rewrites_frames());
    }

    #[test]
    fn a_replay_whose_capture_is_not_loaded_is_not_ready() {
        let s = scenario("[workload.pcap_replay]\nfrom = \"a\"\nto = \"b\"\nfile = \"x.pcap\"\n");
        let err = of(&s.workload).ready().expect_err("not loaded");
        assert_eq!(err.path, "workload.pcap_replay.file");
    }

    #[test]
    fn latency_percentiles_are_nearest_rank() {
        let ps = |us: u64| us * 1_000_000;
        let lat: Vec<u64> = (1..=10).rev().map(ps).collect();
        let r = rr_stats(&lat, Dur(ps(100)));
        assert_eq!(r.transactions, Some(10));
        assert_eq!(r.rate, Some(100_000.0));
        assert_eq!((r.p50, r.p90, r.p99), (Some(5e-6), Some(9e-6), Some(10e-6)));
        assert!((r.mean.unwrap() - 5.5e-6).abs() < 1e-18);
    }
}
