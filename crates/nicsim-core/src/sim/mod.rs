//! Assembly and execution of one run.
//!
//! Assembly turns a validated [`Scenario`] into hosts, links and
//! applications addressed by index; execution pops events in (time,
//! priority, sequence) order until the workload finishes, the time limit
//! passes, or nothing is left to do.
//!
//! ```text
//!   host a                      link 0                      host b
//!  [app]─[smoltcp]─[dev] ─▶ queue ─▶ serialiser ─▶ propagation ─▶ [dev]─[smoltcp]─[app]
//!                        ◀─ propagation ◀─ serialiser ◀─ queue ◀─
//! ```
//!
//! Hosts may instead join through store-and-forward switches: a frame that
//! has crossed a link into a switch waits the switch's latency and is queued
//! on the link towards its destination MAC address (broadcasts on every other
//! link). Nodes are numbered hosts first, then switches.

mod backlog;
mod cost;
mod echo;
mod measure;
mod nic;
mod report;
mod timed;

pub use crate::nic::device::NicStats;
pub use crate::nic::offload::nic_lro::{NicCoreStats, NicLroReport};
pub use crate::nic::offload::specdefrag::ZeroCopyStats;
pub use echo::{swap_headers, EchoReport, MessageRow, MessageSide, PathMean};
pub use report::{CoreReport, MessageReport, TimingReport};
pub use timed::OffloadStats;

use std::path::Path;

use crate::config::Scenario;
use crate::engine::rng::component_rng;
use crate::engine::{Dur, Priority, Scheduler, Time};
use crate::error::Error;
use crate::host::Host;
use crate::link::Channel;
use crate::nic::device::NicEvent;
use crate::nic::offload::{AnyRxOffload, Setup};
use crate::probe::observer::{self, Probes};
use crate::probe::pcap::Trace;
use crate::probe::wire::TcpMonitor;
use crate::workload::{self, App};

/// What happens at an instant: one variant per component family, each
/// carrying the component's own event.
#[derive(Debug)]
enum Event {
    /// Run host `0`'s stack and application.
    Poll(usize),
    /// Something happens on the wire.
    Wire(WireEvent),
    /// Core `1` of timed host `0` finished the job of generation `2`.
    CpuDone(usize, usize, u64),
    /// Timed host `0`'s NIC.
    Nic(usize, NicEvent),
    /// Timed host `0`'s communication processor notices work (offload).
    CommNotice(usize, timed::Notice),
    /// Echo node `0` returns a frame.
    Echo(usize, Vec<u8>),
    /// Timed host `0`'s offload engine's own timer or message.
    Offload(usize, crate::nic::offload::OffloadEvent),
}

/// Events of links and switches.
#[derive(Debug)]
enum WireEvent {
    /// The frame on the wire of link `0`, direction `1`, finished serialising.
    TxDone(usize, usize),
    /// A frame reaches host `0`'s device.
    Arrive(usize, Vec<u8>),
    /// A frame has arrived whole at switch `0` through its port `1` and is
    /// ready to be forwarded.
    Forward(usize, usize, Vec<u8>),
}

/// One full-duplex link: channel 0 carries endpoint 0 → 1, channel 1 the reverse.
pub struct Link {
    /// Display name, `a-b`.
    pub name: String,
    /// Node indices of the two ends (hosts, then switches).
    pub ends: [usize; 2],
    /// For an end that is a switch, the switch's port number of this link.
    switch_port: [usize; 2],
    /// The two directions.
    pub chans: [Channel; 2],
    /// TCP analysis per direction.
    pub monitors: [TcpMonitor; 2],
    trace: Option<Trace>,
}

/// A store-and-forward Ethernet switch with a static MAC table.
pub struct Switch {
    /// Its name.
    pub name: String,
    latency: Dur,
    /// Ports: (link, which end of it the switch is).
    ports: Vec<(usize, usize)>,
    /// Port towards each host's MAC address.
    table: std::collections::HashMap<[u8; 6], usize>,
    /// Counters.
    pub stats: SwitchStats,
}

/// Counters of a switch.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SwitchStats {
    /// Frames that arrived whole.
    pub received: u64,
    /// Copies sent to one port by MAC address.
    pub forwarded: u64,
    /// Frames sent to every other port (broadcast, multicast or unknown address).
    pub flooded: u64,
    /// Copies dropped because the outgoing link's queue was full.
    pub queue_drops: u64,
}

