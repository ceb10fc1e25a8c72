//! Dynamic interrupt moderation (Linux's `net_dim`, `lib/dim/net_dim.c`,
//! as mlx5 runs it on each receive queue by default: `rx_dim_enabled`
//! follows the `cq_moderation` capability in `mlx5e_build_nic_params`).
//!
//! At the end of every NAPI poll that completes, the driver hands DIM the
//! queue's counters: interrupts (completion events), packets, bytes. Once
//! 64 interrupts (`DIM_NEVENTS`) have passed since the last decision, DIM
//! compares the rates over that window with the window before: more bytes
//! per ms is better, then more packets per ms, then fewer interrupts per
//! ms; a change under 10 % is no change (`IS_SIGNIFICANT_DIFF`). While the
//! rates improve it keeps stepping through its five moderation profiles in
//! one direction, otherwise it turns; it parks on a profile when it has
//! gone back and forth around it, or at an edge, or after ten steps
//! (`tired`), and leaves a top parking when the rates change.
//!
//! A profile is a pair (microseconds, packets): the completion queue
//! raises its interrupt once that many packets are pending or that long
//! after the first (start-from-CQE mode, mlx5's default where the device
//! can: `cq_period_start_from_cqe`). Units: picoseconds, packets, bytes.

use crate::engine::{Dur, Time};

/// DIM's receive profiles in start-from-CQE mode (`NET_DIM_RX_CQE_PROFILES`).
pub const RX_CQE_PROFILES: [(u64, u32); 5] = [(2, 256), (8, 128), (16, 64), (32, 64), (64, 64)];

/// Interrupts between two decisions (`DIM_NEVENTS`).
const NEVENTS: u64 = 64;

/// The moderation a queue's completion queue is created with
/// (`net_dim_get_def_rx_moderation`: `NET_DIM_DEF_PROFILE_CQE`). DIM's own
/// profile index starts at 0: mlx5 allocates the channel zeroed
/// (`kvzalloc_node` in `mlx5e_open_channel`) and `mlx5e_alloc_rq` sets
/// only the DIM's work item and mode, so its first decision, leaving the
/// parking it starts in, steps right from 0 to this same profile
/// (`net_dim_exit_parking`) and only then searches.
const DEFAULT_PROFILE: usize = 1;

/// Where DIM's search is (`enum dim_tune_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tune {
    ParkingOnTop,
    ParkingTired,
    GoingRight,
    GoingLeft,
}

/// Rates over one window (`struct dim_stats`): per millisecond.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Stats {
    bpms: u64,
    ppms: u64,
    epms: u64,
}

/// Counters at the start of a window (`struct dim_sample`).
#[derive(Debug, Clone, Copy)]
struct Sample {
    time: Time,
    events: u64,
    packets: u64,
    bytes: u64,
}

/// How one window compares with the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    Better,
    Same,
    Worse,
}

/// DIM on one receive queue.
#[derive(Debug, Clone)]
pub struct Dim {
    /// `profile_ix`: where DIM's search is.
    ix: usize,
    /// The profile the completion queue runs (`mlx5e_rx_dim_work` applies
    /// `profile_ix` after each decision that changed it).
    profile: usize,
    tune: Tune,
    steps_left: u32,
    steps_right: u32,
    tired: u32,
    prev: Stats,
    start: Option<Sample>,
    /// Decisions that changed the profile (a report counter).
    pub changes: u64,
    /// The queue's counters: interrupts, packets and bytes received.
    events: u64,
    packets: u64,
    bytes: u64,
}

impl Default for Dim {
    fn default() -> Self {
        Dim {
            ix: 0,
            profile: DEFAULT_PROFILE,
            tune: Tune::ParkingOnTop,
            steps_left: 0,
            steps_right: 0,
            tired: 0,
            prev: Stats::default(),
            start: None,
            changes: 0,
            events: 0,
            packets: 0,
            bytes: 0,
        }
    }
}

/// `IS_SIGNIFICANT_DIFF`: more than 10 % away from `reference`.
fn significant(value: u64, reference: u64) -> bool {
    100 * value.abs_diff(reference) / reference > 10
}

impl Stats {
    /// `net_dim_stats_compare`.
    fn compare(&self, prev: &Stats) -> Compare {
        let by = |more_is_better: bool, cur: u64, old: u64| match (cur > old) == more_is_better {
            true => Compare::Better,
            false => Compare::Worse,
        };
        if prev.bpms == 0 {
            return if self.bpms > 0 { Compare::Better } else { Compare::Same };
        }
        if significant(self.bpms, prev.bpms) {
            return by(true, self.bpms, prev.bpms);
        }
        if prev.ppms == 0 {
            return if self.ppms > 0 { Compare::Better } else { Compare::Same };
        }
        if significant(self.ppms, prev.ppms) {
            return by(true, self.ppms, prev.ppms);
        }
        if prev.epms == 0 {
            return Compare::Same;
        }
        if significant(self.epms, prev.epms) {
            return by(false, self.epms, prev.epms);
        }
        Compare::Same
    }
}

