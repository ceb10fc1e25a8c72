//! The I/O bus between a NIC and host memory: a shared resource that DMA
//! transfers (the NIC reading or writing memory) and MMIO accesses (the CPU
//! reading or writing a device register, e.g. a doorbell) must reserve.
//!
//! ```text
//! PCI, PCI-X:  NIC ══ one half-duplex bus, bursts ══ host bridge ── memory
//!
//! PCIe:        NIC ── upstream:   DMA writes, read requests, MMIO completions ─→ root complex ── memory
//!                  ←─ downstream: read completions, MMIO writes and requests ──
//! ```
//!
//! * **PCI / PCI-X** ([`pci`]): one resource; a transfer is split into
//!   bursts, each costing its data cycles plus a fixed overhead, plus a read
//!   latency when it reads. Default PCI 32-bit/33 MHz: 126 MB/s for large
//!   writes, the figure Kurmann et al. measured on a 440BX chipset.
//! * **PCIe** ([`pcie`]): two independent directions; writes are TLPs of at
//!   most `max_payload` bytes, reads are requests of at most
//!   `max_read_request` bytes answered by completions in the other
//!   direction after one `read_latency` per transfer.
//! * **Ideal**: no resource; every transfer is free and instant.
//!
//! [`Bus::transfer`] reserves the resources a transfer needs, first come
//! first served in call order, and returns its completion time; transfers
//! are not interleaved at burst or TLP granularity, except that on PCIe a
//! transfer of one TLP goes between the queued ones. [`Bus::duration`] is
//! the unloaded time of the same transfer. Times are integer picoseconds,
//! rounded up once per transfer (per direction for PCIe reads); sizes are
//! bytes; rates in bytes/s are `f64` for reports only. Not modelled: other
//! bus masters, retries, replay, credits, ordering rules, IOMMU/ATS (see
//! each submodule and `docs/models/bus.md`).

mod config;
pub mod pci;
pub mod pcie;

use serde::Serialize;

pub use config::{
    default_read_latency_cycles, BusConfig, BUS_READ_LATENCY_PS, MAX_BURST, PCIE_MAX_PAYLOAD, PCIE_MAX_READ_REQUEST,
    PCIE_READ_LATENCY_PS, PCIX_CLOCK_HZ, PCIX_OVERHEAD_CYCLES, PCI_CLOCK_HZ, PCI_OVERHEAD_CYCLES, PCI_WIDTH_BITS,
};

use crate::engine::{Dur, Time};
use pci::BurstBus;
use pcie::{PcieLink, ReadCost};

/// Index of the one resource of PCI and PCI-X in [`BusStats::resources`].
pub const SHARED: usize = 0;
/// Index of PCIe's device→host direction in [`BusStats::resources`].
pub const UPSTREAM: usize = 0;
/// Index of PCIe's host→device direction in [`BusStats::resources`].
pub const DOWNSTREAM: usize = 1;

/// What a transfer does on the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BusOp {
    /// NIC DMA into host memory (RX data, descriptor write-back).
    DeviceWrite,
    /// NIC DMA from host memory (TX data, descriptor fetch).
    DeviceRead,
    /// CPU posted write to a device register (doorbell).
    MmioWrite,
    /// CPU read of a device register (non-posted, a round trip).
    MmioRead,
}

impl BusOp {
    /// Every operation.
    pub const ALL: [BusOp; 4] = [BusOp::DeviceWrite, BusOp::DeviceRead, BusOp::MmioWrite, BusOp::MmioRead];

    /// Whether data flows back to the initiator (a read, which pays the read latency).
    pub fn is_read(self) -> bool {
        matches!(self, BusOp::DeviceRead | BusOp::MmioRead)
    }

    /// Whether the NIC initiates it (DMA) rather than the CPU (MMIO).
    pub fn by_device(self) -> bool {
        matches!(self, BusOp::DeviceWrite | BusOp::DeviceRead)
    }
}

/// Counters of one bus resource (the PCI bus, or one PCIe direction).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ResourceStats {
    /// `"bus"`, `"upstream"` or `"downstream"`.
    pub name: &'static str,
    /// Picoseconds reserved for transfers (read latency excluded on PCIe).
    pub busy_ps: u64,
}