/// Where a host attaches: link index and which end it is.
#[derive(Debug, Clone, Copy)]
struct Port {
    link: usize,
    end: usize,
}

/// A run being simulated.
pub struct Sim {
    sched: Scheduler<Event>,
    /// Hosts by index (scenario order).
    pub hosts: Vec<Host>,
    ports: Vec<Port>,
    /// Timing state of hosts with a profile (None: ideal host).
    timed: Vec<Option<timed::Timed>>,
    /// Links by index.
    pub links: Vec<Link>,
    /// Switches by index (node `hosts.len() + index`).
    pub switches: Vec<Switch>,
    /// Application per host.
    pub apps: Vec<App>,
    /// Times at which a poll of each host is already scheduled (a few at most).
    polls: Vec<Vec<Time>>,
    /// When the workload finished, if it did.
    pub finished_at: Option<Time>,
    /// The seed of this run.
    pub seed: u64,
    /// User probes.
    pub probes: Probes,
    /// Frames (copies included) that reached each host's device from its link.
    arrived: Vec<u64>,
    /// Frames (copies included) that reached a switch from link `l`
    /// direction `d` (index `2l + d`).
    switched_in: Vec<u64>,
    /// Called every 65 536 events with how far the run has got.
    pub progress: Option<ProgressHook>,
    /// The echo node and its turnaround (echo workload).
    echo: Option<(usize, Dur)>,
}

/// The hosts' configurations with the workload's own settings applied
/// (NetPIPE's `-b` socket buffer size).
fn workload_hosts(s: &Scenario) -> Vec<crate::config::HostConfig> {
    let mut hosts = s.hosts.clone();
    if let crate::config::WorkloadConfig::Netpipe(n) = &s.workload {
        if let Some(b) = n.buffer {
            for h in hosts.iter_mut().filter(|h| h.name == n.client || h.name == n.server) {
                h.tcp.rx_buffer = b;
                h.tcp.tx_buffer = b;
                h.udp.rx_buffer = b;
                h.udp.tx_buffer = b;
            }
        }
    }
    hosts
}

/// How far a run has got, for progress displays. Reading it changes nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Simulated time, seconds.
    pub sim_time_s: f64,
    /// Events executed.
    pub events: u64,
    /// Units of the workload done (NetPIPE block sizes, transactions, bytes, datagrams).
    pub done: u64,
    /// Units in all, when known.
    pub total: Option<u64>,
}

/// A progress callback (see [`Sim::progress`]).
pub type ProgressHook = Box<dyn FnMut(&Progress)>;

/// Events between two progress reports.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Safety bound on back-to-back stack/application rounds within one poll.
const MAX_ROUNDS_PER_POLL: usize = 64;

