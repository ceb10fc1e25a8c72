//! The NIC core against a line: frames arrive at a line rate into the
//! RBI, the core processes them one at a time ([`super::CoreConfig`]), and
//! the DMA moves aggregates to the host over the same bus; the lowest core
//! clock that keeps up, and the host's software LRO load for comparison.
//! Units: clocks in Hz, time in integer picoseconds, sizes in bytes.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::*;

/// The line feeding the RBI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineConfig {
    /// Line rate.
    pub rate: Bandwidth,
    /// Ethernet header and FCS around the IP packet (14 + 4 = 18 B,
    /// IEEE 802.3); stored in the RBI buffer with it.
    pub framing: u64,
    /// Preamble and start-of-frame delimiter (8 B, IEEE 802.3).
    pub preamble: u64,
    /// Inter-frame gap (12 B, IEEE 802.3).
    pub ifg: u64,
    /// Receive buffers in the RBI (the study: 2).
    pub buffers: usize,
}

impl LineConfig {
    /// A line at `rate` with IEEE 802.3 overheads and the study's two buffers.
    pub fn study(rate: Bandwidth) -> Self {
        LineConfig { rate, framing: 18, preamble: 8, ifg: 12, buffers: 2 }
    }

    /// Check every knob; errors name `path.<field>`.
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let at = |f: &str| if path.is_empty() { f.to_owned() } else { format!("{path}.{f}") };
        if self.rate.0 == 0 {
            return Err(ConfigError::new(at("line_rate"), "must be above 0 bit/s"));
        }
        if self.buffers == 0 || self.buffers > 1024 {
            return Err(ConfigError::new(at("buffers"), format!("must be 1 to 1024, got {}", self.buffers)));
        }
        Ok(())
    }

    /// Bytes a frame of IP length `size` occupies on the wire, gap included.
    pub fn wire_bytes(&self, size: u64) -> u64 {
        size + self.framing + self.preamble + self.ifg
    }

    /// Picoseconds `bytes` take on the line (rounded down; arrival times
    /// are computed from cumulative bits, so rounding does not accumulate).
    fn ps(&self, bytes: u64) -> u64 {
        mul_div_floor(bytes * 8, PS_PER_S, self.rate.0)
    }

    /// Frames arriving back to back at line rate, `n` of them of IP length
    /// `size`, their classes cycling through `pattern`.
    pub fn back_to_back(&self, size: u64, pattern: &[LroClass], n: usize) -> Vec<Arrival> {
        assert!(!pattern.is_empty(), "a class pattern has at least one class");
        let bits = self.wire_bytes(size) * 8;
        (0..n)
            .map(|i| Arrival {
                start: Time(((i as u128) * u128::from(bits) * u128::from(PS_PER_S) / u128::from(self.rate.0)) as u64),
                size,
                class: pattern[i % pattern.len()],
            })
            .collect()
    }
}

/// A frame reaching the NIC: its preamble starts at `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Start of the preamble on the line.
    pub start: Time,
    /// IP packet length, bytes.
    pub size: u64,
    /// LRO class the engine gives it.
    pub class: LroClass,
}

/// A whole receive path: core, bus, DMA and line.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Core, bus and DMA.
    pub core: CoreConfig,
    /// Line and RBI.
    pub line: LineConfig,
    /// Move each flushed aggregate RB → host over the same bus, in the bus
    /// time the core and the RBI → RB moves leave free; a frame finding no
    /// room in RB is dropped.
    pub host_dma: bool,
}

impl SimConfig {
    /// Check every knob.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.core.validate("")?;
        self.line.validate("")
    }
}

/// A frame the core processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRecord {
    /// Position in the arrivals.
    pub index: usize,
    /// Its last byte reached the RBI (the core is interrupted).
    pub complete: Time,
    /// The core started on it.
    pub start: Time,
    /// The core finished with it and freed its buffer.
    pub end: Time,
    /// Its cycles.
    pub cycles: FrameCycles,
}

/// An aggregate moved RB → host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostTransfer {
    /// The aggregate was flushed and queued for the bus.
    pub queued: Time,
    /// Its last bus cycle (to the end of the frame it finished in, if the
    /// core was busy then).
    pub end: Time,
    /// Bytes moved (payloads plus the head's headers).
    pub bytes: u64,
    /// Frames merged into it.
    pub frames: u64,
}