impl Dim {
    /// The moderation in force: packets, and the longest wait after the first.
    pub fn moderation(&self) -> (u32, Dur) {
        let (usec, packets) = RX_CQE_PROFILES[self.profile];
        (packets, Dur::from_micros(usec))
    }

    /// The profile in force (0 to 4).
    pub fn profile(&self) -> usize {
        self.profile
    }

    /// The queue raised an interrupt (a completion event).
    pub fn interrupt(&mut self) {
        self.events += 1;
    }

    /// The driver took `packets` frames of `bytes` in all off the queue.
    pub fn received(&mut self, packets: u64, bytes: u64) {
        self.packets += packets;
        self.bytes += bytes;
    }

    /// NAPI completed at `now`: DIM looks at the counters; returns whether
    /// the moderation changed.
    pub fn napi_complete(&mut self, now: Time) -> bool {
        self.sample(now, self.events, self.packets, self.bytes)
    }

    /// NAPI completed at `now` with the queue's counters so far; returns
    /// whether the moderation changed (`net_dim`).
    pub fn sample(&mut self, now: Time, events: u64, packets: u64, bytes: u64) -> bool {
        let end = Sample { time: now, events, packets, bytes };
        let Some(start) = self.start else {
            self.start = Some(end);
            return false;
        };
        if events - start.events < NEVENTS {
            return false;
        }
        let us = now.since(start.time).0 / 1_000_000;
        // A window shorter than a microsecond gives no rates (`dim_calc_stats`).
        let changed = us > 0 && self.decide(start, end, us);
        // A new window starts, unless the new profile is still being applied
        // (the driver's work item; taken as immediate here, the next
        // completion starts the window).
        self.start = if changed { None } else { Some(end) };
        if changed {
            self.profile = self.ix;
            self.changes += 1;
        }
        changed
    }

    /// `dim_calc_stats` and `net_dim_decision`.
    fn decide(&mut self, start: Sample, end: Sample, us: u64) -> bool {
        let per_ms = |n: u64| (n * 1000).div_ceil(us);
        let cur = Stats {
            bpms: per_ms(end.bytes - start.bytes),
            ppms: per_ms(end.packets - start.packets),
            epms: per_ms(NEVENTS),
        };
        let (prev_tune, prev_profile) = (self.tune, self.ix);
        match self.tune {
            Tune::ParkingOnTop => {
                if cur.compare(&self.prev) != Compare::Same {
                    self.exit_parking();
                }
            }
            Tune::ParkingTired => {
                self.tired -= 1;
                if self.tired == 0 {
                    self.exit_parking();
                }
            }
            Tune::GoingRight | Tune::GoingLeft => {
                if cur.compare(&self.prev) != Compare::Better {
                    self.turn();
                }
                if self.on_top() {
                    self.park_on_top();
                } else {
                    match self.step() {
                        Step::OnEdge => self.park_on_top(),
                        Step::TooTired => self.park_tired(),
                        Step::Stepped => {}
                    }
                }
            }
        }
        if prev_tune != Tune::ParkingOnTop || self.tune != Tune::ParkingOnTop {
            self.prev = cur;
        }
        self.ix != prev_profile
    }

    /// `net_dim_step`.
    fn step(&mut self) -> Step {
        if self.tired == 2 * RX_CQE_PROFILES.len() as u32 {
            return Step::TooTired;
        }
        match self.tune {
            Tune::ParkingOnTop | Tune::ParkingTired => {}
            Tune::GoingRight => {
                if self.ix == RX_CQE_PROFILES.len() - 1 {
                    return Step::OnEdge;
                }
                self.ix += 1;
                self.steps_right += 1;
            }
            Tune::GoingLeft => {
                if self.ix == 0 {
                    return Step::OnEdge;
                }
                self.ix -= 1;
                self.steps_left += 1;
            }
        }
        self.tired += 1;
        Step::Stepped
    }

    /// `net_dim_exit_parking`.
    fn exit_parking(&mut self) {
        self.tune = if self.ix > 0 { Tune::GoingLeft } else { Tune::GoingRight };
        self.step();
    }

    /// `dim_turn`.
    fn turn(&mut self) {
        match self.tune {
            Tune::GoingRight => {
                self.tune = Tune::GoingLeft;
                self.steps_left = 0;
            }
            Tune::GoingLeft => {
                self.tune = Tune::GoingRight;
                self.steps_right = 0;
            }
            Tune::ParkingOnTop | Tune::ParkingTired => {}
        }
    }

    /// `dim_on_top`: it went back and forth around this profile.
    fn on_top(&self) -> bool {
        match self.tune {
            Tune::ParkingOnTop | Tune::ParkingTired => true,
            Tune::GoingRight => self.steps_left > 1 && self.steps_right == 1,
            Tune::GoingLeft => self.steps_right > 1 && self.steps_left == 1,
        }
    }

    /// `dim_park_on_top`.
    fn park_on_top(&mut self) {
        (self.steps_right, self.steps_left, self.tired) = (0, 0, 0);
        self.tune = Tune::ParkingOnTop;
    }