impl Sim {
    /// Assemble a validated scenario whose files are loaded (a pcap
    /// replay's schedule: `api::resolve_toml` and `api::run_scenario` load
    /// it, relative to the scenario file). Assembly reads and writes no
    /// file; [`Sim::record_traces`] opens the link traces.
    pub fn build(s: &Scenario, seed: u64) -> Result<Sim, Error> {
        if matches!(&s.workload, crate::config::WorkloadConfig::PcapReplay(p) if p.schedule.is_none()) {
            let reason = "the capture is not loaded: resolve the scenario first (api::run_scenario loads it)";
            return Err(crate::error::ConfigError::new("workload.pcap_replay.file", reason).into());
        }
        let n = s.hosts.len();
        let index = |name: &str| {
            (s.hosts.iter().position(|h| h.name == name))
                .or_else(|| s.switches.iter().position(|w| w.name == name).map(|k| n + k))
                .expect("validated")
        };
        let mut ports = vec![Port { link: usize::MAX, end: 0 }; n];
        let mut mtus = vec![0usize; n];
        for (i, l) in s.links.iter().enumerate() {
            for (end, name) in l.endpoints.iter().enumerate() {
                let h = index(name);
                if h < n {
                    ports[h] = Port { link: i, end };
                    mtus[h] = l.mtu.0 as usize;
                }
            }
        }
        let host_cfgs = workload_hosts(s);
        let mut timings = Vec::with_capacity(s.hosts.len());
        for (i, h) in s.hosts.iter().enumerate() {
            timings.push(h.timing(i)?);
        }
        if let crate::config::WorkloadConfig::Netpipe(n) = &s.workload {
            for name in [&n.client, &n.server] {
                if let Some(t) = timings[index(name)].as_mut() {
                    t.memory.cold_cache |= n.invalidate_cache;
                }
            }
        }
        let tso = |i: usize| timings[i].as_ref().is_some_and(|t: &crate::host::timing::Timing| t.nic.tso);
        // Driver-level fragmentation gives the stack a virtual interface that
        // carries a page of TCP data per packet (smoltcp reads the MTU once,
        // when the interface is made, and advertises its MSS from it).
        let tcp_header = |i: usize| 20 + if s.hosts[i].tcp.timestamps { 12 } else { 0 };
        let stack_mtu = |i: usize| {
            let zc = timings[i]
                .as_ref()
                .and_then(|t| crate::nic::offload::specdefrag::ZeroCopy::virtual_mtu(&t.zero_copy, tcp_header(i)));
            zc.unwrap_or(mtus[i])
        };
        // Frames reach a stack exactly as another stack emitted them unless a
        // link damages them, a capture is replayed, an echo node turns them
        // round, or the host's own NIC or driver rebuilds them.
        let untouched = s.links.iter().all(|l| l.impairments.corrupt == 0.0)
            && !matches!(
                s.workload,
                crate::config::WorkloadConfig::PcapReplay(_) | crate::config::WorkloadConfig::Echo(_)
            );
        let pristine = |i: usize| {
            untouched
                && !timings[i].as_ref().is_some_and(|t| {
                    t.nic.lro != crate::host::timing::LroMode::Off || t.zero_copy.fragment || t.zero_copy.speculate
                })
        };
        let mut hosts: Vec<Host> = (host_cfgs.iter().enumerate())
            .map(|(i, h)| {
                Host::new(&h.stack(i).expect("validated scenario"), i, stack_mtu(i), seed, tso(i), pristine(i))
            })
            .collect();
        let mut links = Vec::with_capacity(s.links.len());
        for (i, l) in s.links.iter().enumerate() {
            let ends = [index(&l.endpoints[0]), index(&l.endpoints[1])];
            let chan = |d: usize| {
                let path = format!("links[{i}].{}->{}", l.endpoints[d], l.endpoints[1 - d]);
                Channel::new(
                    l.rate,
                    l.propagation.dur(),
                    l.queue as usize,
                    l.backpressure,
                    l.impairments.clone(),
                    component_rng(seed, &path),
                )
            };
            let name = format!("{}-{}", l.endpoints[0], l.endpoints[1]);
            links.push(Link {
                name,
                ends,
                switch_port: [usize::MAX; 2],
                chans: [chan(0), chan(1)],
                monitors: Default::default(),
                trace: None,
            });
        }
        let switches = build_switches(s, &hosts, &mut links);
        let apps = workload::install(&s.workload, &mut hosts, seed);
        let bin = s.run.sample_interval.dur();
        let timed = (timings.into_iter().enumerate())
            .map(|(i, t)| {
                t.map(|t| {
                    let host = Setup { timing: &t, link_mtu: mtus[i], tcp_header: tcp_header(i), mac: hosts[i].mac.0 };
                    let rx = AnyRxOffload::for_host(&host);
                    timed::Timed::new(t, rx, bin)
                })
            })
            .collect();
        let mut sim = Sim {
            sched: Scheduler::new(),
            hosts,
            ports,
            timed,
            links,
            switches,
            apps,
            polls: vec![Vec::new(); n],
            finished_at: None,
            seed,
            probes: Probes::default(),
            arrived: vec![0; n],
            switched_in: vec![0; 2 * s.links.len()],
            progress: None,
            echo: None,
        };
        for h in 0..n {
            if sim.timed[h].is_some() {
                let name = sim.hosts[h].name.clone();
                sim.with_offload(h, Time::ZERO, |e, cx| e.start(cx, seed, &name))?;
            }
        }
        if let crate::config::WorkloadConfig::Echo(e) = &s.workload {
            sim.echo = Some((index(&e.server), e.delay.dur()));
            if let Some(t) = sim.timed[index(&e.client)].as_mut() {
                t.measure.tx_irq_on_send = true;
                t.measure.via = e.protocol == crate::config::MessageProtocol::Via;
            }
        }
        for h in 0..n {
            sim.request_poll(h, Time::ZERO);
        }
        Ok(sim)
    }