/// What a run of the receive path did.
#[derive(Debug, Clone, PartialEq)]
pub struct SimReport {
    /// Frames offered by the line.
    pub offered: usize,
    /// Frames the core processed, in order.
    pub frames: Vec<FrameRecord>,
    /// Indices of dropped frames: no free RBI buffer (overruns), or with
    /// `host_dma`, no room in RB.
    pub dropped: Vec<usize>,
    /// Of the drops, those for want of room in RB.
    pub rb_drops: usize,
    /// Transfers to the host (empty unless `host_dma`).
    pub host_transfers: Vec<HostTransfer>,
    /// Busy core cycles, all frames.
    pub busy_cycles: u64,
    /// Idle core cycles (waiting for the bus), all frames.
    pub idle_cycles: u64,
    /// First preamble to the core's last finish, ps.
    pub span_ps: u64,
}

impl SimReport {
    /// Frames dropped.
    pub fn drops(&self) -> usize {
        self.dropped.len()
    }

    /// Busy share of the core's working cycles.
    pub fn busy_share(&self) -> f64 {
        let t = self.busy_cycles + self.idle_cycles;
        if t == 0 {
            0.0
        } else {
            self.busy_cycles as f64 / t as f64
        }
    }

    /// Idle share of the core's working cycles.
    pub fn idle_share(&self) -> f64 {
        let t = self.busy_cycles + self.idle_cycles;
        if t == 0 {
            0.0
        } else {
            self.idle_cycles as f64 / t as f64
        }
    }
}

/// Transfers RB → host waiting for the bus: they take the bus time the
/// core and its RBI → RB moves leave free, first come first served.
struct HostBus {
    dma_hz: u64,
    /// (flushed at, bytes, frames, bus cycles left).
    pending: VecDeque<(u64, u64, u64, u64)>,
}

impl HostBus {
    fn new(dma_hz: u64) -> Self {
        HostBus { dma_hz, pending: VecDeque::new() }
    }

    fn queue(&mut self, now: u64, bytes: u64, frames: u64, bus_cycles: u64) {
        self.pending.push_back((now, bytes, frames, bus_cycles));
    }

    fn pending_bytes(&self) -> u64 {
        self.pending.iter().map(|p| p.1).sum()
    }

    /// Give the transfers `free` ps of bus time. `from` is when that time
    /// starts if `contiguous` (the core was idle: a transfer ends exactly
    /// when its cycles are done); otherwise the free time is spread over a
    /// frame that ended at `from`, and transfers finishing in it end then.
    fn run(&mut self, from: u64, mut free: u64, contiguous: bool, done: &mut Vec<HostTransfer>) {
        let mut t = from;
        while let Some(front) = self.pending.front_mut() {
            let need = mul_div_ceil(front.3, PS_PER_S, self.dma_hz);
            if need > free {
                front.3 -= mul_div_floor(free, self.dma_hz, PS_PER_S).min(front.3);
                return;
            }
            free -= need;
            if contiguous {
                t += need;
            }
            let (queued, bytes, frames, _) = self.pending.pop_front().expect("front exists");
            done.push(HostTransfer { queued: Time(queued), end: Time(t), bytes, frames });
        }
    }
}

/// Event kinds, in the order they run at one instant (lower first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The core finished a frame: its buffer is free for a frame starting
    /// at the same instant.
    CoreDone,
    /// A frame is complete in its buffer: the core may start on it now.
    FrameComplete(usize),
    /// A frame's first byte reaches the RBI: it needs a free buffer.
    FrameStart(usize),
}

