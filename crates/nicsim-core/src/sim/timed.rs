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
//! (charged as `memory_stall`). Not modelled yet: TSO/LRO, cache pollution
//! by the stack, the scheduler's run queue beyond one application.

use std::collections::BTreeMap;

use serde::Serialize;
use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet};

use super::{Event, Port, Sim};
use crate::bus::{Bus, BusOp};
use crate::engine::{Dur, Priority, Time};
use crate::host::cpu::{Breakdown, Class, Core, Job, Layer, Path, LAYERS};
use crate::host::driver::TxDriver;
use crate::host::timing::{OffloadLocation, OffloadNotify, Overflow, SocketCopy, Timing};
use crate::host::TxFrame;
use crate::nic::device::{Nic, NicEvent, NicStats};
use crate::nic::offload::nic_lro::NicLroReport;
use crate::nic::offload::{
    Action, AnyRxOffload, DriverBatch, OffloadEvent, OffloadReport, RxCost, RxCx, RxDone, RxOffload, SocketCall,
};
use crate::nic::tso;
use crate::probe::observer;
use crate::workload::Op;

/// What happens when a CPU job completes.
#[derive(Debug)]
pub(super) enum Next {
    /// The application's socket call is done: carry it out.
    AppOp(Op),
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
    /// A driver batch is done: post that many fresh receive buffers.
    BatchDone(u32),
    /// Offload: the communication processor decoded the application's command.
    CommandDone,
    /// Offload: the communication processor posted a completion; interrupt
    /// the application core (`0`: the application waits for data).
    CompletionPosted(bool),
    /// Offload: the application core took the completion interrupt.
    CompletionTaken(bool),
    /// The application finished computing on data it read.
    AppComputed,
    /// Zero-copy: a failed speculation's cleanup is done; RX DMA may resume.
    SpecResume,
}

/// What the communication processor notices on a turn of its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Notice {
    /// The application rang the doorbell: a command waits.
    Command,
}

/// A host's timing state.
pub(super) struct Timed {
    pub(super) timing: Timing,
    pub(super) cores: Vec<Core<Next>>,
    pub(super) bus: Bus,
    pub(super) nic: Nic,
    memory_free_at: Time,
    pub(super) app_busy: bool,
    /// The driver's transmit side (send order, qdisc).
    driver: TxDriver,
    /// Cycles per layer for each message (request/response transaction) and path.
    pub(super) per_msg: BTreeMap<(u64, Path), Breakdown>,
    /// Cycles per layer of completed jobs, per path (send, receive, other).
    pub(super) per_path: [Breakdown; 3],
    /// Offload: commands rung and not yet decoded by the communication processor.
    commands: u32,
    /// Offload: a completion is on its way to the application core.
    completion_pending: bool,
    /// Offload counters.
    pub(super) offload: OffloadStats,
    /// Per-message DMA, spans and frames (the echo workload's measurement).
    pub(super) measure: super::echo::Measure,
    /// The receive offload engine (NIC LRO, GRO, software LRO, or none).
    pub(super) rx: AnyRxOffload,
    /// The datagram the application reads next was rebuilt by a copy
    /// (`costs.ip_defrag_copy`), so its data is in the cache.
    glued: bool,
}

/// Counters of the offload interface.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OffloadStats {
    /// Commands the application core posted (one per socket call).
    pub commands: u64,
    /// Completions the communication processor posted.
    pub completions: u64,
    /// Completion interrupts the application core took.
    pub completion_interrupts: u64,
}

impl Timed {
    /// Timing state for a host with `timing` and receive offload `rx`,
    /// sampling utilisation every `bin`.
    pub(super) fn new(timing: Timing, rx: AnyRxOffload, bin: Dur) -> Timed {
        let cores = (0..timing.cpu.cores as usize).map(|i| Core::new(timing.core_hz(i), bin)).collect();
        let nic = Nic::new(timing.nic.rx_ring);
        Timed {
            bus: Bus::new(&timing.bus),
            cores,
            nic,
            timing,
            memory_free_at: Time::ZERO,
            app_busy: false,
            driver: TxDriver::default(),
            per_msg: BTreeMap::new(),
            per_path: [[0; LAYERS]; 3],
            commands: 0,
            completion_pending: false,
            offload: OffloadStats::default(),
            measure: Default::default(),
            rx,
            glued: false,
        }
    }

    /// The communication processor polls (offload in poll mode).
    fn polled(&self) -> bool {
        self.timing.offload.enabled && self.timing.offload.notify == OffloadNotify::Poll
    }

    /// When a polling communication processor notices work that appeared at `now`:
    /// at the end of the current turn of its loop.
    fn poll_at(&self, now: Time) -> Time {
        let turn = self.timing.poll_turn().0;
        if turn == 0 {
            now
        } else {
            Time(now.0.div_ceil(turn) * turn)
        }
    }

    /// Reserve the memory system for `bytes` starting at `now`; returns when done.
    pub(super) fn memory(&mut self, now: Time, bytes: u64) -> Time {
        let bw = self.timing.memory.bandwidth.0;
        let ps = match bytes.checked_mul(8) {
            Some(bits) => crate::engine::time::mul_div_ceil(bits, crate::engine::time::PS_PER_S, bw),
            None => (u128::from(bytes) * 8 * u128::from(crate::engine::time::PS_PER_S)).div_ceil(u128::from(bw)) as u64,
        };
        let start = self.memory_free_at.max(now);
        self.memory_free_at = start + Dur(ps);
        self.memory_free_at
    }

    /// When a DMA of a `len`-byte frame and its descriptor, started at `now`,
    /// finishes: transmit fetches the descriptor and then the frame, receive
    /// writes the frame and then the descriptor; the memory system and the
    /// DMA engine's own rate bound it too.
    fn dma(&mut self, now: Time, op: BusOp, len: u64) -> Time {
        let desc = self.timing.nic.descriptor.0;
        let (start, bus_done) = if op == BusOp::DeviceRead {
            let fetched = self.bus.transfer(now, op, desc);
            (fetched, self.bus.transfer(fetched, op, len))
        } else {
            let data = self.bus.transfer(now, op, len);
            (now, self.bus.transfer(data, op, desc))
        };
        let mut done = bus_done.max(self.memory(start, len));
        if let Some(rate) = self.timing.nic.dma_rate {
            done = done.max(start + Dur(rate.ps_for_bits(len * 8).0));
        }
        done
    }