    /// The current simulated time.
    pub fn now(&self) -> Time {
        self.sched.now()
    }

    /// Events executed so far.
    pub fn events(&self) -> u64 {
        self.sched.executed()
    }

    /// Run until the workload finishes (then `drain` longer, so closing
    /// handshakes reach the traces), `limit` passes, or no event is left.
    pub fn run(&mut self, limit: Time, drain: Dur) -> Result<(), Error> {
        let mut stop = limit;
        // An application last seen unfinished: asked first, so the check
        // after every event usually costs one call.
        let mut waiting = 0;
        while let Some(t) = self.sched.peek_time() {
            if t > stop {
                break;
            }
            let (now, ev) = self.sched.pop().expect("peeked");
            self.dispatch(now, ev)?;
            if self.probes.stop_requested() {
                return Err(Error::Simulation(format!("a probe stopped the run at {now}")));
            }
            if self.progress.is_some() && self.sched.executed().is_multiple_of(PROGRESS_EVERY) {
                self.report_progress(now);
            }
            if self.finished_at.is_none() && self.all_done(now, &mut waiting) {
                self.finished_at = Some(now);
                stop = stop.min(now + drain);
            }
        }
        if cfg!(debug_assertions) {
            if let Err(e) = self.check_invariants() {
                panic!("simulator invariant violated at {}: {e}", self.now());
            }
        }
        Ok(())
    }

    /// Whether every application is done at `now`; `waiting` is the index
    /// of one found unfinished before, checked first (the answer is the same
    /// whichever order the applications are asked in).
    fn all_done(&self, now: Time, waiting: &mut usize) -> bool {
        if self.apps.get(*waiting).is_some_and(|a| !a.is_done(now)) {
            return false;
        }
        match self.apps.iter().position(|a| !a.is_done(now)) {
            Some(i) => {
                *waiting = i;
                false
            }
            None => true,
        }
    }

