//! The receive side of the Elbeshti NIC (Elbeshti, Dixon, Koziniec, ISCIT
//! 2012): a single-issue RISC core running LRO, two receive buffers (RBI)
//! fed by the line, and a DMA engine sharing one local 64-bit bus with the
//! core. What it answers: how many core cycles a frame of each LRO class
//! costs, how many of them are idle (the core waiting for the bus), and the
//! lowest core clock that keeps up with a line rate without RBI overruns.
//!
//! ```text
//!  line ──► RBI [buf 0 | buf 1] ──DMA──► RB (64 × 30 KB pages) ──DMA──► host
//!              │ interrupt          ▲ local 64-bit bus, shared ▲
//!              └──────────► RISC core (single issue, CPI 1) ───┘
//! ```
//!
//! A frame's program (its class's busy instructions, CPI 1) runs in three
//! parts around the DMA move of its TCP payload RBI → RB:
//!
//! 1. **prologue**: the study's 15 instructions that identify the packet
//!    (headers read from the RBI over the bus, CAM match, the PSH and
//!    linked-list tests deciding the class). The move can only start after
//!    it: its destination in RB depends on the class.
//! 2. **during the move**: the DMA holds the bus for `word_cycles` DMA
//!    clocks per 64-bit word; the core runs the instructions the designer
//!    scheduled there because they do not use the bus (ALU operations and
//!    branches): at most the class's bus-free instructions under the study's
//!    instruction mix, less the `prologue_free` class-deciding branches that
//!    already ran in the prologue, and at most what is left of the program.
//! 3. **tail**: the rest needs the bus (loads and stores to RB, CAM, FIFO:
//!    the EOM's header updates and FIFO push, the COM's and OOP's list
//!    links) and waits until the DMA releases it.
//!
//! So per frame, with `dma` the move in whole core cycles:
//! `idle = max(0, dma − during)`, `total = busy + idle`. The classes differ
//! in idle because their programs differ in length and hence in bus-free
//! instructions to put beside the move. `docs/models/nic-core.md` gives
//! every parameter's source and its fit to the study's Table I.
//!
//! Optionally the DMA also moves each flushed aggregate RB → host over the
//! same bus (same cost per word as RBI → RB), in the bus time the core's
//! loads and stores and the RBI → RB moves leave free; when those transfers
//! fall behind, RB (64 pages × 30 KB) fills and arriving frames are dropped.
//! The wait of a frame's own move behind a host burst already on the bus is
//! neglected (bursts are short beside a frame). Not modelled: instruction fetch
//! (the program is in a separate instruction memory, so fetches never use
//! the bus), the CAM and FIFO accesses beyond the study's instruction
//! counts, the host interface's own timing, bus arbitration other than first
//! come first served.
//!
//! Units: clocks in Hz, time in integer picoseconds, sizes in bytes (a
//! frame's `size` is its IP packet length; the line adds Ethernet framing,
//! preamble and gap).

use super::LroClass;
use crate::engine::time::{mul_div_ceil, mul_div_floor, PS_PER_S};
use crate::engine::units::{Bandwidth, Frequency};
use crate::engine::{Dur, Time};
use crate::error::ConfigError;
use crate::host::cpu::{Class, Core, Job, Layer};
use crate::host::timing::Cost;

mod line;
pub use line::*;

/// Position of a class in [`LroClass::ALL`] (and in per-class arrays).
fn idx(class: LroClass) -> usize {
    LroClass::ALL.iter().position(|c| *c == class).expect("every class is in ALL")
}

/// A class from the study's name (`"BOM"`, `"com"`, …).
pub fn class_by_name(name: &str) -> Option<LroClass> {
    LroClass::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(name))
}

/// The study's default class pattern: one bulk stream per interrupt
/// moderation window of 20 packets (1 BOM, 18 COM, 1 EOM).
pub fn bulk_pattern() -> Vec<LroClass> {
    let mut p = vec![LroClass::Bom];
    p.extend(std::iter::repeat_n(LroClass::Com, 18));
    p.push(LroClass::Eom);
    p
}

