//! The timed host: when a host has a timing profile, every frame and every
//! socket call goes through its CPU cores, memory, I/O bus and NIC.
//!
//! ```text
//!  send:  app ─ syscall+socket+copy (task) ─▶ smoltcp ─▶ tcp/ip/device/driver per frame
//!         ─▶ TX ring ─▶ NIC: descriptor fetch + frame DMA over the bus ─▶ link
//!         ◀─ TX completion: write-back, (moderated) interrupt, descriptor clean-up
//!  recv:  link ─▶ NIC RX FIFO ─▶ frame + descriptor DMA into memory ─▶ (moderated)
//!         interrupt ─▶ per frame driver/device/ip/tcp (softirq) ─▶ smoltcp
//!         ─▶ wake-up + syscall+socket+copy (task) ─▶ app
//! ```
//!
//! smoltcp still decides *what* happens; this file decides *when*: a frame
//! reaches smoltcp when the CPU finishes its receive processing, and a frame
//! smoltcp emits reaches the NIC when the CPU finishes its send processing.
//! Content (ACK numbers, windows) is fixed when smoltcp emits the frame.
//! Memory contention: DMA and copies reserve the memory system's bandwidth
//! first come, first served; a copy that finds it busy stalls the core
//! (charged as `memory_stall`). Not modelled: cache pollution by the stack,
//! the scheduler's run queue beyond one application.
//!
//! This file holds the host's timing state and its CPU side (jobs, socket
//! calls, and the glue that carries out what the call-path engine, TOE or
//! VIA, asks for); `nic.rs` the NIC path and the frame engines' glue,
//! `cost.rs` the per-frame costs, `report.rs` the report.

use std::collections::BTreeMap;

use super::cost::{push_nonzero, qdisc_pkt_len, send_size_goal, send_skbs, shape, tx_pieces, READ_WALK_LINES};
use super::{Env, HostEvent};
use crate::bus::{Bus, BusOp};
use crate::engine::{Dur, EventKey, Priority, Time};
use crate::host::cpu::{Breakdown, Class, Core, Job, Layer, Path, Pstate, LAYERS};
use crate::host::driver::TxDriver;
use crate::host::qdisc::Qdisc;
use crate::host::timing::{within_reach, QdiscKind, Timing};
use crate::host::{segment_socket, sends, SocketKey, TxFrame};
use crate::nic::device::Nic;
use crate::nic::offload::{
    reserve_memory, AnyCallOffload, AnyRxOffload, AnyTxOffload, CallAction, CallCx, CallEvent, CallOffload,
    OffloadEvent, SocketCall,
};
use crate::probe::observer;
use crate::workload::Op;

/// A segment waiting for TCP input (socket backlog): its place in arrival
/// order, the frame, the segments merged into it.
pub(crate) type Waiting = (u64, Vec<u8>, u32);

/// What happens when a CPU job completes.
#[derive(Debug)]
pub(crate) enum Next {
    /// The application's socket call is done: carry it out.
    AppOp(Op),
    /// The call `op` has the socket after spinning for its lock
    /// (`cpu.lock_spin`): it goes on, a read with what is queued now.
    LockTaken(Op),
    /// Offload with the socket copy on the communication processor: the
    /// application core's part of the call is done; the communication
    /// processor copies (that many of its cycles), then the call is carried out.
    CommCopy(Op, u64),
    /// Receive processing of a frame is done: hand it to smoltcp (with the
    /// number of TCP segments a coalescing engine merged into it).
    RxDeliver(Vec<u8>, u32),
    /// Send processing of frame number `0` is done: post it to the TX ring
    /// (in the order the stack emitted frames, as the socket lock ensures).
    TxToRing(u64, TxFrame),
    /// The application, woken by arriving data, is running: let it read.
    AppWake,
    /// The interrupt handler is done: start the driver's receive work.
    IrqDone,
    /// Sent descriptors cleaned: free that many ring slots.
    TxCleaned(u32),
    /// The application core's send-channel interrupt is done: its NAPI
    /// cleans what that core sent (`nic.xps`).
    XpsIrqDone,
    /// The application core's send channel cleaned that many descriptors.
    XpsCleaned(u32),
    /// A driver batch is done: post that many fresh receive buffers.
    BatchDone(u32),
    /// A call-path engine's job is done: its event.
    Call(CallEvent),
    /// The application finished computing on data it read.
    AppComputed,
    /// Work that only takes the core's time (the softirq's socket lock
    /// for a segment it queued to the backlog).
    Charged,
    /// Zero-copy: a failed speculation's cleanup is done; RX DMA may resume.
    SpecResume,
    /// Socket backlog: TCP input of a segment is done in the softirq: hand
    /// it to smoltcp.
    RxStack(u64, Vec<u8>, u32),
    /// Socket backlog: the application's core processed the segments that
    /// waited while its call `1` held the socket.
    Backlog(Vec<Waiting>, Op),
}

