//! The NIC path of a timed host: the TX DMA and the hand-off to the link,
//! arrivals into the RX FIFO (after the host's offload engine), the RX DMA
//! into posted buffers, pause frames, interrupt moderation and the driver's
//! NAPI batch; and the glue that carries out what an offload engine asks
//! for. The NIC's state is [`crate::nic::device::Nic`]; the engines are in
//! [`crate::nic::offload`]. Units: picoseconds, bytes, frames.

use super::cost::{push_nonzero, rx_cost, rx_footprint, shape, whole_pages};
use super::timed::{Next, Timed};
use super::{Env, HostEvent};
use crate::bus::BusOp;
use crate::engine::{Priority, Time};
use crate::host::cpu::{Class, Job, Layer, Path};
use crate::host::timing::Overflow;
use crate::nic::device::NicEvent;
use crate::nic::offload::{Action, AnyRxOffload, AnyTxOffload, DriverBatch, OffloadEvent, RxCx, RxDone, RxOffload};
use crate::probe::observer;

impl Timed {
    /// A NIC event.
    pub(super) fn on_nic_event(&mut self, env: &mut Env, ev: NicEvent, now: Time) -> Result<(), crate::Error> {
        match ev {
            NicEvent::TxDma => self.on_nic_tx_dma(env, now),
            NicEvent::RxDma => {
                self.on_nic_rx_dma(env, now);
                Ok(())
            }
            NicEvent::Irq => {
                self.on_nic_irq_timer(env, now);
                Ok(())
            }
            NicEvent::XpsIrq => {
                self.nic.xps.timer = None;
                self.xps_irq_check(env, now);
                Ok(())
            }
        }
    }

    /// Post sent-path frames to the NIC: fetch descriptor, DMA the frame,
    /// for up to `nic.tx_dma_outstanding` frames at once, each only when
    /// the link will have room for its segments and those of the frames
    /// ahead of it.
    pub(super) fn nic_tx_kick(&mut self, env: &mut Env, now: Time) {
        let msg = env.app.current_msg();
        let room = env.out.wire_room();
        // A send hook (driver fragmentation) gates the ring's head: one frame at a time.
        let most = if self.rx.engine().tx().is_some() { 1 } else { self.timing.nic.tx_dma_outstanding as usize };
        while self.nic.tx_dma.0 < most {
            let t = &mut *self;
            let (next, reserved) = t.nic.tx_dma;
            let Some(frame) = t.nic.tx_ring.get(next) else { return };
            let segments = wire_segments(&t.tx, &mut t.rx, &frame.bytes, frame.tso_mss);
            if room < reserved + segments {
                return;
            }
            if t.rx.engine().tx().is_some() {
                let head = std::mem::take(&mut t.nic.tx_ring.front_mut().expect("peeked").bytes);
                // A control frame cannot fail for lack of a trace here (as pause frames).
                let go = self.with_offload(env, now, |e, cx| e.tx().is_none_or(|x| x.gate(cx, &head))).unwrap_or(true);
                let t = &mut *self;
                t.nic.tx_ring.front_mut().expect("peeked").bytes = head;
                if !go {
                    return;
                }
            }
            let t = &mut *self;
            let frame = &mut t.nic.tx_ring[next];
            let len = frame.bytes.len() as u64;
            let path = if shape(&frame.bytes).data > 0 { Path::Send } else { Path::Receive };
            let bytes = std::mem::take(&mut frame.bytes);
            let done = t.dma(now, BusOp::DeviceRead, len);
            let desc = t.timing.nic.descriptor.0;
            let done = match t.rx.engine().tx() {
                Some(x) => x.tx_dma(&mut t.bus, desc, now, &bytes, done),
                None => done,
            };
            // The send queue is processed in order: a short frame whose
            // one-TLP read overtook the frame ahead waits for it.
            let done = done.max(t.nic.tx_dma_last);
            t.nic.tx_dma_last = done;
            t.nic.tx_ring[next].bytes = bytes;
            t.note_dma(msg, path, now, done);
            t.nic.tx_dma = (next + 1, reserved + segments);
            env.out.at(done, Priority::WIRE, HostEvent::Nic(NicEvent::TxDma));
        }
    }

