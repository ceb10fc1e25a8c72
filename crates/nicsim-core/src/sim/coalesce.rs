//! Receive coalescing in the timed host: the NIC's LRO engine on its own
//! core (Elbeshti et al. 2012), or GRO / software LRO in the driver.
//!
//! ```text
//!  nic:       link ─▶ RBI (2 buffers; both full: overrun drop) ─▶ NIC core:
//!             class program + RBI→RB move (nic::risc) ─▶ engine (nic::lro) ─▶
//!             merged frames in RB memory ─▶ RX DMA ─▶ driver: one frame per merge
//!  gro/sw:    link ─▶ FIFO ─▶ RX DMA ─▶ driver: per frame driver_rx + gro_rx/lro_rx,
//!             engine (nic::gro), flush at the end of the batch ─▶ per merged
//!             frame device/ip/tcp ─▶ smoltcp
//! ```
//!
//! The engines decide *what* reaches the stack (real merged frames); this
//! file decides *when*, and what the host and NIC cores pay for it.

use std::collections::VecDeque;

use serde::Serialize;

use super::timed::{shape, Next};
use super::{Event, Sim};
use crate::engine::{Dur, Priority, Time};
use crate::host::cpu::{Class, Job, Layer, Path};
use crate::host::timing::{Cost, LroMode, Timing};
use crate::nic::gro::{Gro, GroConfig, GroStats};
use crate::nic::lro::{LroConfig, LroStats, NicLro};
use crate::nic::offload::merge::Coalesced;
use crate::nic::risc::{CoreConfig, DmaClock};

/// Counters of the NIC LRO engine's core.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NicCoreStats {
    /// Frames the core processed.
    pub frames: u64,
    /// Frames that found both RBI buffers full (dropped).
    pub rbi_overruns: u64,
    /// Core cycles spent running the class programs.
    pub busy_cycles: u64,
    /// Core cycles stalled waiting for the DMA to free the bus.
    pub idle_cycles: u64,
    /// Flushes by the engine's timer (a stream waited `flush_timeout`).
    pub timer_flushes: u64,
}

/// What a timed host's NIC LRO engine reports.
#[derive(Debug, Clone, Serialize)]
pub struct NicLroReport {
    /// The core.
    pub core: NicCoreStats,
    /// The coalescing engine.
    pub engine: LroStats,
}

/// The NIC's LRO engine, its core and its receive buffers.
#[derive(Debug)]
pub(super) struct NicEngine {
    lro: NicLro,
    core: CoreConfig,
    buffers: usize,
    timeout: Dur,
    /// Frames in the RBI; the head is on the core while `busy`.
    rbi: VecDeque<Vec<u8>>,
    busy: bool,
    /// Frames for the host the frame on the core releases when it is done.
    releases: Vec<Coalesced>,
    /// Generation of the armed flush timer.
    timer: u64,
    pub(super) stats: NicCoreStats,
}

impl NicEngine {
    /// The engine a host with `timing` has, if `nic.lro = "nic"`.
    pub(super) fn for_timing(timing: &Timing) -> Option<NicEngine> {
        if timing.nic.lro != LroMode::Nic {
            return None;
        }
        let e = &timing.nic.lro_engine;
        let cfg = LroConfig {
            cam_entries: e.cam_entries as usize,
            pages: e.pages as usize,
            page_size: e.page_size.0,
            flush_packets: e.flush_packets,
        };
        let mut core = CoreConfig::study(e.core_clock, DmaClock::Ratio(e.dma_ratio));
        core.window = u64::from(e.flush_packets);
        Some(NicEngine {
            lro: NicLro::new(cfg),
            core,
            buffers: e.rbi_buffers as usize,
            timeout: e.flush_timeout.dur(),
            rbi: VecDeque::new(),
            busy: false,
            releases: Vec::new(),
            timer: 0,
            stats: NicCoreStats::default(),
        })
    }

    /// The report of this engine.
    pub(super) fn report(&self) -> NicLroReport {
        NicLroReport { core: self.stats.clone(), engine: self.lro.stats().clone() }
    }
}

/// GRO or software LRO in the driver.
#[derive(Debug)]
pub(super) struct HostCoalescer {
    gro: Gro,
    /// Per received frame, on the stack core.
    cost: Cost,
}

impl HostCoalescer {
    /// The coalescer a host with `timing` runs, if `nic.lro` is `gro` or `software`.
    pub(super) fn for_timing(timing: &Timing) -> Option<HostCoalescer> {
        let cost = match timing.nic.lro {
            LroMode::Gro => timing.costs.gro_rx,
            // Linux's inet_lro merged by the same rules GRO later took over
            // (in-order, same headers, flushed at the end of the NAPI poll);
            // it differs in what it costs.
            LroMode::Software => timing.costs.lro_rx,
            LroMode::Off | LroMode::Nic => return None,
        };
        Some(HostCoalescer { gro: Gro::new(GroConfig::default()), cost })
    }

    /// What the coalescer did.
    pub(super) fn stats(&self) -> &GroStats {
        self.gro.stats()
    }
}

/// IP packet length of an Ethernet frame (what the NIC core's DMA rule takes).
fn ip_len(frame: &[u8]) -> u64 {
    frame.len().saturating_sub(crate::link::ETH_HEADER as usize) as u64
}