/// A timed host's state: cores, memory, bus, NIC, driver, offload engine.
pub struct Timed {
    pub(crate) timing: Timing,
    pub(crate) cores: Vec<Core<Next>>,
    /// Each core's booked completion event.
    pub(crate) cpu_wakes: Vec<Option<EventKey>>,
    /// The offload engine's pending re-armable timer.
    pub(crate) offload_timer: Option<EventKey>,
    pub(crate) bus: Bus,
    pub(crate) nic: Nic,
    pub(crate) memory_free_at: Time,
    pub(crate) app_busy: bool,
    /// The driver's transmit side (send order, qdisc).
    pub(crate) driver: TxDriver,
    /// Cycles per layer for each message (request/response transaction) and path.
    pub(crate) per_msg: BTreeMap<(u64, Path), Breakdown>,
    /// Cycles per layer of completed jobs, per path (send, receive, other).
    pub(crate) per_path: [Breakdown; 3],
    /// Per-message DMA, spans and frames (the echo workload's measurement).
    pub(crate) measure: super::measure::Measure,
    /// The receive offload engine (NIC LRO, GRO, software LRO, or none).
    pub(crate) rx: AnyRxOffload,
    /// The transmit offload engine (TSO, checksum offload, or none).
    pub(crate) tx: AnyTxOffload,
    /// How the application's calls reach the stack (TOE, VIA, or system calls).
    pub(crate) call: AnyCallOffload,
    /// The datagram the application reads next was rebuilt by a copy
    /// (`costs.ip_defrag_copy`), so its data is in the cache.
    pub(crate) glued: bool,
    /// The application found nothing to do and blocked: its next call
    /// starts with the scheduler switching to it (`costs.schedule`).
    pub(crate) app_blocked: bool,
    /// A blocked application was woken on an idle core and waits out
    /// `cpu.wake_latency`; then it is switched in.
    pub(crate) waking: bool,
    /// Received data segments (sk_buffs) and the whole receive pages they
    /// filled, delivered to a socket and not yet freed by a read.
    pub(crate) unread: (u64, u64),
    /// Cache lines of unread payload the receive stack's core touched
    /// (`cost::head_lines`), and how many payload bytes back its private
    /// cache reaches (`cpu.l2_cache`), counted only when the application
    /// runs on another core.
    pub(crate) unread_lines: u64,
    pub(crate) stack_reach: u64,
    /// Pieces of the unread sk_buffs a read copies one call at a time (the
    /// head's payload, each page fragment: `cost::copy_pieces`), counted
    /// when `costs.copy_call` prices the call.
    pub(crate) unread_pieces: u64,
    /// TCP/UDP payload bytes DMA'd into memory and read by the application
    /// so far: their difference is the reuse distance of the next byte read
    /// (DDIO, `memory.ddio`).
    pub(crate) rx_data: (u64, u64),
    /// Received payload bytes DMA'd into memory: this host's, or while its
    /// machine's parts are lent to it (`machine.rs`), every host's of the
    /// machine. With `marks` (a host on a machine), the reuse distance of
    /// a byte read counts them instead of `rx_data`'s.
    pub(crate) llc_in: u64,
    pub(crate) marks: Option<super::machine::Marks>,
    /// Where reads found received data, and how much waited (report).
    pub(crate) rx_copy: super::rxcopy::RxCopy,
    /// Receive buffer bytes filled short of a whole page: by the NIC (the
    /// driver allocates a page once frames fill it) and by frames the
    /// application has read (a page is freed once all of it is read).
    pub(crate) rx_pages: (u64, u64),
    /// TSO autosizing and deferral of the stack's output (`nic.tso_defer`).
    pub(crate) autosize: Option<crate::host::autosize::Autosize>,
    /// Linux's window test before an immediate ACK (`cpu.ack_window_test`).
    pub(crate) ack_gate: Option<super::ackgate::AckGate>,
    /// The poll under way follows the application's read of this socket.
    pub(crate) after_read: Option<SocketKey>,
    /// Bytes the read call in progress has read so far (it may go on after
    /// the backlog: `cpu.read_after_backlog`).
    call_read: u64,
    /// The socket lock's counters (report).
    pub(crate) lock_stats: super::socklock::SocketLockStats,
    /// When the measured interval began (zero: at the start; see
    /// `Timed::begin_measurement`).
    pub(crate) measured_from: Time,
    /// Per TCP socket written: the payload bytes in its unsent tail
    /// sk_buff, which the next write fills first (`send_skbs`).
    pub(crate) send_tails: BTreeMap<smoltcp::iface::SocketHandle, u64>,
    /// Socket backlog (`cpu.socket_backlog`): the socket whose lock the
    /// application's call holds, and the segments for it that wait. Other
    /// sockets' segments get their TCP input in the softirq as usual.
    pub(crate) owned: Option<SocketKey>,
    pub(crate) backlog: Vec<Waiting>,
    /// The backlog's last segment while others may join it.
    pub(crate) joining: Option<super::join::Joining>,
    /// Per socket, its receive queue's last unread sk_buff while others may
    /// join it (`cpu.receive_queue_coalesce`): the sequence number after it
    /// and its page fragments.
    pub(crate) rcvq_tail: BTreeMap<SocketKey, (u32, u64)>,
    /// Socket backlog: per socket, its TCP segments numbered in arrival
    /// order (next to number, next to hand to smoltcp), and those done out
    /// of turn. A socket's segments reach the stack in the order the
    /// softirq took them; another socket's do not wait for them.
    pub(crate) order: BTreeMap<SocketKey, (u64, u64)>,
    pub(crate) done: BTreeMap<(SocketKey, u64), (Vec<u8>, u32)>,
    /// Sent data sk_buffs an ACK has yet to free (`rtx.rs`).
    pub(crate) rtx: super::rtx::Rtx,
    /// The core that took the buddy allocator's zone lock last
    /// (`costs.zone_lock`), whose cache holds the lock's line.
    pub(crate) zone_core: Option<usize>,
}