/// Run `arrivals` through the receive path, event by event.
pub fn simulate(cfg: &SimConfig, arrivals: &[Arrival]) -> Result<SimReport, ConfigError> {
    cfg.validate()?;
    let line = &cfg.line;
    for (i, pair) in arrivals.windows(2).enumerate() {
        let earliest = pair[0].start.0 + line.ps(line.wire_bytes(pair[0].size));
        if pair[1].start.0 < earliest {
            return Err(ConfigError::new(
                format!("arrivals[{}].time", i + 1),
                format!(
                    "starts at {} ps, before frame {i} has left the line ({earliest} ps at {})",
                    pair[1].start.0, line.rate
                ),
            ));
        }
    }
    let core = &cfg.core;
    let mut queue: BinaryHeap<Reverse<(u64, Event, u64)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |q: &mut BinaryHeap<Reverse<(u64, Event, u64)>>, t: u64, e: Event| {
        q.push(Reverse((t, e, seq)));
        seq += 1;
    };
    for (i, a) in arrivals.iter().enumerate() {
        push(&mut queue, a.start.0 + line.ps(line.preamble), Event::FrameStart(i));
    }
    let mut free_buffers = line.buffers;
    let mut held = vec![false; arrivals.len()];
    let mut ready: VecDeque<(usize, u64)> = VecDeque::new();
    let mut running: Option<(usize, u64, u64, FrameCycles)> = None;
    let mut host = HostBus::new(core.dma_hz());
    let mut last_end = arrivals.first().map_or(0, |a| a.start.0);
    let (mut list_bytes, mut list_frames) = (0u64, 0u64);
    let mut report = SimReport {
        offered: arrivals.len(),
        frames: Vec::with_capacity(arrivals.len()),
        dropped: Vec::new(),
        rb_drops: 0,
        host_transfers: Vec::new(),
        busy_cycles: 0,
        idle_cycles: 0,
        span_ps: 0,
    };
    while let Some(Reverse((now, event, _))) = queue.pop() {
        match event {
            Event::FrameStart(i) => {
                if free_buffers == 0 {
                    report.dropped.push(i);
                } else {
                    free_buffers -= 1;
                    held[i] = true;
                    let a = &arrivals[i];
                    push(
                        &mut queue,
                        a.start.0 + line.ps(line.preamble + line.framing + a.size),
                        Event::FrameComplete(i),
                    );
                }
            }
            Event::FrameComplete(i) => ready.push_back((i, now)),
            Event::CoreDone => {
                let (i, complete, start, cycles) = running.take().expect("a frame was running");
                free_buffers += 1;
                held[i] = false;
                last_end = now;
                // The bus cycles the frame left free go to the host transfers.
                let used = mul_div_ceil(cycles.bus_instructions, PS_PER_S, core.clock.0)
                    + mul_div_ceil(cycles.bus_cycles, PS_PER_S, core.dma_hz());
                host.run(now, (now - start).saturating_sub(used), false, &mut report.host_transfers);
                report.busy_cycles += cycles.busy;
                report.idle_cycles += cycles.idle;
                report.frames.push(FrameRecord {
                    index: i,
                    complete: Time(complete),
                    start: Time(start),
                    end: Time(now),
                    cycles,
                });
                report.span_ps = now;
                let payload = core.moved_bytes(cycles.size);
                let flush = match cycles.class {
                    LroClass::Bom => {
                        (list_bytes, list_frames) = (payload, 1);
                        false
                    }
                    LroClass::Com | LroClass::Oop => {
                        list_bytes += payload;
                        list_frames += 1;
                        false
                    }
                    LroClass::Eom => {
                        list_bytes += payload;
                        list_frames += 1;
                        true
                    }
                    LroClass::Ssm => {
                        (list_bytes, list_frames) = (payload, 1);
                        true
                    }
                };
                if flush || list_frames >= core.window {
                    if cfg.host_dma && list_frames > 0 {
                        let bytes = list_bytes + core.headers;
                        host.queue(now, bytes, list_frames, core.transfer_bus_cycles(bytes));
                    }
                    (list_bytes, list_frames) = (0, 0);
                }
            }
        }
        while running.is_none() {
            let Some((i, complete)) = ready.pop_front() else { break };
            // While the core waited for a frame the bus was free.
            host.run(last_end, now - last_end.min(now), true, &mut report.host_transfers);
            last_end = now;
            let a = &arrivals[i];
            if cfg.host_dma && host.pending_bytes() + list_bytes + core.moved_bytes(a.size) > core.rb_bytes {
                // No room in RB: the frame is dropped and its buffer freed.
                report.dropped.push(i);
                report.rb_drops += 1;
                free_buffers += 1;
                held[i] = false;
                continue;
            }
            let cycles = core.frame(a.class, a.size);
            running = Some((i, complete, now, cycles));
            push(&mut queue, now + core.frame_ps(&cycles), Event::CoreDone);
        }
    }
    // After the last frame the bus is the host transfers' alone.
    host.run(last_end, u64::MAX / 2, true, &mut report.host_transfers);
    report.dropped.sort_unstable();
    assert!(held.iter().all(|h| !h), "every accepted frame was processed and its buffer freed");
    assert_eq!(report.frames.len() + report.dropped.len(), arrivals.len(), "every frame processed or dropped");
    if let Some(first) = arrivals.first() {
        report.span_ps = report.span_ps.saturating_sub(first.start.0);
    }
    Ok(report)
}

