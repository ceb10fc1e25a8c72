//! CPU cores: jobs of known cycle counts on a preemptive run queue, with
//! every cycle charged to a protocol layer.
//!
//! A [`Job`] is a list of pieces (layer, cycles) run back to back, with one
//! continuation when the last piece ends. Three classes run by strict
//! priority: hard interrupts preempt soft-interrupt (stack) work, which
//! preempts tasks (applications, system calls). A preempted job resumes
//! where it stopped; the cycles it had run are charged to the pieces it ran.
//! Within a class, jobs run first come, first served.
//!
//! Time per job is `ceil(cycles × 10¹² / clock)` picoseconds; progress at a
//! preemption is `floor(elapsed × clock / 10¹²)` cycles, so the cycles
//! charged per layer always add up exactly to the cycles submitted.
//! Not modelled: pipelines, caches inside the core (costs come from the
//! cost model), SMT, the scheduler's own cost.
//!
//! Frequency scaling, when a core has a [`Pstate`] governor: Linux
//! `intel_pstate`'s own choice of P-state (active mode, the powersave
//! policy, no hardware P-states), taken as the kernel takes it. At the first
//! scheduling event at least `interval` after the last sample, the busy
//! fraction of the time since then sets the next P-state: `(turbo +
//! turbo/4) × busy`, at least `min`; if the clock ran faster meanwhile,
//! half the difference is added back; then it is clamped to `min..=turbo`
//! (`intel_pstate.c` `get_target_pstate`, `intel_pstate_prepare_request`,
//! Linux 5.4). A loaded core settles where its clock is
//! `sqrt(1.25 × turbo × work)`, so a half-idle core runs slower and is busy
//! longer for the same cycles. The clock changes only between jobs.

use std::collections::VecDeque;

use serde::Serialize;

use crate::engine::time::PS_PER_S;
use crate::engine::{Dur, Time};

/// Where a cycle went. The names follow the Linux send and receive paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Application work (computation outside the network stack).
    App,
    /// System call entry and exit.
    Syscall,
    /// Socket layer (send/receive calls, wake-ups).
    Socket,
    /// Copies between user and kernel buffers.
    Copy,
    /// Software checksums (when the NIC does not offload them).
    Checksum,
    /// TCP protocol processing.
    Tcp,
    /// UDP protocol processing.
    Udp,
    /// IPv4 processing.
    Ip,
    /// IP fragmentation and defragmentation.
    IpFrag,
    /// Generic device layer (queueing between IP and the driver).
    Device,
    /// The queueing discipline's own enqueue and dequeue of a packet sent
    /// (Linux `fq_codel_enqueue`, `fq_codel_dequeue` and their clock reads).
    Qdisc,
    /// The NIC driver (descriptors, doorbells, clean-up, refill).
    Driver,
    /// A clock read's timekeeping code on the packet path: `ktime_get`'s
    /// sequence count and conversion and its indirect call to the clock
    /// source (`costs.rx_timestamp`).
    Clock,
    /// The clock source's read itself (`read_tsc`: `lfence; rdtsc`), apart
    /// from the rest of a clock read (`costs.rx_timestamp_read`).
    ClockRead,
    /// An indirect call through a retpoline, the thunk a kernel built
    /// against Spectre variant 2 calls instead of the branch: a return
    /// that is predicted wrong on purpose (`costs.copy_call`, Linux's
    /// `__x86_indirect_thunk_*`).
    Indirect,
    /// Interrupt entry, handler and exit.
    Interrupt,
    /// Receive coalescing in software (LRO/GRO).
    Coalesce,
    /// Waiting for the memory system (contention with DMA).
    MemoryStall,
    /// Offload interface: commands to and completions from a communication processor.
    Command,
    /// VIA user-level library: descriptors, work queues, doorbell, completion queues.
    ViaLibrary,
    /// VIA transport: address translation per page, fragmentation and defragmentation.
    ViaTransport,
    /// Socket buffer (`sk_buff`) management: allocating, cloning and freeing
    /// the buffer heads (Linux `__alloc_skb`, `kfree_skb`, `skb_release_*`).
    Skb,
    /// Memory allocation and freeing for packet data: pages and page
    /// fragments (the page allocator, `page_frag_alloc`, `put_page`).
    Mm,
    /// Socket locks: `lock_sock`/`release_sock` in a system call,
    /// `bh_lock_sock` in the softirq.
    Lock,
    /// The scheduler: blocking the application and switching to it when it
    /// is woken (`schedule`, context switch).
    Sched,
    /// The idle loop choosing an idle state (Linux `do_idle`, the menu
    /// governor's `menu_select`, the next timer event): cycles of the idle
    /// task, not busy time.
    IdleSelect,
    /// The idle loop entering and leaving the state (`cpuidle_enter_state`,
    /// `intel_idle`, stopping and restarting the tick): cycles of the idle
    /// task, not busy time.
    Idle,
    /// DMA of a message's frames, in CPU cycles of its duration (per-message
    /// breakdowns only: no core runs it).
    Dma,
}

