//! PCI and PCI-X: one shared, half-duplex bus moving data in bursts.
//!
//! A transfer of `n` bytes is split into bursts of at most `max_burst`
//! bytes. A burst of `b` bytes costs `ceil(b / width)` data cycles plus
//! `overhead` cycles, plus `read_latency` cycles if it reads (a device read
//! of host memory, or a CPU read of a device register):
//!
//! ```text
//! cycles(n) = Σ over bursts b of  ceil(b / width) + overhead [+ read_latency]
//! time(n)   = ceil(cycles(n) × 10¹² / clock)  ps
//! ```
//!
//! A cycle at 33 MHz is 30 303.03… ps, so cycles are summed exactly and the
//! transfer's total is rounded up to a whole picosecond once: a transfer is
//! never shorter than on the real bus and the error is below 1 ps per
//! transfer. Transfers start when requested, not on the next clock edge.
//! Not modelled: retries and disconnects, delayed transactions, PCI-X split
//! transactions (the read latency holds the bus, which is pessimistic when
//! other traffic could use it), the latency timer, and other masters.

use crate::engine::time::PS_PER_S;
use crate::engine::Dur;

/// The timing of a PCI or PCI-X bus.
#[derive(Debug, Clone)]
pub(super) struct BurstBus {
    /// Bytes per data cycle.
    width: u64,
    /// Bus clock, Hz.
    clock: u64,
    /// Largest burst, bytes.
    max_burst: u64,
    /// Cycles per burst beyond the data cycles.
    overhead: u64,
    /// Extra cycles per reading burst.
    read_latency: u64,
}

impl BurstBus {
    /// A bus `width_bits` wide at `clock` Hz with the given burst costs.
    pub(super) fn new(width_bits: u32, clock: u64, max_burst: u64, overhead: u32, read_latency: u32) -> Self {
        let width = u64::from(width_bits / 8);
        assert!(width > 0 && clock > 0 && max_burst >= width, "bus config not validated");
        BurstBus { width, clock, max_burst, overhead: overhead.into(), read_latency: read_latency.into() }
    }

    /// Bus cycles one burst of `bytes` costs.
    fn burst_cycles(&self, read: bool, bytes: u64) -> u128 {
        let data = bytes.div_ceil(self.width);
        let latency = if read { self.read_latency } else { 0 };
        u128::from(data + self.overhead + latency)
    }

    /// Bus cycles a transfer of `bytes` costs (0 for 0 bytes).
    pub(super) fn cycles(&self, read: bool, bytes: u64) -> u128 {
        let (full, rest) = (bytes / self.max_burst, bytes % self.max_burst);
        let mut cycles = u128::from(full) * self.burst_cycles(read, self.max_burst);
        if rest > 0 {
            cycles += self.burst_cycles(read, rest);
        }
        cycles
    }

    /// Time a transfer of `bytes` holds the bus, rounded up to a whole picosecond.
    pub(super) fn duration(&self, read: bool, bytes: u64) -> Dur {
        let ps = (self.cycles(read, bytes) * u128::from(PS_PER_S)).div_ceil(u128::from(self.clock));
        Dur(u64::try_from(ps).expect("bus transfer longer than u64 picoseconds"))
    }

    /// Sustained bytes/s of back-to-back full bursts.
    pub(super) fn peak_rate(&self, read: bool) -> f64 {
        self.max_burst as f64 * self.clock as f64 / self.burst_cycles(read, self.max_burst) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pci_32_33() -> BurstBus {
        BurstBus::new(32, 33_000_000, 512, 6, 8)
    }

    #[test]
    fn large_writes_sustain_kurmanns_126_mb_per_s() {
        let bus = pci_32_33();
        // 512 B bursts: 128 data + 6 overhead cycles; 132 MB/s × 128/134 = 126.09 MB/s.
        assert!((bus.peak_rate(false) - 132e6 * 128.0 / 134.0).abs() < 1.0);
        // 1 MiB = 2048 bursts × 134 cycles = 274 432 cycles = 8 316 121 212.12 ps → 8 316 121 213 ps.
        let bytes = 1 << 20;
        assert_eq!(bus.cycles(false, bytes), 274_432);
        let d = bus.duration(false, bytes);
        assert_eq!(d, Dur(8_316_121_213));
        let rate = bytes as f64 / d.as_secs_f64();
        assert!((rate / 126e6 - 1.0).abs() < 0.005, "{rate}");
    }

    #[test]
    fn a_16_byte_descriptor_costs_overhead_plus_4_data_cycles() {
        let bus = pci_32_33();
        // Write: 6 + 4 = 10 cycles = 10 × 10¹² / 33·10⁶ = 303 030.30 ps → 303 031 ps.
        assert_eq!(bus.cycles(false, 16), 10);
        assert_eq!(bus.duration(false, 16), Dur(303_031));
        // Read adds 8 cycles of memory latency: 18 cycles = 545 454.54 ps → 545 455 ps.
        assert_eq!(bus.cycles(true, 16), 18);
        assert_eq!(bus.duration(true, 16), Dur(545_455));
    }

    #[test]
    fn partial_bursts_and_odd_sizes_round_up_to_whole_data_cycles() {
        let bus = pci_32_33();
        // 513 B: one full burst (134) + a 1-byte burst (1 + 6).
        assert_eq!(bus.cycles(false, 513), 134 + 7);
        // 15 B: 4 data cycles (byte enables mask the last one).
        assert_eq!(bus.cycles(false, 15), 10);
        assert_eq!(bus.cycles(false, 0), 0);
        assert_eq!(bus.duration(true, 0), Dur::ZERO);
        // 2 reading bursts of 512 B pay the latency twice: 2 × (128 + 6 + 8).
        assert_eq!(bus.cycles(true, 1024), 284);
    }

    #[test]
    fn pci_64_66_is_nearly_four_times_pci_32_33() {
        let slow = pci_32_33();
        let fast = BurstBus::new(64, 66_000_000, 512, 6, 16);
        // 512 B is 64 data cycles at 64 bits, so the 6 overhead cycles weigh double:
        // 528 MB/s × 64/70 = 482.74 MB/s = 4 × (64/70)/(128/134) = 3.829 × 126.09 MB/s.
        let ratio = fast.peak_rate(false) / slow.peak_rate(false);
        assert!((ratio - 4.0 * (64.0 / 70.0) / (128.0 / 134.0)).abs() < 1e-9, "{ratio}");
        assert!((ratio / 4.0 - 1.0).abs() < 0.05);
        // Exact: 1 MiB at 64/66 = 2048 × 70 cycles = 143 360 cycles = 2 172 121 212.12 ps.
        assert_eq!(fast.duration(false, 1 << 20), Dur(2_172_121_213));
    }

    #[test]
    fn exact_cycles_need_no_rounding() {
        // 66 cycles at 33 MHz is exactly 2 µs.
        let bus = BurstBus::new(32, 33_000_000, 512, 2, 0);
        assert_eq!(bus.cycles(false, 256), 66);
        assert_eq!(bus.duration(false, 256), Dur(2_000_000));
    }
}