impl Timed {
    /// Timing state for a host with `timing` and offload engines `rx`, `tx`
    /// and `call`, sampling utilisation every `bin`.
    pub(crate) fn new(timing: Timing, rx: AnyRxOffload, tx: AnyTxOffload, call: AnyCallOffload, bin: Dur) -> Timed {
        let cores: Vec<_> = (0..timing.cpu.cores as usize)
            .map(|i| {
                let idle_loop = vec![
                    (Layer::IdleSelect, timing.cycles_on(i, timing.costs.idle_select)),
                    (Layer::Idle, timing.cycles_on(i, timing.costs.idle)),
                ];
                let core = Core::new(timing.core_hz(i), bin).with_idle_loop(idle_loop);
                match timing.cpu.pstate {
                    Some(p) if timing.comm_core() != Some(i) => core.with_pstate(Pstate {
                        min_hz: p.min.0,
                        turbo_hz: p.turbo.0,
                        step_hz: crate::host::cpu_params::PSTATE_STEP_HZ,
                        interval: Dur(p.interval.0),
                    }),
                    _ => core,
                }
            })
            .collect();
        let mut nic = Nic::new(timing.nic.rx_ring, timing.nic.dim);
        nic.bql = timing.nic.bql.then(Default::default);
        let driver = TxDriver::new(match timing.nic.qdisc {
            QdiscKind::Fifo => Qdisc::default(),
            QdiscKind::FqCodel => Qdisc::fq_codel(timing.costs.qdisc_quantum.0),
        });
        let autosize = (tx.engine_ref().stack().segmentation && timing.nic.tso_defer.0 > 0)
            .then(|| crate::host::autosize::Autosize::new(Dur(timing.nic.tso_defer.0)));
        let ack_gate = timing.cpu.ack_window_test.then(super::ackgate::AckGate::default);
        Timed {
            bus: Bus::new(&timing.bus),
            cpu_wakes: vec![None; cores.len()],
            offload_timer: None,
            cores,
            nic,
            timing,
            memory_free_at: Time::ZERO,
            app_busy: false,
            driver,
            per_msg: BTreeMap::new(),
            per_path: [[0; LAYERS]; 3],
            measure: Default::default(),
            rx,
            tx,
            call,
            glued: false,
            app_blocked: false,
            waking: false,
            ack_gate,
            after_read: None,
            call_read: 0,
            lock_stats: Default::default(),
            measured_from: Time::ZERO,
            send_tails: BTreeMap::new(),
            unread: (0, 0),
            unread_lines: 0,
            stack_reach: 0,
            unread_pieces: 0,
            rx_data: (0, 0),
            llc_in: 0,
            marks: None,
            rx_copy: Default::default(),
            rx_pages: (0, 0),
            autosize,
            owned: None,
            backlog: Vec::new(),
            joining: None,
            rcvq_tail: BTreeMap::new(),
            order: BTreeMap::new(),
            done: BTreeMap::new(),
            rtx: Default::default(),
            zone_core: None,
        }
    }

    /// A polling processor serves the NIC (offload in poll mode).
    pub(crate) fn polled(&self) -> bool {
        self.call.engine_ref().polled()
    }

    /// When a polling communication processor notices work that appeared at `now`.
    pub(crate) fn poll_at(&self, now: Time) -> Time {
        self.timing.poll_at(now)
    }

    /// Reserve the memory system for `bytes` starting at `now`; returns when done.
    pub(crate) fn memory(&mut self, now: Time, bytes: u64) -> Time {
        reserve_memory(&self.timing, &mut self.memory_free_at, now, bytes)
    }

    /// When a DMA of a `len`-byte frame and its descriptor, started at `now`,
    /// finishes: transmit fetches the descriptor and then the frame, receive
    /// writes the frame and then the descriptor; the memory system and the
    /// DMA engine's own rate bound it too. The memory system serves
    /// requests in the order they are made, so the frame's bytes are
    /// booked at `now`, when the NIC asks for them: booked at a later start
    /// (after the descriptor fetch), a read would hold up the CPU's copies
    /// asked for before it, and with several frames in DMA they would wait
    /// for all of them.
    pub(crate) fn dma(&mut self, now: Time, op: BusOp, len: u64) -> Time {
        let desc = self.timing.nic.descriptor.0;
        let (start, bus_done) = if op == BusOp::DeviceRead {
            let fetched = self.bus.transfer(now, op, desc);
            (fetched, self.bus.transfer(fetched, op, len))
        } else {
            let data = self.bus.transfer(now, op, len);
            (now, self.bus.transfer(data, op, desc))
        };
        let mut done = bus_done.max(self.memory(now, len));
        if let Some(rate) = self.timing.nic.dma_rate {
            done = done.max(start + Dur(rate.ps_for_bits(len * 8).0));
        }
        done
    }

    /// A frame's DMA from `from` to `to`, for message `msg` (if any) on `path`.
    pub(crate) fn note_dma(&mut self, msg: Option<u64>, path: Path, from: Time, to: Time) {
        if let Some(m) = msg {
            let cycles = super::measure::dma_cycles(self.timing.cpu.clock.0, to.since(from));
            self.measure.dma(m, path, from, to, cycles);
        }
    }
}

/// Where a CPU job runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    pub(super) core: usize,
    pub(super) class: Class,
}