impl Layer {
    /// Every layer, in report order.
    pub const ALL: [Layer; 28] = [
        Layer::App,
        Layer::Syscall,
        Layer::Socket,
        Layer::Copy,
        Layer::Checksum,
        Layer::Tcp,
        Layer::Udp,
        Layer::Ip,
        Layer::IpFrag,
        Layer::Device,
        Layer::Qdisc,
        Layer::Driver,
        Layer::Clock,
        Layer::ClockRead,
        Layer::Indirect,
        Layer::Interrupt,
        Layer::Coalesce,
        Layer::MemoryStall,
        Layer::Command,
        Layer::ViaLibrary,
        Layer::ViaTransport,
        Layer::Skb,
        Layer::Mm,
        Layer::Lock,
        Layer::Sched,
        Layer::IdleSelect,
        Layer::Idle,
        Layer::Dma,
    ];

    /// Position in [`Layer::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Snake-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Layer::App => "app",
            Layer::Syscall => "syscall",
            Layer::Socket => "socket",
            Layer::Copy => "copy",
            Layer::Checksum => "checksum",
            Layer::Tcp => "tcp",
            Layer::Udp => "udp",
            Layer::Ip => "ip",
            Layer::IpFrag => "ip_frag",
            Layer::Device => "device",
            Layer::Qdisc => "qdisc",
            Layer::Driver => "driver",
            Layer::Clock => "clock",
            Layer::ClockRead => "clock_read",
            Layer::Indirect => "indirect",
            Layer::Interrupt => "interrupt",
            Layer::Coalesce => "coalesce",
            Layer::MemoryStall => "memory_stall",
            Layer::Command => "command",
            Layer::ViaLibrary => "via_library",
            Layer::ViaTransport => "via_transport",
            Layer::Skb => "skb",
            Layer::Mm => "mm",
            Layer::Lock => "lock",
            Layer::Sched => "sched",
            Layer::IdleSelect => "idle_select",
            Layer::Idle => "idle",
            Layer::Dma => "dma",
        }
    }
}

/// Number of layers.
pub const LAYERS: usize = Layer::ALL.len();

/// Cycles per layer.
pub type Breakdown = [u64; LAYERS];

/// Which path of the stack a job serves, for send/receive breakdowns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Path {
    /// Sending application data (the call, its segments, their clean-up).
    Send = 0,
    /// Receiving (interrupts, receive processing, ACKs sent for it, the call).
    Receive = 1,
    /// Neither (connection set-up and tear-down).
    Other = 2,
}

/// Scheduling class; lower runs first and preempts higher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Hard interrupt handlers.
    Irq = 0,
    /// Softirq / NAPI: the protocol stack's receive and timer work.
    Softirq = 1,
    /// Process context: applications and their system calls.
    Task = 2,
}

/// Work for a core: pieces run back to back, then `then` is returned.
#[derive(Debug)]
pub struct Job<T> {
    pieces: Vec<(Layer, u64)>,
    /// Index of the piece running or next to run.
    at: usize,
    /// Cycles of `pieces[at]` already done.
    done: u64,
    class: Class,
    /// Message the work belongs to, for per-message breakdowns.
    pub msg: Option<u64>,
    /// Stack path the job serves.
    pub path: Path,
    /// Continuation handed back when the job completes.
    pub then: T,
}

impl<T> Job<T> {
    /// A job of `class` made of `pieces`, continuing with `then`.
    pub fn new(class: Class, pieces: Vec<(Layer, u64)>, then: T) -> Self {
        Job { pieces, at: 0, done: 0, class, msg: None, path: Path::Other, then }
    }

