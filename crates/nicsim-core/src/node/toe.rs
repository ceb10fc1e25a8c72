//! The offload (TOE) command path of a timed host, after Ortiz et al.: the
//! application core writes a command descriptor and rings a doorbell; the
//! communication processor (a second core, or a processor on the NIC)
//! notices it (interrupt, or at the end of a polling turn), decodes it and
//! runs the stack for it; when the stack has changed what the application
//! can do, it posts a completion, which interrupts the application core.
//!
//! ```text
//!  app core: call ─ command ─▶ doorbell ─▶ comm. processor: notice ─ decode ─ stack
//!  app core: ◀─ completion interrupt ◀─ completion posted ◀──────────────────┘
//! ```
//!
//! Where the command, completion and copy costs come from is in
//! `docs/models/offload.md`. Units: picoseconds, cycles, bytes.

use super::timed::{Next, Timed};
use super::{Env, HostEvent};
use crate::bus::BusOp;
use crate::engine::{Priority, Time};
use crate::host::cpu::{Class, Job, Layer, Path};
use crate::host::timing::OffloadLocation;

/// What the communication processor notices on a turn of its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// The application rang the doorbell: a command waits.
    Command,
}

impl Timed {
    /// Offload: the application finished a socket call; its command goes to
    /// the communication processor (descriptor written, doorbell rung), which
    /// decodes it and runs the stack for it.
    pub(super) fn ring_doorbell(&mut self, env: &mut Env, now: Time) {
        let t = &mut *self;
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
        env.out.at(at, Priority::DEVICE, HostEvent::CommNotice(Notice::Command));
    }

    /// Offload: the communication processor turns to the work it noticed.
    pub(crate) fn on_comm_notice(&mut self, env: &mut Env, notice: Notice, now: Time) {
        match notice {
            Notice::Command => {
                let t = &mut *self;
                t.commands -= 1;
                let core = t.timing.stack_core();
                let mut pieces = Vec::with_capacity(3);
                if !t.polled() {
                    t.cores[core].note_interrupt();
                    pieces.push((Layer::Interrupt, t.timing.cpu.interrupt_entry));
                    pieces.push((Layer::Interrupt, t.timing.cpu.interrupt_exit));
                }
                pieces.push((Layer::Command, t.timing.cycles_on(core, t.timing.offload.command_rx)));
                let msg = env.app.current_msg();
                let job = Job::new(Class::Softirq, pieces, Next::CommandDone).for_msg(msg).on(Path::Send);
                self.submit(env, core, now, job);
            }
        }
    }

    /// Offload: the stack on the communication processor changed what the
    /// application can do (data arrived, room freed). If the application
    /// waits, post a completion, which interrupts the application core.
    pub(super) fn post_completion(&mut self, env: &mut Env, now: Time, woken: bool) {
        let t = &mut *self;
        if t.app_busy || t.completion_pending {
            return;
        }
        if env.app.next_op(now, env.host).is_none() {
            return;
        }
        let msg = env.app.current_msg();
        let t = &mut *self;
        t.completion_pending = true;
        let core = t.timing.stack_core();
        let pieces = vec![(Layer::Command, t.timing.cycles_on(core, t.timing.offload.completion))];
        let job = Job::new(Class::Softirq, pieces, Next::CompletionPosted(woken)).for_msg(msg).on(Path::Receive);
        self.submit(env, core, now, job);
    }

    /// Offload: the communication processor posted a completion: the
    /// application core takes its interrupt.
    pub(super) fn completion_posted(&mut self, env: &mut Env, woken: bool, now: Time) {
        let t = &mut *self;
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
        let msg = env.app.current_msg();
        let job = Job::new(Class::Irq, pieces, Next::CompletionTaken(woken)).for_msg(msg).on(Path::Receive);
        self.submit(env, core, now, job);
    }
}