    /// A frame's DMA from `from` to `to`, for message `msg` (if any) on `path`.
    fn note_dma(&mut self, msg: Option<u64>, path: Path, from: Time, to: Time) {
        if let Some(m) = msg {
            let cycles = super::echo::dma_cycles(self.timing.cpu.clock.0, to.since(from));
            self.measure.dma(m, path, from, to, cycles);
        }
    }
}

/// Where a CPU job runs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ctx {
    core: usize,
    class: Class,
}

/// Where a frame sits in an IP datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frag {
    /// Not fragmented.
    Whole,
    /// First fragment (carries the transport header).
    First,
    /// A later fragment; `last` when it completes the datagram.
    Later { last: bool },
}

/// What the cost model needs to know about a frame.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    /// Transport protocol (None: not IPv4, e.g. ARP).
    proto: Option<IpProtocol>,
    /// IP payload bytes in this frame.
    pub(super) payload: u64,
    /// Application bytes (TCP/UDP payload) in this frame.
    data: u64,
    frag: Frag,
    /// Offset of this fragment's data in its datagram, bytes.
    offset: u64,
    /// A VIA frame (not IP).
    via: Option<crate::workload::via::FrameInfo>,
}

pub(super) fn shape(frame: &[u8]) -> Shape {
    use smoltcp::wire::TcpPacket;
    let none = Shape { proto: None, payload: 0, data: 0, frag: Frag::Whole, offset: 0, via: None };
    if let Some(v) = crate::workload::via::frame_info(frame) {
        return Shape { payload: v.payload, data: v.payload, via: Some(v), ..none };
    }
    let Ok(eth) = EthernetFrame::new_checked(frame) else { return none };
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return none;
    }
    let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else { return none };
    let payload = ip.payload().len() as u64;
    let frag = match (ip.frag_offset(), ip.more_frags()) {
        (0, false) => Frag::Whole,
        (0, true) => Frag::First,
        (_, more) => Frag::Later { last: !more },
    };
    let data = match (ip.next_header(), frag) {
        (IpProtocol::Tcp, Frag::Whole) => TcpPacket::new_checked(ip.payload()).map_or(0, |t| t.payload().len() as u64),
        (IpProtocol::Udp, Frag::Whole | Frag::First) => payload.saturating_sub(8),
        _ => payload,
    };
    Shape { proto: Some(ip.next_header()), payload, data, frag, offset: u64::from(ip.frag_offset()), via: None }
}

/// Send-path pieces of a frame: transport (once per datagram), software
/// checksum, IP (and fragmentation per fragment), device, driver.
fn tx_pieces(timing: &Timing, s: Shape, core: usize) -> Vec<(Layer, u64)> {
    if let Some(v) = s.via {
        return super::echo::via_tx_pieces(timing, v, core);
    }
    let c = &timing.costs;
    let cy = |cost| timing.cycles_on(core, cost);
    let mut pieces = Vec::with_capacity(6);
    if s.proto.is_some() {
        if matches!(s.frag, Frag::Whole | Frag::First) {
            match s.proto {
                Some(IpProtocol::Tcp) => pieces.push((Layer::Tcp, cy(c.tcp_tx))),
                Some(IpProtocol::Udp) => pieces.push((Layer::Udp, cy(c.udp_tx))),
                _ => {}
            }
            pieces.push((Layer::Ip, cy(c.ip_tx)));
        }
        if !timing.nic.checksum_offload {
            pieces.push((Layer::Checksum, timing.checksum_cycles_on(core, s.payload)));
        }
        if s.frag != Frag::Whole {
            pieces.push((Layer::IpFrag, cy(c.ip_frag)));
        }
    }
    pieces.push((Layer::Device, cy(c.device_tx)));
    pieces.push((Layer::Driver, cy(c.driver_tx)));
    pieces
}

/// Receive-path pieces of a frame: driver, device, IP (and
/// defragmentation per fragment), checksum, transport (once per datagram,
/// when its last fragment completes it).
pub(super) fn rx_pieces(timing: &Timing, s: Shape, core: usize) -> Vec<(Layer, u64)> {
    if let Some(v) = s.via {
        return super::echo::via_rx_pieces(timing, v, core);
    }
    let c = &timing.costs;
    let cy = |cost| timing.cycles_on(core, cost);
    let mut pieces = vec![(Layer::Driver, cy(c.driver_rx)), (Layer::Device, cy(c.device_rx))];
    if s.proto.is_none() {
        return pieces;
    }
    pieces.push((Layer::Ip, cy(c.ip_rx)));
    if s.frag != Frag::Whole {
        pieces.push((Layer::IpFrag, cy(c.ip_defrag)));
        if c.ip_defrag_copy && s.frag == (Frag::Later { last: true }) {
            // Linux 2.2 `ip_glue`: a new buffer for the whole datagram,
            // every fragment's data copied in from where DMA left it.
            pieces.push((Layer::IpFrag, timing.copy_cycles(s.offset + s.payload, false)));
        }
    }
    if !timing.nic.checksum_offload {
        pieces.push((Layer::Checksum, timing.checksum_cycles_on(core, s.payload)));
    }
    if matches!(s.frag, Frag::Whole | Frag::Later { last: true }) {
        match s.proto {
            Some(IpProtocol::Tcp) => pieces.push((Layer::Tcp, cy(c.tcp_rx))),
            Some(IpProtocol::Udp) => pieces.push((Layer::Udp, cy(c.udp_rx))),
            _ => {}
        }
    }
    pieces
}

/// The receive cost model of a host with `timing`: a frame's pieces on a
/// core, and whether IP reassembly rebuilt its datagram by copying.
pub(super) fn rx_cost(timing: &Timing, frame: &[u8], core: usize) -> RxCost {
    let sh = shape(frame);
    RxCost {
        pieces: rx_pieces(timing, sh, core),
        glued: timing.costs.ip_defrag_copy && sh.frag == (Frag::Later { last: true }),
        ip_payload: sh.payload,
    }
}

impl Sim {
    pub(super) fn timed(&mut self, h: usize) -> &mut Timed {
        self.timed[h].as_mut().expect("a timed host")
    }

    pub(super) fn irq_ctx(&self, h: usize) -> Ctx {
        let t = self.timed[h].as_ref().expect("timed");
        Ctx { core: t.timing.stack_core(), class: Class::Softirq }
    }

    /// Submit `job` to core `core` of host `h`.
    pub(super) fn submit(&mut self, h: usize, core: usize, now: Time, job: Job<Next>) {
        if let (Some(m), true) = (job.msg, job.total() > 0) {
            self.timed(h).measure.touch(m, job.path, now, now);
        }
        if let Some(w) = self.timed(h).cores[core].submit(now, job) {
            self.sched.at(w.at, Priority::DEVICE, Event::CpuDone(h, core, w.generation));
        }
    }