/// Counters of a bus.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BusStats {
    /// Transfers reserved (zero-byte ones are not counted).
    pub transfers: u64,
    /// Payload bytes they moved.
    pub bytes: u64,
    /// Picoseconds transfers waited for a busy resource, summed.
    pub wait_ps: u64,
    /// One entry per resource: none (ideal), one (PCI, PCI-X) or two (PCIe: upstream, downstream).
    pub resources: Vec<ResourceStats>,
}

/// The timing model behind a [`Bus`].
#[derive(Debug, Clone)]
enum Model {
    Ideal,
    Burst(BurstBus),
    Pcie(PcieLink),
}

/// How one transfer uses the resources.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// Nothing to reserve.
    Free,
    /// Hold one resource for a time; with the largest TLP's time if the
    /// transfer is one TLP (it interleaves with queued transfers).
    Hold(usize, Dur, Option<Dur>),
    /// A split read: requests on the first resource, completions on the
    /// second; with the largest TLP's time if each side is one TLP.
    Read(usize, usize, ReadCost, Option<Dur>),
}

/// An I/O bus: the resources a NIC's DMA and the CPU's MMIO share.
#[derive(Debug, Clone)]
pub struct Bus {
    model: Model,
    /// When each resource is next free.
    free_at: Vec<Time>,
    stats: BusStats,
}

