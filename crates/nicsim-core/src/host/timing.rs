//! Timing profiles: what a host's CPU, memory, I/O bus, NIC and protocol
//! stack cost. A host without a profile is ideal (costs nothing).
//!
//! A profile is a TOML file with five sections (`cpu`, `memory`, `bus`,
//! `nic`, `costs`); every number in it carries its source in a comment.
//! Built-in profiles live in `crates/nicsim-core/profiles/` and are compiled
//! in. A scenario picks one with `hosts[i].profile = "name"` and overrides
//! any field inline (`hosts[i].cpu = { clock = "800MHz" }`): the override
//! tables are merged into the profile's, field by field, before the result
//! is validated, so errors name the scenario's field path.
//!
//! Stack costs follow the Linux send and receive paths. Each [`Cost`] is
//! `cycles + mem × memory.latency`: instructions at about one per cycle plus
//! main-memory accesses priced by the memory model, so a slower memory (the
//! Ortiz study's "Offload x") or a faster clock changes them physically.
//! Copies and software checksums cost `bytes / bandwidth × clock`.

use serde::{Deserialize, Serialize};

use crate::bus::BusConfig;
use crate::engine::units::{Bandwidth, Duration, Frequency};
use crate::error::ConfigError;
use crate::host::cpu::Layer;

/// Built-in profiles: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("kurmann-pii-400", include_str!("../../profiles/kurmann-pii-400.toml")),
    ("ortiz-p4-400", include_str!("../../profiles/ortiz-p4-400.toml")),
    ("won-simos-mips", include_str!("../../profiles/won-simos-mips.toml")),
    ("modern-x86-pcie", include_str!("../../profiles/modern-x86-pcie.toml")),
    ("cai-xeon-6128", include_str!("../../profiles/cai-xeon-6128.toml")),
];

/// A host's complete timing model.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// What machine this describes, and where its numbers come from.
    #[serde(default)]
    pub description: String,
    /// Processor.
    pub cpu: CpuConfig,
    /// Memory system.
    pub memory: MemoryConfig,
    /// I/O bus between the NIC and memory.
    pub bus: BusConfig,
    /// Network interface.
    pub nic: NicConfig,
    /// Protocol stack costs per layer.
    pub costs: StackCosts,
    /// Protocol offload to a communication processor (off unless enabled).
    #[serde(default)]
    pub offload: OffloadConfig,
    /// The application's own computation beside its communication (none
    /// unless set).
    #[serde(default)]
    pub app: AppConfig,
    /// Kurmann-style zero-copy TCP/IP: driver-level fragmentation,
    /// speculative defragmentation, zero-copy OS embedding (all off unless set).
    #[serde(default)]
    pub zero_copy: ZeroCopyConfig,
}

pub use super::cpu_params::*;
pub use super::nic_params::*;