    /// A CPU job finished.
    pub(super) fn on_cpu_done(
        &mut self,
        h: usize,
        core: usize,
        generation: u64,
        now: Time,
    ) -> Result<(), crate::Error> {
        let Some((job, next)) = self.timed(h).cores[core].complete(now, generation) else { return Ok(()) };
        if let Some(w) = next {
            self.sched.at(w.at, Priority::DEVICE, Event::CpuDone(h, core, w.generation));
        }
        if self.probes.wants(observer::JOB) {
            let fields = [("core", core as f64), ("cycles", job.total() as f64), ("class", job.class() as u8 as f64)];
            self.probes.emit(observer::JOB, now, h, &self.hosts[h].name, &fields);
        }
        let t = self.timed(h);
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
                self.perform(h, op, now)?;
                // A reader works on what it read before its next call; the
                // stack's reaction to the read (a window update) comes first.
                let t = self.timed(h);
                let compute = t.timing.app.cycles(op.bytes());
                let computing = compute > 0 && matches!(op, Op::Read { .. } | Op::RecvFrom { .. });
                t.app_busy = computing;
                let app_core = t.timing.cpu.app_core as usize;
                if t.timing.offload.enabled {
                    self.ring_doorbell(h, now);
                    self.app_kick(h, now, false);
                } else {
                    self.timed_poll(h, now, Ctx { core: app_core, class: Class::Task }, false);
                }
                if computing {
                    let msg = self.apps[h].current_msg();
                    let job = Job::new(Class::Task, vec![(Layer::App, compute)], Next::AppComputed)
                        .for_msg(msg)
                        .on(Path::Receive);
                    self.submit(h, app_core, now, job);
                }
            }
            Next::CommCopy(op, cycles) => {
                let t = self.timed(h);
                let core = t.timing.stack_core();
                let path = match op {
                    Op::Read { .. } | Op::RecvFrom { .. } => Path::Receive,
                    _ => Path::Send,
                };
                let msg = self.apps[h].current_msg();
                let job = Job::new(Class::Softirq, vec![(Layer::Copy, cycles)], Next::AppOp(op)).for_msg(msg).on(path);
                self.submit(h, core, now, job);
            }
            Next::AppComputed => {
                self.timed(h).app_busy = false;
                self.app_kick(h, now, false);
            }
            Next::CommandDone => {
                let ctx = self.irq_ctx(h);
                self.timed_poll(h, now, ctx, false);
            }
            Next::CompletionPosted(woken) => {
                let t = self.timed(h);
                t.offload.completions += 1;
                if t.timing.offload.location == OffloadLocation::Nic {
                    t.bus.transfer(now, BusOp::DeviceWrite, t.timing.offload.descriptor.0);
                }
                let core = t.timing.cpu.app_core as usize;
                t.cores[core].note_interrupt();
                t.offload.completion_interrupts += 1;
                let cpu = &t.timing.cpu;
                let pieces = vec![
                    (Layer::Interrupt, cpu.interrupt_entry),
                    (Layer::Command, t.timing.cycles_on(core, t.timing.offload.completion_rx)),
                    (Layer::Interrupt, cpu.interrupt_exit),
                ];
                let msg = self.apps[h].current_msg();
                let job = Job::new(Class::Irq, pieces, Next::CompletionTaken(woken)).for_msg(msg).on(Path::Receive);
                self.submit(h, core, now, job);
            }
            Next::CompletionTaken(woken) => {
                self.timed(h).completion_pending = false;
                self.app_kick(h, now, woken);
            }
            Next::RxDeliver(frame, segments) => {
                self.note_deliver(h, frame.len(), now);
                if crate::workload::via::is_via(&frame) {
                    self.via_deliver(h, &frame, now)?;
                } else {
                    self.hosts[h].receive(frame, segments);
                }
                let ctx = self.irq_ctx(h);
                self.timed_poll(h, now, ctx, true);
            }
            Next::TxToRing(seq, frame) => {
                let t = self.timed(h);
                let (nic, ring) = (&mut t.nic, t.timing.nic.tx_ring);
                t.driver.done(seq, frame, |frame| {
                    if nic.tx_used >= ring {
                        return Some(frame);
                    }
                    nic.tx_used += 1;
                    nic.stats.max_tx_ring_used = nic.stats.max_tx_ring_used.max(nic.tx_used);
                    nic.tx_ring.push_back(frame);
                    None
                });
                self.nic_tx_kick(h, now);
            }
            Next::AppWake => {
                self.timed(h).app_busy = false;
                self.app_kick(h, now, false);
            }
            Next::IrqDone => self.driver_batch(h, now),
            Next::SpecResume => self.on_offload_event(h, OffloadEvent::Resume, now)?,
            Next::TxCleaned(n) => {
                let t = self.timed(h);
                t.nic.tx_used -= n;
                let (nic, ring) = (&mut t.nic, t.timing.nic.tx_ring);
                t.driver.refill(|frame| {
                    if nic.tx_used >= ring {
                        return Some(frame);
                    }
                    nic.tx_used += 1;
                    nic.tx_ring.push_back(frame);
                    None
                });
                self.nic_tx_kick(h, now);
                if self.timed(h).driver.stack_blocked {
                    let ctx = self.irq_ctx(h);
                    self.timed_poll(h, now, ctx, false);
                }
            }
            Next::BatchDone(refill) => {
                let t = self.timed(h);
                t.nic.rx_posted += refill;
                if refill > 0 {
                    t.bus.transfer(now, BusOp::MmioWrite, 4);
                }
                self.nic_rx_kick(h, now);
                let t = self.timed(h);
                if (t.timing.nic.napi || t.polled()) && t.nic.work_pending() {
                    self.driver_batch(h, now);
                } else {
                    t.nic.masked = false;
                    self.irq_check(h, now);
                }
            }
        }
        Ok(())
    }

    /// Poll the stack of timed host `h` at `now` in context `ctx`; every
    /// frame it emits gets its send-path job there. Then let the
    /// application make its next call (`woken`: it was waiting for data).
    pub(super) fn timed_poll(&mut self, h: usize, now: Time, ctx: Ctx, woken: bool) {
        let credit = self.timed(h).driver.credit();
        self.hosts[h].poll(now, credit);
        let blocked = self.hosts[h].dev.tx_blocked;
        self.timed(h).driver.stack_blocked = blocked;
        let frames = std::mem::take(&mut self.hosts[h].dev.tx);
        let msg = self.apps[h].current_msg();
        for frame in frames {
            let t = self.timed(h);
            let sh = shape(&frame.bytes);
            let path = if sh.data > 0 { Path::Send } else { Path::Receive };
            let mut pieces = tx_pieces(&t.timing, sh, ctx.core);
            if let Some(x) = t.rx.engine().tx() {
                pieces.extend(x.tx_pieces(&t.timing, &frame.bytes, ctx.core));
            }
            let seq = t.driver.emit();
            let job = Job::new(ctx.class, pieces, Next::TxToRing(seq, frame)).for_msg(msg).on(path);
            self.submit(h, ctx.core, now, job);
        }
        if self.timed(h).timing.comm_core() == Some(ctx.core) {
            self.post_completion(h, now, woken);
        } else {
            self.app_kick(h, now, woken);
        }
        self.schedule_stack_timer(h, now);
    }

    /// Offload: the application finished a socket call; its command goes to
    /// the communication processor (descriptor written, doorbell rung), which
    /// decodes it and runs the stack for it.
    fn ring_doorbell(&mut self, h: usize, now: Time) {
        let t = self.timed(h);
        t.offload.commands += 1;
        let desc = t.timing.offload.descriptor.0;
        let seen = match t.timing.offload.location {
            // Descriptor and doorbell are stores through the north bridge.
            OffloadLocation::Core => t.memory(now, desc),
            // Doorbell is an MMIO write; the NIC processor then fetches the descriptor.
            OffloadLocation::Nic => {
                let rung = t.bus.transfer(now, BusOp::MmioWrite, 4);
                t.bus.transfer(rung, BusOp::DeviceRead, desc)
            }
        };
        t.commands += 1;
        let at = if t.polled() { t.poll_at(seen) } else { seen };
        self.sched.at(at, Priority::DEVICE, Event::CommNotice(h, Notice::Command));
    }

    /// Offload: the communication processor turns to the work it noticed.
    pub(super) fn on_comm_notice(&mut self, h: usize, notice: Notice, now: Time) {
        match notice {
            Notice::Command => {
                let t = self.timed(h);
                t.commands -= 1;
                let core = t.timing.stack_core();
                let mut pieces = Vec::with_capacity(3);
                if !t.polled() {
                    t.cores[core].note_interrupt();
                    pieces.push((Layer::Interrupt, t.timing.cpu.interrupt_entry));
                    pieces.push((Layer::Interrupt, t.timing.cpu.interrupt_exit));
                }
                pieces.push((Layer::Command, t.timing.cycles_on(core, t.timing.offload.command_rx)));
                let msg = self.apps[h].current_msg();
                let job = Job::new(Class::Softirq, pieces, Next::CommandDone).for_msg(msg).on(Path::Send);
                self.submit(h, core, now, job);
            }
        }
    }

    /// Offload: the stack on the communication processor changed what the
    /// application can do (data arrived, room freed). If the application
    /// waits, post a completion, which interrupts the application core.
    fn post_completion(&mut self, h: usize, now: Time, woken: bool) {
        let t = self.timed(h);
        if t.app_busy || t.completion_pending {
            return;
        }
        if self.apps[h].next_op(now, &mut self.hosts[h]).is_none() {
            return;
        }
        let msg = self.apps[h].current_msg();
        let t = self.timed(h);
        t.completion_pending = true;
        let core = t.timing.stack_core();
        let pieces = vec![(Layer::Command, t.timing.cycles_on(core, t.timing.offload.completion))];
        let job = Job::new(Class::Softirq, pieces, Next::CompletionPosted(woken)).for_msg(msg).on(Path::Receive);
        self.submit(h, core, now, job);
    }

    /// Start the application's next socket call if it is not in one. An
    /// application `woken` by arriving data first pays its wake-up and only
    /// then looks how much there is to read (more may have come meanwhile).
    fn app_kick(&mut self, h: usize, now: Time, woken: bool) {
        if self.timed(h).app_busy {
            return;
        }
        let Some(op) = self.apps[h].next_op(now, &mut self.hosts[h]) else { return };
        if matches!(op, Op::ViaSend { .. } | Op::ViaRecv { .. }) {
            self.via_call(h, op, now);
            return;
        }
        let msg = self.apps[h].current_msg();
        let t = self.timed(h);
        t.app_busy = true;
        let c = &t.timing.costs;
        if woken && matches!(op, Op::Read { .. } | Op::RecvFrom { .. }) {
            let wake = vec![(Layer::Socket, t.timing.cycles(c.wakeup))];
            let core = t.timing.cpu.app_core as usize;
            let job = Job::new(Class::Task, wake, Next::AppWake).for_msg(msg).on(Path::Receive);
            self.submit(h, core, now, job);
            return;
        }
        let mut pieces = Vec::with_capacity(6);
        // A sender computes a block before writing it (a reader computes
        // after its read: see `Next::AppOp`).
        let compute = t.timing.app.cycles(op.bytes());
        if compute > 0 && matches!(op, Op::Write { .. } | Op::SendTo { .. }) {
            pieces.push((Layer::App, compute));
        }
        let (socket, hot) = match op {
            Op::Write { .. } | Op::SendTo { .. } => (c.socket_send, op.bytes() <= t.timing.memory.cache_size.0 / 2),
            // Received data arrived by DMA: it is never in the cache.
            // (A datagram `ip_glue` rebuilt was just written by the CPU.)
            Op::Read { .. } | Op::RecvFrom { .. } => (c.socket_recv, std::mem::take(&mut t.glued)),
            Op::Close { .. } | Op::Connect { .. } | Op::ViaSend { .. } | Op::ViaRecv { .. } => (c.socket_send, true),
        };
        pieces.push((Layer::Syscall, t.timing.cycles(c.syscall)));
        pieces.push((Layer::Socket, t.timing.cycles(socket)));
        let app_core = t.timing.cpu.app_core as usize;
        let comm_copy = t.timing.offload.enabled && t.timing.offload.socket_copy == SocketCopy::Comm;
        let call = match op {
            Op::Read { .. } => SocketCall::Read,
            Op::Write { .. } => SocketCall::Write,
            _ => SocketCall::Other,
        };
        let zc_move = t.rx.engine().tx().and_then(|x| x.socket_move(&t.timing, call, op.bytes(), hot, app_core));
        let (copy, moved) = match zc_move {
            Some(m) => {
                pieces.extend(m.pieces);
                (m.copy, m.copied)
            }
            None if comm_copy => (0, 0),
            None => (t.timing.copy_cycles(op.bytes(), hot), op.bytes()),
        };
        if copy > 0 || !comm_copy {
            pieces.push((Layer::Copy, copy));
        }
        if t.timing.offload.enabled {
            pieces.push((Layer::Command, t.timing.cycles(t.timing.offload.command)));
        }
        if moved > 0 && t.timing.memory.lines.is_none() {
            // Read and write of every byte go through the memory system
            // (a per-line cache model has the memory's time in its cycles).
            let core = &t.cores[t.timing.cpu.app_core as usize];
            let cpu_end = now + core.time_for(copy);
            let mem_end = t.memory(now, 2 * moved);
            if mem_end > cpu_end {
                let stall = t.cores[t.timing.cpu.app_core as usize].cycles_in(mem_end.since(cpu_end));
                pieces.push((Layer::MemoryStall, stall));
            }
        }
        let core = t.timing.cpu.app_core as usize;
        let path = match op {
            Op::Write { .. } | Op::SendTo { .. } => Path::Send,
            Op::Read { .. } | Op::RecvFrom { .. } => Path::Receive,
            Op::Close { .. } | Op::Connect { .. } | Op::ViaSend { .. } | Op::ViaRecv { .. } => Path::Other,
        };
        let then = if comm_copy && moved == 0 && copy == 0 && op.bytes() > 0 {
            // CPU1's own memory space: its copy does not reserve the shared memory system.
            let comm = t.timing.stack_core();
            Next::CommCopy(op, t.timing.copy_cycles_on(comm, op.bytes(), hot))
        } else {
            Next::AppOp(op)
        };
        let job = Job::new(Class::Task, pieces, then).for_msg(msg).on(path);
        self.submit(h, core, now, job);
    }

    /// Post sent-path frames to the NIC: fetch descriptor, DMA the frame.
    pub(super) fn nic_tx_kick(&mut self, h: usize, now: Time) {
        let msg = self.apps[h].current_msg();
        let Port { link: l, end: d } = self.ports[h];
        let room = self.links[l].chans[d].free_slots();
        let t = self.timed(h);
        if t.nic.tx_dma_busy {
            return;
        }
        let Some(frame) = t.nic.tx_ring.front() else { return };
        // The NIC starts a frame only when the link can take all its segments.
        let segments = match frame.tso_mss {
            Some(mss) => shape(&frame.bytes).data.div_ceil(u64::from(mss)).max(1) as usize,
            None => t.rx.engine().tx().map_or(1, |x| x.wire_frames(&frame.bytes)),
        };
        if room < segments {
            return;
        }
        if t.rx.engine().tx().is_some() {
            let head = std::mem::take(&mut t.nic.tx_ring.front_mut().expect("peeked").bytes);
            // A control frame cannot fail for lack of a trace here (as pause frames).
            let go = self.with_offload(h, now, |e, cx| e.tx().is_none_or(|x| x.gate(cx, &head))).unwrap_or(true);
            let t = self.timed(h);
            t.nic.tx_ring.front_mut().expect("peeked").bytes = head;
            if !go {
                return;
            }
        }
        let t = self.timed(h);
        let Some(frame) = t.nic.tx_ring.front() else { return };
        let len = frame.bytes.len() as u64;
        let path = if shape(&frame.bytes).data > 0 { Path::Send } else { Path::Receive };
        let done = t.dma(now, BusOp::DeviceRead, len);
        let bytes = std::mem::take(&mut t.nic.tx_ring.front_mut().expect("peeked").bytes);
        let desc = t.timing.nic.descriptor.0;
        let done = match t.rx.engine().tx() {
            Some(x) => x.tx_dma(&mut t.bus, desc, now, &bytes, done),
            None => done,
        };
        t.nic.tx_ring.front_mut().expect("peeked").bytes = bytes;
        t.note_dma(msg, path, now, done);
        t.nic.tx_dma_busy = true;
        self.sched.at(done, Priority::WIRE, Event::Nic(h, NicEvent::TxDma));
    }

    /// The head TX frame is in the NIC: segment it if asked (TSO), fill
    /// checksums the stack left to the NIC, put it on the link, report completion.
    pub(super) fn on_nic_tx_dma(&mut self, h: usize, now: Time) -> Result<(), crate::Error> {
        let tso_capable = self.timed(h).timing.nic.tso;
        let t = self.timed(h);
        t.nic.tx_dma_busy = false;
        let frame = t.nic.tx_ring.pop_front().expect("a frame was in DMA");
        let (frames, single) = match (frame.tso_mss, tso_capable) {
            (Some(mss), _) => (tso::segment(&frame.bytes, usize::from(mss)), None),
            // With TSO on, the stack leaves every TCP checksum to the NIC.
            (None, true) => (tso::segment(&frame.bytes, usize::MAX), None),
            // The common case: one frame as the stack made it (no Vec to allocate).
            (None, false) => match t.rx.engine().tx() {
                Some(x) => (x.segment(frame.bytes), None),
                None => (Vec::new(), Some(frame.bytes)),
            },
        };
        t.nic.stats.tx_frames += (frames.len() + usize::from(single.is_some())) as u64;
        let desc = t.timing.nic.descriptor.0;
        t.bus.transfer(now, BusOp::DeviceWrite, desc);
        t.nic.tx_done += 1;
        t.nic.tx_done_since.get_or_insert(now);
        let Port { link: l, end: d } = self.ports[h];
        for f in frames.into_iter().chain(single) {
            self.links[l].chans[d].enqueue(f);
        }
        self.start_wire(l, d, now)?;
        self.nic_tx_kick(h, now);
        self.irq_check(h, now);
        Ok(())
    }

    /// A frame reaches timed host `h`'s NIC from the wire.
    pub(super) fn nic_arrive(&mut self, h: usize, frame: Vec<u8>, now: Time) {
        // Frames the engine injects cannot fail for lack of a trace.
        let Ok(Some(frame)) = self.with_offload(h, now, |e, cx| e.arrive(cx, frame)) else { return };
        let t = self.timed(h);
        let len = frame.len() as u64;
        if !t.nic.rx_held.is_empty() || t.nic.rx_fifo_bytes + len > t.timing.nic.rx_fifo.0 {
            match t.timing.nic.overflow {
                Overflow::Drop => {
                    t.nic.stats.rx_fifo_drops += 1;
                    return;
                }
                Overflow::Backpressure => {
                    t.nic.rx_held.push_back(frame);
                    self.pause_peer(h, true, now);
                    return;
                }
            }
        }
        t.nic.rx_fifo_bytes += len;
        t.nic.stats.max_rx_fifo = t.nic.stats.max_rx_fifo.max(t.nic.rx_fifo_bytes);
        t.nic.rx_fifo.push_back((frame, 1));
        self.nic_rx_kick(h, now);
    }

    fn pause_peer(&mut self, h: usize, pause: bool, now: Time) {
        let Port { link: l, end: d } = self.ports[h];
        let chan = &mut self.links[l].chans[1 - d];
        if chan.paused == pause {
            return;
        }
        chan.paused = pause;
        if pause {
            self.timed(h).nic.stats.pauses += 1;
        } else {
            // Restarting the wire cannot fail for lack of a trace here.
            let _ = self.start_wire(l, 1 - d, now);
        }
    }

    /// Start the next receive DMA if a frame waits and a buffer is posted.
    pub(super) fn nic_rx_kick(&mut self, h: usize, now: Time) {
        let msg = self.apps[h].current_msg();
        let t = self.timed(h);
        let stopped = t.rx.engine_ref().rx_stopped();
        if t.nic.rx_dma_busy || t.nic.rx_posted == 0 || stopped {
            return;
        }
        let Some((frame, _)) = t.nic.rx_fifo.front() else { return };
        let len = frame.len() as u64;
        let done = t.dma(now, BusOp::DeviceWrite, len);
        t.note_dma(msg, Path::Receive, now, done);
        t.nic.rx_posted -= 1;
        t.nic.rx_dma_busy = true;
        self.sched.at(done, Priority::WIRE, Event::Nic(h, NicEvent::RxDma));
    }

    /// The head RX frame is in host memory.
    pub(super) fn on_nic_rx_dma(&mut self, h: usize, now: Time) {
        let t = self.timed(h);
        t.nic.rx_dma_busy = false;
        let (frame, segments) = t.nic.rx_fifo.pop_front().expect("a frame was in DMA");
        t.nic.rx_fifo_bytes -= frame.len() as u64;
        t.nic.stats.rx_frames += 1;
        t.nic.rx_done.push_back((now, frame, segments));
        let used = t.timing.nic.rx_ring - t.nic.rx_posted;
        t.nic.stats.max_rx_ring_used = t.nic.stats.max_rx_ring_used.max(used);
        // Frames held on the wire move into the freed FIFO space.
        while let Some(next) = t.nic.rx_held.front() {
            if t.nic.rx_fifo_bytes + next.len() as u64 > t.timing.nic.rx_fifo.0 {
                break;
            }
            let next = t.nic.rx_held.pop_front().expect("peeked");
            t.nic.rx_fifo_bytes += next.len() as u64;
            t.nic.rx_fifo.push_back((next, 1));
        }
        if self.timed(h).nic.rx_held.is_empty() {
            self.pause_peer(h, false, now);
        }
        self.nic_rx_kick(h, now);
        self.irq_check(h, now);
    }

    /// Raise an interrupt now, or arm the moderation timer, or do nothing.
    pub(super) fn irq_check(&mut self, h: usize, now: Time) {
        let t = self.timed(h);
        if t.nic.masked {
            return;
        }
        let at = if t.polled() {
            // A polling communication processor finds work at the end of its turn.
            if !t.nic.work_pending() {
                return;
            }
            t.poll_at(now)
        } else {
            // An engine may impose its own moderation (a speculating driver
            // wants one interrupt per fragment train).
            let Some(at) = t.nic.irq_due(&t.timing.nic.moderation, t.rx.engine_ref().moderation(), now) else {
                return;
            };
            at
        };
        if at == now {
            self.raise_irq(h, now);
        } else if t.nic.irq_armed.is_none_or(|armed| armed > at) {
            t.nic.irq_generation += 1;
            t.nic.irq_armed = Some(at);
            let g = t.nic.irq_generation;
            self.sched.at(at, Priority::DEVICE, Event::Nic(h, NicEvent::Irq(g)));
        }
    }

    /// The moderation timer fired.
    pub(super) fn on_nic_irq_timer(&mut self, h: usize, generation: u64, now: Time) {
        let t = self.timed(h);
        if generation != t.nic.irq_generation {
            return;
        }
        t.nic.irq_armed = None;
        self.irq_check(h, now);
    }

    fn raise_irq(&mut self, h: usize, now: Time) {
        let msg = self.apps[h].current_msg();
        let t = self.timed(h);
        t.nic.irq_armed = None;
        t.nic.irq_generation += 1;
        t.nic.last_irq = Some(now);
        t.nic.tx_done_since = None;
        if t.polled() {
            // The communication processor's loop found work: no interrupt,
            // it polls the rings until they are empty (as NAPI does).
            t.nic.stats.polls += 1;
            t.nic.masked = true;
            self.driver_batch(h, now);
            return;
        }
        t.nic.stats.interrupts += 1;
        if t.timing.nic.napi {
            t.nic.masked = true;
        }
        let core = t.timing.stack_core();
        t.cores[core].note_interrupt();
        if self.probes.wants(observer::INTERRUPT) {
            self.probes.emit(observer::INTERRUPT, now, h, &self.hosts[h].name, &[("core", core as f64)]);
        }
        let t = self.timed(h);
        let cpu = &t.timing.cpu;
        let pieces = vec![
            (Layer::Interrupt, cpu.interrupt_entry),
            (Layer::Interrupt, t.timing.cycles_on(core, t.timing.costs.interrupt)),
            (Layer::Interrupt, cpu.interrupt_exit),
        ];
        let t = self.timed(h);
        let path = if t.measure.tx_irq_on_send && t.nic.rx_done.is_empty() { Path::Send } else { Path::Receive };
        let job = Job::new(Class::Irq, pieces, Next::IrqDone).for_msg(msg).on(path);
        self.submit(h, core, now, job);
    }

    /// The driver's work after an interrupt (or another NAPI round): receive
    /// processing per frame, clean-up of sent descriptors, buffer refill.
    fn driver_batch(&mut self, h: usize, now: Time) {
        let msg = self.apps[h].current_msg();
        let t = self.timed(h);
        let budget = if t.timing.nic.napi || t.polled() { t.timing.nic.napi_budget as usize } else { usize::MAX };
        let mut take = t.nic.rx_done.len().min(budget);
        let frames: Vec<(Time, Vec<u8>, u32)> = t.nic.rx_done.drain(..take).collect();
        let cleaned = std::mem::take(&mut t.nic.tx_done);
        t.nic.tx_done_since = None;
        let core = t.timing.stack_core();
        let holding = t.nic.holding();
        let before = t.nic.rx_done.len();
        let mut batch = DriverBatch {
            core,
            msg,
            frames,
            ring: &mut t.nic.rx_done,
            jobs: Vec::new(),
            leftover: Vec::new(),
            glued: false,
        };
        let mut actions = Vec::new();
        let timing = &t.timing;
        let cost = |f: &[u8], c: usize| rx_cost(timing, f, c);
        let mut cx = RxCx { now, timing, rx_cost: &cost, nic_holding: holding, actions: &mut actions };
        t.rx.engine().driver_batch(&mut cx, &mut batch);
        debug_assert!(actions.is_empty(), "a driver batch asks for nothing but jobs");
        // Receive work the driver did on frames a host coalescer has merged
        // away is charged to the batch's last job.
        let (glued, mut leftover, batch_jobs) = (batch.glued, batch.leftover, batch.jobs);
        // Frames an engine put back on the ring keep their buffers.
        take -= t.nic.rx_done.len() - before;
        t.glued |= glued;
        let mut jobs: Vec<Job<Next>> = batch_jobs.into_iter().map(|j| j.map(Next::from)).collect();
        let t = self.timed(h);
        if cleaned > 0 {
            let cost = if t.measure.via { t.timing.costs.via_tx_done } else { t.timing.costs.driver_tx_clean };
            let c = t.timing.cycles_on(core, cost) * u64::from(cleaned);
            if let Some(m) = msg {
                t.measure.tx_clean(m, c);
            }
            let job = Job::new(Class::Softirq, vec![(Layer::Driver, c)], Next::TxCleaned(cleaned));
            jobs.push(job.for_msg(msg).on(Path::Send));
        }
        let refill = t.timing.cycles_on(core, t.timing.costs.driver_refill) * take as u64;
        leftover.push((Layer::Driver, refill));
        let job = Job::new(Class::Softirq, leftover, Next::BatchDone(take as u32));
        jobs.push(job.for_msg(msg).on(Path::Receive));
        for job in jobs {
            self.submit(h, core, now, job);
        }
    }
}