    /// Mark the stack path the job serves.
    pub fn on(mut self, path: Path) -> Self {
        self.path = path;
        self
    }

    /// Attribute the job to message `msg`.
    pub fn for_msg(mut self, msg: Option<u64>) -> Self {
        self.msg = msg;
        self
    }

    /// The same job with its continuation turned into another type (a
    /// component's own continuation becomes the assembly's).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Job<U> {
        let Job { pieces, at, done, class, msg, path, then } = self;
        Job { pieces, at, done, class, msg, path, then: f(then) }
    }

    /// Cycles still to run.
    pub fn remaining(&self) -> u64 {
        self.pieces[self.at..].iter().map(|p| p.1).sum::<u64>() - self.done
    }

    /// Scheduling class.
    pub fn class(&self) -> Class {
        self.class
    }

    /// Total cycles of the job.
    pub fn total(&self) -> u64 {
        self.pieces.iter().map(|p| p.1).sum()
    }

    /// Cycles this job has been charged so far, per layer: every piece
    /// before the current one in full, and the current one's progress. Once
    /// the job completed, that is all of its pieces. (Computed rather than
    /// kept, so a job stays small as it moves through run queues.)
    pub fn charged(&self) -> Breakdown {
        let mut b = [0; LAYERS];
        for &(layer, cycles) in &self.pieces[..self.at] {
            b[layer.index()] += cycles;
        }
        if let Some(&(layer, _)) = self.pieces.get(self.at) {
            b[layer.index()] += self.done;
        }
        b
    }

    /// Add `cycles` to the piece of `layer` (appending one if absent).
    pub fn add(&mut self, layer: Layer, cycles: u64) {
        if cycles > 0 {
            self.pieces.push((layer, cycles));
        }
    }

    /// Charge `cycles` of progress to the pieces, in order, into `into`
    /// and the job's own breakdown.
    fn advance(&mut self, mut cycles: u64, into: &mut Breakdown) {
        while cycles > 0 && self.at < self.pieces.len() {
            let (layer, len) = self.pieces[self.at];
            let step = cycles.min(len - self.done);
            into[layer.index()] += step;
            self.done += step;
            cycles -= step;
            if self.done == len {
                self.at += 1;
                self.done = 0;
            }
        }
        while self.at < self.pieces.len() && self.pieces[self.at].1 == 0 {
            self.at += 1;
        }
    }
}

/// Counters of one core.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CoreStats {
    /// Picoseconds spent running jobs.
    pub busy_ps: u64,
    /// Cycles per layer (indexed like [`Layer::ALL`]).
    #[serde(skip)]
    pub cycles: Breakdown,
    /// Hard interrupts taken.
    pub interrupts: u64,
    /// Jobs completed.
    pub jobs: u64,
    /// Idle periods that ended: times a job came to the core after it had
    /// been idle for some time (each is a pass through the operating
    /// system's idle loop).
    pub idle_periods: u64,
    /// Cycles run while busy (at whatever clock the core had): over
    /// `busy_ps`, the core's mean clock while busy.
    pub busy_cycles: u64,
}

/// Linux `intel_pstate`'s P-state selection for one core (active mode,
/// powersave, no HWP): the P-state limits, their step and the sampling
/// interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pstate {
    /// Lowest clock, Hz.
    pub min_hz: u64,
    /// Highest (turbo) clock, Hz.
    pub turbo_hz: u64,
    /// Clock of one P-state step, Hz (100 MHz on Intel cores).
    pub step_hz: u64,
    /// Shortest time between two samples.
    pub interval: Dur,
}

#[derive(Debug)]
struct Governor {
    p: Pstate,
    /// When the last sample was taken, and the core's busy time then.
    since: Time,
    busy_then: u64,
}

impl Governor {
    /// The P-state (in steps) for a sample of `busy` busy picoseconds in
    /// `window`, the clock having been `ratio` steps while busy.
    fn target(&self, busy: u64, window: u64, ratio: u64) -> u64 {
        let (min, turbo) = (self.p.min_hz / self.p.step_hz, self.p.turbo_hz / self.p.step_hz);
        // busy_frac = mperf / tsc in 8-bit fixed point; mul_fp truncates.
        let busy_frac = (u128::from(busy) * 256 / u128::from(window.max(1))) as u64;
        let mut target = ((turbo + (turbo >> 2)) * busy_frac) >> 8;
        target = target.max(min);
        let avg = if busy > 0 { ratio } else { 0 };
        if avg > target {
            target += (avg - target) >> 1;
        }
        target.clamp(min, turbo)
    }
}