    /// `dim_park_tired`.
    fn park_tired(&mut self) {
        (self.steps_right, self.steps_left) = (0, 0);
        self.tune = Tune::ParkingTired;
    }
}

/// What a step did (`DIM_STEPPED`, `DIM_TOO_TIRED`, `DIM_ON_EDGE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Stepped,
    TooTired,
    OnEdge,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `windows` windows of 64 interrupts, each `us` long with
    /// `bytes` and `packets` in it, where `us` may depend on the profile.
    fn run(dim: &mut Dim, windows: usize, f: impl Fn(usize) -> (u64, u64, u64)) -> Vec<usize> {
        let (mut now, mut events, mut packets, mut bytes) = (Time(0), 0, 0, 0);
        dim.sample(now, events, packets, bytes);
        let mut seen = Vec::new();
        for _ in 0..windows {
            let (us, p, b) = f(dim.profile());
            now += Dur::from_micros(us);
            events += NEVENTS;
            packets += p;
            bytes += b;
            if dim.sample(now, events, packets, bytes) {
                // The next completion opens the window.
                dim.sample(now, events, packets, bytes);
            }
            seen.push(dim.profile());
        }
        seen
    }

    #[test]
    fn a_steady_flow_climbs_to_the_profile_with_fewest_interrupts() {
        // The same bytes and packets per ms whatever the profile, and the
        // longer the moderation the fewer interrupts: each window of 64
        // interrupts lasts longer (the profile's microseconds times 64).
        let mut dim = Dim::default();
        let seen = run(&mut dim, 40, |ix| {
            let us = 64 * RX_CQE_PROFILES[ix].0;
            (us, 1000 * us, 9000 * 1000 * us)
        });
        // Leaving its first parking from the zeroed index, DIM steps
        // right (`net_dim_exit_parking`) onto the profile the queue
        // already runs; the same rates there are not better, so it turns
        // left, finds more interrupts, and turns right again.
        assert_eq!(seen[..3], [DEFAULT_PROFILE, 0, 1], "a step onto the default, left, back: {seen:?}");
        assert_eq!(*seen.last().unwrap(), 4, "and ends parked on the last profile: {seen:?}");
        assert_eq!(dim.moderation(), (64, Dur::from_micros(64)));
    }

    #[test]
    fn a_flow_still_speeding_up_moves_dim_to_more_moderation() {
        // A flow in slow start: every window carries a fifth more bytes and
        // packets than the one before, whatever the profile. Each decision
        // finds it better and keeps stepping in the direction it took when
        // it left its first parking, which from the zeroed index is right.
        let mut dim = Dim::default();
        let grown = std::cell::Cell::new(1000u64);
        let seen = run(&mut dim, 8, |_| {
            let per_us = grown.get();
            grown.set(per_us * 6 / 5);
            (100, per_us * 100, 9000 * per_us * 100)
        });
        assert_eq!(seen[..4], [1, 2, 3, 4], "rightwards from the start: {seen:?}");
    }

    #[test]
    fn a_flow_that_loses_bytes_with_more_moderation_turns_back() {
        // Profiles 3 and 4 cost a third of the throughput: DIM turns back
        // and settles below them.
        let mut dim = Dim::default();
        let seen = run(&mut dim, 60, |ix| {
            let us = 64 * RX_CQE_PROFILES[ix].0;
            let per_us = if ix >= 3 { 600 } else { 1000 };
            (us, per_us * us, 9000 * per_us * us)
        });
        let tail = &seen[40..];
        assert!(tail.iter().filter(|&&p| p <= 2).count() > tail.len() / 2, "mostly at or below profile 2: {seen:?}");
    }

    #[test]
    fn rates_within_ten_percent_are_the_same() {
        let prev = Stats { bpms: 1000, ppms: 100, epms: 50 };
        assert_eq!(Stats { bpms: 1090, ppms: 100, epms: 50 }.compare(&prev), Compare::Same);
        assert_eq!(Stats { bpms: 1200, ppms: 100, epms: 50 }.compare(&prev), Compare::Better);
        assert_eq!(Stats { bpms: 800, ppms: 100, epms: 50 }.compare(&prev), Compare::Worse);
        // Equal bytes and packets: fewer interrupts win.
        assert_eq!(Stats { bpms: 1000, ppms: 100, epms: 30 }.compare(&prev), Compare::Better);
        assert_eq!(Stats { bpms: 1000, ppms: 100, epms: 70 }.compare(&prev), Compare::Worse);
    }

    #[test]
    fn nothing_is_decided_before_64_interrupts() {
        let mut dim = Dim::default();
        dim.sample(Time(0), 0, 0, 0);
        assert!(!dim.sample(Time(1_000_000_000), 63, 10_000, 10_000_000));
        assert_eq!(dim.profile(), DEFAULT_PROFILE);
        assert!(dim.sample(Time(2_000_000_000), 64, 20_000, 20_000_000));
    }
}