/// Instruction mix of the LRO program, in hundredths of a percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstructionMix {
    /// Loads (need the bus).
    pub load: u64,
    /// Stores (need the bus).
    pub store: u64,
    /// ALU operations (do not).
    pub alu: u64,
    /// Conditional branches (do not).
    pub branch: u64,
}

impl InstructionMix {
    /// The study's measured mix for LRO: 39.28 % loads, 17.8 % stores,
    /// 28.27 % ALU, 14.28 % branches (Elbeshti et al. 2012; they add up to
    /// 99.63 %, so shares are taken of their sum).
    pub const STUDY: InstructionMix = InstructionMix { load: 3928, store: 1780, alu: 2827, branch: 1428 };

    fn sum(&self) -> u64 {
        self.load + self.store + self.alu + self.branch
    }

    /// Of a program of `n` instructions, how many need the bus (loads and
    /// stores), rounded up: a program has whole loads and stores, and the
    /// bus-free ones are what remains (17 → 10, 22 → 13, 28 → 17, 29 → 17,
    /// 34 → 20 with the study's mix).
    pub fn bus_instructions(&self, n: u64) -> u64 {
        (n * (self.load + self.store)).div_ceil(self.sum())
    }

    /// Of a program of `n` instructions, how many do not need the bus.
    pub fn free_instructions(&self, n: u64) -> u64 {
        n - self.bus_instructions(n)
    }
}

/// The DMA engine's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DmaClock {
    /// A multiple of the core clock (the study's Table I uses 5×).
    Ratio(f64),
    /// A fixed clock (the study's final configuration: 3759 MHz).
    Fixed(Frequency),
}

/// The NIC core, its bus and its DMA engine.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreConfig {
    /// Core clock (single issue, CPI 1).
    pub clock: Frequency,
    /// DMA engine clock.
    pub dma: DmaClock,
    /// Bus width in bytes (the study: 64-bit local bus).
    pub bus_width: u64,
    /// DMA clocks the DMA holds the bus per word it moves. Fitted to the
    /// study's Table I: 1 (its idle cycles fall by 12 core cycles from
    /// 1500 to 1024 B, 60 words fewer at DMA = 5 × core). The study's data
    /// movement section counts 2 at DMA = core (183 read + 183 store cycles
    /// for the 1460-byte segment), which Table I does not follow.
    pub word_cycles: u64,
    /// Instructions before the move can start: the study's 15 that identify
    /// a packet (headers, CAM, PSH and list tests).
    pub prologue: u64,
    /// Bus-free instructions (branches) that must run in the prologue: the
    /// PSH-flag and list-exists tests that decide the class and hence the
    /// move's destination. Fitted to Table I: 2.
    pub prologue_free: u64,
    /// Instruction mix deciding which instructions need the bus (the study's).
    pub mix: InstructionMix,
    /// Busy instructions per class, in [`LroClass::ALL`] order (default:
    /// [`LroClass::busy_instructions`], the study's Table I total − idle).
    pub program: [u64; 5],
    /// Header bytes a frame keeps in the RBI (not moved by the DMA): IPv4
    /// 20 + TCP 20, no options (the study moves the 1460-byte segment).
    pub headers: u64,
    /// Frames an aggregate holds at most before it is flushed (the study's
    /// CAM flush and interrupt-moderation window: 20).
    pub window: u64,
    /// RB memory: 64 pages × 30 KB (the study), taken as 30 × 1024 B a page.
    pub rb_bytes: u64,
}

/// A class program split at the DMA start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Instructions before the move starts.
    pub prologue: u64,
    /// Bus-free instructions scheduled beside the move.
    pub during: u64,
    /// Instructions after them; they need the bus, so they wait for the move to end.
    pub tail: u64,
}