impl Timing {
    /// Check ranges and combinations; `path` is the host's path (`hosts[0]`).
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let err = |field: &str, reason: String| Err(ConfigError::new(format!("{path}.{field}"), reason));
        let c = &self.cpu;
        if !(1_000_000..=100_000_000_000).contains(&c.clock.0) {
            return err("cpu.clock", format!("must be 1MHz to 100GHz, got {}", c.clock));
        }
        if !(1..=256).contains(&c.cores) {
            return err("cpu.cores", format!("must be 1 to 256, got {}", c.cores));
        }
        if c.app_core >= c.cores {
            return err("cpu.app_core", format!("core {} does not exist (cores = {})", c.app_core, c.cores));
        }
        if c.irq_core >= c.cores {
            return err("cpu.irq_core", format!("core {} does not exist (cores = {})", c.irq_core, c.cores));
        }
        let a = &self.app;
        if !(a.compute_per_kib.is_finite() && (0.0..=1e9).contains(&a.compute_per_kib)) {
            return err("app.compute_per_kib", format!("must be 0 to 1e9 cycles, got {}", a.compute_per_kib));
        }
        if a.compute_per_call > 1_000_000_000 {
            return err("app.compute_per_call", format!("must be at most 1e9 cycles, got {}", a.compute_per_call));
        }
        let m = &self.memory;
        for (field, bw) in [
            ("memory.copy_bandwidth", m.copy_bandwidth),
            ("memory.cached_copy_bandwidth", m.cached_copy_bandwidth),
            ("memory.checksum_bandwidth", m.checksum_bandwidth),
            ("memory.bandwidth", m.bandwidth),
        ] {
            if bw.0 == 0 {
                return err(field, "must be above zero".into());
            }
        }
        if m.llc_copy_bandwidth.is_some_and(|b| b.0 == 0) {
            return err("memory.llc_copy_bandwidth", "must be above zero".into());
        }
        if m.ddio_ways.is_some_and(|w| w > 32) {
            return err("memory.ddio_ways", format!("must be at most 32, got {}", m.ddio_ways.unwrap_or(0)));
        }
        if m.ddio.0 > m.cache_size.0 {
            return err("memory.ddio", format!("must be at most memory.cache_size ({}), got {}", m.cache_size, m.ddio));
        }
        if m.latency > 100_000 {
            return err("memory.latency", format!("must be at most 100000 cycles, got {}", m.latency));
        }
        if let Some(l) = &m.lines {
            if !(4..=4096).contains(&l.l1_line.0) || !l.l1_line.0.is_power_of_two() {
                return err(
                    "memory.lines.l1_line",
                    format!("must be a power of two from 4B to 4KiB, got {}", l.l1_line),
                );
            }
            if l.l2_line.0 < l.l1_line.0 || l.l2_line.0 % l.l1_line.0 != 0 || l.l2_line.0 > 4096 {
                return err(
                    "memory.lines.l2_line",
                    format!("must be a multiple of l1_line ({}) up to 4KiB, got {}", l.l1_line, l.l2_line),
                );
            }
            if l.l1_size.0 < l.l1_line.0 {
                return err("memory.lines.l1_size", format!("must hold at least one line, got {}", l.l1_size));
            }
            if l.l2_latency > 100_000 || l.copy_per_line > 100_000 || l.checksum_per_line > 100_000 {
                return err("memory.lines", "cycle counts must be at most 100000".into());
            }
        }
        if !(64..=1 << 20).contains(&self.costs.qdisc_quantum.0) {
            return err("costs.qdisc_quantum", format!("must be 64B to 1MiB, got {}", self.costs.qdisc_quantum));
        }
        let costs = &self.costs;
        let inputs = [("tcp_rx", costs.tcp_rx), ("tcp_ack_rx", costs.tcp_ack_rx.unwrap_or(costs.tcp_rx))];
        let (latency, demux) = (self.memory.latency, costs.tcp_rx_demux);
        if let Some((name, input)) = inputs.iter().find(|(_, i)| demux.total(latency) > i.total(latency)) {
            return err(
                "costs.tcp_rx_demux",
                format!(
                    "is part of TCP input, so at most costs.{name} ({} cycles), got {} cycles",
                    input.total(latency),
                    demux.total(latency)
                ),
            );
        }
        if self.cpu.wake_latency.0 > crate::engine::time::PS_PER_S / 1000 {
            return err("cpu.wake_latency", format!("must be at most 1ms, got {}", self.cpu.wake_latency));
        }
        if let Some(p) = &self.cpu.pstate {
            let step = super::cpu_params::PSTATE_STEP_HZ;
            if p.min.0 < step || p.min.0 % step != 0 {
                return err("cpu.pstate.min", format!("must be a positive multiple of 100MHz, got {}", p.min));
            }
            if p.turbo.0 % step != 0 || p.turbo.0 < p.min.0 {
                return err(
                    "cpu.pstate.turbo",
                    format!("must be a multiple of 100MHz, at least min ({}), got {}", p.min, p.turbo),
                );
            }
            let ps = p.interval.0;
            if !(crate::engine::time::PS_PER_S / 10_000..=crate::engine::time::PS_PER_S).contains(&ps) {
                return err("cpu.pstate.interval", format!("must be 100us to 1s, got {}", p.interval));
            }
        }
        let n = &self.nic;
        for (field, ring) in [("nic.tx_ring", n.tx_ring), ("nic.rx_ring", n.rx_ring)] {
            if !ring.is_power_of_two() || !(8..=65536).contains(&ring) {
                return err(field, format!("must be a power of two from 8 to 65536, got {ring}"));
            }
        }
        if !(4..=256).contains(&n.descriptor.0) {
            return err("nic.descriptor", format!("must be 4B to 256B, got {}", n.descriptor));
        }
        if n.rx_fifo.0 < 9018 {
            return err("nic.rx_fifo", format!("must hold at least one jumbo frame (9018B), got {}", n.rx_fifo));
        }
        if !(1..=256).contains(&n.tx_dma_outstanding) {
            return err("nic.tx_dma_outstanding", format!("must be 1 to 256, got {}", n.tx_dma_outstanding));
        }
        if n.dma_rate.is_some_and(|r| r.0 == 0) {
            return err("nic.dma_rate", "must be above zero".into());
        }
        if n.tso && !n.checksum_offload {
            return err(
                "nic.tso",
                "needs nic.checksum_offload = true (the NIC fills the checksums of the segments it cuts)".into(),
            );
        }
        if n.tso_defer.0 > crate::engine::time::PS_PER_S {
            return err("nic.tso_defer", format!("must be at most 1s, got {}", n.tso_defer));
        }
        if n.napi_budget == 0 {
            return err("nic.napi_budget", "must be at least 1".into());
        }
        if n.moderation.rx_packets == 0 {
            return err("nic.moderation.rx_packets", "must be at least 1".into());
        }
        let m = &n.moderation;
        for (field, d) in [
            ("rx_delay", m.rx_delay),
            ("rx_abs_delay", m.rx_abs_delay),
            ("tx_delay", m.tx_delay),
            ("min_interval", m.min_interval),
        ] {
            // Real NICs cap these at tens of milliseconds; 1 s keeps time arithmetic bounded.
            if d.0 > crate::engine::time::PS_PER_S {
                return err(&format!("nic.moderation.{field}"), format!("must be at most 1s, got {d}"));
            }
        }
        let e = &n.lro_engine;
        for (field, v, max) in [
            ("cam_entries", e.cam_entries, 4096),
            ("pages", e.pages, 4096),
            ("flush_packets", e.flush_packets, 4096),
            ("rbi_buffers", e.rbi_buffers, 64),
        ] {
            if !(1..=max).contains(&v) {
                return err(&format!("nic.lro_engine.{field}"), format!("must be 1 to {max}, got {v}"));
            }
        }
        if !(1518..=1_048_576).contains(&e.page_size.0) {
            return err("nic.lro_engine.page_size", format!("must be 1518B to 1MiB, got {}", e.page_size));
        }
        if e.flush_timeout.0 == 0 || e.flush_timeout.0 > crate::engine::time::PS_PER_S {
            return err(
                "nic.lro_engine.flush_timeout",
                format!("must be above 0 and at most 1s, got {}", e.flush_timeout),
            );
        }
        if !(1_000_000..=100_000_000_000).contains(&e.core_clock.0) {
            return err("nic.lro_engine.core_clock", format!("must be 1MHz to 100GHz, got {}", e.core_clock));
        }
        if !(e.dma_ratio.is_finite() && (0.1..=100.0).contains(&e.dma_ratio)) {
            return err("nic.lro_engine.dma_ratio", format!("must be 0.1 to 100, got {}", e.dma_ratio));
        }
        let o = &self.offload;
        if o.enabled {
            if o.core >= c.cores {
                return err("offload.core", format!("core {} does not exist (cpu.cores = {})", o.core, c.cores));
            }
            if o.core == c.app_core {
                return err("offload.core", format!("must differ from cpu.app_core ({})", c.app_core));
            }
        }
        if !(0.01..=4.0).contains(&o.clock_ratio) {
            return err("offload.clock_ratio", format!("must be 0.01 to 4, got {}", o.clock_ratio));
        }
        if !(0.1..=1000.0).contains(&o.memory_multiplier) {
            return err("offload.memory_multiplier", format!("must be 0.1 to 1000, got {}", o.memory_multiplier));
        }
        if o.poll_mem > 1000 {
            return err("offload.poll_mem", format!("must be at most 1000 accesses, got {}", o.poll_mem));
        }
        if o.poll_interval.0 > crate::engine::time::PS_PER_S {
            return err("offload.poll_interval", format!("must be at most 1s, got {}", o.poll_interval));
        }
        if !(4..=4096).contains(&o.descriptor.0) {
            return err("offload.descriptor", format!("must be 4B to 4096B, got {}", o.descriptor));
        }
        let z = &self.zero_copy;
        if !z.page.0.is_power_of_two() || !(1024..=16384).contains(&z.page.0) {
            return err("zero_copy.page", format!("must be a power of two from 1KiB to 16KiB, got {}", z.page));
        }
        if z.timeout.0 == 0 || z.timeout.0 > crate::engine::time::PS_PER_S {
            return err("zero_copy.timeout", format!("must be above zero and at most 1s, got {}", z.timeout));
        }
        if z.fragment && n.tso {
            return err(
                "zero_copy.fragment",
                "cannot be combined with nic.tso (the driver cuts page-sized packets into IP fragments, TSO cuts TCP segments)"
                    .into(),
            );
        }
        if z.speculate && n.lro != LroMode::Off {
            return err(
                "zero_copy.speculate",
                "cannot be combined with nic.lro (speculation expects each page's fragments as they came off the wire)"
                    .into(),
            );
        }
        for (field, d) in [
            ("admission_turnaround", z.admission_turnaround),
            ("admission_throttle", z.admission_throttle),
            ("admission_retry", z.admission_retry),
            ("admission_idle", z.admission_idle),
        ] {
            if d.0 == 0 || d.0 > crate::engine::time::PS_PER_S {
                return err(&format!("zero_copy.{field}"), format!("must be above zero and at most 1s, got {d}"));
            }
        }
        if z.cam != CamMode::Off && !z.speculate {
            return err(
                "zero_copy.cam",
                "needs zero_copy.speculate = true (the CAM selects the speculative list)".into(),
            );
        }
        if z.interference.frames > 10_000_000 {
            return err(
                "zero_copy.interference.frames",
                format!("must be at most 10000000, got {}", z.interference.frames),
            );
        }
        if z.interference.frames > 0
            && (z.interference.over.0 == 0 || z.interference.over.0 > 3600 * crate::engine::time::PS_PER_S)
        {
            return err(
                "zero_copy.interference.over",
                format!("must be above zero and at most 1h when frames are injected, got {}", z.interference.over),
            );
        }
        self.bus.validate(&format!("{path}.bus"))
    }

    /// The communication processor's core, when the stack is offloaded.
    pub fn comm_core(&self) -> Option<usize> {
        self.offload.enabled.then_some(self.offload.core as usize)
    }

    /// The core that runs the stack's receive work and takes NIC interrupts:
    /// the communication processor under offload, the application's core
    /// under aRFS, else `cpu.irq_core`.
    pub fn stack_core(&self) -> usize {
        let irq = if self.nic.arfs { self.cpu.app_core } else { self.cpu.irq_core };
        self.comm_core().unwrap_or(irq as usize)
    }

    /// Clock of `core` in Hz (the communication processor runs at `clock_ratio`).
    pub fn core_hz(&self, core: usize) -> u64 {
        if self.comm_core() == Some(core) {
            ((self.cpu.clock.0 as f64 * self.offload.clock_ratio).round() as u64).max(1)
        } else {
            self.cpu.clock.0
        }
    }

    /// One memory access in `core`'s cycles: the reference delay
    /// (`memory.latency` host cycles), times x on the communication processor.
    pub fn latency_on(&self, core: usize) -> u64 {
        if self.comm_core() == Some(core) {
            let o = &self.offload;
            (self.memory.latency as f64 * o.memory_multiplier * o.clock_ratio).round() as u64
        } else {
            self.memory.latency
        }
    }

    /// Cycles of `cost` on `core`.
    pub fn cycles_on(&self, core: usize, cost: Cost) -> u64 {
        cost.total(self.latency_on(core))
    }

    /// What the driver spends on `core` on every frame it takes from the
    /// receive ring, whether GRO merges it later or not: its own receive
    /// work (`costs.driver_rx`) and the frame's time stamp, where the
    /// profile takes one (`costs.rx_timestamp`, `costs.rx_timestamp_read`).
    pub fn rx_frame_pieces(&self, core: usize) -> Vec<(Layer, u64)> {
        let c = &self.costs;
        let pieces =
            [(Layer::Driver, c.driver_rx), (Layer::Clock, c.rx_timestamp), (Layer::ClockRead, c.rx_timestamp_read)];
        pieces
            .into_iter()
            .map(|(layer, cost)| (layer, self.cycles_on(core, cost)))
            .filter(|&(layer, cycles)| layer == Layer::Driver || cycles > 0)
            .collect()
    }

    /// Cycles to copy `bytes` on this machine (hot: the data is in cache).
    pub fn copy_cycles(&self, bytes: u64, hot: bool) -> u64 {
        if let Some(l) = &self.memory.lines {
            let src = if hot && !self.memory.cold_cache { Residence::Hot } else { Residence::Memory };
            return l.copy(bytes, src, self.memory.latency);
        }
        let bw =
            if hot && !self.memory.cold_cache { self.memory.cached_copy_bandwidth } else { self.memory.copy_bandwidth };
        per_byte_cycles(bytes, bw, self.cpu.clock)
    }

    /// Cycles to copy `bytes` of received data the application reads, of
    /// which `hot` are still in the last-level cache (read at
    /// `llc_copy_bandwidth`: [`Timing::rx_copy_in_llc`]); the rest were
    /// evicted by newer DMA writes and come from memory.
    pub fn rx_copy_cycles(&self, bytes: u64, hot: u64) -> u64 {
        let hot = hot.min(bytes);
        if hot == 0 {
            return self.copy_cycles(bytes, false);
        }
        let llc = self.memory.llc_copy_bandwidth.unwrap_or(self.memory.cached_copy_bandwidth);
        per_byte_cycles(hot, llc, self.cpu.clock) + self.copy_cycles(bytes - hot, false)
    }

    /// Of `bytes` of received data read when the oldest of them has a reuse
    /// distance of `distance` data bytes (the bytes DMA'd into memory since
    /// it arrived, itself included), the bytes DDIO still holds in the
    /// last-level cache: with one pool those within `memory.ddio`.
    pub fn rx_copy_in_llc(&self, bytes: u64, distance: u64) -> u64 {
        let ddio = self.memory.ddio.0;
        if ddio == 0 || self.memory.cold_cache || self.memory.lines.is_some() {
            return 0;
        }
        match self.memory.ddio_ways {
            None | Some(0) => within_reach(ddio, distance, bytes),
            Some(ways) => set_associative_hits(ddio, ways, distance, bytes),
        }
    }

    /// Extra cycles for a cache line the other core touched last: the
    /// socket lock and the buffers the receive stack's core handled, when
    /// the application runs on another core (`cpu.line_transfer`).
    pub fn line_transfer(&self) -> u64 {
        if self.split_cores() {
            self.cpu.line_transfer
        } else {
            0
        }
    }

    /// The application and the receive stack run on different cores.
    pub fn split_cores(&self) -> bool {
        self.cpu.app_core as usize != self.stack_core()
    }

    /// Cycles of `core` to copy `bytes` (hot: the data is in cache). On the
    /// communication processor the copy's instructions (the cached rate)
    /// take the same cycles and its memory stalls (the rest of the uncached
    /// rate) x times the reference delay, counted in its own cycles.
    pub fn copy_cycles_on(&self, core: usize, bytes: u64, hot: bool) -> u64 {
        if self.comm_core() != Some(core) {
            return self.copy_cycles(bytes, hot);
        }
        let instr = per_byte_cycles(bytes, self.memory.cached_copy_bandwidth, self.cpu.clock);
        if hot && !self.memory.cold_cache {
            return instr;
        }
        let stall = self.copy_cycles(bytes, false).saturating_sub(instr) as f64;
        let o = &self.offload;
        instr + (stall * o.memory_multiplier * o.clock_ratio).round() as u64
    }

    /// One turn of the communication processor's polling loop: its
    /// instructions (`poll_interval` at the host clock) on its own clock
    /// and `poll_mem` memory accesses at its memory delay.
    pub fn poll_turn(&self) -> Duration {
        let o = &self.offload;
        let instr = o.poll_interval.0 as f64 / o.clock_ratio;
        let per_cycle = crate::engine::time::PS_PER_S as f64 / self.cpu.clock.0 as f64;
        let mem = (o.poll_mem * self.memory.latency) as f64 * o.memory_multiplier * per_cycle;
        Duration((instr + mem).round() as u64)
    }

    /// When a polling communication processor notices work that appeared
    /// at `now`: at the end of the current turn of its loop.
    pub fn poll_at(&self, now: crate::engine::Time) -> crate::engine::Time {
        let turn = self.poll_turn().0;
        if turn == 0 {
            now
        } else {
            crate::engine::Time(now.0.div_ceil(turn) * turn)
        }
    }

    /// Cycles to checksum `bytes` in software.
    pub fn checksum_cycles(&self, bytes: u64) -> u64 {
        if let Some(l) = &self.memory.lines {
            return l.checksum(bytes, self.memory.latency);
        }
        per_byte_cycles(bytes, self.memory.checksum_bandwidth, self.cpu.clock)
    }

    /// Cycles to checksum `bytes` in software on `core` (the communication
    /// processor streams memory x times slower, on its own clock).
    pub fn checksum_cycles_on(&self, core: usize, bytes: u64) -> u64 {
        if self.comm_core() != Some(core) {
            return self.checksum_cycles(bytes);
        }
        let slow = self.memory.checksum_bandwidth.0 as f64 / self.offload.memory_multiplier;
        let bw = Bandwidth((slow.round() as u64).max(1));
        per_byte_cycles(bytes, bw, Frequency(self.core_hz(core)))
    }

    /// Cycles of `cost` on this machine.
    pub fn cycles(&self, cost: Cost) -> u64 {
        cost.total(self.memory.latency)
    }
}

