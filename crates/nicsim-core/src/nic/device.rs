//! The NIC model of a timed host: its descriptor rings, receive FIFO, the
//! states of its two DMA engines, interrupt moderation state, and counters.
//! What moves frames between these (the DMA timing over the bus, the
//! driver, the link) is the assembly's; what an offload engine does to the
//! frames is in [`super::offload`].
//!
//! ```text
//!  TX: qdisc ─▶ tx_ring (tx_used descriptors) ─▶ DMA ─▶ wire ─▶ tx_done (to clean)
//!  RX: wire ─▶ rx_fifo (bytes bounded) ─▶ DMA into a posted buffer ─▶ rx_done ─▶ driver
//! ```
//!
//! Units: bytes, frames, descriptors, picoseconds.

use std::collections::VecDeque;

use serde::Serialize;

use super::dim::Dim;
use crate::engine::{Dur, EventKey, Time};
use crate::host::timing::{Moderation, NicConfig};
use crate::host::TxFrame;

/// What happens in a NIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NicEvent {
    /// The TX DMA finished fetching the head frame.
    TxDma,
    /// The RX DMA finished writing the head frame to memory.
    RxDma,
    /// The interrupt-moderation timer fired.
    Irq,
    /// The moderation timer of the application core's send channel fired (`nic.xps`).
    XpsIrq,
}

/// The send channel of the application's core (`nic.xps`): completions of
/// the frames that core sent, its interrupt and its NAPI.
#[derive(Debug, Default)]
pub struct XpsChannel {
    /// Sent frames awaiting clean-up.
    pub done: u32,
    /// When the first of them was sent.
    pub since: Option<Time>,
    /// Its interrupt is off while its NAPI cleans.
    pub masked: bool,
    /// The armed moderation timer's event, to cancel it.
    pub timer: Option<EventKey>,
}

/// Counters of a timed host's NIC.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NicStats {
    /// Frames DMA'd into memory.
    pub rx_frames: u64,
    /// Frames DMA'd out of memory and sent.
    pub tx_frames: u64,
    /// Frames dropped because the receive FIFO was full.
    pub rx_fifo_drops: u64,
    /// Times the NIC paused the link because its FIFO was full.
    pub pauses: u64,
    /// Interrupts raised.
    pub interrupts: u64,
    /// Times a polling communication processor found the NIC with work (offload, poll mode).
    pub polls: u64,
    /// Most receive descriptors filled and not yet processed at once.
    pub max_rx_ring_used: u32,
    /// Most transmit descriptors in use at once.
    pub max_tx_ring_used: u32,
    /// Most bytes in the receive FIFO at once.
    pub max_rx_fifo: u64,
    /// With DIM: its receive profile at the end (0 to 4) and how many
    /// times it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dim_profile: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dim_changes: Option<u64>,
}

/// NIC state of a timed host.
#[derive(Debug, Default)]
pub struct Nic {
    /// Frames posted to the TX ring, not yet fetched by DMA.
    pub tx_ring: VecDeque<TxFrame>,
    /// TX descriptors in use (posted, in DMA, or sent but not cleaned).
    pub tx_used: u32,
    /// Byte queue limits of the TX ring (`nic.bql`), and the bytes of each
    /// frame posted and not yet cleaned, oldest first.
    pub bql: Option<crate::host::qdisc::Bql>,
    pub tx_posted_bytes: VecDeque<u64>,
    /// The TX DMA is fetching this many frames from the ring's head
    /// (`nic.tx_dma_outstanding` at most), which will put this many
    /// segments on the link.
    pub tx_dma: (usize, usize),
    /// When the last frame given to the TX DMA will be in the NIC: the
    /// send queue is processed in order, so no frame is in before it.
    pub tx_dma_last: Time,
    /// Sent frames awaiting clean-up.
    pub tx_done: u32,
    /// When the first of the frames awaiting clean-up was sent.
    pub tx_done_since: Option<Time>,
    /// Frames waiting for the RX DMA, with the segments merged into each
    /// (with a NIC LRO engine: merged frames in its RB memory).
    pub rx_fifo: VecDeque<(Vec<u8>, u32)>,
    /// Bytes in `rx_fifo`.
    pub rx_fifo_bytes: u64,
    /// Frames held on the wire while the link is paused.
    pub rx_held: VecDeque<Vec<u8>>,
    /// Receive descriptors with a buffer posted.
    pub rx_posted: u32,
    /// The RX DMA is writing the head FIFO frame.
    pub rx_dma_busy: bool,
    /// Frames in host memory awaiting the driver, with their DMA completion time.
    pub rx_done: VecDeque<(Time, Vec<u8>, u32)>,
    /// Interrupts are off while the driver polls (NAPI).
    pub masked: bool,
    /// When the last interrupt was raised.
    pub last_irq: Option<Time>,
    /// The armed moderation timer's event, to cancel it.
    pub irq_timer: Option<EventKey>,
    /// When the armed moderation timer fires.
    pub irq_armed: Option<Time>,
    /// Dynamic interrupt moderation on receive (`nic.dim`).
    pub dim: Option<Dim>,
    /// The application core's send channel (`nic.xps`).
    pub xps: XpsChannel,
    /// Counters.
    pub stats: NicStats,
}

impl Nic {
    /// A NIC with `rx_ring` receive buffers posted, with or without DIM.
    pub fn new(rx_ring: u32, dim: bool) -> Nic {
        Nic { rx_posted: rx_ring, dim: dim.then(Dim::default), ..Default::default() }
    }