#[derive(Debug)]
struct Running<T> {
    job: Job<T>,
    started: Time,
    end: Time,
}

/// One CPU core.
#[derive(Debug)]
pub struct Core<T> {
    hz: u64,
    queues: [VecDeque<Job<T>>; 3],
    running: Option<Running<T>>,
    /// Counters.
    pub stats: CoreStats,
    /// Busy picoseconds per time bin (utilisation over time).
    pub series: Vec<u64>,
    bin: u64,
    /// Since when the core has had nothing to run (None while it has).
    idle_since: Option<Time>,
    /// Cycles the idle loop runs per idle period, by layer (counted, not
    /// busy time: the operating system counts its idle task as idle).
    idle_loop: Vec<(Layer, u64)>,
    /// The P-state governor, if the clock is not fixed.
    governor: Option<Governor>,
    /// Busy picoseconds since the start (the governor's samples read it;
    /// `stats` start again when a measured interval begins).
    busy_ps_total: u64,
}

/// What the simulation must do after a core changed state: schedule a
/// completion at `at`, cancelling the one it booked before for this core
/// (a preempted job's completion is stale).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// Completion time of the job now running.
    pub at: Time,
}

impl<T> Core<T> {
    /// A core at `hz` recording utilisation in bins of `bin` (0: no series).
    pub fn new(hz: u64, bin: Dur) -> Self {
        assert!(hz > 0);
        Core {
            hz,
            queues: Default::default(),
            running: None,
            stats: CoreStats::default(),
            series: Vec::new(),
            bin: bin.0,
            idle_since: Some(Time::ZERO),
            idle_loop: Vec::new(),
            governor: None,
            busy_ps_total: 0,
        }
    }

    /// The clock chosen by `intel_pstate` from the core's load, starting
    /// from the clock it was made with, within the limits (min = turbo is
    /// the performance policy: a fixed clock).
    pub fn with_pstate(mut self, p: Pstate) -> Self {
        assert!(p.step_hz > 0 && p.min_hz >= p.step_hz && p.turbo_hz >= p.min_hz);
        self.hz = self.hz.clamp(p.min_hz, p.turbo_hz);
        self.governor = Some(Governor { p, since: Time::ZERO, busy_then: 0 });
        self
    }

    /// Take a P-state sample at `now` if one is due (nothing is running).
    fn govern(&mut self, now: Time) {
        let Some(g) = &mut self.governor else { return };
        let window = now.since(g.since).0;
        if window < g.p.interval.0 {
            return;
        }
        let busy = self.busy_ps_total - g.busy_then;
        let ratio = g.target(busy, window, self.hz / g.p.step_hz);
        g.since = now;
        g.busy_then = self.busy_ps_total;
        self.hz = ratio * g.p.step_hz;
    }

    /// The cycles the idle loop runs at the end of each idle period.
    pub fn with_idle_loop(mut self, pieces: Vec<(Layer, u64)>) -> Self {
        self.idle_loop = pieces.into_iter().filter(|&(_, c)| c > 0).collect();
        self
    }

    /// Width of the utilisation bins, ps (0: no series).
    pub fn bin_ps(&self) -> u64 {
        self.bin
    }

    /// Clock rate in Hz.
    pub fn hz(&self) -> u64 {
        self.hz
    }

    /// Picoseconds to run `cycles` (rounded up).
    pub fn time_for(&self, cycles: u64) -> Dur {
        Dur(crate::engine::time::mul_div_ceil(cycles, PS_PER_S, self.hz))
    }

    /// Whole cycles that fit in `d`.
    pub fn cycles_in(&self, d: Dur) -> u64 {
        crate::engine::time::mul_div_floor(d.0, self.hz, PS_PER_S)
    }

    /// Whether nothing runs or waits.
    pub fn is_idle(&self) -> bool {
        self.running.is_none() && self.queues.iter().all(VecDeque::is_empty)
    }

    /// The job running now, if any, and when it ends unless preempted.
    pub fn running(&self) -> Option<(&Job<T>, Time)> {
        self.running.as_ref().map(|r| (&r.job, r.end))
    }