/// One core's share of a run.
#[derive(Debug, Clone, Serialize)]
pub struct CoreReport {
    /// Core index.
    pub core: usize,
    /// Busy fraction of the run (until its last event).
    pub utilization: f64,
    /// Seconds spent running jobs.
    pub busy_s: f64,
    /// Hard interrupts taken.
    pub interrupts: u64,
    /// Interrupts per simulated second.
    pub interrupts_per_s: f64,
    /// Cycles per layer (layers with none are left out).
    pub cycles: BTreeMap<&'static str, u64>,
    /// Busy fraction per `run.sample_interval` bin.
    pub utilization_series: Vec<f64>,
}

/// Per-layer cycles of the average message (request/response transaction).
#[derive(Debug, Clone, Serialize)]
pub struct MessageReport {
    /// Messages seen.
    pub count: u64,
    /// Mean cycles per layer per message, all paths.
    pub mean_cycles: BTreeMap<&'static str, f64>,
    /// Mean cycles per layer per message on the send path.
    pub mean_send: BTreeMap<&'static str, f64>,
    /// Mean cycles per layer per message on the receive path.
    pub mean_receive: BTreeMap<&'static str, f64>,
    /// Mean total cycles per message.
    pub mean_total: f64,
}

/// Everything the timing model measured on one host.
#[derive(Debug, Clone, Serialize)]
pub struct TimingReport {
    /// The profile's description.
    pub profile: String,
    /// Mean busy fraction over all cores.
    pub cpu_utilization: f64,
    /// Cycles per layer, all cores.
    pub cycles: BTreeMap<&'static str, u64>,
    /// Cycles per layer of completed send-path jobs.
    pub cycles_send: BTreeMap<&'static str, u64>,
    /// Cycles per layer of completed receive-path jobs.
    pub cycles_receive: BTreeMap<&'static str, u64>,
    /// Per core.
    pub cores: Vec<CoreReport>,
    /// NIC counters.
    pub nic: NicStats,
    /// Bus counters.
    pub bus: crate::bus::BusStats,
    /// Busy fraction of the bus (its busiest resource).
    pub bus_utilization: f64,
    /// Per-message breakdown (request/response only).
    pub messages: Option<MessageReport>,
    /// Offload interface counters (offload mode only).
    pub offload: Option<OffloadStats>,
    /// The NIC's LRO engine and its core (`nic.lro = "nic"` only).
    pub lro: Option<NicLroReport>,
    /// GRO or software LRO in the driver (`nic.lro = "gro" | "software"` only).
    pub gro: Option<crate::nic::gro::GroStats>,
    /// Zero-copy TCP/IP counters (hosts with a zero-copy switch on only).
    pub zero_copy: Option<crate::nic::offload::specdefrag::ZeroCopyStats>,
}

