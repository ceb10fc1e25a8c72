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

mod echo;

pub use crate::link::switch::SwitchStats;
pub use crate::nic::device::NicStats;
pub use crate::nic::offload::nic_lro::{NicCoreStats, NicLroReport};
pub use crate::nic::offload::specdefrag::ZeroCopyStats;
pub use crate::node::{CoreReport, MessageReport, OffloadStats, TimingReport};
pub use crate::probe::wire::swap_headers;
pub use echo::{EchoReport, MessageRow, MessageSide, PathMean};

use crate::config::Scenario;
use crate::engine::rng::component_rng;
use crate::engine::{Dur, EventKey, Priority, Scheduler, Time};
use crate::error::Error;
use crate::host::cpu::{Breakdown, Path};
use crate::host::Host;
use crate::link::switch::{self, Switch};
use crate::link::Channel;
use crate::nic::offload::{AnyCallOffload, AnyRxOffload, AnyTxOffload, Setup};
use crate::node::{Env, HostEvent, Machine, Marks, Outside, Timed};
use crate::probe::observer::{self, Probes};
use crate::probe::pcap::Trace;
use crate::probe::wire::TcpMonitor;
use crate::workload::{self, App};

/// A timed host's offload engines: receive, transmit, call path.
type Engines = (AnyRxOffload, AnyTxOffload, AnyCallOffload);

