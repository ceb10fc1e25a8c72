//! One host as a component of the simulated system: its smoltcp stack, its
//! application and, when it has a timing profile, its CPU cores, memory,
//! I/O bus, NIC, driver and offload engines (receive, transmit, call path). The host handles its own events
//! ([`HostEvent`]); everything beyond it (the scheduler, its link, the
//! probes) it reaches through [`Outside`], which the assembly provides.
//!
//! ```text
//!              ┌──────────────────── node (host h) ────────────────────┐
//!   HostEvent ─▶ app ─ smoltcp ─ cores/memory (timed.rs, backlog.rs)    │
//!              │        │           driver, NIC, bus (nic.rs)          ─┼─▶ Outside: schedule,
//!              │        └ ideal host: frames straight to the link (step)│   enqueue on the link,
//!              └────────────────────────────────────────────────────────┘   pause the peer, probes
//! ```
//!
//! An ideal host (no profile) takes no time: its stack runs when polled and
//! its frames go straight to the link. A timed host's work goes through
//! [`Timed`]. Units: picoseconds, bytes, cycles.

pub mod ackgate;
mod backlog;
pub(crate) mod cost;
mod join;
mod machine;
mod measure;
mod nic;
mod report;
mod rtx;
mod rxcopy;
mod socklock;
mod timed;
mod via;

pub use crate::nic::offload::toe::OffloadStats;
pub(crate) use machine::{Machine, Marks};
pub use report::{CoreReport, MessageReport, TimingReport};
pub use timed::Timed;

use crate::engine::{EventKey, Priority, Time};
use crate::error::Error;
use crate::host::Host;
use crate::nic::device::NicEvent;
use crate::nic::offload::{CallEvent, OffloadEvent};
use crate::probe::observer::{self, Probes};
use crate::workload::{App, Op};

/// Safety bound on back-to-back stack/application rounds within one poll.
const MAX_ROUNDS_PER_POLL: usize = 64;

/// A host's own events.
#[derive(Debug)]
pub enum HostEvent {
    /// Run the stack and the application.
    Poll,
    /// Core `0` finished its running job (timed host; a completion the core
    /// replaced is cancelled through its key).
    CpuDone(usize),
    /// The NIC's DMA or moderation timer (timed host).
    Nic(NicEvent),
    /// The call-path engine's event (TOE: the communication processor
    /// notices a command).
    Call(CallEvent),
    /// The offload engine's own timer or message.
    Offload(OffloadEvent),
    /// The offload engine's re-armable timer.
    OffloadTimer(OffloadEvent),
    /// A blocked application woken on an idle core (by arriving data:
    /// `true`) has waited out `cpu.wake_latency` (timed host).
    AppResume(bool),
}

/// What a host reaches beyond itself: the scheduler for its own events,
/// the link direction it sends on, the peer it can pause, the probes.
pub trait Outside {
    /// Schedule the host's event `ev` at `at`.
    fn at(&mut self, at: Time, prio: Priority, ev: HostEvent) -> EventKey;
    /// Cancel an event scheduled with [`Outside::at`].
    fn cancel(&mut self, key: EventKey);
    /// Frames the link's queue can still take.
    fn wire_room(&self) -> usize;
    /// What an ideal host may emit in one poll: the queue's room under link
    /// backpressure, unbounded otherwise.
    fn wire_credit(&self) -> usize;
    /// Queue a frame on the link (dropped and counted when the queue is full).
    fn enqueue(&mut self, frame: Vec<u8>);
    /// Start serialising the link's next frame, if it is idle.
    fn start_wire(&mut self, now: Time) -> Result<(), Error>;
    /// Pause or resume the peer's transmission towards this host (802.3x);
    /// returns whether that changed anything.
    fn pause_peer(&mut self, pause: bool, now: Time) -> bool;
    /// The run's probes.
    fn probes(&mut self) -> &mut Probes;
}

/// The host as one event sees it: its index, stack, application and poll
/// bookkeeping, and the way to the rest of the system.
pub struct Env<'a> {
    /// The host's index (scenario order).
    pub h: usize,
    /// The host's stack.
    pub host: &'a mut Host,
    /// The host's application.
    pub app: &'a mut App,
    /// Times at which a poll of this host is already scheduled.
    pub polls: &'a mut Vec<Time>,
    /// Everything beyond the host.
    pub out: &'a mut dyn Outside,
}