/// `bytes` at `bw` (bit/s) on a `clock` core, in whole cycles (rounded up).
/// Of `bytes` received bytes read at once, the oldest of which has a reuse
/// distance of `distance` bytes (received since it arrived, itself
/// included), how many are within `reach` bytes of the newest received: the
/// newest byte read is `distance - bytes` behind, and every byte from there
/// back to `reach` is within it.
pub fn within_reach(reach: u64, distance: u64, bytes: u64) -> u64 {
    reach.saturating_sub(distance.saturating_sub(bytes)).min(bytes)
}

/// Of `bytes` read whose oldest has reuse distance `distance` (its newest
/// `distance - bytes`), the bytes expected still in a cache of `capacity`
/// bytes that keeps the `ways` most recent lines of each set, lines falling
/// into sets at random (`memory.ddio_ways`). A byte at distance `d` is a hit
/// with probability `P(d) = Q(ways, l)`, `l = ways d / capacity`, the
/// chance that a Poisson count of mean `l` is below `ways`; over
/// `[distance - bytes, distance]` its integral is `capacity / ways` times
/// `H(l_newest) - H(l_oldest)`, with `H(l) = exp(-l) sum_{k < ways} (ways - k)
/// l^k / k!` (`H' = -Q`, `H(0) = ways`: all distances together hold
/// `capacity` bytes).
pub fn set_associative_hits(capacity: u64, ways: u32, distance: u64, bytes: u64) -> u64 {
    if capacity == 0 || bytes == 0 || ways == 0 {
        return 0;
    }
    let w = f64::from(ways);
    let scale = w / capacity as f64;
    let h = |l: f64| {
        let (mut term, mut sum) = (1.0, 0.0);
        for k in 0..ways {
            if k > 0 {
                term *= l / f64::from(k);
            }
            sum += (w - f64::from(k)) * term;
        }
        (-l).exp() * sum
    };
    let newest = distance.saturating_sub(bytes) as f64 * scale;
    let oldest = distance.max(bytes) as f64 * scale;
    let hits = capacity as f64 / w * (h(newest) - h(oldest));
    (hits.max(0.0).round() as u64).min(bytes)
}