impl Ctx {
    /// The application's context on `core`.
    pub(crate) fn task(core: usize) -> Ctx {
        Ctx { core, class: Class::Task }
    }
}

impl Timed {
    /// The context of the receive stack: a softirq on its core.
    pub(crate) fn irq_ctx(&self) -> Ctx {
        Ctx { core: self.timing.stack_core(), class: Class::Softirq }
    }

    /// Submit `job` to core `core`.
    pub(crate) fn submit(&mut self, env: &mut Env, core: usize, now: Time, job: Job<Next>) {
        if let (Some(m), true) = (job.msg, job.total() > 0) {
            self.measure.touch(m, job.path, now, now);
        }
        if let Some(w) = self.cores[core].submit(now, job) {
            self.wake_core(env, core, w);
        }
    }

    /// Book core `core` of host `h`'s next completion, cancelling the one
    /// it replaces (a preempted job's).
    pub(crate) fn wake_core(&mut self, env: &mut Env, core: usize, w: crate::host::cpu::Wake) {
        if let Some(k) = self.cpu_wakes[core].take() {
            env.out.cancel(k);
        }
        let key = env.out.at(w.at, Priority::DEVICE, HostEvent::CpuDone(core));
        self.cpu_wakes[core] = Some(key);
    }

    /// A CPU job finished.
    pub(crate) fn on_cpu_done(&mut self, env: &mut Env, core: usize, now: Time) -> Result<(), crate::Error> {
        // Replaced completions are cancelled: this one is the core's current.
        self.cpu_wakes[core] = None;
        let Some((job, next)) = self.cores[core].complete(now) else { return Ok(()) };
        if let Some(w) = next {
            self.wake_core(env, core, w);
        }
        if env.out.probes().wants(observer::JOB) {
            let fields = [("core", core as f64), ("cycles", job.total() as f64), ("class", job.class() as u8 as f64)];
            env.out.probes().emit(observer::JOB, now, env.h, &env.host.name, &fields);
        }
        let t = &mut *self;
        let charged = job.charged();
        for (r, c) in t.per_path[job.path as usize].iter_mut().zip(charged) {
            *r += c;
        }
        if let Some(m) = job.msg {
            let row = t.per_msg.entry((m, job.path)).or_insert([0; LAYERS]);
            for (r, c) in row.iter_mut().zip(charged) {
                *r += c;
            }
            if job.total() > 0 {
                t.measure.touch(m, job.path, now, now);
            }
        }
        match job.then {
            Next::AppOp(op) => {
                env.perform(op, now)?;
                if let Op::Read { bytes, .. } = op {
                    self.call_read += bytes;
                }
                if !self.release_sock(env, op, now) {
                    self.after_call(env, op, now);
                }
            }
            Next::Backlog(frames, op) => self.on_backlog_done(env, frames, op, now)?,
            Next::LockTaken(op) => {
                let op = match op {
                    Op::Read { sock, .. } => env.app.read_more(env.host, sock, 0).unwrap_or(op),
                    op => op,
                };
                self.call_job(env, now, op, false, false);
            }
            Next::RxStack(id, frame, segments) => {
                let ctx = self.irq_ctx();
                self.tcp_input_done(env, (id, frame, segments), ctx, now)?;
                self.timed_poll(env, now, ctx, true);
            }
            Next::CommCopy(op, cycles) => {
                let t = &mut *self;
                let core = t.timing.stack_core();
                let path = match op {
                    Op::Read { .. } | Op::RecvFrom { .. } => Path::Receive,
                    _ => Path::Send,
                };
                let msg = env.app.current_msg();
                let job = Job::new(Class::Softirq, vec![(Layer::Copy, cycles)], Next::AppOp(op)).for_msg(msg).on(path);
                self.submit(env, core, now, job);
            }
            Next::Charged => {}
            Next::AppComputed => {
                self.app_busy = false;
                self.app_kick(env, now, false);
            }
            Next::Call(ev) => self.on_call_event(env, ev, now),
            Next::RxDeliver(frame, segments) => self.rx_delivered(env, frame, segments, now)?,
            Next::TxToRing(seq, mut frame) => {
                frame.core = core;
                let t = &mut *self;
                let (nic, ring) = (&mut t.nic, t.timing.nic.tx_ring);
                t.driver.done(seq, frame, |frame| nic.post_tx(frame, ring));
                self.nic_tx_kick(env, now);
            }
            Next::AppWake => {
                self.app_busy = false;
                self.app_kick(env, now, false);
            }
            Next::IrqDone => self.driver_batch(env, now),
            Next::SpecResume => self.on_offload_event(env, OffloadEvent::Resume, now)?,
            Next::TxCleaned(n) => self.tx_cleaned(env, n, now),
            Next::XpsIrqDone => self.xps_clean(env, now),
            Next::XpsCleaned(n) => {
                self.tx_cleaned(env, n, now);
                self.xps_cleaned(env, now);
            }
            Next::BatchDone(refill) => {
                let t = &mut *self;
                t.nic.rx_posted += refill;
                if refill > 0 {
                    t.bus.transfer(now, BusOp::MmioWrite, 4);
                }
                self.nic_rx_kick(env, now);
                let t = &mut *self;
                // Linux 5.4 (`mlx5e_napi_poll`): a poll that did not use its
                // whole budget completes NAPI, and the next interrupt waits
                // for moderation even if frames came meanwhile.
                let short = t.timing.nic.gro_flush == crate::host::timing::GroFlush::NapiComplete
                    && !t.polled()
                    && refill < t.timing.nic.napi_budget;
                if (t.timing.nic.napi || t.polled())
                    && !short
                    && (t.nic.work_pending() || t.rx.engine_ref().holds_frames())
                {
                    self.driver_batch(env, now);
                } else {
                    // NAPI completes: DIM may pick another moderation.
                    if let Some(dim) = t.nic.dim.as_mut() {
                        dim.napi_complete(now);
                    }
                    t.nic.masked = false;
                    self.irq_check(env, now);
                }
            }
        }
        Ok(())
    }