impl CoreConfig {
    /// The study's core at `clock` with the DMA at `dma`.
    pub fn study(clock: Frequency, dma: DmaClock) -> Self {
        CoreConfig {
            clock,
            dma,
            bus_width: 8,
            word_cycles: 1,
            prologue: 15,
            prologue_free: 2,
            mix: InstructionMix::STUDY,
            program: LroClass::ALL.map(LroClass::busy_instructions),
            headers: 40,
            window: 20,
            rb_bytes: 64 * 30 * 1024,
        }
    }

    /// Check every knob; errors name `path.<field>`.
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let at = |f: &str| if path.is_empty() { f.to_owned() } else { format!("{path}.{f}") };
        if self.clock.0 == 0 {
            return Err(ConfigError::new(at("core_clock"), "must be above 0 Hz"));
        }
        match self.dma {
            DmaClock::Ratio(r) if !(r.is_finite() && r > 0.0 && r <= 1e6) => {
                return Err(ConfigError::new(
                    at("dma_ratio"),
                    format!("must be a number above 0 and at most 1e6, got {r}"),
                ));
            }
            DmaClock::Fixed(f) if f.0 == 0 => return Err(ConfigError::new(at("dma_clock"), "must be above 0 Hz")),
            _ => {}
        }
        if self.bus_width == 0 {
            return Err(ConfigError::new(at("bus_width"), "must be at least 1 byte"));
        }
        if !(1..=64).contains(&self.word_cycles) {
            return Err(ConfigError::new(
                at("word_cycles"),
                format!("must be 1 to 64 DMA clocks a word, got {}", self.word_cycles),
            ));
        }
        if self.prologue > 1_000_000 {
            return Err(ConfigError::new(at("prologue"), format!("must be at most 1000000, got {}", self.prologue)));
        }
        if self.prologue_free > self.prologue {
            return Err(ConfigError::new(
                at("prologue_free"),
                format!("must be at most the prologue ({}), got {}", self.prologue, self.prologue_free),
            ));
        }
        if self.mix.sum() == 0 {
            return Err(ConfigError::new(at("mix"), "the instruction shares add up to 0"));
        }
        if let Some(i) = self.program.iter().position(|&n| n == 0 || n > 1_000_000) {
            return Err(ConfigError::new(
                at(&format!("program.{}", LroClass::ALL[i].name())),
                format!("must be 1 to 1000000 instructions, got {}", self.program[i]),
            ));
        }
        if self.window == 0 {
            return Err(ConfigError::new(at("window"), "must be at least 1 frame"));
        }
        Ok(())
    }

    /// The DMA clock in Hz (a ratio is rounded up to a whole Hz).
    pub fn dma_hz(&self) -> u64 {
        match self.dma {
            DmaClock::Ratio(r) => ((r * self.clock.0 as f64).ceil() as u64).max(1),
            DmaClock::Fixed(f) => f.0,
        }
    }

    /// Bytes the DMA moves RBI → RB for an IP packet of `size` bytes: its TCP payload.
    pub fn moved_bytes(&self, size: u64) -> u64 {
        size.saturating_sub(self.headers)
    }

    /// DMA clocks the DMA holds the bus to move `bytes`.
    pub fn transfer_bus_cycles(&self, bytes: u64) -> u64 {
        self.word_cycles * bytes.div_ceil(self.bus_width)
    }

    /// Whole core cycles spanned by `bus_cycles` DMA cycles (rounded up:
    /// the core resumes on its next clock edge).
    pub fn bus_to_core_cycles(&self, bus_cycles: u64) -> u64 {
        mul_div_ceil(bus_cycles, self.clock.0, self.dma_hz())
    }

    /// How `class`'s program falls around the move: the prologue, the
    /// bus-free instructions beside the move, the tail that waits.
    pub fn schedule(&self, class: LroClass) -> Schedule {
        let busy = self.program[idx(class)];
        let prologue = self.prologue.min(busy);
        let free = self.mix.free_instructions(busy).saturating_sub(self.prologue_free);
        let during = (busy - prologue).min(free);
        Schedule { prologue, during, tail: busy - prologue - during }
    }

    /// Core cycles for one frame of `class` and IP length `size`.
    pub fn frame(&self, class: LroClass, size: u64) -> FrameCycles {
        let moved = self.moved_bytes(size);
        let bus = self.transfer_bus_cycles(moved);
        let dma = self.bus_to_core_cycles(bus);
        let busy = self.program[idx(class)];
        let s = self.schedule(class);
        let idle = dma.saturating_sub(s.during);
        FrameCycles {
            class,
            size,
            moved_bytes: moved,
            bus_cycles: bus,
            dma_core_cycles: dma,
            busy,
            bus_instructions: self.mix.bus_instructions(busy),
            prologue: s.prologue,
            during: s.during,
            tail: s.tail,
            overlapped: s.during.min(dma),
            idle,
            total: busy + idle,
        }
    }

    /// Picoseconds the core spends on a frame: the prologue and the tail at
    /// CPI 1, and between them the move or the instructions beside it,
    /// whichever is longer. The core resumes the moment the DMA ends
    /// (synchroniser delay neglected), so the time falls steadily as the
    /// clock rises, while [`FrameCycles::idle`] counts the stall in whole
    /// cycles.
    pub fn frame_ps(&self, f: &FrameCycles) -> u64 {
        let hz = self.clock.0;
        let dma = mul_div_ceil(f.bus_cycles, PS_PER_S, self.dma_hz());
        mul_div_ceil(f.prologue + f.tail, PS_PER_S, hz) + dma.max(mul_div_ceil(f.during, PS_PER_S, hz))
    }

    /// The smallest DMA/core clock ratio (to 10⁻⁶, rounded up) at which a
    /// frame of `class` and `size` has no idle cycles: the move fits in the
    /// instructions beside it. `None` if none run beside it and the frame
    /// moves bytes (idle never vanishes).
    pub fn idle_free_ratio(&self, class: LroClass, size: u64) -> Option<f64> {
        let bus = self.transfer_bus_cycles(self.moved_bytes(size));
        let k = self.schedule(class).during;
        match (bus, k) {
            (0, _) => Some(0.0),
            (_, 0) => None,
            _ => Some((bus * 1_000_000).div_ceil(k) as f64 / 1e6),
        }
    }
}