impl Sim {
    /// A frame reaches a NIC that runs the LRO engine: into a free RBI
    /// buffer, or dropped if both are full.
    pub(super) fn lro_arrive(&mut self, h: usize, frame: Vec<u8>, now: Time) {
        let e = self.timed(h).nic.engine.as_mut().expect("an LRO engine");
        if e.rbi.len() >= e.buffers {
            e.stats.rbi_overruns += 1;
            return;
        }
        e.rbi.push_back(frame);
        self.lro_core_kick(h, now);
    }

    /// Start the core on the head RBI buffer if it is free: the engine
    /// classifies and merges the frame, the core's program and the RBI→RB
    /// move take the time the core model says.
    fn lro_core_kick(&mut self, h: usize, now: Time) {
        let e = self.timed(h).nic.engine.as_mut().expect("an LRO engine");
        if e.busy {
            return;
        }
        let Some(frame) = e.rbi.front().cloned() else { return };
        let size = ip_len(&frame);
        let mut out = std::mem::take(&mut e.releases);
        // A frame that is not TCP/IPv4 costs the core an SSM's program (it
        // only hands it on).
        let class = e.lro.push(frame, &mut out).unwrap_or(crate::nic::LroClass::Ssm);
        let c = e.core.frame(class, size);
        e.stats.busy_cycles += c.busy;
        e.stats.idle_cycles += c.idle;
        let ps = e.core.frame_ps(&c);
        e.stats.frames += 1;
        e.busy = true;
        e.releases = out;
        let done = now + Dur(ps);
        self.sched.at(done, Priority::WIRE, Event::LroCore(h));
    }

    /// The core finished its frame: free the RBI buffer, arm the flush
    /// timer if streams are held, take the next frame.
    pub(super) fn on_lro_core(&mut self, h: usize, now: Time) {
        let e = self.timed(h).nic.engine.as_mut().expect("an LRO engine");
        e.busy = false;
        e.rbi.pop_front();
        let out = std::mem::take(&mut e.releases);
        if e.lro.held() > 0 {
            e.timer += 1;
            let (g, at) = (e.timer, now + e.timeout);
            self.sched.at(at, Priority::DEVICE, Event::LroFlush(h, g));
        }
        self.lro_to_host(h, out, now);
        self.lro_core_kick(h, now);
    }

    /// The flush timer fired: if no frame came since it was armed, hand
    /// every held stream to the host.
    pub(super) fn on_lro_flush(&mut self, h: usize, generation: u64, now: Time) {
        let e = self.timed(h).nic.engine.as_mut().expect("an LRO engine");
        if generation != e.timer || e.busy || e.lro.held() == 0 {
            return;
        }
        let mut out = Vec::new();
        e.lro.flush(&mut out);
        e.stats.timer_flushes += 1;
        self.lro_to_host(h, out, now);
    }

    /// Merged frames enter the RB memory's queue to the host DMA.
    fn lro_to_host(&mut self, h: usize, out: Vec<Coalesced>, now: Time) {
        if out.is_empty() {
            return;
        }
        let t = self.timed(h);
        for c in out {
            t.nic.rx_fifo_bytes += c.frame.len() as u64;
            t.nic.rx_fifo.push_back((c.frame, c.segments));
        }
        self.nic_rx_kick(h, now);
    }

    /// The driver's receive work on a batch when it coalesces: each frame
    /// costs the driver and the coalescer; each merged frame then climbs
    /// the stack once. Pushes one job per merged frame onto `jobs`; returns
    /// the work on frames merged away after the last one (for the batch's
    /// closing job).
    pub(super) fn coalesce_batch(
        &mut self,
        h: usize,
        core: usize,
        frames: Vec<(Vec<u8>, u32)>,
        msg: Option<u64>,
        jobs: &mut Vec<Job<Next>>,
    ) -> Vec<(Layer, u64)> {
        let t = self.timed(h);
        let per_frame = vec![
            (Layer::Driver, t.timing.cycles_on(core, t.timing.costs.driver_rx)),
            (Layer::Coalesce, t.timing.cycles_on(core, t.host_lro.as_ref().expect("a coalescer").cost)),
        ];
        let mut pending: Vec<(Layer, u64)> = Vec::new();
        let mut out = Vec::new();
        let n = frames.len();
        for (i, (frame, _)) in frames.into_iter().enumerate() {
            let t = self.timed(h);
            let c = t.host_lro.as_mut().expect("a coalescer");
            c.gro.push(frame, &mut out);
            if i + 1 == n {
                c.gro.flush(&mut out);
            }
            pending.extend_from_slice(&per_frame);
            for merged in out.drain(..) {
                let t = self.timed(h);
                let mut pieces = std::mem::take(&mut pending);
                pieces.extend(t.rx_pieces(shape(&merged.frame), core).into_iter().filter(|(l, _)| *l != Layer::Driver));
                let job = Job::new(Class::Softirq, pieces, Next::RxDeliver(merged.frame, merged.segments));
                jobs.push(job.for_msg(msg).on(Path::Receive));
            }
        }
        pending
    }
}