    /// The application's call `op` is over: the stack reacts to it (a read's
    /// window update), then a reader computes on what it read or the
    /// application makes its next call.
    pub(crate) fn after_call(&mut self, env: &mut Env, op: Op, now: Time) {
        // A reader works on what it read before its next call; the
        // stack's reaction to the read (a window update) comes first.
        let t = &mut *self;
        let op = match (op, std::mem::take(&mut t.call_read)) {
            (Op::Read { sock, .. }, read) if read > 0 => Op::Read { sock, bytes: read },
            (op, _) => op,
        };
        let compute = t.timing.app.cycles(op.bytes());
        let computing = compute > 0 && matches!(op, Op::Read { .. } | Op::RecvFrom { .. });
        t.app_busy = computing;
        let app_core = t.timing.cpu.app_core as usize;
        if self.with_call(env, now, |e, cx, _| e.call_done(cx)) {
            self.app_kick(env, now, false);
        } else {
            self.after_read = match op {
                Op::Read { sock, .. } => env.host.socket_key(sock),
                _ => None,
            };
            self.timed_poll(env, now, Ctx { core: app_core, class: Class::Task }, false);
        }
        if computing {
            let msg = env.app.current_msg();
            let job =
                Job::new(Class::Task, vec![(Layer::App, compute)], Next::AppComputed).for_msg(msg).on(Path::Receive);
            self.submit(env, app_core, now, job);
        }
    }

    /// `cpu.lock_spin`: the cycles `lock_sock` on `core` spins at `now`
    /// for the socket's spinlock, which the softirq on the stack's core
    /// holds while it runs the TCP input of a segment for the caller's
    /// socket `sock` (until that job ends).
    fn lock_spin(&self, core: usize, now: Time, sock: Option<SocketKey>) -> u64 {
        let stack = self.timing.stack_core();
        if !(self.timing.cpu.lock_spin && self.timing.cpu.socket_backlog) || stack == core || sock.is_none() {
            return 0;
        }
        let for_caller = |then: &Next| matches!(then, Next::RxStack(_, f, _) if segment_socket(f) == sock);
        match self.cores[stack].running() {
            Some((job, end)) if for_caller(&job.then) && end > now => self.cores[core].cycles_in(end.since(now)),
            _ => 0,
        }
    }

    /// `cpu.read_after_backlog`: read call `op`, whose core has just run
    /// the TCP input of the segments that waited in the backlog, goes on
    /// if they queued data and its buffer has room (`tcp_recvmsg`: after
    /// `tcp_cleanup_rbuf`, `release_sock` and `lock_sock`, another pass
    /// over the receive queue). Returns false when the call ends.
    pub(super) fn read_goes_on(&mut self, env: &mut Env, op: Op, now: Time) -> bool {
        let Op::Read { sock, .. } = op else { return false };
        if !self.timing.cpu.read_after_backlog {
            return false;
        }
        let Some(more) = env.app.read_more(env.host, sock, self.call_read) else { return false };
        self.lock_stats.reads_continued += 1;
        // `tcp_cleanup_rbuf`: the stack reacts to what the call has read.
        self.after_read = env.host.socket_key(sock);
        let core = self.timing.cpu.app_core as usize;
        self.timed_poll(env, now, Ctx { core, class: Class::Task }, false);
        self.call_job(env, now, more, false, false);
        true
    }