    /// Count a hard interrupt.
    pub fn note_interrupt(&mut self) {
        self.stats.interrupts += 1;
    }

    /// Queue `job` at `now`. Returns a completion to schedule when the job
    /// starts at once (idle core, or it preempts a lower class).
    pub fn submit(&mut self, now: Time, job: Job<T>) -> Option<Wake> {
        let class = job.class;
        match &self.running {
            None => {
                if self.idle_since.take().is_some_and(|t| t < now) {
                    self.stats.idle_periods += 1;
                    for &(layer, cycles) in &self.idle_loop {
                        self.stats.cycles[layer.index()] += cycles;
                    }
                }
                self.queues[class as usize].push_back(job);
                self.govern(now);
                self.start_next(now)
            }
            Some(r) if class < r.job.class => {
                self.preempt(now);
                self.queues[class as usize].push_front(job);
                self.govern(now);
                self.start_next(now)
            }
            Some(_) => {
                self.queues[class as usize].push_back(job);
                None
            }
        }
    }

    /// The running job finished at `now`: returns it (with its continuation)
    /// and the completion of the next job, if one starts. A completion for
    /// another time (a preempted job's, which the caller should have
    /// cancelled) returns nothing.
    pub fn complete(&mut self, now: Time) -> Option<(Job<T>, Option<Wake>)> {
        if self.running.as_ref().is_none_or(|r| r.end != now) {
            return None;
        }
        let mut r = self.running.take().expect("checked");
        let rest = r.job.remaining();
        r.job.advance(rest, &mut self.stats.cycles);
        self.account(r.started, now);
        self.stats.jobs += 1;
        self.govern(now);
        let next = self.start_next(now);
        if next.is_none() {
            self.idle_since = Some(now);
        }
        Some((r.job, next))
    }

    fn preempt(&mut self, now: Time) {
        let mut r = self.running.take().expect("preempting a running job");
        self.count_so_far(&mut r, now);
        let class = r.job.class as usize;
        self.queues[class].push_front(r.job);
    }

    fn start_next(&mut self, now: Time) -> Option<Wake> {
        let job = self.queues.iter_mut().find_map(VecDeque::pop_front)?;
        let end = now + self.time_for(job.remaining());
        self.running = Some(Running { job, started: now, end });
        Some(Wake { at: end })
    }

    /// Start the counters (`stats`) again at `now`, as if the run began
    /// there: the running job's cycles and time so far are counted to the
    /// old counters and dropped with them. What the core does is unchanged:
    /// the job ends when it would have, the clock and the utilisation
    /// series go on.
    pub fn restart_counters(&mut self, now: Time) {
        if let Some(mut r) = self.running.take() {
            self.count_so_far(&mut r, now);
            self.running = Some(r);
        }
        self.stats = CoreStats::default();
    }

    /// Count what the running job `r` ran until `now` (its cycles, at most
    /// all but one, and its time) and let it go on from `now`.
    fn count_so_far(&mut self, r: &mut Running<T>, now: Time) {
        let ran = self.cycles_in(now.since(r.started)).min(r.job.remaining().saturating_sub(1));
        r.job.advance(ran, &mut self.stats.cycles);
        self.account(r.started, now);
        r.started = now;
    }