/// The lowest core clock found to sustain a stream without overruns.
#[derive(Debug, Clone, PartialEq)]
pub struct MinClock {
    /// Lowest clock (a whole MHz) with no drop over the stream.
    pub clock: Frequency,
    /// Frames simulated per probe.
    pub frames: usize,
    /// Simulations run by the search.
    pub probes: usize,
    /// Drops 1 MHz below (at least 1, unless the answer is 1 MHz).
    pub drops_below: usize,
    /// Mean total core cycles per frame at the answer.
    pub mean_total_cycles: f64,
    /// Mean idle core cycles per frame at the answer.
    pub mean_idle_cycles: f64,
    /// Time between frame starts on the line, ps.
    pub arrival_interval_ps: f64,
}

/// Highest clock the search tries, MHz (1 THz: beyond any core).
const MAX_MHZ: u64 = 1_000_000;

/// The lowest core clock, to 1 MHz, at which `n` frames of IP length `size`
/// arriving back to back with classes cycling through `pattern` see no
/// RBI overrun. `cfg.core.clock` is ignored; the DMA keeps its ratio or
/// fixed clock. Bisection over simulations.
pub fn min_core_clock(cfg: &SimConfig, size: u64, pattern: &[LroClass], n: usize) -> Result<MinClock, ConfigError> {
    let mut probe_cfg = cfg.clone();
    probe_cfg.core.clock = Frequency(1_000_000);
    probe_cfg.validate()?;
    if pattern.is_empty() {
        return Err(ConfigError::new("pattern", "needs at least one class"));
    }
    if n == 0 {
        return Err(ConfigError::new("packets", "must be at least 1"));
    }
    let arrivals = cfg.line.back_to_back(size, pattern, n);
    let mut probes = 0;
    let mut run = |mhz: u64| -> SimReport {
        probes += 1;
        probe_cfg.core.clock = Frequency(mhz * 1_000_000);
        simulate(&probe_cfg, &arrivals).expect("validated above")
    };
    let mut hi = 1_000;
    let mut at_hi = run(hi);
    while at_hi.drops() > 0 {
        if hi >= MAX_MHZ {
            let path = if matches!(cfg.core.dma, DmaClock::Fixed(_)) { "dma_clock" } else { "line_rate" };
            let rbi = core_dma_ns(&probe_cfg.core, size);
            let host = if cfg.host_dma { host_dma_ns(&probe_cfg.core, size) } else { 0.0 };
            let needs = if cfg.host_dma {
                format!(
                    "the bus needs {:.1} ns per frame at {} Hz (RBI -> RB {rbi:.1} ns, RB -> host {host:.1} ns)",
                    rbi + host,
                    probe_cfg.core.dma_hz()
                )
            } else {
                format!("the DMA ({} Hz) needs {rbi:.1} ns per frame", probe_cfg.core.dma_hz())
            };
            return Err(ConfigError::new(
                path,
                format!(
                    "no core clock up to 1 THz sustains {} with {size}-byte packets: {needs}, the line delivers one every {:.1} ns",
                    cfg.line.rate,
                    cfg.line.ps(cfg.line.wire_bytes(size)) as f64 / 1e3
                ),
            ));
        }
        hi = (hi * 2).min(MAX_MHZ);
        at_hi = run(hi);
    }
    let mut lo = 0;
    let mut drops_below = usize::MAX;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let r = run(mid);
        if r.drops() == 0 {
            hi = mid;
            at_hi = r;
        } else {
            lo = mid;
            drops_below = r.drops();
        }
    }
    if lo > 0 && drops_below == usize::MAX {
        drops_below = run(lo).drops();
    }
    if lo == 0 {
        drops_below = 0;
    }
    let frames = at_hi.frames.len().max(1) as f64;
    Ok(MinClock {
        clock: Frequency(hi * 1_000_000),
        frames: n,
        probes,
        drops_below,
        mean_total_cycles: at_hi.frames.iter().map(|f| f.cycles.total).sum::<u64>() as f64 / frames,
        mean_idle_cycles: at_hi.frames.iter().map(|f| f.cycles.idle).sum::<u64>() as f64 / frames,
        arrival_interval_ps: cfg.line.wire_bytes(size) as f64 * 8.0 * PS_PER_S as f64 / cfg.line.rate.0 as f64,
    })
}

/// Nanoseconds the DMA needs for one frame's RBI → RB move.
fn core_dma_ns(core: &CoreConfig, size: u64) -> f64 {
    core.transfer_bus_cycles(core.moved_bytes(size)) as f64 * 1e9 / core.dma_hz() as f64
}

/// Nanoseconds of bus per frame for moving full aggregates RB → host
/// (one transfer of `window` payloads and the head's headers per `window` frames).
fn host_dma_ns(core: &CoreConfig, size: u64) -> f64 {
    let bytes = core.window * core.moved_bytes(size) + core.headers;
    core.transfer_bus_cycles(bytes) as f64 * 1e9 / core.dma_hz() as f64 / core.window as f64
}