    /// Check the whole run's bookkeeping (debug builds do at the end of
    /// every [`Sim::run`]): the event queue; every link direction, where each
    /// frame offered is dropped, queued, on the wire, lost, or delivered, and
    /// each delivered copy has reached the far host or is still propagating
    /// (an `Arrive` event in the queue); each host's pending polls; each
    /// timed NIC's rings. Returns the first violation, naming where.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.sched.check_invariants().map_err(|e| format!("scheduler: {e}"))?;
        for (l, link) in self.links.iter().enumerate() {
            for (d, chan) in link.chans.iter().enumerate() {
                let at = format!("links[{l}] direction {d}");
                chan.check_invariants().map_err(|e| format!("{at}: {e}"))?;
                let dst = link.ends[1 - d];
                let copies = chan.stats.delivered + chan.stats.duplicated;
                let n = self.hosts.len();
                let port = link.switch_port[1 - d];
                let propagating = self.sched.count_pending(|e| match e {
                    Event::Wire(WireEvent::Arrive(h, _)) => *h == dst,
                    Event::Wire(WireEvent::Forward(w, p, _)) => n + *w == dst && *p == port,
                    _ => false,
                }) as u64;
                let arrived = if dst < n { self.arrived[dst] } else { self.switched_in[2 * l + d] };
                if copies != arrived + propagating {
                    return Err(format!(
                        "{at}: {copies} frames left the wire but {arrived} arrived and {propagating} are on their way"
                    ));
                }
            }
        }
        for (h, polls) in self.polls.iter().enumerate() {
            let pending = self.sched.count_pending(|e| matches!(e, Event::Poll(p) if *p == h));
            if pending != polls.len() {
                return Err(format!("host {h}: {} polls booked but {pending} queued", polls.len()));
            }
        }
        for (h, t) in self.timed.iter().enumerate() {
            if let Some(t) = t {
                t.check_invariants().map_err(|e| format!("host {h} NIC: {e}"))?;
            }
        }
        Ok(())
    }

    /// How far the run has got at `now`.
    pub fn progress_at(&self, now: Time) -> Progress {
        let (mut done, mut total) = (0, Some(0));
        for (d, t) in self.apps.iter().filter_map(|a| a.progress()) {
            done += d;
            total = total.zip(t).map(|(a, b)| a + b);
        }
        Progress { sim_time_s: now.as_secs_f64(), events: self.sched.executed(), done, total: total.filter(|&t| t > 0) }
    }

    fn report_progress(&mut self, now: Time) {
        let info = self.progress_at(now);
        if let Some(hook) = self.progress.as_mut() {
            hook(&info);
        }
    }

    fn dispatch(&mut self, now: Time, ev: Event) -> Result<(), Error> {
        match ev {
            Event::Poll(h) => {
                self.polls[h].retain(|&t| t != now);
                if self.timed[h].is_some() {
                    let ctx = self.irq_ctx(h);
                    self.timed_poll(h, now, ctx, false);
                    Ok(())
                } else {
                    self.step_host(h, now)
                }
            }
            Event::Wire(ev) => self.on_wire(ev, now),
            Event::CpuDone(h, core, generation) => self.on_cpu_done(h, core, generation, now),
            Event::Nic(h, ev) => self.on_nic_event(h, ev, now),
            Event::CommNotice(h, notice) => {
                self.on_comm_notice(h, notice, now);
                Ok(())
            }
            Event::Echo(h, frame) => self.on_echo(h, frame, now),
            Event::Offload(h, ev) => self.on_offload_event(h, ev, now),
        }
    }

    /// A link or switch event.
    fn on_wire(&mut self, ev: WireEvent, now: Time) -> Result<(), Error> {
        match ev {
            WireEvent::Arrive(h, frame) => {
                self.arrived[h] += 1;
                let Some(frame) = self.echo_arrive(h, frame, now) else { return Ok(()) };
                if self.timed[h].is_some() {
                    self.nic_arrive(h, frame, now);
                } else {
                    self.note_deliver(h, frame.len(), now);
                    if crate::workload::via::is_via(&frame) {
                        self.via_deliver(h, &frame, now)?;
                    } else {
                        self.hosts[h].dev.rx.push_back(frame);
                    }
                    self.request_poll(h, now);
                }
                Ok(())
            }
            WireEvent::TxDone(l, d) => {
                let n = self.hosts.len();
                let link = &mut self.links[l];
                let dst = link.ends[1 - d];
                let prop = link.chans[d].propagation;
                for delivery in link.chans[d].finish() {
                    let at = now + prop + delivery.extra;
                    if dst < n {
                        self.sched.at(at, Priority::WIRE, Event::Wire(WireEvent::Arrive(dst, delivery.frame)));
                    } else {
                        let (w, port) = (dst - n, link.switch_port[1 - d]);
                        let ev = Event::Wire(WireEvent::Forward(w, port, delivery.frame));
                        self.sched.at(at + self.switches[w].latency, Priority::WIRE, ev);
                    }
                }
                self.start_wire(l, d, now)?;
                let src = self.links[l].ends[d];
                if src >= n {
                    // A switch: its queue feeds the wire by itself.
                } else if self.timed[src].is_some() {
                    self.nic_tx_kick(src, now);
                } else if self.hosts[src].dev.tx_blocked {
                    self.request_poll(src, now);
                }
                Ok(())
            }
            WireEvent::Forward(w, port, frame) => self.forward(w, port, frame, now),
        }
    }

    /// A NIC event of timed host `h`.
    fn on_nic_event(&mut self, h: usize, ev: NicEvent, now: Time) -> Result<(), Error> {
        match ev {
            NicEvent::TxDma => self.on_nic_tx_dma(h, now),
            NicEvent::RxDma => {
                self.on_nic_rx_dma(h, now);
                Ok(())
            }
            NicEvent::Irq => {
                self.on_nic_irq_timer(h, now);
                Ok(())
            }
        }
    }

    /// Name of node `v` (a host, or a switch after the hosts).
    pub fn node_name(&self, v: usize) -> &str {
        match v.checked_sub(self.hosts.len()) {
            None => &self.hosts[v].name,
            Some(w) => &self.switches[w].name,
        }
    }

    /// Switch `w` forwards a frame that came in through `ingress`: to the
    /// port of its destination address, or to every other port.
    fn forward(&mut self, w: usize, ingress: usize, frame: Vec<u8>, now: Time) -> Result<(), Error> {
        let (l, e) = self.switches[w].ports[ingress];
        self.switched_in[2 * l + 1 - e] += 1;
        let sw = &mut self.switches[w];
        sw.stats.received += 1;
        let Some(dst) = frame.get(..6) else { return Ok(()) };
        let dst: [u8; 6] = dst.try_into().expect("six bytes");
        let known = if dst[0] & 1 == 0 { sw.table.get(&dst).copied() } else { None };
        let out: Vec<usize> = match known {
            Some(p) if p == ingress => Vec::new(),
            Some(p) => {
                sw.stats.forwarded += 1;
                vec![p]
            }
            None => {
                sw.stats.flooded += 1;
                (0..sw.ports.len()).filter(|&p| p != ingress).collect()
            }
        };
        let mut frame = Some(frame);
        for (i, &p) in out.iter().enumerate() {
            let (l, e) = self.switches[w].ports[p];
            let copy = if i + 1 == out.len() { frame.take() } else { frame.clone() };
            if !self.links[l].chans[e].enqueue(copy.expect("a frame for each port")) {
                self.switches[w].stats.queue_drops += 1;
            }
            self.start_wire(l, e, now)?;
        }
        Ok(())
    }

    /// Start serialising the next frame of link `l` direction `d`, if idle.
    fn start_wire(&mut self, l: usize, d: usize, now: Time) -> Result<(), Error> {
        let link = &mut self.links[l];
        if let Some((time, frame)) = link.chans[d].start() {
            link.monitors[d].observe(frame);
            if self.probes.wants(observer::FRAME) {
                let fields = [("link", l as f64), ("direction", d as f64), ("bytes", frame.len() as f64)];
                let n = self.hosts.len();
                let name = match link.ends[d].checked_sub(n) {
                    None => &self.hosts[link.ends[d]].name,
                    Some(w) => &self.switches[w].name,
                };
                self.probes.emit(observer::FRAME, now, link.ends[d], name, &fields);
            }
            if let Some(trace) = link.trace.as_mut() {
                trace.record(now, frame)?;
            }
            self.sched.at(now + time, Priority::WIRE, Event::Wire(WireEvent::TxDone(l, d)));
        }
        Ok(())
    }

    /// Poll host `h`'s stack, run its application, push emitted frames onto
    /// its link, and schedule the next poll the stack asks for.
    fn step_host(&mut self, h: usize, now: Time) -> Result<(), Error> {
        let Port { link: l, end: d } = self.ports[h];
        for _ in 0..MAX_ROUNDS_PER_POLL {
            let chan = &self.links[l].chans[d];
            let credit = if chan.backpressure { chan.free_slots() } else { usize::MAX };
            self.hosts[h].poll(now, credit);
            let mut progressed = false;
            while let Some(op) = self.apps[h].next_op(now, &mut self.hosts[h]) {
                self.perform(h, op, now)?;
                progressed = true;
            }
            let frames = std::mem::take(&mut self.hosts[h].dev.tx);
            let sent = !frames.is_empty();
            for frame in frames {
                self.links[l].chans[d].enqueue(frame.bytes);
            }
            self.start_wire(l, d, now)?;
            if !progressed && !sent {
                break;
            }
        }
        self.schedule_stack_timer(h, now);
        Ok(())
    }

    /// Schedule host `h`'s next poll at the stack's own deadline, or when
    /// its application wants to run (a paced sender's next slot).
    fn schedule_stack_timer(&mut self, h: usize, now: Time) {
        if let Some(t) = self.apps[h].wake_at().filter(|&t| t > now) {
            self.request_poll(h, t);
        }
        let host = &mut self.hosts[h];
        match host.poll_at(now) {
            Some(t) if t > now => self.request_poll(h, t),
            // Due now but nothing moved: either the transmit path is full (its
            // progress will wake the host) or the deadline is inside the current
            // microsecond, which smoltcp cannot resolve: look again at the next one.
            Some(_) if !host.dev.tx_blocked => {
                let us = crate::engine::time::PS_PER_US;
                self.request_poll(h, Time((now.ps() / us + 1) * us))
            }
            _ => {}
        }
    }

    /// Carry out application call `op` on host `h` at `now`.
    fn perform(&mut self, h: usize, op: crate::workload::Op, now: Time) -> Result<(), Error> {
        self.apps[h]
            .perform(op, now, &mut self.hosts[h])
            .map_err(|e| Error::Simulation(format!("host {} at {now}: {e}", self.hosts[h].name)))?;
        if self.probes.wants(observer::CALL) {
            let kind = match op {
                crate::workload::Op::Write { .. }
                | crate::workload::Op::SendTo { .. }
                | crate::workload::Op::ViaSend { .. } => 0.0,
                crate::workload::Op::Read { .. }
                | crate::workload::Op::RecvFrom { .. }
                | crate::workload::Op::ViaRecv { .. } => 1.0,
                crate::workload::Op::Close { .. } => 2.0,
                crate::workload::Op::Connect { .. } => 3.0,
            };
            let fields = [("op", kind), ("bytes", op.bytes() as f64)];
            self.probes.emit(observer::CALL, now, h, &self.hosts[h].name, &fields);
        }
        Ok(())
    }

    /// A frame of `bytes` reaches host `h`'s stack.
    fn note_deliver(&mut self, h: usize, bytes: usize, now: Time) {
        if self.probes.wants(observer::DELIVER) {
            self.probes.emit(observer::DELIVER, now, h, &self.hosts[h].name, &[("bytes", bytes as f64)]);
        }
    }

    /// Make sure host `h` is polled no later than `at`.
    ///
    /// Polls are never cancelled: a later poll that is no longer needed (the
    /// stack's retransmission deadline moved on) runs, finds nothing due and
    /// reschedules itself. That costs one idle poll per deadline instead of
    /// leaving a cancelled heap entry behind for every received frame.
    fn request_poll(&mut self, h: usize, at: Time) {
        if self.polls[h].iter().any(|&t| t <= at) {
            return;
        }
        self.sched.at(at, Priority::SOFTWARE, Event::Poll(h));
        self.polls[h].push(at);
    }

    /// Record every link's frames in `dir/link<i>-<a>-<b>.pcap` (before the run).
    pub fn record_traces(&mut self, dir: &Path) -> Result<(), Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
        for (i, link) in self.links.iter_mut().enumerate() {
            link.trace = Some(Trace::create(&dir.join(format!("link{i}-{}.pcap", link.name)))?);
        }
        Ok(())
    }

    /// Flush and close the traces; returns their paths.
    pub fn finish_traces(&mut self) -> Result<Vec<String>, Error> {
        let mut paths = Vec::new();
        for link in &mut self.links {
            if let Some(trace) = link.trace.take() {
                paths.push(trace.finish()?.display().to_string());
            }
        }
        Ok(paths)
    }
}