impl Env<'_> {
    /// Handle the host's event `ev` at `now`.
    pub fn on_event(&mut self, timed: Option<&mut Timed>, ev: HostEvent, now: Time) -> Result<(), Error> {
        match (ev, timed) {
            (HostEvent::Poll, timed) => {
                self.polls.retain(|&t| t != now);
                match timed {
                    Some(t) => {
                        let ctx = t.irq_ctx();
                        t.timed_poll(self, now, ctx, false);
                        Ok(())
                    }
                    None => self.step(now),
                }
            }
            (HostEvent::CpuDone(core), Some(t)) => t.on_cpu_done(self, core, now),
            (HostEvent::Nic(ev), Some(t)) => t.on_nic_event(self, ev, now),
            (HostEvent::Call(ev), Some(t)) => {
                t.on_call_event(self, ev, now);
                Ok(())
            }
            (HostEvent::Offload(ev), Some(t)) => t.on_offload_event(self, ev, now),
            (HostEvent::AppResume(woken), Some(t)) => {
                t.app_busy = false;
                t.app_kick(self, now, woken);
                Ok(())
            }
            (HostEvent::OffloadTimer(ev), Some(t)) => {
                t.offload_timer = None;
                t.on_offload_event(self, ev, now)
            }
            (ev, None) => unreachable!("an ideal host has no {ev:?}"),
        }
    }

    /// A frame reaches the host from its link.
    pub fn arrive(&mut self, timed: Option<&mut Timed>, frame: Vec<u8>, now: Time) -> Result<(), Error> {
        if let Some(t) = timed {
            t.nic_arrive(self, frame, now);
            return Ok(());
        }
        self.note_deliver(frame.len(), now);
        if crate::workload::via::is_via(&frame) {
            self.via_deliver(&frame, now)?;
        } else {
            self.host.dev.rx.push_back(frame);
        }
        self.request_poll(now);
        Ok(())
    }

    /// The host's link finished sending a frame: there is room for more.
    pub fn wire_free(&mut self, timed: Option<&mut Timed>, now: Time) {
        match timed {
            Some(t) => t.nic_tx_kick(self, now),
            None if self.host.dev.tx_blocked => self.request_poll(now),
            None => {}
        }
    }

    /// Poll an ideal host's stack, run its application, push emitted frames
    /// onto its link, and schedule the next poll the stack asks for.
    fn step(&mut self, now: Time) -> Result<(), Error> {
        for _ in 0..MAX_ROUNDS_PER_POLL {
            let credit = self.out.wire_credit();
            self.host.poll(now, credit);
            let mut progressed = false;
            while let Some(op) = self.app.next_op(now, self.host) {
                self.perform(op, now)?;
                progressed = true;
            }
            let frames = std::mem::take(&mut self.host.dev.tx);
            let sent = !frames.is_empty();
            for frame in frames {
                self.out.enqueue(frame.bytes);
            }
            self.out.start_wire(now)?;
            if !progressed && !sent {
                break;
            }
        }
        self.schedule_stack_timer(now);
        Ok(())
    }

    /// Schedule the next poll at the stack's own deadline, or when the
    /// application wants to run (a paced sender's next slot).
    fn schedule_stack_timer(&mut self, now: Time) {
        if let Some(t) = self.app.wake_at().filter(|&t| t > now) {
            self.request_poll(t);
        }
        match self.host.poll_at(now) {
            Some(t) if t > now => self.request_poll(t),
            // Due now but nothing moved: either the transmit path is full (its
            // progress will wake the host) or the deadline is inside the current
            // microsecond, which smoltcp cannot resolve: look again at the next one.
            Some(_) if !self.host.dev.tx_blocked => {
                let us = crate::engine::time::PS_PER_US;
                self.request_poll(Time((now.ps() / us + 1) * us))
            }
            _ => {}
        }
    }

    /// Carry out application call `op` at `now`.
    fn perform(&mut self, op: Op, now: Time) -> Result<(), Error> {
        self.app
            .perform(op, now, self.host)
            .map_err(|e| Error::Simulation(format!("host {} at {now}: {e}", self.host.name)))?;
        if self.out.probes().wants(observer::CALL) {
            let kind = match op {
                Op::Write { .. } | Op::SendTo { .. } | Op::ViaSend { .. } => 0.0,
                Op::Read { .. } | Op::RecvFrom { .. } | Op::ViaRecv { .. } => 1.0,
                Op::Close { .. } => 2.0,
                Op::Connect { .. } => 3.0,
            };
            let fields = [("op", kind), ("bytes", op.bytes() as f64)];
            self.out.probes().emit(observer::CALL, now, self.h, &self.host.name, &fields);
        }
        Ok(())
    }

    /// A frame of `bytes` reaches the host's stack.
    fn note_deliver(&mut self, bytes: usize, now: Time) {
        if self.out.probes().wants(observer::DELIVER) {
            self.out.probes().emit(observer::DELIVER, now, self.h, &self.host.name, &[("bytes", bytes as f64)]);
        }
    }

    /// Make sure the host is polled no later than `at`.
    ///
    /// Polls are never cancelled: a later poll that is no longer needed (the
    /// stack's retransmission deadline moved on) runs, finds nothing due and
    /// reschedules itself. That costs one idle poll per deadline instead of
    /// leaving a cancelled heap entry behind for every received frame.
    pub fn request_poll(&mut self, at: Time) {
        if self.polls.iter().any(|&t| t <= at) {
            return;
        }
        self.out.at(at, Priority::SOFTWARE, HostEvent::Poll);
        self.polls.push(at);
    }
}