fn named(b: &Breakdown) -> BTreeMap<&'static str, u64> {
    Layer::ALL.iter().filter(|l| b[l.index()] > 0).map(|l| (l.name(), b[l.index()])).collect()
}

impl Sim {
    /// The timing report of host `h` over a run that lasted until `until`.
    pub fn timing_report(&self, h: usize, until: Time) -> Option<TimingReport> {
        let t = self.timed[h].as_ref()?;
        let secs = until.as_secs_f64().max(1e-18);
        let bin = t.cores.first().map_or(0, |c| c.bin_ps());
        let mut total: Breakdown = [0; LAYERS];
        let cores: Vec<CoreReport> = t
            .cores
            .iter()
            .enumerate()
            .map(|(i, c)| {
                for (sum, v) in total.iter_mut().zip(c.stats.cycles) {
                    *sum += v;
                }
                CoreReport {
                    core: i,
                    utilization: c.stats.busy_ps as f64 / until.ps().max(1) as f64,
                    busy_s: c.stats.busy_ps as f64 / 1e12,
                    interrupts: c.stats.interrupts,
                    interrupts_per_s: c.stats.interrupts as f64 / secs,
                    cycles: named(&c.stats.cycles),
                    utilization_series: c.series.iter().map(|&b| b as f64 / bin.max(1) as f64).collect(),
                }
            })
            .collect();
        let messages = (!t.per_msg.is_empty()).then(|| {
            let count = t.per_msg.keys().map(|(m, _)| m).collect::<std::collections::BTreeSet<_>>().len();
            let mean = |path: Option<Path>| -> BTreeMap<&'static str, f64> {
                let mut sum: Breakdown = [0; LAYERS];
                for (_, row) in t.per_msg.iter().filter(|((_, p), _)| path.is_none_or(|want| *p == want)) {
                    for (s, v) in sum.iter_mut().zip(row) {
                        *s += v;
                    }
                }
                Layer::ALL
                    .iter()
                    .filter(|l| sum[l.index()] > 0)
                    .map(|l| (l.name(), sum[l.index()] as f64 / count as f64))
                    .collect()
            };
            let all = mean(None);
            MessageReport {
                count: count as u64,
                mean_total: all.values().sum(),
                mean_cycles: all,
                mean_send: mean(Some(Path::Send)),
                mean_receive: mean(Some(Path::Receive)),
            }
        });
        let mut offload = OffloadReport::default();
        t.rx.engine_ref().report(&mut offload);
        Some(TimingReport {
            profile: t.timing.description.clone(),
            cpu_utilization: cores.iter().map(|c| c.utilization).sum::<f64>() / cores.len() as f64,
            cycles: named(&total),
            cycles_send: named(&t.per_path[Path::Send as usize]),
            cycles_receive: named(&t.per_path[Path::Receive as usize]),
            cores,
            nic: t.nic.stats.clone(),
            bus: t.bus.stats().clone(),
            bus_utilization: t.bus.utilization(until),
            messages,
            offload: t.timing.offload.enabled.then(|| t.offload.clone()),
            lro: offload.lro,
            gro: offload.gro,
            zero_copy: offload.zero_copy,
        })
    }

    /// Cycles per layer of message `msg` on `path` of host `h` (timed hosts only).
    pub fn message_breakdown(&self, h: usize, msg: u64, path: Path) -> Option<Breakdown> {
        self.timed[h].as_ref()?.per_msg.get(&(msg, path)).copied()
    }
}