/// What happens at an instant: one variant per component family, each
/// carrying the component's own event.
#[derive(Debug)]
enum Event {
    /// Host `0`'s own event.
    Host(usize, HostEvent),
    /// Something happens on the wire.
    Wire(WireEvent),
    /// Echo node `0` returns a frame.
    Echo(usize, Vec<u8>),
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
    timed: Vec<Option<Timed>>,
    /// Machines whose parts several hosts share, and each host's (if any).
    machines: Vec<Machine>,
    machine_of: Vec<Option<usize>>,
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
    /// Names of the nodes: hosts, then switches.
    names: Vec<String>,
    /// When the measured interval begins (the workload's warm-up, `omit`),
    /// until it has begun.
    measure_from: Option<Time>,
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

impl Sim {
    /// Assemble a validated scenario whose files are loaded (a pcap
    /// replay's schedule: `api::resolve_toml` and `api::run_scenario` load
    /// it, relative to the scenario file). Assembly reads and writes no
    /// file; [`Sim::record_traces`] opens the link traces.
    pub fn build(s: &Scenario, seed: u64) -> Result<Sim, Error> {
        let w = workload::spec::of(&s.workload);
        w.ready()?;
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
        let mut host_cfgs = s.hosts.clone();
        w.adjust_hosts(&mut host_cfgs);
        let mut timings = Vec::with_capacity(s.hosts.len());
        for (i, h) in s.hosts.iter().enumerate() {
            let mut t = h.timing(i)?;
            if let Some(t) = t.as_mut() {
                w.adjust_timing(&h.name, t);
            }
            timings.push(t);
        }
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
        // round, or the host's own driver rebuilds them (zero-copy).
        let untouched = s.links.iter().all(|l| l.impairments.corrupt == 0.0) && !w.rewrites_frames();
        // A coalescing engine (GRO, LRO) takes such frames as valid and
        // leaves its aggregates' TCP checksums unfilled, as Linux does.
        let trusted = untouched && !cfg!(debug_assertions);
        let pristine =
            |i: usize| untouched && !timings[i].as_ref().is_some_and(|t| t.zero_copy.fragment || t.zero_copy.speculate);
        // Each timed host's offload engines: receive, transmit, call path.
        let via = w.measured_client().is_some_and(|(_, via)| via);
        let engines: Vec<Option<Engines>> = (timings.iter().enumerate())
            .map(|(i, t)| {
                t.as_ref().map(|t| {
                    let (link_mtu, tcp_header, mac) = (mtus[i], tcp_header(i), Host::mac_of(i).0);
                    let host = Setup { timing: t, link_mtu, tcp_header, mac, trusted, via };
                    (AnyRxOffload::for_host(&host), AnyTxOffload::for_host(&host), AnyCallOffload::for_host(&host))
                })
            })
            .collect();
        let mut hosts: Vec<Host> = (host_cfgs.iter().enumerate())
            .map(|(i, h)| {
                let nic = engines[i].as_ref().map(|(_, tx, _)| tx.engine_ref().stack()).unwrap_or_default();
                Host::new(&h.stack(i).expect("validated scenario"), i, stack_mtu(i), seed, nic, pristine(i))
            })
            .collect();
        if s.run.arp == crate::config::Arp::Warm {
            let known: Vec<_> = hosts.iter().map(|h| (h.ip, h.mac)).collect();
            for h in &mut hosts {
                h.learn_neighbours(&known);
            }
        }
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
        let mut switches: Vec<Switch> = s.switches.iter().map(|c| Switch::new(&c.name, c.latency.dur())).collect();
        let ends: Vec<[usize; 2]> = links.iter().map(|l| l.ends).collect();
        let macs: Vec<[u8; 6]> = hosts.iter().map(|h| h.mac.0).collect();
        let switch_ports = switch::connect(&mut switches, &ends, &macs);
        for (link, ports) in links.iter_mut().zip(switch_ports) {
            link.switch_port = ports;
        }
        let apps = workload::install(&s.workload, &mut hosts, seed);
        let bin = s.run.sample_interval.dur();
        let mut timed: Vec<Option<Timed>> = (timings.into_iter().zip(engines))
            .map(|(t, e)| t.zip(e).map(|(t, (rx, tx, call))| Timed::new(t, rx, tx, call, bin)))
            .collect();
        // Hosts on one machine share its bus and DDIO ways (validated: all timed, one bus and memory section).
        let (mut machines, mut machine_of) = (Vec::<Machine>::new(), vec![None; n]);
        for (i, h) in s.hosts.iter().enumerate() {
            if let (Some(name), Some(t)) = (&h.machine, timed[i].as_mut()) {
                let m = match machines.iter().position(|m| m.name == *name) {
                    Some(m) => m,
                    None => {
                        machines.push(Machine::new(name, &t.timing));
                        machines.len() - 1
                    }
                };
                machine_of[i] = Some(m);
                t.marks = Some(Marks::default());
            }
        }
        let names = hosts.iter().map(|h| h.name.clone()).chain(switches.iter().map(|w| w.name.clone())).collect();
        let mut sim = Sim {
            names,
            sched: Scheduler::new(),
            hosts,
            ports,
            timed,
            machines,
            machine_of,
            links,
            switches,
            apps,
            polls: vec![Vec::new(); n],
            finished_at: None,
            measure_from: s.workload.omit().map(|d| Time::ZERO + d.dur()),
            seed,
            probes: Probes::default(),
            arrived: vec![0; n],
            switched_in: vec![0; 2 * s.links.len()],
            progress: None,
            echo: None,
        };
        for h in 0..n {
            let name = sim.hosts[h].name.clone();
            let start = |t: Option<&mut Timed>, env: &mut Env| match t {
                Some(t) => t.with_offload(env, Time::ZERO, |e, cx| e.start(cx, seed, &name)).map(|_| ()),
                None => Ok(()),
            };
            sim.with_node(h, start)?;
        }
        sim.echo = w.echo_node().map(|(node, delay)| (index(node), delay));
        if let Some((client, via)) = w.measured_client() {
            if let Some(t) = sim.timed[index(client)].as_mut() {
                t.measure.tx_irq_on_send = true;
                t.measure.via = via;
            }
        }
        for h in 0..n {
            sim.with_node(h, |_, env| env.request_poll(Time::ZERO));
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
            if let Some(from) = self.measure_from.filter(|&from| t >= from) {
                self.begin_measurement(from);
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

    /// The warm-up is over at `now`: every timed host's CPU counters and
    /// every bulk receiver's byte count start again from here.
    fn begin_measurement(&mut self, now: Time) {
        self.measure_from = None;
        for t in self.timed.iter_mut().flatten() {
            t.begin_measurement(now);
        }
        for app in &mut self.apps {
            app.begin_measurement(now);
        }
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
            let pending = self.sched.count_pending(|e| matches!(e, Event::Host(p, HostEvent::Poll) if *p == h));
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
            Event::Host(h, ev) => self.with_node(h, |t, env| env.on_event(t, ev, now)),
            Event::Wire(ev) => self.on_wire(ev, now),
            Event::Echo(h, frame) => self.on_echo(h, frame, now),
        }
    }

    /// Run `f` on host `h`: its timing state, and the host as its own
    /// events see it.
    /// A host on a machine holds the machine's shared parts while it runs.
    fn with_node<R>(&mut self, h: usize, f: impl FnOnce(Option<&mut Timed>, &mut Env) -> R) -> R {
        let Sim { sched, hosts, ports, timed, links, apps, polls, probes, names, machines, machine_of, .. } = self;
        let mut out = Around { h, sched, links, port: ports[h], probes, names };
        let mut env = Env { h, host: &mut hosts[h], app: &mut apps[h], polls: &mut polls[h], out: &mut out };
        match (machine_of[h], timed[h].as_mut()) {
            (Some(m), Some(t)) => {
                machines[m].exchange(t);
                let r = f(Some(&mut *t), &mut env);
                machines[m].exchange(t);
                r
            }
            (_, t) => f(t, &mut env),
        }
    }

    /// A link or switch event.
    fn on_wire(&mut self, ev: WireEvent, now: Time) -> Result<(), Error> {
        match ev {
            WireEvent::Arrive(h, frame) => {
                self.arrived[h] += 1;
                let Some(frame) = self.echo_arrive(h, frame, now) else { return Ok(()) };
                self.with_node(h, |t, env| env.arrive(t, frame, now))
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
                start_wire(&mut self.sched, &mut self.links, &mut self.probes, &self.names, l, d, now)?;
                let src = self.links[l].ends[d];
                // A switch's queue feeds the wire by itself.
                if src < n {
                    self.with_node(src, |t, env| env.wire_free(t, now));
                }
                Ok(())
            }
            WireEvent::Forward(w, port, frame) => self.forward(w, port, frame, now),
        }
    }

    /// Name of node `v` (a host, or a switch after the hosts).
    pub fn node_name(&self, v: usize) -> &str {
        &self.names[v]
    }

    /// Switch `w` forwards a frame that came in through `ingress`: to the
    /// port of its destination address, or to every other port.
    fn forward(&mut self, w: usize, ingress: usize, frame: Vec<u8>, now: Time) -> Result<(), Error> {
        let (l, e) = self.switches[w].ports[ingress];
        self.switched_in[2 * l + 1 - e] += 1;
        let out = self.switches[w].route(ingress, &frame);
        let mut frame = Some(frame);
        for (i, &p) in out.iter().enumerate() {
            let (l, e) = self.switches[w].ports[p];
            let copy = if i + 1 == out.len() { frame.take() } else { frame.clone() };
            if !self.links[l].chans[e].enqueue(copy.expect("a frame for each port")) {
                self.switches[w].stats.queue_drops += 1;
            }
            start_wire(&mut self.sched, &mut self.links, &mut self.probes, &self.names, l, e, now)?;
        }
        Ok(())
    }

    /// The timing report of host `h` over a run that lasted until `until`
    /// (None: an ideal host).
    pub fn timing_report(&self, h: usize, until: Time) -> Option<TimingReport> {
        let mut r = self.timed[h].as_ref()?.report(until);
        if let Some(m) = self.machine_of[h] {
            self.machines[m].report(&mut r, until);
        }
        Some(r)
    }

    /// Cycles per layer of message `msg` on `path` of host `h` (timed hosts only).
    pub fn message_breakdown(&self, h: usize, msg: u64, path: Path) -> Option<Breakdown> {
        self.timed[h].as_ref()?.message_breakdown(msg, path)
    }

    /// Record every link's frames in `dir/link<i>-<a>-<b>.pcap` (before the run).
    pub fn record_traces(&mut self, dir: &std::path::Path) -> Result<(), Error> {
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

/// Start serialising the next frame of link `l` direction `d`, if idle.
fn start_wire(
    sched: &mut Scheduler<Event>,
    links: &mut [Link],
    probes: &mut Probes,
    names: &[String],
    l: usize,
    d: usize,
    now: Time,
) -> Result<(), Error> {
    let link = &mut links[l];
    if let Some((time, frame)) = link.chans[d].start() {
        link.monitors[d].observe(frame);
        if probes.wants(observer::FRAME) {
            let fields = [("link", l as f64), ("direction", d as f64), ("bytes", frame.len() as f64)];
            probes.emit(observer::FRAME, now, link.ends[d], &names[link.ends[d]], &fields);
        }
        if let Some(trace) = link.trace.as_mut() {
            trace.record(now, frame)?;
        }
        sched.at(now + time, Priority::WIRE, Event::Wire(WireEvent::TxDone(l, d)));
    }
    Ok(())
}

/// Host `h`'s view of the rest of the system while it handles an event.
struct Around<'a> {
    h: usize,
    sched: &'a mut Scheduler<Event>,
    links: &'a mut [Link],
    port: Port,
    probes: &'a mut Probes,
    names: &'a [String],
}

impl Outside for Around<'_> {
    fn at(&mut self, at: Time, prio: Priority, ev: HostEvent) -> EventKey {
        self.sched.at(at, prio, Event::Host(self.h, ev))
    }

    fn cancel(&mut self, key: EventKey) {
        self.sched.cancel(key);
    }

    fn wire_room(&self) -> usize {
        self.links[self.port.link].chans[self.port.end].free_slots()
    }

    fn wire_credit(&self) -> usize {
        let chan = &self.links[self.port.link].chans[self.port.end];
        if chan.backpressure {
            chan.free_slots()
        } else {
            usize::MAX
        }
    }

    fn enqueue(&mut self, frame: Vec<u8>) {
        self.links[self.port.link].chans[self.port.end].enqueue(frame);
    }

    fn start_wire(&mut self, now: Time) -> Result<(), Error> {
        let Port { link, end } = self.port;
        start_wire(self.sched, self.links, self.probes, self.names, link, end, now)
    }

    fn pause_peer(&mut self, pause: bool, now: Time) -> bool {
        let Port { link, end } = self.port;
        let chan = &mut self.links[link].chans[1 - end];
        if chan.paused == pause {
            return false;
        }
        chan.paused = pause;
        if !pause {
            // Restarting the wire cannot fail for lack of a trace here.
            let _ = start_wire(self.sched, self.links, self.probes, self.names, link, 1 - end, now);
        }
        true
    }

    fn probes(&mut self) -> &mut Probes {
        self.probes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dur;
    use crate::nic::offload::example::DropEvery;

    /// 1 MiB of bulk TCP between two Kurmann hosts over GbE.
    fn bulk() -> crate::config::Scenario {
        crate::config::parse(
            "[[hosts]]\nname = \"a\"\nprofile = \"kurmann-pii-400\"\n\
             [[hosts]]\nname = \"b\"\nprofile = \"kurmann-pii-400\"\n\
             [[links]]\nendpoints = [\"a\", \"b\"]\nrate = \"1Gbps\"\n\
             [workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MiB\"\n",
        )
        .expect("a valid scenario")
    }

    #[test]
    fn an_engine_added_by_one_file_and_one_registry_line_runs_in_the_simulator() {
        let s = bulk();
        let limit = Time::ZERO + Dur(10 * crate::engine::time::PS_PER_S);
        let mut sim = Sim::build(&s, 1).unwrap();
        sim.timed[1].as_mut().unwrap().rx = AnyRxOffload::Example(Box::new(DropEvery::new(50)));
        sim.run(limit, Dur::ZERO).unwrap();
        assert!(sim.finished_at.is_some(), "the transfer completes despite the losses");
        let t = sim.timed[1].as_ref().unwrap();
        let AnyRxOffload::Example(e) = &t.rx else { panic!("the engine stays installed") };
        // About 760 data frames carry 1 MiB: every 50th is lost at the NIC.
        assert!(e.dropped() >= 10, "dropped {}", e.dropped());
        // Every frame that reached the NIC was dropped by the engine, dropped
        // by the FIFO, or written to memory.
        assert_eq!(t.nic.stats.rx_frames + e.dropped() + t.nic.stats.rx_fifo_drops, sim.arrived[1]);
        // TCP recovered each loss by retransmitting.
        assert!(sim.links[0].monitors[0].retransmissions >= e.dropped());
        // The baseline engine loses nothing on the same run.
        let mut base = Sim::build(&s, 1).unwrap();
        base.run(limit, Dur::ZERO).unwrap();
        assert_eq!(base.links[0].monitors[0].retransmissions, 0);
    }

    #[test]
    fn assembly_refuses_a_replay_whose_capture_is_not_loaded() {
        let s = crate::config::parse(
            "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[links]]\nendpoints = [\"a\", \"b\"]\n\
             [workload.pcap_replay]\nfrom = \"a\"\nto = \"b\"\nfile = \"nowhere.pcap\"\n",
        )
        .expect("parsing reads no file");
        let err = Sim::build(&s, 1).err().expect("not loaded").to_string();
        assert!(err.contains("workload.pcap_replay.file") && err.contains("not loaded"), "{err}");
    }
}