    /// Post `frame` to a TX ring of `slots` descriptors if one is free and
    /// the byte queue limits (if any) let the ring take more; else give it
    /// back.
    pub fn post_tx(&mut self, frame: TxFrame, slots: u32) -> Option<TxFrame> {
        if self.tx_used >= slots || self.bql.as_ref().is_some_and(|q| !q.open()) {
            return Some(frame);
        }
        self.tx_used += 1;
        self.stats.max_tx_ring_used = self.stats.max_tx_ring_used.max(self.tx_used);
        if let Some(q) = self.bql.as_mut() {
            let bytes = frame.bytes.len() as u64;
            q.queued(bytes);
            self.tx_posted_bytes.push_back(bytes);
        }
        self.tx_ring.push_back(frame);
        None
    }

    /// `n` sent descriptors were cleaned at `now`: their slots are free and
    /// their bytes complete (byte queue limits).
    pub fn tx_cleaned(&mut self, n: u32, now: Time) {
        self.tx_used -= n;
        if let Some(q) = self.bql.as_mut() {
            let bytes = (0..n).filter_map(|_| self.tx_posted_bytes.pop_front()).sum();
            q.completed(bytes, now);
        }
    }

    /// Whether a frame waits for the driver (received, or sent and not cleaned).
    pub fn work_pending(&self) -> bool {
        !self.rx_done.is_empty() || self.tx_done > 0
    }

    /// Frames are still in the NIC: its FIFO, or held on the link.
    pub fn holding(&self) -> bool {
        !self.rx_fifo.is_empty() || !self.rx_held.is_empty()
    }

    /// When moderation `m` wants the next interrupt, if any work waits:
    /// receive after `rx_packets` frames or the delays, transmit after
    /// `tx_delay`, never closer than `min_interval` to the last. An engine's
    /// `(rx_packets, rx_abs_delay)` overrides the profile's. Not before `now`.
    pub fn irq_due(&self, m: &Moderation, engine: Option<(u32, Dur)>, now: Time) -> Option<Time> {
        let (rx_packets, rx_abs_delay) = engine.unwrap_or((m.rx_packets, m.rx_abs_delay.dur()));
        let mut due: Option<Time> = None;
        if let (Some((first, ..)), Some((last, ..))) = (self.rx_done.front(), self.rx_done.back()) {
            let rx = if self.rx_done.len() as u32 >= rx_packets {
                *last
            } else {
                let mut at = Time(u64::MAX);
                if rx_abs_delay.0 > 0 {
                    at = at.min(*first + rx_abs_delay);
                }
                if m.rx_delay.0 > 0 {
                    at = at.min(*last + m.rx_delay.dur());
                }
                at
            };
            due = Some(rx);
        }
        if let Some(first) = self.tx_done_since {
            let tx = first + m.tx_delay.dur();
            due = Some(due.map_or(tx, |d| d.min(tx)));
        }
        let mut at = due?;
        if let Some(last) = self.last_irq {
            at = at.max(last + m.min_interval.dur());
        }
        Some(at.max(now))
    }

    /// Check the rings and FIFO against their bounds (`cfg`) and their
    /// bookkeeping against their contents; `unbounded_rx` when the queue to
    /// the RX DMA is an offload engine's own memory. A failure is a bug.
    pub fn check_invariants(&self, cfg: &NicConfig, unbounded_rx: bool) -> Result<(), String> {
        let n = self;
        let fifo: u64 = n.rx_fifo.iter().map(|(f, _)| f.len() as u64).sum();
        let fifo_cap = if unbounded_rx { u64::MAX } else { cfg.rx_fifo.0 };
        let in_rx_ring = u64::from(n.rx_posted) + n.rx_done.len() as u64 + u64::from(n.rx_dma_busy);
        let checks = [
            (n.tx_used <= cfg.tx_ring, format!("{} TX descriptors used of {}", n.tx_used, cfg.tx_ring)),
            (
                n.tx_ring.len() as u64 <= u64::from(n.tx_used),
                format!("{} frames on the TX ring but {} descriptors used", n.tx_ring.len(), n.tx_used),
            ),
            (
                in_rx_ring <= u64::from(cfg.rx_ring),
                format!("{in_rx_ring} RX descriptors posted, in DMA or filled, of {}", cfg.rx_ring),
            ),
            (fifo == n.rx_fifo_bytes, format!("RX FIFO holds {fifo} bytes but counts {}", n.rx_fifo_bytes)),
            (
                n.rx_fifo_bytes <= fifo_cap,
                format!("RX FIFO holds {} bytes, above its {}", n.rx_fifo_bytes, cfg.rx_fifo),
            ),
            (
                n.stats.max_rx_fifo <= cfg.rx_fifo.0,
                format!("RX FIFO peaked at {} bytes, above its {}", n.stats.max_rx_fifo, cfg.rx_fifo),
            ),
            (
                n.stats.max_tx_ring_used <= cfg.tx_ring,
                format!("TX ring peaked at {} of {}", n.stats.max_tx_ring_used, cfg.tx_ring),
            ),
            (
                n.stats.max_rx_ring_used <= cfg.rx_ring,
                format!("RX ring peaked at {} of {}", n.stats.max_rx_ring_used, cfg.rx_ring),
            ),
            (!n.rx_dma_busy || !n.rx_fifo.is_empty(), "an RX DMA is running with an empty FIFO".to_string()),
        ];
        match checks.into_iter().find(|(ok, _)| !ok) {
            Some((_, why)) => Err(why),
            None => Ok(()),
        }
    }
}