fn per_byte_cycles(bytes: u64, bw: Bandwidth, clock: Frequency) -> u64 {
    (u128::from(bytes) * 8 * u128::from(clock.0)).div_ceil(u128::from(bw.0)) as u64
}

fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The text of built-in profile `name`.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Resolve a host's timing: profile `name` with `overrides` (section name →
/// table) merged in; errors name fields under `path` (e.g. `hosts[0]`).
pub fn resolve(path: &str, name: &str, overrides: &[(&str, &toml::Table)]) -> Result<Timing, ConfigError> {
    let Some(text) = builtin(name) else {
        let known: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        return Err(ConfigError::new(
            format!("{path}.profile"),
            format!("no built-in profile \"{name}\"; known: {}", known.join(", ")),
        ));
    };
    let mut table: toml::Table =
        text.parse().map_err(|e| ConfigError::new(format!("{path}.profile"), format!("profile \"{name}\": {e}")))?;
    for (section, over) in overrides {
        // A bus of another kind replaces the profile's bus rather than
        // mixing knobs of two kinds.
        let other_kind = over.get("kind").is_some_and(|k| table.get(*section).and_then(|b| b.get("kind")) != Some(k));
        if other_kind {
            table.insert((*section).into(), toml::Value::Table((*over).clone()));
            continue;
        }
        let mut wrapper = toml::Table::new();
        wrapper.insert((*section).into(), toml::Value::Table((*over).clone()));
        merge(&mut table, &wrapper);
    }
    let timing: Timing = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let field = e.path().to_string();
        ConfigError::new(format!("{path}.{field}"), e.into_inner().to_string())
    })?;
    timing.validate(path)?;
    Ok(timing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::units::Size;

    #[test]
    fn a_set_associative_ddio_holds_its_capacity_and_loses_lines_before_it_is_full() {
        const C: u64 = 3_670_016; // 3.5 MiB
        for ways in [1, 2, 4, 11] {
            // Over every distance the cache holds its capacity, no more.
            let all = set_associative_hits(C, ways, 1 << 40, 1 << 40);
            assert!(all.abs_diff(C) <= 1, "{ways} ways: {all}");
            // A byte further back is less likely cached.
            let at = |d: u64| set_associative_hits(C, ways, d + 1_000, 1_000);
            assert!(at(0) >= at(C / 4) && at(C / 4) > at(C) && at(C) > at(4 * C), "{ways} ways");
            assert!(at(0) >= 999 && at(40 * C) == 0, "{ways} ways");
        }
        // Worked by hand. One way: a line at distance d survives if no later
        // line fell into its set, exp(-d / C): 1/e at the capacity. Two ways:
        // fewer than two of them, exp(-2) (1 + 2) = 0.406 at the capacity and
        // exp(-1) (1 + 1) = 0.736 at half of it.
        let frac = |ways, d: u64| set_associative_hits(C, ways, d + 1_000, 1_000) as f64 / 1_000.0;
        assert!((frac(1, C) - (-1f64).exp()).abs() < 2e-3);
        assert!((frac(2, C) - 3.0 * (-2f64).exp()).abs() < 2e-3);
        assert!((frac(2, C / 2) - 2.0 * (-1f64).exp()).abs() < 2e-3);
        // Many ways approach one pool of the same size (within_reach).
        let many = |d: u64| set_associative_hits(C, 32, d + 1_000, 1_000);
        assert!(many(C / 2) >= 999 && many(2 * C) == 0);
        // A read never hits more bytes than it reads.
        assert_eq!(set_associative_hits(C, 2, 10, 10), 10);
        assert_eq!(set_associative_hits(C, 0, 10, 10), 0);
    }

    #[test]
    fn every_builtin_profile_loads_and_validates() {
        for (name, _) in BUILTIN {
            let t = resolve("hosts[0]", name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!t.description.is_empty(), "{name} says what it describes");
        }
    }

    #[test]
    fn overrides_replace_single_fields() {
        let over: toml::Table = "clock = \"800MHz\"".parse().unwrap();
        let t = resolve("hosts[1]", "kurmann-pii-400", &[("cpu", &over)]).unwrap();
        assert_eq!(t.cpu.clock, Frequency(800_000_000));
        let base = resolve("hosts[1]", "kurmann-pii-400", &[]).unwrap();
        assert_eq!(t.cpu.interrupt_entry, base.cpu.interrupt_entry);
    }

    #[test]
    fn bad_overrides_name_the_field() {
        let over: toml::Table = "clokc = \"800MHz\"".parse().unwrap();
        let e = resolve("hosts[1]", "kurmann-pii-400", &[("cpu", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[1].cpu.clokc");
        let over: toml::Table = "rx_ring = 100".parse().unwrap();
        let e = resolve("hosts[0]", "kurmann-pii-400", &[("nic", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[0].nic.rx_ring");
        assert!(e.reason.contains("power of two"), "{}", e.reason);
        let over: toml::Table = "clock = \"fast\"".parse().unwrap();
        let e = resolve("hosts[0]", "kurmann-pii-400", &[("cpu", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[0].cpu.clock");
        let e = resolve("hosts[0]", "pentium", &[]).unwrap_err();
        assert_eq!(e.path, "hosts[0].profile");
        let over: toml::Table = "ddio_ways = 33".parse().unwrap();
        let e = resolve("hosts[1]", "cai-xeon-6128", &[("memory", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[1].memory.ddio_ways");
        assert!(e.reason.contains("at most 32"), "{}", e.reason);
    }

    #[test]
    fn a_copy_on_the_communication_processor_slows_with_x_and_its_clock() {
        let over: toml::Table = "enabled = true\nsocket_copy = \"comm\"".parse().unwrap();
        let t = resolve("h", "ortiz-p4-400", &[("offload", &over)]).unwrap();
        let comm = t.comm_core().unwrap();
        // 8000 bytes: 4000 cycles of moves at 800 MB/s, 10 000 in all at 320 MB/s (400 MHz).
        assert_eq!(t.copy_cycles(8000, false), 10_000);
        assert_eq!(t.copy_cycles_on(comm, 8000, false), 10_000, "x = 1 at full speed: the host's cost");
        assert_eq!(t.copy_cycles_on(comm, 8000, true), 4_000, "a cached copy has no stalls");
        let mut slow = t.clone();
        slow.offload.memory_multiplier = 10.0;
        assert_eq!(slow.copy_cycles_on(comm, 8000, false), 4_000 + 60_000, "stalls x 10");
        let mut quarter = t.clone();
        quarter.offload.clock_ratio = 0.25;
        // Stalls keep their time (6000 host cycles = 1500 of its own); moves keep their cycles.
        assert_eq!(quarter.copy_cycles_on(comm, 8000, false), 4_000 + 1_500);
        assert_eq!(quarter.core_hz(comm), 100_000_000);
        assert_eq!(t.copy_cycles_on(0, 8000, false), 10_000, "CPU0 copies at the host's rates");
    }

    #[test]
    fn the_polling_turn_scales_with_clock_and_memory_delay() {
        let t = resolve("h", "ortiz-p4-400", &[]).unwrap();
        // 500 ns of instructions and two 10-cycle accesses at 400 MHz (50 ns).
        assert_eq!(t.poll_turn(), Duration(550_000));
        let mut s = t.clone();
        s.offload.clock_ratio = 0.25;
        s.offload.memory_multiplier = 10.0;
        assert_eq!(s.poll_turn(), Duration(2_000_000 + 500_000));
        let over: toml::Table = "poll_mem = 5000".parse().unwrap();
        let e = resolve("hosts[0]", "ortiz-p4-400", &[("offload", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[0].offload.poll_mem");
    }

    #[test]
    fn copy_cost_is_bytes_over_bandwidth_times_clock() {
        let t = resolve("h", "kurmann-pii-400", &[]).unwrap();
        // 92 MB/s memcpy at 400 MHz: 4096 bytes take 44.5 µs = 17 809 cycles.
        assert_eq!(t.memory.copy_bandwidth, Bandwidth(92_000_000 * 8));
        assert_eq!(t.copy_cycles(4096, false), (4096u64 * 400).div_ceil(92));
        assert_eq!(Cost { cycles: 100, mem: 3 }.total(10), 130);
    }

    #[test]
    fn the_line_model_prices_copies_in_cycles_whatever_the_clock() {
        let l = LineModel {
            l1_size: Size(32 * 1024),
            l1_line: Size(32),
            l2_line: Size(128),
            l2_latency: 10,
            copy_per_line: 20,
            checksum_per_line: 35,
        };
        // 256 B in L1: 8 lines of 20 instructions.
        assert_eq!(l.copy(256, Residence::Hot, 100), 160);
        // 256 B from memory: 2 L2 lines at 100, their other 6 L1 lines from L2 at 10.
        assert_eq!(l.copy(256, Residence::Memory, 100), 160 + 200 + 60);
        // 32 KiB hot is more than half the L1: source and destination lines come from L2.
        assert_eq!(l.copy(32 * 1024, Residence::Hot, 100), 1024 * 20 + 2 * 1024 * 10);
        assert_eq!(l.checksum(256, 100), 8 * 35);
        let t = resolve("h", "won-simos-mips", &[]).unwrap();
        let over: toml::Table = "clock = \"400MHz\"".parse().unwrap();
        let fast = resolve("h", "won-simos-mips", &[("cpu", &over)]).unwrap();
        for bytes in [4, 1472, 4096, 32768] {
            assert_eq!(t.copy_cycles(bytes, false), fast.copy_cycles(bytes, false));
            assert_eq!(t.checksum_cycles(bytes), fast.checksum_cycles(bytes));
        }
        let over: toml::Table = "lines = { l1_size = \"32KiB\", l1_line = \"32B\", l2_line = \"48B\", l2_latency = 10, copy_per_line = 20, checksum_per_line = 35 }".parse().unwrap();
        let e = resolve("hosts[0]", "won-simos-mips", &[("memory", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[0].memory.lines.l2_line");
    }
}
