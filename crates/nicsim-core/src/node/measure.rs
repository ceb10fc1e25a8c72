//! Per-message measurement of a timed host (the echo workload, after the
//! Won study): per message and path, the DMA time of its frames in CPU
//! cycles, its frames, the span of its activity, and the driver's transmit
//! clean-up cycles. Units: picoseconds, cycles.

use std::collections::BTreeMap;

use crate::engine::{Dur, Time};
use crate::host::cpu::Path;

/// Per-message DMA cycles, spans and frame counts of a timed host.
#[derive(Debug, Default)]
pub(crate) struct Measure {
    /// DMA cycles per (message, path).
    pub(crate) dma: BTreeMap<(u64, Path), u64>,
    /// Frames DMA'd per (message, path).
    pub(crate) frames: BTreeMap<(u64, Path), u64>,
    /// First and last activity per (message, path).
    pub(crate) spans: BTreeMap<(u64, Path), (Time, Time)>,
    /// A transmit-only interrupt serves the send path (echo workload).
    pub(crate) tx_irq_on_send: bool,
    /// The host sends VIA frames (echo workload over VIA): its driver
    /// reclaims sent frames with `via_tx_done`.
    pub(crate) via: bool,
    /// Driver cycles of transmit completions (run in the interrupt handler)
    /// per message (echo workload only).
    pub(crate) tx_clean: BTreeMap<u64, u64>,
}

impl Measure {
    /// Activity of (`msg`, `path`) from `from` to `to`.
    pub(crate) fn touch(&mut self, msg: u64, path: Path, from: Time, to: Time) {
        let span = self.spans.entry((msg, path)).or_insert((from, to));
        span.0 = span.0.min(from);
        span.1 = span.1.max(to);
    }

    /// The driver reclaimed sent frames of `msg` in `cycles` (echo only).
    pub(crate) fn tx_clean(&mut self, msg: u64, cycles: u64) {
        if self.tx_irq_on_send {
            *self.tx_clean.entry(msg).or_default() += cycles;
        }
    }

    /// A DMA of one frame of (`msg`, `path`) from `from` to `to`, `cycles` long.
    pub(crate) fn dma(&mut self, msg: u64, path: Path, from: Time, to: Time, cycles: u64) {
        *self.dma.entry((msg, path)).or_default() += cycles;
        *self.frames.entry((msg, path)).or_default() += 1;
        self.touch(msg, path, from, to);
    }
}

/// DMA of `len` ps on host `h`'s application core, in cycles.
pub(crate) fn dma_cycles(hz: u64, d: Dur) -> u64 {
    (u128::from(d.0) * u128::from(hz) / u128::from(crate::engine::time::PS_PER_S)) as u64
}