impl Bus {
    /// A bus built from a validated configuration.
    pub fn new(cfg: &BusConfig) -> Bus {
        let (model, names): (Model, &[&'static str]) = match *cfg {
            BusConfig::Pci { width_bits, clock, max_burst, overhead_cycles, read_latency_cycles } => (
                Model::Burst(BurstBus::new(width_bits, clock.0, max_burst.0, overhead_cycles, read_latency_cycles)),
                &["bus"],
            ),
            BusConfig::PciX { clock, max_burst, overhead_cycles, read_latency_cycles } => {
                (Model::Burst(BurstBus::new(64, clock.0, max_burst.0, overhead_cycles, read_latency_cycles)), &["bus"])
            }
            BusConfig::Pcie {
                gen,
                lanes,
                max_payload,
                max_read_request,
                completion_payload,
                read_latency,
                dllp_per_tlp,
            } => (
                Model::Pcie(PcieLink::new(
                    gen,
                    lanes,
                    max_payload.0,
                    max_read_request.0,
                    completion_payload.0,
                    read_latency.dur(),
                    dllp_per_tlp.0,
                )),
                &["upstream", "downstream"],
            ),
            BusConfig::Ideal => (Model::Ideal, &[]),
        };
        Bus {
            model,
            free_at: vec![Time::ZERO; names.len()],
            stats: BusStats {
                resources: names.iter().map(|&name| ResourceStats { name, busy_ps: 0 }).collect(),
                ..BusStats::default()
            },
        }
    }

    fn plan(&self, op: BusOp, bytes: u64) -> Plan {
        if bytes == 0 {
            return Plan::Free;
        }
        match &self.model {
            Model::Ideal => Plan::Free,
            Model::Burst(bus) => Plan::Hold(SHARED, bus.duration(op.is_read(), bytes), None),
            Model::Pcie(link) => {
                // The initiator's requests (and writes) travel away from it.
                let (out, back) = if op.by_device() { (UPSTREAM, DOWNSTREAM) } else { (DOWNSTREAM, UPSTREAM) };
                let tlp = link.largest_tlp();
                if op.is_read() {
                    let cost = link.read_cost(bytes);
                    Plan::Read(out, back, cost, cost.single.then_some(tlp))
                } else {
                    Plan::Hold(out, link.write_cost(bytes), link.single_write(bytes).then_some(tlp))
                }
            }
        }
    }

    /// Unloaded time of one transfer of `bytes` (pure; for tests and analytical models).
    pub fn duration(&self, op: BusOp, bytes: u64) -> Dur {
        match self.plan(op, bytes) {
            Plan::Free => Dur::ZERO,
            Plan::Hold(_, time, _) => time,
            Plan::Read(_, _, c, _) => c.first_request + c.latency + c.completions,
        }
    }

    /// Reserve the bus for a transfer requested at `now`: it starts when the
    /// resource(s) it needs are free (FIFO in call order) and returns its
    /// completion time. Updates busy time and counters. A PCIe read holds
    /// its request direction for all its requests, then its completion
    /// direction from `read_latency` after the first request (or later, if
    /// that direction is busy). A PCIe transfer of one TLP waits at most for
    /// the TLP on the wire, not for the transfers queued before it (the link
    /// interleaves TLPs; without this, a descriptor fetch ready at `t` would
    /// wait for every frame already booked and the frame's own data read
    /// would leave the link idle for a read latency). A zero-byte transfer
    /// is free and not counted.
    pub fn transfer(&mut self, now: Time, op: BusOp, bytes: u64) -> Time {
        if bytes == 0 {
            return now;
        }
        self.stats.transfers += 1;
        self.stats.bytes += bytes;
        match self.plan(op, bytes) {
            Plan::Free => now,
            Plan::Hold(res, time, tlp) => self.reserve(res, now, time, tlp).1,
            Plan::Read(out, back, c, tlp) => {
                let (start, _) = self.reserve(out, now, c.requests, tlp);
                self.reserve(back, start + c.first_request + c.latency, c.completions, tlp).1
            }
        }
    }

    /// Hold resource `res` for `time` from `at` or when it is free; (start, end).
    /// With `interleave` (the largest TLP's time), wait at most that long:
    /// the transfer goes between the queued ones, whose backlog grows by
    /// `time` (their completion times, already given out, stay).
    fn reserve(&mut self, res: usize, at: Time, time: Dur, interleave: Option<Dur>) -> (Time, Time) {
        let free = self.free_at[res];
        let start = match interleave {
            Some(tlp) if free > at => at + tlp.min(free.since(at)),
            _ => at.max(free),
        };
        let end = start + time;
        self.free_at[res] = at.max(free) + time;
        self.stats.wait_ps += (start - at).0;
        self.stats.resources[res].busy_ps += time.0;
        (start, end)
    }

    /// Sustained rate for large transfers of `op`, bytes/s (e.g. 126.1e6 for
    /// the default PCI 32/33 DeviceWrite; infinite for the ideal bus).
    pub fn peak_rate(&self, op: BusOp) -> f64 {
        match &self.model {
            Model::Ideal => f64::INFINITY,
            Model::Burst(bus) => bus.peak_rate(op.is_read()),
            Model::Pcie(link) if op.is_read() => link.read_peak(),
            Model::Pcie(link) => link.write_peak(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &BusStats {
        &self.stats
    }

    /// When every resource is free again (after all reserved transfers).
    pub fn idle_at(&self) -> Time {
        self.free_at.iter().copied().max().unwrap_or(Time::ZERO)
    }

    /// Busy fraction of the busiest resource over `[0, until]` (0 for the
    /// ideal bus). Reservations running past `until` count only up to it;
    /// this is exact when every transfer was requested at or before `until`,
    /// except a PCIe read whose completions were still in their latency gap
    /// (they count as if started at `until`, so the result is a lower bound).
    pub fn utilization(&self, until: Time) -> f64 {
        if until == Time::ZERO {
            return 0.0;
        }
        let per_resource = self.stats.resources.iter().zip(&self.free_at).map(|(r, free)| {
            let after = free.ps().saturating_sub(until.ps());
            r.busy_ps.saturating_sub(after) as f64 / until.ps() as f64
        });
        per_resource.fold(0.0, f64::max).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::PS_PER_US;

    fn buses() -> Vec<(&'static str, BusConfig)> {
        vec![
            ("PCI 32/33", BusConfig::pci_32_33()),
            ("PCI 64/66", BusConfig::pci_64_66()),
            ("PCI-X 133", BusConfig::pci_x_133()),
            ("PCIe gen1 x1", BusConfig::pcie(1, 1)),
            ("PCIe gen3 x8", BusConfig::pcie(3, 8)),
            ("PCIe gen4 x16", BusConfig::pcie(4, 16)),
        ]
    }

    #[test]
    fn ideal_bus_costs_nothing() {
        let mut bus = Bus::new(&BusConfig::Ideal);
        for op in BusOp::ALL {
            assert_eq!(bus.duration(op, 1 << 20), Dur::ZERO);
            assert_eq!(bus.transfer(Time(7), op, 1 << 20), Time(7));
        }
        assert_eq!(bus.peak_rate(BusOp::DeviceRead), f64::INFINITY);
        assert_eq!((bus.stats().transfers, bus.stats().bytes), (4, 4 << 20));
        assert!(bus.stats().resources.is_empty());
        assert_eq!(bus.utilization(Time(100)), 0.0);
    }

    #[test]
    fn an_idle_bus_completes_after_the_unloaded_duration() {
        for (name, cfg) in buses() {
            for op in BusOp::ALL {
                for bytes in [1, 16, 64, 1500, 4096, 65_536] {
                    let mut bus = Bus::new(&cfg);
                    let now = Time(12_345);
                    assert_eq!(bus.transfer(now, op, bytes), now + bus.duration(op, bytes), "{name} {op:?} {bytes}");
                    assert_eq!(bus.stats().wait_ps, 0);
                }
            }
        }
    }

    #[test]
    fn peak_rate_of_the_default_pci_is_126_mb_per_s() {
        let bus = Bus::new(&BusConfig::pci_32_33());
        // 132 MB/s × 128/134 = 126.09 MB/s; reads add 8 latency cycles per burst: × 128/142 = 118.99 MB/s.
        assert!((bus.peak_rate(BusOp::DeviceWrite) - 126.089_552e6).abs() < 1.0);
        assert!((bus.peak_rate(BusOp::DeviceRead) - 118.985_915e6).abs() < 1.0);
        let mut bus = bus;
        let end = bus.transfer(Time::ZERO, BusOp::DeviceWrite, 1 << 20);
        let rate = (1 << 20) as f64 / end.as_secs_f64();
        assert!((rate / 126e6 - 1.0).abs() < 0.005, "{rate}");
    }

    #[test]
    fn pci_serves_simultaneous_requests_one_after_the_other() {
        let mut bus = Bus::new(&BusConfig::pci_32_33());
        let d = bus.duration(BusOp::DeviceWrite, 1500);
        // 1500 B = 2 × 512 + 476: 2 × 134 + (119 + 6) = 393 cycles = 11 909 090.9 ps → 11 909 091 ps.
        assert_eq!(d, Dur(11_909_091));
        assert_eq!(bus.transfer(Time::ZERO, BusOp::DeviceWrite, 1500), Time(d.0));
        assert_eq!(bus.transfer(Time::ZERO, BusOp::DeviceWrite, 1500), Time(2 * d.0));
        // MMIO shares the one bus too: a 4-byte doorbell (1 + 6 cycles) waits for both.
        let doorbell = bus.duration(BusOp::MmioWrite, 4);
        assert_eq!(doorbell, Dur(212_122)); // 7 × 30 303.03 ps, rounded up
        assert_eq!(bus.transfer(Time(1), BusOp::MmioWrite, 4), Time(2 * d.0 + doorbell.0));
        let s = bus.stats();
        assert_eq!((s.transfers, s.bytes), (3, 3004));
        assert_eq!(s.wait_ps, d.0 + 2 * d.0 - 1);
        assert_eq!(s.resources[SHARED].busy_ps, 2 * d.0 + doorbell.0);
        assert_eq!(bus.idle_at(), Time(2 * d.0 + doorbell.0));
    }

    #[test]
    fn pcie_directions_overlap_except_for_the_read_request() {
        let cfg = BusConfig::pcie(1, 1);
        let mut bus = Bus::new(&cfg);
        // Gen 1 x1 (4 ns per byte): a 4 KiB read is 8 requests of 24 B upstream (96 ns each),
        // then 500 ns, then 8 × (512 + 2 × 20) B = 4416 B of completions downstream = 17 664 ns.
        let read = bus.duration(BusOp::DeviceRead, 4096);
        assert_eq!(read, Dur((96_000 + 500_000 + 17_664_000) as u64));
        // A 4 KiB write is 16 TLPs: 4096 + 16 × 24 = 4480 B upstream = 17 920 ns.
        let write = bus.duration(BusOp::DeviceWrite, 4096);
        assert_eq!(write, Dur(17_920_000));
        // Read first: its 8 requests hold upstream for 768 ns, then the write streams.
        assert_eq!(bus.transfer(Time::ZERO, BusOp::DeviceRead, 4096), Time(read.0));
        assert_eq!(bus.transfer(Time::ZERO, BusOp::DeviceWrite, 4096), Time(768_000 + write.0));
        assert_eq!(bus.stats().resources[UPSTREAM].busy_ps, 768_000 + write.0);
        assert_eq!(bus.stats().resources[DOWNSTREAM].busy_ps, 17_664_000);
        // Write first: the read's first request waits for the whole write.
        let mut bus = Bus::new(&cfg);
        assert_eq!(bus.transfer(Time::ZERO, BusOp::DeviceWrite, 4096), Time(write.0));
        assert_eq!(bus.transfer(Time::ZERO, BusOp::DeviceRead, 4096), Time(write.0 + read.0));
        assert_eq!(bus.stats().wait_ps, write.0);
    }

    #[test]
    fn pcie_completions_queue_behind_other_downstream_traffic() {
        let mut bus = Bus::new(&BusConfig::pcie(1, 1));
        // A 256-byte MMIO write goes downstream: 280 B = 1120 ns.
        assert_eq!(bus.transfer(Time::ZERO, BusOp::MmioWrite, 256), Time(1_120_000));
        // A 64-byte DMA read at t=0: request 96 ns, +500 ns = 596 ns, but downstream is busy
        // until 1120 ns; its 84 B completion (336 ns) ends at 1456 ns.
        assert_eq!(bus.transfer(Time::ZERO, BusOp::DeviceRead, 64), Time(1_456_000));
        assert_eq!(bus.stats().wait_ps, 1_120_000 - 596_000);
        // A device write upstream waits only for the read's request (96 ns), not for downstream.
        assert_eq!(bus.transfer(Time::ZERO, BusOp::DeviceWrite, 64), Time(96_000 + 88 * 4000));
    }

    #[test]
    fn a_one_tlp_transfer_waits_for_the_tlp_on_the_wire_not_for_the_queue() {
        // Gen 3 x16: 1 040 / 16 384 ps per byte (63.4765625). Four 9 000 B reads at t = 0:
        // 18 requests of 24 B each (27 421.875 → 27 422 ps); completions 17 × (512 + 2 × 20)
        // + (296 + 2 × 20) = 9 720 B (616 992.19 → 616 993 ps), the first from 1 524 + 500 000.
        let mut bus = Bus::new(&BusConfig::pcie(3, 16));
        let mut last = Time::ZERO;
        for _ in 0..4 {
            last = bus.transfer(Time::ZERO, BusOp::DeviceRead, 9000);
        }
        assert_eq!(last, Time(501_524 + 4 * 616_993));
        // A 64 B descriptor fetch asked at 0: its one request waits for the largest TLP
        // on the wire (256 + 16 + 8 = 280 B, 17 774 ps), not for the 109 688 ps of queued
        // requests; its completion is ready 1 524 + 500 000 later, waits one largest TLP
        // again and takes 84 B (5 333 ps).
        let desc = bus.transfer(Time::ZERO, BusOp::DeviceRead, 64);
        assert_eq!(desc, Time(17_774 + 501_524 + 17_774 + 5_333));
        // The link time it took is not lost: the next large read's completions
        // follow the queue and the descriptor's completion.
        let next = bus.transfer(Time::ZERO, BusOp::DeviceRead, 9000);
        assert_eq!(next, Time(501_524 + 4 * 616_993 + 5_333 + 616_993));
        // On an idle direction a one-TLP transfer does not wait at all.
        let mut idle = Bus::new(&BusConfig::pcie(3, 16));
        assert_eq!(idle.transfer(Time(7), BusOp::DeviceRead, 64), Time(7 + 1_524 + 500_000 + 5_333));
    }

    #[test]
    fn mmio_read_is_a_round_trip_with_the_completion_upstream() {
        let mut bus = Bus::new(&BusConfig::pcie(1, 1));
        // 4-byte register read: request 24 B downstream (96 ns), 500 ns, completion 4 + 20 B upstream (96 ns).
        assert_eq!(bus.duration(BusOp::MmioRead, 4), Dur(692_000));
        bus.transfer(Time::ZERO, BusOp::MmioRead, 4);
        assert_eq!(bus.stats().resources[DOWNSTREAM].busy_ps, 96_000);
        assert_eq!(bus.stats().resources[UPSTREAM].busy_ps, 96_000);
    }

    #[test]
    fn pcie_peak_rates() {
        let gen1 = Bus::new(&BusConfig::pcie(1, 1));
        assert!((gen1.peak_rate(BusOp::DeviceWrite) - 250e6 * 256.0 / 280.0).abs() < 1e-3);
        assert!((gen1.peak_rate(BusOp::DeviceRead) - 250e6 * 512.0 / 552.0).abs() < 1e-3);
        let gen3 = Bus::new(&BusConfig::pcie(3, 8));
        assert!((gen3.peak_rate(BusOp::DeviceWrite) - 8e9 * 8.0 * 128.0 / 130.0 / 8.0 * 256.0 / 280.0).abs() < 1.0);
    }

    #[test]
    fn utilization_counts_busy_time_up_to_until() {
        let mut bus = Bus::new(&BusConfig::pci_32_33());
        let end = bus.transfer(Time::ZERO, BusOp::DeviceWrite, 1 << 20);
        assert_eq!(bus.utilization(Time(2 * end.ps())), 0.5);
        assert_eq!(bus.utilization(end), 1.0);
        // Mid-transfer, the bus has been busy all along.
        assert_eq!(bus.utilization(Time(end.ps() / 3)), 1.0);
        assert_eq!(bus.utilization(Time::ZERO), 0.0);
        // PCIe: the busier direction counts.
        let mut pcie = Bus::new(&BusConfig::pcie(1, 1));
        pcie.transfer(Time::ZERO, BusOp::DeviceWrite, 256); // 1120 ns upstream
        assert_eq!(pcie.utilization(Time(2_240_000)), 0.5);
    }

    #[test]
    fn zero_bytes_are_free_and_uncounted() {
        let mut bus = Bus::new(&BusConfig::pcie(3, 8));
        assert_eq!(bus.duration(BusOp::DeviceRead, 0), Dur::ZERO);
        assert_eq!(bus.transfer(Time(5), BusOp::DeviceRead, 0), Time(5));
        assert_eq!(bus.stats().transfers, 0);
        assert_eq!(bus.idle_at(), Time::ZERO);
    }

    #[test]
    fn each_transfer_is_rounded_up_once() {
        // 33 transfers of 16 B, back to back: each 10 cycles rounded up (303 031 ps),
        // so the sum exceeds 330 exact cycles (10 µs) by 33 × 0.7 ps.
        let mut bus = Bus::new(&BusConfig::pci_32_33());
        let mut end = Time::ZERO;
        for _ in 0..33 {
            end = bus.transfer(Time::ZERO, BusOp::DeviceWrite, 16);
        }
        assert_eq!(end, Time(33 * 303_031));
        assert!(end.ps() - 10 * PS_PER_US < 33);
    }

    /// The worked example of docs/models/bus.md: time and effective MB/s.
    fn worked_examples() -> String {
        let sizes = [(64, "64 B"), (1500, "1500 B"), (4096, "4 KiB"), (65_536, "64 KiB")];
        let mut out = String::from("| bus | op |");
        for (_, label) in sizes {
            out += &format!(" {label} |");
        }
        out += " peak |\n| --- | --- |";
        out += &" ---: |".repeat(sizes.len() + 1);
        out += "\n";
        for (name, cfg) in buses() {
            let bus = Bus::new(&cfg);
            for op in [BusOp::DeviceWrite, BusOp::DeviceRead] {
                out += &format!("| {name} | {op:?} |");
                for (bytes, _) in sizes {
                    let d = bus.duration(op, bytes);
                    let time = if d.ps() < PS_PER_US {
                        format!("{:.1} ns", d.ps() as f64 / 1e3)
                    } else {
                        format!("{:.2} µs", d.ps() as f64 / 1e6)
                    };
                    out += &format!(" {time}, {:.1} MB/s |", bytes as f64 / d.as_secs_f64() / 1e6);
                }
                out += &format!(" {:.1} MB/s |\n", bus.peak_rate(op) / 1e6);
            }
        }
        out
    }

    #[test]
    fn docs_table_matches_the_model() {
        let table = worked_examples();
        println!("{table}");
        let doc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/models/bus.md");
        let text = std::fs::read_to_string(&doc).expect("docs/models/bus.md");
        assert!(text.contains(&table), "docs/models/bus.md is out of date; paste:\n{table}");
    }
}