    /// The head TX frame is in the NIC: the TX engine segments it (TSO) or
    /// fills the checksums the stack left to the NIC, the receive engine's
    /// send hook cuts it (driver fragmentation); the frames go on the link
    /// and the NIC reports completion.
    pub(super) fn on_nic_tx_dma(&mut self, env: &mut Env, now: Time) -> Result<(), crate::Error> {
        let t = &mut *self;
        let frame = t.nic.tx_ring.pop_front().expect("a frame was in DMA");
        let xps = t.xps_core() == Some(frame.core);
        let segments = wire_segments(&t.tx, &mut t.rx, &frame.bytes, frame.tso_mss);
        t.nic.tx_dma = (t.nic.tx_dma.0 - 1, t.nic.tx_dma.1 - segments);
        let (frames, single) = match (t.tx.is_none(), t.rx.engine().tx()) {
            // No engine: one frame as the stack made it (no Vec to allocate).
            (true, None) => (Vec::new(), Some(frame.bytes)),
            (_, hook) => {
                let out = t.tx.engine().segment(frame.bytes, frame.tso_mss);
                match hook {
                    Some(x) => (out.into_iter().flat_map(|f| x.segment(f, None)).collect(), None),
                    None => (out, None),
                }
            }
        };
        t.nic.stats.tx_frames += (frames.len() + usize::from(single.is_some())) as u64;
        let desc = t.timing.nic.descriptor.0;
        t.bus.transfer(now, BusOp::DeviceWrite, desc);
        if xps {
            t.nic.xps.done += 1;
            t.nic.xps.since.get_or_insert(now);
        } else {
            t.nic.tx_done += 1;
            t.nic.tx_done_since.get_or_insert(now);
        }
        for f in frames.into_iter().chain(single) {
            env.out.enqueue(f);
        }
        env.out.start_wire(now)?;
        self.nic_tx_kick(env, now);
        if xps {
            self.xps_irq_check(env, now);
        } else {
            self.irq_check(env, now);
        }
        Ok(())
    }

    /// A frame reaches timed host `h`'s NIC from the wire.
    pub(super) fn nic_arrive(&mut self, env: &mut Env, frame: Vec<u8>, now: Time) {
        // Frames the engine injects cannot fail for lack of a trace.
        let Ok(Some(frame)) = self.with_offload(env, now, |e, cx| e.arrive(cx, frame)) else { return };
        let t = &mut *self;
        let len = frame.len() as u64;
        if !t.nic.rx_held.is_empty() || t.nic.rx_fifo_bytes + len > t.timing.nic.rx_fifo.0 {
            match t.timing.nic.overflow {
                Overflow::Drop => {
                    t.nic.stats.rx_fifo_drops += 1;
                    return;
                }
                Overflow::Backpressure => {
                    t.nic.rx_held.push_back(frame);
                    self.pause_peer(env, true, now);
                    return;
                }
            }
        }
        t.nic.rx_fifo_bytes += len;
        t.nic.stats.max_rx_fifo = t.nic.stats.max_rx_fifo.max(t.nic.rx_fifo_bytes);
        t.nic.rx_fifo.push_back((frame, 1));
        self.nic_rx_kick(env, now);
    }

    fn pause_peer(&mut self, env: &mut Env, pause: bool, now: Time) {
        if env.out.pause_peer(pause, now) && pause {
            self.nic.stats.pauses += 1;
        }
    }

    /// Start the next receive DMA if a frame waits and a buffer is posted.
    pub(super) fn nic_rx_kick(&mut self, env: &mut Env, now: Time) {
        let msg = env.app.current_msg();
        let t = &mut *self;
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
        env.out.at(done, Priority::WIRE, HostEvent::Nic(NicEvent::RxDma));
    }

    /// The head RX frame is in host memory.
    pub(super) fn on_nic_rx_dma(&mut self, env: &mut Env, now: Time) {
        let t = &mut *self;
        t.nic.rx_dma_busy = false;
        let (frame, segments) = t.nic.rx_fifo.pop_front().expect("a frame was in DMA");
        t.nic.rx_fifo_bytes -= frame.len() as u64;
        t.nic.stats.rx_frames += 1;
        if t.timing.memory.ddio.0 > 0 || t.timing.cpu.l2_cache.0 > 0 {
            let data = shape(&frame).data;
            // Only DDIO's reads look the marks up (and forget them).
            if let Some(m) = t.marks.as_mut().filter(|_| data > 0 && t.timing.memory.ddio.0 > 0) {
                m.push(t.rx_data.0, t.llc_in);
            }
            t.rx_data.0 += data;
            t.llc_in += data;
        }
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
        if self.nic.rx_held.is_empty() {
            self.pause_peer(env, false, now);
        }
        self.nic_rx_kick(env, now);
        self.irq_check(env, now);
    }