impl Timed {
    /// Check the NIC's rings and FIFO and the order of posted frames. A
    /// failure is a simulator bug.
    pub(super) fn check_invariants(&self) -> Result<(), String> {
        self.nic.check_invariants(&self.timing.nic, self.rx.engine_ref().owns_rx_queue())?;
        self.driver.check_invariants()
    }
}

impl From<RxDone> for Next {
    fn from(d: RxDone) -> Next {
        match d {
            RxDone::Deliver(frame, segments) => Next::RxDeliver(frame, segments),
            RxDone::Resume => Next::SpecResume,
        }
    }
}

impl Sim {
    /// Call host `h`'s offload engine with a context at `now`, then carry
    /// out what it asked for, in order (the first failure to write a frame
    /// to a trace is returned after all of them).
    pub(super) fn with_offload<R>(
        &mut self,
        h: usize,
        now: Time,
        f: impl FnOnce(&mut dyn RxOffload, &mut RxCx) -> R,
    ) -> Result<R, crate::Error> {
        let t = self.timed(h);
        let mut actions = Vec::new();
        let holding = t.nic.holding();
        let timing = &t.timing;
        let cost = |fr: &[u8], c: usize| rx_cost(timing, fr, c);
        let mut cx = RxCx { now, timing, rx_cost: &cost, nic_holding: holding, actions: &mut actions };
        let out = f(t.rx.engine(), &mut cx);
        let mut result = Ok(());
        for a in actions {
            match a {
                Action::Timer(at, prio, ev) => {
                    self.sched.at(at, prio, Event::Offload(h, ev));
                }
                Action::ToHost(frame, segments) => {
                    let t = self.timed(h);
                    t.nic.rx_fifo_bytes += frame.len() as u64;
                    t.nic.rx_fifo.push_back((frame, segments));
                }
                Action::KickRx => self.nic_rx_kick(h, now),
                Action::KickTx => self.nic_tx_kick(h, now),
                Action::Arrive(frame) => self.nic_arrive(h, frame, now),
                Action::Wire(frame) => {
                    // The driver writes a control frame straight to the NIC.
                    let Port { link: l, end: d } = self.ports[h];
                    self.links[l].chans[d].enqueue(frame);
                    let sent = self.start_wire(l, d, now);
                    result = result.and(sent);
                }
            }
        }
        result.map(|()| out)
    }

