//! The NIC's LRO engine on its own core (Elbeshti et al. 2012) as a receive
//! offload: frames from the wire wait in the receive buffer interface (RBI,
//! two buffers; both full: overrun drop), the core runs the frame's class
//! program and moves it into RB memory ([`super::super::risc`] says how long),
//! the engine ([`super::lro`]) merges it, and merged frames queue in RB
//! memory for the host DMA. A flush timer hands held streams to the host
//! when no frame came for `flush_timeout`.
//!
//! ```text
//!  link ─▶ RBI ─▶ core: class program + RBI→RB move ─▶ engine ─▶ RB memory ─▶ RX DMA
//! ```
//!
//! Units: picoseconds of simulated time, core cycles, bytes.

use std::collections::VecDeque;

use serde::Serialize;

use super::lro::{LroConfig, LroStats, NicLro};
use super::merge::{Coalesced, Coalescer};
use super::{Action, OffloadEvent, RxCx, RxOffload};
use crate::engine::{Dur, Priority};
use crate::host::timing::LroMode;
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
pub struct NicEngine {
    lro: NicLro,
    core: CoreConfig,
    buffers: usize,
    timeout: Dur,
    /// Frames in the RBI; the head is on the core while `busy`.
    rbi: VecDeque<Vec<u8>>,
    busy: bool,
    /// Frames for the host the frame on the core releases when it is done.
    releases: Vec<Coalesced>,
    stats: NicCoreStats,
}

impl NicEngine {
    /// The engine a host with `timing` has, if `nic.lro = "nic"`.
    pub fn from_host(host: &super::Setup) -> Option<NicEngine> {
        let timing = host.timing;
        if timing.nic.lro != LroMode::Nic {
            return None;
        }
        let e = &timing.nic.lro_engine;
        let cfg = LroConfig {
            cam_entries: e.cam_entries as usize,
            pages: e.pages as usize,
            page_size: e.page_size.0,
            flush_packets: e.flush_packets,
            trusted: host.trusted,
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
            stats: NicCoreStats::default(),
        })
    }

    /// Start the core on the head RBI buffer if it is free: the engine
    /// classifies and merges the frame, the core's program and the RBI→RB
    /// move take the time the core model says.
    fn kick(&mut self, cx: &mut RxCx) {
        if self.busy {
            return;
        }
        let Some(frame) = self.rbi.front().cloned() else { return };
        let size = ip_len(&frame);
        let mut out = std::mem::take(&mut self.releases);
        // A frame that is not TCP/IPv4 costs the core an SSM's program (it
        // only hands it on).
        let class = self.lro.push(frame, &mut out).unwrap_or(crate::nic::LroClass::Ssm);
        let c = self.core.frame(class, size);
        self.stats.busy_cycles += c.busy;
        self.stats.idle_cycles += c.idle;
        let ps = self.core.frame_ps(&c);
        self.stats.frames += 1;
        self.busy = true;
        self.releases = out;
        cx.actions.push(Action::Timer(cx.now + Dur(ps), Priority::WIRE, OffloadEvent::CoreDone));
    }

    /// Merged frames enter the RB memory's queue to the host DMA.
    fn to_host(out: Vec<Coalesced>, cx: &mut RxCx) {
        if out.is_empty() {
            return;
        }
        cx.actions.extend(out.into_iter().map(|c| Action::ToHost(c.frame, c.segments)));
        cx.actions.push(Action::KickRx);
    }
}

/// IP packet length of an Ethernet frame (what the NIC core's DMA rule takes).
fn ip_len(frame: &[u8]) -> u64 {
    frame.len().saturating_sub(crate::link::ETH_HEADER as usize) as u64
}

impl RxOffload for NicEngine {
    /// Into a free RBI buffer, or dropped if both are full.
    fn arrive(&mut self, cx: &mut RxCx, frame: Vec<u8>) -> Option<Vec<u8>> {
        if self.rbi.len() >= self.buffers {
            self.stats.rbi_overruns += 1;
            return None;
        }
        self.rbi.push_back(frame);
        self.kick(cx);
        None
    }

    fn on_event(&mut self, cx: &mut RxCx, ev: OffloadEvent) {
        match ev {
            // The core finished its frame: free the RBI buffer, arm the
            // flush timer if streams are held, take the next frame.
            OffloadEvent::CoreDone => {
                self.busy = false;
                self.rbi.pop_front();
                let out = std::mem::take(&mut self.releases);
                if self.lro.held() > 0 {
                    // Re-arming cancels the timer armed for the frame before.
                    cx.actions.push(Action::Rearm(cx.now + self.timeout, Priority::DEVICE, OffloadEvent::Flush));
                }
                Self::to_host(out, cx);
                self.kick(cx);
            }
            // If no frame came since the timer was armed, hand every held
            // stream to the host.
            OffloadEvent::Flush => {
                if self.busy || self.lro.held() == 0 {
                    return;
                }
                let mut out = Vec::new();
                self.lro.flush(&mut out);
                self.stats.timer_flushes += 1;
                Self::to_host(out, cx);
            }
            _ => {}
        }
    }

    fn owns_rx_queue(&self) -> bool {
        true
    }

    fn report(&self, into: &mut super::OffloadReport) {
        into.lro = Some(NicLroReport { core: self.stats.clone(), engine: self.lro.stats().clone() });
    }
}