    fn account(&mut self, from: Time, to: Time) {
        self.busy_ps_total += to.since(from).0;
        self.stats.busy_ps += to.since(from).0;
        self.stats.busy_cycles += self.cycles_in(to.since(from));
        if self.bin == 0 {
            return;
        }
        let (mut a, b) = (from.0, to.0);
        while a < b {
            let i = (a / self.bin) as usize;
            let edge = ((i as u64) + 1) * self.bin;
            let step = b.min(edge) - a;
            if self.series.len() <= i {
                self.series.resize(i + 1, 0);
            }
            self.series[i] += step;
            a += step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(class: Class, cycles: u64, tag: u32) -> Job<u32> {
        Job::new(class, vec![(Layer::Tcp, cycles)], tag)
    }

    #[test]
    fn a_job_takes_cycles_over_clock() {
        let mut c: Core<u32> = Core::new(400_000_000, Dur::ZERO);
        let w = c.submit(Time::ZERO, job(Class::Task, 1000, 1)).unwrap();
        // 1000 cycles at 400 MHz = 2.5 µs.
        assert_eq!(w.at, Time(2_500_000));
        let (done, next) = c.complete(w.at).unwrap();
        assert_eq!((done.then, next), (1, None));
        assert_eq!(c.stats.cycles[Layer::Tcp.index()], 1000);
        assert_eq!(c.stats.busy_ps, 2_500_000);
    }

    #[test]
    fn an_idle_period_ends_when_work_comes_after_a_gap_not_back_to_back() {
        // 1 cycle = 1 ns. Work at time 0 finds the core idle since time 0:
        // no gap, no idle period.
        let mut c: Core<u32> = Core::new(1_000_000_000, Dur::ZERO);
        let w = c.submit(Time::ZERO, job(Class::Task, 100, 1)).unwrap();
        // Queued work behind it, and work submitted the instant it ends, are back to back.
        assert!(c.submit(Time(50_000), job(Class::Task, 100, 2)).is_none());
        let (_, n) = c.complete(w.at).unwrap();
        let (_, n) = c.complete(n.unwrap().at).unwrap();
        assert!(n.is_none());
        let w = c.submit(Time(200_000), job(Class::Task, 100, 3)).unwrap();
        assert_eq!(c.stats.idle_periods, 0);
        c.complete(w.at).unwrap();
        // An interrupt 1 µs later ends an idle period; so does a task after it.
        let w = c.submit(Time(1_300_000), job(Class::Irq, 100, 4)).unwrap();
        assert_eq!(c.stats.idle_periods, 1);
        c.complete(w.at).unwrap();
        let w = c.submit(Time(2_000_000), job(Class::Task, 100, 5)).unwrap();
        // Preempting a running job is no idle period.
        c.submit(Time(2_050_000), job(Class::Irq, 10, 6)).unwrap();
        assert_eq!(c.stats.idle_periods, 2);
        assert!(c.complete(w.at).is_none(), "stale completion");
        assert_eq!(c.stats.jobs, 4);
    }

    #[test]
    fn the_idle_loop_is_counted_per_idle_period_but_is_not_busy_time() {
        let loop_ = vec![(Layer::IdleSelect, 300), (Layer::Idle, 500), (Layer::Sched, 0)];
        let mut c: Core<u32> = Core::new(1_000_000_000, Dur::ZERO).with_idle_loop(loop_);
        for start in [1_000_000, 5_000_000, 9_000_000] {
            let w = c.submit(Time(start), job(Class::Irq, 100, 1)).unwrap();
            // The job starts at once: the loop does not delay it.
            assert_eq!(w.at, Time(start + 100_000));
            c.complete(w.at).unwrap();
        }
        assert_eq!(c.stats.idle_periods, 3);
        assert_eq!(c.stats.cycles[Layer::IdleSelect.index()], 900);
        assert_eq!(c.stats.cycles[Layer::Idle.index()], 1500);
        assert_eq!(c.stats.cycles[Layer::Sched.index()], 0);
        assert_eq!(c.stats.busy_ps, 300_000, "three jobs of 100 ns");
    }

    #[test]
    fn doubling_the_clock_halves_the_time() {
        let mut slow: Core<()> = Core::new(400_000_000, Dur::ZERO);
        let mut fast: Core<()> = Core::new(800_000_000, Dur::ZERO);
        let a = slow.submit(Time::ZERO, Job::new(Class::Task, vec![(Layer::Ip, 12_345)], ())).unwrap();
        let b = fast.submit(Time::ZERO, Job::new(Class::Task, vec![(Layer::Ip, 12_345)], ())).unwrap();
        assert!(a.at.0.abs_diff(2 * b.at.0) <= 1, "{} vs 2 × {}", a.at.0, b.at.0);
    }

    #[test]
    fn interrupts_preempt_tasks_which_resume_where_they_stopped() {
        let mut c: Core<u32> = Core::new(1_000_000_000, Dur::ZERO); // 1 cycle = 1 ns
        let w1 = c.submit(Time::ZERO, job(Class::Task, 1000, 1)).unwrap();
        // An interrupt at 400 ns preempts; it runs 100 cycles.
        let w2 = c.submit(Time(400_000), job(Class::Irq, 100, 2)).unwrap();
        assert_eq!(w2.at, Time(500_000));
        assert!(c.complete(w1.at).is_none(), "stale completion");
        let (irq, next) = c.complete(w2.at).unwrap();
        assert_eq!(irq.then, 2);
        // The task had 600 cycles left: it ends at 1100 ns.
        let next = next.unwrap();
        assert_eq!(next.at, Time(1_100_000));
        let (task, _) = c.complete(next.at).unwrap();
        assert_eq!(task.charged()[Layer::Tcp.index()], 1000);
        assert_eq!(c.stats.cycles[Layer::Tcp.index()], 1100);
        assert_eq!(c.stats.busy_ps, 1_100_000);
    }

    #[test]
    fn same_class_waits_in_order_and_lower_class_does_not_preempt() {
        let mut c: Core<u32> = Core::new(1_000_000_000, Dur::ZERO);
        let w = c.submit(Time::ZERO, job(Class::Softirq, 10, 1)).unwrap();
        assert!(c.submit(Time::ZERO, job(Class::Task, 10, 2)).is_none());
        assert!(c.submit(Time::ZERO, job(Class::Softirq, 10, 3)).is_none());
        let (_, n) = c.complete(w.at).unwrap();
        let n = n.unwrap();
        let (j, n2) = c.complete(n.at).unwrap();
        assert_eq!(j.then, 3, "the waiting softirq runs before the task");
        let n2 = n2.unwrap();
        assert_eq!(c.complete(n2.at).unwrap().0.then, 2);
        assert!(c.is_idle());
    }

    #[test]
    fn multi_piece_jobs_split_their_cycles_exactly_across_preemptions() {
        let mut c: Core<()> = Core::new(3_000_000_000, Dur::ZERO); // 1/3 ns per cycle
        let pieces = vec![(Layer::Syscall, 7), (Layer::Copy, 1000), (Layer::Socket, 13)];
        let w = c.submit(Time::ZERO, Job::new(Class::Task, pieces, ())).unwrap();
        let mut at = Time(1_234);
        let mut last = w;
        for _ in 0..5 {
            let irq = c.submit(at, Job::new(Class::Irq, vec![(Layer::Interrupt, 5)], ())).unwrap();
            let (_, next) = c.complete(irq.at).unwrap();
            last = next.unwrap();
            at = Time(irq.at.0 + 17_000);
        }
        let (task, _) = c.complete(last.at).unwrap();
        assert_eq!(task.charged()[Layer::Syscall.index()], 7);
        assert_eq!(task.charged()[Layer::Copy.index()], 1000);
        assert_eq!(task.charged()[Layer::Socket.index()], 13);
        assert_eq!(c.stats.cycles[Layer::Interrupt.index()], 25);
    }

    #[test]
    fn utilisation_series_splits_busy_time_into_bins() {
        let mut c: Core<()> = Core::new(1_000_000_000, Dur(1_000_000)); // 1 µs bins
        let w = c.submit(Time(500_000), Job::new(Class::Task, vec![(Layer::App, 2000)], ())).unwrap();
        c.complete(w.at).unwrap();
        assert_eq!(c.series, vec![500_000, 1_000_000, 500_000]);
    }

    const MS: u64 = 1_000_000_000;

    fn pstate(min_ghz: u64, turbo_ghz_tenths: u64, interval: Dur) -> Pstate {
        Pstate {
            min_hz: min_ghz * 1_000_000_000,
            turbo_hz: turbo_ghz_tenths * 100_000_000,
            step_hz: 100_000_000,
            interval,
        }
    }

    #[test]
    fn a_half_busy_sample_sets_the_clock_to_five_eighths_of_turbo() {
        // 4 GHz turbo (40 steps): target = (40 + 10) × busy_frac 128/256 = 25 steps.
        let mut c: Core<u32> = Core::new(2_000_000_000, Dur::ZERO).with_pstate(pstate(1, 40, Dur(MS)));
        // 1 000 000 cycles at 2 GHz: busy for 0.5 ms of the first 1 ms.
        let w = c.submit(Time::ZERO, job(Class::Task, 1_000_000, 1)).unwrap();
        assert_eq!(w.at, Time(MS / 2));
        c.complete(w.at).unwrap();
        assert_eq!(c.hz(), 2_000_000_000, "no sample before the interval has passed");
        let w = c.submit(Time(MS), job(Class::Task, 1_000_000, 2)).unwrap();
        assert_eq!(c.hz(), 2_500_000_000);
        assert_eq!(w.at, Time(MS + MS * 2 / 5), "the job runs at the new clock");
        c.complete(w.at).unwrap();
        assert_eq!(c.stats.busy_cycles, 2_000_000);
        assert_eq!(c.stats.busy_ps, MS / 2 + MS * 2 / 5);
    }

    #[test]
    fn a_faster_past_clock_pulls_half_way_back_and_the_clock_stays_in_its_limits() {
        // At turbo (40 steps), busy 0.1 ms of 1 ms: busy_frac 25/256, target
        // 50 × 25 >> 8 = 4, raised to min 10, then 10 + (40 - 10) / 2 = 25.
        let mut c: Core<u32> = Core::new(4_000_000_000, Dur::ZERO).with_pstate(pstate(1, 40, Dur(MS)));
        let w = c.submit(Time::ZERO, job(Class::Task, 400_000, 1)).unwrap();
        c.complete(w.at).unwrap();
        c.submit(Time(MS), job(Class::Task, 10, 2)).unwrap();
        assert_eq!(c.hz(), 2_500_000_000);
        // An idle stretch: no busy time, no pull back; the clock drops to min.
        let mut c: Core<u32> = Core::new(4_000_000_000, Dur::ZERO).with_pstate(pstate(1, 40, Dur(MS)));
        c.submit(Time(5 * MS), job(Class::Task, 10, 1)).unwrap();
        assert_eq!(c.hz(), 1_000_000_000);
        // The performance policy (min = turbo): the clock is turbo from the
        // start, whatever the load.
        let mut c: Core<u32> = Core::new(3_400_000_000, Dur::ZERO).with_pstate(pstate(1, 37, Dur(MS)));
        assert_eq!(c.hz(), 3_400_000_000, "the nominal clock lies within the limits");
        c = Core::new(3_400_000_000, Dur::ZERO).with_pstate(Pstate { min_hz: 3_700_000_000, ..pstate(1, 37, Dur(MS)) });
        assert_eq!(c.hz(), 3_700_000_000);
        c.submit(Time(5 * MS), job(Class::Task, 10, 1)).unwrap();
        assert_eq!(c.hz(), 3_700_000_000, "an idle sample keeps the floor");
        // A saturated core reaches turbo, not 1.25 × turbo.
        let mut c: Core<u32> = Core::new(2_000_000_000, Dur::ZERO).with_pstate(pstate(1, 40, Dur(MS)));
        let w = c.submit(Time::ZERO, job(Class::Task, 2_000_000, 1)).unwrap();
        c.complete(w.at).unwrap();
        assert_eq!(c.hz(), 4_000_000_000);
    }

    #[test]
    fn a_steady_load_settles_where_the_clock_is_the_square_root_of_one_and_a_quarter_turbo_times_the_work() {
        // 15 000 cycles every 10 µs: 1.5 Gcycles/s. With a 3.7 GHz turbo,
        // sqrt(1.25 × 3.7e9 × 1.5e9) = 2.63 GHz, busy 57 %; at the fixed
        // clock of 3.7 GHz it would be busy 41 %.
        let mut c: Core<u32> = Core::new(3_400_000_000, Dur::ZERO).with_pstate(pstate(1, 37, Dur(10 * MS)));
        let period = 10_000_000; // 10 µs
        let mut wake: Option<Wake> = None;
        let (mut busy_at_200ms, mut hz_after) = (0, Vec::new());
        for k in 0..40_000u64 {
            let t = Time(k * period);
            if let Some(w) = wake.take() {
                assert!(w.at <= t, "the load is below one core");
                assert!(c.complete(w.at).unwrap().1.is_none());
            }
            if k == 20_000 {
                busy_at_200ms = c.stats.busy_ps;
            }
            if k > 20_000 {
                hz_after.push(c.hz());
            }
            wake = c.submit(t, job(Class::Task, 15_000, 0));
        }
        let (lo, hi) = (*hz_after.iter().min().unwrap(), *hz_after.iter().max().unwrap());
        assert!(lo >= 2_500_000_000 && hi <= 2_800_000_000, "clock {lo}..{hi} Hz");
        let busy = (c.stats.busy_ps - busy_at_200ms) as f64 / (20_000 * period) as f64;
        assert!((0.53..=0.61).contains(&busy), "busy {busy}");
    }
}