    /// Host `h`'s offload engine's own event is due.
    pub(super) fn on_offload_event(&mut self, h: usize, ev: OffloadEvent, now: Time) -> Result<(), crate::Error> {
        self.with_offload(h, now, |e, cx| e.on_event(cx, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::offload::example::DropEvery;

    /// 1 MiB of bulk TCP between two Kurmann hosts over GbE.
    fn bulk() -> crate::config::Scenario {
        crate::config::parse(
            "[[hosts]]\nname = \"a\"\nprofile = \"kurmann-pii-400\"\n\
             [[hosts]]\nname = \"b\"\nprofile = \"kurmann-pii-400\"\n\
             [[links]]\nendpoints = [\"a\", \"b\"]\nrate = \"1Gbps\"\n\
             [workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MiB\"\n",
        )
        .expect("a valid scenario")
    }

    #[test]
    fn an_engine_added_by_one_file_and_one_registry_line_runs_in_the_simulator() {
        let s = bulk();
        let limit = Time::ZERO + Dur(10 * crate::engine::time::PS_PER_S);
        let mut sim = Sim::build(&s, 1, None).unwrap();
        sim.timed(1).rx = AnyRxOffload::Example(Box::new(DropEvery::new(50)));
        sim.run(limit, Dur::ZERO).unwrap();
        assert!(sim.finished_at.is_some(), "the transfer completes despite the losses");
        let t = sim.timed[1].as_ref().unwrap();
        let AnyRxOffload::Example(e) = &t.rx else { panic!("the engine stays installed") };
        // About 760 data frames carry 1 MiB: every 50th is lost at the NIC.
        assert!(e.dropped() >= 10, "dropped {}", e.dropped());
        // Every frame that reached the NIC was dropped by the engine, dropped
        // by the FIFO, or written to memory.
        assert_eq!(t.nic.stats.rx_frames + e.dropped() + t.nic.stats.rx_fifo_drops, sim.arrived[1]);
        // TCP recovered each loss by retransmitting.
        assert!(sim.links[0].monitors[0].retransmissions >= e.dropped());
        // The baseline engine loses nothing on the same run.
        let mut base = Sim::build(&s, 1, None).unwrap();
        base.run(limit, Dur::ZERO).unwrap();
        assert_eq!(base.links[0].monitors[0].retransmissions, 0);
    }
}