    /// Poll the stack of timed host `h` at `now` in context `ctx`; every
    /// frame it emits gets its send-path job there. Then let the
    /// application make its next call (`woken`: it was waiting for data).
    pub(crate) fn timed_poll(&mut self, env: &mut Env, now: Time, ctx: Ctx, woken: bool) {
        let credit = self.driver.credit();
        env.host.poll(now, credit);
        let blocked = env.host.dev.tx_blocked;
        self.driver.stack_blocked = blocked;
        let mut frames = std::mem::take(&mut env.host.dev.tx);
        if let Some(g) = self.ack_gate.as_mut() {
            let read = std::mem::take(&mut self.after_read);
            let quick = env.host.quickacking();
            frames = g.offer(frames, now, |flow| quick || read.is_some_and(|sock| sends(sock, flow)));
            if let Some(at) = g.deadline() {
                env.request_poll(at);
            }
        }
        if let Some(a) = self.autosize.as_mut() {
            let rtx = &self.rtx;
            frames = a.offer(frames, now, |flow| rtx.in_flight(flow));
            if let Some(at) = a.deadline() {
                env.request_poll(at);
            }
        }
        let msg = env.app.current_msg();
        for frame in frames {
            let t = &mut *self;
            let sh = shape(&frame.bytes);
            let path = if sh.data > 0 { Path::Send } else { Path::Receive };
            let qlen = qdisc_pkt_len(frame.bytes.len() as u64, sh.data, frame.tso_mss);
            let mut pieces = tx_pieces(&t.timing, sh, qlen, ctx.core);
            if let Some(x) = t.rx.engine().tx() {
                pieces.extend(x.tx_pieces(&t.timing, &frame.bytes, ctx.core));
            }
            if t.rtx.sent(&frame.bytes) && t.rtx.stats.send(frame.tso_mss.is_some()) {
                // More super-segments went out than the writes allocated
                // sk_buffs: this one ends inside an sk_buff, whose rest
                // `tso_fragment` moves to a new one (`sk_stream_alloc_skb`:
                // the head and its slab object, as a write's; `skb_split`:
                // the fragment descriptors past the split and a second
                // reference on the page the split falls in).
                push_nonzero(&mut pieces, Layer::Skb, t.timing.cycles_on(ctx.core, t.timing.costs.skb_alloc));
                push_nonzero(&mut pieces, Layer::Mm, t.timing.cycles_on(ctx.core, t.timing.costs.skb_slab));
                push_nonzero(&mut pieces, Layer::Skb, t.timing.cycles_on(ctx.core, t.timing.costs.skb_split));
            }
            let seq = t.driver.emit();
            let job = Job::new(ctx.class, pieces, Next::TxToRing(seq, frame)).for_msg(msg).on(path);
            self.submit(env, ctx.core, now, job);
        }
        if !self.with_call(env, now, |e, cx, waits| e.stack_done(cx, ctx.core, woken, waits)) {
            self.app_kick(env, now, woken);
        }
        env.schedule_stack_timer(now);
    }

    /// Start the application's next socket call if it is not in one. An
    /// application `woken` by arriving data first pays its wake-up and only
    /// then looks how much there is to read (more may have come meanwhile).
    pub(crate) fn app_kick(&mut self, env: &mut Env, now: Time, woken: bool) {
        if self.app_busy {
            return;
        }
        let Some(op) = env.app.next_op(now, env.host) else {
            self.app_blocked = true;
            self.waking = false;
            return;
        };
        let msg = env.app.current_msg();
        let app_core = self.timing.cpu.app_core as usize;
        if let Some((pieces, path)) = self.with_call(env, now, |e, cx, _| e.library(cx, socket_call(op), app_core)) {
            self.app_busy = true;
            let job = Job::new(Class::Task, pieces, Next::AppOp(op)).for_msg(msg).on(path);
            self.submit(env, app_core, now, job);
            return;
        }
        let t = &mut *self;
        // A blocked application on an idle core runs once the core has left
        // its idle state (`cpu.wake_latency`); the core stays idle meanwhile.
        let latency = Dur(t.timing.cpu.wake_latency.0);
        if t.app_blocked && !std::mem::take(&mut t.waking) && latency > Dur::ZERO && t.cores[app_core].is_idle() {
            t.app_busy = true;
            t.waking = true;
            env.out.at(now + latency, Priority::DEVICE, HostEvent::AppResume(woken));
            return;
        }
        t.app_busy = true;
        let resumed = std::mem::take(&mut t.app_blocked);
        let c = &t.timing.costs;
        if woken && matches!(op, Op::Read { .. } | Op::RecvFrom { .. }) {
            let mut wake = vec![(Layer::Socket, t.timing.cycles(c.wakeup))];
            if resumed {
                push_nonzero(&mut wake, Layer::Sched, t.timing.cycles(c.schedule));
            }
            let core = t.timing.cpu.app_core as usize;
            let job = Job::new(Class::Task, wake, Next::AppWake).for_msg(msg).on(Path::Receive);
            self.submit(env, core, now, job);
            return;
        }
        self.call_job(env, now, op, resumed, true);
    }