/// Software LRO on the host, run on nicsim's CPU model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostLro {
    /// Host core clock (the study: 4 GHz).
    pub clock: Frequency,
    /// Cost of LRO per packet (the study: 2927 cycles, ≈ 1600 instructions
    /// at CPI ≈ 1.85; memory stalls are inside the measured cycles, so `mem` is 0).
    pub cost: Cost,
    /// Bytes the wire adds to each IP packet: the study's 812,743.82
    /// packets/s at 10 Gbps for 1500-byte packets is 1538 B per packet,
    /// i.e. 38 B = Ethernet header 14 + FCS 4 + preamble/SFD 8 + gap 12.
    pub overhead: u64,
}

/// What software LRO costs a host core at a given load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostLroLoad {
    /// Packets per second the line delivers.
    pub packets_per_s: f64,
    /// Cycles per packet.
    pub cycles_per_packet: u64,
    /// Share of one core, from the arithmetic (packets/s × cycles / clock).
    pub share: f64,
    /// Share of one core measured by running one LRO job per packet
    /// arriving within the window on nicsim's CPU model (softirq class):
    /// busy time over the window (or until the last job ended, if later).
    pub simulated_share: f64,
    /// Packets simulated.
    pub simulated_packets: u64,
}

impl HostLro {
    /// The study's host: 4 GHz, 2927 cycles per packet, 38 B of overhead.
    pub const STUDY: HostLro =
        HostLro { clock: Frequency(4_000_000_000), cost: Cost { cycles: 2927, mem: 0 }, overhead: 38 };

    /// Load of software LRO at `rate` with IP packets of `size` bytes,
    /// simulated over `window` of arrivals.
    pub fn load(&self, rate: Bandwidth, size: u64, window: Dur) -> Result<HostLroLoad, ConfigError> {
        if rate.0 == 0 {
            return Err(ConfigError::new("line_rate", "must be above 0 bit/s"));
        }
        if self.clock.0 == 0 {
            return Err(ConfigError::new("clock", "must be above 0 Hz"));
        }
        if size == 0 {
            return Err(ConfigError::new("size", "must be at least 1 byte"));
        }
        if window.0 == 0 {
            return Err(ConfigError::new("window", "must be longer than 0 s"));
        }
        let bits = (size + self.overhead) * 8;
        let packets_per_s = rate.0 as f64 / bits as f64;
        let cycles = self.cost.total(0);
        let mut core: Core<()> = Core::new(self.clock.0, Dur::ZERO);
        // One class of job, so nothing is preempted and every completion
        // booked is current.
        let mut wakes: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
        let mut n = 0u64;
        loop {
            let t = (u128::from(n) * u128::from(bits) * u128::from(PS_PER_S) / u128::from(rate.0)) as u64;
            if t >= window.0 {
                break;
            }
            while let Some(&Reverse(at)) = wakes.peek() {
                if at > t {
                    break;
                }
                wakes.pop();
                if let Some((_, Some(w))) = core.complete(Time(at)) {
                    wakes.push(Reverse(w.at.0));
                }
            }
            let job = Job::new(Class::Softirq, vec![(Layer::Coalesce, cycles)], ());
            if let Some(w) = core.submit(Time(t), job) {
                wakes.push(Reverse(w.at.0));
            }
            n += 1;
        }
        // Run the backlog out; the share is busy time over the window (or
        // until the last job ended, if the core fell behind).
        let mut last = 0;
        while let Some(Reverse(at)) = wakes.pop() {
            last = at;
            if let Some((_, Some(w))) = core.complete(Time(at)) {
                wakes.push(Reverse(w.at.0));
            }
        }
        assert!(core.is_idle(), "every LRO job ran");
        let span = window.0.max(last) as f64;
        Ok(HostLroLoad {
            packets_per_s,
            cycles_per_packet: cycles,
            share: packets_per_s * cycles as f64 / self.clock.0 as f64,
            simulated_share: core.stats.busy_ps as f64 / span,
            simulated_packets: n,
        })
    }
}

/// Time between frame starts at `rate` for `frame` bytes plus `overhead`
/// (the study's budget: preamble/SFD 8 + gap 12 = 20 B), in nanoseconds.
pub fn budget_ns(rate: Bandwidth, frame: u64, overhead: u64) -> f64 {
    (frame + overhead) as f64 * 8.0 * 1e9 / rate.0 as f64
}