/// One frame's cycles on the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameCycles {
    /// LRO class.
    pub class: LroClass,
    /// IP packet length, bytes.
    pub size: u64,
    /// Bytes moved RBI → RB (the TCP payload).
    pub moved_bytes: u64,
    /// DMA clocks the move holds the bus.
    pub bus_cycles: u64,
    /// The move in core cycles (rounded up).
    pub dma_core_cycles: u64,
    /// Busy cycles: the class's instructions at CPI 1.
    pub busy: u64,
    /// Of those, loads and stores (need the bus).
    pub bus_instructions: u64,
    /// Instructions before the move started.
    pub prologue: u64,
    /// Bus-free instructions scheduled beside the move.
    pub during: u64,
    /// Instructions that waited for the move to end.
    pub tail: u64,
    /// Instructions run while the DMA held the bus (`during`, or the
    /// move's length if shorter).
    pub overlapped: u64,
    /// Idle cycles: the core stalled for the bus.
    pub idle: u64,
    /// Total cycles: `busy + idle`.
    pub total: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core(dma: DmaClock) -> CoreConfig {
        CoreConfig::study(Frequency(1_000_000_000), dma)
    }

    #[test]
    fn the_maximum_segment_is_183_words() {
        let c = core(DmaClock::Ratio(1.0));
        let f = c.frame(LroClass::Bom, 1500);
        assert_eq!((f.moved_bytes, f.bus_cycles), (1460, 183));
        // BOM: 15 instructions identify it, the 7 the study names run
        // beside the move, nothing waits after it.
        assert_eq!((f.prologue, f.during, f.tail), (15, 7, 0));
        assert_eq!((f.dma_core_cycles, f.idle, f.total), (183, 176, 22 + 176));
        // Two DMA clocks a word (the study's 366 at DMA = core) double the move.
        let two = CoreConfig { word_cycles: 2, ..c };
        assert_eq!(two.frame(LroClass::Bom, 1500).bus_cycles, 366);
    }

    #[test]
    fn the_mix_bounds_what_runs_beside_the_move() {
        let m = InstructionMix::STUDY;
        // 29 × 57.08 / 99.63 = 16.6 → 17 loads and stores; 12 bus-free.
        assert_eq!((m.bus_instructions(29), m.free_instructions(29)), (17, 12));
        // 28 × 0.5729 = 16.04 → 17 (rounded up): 11 bus-free.
        assert_eq!((m.bus_instructions(28), m.free_instructions(28)), (17, 11));
        let c = core(DmaClock::Ratio(5.0));
        let during = LroClass::ALL.map(|k| c.schedule(k).during);
        // BOM 22 − 15 = 7 left; COM 12 − 2; EOM 11 − 2; SSM 17 − 15 = 2 left; OOP 14 − 2.
        assert_eq!(during, [7, 10, 9, 2, 12]);
        let tail = LroClass::ALL.map(|k| c.schedule(k).tail);
        // The EOM's tail (4) holds the study's 3 instructions that wait for the bus.
        assert_eq!(tail, [0, 4, 4, 0, 7]);
    }

    #[test]
    fn dma_at_five_times_the_core() {
        let c = core(DmaClock::Ratio(5.0));
        // 1500 B: 183 / 5 = 36.6 → 37 core cycles; COM runs 10 beside it.
        let f = c.frame(LroClass::Com, 1500);
        assert_eq!((f.dma_core_cycles, f.overlapped, f.idle, f.total), (37, 10, 27, 29 + 27));
        // 512 B: payload 472 → 59 words → 12 core cycles; SSM runs 2 beside it.
        let f = c.frame(LroClass::Ssm, 512);
        assert_eq!((f.bus_cycles, f.dma_core_cycles, f.idle, f.total), (59, 12, 10, 27));
        // OOP at 512 B: 12 beside a 12-cycle move, no idle.
        assert_eq!(c.frame(LroClass::Oop, 512).idle, 0);
    }

    #[test]
    fn a_fixed_dma_clock_costs_more_core_cycles_on_a_faster_core() {
        let slow = CoreConfig::study(Frequency(500_000_000), DmaClock::Fixed(Frequency(3_759_000_000)));
        let fast = CoreConfig { clock: Frequency(1_000_000_000), ..slow.clone() };
        // 183 words at 3759 MHz = 48.68 ns: 25 cycles at 500 MHz, 49 at 1 GHz.
        assert_eq!(slow.frame(LroClass::Com, 1500).dma_core_cycles, 25);
        assert_eq!(fast.frame(LroClass::Com, 1500).dma_core_cycles, 49);
    }

    #[test]
    fn frame_time_is_prologue_tail_and_the_longer_of_move_and_overlap() {
        let c = core(DmaClock::Ratio(5.0));
        // COM 1500 B at 1 GHz: 15 + 4 ns around max(10 ns, 183 / 5 GHz = 36.6 ns).
        let f = c.frame(LroClass::Com, 1500);
        assert_eq!(c.frame_ps(&f), 19_000 + 36_600);
        // OOP 512 B: 22 ns around max(12 ns, 59 / 5 GHz = 11.8 ns).
        let f = c.frame(LroClass::Oop, 512);
        assert_eq!(c.frame_ps(&f), 22_000 + 12_000);
    }

    #[test]
    fn idle_vanishes_at_the_ratio() {
        let c = core(DmaClock::Ratio(1.0));
        let r = c.idle_free_ratio(LroClass::Com, 1500).unwrap();
        assert!((r - 183.0 / 10.0).abs() < 1e-5, "{r}");
        let at = CoreConfig { dma: DmaClock::Ratio(r), ..c.clone() };
        assert_eq!(at.frame(LroClass::Com, 1500).idle, 0);
        let below = CoreConfig { dma: DmaClock::Ratio(r * 0.99), ..c };
        assert!(below.frame(LroClass::Com, 1500).idle > 0);
    }

    #[test]
    fn two_buffers_absorb_one_slow_frame_but_not_two() {
        // Frames 100 ns apart; frame processing 150 ns (core at 1 GHz, ratio
        // high enough that the DMA is invisible: 150 instructions).
        let mut c = core(DmaClock::Ratio(1000.0));
        c.program = [150; 5];
        c.prologue = 150;
        let line = LineConfig { rate: Bandwidth(10_000_000_000), framing: 0, preamble: 0, ifg: 0, buffers: 2 };
        let cfg = SimConfig { core: c, line, host_dma: false };
        // 125 B = 100 ns at 10 Gbps; headers 40 → 85 B moved, 11 words at 1 THz: 11 ps, 1 core cycle idle.
        let arrivals = line.back_to_back(125, &[LroClass::Com], 4);
        let r = simulate(&cfg, &arrivals).unwrap();
        // Frame 0 done at 100 + 150 + 0.011 ns; frame 1 runs from there;
        // frame 2 starts at 200 ns with buffer 0 still held: dropped;
        // frame 3 starts at 300 ns: buffer 0 is free (250 ns).
        assert_eq!(r.dropped, vec![2]);
        assert_eq!(r.frames.iter().map(|f| f.index).collect::<Vec<_>>(), vec![0, 1, 3]);
    }

    #[test]
    fn arrivals_closer_than_the_line_allows_are_refused() {
        let cfg = SimConfig {
            core: core(DmaClock::Ratio(5.0)),
            line: LineConfig::study(Bandwidth(100_000_000_000)),
            host_dma: false,
        };
        let a = Arrival { start: Time(0), size: 1500, class: LroClass::Com };
        let b = Arrival { start: Time(1000), ..a };
        let err = simulate(&cfg, &[a, b]).unwrap_err();
        assert_eq!(err.path, "arrivals[1].time");
    }

    #[test]
    fn bad_knobs_name_their_field() {
        let mut c = core(DmaClock::Ratio(-1.0));
        assert_eq!(c.validate("").unwrap_err().path, "dma_ratio");
        c.dma = DmaClock::Fixed(Frequency(0));
        assert_eq!(c.validate("").unwrap_err().path, "dma_clock");
        c.dma = DmaClock::Ratio(5.0);
        c.word_cycles = 0;
        assert_eq!(c.validate("core").unwrap_err().path, "core.word_cycles");
        c.word_cycles = 1;
        c.prologue_free = 16;
        assert_eq!(c.validate("core").unwrap_err().path, "core.prologue_free");
        c.prologue_free = 2;
        c.program[idx(LroClass::Eom)] = 0;
        assert_eq!(c.validate("core").unwrap_err().path, "core.program.EOM");
    }

    #[test]
    fn class_names_parse_either_case() {
        assert_eq!(class_by_name("com"), Some(LroClass::Com));
        assert_eq!(class_by_name("OOP"), Some(LroClass::Oop));
        assert_eq!(class_by_name("xyz"), None);
        let p = bulk_pattern();
        assert_eq!(
            (p.len(), p[0], p[1], p[18], p[19]),
            (20, LroClass::Bom, LroClass::Com, LroClass::Com, LroClass::Eom)
        );
    }

    #[test]
    fn host_lro_at_10_gbps_is_the_studys_packet_rate() {
        let l = HostLro::STUDY.load(Bandwidth(10_000_000_000), 1500, Dur(1_000_000_000)).unwrap();
        assert!((l.packets_per_s - 812_743.82).abs() < 0.01, "{}", l.packets_per_s);
        // 812,743.82 × 2927 / 4e9 = 59.47 %.
        assert!((l.share - 0.594_73).abs() < 1e-4, "{}", l.share);
        assert!((l.simulated_share - l.share).abs() < 1e-3, "{} vs {}", l.simulated_share, l.share);
        // 64-byte frames at 100 Gbps: 84 B × 8 / 100 Gbps = 6.72 ns.
        assert!((budget_ns(Bandwidth(100_000_000_000), 64, 20) - 6.72).abs() < 1e-9);
    }
}