    /// Raise an interrupt now, or arm the moderation timer, or do nothing.
    pub(super) fn irq_check(&mut self, env: &mut Env, now: Time) {
        let t = &mut *self;
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
            // wants one interrupt per fragment train); else DIM's profile.
            let rx = t.rx.engine_ref().moderation().or_else(|| t.nic.dim.as_ref().map(|d| d.moderation()));
            let Some(at) = t.nic.irq_due(&t.timing.nic.moderation, rx, now) else {
                return;
            };
            at
        };
        if at == now {
            self.raise_irq(env, now);
        } else if t.nic.irq_armed.is_none_or(|armed| armed > at) {
            t.nic.irq_armed = Some(at);
            let old = t.nic.irq_timer.take();
            if let Some(k) = old {
                env.out.cancel(k);
            }
            let key = env.out.at(at, Priority::DEVICE, HostEvent::Nic(NicEvent::Irq));
            self.nic.irq_timer = Some(key);
        }
    }

    /// The moderation timer fired (an earlier one re-armed was cancelled).
    pub(super) fn on_nic_irq_timer(&mut self, env: &mut Env, now: Time) {
        let t = &mut *self;
        t.nic.irq_timer = None;
        t.nic.irq_armed = None;
        self.irq_check(env, now);
    }

    fn raise_irq(&mut self, env: &mut Env, now: Time) {
        let msg = env.app.current_msg();
        let t = &mut *self;
        t.nic.irq_armed = None;
        if let Some(k) = t.nic.irq_timer.take() {
            env.out.cancel(k);
        }
        let t = &mut *self;
        t.nic.last_irq = Some(now);
        t.nic.tx_done_since = None;
        if t.polled() {
            // The communication processor's loop found work: no interrupt,
            // it polls the rings until they are empty (as NAPI does).
            t.nic.stats.polls += 1;
            t.nic.masked = true;
            self.driver_batch(env, now);
            return;
        }
        t.nic.stats.interrupts += 1;
        if let Some(dim) = t.nic.dim.as_mut() {
            dim.interrupt();
        }
        if t.timing.nic.napi {
            t.nic.masked = true;
        }
        let core = t.timing.stack_core();
        let pieces = self.interrupt_on(env, core, now);
        let t = &mut *self;
        let path = if t.measure.tx_irq_on_send && t.nic.rx_done.is_empty() { Path::Send } else { Path::Receive };
        let job = Job::new(Class::Irq, pieces, Next::IrqDone).for_msg(msg).on(path);
        self.submit(env, core, now, job);
    }

    /// An interrupt taken on `core`: counted there, reported to probes;
    /// its handler's work (entry, the driver's handler, exit).
    fn interrupt_on(&mut self, env: &mut Env, core: usize, now: Time) -> Vec<(Layer, u64)> {
        self.cores[core].note_interrupt();
        if env.out.probes().wants(observer::INTERRUPT) {
            env.out.probes().emit(observer::INTERRUPT, now, env.h, &env.host.name, &[("core", core as f64)]);
        }
        let cpu = &self.timing.cpu;
        vec![
            (Layer::Interrupt, cpu.interrupt_entry),
            (Layer::Interrupt, self.timing.cycles_on(core, self.timing.costs.interrupt)),
            (Layer::Interrupt, cpu.interrupt_exit),
        ]
    }

    /// The work of cleaning `n` sent descriptors on `core`: the driver's,
    /// and each reclaimed frame's sk_buff and data back to the allocators.
    fn clean_pieces(&mut self, core: usize, n: u32, msg: Option<u64>) -> Vec<(Layer, u64)> {
        let cost = if self.measure.via { self.timing.costs.via_tx_done } else { self.timing.costs.driver_tx_clean };
        let c = self.timing.cycles_on(core, cost) * u64::from(n);
        if let Some(m) = msg {
            self.measure.tx_clean(m, c);
        }
        let mut pieces = vec![(Layer::Driver, c)];
        let (n, c) = (u64::from(n), &self.timing.costs);
        push_nonzero(&mut pieces, Layer::Skb, self.timing.cycles_on(core, c.skb_free) * n);
        push_nonzero(
            &mut pieces,
            Layer::Mm,
            (self.timing.cycles_on(core, c.page_free) + self.timing.cycles_on(core, c.skb_slab)) * n,
        );
        pieces
    }

    /// The core whose sent frames its own send channel completes
    /// (`nic.xps`): the application's, while the receive channel's
    /// interrupts go to another core.
    pub(super) fn xps_core(&self) -> Option<usize> {
        let app = self.timing.cpu.app_core as usize;
        (self.timing.nic.xps && !self.polled() && self.timing.stack_core() != app).then_some(app)
    }

    /// Raise the application core's send-channel interrupt once its
    /// moderation delay from the first completion has passed, or arm its
    /// timer (`nic.xps`).
    pub(super) fn xps_irq_check(&mut self, env: &mut Env, now: Time) {
        let t = &mut *self;
        let ch = &t.nic.xps;
        let (Some(first), false, None) = (ch.since, ch.masked, ch.timer) else { return };
        let at = (first + t.timing.nic.moderation.tx_delay.dur()).max(now);
        if at > now {
            t.nic.xps.timer = Some(env.out.at(at, Priority::DEVICE, HostEvent::Nic(NicEvent::XpsIrq)));
            return;
        }
        let msg = env.app.current_msg();
        t.nic.xps.masked = true;
        t.nic.stats.interrupts += 1;
        let core = t.xps_core().expect("completions on the send channel");
        let pieces = self.interrupt_on(env, core, now);
        let job = Job::new(Class::Irq, pieces, Next::XpsIrqDone).for_msg(msg).on(Path::Send);
        self.submit(env, core, now, job);
    }

    /// The send channel's NAPI on the application's core: clean what that
    /// core sent (`nic.xps`).
    pub(super) fn xps_clean(&mut self, env: &mut Env, now: Time) {
        let msg = env.app.current_msg();
        let t = &mut *self;
        let n = std::mem::take(&mut t.nic.xps.done);
        t.nic.xps.since = None;
        let core = t.xps_core().expect("completions on the send channel");
        let pieces = t.clean_pieces(core, n, msg);
        let job = Job::new(Class::Softirq, pieces, Next::XpsCleaned(n)).for_msg(msg).on(Path::Send);
        self.submit(env, core, now, job);
    }

    /// The send channel cleaned a round: poll again if more completed
    /// meanwhile, else NAPI completes and its interrupt is on again.
    pub(super) fn xps_cleaned(&mut self, env: &mut Env, now: Time) {
        if self.nic.xps.done > 0 {
            self.xps_clean(env, now);
        } else {
            self.nic.xps.masked = false;
            self.xps_irq_check(env, now);
        }
    }

    /// Sent descriptors were cleaned: free `n` ring slots, move what the
    /// qdisc holds to the ring and let a stack that ran out of room emit.
    pub(super) fn tx_cleaned(&mut self, env: &mut Env, n: u32, now: Time) {
        let t = &mut *self;
        t.nic.tx_cleaned(n, now);
        let (nic, ring) = (&mut t.nic, t.timing.nic.tx_ring);
        t.driver.refill(|frame| nic.post_tx(frame, ring));
        self.nic_tx_kick(env, now);
        if self.driver.stack_blocked {
            let ctx = self.irq_ctx();
            self.timed_poll(env, now, ctx, false);
        }
    }

    /// The driver's work after an interrupt (or another NAPI round): receive
    /// processing per frame, clean-up of sent descriptors, buffer refill.
    pub(super) fn driver_batch(&mut self, env: &mut Env, now: Time) {
        let msg = env.app.current_msg();
        let t = &mut *self;
        let budget = if t.timing.nic.napi || t.polled() { t.timing.nic.napi_budget as usize } else { usize::MAX };
        let mut take = t.nic.rx_done.len().min(budget);
        let frames: Vec<(Time, Vec<u8>, u32)> = t.nic.rx_done.drain(..take).collect();
        if t.timing.memory.ddio.0 > 0 {
            t.rx_copy.taken(now, frames.iter().map(|(_, f, _)| shape(f).data).sum());
        }
        if let Some(dim) = t.nic.dim.as_mut() {
            dim.received(frames.len() as u64, frames.iter().map(|(_, f, _)| f.len() as u64).sum());
        }
        let striding = t.timing.nic.striding_rq;
        let max_frame = env.host.max_frame();
        let bytes: u64 = frames.iter().map(|(_, f, _)| rx_footprint(striding, max_frame, f.len() as u64, 1)).sum();
        let pages = whole_pages(&mut t.rx_pages.0, bytes);
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
        let t = &mut *self;
        if cleaned > 0 {
            let pieces = t.clean_pieces(core, cleaned, msg);
            let job = Job::new(Class::Softirq, pieces, Next::TxCleaned(cleaned));
            jobs.push(job.for_msg(msg).on(Path::Send));
        }
        // A ring of one buffer per frame posts a buffer per frame taken; a
        // striding ring (mlx5's multi-packet WQEs) allocates, maps and posts
        // pages, as many as the frames filled (Linux 5.4 en_rx.c
        // mlx5e_alloc_rx_mpwqe loops over the WQE's pages).
        let buffers = if t.timing.nic.striding_rq { pages } else { take as u64 };
        let refill = t.timing.cycles_on(core, t.timing.costs.driver_refill) * buffers;
        leftover.push((Layer::Driver, refill));
        // Fresh buffers are newly allocated pages, as many as the frames
        // taken filled; each frame taken got an sk_buff head built around
        // its buffer.
        let c = &t.timing.costs;
        push_nonzero(
            &mut leftover,
            Layer::Mm,
            t.timing.cycles_on(core, c.page_alloc) * pages + t.timing.cycles_on(core, c.skb_slab) * take as u64,
        );
        push_nonzero(&mut leftover, Layer::Skb, t.timing.cycles_on(core, c.skb_alloc) * take as u64);
        let job = Job::new(Class::Softirq, leftover, Next::BatchDone(take as u32));
        jobs.push(job.for_msg(msg).on(Path::Receive));
        for job in jobs {
            self.submit(env, core, now, job);
        }
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

impl Timed {
    /// Call host `h`'s offload engine with a context at `now`, then carry
    /// out what it asked for, in order (the first failure to write a frame
    /// to a trace is returned after all of them).
    pub(crate) fn with_offload<R>(
        &mut self,
        env: &mut Env,
        now: Time,
        f: impl FnOnce(&mut dyn RxOffload, &mut RxCx) -> R,
    ) -> Result<R, crate::Error> {
        let t = &mut *self;
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
                    env.out.at(at, prio, HostEvent::Offload(ev));
                }
                Action::Rearm(at, prio, ev) => {
                    if let Some(k) = self.offload_timer.take() {
                        env.out.cancel(k);
                    }
                    self.offload_timer = Some(env.out.at(at, prio, HostEvent::OffloadTimer(ev)));
                }
                Action::ToHost(frame, segments) => {
                    let t = &mut *self;
                    t.nic.rx_fifo_bytes += frame.len() as u64;
                    t.nic.rx_fifo.push_back((frame, segments));
                }
                Action::KickRx => self.nic_rx_kick(env, now),
                Action::KickTx => self.nic_tx_kick(env, now),
                Action::Arrive(frame) => self.nic_arrive(env, frame, now),
                Action::Wire(frame) => {
                    // The driver writes a control frame straight to the NIC.
                    env.out.enqueue(frame);
                    let sent = env.out.start_wire(now);
                    result = result.and(sent);
                }
            }
        }
        result.map(|()| out)
    }

    /// Host `h`'s offload engine's own event is due.
    pub(super) fn on_offload_event(&mut self, env: &mut Env, ev: OffloadEvent, now: Time) -> Result<(), crate::Error> {
        self.with_offload(env, now, |e, cx| e.on_event(cx, ev))
    }
}

/// The link frames a TX frame of `bytes` becomes: the TX engine's (TSO's)
/// times the receive engine's send hook's (driver fragmentation). Exact,
/// as the two exclude each other (`zero_copy.fragment` with `nic.tso` is
/// refused).
fn wire_segments(tx: &AnyTxOffload, rx: &mut AnyRxOffload, bytes: &[u8], mss: Option<u16>) -> usize {
    tx.engine_ref().wire_frames(bytes, mss) * rx.engine().tx().map_or(1, |x| x.wire_frames(bytes, None))
}
