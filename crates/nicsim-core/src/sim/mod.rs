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

mod echo;
mod timed;

pub use echo::{swap_headers, EchoReport, MessageRow, MessageSide, PathMean};
pub use timed::{CoreReport, MessageReport, NicStats, OffloadStats, TimingReport};

use std::path::Path;

use crate::config::Scenario;
use crate::engine::rng::component_rng;
use crate::engine::{Dur, Priority, Scheduler, Time};
use crate::error::Error;
use crate::host::Host;
use crate::link::Channel;
use crate::probe::observer::{self, Probes};
use crate::probe::pcap::Trace;
use crate::probe::wire::TcpMonitor;
use crate::workload::{self, App};

/// What happens at an instant.
#[derive(Debug)]
enum Event {
    /// Run host `0`'s stack and application.
    Poll(usize),
    /// The frame on the wire of link `0`, direction `1`, finished serialising.
    TxDone(usize, usize),
    /// A frame reaches host `0`'s device.
    Arrive(usize, Vec<u8>),
    /// Core `1` of timed host `0` finished the job of generation `2`.
    CpuDone(usize, usize, u64),
    /// Timed host `0`'s NIC finished fetching the head TX frame.
    NicTxDma(usize),
    /// Timed host `0`'s NIC finished writing the head RX frame to memory.
    NicRxDma(usize),
    /// Timed host `0`'s interrupt-moderation timer (generation `1`).
    NicIrq(usize, u64),
    /// Timed host `0`'s communication processor notices work (offload).
    CommNotice(usize, timed::Notice),
    /// Echo node `0` returns a frame.
    Echo(usize, Vec<u8>),
}

/// One full-duplex link: channel 0 carries endpoint 0 → 1, channel 1 the reverse.
pub struct Link {
    /// Display name, `a-b`.
    pub name: String,
    /// Host indices of the two ends.
    pub ends: [usize; 2],
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
    timed: Vec<Option<timed::Timed>>,
    /// Links by index.
    pub links: Vec<Link>,
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
    /// Assemble a validated scenario. With `pcap_dir`, each link writes
    /// `link<i>-<a>-<b>.pcap` there.
    pub fn build(s: &Scenario, seed: u64, pcap_dir: Option<&Path>) -> Result<Sim, Error> {
        // A pcap replay file not loaded yet is read relative to the working directory.
        let mut loaded;
        let s = if matches!(&s.workload, crate::config::WorkloadConfig::PcapReplay(p) if p.schedule.is_none()) {
            loaded = s.clone();
            crate::workload::replay::prepare(&mut loaded, "")?;
            &loaded
        } else {
            s
        };
        let index = |name: &str| s.hosts.iter().position(|h| h.name == name).expect("validated");
        let mut ports = vec![Port { link: usize::MAX, end: 0 }; s.hosts.len()];
        let mut mtus = vec![0usize; s.hosts.len()];
        for (i, l) in s.links.iter().enumerate() {
            for (end, name) in l.endpoints.iter().enumerate() {
                let h = index(name);
                ports[h] = Port { link: i, end };
                mtus[h] = l.mtu.0 as usize;
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
        let mut hosts: Vec<Host> =
            host_cfgs.iter().enumerate().map(|(i, h)| Host::new(h, i, mtus[i], seed, tso(i))).collect();
        if let Some(dir) = pcap_dir {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
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
            let trace = match pcap_dir {
                Some(dir) => Some(Trace::create(&dir.join(format!("link{i}-{name}.pcap")))?),
                None => None,
            };
            links.push(Link { name, ends, chans: [chan(0), chan(1)], monitors: Default::default(), trace });
        }
        let apps = workload::install(&s.workload, &mut hosts, seed);
        let timed = timings.into_iter().map(|t| t.map(|t| timed::Timed::new(t, s.run.sample_interval.dur()))).collect();
        let n = hosts.len();
        let mut sim = Sim {
            sched: Scheduler::new(),
            hosts,
            ports,
            timed,
            links,
            apps,
            polls: vec![Vec::new(); n],
            finished_at: None,
            seed,
            probes: Probes::default(),
            arrived: vec![0; n],
            progress: None,
            echo: None,
        };
        if let crate::config::WorkloadConfig::Echo(e) = &s.workload {
            sim.echo = Some((index(&e.server), e.delay.dur()));
            if let Some(t) = sim.timed[index(&e.client)].as_mut() {
                t.measure.tx_irq_on_send = true;
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
            if self.finished_at.is_none() && self.apps.iter().all(|a| a.is_done(now)) {
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
                let propagating = self.sched.count_pending(|e| matches!(e, Event::Arrive(h, _) if *h == dst)) as u64;
                if copies != self.arrived[dst] + propagating {
                    return Err(format!(
                        "{at}: {copies} frames left the wire but {} arrived and {propagating} are propagating",
                        self.arrived[dst]
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
            Event::Arrive(h, frame) => {
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
            Event::TxDone(l, d) => {
                let link = &mut self.links[l];
                let dst = link.ends[1 - d];
                let prop = link.chans[d].propagation;
                for delivery in link.chans[d].finish() {
                    self.sched.at(now + prop + delivery.extra, Priority::WIRE, Event::Arrive(dst, delivery.frame));
                }
                self.start_wire(l, d, now)?;
                let src = self.links[l].ends[d];
                if self.timed[src].is_some() {
                    self.nic_tx_kick(src, now);
                } else if self.hosts[src].dev.tx_blocked {
                    self.request_poll(src, now);
                }
                Ok(())
            }
            Event::CpuDone(h, core, generation) => self.on_cpu_done(h, core, generation, now),
            Event::NicTxDma(h) => self.on_nic_tx_dma(h, now),
            Event::NicRxDma(h) => {
                self.on_nic_rx_dma(h, now);
                Ok(())
            }
            Event::NicIrq(h, generation) => {
                self.on_nic_irq_timer(h, generation, now);
                Ok(())
            }
            Event::CommNotice(h, notice) => {
                self.on_comm_notice(h, notice, now);
                Ok(())
            }
            Event::Echo(h, frame) => self.on_echo(h, frame, now),
        }
    }

    /// Start serialising the next frame of link `l` direction `d`, if idle.
    fn start_wire(&mut self, l: usize, d: usize, now: Time) -> Result<(), Error> {
        let link = &mut self.links[l];
        if let Some((time, frame)) = link.chans[d].start() {
            link.monitors[d].observe(frame);
            if self.probes.wants(observer::FRAME) {
                let fields = [("link", l as f64), ("direction", d as f64), ("bytes", frame.len() as f64)];
                self.probes.emit(observer::FRAME, now, &self.hosts[link.ends[d]].name, &fields);
            }
            if let Some(trace) = link.trace.as_mut() {
                trace.record(now, frame)?;
            }
            self.sched.at(now + time, Priority::WIRE, Event::TxDone(l, d));
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
            self.probes.emit(observer::CALL, now, &self.hosts[h].name, &fields);
        }
        Ok(())
    }

    /// A frame of `bytes` reaches host `h`'s stack.
    fn note_deliver(&mut self, h: usize, bytes: usize, now: Time) {
        if self.probes.wants(observer::DELIVER) {
            self.probes.emit(observer::DELIVER, now, &self.hosts[h].name, &[("bytes", bytes as f64)]);
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