/// The switches of scenario `s`, with each switch's ports recorded on
/// `links` and its MAC table filled: the port towards a host is the one
/// whose side of the tree holds that host.
fn build_switches(s: &Scenario, hosts: &[Host], links: &mut [Link]) -> Vec<Switch> {
    let n = hosts.len();
    let mut switches: Vec<Switch> = s
        .switches
        .iter()
        .map(|c| Switch {
            name: c.name.clone(),
            latency: c.latency.dur(),
            ports: Vec::new(),
            table: Default::default(),
            stats: SwitchStats::default(),
        })
        .collect();
    let mut adjacent: Vec<Vec<usize>> = vec![Vec::new(); n + switches.len()];
    for (l, link) in links.iter_mut().enumerate() {
        for e in 0..2 {
            adjacent[link.ends[e]].push(link.ends[1 - e]);
            if let Some(w) = link.ends[e].checked_sub(n) {
                link.switch_port[e] = switches[w].ports.len();
                switches[w].ports.push((l, e));
            }
        }
    }
    for (w, sw) in switches.iter_mut().enumerate() {
        for (p, &(l, e)) in sw.ports.iter().enumerate() {
            // Every host beyond this port (the links form a tree).
            let mut seen = vec![false; adjacent.len()];
            seen[n + w] = true;
            let mut stack = vec![links[l].ends[1 - e]];
            while let Some(v) = stack.pop() {
                if std::mem::replace(&mut seen[v], true) {
                    continue;
                }
                if v < n {
                    sw.table.insert(hosts[v].mac.0, p);
                }
                stack.extend(adjacent[v].iter().copied().filter(|&u| !seen[u]));
            }
        }
    }
    switches
}