    /// Submit the job of socket call `op` on the application's core: a
    /// whole call (`entry`: its system call and socket layer), or the part
    /// of a read that goes on within the call (`tcp_recvmsg`'s loop after
    /// the backlog). `resumed`: the application was switched back in.
    fn call_job(&mut self, env: &mut Env, now: Time, op: Op, resumed: bool, entry: bool) {
        let msg = env.app.current_msg();
        let app_core = self.timing.cpu.app_core as usize;
        let t = &mut *self;
        let c = &t.timing.costs;
        let mut pieces = Vec::with_capacity(6);
        if resumed {
            push_nonzero(&mut pieces, Layer::Sched, t.timing.cycles(c.schedule));
        }
        // A sender computes a block before writing it (a reader computes
        // after its read: see `Next::AppOp`).
        let compute = t.timing.app.cycles(op.bytes());
        if entry && compute > 0 && matches!(op, Op::Write { .. } | Op::SendTo { .. }) {
            pieces.push((Layer::App, compute));
        }
        let path = match op {
            Op::Write { .. } | Op::SendTo { .. } => Path::Send,
            Op::Read { .. } | Op::RecvFrom { .. } => Path::Receive,
            Op::Close { .. } | Op::Connect { .. } | Op::ViaSend { .. } | Op::ViaRecv { .. } => Path::Other,
        };
        let (socket, hot) = match op {
            Op::Write { .. } | Op::SendTo { .. } => (c.socket_send, op.bytes() <= t.timing.memory.cache_size.0 / 2),
            // Received data arrived by DMA: it is never in the cache.
            // (A datagram `ip_glue` rebuilt was just written by the CPU.)
            Op::Read { .. } | Op::RecvFrom { .. } => (c.socket_recv, std::mem::take(&mut t.glued)),
            Op::Close { .. } | Op::Connect { .. } | Op::ViaSend { .. } | Op::ViaRecv { .. } => (c.socket_send, true),
        };
        if entry {
            pieces.push((Layer::Syscall, t.timing.cycles(c.syscall)));
            pieces.push((Layer::Socket, t.timing.cycles(socket)));
        }
        let sock = call_socket(env, op);
        let spin = if entry { t.lock_spin(app_core, now, sock) } else { 0 };
        if spin > 0 {
            // `lock_sock` spins while the softirq holds the socket's
            // spinlock; the call goes on once it has the socket, with what
            // is queued by then, and segments from then on wait in the
            // backlog.
            pieces.push((Layer::Lock, spin));
            t.owned = sock;
            t.lock_stats.spins += 1;
            t.lock_stats.spin_cycles += spin;
            let job = Job::new(Class::Task, pieces, Next::LockTaken(op)).for_msg(msg).on(path);
            self.submit(env, app_core, now, job);
            return;
        }
        let reads = matches!(op, Op::Read { .. } | Op::RecvFrom { .. });
        let xfer = t.timing.line_transfer();
        if op.bytes() > 0 {
            // `lock_sock`/`release_sock`; the softirq held the lock last.
            let lock = t.timing.cycles(c.sock_lock);
            push_nonzero(&mut pieces, Layer::Lock, lock + if lock > 0 { xfer } else { 0 });
        }
        let mut call_copy = 0;
        if reads {
            // The read frees the sk_buffs it emptied and their buffers,
            // which the receive stack's core touched last. Dropping a
            // page's reference (`put_page`, inline in `skb_release_data`)
            // moves the line of its `struct page`, whose count the driver
            // raised; only the page's free itself is the allocator's.
            let (skbs, pages) = std::mem::take(&mut t.unread);
            if let Some(k) = sock {
                t.rcvq_tail.remove(&k);
            }
            let (skb, page) = (t.timing.cycles(c.skb_free), t.timing.cycles(c.page_free));
            let page_line = if page > 0 { xfer } else { 0 };
            push_nonzero(&mut pieces, Layer::Skb, skbs * (skb + if skb > 0 { xfer } else { 0 }) + pages * page_line);
            let slab = t.timing.cycles(c.skb_slab);
            push_nonzero(&mut pieces, Layer::Mm, pages * page + skbs * slab);
            // Its walk of the receive queue reads lines the stack's core wrote.
            push_nonzero(&mut pieces, Layer::Tcp, skbs * READ_WALK_LINES * xfer);
            // Its copy calls the copy routine once per piece of each sk_buff,
            // through a retpoline: the part a profile samples on the thunk,
            // and the rest (`call_copy`, below) on the routine's first
            // instructions, which are the copy's.
            let calls = std::mem::take(&mut t.unread_pieces);
            let (call, thunk) = (t.timing.cycles(c.copy_call), t.timing.cycles(c.copy_call_thunk));
            push_nonzero(&mut pieces, Layer::Indirect, calls * thunk.min(call));
            call_copy = calls * call.saturating_sub(thunk);
        } else if let Op::Write { sock, bytes } = op {
            // `sk_page_frag_refill`: the data goes into 32 KiB page fragments.
            let frags = bytes.div_ceil(32 * 1024);
            push_nonzero(&mut pieces, Layer::Mm, frags * t.timing.cycles(c.page_frag));
            let zone = zone_lock(&mut t.zone_core, &t.timing, app_core, frags);
            push_nonzero(&mut pieces, Layer::Lock, zone);
            // `tcp_sendmsg_locked` tops up the unsent tail sk_buff, then
            // allocates one for each further size goal of data.
            let goal = send_size_goal(env.host.tcp_mss(), env.host.segmentation());
            let tail = t.send_tails.entry(sock).or_insert(0);
            let (skbs, fill) = send_skbs(*tail, bytes, goal);
            *tail = fill;
            t.rtx.stats.written += skbs;
            push_nonzero(&mut pieces, Layer::Skb, skbs * t.timing.cycles(c.skb_alloc));
            push_nonzero(&mut pieces, Layer::Mm, skbs * t.timing.cycles(c.skb_slab));
        }
        let comm_copy = t.call.engine_ref().copy_elsewhere();
        let zc_move =
            t.rx.engine().tx().and_then(|x| x.socket_move(&t.timing, socket_call(op), op.bytes(), hot, app_core));
        // The lines of this read's payload the receive stack's core touched
        // are still in its cache if the read is within the cache's reach.
        let lines = if reads { std::mem::take(&mut t.unread_lines) } else { 0 };
        let head = if lines == 0 {
            0
        } else {
            let n = op.bytes().max(1);
            let near = within_reach(t.stack_reach, t.rx_data.0.saturating_sub(t.rx_data.1), n);
            lines * xfer * near / n
        };
        let (copy, moved) = match zc_move {
            Some(m) => {
                pieces.extend(m.pieces);
                (m.copy, m.copied)
            }
            None if comm_copy => (0, 0),
            None if reads && !hot && t.timing.memory.ddio.0 > 0 => {
                let (dma, read) = t.rx_data;
                let n = op.bytes();
                let distance = match t.marks.as_mut() {
                    Some(m) => m.machine_offset(read).map_or(0, |at| t.llc_in.saturating_sub(at)),
                    None => dma.saturating_sub(read),
                };
                let llc = t.timing.rx_copy_in_llc(n, distance);
                t.rx_copy.copied(llc, n - llc);
                (t.timing.rx_copy_cycles(n, llc), n)
            }
            None => (t.timing.copy_cycles(op.bytes(), hot), op.bytes()),
        };
        if reads {
            t.rx_copy.read(now, op.bytes());
            t.rx_data.1 += op.bytes();
        }
        let copy = copy + head + call_copy;
        if copy > 0 || !comm_copy {
            pieces.push((Layer::Copy, copy));
        }
        if let Some(command) = t.call.engine_ref().call_pieces(&t.timing) {
            pieces.push(command);
        }
        if moved > 0 && t.timing.memory.lines.is_none() {
            // Read and write of every byte go through the memory system
            // (a per-line cache model has the memory's time in its cycles).
            let cpu_end = now + t.cores[app_core].time_for(copy);
            let mem_end = t.memory(now, 2 * moved);
            if mem_end > cpu_end {
                let stall = t.cores[app_core].cycles_in(mem_end.since(cpu_end));
                pieces.push((Layer::MemoryStall, stall));
            }
        }
        let then = if comm_copy && moved == 0 && copy == 0 && op.bytes() > 0 {
            // CPU1's own memory space: its copy does not reserve the shared memory system.
            let comm = t.timing.stack_core();
            Next::CommCopy(op, t.timing.copy_cycles_on(comm, op.bytes(), hot))
        } else {
            Next::AppOp(op)
        };
        // A read or write holds the socket lock until it ends (socket backlog).
        t.owned = if t.timing.cpu.socket_backlog { sock } else { None };
        let job = Job::new(Class::Task, pieces, then).for_msg(msg).on(path);
        self.submit(env, app_core, now, job);
    }
}

/// The socket whose lock call `op` takes: a read's or a write's.
fn call_socket(env: &Env, op: Op) -> Option<SocketKey> {
    match op {
        Op::Read { sock, .. } | Op::Write { sock, .. } => env.host.socket_key(sock),
        _ => None,
    }
}

/// The kind of call `op` is, as the engines see it.
fn socket_call(op: Op) -> SocketCall {
    match op {
        Op::Read { .. } => SocketCall::Read,
        Op::Write { .. } => SocketCall::Write,
        Op::ViaSend { .. } => SocketCall::ViaSend,
        Op::ViaRecv { .. } => SocketCall::ViaRecv,
        _ => SocketCall::Other,
    }
}

impl Timed {
    /// Run a hook `f` of the call-path engine, then carry out what it asked
    /// for, in order. `f` also gets whether the application has a call to
    /// make (asked of the application only if `f` asks).
    fn with_call<R>(
        &mut self,
        env: &mut Env,
        now: Time,
        f: impl FnOnce(&mut dyn CallOffload, &mut CallCx, &mut dyn FnMut() -> bool) -> R,
    ) -> R {
        let mut actions = Vec::new();
        let t = &mut *self;
        let mut cx = CallCx {
            now,
            timing: &t.timing,
            bus: &mut t.bus,
            memory_free_at: &mut t.memory_free_at,
            app_busy: t.app_busy,
            actions: &mut actions,
        };
        let (app, host) = (&mut *env.app, &mut *env.host);
        let r = f(t.call.engine(), &mut cx, &mut || app.next_op(now, host).is_some());
        for action in actions {
            match action {
                CallAction::At(at, ev) => {
                    env.out.at(at, Priority::DEVICE, HostEvent::Call(ev));
                }
                CallAction::Job { core, class, pieces, path, then } => {
                    let msg = env.app.current_msg();
                    let job = Job::new(class, pieces, Next::Call(then)).for_msg(msg).on(path);
                    self.submit(env, core, now, job);
                }
                CallAction::Interrupt(core) => self.cores[core].note_interrupt(),
                CallAction::PollStack => {
                    let ctx = self.irq_ctx();
                    self.timed_poll(env, now, ctx, false);
                }
                CallAction::KickApp(woken) => self.app_kick(env, now, woken),
            }
        }
        r
    }

    /// The call-path engine's event `ev` is due.
    pub(crate) fn on_call_event(&mut self, env: &mut Env, ev: CallEvent, now: Time) {
        self.with_call(env, now, |e, cx, _| e.on_event(cx, ev));
    }
}

impl Timed {
    /// Check the NIC's rings and FIFO and the order of posted frames. A
    /// failure is a simulator bug.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        self.nic.check_invariants(&self.timing.nic, self.rx.engine_ref().owns_rx_queue())?;
        self.driver.check_invariants()
    }
}

/// The zone lock's cycles on `core` for `frags` send fragments allocated or
/// freed there (`costs.zone_lock`, one lock each), with the lock's line if
/// another core took it last (`zone_core`, which becomes `core`).
pub(super) fn zone_lock(zone_core: &mut Option<usize>, timing: &Timing, core: usize, frags: u64) -> u64 {
    let lock = timing.cycles_on(core, timing.costs.zone_lock);
    if frags == 0 || lock == 0 {
        return 0;
    }
    let moved = zone_core.is_some_and(|c| c != core);
    *zone_core = Some(core);
    frags * lock + if moved { timing.line_transfer() } else { 0 }
}
